//! Tests of `gpumat::io`: Matrix Market and CSV, reading, writing, round
//! trips, every kind of bad input, and readers that never panic.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use gpumat::Error;
use gpumat::io::{
    MAX_DENSE_ENTRIES, MatrixMarket, MmField, MmFormat, MmSymmetry, MmWriteOptions, Table, read_csv, read_csv_from,
    read_matrix_market, read_matrix_market_from, write_matrix_market, write_matrix_market_to,
};
use proptest::prelude::*;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mm").join(name)
}

fn tmp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("io");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn read_str(text: &str) -> gpumat::Result<MatrixMarket> {
    read_matrix_market_from(Cursor::new(text.as_bytes()), Path::new("bad.mtx"))
}

/// Column-major data of a matrix given row by row.
fn col_major(rows: &[&[f64]]) -> Vec<f64> {
    let m = rows.len();
    let n = rows.first().map_or(0, |r| r.len());
    let mut data = vec![0.0; m * n];
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.len(), n);
        for (j, &v) in row.iter().enumerate() {
            data[i + j * m] = v;
        }
    }
    data
}

/// Reads `text` expecting a parse error; checks the file name and the line,
/// that the message contains `needle`, and returns the message.
#[track_caller]
fn mm_parse_error(text: &str, line: usize, needle: &str) -> String {
    match read_str(text) {
        Err(Error::Parse { path, line: l, message }) => {
            assert_eq!(path, Path::new("bad.mtx"));
            assert_eq!(l, line, "wrong line in {message:?}");
            assert!(message.contains(needle), "{message:?} does not contain {needle:?}");
            let shown = Error::Parse { path, line: l, message: message.clone() }.to_string();
            assert!(shown.starts_with(&format!("bad.mtx:{line}: ")), "{shown}");
            message
        }
        other => panic!("expected a parse error at line {line}, got {other:?}"),
    }
}

#[track_caller]
fn csv_parse_error(text: &str, line: usize, needles: &[&str]) -> String {
    match read_csv_from(text.as_bytes(), Path::new("bad.csv")) {
        Err(Error::Parse { path, line: l, message }) => {
            assert_eq!(path, Path::new("bad.csv"));
            assert_eq!(l, line, "wrong line in {message:?}");
            for needle in needles {
                assert!(message.contains(needle), "{message:?} does not contain {needle:?}");
            }
            message
        }
        other => panic!("expected a parse error at line {line}, got {other:?}"),
    }
}

fn bits(data: &[f64]) -> Vec<u64> {
    data.iter().map(|v| v.to_bits()).collect()
}

fn write_to_string(rows: usize, cols: usize, data: &[f64], opts: &MmWriteOptions) -> String {
    let mut out = Vec::new();
    write_matrix_market_to(&mut out, rows, cols, data, opts).unwrap();
    String::from_utf8(out).unwrap()
}

fn opts(format: MmFormat, symmetry: MmSymmetry) -> MmWriteOptions {
    MmWriteOptions { format, symmetry, comment: None }
}

// ---------------------------------------------------------------------------
// Reading every kind
// ---------------------------------------------------------------------------

#[track_caller]
fn check_fixture(name: &str, format: MmFormat, field: MmField, symmetry: MmSymmetry, expected: &[&[f64]]) {
    let mm = read_matrix_market(&fixture(name)).unwrap();
    assert_eq!((mm.format, mm.field, mm.symmetry), (format, field, symmetry), "{name}");
    assert_eq!(mm.rows, expected.len(), "{name}");
    assert_eq!(mm.cols, expected[0].len(), "{name}");
    assert_eq!(bits(&mm.data), bits(&col_major(expected)), "{name}: {:?}", mm.data);
}

#[test]
fn reads_real_general() {
    let a: &[&[f64]] = &[&[1.5, -2.0], &[0.0, 3.25], &[1e-3, 0.0]];
    use MmFormat::*;
    check_fixture("real_general_array.mtx", Array, MmField::Real, MmSymmetry::General, a);
    // The (1, 1) entry is listed twice and summed.
    check_fixture("real_general_coordinate.mtx", Coordinate, MmField::Real, MmSymmetry::General, a);
}

#[test]
fn reads_real_symmetric() {
    let a: &[&[f64]] = &[&[4.0, -1.0, 0.5], &[-1.0, 5.0, 0.0], &[0.5, 0.0, 6.0]];
    use MmFormat::*;
    check_fixture("real_symmetric_array.mtx", Array, MmField::Real, MmSymmetry::Symmetric, a);
    let sym = MmSymmetry::Symmetric;
    check_fixture("real_symmetric_coordinate.mtx", Coordinate, MmField::Real, sym, a);
}

