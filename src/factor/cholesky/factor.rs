//! The blocked factorization.
//!
//! Right-looking, with look-ahead: once block column `k` is factored, the
//! main queue updates only block column `k + 1` with it and goes on to factor
//! that, while the side queue ([`Backend::side`]) applies block column `k` to
//! the rest of the trailing matrix. The diagonal blocks, whose latency is
//! the critical path, are factored recursively down to `potrf` leaves.
//!
//! The algorithm addresses blocks of the factor `L` by their rows and columns
//! in `L`; a [`Triangle`] says where each block is stored. For full storage
//! that is one triangle of an array; for RFP storage it is three pieces of
//! the packed rectangle, so that the packed factorization is this same loop,
//! look-ahead included, with other offsets and leading dimensions.

use crate::backend::{Backend, Block, BufferMut, DeviceBuffer, Diag, Side, Triangle, ViewMut};
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
        // Wider tiles of the trailing update from 8192 up: fewer calls, and
        // larger `gemm`s (38.7 against 41.1 ms at 16384, 8.11 against 8.21
        // at 8192; no change at 4096).
        let update_tile = if n <= 6144 { 1024 } else { 2048 };
        CholeskyParams { block_size, leaf_size: 64, update_tile }
    }
}

impl Triangle {
    /// `C := C − X·Yᵀ` with `X = L[i.., k..]`, `Y = L[j.., k..]` and
    /// `C = L[i.., j..]` strictly below the diagonal (`i ≥ j + cols`).
    fn update<B: Backend, T: Scalar>(
        &self,
        be: &B,
        a: &BufferMut<'_, B, T>,
        (i, rows): (usize, usize),
        (j, cols): (usize, usize),
        (k, depth): (usize, usize),
    ) -> Result<()> {
        let y = self.at(j, k, cols, depth)?;
        for (i, rows) in self.row_runs(i, rows, j) {
            let (x, c) = (self.at(i, k, rows, depth)?, self.at(i, j, rows, cols)?);
            let (xv, yv, cv) = (a.view(x.block)?, a.view(y.block)?, a.view_mut(c.block)?);
            if c.transposed {
                // Cᵀ −= Y·Xᵀ.
                be.gemm(-T::ONE, yv, y.op(false), xv, x.op(true), T::ONE, cv)?;
            } else {
                be.gemm(-T::ONE, xv, x.op(false), yv, y.op(true), T::ONE, cv)?;
            }
        }
        Ok(())
    }

    /// `C := C − X·Xᵀ` on the lower triangle of the diagonal block
    /// `C = L[j.., j..]`, `X = L[j.., k..]` (`syrk`). A large `C` is updated
    /// by block columns of `tile`, `syrk` on each diagonal tile and `gemm`
    /// below it: `gemm` runs faster than a large `syrk` on GPUs.
    fn update_diagonal<B: Backend, T: Scalar>(
        &self,
        be: &B,
        a: &BufferMut<'_, B, T>,
        (j, order): (usize, usize),
        (k, depth): (usize, usize),
        tile: usize,
    ) -> Result<()> {
        let end = j + order;
        // Tiles never cross `split`: the diagonal blocks on either side are
        // stored apart.
        let tile = if order <= 2 * tile.max(1) { order } else { tile.max(1) };
        let mut t = j;
        while t < end {
            let w = tile.min(end - t).min(if t < self.split { self.split - t } else { end - t });
            let (x, c) = (self.at(t, k, w, depth)?, self.at(t, t, w, w)?);
            be.syrk(c.uplo(), x.op(false), -T::ONE, a.view(x.block)?, T::ONE, a.view_mut(c.block)?)?;
            if t + w < end {
                self.update(be, a, (t + w, end - t - w), (t, w), (k, depth))?;
            }
            t += w;
        }
        Ok(())
    }

    /// `C := C − X·Xᵀ` on the trapezoid `C = L[j.., j..j + order]` (all
    /// rows from `j`), `X = L[j.., k..k + depth]`: the diagonal block by
    /// [`update_diagonal`](Self::update_diagonal) on the sibling queue and
    /// the rows below by `gemm` on this one, at once, since they are
    /// independent; both are on the critical path.
    fn update_trapezoid<B: Backend, T: Scalar>(
        &self,
        be: &B,
        a: &BufferMut<'_, B, T>,
        (j, order): (usize, usize),
        (k, depth): (usize, usize),
        tile: usize,
    ) -> Result<()> {
        let sibling = be.sibling()?;
        sibling.wait_for(be)?;
        self.update_diagonal(sibling, a, (j, order), (k, depth), tile)?;
        let below = j + order;
        if self.rows > below {
            self.update(be, a, (below, self.rows - below), (j, order), (k, depth))?;
        }
        be.wait_for(sibling)
    }

