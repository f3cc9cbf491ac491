//! Solving with the factor.

use crate::backend::{Backend, Diag, Op, Side, View, ViewMut};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Overwrites `b` with `X` such that `A·X = B`, where `factor` holds `L`
/// (`Lower`, `A = L·Lᵀ`) or `U` (`Upper`, `A = Uᵀ·U`): two triangular solves.
pub fn solve_in_place<B: Backend, T: Scalar>(
    be: &B,
    uplo: Uplo,
    factor: View<'_, B, T>,
    mut b: ViewMut<'_, B, T>,
) -> Result<()> {
    let (first, second) = match uplo {
        Uplo::Lower => (Op::NoTrans, Op::Trans),
        Uplo::Upper => (Op::Trans, Op::NoTrans),
    };
    be.trsm(Side::Left, uplo, first, Diag::NonUnit, T::ONE, factor, b.rb_mut())?;
    be.trsm(Side::Left, uplo, second, Diag::NonUnit, T::ONE, factor, b)
}
