//! NCCL between the GPUs of one process: one communicator per group of
//! ranks (a process row, a process column), each rank's calls enqueued on
//! its GPU's main queue, so that they order with the factorization's work
//! there and overlap the side queue's trailing updates. The ranks of a
//! communicator meet on the host before each collective ([`Rendezvous`]).
//!
//! Across hosts the same code runs one process per GPU: rank 0 makes an
//! `ncclUniqueId`, the launcher (MPI, or any channel) hands it to the other
//! processes, and each calls `ncclCommInitRank` with its rank instead of
//! [`Nccl::group`]'s `ncclCommInitAll`. Nothing else changes.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use cudarc::nccl::{result, sys};

use super::comm::{Communicator, aborted, contiguous, peer};
use super::rendezvous::Rendezvous;
use crate::backend::{Backend, Cuda, DeviceBuffer, View, ViewMut};
use crate::{DeviceLibrary, Elem, Error, Result};

/// One rank's end of an NCCL communicator.
pub struct Nccl {
    /// `None` once aborted. Calls hold the read lock while they enqueue;
    /// [`Communicator::abort`] takes the write lock, so no call uses the
    /// communicator while `ncclCommAbort` frees it.
    comm: RwLock<Option<Comm>>,
    /// The handle, for an abort that cannot have the lock: a call blocked
    /// inside NCCL (its queue of work full, behind a kernel waiting for a
    /// rank that failed) holds the read lock until the abort ends it.
    handle: Comm,
    aborted: AtomicBool,
    /// Where the group's ranks meet before each collective; shared by them.
    meeting: Arc<Rendezvous>,
    rank: usize,
    size: usize,
}

/// How long an abort waits for a call in progress to leave the
/// communicator before aborting under it.
const ABORT_WAIT: Duration = Duration::from_secs(1);

/// The raw handle.
#[derive(Clone, Copy)]
struct Comm(sys::ncclComm_t);

// SAFETY: an NCCL communicator may be used from any one thread at a time
// (each rank's end is used by the thread that runs that rank), and aborted
// from another (`ncclCommAbort` exists for that); the lock orders the two.
unsafe impl Send for Comm {}
unsafe impl Sync for Comm {}

impl Drop for Nccl {
    fn drop(&mut self) {
        if *self.aborted.get_mut() {
            return;
        }
        if let Some(Comm(comm)) = self.comm.get_mut().ok().and_then(|c| c.take()) {
            // SAFETY: made by `ncclCommInitAll`, not aborted, destroyed once.
            let _ = unsafe { result::comm_destroy(comm) };
        }
    }
}

fn nccl(op: &str) -> impl Fn(result::NcclError) -> Error + '_ {
    move |e| Error::device_call(DeviceLibrary::Nccl, op, e.0)
}

impl Nccl {
    /// One communicator over the GPUs of `members`, rank `i` on
    /// `members[i]`; the ends are returned in rank order. A group of one
    /// is an NCCL communicator too, so that one GPU exercises the set-up.
    pub fn group(members: &[&Cuda]) -> Result<Vec<Nccl>> {
        let size = members.len();
        // SAFETY: only probes whether the library can be loaded.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::Device("NCCL not found (libnccl could not be loaded)".into()));
        }
        let devices: Vec<i32> = members.iter().map(|be| be.context().ordinal() as i32).collect();
        let mut comms = vec![std::ptr::null_mut(); size];
        // SAFETY: `comms` has room for `size` handles, `devices` holds `size`
        // ordinals.
        unsafe { result::comm_init_all(comms.as_mut_ptr(), size as i32, devices.as_ptr()) }
            .map_err(nccl("creating a communicator"))?;
        let meeting = Arc::new(Rendezvous::new(size));
        Ok(comms
            .into_iter()
            .enumerate()
            .map(|(rank, comm)| Nccl {
                comm: RwLock::new(Some(Comm(comm))),
                handle: Comm(comm),
                aborted: AtomicBool::new(false),
                meeting: meeting.clone(),
                rank,
                size,
            })
            .collect())
    }

    /// The device address of entry `offset` of `buf`, and the byte count
    /// of `len` entries.
    fn bytes<E: Elem>(buf: &<Cuda as Backend>::Buffer<E>, (offset, len): (usize, usize)) -> (*mut c_void, usize) {
        ((buf.id() + offset * size_of::<E>()) as *mut c_void, len * size_of::<E>())
    }
}

