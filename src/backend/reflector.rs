//! [`Backend::larfb`] by the level-3 primitives: the block reflector's
//! products with `C` as `gemm`s and `trmm`s, which every backend has.

use super::{Backend, Block, Diag, Op, Side, View, ViewMut, check};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// [`Backend::larfb`] as `W = Vᵀ·C`, `W = op(T)·W`, `C −= V·W`, with `V`
/// split into its unit lower triangle `V1` (a `trmm`) and the rectangle
/// `V2` below it (a `gemm`).
pub fn larfb_by_products<B: Backend, T: Scalar>(
    be: &B,
    v: View<'_, B, T>,
    t: View<'_, B, T>,
    op: Op,
    c: ViewMut<'_, B, T>,
    work: &mut B::Buffer<T>,
) -> Result<()> {
    check::larfb(&v, &t, &c, work)?;
    let (mp, kb, nc) = (v.rows(), v.cols(), c.cols());
    if nc == 0 || kb == 0 {
        return Ok(());
    }
    let one = T::ONE;
    let mut w = ViewMut::new(work, Block::dense(kb, nc))?;
    let (v1, v2) = (v.sub(0, 0, kb, kb)?, v.sub(kb, 0, mp - kb, kb)?);
    let (mut c1, mut c2) = c.split_at_row(kb)?;
    // W = Vᵀ·C = V1ᵀ·C1 + V2ᵀ·C2.
    be.copy(c1.rb(), w.rb_mut())?;
    be.trmm(Side::Left, Uplo::Lower, Op::Trans, Diag::Unit, one, v1, w.rb_mut())?;
    if mp > kb {
        be.gemm(one, v2, Op::Trans, c2.rb(), Op::NoTrans, one, w.rb_mut())?;
    }
    // W = op(T)·W: Hᵀ = I − V·Tᵀ·Vᵀ.
    be.trmm(Side::Left, Uplo::Upper, op, Diag::NonUnit, one, t, w.rb_mut())?;
    // C −= V·W.
    if mp > kb {
        be.gemm(-one, v2, Op::NoTrans, w.rb(), Op::NoTrans, one, c2.rb_mut())?;
    }
    be.trmm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::Unit, one, v1, w.rb_mut())?;
    be.axpy(-one, w.rb(), c1.rb_mut())
}
