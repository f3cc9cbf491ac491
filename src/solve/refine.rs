//! Iterative refinement to FP64 accuracy of a solution from a low-precision
//! factorization `M ≈ A`.
//!
//! Each step computes the residual `r = b − A·x` in FP64 and a correction
//! `d` with `A·d ≈ r`:
//!
//! - **classical** refinement (Wilkinson 1948, Moler 1967) takes
//!   `d = M⁻¹·r`; it converges while `κ(A)·u_f < 1`, `u_f` the unit roundoff
//!   of the factorization;
//! - **GMRES-IR** (Carson and Higham 2017, 2018) solves `M⁻¹A·d = M⁻¹r` by
//!   GMRES in FP64, `M⁻¹` applied in the factor's precision (the
//!   five-precision analysis of Amestoy et al. 2024 covers that), and
//!   converges far beyond: with the factor's errors, the preconditioned
//!   matrix keeps most of its eigenvalues near 1 even when `κ(A)·u_f ≫ 1`.
//!
//! **Stopping rule.** The normwise backward error
//! `η = ‖r‖∞ / (‖A‖∞·‖x‖∞ + ‖b‖∞)` (Rigal and Gaches 1967) is computed at
//! every step. Refinement stops converged when `η ≤ √n·u` (`u = 2⁻⁵³`,
//! LAPACK's `dsgesv` test), or when it stops making progress (`η` no longer
//! halves) with `η ≤ n·u`. It fails — and the caller falls back to an FP64
//! factorization, saying why — when `η` grows, is not finite, stalls above
//! `n·u`, or the step limit is reached.

use crate::backend::{Backend, Norm, Op, View, ViewMut};
use crate::{Result, Scalar};

/// How the correction of each step is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Refinement {
    /// Classical steps while each correction is at most [`SWITCH_RATE`] of
    /// the one before, GMRES from the first step that shrinks less: as
    /// cheap as classical refinement where that converges fast (one
    /// application of `M⁻¹` a step), as robust as GMRES-IR where it would
    /// not.
    #[default]
    Auto,
    /// `d = M⁻¹·r`.
    Classical,
    /// `d` from GMRES on `M⁻¹A·d = M⁻¹r`.
    Gmres,
}

/// The contraction of classical refinement (the ratio of successive
/// corrections) above which [`Refinement::Auto`] turns to GMRES: 1/100,
/// two digits a step.
pub const SWITCH_RATE: f64 = 0.01;

impl Refinement {
    /// `auto`, `classical` or `gmres`.
    pub fn name(self) -> &'static str {
        match self {
            Refinement::Auto => "auto",
            Refinement::Classical => "classical",
            Refinement::Gmres => "gmres",
        }
    }
}

/// Limits of the refinement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefineParams {
    pub kind: Refinement,
    /// The most refinement steps (residuals) after the first solve.
    pub max_steps: usize,
    /// The most GMRES iterations of one step (the Krylov basis is kept, not
    /// restarted).
    pub max_inner: usize,
    /// GMRES stops when the preconditioned residual has shrunk by this
    /// much: the FP32 application of `M⁻¹` limits what more would buy.
    pub inner_tolerance: f64,
}

impl Default for RefineParams {
    fn default() -> Self {
        RefineParams { kind: Refinement::Auto, max_steps: 10, max_inner: 50, inner_tolerance: 1e-6 }
    }
}

/// What one right-hand side's refinement did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Steps {
    /// Refinement steps taken (residuals after the first solve's).
    pub steps: usize,
    /// GMRES iterations over all steps (each an application of `A` and of
    /// `M⁻¹`); 0 when every step was classical.
    pub inner: usize,
    /// `η` after the first solve and after each step.
    pub history: Vec<f64>,
    /// Why it failed, when it did.
    pub failure: Option<String>,
}

impl Steps {
    /// The backward error of the iterate kept (the best), NaN before any.
    pub fn backward_error(&self) -> f64 {
        self.history.iter().copied().reduce(f64::min).unwrap_or(f64::NAN)
    }
}

