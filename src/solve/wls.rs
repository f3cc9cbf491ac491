//! Weighted least squares by the normal equations, refined to FP64 accuracy
//! from a low-precision Cholesky factor (the seed's Algorithm 1).
//!
//! The problem, in the seed's orientation: `A` is `m × n` (`m` unknowns,
//! `n ≥ m` observations), `d` holds `n` weights, and `x` minimizes
//! `‖D·(b − Aᵀ·x)‖₂`, i.e. solves `G·x = c` with `G = A·D²·Aᵀ` and
//! `c = A·D²·b`, both formed in FP64 by the caller.
//!
//! Here: `G` is factored in low precision (`f32` now), `x₀` comes from that
//! factor, and each step computes `r = c − G·x` in FP64 on the device,
//! solves for the correction with the low-precision factor and adds it.
//! The residual is that of the normal equations, not `A·D²·(b − Aᵀx)`: `G`
//! is already formed in FP64, `G·x` costs `m²` instead of `2mn`, and the
//! iteration converges to the FP64 normal-equations solution, which is what
//! the accuracy is measured against (Tables 1–2 of the seed). Normal
//! equations are only used while `κ(G)` allows it; beyond, the caller takes
//! the stable QR route (see [`NormalOutcome::NeedsQr`]).
//!
//! Failure is never silent: a low-precision factorization that breaks down,
//! or refinement that stalls, diverges or runs out of iterations, falls back
//! to an FP64 Cholesky (with FP64 refinement), and an FP64 factorization
//! that fails or whose condition estimate is too large hands over to QR.

use std::time::{Duration, Instant};

use crate::backend::{Backend, Block, BufferMut, Norm, Op, View, ViewMut};
use crate::factor::cholesky::{self, CholeskyParams};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// The precision `G` is factored in. TF32 and BF16 (tensor cores, with the
/// factor stored in `f32`) are meant to join as further variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// IEEE single: `u = 2⁻²⁴`; refinement converges while `κ(G)·u < 1`.
    F32,
    /// IEEE double: the all-FP64 path, without refinement in low precision.
    F64,
}

/// When refinement stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stopping {
    /// The seed's test `‖r‖/‖x‖ ≤ ε` with `ε = √m·ε₆₄·‖G‖∞` and ∞-norms, as
    /// LAPACK's `dsposv` does: scale-invariant, and reachable in FP64
    /// (the rounding of `r` itself is about `√m·u·‖G‖·‖x‖`). Once it holds,
    /// steps continue while each halves the residual, down to `u₆₄`.
    Backward,
    /// The seed's test as printed, `‖r‖₂/‖x‖₂ ≤ ε`, with the given absolute
    /// `ε` (the paper used `1e−8`); depends on the scale of the data.
    Absolute(f64),
}

/// Tuning of the weighted least-squares solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WlsParams {
    pub precision: Precision,
    pub stopping: Stopping,
    /// Most corrections after `x₀` (the seed used 100; its hardest problems
    /// took 15).
    pub max_iterations: usize,
    /// Estimated `κ₁(G)` above which the normal equations are not trusted
    /// and the stable QR route is taken. The FP64 normal-equations solution
    /// has a relative error up to about `κ(G)·u₆₄` (Cholesky's backward
    /// error and the rounding in forming `G` are both `O(u‖G‖)`): `1e9`
    /// keeps that bound near `1e−7`, 7 digits, and keeps
    /// the seed's Table 2 family on the normal equations up to `m = 2048`
    /// (`κ ≈ 5e8`). QR of `D·Aᵀ` loses only `κ(DAᵀ) = √κ(G)`, at several
    /// times the cost.
    pub max_condition: f64,
    pub cholesky: Option<CholeskyParams>,
}

impl Default for WlsParams {
    fn default() -> Self {
        WlsParams {
            precision: Precision::F32,
            stopping: Stopping::Backward,
            max_iterations: 50,
            max_condition: 1e9,
            cholesky: None,
        }
    }
}

