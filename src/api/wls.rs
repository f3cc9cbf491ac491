//! `wls`: weighted least squares by the normal equations `A·D²·Aᵀ·x = A·D²·b`,
//! factored in low precision and refined to FP64 accuracy, with an FP64 and
//! a QR fallback (see [`crate::solve::wls`]).

use std::time::Instant;

use super::Matrix;
use super::device::Resident;
use super::validate::{self, Weighting};
use crate::Result;
use crate::solve::check;
use crate::solve::lstsq::LstsqParams;
use crate::solve::wls::{self as core, NormalOutcome, Problem, WlsParams, WlsPath, WlsTimings};

/// The solution of a weighted least-squares problem and how it was found.
#[derive(Debug)]
pub struct WlsSolution {
    /// The coefficients, `m × 1`, in FP64 on the problem's device.
    pub x: Matrix<f64>,
    /// The first solve `x₀` from the low-precision factor (from the FP64
    /// factor on the FP64 path), before refinement; `None` on the QR path.
    pub first_solve: Option<Matrix<f64>>,
    /// Refinement steps after `x₀` (on the FP64 path, those with the FP64
    /// factor; on the QR path, those of `lstsq`).
    pub iterations: usize,
    /// GMRES iterations over those steps (0 for classical refinement, the
    /// FP64 path and QR).
    pub gmres_iterations: usize,
    /// `‖c − G·x‖∞ / (‖G‖∞·‖x‖∞)` for `G = A·D²·Aᵀ`, `c = A·D²·b`, with the
    /// residual `A·D²·(b − Aᵀx)` in double-double: the normwise backward
    /// error of `x` for the normal equations.
    pub relative_residual: f64,
    /// Estimated 1-norm condition number of `G` (infinite when `G` is not
    /// positive definite in FP64).
    pub condition: f64,
    /// Which method produced `x`, and why.
    pub path: WlsPath,
    pub timings: WlsTimings,
}

/// Solves `min ‖D·(b − Aᵀ·x)‖₂` over `x`, in Jung and O'Leary's (2008) orientation: `A` is
/// `m × n` with `m` unknowns and `n ≥ m` observations (column `k` of `A`
/// holds the basis functions at observation `k`), `b` has `n` entries, and
/// `d` holds `n` weights `dₖ ≥ 0` (`1/σₖ` for measurement errors `σₖ`; no
/// weights means all ones). For rows as observations use [`wls_rows`].
///
/// `G = A·D²·Aᵀ` is formed and factored in `f32` (on the GPU, from TF32
/// products on the tensor cores), and the solution refined with residuals
/// `A·D²·(b − Aᵀx)` computed from `A` in double-double until it is at least
/// as accurate as an FP64 solve, and usually accurate to a few units in
/// the last place (Jung and O'Leary's Algorithm 1). If the `f32` factorization
/// breaks down or refinement stalls, `G` is formed in FP64 and its Cholesky
/// factor is refined the same way; if `G`'s condition
/// estimate exceeds `1e10`, the normal equations are abandoned for QR of the
/// weighted design ([`lstsq`](crate::lstsq)). [`WlsSolution::path`] says which,
/// and why. Waits for the result.
///
/// Errors ([`Error`](crate::Error)): `b` or `d` not vectors of `n`
/// entries, or `n < m` (`DimensionMismatch`); a NaN or infinity
/// (`NonFinite`); a negative weight (`NegativeWeight`) or one whose square
/// overflows (`WeightOverflow`); a rank-deficient design (`RankDeficient`,
/// from the QR route).
pub fn wls(a: &Matrix<f64>, b: &Matrix<f64>, d: Option<&Matrix<f64>>) -> Result<WlsSolution> {
    wls_with(a, b, d, WlsParams::default())
}

