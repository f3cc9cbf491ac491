//! The ranks of a distributed computation and how they run: one thread per
//! rank in this process, each driving its own device, as MPI would run one
//! process per rank.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::comm::{Communicator, another_failed, follows_another};
use super::grid::Grid;
use super::{Channels, Nccl};
use crate::backend::{Backend, Cpu, Cuda, Tuning};
use crate::{Error, Result};

/// The environment variable that lists the GPUs of [`Cluster::cuda_from_env`]:
/// ordinals separated by commas, e.g. `0,1,2,3`.
pub const DEVICES_VAR: &str = "GPUMAT_DEVICES";

/// One rank: its device and the communicators of its process row (ranks
/// numbered by process column) and process column (numbered by process row).
pub struct Rank<B: Backend, C: Communicator<B>> {
    pub be: B,
    pub row: C,
    pub col: C,
    /// Process row and column.
    pub pr: usize,
    pub pc: usize,
}

impl<B: Backend, C: Communicator<B>> Rank<B, C> {
    /// `outcome`, once every rank has said whether its own succeeded: an
    /// error on one rank (its workspace did not fit) becomes an error on
    /// all, before any of them starts a collective the failed one would
    /// never join.
    pub(super) fn agree<X>(&self, outcome: Result<X>) -> Result<X> {
        let failed = if outcome.is_err() { 1.0 } else { 0.0 };
        let any = self.row.max(&self.be, failed)?;
        let any = self.col.max(&self.be, any)?;
        match outcome {
            Ok(_) if any > 0.0 => Err(another_failed()),
            outcome => outcome,
        }
    }
}

/// The ranks of a `P × Q` grid.
pub struct Cluster<B: Backend, C: Communicator<B>> {
    grid: Grid,
    ranks: Vec<Rank<B, C>>,
}

impl<B: Backend, C: Communicator<B>> Cluster<B, C> {
    /// Ranks in grid order, with their communicators split by row and column.
    fn assemble(grid: Grid, backends: Vec<B>, group: impl Fn(&[&B]) -> Result<Vec<C>>) -> Result<Self> {
        let mut rows: Vec<Vec<Option<C>>> = Vec::with_capacity(grid.p);
        for r in 0..grid.p {
            let members: Vec<&B> = (0..grid.q).map(|c| &backends[r * grid.q + c]).collect();
            rows.push(group(&members)?.into_iter().map(Some).collect());
        }
        let mut cols: Vec<Vec<Option<C>>> = Vec::with_capacity(grid.q);
        for c in 0..grid.q {
            let members: Vec<&B> = (0..grid.p).map(|r| &backends[r * grid.q + c]).collect();
            cols.push(group(&members)?.into_iter().map(Some).collect());
        }
        let ranks = backends
            .into_iter()
            .enumerate()
            .map(|(i, be)| {
                let (pr, pc) = grid.coords(i);
                let row = rows[pr][pc].take().expect("one end per rank");
                let col = cols[pc][pr].take().expect("one end per rank");
                Rank { be, row, col, pr, pc }
            })
            .collect();
        Ok(Cluster { grid, ranks })
    }

    pub fn grid(&self) -> Grid {
        self.grid
    }

    pub fn ranks(&self) -> &[Rank<B, C>] {
        &self.ranks
    }

    /// What the ranks run on, for reports.
    pub fn describe(&self) -> String {
        let first = self.ranks.first().map(|r| r.be.name()).unwrap_or_default();
        format!("{} ranks ({} × {} grid), rank 0: {first}", self.grid.size(), self.grid.p, self.grid.q)
    }

    /// Runs `f` on every rank at once, rank `i` given `items[i]`, one thread
    /// each, and returns the results in rank order, or the first rank's
    /// error (by rank number). For work without communication: see
    /// [`run_collective`](Self::run_collective).
    pub fn run<X: Send, R: Send>(
        &self,
        items: Vec<X>,
        f: impl Fn(&Rank<B, C>, X) -> Result<R> + Sync,
    ) -> Result<Vec<R>> {
        self.spawn(items, f, false)
    }

    /// [`run`](Self::run) for work whose ranks talk to each other: when a
    /// rank fails while others are still at work (waiting, maybe, for the
    /// failed one), the communicators are aborted so that those fail too
    /// instead of waiting forever, and the failing rank's error is
    /// returned. The cluster cannot communicate after that; make another.
    pub fn run_collective<X: Send, R: Send>(
        &self,
        items: Vec<X>,
        f: impl Fn(&Rank<B, C>, X) -> Result<R> + Sync,
    ) -> Result<Vec<R>> {
        self.spawn(items, f, true)
    }

