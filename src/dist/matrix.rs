//! A matrix dealt 2-D block-cyclically over the ranks of a [`Cluster`].

use faer::{Mat, MatRef};
use rayon::prelude::*;

use super::cluster::Cluster;
use super::comm::Communicator;
use super::grid::Cyclic;
use super::local::{Local, Storage};
use crate::backend::{Backend, Block, DeviceBuffer, Norm, View, ViewMut, random};
use crate::{Error, Result, Scalar};

/// Entries of the host buffer that fills a rank's array: 256 MB of f64.
const CHUNK: usize = 1 << 25;

/// An `m × n` matrix in `nb × nb` blocks, block `(I, J)` on rank
/// `(I mod P, J mod Q)`; each rank keeps its blocks in one column-major
/// array (leading dimension: its local rows), or, for a symmetric matrix in
/// [`Storage::Lower`], only its blocks on and below the diagonal.
pub struct DistMatrix<B: Backend, T: Scalar> {
    pub(super) rows: Cyclic,
    pub(super) cols: Cyclic,
    pub(super) storage: Storage,
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
        Self::build(cluster, (m, n), nb, Storage::Full, f)
    }

    /// The symmetric matrix of order `n` whose lower triangle is `f(i, j)`
    /// (`i ≥ j`), only the blocks on and below the diagonal stored: about
    /// half the memory of [`from_fn`](Self::from_fn), for Cholesky.
    pub fn symmetric_from_fn<C: Communicator<B>>(
        cluster: &Cluster<B, C>,
        n: usize,
        nb: usize,
        f: impl Fn(usize, usize) -> T + Sync,
    ) -> Result<Self> {
        // The diagonal blocks' upper entries are stored too: the symmetric ones.
        Self::build(cluster, (n, n), nb, Storage::Lower, |i, j| if i >= j { f(i, j) } else { f(j, i) })
    }

    /// The `m × n` matrix of entries uniform in [−1, 1) of `seed`
    /// ([`random::uniform`]), each rank filling its blocks on its device:
    /// no host computes or copies any of it, and any host recomputes any
    /// entry.
    pub fn random<C: Communicator<B>>(
        cluster: &Cluster<B, C>,
        (m, n): (usize, usize),
        nb: usize,
        seed: u64,
    ) -> Result<Self> {
        Self::generate(cluster, (m, n), nb, Storage::Full, seed, None)
    }

    /// The symmetric matrix of order `n` with entries uniform in [−1, 1)
    /// of `seed` ([`random::symmetric`]) and `diagonal` on its diagonal,
    /// generated on the devices as [`random`](Self::random) is, in
    /// `storage`. Its eigenvalues lie within `diagonal ± (n − 1)`
    /// (Gershgorin): `diagonal ≥ n` makes it positive definite.
    pub fn random_symmetric<C: Communicator<B>>(
        cluster: &Cluster<B, C>,
        n: usize,
        nb: usize,
        seed: u64,
        diagonal: T,
        storage: Storage,
    ) -> Result<Self> {
        Self::generate(cluster, (n, n), nb, storage, seed, Some(diagonal))
    }

    /// Each rank fills its stored blocks with `fill_random`, and sets the
    /// diagonal of a symmetric matrix.
    fn generate<C: Communicator<B>>(
        cluster: &Cluster<B, C>,
        (m, n): (usize, usize),
        nb: usize,
        storage: Storage,
        seed: u64,
        diagonal: Option<T>,
    ) -> Result<Self> {
        if nb == 0 {
            return Err(Error::InvalidArgument("block size 0".into()));
        }
        let grid = cluster.grid();
        let (rows, cols) = (Cyclic::new(m, nb, grid.p), Cyclic::new(n, nb, grid.q));
        let key = random::key(seed);
        let local = cluster.run(vec![(); grid.size()], |rank, ()| {
            let (be, (pr, pc)) = (&rank.be, (rank.pr, rank.pc));
            let local = Local::new(rows, cols, pr, pc, storage);
            let mut array = be.alloc::<T>(local.len())?;
            for bj in (0..cols.blocks()).filter(|&b| cols.owner(b) == pc) {
                let (lc, kc) = (cols.local_start(bj, pc), cols.block_len(bj));
                let first = if storage == Storage::Lower { bj } else { 0 };
                for bi in (first..rows.blocks()).filter(|&b| rows.owner(b) == pr) {
                    let (lr, kr) = (rows.local_start(bi, pr), rows.block_len(bi));
                    let at = local.at(lr, lc, kr, kc)?;
                    be.fill_random(ViewMut::new(&mut array, at)?, (bi * nb, bj * nb), key, diagonal.is_some())?;
                    if let (Some(d), true) = (diagonal, bi == bj) {
                        let diag = Block { offset: at.offset, rows: 1, cols: kc, ld: at.ld + 1 };
                        be.fill(ViewMut::new(&mut array, diag)?, d)?;
                    }
                }
            }
            Ok(array)
        })?;
        Ok(DistMatrix { rows, cols, storage, local })
    }

    fn build<C: Communicator<B>>(
        cluster: &Cluster<B, C>,
        (m, n): (usize, usize),
        nb: usize,
        storage: Storage,
        f: impl Fn(usize, usize) -> T + Sync,
    ) -> Result<Self> {
        if nb == 0 {
            return Err(Error::InvalidArgument("block size 0".into()));
        }
        let grid = cluster.grid();
        let (rows, cols) = (Cyclic::new(m, nb, grid.p), Cyclic::new(n, nb, grid.q));
        let items = vec![(); grid.size()];
        let local = cluster.run(items, |rank, ()| {
            let local = Local::new(rows, cols, rank.pr, rank.pc, storage);
            let mut array = rank.be.alloc::<T>(local.len())?;
            // The stored columns tile the array in order: fill it a run of
            // whole columns (about 256 MB) at a time, computed in parallel on
            // the host, so that no host holds a rank's whole array.
            let columns = local.stored_columns();
            let mut start = 0;
            while start < columns.len() {
                let offset = columns[start].2;
                let mut end = start;
                while end < columns.len() && (end == start || columns[end].2 - offset < CHUNK) {
                    end += 1;
                }
                let len = columns.get(end).map_or(local.len(), |c| c.2) - offset;
                let mut host = vec![T::ZERO; len];
                let mut runs: Vec<(usize, usize, &mut [T])> = Vec::with_capacity(end - start);
                let mut rest = host.as_mut_slice();
                for &(j, first, _) in &columns[start..end] {
                    let (column, tail) = rest.split_at_mut(local.rows - first);
                    runs.push((j, first, column));
                    rest = tail;
                }
                runs.into_par_iter().for_each(|(lj, first, column)| {
                    let j = cols.to_global(rank.pc, lj);
                    // A column's local rows are runs of consecutive global
                    // rows, one per block.
                    let mut k = 0;
                    while k < column.len() {
                        let li = first + k;
                        let run = (rows.nb - li % rows.nb).min(column.len() - k);
                        let i0 = rows.to_global(rank.pr, li);
                        for (d, x) in column[k..k + run].iter_mut().enumerate() {
                            *x = f(i0 + d, j);
                        }
                        k += run;
                    }
                });
                let part = rank.be.upload(&host)?;
                let at = Block { offset, rows: len, cols: 1, ld: len.max(1) };
                rank.be.copy(View::dense(&part, len, 1)?, ViewMut::new(&mut array, at)?)?;
                start = end;
            }
            Ok(array)
        })?;
        Ok(DistMatrix { rows, cols, storage, local })
    }

    /// `a` dealt over the cluster in blocks of `nb`.
    pub fn from_host<C: Communicator<B>>(cluster: &Cluster<B, C>, a: MatRef<'_, T>, nb: usize) -> Result<Self> {
        Self::from_fn(cluster, (a.nrows(), a.ncols()), nb, |i, j| a[(i, j)])
    }

    /// The symmetric `a`, from its lower triangle, in [`Storage::Lower`].
    pub fn symmetric_from_host<C: Communicator<B>>(
        cluster: &Cluster<B, C>,
        a: MatRef<'_, T>,
        nb: usize,
    ) -> Result<Self> {
        if a.nrows() != a.ncols() {
            return Err(Error::dims(
                "symmetric_from_host",
                format!("the matrix is {}×{}, not square", a.nrows(), a.ncols()),
            ));
        }
        Self::symmetric_from_fn(cluster, a.nrows(), nb, |i, j| a[(i, j)])
    }

    /// Rank `(pr, pc)`'s array.
    pub(super) fn local_of(&self, pr: usize, pc: usize) -> Local {
        Local::new(self.rows, self.cols, pr, pc, self.storage)
    }

    pub fn storage(&self) -> Storage {
        self.storage
    }

    /// Each rank's stored entries: `(global row, global column, value)`
    /// visited on the host, rank by rank. Reads every array back.
    fn for_each_stored<C: Communicator<B>>(
        &self,
        cluster: &Cluster<B, C>,
        mut visit: impl FnMut(usize, usize, T),
    ) -> Result<()> {
        self.check_cluster(cluster)?;
        let (rows, cols) = (self.rows, self.cols);
        let locals = cluster.run(self.local.iter().collect(), |rank, buf| {
            let mut host = vec![T::ZERO; buf.len()];
            rank.be.download(buf, &mut host)?;
            Ok(host)
        })?;
        for (rank, host) in cluster.ranks().iter().zip(locals) {
            let local = self.local_of(rank.pr, rank.pc);
            for (lj, first, offset) in local.stored_columns() {
                let j = cols.to_global(rank.pc, lj);
                for li in first..local.rows {
                    visit(rows.to_global(rank.pr, li), j, host[offset + li - first]);
                }
            }
        }
        Ok(())
    }

    /// The whole matrix on the host; in [`Storage::Lower`], the lower
    /// triangle (the strict upper one zero).
    pub fn to_host<C: Communicator<B>>(&self, cluster: &Cluster<B, C>) -> Result<Mat<T>> {
        let mut a = Mat::zeros(self.rows.len, self.cols.len);
        let lower = self.storage == Storage::Lower;
        self.for_each_stored(cluster, |i, j, x| {
            if !lower || i >= j {
                a[(i, j)] = x;
            }
        })?;
        Ok(a)
    }

    /// `NonFinite` for the first NaN or infinity (1-based, in column-major
    /// order of the whole matrix), unless every entry is finite: the
    /// factorizations refuse such input before any work.
    pub fn check_finite<C: Communicator<B>>(&self, cluster: &Cluster<B, C>, what: &str) -> Result<()> {
        self.check_cluster(cluster)?;
        let (rows, cols) = (self.rows, self.cols);
        let found = cluster.run(self.local.iter().collect(), |rank, buf| {
            let local = self.local_of(rank.pr, rank.pc);
            // Each stored run of block columns, from its first stored row.
            let mut first_bad = None;
            let columns = local.stored_columns();
            for (j, c) in local.runs(0, local.cols) {
                let first = columns.get(j).map_or(0, |s| s.1);
                let block = local.at(first, j, local.rows - first, c)?;
                if let Some((li, lj)) = rank.be.find_non_finite(View::new(buf, block)?)? {
                    let (li, lj) = (first + li, j + lj);
                    let (i, gj) = (rows.to_global(rank.pr, li), cols.to_global(rank.pc, lj));
                    let mut host = vec![T::ZERO; buf.len()];
                    rank.be.download(buf, &mut host)?;
                    let value = host[local.at(li, lj, 1, 1)?.offset].to_f64();
                    first_bad = Some((gj, i, value));
                    break;
                }
            }
            Ok(first_bad)
        })?;
        match found.into_iter().flatten().min_by_key(|&(j, i, _)| (j, i)) {
            Some((j, i, value)) => Err(Error::NonFinite { what: what.into(), row: i + 1, col: j + 1, value }),
            None => Ok(()),
        }
    }

    /// `‖A‖₁`, the largest column sum of magnitudes, for the condition
    /// estimates. With one process row and every block stored, each rank's
    /// columns are whole and the backend reduces them in place; otherwise
    /// the column sums are added on the host (for [`Storage::Lower`], of
    /// the symmetric matrix), each rank's array read back once.
    pub fn norm_one<C: Communicator<B>>(&self, cluster: &Cluster<B, C>) -> Result<f64> {
        self.check_cluster(cluster)?;
        if self.rows.procs == 1 && self.storage == Storage::Full {
            let norms = cluster.run(self.local.iter().collect(), |rank, buf| {
                let local = self.local_of(rank.pr, rank.pc);
                Ok(rank.be.norm(Norm::One, View::new(buf, local.at(0, 0, local.rows, local.cols)?)?)?.to_f64())
            })?;
            return Ok(norms.into_iter().fold(0.0, f64::max));
        }
        let mut sums = vec![0.0; self.cols.len];
        let lower = self.storage == Storage::Lower;
        self.for_each_stored(cluster, |i, j, x| {
            let x = x.to_f64().abs();
            if !lower {
                sums[j] += x;
            } else if i >= j {
                sums[j] += x;
                if i > j {
                    sums[i] += x;
                }
            }
        })?;
        Ok(sums.into_iter().fold(0.0, f64::max))
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
