//! The coprocessor split (`batch::Coprocessor`), part of `--suite batched`:
//! one batch from host memory to solutions in host memory, on the GPU
//! alone, on the CPU's threads alone and shared between them in the
//! measured ratio, FP64: LU + solve of 16 × 16 members (count 2·10⁵) and
//! tridiagonal systems of order 1024 (count 4096). Each runs twice: from
//! and into pageable memory (`Vec`s), and from and into page-locked
//! `HostArray`s, which the GPU's copy engines reach without the CPU's
//! help. Throughput is members a second; the split should reach
//! ≥ 0.9 × (CPU alone + GPU alone) and never fall below the GPU alone. The
//! split's ratio is measured by five calls before the timed ones; the
//! backward error of its solutions is the worst over the batch, on the host
//! in FP64.

use std::ops::DerefMut;
use std::time::Instant;

use gpumat::batch::{Coprocessor, SplitOp, SplitReport, TridiagonalMethod};
use gpumat::{Device, Result};
use serde_json::{Value, json};

use crate::harness::inputs::uniform;
use crate::harness::results::record;

pub fn run(reps: usize) -> Result<Vec<Value>> {
    let dev = Device::cuda()?;
    let mut rows = vec![];
    for page_locked in [false, true] {
        // Host memory of the kind this pass measures.
        let host = |v: Vec<f64>| -> Result<Box<dyn DerefMut<Target = [f64]>>> {
            Ok(if page_locked { Box::new(dev.host_array_from(&v)?) } else { Box::new(v) })
        };
        let memory = if page_locked { "page-locked" } else { "pageable" };
        // LU of small members.
        let (n, count) = (16, 200_000);
        let (a, b) = (host(uniform(n * n * count, 61, -1.0..1.0))?, host(uniform(n * count, 62, -1.0..1.0))?);
        let mut x = host(vec![0.0; n * count])?;
        let lu = |co: &Coprocessor, x: &mut [f64]| co.solve_into(SplitOp::Lu, n, count, &a, &b, 1, x);
        let error = |x: &[f64]| dense_backward_error(&a, &b, x, n);
        rows.push(compare(&dev, ("split_lu", memory), n, count, reps, &lu, &mut x, &error)?);
        // Tridiagonal systems.
        let (m, count) = (1024, 4096);
        let d = uniform(m * count, 71, -1.0..1.0).into_iter().map(|v| v.signum() * (2.5 + v.abs())).collect();
        let [dl, d, du, rhs] = [
            uniform(m * count, 72, -1.0..1.0),
            d,
            uniform(m * count, 73, -1.0..1.0),
            uniform(m * count, 74, -1.0..1.0),
        ]
        .map(host);
        let (dl, d, du, rhs) = (dl?, d?, du?, rhs?);
        let mut x = host(vec![0.0; m * count])?;
        let systems = [&dl[..], &d[..], &du[..], &rhs[..]];
        let tri = |co: &Coprocessor, x: &mut [f64]| {
            co.solve_tridiagonal_into(m, count, systems, TridiagonalMethod::NoPivoting, x)
        };
        let error = |x: &[f64]| tridiagonal_backward_error(systems, x, m);
        rows.push(compare(&dev, ("split_tridiagonal", memory), m, count, reps, &tri, &mut x, &error)?);
    }
    Ok(rows)
}

type Solve<'a> = dyn Fn(&Coprocessor, &mut [f64]) -> Result<SplitReport> + 'a;

