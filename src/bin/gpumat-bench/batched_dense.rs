//! The dense half of `--suite batched`: batched LU with partial pivoting
//! (`batch::lu_in_place` + `solve_in_place`) against cuBLAS
//! `getrfBatched` + `getrsBatched`, and batched Cholesky
//! (`cholesky_in_place` + `solve_in_place`) against cuSOLVER
//! `potrfBatched` + `potrsBatched`, FP64, one right-hand side, at n = 16,
//! 32, 64, 128, 256, 512 with as many members as fill 1 GB (10⁹ / (8n²)).
//!
//! Members are uniform in [−1, 1) for LU and symmetric, diagonally dominant
//! (hence positive definite) for Cholesky. Each timed run first copies the
//! members and right-hand sides from pristine ones; that copy is timed
//! alone in the same rounds and its median subtracted. The backward error
//! is the worst over the batch of ‖A·x − b‖∞ / (‖A‖∞·‖x‖∞ + ‖b‖∞), in
//! FP64 on the host.

use std::cell::RefCell;

use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::{Backend, BufferMut, DeviceBuffer, View, ViewMut};
use gpumat::batch::{self, BatchParams};
use gpumat::{Error, Result};
use rayon::prelude::*;
use serde_json::{Value, json};

use crate::harness::inputs::uniform;
use crate::harness::results::record;
use crate::harness::timing::interleaved;

pub const ORDERS: [usize; 6] = [16, 32, 64, 128, 256, 512];

pub fn run(cuda: &Cuda, orders: &[usize], reps: usize) -> Result<Vec<Value>> {
    let mut rows = vec![];
    for &n in orders {
        let count = 1_000_000_000 / (8 * n * n);
        rows.push(shape(cuda, reps, n, count, false)?);
        rows.push(shape(cuda, reps, n, count, true)?);
    }
    Ok(rows)
}

/// `count` members of order `n`: uniform, or symmetric with `n` added to
/// the diagonal.
fn members(n: usize, count: usize, spd: bool) -> Vec<f64> {
    let mut a = uniform(n * n * count, 51 + n as u64, -1.0..1.0);
    if spd {
        a.par_chunks_mut(n * n).for_each(|m| {
            for j in 0..n {
                for i in j + 1..n {
                    m[j + i * n] = m[i + j * n];
                }
                m[j + j * n] += n as f64;
            }
        });
    }
    a
}

/// The worst backward error over the members of `x`.
fn backward_error(a: &[f64], b: &[f64], x: &[f64], n: usize) -> f64 {
    (0..b.len() / n)
        .into_par_iter()
        .map(|s| {
            let (a, b, x) = (&a[s * n * n..][..n * n], &b[s * n..][..n], &x[s * n..][..n]);
            let (mut r, mut na, mut nx, mut nb) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
            for i in 0..n {
                let (mut ax, mut row) = (0.0, 0.0);
                for j in 0..n {
                    ax += a[i + j * n] * x[j];
                    row += a[i + j * n].abs();
                }
                r = r.max((ax - b[i]).abs());
                na = na.max(row);
                nx = nx.max(x[i].abs());
                nb = nb.max(b[i].abs());
            }
            r / (na * nx + nb)
        })
        .reduce(|| 0.0, f64::max)
}

