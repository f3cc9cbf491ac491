//! `gpumat bench`: gpumat's primitives side by side with the vendor's, on the
//! same inputs in one process, as `BENCHMARKS.md` prescribes: warm, runs
//! interleaved, median of `--reps`; the ratio is vendor time / gpumat time.

use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use crate::bench_cholesky;
use gpumat::api::device::AnyBackend;
use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::{Backend, Norm, Op, View, ViewMut};
use gpumat::layout::Uplo;
use gpumat::{Device, Error, Result};
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde_json::{Value, json};

#[path = "bench_lu.rs"]
mod lu;
// Scaled Gram matrices.
#[path = "bench_gram.rs"]
mod gram;

const TABLE_HEADER: &str =
    "| op | n | precision | gpumat ms | vendor ms | ratio | gpumat TFLOP/s | vendor TFLOP/s | notes |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
";

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Suite {
    /// gemm, syrk, RFP pack/unpack, transfers.
    Primitives,
    /// Cholesky in full and RFP storage against cuSOLVER dpotrf: time,
    /// accuracy and peak memory.
    Cholesky,
    /// The largest order whose FP64 Cholesky fits on the device, in RFP
    /// storage against cuSOLVER dpotrf in full storage (`--sizes` unused).
    Capacity,
    /// Where a Cholesky's time goes: enqueue against wall time, per-call
    /// costs of its primitives, one factorization each in a profiler range.
    Trace,
    /// Householder QR of m × m/8 against cuSOLVER dgeqrf.
    Qr,
    /// LU with partial pivoting against cuSOLVER dgetrf.
    Lu,
    /// Where an LU's time goes: the whole, its panels alone, and the cost
    /// per call of its primitives.
    LuTrace,
    /// A·D²·Aᵀ for A of m × 2m, full and RFP storage, against cuBLAS dgmm
    /// + dsyrk and dgmm + dgemm: time, extra memory, difference.
    Gram,
    /// Mixed-precision weighted least squares (m × 2m, f32 Cholesky refined
    /// to FP64) against cuBLAS dgmm + dsyrk and cuSOLVER dpotrf + dpotrs.
    Wls,
    /// Where a weighted least-squares solve's time goes: the cost per call
    /// of each of its parts at `m × 2m`.
    WlsTrace,
}

#[derive(clap::Args)]
pub struct Args {
    /// What to measure.
    #[arg(long, value_enum, default_value_t = Suite::Primitives)]
    suite: Suite,
    /// Matrix orders to run.
    #[arg(long, value_delimiter = ',', default_values_t = [4096, 8192])]
    pub(crate) sizes: Vec<usize>,
    /// Timed runs of each routine (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub(crate) reps: usize,
    /// Folder for the JSON and markdown results.
    #[arg(long, default_value = "bench/results")]
    out: PathBuf,
}

/// Median wall time in ms of `reps` runs of each of `ours` and `theirs`,
/// interleaved, each followed by a synchronization; one warm-up run each.
pub(crate) fn side_by_side(
    cuda: &Cuda,
    reps: usize,
    mut ours: impl FnMut() -> Result<()>,
    mut theirs: impl FnMut() -> Result<()>,
) -> Result<(f64, f64)> {
    let time = |f: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
        cuda.synchronize()?;
        let t = Instant::now();
        f()?;
        cuda.synchronize()?;
        Ok(t.elapsed().as_secs_f64() * 1e3)
    };
    time(&mut ours)?;
    time(&mut theirs)?;
    let (mut a, mut b) = (vec![], vec![]);
    for _ in 0..reps.max(1) {
        a.push(time(&mut ours)?);
        b.push(time(&mut theirs)?);
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Ok((median(a), median(b)))
}

/// Mean µs per call of `f` over `reps` calls after one warm-up, the queue
/// drained before and after: the cost of a primitive in a trace.
pub(crate) fn per_call_us(cuda: &Cuda, reps: usize, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    Ok(enqueue_and_per_call_us(cuda, reps, f)?.1)
}