/// Which method produced the solution, and why.
#[derive(Clone, Debug, PartialEq)]
pub enum WlsPath {
    /// The low-precision factor, refined to FP64 accuracy.
    Refined,
    /// An FP64 Cholesky of the normal equations, with the reason the
    /// low-precision path was not taken or failed.
    Fp64 { reason: String },
    /// QR of the weighted design (`lstsq`), with the reason the normal
    /// equations were not trusted.
    StableQr { reason: String },
}

impl WlsPath {
    /// A short name: `refined`, `fp64` or `qr`.
    pub fn name(&self) -> &'static str {
        match self {
            WlsPath::Refined => "refined",
            WlsPath::Fp64 { .. } => "fp64",
            WlsPath::StableQr { .. } => "qr",
        }
    }
}

impl std::fmt::Display for WlsPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WlsPath::Refined => f.write_str("refined from the low-precision factor"),
            WlsPath::Fp64 { reason } => write!(f, "FP64 Cholesky ({reason})"),
            WlsPath::StableQr { reason } => write!(f, "stable QR ({reason})"),
        }
    }
}

/// Where the time went (each phase ends with a device synchronization).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WlsTimings {
    /// Forming `G = A·D²·Aᵀ` and `c = A·D²·b` in FP64.
    pub gram: Duration,
    /// Casting `G` and factoring it in low precision; with
    /// [`Precision::F64`], the whole FP64 path (factor, condition estimate,
    /// solve and FP64 refinement).
    pub factor: Duration,
    /// The first solve and the refinement steps.
    pub refine: Duration,
    /// The condition estimate of `G` (a handful of solves with the factor).
    pub condition: Duration,
    /// Anything after the first path failed: the FP64 factorization and
    /// solve, or QR.
    pub fallback: Duration,
}

/// A solution of the normal equations on the device.
pub struct Solved<B: Backend> {
    /// `x`, `m × 1` in FP64.
    pub x: B::Buffer<f64>,
    /// The first solve `x₀` from the factor, before refinement.
    pub first: B::Buffer<f64>,
    /// Corrections applied after `x₀`.
    pub iterations: usize,
    /// `‖c − G·x‖∞ / (‖G‖∞·‖x‖∞)` of the returned `x`.
    pub relative_residual: f64,
    /// Estimated `κ₁(G)`.
    pub condition: f64,
    pub path: WlsPath,
}

/// What [`solve_normal_equations`] found.
pub enum NormalOutcome<B: Backend> {
    Solved(Solved<B>),
    /// The normal equations cannot give the accuracy: `reason` says why,
    /// `condition` is the estimate of `κ₁(G)` (infinite when `G` is not
    /// positive definite in FP64).
    NeedsQr {
        reason: String,
        condition: f64,
    },
}

