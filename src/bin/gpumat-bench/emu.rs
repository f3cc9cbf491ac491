//! `--suite emu`: FP64 products from INT8 products (`Compute::Int8`, the
//! Ozaki scheme II) side by side with cuBLAS `dgemm` (`C := A·B`, n × n × n
//! for each size) and `dsyrk` (the lower triangle of `A·Aᵀ`, `A` of
//! 8192 × 16384), on the same inputs, interleaved, median of `--reps`: for
//! 13 to 16 moduli and the count chosen per product, on entries of one
//! magnitude (`φ = 0`) and with spread exponents (`(r − ½)·e^(φ·g)`,
//! `φ = 1`), with cuBLAS's own FP64 emulation (`EAGER`) timed beside
//! `dgemm` in a row of its own. Each row gives the time of both, the
//! emulation's TFLOP/s
//! equivalent, and the largest error of both relative to `|A|·|B|`, in
//! units of `u = 2⁻⁵³`, against double-double references on 256 entries
//! (the same entries for both). Then the emulation where it is used: the
//! trailing updates of a Cholesky factorization at n = 16384 against
//! cuSOLVER `dpotrf` (‖A − LLᵀ‖/‖A‖ of both), and `A·D²·Aᵀ` for `A` of
//! 8192 × 16384 against cuBLAS `dgmm` + `dsyrk` (both form `W = A·D`).

use gpumat::Result;
use gpumat::backend::cuda::{Cuda, CudaBuffer};
use gpumat::backend::{Backend, Block, Compute, Op, View, ViewMut};
use gpumat::layout::Uplo;
use gpumat::scalar::dd::Dd;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use gpumat::backend::cuda::vendor;
use gpumat::factor::cholesky::CholeskyParams;

use crate::harness::Settings;
use crate::harness::errors::cholesky_error;
use crate::harness::factorizations::{cholesky_full, cholesky_vendor, read_info};
use crate::harness::inputs::{diagonally_dominant, uniform};
use crate::harness::results::{merge, record};
use crate::harness::timing::{interleaved, side_by_side};

/// The emulations measured: fixed counts of moduli, then the chosen count.
const COMPUTES: [Compute; 5] = [
    Compute::Int8 { moduli: Some(13) },
    Compute::Int8 { moduli: Some(14) },
    Compute::Int8 { moduli: Some(15) },
    Compute::Int8 { moduli: Some(16) },
    Compute::Int8 { moduli: None },
];

/// Entries compared with a double-double reference.
const CHECKED: usize = 256;

/// `len` entries `(r − ½)·e^(φ·g)`, `r` uniform, `g` standard normal.
fn spread(len: usize, phi: f64, seed: u64) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..len)
        .map(|_| {
            let (u1, u2): (f64, f64) = (rng.random_range(f64::MIN_POSITIVE..1.0), rng.random());
            let g = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            (rng.random::<f64>() - 0.5) * (phi * g).exp()
        })
        .collect()
}

/// Row `i` (`row`) or column `i` of the `rows × cols` matrix in `buf`.
fn line(cuda: &Cuda, buf: &CudaBuffer<f64>, (rows, cols): (usize, usize), i: usize, row: bool) -> Result<Vec<f64>> {
    let block =
        if row { Block::dense(rows, cols).sub(i, 0, 1, cols)? } else { Block::dense(rows, cols).sub(0, i, rows, 1)? };
    let len = if row { cols } else { rows };
    let mut dense = cuda.alloc::<f64>(len)?;
    let dst = if row { ViewMut::dense(&mut dense, 1, len)? } else { ViewMut::dense(&mut dense, len, 1)? };
    cuda.copy(View::new(buf, block)?, dst)?;
    let mut host = vec![0.0; len];
    cuda.download(&dense, &mut host)?;
    Ok(host)
}

/// The entries `(i, l)` checked, and for each the exact `aᵢ·bₗ` and
/// `|aᵢ|·|bₗ|` in double-double, `aᵢ` a row of the `m × k` matrix `a` and
/// `bₗ` a column of the `k × n` matrix `b` (a row of `b` when `b_rows`).
type Checked = Vec<((usize, usize), f64, f64)>;

fn references(
    cuda: &Cuda,
    (a, m, k): (&CudaBuffer<f64>, usize, usize),
    (b, n, b_rows): (&CudaBuffer<f64>, usize, bool),
) -> Result<Checked> {
    let mut rng = StdRng::seed_from_u64(99);
    (0..CHECKED)
        .map(|_| {
            let (i, l) = (rng.random_range(0..m), rng.random_range(0..n));
            let ai = line(cuda, a, (m, k), i, true)?;
            let bl = if b_rows { line(cuda, b, (n, k), l, true)? } else { line(cuda, b, (k, n), l, false)? };
            let (mut exact, mut size) = (Dd::ZERO, 0.0);
            for (x, y) in ai.iter().zip(&bl) {
                exact = exact + Dd::product(*x, *y);
                size += (x * y).abs();
            }
            Ok(((i, l), exact.to_f64(), size))
        })
        .collect()
}

