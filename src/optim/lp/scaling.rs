//! Equilibration of the standard form by Ruiz's (2001) iteration: each pass
//! divides every row and every column by the square root of its largest
//! entry, until all are within a factor of two of 1. Factors are powers of
//! two, so scaling and unscaling are exact. Then `b` (with the upper bounds)
//! and `c` are each scaled as a whole so that their largest entries are
//! about 1, which is where the method's starting point sits.
//!
//! With `R` and `S` the row and column factors, `β` and `γ` the scales of
//! the primal and dual right-hand sides, the scaled problem is
//! `A' = R·A·S`, `b' = R·b/β`, `u' = S⁻¹·u/β`, `c' = S·c/γ`, and its solution
//! maps back as `x = β·S·x'`, `y = γ·R·y'`, `z = γ·S⁻¹·z'`.

use rayon::prelude::*;

use super::standard::Standard;

/// The factors of [the module's](self) scaling.
pub(super) struct Scaling {
    pub row: Vec<f64>,
    pub col: Vec<f64>,
    pub primal: f64,
    pub dual: f64,
}

/// The power of two nearest `1/√v` in the logarithm (1 for `v = 0`).
fn inverse_sqrt_pow2(v: f64) -> f64 {
    if v == 0.0 { 1.0 } else { 2f64.powi((-0.5 * v.log2()).round() as i32) }
}

/// The power of two nearest `v` in the logarithm, or 1 below 1.
fn magnitude(v: f64) -> f64 {
    if v <= 1.0 { 1.0 } else { 2f64.powi(v.log2().round() as i32) }
}

/// Scales `s` in place, at most `passes` Ruiz passes.
pub(super) fn equilibrate(s: &mut Standard, passes: usize) -> Scaling {
    let (m, n) = (s.m, s.n);
    let mut row = vec![1.0; m];
    let mut col = vec![1.0; n];
    for _ in 0..passes {
        let col_max: Vec<f64> =
            s.a.par_chunks(m.max(1)).map(|c| c.iter().fold(0.0f64, |x, v| x.max(v.abs()))).collect();
        let row_max =
            s.a.par_chunks(m.max(1))
                .fold(
                    || vec![0.0f64; m],
                    |mut acc, c| {
                        acc.iter_mut().zip(c).for_each(|(x, v)| *x = x.max(v.abs()));
                        acc
                    },
                )
                .reduce(|| vec![0.0f64; m], |a, b| a.iter().zip(&b).map(|(x, y)| x.max(*y)).collect());
        let r: Vec<f64> = row_max.iter().map(|&v| inverse_sqrt_pow2(v)).collect();
        let c: Vec<f64> = col_max.iter().map(|&v| inverse_sqrt_pow2(v)).collect();
        if r.iter().chain(&c).all(|&f| f == 1.0) {
            break;
        }
        s.a.par_chunks_mut(m.max(1)).zip(&c).for_each(|(column, &cj)| {
            column.iter_mut().zip(&r).for_each(|(v, &ri)| *v *= ri * cj);
        });
        row.iter_mut().zip(&r).for_each(|(x, f)| *x *= f);
        col.iter_mut().zip(&c).for_each(|(x, f)| *x *= f);
    }
    s.b.iter_mut().zip(&row).for_each(|(v, f)| *v *= f);
    s.c.iter_mut().zip(&col).for_each(|(v, f)| *v *= f);
    s.upper.iter_mut().zip(&col).for_each(|(v, f)| *v /= f);
    let finite_max = |v: &[f64]| v.iter().filter(|x| x.is_finite()).fold(0.0f64, |m, x| m.max(x.abs()));
    let primal = magnitude(finite_max(&s.b).max(finite_max(&s.upper)));
    let dual = magnitude(finite_max(&s.c));
    s.b.iter_mut().for_each(|v| *v /= primal);
    s.upper.iter_mut().for_each(|v| *v /= primal);
    s.c.iter_mut().for_each(|v| *v /= dual);
    Scaling { row, col, primal, dual }
}

impl Scaling {
    /// No scaling.
    pub fn identity(m: usize, n: usize) -> Self {
        Scaling { row: vec![1.0; m], col: vec![1.0; n], primal: 1.0, dual: 1.0 }
    }

    pub fn x(&self, x: &[f64]) -> Vec<f64> {
        x.iter().zip(&self.col).map(|(v, s)| self.primal * s * v).collect()
    }
    pub fn y(&self, y: &[f64]) -> Vec<f64> {
        y.iter().zip(&self.row).map(|(v, r)| self.dual * r * v).collect()
    }
    /// The unscaled objective of a scaled one.
    pub fn objective(&self, scaled: f64) -> f64 {
        self.primal * self.dual * scaled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optim::lp::DenseLp;
    use crate::optim::lp::standard::{Reduced, reduce};

    #[test]
    fn equilibration_is_exact_and_brings_every_row_and_column_near_one() {
        // Rows spread over twelve orders of magnitude, columns over six.
        let (m, n) = (4, 6);
        let a: Vec<f64> = (0..m * n)
            .map(|k| {
                let (i, j) = (k % m, k / m);
                (1.0 + ((7 * k) % 5) as f64) * 10f64.powi(4 * i as i32 - 6) * 10f64.powi(j as i32 - 3)
            })
            .collect();
        let lp = DenseLp::standard_form(m, n, a.clone(), vec![1.0; m], vec![1.0; n]);
        let Reduced::Standard(mut s, _) = reduce(lp) else { panic!("feasible bounds") };
        let f = equilibrate(&mut s, 20);
        for i in 0..m {
            let row_max = (0..n).fold(0.0f64, |x, j| x.max(s.a[i + j * m].abs()));
            assert!((0.25..=4.0).contains(&row_max), "row {i}: {row_max:e}");
            for j in 0..n {
                // Powers of two: A' = R·A·S with no rounding at all.
                assert_eq!(s.a[i + j * m], a[i + j * m] * f.row[i] * f.col[j]);
                assert_eq!(f.row[i].log2().fract(), 0.0);
            }
        }
        for j in 0..n {
            let col_max = (0..m).fold(0.0f64, |x, i| x.max(s.a[i + j * m].abs()));
            assert!((0.25..=4.0).contains(&col_max), "column {j}: {col_max:e}");
        }
    }
}
