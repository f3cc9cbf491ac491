//! cuBLAS level 3 on strided sub-blocks, for `f32` and `f64`.
//!
//! The backend is generic over `T: Scalar`; cuBLAS has one entry point per
//! precision. `T::NAME` picks it, and the pointers are cast to that type,
//! which is `T` itself.
//!
//! # Safety
//!
//! Every routine here takes device addresses with leading dimensions: the
//! caller guarantees they are blocks of the stated shapes inside live
//! buffers of `T` on the handle's device, and that the block written does
//! not overlap a block read (`backend::check` does both).

use cudarc::cublas::sys::{
    self, cublasDiagType_t as CDiag, cublasFillMode_t as CFill, cublasHandle_t, cublasOperation_t as COp,
    cublasSideMode_t as CSide, cublasStatus_t,
};

use super::{Cuda, raw, raw_mut};
pub(crate) use crate::backend::Triangular;
use crate::backend::{Diag, Op, Side, View, ViewMut};
use crate::layout::Uplo;
use crate::{DeviceLibrary, Elem, Error, Result, Scalar};

pub fn op(op: Op) -> COp {
    match op {
        Op::NoTrans => COp::CUBLAS_OP_N,
        Op::Trans => COp::CUBLAS_OP_T,
    }
}

pub fn fill(uplo: Uplo) -> CFill {
    match uplo {
        Uplo::Lower => CFill::CUBLAS_FILL_MODE_LOWER,
        Uplo::Upper => CFill::CUBLAS_FILL_MODE_UPPER,
    }
}

pub fn side(side: Side) -> CSide {
    match side {
        Side::Left => CSide::CUBLAS_SIDE_LEFT,
        Side::Right => CSide::CUBLAS_SIDE_RIGHT,
    }
}

pub fn diag(diag: Diag) -> CDiag {
    match diag {
        Diag::NonUnit => CDiag::CUBLAS_DIAG_NON_UNIT,
        Diag::Unit => CDiag::CUBLAS_DIAG_UNIT,
    }
}

/// A dimension as cuBLAS's `int`.
pub fn dim(op: &str, x: usize) -> Result<i32> {
    i32::try_from(x).map_err(|_| Error::TooLarge {
        op: op.into(),
        dim: x,
        limit: i32::MAX as usize,
        library: DeviceLibrary::Cublas,
    })
}

pub fn status(op: &str, s: cublasStatus_t) -> Result<()> {
    match s {
        cublasStatus_t::CUBLAS_STATUS_SUCCESS => Ok(()),
        other => Err(Error::device_call(DeviceLibrary::Cublas, op, other)),
    }
}

/// Calls the `f64` or `f32` variant of a cuBLAS routine with `T`'s pointers
/// cast to that type.
macro_rules! blas_call {
    ($t:ty, $d:ident, $s:ident, ($($arg:expr),* $(,)?)) => {
        // SAFETY: the callers pass device addresses of blocks checked to lie
        // in their buffers, of element type `$t`, which is the routine's type.
        if <$t as $crate::Elem>::NAME == "f64" {
            unsafe { sys::$d($($arg),*) }
        } else {
            unsafe { sys::$s($($arg),*) }
        }
    };
}

/// A block's device address and leading dimension, as cuBLAS takes them.
pub(crate) fn operand<T: Elem>(v: &View<'_, Cuda, T>, op: &str) -> Result<(u64, i32)> {
    Ok((raw(v), dim(op, v.block().ld)?))
}

/// [`operand`] of an output block.
pub(crate) fn operand_mut<T: Elem>(v: &ViewMut<'_, Cuda, T>, op: &str) -> Result<(u64, i32)> {
    Ok((raw_mut(v), dim(op, v.block().ld)?))
}

/// `C := α·op(A)·op(B) + β·C`. Pointers are device addresses of the blocks.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm<T: Scalar>(
    h: cublasHandle_t,
    (ta, tb): (Op, Op),
    (m, n, k): (i32, i32, i32),
    alpha: T,
    (a, lda): (u64, i32),
    (b, ldb): (u64, i32),
    beta: T,
    (c, ldc): (u64, i32),
) -> Result<()> {
    let (al, be) = (&alpha as *const T, &beta as *const T);
    let s = blas_call!(
        T,
        cublasDgemm_v2,
        cublasSgemm_v2,
        (h, op(ta), op(tb), m, n, k, al as _, a as _, lda, b as _, ldb, be as _, c as _, ldc)
    );
    status("gemm", s)
}

