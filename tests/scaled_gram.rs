//! `A·diag(d)²·Aᵀ` (`scaled_gram`, `scaled_syrk`, `scaled_gemm`) on the
//! device under test, against an FP64 reference formed densely by faer from
//! the very (rounded) values the device holds.
//!
//! Bound, entry by entry: each entry is a dot product of length `k` whose
//! terms carry at most three roundings of their own (`a·d`, then the product,
//! or `d²` and two products), so
//! `|G − Gref|ᵢⱼ ≤ γ_{k+3}·(|A|·D²·|A|ᵀ)ᵢⱼ`; the FP64 reference adds as much
//! again when the type under test is f64. We check
//! `|G − Gref|ᵢⱼ ≤ 2·(k + 4)·u·(|A|·D²·|A|ᵀ)ᵢⱼ` (plus `|β·C|` terms for
//! `C := α·A·D²·Aᵀ + β·C`). With `k = 0` the bound is 0: the result must be
//! exactly zero (or `β·C`).
//!
//! On the GPU the sizes 300, 521 and 600 span several block columns of the
//! default width (256) on two queues, and 40 rows of depth 30000 two chunks
//! of depth (a workspace holds 2²⁰ entries); `scripts/gpu-run.sh` runs the
//! file again with `GPUMAT_SCALED_GRAM_NB=48 GPUMAT_SCALED_GRAM_KC=100`, so
//! that every case takes many block columns and chunks.

mod common;

use common::*;
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use gpumat::api::SymStorage;
use gpumat::backend::{Backend, Block, BufferMut, View, ViewMut};
use gpumat::layout::{Rfp, Transr, Uplo};
use gpumat::{Error, Matrix, Scalar};
use rand::Rng;

fn upload<T: Scalar>(data: &[f64], rows: usize, cols: usize) -> Matrix<T> {
    let v: Vec<T> = data.iter().map(|&x| T::from_f64(x)).collect();
    device().from_col_major(rows, cols, &v).unwrap()
}

fn host<T: Scalar>(a: &Matrix<T>) -> Vec<f64> {
    a.to_host().unwrap().into_iter().map(Scalar::to_f64).collect()
}

/// `m × k` entries in [−1, 1) and `k` weights in [0, 2), every seventh zero.
fn problem(seed: u64, m: usize, k: usize) -> (Vec<f64>, Vec<f64>) {
    let mut r = rng(seed);
    let a = random(&mut r, m, k);
    let d = (0..k).map(|p| if p % 7 == 3 { 0.0 } else { r.random_range(0.0..2.0) }).collect();
    (a, d)
}

/// `(A·D²·Aᵀ, |A|·D²·|A|ᵀ)` in f64 by faer: `W = A·D`, then `W·Wᵀ`.
fn reference(a: &[f64], m: usize, k: usize, d: &[f64]) -> (Mat<f64>, Mat<f64>) {
    let w = Mat::from_fn(m, k, |i, p| a[i + p * m] * d[p]);
    let wa = Mat::from_fn(m, k, |i, p| w[(i, p)].abs());
    let gram = |w: &Mat<f64>| {
        let mut g = Mat::zeros(m, m);
        matmul(g.as_mut(), Accum::Replace, w.as_ref(), w.transpose(), 1.0, Par::Seq);
        g
    };
    (gram(&w), gram(&wa))
}

/// Checks every entry of the `uplo` triangle, read through `get`, against
/// the reference within `2·(k + 4)·u` of its scale.
fn check_triangle<T: Scalar>(
    case: &str,
    uplo: Uplo,
    k: usize,
    (gref, abs): (&Mat<f64>, &Mat<f64>),
    get: impl Fn(usize, usize) -> f64,
) {
    let m = gref.nrows();
    let c = 2.0 * (k + 4) as f64 * u::<T>();
    for j in 0..m {
        let rows = if uplo == Uplo::Lower { j..m } else { 0..j + 1 };
        for i in rows {
            let (g, r) = (get(i, j), gref[(i, j)]);
            let bound = c * abs[(i, j)];
            assert!((g - r).abs() <= bound, "{case}: G({i}, {j}) = {g:e}, reference {r:e}, bound {bound:e}");
        }
    }
}