/// The host's time to enqueue one call, and the time per call until the
/// device is done, in µs: when the two are close, the host is the limit.
pub(crate) fn enqueue_and_per_call_us(
    cuda: &Cuda,
    reps: usize,
    f: &mut dyn FnMut() -> Result<()>,
) -> Result<(f64, f64)> {
    f()?;
    cuda.synchronize()?;
    let t = Instant::now();
    for _ in 0..reps {
        f()?;
    }
    let enqueue = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
    cuda.synchronize()?;
    Ok((enqueue, t.elapsed().as_secs_f64() * 1e6 / reps as f64))
}

pub(crate) fn random(cuda: &Cuda, len: usize, seed: u64) -> Result<CudaBuffer<f64>> {
    let mut r = StdRng::seed_from_u64(seed);
    let host: Vec<f64> = (0..len).map(|_| r.random_range(-1.0..1.0)).collect();
    cuda.upload(&host)
}

/// ‖X − Y‖_F / ‖Y‖_F on the device (on the `uplo` triangle only if given).
pub(crate) fn rel_diff(
    cuda: &Cuda,
    n: usize,
    x: &CudaBuffer<f64>,
    y: &CudaBuffer<f64>,
    uplo: Option<Uplo>,
) -> Result<f64> {
    let mut d = cuda.alloc::<f64>(n * n)?;
    cuda.geam(
        1.0,
        View::dense(x, n, n)?,
        Op::NoTrans,
        -1.0,
        View::dense(y, n, n)?,
        Op::NoTrans,
        ViewMut::dense(&mut d, n, n)?,
    )?;
    let mut yy = cuda.alloc::<f64>(n * n)?;
    cuda.copy(View::dense(y, n, n)?, ViewMut::dense(&mut yy, n, n)?)?;
    if let Some(u) = uplo {
        cuda.fill_strict_triangle(u.flip(), 0.0, ViewMut::dense(&mut d, n, n)?)?;
        cuda.fill_strict_triangle(u.flip(), 0.0, ViewMut::dense(&mut yy, n, n)?)?;
    }
    Ok(cuda.norm(Norm::Frobenius, View::dense(&d, n, n)?)? / cuda.norm(Norm::Frobenius, View::dense(&yy, n, n)?)?)
}

/// Backward error of a product `C ≈ A·op(B)` by a random probe `x`:
/// ‖C·x − A·(op(B)·x)‖₂ / (‖A‖_F·‖B‖_F·‖x‖₂). `lower`: only C's lower
/// triangle holds the (symmetric) result.
fn product_error(
    cuda: &Cuda,
    n: usize,
    a: &CudaBuffer<f64>,
    b: (&CudaBuffer<f64>, Op),
    c: &CudaBuffer<f64>,
    lower: bool,
) -> Result<f64> {
    let mut full = cuda.alloc::<f64>(n * n)?;
    cuda.copy(View::dense(c, n, n)?, ViewMut::dense(&mut full, n, n)?)?;
    if lower {
        cuda.symmetrize(Uplo::Lower, ViewMut::dense(&mut full, n, n)?)?;
    }
    let x = random(cuda, n, 4)?;
    let (mut cx, mut bx, mut abx) = (cuda.alloc::<f64>(n)?, cuda.alloc::<f64>(n)?, cuda.alloc::<f64>(n)?);
    let (xv, bv) = (View::dense(&x, n, 1)?, View::dense(b.0, n, n)?);
    cuda.gemm(1.0, View::dense(&full, n, n)?, Op::NoTrans, xv, Op::NoTrans, 0.0, ViewMut::dense(&mut cx, n, 1)?)?;
    cuda.gemm(1.0, bv, b.1, xv, Op::NoTrans, 0.0, ViewMut::dense(&mut bx, n, 1)?)?;
    cuda.gemm(
        1.0,
        View::dense(a, n, n)?,
        Op::NoTrans,
        View::dense(&bx, n, 1)?,
        Op::NoTrans,
        0.0,
        ViewMut::dense(&mut abx, n, 1)?,
    )?;
    cuda.axpy(-1.0, View::dense(&abx, n, 1)?, ViewMut::dense(&mut cx, n, 1)?)?;
    let norm = |v: View<'_, Cuda, f64>| cuda.norm(Norm::Frobenius, v);
    Ok(norm(View::dense(&cx, n, 1)?)? / (norm(View::dense(a, n, n)?)? * norm(bv)? * norm(xv)?))
}

