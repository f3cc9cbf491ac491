//! `Sym<T>`: a symmetric matrix stored by its lower triangle, in full
//! storage or in rectangular full packed (RFP) storage at half the memory.

use super::{Device, Matrix, validate};
use crate::backend::{Backend, Block, Norm, Op, View, ViewMut};
use crate::layout::{Rfp, Transr, Uplo};
use crate::{Error, Result, Scalar};

/// How a [`Sym`] keeps its lower triangle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymStorage {
    /// An `n × n` array whose strictly upper part is not referenced.
    Full,
    /// LAPACK's RFP array of `n(n+1)/2` entries (`TRANSR = N`, `UPLO = L`).
    Rfp,
}

/// A symmetric `n × n` matrix; only the lower triangle is stored and read.
#[derive(Clone, Debug)]
pub struct Sym<T: Scalar> {
    n: usize,
    /// `n × n` (full) or `n(n+1)/2 × 1` (RFP).
    data: Matrix<T>,
    storage: SymStorage,
}

/// The RFP layout of a packed symmetric matrix of order `n`: the lower
/// triangle with LAPACK's `TRANSR = 'T'`. For even `n` its rectangle is
/// `n/2 × (n+1)` with leading dimension `n/2`, so columns stay aligned where
/// `TRANSR = 'N'` has `n + 1`; on an H100 the Cholesky is faster this way
/// from n = 8192 up (`gpumat-bench --suite cholesky` times both).
pub fn packed_layout(n: usize) -> Rfp {
    Rfp::new(n, Transr::Transpose, Uplo::Lower)
}

impl<T: Scalar> Sym<T> {
    /// The symmetric matrix whose lower triangle is that of the square `a`;
    /// `a`'s strictly upper part is ignored.
    pub fn from_lower(a: Matrix<T>) -> Result<Self> {
        validate::square("Sym::from_lower", &a)?;
        Ok(Sym { n: a.rows(), data: a, storage: SymStorage::Full })
    }

    /// The symmetric matrix `a`, which must be exactly symmetric (a method
    /// that reads one triangle would otherwise work with another matrix):
    /// [`Error::NotSymmetric`] names the first pair that differs, column by
    /// column (1-based, row below the diagonal). The test is exact and on
    /// the device: `max|A − Aᵀ| = 0`.
    pub fn from_symmetric(a: Matrix<T>) -> Result<Self> {
        validate::square("Sym::from_symmetric", &a)?;
        if let Some((row, col)) = asymmetry(&a)? {
            return Err(Error::NotSymmetric { row: row + 1, col: col + 1 });
        }
        Self::from_lower(a)
    }

    /// The Gram matrix `A·Aᵀ` of an `m × k` matrix, computing only its lower
    /// triangle (`syrk`).
    pub fn gram(a: &Matrix<T>) -> Result<Self> {
        a.storage()?;
        let m = a.rows();
        let data = with_backend!(a.device(), be => {
            a.new_with(be, m, m, |c| be.syrk(Uplo::Lower, Op::NoTrans, T::ONE, a.view()?, T::ZERO, c))?
        });
        Ok(Sym { n: m, data, storage: SymStorage::Full })
    }

    /// A symmetric matrix of order `n` from its RFP array (`n(n+1)/2 × 1`).
    pub(crate) fn from_rfp_array(n: usize, data: Matrix<T>) -> Result<Self> {
        let len = packed_layout(n).len();
        if data.shape() != (len, 1) {
            return Err(Error::dims(
                "Sym::from_rfp_array",
                format!("need {len}×1, got {}×{}", data.rows(), data.cols()),
            ));
        }
        Ok(Sym { n, data, storage: SymStorage::Rfp })
    }

    pub fn n(&self) -> usize {
        self.n
    }
    pub fn storage(&self) -> SymStorage {
        self.storage
    }
    pub fn device(&self) -> &Device {
        self.data.device()
    }

