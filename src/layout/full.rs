//! Full (conventional) storage: column-major with a leading dimension.

use super::Uplo;
use crate::{Error, Result};

/// A `rows × cols` column-major array whose entry `(i, j)` lies at
/// `i + j·ld` from its first entry, `ld ≥ max(rows, 1)` as BLAS requires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full {
    pub rows: usize,
    pub cols: usize,
    pub ld: usize,
}

impl Full {
    /// A contiguous array: `ld = max(rows, 1)`.
    pub fn new(rows: usize, cols: usize) -> Self {
        Full { rows, cols, ld: rows.max(1) }
    }

    /// An array with leading dimension `ld`; `ld < max(rows, 1)` is an error.
    pub fn with_ld(rows: usize, cols: usize, ld: usize) -> Result<Self> {
        let full = Full { rows, cols, ld };
        full.check()?;
        Ok(full)
    }

    /// Offset of entry `(i, j)`. Does not check that `(i, j)` is in range.
    #[inline]
    pub fn index(&self, i: usize, j: usize) -> usize {
        i + j * self.ld
    }

    /// The shortest slice that holds the array: 0 when it is empty, else
    /// `(cols − 1)·ld + rows` (the last column need not be padded to `ld`).
    pub fn len(&self) -> usize {
        if self.is_empty() { 0 } else { (self.cols - 1) * self.ld + self.rows }
    }

    /// Whether the array has no entries.
    pub fn is_empty(&self) -> bool {
        self.rows == 0 || self.cols == 0
    }

    /// `Err` unless `ld ≥ max(rows, 1)`; the fields are public, so
    /// conversions re-check what they are given.
    pub(crate) fn check(&self) -> Result<()> {
        if self.ld < self.rows.max(1) {
            return Err(Error::LeadingDimension { ld: self.ld, rows: self.rows });
        }
        Ok(())
    }
}

/// Whether `(i, j)` lies in the `uplo` triangle (diagonal included).
#[inline]
pub fn in_triangle(uplo: Uplo, i: usize, j: usize) -> bool {
    match uplo {
        Uplo::Lower => i >= j,
        Uplo::Upper => i <= j,
    }
}

/// The rows of column `j` that the `uplo` triangle of an order-`n` matrix
/// holds: `j..n` (lower) or `0..=j` (upper).
#[inline]
pub(crate) fn triangle_rows(uplo: Uplo, n: usize, j: usize) -> std::ops::Range<usize> {
    match uplo {
        Uplo::Lower => j..n,
        Uplo::Upper => 0..j + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn len_and_index() {
        let f = Full::with_ld(3, 4, 5).unwrap();
        assert_eq!(f.index(2, 3), 17);
        assert_eq!(f.len(), 18);
        assert_eq!(Full::new(0, 4).len(), 0);
        assert_eq!(Full::new(0, 4).ld, 1);
        assert!(Full::with_ld(3, 4, 2).is_err());
        assert!(Full::with_ld(0, 0, 0).is_err());
    }

    #[test]
    fn triangles() {
        assert!(in_triangle(Uplo::Lower, 2, 1) && !in_triangle(Uplo::Lower, 1, 2));
        assert!(in_triangle(Uplo::Upper, 1, 2) && in_triangle(Uplo::Upper, 2, 2));
        assert_eq!(triangle_rows(Uplo::Lower, 4, 1), 1..4);
        assert_eq!(triangle_rows(Uplo::Upper, 4, 1), 0..2);
    }
}
