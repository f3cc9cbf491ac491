//! The LU primitives on the GPU: the panel kernels, the leaf step and row
//! interchanges of `kernels/lu*.cu` (a file per panel kernel, `laswp` in
//! `lu.cu`, what they share in `lu.cuh` and `lu_reg.cuh`).

use std::ops::Range;
use std::sync::{Mutex, OnceLock};

use cudarc::driver::{CudaSlice, LaunchConfig};

use super::launch::stride;
use super::{Arg, Cuda, MAX_BLOCKS, grid_1d, n, ptr, ptr_mut, raw};
use crate::backend::tuning::LuPanel;
use crate::backend::{Op, Pivoting, View, ViewMut, check, getrf_leaf_by_parts};
use crate::{Result, Scalar};

/// Threads of the panel kernel's one block (`GETRF_THREADS` in `lu_panel_block.cu`).
const GETRF_THREADS: u32 = 512;
/// Threads per block of `laswp`, exchanges per launch and columns per batch
/// (`LASWP_THREADS`, `LASWP_MAX_K`, `LASWP_COLS` in `lu.cu` and `lu.cuh`).
const LASWP_THREADS: usize = 256;
const LASWP_MAX_K: usize = 512;
const LASWP_COLS: usize = 8;
/// The widest panel and the rows per block (its threads) of the kernel
/// without pivoting (`NOPIV_NB`, `NOPIV_ROWS` in `kernels/lu_panel_nopiv.cu`).
const NOPIV_NB: usize = 64;
const NOPIV_ROWS: usize = 128;
/// Widest panel of the grid-wide kernel (`GRID_MAX_NB` in `lu.cuh`).
const GRID_MAX_NB: usize = 64;
/// Panels with at least this many rows use the grid-wide kernel: below it
/// the barriers cost more than one SM's bandwidth loses.
const GRID_MIN_ROWS: usize = 1024;
/// Rows per block the grid-wide kernel aims at, one per thread.
const GRID_ROWS_PER_BLOCK: usize = 256;
/// Threads per block of the grid-wide kernel.
const GRID_THREADS: u32 = 256;
/// Widest panel of the register kernel (`REG_NB` in `lu_reg.cuh`), the rows per
/// block it aims at, and the most it takes (a thread each; `REG_MAX_THREADS`
/// in `lu_panel_reg.cu`, which bounds the registers).
const REG_NB: usize = 32;
const REG_ROWS_PER_BLOCK: usize = 256;
const REG_MAX_ROWS: usize = 384;
/// Rows per block the cluster kernel aims at, and the most it takes (a
/// thread each; `CL_MAX_THREADS` in `lu_panel_cluster.cu`).
const CLUSTER_ROWS_PER_BLOCK: usize = 256;
const CLUSTER_MAX_ROWS: usize = 512;
/// Cells each thread of the register kernel reads at once (`LL_BATCH` in
/// `lu_panel_reg.cu`): when every block's cells fit, each block reads all of them.
const LL_BATCH: usize = 5;
/// Rows per block the shared-memory kernel aims at: fewer blocks make the
/// exchange of each column cheaper, more make each block's share smaller.
const LL_ROWS_PER_BLOCK: usize = 128;
/// Most dynamic shared memory per block it asks for (the H100 allows 227 KiB).
const LL_MAX_SMEM: usize = 200 * 1024;
/// Threads per block: with several blocks, and with one.
const LL_THREADS: u32 = 256;
const LL_THREADS_ALONE: u32 = 512;

/// Which panel kernel factors a panel.
enum PanelKernel {
    /// `getrf_panel_cluster`: a row per thread in registers, the blocks of
    /// one cluster exchanging each column's candidates in shared memory.
    Cluster { blocks: usize, threads: u32 },
    /// `getrf_panel_reg`: a row per thread in registers, one exchange per
    /// column.
    Reg { blocks: usize, threads: u32 },
    /// `getrf_panel_ll`: rows in shared memory, one exchange per column.
    Ll { blocks: usize },
    /// `getrf_panel_grid`: rows in global memory, a grid barrier per column.
    Grid { blocks: usize },
    /// `getrf_panel`: one block.
    Block,
}

