//! `Qr<T>`: `A = Q·R` by Householder reflectors, for any `m × n` matrix.

use super::Matrix;
use super::validate;
use crate::backend::{Backend, Block, BufferMut, Diag, Op, Side};
use crate::factor::qr::{self, QrParams};
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// The QR factorization of an `m × n` matrix `A`: `Q` orthogonal (`m × m`,
/// a product of `k = min(m, n)` reflectors, never formed unless asked for)
/// and `R` upper trapezoidal (`k × n`).
#[derive(Clone, Debug)]
pub struct Qr<T: Scalar> {
    /// `R` and the reflectors, as LAPACK's `dgeqrt` leaves them.
    data: Matrix<T>,
    /// The panels' `T` factors, `min(nb, k) × k`.
    t: Matrix<T>,
}

impl<T: Scalar> Matrix<T> {
    /// The QR factorization (blocked Householder). A NaN or infinity in `A`
    /// is refused before any work.
    pub fn qr(&self) -> Result<Qr<T>> {
        self.qr_with(QrParams::default())
    }

    /// The solution of least 2-norm of the underdetermined system `A·X = B`
    /// for `A` of `m × n` with `m ≤ n` and full row rank:
    /// [`Qr::solve_transposed`] on the QR factorization of `Aᵀ`. Rows
    /// dependent to working precision (`κ₁(R)·u ≥ 10⁻²`, as
    /// [`lstsq`](crate::lstsq) judges designs) are
    /// [`Error::RankDeficient`], never a meaningless answer.
    pub fn min_norm_solve(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        self.check_with(b)?;
        system("min_norm_solve", "A", self.shape(), Shape::Wide, b)?;
        let f = self.transpose()?.qr()?;
        f.full_rank(Qr::<T>::RANK_TOLERANCE, "A")?;
        f.solve_transposed(b)
    }

    /// [`qr`](Self::qr) with explicit tuning.
    pub fn qr_with(&self, params: QrParams) -> Result<Qr<T>> {
        validate::finite("A", self)?;
        let (m, n) = self.shape();
        let k = m.min(n);
        let nb = params.block_size.max(1).min(k.max(1));
        let mut data = self.try_clone()?;
        let mut t = self.device().zeros::<T>(nb.min(k), k)?;
        with_backend!(self.device(), be => {
            let a = BufferMut::new(data.buffer_mut(be)?);
            qr::factor_in_place(be, &a, Block::dense(m, n), t.view_mut()?, params)
        })?;
        Ok(Qr { data, t })
    }
}

impl<T: Scalar> Qr<T> {
    /// The factorization from its factored array and `T` factors, as
    /// [`qr::factor_in_place`] and [`qr::factor_pivoted_in_place`] leave
    /// them.
    pub(super) fn from_parts(data: Matrix<T>, t: Matrix<T>) -> Qr<T> {
        Qr { data, t }
    }

    /// `κ₁(R)·u` from which a factor is taken as rank deficient: that of
    /// [`LstsqParams`](crate::solve::lstsq::LstsqParams)' default.
    pub const RANK_TOLERANCE: f64 = 1e-2;

    /// Rows of `A`.
    pub fn m(&self) -> usize {
        self.data.rows()
    }

    /// Columns of `A`.
    pub fn n(&self) -> usize {
        self.data.cols()
    }

    /// The factored array (`R` on and above the diagonal, the reflectors
    /// below) and the `T` factors, as they lie on the device.
    pub fn stored(&self) -> (&Matrix<T>, &Matrix<T>) {
        (&self.data, &self.t)
    }

    /// `R`: the `min(m, n) × n` upper trapezoid.
    pub fn r(&self) -> Result<Matrix<T>> {
        let (k, n) = (self.m().min(self.n()), self.n());
        with_backend!(self.data.device(), be => self.data.new_with(be, k, n, |mut out| {
            be.copy(self.data.view()?.sub(0, 0, k, n)?, out.rb_mut())?;
            be.fill_strict_triangle(Uplo::Lower, T::ZERO, out)
        }))
    }

    /// The first `min(m, n)` columns of `Q` (`m × min(m, n)`): orthonormal,
    /// spanning the range of `A` when `A` has full column rank.
    pub fn q(&self) -> Result<Matrix<T>> {
        let (m, k) = (self.m(), self.m().min(self.n()));
        with_backend!(self.data.device(), be => self.data.new_with(be, m, k, |out| {
            qr::thin_q(be, self.data.view()?, self.t.view()?, out)
        }))
    }

    /// `Qᵀ·B` for `B` of `m` rows.
    pub fn apply_qt(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        self.apply(b, Op::Trans)
    }

    /// `Q·B` for `B` of `m` rows.
    pub fn apply_q(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        self.apply(b, Op::NoTrans)
    }

    fn apply(&self, b: &Matrix<T>, op: Op) -> Result<Matrix<T>> {
        self.data.check_with(b)?;
        if b.rows() != self.m() {
            return Err(Error::dims("Qr::apply", format!("Q is {0}×{0} but B has {1} rows", self.m(), b.rows())));
        }
        let mut out = b.try_clone()?;
        with_backend!(self.data.device(), be => qr::apply_q(be, self.data.view()?, self.t.view()?, op, out.view_mut()?))?;
        Ok(out)
    }

