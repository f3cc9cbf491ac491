//! The exit-code table of `gpumat --help`, path by path: 0 success (a closed
//! pipe included), 64 usage, 1 bad input / I/O / device, 2 numerical
//! failure; every error one line, never a panic's 101 or an abort's 134.

mod cli_common;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use cli_common::*;

const SPD: &str = "%%MatrixMarket matrix array real general\n2 2\n4\n1\n1\n3\n";
const B2: &str = "%%MatrixMarket matrix array real general\n2 1\n1\n2\n";
const INDEFINITE: &str = "%%MatrixMarket matrix array real general\n2 2\n1\n2\n2\n1\n";
const NONSYMMETRIC: &str = "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n1\n";
const ZERO_PIVOT: &str = "%%MatrixMarket matrix array real general\n2 2\n1\n1\n1\n1\n";
const RANK_DEFICIENT: &str = "%%MatrixMarket matrix array real general\n3 2\n1\n2\n3\n1\n2\n3\n";
const B3: &str = "%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n";
const HUGE: &str = "%%MatrixMarket matrix array real general\n1 1\n1e300\n";
const MALFORMED: &str = "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n";
const CSV: &str = "t,v\n0,1\n1,2.1\n2,2.9\n3,4.2\n";
/// x² overflows.
const FAR_CSV: &str = "t,v\n1e200,1\n2e200,2\n3e200,3\n4e200,4\n";

/// Arguments, environment, the expected code, a piece of the message.
type Case<'a> = (Vec<String>, &'a [(&'a str, &'a str)], i32, &'a str);

/// Runs `gpumat args` with `env` set.
fn run_env(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpumat"));
    c.args(args).env("GPUMAT_DEVICE", "cpu");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("gpumat runs")
}

#[test]
fn every_error_path_has_its_code() {
    let dir = scratch("exit-codes");
    let w = |name: &str, text: &str| write(&dir, name, text);
    let (spd, b2, b3) = (w("spd.mtx", SPD), w("b2.mtx", B2), w("b3.mtx", B3));
    let (indef, nonsym) = (w("indef.mtx", INDEFINITE), w("nonsym.mtx", NONSYMMETRIC));
    let (zero, rank, huge) = (w("zero.mtx", ZERO_PIVOT), w("rank.mtx", RANK_DEFICIENT), w("huge.mtx", HUGE));
    let (bad, csv, far) = (w("bad.mtx", MALFORMED), w("d.csv", CSV), w("far.csv", FAR_CSV));
    let folder = dir.to_str().unwrap().to_string();
    let nowhere = dir.join("no/such/folder/x.mtx").to_str().unwrap().to_string();
    let nowhere_png = dir.join("no/such/folder/x.png").to_str().unwrap().to_string();
    let jpg = dir.join("fit.jpg").to_str().unwrap().to_string();
    let fit = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["fit", &csv, "--x", "t", "--y", "v"].map(String::from).to_vec();
        v.extend(extra.iter().map(|s| s.to_string()));
        if !extra.contains(&"--basis") {
            v.extend(["--basis", "poly:1"].map(String::from));
        }
        v
    };
    let s = |a: &[&str]| -> Vec<String> { a.iter().map(|s| s.to_string()).collect() };

    let table: Vec<Case> = vec![
        // 64: usage.
        (s(&[]), &[], 64, "subcommand"),
        (s(&["frobnicate"]), &[], 64, "frobnicate"),
        (s(&["gemm"]), &[], 64, "required"),
        (s(&["demo", "--m", "0"]), &[], 64, "--m"),
        (s(&["demo", "--n", "-3"]), &[], 64, "--n"),
        (s(&["demo", "--m", "x"]), &[], 64, "--m"),
        (s(&["wls-table", "--sizes", "16,0"]), &[], 64, "at least 1"),
        (s(&["wls-table", "--sizes", "-5"]), &[], 64, "--sizes"),
        (s(&["wls-table", "--tolerance", "-1"]), &[], 64, "positive"),
        (s(&["wls-table", "--tolerance", "nan"]), &[], 64, "positive"),
        (s(&["wls-table", "--tolerance", "inf"]), &[], 64, "positive"),
        (s(&["solve", &spd, &b2, "--method", "lu", "--storage", "rfp"]), &[], 64, "--method lu"),
        (s(&["solve", &spd, &b2, "--storage", "packed"]), &[], 64, "packed"),
        (s(&["solve", &spd, &b2, "--pivot", "none"]), &[], 64, "--pivot"),
        (s(&["inertia", &spd, "--shift", "nan"]), &[], 64, "--shift"),
        (fit(&["--basis", "cubic:3"]), &[], 64, "malformed basis"),
        (fit(&["--plot", &jpg]), &[], 64, "one of: .png"),
        (fit(&["--plot", &folder]), &[], 64, "is a directory"),
        (s(&["--device", "tpu", "info"]), &[], 64, "unknown device 'tpu'"),
        (s(&["info"]), &[("GPUMAT_DEVICE", "tpu")], 64, "GPUMAT_DEVICE"),
        (s(&["info"]), &[("GPUMAT_LU_PANEL", "fastest")], 64, "GPUMAT_LU_PANEL"),
        // 1: bad input files, I/O.
        (s(&["gemm", "/nonexistent/a.mtx", &spd]), &[], 1, "/nonexistent/a.mtx"),
        (s(&["gemm", &bad, &spd]), &[], 1, "bad.mtx:"),
        (s(&["gemm", &rank, &rank]), &[], 1, "dimension mismatch"),
        (s(&["solve", &nonsym, &b2, "--method", "cholesky"]), &[], 1, "not symmetric"),
        (s(&["solve", &nonsym, &b2, "--method", "ldlt"]), &[], 1, "not symmetric"),
        (s(&["inertia", &nonsym]), &[], 1, "not symmetric"),
        (s(&["solve", &spd, &b3]), &[], 1, "B has 3 rows"),
        (s(&["solve", &spd, &b2, "-o", &nowhere]), &[], 1, "x.mtx"),
        (s(&["gemm", &spd, &spd, "-o", &folder]), &[], 1, &folder),
        (s(&["lstsq", &rank, &b2]), &[], 1, "b has 2 entries"),
        (s(&["fit", &csv, "--x", "time", "--y", "v", "--basis", "poly:1"]), &[], 1, "no column named 'time'"),
        (fit(&["--plot", &nowhere_png]), &[], 1, "x.png"),
        // 2: numerical failures.
        (s(&["solve", &indef, &b2, "--method", "cholesky"]), &[], 2, "not positive definite"),
        (s(&["solve", &zero, &b2]), &[], 2, "singular"),
        (s(&["solve", &zero, &b2, "--method", "ldlt", "--pivot", "none"]), &[], 2, "zero pivot in column 2"),
        (s(&["lstsq", &rank, &b3]), &[], 2, "rank deficient"),
        (s(&["gemm", &huge, &huge]), &[], 2, "overflow"),
        (s(&["fit", &far, "--x", "t", "--y", "v", "--basis", "poly:2"]), &[], 2, "overflow"),
    ];
    for (args, env, code, needle) in &table {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run_env(&args, env);
        assert_eq!(o.status.code(), Some(*code), "{args:?} {env:?}: {}", stderr(&o));
        assert_one_line_error(&o, *code, needle);
    }
}

