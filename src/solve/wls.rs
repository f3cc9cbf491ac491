//! Weighted least squares by the normal equations, refined to FP64 accuracy
//! from a low-precision Cholesky factor (Jung and O'Leary 2008, Algorithm 1).
//!
//! The problem, in their orientation: `A` is `m × n` (`m` unknowns,
//! `n ≥ m` observations), `d` holds `n` weights, and `x` minimizes
//! `‖D·(b − Aᵀ·x)‖₂`, i.e. solves `G·x = c` with `G = A·D²·Aᵀ` and
//! `c = A·D²·b`.
//!
//! Here: `G` is formed and factored in low precision (`f32`; on the GPU `G`
//! comes from three half-precision products on the tensor cores, see
//! [`Backend::scaled_syrk_f32`]), `x₀` comes from
//! that factor, and each step computes the residual `r = A·D²·(b − Aᵀx)`
//! (which is `c − G·x`) from `A` itself with every sum in double-double
//! ([`Backend::weighted_residual`]), solves for the correction with the
//! low-precision factor — classically, `d = G̃⁻¹r`, or by GMRES on
//! `G·d = r` preconditioned by it (GMRES-IR, Carson and Higham 2018; the
//! default), which keeps converging where `κ(G)·u₃₂` nears or passes 1 —
//! and adds it. The residual never goes through a
//! rounded `G`, so the iteration converges to the solution of the data, not
//! of an FP64 `G`: its forward error is about `u₆₄`, not the `κ(G)·u₆₄` of
//! an FP64 Cholesky solve, and `G` is never needed in FP64 (half the memory
//! and, on tensor cores, a third of the time). Refinement converges while
//! `κ(G)·u₃₂` is well below 1; the normal equations are only used while
//! `κ(G)` allows it, and beyond, the caller takes the stable QR route (see
//! [`NormalOutcome::NeedsQr`]).
//!
//! Failure is never silent: a low-precision factorization that breaks down,
//! or refinement that stalls, diverges or converges too slowly, falls back
//! to an FP64 `G` and Cholesky (refined the same way), and an FP64
//! factorization that fails or whose condition estimate is too large hands
//! over to QR.

use std::time::{Duration, Instant};

use crate::backend::{Backend, Block, BufferMut, DeviceBuffer, Norm, View, ViewMut};
use crate::factor::cholesky::{self, CholeskyParams};
use crate::factor::condition;
use crate::layout::Uplo;
use crate::solve::refine::{Gmres, RefineParams, Refinement, SWITCH_RATE};
use crate::{Error, Result, Scalar};

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
    /// Jung and O'Leary's test `‖r‖/‖x‖ ≤ ε` with `ε = √m·ε₆₄·‖G‖∞` and ∞-norms, as
    /// LAPACK's `dsposv` does: scale-invariant, and reachable in FP64. Once
    /// it holds, steps continue until the error left after the last
    /// correction (estimated from the last two corrections' ratio) is below
    /// `√m·ε₆₄·‖x‖∞` too; corrections that shrink too slowly to get there
    /// within the iteration limit hand over to the FP64 factor.
    Backward,
    /// Jung and O'Leary's test as printed, `‖r‖₂/‖x‖₂ ≤ ε`, with the given absolute
    /// `ε` (the paper used `1e−8`); depends on the scale of the data.
    Absolute(f64),
}

/// Tuning of the weighted least-squares solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WlsParams {
    pub precision: Precision,
    pub stopping: Stopping,
    /// Most corrections after `x₀` (Jung and O'Leary used 100; their hardest problems
    /// took 15).
    pub max_iterations: usize,
    /// Estimated `κ₁(G)` above which the normal equations are not trusted
    /// and the stable QR route is taken. Refinement with exact residuals
    /// usually ends within a few `u₆₄` of the solution (its forward test),
    /// but what it guarantees when it ends at the iteration limit on the
    /// backward test alone is an FP64 solve's `κ(G)·u₆₄`: `1e10` keeps that
    /// near `1e−6` (6 digits), and keeps Jung and O'Leary's Table 2 family,
    /// on which GMRES-IR converges, on the normal equations through
    /// `m = 2048` (`κ ≈ 1e9`). QR of `D·Aᵀ` loses only `κ(DAᵀ) = √κ(G)`, at
    /// several times the cost.
    pub max_condition: f64,
    pub cholesky: Option<CholeskyParams>,
    /// How a low-precision factor's corrections are computed: classically
    /// while they shrink fast, then by GMRES (`Auto`), or always one way;
    /// GMRES forms its products `G·v = A·D²·Aᵀ·v` from `A` in
    /// double-double. An FP64 factor corrects classically.
    pub refinement: Refinement,
    /// GMRES applies the low-precision factor through `L⁻¹`, formed in
    /// FP64 when it starts ([`cholesky::inverse_lower_wide`]), for `m` up to
    /// this, and by triangular solves beyond; `None`: the backend's
    /// [`SOLVES_BY_INVERSE_UP_TO`](Backend::SOLVES_BY_INVERSE_UP_TO). The
    /// two are the same operator to FP64's rounding.
    pub inverse_up_to: Option<usize>,
}

