//! `--suite wls-trace`: µs per call (device time, queue drained around
//! `reps` calls) of each part of our solve at `m × 2m`, and of the FP64
//! scaled Gram matrix for comparison. The split of the f32 Gram matrix
//! (half precision or TF32, and its depth `kb`) is varied through the
//! device's tuning.

use gpumat::Result;
use gpumat::backend::cuda::Cuda;
use gpumat::backend::tuning::{Split, SplitTuning};
use gpumat::backend::{Backend, Block, BufferMut, Diag, Norm, Op, Side, Tuning, View, ViewMut};
use gpumat::factor::cholesky::{self, CholeskyParams};
use gpumat::layout::Uplo;
use gpumat::solve::wls::Problem;
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::inputs::wls_problem;
use crate::harness::timing::per_call_us;

pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let mut rows = vec![];
    for &m in &settings.sizes {
        let n = 2 * m;
        let (_, (a, d, b)) = wls_problem(cuda, m)?;
        let problem = Problem { a: View::dense(&a, m, n)?, d: View::dense(&d, n, 1)?, b: View::dense(&b, n, 1)? };
        let reps = settings.reps.max(3);
        let mut time = |name: &str, f: &mut dyn FnMut() -> Result<()>| -> Result<()> {
            let us = per_call_us(cuda, reps, f)?;
            println!("wls-trace m = {m}: {name}: {us:.0} µs");
            rows.push(json!({ "op": format!("{name}, {m}×{n}"), "n": m, "us_per_call": us }));
            Ok(())
        };
        let mut g64 = cuda.alloc::<f64>(m * m)?;
        time("FP64 scaled_syrk (lower)", &mut || {
            cuda.scaled_syrk(Uplo::Lower, 1.0, problem.a, problem.d, 0.0, ViewMut::dense(&mut g64, m, m)?)
        })?;
        drop(g64);
        let mut g = cuda.alloc::<f32>(m * m)?;
        let saved = cuda.tuning();
        for (split, kind) in [("f16", Split::Half), ("tf32", Split::Tf32)] {
            for kb in [512, 1024, 2048] {
                cuda.set_tuning(Tuning { split: SplitTuning { kind, kb: Some(kb), ..saved.split }, ..saved });
                time(&format!("scaled_syrk_f32 {split}, kb = {kb}"), &mut || {
                    cuda.scaled_syrk_f32(problem.a, problem.d, ViewMut::dense(&mut g, m, m)?)
                })?;
            }
        }
        cuda.set_tuning(saved);
        let mut l = cuda.alloc::<f32>(m * m)?;
        let mut info = cuda.upload(&[0i32])?;
        time("f32 Cholesky (copy of G + factor)", &mut || {
            cuda.copy(View::dense(&g, m, m)?, ViewMut::dense(&mut l, m, m)?)?;
            let mut status = ViewMut::dense(&mut info, 1, 1)?;
            let lb = BufferMut::new(&mut l);
            cholesky::factor_in_place(
                cuda,
                Uplo::Lower,
                &lb,
                Block::dense(m, m),
                &mut status,
                0,
                CholeskyParams::for_order(m),
            )
        })?;
        let mut v = cuda.upload(&vec![1.0f32; m])?;
        time("two f32 trsv with L", &mut || {
            cholesky::solve_in_place(cuda, Uplo::Lower, View::dense(&l, m, m)?, ViewMut::dense(&mut v, m, 1)?)
        })?;
        // The GMRES preconditioner M⁻¹ = L⁻ᵀL⁻¹: two FP64 substitutions on
        // the f32 factor (as refinement applies it), against two products
        // with L⁻¹ formed once in FP64.
        let mut w = cuda.upload(&vec![1.0f64; m])?;
        time("two trsv_wide (FP64 on the f32 factor)", &mut || {
            cholesky::solve_wide_in_place(cuda, Uplo::Lower, View::dense(&l, m, m)?, ViewMut::dense(&mut w, m, 1)?)
        })?;
        let (mut l64, mut inv) = (cuda.alloc::<f64>(m * m)?, cuda.alloc::<f64>(m * m)?);
        cuda.cast(View::dense(&l, m, m)?, ViewMut::dense(&mut l64, m, m)?)?;
        let ones = cuda.upload(&vec![1.0f64; m])?;
        let diagonal = Block { offset: 0, rows: 1, cols: m, ld: m + 1 };
        time("L⁻¹ in FP64 (trsm on I)", &mut || {
            cuda.fill(ViewMut::dense(&mut inv, m, m)?, 0.0)?;
            cuda.copy(View::dense(&ones, 1, m)?, ViewMut::new(&mut inv, diagonal)?)?;
            let l64 = View::dense(&l64, m, m)?;
            cuda.trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, 1.0, l64, ViewMut::dense(&mut inv, m, m)?)
        })?;
        let mut t = cuda.alloc::<f64>(m)?;
        time("two gemv with L⁻¹ (FP64)", &mut || {
            let li = View::dense(&inv, m, m)?;
            cuda.gemm(1.0, li, Op::NoTrans, View::dense(&w, m, 1)?, Op::NoTrans, 0.0, ViewMut::dense(&mut t, m, 1)?)?;
            cuda.gemm(1.0, li, Op::Trans, View::dense(&t, m, 1)?, Op::NoTrans, 0.0, ViewMut::dense(&mut w, m, 1)?)
        })?;
        drop((l64, inv));
        let (x, mut r) = (cuda.upload(&vec![0.5; m])?, cuda.alloc::<f64>(m)?);
        time("weighted_residual", &mut || {
            let (xv, rv) = (View::dense(&x, m, 1)?, ViewMut::dense(&mut r, m, 1)?);
            cuda.weighted_residual(problem.a, problem.d, problem.b, xv, rv)
        })?;
        time("alloc of m entries", &mut || cuda.alloc::<f64>(m).map(drop))?;
        time("max norm of m entries (read back)", &mut || cuda.norm(Norm::Max, View::dense(&r, m, 1)?).map(drop))?;
    }
    Ok(rows)
}