/// `x` with `A·x = b` to FP64 accuracy (`A` `n × n`, `b` and `x` `n × 1`),
/// from `precondition`, which overwrites an `n`-vector `v` with `M⁻¹·v`.
/// `x` starts as `M⁻¹·b` and ends as the iterate of smallest backward
/// error; [`Steps::failure`] says why refinement failed, when it did.
pub fn refine<B: Backend>(
    be: &B,
    a: View<'_, B, f64>,
    b: View<'_, B, f64>,
    mut x: ViewMut<'_, B, f64>,
    precondition: &mut Preconditioner<'_, B>,
    params: &RefineParams,
) -> Result<Steps> {
    let n = a.rows();
    let u = f64::unit_roundoff();
    let (a_norm, b_norm) = (be.norm(Norm::Inf, a)?, be.norm(Norm::Max, b)?);
    let mut report = Steps::default();
    be.copy(b, x.rb_mut())?;
    precondition(x.rb_mut())?;
    let mut r = be.alloc::<f64>(n)?;
    let mut best = be.alloc::<f64>(n)?;
    let target = (n as f64).sqrt().max(1.0) * u;
    let floor = (n as f64).max(1.0) * u;
    let mut gmres = match params.kind {
        Refinement::Gmres => Some(Gmres::new(be, n, params.max_inner.max(1))?),
        Refinement::Classical | Refinement::Auto => None,
    };
    // The last correction, x₀ counting as the first.
    let mut last_correction = be.norm(Norm::Max, x.rb())?;
    let mut switched = false;
    let mut best_eta = f64::INFINITY;
    for step in 0..=params.max_steps {
        // r = b − A·x.
        let rv = ViewMut::dense(&mut r, n, 1)?;
        be.copy(b, rv)?;
        be.gemm(-1.0, a, Op::NoTrans, x.rb(), Op::NoTrans, 1.0, ViewMut::dense(&mut r, n, 1)?)?;
        let r_norm = be.norm(Norm::Max, View::dense(&r, n, 1)?)?;
        let x_norm = be.norm(Norm::Max, x.rb())?;
        let scale = a_norm * x_norm + b_norm;
        let eta = if r_norm == 0.0 { 0.0 } else { r_norm / scale };
        report.history.push(eta);
        report.steps = step;
        if !eta.is_finite() {
            report.failure = Some(format!("the residual is not finite at step {step}"));
            break;
        }
        if eta < best_eta {
            best_eta = eta;
            be.copy(x.rb(), ViewMut::dense(&mut best, n, 1)?)?;
        }
        if eta <= target {
            return Ok(report);
        }
        // A step that turned to GMRES is judged by the next one, not by its
        // own slow classical correction.
        let judged = !std::mem::take(&mut switched);
        let h = &report.history;
        if let [.., before, last] = h[..]
            && last > 0.5 * before
            && judged
        {
            if best_eta <= floor {
                break;
            }
            report.failure = Some(if last > 2.0 * before {
                format!("refinement diverged at step {step} (backward error {last:.2e}, was {before:.2e})")
            } else {
                format!("refinement stalled at step {step} (backward error {last:.2e}, above n·u = {floor:.2e})")
            });
            break;
        }
        if step == params.max_steps {
            report.failure = Some(format!("refinement did not converge in {step} steps (backward error {eta:.2e})"));
            break;
        }
        match &mut gmres {
            None => {
                precondition(ViewMut::dense(&mut r, n, 1)?)?;
                be.axpy(1.0, View::dense(&r, n, 1)?, x.rb_mut())?;
                if params.kind == Refinement::Auto {
                    let d = be.norm(Norm::Max, View::dense(&r, n, 1)?)?;
                    if d > SWITCH_RATE * last_correction {
                        gmres = Some(Gmres::new(be, n, params.max_inner.max(1))?);
                        switched = true;
                    }
                    last_correction = d;
                }
            }
            Some(g) => {
                let mut apply =
                    |v: View<'_, B, f64>, w: ViewMut<'_, B, f64>| be.gemm(1.0, a, Op::NoTrans, v, Op::NoTrans, 0.0, w);
                report.inner += g.solve(be, &mut apply, &mut r, x.rb_mut(), precondition, params.inner_tolerance)?;
            }
        }
    }
    // The best iterate, which the caller keeps when it cannot fall back.
    be.copy(View::dense(&best, n, 1)?, x)?;
    Ok(report)
}

