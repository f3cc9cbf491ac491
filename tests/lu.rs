//! LU with partial pivoting, unpivoted LU and Gauss-Jordan on the device
//! under test, against FP64 references on the host (faer and naive loops).
//! Bounds: ‖A − Pᵀ·L·U‖_F/‖A‖_F and a solve's backward error
//! ‖A·x − b‖/(‖A‖·‖x‖ + ‖b‖) ≤ 10·n·u·ρ, with ρ = max|uᵢⱼ|/max|aᵢⱼ| the
//! growth factor (Higham, Thm 9.3 and 9.4).

mod common;

use common::*;
use faer::Mat;
use faer::linalg::solvers::{DenseSolveCore, Solve};
use gpumat::backend::{Backend, Block, BufferMut, Pivoting, View, ViewMut};
use gpumat::factor::lu::{self, LuParams};
use gpumat::{Error, Matrix, Scalar};
use rand::Rng;

fn upload<T: Scalar>(data: &[f64], rows: usize, cols: usize) -> Matrix<T> {
    let v: Vec<T> = data.iter().map(|&x| T::from_f64(x)).collect();
    device().from_col_major(rows, cols, &v).unwrap()
}

fn host<T: Scalar>(a: &Matrix<T>) -> Vec<f64> {
    a.to_host().unwrap().into_iter().map(Scalar::to_f64).collect()
}

fn faer_of(a: &[f64], rows: usize, cols: usize) -> Mat<f64> {
    Mat::from_fn(rows, cols, |i, j| a[i + j * rows])
}

fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// ρ = max|U| / max|A|.
fn growth(lu: &[f64], a: &[f64], n: usize) -> f64 {
    let u = (0..n).flat_map(|j| (0..=j).map(move |i| (i, j))).fold(0.0f64, |m, (i, j)| m.max(lu[i + j * n].abs()));
    u / max_abs(a)
}

/// Factors, reconstructs and solves; asserts the bounds and the agreement
/// with faer's solution; returns (factor error, backward error, ρ).
fn check<T: Scalar>(a: &[f64], n: usize, params: LuParams) -> (f64, f64, f64) {
    let da = upload::<T>(a, n, n);
    let a_t = host(&da);
    let f = da.lu_with(Pivoting::Partial, params).unwrap();
    let rho = growth(&host(f.factors()), &a_t, n);
    let bound = 10.0 * n as f64 * u::<T>() * rho.max(1.0);
    let fac = rel_error(&host(&f.reconstruct().unwrap()), &a_t);
    assert!(fac <= bound, "{} n={n} {params:?}: ‖A − PᵀLU‖/‖A‖ = {fac:e} > {bound:e}", T::NAME);
    let b = random(&mut rng(n as u64 + 7), n, 3);
    let x = host(&f.solve(&upload::<T>(&b, n, 3)).unwrap());
    let (ax, ..) = naive_matmul(&a_t, (n, n), false, &x, (n, 3), false);
    let b_t: Vec<f64> = b.iter().map(|&v| T::from_f64(v).to_f64()).collect();
    let r: Vec<f64> = ax.iter().zip(&b_t).map(|(p, q)| p - q).collect();
    let berr = frobenius(&r) / (frobenius(&a_t) * frobenius(&x) + frobenius(&b_t));
    assert!(berr <= bound, "{} n={n}: backward error {berr:e} > {bound:e}", T::NAME);
    // The same system solved by faer in f64: agreement to cond·(our error).
    let reference = faer_of(&a_t, n, n).partial_piv_lu().solve(faer_of(&b_t, n, 3));
    let xr: Vec<f64> = (0..3).flat_map(|j| (0..n).map(move |i| (i, j))).map(|(i, j)| reference[(i, j)]).collect();
    let cond = 1.0 / f.rcond().unwrap();
    let diff = rel_error(&x, &xr);
    assert!(diff <= 10.0 * cond * bound, "{} n={n}: x differs from faer's by {diff:e} (cond {cond:e})", T::NAME);
    // Aᵀ·x = b too.
    let xt = host(&f.solve_transposed(&upload::<T>(&b, n, 3)).unwrap());
    let (atx, ..) = naive_matmul(&a_t, (n, n), true, &xt, (n, 3), false);
    let rt: Vec<f64> = atx.iter().zip(&b_t).map(|(p, q)| p - q).collect();
    let berr_t = frobenius(&rt) / (frobenius(&a_t) * frobenius(&xt) + frobenius(&b_t));
    assert!(berr_t <= bound, "{} n={n}: transposed backward error {berr_t:e} > {bound:e}", T::NAME);
    (fac, berr, rho)
}

#[test]
fn random_matrices_within_the_backward_error_bound() {
    let small = LuParams { block_size: 16, leaf_size: 4, ..LuParams::default() };
    for &n in &[1, 2, 7, 33, 100, 161] {
        let a = random(&mut rng(n as u64), n, n);
        check::<f64>(&a, n, small);
        check::<f64>(&a, n, LuParams::for_order(n));
        check::<f32>(&a, n, small);
    }
    let n = 300;
    let a = random(&mut rng(3), n, n);
    check::<f64>(&a, n, LuParams::default());
    check::<f32>(&a, n, LuParams { block_size: 64, leaf_size: 8, ..LuParams::default() });
    // The main queue ahead of the side queue's updates by 2 to 4 panels.
    for look_ahead in 2..=4 {
        check::<f64>(&a, n, LuParams { block_size: 32, leaf_size: 8, look_ahead, ..LuParams::default() });
        check::<f32>(&a, n, LuParams { block_size: 32, leaf_size: 8, look_ahead, ..LuParams::default() });
    }
}

