//! `A·D²·Aᵀ`: the scaled Gram matrix of weighted least squares, computed
//! from one triangle, in full or RFP storage.

use super::device::Resident;
use super::validate::{self, Weighting};
use super::{Matrix, Sym, SymStorage, packed_layout};
use crate::backend::{Backend, Block, BufferMut, Compute, Op, View, ViewMut};
use crate::layout::{Rfp, Uplo};
use crate::{Error, Result, Scalar};

impl<T: Scalar> Matrix<T> {
    /// `A·diag(d)²·Aᵀ` for this `m × n` matrix `A` and `n` weights `d` (a row
    /// or a column), in full storage. Only the lower triangle is computed
    /// and written (the strict upper part of the new array is zero); no
    /// scaled copy of `A` is made: on the GPU the extra memory is one or two
    /// workspaces of a few percent of `A` (see
    /// [`GramPlan`](crate::backend::cuda::scaled_gram::GramPlan)).
    /// Each entry is within `γ_{n+3}·(|A|·D²·|A|ᵀ)ᵢⱼ` of the exact one.
    ///
    /// Refused, before any work: `d` not a vector of `n` entries
    /// (`DimensionMismatch`), a negative weight (`NegativeWeight`) or one
    /// whose square overflows (`WeightOverflow`), a NaN or infinity in `d`
    /// or `A` (`NonFinite`, naming the entry).
    pub fn scaled_gram(&self, d: &Matrix<T>) -> Result<Sym<T>> {
        self.scaled_gram_in(d, SymStorage::Full)
    }

    /// [`scaled_gram`](Self::scaled_gram) in RFP storage: `m(m+1)/2`
    /// entries, each piece of the RFP rectangle computed in place.
    pub fn scaled_gram_rfp(&self, d: &Matrix<T>) -> Result<Sym<T>> {
        self.scaled_gram_in(d, SymStorage::Rfp)
    }

    /// [`scaled_gram`](Self::scaled_gram) in the storage asked for.
    pub fn scaled_gram_in(&self, d: &Matrix<T>, storage: SymStorage) -> Result<Sym<T>> {
        self.check_with(d)?;
        // Backends scale by d² in one pass.
        validate::weights("scaled_gram", d, self.cols(), Weighting::Squared)?;
        validate::finite("A", self)?;
        self.scaled_gram_unchecked(d, storage)
    }

    /// The product without the checks on the values (shapes are checked by
    /// the backend).
    pub(crate) fn scaled_gram_unchecked(&self, d: &Matrix<T>, storage: SymStorage) -> Result<Sym<T>> {
        let m = self.rows();
        match storage {
            SymStorage::Full => {
                let compute = self.device().tuning().fp64_products;
                let g = with_backend!(self.device(), be => self.new_with(be, m, m, |c| {
                    match scaled_copy(be, compute, self.view()?, d.view()?)? {
                        Some(w) => {
                            let w = View::dense(&w, m, self.cols())?;
                            be.syrk_in(compute, Uplo::Lower, Op::NoTrans, T::ONE, w, T::ZERO, c)
                        }
                        None => be.scaled_syrk(Uplo::Lower, T::ONE, self.view()?, d.view()?, T::ZERO, c),
                    }
                }))?;
                Sym::from_lower(g)
            }
            SymStorage::Rfp => {
                let rfp = packed_layout(m);
                let g = with_backend!(self.device(), be => {
                    let mut out = be.alloc::<T>(rfp.len())?;
                    let compute = self.device().tuning().fp64_products;
                    scaled_gram_to_rfp_in(be, compute, rfp, self.view()?, d.view()?, &BufferMut::new(&mut out))?;
                    Matrix::from_storage(self.device().clone(), rfp.len(), 1, be.wrap(out))
                });
                Sym::from_rfp_array(m, g)
            }
        }
    }
}

/// Fills the RFP array `arf` (`n(n+1)/2` entries from its start, any of the
/// four layouts of `rfp`) with `A·diag(d)²·Aᵀ` for `A` of `n × k` and `k`
/// weights `d`, piece by piece: the two diagonal blocks with
/// [`Backend::scaled_syrk`] on their stored triangles, the rectangle with
/// [`Backend::scaled_gemm`] (`A21` or its transpose as the layout keeps it).
/// Every entry of the array is written; nothing is read from it. The values
/// of `A` and `d` are not checked here (see [`Matrix::scaled_gram_in`]).
pub fn scaled_gram_to_rfp<B: Backend, T: Scalar>(
    be: &B,
    rfp: Rfp,
    a: View<'_, B, T>,
    d: View<'_, B, T>,
    arf: &BufferMut<'_, B, T>,
) -> Result<()> {
    scaled_gram_to_rfp_in(be, Compute::Native, rfp, a, d, arf)
}