    /// The RFP layout used for packed storage.
    pub fn rfp_layout(&self) -> Rfp {
        packed_layout(self.n)
    }

    /// Number of entries held on the device.
    pub fn stored_len(&self) -> usize {
        self.data.rows() * self.data.cols()
    }

    /// The same matrix in RFP storage (a copy if it already is).
    pub fn to_rfp(&self) -> Result<Self> {
        let rfp = self.rfp_layout();
        let data = match self.storage {
            SymStorage::Rfp => self.data.try_clone()?,
            SymStorage::Full => with_backend!(self.device(), be => {
                self.data.new_with(be, rfp.len(), 1, |arf| be.full_to_rfp(self.data.view()?, rfp, arf))?
            }),
        };
        Ok(Sym { n: self.n, data, storage: SymStorage::Rfp })
    }

    /// The same matrix in full storage (lower triangle; upper set to zero).
    pub fn to_full(&self) -> Result<Self> {
        let data = match self.storage {
            SymStorage::Full => self.data.try_clone()?,
            SymStorage::Rfp => self.unpack()?,
        };
        Ok(Sym { n: self.n, data, storage: SymStorage::Full })
    }

    /// Lower triangle unpacked from RFP into a zeroed `n × n` array.
    fn unpack(&self) -> Result<Matrix<T>> {
        let rfp = self.rfp_layout();
        with_backend!(self.device(), be => {
            self.data.new_with(be, self.n, self.n, |a| be.rfp_to_full(self.data.view()?, rfp, a))
        })
    }

    /// The dense symmetric matrix, both triangles filled.
    pub fn to_dense(&self) -> Result<Matrix<T>> {
        let mut a = match self.storage {
            SymStorage::Full => self.data.try_clone()?,
            SymStorage::Rfp => self.unpack()?,
        };
        with_backend!(self.device(), be => be.symmetrize(Uplo::Lower, a.view_mut()?))?;
        Ok(a)
    }

    /// A copy in the other precision (`f64` ↔ `f32`), in the same storage.
    pub fn cast(&self) -> Result<Sym<T::Other>> {
        Ok(Sym { n: self.n, data: self.data.cast()?, storage: self.storage })
    }

    /// The stored array as it lies on the device: `n × n` for full storage,
    /// the RFP array as one column for packed storage.
    pub fn stored(&self) -> &Matrix<T> {
        &self.data
    }

    /// A copy of the stored array for a factorization to overwrite: the
    /// strictly upper part of full storage set to zero (it is not `A`'s), and
    /// a NaN or infinity refused, naming its row and column in `A`.
    pub(crate) fn factorable_copy(&self) -> Result<Matrix<T>> {
        let mut data = self.data.try_clone()?;
        with_backend!(self.device(), be => {
            if self.storage == SymStorage::Full {
                be.fill_strict_triangle(Uplo::Upper, T::ZERO, data.view_mut()?)?;
            }
            if let Some((i, j)) = be.find_non_finite(data.view()?)? {
                let value = data.entry(i, j)?.to_f64();
                let (row, col) = match self.storage {
                    SymStorage::Rfp => position_in_rfp(self.rfp_layout(), i).unwrap_or((i, 0)),
                    SymStorage::Full => (i, j),
                };
                return Err(Error::NonFinite { what: "A".into(), row: row + 1, col: col + 1, value });
            }
        });
        Ok(data)
    }