/// A uniform in [0, 10], b its row sums, so x = 1.
fn row_sums_test(n: usize) {
    let mut r = rng(2000);
    let a: Vec<f64> = (0..n * n).map(|_| r.random_range(0.0..10.0)).collect();
    let b: Vec<f64> = (0..n).map(|i| (0..n).map(|j| a[i + j * n]).sum()).collect();
    let x = host(&upload::<f64>(&a, n, n).lu().unwrap().solve(&upload::<f64>(&b, n, 1)).unwrap());
    let worst = x.iter().fold(0.0f64, |m, v| m.max((v - 1.0).abs()));
    assert!(worst <= 1e-10, "n={n}: max |x − 1| = {worst:e} > 1e-10");
}

/// At n = 2000 (about 2 s on the CPU in a debug build).
#[test]
fn row_sums_give_ones() {
    row_sums_test(2000);
}

#[test]
fn brodtkorbs_pivoting_example() {
    // (−1e−4, 1; 1, 1)·x = (1, 2): without pivoting 1 − 1e4 loses x₁ in f32.
    let a = [-1e-4, 1.0, 1.0, 1.0];
    let b = [1.0, 2.0];
    let exact = [1.0 / 1.0001, 1.0 + 1e-4 / 1.0001];
    for x in [
        host(&upload::<f64>(&a, 2, 2).lu().unwrap().solve(&upload::<f64>(&b, 2, 1)).unwrap()),
        host(&upload::<f32>(&a, 2, 2).lu().unwrap().solve(&upload::<f32>(&b, 2, 1)).unwrap()),
    ] {
        assert!(rel_error(&x, &exact) <= 1e-6, "{x:?} vs {exact:?}");
    }
    let f = upload::<f64>(&a, 2, 2).lu().unwrap();
    assert_eq!(f.pivots().unwrap(), vec![2, 2], "row 2 is the pivot");
}

#[test]
fn wilkinsons_growth_matrix_grows_as_lapack() {
    // 1 on the diagonal and last column, −1 below: partial pivoting does no
    // exchange (ties go to the first row) and u_nn = 2^(n−1), exactly.
    let n = 60;
    let mut a = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..n {
            a[i + j * n] = if i == j || j == n - 1 {
                1.0
            } else if i > j {
                -1.0
            } else {
                0.0
            };
        }
    }
    let f = upload::<f64>(&a, n, n)
        .lu_with(Pivoting::Partial, LuParams { block_size: 16, leaf_size: 4, ..LuParams::default() })
        .unwrap();
    assert_eq!(f.pivots().unwrap(), (1..=n as i32).collect::<Vec<_>>());
    let lu = host(f.factors());
    for i in 0..n {
        assert_eq!(lu[i + (n - 1) * n], 2f64.powi(i as i32), "u({i}, n)");
    }
    let log = f.log_abs_det().unwrap();
    assert!((log - (n - 1) as f64 * 2f64.ln()).abs() <= 1e-13 * log, "log|det| = {log}");
    let det_ref = faer_of(&a, n, n).determinant();
    assert!((f.det().unwrap() - det_ref).abs() <= 1e-12 * det_ref.abs());
}

#[test]
fn determinant_sign_and_log() {
    let n = 40;
    let a = random(&mut rng(5), n, n);
    let f = upload::<f64>(&a, n, n)
        .lu_with(Pivoting::Partial, LuParams { block_size: 8, leaf_size: 4, ..LuParams::default() })
        .unwrap();
    let det_ref = faer_of(&a, n, n).determinant();
    let det = f.det().unwrap();
    assert!((det - det_ref).abs() <= 1e-10 * det_ref.abs(), "{det} vs {det_ref}");
    let (sign, log) = f.sign_log_abs_det().unwrap();
    assert_eq!(sign, det_ref.signum());
    assert!((log - det_ref.abs().ln()).abs() <= 1e-10);
    // 1000·I has det 10^3000: log|det| does not overflow.
    let big: Vec<f64> = (0..n * n).map(|p| if p % (n + 1) == 0 { 1e3 } else { 0.0 }).collect();
    let g = upload::<f64>(&big, n, n).lu().unwrap();
    assert!((g.log_abs_det().unwrap() - n as f64 * 1e3f64.ln()).abs() <= 1e-9);
}

#[test]
fn singular_input_names_the_pivot() {
    for &(n, zero_col) in &[(5, 3), (70, 40)] {
        let mut a = random(&mut rng(9), n, n);
        a[zero_col * n..(zero_col + 1) * n].fill(0.0);
        let m = upload::<f64>(&a, n, n);
        match m.lu_with(Pivoting::Partial, LuParams { block_size: 16, leaf_size: 4, ..LuParams::default() }) {
            Err(Error::Singular { pivot }) => assert_eq!(pivot, zero_col + 1),
            other => panic!("n={n}: expected Singular, got {other:?}"),
        }
        assert!(matches!(m.inverse(), Err(Error::Singular { .. })));
        assert!(
            matches!(m.solve_gauss_jordan(&upload::<f64>(&vec![1.0; n], n, 1)), Err(Error::Singular { pivot }) if pivot == zero_col + 1)
        );
        assert_eq!(m.det().unwrap(), 0.0);
    }
    let z = upload::<f64>(&[0.0; 9], 3, 3);
    assert!(matches!(z.lu(), Err(Error::Singular { pivot: 1 })));
    let nan = upload::<f64>(&[1.0, f64::NAN, 0.0, 1.0], 2, 2);
    assert!(matches!(nan.lu(), Err(Error::NonFinite { row: 2, col: 1, .. })));
    let rect = upload::<f64>(&[1.0; 6], 2, 3);
    assert!(matches!(rect.lu(), Err(Error::DimensionMismatch { .. })));
}

