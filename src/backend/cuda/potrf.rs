//! Cholesky's leaves on the GPU (`kernels/potrf.cu`): a panel at most
//! [`POTRF_LEAF`] wide factored in one launch, a block per `POTRF_LEAF` rows
//! below its diagonal block, two threads per row holding it in registers.

use std::sync::OnceLock;

use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig};

use super::{Arg, BLOCK, Cuda, n, ptr_mut};
use crate::backend::{ViewMut, check};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Order up to which `potrf` uses the leaf kernel, whose threads hold the
/// rows in registers (`LEAF` in `kernels/potrf.cu`).
const POTRF_LEAF: usize = 64;

/// What the leaf kernel keeps on a queue: its count of finished blocks
/// (launches on one queue run in order, so one counter serves them all; it
/// is zero between launches), created on first use.
#[derive(Default)]
pub(super) struct State {
    arrivals: OnceLock<CudaSlice<u32>>,
}

impl Cuda {
    /// `potrf_panel` on a panel `width <= POTRF_LEAF` wide and `len` long,
    /// in one launch: a block per `POTRF_LEAF` rows below the diagonal block,
    /// two threads per row and per row of the diagonal block.
    pub(super) fn potrf_leaf_panel<T: Scalar>(
        &self,
        uplo: Uplo,
        a: ViewMut<'_, Cuda, T>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
        width: usize,
        len: usize,
    ) -> Result<()> {
        let arrivals = match self.potrf.arrivals.get() {
            Some(c) => c,
            None => {
                let c = self.scratch::<u32>(1)?;
                self.potrf.arrivals.get_or_init(|| c)
            }
        };
        let below = len - width;
        let cfg = LaunchConfig {
            grid_dim: (below.div_ceil(POTRF_LEAF).max(1) as u32, 1, 1),
            block_dim: ((if below > 0 { 4 } else { 2 } * POTRF_LEAF) as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let (counter, _) = arrivals.device_ptr(&self.stream);
        let args = [ptr_mut(&a), n(a.block().ld), n(width), n(len), ptr_mut(&info), n(offset), Arg::Ptr(counter)];
        let triangle = if uplo == Uplo::Upper { "upper" } else { "lower" };
        self.launch("potrf", &format!("potrf_panel_{triangle}_{}", T::NAME), cfg, &args)
    }

    /// [`Backend::potrf`](crate::backend::Backend::potrf): the leaf kernel up
    /// to order `POTRF_LEAF`, one thread block's kernel above.
    pub(super) fn potrf_unblocked<T: Scalar>(
        &self,
        uplo: Uplo,
        a: ViewMut<'_, Cuda, T>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
    ) -> Result<()> {
        check::potrf(&a, &info)?;
        if a.rows() == 0 {
            return Ok(());
        }
        if a.rows() <= POTRF_LEAF {
            // The blocked algorithm's leaves: a panel with nothing below.
            let n = a.rows();
            return self.potrf_leaf_panel(uplo, a, info, offset, n, n);
        }
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (BLOCK as u32, 1, 1), shared_mem_bytes: 0 };
        let upper = Arg::I32((uplo == Uplo::Upper) as i32);
        let args = [ptr_mut(&a), n(a.block().ld), n(a.rows()), upper, ptr_mut(&info), n(offset)];
        self.launch("potrf", &format!("potrf_{}", T::NAME), cfg, &args)
    }

    /// [`Backend::potrf_panel`](crate::backend::Backend::potrf_panel): the
    /// leaf kernel up to `POTRF_LEAF` wide, blocks of leaves above.
    pub(super) fn potrf_panel_leaf<T: Scalar>(
        &self,
        uplo: Uplo,
        a: ViewMut<'_, Cuda, T>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
    ) -> Result<()> {
        check::potrf_panel(uplo, &a, &info)?;
        let (width, len) = match uplo {
            Uplo::Lower => (a.cols(), a.rows()),
            Uplo::Upper => (a.rows(), a.cols()),
        };
        if width == 0 {
            return Ok(());
        }
        if width > POTRF_LEAF {
            return crate::backend::potrf_panel_by_blocks(self, uplo, a, info, offset);
        }
        self.potrf_leaf_panel(uplo, a, info, offset, width, len)
    }
}