impl Default for WlsParams {
    fn default() -> Self {
        WlsParams {
            precision: Precision::F32,
            stopping: Stopping::Backward,
            max_iterations: 50,
            max_condition: 1e10,
            cholesky: None,
            refinement: Refinement::Auto,
            inverse_up_to: None,
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
    /// Forming `G = A·D²·Aᵀ` in the precision it is factored in.
    pub gram: Duration,
    /// Factoring `G`.
    pub factor: Duration,
    /// The first solve and the refinement steps.
    pub refine: Duration,
    /// The condition estimate of `G` (a handful of solves with the factor),
    /// which runs beside the refinement, on the side queue: it overlaps
    /// `refine` and is not added to `total`.
    pub condition: Duration,
    /// Anything after the low-precision path failed: the FP64 `G`, its
    /// factorization and refinement, or QR.
    pub fallback: Duration,
    /// The whole solve.
    pub total: Duration,
}

/// A weighted least-squares problem on a backend: `A` (`m × n`), the
/// weights `d` and the observations `b` (vectors of `n` entries).
pub struct Problem<'a, B: Backend> {
    pub a: View<'a, B, f64>,
    pub d: View<'a, B, f64>,
    pub b: View<'a, B, f64>,
}

impl<B: Backend> Clone for Problem<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: Backend> Copy for Problem<'_, B> {}

impl<B: Backend> Problem<'_, B> {
    /// `r := A·D²·(b − Aᵀx)` in double-double, rounded once.
    fn residual(&self, be: &B, x: &B::Buffer<f64>, r: &mut B::Buffer<f64>) -> Result<()> {
        let m = self.a.rows();
        be.weighted_residual(self.a, self.d, self.b, View::dense(x, m, 1)?, ViewMut::dense(r, m, 1)?)
    }

    /// `‖A·D²·(b − Aᵀx)‖∞ / (‖G‖∞·‖x‖∞)`: the normwise backward error of `x`
    /// for the normal equations, with the residual exact to about `u`.
    pub fn relative_residual(&self, be: &B, x: &B::Buffer<f64>, g_norm: f64) -> Result<f64> {
        let m = self.a.rows();
        let mut r = be.alloc::<f64>(m)?;
        self.residual(be, x, &mut r)?;
        let r_norm = be.norm(Norm::Max, View::dense(&r, m, 1)?)?;
        let x_norm = be.norm(Norm::Max, View::dense(x, m, 1)?)?;
        Ok(if r_norm == 0.0 { 0.0 } else { r_norm / (g_norm * x_norm) })
    }
}

/// A solution of the normal equations on the device.
pub struct Solved<B: Backend> {
    /// `x`, `m × 1` in FP64.
    pub x: B::Buffer<f64>,
    /// The first solve `x₀` from the factor, before refinement.
    pub first: B::Buffer<f64>,
    /// Corrections applied after `x₀`.
    pub iterations: usize,
    /// GMRES iterations over those corrections (0 when classical).
    pub gmres_iterations: usize,
    /// `‖A·D²·(b − Aᵀx)‖∞ / (‖G‖∞·‖x‖∞)` of the returned `x`.
    pub relative_residual: f64,
    /// Estimated `κ₁(G)`.
    pub condition: f64,
    pub path: WlsPath,
}

