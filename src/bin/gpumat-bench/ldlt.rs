//! `--suite ldlt`: gpumat's LDLᵀ with Bunch–Kaufman pivoting (Bunch and
//! Kaufman 1977), in full and in RFP storage, against cuSOLVER `dsytrf` and
//! its solve (`ssytrf` in FP32); gpumat's LDLᵀ without pivoting against its
//! Cholesky at the same order; a square GEMM of that order, timed in the
//! same run, as the yardstick of the rates. FP64, then FP32, at each order.
//!
//! Inputs, per order: `A = G + Gᵀ`, `G` uniform in [−1, 1), symmetric
//! indefinite, for the pivoted factorizations and the solves (one random
//! right-hand side). For the unpivoted one the same `A` with its diagonal
//! set to `+2n` on the first `n/2` rows and `−2n` on the others: strictly
//! diagonally dominant and symmetric quasi-definite (Vanderbei 1995), with
//! `n/2` eigenvalues of each sign, so that LDLᵀ without interchanges exists
//! and is stable; cuSOLVER's `dsytrf` without pivoting (a null `devIpiv`) is
//! timed beside it on the same matrix. For Cholesky the same `A` with `+2n`
//! on the whole diagonal, SPD; cuSOLVER's `dpotrf` is timed beside it. FP32
//! runs factor the same matrices rounded.
//!
//! Each timed run starts with a device copy of its input into the matrix it
//! factors in place (for a solve, of `B` into `X`), for gpumat and the
//! vendor alike, and the routines compared are interleaved
//! (`harness::timing`). TFLOP/s are at the standard count n³/3 for every
//! factorization, and as a fraction of the GEMM's (2n³ flops, cuBLAS
//! `dgemm`, `sgemm` in FP32).
//!
//! Errors, in FP64 against the matrix factored (rounded, in FP32): the
//! factorization's `‖A − Pᵀ·L·D·Lᵀ·P‖_F / ‖A‖_F` (`‖A − L·Lᵀ‖_F / ‖A‖_F`
//! for Cholesky) on the lower triangle, which is all a factorization reads,
//! up to n = 16384 and where five more n × n FP64 arrays fit (it takes
//! `O(n³)`); and at every order the normwise backward error of a solve with
//! the factor, `‖B − A·X‖_∞ / (‖A‖_∞·‖X‖_∞ + ‖B‖_∞)` (Rigal and Gaches
//! 1967). `gpumat_backward_error` and `vendor_backward_error` are the first
//! where it was measured, else the second; `backward_error_kind` says which.
//! cuSOLVER's factor is read as LAPACK leaves it (`L` a product of
//! interchanges and eliminations), brought to gpumat's form on the host
//! (`vendor::sytrf_to_standard`) and multiplied out; the error of the other
//! reading is kept beside it, so that the record shows which one cuSOLVER
//! follows.
//!
//! Peak device memory is measured as the Cholesky suite does, around one
//! factorization that allocates its own matrix, pivots and `D`. An order and
//! precision whose arrays do not fit in the free device memory is skipped,
//! with a row that says so, before any of its arrays is allocated.

use std::cell::RefCell;

use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::{Backend, Block, BufferMut, DeviceBuffer, Norm, Triangle, View, ViewMut};
use gpumat::factor::cholesky::{self, CholeskyParams};
use gpumat::factor::ldlt::{self, LdltParams, LdltPivoting, LdltWorkspace, Middle};
use gpumat::layout::Uplo;
use gpumat::{Error, Result, Scalar};
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::errors::{cholesky_error, ldlt_error, solve_error, widen};
use crate::harness::factorizations::{cholesky_full, cholesky_vendor, read_info};
use crate::harness::inputs::{random, symmetric_indefinite};
use crate::harness::results::{merge, record};
use crate::harness::timing::interleaved;

/// The pivoted method measured against `dsytrf`.
const PIVOTED: LdltPivoting = LdltPivoting::Aasen;

/// The largest order whose factors are multiplied out for their error.
const RECONSTRUCT_MAX: usize = 16384;

/// Generator states of `G` and of the right-hand side.
const MATRIX_STATE: u64 = 11;
const RHS_STATE: u64 = 12;

