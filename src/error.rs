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

    /// A factorization without pivoting met a pivot of magnitude at most
    /// `n·u·‖A‖` in `column` (1-based): the matrix needs pivoting (or is
    /// singular), and the factor would be meaningless.
    #[error("zero pivot in column {column} of a factorization without pivoting: the matrix needs pivoting")]
    ZeroPivot { column: usize },

    /// One member of a batch failed (the others were solved): `index`
    /// counts from 0, as the batch's members do.
    #[error("system {index} of the batch (counted from 0): {source}")]
    InBatch { index: usize, source: Box<Error> },

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

    /// A result that exists but is beyond the largest finite number of the
    /// precision (a solution, an inverse, a determinant): returned instead
    /// of infinities or NaNs in its place.
    #[error("{what} is not representable: it overflows the floating-point range")]
    Overflow { what: String },

    /// A nonzero result below the smallest normal number of the precision,
    /// which would be returned as zero or with lost digits.
    #[error("{what} is not representable: it underflows the floating-point range")]
    Underflow { what: String },

    /// An iteration stopped before reaching its tolerance.
    #[error("{what} did not converge in {iterations} iterations (last relative residual {residual:.3e})")]
    NotConverged { what: String, iterations: usize, residual: f64 },

    /// A weight of least squares or of `A·D²·Aᵀ` is negative: weights
    /// multiply residuals (or scale columns) and must be `≥ 0`. `index` is
    /// 1-based: the observation, or the column of `A`.
    #[error("weight d[{index}] = {value} is negative; weights must be ≥ 0")]
    NegativeWeight { index: usize, value: f64 },

    /// A weight whose square overflows in the working precision, where the
    /// method scales by `d²` in one pass (`∞`, or `0·∞ = NaN`, where the
    /// product is finite). Rescaling the weights (or `A`) avoids it.
    #[error("weight d[{index}] = {value:e} overflows when squared in {precision}")]
    WeightOverflow { index: usize, value: f64, precision: &'static str },

    /// Operands of one call live on different devices.
    #[error("operands live on different devices ({first} and {second})")]
    DifferentDevices { first: String, second: String },

    /// An output shares memory with an input where the operation needs them
    /// apart (it would read what it has already overwritten).
    #[error("{op}: {operands} overlap in one buffer; they must be disjoint")]
    Overlapping { op: String, operands: &'static str },

    /// A dimension exceeds what a library's interface can pass (cuBLAS's
    /// 32-bit `int`).
    #[error("{op}: dimension {dim} exceeds {library}'s limit of {limit}")]
    TooLarge { op: String, dim: usize, limit: usize, library: DeviceLibrary },

    /// A leading dimension smaller than the rows of the block it lays out.
    #[error("leading dimension {ld} is less than max(rows, 1) = {} for {rows} rows", (*.rows).max(1))]
    LeadingDimension { ld: usize, rows: usize },

    /// An argument outside the operation's domain that no other variant
    /// names (a bad option, an internal block outside its array).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// An environment variable that gpumat reads holds a value it cannot use.
    #[error("{variable}={value:?}: expected {expected}")]
    InvalidEnvironment { variable: &'static str, value: String, expected: &'static str },

    /// A call into the CUDA stack returned an error status: `status` is the
    /// library's name for it (`CUDA_ERROR_ILLEGAL_ADDRESS`,
    /// `CUBLAS_STATUS_EXECUTION_FAILED`), `detail` its description where
    /// the library gives one, `op` what gpumat was doing.
    #[error(
        "device error: {library} returned {status}{} in {op}",
        .detail.as_ref().map(|d| format!(" ({d})")).unwrap_or_default()
    )]
    DeviceCall { library: DeviceLibrary, op: String, status: String, detail: Option<String> },

    /// The device could not be used, where no library status says more (no
    /// driver installed, a library that cannot be loaded).
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

