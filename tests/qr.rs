//! Householder QR on the device under test, against faer's FP64 QR on the
//! host: for `A` of `m × n`, `‖A − Q·R‖_F/‖A‖_F ≤ 4·m·n·u` with `Q·R` formed
//! on the host from the downloaded factors, `‖QᵀQ − I‖_F ≤ 4·m·u`, `R`
//! equal to faer's up to the signs of its rows within `4·m·n·κ₂(A)·u`, and
//! least-squares solutions within `4·m·n·κ₂(A)²·u` of faer's; awkward shapes
//! (`m ≫ n`, `n = 1`, `m = n`, wide, several panels with small blocks).

mod common;

use common::*;
use faer::Mat;
use faer::linalg::solvers::{DenseSolveCore, Solve};
use faer::prelude::SolveLstsq;
use gpumat::factor::qr::QrParams;
use gpumat::{Error, Matrix, Scalar};

fn upload<T: Scalar>(data: &[f64], rows: usize, cols: usize) -> Matrix<T> {
    let v: Vec<T> = data.iter().map(|&x| T::from_f64(x)).collect();
    device().from_col_major(rows, cols, &v).unwrap()
}

fn host<T: Scalar>(a: &Matrix<T>) -> Vec<f64> {
    a.to_host().unwrap().into_iter().map(Scalar::to_f64).collect()
}

fn faer_of(a: &[f64], m: usize, n: usize) -> Mat<f64> {
    Mat::from_fn(m, n, |i, j| a[i + j * m])
}

/// 2-norm condition number from faer's singular values.
fn kappa(a: &Mat<f64>) -> f64 {
    let s = a.singular_values().unwrap();
    s.iter().cloned().fold(0.0, f64::max) / s.iter().cloned().fold(f64::INFINITY, f64::min)
}

fn check<T: Scalar>(seed: u64, m: usize, n: usize, block_size: usize, leaf: usize) {
    let a = random(&mut rng(seed), m, n);
    let k = m.min(n);
    let da = upload::<T>(&a, m, n);
    let a_t = host(&da);
    let f = da.qr_with(QrParams { block_size, leaf }).unwrap();
    let (q, r) = (host(&f.q().unwrap()), host(&f.r().unwrap()));
    let u = u::<T>();
    let bound = 4.0 * (m * n) as f64 * u;
    let what = format!("{} {m}×{n} nb={block_size} leaf={leaf}", T::NAME);

    // Backward error of Q·R on the host, against A as rounded to T.
    let (qr, ..) = naive_matmul(&q, (m, k), false, &r, (k, n), false);
    let back = rel_error(&qr, &a_t);
    assert!(back <= bound, "{what}: ‖A − QR‖/‖A‖ = {back:e} > {bound:e}");
    // The device's own reconstruction agrees.
    let rec = host(&f.reconstruct().unwrap());
    let back2 = rel_error(&rec, &a_t);
    assert!(back2 <= bound, "{what}: reconstruct: {back2:e} > {bound:e}");
    // Orthogonality.
    let (qtq, ..) = naive_matmul(&q, (m, k), true, &q, (m, k), false);
    let eye: Vec<f64> = (0..k * k).map(|p| f64::from(u8::from(p % k == p / k))).collect();
    let orth = frobenius(&qtq.iter().zip(&eye).map(|(x, y)| x - y).collect::<Vec<_>>());
    let obound = 4.0 * m.max(2) as f64 * u;
    assert!(orth <= obound, "{what}: ‖QᵀQ − I‖ = {orth:e} > {obound:e}");
    // R is upper trapezoidal.
    assert!((0..n).all(|j| (j + 1..k).all(|i| r[i + j * k] == 0.0)), "{what}: R not upper trapezoidal");

    // Against faer's FP64 QR: R up to the signs of its rows.
    let fa = faer_of(&a_t, m, n);
    let fr = fa.qr().thin_R().to_owned();
    let kap = if k > 0 { kappa(&fa) } else { 1.0 };
    let mut diff = 0.0f64;
    for i in 0..k {
        let s = if (r[i + i * k] >= 0.0) == (fr[(i, i)] >= 0.0) { 1.0 } else { -1.0 };
        for j in i..n {
            diff += (r[i + j * k] - s * fr[(i, j)]).powi(2);
        }
    }
    let rel = diff.sqrt() / frobenius(&a_t).max(f64::MIN_POSITIVE);
    let rbound = bound * kap;
    assert!(rel <= rbound, "{what}: R differs from faer's by {rel:e} > {rbound:e} (κ = {kap:.1})");

    // Least squares against faer, and Qᵀ·Q·B = B.
    if m >= n && n > 0 {
        let b = random(&mut rng(seed + 1), m, 2);
        let db = upload::<T>(&b, m, 2);
        let x = host(&f.solve(&db).unwrap());
        let fb = faer_of(&host(&db), m, 2);
        let xr = fa.qr().solve_lstsq(&fb);
        let xr: Vec<f64> = (0..2).flat_map(|j| (0..n).map(move |i| (i, j))).map(|(i, j)| xr[(i, j)]).collect();
        let err = rel_error(&x, &xr);
        let xbound = 4.0 * (m * n) as f64 * kap * kap * u;
        assert!(err <= xbound, "{what}: least squares differs from faer's by {err:e} > {xbound:e}");
        let round = host(&f.apply_q(&f.apply_qt(&db).unwrap()).unwrap());
        let e = rel_error(&round, &host(&db));
        assert!(e <= bound, "{what}: Q·Qᵀ·B differs from B by {e:e}");
    }
}