/// Solves `G·x = c` for the `m × m` symmetric positive definite `G` (only
/// its lower triangle is read; the buffer is overwritten with the full
/// symmetric matrix, which the residual products use) and `c` (`m × 1`).
/// `timings` gets the factor, refine and fallback phases.
pub fn solve_normal_equations<B: Backend>(
    be: &B,
    g: &mut B::Buffer<f64>,
    c: &B::Buffer<f64>,
    m: usize,
    params: WlsParams,
    timings: &mut WlsTimings,
) -> Result<NormalOutcome<B>> {
    be.symmetrize(Uplo::Lower, ViewMut::dense(g, m, m)?)?;
    let g: &B::Buffer<f64> = g;
    let g_view = View::dense(g, m, m)?;
    let g_norm = be.norm(Norm::Inf, g_view)?;
    let chol = params.cholesky.unwrap_or_else(|| CholeskyParams::for_order(m));
    let low = match params.precision {
        Precision::F64 => Err("FP64 asked for".to_string()),
        Precision::F32 => {
            let start = Instant::now();
            let factored = factor::<B, f32>(be, g, m, chol)?;
            timings.factor = start.elapsed();
            match factored {
                Err(column) => Err(format!(
                    "the f32 Cholesky broke down at column {column}: G is not positive definite in single precision"
                )),
                Ok(l) => {
                    let start = Instant::now();
                    let refined = refine::<B, f32>(be, g_view, g_norm, c, &l, m, params)?;
                    be.synchronize()?;
                    timings.refine = start.elapsed();
                    let start = Instant::now();
                    let outcome = match refined {
                        Ok(mut s) => {
                            s.condition = g_norm * inverse_norm1::<B, f32>(be, &l, m)?;
                            if s.condition > params.max_condition {
                                Ok(NormalOutcome::NeedsQr {
                                    reason: too_ill_conditioned(s.condition, params.max_condition),
                                    condition: s.condition,
                                })
                            } else {
                                Ok(NormalOutcome::Solved(s))
                            }
                        }
                        Err(why) => Err(why),
                    };
                    be.synchronize()?;
                    timings.condition = start.elapsed();
                    outcome
                }
            }
        }
    };
    let reason = match low {
        Ok(outcome) => return Ok(outcome),
        Err(reason) => reason,
    };
    let start = Instant::now();
    let outcome = fp64(be, g, g_norm, c, m, params, chol, reason)?;
    be.synchronize()?;
    if params.precision == Precision::F64 {
        timings.factor = start.elapsed();
    } else {
        timings.fallback = start.elapsed();
    }
    Ok(outcome)
}

fn too_ill_conditioned(condition: f64, max: f64) -> String {
    format!("condition estimate κ₁(G) = {condition:.2e} exceeds {max:.0e}: the normal equations cannot give 7 digits")
}

/// The FP64 path: Cholesky of `G`, then refinement with that factor.
#[allow(clippy::too_many_arguments)]
fn fp64<B: Backend>(
    be: &B,
    g: &B::Buffer<f64>,
    g_norm: f64,
    c: &B::Buffer<f64>,
    m: usize,
    params: WlsParams,
    chol: CholeskyParams,
    reason: String,
) -> Result<NormalOutcome<B>> {
    let l = match factor::<B, f64>(be, g, m, chol)? {
        Ok(l) => l,
        Err(column) => {
            return Ok(NormalOutcome::NeedsQr {
                reason: format!(
                    "{reason}; the FP64 Cholesky broke down at column {column}: the design is rank deficient or nearly so"
                ),
                condition: f64::INFINITY,
            });
        }
    };
    let condition = g_norm * inverse_norm1::<B, f64>(be, &l, m)?;
    if condition > params.max_condition {
        let why = too_ill_conditioned(condition, params.max_condition);
        return Ok(NormalOutcome::NeedsQr { reason: format!("{reason}; {why}"), condition });
    }
    // A backward stable FP64 solve meets the test at once or after a step or
    // two; more means something is wrong, and QR is the safe answer.
    let fp64_params = WlsParams { max_iterations: params.max_iterations.min(5), ..params };
    match refine::<B, f64>(be, View::dense(g, m, m)?, g_norm, c, &l, m, fp64_params)? {
        Ok(mut s) => {
            s.condition = condition;
            s.path = WlsPath::Fp64 { reason };
            Ok(NormalOutcome::Solved(s))
        }
        Err(why) => Ok(NormalOutcome::NeedsQr { reason: format!("{reason}; FP64 refinement: {why}"), condition }),
    }
}

/// `G` rounded to `T` and factored, `L` in its lower triangle; or the
/// column (1-based) where the factorization broke down.
fn factor<B: Backend, T: Scalar>(
    be: &B,
    g: &B::Buffer<f64>,
    m: usize,
    params: CholeskyParams,
) -> Result<std::result::Result<B::Buffer<T>, usize>> {
    let mut l = be.alloc::<T>(m * m)?;
    be.cast(View::dense(g, m, m)?, ViewMut::dense(&mut l, m, m)?)?;
    let mut info = be.upload(&[0i32])?;
    let mut status = ViewMut::dense(&mut info, 1, 1)?;
    cholesky::factor_in_place(be, Uplo::Lower, &BufferMut::new(&mut l), Block::dense(m, m), &mut status, 0, params)?;
    let mut first = [0i32];
    be.download(&info, &mut first)?;
    Ok(if first[0] == 0 { Ok(l) } else { Err(first[0] as usize) })
}

