//! Batched tridiagonal solves on the GPU (`kernels/tridiagonal.cu`). One
//! thread per system, the CPU backend's elimination step for step, where
//! systems are rows of the block (a warp's loads then fall together) or
//! pivoting is asked for; without pivoting, long systems in columns get a
//! block each (up to 1024 threads): Thomas on chunks of 8 or more rows per thread, cyclic
//! reduction on the chunks' ends.

use cudarc::driver::LaunchConfig;

use super::launch::{BLOCK, grid_1d};
use super::{Arg, Cuda, n, ptr_mut};
use crate::backend::{SystemLayout, ViewMut, check};
use crate::{Result, Scalar};

/// The shortest systems given a block each (at least 32 threads of 2 rows).
const HYBRID_MIN: usize = 64;

impl Cuda {
    pub(super) fn batched_tridiagonal<T: Scalar>(
        &self,
        layout: SystemLayout,
        pivoting: bool,
        (dl, d, du): (ViewMut<'_, Cuda, T>, ViewMut<'_, Cuda, T>, ViewMut<'_, Cuda, T>),
        b: ViewMut<'_, Cuda, T>,
        info: ViewMut<'_, Cuda, i32>,
    ) -> Result<()> {
        let (m, count) = check::tridiagonal(layout, &dl, &d, &du, &b, &info)?;
        if m == 0 || count == 0 {
            return Ok(());
        }
        if i32::try_from(count).is_err() {
            return Err(crate::Error::dims("tridiagonal_solve", format!("{count} systems, past the GPU's grid")));
        }
        let mut args = vec![
            ptr_mut(&dl),
            n(dl.block().ld),
            ptr_mut(&d),
            n(d.block().ld),
            ptr_mut(&du),
            n(du.block().ld),
            ptr_mut(&b),
            n(b.block().ld),
            n(m),
        ];
        if layout == SystemLayout::Columns && !pivoting && m >= HYBRID_MIN {
            // A power of two of threads, each with 8 rows or more, at most 1024.
            let threads = (m / 8).clamp(32, 1024).next_power_of_two().min(1024);
            let threads = if threads * 8 > m { threads / 2 } else { threads }.max(32);
            let cfg = LaunchConfig {
                grid_dim: (count as u32, 1, 1),
                block_dim: (threads as u32, 1, 1),
                shared_mem_bytes: (8 * threads * std::mem::size_of::<T>()) as u32,
            };
            args.push(ptr_mut(&info));
            return self.launch("tridiagonal", &format!("tridiagonal_hybrid_{}", T::NAME), cfg, &args);
        }
        // One system per thread: as many blocks as that takes.
        let cfg = grid_1d(count, count.div_ceil(BLOCK));
        let rows = i32::from(layout == SystemLayout::Rows);
        args.extend([n(count), Arg::I32(rows), Arg::I32(i32::from(pivoting)), ptr_mut(&info)]);
        self.launch("tridiagonal", &format!("tridiagonal_{}", T::NAME), cfg, &args)
    }
}