fn shapes<T: Scalar>() {
    // (m, n, block size, leaf): panels split recursively when the block is
    // wider than the leaf, down to odd widths.
    let cases = [
        (1, 1, 32, 32),
        (7, 1, 32, 32),
        (500, 1, 32, 32),
        (40, 40, 32, 32),
        (40, 40, 8, 8),
        (97, 33, 8, 8),
        (97, 33, 32, 4),
        (1000, 12, 32, 32),
        (1000, 12, 8, 3),
        (300, 70, 16, 16),
        (300, 70, 64, 8),
        (64, 64, 64, 32),
        (200, 130, 128, 32),
        (20, 45, 8, 8),
        (20, 45, 16, 5),
        (3, 5, 2, 2),
        // Enough panels that, on a GPU, the side queue's update of the far
        // columns runs beside the next panels (look-ahead).
        (1536, 1024, 128, 32),
    ];
    for (s, &(m, n, nb, leaf)) in cases.iter().enumerate() {
        check::<T>(100 + s as u64, m, n, nb, leaf);
    }
}

#[test]
fn shapes_f64() {
    shapes::<f64>();
}

#[test]
fn shapes_f32() {
    shapes::<f32>();
}

#[test]
fn zero_columns_give_identity_reflectors() {
    // A zero column and a column already upper triangular: τ = 0, no NaN.
    let (m, n) = (6, 3);
    let mut a = vec![0.0; m * n];
    a[2 * m] = 3.0;
    a[1 + 2 * m] = 4.0;
    let f = upload::<f64>(&a, m, n).qr().unwrap();
    let r = host(&f.r().unwrap());
    assert!(r.iter().all(|x| x.is_finite()));
    assert_eq!(r[0], 0.0);
    let rec = host(&f.reconstruct().unwrap());
    assert!(rel_error(&rec, &a) <= 1e-15);
    assert_eq!(f.condition_estimate().unwrap(), f64::INFINITY);
    assert!(matches!(f.solve(&upload::<f64>(&[1.0; 6], m, 1)), Err(Error::Singular { pivot: 1 })));
}

