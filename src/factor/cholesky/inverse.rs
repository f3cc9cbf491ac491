//! `L⁻¹` of a lower triangular matrix, in place (LAPACK's `trtri`, taken
//! recursively): with `L = [L₁₁ 0; L₂₁ L₂₂]`,
//! `L⁻¹ = [L₁₁⁻¹ 0; −L₂₂⁻¹·L₂₁·L₁₁⁻¹ L₂₂⁻¹]`, so both halves are inverted,
//! then `L₂₁ := −L₂₁·L₁₁⁻¹` and `L₂₁ := L₂₂⁻¹·L₂₁` (two `trmm`). Leaves of
//! order up to [`LEAF`] are solved against the identity. `m³/3` flops,
//! nearly all in `trmm`.
//!
//! Why: a solve with one right-hand side is a chain of dependent steps
//! (a `trsv` of order 8192 takes about 0.5 ms on an H100), while `L⁻¹·v` is
//! one matrix–vector product at memory speed. Weighted least squares
//! solves with its `f32` factor ten times or so (refinement and the
//! condition estimate), and pays for the inverse once.

use crate::backend::{Backend, Block, BufferMut, Diag, Op, Side, View, ViewMut};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// The largest diagonal block inverted by one triangular solve.
const LEAF: usize = 128;

/// `L := L⁻¹` for the lower triangle of the `m × m` `block` of `a`, and its
/// strict upper triangle set to zero, so that the block can be used as a
/// dense matrix. The diagonal must be nonzero (a Cholesky factor's is
/// positive); a zero gives infinities, as a triangular solve would.
pub fn invert_lower<B: Backend, T: Scalar>(be: &B, a: &BufferMut<'_, B, T>, block: Block) -> Result<()> {
    be.fill_strict_triangle(Uplo::Upper, T::ZERO, a.view_mut(block)?)?;
    let leaf = LEAF.min(block.rows.max(1));
    let mut identity = vec![T::ZERO; leaf * leaf];
    for i in 0..leaf {
        identity[i + i * leaf] = T::ONE;
    }
    let identity = be.upload(&identity)?;
    let mut work = be.alloc::<T>(leaf * leaf)?;
    invert(be, a, block, (&identity, &mut work), leaf)
}

fn invert<B: Backend, T: Scalar>(
    be: &B,
    a: &BufferMut<'_, B, T>,
    block: Block,
    (identity, work): (&B::Buffer<T>, &mut B::Buffer<T>),
    leaf: usize,
) -> Result<()> {
    let n = block.rows;
    if n <= leaf {
        // X := L⁻¹·I in the workspace; its strict upper triangle is zero.
        let (i, mut x) = (View::dense(identity, leaf, leaf)?.sub(0, 0, n, n)?, ViewMut::dense(work, leaf, leaf)?);
        let mut x = x.rb_mut().sub_mut(0, 0, n, n)?;
        be.copy(i, x.rb_mut())?;
        be.trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, T::ONE, a.view(block)?, x.rb_mut())?;
        return be.copy(x.rb(), a.view_mut(block)?);
    }
    // Halves on a multiple of the leaf, so that the leaves are whole.
    let h = (n / 2).div_ceil(leaf) * leaf;
    let (l11, l21, l22) = (block.sub(0, 0, h, h)?, block.sub(h, 0, n - h, h)?, block.sub(h, h, n - h, n - h)?);
    invert(be, a, l11, (identity, work), leaf)?;
    invert(be, a, l22, (identity, work), leaf)?;
    be.trmm(Side::Right, Uplo::Lower, Op::NoTrans, Diag::NonUnit, -T::ONE, a.view(l11)?, a.view_mut(l21)?)?;
    be.trmm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, T::ONE, a.view(l22)?, a.view_mut(l21)?)
}
