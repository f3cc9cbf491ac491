//! The context and its queues: the main queue at the highest priority (the
//! factorizations' critical path), the side queue for trailing updates and
//! the sibling queue beside the main one, each with its cuBLAS handle, all
//! sharing the loaded kernels and the tuning.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::cublas::CudaBlas;
use cudarc::driver::{CudaContext, CudaStream};

use super::{Cuda, driver};
use crate::backend::Tuning;
use crate::{DeviceLibrary, Error, Result};

/// A cuBLAS handle that could not be created.
fn cublas_handle(e: cudarc::cublas::result::CublasError) -> Error {
    Error::device_call(DeviceLibrary::Cublas, "creating a cuBLAS handle", e.0)
}

/// A stream of the highest priority on `ctx`.
fn urgent_stream(ctx: &Arc<CudaContext>) -> Result<Arc<CudaStream>> {
    let (_, greatest) =
        cudarc::driver::result::stream::get_priority_range().map_err(driver("reading stream priorities"))?;
    ctx.new_stream_with_priority(greatest).map_err(driver("creating a stream"))
}

impl Cuda {
    /// The GPU of the given ordinal with the given knobs, or why it cannot
    /// be used.
    pub fn new(ordinal: usize, tuning: Tuning) -> Result<Self> {
        // SAFETY: only probes whether the library can be loaded.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::Device("no CUDA driver found (libcuda could not be loaded)".into()));
        }
        let ctx = CudaContext::new(ordinal).map_err(driver(&format!("opening CUDA GPU {ordinal}")))?;
        // One stream orders all work, so cudarc's per-buffer events are not needed.
        // SAFETY: no buffer is shared between streams.
        unsafe { ctx.disable_event_tracking() };
        // The highest priority: the factorizations put their critical path
        // (the panels) on this queue and the trailing updates on the side
        // queue (`fork`, default priority), whose thousands of blocks would
        // otherwise hold the SMs while a panel waits (H100: LU 36.7 → 32.8
        // ms at n = 8192).
        ctx.bind_to_thread().map_err(driver("binding the context"))?;
        let stream = urgent_stream(&ctx)?;
        // SAFETY: only probes whether the library can be loaded.
        if !unsafe { cudarc::cublas::sys::is_culib_present() } {
            return Err(Error::Device("cuBLAS not found (libcublas could not be loaded)".into()));
        }
        let blas = CudaBlas::new(stream.clone()).map_err(cublas_handle)?;
        let (major, minor) = ctx.compute_capability().map_err(driver("reading the compute capability"))?;
        let gpu = ctx.name().map_err(driver("reading the device name"))?;
        let (free, total) = ctx.mem_get_info().map_err(driver("reading device memory"))?;
        let name = format!(
            "CUDA GPU {ordinal}: {gpu} (sm_{major}{minor}, {:.1} of {:.1} GiB free)",
            free as f64 / (1u64 << 30) as f64,
            total as f64 / (1u64 << 30) as f64
        );
        let cuda = Cuda {
            ctx,
            stream,
            blas,
            arch: format!("sm_{major}{minor}"),
            gpu,
            name,
            functions: Arc::new(Mutex::new(HashMap::new())),
            staging: Mutex::new(None),
            side: OnceLock::new(),
            sibling: OnceLock::new(),
            potrf: Default::default(),
            lu: Default::default(),
            tuning: Arc::new(Mutex::new(tuning)),
            peers: Arc::new(AtomicBool::new(false)),
            record_graphs: AtomicBool::new(tuning.graphs),
            recordings: Mutex::default(),
            recorder: OnceLock::new(),
        };
        cuda.keep_pool()?;
        Ok(cuda)
    }

    /// Another stream and cuBLAS handle on the same context, sharing the
    /// loaded kernels: of default priority (below the main queue's), or of
    /// the highest with `urgent`.
    pub(super) fn fork(&self, urgent: bool) -> Result<Cuda> {
        let stream = if urgent {
            urgent_stream(&self.ctx)?
        } else {
            self.ctx.new_stream().map_err(driver("creating a stream"))?
        };
        let blas = CudaBlas::new(stream.clone()).map_err(cublas_handle)?;
        Ok(Cuda {
            ctx: self.ctx.clone(),
            stream,
            blas,
            arch: self.arch.clone(),
            gpu: self.gpu.clone(),
            name: self.name.clone(),
            functions: self.functions.clone(),
            staging: Mutex::new(None),
            side: OnceLock::new(),
            sibling: OnceLock::new(),
            potrf: Default::default(),
            lu: Default::default(),
            tuning: self.tuning.clone(),
            peers: self.peers.clone(),
            record_graphs: AtomicBool::new(false),
            recordings: Mutex::default(),
            recorder: OnceLock::new(),
        })
    }

    /// Number of CUDA GPUs, or why there are none to use.
    pub fn device_count() -> Result<usize> {
        // SAFETY: only probes whether the library can be loaded.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::Device("no CUDA driver found (libcuda could not be loaded)".into()));
        }
        let count = CudaContext::device_count().map_err(driver("counting GPUs"))?;
        Ok(usize::try_from(count).unwrap_or(0))
    }

    /// The knobs in force.
    pub fn tuning(&self) -> Tuning {
        *self.tuning.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Other knobs from the next operation on, on every queue of this GPU:
    /// for benchmarks that sweep a blocking and tests that force each
    /// kernel path.
    pub fn set_tuning(&self, tuning: Tuning) {
        *self.tuning.lock().unwrap_or_else(|p| p.into_inner()) = tuning;
        self.record_graphs.store(tuning.graphs, std::sync::atomic::Ordering::Release);
    }

    /// The GPU's model, e.g. `NVIDIA H100 80GB HBM3`.
    pub fn gpu_name(&self) -> &str {
        &self.gpu
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The cuBLAS handle, bound to the stream.
    pub fn cublas(&self) -> &CudaBlas {
        &self.blas
    }
}
