//! `gpumat solve --grid PxQ`: one factorization over simulated ranks on the
//! CPU (the GPU path is the same code over NCCL, tested in `dist.rs`); the
//! same summary, answers and exit codes as a solve on one device.

mod cli_common;

use cli_common::*;

fn array(rows: usize, cols: usize, f: impl Fn(usize, usize) -> f64) -> String {
    let mut s = format!("%%MatrixMarket matrix array real general\n{rows} {cols}\n");
    (0..cols).flat_map(|j| (0..rows).map(move |i| (i, j))).for_each(|(i, j)| s += &format!("{:e}\n", f(i, j)));
    s
}

fn entries(text: &str) -> Vec<f64> {
    text.lines().filter(|l| !l.starts_with('%')).skip(1).map(|l| l.trim().parse().unwrap()).collect()
}

/// The largest relative error of the solution gpumat printed against
/// `x = (1, 2, …, n)`, the solution of the systems of [`rhs`].
fn check_solution(n: usize, out: &str) -> f64 {
    let x = entries(out);
    assert_eq!(x.len(), n);
    x.iter().enumerate().map(|(i, v)| (v - (i + 1) as f64).abs() / (i + 1) as f64).fold(0.0, f64::max)
}

/// `b = A·x` for `x = (1, 2, …, n)`.
fn rhs(a: &impl Fn(usize, usize) -> f64, n: usize) -> String {
    array(n, 1, |i, _| (0..n).map(|j| a(i, j) * (j + 1) as f64).sum())
}

#[test]
fn spd_and_general_systems_solve_on_every_grid() {
    let dir = scratch("dist-solve");
    let n = 37;
    let spd = |i: usize, j: usize| if i == j { n as f64 } else { 1.0 / (1.0 + i.abs_diff(j) as f64) };
    let general = |i: usize, j: usize| ((i * 7 + j * 13) % 17) as f64 - 8.0 + if i == j { 20.0 } else { 0.0 };
    let (s, bs) = (write(&dir, "spd.mtx", &array(n, n, spd)), write(&dir, "bs.mtx", &rhs(&spd, n)));
    let (g, bg) = (write(&dir, "gen.mtx", &array(n, n, general)), write(&dir, "bg.mtx", &rhs(&general, n)));
    for grid in ["1x1", "1x3", "2x1", "2x2"] {
        for (a, b, method, storage) in
            [(&s, &bs, "cholesky", "full"), (&s, &bs, "cholesky", "rfp"), (&g, &bg, "lu", "full")]
        {
            let o = gpumat(&["--device", "cpu", "solve", a, b, "--grid", grid, "--storage", storage]);
            assert!(o.status.success(), "{grid} {method}: {}", stderr(&o));
            let err = stderr(&o);
            assert!(err.contains(&format!("method {method} (distributed)")), "{grid}: {err}");
            assert!(err.contains("simulated ranks on the CPU") && err.contains("condition estimate"), "{err}");
            // κ(A) is small: X to 1e-12, and the summary's backward error to n·u.
            let e = check_solution(n, &stdout(&o));
            assert!(e < 1e-12, "{grid} {method} {storage}: error {e:.2e}");
            let be: f64 = err.split("backward error ").nth(1).unwrap().trim().parse().unwrap();
            assert!(be <= n as f64 * f64::EPSILON, "{grid}: backward error {be:.2e}");
            if storage == "rfp" {
                assert!(err.contains("storage lower blocks"), "{err}");
            }
        }
    }
}

#[test]
fn auto_falls_back_to_lu_and_failures_keep_their_exit_codes() {
    let dir = scratch("dist-codes");
    let n = 12;
    // Symmetric, indefinite: auto tries Cholesky, says why it fell back.
    let indefinite = |i: usize, j: usize| if i == j { if i.is_multiple_of(2) { 4.0 } else { -4.0 } } else { 0.5 };
    let (a, b) = (write(&dir, "ind.mtx", &array(n, n, indefinite)), write(&dir, "b.mtx", &rhs(&indefinite, n)));
    let o = gpumat(&["--device", "cpu", "solve", &a, &b, "--grid", "2x2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("not positive definite") && stderr(&o).contains("solved with LU"), "{}", stderr(&o));
    assert!(check_solution(n, &stdout(&o)) < 1e-12);
    // Explicit Cholesky of it: exit 2 naming the pivot.
    assert_one_line_error(
        &gpumat(&["--device", "cpu", "solve", &a, &b, "--grid", "2x2", "--method", "cholesky"]),
        2,
        "not positive definite",
    );
    // Singular: a zero column.
    let singular = write(
        &dir,
        "sing.mtx",
        &array(n, n, |i, j| if j == 5 { 0.0 } else { ((i + 2 * j) % 5) as f64 + (i == j) as u8 as f64 }),
    );
    assert_one_line_error(&gpumat(&["--device", "cpu", "solve", &singular, &b, "--grid", "1x2"]), 2, "singular");
    // Not symmetric, by Cholesky: bad input, as on one device.
    let general = write(&dir, "gen.mtx", &array(n, n, |i, j| (i * 3 + j) as f64 + if i == j { 50.0 } else { 0.0 }));
    assert_one_line_error(
        &gpumat(&["--device", "cpu", "solve", &general, &b, "--grid", "2x1", "--method", "cholesky"]),
        1,
        "symmetric",
    );
    // NaN: exit 1 naming its line (the reader refuses it).
    let nan = write(&dir, "nan.mtx", &array(n, n, |i, j| if (i, j) == (3, 4) { f64::NAN } else { indefinite(i, j) }));
    assert_one_line_error(
        &gpumat(&["--device", "cpu", "solve", &nan, &b, "--grid", "1x2", "--method", "lu"]),
        1,
        "non-finite",
    );
    // Flags the distributed path does not take.
    for bad in [
        &["--grid", "0x2"][..],
        &["--grid", "two"],
        &["--devices", "0"],
        &["--grid", "2x2", "--method", "ldlt"],
        &["--grid", "2x2", "--precision", "f32"],
    ] {
        let mut args = vec!["--device", "cpu", "solve", &a, &b];
        args.extend_from_slice(bad);
        let o = gpumat(&args);
        assert_eq!(o.status.code(), Some(64), "{bad:?}: {}", stderr(&o));
    }
    // B of the wrong height.
    let short = write(&dir, "short.mtx", &array(n - 1, 1, |_, _| 1.0));
    assert_one_line_error(&gpumat(&["--device", "cpu", "solve", &a, &short, "--grid", "2x2"]), 1, "rows");
}
