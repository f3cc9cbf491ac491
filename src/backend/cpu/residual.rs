//! The double-double residual `A·D²·(b − Aᵀx)` of weighted least squares on
//! the CPU (see [`Backend::weighted_residual`](crate::backend::Backend)):
//! `w = D²·(b − Aᵀx)` column by column, then `A·w` over chunks of columns
//! in parallel, each with its own double-double partial sums.

use rayon::prelude::*;

use super::{Cpu, mat, mat_mut, vector};
use crate::Result;
use crate::backend::{View, ViewMut, check};
use crate::solve::dd::{self, Dd};

/// Columns per parallel task of `A·w`.
const CHUNK: usize = 256;

impl Cpu {
    pub(super) fn weighted_residual_impl(
        &self,
        a: View<'_, Cpu, f64>,
        d: View<'_, Cpu, f64>,
        b: View<'_, Cpu, f64>,
        x: View<'_, Cpu, f64>,
        r: ViewMut<'_, Cpu, f64>,
    ) -> Result<()> {
        check::weighted_residual(&a, &d, &b, &x, &r)?;
        let (m, n) = (a.rows(), a.cols());
        let (a, d, b, x) = (mat(a), vector(d), vector(b), vector(x));
        let x: Vec<f64> = (0..m).map(x).collect();
        let column = |j: usize| -> Vec<f64> { (0..m).map(|i| a[(i, j)]).collect() };
        let w: Vec<Dd> = (0..n)
            .into_par_iter()
            .map(|j| {
                let misfit = Dd::new(b(j)) - dd::dot(&column(j), &x);
                misfit.mul_f64(d(j)).mul_f64(d(j))
            })
            .collect();
        let sums = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let mut acc = vec![Dd::ZERO; m];
                for j in c * CHUNK..n.min((c + 1) * CHUNK) {
                    let wj = w[j];
                    for (i, s) in acc.iter_mut().enumerate() {
                        let aij = a[(i, j)];
                        // |w.lo| ≤ u·|w.hi|: its product's rounding is second order.
                        *s = (*s + Dd::product(aij, wj.hi)).add_f64(aij * wj.lo);
                    }
                }
                acc
            })
            .reduce(|| vec![Dd::ZERO; m], |p, q| p.into_iter().zip(q).map(|(s, t)| s + t).collect());
        let mut r = mat_mut(r);
        for (i, s) in sums.into_iter().enumerate() {
            let at = if r.ncols() == 1 { (i, 0) } else { (0, i) };
            r[at] = s.to_f64();
        }
        Ok(())
    }
}