fn shape(cuda: &Cuda, reps: usize, n: usize, count: usize, spd: bool) -> Result<Value> {
    let (a_host, b_host) = (members(n, count, spd), uniform(n * count, 77 + n as u64, -1.0..1.0));
    let (a0, b0) = (cuda.upload(&a_host)?, cuda.upload(&b_host)?);
    let (a, b) = (RefCell::new(cuda.alloc::<f64>(n * n * count)?), RefCell::new(cuda.alloc::<f64>(n * count)?));
    let ipiv = RefCell::new(cuda.alloc::<i32>(n * count)?);
    let info = RefCell::new(cuda.alloc::<i32>(count)?);
    let vendor = RefCell::new(vendor::DenseBatch::<f64>::new(cuda, n, count, &a.borrow(), &b.borrow())?);
    let params = if spd { BatchParams::for_cholesky::<f64>(n) } else { BatchParams::for_order::<f64>(n) };
    let copy = |src: &CudaBuffer<f64>, dst: &mut CudaBuffer<f64>| {
        cuda.copy(View::dense(src, src.len(), 1)?, ViewMut::dense(dst, src.len(), 1)?)
    };
    let fresh = || -> Result<()> {
        copy(&a0, &mut a.borrow_mut())?;
        copy(&b0, &mut b.borrow_mut())
    };
    let ours = || -> Result<()> {
        fresh()?;
        let (mut a, mut b, mut ipiv, mut info) = (a.borrow_mut(), b.borrow_mut(), ipiv.borrow_mut(), info.borrow_mut());
        cuda.fill(ViewMut::dense(&mut *info, count, 1)?, 0)?;
        let (f, p, i) = (BufferMut::new(&mut *a), BufferMut::new(&mut *ipiv), BufferMut::new(&mut *info));
        if spd {
            batch::cholesky_in_place(cuda, &f, n, count, &i, params)?;
        } else {
            batch::lu_in_place(cuda, &f, n, count, &p, &i, params)?;
        }
        let pivots = (!spd).then(|| p.buffer());
        batch::solve_in_place(cuda, spd, f.buffer(), pivots, n, count, &BufferMut::new(&mut *b), 1, params)
    };
    let theirs = || -> Result<()> {
        fresh()?;
        if spd { vendor.borrow_mut().cholesky(cuda) } else { vendor.borrow_mut().lu(cuda) }
    };
    let t = interleaved(cuda, reps, &mut [&mut || fresh(), &mut || ours(), &mut || theirs()])?;
    let (t_ours, t_theirs) = ((t[1] - t[0]).max(1e-6), (t[2] - t[0]).max(1e-6));
    // Each once more, for its answer, statuses and error.
    let mut x = vec![0.0; n * count];
    let mut errors = [0.0; 2];
    for (k, run) in [&ours as &dyn Fn() -> Result<()>, &theirs].into_iter().enumerate() {
        run()?;
        let infos = if k == 0 {
            let mut h = vec![0i32; count];
            cuda.download(&info.borrow(), &mut h)?;
            h
        } else {
            vendor.borrow().infos(cuda)?
        };
        if let Some(s) = infos.iter().position(|&v| v != 0) {
            return Err(Error::Device(format!(
                "batched n = {n}: member {s} info {} ({})",
                infos[s],
                ["gpumat", "vendor"][k]
            )));
        }
        cuda.download(&b.borrow(), &mut x)?;
        errors[k] = backward_error(&a_host, &b_host, &x, n);
    }
    let (op, routine, flops) = if spd {
        ("batched_cholesky", "potrfBatched+potrsBatched", (n * n * n) as f64 / 3.0 + 2.0 * (n * n) as f64)
    } else {
        ("batched_lu", "getrfBatched+getrsBatched", 2.0 * (n * n * n) as f64 / 3.0 + 2.0 * (n * n) as f64)
    };
    let flops = flops * count as f64;
    println!(
        "{op} n = {n} count = {count}: gpumat {t_ours:.3} ms ({:.0} GFLOP/s, error {:.1e}) vs {routine} {t_theirs:.3} ms ({:.0} GFLOP/s, error {:.1e}): {:.2}×; copy {:.3} ms",
        flops / (t_ours * 1e6),
        errors[0],
        flops / (t_theirs * 1e6),
        errors[1],
        t_theirs / t_ours,
        t[0]
    );
    let extra = json!({
        "count": count, "vendor_routine": routine, "panel": params.panel,
        "gpumat_backward_error": errors[0], "vendor_backward_error": errors[1], "copy_ms_subtracted": t[0],
    });
    Ok(record(op, n, t_ours, t_theirs, Some(flops), extra))
}
