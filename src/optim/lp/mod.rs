//! Linear programming by a primal–dual interior-point method whose every
//! iteration forms `A·Θ·Aᵀ` with [`Matrix::scaled_gram`] and factors it by
//! Cholesky, the work gpumat does fastest.
//!
//! The method is Mehrotra's (1992) predictor–corrector applied to the
//! homogeneous self-dual embedding of Xu, Hung and Ye (1996), with upper
//! bounds kept as bounds (Andersen and Andersen 2000), so that an
//! infeasible or unbounded problem ends with a certificate rather than at
//! an iteration limit. The steps in order:
//!
//! - [`standard`]: the problem `min cᵀx` over `row_lower ≤ A·x ≤ row_upper`,
//!   `lower ≤ x ≤ upper` becomes `A·x = b` with `x ≥ 0`, `x ≤ u` on some
//!   columns and free columns: lower bounds shifted to zero, upper-only
//!   columns reflected, fixed columns and empty rows removed, one slack
//!   column per inequality or ranged row; no column is split in two.
//! - [`scaling`]: Ruiz's (2001) equilibration of rows and columns by powers
//!   of two (exact), and of `b` and `c` as a whole.
//! - [`normal`]: the normal equations `(A·Θ·Aᵀ + δ·I)·Δy = r` on the
//!   device: dual regularization `δ` (Altman and Gondzio 1999) that grows
//!   when the factorization meets a non-positive pivot, which is how
//!   linearly dependent rows are handled; preconditioned conjugate
//!   gradients with the Cholesky factor as preconditioner, which is
//!   iterative refinement of the step, and lets the factor be FP32 with
//!   `LpPrecision::Mixed`.
//! - [`hsd`]: the iterations and the stopping tests.
//! - [`random`]: dense random LPs with a known optimum, for tests and
//!   benchmarks.

mod hsd;
mod normal;
pub mod random;
mod scaling;
mod standard;

use crate::io::mps::{LinearProgram, Sense};
use rayon::prelude::*;

use crate::solve::check;
use crate::{Device, Error, Result, SymStorage};

/// A linear program with a dense constraint matrix: optimize
/// `cᵀx + constant` subject to `row_lower ≤ A·x ≤ row_upper` and
/// `lower ≤ x ≤ upper` (infinite bounds where there are none).
#[derive(Clone, Debug, Default)]
pub struct DenseLp {
    pub sense: Sense,
    /// Rows of `A`.
    pub m: usize,
    /// Columns of `A`.
    pub n: usize,
    /// `A`, `m × n`, column-major.
    pub a: Vec<f64>,
    pub c: Vec<f64>,
    pub constant: f64,
    pub row_lower: Vec<f64>,
    pub row_upper: Vec<f64>,
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
}

impl DenseLp {
    /// `min cᵀx` subject to `A·x = b`, `x ≥ 0`, for `A` of `m × n`
    /// (column-major).
    pub fn standard_form(m: usize, n: usize, a: Vec<f64>, b: Vec<f64>, c: Vec<f64>) -> Self {
        DenseLp {
            sense: Sense::Minimize,
            m,
            n,
            a,
            c,
            constant: 0.0,
            row_lower: b.clone(),
            row_upper: b,
            lower: vec![0.0; n],
            upper: vec![f64::INFINITY; n],
        }
    }

    /// The program an MPS file states, with `A` made dense. The dense array
    /// is refused, before it is allocated, when it would not fit in memory
    /// (`OutOfMemory`).
    pub fn from_mps(lp: &LinearProgram) -> Result<Self> {
        let (m, n) = (lp.rows.len(), lp.columns.len());
        let needed = m.checked_mul(n).and_then(|len| len.checked_mul(8)).unwrap_or(usize::MAX);
        let available = crate::backend::cpu::available_memory();
        let mut a = Vec::new();
        let len = needed / 8;
        if needed > available || a.try_reserve_exact(len).is_err() {
            return Err(Error::OutOfHostMemory {
                what: format!("the dense {m}×{n} constraint matrix"),
                needed,
                available,
            });
        }
        a.resize(len, 0.0);
        for &(i, j, v) in &lp.entries {
            a[i + j * m] = v;
        }
        let (row_lower, row_upper) = lp.row_bounds();
        Ok(DenseLp {
            sense: lp.sense,
            m,
            n,
            a,
            c: lp.c.clone(),
            constant: lp.constant,
            row_lower,
            row_upper,
            lower: lp.lower.clone(),
            upper: lp.upper.clone(),
        })
    }

