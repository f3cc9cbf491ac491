//! `--suite gram`: `A·D²·Aᵀ` for `A` of `m × 2m` (each size `m`), `A` and
//! `D²` uniform in [0, 1] as in Jung & O'Leary's Table 1, four routes on the
//! same inputs, interleaved, median of `--reps`:
//!
//! - gpumat `scaled_syrk` into full storage (lower triangle);
//! - gpumat in RFP storage (`scaled_gram_to_rfp`);
//! - the cuBLAS route: `dgmm` into a full scaled copy of `A`, then `dsyrk`
//!   (both timed) — the vendor time of the ratio;
//! - the full `dgemm` route: the same copy, then `dgemm` (both triangles).
//!
//! Useful work is `m²·n` flops (one triangle). Also reported: the peak
//! device memory of ours beyond `A`, `d` and the result, as a fraction of
//! `A`'s bytes, and the largest entry of `|G − G_vendor|` over the largest
//! entry of `G` on the lower triangle, against its bound `2·(n + 4)·u`
//! (each entry's error is at most `γ_{n+3}·(|A|·D²·|A|ᵀ)ᵢⱼ`, and
//! `(|A|·D²·|A|ᵀ)ᵢⱼ ≤ max Gᵢᵢ` by Cauchy–Schwarz, for each of the two).
//! Then a sweep of block widths (256, 512, 1024) and one or two queues, each
//! interleaved with the vendor route again, to choose the default plan.

use gpumat::Result;
use gpumat::backend::cuda::scaled_gram::GramPlan;
use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::tuning::GramTuning;
use gpumat::backend::{Backend, BufferMut, Norm, Tuning, View, ViewMut};
use gpumat::layout::Uplo;
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::errors::rel_diff;
use crate::harness::inputs::uniform;
use crate::harness::results::{merge, record};
use crate::harness::timing::interleaved;

/// Block widths and queue counts tried by [`sweep`].
const SWEEP: [(usize, usize); 6] = [(256, 1), (256, 2), (512, 1), (512, 2), (1024, 1), (1024, 2)];

/// Full storage under each plan of [`SWEEP`] (set through the
/// `GPUMAT_SCALED_GRAM_*` variables), each interleaved with the vendor
/// route, so one run says which block width to make the default.
fn sweep(
    cuda: &Cuda,
    reps: usize,
    (m, n): (usize, usize),
    (a, d): (&CudaBuffer<f64>, &CudaBuffer<f64>),
    full: &mut CudaBuffer<f64>,
) -> Result<Vec<Value>> {
    let saved = cuda.tuning();
    let (mut w, mut c) = (cuda.alloc::<f64>(m * n)?, cuda.alloc::<f64>(m * m)?);
    let mut rows = vec![];
    let mut run = || -> Result<()> {
        for (nb, queues) in SWEEP.into_iter().filter(|&(nb, _)| nb < m) {
            let gram = GramTuning { nb: Some(nb), streams: Some(queues), ..saved.gram };
            cuda.set_tuning(Tuning { gram, ..saved });
            let (av, dv) = (View::dense(a, m, n)?, View::dense(d, n, 1)?);
            let mut ours = || cuda.scaled_syrk(Uplo::Lower, 1.0, av, dv, 0.0, ViewMut::dense(full, m, m)?);
            let mut theirs = || vendor::scaled_gram_syrk(cuda, (m, n), a, d, &mut w, &mut c);
            let t = interleaved(cuda, reps, &mut [&mut ours, &mut theirs])?;
            let plan = GramPlan::new(m, n, &gram);
            rows.push(record(
                &format!("scaled_gram full {m}×{n} nb={nb} queues={queues}"),
                m,
                t[0],
                t[1],
                Some((m as f64) * (m as f64) * (n as f64)),
                json!({"block_width": plan.nb, "queues": plan.streams, "workspace_bytes": plan.workspace_bytes(8),
                       "extra_memory_over_a": plan.workspace_bytes(8) as f64 / (8 * m * n) as f64}),
            ));
        }
        Ok(())
    };
    let result = run();
    cuda.set_tuning(saved);
    result.map(|()| rows)
}

pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let mut rows = vec![];
    for &m in &settings.sizes {
        let n = 2 * m;
        let a = cuda.upload(&uniform(m * n, 21, 0.0..1.0))?;
        let d = cuda.upload(&uniform(n, 22, 0.0..1.0).into_iter().map(f64::sqrt).collect::<Vec<_>>())?;
        let rfp = gpumat::api::packed_layout(m);
        let (mut full, mut arf) = (cuda.alloc::<f64>(m * m)?, cuda.alloc::<f64>(rfp.len())?);
        let (mut c_syrk, mut c_gemm) = (cuda.alloc::<f64>(m * m)?, cuda.alloc::<f64>(m * m)?);
        let mut w = cuda.alloc::<f64>(m * n)?;
        let av = View::dense(&a, m, n)?;
        let dv = View::dense(&d, n, 1)?;

        let mut ours_full = || cuda.scaled_syrk(Uplo::Lower, 1.0, av, dv, 0.0, ViewMut::dense(&mut full, m, m)?);
        let mut ours_rfp = || gpumat::api::scaled_gram_to_rfp(cuda, rfp, av, dv, &BufferMut::new(&mut arf));
        // `w` is shared by the two vendor routes, which run one after the other.
        let w_cell = std::cell::RefCell::new(&mut w);
        let mut vendor_syrk = || vendor::scaled_gram_syrk(cuda, (m, n), &a, &d, &mut w_cell.borrow_mut(), &mut c_syrk);
        let mut vendor_gemm = || vendor::scaled_gram_gemm(cuda, (m, n), &a, &d, &mut w_cell.borrow_mut(), &mut c_gemm);
        let t =
            interleaved(cuda, settings.reps, &mut [&mut ours_full, &mut ours_rfp, &mut vendor_syrk, &mut vendor_gemm])?;
        let (t_full, t_rfp, t_syrk, t_gemm) = (t[0], t[1], t[2], t[3]);

        // Device memory beyond A, d and the result, after the warm runs.
        let (_, peak_full) =
            cuda.peak_memory(|| cuda.scaled_syrk(Uplo::Lower, 1.0, av, dv, 0.0, ViewMut::dense(&mut full, m, m)?))?;
        let (_, peak_rfp) =
            cuda.peak_memory(|| gpumat::api::scaled_gram_to_rfp(cuda, rfp, av, dv, &BufferMut::new(&mut arf)))?;
        let a_bytes = (8 * m * n) as f64;

        let mut unpacked = cuda.alloc::<f64>(m * m)?;
        cuda.rfp_to_full(View::dense(&arf, rfp.len(), 1)?, rfp, ViewMut::dense(&mut unpacked, m, m)?)?;
        let bound = 2.0 * (n + 4) as f64 * f64::EPSILON / 2.0;
        // The largest entry of the difference from cuBLAS over the largest of G, lower triangles.
        let max_rel_diff = |x| rel_diff(cuda, m, x, &c_syrk, Some(Uplo::Lower), Norm::Max);
        let diff_full = max_rel_diff(&full)?;
        let diff_rfp = max_rel_diff(&unpacked)?;
        let diff_gemm = max_rel_diff(&c_gemm)?;
        let within_bound = diff_full <= bound && diff_rfp <= bound;
        if !within_bound {
            eprintln!(
                "WARNING: scaled_gram {m}×{n}: ours differs from cuBLAS by {diff_full:.2e} (full), {diff_rfp:.2e} (RFP), bound {bound:.2e}"
            );
        }

        let plan = GramPlan::new(m, n, &cuda.tuning().gram);
        let flops = (m as f64) * (m as f64) * (n as f64);
        let common = json!({
            "cols": n, "block_width": plan.nb, "depth_chunk": plan.kc, "queues": plan.streams,
            "workspace_bytes": plan.workspace_bytes(8), "diff_bound": bound, "within_bound": within_bound,
            "vendor_gemm_route_ms": t_gemm, "gemm_route_ratio": t_gemm / t_full,
            "gemm_route_tflops": flops / (t_gemm * 1e9), "gemm_route_max_rel_diff": diff_gemm,
        });
        let with = |extra: Value| merge(common.clone(), extra);
        rows.push(record(
            &format!("scaled_gram full {m}×{n}"),
            m,
            t_full,
            t_syrk,
            Some(flops),
            with(json!({
                "extra_memory_over_a": peak_full as f64 / a_bytes, "gpumat_bytes": peak_full,
                "max_rel_diff": diff_full,
            })),
        ));
        rows.push(record(
            &format!("scaled_gram rfp {m}×{n}"),
            m,
            t_rfp,
            t_syrk,
            Some(flops),
            with(json!({
                "extra_memory_over_a": peak_rfp as f64 / a_bytes, "gpumat_bytes": peak_rfp,
                "max_rel_diff": diff_rfp, "rfp_time_over_full": t_rfp / t_full,
            })),
        ));
        rows.extend(sweep(cuda, settings.reps, (m, n), (&a, &d), &mut full)?);
        // The dgemm route against the dgmm + dsyrk route, for scale.
        rows.push(record(
            &format!("dgemm route {m}×{n}"),
            m,
            t_gemm,
            t_syrk,
            Some(flops),
            json!({"max_rel_diff": diff_gemm, "vendor_bytes": a_bytes}),
        ));
    }
    Ok(rows)
}
