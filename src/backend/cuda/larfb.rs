//! [`Backend::larfb`] on the GPU: for a `C` of a few columns (least-squares
//! right-hand sides), `kernels/larfb.cu`'s two launches; otherwise the
//! level-3 products, which cuBLAS runs well once `C` is wide.

use cudarc::driver::LaunchConfig;

use super::{Arg, Cuda, CudaBuffer, n, ptr, ptr_mut};
use crate::backend::reflector::larfb_by_products;
use crate::backend::{Block, Op, View, ViewMut, check};
use crate::{Result, Scalar};

/// Threads of both kernels (`LARFB_THREADS`).
const LARFB_THREADS: u32 = 256;
/// Rows of a chunk of the update (`LARFB_ROWS`).
const LARFB_ROWS: usize = 64;
/// Widest `T` the kernels take (`LARFB_MAX_KB`).
const LARFB_MAX_KB: usize = 128;
/// Widest `C` the kernels take (the largest `NC` they are built for). On one
/// column the seven level-3 calls took 55 µs for a reflector of 8192 × 128
/// on an H200, mostly launches.
const LARFB_MAX_COLS: usize = 4;

impl Cuda {
    pub(super) fn larfb_impl<T: Scalar>(
        &self,
        v: View<'_, Cuda, T>,
        t: View<'_, Cuda, T>,
        op: Op,
        c: ViewMut<'_, Cuda, T>,
        work: &mut CudaBuffer<T>,
    ) -> Result<()> {
        check::larfb(&v, &t, &c, work)?;
        let (mp, kb, nc) = (v.rows(), v.cols(), c.cols());
        if nc > LARFB_MAX_COLS || kb > LARFB_MAX_KB {
            return larfb_by_products(self, v, t, op, c, work);
        }
        if nc == 0 || kb == 0 {
            return Ok(());
        }
        // The kernels for the fewest columns that hold C's.
        let width = nc.next_power_of_two();
        let nc_arg = Arg::I32(nc as i32);
        let w = ViewMut::new(work, Block::dense(kb, nc))?;
        let grid = |blocks: usize| LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (LARFB_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let (vp, ldv, cp, ldc) = (ptr(&v), n(v.block().ld), ptr_mut(&c), n(c.block().ld));
        let args = [vp, ldv, n(mp), n(kb), cp, ldc, nc_arg, ptr_mut(&w)];
        self.launch("larfb", &format!("larfb_dots_{}_{width}", T::NAME), grid(kb), &args)?;
        // Every SM busy; each block forms op(T)·W again, so no more.
        let blocks = mp.div_ceil(LARFB_ROWS).clamp(1, 2 * self.sms()?);
        let trans = Arg::I32((op == Op::Trans) as i32);
        let args = [vp, ldv, n(mp), n(kb), ptr(&t), n(t.block().ld), trans, ptr_mut(&w), cp, ldc, nc_arg];
        self.launch("larfb", &format!("larfb_update_{}_{width}", T::NAME), grid(blocks), &args)
    }
}