/// The public API in full and RFP storage, `d` as a column or a row.
fn api_case<T: Scalar>(m: usize, k: usize, d_as_row: bool) {
    let case = format!("{} m={m} k={k} d {}", T::NAME, if d_as_row { "row" } else { "column" });
    let (a, d) = problem((m * 1000 + k) as u64, m, k);
    let da = upload::<T>(&a, m, k);
    let dd = if d_as_row { upload::<T>(&d, 1, k) } else { upload::<T>(&d, k, 1) };
    let (ah, dh) = (host(&da), host(&dd));
    let (gref, abs) = reference(&ah, m, k, &dh);

    let g = da.scaled_gram(&dd).unwrap();
    assert_eq!((g.n(), g.storage()), (m, SymStorage::Full), "{case}");
    let full = host(g.stored());
    check_triangle::<T>(&format!("{case} full"), Uplo::Lower, k, (&gref, &abs), |i, j| full[i + j * m]);
    // The new array is zero-filled and only the lower triangle is written.
    for j in 0..m {
        for i in 0..j {
            assert_eq!(full[i + j * m], 0.0, "{case} full: strict upper ({i}, {j}) written");
        }
    }

    for g in [da.scaled_gram_rfp(&dd).unwrap(), da.scaled_gram_in(&dd, SymStorage::Rfp).unwrap()] {
        assert_eq!((g.n(), g.storage(), g.stored_len()), (m, SymStorage::Rfp, m * (m + 1) / 2), "{case}");
        let rfp = g.rfp_layout();
        let arf = host(g.stored());
        check_triangle::<T>(&format!("{case} rfp"), Uplo::Lower, k, (&gref, &abs), |i, j| {
            arf[rfp.index(i, j).unwrap()]
        });
        // Both storages hold the same matrix.
        let dense = host(&g.to_dense().unwrap());
        check_triangle::<T>(&format!("{case} rfp dense"), Uplo::Upper, k, (&gref, &abs), |i, j| dense[i + j * m]);
    }
}

#[test]
fn full_and_rfp_storage_match_the_fp64_reference() {
    // m < k, m = k, m > k, k = 0, RFP orders odd and even from 1.
    let shapes = [(1, 1), (1, 4), (2, 1), (2, 2), (2, 5), (3, 1), (3, 3), (3, 8), (4, 3), (7, 7), (8, 20)];
    let shapes = shapes.into_iter().chain([(33, 70), (34, 9), (5, 0), (0, 3), (0, 0), (60, 60)]);
    for (m, k) in shapes {
        api_case::<f64>(m, k, false);
        api_case::<f32>(m, k, true);
    }
    // Several panels and chunks of depth on the GPU, several chunks on the CPU.
    api_case::<f64>(600, 1200, true);
    api_case::<f32>(600, 1200, false);
    api_case::<f64>(40, 30000, false);
}

/// The four RFP layouts through the generic assembly, at odd and even orders.
fn every_rfp_layout<B: Backend>(be: &B) {
    for (n, k) in [(1, 3), (2, 1), (3, 4), (4, 4), (7, 2), (8, 15), (33, 40), (521, 300)] {
        let (a, d) = problem(n as u64 + 7, n, k);
        let (gref, abs) = reference(&a, n, k, &d);
        let (abuf, dbuf) = (be.upload(&a).unwrap(), be.upload(&d).unwrap());
        for transr in [Transr::Normal, Transr::Transpose] {
            for uplo in [Uplo::Lower, Uplo::Upper] {
                let rfp = Rfp::new(n, transr, uplo);
                let case = format!("n={n} k={k} {transr:?} {uplo:?}");
                let mut arf = be.upload(&vec![f64::NAN; rfp.len()]).unwrap();
                let (av, dv) = (View::dense(&abuf, n, k).unwrap(), View::dense(&dbuf, k, 1).unwrap());
                gpumat::api::scaled_gram_to_rfp(be, rfp, av, dv, &BufferMut::new(&mut arf)).unwrap();
                let mut out = vec![0.0; rfp.len()];
                be.download(&arf, &mut out).unwrap();
                // Every entry written: no NaN survives.
                assert!(out.iter().all(|x| x.is_finite()), "{case}: an entry of the RFP array was not written");
                check_triangle::<f64>(&case, uplo, k, (&gref, &abs), |i, j| out[rfp.index(i, j).unwrap()]);
            }
        }
    }
}

