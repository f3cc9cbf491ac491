//! `gpumat wls-table`: Jung and O'Leary's (2008) Tables 1 and 2 (randomly generated
//! weighted least squares, `n = 2m`) on the current device: the error of
//! the first f32 solve and of the refined solution against an FP64 solve,
//! the refinement steps, and the times of the mixed-precision and the FP64
//! paths.

use std::time::Duration;

use gpumat::solve::wls_problem::{self, rel_error};
use gpumat::{Device, Matrix, Precision, Result, Stopping, WlsParams, WlsSolution, wls_with};

use crate::stdout::outln;
use crate::values::{positive_count, positive_number};

#[derive(clap::Args)]
pub struct Args {
    /// Table 2: D²ᵢᵢ = 10^(−4+8i/(n−1)) instead of uniform in [0, 1].
    #[arg(long)]
    ill_conditioned: bool,
    /// The numbers of unknowns m (n = 2m observations each).
    #[arg(long, value_delimiter = ',', default_values_t = [512, 1024, 1536, 2048], value_parser = unknowns)]
    sizes: Vec<usize>,
    /// Seed of the random generator (the same seed gives the same problems).
    #[arg(long, default_value_t = 2008)]
    seed: u64,
    /// Jung and O'Leary's stopping test as printed, ‖r‖₂/‖x‖₂ ≤ EPS (the paper used
    /// 1e-8); by default the scale-invariant test of LAPACK's dsposv.
    #[arg(long, value_name = "EPS", value_parser = positive_number)]
    tolerance: Option<f64>,
    /// GMRES applies the f32 factor through its inverse, formed in FP64,
    /// for m up to this (0: by triangular solves); by default the device's
    /// choice.
    #[arg(long, value_name = "M")]
    inverse_up_to: Option<usize>,
}

/// A number of unknowns whose problem has a size: `2m` and the `m × 2m`
/// entries of A do not overflow (a usage error, not an abort).
fn unknowns(s: &str) -> std::result::Result<usize, String> {
    let m = positive_count(s)?;
    wls_problem::dimensions(m).map_err(|e| e.to_string())?;
    Ok(m)
}

fn ms(d: Duration) -> f64 {
    1e3 * d.as_secs_f64()
}

struct Uploaded {
    a: Matrix<f64>,
    b: Matrix<f64>,
    d: Matrix<f64>,
}

fn upload(dev: &Device, seed: u64, m: usize, ill: bool) -> Result<Uploaded> {
    let (a, d, b) = wls_problem::random(seed, m, ill)?;
    let n = a.len() / m;
    Ok(Uploaded {
        a: dev.from_col_major(m, n, &a)?,
        b: dev.from_col_major(n, 1, &b)?,
        d: dev.from_col_major(n, 1, &d)?,
    })
}

fn solve(p: &Uploaded, params: WlsParams) -> Result<WlsSolution> {
    wls_with(&p.a, &p.b, Some(&p.d), params)
}

pub fn run(dev: &Device, args: &Args) -> Result<()> {
    // Every size is checked before the first is solved: a size too large
    // for the machine fails at once, not after the smaller ones.
    for &m in &args.sizes {
        wls_problem::fits(m)?;
    }
    let stopping = args.tolerance.map_or(Stopping::Backward, Stopping::Absolute);
    let mixed = WlsParams { stopping, inverse_up_to: args.inverse_up_to, ..WlsParams::default() };
    let fp64 = WlsParams { precision: Precision::F64, ..WlsParams::default() };
    let table =
        if args.ill_conditioned { "Table 2 (D²ᵢᵢ = 10^(−4+8i/(n−1)))" } else { "Table 1 (D² uniform)" };
    outln!("{table}: A, b uniform in [0, 1], n = 2m, seed {}, on {}", args.seed, dev.short_name())?;
    outln!("errors are ‖x − x_FP64‖₂/‖x_FP64‖₂ against the FP64 solve on the same device; times in milliseconds:")?;
    outln!(
        "mixed: the whole solve, cond overlapping refine (+ fallback); fp64: the same with G and its Cholesky in FP64"
    )?;
    outln!(
        "{:>6} {:>9} {:>10} {:>10} {:>5} {:>5} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7}",
        "m",
        "kappa1",
        "err_x0",
        "err_ref",
        "iter",
        "gmres",
        "path",
        "gram",
        "factor32",
        "refine",
        "cond",
        "mixed",
        "fp64",
        "speedup"
    )?;
    for &m in &args.sizes {
        let p = upload(dev, args.seed, m, args.ill_conditioned)?;
        // Kernels compile and libraries load on first use, cuBLAS's kernels
        // one shape at a time (each size takes its own), and a factorization
        // met again at the same memory runs call by call `PLAIN_RUNS` times
        // and is then recorded as a graph, a capture that costs milliseconds:
        // each size is solved that many times and once more untimed, so that
        // a row times the solves themselves, replayed, as a program that
        // solves many such problems sees them.
        for _ in 0..=gpumat::backend::cuda::PLAIN_RUNS {
            solve(&p, mixed)?;
            solve(&p, fp64)?;
        }
        let ours = solve(&p, mixed)?;
        let reference = solve(&p, fp64)?;
        let x_ref = reference.x.to_host()?;
        // x₀ of the f32 factor: only on the refined path (a fallback's x₀
        // comes from its own factor).
        let err_first = match &ours.first_solve {
            Some(x0) if ours.path.name() == "refined" => rel_error(&x0.to_host()?, &x_ref),
            _ => f64::NAN,
        };
        let err = rel_error(&ours.x.to_host()?, &x_ref);
        let t = ours.timings;
        let (total, fp64_total) = (t.total, reference.timings.total);
        outln!(
            "{m:>6} {:>9.2e} {err_first:>10.2e} {err:>10.2e} {:>5} {:>5} {:>7} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>7.2}",
            ours.condition,
            ours.iterations,
            ours.gmres_iterations,
            ours.path.name(),
            ms(t.gram),
            ms(t.factor),
            ms(t.refine),
            ms(t.condition),
            ms(total),
            ms(fp64_total),
            ms(fp64_total) / ms(total),
        )?;
        if ours.path.name() != "refined" {
            outln!("       m = {m}: {}", ours.path)?;
        }
    }
    Ok(())
}