const FACTOR_KIND: &str = "factorization ‖A − PᵀLDLᵀP‖_F/‖A‖_F, lower triangle";
const SOLVE_KIND: &str = "solve ‖B − AX‖_∞/(‖A‖_∞‖X‖_∞ + ‖B‖_∞)";

/// Every order of `settings`, in FP64 and FP32; `block_sizes`: panel widths
/// of the pivoted factorization to time beside the default.
pub fn run(cuda: &Cuda, settings: &Settings, block_sizes: &[usize]) -> Result<Vec<Value>> {
    let mut rows = vec![];
    for &n in &settings.sizes {
        rows.extend(order::<f64>(cuda, settings.reps, n, block_sizes)?);
        rows.extend(order::<f32>(cuda, settings.reps, n, block_sizes)?);
    }
    Ok(rows)
}

/// Views of the interchanges, `D`'s diagonal and its subdiagonal.
type PivotViews<'a, T> = (View<'a, Cuda, i32>, View<'a, Cuda, T>, View<'a, Cuda, T>);

/// gpumat's interchanges and `D` of one factorization, the first zero
/// pivot it reported, and its workspace, kept from run to run as a caller
/// that factors repeatedly keeps it (as Cholesky's runs reuse their memory).
struct Pivots<T: Scalar> {
    ipiv: CudaBuffer<i32>,
    d: CudaBuffer<T>,
    e: CudaBuffer<T>,
    zero: Option<usize>,
    workspace: Option<LdltWorkspace<Cuda, T>>,
    middle: Middle,
}

impl<T: Scalar> Pivots<T> {
    fn new(cuda: &Cuda, n: usize, pivoting: LdltPivoting) -> Result<Self> {
        let middle = if pivoting == LdltPivoting::Aasen { Middle::Tridiagonal } else { Middle::BlockDiagonal };
        Ok(Pivots { ipiv: cuda.alloc(n)?, d: cuda.alloc(n)?, e: cuda.alloc(n)?, zero: None, workspace: None, middle })
    }

    fn views(&self) -> Result<PivotViews<'_, T>> {
        let n = self.ipiv.len();
        Ok((View::dense(&self.ipiv, n, 1)?, View::dense(&self.d, n, 1)?, View::dense(&self.e, n, 1)?))
    }

    /// The number of 2×2 blocks of a block diagonal `D` (none for Aasen's
    /// tridiagonal).
    fn two_by_two(&self, cuda: &Cuda) -> Result<usize> {
        if self.middle == Middle::Tridiagonal {
            return Ok(0);
        }
        let mut e = vec![T::ZERO; self.e.len()];
        cuda.download(&self.e, &mut e)?;
        Ok(e.iter().filter(|x| **x != T::ZERO).count())
    }
}

/// Copies `src` (a dense `shape`) into `a` and factors there the matrix
/// that `tri` locates.
#[allow(clippy::too_many_arguments)]
fn ldlt_in_place<T: Scalar>(
    cuda: &Cuda,
    tri: &Triangle,
    (src, shape): (&CudaBuffer<T>, (usize, usize)),
    a: &mut CudaBuffer<T>,
    p: &mut Pivots<T>,
    pivoting: LdltPivoting,
    params: LdltParams,
) -> Result<()> {
    cuda.copy(View::dense(src, shape.0, shape.1)?, ViewMut::dense(a, shape.0, shape.1)?)?;
    let n = tri.cols;
    let (ipiv, d, e) =
        (ViewMut::dense(&mut p.ipiv, n, 1)?, ViewMut::dense(&mut p.d, n, 1)?, ViewMut::dense(&mut p.e, n, 1)?);
    let ws = match &mut p.workspace {
        Some(ws) => ws,
        None => p.workspace.insert(LdltWorkspace::new(cuda, n, params)?),
    };
    p.zero = ldlt::factor_in_place_with(cuda, tri, &BufferMut::new(a), (ipiv, d, e), pivoting, ws)?;
    Ok(())
}

/// Copies `b` into `x` and solves there with gpumat's factor.
fn ldlt_solve<T: Scalar>(
    cuda: &Cuda,
    tri: &Triangle,
    (factor, p): (&CudaBuffer<T>, &Pivots<T>),
    b: &CudaBuffer<T>,
    x: &mut CudaBuffer<T>,
) -> Result<()> {
    let n = tri.cols;
    cuda.copy(View::dense(b, n, 1)?, ViewMut::dense(x, n, 1)?)?;
    ldlt::solve_in_place(cuda, tri, factor, p.views()?, p.middle, ViewMut::dense(x, n, 1)?)
}