#[test]
fn every_rfp_layout_is_assembled_in_place() {
    let dev = device();
    gpumat::with_backend!(dev, be => every_rfp_layout(be));
}

/// Padding of a written block: must keep its bits.
const SENTINEL: f64 = 7777.0;

/// `d` inside a larger buffer: entry `p` at `offset + p·ld` (a row of a
/// 3-row block) or at `offset + p` (a column); everything else NaN.
/// The `len` entries of `buf` on the host.
fn downloaded<B: Backend>(be: &B, buf: &B::Buffer<f64>, len: usize) -> Vec<f64> {
    let mut out = vec![0.0; len];
    be.download(buf, &mut out).unwrap();
    out
}

/// `c` of the entrywise bound `|Δᵢⱼ| ≤ c·(|A|·D²·|B|ᵀ)ᵢⱼ` for depth `k`,
/// with a margin over `γ_{k+3}` for the reference's own rounding.
fn bound_factor(k: usize) -> f64 {
    2.0 * (k + 6) as f64 * u::<f64>()
}

fn vector_in_buffer<B: Backend>(be: &B, d: &[f64], as_row: bool) -> (B::Buffer<f64>, Block) {
    let k = d.len();
    let (block, len) = if as_row {
        (Block { offset: 1, rows: 1, cols: k, ld: 3 }, 1 + 3 * k)
    } else {
        (Block { offset: 2, rows: k, cols: 1, ld: k.max(1) }, k + 4)
    };
    let mut data = vec![f64::NAN; len];
    for (p, &x) in d.iter().enumerate() {
        data[block.vector_index(p)] = x;
    }
    (be.upload(&data).unwrap(), block)
}

/// An `m × k` block at offset 3 with `ld = m + 2` in a NaN-filled buffer.
fn matrix_in_buffer<B: Backend>(be: &B, a: &[f64], m: usize, k: usize) -> (B::Buffer<f64>, Block) {
    let block = Block { offset: 3, rows: m, cols: k, ld: m + 2 };
    let mut data = vec![f64::NAN; 3 + (m + 2) * k.max(1)];
    for p in 0..k {
        for i in 0..m {
            data[block.index(i, p)] = a[i + p * m];
        }
    }
    (be.upload(&data).unwrap(), block)
}

