//! The search for the largest order a factorization fits on the device:
//! bisection on whether its memory can be allocated, then a confirming
//! factorization of a matrix whose factor is known, stepping down a little
//! when that run does not fit (workspaces taken on the way).

use gpumat::backend::cuda::{Cuda, CudaBuffer};
use gpumat::backend::{Backend, Block, View, ViewMut};
use gpumat::{Error, Result};

/// Largest relative error of a probed factor entry that confirms a run.
pub const ENTRY_TOLERANCE: f64 = 1e-12;

/// The entry at `offset` of a device buffer.
pub fn entry(cuda: &Cuda, buf: &CudaBuffer<f64>, offset: usize) -> Result<f64> {
    let mut one = cuda.alloc::<f64>(1)?;
    cuda.copy(View::new(buf, Block { offset, rows: 1, cols: 1, ld: 1 })?, ViewMut::dense(&mut one, 1, 1)?)?;
    let mut host = [0.0];
    cuda.download(&one, &mut host)?;
    Ok(host[0])
}

/// Largest `n` in `[lo, hi)` with `fits(n)`, given `fits(lo)` and not
/// `fits(hi)`; `fits` is monotone (a larger order needs more memory).
pub fn largest(lo: usize, hi: usize, fits: impl Fn(usize) -> Result<bool>) -> Result<usize> {
    let (mut lo, mut hi) = (lo, hi);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid)? { lo = mid } else { hi = mid }
    }
    Ok(lo)
}

/// Whether `f` succeeds: an allocation that does not fit is an `Err`. The
/// memory is given back before the next try.
pub fn succeeds<R>(cuda: &Cuda, f: impl FnOnce() -> Result<R>) -> Result<bool> {
    let ok = f().is_ok();
    cuda.synchronize()?;
    Ok(ok)
}

/// What [`find`] found: the confirmed order, the time of its factorization
/// in ms, the largest relative error of the probed entries, and the order
/// the bisection gave.
pub struct Found {
    pub n: usize,
    pub ms: f64,
    pub entry_error: f64,
    pub bisected: usize,
}

/// Bisection on `fits` below `hi`, then `confirm` (a factorization at that
/// order: its ms and entry error), stepping down 1% at a time, at most 5%,
/// while that run does not fit. Entries off by more than
/// [`ENTRY_TOLERANCE`] are an error.
pub fn find(
    cuda: &Cuda,
    name: &str,
    hi: usize,
    fits: impl Fn(usize) -> Result<bool>,
    confirm: impl Fn(&Cuda, usize) -> Result<(f64, f64)>,
) -> Result<Found> {
    let bisected = largest(1024, hi, fits)?;
    let mut n = bisected;
    let (ms, err) = loop {
        match confirm(cuda, n) {
            Ok(r) => break r,
            Err(e) if is_out_of_memory(&e) && n > bisected - bisected / 20 => {
                cuda.synchronize()?;
                n -= bisected / 100;
            }
            Err(e) => return Err(e),
        }
    };
    if err.is_nan() || err > ENTRY_TOLERANCE {
        return Err(Error::Device(format!("capacity: {name} at n = {n}: factor entries off by {err:.2e}")));
    }
    println!(
        "{name}: largest order {n} (bisection {bisected}), factored in {:.1} s, entries within {err:.1e}",
        ms / 1e3
    );
    Ok(Found { n, ms, entry_error: err, bisected })
}

pub fn is_out_of_memory(e: &Error) -> bool {
    match e {
        Error::OutOfDeviceMemory { .. } => true,
        Error::DeviceCall { status, .. } => status == "CUDA_ERROR_OUT_OF_MEMORY",
        Error::Device(msg) => msg.contains("OUT_OF_MEMORY") || msg.contains("out of memory"),
        _ => false,
    }
}
