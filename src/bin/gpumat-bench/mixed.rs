//! `--suite mixed`: FP64-accurate solves from low-precision factorizations
//! (`Matrix::solve_mixed`) side by side with cuSOLVER's FP64 `dgetrf` +
//! `dgetrs` and `dpotrf` + `dpotrs`, on `randsvd` matrices of condition
//! 1e2 and 1e6 (singular values spread geometrically), with cuSOLVER's own
//! mixed-precision `gesv` (DH, DS, DX, DB) and gpumat's FP64 LU beside
//! them. Every row prints the normwise backward error
//! `‖b − A·x‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞)` of its answer, measured here; ours
//! also its refinement steps, GMRES iterations, fallback and the time
//! split, and the factorization's TFLOP/s against the measured FP16
//! tensor-core rate.

use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::{Backend, Block, BufferMut, Compute, Diag, Norm, Op, Pivoting, Side, View, ViewMut};
use gpumat::factor::cholesky::{self, CholeskyParams};
use gpumat::factor::equilibrate;
use gpumat::factor::lu::{self, LuParams};
use gpumat::layout::Uplo;
use gpumat::{Device, Error, FactorPrecision, LowLu, Matrix, Method, MixedOptions, Refined, Result};
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::inputs::{conditioned, random};
use crate::harness::results::record;
use crate::harness::timing::{interleaved, per_call_us};

/// The conditions measured: inside what FP16 preconditions, and at the top
/// of the range the target names.
const CONDITIONS: [f64; 2] = [1e2, 1e6];

/// `‖b − A·x‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞)`, on the device.
fn backward_error(cuda: &Cuda, n: usize, a: &CudaBuffer<f64>, b: &CudaBuffer<f64>, x: &CudaBuffer<f64>) -> Result<f64> {
    let mut r = cuda.alloc::<f64>(n)?;
    let (av, bv, xv) = (View::dense(a, n, n)?, View::dense(b, n, 1)?, View::dense(x, n, 1)?);
    cuda.copy(bv, ViewMut::dense(&mut r, n, 1)?)?;
    cuda.gemm(-1.0, av, Op::NoTrans, xv, Op::NoTrans, 1.0, ViewMut::dense(&mut r, n, 1)?)?;
    let r = cuda.norm(Norm::Max, View::dense(&r, n, 1)?)?;
    Ok(r / (cuda.norm(Norm::Inf, av)? * cuda.norm(Norm::Max, xv)? + cuda.norm(Norm::Max, bv)?))
}

/// TFLOP/s of `C += A·Bᵀ` at `n × n × k` in `compute` (f32 operands) and of
/// FP64 `dgemm`: the rates the factorizations are measured against.
fn gemm_rates(cuda: &Cuda, reps: usize) -> Result<(f64, f64, f64)> {
    let (n, k) = (8192, 1024);
    let a32: Vec<f32> = crate::harness::inputs::uniform(n * k, 3, -1.0..1.0).into_iter().map(|v| v as f32).collect();
    let a32 = cuda.upload(&a32)?;
    let (mut c32, mut d32) = (cuda.alloc::<f32>(n * n)?, cuda.alloc::<f32>(n * n)?);
    let a64 = random(cuda, n * k, 3)?;
    let mut c64 = cuda.alloc::<f64>(n * n)?;
    let t = interleaved(
        cuda,
        reps,
        &mut [
            &mut || {
                let a = View::dense(&a32, n, k)?;
                cuda.gemm_in(Compute::Fp16, 1.0f32, a, Op::NoTrans, a, Op::Trans, 1.0, ViewMut::dense(&mut c32, n, n)?)
            },
            &mut || {
                let a = View::dense(&a32, n, k)?;
                cuda.gemm_in(
                    Compute::Fp16x3,
                    1.0f32,
                    a,
                    Op::NoTrans,
                    a,
                    Op::Trans,
                    1.0,
                    ViewMut::dense(&mut d32, n, n)?,
                )
            },
            &mut || {
                let a = View::dense(&a64, n, k)?;
                cuda.gemm(1.0, a, Op::NoTrans, a, Op::Trans, 1.0, ViewMut::dense(&mut c64, n, n)?)
            },
        ],
    )?;
    let flops = 2.0 * (n * n * k) as f64;
    Ok((flops / (t[0] * 1e9), flops / (t[1] * 1e9), flops / (t[2] * 1e9)))
}