/// `C := α·op(A)·op(B) + β·C` in `f32`, `A` and `B` of type `input` (FP32,
/// or FP16/BF16 copies), the products as `compute` says.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_ex(
    h: cublasHandle_t,
    (ta, tb): (Op, Op),
    (m, n, k): (i32, i32, i32),
    alpha: f32,
    (a, lda): (u64, i32),
    (b, ldb): (u64, i32),
    input: sys::cudaDataType,
    beta: f32,
    (c, ldc): (u64, i32),
    compute: sys::cublasComputeType_t,
) -> Result<()> {
    let (al, be) = (&alpha as *const f32, &beta as *const f32);
    // SAFETY: as `gemm`; `input` is the type of the blocks at `a` and `b`.
    let s = unsafe {
        sys::cublasGemmEx(
            h,
            op(ta),
            op(tb),
            m,
            n,
            k,
            al as _,
            a as _,
            input,
            lda,
            b as _,
            input,
            ldb,
            be as _,
            c as _,
            sys::cudaDataType::CUDA_R_32F,
            ldc,
            compute,
            sys::cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
        )
    };
    status("gemm (tensor cores)", s)
}

/// `C := op(A)·op(B)`, or `C += op(A)·op(B)` when `accumulate`, of INT8
/// blocks into INT32, exact while no sum leaves INT32 (cuBLAS's integer
/// tensor-core products: "TN" with K-major operands, addresses 16-byte
/// aligned and leading dimensions multiples of 16 bytes, is the layout they
/// take at full rate).
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_i8(
    h: cublasHandle_t,
    (ta, tb): (Op, Op),
    (m, n, k): (i32, i32, i32),
    (a, lda): (u64, i32),
    (b, ldb): (u64, i32),
    (c, ldc): (u64, i32),
    accumulate: bool,
) -> Result<()> {
    let (one, beta) = (1i32, accumulate as i32);
    // SAFETY: as `gemm`, with INT8 blocks at `a` and `b` and INT32 at `c`.
    let s = unsafe {
        sys::cublasGemmEx(
            h,
            op(ta),
            op(tb),
            m,
            n,
            k,
            &one as *const i32 as _,
            a as _,
            sys::cudaDataType::CUDA_R_8I,
            lda,
            b as _,
            sys::cudaDataType::CUDA_R_8I,
            ldb,
            &beta as *const i32 as _,
            c as _,
            sys::cudaDataType::CUDA_R_32I,
            ldc,
            sys::cublasComputeType_t::CUBLAS_COMPUTE_32I,
            sys::cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
        )
    };
    status("gemm (INT8)", s)
}

/// [`gemm`] on `count` triples of blocks, each operand's `stride` entries
/// after the one before.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_strided_batched<T: Scalar>(
    h: cublasHandle_t,
    (ta, tb): (Op, Op),
    (m, n, k): (i32, i32, i32),
    alpha: T,
    (a, lda, sa): (u64, i32, i64),
    (b, ldb, sb): (u64, i32, i64),
    beta: T,
    (c, ldc, sc): (u64, i32, i64),
    count: i32,
) -> Result<()> {
    let (al, be) = (&alpha as *const T, &beta as *const T);
    let s = blas_call!(
        T,
        cublasDgemmStridedBatched,
        cublasSgemmStridedBatched,
        (h, op(ta), op(tb), m, n, k, al as _, a as _, lda, sa, b as _, ldb, sb, be as _, c as _, ldc, sc, count)
    );
    status("gemmStridedBatched", s)
}

