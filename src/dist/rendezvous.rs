//! A host barrier that an abort breaks: the ranks of one NCCL communicator
//! meet here before each collective is enqueued.
//!
//! Why: an NCCL kernel spins until every rank of its communicator has
//! reached the same collective, and a GPU running one is never idle. Some
//! host calls wait for their GPU to be idle while holding a lock of the
//! process: cuBLASLt loads a kernel at its first use, whatever
//! `CUDA_MODULE_LOADING` says, under a lock that every other rank's cuBLAS
//! call then waits for. Rank 1 loading a kernel while its GPU waits in a
//! broadcast for rank 0, and rank 0 waiting for that lock before it can
//! enqueue its part, is a cycle; it stopped factorizations of a few hundred
//! block steps on two and four GPUs (seen in the threads' stacks). Once the
//! ranks meet before each collective, every collective on a GPU's queue has
//! been enqueued by all its ranks, so each queue runs to its end with no
//! host's help, and any wait for a GPU ends.
//!
//! Across processes (one per GPU) this is not needed: the lock is per
//! process. The in-process ranks of the CPU meet too, with a time limit, so
//! that ranks whose calls differ (which would hang NCCL) fail a test
//! instead.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::comm::aborted;
use crate::{Error, Result};

pub(crate) struct Rendezvous {
    size: usize,
    state: Mutex<State>,
    met: Condvar,
}

#[derive(Default)]
struct State {
    /// Ranks waiting for the current meeting.
    arrived: usize,
    /// Meetings held, so that a waiter knows when its own one is over.
    meetings: u64,
    broken: bool,
}

impl Rendezvous {
    pub(crate) fn new(size: usize) -> Self {
        Rendezvous { size, state: Mutex::new(State::default()), met: Condvar::new() }
    }

    /// Returns once all `size` ranks have called it (at once when there is
    /// one), or with the abort's error once [`Rendezvous::break_up`] was
    /// called, or, past `limit`, with an error that says the ranks' calls
    /// differ.
    pub(crate) fn meet(&self, limit: Option<Duration>) -> Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.broken {
            return Err(aborted());
        }
        state.arrived += 1;
        if state.arrived == self.size {
            state.arrived = 0;
            state.meetings += 1;
            self.met.notify_all();
            return Ok(());
        }
        let meeting = state.meetings;
        let deadline = limit.map(|l| Instant::now() + l);
        while state.meetings == meeting && !state.broken {
            state = match deadline {
                None => self.met.wait(state).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        state.arrived -= 1;
                        return Err(Error::Device(format!(
                            "{} of {} ranks reached collective {} within {:?}: the ranks' calls differ",
                            state.arrived + 1,
                            self.size,
                            meeting + 1,
                            limit.unwrap_or_default()
                        )));
                    }
                    self.met.wait_timeout(state, left).unwrap_or_else(|p| p.into_inner()).0
                }
            };
        }
        if state.meetings == meeting { Err(aborted()) } else { Ok(()) }
    }

    /// Ends the waits, now and later: a rank failed and will not come.
    pub(crate) fn break_up(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).broken = true;
        self.met.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn no_rank_passes_before_all_arrive() {
        let (size, rounds) = (4, 200);
        let r = Rendezvous::new(size);
        let arrivals = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..size {
                s.spawn(|| {
                    for round in 0..rounds {
                        arrivals.fetch_add(1, Ordering::SeqCst);
                        r.meet(None).unwrap();
                        // Everyone has arrived at this round, and nobody can
                        // be more than one round further.
                        let seen = arrivals.load(Ordering::SeqCst);
                        assert!(seen >= (round + 1) * size && seen <= (round + 2) * size, "round {round}: {seen}");
                        r.meet(None).unwrap();
                    }
                });
            }
        });
        assert_eq!(arrivals.load(Ordering::SeqCst), size * rounds);
    }

    #[test]
    fn breaking_up_frees_the_waiters_with_an_error() {
        let r = Rendezvous::new(3);
        std::thread::scope(|s| {
            let waiters: Vec<_> = (0..2).map(|_| s.spawn(|| r.meet(None))).collect();
            std::thread::sleep(std::time::Duration::from_millis(50));
            r.break_up();
            for w in waiters {
                assert!(w.join().unwrap().is_err());
            }
        });
        assert!(r.meet(None).is_err(), "a broken rendezvous stays broken");
    }

    #[test]
    fn a_rank_that_never_comes_is_an_error_past_the_limit() {
        let r = Rendezvous::new(2);
        let e = r.meet(Some(std::time::Duration::from_millis(50))).unwrap_err().to_string();
        assert!(e.contains("1 of 2 ranks") && e.contains("calls differ"), "{e}");
    }

    #[test]
    fn one_rank_meets_alone() {
        let r = Rendezvous::new(1);
        for _ in 0..3 {
            r.meet(None).unwrap();
        }
    }
}
