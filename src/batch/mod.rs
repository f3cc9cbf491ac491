//! Batches: many small matrices or vectors of one shape, and the solvers
//! that take them whole.
//!
//! A [`Batch`] holds `count` matrices of shape `rows × cols` in one buffer
//! on one device, matrix `s` column-major from entry `s·rows·cols`: the
//! whole is the dense `(rows·cols) × count` matrix whose column `s` is
//! matrix `s` ([`Batch::as_matrix`]). A batch of vectors (`cols = 1`) is
//! then an `rows × count` matrix with one system per column, the layout
//! the batched solvers work in. [`BatchRef`] is a view of a sub-range, so
//! that a batch can be split (between devices, or into work units) without
//! copying it. In files a batch is one Matrix Market array, its matrices
//! stacked vertically (`Batch::write_matrix_market`).
//!
//! The solvers: [`solve_tridiagonal`]; [`lu`] and [`cholesky`] of small
//! dense members, with their solves; and the [`Coprocessor`], which shares
//! one batch between the GPU and the CPU in the measured ratio that makes
//! both finish together.

mod dense;
mod matrix_market;
mod split;
mod tridiagonal;

use std::ops::Range;

pub use dense::{BatchFactor, BatchParams, FactorStatus, cholesky, cholesky_in_place, lu, lu_in_place, solve_in_place};
use dense::{cholesky_owned, lu_owned};
pub use split::{Coprocessor, Share, SplitOp, SplitReport, SplitSolution};
pub use tridiagonal::{SystemStatus, TridiagonalMethod, TridiagonalSolution, solve_tridiagonal};

use crate::backend::Backend;
use crate::{Device, Error, Matrix, Result, Scalar, with_backend};

/// `count` matrices of one shape in one buffer; see the module's docs.
pub struct Batch<T: Scalar> {
    rows: usize,
    cols: usize,
    data: Matrix<T>,
}

impl<T: Scalar> Batch<T> {
    /// `count` matrices of `rows × cols` from `values`: the matrices one
    /// after another, each column-major.
    pub fn from_host(device: &Device, (rows, cols): (usize, usize), count: usize, values: &[T]) -> Result<Self> {
        let size = entries(rows, cols)?;
        if size.checked_mul(count) != Some(values.len()) {
            return Err(Error::dims(
                "Batch::from_host",
                format!(
                    "{count} matrices of {rows}×{cols} need {} entries, got {}",
                    size.saturating_mul(count),
                    values.len()
                ),
            ));
        }
        Ok(Batch { rows, cols, data: device.from_col_major(size, count, values)? })
    }

    /// `count` zero matrices of `rows × cols`.
    pub fn zeros(device: &Device, (rows, cols): (usize, usize), count: usize) -> Result<Self> {
        let mut data = device.zeros(entries(rows, cols)?, count)?;
        with_backend!(device, be => be.fill(data.view_mut()?, T::ZERO))?;
        Ok(Batch { rows, cols, data })
    }

    /// The batch whose matrices are those of `data`'s columns, each
    /// `rows × cols` (`data` has `rows·cols` rows).
    pub fn from_matrix(data: Matrix<T>, (rows, cols): (usize, usize)) -> Result<Self> {
        if Some(data.rows()) != rows.checked_mul(cols) {
            return Err(Error::dims(
                "Batch::from_matrix",
                format!("a {}×{} array holds no batch of {rows}×{cols} matrices", data.rows(), data.cols()),
            ));
        }
        Ok(Batch { rows, cols, data })
    }

    /// The shape of each matrix.
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    pub fn count(&self) -> usize {
        self.data.cols()
    }

    pub fn device(&self) -> &Device {
        self.data.device()
    }

    /// All entries on the host, the matrices one after another.
    pub fn to_host(&self) -> Result<Vec<T>> {
        self.data.to_host()
    }

    /// All entries into `out` (as many as the batch holds), the matrices
    /// one after another.
    pub fn to_host_into(&self, out: &mut [T]) -> Result<()> {
        let len = self.data.rows() * self.data.cols();
        if out.len() != len {
            return Err(Error::dims(
                "Batch::to_host_into",
                format!("the batch holds {len} entries, out has {}", out.len()),
            ));
        }
        with_backend!(self.device(), be => be.download(self.data.view_on(be)?.buffer(), out))
    }

    /// The `(rows·cols) × count` array, column `s` being matrix `s`.
    pub fn as_matrix(&self) -> &Matrix<T> {
        &self.data
    }

    /// Matrix `s`, copied out.
    pub fn matrix(&self, s: usize) -> Result<Matrix<T>> {
        self.range(s..s + 1)?.to_host().and_then(|v| self.device().from_col_major(self.rows, self.cols, &v))
    }

    /// The whole batch as a view.
    pub fn all(&self) -> BatchRef<'_, T> {
        BatchRef { batch: self, start: 0, count: self.count() }
    }

    /// Matrices `range` as a view.
    pub fn range(&self, range: Range<usize>) -> Result<BatchRef<'_, T>> {
        if range.start > range.end || range.end > self.count() {
            return Err(Error::dims(
                "Batch::range",
                format!("matrices {}..{} of a batch of {}", range.start, range.end, self.count()),
            ));
        }
        Ok(BatchRef { batch: self, start: range.start, count: range.end - range.start })
    }

    /// The views of matrices `0..k` and `k..`.
    pub fn split_at(&self, k: usize) -> Result<(BatchRef<'_, T>, BatchRef<'_, T>)> {
        Ok((self.range(0..k)?, self.range(k..self.count())?))
    }
}

/// Matrices `start..start + count` of a [`Batch`].
#[derive(Clone, Copy)]
pub struct BatchRef<'a, T: Scalar> {
    batch: &'a Batch<T>,
    start: usize,
    count: usize,
}

impl<'a, T: Scalar> BatchRef<'a, T> {
    pub fn shape(&self) -> (usize, usize) {
        self.batch.shape()
    }

    pub fn count(&self) -> usize {
        self.count
    }

    /// The first matrix's index in the batch viewed.
    pub fn start(&self) -> usize {
        self.start
    }

    pub fn device(&self) -> &'a Device {
        self.batch.device()
    }

    /// The batch viewed, whole.
    pub fn batch(&self) -> &'a Batch<T> {
        self.batch
    }

    /// The viewed matrices on the host, one after another.
    pub fn to_host(&self) -> Result<Vec<T>> {
        self.to_batch()?.to_host()
    }

    /// A batch of its own holding a copy of the viewed matrices, on the
    /// same device.
    pub fn to_batch(&self) -> Result<Batch<T>> {
        let (data, size) = (&self.batch.data, self.batch.rows * self.batch.cols);
        let copy = with_backend!(self.device(), be => {
            let src = data.view_on(be)?.sub(0, self.start, size, self.count)?;
            data.new_with(be, size, self.count, |dst| be.copy(src, dst))?
        });
        Ok(Batch { rows: self.batch.rows, cols: self.batch.cols, data: copy })
    }
}

impl<'a, T: Scalar> From<&'a Batch<T>> for BatchRef<'a, T> {
    fn from(batch: &'a Batch<T>) -> Self {
        batch.all()
    }
}

/// Entries of one `rows × cols` matrix, refusing an overflow.
fn entries(rows: usize, cols: usize) -> Result<usize> {
    rows.checked_mul(cols)
        .ok_or_else(|| Error::InvalidArgument(format!("a {rows}×{cols} matrix: rows × columns overflows")))
}
