//! [`Backend::trsv_wide`](crate::backend::Backend::trsv_wide) on the GPU:
//! `kernels/trsv.cu`, every block row of the triangle in flight at once,
//! each with its diagonal tile inverted, and the substitution passed from
//! block to block through flagged cells, where cuBLAS's `trsv` on the
//! widened factor reads twice the bytes and waits at every block of the
//! chain.

use cudarc::driver::LaunchConfig;

use super::{Arg, Cuda, n, ptr, ptr_mut};
use crate::backend::{Diag, Op, View, ViewMut, check};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Rows of a block row and threads of its block (`TRSV_NB`, `TRSV_THREADS`).
const TRSV_NB: usize = 64;
const TRSV_THREADS: u32 = 256;

impl Cuda {
    pub(super) fn trsv_wide_impl<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        diag: Diag,
        a: View<'_, Cuda, T>,
        x: ViewMut<'_, Cuda, f64>,
    ) -> Result<()> {
        let len = check::trsv_wide(uplo, &a, &x)?;
        if len == 0 {
            return Ok(());
        }
        let blocks = len.div_ceil(TRSV_NB);
        // The ticket counter, zero; the cells that publish x.
        let ticket = self.scratch::<i32>(1)?;
        let (cells, epoch) = self.exchange_of(len)?;
        let incx = if x.cols() == 1 { 1 } else { x.block().ld };
        // The inverse of the diagonal tile, in FP64.
        let inverse = (TRSV_NB * (TRSV_NB + 1) * std::mem::size_of::<f64>()) as u32;
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (TRSV_THREADS, 1, 1),
            shared_mem_bytes: inverse,
        };
        let suffix = if op == Op::Trans { "t" } else { "n" };
        let args = [
            ptr(&a),
            n(a.block().ld),
            n(len),
            Arg::I32((uplo == Uplo::Lower) as i32),
            Arg::I32((diag == Diag::Unit) as i32),
            ptr_mut(&x),
            n(incx),
            Arg::Ptr(self.slice_ptr(&ticket)),
            Arg::Ptr(cells),
            Arg::Bits32(epoch),
        ];
        self.launch("trsv", &format!("trsv_wide_{}_{suffix}", T::NAME), cfg, &args)
    }
}
