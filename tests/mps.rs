//! The MPS reader: the netlib LPs in `tests/data/lp` (counts from the
//! collection's listing), each section's conventions on small files, and
//! every kind of malformed line refused with its line number.

use std::path::Path;

use gpumat::Error;
use gpumat::io::{LinearProgram, MpsFormat, RowKind, Sense, read_mps, read_mps_from};

fn parse(text: &str) -> gpumat::Result<LinearProgram> {
    read_mps_from(text.as_bytes(), Path::new("t.mps"), MpsFormat::Free)
}

/// The 1-based line an error names, and its message.
fn refused(text: &str) -> (usize, String) {
    match parse(text) {
        Err(Error::Parse { line, message, .. }) => (line, message),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn the_netlib_problems_read_as_listed() {
    // (file, rows with the objective, columns, nonzeros with the objective's)
    for (file, rows, cols, nonzeros) in [("afiro", 28, 32, 88), ("sc50a", 51, 48, 131), ("adlittle", 57, 97, 465)] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/lp/{file}.mps"));
        for format in [MpsFormat::Free, MpsFormat::Fixed] {
            let lp = read_mps(&path, format).unwrap_or_else(|e| panic!("{file} {format:?}: {e}"));
            assert_eq!(lp.rows.len() + 1, rows, "{file}");
            assert_eq!(lp.columns.len(), cols, "{file}");
            let objective = lp.c.iter().filter(|&&v| v != 0.0).count();
            assert_eq!(lp.entries.len() + objective, nonzeros, "{file}");
            assert_eq!(lp.name.to_lowercase(), file);
            assert_eq!(lp.sense, Sense::Minimize);
            assert!(lp.lower.iter().all(|&l| l == 0.0) || file != "afiro");
        }
    }
    let lp = read_mps(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/lp/afiro.mps"), MpsFormat::Free).unwrap();
    // AFIRO: X02 has cost −0.4; row X05 is ≤ with the column X01's 1.
    let x02 = lp.columns.iter().position(|c| c == "X02").unwrap();
    assert_eq!(lp.c[x02], -0.4);
    let r09 = lp.rows.iter().position(|r| r.0 == "R09").unwrap();
    assert_eq!(lp.rows[r09].1, RowKind::Equal);
    assert!(lp.entries.contains(&(r09, 0, -1.0)));
}

const SMALL: &str = "\
NAME          SMALL
OBJSENSE
    MAX
ROWS
 N  COST
 L  LIM1
 G  LIM2
 E  MYEQN
 N  FREE2
 E  RNG
COLUMNS
    MARKER                 'MARKER'                 'INTORG'
    X1        COST         1.0   LIM1         1.0
    X1        LIM2         1.0
    MARKER                 'MARKER'                 'INTEND'
    X2        COST         2.0   LIM1         1.0
    X2        MYEQN       -1.0   FREE2        9.0
    X3        COST        -1.0   MYEQN        1.0
    X3        RNG          1.0
    X4        COST         1.0
RHS
    RHS       COST        -7.5
    RHS       LIM1         4.0   LIM2         1.0
    RHS       MYEQN        7.0   RNG          2.0
    OTHER     LIM1        99.0
RANGES
    RNG       RNG         -3.0
    RNG       LIM1         2.5
BOUNDS
 UP BND       X1           4.0
 MI BND       X2
 UP BND       X2           1.0
 UP BND       X3          -2.0
 FR BND       X4
ENDATA
";

#[test]
fn every_section_reads_by_its_convention() {
    let lp = parse(SMALL).unwrap();
    assert_eq!((lp.name.as_str(), lp.sense, lp.objective.as_str()), ("SMALL", Sense::Maximize, "COST"));
    assert_eq!(lp.rows.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), ["LIM1", "LIM2", "MYEQN", "RNG"]);
    assert_eq!(lp.columns, ["X1", "X2", "X3", "X4"]);
    assert_eq!(lp.integer, [true, false, false, false]);
    assert_eq!(lp.c, [1.0, 2.0, -1.0, 1.0]);
    // The objective's RHS is minus its constant; the second RHS set is ignored.
    assert_eq!(lp.constant, 7.5);
    assert_eq!(lp.rhs, [4.0, 1.0, 7.0, 2.0]);
    assert!(lp.notes.iter().any(|n| n.contains("RHS set 'OTHER' ignored")));
    // FREE2 is dropped, its entry with it.
    assert!(lp.notes.iter().any(|n| n.contains("FREE2")));
    assert_eq!(lp.entries.len(), 6);
    // Ranges: E row with R < 0 is [b − |R|, b]; L row is [b − |R|, b].
    let (lo, hi) = lp.row_bounds();
    assert_eq!(lo, [1.5, 1.0, 7.0, -1.0]);
    assert_eq!(hi, [4.0, f64::INFINITY, 7.0, 2.0]);
    // Bounds: UP; MI then UP; negative UP without LO makes the lower bound −∞; FR.
    assert_eq!(lp.lower, [0.0, f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY]);
    assert_eq!(lp.upper, [4.0, 1.0, -2.0, f64::INFINITY]);
    assert!(lp.notes.iter().any(|n| n.contains("negative upper bound")));
    assert!(lp.notes.iter().any(|n| n.contains("integrality is ignored")));
}

/// A fixed-format data line: the six fields at columns 2, 5, 15, 25, 40, 50.
fn fixed(fields: [&str; 6]) -> String {
    let mut line = String::new();
    for (f, start) in fields.iter().zip([1, 4, 14, 24, 39, 49]) {
        line.push_str(&" ".repeat(start - line.len()));
        line.push_str(f);
    }
    line.trim_end().to_string() + "\n"
}

#[test]
fn fixed_format_reads_names_with_spaces() {
    let text = [
        "NAME          SPACES\nROWS\n N  OBJ ROW\n L  ROW 1\nCOLUMNS\n".to_string(),
        fixed(["", "X ONE", "OBJ ROW", "1.0", "ROW 1", "2.0"]),
        "RHS\n".into(),
        fixed(["", "RHS", "ROW 1", "3.0", "", ""]),
        "BOUNDS\n".into(),
        fixed(["UP", "BND", "X ONE", "5.0", "", ""]),
        "ENDATA\n".into(),
    ]
    .concat();
    let text = text.as_str();
    let lp = read_mps_from(text.as_bytes(), Path::new("f.mps"), MpsFormat::Fixed).unwrap();
    assert_eq!((lp.objective.as_str(), lp.columns[0].as_str(), lp.rows[0].0.as_str()), ("OBJ ROW", "X ONE", "ROW 1"));
    assert_eq!((lp.c[0], lp.entries[0], lp.rhs[0], lp.upper[0]), (1.0, (0, 0, 2.0), 3.0, 5.0));
    // Read as free format, the same file has lines of the wrong shape.
    assert!(parse(text).is_err());
}

#[test]
fn malformed_lines_are_refused_with_their_line() {
    let base = "NAME T\nROWS\n N  OBJ\n L  R1\nCOLUMNS\n    X  OBJ  1.0  R1  2.0\nRHS\n    RHS  R1  1.0\nBOUNDS\n UP BND  X  4.0\nENDATA\n";
    parse(base).unwrap();
    let cases: &[(&str, &str, usize, &str)] = &[
        (" L  R1", " Q  R1", 4, "row type"),
        (" L  R1", " L  OBJ", 4, "defined twice"),
        ("    X  OBJ  1.0  R1  2.0", "    X  OBJ  1.0  R9  2.0", 6, "unknown row 'R9'"),
        ("    X  OBJ  1.0  R1  2.0", "    X  OBJ  1.0  R1  two", 6, "not a finite number"),
        ("    X  OBJ  1.0  R1  2.0", "    X  OBJ  1.0  R1  NaN", 6, "not a finite number"),
        ("    X  OBJ  1.0  R1  2.0", "    X  R1  1.0  R1  2.0", 6, "given twice"),
        ("    X  OBJ  1.0  R1  2.0", "    X  OBJ", 6, "COLUMNS line"),
        ("    RHS  R1  1.0", "    RHS  R2  1.0", 8, "unknown row 'R2'"),
        (" UP BND  X  4.0", " UP BND  Y  4.0", 10, "unknown column 'Y'"),
        (" UP BND  X  4.0", " XX BND  X  4.0", 10, "bound type"),
        (" UP BND  X  4.0", " UP BND  X", 10, "needs a value"),
        (" UP BND  X  4.0", " LO BND  X  5.0\n UP BND  X  4.0", 12, "above its upper bound"),
        ("RHS\n", "RHX\n", 7, "unknown section"),
        ("ENDATA\n", "", 11, "ends before ENDATA"),
        ("BOUNDS\n", "RHS\n", 9, "out of order"),
    ];
    for &(from, to, line, what) in cases {
        let text = base.replacen(from, to, 1);
        let (got_line, message) = refused(&text);
        assert!(message.contains(what), "{to:?}: {message}");
        assert_eq!(got_line, line, "{to:?}: {message}");
        assert!(!message.contains('\n'));
    }
    // No N row; a column whose entries are not together; a line far too long.
    assert_eq!(
        refused("NAME T\nROWS\n L  R1\nCOLUMNS\n    X  R1  1\nENDATA\n"),
        (6, "no objective: the ROWS section has no N row".into())
    );
    let split = "NAME T\nROWS\n N  OBJ\n L  R1\nCOLUMNS\n    X  OBJ  1\n    Y  OBJ  1\n    X  R1  1\nENDATA\n";
    assert!(refused(split).1.contains("appears again"));
    let long = format!("NAME T\nROWS\n N  OBJ{}\n", " ".repeat(1 << 17));
    assert!(refused(&long).1.contains("longer than"));
    assert!(matches!(read_mps(Path::new("/nonexistent.mps"), MpsFormat::Free), Err(Error::Io { .. })));
}
