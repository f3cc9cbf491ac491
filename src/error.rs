//! The one error type of gpumat.
//!
//! Every failure says what went wrong and where: the operation and shapes for
//! a mismatch, the row and column of a non-finite entry, the column of a
//! failed Cholesky pivot, the file and line of a parse error. Indices in
//! messages are 1-based, as LAPACK's `INFO` and Matrix Market files are.

use std::path::PathBuf;
use std::sync::Arc;

/// `Result` with gpumat's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in gpumat.
///
/// `Error` is `Clone` so that a failure found on the device can be stored in
/// every matrix that depends on it and raised at each later blocking read.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Operand shapes do not fit the operation.
    #[error("dimension mismatch in {op}: {detail}")]
    DimensionMismatch { op: &'static str, detail: String },

    /// An operand has no rows or no columns where the operation needs some.
    #[error("{what} is empty ({rows}×{cols})")]
    Empty { what: String, rows: usize, cols: usize },

    /// A NaN or infinity where finite input is required.
    #[error("{what} has a non-finite entry {value} at row {row}, column {col}")]
    NonFinite { what: String, row: usize, col: usize, value: f64 },

    /// Cholesky met a non-positive pivot: the leading minor of order `column`
    /// (1-based) is not positive definite.
    #[error("matrix is not positive definite: pivot in column {column} is not positive")]
    NotPositiveDefinite { column: usize },

    /// A factorization met an exactly zero (or, unpivoted, too small) pivot at
    /// `pivot` (1-based).
    #[error("matrix is singular: pivot {pivot} is zero")]
    Singular { pivot: usize },

    /// A matrix that must be symmetric is not exactly so: `A(row, col) ≠
    /// A(col, row)` (1-based, `row > col`) is the first such pair, column
    /// by column. A method that reads one triangle would otherwise solve
    /// with another matrix.
    #[error("matrix is not symmetric: A({row},{col}) differs from A({col},{row})")]
    NotSymmetric { row: usize, col: usize },

    /// The reciprocal condition estimate `rcond ≈ 1/κ₁(A)` is below the unit
    /// roundoff of the working precision: no digit of a solution can be
    /// trusted, and the matrix is singular as far as that precision can tell.
    #[error(
        "matrix is singular to working precision ({precision}): reciprocal condition estimate {rcond:.2e} is below \
         the unit roundoff {unit_roundoff:.2e} (condition estimate {:.2e})",
        1.0 / .rcond
    )]
    IllConditioned { rcond: f64, unit_roundoff: f64, precision: &'static str },

    /// A least-squares design (or normal-equations matrix) whose columns are
    /// numerically dependent: `column` (1-based) is the first one the earlier
    /// columns already span, where the method can name it.
    #[error(
        "{what} is rank deficient{}: condition estimate {condition:.2e}",
        .column.map(|c| format!(" at column {c}")).unwrap_or_default()
    )]
    RankDeficient { what: String, column: Option<usize>, condition: f64 },

    /// An iteration stopped before reaching its tolerance.
    #[error("{what} did not converge in {iterations} iterations (last relative residual {residual:.3e})")]
    NotConverged { what: String, iterations: usize, residual: f64 },

    /// An argument outside the operation's domain (negative weight, bad option,
    /// overlapping operands, unknown column name).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// An environment variable that gpumat reads holds a value it cannot use.
    #[error("{variable}={value:?}: expected {expected}")]
    InvalidEnvironment { variable: &'static str, value: String, expected: &'static str },

    /// The device, its driver or a kernel compiler reported a failure.
    #[error("device error: {0}")]
    Device(String),

    /// A device allocation did not fit: larger than the `free` memory, or
    /// refused by the driver although `free` (read when it refused) was
    /// larger. `requested` is `usize::MAX` when the size overflows.
    #[error("out of device memory: the allocation {}", shortage(*.requested, *.free, "free", "the driver"))]
    OutOfDeviceMemory { requested: usize, free: usize },

    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: Arc<std::io::Error> },

    /// A file's content is malformed.
    #[error("{}:{line}: {message}", path.display())]
    Parse { path: PathBuf, line: usize, message: String },

    /// A host allocation for `what` did not fit: `needed` bytes (`usize::MAX`
    /// when the size overflows) against the `available` memory (see
    /// [`available_memory`](crate::backend::cpu::available_memory)), or
    /// refused by the allocator although that much was available.
    #[error("out of host memory: {what} {}", shortage(*.needed, *.available, "available", "the allocator"))]
    OutOfHostMemory { what: String, needed: usize, available: usize },
}

/// `n` bytes for a message: exact, and in GiB for a reader.
pub fn bytes(n: usize) -> String {
    if n == usize::MAX {
        "more than 2^64 bytes (the size overflows)".to_string()
    } else {
        format!("{n} bytes ({:.1} GiB)", n as f64 / (1u64 << 30) as f64)
    }
}

/// Why an allocation of `needed` bytes failed with `have` bytes `state`: the
/// request was larger, or `by` refused it anyway (a limit or fragmentation),
/// so that a message never reads "asked for less than was free".
fn shortage(needed: usize, have: usize, state: &str, by: &str) -> String {
    if needed > have {
        format!("needs {} but only {} are {state}", bytes(needed), bytes(have))
    } else {
        format!(
            "needs {}; {by} refused it although {} were {state} (fragmentation, a memory-pool or a process limit)",
            bytes(needed),
            bytes(have)
        )
    }
}

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source: Arc::new(source) }
    }

    /// A parse error at `line` (1-based) of `path`.
    pub fn parse(path: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        Error::Parse { path: path.into(), line, message: message.into() }
    }

    /// A dimension mismatch in `op`.
    pub fn dims(op: &'static str, detail: impl Into<String>) -> Self {
        Error::DimensionMismatch { op, detail: detail.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_place() {
        let e = Error::parse("a.mtx", 7, "expected 3 numbers, found 2");
        assert_eq!(e.to_string(), "a.mtx:7: expected 3 numbers, found 2");
        let e = Error::NotPositiveDefinite { column: 4 };
        assert!(e.to_string().contains("column 4"));
        let e = Error::NonFinite { what: "A".into(), row: 2, col: 3, value: f64::NAN };
        assert_eq!(e.to_string(), "A has a non-finite entry NaN at row 2, column 3");
        let e = Error::RankDeficient { what: "design".into(), column: Some(3), condition: 1e17 };
        assert_eq!(e.to_string(), "design is rank deficient at column 3: condition estimate 1.00e17");
        let e = Error::NotSymmetric { row: 3, col: 1 };
        assert_eq!(e.to_string(), "matrix is not symmetric: A(3,1) differs from A(1,3)");
        let e = Error::IllConditioned { rcond: 1e-18, unit_roundoff: 2f64.powi(-53), precision: "f64" };
        assert_eq!(
            e.to_string(),
            "matrix is singular to working precision (f64): reciprocal condition estimate 1.00e-18 is below the \
             unit roundoff 1.11e-16 (condition estimate 1.00e18)"
        );
    }
}
