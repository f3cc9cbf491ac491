//! `gpumat bench --suite wls`: the mixed-precision weighted least-squares
//! solve (`A·D²·Aᵀ` in FP64 by `scaled_gram`, f32 Cholesky, FP64 refinement)
//! against the all-FP64 vendor pipeline (cuBLAS `dgmm` scaled copy +
//! `dsyrk`, `dgemm` for the right side, cuSOLVER `dpotrf` + `dpotrs`), on the
//! seed's Table 1 problems (`A`, `D²`, `b` uniform in [0, 1]) with `m` from
//! `--sizes` and `n = 2m`, end to end on data already on the device,
//! interleaved, median. Reported: the ratio, the relative error of ours
//! against the vendor's FP64 solve (target ≤ 1e−12), the normal-equations
//! backward error of both, and where our time goes.

use std::time::Instant;

use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::{Backend, Norm, Op, View, ViewMut};
use gpumat::layout::Uplo;
use gpumat::solve::wls::{self, NormalOutcome, WlsParams, WlsTimings};
use gpumat::{Error, Result};
use serde_json::{Value, json};

use crate::bench::{Args, record, side_by_side};

/// Our solve, as `gpumat::wls` does it after its input checks: `G` by
/// `scaled_syrk`, `c = A·(d∘d∘b)`, then the normal equations. Returns `x`.
fn ours(
    cuda: &Cuda,
    (m, n): (usize, usize),
    (a, d, b): (&CudaBuffer<f64>, &CudaBuffer<f64>, &CudaBuffer<f64>),
    g: &mut CudaBuffer<f64>,
    timings: &mut WlsTimings,
) -> Result<(CudaBuffer<f64>, String)> {
    let start = Instant::now();
    let (av, dv) = (View::dense(a, m, n)?, View::dense(d, n, 1)?);
    cuda.scaled_syrk(Uplo::Lower, 1.0, av, dv, 0.0, ViewMut::dense(g, m, m)?)?;
    let mut w = cuda.alloc::<f64>(n)?;
    cuda.copy(View::dense(b, n, 1)?, ViewMut::dense(&mut w, n, 1)?)?;
    cuda.scale_rows(dv, ViewMut::dense(&mut w, n, 1)?)?;
    cuda.scale_rows(dv, ViewMut::dense(&mut w, n, 1)?)?;
    let mut c = cuda.alloc::<f64>(m)?;
    cuda.gemm(1.0, av, Op::NoTrans, View::dense(&w, n, 1)?, Op::NoTrans, 0.0, ViewMut::dense(&mut c, m, 1)?)?;
    cuda.synchronize()?;
    timings.gram = start.elapsed();
    match wls::solve_normal_equations(cuda, g, &c, m, WlsParams::default(), timings)? {
        NormalOutcome::Solved(s) => Ok((s.x, s.path.to_string())),
        NormalOutcome::NeedsQr { reason, .. } => {
            Err(Error::InvalidArgument(format!("m = {m}: the benchmark problem needs QR ({reason})")))
        }
    }
}

/// The vendor's FP64 pipeline; `x` in `c` (`m × 1`).
#[allow(clippy::too_many_arguments)]
fn vendor_pipeline(
    cuda: &Cuda,
    (m, n): (usize, usize),
    (a, d, b): (&CudaBuffer<f64>, &CudaBuffer<f64>, &CudaBuffer<f64>),
    chol: &mut vendor::DenseCholesky,
    scaled: &mut CudaBuffer<f64>,
    g: &mut CudaBuffer<f64>,
    db: &mut CudaBuffer<f64>,
    c: &mut CudaBuffer<f64>,
) -> Result<()> {
    vendor::scaled_gram_syrk(cuda, (m, n), a, d, scaled, g)?;
    // c = (A·D)·(D·b); `D·b` is written as a 1 × n row, i.e. n contiguous entries.
    vendor::scale_columns(cuda, (1, n), b, d, db)?;
    cuda.gemm(
        1.0,
        View::dense(scaled, m, n)?,
        Op::NoTrans,
        View::dense(db, n, 1)?,
        Op::NoTrans,
        0.0,
        ViewMut::dense(c, m, 1)?,
    )?;
    chol.factor(cuda, g)?;
    chol.solve(cuda, g, c, 1)
}

/// `‖c − G·x‖∞/(‖G‖∞‖x‖∞)` with the full symmetric `G`.
fn backward_error(cuda: &Cuda, m: usize, g: &CudaBuffer<f64>, c: &CudaBuffer<f64>, x: &CudaBuffer<f64>) -> Result<f64> {
    let mut r = cuda.alloc::<f64>(m)?;
    cuda.copy(View::dense(c, m, 1)?, ViewMut::dense(&mut r, m, 1)?)?;
    let gv = View::dense(g, m, m)?;
    cuda.gemm(-1.0, gv, Op::NoTrans, View::dense(x, m, 1)?, Op::NoTrans, 1.0, ViewMut::dense(&mut r, m, 1)?)?;
    let max = |v: View<'_, Cuda, f64>| cuda.norm(Norm::Max, v);
    Ok(max(View::dense(&r, m, 1)?)? / (cuda.norm(Norm::Inf, gv)? * max(View::dense(x, m, 1)?)?))
}

