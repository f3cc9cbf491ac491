//! The blocked factorization.

use crate::backend::{Backend, Block, BufferMut, Diag, Op, Side, ViewMut};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Tuning of the blocked factorization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CholeskyParams {
    /// Order of the diagonal blocks of the outer loop, whose trailing updates
    /// (`syrk`) do nearly all the work.
    pub block_size: usize,
    /// Diagonal blocks larger than this are factored recursively, halving
    /// the block size, so that `potrf` only ever sees blocks this small and
    /// the rest of the panel work goes to `trsm` and `syrk` too.
    pub leaf_size: usize,
}

impl Default for CholeskyParams {
    fn default() -> Self {
        CholeskyParams { block_size: 512, leaf_size: 64 }
    }
}

/// Factors the `uplo` triangle of the square block `block` of `a` in place:
/// `L` with `A = L·Lᵀ` (`Lower`) or `U` with `A = Uᵀ·U` (`Upper`). The other
/// triangle is not touched.
///
/// If `A` is not positive definite, `info` (one entry, expected 0) receives
/// the 1-based column of the first pivot that is not positive (counted from
/// `offset`); on a GPU that happens on the device, and `info` must be read
/// before the factor is used.
pub fn factor_in_place<B: Backend, T: Scalar>(
    be: &B,
    uplo: Uplo,
    a: &BufferMut<'_, B, T>,
    block: Block,
    info: &mut ViewMut<'_, B, i32>,
    offset: usize,
    params: CholeskyParams,
) -> Result<()> {
    let n = block.rows;
    let nb = params.block_size.max(1);
    for k in (0..n).step_by(nb) {
        let kb = nb.min(n - k);
        let rest = n - k - kb;
        let a11 = block.sub(k, k, kb, kb)?;
        if kb > params.leaf_size.max(1) {
            let inner = CholeskyParams { block_size: kb.div_ceil(2), ..params };
            factor_in_place(be, uplo, a, a11, info, offset + k, inner)?;
        } else {
            be.potrf(uplo, a.view_mut(a11)?, info.rb_mut(), offset + k)?;
        }
        if rest == 0 {
            break;
        }
        let a22 = block.sub(k + kb, k + kb, rest, rest)?;
        match uplo {
            // A21 := A21·L11⁻ᵀ, then A22 -= A21·A21ᵀ.
            Uplo::Lower => {
                let a21 = block.sub(k + kb, k, rest, kb)?;
                let t = T::ONE;
                be.trsm(Side::Right, uplo, Op::Trans, Diag::NonUnit, t, a.view(a11)?, a.view_mut(a21)?)?;
                be.syrk(uplo, Op::NoTrans, -t, a.view(a21)?, t, a.view_mut(a22)?)?;
            }
            // A12 := U11⁻ᵀ·A12, then A22 -= A12ᵀ·A12.
            Uplo::Upper => {
                let a12 = block.sub(k, k + kb, kb, rest)?;
                let t = T::ONE;
                be.trsm(Side::Left, uplo, Op::Trans, Diag::NonUnit, t, a.view(a11)?, a.view_mut(a12)?)?;
                be.syrk(uplo, Op::Trans, -t, a.view(a12)?, t, a.view_mut(a22)?)?;
            }
        }
    }
    Ok(())
}
