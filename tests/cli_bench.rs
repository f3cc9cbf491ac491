//! The `gpumat-bench` binary: its own help, every suite's arguments, and a
//! one-line refusal without a GPU; `gpumat` itself has no `bench`.

mod cli_common;

use std::process::{Command, Output};

use cli_common::*;

const SUITES: [&str; 12] = [
    "primitives",
    "cholesky",
    "capacity",
    "trace",
    "qr",
    "lu",
    "lu-trace",
    "ldlt",
    "ldlt-capacity",
    "gram",
    "wls",
    "wls-trace",
];

/// `gpumat-bench` on the CPU, whatever the machine has.
fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpumat-bench"))
        .args(args)
        .env("GPUMAT_DEVICE", "cpu")
        .output()
        .expect("gpumat-bench runs")
}

#[test]
fn help_lists_every_suite() {
    let o = bench(&["--help"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Usage: gpumat-bench"), "{out}");
    for suite in SUITES {
        assert!(out.contains(&format!("- {suite}:")), "{suite} not in: {out}");
    }
}

#[test]
fn every_suite_parses_and_needs_a_gpu() {
    let dir = scratch("bench");
    let out = dir.join("results");
    for suite in SUITES {
        let o = bench(&["--suite", suite, "--sizes", "64,128", "--reps", "1", "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{suite}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{suite}: one line expected, got: {err}");
        assert!(err.starts_with("gpumat-bench: error: "), "{err}");
        assert!(err.contains("need a CUDA device"), "{err}");
    }
    assert!(!out.exists(), "nothing is written without a GPU");
    let o = bench(&["--suite", "frobnicate"]);
    assert!(!o.status.success());
}

#[test]
fn gpumat_has_no_bench() {
    let o = gpumat(&["bench", "--help"]);
    assert_one_line_error(&o, 64, "bench");
}
