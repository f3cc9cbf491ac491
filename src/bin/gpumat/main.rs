//! The `gpumat` command line.

mod demo;
mod fit;
mod gemm;
mod info;
mod input;
mod lstsq;
mod lu;
mod plot;
mod solve;
mod wls_table;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gpumat::{Device, Error};

/// Dense linear algebra on NVIDIA GPUs, with the CPU as an equal fallback.
///
/// Exit codes: 0 success; 1 bad input, I/O or device error; 2 a numerical
/// failure (matrix not positive definite, singular, not converged); 64 a
/// usage error.
#[derive(Parser)]
#[command(name = "gpumat", version, about, long_about = None)]
struct Cli {
    /// Where to compute: auto (GPU if present, else CPU), cpu or cuda.
    /// Overrides the GPUMAT_DEVICE environment variable.
    #[arg(long, global = true, value_name = "DEVICE")]
    device: Option<String>,

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
    /// Solve A·X = B: Cholesky for symmetric positive definite A (full or
    /// packed storage), LU with partial pivoting otherwise; X to stdout as
    /// Matrix Market without -o.
    Solve(solve::Args),
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
    /// The seed's Tables 1 and 2: random weighted least squares solved by
    /// f32 Cholesky refined to FP64 accuracy, against an FP64 solve.
    WlsTable(wls_table::Args),
}

fn device(cli_choice: &Option<String>) -> gpumat::Result<Device> {
    match cli_choice {
        Some(name) => Device::from_name(name),
        None => Device::auto(),
    }
}

fn run(cli: Cli) -> gpumat::Result<()> {
    match cli.command {
        Command::Info => info::run(device(&cli.device)),
        Command::Demo(args) => demo::run(&device(&cli.device)?, &args),
        Command::Gemm(args) => gemm::run(&device(&cli.device)?, &args),
        Command::Solve(args) => solve::run(&device(&cli.device)?, &args),
        Command::Lstsq(args) => lstsq::run(&device(&cli.device)?, &args),
        Command::Fit(args) => fit::run(&device(&cli.device)?, &args),
        Command::Rref(args) => lu::rref(&device(&cli.device)?, &args),
        Command::Inv(args) => lu::inv(&device(&cli.device)?, &args),
        Command::Det(args) => lu::det(&device(&cli.device)?, &args),
        Command::WlsTable(args) => wls_table::run(&device(&cli.device)?, &args),
    }
}

/// 2 for failures of the mathematics, 1 for everything else.
fn exit_code(e: &Error) -> u8 {
    match e {
        Error::NotPositiveDefinite { .. } | Error::Singular { .. } | Error::NotConverged { .. } => 2,
        Error::RankDeficient { .. } | Error::IllConditioned { .. } => 2,
        Error::InvalidEnvironment { .. } => 64,
        Error::NegativeWeight { .. } | Error::WeightOverflow { .. } | Error::DifferentDevices { .. } => 1,
        Error::Overlapping { .. } | Error::TooLarge { .. } | Error::LeadingDimension { .. } => 1,
        Error::DeviceCall { .. } => 1,
        _ => 1,
    }
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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version go to stdout and succeed.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let text = e.kind().as_str().map(str::to_string).unwrap_or_default();
            let rendered = e.render().to_string();
            let first = rendered.lines().next().unwrap_or(&text).trim_start_matches("error: ");
            eprintln!("gpumat: error: {first} (see gpumat --help)");
            return ExitCode::from(64);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gpumat: error: {e}");
            ExitCode::from(exit_code(&e))
        }
    }
}
