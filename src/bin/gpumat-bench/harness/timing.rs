//! Timing on the device. A run is timed from a drained queue until the
//! device is done with it, so that the figure is the work and not its
//! enqueueing; routines compared are run interleaved, after one warm-up run
//! each (NVRTC compilation, handles and first-touch allocations stay out),
//! and their medians are reported.

use std::time::{Duration, Instant};

use gpumat::Result;
use gpumat::backend::Backend;
use gpumat::backend::cuda::Cuda;

/// The host's time to enqueue `calls` calls of `f` on a drained queue, and
/// the wall time until the device has finished them.
pub fn enqueue_and_wall(cuda: &Cuda, calls: usize, f: &mut dyn FnMut() -> Result<()>) -> Result<(Duration, Duration)> {
    cuda.synchronize()?;
    let start = Instant::now();
    for _ in 0..calls {
        f()?;
    }
    let enqueue = start.elapsed();
    cuda.synchronize()?;
    Ok((enqueue, start.elapsed()))
}

/// Wall time in ms of one run of `f`, the queue drained before and after.
pub fn wall_ms(cuda: &Cuda, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    Ok(enqueue_and_wall(cuda, 1, f)?.1.as_secs_f64() * 1e3)
}

/// The median of `v` (the upper one of an even count; the default of an
/// empty `v`).
pub fn median<T: Copy + Default + PartialOrd>(mut v: Vec<T>) -> T {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// Median wall times in ms of `reps` runs of each routine, interleaved
/// round-robin so that drift in clocks and temperature hits all alike; one
/// warm-up run each.
pub fn interleaved(cuda: &Cuda, reps: usize, runs: &mut [&mut dyn FnMut() -> Result<()>]) -> Result<Vec<f64>> {
    for f in runs.iter_mut() {
        wall_ms(cuda, *f)?;
    }
    let mut times = vec![vec![]; runs.len()];
    for _ in 0..reps.max(1) {
        for (f, t) in runs.iter_mut().zip(&mut times) {
            t.push(wall_ms(cuda, *f)?);
        }
    }
    Ok(times.into_iter().map(median).collect())
}

/// [`interleaved`] for two routines, ours and the vendor's: their median
/// wall times in ms.
pub fn side_by_side(
    cuda: &Cuda,
    reps: usize,
    mut ours: impl FnMut() -> Result<()>,
    mut theirs: impl FnMut() -> Result<()>,
) -> Result<(f64, f64)> {
    let t = interleaved(cuda, reps, &mut [&mut ours, &mut theirs])?;
    Ok((t[0], t[1]))
}

/// The host's time to enqueue one call, and the time per call until the
/// device is done, in µs, over `reps` calls after one warm-up: when the two
/// are close, the host is the limit.
pub fn enqueue_and_per_call_us(cuda: &Cuda, reps: usize, f: &mut dyn FnMut() -> Result<()>) -> Result<(f64, f64)> {
    f()?;
    let (enqueue, wall) = enqueue_and_wall(cuda, reps, f)?;
    let us = |d: Duration| d.as_secs_f64() * 1e6 / reps as f64;
    Ok((us(enqueue), us(wall)))
}

/// Mean µs per call of `f` over `reps` calls after one warm-up, the queue
/// drained before and after: the cost of a primitive in a trace.
pub fn per_call_us(cuda: &Cuda, reps: usize, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    Ok(enqueue_and_per_call_us(cuda, reps, f)?.1)
}
