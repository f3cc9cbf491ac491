//! `Pᵀ·L·U` from a factor, for tests and backward errors.

use crate::backend::{Backend, Diag, Op, Side, View, ViewMut};
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// Writes `Pᵀ·L·U` (which is `A`, up to rounding) into the `m × n` block
/// `out` (of another buffer), given the `m × n` factor `lu` and its
/// `k = min(m, n)` pivots.
pub fn reconstruct<B: Backend, T: Scalar>(
    be: &B,
    lu: View<'_, B, T>,
    ipiv: View<'_, B, i32>,
    mut out: ViewMut<'_, B, T>,
) -> Result<()> {
    let (m, n) = (lu.rows(), lu.cols());
    let k = m.min(n);
    if (out.rows(), out.cols()) != (m, n) || ipiv.block().vector_len() != Some(k) {
        return Err(Error::dims("lu::reconstruct", format!("LU is {m}×{n}, out is {}×{}", out.rows(), out.cols())));
    }
    if k == 0 {
        return Ok(());
    }
    be.copy(lu, out.rb_mut())?;
    let l11 = lu.sub(0, 0, k, k)?;
    {
        let (mut top, mut bottom) = out.rb_mut().split_at_row(k)?;
        // Top k rows: U (zero below its diagonal), then L11·U.
        be.fill_strict_triangle(Uplo::Lower, T::ZERO, top.rb_mut())?;
        be.trmm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::Unit, T::ONE, l11, top)?;
        // Rows below (m > n): L21, then L21·U11.
        if m > k {
            be.trmm(Side::Right, Uplo::Upper, Op::NoTrans, Diag::NonUnit, T::ONE, l11, bottom.rb_mut())?;
        }
    }
    be.laswp(out, ipiv, 0, true)
}
