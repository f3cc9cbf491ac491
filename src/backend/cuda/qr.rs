//! The GPU's Householder panel: `kernels/qr.cu`, spread over the SMs with
//! one exchange between blocks through L2 per column; each block's rows in
//! shared memory (`householder_shared_*`) where they fit, else in global
//! memory (`householder_*`).

use cudarc::driver::LaunchConfig;

use super::{Arg, Cuda, n, ptr_mut};
use crate::backend::tuning::QrPanel;
use crate::backend::{HOUSEHOLDER_MAX_COLS, ViewMut, check};
use crate::{Result, Scalar};

/// Threads of `householder_*` (`QR_THREADS` in `kernels/qr.cu`).
const QR_THREADS: u32 = 256;
/// Rows below which a block has too little to do to pay for its share of
/// each column's reduction.
const ROWS_PER_BLOCK: usize = 256;
/// Fewest rows a block of the shared-memory kernel holds unless
/// `GPUMAT_QR_PANEL_ROWS` says: its passes over them are cheap, so more
/// blocks than the global kernel's, each with less of the panel (at 8192
/// rows on an H200, 64 and 256 were slower).
const SHARED_ROWS_PER_BLOCK: usize = 128;
/// The shared memory a block of `householder_shared_*` may take for its
/// rows: sm_90's 227 KiB a block less the kernel's static 20 KiB, rounded
/// down.
const SHARED_BYTES: usize = 200 * 1024;
/// Most blocks one exchange reads (`QR_MAX_BLOCKS`).
const QR_MAX_BLOCKS: usize = 144;

impl Cuda {
    pub(super) fn householder_panel<T: Scalar>(&self, a: ViewMut<'_, Cuda, T>, t: ViewMut<'_, Cuda, T>) -> Result<()> {
        check::householder(&a, &t)?;
        if a.cols() == 0 {
            return Ok(());
        }
        let (below, k) = (a.rows() - a.cols(), a.cols());
        let most = self.sms()?.min(QR_MAX_BLOCKS);
        let (kernel, blocks, rows) = match self.shared_rows::<T>(below, k, most) {
            Some((blocks, rows)) => ("householder_shared", blocks, rows),
            None => ("householder", (below / ROWS_PER_BLOCK).clamp(1, most), 0),
        };
        // LU's exchange cells: the kernel's 2·QR_LEAF a block (QR_LEAF =
        // HOUSEHOLDER_MAX_COLS = 32) fit in LU's 2·(2 + 2·64).
        let (cells, epoch) = self.exchange()?;
        let shared_mem_bytes = (rows * k * size_of::<T>()) as u32;
        let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (QR_THREADS, 1, 1), shared_mem_bytes };
        let mut args = vec![
            ptr_mut(&a),
            n(a.block().ld),
            n(a.rows()),
            n(a.cols()),
            ptr_mut(&t),
            n(t.block().ld),
            Arg::Ptr(cells),
            Arg::Bits32(epoch),
        ];
        if rows > 0 {
            args.push(n(rows));
        }
        self.launch("qr", &format!("{kernel}_{}", T::NAME), cfg, &args)
    }

    /// The blocks and the rows of each for `householder_shared_*` on a leaf
    /// of `below + k` rows and `k` columns, if it is allowed and every row
    /// fits in some block's shared memory, the blocks all resident.
    fn shared_rows<T: Scalar>(&self, below: usize, k: usize, most: usize) -> Option<(usize, usize)> {
        if self.tuning().qr_panel == Some(QrPanel::Global) {
            return None;
        }
        let fewest = self.tuning().qr_panel_rows.unwrap_or(SHARED_ROWS_PER_BLOCK);
        let blocks = (below / fewest).clamp(1, most);
        let rows = below.div_ceil(blocks).max(1);
        (rows * k * size_of::<T>() <= SHARED_BYTES).then_some((blocks, rows))
    }

    /// The widest leaf whose rows fit in shared memory, at least half the
    /// widest the kernels take: a column there costs a few µs, against tens
    /// in global memory once a panel outgrows L2.
    pub(super) fn householder_panel_leaf<T: Scalar>(&self, rows: usize) -> usize {
        let most = self.sms().unwrap_or(1).min(QR_MAX_BLOCKS);
        let widest = HOUSEHOLDER_MAX_COLS;
        [widest, widest / 2]
            .into_iter()
            .find(|&k| self.shared_rows::<T>(rows.saturating_sub(k), k, most).is_some())
            .unwrap_or(widest)
    }
}