/// Copies the `n × n` `src` into `a` and factors it with cuSOLVER.
fn sytrf_vendor<T: Scalar>(
    cuda: &Cuda,
    n: usize,
    src: &CudaBuffer<T>,
    a: &mut CudaBuffer<T>,
    v: &mut vendor::DenseLdlt<T>,
) -> Result<()> {
    cuda.copy(View::dense(src, n, n)?, ViewMut::dense(a, n, n)?)?;
    v.factor(cuda, a)
}

/// The backward error of gpumat's factor `l` (`n × n`) against `reference`.
fn gpumat_error<T: Scalar>(
    cuda: &Cuda,
    n: usize,
    reference: &CudaBuffer<f64>,
    l: &CudaBuffer<T>,
    p: &Pivots<T>,
) -> Result<f64> {
    let l = widen(cuda, l, n, n)?;
    let (d, e) = (widen(cuda, &p.d, n, 1)?, widen(cuda, &p.e, n, 1)?);
    ldlt_error(cuda, n, reference, &l, &p.ipiv, (&d, &e))
}

/// The backward error of cuSOLVER's factor read as LAPACK's product form,
/// and read as already in gpumat's form (`pivots` empty: no interchanges,
/// one reading).
fn vendor_errors<T: Scalar>(
    cuda: &Cuda,
    n: usize,
    reference: &CudaBuffer<f64>,
    factor: &CudaBuffer<T>,
    pivots: &[i32],
) -> Result<(f64, f64)> {
    let mut host = vec![T::ZERO; n * n];
    cuda.download(factor, &mut host)?;
    let reading = |product_form: bool| -> Result<f64> {
        let mut l = host.clone();
        let s = vendor::sytrf_to_standard(n, &mut l, pivots, product_form)?;
        let l = widen(cuda, &cuda.upload(&l)?, n, n)?;
        let (ipiv, d, e) = (cuda.upload(&s.ipiv)?, cuda.upload(&s.d)?, cuda.upload(&s.e)?);
        ldlt_error(cuda, n, reference, &l, &ipiv, (&d, &e))
    };
    let product = reading(true)?;
    let standard = if pivots.is_empty() { product } else { reading(false)? };
    Ok((product, standard))
}

/// The figures of a backward error: the factorization's where measured,
/// else the solve's.
fn backward(ours: (Option<f64>, f64), theirs: (Option<f64>, f64)) -> Value {
    let kind = if ours.0.is_some() { FACTOR_KIND } else { SOLVE_KIND };
    json!({
        "gpumat_backward_error": ours.0.unwrap_or(ours.1),
        "vendor_backward_error": theirs.0.unwrap_or(theirs.1),
        "backward_error_kind": kind,
        "gpumat_factor_error": ours.0, "vendor_factor_error": theirs.0,
        "gpumat_solve_backward_error": ours.1, "vendor_solve_backward_error": theirs.1,
    })
}

/// The bytes an order and precision needs at most at once, without and with
/// the factors multiplied out. `e`: an n × n array of `T`; `f`: of `f64`.
fn needed_bytes<T: Scalar>(n: usize, params: LdltParams) -> (f64, f64) {
    let (e, f) = ((n * n * size_of::<T>()) as f64, (n * n * 8) as f64);
    // gpumat's panel copies L and W; cuSOLVER's workspace (n × its block
    // size), cuBLAS's and the pool's slack.
    let workspaces =
        (2 * n * (params.block_size + 1) * size_of::<T>()) as f64 + (n * 512 * size_of::<T>()) as f64 + 5e8;
    // The input in FP64 while it is made (2f); the input, two full factors
    // and the RFP input and factor (4e); the input, the factors and the FP64
    // reference for the errors (3.5e + f), with the factor being multiplied
    // out, its D, the product and a scratch (4f more).
    let timings = (2.0 * f).max(4.0 * e).max(3.5 * e + f) + workspaces;
    (timings, (3.5 * e + 5.0 * f).max(timings) + workspaces)
}

