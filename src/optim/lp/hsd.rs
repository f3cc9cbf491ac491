//! Mehrotra's predictor–corrector on the homogeneous self-dual embedding
//! (Xu, Hung and Ye 1996) of the standard form, with upper bounds as bounds
//! (Andersen and Andersen 2000):
//!
//! ```text
//! A·x = b·τ,   x_U + w = u·τ,   Aᵀ·y + z − v = c·τ,
//! bᵀy − uᵀv − cᵀx − κ = 0,   x_L, z_L, w, v, τ, κ ≥ 0,   z_F = 0,
//! ```
//!
//! `L` the columns with a lower bound (all but the free ones), `U` those
//! with an upper bound too. From the start `x = z = w = v = 1`, `y = 0`,
//! `τ = κ = 1` the iterates reach either `τ > 0`, whose `(x, y, z)/τ` is
//! optimal, or `κ > 0`, where `(y, z, v)` proves the primal infeasible
//! (`Aᵀy + z − v = 0` with `bᵀy − uᵀv > 0`) or `x` proves the dual
//! infeasible (`A·x = 0`, `x_U = 0`, `cᵀx < 0`). Each Newton system reduces
//! to the normal equations for two right-hand sides, one of them (the
//! column of `τ`) shared by predictor and corrector.
//!
//! Free columns get the proximal primal regularization `ρ` in place of a
//! barrier (`Θ⁻¹ = ρ`), which bounds their entries of `Θ` without splitting
//! them into two bounded columns.

use std::time::Instant;

use super::normal::Normal;
use super::scaling::{self, Scaling};
use super::standard::{self, Reduced, Standard};
use super::{DenseLp, Iteration, LpOptions, LpSolution, LpStatus, LpTimings};
use crate::{Device, Error, Result};

/// The proximal regularization of free columns.
const RHO_FREE: f64 = 1e-8;
/// The fraction of the way to the boundary a step goes: 0.5 % short while
/// far from the optimum, 0.01 % once `μ` (of the scaled problem) is below
/// 1e−6, so that each of the last iterations gains four orders of magnitude
/// rather than two.
fn step_fraction(mu: f64) -> f64 {
    if mu < 1e-6 { 0.9999 } else { 0.995 }
}
/// Iterations without a tenfold gain in progress (the worst of the three
/// stopping measures, or `μ`) after which the method has stalled.
const STALL_ITERATIONS: usize = 30;

/// An iterate, or a direction: `w` and `v` are zero off `U`, `z` off `L`.
#[derive(Clone)]
struct Point {
    x: Vec<f64>,
    w: Vec<f64>,
    z: Vec<f64>,
    v: Vec<f64>,
    y: Vec<f64>,
    tau: f64,
    kappa: f64,
}

/// Which bounds a column has.
struct Columns {
    lower: Vec<bool>,
    upper: Vec<bool>,
    pairs: f64,
}

impl Columns {
    fn of(s: &Standard) -> Self {
        let lower: Vec<bool> = s.free.iter().map(|f| !f).collect();
        let upper: Vec<bool> = s.upper.iter().map(|u| u.is_finite()).collect();
        let pairs = (lower.iter().filter(|&&l| l).count() + upper.iter().filter(|&&u| u).count() + 1) as f64;
        Columns { lower, upper, pairs }
    }
}

impl Point {
    fn start(s: &Standard, cols: &Columns) -> Self {
        let one = |mask: &[bool]| mask.iter().map(|&b| if b { 1.0 } else { 0.0 }).collect::<Vec<f64>>();
        Point {
            x: one(&cols.lower),
            w: one(&cols.upper),
            z: one(&cols.lower),
            v: one(&cols.upper),
            y: vec![0.0; s.m],
            tau: 1.0,
            kappa: 1.0,
        }
    }

