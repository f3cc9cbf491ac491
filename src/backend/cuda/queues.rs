//! The context and its queues: the main queue at the highest priority (the
//! factorizations' critical path), the side queue for trailing updates and
//! the sibling queue beside the main one, each with its cuBLAS handle, all
//! sharing the tuning and, but for a partitioned queue's side queue (on a
//! part of the SMs), the loaded kernels.

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

/// A context on `ctx`'s GPU whose work runs on `sms` of its SMs only,
/// sharing `ctx`'s memory (a green context), and the SMs it got: the driver
/// rounds the count up to its granularity (8 on sm_90). One is made per GPU
/// and count, and lives as long as the process.
fn green_context(ctx: &Arc<CudaContext>, sms: usize) -> Result<(Arc<CudaContext>, usize)> {
    type Made = HashMap<(usize, usize), (Arc<CudaContext>, usize)>;
    static MADE: OnceLock<Mutex<Made>> = OnceLock::new();
    let mut made = MADE.get_or_init(Mutex::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(g) = made.get(&(ctx.ordinal(), sms)) {
        return Ok(g.clone());
    }
    let g = new_green_context(ctx, sms)?;
    made.insert((ctx.ordinal(), sms), g.clone());
    Ok(g)
}

fn new_green_context(ctx: &Arc<CudaContext>, sms: usize) -> Result<(Arc<CudaContext>, usize)> {
    use cudarc::driver::sys;
    let fail = |what: &str| {
        let op = format!("making a context of {sms} SMs: {what}");
        move |e| driver(&op)(e)
    };
    let dev = ctx.cu_device();
    // SAFETY: plain-data descriptors written by the driver; the green
    // context is never destroyed (its `CudaContext` is leaked below); no
    // buffer is shared between its streams, so cudarc's events are not
    // needed (as for the main context).
    unsafe {
        let mut all: sys::CUdevResource = std::mem::zeroed();
        sys::cuDeviceGetDevResource(dev, &mut all, sys::CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM)
            .result()
            .map_err(fail("reading the SMs"))?;
        let (mut part, mut rest): (sys::CUdevResource, sys::CUdevResource) = (std::mem::zeroed(), std::mem::zeroed());
        let mut groups = 1u32;
        // At least one granule of SMs stays outside.
        let granule = all.__bindgen_anon_1.sm.smCoscheduledAlignment.max(1);
        let count = u32::try_from(sms).unwrap_or(u32::MAX).min(all.__bindgen_anon_1.sm.smCount.saturating_sub(granule));
        sys::cuDevSmResourceSplitByCount(&mut part, &mut groups, &all, &mut rest, 0, count)
            .result()
            .map_err(fail("splitting them"))?;
        let mut desc = std::ptr::null_mut();
        sys::cuDevResourceGenerateDesc(&mut desc, &mut part, 1).result().map_err(fail("describing them"))?;
        let mut green = std::ptr::null_mut();
        sys::cuGreenCtxCreate(&mut green, desc, dev, sys::CUgreenCtxCreate_flags::CU_GREEN_CTX_DEFAULT_STREAM as u32)
            .result()
            .map_err(fail("creating it"))?;
        let mut raw = std::ptr::null_mut();
        sys::cuCtxFromGreenCtx(&mut raw, green).result().map_err(fail("converting it"))?;
        let side = CudaContext::from_raw_context(ctx.ordinal(), dev, raw).map_err(fail("wrapping it"))?;
        // `CudaContext` would destroy it as an ordinary context.
        std::mem::forget(side.clone());
        side.disable_event_tracking();
        ctx.bind_to_thread().map_err(fail("binding the main context again"))?;
        Ok((side, part.__bindgen_anon_1.sm.smCount as usize))
    }
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
            partitioned: OnceLock::new(),
            side_share: None,
            confined_to: None,
        };
        cuda.keep_pool()?;
        Ok(cuda)
    }

    /// Another stream and cuBLAS handle on the same context, sharing the
    /// loaded kernels: of default priority (below the main queue's), or of
    /// the highest with `urgent`. A partitioned queue's queue of default
    /// priority (its side queue) is on a green context of its share of the
    /// SMs instead, with kernels loaded there.
    pub(super) fn fork(&self, urgent: bool) -> Result<Cuda> {
        // A partitioned queue's side queue on its share of the SMs, with
        // kernels of its own.
        let green = match self.side_share {
            Some(sms) if !urgent => Some(green_context(&self.ctx, sms)?),
            _ => None,
        };
        let ctx = green.as_ref().map_or_else(|| self.ctx.clone(), |(g, _)| g.clone());
        let stream =
            if urgent { urgent_stream(&ctx)? } else { ctx.new_stream().map_err(driver("creating a stream"))? };
        let blas = CudaBlas::new(stream.clone()).map_err(cublas_handle)?;
        self.ctx.bind_to_thread().map_err(driver("binding the context"))?;
        Ok(Cuda {
            ctx,
            stream,
            blas,
            arch: self.arch.clone(),
            gpu: self.gpu.clone(),
            name: self.name.clone(),
            functions: if green.is_some() { Arc::default() } else { self.functions.clone() },
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
            partitioned: OnceLock::new(),
            side_share: None,
            confined_to: green.as_ref().map(|(_, sms)| *sms),
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