/// The largest `|Ĉᵢₗ − Cᵢₗ|/(|A|·|B|)ᵢₗ` over the checked entries, in `u`.
fn worst(cuda: &Cuda, c: &CudaBuffer<f64>, m: usize, n: usize, checked: &Checked) -> Result<f64> {
    let mut w = 0.0f64;
    for &((i, l), exact, size) in checked {
        let got = line(cuda, c, (m, n), l, false)?[i];
        if size > 0.0 {
            w = w.max((got - exact).abs() / size / (f64::EPSILON / 2.0));
        }
    }
    Ok(w)
}

pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let mut rows = vec![];
    for phi in [0.0, 1.0] {
        for &n in &settings.sizes {
            let a = cuda.upload(&spread(n * n, phi, 1))?;
            let b = cuda.upload(&spread(n * n, phi, 2))?;
            let checked = references(cuda, (&a, n, n), (&b, n, false))?;
            let (mut ours, mut theirs) = (cuda.alloc::<f64>(n * n)?, cuda.alloc::<f64>(n * n)?);
            if phi == 0.0 {
                rows.extend(int8_rate(cuda, settings.reps, n)?);
            }
            rows.push(cublas_emulation(cuda, settings.reps, n, phi, (&a, &b), &checked)?);
            for compute in COMPUTES {
                let (av, bv) = (View::dense(&a, n, n)?, View::dense(&b, n, n)?);
                let t = interleaved(
                    cuda,
                    settings.reps,
                    &mut [
                        &mut || {
                            cuda.gemm_in(
                                compute,
                                1.0,
                                av,
                                Op::NoTrans,
                                bv,
                                Op::NoTrans,
                                0.0,
                                ViewMut::dense(&mut ours, n, n)?,
                            )
                        },
                        &mut || {
                            cuda.gemm(1.0, av, Op::NoTrans, bv, Op::NoTrans, 0.0, ViewMut::dense(&mut theirs, n, n)?)
                        },
                    ],
                )?;
                let errors = (worst(cuda, &ours, n, n, &checked)?, worst(cuda, &theirs, n, n, &checked)?);
                let what = format!("dgemm {n}³ φ={phi}");
                rows.push(product_row(&what, n, compute, &t, 2.0 * (n as f64).powi(3), errors, json!({"phi": phi})));
            }
        }
    }
    rows.extend(syrk(cuda, settings.reps)?);
    rows.extend(cholesky(cuda, settings.reps)?);
    rows.extend(gram(cuda, settings.reps)?);
    Ok(rows)
}

/// The `dsyrk` and `A·D²·Aᵀ` rows alone.
pub fn run_gram(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let mut rows = syrk(cuda, settings.reps)?;
    rows.extend(gram(cuda, settings.reps)?);
    Ok(rows)
}

/// The ceiling: one INT8 product (`n³`, "TN", INT32 accumulation) against
/// one `dgemm` of the same order, whole and, past 8192, by blocks of 8192
/// rows and columns, of 8192 of depth, and of both. The emulation with `N`
/// moduli takes `N` such products and its passes, so it can beat `dgemm`
/// only for `N` below the ratio printed.
fn int8_rate(cuda: &Cuda, reps: usize, n: usize) -> Result<Vec<Value>> {
    let mut rng = StdRng::seed_from_u64(3);
    let mut bytes = || cuda.upload(&(0..n * n / 4).map(|_| rng.random::<i32>()).collect::<Vec<_>>());
    let (a, b) = (bytes()?, bytes()?);
    let x = cuda.upload(&uniform(n * n, 4, -1.0..1.0))?;
    let (mut c, mut d) = (cuda.alloc::<i32>(n * n)?, cuda.alloc::<f64>(n * n)?);
    let mut blockings = vec![(n, n)];
    if n > 8192 {
        blockings.extend([(8192, n), (n, 8192), (8192, 8192)]);
    }
    let mut rows = vec![];
    for (tile, depth) in blockings {
        let t = interleaved(
            cuda,
            reps,
            &mut [&mut || vendor::gemm_i8(cuda, n, (tile, depth), (&a, &b), &mut c), &mut || {
                vendor::gemm(cuda, n, &x, &x, &mut d)
            }],
        )?;
        let flops = 2.0 * (n as f64).powi(3);
        let op = format!("int8 product {n}³ (cuBLAS, TN) by blocks {tile}², depth {depth}");
        let (tops, per_dgemm) = (flops / t[0] / 1e9, t[1] / t[0]);
        println!("{op}: {:8.2} ms = {tops:.0} TOP/s vs dgemm {:8.2} ms: {per_dgemm:.1} per dgemm", t[0], t[1]);
        let fields = json!({"int8_tops": tops, "products_per_dgemm": per_dgemm, "tile": tile, "depth": depth});
        rows.push(record(&op, n, t[0], t[1], Some(flops), fields));
    }
    Ok(rows)
}

