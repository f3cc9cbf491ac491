//! The checks the API makes on its arguments before any work, in one place:
//! shapes (square, vectors), finite entries, weights. What is checked on
//! host data lives in [`crate::solve::check`], below the API, and is called
//! from here on what a device matrix reads back.

use super::Matrix;
use crate::solve::check;
use crate::{Error, Result, Scalar};

/// The order of `a`, or `DimensionMismatch` in `op` unless `a` is square.
pub(crate) fn square<T: Scalar>(op: &'static str, a: &Matrix<T>) -> Result<usize> {
    a.storage()?;
    if a.rows() != a.cols() {
        return Err(Error::dims(op, format!("A must be square, is {}×{}", a.rows(), a.cols())));
    }
    Ok(a.rows())
}

/// `DimensionMismatch` in `op` unless `v` is a vector (one row or one
/// column) of `len` entries, one per observation; `what` names it.
pub(crate) fn vector<T: Scalar>(op: &'static str, what: &str, v: &Matrix<T>, len: usize) -> Result<()> {
    v.storage()?;
    if v.rows().min(v.cols()) > 1 || v.rows() * v.cols() != len {
        return Err(Error::dims(
            op,
            format!("{what} must be a vector of {len} entries (one per observation), is {}×{}", v.rows(), v.cols()),
        ));
    }
    Ok(())
}

/// `NonFinite`, naming `what` and the first NaN or infinity of `a`
/// (column by column, 1-based), unless all its entries are finite. Waits.
pub(crate) fn finite<T: Scalar>(what: &str, a: &Matrix<T>) -> Result<()> {
    if let Some((i, j)) = a.find_non_finite()? {
        let value = a.entry(i, j)?.to_f64();
        return Err(Error::NonFinite { what: what.into(), row: i + 1, col: j + 1, value });
    }
    Ok(())
}

/// What a method does with the weights, and so what they must allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Weighting {
    /// Multiplies by `d` (QR of `D·A`): finite and `≥ 0`.
    Linear,
    /// Scales by `d²` in one pass (`A·D²·Aᵀ`): also each `dᵢ²` finite.
    Squared,
}

/// Checks that `d` is a vector of `len` weights fit for `weighting` and
/// returns them on the host (a vector is cheap to read back): a wrong shape
/// is `DimensionMismatch`, then `NonFinite`, `NegativeWeight` or
/// `WeightOverflow` for the first bad entry. Waits.
pub(crate) fn weights<T: Scalar>(op: &'static str, d: &Matrix<T>, len: usize, weighting: Weighting) -> Result<Vec<T>> {
    vector(op, "the weights d", d, len)?;
    let host = d.to_host()?;
    check::weights(&host)?;
    if weighting == Weighting::Squared {
        check::weight_squares(&host)?;
    }
    Ok(host)
}