/// `v := G⁻¹·v` in place with the factor in `T` (the vector is rounded to
/// `T`, solved, and widened back).
fn correct<B: Backend, T: Scalar>(be: &B, l: &B::Buffer<T>, m: usize, v: &mut B::Buffer<f64>) -> Result<()> {
    let mut low = be.alloc::<T>(m)?;
    be.cast(View::dense(v, m, 1)?, ViewMut::dense(&mut low, m, 1)?)?;
    cholesky::solve_in_place(be, Uplo::Lower, View::dense(l, m, m)?, ViewMut::dense(&mut low, m, 1)?)?;
    be.cast(View::dense(&low, m, 1)?, ViewMut::dense(v, m, 1)?)
}

/// Algorithm 1 with the factor `l` in `T`: `x₀` from the factor, then
/// `r = c − G·x` in FP64, `x += L⁻ᵀL⁻¹r`, until the stopping test holds.
/// The inner `Err` says why refinement failed (stalled, diverged, out of
/// iterations); `condition` is left at 0 and `path` at `Refined`.
#[allow(clippy::too_many_arguments)]
fn refine<B: Backend, T: Scalar>(
    be: &B,
    g: View<'_, B, f64>,
    g_norm: f64,
    c: &B::Buffer<f64>,
    l: &B::Buffer<T>,
    m: usize,
    params: WlsParams,
) -> Result<std::result::Result<Solved<B>, String>> {
    let mut x = be.alloc::<f64>(m)?;
    be.copy(View::dense(c, m, 1)?, ViewMut::dense(&mut x, m, 1)?)?;
    correct(be, l, m, &mut x)?;
    let mut first = be.alloc::<f64>(m)?;
    be.copy(View::dense(&x, m, 1)?, ViewMut::dense(&mut first, m, 1)?)?;
    let mut r = be.alloc::<f64>(m)?;
    let mut history: Vec<f64> = Vec::new();
    let tolerance = (m as f64).sqrt() * f64::unit_roundoff() * 2.0;
    for iteration in 0..=params.max_iterations {
        // r = c − G·x, in FP64.
        be.copy(View::dense(c, m, 1)?, ViewMut::dense(&mut r, m, 1)?)?;
        be.gemm(-1.0, g, Op::NoTrans, View::dense(&x, m, 1)?, Op::NoTrans, 1.0, ViewMut::dense(&mut r, m, 1)?)?;
        let r_norm = be.norm(Norm::Max, View::dense(&r, m, 1)?)?;
        let x_norm = be.norm(Norm::Max, View::dense(&x, m, 1)?)?;
        let relative = if r_norm == 0.0 { 0.0 } else { r_norm / (g_norm * x_norm) };
        if !relative.is_finite() {
            return Ok(Err(format!("refinement diverged (non-finite residual at step {iteration})")));
        }
        let converged = match params.stopping {
            // dsposv's test; once it holds, one more step is still taken
            // while it halves the residual and the residual is above u (each
            // such step shrinks the error against an FP64 solve, which is
            // about κ(G)·(η + its own η)).
            Stopping::Backward => {
                let previous = history.last().copied().unwrap_or(f64::INFINITY);
                r_norm <= tolerance * g_norm * x_norm
                    && (relative <= f64::unit_roundoff()
                        || relative > 0.5 * previous
                        || iteration == params.max_iterations)
            }
            Stopping::Absolute(eps) => {
                let r2 = be.norm(Norm::Frobenius, View::dense(&r, m, 1)?)?;
                let x2 = be.norm(Norm::Frobenius, View::dense(&x, m, 1)?)?;
                r2 <= eps * x2
            }
        };
        let within_tolerance = r_norm <= tolerance * g_norm * x_norm;
        if converged {
            return Ok(Ok(Solved {
                x,
                first,
                iterations: iteration,
                relative_residual: relative,
                condition: 0.0,
                path: WlsPath::Refined,
            }));
        }
        let best = history.iter().copied().fold(f64::INFINITY, f64::min);
        if !within_tolerance && relative > 2.0 * best {
            return Ok(Err(format!(
                "refinement diverged at step {iteration} (relative residual {relative:.2e}, best {best:.2e})"
            )));
        }
        if let [.., a, b] = history[..]
            && !within_tolerance
            && b > 0.9 * a
            && relative > 0.9 * b
        {
            return Ok(Err(format!("refinement stalled at step {iteration} (relative residual {relative:.2e})")));
        }
        // At the rate of the last two steps, would the test hold within the
        // iteration limit? If not, the FP64 factor is cheaper than waiting.
        if let [.., a, b] = history[..]
            && !within_tolerance
            && matches!(params.stopping, Stopping::Backward)
        {
            let rate = (relative / a).sqrt();
            let needed = ((tolerance / relative).ln() / rate.ln()).ceil();
            if rate < 1.0 && b > 0.0 && needed > (params.max_iterations - iteration) as f64 {
                return Ok(Err(format!(
                    "refinement too slow at step {iteration} (relative residual {relative:.2e}, contraction {rate:.2} \
                     per step: about {needed} more steps needed, limit {})",
                    params.max_iterations
                )));
            }
        }
        history.push(relative);
        if iteration == params.max_iterations {
            break;
        }
        correct(be, l, m, &mut r)?;
        be.axpy(1.0, View::dense(&r, m, 1)?, ViewMut::dense(&mut x, m, 1)?)?;
    }
    let last = history.last().copied().unwrap_or(f64::NAN);
    Ok(Err(format!(
        "refinement did not converge in {} iterations (relative residual {last:.2e})",
        params.max_iterations
    )))
}

