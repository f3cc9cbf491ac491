//! `Matrix::solve_mixed`: `A·X = B` to FP64 accuracy from a factorization
//! in single precision whose trailing updates run on the tensor cores in
//! FP16, BF16 or TF32, refined by GMRES-IR (Carson and Higham 2018) or
//! classical refinement, with an FP64 factorization as the fallback.
//!
//! An LU pivots partially, or, with [`LowLu::Butterfly`], not at all on
//! `Uᵀ·A·V` for random butterflies `U`, `V`, the pivoted LU behind it.
//!
//! Once rounded, `A` is scaled by powers of two — by rows and columns, or
//! symmetrically, when its rows or columns differ much in size, else as a
//! whole (`equilibrate::when_needed`; Higham, Pranesh and Zounon 2019 scale
//! so that FP16 neither overflows nor loses the small entries) — so that
//! its largest entry is below 1 and the products' operands stay below
//! FP16's 65504: `|lᵢⱼ| ≤ 1` and the rows of `U` are bounded by the growth
//! factor. Every answer is judged by its
//! normwise backward error in FP64; one that refinement cannot bring to
//! `n·u` is solved again by the FP64 factorization, and
//! [`Refined::fallback`] says why.

use std::time::{Duration, Instant};

use super::device::Resident;
use super::solve::takes_symmetric;
use super::{Cholesky, Lu, Matrix, Method, Norm, SolveOptions, SymStorage, validate};
use crate::backend::{Backend, Compute, Op, Pivoting, View, ViewMut, random};
use crate::factor::cholesky::CholeskyParams;
use crate::factor::condition;
use crate::factor::equilibrate::{self, Scaling, pow2};
use crate::factor::lu::LuParams;
use crate::solve::refine::{self, RefineParams, Refinement, Steps};
use crate::{Error, Result};

/// The precision of the factorization that a mixed-precision solve refines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FactorPrecision {
    /// FP64 throughout: no refinement.
    F64,
    /// FP32 throughout.
    F32,
    /// An FP32 factor whose trailing updates multiply in TF32.
    Tf32,
    /// An FP32 factor whose trailing updates multiply in IEEE half.
    Fp16,
    /// An FP32 factor whose trailing updates multiply in bfloat16.
    Bf16,
    /// An FP32 factor whose trailing updates take three IEEE half products
    /// of split operands: FP32's accuracy on the FP16 tensor cores
    /// ([`Compute::Fp16x3`]).
    Fp16x3,
}

impl FactorPrecision {
    /// The default on `device`: split FP16 on the tensor cores of a GPU,
    /// whose factor preconditions matrices as ill-conditioned as FP32's
    /// does (to κ ≈ 1e8) in a few iterations, where FP16 and TF32 need
    /// many from κ ≈ 1e3 on; FP32 on the CPU, which has no faster
    /// arithmetic to gain from rounding.
    pub fn default_for(device: &super::Device) -> Self {
        if device.is_cpu() { FactorPrecision::F32 } else { FactorPrecision::Fp16x3 }
    }

    /// The multiplications of the trailing updates; `None` for `F64`.
    pub fn compute(self) -> Option<Compute> {
        match self {
            FactorPrecision::F64 => None,
            FactorPrecision::F32 => Some(Compute::Native),
            FactorPrecision::Tf32 => Some(Compute::Tf32),
            FactorPrecision::Fp16 => Some(Compute::Fp16),
            FactorPrecision::Bf16 => Some(Compute::Bf16),
            FactorPrecision::Fp16x3 => Some(Compute::Fp16x3),
        }
    }

    /// `f64`, `f32`, `tf32`, `fp16`, `bf16` or `fp16x3`.
    pub fn name(self) -> &'static str {
        match self {
            FactorPrecision::F64 => "f64",
            FactorPrecision::F32 => "f32",
            FactorPrecision::Tf32 => "tf32",
            FactorPrecision::Fp16 => "fp16",
            FactorPrecision::Bf16 => "bf16",
            FactorPrecision::Fp16x3 => "fp16x3",
        }
    }
}

/// How the single-precision LU of a mixed-precision solve keeps its
/// elimination stable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LowLu {
    /// Partial pivoting, `P·A = L·U`: each column's pivot search is on the
    /// factorization's critical path.
    #[default]
    Pivoted,
    /// No pivoting after random butterflies of depth two, `Uᵀ·A·V = L·U`
    /// (Parker 1995; Baboulin, Dongarra, Herrmann and Tomov 2013):
    /// elimination is then stable with high probability, and refinement,
    /// whose residuals are those of `A` itself, corrects what it is not. A
    /// zero pivot, or a refinement that fails (as it does when elimination
    /// grew), turns to the pivoted LU ([`Refined::retried`] says why).
    Butterfly,
}

