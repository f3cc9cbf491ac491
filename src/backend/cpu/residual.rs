//! The double-double residual `A·D²·(b − Aᵀx)` of weighted least squares on
//! the CPU (see [`Backend::weighted_residual`](crate::backend::Backend)):
//! `w = D²·(b − Aᵀx)` column by column, then `A·w` over chunks of columns
//! in parallel. Sums of products keep their rounding errors in a second
//! accumulator (Ogita, Rump and Oishi's Dot2), as `kernels/residual.cu`
//! does: as accurate as twice the precision, at a few flops per term.

use rayon::prelude::*;

use super::{Cpu, mat, mat_mut, vector};
use crate::Result;
use crate::backend::{View, ViewMut, check};
use crate::scalar::dd::{Dd, two_prod, two_sum};

/// Columns per parallel task of `A·w`.
const CHUNK: usize = 256;

/// Dot2's step: `s` carries the rounded sum, `e` the exact errors of every
/// product and addition so far.
#[inline]
fn dot2_step(s: &mut f64, e: &mut f64, a: f64, b: f64) {
    let (p, pe) = two_prod(a, b);
    let (t, te) = two_sum(*s, p);
    *s = t;
    *e += pe + te;
}

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
        // Rows of a column are contiguous (`mat` has row stride 1).
        let column = |j: usize| a.col(j).try_as_col_major().expect("unit row stride").as_slice();
        let w: Vec<Dd> = (0..n)
            .into_par_iter()
            .map(|j| {
                let (mut s, mut e) = (0.0, 0.0);
                for (&aij, &xi) in column(j).iter().zip(&x) {
                    dot2_step(&mut s, &mut e, aij, xi);
                }
                let misfit = Dd::new(b(j)) - Dd::new(s).add_f64(e);
                misfit.mul_f64(d(j)).mul_f64(d(j))
            })
            .collect();
        let sums = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let (mut s, mut e) = (vec![0.0; m], vec![0.0; m]);
                for (j, wj) in w.iter().enumerate().take(n.min((c + 1) * CHUNK)).skip(c * CHUNK) {
                    for ((&aij, si), ei) in column(j).iter().zip(&mut s).zip(&mut e) {
                        dot2_step(si, ei, aij, wj.hi);
                        // |w.lo| ≤ u·|w.hi|: its product's rounding is second order.
                        *ei += aij * wj.lo;
                    }
                }
                s.into_iter().zip(e).map(|(s, e)| Dd::new(s).add_f64(e)).collect::<Vec<Dd>>()
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
