//! `Cholesky<T>`: `A = L·Lᵀ` for a symmetric positive definite `A`, in full
//! or in RFP storage (half the memory), whichever `A` was in.

use super::device::Resident;
use super::{Matrix, Sym, SymStorage, Tri};
use crate::backend::{Backend, Block, BufferMut, Norm, View, ViewMut};
use crate::factor::cholesky::{self, CholeskyParams};
use crate::layout::{Rfp, Uplo};
use crate::{Error, Result, Scalar};

/// The Cholesky factor `L` of an `n × n` matrix.
#[derive(Clone, Debug)]
pub struct Cholesky<T: Scalar> {
    n: usize,
    /// `n × n` with `L` in the lower triangle, or the RFP array of `L`.
    data: Matrix<T>,
    rfp: Option<Rfp>,
}

impl<T: Scalar> Sym<T> {
    /// The Cholesky factorization, in this matrix's storage; or
    /// `NotPositiveDefinite` naming the first column (1-based) whose pivot is
    /// not positive. A NaN or infinity among `A`'s stored entries is refused
    /// before any work. Waits for the result.
    pub fn cholesky(&self) -> Result<Cholesky<T>> {
        let update = self.device().tuning().fp64_updates(self.n());
        self.cholesky_with(CholeskyParams { update, ..CholeskyParams::for_order(self.n()) })
    }

    /// [`cholesky`](Self::cholesky) with explicit tuning.
    pub fn cholesky_with(&self, params: CholeskyParams) -> Result<Cholesky<T>> {
        let rfp = (self.storage() == SymStorage::Rfp).then(|| self.rfp_layout());
        Cholesky::factor_owned(self.n(), self.factorable_copy()?, rfp, params)
    }

    /// `‖A‖₁` (which is `‖A‖∞`) of the symmetric matrix, from its stored
    /// triangle, as LAPACK's `dlansy` and `dlansf`: the `a_norm` that
    /// [`Cholesky::rcond`] takes. Full storage is summed on the device in an
    /// `n × n` scratch array; RFP storage is read back and summed on the
    /// host, so that packing's half of the memory is kept. Waits.
    pub fn one_norm(&self) -> Result<f64> {
        match self.storage() {
            SymStorage::Full => Ok(self.to_dense()?.norm(Norm::One)?.to_f64()),
            SymStorage::Rfp => {
                let rfp = self.rfp_layout();
                let stored = self.stored().to_host()?;
                let mut sums = vec![0.0f64; self.n()];
                for j in 0..self.n() {
                    for i in j..self.n() {
                        let v = rfp.index(i, j).map_or(0.0, |k| stored[k].to_f64().abs());
                        sums[j] += v;
                        if i != j {
                            sums[i] += v;
                        }
                    }
                }
                // NaN propagates, as the device norms do.
                Ok(sums.into_iter().fold(0.0, |m, s| if s.is_nan() || m.is_nan() { f64::NAN } else { m.max(s) }))
            }
        }
    }
}

impl<T: Scalar> Cholesky<T> {
    /// Factors `data` in place: `n × n` holding `A` in its lower triangle
    /// and zeros above it, or `A`'s RFP array when `rfp` is given, its
    /// entries finite ([`Sym::factorable_copy`]).
    pub(crate) fn factor_owned(
        n: usize,
        mut data: Matrix<T>,
        rfp: Option<Rfp>,
        params: CholeskyParams,
    ) -> Result<Self> {
        with_backend!(data.device().clone(), be => {
            let mut info = be.upload(&[0i32])?;
            let mut status = ViewMut::dense(&mut info, 1, 1)?;
            let a = BufferMut::new(data.buffer_mut(be)?);
            match rfp {
                Some(rfp) => cholesky::factor_rfp_in_place(be, rfp, &a, 0, &mut status, params)?,
                None => cholesky::factor_in_place(be, Uplo::Lower, &a, Block::dense(n, n), &mut status, 0, params)?,
            }
            let mut first = [0i32];
            be.download(&info, &mut first)?;
            if first[0] != 0 {
                return Err(Error::NotPositiveDefinite { column: first[0] as usize });
            }
        });
        Ok(Cholesky { n, data, rfp })
    }

    pub fn n(&self) -> usize {
        self.n
    }

    /// Whether the factor is in RFP storage.
    pub fn is_packed(&self) -> bool {
        self.rfp.is_some()
    }

    /// The factor as it lies on the device: `n × n` (lower triangle), or the
    /// RFP array as one column.
    pub fn stored(&self) -> &Matrix<T> {
        &self.data
    }

