//! `gpumat solve A.mtx B.mtx`: X with A·X = B, by the library's
//! `Matrix::solve_with` (`Matrix::solve_mixed` for `--precision mixed`);
//! this file only parses, reads, writes and reports (on stderr: the summary
//! line, the fallback of `--method auto` from Cholesky to pivoted LDLᵀ or
//! of a mixed-precision solve to FP64, warnings on the conditioning).

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::ValueEnum;
use gpumat::io::MmWriteOptions;
use gpumat::{Device, Error, LdltMethod, Matrix, MixedOptions, Result, Scalar, Solution, SolveOptions, SymStorage};

use crate::exit::Failure;
use crate::input::{read_host, write_host};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    /// Cholesky when A is exactly symmetric (pivoted LDLᵀ, said on stderr,
    /// if it turns out not to be positive definite), else LU with partial
    /// pivoting.
    Auto,
    /// Cholesky: A must be symmetric positive definite.
    Cholesky,
    /// LDLᵀ: A must be exactly symmetric, definite or not (see --pivot).
    Ldlt,
    /// LU with partial pivoting: any nonsingular A.
    Lu,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Pivot {
    /// Bunch–Kaufman 1×1 and 2×2 pivots: stable for every symmetric A (the
    /// CPU's default).
    Bk,
    /// Aasen's tridiagonal T: as stable (the GPU's default).
    Aasen,
    /// No interchanges, for matrices known to allow it (quasi-definite,
    /// diagonally dominant); a tiny pivot is exit code 2, naming its column.
    #[value(name = "none")]
    Off,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Storage {
    /// The whole n × n array.
    Full,
    /// Rectangular full packed: n(n+1)/2 entries, half the memory.
    Rfp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Precision {
    F64,
    F32,
}

/// The precision of `solve`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SolvePrecision {
    F64,
    F32,
    /// Factor in low precision (see --factor-precision), refine to FP64
    /// accuracy; an FP64 solve when refinement fails, said on stderr.
    Mixed,
}

/// The factorization of --precision mixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FactorPrecision {
    /// FP32 throughout.
    F32,
    /// FP32, trailing updates in TF32 on the tensor cores.
    Tf32,
    /// FP32, trailing updates in FP16 on the tensor cores.
    Fp16,
    /// FP32, trailing updates in bfloat16 on the tensor cores.
    Bf16,
    /// FP32, trailing updates as three FP16 products of split operands
    /// (FP32's accuracy on the FP16 tensor cores).
    Fp16x3,
}

/// The refinement of --precision mixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Refinement {
    /// Classical steps while they gain two digits each, then GMRES.
    Auto,
    /// GMRES preconditioned by the low-precision factor (GMRES-IR).
    Gmres,
    /// x += M⁻¹·r.
    Classical,
}

#[derive(clap::Args)]
pub struct Args {
    /// The matrix A (Matrix Market, general or symmetric).
    pub a: PathBuf,
    /// The right-hand sides B, one per column (Matrix Market).
    pub b: PathBuf,
    /// Where to write X (Matrix Market array); stdout when absent.
    #[arg(short, long, value_name = "X.mtx")]
    pub output: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Method::Auto)]
    pub method: Method,
    /// Pivoting of --method ldlt [default: bk].
    #[arg(long, value_enum)]
    pub pivot: Option<Pivot>,
    #[arg(long, value_enum, default_value_t = Storage::Full)]
    pub storage: Storage,
    /// Precision of the factorization and solve.
    #[arg(long, value_enum, default_value_t = SolvePrecision::F64)]
    pub precision: SolvePrecision,
    /// Factorization of --precision mixed [default: fp16x3 on a GPU, f32 on
    /// the CPU].
    #[arg(long, value_enum)]
    pub factor_precision: Option<FactorPrecision>,
    /// Refinement of --precision mixed.
    #[arg(long, value_enum, default_value_t = Refinement::Auto)]
    pub refinement: Refinement,
    /// Write X even when A is singular to working precision (condition
    /// estimate beyond 1/u), which is otherwise exit code 2.
    #[arg(long)]
    pub allow_ill_conditioned: bool,
    /// Factor across a P × Q grid of ranks (e.g. 2x2): a GPU each (see
    /// --devices), or simulated ranks on the CPU. Cholesky or LU, f64;
    /// --storage rfp keeps the lower blocks alone.
    #[arg(long, value_name = "PxQ", value_parser = crate::solve_dist::parse_grid)]
    grid: Option<gpumat::dist::Grid>,
    /// The GPUs of --grid (ordinals, e.g. 0,1,2,3) [default: GPUMAT_DEVICES,
    /// else all]; alone, a grid of one row of them.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    devices: Option<Vec<usize>>,
}

impl Args {
    /// Whether the solve runs across several ranks (`--grid`, `--devices`).
    pub fn distributed(&self) -> bool {
        self.grid.is_some() || self.devices.is_some()
    }
}