#[test]
fn condition_estimate_is_close() {
    // Graded columns: κ(R) = κ(A) spans orders of magnitude.
    for (seed, (m, n), grade) in [(7, (60, 20), 1e6), (8, (30, 30), 1e2), (9, (200, 5), 1e10_f64)] {
        let mut a = random(&mut rng(seed), m, n);
        for j in 0..n {
            let s = grade.powf(-(j as f64) / (n - 1) as f64);
            (0..m).for_each(|i| a[i + j * m] *= s);
        }
        let f = upload::<f64>(&a, m, n).qr().unwrap();
        let est = f.condition_estimate().unwrap();
        // κ₁(R) against faer: ‖R‖₁·‖R⁻¹‖₁ with R⁻¹ from faer's solve.
        let r = host(&f.r().unwrap());
        let fr = faer_of(&r, n, n);
        let rinv = fr.full_piv_lu().inverse();
        let norm1 = |x: &Mat<f64>| (0..n).map(|j| (0..n).map(|i| x[(i, j)].abs()).sum::<f64>()).fold(0.0, f64::max);
        let exact = norm1(&fr) * norm1(&rinv);
        assert!(est <= exact * (1.0 + 1e-8) && est >= exact / 10.0, "estimate {est:e}, exact {exact:e}");
    }
}

#[test]
fn non_finite_input_is_refused() {
    let mut a = random(&mut rng(3), 5, 2);
    a[3 + 5] = f64::NAN;
    match upload::<f64>(&a, 5, 2).qr() {
        Err(Error::NonFinite { row: 4, col: 2, .. }) => {}
        other => panic!("expected NonFinite at (4, 2), got {other:?}"),
    }
}

/// The panel primitive itself: `I − V·T·Vᵀ` equals the product of the
/// reflectors `Hⱼ = I − τⱼ·vⱼ·vⱼᵀ` formed on the host (to 10·m·k·u), and
/// its arguments are checked.
fn householder_panel<T: Scalar>(m: usize, k: usize) {
    use gpumat::backend::{Backend, Block, BufferMut, ViewMut};
    let dev = device();
    let a = random(&mut rng(40 + k as u64), m, k);
    let a_t: Vec<T> = a.iter().map(|&x| T::from_f64(x)).collect();
    let (panel, t) = gpumat::with_backend!(dev, be => {
        let mut buf = be.upload(&a_t).unwrap();
        let mut tb = be.alloc::<T>(k * k).unwrap();
        be.householder(ViewMut::dense(&mut buf, m, k).unwrap(), ViewMut::dense(&mut tb, k, k).unwrap()).unwrap();
        let (mut p, mut t) = (vec![T::ZERO; m * k], vec![T::ZERO; k * k]);
        be.download(&buf, &mut p).unwrap();
        be.download(&tb, &mut t).unwrap();
        // A wide panel, a T of the wrong shape, and T overlapping the panel.
        let mut wide = be.alloc::<T>(k * (k + 1)).unwrap();
        let e = be.householder(ViewMut::dense(&mut wide, k, k + 1).unwrap(), ViewMut::dense(&mut tb, k, k).unwrap());
        assert!(matches!(e, Err(Error::DimensionMismatch { .. })), "{e:?}");
        let e = be.householder(ViewMut::dense(&mut buf, m, k).unwrap(), ViewMut::dense(&mut tb, k - 1, k - 1).unwrap());
        assert!(matches!(e, Err(Error::DimensionMismatch { .. })), "{e:?}");
        // A panel wider than the leaves the backends take.
        let cols = gpumat::backend::HOUSEHOLDER_MAX_COLS + 1;
        let (mut broad, mut tw) = (be.alloc::<T>(2 * cols * cols).unwrap(), be.alloc::<T>(cols * cols).unwrap());
        let e = be.householder(
            ViewMut::dense(&mut broad, 2 * cols, cols).unwrap(),
            ViewMut::dense(&mut tw, cols, cols).unwrap(),
        );
        assert!(matches!(e, Err(Error::DimensionMismatch { .. })), "{e:?}");
        let mut both = be.alloc::<T>(m * k + k * k).unwrap();
        let whole = BufferMut::<_, T>::new(&mut both);
        let p_view = whole.view_mut(Block { offset: 0, rows: m, cols: k, ld: m }).unwrap();
        let t_view = whole.view_mut(Block { offset: m * k - 1, rows: k, cols: k, ld: k }).unwrap();
        let e = be.householder(p_view, t_view);
        assert!(matches!(e, Err(Error::Overlapping { .. })), "{e:?}");
        (p.into_iter().map(Scalar::to_f64).collect::<Vec<_>>(), t.into_iter().map(Scalar::to_f64).collect::<Vec<_>>())
    });
    // V (unit lower trapezoidal) and T (upper triangular, τ on the diagonal).
    let v = |i: usize, j: usize| match i.cmp(&j) {
        std::cmp::Ordering::Less => 0.0,
        std::cmp::Ordering::Equal => 1.0,
        std::cmp::Ordering::Greater => panel[i + j * m],
    };
    assert!((0..k).all(|j| (j + 1..k).all(|i| t[i + j * k] == 0.0)), "T is not upper triangular");
    // Product of the reflectors, H₀·H₁⋯, applied to I column by column.
    let mut q: Vec<f64> = (0..m * m).map(|p| f64::from(u8::from(p % m == p / m))).collect();
    for j in (0..k).rev() {
        let tau = t[j + j * k];
        for c in 0..m {
            let w: f64 = (0..m).map(|i| v(i, j) * q[i + c * m]).sum();
            (0..m).for_each(|i| q[i + c * m] -= tau * v(i, j) * w);
        }
    }
    // I − V·T·Vᵀ.
    let vm: Vec<f64> = (0..k).flat_map(|j| (0..m).map(move |i| (i, j))).map(|(i, j)| v(i, j)).collect();
    let (vt, ..) = naive_matmul(&vm, (m, k), false, &t, (k, k), false);
    let (vtv, ..) = naive_matmul(&vt, (m, k), false, &vm, (m, k), true);
    let wy: Vec<f64> = (0..m * m).map(|p| f64::from(u8::from(p % m == p / m)) - vtv[p]).collect();
    let e = rel_error(&wy, &q);
    let bound = 10.0 * (m * k) as f64 * u::<T>();
    assert!(e <= bound, "{} {m}×{k}: ‖(I − VTVᵀ) − H₀⋯H_{{k−1}}‖ = {e:e} > {bound:e}", T::NAME);
    // R = Qᵀ·A: the panel's upper triangle.
    let (qta, ..) = naive_matmul(&q, (m, m), true, &a_t.iter().map(|x| x.to_f64()).collect::<Vec<_>>(), (m, k), false);
    let r: Vec<f64> = (0..m * k).map(|p| if p % m <= p / m { panel[p] } else { 0.0 }).collect();
    let e = rel_error(&qta, &r);
    assert!(e <= bound, "{} {m}×{k}: ‖Qᵀ·A − R‖/‖R‖ = {e:e}", T::NAME);
}