#[test]
fn unpivoted_lu_on_safe_matrices_and_refusing_tiny_pivots() {
    let n = 50;
    let mut a = random(&mut rng(12), n, n);
    (0..n).for_each(|i| a[i + i * n] += n as f64);
    let da = upload::<f64>(&a, n, n);
    let f = da.lu_unpivoted().unwrap();
    assert_eq!(f.pivots().unwrap(), (1..=n as i32).collect::<Vec<_>>());
    let err = rel_error(&host(&f.reconstruct().unwrap()), &a);
    assert!(err <= 10.0 * n as f64 * u::<f64>(), "{err:e}");
    // The pivoting example: a pivot of 1e−4 is fine, one of 1e−20 is not.
    let tiny = upload::<f64>(&[1e-20, 1.0, 1.0, 1.0], 2, 2);
    assert!(matches!(tiny.lu_unpivoted(), Err(Error::Singular { pivot: 1 })));
    assert!(tiny.lu().is_ok(), "partial pivoting handles it");
    // A zero at the second step, found past a block boundary.
    let mut b = vec![0.0; 9 * 9];
    (0..9).for_each(|i| b[i + i * 9] = 1.0);
    b[5 + 5 * 9] = 0.0;
    let db = upload::<f64>(&b, 9, 9);
    match db.lu_with(Pivoting::None { tol: 0.0 }, LuParams { block_size: 4, leaf_size: 2, ..LuParams::default() }) {
        Err(Error::Singular { pivot }) => assert_eq!(pivot, 6),
        other => panic!("expected Singular, got {other:?}"),
    }
}

#[test]
fn unpivoted_lu_with_wide_leaves_and_many_rows_below_them() {
    // Leaves of 64 columns over 700 rows: on a GPU, blocks of rows below
    // each diagonal block that each factor it themselves.
    let n = 700;
    let mut a = random(&mut rng(31), n, n);
    (0..n).for_each(|i| a[i + i * n] += 2.0 * n as f64);
    for leaf_size in [64, 48] {
        let params = LuParams { block_size: 256, leaf_size, ..LuParams::default() };
        for single in [false, true] {
            let (fac, bound) = if single {
                let f = upload::<f32>(&a, n, n).lu_with(Pivoting::None { tol: 0.0 }, params).unwrap();
                let a32 = host(&upload::<f32>(&a, n, n));
                (rel_error(&host(&f.reconstruct().unwrap()), &a32), 10.0 * n as f64 * u::<f32>())
            } else {
                let f = upload::<f64>(&a, n, n).lu_with(Pivoting::None { tol: 0.0 }, params).unwrap();
                assert_eq!(f.pivots().unwrap(), (1..=n as i32).collect::<Vec<_>>());
                (rel_error(&host(&f.reconstruct().unwrap()), &a), 10.0 * n as f64 * u::<f64>())
            };
            assert!(fac <= bound, "leaf {leaf_size}, f32 {single}: ‖A − LU‖/‖A‖ = {fac:e} > {bound:e}");
        }
    }
    // A zero pivot inside a leaf, with rows below it, is named.
    let mut b = vec![0.0; n * n];
    (0..n).for_each(|i| b[i + i * n] = 1.0);
    b[100 + 100 * n] = 0.0;
    let params = LuParams { block_size: 256, leaf_size: 64, ..LuParams::default() };
    match upload::<f64>(&b, n, n).lu_with(Pivoting::None { tol: 0.0 }, params) {
        Err(Error::Singular { pivot }) => assert_eq!(pivot, 101),
        other => panic!("expected Singular at 101, got {other:?}"),
    }
}

#[test]
fn inverse_and_gauss_jordan_solve() {
    let n = 45;
    let a = random(&mut rng(21), n, n);
    let da = upload::<f64>(&a, n, n);
    let inv = host(&da.inverse().unwrap());
    let reference = faer_of(&a, n, n).partial_piv_lu().inverse();
    let r: Vec<f64> = (0..n * n).map(|p| reference[(p % n, p / n)]).collect();
    let cond = 1.0 / da.lu().unwrap().rcond().unwrap();
    let bound = 100.0 * n as f64 * u::<f64>() * cond;
    assert!(rel_error(&inv, &r) <= bound, "inverse: {:e} > {bound:e}", rel_error(&inv, &r));
    let gj = host(&da.solve_gauss_jordan(&device().identity::<f64>(n).unwrap()).unwrap());
    assert!(rel_error(&gj, &r) <= bound, "Gauss-Jordan inverse: {:e}", rel_error(&gj, &r));
    let b = random(&mut rng(22), n, 4);
    let x = host(&da.solve_gauss_jordan(&upload::<f64>(&b, n, 4)).unwrap());
    let (ax, ..) = naive_matmul(&a, (n, n), false, &x, (n, 4), false);
    assert!(rel_error(&ax, &b) <= bound, "A·x − b: {:e}", rel_error(&ax, &b));
    // f32 inverse of a well-conditioned matrix.
    let mut w = a.clone();
    (0..n).for_each(|i| w[i + i * n] += n as f64);
    let inv32 = host(&upload::<f32>(&w, n, n).inverse().unwrap());
    let (prod, ..) = naive_matmul(&w, (n, n), false, &inv32, (n, n), false);
    let eye: Vec<f64> = (0..n * n).map(|p| f64::from(u8::from(p % (n + 1) == 0))).collect();
    assert!(rel_error(&prod, &eye) <= 100.0 * n as f64 * u::<f32>(), "{:e}", rel_error(&prod, &eye));
}

