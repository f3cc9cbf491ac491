//! `gpumat solve A.mtx B.mtx`: X with A·X = B.

use std::path::PathBuf;
use std::time::Instant;

use clap::ValueEnum;
use gpumat::api::Norm;
use gpumat::io::MatrixMarket;
use gpumat::{Device, Error, Matrix, Result, Scalar, Sym};

use crate::input::{read_host, write_matrix};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    /// Cholesky when A is symmetric and positive definite (tried first),
    /// else LU with partial pivoting.
    Auto,
    /// Cholesky: A must be symmetric positive definite.
    Cholesky,
    /// LU with partial pivoting: any nonsingular A.
    Lu,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Storage {
    /// The whole n × n array.
    Full,
    /// Rectangular full packed: n(n+1)/2 entries, half the memory.
    Rfp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Precision {
    F64,
    F32,
}

#[derive(clap::Args)]
pub struct Args {
    /// The matrix A (Matrix Market, general or symmetric).
    a: PathBuf,
    /// The right-hand sides B, one per column (Matrix Market).
    b: PathBuf,
    /// Where to write X (Matrix Market array); stdout when absent.
    #[arg(short, long, value_name = "X.mtx")]
    output: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Method::Auto)]
    method: Method,
    #[arg(long, value_enum, default_value_t = Storage::Full)]
    storage: Storage,
    /// Precision of the factorization and solve.
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    precision: Precision,
}

/// The first pair (1-based) where `a` is not exactly symmetric.
fn asymmetry(a: &[f64], n: usize) -> Option<(usize, usize, f64, f64)> {
    (0..n).flat_map(|j| (j + 1..n).map(move |i| (i, j))).find_map(|(i, j)| {
        let (x, y) = (a[i + j * n], a[j + i * n]);
        (x != y).then_some((i + 1, j + 1, x, y))
    })
}

/// What was solved with, and the LU's condition estimate.
struct Solved {
    x: Vec<f64>,
    method: &'static str,
    rcond: Option<f64>,
}

/// Uploads A and B rounded to `T`, factors and solves; X back in `f64`.
/// `Auto` tries Cholesky on a symmetric A and falls back to LU when A is
/// not positive definite.
fn factor_and_solve<T: Scalar>(
    dev: &Device,
    a: &MatrixMarket,
    b: &MatrixMarket,
    storage: Storage,
    method: Method,
) -> Result<Solved> {
    let upload = |m: &MatrixMarket| {
        let data: Vec<T> = m.data.iter().map(|&x| T::from_f64(x)).collect();
        dev.from_col_major(m.rows, m.cols, &data)
    };
    let host = |x: Matrix<T>| -> Result<Vec<f64>> { Ok(x.to_host()?.into_iter().map(Scalar::to_f64).collect()) };
    if method != Method::Lu {
        let mut s = Sym::from_lower(upload(a)?)?;
        if storage == Storage::Rfp {
            s = s.to_rfp()?;
        }
        match s.cholesky() {
            Ok(f) => return Ok(Solved { x: host(f.solve(&upload(b)?)?)?, method: "cholesky", rcond: None }),
            Err(Error::NotPositiveDefinite { .. }) if method == Method::Auto => {}
            Err(e) => return Err(e),
        }
    }
    let f = upload(a)?.lu()?;
    let x = host(f.solve(&upload(b)?)?)?;
    Ok(Solved { x, method: "lu", rcond: Some(f.rcond()?) })
}

pub fn run(dev: &Device, args: &Args) -> Result<()> {
    let (a_host, b_host) = (read_host(&args.a)?, read_host(&args.b)?);
    let n = a_host.rows;
    if a_host.cols != n {
        return Err(Error::dims("solve", format!("A must be square, is {}×{}", n, a_host.cols)));
    }
    if b_host.rows != n {
        return Err(Error::dims("solve", format!("A is {n}×{n} but B has {} rows", b_host.rows)));
    }
    let symmetric = asymmetry(&a_host.data, n);
    let method = match (args.method, symmetric) {
        // Cholesky reads one triangle: a matrix that is not symmetric would
        // be silently replaced by another one.
        (Method::Cholesky, Some((i, j, x, y))) => {
            return Err(Error::InvalidArgument(format!(
                "{}: A is not symmetric (A({i},{j}) = {x:e} but A({j},{i}) = {y:e}); Cholesky needs a symmetric positive definite matrix",
                args.a.display()
            )));
        }
        (Method::Auto, Some(_)) => Method::Lu,
        (m, _) => m,
    };
    if method == Method::Lu && args.storage == Storage::Rfp {
        return Err(Error::InvalidArgument(
            "packed (RFP) storage holds symmetric matrices; LU needs --storage full".into(),
        ));
    }
    let start = Instant::now();
    let solved = match args.precision {
        Precision::F64 => factor_and_solve::<f64>(dev, &a_host, &b_host, args.storage, method)?,
        Precision::F32 => factor_and_solve::<f32>(dev, &a_host, &b_host, args.storage, method)?,
    };
    let x_host = solved.x;
    let elapsed = start.elapsed().as_secs_f64() * 1e3;
    // Backward error in f64 against the data as read: ‖A·X − B‖ / (‖A‖·‖X‖ + ‖B‖).
    let a = dev.from_col_major(n, n, &a_host.data)?;
    let b = dev.from_col_major(n, b_host.cols, &b_host.data)?;
    let x = dev.from_col_major(n, b_host.cols, &x_host)?;
    let r = &(&a * &x) - &b;
    let fro = |m: &Matrix<f64>| m.norm(Norm::Frobenius);
    let berr = fro(&r)? / (fro(&a)? * fro(&x)? + fro(&b)?);
    write_matrix(&x, args.output.as_ref())?;
    eprintln!(
        "solve: method {}, storage {}, precision {}, {n}×{n} with {} right-hand sides on {} in {elapsed:.3} ms; backward error {berr:.2e}{}",
        solved.method,
        format!("{:?}", args.storage).to_lowercase(),
        format!("{:?}", args.precision).to_lowercase(),
        b_host.cols,
        dev.describe(),
        solved.rcond.map(|r| format!("; condition estimate {:.2e}", 1.0 / r)).unwrap_or_default(),
    );
    // The solution is printed, but a user must know it may be inaccurate.
    if let Some(r) = solved.rcond {
        let eps = match args.precision {
            Precision::F64 => f64::EPSILON,
            Precision::F32 => f32::EPSILON as f64,
        };
        if r < eps.sqrt() {
            eprintln!(
                "solve: warning: A is ill-conditioned (1-norm condition estimate {:.2e}); X may have few correct digits",
                1.0 / r
            );
        }
    }
    Ok(())
}
