//! The CUDA backend: one context and one stream per device, cuBLAS bound to
//! that stream for level 3, and NVRTC-compiled kernels from `kernels/*.cu`
//! for the rest. Every primitive is enqueued on the stream and returns;
//! downloads and reductions to the host synchronize.
//!
//! cudarc loads the driver, NVRTC and cuBLAS at run time, so a build needs no
//! CUDA and the same binary runs on the CPU where there is none.

pub(crate) mod blas;
mod graph;
pub mod kernels;
mod lu;
mod qr;
mod residual;
pub mod scaled_gram;
mod transfer;
mod trsm;
pub mod vendor;

pub use graph::PLAIN_RUNS;

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::cublas::CudaBlas;
use cudarc::driver::sys::CUresult;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DriverError, LaunchConfig, PushKernelArg,
};

use super::{Backend, DeviceBuffer, Diag, Norm, Op, Pivoting, Side, Tuning, View, ViewMut, check};
use crate::layout::rfp::Placement;
use crate::layout::{Rfp, Uplo};
use crate::{Elem, Error, Result, Scalar};

/// Threads per block of the 1-D kernels (the reductions assume exactly this).
const BLOCK: usize = 256;
/// Order up to which `potrf` uses the leaf kernel, whose threads hold the
/// rows in registers (`LEAF` in `kernels/potrf.cu`).
const POTRF_LEAF: usize = 64;
/// Most blocks a 1-D launch uses; the kernels stride over the rest.
const MAX_BLOCKS: usize = 65_535;
/// Most partial results a reduction produces.
const MAX_PARTIALS: usize = 1024;

/// An NVIDIA GPU.
pub struct Cuda {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    blas: CudaBlas,
    /// `sm_XY`, what NVRTC compiles for.
    arch: String,
    /// The GPU's model, as the driver names it.
    gpu: String,
    name: String,
    /// Kernels loaded so far, shared with the side queue.
    functions: Arc<Mutex<HashMap<String, CudaFunction>>>,
    staging: Mutex<transfer::Staging>,
    /// The second queue (`Backend::side`), created on first use.
    side: OnceLock<Box<Cuda>>,
    /// [`Backend::sibling`]'s queue, created on first use.
    sibling: OnceLock<Box<Cuda>>,
    /// `potrf_panel`'s count of finished blocks, one per queue since its
    /// launches on one queue run in order; zero between launches.
    arrivals: OnceLock<CudaSlice<u32>>,
    /// The LU panel kernels' exchange cells, one set per queue, reused from
    /// launch to launch (`lu::Exchange`).
    exchange: Mutex<Option<lu::Exchange>>,
    /// The most blocks of the LU cluster kernel's cluster (0: none), probed
    /// on first use.
    clusters: OnceLock<usize>,
    /// The knobs, shared with the other queues.
    tuning: Arc<Mutex<Tuning>>,
    /// Whether `replay` records graphs here (only on the main queue, and
    /// only when the tuning says so).
    record_graphs: AtomicBool,
    /// Work recorded by `replay`, and whether a capture is under way.
    recordings: Mutex<graph::Recordings>,
    capturing: AtomicBool,
}

/// Device memory of `len` elements of `E`, held as bytes so that any `Elem`
/// fits; `ptr` is its device address.
pub struct CudaBuffer<E> {
    mem: CudaSlice<u8>,
    ptr: u64,
    len: usize,
    _elem: PhantomData<E>,
}

impl<E> DeviceBuffer for CudaBuffer<E> {
    fn len(&self) -> usize {
        self.len
    }

    fn id(&self) -> usize {
        self.ptr as usize
    }
}

fn driver(op: &str) -> impl Fn(DriverError) -> Error + '_ {
    move |e| Error::Device(format!("{op}: {e}"))
}

/// A kernel argument, owned so that the launch can point at it.
#[derive(Clone, Copy)]
enum Arg {
    Ptr(u64),
    I64(i64),
    I32(i32),
    /// The bits of a 4- or 8-byte element, passed as that element.
    Bits32(u32),
    Bits64(u64),
    F64(f64),
}

fn elem<E: Elem>(v: E) -> Arg {
    // SAFETY: every `Elem` is a plain 4- or 8-byte number.
    match size_of::<E>() {
        8 => Arg::Bits64(unsafe { std::mem::transmute_copy(&v) }),
        _ => Arg::Bits32(unsafe { std::mem::transmute_copy(&v) }),
    }
}

fn n(x: usize) -> Arg {
    Arg::I64(x as i64)
}

fn grid_1d(total: usize, cap: usize) -> LaunchConfig {
    let blocks = total.div_ceil(BLOCK).clamp(1, cap);
    LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (BLOCK as u32, 1, 1), shared_mem_bytes: 0 }
}

/// Device address of entry `(0, 0)` of a block.
fn addr<E: Elem>(buf: &CudaBuffer<E>, offset: usize) -> u64 {
    buf.ptr + (offset * size_of::<E>()) as u64
}

fn raw<E: Elem>(v: &View<'_, Cuda, E>) -> u64 {
    addr(v.buffer(), v.block().offset)
}

fn raw_mut<E: Elem>(v: &ViewMut<'_, Cuda, E>) -> u64 {
    addr(v.buffer(), v.block().offset)
}

fn ptr<E: Elem>(v: &View<'_, Cuda, E>) -> Arg {
    Arg::Ptr(raw(v))
}

fn ptr_mut<E: Elem>(v: &ViewMut<'_, Cuda, E>) -> Arg {
    Arg::Ptr(raw_mut(v))
}