fn used_bytes(cuda: &Cuda, baseline_free: usize) -> Result<usize> {
    Ok(baseline_free.saturating_sub(cuda.memory()?.0))
}

pub(crate) fn record(op: &str, n: usize, ours: f64, theirs: f64, flops: Option<f64>, extra: Value) -> Value {
    let mut v = json!({
        "op": op, "n": n, "precision": "f64",
        "gpumat_ms": ours, "vendor_ms": theirs, "ratio": theirs / ours,
    });
    if let Some(f) = flops {
        v["gpumat_tflops"] = json!(f / (ours * 1e9));
        v["vendor_tflops"] = json!(f / (theirs * 1e9));
    }
    if let (Value::Object(v), Value::Object(e)) = (&mut v, extra) {
        v.extend(e);
    }
    v
}

/// `YYYY-MM-DD` (UTC) from the system clock.
fn today() -> String {
    let days = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    format!("{:04}-{m:02}-{d:02}", yoe + era * 400 + i64::from(m <= 2))
}

pub fn run(dev: &Device, args: &Args) -> Result<()> {
    let AnyBackend::Cuda(cuda) = dev.backend() else {
        return Err(Error::InvalidArgument(format!(
            "bench compares with the vendor's GPU routines and needs a CUDA device; this one is {}",
            dev.describe()
        )));
    };
    let rows = match args.suite {
        Suite::Primitives => primitives(cuda, args)?,
        Suite::Cholesky => bench_cholesky::cholesky(cuda, args)?,
        Suite::Capacity => bench_cholesky::capacity(cuda)?,
        Suite::Trace => bench_cholesky::trace(cuda, args)?,
        Suite::Qr => crate::bench_qr::suite(cuda, args)?,
        Suite::Lu => lu::lu_suite(cuda, args)?,
        Suite::LuTrace => lu::trace(cuda, args)?,
        Suite::Gram => gram::suite(cuda, args)?,
        Suite::Wls => crate::bench_wls::suite(cuda, args)?,
        Suite::WlsTrace => crate::bench_wls::trace(cuda, args)?,
    };
    report(cuda, args, &rows)
}

