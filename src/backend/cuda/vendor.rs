//! The vendor's routines called directly, as baselines for tests and
//! benchmarks only: gpumat's algorithms never call these.

use std::ffi::c_void;
use std::marker::PhantomData;

use cudarc::cusolver::sys;
use cudarc::driver::{CudaSlice, DevicePtrMut, PinnedHostSlice};

use super::blas::{self, operand, operand_mut};
use super::{Cuda, CudaBuffer, driver, raw, raw_mut};
use crate::backend::{DeviceBuffer, Diag, Op, Side, View, ViewMut};
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
            operand(&l, "trsm")?,
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
        Ok(DenseQr { solver, tau, m, n, precision: PhantomData })
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