/// A product `w := A·v` of `n`-vectors.
pub type Operator<'o, B> = dyn FnMut(View<'_, B, f64>, ViewMut<'_, B, f64>) -> Result<()> + 'o;

/// A preconditioner `v := M⁻¹·v` of an `n`-vector.
pub type Preconditioner<'o, B> = dyn FnMut(ViewMut<'_, B, f64>) -> Result<()> + 'o;

/// GMRES on `M⁻¹A·d = M⁻¹r` with left preconditioning, its Krylov basis
/// orthogonalized by classical Gram–Schmidt twice (Giraud et al. 2005):
/// two products with the basis per iteration instead of one per vector.
pub struct Gmres<B: Backend> {
    /// The orthonormal basis, `n × (m + 1)`.
    v: B::Buffer<f64>,
    /// A column of `H`'s coefficients, `m + 1` entries, and a second for
    /// the reorthogonalization.
    h: [B::Buffer<f64>; 2],
    n: usize,
    m: usize,
}

impl<B: Backend> Gmres<B> {
    /// For `n`-vectors, at most `m` iterations a solve.
    pub fn new(be: &B, n: usize, m: usize) -> Result<Self> {
        Ok(Gmres { v: be.alloc(n * (m + 1))?, h: [be.alloc(m + 1)?, be.alloc(m + 1)?], n, m })
    }