#[test]
fn condition_estimate_brackets_the_true_value() {
    for &(n, scale) in &[(30, 1.0), (60, 1e-8)] {
        let mut a = random(&mut rng(31), n, n);
        // Shrink one column: condition ~ 1/scale.
        a[..n].iter_mut().for_each(|x| *x *= scale);
        let da = upload::<f64>(&a, n, n);
        let est = da.lu().unwrap().rcond().unwrap();
        let inv = faer_of(&a, n, n).partial_piv_lu().inverse();
        let one = |m: &dyn Fn(usize, usize) -> f64| {
            (0..n).map(|j| (0..n).map(|i| m(i, j).abs()).sum::<f64>()).fold(0.0, f64::max)
        };
        let truth = 1.0 / (one(&|i, j| a[i + j * n]) * one(&|i, j| inv[(i, j)]));
        // The estimate of ‖A⁻¹‖ is a lower bound, nearly always within 3.
        assert!(est >= truth * (1.0 - 1e-8) && est <= 10.0 * truth, "n={n}: rcond {est:e} vs {truth:e}");
    }
}

/// The RREF's defining properties: zero rows at the bottom, pivot columns
/// the identity's, leading ones; and `A = A[:, pivots]·R[..rank, :]`.
fn check_rref(a: &[f64], m: usize, n: usize, rank: usize) {
    let r = upload::<f64>(a, m, n).rref(None).unwrap();
    assert_eq!(r.rank, rank, "{m}×{n}");
    let rh = host(&r.matrix);
    for (k, &c) in r.pivots.iter().enumerate() {
        for i in 0..m {
            assert_eq!(rh[i + c * m], f64::from(u8::from(i == k)), "pivot column {c}, row {i}");
        }
        (0..c).for_each(|j| assert_eq!(rh[k + j * m], 0.0, "left of pivot ({k}, {c})"));
    }
    assert!(rh.iter().enumerate().filter(|(p, _)| p % m >= rank).all(|(_, &v)| v == 0.0), "zero rows at the bottom");
    let basis: Vec<f64> = r.pivots.iter().flat_map(|&c| a[c * m..(c + 1) * m].to_vec()).collect();
    let top: Vec<f64> = (0..n).flat_map(|j| (0..rank).map(move |i| (i, j))).map(|(i, j)| rh[i + j * m]).collect();
    let (back, ..) = naive_matmul(&basis, (m, rank), false, &top, (rank, n), false);
    assert!(rel_error(&back, a) <= 1e-12, "{m}×{n}: A ≠ A[:, p]·R: {:e}", rel_error(&back, a));
}

#[test]
fn rref_of_rank_deficient_and_rectangular_inputs() {
    let mut g = rng(41);
    let low_rank = |m: usize, n: usize, k: usize, g: &mut _| {
        let (x, y) = (random(g, m, k), random(g, k, n));
        naive_matmul(&x, (m, k), false, &y, (k, n), false).0
    };
    check_rref(&low_rank(5, 7, 3, &mut g), 5, 7, 3);
    check_rref(&low_rank(8, 4, 2, &mut g), 8, 4, 2);
    check_rref(&random(&mut g, 6, 3), 6, 3, 3);
    check_rref(&random(&mut g, 3, 6), 3, 6, 3);
    check_rref(&[0.0; 12], 3, 4, 0);
    // A zero column between pivots: pivots skip it.
    let mut a = random(&mut g, 4, 4);
    a[4..8].fill(0.0);
    let r = upload::<f64>(&a, 4, 4).rref(None).unwrap();
    assert_eq!((r.rank, r.pivots.clone()), (3, vec![0, 2, 3]));
    check_rref(&a, 4, 4, 3);
}

/// `dgetf2` on the host: the factor of the `m × nb` column-major `a` and its
/// 1-based pivots, counted from row `offset`.
fn host_getf2(a: &[f64], m: usize, nb: usize, offset: usize) -> (Vec<f64>, Vec<i32>) {
    let mut h = a.to_vec();
    let mut hp = vec![0i32; nb];
    for j in 0..nb {
        let q = (j..m).fold(j, |b, i| if h[i + j * m].abs() > h[b + j * m].abs() { i } else { b });
        hp[j] = (offset + q + 1) as i32;
        (0..nb).for_each(|k| h.swap(j + k * m, q + k * m));
        let dj = h[j + j * m];
        for i in j + 1..m {
            h[i + j * m] /= dj;
            for k in j + 1..nb {
                h[i + k * m] -= h[i + j * m] * h[j + k * m];
            }
        }
    }
    (h, hp)
}

