//! Dense random LPs with a known optimum (`optim::lp::random`), `m × 4m`:
//! gpumat's interior-point method (full and RFP storage in FP64, and mixed
//! precision) against HiGHS, the fastest of its simplex, interior point
//! without crossover and PDLP (`bench/highs_lp.py`, run on the same problem
//! after gpumat's runs), on the device the suite is given: the GPU, or the
//! CPU where there is none. Each record carries both objectives' relative
//! errors against the constructed optimum, gpumat's iterations, time per
//! iteration and where it went, and, on the GPU, the FP64 rate of the
//! iterations' level-3 work (forming and factoring `A·Θ·Aᵀ`) as a fraction
//! of `dgemm`'s at the same shape. HiGHS runs only up to `highs_max_rows`
//! rows: beyond them it does not finish in minutes.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use gpumat::optim::lp::random::{KnownOptimum, random_lp};
use gpumat::optim::lp::{self, LpOptions, LpPrecision, LpSolution, LpStatus};
use gpumat::{Device, Error, Result, SymStorage};
use serde_json::{Value, json};

use crate::harness::results::{merge, record};
use crate::harness::timing::median;

/// How HiGHS is run.
pub struct Highs {
    pub max_rows: usize,
    pub threads: usize,
    pub time_limit: f64,
}

const VARIANTS: [(&str, SymStorage, LpPrecision); 3] = [
    ("full f64", SymStorage::Full, LpPrecision::F64),
    ("rfp f64", SymStorage::Rfp, LpPrecision::F64),
    ("full mixed", SymStorage::Full, LpPrecision::Mixed),
];

pub fn run(dev: &Device, sizes: &[usize], reps: usize, highs: &Highs) -> Result<Vec<Value>> {
    // Kernels compiled and libraries loaded before anything is timed.
    lp::solve(dev, random_lp(64, 256, 1)?.lp, &LpOptions::default())?;
    let mut rows = Vec::new();
    for &m in sizes {
        let n = 4 * m;
        let known = random_lp(m, n, m as u64)?;
        let gemm_tflops = if dev.is_cpu() { None } else { Some(dgemm_tflops(dev, m, n)?) };
        let mut ours = Vec::new();
        for (name, storage, precision) in VARIANTS {
            let options = LpOptions { storage, precision, ..LpOptions::default() };
            let mut times = Vec::new();
            let mut last = None;
            for _ in 0..reps.max(1) {
                let problem = known.lp.clone();
                let start = Instant::now();
                let s = lp::solve(dev, problem, &options)?;
                times.push(start.elapsed().as_secs_f64() * 1e3);
                last = Some(s);
            }
            let s = last.expect("at least one run");
            eprintln!(
                "lp {m}×{n} {name}: {} in {} iterations, {:.1} ms",
                s.status.name(),
                s.iterations,
                median(times.clone())
            );
            ours.push((name, median(times), s));
        }
        let theirs = if m <= highs.max_rows { Some(run_highs(&known, highs)?) } else { None };
        let best = theirs.as_ref().and_then(|h| fastest(h, known.objective));
        for (name, ms, s) in ours {
            let mut extra = describe(&s, m, n, ms, &known, gemm_tflops);
            extra["variant"] = json!(name);
            if let Some(h) = &theirs {
                extra["highs"] = h.clone();
                for solver in ["simplex", "ipm", "pdlp"] {
                    extra[format!("highs_{solver}_ms")] = json!(h[solver]["seconds"].as_f64().map(|s| s * 1e3));
                    extra[format!("highs_{solver}_status")] = h[solver]["status"].clone();
                    let error = h[solver]["objective"].as_f64().map(|o| relative(o, known.objective));
                    extra[format!("highs_{solver}_rel_error")] = json!(error);
                }
            }
            let (highs_ms, solver) = best.clone().unwrap_or_else(|| match &theirs {
                // None finished: the shortest time limit reached bounds the
                // ratio from below.
                Some(h) => (
                    ["simplex", "ipm", "pdlp"]
                        .iter()
                        .filter_map(|s| h[*s]["seconds"].as_f64())
                        .fold(f64::INFINITY, f64::min)
                        * 1e3,
                    "none within its time limit: the ratio is a lower bound".into(),
                ),
                None => (f64::NAN, "not run".into()),
            });
            extra["highs_best"] = json!(solver);
            if theirs.is_none() {
                extra["skipped"] = json!("HiGHS: beyond --highs-max-rows");
            }
            rows.push(record("lp_ipm", m, ms, highs_ms, None, extra));
        }
    }
    Ok(rows)
}

fn relative(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1.0)
}