/// `A·diag(d)`, where `compute` emulates FP64 products: the operand that
/// the integer products take as it is (they scale each row by its own power
/// of two, so `D` is applied first); `None` for native products, which
/// scale a block at a time and need no copy.
fn scaled_copy<B: Backend, T: Scalar>(
    be: &B,
    compute: Compute,
    a: View<'_, B, T>,
    d: View<'_, B, T>,
) -> Result<Option<B::Buffer<T>>> {
    if !matches!(compute, Compute::Int8 { .. }) || T::NAME != "f64" {
        return Ok(None);
    }
    let (rows, cols) = (a.rows(), a.cols());
    let mut w = be.alloc::<T>(rows * cols)?;
    be.copy(a, ViewMut::dense(&mut w, rows, cols)?)?;
    be.scale_cols(ViewMut::dense(&mut w, rows, cols)?, d)?;
    Ok(Some(w))
}

/// [`scaled_gram_to_rfp`] with the products in `compute`.
fn scaled_gram_to_rfp_in<B: Backend, T: Scalar>(
    be: &B,
    compute: Compute,
    rfp: Rfp,
    a: View<'_, B, T>,
    d: View<'_, B, T>,
    arf: &BufferMut<'_, B, T>,
) -> Result<()> {
    if a.rows() != rfp.n {
        return Err(Error::dims(
            "scaled_gram_to_rfp",
            format!("A has {} rows, the RFP matrix is of order {}", a.rows(), rfp.n),
        ));
    }
    if arf.len() < rfp.len() {
        return Err(Error::dims(
            "scaled_gram_to_rfp",
            format!("the RFP array needs n(n+1)/2 = {} entries, the buffer holds {}", rfp.len(), arf.len()),
        ));
    }
    if rfp.n == 0 {
        return Ok(());
    }
    let p = rfp.pieces();
    let (n1, n2, k) = (p.n1, p.n2, a.cols());
    let block = |offset: usize, rows: usize, cols: usize, ld: usize| Block { offset, rows, cols, ld };
    let scaled = scaled_copy(be, compute, a, d)?;
    let a = match &scaled {
        Some(w) => View::dense(w, rfp.n, k)?,
        None => a,
    };
    let a1 = a.sub(0, 0, n1, k)?;
    let a2 = a.sub(n1, 0, n2, k)?;
    let (one, zero) = (T::ONE, T::ZERO);
    // The triangles and the rectangle, of A·D²·Aᵀ or, from the scaled copy,
    // of W·Wᵀ.
    let syrk = |uplo, x, c| match scaled {
        Some(_) => be.syrk_in(compute, uplo, Op::NoTrans, one, x, zero, c),
        None => be.scaled_syrk(uplo, one, x, d, zero, c),
    };
    let gemm = |x, y, c| match scaled {
        Some(_) => be.gemm_in(compute, one, x, Op::NoTrans, y, Op::Trans, zero, c),
        None => be.scaled_gemm(one, x, y, d, zero, c),
    };
    // The pieces are disjoint blocks of the one RFP array.
    let t1 = block(p.t1.offset, p.t1.full.rows, p.t1.full.cols, p.t1.full.ld);
    syrk(p.t1.uplo, a1, arf.view_mut(t1)?)?;
    if n2 > 0 {
        let t2 = block(p.t2.offset, p.t2.full.rows, p.t2.full.cols, p.t2.full.ld);
        syrk(p.t2.uplo, a2, arf.view_mut(t2)?)?;
        let s = block(p.s.offset, p.s.full.rows, p.s.full.cols, p.s.full.ld);
        let s_is_a21 = (rfp.uplo == Uplo::Lower) != p.s.transposed;
        let (x, y) = if s_is_a21 { (a2, a1) } else { (a1, a2) };
        gemm(x, y, arf.view_mut(s)?)?;
    }
    Ok(())
}
