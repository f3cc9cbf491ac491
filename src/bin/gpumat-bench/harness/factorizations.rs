//! The factorizations that more than one suite times, each starting with a
//! device copy of its input into the matrix factored in place, so that
//! every run, ours or the vendor's, does the same work on the same matrix.

use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::{Backend, Block, BufferMut, View, ViewMut};
use gpumat::factor::cholesky::{self, CholeskyParams};
use gpumat::layout::Uplo;
use gpumat::{Result, Scalar};

/// Copies `a` into `l` and factors its lower triangle in full storage.
pub fn cholesky_full<T: Scalar>(
    cuda: &Cuda,
    n: usize,
    a: &CudaBuffer<T>,
    l: &mut CudaBuffer<T>,
    info: &mut CudaBuffer<i32>,
    params: CholeskyParams,
) -> Result<()> {
    cuda.copy(View::dense(a, n, n)?, ViewMut::dense(l, n, n)?)?;
    let mut status = ViewMut::dense(info, 1, 1)?;
    cholesky::factor_in_place(cuda, Uplo::Lower, &BufferMut::new(l), Block::dense(n, n), &mut status, 0, params)
}

/// Copies `a` into `l` and factors it with cuSOLVER (`dpotrf`/`spotrf`).
pub fn cholesky_vendor<T: Scalar>(
    cuda: &Cuda,
    n: usize,
    a: &CudaBuffer<T>,
    l: &mut CudaBuffer<T>,
    vendor: &mut vendor::DenseCholesky<T>,
) -> Result<()> {
    cuda.copy(View::dense(a, n, n)?, ViewMut::dense(l, n, n)?)?;
    vendor.factor(cuda, l)
}

/// The status word a factorization wrote on the device (0: success).
pub fn read_info(cuda: &Cuda, info: &CudaBuffer<i32>) -> Result<i32> {
    let mut host = [0i32];
    cuda.download(info, &mut host)?;
    Ok(host[0])
}