    fn spawn<X: Send, R: Send>(
        &self,
        items: Vec<X>,
        f: impl Fn(&Rank<B, C>, X) -> Result<R> + Sync,
        collective: bool,
    ) -> Result<Vec<R>> {
        if items.len() != self.ranks.len() {
            return Err(Error::dims("dist::run", format!("{} items for {} ranks", items.len(), self.ranks.len())));
        }
        let f = &f;
        let finished = AtomicUsize::new(0);
        let first_failure = Mutex::new(None::<usize>);
        let (finished, first_failure) = (&finished, &first_failure);
        let mut results: Vec<Result<R>> = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .ranks
                .iter()
                .enumerate()
                .zip(items)
                .map(|((i, rank), item)| {
                    s.spawn(move || {
                        let outcome = rank.be.enter().and_then(|()| f(rank, item));
                        finished.fetch_add(1, Ordering::AcqRel);
                        if outcome.is_err() && collective {
                            first_failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(i);
                            self.abort_unless_all_finish(finished);
                        }
                        outcome
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(Error::Device("a rank's thread panicked".into()))))
                .collect()
        });
        // The failing rank's error, not the others' "aborted": the first to
        // fail, or when the failure was agreed (all fail together), the one
        // that says what went wrong.
        let first = *first_failure.lock().unwrap_or_else(|p| p.into_inner());
        let cause = results.iter().position(|r| r.as_ref().is_err_and(|e| !follows_another(e)));
        if let Some(i) = cause.or(first).filter(|&i| results[i].is_err()) {
            results.swap_remove(i)?;
        }
        results.into_iter().collect()
    }

