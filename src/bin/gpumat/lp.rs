//! `gpumat lp FILE.mps`: a linear program by the library's interior-point
//! method. The iteration log and the summary go to stdout, notes to stderr,
//! the solution to `-o` as CSV; the exit code says how it ended.

use std::path::PathBuf;
use std::time::Instant;

use clap::ValueEnum;
use gpumat::io::{LinearProgram, MpsFormat, Sense, read_mps};
use gpumat::optim::lp::{self, DenseLp, Iteration, LpOptions, LpPrecision, LpSolution, LpStatus};
use gpumat::{Device, Error, SymStorage};

use crate::exit::{self, Failure};
use crate::solve::Storage;
use crate::stdout::outln;
use crate::values;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Fields separated by blanks (names without spaces).
    Free,
    /// Fields at the fixed columns of the original format.
    Fixed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Precision {
    /// FP64 throughout.
    F64,
    /// The normal matrix formed and factored in FP32 while that serves, each
    /// step refined to FP64 accuracy; FP64 after.
    Mixed,
}

#[derive(clap::Args)]
pub struct Args {
    /// The linear program (MPS, free format unless --format fixed).
    file: PathBuf,
    /// Maximize, whatever the file's OBJSENSE says.
    #[arg(long, conflicts_with = "min")]
    max: bool,
    /// Minimize, whatever the file's OBJSENSE says.
    #[arg(long)]
    min: bool,
    /// Relative primal and dual infeasibility and relative gap at which the
    /// solution is optimal.
    #[arg(long, default_value_t = 1e-8, value_name = "TOL", value_parser = values::positive_number)]
    tol: f64,
    /// The most iterations.
    #[arg(long, default_value_t = 200, value_parser = values::positive_count)]
    max_iterations: usize,
    /// Storage of the normal matrix A·Θ·Aᵀ.
    #[arg(long, value_enum, default_value_t = Storage::Full)]
    storage: Storage,
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    precision: Precision,
    #[arg(long, value_enum, default_value_t = Format::Free)]
    format: Format,
    /// Solve the problem as given, without equilibrating it first.
    #[arg(long)]
    no_scaling: bool,
    /// Print the summary only, not the iteration log.
    #[arg(short, long)]
    quiet: bool,
    /// Write the solution as CSV: `kind,name,value,dual`, one line per column
    /// (its value and reduced cost) and per row (its activity and dual).
    #[arg(short, long, value_name = "SOLUTION.csv")]
    output: Option<PathBuf>,
}

