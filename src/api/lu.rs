//! `Lu<T>`: `P·A = L·U` for a square `A`, with solves, the determinant and
//! a condition estimate; the inverse; and Gauss-Jordan elimination (the
//! reduced row echelon form, and solves through `[A | B] → [I | X]`).
//!
//! A matrix whose largest entry is beyond `√Ω` or below `√ω` (see
//! [`equilibrate::in_range`]) is equilibrated by powers of two first —
//! rows and columns for LU, one factor for the whole matrix for the RREF —
//! so that what is representable comes out right; what is not (a solution
//! or determinant beyond the range of the precision) is an error, never an
//! infinity or NaN returned as an answer.

use super::device::{Resident, Storage};
use super::{Matrix, validate};
use crate::backend::{Backend, Block, BufferMut, Norm, Op, Pivoting, View, ViewMut};
use crate::factor::equilibrate::{self, Scaling};
use crate::factor::lu::{self, Determinant, LuParams};
use crate::{Error, Result, Scalar};

/// The LU factorization with partial pivoting of an `n × n` matrix, of
/// the equilibrated `A_s = diag(2^r)·A·diag(2^c)` when `A` needed it.
pub struct Lu<T: Scalar> {
    n: usize,
    /// `L` (unit, strictly below the diagonal) and `U` in one `n × n` array.
    data: Matrix<T>,
    /// The `n` pivots, 1-based as LAPACK's `ipiv`, on the device.
    ipiv: Storage<i32>,
    /// The rows of `P·A` as one permutation ([`lu::permutation`]), on the
    /// device, for the solves; `None` without interchanges.
    rows: Option<Storage<i32>>,
    /// `‖A_s‖₁`, for the condition estimate.
    a_norm: f64,
    /// The exponents `r` and `c`, when `A` was equilibrated.
    scaling: Option<Scaling>,
}

/// The reduced row echelon form of a matrix.
#[derive(Debug)]
pub struct Rref<T: Scalar> {
    /// `R`, the same shape as `A`; its last `rows − rank` rows are zero.
    pub matrix: Matrix<T>,
    /// The numerical rank at the tolerance used.
    pub rank: usize,
    /// The pivot columns, 0-based.
    pub pivots: Vec<usize>,
}

impl<T: Scalar> Matrix<T> {
    /// The LU factorization with partial pivoting, `P·A = L·U`; or
    /// `Singular` naming the first zero pivot (1-based). A NaN or infinity
    /// in `A` is refused before any work. Waits for the result.
    pub fn lu(&self) -> Result<Lu<T>> {
        let update = self.device().tuning().fp64_updates(self.rows().min(self.cols()));
        self.lu_with(Pivoting::Partial, LuParams { update, ..LuParams::for_order(self.rows()) })
    }

    /// LU without row exchanges, `A = L·U`, for matrices known to need none
    /// (diagonally dominant, symmetric positive definite): a pivot of
    /// magnitude `≤ n·ε·max|aᵢⱼ|` is refused as `Singular` rather than
    /// divided by.
    pub fn lu_unpivoted(&self) -> Result<Lu<T>> {
        let n = validate::square("lu", self)?;
        let tol = n as f64 * T::EPSILON.to_f64() * self.norm(Norm::Max)?.to_f64();
        let update = self.device().tuning().fp64_updates(n);
        self.lu_with(Pivoting::None { tol }, LuParams { update, ..LuParams::for_order(n) })
    }

    /// [`lu`](Self::lu) or [`lu_unpivoted`](Self::lu_unpivoted) with explicit
    /// pivoting and tuning. With partial pivoting, a matrix whose largest
    /// entry is outside `[√ω, √Ω]` is equilibrated (`dgeequb`) and its
    /// scaled copy factored; the factor's solves, determinant and
    /// reconstruction undo the scaling exactly. Unpivoted LU's tolerance is
    /// in `A`'s own units, so it factors `A` as it is.
    pub fn lu_with(&self, pivoting: Pivoting, params: LuParams) -> Result<Lu<T>> {
        let n = validate::square("lu", self)?;
        validate::finite("A", self)?;
        let mut data = self.try_clone()?;
        let scaling = if pivoting == Pivoting::Partial && !equilibrate::in_range::<T>(self.norm(Norm::Max)?.to_f64()) {
            Some(with_backend!(self.device(), be => equilibrate::general(be, data.view_mut()?))?)
        } else {
            None
        };
        let a_norm = data.norm(Norm::One)?.to_f64();
        let (ipiv, rows) = with_backend!(self.device(), be => {
            let mut ipiv = be.alloc::<i32>(n)?;
            let mut info = be.upload(&[0i32])?;
            let mut status = ViewMut::dense(&mut info, 1, 1)?;
            {
                let a = BufferMut::new(data.buffer_mut(be)?);
                let p = BufferMut::new(&mut ipiv);
                lu::factor_in_place(be, &a, Block::dense(n, n), &p, Block::dense(n, 1), &mut status, pivoting, params)?;
            }
            let mut first = [0i32];
            be.download(&info, &mut first)?;
            if first[0] != 0 {
                return Err(Error::Singular { pivot: first[0] as usize });
            }
            // Solves then move each row once, where laswp would follow
            // the n interchanges one after another on every call.
            let rows = if pivoting == Pivoting::Partial && n > 0 {
                let mut pivots = vec![0i32; n];
                be.download(&ipiv, &mut pivots)?;
                Some(be.wrap(be.upload(&lu::permutation(&pivots)?)?))
            } else {
                None
            };
            (be.wrap(ipiv), rows)
        });
        Ok(Lu { n, data, ipiv, rows, a_norm, scaling })
    }

