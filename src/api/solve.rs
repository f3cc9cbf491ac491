//! `Matrix::solve`: `X` with `A·X = B` for a square `A`, the factorization
//! chosen as MATLAB's `\` does — Cholesky for a symmetric positive definite
//! `A`, LDLᵀ with Bunch–Kaufman pivoting for a symmetric one that Cholesky
//! finds indefinite, LU with partial pivoting for any other — and every
//! answer judged: a condition estimate on every route, the backward error
//! and a bound on the forward error, and a refusal when `A` is singular to
//! working precision.

use std::any::Any;
use std::borrow::Cow;

use super::device::Resident;
use super::sym::asymmetry;
use super::{Cholesky, Ldlt, LdltMethod, Lu, Matrix, Norm, SymStorage, packed_layout, validate};
use crate::backend::{Backend, ViewMut};
use crate::factor::cholesky::CholeskyParams;
use crate::factor::equilibrate;
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// The factorization that solves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Method {
    /// Cholesky when `A` is exactly symmetric, and LDLᵀ with Bunch–Kaufman
    /// pivoting in the same storage when Cholesky finds it not positive
    /// definite ([`Solution::fallback`] says so); LU with partial pivoting
    /// when `A` is not symmetric.
    #[default]
    Auto,
    /// Cholesky: `A` must be symmetric (exactly) and positive definite.
    Cholesky,
    /// `P·A·Pᵀ = L·D·Lᵀ` ([`Sym::ldlt`](crate::Sym::ldlt)): `A` must be
    /// symmetric (exactly), definite or not. `pivoted: true` is pivoted
    /// LDLᵀ ([`SolveOptions::pivoting`]), backward stable for every such
    /// `A`; `pivoted: false` is
    /// [`Sym::ldlt_unpivoted`](crate::Sym::ldlt_unpivoted), for matrices
    /// known to allow it (quasi-definite, diagonally dominant), which
    /// refuses a pivot of magnitude `≤ n·ε·max|aᵢⱼ|` as
    /// [`Error::ZeroPivot`].
    Ldlt { pivoted: bool },
    /// LU with partial pivoting: any nonsingular `A`.
    Lu,
}

/// How [`Matrix::solve_with`] solves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SolveOptions {
    pub method: Method,
    /// Storage of the Cholesky or LDLᵀ factor: `Full`, or `Rfp` in half the
    /// memory. LU needs `Full`; `Auto` on a non-symmetric `A` uses `Full`.
    pub storage: SymStorage,
    /// Return `X` even when `A` is singular to working precision (`rcond`
    /// below the unit roundoff) instead of [`Error::IllConditioned`].
    pub allow_ill_conditioned: bool,
    /// The pivoted LDLᵀ method; `None`, the one that runs best on `A`'s
    /// device ([`LdltMethod::pivoted_for`]).
    pub pivoting: Option<LdltMethod>,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions { method: Method::Auto, storage: SymStorage::Full, allow_ill_conditioned: false, pivoting: None }
    }
}

/// `X` with `A·X = B`, and what is known about it.
#[derive(Debug)]
pub struct Solution<T: Scalar> {
    /// `n × k`, on `A`'s device.
    pub x: Matrix<T>,
    /// The factorization used: `Cholesky`, `Ldlt` or `Lu`, never `Auto`.
    pub method: Method,
    /// Why the method is not the one tried first: the error of that
    /// factorization. With [`Method::Auto`] on a symmetric `A`,
    /// `Some(Error::NotPositiveDefinite { column })` from Cholesky when the
    /// method is then pivoted LDLᵀ; `None` on every other route.
    pub fallback: Option<Error>,
    /// The storage of the factor (`Full` for LU).
    pub storage: SymStorage,
    /// How the LDLᵀ factorization pivoted, when the method is `Ldlt`.
    pub ldlt: Option<LdltMethod>,
    /// Estimate of `1/κ₁(A) = 1/(‖A‖₁·‖A⁻¹‖₁)` from the factor (LAPACK's
    /// `dpocon`, `dsycon` or `dgecon`): a lower bound on `‖A⁻¹‖₁` nearly
    /// always within a factor 3, so `rcond` errs towards better
    /// conditioning by as much.
    pub rcond: f64,
    /// `‖A·X − B‖_F / (‖A‖_F·‖X‖_F + ‖B‖_F)`, computed in `f64` from `A`,
    /// `B` and `X` as they are (Rigal and Gaches 1967): the smallest relative
    /// perturbation of `A` and `B` that `X` solves exactly.
    pub backward_error: f64,
    /// A bound on the normwise relative forward error in the 1-norm,
    /// `‖X − A⁻¹B‖₁ / ‖X‖₁ ≤ ‖A⁻¹‖₁·‖A·X − B‖₁ / ‖X‖₁`, which holds because
    /// `X − A⁻¹B = A⁻¹(A·X − B)`: LAPACK's `FERR` (`dgerfs`) taken normwise,
    /// with `‖A⁻¹‖₁ = 1/(rcond·‖A‖₁)` from the estimate. In terms of the
    /// backward error `η₁` in the 1-norm it is
    /// `κ₁·η₁·(1 + ‖B‖₁/(‖A‖₁‖X‖₁)) ≤ 2·κ₁·η₁`. It is a bound as far as
    /// the estimate of `‖A⁻¹‖₁` is one, and up to the rounding of the
    /// residual, computed in `f64` (unlike `dgerfs`, no `(n+1)·u·‖A‖₁‖X‖₁`
    /// is added for it: that worst case would swamp the bound in f64).
    /// `≥ 1` says that no digit of `X` is assured.
    pub forward_error_bound: f64,
}

