//! `--suite qr`: gpumat's blocked Householder QR against cuSOLVER's
//! `dgeqrf`, and the least-squares solve on top of it against `dgeqrf` +
//! `dormqr` + cuBLAS `dtrsm` (LAPACK's `dgels`), same inputs, interleaved,
//! on square and tall shapes. Both factorizations' backward error
//! `‖A − Q·R‖_F/(‖A‖_F·n·u)` and orthogonality `‖QᵀQ − I‖_F/(n·u)` are
//! measured with `Q` formed explicitly (ours by `thin_q`, cuSOLVER's by
//! `dorgqr`).

use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::reflector::larfb_by_products;
use gpumat::backend::tuning::{QrPanel, Tuning};
use gpumat::backend::{Backend, Block, BufferMut, Diag, Norm, Op, Side, View, ViewMut};
use gpumat::factor::qr::{self, QrParams};
use gpumat::layout::Uplo;
use gpumat::{Error, Result};
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::inputs::random;
use crate::harness::results::record;
use crate::harness::timing::{per_call_us, side_by_side};

/// The shapes of the comparison: square, and tall where the panel bounds
/// the vendor.
pub const SHAPES: [(usize, usize); 4] = [(8192, 8192), (16384, 16384), (32768, 4096), (131072, 1024)];

/// `(‖A − Q·R‖_F/(‖A‖_F·n·u), ‖QᵀQ − I‖_F/(n·u))` for `Q` (`m × n`,
/// explicit) and `R` the upper triangle of `factored`'s top `n × n`.
fn errors(
    cuda: &Cuda,
    m: usize,
    n: usize,
    a: &CudaBuffer<f64>,
    q: &CudaBuffer<f64>,
    factored: &CudaBuffer<f64>,
) -> Result<(f64, f64)> {
    let nu = n as f64 * f64::EPSILON / 2.0;
    let mut r = cuda.alloc::<f64>(n * n)?;
    cuda.copy(View::dense(factored, m, n)?.sub(0, 0, n, n)?, ViewMut::dense(&mut r, n, n)?)?;
    cuda.fill_strict_triangle(Uplo::Lower, 0.0, ViewMut::dense(&mut r, n, n)?)?;
    let mut qr_ = cuda.alloc::<f64>(m * n)?;
    cuda.copy(View::dense(a, m, n)?, ViewMut::dense(&mut qr_, m, n)?)?;
    cuda.gemm(
        -1.0,
        View::dense(q, m, n)?,
        Op::NoTrans,
        View::dense(&r, n, n)?,
        Op::NoTrans,
        1.0,
        ViewMut::dense(&mut qr_, m, n)?,
    )?;
    let backward =
        cuda.norm(Norm::Frobenius, View::dense(&qr_, m, n)?)? / cuda.norm(Norm::Frobenius, View::dense(a, m, n)?)?;
    drop(qr_);
    // QᵀQ − I, both triangles (syrk fills one; the other is symmetric).
    cuda.syrk(Uplo::Lower, Op::Trans, 1.0, View::dense(q, m, n)?, 0.0, ViewMut::dense(&mut r, n, n)?)?;
    cuda.fill_strict_triangle(Uplo::Upper, 0.0, ViewMut::dense(&mut r, n, n)?)?;
    // The diagonal, less one, through a dense copy.
    let diagonal = Block { offset: 0, rows: 1, cols: n, ld: n + 1 };
    let (mut d, mut ones) = (cuda.alloc::<f64>(n)?, cuda.alloc::<f64>(n)?);
    cuda.copy(View::new(&r, diagonal)?, ViewMut::dense(&mut d, 1, n)?)?;
    cuda.fill(ViewMut::dense(&mut ones, 1, n)?, 1.0)?;
    cuda.axpy(-1.0, View::dense(&ones, 1, n)?, ViewMut::dense(&mut d, 1, n)?)?;
    cuda.copy(View::dense(&d, 1, n)?, ViewMut::new(&mut r, diagonal)?)?;
    let lower = cuda.norm(Norm::Frobenius, View::dense(&r, n, n)?)?;
    let diag = cuda.norm(Norm::Frobenius, View::dense(&d, 1, n)?)?;
    // ‖·‖_F² of the symmetric matrix: twice the lower part less the diagonal.
    let orth = (2.0 * lower * lower - diag * diag).max(0.0).sqrt();
    Ok((backward / nu, orth / nu))
}

