//! The 1-norm condition estimate from the factor, as LAPACK's `dsycon`:
//! `‖A⁻¹‖₁` by the Hager–Higham estimator, one solve per step (`A⁻¹` is
//! symmetric, so the transposed solves are the same solves).

use super::{Middle, solve_in_place};
use crate::backend::{Backend, Triangle, View, ViewMut};
use crate::factor::condition::{inverse_one_norm_on, reciprocal_condition};
use crate::{Result, Scalar};

/// `1 / (‖A‖₁·‖A⁻¹‖₁)` estimated from the factorization and `a_norm =
/// ‖A‖₁` (taken before factoring). 0 when `A` is zero or a solve
/// overflows; waits for the solves.
pub fn rcond<B: Backend, T: Scalar>(
    be: &B,
    tri: &Triangle,
    factor: &B::Buffer<T>,
    pivots: (View<'_, B, i32>, View<'_, B, T>, View<'_, B, T>),
    middle: Middle,
    a_norm: f64,
) -> Result<f64> {
    let n = tri.cols;
    if n == 0 || a_norm == 0.0 || !a_norm.is_finite() {
        return Ok(reciprocal_condition(n, a_norm, 1.0));
    }
    let inverse_norm =
        inverse_one_norm_on(be, n, |v, _| solve_in_place(be, tri, factor, pivots, middle, ViewMut::dense(v, n, 1)?))?;
    Ok(reciprocal_condition(n, a_norm, inverse_norm))
}