    /// [`factorable_copy`](Self::factorable_copy) and `‖A‖₁` (as
    /// [`one_norm`](Self::one_norm)). In full storage the norm is taken from
    /// the copy itself, made symmetric for the purpose and its upper part
    /// zeroed after: no second `n × n` array.
    pub(crate) fn factorable_copy_and_norm(&self) -> Result<(Matrix<T>, f64)> {
        if self.storage == SymStorage::Rfp {
            return Ok((self.factorable_copy()?, self.one_norm()?));
        }
        let mut data = self.data.try_clone()?;
        let norm = with_backend!(self.device(), be => {
            be.symmetrize(Uplo::Lower, data.view_mut()?)?;
            if let Some((i, j)) = be.find_non_finite(data.view()?)? {
                let value = data.entry(i, j)?.to_f64();
                return Err(Error::NonFinite { what: "A".into(), row: i.max(j) + 1, col: i.min(j) + 1, value });
            }
            let norm = be.norm(Norm::One, data.view()?)?.to_f64();
            be.fill_strict_triangle(Uplo::Upper, T::ZERO, data.view_mut()?)?;
            norm
        });
        Ok((data, norm))
    }

    /// `A + α·I`, in the same storage.
    pub fn shifted(&self, alpha: f64) -> Result<Self> {
        let mut data = self.data.try_clone()?;
        // The diagonal as 1 × size rows with stride ld + 1: one in full
        // storage, one in each triangle of the RFP array.
        let diagonal = |offset: usize, size: usize, ld: usize| Block { offset, rows: 1, cols: size, ld: ld + 1 };
        let blocks = match self.storage {
            SymStorage::Full => vec![diagonal(0, self.n, self.n)],
            SymStorage::Rfp => {
                let p = self.rfp_layout().pieces();
                vec![diagonal(p.t1.offset, p.n1, p.t1.full.ld), diagonal(p.t2.offset, p.n2, p.t2.full.ld)]
            }
        };
        with_backend!(self.device(), be => {
            let mut shift = be.alloc::<T>(self.n.max(1))?;
            be.fill(ViewMut::dense(&mut shift, 1, self.n.max(1))?, T::from_f64(alpha))?;
            for b in blocks.into_iter().filter(|b| b.cols > 0) {
                let s = View::new(&shift, Block::dense(1, b.cols))?;
                be.axpy(T::ONE, s, data.block_mut(b)?)?;
            }
            Ok::<_, Error>(())
        })?;
        Ok(Sym { n: self.n, data, storage: self.storage })
    }

    /// `self · b` for a dense `b` with `n` rows.
    pub fn matmul(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        let a = self.to_dense()?;
        with_backend!(self.device(), be => {
            if a.cols() != b.rows() {
                return Err(Error::dims("Sym::matmul", format!("A is {0}×{0} but B is {1}×{2}", self.n, b.rows(), b.cols())));
            }
            a.check_with(b)?;
            a.new_with(be, self.n, b.cols(), |c| be.gemm(T::ONE, a.view()?, Op::NoTrans, b.view()?, Op::NoTrans, T::ZERO, c))
        })
    }
}

/// `None` if the square `a` is exactly symmetric, else the first pair
/// `(i, j)` (0-based, `i > j`, column by column) with `aᵢⱼ ≠ aⱼᵢ`. The test
/// is `max|A − Aᵀ| = 0` on the device (exact: the difference of two finite
/// floats is zero only when they are equal); the pair is looked for on the
/// host only when there is one.
pub(crate) fn asymmetry<T: Scalar>(a: &Matrix<T>) -> Result<Option<(usize, usize)>> {
    let n = a.rows();
    let difference = with_backend!(a.device(), be => a.new_with(be, n, n, |d| {
        let v = a.view()?;
        be.geam(T::ONE, v, Op::NoTrans, -T::ONE, v, Op::Trans, d)
    }))?;
    if difference.norm(Norm::Max)? == T::ZERO {
        return Ok(None);
    }
    let host = a.to_host()?;
    Ok((0..n).flat_map(|j| (j + 1..n).map(move |i| (i, j))).find(|&(i, j)| host[i + j * n] != host[j + i * n]))
}

/// `(row, col)` of `A` stored at position `k` of the RFP array.
fn position_in_rfp(rfp: Rfp, k: usize) -> Option<(usize, usize)> {
    (0..rfp.n).flat_map(|j| (j..rfp.n).map(move |i| (i, j))).find(|&(i, j)| rfp.index(i, j) == Some(k))
}