/// `getrf_leaf` against the host: the leaf as `dgetf2`, the block column's
/// other columns exchanged row for row, on blocks inside a larger buffer.
/// On the GPU the tall ones spread over many blocks, which meet at the end
/// to move the other columns' rows.
fn leaf_against_host<B: Backend>(be: &B) {
    for &(m, width, first, nb) in
        &[(40, 12, 4, 5), (300, 96, 32, 32), (64, 64, 0, 32), (129, 70, 37, 33), (5000, 256, 96, 32), (40000, 40, 8, 9)]
    {
        let (ld, off) = (m + 3, 2);
        let a = random(&mut rng((m * 7 + first) as u64), m, width);
        let mut buf = vec![9.0f64; off + ld * width];
        (0..width).for_each(|j| buf[off + j * ld..off + j * ld + m].copy_from_slice(&a[j * m..(j + 1) * m]));
        let mut d = be.upload(&buf).unwrap();
        let mut piv = be.alloc::<i32>(nb).unwrap();
        let mut info = be.upload(&[0i32]).unwrap();
        be.getrf_leaf(
            ViewMut::new(&mut d, Block { offset: off, rows: m, cols: width, ld }).unwrap(),
            first..first + nb,
            ViewMut::dense(&mut piv, nb, 1).unwrap(),
            ViewMut::dense(&mut info, 1, 1).unwrap(),
            3,
            Pivoting::Partial,
        )
        .unwrap();
        let mut got = vec![0.0; buf.len()];
        be.download(&d, &mut got).unwrap();
        let mut p = vec![0i32; nb];
        be.download(&piv, &mut p).unwrap();
        let (h, hp) = host_getf2(&a[first * m..(first + nb) * m], m, nb, 3);
        assert_eq!(p, hp, "{m}×{width}, leaf {first}+{nb}: pivots");
        let col = |j: usize| got[off + j * ld..off + j * ld + m].to_vec();
        let leaf: Vec<f64> = (first..first + nb).flat_map(col).collect();
        assert!(rel_error(&leaf, &h) <= 100.0 * m as f64 * u::<f64>(), "{m}×{width}: leaf {:e}", rel_error(&leaf, &h));
        for j in (0..width).filter(|j| !(first..first + nb).contains(j)) {
            let mut want = a[j * m..(j + 1) * m].to_vec();
            hp.iter().enumerate().for_each(|(i, &q)| want.swap(i, q as usize - 4));
            assert_eq!(col(j), want, "{m}×{width}, leaf {first}+{nb}: column {j}");
        }
        assert!(
            got[..off].iter().all(|&v| v == 9.0)
                && (0..width).all(|j| got[off + j * ld + m..off + (j + 1) * ld].iter().all(|&v| v == 9.0)),
            "{m}×{width}: wrote outside the block"
        );
    }
}

#[test]
fn leaf_moves_the_rows_of_the_whole_block_column() {
    let dev = device();
    gpumat::with_backend!(dev, be => leaf_against_host(be));
}

/// `getrf_panel` and `laswp` on the device against a host `dgetf2` in f64,
/// at awkward shapes, on blocks inside a larger buffer.
fn panel_against_host<B: Backend>(be: &B) {
    // Tall ones spread over many blocks of the GPU; "ties" ones have entries
    // in {−2, …, 2}, so that both columns' values are exact and many rows tie
    // for the pivot (the first, by position, wins).
    let cases = [(1, 1), (5, 1), (37, 5), (300, 7), (64, 32), (129, 33), (1024, 16), (2048, 1), (5000, 32), (40000, 9)];
    let ties = [(700, 2), (3000, 2), (40000, 2)];
    for (m, nb, tie) in cases.iter().map(|&(m, nb)| (m, nb, false)).chain(ties.iter().map(|&(m, nb)| (m, nb, true))) {
        let (ld, off) = (m + 3, 2);
        let a = if tie {
            (0..m * nb).map(|i| ((i * 7919 + i / 13) % 5) as f64 - 2.0).collect()
        } else {
            random(&mut rng((m * 100 + nb) as u64), m, nb)
        };
        let mut buf = vec![9.0f64; off + ld * nb];
        (0..nb).for_each(|j| buf[off + j * ld..off + j * ld + m].copy_from_slice(&a[j * m..(j + 1) * m]));
        let mut d = be.upload(&buf).unwrap();
        let mut piv = be.alloc::<i32>(nb + 1).unwrap();
        let mut info = be.upload(&[0i32]).unwrap();
        let block = Block { offset: off, rows: m, cols: nb, ld };
        be.getrf_panel(
            ViewMut::new(&mut d, block).unwrap(),
            ViewMut::new(&mut piv, Block { offset: 1, rows: nb, cols: 1, ld: nb }).unwrap(),
            ViewMut::dense(&mut info, 1, 1).unwrap(),
            10,
            Pivoting::Partial,
        )
        .unwrap();
        let mut got = vec![0.0; buf.len()];
        be.download(&d, &mut got).unwrap();
        let mut p = vec![0i32; nb + 1];
        be.download(&piv, &mut p).unwrap();
        let (h, hp) = host_getf2(&a, m, nb, 10);
        assert_eq!(&p[1..], &hp[..], "{m}×{nb}: pivots");
        let ours: Vec<f64> = (0..nb).flat_map(|j| got[off + j * ld..off + j * ld + m].to_vec()).collect();
        assert!(rel_error(&ours, &h) <= 100.0 * m as f64 * u::<f64>(), "{m}×{nb}: {:e}", rel_error(&ours, &h));
        assert!(
            got[..off].iter().all(|&v| v == 9.0)
                && (0..nb).all(|j| got[off + j * ld + m..off + (j + 1) * ld].iter().all(|&v| v == 9.0)),
            "{m}×{nb}: wrote outside the block"
        );
        // laswp forward then reverse on a wide block is the identity, and
        // forward matches the host's exchanges.
        let w = 130;
        let c = random(&mut rng(m as u64), m, w);
        let mut dc = be.upload(&c).unwrap();
        let pv = View::new(&piv, Block { offset: 1, rows: nb, cols: 1, ld: nb }).unwrap();
        be.laswp(ViewMut::dense(&mut dc, m, w).unwrap(), pv, 10, false).unwrap();
        let mut fwd = vec![0.0; m * w];
        be.download(&dc, &mut fwd).unwrap();
        let mut hc = c.clone();
        for (i, &q) in hp.iter().enumerate() {
            (0..w).for_each(|k| hc.swap(i + k * m, q as usize - 11 + k * m));
        }
        assert_eq!(fwd, hc, "{m}×{nb}: laswp");
        be.laswp(ViewMut::dense(&mut dc, m, w).unwrap(), pv, 10, true).unwrap();
        be.download(&dc, &mut fwd).unwrap();
        assert_eq!(fwd, c, "{m}×{nb}: laswp reversed");
    }
    // A zero column: info names it, the factorization goes on.
    let mut z = random(&mut rng(77), 20, 4);
    z[20..40].fill(0.0);
    let mut d = be.upload(&z).unwrap();
    let mut piv = be.alloc::<i32>(4).unwrap();
    let mut info = be.upload(&[0i32]).unwrap();
    be.getrf_panel(
        ViewMut::dense(&mut d, 20, 4).unwrap(),
        ViewMut::dense(&mut piv, 4, 1).unwrap(),
        ViewMut::dense(&mut info, 1, 1).unwrap(),
        0,
        Pivoting::Partial,
    )
    .unwrap();
    let mut i = [0i32];
    be.download(&info, &mut i).unwrap();
    assert_eq!(i[0], 2);
    // Wide panels are refused.
    let mut w = be.alloc::<f64>(6).unwrap();
    let r = be.getrf_panel(
        ViewMut::dense(&mut w, 2, 3).unwrap(),
        ViewMut::dense(&mut piv, 3, 1).unwrap(),
        ViewMut::dense(&mut info, 1, 1).unwrap(),
        0,
        Pivoting::Partial,
    );
    assert!(matches!(r, Err(Error::DimensionMismatch { .. })));
}