/// `C := α·A·D²·Aᵀ + β·C` on a strided block of `C`, `A` and `d` strided
/// too. The other triangle of `C` and its padding must keep their bits; with
/// `β = 0` the triangle starts as NaN, which must not propagate (it is not
/// read), and the other triangle is NaN too (poisoned outputs).
fn syrk_case<B: Backend>(be: &B, uplo: Uplo, (m, k): (usize, usize), alpha: f64, beta: f64, d_row: bool) {
    let case = format!("scaled_syrk {uplo:?} m={m} k={k} α={alpha} β={beta} d row={d_row}");
    let (mut a, d) = problem((m * 31 + k) as u64, m, k);
    if alpha == 0.0 && m * k > 0 {
        // α = 0: A is not read.
        a[0] = f64::NAN;
    }
    let (gref, abs) = reference(&a, m, k, &d);
    let (abuf, ab) = matrix_in_buffer(be, &a, m, k);
    let (dbuf, db) = vector_in_buffer(be, &d, d_row);
    let cb = Block { offset: 5, rows: m, cols: m, ld: m + 3 };
    let len = 5 + (m + 3) * m + 4;
    let c0 = random(&mut rng(m as u64), m, m);
    let stored = |i: usize, j: usize| if uplo == Uplo::Lower { i >= j } else { i <= j };
    let poison = if beta == 0.0 { f64::NAN } else { SENTINEL };
    let mut init = vec![SENTINEL; len];
    for j in 0..m {
        for i in 0..m {
            init[cb.index(i, j)] = match (stored(i, j), beta == 0.0) {
                (true, true) => f64::NAN,
                (true, false) => c0[i + j * m],
                (false, _) => poison,
            };
        }
    }
    let mut cbuf = be.upload(&init).unwrap();
    be.scaled_syrk(
        uplo,
        alpha,
        View::new(&abuf, ab).unwrap(),
        View::new(&dbuf, db).unwrap(),
        beta,
        ViewMut::new(&mut cbuf, cb).unwrap(),
    )
    .unwrap();
    let (out, c) = (downloaded(be, &cbuf, len), bound_factor(k));
    for (p, (&x, &x0)) in out.iter().zip(&init).enumerate() {
        let inside = p >= cb.offset && (p - cb.offset) % cb.ld < m && (p - cb.offset) / cb.ld < m;
        let (i, j) = ((p - cb.offset.min(p)) % cb.ld, (p - cb.offset.min(p)) / cb.ld);
        if inside && stored(i, j) {
            let b0 = if beta == 0.0 { 0.0 } else { beta * c0[i + j * m] };
            // With α = 0 the reference holds A's NaN; the result is β·C alone.
            let (g, s) = if alpha == 0.0 { (0.0, 0.0) } else { (alpha * gref[(i, j)], alpha.abs() * abs[(i, j)]) };
            let (want, bound) = (g + b0, c * (s + b0.abs()));
            assert!((x - want).abs() <= bound, "{case}: C({i}, {j}) = {x:e}, want {want:e}, bound {bound:e}");
        } else {
            let same = x.to_bits() == x0.to_bits() || (x.is_nan() && x0.is_nan());
            assert!(same, "{case}: entry {p} outside the {uplo:?} triangle changed from {x0} to {x}");
        }
    }
}

/// `scaled_syrk_f32`: all of `C` (f32, a strided block whose padding must
/// keep its bits) against the FP64 reference. Bound, entry by entry:
/// `2·(k + 16)·u₃₂·(|A|·D²·|A|ᵀ)ᵢⱼ + 2⁻³⁶·k·Rᵢ·Rⱼ` with `Rᵢ` the largest
/// `|aᵢₚ·dₚ|` of row `i`: FP32 accumulation of `k` terms, and on tensor
/// cores each factor split as `hi + lo` within `2⁻²²` of itself (the
/// `lo·lo` term dropped), or, in half precision with the rows scaled to
/// `Rᵢ ≈ 2¹⁴`, within `2⁻²²` of itself plus `2⁻³⁹·Rᵢ` (half's smallest
/// steps). A single TF32 or half product (`2⁻¹¹`) would fail it at
/// `k = 37`. `C` must be exactly symmetric.
fn syrk_f32_case<B: Backend>(be: &B, (m, k): (usize, usize)) {
    let case = format!("scaled_syrk_f32 m={m} k={k}");
    let (a, d) = problem((m * 17 + k) as u64, m, k);
    let (gref, abs) = reference(&a, m, k, &d);
    let (abuf, ab) = matrix_in_buffer(be, &a, m, k);
    let (dbuf, db) = vector_in_buffer(be, &d, m % 2 == 1);
    let cb = Block { offset: 2, rows: m, cols: m, ld: m + 1 };
    let len = 2 + (m + 1) * m + 3;
    let init = vec![f32::NAN; len];
    let mut cbuf = be.upload(&init).unwrap();
    be.scaled_syrk_f32(
        View::new(&abuf, ab).unwrap(),
        View::new(&dbuf, db).unwrap(),
        ViewMut::new(&mut cbuf, cb).unwrap(),
    )
    .unwrap();
    let mut out = vec![0f32; len];
    be.download(&cbuf, &mut out).unwrap();
    let c = 2.0 * (k + 16) as f64 * u::<f32>();
    let row_max: Vec<f64> = (0..m).map(|i| (0..k).map(|p| (a[i + p * m] * d[p]).abs()).fold(0.0, f64::max)).collect();
    for (p, &x) in out.iter().enumerate() {
        let inside = p >= cb.offset && (p - cb.offset) % cb.ld < m && (p - cb.offset) / cb.ld < m;
        if !inside {
            assert!(x.is_nan(), "{case}: padding entry {p} changed to {x}");
            continue;
        }
        let (i, j) = ((p - cb.offset) % cb.ld, (p - cb.offset) / cb.ld);
        let floor = 2f64.powi(-36) * k as f64 * row_max[i] * row_max[j];
        let (want, bound) = (gref[(i, j)], c * abs[(i, j)] + floor);
        assert!((f64::from(x) - want).abs() <= bound, "{case}: C({i}, {j}) = {x:e}, want {want:e}, bound {bound:e}");
        assert_eq!(x.to_bits(), out[cb.index(j, i)].to_bits(), "{case}: C({i}, {j}) ≠ C({j}, {i})");
    }
}