    /// `A⁻¹`, through LU: `Singular` if a pivot is zero, `IllConditioned`
    /// if the condition estimate says `A` is singular to working precision
    /// (see [`check_rcond`](super::check_rcond)); `a.lu()?.solve(&I)` gives
    /// the inverse of such a matrix anyway. An inverse with an entry beyond
    /// the range of `T` is [`Error::Overflow`].
    pub fn inverse(&self) -> Result<Matrix<T>> {
        let n = validate::square("inverse", self)?;
        let f = self.lu()?;
        super::check_rcond::<T>(f.rcond()?)?;
        f.solve(&self.device().identity(n)?).map_err(|e| match e {
            Error::Overflow { .. } => Error::Overflow { what: "A⁻¹".into() },
            e => e,
        })
    }

    /// The determinant: 0 for an exactly singular matrix;
    /// [`Error::Overflow`] or [`Error::Underflow`] when it is outside the
    /// normal range of `f64`, where [`determinant`](Self::determinant)
    /// still holds it.
    pub fn det(&self) -> Result<f64> {
        self.determinant()?.value()
    }

    /// The determinant as `mantissa · 2^exponent`, whatever its size
    /// ([`Determinant::ZERO`] for an exactly singular matrix).
    pub fn determinant(&self) -> Result<Determinant> {
        match self.lu() {
            Ok(f) => f.determinant(),
            Err(Error::Singular { .. }) => Ok(Determinant::ZERO),
            Err(e) => Err(e),
        }
    }

    /// The reduced row echelon form by Gauss-Jordan elimination with partial
    /// pivoting; a column whose candidate pivots are all `≤ tol` in magnitude
    /// counts as zero. `None`: MATLAB's `max(m, n)·ε·‖A‖∞`. A negative or NaN
    /// `tol` is [`Error::InvalidArgument`].
    ///
    /// A matrix whose largest entry is outside `[√ω, √Ω]` is first scaled by
    /// one power of two `2^k` (and `tol` with it). A uniform power of two
    /// commutes with every rounding, so `R`, the pivots and the rank are
    /// those that `A` would give without limits on the exponent, and the
    /// default tolerance is relative to `A` whatever its scale; row and
    /// column scalings would change the pivots and what a given `tol` means.
    pub fn rref(&self, tol: Option<f64>) -> Result<Rref<T>> {
        self.storage()?;
        if let Some(t) = tol.filter(|t| t.is_nan() || *t < 0.0) {
            return Err(Error::InvalidArgument(format!("the rref tolerance must be a non-negative number, is {t}")));
        }
        validate::finite("A", self)?;
        let (m, n) = self.shape();
        let amax = self.norm(Norm::Max)?.to_f64();
        let k = if equilibrate::in_range::<T>(amax) { 0 } else { equilibrate::uniform::<T>(amax) };
        let mut matrix = self.try_clone()?;
        if k != 0 {
            with_backend!(self.device(), be => be.scale(T::from_f64(equilibrate::pow2(k)), matrix.view_mut()?))?;
        }
        let tol = match tol {
            Some(t) => equilibrate::ldexp(t, k),
            None => m.max(n) as f64 * T::EPSILON.to_f64() * matrix.norm(Norm::Inf)?.to_f64(),
        };
        let e = with_backend!(self.device(), be => {
            let a = BufferMut::new(matrix.buffer_mut(be)?);
            lu::rref_in_place(be, &a, Block::dense(m, n), n, tol)?
        });
        Ok(Rref { matrix, rank: e.rank, pivots: e.pivots })
    }