/// What [`solve`] found.
pub enum NormalOutcome<B: Backend> {
    Solved(Solved<B>),
    /// The normal equations cannot give the accuracy: `reason` says why,
    /// `condition` is the estimate of `κ₁(G)` (infinite when `G` is not
    /// positive definite in FP64) and `g_norm` is `‖G‖∞`.
    NeedsQr {
        reason: String,
        condition: f64,
        g_norm: f64,
    },
}

/// Solves the weighted least-squares problem by the normal equations with
/// the method of `params` (see the module's documentation). The operands
/// are not modified; `timings` gets every phase but the QR route's.
pub fn solve<B: Backend>(
    be: &B,
    problem: Problem<'_, B>,
    params: WlsParams,
    timings: &mut WlsTimings,
) -> Result<NormalOutcome<B>> {
    let begin = Instant::now();
    let m = problem.a.rows();
    let chol = params.cholesky.unwrap_or_else(|| CholeskyParams::for_order(m));
    let low = match params.precision {
        Precision::F64 => Err("FP64 asked for".to_string()),
        Precision::F32 => {
            let start = Instant::now();
            let mut g = be.alloc::<f32>(m * m)?;
            be.scaled_syrk_f32(problem.a, problem.d, ViewMut::dense(&mut g, m, m)?)?;
            let g_norm = f64::from(be.norm(Norm::Inf, View::dense(&g, m, m)?)?);
            be.synchronize()?;
            timings.gram = start.elapsed();
            let start = Instant::now();
            let factored = factor_in_place(be, &mut g, m, chol)?;
            timings.factor = start.elapsed();
            match factored {
                Err(column) => Err(format!(
                    "the f32 Cholesky broke down at column {column}: G is not positive definite in single precision"
                )),
                Ok(()) => match refine_and_estimate::<B, f32>(be, problem, g_norm, &g, params, timings)? {
                    (Ok(mut s), inverse_norm) => {
                        s.condition = g_norm * inverse_norm;
                        Ok(judge(s, g_norm, params, String::new()))
                    }
                    (Err(why), _) => Err(why),
                },
            }
        }
    };
    let outcome = match low {
        Ok(outcome) => outcome,
        Err(reason) => {
            let start = Instant::now();
            let outcome = fp64(be, problem, params, chol, reason, timings)?;
            be.synchronize()?;
            if params.precision == Precision::F32 {
                timings.fallback = start.elapsed();
            }
            outcome
        }
    };
    timings.total = begin.elapsed();
    Ok(outcome)
}

/// Refinement with the factor `l` on this queue and the estimate of
/// `‖G⁻¹‖₁` on the side queue, from a second host thread: the estimate
/// needs only the factor, and both are chains of small dependent steps that
/// leave the GPU mostly idle. Sets `timings.refine` and `.condition`.
fn refine_and_estimate<B: Backend, T: Scalar>(
    be: &B,
    problem: Problem<'_, B>,
    g_norm: f64,
    l: &B::Buffer<T>,
    params: WlsParams,
    timings: &mut WlsTimings,
) -> Result<(std::result::Result<Solved<B>, String>, f64)> {
    let m = problem.a.rows();
    let side = be.side()?;
    side.wait_for(be)?;
    let start = Instant::now();
    let (refined, estimate) = std::thread::scope(|scope| {
        let estimate = scope.spawn(|| {
            let start = Instant::now();
            let norm = inverse_norm1::<B, T>(side, l, m);
            side.synchronize().map(|()| (norm, start.elapsed()))
        });
        let refined = refine::<B, T>(be, problem, g_norm, l, params).and_then(|r| be.synchronize().map(|()| r));
        (refined, estimate.join())
    });
    timings.refine = start.elapsed();
    // `l` is freed on this queue: after the side queue's last use of it.
    be.wait_for(side)?;
    let (norm, elapsed) = estimate.map_err(|_| Error::Device("the condition estimate's thread panicked".into()))??;
    timings.condition = elapsed;
    Ok((refined?, norm?))
}

/// A refined solution, unless its condition estimate says the normal
/// equations are not to be trusted.
fn judge<B: Backend>(s: Solved<B>, g_norm: f64, params: WlsParams, reason: String) -> NormalOutcome<B> {
    if s.condition > params.max_condition {
        let why = too_ill_conditioned(s.condition, params.max_condition);
        let reason = if reason.is_empty() { why } else { format!("{reason}; {why}") };
        NormalOutcome::NeedsQr { reason, condition: s.condition, g_norm }
    } else {
        NormalOutcome::Solved(s)
    }
}