    /// `L` as a triangle of a full `n × n` array (unpacked if packed).
    pub fn factor(&self) -> Result<Tri<T>> {
        Tri::lower(self.full()?)
    }

    fn full(&self) -> Result<Matrix<T>> {
        let Some(rfp) = self.rfp else { return self.data.try_clone() };
        with_backend!(self.data.device(), be => {
            self.data.new_with(be, self.n, self.n, |a| be.rfp_to_full(self.data.view()?, rfp, a))
        })
    }

    /// `X` with `A·X = B`, for `B` of `n` rows (any number of columns).
    pub fn solve(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        self.data.check_with(b)?;
        if b.rows() != self.n {
            return Err(Error::dims(
                "Cholesky::solve",
                format!("A is {0}×{0} but B is {1}×{2}", self.n, b.rows(), b.cols()),
            ));
        }
        let mut x = b.try_clone()?;
        with_backend!(self.data.device(), be => self.solve_on(be, x.view_mut()?))?;
        Ok(x)
    }

    /// `X := A⁻¹·X` on `be`, the factor's own backend, without checks: what
    /// `solve` enqueues.
    pub(crate) fn solve_on<B: Resident>(&self, be: &B, x: ViewMut<'_, B, T>) -> Result<()> {
        let l = &self.data;
        match self.rfp {
            Some(rfp) => cholesky::solve_rfp_in_place(be, rfp, l.view()?, 0, x),
            None => cholesky::solve_in_place(be, Uplo::Lower, l.view()?, x),
        }
    }

    /// [`solve_on`](Self::solve_on) for FP64 columns whatever the factor's
    /// precision (an FP32 factor's entries widened as they are read): the
    /// preconditioner of refinement, which factors in full storage.
    pub(crate) fn solve_wide_on<B: Resident>(&self, be: &B, x: ViewMut<'_, B, f64>) -> Result<()> {
        match self.rfp {
            Some(_) => Err(Error::InvalidArgument("a factor in RFP storage solves in its own precision".into())),
            None => cholesky::solve_wide_in_place(be, Uplo::Lower, self.data.view()?, x),
        }
    }

    /// An estimate of the reciprocal condition number in the 1-norm,
    /// `1/(‖A‖₁·‖A⁻¹‖₁)`, as LAPACK's `dpocon`: `a_norm` is `‖A‖₁` of the
    /// factored matrix ([`Sym::one_norm`]), `‖A⁻¹‖₁` comes from a few solves
    /// with the factor in its storage. 0 when `A` is singular to working
    /// precision in the sense that a solve overflows; waits.
    pub fn rcond(&self, a_norm: f64) -> Result<f64> {
        let l = &self.data;
        with_backend!(l.device(), be => match self.rfp {
            Some(rfp) => cholesky::rcond_rfp(be, rfp, l.view()?, 0, a_norm),
            None => cholesky::rcond(be, Uplo::Lower, l.view()?, a_norm),
        })
    }

    /// `log det A = 2·Σ log Lᵢᵢ` (waits for the result).
    pub fn log_det(&self) -> Result<f64> {
        // The diagonal of a square block at `offset`: a 1 × size row with stride ld + 1.
        let diagonal = |offset: usize, size: usize, ld: usize| Block { offset, rows: 1, cols: size, ld: ld + 1 };
        let blocks = match self.rfp {
            None => vec![diagonal(0, self.n, self.n)],
            Some(rfp) => {
                let p = rfp.pieces();
                vec![diagonal(p.t1.offset, p.n1, p.t1.full.ld), diagonal(p.t2.offset, p.n2, p.t2.full.ld)]
            }
        };
        let l = &self.data;
        let mut sum = 0.0;
        for block in blocks.into_iter().filter(|b| b.cols > 0) {
            let host = with_backend!(l.device(), be => {
                let mut d = be.alloc::<T>(block.cols)?;
                be.copy(View::new(l.view_on(be)?.buffer(), block)?, ViewMut::dense(&mut d, 1, block.cols)?)?;
                let mut host = vec![T::ZERO; block.cols];
                be.download(&d, &mut host)?;
                host
            });
            sum += host.iter().map(|x| x.to_f64().ln()).sum::<f64>();
        }
        Ok(2.0 * sum)
    }

    /// `L·Lᵀ`, for checking the factorization.
    pub fn reconstruct(&self) -> Result<Matrix<T>> {
        let l = self.full()?;
        let n = self.n;
        with_backend!(l.device(), be => l.new_with(be, n, n, |out| cholesky::reconstruct(be, Uplo::Lower, l.view()?, out)))
    }
}
