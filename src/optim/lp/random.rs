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

/// A random LP with every kind of bound and row, optimal by construction:
/// columns with a lower bound, both bounds, an upper bound only, none, or
/// fixed; rows that are equalities, `≤`, `≥` or ranged, active or not.
/// `x*` sits at a bound on nonbasic columns (with a reduced cost of the
/// sign that makes the bound hold it) and strictly inside on `m` basic ones
/// (free columns among them); `y*` has the sign each active inequality's
/// side needs and is 0 on inactive rows; `c = Aᵀ·y* + z*`. These are the
/// optimality conditions, so `cᵀx*` is the optimum (the problem may be
/// degenerate; `x*` need not be the only optimal point).
pub fn random_general_lp(m: usize, n: usize, seed: u64) -> Result<KnownOptimum> {
    if m == 0 || n < m {
        return Err(Error::InvalidArgument(format!("random LP: need 0 < m ≤ n, got m = {m}, n = {n}")));
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let a: Vec<f64> = (0..m * n).map(|_| rng.random_range(-1.0..=1.0)).collect();
    let inf = f64::INFINITY;
    let (mut lower, mut upper) = (vec![0.0; n], vec![0.0; n]);
    let (mut x, mut z) = (vec![0.0; n], vec![0.0; n]);
    let basic: Vec<bool> = {
        let mut b = vec![false; n];
        index::sample(&mut rng, n, m).into_iter().for_each(|j| b[j] = true);
        b
    };
    for j in 0..n {
        let l = rng.random_range(-2.0..=2.0);
        let width = rng.random_range(1.0..=3.0);
        let kind = rng.random_range(0..if basic[j] { 4 } else { 5 });
        (lower[j], upper[j]) = match kind {
            0 => (l, inf),
            1 => (l, l + width),
            2 => (-inf, l),
            3 if basic[j] => (-inf, inf),
            _ => (l, l),
        };
        let reduced = rng.random_range(0.5..=1.5);
        (x[j], z[j]) = if basic[j] {
            let inside = match (lower[j].is_finite(), upper[j].is_finite()) {
                (true, true) => lower[j] + rng.random_range(0.25..=0.75) * width,
                (true, false) => lower[j] + width,
                (false, true) => upper[j] - width,
                (false, false) => rng.random_range(-2.0..=2.0),
            };
            (inside, 0.0)
        } else if lower[j] == upper[j] {
            (lower[j], rng.random_range(-1.0..=1.0))
        } else if upper[j].is_finite() && (!lower[j].is_finite() || rng.random_bool(0.5)) {
            (upper[j], -reduced)
        } else {
            (lower[j], reduced)
        };
    }
    let (mut row_lower, mut row_upper, mut y) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
    for i in 0..m {
        let activity: f64 = (0..n).map(|j| a[i + j * m] * x[j]).sum();
        let (gap, dual) = (rng.random_range(0.5..=1.5), rng.random_range(0.5..=1.5));
        (row_lower[i], row_upper[i], y[i]) = match rng.random_range(0..7) {
            0 | 1 => (activity, activity, rng.random_range(-1.0..=1.0)),
            2 => (-inf, activity, -dual),
            3 => (activity, inf, dual),
            4 => (-inf, activity + gap, 0.0),
            5 => (activity - gap, activity + gap, 0.0),
            _ => (activity, activity + gap, dual),
        };
    }
    let c: Vec<f64> = (0..n).map(|j| (0..m).map(|i| a[i + j * m] * y[i]).sum::<f64>() + z[j]).collect();
    let objective = c.iter().zip(&x).map(|(c, x)| c * x).sum();
    let lp = DenseLp { m, n, a, c, row_lower, row_upper, lower, upper, ..DenseLp::default() };
    Ok(KnownOptimum { lp, x, y, z, objective })
}
