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

/// Distance between consecutive entries of a vector block.
fn stride(b: crate::backend::Block) -> usize {
    if b.cols == 1 { 1 } else { b.ld }
}

impl Cuda {
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
