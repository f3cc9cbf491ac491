//! `Batch` and `solve_tridiagonal` through the library's API on the device
//! under test: batches in and out, views of sub-ranges, and batched
//! tridiagonal solves against an independent FP64 reference (each system's
//! backward error ≤ 10·u), a sub-range giving the same bits as the whole,
//! a failing system named by its index while the others are solved.

mod common;

use common::rng;
use gpumat::batch::{SystemStatus, TridiagonalMethod, solve_tridiagonal};
use gpumat::{Batch, Error, Scalar};
use rand::Rng;

#[test]
fn batches_round_trip_and_split() {
    let dev = common::device();
    let values: Vec<f64> = (0..24).map(f64::from).collect();
    let b = Batch::from_host(&dev, (2, 3), 4, &values).unwrap();
    assert_eq!((b.shape(), b.count()), ((2, 3), 4));
    assert_eq!(b.to_host().unwrap(), values);
    assert_eq!(b.range(1..3).unwrap().to_host().unwrap(), values[6..18]);
    let (left, right) = b.split_at(1).unwrap();
    assert_eq!((left.count(), right.count(), right.start()), (1, 3, 1));
    assert_eq!(right.to_batch().unwrap().to_host().unwrap(), values[6..]);
    let m = b.matrix(2).unwrap();
    assert_eq!((m.shape(), m.to_host().unwrap()), ((2, 3), values[12..18].to_vec()));
    assert_eq!(Batch::<f32>::zeros(&dev, (3, 1), 5).unwrap().to_host().unwrap(), vec![0.0; 15]);
    assert!(Batch::<f64>::zeros(&dev, (0, 4), 3).unwrap().to_host().unwrap().is_empty());
    assert!(matches!(Batch::from_host(&dev, (2, 3), 4, &values[1..]), Err(Error::DimensionMismatch { .. })));
    assert!(matches!(b.range(3..5), Err(Error::DimensionMismatch { .. })));
    assert!(matches!(b.matrix(4), Err(Error::DimensionMismatch { .. })));
}

/// `count` systems of order `m` as four host arrays (system after
/// system): diagonally dominant, or with zero diagonals that need pivoting.
fn systems(seed: u64, m: usize, count: usize, dominant: bool) -> [Vec<f64>; 4] {
    let mut r = rng(seed);
    let len = m * count;
    let mut off = || -> Vec<f64> { (0..len).map(|_| r.random_range(-1.0..1.0)).collect() };
    let (dl, du, b) = (off(), off(), off());
    let d = (0..len)
        .map(|k| {
            let v: f64 = r.random_range(-1.0..1.0);
            if dominant {
                v.signum() * (2.5 + v.abs())
            } else if k % 3 == 0 {
                0.0
            } else {
                v
            }
        })
        .collect();
    [dl, d, du, b]
}

/// ‖T·x − b‖∞ / (‖T‖∞·‖x‖∞ + ‖b‖∞) of system `s`, in f64.
fn backward_error(a: &[Vec<f64>; 4], m: usize, s: usize, x: &[f64]) -> f64 {
    let [dl, d, du, b] = a;
    let (mut r, mut t, mut xn, mut bn) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for i in 0..m {
        let k = s * m + i;
        let (lo, up) = (if i > 0 { dl[k] } else { 0.0 }, if i + 1 < m { du[k] } else { 0.0 });
        let mut tx = d[k] * x[k];
        if i > 0 {
            tx += lo * x[k - 1];
        }
        if i + 1 < m {
            tx += up * x[k + 1];
        }
        r = r.max((tx - b[k]).abs());
        t = t.max(lo.abs() + d[k].abs() + up.abs());
        xn = xn.max(x[k].abs());
        bn = bn.max(b[k].abs());
    }
    r / (t * xn + bn)
}

fn solves<T: Scalar>() {
    let dev = common::device();
    let (m, count) = (37, 23);
    for (dominant, method) in [(true, TridiagonalMethod::NoPivoting), (false, TridiagonalMethod::PartialPivoting)] {
        let host = systems(7, m, count, dominant);
        let rounded = host.clone().map(|v| v.into_iter().map(|x| T::from_f64(x).to_f64()).collect::<Vec<_>>());
        let [dl, d, du, b] = host.map(|v| {
            let v: Vec<T> = v.into_iter().map(T::from_f64).collect();
            Batch::from_host(&dev, (m, 1), count, &v).unwrap()
        });
        let solved = solve_tridiagonal(&dl, &d, &du, &b, method).unwrap();
        assert!(solved.status.iter().all(|s| *s == SystemStatus::Solved), "{method:?}: {:?}", solved.status);
        let x: Vec<f64> = solved.x.to_host().unwrap().into_iter().map(Scalar::to_f64).collect();
        for s in 0..count {
            let err = backward_error(&rounded, m, s, &x);
            assert!(err <= 10.0 * T::unit_roundoff(), "{} {method:?} system {s}: {err:e}", T::NAME);
        }
        // A sub-range is the same systems, solved the same way.
        let r = 5..12;
        let part = solve_tridiagonal(
            dl.range(r.clone()).unwrap(),
            d.range(r.clone()).unwrap(),
            du.range(r.clone()).unwrap(),
            b.range(r.clone()).unwrap(),
            method,
        )
        .unwrap();
        let px = part.x.to_host().unwrap();
        let whole = solved.x.to_host().unwrap();
        assert!(
            px.iter().zip(&whole[r.start * m..r.end * m]).all(|(a, b)| a.to_f64().to_bits() == b.to_f64().to_bits())
        );
        // The inputs are left as they were.
        assert_eq!(d.to_host().unwrap(), rounded[1].iter().map(|&v| T::from_f64(v)).collect::<Vec<_>>());
    }
}

