//! The blocked factorization.
//!
//! Right-looking, with look-ahead: once block column `k` is factored, the
//! main queue updates only block column `k + 1` with it and goes on to factor
//! that, while the side queue ([`Backend::side`]) applies block column `k` to
//! the rest of the trailing matrix. The diagonal blocks, whose latency is
//! the critical path, are factored recursively down to `potrf` leaves.

use crate::backend::{Backend, Block, BufferMut, Op, ViewMut};
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
    /// Symmetric updates of order above twice this are split into block
    /// columns of this width: `syrk` on the diagonal tiles, `gemm` below.
    pub update_tile: usize,
}

impl Default for CholeskyParams {
    fn default() -> Self {
        CholeskyParams { block_size: 512, leaf_size: 64, update_tile: 1024 }
    }
}

impl CholeskyParams {
    /// The blocking for a matrix of order `n`: small blocks keep the chain of
    /// diagonal factorizations short on small matrices, large ones make the
    /// trailing updates efficient on large matrices.
    pub fn for_order(n: usize) -> Self {
        // Measured on an H100 (bench/results): 512 is best at n = 4096, 1024
        // from 8192 up; small orders keep the panel short.
        let block_size = if n <= 2048 {
            256
        } else if n <= 6144 {
            512
        } else {
            1024
        };
        CholeskyParams { block_size, leaf_size: 64, update_tile: 1024 }
    }
}

/// `C := C − op(X)·op(X)ᵀ` on the `uplo` triangle of `C` (`syrk`). A large
/// `C` is updated by block columns, `syrk` on each diagonal tile and `gemm`
/// beside it: `gemm` runs faster than a large `syrk` on GPUs.
pub(super) fn symmetric_update<B: Backend, T: Scalar>(
    be: &B,
    (uplo, op): (Uplo, Op),
    a: &BufferMut<'_, B, T>,
    x: Block,
    c: Block,
    tile: usize,
) -> Result<()> {
    let (n, k) = op.apply(x.rows, x.cols);
    let tile = tile.max(1);
    if n <= 2 * tile {
        return be.syrk(uplo, op, -T::ONE, a.view(x)?, T::ONE, a.view_mut(c)?);
    }
    // Rows `i..i + len` of op(X).
    let rows = |i: usize, len: usize| match op {
        Op::NoTrans => x.sub(i, 0, len, k),
        Op::Trans => x.sub(0, i, k, len),
    };
    let flip = if op == Op::NoTrans { Op::Trans } else { Op::NoTrans };
    for j in (0..n).step_by(tile) {
        let (w, after) = (tile.min(n - j), n - j - tile.min(n - j));
        let xj = a.view(rows(j, w)?)?;
        be.syrk(uplo, op, -T::ONE, xj, T::ONE, a.view_mut(c.sub(j, j, w, w)?)?)?;
        if after > 0 {
            let xr = a.view(rows(j + w, after)?)?;
            match uplo {
                Uplo::Lower => be.gemm(-T::ONE, xr, op, xj, flip, T::ONE, a.view_mut(c.sub(j + w, j, after, w)?)?)?,
                Uplo::Upper => be.gemm(-T::ONE, xj, op, xr, flip, T::ONE, a.view_mut(c.sub(j, j + w, w, after)?)?)?,
            }
        }
    }
    Ok(())
}

/// Blocks of one triangle, addressed as if it were the lower one: for
/// `Upper` the stored block is the transpose, and products swap their
/// operands' `Op`s accordingly.
#[derive(Clone, Copy)]
struct Triangle {
    uplo: Uplo,
    block: Block,
    tile: usize,
}

impl Triangle {
    /// Rows `i..i+rows`, columns `j..j+cols` of the lower triangle `L`.
    fn at(&self, i: usize, j: usize, rows: usize, cols: usize) -> Result<Block> {
        match self.uplo {
            Uplo::Lower => self.block.sub(i, j, rows, cols),
            Uplo::Upper => self.block.sub(j, i, cols, rows),
        }
    }