    /// Factors the `w × w` diagonal block at `k` (`w` no larger than a leaf)
    /// and solves the rows of `L` below it with it, `L21 = A21·L11⁻ᵀ`.
    fn factor_leaf<B: Backend, T: Scalar>(
        &self,
        be: &B,
        a: &BufferMut<'_, B, T>,
        (k, w): (usize, usize),
        info: &mut ViewMut<'_, B, i32>,
        offset: usize,
    ) -> Result<()> {
        let mut runs = self.row_runs(k, self.rows - k, k);
        let (top, len) = runs.next().expect("a leaf has its diagonal block");
        let panel = self.at(top, k, len, w)?;
        be.potrf_panel(panel.uplo(), a.view_mut(panel.block)?, info.rb_mut(), offset + k)?;
        for (i, rows) in runs {
            let (l11, b) = (self.at(k, k, w, w)?, self.at(i, k, rows, w)?);
            let (lv, bv) = (a.view(l11.block)?, a.view_mut(b.block)?);
            if b.transposed {
                // L21ᵀ = L11⁻¹·A21ᵀ.
                be.trsm(Side::Left, l11.uplo(), l11.op(false), Diag::NonUnit, T::ONE, lv, bv)?;
            } else {
                be.trsm(Side::Right, l11.uplo(), l11.op(true), Diag::NonUnit, T::ONE, lv, bv)?;
            }
        }
        Ok(())
    }
}

/// Factors the `uplo` triangle of the square block `block` of `a` in place:
/// `L` with `A = L·Lᵀ` (`Lower`) or `U` with `A = Uᵀ·U` (`Upper`). The other
/// triangle is not touched.
///
/// `block` may also be a panel, `m × n` with `m > n` for `Lower` (`n × m`
/// for `Upper`): its top `n × n` block is factored and the rest solved with
/// the factor, `L21 = A21·L11⁻ᵀ`, blocked in the same pass.
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
    factor_triangle(be, Triangle::full(uplo, block)?, a, info, offset, params)
}

/// The blocked factorization of `L` wherever `tri` stores it, enqueued as
/// one unit of [`Backend::replay`]: repeated factorizations of the same
/// memory (benchmarks, the steps of an interior-point or time-stepping
/// method) are replayed without enqueuing their hundreds of calls again.
pub(super) fn factor_triangle<B: Backend, T: Scalar>(
    be: &B,
    tri: Triangle,
    a: &BufferMut<'_, B, T>,
    info: &mut ViewMut<'_, B, i32>,
    offset: usize,
    params: CholeskyParams,
) -> Result<()> {
    let key = format!(
        "cholesky {} {tri:?} {params:?} in {:#x}, info {:#x} {:?} from {offset}",
        T::NAME,
        a.id(),
        info.buffer().id(),
        info.block()
    );
    be.replay(&key, &mut || enqueue_factorization(be, tri, a, info, offset, params))
}

/// The calls of [`factor_triangle`], enqueued one by one.
fn enqueue_factorization<B: Backend, T: Scalar>(
    be: &B,
    tri: Triangle,
    a: &BufferMut<'_, B, T>,
    info: &mut ViewMut<'_, B, i32>,
    offset: usize,
    params: CholeskyParams,
) -> Result<()> {
    let (n, m, tile) = (tri.cols, tri.rows, params.update_tile);
    let blocks = tri.column_blocks(params.block_size);
    if blocks.len() <= 1 {
        return blocks.iter().try_for_each(|&kb| factor_panel(be, tri, a, kb, info, offset, params));
    }
    let side = be.side()?;
    // The side queue starts after what the caller enqueued.
    side.wait_for(be)?;
    for (step, &(k, kb)) in blocks.iter().enumerate() {
        factor_panel(be, tri, a, (k, kb), info, offset, params)?;
        let Some(&(k1, next)) = blocks.get(step + 1) else { break };
        let k2 = k1 + next;
        // The side queue may apply the factored panel to the far trailing
        // matrix; block column k + 1 must first have the side queue's
        // earlier updates, and gets its last one here (look-ahead).
        side.wait_for(be)?;
        be.wait_for(side)?;
        tri.update_trapezoid(be, a, (k1, next), (k, kb), tile)?;
        if n > k2 {
            tri.update_diagonal(side, a, (k2, n - k2), (k, kb), tile)?;
            if m > n {
                tri.update(side, a, (n, m - n), (k2, n - k2), (k, kb))?;
            }
        }
    }
    // The caller's next work sees the whole factor.
    be.wait_for(side)
}

/// Factors block column `k..k + w` of `L`, from its diagonal to the last
/// row, on the main queue: recursively, halving the width down to
/// `potrf_panel` leaves, each half-width step applying the left half to the
/// right one (left-looking within the panel, so that the updates are tall
/// products).
fn factor_panel<B: Backend, T: Scalar>(
    be: &B,
    tri: Triangle,
    a: &BufferMut<'_, B, T>,
    (k, w): (usize, usize),
    info: &mut ViewMut<'_, B, i32>,
    offset: usize,
    params: CholeskyParams,
) -> Result<()> {
    let leaf = params.leaf_size.max(1);
    if w <= leaf {
        return tri.factor_leaf(be, a, (k, w), info, offset);
    }
    let w1 = w.div_ceil(2).div_ceil(leaf) * leaf;
    let (k2, w2) = (k + w1, w - w1);
    factor_panel(be, tri, a, (k, w1), info, offset, params)?;
    tri.update_trapezoid(be, a, (k2, w2), (k, w1), params.update_tile)?;
    factor_panel(be, tri, a, (k2, w2), info, offset, params)
}