#[test]
fn scaled_syrk_f32_is_single_precision_and_symmetric() {
    let dev = device();
    // On the GPU (panels of 64 columns, block rows of 256): one panel and
    // block row, then 16 panels over 3 block rows with partial last ones.
    gpumat::with_backend!(dev, be => {
        for (m, k) in [(1, 1), (5, 0), (6, 13), (40, 37), (300, 260), (600, 1000)] {
            syrk_f32_case(be, (m, k));
        }
    });
}

fn scaled_syrk_cases<B: Backend>(be: &B) {
    for uplo in [Uplo::Lower, Uplo::Upper] {
        for (m, k) in [(1, 1), (5, 0), (6, 13), (40, 37), (300, 260)] {
            for (alpha, beta) in [(1.0, 0.0), (0.5, -1.5), (-2.0, 1.0), (0.0, 0.75)] {
                syrk_case(be, uplo, (m, k), alpha, beta, m % 2 == 0);
            }
        }
        syrk_case(be, uplo, (3, 2), 1.0, 0.0, true);
    }
}

#[test]
fn scaled_syrk_on_strided_blocks_with_alpha_and_beta() {
    let dev = device();
    gpumat::with_backend!(dev, be => scaled_syrk_cases(be));
}

/// `C := α·A·D²·Bᵀ + β·C` with `A` and `B` row blocks of one strided buffer
/// (as the RFP rectangle uses them) and `C` strided with guarded padding.
fn gemm_case<B: Backend>(be: &B, (m, n, k): (usize, usize, usize), alpha: f64, beta: f64, d_row: bool) {
    let case = format!("scaled_gemm m={m} n={n} k={k} α={alpha} β={beta}");
    let (ab_host, d) = problem((m * 7 + n * 3 + k) as u64, m + n, k);
    let (gref, abs) = reference(&ab_host, m + n, k, &d);
    let (abuf, whole) = matrix_in_buffer(be, &ab_host, m + n, k);
    let (dbuf, db) = vector_in_buffer(be, &d, d_row);
    let cb = Block { offset: 2, rows: m, cols: n, ld: m + 1 };
    let len = 2 + (m + 1) * n + 3;
    let c0 = random(&mut rng(k as u64), m, n);
    let mut init = vec![SENTINEL; len];
    for j in 0..n {
        for i in 0..m {
            init[cb.index(i, j)] = if beta == 0.0 { f64::NAN } else { c0[i + j * m] };
        }
    }
    let mut cbuf = be.upload(&init).unwrap();
    let whole = View::new(&abuf, whole).unwrap();
    be.scaled_gemm(
        alpha,
        whole.sub(0, 0, m, k).unwrap(),
        whole.sub(m, 0, n, k).unwrap(),
        View::new(&dbuf, db).unwrap(),
        beta,
        ViewMut::new(&mut cbuf, cb).unwrap(),
    )
    .unwrap();
    let (out, c) = (downloaded(be, &cbuf, len), bound_factor(k));
    for (p, (&x, &x0)) in out.iter().zip(&init).enumerate() {
        let q = p.wrapping_sub(cb.offset);
        if p >= cb.offset && q % cb.ld < m && q / cb.ld < n {
            let (i, j) = (q % cb.ld, q / cb.ld);
            let b0 = if beta == 0.0 { 0.0 } else { beta * c0[i + j * m] };
            // Entry (i, j) of A·D²·Bᵀ is entry (i, m + j) of the stacked Gram matrix.
            let want = alpha * gref[(i, m + j)] + b0;
            let bound = c * (alpha.abs() * abs[(i, m + j)] + b0.abs());
            assert!((x - want).abs() <= bound, "{case}: C({i}, {j}) = {x:e}, want {want:e}, bound {bound:e}");
        } else {
            assert_eq!(x.to_bits(), x0.to_bits(), "{case}: padding entry {p} changed");
        }
    }
}

