//! `gpumat solve --grid PxQ` or `--devices LIST`: one factorization across
//! several GPUs (`gpumat::dist`, a rank per GPU joined by NCCL), or across
//! simulated ranks on the CPU; the same summary and exit codes as a solve on
//! one device.

use std::time::Instant;

use faer::Mat;
use gpumat::backend::Backend;
use gpumat::dist::{self, Cluster, Communicator, DistMatrix, DistParams, Grid};
use gpumat::io::MmWriteOptions;
use gpumat::{Device, Error, Scalar};

use crate::exit::{Failure, Result};
use crate::input::{read_host, write_host};
use crate::solve::{Args, Method, Refinement, SolvePrecision, Storage, warn_conditioning};

/// `PxQ` as a grid.
pub fn parse_grid(s: &str) -> std::result::Result<Grid, String> {
    let (p, q) = s.split_once(['x', '×']).ok_or_else(|| format!("{s:?} is not PxQ (e.g. 2x2)"))?;
    match (p.trim().parse(), q.trim().parse()) {
        (Ok(p), Ok(q)) => Grid::new(p, q).map_err(|e| e.to_string()),
        _ => Err(format!("{s:?} is not PxQ (e.g. 2x2)")),
    }
}

/// What a distributed solve gives the summary.
struct Outcome {
    x: Mat<f64>,
    rcond: f64,
    method: &'static str,
    fallback: Option<String>,
}

pub fn run(dev: &Device, args: &Args, grid: Option<Grid>, devices: Option<&[usize]>) -> Result<()> {
    if args.method == Method::Ldlt || args.pivot.is_some() {
        return Err(Failure::Usage("--grid and --devices factor by --method auto, cholesky or lu".into()));
    }
    if args.precision != SolvePrecision::F64 || args.factor_precision.is_some() || args.refinement != Refinement::Auto {
        return Err(Failure::Usage("--grid and --devices solve in f64 only".into()));
    }
    let mm = read_host(&args.a)?;
    let n = mm.rows;
    if mm.cols != n {
        return Err(Error::dims("solve", format!("A is {}×{}, not square", mm.rows, mm.cols)).into());
    }
    let rhs = read_host(&args.b)?;
    if rhs.rows != n {
        return Err(Error::dims("solve", format!("A is {n}×{n}, B has {} rows", rhs.rows)).into());
    }
    let a = Mat::from_fn(n, n, |i, j| mm.data[i + j * n]);
    let b = Mat::from_fn(n, rhs.cols, |i, j| rhs.data[i + j * n]);
    drop((mm, rhs));
    let start = Instant::now();
    let (outcome, on) = if dev.is_cpu() {
        if devices.is_some() {
            return Err(Failure::Usage("--devices names GPUs; on the CPU use --grid alone".into()));
        }
        let grid = grid.unwrap_or(Grid { p: 1, q: 1 });
        let cluster = Cluster::cpu(grid);
        (solve_on(&cluster, args, &a, &b)?, format!("{} simulated ranks on the CPU", grid.size()))
    } else {
        let all = match devices {
            Some(d) => d.to_vec(),
            None => dist::devices_from_env()?,
        };
        let grid = grid.unwrap_or(Grid::row_of(all.len())?);
        if all.len() < grid.size() {
            return Err(Failure::Usage(format!(
                "a {} × {} grid needs {} GPUs; {} given",
                grid.p,
                grid.q,
                grid.size(),
                all.len()
            )));
        }
        let cluster = Cluster::cuda(grid, &all[..grid.size()], dev.tuning())?;
        (solve_on(&cluster, args, &a, &b)?, format!("{} GPUs ({})", grid.size(), cluster.describe()))
    };
    let elapsed = start.elapsed().as_secs_f64() * 1e3;
    let u = f64::unit_roundoff();
    if outcome.rcond < u && !args.allow_ill_conditioned {
        return Err(Error::IllConditioned { rcond: outcome.rcond, unit_roundoff: u, precision: "f64" }.into());
    }
    let k = b.ncols();
    let x: Vec<f64> = (0..k).flat_map(|j| (0..n).map(move |i| (i, j))).map(|(i, j)| outcome.x[(i, j)]).collect();
    write_host(n, k, &x, &MmWriteOptions::default(), args.output.as_ref())?;
    if let Some(why) = &outcome.fallback {
        eprintln!("solve: {why}; solved with LU");
    }
    eprintln!(
        "solve: method {} (distributed), storage {}, precision f64, {n}×{n} with {k} right-hand side{} on {on} in \
         {elapsed:.3} ms; condition estimate {:.2e}, backward error {:.2e}",
        outcome.method,
        if args.storage == Storage::Rfp && outcome.method == "cholesky" { "lower blocks" } else { "full" },
        if k == 1 { "" } else { "s" },
        1.0 / outcome.rcond,
        backward_error(&a, &outcome.x, &b),
    );
    warn_conditioning(outcome.rcond, u);
    Ok(())
}