    /// `X` with `A·X = B` by Gauss-Jordan elimination of `[A | B]`; exactly
    /// singular `A` gives `Singular` naming the first column without a pivot.
    pub fn solve_gauss_jordan(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        let n = validate::square("solve_gauss_jordan", self)?;
        self.check_with(b)?;
        if b.rows() != n {
            return Err(Error::dims("solve_gauss_jordan", format!("A is {n}×{n} but B is {}×{}", b.rows(), b.cols())));
        }
        validate::finite("A", self)?;
        validate::finite("B", b)?;
        let k = b.cols();
        with_backend!(self.device(), be => {
            let mut ab = be.alloc::<T>(n * (n + k))?;
            be.copy(self.view()?, ViewMut::new(&mut ab, Block { offset: 0, rows: n, cols: n, ld: n.max(1) })?)?;
            be.copy(b.view()?, ViewMut::new(&mut ab, Block { offset: n * n, rows: n, cols: k, ld: n.max(1) })?)?;
            let e = {
                let a = BufferMut::new(&mut ab);
                lu::rref_in_place(be, &a, Block::dense(n, n + k), n, 0.0)?
            };
            if e.rank < n {
                let missing = (0..n).find(|c| !e.pivots.contains(c)).unwrap_or(e.rank);
                return Err(Error::Singular { pivot: missing + 1 });
            }
            let x = View::new(&ab, Block { offset: n * n, rows: n, cols: k, ld: n.max(1) })?;
            self.new_with(be, n, k, |out| be.copy(x, out))
        })
    }
}

impl<T: Scalar> Lu<T> {
    pub fn n(&self) -> usize {
        self.n
    }

    /// `L` and `U` in one array, as LAPACK's `dgetrf` leaves them: of `A`,
    /// or of `diag(2^r)·A·diag(2^c)` when [`scaling`](Self::scaling) says
    /// `A` was equilibrated.
    pub fn factors(&self) -> &Matrix<T> {
        &self.data
    }

    /// The exponents `r` and `c` of the equilibration, if `A` needed one.
    pub fn scaling(&self) -> Option<&Scaling> {
        self.scaling.as_ref()
    }

    /// The pivots, 1-based: row `i` was exchanged with row `ipiv[i]` (waits).
    pub fn pivots(&self) -> Result<Vec<i32>> {
        let mut host = vec![0i32; self.n];
        with_backend!(self.data.device(), be => be.download(ipiv_buffer(be, &self.ipiv)?, &mut host))?;
        Ok(host)
    }

    /// `X` with `A·X = B`, for `B` of `n` rows (any number of columns).
    /// A NaN or infinity in `B` is [`Error::NonFinite`]; an `X` with an
    /// entry beyond the range of `T` is [`Error::Overflow`].
    pub fn solve(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        self.solve_op(b, Op::NoTrans)
    }

    /// `X` with `Aᵀ·X = B`.
    pub fn solve_transposed(&self, b: &Matrix<T>) -> Result<Matrix<T>> {
        self.solve_op(b, Op::Trans)
    }

    fn solve_op(&self, b: &Matrix<T>, op: Op) -> Result<Matrix<T>> {
        self.data.check_with(b)?;
        if b.rows() != self.n {
            return Err(Error::dims("Lu::solve", format!("A is {0}×{0} but B is {1}×{2}", self.n, b.rows(), b.cols())));
        }
        validate::finite("B", b)?;
        let mut x = b.try_clone()?;
        with_backend!(self.data.device(), be => self.solve_on(be, op, x.view_mut()?))?;
        if x.find_non_finite()?.is_some() {
            return Err(Error::Overflow { what: "X".into() });
        }
        Ok(x)
    }

    /// `X := op(A)⁻¹·X` on `be`, the factor's own backend, without checks:
    /// what `solve` enqueues.
    pub(crate) fn solve_on<B: Resident>(&self, be: &B, op: Op, x: ViewMut<'_, B, T>) -> Result<()> {
        self.solve_scaled(be, op, x, |lu, rows, x| lu::solve_in_place(be, lu, rows, op, x))
    }

    /// [`solve_on`](Self::solve_on) for FP64 columns whatever the factor's
    /// precision (an FP32 factor's entries widened as they are read): the
    /// preconditioner of refinement.
    pub(crate) fn solve_wide_on<B: Resident>(&self, be: &B, op: Op, x: ViewMut<'_, B, f64>) -> Result<()> {
        self.solve_scaled(be, op, x, |lu, rows, x| lu::solve_wide_in_place(be, lu, rows, op, x))
    }

