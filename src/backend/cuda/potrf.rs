//! Cholesky's and unpivoted LDLᵀ's leaves on the GPU (`kernels/potrf.cu`):
//! a panel at most [`POTRF_LEAF`] wide factored in one launch, a block per
//! `POTRF_LEAF` rows below its diagonal block, two threads per row holding
//! it in registers.

use std::sync::OnceLock;

use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig};

use super::{Arg, Cuda, n, ptr_mut};
use crate::backend::ViewMut;
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Order up to which `potrf` uses the leaf kernel, whose threads hold the
/// rows in registers (`LEAF` in `kernels/potrf.cu`).
pub(super) const POTRF_LEAF: usize = 64;

/// What the leaf kernels keep on a queue (those of Cholesky and LDLᵀ, and
/// LU's without pivoting): their count of finished blocks
/// (launches on one queue run in order, so one counter serves them all; it
/// is zero between launches), created on first use.
#[derive(Default)]
pub(super) struct State {
    arrivals: OnceLock<CudaSlice<u32>>,
}

/// What `ldlt_panel` adds to a leaf: `W`, `D` and the pivot tolerance.
pub(super) type LdltLeaf<'a, T> = (ViewMut<'a, Cuda, T>, ViewMut<'a, Cuda, T>, f64);

impl Cuda {
    /// The queue's count of finished blocks, for the leaf kernels whose last
    /// block writes the diagonal block back.
    pub(super) fn arrivals(&self) -> Result<Arg> {
        let arrivals = match self.potrf.arrivals.get() {
            Some(c) => c,
            None => {
                let c = self.scratch::<u32>(1)?;
                self.potrf.arrivals.get_or_init(|| c)
            }
        };
        let (counter, _) = arrivals.device_ptr(&self.stream);
        Ok(Arg::Ptr(counter))
    }

    /// `potrf_panel`, or with `ldlt = Some((w, d, tol))` `ldlt_panel`, on a
    /// panel `width <= POTRF_LEAF` wide and `len` long, in one launch: a
    /// block per `POTRF_LEAF` rows below the diagonal block, two threads per
    /// row and per row of the diagonal block.
    pub(super) fn leaf_panel<T: Scalar>(
        &self,
        uplo: Uplo,
        a: ViewMut<'_, Cuda, T>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
        (width, len): (usize, usize),
        ldlt: Option<LdltLeaf<'_, T>>,
    ) -> Result<()> {
        let below = len - width;
        let cfg = LaunchConfig {
            grid_dim: (below.div_ceil(POTRF_LEAF).max(1) as u32, 1, 1),
            block_dim: ((if below > 0 { 4 } else { 2 } * POTRF_LEAF) as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut args =
            vec![ptr_mut(&a), n(a.block().ld), n(width), n(len), ptr_mut(&info), n(offset), self.arrivals()?];
        let triangle = if uplo == Uplo::Upper { "upper" } else { "lower" };
        let kind = match &ldlt {
            None => "potrf",
            Some((w, d, tol)) => {
                // W is empty when nothing lies below the diagonal block.
                args.extend([ptr_mut(w), n(w.block().ld.max(1)), ptr_mut(d), Arg::F64(*tol)]);
                "ldlt"
            }
        };
        self.launch("potrf", &format!("{kind}_panel_{triangle}_{}", T::NAME), cfg, &args)
    }
}