impl Communicator<Cuda> for Nccl {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn broadcast<E: Elem>(&self, be: &Cuda, data: ViewMut<'_, Cuda, E>, root: usize) -> Result<()> {
        let extent = contiguous("broadcast", data.block())?;
        peer("broadcast", root, self.size)?;
        self.meeting.meet(None)?;
        let guard = self.comm.read().map_err(|_| aborted())?;
        let Some(Comm(comm)) = *guard else { return Err(aborted()) };
        if self.aborted.load(Ordering::Acquire) {
            return Err(aborted());
        }
        let (ptr, bytes) = Self::bytes(data.buffer(), extent);
        // SAFETY: `ptr` addresses `bytes` bytes of the view on this rank's
        // GPU; the stream is that GPU's main queue.
        unsafe {
            result::broadcast(
                ptr,
                ptr,
                bytes,
                sys::ncclDataType_t::ncclUint8,
                root as i32,
                comm,
                be.stream().cu_stream() as _,
            )
        }
        .map_err(nccl("broadcast"))?;
        Ok(())
    }

    fn exchange<E: Elem>(
        &self,
        be: &Cuda,
        sends: &[(usize, View<'_, Cuda, E>)],
        recvs: Vec<(usize, ViewMut<'_, Cuda, E>)>,
    ) -> Result<()> {
        self.meeting.meet(None)?;
        let guard = self.comm.read().map_err(|_| aborted())?;
        let Some(Comm(comm)) = *guard else { return Err(aborted()) };
        if self.aborted.load(Ordering::Acquire) {
            return Err(aborted());
        }
        let stream = be.stream().cu_stream() as sys::cudaStream_t;
        let mut calls = Vec::with_capacity(sends.len() + recvs.len());
        for (to, data) in sends {
            let (ptr, bytes) = Self::bytes(data.buffer(), contiguous("send", data.block())?);
            calls.push((true, peer("send", *to, self.size)?, ptr, bytes));
        }
        for (from, data) in &recvs {
            let (ptr, bytes) = Self::bytes(data.buffer(), contiguous("receive", data.block())?);
            calls.push((false, peer("receive", *from, self.size)?, ptr, bytes));
        }
        result::group_start().map_err(nccl("starting a group"))?;
        let mut status = Ok(());
        for (send, other, ptr, bytes) in calls {
            let u8 = sys::ncclDataType_t::ncclUint8;
            // SAFETY: `ptr` addresses `bytes` bytes of a view on this GPU.
            let r = unsafe {
                if send {
                    result::send(ptr, bytes, u8, other as i32, comm, stream)
                } else {
                    result::recv(ptr, bytes, u8, other as i32, comm, stream)
                }
            };
            if let Err(e) = r {
                status = Err(nccl("send or receive")(e));
                break;
            }
        }
        // The group is closed whatever happened inside it.
        result::group_end().map_err(nccl("ending a group"))?;
        status
    }

    fn max(&self, be: &Cuda, value: f64) -> Result<f64> {
        let buf = be.upload(&[value])?;
        self.meeting.meet(None)?;
        let guard = self.comm.read().map_err(|_| aborted())?;
        let Some(Comm(comm)) = *guard else { return Err(aborted()) };
        if self.aborted.load(Ordering::Acquire) {
            return Err(aborted());
        }
        let ptr = buf.id() as *mut c_void;
        // SAFETY: one f64 at `ptr` on this GPU.
        unsafe {
            result::all_reduce(
                ptr,
                ptr,
                1,
                sys::ncclDataType_t::ncclFloat64,
                sys::ncclRedOp_t::ncclMax,
                comm,
                be.stream().cu_stream() as _,
            )
        }
        .map_err(nccl("all-reduce"))?;
        drop(guard);
        let mut out = [0.0];
        be.download(&buf, &mut out)?;
        Ok(out[0])
    }

    fn abort(&self) {
        if self.aborted.swap(true, Ordering::AcqRel) {
            return;
        }
        self.meeting.break_up();
        let deadline = Instant::now() + ABORT_WAIT;
        loop {
            if let Ok(mut guard) = self.comm.try_write() {
                if let Some(Comm(comm)) = guard.take() {
                    // SAFETY: a live communicator; no call holds it (the
                    // lock), and it is never used again (`None`). Its
                    // kernels on the GPU stop.
                    let _ = unsafe { result::comm_abort(comm) };
                }
                return;
            }
            if Instant::now() >= deadline {
                // SAFETY: a call is blocked inside NCCL on this
                // communicator; `ncclCommAbort` is what ends that wait (as
                // a watchdog thread ends a hung collective). The handle is
                // never destroyed again (`aborted`), and later calls see
                // `aborted` before they touch it.
                let _ = unsafe { result::comm_abort(self.handle.0) };
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
