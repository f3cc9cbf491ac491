//! `lstsq`: weighted linear least squares, stable for ill-conditioned designs.

use super::Matrix;
use super::validate::{self, Weighting};
use crate::solve::lstsq::{self as core, LstsqParams};
use crate::{Result, Scalar};

/// The solution of a least-squares problem, with what is known about it.
#[derive(Debug)]
pub struct LstsqSolution<T: Scalar> {
    /// The coefficients, `n × 1`, on the problem's device, rounded to `T`.
    pub x: Matrix<T>,
    /// The same coefficients in `f64` on the host, before that rounding.
    pub x_host: Vec<f64>,
    /// `‖diag(w)·(b − A·x)‖₂`, computed in double-double from the data.
    pub residual_norm: f64,
    /// Standard errors of the coefficients, `σ·√((ÃᵀÃ)⁻¹)ⱼⱼ` with
    /// `σ² = residual_norm²/(m − n)` (the residual variance estimated from
    /// the fit, as `numpy.polyfit(cov=True)` and most statistics packages
    /// do); `None` when `m = n`.
    pub standard_errors: Option<Vec<f64>>,
    /// Estimated 1-norm condition number of the weighted design after its
    /// columns are scaled to unit norm (that of `R` in its QR).
    pub condition: f64,
    /// Refinement steps after the initial QR solve.
    pub iterations: usize,
}

/// Host copy of a vector (one row or one column) as `f64`.
fn vector<T: Scalar>(v: &Matrix<T>, what: &str, len: usize) -> Result<Vec<f64>> {
    validate::vector("lstsq", what, v, len)?;
    Ok(v.to_host()?.into_iter().map(Scalar::to_f64).collect())
}

/// Solves `min ‖diag(w)·(b − A·x)‖₂` over `x`, for `A` of `m × n` with
/// `m ≥ n`: each row of `A` is an observation, `bᵢ` its value, and the
/// weight `wᵢ ≥ 0` multiplies its residual (`wᵢ = 1/σᵢ` for measurement
/// errors `σᵢ`); no weights means all ones.
///
/// Stable for ill-conditioned designs (a monomial basis, say): QR of the
/// weighted design with its columns scaled to unit norm, then iterative
/// refinement of the augmented system with residuals in double-double on the
/// host until the correction is at the level of `T`'s rounding. The
/// factorization runs on `A`'s device, in `T`.
///
/// For the transposed orientation `min ‖D·(b − Aᵀ·x)‖₂` with `A` of
/// `n × m` (the columns are observations), pass `Aᵀ` and `D`'s diagonal.
///
/// Errors ([`Error`](crate::Error)): mismatched lengths, or fewer
/// observations than unknowns (`DimensionMismatch`); a NaN or infinity
/// (`NonFinite`); a negative weight (`NegativeWeight`); a design too close
/// to rank deficient for refinement to converge in `T` (`RankDeficient`,
/// naming a column); refinement that does not converge (`NotConverged`).
/// Waits for the result.
pub fn lstsq<T: Scalar>(a: &Matrix<T>, b: &Matrix<T>, weights: Option<&Matrix<T>>) -> Result<LstsqSolution<T>> {
    lstsq_with(a, b, weights, LstsqParams::default())
}

/// [`lstsq`] with explicit tuning.
pub fn lstsq_with<T: Scalar>(
    a: &Matrix<T>,
    b: &Matrix<T>,
    weights: Option<&Matrix<T>>,
    params: LstsqParams,
) -> Result<LstsqSolution<T>> {
    a.check_with(b)?;
    if let Some(w) = weights {
        a.check_with(w)?;
    }
    let (m, n) = a.shape();
    let a_host: Vec<f64> = a.to_host()?.into_iter().map(Scalar::to_f64).collect();
    let b_host = vector(b, "b", m)?;
    let w_host: Option<Vec<f64>> = match weights {
        Some(w) => Some(validate::weights("lstsq", w, m, Weighting::Linear)?.into_iter().map(Scalar::to_f64).collect()),
        None => None,
    };
    let out =
        with_backend!(a.device(), be => core::lstsq::<_, T>(be, &a_host, m, n, &b_host, w_host.as_deref(), params))?;
    let x: Vec<T> = out.x.iter().map(|&v| T::from_f64(v)).collect();
    Ok(LstsqSolution {
        x: a.device().from_col_major(n, 1, &x)?,
        x_host: out.x,
        residual_norm: out.residual_norm,
        standard_errors: out.standard_errors,
        condition: out.condition,
        iterations: out.iterations,
    })
}
