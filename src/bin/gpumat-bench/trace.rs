//! `--suite trace`: where the time of a full-storage Cholesky factorization
//! goes: the host's enqueue time against the wall time, and the cost per
//! call of each primitive at the shapes the blocked algorithm uses; the
//! solves of one vector and the condition estimate after it. One
//! factorization each of gpumat and cuSOLVER runs inside a profiler range
//! (`nsys --capture-range=cudaProfilerApi`, `ncu --profile-from-start off`).

use gpumat::Result;
use gpumat::backend::cuda::{Cuda, vendor};
use gpumat::backend::{Backend, Block, BufferMut, Diag, Norm, Op, Side, View, ViewMut};
use gpumat::factor::cholesky::{self, CholeskyParams};
use gpumat::layout::Uplo;
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::factorizations::{cholesky_full, cholesky_vendor};
use crate::harness::inputs::diagonally_dominant;
use crate::harness::timing::{enqueue_and_per_call_us, enqueue_and_wall, per_call_us};

pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let mut rows = vec![];
    for &n in &settings.sizes {
        let a = diagonally_dominant(cuda, n, 5)?;
        let (mut l, mut theirs, mut info) =
            (cuda.alloc::<f64>(n * n)?, cuda.alloc::<f64>(n * n)?, cuda.upload(&[0i32])?);
        let mut vendor = vendor::DenseCholesky::new(cuda, n)?;
        let params = CholeskyParams::for_order(n);
        cholesky_full(cuda, n, &a, &mut l, &mut info, params)?;
        cholesky_vendor(cuda, n, &a, &mut theirs, &mut vendor)?;
        let (enqueue, wall) = enqueue_and_wall(cuda, 1, &mut || cholesky_full(cuda, n, &a, &mut l, &mut info, params))?;
        let (enqueue, wall) = (enqueue.as_secs_f64() * 1e3, wall.as_secs_f64() * 1e3);
        rows.push(json!({"op": "trace_enqueue", "n": n, "enqueue_ms": enqueue, "wall_ms": wall, "block_size": params.block_size}));

        // SAFETY: profiler range markers; no effect without a profiler.
        unsafe { cudarc::driver::sys::cuProfilerStart() };
        cholesky_full(cuda, n, &a, &mut l, &mut info, params)?;
        cuda.synchronize()?;
        cholesky_vendor(cuda, n, &a, &mut theirs, &mut vendor)?;
        cuda.synchronize()?;
        unsafe { cudarc::driver::sys::cuProfilerStop() };

        // Per-call times, `l` holding the factor so that solves are sane.
        let reps = 20;
        let per_call = |f: &mut dyn FnMut() -> Result<()>| per_call_us(cuda, reps, f);
        let nb = params.block_size;
        let mut w = cuda.alloc::<f64>(n * n)?;
        let mut out = vec![];
        for m in [64, 128, 256] {
            let l11 = View::new(&l, Block { offset: 0, rows: m, cols: m, ld: n })?;
            let mut us = per_call(&mut || {
                let b = ViewMut::new(&mut w, Block { offset: 0, rows: m, cols: m, ld: n })?;
                cuda.trsm(Side::Right, Uplo::Lower, Op::Trans, Diag::NonUnit, 1.0, l11, b)
            })?;
            out.push((format!("trsm {m}x{m}"), us));
            us = per_call(&mut || {
                let c = ViewMut::new(&mut w, Block { offset: 0, rows: m, cols: m, ld: n })?;
                cuda.syrk(Uplo::Lower, Op::NoTrans, -1.0, l11, 1.0, c)
            })?;
            out.push((format!("syrk {m} k {m}"), us));
        }
        let below = n - nb;
        let l11 = View::new(&l, Block { offset: 0, rows: nb, cols: nb, ld: n })?;
        let us = per_call(&mut || {
            let b = ViewMut::new(&mut w, Block { offset: nb, rows: below, cols: nb, ld: n })?;
            cuda.trsm(Side::Right, Uplo::Lower, Op::Trans, Diag::NonUnit, 1.0, l11, b)
        })?;
        out.push((format!("trsm panel {below}x{nb}"), us));
        let panel = View::new(&l, Block { offset: nb, rows: below, cols: nb, ld: n })?;
        let us = per_call(&mut || {
            let c = ViewMut::new(&mut w, Block { offset: 0, rows: below, cols: below, ld: n })?;
            cuda.syrk(Uplo::Lower, Op::NoTrans, -1.0, panel, 1.0, c)
        })?;
        out.push((format!("syrk trailing {below} k {nb}"), us));
        let us = per_call(&mut || {
            let x = View::new(&l, Block { offset: nb, rows: nb, cols: nb, ld: n })?;
            let c = ViewMut::new(&mut w, Block { offset: 0, rows: below, cols: nb, ld: n })?;
            cuda.gemm(-1.0, panel, Op::NoTrans, x, Op::Trans, 1.0, c)
        })?;
        out.push((format!("gemm {below}x{nb} k {nb}"), us));
        // Leaves: 64 copies of the leading 64 × 64 block, factored one each.
        let leaf = params.leaf_size;
        let copies = reps + 1;
        let mut leaves = cuda.alloc::<f64>(leaf * leaf * copies)?;
        for c in 0..copies {
            let dst = ViewMut::new(&mut leaves, Block { offset: c * leaf * leaf, rows: leaf, cols: leaf, ld: leaf })?;
            cuda.copy(View::new(&a, Block { offset: 0, rows: leaf, cols: leaf, ld: n })?, dst)?;
        }
        let mut c = 0;
        let us = per_call(&mut || {
            let blk = Block { offset: c * leaf * leaf, rows: leaf, cols: leaf, ld: leaf };
            c += 1;
            cuda.potrf(Uplo::Lower, ViewMut::new(&mut leaves, blk)?, ViewMut::dense(&mut info, 1, 1)?, 0)
        })?;
        out.push((format!("potrf leaf {leaf}"), us));
        // A whole block column as one panel, on a fresh copy each time; and
        // the same transposed, as one of the two triangles of an RFP array
        // stores it (upper, `Lᵀ`): a 64 × n panel.
        for (uplo, panel) in [
            (Uplo::Lower, Block { offset: 0, rows: n, cols: leaf, ld: n }),
            (Uplo::Upper, Block { offset: 0, rows: leaf, cols: n, ld: n }),
        ] {
            let copy = per_call(&mut || cuda.copy(View::new(&a, panel)?, ViewMut::new(&mut w, panel)?))?;
            let us = per_call(&mut || {
                cuda.copy(View::new(&a, panel)?, ViewMut::new(&mut w, panel)?)?;
                cuda.potrf_panel(uplo, ViewMut::new(&mut w, panel)?, ViewMut::dense(&mut info, 1, 1)?, 0)
            })?;
            let (rows, cols) = (panel.rows, panel.cols);
            out.push((format!("potrf_panel {uplo:?} {rows}x{cols} (copy of {copy:.1} µs taken off)"), us - copy));
        }
        // syrk and gemm on transposed blocks, and a whole factorization of
        // the upper triangle against the lower one.
        let panel_t = View::new(&l, Block { offset: nb * n, rows: nb, cols: below, ld: n })?;
        let us = per_call(&mut || {
            let c = ViewMut::new(&mut w, Block { offset: 0, rows: below, cols: below, ld: n })?;
            cuda.syrk(Uplo::Upper, Op::Trans, -1.0, panel_t, 1.0, c)
        })?;
        out.push((format!("syrk upper trans trailing {below} k {nb}"), us));
        // As `TRANSR = 'T'` updates `T2` (lower) from `S` (which holds `L21ᵀ`).
        let us = per_call(&mut || {
            let c = ViewMut::new(&mut w, Block { offset: 0, rows: below, cols: below, ld: n })?;
            cuda.syrk(Uplo::Lower, Op::Trans, -1.0, panel_t, 1.0, c)
        })?;
        out.push((format!("syrk lower trans trailing {below} k {nb}"), us));
        let us = per_call(&mut || {
            let x = View::new(&l, Block { offset: nb * n + nb, rows: nb, cols: nb, ld: n })?;
            let c = ViewMut::new(&mut w, Block { offset: 0, rows: nb, cols: below, ld: n })?;
            cuda.gemm(-1.0, x, Op::Trans, panel_t, Op::NoTrans, 1.0, c)
        })?;
        out.push((format!("gemm transposed {nb}x{below} k {nb}"), us));
        for uplo in [Uplo::Lower, Uplo::Upper] {
            let us = per_call(&mut || {
                cuda.copy(View::dense(&a, n, n)?, ViewMut::dense(&mut w, n, n)?)?;
                let mut status = ViewMut::dense(&mut info, 1, 1)?;
                cholesky::factor_in_place(
                    cuda,
                    uplo,
                    &BufferMut::new(&mut w),
                    Block::dense(n, n),
                    &mut status,
                    0,
                    params,
                )
            })?;
            out.push((format!("factorization {uplo:?} (with a copy)"), us));
        }
        // What `Matrix::solve` adds: the solves of one vector, by `trsm` in
        // the factor's precision and by FP64 substitution (`trsv_wide`), and
        // the condition estimate, a handful of the latter.
        let x0 = crate::harness::inputs::random(cuda, n, 11)?;
        let mut x = cuda.alloc::<f64>(n)?;
        let factor = View::dense(&l, n, n)?;
        let us = per_call(&mut || {
            cuda.copy(View::dense(&x0, n, 1)?, ViewMut::dense(&mut x, n, 1)?)?;
            cholesky::solve_in_place(cuda, Uplo::Lower, factor, ViewMut::dense(&mut x, n, 1)?)
        })?;
        out.push(("solve of one vector, two trsm".into(), us));
        let us = per_call(&mut || {
            cuda.copy(View::dense(&x0, n, 1)?, ViewMut::dense(&mut x, n, 1)?)?;
            cholesky::solve_wide_in_place(cuda, Uplo::Lower, factor, ViewMut::dense(&mut x, n, 1)?)
        })?;
        out.push(("solve of one vector, two trsv_wide".into(), us));
        let a_norm = cuda.norm(Norm::One, View::dense(&a, n, n)?)?;
        let us = per_call(&mut || cholesky::rcond(cuda, Uplo::Lower, factor, a_norm).map(drop))?;
        out.push(("condition estimate (rcond) from the factor".into(), us));
        let side = cuda.side()?;
        let us = per_call(&mut || {
            side.wait_for(cuda)?;
            cuda.wait_for(side)
        })?;
        out.push(("wait_for both ways".into(), us));
        let us = per_call(&mut || cuda.fill(ViewMut::dense(&mut info, 1, 1)?, 0))?;
        out.push(("launch (fill 1 entry)".into(), us));
        for (what, us) in out {
            println!("n {n}: {what}: {us:.1} µs");
            rows.push(json!({"op": format!("trace {what}"), "n": n, "us_per_call": us}));
        }
        // The host's share: enqueue time per call against time per call, for
        // the calls a block column makes, at its shapes.
        let tall = View::new(&l, Block { offset: nb, rows: below, cols: leaf, ld: n })?;
        let top = View::new(&l, Block { offset: nb, rows: leaf, cols: leaf, ld: n })?;
        let mut host: Vec<(String, (f64, f64))> = vec![];
        host.push((
            format!("potrf_panel {below}x{leaf}"),
            enqueue_and_per_call_us(cuda, reps, &mut || {
                let p = Block { offset: 0, rows: below, cols: leaf, ld: n };
                cuda.potrf_panel(Uplo::Lower, ViewMut::new(&mut w, p)?, ViewMut::dense(&mut info, 1, 1)?, 0)
            })?,
        ));
        host.push((
            format!("syrk {leaf} k {leaf}"),
            enqueue_and_per_call_us(cuda, reps, &mut || {
                let c = ViewMut::new(&mut w, Block { offset: 0, rows: leaf, cols: leaf, ld: n })?;
                cuda.syrk(Uplo::Lower, Op::NoTrans, -1.0, top, 1.0, c)
            })?,
        ));
        host.push((
            format!("gemm {below}x{leaf} k {leaf}"),
            enqueue_and_per_call_us(cuda, reps, &mut || {
                let c = ViewMut::new(&mut w, Block { offset: 0, rows: below, cols: leaf, ld: n })?;
                cuda.gemm(-1.0, tall, Op::NoTrans, top, Op::Trans, 1.0, c)
            })?,
        ));
        host.push((
            format!("syrk {nb} k {nb}"),
            enqueue_and_per_call_us(cuda, reps, &mut || {
                let x = View::new(&l, Block { offset: nb, rows: nb, cols: nb, ld: n })?;
                let c = ViewMut::new(&mut w, Block { offset: 0, rows: nb, cols: nb, ld: n })?;
                cuda.syrk(Uplo::Lower, Op::NoTrans, -1.0, x, 1.0, c)
            })?,
        ));
        host.push((
            "wait_for both ways".into(),
            enqueue_and_per_call_us(cuda, reps, &mut || {
                side.wait_for(cuda)?;
                cuda.wait_for(side)
            })?,
        ));
        for (what, (enqueue, us)) in host {
            println!("n {n}: host {what}: enqueue {enqueue:.1} µs of {us:.1} µs per call");
            rows.push(json!({"op": format!("trace host {what}"), "n": n, "enqueue_us": enqueue, "us_per_call": us}));
        }
    }
    Ok(rows)
}