    /// The complementarity products' sum.
    fn complementarity(&self, cols: &Columns) -> f64 {
        let mut sum = self.tau * self.kappa;
        for j in 0..self.x.len() {
            if cols.lower[j] {
                sum += self.x[j] * self.z[j];
            }
            if cols.upper[j] {
                sum += self.w[j] * self.v[j];
            }
        }
        sum
    }

    /// The longest step `α ≤ 1` along `d` that keeps the bounded parts
    /// nonnegative.
    fn max_step(&self, d: &Point, cols: &Columns) -> f64 {
        let limit = |v: f64, dv: f64| if dv < 0.0 { -v / dv } else { f64::INFINITY };
        let mut alpha = 1.0f64.min(limit(self.tau, d.tau)).min(limit(self.kappa, d.kappa));
        for j in 0..self.x.len() {
            if cols.lower[j] {
                alpha = alpha.min(limit(self.x[j], d.x[j])).min(limit(self.z[j], d.z[j]));
            }
            if cols.upper[j] {
                alpha = alpha.min(limit(self.w[j], d.w[j])).min(limit(self.v[j], d.v[j]));
            }
        }
        alpha
    }

    fn axpy(&mut self, alpha: f64, d: &Point) {
        let add = |a: &mut Vec<f64>, b: &[f64]| a.iter_mut().zip(b).for_each(|(a, b)| *a += alpha * b);
        add(&mut self.x, &d.x);
        add(&mut self.w, &d.w);
        add(&mut self.z, &d.z);
        add(&mut self.v, &d.v);
        add(&mut self.y, &d.y);
        self.tau += alpha * d.tau;
        self.kappa += alpha * d.kappa;
    }
}

/// The embedding's residuals at a point.
struct Residuals {
    /// `b·τ − A·x`.
    primal: Vec<f64>,
    /// `u·τ − x − w` on `U`.
    upper: Vec<f64>,
    /// `c·τ − Aᵀy − z + v`.
    dual: Vec<f64>,
    /// `κ + cᵀx − bᵀy + uᵀv`.
    gap: f64,
    ax: Vec<f64>,
    aty: Vec<f64>,
}

/// The right-hand sides of the complementarity rows: `X·Δz + Z·Δx = xz`,
/// `W·Δv + V·Δw = wv`, `κ·Δτ + τ·Δκ = tk`.
struct Targets {
    xz: Vec<f64>,
    wv: Vec<f64>,
    tk: f64,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn inf_norm(a: &[f64]) -> f64 {
    a.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// The problem on the device with its bounds: everything a Newton step
/// reads.
struct Newton<'a> {
    s: &'a Standard,
    cols: &'a Columns,
    normal: Normal,
    /// `u` with 0 where there is none.
    u: Vec<f64>,
    theta: Vec<f64>,
    /// The solution for the column of `τ`: `(Δx₂, Δy₂)`.
    tau_column: (Vec<f64>, Vec<f64>),
}

impl Newton<'_> {
    fn residuals(&self, p: &Point) -> Result<Residuals> {
        let s = self.s;
        let ax = self.normal.product(&p.x, 1)?;
        let aty = self.normal.tr_product(&p.y, 1)?;
        let primal = s.b.iter().zip(&ax).map(|(b, ax)| b * p.tau - ax).collect();
        let upper =
            (0..s.n).map(|j| if self.cols.upper[j] { self.u[j] * p.tau - p.x[j] - p.w[j] } else { 0.0 }).collect();
        let dual = (0..s.n).map(|j| s.c[j] * p.tau - aty[j] - p.z[j] + p.v[j]).collect();
        let gap = p.kappa + dot(&s.c, &p.x) - dot(&s.b, &p.y) + dot(&self.u, &p.v);
        Ok(Residuals { primal, upper, dual, gap, ax, aty })
    }

