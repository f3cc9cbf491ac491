//! Storage formats against LAPACK: the RFP tables printed in LAPACK's
//! documentation, arrays produced by LAPACK itself (`tests/data/rfp.txt`,
//! from `dtrttf`/`dtrttp` through SciPy), and round trips.
//!
//! Matrices hold their own coordinates, `A(i, j) = (i, j)`, so a misplaced
//! entry names itself; entries outside the triangle and padding hold `PAD`.

use gpumat::layout::{
    Full, Packed, Rfp, Transr, Uplo, full_to_packed, full_to_rfp, in_triangle, packed_to_full, packed_to_rfp,
    rfp_to_full, rfp_to_packed,
};
use proptest::prelude::*;

type Ij = (usize, usize);
const PAD: Ij = (usize::MAX, usize::MAX);

const CASES: [(Transr, Uplo); 4] = [
    (Transr::Normal, Uplo::Lower),
    (Transr::Normal, Uplo::Upper),
    (Transr::Transpose, Uplo::Lower),
    (Transr::Transpose, Uplo::Upper),
];

/// `n × n` with leading dimension `ld`: the `uplo` triangle holds `(i, j)`,
/// everything else `PAD`.
fn coordinates(n: usize, ld: usize, uplo: Uplo) -> (Vec<Ij>, Full) {
    let full = Full::with_ld(n, n, ld).unwrap();
    let mut a = vec![PAD; full.len()];
    for j in 0..n {
        for i in (0..n).filter(|&i| in_triangle(uplo, i, j)) {
            a[full.index(i, j)] = (i, j);
        }
    }
    (a, full)
}

fn rfp_of(n: usize, transr: Transr, uplo: Uplo) -> Vec<Ij> {
    let (a, full) = coordinates(n, n.max(1), uplo);
    let rfp = Rfp::new(n, transr, uplo);
    let mut arf = vec![PAD; rfp.len()];
    full_to_rfp(&a, full, rfp, &mut arf).unwrap();
    arf
}

// ---------------------------------------------------------------------------
// The tables printed in the "Further Details" of LAPACK's dtrttf.f and
// dpftrf.f (identical in both; also dtfttr, dtpttf, dsfrk, …). Each is the
// RFP rectangle as stored, row by row; "ij" is A(i, j), 0-based.

/// n = 6, TRANSR = 'N', UPLO = 'U' (left) and 'L' (right).
const N6_NORMAL: &str = "
       03 04 05                33 43 53
       13 14 15                00 44 54
       23 24 25                10 11 55
       33 34 35                20 21 22
       00 44 45                30 31 32
       01 11 55                40 41 42
       02 12 22                50 51 52";

/// n = 6, TRANSR = 'T', UPLO = 'U' (left) and 'L' (right).
const N6_TRANSPOSE: &str = "
    03 13 23 33 00 01 02    33 00 10 20 30 40 50
    04 14 24 34 44 11 12    43 44 11 21 31 41 51
    05 15 25 35 45 55 22    53 54 55 22 32 42 52";

/// n = 5, TRANSR = 'N', UPLO = 'U' (left) and 'L' (right).
const N5_NORMAL: &str = "
       02 03 04                00 33 43
       12 13 14                10 11 44
       22 23 24                20 21 22
       00 33 34                30 31 32
       01 11 44                40 41 42";

/// n = 5, TRANSR = 'T', UPLO = 'U' (left) and 'L' (right), as printed. The
/// right table has six columns where the 3 × 5 rectangle has five: its last
/// column (50 51 52, entries of a 6 × 6 matrix) was carried over from the
/// n = 6 table. The first five columns are the transpose of the 'N', 'L'
/// table above, as the text says, and what dtrttf computes.
const N5_TRANSPOSE_PRINTED: &str = "
    02 12 22 00 01             00 10 20 30 40 50
    03 13 23 33 11             33 11 21 31 41 51
    04 14 24 34 44             43 44 22 32 42 52";

/// Rows of "ij" tokens, split into the left and right tables after
/// `left_cols` columns.
fn parse_tables(text: &str, left_cols: usize) -> (Vec<Vec<Ij>>, Vec<Vec<Ij>>) {
    let ij = |t: &str| {
        let d: Vec<usize> = t.chars().map(|c| c.to_digit(10).unwrap() as usize).collect();
        assert_eq!(d.len(), 2, "token {t}");
        (d[0], d[1])
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let row: Vec<Ij> = l.split_whitespace().map(ij).collect();
            (row[..left_cols].to_vec(), row[left_cols..].to_vec())
        })
        .unzip()
}

