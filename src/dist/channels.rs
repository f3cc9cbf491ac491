//! In-process ranks: threads of one process that pass host copies through
//! channels, standing in for NCCL so that the distributed algorithms run,
//! and are tested, on the CPU backend.
//!
//! A receive waits for its message or for the group to be aborted (a rank
//! failed), never forever. The ranks meet before each collective as NCCL's
//! do ([`Rendezvous`]), within [`MEETING_LIMIT`], so that calls that differ
//! between ranks, which would hang NCCL's, fail here.

use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::comm::{Communicator, aborted, contiguous, peer};
use super::rendezvous::Rendezvous;
use crate::backend::cpu::{read_block, write_block};
use crate::backend::{Cpu, View, ViewMut};
use crate::{Elem, Error, Result};

type Message = Box<dyn Any + Send>;

/// One rank's end of a group of in-process ranks.
pub struct Channels {
    rank: usize,
    /// `to[r]` reaches rank `r`.
    to: Vec<Sender<Message>>,
    /// `from[r]` hears rank `r`.
    from: Vec<Mutex<Receiver<Message>>>,
    /// Set by [`Communicator::abort`], for the whole group.
    aborted: Arc<AtomicBool>,
    meeting: Arc<Rendezvous>,
}

/// How long a rank waits for the others at a collective before it says
/// that their calls differ: longer than any step of a factorization the
/// CPU ranks are used for.
const MEETING_LIMIT: Duration = Duration::from_secs(600);

/// How often a waiting receive looks whether the group was aborted.
const POLL: Duration = Duration::from_millis(20);

impl Channels {
    /// The `size` ends of a new group, rank 0 first.
    pub fn group(size: usize) -> Vec<Channels> {
        // links[s][r]: from s to r.
        let mut senders: Vec<Vec<Option<Sender<Message>>>> = (0..size).map(|_| Vec::new()).collect();
        let mut receivers: Vec<Vec<Option<Receiver<Message>>>> =
            (0..size).map(|_| (0..size).map(|_| None).collect()).collect();
        for (s, row) in senders.iter_mut().enumerate() {
            for inbox in receivers.iter_mut() {
                let (tx, rx) = channel();
                row.push(Some(tx));
                inbox[s] = Some(rx);
            }
        }
        let aborted = Arc::new(AtomicBool::new(false));
        let meeting = Arc::new(Rendezvous::new(size));
        senders
            .into_iter()
            .zip(receivers)
            .enumerate()
            .map(|(rank, (to, from))| Channels {
                rank,
                to: to.into_iter().flatten().collect(),
                from: from.into_iter().flatten().map(Mutex::new).collect(),
                aborted: aborted.clone(),
                meeting: meeting.clone(),
            })
            .collect()
    }

    fn send<E: Elem>(&self, to: usize, data: Vec<E>) -> Result<()> {
        if self.aborted.load(Ordering::Acquire) {
            return Err(aborted());
        }
        self.to[peer("send", to, self.to.len())?]
            .send(Box::new(data))
            .map_err(|_| Error::Device(format!("rank {to} has stopped")))
    }

    fn recv<E: Elem>(&self, from: usize) -> Result<Vec<E>> {
        let rx = self.from[peer("receive", from, self.from.len())?].lock().map_err(|_| poisoned())?;
        let message = loop {
            if self.aborted.load(Ordering::Acquire) {
                return Err(aborted());
            }
            match rx.recv_timeout(POLL) {
                Ok(message) => break message,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Error::Device(format!("rank {from} stopped before it sent")));
                }
            }
        };
        message.downcast::<Vec<E>>().map(|b| *b).map_err(|_| {
            Error::InvalidArgument(format!("rank {from} sent another type than {} (calls out of order)", E::NAME))
        })
    }
}

fn poisoned() -> Error {
    Error::Device("a rank's receiver was poisoned by a panic".into())
}

fn receive_into<E: Elem>(data: ViewMut<'_, Cpu, E>, got: Vec<E>, from: usize) -> Result<()> {
    let b = data.block();
    if got.len() != b.rows * b.cols {
        return Err(Error::dims(
            "receive",
            format!("rank {from} sent {} entries for {}×{}", got.len(), b.rows, b.cols),
        ));
    }
    write_block(data, &got)
}

impl Communicator<Cpu> for Channels {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.to.len()
    }

    fn broadcast<E: Elem>(&self, _: &Cpu, data: ViewMut<'_, Cpu, E>, root: usize) -> Result<()> {
        contiguous("broadcast", data.block())?;
        peer("broadcast", root, self.size())?;
        self.meeting.meet(Some(MEETING_LIMIT))?;
        if self.rank == root {
            let host = read_block(&data.rb());
            for r in (0..self.size()).filter(|&r| r != root) {
                self.send(r, host.clone())?;
            }
            Ok(())
        } else {
            receive_into(data, self.recv(root)?, root)
        }
    }

    fn exchange<E: Elem>(
        &self,
        _: &Cpu,
        sends: &[(usize, View<'_, Cpu, E>)],
        recvs: Vec<(usize, ViewMut<'_, Cpu, E>)>,
    ) -> Result<()> {
        self.meeting.meet(Some(MEETING_LIMIT))?;
        // Channels do not block on send: all sends first, then receives.
        for (to, data) in sends {
            contiguous("send", data.block())?;
            self.send(*to, read_block(data))?;
        }
        for (from, data) in recvs {
            contiguous("receive", data.block())?;
            receive_into(data, self.recv(from)?, from)?;
        }
        Ok(())
    }

    fn max(&self, _: &Cpu, value: f64) -> Result<f64> {
        self.meeting.meet(Some(MEETING_LIMIT))?;
        for r in (0..self.size()).filter(|&r| r != self.rank) {
            self.send(r, vec![value])?;
        }
        let mut best = value;
        for r in (0..self.size()).filter(|&r| r != self.rank) {
            best = best.max(self.recv::<f64>(r)?[0]);
        }
        Ok(best)
    }

    fn abort(&self) {
        self.aborted.store(true, Ordering::Release);
        self.meeting.break_up();
    }
}
