//! The shallow-water model (`gpumat::swe`, Casulli 1990) at `n × n` cells
//! for each of `--sizes` (the targets name 1024, 4096 and 8192): cells·steps
//! a second with every pass on the GPU, on the CPU's threads, and with the
//! fields on the host and each half step's tridiagonal systems split
//! between the two (the coprocessor of Brodtkorb 2007). FP64, the
//! Gaussian case (a hump around an island, with friction and drying).
//!
//! The GPU's rate is set against the memory bandwidth a step needs: the
//! passes as written touch 44 arrays of the grid's size a step (two
//! convections reading 2 and writing 1, two assemblies reading 5 and
//! writing 5, two tridiagonal solves reading 4 and writing 1, two velocity
//! updates reading 3 and writing 1), 352 bytes a cell; a step that fused
//! everything would still read `h`, `z`, `u`, `v` and write `z`, `u`, `v`,
//! 56 bytes a cell. The bandwidth is measured here, as a device copy of
//! 1 GiB (read and write counted).

use std::time::Instant;

use gpumat::apps::swe::scenario::{Kind, Scenario};
use gpumat::apps::swe::{Execution, Model};
use gpumat::backend::{Backend, Cuda, View, ViewMut};
use gpumat::batch::Coprocessor;
use gpumat::{Device, Result};
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::results::record;

/// Bytes of the grid's arrays a step's passes touch, per cell, and the
/// least any FP64 step can.
const PASS_BYTES: f64 = 44.0 * 8.0;
const FUSED_BYTES: f64 = 7.0 * 8.0;

pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let dev = Device::cuda()?;
    let bandwidth = copy_bandwidth(cuda)?;
    println!("device copy: {:.0} GB/s", bandwidth / 1e9);
    let mut rows = vec![];
    for &n in &settings.sizes {
        let s = Scenario::new(Kind::Gaussian, Some(n), Some(n))?;
        let cells = (n * n) as f64;
        // Steps per timed run: about 1e9 cells·steps on the GPU, fewer elsewhere.
        let gpu_steps = ((2e9 / cells) as u64).clamp(5, 200);
        let slow_steps = ((2e8 / cells) as u64).clamp(2, 20);
        let model = |execution| Model::new(s.grid, s.params, &s.fields, execution);
        let gpu_ms = per_step(model(Execution::Device(dev.clone()))?, gpu_steps, settings.reps)?;
        let cpu_ms = per_step(model(Execution::Device(Device::cpu()))?, slow_steps, settings.reps.min(3))?;
        let split_ms =
            per_step(model(Execution::Split(Coprocessor::new(dev.clone())))?, slow_steps, settings.reps.min(3))?;
        let rate = |ms: f64| cells / (ms * 1e-3);
        let fraction = rate(gpu_ms) * PASS_BYTES / bandwidth;
        println!(
            "swe {n}×{n}: GPU {:.3e}, CPU {:.3e} ({} threads), split {:.3e} cells·steps/s; GPU {:.1}× the CPU, \
             {:.0} % of the bandwidth its passes need ({:.0} % of a fused step's)",
            rate(gpu_ms),
            rate(cpu_ms),
            Device::cpu().cpu_threads(),
            rate(split_ms),
            cpu_ms / gpu_ms,
            100.0 * fraction,
            100.0 * rate(gpu_ms) * FUSED_BYTES / bandwidth,
        );
        let extra = json!({
            "vendor_routine": format!("gpumat on the CPU ({} threads)", Device::cpu().cpu_threads()),
            "cells": n * n, "gpu_cells_steps_per_s": rate(gpu_ms), "cpu_cells_steps_per_s": rate(cpu_ms),
            "split_cells_steps_per_s": rate(split_ms), "split_ms": split_ms, "copy_gbs": bandwidth / 1e9,
            "fraction_of_copy": fraction, "fused_fraction_of_copy": rate(gpu_ms) * FUSED_BYTES / bandwidth,
        });
        rows.push(record("swe_step", n, gpu_ms, cpu_ms, None, extra));
    }
    Ok(rows)
}

/// Median milliseconds a step of `model` over `reps` runs of `steps`
/// steps, after four warm steps (past the recording of a step as one
/// graph); each run ends with the device idle.
fn per_step(mut model: Model, steps: u64, reps: usize) -> Result<f64> {
    model.advance(4)?;
    model.device().synchronize()?;
    let mut times = Vec::new();
    for _ in 0..reps.max(1) {
        let start = Instant::now();
        model.advance(steps)?;
        model.device().synchronize()?;
        times.push(start.elapsed().as_secs_f64() * 1e3 / steps as f64);
    }
    model.check()?;
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// Bytes a second of a device copy of 1 GiB into memory allocated
/// beforehand (an allocation would be timed with it), reads and writes
/// counted.
fn copy_bandwidth(cuda: &Cuda) -> Result<f64> {
    let n = 1 << 27;
    let (mut a, mut b) = (cuda.alloc::<f64>(n)?, cuda.alloc::<f64>(n)?);
    cuda.fill(ViewMut::dense(&mut a, n, 1)?, 0.0)?;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        cuda.synchronize()?;
        let start = Instant::now();
        cuda.copy(View::dense(&a, n, 1)?, ViewMut::dense(&mut b, n, 1)?)?;
        cuda.synchronize()?;
        best = best.min(start.elapsed().as_secs_f64());
    }
    Ok(2.0 * (n * 8) as f64 / best)
}