/// A matrix of the API on `dev` holding a copy of the device buffer.
fn matrix(dev: &Device, cuda: &Cuda, buf: &CudaBuffer<f64>, rows: usize, cols: usize) -> Result<Matrix<f64>> {
    let mut host = vec![0.0; rows * cols];
    cuda.download(buf, &mut host)?;
    dev.from_col_major(rows, cols, &host)
}

/// The answer of `solve_mixed` into a device buffer of `n` entries.
fn answer(cuda: &Cuda, refined: &Refined, n: usize) -> Result<CudaBuffer<f64>> {
    cuda.upload(&refined.x.to_host()?[..n])
}

pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let dev = Device::cuda()?;
    let (fp16_rate, fp16x3_rate, fp64_rate) = gemm_rates(cuda, settings.reps)?;
    let mut rows = vec![];
    for &n in &settings.sizes {
        for cond in CONDITIONS {
            for spd in [false, true] {
                rows.extend(measure(cuda, &dev, settings, n, cond, spd, (fp16_rate, fp16x3_rate, fp64_rate))?);
            }
        }
    }
    Ok(rows)
}

/// One matrix: the vendor's FP64 pipeline, ours in each factor precision,
/// and the other solvers beside them.
fn measure(
    cuda: &Cuda,
    dev: &Device,
    settings: &Settings,
    n: usize,
    cond: f64,
    spd: bool,
    (fp16_rate, fp16x3_rate, fp64_rate): (f64, f64, f64),
) -> Result<Vec<Value>> {
    let a = conditioned(cuda, n, cond, spd, 25 + n as u64)?;
    let x_true = random(cuda, n, 26)?;
    let mut b = cuda.alloc::<f64>(n)?;
    cuda.gemm(
        1.0,
        View::dense(&a, n, n)?,
        Op::NoTrans,
        View::dense(&x_true, n, 1)?,
        Op::NoTrans,
        0.0,
        ViewMut::dense(&mut b, n, 1)?,
    )?;
    let (am, bm) = (matrix(dev, cuda, &a, n, n)?, matrix(dev, cuda, &b, n, 1)?);
    let mut work = cuda.alloc::<f64>(n * n)?;
    let mut xv = cuda.alloc::<f64>(n)?;
    let nn = n as f64;
    let (op, flops, vendor_routine) = if spd {
        ("posv_mixed", nn * nn * nn / 3.0, "dpotrf+dpotrs")
    } else {
        ("gesv_mixed", 2.0 * nn * nn * nn / 3.0, "dgetrf+dgetrs")
    };

    // The vendor's FP64 pipeline.
    let mut lu = vendor::DenseLu::<f64>::new(cuda, n)?;
    let mut chol = vendor::DenseCholesky::<f64>::new(cuda, n)?;
    let mut vendor_run = || -> Result<()> {
        cuda.copy(View::dense(&a, n, n)?, ViewMut::dense(&mut work, n, n)?)?;
        cuda.copy(View::dense(&b, n, 1)?, ViewMut::dense(&mut xv, n, 1)?)?;
        if spd {
            chol.factor(cuda, &mut work)?;
            chol.solve(cuda, &work, &mut xv, 1)
        } else {
            lu.factor(cuda, &mut work)?;
            lu.solve(cuda, &work, &mut xv, 1)
        }
    };
    // Each precision with partial pivoting; a general matrix's also
    // without pivoting after random butterflies.
    let precisions = [FactorPrecision::Fp16, FactorPrecision::Fp16x3, FactorPrecision::Tf32];
    let mut variants: Vec<(FactorPrecision, LowLu)> = precisions.iter().map(|&p| (p, LowLu::Pivoted)).collect();
    if !spd {
        variants.extend([FactorPrecision::Fp16, FactorPrecision::Fp16x3].map(|p| (p, LowLu::Butterfly)));
    }
    let method = if spd { Method::Cholesky } else { Method::Lu };
    let mut last: Vec<Option<Refined>> = variants.iter().map(|_| None).collect();
    let mut times = {
        let mut ours: Vec<Box<dyn FnMut() -> Result<()>>> = vec![];
        for (&(p, lu), slot) in variants.iter().zip(last.iter_mut()) {
            let (am, bm) = (&am, &bm);
            // As the vendor's pipelines, no condition estimate.
            let options = MixedOptions { method, factor: Some(p), lu, estimate_condition: false, ..Default::default() };
            ours.push(Box::new(move || {
                *slot = Some(am.solve_mixed(bm, &options)?);
                Ok(())
            }));
        }
        let mut runs: Vec<&mut dyn FnMut() -> Result<()>> = vec![&mut vendor_run];
        for f in ours.iter_mut() {
            runs.push(f.as_mut());
        }
        interleaved(cuda, settings.reps, &mut runs)?
    };
    let t_vendor = times.remove(0);
    let vendor_status = if spd { chol.info(cuda)? } else { lu.info(cuda)? };
    if vendor_status != 0 {
        return Err(Error::Device(format!("n = {n}: cuSOLVER {vendor_routine} failed (info {vendor_status})")));
    }
    let e_vendor = backward_error(cuda, n, &a, &b, &xv)?;

    // Beside them: cuSOLVER's mixed-precision gesv and gpumat's FP64 LU
    // (general matrices only: cuSOLVER has no mixed-precision posv).
    let mut beside = json!({});
    if !spd {
        use vendor::IrsPrecision as P;
        for p in [P::F16, P::F32, P::Tf32, P::Bf16] {
            let mut irs = match vendor::IrsGesv::new(cuda, p, n, 1) {
                Ok(s) => s,
                Err(e) => {
                    beside[p.routine()] = json!({"error": e.to_string()});
                    continue;
                }
            };
            let mut xi = cuda.alloc::<f64>(n)?;
            let mut bcopy = cuda.alloc::<f64>(n)?;
            let t = interleaved(
                cuda,
                settings.reps,
                &mut [&mut || {
                    cuda.copy(View::dense(&a, n, n)?, ViewMut::dense(&mut work, n, n)?)?;
                    cuda.copy(View::dense(&b, n, 1)?, ViewMut::dense(&mut bcopy, n, 1)?)?;
                    irs.solve(cuda, &mut work, &mut bcopy, &mut xi)
                }],
            )?[0];
            let (iters, info) = (irs.iterations(cuda)?, irs.info(cuda)?);
            let e = backward_error(cuda, n, &a, &b, &xi)?;
            beside[p.routine()] = json!({"ms": t, "iterations": iters, "info": info, "backward_error": e});
        }
        let t = interleaved(cuda, settings.reps, &mut [&mut || am.lu()?.solve(&bm).map(|_| ())])?[0];
        let x = cuda.upload(&am.lu()?.solve(&bm)?.to_host()?)?;
        beside["gpumat_fp64_lu"] = json!({"ms": t, "backward_error": backward_error(cuda, n, &a, &b, &x)?});
    }

    let stages = stages(cuda, settings.reps, &a, n, spd)?;
    eprintln!("{op} n = {n}, condition {cond:e}, each stage alone, µs: {stages}");
    let mut rows = vec![];
    for ((&(p, lu), t), refined) in variants.iter().zip(times).zip(last) {
        let refined = refined.ok_or_else(|| Error::Device("no timed run".into()))?;
        let x = answer(cuda, &refined, n)?;
        let e_ours = backward_error(cuda, n, &a, &b, &x)?;
        let factor_ms = refined.timings.factor.as_secs_f64() * 1e3;
        let rate = match p {
            FactorPrecision::Fp16x3 => fp16x3_rate,
            _ => fp16_rate,
        };
        rows.push(record(
            op,
            n,
            t,
            t_vendor,
            Some(flops),
            json!({
                "condition": cond,
                "factor_precision": p.name(),
                "lu": if spd { None } else { Some(lu.name()) },
                "retried": refined.retried,
                "vendor_routine": vendor_routine,
                "gpumat_backward_error": e_ours, "vendor_backward_error": e_vendor,
                "method": format!("{:?}", refined.method),
                "answer_from": refined.factor.name(),
                "fallback": refined.fallback,
                "refinement": refined.refinement.name(),
                "steps": refined.steps, "gmres_iterations": refined.inner,
                "factor_ms": factor_ms,
                "refine_ms": refined.timings.refine.as_secs_f64() * 1e3,
                "fallback_ms": refined.timings.fallback.as_secs_f64() * 1e3,
                "factor_tflops": flops / (factor_ms * 1e9),
                "tensor_rate_tflops": rate,
                "fraction_of_tensor_rate": flops / (factor_ms * 1e9) / rate,
                "dgemm_tflops": fp64_rate,
                "beside": beside.clone(),
                "stages_us": stages.clone(),
            }),
        ));
    }
    Ok(rows)
}

