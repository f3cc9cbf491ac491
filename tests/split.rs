//! The coprocessor split (`batch::Coprocessor`): one batch shared between
//! the device under test (the accelerator) and the CPU. Whatever the
//! share — all on the accelerator, all on the CPU, pinned in between, or
//! measured — every member's solution meets the backward error bound
//! ‖A·x − b‖∞ / (‖A‖∞·‖x‖∞ + ‖b‖∞) ≤ 10·n·u against the FP64 inputs; with
//! the CPU as the accelerator too, the solutions are the same bits
//! whatever the share. A failing member is named by its index in the whole
//! batch from either side. A measured call remembers a ratio strictly
//! between 0 and 1 and keeps a member on each side; `GPUMAT_SPLIT_RATIO`
//! (the device's tuning) pins it.

mod common;

use common::{rng, u};
use gpumat::backend::Tuning;
use gpumat::batch::{Coprocessor, SplitOp, TridiagonalMethod};
use gpumat::{Device, Error};
use rand::Rng;

/// `count` members of order `n` (diagonally dominant: every one
/// nonsingular and positive definite once symmetrized) and right-hand sides.
fn batch(seed: u64, n: usize, count: usize) -> (Vec<f64>, Vec<f64>) {
    let mut r = rng(seed);
    let mut a: Vec<f64> = (0..n * n * count).map(|_| r.random_range(-1.0..1.0)).collect();
    for m in a.chunks_mut(n * n) {
        for j in 0..n {
            for i in j + 1..n {
                m[j + i * n] = m[i + j * n];
            }
            m[j + j * n] += n as f64;
        }
    }
    (a, common::random(&mut r, n, count))
}

/// The worst backward error over the members, skipping `failed` ones.
fn worst_backward_error(a: &[f64], b: &[f64], x: &[f64], n: usize, failed: &[usize]) -> f64 {
    let mut worst = 0.0f64;
    for s in (0..b.len() / n).filter(|s| !failed.contains(s)) {
        let (a, b, x) = (&a[s * n * n..][..n * n], &b[s * n..][..n], &x[s * n..][..n]);
        let (mut r, mut na, mut nx, mut nb) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for i in 0..n {
            let ax: f64 = (0..n).map(|j| a[i + j * n] * x[j]).sum();
            r = r.max((ax - b[i]).abs());
            na = na.max((0..n).map(|j| a[i + j * n].abs()).sum());
            nx = nx.max(x[i].abs());
            nb = nb.max(b[i].abs());
        }
        worst = worst.max(r / (na * nx + nb));
    }
    worst
}

#[test]
fn every_share_solves_every_member() {
    let dev = common::device();
    let (n, count) = (24, 40);
    let (a, b) = batch(1, n, count);
    let bound = 10.0 * n as f64 * u::<f64>();
    for op in [SplitOp::Lu, SplitOp::Cholesky] {
        let mut first: Option<Vec<f64>> = None;
        let mut measured = 0;
        for ratio in [Some(0.0), Some(0.4), Some(1.0), None, None] {
            let co = Coprocessor::new(dev.clone()).with_ratio(ratio).unwrap();
            let sol = co.solve(op, n, count, &a, &b, 1).unwrap();
            assert!(sol.failures.is_empty(), "{op:?} {ratio:?}: {:?}", sol.failures);
            let share = sol.share;
            assert_eq!(share.accelerator + share.host, count);
            if let Some(r) = ratio {
                assert_eq!((share.accelerator, share.pinned), ((r * count as f64).round() as usize, true));
            } else {
                // The first measured call splits; later ones may leave a
                // side that gains nothing out (the other's share < 3 %).
                if measured == 0 {
                    assert!(share.accelerator >= 1 && share.host >= 1, "{op:?}: the first measured call splits");
                }
                measured += 1;
            }
            let e = worst_backward_error(&a, &b, &sol.x, n, &[]);
            assert!(e <= bound, "{op:?} {ratio:?}: backward error {e:e} > {bound:e}");
            if dev.is_cpu() {
                // Two CPUs: the same steps in the same order, the same bits.
                match &first {
                    None => first = Some(sol.x),
                    Some(x) => assert_eq!(&sol.x, x, "{op:?} {ratio:?}: the split changed the bits"),
                }
            }
        }
        let remembered =
            Coprocessor::new(dev.clone()).ratio::<f64>(op, n, 1, false).expect("a measured call remembers");
        assert!(remembered > 0.0 && remembered < 1.0, "{op:?}: ratio {remembered}");
    }
}

