//! `Tri<T>`: a triangular matrix, the stored triangle of a square array.

use super::{Diag, Matrix, validate};
use crate::backend::{Backend, Block, Op, Side};
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// A triangular `n × n` matrix: one triangle of a square array (the other is
/// never read), with an explicit or implicit unit diagonal.
#[derive(Clone, Debug)]
pub struct Tri<T: Scalar> {
    data: Matrix<T>,
    uplo: Uplo,
    diag: Diag,
}

impl<T: Scalar> Tri<T> {
    /// The `uplo` triangle of the square `a`.
    pub fn new(a: Matrix<T>, uplo: Uplo, diag: Diag) -> Result<Self> {
        validate::square("Tri::new", &a)?;
        Ok(Tri { data: a, uplo, diag })
    }

    /// The lower triangle of `a`, diagonal included.
    pub fn lower(a: Matrix<T>) -> Result<Self> {
        Self::new(a, Uplo::Lower, Diag::NonUnit)
    }

    /// The upper triangle of `a`, diagonal included.
    pub fn upper(a: Matrix<T>) -> Result<Self> {
        Self::new(a, Uplo::Upper, Diag::NonUnit)
    }

    /// The square array holding the triangle.
    pub fn stored(&self) -> &Matrix<T> {
        &self.data
    }

    pub fn n(&self) -> usize {
        self.data.rows()
    }
    pub fn uplo(&self) -> Uplo {
        self.uplo
    }
    pub fn diag(&self) -> Diag {
        self.diag
    }

    fn check_rhs(&self, op: &'static str, b: &Matrix<T>) -> Result<()> {
        self.data.check_with(b)?;
        if b.rows() != self.n() {
            return Err(Error::dims(op, format!("T is {0}×{0} but B is {1}×{2}", self.n(), b.rows(), b.cols())));
        }
        Ok(())
    }

    /// `X` with `T·X = B` (`transpose`: `Tᵀ·X = B`).
    pub fn solve(&self, b: &Matrix<T>, transpose: bool) -> Result<Matrix<T>> {
        self.check_rhs("Tri::solve", b)?;
        let op = if transpose { Op::Trans } else { Op::NoTrans };
        let mut x = b.try_clone()?;
        with_backend!(self.data.device(), be => {
            be.trsm(Side::Left, self.uplo, op, self.diag, T::ONE, self.data.view()?, x.view_mut()?)
        })?;
        Ok(x)
    }

    /// `T·B`.
    pub fn matmul(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        self.check_rhs("Tri::matmul", b)?;
        let mut x = b.try_clone()?;
        with_backend!(self.data.device(), be => {
            be.trmm(Side::Left, self.uplo, Op::NoTrans, self.diag, T::ONE, self.data.view()?, x.view_mut()?)
        })?;
        Ok(x)
    }

    /// The dense matrix: the other triangle zero, a unit diagonal made explicit.
    pub fn to_dense(&self) -> Result<Matrix<T>> {
        let mut a = self.data.try_clone()?;
        with_backend!(a.device().clone(), be => {
            be.fill_strict_triangle(self.uplo.flip(), T::ZERO, a.view_mut()?)?;
            if self.diag == Diag::Unit {
                let n = a.rows();
                be.fill(a.block_mut(Block { offset: 0, rows: 1, cols: n, ld: n + 1 })?, T::ONE)?;
            }
            Ok::<(), Error>(())
        })?;
        Ok(a)
    }
}
