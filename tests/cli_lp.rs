//! `gpumat lp`: the log and summary of a netlib problem, the solution as
//! CSV, and an exit code for each way a solve ends.

mod cli_common;

use cli_common::*;

fn netlib(name: &str) -> String {
    format!("{}/tests/data/lp/{name}.mps", env!("CARGO_MANIFEST_DIR"))
}

/// The number after `label` on the summary line that starts with it.
fn field(out: &str, label: &str) -> f64 {
    let line = out.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("no '{label}' in:\n{out}"));
    line[label.len()..].split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn afiro_is_solved_with_a_log_and_a_summary() {
    for extra in [&[][..], &["--storage", "rfp"], &["--precision", "mixed"], &["--format", "fixed"]] {
        let o = gpumat(&[&["lp", &netlib("afiro")][..], extra].concat());
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains("primal objective") && out.contains("gap") && out.contains("step"), "{out}");
        assert!(out.contains("status      optimal"), "{out}");
        let objective = field(&out, "objective");
        assert!((objective - -4.6475314286e2).abs() <= 1e-8 * 464.75, "{objective}");
        assert!(out.contains("form A·Θ·Aᵀ") && out.contains("factor") && out.contains("solve"), "{out}");
        // The objective has 12 significant digits.
        let printed = out.lines().find(|l| l.starts_with("objective")).unwrap();
        let mantissa = printed.split_whitespace().nth(1).unwrap().split('e').next().unwrap();
        assert_eq!(mantissa.chars().filter(|c| c.is_ascii_digit()).count(), 12, "{printed}");
    }
}

#[test]
fn the_solution_is_written_as_csv() {
    let dir = scratch("lp-csv");
    let csv = dir.join("sol.csv");
    let o = gpumat(&["lp", &netlib("sc50a"), "-q", "-o", csv.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stdout(&o).contains("primal objective"), "--quiet prints no log");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("kind,name,value,dual"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.iter().filter(|r| r[0] == "column").count(), 48);
    assert_eq!(rows.iter().filter(|r| r[0] == "row").count(), 50);
    for r in &rows {
        let value: f64 = r[2].parse().unwrap();
        let dual: f64 = r[3].parse().unwrap();
        assert!(value.is_finite() && dual.is_finite(), "{r:?}");
        if r[0] == "column" {
            assert!(value >= -1e-7, "sc50a's columns are nonnegative: {r:?}");
        }
    }
}

#[test]
fn each_ending_has_its_exit_code() {
    let dir = scratch("lp-codes");
    let infeasible = write(
        &dir,
        "inf.mps",
        "NAME T\nROWS\n N obj\n L l\n G g\nCOLUMNS\n x obj 1 l 1\n x g 1\nRHS\n rhs l 1 g 2\nENDATA\n",
    );
    let o = gpumat(&["lp", &infeasible, "-q"]);
    assert_one_line_error(&o, 3, "infeasible");
    assert!(stdout(&o).contains("status      infeasible"));
    let unbounded = write(
        &dir,
        "unb.mps",
        "NAME T\nROWS\n N obj\n L l\nCOLUMNS\n x obj 1 l 1\n y obj 1 l -1\nRHS\n rhs l 1\nENDATA\n",
    );
    assert_one_line_error(&gpumat(&["lp", &unbounded, "--max", "-q"]), 4, "unbounded");
    // The same file minimized is bounded: x = y = 0.
    let o = gpumat(&["lp", &unbounded, "--min", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(field(&stdout(&o), "objective").abs() <= 1e-8);
    // The iteration limit is a numerical ending.
    assert_one_line_error(&gpumat(&["lp", &netlib("adlittle"), "--max-iterations", "2", "-q"]), 2, "iteration");
}

#[test]
fn bad_input_is_one_line_and_an_honest_exit_code() {
    let dir = scratch("lp-bad");
    let o = gpumat(&["lp", dir.join("missing.mps").to_str().unwrap()]);
    assert_one_line_error(&o, 1, "missing.mps");
    let bad = write(&dir, "bad.mps", "NAME T\nROWS\n N obj\n Q r\nENDATA\n");
    assert_one_line_error(&gpumat(&["lp", &bad]), 1, "bad.mps:4");
    assert_one_line_error(&gpumat(&["lp", &netlib("afiro"), "--tol", "0"]), 64, "--tol");
    assert_one_line_error(&gpumat(&["lp", &netlib("afiro"), "--tol", "2"]), 64, "--tol");
    assert_one_line_error(&gpumat(&["lp", &netlib("afiro"), "--max", "--min"]), 64, "--min");
    assert_one_line_error(&gpumat(&["lp", &netlib("afiro"), "--storage", "packed"]), 64, "packed");
}