/// The figures of one of gpumat's solves.
fn describe(s: &LpSolution, m: usize, n: usize, ms: f64, known: &KnownOptimum, gemm: Option<f64>) -> Value {
    let (mf, nf) = (m as f64, n as f64);
    let level3 = s.iterations as f64 * (mf * mf * nf + mf * mf * mf / 3.0);
    let tflops = level3 / (ms * 1e9);
    let t = &s.timings;
    json!({
        "cols": n,
        "status": s.status.name(),
        "iterations": s.iterations,
        "ms_per_iteration": ms / s.iterations.max(1) as f64,
        "setup_ms": t.setup * 1e3,
        "form_ms": t.form * 1e3,
        "factor_ms": t.factor * 1e3,
        "solve_ms": t.solve * 1e3,
        "objective_rel_error": if s.status == LpStatus::Optimal { relative(s.objective, known.objective) } else { f64::NAN },
        "primal_residual": s.primal_residual,
        "mixed_iterations": s.mixed_iterations,
        "refinement_steps": s.refinement_steps,
        "level3_tflops": tflops,
        "dgemm_tflops": gemm,
        "fraction_of_dgemm": gemm.map(|g| tflops / g),
    })
}

/// HiGHS's results as `bench/highs_lp.py` prints them, one process a
/// solver: HiGHS checks its time limit only now and then, so each process is
/// killed 30 s past it and recorded as such.
fn run_highs(known: &KnownOptimum, highs: &Highs) -> Result<Value> {
    let lp = &known.lp;
    let path = std::env::temp_dir().join(format!("gpumat-bench-lp-{}-{}.bin", std::process::id(), lp.m));
    let mut bytes = Vec::with_capacity(16 + 8 * (lp.a.len() + lp.m + lp.n));
    bytes.extend((lp.m as i64).to_le_bytes());
    bytes.extend((lp.n as i64).to_le_bytes());
    for v in lp.a.iter().chain(&lp.row_lower).chain(&lp.c) {
        bytes.extend(v.to_le_bytes());
    }
    std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
    let mut results = json!({"threads": highs.threads, "time_limit_s": highs.time_limit});
    for solver in ["simplex", "ipm", "pdlp"] {
        eprintln!("lp {}×{}: HiGHS {solver} ({} threads, {} s)…", lp.m, lp.n, highs.threads, highs.time_limit);
        let result = run_solver(&path, solver, highs);
        if result.is_err() {
            let _ = std::fs::remove_file(&path);
        }
        results[solver] = result?;
        eprintln!("  {}", results[solver]);
    }
    let _ = std::fs::remove_file(&path);
    Ok(results)
}

fn run_solver(path: &Path, solver: &str, highs: &Highs) -> Result<Value> {
    let script = Path::new("bench/highs_lp.py");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let kill_after = highs.time_limit + 30.0;
    let start = Instant::now();
    let out = Command::new("timeout")
        .arg(kill_after.to_string())
        .arg(&python)
        .arg(script)
        .arg(path)
        .args(["--solvers", solver, "--threads", &highs.threads.to_string()])
        .args(["--time-limit", &highs.time_limit.to_string()])
        .output()
        .map_err(|e| Error::io(script, e))?;
    if out.status.code() == Some(124) {
        return Ok(json!({"seconds": start.elapsed().as_secs_f64(), "status": "killed past its time limit"}));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("failed").to_string();
        return Err(Error::InvalidArgument(format!("{python} {}: {why}", script.display())));
    }
    let last = text.lines().last().unwrap_or_default();
    let parsed: Value =
        serde_json::from_str(last).map_err(|e| Error::InvalidArgument(format!("HiGHS's output '{last}': {e}")))?;
    Ok(merge(parsed[solver].clone(), json!({"version": parsed["version"]})))
}

/// The fastest HiGHS solver that reached an optimum, whatever its
/// accuracy (the comparison least kind to gpumat), in ms, and its name
/// with its objective's relative error.
fn fastest(h: &Value, optimum: f64) -> Option<(f64, String)> {
    ["simplex", "ipm", "pdlp"]
        .iter()
        .filter(|s| h[**s]["status"].as_str() == Some("Optimal"))
        .filter_map(|s| {
            let error = relative(h[*s]["objective"].as_f64()?, optimum);
            Some((h[*s]["seconds"].as_f64()? * 1e3, format!("{s} (objective off by {error:.1e})")))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

/// `dgemm`'s rate at the shape of forming `A·Θ·Aᵀ` (`m × n` times its
/// transpose), in TFLOP/s: the FP64 ceiling of the iterations.
fn dgemm_tflops(dev: &Device, m: usize, n: usize) -> Result<f64> {
    let a = dev.from_col_major(m, n, &vec![1.0f64; m * n])?;
    let at = a.transpose()?;
    a.matmul(&at)?;
    dev.synchronize()?;
    let mut times = Vec::new();
    for _ in 0..3 {
        let start = Instant::now();
        a.matmul(&at)?;
        dev.synchronize()?;
        times.push(start.elapsed().as_secs_f64());
    }
    Ok(2.0 * (m * m * n) as f64 / median(times) / 1e12)
}