/// `laswp` with any pivots, as `dlaswp` takes them: rows named twice, above
/// the first exchanged row, outside the block (skipped), more than one
/// launch's worth, forward and reversed, against the host's exchanges.
fn interchanges_against_host<B: Backend>(be: &B) {
    for &(m, k, w, shift) in &[(6, 6, 3, 0), (50, 40, 7, 2), (1000, 700, 20, 5), (3000, 1200, 9, 0)] {
        let mut r = rng((m + k) as u64);
        let ipiv: Vec<i32> = (0..k)
            .map(|i| match r.random_range(0..10) {
                0 => (shift + m + 3) as i32,                     // outside: skipped
                1 => (shift + 1 + r.random_range(0..=i)) as i32, // at or above row i
                2 => (shift + 1 + (i * 7) % 5) as i32,           // named again and again
                _ => (shift + 1 + r.random_range(i..m)) as i32,  // below, as LU's
            })
            .collect();
        let c = random(&mut r, m, w);
        let dp = be.upload(&ipiv).unwrap();
        for reverse in [false, true] {
            let mut h = c.clone();
            let steps: Vec<usize> = if reverse { (0..k).rev().collect() } else { (0..k).collect() };
            for i in steps {
                let p = ipiv[i] as i64 - 1 - shift as i64;
                if (0..m as i64).contains(&p) {
                    (0..w).for_each(|j| h.swap(i + j * m, p as usize + j * m));
                }
            }
            let mut dc = be.upload(&c).unwrap();
            be.laswp(ViewMut::dense(&mut dc, m, w).unwrap(), View::dense(&dp, k, 1).unwrap(), shift, reverse).unwrap();
            let mut got = vec![0.0; m * w];
            be.download(&dc, &mut got).unwrap();
            assert_eq!(got, h, "m {m}, k {k}, reverse {reverse}");
        }
    }
}

#[test]
fn interchanges_match_the_host_for_any_pivots() {
    let dev = device();
    gpumat::with_backend!(dev, be => interchanges_against_host(be));
}

#[test]
fn panel_and_interchanges_match_the_host() {
    let dev = device();
    gpumat::with_backend!(dev, be => panel_against_host(be));
}

/// The algorithm layer on a rectangular block inside a larger buffer, with
/// every depth of look-ahead: up to 5 panels' updates left to the main
/// queue, more than some of these shapes have panels.
fn rectangular<B: Backend>(be: &B) {
    let shapes = [(90, 40), (40, 90), (33, 33), (150, 150), (200, 64), (64, 200)];
    for (&(m, n), look_ahead) in shapes.iter().flat_map(|s| [1, 2, 3, 5].map(move |d| (s, d))) {
        let (ld, off) = (m + 5, 7);
        let a = random(&mut rng((m + n) as u64), m, n);
        let mut buf = vec![0.0f64; off + ld * n];
        (0..n).for_each(|j| buf[off + j * ld..off + j * ld + m].copy_from_slice(&a[j * m..(j + 1) * m]));
        let mut d = be.upload(&buf).unwrap();
        let k = m.min(n);
        let mut piv = be.alloc::<i32>(k).unwrap();
        let mut info = be.upload(&[0i32]).unwrap();
        let block = Block { offset: off, rows: m, cols: n, ld };
        {
            let ab = BufferMut::new(&mut d);
            let pb = BufferMut::new(&mut piv);
            let mut st = ViewMut::dense(&mut info, 1, 1).unwrap();
            let params = LuParams { block_size: 16, leaf_size: 4, look_ahead, ..LuParams::default() };
            lu::factor_in_place(be, &ab, block, &pb, Block::dense(k, 1), &mut st, Pivoting::Partial, params).unwrap();
        }
        let mut out = be.alloc::<f64>(m * n).unwrap();
        lu::reconstruct(
            be,
            View::new(&d, block).unwrap(),
            View::dense(&piv, k, 1).unwrap(),
            ViewMut::dense(&mut out, m, n).unwrap(),
        )
        .unwrap();
        let mut back = vec![0.0; m * n];
        be.download(&out, &mut back).unwrap();
        let err = rel_error(&back, &a);
        assert!(err <= 1e3 * m.max(n) as f64 * u::<f64>(), "{m}×{n}, look-ahead {look_ahead}: {err:e}");
    }
}