#[allow(clippy::too_many_arguments)]
pub unsafe fn syrk<T: Scalar>(
    h: cublasHandle_t,
    uplo: Uplo,
    trans: Op,
    (n, k): (i32, i32),
    alpha: T,
    (a, lda): (u64, i32),
    beta: T,
    (c, ldc): (u64, i32),
) -> Result<()> {
    let (al, be) = (&alpha as *const T, &beta as *const T);
    let s = blas_call!(
        T,
        cublasDsyrk_v2,
        cublasSsyrk_v2,
        (h, fill(uplo), op(trans), n, k, al as _, a as _, lda, be as _, c as _, ldc)
    );
    status("syrk", s)
}

#[allow(clippy::too_many_arguments)]
pub unsafe fn syrkx<T: Scalar>(
    h: cublasHandle_t,
    uplo: Uplo,
    trans: Op,
    (n, k): (i32, i32),
    alpha: T,
    (a, lda): (u64, i32),
    (b, ldb): (u64, i32),
    beta: T,
    (c, ldc): (u64, i32),
) -> Result<()> {
    let (al, be) = (&alpha as *const T, &beta as *const T);
    let s = blas_call!(
        T,
        cublasDsyrkx,
        cublasSsyrkx,
        (h, fill(uplo), op(trans), n, k, al as _, a as _, lda, b as _, ldb, be as _, c as _, ldc)
    );
    status("syrkx", s)
}

#[allow(clippy::too_many_arguments)]
pub unsafe fn triangular<T: Scalar>(
    h: cublasHandle_t,
    which: Triangular,
    (sd, uplo, trans, dg): (Side, Uplo, Op, Diag),
    (m, n): (i32, i32),
    alpha: T,
    (a, lda): (u64, i32),
    (b, ldb): (u64, i32),
) -> Result<()> {
    let al = &alpha as *const T;
    let (sd, uplo, trans, dg) = (side(sd), fill(uplo), op(trans), diag(dg));
    let s = match which {
        Triangular::Solve => {
            blas_call!(
                T,
                cublasDtrsm_v2,
                cublasStrsm_v2,
                (h, sd, uplo, trans, dg, m, n, al as _, a as _, lda, b as _, ldb)
            )
        }
        Triangular::Multiply => blas_call!(
            T,
            cublasDtrmm_v2,
            cublasStrmm_v2,
            (h, sd, uplo, trans, dg, m, n, al as _, a as _, lda, b as _, ldb, b as _, ldb)
        ),
    };
    status(which.name(), s)
}

/// `x := op(A)⁻¹·x` (`Solve`) or `op(A)·x` (`Multiply`) for one vector `x`
/// (stride `incx`): cuBLAS `trsv` or `trmv`, which for one column take a
/// fraction of `trsm`'s and `trmm`'s time (`trmv` 10 µs against `trmm`'s 20
/// at order 128 on an H200).
pub unsafe fn triangular_vector<T: Scalar>(
    h: cublasHandle_t,
    which: Triangular,
    (uplo, trans, dg): (Uplo, Op, Diag),
    n: i32,
    (a, lda): (u64, i32),
    (x, incx): (u64, i32),
) -> Result<()> {
    let (uplo, trans, dg) = (fill(uplo), op(trans), diag(dg));
    let s = match which {
        Triangular::Solve => {
            blas_call!(T, cublasDtrsv_v2, cublasStrsv_v2, (h, uplo, trans, dg, n, a as _, lda, x as _, incx))
        }
        Triangular::Multiply => {
            blas_call!(T, cublasDtrmv_v2, cublasStrmv_v2, (h, uplo, trans, dg, n, a as _, lda, x as _, incx))
        }
    };
    status(if which == Triangular::Solve { "trsv" } else { "trmv" }, s)
}

#[allow(clippy::too_many_arguments)]
pub unsafe fn geam<T: Scalar>(
    h: cublasHandle_t,
    (ta, tb): (Op, Op),
    (m, n): (i32, i32),
    alpha: T,
    (a, lda): (u64, i32),
    beta: T,
    (b, ldb): (u64, i32),
    (c, ldc): (u64, i32),
) -> Result<()> {
    let (al, be) = (&alpha as *const T, &beta as *const T);
    let s = blas_call!(
        T,
        cublasDgeam,
        cublasSgeam,
        (h, op(ta), op(tb), m, n, al as _, a as _, lda, be as _, b as _, ldb, c as _, ldc)
    );
    status("geam", s)
}
