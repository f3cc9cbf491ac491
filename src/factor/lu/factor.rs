//! The blocked factorization `P·A = L·U`.
//!
//! Right-looking, with look-ahead as the Cholesky: once block column `k` is
//! factored, the main queue brings block column `k + 1` up to date (its row
//! interchanges, `trsm`, `gemm`) and goes on to factor it, while the side
//! queue ([`Backend::side`]) applies block column `k` to the rest of the
//! trailing matrix and its interchanges to the columns on the left. With a
//! deeper look-ahead ([`LuParams::look_ahead`]) the main queue brings each
//! block column up to date with the last few panels itself, so that the
//! side queue may lag as many panels behind. The
//! panels, whose latency is the critical path, are factored recursively
//! (halving the columns, the right half through `trsm` and `gemm`) down to
//! [`Backend::getrf_leaf`] leaves, each of which applies its interchanges
//! to the whole block column at once. With tensor-core updates the
//! factorization runs on [`Backend::partitioned`]'s queue, whose side
//! queue keeps to part of the SMs and leaves the rest to the panels.

use crate::backend::{Backend, Block, BufferMut, Compute, Diag, Op, Pivoting, Side, ViewMut};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Tuning of the blocked factorization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LuParams {
    /// Columns of the block columns of the outer loop, whose trailing
    /// updates (`gemm`) do nearly all the work.
    pub block_size: usize,
    /// Panels wider than this are factored recursively, so that
    /// `getrf_panel` only sees panels this narrow.
    pub leaf_size: usize,
    /// The multiplications of the outer loop's trailing updates
    /// ([`Backend::gemm_in`]): on the tensor cores in TF32, FP16 or BF16
    /// for a single-precision factor that preconditions a refinement. The
    /// panels stay in the working precision.
    pub update: Compute,
    /// How many block columns right of a panel the main queue brings up to
    /// date itself (1 or more): with more, the side queue's trailing update
    /// of a step may lag that many panels behind, so that the panels of
    /// the first steps need not wait for their large updates.
    pub look_ahead: usize,
}

impl Default for LuParams {
    fn default() -> Self {
        LuParams { block_size: 256, leaf_size: 32, update: Compute::Native, look_ahead: 1 }
    }
}

impl LuParams {
    /// The blocking for a matrix of order `n`: narrow block columns keep the
    /// chain of panels short on small matrices, wide ones make the trailing
    /// `gemm`s efficient on large ones.
    pub fn for_order(n: usize) -> Self {
        let block_size = if n <= 4096 {
            128
        } else if n <= 8192 {
            256
        } else {
            512
        };
        LuParams { block_size, leaf_size: 32, update: Compute::Native, look_ahead: 1 }
    }
}

/// Where the factorization works: the matrix's buffer and block, its pivot
/// vector (`min(m, n)` entries) and status word.
struct Work<'s, 'a, 'p, 'i, B: Backend, T: Scalar> {
    a: &'s BufferMut<'a, B, T>,
    block: Block,
    ipiv: &'s BufferMut<'p, B, i32>,
    ipiv_block: Block,
    info: &'s mut ViewMut<'i, B, i32>,
    pivoting: Pivoting,
    leaf: usize,
}

impl<B: Backend, T: Scalar> Work<'_, '_, '_, '_, B, T> {
    /// Rows `i..i+rows`, columns `j..j+cols` of the matrix.
    fn at(&self, i: usize, j: usize, rows: usize, cols: usize) -> Result<Block> {
        self.block.sub(i, j, rows, cols)
    }

    /// Pivots `k..k+len`.
    fn pivots(&self, k: usize, len: usize) -> Result<Block> {
        let b = self.ipiv_block;
        if b.cols == 1 { b.sub(k, 0, len, 1) } else { b.sub(0, k, 1, len) }
    }

    /// Applies pivots `k..k+len` (of rows `k..k+len`) to columns `j..j+cols`,
    /// rows `k..m`.
    fn swap_rows(&self, be: &B, k: usize, len: usize, j: usize, cols: usize) -> Result<()> {
        if cols == 0 || len == 0 || self.pivoting != Pivoting::Partial {
            return Ok(());
        }
        let m = self.block.rows;
        let target = self.a.view_mut(self.at(k, j, m - k, cols)?)?;
        be.laswp(target, self.ipiv.view(self.pivots(k, len)?)?, k, false)
    }