/// 16-byte cells per block and column parity of the shared-memory kernel:
/// candidate, its row, row j.
fn ll_cells(nb: usize) -> usize {
    2 + 2 * nb
}

/// Launches of the panel kernels per set of exchange cells: a launch's flags
/// are `(epoch << 7) + step + 1` (`step < 127`), which must fit in 32 bits.
const EPOCHS: u32 = 1 << 25;

/// The exchange cells of the panel kernels of one queue. Each launch takes
/// the next epoch, so that cells left by earlier launches never pass for its
/// own and need no zeroing in between; the cells are zeroed only when the
/// epochs run out or a launch needs more of them.
struct Exchange {
    cells: CudaSlice<u32>,
    epoch: u32,
}

/// What the panel kernels keep on a queue from launch to launch.
#[derive(Default)]
pub(super) struct State {
    /// The exchange cells, created on first use.
    exchange: Mutex<Option<Exchange>>,
    /// The most blocks of the cluster kernel's cluster (0: none), probed on
    /// first use.
    clusters: OnceLock<usize>,
}

impl Cuda {
    /// Streaming multiprocessors: the most blocks a panel kernel may use,
    /// since all of them must be resident together (and the grid below which
    /// the trsm kernel prefetches).
    pub(super) fn sms(&self) -> Result<usize> {
        let sms = self
            .ctx
            .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(super::driver("reading the number of SMs"))?;
        Ok(sms.max(1) as usize)
    }

    /// The SMs a panel kernel's blocks may count on while the side queue
    /// runs: on a partitioned queue, those outside its side queue's share.
    /// Blocks that wait for each other must all be resident at once, and a
    /// block waiting for an SM the side queue's product holds waits for the
    /// product's tile there to finish.
    pub(super) fn panel_sms(&self) -> Result<usize> {
        let sms = self.sms()?;
        let side = self.side.get().and_then(|s| s.confined_to);
        Ok(side.map_or(sms, |share| sms.saturating_sub(share).max(1)))
    }

    /// The exchange cells (device address) and epoch for the next launch of
    /// a panel kernel on this queue; enough cells for any grid of the GPU
    /// (`2·ll_cells(GRID_MAX_NB)` a block, also what QR's panel needs).
    pub(super) fn exchange(&self) -> Result<(u64, u32)> {
        self.exchange_of(0)
    }

    /// As [`Cuda::exchange`], with at least `cells` 16-byte cells.
    pub(super) fn exchange_of(&self, cells: usize) -> Result<(u64, u32)> {
        let mut slot = self.lu.exchange.lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_none_or(|x| x.epoch + 1 >= EPOCHS || x.cells.len() < 4 * cells) {
            let floor = 2 * self.sms()? * ll_cells(GRID_MAX_NB);
            // Four words a cell.
            *slot = Some(Exchange { cells: self.scratch::<u32>(4 * cells.max(floor))?, epoch: 0 });
        }
        let x = slot.as_mut().expect("just filled");
        x.epoch += 1;
        Ok((self.slice_ptr(&x.cells), x.epoch))
    }

    /// The most blocks of the cluster kernel's one cluster on this GPU (0:
    /// no clusters).
    fn cluster_blocks(&self) -> Result<usize> {
        if let Some(&c) = self.lu.clusters.get() {
            return Ok(c);
        }
        let c = self.cluster_limit("lu_panel_cluster", "getrf_panel_cluster_f64", CLUSTER_MAX_ROWS as u32)?;
        Ok(*self.lu.clusters.get_or_init(|| c))
    }