/// `‖Aᵀ·r‖₂ / (‖A‖_F·(‖A‖_F·‖x‖₂ + ‖r‖₂))` for `r = A·x − b` and the
/// least-squares `x` in the top `n` rows of `solved`: zero at the exact
/// solution, about `u` for a backward stable solver.
fn normal_residual(
    cuda: &Cuda,
    m: usize,
    n: usize,
    a: &CudaBuffer<f64>,
    b: &CudaBuffer<f64>,
    solved: &CudaBuffer<f64>,
) -> Result<f64> {
    let mut r = cuda.alloc::<f64>(m)?;
    cuda.copy(View::dense(b, m, 1)?, ViewMut::dense(&mut r, m, 1)?)?;
    let x = View::dense(solved, m, 1)?.sub(0, 0, n, 1)?;
    cuda.gemm(1.0, View::dense(a, m, n)?, Op::NoTrans, x, Op::NoTrans, -1.0, ViewMut::dense(&mut r, m, 1)?)?;
    let mut g = cuda.alloc::<f64>(n)?;
    let (av, rv) = (View::dense(a, m, n)?, View::dense(&r, m, 1)?);
    cuda.gemm(1.0, av, Op::Trans, rv, Op::NoTrans, 0.0, ViewMut::dense(&mut g, n, 1)?)?;
    let norm_a = cuda.norm(Norm::Frobenius, av)?;
    let scale = norm_a * (norm_a * cuda.norm(Norm::Frobenius, x)? + cuda.norm(Norm::Frobenius, rv)?);
    Ok(cuda.norm(Norm::Frobenius, View::dense(&g, n, 1)?)? / scale)
}

/// Where a panel's time goes, in µs per call: a leaf (`householder` on
/// `m × leaf`), the whole recursive panel (`m × nb`), and the skinny
/// product `Vᵀ·C` (`leaf × leaf` from an inner dimension `m`) of which the
/// recursion makes many; and cuSOLVER's `dgeqrf` on the same panel, the
/// panel that its own blocked factorization waits for.
fn panel_costs(cuda: &Cuda, m: usize, nb: usize, leaf: usize) -> Result<Value> {
    let a = random(cuda, m * nb, 13)?;
    let mut p = cuda.alloc::<f64>(m * nb)?;
    let mut t = cuda.alloc::<f64>(nb * nb)?;
    let mut work = cuda.alloc::<f64>(nb * nb)?;
    let reps = 10;
    // Each Householder kernel in turn, forced.
    let saved = cuda.tuning();
    let mut times = vec![];
    for kernel in [QrPanel::Shared, QrPanel::Global] {
        cuda.set_tuning(Tuning { qr_panel: Some(kernel), ..saved });
        let leaf_us = per_call_us(cuda, reps, &mut || {
            cuda.copy(View::dense(&a, m, leaf)?, ViewMut::dense(&mut p, m, leaf)?)?;
            cuda.householder(ViewMut::dense(&mut p, m, leaf)?, ViewMut::dense(&mut t, leaf, leaf)?)
        })?;
        let panel_us = per_call_us(cuda, reps, &mut || {
            cuda.copy(View::dense(&a, m, nb)?, ViewMut::dense(&mut p, m, nb)?)?;
            qr::factor_panel(
                cuda,
                &BufferMut::new(&mut p),
                Block::dense(m, nb),
                ViewMut::dense(&mut t, nb, nb)?,
                leaf,
                &mut work,
            )
        })?;
        // The panel as this kernel leaves it (the last timed call's).
        let mut kept = cuda.alloc::<f64>(m * nb)?;
        cuda.copy(View::dense(&p, m, nb)?, ViewMut::dense(&mut kept, m, nb)?)?;
        times.push((leaf_us, panel_us, kept));
    }
    cuda.set_tuning(saved);
    let [(shared_leaf_us, shared_panel_us, ref shared), (leaf_us, panel_us, ref global)] = times[..] else {
        unreachable!("two kernels timed")
    };
    // ‖shared − global‖_F / ‖global‖_F: the two kernels sum in other
    // orders, so they agree to rounding, not bit for bit.
    let mut difference = cuda.alloc::<f64>(m * nb)?;
    let (shared, global) = (View::dense(shared, m, nb)?, View::dense(global, m, nb)?);
    cuda.geam(1.0, shared, Op::NoTrans, -1.0, global, Op::NoTrans, ViewMut::dense(&mut difference, m, nb)?)?;
    let difference =
        cuda.norm(Norm::Frobenius, View::dense(&difference, m, nb)?)? / cuda.norm(Norm::Frobenius, global)?;
    let mut vendor = vendor::DenseQr::<f64>::new(cuda, m, nb)?;
    let vendor_us = per_call_us(cuda, reps, &mut || {
        cuda.copy(View::dense(&a, m, nb)?, ViewMut::dense(&mut p, m, nb)?)?;
        vendor.factor(cuda, &mut p)
    })?;
    let copy_us = per_call_us(cuda, reps, &mut || cuda.copy(View::dense(&a, m, nb)?, ViewMut::dense(&mut p, m, nb)?))?;
    let skinny_us = per_call_us(cuda, reps, &mut || {
        let (v, c) = (View::dense(&a, m, leaf)?, View::dense(&a, m, nb)?.sub(0, leaf, m, leaf)?);
        cuda.gemm(1.0, v, Op::Trans, c, Op::NoTrans, 0.0, ViewMut::dense(&mut t, leaf, leaf)?)
    })?;
    let leaf_copy_us = copy_us * leaf as f64 / nb as f64;
    eprintln!(
        "panel {m}×{nb}: rows in global memory {:.0} µs, in shared memory {:.0} µs (relative difference {difference:.1e}), dgeqrf \
         {:.0} µs (leaf {m}×{leaf}: {:.0} µs, in shared memory {:.0} µs; VᵀC {leaf}×{leaf} over {m}: {skinny_us:.0} \
         µs)",
        panel_us - copy_us,
        shared_panel_us - copy_us,
        vendor_us - copy_us,
        leaf_us - leaf_copy_us,
        shared_leaf_us - leaf_copy_us,
    );
    Ok(json!({
        "op": format!("qr panel {m}×{nb}"), "n": m, "precision": "f64",
        "panel_us": panel_us - copy_us, "vendor_panel_us": vendor_us - copy_us, "leaf_us": leaf_us - leaf_copy_us,
        "shared_panel_us": shared_panel_us - copy_us, "shared_leaf_us": shared_leaf_us - leaf_copy_us,
        "shared_relative_difference": difference,
        "skinny_gemm_us": skinny_us, "leaf": leaf,
    }))
}

