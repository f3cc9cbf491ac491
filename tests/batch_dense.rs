//! Batched LU and Cholesky (`batch::lu`, `batch::cholesky`) and their
//! solves on the device under test, checked member by member on the host
//! in f64: ‖P·A − L·U‖_F / ‖A‖_F ≤ 10·n·u and ‖A − L·Lᵀ‖_F / ‖A‖_F ≤ 10·n·u,
//! the pivots those of an independent unblocked LU, each solution's
//! backward error ‖A·x − b‖∞ / (‖A‖∞·‖x‖∞ + ‖b‖∞) ≤ 10·n·u. Orders cover
//! one panel (≤ 64) and the blocked path (panels of 32, several diagonal
//! blocks in the solves). A singular, indefinite or NaN member is named by
//! index and column, its solution NaN, the others as if alone.

mod common;

use common::{rng, u};
use gpumat::batch::{self, FactorStatus};
use gpumat::{Batch, Device, Error, Scalar};
use rand::Rng;

/// `count` random `n × n` members, one after another; SPD (`M·Mᵀ + n·I`)
/// when `spd`.
fn members(seed: u64, n: usize, count: usize, spd: bool) -> Vec<f64> {
    let mut r = rng(seed);
    let mut out = Vec::with_capacity(n * n * count);
    for _ in 0..count {
        let m: Vec<f64> = (0..n * n).map(|_| r.random_range(-1.0..1.0)).collect();
        if spd {
            let (g, ..) = common::naive_matmul(&m, (n, n), false, &m, (n, n), true);
            out.extend(g.iter().enumerate().map(|(k, v)| if k % (n + 1) == 0 { v + n as f64 } else { *v }));
        } else {
            out.extend(m);
        }
    }
    out
}

/// The pivots of Gaussian elimination with partial pivoting (`dgetf2`),
/// 1-based, in f64.
fn reference_pivots(a: &[f64], n: usize) -> Vec<i32> {
    let mut a = a.to_vec();
    let mut ipiv = vec![0; n];
    for j in 0..n {
        let p = (j..n).fold(j, |p, i| if a[i + j * n].abs() > a[p + j * n].abs() { i } else { p });
        ipiv[j] = p as i32 + 1;
        for c in 0..n {
            a.swap(j + c * n, p + c * n);
        }
        let d = a[j + j * n];
        if d == 0.0 {
            continue;
        }
        for i in j + 1..n {
            a[i + j * n] /= d;
            for c in j + 1..n {
                a[i + c * n] -= a[i + j * n] * a[j + c * n];
            }
        }
    }
    ipiv
}

/// ‖P·A − L·U‖_F / ‖A‖_F of one member from its packed factors.
fn lu_residual(a: &[f64], f: &[f64], ipiv: &[i32], n: usize) -> f64 {
    let mut pa = a.to_vec();
    for (j, &p) in ipiv.iter().enumerate() {
        for c in 0..n {
            pa.swap(j + c * n, p as usize - 1 + c * n);
        }
    }
    let l = |i: usize, k: usize| {
        if i == k {
            1.0
        } else if i > k {
            f[i + k * n]
        } else {
            0.0
        }
    };
    let uu = |k: usize, j: usize| if k <= j { f[k + j * n] } else { 0.0 };
    let diff: Vec<f64> = (0..n * n).map(|k| (0..n).map(|p| l(k % n, p) * uu(p, k / n)).sum::<f64>() - pa[k]).collect();
    common::frobenius(&diff) / common::frobenius(a)
}

/// ‖A − L·Lᵀ‖_F / ‖A‖_F of one member, A's lower triangle mirrored.
fn cholesky_residual(a: &[f64], l: &[f64], n: usize) -> f64 {
    let diff: Vec<f64> = (0..n * n)
        .map(|k| {
            let (i, j) = (k % n, k / n);
            (0..=i.min(j)).map(|p| l[i + p * n] * l[j + p * n]).sum::<f64>() - a[i.max(j) + i.min(j) * n]
        })
        .collect();
    common::frobenius(&diff) / common::frobenius(a)
}

/// ‖A·x − b‖∞ / (‖A‖∞·‖x‖∞ + ‖b‖∞) of one member, every column of `x`.
fn backward_error(a: &[f64], x: &[f64], b: &[f64], n: usize, nrhs: usize) -> f64 {
    let norm_a = (0..n).map(|i| (0..n).map(|j| a[i + j * n].abs()).sum::<f64>()).fold(0.0, f64::max);
    let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    (0..nrhs)
        .map(|c| {
            let (x, b) = (&x[c * n..(c + 1) * n], &b[c * n..(c + 1) * n]);
            let r: Vec<f64> = (0..n).map(|i| (0..n).map(|j| a[i + j * n] * x[j]).sum::<f64>() - b[i]).collect();
            inf(&r) / (norm_a * inf(x) + inf(b))
        })
        .fold(0.0, f64::max)
}

