//! Device memory: what is free, the peak an operation takes, buffers that
//! refuse a request larger than the free memory before the driver is asked,
//! and scratch for reductions.

use std::marker::PhantomData;

use cudarc::driver::sys::CUresult;
use cudarc::driver::{CudaSlice, DevicePtr, DriverError};

use super::{Cuda, CudaBuffer, driver};
use crate::backend::Backend;
use crate::{Elem, Error, Result};

impl Cuda {
    /// `(free, total)` device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().map_err(driver("reading device memory"))
    }

    /// Runs `f` and returns, with its result, the most device memory it had
    /// in use at once beyond what was in use before, in bytes: the high-water
    /// mark of the stream-ordered pool that buffers come from, plus memory
    /// taken outside the pool and still held after `f` (libraries'
    /// workspaces). For benchmarks: other work on the device must be idle.
    pub fn peak_memory<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<(R, usize)> {
        use cudarc::driver::result::{device, mem_pool};
        use cudarc::driver::sys::CUmemPool_attribute as Attr;
        self.synchronize()?;
        // SAFETY: the context's own device; each attribute is a u64.
        let pool = unsafe { device::get_default_mem_pool(self.ctx.cu_device()) }.map_err(driver("memory pool"))?;
        let get = |attr: Attr| -> Result<u64> {
            let mut v = 0u64;
            unsafe { mem_pool::get_attribute(pool, attr, (&mut v as *mut u64).cast()) }
                .map_err(driver("reading the memory pool"))?;
            Ok(v)
        };
        let mut zero = 0u64;
        // Setting the high-water mark to 0 resets it to what is in use now.
        unsafe { mem_pool::set_attribute(pool, Attr::CU_MEMPOOL_ATTR_USED_MEM_HIGH, (&mut zero as *mut u64).cast()) }
            .map_err(driver("resetting the memory pool's high-water mark"))?;
        let (used0, reserved0) =
            (get(Attr::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?, get(Attr::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?);
        let free0 = self.memory()?.0;
        let out = f()?;
        self.synchronize()?;
        let high = get(Attr::CU_MEMPOOL_ATTR_USED_MEM_HIGH)?;
        let reserved1 = get(Attr::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
        let free1 = self.memory()?.0;
        let outside = (free0 as i64 - free1 as i64) - (reserved1 as i64 - reserved0 as i64);
        Ok((out, (high - used0) as usize + outside.max(0) as usize))
    }

    /// `len` entries of device memory, zero-filled or (for the caller to
    /// overwrite at once) not. A request larger than the free memory (or
    /// whose size overflows) is `OutOfDeviceMemory` before the driver is
    /// asked.
    pub(super) fn buffer<E: Elem>(&self, len: usize, zeroed: bool) -> Result<CudaBuffer<E>> {
        let (free, _) = self.memory()?;
        let bytes = len.saturating_mul(size_of::<E>());
        if bytes > free {
            return Err(Error::OutOfDeviceMemory { requested: bytes, free });
        }
        // The driver may still refuse (fragmentation, a pool limit, another
        // process): report what was free when it did, and the message says
        // that the request was refused although it was smaller.
        let oom = || Error::OutOfDeviceMemory { requested: bytes, free: self.memory().map_or(free, |m| m.0) };
        // SAFETY: an uninitialized buffer is written by the caller before any read.
        let mem = if zeroed {
            self.stream.alloc_zeros::<u8>(bytes.max(1))
        } else {
            unsafe { self.stream.alloc::<u8>(bytes.max(1)) }
        };
        let mem = mem.map_err(|e| match e {
            DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY) => oom(),
            e => Error::Device(format!("allocating {bytes} bytes: {e}")),
        })?;
        let ptr = mem.device_ptr(&self.stream).0;
        Ok(CudaBuffer { mem, ptr, len, _elem: PhantomData })
    }

    /// Scratch memory for reductions, outside the `Buffer` types.
    pub(super) fn scratch<E: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        len: usize,
    ) -> Result<CudaSlice<E>> {
        self.stream.alloc_zeros::<E>(len.max(1)).map_err(driver("allocating scratch"))
    }

    pub(super) fn read<E: cudarc::driver::DeviceRepr + Default + Clone>(
        &self,
        s: &CudaSlice<E>,
        len: usize,
    ) -> Result<Vec<E>> {
        let mut host = vec![E::default(); len];
        self.stream.memcpy_dtoh(&s.slice(0..len), &mut host).map_err(driver("reading a result"))?;
        self.stream.synchronize().map_err(driver("synchronizing"))?;
        Ok(host)
    }

    pub(super) fn slice_ptr<E>(&self, s: &CudaSlice<E>) -> u64 {
        s.device_ptr(&self.stream).0
    }
}
