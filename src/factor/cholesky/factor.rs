//! The blocked factorization.
//!
//! Right-looking, with look-ahead: once block column `k` is factored, the
//! main queue updates only block column `k + 1` with it and goes on to factor
//! that, while the side queue ([`Backend::side`]) applies block column `k` to
//! the rest of the trailing matrix. The diagonal blocks, whose latency is
//! the critical path, are factored recursively down to `potrf` leaves.

use crate::backend::{Backend, Block, BufferMut, Diag, Op, Side, ViewMut};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Tuning of the blocked factorization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CholeskyParams {
    /// Order of the diagonal blocks of the outer loop, whose trailing updates
    /// (`syrk`, `gemm`) do nearly all the work.
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

impl CholeskyParams {
    /// The blocking for a matrix of order `n`: small blocks keep the chain of
    /// diagonal factorizations short on small matrices, large ones make the
    /// trailing updates efficient on large matrices.
    pub fn for_order(n: usize) -> Self {
        let block_size = if n <= 8192 {
            256
        } else if n <= 16384 {
            512
        } else {
            1024
        };
        CholeskyParams { block_size, leaf_size: 64 }
    }
}

/// Blocks of one triangle, addressed as if it were the lower one: for
/// `Upper` the stored block is the transpose, and products swap their
/// operands' `Op`s accordingly.
#[derive(Clone, Copy)]
struct Triangle {
    uplo: Uplo,
    block: Block,
}

impl Triangle {
    /// Rows `i..i+rows`, columns `j..j+cols` of the lower triangle `L`.
    fn at(&self, i: usize, j: usize, rows: usize, cols: usize) -> Result<Block> {
        match self.uplo {
            Uplo::Lower => self.block.sub(i, j, rows, cols),
            Uplo::Upper => self.block.sub(j, i, cols, rows),
        }
    }

    /// `X := X·L11⁻ᵀ` for the panel `X` below the diagonal block `L11`.
    fn solve_panel<B: Backend, T: Scalar>(&self, be: &B, a: &BufferMut<'_, B, T>, l11: Block, x: Block) -> Result<()> {
        let (one, l11, x) = (T::ONE, a.view(l11)?, a.view_mut(x)?);
        match self.uplo {
            Uplo::Lower => be.trsm(Side::Right, Uplo::Lower, Op::Trans, Diag::NonUnit, one, l11, x),
            Uplo::Upper => be.trsm(Side::Left, Uplo::Upper, Op::Trans, Diag::NonUnit, one, l11, x),
        }
    }

    /// `C := C − X·Xᵀ` on the triangle of a diagonal block `C`.
    fn update_diagonal<B: Backend, T: Scalar>(
        &self,
        be: &B,
        a: &BufferMut<'_, B, T>,
        x: Block,
        c: Block,
    ) -> Result<()> {
        let op = if self.uplo == Uplo::Lower { Op::NoTrans } else { Op::Trans };
        be.syrk(self.uplo, op, -T::ONE, a.view(x)?, T::ONE, a.view_mut(c)?)
    }

    /// `C := C − X·Yᵀ` for an off-diagonal block `C`.
    fn update<B: Backend, T: Scalar>(
        &self,
        be: &B,
        a: &BufferMut<'_, B, T>,
        x: Block,
        y: Block,
        c: Block,
    ) -> Result<()> {
        let (x, y, c) = (a.view(x)?, a.view(y)?, a.view_mut(c)?);
        match self.uplo {
            Uplo::Lower => be.gemm(-T::ONE, x, Op::NoTrans, y, Op::Trans, T::ONE, c),
            // Cᵀ −= Y·Xᵀ with Xᵀ, Yᵀ stored.
            Uplo::Upper => be.gemm(-T::ONE, y, Op::Trans, x, Op::NoTrans, T::ONE, c),
        }
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
    if n <= nb {
        return factor_diagonal(be, uplo, a, block, info, offset, params);
    }
    let tri = Triangle { uplo, block };
    let side = be.side()?;
    // The side queue starts after what the caller enqueued.
    side.wait_for(be)?;
    for k in (0..n).step_by(nb) {
        let kb = nb.min(n - k);
        let below = n - k - kb;
        let a11 = tri.at(k, k, kb, kb)?;
        factor_diagonal(be, uplo, a, a11, info, offset + k, params)?;
        if below == 0 {
            break;
        }
        let panel = tri.at(k + kb, k, below, kb)?;
        tri.solve_panel(be, a, a11, panel)?;
        let next = nb.min(below);
        let rest = below - next;
        // The side queue may apply the solved panel to the far trailing
        // matrix; block column k + 1 must first have the side queue's
        // earlier updates, and gets its last one here (look-ahead).
        side.wait_for(be)?;
        be.wait_for(side)?;
        let x = tri.at(k + kb, k, next, kb)?;
        tri.update_diagonal(be, a, x, tri.at(k + kb, k + kb, next, next)?)?;
        if rest > 0 {
            let y = tri.at(k + kb + next, k, rest, kb)?;
            tri.update(be, a, y, x, tri.at(k + kb + next, k + kb, rest, next)?)?;
            tri.update_diagonal(side, a, y, tri.at(k + kb + next, k + kb + next, rest, rest)?)?;
        }
    }
    // The caller's next work sees the whole factor.
    be.wait_for(side)
}

/// Factors a diagonal block on the main queue: blocked, halving the block
/// size down to `potrf` leaves.
fn factor_diagonal<B: Backend, T: Scalar>(
    be: &B,
    uplo: Uplo,
    a: &BufferMut<'_, B, T>,
    block: Block,
    info: &mut ViewMut<'_, B, i32>,
    offset: usize,
    params: CholeskyParams,
) -> Result<()> {
    let n = block.rows;
    let leaf = params.leaf_size.max(1);
    if n <= leaf {
        return be.potrf(uplo, a.view_mut(block)?, info.rb_mut(), offset);
    }
    let tri = Triangle { uplo, block };
    let n1 = n.div_ceil(2).div_ceil(leaf) * leaf;
    let n2 = n - n1;
    let a11 = tri.at(0, 0, n1, n1)?;
    factor_diagonal(be, uplo, a, a11, info, offset, params)?;
    let panel = tri.at(n1, 0, n2, n1)?;
    tri.solve_panel(be, a, a11, panel)?;
    tri.update_diagonal(be, a, panel, tri.at(n1, n1, n2, n2)?)?;
    factor_diagonal(be, uplo, a, tri.at(n1, n1, n2, n2)?, info, offset + n1, params)
}
