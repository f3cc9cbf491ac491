//! What other GPU libraries need to share memory with gpumat without copies
//! (the DLPack protocol of CuPy and PyTorch): the address of a matrix's
//! entries, the device's ordinal and queue, and a matrix over memory that
//! another library owns.

use std::any::Any;

use super::device::{AnyBackend, Resident};
use super::{Device, Matrix};
use crate::backend::DeviceBuffer;
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

    /// A `rows × cols` column-major matrix over device memory at `ptr` that
    /// `owner` keeps alive: no copy is made, and gpumat never frees it.
    /// On a CPU device this is refused (`InvalidArgument`).
    ///
    /// # Safety
    /// `ptr` must address `rows·cols` entries of `T`, column-major, on this
    /// GPU, valid while `owner` lives, with any work of their producer
    /// ordered before the device's queue (DLPack's `stream` argument); the
    /// matrix's computations write only to matrices they create, but what
    /// the caller writes through the matrix the owner sees.
    pub unsafe fn wrap_device_memory<T: Scalar>(
        &self,
        ptr: u64,
        rows: usize,
        cols: usize,
        owner: Box<dyn Any + Send + Sync>,
    ) -> Result<Matrix<T>> {
        let AnyBackend::Cuda(cuda) = self.backend() else {
            return Err(Error::InvalidArgument(format!("{} holds no device memory to wrap", self.describe())));
        };
        let len = rows
            .checked_mul(cols)
            .ok_or_else(|| Error::InvalidArgument(format!("a {rows}×{cols} matrix is too large")))?;
        // SAFETY: the caller's contract.
        let buffer = unsafe { cuda.wrap_foreign::<T>(ptr, len, owner) };
        Ok(Matrix::from_storage(self.clone(), rows, cols, cuda.wrap(buffer)))
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