/// cuBLAS's own FP64 emulation (`CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT`,
/// strategy `EAGER`) against its `dgemm`, on the inputs of [`run`]; a row
/// that says why where this cuBLAS or GPU refuses it.
fn cublas_emulation(
    cuda: &Cuda,
    reps: usize,
    n: usize,
    phi: f64,
    (a, b): (&CudaBuffer<f64>, &CudaBuffer<f64>),
    checked: &Checked,
) -> Result<Value> {
    use gpumat::backend::cuda::vendor::gemm_emulated;
    let eager = cudarc::cublas::sys::cublasEmulationStrategy_t::CUBLAS_EMULATION_STRATEGY_EAGER;
    let (mut emulated, mut native) = (cuda.alloc::<f64>(n * n)?, cuda.alloc::<f64>(n * n)?);
    let op = format!("dgemm {n}³ φ={phi} cuBLAS emulated (eager)");
    if let Err(e) = gemm_emulated(cuda, n, (a, b), &mut emulated, eager) {
        println!("{op}: refused: {e}");
        return Ok(json!({"op": op, "n": n, "phi": phi, "refused": e.to_string()}));
    }
    let t = interleaved(
        cuda,
        reps,
        &mut [&mut || gemm_emulated(cuda, n, (a, b), &mut emulated, eager), &mut || {
            vendor::gemm(cuda, n, a, b, &mut native)
        }],
    )?;
    let (ours, theirs) = (worst(cuda, &emulated, n, n, checked)?, worst(cuda, &native, n, n, checked)?);
    println!("{op}: {:8.2} ms vs dgemm {:8.2} ms; error {ours:.2}u vs {theirs:.2}u", t[0], t[1]);
    // "gpumat" here is cuBLAS's emulation: the row is its own baseline.
    let fields = json!({"phi": phi, "error_u": ours, "vendor_error_u": theirs, "checked_entries": CHECKED});
    Ok(record(&op, n, t[0], t[1], Some(2.0 * (n as f64).powi(3)), fields))
}

/// Cholesky at n = 16384 with its trailing updates emulated, against
/// `dpotrf`.
fn cholesky(cuda: &Cuda, reps: usize) -> Result<Vec<Value>> {
    let n = 16384;
    let a = diagonally_dominant(cuda, n, 5)?;
    let (mut ours, mut theirs) = (cuda.alloc::<f64>(n * n)?, cuda.alloc::<f64>(n * n)?);
    let mut info = cuda.upload(&[0i32])?;
    let mut vendor = vendor::DenseCholesky::new(cuda, n)?;
    let mut rows = vec![];
    for update in [Compute::Native, Compute::Int8 { moduli: Some(14) }, Compute::Int8 { moduli: None }] {
        let params = CholeskyParams { update, ..CholeskyParams::for_order(n) };
        let (t, v) = side_by_side(
            cuda,
            reps,
            || cholesky_full(cuda, n, &a, &mut ours, &mut info, params),
            || cholesky_vendor(cuda, n, &a, &mut theirs, &mut vendor),
        )?;
        if read_info(cuda, &info)? != 0 {
            return Err(gpumat::Error::Device(format!(
                "the Cholesky factorization with {} updates failed",
                label(update)
            )));
        }
        let (e_ours, e_theirs) = (cholesky_error(cuda, n, &a, &ours)?, cholesky_error(cuda, n, &a, &theirs)?);
        println!(
            "Cholesky {n} updates {:>8}: {t:8.2} ms vs dpotrf {v:8.2} ms = {:.2}×; ‖A − LLᵀ‖/‖A‖ {e_ours:.1e} vs {e_theirs:.1e}",
            label(update),
            v / t
        );
        rows.push(record(
            &format!("cholesky updates {}", label(update)),
            n,
            t,
            v,
            Some((n as f64).powi(3) / 3.0),
            json!({"update": label(update), "factor_error": e_ours, "vendor_factor_error": e_theirs}),
        ));
    }
    Ok(rows)
}

