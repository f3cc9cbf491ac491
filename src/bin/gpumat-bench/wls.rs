//! `--suite wls`: the mixed-precision weighted least-squares solve
//! (`A·D²·Aᵀ` in FP64 by `scaled_gram`, f32 Cholesky, FP64 refinement)
//! against the all-FP64 vendor pipeline (cuBLAS `dgmm` scaled copy +
//! `dsyrk`, `dgemm` for the right side, cuSOLVER `dpotrf` + `dpotrs`), on
//! the problems of Jung & O'Leary's Table 1 (`A`, `D²`, `b` uniform in
//! [0, 1]) with `m` from `--sizes` and `n = 2m`, end to end on data already
//! on the device, interleaved, median. Reported: the ratio, the relative
//! error of ours against the vendor's FP64 solve (target ≤ 1e−12), the
//! normal-equations backward error of both, and where our time goes.

use std::time::Duration;

use gpumat::backend::cuda::scaled_gram::SplitPlan;
use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::{Backend, Cpu, Norm, Op, View, ViewMut};
use gpumat::layout::Uplo;
use gpumat::solve::wls::{self, NormalOutcome, Problem, WlsParams, WlsTimings};
use gpumat::solve::wls_problem::rel_error;
use gpumat::{Error, Result};
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::inputs::wls_problem;
use crate::harness::results::record;
use crate::harness::timing::{median, side_by_side};

/// What our solve reports besides `x`.
struct Report {
    path: String,
    iterations: usize,
    condition: f64,
}