/// A Matrix Market file on `dev` rounded to `T`, converted in place and
/// uploaded: the host copy is gone before the solve starts.
fn read_as<T: Scalar>(dev: &Device, path: &Path) -> Result<Matrix<T>> {
    let mm = read_host(path)?;
    let (rows, cols) = (mm.rows, mm.cols);
    let data: Vec<T> = mm.data.into_iter().map(T::from_f64).collect();
    dev.from_col_major(rows, cols, &data)
}

/// Reads A and B in precision `T` and solves; X back in `f64`.
fn solve<T: Scalar>(dev: &Device, args: &Args, options: &SolveOptions) -> Result<(Solution<T>, Vec<f64>)> {
    let (a, b) = (read_as::<T>(dev, &args.a)?, read_as::<T>(dev, &args.b)?);
    let solution = a.solve_with(&b, options)?;
    let x = solution.x.to_host()?.into_iter().map(Scalar::to_f64).collect();
    Ok((solution, x))
}

pub fn run(dev: &Device, args: &Args) -> crate::exit::Result<()> {
    if args.method == Method::Lu && args.storage == Storage::Rfp {
        return Err(Failure::Usage(
            "--method lu needs --storage full: packed (RFP) storage holds symmetric matrices only".into(),
        ));
    }
    if args.pivot.is_some() && args.method != Method::Ldlt {
        return Err(Failure::Usage("--pivot applies to --method ldlt only".into()));
    }
    if args.grid.is_some() || args.devices.is_some() {
        return crate::solve_dist::run(dev, args, args.grid, args.devices.as_deref());
    }
    if args.precision == SolvePrecision::Mixed {
        return mixed(dev, args);
    }
    if args.factor_precision.is_some() || args.refinement != Refinement::Auto {
        return Err(Failure::Usage("--factor-precision and --refinement apply to --precision mixed only".into()));
    }
    let options = SolveOptions {
        method: match args.method {
            Method::Auto => gpumat::Method::Auto,
            Method::Cholesky => gpumat::Method::Cholesky,
            Method::Ldlt => gpumat::Method::Ldlt { pivoted: args.pivot != Some(Pivot::Off) },
            Method::Lu => gpumat::Method::Lu,
        },
        storage: match args.storage {
            Storage::Full => SymStorage::Full,
            Storage::Rfp => SymStorage::Rfp,
        },
        allow_ill_conditioned: args.allow_ill_conditioned,
        pivoting: match args.pivot {
            Some(Pivot::Bk) => Some(LdltMethod::BunchKaufman),
            Some(Pivot::Aasen) => Some(LdltMethod::Aasen),
            _ => None,
        },
    };
    let start = Instant::now();
    let (report, x, u) = match args.precision {
        SolvePrecision::F64 => {
            let (s, x) = solve::<f64>(dev, args, &options)?;
            (Report::of(&s), x, f64::unit_roundoff())
        }
        SolvePrecision::F32 => {
            let (s, x) = solve::<f32>(dev, args, &options)?;
            (Report::of(&s), x, f32::unit_roundoff())
        }
        SolvePrecision::Mixed => unreachable!("solved by `mixed`"),
    };
    let elapsed = start.elapsed().as_secs_f64() * 1e3;
    let (n, k) = (report.order, report.rhs);
    write_host(n, k, &x, &MmWriteOptions::default(), args.output.as_ref())?;
    if let Some(why) = &report.fallback {
        eprintln!("solve: {why}; solved with pivoted LDLᵀ");
    }
    eprintln!(
        "solve: method {}, storage {}, precision {}, {n}×{n} with {k} right-hand side{} on {} in {elapsed:.3} ms; \
         condition estimate {:.2e}, backward error {:.2e}, forward error bound {:.2e}",
        report.method,
        report.storage,
        format!("{:?}", args.precision).to_lowercase(),
        if k == 1 { "" } else { "s" },
        dev.short_name(),
        1.0 / report.rcond,
        report.backward_error,
        report.forward_error_bound,
    );
    warn_conditioning(report.rcond, u);
    Ok(())
}

/// Warnings on stderr when `rcond` says that X may be inaccurate (it is
/// written all the same).
pub fn warn_conditioning(rcond: f64, u: f64) {
    if rcond < u {
        eprintln!(
            "solve: warning: A is singular to working precision (1-norm condition estimate {:.2e}); X may have no \
             correct digits",
            1.0 / rcond
        );
    } else if rcond < u.sqrt() {
        eprintln!(
            "solve: warning: A is ill-conditioned (1-norm condition estimate {:.2e}); X may have few correct digits",
            1.0 / rcond
        );
    }
}