fn assert_table(n: usize, transr: Transr, uplo: Uplo, table: &[Vec<Ij>]) {
    let rfp = Rfp::new(n, transr, uplo);
    let rect = rfp.rect();
    assert_eq!((table.len(), table[0].len()), (rect.rows, rect.cols), "n={n} {transr:?} {uplo:?}: shape");
    let arf = rfp_of(n, transr, uplo);
    for (r, row) in table.iter().enumerate() {
        for (c, &want) in row.iter().enumerate() {
            let at = rect.index(r, c);
            assert_eq!(arf[at], want, "n={n} {transr:?} {uplo:?}: rectangle ({r}, {c})");
            assert_eq!(rfp.index(want.0, want.1), Some(at), "n={n} {transr:?} {uplo:?}: index of {want:?}");
        }
    }
}

#[test]
fn lapack_documentation_tables() {
    let (upper, lower) = parse_tables(N6_NORMAL, 3);
    assert_table(6, Transr::Normal, Uplo::Upper, &upper);
    assert_table(6, Transr::Normal, Uplo::Lower, &lower);
    let (upper, lower) = parse_tables(N6_TRANSPOSE, 7);
    assert_table(6, Transr::Transpose, Uplo::Upper, &upper);
    assert_table(6, Transr::Transpose, Uplo::Lower, &lower);
    let (upper, lower) = parse_tables(N5_NORMAL, 3);
    assert_table(5, Transr::Normal, Uplo::Upper, &upper);
    assert_table(5, Transr::Normal, Uplo::Lower, &lower);

    let (upper, mut lower) = parse_tables(N5_TRANSPOSE_PRINTED, 5);
    assert_table(5, Transr::Transpose, Uplo::Upper, &upper);
    // Drop the spurious sixth column (see N5_TRANSPOSE_PRINTED) and check it
    // is the one described, out of range for n = 5.
    let extra: Vec<Ij> = lower.iter_mut().map(|row| row.pop().unwrap()).collect();
    assert_eq!(extra, [(5, 0), (5, 1), (5, 2)]);
    assert_table(5, Transr::Transpose, Uplo::Lower, &lower);
}

// ---------------------------------------------------------------------------
// Arrays computed by LAPACK (tests/data/gen_rfp.py).

#[test]
fn agrees_with_lapack_dtrttf_and_dtrttp() {
    let mut seen = (0, 0);
    for line in include_str!("data/rfp.txt").lines().filter(|l| !l.starts_with('#')) {
        let (head, body) = line.split_once(" : ").unwrap();
        let head: Vec<&str> = head.split_whitespace().collect();
        let uplo = if head[2] == "L" { Uplo::Lower } else { Uplo::Upper };
        let n: usize = head[3].parse().unwrap();
        let want: Vec<Ij> = body
            .split_whitespace()
            .map(|t| {
                let (i, j) = t.split_once(',').unwrap();
                (i.parse().unwrap(), j.parse().unwrap())
            })
            .collect();
        let (a, full) = coordinates(n, n + 2, uplo);
        match head[0] {
            "rfp" => {
                let transr = if head[1] == "N" { Transr::Normal } else { Transr::Transpose };
                let rfp = Rfp::new(n, transr, uplo);
                let mut arf = vec![PAD; rfp.len()];
                full_to_rfp(&a, full, rfp, &mut arf).unwrap();
                assert_eq!(arf, want, "{line}");
                for (at, &(i, j)) in want.iter().enumerate() {
                    assert_eq!(rfp.index(i, j), Some(at), "{line}: index({i}, {j})");
                }
                seen.0 += 1;
            }
            "packed" => {
                let packed = Packed::new(n, uplo);
                let mut ap = vec![PAD; packed.len()];
                full_to_packed(&a, full, packed, &mut ap).unwrap();
                assert_eq!(ap, want, "{line}");
                for (at, &(i, j)) in want.iter().enumerate() {
                    assert_eq!(packed.index(i, j), Some(at), "{line}: index({i}, {j})");
                }
                seen.1 += 1;
            }
            kind => panic!("unknown fixture kind {kind}"),
        }
    }
    assert_eq!(seen, (16 * 4, 16 * 2), "fixture lines");
}

// ---------------------------------------------------------------------------
// Index maps.