fn too_ill_conditioned(condition: f64, max: f64) -> String {
    format!("condition estimate κ₁(G) = {condition:.2e} exceeds {max:.0e}: the normal equations are not trusted")
}

/// The FP64 path: `G` in FP64, its Cholesky factor, then refinement with
/// that factor. With [`Precision::F64`] its phases go into `timings`.
fn fp64<B: Backend>(
    be: &B,
    problem: Problem<'_, B>,
    params: WlsParams,
    chol: CholeskyParams,
    reason: String,
    timings: &mut WlsTimings,
) -> Result<NormalOutcome<B>> {
    let m = problem.a.rows();
    let mut scratch = WlsTimings::default();
    let phases = if params.precision == Precision::F64 { timings } else { &mut scratch };
    let start = Instant::now();
    let mut g = be.alloc::<f64>(m * m)?;
    be.scaled_syrk(Uplo::Lower, 1.0, problem.a, problem.d, 0.0, ViewMut::dense(&mut g, m, m)?)?;
    be.symmetrize(Uplo::Lower, ViewMut::dense(&mut g, m, m)?)?;
    let g_norm = be.norm(Norm::Inf, View::dense(&g, m, m)?)?;
    be.synchronize()?;
    phases.gram = start.elapsed();
    let start = Instant::now();
    let factored = factor_in_place(be, &mut g, m, chol)?;
    phases.factor = start.elapsed();
    if let Err(column) = factored {
        return Ok(NormalOutcome::NeedsQr {
            reason: format!(
                "{reason}; the FP64 Cholesky broke down at column {column}: the design is rank deficient or nearly so"
            ),
            condition: f64::INFINITY,
            g_norm,
        });
    }
    // A backward stable FP64 factor converges in a step or two (κ(G)·u₆₄
    // is small wherever the condition limit lets the normal equations be
    // used); more means something is wrong, and QR is the safe answer.
    let fp64_params = WlsParams { max_iterations: params.max_iterations.min(5), ..params };
    let (refined, inverse_norm) = refine_and_estimate::<B, f64>(be, problem, g_norm, &g, fp64_params, phases)?;
    let condition = g_norm * inverse_norm;
    Ok(match refined {
        Ok(mut s) => {
            s.condition = condition;
            s.path = WlsPath::Fp64 { reason: reason.clone() };
            judge(s, g_norm, params, reason)
        }
        Err(why) => NormalOutcome::NeedsQr { reason: format!("{reason}; FP64 refinement: {why}"), condition, g_norm },
    })
}

/// Cholesky of the `m × m` `G` in place, `L` in its lower triangle; or the
/// column (1-based) where the factorization broke down.
fn factor_in_place<B: Backend, T: Scalar>(
    be: &B,
    g: &mut B::Buffer<T>,
    m: usize,
    params: CholeskyParams,
) -> Result<std::result::Result<(), usize>> {
    let mut info = be.upload(&[0i32])?;
    let mut status = ViewMut::dense(&mut info, 1, 1)?;
    cholesky::factor_in_place(be, Uplo::Lower, &BufferMut::new(g), Block::dense(m, m), &mut status, 0, params)?;
    let mut first = [0i32];
    be.download(&info, &mut first)?;
    Ok(if first[0] == 0 { Ok(()) } else { Err(first[0] as usize) })
}

/// `v := G⁻¹·v` in place with the factor in `T`, by FP64 substitution on
/// its entries ([`cholesky::solve_wide_in_place`]): the operator GMRES
/// applies too, and on a GPU faster than solves in `T` with the vector
/// rounded to it and widened back (H200, m = 16384: 1.05 ms against 2.1).
fn correct<B: Backend, T: Scalar>(be: &B, l: &B::Buffer<T>, m: usize, v: &mut B::Buffer<f64>) -> Result<()> {
    cholesky::solve_wide_in_place(be, Uplo::Lower, View::dense(l, m, m)?, ViewMut::dense(v, m, 1)?)
}

