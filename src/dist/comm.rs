//! What the ranks of a distributed factorization say to each other.
//!
//! The algorithms of [`crate::dist`] are written once for one rank (SPMD),
//! against this trait: NCCL between GPUs ([`super::Nccl`]), or channels
//! between threads of one process ([`super::Channels`]), which stand in for
//! it on the CPU. Every rank of a communicator makes the same calls in the
//! same order, as NCCL requires; a rank that is not in a communicator's
//! group never calls it.

use crate::backend::{Backend, View, ViewMut};
use crate::{Elem, Error, Result};

/// A group of ranks that exchange data.
pub trait Communicator<B: Backend>: Send + Sync {
    /// This rank's number in the group.
    fn rank(&self) -> usize;
    /// Ranks in the group.
    fn size(&self) -> usize;

    /// Root's `data` into every rank's `data` (same shape, contiguous),
    /// after the work enqueued on `be` so far; `be`'s later work sees it.
    fn broadcast<E: Elem>(&self, be: &B, data: ViewMut<'_, B, E>, root: usize) -> Result<()>;

    /// Sends each `(peer, block)` of `sends` and receives each of `recvs`
    /// (contiguous blocks), all as one step, so that no order among them
    /// can deadlock. Ordered on `be` as [`broadcast`](Self::broadcast).
    /// Every rank of the group calls it, with empty lists when it has
    /// nothing to move: the ranks meet before it as before any call.
    fn exchange<E: Elem>(
        &self,
        be: &B,
        sends: &[(usize, View<'_, B, E>)],
        recvs: Vec<(usize, ViewMut<'_, B, E>)>,
    ) -> Result<()>;

    /// The largest `value` of all ranks, once `be`'s queue has run.
    fn max(&self, be: &B, value: f64) -> Result<f64>;

    /// Ends the group for every rank: calls pending on other ranks (a
    /// broadcast waiting for a root that failed) and every later call fail
    /// instead of waiting forever. For the rank whose work failed, on
    /// behalf of the others.
    fn abort(&self);
}

/// The error of a call on an aborted group.
pub(crate) fn aborted() -> Error {
    Error::Device(ABORTED.into())
}

/// The error of a rank whose own work went well when another's did not.
pub(crate) fn another_failed() -> Error {
    Error::Device(ANOTHER_FAILED.into())
}

/// Whether `e` says only that some other rank failed.
pub(crate) fn follows_another(e: &Error) -> bool {
    matches!(e, Error::Device(m) if m == ABORTED || m == ANOTHER_FAILED)
}

const ABORTED: &str = "the ranks' communicators were aborted after another rank failed";
const ANOTHER_FAILED: &str = "another rank could not start the factorization";

/// The block's extent in its buffer, if its entries are contiguous.
pub(crate) fn contiguous(op: &'static str, block: crate::backend::Block) -> Result<(usize, usize)> {
    if block.rows == 0 || block.cols <= 1 || block.ld == block.rows {
        Ok((block.offset, block.rows * block.cols))
    } else {
        Err(Error::dims(
            op,
            format!("a {}×{} block with leading dimension {} is not contiguous", block.rows, block.cols, block.ld),
        ))
    }
}

/// Checks that a rank named by the caller is in the group.
pub(crate) fn peer(op: &'static str, peer: usize, size: usize) -> Result<usize> {
    if peer < size {
        Ok(peer)
    } else {
        Err(Error::InvalidArgument(format!("{op}: rank {peer} is not in a group of {size}")))
    }
}
