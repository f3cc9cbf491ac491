//! The vendor's routines called directly, as baselines for tests and
//! benchmarks only: gpumat's algorithms never call these.

use std::ffi::{c_int, c_void};
use std::marker::PhantomData;

use cudarc::cusolver::sys;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, PinnedHostSlice};
use rayon::prelude::*;

use super::blas::{self, operand, operand_mut};
use super::{Cuda, CudaBuffer, driver, raw, raw_mut};
use crate::backend::{DeviceBuffer, Diag, Op, Side, SystemLayout, View, ViewMut};
use crate::layout::Uplo;
use crate::{DeviceLibrary, Error, Result, Scalar};

/// cuSOLVER's lower triangle: the factorizations here all take it.
const LOWER: sys::cublasFillMode_t = sys::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER;

/// cuBLAS `gemm` on whole dense buffers: `C := A·B`.
pub fn gemm<T: Scalar>(
    cuda: &Cuda,
    n: usize,
    a: &CudaBuffer<T>,
    b: &CudaBuffer<T>,
    c: &mut CudaBuffer<T>,
) -> Result<()> {
    let d = blas::dim("gemm", n)?;
    let (a, b) = (View::dense(a, n, n)?, View::dense(b, n, n)?);
    let c = ViewMut::dense(c, n, n)?;
    // SAFETY: dense n × n blocks of live buffers (checked by `View::dense`).
    unsafe {
        blas::gemm(
            *cuda.cublas().handle(),
            (Op::NoTrans, Op::NoTrans),
            (d, d, d),
            T::ONE,
            (raw(&a), d),
            (raw(&b), d),
            T::ZERO,
            (raw_mut(&c), d),
        )
    }
}

