//! Dense random linear programs whose optimum is known by construction.
//!
//! `min cᵀx` subject to `A·x = b`, `x ≥ 0`, with `A` uniform in `[−1, 1]`:
//! a random set `B` of `m` columns gets `x*_j ∈ [1, 2]`, the others
//! `z*_j ∈ [1, 2]`; `y*` is uniform in `[−1, 1]`; then `b = A·x*` and
//! `c = Aᵀ·y* + z*`. The pair satisfies the optimality conditions with strict
//! complementarity, so `x*` is optimal (and, `A_B` being nonsingular with
//! probability one, unique) with value `cᵀx* = bᵀy*`.

use rand::rngs::StdRng;
use rand::seq::index;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

use super::DenseLp;
use crate::{Error, Result};

/// A random LP with its optimal primal `x*`, dual `y*`, reduced costs `z*`
/// and objective.
pub struct KnownOptimum {
    pub lp: DenseLp,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub z: Vec<f64>,
    pub objective: f64,
}

/// The LP of `m` rows and `n ≥ m` columns drawn from `seed`.
pub fn random_lp(m: usize, n: usize, seed: u64) -> Result<KnownOptimum> {
    if m == 0 || n < m {
        return Err(Error::InvalidArgument(format!("random LP: need 0 < m ≤ n, got m = {m}, n = {n}")));
    }
    // Columns drawn in parallel, each from its own stream.
    let mut a = vec![0.0; m * n];
    a.par_chunks_mut(m).enumerate().for_each(|(j, col)| {
        let mut rng = StdRng::seed_from_u64(seed ^ (j as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        col.iter_mut().for_each(|v| *v = rng.random_range(-1.0..=1.0));
    });
    let mut rng = StdRng::seed_from_u64(seed.wrapping_add(1));
    let mut x = vec![0.0; n];
    let mut z: Vec<f64> = (0..n).map(|_| rng.random_range(1.0..=2.0)).collect();
    for j in index::sample(&mut rng, n, m) {
        x[j] = rng.random_range(1.0..=2.0);
        z[j] = 0.0;
    }
    let y: Vec<f64> = (0..m).map(|_| rng.random_range(-1.0..=1.0)).collect();
    let mut b = vec![0.0; m];
    for (col, &xj) in a.chunks(m).zip(&x) {
        if xj != 0.0 {
            b.iter_mut().zip(col).for_each(|(b, a)| *b += a * xj);
        }
    }
    let c: Vec<f64> =
        a.par_chunks(m).zip(&z).map(|(col, zj)| col.iter().zip(&y).map(|(a, y)| a * y).sum::<f64>() + zj).collect();
    let objective = b.iter().zip(&y).map(|(b, y)| b * y).sum();
    Ok(KnownOptimum { lp: DenseLp::standard_form(m, n, a, b, c), x, y, z, objective })
}
