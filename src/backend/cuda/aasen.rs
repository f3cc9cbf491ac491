//! Aasen's factorization on the GPU, `kernels/aasen.cu`: the panel's column
//! recurrence as one grid-wide kernel whose blocks exchange one candidate
//! and one row a step through L2, flag and data in one store (a pivot is
//! searched in one column, as partial pivoting's, and each block keeps its
//! rows of the panel in shared memory), and the interchanges after it as
//! four small kernels that read every moved entry before any is written.

use cudarc::driver::LaunchConfig;

use super::launch::{BLOCK, MAX_BLOCKS, stride};
use super::{Arg, Cuda, n, ptr_mut, raw_mut};
use crate::backend::{AasenPanel, Backend, Block, BufferMut, Stored, Triangle, ViewMut, check};
use crate::{Result, Scalar};

/// Threads per block of the panel kernel, and the panel rows each block
/// aims at: few enough that a block's rows of `L` and `Y` stay in its
/// shared memory (measured on the H100: 128 against 256, 10 % faster).
const PANEL_THREADS: u32 = 256;
const PANEL_ROWS_PER_BLOCK: usize = 128;
/// The shared memory a panel block may take for its rows of `L` and `Y`.
const RESIDENT_BYTES: usize = 200 * 1024;
/// The most blocks of a panel: the first warp of each reads every block's
/// candidate, `AASEN_POLLS` (`kernels/aasen.cu`) a lane.
const MAX_PANEL_BLOCKS: usize = 32 * 5;

/// A piece of the triangle as the kernels take it: offset in the buffer,
/// leading dimension, whether it holds its block transposed.
fn piece(s: &Stored) -> [Arg; 3] {
    [n(s.block.offset), n(s.block.ld), Arg::I32(i32::from(s.transposed))]
}

/// The matrix from the buffer's start, its order, `k`, `nb` and where the
/// triangle lies: the first arguments of every kernel of `aasen.cu`.
fn matrix_args<T: Scalar>(a: &BufferMut<'_, Cuda, T>, tri: &Triangle, k: usize, nb: usize) -> Result<Vec<Arg>> {
    let base = raw_mut(&a.view_mut(Block::dense(a.len(), 1))?);
    let mut args = vec![Arg::Ptr(base), n(tri.cols), n(k), n(nb), n(tri.split), Arg::I32(i32::from(tri.joined))];
    for p in [&tri.l11, &tri.l21, &tri.l22] {
        args.extend(piece(p));
    }
    Ok(args)
}

