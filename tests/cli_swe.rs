//! `gpumat swe`: a run's summary with its verification figures, frames
//! and a GIF, and one-line errors with honest exit codes for bad input.

mod cli_common;

use cli_common::*;

#[test]
fn the_seiche_reports_its_period_within_one_percent() {
    let o = gpumat(&["swe", "--scenario", "seiche", "--split", "cpu", "--nx", "64", "--ny", "4"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for needle in ["steps", "wall time", "cells·steps/s", "relative volume drift", "measured period"] {
        assert!(out.contains(needle), "'{needle}' not in:\n{out}");
    }
    assert!(!out.contains("FAILED"), "{out}");
}

#[test]
fn frames_and_a_gif_are_written() {
    let dir = scratch("swe-frames");
    let gif = dir.join("run.gif");
    let out = dir.join("frames");
    let args = ["swe", "--scenario", "dam-break", "--nx", "50", "--ny", "2", "--split", "cpu", "--frames", "3"];
    let o = gpumat(&[&args[..], &["--out", out.to_str().unwrap(), "--gif", gif.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for k in 0..3 {
        let png = out.join(format!("dam-break-{k:04}.png"));
        let bytes = std::fs::read(&png).unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "{}", png.display());
    }
    assert!(std::fs::read(&gif).unwrap().starts_with(b"GIF89a"));
}

#[test]
fn bad_input_is_one_line_and_an_honest_exit_code() {
    let dir = scratch("swe-bad");
    let base = ["swe", "--scenario", "gaussian", "--nx", "3", "--ny", "2", "--split", "cpu"];
    let run = |extra: &[&str]| gpumat(&[&base[..], extra].concat());
    // Usage: an unknown or unsupported case, bad numbers, frames with nowhere to go.
    assert_one_line_error(&gpumat(&["swe", "--scenario", "lake"]), 64, "unknown scenario");
    assert_one_line_error(&run(&["--dt", "-1"]), 64, "--dt");
    assert_one_line_error(&run(&["--dt", "nan"]), 64, "--dt");
    assert_one_line_error(&run(&["--nx", "0"]), 64, "--nx");
    let huge = ["swe", "--scenario", "seiche", "--nx", "4000000000", "--ny", "4000000000"];
    assert_one_line_error(&gpumat(&huge), 1, "memory");
    assert_one_line_error(&run(&["--frames", "3"]), 64, "--frames needs");
    // Input files: the wrong size, malformed, NaN, dry cells, an unknown format.
    let small = write(&dir, "small.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n1\n1\n1\n");
    assert_one_line_error(&run(&["--bathymetry", &small]), 1, "3×2 cells");
    let bad = write(&dir, "bad.mtx", "%%MatrixMarket matrix array real general\n3 2\n1\n1\nfoo\n1\n1\n1\n");
    assert_one_line_error(&run(&["--bathymetry", &bad]), 1, "bad.mtx");
    let nan = write(&dir, "nan.csv", "a,b\n1,2\nnan,3\n4,5\n");
    assert_one_line_error(&run(&["--bathymetry", &nan]), 1, "nan.csv");
    let dry = write(&dir, "dry.csv", "a,b\n1,2\n-1,3\n4,5\n");
    assert_one_line_error(&run(&["--bathymetry", &dry]), 1, "not below 0");
    // With drying, land (h + z = 0) is allowed, water below the bottom is not.
    let land = write(&dir, "land.csv", "a,b\n20,20\n-1,20\n20,20\n");
    let z = write(&dir, "z0.csv", "a,b\n0,0\n1,0\n0,0\n");
    let o = run(&["--bathymetry", &land, "--init", &z, "--drying", "--t-end", "10"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_one_line_error(&run(&["--bathymetry", &land, "--drying"]), 1, "not below 0");
    let deep = write(&dir, "z.csv", "a,b\n0,0\n0,-30\n0,0\n");
    assert_one_line_error(&run(&["--init", &deep]), 1, "not below 0");
    // The seiche keeps every cell wet.
    let seiche = ["swe", "--scenario", "seiche", "--nx", "3", "--ny", "2", "--split", "cpu"];
    let shallow = write(&dir, "shallow.csv", "a,b\n10,10\n0,10\n10,10\n");
    assert_one_line_error(&gpumat(&[&seiche[..], &["--bathymetry", &shallow]].concat()), 1, "unless drying is on");
    let txt = write(&dir, "h.txt", "1 2 3\n");
    assert_one_line_error(&run(&["--bathymetry", &txt]), 1, "Matrix Market");
    assert_one_line_error(&run(&["--bathymetry", "/nonexistent/h.mtx"]), 1, "h.mtx");
    // A step whose streamlines cross more than a cell: an error, not a wrong answer.
    assert_one_line_error(
        &gpumat(&["swe", "--scenario", "dam-break", "--nx", "200", "--ny", "1", "--split", "cpu", "--dt", "10"]),
        1,
        "Courant",
    );
}