impl<T: Scalar> Solution<T> {
    /// The 1-norm condition estimate `κ₁(A) ≈ 1/rcond`.
    pub fn condition_estimate(&self) -> f64 {
        1.0 / self.rcond
    }
}

/// The verdict that `solve`, `inverse` and the command line's `det` give:
/// `Err(IllConditioned)` when the reciprocal condition estimate is below the
/// unit roundoff of `T` (or is NaN), that is, when `A` is singular to
/// working precision; else `rcond`.
pub fn check_rcond<T: Scalar>(rcond: f64) -> Result<f64> {
    let u = T::unit_roundoff();
    if rcond >= u { Ok(rcond) } else { Err(Error::IllConditioned { rcond, unit_roundoff: u, precision: T::NAME }) }
}

/// A factorization chosen for a solve.
enum Factor<T: Scalar> {
    Cholesky(Cholesky<T>),
    // Boxed: D on the host, and more, make it twice the others' size; the
    // pivots and their permutation make the LU's too.
    Ldlt(Box<Ldlt<T>>),
    Lu(Box<Lu<T>>),
}

impl<T: Scalar> Matrix<T> {
    /// `X` with `A·X = B` (`A` is `self`, `n × n`; `B` is `n × k`), with the
    /// default [`SolveOptions`]: Cholesky when `A` is exactly symmetric,
    /// falling back to pivoted LDLᵀ when it is not positive definite; LU
    /// otherwise.
    /// See [`solve_with`](Self::solve_with).
    pub fn solve(&self, b: &Matrix<T>) -> Result<Solution<T>> {
        self.solve_with(b, &SolveOptions::default())
    }

    /// `X` with `A·X = B`, by the method and storage of `options`, with a
    /// condition estimate on every route. Errors: `A` not square or `B`
    /// without `n` rows ([`Error::DimensionMismatch`]); a NaN or infinity in
    /// `A` or `B` ([`Error::NonFinite`]); `Method::Cholesky` or `Method::Ldlt`
    /// for a matrix not exactly symmetric ([`Error::NotSymmetric`], the
    /// first pair); `Method::Cholesky` for one not positive definite
    /// ([`Error::NotPositiveDefinite`]); LU with RFP storage
    /// ([`Error::InvalidArgument`]); an exactly zero LU pivot, or a block of
    /// the LDLᵀ factor's `D` singular to `n·ε·max|aᵢⱼ|`
    /// ([`Error::Singular`]); a tiny pivot of unpivoted LDLᵀ
    /// ([`Error::ZeroPivot`]); `rcond` below the unit roundoff of `T`
    /// ([`Error::IllConditioned`]) unless `options.allow_ill_conditioned`;
    /// an `X` beyond the range of `T` ([`Error::Overflow`]). Waits for the
    /// result.
    ///
    /// A matrix whose largest entry is outside `[√ω, √Ω]` is equilibrated
    /// by powers of two first (see [`equilibrated`](Self::equilibrated)).
    pub fn solve_with(&self, b: &Matrix<T>, options: &SolveOptions) -> Result<Solution<T>> {
        self.check_with(b)?;
        let n = validate::square("solve", self)?;
        if b.rows() != n {
            return Err(Error::dims("solve", format!("A is {n}×{n} but B has {} rows", b.rows())));
        }
        if options.method == Method::Lu && options.storage == SymStorage::Rfp {
            return Err(Error::InvalidArgument(
                "packed (RFP) storage holds symmetric matrices; LU needs full storage".into(),
            ));
        }
        validate::finite("A", self)?;
        validate::finite("B", b)?;
        if !equilibrate::in_range::<T>(self.norm(Norm::Max)?.to_f64()) {
            return self.equilibrated(b, options);
        }
        self.solve_as_is(b, options)
    }

