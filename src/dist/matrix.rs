//! A matrix dealt 2-D block-cyclically over the ranks of a [`Cluster`].

use faer::{Mat, MatRef};
use rayon::prelude::*;

use super::cluster::Cluster;
use super::comm::Communicator;
use super::grid::Cyclic;
use crate::backend::{Backend, Block, DeviceBuffer, Norm, View};
use crate::{Error, Result, Scalar};

/// An `m × n` matrix in `nb × nb` blocks, block `(I, J)` on rank
/// `(I mod P, J mod Q)`; each rank keeps its blocks in one column-major
/// array (leading dimension: its local rows).
pub struct DistMatrix<B: Backend, T: Scalar> {
    pub(super) rows: Cyclic,
    pub(super) cols: Cyclic,
    /// One array per rank, in rank order.
    pub(super) local: Vec<B::Buffer<T>>,
}

impl<B: Backend, T: Scalar> DistMatrix<B, T> {
    /// The matrix with entries `f(i, j)`, each rank computing and uploading
    /// its own blocks: no host ever holds the whole matrix.
    pub fn from_fn<C: Communicator<B>>(
        cluster: &Cluster<B, C>,
        (m, n): (usize, usize),
        nb: usize,
        f: impl Fn(usize, usize) -> T + Sync,
    ) -> Result<Self> {
        if nb == 0 {
            return Err(Error::InvalidArgument("block size 0".into()));
        }
        let grid = cluster.grid();
        let (rows, cols) = (Cyclic::new(m, nb, grid.p), Cyclic::new(n, nb, grid.q));
        let items = vec![(); grid.size()];
        let local = cluster.run(items, |rank, ()| {
            let (ml, nl) = (rows.local_len(rank.pr), cols.local_len(rank.pc));
            let mut host = vec![T::ZERO; ml * nl];
            host.par_chunks_mut(ml.max(1)).enumerate().for_each(|(lj, column)| {
                let j = cols.to_global(rank.pc, lj);
                for (li, x) in column.iter_mut().enumerate() {
                    *x = f(rows.to_global(rank.pr, li), j);
                }
            });
            rank.be.upload(&host)
        })?;
        Ok(DistMatrix { rows, cols, local })
    }

    /// `a` dealt over the cluster in blocks of `nb`.
    pub fn from_host<C: Communicator<B>>(cluster: &Cluster<B, C>, a: MatRef<'_, T>, nb: usize) -> Result<Self> {
        Self::from_fn(cluster, (a.nrows(), a.ncols()), nb, |i, j| a[(i, j)])
    }

    /// The whole matrix on the host.
    pub fn to_host<C: Communicator<B>>(&self, cluster: &Cluster<B, C>) -> Result<Mat<T>> {
        self.check_cluster(cluster)?;
        let (rows, cols) = (self.rows, self.cols);
        let locals = cluster.run(self.local.iter().collect(), |rank, buf| {
            let mut host = vec![T::ZERO; buf.len()];
            rank.be.download(buf, &mut host)?;
            Ok(host)
        })?;
        let mut a = Mat::zeros(rows.len, cols.len);
        for (rank, host) in cluster.ranks().iter().zip(locals) {
            let ml = rows.local_len(rank.pr);
            for lj in 0..cols.local_len(rank.pc) {
                let j = cols.to_global(rank.pc, lj);
                for li in 0..ml {
                    a[(rows.to_global(rank.pr, li), j)] = host[lj * ml + li];
                }
            }
        }
        Ok(a)
    }