    /// The permutation of the rows on `be`, `None` without interchanges.
    fn rows_on<'s, B: Resident>(&'s self, be: &B) -> Result<Option<View<'s, B, i32>>> {
        self.rows.as_ref().map(|r| View::dense(ipiv_buffer(be, r)?, self.n, 1)).transpose()
    }

    /// `solve` between the scalings of the equilibrated factor.
    fn solve_scaled<B: Resident, E: Scalar>(
        &self,
        be: &B,
        op: Op,
        mut x: ViewMut<'_, B, E>,
        solve: impl FnOnce(View<'_, B, T>, Option<View<'_, B, i32>>, ViewMut<'_, B, E>) -> Result<()>,
    ) -> Result<()> {
        // A = 2^−r·A_s·2^−c: A·X = B is A_s·(2^−c·X) = 2^r·B, and
        // Aᵀ·X = B is A_sᵀ·(2^−r·X) = 2^c·B.
        let none = Vec::new();
        let (before, after) = match (&self.scaling, op) {
            (Some(s), Op::NoTrans) => (&s.rows, &s.cols),
            (Some(s), Op::Trans) => (&s.cols, &s.rows),
            (None, _) => (&none, &none),
        };
        equilibrate::scale_rows(be, before, x.rb_mut())?;
        solve(self.data.view()?, self.rows_on(be)?, x.rb_mut())?;
        equilibrate::scale_rows(be, after, x)
    }

    /// The diagonal of `U` on the host.
    fn u_diagonal(&self) -> Result<Vec<f64>> {
        let n = self.n;
        let host = with_backend!(self.data.device(), be => {
            let mut d = be.alloc::<T>(n.max(1))?;
            if n > 0 {
                let diag = View::new(self.data.view_on(be)?.buffer(), Block { offset: 0, rows: 1, cols: n, ld: n + 1 })?;
                be.copy(diag, ViewMut::dense(&mut d, 1, n)?)?;
            }
            let mut host = vec![T::ZERO; n.max(1)];
            be.download(&d, &mut host)?;
            host
        });
        Ok(host.into_iter().take(n).map(Scalar::to_f64).collect())
    }

    /// `det A` as `mantissa · 2^exponent`: the pivots' product without
    /// overflow or underflow, the equilibration's powers of two taken out
    /// exactly (`det A = det A_s · 2^−(Σr + Σc)`).
    pub fn determinant(&self) -> Result<Determinant> {
        let d = self.u_diagonal()?;
        let swaps = self.pivots()?.iter().enumerate().filter(|&(i, &p)| p as usize != i + 1).count();
        let shift = self.scaling.as_ref().map_or(0, |s| -s.exponent_sum());
        Ok(Determinant::from_diagonal(&d, swaps, shift))
    }

    /// `(sign, log|det A|)`: the determinant is `sign·exp(log)`, without the
    /// overflow or underflow of the product itself.
    pub fn sign_log_abs_det(&self) -> Result<(f64, f64)> {
        let d = self.determinant()?;
        Ok((d.sign(), d.ln_abs()))
    }

    /// `log|det A|`.
    pub fn log_abs_det(&self) -> Result<f64> {
        Ok(self.sign_log_abs_det()?.1)
    }

    /// `det A`; [`Error::Overflow`] or [`Error::Underflow`] when it is
    /// outside the normal range of `f64` (see [`determinant`](Self::determinant)).
    pub fn det(&self) -> Result<f64> {
        self.determinant()?.value()
    }

    /// An estimate of the reciprocal condition number in the 1-norm,
    /// `1/(‖A‖₁·‖A⁻¹‖₁)`, as LAPACK's `dgecon` (a few solves; waits): of the
    /// matrix factored, the equilibrated one when `A` was, as LAPACK's
    /// `dgesvx` reports it.
    pub fn rcond(&self) -> Result<f64> {
        with_backend!(self.data.device(), be => lu::rcond(be, self.data.view()?, self.rows_on(be)?, self.a_norm))
    }

    /// `Pᵀ·L·U` (`2^−r·Pᵀ·L·U·2^−c` when equilibrated), which is `A` up to
    /// rounding, for checking the factorization.
    pub fn reconstruct(&self) -> Result<Matrix<T>> {
        let n = self.n;
        let unscale = |s: &[i32]| s.iter().map(|&e| -e).collect::<Vec<_>>();
        with_backend!(self.data.device(), be => {
            let ipiv = View::dense(ipiv_buffer(be, &self.ipiv)?, n, 1)?;
            self.data.new_with(be, n, n, |mut out| {
                lu::reconstruct(be, self.data.view()?, ipiv, out.rb_mut())?;
                match &self.scaling {
                    Some(s) => {
                        equilibrate::scale_rows(be, &unscale(&s.rows), out.rb_mut())?;
                        equilibrate::scale_cols(be, out, &unscale(&s.cols))
                    }
                    None => Ok(()),
                }
            })
        })
    }
}

fn ipiv_buffer<'s, B: Resident>(_: &B, s: &'s Storage<i32>) -> Result<&'s B::Buffer<i32>> {
    B::buffer(s)
}

impl<T: Scalar> std::fmt::Debug for Lu<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lu<{}>({}×{}, {:?})", T::NAME, self.n, self.n, self.data)
    }
}