    /// With the panel of columns `k..k+kb` factored (rows `k..m`) and its
    /// interchanges applied to columns `j..j+cols` (right of it), brings
    /// them up to date: `U12 = L11⁻¹·A12` and `A22 −= L21·U12`, the product
    /// in `compute`.
    fn update(&self, be: &B, k: usize, kb: usize, j: usize, cols: usize, compute: Compute) -> Result<()> {
        if cols == 0 {
            return Ok(());
        }
        let m = self.block.rows;
        let l11 = self.a.view(self.at(k, k, kb, kb)?)?;
        be.trsm(
            Side::Left,
            Uplo::Lower,
            Op::NoTrans,
            Diag::Unit,
            T::ONE,
            l11,
            self.a.view_mut(self.at(k, j, kb, cols)?)?,
        )?;
        let below = m - k - kb;
        if below > 0 {
            be.gemm_in(
                compute,
                -T::ONE,
                self.a.view(self.at(k + kb, k, below, kb)?)?,
                Op::NoTrans,
                self.a.view(self.at(k, j, kb, cols)?)?,
                Op::NoTrans,
                T::ONE,
                self.a.view_mut(self.at(k + kb, j, below, cols)?)?,
            )?;
        }
        Ok(())
    }

    /// Factors the panel of rows `k..m`, columns `k..k+kb` on `be`'s queue,
    /// inside the block column of columns `bc..bc+bcw`: recursively, halving
    /// the columns, down to leaves that apply their interchanges to all of
    /// the block column's rows `k..m` (so the panel's own interchanges are
    /// in place on the block column when it returns).
    fn panel(&mut self, be: &B, k: usize, kb: usize, bc: usize, bcw: usize) -> Result<()> {
        let m = self.block.rows;
        if kb <= self.leaf {
            let column = self.a.view_mut(self.at(k, bc, m - k, bcw)?)?;
            let ipiv = self.ipiv.view_mut(self.pivots(k, kb)?)?;
            return be.getrf_leaf(column, k - bc..k - bc + kb, ipiv, self.info.rb_mut(), k, self.pivoting);
        }
        let n1 = (kb / 2).div_ceil(self.leaf) * self.leaf;
        let n1 = n1.clamp(1, kb - 1);
        let n2 = kb - n1;
        self.panel(be, k, n1, bc, bcw)?;
        self.update(be, k, n1, k + n1, n2, Compute::Native)?;
        self.panel(be, k + n1, n2, bc, bcw)
    }
}

/// Factors the `m × n` block `block` of `a` in place: `P·A = L·U`, `L`
/// unit lower (below the diagonal) and `U` upper (on and above it) in one
/// array. Pivot `i` goes to entry `i` of the vector block `ipiv`
/// (`min(m, n)` entries) as the 1-based row exchanged with row `i`, as
/// LAPACK's `dgetrf`; unpivoted ([`Pivoting::None`]), `ipiv[i] = i + 1`.
///
/// A zero pivot (unpivoted: one of magnitude `≤ tol`) makes `info` (one
/// entry, expected 0) the 1-based index of the first one; on a GPU that
/// happens on the device, and `info` must be read before the factor is used.
#[allow(clippy::too_many_arguments)]
pub fn factor_in_place<B: Backend, T: Scalar>(
    be: &B,
    a: &BufferMut<'_, B, T>,
    block: Block,
    ipiv: &BufferMut<'_, B, i32>,
    ipiv_block: Block,
    info: &mut ViewMut<'_, B, i32>,
    pivoting: Pivoting,
    params: LuParams,
) -> Result<()> {
    if params.update.unit_roundoff().is_none() {
        return factor_on(be, a, block, ipiv, ipiv_block, info, pivoting, params);
    }
    // Tensor-core updates are cheap next to the panels, which then wait
    // for the updates' tiles to leave the SMs at every launch: on a
    // partitioned queue the two overlap (H200, FP32 LU with FP16 updates
    // at n = 16384: 73 ms against 84).
    let q = be.partitioned()?;
    q.wait_for(be)?;
    let done = factor_on(q, a, block, ipiv, ipiv_block, info, pivoting, params);
    be.wait_for(q)?;
    done
}

