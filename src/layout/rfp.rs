//! LAPACK's rectangular full packed (RFP) format.
//!
//! A triangle of order `n` is split at `n1` into
//!
//! ```text
//!     [ A11      ]          [ A11  A12 ]
//!     [ A21  A22 ]   or     [      A22 ]      (A11: n1 × n1, A22: n2 × n2)
//! ```
//!
//! and the three blocks are fitted into one rectangle of `n(n+1)/2` entries:
//! the two triangles, one of them transposed, side by side so that together
//! with the off-diagonal block they fill it exactly. The rectangle is
//! `n × (n+1)/2` (n odd) or `(n+1) × n/2` (n even), stored with `ld` equal to
//! its row count (`TRANSR = 'N'`), or its transpose (`TRANSR = 'T'`).
//! As in `dpftrf`, `n1 = ⌈n/2⌉` for `UPLO = 'L'` and `n1 = ⌊n/2⌋` for
//! `UPLO = 'U'`.
//!
//! [`Rfp::pieces`] gives the three blocks as full-storage views of the array:
//! this is what lets a packed Cholesky (`dpftrf`) or a packed rank-k update
//! (`dsfrk`) be a few calls to ordinary full-storage kernels.

use super::full::{Full, in_triangle, triangle_rows};
use super::{Transr, Uplo};

/// The `uplo` triangle of an order-`n` matrix in RFP format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rfp {
    pub n: usize,
    pub transr: Transr,
    pub uplo: Uplo,
}

/// A square diagonal block of the matrix as a triangle of the RFP array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrianglePiece {
    /// Position of the block's `(0, 0)` in the RFP array.
    pub offset: usize,
    /// `size × size` with the rectangle's leading dimension.
    pub full: Full,
    /// The triangle of `full` that holds the block.
    pub uplo: Uplo,
    /// Whether the block is stored transposed, i.e. `uplo` is the flip of the
    /// matrix's `uplo`: piece entry `(r, c)` is then the block's `(c, r)`.
    pub transposed: bool,
}

/// The off-diagonal block of the stored triangle as a rectangle of the RFP
/// array: `A21` (`n2 × n1`) when `uplo = Lower`, `A12` (`n1 × n2`) when
/// `uplo = Upper`, or its transpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RectPiece {
    /// Position of the block's `(0, 0)` in the RFP array.
    pub offset: usize,
    pub full: Full,
    /// Whether the rectangle holds the transpose of the stored block
    /// (`A21ᵀ = A12` for lower, `A12ᵀ = A21` for upper): true exactly when
    /// `transr = Transpose`.
    pub transposed: bool,
}

/// The three full-storage pieces that tile an RFP array, as `dpftrf` uses
/// them: `t1` holds `A11`, `s` the off-diagonal block, `t2` holds `A22`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RfpPieces {
    /// Order of `A11`: `⌈n/2⌉` for lower, `⌊n/2⌋` for upper.
    pub n1: usize,
    /// Order of `A22`: `n − n1`.
    pub n2: usize,
    pub t1: TrianglePiece,
    pub s: RectPiece,
    pub t2: TrianglePiece,
}

impl Rfp {
    pub fn new(n: usize, transr: Transr, uplo: Uplo) -> Self {
        Rfp { n, transr, uplo }
    }

    /// `n(n+1)/2`.
    pub fn len(&self) -> usize {
        self.n * (self.n + 1) / 2
    }

    /// Whether the order is 0.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The orders `(n1, n2)` of `A11` and `A22`, as `dpftrf` sets them.
    pub fn split(&self) -> (usize, usize) {
        let half = self.n / 2;
        match self.uplo {
            Uplo::Lower => (self.n - half, half),
            Uplo::Upper => (half, self.n - half),
        }
    }

    /// The rectangle as stored (`dpftrf`'s description of `A`):
    /// `TRANSR = 'N'`: `n × (n+1)/2` with `ld = n` (n odd) or `(n+1) × n/2`
    /// with `ld = n + 1` (n even); `TRANSR = 'T'`: the transposes, with
    /// `ld = (n+1)/2` (n odd) or `n/2` (n even; 1 when `n = 0`).
    pub fn rect(&self) -> Full {
        let n = self.n;
        let (rows, cols) = if n % 2 == 1 { (n, n.div_ceil(2)) } else { (n + 1, n / 2) };
        match self.transr {
            Transr::Normal => Full { rows, cols, ld: rows },
            Transr::Transpose => Full { rows: cols, cols: rows, ld: cols.max(1) },
        }
    }

