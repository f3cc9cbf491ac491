//! What other GPU libraries need to share memory with gpumat without copies
//! (the DLPack protocol of CuPy and PyTorch, NumPy's arrays on the host):
//! the address of a matrix's entries, the device's ordinal and queue, and a
//! matrix over memory that another library owns.

use std::any::Any;

use super::device::{AnyBackend, Resident};
use super::{Device, Matrix};
use crate::backend::DeviceBuffer;
use crate::backend::cpu::CpuBuffer;
use crate::{Error, Result, Scalar};

impl Device {
    /// The `CUstream` handle of the device's queue, for a library that
    /// orders its work with gpumat's (DLPack's `stream`); `None` on the CPU.
    pub fn stream_handle(&self) -> Option<usize> {
        match self.backend() {
            AnyBackend::Cuda(cuda) => Some(cuda.stream_handle()),
            AnyBackend::Cpu(_) => None,
        }
    }

    /// The GPU's ordinal (0 on the CPU).
    pub fn ordinal(&self) -> usize {
        match self.backend() {
            AnyBackend::Cuda(cuda) => cuda.ordinal(),
            AnyBackend::Cpu(_) => 0,
        }
    }

    /// A `rows × cols` column-major matrix over the device's memory at `ptr`
    /// (GPU memory on a GPU, host memory on the CPU) that `owner` keeps
    /// alive: no copy is made, and gpumat never frees it.
    ///
    /// # Safety
    /// `ptr` must be aligned for `T` and address `rows·cols` entries of `T`,
    /// column-major, in this device's memory, valid while `owner` lives; on
    /// a GPU any work of their producer must be ordered before the device's
    /// queue (DLPack's `stream` argument), on the CPU no other thread may
    /// write them while the matrix is in use. The matrix's computations
    /// write only to matrices they create, but what the caller writes
    /// through the matrix the owner sees.
    pub unsafe fn wrap_device_memory<T: Scalar>(
        &self,
        ptr: u64,
        rows: usize,
        cols: usize,
        owner: Box<dyn Any + Send + Sync>,
    ) -> Result<Matrix<T>> {
        let len = rows
            .checked_mul(cols)
            .ok_or_else(|| Error::InvalidArgument(format!("a {rows}×{cols} matrix is too large")))?;
        if !ptr.is_multiple_of(align_of::<T>() as u64) {
            return Err(Error::InvalidArgument(format!("address {ptr:#x} is not aligned for its entries")));
        }
        let storage = match self.backend() {
            // SAFETY: the caller's contract.
            AnyBackend::Cuda(cuda) => cuda.wrap(unsafe { cuda.wrap_foreign::<T>(ptr, len, owner) }),
            // SAFETY: the caller's contract.
            AnyBackend::Cpu(cpu) => cpu.wrap(unsafe { CpuBuffer::wrap_foreign(ptr as usize as *mut T, len, owner) }),
        };
        Ok(Matrix::from_storage(self.clone(), rows, cols, storage))
    }
}

impl<T: Scalar> Matrix<T> {
    /// The address of the first entry, in device memory on a GPU and host
    /// memory on the CPU; the entries are column-major with leading
    /// dimension `max(rows, 1)`. Work queued on them is not waited for:
    /// synchronize the device before another library reads them.
    pub fn address(&self) -> Result<usize> {
        self.storage()?;
        Ok(with_backend!(self.device(), be => self.view_on(be)?.buffer().id()))
    }
}
