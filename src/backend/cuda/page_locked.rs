//! Page-locked host memory: the GPU's copy engines read and write it
//! directly, at about twice the rate of pageable memory, which has to pass
//! through page-locked staging buffers by the CPU's own copies
//! (`transfer`). Allocations are portable (page-locked for every context)
//! and listed for the process, so that a transfer can tell whether a host
//! slice lies inside one and skip the staging.

use std::marker::PhantomData;
use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use cudarc::driver::PinnedHostSlice;
use cudarc::driver::sys::CU_MEMHOSTALLOC_PORTABLE;
use rayon::prelude::*;

use super::{Cuda, driver};
use crate::backend::cpu::{available_memory, check_fits, matrix_bytes};
use crate::{Elem, Error, Result};

/// The address ranges of the live allocations.
static LOCKED: Mutex<Vec<Range<usize>>> = Mutex::new(Vec::new());

/// Whether all of `bytes` lies in one page-locked allocation of gpumat's.
pub fn holds(bytes: &[u8]) -> bool {
    let range = bytes.as_ptr_range();
    let (start, end) = (range.start as usize, range.end as usize);
    let locked = LOCKED.lock().unwrap_or_else(PoisonError::into_inner);
    locked.iter().any(|r| r.start <= start && end <= r.end)
}

/// `len` zeros of `E` in page-locked host memory, freed when dropped.
pub struct PageLocked<E> {
    /// Owns the memory, freed when dropped.
    _mem: PinnedHostSlice<u8>,
    ptr: *mut E,
    len: usize,
    _elem: PhantomData<E>,
}

// SAFETY: the memory is owned, as a `Vec<E>`'s is.
unsafe impl<E: Send> Send for PageLocked<E> {}
// SAFETY: shared access only reads.
unsafe impl<E: Sync> Sync for PageLocked<E> {}

impl<E> PageLocked<E> {
    pub fn as_slice(&self) -> &[E] {
        // SAFETY: `len` initialized entries at `ptr`, owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [E] {
        // SAFETY: as in `as_slice`, borrowed mutably through `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<E> Drop for PageLocked<E> {
    fn drop(&mut self) {
        // Off the list before `_mem` frees the memory.
        let start = self.ptr as usize;
        LOCKED.lock().unwrap_or_else(PoisonError::into_inner).retain(|r| r.start != start);
    }
}

impl Cuda {
    /// `len` zeros of `E` in page-locked host memory, after checking that
    /// they fit in the host's available memory (locked pages cannot be
    /// swapped, so an allocation past it would starve the machine).
    pub fn page_locked<E: Elem>(&self, len: usize) -> Result<PageLocked<E>> {
        let what = || format!("{len} entries of page-locked host memory");
        // No allocation reaches isize::MAX bytes, whatever the host reports.
        let Some(bytes) = matrix_bytes(len, 1, size_of::<E>()).filter(|&b| b <= isize::MAX as usize) else {
            return Err(Error::OutOfHostMemory { what: what(), needed: usize::MAX, available: available_memory() });
        };
        check_fits(what, Some(bytes))?;
        // SAFETY: plain bytes, zeroed below before anything reads them.
        let mut mem = unsafe { self.ctx.alloc_pinned_with_flags::<u8>(bytes.max(1), CU_MEMHOSTALLOC_PORTABLE) }
            .map_err(driver("allocating page-locked host memory"))?;
        let base = mem.as_mut_ptr().map_err(driver("allocating page-locked host memory"))?;
        // SAFETY: `bytes` bytes at `base` belong to `mem`; the driver's
        // allocations are page-aligned, so aligned for `E`.
        let all = unsafe { std::slice::from_raw_parts_mut(base, bytes) };
        all.par_chunks_mut(1 << 20).for_each(|c| c.fill(0));
        LOCKED.lock().unwrap_or_else(PoisonError::into_inner).push(base as usize..base as usize + bytes);
        Ok(PageLocked { _mem: mem, ptr: base as *mut E, len, _elem: PhantomData })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_ranges_hold_only_slices_inside_them() {
        let backing = [0u8; 64];
        let start = backing.as_ptr() as usize;
        LOCKED.lock().unwrap().push(start + 8..start + 40);
        assert!(holds(&backing[8..40]));
        assert!(holds(&backing[16..24]));
        assert!(!holds(&backing[0..16]));
        assert!(!holds(&backing[32..48]));
        LOCKED.lock().unwrap().retain(|r| r.start != start + 8);
        assert!(!holds(&backing[8..40]));
    }
}
