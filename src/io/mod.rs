//! Host-side file formats: Matrix Market matrices and numeric CSV tables.
//!
//! Everything here works on plain host data (a column-major `Vec<f64>` and
//! its shape, or named columns); uploading to a device is the caller's step.
//! Every malformed file is an [`Error::Parse`](crate::Error::Parse) naming
//! the file and the 1-based line, and no input makes a reader panic.
//!
//! - [`read_matrix_market`] / [`write_matrix_market`]: NIST Matrix Market,
//!   `array` and `coordinate`, `real` and `integer`, `general`, `symmetric`
//!   and `skew-symmetric`; written values read back bit-exactly.
//! - [`read_csv`]: a header row of names, then finite numbers, into a
//!   [`Table`] of columns.
//! - [`read_mps`]: a linear program in MPS, fixed or free format, into a
//!   [`LinearProgram`].
//!
//! The submodules [`matrix_market`], [`csv`] and [`mps`] document exactly
//! what is accepted and written.

pub mod csv;
pub mod matrix_market;
pub mod mps;

pub use self::csv::{Table, read_csv, read_csv_from};
pub use self::matrix_market::{
    MAX_DENSE_ENTRIES, MatrixMarket, MmField, MmFormat, MmSymmetry, MmWriteOptions, read_matrix_market,
    read_matrix_market_from, write_matrix_market, write_matrix_market_to,
};
pub use self::mps::{LinearProgram, MpsFormat, RowKind, Sense, read_mps, read_mps_from};
