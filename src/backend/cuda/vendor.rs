//! The vendor's routines called directly, as baselines for tests and
//! benchmarks only: gpumat's algorithms never call these.

use cudarc::driver::{CudaSlice, DevicePtrMut, PinnedHostSlice};

use super::blas;
use super::{Cuda, CudaBuffer, raw, raw_mut};
use crate::backend::{DeviceBuffer, Op, View, ViewMut};
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

/// cuSOLVER's `dpotrf` (lower) with its workspace, on the backend's stream:
/// the baseline for gpumat's Cholesky.
pub struct DenseCholesky {
    handle: cudarc::cusolver::DnHandle,
    work: CudaSlice<f64>,
    info: CudaSlice<i32>,
    n: usize,
}

impl DenseCholesky {
    /// Handle and workspace for order `n`.
    pub fn new(cuda: &Cuda, n: usize) -> Result<Self> {
        let fail = |what: &str| Error::Device(format!("cuSOLVER {what}"));
        // SAFETY: only probes whether the library can be loaded.
        if !unsafe { cudarc::cusolver::sys::is_culib_present() } {
            return Err(fail("not found (libcusolver could not be loaded)"));
        }
        let handle =
            cudarc::cusolver::DnHandle::new(cuda.stream().clone()).map_err(|e| fail(&format!("handle: {e:?}")))?;
        let d = blas::dim("dpotrf", n)?;
        let mut lwork = 0i32;
        // SAFETY: a workspace query; A is not read.
        let s = unsafe {
            cudarc::cusolver::sys::cusolverDnDpotrf_bufferSize(
                handle.cu(),
                cudarc::cusolver::sys::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER,
                d,
                std::ptr::null_mut(),
                d.max(1),
                &mut lwork,
            )
        };
        if s != cudarc::cusolver::sys::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS {
            return Err(fail(&format!("dpotrf_bufferSize: {s:?}")));
        }
        let alloc =
            |len: usize| cuda.stream().alloc_zeros::<f64>(len.max(1)).map_err(|e| fail(&format!("workspace: {e}")));
        let work = alloc(lwork as usize)?;
        let info = cuda.stream().alloc_zeros::<i32>(1).map_err(|e| fail(&format!("info: {e}")))?;
        Ok(DenseCholesky { handle, work, info, n })
    }

    /// Bytes of workspace cuSOLVER asked for.
    pub fn workspace_bytes(&self) -> usize {
        self.work.len() * 8
    }

    /// Factors the dense `n × n` buffer `a` in place (lower triangle).
    pub fn factor(&mut self, cuda: &Cuda, a: &mut CudaBuffer<f64>) -> Result<()> {
        let n = self.n;
        let a = ViewMut::dense(a, n, n)?;
        let d = blas::dim("dpotrf", n)?;
        let s = cuda.stream();
        let (work, _) = self.work.device_ptr_mut(s);
        let (info, _) = self.info.device_ptr_mut(s);
        // SAFETY: a dense n × n block of a live buffer; workspace as queried.
        let status = unsafe {
            cudarc::cusolver::sys::cusolverDnDpotrf(
                self.handle.cu(),
                cudarc::cusolver::sys::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER,
                d,
                raw_mut(&a) as *mut f64,
                d.max(1),
                work as *mut f64,
                self.work.len() as i32,
                info as *mut i32,
            )
        };
        if status != cudarc::cusolver::sys::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS {
            return Err(Error::Device(format!("cuSOLVER dpotrf: {status:?}")));
        }
        Ok(())
    }

    /// cuSOLVER's `devInfo` after the last factorization (waits for it).
    pub fn info(&self, cuda: &Cuda) -> Result<i32> {
        let mut host = [0i32];
        cuda.stream().memcpy_dtoh(&self.info, &mut host).map_err(|e| Error::Device(format!("devInfo: {e}")))?;
        Ok(host[0])
    }
}