    /// The pieces, read off the four calls of LAPACK's `dpftrf` in each of
    /// its eight cases. `T1`, `S`, `T2` name `dpftrf`'s own comments; `k =
    /// n/2` for n even, when `n1 = n2 = k`.
    pub fn pieces(&self) -> RfpPieces {
        use {Transr::*, Uplo::*};
        let (n1, n2) = self.split();
        let n = self.n;
        let k = n / 2;
        let ld = self.rect().ld;
        // (t1 offset, s offset, t2 offset); the uplo of each triangle and the
        // orientation of `s` follow from `transr` alone (see below).
        let (o1, os, o2) = match (self.transr, self.uplo, n % 2 == 1) {
            // dpotrf('L', n1, a(0), n); dtrsm('R','L','T','N', n2, n1, a(0), n, a(n1), n);
            // dsyrk('U','N', n2, n1, a(n1), n, a(n), n); dpotrf('U', n2, a(n), n)
            (Normal, Lower, true) => (0, n1, n),
            // dpotrf('L', n1, a(n2), n); dtrsm('L','L','N','N', n1, n2, a(n2), n, a(0), n);
            // dsyrk('U','T', n2, n1, a(0), n, a(n1), n); dpotrf('U', n2, a(n1), n)
            (Normal, Upper, true) => (n2, 0, n1),
            // dpotrf('U', n1, a(0), n1); dtrsm('L','U','T','N', n1, n2, a(0), n1, a(n1·n1), n1);
            // dsyrk('L','T', n2, n1, a(n1·n1), n1, a(1), n1); dpotrf('L', n2, a(1), n1)
            (Transpose, Lower, true) => (0, n1 * n1, 1),
            // dpotrf('U', n1, a(n2·n2), n2); dtrsm('R','U','N','N', n2, n1, a(n2·n2), n2, a(0), n2);
            // dsyrk('L','N', n2, n1, a(0), n2, a(n1·n2), n2); dpotrf('L', n2, a(n1·n2), n2)
            (Transpose, Upper, true) => (n2 * n2, 0, n1 * n2),
            // dpotrf('L', k, a(1), n+1); dtrsm('R','L','T','N', k, k, a(1), n+1, a(k+1), n+1);
            // dsyrk('U','N', k, k, a(k+1), n+1, a(0), n+1); dpotrf('U', k, a(0), n+1)
            (Normal, Lower, false) => (1, k + 1, 0),
            // dpotrf('L', k, a(k+1), n+1); dtrsm('L','L','N','N', k, k, a(k+1), n+1, a(0), n+1);
            // dsyrk('U','T', k, k, a(0), n+1, a(k), n+1); dpotrf('U', k, a(k), n+1)
            (Normal, Upper, false) => (k + 1, 0, k),
            // dpotrf('U', k, a(k), k); dtrsm('L','U','T','N', k, k, a(k), k, a(k(k+1)), k);
            // dsyrk('L','T', k, k, a(k(k+1)), k, a(0), k); dpotrf('L', k, a(0), k)
            (Transpose, Lower, false) => (k, k * (k + 1), 0),
            // dpotrf('U', k, a(k(k+1)), k); dtrsm('R','U','N','N', k, k, a(k(k+1)), k, a(0), k);
            // dsyrk('L','N', k, k, a(0), k, a(k·k), k); dpotrf('L', k, a(k·k), k)
            (Transpose, Upper, false) => (k * (k + 1), 0, k * k),
        };
        // In every case dpftrf factors T1 with 'L' and T2 with 'U' when
        // TRANSR = 'N', and the reverse when TRANSR = 'T'.
        let (u1, u2) = match self.transr {
            Normal => (Lower, Upper),
            Transpose => (Upper, Lower),
        };
        let triangle = |offset, size, uplo: Uplo| TrianglePiece {
            offset,
            full: Full { rows: size, cols: size, ld },
            uplo,
            transposed: uplo != self.uplo,
        };
        // The stored off-diagonal block: A21 (n2 × n1) or A12 (n1 × n2).
        let (rows, cols) = match self.uplo {
            Lower => (n2, n1),
            Upper => (n1, n2),
        };
        let transposed = self.transr == Transpose;
        let (rows, cols) = if transposed { (cols, rows) } else { (rows, cols) };
        RfpPieces {
            n1,
            n2,
            t1: triangle(o1, n1, u1),
            s: RectPiece { offset: os, full: Full { rows, cols, ld }, transposed },
            t2: triangle(o2, n2, u2),
        }
    }