fn to_f64<T: Scalar>(v: Vec<T>) -> Vec<f64> {
    v.into_iter().map(Scalar::to_f64).collect()
}

fn upload<T: Scalar>(dev: &Device, shape: (usize, usize), count: usize, v: &[f64]) -> Batch<T> {
    let v: Vec<T> = v.iter().map(|&x| T::from_f64(x)).collect();
    Batch::from_host(dev, shape, count, &v).unwrap()
}

fn lu_and_solve<T: Scalar>(n: usize, count: usize, nrhs: usize) {
    let dev = common::device();
    let a = members(n as u64, n, count, false);
    let b = common::random(&mut rng(7 + n as u64), n * nrhs, count);
    // What the device holds, in f64, for the host checks.
    let a = to_f64(upload::<T>(&dev, (n, n), count, &a).to_host().unwrap());
    let b = to_f64(upload::<T>(&dev, (n, nrhs), count, &b).to_host().unwrap());
    let f = batch::lu(&upload::<T>(&dev, (n, n), count, &a)).unwrap();
    assert!(f.status().iter().all(|s| *s == FactorStatus::Factored), "n = {n}: {:?}", f.status());
    let (lu, ipiv) = (to_f64(f.factors().to_host().unwrap()), f.pivots().unwrap());
    let x = to_f64(f.solve(&upload::<T>(&dev, (n, nrhs), count, &b)).unwrap().to_host().unwrap());
    let bound = 10.0 * n as f64 * u::<T>();
    for s in 0..count {
        let (am, fm, pm) = (&a[s * n * n..][..n * n], &lu[s * n * n..][..n * n], &ipiv[s * n..][..n]);
        if T::NAME == "f64" {
            assert_eq!(pm, reference_pivots(am, n), "n = {n}, member {s}: pivots");
        }
        let res = lu_residual(am, fm, pm, n);
        assert!(res <= bound, "n = {n}, member {s}: ‖PA − LU‖/‖A‖ = {res:e} > {bound:e}");
        let be = backward_error(am, &x[s * n * nrhs..][..n * nrhs], &b[s * n * nrhs..][..n * nrhs], n, nrhs);
        assert!(be <= bound, "n = {n}, member {s}: backward error {be:e} > {bound:e}");
    }
}

fn cholesky_and_solve<T: Scalar>(n: usize, count: usize, nrhs: usize) {
    let dev = common::device();
    let a = members(100 + n as u64, n, count, true);
    let b = common::random(&mut rng(9 + n as u64), n * nrhs, count);
    let a = to_f64(upload::<T>(&dev, (n, n), count, &a).to_host().unwrap());
    let b = to_f64(upload::<T>(&dev, (n, nrhs), count, &b).to_host().unwrap());
    let f = batch::cholesky(&upload::<T>(&dev, (n, n), count, &a)).unwrap();
    assert!(f.status().iter().all(|s| *s == FactorStatus::Factored), "n = {n}: {:?}", f.status());
    assert!(f.pivots().unwrap().is_empty());
    let l = to_f64(f.factors().to_host().unwrap());
    let x = to_f64(f.solve(&upload::<T>(&dev, (n, nrhs), count, &b)).unwrap().to_host().unwrap());
    let bound = 10.0 * n as f64 * u::<T>();
    for s in 0..count {
        let (am, lm) = (&a[s * n * n..][..n * n], &l[s * n * n..][..n * n]);
        for j in 0..n {
            for i in 0..j {
                assert_eq!(lm[i + j * n], 0.0, "n = {n}, member {s}: L({i}, {j}) above the diagonal");
            }
        }
        let res = cholesky_residual(am, lm, n);
        assert!(res <= bound, "n = {n}, member {s}: ‖A − LLᵀ‖/‖A‖ = {res:e} > {bound:e}");
        let be = backward_error(am, &x[s * n * nrhs..][..n * nrhs], &b[s * n * nrhs..][..n * nrhs], n, nrhs);
        assert!(be <= bound, "n = {n}, member {s}: backward error {be:e} > {bound:e}");
    }
}

#[test]
fn lu_of_every_member_in_one_panel_and_blocked() {
    for (n, count) in [(1, 3), (4, 9), (16, 5), (33, 4), (64, 3), (65, 3), (130, 2)] {
        lu_and_solve::<f64>(n, count, 2);
        lu_and_solve::<f32>(n, count, 1);
    }
}

#[test]
fn cholesky_of_every_member_in_one_panel_and_blocked() {
    for (n, count) in [(1, 3), (4, 9), (16, 5), (33, 4), (64, 3), (65, 3), (130, 2)] {
        cholesky_and_solve::<f64>(n, count, 2);
        cholesky_and_solve::<f32>(n, count, 1);
    }
}