#[test]
fn householder_panel_matches_its_reflectors() {
    householder_panel::<f64>(50, 8);
    householder_panel::<f32>(37, 5);
    householder_panel::<f64>(9, 9);
    // Tall enough that a GPU spreads the rows over several blocks.
    householder_panel::<f64>(1100, 32);
    householder_panel::<f32>(1100, 17);
}

#[test]
fn tall_panels_spread_over_many_blocks() {
    check::<f64>(300, 5000, 96, 64, 32);
    check::<f32>(301, 3000, 40, 40, 32);
    // Spread over every SM by either kernel; on a GPU, in leaves of 16
    // columns where 32 would not fit in the SMs' shared memory.
    check::<f64>(302, 40_000, 32, 32, 32);
    check::<f64>(303, 120_000, 32, 32, 32);
    // Taller than shared memory holds even 16 columns of (1600 rows a
    // block, a block an SM): the global-memory kernel, whichever
    // GPUMAT_QR_PANEL asks for.
    check::<f64>(304, 250_000, 16, 16, 16);
}

#[test]
fn extreme_scales_neither_overflow_nor_underflow() {
    // A·2^±1000: the factors are those of A scaled exactly (V and T equal,
    // R scaled), since every squared norm is formed at a scale near 1.
    let (m, n) = (700, 40);
    let a = random(&mut rng(310), m, n);
    let base = upload::<f64>(&a, m, n).qr().unwrap();
    let (r0, q0) = (host(&base.r().unwrap()), host(&base.q().unwrap()));
    for e in [1000, -1000, -1060] {
        // In two factors: 2f64.powi(−1060) is 1/2^1060 = 0.
        let s = 2f64.powi(e / 2) * 2f64.powi(e - e / 2);
        let f = upload::<f64>(&a.iter().map(|x| x * s).collect::<Vec<_>>(), m, n).qr().unwrap();
        let r: Vec<f64> = host(&f.r().unwrap()).iter().map(|x| x / s).collect();
        let q = host(&f.q().unwrap());
        // Subnormal inputs (2^−1060) keep only part of their bits.
        let bound = if e < -1022 { 1e-3 } else { 4.0 * (m * n) as f64 * f64::EPSILON };
        assert!(r.iter().chain(&q).all(|x| x.is_finite()), "2^{e}: non-finite factor");
        assert!(rel_error(&r, &r0) <= bound, "2^{e}: R/2^{e} differs by {:e}", rel_error(&r, &r0));
        assert!(rel_error(&q, &q0) <= bound, "2^{e}: Q differs by {:e}", rel_error(&q, &q0));
    }
}

