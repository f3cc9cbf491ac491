//! `A·diag(d)²·Aᵀ` and `A·diag(d)²·Bᵀ` on the GPU without a scaled copy of
//! `A`.
//!
//! `A` (`n × k`) is taken `kc` columns at a time: cuBLAS `dgmm` writes the
//! chunk scaled by `d` into a workspace `W` of `n × kc` (a few percent of
//! `A`), and the chunk's contribution `W·Wᵀ` is accumulated into the
//! triangle of `C` with `β = 1` after the first chunk. The triangle is
//! covered by row panels of `nb` rows: each is one wide `gemm` left of the
//! diagonal block plus one `syrk` for that block, so nearly all the work
//! runs in large `gemm`s (faster than `syrk` on tensor-core GPUs) while no
//! entry above the diagonal blocks is computed.
//!
//! Tuning, for benchmarks: `GPUMAT_SCALED_GRAM_CHUNK` (columns per chunk)
//! and `GPUMAT_SCALED_GRAM_TILE` (rows per panel) override the defaults.

use cudarc::cublas::sys::{self, cublasSideMode_t};

use super::{Cuda, CudaBuffer, blas, raw, raw_mut};
use crate::backend::{Op, View, ViewMut, check};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Columns per chunk for `k` columns of `rows` rows: `k/32` (workspace ≈ 3 %
/// of `A`), at least 256 so that the `gemm`s have a useful depth.
pub fn chunk_cols(k: usize) -> usize {
    let default = (k / 32).next_multiple_of(64).max(256);
    env_usize("GPUMAT_SCALED_GRAM_CHUNK").unwrap_or(default).clamp(1, k.max(1))
}

/// Rows per panel of the triangle: an eighth of the order, a multiple of
/// 256 between 256 and 2048.
pub fn panel_rows(n: usize) -> usize {
    let default = (n / 8).next_multiple_of(256).clamp(256, 2048);
    env_usize("GPUMAT_SCALED_GRAM_TILE").unwrap_or(default).max(1)
}

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.parse().ok().filter(|&x| x > 0)
}

/// `W := X·diag(x)` for the `rows × cols` block at `x_ptr` (cuBLAS `dgmm`,
/// out of place into the dense `w`).
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn dgmm<T: Scalar>(
    h: sys::cublasHandle_t,
    (rows, cols): (i32, i32),
    (x, ldx): (u64, i32),
    (d, incd): (u64, i32),
    (w, ldw): (u64, i32),
) -> Result<()> {
    let side = cublasSideMode_t::CUBLAS_SIDE_RIGHT;
    // SAFETY: the caller passes device blocks of these shapes of element type `T`.
    let s = unsafe {
        if T::NAME == "f64" {
            sys::cublasDdgmm(h, side, rows, cols, x as _, ldx, d as _, incd, w as _, ldw)
        } else {
            sys::cublasSdgmm(h, side, rows, cols, x as _, ldx, d as _, incd, w as _, ldw)
        }
    };
    blas::status("dgmm", s)
}

/// A chunk of columns of an operand and of `d`, in device addresses.
struct Operand {
    ptr: u64,
    ld: usize,
    rows: usize,
}

impl Cuda {
    /// `W[:, 0..cols] := X[:, j0..j0+cols]·diag(d[j0..j0+cols])`.
    fn scale_chunk<T: Scalar>(
        &self,
        x: &Operand,
        d: &View<'_, Cuda, T>,
        (j0, cols): (usize, usize),
        w: &CudaBuffer<T>,
    ) -> Result<()> {
        let dim = |v| blas::dim("scaled_gram", v);
        let db = d.block();
        let incd = if db.cols == 1 { 1 } else { db.ld };
        let d_ptr = super::addr(d.buffer(), db.vector_index(j0));
        let x_ptr = x.ptr + (j0 * x.ld * size_of::<T>()) as u64;
        // SAFETY: blocks inside live buffers (checked by `check` for the
        // operands; `w` holds at least rows × cols entries).
        unsafe {
            dgmm::<T>(
                *self.blas.handle(),
                (dim(x.rows)?, dim(cols)?),
                (x_ptr, dim(x.ld)?),
                (d_ptr, dim(incd)?),
                (w.ptr, dim(x.rows.max(1))?),
            )
        }
    }

