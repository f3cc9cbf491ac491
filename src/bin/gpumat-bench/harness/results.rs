//! The record of one measurement and the writer of a suite's results: a
//! table on stdout, and JSON and markdown under the output folder, named by
//! date, suite and device so that the history stays in the repository.

use std::path::Path;
use std::time::SystemTime;

use gpumat::{Error, Result};
use serde_json::{Value, json};

const TABLE_HEADER: &str =
    "| op | n | precision | gpumat ms | vendor ms | ratio | gpumat TFLOP/s | vendor TFLOP/s | notes |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
";

/// The figures of a record shown in the table's notes, when it has them.
const NOTES: &[&str] = &[
    "gpumat_backward_error",
    "vendor_backward_error",
    "gpumat_solve_backward_error",
    "vendor_solve_backward_error",
    "fraction_of_copy",
    "fraction_of_pinned",
    "gpumat_fraction_of_gemm",
    "vendor_fraction_of_gemm",
    "gemm_tflops",
    "gpumat_gbs",
    "copy_gbs",
    "pinned_gbs",
    "round_trip_diff",
    "rfp_time_over_full",
    "unpivoted_time_over_cholesky",
    "cholesky_ms",
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
    "gpu_cells_steps_per_s",
    "cpu_cells_steps_per_s",
    "split_cells_steps_per_s",
    "fused_fraction_of_copy",
    "condition",
    "steps",
    "gmres_iterations",
    "factor_ms",
    "refine_ms",
    "fallback_ms",
    "iterations",
    "ms_per_iteration",
    "objective_rel_error",
    "highs_simplex_ms",
    "highs_ipm_ms",
    "highs_pdlp_ms",
    "fraction_of_dgemm",
    "block_size",
    "gpumat_orthogonality",
    "vendor_orthogonality",
    "gpumat_normal_residual",
    "vendor_normal_residual",
    "panel_us",
    "leaf_us",
    "skinny_gemm_us",
    "gpus",
    "efficiency",
    "speedup",
    "free_bytes",
];

/// The words of a record shown in the table's notes, when it has them: why
/// a size was skipped, which backward error the row reports.
const WORD_NOTES: &[&str] =
    &["skipped", "backward_error_kind", "factor_precision", "lu", "answer_from", "variant", "highs_best", "storage"];

/// `base` with the fields of `extra` added (an `extra` field of the same
/// name replaces the base's).
pub fn merge(mut base: Value, extra: Value) -> Value {
    if let (Value::Object(b), Value::Object(e)) = (&mut base, extra) {
        b.extend(e);
    }
    base
}

/// One measurement of `op` at order `n` in FP64 unless `extra` says
/// otherwise: gpumat's and the vendor's median times in ms, the ratio
/// vendor / gpumat, TFLOP/s of each when the standard count `flops` is
/// given, and whatever else `extra` holds.
pub fn record(op: &str, n: usize, ours: f64, theirs: f64, flops: Option<f64>, extra: Value) -> Value {
    let mut v = json!({
        "op": op, "n": n, "precision": "f64",
        "gpumat_ms": ours, "vendor_ms": theirs, "ratio": theirs / ours,
    });
    if let Some(f) = flops {
        v["gpumat_tflops"] = json!(f / (ours * 1e9));
        v["vendor_tflops"] = json!(f / (theirs * 1e9));
    }
    merge(v, extra)
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

/// A record as a row of the markdown table.
fn table_row(r: &Value) -> String {
    let words = WORD_NOTES.iter().filter_map(|k| r.get(*k).and_then(Value::as_str).map(|v| format!("{k}: {v}")));
    let figures = NOTES.iter().filter_map(|k| r.get(*k).and_then(Value::as_f64).map(|v| format!("{k} {v:.3e}")));
    let notes = words.chain(figures).collect::<Vec<_>>().join(", ");
    // Rows of the trace suites carry no side-by-side time: "—", and their
    // per-call figures in the notes.
    let num = |k: &str| r.get(k).and_then(Value::as_f64).map_or("—".into(), |v| format!("{v:.3}"));
    let tflops = |k: &str| r.get(k).and_then(Value::as_f64).map_or("—".into(), |v| format!("{v:.1}"));
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {notes} |",
        r["op"].as_str().unwrap_or(""),
        r["n"],
        r["precision"].as_str().unwrap_or(""),
        num("gpumat_ms"),
        num("vendor_ms"),
        num("ratio"),
        tflops("gpumat_tflops"),
        tflops("vendor_tflops"),
    )
}

/// Prints the table of `suite`'s records and writes them as
/// `DATE-SUITE-DEVICE.json` and `.md` under `out`: `device` describes the
/// device, `short` names it in the files' names.
pub fn write(device: &str, short: &str, suite: &str, reps: usize, out: &Path, rows: &[Value]) -> Result<()> {
    println!("# gpumat-bench ({suite}) on {device}");
    print!("{TABLE_HEADER}");
    let mut md = String::new();
    for r in rows {
        let line = table_row(r);
        println!("{line}");
        md.push_str(&line);
        md.push('\n');
    }
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let slug: String =
        short.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let stem = out.join(format!("{}-{suite}-{slug}", today()));
    let json_path = stem.with_extension("json");
    let doc = json!({"device": device, "date": today(), "reps": reps, "results": rows});
    std::fs::write(&json_path, serde_json::to_string_pretty(&doc).unwrap_or_default())
        .map_err(|e| Error::io(&json_path, e))?;
    let md_path = stem.with_extension("md");
    let runs = if reps > 1 { format!("Median of {reps} interleaved runs") } else { "One run each".into() };
    let header = format!(
        "# gpumat {suite} on {device}, {}\n\n{runs}; ratio = vendor time / gpumat time.\n\n{TABLE_HEADER}",
        today(),
    );
    std::fs::write(&md_path, header + &md).map_err(|e| Error::io(&md_path, e))?;
    println!("wrote {} and {}", json_path.display(), md_path.display());
    Ok(())
}