impl Cuda {
    pub(super) fn aasen_panel_kernel<T: Scalar>(
        &self,
        a: &BufferMut<'_, Cuda, T>,
        tri: &Triangle,
        k: usize,
        panel: AasenPanel<'_, Cuda, T>,
    ) -> Result<()> {
        let order = check::aasen_panel(a, tri, k, &panel)?;
        let (m, nb) = (order - k, panel.nb);
        let blocks = m.div_ceil(PANEL_ROWS_PER_BLOCK).clamp(1, self.sms()?.min(MAX_PANEL_BLOCKS));
        let chunk = m.div_ceil(blocks);
        let base = size_of::<T>() * (2 * chunk + 2 * (nb + 2)) + chunk;
        let rows = size_of::<T>() * chunk * (2 * nb + 3);
        let resident = base + rows <= RESIDENT_BYTES;
        let shared = if resident { base + rows } else { base };
        // Each block's candidate (|v|, row) and its row, double-buffered.
        let (cells, epoch) = self.exchange_of(2 * blocks * (2 * nb + 7))?;
        let (l, y) = (panel.l.block(), panel.y.block());
        let mut args = matrix_args(a, tri, k, nb)?;
        args.extend([
            ptr_mut(&panel.l),
            n(l.ld),
            ptr_mut(&panel.y),
            n(y.ld),
            ptr_mut(&panel.rows),
            n(stride(panel.rows.block())),
            ptr_mut(&panel.d),
            n(stride(panel.d.block())),
            ptr_mut(&panel.e),
            n(stride(panel.e.block())),
            Arg::I32(i32::from(resident)),
            Arg::Ptr(cells),
            Arg::Bits32(epoch),
        ]);
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (PANEL_THREADS, 1, 1),
            shared_mem_bytes: shared as u32,
        };
        self.launch("aasen", &format!("aasen_panel_{}", T::NAME), cfg, &args)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn aasen_interchange_kernels<T: Scalar>(
        &self,
        a: &BufferMut<'_, Cuda, T>,
        tri: &Triangle,
        k: usize,
        panel: AasenPanel<'_, Cuda, T>,
        ipiv: ViewMut<'_, Cuda, i32>,
        x: ViewMut<'_, Cuda, T>,
        y: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        let order = check::aasen_interchange(a, tri, k, &panel, &ipiv, &x, &y)?;
        let (m, nb) = (order - k, panel.nb);
        let steps = nb.min(m - 1);
        let at = self.scratch::<i32>(m)?;
        let (cand, valid) = (self.scratch::<i32>(2 * nb)?, self.scratch::<i32>(2 * nb)?);
        let p = |s: &cudarc::driver::CudaSlice<i32>| Arg::Ptr(self.slice_ptr(s));
        // The placement follows the first `steps + 1` positions and rows, the
        // positions below them that receive a row, the candidates and the
        // rows chosen in shared memory.
        let one = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (BLOCK as u32, 1, 1),
            shared_mem_bytes: (size_of::<i32>() * (2 * (steps + 1) + 5 * steps)) as u32,
        };
        let args = [
            ptr_mut(&panel.rows),
            n(stride(panel.rows.block())),
            n(order),
            n(k),
            n(nb),
            ptr_mut(&ipiv),
            n(stride(ipiv.block())),
            p(&at),
            p(&cand),
            p(&valid),
        ];
        self.launch("aasen", "aasen_placement", one, &args)?;
        if steps > 0 {
            // The moved rows' entries left of the panel and in the trailing
            // matrix, read out, then written in their new places.
            let (mut left, mut trailing) = (self.alloc::<T>((2 * nb * k).max(1))?, self.alloc::<T>(2 * nb * m)?);
            let (left, trailing) =
                (ViewMut::dense(&mut left, (2 * nb * k).max(1), 1)?, ViewMut::dense(&mut trailing, 2 * nb * m, 1)?);
            let blocks = order.div_ceil(BLOCK).clamp(1, MAX_BLOCKS);
            let cfg = LaunchConfig {
                grid_dim: (blocks as u32, (2 * steps) as u32, 1),
                block_dim: (BLOCK as u32, 1, 1),
                shared_mem_bytes: 0,
            };
            for name in ["aasen_gather", "aasen_scatter"] {
                let mut args = matrix_args(a, tri, k, nb)?;
                args.extend([p(&at), p(&cand), p(&valid), ptr_mut(&left), ptr_mut(&trailing)]);
                self.launch("aasen", &format!("{name}_{}", T::NAME), cfg, &args)?;
            }
        }
        let (l, yw) = (panel.l.block(), panel.y.block());
        let mut args = matrix_args(a, tri, k, nb)?;
        args.extend([
            p(&at),
            ptr_mut(&panel.l),
            n(l.ld),
            ptr_mut(&panel.y),
            n(yw.ld),
            ptr_mut(&panel.d),
            n(stride(panel.d.block())),
            ptr_mut(&x),
            n(x.block().ld.max(1)),
            ptr_mut(&y),
            n(y.block().ld.max(1)),
        ]);
        // A block column of the grid for each column placed.
        let blocks = m.div_ceil(BLOCK).clamp(1, MAX_BLOCKS);
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, (nb + 2).min(MAX_BLOCKS) as u32, 1),
            block_dim: (BLOCK as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        self.launch("aasen", &format!("aasen_place_{}", T::NAME), cfg, &args)
    }
}