#[test]
fn batched_tridiagonal_solves_meet_their_backward_error_bound() {
    solves::<f64>();
    solves::<f32>();
}

#[test]
fn a_singular_system_is_named_and_the_others_are_solved() {
    let dev = common::device();
    let (m, count) = (8, 6);
    let mut host = systems(11, m, count, true);
    // System 4: its first column is zero.
    host[1][4 * m] = 0.0;
    host[0][4 * m + 1] = 0.0;
    // System 2: a NaN on its right-hand side.
    host[3][2 * m + 5] = f64::NAN;
    let [dl, d, du, b] = host.clone().map(|v| Batch::from_host(&dev, (m, 1), count, &v).unwrap());
    for method in [TridiagonalMethod::NoPivoting, TridiagonalMethod::PartialPivoting] {
        let solved = solve_tridiagonal(&dl, &d, &du, &b, method).unwrap();
        assert_eq!(solved.status[4], SystemStatus::ZeroPivot { row: 1 }, "{method:?}");
        assert!(matches!(solved.status[2], SystemStatus::NotFinite { .. }), "{method:?}: {:?}", solved.status[2]);
        assert_eq!(solved.failures().map(|(s, _)| s).collect::<Vec<_>>(), vec![2, 4]);
        let x = solved.x.to_host().unwrap();
        assert!(x[4 * m..5 * m].iter().all(|v| v.is_nan()));
        for s in [0, 1, 3, 5] {
            assert!(backward_error(&host, m, s, &x) <= 10.0 * f64::EPSILON, "{method:?} system {s}");
        }
        match solved.into_result() {
            Err(Error::InBatch { index: 2, source }) => assert!(matches!(*source, Error::NonFinite { .. })),
            other => panic!("{method:?}: {:?}", other.err()),
        }
    }
}

#[test]
fn mismatched_batches_are_refused() {
    let dev = common::device();
    let v = |m: usize, c: usize| Batch::from_host(&dev, (m, 1), c, &vec![1.0f64; m * c]).unwrap();
    let (a, short, few) = (v(5, 3), v(4, 3), v(5, 2));
    let method = TridiagonalMethod::NoPivoting;
    for (dl, d, du, b) in [(&short, &a, &a, &a), (&a, &a, &few, &a), (&a, &a, &a, &short)] {
        assert!(matches!(solve_tridiagonal(dl, d, du, b, method), Err(Error::DimensionMismatch { .. })));
    }
    let matrices = Batch::from_host(&dev, (5, 2), 3, &[1.0f64; 30]).unwrap();
    assert!(matches!(
        solve_tridiagonal(&matrices, &matrices, &matrices, &matrices, method),
        Err(Error::DimensionMismatch { .. })
    ));
    let empty = v(5, 0);
    let solved = solve_tridiagonal(&empty, &empty, &empty, &empty, method).unwrap();
    assert_eq!((solved.x.count(), solved.status.len()), (0, 0));
}

/// A batch through a Matrix Market file and back, in both precisions; a
/// count that does not divide the file's rows is refused; so is a NaN.
#[test]
fn batches_go_through_matrix_market() {
    let dev = common::device();
    let dir = std::env::temp_dir().join(format!("gpumat-batch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("batch.mtx");
    let values: Vec<f64> = (0..30).map(|k| f64::from(k) * 0.37 - 4.0).collect();
    let b = Batch::from_host(&dev, (2, 3), 5, &values).unwrap();
    b.write_matrix_market(&path).unwrap();
    let back = Batch::<f64>::read_matrix_market(&dev, &path, 5).unwrap();
    assert_eq!((back.shape(), back.count()), ((2, 3), 5));
    assert_eq!(back.to_host().unwrap(), values);
    // Matrix 1 is rows 2..4 of the stacked array.
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("5 matrices of 2×3, stacked vertically"), "{text}");
    let single = gpumat::io::read_matrix_market(&path).unwrap();
    assert_eq!((single.rows, single.cols, single.data[2]), (10, 3, values[6]));
    let v32: Vec<f32> = values.iter().map(|&v| v as f32).collect();
    Batch::from_host(&dev, (2, 3), 5, &v32).unwrap().write_matrix_market(&path).unwrap();
    assert_eq!(Batch::<f32>::read_matrix_market(&dev, &path, 5).unwrap().to_host().unwrap(), v32);
    for count in [0, 3] {
        assert!(matches!(Batch::<f64>::read_matrix_market(&dev, &path, count), Err(Error::InvalidArgument(_))));
    }
    let mut bad = values.clone();
    bad[7] = f64::NAN;
    let r = Batch::from_host(&dev, (2, 3), 5, &bad).unwrap().write_matrix_market(&path);
    assert!(matches!(r, Err(Error::NonFinite { .. })), "{r:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