    /// The panel kernel for a `rows × cols` panel of `elem`-byte entries,
    /// the first that takes it: the cluster kernel (sm_90 and later; rows
    /// fit in the threads of one cluster), the register kernel (rows fit in
    /// the threads of one block per SM), the shared-memory kernel (rows fit
    /// in the shared memory of one block per SM), the grid-wide kernel (tall
    /// panels), the one-block kernel. [`Tuning::lu_panel`] forces one of
    /// them; the cluster, register and shared-memory kernels then take 32
    /// rows per block, so that small panels take the exchanges between
    /// blocks.
    fn panel_kernel(&self, rows: usize, cols: usize, elem: usize) -> Result<PanelKernel> {
        let forced = self.tuning().lu_panel;
        let allowed = |k: LuPanel| forced.is_none_or(|f| f == k);
        let per_block = |default: usize| if forced.is_some() { 32 } else { default };
        let most = self.cluster_blocks()?.min(self.panel_sms()?);
        if cols <= REG_NB && most > 0 && allowed(LuPanel::Cluster) {
            let blocks = rows.div_ceil(per_block(CLUSTER_ROWS_PER_BLOCK)).clamp(1, most);
            let chunk = rows.div_ceil(blocks);
            if chunk <= CLUSTER_MAX_ROWS {
                // At least 64 threads: the interchanges of the other columns
                // take two per pivot.
                return Ok(PanelKernel::Cluster { blocks, threads: chunk.next_multiple_of(32).max(64) as u32 });
            }
        }
        if cols <= REG_NB && allowed(LuPanel::Register) {
            let blocks = rows.div_ceil(per_block(REG_ROWS_PER_BLOCK)).clamp(1, self.panel_sms()?);
            let chunk = rows.div_ceil(blocks);
            if chunk <= REG_MAX_ROWS {
                return Ok(PanelKernel::Reg { blocks, threads: chunk.next_multiple_of(32).max(64) as u32 });
            }
        }
        if cols <= GRID_MAX_NB && allowed(LuPanel::SharedMemory) {
            let bytes = |blocks: usize| rows.div_ceil(blocks) * cols * elem;
            if bytes(1) <= LL_MAX_SMEM && forced.is_none() {
                return Ok(PanelKernel::Ll { blocks: 1 });
            }
            let blocks = rows.div_ceil(per_block(LL_ROWS_PER_BLOCK)).clamp(1, self.panel_sms()?);
            if bytes(blocks) <= LL_MAX_SMEM {
                return Ok(PanelKernel::Ll { blocks });
            }
        }
        if rows < GRID_MIN_ROWS || cols > GRID_MAX_NB || forced == Some(LuPanel::Block) {
            return Ok(PanelKernel::Block);
        }
        Ok(PanelKernel::Grid { blocks: rows.div_ceil(GRID_ROWS_PER_BLOCK).clamp(1, self.panel_sms()?) })
    }