/// [`wls`] in the usual orientation: `a` is `n × m`, one row per
/// observation, and the weight `dᵢ` multiplies row `i`'s residual. Makes
/// one transposed copy of `a`.
pub fn wls_rows(a: &Matrix<f64>, b: &Matrix<f64>, d: Option<&Matrix<f64>>) -> Result<WlsSolution> {
    wls_rows_with(a, b, d, WlsParams::default())
}

/// [`wls_rows`] with explicit tuning.
pub fn wls_rows_with(
    a: &Matrix<f64>,
    b: &Matrix<f64>,
    d: Option<&Matrix<f64>>,
    params: WlsParams,
) -> Result<WlsSolution> {
    a.storage()?;
    wls_with(&a.transpose()?, b, d, params)
}

/// A vector of `len` entries as an `len × 1` matrix (a row is transposed).
fn column(v: &Matrix<f64>, what: &str, len: usize) -> Result<Matrix<f64>> {
    validate::vector("wls", what, v, len)?;
    if v.cols() == 1 { v.try_clone() } else { v.transpose() }
}

/// [`wls`] with explicit tuning.
pub fn wls_with(a: &Matrix<f64>, b: &Matrix<f64>, d: Option<&Matrix<f64>>, params: WlsParams) -> Result<WlsSolution> {
    a.check_with(b)?;
    if let Some(d) = d {
        a.check_with(d)?;
    }
    let (m, n) = a.shape();
    check::observations("wls", "the design matrix A (unknowns × observations)", "columns", n, m)?;
    let b = column(b, "b", n)?;
    let d = match d {
        Some(d) => column(d, "the weights d", n)?,
        None => a.device().from_col_major(n, 1, &vec![1.0; n])?,
    };
    // G = A·D²·Aᵀ is formed with d² in one pass.
    validate::weights("wls", &d, n, Weighting::Squared)?;
    validate::finite("A", a)?;
    validate::finite("b", &b)?;

    let dev = a.device().clone();
    let mut timings = WlsTimings::default();
    #[allow(clippy::large_enum_variant)] // one short-lived value
    enum Normal {
        Solved { x: Matrix<f64>, first: Matrix<f64>, s: (usize, usize, f64, f64, WlsPath) },
        NeedsQr { reason: String, condition: f64, g_norm: f64 },
    }
    let normal = with_backend!(dev, be => {
        let problem = Problem { a: a.view_on(be)?, d: d.view_on(be)?, b: b.view_on(be)? };
        match core::solve(be, problem, params, &mut timings)? {
            NormalOutcome::Solved(s) => Normal::Solved {
                x: Matrix::from_storage(dev.clone(), m, 1, be.wrap(s.x)),
                first: Matrix::from_storage(dev.clone(), m, 1, be.wrap(s.first)),
                s: (s.iterations, s.gmres_iterations, s.relative_residual, s.condition, s.path),
            },
            NormalOutcome::NeedsQr { reason, condition, g_norm } => Normal::NeedsQr { reason, condition, g_norm },
        }
    });
    match normal {
        Normal::Solved { x, first, s: (iterations, gmres_iterations, relative_residual, condition, path) } => {
            Ok(WlsSolution {
                x,
                first_solve: Some(first),
                iterations,
                gmres_iterations,
                relative_residual,
                condition,
                path,
                timings,
            })
        }
        Normal::NeedsQr { reason, condition, g_norm } => {
            let start = Instant::now();
            let qr = crate::api::lstsq_with(&a.transpose()?, &b, Some(&d), LstsqParams::default())?;
            let relative_residual = with_backend!(dev, be => {
                let problem = Problem { a: a.view_on(be)?, d: d.view_on(be)?, b: b.view_on(be)? };
                problem.relative_residual(be, qr.x.view_on(be)?.buffer(), g_norm)?
            });
            timings.fallback += start.elapsed();
            timings.total += start.elapsed();
            Ok(WlsSolution {
                x: qr.x,
                first_solve: None,
                iterations: qr.iterations,
                gmres_iterations: 0,
                relative_residual,
                condition,
                path: WlsPath::StableQr { reason },
                timings,
            })
        }
    }
}
