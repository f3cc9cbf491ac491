//! The `gpumat` command line.

mod demo;
mod exit;
mod fit;
mod gemm;
mod inertia;
mod info;
mod input;
mod lp;
mod lstsq;
mod lu;
mod plot;
mod solve;
mod solve_dist;
mod stdout;
mod swe;
mod swe_frame;
mod values;
mod wls_table;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use gpumat::Device;
use gpumat::api::device::DEVICE_VAR;

use crate::exit::Failure;

/// Dense linear algebra on NVIDIA GPUs, with the CPU as an equal fallback.
///
/// Exit codes, the same for every command:
///
///   0   success; also when the reader of stdout closes it early
///       (`gpumat … | head`): gpumat stops writing, quietly
///   1   bad input file, I/O error (a full disk included) or device error
///   2   numerical failure: not positive definite, singular, singular to
///       working precision (ill-conditioned beyond the threshold), a zero
///       pivot without pivoting, rank deficient, overflow, refinement that
///       did not converge; a linear program that stopped at its iteration
///       limit or without progress
///   3   a linear program is infeasible (`gpumat lp`)
///   4   a linear program is unbounded (`gpumat lp`)
///   64  usage: unknown command or flag, bad option value or combination
///       (e.g. `demo --m 0`, `solve --method lu --storage rfp`,
///       `solve --pivot none` without `--method ldlt`), a
///       GPUMAT_* variable that does not parse
///
/// Errors are one line on stderr, starting `gpumat: error:`.
#[derive(Parser)]
#[command(name = "gpumat", version, about, verbatim_doc_comment)]
struct Cli {
    /// Where to compute: auto (GPU if present, else CPU), cpu or cuda.
    /// Overrides the GPUMAT_DEVICE environment variable.
    #[arg(long, global = true, value_name = "DEVICE", value_parser = values::device_name)]
    device: Option<String>,

    /// Say on stderr which device is used and, on the CPU, why no GPU.
    #[arg(short, long, global = true)]
    verbose: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show the device gpumat would use, why, and the CPU threads.
    Info,
    /// Show what gpumat does on this machine, on random inputs, checked
    /// against an independent FP64 reference.
    Demo(demo::Args),
    /// Multiply two Matrix Market matrices: C = A·B.
    Gemm(gemm::Args),
    /// Solve A·X = B: Cholesky for symmetric positive definite A, pivoted
    /// LDLᵀ for symmetric indefinite A (full or packed storage), LU with
    /// partial pivoting otherwise; X to stdout as Matrix Market without -o.
    Solve(solve::Args),
    /// The inertia of a symmetric matrix: its numbers of positive, negative
    /// and zero eigenvalues (of A − σI with --shift), from a pivoted LDLᵀ
    /// factorization, on stdout.
    Inertia(inertia::Args),
    /// Weighted linear least squares: x minimizing ‖diag(d)·(b − A·x)‖₂,
    /// rows of A are observations; stable for ill-conditioned designs (QR
    /// with refinement). x to stdout as Matrix Market without -o.
    Lstsq(lstsq::Args),
    /// Fit a linear model (polynomial or Fourier) to CSV data by weighted
    /// least squares: coefficients, standard errors, residual norm, and
    /// optionally a plot.
    Fit(fit::Args),
    /// Reduced row echelon form by Gauss-Jordan elimination (Matrix Market),
    /// with the rank and the pivot columns.
    Rref(lu::RrefArgs),
    /// The inverse of a square matrix, through LU.
    Inv(lu::InvArgs),
    /// The determinant of a square matrix, through LU (0 if singular).
    Det(lu::DetArgs),
    /// A linear program (MPS file) by a primal–dual interior-point method on
    /// the normal equations: an iteration log, then the status, objective
    /// and where the time went; the solution to -o as CSV.
    Lp(lp::Args),
    /// Jung and O'Leary's (2008) Tables 1 and 2: random weighted least squares solved by
    /// f32 Cholesky refined to FP64 accuracy, against an FP64 solve.
    WlsTable(wls_table::Args),
    /// The shallow-water equations by Casulli's (1990) semi-implicit
    /// scheme on a test case: progress, frames (PNG, GIF), and a summary
    /// checked against the case's analytic answer.
    Swe(swe::Args),
}

/// The device of `--device`, else of `GPUMAT_DEVICE`, else the best one.
fn device(cli_choice: &Option<String>) -> exit::Result<Device> {
    let name = match (cli_choice, std::env::var(DEVICE_VAR)) {
        (Some(name), _) => name.clone(),
        (None, Ok(name)) => {
            values::device_name(&name).map_err(|why| Failure::Usage(format!("{DEVICE_VAR}={name:?}: {why}")))?
        }
        (None, Err(_)) => "auto".into(),
    };
    Ok(Device::from_name(&name)?)
}

fn run(cli: Cli) -> exit::Result<()> {
    let dev = device(&cli.device)?;
    // `info` says it anyway; elsewhere the summaries name the device briefly.
    if cli.verbose && !matches!(cli.command, Command::Info) {
        eprintln!("gpumat: device {}", dev.describe());
    }
    match cli.command {
        Command::Info => Ok(info::run(&dev)?),
        Command::Demo(args) => Ok(demo::run(&dev, &args)?),
        Command::Gemm(args) => Ok(gemm::run(&dev, &args)?),
        Command::Solve(args) => solve::run(&dev, &args),
        Command::Inertia(args) => Ok(inertia::run(&dev, &args, cli.verbose)?),
        Command::Lstsq(args) => Ok(lstsq::run(&dev, &args)?),
        Command::Fit(args) => Ok(fit::run(&dev, &args)?),
        Command::Rref(args) => Ok(lu::rref(&dev, &args)?),
        Command::Inv(args) => Ok(lu::inv(&dev, &args)?),
        Command::Det(args) => Ok(lu::det(&dev, &args)?),
        Command::WlsTable(args) => Ok(wls_table::run(&dev, &args)?),
        Command::Swe(args) => swe::run(&dev, &args),
        Command::Lp(args) => lp::run(&dev, &args),
    }?;
    Ok(stdout::flush()?)
}

/// The command line, where every option that takes a value may take a
/// negative number (`--tol -1`), to be judged by the option's own check
/// rather than refused as an unknown flag.
fn parse() -> Result<Cli, clap::Error> {
    let negatives = |a: clap::Arg| {
        let takes = a.get_action().takes_values();
        a.allow_negative_numbers(takes)
    };
    let cmd = Cli::command().mut_args(negatives).mut_subcommands(|c| c.mut_args(negatives));
    Cli::from_arg_matches(&cmd.try_get_matches()?)
}

fn main() -> ExitCode {
    // A bug must still end in one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        eprintln!("gpumat: internal error{at}: {msg} (please report this)");
    }));
    let cli = match parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version go to stdout and succeed.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // Without a command clap renders the whole help: say what is missing.
            let rendered = match e.kind() {
                clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => "a subcommand is required".into(),
                _ => e.render().to_string(),
            };
            let text = e.kind().as_str().unwrap_or_default();
            let first = rendered.lines().next().unwrap_or(text).trim_start_matches("error: ");
            eprintln!("gpumat: error: {first} (see gpumat --help)");
            return ExitCode::from(exit::USAGE);
        }
    };
    if let Command::Solve(args) = &cli.command
        && args.distributed()
    {
        // SAFETY: no other thread has started, and CUDA is not yet loaded.
        unsafe { gpumat::dist::load_kernels_eagerly() };
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_closed_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gpumat: error: {e}");
            ExitCode::from(e.code())
        }
    }
}
