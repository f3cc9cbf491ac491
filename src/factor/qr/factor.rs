//! The blocked factorization.

use super::panel::factor_panel;
use crate::backend::{Backend, Block, BufferMut, HOUSEHOLDER_MAX_COLS, Op, ViewMut};
use crate::{Error, Result, Scalar};

/// Tuning of the blocked factorization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QrParams {
    /// Columns per panel: the rest of the matrix is updated with level-3
    /// calls of this inner dimension.
    pub block_size: usize,
    /// Columns of the recursive panel's leaves, factored by the backend's
    /// `householder` (at most [`HOUSEHOLDER_MAX_COLS`]).
    pub leaf: usize,
}

impl Default for QrParams {
    /// Panels of 128 columns: on an H200, 1–7 % faster than 256 at every
    /// shape measured (8192², 16384², 32768 × 4096, 131072 × 1024), the
    /// panels' leaves being the critical path and the narrower update
    /// still running near the FP64 rate.
    fn default() -> Self {
        QrParams { block_size: 128, leaf: HOUSEHOLDER_MAX_COLS }
    }
}

/// The block size `nb` for `block` (at most `k = min(m, n)`, at least 1),
/// once `t` is checked to be the `min(nb, k) × k` array of its `T` factors.
pub(super) fn blocking<B: Backend, T: Scalar>(
    op: &'static str,
    block: Block,
    t: &ViewMut<'_, B, T>,
    block_size: usize,
) -> Result<usize> {
    let (m, n) = (block.rows, block.cols);
    let k = m.min(n);
    let nb = block_size.max(1).min(k.max(1));
    if (t.rows(), t.cols()) != (nb.min(k), k) {
        return Err(Error::dims(
            op,
            format!(
                "T must be {}×{k} for a {m}×{n} matrix with blocks of {nb}, is {}×{}",
                nb.min(k),
                t.rows(),
                t.cols()
            ),
        ));
    }
    Ok(nb)
}

/// Factors the `m × n` block `block` of `a` in place (`R` and the
/// reflectors, see the module documentation) and writes the panels' `T`
/// factors into `t`, which must be `min(nb, k) × k` for `k = min(m, n)`.
///
/// Right-looking with look-ahead, as the LU and Cholesky loops: panel `j`
/// is applied to the next block column on the main queue and to the rest
/// on the side queue, so that panel `j + 1`, on the main queue, runs while
/// the side queue updates the far columns with panel `j`.
pub fn factor_in_place<B: Backend, T: Scalar>(
    be: &B,
    a: &BufferMut<'_, B, T>,
    block: Block,
    mut t: ViewMut<'_, B, T>,
    params: QrParams,
) -> Result<()> {
    let (m, n) = (block.rows, block.cols);
    let k = m.min(n);
    let nb = blocking("qr", block, &t, params.block_size)?;
    // One workspace a queue: the panels and the next block column on the
    // main queue (at most nb² entries), the far columns on the side queue.
    let mut work = be.alloc::<T>(nb * nb)?;
    let mut far = be.alloc::<T>(nb * n.saturating_sub(2 * nb).max(1))?;
    let side = be.side()?;
    // The side queue starts after what the caller enqueued.
    side.wait_for(be)?;
    for j in (0..k).step_by(nb) {
        let kb = nb.min(k - j);
        let panel = block.sub(j, j, m - j, kb)?;
        factor_panel(be, a, panel, t.rb_mut().sub_mut(0, j, kb, kb)?, params.leaf, &mut work)?;
        let rest = n - j - kb;
        let next = nb.min(rest);
        // The side queue sees the panel; the next block column must have
        // the side queue's earlier update before it gets this one.
        side.wait_for(be)?;
        be.wait_for(side)?;
        let tb = t.rb().sub(0, j, kb, kb)?;
        if next > 0 {
            let columns = a.view_mut(block.sub(j, j + kb, m - j, next)?)?;
            be.larfb(a.view(panel)?, tb, Op::Trans, columns, &mut work)?;
        }
        if rest > next {
            let columns = a.view_mut(block.sub(j, j + kb + next, m - j, rest - next)?)?;
            side.larfb(a.view(panel)?, tb, Op::Trans, columns, &mut far)?;
        }
    }
    // The caller's next work sees the whole factor.
    be.wait_for(side)
}
