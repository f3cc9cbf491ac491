//! Launching the kernels of `kernels/*.cu`: arguments, grids, thread-block
//! clusters, and the compiled functions cached per context.

use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};

use super::{Cuda, CudaBuffer, driver, kernels};
use crate::backend::{Block, View, ViewMut};
use crate::{Elem, Error, Result, Scalar};

/// Threads per block of the 1-D kernels (the reductions assume exactly this).
pub(super) const BLOCK: usize = 256;

/// Most blocks a 1-D launch uses; the kernels stride over the rest.
pub(super) const MAX_BLOCKS: usize = 65_535;

/// A kernel argument, owned so that the launch can point at it.
#[derive(Clone, Copy)]
pub(super) enum Arg {
    Ptr(u64),
    I64(i64),
    I32(i32),
    /// The bits of a 4- or 8-byte element, passed as that element.
    Bits32(u32),
    Bits64(u64),
    F64(f64),
}

pub(super) fn elem<E: Elem>(v: E) -> Arg {
    // SAFETY: every `Elem` is a plain 4- or 8-byte number.
    match size_of::<E>() {
        8 => Arg::Bits64(unsafe { std::mem::transmute_copy(&v) }),
        _ => Arg::Bits32(unsafe { std::mem::transmute_copy(&v) }),
    }
}

pub(super) fn n(x: usize) -> Arg {
    Arg::I64(x as i64)
}

/// Distance between consecutive entries of a vector block (a column, or a
/// row of a matrix with leading dimension `ld`).
pub(super) fn stride(b: Block) -> usize {
    if b.cols == 1 { 1 } else { b.ld }
}

pub(super) fn grid_1d(total: usize, cap: usize) -> LaunchConfig {
    let blocks = total.div_ceil(BLOCK).clamp(1, cap);
    LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (BLOCK as u32, 1, 1), shared_mem_bytes: 0 }
}

/// Device address of entry `(0, 0)` of a block.
fn addr<E: Elem>(buf: &CudaBuffer<E>, offset: usize) -> u64 {
    buf.ptr + (offset * size_of::<E>()) as u64
}

pub(super) fn raw<E: Elem>(v: &View<'_, Cuda, E>) -> u64 {
    addr(v.buffer(), v.block().offset)
}

pub(super) fn raw_mut<E: Elem>(v: &ViewMut<'_, Cuda, E>) -> u64 {
    addr(v.buffer(), v.block().offset)
}

/// Device address of entry `(0, 0)` of member 0's block.
pub(super) fn raw_strided<E: Elem>(buf: &CudaBuffer<E>, block: Block) -> u64 {
    addr(buf, block.offset)
}

pub(super) fn ptr<E: Elem>(v: &View<'_, Cuda, E>) -> Arg {
    Arg::Ptr(raw(v))
}

pub(super) fn ptr_mut<E: Elem>(v: &ViewMut<'_, Cuda, E>) -> Arg {
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

impl Cuda {
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
        let f = module.load_function(name).map_err(driver(&format!("loading kernel {name} of {file}.cu")))?;
        cache.insert(name.to_string(), f.clone());
        Ok(f)
    }

    pub(super) fn launch(&self, file: &str, name: &str, cfg: LaunchConfig, args: &[Arg]) -> Result<()> {
        let f = self.function(file, name)?;
        self.allow_shared_memory(&f, name, cfg.shared_mem_bytes)?;
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
        unsafe { b.launch(cfg) }.map(|_| ()).map_err(driver(&format!("launching {name}")))
    }

    /// Past 48 KiB of shared memory, static and dynamic together, the
    /// dynamic part is opt-in per function. The opt-in is the device's
    /// whole allowance, whatever this launch asks for: a function's
    /// attribute is shared by every thread that launches it, so a smaller
    /// value set for one launch could refuse another's.
    fn allow_shared_memory(&self, f: &CudaFunction, name: &str, bytes: u32) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let fixed = f.shared_size_bytes().map_err(driver(&format!("{name}: reading its shared memory")))?;
        if fixed as u32 + bytes <= 48 * 1024 {
            return Ok(());
        }
        let allowance = self
            .ctx
            .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .map_err(driver("reading the shared memory a block may opt in to"))?;
        let most = (allowance - fixed).max(0);
        if bytes as i32 > most {
            return Err(Error::Device(format!(
                "{name} asks for {bytes} bytes of shared memory, more than the {most} a block may have"
            )));
        }
        f.set_attribute(
            cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            most,
        )
        .map_err(driver(&format!("{name}: asking for {most} bytes of shared memory")))
    }

    /// [`Self::launch`] of a grid that is one thread-block cluster (sm_90
    /// and later), whose blocks are resident together and share their
    /// shared memory.
    pub(super) fn launch_cluster(&self, file: &str, name: &str, cfg: LaunchConfig, args: &[Arg]) -> Result<()> {
        self.launch_clusters(file, name, cfg, cfg.grid_dim.0, args)
    }

    /// [`Self::launch`] of a grid of thread-block clusters of `size`
    /// consecutive blocks each (sm_90 and later).
    pub(super) fn launch_clusters(
        &self,
        file: &str,
        name: &str,
        cfg: LaunchConfig,
        size: u32,
        args: &[Arg],
    ) -> Result<()> {
        use cudarc::driver::sys;
        let f = self.function(file, name)?;
        let op = format!("launching {name} in clusters of {size}");
        let fail = driver(&op);
        self.allow_shared_memory(&f, name, cfg.shared_mem_bytes)?;
        if size > 8 {
            // Clusters past 8 blocks are opt-in per function.
            f.set_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
                .map_err(&fail)?;
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
        let mut cluster = cluster_attribute(size);
        let config = self.cluster_config(&cfg, &mut cluster);
        self.ctx.bind_to_thread().map_err(&fail)?;
        // SAFETY: as in `launch`; `params` points at `args`, which outlive the
        // call (the driver copies the values at launch).
        unsafe { sys::cuLaunchKernelEx(&config, f.cu_function(), params.as_mut_ptr(), std::ptr::null_mut()) }
            .result()
            .map_err(&fail)
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
    pub(super) fn cluster_limit(&self, file: &str, name: &str, threads: u32) -> Result<usize> {
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

    /// An elementwise kernel over a `rows × cols` block.
    pub(super) fn elementwise(&self, name: &str, rows: usize, cols: usize, args: &[Arg]) -> Result<()> {
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        self.launch("elementwise", name, grid_1d(rows * cols, MAX_BLOCKS), args)
    }

    pub(super) fn scale_by_vector<T: Scalar>(
        &self,
        name: &str,
        d: View<'_, Cuda, T>,
        a: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        let (b, db) = (a.block(), d.block());
        let incd = if db.cols == 1 { 1 } else { db.ld };
        let args = [ptr_mut(&a), n(b.ld), n(b.rows), n(b.cols), ptr(&d), n(incd)];
        self.elementwise(&format!("{name}_{}", T::NAME), b.rows, b.cols, &args)
    }
}