#[test]
fn rectangular_blocks_inside_a_buffer() {
    let dev = device();
    gpumat::with_backend!(dev, be => rectangular(be));
}

/// Every LU panel kernel, forced through the device's tuning, gives the
/// factorization of partial pivoting within the bound, with the pivots of
/// the default choice (ties aside, the rule is the same: first largest).
#[test]
fn every_panel_kernel_factors_alike() {
    use gpumat::backend::Tuning;
    use gpumat::backend::tuning::LuPanel;
    let dev = device();
    let name = if dev.is_cpu() { "cpu" } else { "cuda" };
    let n = 300;
    let a = random(&mut rng(31), n, n);
    let factor = |panel: Option<LuPanel>| {
        let d = gpumat::Device::with_tuning(name, Tuning { lu_panel: panel, ..dev.tuning() }).unwrap();
        let f = d.from_col_major(n, n, &a).unwrap().lu().unwrap();
        let fac = rel_error(&f.reconstruct().unwrap().to_host().unwrap(), &a);
        let bound = 10.0 * n as f64 * u::<f64>() * growth(&host(f.factors()), &a, n).max(1.0);
        (f.pivots().unwrap(), fac, bound)
    };
    let (pivots, ..) = factor(None);
    for panel in [LuPanel::Cluster, LuPanel::Register, LuPanel::SharedMemory, LuPanel::Grid, LuPanel::Block] {
        let (p, fac, bound) = factor(Some(panel));
        assert!(fac <= bound, "{panel:?}: ‖A − PᵀLU‖/‖A‖ = {fac:e} > {bound:e}");
        assert_eq!(p, pivots, "{panel:?}: other pivots than the default choice");
    }
}

/// With tensor-core updates the LU runs on a partitioned queue, whose
/// trailing updates keep to a share of the SMs (`Tuning::side_sms`) and
/// whose panels take fewer blocks beside them. At every share, few SMs or
/// all but one granule, the factorization is within `n·u·ρ` of `A`, `u` the
/// unit roundoff of split FP16 operands (2⁻²²) and `ρ` the growth. (The CPU
/// has no such queue: there the knob changes nothing.)
#[test]
fn tensor_core_updates_on_a_partitioned_queue_factor_within_the_bound() {
    use gpumat::backend::{Compute, Pivoting, Tuning};
    use gpumat::factor::lu::LuParams;
    let dev = device();
    let name = if dev.is_cpu() { "cpu" } else { "cuda" };
    let n = 2000;
    let a = random(&mut rng(37), n, n);
    let a32: Vec<f32> = a.iter().map(|&v| v as f32).collect();
    let widened: Vec<f64> = a32.iter().map(|&v| f64::from(v)).collect();
    for side_sms in [None, Some(8), Some(10_000)] {
        let d = gpumat::Device::with_tuning(name, Tuning { side_sms, ..dev.tuning() }).unwrap();
        let params = LuParams { update: Compute::Fp16x3, ..LuParams::for_order(n) };
        let f = d.from_col_major(n, n, &a32).unwrap().lu_with(Pivoting::Partial, params).unwrap();
        let lu: Vec<f64> = f.reconstruct().unwrap().to_host().unwrap().iter().map(|&v| f64::from(v)).collect();
        let factors = host(f.factors());
        let fac = rel_error(&lu, &widened);
        let bound = n as f64 * 2f64.powi(-22) * growth(&factors, &widened, n).max(1.0);
        assert!(fac <= bound, "updates on {side_sms:?} SMs: ‖A − PᵀLU‖/‖A‖ = {fac:e} > {bound:e}");
    }
}