#[test]
fn min_norm_solves_of_underdetermined_systems() {
    // x = Aᵀ·(A·Aᵀ)⁻¹·B from faer in FP64: the solution of least norm, the
    // one in the range of Aᵀ. Within 4·m·n·κ₂(A)·u of it, and A·x = B to
    // 4·m·n·u relative to ‖A‖·‖x‖.
    for (seed, m, n, nrhs) in [(320, 30, 80, 2), (321, 1, 9, 1), (322, 50, 50, 3), (323, 97, 300, 1)] {
        let a = random(&mut rng(seed), m, n);
        let b = random(&mut rng(seed + 100), m, nrhs);
        let x = host(&upload::<f64>(&a, m, n).min_norm_solve(&upload::<f64>(&b, m, nrhs)).unwrap());
        let fa = faer_of(&a, m, n);
        let gram = &fa * fa.transpose();
        let y = gram.full_piv_lu().solve(faer_of(&b, m, nrhs));
        let xr = fa.transpose() * y;
        let xr: Vec<f64> = (0..nrhs).flat_map(|j| (0..n).map(move |i| (i, j))).map(|(i, j)| xr[(i, j)]).collect();
        let u = f64::EPSILON / 2.0;
        let kap = kappa(&fa.transpose().to_owned());
        let err = rel_error(&x, &xr);
        let bound = 4.0 * (m * n) as f64 * kap * u;
        assert!(err <= bound, "{m}×{n}: differs from Aᵀ(AAᵀ)⁻¹B by {err:e} > {bound:e}");
        let (ax, ..) = naive_matmul(&a, (m, n), false, &x, (n, nrhs), false);
        let res = frobenius(&ax.iter().zip(&b).map(|(p, q)| p - q).collect::<Vec<_>>());
        let rb = 4.0 * (m * n) as f64 * u * frobenius(&a) * frobenius(&x);
        assert!(res <= rb, "{m}×{n}: ‖A·x − B‖ = {res:e} > {rb:e}");
    }
    // Tall, mismatched, and dependent rows.
    let tall = upload::<f64>(&[1.0; 6], 3, 2);
    assert!(matches!(tall.min_norm_solve(&upload::<f64>(&[1.0; 3], 3, 1)), Err(Error::DimensionMismatch { .. })));
    let wide = upload::<f64>(&[1.0; 6], 2, 3);
    assert!(matches!(wide.min_norm_solve(&upload::<f64>(&[1.0; 3], 3, 1)), Err(Error::DimensionMismatch { .. })));
    // A zero row, and two equal rows (R(2, 2) rounding, not zero): both
    // refused rather than solved into huge entries.
    let mut zero_row = vec![0.0; 2 * 3];
    zero_row[0] = 1.0;
    let equal_rows = random(&mut rng(324), 1, 20).iter().flat_map(|&x| [x, x]).collect::<Vec<_>>();
    for (a, n) in [(zero_row, 3), (equal_rows, 20)] {
        let e = upload::<f64>(&a, 2, n).min_norm_solve(&upload::<f64>(&[1.0, 1.0], 2, 1));
        assert!(matches!(e, Err(Error::RankDeficient { .. })), "{e:?}");
    }
}

