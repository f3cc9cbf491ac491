//! The condition estimate at the command line: `solve`, `inv` and `det` of
//! a matrix singular to working precision exit 2 with one line unless
//! `--allow-ill-conditioned`; every solve reports its condition estimate,
//! backward error and forward-error bound, and warns when `A` is
//! ill-conditioned, on the Cholesky route as on LU's.

mod cli_common;

use cli_common::*;

/// [1 2 3; 4 5 6; 7 8 9]: singular, but LU's last pivot is rounding error
/// (its computed determinant is 6.7e-16, not 0).
const SINGULAR: &str = "%%MatrixMarket matrix array real general\n3 3\n1\n4\n7\n2\n5\n8\n3\n6\n9\n";
const B3: &str = "%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n";

/// The numbers of a Matrix Market array written by gpumat (after the size line).
fn entries(text: &str) -> Vec<f64> {
    text.lines().filter(|l| !l.starts_with('%')).skip(1).map(|l| l.trim().parse().unwrap()).collect()
}

/// The order-`n` Hilbert matrix, `hᵢⱼ = 1/(i + j − 1)`, and `b = H·(1, …, 1)`.
fn hilbert(n: usize) -> (String, String) {
    let h = |i: usize, j: usize| 1.0 / (i + j + 1) as f64;
    let mut a = format!("%%MatrixMarket matrix array real general\n{n} {n}\n");
    (0..n).flat_map(|j| (0..n).map(move |i| (i, j))).for_each(|(i, j)| a += &format!("{:e}\n", h(i, j)));
    let mut b = format!("%%MatrixMarket matrix array real general\n{n} 1\n");
    (0..n).for_each(|i| b += &format!("{:e}\n", (0..n).map(|j| h(i, j)).sum::<f64>()));
    (a, b)
}

/// The number after `key` in `text` (as `condition estimate 3.92e16`).
fn number_after(text: &str, key: &str) -> f64 {
    let rest = &text[text.find(key).unwrap_or_else(|| panic!("'{key}' not in: {text}")) + key.len()..];
    rest.trim_start().split(|c: char| c == ',' || c.is_whitespace()).next().unwrap().parse().unwrap()
}

#[test]
fn singular_to_working_precision_is_exit_code_2_unless_allowed() {
    let dir = scratch("singular-wp");
    let (s, b) = (write(&dir, "s.mtx", SINGULAR), write(&dir, "b.mtx", B3));
    for args in [&["solve", &s, &b][..], &["inv", &s], &["det", &s]] {
        assert_one_line_error(&gpumat(args), 2, "singular to working precision");
        let mut allowed = args.to_vec();
        allowed.push("--allow-ill-conditioned");
        let o = gpumat(&allowed);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("condition estimate"), "{args:?}: {err}");
        assert!(err.contains("warning: A is singular to working precision"), "{args:?}: {err}");
    }
    // The determinant it prints, allowed, is LU's rounding error.
    let d: f64 = stdout(&gpumat(&["det", &s, "--allow-ill-conditioned"])).trim().parse().unwrap();
    assert!(d.abs() < 1e-14, "{d}");
}