#[test]
fn help_and_version_succeed_and_state_the_table() {
    let o = gpumat(&["--help"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let help = stdout(&o);
    for line in ["0   success", "1   bad input", "2   numerical failure", "64  usage"] {
        assert!(help.contains(line), "'{line}' not in --help: {help}");
    }
    assert!(gpumat(&["--version"]).status.success());
}

/// Every command that writes to stdout, on tiny inputs.
fn writers(dir: &std::path::Path) -> Vec<Vec<String>> {
    let (spd, b2, b3) = (write(dir, "spd.mtx", SPD), write(dir, "b2.mtx", B2), write(dir, "b3.mtx", B3));
    let csv = write(dir, "d.csv", CSV);
    let tall = write(dir, "tall.mtx", "%%MatrixMarket matrix array real general\n3 2\n1\n1\n1\n0\n1\n2\n");
    [
        vec!["info"],
        vec!["demo", "--m", "8", "--n", "16"],
        vec!["gemm", &spd, &spd],
        vec!["solve", &spd, &b2],
        vec!["lstsq", &tall, &b3],
        vec!["fit", &csv, "--x", "t", "--y", "v", "--basis", "poly:1"],
        vec!["wls-table", "--sizes", "8"],
        vec!["rref", &spd],
        vec!["inv", &spd],
        vec!["det", &spd],
        vec!["inertia", &spd],
    ]
    .iter()
    .map(|v| v.iter().map(|s| s.to_string()).collect())
    .collect()
}

#[test]
fn a_full_disk_is_exit_code_1_naming_stdout() {
    let dir = scratch("dev-full");
    for args in writers(&dir) {
        let full = File::options().write(true).open("/dev/full").expect("/dev/full exists");
        let o = Command::new(env!("CARGO_BIN_EXE_gpumat"))
            .args(&args)
            .env("GPUMAT_DEVICE", "cpu")
            .stdout(Stdio::from(full))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert_one_line_error(&o, 1, "stdout: No space left on device");
    }
}

#[test]
fn a_closed_pipe_ends_quietly_with_0() {
    let dir = scratch("closed-pipe");
    // Far more output than a pipe buffers, so that the writer meets the
    // closed end.
    let n = 400;
    let mut a = format!("%%MatrixMarket matrix array real general\n{n} {n}\n");
    (0..n * n).for_each(|k| a += &format!("{}\n", (k % 7) as f64 + 0.5));
    let a = write(&dir, "a.mtx", &a);
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpumat"))
        .args(["gemm", &a, &a])
        .env("GPUMAT_DEVICE", "cpu")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.starts_with("%%MatrixMarket"), "{first}");
    // The reader is dropped here: the pipe is closed.
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "a closed pipe is not reported");
}

#[test]
fn summaries_name_the_device_briefly_and_verbose_says_why() {
    let dir = scratch("brief-device");
    let spd = write(&dir, "spd.mtx", SPD);
    let o = run_env(&["gemm", &spd, &spd], &[("GPUMAT_DEVICE", "auto")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("no GPU used"), "{err}");
    let o = run_env(&["-v", "gemm", &spd, &spd], &[("GPUMAT_DEVICE", "auto")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("gpumat: device "), "{}", stderr(&o));
}
