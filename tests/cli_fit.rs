//! `gpumat lstsq` and `gpumat fit`: outputs, plots, exit codes and one-line
//! errors for every kind of bad input.

mod cli_common;

use cli_common::*;

/// Values of a Matrix Market array written by gpumat.
fn values(text: &str) -> Vec<f64> {
    text.lines().filter(|l| !l.starts_with('%')).skip(1).map(|l| l.trim().parse().unwrap()).collect()
}

/// y = 2 − 3x + 0.5x² exactly at x = 0..6, in a CSV with σ.
fn quadratic_csv() -> String {
    let mut s = String::from("t,value,err\n");
    for i in 0..7 {
        let x = i as f64;
        s += &format!("{x},{},{}\n", 2.0 - 3.0 * x + 0.5 * x * x, 0.1 + 0.05 * x);
    }
    s
}

#[test]
fn lstsq_recovers_an_exact_fit_and_round_trips() {
    let dir = scratch("lstsq");
    // Rows are observations of y = 1 + 2x at x = 0, 1, 2, 3.
    let a = write(&dir, "a.mtx", "%%MatrixMarket matrix array real general\n4 2\n1\n1\n1\n1\n0\n1\n2\n3\n");
    let b = write(&dir, "b.mtx", "%%MatrixMarket matrix array real general\n4 1\n1\n3\n5\n7\n");
    let d = write(&dir, "d.mtx", "%%MatrixMarket matrix array real general\n4 1\n1\n2\n0.5\n3\n");
    let x = dir.0.join("x.mtx");
    let o = gpumat(&["lstsq", &a, &b, "--weights", &d, "-o", x.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("method QR") && err.contains("condition") && err.contains("residual norm"), "{err}");
    let got = values(&std::fs::read_to_string(&x).unwrap());
    assert_eq!(got.len(), 2);
    assert!((got[0] - 1.0).abs() < 1e-14 && (got[1] - 2.0).abs() < 1e-14, "{got:?}");
    // Without -o, to stdout.
    let o = gpumat(&["lstsq", &a, &b]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("%%MatrixMarket matrix array real general"), "{}", stdout(&o));
}

#[test]
fn lstsq_of_a_wide_matrix_is_the_least_norm_solution() {
    let dir = scratch("lstsq-wide");
    // x₁ + 2·x₂ = 1: the solution of least norm is (1, 2)/5.
    let a = write(&dir, "w.mtx", "%%MatrixMarket matrix array real general\n1 2\n1\n2\n");
    let b = write(&dir, "b.mtx", "%%MatrixMarket matrix array real general\n1 1\n1\n");
    let o = gpumat(&["lstsq", &a, &b]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("least-norm solution"), "{}", stderr(&o));
    let got = values(&stdout(&o));
    assert!((got[0] - 0.2).abs() < 1e-15 && (got[1] - 0.4).abs() < 1e-15, "{got:?}");
}

#[test]
fn lstsq_bad_input() {
    let dir = scratch("lstsq-bad");
    let a = write(&dir, "a.mtx", "%%MatrixMarket matrix array real general\n3 2\n1\n1\n1\n1\n1\n1\n");
    let a_wide = write(&dir, "w.mtx", "%%MatrixMarket matrix array real general\n1 2\n1\n2\n");
    let b3 = write(&dir, "b3.mtx", "%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n");
    let b2 = write(&dir, "b2.mtx", "%%MatrixMarket matrix array real general\n2 1\n1\n2\n");
    let b1 = write(&dir, "b1.mtx", "%%MatrixMarket matrix array real general\n1 1\n1\n");
    let neg = write(&dir, "neg.mtx", "%%MatrixMarket matrix array real general\n3 1\n1\n-1\n1\n");
    let a_ok = write(&dir, "ok.mtx", "%%MatrixMarket matrix array real general\n3 2\n1\n1\n1\n0\n1\n2\n");
    // Rank deficient (two equal columns), mismatched lengths, fewer
    // observations than unknowns, a negative weight.
    assert_one_line_error(&gpumat(&["lstsq", &a, &b3]), 2, "rank deficient at column 2");
    assert_one_line_error(&gpumat(&["lstsq", &a_ok, &b2]), 1, "b has 2 entries");
    assert_one_line_error(&gpumat(&["lstsq", &a_ok, &b3, "--weights", &b2]), 1, "the weights has 2 entries");
    assert_one_line_error(
        &gpumat(&["lstsq", &a_wide, &b1, "--weights", &b1]),
        1,
        "1 observations (rows of A) for 2 unknowns",
    );
    let a_dependent = write(&dir, "dep.mtx", "%%MatrixMarket matrix array real general\n2 3\n1\n1\n2\n2\n3\n3\n");
    assert_one_line_error(&gpumat(&["lstsq", &a_dependent, &b2]), 2, "rank deficient");
    assert_one_line_error(&gpumat(&["lstsq", &a_ok, &b3, "--weights", &neg]), 1, "negative");
}

#[test]
fn fit_prints_coefficients_with_standard_errors() {
    let dir = scratch("fit");
    let csv = write(&dir, "data.csv", &quadratic_csv());
    let o = gpumat(&["fit", &csv, "--x", "t", "--y", "value", "--sigma", "err", "--basis", "poly:2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("std. error") && out.contains("residual norm") && out.contains("weights 1/'err'"), "{out}");
    // The coefficient rows: term, coefficient, standard error.
    let coef = |term: &str| -> f64 {
        let line = out.lines().find(|l| l.split_whitespace().next() == Some(term)).unwrap_or_else(|| panic!("{out}"));
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    for (term, want) in [("1", 2.0), ("x", -3.0), ("x^2", 0.5)] {
        assert!((coef(term) - want).abs() < 1e-12, "{term}: {} vs {want}\n{out}", coef(term));
    }
    // A Fourier basis runs too.
    let o = gpumat(&["fit", &csv, "--x", "t", "--y", "value", "--basis", "fourier:2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("sin(2ωt)"), "{}", stdout(&o));
}

#[test]
fn fit_plot_is_a_png_of_the_right_size() {
    let dir = scratch("plot");
    let csv = write(&dir, "data.csv", &quadratic_csv());
    let png = dir.0.join("fit.png");
    let o = gpumat(&[
        "fit",
        &csv,
        "--x",
        "t",
        "--y",
        "value",
        "--sigma",
        "err",
        "--basis",
        "poly:2",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let decoder = png::Decoder::new(std::fs::File::open(&png).expect("the plot exists"));
    let mut reader = decoder.read_info().expect("a valid PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("PNG data decodes");
    assert_eq!((info.width, info.height), (960, 640));
    // Not blank: the data and the curve are drawn in colour.
    let colored = buf
        .chunks(info.line_size / info.width as usize)
        .filter(|p| p.len() >= 3 && (p[0] != p[1] || p[1] != p[2]))
        .count();
    assert!(colored > 500, "only {colored} coloured pixels");
}

#[test]
fn fit_bad_input() {
    let dir = scratch("fit-bad");
    let csv = write(&dir, "data.csv", &quadratic_csv());
    let fit = |extra: &[&str]| {
        let mut args = vec!["fit", csv.as_str(), "--x", "t", "--y", "value"];
        args.extend_from_slice(extra);
        gpumat(&args)
    };
    // A column that does not exist.
    assert_one_line_error(
        &gpumat(&["fit", &csv, "--x", "time", "--y", "value", "--basis", "poly:1"]),
        1,
        "no column named 'time'",
    );
    // Negative and zero σ.
    let neg = write(&dir, "neg.csv", "t,value,err\n0,1,0.1\n1,2,-0.2\n2,3,0.1\n");
    assert_one_line_error(
        &gpumat(&["fit", &neg, "--x", "t", "--y", "value", "--sigma", "err", "--basis", "poly:1"]),
        1,
        "must be positive, is -0.2 in data row 2",
    );
    let zero = write(&dir, "zero.csv", "t,value,err\n0,1,0.1\n1,2,0\n2,3,0.1\n");
    assert_one_line_error(
        &gpumat(&["fit", &zero, "--x", "t", "--y", "value", "--sigma", "err", "--basis", "poly:1"]),
        1,
        "must be positive",
    );
    // NaN in the data.
    let nan = write(&dir, "nan.csv", "t,value\n0,1\n1,NaN\n2,3\n");
    assert_one_line_error(&gpumat(&["fit", &nan, "--x", "t", "--y", "value", "--basis", "poly:1"]), 1, ":3:");
    // Fewer observations than unknowns.
    assert_one_line_error(&fit(&["--basis", "poly:9"]), 1, "7 data points for the 10 coefficients");
    // Rank-deficient design: repeated x values.
    let rep = write(&dir, "rep.csv", "t,value\n1,1\n1,2\n2,3\n2,4\n");
    assert_one_line_error(
        &gpumat(&["fit", &rep, "--x", "t", "--y", "value", "--basis", "poly:2"]),
        2,
        "rank deficient",
    );
    // Malformed basis specs (a usage error).
    for bad in ["poly:x", "cubic:3", "fourier:2:-1"] {
        assert_one_line_error(&fit(&["--basis", bad]), 64, "malformed basis");
    }
}
