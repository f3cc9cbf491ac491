//! The panel of blocked QR, factored recursively (Elmroth and Gustavson
//! 2000): the left half, its block reflector applied to the right half, the
//! right half, and the two `T` factors joined, so that all but the narrow
//! leaves is level-3 work.

use crate::backend::{Backend, Block, BufferMut, Diag, HOUSEHOLDER_MAX_COLS, Op, Side, View, ViewMut};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Householder QR of the `m × k` panel `block` of `a` in place, with the
/// `k × k` upper triangular `T` of its compact WY form into `t`, as the
/// backend's `householder` leaves them; leaves are at most `leaf` columns
/// and at most the backend's [`Backend::householder_leaf`]. `work` holds
/// `k²/4` entries.
pub fn factor_panel<B: Backend, T: Scalar>(
    be: &B,
    a: &BufferMut<'_, B, T>,
    block: Block,
    t: ViewMut<'_, B, T>,
    leaf: usize,
    work: &mut B::Buffer<T>,
) -> Result<()> {
    let (m, k) = (block.rows, block.cols);
    if k <= leaf.min(be.householder_leaf::<T>(m)).clamp(1, HOUSEHOLDER_MAX_COLS) {
        return be.householder(a.view_mut(block)?, t);
    }
    let k1 = k / 2;
    let k2 = k - k1;
    let (t_left, t_right) = t.split_at_col(k1)?;
    let (mut t11, t21) = t_left.split_at_row(k1)?;
    let (t12, mut t22) = t_right.split_at_row(k1)?;
    // T is upper triangular.
    be.fill(t21, T::ZERO)?;
    let left = block.sub(0, 0, m, k1)?;
    factor_panel(be, a, left, t11.rb_mut(), leaf, work)?;
    be.larfb(a.view(left)?, t11.rb(), Op::Trans, a.view_mut(block.sub(0, k1, m, k2)?)?, work)?;
    factor_panel(be, a, block.sub(k1, k1, m - k1, k2)?, t22.rb_mut(), leaf, work)?;
    join(be, a, block, k1, (t11.rb(), t22.rb()), t12)
}

/// The `k × k` `T` of the reflectors stored in the `m × k` panel `block`
/// of `a` (unit lower trapezoidal, as `householder` leaves them) from their
/// `τⱼ` on its diagonal, as LAPACK's `dlarft`: halves joined recursively.
/// The strict lower triangle of `t` is set to zero.
pub fn form_t<B: Backend, T: Scalar>(
    be: &B,
    a: &BufferMut<'_, B, T>,
    block: Block,
    t: ViewMut<'_, B, T>,
) -> Result<()> {
    let (m, k) = (block.rows, block.cols);
    if k <= 1 {
        return Ok(());
    }
    let k1 = k / 2;
    let (t_left, t_right) = t.split_at_col(k1)?;
    let (mut t11, t21) = t_left.split_at_row(k1)?;
    let (t12, mut t22) = t_right.split_at_row(k1)?;
    be.fill(t21, T::ZERO)?;
    form_t(be, a, block.sub(0, 0, m, k1)?, t11.rb_mut())?;
    form_t(be, a, block.sub(k1, k1, m - k1, k - k1)?, t22.rb_mut())?;
    join(be, a, block, k1, (t11.rb(), t22.rb()), t12)
}

/// `T₁₂ = −T₁₁·(V₁ᵀ·V₂)·T₂₂` for the reflectors of `block` split after
/// column `k1`: `V₂` is zero above row `k1`, so `V₁ᵀ·V₂ =
/// V₁(k1.., :)ᵀ·V₂(k1.., :)`, whose top `k2` rows of `V₂` are unit lower.
fn join<B: Backend, T: Scalar>(
    be: &B,
    a: &BufferMut<'_, B, T>,
    block: Block,
    k1: usize,
    (t11, t22): (View<'_, B, T>, View<'_, B, T>),
    mut t12: ViewMut<'_, B, T>,
) -> Result<()> {
    let (m, k) = (block.rows, block.cols);
    let k2 = k - k1;
    let v1_top = a.view(block.sub(k1, 0, k2, k1)?)?;
    let v2_top = a.view(block.sub(k1, k1, k2, k2)?)?;
    be.geam(T::ONE, v1_top, Op::Trans, T::ZERO, v1_top, Op::Trans, t12.rb_mut())?;
    be.trmm(Side::Right, Uplo::Lower, Op::NoTrans, Diag::Unit, T::ONE, v2_top, t12.rb_mut())?;
    if m > k {
        let v1_rest = a.view(block.sub(k, 0, m - k, k1)?)?;
        let v2_rest = a.view(block.sub(k, k1, m - k, k2)?)?;
        be.gemm(T::ONE, v1_rest, Op::Trans, v2_rest, Op::NoTrans, T::ONE, t12.rb_mut())?;
    }
    be.trmm(Side::Left, Uplo::Upper, Op::NoTrans, Diag::NonUnit, -T::ONE, t11, t12.rb_mut())?;
    be.trmm(Side::Right, Uplo::Upper, Op::NoTrans, Diag::NonUnit, T::ONE, t22, t12.rb_mut())?;
    Ok(())
}