#[test]
fn reads_real_skew_symmetric() {
    let a: &[&[f64]] = &[&[0.0, -1.5, 2.0], &[1.5, 0.0, -0.25], &[-2.0, 0.25, 0.0]];
    let skew = MmSymmetry::SkewSymmetric;
    check_fixture("real_skew_array.mtx", MmFormat::Array, MmField::Real, skew, a);
    check_fixture("real_skew_coordinate.mtx", MmFormat::Coordinate, MmField::Real, skew, a);
}

#[test]
fn reads_integer_general() {
    let a: &[&[f64]] = &[&[1.0, -2.0, 3.0], &[4.0, 0.0, -6.0]];
    let general = MmSymmetry::General;
    check_fixture("integer_general_array.mtx", MmFormat::Array, MmField::Integer, general, a);
    // Its banner is in mixed case.
    let coo = MmFormat::Coordinate;
    check_fixture("integer_general_coordinate.mtx", coo, MmField::Integer, general, a);
}

#[test]
fn reads_integer_symmetric() {
    let a: &[&[f64]] = &[&[2.0, -3.0], &[-3.0, 7.0]];
    let sym = MmSymmetry::Symmetric;
    check_fixture("integer_symmetric_array.mtx", MmFormat::Array, MmField::Integer, sym, a);
    let coo = MmFormat::Coordinate;
    check_fixture("integer_symmetric_coordinate.mtx", coo, MmField::Integer, sym, a);
}

#[test]
fn reads_integer_skew_symmetric() {
    let skew = MmSymmetry::SkewSymmetric;
    let a: &[&[f64]] =
        &[&[0.0, -1.0, -2.0, -3.0], &[1.0, 0.0, -4.0, -5.0], &[2.0, 4.0, 0.0, -6.0], &[3.0, 5.0, 6.0, 0.0]];
    check_fixture("integer_skew_array.mtx", MmFormat::Array, MmField::Integer, skew, a);
    let a: &[&[f64]] = &[&[0.0, -1.0, 0.0, 3.0], &[1.0, 0.0, 0.0, 0.0], &[0.0, 0.0, 0.0, -6.0], &[-3.0, 0.0, 6.0, 0.0]];
    let coo = MmFormat::Coordinate;
    check_fixture("integer_skew_coordinate.mtx", coo, MmField::Integer, skew, a);
}

#[test]
fn accepts_crlf_tabs_blank_lines_comments_and_a_bom() {
    let text = "\u{feff}%%MatrixMarket  matrix\tcoordinate REAL general  \r\n\
                \r\n\
                % comment\r\n\
                \t2 2 2 \r\n\
                \r\n\
                % a comment between entries\r\n\
                \t1   2\t-7.5e0\r\n\
                2 1 +.5";
    let mm = read_str(text).unwrap();
    assert_eq!((mm.rows, mm.cols), (2, 2));
    assert_eq!(mm.data, vec![0.0, 0.5, -7.5, 0.0]);
}

#[test]
fn reads_empty_matrices() {
    let mm = read_str("%%MatrixMarket matrix array real general\n0 3\n").unwrap();
    assert_eq!((mm.rows, mm.cols, mm.data.len()), (0, 3, 0));
    let mm = read_str("%%MatrixMarket matrix coordinate real general\n4 0 0\n").unwrap();
    assert_eq!((mm.rows, mm.cols, mm.data.len()), (4, 0, 0));
    let mm = read_str("%%MatrixMarket matrix array real skew-symmetric\n0 0\n").unwrap();
    assert_eq!((mm.rows, mm.cols, mm.data.len()), (0, 0, 0));
    // 1x1 skew-symmetric lists nothing.
    let mm = read_str("%%MatrixMarket matrix array integer skew-symmetric\n1 1\n").unwrap();
    assert_eq!(mm.data, vec![0.0]);
    // A coordinate matrix with no entries is all zeros.
    let mm = read_str("%%MatrixMarket matrix coordinate real general\n2 3 0\n").unwrap();
    assert_eq!(mm.data, vec![0.0; 6]);
}

#[test]
fn integer_values_are_exact() {
    let mm = read_str("%%MatrixMarket matrix array integer general\n2 1\n9007199254740993\n-0\n").unwrap();
    // 2^53 + 1 rounds to the nearest f64.
    assert_eq!(mm.data, vec![9007199254740992.0, 0.0]);
}

// ---------------------------------------------------------------------------
// Bad Matrix Market input: one test per case, checking variant and line
// ---------------------------------------------------------------------------

#[test]
fn bad_empty_file() {
    mm_parse_error("", 1, "empty file");
}

#[test]
fn bad_missing_banner() {
    mm_parse_error("3 3\n1\n", 1, "missing banner");
    mm_parse_error("% MatrixMarket matrix array real general\n1 1\n1\n", 1, "missing banner");
    mm_parse_error("\n%%MatrixMarket matrix array real general\n1 1\n1\n", 1, "missing banner");
}

