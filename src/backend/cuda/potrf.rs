//! Cholesky's leaves on the GPU (`kernels/potrf.cu`): a panel at most
//! [`POTRF_LEAF`] wide factored in one launch, a block per `POTRF_LEAF` rows
//! below its diagonal block, two threads per row holding it in registers.

use std::sync::OnceLock;

use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig};

use super::{Arg, Cuda, n, ptr_mut};
use crate::backend::ViewMut;
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Order up to which `potrf` uses the leaf kernel, whose threads hold the
/// rows in registers (`LEAF` in `kernels/potrf.cu`).
pub(super) const POTRF_LEAF: usize = 64;

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
}
