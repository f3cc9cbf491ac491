//! Which elements of a buffer an operation touches, and whether a write can
//! collide with a read.
//!
//! Blocks of one buffer with the same leading dimension are compared exactly,
//! column by column, including triangles: the two triangles of an RFP
//! rectangle share a bounding box but not an element, and must pass. Blocks
//! with different leading dimensions are compared by the memory ranges they
//! span, which is conservative.

use super::view::Block;
use crate::layout::Uplo;
use crate::{Error, Result};

/// The part of a block an operation accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Full,
    /// The triangle (with its diagonal) on the given side of the diagonal.
    Triangle(Uplo),
}

/// A block and the part of it accessed, in a buffer identified by address.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    pub buffer: *const (),
    pub block: Block,
    pub shape: Shape,
}

impl Region {
    pub fn new<T>(buffer: &T, block: Block, shape: Shape) -> Self {
        Region { buffer: buffer as *const T as *const (), block, shape }
    }

    /// Rows `[lo, hi)` of local column `j` that the region touches.
    fn rows_of_column(&self, j: usize) -> (usize, usize) {
        let m = self.block.rows;
        match self.shape {
            Shape::Full => (0, m),
            Shape::Triangle(Uplo::Lower) => (j.min(m), m),
            Shape::Triangle(Uplo::Upper) => (0, (j + 1).min(m)),
        }
    }

    /// Addresses `[start, end)` the region touches in local column `j`.
    fn column_span(&self, j: usize) -> (usize, usize) {
        let (lo, hi) = self.rows_of_column(j);
        let start = self.block.offset + j * self.block.ld;
        (start + lo, start + hi)
    }

    fn overlaps(&self, other: &Region) -> bool {
        if self.buffer != other.buffer || self.block.is_empty() || other.block.is_empty() {
            return false;
        }
        let (a, b) = (self.block, other.block);
        if a.end() <= b.offset || b.end() <= a.offset {
            return false;
        }
        if a.ld != b.ld {
            return true;
        }
        // A column spans at most `ld` addresses and columns start `ld` apart,
        // so a column of `self` can meet at most two columns of `other`.
        let ld = a.ld;
        (0..a.cols).any(|j| {
            let (s, e) = self.column_span(j);
            if s == e {
                return false;
            }
            let first = s.saturating_sub(b.offset) / ld;
            (first..(first + 2).min(b.cols)).any(|k| {
                let (t, f) = other.column_span(k);
                t < f && s < f && t < e
            })
        })
    }
}

/// Fails if `written` shares an element with any of `read`.
pub fn check_disjoint(op: &str, written: Region, read: &[Region]) -> Result<()> {
    if read.iter().any(|r| written.overlaps(r)) {
        return Err(Error::Overlapping { op: op.into(), operands: "the output block and an input block" });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(buf: &u8, offset: usize, rows: usize, cols: usize, ld: usize, shape: Shape) -> Region {
        Region::new(buf, Block { offset, rows, cols, ld }, shape)
    }

    #[test]
    fn rfp_triangles_sharing_a_bounding_box_are_disjoint() {
        // TRANSR=N, UPLO=L, n=5: A11 lower 3×3 at offset 0, A22 upper 2×2 at offset 5, ld 5.
        let buf = 0u8;
        let t1 = region(&buf, 0, 3, 3, 5, Shape::Triangle(Uplo::Lower));
        let t2 = region(&buf, 5, 2, 2, 5, Shape::Triangle(Uplo::Upper));
        assert!(!t1.overlaps(&t2) && !t2.overlaps(&t1));
        // Shifting A22 down one row makes it hit A11's element (1, 1).
        let t2_shifted = region(&buf, 6, 2, 2, 5, Shape::Triangle(Uplo::Upper));
        assert!(t1.overlaps(&t2_shifted));
    }

    #[test]
    fn rfp_pieces_at_an_offset_are_disjoint() {
        // The same two triangles, the array starting at offset 1: A11's rows
        // now cross a multiple of ld counted from the buffer's start.
        let buf = 0u8;
        let t1 = region(&buf, 1, 3, 3, 5, Shape::Triangle(Uplo::Lower));
        let t2 = region(&buf, 6, 2, 2, 5, Shape::Triangle(Uplo::Upper));
        assert!(!t1.overlaps(&t2) && !t2.overlaps(&t1));
    }

    #[test]
    fn exact_against_brute_force() {
        let buf = 0u8;
        let shapes = [Shape::Full, Shape::Triangle(Uplo::Lower), Shape::Triangle(Uplo::Upper)];
        let ld = 6;
        let elements = |r: &Region| {
            let mut v = vec![];
            for j in 0..r.block.cols {
                let (lo, hi) = r.rows_of_column(j);
                v.extend((lo..hi).map(|i| r.block.index(i, j)));
            }
            v
        };
        for off_a in 0..14 {
            for off_b in 0..14 {
                for (m, n) in [(1, 1), (2, 3), (3, 3), (4, 2)] {
                    for sa in shapes {
                        for sb in shapes {
                            let a = region(&buf, off_a, m, n, ld, sa);
                            let b = region(&buf, off_b, n, m, ld, sb);
                            let (ea, eb) = (elements(&a), elements(&b));
                            let truth = ea.iter().any(|x| eb.contains(x));
                            assert_eq!(a.overlaps(&b), truth, "{a:?} {b:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn different_buffers_never_overlap() {
        let (x, y) = (0u8, 0u8);
        let a = region(&x, 0, 4, 4, 4, Shape::Full);
        let b = region(&y, 0, 4, 4, 4, Shape::Full);
        assert!(check_disjoint("gemm", a, &[b]).is_ok());
        assert!(check_disjoint("gemm", a, &[a]).is_err());
    }
}
