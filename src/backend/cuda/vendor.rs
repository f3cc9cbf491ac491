//! The vendor's routines called directly, as baselines for tests and
//! benchmarks only: gpumat's algorithms never call these.

use cudarc::driver::{CudaSlice, DevicePtrMut, PinnedHostSlice};

use super::blas;
use super::{Cuda, CudaBuffer, raw, raw_mut};
use crate::backend::{DeviceBuffer, Diag, Op, Side, View, ViewMut};
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

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

/// cuBLAS `trsm` from the left with a unit lower triangle: `B := L⁻¹·B`,
/// the solve the LU's block columns make (gpumat's own goes through
/// `kernels/trsm.cu` at these orders).
pub fn trsm_lower_unit<T: Scalar>(cuda: &Cuda, l: View<'_, Cuda, T>, b: ViewMut<'_, Cuda, T>) -> Result<()> {
    crate::backend::check::triangular("trsm", Side::Left, Uplo::Lower, &l, &b)?;
    let d = |x| blas::dim("trsm", x);
    // SAFETY: blocks of live buffers, shapes checked above.
    unsafe {
        blas::triangular(
            *cuda.cublas().handle(),
            blas::Triangular::Solve,
            (Side::Left, Uplo::Lower, Op::NoTrans, Diag::Unit),
            (d(b.rows())?, d(b.cols())?),
            T::ONE,
            (raw(&l), d(l.block().ld)?),
            (raw_mut(&b), d(b.block().ld)?),
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
    cuda.stream()
        .memcpy_dtod(&src.mem.slice(0..bytes), &mut dst.mem.slice_mut(0..bytes))
        .map_err(|e| Error::Device(format!("copy: {e}")))
}

/// Host memory that is page-locked, the fastest a transfer can come from.
pub fn pinned(cuda: &Cuda, bytes: usize) -> Result<PinnedHostSlice<u8>> {
    // SAFETY: plain bytes, written before they are read.
    unsafe { cuda.context().alloc_pinned_with_flags::<u8>(bytes, 0) }.map_err(|e| Error::Device(format!("pinned: {e}")))
}

/// A raw device allocation of `bytes`.
pub fn device_bytes(cuda: &Cuda, bytes: usize) -> Result<CudaSlice<u8>> {
    cuda.stream().alloc_zeros::<u8>(bytes).map_err(|e| Error::Device(format!("alloc: {e}")))
}

/// Host-to-device copy from pinned memory: the ceiling for uploads.
pub fn pinned_upload(cuda: &Cuda, src: &PinnedHostSlice<u8>, dst: &mut CudaSlice<u8>) -> Result<()> {
    cuda.stream().memcpy_htod(src, dst).map_err(|e| Error::Device(format!("upload: {e}")))
}

/// Device-to-host copy into pinned memory: the ceiling for downloads.
pub fn pinned_download(cuda: &Cuda, src: &CudaSlice<u8>, dst: &mut PinnedHostSlice<u8>) -> Result<()> {
    cuda.stream().memcpy_dtoh(src, dst).map_err(|e| Error::Device(format!("download: {e}")))
}

/// cuSOLVER's `dpotrf` (or `spotrf` for `f32`; lower), through its 64-bit
/// API (`cusolverDnXpotrf`, so that orders past 46341 work), with its
/// workspaces, on the backend's stream: the baseline for gpumat's Cholesky.
pub struct DenseCholesky<T: Scalar = f64> {
    solver: Solver,
    n: usize,
    precision: std::marker::PhantomData<T>,
}

/// cuSOLVER's name for the element type.
fn data_type<T: Scalar>() -> cudarc::cusolver::sys::cudaDataType {
    use cudarc::cusolver::sys::cudaDataType::{CUDA_R_32F, CUDA_R_64F};
    if T::NAME == "f32" { CUDA_R_32F } else { CUDA_R_64F }
}

/// A cuSOLVER call's status as a `Result`, naming the routine.
fn succeeded(routine: &str, status: cudarc::cusolver::sys::cusolverStatus_t) -> Result<()> {
    match status {
        cudarc::cusolver::sys::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS => Ok(()),
        s => Err(Error::Device(format!("cuSOLVER {routine}: {s:?}"))),
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

type Query<'a> = dyn FnOnce(
        cudarc::cusolver::sys::cusolverDnHandle_t,
        cudarc::cusolver::sys::cusolverDnParams_t,
        &mut usize,
        &mut usize,
    ) -> cudarc::cusolver::sys::cusolverStatus_t
    + 'a;

impl Solver {
    /// A handle and parameters, then the workspaces `query` (the routine's
    /// `_bufferSize`, named `routine`) asks for, in (device, host) bytes.
    fn new(cuda: &Cuda, routine: &str, query: Box<Query<'_>>) -> Result<Self> {
        use cudarc::cusolver::sys;
        let fail = |what: &str| Error::Device(format!("cuSOLVER {what}"));
        // SAFETY: only probes whether the library can be loaded.
        if !unsafe { sys::is_culib_present() } {
            return Err(fail("not found (libcusolver could not be loaded)"));
        }
        let handle =
            cudarc::cusolver::DnHandle::new(cuda.stream().clone()).map_err(|e| fail(&format!("handle: {e:?}")))?;
        let mut raw_params = std::ptr::null_mut();
        // SAFETY: writes a new parameter object.
        let s = unsafe { sys::cusolverDnCreateParams(&mut raw_params) };
        succeeded("params", s)?;
        let params = CusolverParams(raw_params);
        let (mut device_bytes, mut host_bytes) = (0usize, 0usize);
        let s = query(handle.cu(), params.0, &mut device_bytes, &mut host_bytes);
        succeeded(&format!("{routine}_bufferSize"), s)?;
        let work =
            cuda.stream().alloc_zeros::<u8>(device_bytes.max(1)).map_err(|e| fail(&format!("workspace: {e}")))?;
        let info = cuda.stream().alloc_zeros::<i32>(1).map_err(|e| fail(&format!("info: {e}")))?;
        Ok(Solver { handle, params, work, host_work: vec![0; host_bytes.max(1)], info })
    }

    /// `devInfo` after the last call (waits for it).
    fn info(&self, cuda: &Cuda) -> Result<i32> {
        let mut host = [0i32];
        let fail = |e| Error::Device(format!("devInfo: {e}"));
        cuda.stream().memcpy_dtoh(&self.info, &mut host).map_err(fail)?;
        cuda.stream().synchronize().map_err(fail)?;
        Ok(host[0])
    }
}

/// `cusolverDnParams_t`, destroyed on drop.
struct CusolverParams(cudarc::cusolver::sys::cusolverDnParams_t);

impl Drop for CusolverParams {
    fn drop(&mut self) {
        // SAFETY: created by cusolverDnCreateParams and used by no one else.
        unsafe { cudarc::cusolver::sys::cusolverDnDestroyParams(self.0) };
    }
}

// SAFETY: the parameter object is only read by calls made through `&mut` of its owner.
unsafe impl Send for CusolverParams {}
unsafe impl Sync for CusolverParams {}

impl<T: Scalar> DenseCholesky<T> {
    /// Handle and workspace for order `n`.
    pub fn new(cuda: &Cuda, n: usize) -> Result<Self> {
        use cudarc::cusolver::sys;
        let (d, ld, ty) = (n as i64, n.max(1) as i64, data_type::<T>());
        // SAFETY: a workspace query; A is not read.
        let query = move |h, p, device: &mut usize, host: &mut usize| unsafe {
            let lower = sys::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER;
            sys::cusolverDnXpotrf_bufferSize(h, p, lower, d, ty, std::ptr::null(), ld, ty, device, host)
        };
        let solver = Solver::new(cuda, "Xpotrf", Box::new(query))?;
        Ok(DenseCholesky { solver, n, precision: std::marker::PhantomData })
    }

    /// Bytes of device workspace cuSOLVER asked for.
    pub fn workspace_bytes(&self) -> usize {
        self.solver.work.len()
    }

    /// Factors the dense `n × n` buffer `a` in place (lower triangle).
    pub fn factor(&mut self, cuda: &Cuda, a: &mut CudaBuffer<T>) -> Result<()> {
        use cudarc::cusolver::sys;
        let (n, ty) = (self.n, data_type::<T>());
        let a = ViewMut::dense(a, n, n)?;
        let s = cuda.stream();
        let (work_bytes, host_bytes) = (self.solver.work.len(), self.solver.host_work.len());
        let (work, _) = self.solver.work.device_ptr_mut(s);
        let (info, _) = self.solver.info.device_ptr_mut(s);
        // SAFETY: a dense n × n block of a live buffer; workspaces as queried.
        let status = unsafe {
            sys::cusolverDnXpotrf(
                self.solver.handle.cu(),
                self.solver.params.0,
                sys::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER,
                n as i64,
                ty,
                raw_mut(&a) as *mut std::ffi::c_void,
                n.max(1) as i64,
                ty,
                work as *mut std::ffi::c_void,
                work_bytes,
                self.solver.host_work.as_mut_ptr().cast(),
                host_bytes,
                info as *mut i32,
            )
        };
        succeeded("Xpotrf", status)
    }

    /// cuSOLVER's `devInfo` after the last factorization (waits for it).
    pub fn info(&self, cuda: &Cuda) -> Result<i32> {
        self.solver.info(cuda)
    }
}

// Householder QR.

/// cuSOLVER's `dgeqrf` through its 64-bit API (`cusolverDnXgeqrf`), with its
/// workspaces, on the backend's stream: the baseline for gpumat's QR.
pub struct DenseQr {
    solver: Solver,
    tau: CudaSlice<f64>,
    m: usize,
    n: usize,
}

impl DenseQr {
    /// Handle and workspace for `m × n` matrices.
    pub fn new(cuda: &Cuda, m: usize, n: usize) -> Result<Self> {
        use cudarc::cusolver::sys::{self as sys, cudaDataType::CUDA_R_64F};
        let (rows, cols, ld) = (m as i64, n as i64, m.max(1) as i64);
        let null = std::ptr::null();
        // SAFETY: a workspace query; A and tau are not read.
        let query = move |h, p, device: &mut usize, host: &mut usize| unsafe {
            let f64 = CUDA_R_64F;
            sys::cusolverDnXgeqrf_bufferSize(h, p, rows, cols, f64, null, ld, f64, null, f64, device, host)
        };
        let solver = Solver::new(cuda, "Xgeqrf", Box::new(query))?;
        let tau = cuda.stream().alloc_zeros::<f64>(m.min(n).max(1)).map_err(|e| Error::Device(format!("tau: {e}")))?;
        Ok(DenseQr { solver, tau, m, n })
    }

    /// Bytes of device workspace cuSOLVER asked for, with `tau`.
    pub fn workspace_bytes(&self) -> usize {
        self.solver.work.len() + 8 * self.tau.len()
    }

    /// Factors the dense `m × n` buffer `a` in place.
    pub fn factor(&mut self, cuda: &Cuda, a: &mut CudaBuffer<f64>) -> Result<()> {
        use cudarc::cusolver::sys::{self as sys, cudaDataType::CUDA_R_64F};
        let (m, n) = (self.m, self.n);
        let a = ViewMut::dense(a, m, n)?;
        let s = cuda.stream();
        let (work_bytes, host_bytes) = (self.solver.work.len(), self.solver.host_work.len());
        let (work, _) = self.solver.work.device_ptr_mut(s);
        let (tau, _) = self.tau.device_ptr_mut(s);
        let (info, _) = self.solver.info.device_ptr_mut(s);
        // SAFETY: a dense m × n block of a live buffer; workspaces as queried.
        let status = unsafe {
            sys::cusolverDnXgeqrf(
                self.solver.handle.cu(),
                self.solver.params.0,
                m as i64,
                n as i64,
                CUDA_R_64F,
                raw_mut(&a) as *mut std::ffi::c_void,
                m.max(1) as i64,
                CUDA_R_64F,
                tau as *mut std::ffi::c_void,
                CUDA_R_64F,
                work as *mut std::ffi::c_void,
                work_bytes,
                self.solver.host_work.as_mut_ptr().cast(),
                host_bytes,
                info as *mut i32,
            )
        };
        succeeded("Xgeqrf", status)
    }

    /// cuSOLVER's `devInfo` after the last factorization (waits for it).
    pub fn info(&self, cuda: &Cuda) -> Result<i32> {
        self.solver.info(cuda)
    }
}

/// cuSOLVER's `dgetrf` (partial pivoting), through its 64-bit API
/// (`cusolverDnXgetrf`), with its workspaces, on the backend's stream: the
/// baseline for gpumat's LU.
pub struct DenseLu {
    solver: Solver,
    ipiv: CudaSlice<i64>,
    n: usize,
}

impl DenseLu {
    /// Handle, pivots and workspace for order `n`.
    pub fn new(cuda: &Cuda, n: usize) -> Result<Self> {
        use cudarc::cusolver::sys::{self as sys, cudaDataType::CUDA_R_64F};
        let (d, ld) = (n as i64, n.max(1) as i64);
        // SAFETY: a workspace query; A is not read.
        let query = move |h, p, device: &mut usize, host: &mut usize| unsafe {
            sys::cusolverDnXgetrf_bufferSize(h, p, d, d, CUDA_R_64F, std::ptr::null(), ld, CUDA_R_64F, device, host)
        };
        let solver = Solver::new(cuda, "Xgetrf", Box::new(query))?;
        let ipiv = cuda.stream().alloc_zeros::<i64>(n.max(1)).map_err(|e| Error::Device(format!("ipiv: {e}")))?;
        Ok(DenseLu { solver, ipiv, n })
    }

    /// Bytes of device workspace cuSOLVER asked for.
    pub fn workspace_bytes(&self) -> usize {
        self.solver.work.len()
    }

    /// Factors the dense `n × n` buffer `a` in place: `P·A = L·U`.
    pub fn factor(&mut self, cuda: &Cuda, a: &mut CudaBuffer<f64>) -> Result<()> {
        use cudarc::cusolver::sys::{self as sys, cudaDataType::CUDA_R_64F};
        let n = self.n;
        let a = ViewMut::dense(a, n, n)?;
        let s = cuda.stream();
        let (work_bytes, host_bytes) = (self.solver.work.len(), self.solver.host_work.len());
        let (work, _) = self.solver.work.device_ptr_mut(s);
        let (ipiv, _) = self.ipiv.device_ptr_mut(s);
        let (info, _) = self.solver.info.device_ptr_mut(s);
        // SAFETY: a dense n × n block of a live buffer; n pivots; workspaces as queried.
        let status = unsafe {
            sys::cusolverDnXgetrf(
                self.solver.handle.cu(),
                self.solver.params.0,
                n as i64,
                n as i64,
                CUDA_R_64F,
                raw_mut(&a) as *mut std::ffi::c_void,
                n.max(1) as i64,
                ipiv as *mut i64,
                CUDA_R_64F,
                work as *mut std::ffi::c_void,
                work_bytes,
                self.solver.host_work.as_mut_ptr().cast(),
                host_bytes,
                info as *mut i32,
            )
        };
        succeeded("Xgetrf", status)
    }

    /// The pivots of the last factorization, 1-based (waits for it).
    pub fn pivots(&self, cuda: &Cuda) -> Result<Vec<i64>> {
        let mut host = vec![0i64; self.n.max(1)];
        cuda.stream().memcpy_dtoh(&self.ipiv, &mut host).map_err(|e| Error::Device(format!("ipiv: {e}")))?;
        cuda.stream().synchronize().map_err(|e| Error::Device(format!("ipiv: {e}")))?;
        host.truncate(self.n);
        Ok(host)
    }

    /// cuSOLVER's `devInfo` after the last factorization (waits for it).
    pub fn info(&self, cuda: &Cuda) -> Result<i32> {
        self.solver.info(cuda)
    }
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

// Weighted least squares: cuSOLVER dpotrs, the solve of the all-FP64 pipeline.

impl DenseCholesky {
    /// cuSOLVER's `dpotrs` (`cusolverDnXpotrs`): overwrites the dense
    /// `n × nrhs` buffer `b` with `A⁻¹·B`, `a` holding the factor from
    /// [`factor`](Self::factor).
    pub fn solve(&mut self, cuda: &Cuda, a: &CudaBuffer<f64>, b: &mut CudaBuffer<f64>, nrhs: usize) -> Result<()> {
        use cudarc::cusolver::sys::{self as sys, cudaDataType::CUDA_R_64F};
        let n = self.n;
        let a = View::dense(a, n, n)?;
        let b = ViewMut::dense(b, n, nrhs)?;
        let (info, _) = self.solver.info.device_ptr_mut(cuda.stream());
        // SAFETY: dense blocks of live buffers (checked above).
        let status = unsafe {
            sys::cusolverDnXpotrs(
                self.solver.handle.cu(),
                self.solver.params.0,
                sys::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER,
                n as i64,
                nrhs as i64,
                CUDA_R_64F,
                raw(&a) as *const std::ffi::c_void,
                n.max(1) as i64,
                CUDA_R_64F,
                raw_mut(&b) as *mut std::ffi::c_void,
                n.max(1) as i64,
                info as *mut i32,
            )
        };
        succeeded("Xpotrs", status)
    }
}