#[test]
fn index_is_a_bijection_onto_the_array() {
    for n in 0..=40 {
        for (transr, uplo) in CASES {
            let rfp = Rfp::new(n, transr, uplo);
            let packed = Packed::new(n, uplo);
            let arf = rfp_of(n, transr, uplo);
            let mut hit = vec![false; rfp.len()];
            let mut hit_packed = vec![false; packed.len()];
            for j in 0..n + 1 {
                for i in 0..n + 1 {
                    let stored = i < n && j < n && in_triangle(uplo, i, j);
                    let (k, p) = (rfp.index(i, j), packed.index(i, j));
                    assert_eq!(k.is_some(), stored, "n={n} {transr:?} {uplo:?} ({i}, {j})");
                    assert_eq!(p.is_some(), stored, "n={n} {uplo:?} packed ({i}, {j})");
                    if let (Some(k), Some(p)) = (k, p) {
                        assert!(!hit[k] && !hit_packed[p], "n={n} {transr:?} {uplo:?} ({i}, {j}) twice");
                        hit[k] = true;
                        hit_packed[p] = true;
                        // The conversion put A(i, j) where index says.
                        assert_eq!(arf[k], (i, j));
                    }
                }
            }
            assert!(hit.iter().all(|&h| h) && hit_packed.iter().all(|&h| h), "n={n}: not onto");
        }
    }
}

#[test]
fn rect_holds_exactly_the_array() {
    for n in 0..=40 {
        for (transr, uplo) in CASES {
            let rfp = Rfp::new(n, transr, uplo);
            let rect = rfp.rect();
            assert_eq!(rect.rows * rect.cols, rfp.len());
            assert_eq!(rect.len(), rfp.len(), "n={n}: rectangle has no padding");
            assert_eq!(rect.ld, rect.rows.max(1));
            if transr == Transr::Transpose {
                let normal = Rfp::new(n, Transr::Normal, uplo).rect();
                assert_eq!((rect.rows, rect.cols), (normal.cols, normal.rows));
            }
        }
    }
}

