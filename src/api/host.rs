//! Host arrays that a device copies to and from at full speed. On a GPU the
//! memory is page-locked: uploads and downloads to and from it run on the
//! copy engines alone (about 53 GB/s on an H100's PCIe 5 link), where
//! pageable memory must first be copied through staging buffers by the CPU
//! (about 24 GB/s, and cores taken from other work). A batch streamed
//! through the GPU while the CPU takes its own share
//! ([`Coprocessor`](crate::batch::Coprocessor)) gains twice: the GPU's share
//! moves faster and the CPU keeps all its cores. On the CPU a host array is
//! plain memory.
//!
//! Locked pages cannot be swapped out, and allocating them is slow (about a
//! second for 10 GB): allocate host arrays once, for data that moves to and
//! from the device many times, and reuse them.

use std::fmt;
use std::ops::{Deref, DerefMut};

use super::Device;
use super::device::AnyBackend;
use crate::backend::cpu::{check_fits, matrix_bytes};
use crate::backend::cuda::page_locked::{self, PageLocked};
use crate::{Result, Scalar};

/// `len` entries in host memory suited to `device`'s transfers (see the
/// module's docs); derefs to a slice.
pub struct HostArray<T: Scalar> {
    memory: Memory<T>,
}

enum Memory<T> {
    Plain(Vec<T>),
    PageLocked(PageLocked<T>),
}

impl Device {
    /// `len` zeros in host memory that this device copies to and from at
    /// full speed: page-locked on a GPU, plain on the CPU. The size is
    /// checked against the host's available memory before allocation.
    pub fn host_array<T: Scalar>(&self, len: usize) -> Result<HostArray<T>> {
        let memory = match self.backend() {
            AnyBackend::Cuda(cuda) => Memory::PageLocked(cuda.page_locked(len)?),
            AnyBackend::Cpu(_) => {
                check_fits(|| format!("a host array of {len} entries"), matrix_bytes(len, 1, size_of::<T>()))?;
                Memory::Plain(vec![T::ZERO; len])
            }
        };
        Ok(HostArray { memory })
    }

    /// A [`host_array`](Self::host_array) holding a copy of `values`.
    pub fn host_array_from<T: Scalar>(&self, values: &[T]) -> Result<HostArray<T>> {
        let mut array = self.host_array(values.len())?;
        array.copy_from_slice(values);
        Ok(array)
    }
}

impl<T: Scalar> HostArray<T> {
    /// Whether the memory is page-locked (a GPU's host array).
    pub fn is_page_locked(&self) -> bool {
        matches!(self.memory, Memory::PageLocked(_))
    }
}

/// Whether all of `values` lies in one page-locked [`HostArray`], so that a
/// GPU copies it without staging.
pub fn is_page_locked<T: Scalar>(values: &[T]) -> bool {
    // SAFETY: the entries' bytes, initialized, borrowed as `values` is.
    page_locked::holds(unsafe { std::slice::from_raw_parts(values.as_ptr() as *const u8, size_of_val(values)) })
}

impl<T: Scalar> Deref for HostArray<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match &self.memory {
            Memory::Plain(v) => v,
            Memory::PageLocked(p) => p.as_slice(),
        }
    }
}

impl<T: Scalar> DerefMut for HostArray<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.memory {
            Memory::Plain(v) => v,
            Memory::PageLocked(p) => p.as_mut_slice(),
        }
    }
}

impl<T: Scalar> fmt::Debug for HostArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_page_locked() { "page-locked" } else { "plain" };
        write!(f, "HostArray<{}>({} entries, {kind})", T::NAME, self.len())
    }
}
