//! The LU primitives on the GPU: the panel kernel and row interchanges of
//! `kernels/lu.cu`.

use cudarc::driver::LaunchConfig;

use super::{Arg, Cuda, MAX_BLOCKS, n, ptr, ptr_mut};
use crate::backend::{Pivoting, View, ViewMut, check};
use crate::{Result, Scalar};

/// Threads of the panel kernel's one block (`GETRF_THREADS` in `lu.cu`).
const GETRF_THREADS: u32 = 512;
/// Threads per block of `laswp` (`LASWP_THREADS` in `lu.cu`).
const LASWP_THREADS: usize = 128;
/// Widest panel of the grid-wide kernel (`GRID_MAX_NB` in `lu.cu`).
const GRID_MAX_NB: usize = 64;
/// Panels with at least this many rows use the grid-wide kernel: below it
/// the barriers cost more than one SM's bandwidth loses.
const GRID_MIN_ROWS: usize = 1024;
/// Rows per block the grid-wide kernel aims at, one per thread.
const GRID_ROWS_PER_BLOCK: usize = 256;
/// Threads per block of the grid-wide kernel.
const GRID_THREADS: u32 = 256;

/// Distance between consecutive entries of a vector block.
fn stride(b: crate::backend::Block) -> usize {
    if b.cols == 1 { 1 } else { b.ld }
}

impl Cuda {
    /// Blocks for the panel kernel: 1 for the one-block kernel, more for the
    /// grid-wide one on tall panels — at most one per SM, so that all are
    /// resident together. `GPUMAT_LU_PANEL=block` forces the one-block kernel.
    fn panel_blocks(&self, rows: usize, cols: usize) -> Result<usize> {
        if rows < GRID_MIN_ROWS || cols > GRID_MAX_NB || std::env::var("GPUMAT_LU_PANEL").is_ok_and(|v| v == "block") {
            return Ok(1);
        }
        let sms = self
            .ctx
            .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(|e| crate::Error::Device(format!("reading the number of SMs: {e}")))?;
        Ok(rows.div_ceil(GRID_ROWS_PER_BLOCK).clamp(1, sms.max(1) as usize))
    }

    pub(super) fn lu_getrf_panel<T: Scalar>(
        &self,
        a: ViewMut<'_, Cuda, T>,
        ipiv: ViewMut<'_, Cuda, i32>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
        pivoting: Pivoting,
    ) -> Result<()> {
        check::getrf_panel(&a, &ipiv, &info)?;
        if a.cols() == 0 {
            return Ok(());
        }
        let (partial, tol) = match pivoting {
            Pivoting::Partial => (1, 0.0),
            Pivoting::None { tol } => (0, tol),
        };
        let b = a.block();
        let blocks = self.panel_blocks(b.rows, b.cols)?;
        if blocks > 1 {
            // Double-buffered candidates and rows (f64 holds f32 as well),
            // and the barrier's two words, zeroed.
            let (part_v, part_i) = (self.scratch::<f64>(2 * blocks)?, self.scratch::<i64>(2 * blocks)?);
            let (stage, bar) = (self.scratch::<f64>(2 * (blocks + 1) * GRID_MAX_NB)?, self.scratch::<u32>(2)?);
            let cfg =
                LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (GRID_THREADS, 1, 1), shared_mem_bytes: 0 };
            let args = [
                ptr_mut(&a),
                n(b.ld),
                n(b.rows),
                n(b.cols),
                ptr_mut(&ipiv),
                n(stride(ipiv.block())),
                ptr_mut(&info),
                n(offset),
                Arg::I32(partial),
                Arg::F64(tol),
                Arg::Ptr(self.slice_ptr(&part_v)),
                Arg::Ptr(self.slice_ptr(&part_i)),
                Arg::Ptr(self.slice_ptr(&stage)),
                Arg::Ptr(self.slice_ptr(&bar)),
            ];
            return self.launch("lu", &format!("getrf_panel_grid_{}", T::NAME), cfg, &args);
        }
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (GETRF_THREADS, 1, 1), shared_mem_bytes: 0 };
        let args = [
            ptr_mut(&a),
            n(b.ld),
            n(b.rows),
            n(b.cols),
            ptr_mut(&ipiv),
            n(stride(ipiv.block())),
            ptr_mut(&info),
            n(offset),
            Arg::I32(partial),
            Arg::F64(tol),
        ];
        self.launch("lu", &format!("getrf_panel_{}", T::NAME), cfg, &args)
    }

    pub(super) fn lu_laswp<T: Scalar>(
        &self,
        a: ViewMut<'_, Cuda, T>,
        ipiv: View<'_, Cuda, i32>,
        shift: usize,
        reverse: bool,
    ) -> Result<()> {
        let k = check::laswp(&a, &ipiv)?;
        let b = a.block();
        if k == 0 || b.rows == 0 || b.cols == 0 {
            return Ok(());
        }
        let blocks = b.cols.div_ceil(LASWP_THREADS).clamp(1, MAX_BLOCKS);
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (LASWP_THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let args = [
            ptr_mut(&a),
            n(b.ld),
            n(b.rows),
            n(b.cols),
            ptr(&ipiv),
            n(stride(ipiv.block())),
            n(k),
            n(shift),
            Arg::I32(reverse as i32),
        ];
        self.launch("lu", &format!("laswp_{}", T::NAME), cfg, &args)
    }
}