#[test]
fn hilbert_12_by_cholesky_is_refused_and_reported_when_allowed() {
    let dir = scratch("hilbert-12");
    let (a, b) = hilbert(12);
    let (a, b) = (write(&dir, "h.mtx", &a), write(&dir, "b.mtx", &b));
    assert_one_line_error(&gpumat(&["solve", &a, &b]), 2, "singular to working precision");
    for storage in ["full", "rfp"] {
        let o = gpumat(&["solve", &a, &b, "--storage", storage, "--allow-ill-conditioned"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(entries(&stdout(&o)).len(), 12);
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 2, "the summary and the warning: {err}");
        assert!(err.contains(&format!("method cholesky, storage {storage}, precision f64, 12×12")), "{err}");
        assert!(err.contains("with 1 right-hand side on"), "{err}");
        // κ₁(H₁₂) = 4.1e16 (exactly, for the rounded matrix 4.0e16).
        let kappa = number_after(&err, "condition estimate");
        assert!((4e15..=4e17).contains(&kappa), "{err}");
        assert!(number_after(&err, "backward error") <= 1e-15, "{err}");
        assert!(number_after(&err, "forward error bound") >= 1e-2, "{err}");
        assert!(err.contains("X may have no correct digits"), "{err}");
    }
}

#[test]
fn hilbert_8_is_answered_with_a_warning() {
    let dir = scratch("hilbert-8");
    let (a, b) = hilbert(8);
    let (a, b) = (write(&dir, "h.mtx", &a), write(&dir, "b.mtx", &b));
    let o = gpumat(&["solve", &a, &b]);
    assert!(o.status.success(), "{}", stderr(&o));
    let x = entries(&stdout(&o));
    // κ₁(H₈) = 3.4e10: x = (1, …, 1) to about κ·u.
    assert!(x.iter().all(|v| (v - 1.0).abs() <= 1e-4), "{x:?}");
    let err = stderr(&o);
    assert!(err.contains("method cholesky"), "{err}");
    let kappa = number_after(&err, "condition estimate");
    assert!((3.4e9..=3.4e11).contains(&kappa), "{err}");
    assert!(err.contains("warning: A is ill-conditioned") && err.contains("X may have few correct digits"), "{err}");
    // Two right-hand sides: the plural, and LU when asked for.
    let b2 = write(&dir, "b2.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n0\n0\n1\n");
    let a2 = write(&dir, "a2.mtx", "%%MatrixMarket matrix array real general\n2 2\n2\n1\n1\n3\n");
    let o = gpumat(&["solve", &a2, &b2, "--method", "lu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("method lu") && err.contains("with 2 right-hand sides"), "{err}");
    assert_eq!(err.lines().count(), 1, "a well-conditioned A has no warning: {err}");
}

#[test]
fn mixed_precision_refines_to_fp64_and_reports_how() {
    let dir = scratch("mixed");
    // Hilbert 6: κ ≈ 1.5e7, which FP32 preconditions; x = (1, …, 1).
    let (a, b) = hilbert(6);
    let (a, b) = (write(&dir, "h.mtx", &a), write(&dir, "b.mtx", &b));
    for extra in [&[][..], &["--factor-precision", "fp16x3"], &["--method", "lu", "--refinement", "classical"]] {
        let mut args = vec!["solve", &a, &b, "--precision", "mixed"];
        args.extend_from_slice(extra);
        let o = gpumat(&args);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("precision mixed (factor") || err.contains("(fallback)"), "{extra:?}: {err}");
        let eta = number_after(&err, "backward error");
        assert!(eta <= 6.0 * f64::EPSILON / 2.0, "{extra:?}: backward error {eta:e}");
        // The forward error is what FP64 gives: κ·u ≈ 1e-9.
        let x = entries(&stdout(&o));
        assert!(x.iter().all(|v| (v - 1.0).abs() < 1e-7), "{extra:?}: {x:?}");
    }
    // Hilbert 12 (κ ≈ 1.7e16) is beyond FP32: the fallback is said, and
    // FP64's verdict (singular to working precision) stands.
    let (h12, b12) = hilbert(12);
    let (h12, b12) = (write(&dir, "h12.mtx", &h12), write(&dir, "b12.mtx", &b12));
    let o = gpumat(&["solve", &h12, &b12, "--precision", "mixed", "--method", "lu", "--allow-ill-conditioned"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("solved in f64") || err.contains("precision mixed"), "{err}");
}

#[test]
fn mixed_precision_refuses_what_it_cannot_do() {
    let dir = scratch("mixed-usage");
    let (s, b) = (write(&dir, "s.mtx", SINGULAR), write(&dir, "b.mtx", B3));
    for (args, what) in [
        (&["solve", &s, &b, "--precision", "mixed", "--method", "ldlt"][..], "--method auto, cholesky or lu"),
        (&["solve", &s, &b, "--precision", "mixed", "--storage", "rfp"], "--storage full"),
        (&["solve", &s, &b, "--factor-precision", "fp16"], "--precision mixed only"),
    ] {
        assert_one_line_error(&gpumat(args), 64, what);
    }
    // Singular: the fallback's FP64 solve refuses it as `solve` does.
    assert_one_line_error(&gpumat(&["solve", &s, &b, "--precision", "mixed"]), 2, "singular");
}