/// `--precision mixed`: A and B in FP64, `Matrix::solve_mixed`.
fn mixed(dev: &Device, args: &Args) -> crate::exit::Result<()> {
    let method = match args.method {
        Method::Auto => gpumat::Method::Auto,
        Method::Cholesky => gpumat::Method::Cholesky,
        Method::Lu => gpumat::Method::Lu,
        Method::Ldlt => {
            return Err(Failure::Usage(
                "--precision mixed factors by --method auto, cholesky or lu; LDLᵀ runs in f64 or f32".into(),
            ));
        }
    };
    if args.storage != Storage::Full {
        return Err(Failure::Usage("--precision mixed needs --storage full".into()));
    }
    let mut options = MixedOptions {
        method,
        factor: args.factor_precision.map(|p| match p {
            FactorPrecision::F32 => gpumat::FactorPrecision::F32,
            FactorPrecision::Tf32 => gpumat::FactorPrecision::Tf32,
            FactorPrecision::Fp16 => gpumat::FactorPrecision::Fp16,
            FactorPrecision::Bf16 => gpumat::FactorPrecision::Bf16,
            FactorPrecision::Fp16x3 => gpumat::FactorPrecision::Fp16x3,
        }),
        allow_ill_conditioned: args.allow_ill_conditioned,
        ..MixedOptions::default()
    };
    options.refine.kind = match args.refinement {
        Refinement::Auto => gpumat::Refinement::Auto,
        Refinement::Gmres => gpumat::Refinement::Gmres,
        Refinement::Classical => gpumat::Refinement::Classical,
    };
    let start = Instant::now();
    let (a, b) = (read_as::<f64>(dev, &args.a)?, read_as::<f64>(dev, &args.b)?);
    let refined = a.solve_mixed(&b, &options)?;
    let x = refined.x.to_host()?;
    let elapsed = start.elapsed().as_secs_f64() * 1e3;
    let (n, k) = (refined.x.rows(), refined.x.cols());
    write_host(n, k, &x, &MmWriteOptions::default(), args.output.as_ref())?;
    let method = match refined.method {
        gpumat::Method::Cholesky => "cholesky",
        gpumat::Method::Ldlt { .. } => "ldlt",
        _ => "lu",
    };
    match &refined.fallback {
        None => eprintln!(
            "solve: method {method}, precision mixed (factor {}, refinement {}: {} step{}{}), {n}×{n} with {k} \
             right-hand side{} on {} in {elapsed:.3} ms; condition estimate {:.2e}, backward error {:.2e}",
            refined.factor.name(),
            refined.refinement.name(),
            refined.steps,
            if refined.steps == 1 { "" } else { "s" },
            if refined.inner > 0 { format!(", {} GMRES iterations", refined.inner) } else { String::new() },
            if k == 1 { "" } else { "s" },
            dev.short_name(),
            1.0 / refined.rcond,
            refined.backward_error,
        ),
        Some(why) => {
            eprintln!("solve: the low-precision factor did not give X ({why}); solved in f64");
            eprintln!(
                "solve: method {method}, precision f64 (fallback), {n}×{n} with {k} right-hand side{} on {} in \
                 {elapsed:.3} ms; condition estimate {:.2e}, backward error {:.2e}",
                if k == 1 { "" } else { "s" },
                dev.short_name(),
                1.0 / refined.rcond,
                refined.backward_error,
            );
        }
    }
    warn_conditioning(refined.rcond, f64::unit_roundoff());
    Ok(())
}

/// What the summary line says of a [`Solution`], whatever its precision.
struct Report {
    /// The order of A and the number of right-hand sides.
    order: usize,
    rhs: usize,
    /// `cholesky`, `lu`, or `ldlt, pivot bk|aasen|none`, as the flags say it.
    method: &'static str,
    /// Why auto did not solve by Cholesky, when it did not.
    fallback: Option<String>,
    storage: &'static str,
    rcond: f64,
    backward_error: f64,
    forward_error_bound: f64,
}

impl Report {
    fn of<T: Scalar>(s: &Solution<T>) -> Self {
        Report {
            order: s.x.rows(),
            rhs: s.x.cols(),
            method: match s.method {
                gpumat::Method::Cholesky => "cholesky",
                gpumat::Method::Ldlt { .. } => match s.ldlt {
                    Some(LdltMethod::Aasen) => "ldlt, pivot aasen",
                    Some(LdltMethod::Unpivoted) => "ldlt, pivot none",
                    _ => "ldlt, pivot bk",
                },
                gpumat::Method::Lu | gpumat::Method::Auto => "lu",
            },
            fallback: s.fallback.as_ref().map(|e| match e {
                Error::NotPositiveDefinite { column } => {
                    format!("A is not positive definite (pivot in column {column})")
                }
                e => e.to_string(),
            }),
            storage: match s.storage {
                SymStorage::Full => "full",
                SymStorage::Rfp => "rfp",
            },
            rcond: s.rcond,
            backward_error: s.backward_error,
            forward_error_bound: s.forward_error_bound,
        }
    }
}