impl LowLu {
    /// `pivoted` or `butterfly`.
    pub fn name(self) -> &'static str {
        match self {
            LowLu::Pivoted => "pivoted",
            LowLu::Butterfly => "butterfly",
        }
    }
}

/// How [`Matrix::solve_mixed`] solves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MixedOptions {
    /// `Auto` (Cholesky for an exactly symmetric `A`, LU when the
    /// single-precision Cholesky fails or `A` is not symmetric), `Cholesky`
    /// or `Lu`. LDLᵀ has no mixed-precision path.
    pub method: Method,
    /// `None`: [`FactorPrecision::default_for`] the matrix's device.
    pub factor: Option<FactorPrecision>,
    /// How an LU keeps its elimination stable.
    pub lu: LowLu,
    pub refine: RefineParams,
    /// When refinement fails, solve with the FP64 factorization (`true`)
    /// or return [`Error::NotConverged`].
    pub fallback: bool,
    /// Passed to the FP64 solve of a fallback (see
    /// [`SolveOptions::allow_ill_conditioned`]).
    pub allow_ill_conditioned: bool,
    /// Estimate the condition number ([`Refined::rcond`]): a few more
    /// triangular solves, which benchmarks against solvers that make no
    /// estimate leave out.
    pub estimate_condition: bool,
}

impl Default for MixedOptions {
    fn default() -> Self {
        MixedOptions {
            method: Method::Auto,
            factor: None,
            lu: LowLu::default(),
            refine: RefineParams::default(),
            fallback: true,
            allow_ill_conditioned: false,
            estimate_condition: true,
        }
    }
}

/// Wall-clock times of a mixed-precision solve.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MixedTimings {
    /// Rounding, equilibration and the low-precision factorization (of
    /// both LUs when the butterflies' gave way to the pivoted one).
    pub factor: Duration,
    /// The first solve and the refinement (of both attempts, likewise).
    pub refine: Duration,
    /// The condition estimate.
    pub condition: Duration,
    /// The FP64 solve, when it came to that.
    pub fallback: Duration,
}

/// `X` with `A·X = B` to FP64 accuracy, and how it was reached.
#[derive(Debug)]
pub struct Refined {
    /// `n × k`, on `A`'s device.
    pub x: Matrix<f64>,
    /// The factorization that gave `X`: `Cholesky` or `Lu` (or, after a
    /// fallback with `Auto`, what the FP64 solve chose).
    pub method: Method,
    /// The precision of that factorization: `F64` after a fallback.
    pub factor: FactorPrecision,
    /// How that factorization, when a low-precision LU, was stabilized.
    pub lu: Option<LowLu>,
    /// Why the LU after random butterflies gave way to the pivoted one,
    /// when it did.
    pub retried: Option<String>,
    pub refinement: Refinement,
    /// The most refinement steps any column took.
    pub steps: usize,
    /// GMRES iterations over all steps and columns.
    pub inner: usize,
    /// `max_j ‖bⱼ − A·xⱼ‖∞ / (‖A‖∞·‖xⱼ‖∞ + ‖bⱼ‖∞)` in FP64, over the
    /// columns.
    pub backward_error: f64,
    /// The first column's backward error after the first solve and after
    /// each step.
    pub history: Vec<f64>,
    /// Why the low-precision factor did not give `X`, when it did not.
    pub fallback: Option<String>,
    /// Estimate of `1/κ₁(A)` (Hager–Higham, as LAPACK's `dgecon`) from the
    /// factor that gave `X`: the low-precision one, whose inverse is within
    /// a factor 2 of `A⁻¹` while `κ(A)·u_f ≤ 1/2` and a rougher guide
    /// beyond (where refinement still converges); NaN when not asked for.
    pub rcond: f64,
    pub timings: MixedTimings,
}