#[test]
fn a_failing_member_is_named_in_the_whole_batch_from_either_side() {
    let dev = common::device();
    let (n, count) = (12, 10);
    let (mut a, b) = batch(2, n, count);
    // Member 2 (the accelerator's share) and member 8 (the host's) singular.
    for s in [2, 8] {
        for i in 0..n {
            a[s * n * n + i + 5 * n] = 0.0;
        }
    }
    let co = Coprocessor::new(dev).with_ratio(Some(0.5)).unwrap();
    let sol = co.solve(SplitOp::Lu, n, count, &a, &b, 1).unwrap();
    let failed: Vec<usize> = sol.failures.iter().map(|(s, _)| *s).collect();
    assert_eq!(failed, [2, 8]);
    assert!(sol.failures.iter().all(|(_, e)| matches!(e, Error::Singular { pivot: 6 })), "{:?}", sol.failures);
    for s in [2, 8] {
        assert!(sol.x[s * n..(s + 1) * n].iter().all(|v| v.is_nan()), "member {s}: x is NaN");
    }
    let e = worst_backward_error(&a, &b, &sol.x, n, &failed);
    assert!(e <= 10.0 * n as f64 * u::<f64>(), "the others: backward error {e:e}");

    // The host takes a large share in pieces: members are still named by
    // their index in the whole batch.
    let count = 8000;
    let (mut a, b) = batch(6, n, count);
    for s in [2, 3500, 7999] {
        a[s * n * n..(s + 1) * n * n].fill(0.0);
    }
    let co = Coprocessor::new(common::device()).with_ratio(Some(0.1)).unwrap();
    let sol = co.solve(SplitOp::Lu, n, count, &a, &b, 1).unwrap();
    let failed: Vec<usize> = sol.failures.iter().map(|(s, _)| *s).collect();
    assert_eq!(failed, [2, 3500, 7999]);
    let e = worst_backward_error(&a, &b, &sol.x, n, &failed);
    assert!(e <= 10.0 * n as f64 * u::<f64>(), "the others: backward error {e:e}");
}

#[test]
fn tridiagonal_systems_split_as_they_solve_whole() {
    let dev = common::device();
    let (m, count) = (50, 30);
    let mut r = rng(3);
    let mut arr = || -> Vec<f64> { (0..m * count).map(|_| r.random_range(-1.0..1.0)).collect() };
    let (dl, du, b) = (arr(), arr(), arr());
    let d: Vec<f64> = arr().into_iter().map(|v| v.signum() * (2.5 + v.abs())).collect();
    for ratio in [Some(0.3), None] {
        let co = Coprocessor::new(dev.clone()).with_ratio(ratio).unwrap();
        let sol = co.solve_tridiagonal(m, count, [&dl, &d, &du, &b], TridiagonalMethod::NoPivoting).unwrap();
        assert!(sol.failures.is_empty());
        for s in 0..count {
            let at = |v: &[f64], i: usize| v[s * m + i];
            let x = &sol.x[s * m..(s + 1) * m];
            let (mut res, mut t, mut xn, mut bn) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
            for i in 0..m {
                let lo = if i > 0 { at(&dl, i) } else { 0.0 };
                let up = if i + 1 < m { at(&du, i) } else { 0.0 };
                let tx = at(&d, i) * x[i]
                    + if i > 0 { lo * x[i - 1] } else { 0.0 }
                    + if i + 1 < m { up * x[i + 1] } else { 0.0 };
                res = res.max((tx - at(&b, i)).abs());
                t = t.max(lo.abs() + at(&d, i).abs() + up.abs());
                xn = xn.max(x[i].abs());
                bn = bn.max(at(&b, i).abs());
            }
            let e = res / (t * xn + bn);
            assert!(e <= 10.0 * u::<f64>(), "{ratio:?}, system {s}: backward error {e:e}");
        }
    }
}

