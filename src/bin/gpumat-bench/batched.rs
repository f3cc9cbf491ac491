//! `--suite batched`: batched tridiagonal solves (`Backend::tridiagonal_solve`,
//! diagonally dominant systems, no pivoting, one right-hand side) against
//! cuSPARSE `gtsv2StridedBatch` (each system's entries together: gpumat's
//! `SystemLayout::Columns`) and `gtsvInterleavedBatch` with cyclic reduction
//! (entry `i` of every system together: `SystemLayout::Rows`), in FP64 and
//! FP32, at (order, count) = (256, 16384), (1024, 4096), (4096, 1024),
//! (16384, 256): a quarter of a GiB of FP64 arrays each (`--sizes` unused).
//!
//! Every routine overwrites what it solves, so each timed run first copies
//! the batch from a pristine one; that copy is timed alone in the same
//! rounds and its median subtracted from the others'. The effective
//! bandwidth counts the five arrays (`dl`, `d`, `du`, `b`, `x`) once. The
//! backward error is the worst over the batch of ‖T·x − b‖∞ / (‖T‖∞·‖x‖∞ +
//! ‖b‖∞), computed on the host in FP64 from the inputs as rounded.

use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::{Backend, Block, BufferMut, SystemLayout, View, ViewMut};
use gpumat::{Error, Result, Scalar};
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::inputs::uniform;
use crate::harness::results::record;
use crate::harness::timing::interleaved;

/// (order, count) of the batches.
const SHAPES: [(usize, usize); 4] = [(256, 16384), (1024, 4096), (4096, 1024), (16384, 256)];

pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let mut rows = vec![];
    for (m, count) in SHAPES {
        rows.extend(shape::<f64>(cuda, settings.reps, m, count)?);
        rows.extend(shape::<f32>(cuda, settings.reps, m, count)?);
    }
    Ok(rows)
}

/// A batch on the host in FP64, entry `i` of system `s` at `s·m + i`:
/// off-diagonals uniform in [−1, 1), diagonals of magnitude 2.5 to 3.5.
struct Host {
    m: usize,
    count: usize,
    arrays: [Vec<f64>; 4],
}

impl Host {
    fn new(m: usize, count: usize, seed: u64) -> Self {
        let len = m * count;
        let d = uniform(len, seed + 1, -1.0..1.0).into_iter().map(|v| v.signum() * (2.5 + v.abs())).collect();
        Host {
            m,
            count,
            arrays: [
                uniform(len, seed, -1.0..1.0),
                d,
                uniform(len, seed + 2, -1.0..1.0),
                uniform(len, seed + 3, -1.0..1.0),
            ],
        }
    }

    /// The four arrays in `layout`, rounded to `T`, one after another.
    fn laid_out<T: Scalar>(&self, layout: SystemLayout) -> Vec<T> {
        let (m, count) = (self.m, self.count);
        let mut out = Vec::with_capacity(4 * m * count);
        for a in &self.arrays {
            for k in 0..m * count {
                let (s, i) = match layout {
                    SystemLayout::Columns => (k / m, k % m),
                    SystemLayout::Rows => (k % count, k / count),
                };
                out.push(T::from_f64(a[s * m + i]));
            }
        }
        out
    }

    /// The worst backward error over the batch of `x` (laid out as
    /// `layout`), against the inputs rounded to `T`.
    fn backward_error<T: Scalar>(&self, x: &[T], layout: SystemLayout) -> f64 {
        let (m, count) = (self.m, self.count);
        let r = |v: f64| T::from_f64(v).to_f64();
        let [dl, d, du, b] = &self.arrays;
        let at = |s: usize, i: usize| match layout {
            SystemLayout::Columns => x[s * m + i].to_f64(),
            SystemLayout::Rows => x[i * count + s].to_f64(),
        };
        let mut worst = 0.0f64;
        for s in 0..count {
            let (mut res, mut t, mut xn, mut bn) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
            for i in 0..m {
                let k = s * m + i;
                let (lo, up) = (if i > 0 { r(dl[k]) } else { 0.0 }, if i + 1 < m { r(du[k]) } else { 0.0 });
                let mut tx = r(d[k]) * at(s, i);
                if i > 0 {
                    tx += lo * at(s, i - 1);
                }
                if i + 1 < m {
                    tx += up * at(s, i + 1);
                }
                res = res.max((tx - r(b[k])).abs());
                t = t.max(lo.abs() + r(d[k]).abs() + up.abs());
                xn = xn.max(at(s, i).abs());
                bn = bn.max(r(b[k]).abs());
            }
            worst = worst.max(res / (t * xn + bn));
        }
        worst
    }
}

/// Writable views of the four arrays of `whole`.
fn views<'a, T: Scalar>(whole: &'a BufferMut<'_, Cuda, T>, blocks: [Block; 4]) -> Result<[ViewMut<'a, Cuda, T>; 4]> {
    let [a, b, c, d] = blocks.map(|blk| whole.view_mut(blk));
    Ok([a?, b?, c?, d?])
}

/// The four arrays' blocks in one buffer of `4·m·count` entries.
fn blocks(m: usize, count: usize, layout: SystemLayout) -> [Block; 4] {
    let (rows, cols) = if layout == SystemLayout::Columns { (m, count) } else { (count, m) };
    [0, 1, 2, 3].map(|k| Block { offset: k * m * count, rows, cols, ld: rows })
}

