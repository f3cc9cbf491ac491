//! The LDLᵀ primitives on the GPU, `kernels/ldlt.cu`: the panel of the
//! blocked Bunch–Kaufman factorization as one grid-wide kernel, and solves
//! with `D`.
//!
//! The panel's pivots depend on one another column by column, and the host
//! waits for each panel's width anyway: one launch per panel, its blocks
//! all resident (at most one per SM) and meeting at a grid barrier whenever
//! a step needs what other blocks computed — each column's pivot search,
//! the search in the pivot's column when the diagonal is small, and an
//! interchange. The kernel's arithmetic is the CPU backend's operation for
//! operation, so both take the same pivots.

use cudarc::driver::LaunchConfig;

use super::launch::{BLOCK, MAX_BLOCKS, stride};
use super::{Arg, Cuda, n, ptr, ptr_mut, raw_mut};
use crate::backend::{Block, BufferMut, Stored, SymPanel, SymPivoting, Triangle, View, ViewMut, check};
use crate::{Error, Result, Scalar};

/// Threads per block of the panel kernel, and the panel rows each block
/// aims at (one per thread): more blocks only lengthen each barrier.
const PANEL_THREADS: u32 = 256;
const PANEL_ROWS_PER_BLOCK: usize = 256;
/// Blocks the solve with `D` aims at, over rows and right-hand sides.
const SOLVE_BLOCKS: usize = 2048;

/// A piece of the triangle as the panel kernel takes it: offset in the
/// buffer, leading dimension, whether it holds its block transposed.
fn piece(s: &Stored) -> [Arg; 3] {
    [n(s.block.offset), n(s.block.ld), Arg::I32(i32::from(s.transposed))]
}

impl Cuda {
    pub(super) fn ldlt_sytrf_panel<T: Scalar>(
        &self,
        a: &BufferMut<'_, Cuda, T>,
        tri: &Triangle,
        k: usize,
        panel: SymPanel<'_, Cuda, T>,
        pivoting: SymPivoting,
    ) -> Result<()> {
        check::sytrf_panel(a, tri, k, &panel)?;
        let order = tri.cols;
        // ipiv and info hold 1-based rows and columns as 32-bit integers.
        if i32::try_from(order).is_err() {
            return Err(Error::dims("sytrf_panel", format!("order {order} past the 32-bit pivot indices")));
        }
        // The kernel locates every entry from the buffer's start, as `Triangle::locate`.
        let base = raw_mut(&a.view_mut(Block::dense(a.len(), 1))?);
        let blocks = (order - k).div_ceil(PANEL_ROWS_PER_BLOCK).clamp(1, self.sms()?);
        let (pivoted, tol) = match pivoting {
            SymPivoting::BunchKaufman => (1, 0.0),
            SymPivoting::None { tol } => (0, tol),
        };
        // Each block's candidate and |W(imax, j + 1)|, double-buffered, and
        // the barrier's two words, zeroed.
        let (part_v, part_i) = (self.scratch::<f64>(2 * blocks + 2)?, self.scratch::<i64>(2 * blocks)?);
        let bar = self.scratch::<u32>(2)?;
        let (l, w) = (panel.l.block(), panel.w.block());
        let mut args = vec![Arg::Ptr(base), n(order), n(k), n(panel.nb), n(tri.split), Arg::I32(i32::from(tri.joined))];
        for p in [&tri.l11, &tri.l21, &tri.l22] {
            args.extend(piece(p));
        }
        args.extend([
            ptr_mut(&panel.l),
            n(l.ld),
            ptr_mut(&panel.w),
            n(w.ld),
            ptr_mut(&panel.ipiv),
            n(stride(panel.ipiv.block())),
            ptr_mut(&panel.d),
            n(stride(panel.d.block())),
            ptr_mut(&panel.e),
            n(stride(panel.e.block())),
            ptr_mut(&panel.info),
            n(stride(panel.info.block())),
            Arg::I32(pivoted),
            Arg::F64(tol),
            Arg::Ptr(self.slice_ptr(&part_v)),
            Arg::Ptr(self.slice_ptr(&part_i)),
            Arg::Ptr(self.slice_ptr(&bar)),
        ]);
        let cfg =
            LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (PANEL_THREADS, 1, 1), shared_mem_bytes: 0 };
        self.launch("ldlt", &format!("sytrf_panel_{}", T::NAME), cfg, &args)
    }

    pub(super) fn ldlt_block_diagonal_solve<T: Scalar>(
        &self,
        d: View<'_, Cuda, T>,
        e: View<'_, Cuda, T>,
        b: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        check::block_diagonal_solve(&d, &e, &b)?;
        let bb = b.block();
        if bb.rows == 0 || bb.cols == 0 {
            return Ok(());
        }
        // A thread per row; the right-hand sides spread over blockIdx.y when
        // the rows leave the GPU idle.
        let x = bb.rows.div_ceil(BLOCK).clamp(1, MAX_BLOCKS);
        let y = bb.cols.clamp(1, (SOLVE_BLOCKS / x).clamp(1, MAX_BLOCKS));
        let cfg =
            LaunchConfig { grid_dim: (x as u32, y as u32, 1), block_dim: (BLOCK as u32, 1, 1), shared_mem_bytes: 0 };
        let args = [
            ptr(&d),
            n(stride(d.block())),
            ptr(&e),
            n(stride(e.block())),
            ptr_mut(&b),
            n(bb.ld),
            n(bb.rows),
            n(bb.cols),
        ];
        self.launch("ldlt", &format!("block_diagonal_solve_{}", T::NAME), cfg, &args)
    }
}