    /// After a rank failed: the others get a moment to finish (they all fail
    /// together when the failure was agreed, as a workspace that does not
    /// fit); any still at work then may be waiting for the failed rank, and
    /// the communicators are aborted.
    fn abort_unless_all_finish(&self, finished: &AtomicUsize) {
        let deadline = Instant::now() + GRACE;
        while finished.load(Ordering::Acquire) < self.ranks.len() {
            if Instant::now() >= deadline {
                for rank in &self.ranks {
                    rank.row.abort();
                    rank.col.abort();
                }
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// How long the other ranks may take to finish after one failed, before
/// the communicators are aborted.
const GRACE: Duration = Duration::from_secs(2);

impl Cluster<Cpu, Channels> {
    /// `P × Q` ranks simulated on the CPU, threads of this process talking
    /// through channels: the distributed algorithms, run and tested without
    /// several GPUs. Each rank's CPU backend runs on one thread.
    pub fn cpu(grid: Grid) -> Self {
        let backends = (0..grid.size()).map(|_| Cpu::sequential()).collect();
        Self::assemble(grid, backends, |members| Ok(Channels::group(members.len())))
            .expect("channels cannot fail to connect")
    }
}

impl Cluster<Cuda, Nccl> {
    /// A rank on each GPU of `devices` (ordinals, in grid order), joined by
    /// NCCL. The same ordinal may appear more than once (ranks sharing a
    /// GPU, for tests on one).
    ///
    /// Run the process with `CUDA_MODULE_LOADING=EAGER` (see
    /// [`load_kernels_eagerly`]), so that gpumat's own kernels are loaded
    /// before the first collective.
    pub fn cuda(grid: Grid, devices: &[usize], tuning: Tuning) -> Result<Self> {
        if devices.len() != grid.size() {
            return Err(Error::InvalidArgument(format!(
                "a {} × {} grid needs {} GPUs, {} given",
                grid.p,
                grid.q,
                grid.size(),
                devices.len()
            )));
        }
        // No graph capture: a capture on one rank's thread would refuse the
        // other ranks' allocations and NCCL calls while it lasts.
        let tuning = Tuning { graphs: false, ..tuning };
        let backends = devices.iter().map(|&d| Cuda::new(d, tuning)).collect::<Result<Vec<_>>>()?;
        if backends.len() > 1 {
            for be in &backends {
                be.join_cluster()?;
            }
        }
        let cluster = Self::assemble(grid, backends, Nccl::group)?;
        // NCCL allocates its buffers at a communicator's first collective:
        // let that be now, before the matrix takes the memory, so that it
        // cannot fail on one rank in the middle of a factorization while the
        // others wait for it.
        cluster.run_collective(vec![(); grid.size()], |rank, ()| {
            rank.row.max(&rank.be, 0.0)?;
            rank.col.max(&rank.be, 0.0)
        })?;
        Ok(cluster)
    }

    /// The GPUs of `GPUMAT_DEVICES` (all GPUs when it is unset) in one
    /// process row.
    pub fn cuda_from_env(tuning: Tuning) -> Result<Self> {
        let devices = devices_from_env()?;
        Self::cuda(Grid::row_of(devices.len())?, &devices, tuning)
    }
}

/// The variable that says when CUDA loads a module's kernels.
pub const MODULE_LOADING_VAR: &str = "CUDA_MODULE_LOADING";

/// Asks CUDA to load every kernel when its module or library loads rather
/// than at its first launch (`CUDA_MODULE_LOADING=EAGER`), unless the
/// variable is set already. For several GPUs driven by one process: a lazy
/// load may wait for its device (CUDA C++ Programming Guide, "Lazy
/// Loading"), and while it waits every rank waits for it at the next
/// collective (the ranks meet before each, so the wait ends, but late).
/// cuBLASLt still loads some kernels at their first use. The cost is the
/// libraries' kernels loaded at start (seconds, and some device memory).
///
/// # Safety
///
/// Call before the process's first CUDA call, while no other thread reads
/// or writes the environment ([`std::env::set_var`]).
pub unsafe fn load_kernels_eagerly() {
    if std::env::var_os(MODULE_LOADING_VAR).is_none() {
        // SAFETY: the caller's promise.
        unsafe { std::env::set_var(MODULE_LOADING_VAR, "EAGER") };
    }
}

/// The ordinals of `GPUMAT_DEVICES`, or every GPU when it is unset.
pub fn devices_from_env() -> Result<Vec<usize>> {
    match std::env::var(DEVICES_VAR) {
        Ok(list) => parse_devices(&list),
        Err(std::env::VarError::NotPresent) => {
            let count = Cuda::device_count()?;
            Ok((0..count).collect())
        }
        Err(e) => Err(Error::InvalidArgument(format!("{DEVICES_VAR}: {e}"))),
    }
}

fn parse_devices(list: &str) -> Result<Vec<usize>> {
    let bad = || Error::InvalidEnvironment {
        variable: DEVICES_VAR,
        value: list.into(),
        expected: "GPU ordinals separated by commas, e.g. 0,1,2,3",
    };
    let devices: Vec<usize> =
        list.split(',').map(|s| s.trim().parse::<usize>().map_err(|_| bad())).collect::<Result<_>>()?;
    if devices.is_empty() { Err(bad()) } else { Ok(devices) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_parse_or_name_the_variable() {
        assert_eq!(parse_devices("0, 1,3").unwrap(), vec![0, 1, 3]);
        for bad in ["", "0,,1", "a", "-1"] {
            let e = parse_devices(bad).unwrap_err().to_string();
            assert!(e.contains(DEVICES_VAR), "{e}");
        }
    }

    #[test]
    fn a_rank_that_fails_does_not_leave_the_others_waiting() {
        use crate::backend::ViewMut;
        let cluster = Cluster::cpu(Grid::new(1, 3).unwrap());
        let start = Instant::now();
        // Rank 0 fails before its broadcast; ranks 1 and 2 wait for it.
        let outcome = cluster.run_collective(vec![(); 3], |rank, ()| {
            if rank.pc == 0 {
                return Err(Error::InvalidArgument("rank 0 fails".into()));
            }
            let mut buf = rank.be.alloc::<f64>(4)?;
            rank.row.broadcast(&rank.be, ViewMut::dense(&mut buf, 4, 1)?, 0)
        });
        match outcome {
            Err(Error::InvalidArgument(m)) => assert_eq!(m, "rank 0 fails"),
            other => panic!("expected rank 0's error, got {other:?}"),
        }
        assert!(start.elapsed() < GRACE * 3, "took {:?}", start.elapsed());
        // The communicators are gone: the next collective fails at once.
        let again = cluster.run_collective(vec![(); 3], |rank, ()| rank.row.max(&rank.be, 1.0));
        assert!(again.is_err());
    }

    #[test]
    fn a_failure_all_ranks_agree_on_keeps_the_cluster() {
        let cluster = Cluster::cpu(Grid::new(2, 2).unwrap());
        // Whichever rank finishes first, the error is the cause's, not the
        // others' "another rank failed" (a capacity search steps down on
        // out-of-memory and on nothing else).
        for _ in 0..20 {
            let outcome = cluster.run_collective(vec![(); 4], |rank, ()| {
                let mine: Result<()> =
                    if (rank.pr, rank.pc) == (1, 1) { Err(Error::InvalidArgument("too big".into())) } else { Ok(()) };
                rank.agree(mine)
            });
            match outcome {
                Err(Error::InvalidArgument(m)) => assert_eq!(m, "too big"),
                other => panic!("expected the failing rank's error, got {other:?}"),
            }
        }
        let sums = cluster.run_collective(vec![(); 4], |rank, ()| rank.row.max(&rank.be, rank.pc as f64)).unwrap();
        assert_eq!(sums, vec![1.0; 4]);
    }

    #[test]
    fn ranks_get_their_row_and_column() {
        let c = Cluster::cpu(Grid::new(2, 3).unwrap());
        for (i, r) in c.ranks().iter().enumerate() {
            assert_eq!((r.pr, r.pc), (i / 3, i % 3));
            assert_eq!((r.row.rank(), r.row.size()), (r.pc, 3));
            assert_eq!((r.col.rank(), r.col.size()), (r.pr, 2));
        }
    }
}