/// The Householder leaf kernel that `GPUMAT_QR_PANEL` asks for.
fn householder_kernel(cuda: &Cuda) -> &'static str {
    match cuda.tuning().qr_panel {
        Some(QrPanel::Shared) | None => "shared memory where the leaf fits",
        Some(QrPanel::Global) => "global memory",
    }
}

pub fn run(cuda: &Cuda, settings: &Settings, shapes: &[(usize, usize)], block_sizes: &[usize]) -> Result<Vec<Value>> {
    let mut rows = vec![];
    for &(m, n) in shapes {
        let nb = QrParams::default().block_size.min(n);
        rows.push(panel_costs(cuda, m, nb, QrParams::default().leaf.min(nb))?);
    }
    for &(m, n) in shapes {
        if m < n {
            return Err(Error::InvalidArgument(format!("QR shapes are tall or square; {m}×{n} is wide")));
        }
        let a = random(cuda, m * n, 11)?;
        let b = random(cuda, m, 12)?;
        let (mut ours, mut theirs) = (cuda.alloc::<f64>(m * n)?, cuda.alloc::<f64>(m * n)?);
        let mut vendor = vendor::DenseQr::new(cuda, m, n)?;
        let flops = 2.0 * (m as f64) * (n as f64).powi(2) - 2.0 * (n as f64).powi(3) / 3.0;
        let mut best: Option<(f64, QrParams)> = None;
        let default = [QrParams::default().block_size];
        for &nb in if block_sizes.is_empty() { &default[..] } else { block_sizes } {
            let params = QrParams { block_size: nb, ..QrParams::default() };
            let nb = nb.min(n);
            let mut t = cuda.alloc::<f64>(nb * n)?;
            let (t_ours, t_vendor) = side_by_side(
                cuda,
                settings.reps,
                || {
                    cuda.copy(View::dense(&a, m, n)?, ViewMut::dense(&mut ours, m, n)?)?;
                    qr::factor_in_place(
                        cuda,
                        &BufferMut::new(&mut ours),
                        Block::dense(m, n),
                        ViewMut::dense(&mut t, nb, n)?,
                        params,
                    )
                },
                || {
                    cuda.copy(View::dense(&a, m, n)?, ViewMut::dense(&mut theirs, m, n)?)?;
                    vendor.factor(cuda, &mut theirs)
                },
            )?;
            if vendor.info(cuda)? != 0 {
                return Err(Error::Device(format!("{m}×{n}: cuSOLVER dgeqrf failed (info {})", vendor.info(cuda)?)));
            }
            // Both factors' accuracy, from the last runs' results.
            let mut q = cuda.alloc::<f64>(m * n)?;
            qr::thin_q(cuda, View::dense(&ours, m, n)?, View::dense(&t, nb, n)?, ViewMut::dense(&mut q, m, n)?)?;
            let (ours_backward, ours_orth) = errors(cuda, m, n, &a, &q, &ours)?;
            cuda.copy(View::dense(&theirs, m, n)?, ViewMut::dense(&mut q, m, n)?)?;
            vendor.explicit_q(cuda, &mut q)?;
            let (vendor_backward, vendor_orth) = errors(cuda, m, n, &a, &q, &theirs)?;
            drop(q);
            eprintln!("qr {m}×{n} nb={nb}: {t_ours:.2} ms vs dgeqrf {t_vendor:.2} ms ({:.2}×)", t_vendor / t_ours);
            rows.push(record(
                &format!("geqrf {m}×{n}"),
                m,
                t_ours,
                t_vendor,
                Some(flops),
                json!({
                    "cols": n, "block_size": nb, "leaf": params.leaf,
                    "householder_kernel": householder_kernel(cuda),
                    "gpumat_backward_error": ours_backward, "vendor_backward_error": vendor_backward,
                    "gpumat_orthogonality": ours_orth, "vendor_orthogonality": vendor_orth,
                    "error_units": "‖A − QR‖_F/(‖A‖_F·n·u) and ‖QᵀQ − I‖_F/(n·u)",
                    "gpumat_bytes": 8 * (m * n + nb * n), "vendor_bytes": 8 * m * n + vendor.workspace_bytes(),
                }),
            ));
            if best.is_none_or(|(time, _)| t_ours < time) {
                best = Some((t_ours, params));
            }
        }
        // The least-squares solve end to end, with the fastest block size.
        let Some((_, params)) = best else { continue };
        let nb = params.block_size.min(n);
        let mut t = cuda.alloc::<f64>(nb * n)?;
        let (mut x_ours, mut x_theirs) = (cuda.alloc::<f64>(m)?, cuda.alloc::<f64>(m)?);
        let (t_ours, t_vendor) = side_by_side(
            cuda,
            settings.reps,
            || {
                cuda.copy(View::dense(&a, m, n)?, ViewMut::dense(&mut ours, m, n)?)?;
                cuda.copy(View::dense(&b, m, 1)?, ViewMut::dense(&mut x_ours, m, 1)?)?;
                qr::factor_in_place(
                    cuda,
                    &BufferMut::new(&mut ours),
                    Block::dense(m, n),
                    ViewMut::dense(&mut t, nb, n)?,
                    params,
                )?;
                qr::solve_in_place(
                    cuda,
                    View::dense(&ours, m, n)?,
                    View::dense(&t, nb, n)?,
                    ViewMut::dense(&mut x_ours, m, 1)?,
                )
            },
            || {
                cuda.copy(View::dense(&a, m, n)?, ViewMut::dense(&mut theirs, m, n)?)?;
                cuda.copy(View::dense(&b, m, 1)?, ViewMut::dense(&mut x_theirs, m, 1)?)?;
                vendor.factor(cuda, &mut theirs)?;
                vendor.least_squares(cuda, &theirs, &mut x_theirs, 1)
            },
        )?;
        eprintln!("least squares {m}×{n}: {t_ours:.2} ms vs dgels {t_vendor:.2} ms ({:.2}×)", t_vendor / t_ours);
        let split = solve_split(cuda, (m, n), (&ours, &t, nb), &theirs, &mut vendor, &b)?;
        eprintln!("least squares {m}×{n} after the factorizations, µs: {split}");
        rows.push(record(
            &format!("least squares {m}×{n}"),
            m,
            t_ours,
            t_vendor,
            None,
            json!({
                "cols": n, "block_size": nb, "leaf": params.leaf, "vendor": "dgeqrf + dormqr + dtrsm",
                "householder_kernel": householder_kernel(cuda),
                "gpumat_normal_residual": normal_residual(cuda, m, n, &a, &b, &x_ours)?,
                "vendor_normal_residual": normal_residual(cuda, m, n, &a, &b, &x_theirs)?,
                "solve_split_us": split,
            }),
        ));
    }
    Ok(rows)
}