    /// The solve of an equilibrated system, as LAPACK's `dgesvx`:
    /// `A_s = diag(2^r)·A·diag(2^c)` (`dgeequb`; `r = c` from the diagonal,
    /// `dpoequb`, when `A` is exactly symmetric, so that Cholesky and LDLᵀ
    /// still apply), `A_s·Y = 2^r·B`, and `X = 2^c·Y`, all scalings exact.
    /// `rcond` and the backward error are those of the equilibrated system,
    /// which `dgesvx` reports too; the forward-error bound is that of `Y`
    /// divided by `min c / max c`, which bounds the growth of a relative
    /// 1-norm error through `X = 2^c·Y`.
    fn equilibrated(&self, b: &Matrix<T>, options: &SolveOptions) -> Result<Solution<T>> {
        let symmetric = takes_symmetric(self, options.method)?;
        let (mut a_s, mut b_s) = (self.try_clone()?, b.try_clone()?);
        let scaling = with_backend!(self.device(), be => {
            let s = if symmetric {
                equilibrate::symmetric(be, a_s.view_mut()?)?
            } else {
                equilibrate::general(be, a_s.view_mut()?)?
            };
            equilibrate::scale_rows(be, &s.rows, b_s.view_mut()?)?;
            s
        });
        // 2^r·B overflows only where X is within a factor n of overflowing.
        if b_s.find_non_finite()?.is_some() {
            return Err(Error::Overflow { what: "X".into() });
        }
        let mut solution = a_s.solve_as_is(&b_s, options)?;
        with_backend!(self.device(), be => equilibrate::scale_rows(be, &scaling.cols, solution.x.view_mut()?))?;
        if solution.x.find_non_finite()?.is_some() {
            return Err(Error::Overflow { what: "X".into() });
        }
        solution.forward_error_bound /= scaling.col_ratio();
        Ok(solution)
    }

    /// [`solve_with`](Self::solve_with) on `A` as it is, once the operands
    /// are checked.
    fn solve_as_is(&self, b: &Matrix<T>, options: &SolveOptions) -> Result<Solution<T>> {
        let a64 = in_f64(self)?;
        let a_norm = a64.norm(Norm::One)?;

        let symmetric = takes_symmetric(self, options.method)?;
        let mut fallback = None;
        // ‖A‖₁ of the dense A is that of the symmetric matrix: A is exactly symmetric.
        let factor = match (symmetric, options.method) {
            (false, _) => Factor::Lu(Box::new(self.lu()?)),
            (true, Method::Ldlt { pivoted }) => Factor::Ldlt(Box::new(ldlt_of(self, options, pivoted, a_norm)?)),
            (true, _) => match cholesky_of(self, options.storage) {
                Ok(f) => Factor::Cholesky(f),
                Err(e @ Error::NotPositiveDefinite { .. }) if options.method == Method::Auto => {
                    fallback = Some(e);
                    Factor::Ldlt(Box::new(ldlt_of(self, options, true, a_norm)?))
                }
                Err(e) => return Err(e),
            },
        };
        let (method, storage, rcond) = match &factor {
            Factor::Cholesky(f) => (Method::Cholesky, options.storage, f.rcond(a_norm)?),
            Factor::Ldlt(f) => {
                // As LU's exactly zero pivot: D cannot be inverted, allowed or not.
                if let Some(pivot) = f.zero_pivot() {
                    return Err(Error::Singular { pivot });
                }
                (Method::Ldlt { pivoted: f.is_pivoted() }, options.storage, f.rcond()?)
            }
            Factor::Lu(f) => (Method::Lu, SymStorage::Full, f.rcond()?),
        };
        if !options.allow_ill_conditioned {
            check_rcond::<T>(rcond)?;
        }
        let x = match &factor {
            Factor::Cholesky(f) => f.solve(b)?,
            Factor::Ldlt(f) => f.solve(b)?,
            Factor::Lu(f) => f.solve(b)?,
        };
        if x.find_non_finite()?.is_some() {
            return Err(Error::Overflow { what: "X".into() });
        }
        let errors = Errors::of(&a64, a_norm, &*in_f64(b)?, &*in_f64(&x)?, rcond)?;
        let ldlt = match &factor {
            Factor::Ldlt(f) => Some(f.method()),
            _ => None,
        };
        Ok(Solution {
            x,
            method,
            fallback,
            storage,
            ldlt,
            rcond,
            backward_error: errors.backward,
            forward_error_bound: errors.forward_bound,
        })
    }
}

/// The Cholesky factor of the exactly symmetric `a`, from a copy of its
/// lower triangle in `storage` (packed straight from `a` for RFP, so the
/// copy takes half the memory).
fn cholesky_of<T: Scalar>(a: &Matrix<T>, storage: SymStorage) -> Result<Cholesky<T>> {
    let n = a.rows();
    let params = CholeskyParams { update: a.device().tuning().fp64_updates(n), ..CholeskyParams::for_order(n) };
    match storage {
        SymStorage::Full => Cholesky::factor_owned(n, a.try_clone()?, None, params),
        SymStorage::Rfp => {
            let rfp = packed_layout(n);
            let packed = with_backend!(a.device(), be => a.new_with(be, rfp.len(), 1, |arf| be.full_to_rfp(a.view()?, rfp, arf)))?;
            Cholesky::factor_owned(n, packed, Some(rfp), params)
        }
    }
}

