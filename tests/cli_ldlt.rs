//! Symmetric indefinite matrices at the command line: `solve --method ldlt`
//! (Bunch–Kaufman or unpivoted, full or RFP storage), the fallback of
//! `--method auto` from Cholesky to pivoted LDLᵀ and the line that says so,
//! `inertia` with and without `--shift`, and the refusals with their exit
//! codes (64 usage, 1 input, 2 numerical).
//!
//! Bounds: a solution within `10·n·u·κ₁` of the exact one (normwise
//! relative, 1-norm; `κ₁` from faer's inverse), backward errors (of the
//! solve and of the factorization) `≤ 10·n·u` — Higham 2002, §11.1, with
//! the growth of these small matrices taken as ≤ 10. Inertias are exact:
//! the matrices are built with exactly known eigenvalues.

mod cli_common;

use cli_common::*;
use faer::Mat;
use faer::linalg::solvers::DenseSolveCore;

const U: f64 = f64::EPSILON / 2.0;

/// The numbers of a Matrix Market array written by gpumat (after the size line).
fn entries(text: &str) -> Vec<f64> {
    text.lines().filter(|l| !l.starts_with('%')).skip(1).map(|l| l.trim().parse().unwrap()).collect()
}

/// A column-major `rows × cols` array as a Matrix Market `array general` file.
fn array(rows: usize, cols: usize, data: &[f64]) -> String {
    let mut s = format!("%%MatrixMarket matrix array real general\n{rows} {cols}\n");
    data.iter().for_each(|v| s += &format!("{v:e}\n"));
    s
}

/// The lower triangle of the symmetric `n × n` array as a Matrix Market
/// `coordinate symmetric` file.
fn symmetric_file(n: usize, a: &[f64]) -> String {
    let lower: Vec<(usize, usize)> = (0..n).flat_map(|j| (j..n).map(move |i| (i, j))).collect();
    let mut s = format!("%%MatrixMarket matrix coordinate real symmetric\n{n} {n} {}\n", lower.len());
    lower.iter().for_each(|&(i, j)| s += &format!("{} {} {:e}\n", i + 1, j + 1, a[i + j * n]));
    s
}

fn matvec(a: &[f64], n: usize, x: &[f64]) -> Vec<f64> {
    (0..n).map(|i| (0..n).map(|j| a[i + j * n] * x[j]).sum()).collect()
}

fn one_norm(a: &[f64], n: usize) -> f64 {
    a.chunks(n).map(|c| c.iter().map(|v| v.abs()).sum::<f64>()).fold(0.0, f64::max)
}

/// `κ₁(A)` from faer's FP64 inverse.
fn kappa_one(a: &[f64], n: usize) -> f64 {
    let inv = Mat::from_fn(n, n, |i, j| a[i + j * n]).partial_piv_lu().inverse();
    let inv: Vec<f64> = (0..n * n).map(|p| inv[(p % n, p / n)]).collect();
    one_norm(a, n) * one_norm(&inv, n)
}

/// `‖x − y‖₁ / ‖y‖₁`.
fn forward_error(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len(), "{x:?} against {y:?}");
    x.iter().zip(y).map(|(p, q)| (p - q).abs()).sum::<f64>() / y.iter().map(|v| v.abs()).sum::<f64>()
}

/// The number after `key` in `text` (as `backward error 1.2e-17`).
fn number_after(text: &str, key: &str) -> f64 {
    let rest = &text[text.find(key).unwrap_or_else(|| panic!("'{key}' not in: {text}")) + key.len()..];
    rest.trim_start().split(|c: char| c == ',' || c == ';' || c.is_whitespace()).next().unwrap().parse().unwrap()
}

/// `[[H, Bᵀ], [B, −G]]` with `H = [[4, 1], [1, 5]]` and `G = [[3, −1],
/// [−1, 4]]` positive definite: quasi-definite, indefinite (two eigenvalues
/// of each sign), and factored without pivoting.
const KKT: [f64; 16] = [4.0, 1.0, 2.0, 0.0, 1.0, 5.0, 0.0, 1.0, 2.0, 0.0, -3.0, 1.0, 0.0, 1.0, 1.0, -4.0];