    /// `X` (`n × nrhs`) minimizing `‖A·X − B‖_F`, for `A` of full column
    /// rank with `m ≥ n`. An exactly zero diagonal entry of `R` is
    /// [`Error::Singular`]; for ill-conditioned problems use
    /// [`lstsq`](crate::lstsq), which refines the solution and detects rank
    /// deficiency.
    pub fn solve(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        let (m, n) = (self.m(), self.n());
        self.data.check_with(b)?;
        system("Qr::solve", "A", (m, n), Shape::Tall, b)?;
        self.nonsingular()?;
        let mut qtb = b.try_clone()?;
        let nrhs = b.cols();
        with_backend!(self.data.device(), be => {
            qr::solve_in_place(be, self.data.view()?, self.t.view()?, qtb.view_mut()?)?;
            qtb.new_with(be, n, nrhs, |x| be.copy(qtb.view()?.sub(0, 0, n, nrhs)?, x))
        })
    }

    /// For the factored `F` of `n × m` with `n ≥ m` (so `A = Fᵀ` is wide),
    /// the solution of least 2-norm of `Fᵀ·X = B`: `X = Q·[R⁻ᵀ·B; 0]`,
    /// backward stable as LAPACK's `dgels` with `TRANS = 'T'`. `B` has `m`
    /// rows. An exactly zero diagonal entry of `R` (dependent rows of `A`)
    /// is [`Error::Singular`].
    pub fn solve_transposed(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        let (n, m) = (self.m(), self.n());
        self.data.check_with(b)?;
        system("Qr::solve_transposed", "Aᵀ", (m, n), Shape::Wide, b)?;
        self.nonsingular()?;
        let nrhs = b.cols();
        let mut x = self.data.device().zeros::<T>(n, nrhs)?;
        with_backend!(self.data.device(), be => {
            let mut xv = x.view_mut()?;
            be.copy(b.view()?, xv.rb_mut().sub_mut(0, 0, m, nrhs)?)?;
            let r = self.data.view()?.sub(0, 0, m, m)?;
            be.trsm(Side::Left, Uplo::Upper, Op::Trans, Diag::NonUnit, T::ONE, r, xv.rb_mut().sub_mut(0, 0, m, nrhs)?)?;
            qr::apply_q(be, self.data.view()?, self.t.view()?, Op::NoTrans, xv)
        })?;
        Ok(x)
    }

    /// [`Error::Singular`] at the first exactly zero diagonal entry of `R`.
    fn nonsingular(&self) -> Result<()> {
        match self.r_diagonal()?.iter().position(|d| *d == T::ZERO) {
            Some(j) => Err(Error::Singular { pivot: j + 1 }),
            None => Ok(()),
        }
    }

    /// The condition estimate of `R` ([`condition_estimate`](Self::condition_estimate)),
    /// or [`Error::RankDeficient`] naming `what` when it is at least
    /// `tolerance / u`.
    pub fn full_rank(&self, tolerance: f64, what: &str) -> Result<f64> {
        let condition = self.condition_estimate()?;
        if condition * T::unit_roundoff() >= tolerance {
            return Err(Error::RankDeficient { what: what.into(), column: None, condition });
        }
        Ok(condition)
    }

    /// `Q·R`, for checking the factorization.
    pub fn reconstruct(&self) -> Result<Matrix<T>> {
        let (m, n) = (self.m(), self.n());
        with_backend!(self.data.device(), be => self.data.new_with(be, m, n, |out| {
            qr::reconstruct(be, self.data.view()?, self.t.view()?, out)
        }))
    }

    /// The diagonal of `R` (waits for it).
    pub fn r_diagonal(&self) -> Result<Vec<T>> {
        with_backend!(self.data.device(), be => qr::r_diagonal(be, self.data.view()?))
    }

    /// An estimate of the 1-norm condition number of the leading square
    /// block of `R` (for `m ≥ n`, `κ₁(R)`, which is within a factor `n` of
    /// `A`'s 2-norm condition number); `∞` if `R` is singular.
    pub fn condition_estimate(&self) -> Result<f64> {
        with_backend!(self.data.device(), be => qr::condition_estimate(be, self.data.view()?))
    }
}

/// Which systems a solve takes: at least as many rows as columns, or at
/// most.
enum Shape {
    Tall,
    Wide,
}

/// The `m × n` system named `name` of `op` has the shape it needs, and `B`
/// its `m` rows.
fn system<T: Scalar>(op: &'static str, name: &str, (m, n): (usize, usize), shape: Shape, b: &Matrix<T>) -> Result<()> {
    match shape {
        Shape::Tall if m < n => Err(Error::dims(op, format!("{name} is {m}×{n}: fewer rows than columns"))),
        Shape::Wide if m > n => Err(Error::dims(op, format!("{name} is {m}×{n}: more rows than columns"))),
        _ if b.rows() != m => Err(Error::dims(op, format!("{name} is {m}×{n} but B has {} rows", b.rows()))),
        _ => Ok(()),
    }
}