/// Where the least-squares solve of one right-hand side goes after the
/// factorizations, in µs per call: ours whole, its `Qᵀ·b` and its solve
/// with `R` (gpumat's `trsm`, which takes cuBLAS `trsv` for one column, and
/// cuBLAS `trsm` on the same `R`); the vendor's whole (`dormqr` + `dtrsm`)
/// and its `dtrsm`. Each call starts from a copy of `b`.
fn solve_split(
    cuda: &Cuda,
    (m, n): (usize, usize),
    (ours, t, nb): (&CudaBuffer<f64>, &CudaBuffer<f64>, usize),
    theirs: &CudaBuffer<f64>,
    vendor: &mut vendor::DenseQr<f64>,
    b: &CudaBuffer<f64>,
) -> Result<Value> {
    let reps = 10;
    let mut x = cuda.alloc::<f64>(m)?;
    let first_block = first_block_ops(cuda, (m, n), (ours, t, nb), &mut x)?;
    let (r_ours, r_theirs) = (View::dense(ours, m, n)?.sub(0, 0, n, n)?, View::dense(theirs, m, n)?.sub(0, 0, n, n)?);
    let mut timed = |f: &mut dyn FnMut(&mut CudaBuffer<f64>) -> Result<()>| {
        per_call_us(cuda, reps, &mut || {
            cuda.copy(View::dense(b, m, 1)?, ViewMut::dense(&mut x, m, 1)?)?;
            f(&mut x)
        })
    };
    let upper = (Uplo::Upper, Diag::NonUnit);
    Ok(json!({
        "gpumat_first_block": first_block,
        "gpumat": timed(&mut |x| qr::solve_in_place(cuda, View::dense(ours, m, n)?, View::dense(t, nb, n)?, ViewMut::dense(x, m, 1)?))?,
        "gpumat_qt": timed(&mut |x| qr::apply_q(cuda, View::dense(ours, m, n)?, View::dense(t, nb, n)?, Op::Trans, ViewMut::dense(x, m, 1)?))?,
        "gpumat_r": timed(&mut |x| cuda.trsm(Side::Left, Uplo::Upper, Op::NoTrans, Diag::NonUnit, 1.0, r_ours, ViewMut::dense(x, m, 1)?.sub_mut(0, 0, n, 1)?))?,
        "gpumat_r_by_cublas_trsm": timed(&mut |x| vendor::trsm_left(cuda, upper, r_ours, ViewMut::dense(x, m, 1)?.sub_mut(0, 0, n, 1)?))?,
        "vendor": timed(&mut |x| vendor.least_squares(cuda, theirs, x, 1))?,
        "vendor_r": timed(&mut |x| vendor::trsm_left(cuda, upper, r_theirs, ViewMut::dense(x, m, 1)?.sub_mut(0, 0, n, 1)?))?,
    }))
}

