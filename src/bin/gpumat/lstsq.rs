//! `gpumat lstsq A.mtx b.mtx [--weights d.mtx]`: min ‖diag(d)·(b − A·x)‖₂;
//! for `A` with fewer rows than columns, the `x` of least norm with
//! `A·x = b`.

use std::path::PathBuf;
use std::time::Instant;

use gpumat::io::MatrixMarket;
use gpumat::{Device, Error, Matrix, Result, Scalar};

use crate::input::{read_host, write_matrix};
use crate::solve::Precision;

#[derive(clap::Args)]
pub struct Args {
    /// The design matrix A (Matrix Market): one row per observation, one
    /// column per unknown.
    a: PathBuf,
    /// The observations b (Matrix Market vector, one entry per row of A).
    b: PathBuf,
    /// Weights d (Matrix Market vector, ≥ 0): dᵢ multiplies the residual of
    /// observation i (1/σᵢ for measurement errors σᵢ).
    #[arg(long, value_name = "D.mtx")]
    weights: Option<PathBuf>,
    /// Where to write x (Matrix Market array); stdout when absent.
    #[arg(short, long, value_name = "X.mtx")]
    output: Option<PathBuf>,
    /// Precision of the QR factorization (refinement residuals are always
    /// in double-double).
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    precision: Precision,
}

/// A Matrix Market vector (one row or one column) of `len` entries.
pub fn vector(mm: &MatrixMarket, path: &std::path::Path, what: &str, len: usize) -> Result<Vec<f64>> {
    if mm.rows != 1 && mm.cols != 1 {
        return Err(Error::dims(
            "lstsq",
            format!("{}: {what} must be a vector, is {}×{}", path.display(), mm.rows, mm.cols),
        ));
    }
    if mm.data.len() != len {
        return Err(Error::dims(
            "lstsq",
            format!("{}: A has {len} rows (observations) but {what} has {} entries", path.display(), mm.data.len()),
        ));
    }
    Ok(mm.data.clone())
}

/// `data` rounded to `T` as an `r × c` matrix on `dev`. It takes the host
/// copy and frees it once uploaded; for `f64` the rounding reuses its
/// buffer, so the input is never held twice on the host beyond the upload.
fn upload<T: Scalar>(dev: &Device, data: Vec<f64>, r: usize, c: usize) -> Result<Matrix<T>> {
    let data: Vec<T> = data.into_iter().map(T::from_f64).collect();
    dev.from_col_major(r, c, &data)
}

/// Solves in `T` on `dev`; the solution in `f64`, the condition estimate,
/// the residual norm and the refinement steps.
pub fn solve_in<T: Scalar>(
    dev: &Device,
    a: &[f64],
    (m, n): (usize, usize),
    b: &[f64],
    w: Option<&[f64]>,
) -> Result<gpumat::LstsqSolution<T>> {
    solve_owned(dev, upload(dev, a.to_vec(), m, n)?, b, w)
}

/// Solves with `A` already on `dev`.
fn solve_owned<T: Scalar>(
    dev: &Device,
    a: Matrix<T>,
    b: &[f64],
    w: Option<&[f64]>,
) -> Result<gpumat::LstsqSolution<T>> {
    let m = a.rows();
    let w = w.map(|w| upload(dev, w.to_vec(), m, 1)).transpose()?;
    gpumat::lstsq(&a, &upload(dev, b.to_vec(), m, 1)?, w.as_ref())
}

pub fn run(dev: &Device, args: &Args) -> Result<()> {
    let a = read_host(&args.a)?;
    let (m, n) = (a.rows, a.cols);
    let b = vector(&read_host(&args.b)?, &args.b, "b", m)?;
    let w = args.weights.as_ref().map(|p| read_host(p).and_then(|mm| vector(&mm, p, "the weights", m))).transpose()?;
    let start = Instant::now();
    if m < n {
        return least_norm(dev, args, a.data, (m, n), b, w.is_some(), start);
    }
    // A's host copy goes to the device and is freed before the solve.
    let (x, condition, residual, steps) = match args.precision {
        Precision::F64 => {
            let s = solve_owned::<f64>(dev, upload(dev, a.data, m, n)?, &b, w.as_deref())?;
            (s.x_host, s.condition, s.residual_norm, s.iterations)
        }
        Precision::F32 => {
            let s = solve_owned::<f32>(dev, upload(dev, a.data, m, n)?, &b, w.as_deref())?;
            (s.x_host, s.condition, s.residual_norm, s.iterations)
        }
    };
    let elapsed = start.elapsed().as_secs_f64() * 1e3;
    write_matrix(&dev.from_col_major(n, 1, &x)?, args.output.as_ref())?;
    eprintln!(
        "lstsq: method QR ({}) with {steps} refinement steps, {m}×{n}{} on {} in {elapsed:.3} ms; condition estimate {condition:.3e}, residual norm {residual:.6e}",
        format!("{:?}", args.precision).to_lowercase(),
        if w.is_some() { ", weighted" } else { "" },
        dev.short_name(),
    );
    Ok(())
}

/// `lstsq` of a wide `A`: the least-norm solution from the QR factorization
/// of `Aᵀ`, refused when the rows are dependent to working precision.
fn least_norm(
    dev: &Device,
    args: &Args,
    a: Vec<f64>,
    (m, n): (usize, usize),
    b: Vec<f64>,
    weighted: bool,
    start: Instant,
) -> Result<()> {
    if weighted {
        return Err(Error::dims(
            "lstsq",
            format!("{m} observations (rows of A) for {n} unknowns: weights need at least as many observations"),
        ));
    }
    let (x, condition) = match args.precision {
        Precision::F64 => least_norm_in::<f64>(dev, a, (m, n), b)?,
        Precision::F32 => least_norm_in::<f32>(dev, a, (m, n), b)?,
    };
    let elapsed = start.elapsed().as_secs_f64() * 1e3;
    write_matrix(&dev.from_col_major(n, 1, &x)?, args.output.as_ref())?;
    eprintln!(
        "lstsq: method QR of Aᵀ ({}), the least-norm solution of {m}×{n} on {} in {elapsed:.3} ms; condition estimate {condition:.3e}",
        format!("{:?}", args.precision).to_lowercase(),
        dev.short_name(),
    );
    Ok(())
}

fn least_norm_in<T: Scalar>(dev: &Device, a: Vec<f64>, (m, n): (usize, usize), b: Vec<f64>) -> Result<(Vec<f64>, f64)> {
    let f = upload::<T>(dev, a, m, n)?.transpose()?.qr()?;
    let condition = f.full_rank(gpumat::Qr::<T>::RANK_TOLERANCE, "A")?;
    let x = f.solve_transposed(&upload(dev, b, m, 1)?)?;
    Ok((x.to_host()?.into_iter().map(Scalar::to_f64).collect(), condition))
}