/// `permute_rows` with `lu::permutation` of the pivots is `laswp`, forward
/// and reversed, exactly: on single vectors and a few columns, on blocks
/// inside a larger buffer; the pivots as partial pivoting leaves them.
#[test]
fn pivots_as_one_permutation_match_laswp() {
    let dev = device();
    gpumat::with_backend!(dev, be => {
        for m in [1, 7, 300, 5000, 20000] {
            let mut r = rng(m as u64);
            let ipiv: Vec<i32> = (0..m).map(|i| r.random_range(i..m) as i32 + 1).collect();
            let perm = lu::permutation(&ipiv).unwrap();
            let (dp, dq) = (be.upload(&ipiv).unwrap(), be.upload(&perm).unwrap());
            for w in [1, 3] {
                let (ld, off) = (m + 3, 2);
                let c: Vec<f64> = (0..off + ld * w).map(|i| i as f64).collect();
                let block = Block { offset: off, rows: m, cols: w, ld };
                for reverse in [false, true] {
                    let (mut by_swaps, mut at_once) = (be.upload(&c).unwrap(), be.upload(&c).unwrap());
                    let pv = View::dense(&dp, m, 1).unwrap();
                    be.laswp(ViewMut::new(&mut by_swaps, block).unwrap(), pv, 0, reverse).unwrap();
                    let qv = View::dense(&dq, m, 1).unwrap();
                    be.permute_rows(qv, reverse, ViewMut::new(&mut at_once, block).unwrap()).unwrap();
                    let (mut x, mut y) = (vec![0.0; c.len()], vec![0.0; c.len()]);
                    be.download(&by_swaps, &mut x).unwrap();
                    be.download(&at_once, &mut y).unwrap();
                    assert_eq!(x, y, "m = {m}, {w} columns, reverse = {reverse}");
                }
            }
        }
        // One index for every row, or an error that says so.
        let (q, mut b) = (be.upload(&[0i32, 1]).unwrap(), be.upload(&[1.0f64; 3]).unwrap());
        match be.permute_rows(View::dense(&q, 2, 1).unwrap(), false, ViewMut::dense(&mut b, 3, 1).unwrap()) {
            Err(Error::DimensionMismatch { .. }) => {}
            other => panic!("2 indices for 3 rows: {other:?}"),
        }
    });
    // The CPU refuses indices that are not a permutation, naming one.
    let cpu = gpumat::backend::Cpu::new();
    for bad in [[0i32, 0, 1], [0, 1, 3], [-1, 1, 2]] {
        let (q, mut b) = (cpu.upload(&bad).unwrap(), cpu.upload(&[1.0f64; 3]).unwrap());
        match cpu.permute_rows(View::dense(&q, 3, 1).unwrap(), false, ViewMut::dense(&mut b, 3, 1).unwrap()) {
            Err(Error::InvalidArgument(why)) => assert!(why.contains("not a permutation"), "{bad:?}: {why}"),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    // Pivots outside 1..=n are named.
    for bad in [vec![0], vec![2], vec![1, 3]] {
        let e = lu::permutation(&bad).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{bad:?}: {e:?}");
    }
}

/// `W` of order `n` as a dense matrix (column-major), built from the pairs
/// of the definition — `W₁` pairs `i` with `i + 2m`, `W₂` pairs `i` with
/// `i + m` in each half, `m = ⌈n/4⌉` — not from the backends' quads.
fn dense_butterfly(key: u64, n: usize) -> Vec<f64> {
    use gpumat::backend::butterfly::scale;
    let m = n.div_ceil(4);
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let level = |l: usize, pairs: Vec<(usize, usize)>| {
        let mut w = vec![0.0; n * n];
        for (p, o) in pairs.into_iter().filter(|&(p, _)| p < n) {
            if o >= n {
                w[p + p * n] = scale(key, l, p);
                continue;
            }
            let (rp, ro) = (scale(key, l, p), scale(key, l, o));
            w[p + p * n] = h * rp;
            w[p + o * n] = h * ro;
            w[o + p * n] = h * rp;
            w[o + o * n] = -h * ro;
        }
        w
    };
    let w1 = level(0, (0..2 * m).map(|i| (i, i + 2 * m)).collect());
    let w2 = level(1, (0..m).chain(2 * m..3 * m).map(|i| (i, i + m)).collect());
    naive_matmul(&w2, (n, n), false, &w1, (n, n), false).0
}

/// `op(U)·A·V` by the backend under test, in `T`.
fn transformed<T: Scalar>(
    a: &[f64],
    rows: usize,
    cols: usize,
    left: Option<(u64, gpumat::backend::Op)>,
    right: Option<u64>,
) -> Vec<f64> {
    let data: Vec<T> = a.iter().map(|&x| T::from_f64(x)).collect();
    let mut out = vec![T::ZERO; data.len()];
    gpumat::with_backend!(device(), be => {
        let mut m = be.upload(&data).unwrap();
        be.butterfly(left, right, ViewMut::dense(&mut m, rows, cols).unwrap()).unwrap();
        be.download(&m, &mut out).unwrap();
    });
    out.iter().map(|x| x.to_f64()).collect()
}

#[test]
fn butterflies_match_their_dense_definition() {
    use gpumat::backend::Op;
    for (rows, cols) in [(1, 1), (2, 3), (3, 3), (5, 7), (6, 2), (9, 6), (64, 64), (130, 131)] {
        let a = random(&mut rng((rows * 1000 + cols) as u64), rows, cols);
        let (ku, kv) = (rows as u64 + 11, cols as u64 + 29);
        let (wu, wv) = (dense_butterfly(ku, rows), dense_butterfly(kv, cols));
        for (left, right) in [(Some(Op::NoTrans), None), (Some(Op::Trans), Some(())), (None, Some(()))] {
            // The reference: op(U)·A·V in FP64.
            let mut want = a.clone();
            if let Some(op) = left {
                want = naive_matmul(&wu, (rows, rows), op == Op::Trans, &want, (rows, cols), false).0;
            }
            if right.is_some() {
                want = naive_matmul(&want, (rows, cols), false, &wv, (cols, cols), false).0;
            }
            for single in [false, true] {
                let (l, r) = (left.map(|op| (ku, op)), right.map(|_| kv));
                let got = if single {
                    transformed::<f32>(&a, rows, cols, l, r)
                } else {
                    transformed::<f64>(&a, rows, cols, l, r)
                };
                // Each entry is a sum of at most 16 products of entries of
                // A with weights below e^(1/5)/2 in magnitude, rounded once
                // to the working precision.
                let u = if single { u::<f32>() } else { u::<f64>() };
                let bound = 32.0 * u * max_abs(&a).max(f64::MIN_POSITIVE);
                let err = got.iter().zip(&want).fold(0.0f64, |m, (g, w)| m.max((g - w).abs()));
                assert!(
                    err <= bound,
                    "{rows}×{cols}, left {left:?}, right {}, f32 {single}: error {err:e} > {bound:e}",
                    right.is_some()
                );
            }
        }
    }
}