pub fn suite(cuda: &Cuda, args: &Args) -> Result<Vec<Value>> {
    let mut rows = vec![];
    for &m in &args.sizes {
        let n = 2 * m;
        let (a_host, d_host, b_host) = crate::wls_table::problem(2008, m, false);
        let (a, d, b) = (cuda.upload(&a_host)?, cuda.upload(&d_host)?, cuda.upload(&b_host)?);
        drop(a_host);
        let data = (&a, &d, &b);
        let mut g_ours = cuda.alloc::<f64>(m * m)?;
        let mut chol = vendor::DenseCholesky::new(cuda, m)?;
        let (mut scaled, mut g_vendor) = (cuda.alloc::<f64>(m * n)?, cuda.alloc::<f64>(m * m)?);
        let (mut db, mut x_vendor) = (cuda.alloc::<f64>(n)?, cuda.alloc::<f64>(m)?);
        let mut timings = WlsTimings::default();
        let mut x_ours = None;
        let (t_ours, t_vendor) = side_by_side(
            cuda,
            args.reps,
            || {
                x_ours = Some(ours(cuda, (m, n), data, &mut g_ours, &mut timings)?);
                Ok(())
            },
            || vendor_pipeline(cuda, (m, n), data, &mut chol, &mut scaled, &mut g_vendor, &mut db, &mut x_vendor),
        )?;
        if chol.info(cuda)? != 0 {
            return Err(Error::Device(format!("m = {m}: cuSOLVER dpotrf failed (info {})", chol.info(cuda)?)));
        }
        let (x, path) = x_ours.ok_or_else(|| Error::Device("no timed run".into()))?;
        // The error of ours against the vendor's FP64 solve.
        let mut diff = cuda.alloc::<f64>(m)?;
        cuda.copy(View::dense(&x, m, 1)?, ViewMut::dense(&mut diff, m, 1)?)?;
        cuda.axpy(-1.0, View::dense(&x_vendor, m, 1)?, ViewMut::dense(&mut diff, m, 1)?)?;
        let fro = |v: &CudaBuffer<f64>| cuda.norm(Norm::Frobenius, View::dense(v, m, 1)?);
        let rel_error = fro(&diff)? / fro(&x_vendor)?;
        // Backward errors of both against our G (symmetrized by the solve)
        // and c recomputed.
        let mut c = cuda.alloc::<f64>(m)?;
        let mut w = cuda.alloc::<f64>(n)?;
        cuda.copy(View::dense(&b, n, 1)?, ViewMut::dense(&mut w, n, 1)?)?;
        for _ in 0..2 {
            cuda.scale_rows(View::dense(&d, n, 1)?, ViewMut::dense(&mut w, n, 1)?)?;
        }
        let av = View::dense(&a, m, n)?;
        cuda.gemm(1.0, av, Op::NoTrans, View::dense(&w, n, 1)?, Op::NoTrans, 0.0, ViewMut::dense(&mut c, m, 1)?)?;
        // The vendor's dpotrf + dpotrs on our G and c: isolates refinement
        // from the rounding differences of forming G two ways (both are
        // O(u‖G‖), worth about κ(G)·u in x).
        let mut g_copy = cuda.alloc::<f64>(m * m)?;
        cuda.copy(View::dense(&g_ours, m, m)?, ViewMut::dense(&mut g_copy, m, m)?)?;
        let mut x_same_g = cuda.alloc::<f64>(m)?;
        cuda.copy(View::dense(&c, m, 1)?, ViewMut::dense(&mut x_same_g, m, 1)?)?;
        chol.factor(cuda, &mut g_copy)?;
        if chol.info(cuda)? != 0 {
            return Err(Error::Device(format!("m = {m}: dpotrf of our G failed (info {})", chol.info(cuda)?)));
        }
        chol.solve(cuda, &g_copy, &mut x_same_g, 1)?;
        drop(g_copy);
        cuda.copy(View::dense(&x, m, 1)?, ViewMut::dense(&mut diff, m, 1)?)?;
        cuda.axpy(-1.0, View::dense(&x_same_g, m, 1)?, ViewMut::dense(&mut diff, m, 1)?)?;
        let rel_error_same_g = fro(&diff)? / fro(&x_same_g)?;
        let ours_be = backward_error(cuda, m, &g_ours, &c, &x)?;
        let vendor_be = backward_error(cuda, m, &g_ours, &c, &x_vendor)?;
        let ms = |t: std::time::Duration| t.as_secs_f64() * 1e3;
        let (mm, nn) = (m as f64, n as f64);
        println!(
            "wls m = {m}, n = {n}: ours {t_ours:.2} ms (gram {:.2}, f32 factor {:.2}, refinement {:.2}, condition estimate {:.2}, fallback {:.2}; {path}), \
             vendor {t_vendor:.2} ms, ratio {:.2}; ‖x − x_FP64‖/‖x_FP64‖ = {rel_error:.2e} (target ≤ 1e-12; \
             {rel_error_same_g:.2e} against dpotrf/dpotrs on our G); backward errors {ours_be:.2e} (ours), {vendor_be:.2e} (vendor)",
            ms(timings.gram),
            ms(timings.factor),
            ms(timings.refine),
            ms(timings.condition),
            ms(timings.fallback),
            t_vendor / t_ours
        );
        rows.push(record(
            &format!("wls {m}×{n}"),
            m,
            t_ours,
            t_vendor,
            // A·D²·Aᵀ (m²n) and Cholesky (m³/3): the FP64 pipeline's work.
            Some(mm * mm * nn + mm * mm * mm / 3.0),
            json!({
                "cols": n,
                "rel_error_vs_fp64": rel_error,
                "rel_error_vs_fp64_same_g": rel_error_same_g,
                "gpumat_backward_error": ours_be,
                "vendor_backward_error": vendor_be,
                "path": path,
                "gram_ms": ms(timings.gram),
                "factor_ms": ms(timings.factor),
                "refine_ms": ms(timings.refine),
                "condition_ms": ms(timings.condition),
                "fallback_ms": ms(timings.fallback),
                "gpumat_bytes": 8 * (m * n + m * m) + 4 * m * m,
                "vendor_bytes": 8 * (2 * m * n + m * m) + chol.workspace_bytes(),
            }),
        ));
    }
    Ok(rows)
}
