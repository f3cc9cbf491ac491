//! Batched tridiagonal solves on the GPU (`kernels/tridiagonal.cu`).
//!
//! Without pivoting, systems of 16 rows or more go to the partition
//! kernel: a system's rows staged in shared memory, a thread per chunk of
//! them, the chunks' ends solved by cyclic reduction, and systems too long
//! for one block spread over a cluster of blocks (sm_90 and later). Every
//! entry is then read from memory once and written once, in both layouts.
//! With pivoting, for shorter systems, and for shapes the partition cannot
//! hold, one thread solves each system, the CPU backend's elimination step
//! for step.

use cudarc::driver::LaunchConfig;

use super::launch::{BLOCK, grid_1d};
use super::{Arg, Cuda, n, ptr_mut};
use crate::backend::{SystemLayout, ViewMut, check};
use crate::{Result, Scalar};

/// The shortest systems the partition kernel takes.
const PARTITION_MIN: usize = 16;
/// Rows per chunk (a thread's share) unless a system needs more: 8
/// measured best on the H100 in both precisions.
const CHUNK: usize = 8;
/// The most threads of one system in a block, and of a block.
const MAX_THREADS: usize = 256;
/// The threads of a block of short systems (measured best on the H100
/// against 64 and 256, with chunks of 4, 8, 16 and 32 rows).
const BLOCK_THREADS: usize = 128;
/// The most blocks one system spans (a portable cluster).
const MAX_BLOCKS: usize = 8;
/// The most systems per block (the kernel's PARTITION_MAX_SYSTEMS).
const MAX_SYSTEMS: usize = 32;
/// The most dynamic shared memory a block asks for: two blocks fit on an
/// SM of the H100 (228 KiB), one on the A100's (164 KiB).
const MAX_SHARED: usize = 96 * 1024;

/// How the partition kernel covers a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Partition {
    /// Rows per thread (at least 2).
    pub chunk: usize,
    /// Threads per system in a block (a power of two, at least 2).
    pub threads: usize,
    /// Systems per block.
    pub systems: usize,
    /// Blocks per system: the cluster's size.
    pub blocks: usize,
}

impl Partition {
    /// The partition of `count` systems of order `m`, of `size`-byte
    /// entries, in `layout`, or `None` where it does not fit (too long a
    /// system for `max_blocks` blocks of shared memory).
    pub fn of(layout: SystemLayout, m: usize, count: usize, size: usize, max_blocks: usize) -> Option<Self> {
        let count = count.max(1).next_power_of_two();
        // `systems` to a block: as many threads each as the block allows
        // and chunks of CHUNK rows need, longer chunks where the system
        // would take more than `max_blocks` blocks.
        let fit = |systems: usize| {
            let per_system = 1 << (MAX_THREADS / systems).ilog2();
            let threads = m.div_ceil(CHUNK).next_power_of_two().clamp(2, per_system);
            let mut chunk = CHUNK;
            let mut blocks = m.div_ceil(threads * chunk);
            if blocks > max_blocks {
                chunk = m.div_ceil(threads * max_blocks).next_power_of_two();
                blocks = m.div_ceil(threads * chunk);
            }
            let p = Partition { chunk, threads, systems, blocks };
            (p.shared_bytes(size) <= MAX_SHARED).then_some(p)
        };
        let halves = |from: usize| std::iter::successors(Some(from), |&s| (s > 1).then_some(s / 2));
        match layout {
            // Short systems share a block, up to BLOCK_THREADS threads.
            SystemLayout::Columns => {
                let p = fit(1)?;
                let systems = (BLOCK_THREADS / p.threads).clamp(1, MAX_SYSTEMS).min(count);
                if p.blocks > 1 || systems == 1 {
                    return Some(p);
                }
                halves(systems).find_map(|s| fit(s).filter(|q| q.threads == p.threads)).or(Some(p))
            }
            // Two sectors of neighbouring systems to a block where shared
            // memory allows, so that loads use whole 32-byte sectors; fewer
            // for long systems.
            SystemLayout::Rows => halves((64 / size).min(count)).find_map(fit),
        }
    }