impl Matrix<f64> {
    /// `X` with `A·X = B` (`A` `n × n`, `B` `n × k`) to FP64 accuracy, from
    /// a low-precision factorization refined as `options` says; see the
    /// module documentation. Errors are those of
    /// [`solve_with`](Self::solve_with), raised before any work for bad
    /// operands; a failed refinement falls back to the FP64 solve (or is
    /// [`Error::NotConverged`] when `options.fallback` is off). Waits for
    /// the result.
    pub fn solve_mixed(&self, b: &Matrix<f64>, options: &MixedOptions) -> Result<Refined> {
        self.check_with(b)?;
        let n = validate::square("solve", self)?;
        if b.rows() != n {
            return Err(Error::dims("solve", format!("A is {n}×{n} but B has {} rows", b.rows())));
        }
        if let Method::Ldlt { .. } = options.method {
            return Err(Error::InvalidArgument(
                "mixed precision factors by Cholesky or LU; LDLᵀ solves in the working precision".into(),
            ));
        }
        validate::finite("A", self)?;
        validate::finite("B", b)?;
        let precision = options.factor.unwrap_or_else(|| FactorPrecision::default_for(self.device()));
        let Some(compute) = precision.compute() else {
            return self.solve_fp64(b, options, None, MixedTimings::default());
        };
        let symmetric = takes_symmetric(self, options.method)?;
        let mut timings = MixedTimings::default();
        let factor = (precision, compute);
        let mut attempt = with_backend!(self.device(), be => {
            low_precision(be, self, b, symmetric, options, factor, &mut timings)
        })?;
        let mut retried = None;
        if let Err(failure) = &attempt
            && failure.butterfly
        {
            // The butterflies' LU was reached (Cholesky, if tried, had
            // failed): the pivoted LU next, with no second Cholesky.
            retried = Some(failure.why.clone());
            let pivoted = MixedOptions { method: Method::Lu, lu: LowLu::Pivoted, ..*options };
            attempt = with_backend!(self.device(), be => {
                low_precision(be, self, b, false, &pivoted, factor, &mut timings)
            })?;
        }
        match attempt {
            Ok(refined) => Ok(Refined { retried, ..refined }),
            Err(failure) if options.fallback => {
                let refined = self.solve_fp64(b, options, Some(failure.why), timings)?;
                Ok(Refined { retried, ..refined })
            }
            Err(failure) => Err(Error::NotConverged {
                what: format!("mixed-precision refinement ({})", failure.why),
                iterations: failure.steps.steps,
                residual: failure.steps.backward_error(),
            }),
        }
    }

    /// The FP64 solve of [`solve_with`](Self::solve_with), reported as a
    /// [`Refined`].
    fn solve_fp64(
        &self,
        b: &Matrix<f64>,
        options: &MixedOptions,
        fallback: Option<String>,
        mut timings: MixedTimings,
    ) -> Result<Refined> {
        let start = Instant::now();
        let solve = SolveOptions {
            method: options.method,
            storage: SymStorage::Full,
            allow_ill_conditioned: options.allow_ill_conditioned,
            pivoting: None,
        };
        let solution = self.solve_with(b, &solve)?;
        let backward_error = with_backend!(self.device(), be => {
            normwise_backward_error(be, self.view()?, b.view()?, solution.x.view()?)
        })?;
        timings.fallback = start.elapsed();
        Ok(Refined {
            x: solution.x,
            method: solution.method,
            factor: FactorPrecision::F64,
            lu: None,
            retried: None,
            refinement: options.refine.kind,
            steps: 0,
            inner: 0,
            backward_error,
            history: vec![backward_error],
            fallback,
            rcond: solution.rcond,
            timings,
        })
    }
}

/// A factorization in single precision.
enum LowFactor {
    Cholesky(Cholesky<f32>),
    Lu(Lu<f32>),
    /// `Uᵀ·A·V = L·U` for the butterflies of [`BUTTERFLY_STREAMS`].
    Butterfly(Lu<f32>),
}

/// The random streams of the butterflies `U` and `V` of
/// [`LowLu::Butterfly`] (given to [`random::key`]): fixed, so that a solve
/// is reproducible.
const BUTTERFLY_STREAMS: (u64, u64) = (0x5EED_B077_E4F1_0001, 0x5EED_B077_E4F1_0002);

/// A low-precision factorization, or why it failed and whether it was the
/// LU after random butterflies.
type Attempt = std::result::Result<(Method, LowFactor), (String, bool)>;

/// Why the low-precision path gave no answer, its steps so far, and whether
/// its factor was the LU after random butterflies.
struct Failure {
    why: String,
    steps: Steps,
    butterfly: bool,
}

