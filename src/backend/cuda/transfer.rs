//! Host ↔ device copies. Small ones, and any in page-locked memory of
//! gpumat's (`page_locked`), go straight to the copy engines; large
//! pageable ones are staged through two pinned buffers in turn: the host
//! copy into one (on all cores) overlaps the DMA of the other, which runs at
//! pinned speed.
//!
//! The context does not track events (one stream orders all device work), so
//! cudarc's pinned buffers would not wait for their own DMA: each buffer here
//! has an event of its own, recorded after every copy that uses it and waited
//! on before the host touches it again.

use std::sync::MutexGuard;

use cudarc::driver::{CudaEvent, CudaSlice, PinnedHostSlice};
use rayon::prelude::*;

use super::{Cuda, driver, page_locked};
use crate::{Error, Result};

/// Transfers of at least this many bytes are staged.
const STAGING_MIN: usize = 8 << 20;
/// Size of each pinned staging buffer.
const CHUNK: usize = 8 << 20;
/// Piece of a chunk one thread copies on the host.
const PIECE: usize = 256 << 10;

/// A pinned buffer and the event that marks the end of its last DMA.
pub(super) struct Stage {
    host: PinnedHostSlice<u8>,
    done: CudaEvent,
}

/// The two staging buffers, allocated on first use.
pub(super) type Staging = Option<[Stage; 2]>;

/// `dst := src` on all cores.
fn parallel_copy(src: &[u8], dst: &mut [u8]) {
    dst.par_chunks_mut(PIECE).zip(src.par_chunks(PIECE)).for_each(|(d, s)| d.copy_from_slice(s));
}

impl Drop for Stage {
    /// The pinned memory must outlive the DMA that uses it.
    fn drop(&mut self) {
        let _ = self.done.synchronize();
    }
}

impl Stage {
    /// The pinned bytes, once the DMA that last used them has finished.
    fn wait(&mut self) -> Result<&mut [u8]> {
        self.done.synchronize().map_err(driver("staging"))?;
        self.host.as_mut_slice().map_err(driver("staging"))
    }
}

impl Cuda {
    pub(super) fn staging(&self) -> Result<MutexGuard<'_, Staging>> {
        let mut guard = self.staging.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            let stage = || -> Result<Stage> {
                // Not write-combined: downloads read these from the host.
                // SAFETY: plain bytes, written before they are read.
                let host =
                    unsafe { self.ctx.alloc_pinned_with_flags::<u8>(CHUNK, 0) }.map_err(driver("pinned staging"))?;
                let done = self.ctx.new_event(None).map_err(driver("staging event"))?;
                Ok(Stage { host, done })
            };
            *guard = Some([stage()?, stage()?]);
        }
        Ok(guard)
    }

    /// `dst[..src.len()] := src`.
    pub(super) fn upload_bytes(&self, src: &[u8], dst: &mut CudaSlice<u8>) -> Result<()> {
        let n = src.len();
        if n < STAGING_MIN || page_locked::holds(src) {
            // Returns once copied: cudarc synchronizes after a plain slice.
            return self.stream.memcpy_htod(src, &mut dst.slice_mut(0..n)).map_err(driver("upload"));
        }
        let mut guard = self.staging()?;
        let Some(stages) = guard.as_mut() else { return Err(unstaged()) };
        for (i, chunk) in src.chunks(CHUNK).enumerate() {
            let stage = &mut stages[i % 2];
            parallel_copy(chunk, &mut stage.wait()?[..chunk.len()]);
            let mut to = dst.slice_mut(i * CHUNK..i * CHUNK + chunk.len());
            // A whole pinned buffer is copied asynchronously; cudarc
            // synchronizes after a copy from a plain slice (the last chunk).
            let copied = if chunk.len() == CHUNK {
                self.stream.memcpy_htod(&stage.host, &mut to)
            } else {
                let pinned = stage.host.as_slice().map_err(driver("upload"))?;
                self.stream.memcpy_htod(&pinned[..chunk.len()], &mut to)
            };
            copied.map_err(driver("upload"))?;
            stage.done.record(&self.stream).map_err(driver("upload"))?;
        }
        Ok(())
    }

    /// `dst := src[..dst.len()]`, after all queued work.
    pub(super) fn download_bytes(&self, src: &CudaSlice<u8>, dst: &mut [u8]) -> Result<()> {
        let n = dst.len();
        if n < STAGING_MIN || page_locked::holds(dst) {
            return self.stream.memcpy_dtoh(&src.slice(0..n), dst).map_err(driver("download"));
        }
        let mut guard = self.staging()?;
        let Some(stages) = guard.as_mut() else { return Err(unstaged()) };
        let chunks = n.div_ceil(CHUNK);
        let range = |i: usize| i * CHUNK..((i + 1) * CHUNK).min(n);
        let fetch = |stage: &mut Stage, i: usize| -> Result<()> {
            let r = range(i);
            let len = r.len();
            let from = src.slice(r);
            // Asynchronous into a whole pinned buffer, as in `upload_bytes`.
            let copied = if len == CHUNK {
                stage.done.synchronize().map_err(driver("download"))?;
                self.stream.memcpy_dtoh(&from, &mut stage.host)
            } else {
                self.stream.memcpy_dtoh(&from, &mut stage.wait()?[..len])
            };
            copied.map_err(driver("download"))?;
            stage.done.record(&self.stream).map_err(driver("download"))
        };
        fetch(&mut stages[0], 0)?;
        for i in 0..chunks {
            if i + 1 < chunks {
                // Chunk i + 1's DMA runs while chunk i is copied out.
                fetch(&mut stages[(i + 1) % 2], i + 1)?;
            }
            let r = range(i);
            let len = r.len();
            parallel_copy(&stages[i % 2].wait()?[..len], &mut dst[r]);
        }
        Ok(())
    }
}

fn unstaged() -> Error {
    Error::Device("pinned staging buffers missing".into())
}