fn shape<T: Scalar>(cuda: &Cuda, reps: usize, m: usize, count: usize) -> Result<Vec<Value>> {
    let host = Host::new(m, count, 41);
    let len = 4 * m * count;
    let pristine = [SystemLayout::Columns, SystemLayout::Rows].map(|l| cuda.upload(&host.laid_out::<T>(l)));
    let [columns, rows] = pristine;
    let (columns, rows) = (columns?, rows?);
    let work = cuda.alloc::<T>(len)?;
    let info = std::cell::RefCell::new(cuda.alloc::<i32>(count)?);
    let copy = |src: &CudaBuffer<T>, dst: &mut CudaBuffer<T>| {
        cuda.copy(View::dense(src, len, 1)?, ViewMut::dense(dst, len, 1)?)
    };
    let sparse = {
        let [a, b, c, d] = blocks(m, count, SystemLayout::Columns).map(|b| View::new(&columns, b));
        std::cell::RefCell::new(vendor::SparseTridiagonal::<T>::new(cuda, m, count, [a?, b?, c?, d?])?)
    };
    let ours = |work: &mut CudaBuffer<T>, layout: SystemLayout| -> Result<()> {
        let whole = BufferMut::new(work);
        let [dl, d, du, b] = views(&whole, blocks(m, count, layout))?;
        cuda.tridiagonal_solve(layout, false, (dl, d, du), b, ViewMut::dense(&mut *info.borrow_mut(), count, 1)?)
    };
    let theirs = |work: &mut CudaBuffer<T>, layout: SystemLayout| -> Result<()> {
        sparse.borrow_mut().solve(cuda, layout, views(&BufferMut::new(work), blocks(m, count, layout))?)
    };
    let work = std::cell::RefCell::new(work);
    let t = {
        let mut f_copy = || copy(&columns, &mut work.borrow_mut());
        let mut f_columns = || {
            let w = &mut *work.borrow_mut();
            copy(&columns, w)?;
            ours(w, SystemLayout::Columns)
        };
        let mut f_strided = || {
            let w = &mut *work.borrow_mut();
            copy(&columns, w)?;
            sparse.borrow_mut().solve(
                cuda,
                SystemLayout::Columns,
                views(&BufferMut::new(w), blocks(m, count, SystemLayout::Columns))?,
            )
        };
        let mut f_rows = || {
            let w = &mut *work.borrow_mut();
            copy(&rows, w)?;
            ours(w, SystemLayout::Rows)
        };
        let mut f_interleaved = || {
            let w = &mut *work.borrow_mut();
            copy(&rows, w)?;
            theirs(w, SystemLayout::Rows)
        };
        interleaved(cuda, reps, &mut [&mut f_copy, &mut f_columns, &mut f_strided, &mut f_rows, &mut f_interleaved])?
    };
    let solve = |k: usize| (t[k] - t[0]).max(1e-6);
    let (t_columns, t_strided, t_rows, t_interleaved) = (solve(1), solve(2), solve(3), solve(4));
    // Each once more, for its answer and errors.
    let mut work = work.into_inner();
    let mut x = vec![T::ZERO; len];
    let mut errors = vec![];
    for (layout, src, vendor_routine) in [
        (SystemLayout::Columns, &columns, false),
        (SystemLayout::Columns, &columns, true),
        (SystemLayout::Rows, &rows, false),
        (SystemLayout::Rows, &rows, true),
    ] {
        copy(src, &mut work)?;
        if vendor_routine {
            theirs(&mut work, layout)?;
        } else {
            ours(&mut work, layout)?;
            let mut status = vec![0i32; count];
            cuda.download(&info.borrow(), &mut status)?;
            if let Some(s) = status.iter().position(|&v| v != 0) {
                return Err(Error::Device(format!(
                    "tridiagonal m = {m} count = {count}: system {s} info {}",
                    status[s]
                )));
            }
        }
        cuda.download(&work, &mut x)?;
        errors.push(host.backward_error(&x[3 * m * count..], layout));
    }
    let bytes = 5.0 * (m * count * std::mem::size_of::<T>()) as f64;
    let gbs = |ms: f64| bytes / (ms * 1e6);
    println!(
        "tridiagonal m = {m} count = {count} {}: columns {t_columns:.3} ms ({:.0} GB/s) vs gtsv2StridedBatch {t_strided:.3} ms ({:.0} GB/s); \
         rows {t_rows:.3} ms ({:.0} GB/s) vs gtsvInterleavedBatch {t_interleaved:.3} ms ({:.0} GB/s); copy {:.3} ms",
        T::NAME,
        gbs(t_columns),
        gbs(t_strided),
        gbs(t_rows),
        gbs(t_interleaved),
        t[0]
    );
    let extra = |ours: f64, theirs: f64, e: (f64, f64), routine: &str| {
        json!({
            "precision": T::NAME, "count": count, "vendor_routine": routine,
            "gpumat_gb_per_s": gbs(ours), "vendor_gb_per_s": gbs(theirs),
            "gpumat_backward_error": e.0, "vendor_backward_error": e.1,
            "copy_ms_subtracted": t[0],
        })
    };
    Ok(vec![
        record(
            "gtsv_columns",
            m,
            t_columns,
            t_strided,
            None,
            extra(t_columns, t_strided, (errors[0], errors[1]), "gtsv2StridedBatch"),
        ),
        record(
            "gtsv_rows",
            m,
            t_rows,
            t_interleaved,
            None,
            extra(t_rows, t_interleaved, (errors[2], errors[3]), "gtsvInterleavedBatch algo 0"),
        ),
    ])
}