/// The low-precision factorization of `a` and the refinement of every
/// column of `b`; the inner `Err` says why it failed.
fn low_precision<B: Resident>(
    be: &B,
    a: &Matrix<f64>,
    b: &Matrix<f64>,
    symmetric: bool,
    options: &MixedOptions,
    (precision, compute): (FactorPrecision, Compute),
    timings: &mut MixedTimings,
) -> Result<std::result::Result<Refined, Failure>> {
    let n = a.rows();
    let start = Instant::now();
    let fail = |why: String, butterfly: bool| Ok(Err(Failure { why, steps: Steps::default(), butterfly }));
    // One power of two for the whole matrix when its entries leave FP32's
    // range, then rows and columns.
    let amax = a.norm(Norm::Max)?;
    let global = if equilibrate::in_range::<f32>(amax) { 0 } else { equilibrate::uniform::<f64>(amax) };
    let rounded = |scaling: &mut Option<Scaling>| -> Result<Matrix<f32>> {
        let source = if global == 0 { None } else { Some(a.scaled(pow2(global))?) };
        let source = source.as_ref().unwrap_or(a);
        let mut buffer = be.alloc::<f32>(n * n)?;
        be.cast(source.view()?, ViewMut::dense(&mut buffer, n, n)?)?;
        let mut low = Matrix::from_storage(a.device().clone(), n, n, be.wrap(buffer));
        *scaling = Some(equilibrate::when_needed(be, low.view_mut()?, symmetric)?);
        Ok(low)
    };
    let mut scaling = None;
    let name = precision.name();
    let (ku, kv) = (random::key(BUTTERFLY_STREAMS.0), random::key(BUTTERFLY_STREAMS.1));
    let params = LuParams { update: compute, ..LuParams::for_order(n) };
    let lu = |mut low: Matrix<f32>| -> Result<Attempt> {
        if options.lu == LowLu::Butterfly {
            be.butterfly(Some((ku, Op::Trans)), Some(kv), low.view_mut()?)?;
            // Leaves as wide as the GPU's panel kernel without pivoting.
            let params = LuParams { leaf_size: 64, ..params };
            // Only a zero pivot stops it: a small one is as likely κ(A) as
            // growth, which refinement judges.
            return match low.lu_with(Pivoting::None { tol: 0.0 }, params) {
                Ok(f) => Ok(Ok((Method::Lu, LowFactor::Butterfly(f)))),
                Err(Error::Singular { pivot }) => Ok(Err((
                    format!(
                        "the {name} LU without pivoting after random butterflies met a zero pivot in column {pivot}"
                    ),
                    true,
                ))),
                Err(e) => Err(e),
            };
        }
        match low.lu_with(Pivoting::Partial, params) {
            Ok(f) => Ok(Ok((Method::Lu, LowFactor::Lu(f)))),
            Err(Error::Singular { pivot }) => {
                Ok(Err((format!("the {name} LU factorization met a zero pivot in column {pivot}"), false)))
            }
            Err(e) => Err(e),
        }
    };
    let attempt = if symmetric && options.method != Method::Lu {
        let params = CholeskyParams::for_tensor_updates(n, compute);
        match Cholesky::factor_owned(n, rounded(&mut scaling)?, None, params) {
            Ok(f) => Ok((Method::Cholesky, LowFactor::Cholesky(f))),
            // Not definite, or too ill-conditioned for single precision:
            // LU takes any nonsingular matrix.
            Err(Error::NotPositiveDefinite { .. }) if options.method == Method::Auto => lu(rounded(&mut scaling)?)?,
            Err(Error::NotPositiveDefinite { column }) => Err((
                format!("the {name} Cholesky factorization met a pivot that is not positive in column {column}"),
                false,
            )),
            Err(e) => return Err(e),
        }
    } else {
        lu(rounded(&mut scaling)?)?
    };
    let (method, factor) = match attempt {
        Ok(f) => f,
        Err((why, butterfly)) => return fail(why, butterfly),
    };
    let butterfly = matches!(factor, LowFactor::Butterfly(_));
    be.synchronize()?;
    timings.factor += start.elapsed();

    // A⁻¹ = 2^g·C·A_s⁻¹·R for A_s = R·(2^g·A)·C.
    let start = Instant::now();
    let scaling = scaling.expect("the rounded matrix was equilibrated");
    let powers = |exps: &[i32], extra: i32| -> Result<B::Buffer<f64>> {
        be.upload(&exps.iter().map(|&e| pow2(e + extra)).collect::<Vec<_>>())
    };
    let (r, c) = (powers(&scaling.rows, 0)?, powers(&scaling.cols, global)?);
    // The triangular solves run in FP64 on the FP32 factor, its entries
    // widened as they are read (`trsv_wide`): GMRES needs M⁻¹ to be one
    // fixed operator, which FP32 solves are not once
    // κ(A)·u₃₂ nears 1 (Carson and Higham 2018 apply it in twice the
    // working precision; FP64 suffices in practice, Amestoy et al. 2024).
    // A⁻ᵀ = 2^g·R·A_s⁻ᵀ·C for the condition estimate.
    let solve = |mut v: ViewMut<'_, B, f64>, op: Op| -> Result<()> {
        let (before, after) = if op == Op::NoTrans { (&r, &c) } else { (&c, &r) };
        be.scale_rows(View::dense(before, n, 1)?, v.rb_mut())?;
        match &factor {
            LowFactor::Cholesky(f) => f.solve_wide_on(be, v.rb_mut())?,
            LowFactor::Lu(f) => f.solve_wide_on(be, op, v.rb_mut())?,
            LowFactor::Butterfly(f) => {
                // A_s⁻¹ = V·(L·U)⁻¹·Uᵀ and A_s⁻ᵀ = U·(L·U)⁻ᵀ·Vᵀ.
                let (first, last) = if op == Op::NoTrans { (ku, kv) } else { (kv, ku) };
                be.butterfly(Some((first, Op::Trans)), None, v.rb_mut())?;
                f.solve_wide_on(be, op, v.rb_mut())?;
                be.butterfly(Some((last, Op::NoTrans)), None, v.rb_mut())?;
            }
        }
        be.scale_rows(View::dense(after, n, 1)?, v)
    };
    let mut precondition = |v: ViewMut<'_, B, f64>| solve(v, Op::NoTrans);
    let k = b.cols();
    let mut x = a.device().zeros::<f64>(n, k)?;
    let mut all = Steps::default();
    let mut backward_error: f64 = 0.0;
    for j in 0..k {
        let bj = b.view::<B>()?.sub(0, j, n, 1)?;
        let xj = x.view_mut::<B>()?.sub_mut(0, j, n, 1)?;
        let steps = refine::refine(be, a.view()?, bj, xj, &mut precondition, &options.refine)?;
        backward_error = backward_error.max(steps.backward_error());
        if j == 0 {
            all.history = steps.history.clone();
        }
        all.steps = all.steps.max(steps.steps);
        all.inner += steps.inner;
        if let Some(why) = steps.failure {
            let why = if k > 1 { format!("column {}: {why}", j + 1) } else { why };
            timings.refine += start.elapsed();
            return Ok(Err(Failure { why, steps: all, butterfly }));
        }
    }
    timings.refine += start.elapsed();
    let start = Instant::now();
    let rcond = if options.estimate_condition {
        let inverse = condition::inverse_one_norm_on::<B, f64>(be, n, |v, transposed| {
            solve(ViewMut::dense(v, n, 1)?, if transposed { Op::Trans } else { Op::NoTrans })
        })?;
        1.0 / (be.norm(Norm::One, a.view()?)? * inverse)
    } else {
        f64::NAN
    };
    timings.condition = start.elapsed();
    Ok(Ok(Refined {
        x,
        method,
        factor: precision,
        lu: (method == Method::Lu).then_some(options.lu),
        retried: None,
        refinement: options.refine.kind,
        steps: all.steps,
        inner: all.inner,
        backward_error,
        history: all.history,
        fallback: None,
        rcond,
        timings: *timings,
    }))
}

