//! Property tests of the file readers over hostile input: arbitrary bytes,
//! and valid Matrix Market and CSV files mutated by truncation, token swaps,
//! huge numbers, lying size lines, NaN and infinity, and byte edits.
//!
//! Every input must end in `Ok` or in an error whose message is one line
//! (no line break), never in a panic, and must not allocate more than
//! [`bound`]: 64 bytes per input byte plus 16 MiB (the dense storage of the
//! largest size line that three byte edits make of the valid files). A size
//! line of 10⁹ × 10⁹ is refused with no allocation beyond 64 KiB.
//!
//! `GPUMAT_FUZZ_CASES` sets the number of cases of each property (300 by
//! default, a few seconds in CI). The long run, once, on the shared 2-core
//! CPU machine, `GPUMAT_FUZZ_CASES=100000` with `RUST_TEST_THREADS=2` and
//! the crate at `opt-level = 2`: 100 000 cases of each of the five byte and
//! mutation properties (1 000 of the wide-and-long tables), all passed, in
//! 96 s of wall time (`bench/results/2026-11-25-fuzz-parsers-cpu.md`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Cursor;
use std::path::Path;

use gpumat::io::{MpsFormat, read_csv_from, read_matrix_market_from, read_mps_from};
use proptest::prelude::*;
use proptest::test_runner::Config;

// ---------------------------------------------------------------------------
// Allocation accounting: the peak bytes held by this thread during a read
// ---------------------------------------------------------------------------

struct Counting;

