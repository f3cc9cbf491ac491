//! Least-squares solves with the factors.

use super::apply::apply_q;
use crate::backend::{Backend, Diag, Op, Side, View, ViewMut};
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// Overwrites `b` (`m × nrhs`) with `Qᵀ·B` and then its top `n` rows with
/// `X = R⁻¹·(Qᵀ·B)(0..n)`, the least-squares solution of `min ‖A·X − B‖`
/// for the factored `m × n` `A`, `m ≥ n`; the bottom `m − n` rows keep the
/// components of `B` orthogonal to the range of `A` (their norm is the
/// residual's). `R` must be nonsingular: a zero on its diagonal gives
/// infinities (callers check the diagonal first).
pub fn solve_in_place<B: Backend, T: Scalar>(
    be: &B,
    factor: View<'_, B, T>,
    t: View<'_, B, T>,
    mut b: ViewMut<'_, B, T>,
) -> Result<()> {
    let (m, n) = (factor.rows(), factor.cols());
    if m < n {
        return Err(Error::dims("qr solve", format!("A is {m}×{n}: fewer rows than columns")));
    }
    apply_q(be, factor, t, Op::Trans, b.rb_mut())?;
    let nrhs = b.cols();
    be.trsm(
        Side::Left,
        Uplo::Upper,
        Op::NoTrans,
        Diag::NonUnit,
        T::ONE,
        factor.sub(0, 0, n, n)?,
        b.sub_mut(0, 0, n, nrhs)?,
    )
}