#[test]
fn host_arrays_split_as_vectors_do() {
    let dev = common::device();
    // 16 MiB of members: above the size from which pageable copies are staged.
    let (n, count) = (16, 8192);
    let (a, b) = batch(5, n, count);
    let (la, lb) = (dev.host_array_from(&a).unwrap(), dev.host_array_from(&b).unwrap());
    let mut x = dev.host_array::<f64>(b.len()).unwrap();
    assert_eq!(gpumat::api::is_page_locked(&la[..]), !dev.is_cpu());
    for ratio in [Some(0.5), None, None] {
        let co = Coprocessor::new(dev.clone()).with_ratio(ratio).unwrap();
        x.fill(f64::NAN);
        let report = co.solve_into(SplitOp::Lu, n, count, &la, &lb, 1, &mut x).unwrap();
        assert!(report.failures.is_empty(), "{ratio:?}: {:?}", report.failures);
        assert_eq!(report.share.accelerator + report.share.host, count);
        let e = worst_backward_error(&a, &b, &x, n, &[]);
        assert!(e <= 10.0 * n as f64 * u::<f64>(), "{ratio:?}: backward error {e:e}");
        if ratio.is_some() {
            // The same members on the same sides: the same steps, the same bits.
            let pageable = co.solve(SplitOp::Lu, n, count, &a, &b, 1).unwrap();
            assert!(pageable.x == x[..], "{ratio:?}: page-locked memory changed the bits");
        }
    }
    assert!(Coprocessor::new(dev.clone()).ratio::<f64>(SplitOp::Lu, n, 1, !dev.is_cpu()).is_some());
    let short = co_solve_into_short(&dev, &a, &b, n, count);
    assert!(matches!(short, Err(Error::DimensionMismatch { .. })), "{short:?}");
}

/// A call into a solution array one entry short.
fn co_solve_into_short(dev: &Device, a: &[f64], b: &[f64], n: usize, count: usize) -> gpumat::Result<()> {
    let mut x = vec![0.0; b.len() - 1];
    Coprocessor::new(dev.clone()).solve_into(SplitOp::Lu, n, count, a, b, 1, &mut x).map(|_| ())
}

#[test]
fn the_environment_pins_the_ratio_and_bad_calls_are_refused() {
    let tuning = Tuning { split_ratio: Some(0.25), ..Tuning::default() };
    let pinned = Coprocessor::new(Device::with_tuning("cpu", tuning).unwrap());
    let (a, b) = batch(4, 6, 8);
    let sol = pinned.solve(SplitOp::Cholesky, 6, 8, &a, &b, 1).unwrap();
    assert_eq!((sol.share.accelerator, sol.share.ratio, sol.share.pinned), (2, 0.25, true));

    let co = Coprocessor::new(common::device());
    assert!(matches!(co.solve(SplitOp::Lu, 6, 8, &a[1..], &b, 1), Err(Error::DimensionMismatch { .. })));
    assert!(matches!(co.solve(SplitOp::Lu, 6, 8, &a, &b, 2), Err(Error::DimensionMismatch { .. })));
    let tri = SplitOp::Tridiagonal(TridiagonalMethod::NoPivoting);
    assert!(matches!(co.solve(tri, 6, 8, &a, &b, 1), Err(Error::InvalidArgument(_))));
    assert!(matches!(Coprocessor::new(common::device()).with_ratio(Some(1.5)), Err(Error::InvalidArgument(_))));
    let empty = co.solve::<f64>(SplitOp::Lu, 6, 0, &[], &[], 1).unwrap();
    assert!(empty.x.is_empty() && empty.failures.is_empty());
}