    /// Position in the RFP array of `A(i, j)`, 0-based, for `(i, j)` in the
    /// stored triangle; `None` outside it or out of range.
    pub fn index(&self, i: usize, j: usize) -> Option<usize> {
        if i >= self.n || j >= self.n || !in_triangle(self.uplo, i, j) {
            return None;
        }
        let n1 = self.split().0;
        let [t1, s, t2] = self.placements();
        let p = match (i < n1, j < n1) {
            (true, true) => t1,
            (false, false) => t2,
            _ => s,
        };
        let (r, c) = (i - p.origin.0, j - p.origin.1);
        let (r, c) = if p.transposed { (c, r) } else { (r, c) };
        Some(p.offset + r + c * p.ld)
    }

    /// The pieces with where their block sits in `A`: the common ground of
    /// [`Rfp::index`] and the conversions.
    pub(crate) fn placements(&self) -> [Placement; 3] {
        let p = self.pieces();
        let n1 = p.n1;
        let off_diagonal = match self.uplo {
            Uplo::Lower => (n1, 0),
            Uplo::Upper => (0, n1),
        };
        let tri = |t: TrianglePiece, origin| Placement {
            offset: t.offset,
            ld: t.full.ld,
            rows: t.full.rows,
            cols: t.full.cols,
            shape: Some(t.uplo),
            origin,
            transposed: t.transposed,
        };
        [
            tri(p.t1, (0, 0)),
            Placement {
                offset: p.s.offset,
                ld: p.s.full.ld,
                rows: p.s.full.rows,
                cols: p.s.full.cols,
                shape: None,
                origin: off_diagonal,
                transposed: p.s.transposed,
            },
            tri(p.t2, (n1, n1)),
        ]
    }
}

/// A piece of the RFP array and the block of `A` it holds: piece entry
/// `(r, c)` (in the `shape` triangle, or anywhere when `shape` is `None`) is
/// `A(origin + (r, c))`, or `A(origin + (c, r))` when `transposed`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placement {
    pub offset: usize,
    pub ld: usize,
    pub rows: usize,
    pub cols: usize,
    pub shape: Option<Uplo>,
    pub origin: (usize, usize),
    pub transposed: bool,
}

impl Placement {
    /// The piece rows present in piece column `c`.
    #[inline]
    pub fn rows_of(&self, c: usize) -> std::ops::Range<usize> {
        match self.shape {
            None => 0..self.rows,
            Some(uplo) => triangle_rows(uplo, self.rows, c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rect_shapes() {
        let r = Rfp::new(5, Transr::Normal, Uplo::Lower).rect();
        assert_eq!((r.rows, r.cols, r.ld), (5, 3, 5));
        let r = Rfp::new(6, Transr::Normal, Uplo::Upper).rect();
        assert_eq!((r.rows, r.cols, r.ld), (7, 3, 7));
        let r = Rfp::new(5, Transr::Transpose, Uplo::Upper).rect();
        assert_eq!((r.rows, r.cols, r.ld), (3, 5, 3));
        let r = Rfp::new(6, Transr::Transpose, Uplo::Lower).rect();
        assert_eq!((r.rows, r.cols, r.ld), (3, 7, 3));
        let r = Rfp::new(0, Transr::Transpose, Uplo::Lower).rect();
        assert_eq!((r.len(), r.ld), (0, 1));
    }

    #[test]
    fn split_as_dpftrf() {
        assert_eq!(Rfp::new(5, Transr::Normal, Uplo::Lower).split(), (3, 2));
        assert_eq!(Rfp::new(5, Transr::Normal, Uplo::Upper).split(), (2, 3));
        assert_eq!(Rfp::new(6, Transr::Transpose, Uplo::Upper).split(), (3, 3));
    }
}
