//! `Pᵀ·L·D·Lᵀ·P` from a factorization, for tests and backward errors.

use crate::backend::{Backend, Block, Diag, Op, Side, View, ViewMut};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Writes `Pᵀ·L·D·Lᵀ·P` into the `n × n` block `out`, given `L` in the lower
/// triangle of the full `n × n` block `l` (its diagonal ignored), `D` as a
/// dense `n × n` block `dense_d`, and the interchanges `ipiv`. `O(n³)`, with
/// `D` made dense: for checking a factorization, not for solving.
pub fn reconstruct<B: Backend, T: Scalar>(
    be: &B,
    l: View<'_, B, T>,
    dense_d: View<'_, B, T>,
    ipiv: View<'_, B, i32>,
    mut out: ViewMut<'_, B, T>,
) -> Result<()> {
    let n = l.rows();
    if n == 0 {
        return Ok(());
    }
    // out := D·Lᵀ, then L·out, then Pᵀ applied to the rows, the result
    // transposed, Pᵀ again: Pᵀ·(L·D·Lᵀ)·P, which is symmetric.
    be.geam(T::ONE, dense_d, Op::NoTrans, T::ZERO, dense_d, Op::NoTrans, out.rb_mut())?;
    be.trmm(Side::Right, Uplo::Lower, Op::Trans, Diag::Unit, T::ONE, l, out.rb_mut())?;
    be.trmm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::Unit, T::ONE, l, out.rb_mut())?;
    be.laswp(out.rb_mut(), ipiv, 0, true)?;
    let mut t = be.alloc::<T>(n * n)?;
    let mut tv = ViewMut::new(&mut t, Block::dense(n, n))?;
    be.geam(T::ONE, out.rb(), Op::Trans, T::ZERO, out.rb(), Op::Trans, tv.rb_mut())?;
    be.laswp(tv.rb_mut(), ipiv, 0, true)?;
    be.copy(tv.rb(), out)
}