pub fn run(dev: &Device, args: &Args) -> exit::Result<()> {
    if args.tol >= 1.0 {
        return Err(Failure::Usage(format!("--tol {} must be below 1", args.tol)));
    }
    let start = Instant::now();
    let format = match args.format {
        Format::Free => MpsFormat::Free,
        Format::Fixed => MpsFormat::Fixed,
    };
    let mut problem = read_mps(&args.file, format)?;
    if args.max {
        problem.sense = Sense::Maximize;
    } else if args.min {
        problem.sense = Sense::Minimize;
    }
    for note in &problem.notes {
        eprintln!("gpumat: note: {note}");
    }
    let dense = DenseLp::from_mps(&problem)?;
    let read = start.elapsed().as_secs_f64();
    let options = LpOptions {
        tolerance: args.tol,
        max_iterations: args.max_iterations,
        storage: match args.storage {
            Storage::Full => SymStorage::Full,
            Storage::Rfp => SymStorage::Rfp,
        },
        precision: match args.precision {
            Precision::F64 => LpPrecision::F64,
            Precision::Mixed => LpPrecision::Mixed,
        },
        scale: !args.no_scaling,
    };
    outln!(
        "lp: {} ({}), {} rows, {} columns, {} nonzeros; {} on {}, storage {}, precision {}",
        args.file.display(),
        if problem.name.is_empty() { "unnamed" } else { &problem.name },
        problem.rows.len(),
        problem.columns.len(),
        problem.entries.len(),
        if problem.sense == Sense::Maximize { "maximize" } else { "minimize" },
        dev.short_name(),
        format!("{:?}", args.storage).to_lowercase(),
        format!("{:?}", args.precision).to_lowercase(),
    )?;
    let mut failed_write = None;
    let mut log = |it: &Iteration| {
        if args.quiet || failed_write.is_some() {
            return;
        }
        if it.iteration == 0 {
            failed_write = outln!(
                "{:>4}  {:>20} {:>20}  {:>8} {:>8} {:>8}  {:>6}  {:>4}  {:>8}",
                "iter",
                "primal objective",
                "dual objective",
                "p.inf",
                "d.inf",
                "gap",
                "step",
                "prec",
                "time"
            )
            .err();
        }
        if failed_write.is_none() {
            failed_write = outln!(
                "{:>4}  {:>20.12e} {:>20.12e}  {:>8.1e} {:>8.1e} {:>8.1e}  {:>6.4}  {:>4}  {:>7.3}s",
                it.iteration,
                it.primal_objective,
                it.dual_objective,
                it.primal_infeasibility,
                it.dual_infeasibility,
                it.gap,
                it.step,
                it.factor,
                it.seconds
            )
            .err();
        }
    };
    let solution = lp::solve_logged(dev, dense, &options, &mut log)?;
    if let Some(e) = failed_write {
        return Err(e.into());
    }
    for note in &solution.notes {
        eprintln!("gpumat: note: {note}");
    }
    summary(&solution, read)?;
    if let Some(path) = &args.output {
        write_csv(path, &problem, &solution)?;
    }
    let code = match &solution.status {
        LpStatus::Optimal => return Ok(()),
        LpStatus::Infeasible => exit::INFEASIBLE,
        LpStatus::Unbounded => exit::UNBOUNDED,
        LpStatus::IterationLimit | LpStatus::NumericalFailure(_) => exit::NUMERICAL,
    };
    let why = match &solution.status {
        LpStatus::NumericalFailure(why) => why,
        _ => &solution.detail,
    };
    Err(Failure::Outcome { code, message: format!("{}: {why}", solution.status.name()) })
}

fn summary(s: &LpSolution, read: f64) -> gpumat::Result<()> {
    let t = &s.timings;
    outln!("status      {}", s.status.name())?;
    if s.status == LpStatus::Optimal {
        outln!("objective   {:.11e}", s.objective)?;
        outln!("dual obj.   {:.11e}", s.dual_objective)?;
        outln!(
            "residuals   primal {:.1e}, dual {:.1e}, gap {:.1e} (relative)",
            s.primal_residual,
            s.dual_residual,
            s.relative_gap
        )?;
    }
    outln!(
        "iterations  {}{}",
        s.iterations,
        match s.mixed_iterations {
            0 => String::new(),
            k => format!(" ({k} with an FP32 normal matrix)"),
        }
    )?;
    let share = |v: f64| if t.total > 0.0 { 100.0 * v / t.total } else { 0.0 };
    outln!(
        "time        {:.3} s: setup {:.3} s, form A·Θ·Aᵀ {:.3} s ({:.0} %), factor {:.3} s ({:.0} %), \
         solve {:.3} s ({:.0} %); reading the file {:.3} s",
        t.total,
        t.setup,
        t.form,
        share(t.form),
        t.factor,
        share(t.factor),
        t.solve,
        share(t.solve),
        read
    )?;
    outln!("refinement  {} conjugate-gradient steps", s.refinement_steps)
}

/// The solution as CSV: columns then rows, each with its dual; empty fields
/// where a status before any iteration left no values.
fn write_csv(path: &PathBuf, problem: &LinearProgram, s: &LpSolution) -> gpumat::Result<()> {
    let fail = |e: csv::Error| Error::io(path, std::io::Error::other(e));
    let mut out = csv::Writer::from_path(path).map_err(fail)?;
    let number = |v: Option<&f64>| v.map(|v| format!("{v:e}")).unwrap_or_default();
    out.write_record(["kind", "name", "value", "dual"]).map_err(fail)?;
    for (j, name) in problem.columns.iter().enumerate() {
        out.write_record(["column", name, &number(s.x.get(j)), &number(s.reduced_costs.get(j))]).map_err(fail)?;
    }
    for (i, (name, _)) in problem.rows.iter().enumerate() {
        out.write_record(["row", name, &number(s.row_activity.get(i)), &number(s.y.get(i))]).map_err(fail)?;
    }
    out.flush().map_err(|e| Error::io(path, e))
}