    /// Shapes, and the values a solver cannot take: a NaN anywhere, an
    /// infinity in `A`, `c` or the constant, a lower bound of `+∞` or an
    /// upper bound of `−∞`.
    fn check(&self) -> Result<()> {
        let dims = |what: &str, got: usize, want: usize| {
            if got == want { Ok(()) } else { Err(Error::dims("lp", format!("{what} has {got} entries, need {want}"))) }
        };
        dims("A", self.a.len(), self.m * self.n)?;
        dims("c", self.c.len(), self.n)?;
        dims("row_lower", self.row_lower.len(), self.m)?;
        dims("row_upper", self.row_upper.len(), self.m)?;
        dims("lower", self.lower.len(), self.n)?;
        dims("upper", self.upper.len(), self.n)?;
        // A is the one large array: searched on all threads.
        if let Some(k) = self.a.par_iter().position_first(|v| !v.is_finite()) {
            let rows = self.m.max(1);
            return Err(Error::NonFinite { what: "A".into(), row: k % rows + 1, col: k / rows + 1, value: self.a[k] });
        }
        check::finite("c", &self.c, 1)?;
        check::finite("objective constant", &[self.constant], 1)?;
        let bad = |what: &str, v: &[f64], wrong: f64, rows: usize| -> Result<()> {
            match v.iter().position(|&x| x.is_nan() || x == wrong) {
                Some(k) => {
                    Err(Error::NonFinite { what: what.into(), row: k % rows + 1, col: k / rows + 1, value: v[k] })
                }
                None => Ok(()),
            }
        };
        bad("row lower bounds", &self.row_lower, f64::INFINITY, self.m.max(1))?;
        bad("row upper bounds", &self.row_upper, f64::NEG_INFINITY, self.m.max(1))?;
        bad("column lower bounds", &self.lower, f64::INFINITY, 1)?;
        bad("column upper bounds", &self.upper, f64::NEG_INFINITY, 1)
    }
}

/// The precision the normal matrix is formed and factored in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LpPrecision {
    /// FP64 throughout.
    #[default]
    F64,
    /// `A·Θ·Aᵀ` formed and factored in FP32 from an FP32 copy of `A`, each
    /// step refined to FP64 accuracy by conjugate gradients on the FP64
    /// normal equations; once FP32 no longer serves (a failed factorization
    /// or refinement that does not converge, as happens near the optimum
    /// where `Θ` spreads over many orders of magnitude), the remaining
    /// iterations use FP64.
    Mixed,
}

/// Options of [`solve`].
#[derive(Clone, Debug)]
pub struct LpOptions {
    /// Relative primal and dual infeasibility and relative gap at which the
    /// solution is optimal (and the relative residual of an infeasibility
    /// certificate).
    pub tolerance: f64,
    pub max_iterations: usize,
    /// The normal matrix's storage: full, or RFP in half the memory.
    pub storage: SymStorage,
    pub precision: LpPrecision,
    /// Equilibrate the problem before solving (recommended).
    pub scale: bool,
}

impl Default for LpOptions {
    fn default() -> Self {
        LpOptions {
            tolerance: 1e-8,
            max_iterations: 200,
            storage: SymStorage::Full,
            precision: LpPrecision::F64,
            scale: true,
        }
    }
}

/// How a solve ended.
#[derive(Clone, Debug, PartialEq)]
pub enum LpStatus {
    /// Relative infeasibilities and gap below the tolerance.
    Optimal,
    /// No `x` satisfies the constraints; [`LpSolution::detail`] gives the
    /// certificate's residual, or names the row or column that shows it.
    Infeasible,
    /// Feasible directions along which the objective improves without end
    /// (the dual is infeasible); [`LpSolution::detail`] gives the ray's
    /// residual.
    Unbounded,
    /// The iteration limit came first.
    IterationLimit,
    /// The iterations stopped making progress or met a non-finite value;
    /// the string says which.
    NumericalFailure(String),
}

impl LpStatus {
    pub fn name(&self) -> &'static str {
        match self {
            LpStatus::Optimal => "optimal",
            LpStatus::Infeasible => "infeasible",
            LpStatus::Unbounded => "unbounded",
            LpStatus::IterationLimit => "iteration limit",
            LpStatus::NumericalFailure(_) => "numerical failure",
        }
    }
}

