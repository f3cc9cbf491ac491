//! `PivotedQr<T>`: `A·P = Q·R` with column pivoting, the numerical rank it
//! reveals, and the basic solution of rank-deficient least squares.

use super::{Matrix, Qr, validate};
use crate::backend::{Backend, Block, BufferMut, Diag, Op, Side};
use crate::factor::qr::{self, QrParams};
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// The QR factorization with column pivoting of an `m × n` matrix `A`:
/// `A·P = Q·R`, `|R(j, j)|` non-increasing.
#[derive(Clone, Debug)]
pub struct PivotedQr<T: Scalar> {
    qr: Qr<T>,
    /// Column `j` of `A·P` is column `perm[j]` of `A`.
    perm: Vec<usize>,
}

impl<T: Scalar> Matrix<T> {
    /// QR with column pivoting (LAPACK's `dgeqp3`): the column of largest
    /// remaining norm first at each step. A NaN or infinity in `A` is
    /// refused before any work. Column by column, with a wait for each: for
    /// rank-revealing, not for speed ([`qr`](Self::qr) is the fast one).
    pub fn qr_pivoted(&self) -> Result<PivotedQr<T>> {
        validate::finite("A", self)?;
        let (m, n) = self.shape();
        let k = m.min(n);
        let nb = QrParams::default().block_size.min(k.max(1));
        let mut data = self.try_clone()?;
        let mut t = self.device().zeros::<T>(nb.min(k), k)?;
        let perm = with_backend!(self.device(), be => {
            let a = BufferMut::new(data.buffer_mut(be)?);
            qr::factor_pivoted_in_place(be, &a, Block::dense(m, n), t.view_mut()?, nb)
        })?;
        Ok(PivotedQr { qr: Qr::from_parts(data, t), perm })
    }
}

impl<T: Scalar> PivotedQr<T> {
    /// `Q` and `R` of `A·P`.
    pub fn qr(&self) -> &Qr<T> {
        &self.qr
    }

    /// `P` as a list: column `j` of `A·P` is column `permutation()[j]` of
    /// `A`.
    pub fn permutation(&self) -> &[usize] {
        &self.perm
    }

    /// The numerical rank: how many leading `|R(j, j)|` exceed
    /// `tolerance·|R(0, 0)|`; by default `tolerance = max(m, n)·u`, the
    /// threshold NumPy's `matrix_rank` puts on singular values. Zero for a
    /// zero or empty matrix.
    pub fn rank(&self, tolerance: Option<f64>) -> Result<usize> {
        let tolerance = tolerance.unwrap_or(self.qr.m().max(self.qr.n()) as f64 * T::unit_roundoff());
        if !(tolerance.is_finite() && tolerance >= 0.0) {
            return Err(Error::InvalidArgument(format!(
                "rank tolerance {tolerance} is not a finite non-negative number"
            )));
        }
        let d: Vec<f64> = self.qr.r_diagonal()?.iter().map(|x| x.to_f64().abs()).collect();
        let Some(&first) = d.first() else { return Ok(0) };
        Ok(d.iter().take_while(|&&x| x > tolerance * first && x > 0.0).count())
    }

    /// The basic solution of `min ‖A·X − B‖_F` (LAPACK's `xGELSY` before its
    /// complete orthogonal step) for the numerical rank `r` of
    /// [`rank`](Self::rank): `X(P(0..r), :) = R₁₁⁻¹·(Qᵀ·B)(0..r, :)` and
    /// zero in the other `n − r` rows. Its residual is the least; its norm
    /// is not when `r < n` (the least-norm solution of a full-row-rank wide
    /// system is [`Matrix::min_norm_solve`]). Returns `X` and `r`.
    pub fn solve(&self, b: &Matrix<T>) -> Result<(Matrix<T>, usize)> {
        self.solve_with(b, None)
    }

    /// [`solve`](Self::solve) with the rank judged at `tolerance` (see
    /// [`rank`](Self::rank)).
    pub fn solve_with(&self, b: &Matrix<T>, tolerance: Option<f64>) -> Result<(Matrix<T>, usize)> {
        let (m, n) = (self.qr.m(), self.qr.n());
        let (data, t) = self.qr.stored();
        data.check_with(b)?;
        if b.rows() != m {
            return Err(Error::dims("PivotedQr::solve", format!("A is {m}×{n} but B has {} rows", b.rows())));
        }
        let r = self.rank(tolerance)?;
        let nrhs = b.cols();
        let mut qtb = b.try_clone()?;
        with_backend!(data.device(), be => {
            let mut y = qtb.view_mut()?;
            qr::apply_q(be, data.view()?, t.view()?, Op::Trans, y.rb_mut())?;
            let r11 = data.view()?.sub(0, 0, r, r)?;
            be.trsm(Side::Left, Uplo::Upper, Op::NoTrans, Diag::NonUnit, T::ONE, r11, y.sub_mut(0, 0, r, nrhs)?)
        })?;
        // Rows 0..r of Qᵀ·B go to rows P(0..r) of X.
        let y = qtb.to_host()?;
        let mut x = vec![T::ZERO; n * nrhs];
        for c in 0..nrhs {
            for (i, &p) in self.perm[..r].iter().enumerate() {
                x[p + c * n] = y[i + c * m];
            }
        }
        Ok((data.device().from_col_major(n, nrhs, &x)?, r))
    }
}