    pub(super) fn scaled_syrk_impl<T: Scalar>(
        &self,
        uplo: Uplo,
        alpha: T,
        a: View<'_, Cuda, T>,
        d: View<'_, Cuda, T>,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        check::scaled_syrk(uplo, &a, &d, &c)?;
        let (n, k) = (a.rows(), a.cols());
        if n == 0 {
            return Ok(());
        }
        if k == 0 {
            // C := β·C on the triangle.
            return crate::backend::Backend::syrk(self, uplo, Op::NoTrans, alpha, a, beta, c);
        }
        let kc = chunk_cols(k);
        let nb = panel_rows(n);
        let w = self.buffer::<T>(n * kc, false)?;
        let op = Operand { ptr: raw(&a), ld: a.block().ld, rows: n };
        let (cp, ldc) = (raw_mut(&c), c.block().ld);
        let dim = |v| blas::dim("scaled_syrk", v);
        let size = size_of::<T>() as u64;
        let at = |base: u64, ld: usize, i: usize, j: usize| base + ((i + j * ld) as u64) * size;
        let h = *self.blas.handle();
        let mut beta = beta;
        for j0 in (0..k).step_by(kc) {
            let cols = kc.min(k - j0);
            self.scale_chunk(&op, &d, (j0, cols), &w)?;
            let kk = dim(cols)?;
            for p0 in (0..n).step_by(nb) {
                let pb = nb.min(n - p0);
                // SAFETY: sub-blocks of W (n × cols, ld n) and of C (checked).
                unsafe {
                    if p0 > 0 {
                        // The panel's blocks off the diagonal, in one gemm.
                        let (rows, cols_c, wa, wb, cc) = match uplo {
                            Uplo::Lower => (pb, p0, at(w.ptr, n, p0, 0), w.ptr, at(cp, ldc, p0, 0)),
                            Uplo::Upper => (p0, pb, w.ptr, at(w.ptr, n, p0, 0), at(cp, ldc, 0, p0)),
                        };
                        blas::gemm(
                            h,
                            (Op::NoTrans, Op::Trans),
                            (dim(rows)?, dim(cols_c)?, kk),
                            alpha,
                            (wa, dim(n)?),
                            (wb, dim(n)?),
                            beta,
                            (cc, dim(ldc)?),
                        )?;
                    }
                    blas::syrk(
                        h,
                        uplo,
                        Op::NoTrans,
                        (dim(pb)?, kk),
                        alpha,
                        (at(w.ptr, n, p0, 0), dim(n)?),
                        beta,
                        (at(cp, ldc, p0, p0), dim(ldc)?),
                    )?;
                }
            }
            beta = T::ONE;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn scaled_gemm_impl<T: Scalar>(
        &self,
        alpha: T,
        a: View<'_, Cuda, T>,
        b: View<'_, Cuda, T>,
        d: View<'_, Cuda, T>,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        check::scaled_gemm(&a, &b, &d, &c)?;
        let (m, n, k) = (a.rows(), b.rows(), a.cols());
        if m == 0 || n == 0 {
            return Ok(());
        }
        if k == 0 {
            return crate::backend::Backend::gemm(self, alpha, a, Op::NoTrans, b, Op::Trans, beta, c);
        }
        let kc = chunk_cols(k);
        // Scaling one operand suffices: A·D²·Bᵀ = (A·D²)·Bᵀ, and `dgmm` twice
        // into the workspace (D, then D again) keeps `d` unsquared.
        let wa = self.buffer::<T>(m * kc, false)?;
        let opa = Operand { ptr: raw(&a), ld: a.block().ld, rows: m };
        let wop = Operand { ptr: wa.ptr, ld: m.max(1), rows: m };
        let (bp, ldb) = (raw(&b), b.block().ld);
        let dim = |v| blas::dim("scaled_gemm", v);
        let h = *self.blas.handle();
        let mut beta = beta;
        for j0 in (0..k).step_by(kc) {
            let cols = kc.min(k - j0);
            self.scale_chunk(&opa, &d, (j0, cols), &wa)?;
            // In place (`dgmm` allows C = A with the same leading dimension);
            // d is read at the chunk's columns, W's column 0 is A's j0.
            self.scale_chunk_in_place(&wop, &d, (j0, cols))?;
            // SAFETY: W is m × cols (ld m); B's chunk is n × cols at column j0.
            unsafe {
                blas::gemm(
                    h,
                    (Op::NoTrans, Op::Trans),
                    (dim(m)?, dim(n)?, dim(cols)?),
                    alpha,
                    (wa.ptr, dim(m.max(1))?),
                    (bp + (j0 * ldb * size_of::<T>()) as u64, dim(ldb)?),
                    beta,
                    (raw_mut(&c), dim(c.block().ld)?),
                )?;
            }
            beta = T::ONE;
        }
        Ok(())
    }

    /// `W := W·diag(d[j0..j0+cols])` for the workspace `W` of `x.rows × cols`.
    fn scale_chunk_in_place<T: Scalar>(
        &self,
        w: &Operand,
        d: &View<'_, Cuda, T>,
        (j0, cols): (usize, usize),
    ) -> Result<()> {
        let dim = |v| blas::dim("scaled_gram", v);
        let db = d.block();
        let incd = if db.cols == 1 { 1 } else { db.ld };
        let d_ptr = super::addr(d.buffer(), db.vector_index(j0));
        // SAFETY: the workspace holds rows × cols entries with ld = rows.
        unsafe {
            dgmm::<T>(
                *self.blas.handle(),
                (dim(w.rows)?, dim(cols)?),
                (w.ptr, dim(w.ld)?),
                (d_ptr, dim(incd)?),
                (w.ptr, dim(w.ld)?),
            )
        }
    }
}
