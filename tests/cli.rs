//! The `gpumat` binary: outputs, exit codes and one-line errors.

mod cli_common;

use std::process::Command;

use cli_common::*;

const A: &str = "%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n";
const B: &str = "%%MatrixMarket matrix coordinate real general\n3 1 2\n1 1 1.5\n3 1 -2\n";

#[test]
fn gemm_writes_the_product_to_stdout_and_to_a_file() {
    let dir = scratch("gemm");
    let (a, b) = (write(&dir, "a.mtx", A), write(&dir, "b.mtx", B));
    // A = [1 3 5; 2 4 6], B = [1.5; 0; -2] → C = [1.5 - 10; 3 - 12] = [-8.5; -9].
    let o = gpumat(&["--device", "cpu", "gemm", &a, &b]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("%%MatrixMarket matrix array real general"), "{out}");
    let numbers: Vec<&str> = out.lines().filter(|l| !l.starts_with('%')).collect();
    assert_eq!(numbers, ["2 1", "-8.5", "-9.0"]);
    assert!(stderr(&o).contains("gemm: 2×3 · 3×1"), "{}", stderr(&o));

    let c = dir.join("c.mtx");
    let o = gpumat(&["gemm", &a, &b, "-o", c.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&c).unwrap(), out);
}

#[test]
fn gemm_refuses_bad_input_with_one_line() {
    let dir = scratch("bad");
    let a = write(&dir, "a.mtx", A);
    let o = gpumat(&["gemm", &a, &a]);
    assert_one_line_error(&o, 1, "A is 2×3 but B is 2×3");

    let lying = write(&dir, "lying.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n");
    let o = gpumat(&["gemm", &lying, &a]);
    assert_one_line_error(&o, 1, "lying.mtx:");

    let nan = write(&dir, "nan.mtx", "%%MatrixMarket matrix array real general\n1 1\nNaN\n");
    let o = gpumat(&["gemm", &nan, &nan]);
    assert_one_line_error(&o, 1, "nan.mtx:3");

    let empty = write(&dir, "empty.mtx", "%%MatrixMarket matrix array real general\n0 3\n");
    let o = gpumat(&["gemm", &empty, &a]);
    assert_one_line_error(&o, 1, "is empty");

    let o = gpumat(&["gemm", "/nonexistent/a.mtx", &a]);
    assert_one_line_error(&o, 1, "/nonexistent/a.mtx");
}

#[test]
fn usage_errors_are_one_line_with_code_64() {
    let o = gpumat(&["gemm"]);
    assert_one_line_error(&o, 64, "required");
    let o = gpumat(&["frobnicate"]);
    assert_one_line_error(&o, 64, "frobnicate");
    let o = gpumat(&["--device", "tpu", "info"]);
    assert_one_line_error(&o, 64, "unknown device 'tpu'");
}

#[test]
fn every_command_has_help() {
    for cmd in
        [["--help"].as_slice(), &["info", "--help"], &["gemm", "--help"], &["demo", "--help"], &["solve", "--help"]]
    {
        let o = gpumat(cmd);
        assert!(o.status.success(), "{cmd:?}");
        assert!(stdout(&o).contains("Usage: gpumat"), "{cmd:?}: {}", stdout(&o));
    }
}

#[test]
fn info_names_the_device_and_why() {
    let o = Command::new(env!("CARGO_BIN_EXE_gpumat")).arg("info").env_remove("GPUMAT_DEVICE").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("device:"), "{out}");
    assert!(out.contains("CPU threads:"), "{out}");
    let o = Command::new(env!("CARGO_BIN_EXE_gpumat")).args(["info"]).env("GPUMAT_DEVICE", "cpu").output().unwrap();
    assert!(stdout(&o).contains("device:      CPU"), "{}", stdout(&o));
}

#[test]
fn demo_checks_itself() {
    let o = gpumat(&["--device", "cpu", "demo", "--m", "40", "--n", "70"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("all checks passed"), "{out}");
    assert!(out.contains("820 entries instead of 1600"), "RFP stores n(n+1)/2: {out}");
    let o = gpumat(&["demo", "--m", "0"]);
    assert_one_line_error(&o, 64, "--m <M>': must be at least 1");
}

const SPD: &str = "%%MatrixMarket matrix coordinate real symmetric\n3 3 5\n1 1 4\n2 1 1\n2 2 3\n3 2 1\n3 3 2\n";
const RHS: &str = "%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n";

#[test]
fn solve_with_cholesky_in_both_storages_and_precisions() {
    let dir = scratch("solve");
    let (a, b) = (write(&dir, "a.mtx", SPD), write(&dir, "b.mtx", RHS));
    // A = [4 1 0; 1 3 1; 0 1 2], b = (1, 2, 3): x = (2/9, 1/9, 13/9).
    let exact = [2.0 / 9.0, 1.0 / 9.0, 13.0 / 9.0];
    for (storage, precision, tol) in
        [("full", "f64", 1e-15), ("rfp", "f64", 1e-15), ("full", "f32", 1e-6), ("rfp", "f32", 1e-6)]
    {
        let o = gpumat(&["solve", &a, &b, "--storage", storage, "--precision", precision]);
        assert!(o.status.success(), "{storage} {precision}: {}", stderr(&o));
        let x: Vec<f64> = stdout(&o).lines().skip(2).map(|l| l.parse().unwrap()).collect();
        assert_eq!(x.len(), 3);
        for (got, want) in x.iter().zip(exact) {
            assert!((got - want).abs() <= tol, "{storage} {precision}: {got} vs {want}");
        }
        let err = stderr(&o);
        assert!(err.contains(&format!("storage {storage}, precision {precision}")), "{err}");
        assert!(err.contains("backward error"), "{err}");
    }
}

#[test]
fn solve_refuses_what_cholesky_cannot_take() {
    let dir = scratch("solve-bad");
    let b2 = write(&dir, "b2.mtx", "%%MatrixMarket matrix array real general\n2 1\n1\n1\n");
    let indefinite = write(&dir, "ind.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n2\n1\n");
    assert_one_line_error(&gpumat(&["solve", &indefinite, &b2, "--method", "cholesky"]), 2, "pivot in column 2");
    let nonsym = write(&dir, "ns.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n1\n");
    assert_one_line_error(&gpumat(&["solve", &nonsym, &b2, "--method", "cholesky"]), 1, "not symmetric");
    let a = write(&dir, "a.mtx", SPD);
    assert_one_line_error(&gpumat(&["solve", &a, &b2]), 1, "B has 2 rows");
    assert_one_line_error(&gpumat(&["solve", &a, &b2, "--storage", "packed"]), 64, "packed");
}

#[test]
fn an_invalid_tuning_variable_is_a_usage_error_naming_it() {
    let o = Command::new(env!("CARGO_BIN_EXE_gpumat"))
        .args(["--device", "cpu", "info"])
        .env("GPUMAT_LU_PANEL", "fastest")
        .output()
        .unwrap();
    assert_one_line_error(&o, 64, "GPUMAT_LU_PANEL=\"fastest\": expected cluster, reg, ll, grid or block");
    let o = Command::new(env!("CARGO_BIN_EXE_gpumat"))
        .args(["--device", "cpu", "info"])
        .env("GPUMAT_SPLIT", "tf32")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Tf32"), "{}", stdout(&o));
}
