//! `Matrix<T>`: a dense column-major matrix resident on a device.

use faer::Mat;

use super::device::{Resident, Storage};
use super::{Device, Norm};
use crate::backend::{Backend, Block, Op, View, ViewMut};
use crate::{Error, Result, Scalar};

/// A dense `rows × cols` matrix on a [`Device`], column-major with leading
/// dimension `max(rows, 1)`.
///
/// A matrix may hold a failure instead of data: the result of an operator on
/// mismatched or failed operands. The failure is raised by the first call
/// that reads the matrix, and passed on to every matrix computed from it.
pub struct Matrix<T: Scalar> {
    device: Device,
    rows: usize,
    cols: usize,
    data: Result<Storage<T>>,
}

impl<T: Scalar> Matrix<T> {
    pub(crate) fn from_storage(device: Device, rows: usize, cols: usize, storage: Storage<T>) -> Self {
        Matrix { device, rows, cols, data: Ok(storage) }
    }

    /// A matrix standing for a failed computation.
    pub(crate) fn failed(device: Device, rows: usize, cols: usize, error: Error) -> Self {
        Matrix { device, rows, cols, data: Err(error) }
    }

    pub fn rows(&self) -> usize {
        self.rows
    }
    pub fn cols(&self) -> usize {
        self.cols
    }
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }
    pub fn is_empty(&self) -> bool {
        self.rows == 0 || self.cols == 0
    }
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The failure this matrix carries, if it stands for one.
    pub fn error(&self) -> Option<&Error> {
        self.data.as_ref().err()
    }

    pub(crate) fn storage(&self) -> Result<&Storage<T>> {
        self.data.as_ref().map_err(Clone::clone)
    }

    pub(crate) fn view<B: Resident>(&self) -> Result<View<'_, B, T>> {
        View::dense(B::buffer(self.storage()?)?, self.rows, self.cols)
    }

    /// [`view`](Self::view) where the backend cannot be inferred.
    pub(crate) fn view_on<B: Resident>(&self, _: &B) -> Result<View<'_, B, T>> {
        self.view()
    }

    pub(crate) fn view_mut<B: Resident>(&mut self) -> Result<ViewMut<'_, B, T>> {
        self.block_mut(Block::dense(self.rows, self.cols))
    }

    /// Any block of the storage, writable (the diagonal is `1 × n` with
    /// leading dimension `n + 1`).
    pub(crate) fn block_mut<B: Resident>(&mut self, block: Block) -> Result<ViewMut<'_, B, T>> {
        let storage = self.data.as_mut().map_err(|e| e.clone())?;
        ViewMut::new(B::buffer_mut(storage)?, block)
    }

    /// The whole buffer, writable, for algorithms that take several views of it.
    pub(crate) fn buffer_mut<B: Resident>(&mut self, _: &B) -> Result<&mut B::Buffer<T>> {
        let storage = self.data.as_mut().map_err(|e| e.clone())?;
        B::buffer_mut(storage)
    }

    /// Entry `(i, j)` (0-based), read back to the host.
    pub(crate) fn entry(&self, i: usize, j: usize) -> Result<T> {
        with_backend!(self.device, be => {
            let mut one = be.alloc::<T>(1)?;
            be.copy(self.view_on(be)?.sub(i, j, 1, 1)?, ViewMut::dense(&mut one, 1, 1)?)?;
            let mut host = [T::ZERO];
            be.download(&one, &mut host)?;
            Ok(host[0])
        })
    }

    /// Fails unless `other` lives where `self` does and is usable.
    pub(crate) fn check_with<U: Scalar>(&self, other: &Matrix<U>) -> Result<()> {
        self.storage()?;
        other.storage()?;
        if !self.device.same(&other.device) {
            return Err(Error::DifferentDevices { first: self.device.describe(), second: other.device.describe() });
        }
        Ok(())
    }

    /// Allocates a `rows × cols` result on this matrix's device and fills it
    /// with `f(backend, output view)`.
    pub(crate) fn new_with<B: Resident>(
        &self,
        be: &B,
        rows: usize,
        cols: usize,
        f: impl FnOnce(ViewMut<'_, B, T>) -> Result<()>,
    ) -> Result<Matrix<T>> {
        let mut out = be.alloc::<T>(rows * cols)?;
        f(ViewMut::dense(&mut out, rows, cols)?)?;
        Ok(Matrix::from_storage(self.device.clone(), rows, cols, be.wrap(out)))
    }

    /// The entries, column-major. Waits for the work that computes them and
    /// raises any failure it met.
    pub fn to_host(&self) -> Result<Vec<T>> {
        // A deferred failure first: its shape may be one no host can hold.
        self.storage()?;
        let mut host = vec![T::ZERO; self.rows * self.cols];
        with_backend!(self.device, be => be.download(self.view_on(be)?.buffer(), &mut host))?;
        Ok(host)
    }

    /// A faer copy on the host.
    pub fn to_faer(&self) -> Result<Mat<T>> {
        let host = self.to_host()?;
        Ok(Mat::from_fn(self.rows, self.cols, |i, j| host[i + j * self.rows]))
    }

    /// `self · b`, checked now.
    pub fn matmul(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        self.check_with(b)?;
        if self.cols != b.rows {
            return Err(Error::dims(
                "matmul",
                format!("A is {}×{} but B is {}×{}", self.rows, self.cols, b.rows, b.cols),
            ));
        }
        with_backend!(self.device, be => self.new_with(be, self.rows, b.cols, |c| {
            be.gemm(T::ONE, self.view()?, Op::NoTrans, b.view()?, Op::NoTrans, T::ZERO, c)
        }))
    }

    /// `selfᵀ · b`, checked now, without forming the transpose.
    pub fn tr_matmul(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        self.check_with(b)?;
        if self.rows != b.rows {
            return Err(Error::dims(
                "tr_matmul",
                format!("Aᵀ is {}×{} but B is {}×{}", self.cols, self.rows, b.rows, b.cols),
            ));
        }
        with_backend!(self.device, be => self.new_with(be, self.cols, b.cols, |c| {
            be.gemm(T::ONE, self.view()?, Op::Trans, b.view()?, Op::NoTrans, T::ZERO, c)
        }))
    }

    /// `α·self + β·b`, checked now.
    pub fn add_scaled(&self, alpha: T, beta: T, b: &Matrix<T>) -> Result<Matrix<T>> {
        self.check_with(b)?;
        if self.shape() != b.shape() {
            return Err(Error::dims("add", format!("A is {}×{} but B is {}×{}", self.rows, self.cols, b.rows, b.cols)));
        }
        with_backend!(self.device, be => self.new_with(be, self.rows, self.cols, |c| {
            be.geam(alpha, self.view()?, Op::NoTrans, beta, b.view()?, Op::NoTrans, c)
        }))
    }

    /// `α·self`.
    pub fn scaled(&self, alpha: T) -> Result<Matrix<T>> {
        self.add_scaled(alpha, T::ZERO, self)
    }

    /// `selfᵀ`.
    pub fn transpose(&self) -> Result<Matrix<T>> {
        self.storage()?;
        with_backend!(self.device, be => self.new_with(be, self.cols, self.rows, |c| {
            let a = self.view()?;
            be.geam(T::ONE, a, Op::Trans, T::ZERO, a, Op::Trans, c)
        }))
    }

    /// A copy in the other precision (`f64` ↔ `f32`, rounding to nearest).
    pub fn cast(&self) -> Result<Matrix<T::Other>> {
        self.storage()?;
        let (rows, cols) = self.shape();
        let out = with_backend!(self.device, be => {
            let mut out = be.alloc::<T::Other>(rows * cols)?;
            be.cast(self.view()?, ViewMut::dense(&mut out, rows, cols)?)?;
            be.wrap(out)
        });
        Ok(Matrix::from_storage(self.device.clone(), rows, cols, out))
    }

    /// `diag(d)·self` for a vector `d` (one row or column) of `rows` entries.
    pub fn scale_rows(&self, d: &Matrix<T>) -> Result<Matrix<T>> {
        self.check_with(d)?;
        let mut out = self.try_clone()?;
        with_backend!(self.device, be => be.scale_rows(d.view()?, out.view_mut()?))?;
        Ok(out)
    }

    /// `self·diag(d)` for a vector `d` (one row or column) of `cols` entries.
    pub fn scale_cols(&self, d: &Matrix<T>) -> Result<Matrix<T>> {
        self.check_with(d)?;
        let mut out = self.try_clone()?;
        with_backend!(self.device, be => be.scale_cols(out.view_mut()?, d.view()?))?;
        Ok(out)
    }

    /// A matrix norm (waits for the result).
    pub fn norm(&self, norm: Norm) -> Result<T> {
        self.storage()?;
        with_backend!(self.device, be => be.norm(norm, self.view()?))
    }

    /// `(row, col)` (0-based) of the first NaN or infinity, column by column.
    pub fn find_non_finite(&self) -> Result<Option<(usize, usize)>> {
        self.storage()?;
        with_backend!(self.device, be => be.find_non_finite(self.view()?))
    }

    /// A deep copy on the same device.
    pub fn try_clone(&self) -> Result<Matrix<T>> {
        self.storage()?;
        with_backend!(self.device, be => self.new_with(be, self.rows, self.cols, |c| be.copy(self.view()?, c)))
    }
}

impl<T: Scalar> Clone for Matrix<T> {
    /// A deep copy; a failed copy is a matrix carrying that failure.
    fn clone(&self) -> Self {
        self.try_clone().unwrap_or_else(|e| Matrix::failed(self.device.clone(), self.rows, self.cols, e))
    }
}

impl<T: Scalar> std::fmt::Debug for Matrix<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Matrix<{}>({}×{} on {:?}", T::NAME, self.rows, self.cols, self.device)?;
        if let Err(e) = &self.data {
            write!(f, ", failed: {e}")?;
        }
        f.write_str(")")
    }
}