/// One call on the right-hand side `c` with the workspace `w`.
type OnColumn<'a> = dyn FnMut(ViewMut<'_, Cuda, f64>, &mut CudaBuffer<f64>) -> Result<()> + 'a;

/// The first block reflector applied to one column, in µs per call: by the
/// backend's `larfb` (two kernels) and by the seven level-3 calls.
fn first_block_ops(
    cuda: &Cuda,
    (m, n): (usize, usize),
    (ours, t, nb): (&CudaBuffer<f64>, &CudaBuffer<f64>, usize),
    x: &mut CudaBuffer<f64>,
) -> Result<Value> {
    let reps = 10;
    let kb = nb.min(n);
    let v = View::dense(ours, m, n)?.sub(0, 0, m, kb)?;
    let tb = View::dense(t, nb, n)?.sub(0, 0, kb, kb)?;
    let mut w = cuda.alloc::<f64>(kb)?;
    let mut us = |f: &mut OnColumn<'_>| per_call_us(cuda, reps, &mut || f(ViewMut::dense(x, m, 1)?, &mut w));
    Ok(json!({
        "larfb": us(&mut |c, w| cuda.larfb(v, tb, Op::Trans, c, w))?,
        "larfb_by_products": us(&mut |c, w| larfb_by_products(cuda, v, tb, Op::Trans, c, w))?,
    }))
}
