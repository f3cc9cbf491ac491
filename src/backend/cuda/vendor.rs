//! The vendor's routines called directly, as baselines for tests and
//! benchmarks only: gpumat's algorithms never call these.

use cudarc::driver::{CudaSlice, PinnedHostSlice};

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