fn scaled_gemm_cases<B: Backend>(be: &B) {
    for (m, n, k) in [(1, 1, 1), (3, 5, 0), (7, 4, 9), (0, 3, 2), (4, 0, 2), (270, 300, 130)] {
        for (alpha, beta) in [(1.0, 0.0), (-0.5, 2.0), (0.0, -1.0)] {
            gemm_case(be, (m, n, k), alpha, beta, n % 2 == 1);
        }
    }
}

#[test]
fn scaled_gemm_on_strided_blocks_with_alpha_and_beta() {
    let dev = device();
    gpumat::with_backend!(dev, be => scaled_gemm_cases(be));
}

fn expect_err<R>(case: &str, r: gpumat::Result<R>, ok: impl Fn(&Error) -> bool) {
    match r {
        Err(e) if ok(&e) => {}
        Err(e) => panic!("{case}: wrong error {e:?}"),
        Ok(_) => panic!("{case}: accepted"),
    }
}

fn bad_input_case<T: Scalar>() {
    let (m, k) = (4, 6);
    let (a, d) = problem(1, m, k);
    let da = upload::<T>(&a, m, k);
    let dims = |e: &Error| matches!(e, Error::DimensionMismatch { .. });
    for storage in [SymStorage::Full, SymStorage::Rfp] {
        let case = |what: &str| format!("{} {storage:?}: {what}", T::NAME);
        let gram = |a: &Matrix<T>, d: &Matrix<T>| a.scaled_gram_in(d, storage);
        expect_err(&case("d too long"), gram(&da, &upload::<T>(&[1.0; 7], 7, 1)), dims);
        expect_err(&case("d too short"), gram(&da, &upload::<T>(&[1.0; 5], 1, 5)), dims);
        expect_err(&case("d a matrix"), gram(&da, &upload::<T>(&[1.0; 12], 2, 6)), dims);
        let mut neg = d.clone();
        neg[4] = -0.5;
        expect_err(&case("negative weight"), gram(&da, &upload::<T>(&neg, k, 1)), |e| {
            matches!(e, Error::NegativeWeight { index: 5, value } if *value == -0.5) && e.to_string().contains("d[5]")
        });
        let mut huge = d.clone();
        huge[5] = if T::NAME == "f32" { 1e20 } else { 1e160 };
        expect_err(&case("weight whose square overflows"), gram(&da, &upload::<T>(&huge, k, 1)), |e| {
            matches!(e, Error::WeightOverflow { index: 6, precision, .. } if *precision == T::NAME)
                && e.to_string().contains("overflows")
        });
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let mut dn = d.clone();
            dn[2] = bad;
            expect_err(&case(&format!("{bad} in d")), gram(&da, &upload::<T>(&dn, 1, k)), |e| {
                matches!(e, Error::NonFinite { row: 3, col: 1, .. })
            });
            let mut an = a.clone();
            an[1 + 4 * m] = bad; // (2, 5)
            expect_err(&case(&format!("{bad} in A")), gram(&upload::<T>(&an, m, k), &upload::<T>(&d, k, 1)), |e| {
                matches!(e, Error::NonFinite { row: 2, col: 5, .. })
            });
        }
    }
}