#[test]
fn bad_garbled_banner() {
    mm_parse_error("%%MatrixMarketmatrix array real general\n1 1\n1\n", 1, "garbled banner");
    mm_parse_error("%%MatrixMarket matrix array real\n1 1\n1\n", 1, "missing the symmetry");
    mm_parse_error("%%MatrixMarket matrix array\n1 1\n1\n", 1, "missing the field");
    mm_parse_error("%%MatrixMarket matrix\n1 1\n1\n", 1, "missing the format");
    mm_parse_error("%%MatrixMarket matrix dense real general\n", 1, "unknown format 'dense'");
    mm_parse_error("%%MatrixMarket matrix array double general\n", 1, "unknown field 'double'");
    mm_parse_error("%%MatrixMarket matrix array real upper\n", 1, "unknown symmetry 'upper'");
    mm_parse_error("%%MatrixMarket matrix array real general x\n", 1, "unexpected 'x'");
}

#[test]
fn bad_matrix_object_missing() {
    mm_parse_error("%%MatrixMarket\n1 1\n1\n", 1, "missing the object");
    mm_parse_error("%%MatrixMarket vector array real general\n", 1, "unsupported object 'vector'");
}

#[test]
fn bad_unsupported_field_or_symmetry() {
    let m = mm_parse_error(
        "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1.0 0.0\n",
        1,
        "unsupported field 'complex'",
    );
    assert!(m.contains("real") && m.contains("integer"), "{m}");
    mm_parse_error("%%MatrixMarket matrix coordinate pattern general\n1 1 1\n1 1\n", 1, "unsupported field 'pattern'");
    mm_parse_error("%%MatrixMarket matrix array real hermitian\n1 1\n1\n", 1, "unsupported symmetry 'hermitian'");
}

#[test]
fn bad_size_line() {
    let head = "%%MatrixMarket matrix array real general\n% comment\n";
    mm_parse_error(&format!("{head}3\n"), 3, "must have 2 numbers");
    mm_parse_error(&format!("{head}3 3 9\n"), 3, "found more");
    mm_parse_error(&format!("{head}3 x\n"), 3, "column count 'x' is not a non-negative integer");
    mm_parse_error(&format!("{head}-3 3\n"), 3, "row count '-3'");
    mm_parse_error(&format!("{head}2.0 2\n"), 3, "row count '2.0'");
    let head = "%%MatrixMarket matrix coordinate real general\n";
    mm_parse_error(&format!("{head}\n3 3\n"), 3, "must have 3 numbers");
    mm_parse_error(&format!("{head}3 3 many\n"), 2, "entry count 'many'");
}

#[test]
fn bad_too_many_entries() {
    let text = "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n% c\n5\n6\n";
    let m = mm_parse_error(text, 8, "too many entries");
    assert!(m.contains("declares 4, found 6"), "{m}");
    let text = "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n\n2 2 2\n";
    let m = mm_parse_error(text, 5, "too many entries");
    assert!(m.contains("declares 1, found 2"), "{m}");
    // A symmetric array lists n(n+1)/2 entries, not n².
    let text = "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n4\n";
    mm_parse_error(text, 6, "declares 3, found 4");
    // An empty matrix lists nothing.
    mm_parse_error("%%MatrixMarket matrix array real general\n0 2\n1\n", 3, "declares 0, found 1");
}

