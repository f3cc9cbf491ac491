//! `gpumat demo`: the core path of gpumat on random data, timed and checked
//! against a reference that shares no code with gpumat's backends: a plain
//! triple loop summed in double-double.

use std::time::Instant;

use faer::Mat;
use gpumat::backend::cpu::{check_fits, matrix_bytes};
use gpumat::scalar::dd::{two_prod, two_sum};
use gpumat::{Device, Error, Result, Sym};

use crate::stdout::outln;
use crate::values::positive_count;
use rand::{Rng, SeedableRng, rngs::StdRng};
use rayon::prelude::*;

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

    let check = check_rows(&a_host, &d_host, &g_full, args.seed);
    let rows = &check.rows;
    let which = if rows.len() == m {
        format!("all {m} rows of G ({} entries)", m * m)
    } else {
        format!(
            "{} of {m} rows of G (the first, the last and {} at random; {} entries)",
            rows.len(),
            rows.len() - 2,
            rows.len() * m
        )
    };
    outln!("  checked {which} against a double-double triple loop (no faer):")?;
    outln!(
        "    max |Δᵢⱼ| / (|A|·D²·|A|ᵀ)ᵢⱼ = {:.2e}  (bound γ_(n+3) = (n+3)·u/(1 − (n+3)·u) = {:.2e})",
        check.worst,
        check.gamma
    )?;
    if let Some((i, j, delta, bound)) = check.failure {
        return Err(Error::InvalidArgument(format!(
            "demo check failed: |Δ| = {delta:.2e} at ({}, {}) above γ_(n+3)·(|A|·D²·|A|ᵀ)ᵢⱼ = {bound:.2e}",
            i + 1,
            j + 1
        )));
    }
    outln!("demo: all checks passed")?;
    Ok(())
}

/// Rows of G checked entry by entry when checking all m would take more
/// than [`CHECK_ALL_WORK`] products (m·n per row): the first, the last and
/// a random sample.
const CHECKED_ROWS: usize = 32;
const CHECK_ALL_WORK: usize = 100_000_000;

/// An entry (i, j) over the bound, with |Δᵢⱼ| and its bound.
type Failure = (usize, usize, f64, f64);

struct Check {
    rows: Vec<usize>,
    /// γ_(n+3): the entrywise bound relative to (|A|·D²·|A|ᵀ)ᵢⱼ.
    gamma: f64,
    /// The largest |Δᵢⱼ| / (|A|·D²·|A|ᵀ)ᵢⱼ seen.
    worst: f64,
    /// The first entry over the bound.
    failure: Option<Failure>,
}

/// Checks whole rows of `g` (lower triangle stored, read symmetrically)
/// against `Σₖ aᵢₖ·dₖ²·aⱼₖ` computed here without faer or gpumat's kernels:
/// each `aᵢₖ·dₖ` exact as a two-product, their product to about 2⁻¹⁰⁴, and
/// the sum compensated (Ogita–Rump–Oishi Sum2), so the reference is as
/// accurate as if computed in twice the working precision. The entrywise
/// bound for G formed in FP64 in any order is γ_(n+2)·(|A|·D²·|A|ᵀ)ᵢⱼ (two
/// roundings for the scaled factors and their product, n − 1 in the sum);
/// γ_(n+3) leaves one more rounding for the reference.
fn check_rows(a: &Mat<f64>, d: &[f64], g: &Mat<f64>, seed: u64) -> Check {
    let (m, n) = (a.nrows(), a.ncols());
    let rows: Vec<usize> = if m <= CHECKED_ROWS || m.saturating_mul(m).saturating_mul(n) <= CHECK_ALL_WORK {
        (0..m).collect()
    } else {
        let mut rng = StdRng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
        let mut rows = vec![0, m - 1];
        while rows.len() < CHECKED_ROWS {
            let i = rng.random_range(1..m - 1);
            if !rows.contains(&i) {
                rows.push(i);
            }
        }
        rows.sort_unstable();
        rows
    };
    let u = f64::EPSILON / 2.0;
    let k = (n + 3) as f64;
    let gamma = k * u / (1.0 - k * u);
    let per_row: Vec<(f64, Option<Failure>)> = rows
        .par_iter()
        .map(|&i| {
            // Σ and Σ|·| for every j at once, column by column of A
            // (contiguous). A term is p + c with p = fl(xh·yh) and c its
            // error plus the cross terms; |p + c| = |p| + sign(p)·c since
            // |c| ≪ |p| (and c = 0 when p = 0).
            let (mut hi, mut lo) = (vec![0.0; m], vec![0.0; m]);
            let (mut abs_hi, mut abs_lo) = (vec![0.0; m], vec![0.0; m]);
            for (kk, &dk) in d.iter().enumerate() {
                let col = a.col_as_slice(kk);
                let (xh, xl) = two_prod(col[i], dk);
                for j in 0..m {
                    let (yh, yl) = two_prod(col[j], dk);
                    let (p, e) = two_prod(xh, yh);
                    let c = e + (xh * yl + xl * yh);
                    let (s, f) = two_sum(hi[j], p);
                    hi[j] = s;
                    lo[j] += f + c;
                    let (s, f) = two_sum(abs_hi[j], p.abs());
                    abs_hi[j] = s;
                    abs_lo[j] += f + if p < 0.0 { -c } else { c };
                }
            }
            let mut worst = 0.0f64;
            let mut failure = None;
            for j in 0..m {
                let got = if j <= i { g[(i, j)] } else { g[(j, i)] };
                // The difference in double-double, rounded once.
                let (s, f) = two_sum(got, -hi[j]);
                let delta = (s + (f - lo[j])).abs();
                let scale = abs_hi[j] + abs_lo[j];
                let bound = gamma * scale;
                // A NaN Δ fails too.
                if delta.is_nan() || delta > bound {
                    failure = failure.or(Some((i, j, delta, bound)));
                }
                let ratio = if delta == 0.0 { 0.0 } else { delta / scale };
                worst = nan_max(worst, ratio);
            }
            (worst, failure)
        })
        .collect();
    let worst = per_row.iter().map(|r| r.0).fold(0.0, nan_max);
    let failure = per_row.into_iter().find_map(|r| r.1);
    Check { rows, gamma, worst, failure }
}

/// The larger of two, NaN if either is: a NaN entry must show in the report.
fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) }
}