/// Every row of one order in precision `T`.
fn order<T: Scalar>(cuda: &Cuda, reps: usize, n: usize, block_sizes: &[usize]) -> Result<Vec<Value>> {
    let precision = T::NAME;
    let params = LdltParams::aasen(n);
    let (timings, with_reconstruction) = needed_bytes::<T>(n, params);
    let free = cuda.memory()?.0 as f64;
    if timings > free {
        let why = format!("needs about {:.1} GB, {:.1} GB free", timings / 1e9, free / 1e9);
        println!("ldlt n = {n} {precision}: skipped, {why}");
        let mut row = json!({"op": "sytrf", "n": n, "precision": precision, "skipped": why});
        row["needed_bytes"] = json!(timings);
        row["free_bytes"] = json!(free);
        return Ok(vec![row]);
    }
    let reconstruct = n <= RECONSTRUCT_MAX && with_reconstruction <= free;
    let nn = n as f64;
    let flops = nn.powi(3) / 3.0;
    let a = {
        let a64 = symmetric_indefinite(cuda, n, MATRIX_STATE)?;
        let mut a = cuda.alloc::<T>(n * n)?;
        cuda.cast(View::dense(&a64, n, n)?, ViewMut::dense(&mut a, n, n)?)?;
        a
    };

    // The yardstick: a square GEMM of this order.
    let gemm_ms = {
        let mut c = cuda.alloc::<T>(n * n)?;
        let mut gemm = || vendor::gemm(cuda, n, &a, &a, &mut c);
        interleaved(cuda, reps, &mut [&mut gemm])?[0]
    };
    let gemm_tflops = 2.0 * nn.powi(3) / (gemm_ms * 1e9);
    let rates = |ours: f64, theirs: f64| {
        json!({
            "precision": precision, "gemm_ms": gemm_ms, "gemm_tflops": gemm_tflops,
            "gpumat_fraction_of_gemm": flops / (ours * 1e9) / gemm_tflops,
            "vendor_fraction_of_gemm": flops / (theirs * 1e9) / gemm_tflops,
        })
    };

    // The GPU's pivoted factorization (Aasen's): full storage, RFP storage, cuSOLVER.
    let pivoting = PIVOTED;
    let rfp = gpumat::api::packed_layout(n);
    let (full, packed) = (Triangle::full(Uplo::Lower, Block::dense(n, n))?, Triangle::rfp(rfp, 0));
    let (square, column) = ((n, n), (rfp.len(), 1));
    let mut arf0 = cuda.alloc::<T>(rfp.len())?;
    cuda.full_to_rfp(View::dense(&a, n, n)?, rfp, ViewMut::dense(&mut arf0, rfp.len(), 1)?)?;
    // Peak memory of one factorization each, its own matrix included.
    let (_, bytes_full) = cuda.peak_memory(|| {
        let (mut l, mut p) = (cuda.alloc::<T>(n * n)?, Pivots::new(cuda, n, pivoting)?);
        ldlt_in_place(cuda, &full, (&a, square), &mut l, &mut p, pivoting, params)
    })?;
    let (_, bytes_rfp) = cuda.peak_memory(|| {
        let (mut l, mut p) = (cuda.alloc::<T>(rfp.len())?, Pivots::new(cuda, n, pivoting)?);
        ldlt_in_place(cuda, &packed, (&arf0, column), &mut l, &mut p, pivoting, params)
    })?;
    let (_, bytes_vendor) = cuda.peak_memory(|| {
        let (mut l, mut v) = (cuda.alloc::<T>(n * n)?, vendor::DenseLdlt::<T>::new(cuda, n)?);
        sytrf_vendor(cuda, n, &a, &mut l, &mut v)
    })?;

    let (mut ours, mut theirs, mut arf) =
        (cuda.alloc::<T>(n * n)?, cuda.alloc::<T>(n * n)?, cuda.alloc::<T>(rfp.len())?);
    let (mut p_full, mut p_rfp) = (Pivots::new(cuda, n, pivoting)?, Pivots::new(cuda, n, pivoting)?);
    let mut sytrf = vendor::DenseLdlt::<T>::new(cuda, n)?;
    let t = {
        let mut f_full = || ldlt_in_place(cuda, &full, (&a, square), &mut ours, &mut p_full, pivoting, params);
        let mut f_rfp = || ldlt_in_place(cuda, &packed, (&arf0, column), &mut arf, &mut p_rfp, pivoting, params);
        let mut f_vendor = || sytrf_vendor(cuda, n, &a, &mut theirs, &mut sytrf);
        interleaved(cuda, reps, &mut [&mut f_full, &mut f_rfp, &mut f_vendor])?
    };
    let (t_full, t_rfp, t_vendor) = (t[0], t[1], t[2]);
    drop(arf0);
    let info = sytrf.info(cuda)?;
    if p_full.zero.is_some() || p_rfp.zero.is_some() || info != 0 {
        return Err(Error::Device(format!(
            "ldlt n = {n} {precision}: a zero pivot (gpumat full {:?}, RFP {:?}; cuSOLVER info {info})",
            p_full.zero, p_rfp.zero
        )));
    }

    // Solves with one right-hand side.
    let b = {
        let b64 = random(cuda, n, RHS_STATE)?;
        let mut b = cuda.alloc::<T>(n)?;
        cuda.cast(View::dense(&b64, n, 1)?, ViewMut::dense(&mut b, n, 1)?)?;
        b
    };
    let (mut x_full, mut x_rfp, mut x_vendor) = (cuda.alloc::<T>(n)?, cuda.alloc::<T>(n)?, cuda.alloc::<T>(n)?);
    let s = {
        let mut s_full = || ldlt_solve(cuda, &full, (&ours, &p_full), &b, &mut x_full);
        let mut s_rfp = || ldlt_solve(cuda, &packed, (&arf, &p_rfp), &b, &mut x_rfp);
        let mut s_vendor = || {
            cuda.copy(View::dense(&b, n, 1)?, ViewMut::dense(&mut x_vendor, n, 1)?)?;
            sytrf.solve(cuda, &theirs, &mut x_vendor, 1)
        };
        interleaved(cuda, reps, &mut [&mut s_full, &mut s_rfp, &mut s_vendor])?
    };
    let info = sytrf.info(cuda)?;
    if info != 0 {
        return Err(Error::Device(format!("ldlt n = {n} {precision}: cuSOLVER Xsytrs info {info}")));
    }

    // Errors, in FP64.
    let reference = widen(cuda, &a, n, n)?;
    let b64 = widen(cuda, &b, n, 1)?;
    let solved = |x: &CudaBuffer<T>| solve_error(cuda, n, &reference, &widen(cuda, x, n, 1)?, &b64, 1);
    let (se_full, se_rfp, se_vendor) = (solved(&x_full)?, solved(&x_rfp)?, solved(&x_vendor)?);
    let vendor_pivots = sytrf.pivots(cuda)?;
    let (fe_full, fe_rfp, fe_vendor) = if reconstruct {
        let fe_full = gpumat_error(cuda, n, &reference, &ours, &p_full)?;
        let unpacked = {
            let mut u = cuda.alloc::<T>(n * n)?;
            cuda.rfp_to_full(View::dense(&arf, rfp.len(), 1)?, rfp, ViewMut::dense(&mut u, n, n)?)?;
            u
        };
        let fe_rfp = gpumat_error(cuda, n, &reference, &unpacked, &p_rfp)?;
        drop(unpacked);
        (Some(fe_full), Some(fe_rfp), Some(vendor_errors(cuda, n, &reference, &theirs, &vendor_pivots)?))
    } else {
        (None, None, None)
    };
    // Of the two readings of cuSOLVER's factor, the one that reproduces A.
    let (fe_vendor, vendor_form) = match fe_vendor {
        Some((product, standard)) if product <= standard => (
            Some(product),
            json!({"vendor_factor_form": "LAPACK product form", "vendor_factor_error_other_form": standard}),
        ),
        Some((product, standard)) => {
            (Some(standard), json!({"vendor_factor_form": "standard form", "vendor_factor_error_other_form": product}))
        }
        None => (None, json!({})),
    };
    let vendor_two_by_two = vendor_pivots.iter().filter(|&&p| p < 0).count() / 2;
    let common = merge(
        rates(t_full, t_vendor),
        json!({
            "block_size": params.block_size, "update_tile": params.update_tile, "pivoting": format!("{pivoting:?}"),
            "vendor_bytes": bytes_vendor, "vendor_workspace_bytes": sytrf.workspace_bytes(),
            "vendor_2x2_blocks": vendor_two_by_two,
        }),
    );
    let mut rows = vec![];
    rows.push(record(
        "sytrf",
        n,
        t_full,
        t_vendor,
        Some(flops),
        merge(
            merge(common.clone(), backward((fe_full, se_full), (fe_vendor, se_vendor))),
            merge(
                vendor_form.clone(),
                json!({"gpumat_bytes": bytes_full, "gpumat_2x2_blocks": p_full.two_by_two(cuda)?}),
            ),
        ),
    ));
    rows.push(record(
        "sytrf_rfp",
        n,
        t_rfp,
        t_vendor,
        Some(flops),
        merge(
            merge(merge(common, rates(t_rfp, t_vendor)), backward((fe_rfp, se_rfp), (fe_vendor, se_vendor))),
            merge(
                vendor_form,
                json!({
                    "gpumat_bytes": bytes_rfp, "gpumat_2x2_blocks": p_rfp.two_by_two(cuda)?,
                    "rfp_time_over_full": t_rfp / t_full, "full_ms_same_run": t_full,
                    "rfp_memory_over_full": bytes_rfp as f64 / bytes_full as f64,
                    "transr": format!("{:?}", rfp.transr),
                }),
            ),
        ),
    ));
    rows.push(record(
        "sytrs",
        n,
        s[0],
        s[2],
        None,
        merge(
            backward((None, se_full), (None, se_vendor)),
            json!({
                "precision": precision, "nrhs": 1, "rfp_ms": s[1], "rfp_time_over_full": s[1] / s[0],
                "rfp_backward_error": se_rfp,
            }),
        ),
    ));
    println!(
        "ldlt n = {n} {precision}: sytrf gpumat {t_full:.2} ms, RFP {t_rfp:.2} ms, cuSOLVER {t_vendor:.2} ms; \
         solve {:.3} / {:.3} / {:.3} ms",
        s[0], s[1], s[2]
    );
    // Other panel widths than the default, for tuning: timings only.
    let mut sweep = vec![];
    for &nb in block_sizes {
        let params = LdltParams { block_size: nb, ..params };
        let mut p = Pivots::new(cuda, n, pivoting)?;
        let mut f = || ldlt_in_place(cuda, &full, (&a, square), &mut ours, &mut p, pivoting, params);
        let t = interleaved(cuda, reps, &mut [&mut f])?[0];
        println!("ldlt n = {n} {precision}: sytrf with panels of {nb}: {t:.2} ms");
        sweep.push(json!({"block_size": nb, "gpumat_ms": t, "zero_pivot": p.zero}));
    }
    if !sweep.is_empty() {
        rows[0]["block_size_sweep"] = json!(sweep);
    }
    drop((ours, theirs, arf, p_full, p_rfp, sytrf, x_full, x_rfp, x_vendor, reference));
    rows.extend(unpivoted(cuda, reps, n, a, (&b, &b64), (gemm_tflops, reconstruct))?);
    Ok(rows)
}

