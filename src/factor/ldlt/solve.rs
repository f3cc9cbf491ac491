//! Solving with the factor: `X = Pᵀ·L⁻ᵀ·D⁻¹·L⁻¹·P·B` (LAPACK's `dsytrs`).

use crate::backend::{Backend, Diag, Triangle, View, ViewMut};
use crate::factor::triangular::solve_lower;
use crate::{Result, Scalar};

/// Overwrites `b` (`n` rows, any number of columns) with `X` such that
/// `A·X = B`, given the factorization `P·A·Pᵀ = L·D·Lᵀ` (`L` where `tri`
/// locates it in `factor`, its diagonal taken as 1; `ipiv`, `d`, `e` as
/// [`factor_in_place`](super::factor_in_place) leaves them).
pub fn solve_in_place<B: Backend, T: Scalar>(
    be: &B,
    tri: &Triangle,
    factor: &B::Buffer<T>,
    (ipiv, d, e): (View<'_, B, i32>, View<'_, B, T>, View<'_, B, T>),
    mut b: ViewMut<'_, B, T>,
) -> Result<()> {
    if tri.cols == 0 {
        return Ok(());
    }
    be.laswp(b.rb_mut(), ipiv, 0, false)?;
    solve_lower(be, tri, factor, b.rb_mut(), false, Diag::Unit)?;
    be.block_diagonal_solve(d, e, b.rb_mut())?;
    solve_lower(be, tri, factor, b.rb_mut(), true, Diag::Unit)?;
    be.laswp(b, ipiv, 0, true)
}
