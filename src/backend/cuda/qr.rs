//! The GPU's Householder panel: `kernels/qr.cu`, one block per panel.

use cudarc::driver::LaunchConfig;

use super::{Cuda, n, ptr_mut};
use crate::backend::{ViewMut, check};
use crate::{Result, Scalar};

/// Threads of `householder_*` (`QR_THREADS` in `kernels/qr.cu`).
const QR_THREADS: u32 = 256;

impl Cuda {
    pub(super) fn householder_panel<T: Scalar>(&self, a: ViewMut<'_, Cuda, T>, t: ViewMut<'_, Cuda, T>) -> Result<()> {
        check::householder(&a, &t)?;
        if a.cols() == 0 {
            return Ok(());
        }
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (QR_THREADS, 1, 1), shared_mem_bytes: 0 };
        let args = [ptr_mut(&a), n(a.block().ld), n(a.rows()), n(a.cols()), ptr_mut(&t), n(t.block().ld)];
        self.launch("qr", &format!("householder_{}", T::NAME), cfg, &args)
    }
}
