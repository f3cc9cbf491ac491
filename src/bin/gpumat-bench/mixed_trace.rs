//! `--suite mixed-trace`: where the single-precision Cholesky of a
//! mixed-precision solve spends its time, on an SPD `randsvd` matrix of
//! condition 1e2 rounded to FP32: the whole factorization with FP16
//! updates, its trailing updates by block columns of two widths, with the
//! panels' own updates native and in TF32; the chain of panels alone (each
//! block column factored with no trailing update) at two block sizes; and
//! the two triangular solves of a refinement step by cuBLAS on the FP64
//! widened factor and on the FP32 factor, and by `trsv_wide`; the rest of
//! a refinement step (the FP64 residual, a norm read to the host); and
//! `laswp` of one vector by as many pivots as rows.

use gpumat::Result;
use gpumat::backend::cuda::{Cuda, CudaBuffer};
use gpumat::backend::{Backend, Block, BufferMut, Compute, Diag, Norm, Op, Side, View, ViewMut};
use gpumat::factor::cholesky::{self, CholeskyParams};
use gpumat::layout::Uplo;
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::inputs::{conditioned, random};
use crate::harness::timing::per_call_us;

pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let mut rows = vec![];
    let reps = settings.reps.max(3);
    let per_call = |f: &mut dyn FnMut() -> Result<()>| per_call_us(cuda, reps, f);
    for &n in &settings.sizes {
        let a = conditioned(cuda, n, 1e2, true, 5)?;
        let (mut low, mut work) = (cuda.alloc::<f32>(n * n)?, cuda.alloc::<f32>(n * n)?);
        cuda.cast(View::dense(&a, n, n)?, ViewMut::dense(&mut low, n, n)?)?;
        drop(a);
        let mut info = cuda.upload(&[0i32])?;
        let mut out: Vec<(String, f64)> = vec![];
        let copy = per_call(&mut || cuda.copy(View::dense(&low, n, n)?, ViewMut::dense(&mut work, n, n)?))?;
        let factor = |work: &mut CudaBuffer<f32>, info: &mut CudaBuffer<i32>, params| -> Result<f64> {
            let t = per_call(&mut || {
                cuda.copy(View::dense(&low, n, n)?, ViewMut::dense(work, n, n)?)?;
                let (block, mut status) = (Block::dense(n, n), ViewMut::dense(info, 1, 1)?);
                cholesky::factor_in_place(cuda, Uplo::Lower, &BufferMut::new(work), block, &mut status, 0, params)
            })?;
            Ok(t - copy)
        };
        let base = CholeskyParams { update: Compute::Fp16, ..CholeskyParams::for_order(n) };
        for panel in [Compute::Native, Compute::Tf32] {
            for tile in [base.update_tile, 4 * base.update_tile] {
                let params = CholeskyParams { panel, update_tile: tile, ..base };
                let us = factor(&mut work, &mut info, params)?;
                let nb = params.block_size;
                out.push((format!("fp16 factor, nb {nb}, tile {tile}, panel {panel:?} (copy taken off)"), us));
            }
        }
        // The chain of block columns with no trailing update between them,
        // each factored as the blocked loop factors its panels.
        for nb in [256, 1024] {
            let params = CholeskyParams { block_size: nb, ..base };
            let t = per_call(&mut || {
                cuda.copy(View::dense(&low, n, n)?, ViewMut::dense(&mut work, n, n)?)?;
                let buf = BufferMut::new(&mut work);
                let mut status = ViewMut::dense(&mut info, 1, 1)?;
                for k in (0..n).step_by(nb) {
                    let block = Block { offset: k * n + k, rows: n - k, cols: nb.min(n - k), ld: n };
                    cholesky::factor_in_place(cuda, Uplo::Lower, &buf, block, &mut status, 0, params)?;
                }
                Ok(())
            })?;
            out.push((format!("panels alone, nb {nb}"), t - copy));
        }
        // The two triangular solves of a refinement step.
        factor(&mut work, &mut info, base)?;
        let mut wide = cuda.alloc::<f64>(n * n)?;
        cuda.cast(View::dense(&work, n, n)?, ViewMut::dense(&mut wide, n, n)?)?;
        let x0 = random(cuda, n, 27)?;
        let mut x = cuda.alloc::<f64>(n)?;
        let mut x32 = cuda.alloc::<f32>(n)?;
        let solves = [Op::NoTrans, Op::Trans];
        let t = per_call(&mut || {
            cuda.copy(View::dense(&x0, n, 1)?, ViewMut::dense(&mut x, n, 1)?)?;
            for op in solves {
                let l = View::dense(&wide, n, n)?;
                cuda.trsm(Side::Left, Uplo::Lower, op, Diag::NonUnit, 1.0, l, ViewMut::dense(&mut x, n, 1)?)?;
            }
            Ok(())
        })?;
        out.push(("two FP64 trsv on the widened factor".into(), t));
        let t = per_call(&mut || {
            cuda.cast(View::dense(&x0, n, 1)?, ViewMut::dense(&mut x32, n, 1)?)?;
            for op in solves {
                let l = View::dense(&work, n, n)?;
                cuda.trsm(Side::Left, Uplo::Lower, op, Diag::NonUnit, 1.0, l, ViewMut::dense(&mut x32, n, 1)?)?;
            }
            cuda.cast(View::dense(&x32, n, 1)?, ViewMut::dense(&mut x, n, 1)?)
        })?;
        out.push(("two FP32 trsv on the FP32 factor, the vector cast both ways".into(), t));
        // As refinement takes them: FP64 arithmetic on the FP32 factor, for
        // Cholesky's two triangles and for LU's.
        let triangles = [
            ("Cholesky's", [(Uplo::Lower, Op::NoTrans, Diag::NonUnit), (Uplo::Lower, Op::Trans, Diag::NonUnit)]),
            ("LU's", [(Uplo::Lower, Op::NoTrans, Diag::Unit), (Uplo::Upper, Op::NoTrans, Diag::NonUnit)]),
        ];
        for (whose, pair) in triangles {
            let t = per_call(&mut || {
                cuda.copy(View::dense(&x0, n, 1)?, ViewMut::dense(&mut x, n, 1)?)?;
                for (uplo, op, diag) in pair {
                    cuda.trsv_wide(uplo, op, diag, View::dense(&work, n, n)?, ViewMut::dense(&mut x, n, 1)?)?;
                }
                Ok(())
            })?;
            out.push((format!("two trsv_wide on the FP32 factor, {whose} triangles"), t));
        }
        // Each of those solves alone: forward and backward, transposed and
        // not.
        for (uplo, op, diag) in [
            (Uplo::Lower, Op::NoTrans, Diag::NonUnit),
            (Uplo::Lower, Op::Trans, Diag::NonUnit),
            (Uplo::Upper, Op::NoTrans, Diag::NonUnit),
            (Uplo::Upper, Op::Trans, Diag::NonUnit),
        ] {
            let t = per_call(&mut || {
                cuda.copy(View::dense(&x0, n, 1)?, ViewMut::dense(&mut x, n, 1)?)?;
                cuda.trsv_wide(uplo, op, diag, View::dense(&work, n, n)?, ViewMut::dense(&mut x, n, 1)?)
            })?;
            out.push((format!("one trsv_wide on the FP32 factor, {uplo:?} {op:?}"), t));
        }
        // The rest of a refinement step on the FP64 matrix: the residual
        // b − A·x (a product with one column), and a norm read to the host.
        let wide_a = View::dense(&wide, n, n)?;
        let t = per_call(&mut || {
            cuda.copy(View::dense(&x0, n, 1)?, ViewMut::dense(&mut x, n, 1)?)?;
            cuda.gemm(
                -1.0,
                wide_a,
                Op::NoTrans,
                View::dense(&x0, n, 1)?,
                Op::NoTrans,
                1.0,
                ViewMut::dense(&mut x, n, 1)?,
            )
        })?;
        out.push(("residual b - A x in FP64, a product with one column".into(), t));
        let t = per_call(&mut || cuda.norm(Norm::Max, View::dense(&x, n, 1)?).map(drop))?;
        out.push(("max norm of a vector, read to the host".into(), t));
        // The row interchanges of an LU's solve, on one vector, by pivots
        // as partial pivoting leaves them (row i with one at or below it).
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let pivots: Vec<i32> = (0..n)
            .map(|i| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (i + (state >> 33) as usize % (n - i) + 1) as i32
            })
            .collect();
        let ipiv = cuda.upload(&pivots)?;
        for reverse in [false, true] {
            let t = per_call(&mut || cuda.laswp(ViewMut::dense(&mut x, n, 1)?, View::dense(&ipiv, n, 1)?, 0, reverse))?;
            out.push((format!("laswp of one vector, {n} pivots{}", if reverse { ", reversed" } else { "" }), t));
        }
        for (what, us) in out {
            println!("n {n}: {what}: {us:.1} µs");
            rows.push(json!({"op": format!("mixed-trace {what}"), "n": n, "us_per_call": us}));
        }
    }
    Ok(rows)
}