/// gemm, syrk, RFP pack/unpack and transfers against cuBLAS and copies.
fn primitives(cuda: &Cuda, args: &Args) -> Result<Vec<Value>> {
    let mut rows = vec![];
    for &n in &args.sizes {
        let free0 = cuda.memory()?.0;
        let (a, b) = (random(cuda, n * n, 1)?, random(cuda, n * n, 2)?);
        let (mut c_ours, mut c_vendor) = (cuda.alloc::<f64>(n * n)?, cuda.alloc::<f64>(n * n)?);
        let peak = used_bytes(cuda, free0)?;
        let nn = n as f64;

        let (t_ours, t_vendor) = side_by_side(
            cuda,
            args.reps,
            || {
                cuda.gemm(
                    1.0,
                    View::dense(&a, n, n)?,
                    Op::NoTrans,
                    View::dense(&b, n, n)?,
                    Op::NoTrans,
                    0.0,
                    ViewMut::dense(&mut c_ours, n, n)?,
                )
            },
            || vendor::gemm(cuda, n, &a, &b, &mut c_vendor),
        )?;
        let diff = rel_diff(cuda, n, &c_ours, &c_vendor, None)?;
        let errors = json!({
            "gpumat_backward_error": product_error(cuda, n, &a, (&b, Op::NoTrans), &c_ours, false)?,
            "vendor_backward_error": product_error(cuda, n, &a, (&b, Op::NoTrans), &c_vendor, false)?,
            "rel_diff_vs_vendor": diff, "peak_bytes": peak,
        });
        rows.push(record("gemm", n, t_ours, t_vendor, Some(2.0 * nn * nn * nn), errors));

        let (t_ours, t_vendor) = side_by_side(
            cuda,
            args.reps,
            || {
                cuda.syrk(
                    Uplo::Lower,
                    Op::NoTrans,
                    1.0,
                    View::dense(&a, n, n)?,
                    0.0,
                    ViewMut::dense(&mut c_ours, n, n)?,
                )
            },
            || vendor::syrk(cuda, n, &a, &mut c_vendor),
        )?;
        let diff = rel_diff(cuda, n, &c_ours, &c_vendor, Some(Uplo::Lower))?;
        let errors = json!({
            "gpumat_backward_error": product_error(cuda, n, &a, (&a, Op::Trans), &c_ours, true)?,
            "vendor_backward_error": product_error(cuda, n, &a, (&a, Op::Trans), &c_vendor, true)?,
            "rel_diff_vs_vendor": diff, "peak_bytes": peak,
        });
        rows.push(record("syrk", n, t_ours, t_vendor, Some(nn * nn * nn), errors));

        // RFP pack and unpack against a device-to-device copy of the same number of entries.
        let rfp = gpumat::api::packed_layout(n);
        let mut arf = cuda.alloc::<f64>(rfp.len())?;
        let src = random(cuda, rfp.len(), 3)?;
        let mut dst = cuda.alloc::<f64>(rfp.len())?;
        let bytes = 2.0 * 8.0 * rfp.len() as f64;
        let (t_pack, t_copy) = side_by_side(
            cuda,
            args.reps,
            || cuda.full_to_rfp(View::dense(&a, n, n)?, rfp, ViewMut::dense(&mut arf, rfp.len(), 1)?),
            || vendor::copy(cuda, &src, &mut dst),
        )?;
        let (t_unpack, _) = side_by_side(
            cuda,
            args.reps,
            || cuda.rfp_to_full(View::dense(&arf, rfp.len(), 1)?, rfp, ViewMut::dense(&mut c_ours, n, n)?),
            || Ok(()),
        )?;
        // The round trip must reproduce A's lower triangle exactly.
        let exact = rel_diff(cuda, n, &c_ours, &a, Some(Uplo::Lower))?;
        let gbs = |t: f64| bytes / (t * 1e6);
        rows.push(record(
            "rfp_pack",
            n,
            t_pack,
            t_copy,
            None,
            json!({"gpumat_gbs": gbs(t_pack), "copy_gbs": gbs(t_copy), "fraction_of_copy": t_copy / t_pack, "round_trip_diff": exact}),
        ));
        rows.push(record(
            "rfp_unpack",
            n,
            t_unpack,
            t_copy,
            None,
            json!({"gpumat_gbs": gbs(t_unpack), "copy_gbs": gbs(t_copy), "fraction_of_copy": t_copy / t_unpack}),
        ));

        // Host ↔ device: gpumat from ordinary (pageable) host memory against
        // the ceiling, a copy from pinned memory.
        let host: Vec<f64> = (0..n * n).map(|k| k as f64).collect();
        let bytes = 8 * n * n;
        let (mut pin, mut dev_bytes) = (vendor::pinned(cuda, bytes)?, vendor::device_bytes(cuda, bytes)?);
        let mut back = vec![0.0f64; n * n];
        let mut up = None;
        let (t_up, t_pin_up) = side_by_side(
            cuda,
            args.reps,
            || {
                up = Some(cuda.upload(&host)?);
                Ok(())
            },
            || vendor::pinned_upload(cuda, &pin, &mut dev_bytes),
        )?;
        let up = up.ok_or_else(|| Error::Device("upload did not run".into()))?;
        let (t_down, t_pin_down) = side_by_side(
            cuda,
            args.reps,
            || cuda.download(&up, &mut back),
            || vendor::pinned_download(cuda, &dev_bytes, &mut pin),
        )?;
        if back != host {
            return Err(Error::Device(format!("upload/download round trip of {n}×{n} changed the data")));
        }
        let gbs = |t: f64| bytes as f64 / (t * 1e6);
        for (op, t, t_pin) in [("upload", t_up, t_pin_up), ("download", t_down, t_pin_down)] {
            rows.push(record(
                op,
                n,
                t,
                t_pin,
                None,
                json!({"gpumat_gbs": gbs(t), "pinned_gbs": gbs(t_pin), "fraction_of_pinned": t_pin / t}),
            ));
        }
    }

    Ok(rows)
}

