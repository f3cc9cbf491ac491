//! `gpumat wls-table`: Jung and O'Leary's Tables 1 and 2 at tiny sizes (their
//! numbers checked, not only printed), and one-line errors for bad options.

mod cli_common;

use std::process::Output;

use cli_common::*;

/// The table's rows: `m`, then the columns by name.
fn rows(o: &Output) -> Vec<std::collections::HashMap<String, String>> {
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut lines = text.lines().skip_while(|l| !l.trim_start().starts_with("m "));
    let header: Vec<String> = lines.next().expect("a header").split_whitespace().map(String::from).collect();
    lines
        .filter(|l| l.trim_start().chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(|l| header.iter().cloned().zip(l.split_whitespace().map(String::from)).collect())
        .collect()
}

fn num(row: &std::collections::HashMap<String, String>, col: &str) -> f64 {
    row[col].parse().unwrap_or_else(|_| panic!("{col} = {} is not a number", row[col]))
}

#[test]
fn tables_1_and_2_at_tiny_sizes() {
    for (ill, bound) in [(false, 1e-12f64), (true, 1e-8)] {
        let mut args = vec!["wls-table", "--sizes", "24,48", "--seed", "7"];
        if ill {
            args.push("--ill-conditioned");
        }
        let o = gpumat(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let rows = rows(&o);
        assert_eq!(rows.iter().map(|r| r["m"].as_str()).collect::<Vec<_>>(), ["24", "48"]);
        for r in &rows {
            assert_eq!(r["path"], "refined");
            // Refined to FP64 level (and within κ·u of the FP64 solve); the
            // f32 solve alone is at κ·u₃₂, far worse.
            let (x0, refined, kappa) = (num(r, "err_x0"), num(r, "err_ref"), num(r, "kappa1"));
            assert!(refined <= bound.min(kappa * f64::EPSILON), "{r:?}");
            assert!(x0 >= 1e3 * refined && x0 > 1e-8, "{r:?}");
            assert!(num(r, "iter") >= 1.0);
            assert!(num(r, "mixed") > 0.0 && num(r, "fp64") > 0.0);
        }
    }
    // The same seed gives the same problems.
    let a = gpumat(&["wls-table", "--sizes", "16", "--seed", "3"]);
    let b = gpumat(&["wls-table", "--sizes", "16", "--seed", "3"]);
    assert_eq!(rows(&a)[0]["err_ref"], rows(&b)[0]["err_ref"]);
    assert_eq!(rows(&a)[0]["kappa1"], rows(&b)[0]["kappa1"]);
}

#[test]
fn malformed_options_are_one_line_errors() {
    assert_one_line_error(&gpumat(&["wls-table", "--sizes", "16,x"]), 64, "invalid value");
    assert_one_line_error(&gpumat(&["wls-table", "--sizes", "-5"]), 64, "");
    assert_one_line_error(&gpumat(&["wls-table", "--sizes", "0,16"]), 64, "at least 1");
    assert_one_line_error(&gpumat(&["wls-table", "--sizes", "16", "--tolerance=-1e-8"]), 64, "positive");
    assert_one_line_error(&gpumat(&["wls-table", "--seed", "many"]), 64, "invalid value");
}
