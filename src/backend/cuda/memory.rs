//! Device memory: what is free, the peak an operation takes, buffers that
//! refuse a request larger than the free memory before the driver is asked,
//! and scratch for reductions.

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::sync::atomic::Ordering;

use cudarc::driver::sys::CUresult;
use cudarc::driver::{CudaSlice, DevicePtr, DriverError};

use super::{Cuda, CudaBuffer, driver};
use crate::backend::Backend;
use crate::{Elem, Error, Result};

impl Cuda {
    /// `(free, total)` device memory in bytes: what the driver has free and
    /// what the stream-ordered pool holds for reuse.
    pub fn memory(&self) -> Result<(usize, usize)> {
        use cudarc::driver::sys::CUmemPool_attribute as Attr;
        let (free, total) = self.driver_memory()?;
        let cached = self
            .pool_attribute(Attr::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?
            .saturating_sub(self.pool_attribute(Attr::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?);
        Ok((free + cached as usize, total))
    }

    /// `(free, total)` as the driver counts them, the pool's reserve as used.
    fn driver_memory(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().map_err(driver("reading device memory"))
    }

    /// The device's stream-ordered memory pool, which buffers come from.
    fn pool(&self) -> Result<cudarc::driver::sys::CUmemoryPool> {
        // SAFETY: the context's own device.
        unsafe { cudarc::driver::result::device::get_default_mem_pool(self.ctx.cu_device()) }
            .map_err(driver("memory pool"))
    }

    fn pool_attribute(&self, attr: cudarc::driver::sys::CUmemPool_attribute) -> Result<u64> {
        let mut v = 0u64;
        // SAFETY: the attributes read here are u64.
        unsafe { cudarc::driver::result::mem_pool::get_attribute(self.pool()?, attr, (&mut v as *mut u64).cast()) }
            .map_err(driver("reading the memory pool"))?;
        Ok(v)
    }

    /// Keeps freed memory mapped in the pool across synchronizations: by
    /// default the pool gives it back to the driver at every one, and
    /// mapping gigabytes again costs milliseconds each call of a solve that
    /// allocates its copies. [`buffer`](Self::buffer) hands the reserve back
    /// when the driver refuses a request.
    pub(super) fn keep_pool(&self) -> Result<()> {
        use cudarc::driver::sys::CUmemPool_attribute as Attr;
        let mut keep = u64::MAX;
        // SAFETY: the release threshold is a u64.
        unsafe {
            cudarc::driver::result::mem_pool::set_attribute(
                self.pool()?,
                Attr::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut keep as *mut u64).cast(),
            )
        }
        .map_err(driver("keeping the memory pool's reserve"))
    }

    /// Makes this GPU one of several that one process drives through NCCL.
    /// Unmapping device memory, creating a stream's cuBLAS handle or pinned
    /// host memory may wait for every GPU of the process (NVIDIA/nccl#48),
    /// in the middle of a factorization. So the side and sibling queues and
    /// the pinned staging buffers are made now, before any collective, and
    /// the pool is no longer trimmed: an allocation the pool cannot meet is
    /// `OutOfDeviceMemory`, which all ranks agree on.
    pub fn join_cluster(&self) -> Result<()> {
        self.peers.store(true, Ordering::Release);
        let (side, sibling) = (self.side()?, self.sibling()?);
        for queue in [self, side, sibling] {
            drop(queue.staging()?);
        }
        Ok(())
    }

    /// Runs `f` and returns, with its result, the most device memory it had
    /// in use at once beyond what was in use before, in bytes: the high-water
    /// mark of the stream-ordered pool that buffers come from, plus memory
    /// taken outside the pool and still held after `f` (libraries'
    /// workspaces). For benchmarks: other work on the device must be idle.
    pub fn peak_memory<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<(R, usize)> {
        use cudarc::driver::result::mem_pool;
        use cudarc::driver::sys::CUmemPool_attribute as Attr;
        self.synchronize()?;
        let pool = self.pool()?;
        let get = |attr: Attr| self.pool_attribute(attr);
        let mut zero = 0u64;
        // Setting the high-water mark to 0 resets it to what is in use now.
        unsafe { mem_pool::set_attribute(pool, Attr::CU_MEMPOOL_ATTR_USED_MEM_HIGH, (&mut zero as *mut u64).cast()) }
            .map_err(driver("resetting the memory pool's high-water mark"))?;
        let (used0, reserved0) =
            (get(Attr::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?, get(Attr::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?);
        let free0 = self.driver_memory()?.0;
        let out = f()?;
        self.synchronize()?;
        let high = get(Attr::CU_MEMPOOL_ATTR_USED_MEM_HIGH)?;
        let reserved1 = get(Attr::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
        let free1 = self.driver_memory()?.0;
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
        let allocate = || {
            if zeroed {
                self.stream.alloc_zeros::<u8>(bytes.max(1))
            } else {
                unsafe { self.stream.alloc::<u8>(bytes.max(1)) }
            }
        };
        let mem = match allocate() {
            // The pool's reserve may be mapped in pieces too small: give it
            // back to the driver once all queued frees are done, and retry;
            // not beside peers (`join_cluster`), whose kernels the unmapping
            // would wait for while they wait for this GPU.
            Err(DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY)) if !self.peers.load(Ordering::Acquire) => {
                self.synchronize()?;
                // SAFETY: the device's own pool; buffers in use stay mapped.
                unsafe { cudarc::driver::result::mem_pool::trim_to(self.pool()?, 0) }
                    .map_err(driver("trimming the memory pool"))?;
                allocate()
            }
            other => other,
        };
        let mem = mem.map_err(|e| match e {
            DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY) => oom(),
            e => Error::Device(format!("allocating {bytes} bytes: {e}")),
        })?;
        let ptr = mem.device_ptr(&self.stream).0;
        Ok(CudaBuffer { mem: ManuallyDrop::new(mem), ptr, len, owner: None, _elem: PhantomData })
    }

    /// `len` elements of `E` at the device address `ptr`, memory that
    /// `owner` keeps alive and that the buffer never frees (DLPack).
    ///
    /// # Safety
    /// `ptr` must address `len` elements of `E` on this device, in a
    /// context this one shares, valid for as long as `owner` lives; work
    /// another library has queued on it must be ordered before this
    /// queue's (the DLPack `stream` argument does that).
    pub unsafe fn wrap_foreign<E: Elem>(
        &self,
        ptr: u64,
        len: usize,
        owner: Box<dyn std::any::Any + Send + Sync>,
    ) -> CudaBuffer<E> {
        // SAFETY: the caller's contract; the slice is leaked on drop.
        let mem = unsafe { self.stream.upgrade_device_ptr::<u8>(ptr, (len * size_of::<E>()).max(1)) };
        CudaBuffer { mem: ManuallyDrop::new(mem), ptr, len, owner: Some(owner), _elem: PhantomData }
    }

    /// The queue's `CUstream` handle, for ordering with other libraries.
    pub fn stream_handle(&self) -> usize {
        self.stream.cu_stream() as usize
    }

    /// The device's ordinal.
    pub fn ordinal(&self) -> usize {
        self.stream.context().ordinal()
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