/// Shapes and overlaps at the backend level.
fn bad_blocks<B: Backend>(be: &B) {
    let (m, k) = (5, 4);
    let (a, d) = problem(2, m, k);
    let mut buf = be.upload(&[a.clone(), vec![0.0; m * m]].concat()).unwrap();
    let dbuf = be.upload(&[d.clone(), vec![1.0]].concat()).unwrap();
    let dims = |e: &Error| matches!(e, Error::DimensionMismatch { .. });
    let overlap = |e: &Error| matches!(e, Error::Overlapping { .. }) && e.to_string().contains("overlap");
    let abuf = be.upload(&a).unwrap();
    let av = View::dense(&abuf, m, k).unwrap();
    let d_long = View::dense(&dbuf, k + 1, 1).unwrap();
    let dv = View::dense(&dbuf, k, 1).unwrap();
    let mut cbuf = be.alloc::<f64>(m * m).unwrap();
    let r = be.scaled_syrk(Uplo::Lower, 1.0, av, d_long, 0.0, ViewMut::dense(&mut cbuf, m, m).unwrap());
    expect_err("scaled_syrk, d too long", r, dims);
    let r = be.scaled_syrk(Uplo::Lower, 1.0, av, dv, 0.0, ViewMut::dense(&mut cbuf, m - 1, m - 1).unwrap());
    expect_err("scaled_syrk, C too small", r, dims);
    let r = be.scaled_gemm(1.0, av, av.sub(0, 0, 3, k).unwrap(), d_long, 0.0, ViewMut::dense(&mut cbuf, m, 3).unwrap());
    expect_err("scaled_gemm, d too long", r, dims);
    let r = be.scaled_gemm(1.0, av, av, dv, 0.0, ViewMut::dense(&mut cbuf, m, m - 1).unwrap());
    expect_err("scaled_gemm, C of the wrong shape", r, dims);
    {
        // C over A in the same buffer.
        let whole = BufferMut::new(&mut buf);
        let a_in = whole.view(Block::dense(m, k)).unwrap();
        let c_on_a = whole.view_mut(Block { offset: m * k - m, rows: m, cols: m, ld: m }).unwrap();
        expect_err("scaled_syrk, C overlaps A", be.scaled_syrk(Uplo::Lower, 1.0, a_in, dv, 0.0, c_on_a), overlap);
        let c_after = whole.view_mut(Block { offset: m * k, rows: m, cols: m, ld: m }).unwrap();
        be.scaled_syrk(Uplo::Lower, 1.0, a_in, dv, 0.0, c_after).unwrap();
    }
    let rfp = Rfp::new(m + 1, Transr::Normal, Uplo::Lower);
    let mut arf = be.alloc::<f64>(rfp.len()).unwrap();
    let r = gpumat::api::scaled_gram_to_rfp(be, rfp, av, dv, &BufferMut::new(&mut arf));
    expect_err("scaled_gram_to_rfp, order ≠ rows of A", r, dims);
    let rfp = Rfp::new(m, Transr::Normal, Uplo::Lower);
    let mut short = be.alloc::<f64>(rfp.len() - 1).unwrap();
    let r = gpumat::api::scaled_gram_to_rfp(be, rfp, av, dv, &BufferMut::new(&mut short));
    expect_err("scaled_gram_to_rfp, array too short", r, dims);
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    bad_input_case::<f64>();
    bad_input_case::<f32>();
    let dev = device();
    gpumat::with_backend!(dev, be => bad_blocks(be));
}