thread_local! {
    static HELD: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note(delta: isize) {
    // `try_with`: the thread's locals may be gone while it exits.
    let _ = HELD.try_with(|h| {
        let now = h.get() + delta;
        h.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

// SAFETY: forwards to the system allocator; the bookkeeping allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as isize);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Both blocks may be held at once while the data moves.
        note(new_size as isize);
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        note(-(layout.size() as isize));
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result and the most bytes it held at once beyond
/// what was held before.
fn peak<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = HELD.with(Cell::get);
    PEAK.with(|p| p.set(before));
    let r = f();
    (r, (PEAK.with(Cell::get) - before).max(0) as usize)
}

/// The most a read of `len` input bytes may allocate.
fn bound(len: usize) -> usize {
    64 * len + (16 << 20)
}

/// The read's outcome as the properties check it: no panic (proptest fails
/// a panicking case), a one-line error, and the allocation bound.
fn check(outcome: gpumat::Result<()>, held: usize, len: usize) -> Result<(), TestCaseError> {
    if let Err(e) = outcome {
        let text = e.to_string();
        prop_assert!(!text.contains(['\n', '\r']), "error of more than one line: {:?}", text);
    }
    prop_assert!(held <= bound(len), "{} bytes held for {} input bytes (bound {})", held, len, bound(len));
    Ok(())
}

fn read_mm(input: &[u8]) -> Result<(), TestCaseError> {
    let (outcome, held) = peak(|| {
        read_matrix_market_from(Cursor::new(input), Path::new("fuzz.mtx")).map(|mm| {
            assert_eq!(mm.data.len(), mm.rows * mm.cols);
            assert!(mm.data.iter().all(|v| v.is_finite()));
        })
    });
    check(outcome, held, input.len())
}

fn read_table(input: &[u8]) -> Result<(), TestCaseError> {
    let (outcome, held) = peak(|| {
        read_csv_from(input, Path::new("fuzz.csv")).map(|t| {
            assert!(t.data.iter().all(|c| c.len() == t.nrows()));
            assert!(t.data.iter().flatten().all(|v| v.is_finite()));
        })
    });
    check(outcome, held, input.len())
}

fn cases() -> u32 {
    std::env::var("GPUMAT_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(300)
}

// ---------------------------------------------------------------------------
// Mutations
// ---------------------------------------------------------------------------

const MATRIX_MARKET: [&str; 6] = [
    "%%MatrixMarket matrix array real general\n% c\n3 2\n1.5\n0\n1e-3\n-2.0\n3.25\n0.0\n",
    "%%MatrixMarket matrix coordinate real general\n3 4 3\n1 1 4.0\n3 4 -1\n2 2 0.5\n",
    "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4.0\n2 1 -1\n3 1 0.5\n3 3 6\n",
    "%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n-2\n3\n",
    "%%MatrixMarket matrix array real symmetric\r\n2 2\r\n1\r\n2\r\n3\r\n",
    "%%MatrixMarket matrix coordinate integer skew-symmetric\n4 4 2\n2 1 1\n4 3 -6\n",
];

const CSV: [&str; 3] = [
    "x,y,sigma\n1,2.5,0.1\n2,3.5,0.2\n3,-1e3,1\n",
    "\u{feff} t , \"value, scaled\"\n0.5 , 1\n\n1.5,2\n",
    "a\n1\n2\n3\n4\n",
];

/// Numbers that every nonzero product with a dimension takes beyond the
/// dense limit of 2³¹ entries, or beyond `usize`, or that are not numbers.
const HUGE: [&str; 9] = [
    "2147483649",
    "4294967296",
    "10000000000",
    "1000000000000000000",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "1e308",
    "99999999999999999999999999999",
];

const ODD: [&str; 12] = ["NaN", "nan", "inf", "-inf", "Infinity", "1e309", "-0", "0", "1", "2", "+3", "0x10"];

#[derive(Debug, Clone)]
enum Edit {
    /// Cut the text after this many bytes.
    Truncate(usize),
    /// Exchange two whitespace-separated tokens.
    Swap(usize, usize),
    /// Replace a token by a huge number.
    Huge(usize, usize),
    /// Replace a token by NaN, an infinity, a sign or a small number.
    Odd(usize, usize),
    /// Remove a line, or repeat it.
    DropLine(usize),
    RepeatLine(usize),
    /// Replace, insert or delete a byte.
    Byte(usize, u8, u8),
}

fn edit() -> impl Strategy<Value = Edit> {
    let byte = prop_oneof![prop::sample::select(b"0123456789 \t\n\r%-+.eE,\"abz".to_vec()), any::<u8>()];
    prop_oneof![
        any::<usize>().prop_map(Edit::Truncate),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Edit::Swap(i, j)),
        (any::<usize>(), 0..HUGE.len()).prop_map(|(i, k)| Edit::Huge(i, k)),
        (any::<usize>(), 0..ODD.len()).prop_map(|(i, k)| Edit::Odd(i, k)),
        any::<usize>().prop_map(Edit::DropLine),
        any::<usize>().prop_map(Edit::RepeatLine),
        (any::<usize>(), byte, 0u8..3).prop_map(|(i, b, how)| Edit::Byte(i, b, how)),
    ]
}

/// The byte ranges of the tokens of `t` (split at ASCII whitespace and commas).
fn tokens(t: &[u8]) -> Vec<(usize, usize)> {
    let sep = |b: u8| b.is_ascii_whitespace() || b == b',';
    let mut out = Vec::new();
    let mut start = None;
    for (i, &b) in t.iter().chain(std::iter::once(&b' ')).enumerate() {
        match (start, sep(b)) {
            (None, false) => start = Some(i),
            (Some(s), true) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    out
}

fn replace(t: &mut Vec<u8>, (s, e): (usize, usize), with: &[u8]) {
    t.splice(s..e, with.iter().copied());
}

fn lines(t: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut s = 0;
    for (i, &b) in t.iter().enumerate() {
        if b == b'\n' {
            out.push((s, i + 1));
            s = i + 1;
        }
    }
    if s < t.len() {
        out.push((s, t.len()));
    }
    out
}

fn apply(text: &str, edits: &[Edit]) -> Vec<u8> {
    let mut t = text.as_bytes().to_vec();
    for e in edits {
        let toks = tokens(&t);
        let lns = lines(&t);
        let tok = |i: usize| (!toks.is_empty()).then(|| toks[i % toks.len()]);
        let line = |i: usize| (!lns.is_empty()).then(|| lns[i % lns.len()]);
        match *e {
            Edit::Truncate(i) => t.truncate(i % (t.len() + 1)),
            Edit::Swap(i, j) => {
                if let (Some(a), Some(b)) = (tok(i), tok(j)) {
                    let (a, b) = if a.0 <= b.0 { (a, b) } else { (b, a) };
                    if a != b {
                        let (ta, tb) = (t[a.0..a.1].to_vec(), t[b.0..b.1].to_vec());
                        replace(&mut t, b, &ta);
                        replace(&mut t, a, &tb);
                    }
                }
            }
            Edit::Huge(i, k) => {
                if let Some(r) = tok(i) {
                    replace(&mut t, r, HUGE[k].as_bytes());
                }
            }
            Edit::Odd(i, k) => {
                if let Some(r) = tok(i) {
                    replace(&mut t, r, ODD[k].as_bytes());
                }
            }
            Edit::DropLine(i) => {
                if let Some(r) = line(i) {
                    replace(&mut t, r, b"");
                }
            }
            Edit::RepeatLine(i) => {
                if let Some((s, e)) = line(i) {
                    let copy = t[s..e].to_vec();
                    t.splice(e..e, copy);
                }
            }
            Edit::Byte(i, b, how) => match how {
                0 if !t.is_empty() => {
                    let n = t.len();
                    t[i % n] = b;
                }
                1 => t.insert(i % (t.len() + 1), b),
                _ if !t.is_empty() => {
                    let n = t.len();
                    t.remove(i % n);
                }
                _ => {}
            },
        }
    }
    t
}

/// Byte edits are at most three, so that digits inserted into a size line
/// cannot declare more than the bound's 16 MiB; the other edits take
/// tokens only from `HUGE` (refused) and `ODD` (small).
fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec(edit(), 1..6)
        .prop_filter("at most three byte edits", |es| es.iter().filter(|e| matches!(e, Edit::Byte(..))).count() <= 3)
}

proptest! {
    #![proptest_config(Config { cases: cases(), failure_persistence: None, ..Config::default() })]

    #[test]
    fn matrix_market_arbitrary_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..400),
        banner in 0usize..3,
    ) {
        let mut input = match banner {
            0 => b"%%MatrixMarket matrix coordinate real general\n".to_vec(),
            1 => b"%%MatrixMarket matrix array real symmetric\n".to_vec(),
            _ => Vec::new(),
        };
        input.extend_from_slice(&bytes);
        read_mm(&input)?;
    }

    #[test]
    fn matrix_market_mutated_files(which in 0..MATRIX_MARKET.len(), edits in edits()) {
        read_mm(&apply(MATRIX_MARKET[which], &edits))?;
    }

    #[test]
    fn matrix_market_lying_size_lines(
        which in 0..MATRIX_MARKET.len(),
        rows in prop_oneof![0usize..50, Just(3_000_000_000usize), Just(usize::MAX)],
        cols in prop_oneof![0usize..50, Just(3_000_000_000usize), Just(usize::MAX)],
        entries in prop_oneof![0usize..100, Just(usize::MAX)],
    ) {
        // The size line replaced, the entries kept: too few, too many, or
        // out of range, and dimensions far beyond the machine.
        let text = MATRIX_MARKET[which];
        let lines: Vec<&str> = text.lines().collect();
        let k = lines.iter().skip(1).position(|l| !l.starts_with('%')).unwrap() + 1;
        let size = if text.contains("coordinate") { format!("{rows} {cols} {entries}") } else { format!("{rows} {cols}") };
        let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        out[k] = size;
        read_mm(out.join("\n").as_bytes())?;
    }

    #[test]
    fn csv_arbitrary_bytes(
        bytes in prop::collection::vec(
            prop_oneof![prop::sample::select(b"0123456789,.\"\n\r -eNaIf".to_vec()), any::<u8>()],
            0..400,
        ),
        header in any::<bool>(),
    ) {
        let mut input = if header { b"a,b\n".to_vec() } else { Vec::new() };
        input.extend_from_slice(&bytes);
        read_table(&input)?;
    }

    #[test]
    fn csv_mutated_files(which in 0..CSV.len(), edits in edits()) {
        read_table(&apply(CSV[which], &edits))?;
    }
}

proptest! {
    #![proptest_config(Config { cases: cases().min(1000), failure_persistence: None, ..Config::default() })]

    /// Many columns and rows: the table grows with the file, within the bound.
    #[test]
    fn csv_wide_and_long_tables(cols in 1usize..300, rows in 0usize..300, value in prop::sample::select(ODD.to_vec())) {
        let header: Vec<String> = (0..cols).map(|j| format!("c{j}")).collect();
        let mut text = header.join(",") + "\n";
        for _ in 0..rows {
            text += &vec![value; cols].join(",");
            text += "\n";
        }
        read_table(text.as_bytes())?;
    }
}

/// The reproduction: a size line of 10⁹ × 10⁹ is refused before anything
/// is allocated, in both formats and with a lying entry count.
#[test]
fn a_billion_squared_is_refused_without_allocating() {
    for text in [
        "%%MatrixMarket matrix array real general\n1000000000 1000000000\n1\n",
        "%%MatrixMarket matrix coordinate real general\n1000000000 1000000000 1\n1 1 1\n",
        "%%MatrixMarket matrix coordinate real symmetric\n1000000000 1000000000 18446744073709551615\n",
    ] {
        let (r, held) = peak(|| read_matrix_market_from(Cursor::new(text.as_bytes()), Path::new("big.mtx")));
        let e = r.expect_err(text).to_string();
        assert!(e.contains("too large") && !e.contains('\n'), "{e}");
        assert!(held < 64 << 10, "{held} bytes allocated to refuse {text:?}");
    }
}

/// A quoted CSV field may hold a line break or a carriage return; the error
/// that quotes it is still one line.
#[test]
fn quoted_line_breaks_stay_on_one_line() {
    for text in ["a\n\"1\n2\"\n", "a,b\n1,\"x\ry\"\n", "\"a\nb\",c\n1,\"\"\n", "a,\"a\"\n1,2\n"] {
        let e = read_csv_from(text.as_bytes(), Path::new("q.csv")).expect_err(text).to_string();
        assert!(!e.contains(['\n', '\r']), "{e:?}");
    }
    let text = "%%MatrixMarket matrix array real general\n1 1\n1\r2\n";
    let e = read_matrix_market_from(Cursor::new(text), Path::new("q.mtx")).expect_err(text).to_string();
    assert!(!e.contains(['\n', '\r']), "{e:?}");
}

fn read_lp(input: &[u8]) -> Result<(), TestCaseError> {
    for format in [MpsFormat::Free, MpsFormat::Fixed] {
        let (outcome, held) = peak(|| {
            read_mps_from(Cursor::new(input), Path::new("fuzz.mps"), format).map(|lp| {
                let (m, n) = (lp.rows.len(), lp.columns.len());
                assert!(lp.entries.iter().all(|&(i, j, v)| i < m && j < n && v.is_finite()));
                assert!([lp.c.len(), lp.lower.len(), lp.upper.len(), lp.integer.len()].iter().all(|&l| l == n));
                assert!(lp.lower.iter().zip(&lp.upper).all(|(l, u)| l <= u));
            })
        });
        check(outcome, held, input.len())?;
    }
    Ok(())
}

const MPS: [&str; 2] = [
    include_str!("data/lp/afiro.mps"),
    "NAME X\nOBJSENSE\n    MAX\nROWS\n N  C\n L  A\n E  B\nCOLUMNS\n    M  'MARKER'  'INTORG'\n    X  C  1  A  2\n    M  'MARKER'  'INTEND'\n    Y  B  -1\nRHS\n    R  A  4  C  1\nRANGES\n    R  B  -2\nBOUNDS\n UP B  X  -1\n FR B  Y\nENDATA\n",
];

proptest! {
    #![proptest_config(Config { cases: cases(), failure_persistence: None, ..Config::default() })]

    #[test]
    fn mps_arbitrary_bytes(
        bytes in prop::collection::vec(
            prop_oneof![prop::sample::select(b"NROWSCLUMEGBDAXP 0123456789.-\n'*".to_vec()), any::<u8>()],
            0..400,
        ),
        header in any::<bool>(),
    ) {
        let mut input = if header { b"NAME F\nROWS\n N  OBJ\n".to_vec() } else { Vec::new() };
        input.extend_from_slice(&bytes);
        read_lp(&input)?;
    }

    #[test]
    fn mps_mutated_files(which in 0..MPS.len(), edits in edits()) {
        read_lp(&apply(MPS[which], &edits))?;
    }
}
