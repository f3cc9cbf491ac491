//! `Cholesky<T>`: the factor `L` of a symmetric positive definite matrix.

use super::{Matrix, Sym, SymStorage, Tri};
use crate::backend::{Backend, Block, BufferMut, View, ViewMut};
use crate::factor::cholesky::{self, CholeskyParams};
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// `A = L·Lᵀ` with `L` lower triangular.
#[derive(Clone, Debug)]
pub struct Cholesky<T: Scalar> {
    l: Tri<T>,
}

impl<T: Scalar> Sym<T> {
    /// The Cholesky factorization, or `NotPositiveDefinite` naming the first
    /// column (1-based) whose pivot is not positive; a NaN or infinity in the
    /// lower triangle is refused before any work. Waits for the result.
    pub fn cholesky(&self) -> Result<Cholesky<T>> {
        self.cholesky_with(CholeskyParams::default())
    }

    /// [`cholesky`](Self::cholesky) with explicit tuning.
    pub fn cholesky_with(&self, params: CholeskyParams) -> Result<Cholesky<T>> {
        if self.storage() != SymStorage::Full {
            return Err(Error::InvalidArgument(
                "Cholesky in RFP storage is not available yet: convert with to_full() first".into(),
            ));
        }
        let n = self.n();
        let mut l = self.stored().try_clone()?;
        with_backend!(self.device(), be => {
            // Only the lower triangle is A's: clear the rest, then look for NaN/Inf.
            be.fill_strict_triangle(Uplo::Upper, T::ZERO, l.view_mut()?)?;
            if let Some((i, j)) = be.find_non_finite(l.view()?)? {
                let value = l.entry(i, j)?.to_f64();
                return Err(Error::NonFinite { what: "A".into(), row: i + 1, col: j + 1, value });
            }
            let mut info = be.upload(&[0i32])?;
            let a = BufferMut::new(l.buffer_mut(be)?);
            cholesky::factor_in_place(be, Uplo::Lower, &a, Block::dense(n, n), &mut ViewMut::dense(&mut info, 1, 1)?, 0, params)?;
            let mut first = [0i32];
            be.download(&info, &mut first)?;
            if first[0] != 0 {
                return Err(Error::NotPositiveDefinite { column: first[0] as usize });
            }
        });
        Ok(Cholesky { l: Tri::lower(l)? })
    }
}

impl<T: Scalar> Cholesky<T> {
    /// The factor `L`.
    pub fn factor(&self) -> &Tri<T> {
        &self.l
    }

    pub fn n(&self) -> usize {
        self.l.n()
    }

    /// `X` with `A·X = B`, for `B` of `n` rows (any number of columns).
    pub fn solve(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        let l = self.l.stored();
        l.check_with(b)?;
        if b.rows() != self.n() {
            return Err(Error::dims(
                "Cholesky::solve",
                format!("A is {0}×{0} but B is {1}×{2}", self.n(), b.rows(), b.cols()),
            ));
        }
        let mut x = b.try_clone()?;
        with_backend!(l.device(), be => cholesky::solve_in_place(be, Uplo::Lower, l.view()?, x.view_mut()?))?;
        Ok(x)
    }

    /// `log det A = 2·Σ log Lᵢᵢ` (waits for the result).
    pub fn log_det(&self) -> Result<f64> {
        let l = self.l.stored();
        let n = self.n();
        let diagonal = with_backend!(l.device(), be => {
            let mut d = be.alloc::<T>(n)?;
            let from = View::new(l.view_on(be)?.buffer(), Block { offset: 0, rows: 1, cols: n, ld: n + 1 })?;
            be.copy(from, ViewMut::dense(&mut d, 1, n)?)?;
            let mut host = vec![T::ZERO; n];
            be.download(&d, &mut host)?;
            host
        });
        Ok(2.0 * diagonal.iter().map(|x| x.to_f64().ln()).sum::<f64>())
    }

    /// `L·Lᵀ`, for checking the factorization.
    pub fn reconstruct(&self) -> Result<Matrix<T>> {
        let l = self.l.stored();
        let n = self.n();
        with_backend!(l.device(), be => l.new_with(be, n, n, |out| cholesky::reconstruct(be, Uplo::Lower, l.view()?, out)))
    }
}
