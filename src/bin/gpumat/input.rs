//! Reading and writing matrices for the commands.

use std::path::{Path, PathBuf};

use gpumat::io::{self, MatrixMarket, MmWriteOptions};
use gpumat::{Device, Error, Matrix, Result};

/// A Matrix Market file on the host; empty matrices refused. The reader
/// checks the dense size against the available memory before it allocates;
/// a caller uploads the result and drops it before computing.
pub fn read_host(path: &Path) -> Result<MatrixMarket> {
    let mm = io::read_matrix_market(path)?;
    if mm.rows == 0 || mm.cols == 0 {
        return Err(Error::Empty { what: path.display().to_string(), rows: mm.rows, cols: mm.cols });
    }
    Ok(mm)
}

/// A Matrix Market file as an `f64` matrix on `dev`; empty matrices refused.
/// The host copy is freed as soon as it is uploaded, so that a command
/// never holds the input twice while it computes.
pub fn read_matrix(dev: &Device, path: &Path) -> Result<Matrix<f64>> {
    let mm = read_host(path)?;
    let a = dev.from_col_major(mm.rows, mm.cols, &mm.data);
    drop(mm);
    a
}

/// Writes `a` as a Matrix Market `array` with round-trip precision, to
/// `path` or, without one, to stdout.
pub fn write_matrix(a: &Matrix<f64>, path: Option<&PathBuf>) -> Result<()> {
    write_host(a.rows(), a.cols(), &a.to_host()?, &MmWriteOptions::default(), path)
}

/// Writes the `rows×cols` column-major `data` as Matrix Market to `path` or,
/// without one, to stdout; a write error on stdout names stdout.
pub fn write_host(rows: usize, cols: usize, data: &[f64], opts: &MmWriteOptions, path: Option<&PathBuf>) -> Result<()> {
    match path {
        Some(p) => io::write_matrix_market(p, rows, cols, data, opts),
        None => io::write_matrix_market_to(std::io::stdout().lock(), rows, cols, data, opts).map_err(|e| match e {
            Error::Io { source, .. } => Error::Io { path: "stdout".into(), source },
            e => e,
        }),
    }
}