    /// `getrf_leaf`: the register kernel moves the other columns' rows
    /// itself; with the other kernels, `getrf_panel` and `laswp`.
    pub(super) fn lu_getrf_leaf<T: Scalar>(
        &self,
        a: ViewMut<'_, Cuda, T>,
        cols: Range<usize>,
        ipiv: ViewMut<'_, Cuda, i32>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
        pivoting: Pivoting,
    ) -> Result<()> {
        let a = check::getrf_leaf(a, &cols)?;
        if let Pivoting::None { tol } = pivoting
            && cols.len() <= NOPIV_NB
            && a.rows() >= cols.len()
        {
            // No exchanges, so no block waits for another.
            let rows = a.rows();
            let a = a.sub_mut(0, cols.start, rows, cols.len())?;
            check::getrf_panel(&a, &ipiv, &info)?;
            if a.cols() == 0 {
                return Ok(());
            }
            let blocks = (rows - a.cols()).div_ceil(NOPIV_ROWS).max(1);
            let cfg = LaunchConfig {
                grid_dim: (blocks as u32, 1, 1),
                block_dim: (NOPIV_ROWS as u32, 1, 1),
                shared_mem_bytes: 0,
            };
            let args = [
                ptr_mut(&a),
                n(a.block().ld),
                n(rows),
                n(a.cols()),
                ptr_mut(&ipiv),
                n(stride(ipiv.block())),
                ptr_mut(&info),
                n(offset),
                Arg::F64(tol),
                self.arrivals()?,
            ];
            return self.launch("lu_panel_nopiv", &format!("getrf_panel_nopiv_{}", T::NAME), cfg, &args);
        }
        let kernel = self.panel_kernel(a.rows(), cols.len(), size_of::<T>())?;
        // Unpivoted, no row moves.
        let (left, right) = if pivoting == Pivoting::Partial { (cols.start, a.cols() - cols.end) } else { (0, 0) };
        if left + right > 0 && !matches!(kernel, PanelKernel::Reg { .. } | PanelKernel::Cluster { .. }) {
            return getrf_leaf_by_parts(self, a, cols, ipiv, info, offset, pivoting);
        }
        let rows = a.rows();
        let a = a.sub_mut(0, cols.start, rows, cols.len())?;
        check::getrf_panel(&a, &ipiv, &info)?;
        if a.cols() == 0 {
            return Ok(());
        }
        let (partial, tol) = match pivoting {
            Pivoting::Partial => (1, 0.0),
            Pivoting::None { tol } => (0, tol),
        };
        let b = a.block();
        let head = [
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
        match kernel {
            PanelKernel::Cluster { blocks, threads } => {
                let cfg =
                    LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 };
                let mut args = head.to_vec();
                args.extend([n(left), n(right)]);
                self.launch_cluster("lu_panel_cluster", &format!("getrf_panel_cluster_{}", T::NAME), cfg, &args)
            }
            PanelKernel::Reg { blocks, threads } => {
                // Every block's candidate (two 8-byte words), then every
                // block's row when the kernel reads them all, else the pivot
                // row's (doubles).
                let all = blocks * (2 + b.cols) <= LL_BATCH * threads as usize;
                let smem = 8 * (2 * blocks + if all { blocks } else { 1 } * REG_NB);
                let cfg = LaunchConfig {
                    grid_dim: (blocks as u32, 1, 1),
                    block_dim: (threads, 1, 1),
                    shared_mem_bytes: smem as u32,
                };
                let (cells, epoch) = self.exchange()?;
                let mut args = head.to_vec();
                args.extend([Arg::Ptr(cells), Arg::Bits32(epoch), n(left), n(right)]);
                self.launch("lu_panel_reg", &format!("getrf_panel_reg_{}", T::NAME), cfg, &args)
            }
            PanelKernel::Ll { blocks } => {
                let threads = if blocks == 1 { LL_THREADS_ALONE } else { LL_THREADS };
                let cfg = LaunchConfig {
                    grid_dim: (blocks as u32, 1, 1),
                    block_dim: (threads, 1, 1),
                    shared_mem_bytes: (b.rows.div_ceil(blocks) * b.cols * size_of::<T>()) as u32,
                };
                let (cells, epoch) = self.exchange()?;
                let mut args = head.to_vec();
                args.extend([Arg::Ptr(cells), Arg::Bits32(epoch)]);
                self.launch("lu_panel_ll", &format!("getrf_panel_ll_{}", T::NAME), cfg, &args)
            }
            PanelKernel::Grid { blocks } => {
                // Double-buffered candidates and rows (f64 holds f32 as
                // well), and the barrier's two words, zeroed.
                let (part_v, part_i) = (self.scratch::<f64>(2 * blocks)?, self.scratch::<i64>(2 * blocks)?);
                let (stage, bar) = (self.scratch::<f64>(2 * (blocks + 1) * GRID_MAX_NB)?, self.scratch::<u32>(2)?);
                let cfg = LaunchConfig {
                    grid_dim: (blocks as u32, 1, 1),
                    block_dim: (GRID_THREADS, 1, 1),
                    shared_mem_bytes: 0,
                };
                let mut args = head.to_vec();
                args.extend([
                    Arg::Ptr(self.slice_ptr(&part_v)),
                    Arg::Ptr(self.slice_ptr(&part_i)),
                    Arg::Ptr(self.slice_ptr(&stage)),
                    Arg::Ptr(self.slice_ptr(&bar)),
                ]);
                self.launch("lu_panel_grid", &format!("getrf_panel_grid_{}", T::NAME), cfg, &args)
            }
            PanelKernel::Block => {
                let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (GETRF_THREADS, 1, 1), shared_mem_bytes: 0 };
                self.launch("lu_panel_block", &format!("getrf_panel_{}", T::NAME), cfg, &head)
            }
        }
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
        // One block per SM (its registers allow no more), each going round
        // many batches of columns: the plan of the exchanges, which each
        // block makes first, costs about as much as ten batches.
        let blocks = b.cols.div_ceil(LASWP_COLS).clamp(1, self.sms()?);
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (LASWP_THREADS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        // Pieces of at most LASWP_MAX_K exchanges, in the order of the whole.
        let mut pieces: Vec<usize> = (0..k).step_by(LASWP_MAX_K).collect();
        if reverse {
            pieces.reverse();
        }
        let incp = stride(ipiv.block());
        for first in pieces {
            let len = LASWP_MAX_K.min(k - first);
            let args = [
                ptr_mut(&a),
                n(b.ld),
                n(b.rows),
                n(b.cols),
                Arg::Ptr(raw(&ipiv) + (first * incp * size_of::<i32>()) as u64),
                n(incp),
                n(first),
                n(len),
                n(shift),
                Arg::I32(reverse as i32),
            ];
            self.launch("lu", &format!("laswp_{}", T::NAME), cfg, &args)?;
        }
        Ok(())
    }

