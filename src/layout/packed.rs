//! LAPACK's packed storage of a triangle (`AP` in `dpptrf`, `dtrttp`).
//!
//! The columns of the triangle are stored one after the other: column `j`
//! holds rows `0..=j` (upper) or `j..n` (lower).

use super::Uplo;
use super::full::in_triangle;

/// The `uplo` triangle of an order-`n` matrix, packed by columns in
/// `n(n+1)/2` entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packed {
    pub n: usize,
    pub uplo: Uplo,
}

impl Packed {
    pub fn new(n: usize, uplo: Uplo) -> Self {
        Packed { n, uplo }
    }

    /// `n(n+1)/2`.
    pub fn len(&self) -> usize {
        self.n * (self.n + 1) / 2
    }

    /// Whether the order is 0.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Position of `A(i, j)`; `None` outside the stored triangle.
    pub fn index(&self, i: usize, j: usize) -> Option<usize> {
        (i < self.n && j < self.n && in_triangle(self.uplo, i, j)).then(|| self.at(i, j))
    }

    /// Position of `A(i, j)`, `(i, j)` in the triangle (unchecked). Column
    /// `j` starts after `j(j+1)/2` entries (upper) or after
    /// `n + (n−1) + … + (n−j+1) = j(2n−j+1)/2` entries whose first row is
    /// `j` (lower).
    #[inline]
    pub(crate) fn at(&self, i: usize, j: usize) -> usize {
        match self.uplo {
            Uplo::Upper => i + j * (j + 1) / 2,
            Uplo::Lower => i + j * (2 * self.n - j - 1) / 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_three() {
        // LAPACK: AP(1) = A(1,1), AP(2) = A(2,1), AP(3) = A(3,1), AP(4) = A(2,2), …
        let lower = Packed::new(3, Uplo::Lower);
        let got: Vec<_> = [(0, 0), (1, 0), (2, 0), (1, 1), (2, 1), (2, 2)].map(|(i, j)| lower.index(i, j)).into();
        assert_eq!(got, (0..6).map(Some).collect::<Vec<_>>());
        // AP(1) = A(1,1), AP(2) = A(1,2), AP(3) = A(2,2), AP(4) = A(1,3), …
        let upper = Packed::new(3, Uplo::Upper);
        let got: Vec<_> = [(0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2)].map(|(i, j)| upper.index(i, j)).into();
        assert_eq!(got, (0..6).map(Some).collect::<Vec<_>>());
        assert_eq!(upper.index(1, 0), None);
        assert_eq!(lower.index(3, 0), None);
    }
}