/// [`factor_in_place`] on the queue `be`.
#[allow(clippy::too_many_arguments)]
fn factor_on<B: Backend, T: Scalar>(
    be: &B,
    a: &BufferMut<'_, B, T>,
    block: Block,
    ipiv: &BufferMut<'_, B, i32>,
    ipiv_block: Block,
    info: &mut ViewMut<'_, B, i32>,
    pivoting: Pivoting,
    params: LuParams,
) -> Result<()> {
    let (m, n) = (block.rows, block.cols);
    let kmax = m.min(n);
    if ipiv_block.vector_len() != Some(kmax) {
        return Err(crate::Error::dims(
            "lu",
            format!("ipiv must be a vector of {kmax} entries, is {}×{}", ipiv_block.rows, ipiv_block.cols),
        ));
    }
    if kmax == 0 {
        return Ok(());
    }
    let nb = params.block_size.max(1);
    let mut w = Work { a, block, ipiv, ipiv_block, info, pivoting, leaf: params.leaf_size.max(1) };
    if pivoting != Pivoting::Partial {
        // Unpivoted, the pivots are the identity.
        let ids: Vec<i32> = (1..=kmax).map(|i| i32::try_from(i).unwrap_or(i32::MAX)).collect();
        let host = be.upload(&ids)?;
        be.copy(crate::backend::View::dense(&host, ipiv_block.rows, ipiv_block.cols)?, ipiv.view_mut(ipiv_block)?)?;
    }
    if kmax == n && n <= nb {
        // One panel and nothing right of it: the side queue, which may hold
        // the caller's own work (a distributed factorization's trailing
        // update), is neither used nor waited for.
        return w.panel(be, 0, kmax, 0, kmax);
    }
    let side = be.side()?;
    // The side queue starts after what the caller enqueued.
    side.wait_for(be)?;
    // Panel p covers columns p·nb..; the columns from `start(q)` on are
    // block column q and those right of it (`kmax..n` when A is wide).
    let panels = kmax.div_ceil(nb);
    let start = |q: usize| (q * nb).min(kmax);
    let width = |q: usize| start(q + 1) - start(q);
    let depth = params.look_ahead.max(1);
    // Panel j reaches block column q > j on the side queue, in its update
    // of every column from start(j + 1 + depth) on, when q ≥ j + 1 + depth;
    // else on the main queue, just before panel q. The interchanges of
    // panel j reach the block columns left of it once the main queue no
    // longer reads them (block r after panel r + depth): until then they
    // hold their rows in the order of their own step.
    let mut updated = Vec::with_capacity(panels);
    for q in 0..panels {
        if q > depth {
            be.wait_mark(&updated[q - 1 - depth])?;
        }
        let (k, kb) = (start(q), width(q));
        for j in q.saturating_sub(depth)..q {
            w.swap_rows(be, start(j), width(j), k, kb)?;
            w.update(be, start(j), width(j), k, kb, params.update)?;
        }
        w.panel(be, k, kb, k, kb)?;
        // The side queue sees the panel and the updates before it.
        side.wait_for(be)?;
        let far = start((q + 1 + depth).min(panels));
        w.swap_rows(side, k, kb, far, n - far)?;
        w.update(side, k, kb, far, n - far, params.update)?;
        updated.push(side.mark()?);
        if let Some(r) = q.checked_sub(depth) {
            for j in r + 1..q {
                w.swap_rows(side, start(j), width(j), start(r), width(r))?;
            }
            w.swap_rows(side, k, kb, 0, start(r + 1))?;
        }
    }
    // The block columns still to be given the interchanges of the panels
    // right of them.
    for r in panels.saturating_sub(depth)..panels {
        for j in r + 1..panels {
            w.swap_rows(side, start(j), width(j), start(r), width(r))?;
        }
    }
    // The caller's next work sees the whole factor.
    be.wait_for(side)
}
