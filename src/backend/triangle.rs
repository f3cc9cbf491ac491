//! Where the blocks of a factor's lower triangle are stored.
//!
//! A symmetric factorization addresses blocks of its factor `L` by their
//! rows and columns in `L`; a [`Triangle`] says where each lies in a buffer.
//! In full storage that is one triangle of an array; in RFP storage it is
//! three pieces of the packed rectangle (LAPACK's `dpftrf` layout), some of
//! them holding their block transposed. Algorithms written against it run
//! unchanged on either storage.

use super::{Block, Op};
use crate::layout::{Full, Rfp, TrianglePiece, Uplo};
use crate::{Error, Result};

/// A block of `L` as stored: `block` holds it, or its transpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stored {
    pub block: Block,
    pub transposed: bool,
}

impl Stored {
    pub fn sub(&self, i: usize, j: usize, rows: usize, cols: usize) -> Result<Stored> {
        let block =
            if self.transposed { self.block.sub(j, i, cols, rows)? } else { self.block.sub(i, j, rows, cols)? };
        Ok(Stored { block, ..*self })
    }

    /// The triangle of a stored diagonal block that holds `L`'s.
    pub fn uplo(&self) -> Uplo {
        if self.transposed { Uplo::Upper } else { Uplo::Lower }
    }

    /// The `Op` that turns the stored block into the block of `L`
    /// (`transpose = false`) or of `Lᵀ` (`transpose = true`).
    pub fn op(&self, transpose: bool) -> Op {
        if self.transposed != transpose { Op::Trans } else { Op::NoTrans }
    }
}

/// Where the blocks of a lower trapezoid `L` (`rows × cols`, `rows ≥ cols`)
/// are stored. Rows and columns are split at `split`: `L11` (both below
/// `split`), `L21` (rows from `split`, columns below it) and `L22` (both from
/// `split`) are three stored blocks. Full storage has one piece (`split =
/// cols`, `L21` the rows below a panel); RFP storage has three.
#[derive(Clone, Copy, Debug)]
pub struct Triangle {
    pub rows: usize,
    pub cols: usize,
    pub split: usize,
    pub l11: Stored,
    pub l21: Stored,
    pub l22: Stored,
    /// `L21` continues `L11` in storage (same block, rows past `split`): a
    /// block across `split` is then one stored block.
    pub joined: bool,
}

impl Triangle {
    /// The `uplo` triangle (`Upper` holds `Lᵀ`) of `block`: square, or a
    /// panel with more rows of `L` than columns.
    pub fn full(uplo: Uplo, block: Block) -> Result<Self> {
        let transposed = uplo == Uplo::Upper;
        let (rows, cols) = if transposed { (block.cols, block.rows) } else { (block.rows, block.cols) };
        if rows < cols {
            return Err(Error::dims(
                "triangle",
                format!(
                    "a {}×{} block: the {uplo:?} triangle needs at least as many rows of L as columns",
                    block.rows, block.cols
                ),
            ));
        }
        let l11 = Stored { block, transposed };
        // With `split = cols` no block of `L22` is ever asked for.
        Ok(Triangle { rows, cols, split: cols, l11, l21: l11.sub(cols, 0, rows - cols, cols)?, l22: l11, joined: true })
    }

    /// Where the factor's blocks lie in the RFP array that starts at `base` in
    /// its buffer: `L11` in `T1`, `L21` in `S`, `L22` in `T2`, each stored as
    /// it is or transposed (an upper triangle holds `Lᵀ`). In four of the eight
    /// layouts `S = L21` lies right below a lower `T1` (or `S = L21ᵀ` right of
    /// an upper one) with the same leading dimension: a block column of the
    /// first half is then one block.
    pub fn rfp(rfp: Rfp, base: usize) -> Self {
        let p = rfp.pieces();
        let (n1, n2) = (p.n1, p.n2);
        let stored = |offset: usize, full: Full, transposed: bool| Stored {
            block: Block { offset: base + offset, rows: full.rows, cols: full.cols, ld: full.ld },
            transposed,
        };
        let triangle = |t: TrianglePiece| stored(t.offset, t.full, t.uplo == Uplo::Upper);
        let (mut l11, l22) = (triangle(p.t1), triangle(p.t2));
        // The stored off-diagonal block is A21 for UPLO = L and A12 = A21ᵀ for U.
        let l21 = stored(p.s.offset, p.s.full, (rfp.uplo == Uplo::Lower) == p.s.transposed);
        let tall =
            if l11.transposed { Block { cols: n1 + n2, ..l11.block } } else { Block { rows: n1 + n2, ..l11.block } };
        let tall = Stored { block: tall, ..l11 };
        let joined = n1 > 0 && n2 > 0 && tall.sub(n1, 0, n2, n1).ok() == Some(l21);
        if joined {
            l11 = tall;
        }
        Triangle { rows: rfp.n, cols: rfp.n, split: n1, l11, l21, l22, joined }
    }

    /// The position in the buffer of entry `(i, j)` of `L`, `i ≥ j`: for
    /// element-wise work (pivot searches and symmetric interchanges) that
    /// reads single entries wherever they are stored.
    #[inline]
    pub fn locate(&self, i: usize, j: usize) -> usize {
        let s = self.split;
        let (piece, r, c) = if j >= s {
            (self.l22, i - s, j - s)
        } else if i < s || self.joined {
            (self.l11, i, j)
        } else {
            (self.l21, i - s, j)
        };
        let b = piece.block;
        if piece.transposed { b.offset + c + r * b.ld } else { b.offset + r + c * b.ld }
    }

    /// Rows `i..i + rows`, columns `j..j + cols` of `L`, which must lie in
    /// one stored piece.
    pub fn at(&self, i: usize, j: usize, rows: usize, cols: usize) -> Result<Stored> {
        let s = self.split;
        let past_split = |x: usize| {
            x.checked_sub(s).ok_or_else(|| {
                Error::InvalidArgument(format!("block {rows}×{cols} at ({i}, {j}) of L crosses its split at {s}"))
            })
        };
        if j >= s {
            self.l22.sub(past_split(i)?, j - s, rows, cols)
        } else if i + rows <= s || self.joined {
            self.l11.sub(i, j, rows, cols)
        } else {
            self.l21.sub(past_split(i)?, j, rows, cols)
        }
    }

    /// Rows `i..i + rows` of column `j` of `L`, as at most two runs that
    /// each lie in one stored piece.
    pub fn row_runs(&self, i: usize, rows: usize, j: usize) -> impl Iterator<Item = (usize, usize)> {
        let s = self.split;
        let cut = if j < s && !self.joined && i < s && s < i + rows { s } else { i + rows };
        [(i, cut - i), (cut, i + rows - cut)].into_iter().filter(|&(_, len)| len > 0)
    }

    /// The column blocks of the outer loop: `nb` wide, none across `split`.
    pub fn column_blocks(&self, nb: usize) -> Vec<(usize, usize)> {
        let nb = nb.max(1);
        let run = |from: usize, to: usize| (from..to).step_by(nb).map(move |k| (k, nb.min(to - k)));
        run(0, self.split.min(self.cols)).chain(run(self.split.min(self.cols), self.cols)).collect()
    }
}