/// TRANSR = 'T' is the transpose of the TRANSR = 'N' rectangle.
#[test]
fn transpose_form_is_the_transposed_rectangle() {
    for n in 1..=40 {
        for uplo in [Uplo::Lower, Uplo::Upper] {
            let normal = Rfp::new(n, Transr::Normal, uplo);
            let trans = Rfp::new(n, Transr::Transpose, uplo);
            let (an, at) = (rfp_of(n, Transr::Normal, uplo), rfp_of(n, Transr::Transpose, uplo));
            let (rn, rt) = (normal.rect(), trans.rect());
            for c in 0..rn.cols {
                for r in 0..rn.rows {
                    assert_eq!(an[rn.index(r, c)], at[rt.index(c, r)], "n={n} {uplo:?} ({r}, {c})");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The pieces that dpftrf hands to full-storage kernels.

#[test]
fn pieces_tile_the_array_with_the_blocks_of_a() {
    for n in 0..=40 {
        for (transr, uplo) in CASES {
            let ctx = format!("n={n} {transr:?} {uplo:?}");
            let rfp = Rfp::new(n, transr, uplo);
            let rect = rfp.rect();
            let p = rfp.pieces();
            let (n1, n2) = (p.n1, p.n2);
            assert_eq!(n1 + n2, n);
            // dpftrf: N1 = N - N/2 for 'L', N/2 for 'U'.
            assert_eq!(n1, if uplo == Uplo::Lower { n - n / 2 } else { n / 2 }, "{ctx}");
            let arf = rfp_of(n, transr, uplo);
            let mut count = vec![0u8; rfp.len()];
            // The stored entry of the symmetric matrix at (i, j) / (j, i).
            let sym = |i: usize, j: usize| if in_triangle(uplo, i, j) { (i, j) } else { (j, i) };
            // Visits the `uplo`-triangle (or all, for None) of a piece and
            // checks that its (r, c) entry is the symmetric A(want(r, c)).
            let mut visit = |what: &str, offset: usize, full: Full, shape: Option<Uplo>, want: &dyn Fn(Ij) -> Ij| {
                assert_eq!(full.ld, rect.ld, "{ctx} {what}: ld");
                if full.is_empty() {
                    return;
                }
                // The piece lies inside the rectangle without wrapping.
                let (r0, c0) = (offset % rect.ld, offset / rect.ld);
                assert!(r0 + full.rows <= rect.rows && c0 + full.cols <= rect.cols, "{ctx} {what}: outside");
                for c in 0..full.cols {
                    for r in (0..full.rows).filter(|&r| shape.is_none_or(|u| in_triangle(u, r, c))) {
                        let at = offset + full.index(r, c);
                        count[at] += 1;
                        let (i, j) = want((r, c));
                        assert_eq!(arf[at], sym(i, j), "{ctx} {what} ({r}, {c})");
                    }
                }
            };
            // t1 = A11, t2 = A22; `transposed` says which of A(r, c) and
            // A(c, r) the stored triangle names, i.e. whether uplo flipped.
            assert_eq!(p.t1.full.rows, n1);
            assert_eq!(p.t1.transposed, p.t1.uplo != uplo);
            visit("t1", p.t1.offset, p.t1.full, Some(p.t1.uplo), &|(r, c)| (r, c));
            assert_eq!(p.t2.full.rows, n2);
            assert_eq!(p.t2.transposed, p.t2.uplo != uplo);
            visit("t2", p.t2.offset, p.t2.full, Some(p.t2.uplo), &|(r, c)| (n1 + r, n1 + c));
            // s = A21 (n2 × n1) or A12 = A21ᵀ (n1 × n2): A21 exactly when
            // it is the stored block (lower) untransposed, or the transposed
            // stored block (upper).
            let holds_a21 = (uplo == Uplo::Lower) != p.s.transposed;
            assert_eq!(p.s.transposed, transr == Transr::Transpose, "{ctx}");
            if holds_a21 {
                assert_eq!((p.s.full.rows, p.s.full.cols), (n2, n1), "{ctx}");
                visit("s", p.s.offset, p.s.full, None, &|(r, c)| (n1 + r, c));
            } else {
                assert_eq!((p.s.full.rows, p.s.full.cols), (n1, n2), "{ctx}");
                visit("s", p.s.offset, p.s.full, None, &|(r, c)| (r, n1 + c));
            }
            // The stored entries of t1 and t2 show where the transposition
            // is: a strictly off-diagonal entry of a transposed triangle
            // names A(c, r).
            for t in [p.t1, p.t2] {
                if t.full.rows >= 2 {
                    let (r, c) = if t.uplo == Uplo::Lower { (1, 0) } else { (0, 1) };
                    let (i, j) = arf[t.offset + t.full.index(r, c)];
                    let base = if t == p.t1 { 0 } else { n1 };
                    assert_eq!((i - base, j - base) == (c, r), t.transposed, "{ctx}");
                }
            }
            assert!(count.iter().all(|&k| k == 1), "{ctx}: pieces overlap or leave gaps: {count:?}");
        }
    }
}

/// The offsets and leading dimensions of the pieces, literally as dpftrf's
/// calls name them, for one odd and one even order.
#[test]
fn pieces_match_dpftrf_calls() {
    use Transr::*;
    use Uplo::*;
    // (transr, uplo, n) → ((t1 off, t1 uplo), s off, (t2 off, t2 uplo), ld)
    let table = [
        (Normal, Lower, 7, (0, Lower), 4, (7, Upper), 7),
        (Normal, Upper, 7, (4, Lower), 0, (3, Upper), 7),
        (Transpose, Lower, 7, (0, Upper), 16, (1, Lower), 4),
        (Transpose, Upper, 7, (16, Upper), 0, (12, Lower), 4),
        (Normal, Lower, 8, (1, Lower), 5, (0, Upper), 9),
        (Normal, Upper, 8, (5, Lower), 0, (4, Upper), 9),
        (Transpose, Lower, 8, (4, Upper), 20, (0, Lower), 4),
        (Transpose, Upper, 8, (20, Upper), 0, (16, Lower), 4),
    ];
    for (transr, uplo, n, t1, s, t2, ld) in table {
        let p = Rfp::new(n, transr, uplo).pieces();
        assert_eq!((p.t1.offset, p.t1.uplo), t1, "{transr:?} {uplo:?} {n}");
        assert_eq!(p.s.offset, s, "{transr:?} {uplo:?} {n}");
        assert_eq!((p.t2.offset, p.t2.uplo), t2, "{transr:?} {uplo:?} {n}");
        assert_eq!(p.s.full.ld, ld);
    }
}

// ---------------------------------------------------------------------------
// Round trips.

/// Every conversion through every format, with a padded full array; checks
/// that only the triangle is read and written.
fn round_trips(n: usize, ld: usize, transr: Transr, uplo: Uplo) {
    let ctx = format!("n={n} ld={ld} {transr:?} {uplo:?}");
    let (a, full) = coordinates(n, ld, uplo);
    // The source's other triangle and padding hold a second marker: the
    // packing must not read it.
    const OTHER: Ij = (usize::MAX - 1, 0);
    let src: Vec<Ij> = a.iter().map(|&x| if x == PAD { OTHER } else { x }).collect();
    let rfp = Rfp::new(n, transr, uplo);
    let packed = Packed::new(n, uplo);

    let mut arf = vec![PAD; rfp.len()];
    full_to_rfp(&src, full, rfp, &mut arf).unwrap();
    assert!(!arf.contains(&OTHER) && !arf.contains(&PAD), "{ctx}: full_to_rfp read outside");
    let mut back = vec![PAD; full.len()];
    rfp_to_full(&arf, rfp, &mut back, full).unwrap();
    assert_eq!(back, a, "{ctx}: full → rfp → full");

    let mut ap = vec![PAD; packed.len()];
    full_to_packed(&src, full, packed, &mut ap).unwrap();
    assert!(!ap.contains(&OTHER) && !ap.contains(&PAD), "{ctx}: full_to_packed read outside");
    let mut back = vec![PAD; full.len()];
    packed_to_full(&ap, packed, &mut back, full).unwrap();
    assert_eq!(back, a, "{ctx}: full → packed → full");

    let mut ap2 = vec![PAD; packed.len()];
    rfp_to_packed(&arf, rfp, &mut ap2, packed).unwrap();
    assert_eq!(ap2, ap, "{ctx}: rfp → packed");
    let mut arf2 = vec![PAD; rfp.len()];
    packed_to_rfp(&ap2, packed, &mut arf2, rfp).unwrap();
    assert_eq!(arf2, arf, "{ctx}: rfp → packed → rfp");
}

#[test]
fn round_trips_every_order_and_case() {
    for n in 0..=40 {
        for (transr, uplo) in CASES {
            round_trips(n, n.max(1), transr, uplo);
            round_trips(n, n + 3, transr, uplo);
        }
    }
}

#[test]
fn works_for_other_element_types() {
    let n = 4;
    let a: Vec<f32> = (0..n * n).map(|k| k as f32).collect();
    let full = Full::new(n, n);
    let rfp = Rfp::new(n, Transr::Normal, Uplo::Lower);
    let mut arf = vec![0f32; rfp.len()];
    full_to_rfp(&a, full, rfp, &mut arf).unwrap();
    for j in 0..n {
        for i in j..n {
            assert_eq!(arf[rfp.index(i, j).unwrap()], a[full.index(i, j)]);
        }
    }
}

// ---------------------------------------------------------------------------
// Edge cases and errors.

#[test]
fn order_zero_is_empty() {
    for (transr, uplo) in CASES {
        let rfp = Rfp::new(0, transr, uplo);
        let packed = Packed::new(0, uplo);
        assert_eq!((rfp.is_empty(), packed.is_empty()), (true, true));
        assert_eq!((rfp.len(), packed.len()), (0, 0));
        assert_eq!(rfp.index(0, 0), None);
        assert_eq!(rfp.rect().len(), 0);
        let p = rfp.pieces();
        assert_eq!((p.n1, p.n2, p.t1.full.len(), p.s.full.len(), p.t2.full.len()), (0, 0, 0, 0, 0));
        let full = Full::new(0, 0);
        assert_eq!((full.ld, full.len()), (1, 0));
        let (a, mut arf, mut ap) = (Vec::<f64>::new(), Vec::new(), Vec::new());
        let mut out = Vec::<f64>::new();
        full_to_rfp(&a, full, rfp, &mut arf).unwrap();
        rfp_to_full(&arf, rfp, &mut out, full).unwrap();
        full_to_packed(&a, full, packed, &mut ap).unwrap();
        packed_to_full(&ap, packed, &mut out, full).unwrap();
        rfp_to_packed(&arf, rfp, &mut ap, packed).unwrap();
        packed_to_rfp(&ap, packed, &mut arf, rfp).unwrap();
    }
}

#[test]
fn longer_slices_are_accepted() {
    let n = 5;
    let (a, full) = coordinates(n, n, Uplo::Upper);
    let rfp = Rfp::new(n, Transr::Transpose, Uplo::Upper);
    let mut arf = vec![PAD; rfp.len() + 3];
    full_to_rfp(&a, full, rfp, &mut arf).unwrap();
    assert_eq!(&arf[rfp.len()..], &[PAD; 3]);
}

#[test]
fn bad_shapes_and_lengths_are_errors() {
    let n = 5;
    let rfp = Rfp::new(n, Transr::Normal, Uplo::Lower);
    let packed = Packed::new(n, Uplo::Lower);
    let full = Full::with_ld(n, n, 7).unwrap();
    let a = vec![0.0; full.len()];
    let arf = vec![0.0; rfp.len()];
    let ap = vec![0.0; packed.len()];
    let (mut a_out, mut arf_out, mut ap_out) = (a.clone(), arf.clone(), ap.clone());

    // Short slices, each argument in turn.
    assert!(full_to_rfp(&a[1..], full, rfp, &mut arf_out).is_err());
    assert!(full_to_rfp(&a, full, rfp, &mut arf_out[1..]).is_err());
    assert!(rfp_to_full(&arf[1..], rfp, &mut a_out, full).is_err());
    assert!(rfp_to_full(&arf, rfp, &mut a_out[1..], full).is_err());
    assert!(full_to_packed(&a[1..], full, packed, &mut ap_out).is_err());
    assert!(full_to_packed(&a, full, packed, &mut ap_out[1..]).is_err());
    assert!(packed_to_full(&ap[1..], packed, &mut a_out, full).is_err());
    assert!(packed_to_full(&ap, packed, &mut a_out[1..], full).is_err());
    assert!(rfp_to_packed(&arf[1..], rfp, &mut ap_out, packed).is_err());
    assert!(rfp_to_packed(&arf, rfp, &mut ap_out[1..], packed).is_err());
    assert!(packed_to_rfp(&ap[1..], packed, &mut arf_out, rfp).is_err());
    assert!(packed_to_rfp(&ap, packed, &mut arf_out[1..], rfp).is_err());
    assert!(full_to_rfp::<f64>(&[], full, rfp, &mut []).is_err());

    // Not square, or not of order n.
    for bad in [Full::with_ld(n, n + 1, 7).unwrap(), Full::with_ld(n - 1, n, 7).unwrap(), Full::new(n + 1, n + 1)] {
        let mut big = vec![0.0; 64];
        assert!(full_to_rfp(&big, bad, rfp, &mut arf_out).is_err());
        assert!(rfp_to_full(&arf, rfp, &mut big, bad).is_err());
        assert!(full_to_packed(&big, bad, packed, &mut ap_out).is_err());
        assert!(packed_to_full(&ap, packed, &mut big, bad).is_err());
    }
    // A leading dimension below the row count (fields are public).
    let bad_ld = Full { rows: n, cols: n, ld: n - 1 };
    assert!(full_to_rfp(&a, bad_ld, rfp, &mut arf_out).is_err());
    assert!(Full::with_ld(n, n, n - 1).is_err());

    // Packed and RFP of another order or triangle.
    assert!(rfp_to_packed(&arf, rfp, &mut ap_out, Packed::new(n, Uplo::Upper)).is_err());
    assert!(packed_to_rfp(&ap, packed, &mut arf_out, Rfp::new(n, Transr::Normal, Uplo::Upper)).is_err());
    let small = Packed::new(n - 1, Uplo::Lower);
    assert!(rfp_to_packed(&arf, rfp, &mut ap_out, small).is_err());
    assert!(packed_to_rfp(&ap, small, &mut arf_out, rfp).is_err());

    // Nothing was written by a failed call.
    assert!(arf_out.iter().chain(&ap_out).chain(&a_out).all(|&x| x == 0.0));
}

#[test]
fn flips() {
    assert_eq!(Uplo::Lower.flip(), Uplo::Upper);
    assert_eq!(Uplo::Upper.flip().flip(), Uplo::Upper);
    assert_eq!(Transr::Normal.flip(), Transr::Transpose);
}

proptest! {
    #[test]
    fn round_trips_are_identity(n in 0usize..=64, pad in 0usize..8, transr_t: bool, upper: bool) {
        let transr = if transr_t { Transr::Transpose } else { Transr::Normal };
        let uplo = if upper { Uplo::Upper } else { Uplo::Lower };
        round_trips(n, n.max(1) + pad, transr, uplo);
    }
}