#[test]
fn bad_too_few_entries_reported_at_the_last_line() {
    let text = "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n";
    let m = mm_parse_error(text, 5, "end of file");
    assert!(m.contains("declares 4 entries, found 3"), "{m}");
    // Without a final newline, and with trailing comments and blank lines.
    mm_parse_error("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3", 5, "found 3");
    let text = "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n% c\n\n";
    mm_parse_error(text, 5, "declares 3 entries, found 1");
    let text = "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n";
    mm_parse_error(text, 4, "declares 3 entries, found 2");
    // The same on disk, naming the file.
    let path = fixture("bad_too_few.mtx");
    match read_matrix_market(&path) {
        Err(e @ Error::Parse { .. }) => {
            let Error::Parse { path: p, line, .. } = &e else { unreachable!() };
            assert_eq!((p, *line), (&path, 6));
            assert!(e.to_string().contains("bad_too_few.mtx:6: "), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_truncated_file() {
    mm_parse_error("%%MatrixMarket matrix array real general\n", 1, "size line is missing");
    mm_parse_error("%%MatrixMarket matrix array real general\n% only comments\n\n", 3, "size line is missing");
    // Cut in the middle of an entry.
    let text = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 2";
    mm_parse_error(text, 4, "expected 3 fields 'row column value' in coordinate format, found 2");
}

#[test]
fn bad_non_numeric_tokens() {
    let text = "%%MatrixMarket matrix array real general\n2 1\n1.0\nabc\n";
    mm_parse_error(text, 4, "'abc' is not a number");
    let text = "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.5x\n";
    mm_parse_error(text, 3, "'1.5x' is not a number");
    let text = "%%MatrixMarket matrix coordinate real general\n2 2 1\none 1 1.5\n";
    mm_parse_error(text, 3, "row index 'one' is not a positive integer");
    let text = "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1.0 1.5\n";
    mm_parse_error(text, 3, "column index '1.0'");
    let text = "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1 1\n";
    mm_parse_error(text, 3, "expected 3 fields");
    let text = "%%MatrixMarket matrix array real general\n2 1\n1.0 2.0\n";
    mm_parse_error(text, 3, "one value per line");
}

#[test]
fn bad_index_out_of_range() {
    let head = "%%MatrixMarket matrix coordinate real general\n3 2 2\n1 1 1\n";
    mm_parse_error(&format!("{head}4 1 1\n"), 4, "row index 4 is out of range");
    mm_parse_error(&format!("{head}1 3 1\n"), 4, "column index 3 is out of range");
    mm_parse_error(&format!("{head}0 1 1\n"), 4, "row index 0 is out of range");
    mm_parse_error(&format!("{head}1 -1 1\n"), 4, "column index '-1'");
}

#[test]
fn bad_non_finite_values() {
    for bad in ["nan", "NaN", "inf", "-Infinity", "1e999", "-1e400"] {
        let text = format!("%%MatrixMarket matrix array real general\n2 1\n1\n{bad}\n");
        mm_parse_error(&text, 4, &format!("non-finite value '{bad}'"));
        let text = format!("%%MatrixMarket matrix coordinate real general\n2 1 1\n2 1 {bad}\n");
        mm_parse_error(&text, 3, "non-finite value");
    }
    // An integer too long for f64.
    let big = "9".repeat(400);
    let text = format!("%%MatrixMarket matrix array integer general\n1 1\n{big}\n");
    mm_parse_error(&text, 3, "non-finite value");
    // Duplicates that overflow when summed.
    let text = "%%MatrixMarket matrix coordinate real general\n1 1 2\n1 1 1e308\n1 1 1e308\n";
    mm_parse_error(text, 4, "sum to a non-finite value");
}

#[test]
fn bad_symmetric_not_square() {
    let text = "%%MatrixMarket matrix array real symmetric\n% c\n3 4\n";
    mm_parse_error(text, 3, "must be square");
    let text = "%%MatrixMarket matrix coordinate real skew-symmetric\n2 1 0\n";
    mm_parse_error(text, 2, "must be square");
}

#[test]
fn bad_integer_field_with_non_integer() {
    let head = "%%MatrixMarket matrix array integer general\n3 1\n1\n";
    mm_parse_error(&format!("{head}1.5\n2\n"), 4, "'1.5' is not an integer");
    mm_parse_error(&format!("{head}1e3\n2\n"), 4, "'1e3' is not an integer");
    mm_parse_error(&format!("{head}2.0\n2\n"), 4, "'2.0' is not an integer");
    mm_parse_error(&format!("{head}-\n2\n"), 4, "'-' is not an integer");
    let text = "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 0.5\n";
    mm_parse_error(text, 3, "not an integer");
}

#[test]
fn bad_upper_triangle_entry_in_symmetric_file() {
    let text = "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1.0\n1 3 2.0\n";
    mm_parse_error(text, 4, "entry (1, 3) is in the upper triangle");
    let text = "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 1\n2 3 1\n";
    mm_parse_error(text, 3, "upper triangle");
}

#[test]
fn bad_diagonal_entry_in_skew_symmetric_file() {
    let text = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.0\n2 2 0.0\n";
    mm_parse_error(text, 4, "diagonal entry (2, 2)");
}

#[test]
fn bad_sizes_too_large_for_dense_storage() {
    let head = "%%MatrixMarket matrix array real general\n";
    let m = mm_parse_error(&format!("{head}100000 100000\n"), 2, "too large for dense storage");
    assert!(m.contains("10000000000"), "{m}");
    let max = usize::MAX;
    mm_parse_error(&format!("{head}{max} 2\n"), 2, "overflows");
    let head = "%%MatrixMarket matrix coordinate real symmetric\n";
    mm_parse_error(&format!("{head}65536 65536 1\n1 1 1\n"), 2, "too large");
    // Exactly at the limit plus one.
    let head = "%%MatrixMarket matrix coordinate real general\n";
    mm_parse_error(&format!("{head}{} 1 0\n", MAX_DENSE_ENTRIES + 1), 2, "too large");
    // A size that does not even fit in usize.
    mm_parse_error(&format!("{head}99999999999999999999999 1 0\n"), 2, "row count");
}

#[test]
fn bad_utf8_names_the_line() {
    let mut text = b"%%MatrixMarket matrix array real general\n1 1\n".to_vec();
    text.extend_from_slice(b"1.\xff\n");
    match read_matrix_market_from(Cursor::new(text), Path::new("bad.mtx")) {
        Err(Error::Parse { line: 3, message, .. }) => assert!(message.contains("UTF-8")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn missing_file_is_an_io_error() {
    let path = tmp("does-not-exist.mtx");
    match read_matrix_market(&path) {
        Err(Error::Io { path: p, .. }) => assert_eq!(p, path),
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------
// Writing and round trips
// ---------------------------------------------------------------------------

#[test]
fn writes_the_expected_text() {
    let data = col_major(&[&[1.0, 0.0, 1e-300], &[-0.5, 0.1, 0.0]]);
    let o = MmWriteOptions {
        format: MmFormat::Array,
        symmetry: MmSymmetry::General,
        comment: Some("first line\n\nthird".to_string()),
    };
    assert_eq!(
        write_to_string(2, 3, &data, &o),
        "%%MatrixMarket matrix array real general\n% first line\n%\n% third\n2 3\n\
         1.0\n-0.5\n0.0\n0.1\n1e-300\n0.0\n"
    );
    let o = opts(MmFormat::Coordinate, MmSymmetry::General);
    assert_eq!(
        write_to_string(2, 3, &data, &o),
        "%%MatrixMarket matrix coordinate real general\n2 3 4\n1 1 1.0\n2 1 -0.5\n2 2 0.1\n\
         1 3 1e-300\n"
    );
    let sym = col_major(&[&[2.0, 3.0], &[3.0, 0.0]]);
    let o = opts(MmFormat::Array, MmSymmetry::Symmetric);
    assert_eq!(write_to_string(2, 2, &sym, &o), "%%MatrixMarket matrix array real symmetric\n2 2\n2.0\n3.0\n0.0\n");
    let o = opts(MmFormat::Coordinate, MmSymmetry::Symmetric);
    assert_eq!(
        write_to_string(2, 2, &sym, &o),
        "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 2.0\n2 1 3.0\n"
    );
    let skew = col_major(&[&[0.0, -4.0], &[4.0, 0.0]]);
    let o = opts(MmFormat::Array, MmSymmetry::SkewSymmetric);
    assert_eq!(write_to_string(2, 2, &skew, &o), "%%MatrixMarket matrix array real skew-symmetric\n2 2\n4.0\n");
    // A zero matrix in coordinate format has no entries.
    let o = opts(MmFormat::Coordinate, MmSymmetry::General);
    assert_eq!(
        write_to_string(2, 2, &[0.0, -0.0, 0.0, 0.0], &o),
        "%%MatrixMarket matrix coordinate real general\n2 2 0\n"
    );
}

#[test]
fn round_trips_through_files() {
    let general = col_major(&[&[1.0, -2.5, 0.0], &[0.0, 1e-310, 3.0], &[7.0, 0.0, -1e300]]);
    let symmetric = col_major(&[&[4.0, 0.5, 0.0], &[0.5, -0.0, 1e-7], &[0.0, 1e-7, 9.0]]);
    let skew = col_major(&[&[0.0, 0.5, -1.0], &[-0.5, 0.0, 3.0], &[1.0, -3.0, 0.0]]);
    let cases =
        [(MmSymmetry::General, &general), (MmSymmetry::Symmetric, &symmetric), (MmSymmetry::SkewSymmetric, &skew)];
    for (symmetry, data) in cases {
        for format in [MmFormat::Array, MmFormat::Coordinate] {
            let path = tmp(&format!("round_trip_{format}_{symmetry}.mtx"));
            let o = MmWriteOptions { format, symmetry, comment: Some("gpumat test".into()) };
            write_matrix_market(&path, 3, 3, data, &o).unwrap();
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(text.starts_with(&format!("%%MatrixMarket matrix {format} real {symmetry}\n% gpumat test\n")));
            let mm = read_matrix_market(&path).unwrap();
            assert_eq!((mm.rows, mm.cols), (3, 3));
            assert_eq!((mm.format, mm.field, mm.symmetry), (format, MmField::Real, symmetry));
            // Bit-exact, except that coordinate format drops -0.0 and an
            // upper-triangle zero takes the lower one's sign.
            assert_eq!(mm.data, *data, "{format} {symmetry}");
            if format == MmFormat::Array && symmetry == MmSymmetry::General {
                assert_eq!(bits(&mm.data), bits(data));
            }
        }
    }
}

#[test]
fn round_trips_empty_matrices() {
    for format in [MmFormat::Array, MmFormat::Coordinate] {
        for (rows, cols, symmetry) in
            [(0, 3, MmSymmetry::General), (2, 0, MmSymmetry::General), (0, 0, MmSymmetry::Symmetric)]
        {
            let text = write_to_string(rows, cols, &[], &opts(format, symmetry));
            let mm = read_str(&text).unwrap();
            assert_eq!((mm.rows, mm.cols, mm.data.len()), (rows, cols, 0), "{text}");
        }
    }
}

#[test]
fn writing_non_finite_values_is_an_error() {
    let path = tmp("non_finite.mtx");
    let _ = std::fs::remove_file(&path);
    let data = [1.0, 2.0, 3.0, f64::INFINITY];
    match write_matrix_market(&path, 2, 2, &data, &MmWriteOptions::default()) {
        Err(Error::NonFinite { row: 2, col: 2, value, what }) => {
            assert_eq!(value, f64::INFINITY);
            assert!(what.contains("non_finite.mtx"), "{what}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!path.exists(), "no file is created when the checks fail");
    let mut out = Vec::new();
    let r = write_matrix_market_to(&mut out, 1, 2, &[f64::NAN, 0.0], &MmWriteOptions::default());
    assert!(matches!(r, Err(Error::NonFinite { row: 1, col: 1, .. })), "{r:?}");
    assert!(out.is_empty());
}

#[test]
fn writing_a_non_symmetric_matrix_as_symmetric_is_an_error() {
    let data = col_major(&[&[1.0, 2.0], &[2.000001, 1.0]]);
    let mut out = Vec::new();
    for format in [MmFormat::Array, MmFormat::Coordinate] {
        let r = write_matrix_market_to(&mut out, 2, 2, &data, &opts(format, MmSymmetry::Symmetric));
        match r {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("not symmetric"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
    let skew = MmSymmetry::SkewSymmetric;
    let r = write_matrix_market_to(&mut out, 2, 2, &[0.0, 1.0, 1.0, 0.0], &opts(MmFormat::Array, skew));
    assert!(matches!(r, Err(Error::InvalidArgument(m)) if m.contains("not skew-symmetric")));
    let r = write_matrix_market_to(&mut out, 2, 2, &[1.0, 1.0, -1.0, 0.0], &opts(MmFormat::Array, skew));
    assert!(matches!(r, Err(Error::InvalidArgument(m)) if m.contains("diagonal")));
    let sym = opts(MmFormat::Array, MmSymmetry::Symmetric);
    let r = write_matrix_market_to(&mut out, 2, 3, &[0.0; 6], &sym);
    assert!(matches!(r, Err(Error::InvalidArgument(m)) if m.contains("square")));
    assert!(out.is_empty());
}

#[test]
fn writing_data_of_the_wrong_length_is_an_error() {
    let mut out = Vec::new();
    let r = write_matrix_market_to(&mut out, 2, 2, &[0.0; 3], &MmWriteOptions::default());
    assert!(matches!(r, Err(Error::InvalidArgument(m)) if m.contains("needs 4 entries, got 3")));
    let r = write_matrix_market_to(&mut out, usize::MAX, 2, &[], &MmWriteOptions::default());
    assert!(matches!(r, Err(Error::InvalidArgument(_))));
}

#[test]
fn writing_to_a_bad_path_is_an_io_error() {
    let path = tmp("no-such-dir/out.mtx");
    let r = write_matrix_market(&path, 1, 1, &[1.0], &MmWriteOptions::default());
    assert!(matches!(r, Err(Error::Io { path: p, .. }) if p == path));
}

/// Any finite f64, with the hard cases (±0, subnormals, extremes) common.
fn finite_f64() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![
        4 => any::<u64>().prop_map(f64::from_bits).prop_filter("finite", |v| v.is_finite()),
        1 => (1u64..(1 << 52), any::<bool>())
            .prop_map(|(m, neg)| if neg { -f64::from_bits(m) } else { f64::from_bits(m) }),
        1 => prop::sample::select(vec![
            0.0, -0.0, 0.1, -0.1, 1.0, 1e-300, 1e300, f64::MAX, f64::MIN, f64::MIN_POSITIVE,
            f64::EPSILON, 5e-324, -5e-324, 123456789.0, 1e16, 1e17, 2.5e-5
        ]),
        2 => (-1000i32..1000).prop_map(f64::from),
    ]
}

/// A finite f64 that is often zero (for coordinate format).
fn sparse_f64() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![2 => Just(0.0), 1 => Just(-0.0), 3 => finite_f64()]
}

fn matrix(value: impl Strategy<Value = f64> + Clone) -> impl Strategy<Value = (usize, usize, Vec<f64>)> {
    (0usize..6, 0usize..6).prop_flat_map(move |(m, n)| (Just(m), Just(n), prop::collection::vec(value.clone(), m * n)))
}

/// An n×n matrix made (skew-)symmetric from its lower triangle.
fn symmetric(value: impl Strategy<Value = f64> + Clone, skew: bool) -> impl Strategy<Value = (usize, Vec<f64>)> {
    (0usize..6).prop_flat_map(move |n| (Just(n), prop::collection::vec(value.clone(), n * n))).prop_map(
        move |(n, mut data)| {
            for j in 0..n {
                if skew {
                    data[j + j * n] = 0.0;
                }
                for i in j + 1..n {
                    let v = data[i + j * n];
                    data[j + i * n] = if skew { -v } else { v };
                }
            }
            (n, data)
        },
    )
}

fn round_trip(rows: usize, cols: usize, data: &[f64], o: &MmWriteOptions) -> MatrixMarket {
    let text = write_to_string(rows, cols, data, o);
    let mm = read_str(&text).unwrap();
    assert_eq!((mm.rows, mm.cols), (rows, cols));
    assert_eq!((mm.format, mm.symmetry), (o.format, o.symmetry));
    mm
}

/// The bits that a coordinate round trip gives: zeros are not written and
/// read back as +0.0.
fn coordinate_bits(data: &[f64]) -> Vec<u64> {
    data.iter().map(|&v| if v == 0.0 { 0 } else { v.to_bits() }).collect()
}

proptest! {
    #[test]
    fn array_general_round_trip_is_bit_exact((m, n, data) in matrix(finite_f64())) {
        let mm = round_trip(m, n, &data, &opts(MmFormat::Array, MmSymmetry::General));
        prop_assert_eq!(bits(&mm.data), bits(&data));
    }

    #[test]
    fn array_symmetric_round_trip_is_bit_exact((n, data) in symmetric(finite_f64(), false)) {
        let mm = round_trip(n, n, &data, &opts(MmFormat::Array, MmSymmetry::Symmetric));
        prop_assert_eq!(bits(&mm.data), bits(&data));
    }

    #[test]
    fn array_skew_round_trip_is_bit_exact((n, mut data) in symmetric(finite_f64(), true)) {
        let mm = round_trip(n, n, &data, &opts(MmFormat::Array, MmSymmetry::SkewSymmetric));
        for j in 0..n {
            data[j + j * n] = 0.0; // the diagonal is not written and reads as +0.0
        }
        prop_assert_eq!(bits(&mm.data), bits(&data));
    }

    #[test]
    fn coordinate_general_round_trip_is_bit_exact((m, n, data) in matrix(sparse_f64())) {
        let mm = round_trip(m, n, &data, &opts(MmFormat::Coordinate, MmSymmetry::General));
        prop_assert_eq!(bits(&mm.data), coordinate_bits(&data));
    }

    #[test]
    fn coordinate_symmetric_round_trip_is_bit_exact((n, data) in symmetric(sparse_f64(), false)) {
        let mm = round_trip(n, n, &data, &opts(MmFormat::Coordinate, MmSymmetry::Symmetric));
        prop_assert_eq!(bits(&mm.data), coordinate_bits(&data));
    }

    #[test]
    fn coordinate_skew_round_trip_is_bit_exact((n, data) in symmetric(sparse_f64(), true)) {
        let skew = opts(MmFormat::Coordinate, MmSymmetry::SkewSymmetric);
        let mm = round_trip(n, n, &data, &skew);
        prop_assert_eq!(bits(&mm.data), coordinate_bits(&data));
    }
}

// ---------------------------------------------------------------------------
// The readers never panic
// ---------------------------------------------------------------------------

const VALID_FILES: [&str; 4] = [
    "%%MatrixMarket matrix array real general\n% c\n3 2\n1.5\n0\n1e-3\n-2.0\n3.25\n0.0\n",
    "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4.0\n2 1 -1\n3 1 0.5\n3 3 6\n",
    "%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n-2\n3\n",
    "%%MatrixMarket matrix coordinate integer skew-symmetric\n4 4 2\n2 1 1\n4 3 -6\n",
];

#[derive(Debug, Clone)]
enum Mutation {
    Replace(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let byte = prop_oneof![prop::sample::select(b"0123456789 \t\n\r%-+.eE,abz".to_vec()), any::<u8>(),];
    prop_oneof![
        (any::<usize>(), byte.clone()).prop_map(|(i, b)| Mutation::Replace(i, b)),
        (any::<usize>(), byte).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(text: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut t = text.to_vec();
    for m in mutations {
        let len = t.len().max(1);
        match *m {
            Mutation::Replace(i, b) if !t.is_empty() => t[i % len] = b,
            Mutation::Insert(i, b) => t.insert(i % (t.len() + 1), b),
            Mutation::Delete(i) if !t.is_empty() => {
                t.remove(i % len);
            }
            Mutation::Truncate(i) => t.truncate(i % (t.len() + 1)),
            _ => {}
        }
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn matrix_market_reader_never_panics_on_random_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..300),
        banner in any::<bool>(),
    ) {
        let mut input = if banner {
            b"%%MatrixMarket matrix coordinate real general\n".to_vec()
        } else {
            Vec::new()
        };
        input.extend_from_slice(&bytes);
        let _ = read_matrix_market_from(Cursor::new(input), Path::new("fuzz.mtx"));
    }

    #[test]
    fn matrix_market_reader_never_panics_on_mutated_files(
        which in 0usize..VALID_FILES.len(),
        mutations in prop::collection::vec(mutation(), 1..5),
    ) {
        let input = apply(VALID_FILES[which].as_bytes(), &mutations);
        if let Ok(mm) = read_matrix_market_from(Cursor::new(input), Path::new("fuzz.mtx")) {
            prop_assert_eq!(mm.data.len(), mm.rows * mm.cols);
            prop_assert!(mm.data.iter().all(|v| v.is_finite()));
        }
    }

    #[test]
    fn csv_reader_never_panics(
        bytes in prop::collection::vec(
            prop_oneof![prop::sample::select(b"0123456789,.\"\n\r -e".to_vec()), any::<u8>()],
            0..200,
        ),
    ) {
        let mut input = b"a,b\n".to_vec();
        input.extend_from_slice(&bytes);
        if let Ok(t) = read_csv_from(&input[..], Path::new("fuzz.csv")) {
            prop_assert!(t.data.iter().all(|c| c.len() == t.nrows()));
        }
    }
}

// ---------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------

#[test]
fn csv_reads_a_good_file() {
    let text = " x ,\"y, scaled\" ,z\n1, 2.5 ,-3e2\n\n0.1,-0,  7\n";
    let t = read_csv_from(text.as_bytes(), Path::new("good.csv")).unwrap();
    assert_eq!(t.columns, vec!["x", "y, scaled", "z"]);
    assert_eq!(t.nrows(), 2);
    assert_eq!(t.ncols(), 3);
    assert_eq!(t.column("x").unwrap(), &[1.0, 0.1]);
    assert_eq!(t.column("y, scaled").unwrap(), &[2.5, -0.0]);
    assert_eq!(t.column("z").unwrap(), &[-300.0, 7.0]);
    assert_eq!(t.data.len(), 3);
}

#[test]
fn csv_reads_a_file_with_crlf_and_a_bom() {
    let path = tmp("good.csv");
    std::fs::write(&path, "\u{feff}t,v\r\n0,1\r\n1,2\r\n").unwrap();
    let t = read_csv(&path).unwrap();
    assert_eq!(t, Table { columns: vec!["t".into(), "v".into()], data: vec![vec![0.0, 1.0], vec![1.0, 2.0]] });
}

#[test]
fn csv_missing_file_is_an_io_error() {
    let path = tmp("missing.csv");
    assert!(matches!(read_csv(&path), Err(Error::Io { path: p, .. }) if p == path));
}

#[test]
fn csv_unknown_column_lists_the_available_ones() {
    let t = read_csv_from("a,b\n1,2\n".as_bytes(), Path::new("t.csv")).unwrap();
    match t.column("c") {
        Err(Error::InvalidArgument(m)) => {
            assert!(m.contains("'c'") && m.contains("'a', 'b'"), "{m}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn csv_bad_non_numeric_field() {
    csv_parse_error("a,b\n1,2\n3,four\n", 3, &["column 'b'", "'four' is not a number"]);
    csv_parse_error("a,b\n1,\n", 2, &["column 'b'", "empty field"]);
    // Line numbers count physical lines, also across blank lines.
    csv_parse_error("a,b\n\n\n1,2\nx,2\n", 5, &["column 'a'", "'x'"]);
}

#[test]
fn csv_bad_non_finite_field() {
    for bad in ["NaN", "inf", "-infinity", "1e999"] {
        let text = format!("a,b\n1,2\n3,{bad}\n");
        csv_parse_error(&text, 3, &["column 'b'", "non-finite value", bad]);
    }
}

#[test]
fn csv_bad_ragged_rows() {
    csv_parse_error("a,b,c\n1,2,3\n4,5\n", 3, &["expected 3 fields", "found 2"]);
    csv_parse_error("a,b\n1,2\n4,5,6\n", 3, &["expected 2 fields", "found 3"]);
}

#[test]
fn csv_bad_empty_file_or_header_only() {
    csv_parse_error("", 1, &["no data rows"]);
    csv_parse_error("a,b\n", 2, &["no data rows"]);
    csv_parse_error("a,b", 1, &["no data rows"]);
}

#[test]
fn csv_bad_header() {
    csv_parse_error("a,b,a\n1,2,3\n", 1, &["duplicate column name 'a'", "columns 1 and 3"]);
    csv_parse_error("a, b ,b\n1,2,3\n", 1, &["duplicate column name 'b'"]);
    csv_parse_error("a,,c\n1,2,3\n", 1, &["column 2", "empty name"]);
}

#[test]
fn csv_bad_utf8_names_the_line() {
    let text = b"a,b\n1,2\n3,\xff\n";
    match read_csv_from(&text[..], Path::new("bad.csv")) {
        Err(Error::Parse { line: 3, message, .. }) => assert!(message.contains("UTF-8")),
        other => panic!("{other:?}"),
    }
}