#[test]
fn members_past_512_rows_take_narrower_panels_and_the_general_interchanges() {
    lu_and_solve::<f64>(520, 1, 1);
    cholesky_and_solve::<f64>(520, 1, 1);
}

#[test]
fn a_sub_range_factors_as_in_the_whole() {
    let dev = common::device();
    let n = 40;
    let a = upload::<f64>(&dev, (n, n), 6, &members(3, n, 6, false));
    let whole = batch::lu(&a).unwrap().factors().to_host().unwrap();
    let part = batch::lu(a.range(2..5).unwrap()).unwrap().factors().to_host().unwrap();
    assert_eq!(part, whole[2 * n * n..5 * n * n]);
}

#[test]
fn one_failing_member_is_named_and_spoils_no_other() {
    let dev = common::device();
    let (n, count) = (100, 5);
    // LU: member 1 has a zero column 40, member 3 a NaN.
    let mut a = members(11, n, count, false);
    for i in 0..n {
        a[n * n + i + 40 * n] = 0.0;
    }
    a[3 * n * n + 7 + 9 * n] = f64::NAN;
    let b = common::random(&mut rng(12), n, count);
    let f = batch::lu(&upload::<f64>(&dev, (n, n), count, &a)).unwrap();
    assert_eq!(f.status()[1], FactorStatus::Singular { pivot: 41 });
    assert!(matches!(f.status()[3], FactorStatus::Singular { .. }), "{:?}", f.status()[3]);
    assert_eq!(f.failures().map(|(s, _)| s).collect::<Vec<_>>(), [1, 3]);
    let x = f.solve(&upload::<f64>(&dev, (n, 1), count, &b)).unwrap().to_host().unwrap();
    for s in 0..count {
        let xs = &x[s * n..(s + 1) * n];
        if s == 1 || s == 3 {
            assert!(xs.iter().all(|v| v.is_nan()), "member {s}: a failed member's x is NaN");
        } else {
            let be = backward_error(&a[s * n * n..][..n * n], xs, &b[s * n..][..n], n, 1);
            assert!(be <= 10.0 * n as f64 * u::<f64>(), "member {s}: backward error {be:e}");
        }
    }
    match f.check() {
        Err(Error::InBatch { index: 1, source }) => assert!(matches!(*source, Error::Singular { pivot: 41 })),
        other => panic!("expected member 1's failure, got {:?}", other.err()),
    }
    // Cholesky: member 2 indefinite from column 71, member 4 with a NaN on the diagonal.
    let mut a = members(13, n, count, true);
    a[2 * n * n + 70 * (n + 1)] = -1.0e4;
    a[4 * n * n] = f64::NAN;
    let f = batch::cholesky(&upload::<f64>(&dev, (n, n), count, &a)).unwrap();
    assert_eq!(f.status()[2], FactorStatus::NotPositiveDefinite { column: 71 });
    assert_eq!(f.status()[4], FactorStatus::NotPositiveDefinite { column: 1 });
    assert_eq!(f.failures().count(), 2);
    let x = f.solve(&upload::<f64>(&dev, (n, 1), count, &b)).unwrap().to_host().unwrap();
    for s in [0, 1, 3] {
        let be = backward_error(&a[s * n * n..][..n * n], &x[s * n..(s + 1) * n], &b[s * n..][..n], n, 1);
        assert!(be <= 10.0 * n as f64 * u::<f64>(), "member {s}: backward error {be:e}");
    }
    assert!(x[2 * n..3 * n].iter().chain(&x[4 * n..]).all(|v| v.is_nan()));
}

#[test]
fn bad_shapes_are_refused_and_empty_batches_are_fine() {
    let dev = common::device();
    let rect = Batch::<f64>::zeros(&dev, (3, 4), 2).unwrap();
    assert!(matches!(batch::lu(&rect), Err(Error::DimensionMismatch { .. })));
    assert!(matches!(batch::cholesky(&rect), Err(Error::DimensionMismatch { .. })));
    let a = upload::<f64>(&dev, (3, 3), 2, &members(5, 3, 2, true));
    let f = batch::cholesky(&a).unwrap();
    for (shape, count) in [((4, 1), 2), ((3, 1), 3)] {
        let b = Batch::<f64>::zeros(&dev, shape, count).unwrap();
        assert!(matches!(f.solve(&b), Err(Error::DimensionMismatch { .. })), "{shape:?} × {count}");
    }
    let empty = Batch::<f64>::zeros(&dev, (5, 5), 0).unwrap();
    let f = batch::lu(&empty).unwrap();
    assert!(f.status().is_empty());
    assert_eq!(f.solve(&Batch::<f64>::zeros(&dev, (5, 2), 0).unwrap()).unwrap().count(), 0);
}