/// gpumat's LDLᵀ without pivoting (and cuSOLVER's) on the quasi-definite
/// matrix, gpumat's Cholesky (and cuSOLVER's) on the SPD one, both made
/// from `a`; `b` (with its FP64 copy) is the right-hand side of the solves.
fn unpivoted<T: Scalar>(
    cuda: &Cuda,
    reps: usize,
    n: usize,
    a: CudaBuffer<T>,
    (b, b64): (&CudaBuffer<T>, &CudaBuffer<f64>),
    (gemm_tflops, reconstruct): (f64, bool),
) -> Result<Vec<Value>> {
    let precision = T::NAME;
    let nn = n as f64;
    let flops = nn.powi(3) / 3.0;
    let diagonal = |offset, len| Block { offset, rows: 1, cols: len, ld: n + 1 };
    let half = n / 2;
    let mut spd = cuda.alloc::<T>(n * n)?;
    cuda.copy(View::dense(&a, n, n)?, ViewMut::dense(&mut spd, n, n)?)?;
    cuda.fill(ViewMut::new(&mut spd, diagonal(0, n))?, T::from_f64(2.0 * nn))?;
    let mut qd = a;
    cuda.fill(ViewMut::new(&mut qd, diagonal(0, half))?, T::from_f64(2.0 * nn))?;
    if n > half {
        cuda.fill(ViewMut::new(&mut qd, diagonal(half * (n + 1), n - half))?, T::from_f64(-2.0 * nn))?;
    }
    // The tolerance `Sym::ldlt_unpivoted` takes: n·ε·max|aᵢⱼ|.
    let tol = nn * T::EPSILON.to_f64() * cuda.norm(Norm::Max, View::dense(&qd, n, n)?)?.to_f64();
    let none = LdltPivoting::None { tol };
    let (params, chol) = (LdltParams::unpivoted(n), CholeskyParams::for_order(n));
    let full = Triangle::full(Uplo::Lower, Block::dense(n, n))?;
    let square = (n, n);

    let (_, bytes_ours) = cuda.peak_memory(|| {
        let (mut l, mut p) = (cuda.alloc::<T>(n * n)?, Pivots::new(cuda, n, none)?);
        ldlt_in_place(cuda, &full, (&qd, square), &mut l, &mut p, none, params)
    })?;
    let (_, bytes_vendor) = cuda.peak_memory(|| {
        let (mut l, mut v) = (cuda.alloc::<T>(n * n)?, vendor::DenseLdlt::<T>::unpivoted(cuda, n)?);
        sytrf_vendor(cuda, n, &qd, &mut l, &mut v)
    })?;
    let (_, bytes_chol) = cuda.peak_memory(|| {
        let (mut l, mut info) = (cuda.alloc::<T>(n * n)?, cuda.upload(&[0i32])?);
        cholesky_full(cuda, n, &spd, &mut l, &mut info, chol)
    })?;
    let (_, bytes_potrf) = cuda.peak_memory(|| {
        let (mut l, mut v) = (cuda.alloc::<T>(n * n)?, vendor::DenseCholesky::<T>::new(cuda, n)?);
        cholesky_vendor(cuda, n, &spd, &mut l, &mut v)
    })?;

    // One matrix for the four: each run starts with its own copy.
    let work = RefCell::new(cuda.alloc::<T>(n * n)?);
    let mut p = Pivots::new(cuda, n, none)?;
    let mut sytrf = vendor::DenseLdlt::<T>::unpivoted(cuda, n)?;
    let mut potrf = vendor::DenseCholesky::<T>::new(cuda, n)?;
    let mut info = cuda.upload(&[0i32])?;
    let t = {
        let mut f_ours = || ldlt_in_place(cuda, &full, (&qd, square), &mut work.borrow_mut(), &mut p, none, params);
        let mut f_vendor = || sytrf_vendor(cuda, n, &qd, &mut work.borrow_mut(), &mut sytrf);
        let mut f_chol = || cholesky_full(cuda, n, &spd, &mut work.borrow_mut(), &mut info, chol);
        let mut f_potrf = || cholesky_vendor(cuda, n, &spd, &mut work.borrow_mut(), &mut potrf);
        interleaved(cuda, reps, &mut [&mut f_ours, &mut f_vendor, &mut f_chol, &mut f_potrf])?
    };
    let (t_ours, t_vendor, t_chol, t_potrf) = (t[0], t[1], t[2], t[3]);
    let mut work = work.into_inner();
    let mut x = cuda.alloc::<T>(n)?;
    let copy_b = |x: &mut CudaBuffer<T>| cuda.copy(View::dense(b, n, 1)?, ViewMut::dense(x, n, 1)?);
    let solved = |reference: &CudaBuffer<f64>, x: &CudaBuffer<T>| {
        solve_error(cuda, n, reference, &widen(cuda, x, n, 1)?, b64, 1)
    };

    // Each factorization once more, for its errors.
    let reference = widen(cuda, &qd, n, n)?;
    ldlt_in_place(cuda, &full, (&qd, square), &mut work, &mut p, none, params)?;
    if let Some(column) = p.zero {
        return Err(Error::Device(format!("ldlt n = {n} {precision}: unpivoted, pivot {column} below {tol:.2e}")));
    }
    ldlt_solve(cuda, &full, (&work, &p), b, &mut x)?;
    let se_ours = solved(&reference, &x)?;
    let fe_ours = if reconstruct { Some(gpumat_error(cuda, n, &reference, &work, &p)?) } else { None };
    sytrf_vendor(cuda, n, &qd, &mut work, &mut sytrf)?;
    let status = sytrf.info(cuda)?;
    if status != 0 {
        return Err(Error::Device(format!("ldlt n = {n} {precision}: cuSOLVER unpivoted sytrf info {status}")));
    }
    copy_b(&mut x)?;
    // cuSOLVER documents the solve without pivots; a refusal is recorded.
    let (se_vendor, vendor_solve_note) = match sytrf.solve(cuda, &work, &mut x, 1).and_then(|()| sytrf.info(cuda)) {
        Ok(0) => (Some(solved(&reference, &x)?), None),
        Ok(status) => (None, Some(format!("Xsytrs info {status}"))),
        Err(e) => (None, Some(e.to_string())),
    };
    let fe_vendor = if reconstruct { Some(vendor_errors(cuda, n, &reference, &work, &[])?.0) } else { None };
    drop((reference, sytrf));

    let reference = widen(cuda, &spd, n, n)?;
    cholesky_full(cuda, n, &spd, &mut work, &mut info, chol)?;
    let status = read_info(cuda, &info)?;
    if status != 0 {
        return Err(Error::Device(format!("ldlt n = {n} {precision}: gpumat Cholesky info {status}")));
    }
    copy_b(&mut x)?;
    cholesky::solve_in_place(cuda, Uplo::Lower, View::dense(&work, n, n)?, ViewMut::dense(&mut x, n, 1)?)?;
    let se_chol = solved(&reference, &x)?;
    let fe_chol =
        if reconstruct { Some(cholesky_error(cuda, n, &reference, &widen(cuda, &work, n, n)?)?) } else { None };
    cholesky_vendor(cuda, n, &spd, &mut work, &mut potrf)?;
    copy_b(&mut x)?;
    potrf.solve(cuda, &work, &mut x, 1)?;
    let status = potrf.info(cuda)?;
    if status != 0 {
        return Err(Error::Device(format!("ldlt n = {n} {precision}: cuSOLVER potrf/potrs info {status}")));
    }
    let se_potrf = solved(&reference, &x)?;
    let fe_potrf =
        if reconstruct { Some(cholesky_error(cuda, n, &reference, &widen(cuda, &work, n, n)?)?) } else { None };

    let rates = |ours: f64, theirs: f64| {
        json!({
            "precision": precision, "gemm_tflops": gemm_tflops,
            "gpumat_fraction_of_gemm": flops / (ours * 1e9) / gemm_tflops,
            "vendor_fraction_of_gemm": flops / (theirs * 1e9) / gemm_tflops,
        })
    };
    let mut nopiv_errors = backward((fe_ours, se_ours), (fe_vendor, se_vendor.unwrap_or(f64::NAN)));
    if let Some(note) = vendor_solve_note {
        nopiv_errors["vendor_solve_backward_error"] = Value::Null;
        nopiv_errors["vendor_solve_note"] = json!(note);
    }
    let mut chol_errors = backward((fe_chol, se_chol), (fe_potrf, se_potrf));
    if fe_chol.is_some() {
        chol_errors["backward_error_kind"] = json!("factorization ‖A − LLᵀ‖_F/‖A‖_F, lower triangle");
    }
    println!(
        "ldlt n = {n} {precision}: unpivoted gpumat {t_ours:.2} ms, cuSOLVER {t_vendor:.2} ms; \
         Cholesky gpumat {t_chol:.2} ms, cuSOLVER {t_potrf:.2} ms"
    );
    Ok(vec![
        record(
            "sytrf_nopiv",
            n,
            t_ours,
            t_vendor,
            Some(flops),
            merge(
                merge(rates(t_ours, t_vendor), nopiv_errors),
                json!({
                    "input": "G + Gᵀ, diagonal +2n on the first n/2 rows and −2n on the rest (quasi-definite)",
                    "tol": tol, "gpumat_bytes": bytes_ours, "vendor_bytes": bytes_vendor,
                    "cholesky_ms": t_chol, "unpivoted_time_over_cholesky": t_ours / t_chol,
                    "cholesky_tflops": flops / (t_chol * 1e9), "cholesky_bytes": bytes_chol,
                }),
            ),
        ),
        record(
            "potrf",
            n,
            t_chol,
            t_potrf,
            Some(flops),
            merge(
                merge(rates(t_chol, t_potrf), chol_errors),
                json!({
                    "input": "G + Gᵀ, diagonal +2n (SPD)",
                    "gpumat_bytes": bytes_chol, "vendor_bytes": bytes_potrf,
                    "block_size": chol.block_size,
                }),
            ),
        ),
    ])
}
