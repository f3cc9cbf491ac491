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

/// [`solve_in_place`] in FP64 whatever the factor's precision, a column of
/// `b` at a time ([`Backend::trsv_wide`]): the solves of refinement with a
/// single-precision factor.
pub fn solve_wide_in_place<B: Backend, T: Scalar>(
    be: &B,
    uplo: Uplo,
    factor: View<'_, B, T>,
    mut b: ViewMut<'_, B, f64>,
) -> Result<()> {
    let (first, second) = match uplo {
        Uplo::Lower => (Op::NoTrans, Op::Trans),
        Uplo::Upper => (Op::Trans, Op::NoTrans),
    };
    let n = b.rows();
    for j in 0..b.cols() {
        let mut x = b.rb_mut().sub_mut(0, j, n, 1)?;
        be.trsv_wide(uplo, first, Diag::NonUnit, factor, x.rb_mut())?;
        be.trsv_wide(uplo, second, Diag::NonUnit, factor, x)?;
    }
    Ok(())
}