/// Estimate of `‖G⁻¹‖₁` from the Cholesky factor in `T`: Hager's method
/// as refined by Higham (LAPACK's `dlacn2`), a handful of solves. `G⁻¹` is
/// symmetric, so the transposed solves are the same solves.
fn inverse_norm1<B: Backend, T: Scalar>(be: &B, l: &B::Buffer<T>, m: usize) -> Result<f64> {
    let solve = |v: &[f64]| -> Result<Vec<f64>> {
        let mut buf = be.upload(v)?;
        correct(be, l, m, &mut buf)?;
        let mut out = vec![0.0; m];
        be.download(&buf, &mut out)?;
        Ok(out)
    };
    let norm1 = |v: &[f64]| v.iter().map(|x| x.abs()).sum::<f64>();
    let mut x = vec![1.0 / m as f64; m];
    let mut estimate = 0.0;
    let mut last = None;
    for step in 0..5 {
        let y = solve(&x)?;
        let new = norm1(&y);
        if !new.is_finite() {
            return Ok(f64::INFINITY);
        }
        if step > 0 && new <= estimate {
            break;
        }
        estimate = new;
        let signs: Vec<f64> = y.iter().map(|&v| if v >= 0.0 { 1.0 } else { -1.0 }).collect();
        let z = solve(&signs)?;
        let (j, zj) =
            z.iter().enumerate().fold((0, -1.0), |acc, (i, &v)| if v.abs() > acc.1 { (i, v.abs()) } else { acc });
        let ztx: f64 = z.iter().zip(&x).map(|(a, b)| a * b).sum();
        if zj <= ztx || last == Some(j) {
            break;
        }
        last = Some(j);
        x = vec![0.0; m];
        x[j] = 1.0;
    }
    // Higham's safeguard against the cases Hager's iteration misses.
    let alt: Vec<f64> = (0..m)
        .map(|i| {
            let s = if i % 2 == 0 { 1.0 } else { -1.0 };
            s * (1.0 + i as f64 / (m.max(2) - 1) as f64)
        })
        .collect();
    let y = solve(&alt)?;
    Ok(estimate.max(2.0 * norm1(&y) / (3.0 * m as f64)))
}
