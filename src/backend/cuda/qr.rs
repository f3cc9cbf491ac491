//! The GPU's Householder panel: `kernels/qr.cu`, spread over the SMs with
//! one exchange between blocks through L2 per column.

use cudarc::driver::LaunchConfig;

use super::{Arg, Cuda, n, ptr_mut};
use crate::backend::{ViewMut, check};
use crate::{Result, Scalar};

/// Threads of `householder_*` (`QR_THREADS` in `kernels/qr.cu`).
const QR_THREADS: u32 = 256;
/// Rows below which a block has too little to do to pay for its share of
/// each column's reduction.
const ROWS_PER_BLOCK: usize = 256;
/// Most blocks one exchange reads (`QR_MAX_BLOCKS`).
const QR_MAX_BLOCKS: usize = 144;

impl Cuda {
    pub(super) fn householder_panel<T: Scalar>(&self, a: ViewMut<'_, Cuda, T>, t: ViewMut<'_, Cuda, T>) -> Result<()> {
        check::householder(&a, &t)?;
        if a.cols() == 0 {
            return Ok(());
        }
        let blocks = ((a.rows() - a.cols()) / ROWS_PER_BLOCK).clamp(1, self.sms()?.min(QR_MAX_BLOCKS));
        // LU's exchange cells: the kernel's 2·QR_LEAF a block (QR_LEAF =
        // HOUSEHOLDER_MAX_COLS = 32) fit in LU's 2·(2 + 2·64).
        let (cells, epoch) = self.exchange()?;
        let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (QR_THREADS, 1, 1), shared_mem_bytes: 0 };
        let args = [
            ptr_mut(&a),
            n(a.block().ld),
            n(a.rows()),
            n(a.cols()),
            ptr_mut(&t),
            n(t.block().ld),
            Arg::Ptr(cells),
            Arg::Bits32(epoch),
        ];
        self.launch("qr", &format!("householder_{}", T::NAME), cfg, &args)
    }
}
