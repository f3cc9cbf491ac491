//! `gpumat demo`: the core path of gpumat on random data, timed and checked
//! against an FP64 reference computed independently by faer.

use std::time::Instant;

use faer::Mat;
use gpumat::backend::cpu::{check_fits, matrix_bytes};
use gpumat::{Device, Error, Result, Sym};

use crate::stdout::outln;
use crate::values::positive_count;
use rand::{Rng, SeedableRng, rngs::StdRng};

#[derive(clap::Args)]
pub struct Args {
    /// Rows of A (the order of A·D²·Aᵀ).
    #[arg(long, default_value_t = 1000, value_parser = order)]
    m: usize,
    /// Columns of A (observations).
    #[arg(long, default_value_t = 2000, value_parser = order)]
    n: usize,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Copies of A (m × n) and of G (m × m) that the demo holds at once at
/// most, counting the device's: the host data, the products, the RFP round
/// trip and faer's reference.
const COPIES_OF_A: usize = 3;
const COPIES_OF_G: usize = 5;

/// A dimension whose square matrix of `f64` has a size in bytes: a larger
/// one is a usage error, before any memory is taken.
fn order(s: &str) -> std::result::Result<usize, String> {
    let k = positive_count(s)?;
    match matrix_bytes(k, k, size_of::<f64>()) {
        Some(_) => Ok(k),
        None => Err(format!("{k}: a {k}×{k} matrix has more bytes than an address space")),
    }
}

/// Bytes the demo holds at once for `m × n`, or `None` on overflow.
fn footprint(m: usize, n: usize) -> Option<usize> {
    let a = matrix_bytes(m, n, size_of::<f64>())?.checked_mul(COPIES_OF_A)?;
    let g = matrix_bytes(m, m, size_of::<f64>())?.checked_mul(COPIES_OF_G)?;
    a.checked_add(g)
}

fn timed<R>(f: impl FnOnce() -> Result<R>) -> Result<(R, f64)> {
    let start = Instant::now();
    let r = f()?;
    Ok((r, start.elapsed().as_secs_f64() * 1e3))
}

pub fn run(dev: &Device, args: &Args) -> Result<()> {
    let (m, n) = (args.m, args.n);
    check_fits(|| format!("the demo on a {m}×{n} matrix A (A three times and A·D²·Aᵀ five)"), footprint(m, n))?;
    let mut rng = StdRng::seed_from_u64(args.seed);
    let a_host = Mat::<f64>::from_fn(m, n, |_, _| rng.random());
    let d_host: Vec<f64> = (0..n).map(|_| rng.random()).collect();

    outln!("gpumat demo on {}", dev.short_name())?;
    // First use compiles the GPU kernels and creates library handles: keep
    // that out of the timings below.
    let ((), t_warm) = timed(|| {
        let w = dev.from_col_major(2, 3, &[1.0f64; 6])?;
        Sym::gram(&w.scale_cols(&dev.from_col_major(3, 1, &[1.0; 3])?)?)?.to_rfp()?.to_dense()?.to_host()?;
        Ok(())
    })?;
    outln!("warm-up (kernels compiled or read from cache): {t_warm:.1} ms")?;
    outln!("A: {m}×{n} and d: {n} entries, uniform in [0, 1) (seed {})", args.seed)?;

    let a = dev.upload(a_host.as_ref())?;
    let d = dev.from_col_major(n, 1, &d_host)?;
    let (ad, t_scale) = timed(|| {
        let ad = a.scale_cols(&d)?;
        dev.synchronize()?;
        Ok(ad)
    })?;
    outln!("  A·D, columns scaled by d                 {t_scale:9.2} ms")?;

    let (g, t_syrk) = timed(|| {
        let g = Sym::gram(&ad)?;
        dev.synchronize()?;
        Ok(g)
    })?;
    let gflops = m as f64 * m as f64 * n as f64 / (t_syrk * 1e6);
    outln!("  G = (AD)(AD)ᵀ, lower triangle only       {t_syrk:9.2} ms  ({gflops:.1} GFLOP/s)")?;

    let (packed, t_pack) = timed(|| g.to_rfp())?;
    outln!(
        "  G packed into RFP storage                {t_pack:9.2} ms  ({} entries instead of {}: {:.1}%)",
        packed.stored_len(),
        g.stored_len(),
        100.0 * packed.stored_len() as f64 / g.stored_len() as f64
    )?;

    let g_dense = packed.to_dense()?.to_faer()?;
    let g_full = g.to_dense()?.to_faer()?;
    let differ = (0..m).flat_map(|j| (0..m).map(move |i| (i, j))).filter(|&(i, j)| g_dense[(i, j)] != g_full[(i, j)]);
    let (count, first) = differ.fold((0, None), |(c, f), ij| (c + 1, f.or(Some(ij))));
    if let Some((i, j)) = first {
        return Err(Error::InvalidArgument(format!(
            "RFP round trip changed {count} entries of G, first ({}, {}): {:e} instead of {:e} (a bug: please report)",
            i + 1,
            j + 1,
            g_dense[(i, j)],
            g_full[(i, j)]
        )));
    }
    outln!("  unpacked from RFP: identical to the full-storage G")?;

    // Independent reference: faer's own FP64 product of the host data.
    let ad_ref = Mat::<f64>::from_fn(m, n, |i, j| a_host[(i, j)] * d_host[j]);
    let g_ref = &ad_ref * ad_ref.transpose();
    let err = (&g_full - &g_ref).norm_l2() / g_ref.norm_l2();
    let bound = 2.0 * n as f64 * f64::EPSILON / 2.0;
    outln!("  ‖G − G_ref‖_F / ‖G_ref‖_F = {err:.2e}  (bound 2·n·u = {bound:.1e}, G_ref by faer)")?;
    if err.is_nan() || err > bound {
        return Err(Error::InvalidArgument(format!("demo check failed: error {err:.2e} above {bound:.1e}")));
    }
    outln!("demo: all checks passed")?;
    Ok(())
}
