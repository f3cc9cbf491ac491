//! `gemm_in`: single-precision products on the tensor cores.
//!
//! TF32 is cuBLAS's own (`CUBLAS_COMPUTE_32F_FAST_TF32` on FP32 operands).
//! For FP16 and BF16 the operands are first rounded into dense 16-bit
//! copies (`cast_f32_f16`, `cast_f32_bf16` of `kernels/elementwise.cu`),
//! which the tensor cores take at their full rate, with FP32 accumulation
//! (`CUBLAS_COMPUTE_32F`). Split FP16 (`split_f32_f16x2`) makes two copies
//! of each operand and three products.

use cudarc::cublas::sys::{cublasComputeType_t as Ct, cudaDataType as Dt};

use super::launch::{Arg, elem, n, ptr, ptr_mut};
use super::{Cuda, CudaBuffer, blas, ozaki};
use crate::backend::{Compute, Op, View, ViewMut, check};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// A dense 16-bit copy of an operand: its memory, and its address and
/// leading dimension for cuBLAS.
type Copy16 = (CudaBuffer<f32>, (u64, i32));

impl Cuda {
    /// [`Backend::gemm_in`](crate::backend::Backend::gemm_in).
    pub(super) fn gemm_tensor<T: Scalar>(
        &self,
        compute: Compute,
        alpha: T,
        (a, op_a): (View<'_, Cuda, T>, Op),
        (b, op_b): (View<'_, Cuda, T>, Op),
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        use crate::backend::Backend;
        check::gemm(&a, op_a, &b, op_b, &c)?;
        if let Some(moduli) = ozaki::int8::<T>(compute) {
            return match self.ozaki_plan(moduli, (&a, op_a), (&b, op_b))? {
                Some(oz) => self.gemm_ozaki(&oz, alpha, (&a, op_a), (&b, op_b), beta, c, None),
                None => self.gemm(alpha, a, op_a, b, op_b, beta, c),
            };
        }
        let (m, n_, k) = (c.rows(), c.cols(), op_a.apply(a.rows(), a.cols()).1);
        if T::NAME != "f32" || matches!(compute, Compute::Native | Compute::Int8 { .. }) || m == 0 || n_ == 0 || k == 0
        {
            return self.gemm(alpha, a, op_a, b, op_b, beta, c);
        }
        let d = |x| blas::dim("gemm", x);
        let dims = (d(m)?, d(n_)?, d(k)?);
        let (alpha, beta) = (alpha.to_f64() as f32, beta.to_f64() as f32);
        let h = *self.blas.handle();
        let out = blas::operand_mut(&c, "gemm")?;
        let ops = (op_a, op_b);
        // SAFETY (every call below): `check` bounds A, B and C in their
        // buffers; the 16-bit copies hold A's and B's blocks densely.
        match compute {
            Compute::Tf32 => unsafe {
                let (ta, tb) = (blas::operand(&a, "gemm")?, blas::operand(&b, "gemm")?);
                blas::gemm_ex(h, ops, dims, alpha, ta, tb, Dt::CUDA_R_32F, beta, out, Ct::CUBLAS_COMPUTE_32F_FAST_TF32)
            },
            Compute::Fp16 | Compute::Bf16 => {
                let (kernel, input) = if compute == Compute::Fp16 {
                    ("cast_f32_f16", Dt::CUDA_R_16F)
                } else {
                    ("cast_f32_bf16", Dt::CUDA_R_16BF)
                };
                let (ca, cb) = (self.copy16(kernel, &a)?, self.copy16(kernel, &b)?);
                unsafe { blas::gemm_ex(h, ops, dims, alpha, ca.1, cb.1, input, beta, out, Ct::CUBLAS_COMPUTE_32F) }
            }
            Compute::Fp16x3 => {
                let ((ha, la), (hb, lb)) = (self.split16(&a)?, self.split16(&b)?);
                let (half, f32c) = (Dt::CUDA_R_16F, Ct::CUBLAS_COMPUTE_32F);
                // The small terms first, then the large one: C's last
                // rounding is of the largest partial sum.
                let small = alpha / 2048.0;
                unsafe {
                    blas::gemm_ex(h, ops, dims, small, ha.1, lb.1, half, beta, out, f32c)?;
                    blas::gemm_ex(h, ops, dims, small, la.1, hb.1, half, 1.0, out, f32c)?;
                    blas::gemm_ex(h, ops, dims, alpha, ha.1, hb.1, half, 1.0, out, f32c)
                }
            }
            Compute::Native | Compute::Int8 { .. } => unreachable!("native products take gemm"),
        }
    }

    /// [`Backend::syrk_in`](crate::backend::Backend::syrk_in): the whole
    /// product `op(A)·op(A)ᵀ` by [`gemm_tensor`](Self::gemm_tensor) into a
    /// scratch square, then its `uplo` triangle added to `C`'s.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn syrk_tensor<T: Scalar>(
        &self,
        compute: Compute,
        uplo: Uplo,
        op: Op,
        alpha: T,
        a: View<'_, Cuda, T>,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        use crate::backend::Backend;
        if let Some(moduli) = ozaki::int8::<T>(compute) {
            check::syrk(uplo, op, &a, &c)?;
            let other = if op == Op::NoTrans { Op::Trans } else { Op::NoTrans };
            return match self.ozaki_plan(moduli, (&a, op), (&a, other))? {
                Some(oz) => self.gemm_ozaki(&oz, alpha, (&a, op), (&a, other), beta, c, Some(uplo)),
                None => self.syrk(uplo, op, alpha, a, beta, c),
            };
        }
        if T::NAME != "f32" || matches!(compute, Compute::Native | Compute::Int8 { .. }) {
            return self.syrk(uplo, op, alpha, a, beta, c);
        }
        check::syrk(uplo, op, &a, &c)?;
        let order = c.rows();
        if order == 0 {
            return Ok(());
        }
        let mut p = self.buffer::<T>(order * order, false)?;
        let other = if op == Op::NoTrans { Op::Trans } else { Op::NoTrans };
        self.gemm_tensor(compute, T::ONE, (a, op), (a, other), T::ZERO, ViewMut::dense(&mut p, order, order)?)?;
        let args = [
            ptr_mut(&c),
            n(c.block().ld),
            Arg::Ptr(p.ptr),
            n(order),
            n(order),
            Arg::I32((uplo == Uplo::Upper) as i32),
            elem(alpha),
            elem(beta),
        ];
        self.elementwise("add_triangle_f32", order, order, &args)
    }

    /// A dense copy of the block `v` rounded by `kernel` to 16 bits.
    fn copy16<T: Scalar>(&self, kernel: &str, v: &View<'_, Cuda, T>) -> Result<Copy16> {
        let (rows, cols) = (v.rows(), v.cols());
        let w = self.buffer::<f32>((rows * cols).div_ceil(2), false)?;
        let args = [ptr(v), n(v.block().ld), Arg::Ptr(w.ptr), n(rows), n(rows), n(cols)];
        self.elementwise(kernel, rows, cols, &args)?;
        let at = (w.ptr, blas::dim("gemm", rows.max(1))?);
        Ok((w, at))
    }

    /// The halves `h` and `l` of the block `v = h + 2⁻¹¹·l`, dense.
    fn split16<T: Scalar>(&self, v: &View<'_, Cuda, T>) -> Result<(Copy16, Copy16)> {
        let (rows, cols) = (v.rows(), v.cols());
        let words = (rows * cols).div_ceil(2);
        let (hi, lo) = (self.buffer::<f32>(words, false)?, self.buffer::<f32>(words, false)?);
        let args = [ptr(v), n(v.block().ld), Arg::Ptr(hi.ptr), Arg::Ptr(lo.ptr), n(rows), n(cols)];
        self.elementwise("split_f32_f16x2", rows, cols, &args)?;
        let ld = blas::dim("gemm", rows.max(1))?;
        let (h, l) = (hi.ptr, lo.ptr);
        Ok(((hi, (h, ld)), (lo, (l, ld))))
    }
}
