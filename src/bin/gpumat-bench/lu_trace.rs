//! `--suite lu-trace`: where an LU's time goes: the wall time of the whole
//! factorization, of its panels alone (an `n × nb` block column factored by
//! itself), and the cost per call of each primitive at the shapes the
//! blocked algorithm uses, with cuBLAS's `trsm` beside ours.

use gpumat::Result;
use gpumat::backend::cuda::{Cuda, vendor};
use gpumat::backend::{Backend, Block, BufferMut, Diag, Op, Pivoting, Side, View, ViewMut};
use gpumat::factor::lu::{self, LuParams};
use gpumat::layout::Uplo;
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::inputs::random;
use crate::harness::timing::per_call_us;

pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let mut rows = vec![];
    let reps = 10;
    let per_call = |f: &mut dyn FnMut() -> Result<()>| per_call_us(cuda, reps, f);
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
        // Pivots of a real factorization, for the interchanges below.
        factor(n, params)?;
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
            out.push((format!("getrf_panel {rows_}x{cols} (copy of {copy:.1} µs taken off)"), us - copy));
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
        for (what, us) in out {
            println!("n {n}: {what}: {us:.1} µs");
            rows.push(json!({"op": format!("lu-trace {what}"), "n": n, "us_per_call": us}));
        }
    }
    Ok(rows)
}
