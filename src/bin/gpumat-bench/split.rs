//! The coprocessor split (`batch::Coprocessor`), part of `--suite batched`:
//! one batch from host memory to solutions in host memory, on the GPU
//! alone, on the CPU's threads alone and shared between them in the
//! measured ratio, FP64: LU + solve of 16 × 16 members (count 2·10⁵) and
//! tridiagonal systems of order 1024 (count 4096). Throughput is members a
//! second; the split should reach ≥ 0.9 × (CPU alone + GPU alone) and never
//! fall below the GPU alone. The split's ratio is measured by three calls
//! before the timed ones; the backward error of its solutions is the worst
//! over the batch, on the host in FP64.

use std::time::Instant;

use gpumat::batch::{Coprocessor, SplitOp, SplitSolution, TridiagonalMethod};
use gpumat::{Device, Result};
use serde_json::{Value, json};

use crate::harness::inputs::uniform;
use crate::harness::results::record;

pub fn run(reps: usize) -> Result<Vec<Value>> {
    let dev = Device::cuda()?;
    let mut rows = vec![];
    // LU of small members.
    let (n, count) = (16, 200_000);
    let (a, b) = (uniform(n * n * count, 61, -1.0..1.0), uniform(n * count, 62, -1.0..1.0));
    let lu = |co: &Coprocessor| co.solve(SplitOp::Lu, n, count, &a, &b, 1);
    let error = |x: &[f64]| dense_backward_error(&a, &b, x, n);
    rows.push(compare(&dev, "split_lu", n, count, reps, &lu, &error)?);
    // Tridiagonal systems.
    let (m, count) = (1024, 4096);
    let d: Vec<f64> = uniform(m * count, 71, -1.0..1.0).into_iter().map(|v| v.signum() * (2.5 + v.abs())).collect();
    let (dl, du, rhs) =
        (uniform(m * count, 72, -1.0..1.0), uniform(m * count, 73, -1.0..1.0), uniform(m * count, 74, -1.0..1.0));
    let tri = |co: &Coprocessor| co.solve_tridiagonal(m, count, [&dl, &d, &du, &rhs], TridiagonalMethod::NoPivoting);
    let error = |x: &[f64]| tridiagonal_backward_error([&dl, &d, &du, &rhs], x, m);
    rows.push(compare(&dev, "split_tridiagonal", m, count, reps, &tri, &error)?);
    Ok(rows)
}

type Solve<'a> = dyn Fn(&Coprocessor) -> Result<SplitSolution<f64>> + 'a;

fn compare(
    dev: &Device,
    op: &str,
    n: usize,
    count: usize,
    reps: usize,
    solve: &Solve<'_>,
    error: &dyn Fn(&[f64]) -> f64,
) -> Result<Value> {
    let sides = [Some(0.0), Some(1.0), None].map(|r| Coprocessor::new(dev.clone()).with_ratio(r));
    let [cpu, gpu, split] = sides;
    let (cpu, gpu, split) = (cpu?, gpu?, split?);
    for _ in 0..3 {
        solve(&split)?;
    }
    solve(&cpu)?;
    solve(&gpu)?;
    let mut times = [vec![], vec![], vec![]];
    let mut last = None;
    for _ in 0..reps.max(1) {
        for (k, co) in [&cpu, &gpu, &split].into_iter().enumerate() {
            let start = Instant::now();
            let sol = solve(co)?;
            times[k].push(start.elapsed().as_secs_f64() * 1e3);
            if k == 2 {
                last = Some(sol);
            }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let [t_cpu, t_gpu, t_split] = times.map(|mut v| median(&mut v));
    let sol = last.expect("at least one run");
    let rate = |ms: f64| count as f64 / (ms * 1e-3);
    let efficiency = rate(t_split) / (rate(t_cpu) + rate(t_gpu));
    println!(
        "{op} n = {n} count = {count}: CPU {t_cpu:.1} ms, GPU {t_gpu:.1} ms, split {t_split:.1} ms ({} on the GPU in {:.1} ms, {} on the CPU in {:.1} ms): \
         {efficiency:.2} of CPU + GPU, {:.2}× the GPU alone; backward error {:.1e}",
        sol.share.accelerator,
        sol.share.accelerator_time.as_secs_f64() * 1e3,
        sol.share.host,
        sol.share.host_time.as_secs_f64() * 1e3,
        t_gpu / t_split,
        error(&sol.x)
    );
    let extra = json!({
        "count": count, "vendor_routine": "gpumat on the GPU alone",
        "cpu_ms": t_cpu, "split_ms": t_split, "gpu_share": sol.share.accelerator, "cpu_share": sol.share.host,
        "efficiency_vs_sum": efficiency, "speedup_vs_gpu": t_gpu / t_split,
        "gpumat_backward_error": error(&sol.x), "failures": sol.failures.len(),
    });
    Ok(record(op, n, t_split, t_gpu, None, extra))
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
