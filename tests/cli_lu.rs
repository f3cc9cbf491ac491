//! The LU and Gauss-Jordan commands: `solve` on general matrices, `rref`,
//! `inv`, `det`; outputs against hand-computed exact answers, exit codes and
//! one-line errors.

mod cli_common;

use cli_common::*;

/// The numbers of a Matrix Market array written by gpumat (after the size line).
fn entries(text: &str) -> Vec<f64> {
    text.lines().filter(|l| !l.starts_with('%')).skip(1).map(|l| l.trim().parse().unwrap()).collect()
}

/// A = [2 1 1; 4 -6 0; -2 7 2] (column-major), non-symmetric, det = −16.
const A: &str = "%%MatrixMarket matrix array real general\n3 3\n2\n4\n-2\n1\n-6\n7\n1\n0\n2\n";
const B: &str = "%%MatrixMarket matrix array real general\n3 1\n5\n-2\n9\n";
/// Singular: the third column is the sum of the first two.
const SINGULAR: &str = "%%MatrixMarket matrix array real general\n3 3\n1\n2\n3\n4\n5\n6\n5\n7\n9\n";

#[test]
fn solve_uses_lu_for_general_matrices() {
    let dir = scratch("solve");
    let (a, b) = (write(&dir, "a.mtx", A), write(&dir, "b.mtx", B));
    // x = (1, 1, 2).
    for extra in [&[][..], &["--method", "lu"], &["--method", "auto", "--precision", "f32"]] {
        let mut args = vec!["solve", &a, &b];
        args.extend_from_slice(extra);
        let o = gpumat(&args);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let x = entries(&stdout(&o));
        let tol = if extra.contains(&"f32") { 1e-5 } else { 1e-14 };
        for (got, want) in x.iter().zip([1.0, 1.0, 2.0]) {
            assert!((got - want).abs() <= tol, "{extra:?}: {x:?}");
        }
        let err = stderr(&o);
        assert!(err.contains("method lu") && err.contains("condition estimate"), "{err}");
    }
    // A symmetric indefinite matrix: auto falls back from Cholesky to
    // pivoted LDLᵀ (tests/cli_ldlt.rs), not to LU.
    let ind = write(&dir, "ind.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n2\n1\n");
    let b2 = write(&dir, "b2.mtx", "%%MatrixMarket matrix array real general\n2 1\n3\n3\n");
    let o = gpumat(&["solve", &ind, &b2]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(entries(&stdout(&o)), vec![1.0, 1.0]);
    assert!(stderr(&o).contains("method ldlt, pivot bk"), "{}", stderr(&o));
    assert_one_line_error(
        &gpumat(&["solve", &a, &b, "--method", "lu", "--storage", "rfp"]),
        64,
        "--method lu needs --storage full",
    );
}

#[test]
fn exactly_singular_input_is_exit_code_2_naming_the_pivot() {
    let dir = scratch("singular");
    let (s, b) = (write(&dir, "s.mtx", SINGULAR), write(&dir, "b.mtx", B));
    assert_one_line_error(&gpumat(&["solve", &s, &b]), 2, "pivot 3");
    assert_one_line_error(&gpumat(&["inv", &s]), 2, "pivot 3");
    assert_one_line_error(&gpumat(&["det", &s]), 2, "pivot 3");
    // Allowed, det of an exactly singular matrix is 0.
    let o = gpumat(&["det", &s, "--allow-ill-conditioned"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "0");
}

#[test]
fn det_and_inverse() {
    let dir = scratch("det");
    let a = write(&dir, "a.mtx", A);
    let o = gpumat(&["det", &a]);
    assert!(o.status.success(), "{}", stderr(&o));
    let d: f64 = stdout(&o).trim().parse().unwrap();
    assert!((d + 16.0).abs() <= 1e-13, "{d}");
    let out = dir.0.join("inv.mtx");
    let o = gpumat(&["inv", &a, "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got = entries(&std::fs::read_to_string(&out).unwrap());
    // A·A⁻¹ = I to rounding.
    let a_m = [2.0, 4.0, -2.0, 1.0, -6.0, 7.0, 1.0, 0.0, 2.0];
    for i in 0..3 {
        for j in 0..3 {
            let v: f64 = (0..3).map(|k| a_m[i + 3 * k] * got[k + 3 * j]).sum();
            assert!((v - f64::from(u8::from(i == j))).abs() <= 1e-14, "(A·A⁻¹)({i},{j}) = {v}");
        }
    }
    let rect = write(&dir, "r.mtx", "%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n");
    assert_one_line_error(&gpumat(&["inv", &rect]), 1, "square");
    assert_one_line_error(&gpumat(&["det", &rect]), 1, "square");
}

#[test]
fn rref_prints_the_form_the_rank_and_the_pivots() {
    let dir = scratch("rref");
    // [1 2 3; 2 4 7] (2×3): rank 2, pivots 1 and 3, R = [1 2 0; 0 0 1].
    let a = write(&dir, "a.mtx", "%%MatrixMarket matrix array real general\n2 3\n1\n2\n2\n4\n3\n7\n");
    let o = gpumat(&["rref", &a]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("%%MatrixMarket matrix array real general"), "{out}");
    assert!(out.contains("% rank 2") && out.contains("% pivot columns 1 3"), "{out}");
    let r = entries(&out);
    let want = [1.0, 0.0, 2.0, 0.0, 0.0, 1.0];
    assert!(r.iter().zip(want).all(|(x, y)| (x - y).abs() <= 1e-15), "{r:?}");
    assert!(stderr(&o).contains("rank 2"), "{}", stderr(&o));
    // Rank deficient square: the singular matrix has rank 2 and a zero last row.
    let s = write(&dir, "s.mtx", SINGULAR);
    let o = gpumat(&["rref", &s]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("% rank 2"), "{}", stdout(&o));
    let r = entries(&stdout(&o));
    assert!([r[2], r[5], r[8]].iter().all(|&v| v == 0.0), "zero last row: {r:?}");
    assert_one_line_error(&gpumat(&["rref", &a, "--tol=-1"]), 64, "--tol");
    assert_one_line_error(&gpumat(&["rref", &a, "--tol", "nan"]), 64, "--tol");
}

#[test]
fn the_new_commands_have_help() {
    for cmd in ["rref", "inv", "det"] {
        let o = gpumat(&[cmd, "--help"]);
        assert!(o.status.success(), "{cmd}");
        assert!(stdout(&o).contains("Usage: gpumat"), "{cmd}: {}", stdout(&o));
    }
    assert!(stdout(&gpumat(&["solve", "--help"])).contains("lu"), "solve --help names the LU method");
}

/// A 2 × 2 Matrix Market array from its column-major entries.
fn two_by_two(entries: [&str; 4]) -> String {
    format!("%%MatrixMarket matrix array real general\n2 2\n{}\n", entries.join("\n"))
}

#[test]
fn matrices_at_the_ends_of_the_range_give_right_numbers_or_exit_2() {
    let dir = scratch("range");
    // diag(1e308)·[0.6 −0.8; 0.8 0.6] and its 1e−308 twin: κ₂ = 1.
    let big = write(&dir, "big.mtx", &two_by_two(["6e307", "8e307", "-8e307", "6e307"]));
    let big2 = write(&dir, "big2.mtx", &two_by_two(["1.02e308", "1.36e308", "-1.36e308", "1.02e308"]));
    let small = write(&dir, "small.mtx", &two_by_two(["6e-300", "8e-300", "-8e-300", "6e-300"]));
    // Inverse: Qᵀ/s, to 10·n·u relative plus the subnormal spacing.
    for (path, s) in [(&big, 1e308), (&big2, 1.7e308), (&small, 1e-299)] {
        let o = gpumat(&["inv", path]);
        assert!(o.status.success(), "{}", stderr(&o));
        let got = entries(&stdout(&o));
        let want = [0.6 / s, -0.8 / s, 0.8 / s, 0.6 / s];
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= 20.0 * f64::EPSILON * w.abs() + 2.0 * 5e-324, "inv at {s:e}: {got:?}");
        }
        let o = gpumat(&["rref", path]);
        assert!(o.status.success() && stdout(&o).contains("% rank 2"), "rref at {s:e}: {}", stdout(&o));
        assert_eq!(entries(&stdout(&o)), vec![1.0, 0.0, 0.0, 1.0]);
    }
    // det = s²: beyond f64 for s = 1e308 and 1e−300, printed as mantissa × 2^exponent.
    let o = gpumat(&["det", &big]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let (mantissa, exponent) = out.trim().split_once(" × 2^").expect("mantissa × 2^exponent");
    let (mantissa, exponent): (f64, i64) = (mantissa.parse().unwrap(), exponent.parse().unwrap());
    // 1e616 = 2^2046.31…: mantissa 2^0.31… = 1.2377…
    assert_eq!(exponent, 2046, "{out}");
    // log₂(10^616) in f64 is good to 616·log₂10·u ≈ 5e−13.
    assert!((mantissa - (616.0 * 10f64.log2()).fract().exp2()).abs() <= 1e-11, "{out}");
    assert!(stderr(&o).contains("overflows"), "{}", stderr(&o));
    let o = gpumat(&["det", &small]);
    assert!(o.status.success() && stdout(&o).contains("× 2^-"), "{}", stdout(&o));
    assert!(stderr(&o).contains("underflows"), "{}", stderr(&o));
    // A solution beyond the range is an error, not NaN written as X.
    let tiny = write(&dir, "tiny.mtx", &two_by_two(["3e-300", "0", "0", "1e-300"]));
    let b = write(&dir, "b.mtx", "%%MatrixMarket matrix array real general\n2 1\n1e308\n1e308\n");
    let o = gpumat(&["solve", &tiny, &b]);
    assert_one_line_error(&o, 2, "X is not representable");
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
}

#[test]
fn det_prints_the_shortest_round_trip_decimal() {
    let dir = scratch("shortest");
    // [2 0; 0 37]: 74 exactly; A of det_and_inverse: −16 to rounding.
    let d = write(&dir, "d.mtx", &two_by_two(["2", "0", "0", "37"]));
    assert_eq!(stdout(&gpumat(&["det", &d])).trim(), "74");
    let a = write(&dir, "a.mtx", A);
    let text = stdout(&gpumat(&["det", &a]));
    assert!(!text.contains('e'), "positional: {text}");
    let v: f64 = text.trim().parse().unwrap();
    assert!((v + 16.0).abs() <= 1e-13, "{text}");
    // Large determinants in scientific notation that reads back.
    let e = write(&dir, "e.mtx", &two_by_two(["1e150", "0", "0", "1e150"]));
    let text = stdout(&gpumat(&["det", &e]));
    assert_eq!(text.trim().parse::<f64>().unwrap(), 1e150 * 1e150, "{text}");
    assert!(text.trim().len() <= 22, "{text}");
}