/// cuBLAS's INT8 product with INT32 accumulation, "TN" (the layout of the
/// integer tensor cores): `C := Aᵀ·B` for `A` and `B` of `n × n` bytes (in
/// buffers of `n²/4` words) and `C` of `n × n` INT32, as products of blocks
/// of at most `tile` rows and columns of `C` and `depth` of the sum (the
/// chunks of the depth accumulate in INT32).
pub fn gemm_i8(
    cuda: &Cuda,
    n: usize,
    (tile, depth): (usize, usize),
    (a, b): (&CudaBuffer<i32>, &CudaBuffer<i32>),
    c: &mut CudaBuffer<i32>,
) -> Result<()> {
    if a.len() * 4 < n * n || b.len() * 4 < n * n || c.len() < n * n || tile == 0 || depth == 0 {
        let detail = format!("order {n} on buffers of {}, {} and {} words", a.len(), b.len(), c.len());
        return Err(Error::DimensionMismatch { op: "gemm (INT8)", detail });
    }
    let d = |x| blas::dim("gemm (INT8)", x);
    for j in (0..n).step_by(tile) {
        for i in (0..n).step_by(tile) {
            for p in (0..n).step_by(depth) {
                let (rows, cols, k) = (tile.min(n - i), tile.min(n - j), depth.min(n - p));
                // SAFETY: the blocks lie inside the n × n operands, checked
                // above.
                unsafe {
                    blas::gemm_i8(
                        *cuda.cublas().handle(),
                        (Op::Trans, Op::NoTrans),
                        (d(rows)?, d(cols)?, d(k)?),
                        (a.ptr + (p + i * n) as u64, d(n)?),
                        (b.ptr + (p + j * n) as u64, d(n)?),
                        (c.ptr + 4 * (i + j * n) as u64, d(n)?),
                        p > 0,
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// cuBLAS's own FP64 emulation on fixed-point integer products
/// (`CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT`): `C := A·B` on dense `n × n`
/// buffers, under `strategy` (`EAGER` emulates wherever cuBLAS can; its
/// default may run native `dgemm`). The handle's strategy is restored.
pub fn gemm_emulated(
    cuda: &Cuda,
    n: usize,
    (a, b): (&CudaBuffer<f64>, &CudaBuffer<f64>),
    c: &mut CudaBuffer<f64>,
    strategy: cudarc::cublas::sys::cublasEmulationStrategy_t,
) -> Result<()> {
    use cudarc::cublas::sys as cb;
    let d = blas::dim("gemm (emulated)", n)?;
    let (a, b) = (View::dense(a, n, n)?, View::dense(b, n, n)?);
    let c = ViewMut::dense(c, n, n)?;
    let h = *cuda.cublas().handle();
    let (one, zero) = (1.0f64, 0.0f64);
    // SAFETY: dense n × n FP64 blocks of live buffers; host scalars.
    unsafe {
        blas::status("cublasSetEmulationStrategy", cb::cublasSetEmulationStrategy(h, strategy))?;
        let s = cb::cublasGemmEx(
            h,
            cb::cublasOperation_t::CUBLAS_OP_N,
            cb::cublasOperation_t::CUBLAS_OP_N,
            d,
            d,
            d,
            &one as *const f64 as *const c_void,
            raw(&a) as *const c_void,
            cb::cudaDataType::CUDA_R_64F,
            d,
            raw(&b) as *const c_void,
            cb::cudaDataType::CUDA_R_64F,
            d,
            &zero as *const f64 as *const c_void,
            raw_mut(&c) as *mut c_void,
            cb::cudaDataType::CUDA_R_64F,
            d,
            cb::cublasComputeType_t::CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT,
            cb::cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
        );
        let default = cb::cublasEmulationStrategy_t::CUBLAS_EMULATION_STRATEGY_DEFAULT;
        let restored = cb::cublasSetEmulationStrategy(h, default);
        blas::status("gemm (cuBLAS FP64 emulation)", s)?;
        blas::status("cublasSetEmulationStrategy", restored)
    }
}

/// cuBLAS `syrk`, lower: `C := A·Aᵀ`.
pub fn syrk<T: Scalar>(cuda: &Cuda, n: usize, a: &CudaBuffer<T>, c: &mut CudaBuffer<T>) -> Result<()> {
    let d = blas::dim("syrk", n)?;
    let a = View::dense(a, n, n)?;
    let c = ViewMut::dense(c, n, n)?;
    // SAFETY: as `gemm`.
    unsafe {
        blas::syrk(
            *cuda.cublas().handle(),
            Uplo::Lower,
            Op::NoTrans,
            (d, d),
            T::ONE,
            (raw(&a), d),
            T::ZERO,
            (raw_mut(&c), d),
        )
    }
}

/// cuBLAS `trsm` from the left: `B := A⁻¹·B`, `A` triangular as `uplo`
/// and `diag` say, whatever the shape of `B` (gpumat's own `trsm` takes
/// `kernels/trsm.cu` for the LU's block columns and `trsv` for one column).
pub fn trsm_left<T: Scalar>(
    cuda: &Cuda,
    (uplo, diag): (Uplo, Diag),
    a: View<'_, Cuda, T>,
    b: ViewMut<'_, Cuda, T>,
) -> Result<()> {
    crate::backend::check::triangular("trsm", Side::Left, uplo, &a, &b)?;
    let d = |x| blas::dim("trsm", x);
    // SAFETY: blocks of live buffers, shapes checked above.
    unsafe {
        blas::triangular(
            *cuda.cublas().handle(),
            blas::Triangular::Solve,
            (Side::Left, uplo, Op::NoTrans, diag),
            (d(b.rows())?, d(b.cols())?),
            T::ONE,
            operand(&a, "trsm")?,
            operand_mut(&b, "trsm")?,
        )
    }
}

/// A device-to-device copy of a whole buffer (`cuMemcpyDtoDAsync`): the
/// bandwidth yardstick for data movement kernels.
pub fn copy<T: Scalar>(cuda: &Cuda, src: &CudaBuffer<T>, dst: &mut CudaBuffer<T>) -> Result<()> {
    if src.len() != dst.len() {
        return Err(Error::dims("copy", format!("{} and {} entries", src.len(), dst.len())));
    }
    let bytes = src.len() * size_of::<T>();
    cuda.stream().memcpy_dtod(&src.mem.slice(0..bytes), &mut dst.mem.slice_mut(0..bytes)).map_err(driver("copy"))
}

/// Host memory that is page-locked, the fastest a transfer can come from.
pub fn pinned(cuda: &Cuda, bytes: usize) -> Result<PinnedHostSlice<u8>> {
    // SAFETY: plain bytes, written before they are read.
    unsafe { cuda.context().alloc_pinned_with_flags::<u8>(bytes, 0) }.map_err(driver("allocating pinned host memory"))
}

/// A raw device allocation of `bytes`.
pub fn device_bytes(cuda: &Cuda, bytes: usize) -> Result<CudaSlice<u8>> {
    cuda.stream().alloc_zeros::<u8>(bytes).map_err(driver("alloc"))
}

/// Host-to-device copy from pinned memory: the ceiling for uploads.
pub fn pinned_upload(cuda: &Cuda, src: &PinnedHostSlice<u8>, dst: &mut CudaSlice<u8>) -> Result<()> {
    cuda.stream().memcpy_htod(src, dst).map_err(driver("upload"))
}

/// Device-to-host copy into pinned memory: the ceiling for downloads.
pub fn pinned_download(cuda: &Cuda, src: &CudaSlice<u8>, dst: &mut PinnedHostSlice<u8>) -> Result<()> {
    cuda.stream().memcpy_dtoh(src, dst).map_err(driver("download"))
}

/// cuSOLVER's name for the element type: the 64-bit API takes it as data,
/// so one wrapper serves `dpotrf` and `spotrf` (likewise `geqrf`, `getrf`).
fn data_type<T: Scalar>() -> sys::cudaDataType {
    use sys::cudaDataType::{CUDA_R_32F, CUDA_R_64F};
    if T::NAME == "f32" { CUDA_R_32F } else { CUDA_R_64F }
}

/// A cuSOLVER call's status as a `Result`, naming the routine.
fn succeeded(routine: &str, status: sys::cusolverStatus_t) -> Result<()> {
    match status {
        sys::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS => Ok(()),
        s => Err(Error::device_call(DeviceLibrary::Cusolver, routine, s)),
    }
}

/// A cuSOLVER handle on the backend's stream with its 64-bit API
/// parameters, the workspaces one routine asked for and its `devInfo`.
struct Solver {
    handle: cudarc::cusolver::DnHandle,
    params: CusolverParams,
    work: CudaSlice<u8>,
    host_work: Vec<u8>,
    info: CudaSlice<i32>,
}

type Query<'a> =
    dyn FnOnce(sys::cusolverDnHandle_t, sys::cusolverDnParams_t, &mut usize, &mut usize) -> sys::cusolverStatus_t + 'a;

/// What every 64-bit cuSOLVER routine takes besides its operands.
struct Call {
    handle: sys::cusolverDnHandle_t,
    params: sys::cusolverDnParams_t,
    work: *mut c_void,
    work_bytes: usize,
    host_work: *mut c_void,
    host_bytes: usize,
    info: *mut i32,
}

impl Solver {
    /// A handle and parameters, then the workspaces `query` (the routine's
    /// `_bufferSize`, named `routine`) asks for, in (device, host) bytes.
    fn new(cuda: &Cuda, routine: &str, query: Box<Query<'_>>) -> Result<Self> {
        // SAFETY: only probes whether the library can be loaded.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::Device("cuSOLVER not found (libcusolver could not be loaded)".into()));
        }
        let handle = cudarc::cusolver::DnHandle::new(cuda.stream().clone())
            .map_err(|e| Error::device_call(DeviceLibrary::Cusolver, "creating a handle", e.0))?;
        let mut raw_params = std::ptr::null_mut();
        // SAFETY: writes a new parameter object.
        let s = unsafe { sys::cusolverDnCreateParams(&mut raw_params) };
        succeeded("params", s)?;
        let params = CusolverParams(raw_params);
        let (mut device_bytes, mut host_bytes) = (0usize, 0usize);
        let s = query(handle.cu(), params.0, &mut device_bytes, &mut host_bytes);
        succeeded(&format!("{routine}_bufferSize"), s)?;
        let work =
            cuda.stream().alloc_zeros::<u8>(device_bytes.max(1)).map_err(driver(&format!("{routine} workspace")))?;
        let info = cuda.stream().alloc_zeros::<i32>(1).map_err(driver("allocating devInfo"))?;
        Ok(Solver { handle, params, work, host_work: vec![0; host_bytes.max(1)], info })
    }

    /// Runs `routine` through `f`, which gets this solver's handle,
    /// workspaces and `devInfo` on the backend's stream.
    fn call(&mut self, cuda: &Cuda, routine: &str, f: impl FnOnce(Call) -> sys::cusolverStatus_t) -> Result<()> {
        let s = cuda.stream();
        let (work_bytes, host_bytes) = (self.work.len(), self.host_work.len());
        let (work, _) = self.work.device_ptr_mut(s);
        let (info, _) = self.info.device_ptr_mut(s);
        let call = Call {
            handle: self.handle.cu(),
            params: self.params.0,
            work: work as *mut c_void,
            work_bytes,
            host_work: self.host_work.as_mut_ptr().cast(),
            host_bytes,
            info: info as *mut i32,
        };
        succeeded(routine, f(call))
    }

    /// Bytes of device workspace cuSOLVER asked for.
    fn workspace_bytes(&self) -> usize {
        self.work.len()
    }

    /// `devInfo` after the last call (waits for it).
    fn info(&self, cuda: &Cuda) -> Result<i32> {
        let mut host = [0i32];
        cuda.stream().memcpy_dtoh(&self.info, &mut host).map_err(driver("reading devInfo"))?;
        cuda.stream().synchronize().map_err(driver("reading devInfo"))?;
        Ok(host[0])
    }
}

/// `cusolverDnParams_t`, destroyed on drop.
struct CusolverParams(sys::cusolverDnParams_t);

impl Drop for CusolverParams {
    fn drop(&mut self) {
        // SAFETY: created by cusolverDnCreateParams and used by no one else.
        unsafe { sys::cusolverDnDestroyParams(self.0) };
    }
}

// SAFETY: the parameter object is only read by calls made through `&mut` of its owner.
unsafe impl Send for CusolverParams {}
unsafe impl Sync for CusolverParams {}

/// The address of a dense block as cuSOLVER's untyped pointer.
fn void(address: u64) -> *mut c_void {
    address as *mut c_void
}

/// cuSOLVER's `dpotrf` (`spotrf` for `f32`; lower) and `dpotrs`, through
/// its 64-bit API (`cusolverDnXpotrf`, so that orders past 46341 work),
/// with its workspaces, on the backend's stream: the baseline for gpumat's
/// Cholesky.
pub struct DenseCholesky<T: Scalar = f64> {
    solver: Solver,
    n: usize,
    precision: PhantomData<T>,
}

impl<T: Scalar> DenseCholesky<T> {
    /// Handle and workspace for order `n`.
    pub fn new(cuda: &Cuda, n: usize) -> Result<Self> {
        let (d, ld, ty) = (n as i64, n.max(1) as i64, data_type::<T>());
        // SAFETY: a workspace query; A is not read.
        let query = move |h, p, device: &mut usize, host: &mut usize| unsafe {
            sys::cusolverDnXpotrf_bufferSize(h, p, LOWER, d, ty, std::ptr::null(), ld, ty, device, host)
        };
        let solver = Solver::new(cuda, "Xpotrf", Box::new(query))?;
        Ok(DenseCholesky { solver, n, precision: PhantomData })
    }

    /// Bytes of device workspace cuSOLVER asked for.
    pub fn workspace_bytes(&self) -> usize {
        self.solver.workspace_bytes()
    }

    /// Factors the dense `n × n` buffer `a` in place (lower triangle).
    pub fn factor(&mut self, cuda: &Cuda, a: &mut CudaBuffer<T>) -> Result<()> {
        let (n, ty) = (self.n, data_type::<T>());
        let a = ViewMut::dense(a, n, n)?;
        // SAFETY: a dense n × n block of a live buffer; workspaces as queried.
        self.solver.call(cuda, "Xpotrf", |c| unsafe {
            sys::cusolverDnXpotrf(
                c.handle,
                c.params,
                LOWER,
                n as i64,
                ty,
                void(raw_mut(&a)),
                n.max(1) as i64,
                ty,
                c.work,
                c.work_bytes,
                c.host_work,
                c.host_bytes,
                c.info,
            )
        })
    }

    /// cuSOLVER's `dpotrs` (`cusolverDnXpotrs`): overwrites the dense
    /// `n × nrhs` buffer `b` with `A⁻¹·B`, `a` holding the factor from
    /// [`factor`](Self::factor).
    pub fn solve(&mut self, cuda: &Cuda, a: &CudaBuffer<T>, b: &mut CudaBuffer<T>, nrhs: usize) -> Result<()> {
        let (n, ty) = (self.n, data_type::<T>());
        let a = View::dense(a, n, n)?;
        let b = ViewMut::dense(b, n, nrhs)?;
        let ld = n.max(1) as i64;
        // SAFETY: dense blocks of live buffers (checked above).
        self.solver.call(cuda, "Xpotrs", |c| unsafe {
            sys::cusolverDnXpotrs(
                c.handle,
                c.params,
                LOWER,
                n as i64,
                nrhs as i64,
                ty,
                void(raw(&a)),
                ld,
                ty,
                void(raw_mut(&b)),
                ld,
                c.info,
            )
        })
    }

    /// cuSOLVER's `devInfo` after the last call (waits for it).
    pub fn info(&self, cuda: &Cuda) -> Result<i32> {
        self.solver.info(cuda)
    }
}

// Householder QR.

/// cuSOLVER's `dgeqrf` (`sgeqrf` for `f32`) through its 64-bit API
/// (`cusolverDnXgeqrf`), with its workspaces, on the backend's stream: the
/// baseline for gpumat's QR.
pub struct DenseQr<T: Scalar = f64> {
    solver: Solver,
    /// The Householder scalars, `min(m, n)` entries of `T` (as bytes).
    tau: CudaSlice<u8>,
    /// `dormqr`'s workspace and the right-hand sides it was sized for.
    ormqr_work: Option<(CudaSlice<f64>, usize)>,
    m: usize,
    n: usize,
    precision: PhantomData<T>,
}

impl<T: Scalar> DenseQr<T> {
    /// Handle and workspace for `m × n` matrices.
    pub fn new(cuda: &Cuda, m: usize, n: usize) -> Result<Self> {
        let (rows, cols, ld, ty) = (m as i64, n as i64, m.max(1) as i64, data_type::<T>());
        let null = std::ptr::null();
        // SAFETY: a workspace query; A and tau are not read.
        let query = move |h, p, device: &mut usize, host: &mut usize| unsafe {
            sys::cusolverDnXgeqrf_bufferSize(h, p, rows, cols, ty, null, ld, ty, null, ty, device, host)
        };
        let solver = Solver::new(cuda, "Xgeqrf", Box::new(query))?;
        let tau_bytes = m.min(n).max(1) * size_of::<T>();
        let tau = cuda.stream().alloc_zeros::<u8>(tau_bytes).map_err(driver("allocating tau"))?;
        Ok(DenseQr { solver, tau, ormqr_work: None, m, n, precision: PhantomData })
    }

    /// Bytes of device workspace cuSOLVER asked for, with `tau`.
    pub fn workspace_bytes(&self) -> usize {
        self.solver.workspace_bytes() + self.tau.len()
    }

    /// Factors the dense `m × n` buffer `a` in place.
    pub fn factor(&mut self, cuda: &Cuda, a: &mut CudaBuffer<T>) -> Result<()> {
        let (m, n, ty) = (self.m, self.n, data_type::<T>());
        let a = ViewMut::dense(a, m, n)?;
        let (tau, _) = self.tau.device_ptr_mut(cuda.stream());
        // SAFETY: a dense m × n block of a live buffer; workspaces as queried.
        self.solver.call(cuda, "Xgeqrf", |c| unsafe {
            sys::cusolverDnXgeqrf(
                c.handle,
                c.params,
                m as i64,
                n as i64,
                ty,
                void(raw_mut(&a)),
                m.max(1) as i64,
                ty,
                void(tau),
                ty,
                c.work,
                c.work_bytes,
                c.host_work,
                c.host_bytes,
                c.info,
            )
        })
    }

    /// cuSOLVER's `devInfo` after the last factorization (waits for it).
    pub fn info(&self, cuda: &Cuda) -> Result<i32> {
        self.solver.info(cuda)
    }
}

impl DenseQr<f64> {
    /// Overwrites `a`, factored by [`factor`](Self::factor), with the
    /// explicit `m × n` `Q` (`dorgqr`): random orthogonal matrices for test
    /// inputs.
    pub fn explicit_q(&mut self, cuda: &Cuda, a: &mut CudaBuffer<f64>) -> Result<()> {
        let (m, n) = (self.m, self.n);
        let dim = |x: usize| i32::try_from(x.max(1)).map_err(|_| Error::dims("dorgqr", "beyond 32 bits"));
        let (mi, ni, ld) = (dim(m)?, dim(n)?, dim(m)?);
        let a = ViewMut::dense(a, m, n)?;
        let stream = cuda.stream().clone();
        let (tau, _) = self.tau.device_ptr(&stream);
        let mut lwork = 0i32;
        let h = self.solver.handle.cu();
        // SAFETY: a workspace query on a dense block of a live buffer.
        let s = unsafe {
            sys::cusolverDnDorgqr_bufferSize(
                h,
                mi,
                ni,
                ni,
                raw_mut(&a) as *const f64,
                ld,
                tau as *const f64,
                &mut lwork,
            )
        };
        succeeded("Dorgqr_bufferSize", s)?;
        let mut work = stream.alloc_zeros::<f64>(lwork.max(1) as usize).map_err(driver("dorgqr workspace"))?;
        let (w, _) = work.device_ptr_mut(&stream);
        let (info, _) = self.solver.info.device_ptr_mut(&stream);
        // SAFETY: as queried; tau from the factorization of this block.
        let s = unsafe {
            sys::cusolverDnDorgqr(
                h,
                mi,
                ni,
                ni,
                raw_mut(&a) as *mut f64,
                ld,
                tau as *const f64,
                w as *mut f64,
                lwork.max(1),
                info as *mut i32,
            )
        };
        succeeded("Dorgqr", s)?;
        stream.synchronize().map_err(driver("dorgqr"))
    }
}

impl DenseQr<f64> {
    /// The least-squares solution of `A·X ≈ B` for `a` factored by
    /// [`factor`](Self::factor) (`m ≥ n`): `B := Qᵀ·B` by `dormqr`, then
    /// `R⁻¹` by cuBLAS `dtrsm` on its top `n` rows, as LAPACK's `dgels`.
    /// `b` is `m × nrhs`; the workspace is queried and allocated on the
    /// first call (outside any timing that follows).
    pub fn least_squares(
        &mut self,
        cuda: &Cuda,
        a: &CudaBuffer<f64>,
        b: &mut CudaBuffer<f64>,
        nrhs: usize,
    ) -> Result<()> {
        let (m, n) = (self.m, self.n);
        if m < n {
            return Err(Error::dims("dgels", format!("A is {m}×{n}: fewer rows than columns")));
        }
        let dim = |x: usize| i32::try_from(x.max(1)).map_err(|_| Error::dims("dormqr", "beyond 32 bits"));
        let (mi, ni, ki) = (dim(m)?, dim(nrhs)?, dim(n)?);
        let (av, bv) = (View::dense(a, m, n)?, ViewMut::dense(b, m, nrhs)?);
        let stream = cuda.stream().clone();
        let h = self.solver.handle.cu();
        let (left, trans) = (sys::cublasSideMode_t::CUBLAS_SIDE_LEFT, sys::cublasOperation_t::CUBLAS_OP_T);
        if self.ormqr_work.as_ref().is_none_or(|(_, cols)| *cols != nrhs) {
            let (tau, _) = self.tau.device_ptr(&stream);
            let mut lwork = 0i32;
            // SAFETY: a workspace query on dense blocks of live buffers.
            let s = unsafe {
                sys::cusolverDnDormqr_bufferSize(
                    h,
                    left,
                    trans,
                    mi,
                    ni,
                    ki,
                    raw(&av) as *const f64,
                    mi,
                    tau as *const f64,
                    raw_mut(&bv) as *const f64,
                    mi,
                    &mut lwork,
                )
            };
            succeeded("Dormqr_bufferSize", s)?;
            let work = stream.alloc_zeros::<f64>(lwork.max(1) as usize).map_err(driver("dormqr workspace"))?;
            self.ormqr_work = Some((work, nrhs));
        }
        let (work, _) = self.ormqr_work.as_mut().expect("allocated above").0.device_ptr_mut(&stream);
        let lwork = i32::try_from(self.ormqr_work.as_ref().expect("allocated above").0.len())
            .map_err(|_| Error::dims("dormqr", "workspace beyond 32 bits"))?;
        let (tau, _) = self.tau.device_ptr(&stream);
        let (info, _) = self.solver.info.device_ptr_mut(&stream);
        // SAFETY: as queried; tau from the factorization of this block.
        let s = unsafe {
            sys::cusolverDnDormqr(
                h,
                left,
                trans,
                mi,
                ni,
                ki,
                raw(&av) as *const f64,
                mi,
                tau as *const f64,
                raw_mut(&bv) as *mut f64,
                mi,
                work as *mut f64,
                lwork,
                info as *mut i32,
            )
        };
        succeeded("Dormqr", s)?;
        let r = av.sub(0, 0, n, n)?;
        let top = bv.sub_mut(0, 0, n, nrhs)?;
        let d = |x| blas::dim("trsm", x);
        // SAFETY: blocks of live buffers with the shapes of a triangular solve.
        unsafe {
            blas::triangular(
                *cuda.cublas().handle(),
                blas::Triangular::Solve,
                (Side::Left, Uplo::Upper, Op::NoTrans, Diag::NonUnit),
                (d(n)?, d(nrhs)?),
                1.0,
                operand(&r, "trsm")?,
                operand_mut(&top, "trsm")?,
            )
        }
    }
}

/// cuSOLVER's `dgetrf` (`sgetrf` for `f32`; partial pivoting), through its
/// 64-bit API (`cusolverDnXgetrf`), with its workspaces, on the backend's
/// stream: the baseline for gpumat's LU.
pub struct DenseLu<T: Scalar = f64> {
    solver: Solver,
    ipiv: CudaSlice<i64>,
    n: usize,
    precision: PhantomData<T>,
}

impl<T: Scalar> DenseLu<T> {
    /// Handle, pivots and workspace for order `n`.
    pub fn new(cuda: &Cuda, n: usize) -> Result<Self> {
        let (d, ld, ty) = (n as i64, n.max(1) as i64, data_type::<T>());
        // SAFETY: a workspace query; A is not read.
        let query = move |h, p, device: &mut usize, host: &mut usize| unsafe {
            sys::cusolverDnXgetrf_bufferSize(h, p, d, d, ty, std::ptr::null(), ld, ty, device, host)
        };
        let solver = Solver::new(cuda, "Xgetrf", Box::new(query))?;
        let ipiv = cuda.stream().alloc_zeros::<i64>(n.max(1)).map_err(driver("allocating ipiv"))?;
        Ok(DenseLu { solver, ipiv, n, precision: PhantomData })
    }

    /// Bytes of device workspace cuSOLVER asked for.
    pub fn workspace_bytes(&self) -> usize {
        self.solver.workspace_bytes()
    }

    /// Factors the dense `n × n` buffer `a` in place: `P·A = L·U`.
    pub fn factor(&mut self, cuda: &Cuda, a: &mut CudaBuffer<T>) -> Result<()> {
        let (n, ty) = (self.n, data_type::<T>());
        let a = ViewMut::dense(a, n, n)?;
        let (ipiv, _) = self.ipiv.device_ptr_mut(cuda.stream());
        // SAFETY: a dense n × n block of a live buffer; n pivots; workspaces as queried.
        self.solver.call(cuda, "Xgetrf", |c| unsafe {
            sys::cusolverDnXgetrf(
                c.handle,
                c.params,
                n as i64,
                n as i64,
                ty,
                void(raw_mut(&a)),
                n.max(1) as i64,
                ipiv as *mut i64,
                ty,
                c.work,
                c.work_bytes,
                c.host_work,
                c.host_bytes,
                c.info,
            )
        })
    }

    /// cuSOLVER's `dgetrs` (`cusolverDnXgetrs`): overwrites the dense
    /// `n × nrhs` buffer `b` with `A⁻¹·B`, `a` holding the factor from
    /// [`factor`](Self::factor).
    pub fn solve(&mut self, cuda: &Cuda, a: &CudaBuffer<T>, b: &mut CudaBuffer<T>, nrhs: usize) -> Result<()> {
        let (n, ty) = (self.n, data_type::<T>());
        let a = View::dense(a, n, n)?;
        let b = ViewMut::dense(b, n, nrhs)?;
        let ld = n.max(1) as i64;
        let (ipiv, _) = self.ipiv.device_ptr(cuda.stream());
        // SAFETY: dense blocks of live buffers (checked above); n pivots.
        self.solver.call(cuda, "Xgetrs", |c| unsafe {
            sys::cusolverDnXgetrs(
                c.handle,
                c.params,
                sys::cublasOperation_t::CUBLAS_OP_N,
                n as i64,
                nrhs as i64,
                ty,
                void(raw(&a)),
                ld,
                ipiv as *const i64,
                ty,
                void(raw_mut(&b)),
                ld,
                c.info,
            )
        })
    }

    /// The pivots of the last factorization, 1-based (waits for it).
    pub fn pivots(&self, cuda: &Cuda) -> Result<Vec<i64>> {
        let mut host = vec![0i64; self.n.max(1)];
        cuda.stream().memcpy_dtoh(&self.ipiv, &mut host).map_err(driver("reading ipiv"))?;
        cuda.stream().synchronize().map_err(driver("reading ipiv"))?;
        host.truncate(self.n);
        Ok(host)
    }

    /// cuSOLVER's `devInfo` after the last factorization (waits for it).
    pub fn info(&self, cuda: &Cuda) -> Result<i32> {
        self.solver.info(cuda)
    }
}

// Symmetric indefinite LDLᵀ.

/// `n` as the `int` of cuSOLVER's 32-bit API.
fn legacy_dim(routine: &'static str, n: usize) -> Result<c_int> {
    c_int::try_from(n).map_err(|_| Error::dims(routine, format!("order {n} does not fit the 32-bit API")))
}

/// cuSOLVER's `dsytrf` (`ssytrf` for `f32`; lower triangle, Bunch–Kaufman
/// pivoting, or none) with its workspace, and the solve with its factor
/// (`cusolverDnXsytrs`), on the backend's stream: the baseline for gpumat's
/// LDLᵀ.
///
/// The factorization exists only in the 32-bit API in the CUDA versions
/// gpumat builds for (`cusolverDnXsytrf` comes with CUDA 13.4), so its
/// pivots are 32-bit; the solve exists only in the 64-bit API and reads
/// 64-bit ones. The first [`solve`](Self::solve) after a factorization
/// widens them, a round trip of `n` integers through the host that the
/// warm-up run of a timing takes. The pivots follow LAPACK: `k > 0` at `i`
/// is a 1×1 block with rows `i` and `k` exchanged; `−m` at `i` and `i + 1`
/// is a 2×2 block with rows `i + 1` and `m` exchanged (1-based).
pub struct DenseLdlt<T: Scalar = f64> {
    solver: Solver,
    /// `None` without pivoting: cuSOLVER then takes a null `devIpiv`.
    ipiv: Option<CudaSlice<i32>>,
    ipiv64: Option<CudaSlice<i64>>,
    /// Whether `ipiv64` holds the last factorization's pivots.
    widened: bool,
    /// `Xsytrs`'s workspaces, sized for `solve_nrhs` right-hand sides.
    solve_work: CudaSlice<u8>,
    solve_host: Vec<u8>,
    solve_nrhs: usize,
    n: usize,
    precision: PhantomData<T>,
}

impl<T: Scalar> DenseLdlt<T> {
    /// Handle, pivots and workspace for order `n`, with Bunch–Kaufman pivoting.
    pub fn new(cuda: &Cuda, n: usize) -> Result<Self> {
        Self::with_pivoting(cuda, n, true)
    }

    /// The same without pivoting (`A = L·D·Lᵀ`, a null `devIpiv`), for
    /// matrices known to allow it.
    pub fn unpivoted(cuda: &Cuda, n: usize) -> Result<Self> {
        Self::with_pivoting(cuda, n, false)
    }

    fn with_pivoting(cuda: &Cuda, n: usize, pivoted: bool) -> Result<Self> {
        let d = legacy_dim("sytrf", n)?;
        let single = T::NAME == "f32";
        // SAFETY: a workspace query; A is not read.
        let query = move |h, _: sys::cusolverDnParams_t, device: &mut usize, _: &mut usize| unsafe {
            let mut lwork: c_int = 0;
            let s = if single {
                sys::cusolverDnSsytrf_bufferSize(h, d, std::ptr::null_mut(), d.max(1), &mut lwork)
            } else {
                sys::cusolverDnDsytrf_bufferSize(h, d, std::ptr::null_mut(), d.max(1), &mut lwork)
            };
            *device = usize::try_from(lwork).unwrap_or(0) * size_of::<T>();
            s
        };
        let solver = Solver::new(cuda, "sytrf", Box::new(query))?;
        let (ipiv, ipiv64) = if pivoted {
            let s = cuda.stream();
            (
                Some(s.alloc_zeros::<i32>(n.max(1)).map_err(driver("allocating ipiv"))?),
                Some(s.alloc_zeros::<i64>(n.max(1)).map_err(driver("allocating ipiv"))?),
            )
        } else {
            (None, None)
        };
        let solve_work = cuda.stream().alloc_zeros::<u8>(1).map_err(driver("Xsytrs workspace"))?;
        Ok(DenseLdlt {
            solver,
            ipiv,
            ipiv64,
            widened: false,
            solve_work,
            solve_host: vec![0; 1],
            solve_nrhs: 0,
            n,
            precision: PhantomData,
        })
    }

    /// Bytes of device memory besides `A`: the workspaces cuSOLVER asked
    /// for and the pivots.
    pub fn workspace_bytes(&self) -> usize {
        let pivots = self.ipiv.as_ref().map_or(0, |p| p.len() * 4) + self.ipiv64.as_ref().map_or(0, |p| p.len() * 8);
        self.solver.workspace_bytes() + self.solve_work.len() + pivots
    }

    /// Factors the dense `n × n` buffer `a` in place (lower triangle):
    /// `L` below the diagonal and `D` on and next to it, as LAPACK's `dsytrf`.
    pub fn factor(&mut self, cuda: &Cuda, a: &mut CudaBuffer<T>) -> Result<()> {
        let n = self.n;
        let d = legacy_dim("sytrf", n)?;
        let a = ViewMut::dense(a, n, n)?;
        let ipiv = match &mut self.ipiv {
            Some(p) => p.device_ptr_mut(cuda.stream()).0 as *mut c_int,
            None => std::ptr::null_mut(),
        };
        self.widened = false;
        let single = T::NAME == "f32";
        // SAFETY: a dense n × n block of a live buffer, n pivots or none,
        // the workspace as queried.
        self.solver.call(cuda, "sytrf", |c| unsafe {
            let lwork = c_int::try_from(c.work_bytes / size_of::<T>()).unwrap_or(c_int::MAX);
            if single {
                let a = raw_mut(&a) as *mut f32;
                sys::cusolverDnSsytrf(c.handle, LOWER, d, a, d.max(1), ipiv, c.work.cast(), lwork, c.info)
            } else {
                let a = raw_mut(&a) as *mut f64;
                sys::cusolverDnDsytrf(c.handle, LOWER, d, a, d.max(1), ipiv, c.work.cast(), lwork, c.info)
            }
        })
    }

    /// cuSOLVER's `dsytrs` (`cusolverDnXsytrs`): overwrites the dense
    /// `n × nrhs` buffer `b` with `A⁻¹·B`, `a` holding the factor from
    /// [`factor`](Self::factor). Sizes its workspace on the first call with
    /// as many right-hand sides.
    pub fn solve(&mut self, cuda: &Cuda, a: &CudaBuffer<T>, b: &mut CudaBuffer<T>, nrhs: usize) -> Result<()> {
        let (n, ty) = (self.n, data_type::<T>());
        let a = View::dense(a, n, n)?;
        let b = ViewMut::dense(b, n, nrhs)?;
        if nrhs == 0 || n == 0 {
            return Ok(());
        }
        if !self.widened {
            self.widen_pivots(cuda)?;
        }
        let s = cuda.stream();
        let ipiv = self.ipiv64.as_ref().map_or(std::ptr::null(), |p| p.device_ptr(s).0 as *const i64);
        let (pa, pb, ld) = (void(raw(&a)) as *const c_void, void(raw_mut(&b)), n as i64);
        if nrhs > self.solve_nrhs {
            let (mut device, mut host) = (0usize, 0usize);
            // SAFETY: a workspace query on live blocks of these shapes.
            let status = unsafe {
                sys::cusolverDnXsytrs_bufferSize(
                    self.solver.handle.cu(),
                    LOWER,
                    n as i64,
                    nrhs as i64,
                    ty,
                    pa,
                    ld,
                    ipiv,
                    ty,
                    pb,
                    ld,
                    &mut device,
                    &mut host,
                )
            };
            succeeded("Xsytrs_bufferSize", status)?;
            self.solve_work = s.alloc_zeros::<u8>(device.max(1)).map_err(driver("Xsytrs workspace"))?;
            self.solve_host = vec![0; host.max(1)];
            self.solve_nrhs = nrhs;
        }
        let (work, _) = self.solve_work.device_ptr_mut(s);
        let (work_bytes, host_bytes) = (self.solve_work.len(), self.solve_host.len());
        let host = self.solve_host.as_mut_ptr().cast::<c_void>();
        // SAFETY: dense blocks of live buffers (checked above), n pivots or
        // none, the workspaces as queried.
        self.solver.call(cuda, "Xsytrs", |c| unsafe {
            sys::cusolverDnXsytrs(
                c.handle,
                LOWER,
                n as i64,
                nrhs as i64,
                ty,
                pa,
                ld,
                ipiv,
                ty,
                pb,
                ld,
                void(work),
                work_bytes,
                host,
                host_bytes,
                c.info,
            )
        })
    }

    /// The last factorization's pivots as 64-bit integers for `Xsytrs`.
    fn widen_pivots(&mut self, cuda: &Cuda) -> Result<()> {
        if let (Some(p32), Some(p64)) = (&self.ipiv, &mut self.ipiv64) {
            let s = cuda.stream();
            let mut host = vec![0i32; p32.len()];
            s.memcpy_dtoh(p32, &mut host[..]).map_err(driver("reading ipiv"))?;
            s.synchronize().map_err(driver("reading ipiv"))?;
            let wide: Vec<i64> = host.into_iter().map(i64::from).collect();
            s.memcpy_htod(&wide[..], p64).map_err(driver("widening ipiv"))?;
            s.synchronize().map_err(driver("widening ipiv"))?;
        }
        self.widened = true;
        Ok(())
    }

    /// The pivots of the last factorization in LAPACK's convention (waits
    /// for it); empty without pivoting.
    pub fn pivots(&self, cuda: &Cuda) -> Result<Vec<i32>> {
        let Some(p) = &self.ipiv else { return Ok(vec![]) };
        let mut host = vec![0i32; p.len()];
        cuda.stream().memcpy_dtoh(p, &mut host[..]).map_err(driver("reading ipiv"))?;
        cuda.stream().synchronize().map_err(driver("reading ipiv"))?;
        host.truncate(self.n);
        Ok(host)
    }

    /// cuSOLVER's `devInfo` after the last call (waits for it): for the
    /// factorization, `i > 0` when `D(i, i)` is exactly zero.
    pub fn info(&self, cuda: &Cuda) -> Result<i32> {
        self.solver.info(cuda)
    }
}

/// The interchanges and `D` of a factorization in the form gpumat's LDLᵀ
/// keeps them ([`crate::factor::ldlt::factor_in_place`]): `ipiv` 1-based and
/// applied in order as `laswp` does (`P·A·Pᵀ = L·D·Lᵀ`), `D` as its
/// diagonal `d` and its subdiagonal `e` (nonzero only at the first row of a
/// 2×2 block).
#[derive(Clone, Debug, PartialEq)]
pub struct StandardLdlt {
    pub ipiv: Vec<i32>,
    pub d: Vec<f64>,
    pub e: Vec<f64>,
}

/// Rewrites the `n × n` factor `a` that `sytrf` left (lower, with the LAPACK
/// pivots `ipiv`; empty for none) in gpumat's form: `L` strictly below the
/// diagonal with 0 at `(j + 1, j)` of each 2×2 block; returns the
/// interchanges and `D`. With `product_form`, `L` is read as LAPACK's
/// `dsytrf` leaves it, `P₁·L₁·P₂·L₂·…` (each interchange applied only to the
/// columns from its own step on), and the earlier columns get each
/// interchange here, as LAPACK's `dsyconv` does; without, `L` is read as
/// having them already.
pub fn sytrf_to_standard<T: Scalar>(n: usize, a: &mut [T], ipiv: &[i32], product_form: bool) -> Result<StandardLdlt> {
    if a.len() != n * n || !(ipiv.is_empty() || ipiv.len() == n) {
        return Err(Error::dims("sytrf_to_standard", format!("{n}×{n} needs {} entries and {n} pivots", n * n)));
    }
    let bad = |i: usize| Error::InvalidArgument(format!("sytrf_to_standard: pivot {} at {i} of {n}", ipiv[i]));
    // (first row, order, row exchanged with the block's last row), 0-based.
    let mut blocks = Vec::with_capacity(n);
    let mut i = 0;
    while i < n {
        let p = ipiv.get(i).copied().unwrap_or(i as i32 + 1);
        let size = if p < 0 { 2 } else { 1 };
        let last = i + size - 1;
        let row = if p < 0 { ipiv.get(last).map(|q| -i64::from(*q)) } else { Some(i64::from(p)) };
        let row = row.filter(|&r| r > last as i64 && r <= n as i64).ok_or_else(|| bad(i))?;
        blocks.push((i, size, (row - 1) as usize));
        i += size;
    }
    if product_form {
        // Column c gets the interchanges of every block that starts after it, in order.
        a.par_chunks_mut(n.max(1)).enumerate().for_each(|(c, col)| {
            let first = blocks.partition_point(|&(s, _, _)| s <= c);
            for &(s, size, p) in &blocks[first..] {
                col.swap(s + size - 1, p);
            }
        });
    }
    let mut out = StandardLdlt { ipiv: vec![0; n], d: vec![0.0; n], e: vec![0.0; n] };
    for &(s, size, p) in &blocks {
        out.d[s] = a[s + s * n].to_f64();
        out.ipiv[s] = (p + 1) as i32;
        if size == 2 {
            out.d[s + 1] = a[s + 1 + (s + 1) * n].to_f64();
            out.e[s] = a[s + 1 + s * n].to_f64();
            a[s + 1 + s * n] = T::ZERO;
            out.ipiv[s] = (s + 1) as i32;
            out.ipiv[s + 1] = (p + 1) as i32;
        }
    }
    Ok(out)
}

// Scaled Gram matrices: the cuBLAS routes that `scaled_gram` is
// measured against.

/// `W := A·diag(d)` for the dense `m × n` buffer `A` into the full copy `W`
/// (cuBLAS `dgmm`), the first step of both vendor routes.
pub fn scale_columns<T: Scalar>(
    cuda: &Cuda,
    (m, n): (usize, usize),
    a: &CudaBuffer<T>,
    d: &CudaBuffer<T>,
    w: &mut CudaBuffer<T>,
) -> Result<()> {
    let dim = |x| blas::dim("dgmm", x);
    let (a, d) = (View::dense(a, m, n)?, View::dense(d, n, 1)?);
    let w = ViewMut::dense(w, m, n)?;
    // SAFETY: dense blocks of live buffers of these shapes (checked by `dense`).
    unsafe {
        super::scaled_gram::dgmm::<T>(
            *cuda.cublas().handle(),
            (dim(m)?, dim(n)?),
            (raw(&a), dim(m.max(1))?),
            (raw(&d), 1),
            (raw_mut(&w), dim(m.max(1))?),
        )
    }
}

/// The cuBLAS route to `A·diag(d)²·Aᵀ`: `W := A·diag(d)` into a full copy,
/// then `C := W·Wᵀ` on the lower triangle (`dsyrk`). `C` is `m × m`.
pub fn scaled_gram_syrk<T: Scalar>(
    cuda: &Cuda,
    (m, n): (usize, usize),
    a: &CudaBuffer<T>,
    d: &CudaBuffer<T>,
    w: &mut CudaBuffer<T>,
    c: &mut CudaBuffer<T>,
) -> Result<()> {
    scale_columns(cuda, (m, n), a, d, w)?;
    let dim = |x| blas::dim("syrk", x);
    let (w, c) = (View::dense(w, m, n)?, ViewMut::dense(c, m, m)?);
    // SAFETY: as `gemm`.
    unsafe {
        blas::syrk(
            *cuda.cublas().handle(),
            Uplo::Lower,
            Op::NoTrans,
            (dim(m)?, dim(n)?),
            T::ONE,
            (raw(&w), dim(m.max(1))?),
            T::ZERO,
            (raw_mut(&c), dim(m.max(1))?),
        )
    }
}

/// The full `gemm` route: `W := A·diag(d)`, then `C := W·Wᵀ` in both
/// triangles (`dgemm`).
pub fn scaled_gram_gemm<T: Scalar>(
    cuda: &Cuda,
    (m, n): (usize, usize),
    a: &CudaBuffer<T>,
    d: &CudaBuffer<T>,
    w: &mut CudaBuffer<T>,
    c: &mut CudaBuffer<T>,
) -> Result<()> {
    scale_columns(cuda, (m, n), a, d, w)?;
    let dim = |x| blas::dim("gemm", x);
    let (w, c) = (View::dense(w, m, n)?, ViewMut::dense(c, m, m)?);
    let ld = dim(m.max(1))?;
    // SAFETY: as `gemm`.
    unsafe {
        blas::gemm(
            *cuda.cublas().handle(),
            (Op::NoTrans, Op::Trans),
            (dim(m)?, dim(m)?, dim(n)?),
            T::ONE,
            (raw(&w), ld),
            (raw(&w), ld),
            T::ZERO,
            (raw_mut(&c), ld),
        )
    }
}

/// cuSPARSE's batched tridiagonal solvers without pivoting, the baselines
/// of `tridiagonal_solve`: `gtsv2StridedBatch` (each system's entries
/// together, gpumat's `SystemLayout::Columns`) and `gtsvInterleavedBatch`
/// with its algorithm 0, cyclic reduction (entry `i` of every system
/// together, `SystemLayout::Rows`), on the backend's stream, with the
/// workspace each asked for. `m` and `count` as 32-bit integers.
pub struct SparseTridiagonal<T: Scalar = f64> {
    handle: SparseHandle,
    strided: CudaSlice<u8>,
    interleaved: CudaSlice<u8>,
    m: i32,
    count: i32,
    _elem: PhantomData<T>,
}

/// A cuSPARSE handle, destroyed on drop.
struct SparseHandle(cudarc::cusparse::sys::cusparseHandle_t);

impl Drop for SparseHandle {
    fn drop(&mut self) {
        // SAFETY: created by cusparseCreate and used by no one else.
        unsafe { cudarc::cusparse::result::destroy(self.0) }.ok();
    }
}

// SAFETY: the handle is only used through `&mut` of its owner.
unsafe impl Send for SparseHandle {}
unsafe impl Sync for SparseHandle {}

/// A cuSPARSE call's status as a `Result`, naming the routine.
fn sparse_succeeded(routine: &str, status: cudarc::cusparse::sys::cusparseStatus_t) -> Result<()> {
    match status {
        cudarc::cusparse::sys::cusparseStatus_t::CUSPARSE_STATUS_SUCCESS => Ok(()),
        s => Err(Error::device_call(DeviceLibrary::Cusparse, routine, s)),
    }
}

/// The four arrays of a batch (`dl`, `d`, `du`, `x`), all written.
type Arrays<'a, T> = [ViewMut<'a, Cuda, T>; 4];

impl<T: Scalar> SparseTridiagonal<T> {
    /// A handle on the backend's stream and the workspaces of both routines
    /// for `count` systems of order `m` in the blocks `(dl, d, du, x)`.
    pub fn new(cuda: &Cuda, m: usize, count: usize, arrays: [View<'_, Cuda, T>; 4]) -> Result<Self> {
        use cudarc::cusparse::sys as sp;
        // SAFETY: only probes whether the library can be loaded.
        if !unsafe { sp::is_culib_present() } {
            return Err(Error::Device("cuSPARSE not found (libcusparse could not be loaded)".into()));
        }
        let dim = |x: usize| i32::try_from(x).map_err(|_| Error::dims("gtsv", format!("{x} past 32 bits")));
        let (m, count) = (dim(m)?, dim(count)?);
        let handle = SparseHandle(
            cudarc::cusparse::result::create()
                .map_err(|e| Error::device_call(DeviceLibrary::Cusparse, "create", e.0))?,
        );
        // SAFETY: the handle is live; the stream is the backend's, alive as long as it.
        let s = unsafe { sp::cusparseSetStream(handle.0, cuda.stream().cu_stream() as sp::cudaStream_t) };
        sparse_succeeded("cusparseSetStream", s)?;
        let [dl, d, du, x] = arrays.map(|v| raw(&v));
        let (mut strided, mut interleaved) = (0usize, 0usize);
        // SAFETY: size queries on live device blocks of m·count entries.
        let (s1, s2) = unsafe {
            if T::NAME == "f32" {
                let p = |a: u64| a as *mut f32;
                (
                    sp::cusparseSgtsv2StridedBatch_bufferSizeExt(
                        handle.0,
                        m,
                        p(dl),
                        p(d),
                        p(du),
                        p(x),
                        count,
                        m,
                        &mut strided,
                    ),
                    sp::cusparseSgtsvInterleavedBatch_bufferSizeExt(
                        handle.0,
                        0,
                        m,
                        p(dl),
                        p(d),
                        p(du),
                        p(x),
                        count,
                        &mut interleaved,
                    ),
                )
            } else {
                let p = |a: u64| a as *mut f64;
                (
                    sp::cusparseDgtsv2StridedBatch_bufferSizeExt(
                        handle.0,
                        m,
                        p(dl),
                        p(d),
                        p(du),
                        p(x),
                        count,
                        m,
                        &mut strided,
                    ),
                    sp::cusparseDgtsvInterleavedBatch_bufferSizeExt(
                        handle.0,
                        0,
                        m,
                        p(dl),
                        p(d),
                        p(du),
                        p(x),
                        count,
                        &mut interleaved,
                    ),
                )
            }
        };
        sparse_succeeded("gtsv2StridedBatch_bufferSizeExt", s1)?;
        sparse_succeeded("gtsvInterleavedBatch_bufferSizeExt", s2)?;
        let alloc = |bytes: usize| cuda.stream().alloc_zeros::<u8>(bytes.max(1)).map_err(driver("gtsv workspace"));
        Ok(SparseTridiagonal {
            handle,
            strided: alloc(strided)?,
            interleaved: alloc(interleaved)?,
            m,
            count,
            _elem: PhantomData,
        })
    }

    /// The arrays' addresses, each checked to hold `m·count` entries.
    fn addresses(&self, arrays: Arrays<'_, T>) -> Result<[u64; 4]> {
        let len = (self.m as usize) * (self.count as usize);
        for a in &arrays {
            if a.rows() * a.cols() != len || a.block().ld != a.rows().max(1) {
                return Err(Error::dims(
                    "gtsv",
                    format!("a dense block of {len} entries, is {}×{}", a.rows(), a.cols()),
                ));
            }
        }
        Ok(arrays.map(|a| raw_mut(&a)))
    }

    /// `gtsv2StridedBatch` for `SystemLayout::Columns` (system `s` at `s·m`
    /// in each array), `gtsvInterleavedBatch` algorithm 0 for `Rows` (entry
    /// `i` of system `s` at `i·count + s`; it overwrites `dl`, `d` and `du`
    /// too): `x` from `b`.
    pub fn solve(&mut self, cuda: &Cuda, layout: SystemLayout, arrays: Arrays<'_, T>) -> Result<()> {
        use cudarc::cusparse::sys as sp;
        let [dl, d, du, x] = self.addresses(arrays)?;
        let strided = layout == SystemLayout::Columns;
        let work = if strided { &mut self.strided } else { &mut self.interleaved };
        let (work, _) = work.device_ptr_mut(cuda.stream());
        let (h, m, count, work) = (self.handle.0, self.m, self.count, work as *mut c_void);
        // SAFETY: the arrays (checked above) and workspace of `new`, live
        // device memory.
        let s = unsafe {
            match (strided, T::NAME == "f32") {
                (true, true) => {
                    let p = |a: u64| a as *mut f32;
                    sp::cusparseSgtsv2StridedBatch(h, m, p(dl), p(d), p(du), p(x), count, m, work)
                }
                (true, false) => {
                    let p = |a: u64| a as *mut f64;
                    sp::cusparseDgtsv2StridedBatch(h, m, p(dl), p(d), p(du), p(x), count, m, work)
                }
                (false, true) => {
                    let p = |a: u64| a as *mut f32;
                    sp::cusparseSgtsvInterleavedBatch(h, 0, m, p(dl), p(d), p(du), p(x), count, work)
                }
                (false, false) => {
                    let p = |a: u64| a as *mut f64;
                    sp::cusparseDgtsvInterleavedBatch(h, 0, m, p(dl), p(d), p(du), p(x), count, work)
                }
            }
        };
        sparse_succeeded(if strided { "gtsv2StridedBatch" } else { "gtsvInterleavedBatch" }, s)
    }
}

/// The vendor's batched dense solvers on `count` dense `n × n` members of
/// one buffer (and `n`-vectors of another), the baselines of
/// `batch::lu` and `batch::cholesky`: cuBLAS `getrfBatched` +
/// `getrsBatched`, cuSOLVER `potrfBatched` + `potrsBatched` (lower, one
/// right-hand side, which is all it takes), with the arrays of member
/// addresses they want.
pub struct DenseBatch<T: Scalar = f64> {
    solver: cudarc::cusolver::DnHandle,
    a: CudaSlice<u64>,
    b: CudaSlice<u64>,
    ipiv: CudaSlice<i32>,
    info: CudaSlice<i32>,
    n: c_int,
    count: c_int,
    _elem: PhantomData<T>,
}

impl<T: Scalar> DenseBatch<T> {
    /// For the members of `a` (`n²` apart) and of `b` (`n` apart).
    pub fn new(cuda: &Cuda, n: usize, count: usize, a: &CudaBuffer<T>, b: &CudaBuffer<T>) -> Result<Self> {
        if a.len() < n * n * count || b.len() < n * count {
            return Err(Error::dims("DenseBatch", format!("{count} members of order {n} past the buffers")));
        }
        let solver = cudarc::cusolver::DnHandle::new(cuda.stream().clone())
            .map_err(|e| Error::device_call(DeviceLibrary::Cusolver, "creating a handle", e.0))?;
        let size = size_of::<T>() as u64;
        let members =
            |base: u64, step: usize| -> Vec<u64> { (0..count as u64).map(|s| base + s * step as u64 * size).collect() };
        let s = cuda.stream();
        let a = s.clone_htod(&members(a.ptr, n * n)).map_err(driver("uploading member addresses"))?;
        let b = s.clone_htod(&members(b.ptr, n)).map_err(driver("uploading member addresses"))?;
        let ipiv = s.alloc_zeros::<i32>((n * count).max(1)).map_err(driver("allocating pivots"))?;
        let info = s.alloc_zeros::<i32>(count.max(1)).map_err(driver("allocating infos"))?;
        let dim = |x: usize| legacy_dim("DenseBatch", x);
        Ok(DenseBatch { solver, a, b, ipiv, info, n: dim(n)?, count: dim(count)?, _elem: PhantomData })
    }

    /// `getrfBatched` then `getrsBatched`: each member factored in place
    /// and its vector overwritten by the solution.
    pub fn lu(&mut self, cuda: &Cuda) -> Result<()> {
        let st = cuda.stream();
        let (a, _) = self.a.device_ptr(st);
        let (b, _) = self.b.device_ptr(st);
        let (p, _) = self.ipiv.device_ptr_mut(st);
        let (info, _) = self.info.device_ptr_mut(st);
        let (h, n, count) = (*cuda.cublas().handle(), self.n, self.count);
        let (p, info) = (p as *mut c_int, info as *mut c_int);
        let mut host_info: c_int = 0;
        // SAFETY: arrays of member addresses inside live buffers (`new`),
        // pivots and infos of the sizes the routines write.
        unsafe {
            use cudarc::cublas::sys as cb;
            let t = cb::cublasOperation_t::CUBLAS_OP_N;
            let (f, s) = if T::NAME == "f64" {
                (
                    cb::cublasDgetrfBatched(h, n, a as _, n, p, info, count),
                    cb::cublasDgetrsBatched(h, t, n, 1, a as _, n, p, b as _, n, &mut host_info, count),
                )
            } else {
                (
                    cb::cublasSgetrfBatched(h, n, a as _, n, p, info, count),
                    cb::cublasSgetrsBatched(h, t, n, 1, a as _, n, p, b as _, n, &mut host_info, count),
                )
            };
            blas::status("getrfBatched", f)?;
            blas::status("getrsBatched", s)?;
        }
        if host_info != 0 {
            return Err(Error::InvalidArgument(format!("getrsBatched: argument {} is invalid", -host_info)));
        }
        Ok(())
    }

    /// `potrfBatched` then `potrsBatched`, lower.
    pub fn cholesky(&mut self, cuda: &Cuda) -> Result<()> {
        let st = cuda.stream();
        let (a, _) = self.a.device_ptr(st);
        let (b, _) = self.b.device_ptr(st);
        let (info, _) = self.info.device_ptr_mut(st);
        let (h, n, count, info) = (self.solver.cu(), self.n, self.count, info as *mut c_int);
        // SAFETY: as `lu`.
        unsafe {
            if T::NAME == "f64" {
                succeeded("potrfBatched", sys::cusolverDnDpotrfBatched(h, LOWER, n, a as _, n, info, count))?;
                succeeded(
                    "potrsBatched",
                    sys::cusolverDnDpotrsBatched(h, LOWER, n, 1, a as _, n, b as _, n, info, count),
                )
            } else {
                succeeded("potrfBatched", sys::cusolverDnSpotrfBatched(h, LOWER, n, a as _, n, info, count))?;
                succeeded(
                    "potrsBatched",
                    sys::cusolverDnSpotrsBatched(h, LOWER, n, 1, a as _, n, b as _, n, info, count),
                )
            }
        }
    }

    /// Each member's `info` after the last factorization (waits).
    pub fn infos(&self, cuda: &Cuda) -> Result<Vec<i32>> {
        let mut host = vec![0i32; self.info.len()];
        cuda.stream().memcpy_dtoh(&self.info, &mut host).map_err(driver("reading infos"))?;
        cuda.stream().synchronize().map_err(driver("reading infos"))?;
        host.truncate(self.count as usize);
        Ok(host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, Block, BufferMut, Cpu, Triangle};
    use crate::factor::ldlt::{self, BlockDiagonal, LdltParams, LdltPivoting};
    use rand::{Rng, SeedableRng, rngs::StdRng};

    /// `G + Gᵀ`, column-major, with its diagonal set to 0 if `zero_diagonal`
    /// (which forces 2×2 pivots).
    fn symmetric(n: usize, state: u64, zero_diagonal: bool) -> Vec<f64> {
        let mut r = StdRng::seed_from_u64(state);
        let g: Vec<f64> = (0..n * n).map(|_| r.random_range(-1.0..1.0)).collect();
        let mut a: Vec<f64> = (0..n * n).map(|k| g[k] + g[(k % n) * n + k / n]).collect();
        if zero_diagonal {
            (0..n).for_each(|j| a[j + j * n] = 0.0);
        }
        a
    }

    /// LAPACK's unblocked `dsytf2` on the lower triangle (Bunch and Kaufman
    /// 1977): `L` in product form, LAPACK's pivots.
    fn sytf2(n: usize, a: &mut [f64]) -> Vec<i32> {
        let alpha = (1.0 + 17f64.sqrt()) / 8.0;
        let at = |i: usize, j: usize| i + j * n;
        let mut ipiv = vec![0i32; n];
        let mut k = 0;
        while k < n {
            let absakk = a[at(k, k)].abs();
            let (mut imax, mut colmax) = (k, 0.0);
            for i in k + 1..n {
                if a[at(i, k)].abs() > colmax {
                    (imax, colmax) = (i, a[at(i, k)].abs());
                }
            }
            let (mut kp, mut kstep) = (k, 1);
            if absakk < alpha * colmax {
                let mut rowmax = 0.0f64;
                for j in k..imax {
                    rowmax = rowmax.max(a[at(imax, j)].abs());
                }
                for i in imax + 1..n {
                    rowmax = rowmax.max(a[at(i, imax)].abs());
                }
                if absakk >= alpha * colmax * (colmax / rowmax) {
                    kp = k;
                } else if a[at(imax, imax)].abs() >= alpha * rowmax {
                    kp = imax;
                } else {
                    (kp, kstep) = (imax, 2);
                }
            }
            let kk = k + kstep - 1;
            if kp != kk {
                for i in kp + 1..n {
                    a.swap(at(i, kk), at(i, kp));
                }
                for j in kk + 1..kp {
                    a.swap(at(j, kk), at(kp, j));
                }
                a.swap(at(kk, kk), at(kp, kp));
                if kstep == 2 {
                    a.swap(at(k + 1, k), at(kp, k));
                }
            }
            if kstep == 1 {
                let r = 1.0 / a[at(k, k)];
                for j in k + 1..n {
                    let x = a[at(j, k)];
                    for i in j..n {
                        a[at(i, j)] -= r * a[at(i, k)] * x;
                    }
                }
                for i in k + 1..n {
                    a[at(i, k)] *= r;
                }
                ipiv[k] = (kp + 1) as i32;
            } else {
                let d21 = a[at(k + 1, k)];
                let (d11, d22) = (a[at(k + 1, k + 1)] / d21, a[at(k, k)] / d21);
                let t = 1.0 / (d11 * d22 - 1.0);
                let d21 = t / d21;
                for j in k + 2..n {
                    let wk = d21 * (d11 * a[at(j, k)] - a[at(j, k + 1)]);
                    let wkp1 = d21 * (d22 * a[at(j, k + 1)] - a[at(j, k)]);
                    for i in j..n {
                        a[at(i, j)] -= a[at(i, k)] * wk + a[at(i, k + 1)] * wkp1;
                    }
                    a[at(j, k)] = wk;
                    a[at(j, k + 1)] = wkp1;
                }
                ipiv[k] = -((kp + 1) as i32);
                ipiv[k + 1] = ipiv[k];
            }
            k += kstep;
        }
        ipiv
    }

    /// `max |A − Pᵀ·L·D·Lᵀ·P| / max |A|` on the CPU.
    fn reconstruction_error(n: usize, a: &[f64], l: &[f64], f: &StandardLdlt) -> f64 {
        let be = Cpu::new();
        let dense = BlockDiagonal { d: f.d.clone(), e: f.e.clone() }.dense();
        let (l, d, p) = (be.upload(l).unwrap(), be.upload(&dense).unwrap(), be.upload(&f.ipiv).unwrap());
        let mut out = be.alloc::<f64>(n * n).unwrap();
        let (lv, dv, pv) =
            (View::dense(&l, n, n).unwrap(), View::dense(&d, n, n).unwrap(), View::dense(&p, n, 1).unwrap());
        ldlt::reconstruct(&be, lv, dv, pv, ViewMut::dense(&mut out, n, n).unwrap()).unwrap();
        let mut host = vec![0.0; n * n];
        be.download(&out, &mut host).unwrap();
        let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        host.iter().zip(a).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale
    }

    #[test]
    fn lapack_product_form_becomes_standard() {
        let n = 41;
        for zero_diagonal in [false, true] {
            let a = symmetric(n, 3, zero_diagonal);
            let mut f = a.clone();
            let ipiv = sytf2(n, &mut f);
            assert!(ipiv.iter().enumerate().any(|(i, &p)| p > 0 && p as usize != i + 1), "no 1×1 interchange");
            if zero_diagonal {
                assert!(ipiv.iter().any(|&p| p < 0), "no 2×2 block");
            }
            let mut standard = f.clone();
            let s = sytrf_to_standard(n, &mut standard, &ipiv, true).unwrap();
            let err = reconstruction_error(n, &a, &standard, &s);
            assert!(err < 1e-13, "zero diagonal {zero_diagonal}: {err:.2e}");
            // Read as already standard, the product form is another matrix.
            let s = sytrf_to_standard(n, &mut f, &ipiv, false).unwrap();
            assert!(reconstruction_error(n, &a, &f, &s) > 1e-3);
        }
    }

    #[test]
    fn standard_form_reads_back_gpumat_factor() {
        let (n, be) = (57, Cpu::new());
        let a = symmetric(n, 4, true);
        let mut buf = be.upload(&a).unwrap();
        let (mut ipiv, mut d, mut e) =
            (be.alloc::<i32>(n).unwrap(), be.alloc::<f64>(n).unwrap(), be.alloc::<f64>(n).unwrap());
        let tri = Triangle::full(Uplo::Lower, Block::dense(n, n)).unwrap();
        let params = LdltParams { block_size: 8, leaf_size: 8, update_tile: 16 };
        ldlt::factor_in_place(
            &be,
            &tri,
            &BufferMut::new(&mut buf),
            ViewMut::dense(&mut ipiv, n, 1).unwrap(),
            ViewMut::dense(&mut d, n, 1).unwrap(),
            ViewMut::dense(&mut e, n, 1).unwrap(),
            LdltPivoting::BunchKaufman,
            params,
        )
        .unwrap();
        let mut want = StandardLdlt { ipiv: vec![0; n], d: vec![0.0; n], e: vec![0.0; n] };
        let mut l = vec![0.0; n * n];
        be.download(&ipiv, &mut want.ipiv).unwrap();
        be.download(&d, &mut want.d).unwrap();
        be.download(&e, &mut want.e).unwrap();
        be.download(&buf, &mut l).unwrap();
        // gpumat's factor in LAPACK's notation: D's subdiagonal below the
        // diagonal, a 2×2 block's interchange at both of its rows, negated.
        let mut lapack = l.clone();
        let mut pivots = want.ipiv.clone();
        for j in 0..n {
            if want.e[j] != 0.0 {
                lapack[j + 1 + j * n] = want.e[j];
                pivots[j] = -want.ipiv[j + 1];
                pivots[j + 1] = -want.ipiv[j + 1];
            }
        }
        assert!(pivots.iter().any(|&p| p < 0), "no 2×2 block");
        let got = sytrf_to_standard(n, &mut lapack, &pivots, false).unwrap();
        assert_eq!(got, want);
        assert_eq!(lapack, l);
        assert!(reconstruction_error(n, &a, &l, &want) < 1e-13);
    }

    #[test]
    fn bad_pivots_are_refused() {
        let mut a = vec![1.0f64; 4];
        assert!(sytrf_to_standard(2, &mut a, &[3, 2], true).is_err());
        assert!(sytrf_to_standard(2, &mut a, &[1, -1], true).is_err());
        assert!(sytrf_to_standard(2, &mut a, &[-2, -2], true).is_ok());
        assert!(sytrf_to_standard(2, &mut a, &[1], true).is_err());
        assert!(sytrf_to_standard(2, &mut a, &[], true).is_ok());
    }
}

/// The factorization precision of cuSOLVER's mixed-precision `gesv`
/// (`cusolverDn<DD|DS|DH|DB|DX>gesv`): LU in that precision, refined in
/// FP64 (classical refinement, then GMRES, as cuSOLVER chooses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrsPrecision {
    /// FP64 throughout (`DDgesv`).
    F64,
    /// FP32 (`DSgesv`).
    F32,
    /// FP16 (`DHgesv`).
    F16,
    /// bfloat16 (`DBgesv`).
    Bf16,
    /// TF32 (`DXgesv`).
    Tf32,
}

impl IrsPrecision {
    /// cuSOLVER's routine name.
    pub fn routine(self) -> &'static str {
        match self {
            IrsPrecision::F64 => "DDgesv",
            IrsPrecision::F32 => "DSgesv",
            IrsPrecision::F16 => "DHgesv",
            IrsPrecision::Bf16 => "DBgesv",
            IrsPrecision::Tf32 => "DXgesv",
        }
    }
}

/// cuSOLVER's mixed-precision `gesv` for one `n × n` system and `nrhs`
/// right-hand sides: the vendor's counterpart of `Matrix::solve_mixed`.
pub struct IrsGesv {
    handle: cudarc::cusolver::DnHandle,
    precision: IrsPrecision,
    n: usize,
    nrhs: usize,
    ipiv: CudaSlice<i32>,
    work: CudaSlice<u8>,
    info: CudaSlice<i32>,
    iterations: i32,
}

/// Dispatches to `cusolverDn<XY>gesv` or its `_bufferSize`.
macro_rules! irs_call {
    ($p:expr, gesv, ($($arg:expr),* $(,)?)) => {
        match $p {
            IrsPrecision::F64 => sys::cusolverDnDDgesv($($arg),*),
            IrsPrecision::F32 => sys::cusolverDnDSgesv($($arg),*),
            IrsPrecision::F16 => sys::cusolverDnDHgesv($($arg),*),
            IrsPrecision::Bf16 => sys::cusolverDnDBgesv($($arg),*),
            IrsPrecision::Tf32 => sys::cusolverDnDXgesv($($arg),*),
        }
    };
    ($p:expr, size, ($($arg:expr),* $(,)?)) => {
        match $p {
            IrsPrecision::F64 => sys::cusolverDnDDgesv_bufferSize($($arg),*),
            IrsPrecision::F32 => sys::cusolverDnDSgesv_bufferSize($($arg),*),
            IrsPrecision::F16 => sys::cusolverDnDHgesv_bufferSize($($arg),*),
            IrsPrecision::Bf16 => sys::cusolverDnDBgesv_bufferSize($($arg),*),
            IrsPrecision::Tf32 => sys::cusolverDnDXgesv_bufferSize($($arg),*),
        }
    };
}

impl IrsGesv {
    /// Handle, pivots and workspace for order `n` and `nrhs` columns.
    pub fn new(cuda: &Cuda, precision: IrsPrecision, n: usize, nrhs: usize) -> Result<Self> {
        // SAFETY: only probes whether the library can be loaded.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::Device("cuSOLVER not found (libcusolver could not be loaded)".into()));
        }
        let handle = cudarc::cusolver::DnHandle::new(cuda.stream().clone())
            .map_err(|e| Error::device_call(DeviceLibrary::Cusolver, "creating a handle", e.0))?;
        let d = |x: usize| i32::try_from(x.max(1)).map_err(|_| Error::dims(precision.routine(), "n beyond 32 bits"));
        let (ni, ri) = (d(n)?, d(nrhs)?);
        let mut bytes = 0usize;
        // SAFETY: a workspace query; no operand is read.
        let s = unsafe {
            irs_call!(
                precision,
                size,
                (
                    handle.cu(),
                    ni,
                    ri,
                    std::ptr::null_mut(),
                    ni,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    ni,
                    std::ptr::null_mut(),
                    ni,
                    std::ptr::null_mut(),
                    &mut bytes
                )
            )
        };
        succeeded(&format!("{}_bufferSize", precision.routine()), s)?;
        let stream = cuda.stream();
        let work = stream.alloc_zeros::<u8>(bytes.max(1)).map_err(driver("gesv workspace"))?;
        let ipiv = stream.alloc_zeros::<i32>(n.max(1)).map_err(driver("allocating ipiv"))?;
        let info = stream.alloc_zeros::<i32>(1).map_err(driver("allocating devInfo"))?;
        Ok(IrsGesv { handle, precision, n, nrhs, ipiv, work, info, iterations: 0 })
    }

    /// Bytes of device workspace cuSOLVER asked for.
    pub fn workspace_bytes(&self) -> usize {
        self.work.len()
    }

    /// `X` with `A·X = B`; `a` is overwritten (by the factor), `b` is kept.
    pub fn solve(
        &mut self,
        cuda: &Cuda,
        a: &mut CudaBuffer<f64>,
        b: &mut CudaBuffer<f64>,
        x: &mut CudaBuffer<f64>,
    ) -> Result<()> {
        let (n, nrhs) = (self.n, self.nrhs);
        let (a, b, x) = (ViewMut::dense(a, n, n)?, ViewMut::dense(b, n, nrhs)?, ViewMut::dense(x, n, nrhs)?);
        let s = cuda.stream();
        let bytes = self.work.len();
        let (work, _) = self.work.device_ptr_mut(s);
        let (ipiv, _) = self.ipiv.device_ptr_mut(s);
        let (info, _) = self.info.device_ptr_mut(s);
        let ld = n.max(1) as i32;
        let mut iterations = 0i32;
        // SAFETY: dense blocks of live buffers (checked above); workspace as queried.
        let status = unsafe {
            irs_call!(
                self.precision,
                gesv,
                (
                    self.handle.cu(),
                    n as i32,
                    nrhs as i32,
                    raw_mut(&a) as *mut f64,
                    ld,
                    ipiv as *mut i32,
                    raw_mut(&b) as *mut f64,
                    ld,
                    raw_mut(&x) as *mut f64,
                    ld,
                    work as *mut c_void,
                    bytes,
                    &mut iterations,
                    info as *mut i32
                )
            )
        };
        succeeded(self.precision.routine(), status)?;
        self.iterations = iterations;
        Ok(())
    }

    /// The refinement iterations of the last solve: negative when cuSOLVER
    /// fell back to the FP64 factorization (its `iter` output; waits).
    pub fn iterations(&self, cuda: &Cuda) -> Result<i32> {
        cuda.stream().synchronize().map_err(driver("gesv"))?;
        Ok(self.iterations)
    }

    /// `devInfo` after the last call (waits for it).
    pub fn info(&self, cuda: &Cuda) -> Result<i32> {
        let mut host = [0i32];
        cuda.stream().memcpy_dtoh(&self.info, &mut host).map_err(driver("reading devInfo"))?;
        cuda.stream().synchronize().map_err(driver("reading devInfo"))?;
        Ok(host[0])
    }
}