/// The LDLᵀ factorization of the exactly symmetric `a` (`a_norm = ‖A‖₁`),
/// pivoted (as `options.pivoting` says) or not, from a copy of its lower
/// triangle in `options.storage`, as
/// [`cholesky_of`] makes it.
fn ldlt_of<T: Scalar>(a: &Matrix<T>, options: &SolveOptions, pivoted: bool, a_norm: f64) -> Result<Ldlt<T>> {
    let n = a.rows();
    let method = match (pivoted, options.pivoting) {
        (false, _) => LdltMethod::Unpivoted,
        (true, Some(m)) if m != LdltMethod::Unpivoted => m,
        (true, _) => LdltMethod::pivoted_for(a.device()),
    };
    let params = method.params(n);
    match options.storage {
        SymStorage::Full => {
            let mut full = a.try_clone()?;
            with_backend!(a.device(), be => be.fill_strict_triangle(Uplo::Upper, T::ZERO, full.view_mut()?))?;
            Ldlt::factor_owned(n, full, None, method, params, a_norm)
        }
        SymStorage::Rfp => {
            let rfp = packed_layout(n);
            let packed = with_backend!(a.device(), be => a.new_with(be, rfp.len(), 1, |arf| be.full_to_rfp(a.view()?, rfp, arf)))?;
            Ldlt::factor_owned(n, packed, Some(rfp), method, params, a_norm)
        }
    }
}

/// Whether `method` factors `a` as symmetric (Cholesky, then LDLᵀ for
/// `Auto`): `Auto` when `a` is exactly symmetric; `Cholesky` and `Ldlt`
/// always, and `NotSymmetric` naming the first pair (1-based) when it is
/// not.
pub(super) fn takes_symmetric<T: Scalar>(a: &Matrix<T>, method: Method) -> Result<bool> {
    match method {
        Method::Lu => Ok(false),
        Method::Auto => Ok(asymmetry(a)?.is_none()),
        Method::Cholesky | Method::Ldlt { .. } => match asymmetry(a)? {
            Some((row, col)) => Err(Error::NotSymmetric { row: row + 1, col: col + 1 }),
            None => Ok(true),
        },
    }
}

/// `m` in `f64`: itself when `T` is `f64`, else a widened copy on its device.
fn in_f64<T: Scalar>(m: &Matrix<T>) -> Result<Cow<'_, Matrix<f64>>> {
    if let Some(m) = (m as &dyn Any).downcast_ref::<Matrix<f64>>() {
        return Ok(Cow::Borrowed(m));
    }
    m.storage()?;
    let (rows, cols) = m.shape();
    let storage = with_backend!(m.device(), be => {
        let mut out = be.alloc::<f64>(rows * cols)?;
        be.cast(m.view()?, ViewMut::dense(&mut out, rows, cols)?)?;
        be.wrap(out)
    });
    Ok(Cow::Owned(Matrix::from_storage(m.device().clone(), rows, cols, storage)))
}

/// The backward error and the forward-error bound of [`Solution`].
struct Errors {
    backward: f64,
    forward_bound: f64,
}

impl Errors {
    /// From `A`, `B` and `X` in `f64`, `‖A‖₁` and the reciprocal condition
    /// estimate.
    fn of(a: &Matrix<f64>, a_one: f64, b: &Matrix<f64>, x: &Matrix<f64>, rcond: f64) -> Result<Errors> {
        let r = a.matmul(x)?.add_scaled(1.0, -1.0, b)?;
        let fro = |m: &Matrix<f64>| m.norm(Norm::Frobenius);
        let one = |m: &Matrix<f64>| m.norm(Norm::One);
        let (r_fro, r_one) = (fro(&r)?, one(&r)?);
        let scale = fro(a)? * fro(x)? + fro(b)?;
        // B = 0 has X = 0 and no error at all.
        let backward = if r_fro == 0.0 { 0.0 } else { r_fro / scale };
        let x_one = one(x)?;
        let inverse_norm = 1.0 / (rcond * a_one);
        // rcond = 0 (allowed) assures nothing, even with a zero residual.
        let forward_bound = if rcond == 0.0 || (x_one == 0.0 && r_one != 0.0) {
            f64::INFINITY
        } else if r_one == 0.0 {
            0.0
        } else {
            inverse_norm * r_one / x_one
        };
        Ok(Errors { backward, forward_bound })
    }
}
