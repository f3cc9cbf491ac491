//! `gpumat rref`, `gpumat inv` and `gpumat det`: Gauss-Jordan and LU on a
//! general matrix from a Matrix Market file.

use std::path::PathBuf;

use gpumat::io::{self, MmWriteOptions};
use gpumat::{Device, Error, Result};

use crate::input::{read_matrix, write_matrix};

#[derive(clap::Args)]
pub struct RrefArgs {
    /// The matrix A (Matrix Market, any shape).
    a: PathBuf,
    /// Entries of magnitude at most this count as zero when choosing pivots
    /// [default: max(m, n)·ε·‖A‖∞, as MATLAB's rref].
    #[arg(long)]
    tol: Option<f64>,
    /// Where to write the RREF (Matrix Market array); stdout when absent.
    #[arg(short, long, value_name = "R.mtx")]
    output: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct InvArgs {
    /// The square matrix A (Matrix Market).
    a: PathBuf,
    /// Where to write A⁻¹ (Matrix Market array); stdout when absent.
    #[arg(short, long, value_name = "INV.mtx")]
    output: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct DetArgs {
    /// The square matrix A (Matrix Market).
    a: PathBuf,
}

/// The RREF to stdout or a file, its rank and pivot columns (1-based) in
/// the file's comment and on stderr.
pub fn rref(dev: &Device, args: &RrefArgs) -> Result<()> {
    let a = read_matrix(dev, &args.a)?;
    if let Some(t) = args.tol.filter(|t| t.is_nan() || *t < 0.0) {
        return Err(Error::InvalidArgument(format!("--tol must be a non-negative number, is {t}")));
    }
    let r = a.rref(args.tol)?;
    let pivots: Vec<String> = r.pivots.iter().map(|c| (c + 1).to_string()).collect();
    let summary = format!("rank {}\npivot columns {}", r.rank, pivots.join(" "));
    let data = r.matrix.to_host()?;
    let opts = MmWriteOptions { comment: Some(summary.clone()), ..Default::default() };
    let (m, n) = r.matrix.shape();
    match &args.output {
        Some(p) => io::write_matrix_market(p, m, n, &data, &opts)?,
        None => io::write_matrix_market_to(std::io::stdout().lock(), m, n, &data, &opts)?,
    }
    eprintln!("rref: {m}×{n}, {}", summary.replace('\n', ", "));
    Ok(())
}

/// A⁻¹ through LU; a singular A is exit code 2 naming the zero pivot.
pub fn inv(dev: &Device, args: &InvArgs) -> Result<()> {
    let a = read_matrix(dev, &args.a)?;
    let f = a.lu()?;
    let x = f.solve(&dev.identity(a.rows())?)?;
    write_matrix(&x, args.output.as_ref())?;
    let rcond = f.rcond()?;
    eprintln!("inv: {0}×{0} on {1}; condition estimate {2:.2e}", a.rows(), dev.describe(), 1.0 / rcond);
    if rcond < f64::EPSILON.sqrt() {
        eprintln!("inv: warning: A is ill-conditioned; the inverse may have few correct digits");
    }
    Ok(())
}

/// det A on stdout: 0 for a singular A (exit code 0). When the product
/// overflows, stderr gives its sign and log|det A|.
pub fn det(dev: &Device, args: &DetArgs) -> Result<()> {
    let a = read_matrix(dev, &args.a)?;
    match a.lu() {
        Ok(f) => {
            let (sign, log) = f.sign_log_abs_det()?;
            println!("{:e}", sign * log.exp());
            eprintln!("det: sign {sign}, log|det| {log:.17e}");
        }
        Err(Error::Singular { pivot }) => {
            println!("0");
            eprintln!("det: A is singular (pivot {pivot} is zero)");
        }
        Err(e) => return Err(e),
    }
    Ok(())
}
