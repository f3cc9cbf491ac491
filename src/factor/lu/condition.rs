//! The 1-norm condition estimate, as LAPACK's `dgecon`: `‖A⁻¹‖₁` by the
//! Hager–Higham estimator from solves with `A` and `Aᵀ`, then
//! `rcond = 1 / (‖A‖₁·‖A⁻¹‖₁)`.

use super::solve::solve_wide_in_place;
use crate::backend::{Backend, Op, View, ViewMut};
use crate::factor::condition::{inverse_one_norm_on, reciprocal_condition};
use crate::{Result, Scalar};

/// The reciprocal condition number `1 / (‖A‖₁·‖A⁻¹‖₁)` estimated from the
/// factorization `P·A = L·U` (`lu`, the interchanges as the permutation
/// `rows`, [`permutation`](super::permutation) of the pivots; `None`
/// without interchanges) and `‖A‖₁` (`a_norm`, taken before factoring).
/// The estimator's solves are single vectors in FP64 ([`solve_wide_in_place`]):
/// a GPU's `trsm` waits at every block of a single column, and the estimate
/// needs no more than FP64 substitution on the factor's entries. 0 for a
/// zero matrix or one whose solves overflow; waits for the solves.
pub fn rcond<B: Backend, T: Scalar>(
    be: &B,
    lu: View<'_, B, T>,
    rows: Option<View<'_, B, i32>>,
    a_norm: f64,
) -> Result<f64> {
    let n = lu.rows();
    if n == 0 || a_norm == 0.0 || !a_norm.is_finite() {
        return Ok(reciprocal_condition(n, a_norm, 1.0));
    }
    let inverse_norm = inverse_one_norm_on::<B, f64>(be, n, |v, transposed| {
        let op = if transposed { Op::Trans } else { Op::NoTrans };
        solve_wide_in_place(be, lu, rows, op, ViewMut::dense(v, n, 1)?)
    })?;
    Ok(reciprocal_condition(n, a_norm, inverse_norm))
}
