//! Recorded work ([`Backend::replay`](crate::backend::Backend::replay)): a
//! blocked factorization enqueues hundreds of small launches, each costing
//! the host 3–15 µs (cuBLAS more than gpumat's own kernels), and where the
//! host falls behind, the GPU waits between them. After [`PLAIN_RUNS`] runs
//! of a key its work is captured into a CUDA graph, and from then on that
//! graph is launched instead: one launch (H100, Cholesky: 7 % faster at
//! n = 4096, 5 % at 8192).
//!
//! Work is captured and replayed on a queue of its own, the recorder,
//! ordered after the main queue's work and before what follows by events:
//! a capture on the main queue would also take whatever other threads
//! enqueue there meanwhile, and replay it with their (by then freed)
//! memory. A key must name everything the enqueued work depends on, device
//! addresses included; what the work uses besides (the recorder's side
//! queue, cuBLAS's workspace, `potrf_panel`'s counter) lives as long as
//! this `Cuda`, and was created by an ordinary run on the recorder just
//! before the capture. Kernel nodes keep the priority of the queue they
//! were captured from, so the panels stay ahead of the trailing updates.
//! `GPUMAT_GRAPHS=0` turns recording off.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use cudarc::driver::CudaGraph;
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};

use super::{Cuda, driver};
use crate::Result;
use crate::backend::Backend;

/// Runs of a key enqueued call by call before its work is captured. A
/// capture and instantiation costs the host what several replays save (H100,
/// Cholesky: 1.7 ms against 0.2 ms a run at n = 4096, 5–20 ms against 0.4
/// at 8192), so work done only once or twice is never recorded.
pub const PLAIN_RUNS: usize = 2;

/// Most keys remembered; past it, all are forgotten and recording starts over.
const CAPACITY: usize = 64;

/// How often each key has run call by call, and the graphs of keys run more
/// often (`None`: capture failed, this key's work is always enqueued call
/// by call).
#[derive(Default)]
pub(super) struct Recordings {
    runs: HashMap<String, usize>,
    graphs: HashMap<String, Option<Graph>>,
}

/// A graph, only ever touched under the `Recordings` lock.
pub(super) struct Graph(CudaGraph);

// SAFETY: a CUDA graph may be used from any thread as long as no two threads
// use it at once; every use is under the `Mutex` that holds `Recordings`.
unsafe impl Send for Graph {}

impl Cuda {
    pub(super) fn replay_impl(&self, key: &str, enqueue: &mut dyn FnMut(&Cuda) -> Result<()>) -> Result<()> {
        if !self.record_graphs.load(Ordering::Acquire) {
            return enqueue(self);
        }
        let mut rec = self.recordings.lock().unwrap_or_else(|p| p.into_inner());
        match rec.graphs.get(key) {
            Some(Some(graph)) => return self.replay_graph(graph),
            Some(None) => {
                drop(rec);
                return enqueue(self);
            }
            None => {}
        }
        if rec.runs.len() >= CAPACITY || rec.graphs.len() >= CAPACITY {
            *rec = Recordings::default();
        }
        let runs = rec.runs.entry(key.to_string()).or_default();
        if *runs < PLAIN_RUNS {
            *runs += 1;
            drop(rec);
            return enqueue(self);
        }
        rec.runs.remove(key);
        // This call's work runs on the recorder, call by call: that run also
        // creates what the work needs besides its operands (the recorder's
        // side queue, scratch, counters), which a capture could not.
        let recorder = self.recorder()?;
        recorder.wait_for(self)?;
        enqueue(recorder)?;
        self.wait_for(recorder)?;
        let graph = recorder.capture(enqueue);
        rec.graphs.insert(key.to_string(), graph);
        Ok(())
    }

    /// The recorder's queue: ordered as the main one, at its priority.
    fn recorder(&self) -> Result<&Cuda> {
        if let Some(recorder) = self.recorder.get() {
            return Ok(recorder);
        }
        let recorder = Box::new(self.fork(true)?);
        Ok(self.recorder.get_or_init(|| recorder))
    }

    /// Launches `graph` (on the recorder, where it was captured) between
    /// this queue's work before and after.
    fn replay_graph(&self, graph: &Graph) -> Result<()> {
        let recorder = self.recorder()?;
        recorder.wait_for(self)?;
        graph.0.launch().map_err(driver("launching a recorded graph"))?;
        self.wait_for(recorder)
    }

    /// `enqueue`'s work on this queue as a graph, not run; `None` if it
    /// failed or the driver could not capture it. Only this thread enqueues
    /// on this queue (the recorder, under the `Recordings` lock), so the
    /// capture takes nothing else.
    fn capture(&self, enqueue: &mut dyn FnMut(&Cuda) -> Result<()>) -> Option<Graph> {
        let mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        self.stream.begin_capture(mode).ok()?;
        let enqueued = enqueue(self);
        let flags = CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
        let graph = self.stream.end_capture(flags);
        enqueued.ok()?;
        graph.ok().flatten().map(Graph)
    }
}
