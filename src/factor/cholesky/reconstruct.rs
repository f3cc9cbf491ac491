//! `L·Lᵀ` (or `Uᵀ·U`) from a factor, for tests and backward errors.

use crate::backend::{Backend, Diag, Op, Side, View, ViewMut};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Writes `L·Lᵀ` (`Lower`) or `Uᵀ·U` (`Upper`) into the square `out`, given
/// the factor's triangle in `factor`.
pub fn reconstruct<B: Backend, T: Scalar>(
    be: &B,
    uplo: Uplo,
    factor: View<'_, B, T>,
    mut out: ViewMut<'_, B, T>,
) -> Result<()> {
    // out := the triangle alone, then out := out·Lᵀ (or Uᵀ·out).
    be.copy(factor, out.rb_mut())?;
    be.fill_strict_triangle(uplo.flip(), T::ZERO, out.rb_mut())?;
    let side = match uplo {
        Uplo::Lower => Side::Right,
        Uplo::Upper => Side::Left,
    };
    be.trmm(side, uplo, Op::Trans, Diag::NonUnit, T::ONE, factor, out)
}