#[allow(clippy::too_many_arguments)]
fn compare(
    dev: &Device,
    (op, memory): (&str, &str),
    n: usize,
    count: usize,
    reps: usize,
    solve: &Solve<'_>,
    x: &mut [f64],
    error: &dyn Fn(&[f64]) -> f64,
) -> Result<Value> {
    let sides = [Some(0.0), Some(1.0), None].map(|r| Coprocessor::new(dev.clone()).with_ratio(r));
    let [cpu, gpu, split] = sides;
    let (cpu, gpu, split) = (cpu?, gpu?, split?);
    for _ in 0..5 {
        solve(&split, x)?;
    }
    solve(&cpu, x)?;
    solve(&gpu, x)?;
    let mut times = [vec![], vec![], vec![]];
    let mut last = None;
    for _ in 0..reps.max(1) {
        for (k, co) in [&cpu, &gpu, &split].into_iter().enumerate() {
            let start = Instant::now();
            let report = solve(co, x)?;
            times[k].push(start.elapsed().as_secs_f64() * 1e3);
            if k == 2 {
                last = Some(report);
            }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let spread = times[2].iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &t| (lo.min(t), hi.max(t)));
    let [t_cpu, t_gpu, t_split] = times.map(|mut v| median(&mut v));
    let report = last.expect("at least one run");
    let share = report.share;
    let rate = |ms: f64| count as f64 / (ms * 1e-3);
    let efficiency = rate(t_split) / (rate(t_cpu) + rate(t_gpu));
    let backward_error = error(x);
    println!(
        "{op} ({memory}) n = {n} count = {count}: CPU {t_cpu:.1} ms, GPU {t_gpu:.1} ms, split {t_split:.1} ms \
         (from {:.1} to {:.1}; {} on the GPU in {:.1} ms, {} on the CPU in {:.1} ms; measured ratio {:.3}): {efficiency:.2} of CPU + GPU, {:.2}× the GPU alone; \
         backward error {backward_error:.1e}",
        spread.0,
        spread.1,
        share.accelerator,
        share.accelerator_time.as_secs_f64() * 1e3,
        share.host,
        share.host_time.as_secs_f64() * 1e3,
        share.ratio,
        t_gpu / t_split,
    );
    let extra = json!({
        "count": count, "host_memory": memory, "vendor_routine": "gpumat on the GPU alone",
        "cpu_ms": t_cpu, "split_ms": t_split, "gpu_share": share.accelerator, "cpu_share": share.host,
        "efficiency_vs_sum": efficiency, "speedup_vs_gpu": t_gpu / t_split,
        "gpumat_backward_error": backward_error, "failures": report.failures.len(),
    });
    sweep(dev, solve, x, share.ratio)?;
    let name = if memory == "page-locked" { format!("{op}_page_locked") } else { op.to_string() };
    Ok(record(&name, n, t_split, t_gpu, None, extra))
}

/// The split at pinned ratios around the measured one `r`, median of 5
/// each, with both sides' times: where the balance lies, and whether the
/// measured policy found it.
fn sweep(dev: &Device, solve: &Solve<'_>, x: &mut [f64], r: f64) -> Result<()> {
    for offset in [-0.08, -0.04, -0.02, 0.0, 0.02, 0.04] {
        let ratio = (r + offset).clamp(0.0, 1.0);
        let co = Coprocessor::new(dev.clone()).with_ratio(Some(ratio))?;
        let mut runs = (0..5)
            .map(|_| {
                let start = Instant::now();
                let share = solve(&co, x)?.share;
                Ok((start.elapsed().as_secs_f64() * 1e3, share))
            })
            .collect::<Result<Vec<_>>>()?;
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (ms, share) = runs[2];
        println!(
            "  pinned ratio {ratio:.3}: {ms:.2} ms (GPU {:.2} ms, CPU {:.2} ms)",
            share.accelerator_time.as_secs_f64() * 1e3,
            share.host_time.as_secs_f64() * 1e3
        );
    }
    Ok(())
}

fn dense_backward_error(a: &[f64], b: &[f64], x: &[f64], n: usize) -> f64 {
    let mut worst = 0.0f64;
    for s in 0..b.len() / n {
        let (a, b, x) = (&a[s * n * n..][..n * n], &b[s * n..][..n], &x[s * n..][..n]);
        let (mut r, mut na, mut nx, mut nb) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for i in 0..n {
            let ax: f64 = (0..n).map(|j| a[i + j * n] * x[j]).sum();
            r = r.max((ax - b[i]).abs());
            na = na.max((0..n).map(|j| a[i + j * n].abs()).sum());
            nx = nx.max(x[i].abs());
            nb = nb.max(b[i].abs());
        }
        worst = worst.max(r / (na * nx + nb));
    }
    worst
}

fn tridiagonal_backward_error([dl, d, du, b]: [&[f64]; 4], x: &[f64], m: usize) -> f64 {
    let mut worst = 0.0f64;
    for s in 0..b.len() / m {
        let (mut r, mut t, mut xn, mut bn) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for i in 0..m {
            let k = s * m + i;
            let lo = if i > 0 { dl[k] } else { 0.0 };
            let up = if i + 1 < m { du[k] } else { 0.0 };
            let tx =
                d[k] * x[k] + if i > 0 { lo * x[k - 1] } else { 0.0 } + if i + 1 < m { up * x[k + 1] } else { 0.0 };
            r = r.max((tx - b[k]).abs());
            t = t.max(lo.abs() + d[k].abs() + up.abs());
            xn = xn.max(x[k].abs());
            bn = bn.max(b[k].abs());
        }
        worst = worst.max(r / (t * xn + bn));
    }
    worst
}
