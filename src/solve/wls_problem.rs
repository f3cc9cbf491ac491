//! The random weighted least-squares problems of Jung & O'Leary (2008),
//! Tables 1 and 2, on the host, and the error those tables report. Shared by
//! `gpumat wls-table` and the benchmarks, so that both solve the same
//! problems for the same seed.

use rand::{Rng, SeedableRng, rngs::StdRng};

use crate::backend::cpu::{check_fits, matrix_bytes};
use crate::{Error, Result};

/// `A` (`m × 2m`, column-major), `d = √D²` and `b` (`2m` entries each), with
/// `A`, `b` uniform in [0, 1] and `D²` uniform in [0, 1] (Table 1) or, when
/// `ill_conditioned`, `D²ᵢᵢ = 10^(−4+8i/(n−1))` (Table 2). The generator is
/// seeded by `seed` and `m`, so each order has its own problem. An order
/// whose `A` overflows or does not fit in the host's memory is an error
/// before anything is allocated.
pub fn random(seed: u64, m: usize, ill_conditioned: bool) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    let n = fits(m)?;
    let mut r = StdRng::seed_from_u64(seed ^ (m as u64).rotate_left(32));
    let a: Vec<f64> = (0..m * n).map(|_| r.random_range(0.0..1.0)).collect();
    let d2: Vec<f64> = (0..n)
        .map(|i| {
            if ill_conditioned { 10f64.powf(-4.0 + 8.0 * i as f64 / (n - 1) as f64) } else { r.random_range(0.0..1.0) }
        })
        .collect();
    let b: Vec<f64> = (0..n).map(|_| r.random_range(0.0..1.0)).collect();
    Ok((a, d2.into_iter().map(f64::sqrt).collect(), b))
}

/// The number of observations `n = 2m` of the problem with `m` unknowns,
/// if its `A` fits in the host's available memory.
pub fn fits(m: usize) -> Result<usize> {
    let n = dimensions(m)?;
    check_fits(|| format!("the {m}×{n} matrix A of the problem with m = {m}"), matrix_bytes(m, n, size_of::<f64>()))?;
    Ok(n)
}

/// The number of observations `n = 2m` of the problem with `m` unknowns;
/// an error when `2m` or the `m × 2m` entries of `A` overflow.
pub fn dimensions(m: usize) -> Result<usize> {
    m.checked_mul(2).filter(|&n| matrix_bytes(m, n, size_of::<f64>()).is_some()).ok_or_else(|| {
        Error::InvalidArgument(format!("m = {m} unknowns: the m × 2m matrix A has more bytes than an address space"))
    })
}

/// `‖x − y‖₂/‖y‖₂` (absolute when `y = 0`): the tables' error of a solution
/// `x` against a reference `y`.
pub fn rel_error(x: &[f64], y: &[f64]) -> f64 {
    let diff: f64 = x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt();
    let norm: f64 = y.iter().map(|v| v * v).sum::<f64>().sqrt();
    diff / if norm == 0.0 { 1.0 } else { norm }
}