/// Algorithm 1 with the factor `l` in `T`: `x₀` from the factor, then
/// `r = A·D²·(b − Aᵀx)` in double-double, `x += L⁻ᵀL⁻¹r`, until the
/// stopping test holds. The inner `Err` says why refinement failed
/// (stalled, diverged, out of iterations); `condition` is left at 0 and
/// `path` at `Refined`.
fn refine<B: Backend, T: Scalar>(
    be: &B,
    problem: Problem<'_, B>,
    g_norm: f64,
    l: &B::Buffer<T>,
    params: WlsParams,
) -> Result<std::result::Result<Solved<B>, String>> {
    let m = problem.a.rows();
    let max = |v: &B::Buffer<f64>| be.norm(Norm::Max, View::dense(v, m, 1).expect("an m-vector"));
    // x₀ = G⁻¹c, c = A·D²·b (the residual at x = 0).
    let mut x = be.alloc::<f64>(m)?;
    be.fill(ViewMut::dense(&mut x, m, 1)?, 0.0)?;
    let mut r = be.alloc::<f64>(m)?;
    problem.residual(be, &x, &mut r)?;
    correct(be, l, m, &mut r)?;
    be.copy(View::dense(&r, m, 1)?, ViewMut::dense(&mut x, m, 1)?)?;
    let mut first = be.alloc::<f64>(m)?;
    be.copy(View::dense(&x, m, 1)?, ViewMut::dense(&mut first, m, 1)?)?;
    // Norms of the corrections so far, x₀ counting as the first.
    let mut steps = vec![max(&x)?];
    let mut history: Vec<f64> = Vec::new();
    let mut gmres_iterations = 0;
    // GMRES for a low-precision factor, from the start or from the first
    // classical step that contracts slowly: its basis, the zero
    // observations of G·v, d and −v; and the index in `steps` of its first
    // correction. Its M⁻¹ solves in FP64 on the factor, widened as it is
    // read: GMRES needs one fixed operator, which FP32 solves are not once
    // κ(G)·u₃₂ nears 1.
    let may_gmres = params.refinement != Refinement::Classical && T::NAME != "f64";
    let by_inverse = m <= params.inverse_up_to.unwrap_or(B::SOLVES_BY_INVERSE_UP_TO);
    let start_gmres = || -> Result<_> {
        let n = problem.d.block().vector_len().unwrap_or(0);
        let g = Gmres::new(be, m, RefineParams::default().max_inner)?;
        let inverse = by_inverse.then(|| cholesky::inverse_lower_wide(be, View::dense(l, m, m)?)).transpose()?;
        Ok((g, be.alloc::<f64>(n)?, be.alloc::<f64>(m)?, be.alloc::<f64>(m)?, inverse))
    };
    let (mut gmres, mut gmres_from) = if may_gmres && params.refinement == Refinement::Gmres {
        (Some(start_gmres()?), Some(1))
    } else {
        (None, None)
    };
    let tolerance = (m as f64).sqrt() * f64::unit_roundoff() * 2.0;
    for iteration in 0..=params.max_iterations {
        problem.residual(be, &x, &mut r)?;
        let r_norm = max(&r)?;
        let x_norm = max(&x)?;
        let relative = if r_norm == 0.0 { 0.0 } else { r_norm / (g_norm * x_norm) };
        if !relative.is_finite() {
            return Ok(Err(format!("refinement diverged (non-finite residual at step {iteration})")));
        }
        let within_tolerance = r_norm <= tolerance * g_norm * x_norm;
        let converged = match params.stopping {
            // dsposv's backward test, and a forward one: the error left
            // after the last correction δₖ is about ρ·‖δₖ‖/(1 − ρ) with the
            // contraction ρ = ‖δₖ‖/‖δₖ₋₁‖, or δₖ is at rounding level. The
            // residual is exact to u, but x is stored in FP64, so the
            // relative residual levels off near u while the error can still
            // be κ(G)·u: the corrections, not the residual, say when to stop
            // (as LAPACK's xGERFSX).
            Stopping::Backward => {
                let forward = match steps[..] {
                    [.., a, b] => {
                        b <= 2.0 * f64::unit_roundoff() * x_norm
                            || b < a && b * (b / a) / (1.0 - b / a) <= tolerance * x_norm
                    }
                    _ => false,
                };
                relative == 0.0 || within_tolerance && (forward || iteration == params.max_iterations)
            }
            Stopping::Absolute(eps) => {
                let r2 = be.norm(Norm::Frobenius, View::dense(&r, m, 1)?)?;
                let x2 = be.norm(Norm::Frobenius, View::dense(&x, m, 1)?)?;
                r2 <= eps * x2
            }
        };
        if converged {
            return Ok(Ok(Solved {
                x,
                first,
                iterations: iteration,
                gmres_iterations,
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
        // At the rate of the last two corrections, would the forward test
        // hold within the iteration limit? If not, the FP64 factor is
        // cheaper than waiting (and a slow contraction stopped early would
        // leave an FP64 solve's error, not u). GMRES's first correction
        // only removes the error left by the step before: its rate shows
        // from the second on.
        let judged = gmres_from.map_or(2, |k| k + 2);
        if let [.., a, b] = steps[..]
            && steps.len() >= judged
            && matches!(params.stopping, Stopping::Backward)
        {
            let rate = b / a;
            let needed = ((tolerance * x_norm / b).ln() / rate.ln()).ceil();
            if rate >= 1.0 || needed > (params.max_iterations - iteration) as f64 {
                return Ok(Err(format!(
                    "refinement too slow at step {iteration} (corrections shrink by {rate:.2} per step: about \
                     {needed} more steps needed, limit {})",
                    params.max_iterations
                )));
            }
        }
        history.push(relative);
        if iteration == params.max_iterations {
            break;
        }
        match &mut gmres {
            None => {
                correct(be, l, m, &mut r)?;
                let d = max(&r)?;
                if may_gmres && steps.last().is_some_and(|&before| d > SWITCH_RATE * before) {
                    gmres = Some(start_gmres()?);
                    gmres_from = Some(steps.len() + 1);
                }
            }
            Some((g, zeros, d, minus_v, inverse)) => {
                // d from GMRES on G·d = r, then d into r as the classical
                // step leaves it.
                be.fill(ViewMut::dense(d, m, 1)?, 0.0)?;
                let n = zeros.len();
                let mut apply = |v: View<'_, B, f64>, w: ViewMut<'_, B, f64>| {
                    // G·v = A·D²·(0 − Aᵀ·(−v)), in double-double.
                    be.copy(v, ViewMut::dense(minus_v, m, 1)?)?;
                    be.scale(-1.0, ViewMut::dense(minus_v, m, 1)?)?;
                    be.weighted_residual(
                        problem.a,
                        problem.d,
                        View::dense(zeros, n, 1)?,
                        View::dense(minus_v, m, 1)?,
                        w,
                    )
                };
                let mut work = be.alloc::<f64>(m)?;
                let mut precondition = |v: ViewMut<'_, B, f64>| match inverse {
                    Some(x) => {
                        cholesky::apply_inverse_wide(be, View::dense(x, m, m)?, v, ViewMut::dense(&mut work, m, 1)?)
                    }
                    None => cholesky::solve_wide_in_place(be, Uplo::Lower, View::dense(l, m, m)?, v),
                };
                let inner = RefineParams::default();
                gmres_iterations += g.solve(
                    be,
                    &mut apply,
                    &mut r,
                    ViewMut::dense(d, m, 1)?,
                    &mut precondition,
                    inner.inner_tolerance,
                )?;
                be.copy(View::dense(d, m, 1)?, ViewMut::dense(&mut r, m, 1)?)?;
            }
        }
        steps.push(max(&r)?);
        be.axpy(1.0, View::dense(&r, m, 1)?, ViewMut::dense(&mut x, m, 1)?)?;
    }
    let last = history.last().copied().unwrap_or(f64::NAN);
    Ok(Err(format!(
        "refinement did not converge in {} iterations (relative residual {last:.2e})",
        params.max_iterations
    )))
}

/// Estimate of `‖G⁻¹‖₁` from the Cholesky factor in `T`, by the
/// Hager–Higham estimator (LAPACK's `dlacn2`), a handful of solves. `G⁻¹` is
/// symmetric, so the transposed solves are the same solves.
fn inverse_norm1<B: Backend, T: Scalar>(be: &B, l: &B::Buffer<T>, m: usize) -> Result<f64> {
    condition::inverse_one_norm_on::<B, f64>(be, m, |v, _| correct(be, l, m, v))
}