/// `m × n` of rank `r`: `X·Y` with `X` `m × r` and `Y` `r × n` random, its
/// columns scaled by `scales` (cycled) so that the pivoting has work.
fn low_rank(seed: u64, m: usize, n: usize, r: usize, scales: &[f64]) -> Vec<f64> {
    let (x, y) = (random(&mut rng(seed), m, r), random(&mut rng(seed + 1), r, n));
    let mut a = vec![0.0; m * n];
    for j in 0..n {
        for i in 0..m {
            a[i + j * m] = (0..r).map(|p| x[i + p * m] * y[p + j * r]).sum::<f64>() * scales[j % scales.len()];
        }
    }
    a
}

/// Column pivoting: `‖A·P − Q·R‖_F/‖A‖_F ≤ 4·m·n·u` and `‖QᵀQ − I‖_F ≤
/// 4·m·u` (against `A`'s columns permuted on the host), `|R(j, j)|`
/// non-increasing, the rank of exactly rank-deficient matrices found, and
/// the first pivot the column of largest norm; on shapes tall, wide and
/// square, with several panels of `T`.
#[test]
fn column_pivoting_reveals_the_rank() {
    let u = u::<f64>();
    for (m, n, r) in [(60, 40, 40), (60, 40, 17), (40, 60, 25), (300, 280, 150), (9, 9, 1), (5, 1, 1)] {
        let a = low_rank(m as u64, m, n, r, &[1.0, 1e-3, 30.0, 0.5]);
        let f = upload::<f64>(&a, m, n).qr_pivoted().unwrap();
        let perm = f.permutation().to_vec();
        let mut sorted = perm.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "{m}×{n}: not a permutation");
        let ap: Vec<f64> = (0..n).flat_map(|j| a[perm[j] * m..][..m].to_vec()).collect();
        let qr = host(&f.qr().reconstruct().unwrap());
        let err = rel_error(&qr, &ap);
        assert!(err <= 4.0 * (m * n) as f64 * u, "{m}×{n} rank {r}: ‖AP − QR‖/‖A‖ = {err:e}");
        let q = host(&f.qr().q().unwrap());
        let k = m.min(n);
        let (qtq, ..) = naive_matmul(&q, (m, k), true, &q, (m, k), false);
        let off: Vec<f64> = (0..k * k).map(|x| qtq[x] - if x % (k + 1) == 0 { 1.0 } else { 0.0 }).collect();
        assert!(frobenius(&off) <= 4.0 * m as f64 * u, "{m}×{n}: ‖QᵀQ − I‖ = {:e}", frobenius(&off));
        let d: Vec<f64> = f.qr().r_diagonal().unwrap().iter().map(|x| x.abs()).collect();
        for j in 1..d.len() {
            assert!(d[j] <= d[j - 1] * (1.0 + 1e-10) + 1e-13 * d[0], "{m}×{n}: |R(j, j)| grows at {j}: {d:?}");
        }
        assert_eq!(f.rank(None).unwrap(), r.min(k), "{m}×{n}: rank; |R(j, j)| = {:?}", &d[..(r + 2).min(k)]);
        let norms: Vec<f64> = (0..n).map(|j| frobenius(&a[j * m..][..m])).collect();
        let largest = norms.iter().cloned().fold(0.0, f64::max);
        assert_eq!(norms[perm[0]], largest, "{m}×{n}: the first pivot is not the largest column");
    }
}