/// Our solve, as `gpumat::wls` does it after its input checks.
fn ours(
    cuda: &Cuda,
    (m, n): (usize, usize),
    (a, d, b): (&CudaBuffer<f64>, &CudaBuffer<f64>, &CudaBuffer<f64>),
    timings: &mut WlsTimings,
) -> Result<(CudaBuffer<f64>, Report)> {
    let problem = Problem { a: View::dense(a, m, n)?, d: View::dense(d, n, 1)?, b: View::dense(b, n, 1)? };
    match wls::solve(cuda, problem, WlsParams::default(), timings)? {
        NormalOutcome::Solved(s) => {
            Ok((s.x, Report { path: s.path.to_string(), iterations: s.iterations, condition: s.condition }))
        }
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

/// A reference for `x`, independent of our solve: the vendor's solution
/// refined three times with residuals in double-double on the host (the CPU
/// backend's `weighted_residual`) and corrections from the vendor's FP64
/// factor `l` (`dpotrs`). Its error is a few `u`: each step multiplies the
/// error by about `κ(G)·u` (5e−10 here).
fn reference(
    cuda: &Cuda,
    (m, n): (usize, usize),
    (a, d, b): (&[f64], &[f64], &[f64]),
    chol: &mut vendor::DenseCholesky,
    l: &CudaBuffer<f64>,
    x_vendor: &CudaBuffer<f64>,
) -> Result<Vec<f64>> {
    let cpu = Cpu::new();
    let (a, d, b) = (cpu.upload(a)?, cpu.upload(d)?, cpu.upload(b)?);
    let problem = Problem { a: View::dense(&a, m, n)?, d: View::dense(&d, n, 1)?, b: View::dense(&b, n, 1)? };
    let mut x = vec![0.0; m];
    cuda.download(x_vendor, &mut x)?;
    let mut r = vec![0.0; m];
    for _ in 0..3 {
        let (xc, mut rc) = (cpu.upload(&x)?, cpu.alloc::<f64>(m)?);
        let (xv, rv) = (View::dense(&xc, m, 1)?, ViewMut::dense(&mut rc, m, 1)?);
        cpu.weighted_residual(problem.a, problem.d, problem.b, xv, rv)?;
        cpu.download(&rc, &mut r)?;
        let mut dx = cuda.upload(&r)?;
        chol.solve(cuda, l, &mut dx, 1)?;
        cuda.download(&dx, &mut r)?;
        x.iter_mut().zip(&r).for_each(|(xi, di)| *xi += di);
    }
    Ok(x)
}

/// Each phase's median over the runs (warm-up runs included).
fn median_phases(runs: &[WlsTimings]) -> WlsTimings {
    let phase = |f: fn(&WlsTimings) -> Duration| median(runs.iter().map(f).collect());
    WlsTimings {
        gram: phase(|t| t.gram),
        factor: phase(|t| t.factor),
        refine: phase(|t| t.refine),
        condition: phase(|t| t.condition),
        fallback: phase(|t| t.fallback),
        total: phase(|t| t.total),
    }
}

pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let mut rows = vec![];
    for &m in &settings.sizes {
        let n = 2 * m;
        let ((a_host, d_host, b_host), (a, d, b)) = wls_problem(cuda, m)?;
        let data = (&a, &d, &b);
        let mut chol = vendor::DenseCholesky::new(cuda, m)?;
        let (mut scaled, mut g_vendor) = (cuda.alloc::<f64>(m * n)?, cuda.alloc::<f64>(m * m)?);
        let (mut db, mut x_vendor) = (cuda.alloc::<f64>(n)?, cuda.alloc::<f64>(m)?);
        let mut runs: Vec<WlsTimings> = vec![];
        let mut x_ours = None;
        let (t_ours, t_vendor) = side_by_side(
            cuda,
            settings.reps,
            || {
                let mut timings = WlsTimings::default();
                x_ours = Some(ours(cuda, (m, n), data, &mut timings)?);
                runs.push(timings);
                Ok(())
            },
            || vendor_pipeline(cuda, (m, n), data, &mut chol, &mut scaled, &mut g_vendor, &mut db, &mut x_vendor),
        )?;
        if chol.info(cuda)? != 0 {
            return Err(Error::Device(format!("m = {m}: cuSOLVER dpotrf failed (info {})", chol.info(cuda)?)));
        }
        drop(scaled);
        let (x, report) = x_ours.ok_or_else(|| Error::Device("no timed run".into()))?;
        let host = |v: &CudaBuffer<f64>| -> Result<Vec<f64>> {
            let mut h = vec![0.0; m];
            cuda.download(v, &mut h)?;
            Ok(h)
        };
        let (xo, xv) = (host(&x)?, host(&x_vendor)?);
        let x_ref = reference(cuda, (m, n), (&a_host, &d_host, &b_host), &mut chol, &g_vendor, &x_vendor)?;
        let (rel_error, ours_vs_ref, vendor_vs_ref) =
            (rel_error(&xo, &xv), rel_error(&xo, &x_ref), rel_error(&xv, &x_ref));
        // Backward errors of both, with ‖G‖∞ of an FP64 G.
        let mut g = cuda.alloc::<f64>(m * m)?;
        let problem = Problem { a: View::dense(&a, m, n)?, d: View::dense(&d, n, 1)?, b: View::dense(&b, n, 1)? };
        cuda.scaled_syrk(Uplo::Lower, 1.0, problem.a, problem.d, 0.0, ViewMut::dense(&mut g, m, m)?)?;
        cuda.symmetrize(Uplo::Lower, ViewMut::dense(&mut g, m, m)?)?;
        let g_norm = cuda.norm(Norm::Inf, View::dense(&g, m, m)?)?;
        let (ours_be, vendor_be) =
            (problem.relative_residual(cuda, &x, g_norm)?, problem.relative_residual(cuda, &x_vendor, g_norm)?);
        let timings = median_phases(&runs);
        let ms = |t: std::time::Duration| t.as_secs_f64() * 1e3;
        let (mm, nn) = (m as f64, n as f64);
        println!(
            "wls m = {m}, n = {n}: ours {t_ours:.2} ms (gram {:.2}, f32 factor {:.2}, refinement {:.2} in {} steps, \
             condition estimate {:.2} (κ₁ ≈ {:.1e}), fallback {:.2}; {}), vendor {t_vendor:.2} ms, ratio {:.2}; \
             ‖x − x_FP64‖/‖x_FP64‖ = {rel_error:.2e} (target ≤ 1e-12); against a reference refined in \
             double-double: ours {ours_vs_ref:.2e}, vendor {vendor_vs_ref:.2e}; backward errors {ours_be:.2e} (ours), \
             {vendor_be:.2e} (vendor)",
            ms(timings.gram),
            ms(timings.factor),
            ms(timings.refine),
            report.iterations,
            ms(timings.condition),
            report.condition,
            ms(timings.fallback),
            report.path,
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
                "rel_error_vs_reference": ours_vs_ref,
                "vendor_rel_error_vs_reference": vendor_vs_ref,
                "gpumat_backward_error": ours_be,
                "vendor_backward_error": vendor_be,
                "path": report.path,
                "iterations": report.iterations,
                "condition_estimate": report.condition,
                "gram_ms": ms(timings.gram),
                "factor_ms": ms(timings.factor),
                "refine_ms": ms(timings.refine),
                "condition_ms": ms(timings.condition),
                "fallback_ms": ms(timings.fallback),
                "gpumat_bytes": 8 * m * n + 4 * m * m + 4 * 4 * m * SplitPlan::new(m, n, &cuda.tuning().split).kb,
                "vendor_bytes": 8 * (2 * m * n + m * m) + chol.workspace_bytes(),
            }),
        ));
    }
    Ok(rows)
}
