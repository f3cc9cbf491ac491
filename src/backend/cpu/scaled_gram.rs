//! `A·diag(d)²·Aᵀ` and `A·diag(d)²·Bᵀ` on the CPU: the columns of the
//! operands are scaled by `d` a chunk at a time into small workspaces
//! `W = A·D` (so `A·D²·Aᵀ = W·Wᵀ`, symmetric in rounding too) and faer
//! accumulates the chunk's product into the triangle or block.

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, Mat, MatRef};

use super::{Cpu, accumulate, mat, mat_mut, scale_part, vector};
use crate::backend::Backend;
use crate::backend::{View, ViewMut, check};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Columns scaled per chunk: enough for faer's kernels to run at speed,
/// few enough that the workspace is small next to `A`.
const CHUNK: usize = 512;

/// `W = A[:, j0..j0+cols]·diag(d[j0..j0+cols])`.
fn scaled_chunk<T: Scalar>(a: MatRef<'_, T>, d: &(impl Fn(usize) -> T + Sync), j0: usize, cols: usize) -> Mat<T> {
    Mat::from_fn(a.nrows(), cols, |i, j| a[(i, j0 + j)] * d(j0 + j))
}

impl Cpu {
    pub(super) fn scaled_syrk_impl<T: Scalar>(
        &self,
        uplo: Uplo,
        alpha: T,
        a: View<'_, Cpu, T>,
        d: View<'_, Cpu, T>,
        beta: T,
        c: ViewMut<'_, Cpu, T>,
    ) -> Result<()> {
        check::scaled_syrk(uplo, &a, &d, &c)?;
        let (a, d, mut c) = (mat(a), vector(d), mat_mut(c));
        let k = a.ncols();
        let structure = match uplo {
            Uplo::Lower => BlockStructure::TriangularLower,
            Uplo::Upper => BlockStructure::TriangularUpper,
        };
        if alpha == T::ZERO || k == 0 {
            // BLAS: C := β·C, A not read (β = 0: C not read either).
            scale_part(c, beta, Some(uplo));
            return Ok(());
        }
        let mut beta = beta;
        for j0 in (0..k).step_by(CHUNK) {
            let cols = CHUNK.min(k - j0);
            let w = scaled_chunk(a, &d, j0, cols);
            accumulate(c.as_mut(), beta, Some(uplo), |c, acc| {
                triangular::matmul(
                    c,
                    structure,
                    acc,
                    w.as_ref(),
                    BlockStructure::Rectangular,
                    w.transpose(),
                    BlockStructure::Rectangular,
                    alpha,
                    self.par,
                )
            });
            beta = T::ONE;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn scaled_gemm_impl<T: Scalar>(
        &self,
        alpha: T,
        a: View<'_, Cpu, T>,
        b: View<'_, Cpu, T>,
        d: View<'_, Cpu, T>,
        beta: T,
        c: ViewMut<'_, Cpu, T>,
    ) -> Result<()> {
        check::scaled_gemm(&a, &b, &d, &c)?;
        let (a, b, d, mut c) = (mat(a), mat(b), vector(d), mat_mut(c));
        let k = a.ncols();
        if alpha == T::ZERO || k == 0 {
            scale_part(c, beta, None);
            return Ok(());
        }
        let mut beta = beta;
        for j0 in (0..k).step_by(CHUNK) {
            let cols = CHUNK.min(k - j0);
            let wa = scaled_chunk(a, &d, j0, cols);
            let wb = scaled_chunk(b, &d, j0, cols);
            accumulate(c.as_mut(), beta, None, |c, acc: Accum| {
                matmul(c, acc, wa.as_ref(), wb.transpose(), alpha, self.par)
            });
            beta = T::ONE;
        }
        Ok(())
    }

    /// The lower triangle in FP64 as `scaled_syrk` forms it, mirrored and
    /// rounded: the CPU has no faster arithmetic that keeps single precision.
    pub(super) fn scaled_syrk_f32_impl(
        &self,
        a: View<'_, Cpu, f64>,
        d: View<'_, Cpu, f64>,
        c: ViewMut<'_, Cpu, f32>,
    ) -> Result<()> {
        check::scaled_syrk_f32(&a, &d, &c)?;
        let n = a.rows();
        let mut g = self.alloc::<f64>(n * n)?;
        self.scaled_syrk_impl(Uplo::Lower, 1.0, a, d, 0.0, ViewMut::dense(&mut g, n, n)?)?;
        let g = mat(View::dense(&g, n, n)?);
        let mut c = mat_mut(c);
        for j in 0..n {
            for i in 0..n {
                c[(i, j)] = g[(i.max(j), i.min(j))] as f32;
            }
        }
        Ok(())
    }
}
