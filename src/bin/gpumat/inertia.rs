//! `gpumat inertia A.mtx [--shift σ]`: the numbers of positive, negative and
//! zero eigenvalues of the symmetric `A − σI`, from its pivoted LDLᵀ
//! factorization (Sylvester's law of inertia; Bunch–Kaufman on the CPU,
//! Aasen's on the GPU), by the library's `Sym::ldlt`; this file only
//! parses, reads and reports.

use std::path::PathBuf;
use std::time::Instant;

use gpumat::api::Norm;
use gpumat::{Device, Error, Matrix, Result, Sym};

use crate::input::read_matrix;
use crate::lu::shortest;
use crate::solve::Storage;
use crate::stdout::outln;
use crate::values::finite_number;

/// Up to this order the summary always has the factorization's backward
/// error; beyond it only with `-v`, as it costs a reconstruction of
/// `PᵀLDLᵀP` in `O(n³)` (several times the factorization) and an `n × n`
/// array more.
pub const CHECKED_ORDER: usize = 1000;

#[derive(clap::Args)]
pub struct Args {
    /// The symmetric matrix A (Matrix Market: `symmetric`, or `general` and
    /// exactly symmetric).
    a: PathBuf,
    /// Count the eigenvalues of A − σI: those of A above, below and equal
    /// to σ (a finite number).
    // Hyphen values too, so that `-inf` reaches the parser and is refused
    // as not finite rather than read as a flag.
    #[arg(long, value_name = "σ", value_parser = finite_number, default_value_t = 0.0, allow_hyphen_values = true)]
    shift: f64,
    #[arg(long, value_enum, default_value_t = Storage::Full)]
    storage: Storage,
}

/// The counts on stdout, one `name count` line each (`positive 3`,
/// `negative 2`, `zero 0`); on stderr the order, shift, storage, device,
/// the time of the factorization and, up to order [`CHECKED_ORDER`] or with
/// `-v`, its backward error `‖M − PᵀLDLᵀP‖_F / ‖M‖_F`, `M = A − σI`. An
/// eigenvalue of a block of `D` of magnitude `≤ n·ε·max|mᵢⱼ|` counts as
/// zero.
pub fn run(dev: &Device, args: &Args, verbose: bool) -> Result<()> {
    let a = Sym::from_symmetric(read_matrix(dev, &args.a)?)?;
    let a = match args.storage {
        Storage::Full => a,
        Storage::Rfp => a.to_rfp()?,
    };
    let (n, shift) = (a.n(), args.shift);
    let start = Instant::now();
    // The unshifted copy goes as soon as the shifted one is made.
    let m = if shift == 0.0 { a } else { shifted(a, shift)? };
    let f = m.ldlt().map_err(|e| match e {
        Error::NonFinite { row, col, value, .. } if shift != 0.0 => {
            Error::NonFinite { what: "A − σI".into(), row, col, value }
        }
        e => e,
    })?;
    let inertia = f.inertia();
    let elapsed = start.elapsed().as_secs_f64() * 1e3;
    outln!("positive {}", inertia.positive)?;
    outln!("negative {}", inertia.negative)?;
    outln!("zero {}", inertia.zero)?;
    let checked = if verbose || n <= CHECKED_ORDER {
        format!("; backward error {:.2e}", backward_error(&m.to_dense()?, &f.reconstruct()?)?)
    } else {
        String::new()
    };
    eprintln!(
        "inertia: {n}×{n}{}, storage {}, pivoted LDLᵀ on {} in {elapsed:.3} ms{checked}",
        if shift == 0.0 { String::new() } else { format!(" shifted by σ = {}", shortest(shift)) },
        if f.is_packed() { "rfp" } else { "full" },
        dev.short_name(),
    );
    Ok(())
}

/// `A − σI`, `A` dropped once it is made.
fn shifted(a: Sym<f64>, shift: f64) -> Result<Sym<f64>> {
    a.shifted(-shift)
}

/// `‖M − R‖_F / ‖M‖_F` (0 for `M = R = 0`).
fn backward_error(m: &Matrix<f64>, r: &Matrix<f64>) -> Result<f64> {
    let diff = m.add_scaled(1.0, -1.0, r)?.norm(Norm::Frobenius)?;
    Ok(if diff == 0.0 { 0.0 } else { diff / m.norm(Norm::Frobenius)? })
}