    /// `x += d` for `d` from GMRES on `A·d = r` with the initial guess 0,
    /// `A` applied by `apply`; `r` is overwritten. Stops when the
    /// preconditioned residual has shrunk by `tolerance`. Returns the
    /// iterations taken.
    pub fn solve(
        &mut self,
        be: &B,
        apply: &mut Operator<'_, B>,
        r: &mut B::Buffer<f64>,
        x: ViewMut<'_, B, f64>,
        precondition: &mut Preconditioner<'_, B>,
        tolerance: f64,
    ) -> Result<usize> {
        let (n, m) = (self.n, self.m);
        precondition(ViewMut::dense(r, n, 1)?)?;
        let beta = be.norm(Norm::Frobenius, View::dense(r, n, 1)?)?;
        if beta == 0.0 || !beta.is_finite() {
            return Ok(0);
        }
        fn basis<B: Backend>(v: &B::Buffer<f64>, n: usize, m: usize, j: usize, len: usize) -> Result<View<'_, B, f64>> {
            View::dense(v, n, m + 1)?.sub(0, j, n, len)
        }
        be.copy(View::dense(r, n, 1)?, ViewMut::dense(&mut self.v, n, m + 1)?.sub_mut(0, 0, n, 1)?)?;
        be.scale(1.0 / beta, ViewMut::dense(&mut self.v, n, m + 1)?.sub_mut(0, 0, n, 1)?)?;
        // The Hessenberg matrix reduced to triangular by Givens rotations
        // (columns on the host), the rotations, and g = β·e₁ rotated.
        let mut rcols: Vec<Vec<f64>> = Vec::with_capacity(m);
        let mut rotations: Vec<(f64, f64)> = Vec::with_capacity(m);
        let mut g = vec![0.0; m + 1];
        g[0] = beta;
        let mut host = vec![0.0; m + 1];
        let mut k = 0;
        while k < m {
            // w = M⁻¹·A·v_k, in column k + 1 of the basis.
            {
                let (prior, w) = split_columns::<B>(&mut self.v, n, m, k)?;
                apply(prior.sub(0, k, n, 1)?, w)?;
            }
            precondition(ViewMut::dense(&mut self.v, n, m + 1)?.sub_mut(0, k + 1, n, 1)?)?;
            // Two passes of h = Vᵀw, w −= V·h over the first k + 1 vectors.
            for pass in 0..2 {
                let (prior, w) = split_columns::<B>(&mut self.v, n, m, k)?;
                let hv = ViewMut::dense(&mut self.h[pass], k + 1, 1)?;
                be.gemm(1.0, prior, Op::Trans, w.rb(), Op::NoTrans, 0.0, hv)?;
                be.gemm(-1.0, prior, Op::NoTrans, View::dense(&self.h[pass], k + 1, 1)?, Op::NoTrans, 1.0, w)?;
            }
            let [h0, h1] = &mut self.h;
            be.axpy(1.0, View::dense(h1, k + 1, 1)?, ViewMut::dense(h0, k + 1, 1)?)?;
            // ‖w‖² beside h: the iteration's one read to the host. A square
            // that over- or underflows is taken again as a scaled norm.
            {
                let w = basis::<B>(&self.v, n, m, k + 1, 1)?;
                let sq = ViewMut::dense(h0, k + 2, 1)?.sub_mut(k + 1, 0, 1, 1)?;
                be.gemm(1.0, w, Op::Trans, w, Op::NoTrans, 0.0, sq)?;
            }
            be.download(&self.h[0], &mut host)?;
            let w_norm = if host[k + 1].is_normal() {
                host[k + 1].sqrt()
            } else {
                be.norm(Norm::Frobenius, basis::<B>(&self.v, n, m, k + 1, 1)?)?
            };
            let mut col: Vec<f64> = host[..=k].to_vec();
            col.push(w_norm);
            if w_norm > 0.0 && w_norm.is_finite() {
                be.scale(1.0 / w_norm, ViewMut::dense(&mut self.v, n, m + 1)?.sub_mut(0, k + 1, n, 1)?)?;
            }
            // Apply the earlier rotations, then one that zeroes col[k + 1].
            for (i, &(c, s)) in rotations.iter().enumerate() {
                let (p, q) = (col[i], col[i + 1]);
                col[i] = c * p + s * q;
                col[i + 1] = -s * p + c * q;
            }
            let (p, q) = (col[k], col[k + 1]);
            let rho = p.hypot(q);
            let (c, s) = if rho == 0.0 { (1.0, 0.0) } else { (p / rho, q / rho) };
            col[k] = rho;
            col.truncate(k + 1);
            rotations.push((c, s));
            g[k + 1] = -s * g[k];
            g[k] *= c;
            rcols.push(col);
            k += 1;
            // A NaN norm breaks down too.
            let breakdown = w_norm.is_nan() || w_norm <= f64::MIN_POSITIVE * beta || rho == 0.0;
            if g[k].abs() <= tolerance * beta || breakdown || !g[k].is_finite() {
                break;
            }
        }
        // y from the triangular R·y = g, then x += V·y.
        let mut y = vec![0.0; k];
        for i in (0..k).rev() {
            let s: f64 = ((i + 1)..k).map(|j| rcols[j][i] * y[j]).sum();
            y[i] = if rcols[i][i] == 0.0 { 0.0 } else { (g[i] - s) / rcols[i][i] };
        }
        if k > 0 {
            let yd = be.upload(&y)?;
            be.gemm(1.0, basis::<B>(&self.v, n, m, 0, k)?, Op::NoTrans, View::dense(&yd, k, 1)?, Op::NoTrans, 1.0, x)?;
        }
        Ok(k)
    }
}

/// Columns `0..=k` of the basis (read) and column `k + 1` (written), apart.
fn split_columns<B: Backend>(
    v: &mut B::Buffer<f64>,
    n: usize,
    m: usize,
    k: usize,
) -> Result<(View<'_, B, f64>, ViewMut<'_, B, f64>)> {
    let (left, right) = ViewMut::dense(v, n, m + 1)?.split_at_col(k + 1)?;
    let (buf, block) = left.into_parts();
    Ok((View::new(buf, block)?, right.sub_mut(0, 0, n, 1)?))
}