    /// Forms and factors the normal matrix at `p`, and solves for the
    /// column of `τ`. `Ok(false)`: the FP32 factor did not serve, factor
    /// again (now in FP64).
    fn factor(&mut self, p: &Point) -> Result<bool> {
        let cols = self.cols;
        for j in 0..p.x.len() {
            let mut inverse = if cols.lower[j] { p.z[j] / p.x[j] } else { RHO_FREE };
            if cols.upper[j] {
                inverse += p.v[j] / p.w[j];
            }
            self.theta[j] = 1.0 / inverse;
        }
        self.normal.factor(&self.theta)?;
        // g = c − W⁻¹·V·u: the column of τ.
        let g: Vec<f64> = (0..p.x.len())
            .map(|j| self.s.c[j] - if cols.upper[j] { p.v[j] / p.w[j] * self.u[j] } else { 0.0 })
            .collect();
        match self.solve_pair(&g, &self.s.b.clone())? {
            Some(col) => {
                self.tau_column = col;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// `(Δx, Δy)` of `Aᵀ·Δy − Θ⁻¹·Δx = f`, `A·Δx = h`.
    fn solve_pair(&mut self, f: &[f64], h: &[f64]) -> Result<Option<(Vec<f64>, Vec<f64>)>> {
        let tf: Vec<f64> = f.iter().zip(&self.theta).map(|(f, t)| f * t).collect();
        let mut rhs = self.normal.product(&tf, 1)?;
        rhs.iter_mut().zip(h).for_each(|(r, h)| *r += h);
        let Some(dy) = self.normal.solve(&rhs, 1)? else { return Ok(None) };
        let atdy = self.normal.tr_product(&dy, 1)?;
        let dx = (0..f.len()).map(|j| self.theta[j] * (atdy[j] - f[j])).collect();
        Ok(Some((dx, dy)))
    }

    /// The Newton direction that reduces the residuals by `1 − η` and aims
    /// the complementarity products at `t`; `None` as for
    /// [`factor`](Self::factor).
    fn direction(&mut self, p: &Point, r: &Residuals, eta: f64, t: &Targets) -> Result<Option<Point>> {
        let cols = self.cols;
        let n = p.x.len();
        let f: Vec<f64> = (0..n)
            .map(|j| {
                let mut f = eta * r.dual[j];
                if cols.lower[j] {
                    f -= t.xz[j] / p.x[j];
                }
                if cols.upper[j] {
                    f += (t.wv[j] - p.v[j] * eta * r.upper[j]) / p.w[j];
                }
                f
            })
            .collect();
        let h: Vec<f64> = r.primal.iter().map(|v| eta * v).collect();
        let Some((dx1, dy1)) = self.solve_pair(&f, &h)? else { return Ok(None) };
        let (u, (dx2, dy2)) = (&self.u, &self.tau_column);
        let on_u = |j: usize, v: f64| if cols.upper[j] { v } else { 0.0 };
        let dv1: Vec<f64> =
            (0..n).map(|j| on_u(j, (t.wv[j] - p.v[j] * eta * r.upper[j] + p.v[j] * dx1[j]) / p.w[j])).collect();
        let dv2: Vec<f64> = (0..n).map(|j| on_u(j, p.v[j] * (dx2[j] - u[j]) / p.w[j])).collect();
        let s = self.s;
        let numerator = eta * r.gap + t.tk / p.tau + dot(&s.c, &dx1) - dot(&s.b, &dy1) + dot(u, &dv1);
        let denominator = -dot(&s.c, dx2) + dot(&s.b, dy2) - dot(u, &dv2) + p.kappa / p.tau;
        let dtau = numerator / denominator;
        let dx: Vec<f64> = dx1.iter().zip(dx2).map(|(a, b)| a + dtau * b).collect();
        let dy: Vec<f64> = dy1.iter().zip(dy2).map(|(a, b)| a + dtau * b).collect();
        let dv: Vec<f64> = dv1.iter().zip(&dv2).map(|(a, b)| a + dtau * b).collect();
        let dz = (0..n).map(|j| if cols.lower[j] { (t.xz[j] - p.z[j] * dx[j]) / p.x[j] } else { 0.0 }).collect();
        let dw = (0..n).map(|j| on_u(j, eta * r.upper[j] + u[j] * dtau - dx[j])).collect();
        let dkappa = (t.tk - p.kappa * dtau) / p.tau;
        Ok(Some(Point { x: dx, w: dw, z: dz, v: dv, y: dy, tau: dtau, kappa: dkappa }))
    }

    /// Mehrotra's predictor and corrector at `p`, or `None` as for
    /// [`factor`](Self::factor).
    fn step(&mut self, p: &Point, r: &Residuals, mu: f64) -> Result<Option<(Point, f64)>> {
        let cols = self.cols;
        let n = p.x.len();
        let on = |mask: &[bool], f: &dyn Fn(usize) -> f64| (0..n).map(|j| if mask[j] { f(j) } else { 0.0 }).collect();
        let affine = Targets {
            xz: on(&cols.lower, &|j| -p.x[j] * p.z[j]),
            wv: on(&cols.upper, &|j| -p.w[j] * p.v[j]),
            tk: -p.tau * p.kappa,
        };
        let Some(da) = self.direction(p, r, 1.0, &affine)? else { return Ok(None) };
        let alpha = p.max_step(&da, cols);
        let mut trial = p.clone();
        trial.axpy(alpha, &da);
        let sigma = (trial.complementarity(cols) / cols.pairs / mu).clamp(0.0, 1.0).powi(3);
        let target = sigma * mu;
        let corrector = Targets {
            xz: on(&cols.lower, &|j| target - p.x[j] * p.z[j] - da.x[j] * da.z[j]),
            wv: on(&cols.upper, &|j| target - p.w[j] * p.v[j] - da.w[j] * da.v[j]),
            tk: target - p.tau * p.kappa - da.tau * da.kappa,
        };
        let Some(d) = self.direction(p, r, 1.0 - sigma, &corrector)? else { return Ok(None) };
        let alpha = (step_fraction(mu) * p.max_step(&d, cols)).min(1.0);
        Ok(Some((d, alpha)))
    }
}

pub(super) fn solve(
    device: &Device,
    lp: DenseLp,
    options: &LpOptions,
    log: &mut dyn FnMut(&Iteration),
    start: Instant,
) -> Result<LpSolution> {
    let (mut s, mut notes) = match standard::reduce(lp) {
        Reduced::Standard(s, notes) => (s, notes),
        Reduced::Infeasible(why) => return Ok(LpSolution::decided(LpStatus::Infeasible, why, start)),
    };
    if s.m == 0 {
        // One zero row `0·x = 0` keeps every array non-empty; its dual is
        // held at 0 by the regularization.
        s.m = 1;
        s.a = vec![0.0; s.n];
        s.b = vec![0.0];
    }
    let scaling = if options.scale { scaling::equilibrate(&mut s, 20) } else { Scaling::identity(s.m, s.n) };
    let cols = Columns::of(&s);
    let normal = Normal::new(device, s.m, s.n, &s.a, options.storage, options.precision)?;
    s.a = Vec::new();
    let u = s.upper.iter().map(|&u| if u.is_finite() { u } else { 0.0 }).collect();
    let mut newton = Newton { s: &s, cols: &cols, normal, u, theta: vec![0.0; s.n], tau_column: (vec![], vec![]) };
    let setup = start.elapsed().as_secs_f64();

    let tol = options.tolerance;
    let b_scale = 1.0 + inf_norm(&s.b).max(inf_norm(&newton.u));
    let c_scale = 1.0 + inf_norm(&s.c);
    let mut p = Point::start(&s, &cols);
    let mut history = Vec::new();
    let mut step = 0.0;
    let mut mixed_iterations = 0;
    let (mut best, mut best_at) = (f64::INFINITY, 0);
    let mut status = LpStatus::IterationLimit;
    let mut detail = format!("{} iterations without convergence", options.max_iterations);
    for k in 0..=options.max_iterations {
        let r = newton.residuals(&p)?;
        let mu = p.complementarity(&cols) / cols.pairs;
        let primal_obj = dot(&s.c, &p.x) / p.tau;
        let dual_obj = (dot(&s.b, &p.y) - dot(&newton.u, &p.v)) / p.tau;
        let pinf = inf_norm(&r.primal).max(inf_norm(&r.upper)) / p.tau / b_scale;
        let dinf = inf_norm(&r.dual) / p.tau / c_scale;
        // The gap in the problem's own units: the scaled objective's size
        // is the scaling's choice.
        let (primal_unscaled, dual_unscaled) = (scaling.objective(primal_obj), scaling.objective(dual_obj));
        let gap = (primal_unscaled - dual_unscaled).abs() / (1.0 + primal_unscaled.abs());
        let objective = |v: f64| s.objective(scaling.objective(v));
        let it = Iteration {
            iteration: k,
            primal_objective: objective(primal_obj),
            dual_objective: objective(dual_obj),
            primal_infeasibility: pinf,
            dual_infeasibility: dinf,
            gap,
            step,
            tau_over_kappa: p.tau / p.kappa,
            factor: newton.normal.precision(),
            regularization: newton.normal.delta,
            seconds: start.elapsed().as_secs_f64(),
        };
        log(&it);
        history.push(it);
        if ![mu, pinf, dinf, gap, p.tau, p.kappa].iter().all(|v| v.is_finite()) {
            status = LpStatus::NumericalFailure("the iterate is no longer finite".into());
            detail = "a NaN or infinity in the iterate".into();
            break;
        }
        if pinf <= tol && dinf <= tol && gap <= tol {
            status = LpStatus::Optimal;
            detail = format!("relative primal infeasibility {pinf:.1e}, dual {dinf:.1e}, gap {gap:.1e}");
            break;
        }
        // Certificates, looked for once τ has fallen below κ.
        if p.tau < p.kappa {
            let ray = dot(&s.b, &p.y) - dot(&newton.u, &p.v);
            let residual = (0..s.n).map(|j| r.aty[j] + p.z[j] - p.v[j]).fold(0.0f64, |m, v| m.max(v.abs()));
            if ray > 0.0 && residual <= tol * ray {
                status = LpStatus::Infeasible;
                detail = format!(
                    "a Farkas certificate: ‖Aᵀy + z − v‖∞ / (bᵀy − uᵀv) = {:.1e} in the scaled standard form",
                    residual / ray
                );
                break;
            }
            let descent = -dot(&s.c, &p.x);
            let upper_residual =
                (0..s.n).filter(|&j| cols.upper[j]).fold(0.0f64, |m, j| m.max((p.x[j] + p.w[j]).abs()));
            let residual = inf_norm(&r.ax).max(upper_residual);
            if descent > 0.0 && residual <= tol * descent {
                status = LpStatus::Unbounded;
                detail = format!(
                    "an improving ray: max(‖A·x‖∞, ‖x_U‖∞) / (−cᵀx) = {:.1e} in the scaled standard form",
                    residual / descent
                );
                break;
            }
        }
        // Progress: the worst stopping measure or, on the way to a
        // certificate (where those need not fall), μ.
        let worst = pinf.max(dinf).max(gap).min(mu);
        if worst < 0.1 * best {
            (best, best_at) = (worst, k);
        } else if k - best_at >= STALL_ITERATIONS {
            status = LpStatus::NumericalFailure(format!(
                "no progress in {STALL_ITERATIONS} iterations (measures at {:.1e}, tolerance {tol:.0e})",
                pinf.max(dinf).max(gap)
            ));
            detail = "stalled".into();
            break;
        }
        if k == options.max_iterations {
            break;
        }
        let f32_iteration = newton.normal.precision() == "f32";
        let (d, alpha) = loop {
            let stepped = match newton.factor(&p) {
                Ok(true) => newton.step(&p, &r, mu)?,
                Ok(false) => None,
                Err(e @ Error::NotPositiveDefinite { .. }) => {
                    status = LpStatus::NumericalFailure(format!("the normal matrix, regularized, {e}"));
                    detail = format!("regularization at its limit, δ = {:.1e}", newton.normal.delta);
                    break (None, 0.0);
                }
                Err(e) => return Err(e),
            };
            if let Some((d, alpha)) = stepped {
                break (Some(d), alpha);
            }
        };
        let Some(d) = d else { break };
        if f32_iteration && newton.normal.precision() == "f32" {
            mixed_iterations += 1;
        }
        p.axpy(alpha, &d);
        step = alpha;
    }

    // The answer in the problem's terms.
    let x_std = scaling.x(&p.x.iter().map(|v| v / p.tau).collect::<Vec<_>>());
    let y_std = scaling.y(&p.y.iter().map(|v| v / p.tau).collect::<Vec<_>>());
    let x = s.original_x(&x_std);
    // Unscaling `A` exactly: A_original·x on the kept rows is R⁻¹·A'·(S⁻¹·x).
    let v: Vec<f64> = s.structural(&x).iter().zip(&scaling.col).map(|(v, c)| v / c).collect();
    let ax: Vec<f64> = newton.normal.product(&v, 1)?.iter().zip(&scaling.row).map(|(v, r)| v / r).collect();
    let row_activity = s.row_activity(&ax, &x);
    // Reduced costs: A_stdᵀ·y is S⁻¹·A'ᵀ·(R⁻¹·y).
    let y = s.original_y(&y_std);
    let w: Vec<f64> = s.kept(&y).iter().zip(&scaling.row).map(|(y, r)| y / r).collect();
    let aty: Vec<f64> = newton.normal.tr_product(&w, 1)?.iter().zip(&scaling.col).map(|(t, c)| t / c).collect();
    let reduced_costs = s.reduced_costs(&aty, &y);
    let last = history.last().cloned();
    notes.append(&mut newton.normal.notes);
    let total = start.elapsed().as_secs_f64();
    let (form, factor) = (newton.normal.form_seconds, newton.normal.factor_seconds);
    Ok(LpSolution {
        status,
        detail,
        objective: dot(&s.original.c, &x) + s.original.constant,
        dual_objective: last.as_ref().map_or(f64::NAN, |l| l.dual_objective),
        primal_residual: s.original.violation(&x, &row_activity),
        dual_residual: last.as_ref().map_or(f64::NAN, |l| l.dual_infeasibility),
        relative_gap: last.as_ref().map_or(f64::NAN, |l| l.gap),
        y,
        reduced_costs,
        x,
        row_activity,
        iterations: history.len().saturating_sub(1),
        history,
        timings: LpTimings { setup, form, factor, solve: (total - setup - form - factor).max(0.0), total },
        mixed_iterations,
        refinement_steps: newton.normal.refinement_steps,
        notes,
    })
}

impl LpSolution {
    /// A status decided before any iteration.
    fn decided(status: LpStatus, detail: String, start: Instant) -> Self {
        let total = start.elapsed().as_secs_f64();
        LpSolution {
            status,
            detail,
            objective: f64::NAN,
            dual_objective: f64::NAN,
            x: Vec::new(),
            row_activity: Vec::new(),
            y: Vec::new(),
            reduced_costs: Vec::new(),
            primal_residual: f64::NAN,
            dual_residual: f64::NAN,
            relative_gap: f64::NAN,
            iterations: 0,
            history: Vec::new(),
            timings: LpTimings { setup: total, total, ..LpTimings::default() },
            mixed_iterations: 0,
            refinement_steps: 0,
            notes: Vec::new(),
        }
    }
}