/// Factors `a` on the cluster by the method of `args` and solves.
fn solve_on<B: Backend, C: Communicator<B>>(
    cluster: &Cluster<B, C>,
    args: &Args,
    a: &Mat<f64>,
    b: &Mat<f64>,
) -> Result<Outcome> {
    let n = a.nrows();
    let p = cluster.grid().p.max(cluster.grid().q);
    // Blocks of 1024 (Cholesky) or 512 (LU) at scale, as measured; smaller
    // ones so that a small matrix still spreads over the ranks.
    let nb = |largest: usize| n.div_ceil(4 * p).next_power_of_two().clamp(16, largest);
    let asymmetric = first_asymmetry(a);
    let cholesky = match args.method {
        Method::Cholesky => match asymmetric {
            Some((row, col)) => return Err(Error::NotSymmetric { row: row + 1, col: col + 1 }.into()),
            None => true,
        },
        Method::Auto => asymmetric.is_none(),
        _ => false,
    };
    let params = DistParams::default();
    let mut fallback = None;
    if cholesky {
        let mut f = match args.storage {
            Storage::Rfp => DistMatrix::symmetric_from_host(cluster, a.as_ref(), nb(1024))?,
            Storage::Full => DistMatrix::from_host(cluster, a.as_ref(), nb(1024))?,
        };
        let anorm = f.norm_one(cluster)?;
        match dist::cholesky(cluster, &mut f, params) {
            Ok(()) => {
                let rcond = dist::cholesky_rcond(cluster, &f, anorm)?;
                let x = dist::cholesky_solve(cluster, &f, b.as_ref())?;
                return Ok(Outcome { x, rcond, method: "cholesky", fallback: None });
            }
            Err(Error::NotPositiveDefinite { column }) if args.method == Method::Auto => {
                fallback = Some(format!("A is not positive definite (pivot {column})"));
            }
            Err(e) => return Err(e.into()),
        }
    }
    if args.storage == Storage::Rfp {
        return Err(Failure::Usage("--storage rfp holds the lower blocks of an SPD matrix for Cholesky only".into()));
    }
    let mut f = DistMatrix::from_host(cluster, a.as_ref(), nb(512))?;
    let anorm = f.norm_one(cluster)?;
    let ipiv = dist::lu(cluster, &mut f, params)?;
    let rcond = dist::lu_rcond(cluster, &f, &ipiv, anorm)?;
    let x = dist::lu_solve(cluster, &f, &ipiv, b.as_ref())?;
    Ok(Outcome { x, rcond, method: "lu", fallback })
}

/// The first `(i, j)`, `i > j`, with `a[i, j] ≠ a[j, i]`.
fn first_asymmetry(a: &Mat<f64>) -> Option<(usize, usize)> {
    (0..a.ncols()).flat_map(|j| (j + 1..a.nrows()).map(move |i| (i, j))).find(|&(i, j)| a[(i, j)] != a[(j, i)])
}

/// `‖B − A·X‖∞ / (‖A‖∞·‖X‖∞ + ‖B‖∞)`, on the host.
fn backward_error(a: &Mat<f64>, x: &Mat<f64>, b: &Mat<f64>) -> f64 {
    let r = b - a * x;
    let inf =
        |m: &Mat<f64>| (0..m.nrows()).map(|i| (0..m.ncols()).map(|j| m[(i, j)].abs()).sum::<f64>()).fold(0.0, f64::max);
    inf(&r) / (inf(a) * inf(x) + inf(b))
}