    /// Dynamic shared memory of a block, in bytes: four arrays of rows, a
    /// gap after each chunk, and six of the chunks' equations.
    fn shared_bytes(&self, size: usize) -> usize {
        (4 * (self.threads * self.chunk + self.threads) + 6 * self.threads) * self.systems * size
    }
}

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
            n(count),
            Arg::I32(i32::from(layout == SystemLayout::Rows)),
        ];
        let size = std::mem::size_of::<T>();
        let clusters = self.arch.trim_start_matches("sm_").parse::<u32>().is_ok_and(|a| a >= 90);
        let max_blocks = if clusters { MAX_BLOCKS } else { 1 };
        let partition =
            if pivoting || m < PARTITION_MIN { None } else { Partition::of(layout, m, count, size, max_blocks) };
        if let Some(p) = partition {
            let groups = count.div_ceil(p.systems);
            let cfg = LaunchConfig {
                grid_dim: ((groups * p.blocks) as u32, 1, 1),
                block_dim: ((p.threads * p.systems) as u32, 1, 1),
                shared_mem_bytes: p.shared_bytes(size) as u32,
            };
            args.extend([
                Arg::I32(p.chunk as i32),
                Arg::I32(p.systems as i32),
                Arg::I32(p.blocks as i32),
                ptr_mut(&info),
            ]);
            let name = format!("tridiagonal_partition_{}", T::NAME);
            return if p.blocks > 1 {
                self.launch_clusters("tridiagonal", &name, cfg, p.blocks as u32, &args)
            } else {
                self.launch("tridiagonal", &name, cfg, &args)
            };
        }
        // One system per thread: as many blocks as that takes.
        let cfg = grid_1d(count, count.div_ceil(BLOCK));
        args.extend([Arg::I32(i32::from(pivoting)), ptr_mut(&info)]);
        self.launch("tridiagonal", &format!("tridiagonal_{}", T::NAME), cfg, &args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shape gets whole chunks of at least two rows, covers its
    /// systems, and stays within the limits the kernel was written for.
    #[test]
    fn partitions_cover_their_systems_within_limits() {
        for layout in [SystemLayout::Columns, SystemLayout::Rows] {
            for size in [4, 8] {
                for m in [16, 17, 64, 100, 256, 1000, 1024, 4096, 5003, 8192, 16384, 20000] {
                    for count in [1, 3, 40, 16384] {
                        let Some(p) = Partition::of(layout, m, count, size, MAX_BLOCKS) else {
                            assert!(m > 4096, "{layout:?} {size} {m} {count}: no partition");
                            continue;
                        };
                        let what = format!("{layout:?} size {size} m {m} count {count}: {p:?}");
                        assert!(p.chunk >= 2 && p.threads >= 2, "{what}");
                        assert!([p.chunk, p.threads, p.systems].iter().all(|v| v.is_power_of_two()), "{what}");
                        assert!(p.blocks * p.threads * p.chunk >= m, "{what}");
                        assert!(p.blocks <= MAX_BLOCKS && p.systems <= MAX_SYSTEMS, "{what}");
                        assert!(p.threads * p.systems <= 1024 && p.shared_bytes(size) <= MAX_SHARED, "{what}");
                    }
                }
            }
        }
        // The shapes of the benchmark in columns, f64, each in one pass.
        for (m, blocks) in [(256, 1), (1024, 1), (4096, 2), (16384, 8)] {
            let p = Partition::of(SystemLayout::Columns, m, 1, 8, MAX_BLOCKS).unwrap();
            assert_eq!((p.chunk, p.blocks), (CHUNK, blocks), "{m}");
        }
        assert_eq!(Partition::of(SystemLayout::Columns, 16384, 1, 8, 1), None);
    }
}