/// Runs `gpumat args`, which must succeed; (stdout, stderr).
fn ok(args: &[&str]) -> (String, String) {
    let o = gpumat(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    (stdout(&o), stderr(&o))
}

#[test]
fn solve_by_ldlt_in_both_storages_pivoted_or_not() {
    let dir = scratch("ldlt-solve");
    let n = 4;
    let x = [1.0, -1.0, 2.0, 1.0];
    let b = matvec(&KKT, n, &x);
    let a_general = write(&dir, "a.mtx", &array(n, n, &KKT));
    let a_symmetric = write(&dir, "as.mtx", &symmetric_file(n, &KKT));
    let b = write(&dir, "b.mtx", &array(n, 1, &b));
    let tol = 10.0 * n as f64 * U * kappa_one(&KKT, n);
    for a in [&a_general, &a_symmetric] {
        for storage in ["full", "rfp"] {
            for pivot in [None, Some("bk"), Some("aasen"), Some("none")] {
                let mut args = vec!["solve", a, &b, "--method", "ldlt", "--storage", storage];
                args.extend(pivot.iter().flat_map(|p| ["--pivot", p]));
                let (out, err) = ok(&args);
                let got = entries(&out);
                assert!(forward_error(&got, &x) <= tol, "{args:?}: {got:?}, bound {tol:e}");
                // Without --pivot, the device's method: Bunch–Kaufman on the CPU, Aasen's on the GPU.
                let label = |p: &str| format!("method ldlt, pivot {p}, storage {storage}, precision f64, 4×4");
                let labels: Vec<String> = match pivot {
                    Some(p) => vec![label(p)],
                    None => vec![label("bk"), label("aasen")],
                };
                assert!(labels.iter().any(|l| err.contains(l)), "{args:?}: {err}");
                assert_eq!(err.lines().count(), 1, "no fallback, no warning: {err}");
                assert!(number_after(&err, "backward error") <= 10.0 * n as f64 * U, "{err}");
            }
        }
    }
    // f32: the same route, to f32's accuracy.
    let (out, err) = ok(&["solve", &a_general, &b, "--method", "ldlt", "--precision", "f32"]);
    let tol32 = 10.0 * n as f64 * f64::from(f32::EPSILON / 2.0) * kappa_one(&KKT, n);
    assert!(forward_error(&entries(&out), &x) <= tol32, "{out}");
    assert!(err.contains("method ldlt, pivot bk, storage full, precision f32"), "{err}");
}

/// A symmetric indefinite `n × n` matrix with small integer entries (exact
/// in f64), whose leading 2 × 2 minor is negative: Cholesky fails in
/// column 2.
fn indefinite(n: usize) -> Vec<f64> {
    let entry = |i: usize, j: usize| -> f64 {
        let (i, j) = (i.max(j), i.min(j));
        if i == j { [1.0, 1.0, -3.0, 2.0, 0.0, 5.0, -1.0][i % 7] } else { ((3 * i + 5 * j) % 7) as f64 - 3.0 }
    };
    let mut a: Vec<f64> = (0..n * n).map(|p| entry(p % n, p / n)).collect();
    a[1] = 2.0;
    a[n] = 2.0;
    a
}

#[test]
fn auto_falls_back_to_pivoted_ldlt_and_says_so() {
    let dir = scratch("ldlt-auto");
    let n = 7;
    let a = indefinite(n);
    // x = (1, −2, 3, …): B = A·x exactly (small integers).
    let x: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { (i + 1) as f64 } else { -((i + 1) as f64) }).collect();
    let b = matvec(&a, n, &x);
    let (fa, fb) = (write(&dir, "a.mtx", &array(n, n, &a)), write(&dir, "b.mtx", &array(n, 1, &b)));
    let kappa = kappa_one(&a, n);
    assert!(kappa < 1e6, "the test matrix is to be well-conditioned: κ₁ = {kappa:e}");
    let tol = 10.0 * n as f64 * U * kappa;
    for storage in ["full", "rfp"] {
        let (out, err) = ok(&["solve", &fa, &fb, "--storage", storage]);
        let got = entries(&out);
        assert!(forward_error(&got, &x) <= tol, "{storage}: {got:?} against {x:?}, bound {tol:e}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "the fallback and the summary: {err}");
        assert_eq!(lines[0], "solve: A is not positive definite (pivot in column 2); solved with pivoted LDLᵀ");
        assert!(lines[1].contains(&format!("method ldlt, pivot bk, storage {storage}")), "{err}");
        assert!(number_after(&err, "backward error") <= 10.0 * n as f64 * U, "{err}");
        // The condition estimate is within a factor 10 of κ₁.
        let estimate = number_after(&err, "condition estimate");
        assert!((0.1..=10.0).contains(&(estimate / kappa)), "{estimate:e} against κ₁ = {kappa:e}");
    }
    // Asked for Cholesky, the same matrix is refused, naming the column.
    assert_one_line_error(&gpumat(&["solve", &fa, &fb, "--method", "cholesky"]), 2, "pivot in column 2");
    // A positive definite matrix keeps Cholesky, without the line.
    let spd = write(&dir, "spd.mtx", &array(2, 2, &[4.0, 1.0, 1.0, 3.0]));
    let b2 = write(&dir, "b2.mtx", &array(2, 1, &[1.0, 2.0]));
    let (_, err) = ok(&["solve", &spd, &b2]);
    assert!(err.contains("method cholesky") && err.lines().count() == 1, "{err}");
}

/// `Q·diag(λ)·Q` for the Householder reflector `Q = I − (2/n)·11ᵀ` (entries
/// `1 − 2/n` and `−2/n`) with `n = 8`: every entry a multiple of `1/16`,
/// so `A` is exact in f64 and its eigenvalues are exactly `λ`.
fn with_eigenvalues(lambda: &[f64]) -> Vec<f64> {
    let n = lambda.len();
    assert_eq!(n, 8, "entries are exact for n = 8");
    let q = |i: usize, j: usize| f64::from(u8::from(i == j)) - 2.0 / n as f64;
    (0..n * n).map(|p| (0..n).map(|k| q(p % n, k) * lambda[k] * q(k, p / n)).sum()).collect()
}

/// `(positive, negative, zero)` from `inertia`'s stdout, which must be
/// exactly those three lines.
fn counts(out: &str) -> (usize, usize, usize) {
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    let count = |line: &str, name: &str| -> usize {
        let (key, value) = line.split_once(' ').unwrap_or_else(|| panic!("{line}"));
        assert_eq!(key, name, "{out}");
        value.parse().unwrap()
    };
    (count(lines[0], "positive"), count(lines[1], "negative"), count(lines[2], "zero"))
}

#[test]
fn inertia_with_and_without_a_shift() {
    let dir = scratch("inertia");
    let lambda = [5.0, 3.0, 1.0, 1.0, -2.0, -4.0, -4.0, 7.0];
    let a = with_eigenvalues(&lambda);
    let general = write(&dir, "a.mtx", &array(8, 8, &a));
    let symmetric = write(&dir, "as.mtx", &symmetric_file(8, &a));
    // σ → the numbers of eigenvalues above, below and at σ. σ = 1 meets
    // the double eigenvalue 1: A − I is singular, and D's two zeros are
    // rounding errors within the tolerance 8·ε·max|mᵢⱼ|.
    let cases = [("0", (5, 3, 0)), ("1", (3, 3, 2)), ("-3", (6, 2, 0)), ("10", (0, 8, 0)), ("-1e300", (8, 0, 0))];
    for file in [&general, &symmetric] {
        for storage in ["full", "rfp"] {
            for (shift, want) in cases {
                let mut args = vec!["inertia", file, "--storage", storage];
                if shift != "0" {
                    args.extend(["--shift", shift]);
                }
                let (out, err) = ok(&args);
                assert_eq!(counts(&out), want, "{args:?}");
                assert_eq!(err.lines().count(), 1, "{err}");
                assert!(err.starts_with("inertia: 8×8") && err.contains(&format!("storage {storage}")), "{err}");
                if shift != "0" {
                    assert!(err.contains(&format!("shifted by σ = {shift}")), "{err}");
                }
                // ‖M − PᵀLDLᵀP‖_F / ‖M‖_F ≤ 10·n·u, reported up to order 1000.
                assert!(number_after(&err, "backward error") <= 10.0 * 8.0 * U, "{args:?}: {err}");
            }
        }
    }
    // Without a shift, grep-able: `gpumat inertia A.mtx | grep negative`.
    let (out, _) = ok(&["inertia", &general]);
    assert!(out.contains("\nnegative 3\n"), "{out}");
}

#[test]
fn inertia_reports_the_backward_error_past_order_1000_only_with_v() {
    // A tridiagonal matrix of order 1001, diagonal ±(i + 1) alternating,
    // 1/2 beside it: Gershgorin discs keep each eigenvalue on its
    // diagonal entry's side of 0, so 501 are positive and 500 negative.
    let n = 1001;
    let dir = scratch("inertia-large");
    let mut text = format!("%%MatrixMarket matrix coordinate real symmetric\n{n} {n} {}\n", 2 * n - 1);
    for i in 0..n {
        let d = if i % 2 == 0 { (i + 1) as f64 } else { -((i + 1) as f64) };
        text += &format!("{0} {0} {d}\n", i + 1);
    }
    (1..n).for_each(|i| text += &format!("{} {} 0.5\n", i + 1, i));
    let a = write(&dir, "t.mtx", &text);
    let (out, err) = ok(&["inertia", &a]);
    assert_eq!(counts(&out), (501, 500, 0));
    assert!(err.starts_with("inertia: 1001×1001") && !err.contains("backward error"), "{err}");
}

#[test]
fn refusals_and_their_exit_codes() {
    let dir = scratch("ldlt-refusals");
    let w = |name: &str, text: &str| write(&dir, name, text);
    let kkt = w("kkt.mtx", &array(4, 4, &KKT));
    let b4 = w("b4.mtx", &array(4, 1, &[1.0, 2.0, 3.0, 4.0]));
    let b2 = w("b2.mtx", &array(2, 1, &[3.0, 5.0]));
    // 64: --pivot belongs to ldlt; a shift must be a finite number.
    for method in [None, Some("auto"), Some("cholesky"), Some("lu")] {
        let mut args = vec!["solve", &kkt, &b4, "--pivot", "none"];
        args.extend(method.iter().flat_map(|m| ["--method", m]));
        assert_one_line_error(&gpumat(&args), 64, "--pivot applies to --method ldlt only");
    }
    assert_one_line_error(&gpumat(&["solve", &kkt, &b4, "--method", "ldlt", "--pivot", "rook"]), 64, "rook");
    for shift in ["nan", "inf", "-inf", "1e400", "x"] {
        assert_one_line_error(&gpumat(&["inertia", &kkt, "--shift", shift]), 64, "--shift");
    }
    // 1: a matrix that is not symmetric, naming the first pair; a NaN in a
    // file, naming the file and line.
    let mut nonsym = KKT;
    nonsym[1 + 3 * 4] = 0.5;
    let nonsym = w("nonsym.mtx", &array(4, 4, &nonsym));
    assert_one_line_error(&gpumat(&["inertia", &nonsym]), 1, "not symmetric: A(4,2) differs from A(2,4)");
    assert_one_line_error(&gpumat(&["solve", &nonsym, &b4, "--method", "ldlt"]), 1, "A(4,2) differs from A(2,4)");
    let nan = w("nan.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\nnan\nnan\n1\n");
    assert_one_line_error(&gpumat(&["inertia", &nan]), 1, "nan.mtx:4");
    assert_one_line_error(&gpumat(&["solve", &nan, &b2, "--method", "ldlt"]), 1, "nan.mtx:4");
    // 2: a zero pivot without pivoting (a zero diagonal), which Bunch–Kaufman
    // takes as a 2 × 2 pivot; a singular matrix; A − σI beyond f64.
    let swap = w("swap.mtx", &array(2, 2, &[0.0, 1.0, 1.0, 0.0]));
    assert_one_line_error(
        &gpumat(&["solve", &swap, &b2, "--method", "ldlt", "--pivot", "none"]),
        2,
        "zero pivot in column 1",
    );
    let (out, _) = ok(&["solve", &swap, &b2, "--method", "ldlt"]);
    assert_eq!(entries(&out), [5.0, 3.0]);
    let ones = w("ones.mtx", &array(2, 2, &[1.0; 4]));
    for extra in [&["--method", "ldlt"][..], &[], &["--method", "ldlt", "--allow-ill-conditioned"]] {
        let mut args = vec!["solve", &ones, &b2];
        args.extend_from_slice(extra);
        assert_one_line_error(&gpumat(&args), 2, "singular: pivot 2 is zero");
    }
    // The singular matrix's inertia is an answer, not a failure.
    assert_eq!(counts(&ok(&["inertia", &ones]).0), (1, 0, 1));
    let big = w("big.mtx", &array(2, 2, &[-1e308, 0.0, 0.0, 1.0]));
    assert_one_line_error(
        &gpumat(&["inertia", &big, "--shift", "1e308"]),
        2,
        "overflow: A − σI has a non-finite entry",
    );
}
