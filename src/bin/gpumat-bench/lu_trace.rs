//! `--suite lu-trace`: where an LU's time goes: the wall time of the whole
//! factorization, of its panels alone (an `n × nb` block column factored by
//! itself), and the cost per call of each primitive at the shapes the
//! blocked algorithm uses, with cuBLAS's `trsm` beside ours; beside each,
//! the host's time to enqueue it (when the two are close, the host is the
//! limit); and what a solve adds to the factorization (one vector through
//! the permutation, the condition estimate).

use gpumat::Result;
use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::{Backend, Block, BufferMut, Compute, Diag, Norm, Op, Pivoting, Side, View, ViewMut};
use gpumat::factor::lu::{self, LuParams};
use gpumat::layout::Uplo;
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::inputs::random;
use crate::harness::timing::enqueue_and_per_call_us;

pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let mut rows = vec![];
    let reps = 10;
    let per_call = |f: &mut dyn FnMut() -> Result<()>| enqueue_and_per_call_us(cuda, reps, f);
    for &n in &settings.sizes {
        let a = random(cuda, n * n, 6)?;
        let mut w = cuda.alloc::<f64>(n * n)?;
        let mut ipiv = cuda.alloc::<i32>(n)?;
        let mut info = cuda.upload(&[0i32])?;
        let params = LuParams::for_order(n);
        let (nb, leaf) = (params.block_size, params.leaf_size);
        let mut factor = |cols: usize, params: LuParams| -> Result<()> {
            let block = Block { offset: 0, rows: n, cols, ld: n };
            cuda.copy(View::new(&a, block)?, ViewMut::new(&mut w, block)?)?;
            let buf = BufferMut::new(&mut w);
            let piv = BufferMut::new(&mut ipiv);
            let mut status = ViewMut::dense(&mut info, 1, 1)?;
            lu::factor_in_place(cuda, &buf, block, &piv, Block::dense(cols, 1), &mut status, Pivoting::Partial, params)
        };
        let mut out = vec![];
        out.push((format!("factor {n}x{n}, nb {nb}, leaf {leaf}"), per_call(&mut || factor(n, params))?));
        out.push((format!("block column {n}x{nb} alone"), per_call(&mut || factor(nb, params))?));
        out.push((format!("block column {n}x{nb}, one leaf of {nb}"), {
            let wide = LuParams { block_size: nb, leaf_size: nb, ..LuParams::default() };
            per_call(&mut || factor(nb, wide))?
        }));
        // In FP32, with FP16 and FP32 trailing updates (the mixed-precision
        // solve's factorizations), a copy included.
        let (mut low, mut work) = (cuda.alloc::<f32>(n * n)?, cuda.alloc::<f32>(n * n)?);
        let (mut piv32, mut info32) = (cuda.alloc::<i32>(n)?, cuda.upload(&[0i32])?);
        cuda.cast(View::dense(&a, n, n)?, ViewMut::dense(&mut low, n, n)?)?;
        for (name, update) in [("fp16", Compute::Fp16), ("f32", Compute::Native)] {
            let us = per_call(&mut || {
                cuda.copy(View::dense(&low, n, n)?, ViewMut::dense(&mut work, n, n)?)?;
                let (buf, piv) = (BufferMut::new(&mut work), BufferMut::new(&mut piv32));
                let mut status = ViewMut::dense(&mut info32, 1, 1)?;
                let params = LuParams { update, ..params };
                let block = Block::dense(n, n);
                lu::factor_in_place(cuda, &buf, block, &piv, Block::dense(n, 1), &mut status, Pivoting::Partial, params)
            })?;
            out.push((format!("FP32 factor {n}x{n}, {name} updates, copy included"), us));
        }
        drop((low, work, piv32, info32));
        // The block column with a trailing update's product beside it on
        // the side queue, as the look-ahead runs them: the wall time is
        // the longer of the two where they overlap, their sum where not.
        let side = cuda.side()?;
        let mut c = cuda.alloc::<f64>(n * n)?;
        let below = n - nb;
        for cols in [below / 4, below] {
            let product = |c: &mut CudaBuffer<f64>| -> Result<()> {
                side.wait_for(cuda)?;
                let l21 = View::new(&a, Block { offset: nb, rows: below, cols: nb, ld: n })?;
                let u12 = View::new(&a, Block { offset: n * nb, rows: nb, cols, ld: n })?;
                let c = ViewMut::new(c, Block { offset: n * nb + nb, rows: below, cols, ld: n })?;
                side.gemm(-1.0, l21, Op::NoTrans, u12, Op::NoTrans, 1.0, c)
            };
            let alone = per_call(&mut || {
                product(&mut c)?;
                cuda.wait_for(side)
            })?;
            out.push((format!("gemm {below}x{cols} k {nb} on the side queue alone"), alone));
            let both = per_call(&mut || {
                product(&mut c)?;
                factor(nb, params)?;
                cuda.wait_for(side)
            })?;
            out.push((format!("block column {n}x{nb} with gemm {below}x{cols} k {nb} beside it"), both));
        }
        drop(c);
        // Pivots of a real factorization, for the interchanges below.
        factor(n, params)?;
        // What `Matrix::solve` adds to the factorization: the permutation
        // formed once from the pivots, a solve of one vector through it, and
        // the condition estimate (a handful of such solves in FP64).
        let perm = {
            let mut host = vec![0i32; n];
            cuda.download(&ipiv, &mut host)?;
            cuda.upload(&lu::permutation(&host)?)?
        };
        let x0 = random(cuda, n, 7)?;
        let mut x = cuda.alloc::<f64>(n)?;
        out.push((
            "solve of one vector through the permutation".into(),
            per_call(&mut || {
                cuda.copy(View::dense(&x0, n, 1)?, ViewMut::dense(&mut x, n, 1)?)?;
                let rows_ = Some(View::dense(&perm, n, 1)?);
                lu::solve_in_place(cuda, View::dense(&w, n, n)?, rows_, Op::NoTrans, ViewMut::dense(&mut x, n, 1)?)
            })?,
        ));
        let a_norm = cuda.norm(Norm::One, View::dense(&a, n, n)?)?;
        out.push((
            "condition estimate (rcond) from the factor".into(),
            per_call(&mut || {
                lu::rcond(cuda, View::dense(&w, n, n)?, Some(View::dense(&perm, n, 1)?), a_norm).map(drop)
            })?,
        ));
        for (rows_, cols) in [(n, leaf), (n / 2, leaf), (512, leaf)] {
            let panel = Block { offset: 0, rows: rows_, cols, ld: n };
            let copy = per_call(&mut || cuda.copy(View::new(&a, panel)?, ViewMut::new(&mut w, panel)?))?;
            let us = per_call(&mut || {
                cuda.copy(View::new(&a, panel)?, ViewMut::new(&mut w, panel)?)?;
                let piv = ViewMut::new(&mut ipiv, Block::dense(cols, 1))?;
                cuda.getrf_panel(
                    ViewMut::new(&mut w, panel)?,
                    piv,
                    ViewMut::dense(&mut info, 1, 1)?,
                    0,
                    Pivoting::Partial,
                )
            })?;
            out.push((
                format!("getrf_panel {rows_}x{cols} (copy of {:.1} µs taken off)", copy.1),
                (us.0 - copy.0, us.1 - copy.1),
            ));
        }
        cuda.copy(View::dense(&a, n, n)?, ViewMut::dense(&mut w, n, n)?)?;
        for (k, cols) in [(leaf, leaf), (nb, nb), (nb, n - nb)] {
            let us = per_call(&mut || {
                let target = ViewMut::new(&mut w, Block { offset: 0, rows: n, cols, ld: n })?;
                cuda.laswp(target, View::new(&ipiv, Block::dense(k, 1))?, 0, false)
            })?;
            out.push((format!("laswp {k} pivots on {cols} columns"), us));
        }
        // The recursion's solves (order = columns), then the block column's.
        let mut solves = vec![(leaf, leaf), (2 * leaf, 2 * leaf), (nb / 2, nb / 2), (nb, nb), (nb, n - nb)];
        solves.dedup();
        for (kb, cols) in solves {
            let l11 = View::new(&a, Block { offset: 0, rows: kb, cols: kb, ld: n })?;
            let us = per_call(&mut || {
                let b = ViewMut::new(&mut w, Block { offset: n * nb, rows: kb, cols, ld: n })?;
                cuda.trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::Unit, 1.0, l11, b)
            })?;
            out.push((format!("trsm {kb}x{kb} on {cols} columns"), us));
            let us = per_call(&mut || {
                let b = ViewMut::new(&mut w, Block { offset: n * nb, rows: kb, cols, ld: n })?;
                vendor::trsm_left(cuda, (Uplo::Lower, Diag::Unit), l11, b)
            })?;
            out.push((format!("cuBLAS trsm {kb}x{kb} on {cols} columns"), us));
        }
        let below = n - nb;
        for cols in [nb, n - 2 * nb] {
            let us = per_call(&mut || {
                let l21 = View::new(&a, Block { offset: nb, rows: below, cols: nb, ld: n })?;
                let u12 = View::new(&a, Block { offset: n * nb, rows: nb, cols, ld: n })?;
                let c = ViewMut::new(&mut w, Block { offset: n * nb + nb, rows: below, cols, ld: n })?;
                cuda.gemm(-1.0, l21, Op::NoTrans, u12, Op::NoTrans, 1.0, c)
            })?;
            out.push((format!("gemm {below}x{cols} k {nb}"), us));
        }
        for (what, (enqueue, us)) in out {
            println!("n {n}: {what}: {us:.1} µs (enqueue {enqueue:.1} µs)");
            rows.push(json!({"op": format!("lu-trace {what}"), "n": n, "us_per_call": us, "enqueue_us": enqueue}));
        }
    }
    Ok(rows)
}