/// Prints the table and writes the JSON and markdown files.
fn report(cuda: &Cuda, args: &Args, rows: &[Value]) -> Result<()> {
    let device = cuda.name();
    let suite = format!("{:?}", args.suite).to_lowercase();
    println!("# gpumat bench ({suite}) on {device}");
    print!("{TABLE_HEADER}");
    let mut md = String::new();
    for r in rows {
        let notes = [
            "gpumat_backward_error",
            "vendor_backward_error",
            "fraction_of_copy",
            "fraction_of_pinned",
            "gpumat_gbs",
            "copy_gbs",
            "pinned_gbs",
            "round_trip_diff",
            "rfp_time_over_full",
            "gpumat_bytes",
            "vendor_bytes",
            "rfp_memory_over_full",
            "gpumat_n",
            "vendor_n",
            "capacity_ratio",
            "extra_memory_over_a",
            "max_rel_diff",
            "diff_bound",
            "gemm_route_ratio",
            "other_transr_time_over_full",
            "us_per_call",
            "enqueue_us",
            "enqueue_ms",
            "wall_ms",
        ]
        .iter()
        .filter_map(|k| r.get(*k).and_then(Value::as_f64).map(|v| format!("{k} {v:.3e}")))
        .collect::<Vec<_>>()
        .join(", ");
        // Rows of the trace suites carry no side-by-side time: "—", and
        // their per-call figures in the notes.
        let num = |k: &str| r.get(k).and_then(Value::as_f64).map_or("—".into(), |v| format!("{v:.3}"));
        let tflops = |k: &str| r.get(k).and_then(Value::as_f64).map_or("—".into(), |v| format!("{v:.1}"));
        let line = format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {notes} |",
            r["op"].as_str().unwrap_or(""),
            r["n"],
            r["precision"].as_str().unwrap_or(""),
            num("gpumat_ms"),
            num("vendor_ms"),
            num("ratio"),
            tflops("gpumat_tflops"),
            tflops("vendor_tflops"),
        );
        println!("{line}");
        md.push_str(&line);
        md.push('\n');
    }
    std::fs::create_dir_all(&args.out).map_err(|e| Error::io(&args.out, e))?;
    let slug: String =
        cuda.gpu_name().chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let stem = args.out.join(format!("{}-{suite}-{slug}", today()));
    let json_path = stem.with_extension("json");
    let doc = json!({"device": device, "date": today(), "reps": args.reps, "results": rows});
    std::fs::write(&json_path, serde_json::to_string_pretty(&doc).unwrap_or_default())
        .map_err(|e| Error::io(&json_path, e))?;
    let md_path = stem.with_extension("md");
    let header = format!(
        "# gpumat {suite} on {device}, {}\n\nMedian of {} interleaved runs; ratio = vendor time / gpumat time.\n\n{TABLE_HEADER}",
        today(),
        args.reps
    );
    std::fs::write(&md_path, header + &md).map_err(|e| Error::io(&md_path, e))?;
    println!("wrote {} and {}", json_path.display(), md_path.display());
    Ok(())
}
