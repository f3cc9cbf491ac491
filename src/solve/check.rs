//! Checks on problem data held on the host, made before any work: the
//! lowest layer that takes weights and data as slices checks them here, and
//! the API calls the same functions on what it reads back.

use crate::{Error, Result, Scalar};

/// `Err` unless every weight is finite and `≥ 0`; names the first bad one
/// (1-based).
pub fn weights<T: Scalar>(w: &[T]) -> Result<()> {
    for (i, &x) in w.iter().enumerate() {
        let value = x.to_f64();
        if !value.is_finite() {
            return Err(Error::NonFinite { what: "the weights d".into(), row: i + 1, col: 1, value });
        }
        if value < 0.0 {
            return Err(Error::NegativeWeight { index: i + 1, value });
        }
    }
    Ok(())
}

/// `Err` unless every weight's square is finite in `T`: methods that scale
/// by `d²` in one pass would otherwise give `∞` (or `0·∞ = NaN`) where the
/// product is finite.
pub fn weight_squares<T: Scalar>(w: &[T]) -> Result<()> {
    match w.iter().position(|&x| !(x * x).to_f64().is_finite()) {
        Some(i) => Err(Error::WeightOverflow { index: i + 1, value: w[i].to_f64(), precision: T::NAME }),
        None => Ok(()),
    }
}

/// `Err` naming the first NaN or infinity of the column-major `rows`-row
/// array `a` (1-based row and column), called `what`.
pub fn finite(what: &str, a: &[f64], rows: usize) -> Result<()> {
    match a.iter().position(|v| !v.is_finite()) {
        Some(p) => Err(Error::NonFinite { what: what.into(), row: p % rows + 1, col: p / rows + 1, value: a[p] }),
        None => Ok(()),
    }
}

/// `Err` unless there are some unknowns and at least as many observations
/// as unknowns. `design` names the matrix (when it is empty); `along` says
/// whether its observations are its `"rows"` or its `"columns"`.
pub fn observations(op: &'static str, design: &str, along: &str, observations: usize, unknowns: usize) -> Result<()> {
    if unknowns == 0 {
        let (rows, cols) = if along == "rows" { (observations, 0) } else { (0, observations) };
        return Err(Error::Empty { what: design.into(), rows, cols });
    }
    if observations < unknowns {
        let across = if along == "rows" { "columns" } else { "rows" };
        return Err(Error::dims(
            op,
            format!(
                "{observations} observations ({along} of A) for {unknowns} unknowns ({across} of A): at least \
                 {unknowns} are needed"
            ),
        ));
    }
    Ok(())
}
