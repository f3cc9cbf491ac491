//! `gpumat rref`, `gpumat inv` and `gpumat det`: Gauss-Jordan and LU on a
//! general matrix from a Matrix Market file.

use std::path::PathBuf;

use gpumat::api::check_rcond;
use gpumat::io::MmWriteOptions;
use gpumat::{Device, Error, Result, Scalar};

use crate::input::{read_matrix, write_host, write_matrix};
use crate::stdout::outln;
use crate::values::non_negative_number;

#[derive(clap::Args)]
pub struct RrefArgs {
    /// The matrix A (Matrix Market, any shape).
    a: PathBuf,
    /// Entries of magnitude at most this count as zero when choosing pivots
    /// [default: max(m, n)·ε·‖A‖∞, as MATLAB's rref].
    #[arg(long, value_parser = non_negative_number)]
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
    /// Write A⁻¹ even when A is singular to working precision (condition
    /// estimate beyond 1/u), which is otherwise exit code 2.
    #[arg(long)]
    allow_ill_conditioned: bool,
}

#[derive(clap::Args)]
pub struct DetArgs {
    /// The square matrix A (Matrix Market).
    a: PathBuf,
    /// Print det A even when A is singular to working precision (0 for a
    /// zero pivot), which is otherwise exit code 2.
    #[arg(long)]
    allow_ill_conditioned: bool,
}

/// The RREF to stdout or a file, its rank and pivot columns (1-based) in
/// the file's comment and on stderr.
pub fn rref(dev: &Device, args: &RrefArgs) -> Result<()> {
    let a = read_matrix(dev, &args.a)?;
    let r = a.rref(args.tol)?;
    let pivots: Vec<String> = r.pivots.iter().map(|c| (c + 1).to_string()).collect();
    let summary = format!("rank {}\npivot columns {}", r.rank, pivots.join(" "));
    let data = r.matrix.to_host()?;
    let opts = MmWriteOptions { comment: Some(summary.clone()), ..Default::default() };
    let (m, n) = r.matrix.shape();
    write_host(m, n, &data, &opts, args.output.as_ref())?;
    eprintln!("rref: {m}×{n}, {}", summary.replace('\n', ", "));
    Ok(())
}

/// A⁻¹ through LU. A zero pivot is exit code 2 naming it; so is a matrix
/// singular to working precision, unless allowed.
pub fn inv(dev: &Device, args: &InvArgs) -> Result<()> {
    let a = read_matrix(dev, &args.a)?;
    let f = a.lu()?;
    let rcond = f.rcond()?;
    if !args.allow_ill_conditioned {
        check_rcond::<f64>(rcond)?;
    }
    let x = f.solve(&dev.identity(a.rows())?)?;
    write_matrix(&x, args.output.as_ref())?;
    eprintln!("inv: {0}×{0} on {1}; condition estimate {2:.2e}", a.rows(), dev.short_name(), 1.0 / rcond);
    warn_if_ill_conditioned("inv", "the inverse", rcond);
    Ok(())
}

/// det A on stdout as the shortest decimal that reads back to the same
/// `f64` (`74`, `-15.999999999999998`, `1e300`); a determinant outside the
/// normal range of `f64` as `mantissa × 2^exponent` (`1.5 × 2^6000`), which
/// no program reads as a number by mistake. Sign and log|det A| on stderr.
/// A matrix singular to working precision, a zero pivot included, is exit
/// code 2 saying so: its computed determinant is rounding error. Allowed,
/// it prints what LU gives (0 for a zero pivot).
pub fn det(dev: &Device, args: &DetArgs) -> Result<()> {
    let a = read_matrix(dev, &args.a)?;
    match a.lu() {
        Ok(f) => {
            let rcond = f.rcond()?;
            if !args.allow_ill_conditioned {
                check_rcond::<f64>(rcond)?;
            }
            let d = f.determinant()?;
            let (sign, log) = (d.sign(), d.ln_abs());
            match d.value() {
                Ok(v) => outln!("{}", shortest(v))?,
                Err(e) => {
                    outln!("{d}")?;
                    eprintln!("det: {e}; printed as mantissa × 2^exponent");
                }
            }
            eprintln!("det: sign {sign}, log|det| {}; condition estimate {:.2e}", shortest(log), 1.0 / rcond);
            warn_if_ill_conditioned("det", "the determinant", rcond);
        }
        Err(Error::Singular { pivot }) if args.allow_ill_conditioned => {
            outln!("0")?;
            eprintln!("det: A is singular (pivot {pivot} is zero)");
        }
        Err(e) => return Err(e),
    }
    Ok(())
}

/// `x` in the fewest decimal digits that read back to it: positional for
/// magnitudes in `[1e-5, 1e17)` (`74`, `0.001`), else scientific (`1e300`).
pub fn shortest(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-5..1e17).contains(&x.abs()) {
        // Rust's `{}` is the shortest round trip, positional, without "e".
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// The warning of every command that answers for an ill-conditioned `A`.
fn warn_if_ill_conditioned(command: &str, what: &str, rcond: f64) {
    let u = f64::unit_roundoff();
    if rcond < u {
        eprintln!("{command}: warning: A is singular to working precision; {what} may have no correct digits");
    } else if rcond < u.sqrt() {
        eprintln!("{command}: warning: A is ill-conditioned; {what} may have few correct digits");
    }
}
