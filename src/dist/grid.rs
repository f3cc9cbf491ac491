//! The process grid and the 2-D block-cyclic layout (Dongarra, van de Geijn
//! and Walker 1994; ScaLAPACK's `numroc`/`indxg2l`).
//!
//! Block row `I` (rows `I·nb .. (I+1)·nb`) lies on process row `I mod P`,
//! block column `J` on process column `J mod Q`; a process keeps its blocks
//! in one column-major local array, in the order of their global indices.
//! Every process therefore holds a slice of every stage of a right-looking
//! factorization, and the trailing updates stay balanced to the end.

use crate::{Error, Result};

/// A `P × Q` grid of ranks; rank `(r, c)` is number `r·Q + c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    /// Process rows.
    pub p: usize,
    /// Process columns.
    pub q: usize,
}

impl Grid {
    pub fn new(p: usize, q: usize) -> Result<Self> {
        if p == 0 || q == 0 {
            return Err(Error::InvalidArgument(format!("a {p} × {q} process grid has no ranks")));
        }
        Ok(Grid { p, q })
    }

    /// The grid for `ranks` ranks: one process row, since a row's ranks
    /// share each panel by one broadcast and the panel's pivot search
    /// stays on one device; `P × Q` grids are for many ranks, where the
    /// broadcasts of a row alone would not scale.
    pub fn row_of(ranks: usize) -> Result<Self> {
        Self::new(1, ranks)
    }

    pub fn size(&self) -> usize {
        self.p * self.q
    }

    /// The grid position of rank `rank`.
    pub fn coords(&self, rank: usize) -> (usize, usize) {
        (rank / self.q, rank % self.q)
    }
}

/// One dimension of a block-cyclic layout: `len` indices in blocks of `nb`
/// dealt round-robin to `procs` processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cyclic {
    pub len: usize,
    pub nb: usize,
    pub procs: usize,
}

impl Cyclic {
    pub fn new(len: usize, nb: usize, procs: usize) -> Self {
        Cyclic { len, nb: nb.max(1), procs: procs.max(1) }
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.len.div_ceil(self.nb)
    }

    /// Width of block `b` (the last may be short).
    pub fn block_len(&self, b: usize) -> usize {
        self.nb.min(self.len - b * self.nb)
    }

    /// The process that holds block `b`.
    pub fn owner(&self, b: usize) -> usize {
        b % self.procs
    }

    /// Indices that process `proc` holds (`numroc`).
    pub fn local_len(&self, proc: usize) -> usize {
        self.local_start(self.blocks(), proc)
    }

    /// Local index of the first of `proc`'s indices whose block is `b` or
    /// later: `proc`'s blocks before `b`, times their widths.
    pub fn local_start(&self, b: usize, proc: usize) -> usize {
        let b = b.min(self.blocks());
        // Blocks of `proc` among `0..b`: those with index ≡ proc (mod procs).
        let count = if b > proc { (b - proc).div_ceil(self.procs) } else { 0 };
        match count {
            0 => 0,
            // All of them full, except possibly the matrix's last block.
            _ => {
                let last = proc + (count - 1) * self.procs;
                (count - 1) * self.nb + self.block_len(last)
            }
        }
    }

    /// The owner of global index `g` and its index there.
    pub fn to_local(&self, g: usize) -> (usize, usize) {
        let b = g / self.nb;
        let owner = self.owner(b);
        (owner, (b / self.procs) * self.nb + g % self.nb)
    }

    /// The global index of `proc`'s local index `l`.
    pub fn to_global(&self, proc: usize, l: usize) -> usize {
        let b = (l / self.nb) * self.procs + proc;
        b * self.nb + l % self.nb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_indices_cover_each_global_index_once() {
        for &(len, nb, procs) in &[(0, 4, 3), (1, 4, 3), (10, 4, 3), (12, 4, 3), (13, 2, 2), (7, 8, 4), (100, 7, 5)] {
            let c = Cyclic::new(len, nb, procs);
            let mut seen = vec![false; len];
            for proc in 0..procs {
                let n = c.local_len(proc);
                for l in 0..n {
                    let g = c.to_global(proc, l);
                    assert!(g < len, "{len} {nb} {procs}: global {g} of local {l} on {proc}");
                    assert_eq!(c.to_local(g), (proc, l));
                    assert!(!seen[g]);
                    seen[g] = true;
                }
                for b in 0..=c.blocks() {
                    let first = (0..n).find(|&l| c.to_global(proc, l) >= b * nb).unwrap_or(n);
                    assert_eq!(c.local_start(b, proc), first, "{len} {nb} {procs}: block {b} on {proc}");
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn grid_refuses_no_ranks() {
        assert!(Grid::new(0, 2).is_err());
        assert_eq!(Grid::new(2, 3).unwrap().coords(4), (1, 1));
    }
}
