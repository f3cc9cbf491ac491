//! How a command fails and the exit code each failure gets: the one place
//! that maps errors to codes, so that the table in `gpumat --help` holds for
//! every command.

use std::fmt;
use std::io::ErrorKind;

use gpumat::Error;

/// Bad flags or option values (BSD's `EX_USAGE`).
pub const USAGE: u8 = 64;
/// Bad input files, I/O and device errors.
pub const INPUT: u8 = 1;
/// The mathematics failed: not positive definite, singular, ill-conditioned
/// beyond the threshold, overflow, refinement that did not converge.
pub const NUMERICAL: u8 = 2;
/// A linear program with no feasible point.
pub const INFEASIBLE: u8 = 3;
/// A linear program whose objective improves without bound.
pub const UNBOUNDED: u8 = 4;

/// Why a command stopped.
#[derive(Debug)]
pub enum Failure {
    /// A flag, an option value or a combination of them the command cannot
    /// use; the message names the flags.
    Usage(String),
    /// An error of the library (or of reading and writing).
    Lib(Error),
    /// A computation that ended without the answer asked for, for a reason
    /// that is not an error of the library (an infeasible linear program).
    Outcome { code: u8, message: String },
}

pub type Result<T, E = Failure> = std::result::Result<T, E>;

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Lib(e)
    }
}

impl Failure {
    /// The reader of stdout went away (`gpumat … | head`): not an error of
    /// gpumat, so the command ends quietly with 0, as `rg` and `fd` do.
    pub fn is_closed_pipe(&self) -> bool {
        matches!(self, Failure::Lib(Error::Io { source, .. }) if source.kind() == ErrorKind::BrokenPipe)
    }

    pub fn code(&self) -> u8 {
        match self {
            Failure::Usage(_) => USAGE,
            Failure::Outcome { code, .. } => *code,
            Failure::Lib(Error::InBatch { source, .. }) => Failure::Lib((**source).clone()).code(),
            Failure::Lib(e) => match e {
                Error::NotPositiveDefinite { .. }
                | Error::Singular { .. }
                | Error::ZeroPivot { .. }
                | Error::NotConverged { .. }
                | Error::RankDeficient { .. }
                | Error::IllConditioned { .. }
                | Error::Overflow { .. }
                | Error::Underflow { .. } => NUMERICAL,
                // Readers refuse NaN and infinity in files (a parse error
                // naming the line), so a non-finite value met later was made
                // by arithmetic: an overflow.
                Error::NonFinite { .. } => NUMERICAL,
                Error::InvalidEnvironment { .. } => USAGE,
                _ => INPUT,
            },
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(msg) => write!(f, "{msg} (see gpumat --help)"),
            Failure::Outcome { message, .. } => write!(f, "{message}"),
            // The library names standard output `<output>`; users know it
            // as stdout.
            Failure::Lib(Error::Io { path, source }) if path.as_os_str() == "<output>" => write!(f, "stdout: {source}"),
            Failure::Lib(Error::NonFinite { what, row, col, value }) => {
                write!(f, "overflow: {what} has a non-finite entry {value} at row {row}, column {col}")
            }
            Failure::Lib(e) => write!(f, "{e}"),
        }
    }
}