/// Where a mixed-precision solve of order `n` spends its time: each stage
/// alone, in µs per call, on `a` (SPD for Cholesky when `spd`, else LU):
/// the rounding to FP32, the equilibration, the factorization in FP32 with
/// each precision of its updates, the widening of the factor to FP64, one
/// solve with it by cuBLAS (two triangular solves and a copy of `n`
/// entries), the same solve by `trsv_wide` on the FP32 factor (what
/// refinement runs), one FP64 residual, and `‖A‖∞`. The stages that work on a copy of `A` have
/// the copy's time taken off.
fn stages(cuda: &Cuda, reps: usize, a: &CudaBuffer<f64>, n: usize, spd: bool) -> Result<Value> {
    let av = View::dense(a, n, n)?;
    let (mut low, mut work) = (cuda.alloc::<f32>(n * n)?, cuda.alloc::<f32>(n * n)?);
    let mut wide = cuda.alloc::<f64>(n * n)?;
    let (mut x, mut r) = (cuda.alloc::<f64>(n)?, cuda.alloc::<f64>(n)?);
    let mut ipiv = cuda.alloc::<i32>(n)?;
    let mut info = cuda.upload(&[0i32])?;
    let us = |f: &mut dyn FnMut() -> Result<()>| per_call_us(cuda, reps, f);
    let cast = us(&mut || cuda.cast(av, ViewMut::dense(&mut low, n, n)?))?;
    let copy32 = us(&mut || cuda.copy(View::dense(&low, n, n)?, ViewMut::dense(&mut work, n, n)?))?;
    let copy64 = us(&mut || cuda.copy(av, ViewMut::dense(&mut wide, n, n)?))?;
    let equilibrate = us(&mut || {
        cuda.copy(View::dense(&low, n, n)?, ViewMut::dense(&mut work, n, n)?)?;
        equilibrate::when_needed(cuda, ViewMut::dense(&mut work, n, n)?, spd).map(|_| ())
    })? - copy32;
    let mut factor = |update: Compute, pivoting: Pivoting, info: &mut CudaBuffer<i32>| -> Result<f64> {
        let block = Block::dense(n, n);
        let t = us(&mut || {
            cuda.copy(View::dense(&low, n, n)?, ViewMut::dense(&mut work, n, n)?)?;
            let (buffer, status) = (BufferMut::new(&mut work), &mut ViewMut::dense(info, 1, 1)?);
            if spd {
                let params = CholeskyParams::for_tensor_updates(n, update);
                cholesky::factor_in_place(cuda, Uplo::Lower, &buffer, block, status, 0, params)
            } else {
                let mut params = LuParams { update, ..LuParams::for_order(n) };
                if pivoting != Pivoting::Partial {
                    params.leaf_size = 64;
                }
                let piv = BufferMut::new(&mut ipiv);
                lu::factor_in_place(cuda, &buffer, block, &piv, Block::dense(n, 1), status, pivoting, params)
            }
        })?;
        Ok(t - copy32)
    };
    let mut factors = json!({});
    for p in [FactorPrecision::Fp16, FactorPrecision::Fp16x3, FactorPrecision::Tf32] {
        let update = p.compute().ok_or_else(|| Error::Device(format!("{} has no update precision", p.name())))?;
        factors[p.name()] = factor(update, Pivoting::Partial, &mut info)?.into();
    }
    factors["f32"] = factor(Compute::Native, Pivoting::Partial, &mut info)?.into();
    // The LU without interchanges, timed on the same matrix (the time, not
    // the factor, whose pivots may fail): what the pivot search costs.
    let mut unpivoted = json!({});
    if !spd {
        let mut scratch = cuda.upload(&[0i32])?;
        for (name, update) in [("fp16", Compute::Fp16), ("fp16x3", Compute::Fp16x3), ("f32", Compute::Native)] {
            unpivoted[name] = factor(update, Pivoting::None { tol: 0.0 }, &mut scratch)?.into();
        }
    }
    // A pivot that failed (a matrix too ill-conditioned for FP32) is
    // reported, not an error: the solves' own rows say what was done.
    let mut status = [0i32];
    cuda.download(&info, &mut status)?;
    let widen = us(&mut || cuda.cast(View::dense(&work, n, n)?, ViewMut::dense(&mut wide, n, n)?))?;
    // Two triangular solves on the widened factor, as each refinement step
    // takes (LU's interchanges left out).
    let (first, second) = if spd {
        ((Uplo::Lower, Op::NoTrans, Diag::NonUnit), (Uplo::Lower, Op::Trans, Diag::NonUnit))
    } else {
        ((Uplo::Lower, Op::NoTrans, Diag::Unit), (Uplo::Upper, Op::NoTrans, Diag::NonUnit))
    };
    let x0 = random(cuda, n, 27)?;
    let solve = us(&mut || {
        // From the same vector each time, which repeated solves would
        // otherwise take towards overflow on ill-conditioned matrices.
        cuda.copy(View::dense(&x0, n, 1)?, ViewMut::dense(&mut x, n, 1)?)?;
        let l = View::dense(&wide, n, n)?;
        for (uplo, op, diag) in [first, second] {
            cuda.trsm(Side::Left, uplo, op, diag, 1.0, l, ViewMut::dense(&mut x, n, 1)?)?;
        }
        Ok(())
    })?;
    // The same two solves as refinement takes them: FP64 arithmetic on the
    // FP32 factor, whose entries are widened as they are read.
    let solve_wide = us(&mut || {
        cuda.copy(View::dense(&x0, n, 1)?, ViewMut::dense(&mut x, n, 1)?)?;
        let l = View::dense(&work, n, n)?;
        for (uplo, op, diag) in [first, second] {
            cuda.trsv_wide(uplo, op, diag, l, ViewMut::dense(&mut x, n, 1)?)?;
        }
        Ok(())
    })?;
    let residual = us(&mut || {
        cuda.gemm(-1.0, av, Op::NoTrans, View::dense(&x, n, 1)?, Op::NoTrans, 1.0, ViewMut::dense(&mut r, n, 1)?)
    })?;
    let norm = us(&mut || cuda.norm(Norm::Inf, av).map(|_| ()))?;
    Ok(json!({
        "cast": cast, "equilibrate": equilibrate, "factor": factors, "factor_unpivoted": unpivoted, "widen": widen,
        "solve": solve, "solve_wide": solve_wide, "residual": residual, "norm_inf": norm, "copy_f32": copy32, "copy_f64": copy64,
        "factor_info": status[0],
    }))
}