    /// [`Backend::permute_rows`](crate::backend::Backend::permute_rows): a
    /// copy of `B`, then one gather (or scatter) from it back into `B`.
    pub(super) fn lu_permute_rows<T: Scalar>(
        &self,
        perm: View<'_, Cuda, i32>,
        inverse: bool,
        b: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        use crate::backend::Backend;
        check::permute_rows(&perm, &b)?;
        let (rows, cols) = (b.rows(), b.cols());
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        let mut copy = self.buffer::<T>(rows * cols, false)?;
        self.copy(b.rb(), ViewMut::dense(&mut copy, rows, cols)?)?;
        let args = [
            Arg::Ptr(copy.ptr),
            n(rows),
            ptr_mut(&b),
            n(b.block().ld),
            n(rows),
            n(cols),
            ptr(&perm),
            n(stride(perm.block())),
            Arg::I32(inverse as i32),
        ];
        self.launch("lu", &format!("permute_rows_{}", T::NAME), grid_1d(rows * cols, MAX_BLOCKS), &args)
    }

    /// [`Backend::butterfly`](crate::backend::Backend::butterfly): one pass,
    /// a thread to each quad of rows by quad of columns.
    pub(super) fn lu_butterfly<T: Scalar>(
        &self,
        left: Option<(u64, Op)>,
        right: Option<u64>,
        a: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        let b = a.block();
        if b.rows == 0 || b.cols == 0 || (left.is_none() && right.is_none()) {
            return Ok(());
        }
        let groups = |len: usize, on: bool| if on { len.div_ceil(4) } else { len };
        let threads = groups(b.rows, left.is_some()) * groups(b.cols, right.is_some());
        let args = [
            ptr_mut(&a),
            n(b.ld),
            n(b.rows),
            n(b.cols),
            Arg::Bits64(left.map_or(0, |l| l.0)),
            Arg::I32(left.is_some() as i32),
            Arg::I32(matches!(left, Some((_, Op::Trans))) as i32),
            Arg::Bits64(right.unwrap_or(0)),
            Arg::I32(right.is_some() as i32),
        ];
        self.launch("butterfly", &format!("butterfly_{}", T::NAME), grid_1d(threads, MAX_BLOCKS), &args)
    }
}