/// The part of the CUDA stack that reported a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceLibrary {
    Driver,
    Cublas,
    Cusolver,
    Cusparse,
    Nvrtc,
    Nccl,
}

impl std::fmt::Display for DeviceLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DeviceLibrary::Driver => "the CUDA driver",
            DeviceLibrary::Cublas => "cuBLAS",
            DeviceLibrary::Cusolver => "cuSOLVER",
            DeviceLibrary::Cusparse => "cuSPARSE",
            DeviceLibrary::Nvrtc => "NVRTC",
            DeviceLibrary::Nccl => "NCCL",
        })
    }
}

impl Error {
    /// A failed call into `library` while doing `op`; `status` is the
    /// library's status enum, whose `Debug` is its name.
    pub fn device_call(library: DeviceLibrary, op: impl Into<String>, status: impl std::fmt::Debug) -> Self {
        Error::DeviceCall { library, op: op.into(), status: format!("{status:?}"), detail: None }
    }

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
        let e = Error::NegativeWeight { index: 5, value: -0.5 };
        assert_eq!(e.to_string(), "weight d[5] = -0.5 is negative; weights must be ≥ 0");
        let e = Error::WeightOverflow { index: 6, value: 1e160, precision: "f64" };
        assert_eq!(e.to_string(), "weight d[6] = 1e160 overflows when squared in f64");
        let e = Error::Overlapping { op: "gemm".into(), operands: "the output block and an input block" };
        assert_eq!(
            e.to_string(),
            "gemm: the output block and an input block overlap in one buffer; they must be disjoint"
        );
        let e = Error::LeadingDimension { ld: 0, rows: 0 };
        assert_eq!(e.to_string(), "leading dimension 0 is less than max(rows, 1) = 1 for 0 rows");
        let e = Error::DifferentDevices { first: "CPU".into(), second: "CUDA GPU 0".into() };
        assert_eq!(e.to_string(), "operands live on different devices (CPU and CUDA GPU 0)");
        let e = Error::TooLarge {
            op: "gemm".into(),
            dim: 1 << 31,
            limit: i32::MAX as usize,
            library: DeviceLibrary::Cublas,
        };
        assert_eq!(e.to_string(), "gemm: dimension 2147483648 exceeds cuBLAS's limit of 2147483647");
        let e = Error::IllConditioned { rcond: 1e-18, unit_roundoff: 2f64.powi(-53), precision: "f64" };
        assert_eq!(
            e.to_string(),
            "matrix is singular to working precision (f64): reciprocal condition estimate 1.00e-18 is below the \
             unit roundoff 1.11e-16 (condition estimate 1.00e18)"
        );
        let e = Error::Overflow { what: "X".into() };
        assert_eq!(e.to_string(), "X is not representable: it overflows the floating-point range");
    }

    /// The CUDA stack's failures keep the library, the status by name and
    /// what was being done: a caller can match on them without a GPU here.
    #[test]
    fn device_calls_name_library_and_status() {
        #[derive(Debug)]
        #[allow(non_camel_case_types)]
        enum cublasStatus_t {
            CUBLAS_STATUS_EXECUTION_FAILED,
        }
        let e = Error::device_call(DeviceLibrary::Cublas, "gemm", cublasStatus_t::CUBLAS_STATUS_EXECUTION_FAILED);
        assert!(matches!(&e, Error::DeviceCall { library: DeviceLibrary::Cublas, status, detail: None, .. }
                if status == "CUBLAS_STATUS_EXECUTION_FAILED"));
        assert_eq!(e.to_string(), "device error: cuBLAS returned CUBLAS_STATUS_EXECUTION_FAILED in gemm");
        let e = Error::DeviceCall {
            library: DeviceLibrary::Driver,
            op: "launching potrf_panel".into(),
            status: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
            detail: Some("an illegal memory access was encountered".into()),
        };
        assert_eq!(
            e.to_string(),
            "device error: the CUDA driver returned CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was \
             encountered) in launching potrf_panel"
        );
    }
}