/// `max_j ‖bⱼ − A·xⱼ‖∞ / (‖A‖∞·‖xⱼ‖∞ + ‖bⱼ‖∞)`, in FP64.
fn normwise_backward_error<B: Backend>(
    be: &B,
    a: View<'_, B, f64>,
    b: View<'_, B, f64>,
    x: View<'_, B, f64>,
) -> Result<f64> {
    let (n, k) = (b.rows(), b.cols());
    let a_norm = be.norm(Norm::Inf, a)?;
    let mut r = be.alloc::<f64>(n)?;
    let mut worst: f64 = 0.0;
    for j in 0..k {
        let (bj, xj) = (b.sub(0, j, n, 1)?, x.sub(0, j, n, 1)?);
        be.copy(bj, ViewMut::dense(&mut r, n, 1)?)?;
        be.gemm(-1.0, a, Op::NoTrans, xj, Op::NoTrans, 1.0, ViewMut::dense(&mut r, n, 1)?)?;
        let r_norm = be.norm(Norm::Max, View::dense(&r, n, 1)?)?;
        let scale = a_norm * be.norm(Norm::Max, xj)? + be.norm(Norm::Max, bj)?;
        let eta = if r_norm == 0.0 { 0.0 } else { r_norm / scale };
        worst = if eta.is_nan() { eta } else { worst.max(eta) };
    }
    Ok(worst)
}