    /// `NonFinite` for the first NaN or infinity (1-based, in column-major
    /// order of the whole matrix), unless every entry is finite: the
    /// factorizations refuse such input before any work.
    pub fn check_finite<C: Communicator<B>>(&self, cluster: &Cluster<B, C>, what: &str) -> Result<()> {
        self.check_cluster(cluster)?;
        let (rows, cols) = (self.rows, self.cols);
        let found = cluster.run(self.local.iter().collect(), |rank, buf| {
            let (ml, nl) = (rows.local_len(rank.pr), cols.local_len(rank.pc));
            let at =
                rank.be.find_non_finite(View::new(buf, Block { offset: 0, rows: ml, cols: nl, ld: ml.max(1) })?)?;
            let Some((li, lj)) = at else { return Ok(None) };
            let mut host = vec![T::ZERO; buf.len()];
            rank.be.download(buf, &mut host)?;
            let (i, j) = (rows.to_global(rank.pr, li), cols.to_global(rank.pc, lj));
            Ok(Some((j, i, host[lj * ml + li].to_f64())))
        })?;
        match found.into_iter().flatten().min_by_key(|&(j, i, _)| (j, i)) {
            Some((j, i, value)) => Err(Error::NonFinite { what: what.into(), row: i + 1, col: j + 1, value }),
            None => Ok(()),
        }
    }

    /// `‖A‖₁`, the largest column sum of magnitudes, for the condition
    /// estimates. With one process row each rank's columns are whole and
    /// the backend reduces them in place; with several the column sums are
    /// added on the host, each rank's array read back once.
    pub fn norm_one<C: Communicator<B>>(&self, cluster: &Cluster<B, C>) -> Result<f64> {
        self.check_cluster(cluster)?;
        let (rows, cols) = (self.rows, self.cols);
        let whole = |rank: &super::Rank<B, C>| {
            let ml = rows.local_len(rank.pr);
            Block { offset: 0, rows: ml, cols: cols.local_len(rank.pc), ld: ml.max(1) }
        };
        if rows.procs == 1 {
            let norms = cluster.run(self.local.iter().collect(), |rank, buf| {
                Ok(rank.be.norm(Norm::One, View::new(buf, whole(rank))?)?.to_f64())
            })?;
            return Ok(norms.into_iter().fold(0.0, f64::max));
        }
        let sums = cluster.run(self.local.iter().collect(), |rank, buf| {
            let mut host = vec![T::ZERO; buf.len()];
            rank.be.download(buf, &mut host)?;
            let ml = rows.local_len(rank.pr).max(1);
            Ok(host.chunks(ml).map(|c| c.iter().map(|x| x.to_f64().abs()).sum::<f64>()).collect::<Vec<f64>>())
        })?;
        let mut total = vec![0.0; cols.len];
        for (rank, local) in cluster.ranks().iter().zip(sums) {
            for (l, s) in local.into_iter().enumerate().take(cols.local_len(rank.pc)) {
                total[cols.to_global(rank.pc, l)] += s;
            }
        }
        Ok(total.into_iter().fold(0.0, f64::max))
    }

    pub fn nrows(&self) -> usize {
        self.rows.len
    }

    pub fn ncols(&self) -> usize {
        self.cols.len
    }

    /// The block order.
    pub fn block_size(&self) -> usize {
        self.rows.nb
    }

    /// Each rank's array (column-major, leading dimension its local rows),
    /// in rank order: for handing the blocks to another library that uses
    /// the same layout (cusolverMg's 1 × Q grids).
    pub fn local_arrays(&self) -> &[B::Buffer<T>] {
        &self.local
    }

    pub fn local_arrays_mut(&mut self) -> &mut [B::Buffer<T>] {
        &mut self.local
    }

    /// The layout of the rows and of the columns.
    pub fn layout(&self) -> (Cyclic, Cyclic) {
        (self.rows, self.cols)
    }

    /// Bytes of the largest rank's array.
    pub fn local_bytes(&self) -> usize {
        self.local.iter().map(|b| b.len() * size_of::<T>()).max().unwrap_or(0)
    }

    /// The error for a cluster other than the one the matrix was dealt on.
    pub(super) fn check_cluster<C: Communicator<B>>(&self, cluster: &Cluster<B, C>) -> Result<()> {
        let grid = cluster.grid();
        if grid.size() != self.local.len() || grid.p != self.rows.procs || grid.q != self.cols.procs {
            return Err(Error::InvalidArgument(format!(
                "the matrix is dealt over a {} × {} grid, the cluster is {} × {}",
                self.rows.procs, self.cols.procs, grid.p, grid.q
            )));
        }
        Ok(())
    }
}
