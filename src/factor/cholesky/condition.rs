//! The 1-norm condition estimate from the Cholesky factor, as LAPACK's
//! `dpocon` (full storage) and its RFP counterpart: `‖A⁻¹‖₁` by the
//! Hager–Higham estimator, two triangular solves per step. `A⁻¹` is
//! symmetric, so the transposed solves are the same solves. `‖A‖₁` of the
//! symmetric matrix is the caller's, as `dpocon`'s `ANORM` is: the factor
//! no longer holds `A`.

use super::{solve_rfp_in_place, solve_wide_in_place};
use crate::backend::{Backend, View, ViewMut};
use crate::factor::condition::{inverse_one_norm_on, reciprocal_condition};
use crate::layout::{Rfp, Uplo};
use crate::{Result, Scalar};

/// `1 / (‖A‖₁·‖A⁻¹‖₁)` estimated from the full-storage factor of
/// `A = L·Lᵀ` (`Lower`) or `A = Uᵀ·U` (`Upper`) and `a_norm = ‖A‖₁`
/// (`dpocon`). The estimator's solves are single vectors in FP64
/// ([`solve_wide_in_place`]), as LU's are. 0 when `A` is zero or a solve
/// overflows; waits for the solves.
pub fn rcond<B: Backend, T: Scalar>(be: &B, uplo: Uplo, factor: View<'_, B, T>, a_norm: f64) -> Result<f64> {
    let n = factor.rows();
    if n == 0 || a_norm == 0.0 || !a_norm.is_finite() {
        return Ok(reciprocal_condition(n, a_norm, 1.0));
    }
    let inverse_norm =
        inverse_one_norm_on::<B, f64>(be, n, |v, _| solve_wide_in_place(be, uplo, factor, ViewMut::dense(v, n, 1)?))?;
    Ok(reciprocal_condition(n, a_norm, inverse_norm))
}

/// [`rcond`] from the factor in RFP storage at `base` in `factor`'s buffer
/// (the solves of `dpftrs`).
pub fn rcond_rfp<B: Backend, T: Scalar>(
    be: &B,
    rfp: Rfp,
    factor: View<'_, B, T>,
    base: usize,
    a_norm: f64,
) -> Result<f64> {
    let n = rfp.n;
    if n == 0 || a_norm == 0.0 || !a_norm.is_finite() {
        return Ok(reciprocal_condition(n, a_norm, 1.0));
    }
    let inverse_norm =
        inverse_one_norm_on(be, n, |v, _| solve_rfp_in_place(be, rfp, factor, base, ViewMut::dense(v, n, 1)?))?;
    Ok(reciprocal_condition(n, a_norm, inverse_norm))
}