    /// Columns of `L` in the block.
    fn width(&self) -> usize {
        match self.uplo {
            Uplo::Lower => self.block.cols,
            Uplo::Upper => self.block.rows,
        }
    }

    /// Rows of `L` in the block: more than `width` for a panel.
    fn len(&self) -> usize {
        match self.uplo {
            Uplo::Lower => self.block.rows,
            Uplo::Upper => self.block.cols,
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
        symmetric_update(be, (self.uplo, op), a, x, c, self.tile)
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
/// `block` may also be a panel, `m × n` with `m > n` for `Lower` (`n × m`
/// for `Upper`): its top `n × n` block is factored and the rest solved with
/// the factor, `L21 = A21·L11⁻ᵀ`, blocked in the same pass — the first step
/// of a larger factorization, as RFP storage takes it.
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
    let tri = Triangle { uplo, block, tile: params.update_tile };
    let (n, m) = (tri.width(), tri.len());
    let nb = params.block_size.max(1);
    if n <= nb {
        return factor_panel(be, tri, a, 0, n, info, offset, params);
    }
    let side = be.side()?;
    // The side queue starts after what the caller enqueued.
    side.wait_for(be)?;
    for k in (0..n).step_by(nb) {
        let kb = nb.min(n - k);
        factor_panel(be, tri, a, k, kb, info, offset, params)?;
        let (k1, left) = (k + kb, n - k - kb);
        if left == 0 {
            break;
        }
        let next = nb.min(left);
        let (k2, rest) = (k1 + next, left - next);
        // The side queue may apply the factored panel to the far trailing
        // matrix; block column k + 1 must first have the side queue's
        // earlier updates, and gets its last one here (look-ahead).
        side.wait_for(be)?;
        be.wait_for(side)?;
        let x = tri.at(k1, k, next, kb)?;
        tri.update_diagonal(be, a, x, tri.at(k1, k1, next, next)?)?;
        if m > k2 {
            tri.update(be, a, tri.at(k2, k, m - k2, kb)?, x, tri.at(k2, k1, m - k2, next)?)?;
        }
        if rest > 0 {
            let y = tri.at(k2, k, rest, kb)?;
            tri.update_diagonal(side, a, y, tri.at(k2, k2, rest, rest)?)?;
            if m > n {
                tri.update(side, a, tri.at(n, k, m - n, kb)?, y, tri.at(n, k2, m - n, rest)?)?;
            }
        }
    }
    // The caller's next work sees the whole factor.
    be.wait_for(side)
}

/// Factors block column `k..k + w` of the triangle, from its diagonal to
/// the last row, on the main queue: recursively, halving the width down to
/// `potrf_panel` leaves, each half-width step applying the left half to the
/// right one (left-looking within the panel, so that the updates are tall
/// products).
#[allow(clippy::too_many_arguments)]
fn factor_panel<B: Backend, T: Scalar>(
    be: &B,
    tri: Triangle,
    a: &BufferMut<'_, B, T>,
    k: usize,
    w: usize,
    info: &mut ViewMut<'_, B, i32>,
    offset: usize,
    params: CholeskyParams,
) -> Result<()> {
    let rows = tri.len() - k;
    let leaf = params.leaf_size.max(1);
    if w <= leaf {
        return be.potrf_panel(tri.uplo, a.view_mut(tri.at(k, k, rows, w)?)?, info.rb_mut(), offset + k);
    }
    let w1 = w.div_ceil(2).div_ceil(leaf) * leaf;
    let w2 = w - w1;
    factor_panel(be, tri, a, k, w1, info, offset, params)?;
    let (k2, below) = (k + w1, rows - w1 - w2);
    let x = tri.at(k2, k, w2, w1)?;
    tri.update_diagonal(be, a, x, tri.at(k2, k2, w2, w2)?)?;
    if below > 0 {
        tri.update(be, a, tri.at(k2 + w2, k, below, w1)?, x, tri.at(k2 + w2, k2, below, w2)?)?;
    }
    factor_panel(be, tri, a, k2, w2, info, offset, params)
}
