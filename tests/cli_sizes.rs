//! Sizes beyond the machine, from files and from flags: each is refused
//! before memory is taken, with one line and exit code 1 (a file or a size
//! the memory cannot hold) or 64 (a flag value whose size overflows), never
//! a panic (101) or an abort (134).
//!
//! The commands run under an address-space limit (`ulimit -v`), which the
//! available memory respects, so that the outcome is the same on every
//! machine and a failing check cannot exhaust the one running the tests.

mod cli_common;

use std::process::{Command, Output};

use cli_common::*;

/// KiB of address space the commands may take: 3 GiB.
const LIMIT_KIB: usize = 3 << 20;

fn limited(args: &[&str]) -> Output {
    let script = format!("ulimit -v {LIMIT_KIB} && exec \"$0\" \"$@\"");
    Command::new("sh")
        .args(["-c", &script, env!("CARGO_BIN_EXE_gpumat"), "--device", "cpu"])
        .args(args)
        .output()
        .expect("sh runs gpumat")
}

fn coordinate(n: u64) -> String {
    format!("%%MatrixMarket matrix coordinate real general\n{n} {n} 1\n1 1 1\n")
}

#[test]
fn a_66_byte_file_declaring_20000_squared_is_refused_by_every_reader() {
    let dir = scratch("sizes-20000");
    let big = write(&dir, "big.mtx", &coordinate(20_000));
    assert_eq!(std::fs::metadata(&big).unwrap().len(), 66);
    let b = write(&dir, "b.mtx", "%%MatrixMarket matrix array real general\n20000 1\n");
    for args in [
        vec!["det", big.as_str()],
        vec!["inv", big.as_str()],
        vec!["gemm", big.as_str(), big.as_str()],
        vec!["solve", big.as_str(), b.as_str()],
        vec!["lstsq", big.as_str(), b.as_str()],
    ] {
        let o = limited(&args);
        assert_one_line_error(&o, 1, "big.mtx:2: out of host memory: the 20000×20000 matrix needs 3200000000 bytes");
        assert!(stderr(&o).contains("are available"), "{}", stderr(&o));
    }
}

#[test]
fn larger_declared_sizes_are_refused_in_both_formats() {
    let dir = scratch("sizes-larger");
    let array = |n: u64| format!("%%MatrixMarket matrix array real general\n{n} {n}\n1\n");
    for (name, text, needle) in [
        ("c46000.mtx", coordinate(46_000), "needs 16928000000 bytes"),
        ("a46000.mtx", array(46_000), "needs 16928000000 bytes"),
        ("c1e9.mtx", coordinate(1_000_000_000), "too large for dense storage"),
        ("a1e9.mtx", array(1_000_000_000), "too large for dense storage"),
        ("overflow.mtx", coordinate(u64::MAX), "overflows"),
    ] {
        let path = write(&dir, name, &text);
        assert_one_line_error(&limited(&["det", &path]), 1, needle);
    }
    // An array file with fewer entries than it declares, within the memory:
    // the entries are counted before the dense buffer is taken.
    let short = write(&dir, "short.mtx", "%%MatrixMarket matrix array real general\n15000 15000\n1\n2\n");
    assert_one_line_error(&limited(&["det", &short]), 1, "declares 225000000 entries, found 2");
}

#[test]
fn generated_problems_beyond_the_memory_are_errors() {
    let o = limited(&["wls-table", "--sizes", "100000"]);
    assert_one_line_error(&o, 1, "out of host memory: the 100000×200000 matrix A");
    let o = limited(&["wls-table", "--sizes", "8,100000"]);
    assert_one_line_error(&o, 1, "100000×200000");
    assert!(stdout(&o).is_empty(), "the sizes are checked before the first is solved: {}", stdout(&o));
    let o = limited(&["demo", "--m", "100000", "--n", "200000"]);
    assert_one_line_error(&o, 1, "out of host memory: the demo on a 100000×200000 matrix A");
    let o = limited(&["demo", "--m", "1000000000", "--n", "1000000000"]);
    assert_one_line_error(&o, 1, "out of host memory");
}

#[test]
fn sizes_that_overflow_are_usage_errors() {
    let dir = scratch("sizes-flags");
    let data = write(&dir, "d.csv", "x,y\n0,1\n1,2\n2,0\n");
    for (args, needle) in [
        (vec!["wls-table", "--sizes", "4294967296"], "more bytes than an address space"),
        (vec!["wls-table", "--sizes", "18446744073709551615"], "more bytes than an address space"),
        (vec!["demo", "--m", "4294967296"], "more bytes than an address space"),
        (vec!["demo", "--n", "18446744073709551615"], "more bytes than an address space"),
        (vec!["fit", &data, "--x", "x", "--y", "y", "--basis", "fourier:9223372036854775808"], "too many harmonics"),
        (vec!["fit", &data, "--x", "x", "--y", "y", "--basis", "fourier:18446744073709551615"], "too many harmonics"),
        (vec!["fit", &data, "--x", "x", "--y", "y", "--basis", "fourier:100000000"], "out of host memory"),
    ] {
        assert_one_line_error(&limited(&args), 64, needle);
    }
}