/// The basic solution of a rank-deficient least-squares problem: `n − r`
/// zeros, the least residual (`‖Aᵀ·(A·x − b)‖ ≤ 10·m·n·u·‖A‖²·‖x‖ + …`, the
/// normal equations' residual of faer's minimum-norm solution as the
/// reference residual), and the full-rank answer where the rank is full.
#[test]
fn rank_deficient_least_squares_take_the_basic_solution() {
    let u = u::<f64>();
    for (m, n, r) in [(50, 30, 12), (30, 50, 20), (40, 40, 39)] {
        let a = low_rank(7 * m as u64, m, n, r, &[1.0, 4.0]);
        let b = random(&mut rng(3), m, 2);
        let (x, rank) = upload::<f64>(&a, m, n).qr_pivoted().unwrap().solve(&upload::<f64>(&b, m, 2)).unwrap();
        assert_eq!(rank, r);
        let x = host(&x);
        assert_eq!(x.iter().filter(|v| **v == 0.0).count(), 2 * (n - r), "{m}×{n}: zeros of the basic solution");
        // The residual of x against faer's least-squares residual (the
        // normal equations' solution of least norm, by SVD).
        let fa = faer_of(&a, m, n);
        let svd = fa.svd().unwrap();
        let (s, uu, v) = (svd.S(), svd.U(), svd.V());
        let fb = faer_of(&b, m, 2);
        let mut best = Mat::<f64>::zeros(n, 2);
        for i in 0..r {
            let coef = uu.col(i).transpose() * &fb;
            for c in 0..2 {
                let w = coef[c] / s[i];
                for p in 0..n {
                    best[(p, c)] += w * v[(p, i)];
                }
            }
        }
        let residual = |x: &Mat<f64>| {
            frobenius(
                &(0..2)
                    .flat_map(|c| (0..m).map(move |i| (i, c)))
                    .map(|(i, c)| (0..n).map(|p| fa[(i, p)] * x[(p, c)]).sum::<f64>() - fb[(i, c)])
                    .collect::<Vec<_>>(),
            )
        };
        let ours = residual(&Mat::from_fn(n, 2, |p, c| x[p + c * n]));
        let reference = residual(&best);
        let a_norm = frobenius(&a);
        let xn = frobenius(&x);
        assert!(
            ours - reference <= 100.0 * (m * n) as f64 * u * a_norm * xn + 1e-12 * reference,
            "{m}×{n}: residual {ours:e} against {reference:e}"
        );
    }
    // Full rank: the same answer as the unpivoted QR's solve.
    let (m, n) = (40, 25);
    let a = random(&mut rng(41), m, n);
    let b = random(&mut rng(42), m, 1);
    let (x, rank) = upload::<f64>(&a, m, n).qr_pivoted().unwrap().solve(&upload::<f64>(&b, m, 1)).unwrap();
    let plain = host(&upload::<f64>(&a, m, n).qr().unwrap().solve(&upload::<f64>(&b, m, 1)).unwrap());
    assert_eq!(rank, n);
    assert!(rel_error(&host(&x), &plain) <= 1e3 * (m * n) as f64 * u);
}

/// Zero and empty matrices, one column, a tolerance out of range, and B of
/// the wrong height.
#[test]
fn pivoted_qr_edge_cases() {
    let zero = upload::<f64>(&[0.0; 12], 4, 3).qr_pivoted().unwrap();
    assert_eq!(zero.rank(None).unwrap(), 0);
    let (x, r) = zero.solve(&upload::<f64>(&[1.0; 4], 4, 1)).unwrap();
    assert_eq!((host(&x), r), (vec![0.0; 3], 0));
    let empty = upload::<f64>(&[], 0, 3).qr_pivoted().unwrap();
    assert_eq!(empty.rank(None).unwrap(), 0);
    assert_eq!(empty.permutation(), &[0, 1, 2]);
    let one = upload::<f64>(&[3.0, 4.0], 2, 1).qr_pivoted().unwrap();
    assert_eq!(one.rank(Some(0.5)).unwrap(), 1);
    assert!((one.qr().r_diagonal().unwrap()[0].abs() - 5.0).abs() < 1e-14);
    assert!(matches!(one.rank(Some(f64::NAN)), Err(Error::InvalidArgument(_))));
    assert!(matches!(one.rank(Some(-1.0)), Err(Error::InvalidArgument(_))));
    assert!(matches!(one.solve(&upload::<f64>(&[1.0; 3], 3, 1)), Err(Error::DimensionMismatch { .. })));
    let nan = upload::<f64>(&[1.0, f64::NAN, 0.0, 2.0], 2, 2).qr_pivoted();
    assert!(matches!(nan, Err(Error::NonFinite { .. })));
}