/// The launch attribute that makes a grid of `blocks` blocks one cluster.
fn cluster_attribute(blocks: u32) -> cudarc::driver::sys::CUlaunchAttribute {
    use cudarc::driver::sys;
    // SAFETY: an all-zero launch attribute is a valid value of the C struct.
    let mut cluster: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    cluster.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 { x: blocks, y: 1, z: 1 };
    cluster
}

/// A stream of the highest priority on `ctx`.
fn urgent_stream(ctx: &Arc<CudaContext>) -> Result<Arc<CudaStream>> {
    let (_, greatest) =
        cudarc::driver::result::stream::get_priority_range().map_err(driver("reading stream priorities"))?;
    ctx.new_stream_with_priority(greatest).map_err(driver("creating a stream"))
}

fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) }
}

impl Cuda {
    /// The GPU of the given ordinal with the given knobs, or why it cannot
    /// be used.
    pub fn new(ordinal: usize, tuning: Tuning) -> Result<Self> {
        // SAFETY: only probes whether the library can be loaded.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::Device("no CUDA driver found (libcuda could not be loaded)".into()));
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| Error::Device(format!("no usable CUDA GPU {ordinal}: {e}")))?;
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
        let blas =
            CudaBlas::new(stream.clone()).map_err(|e| Error::Device(format!("creating a cuBLAS handle: {e}")))?;
        let (major, minor) = ctx.compute_capability().map_err(driver("reading the compute capability"))?;
        let gpu = ctx.name().map_err(driver("reading the device name"))?;
        let (free, total) = ctx.mem_get_info().map_err(driver("reading device memory"))?;
        let name = format!(
            "CUDA GPU {ordinal}: {gpu} (sm_{major}{minor}, {:.1} of {:.1} GiB free)",
            free as f64 / (1u64 << 30) as f64,
            total as f64 / (1u64 << 30) as f64
        );
        Ok(Cuda {
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
            arrivals: OnceLock::new(),
            exchange: Mutex::new(None),
            clusters: OnceLock::new(),
            tuning: Arc::new(Mutex::new(tuning)),
            record_graphs: AtomicBool::new(tuning.graphs),
            recordings: Mutex::default(),
            capturing: AtomicBool::new(false),
        })
    }

    /// Another stream and cuBLAS handle on the same context, sharing the
    /// loaded kernels: of default priority (below the main queue's), or of
    /// the highest with `urgent`.
    fn fork(&self, urgent: bool) -> Result<Cuda> {
        let stream = if urgent {
            urgent_stream(&self.ctx)?
        } else {
            self.ctx.new_stream().map_err(driver("creating a stream"))?
        };
        let blas =
            CudaBlas::new(stream.clone()).map_err(|e| Error::Device(format!("creating a cuBLAS handle: {e}")))?;
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
            arrivals: OnceLock::new(),
            exchange: Mutex::new(None),
            clusters: OnceLock::new(),
            tuning: self.tuning.clone(),
            record_graphs: AtomicBool::new(false),
            recordings: Mutex::default(),
            capturing: AtomicBool::new(false),
        })
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

    /// `(free, total)` device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().map_err(driver("reading device memory"))
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
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

    /// The cuBLAS handle, bound to the stream.
    pub fn cublas(&self) -> &CudaBlas {
        &self.blas
    }

    /// Kernel `name` of `kernels/<file>.cu`, compiled on first use.
    fn function(&self, file: &str, name: &str) -> Result<CudaFunction> {
        let mut cache = self.functions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = cache.get(name) {
            return Ok(f.clone());
        }
        let src = kernels::SOURCES
            .iter()
            .find(|s| s.name.trim_end_matches(".cu") == file)
            .ok_or_else(|| Error::Device(format!("no kernel source {file}.cu")))?;
        let ptx = kernels::compile(src, &self.arch)?;
        let module = self.ctx.load_module(ptx).map_err(driver("loading kernels"))?;
        // Every entry of the module goes into the cache at once.
        let f = module.load_function(name).map_err(|e| Error::Device(format!("kernel {name} in {file}.cu: {e}")))?;
        cache.insert(name.to_string(), f.clone());
        Ok(f)
    }

    fn launch(&self, file: &str, name: &str, cfg: LaunchConfig, args: &[Arg]) -> Result<()> {
        let f = self.function(file, name)?;
        if cfg.shared_mem_bytes > 48 * 1024 {
            // Past 48 KiB, dynamic shared memory is opt-in per function.
            f.set_attribute(
                cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                cfg.shared_mem_bytes as i32,
            )
            .map_err(|e| {
                Error::Device(format!("{name}: asking for {} bytes of shared memory: {e}", cfg.shared_mem_bytes))
            })?;
        }
        let mut b = self.stream.launch_builder(&f);
        for a in args {
            match a {
                Arg::Ptr(x) | Arg::Bits64(x) => b.arg(x),
                Arg::I64(x) => b.arg(x),
                Arg::I32(x) => b.arg(x),
                Arg::Bits32(x) => b.arg(x),
                Arg::F64(x) => b.arg(x),
            };
        }
        // SAFETY: the argument lists match the kernels' signatures (checked by
        // the GPU test suite), and every block was checked to lie in its buffer.
        unsafe { b.launch(cfg) }.map(|_| ()).map_err(|e| Error::Device(format!("launching {name}: {e}")))
    }

    /// [`Self::launch`] of a grid that is one thread-block cluster (sm_90
    /// and later), whose blocks are resident together and share their
    /// shared memory.
    fn launch_cluster(&self, file: &str, name: &str, cfg: LaunchConfig, args: &[Arg]) -> Result<()> {
        use cudarc::driver::sys;
        let f = self.function(file, name)?;
        let fail = |e: DriverError| Error::Device(format!("launching {name} as a cluster of {}: {e}", cfg.grid_dim.0));
        if cfg.grid_dim.0 > 8 {
            // Clusters past 8 blocks are opt-in per function.
            f.set_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
                .map_err(fail)?;
        }
        let mut params: Vec<*mut std::ffi::c_void> = args
            .iter()
            .map(|a| match a {
                Arg::Ptr(x) | Arg::Bits64(x) => std::ptr::from_ref(x).cast_mut().cast(),
                Arg::I64(x) => std::ptr::from_ref(x).cast_mut().cast(),
                Arg::I32(x) => std::ptr::from_ref(x).cast_mut().cast(),
                Arg::Bits32(x) => std::ptr::from_ref(x).cast_mut().cast(),
                Arg::F64(x) => std::ptr::from_ref(x).cast_mut().cast(),
            })
            .collect();
        let mut cluster = cluster_attribute(cfg.grid_dim.0);
        let config = self.cluster_config(&cfg, &mut cluster);
        self.ctx.bind_to_thread().map_err(fail)?;
        // SAFETY: as in `launch`; `params` points at `args`, which outlive the
        // call (the driver copies the values at launch).
        unsafe { sys::cuLaunchKernelEx(&config, f.cu_function(), params.as_mut_ptr(), std::ptr::null_mut()) }
            .result()
            .map_err(fail)
    }

    /// The driver's configuration of `cfg` on this queue with the launch
    /// attribute `cluster`, which must outlive it.
    fn cluster_config(
        &self,
        cfg: &LaunchConfig,
        cluster: &mut cudarc::driver::sys::CUlaunchAttribute,
    ) -> cudarc::driver::sys::CUlaunchConfig {
        cudarc::driver::sys::CUlaunchConfig {
            gridDimX: cfg.grid_dim.0,
            gridDimY: cfg.grid_dim.1,
            gridDimZ: cfg.grid_dim.2,
            blockDimX: cfg.block_dim.0,
            blockDimY: cfg.block_dim.1,
            blockDimZ: cfg.block_dim.2,
            sharedMemBytes: cfg.shared_mem_bytes,
            hStream: self.stream.cu_stream(),
            attrs: cluster,
            numAttrs: 1,
        }
    }

    /// The most blocks of one cluster that `name` of `file` (its static
    /// shared memory only) can be launched with at `threads` threads per
    /// block: 16, 8, 4 or 2, or 0 on GPUs without clusters (before sm_90).
    fn cluster_limit(&self, file: &str, name: &str, threads: u32) -> Result<usize> {
        use cudarc::driver::sys;
        let major: u32 = self.arch.trim_start_matches("sm_").parse::<u32>().unwrap_or(0) / 10;
        if major < 9 {
            return Ok(0);
        }
        let f = self.function(file, name)?;
        // Refused on some GPUs: the probe of 16 then fails.
        let _ = f.set_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
        for size in [16u32, 8, 4, 2] {
            let cfg = LaunchConfig { grid_dim: (size, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 };
            let mut cluster = cluster_attribute(size);
            let config = self.cluster_config(&cfg, &mut cluster);
            let mut clusters = 0;
            // SAFETY: `config` and `clusters` are valid for the call.
            let ok = unsafe { sys::cuOccupancyMaxActiveClusters(&mut clusters, f.cu_function(), &config) }.result();
            if ok.is_ok() && clusters > 0 {
                return Ok(size as usize);
            }
        }
        Ok(0)
    }

    /// `potrf_panel` on a panel `width <= POTRF_LEAF` wide and `len` long,
    /// in one launch: a block per `POTRF_LEAF` rows below the diagonal block,
    /// two threads per row and per row of the diagonal block.
    fn potrf_leaf_panel<T: Scalar>(
        &self,
        uplo: Uplo,
        a: ViewMut<'_, Cuda, T>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
        width: usize,
        len: usize,
    ) -> Result<()> {
        let arrivals = match self.arrivals.get() {
            Some(c) => c,
            None => {
                let c = self.scratch::<u32>(1)?;
                self.arrivals.get_or_init(|| c)
            }
        };
        let below = len - width;
        let cfg = LaunchConfig {
            grid_dim: (below.div_ceil(POTRF_LEAF).max(1) as u32, 1, 1),
            block_dim: ((if below > 0 { 4 } else { 2 } * POTRF_LEAF) as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let (counter, _) = arrivals.device_ptr(&self.stream);
        let args = [ptr_mut(&a), n(a.block().ld), n(width), n(len), ptr_mut(&info), n(offset), Arg::Ptr(counter)];
        let triangle = if uplo == Uplo::Upper { "upper" } else { "lower" };
        self.launch("potrf", &format!("potrf_panel_{triangle}_{}", T::NAME), cfg, &args)
    }

    /// An elementwise kernel over a `rows × cols` block.
    fn elementwise(&self, name: &str, rows: usize, cols: usize, args: &[Arg]) -> Result<()> {
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        self.launch("elementwise", name, grid_1d(rows * cols, MAX_BLOCKS), args)
    }

    /// `dst := src` or `srcᵀ` on the `tri` part of the source (0 all,
    /// 1 lower, 2 upper), by 32×32 tiles; a whole block that is one run of
    /// memory on both sides (a vector, or columns without gaps) by the copy
    /// engine, since the tiles of a single column would use 1/32 of their
    /// threads (an RFP array is such a column).
    #[allow(clippy::too_many_arguments)]
    fn copy_block<E: Elem>(
        &self,
        src: u64,
        lds: usize,
        dst: u64,
        ldd: usize,
        rows: usize,
        cols: usize,
        transpose: bool,
        tri: i32,
    ) -> Result<()> {
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        let run = |ld: usize| cols == 1 || ld == rows;
        if !transpose && tri == 0 && run(lds) && run(ldd) {
            if src == dst {
                return Ok(());
            }
            // SAFETY: both blocks were checked to lie in their buffers, and a
            // copy's source and destination do not overlap.
            return unsafe {
                cudarc::driver::result::memcpy_dtod_async(
                    dst,
                    src,
                    rows * cols * size_of::<E>(),
                    self.stream.cu_stream(),
                )
            }
            .map_err(driver("copying a block"));
        }
        let cfg = LaunchConfig {
            grid_dim: (cols.div_ceil(32).min(MAX_BLOCKS) as u32, rows.div_ceil(32).min(MAX_BLOCKS) as u32, 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let args =
            [Arg::Ptr(src), n(lds), Arg::Ptr(dst), n(ldd), n(rows), n(cols), Arg::I32(transpose as i32), Arg::I32(tri)];
        self.launch("copy", &format!("copy_block_{}", E::NAME), cfg, &args)
    }

    /// Scratch memory for reductions, outside the `Buffer` types.
    fn scratch<E: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        len: usize,
    ) -> Result<CudaSlice<E>> {
        self.stream.alloc_zeros::<E>(len.max(1)).map_err(driver("allocating scratch"))
    }

    fn read<E: cudarc::driver::DeviceRepr + Default + Clone>(&self, s: &CudaSlice<E>, len: usize) -> Result<Vec<E>> {
        let mut host = vec![E::default(); len];
        self.stream.memcpy_dtoh(&s.slice(0..len), &mut host).map_err(driver("reading a result"))?;
        self.stream.synchronize().map_err(driver("synchronizing"))?;
        Ok(host)
    }

    fn slice_ptr<E>(&self, s: &CudaSlice<E>) -> u64 {
        s.device_ptr(&self.stream).0
    }

    /// A 1-D reduction kernel over a block (`max_abs`, or `sum_sq_scaled`
    /// with its scale), its per-block partials combined on the host.
    fn reduce<T: Scalar>(&self, name: &str, a: &View<'_, Cuda, T>, extra: Option<f64>) -> Result<f64> {
        let (rows, cols) = (a.rows(), a.cols());
        let cfg = grid_1d(rows * cols, MAX_PARTIALS);
        let parts = cfg.grid_dim.0 as usize;
        let out = self.scratch::<f64>(parts)?;
        let mut args = vec![ptr(a), n(a.block().ld), n(rows), n(cols)];
        args.extend(extra.map(Arg::F64));
        args.push(Arg::Ptr(self.slice_ptr(&out)));
        self.launch("reduce", &format!("{name}_{}", T::NAME), cfg, &args)?;
        let partials = self.read(&out, parts)?;
        Ok(match name {
            "max_abs" => partials.into_iter().fold(0.0, nan_max),
            _ => partials.into_iter().sum(),
        })
    }

    /// Abs sums per column (`col_abs_sums`) or per row (`row_abs_sums`), then their NaN-propagating max.
    fn max_abs_sum<T: Scalar>(&self, name: &str, a: &View<'_, Cuda, T>) -> Result<f64> {
        let (rows, cols) = (a.rows(), a.cols());
        let len = if name == "col_abs_sums" { cols } else { rows };
        let cfg = if name == "col_abs_sums" {
            LaunchConfig {
                grid_dim: (cols.clamp(1, MAX_BLOCKS) as u32, 1, 1),
                block_dim: (BLOCK as u32, 1, 1),
                shared_mem_bytes: 0,
            }
        } else {
            grid_1d(rows, MAX_BLOCKS)
        };
        let out = self.scratch::<f64>(len)?;
        let args = [ptr(a), n(a.block().ld), n(rows), n(cols), Arg::Ptr(self.slice_ptr(&out))];
        self.launch("reduce", &format!("{name}_{}", T::NAME), cfg, &args)?;
        Ok(self.read(&out, len)?.into_iter().fold(0.0, nan_max))
    }

    /// Copies each RFP piece between the full matrix at `a` and the RFP array
    /// at `arf`: three tiled copies (one transposed) per direction.
    fn rfp_pieces<T: Scalar>(&self, rfp: Rfp, a: u64, lda: usize, arf: u64, pack: bool) -> Result<()> {
        let size = size_of::<T>() as u64;
        for p in rfp.placements() {
            let Placement { offset, ld, rows, cols, shape, origin, transposed } = p;
            let a_block = a + ((origin.0 + origin.1 * lda) as u64) * size;
            let piece = arf + offset as u64 * size;
            let tri = |u: Option<Uplo>| match u {
                None => 0,
                Some(Uplo::Lower) => 1,
                Some(Uplo::Upper) => 2,
            };
            if pack {
                // Source: A's block, `cols × rows` when the piece holds its transpose.
                let (r, c, mask) =
                    if transposed { (cols, rows, tri(shape.map(Uplo::flip))) } else { (rows, cols, tri(shape)) };
                self.copy_block::<T>(a_block, lda, piece, ld, r, c, transposed, mask)?;
            } else {
                self.copy_block::<T>(piece, ld, a_block, lda, rows, cols, transposed, tri(shape))?;
            }
        }
        Ok(())
    }
}

impl Backend for Cuda {
    type Buffer<E: Elem> = CudaBuffer<E>;

    fn name(&self) -> String {
        self.name.clone()
    }

    fn alloc<E: Elem>(&self, len: usize) -> Result<CudaBuffer<E>> {
        self.buffer(len, true)
    }

    fn upload<E: Elem>(&self, host: &[E]) -> Result<CudaBuffer<E>> {
        let mut buf = self.buffer::<E>(host.len(), false)?;
        if !host.is_empty() {
            // SAFETY: `E` is a plain number type; its bytes are initialized.
            let bytes = unsafe { std::slice::from_raw_parts(host.as_ptr() as *const u8, size_of_val(host)) };
            self.upload_bytes(bytes, &mut buf.mem)?;
        }
        Ok(buf)
    }

    fn download<E: Elem>(&self, src: &CudaBuffer<E>, host: &mut [E]) -> Result<()> {
        if host.len() != src.len {
            return Err(Error::dims("download", format!("buffer has {} entries, host slice {}", src.len, host.len())));
        }
        if !host.is_empty() {
            // SAFETY: any bit pattern is a valid `E` (f32, f64, i32).
            let bytes = unsafe { std::slice::from_raw_parts_mut(host.as_mut_ptr() as *mut u8, size_of_val(host)) };
            self.download_bytes(&src.mem, bytes)?;
        }
        self.synchronize()
    }

    fn synchronize(&self) -> Result<()> {
        if let Some(side) = self.side.get() {
            side.synchronize()?;
        }
        self.stream.synchronize().map_err(driver("a queued operation failed"))
    }

    fn side(&self) -> Result<&Self> {
        if let Some(side) = self.side.get() {
            return Ok(side);
        }
        let side = Box::new(self.fork(false)?);
        // Another thread may have won the race; its queue is as good.
        Ok(self.side.get_or_init(|| side))
    }

    fn sibling(&self) -> Result<&Self> {
        if let Some(sibling) = self.sibling.get() {
            return Ok(sibling);
        }
        let sibling = Box::new(self.fork(true)?);
        Ok(self.sibling.get_or_init(|| sibling))
    }

    fn replay(&self, key: &str, enqueue: &mut dyn FnMut() -> Result<()>) -> Result<()> {
        self.replay_impl(key, enqueue)
    }

    fn wait_for(&self, other: &Self) -> Result<()> {
        if Arc::ptr_eq(&self.stream, &other.stream) {
            return Ok(());
        }
        let flags = cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;
        let event = other.stream.record_event(Some(flags)).map_err(driver("recording an event"))?;
        self.stream.wait(&event).map_err(driver("waiting for another queue"))
    }

    fn copy<E: Elem>(&self, src: View<'_, Cuda, E>, dst: ViewMut<'_, Cuda, E>) -> Result<()> {
        check::copy(&src, &dst)?;
        let (s, d) = (src.block(), dst.block());
        self.copy_block::<E>(raw(&src), s.ld, raw_mut(&dst), d.ld, s.rows, s.cols, false, 0)
    }

    fn fill<E: Elem>(&self, dst: ViewMut<'_, Cuda, E>, value: E) -> Result<()> {
        let b = dst.block();
        let args = [ptr_mut(&dst), n(b.ld), n(b.rows), n(b.cols), elem(value)];
        self.elementwise(&format!("fill_{}", E::NAME), b.rows, b.cols, &args)
    }

    fn cast<S: Scalar, D: Scalar>(&self, src: View<'_, Cuda, S>, dst: ViewMut<'_, Cuda, D>) -> Result<()> {
        check::elementwise("cast", &src, &dst)?;
        let (s, d) = (src.block(), dst.block());
        if S::NAME == D::NAME {
            return self.copy_block::<S>(raw(&src), s.ld, raw_mut(&dst), d.ld, s.rows, s.cols, false, 0);
        }
        let args = [ptr(&src), n(s.ld), ptr_mut(&dst), n(d.ld), n(s.rows), n(s.cols)];
        self.elementwise(&format!("cast_{}_{}", S::NAME, D::NAME), s.rows, s.cols, &args)
    }

    fn full_to_rfp<T: Scalar>(&self, a: View<'_, Cuda, T>, rfp: Rfp, arf: ViewMut<'_, Cuda, T>) -> Result<()> {
        check::full_to_rfp(&a, rfp, &arf)?;
        self.rfp_pieces::<T>(rfp, raw(&a), a.block().ld, raw_mut(&arf), true)
    }

    fn rfp_to_full<T: Scalar>(&self, arf: View<'_, Cuda, T>, rfp: Rfp, a: ViewMut<'_, Cuda, T>) -> Result<()> {
        check::rfp_to_full(&arf, rfp, &a)?;
        self.rfp_pieces::<T>(rfp, raw_mut(&a), a.block().ld, raw(&arf), false)
    }

    fn gemm<T: Scalar>(
        &self,
        alpha: T,
        a: View<'_, Cuda, T>,
        op_a: Op,
        b: View<'_, Cuda, T>,
        op_b: Op,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        check::gemm(&a, op_a, &b, op_b, &c)?;
        let (m, n_, k) = (c.rows(), c.cols(), op_a.apply(a.rows(), a.cols()).1);
        if m == 0 || n_ == 0 {
            return Ok(());
        }
        let d = |x| blas::dim("gemm", x);
        // SAFETY: blocks checked by `check`; see `blas`.
        unsafe {
            blas::gemm(
                *self.blas.handle(),
                (op_a, op_b),
                (d(m)?, d(n_)?, d(k)?),
                alpha,
                (raw(&a), d(a.block().ld)?),
                (raw(&b), d(b.block().ld)?),
                beta,
                (raw_mut(&c), d(c.block().ld)?),
            )
        }
    }

    fn syrk<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        alpha: T,
        a: View<'_, Cuda, T>,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        check::syrk(uplo, op, &a, &c)?;
        let (nn, k) = op.apply(a.rows(), a.cols());
        if nn == 0 {
            return Ok(());
        }
        let d = |x| blas::dim("syrk", x);
        // SAFETY: blocks checked by `check`; see `blas`.
        unsafe {
            blas::syrk(
                *self.blas.handle(),
                uplo,
                op,
                (d(nn)?, d(k)?),
                alpha,
                (raw(&a), d(a.block().ld)?),
                beta,
                (raw_mut(&c), d(c.block().ld)?),
            )
        }
    }

    fn trsm<T: Scalar>(
        &self,
        side: Side,
        uplo: Uplo,
        op: Op,
        diag: Diag,
        alpha: T,
        a: View<'_, Cuda, T>,
        b: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        self.triangular(blas::Triangular::Solve, (side, uplo, op, diag), alpha, a, b)
    }

    fn trmm<T: Scalar>(
        &self,
        side: Side,
        uplo: Uplo,
        op: Op,
        diag: Diag,
        alpha: T,
        a: View<'_, Cuda, T>,
        b: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        self.triangular(blas::Triangular::Multiply, (side, uplo, op, diag), alpha, a, b)
    }

    fn geam<T: Scalar>(
        &self,
        alpha: T,
        a: View<'_, Cuda, T>,
        op_a: Op,
        beta: T,
        b: View<'_, Cuda, T>,
        op_b: Op,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        check::geam(&a, op_a, &b, op_b, &c)?;
        let (m, nn) = (c.rows(), c.cols());
        if m == 0 || nn == 0 {
            return Ok(());
        }
        // A zero coefficient means that operand is not read (as on the CPU):
        // cuBLAS would still form 0·NaN, so fill or point at the other one.
        let (alpha, a, op_a, beta, b, op_b) = match (alpha == T::ZERO, beta == T::ZERO) {
            (true, true) => return self.fill(c, T::ZERO),
            (true, false) => (beta, b, op_b, T::ZERO, b, op_b),
            (false, true) => (alpha, a, op_a, T::ZERO, a, op_a),
            (false, false) => (alpha, a, op_a, beta, b, op_b),
        };
        let d = |x| blas::dim("geam", x);
        // SAFETY: blocks checked by `check`; see `blas`.
        unsafe {
            blas::geam(
                *self.blas.handle(),
                (op_a, op_b),
                (d(m)?, d(nn)?),
                alpha,
                (raw(&a), d(a.block().ld)?),
                beta,
                (raw(&b), d(b.block().ld)?),
                (raw_mut(&c), d(c.block().ld)?),
            )
        }
    }

    fn symmetrize<T: Scalar>(&self, uplo: Uplo, a: ViewMut<'_, Cuda, T>) -> Result<()> {
        check::square_mut("symmetrize", &a)?;
        let b = a.block();
        let args = [ptr_mut(&a), n(b.ld), n(b.rows), Arg::I32((uplo == Uplo::Lower) as i32)];
        self.elementwise(&format!("symmetrize_{}", T::NAME), b.rows, b.cols, &args)
    }

    fn fill_strict_triangle<T: Scalar>(&self, uplo: Uplo, value: T, a: ViewMut<'_, Cuda, T>) -> Result<()> {
        let b = a.block();
        let args = [ptr_mut(&a), n(b.ld), n(b.rows), n(b.cols), Arg::I32((uplo == Uplo::Upper) as i32), elem(value)];
        self.elementwise(&format!("fill_strict_triangle_{}", T::NAME), b.rows, b.cols, &args)
    }

    fn potrf<T: Scalar>(
        &self,
        uplo: Uplo,
        a: ViewMut<'_, Cuda, T>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
    ) -> Result<()> {
        check::potrf(&a, &info)?;
        if a.rows() == 0 {
            return Ok(());
        }
        if a.rows() <= POTRF_LEAF {
            // The blocked algorithm's leaves: a panel with nothing below.
            let n = a.rows();
            return self.potrf_leaf_panel(uplo, a, info, offset, n, n);
        }
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (BLOCK as u32, 1, 1), shared_mem_bytes: 0 };
        let upper = Arg::I32((uplo == Uplo::Upper) as i32);
        let args = [ptr_mut(&a), n(a.block().ld), n(a.rows()), upper, ptr_mut(&info), n(offset)];
        self.launch("potrf", &format!("potrf_{}", T::NAME), cfg, &args)
    }

    fn potrf_panel<T: Scalar>(
        &self,
        uplo: Uplo,
        a: ViewMut<'_, Cuda, T>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
    ) -> Result<()> {
        check::potrf_panel(uplo, &a, &info)?;
        let (width, len) = match uplo {
            Uplo::Lower => (a.cols(), a.rows()),
            Uplo::Upper => (a.rows(), a.cols()),
        };
        if width == 0 {
            return Ok(());
        }
        if width > POTRF_LEAF {
            return crate::backend::potrf_panel_by_blocks(self, uplo, a, info, offset);
        }
        self.potrf_leaf_panel(uplo, a, info, offset, width, len)
    }

    fn scale_rows<T: Scalar>(&self, d: View<'_, Cuda, T>, a: ViewMut<'_, Cuda, T>) -> Result<()> {
        check::scaling("scale_rows", &d, a.rows(), &a)?;
        self.scale_by_vector("scale_rows", d, a)
    }

    fn scale_cols<T: Scalar>(&self, a: ViewMut<'_, Cuda, T>, d: View<'_, Cuda, T>) -> Result<()> {
        check::scaling("scale_cols", &d, a.cols(), &a)?;
        self.scale_by_vector("scale_cols", d, a)
    }

    fn axpy<T: Scalar>(&self, alpha: T, x: View<'_, Cuda, T>, y: ViewMut<'_, Cuda, T>) -> Result<()> {
        check::elementwise("axpy", &x, &y)?;
        let (bx, by) = (x.block(), y.block());
        let args = [elem(alpha), ptr(&x), n(bx.ld), ptr_mut(&y), n(by.ld), n(by.rows), n(by.cols)];
        self.elementwise(&format!("axpy_{}", T::NAME), by.rows, by.cols, &args)
    }

    fn scale<T: Scalar>(&self, alpha: T, a: ViewMut<'_, Cuda, T>) -> Result<()> {
        let b = a.block();
        let args = [ptr_mut(&a), n(b.ld), n(b.rows), n(b.cols), elem(alpha)];
        self.elementwise(&format!("scale_{}", T::NAME), b.rows, b.cols, &args)
    }

    fn norm<T: Scalar>(&self, norm: Norm, a: View<'_, Cuda, T>) -> Result<T> {
        if a.rows() == 0 || a.cols() == 0 {
            return Ok(T::ZERO);
        }
        let v = match norm {
            Norm::Max => self.reduce("max_abs", &a, None)?,
            Norm::One => self.max_abs_sum("col_abs_sums", &a)?,
            Norm::Inf => self.max_abs_sum("row_abs_sums", &a)?,
            Norm::Frobenius => {
                // Scaled by the largest entry so that no square overflows.
                let scale = self.reduce("max_abs", &a, None)?;
                if scale == 0.0 || !scale.is_finite() {
                    scale
                } else {
                    scale * self.reduce("sum_sq_scaled", &a, Some(scale))?.sqrt()
                }
            }
        };
        Ok(T::from_f64(v))
    }

    fn iamax<T: Scalar>(&self, x: View<'_, Cuda, T>) -> Result<Option<usize>> {
        let len = check::vector("iamax", &x)?;
        if len == 0 {
            return Ok(None);
        }
        let b = x.block();
        let inc = if b.cols == 1 { 1 } else { b.ld };
        let cfg = grid_1d(len, MAX_PARTIALS);
        let parts = cfg.grid_dim.0 as usize;
        let (idx, val) = (self.scratch::<i64>(parts)?, self.scratch::<f64>(parts)?);
        let args = [ptr(&x), n(inc), n(len), Arg::Ptr(self.slice_ptr(&idx)), Arg::Ptr(self.slice_ptr(&val))];
        self.launch("reduce", &format!("iamax_{}", T::NAME), cfg, &args)?;
        let (idx, val) = (self.read(&idx, parts)?, self.read(&val, parts)?);
        // The kernel's rule across blocks: first NaN, else largest, ties to the first.
        let mut best: Option<(i64, f64)> = None;
        for (&i, &v) in idx.iter().zip(&val) {
            if i < 0 {
                continue;
            }
            best = match best {
                None => Some((i, v)),
                Some((bi, bv)) => {
                    let better = match (v.is_nan(), bv.is_nan()) {
                        (true, true) => i < bi,
                        (true, false) => true,
                        (false, true) => false,
                        (false, false) => v > bv || (v == bv && i < bi),
                    };
                    Some(if better { (i, v) } else { (bi, bv) })
                }
            };
        }
        Ok(best.map(|(i, _)| i as usize))
    }

    fn find_non_finite<T: Scalar>(&self, a: View<'_, Cuda, T>) -> Result<Option<(usize, usize)>> {
        let (rows, cols) = (a.rows(), a.cols());
        if rows == 0 || cols == 0 {
            return Ok(None);
        }
        let mut first = self.scratch::<u64>(1)?;
        self.stream.memcpy_htod(&[u64::MAX], &mut first).map_err(driver("find_non_finite"))?;
        let args = [ptr(&a), n(a.block().ld), n(rows), n(cols), Arg::Ptr(self.slice_ptr(&first))];
        self.launch("reduce", &format!("first_non_finite_{}", T::NAME), grid_1d(rows * cols, MAX_BLOCKS), &args)?;
        let k = self.read(&first, 1)?[0];
        Ok((k != u64::MAX).then(|| ((k as usize) % rows, (k as usize) / rows)))
    }

    // Householder QR.

    fn householder<T: Scalar>(&self, a: ViewMut<'_, Cuda, T>, t: ViewMut<'_, Cuda, T>) -> Result<()> {
        self.householder_panel(a, t)
    }

    // LU factorization, in `cuda/lu.rs`.

    fn getrf_panel<T: Scalar>(
        &self,
        a: ViewMut<'_, Cuda, T>,
        ipiv: ViewMut<'_, Cuda, i32>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
        pivoting: Pivoting,
    ) -> Result<()> {
        let cols = 0..a.cols();
        self.lu_getrf_leaf(a, cols, ipiv, info, offset, pivoting)
    }

    fn getrf_leaf<T: Scalar>(
        &self,
        a: ViewMut<'_, Cuda, T>,
        cols: std::ops::Range<usize>,
        ipiv: ViewMut<'_, Cuda, i32>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
        pivoting: Pivoting,
    ) -> Result<()> {
        self.lu_getrf_leaf(a, cols, ipiv, info, offset, pivoting)
    }

    fn laswp<T: Scalar>(
        &self,
        a: ViewMut<'_, Cuda, T>,
        ipiv: View<'_, Cuda, i32>,
        shift: usize,
        reverse: bool,
    ) -> Result<()> {
        self.lu_laswp(a, ipiv, shift, reverse)
    }

    // Scaled Gram matrices, in `cuda/scaled_gram.rs`.

    fn scaled_syrk<T: Scalar>(
        &self,
        uplo: Uplo,
        alpha: T,
        a: View<'_, Cuda, T>,
        d: View<'_, Cuda, T>,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        self.scaled_syrk_impl(uplo, alpha, a, d, beta, c)
    }

    fn scaled_gemm<T: Scalar>(
        &self,
        alpha: T,
        a: View<'_, Cuda, T>,
        b: View<'_, Cuda, T>,
        d: View<'_, Cuda, T>,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        self.scaled_gemm_impl(alpha, a, b, d, beta, c)
    }

    // Mixed precision weighted least squares, in `scaled_gram.rs` and
    // `residual.rs`.

    fn scaled_syrk_f32(&self, a: View<'_, Cuda, f64>, d: View<'_, Cuda, f64>, c: ViewMut<'_, Cuda, f32>) -> Result<()> {
        self.scaled_syrk_f32_impl(a, d, c)
    }

    fn weighted_residual(
        &self,
        a: View<'_, Cuda, f64>,
        d: View<'_, Cuda, f64>,
        b: View<'_, Cuda, f64>,
        x: View<'_, Cuda, f64>,
        r: ViewMut<'_, Cuda, f64>,
    ) -> Result<()> {
        self.weighted_residual_impl(a, d, b, x, r)
    }
}

impl Cuda {
    /// `trsm` and `trmm`, which share their checks and arguments.
    fn triangular<T: Scalar>(
        &self,
        which: blas::Triangular,
        (side, uplo, op, diag): (Side, Uplo, Op, Diag),
        alpha: T,
        a: View<'_, Cuda, T>,
        b: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        let name = which.name();
        check::triangular(name, side, uplo, &a, &b)?;
        if b.rows() == 0 || b.cols() == 0 {
            return Ok(());
        }
        if alpha == T::ZERO {
            // BLAS: B := 0 without reading A (cuBLAS would form 0·NaN).
            return self.fill(b, T::ZERO);
        }
        if which == blas::Triangular::Solve && a.rows() <= trsm::KERNEL_MAX_ORDER {
            let solve = match (side, uplo, op) {
                (Side::Left, Uplo::Lower, Op::NoTrans) => Some(trsm::LowerSolve::Left),
                (Side::Right, Uplo::Lower, Op::Trans) => Some(trsm::LowerSolve::RightTransposed),
                _ => None,
            };
            if let Some(solve) = solve {
                return self.trsm_lower(solve, diag, alpha, a, b);
            }
        }
        let d = |x| blas::dim(name, x);
        if which == blas::Triangular::Solve && side == Side::Left && b.cols() == 1 && alpha == T::ONE {
            // SAFETY: blocks checked by `check`; `b` is one column.
            return unsafe {
                blas::trsv::<T>(
                    *self.blas.handle(),
                    (uplo, op, diag),
                    d(b.rows())?,
                    (raw(&a), d(a.block().ld)?),
                    (raw_mut(&b), 1),
                )
            };
        }
        // SAFETY: blocks checked by `check`; see `blas`.
        unsafe {
            blas::triangular(
                *self.blas.handle(),
                which,
                (side, uplo, op, diag),
                (d(b.rows())?, d(b.cols())?),
                alpha,
                (raw(&a), d(a.block().ld)?),
                (raw_mut(&b), d(b.block().ld)?),
            )
        }
    }

    /// `len` entries of device memory, zero-filled or (for the caller to
    /// overwrite at once) not. A request larger than the free memory is
    /// `OutOfDeviceMemory` before the driver is asked.
    fn buffer<E: Elem>(&self, len: usize, zeroed: bool) -> Result<CudaBuffer<E>> {
        let bytes =
            len.checked_mul(size_of::<E>()).ok_or(Error::OutOfDeviceMemory { requested: usize::MAX, free: 0 })?;
        let (free, _) = self.memory()?;
        let oom = || Error::OutOfDeviceMemory { requested: bytes, free };
        if bytes > free {
            return Err(oom());
        }
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

    fn scale_by_vector<T: Scalar>(&self, name: &str, d: View<'_, Cuda, T>, a: ViewMut<'_, Cuda, T>) -> Result<()> {
        let (b, db) = (a.block(), d.block());
        let incd = if db.cols == 1 { 1 } else { db.ld };
        let args = [ptr_mut(&a), n(b.ld), n(b.rows), n(b.cols), ptr(&d), n(incd)];
        self.elementwise(&format!("{name}_{}", T::NAME), b.rows, b.cols, &args)
    }
}
