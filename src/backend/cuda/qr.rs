//! The GPU's Householder panel: `kernels/qr.cu`, spread over the SMs with
//! one exchange between blocks through L2 per column; each block's rows in
//! global memory (`householder_*`) or, a row per thread, in registers
//! (`householder_reg_*`).

use cudarc::driver::LaunchConfig;

use super::{Arg, Cuda, n, ptr_mut};
use crate::backend::tuning::QrPanel;
use crate::backend::{ViewMut, check};
use crate::{Result, Scalar};

/// Threads of `householder_*` (`QR_THREADS` in `kernels/qr.cu`): also the
/// most rows a block of the register kernel holds.
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
        let below = a.rows() - a.cols();
        let most = self.sms()?.min(QR_MAX_BLOCKS);
        // The register kernel holds a block's rows a thread each, so needs
        // a block per QR_THREADS rows; the global-memory one is the default
        // until the register one is measured on a GPU.
        let in_registers = below.div_ceil(QR_THREADS as usize).max(1);
        let (kernel, blocks) = match self.tuning().qr_panel {
            Some(QrPanel::Register) if in_registers <= most => ("householder_reg", in_registers),
            _ => ("householder", (below / ROWS_PER_BLOCK).clamp(1, most)),
        };
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
        self.launch("qr", &format!("{kernel}_{}", T::NAME), cfg, &args)
    }
}