/// `A·D²·Aᵀ` for `A` of 8192 × 16384: `W = A·D`, then the emulated
/// `syrk_in` (as `GPUMAT_FP64_PRODUCTS=int8` runs it), against `dgmm` +
/// `dsyrk`.
fn gram(cuda: &Cuda, reps: usize) -> Result<Vec<Value>> {
    let (m, k) = (8192, 16384);
    let a = cuda.upload(&uniform(m * k, 7, 0.0..1.0))?;
    let d = cuda.upload(&uniform(k, 8, 0.0..1.0))?;
    let (mut w, mut w_vendor) = (cuda.alloc::<f64>(m * k)?, cuda.alloc::<f64>(m * k)?);
    let (mut ours, mut theirs) = (cuda.alloc::<f64>(m * m)?, cuda.alloc::<f64>(m * m)?);
    vendor::scale_columns(cuda, (m, k), &a, &d, &mut w)?;
    let checked: Checked = references(cuda, (&w, m, k), (&w, m, true))?
        .into_iter()
        .map(|((i, l), e, s)| ((i.max(l), i.min(l)), e, s))
        .collect();
    let mut rows = vec![];
    for compute in [Compute::Int8 { moduli: Some(14) }, Compute::Int8 { moduli: None }] {
        let t = interleaved(
            cuda,
            reps,
            &mut [
                &mut || {
                    // The API's route: a copy of A scaled by D, then syrk_in.
                    cuda.copy(View::dense(&a, m, k)?, ViewMut::dense(&mut w, m, k)?)?;
                    cuda.scale_cols(ViewMut::dense(&mut w, m, k)?, View::dense(&d, k, 1)?)?;
                    let wv = View::dense(&w, m, k)?;
                    cuda.syrk_in(compute, Uplo::Lower, Op::NoTrans, 1.0, wv, 0.0, ViewMut::dense(&mut ours, m, m)?)
                },
                &mut || vendor::scaled_gram_syrk(cuda, (m, k), &a, &d, &mut w_vendor, &mut theirs),
            ],
        )?;
        let errors = (worst(cuda, &ours, m, m, &checked)?, worst(cuda, &theirs, m, m, &checked)?);
        let what = format!("scaled_gram {m}×{k}");
        rows.push(product_row(&what, m, compute, &t, (m * m * k) as f64, errors, json!({"k": k})));
    }
    Ok(rows)
}

/// The lower triangle of `A·Aᵀ` for `A` of 8192 × 16384 against `dsyrk`.
fn syrk(cuda: &Cuda, reps: usize) -> Result<Vec<Value>> {
    let (n, k) = (8192, 16384);
    let a = cuda.upload(&spread(n * k, 0.0, 3))?;
    let checked: Checked = references(cuda, (&a, n, k), (&a, n, true))?
        .into_iter()
        .map(|((i, l), e, s)| ((i.max(l), i.min(l)), e, s))
        .collect();
    let (mut ours, mut theirs) = (cuda.alloc::<f64>(n * n)?, cuda.alloc::<f64>(n * n)?);
    let mut rows = vec![];
    for compute in COMPUTES {
        let av = View::dense(&a, n, k)?;
        let t = interleaved(
            cuda,
            reps,
            &mut [
                &mut || cuda.syrk_in(compute, Uplo::Lower, Op::NoTrans, 1.0, av, 0.0, ViewMut::dense(&mut ours, n, n)?),
                &mut || cuda.syrk(Uplo::Lower, Op::NoTrans, 1.0, av, 0.0, ViewMut::dense(&mut theirs, n, n)?),
            ],
        )?;
        let errors = (worst(cuda, &ours, n, n, &checked)?, worst(cuda, &theirs, n, n, &checked)?);
        let what = format!("dsyrk {n}×{k}");
        rows.push(product_row(&what, n, compute, &t, (n * n * k) as f64, errors, json!({"k": k})));
    }
    Ok(rows)
}

/// Prints and records one emulated product against the vendor's: times
/// `t` (ours, theirs) in ms, `flops` of useful work, the largest errors
/// (ours, theirs) in units of `u`.
fn product_row(
    what: &str,
    n: usize,
    compute: Compute,
    t: &[f64],
    flops: f64,
    errors: (f64, f64),
    extra: Value,
) -> Value {
    let (ours, theirs) = errors;
    println!(
        "{what} {:>8}: {:8.2} ms vs {:8.2} ms = {:.2}×; error {ours:.2}u vs {theirs:.2}u",
        label(compute),
        t[0],
        t[1],
        t[1] / t[0]
    );
    let fields =
        json!({"moduli": label(compute), "error_u": ours, "vendor_error_u": theirs, "checked_entries": CHECKED});
    record(&format!("{what} emulated {}", label(compute)), n, t[0], t[1], Some(flops), merge(fields, extra))
}

fn label(compute: Compute) -> String {
    match compute {
        Compute::Int8 { moduli: Some(m) } => format!("int8:{m}"),
        other => other.name().to_string(),
    }
}
