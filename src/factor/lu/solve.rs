//! Solving with the factor.

use crate::backend::{Backend, Diag, Op, Side, View, ViewMut};
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// Overwrites `b` (`n` rows, any number of columns) with `X` such that
/// `op(A)·X = B`, where `lu` (`n × n`) and `ipiv` (`n` pivots) are the
/// factorization `P·A = L·U` from [`factor_in_place`](super::factor_in_place):
/// `A·X = B` is `L·U·X = P·B`, and `Aᵀ·X = B` is `Uᵀ·Lᵀ·(P·X) = B`.
pub fn solve_in_place<B: Backend, T: Scalar>(
    be: &B,
    lu: View<'_, B, T>,
    ipiv: View<'_, B, i32>,
    op: Op,
    mut b: ViewMut<'_, B, T>,
) -> Result<()> {
    let n = lu.rows();
    if lu.cols() != n || b.rows() != n || ipiv.block().vector_len() != Some(n) {
        return Err(Error::dims(
            "lu::solve",
            format!(
                "LU is {}×{}, B is {}×{}, ipiv has {:?} entries",
                n,
                lu.cols(),
                b.rows(),
                b.cols(),
                ipiv.block().vector_len()
            ),
        ));
    }
    let one = T::ONE;
    match op {
        Op::NoTrans => {
            be.laswp(b.rb_mut(), ipiv, 0, false)?;
            be.trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::Unit, one, lu, b.rb_mut())?;
            be.trsm(Side::Left, Uplo::Upper, Op::NoTrans, Diag::NonUnit, one, lu, b)
        }
        Op::Trans => {
            be.trsm(Side::Left, Uplo::Upper, Op::Trans, Diag::NonUnit, one, lu, b.rb_mut())?;
            be.trsm(Side::Left, Uplo::Lower, Op::Trans, Diag::Unit, one, lu, b.rb_mut())?;
            be.laswp(b, ipiv, 0, true)
        }
    }
}
