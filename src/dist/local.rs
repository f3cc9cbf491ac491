//! Where a rank keeps its blocks: all of them in one column-major array, or
//! (for a symmetric matrix given by its lower triangle) only the blocks on
//! and below the diagonal, each local block column stored from its
//! diagonal block down with its own leading dimension — the distributed
//! counterpart of RFP storage, about half the memory.

use super::grid::Cyclic;
use crate::backend::Block;
use crate::{Error, Result};

/// Which blocks a distributed matrix stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// Every block.
    Full,
    /// The blocks on and below the diagonal of a symmetric matrix.
    Lower,
}

/// One rank's array: its local rows and columns and, for `Lower`, each
/// local block column's offset and first stored local row.
#[derive(Clone, Debug)]
pub(super) struct Local {
    pub rows: usize,
    pub cols: usize,
    nb: usize,
    packed: Option<Vec<(usize, usize)>>,
    len: usize,
}

impl Local {
    pub fn new(rows: Cyclic, cols: Cyclic, pr: usize, pc: usize, storage: Storage) -> Self {
        let (ml, nl, nb) = (rows.local_len(pr), cols.local_len(pc), cols.nb);
        match storage {
            Storage::Full => Local { rows: ml, cols: nl, nb, packed: None, len: ml * nl },
            Storage::Lower => {
                let mut offset = 0;
                let columns = (0..nl.div_ceil(nb))
                    .map(|l| {
                        let first = rows.local_start(cols.to_global(pc, l * nb) / nb, pr);
                        let here = (offset, first);
                        offset += (ml - first) * nb.min(nl - l * nb);
                        here
                    })
                    .collect();
                Local { rows: ml, cols: nl, nb, packed: Some(columns), len: offset }
            }
        }
    }

    /// Entries of the array.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_packed(&self) -> bool {
        self.packed.is_some()
    }

    /// Local rows `i..i + r`, columns `j..j + c`; packed, they must lie in
    /// one block column, on or below its first stored row.
    pub fn at(&self, i: usize, j: usize, r: usize, c: usize) -> Result<Block> {
        if i + r > self.rows || j + c > self.cols {
            return Err(Error::InvalidArgument(format!(
                "local block {r}×{c} at ({i}, {j}) outside the {}×{} local matrix",
                self.rows, self.cols
            )));
        }
        if r == 0 || c == 0 {
            return Ok(Block::dense(r, c));
        }
        let Some(columns) = &self.packed else {
            return Ok(Block { offset: i + j * self.rows, rows: r, cols: c, ld: self.rows });
        };
        let l = j / self.nb;
        let (offset, first) = columns[l];
        if (j + c - 1) / self.nb != l || i < first {
            return Err(Error::InvalidArgument(format!(
                "local block {r}×{c} at ({i}, {j}) is not stored: packed block column {l} holds rows {first}.. of columns {}..{}",
                l * self.nb,
                (l + 1) * self.nb
            )));
        }
        let ld = self.rows - first;
        Ok(Block { offset: offset + (i - first) + (j - l * self.nb) * ld, rows: r, cols: c, ld })
    }

    /// Columns `j..j + c` in runs that [`at`](Self::at) can address: one
    /// run, or one per block column when packed.
    pub fn runs(&self, j: usize, c: usize) -> Vec<(usize, usize)> {
        if self.packed.is_none() || c == 0 {
            return vec![(j, c)];
        }
        let mut runs = vec![];
        let mut at = j;
        while at < j + c {
            let end = ((at / self.nb + 1) * self.nb).min(j + c);
            runs.push((at, end - at));
            at = end;
        }
        runs
    }

    /// Each stored run of each local column: `(column, first row, offset)`,
    /// rows from `first row` to the last local row.
    pub fn stored_columns(&self) -> Vec<(usize, usize, usize)> {
        (0..self.cols)
            .map(|j| match &self.packed {
                None => (j, 0, j * self.rows),
                Some(columns) => {
                    let (offset, first) = columns[j / self.nb];
                    (j, first, offset + (j % self.nb) * (self.rows - first))
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_columns_tile_the_array_once() {
        for (n, nb, p, q) in [(10, 3, 1, 1), (23, 4, 2, 3), (8, 8, 2, 2), (17, 2, 3, 1)] {
            let (rows, cols) = (Cyclic::new(n, nb, p), Cyclic::new(n, nb, q));
            for (pr, pc) in (0..p).flat_map(|r| (0..q).map(move |c| (r, c))) {
                let local = Local::new(rows, cols, pr, pc, Storage::Lower);
                let mut seen = vec![false; local.len()];
                for (j, first, offset) in local.stored_columns() {
                    // Every stored row is at or below the global diagonal
                    // block, and every entry of the lower triangle is stored.
                    let gj = cols.to_global(pc, j);
                    for i in 0..local.rows {
                        let gi = rows.to_global(pr, i);
                        if i >= first {
                            assert!(gi / nb >= gj / nb);
                            let b = local.at(i, j, 1, 1).unwrap();
                            assert_eq!(b.offset, offset + i - first);
                            assert!(!seen[b.offset]);
                            seen[b.offset] = true;
                        } else {
                            assert!(gi < gj, "({gi}, {gj}) of the lower triangle is not stored");
                        }
                    }
                }
                assert!(seen.iter().all(|&s| s));
            }
        }
    }
}