/// One iteration's figures, as solvers print them. Objectives are of the
/// problem as given (its sense and constant); infeasibilities and gap are
/// relative, of the scaled problem, as the stopping test reads them.
#[derive(Clone, Debug)]
pub struct Iteration {
    pub iteration: usize,
    pub primal_objective: f64,
    pub dual_objective: f64,
    pub primal_infeasibility: f64,
    pub dual_infeasibility: f64,
    pub gap: f64,
    /// The step length taken (primal and dual together); 0 before the first
    /// step.
    pub step: f64,
    /// `τ/κ` of the embedding: large when converging to an optimum, small
    /// when to a certificate of infeasibility.
    pub tau_over_kappa: f64,
    /// The precision of the normal matrix of the step that reached this
    /// iterate: "f64" or "f32" (the one to come at iteration 0).
    pub factor: &'static str,
    /// The dual regularization `δ` of that step (0 at iteration 0).
    pub regularization: f64,
    /// Seconds since the solve began.
    pub seconds: f64,
}

/// Where the time went, in seconds.
#[derive(Clone, Debug, Default)]
pub struct LpTimings {
    /// Checking the problem, reducing it to standard form, scaling it and
    /// uploading `A`.
    pub setup: f64,
    /// Forming `A·Θ·Aᵀ`.
    pub form: f64,
    /// Factoring it.
    pub factor: f64,
    /// Solves, refinement and products with `A` and `Aᵀ`, and the host's
    /// vector work.
    pub solve: f64,
    pub total: f64,
}

/// What [`solve`] found.
#[derive(Clone, Debug)]
pub struct LpSolution {
    pub status: LpStatus,
    /// How the status was decided, in words (e.g. the certificate's
    /// residual, or the row that makes the problem infeasible).
    pub detail: String,
    /// The objective at `x`, in the problem's sense, constant included.
    pub objective: f64,
    /// The dual objective, in the same terms.
    pub dual_objective: f64,
    /// The columns' values (for an optimum; the last iterate otherwise).
    pub x: Vec<f64>,
    /// `A·x`.
    pub row_activity: Vec<f64>,
    /// The rows' dual values (Lagrange multipliers, in the problem's sense).
    pub y: Vec<f64>,
    /// The columns' reduced costs `c − Aᵀ·y`.
    pub reduced_costs: Vec<f64>,
    /// Of `x` in the problem as given: the largest violation of a row or
    /// column bound, relative to `1 + ‖bounds‖∞`.
    pub primal_residual: f64,
    /// Of the dual in the problem as given: the largest violation of dual
    /// feasibility relative to `1 + ‖c‖∞`.
    pub dual_residual: f64,
    /// `|primal − dual objective| / (1 + |primal objective|)`.
    pub relative_gap: f64,
    pub iterations: usize,
    pub history: Vec<Iteration>,
    pub timings: LpTimings,
    /// Iterations whose normal matrix was factored in FP32.
    pub mixed_iterations: usize,
    /// Conjugate-gradient steps that refined the normal equations' solves,
    /// over all iterations.
    pub refinement_steps: usize,
    /// What the reduction to standard form did that a user should know
    /// (rows removed, regularization raised, a switch to FP64).
    pub notes: Vec<String>,
}

/// Solves `lp` on `device`.
///
/// `Err` is kept for input that is not a linear program (shapes, NaN) and
/// for failures of the device; infeasibility, unboundedness, the iteration
/// limit and numerical trouble are statuses of the [`LpSolution`].
pub fn solve(device: &Device, lp: DenseLp, options: &LpOptions) -> Result<LpSolution> {
    solve_logged(device, lp, options, &mut |_| {})
}

/// [`solve`], calling `log` after each iteration.
pub fn solve_logged(
    device: &Device,
    lp: DenseLp,
    options: &LpOptions,
    log: &mut dyn FnMut(&Iteration),
) -> Result<LpSolution> {
    let start = std::time::Instant::now();
    lp.check()?;
    if !(options.tolerance > 0.0 && options.tolerance < 1.0) {
        return Err(Error::InvalidArgument(format!("lp: tolerance {} is not in (0, 1)", options.tolerance)));
    }
    hsd::solve(device, lp, options, log, start)
}
