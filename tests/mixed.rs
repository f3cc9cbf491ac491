//! Mixed-precision solves: single-precision factors (their trailing
//! updates in TF32, FP16 or BF16) refined to FP64 accuracy, on matrices of
//! chosen condition, against FP64 references computed here.
//!
//! Bounds: the normwise backward error `η∞ = ‖b − A·x‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞)`
//! of every answer is `≤ n·u` (`u = 2⁻⁵³`), whether refinement converged or
//! the FP64 fallback solved; the forward error `‖x − x*‖∞ / ‖x*‖∞` is within
//! 10 × that of gpumat's own FP64 solve (plus `n·u`), and `≤ 2n·κ·u`.

mod common;

use common::{device, random, rng};
use faer::Mat;
use gpumat::backend::{Backend, Compute, Op, View, ViewMut};
use gpumat::solve::refine::Refinement;
use gpumat::{Device, Error, FactorPrecision, LowLu, Matrix, Method, MixedOptions, SolveOptions};

const U: f64 = f64::EPSILON / 2.0;

fn orthogonal(seed: u64, n: usize) -> Mat<f64> {
    let a = random(&mut rng(seed), n, n);
    Mat::from_fn(n, n, |i, j| a[i + j * n]).qr().compute_Q()
}

/// `U·diag(σ)·Vᵀ` (`V = U` for `spd`), `σ` geometric from 1 to `1/cond`
/// (Higham's `randsvd`, mode 3), column-major; symmetric to the last bit
/// when `spd`.
fn conditioned(seed: u64, n: usize, cond: f64, spd: bool) -> Vec<f64> {
    let u = orthogonal(seed, n);
    let v = if spd { u.clone() } else { orthogonal(seed ^ 0x9e37, n) };
    let sigma: Vec<f64> = (0..n).map(|i| cond.powf(-(i as f64) / (n - 1) as f64)).collect();
    let us = Mat::from_fn(n, n, |i, j| u[(i, j)] * sigma[j]);
    let a = us.as_ref() * v.transpose();
    let mut out: Vec<f64> = (0..n * n).map(|k| a[(k % n, k / n)]).collect();
    if spd {
        for j in 0..n {
            for i in 0..j {
                out[i + j * n] = out[j + i * n];
            }
        }
    }
    out
}

fn upload(dev: &Device, a: &[f64], rows: usize, cols: usize) -> Matrix<f64> {
    dev.from_col_major(rows, cols, a).unwrap()
}

/// `‖b − A·x‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞)` on the host, in FP64.
fn backward_error(a: &[f64], x: &[f64], b: &[f64], n: usize) -> f64 {
    let a_inf = (0..n).map(|i| (0..n).map(|j| a[i + j * n].abs()).sum::<f64>()).fold(0.0, f64::max);
    let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let r: Vec<f64> = (0..n).map(|i| b[i] - (0..n).map(|j| a[i + j * n] * x[j]).sum::<f64>()).collect();
    inf(&r) / (a_inf * inf(x) + inf(b))
}

fn forward_error(x: &[f64], exact: &[f64]) -> f64 {
    let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let d: Vec<f64> = x.iter().zip(exact).map(|(a, b)| a - b).collect();
    inf(&d) / inf(exact)
}

/// Solves `A·x = A·x*` mixed and in FP64, checks the bounds, and returns
/// the answer for more checks.
fn check(n: usize, cond: f64, spd: bool, options: &MixedOptions) -> gpumat::Refined {
    let dev = device();
    let a = conditioned(cond.log10() as u64 + 17 * n as u64, n, cond, spd);
    let exact = random(&mut rng(5), n, 1);
    let b: Vec<f64> = (0..n).map(|i| (0..n).map(|j| a[i + j * n] * exact[j]).sum()).collect();
    let (ad, bd) = (upload(&dev, &a, n, n), upload(&dev, &b, n, 1));
    let what = format!("n={n} cond={cond:e} spd={spd} {:?} {:?}", options.factor, options.refine.kind);
    let refined = ad.solve_mixed(&bd, options).unwrap_or_else(|e| panic!("{what}: {e}"));
    let x = refined.x.to_host().unwrap();
    let eta = backward_error(&a, &x, &b, n);
    assert!(eta <= n as f64 * U, "{what}: backward error {eta:e} > n·u (fallback {:?})", refined.fallback);
    // The device's sums round differently: equal within rounding noise.
    assert!(
        (refined.backward_error - eta).abs() <= 0.5 * eta + 2.0 * n as f64 * U,
        "{what}: reported {:e}, measured {eta:e}",
        refined.backward_error
    );
    let fp64 = ad.solve_with(&bd, &SolveOptions { allow_ill_conditioned: true, ..Default::default() }).unwrap();
    let (e_mixed, e_fp64) = (forward_error(&x, &exact), forward_error(&fp64.x.to_host().unwrap(), &exact));
    assert!(e_mixed <= 10.0 * e_fp64 + n as f64 * U, "{what}: forward error {e_mixed:e}, FP64's {e_fp64:e}");
    assert!(e_mixed <= 2.0 * n as f64 * cond * U, "{what}: forward error {e_mixed:e} > 2n·κ·u");
    refined
}

fn options(method: Method, factor: FactorPrecision, kind: Refinement) -> MixedOptions {
    let mut o = MixedOptions { method, factor: Some(factor), ..Default::default() };
    o.refine.kind = kind;
    o
}

/// The condition up to which each factor must converge without the
/// fallback on these matrices. Their singular values are spread
/// geometrically, so the preconditioned matrix has an eigenvalue far from 1
/// for every `σᵢ` below the factor's backward error `δ ≈ u_f·‖A‖`: GMRES
/// needs about `n·log(1/δ)/log κ` iterations once `κ·δ > 1`.
fn converges_up_to(factor: FactorPrecision) -> f64 {
    match factor {
        FactorPrecision::F32 | FactorPrecision::Fp16x3 => 1e8,
        FactorPrecision::Fp16 | FactorPrecision::Tf32 => 1e3,
        _ => 1e2,
    }
}

#[test]
fn gmres_refines_single_precision_lu_to_fp64_accuracy() {
    for cond in [1e0, 1e2, 1e4, 1e6, 1e8, 1e10, 1e12] {
        let r = check(300, cond, false, &options(Method::Lu, FactorPrecision::F32, Refinement::Gmres));
        if cond <= converges_up_to(FactorPrecision::F32) {
            assert_eq!(r.fallback, None, "cond {cond:e}");
            assert_eq!((r.method, r.factor), (Method::Lu, FactorPrecision::F32));
        }
    }
}

#[test]
fn gmres_refines_tensor_core_factors() {
    // The trailing updates rounded as the tensor cores round them.
    for factor in [FactorPrecision::Fp16x3, FactorPrecision::Fp16, FactorPrecision::Tf32, FactorPrecision::Bf16] {
        for cond in [1e0, 1e2, 1e3, 1e6] {
            for spd in [false, true] {
                let method = if spd { Method::Cholesky } else { Method::Lu };
                let r = check(300, cond, spd, &options(method, factor, Refinement::Gmres));
                if cond <= converges_up_to(factor) {
                    assert_eq!(r.fallback, None, "{factor:?} cond {cond:e} spd {spd}");
                    assert_eq!(r.factor, factor);
                } else if r.fallback.is_some() {
                    assert_eq!(r.factor, FactorPrecision::F64);
                }
            }
        }
    }
}

#[test]
fn lu_after_random_butterflies_refines_without_pivoting() {
    // The same bounds as the pivoted LU's, reached by the LU without
    // pivoting of Uᵀ·A·V with no retry, up to a condition a hundred times
    // below the pivoted LU's limit (the growth of elimination without
    // interchanges costs the preconditioner some digits); beyond it,
    // reached all the same, after the pivoted LU if need be.
    for (factor, conds) in [(FactorPrecision::F32, &[1e0, 1e4, 1e6, 1e8][..]), (FactorPrecision::Fp16, &[1e0, 1e3][..])]
    {
        for &cond in conds {
            let mut o = options(Method::Lu, factor, Refinement::Gmres);
            o.lu = LowLu::Butterfly;
            let r = check(300, cond, false, &o);
            let what = format!("{factor:?} cond {cond:e}");
            if cond <= converges_up_to(factor) / 100.0 || factor == FactorPrecision::Fp16 {
                assert_eq!((r.fallback.as_deref(), r.retried.as_deref()), (None, None), "{what}");
                assert_eq!((r.method, r.lu), (Method::Lu, Some(LowLu::Butterfly)), "{what}");
            }
        }
    }
    // A matrix whose every leading block of odd order is singular: any
    // elimination without interchanges on A itself breaks down at once.
    let dev = device();
    let n = 200;
    let c = conditioned(21, n / 2, 10.0, false);
    let mut a = vec![0.0; n * n];
    for j in 0..n / 2 {
        for i in 0..n / 2 {
            a[i + (j + n / 2) * n] = c[i + j * n / 2];
            a[(i + n / 2) + j * n] = c[j + i * n / 2];
        }
    }
    let exact = random(&mut rng(22), n, 1);
    let b: Vec<f64> = (0..n).map(|i| (0..n).map(|j| a[i + j * n] * exact[j]).sum()).collect();
    let mut o = options(Method::Lu, FactorPrecision::F32, Refinement::Gmres);
    o.lu = LowLu::Butterfly;
    let r = upload(&dev, &a, n, n).solve_mixed(&upload(&dev, &b, n, 1), &o).unwrap();
    assert_eq!((r.fallback.as_deref(), r.retried.as_deref(), r.lu), (None, None, Some(LowLu::Butterfly)));
    let eta = backward_error(&a, &r.x.to_host().unwrap(), &b, n);
    assert!(eta <= n as f64 * U, "[[0, C], [Cᵀ, 0]]: backward error {eta:e} > n·u");
}

#[test]
fn a_failed_butterfly_lu_turns_to_the_pivoted_one_and_says_why() {
    // No refinement steps allowed: the butterflies' LU cannot reach n·u,
    // nor can the pivoted one; the FP64 solve answers, and both reasons
    // are reported.
    let dev = device();
    let n = 200;
    let a = conditioned(23, n, 1e6, false);
    let b = random(&mut rng(24), n, 1);
    let mut o = options(Method::Lu, FactorPrecision::Fp16, Refinement::Classical);
    o.lu = LowLu::Butterfly;
    o.refine.max_steps = 0;
    let r = upload(&dev, &a, n, n).solve_mixed(&upload(&dev, &b, n, 1), &o).unwrap();
    let retried = r.retried.expect("the butterflies' LU cannot converge in no steps");
    assert!(retried.contains("refinement") || retried.contains("step"), "{retried}");
    assert_eq!((r.factor, r.lu), (FactorPrecision::F64, None), "{:?}", r.fallback);
    assert!(r.fallback.is_some());
}

#[test]
fn cholesky_is_refined_and_auto_chooses_it_for_spd() {
    for cond in [1e0, 1e4, 1e6] {
        let r = check(300, cond, true, &options(Method::Auto, FactorPrecision::F32, Refinement::Gmres));
        assert_eq!((r.method, r.fallback.as_deref()), (Method::Cholesky, None), "cond {cond:e}");
    }
    // κ = 1e9 is beyond FP32's Cholesky (a pivot goes negative when
    // κ·u₃₂ nears 1): Auto takes LU in FP32 instead.
    let r = check(300, 1e9, true, &options(Method::Auto, FactorPrecision::F32, Refinement::Gmres));
    assert!(r.method == Method::Lu || r.fallback.is_some(), "{:?}", r.method);
}

#[test]
fn beyond_what_single_precision_preconditions_the_fallback_is_reported() {
    // κ = 1e14: the FP32 Cholesky breaks down or GMRES cannot make up for
    // it; either way the answer is FP64's, and the report says so.
    for spd in [false, true] {
        let r = check(300, 1e14, spd, &options(Method::Auto, FactorPrecision::Fp16, Refinement::Gmres));
        if let Some(why) = &r.fallback {
            assert_eq!(r.factor, FactorPrecision::F64, "{why}");
            assert!(!why.is_empty());
        }
    }
    // Classical refinement diverges once κ·u_f > 1.
    let r = check(200, 1e10, false, &options(Method::Lu, FactorPrecision::F32, Refinement::Classical));
    let why = r.fallback.expect("classical refinement cannot converge at κ = 1e10 from FP32");
    assert!(why.contains("refinement"), "{why}");
    assert_eq!(r.factor, FactorPrecision::F64);
}

#[test]
fn without_fallback_a_failed_refinement_is_an_error() {
    let dev = device();
    let n = 200;
    let a = upload(&dev, &conditioned(3, n, 1e10, false), n, n);
    let b = upload(&dev, &random(&mut rng(4), n, 1), n, 1);
    let mut o = options(Method::Lu, FactorPrecision::F32, Refinement::Classical);
    o.fallback = false;
    match a.solve_mixed(&b, &o) {
        Err(Error::NotConverged { what, .. }) => assert!(what.contains("refinement"), "{what}"),
        other => panic!("expected NotConverged, got {other:?}"),
    }
}

#[test]
fn large_entries_are_scaled_before_fp16_rounds_them() {
    // Entries near 1e6 and 1e-6 in one matrix: FP16 overflows at 65504 and
    // flushes below 6e-8 without the equilibration.
    let dev = device();
    let n = 200;
    let mut a = conditioned(9, n, 1e3, false);
    for j in 0..n {
        for i in 0..n {
            a[i + j * n] *= if i % 2 == 0 { 1e6 } else { 1e-6 };
        }
    }
    let exact = random(&mut rng(6), n, 1);
    let b: Vec<f64> = (0..n).map(|i| (0..n).map(|j| a[i + j * n] * exact[j]).sum()).collect();
    let r = upload(&dev, &a, n, n)
        .solve_mixed(&upload(&dev, &b, n, 1), &options(Method::Lu, FactorPrecision::Fp16, Refinement::Gmres))
        .unwrap();
    assert_eq!(r.fallback, None);
    let x = r.x.to_host().unwrap();
    let eta = backward_error(&a, &x, &b, n);
    assert!(eta <= n as f64 * U, "backward error {eta:e}");
    // Entries beyond FP32's range: one power of two for the whole matrix.
    let huge: Vec<f64> = conditioned(10, 50, 10.0, false).iter().map(|v| v * 1e300).collect();
    let bh: Vec<f64> = (0..50).map(|i| (0..50).map(|j| huge[i + j * 50]).sum()).collect();
    let r = upload(&dev, &huge, 50, 50)
        .solve_mixed(&upload(&dev, &bh, 50, 1), &options(Method::Lu, FactorPrecision::Fp16, Refinement::Gmres))
        .unwrap();
    assert_eq!(r.fallback, None);
    let x = r.x.to_host().unwrap();
    assert!(x.iter().all(|v| (v - 1.0).abs() < 1e-12), "x = {:?}", &x[..3]);
}

#[test]
fn many_right_hand_sides_are_refined_each() {
    let dev = device();
    let n = 150;
    let a = conditioned(11, n, 1e5, false);
    let xs = random(&mut rng(12), n, 3);
    let b: Vec<f64> = (0..3 * n).map(|k| (0..n).map(|j| a[k % n + j * n] * xs[j + (k / n) * n]).sum()).collect();
    let r = upload(&dev, &a, n, n).solve_mixed(&upload(&dev, &b, n, 3), &MixedOptions::default()).unwrap();
    let x = r.x.to_host().unwrap();
    for c in 0..3 {
        let eta = backward_error(&a, &x[c * n..(c + 1) * n], &b[c * n..(c + 1) * n], n);
        assert!(eta <= n as f64 * U, "column {c}: {eta:e}");
    }
}

#[test]
fn bad_input_is_refused() {
    let dev = device();
    let n = 4;
    let mut a = conditioned(1, n, 10.0, false);
    let b = upload(&dev, &[1.0; 4], n, 1);
    a[5] = f64::NAN;
    assert!(matches!(upload(&dev, &a, n, n).solve_mixed(&b, &MixedOptions::default()), Err(Error::NonFinite { .. })));
    // Singular: a zero row. The FP32 factor meets the zero pivot, the FP64
    // fallback names it.
    let mut s = conditioned(2, n, 10.0, false);
    for j in 0..n {
        s[2 + j * n] = 0.0;
    }
    match upload(&dev, &s, n, n).solve_mixed(&b, &MixedOptions::default()) {
        Err(Error::Singular { .. }) | Err(Error::IllConditioned { .. }) => {}
        other => panic!("expected Singular, got {other:?}"),
    }
    let wide = upload(&dev, &[1.0; 6], 2, 3);
    assert!(matches!(wide.solve_mixed(&b, &MixedOptions::default()), Err(Error::DimensionMismatch { .. })));
    let ldlt = MixedOptions { method: Method::Ldlt { pivoted: true }, ..Default::default() };
    assert!(matches!(
        upload(&dev, &conditioned(3, n, 10.0, true), n, n).solve_mixed(&b, &ldlt),
        Err(Error::InvalidArgument(_))
    ));
    // n = 0 and n = 1.
    let empty = dev.zeros::<f64>(0, 0).unwrap();
    assert_eq!(empty.solve_mixed(&dev.zeros(0, 1).unwrap(), &MixedOptions::default()).unwrap().x.rows(), 0);
    let one = upload(&dev, &[4.0], 1, 1).solve_mixed(&upload(&dev, &[2.0], 1, 1), &MixedOptions::default()).unwrap();
    assert_eq!(one.x.to_host().unwrap(), vec![0.5]);
}

/// `gemm_in` against the FP64 product of the operands rounded as the
/// format says: `|C − Ĉ| ≤ 2k·u₃₂·(|Â|·|B̂|)` entrywise, FP32 accumulation.
#[test]
fn tensor_core_products_round_their_operands() {
    let dev = device();
    let (m, n, k) = (37, 29, 300);
    let a: Vec<f32> = random(&mut rng(21), m, k).iter().map(|&v| v as f32 * 3.0).collect();
    let b: Vec<f32> = random(&mut rng(22), n, k).iter().map(|&v| v as f32).collect();
    for compute in [Compute::Native, Compute::Tf32, Compute::Fp16, Compute::Bf16] {
        let out = gpumat::with_backend!(dev, be => {
            let (ab, bb) = (be.upload(&a).unwrap(), be.upload(&b).unwrap());
            let mut cb = be.upload(&vec![f32::NAN; m * n]).unwrap();
            let av = View::dense(&ab, m, k).unwrap();
            let bv = View::dense(&bb, n, k).unwrap();
            be.gemm_in(compute, 1.0f32, av, Op::NoTrans, bv, Op::Trans, 0.0, ViewMut::dense(&mut cb, m, n).unwrap())
                .unwrap();
            let mut host = vec![0f32; m * n];
            be.download(&cb, &mut host).unwrap();
            host
        });
        let round = |v: f32| f64::from(compute.round(v));
        for j in 0..n {
            for i in 0..m {
                let (mut exact, mut bound) = (0.0, 0.0);
                for p in 0..k {
                    let t = round(a[i + p * m]) * round(b[j + p * n]);
                    exact += t;
                    bound += t.abs();
                }
                let got = f64::from(out[i + j * m]);
                assert!(
                    (got - exact).abs() <= 2.0 * k as f64 * f64::from(f32::EPSILON) * bound,
                    "{compute:?} ({i}, {j}): {got} vs {exact}"
                );
            }
        }
        // syrk_in: the lower triangle of A·Aᵀ as gemm_in forms it, the
        // upper triangle untouched (poisoned, and β = 0 must not read it).
        let (lower, upper_kept) = gpumat::with_backend!(dev, be => {
            let ab = be.upload(&a).unwrap();
            let mut full = be.upload(&vec![f32::NAN; m * m]).unwrap();
            let mut tri = be.upload(&vec![f32::NAN; m * m]).unwrap();
            let av = View::dense(&ab, m, k).unwrap();
            be.gemm_in(compute, 1.0f32, av, Op::NoTrans, av, Op::Trans, 0.0, ViewMut::dense(&mut full, m, m).unwrap())
                .unwrap();
            be.syrk_in(compute, gpumat::layout::Uplo::Lower, Op::NoTrans, 1.0f32, av, 0.0, ViewMut::dense(&mut tri, m, m).unwrap())
                .unwrap();
            let (mut f, mut t) = (vec![0f32; m * m], vec![0f32; m * m]);
            be.download(&full, &mut f).unwrap();
            be.download(&tri, &mut t).unwrap();
            let mut worst = 0f64;
            let mut kept = true;
            for j in 0..m {
                for i in 0..m {
                    if i >= j {
                        worst = worst.max(f64::from((f[i + j * m] - t[i + j * m]).abs()));
                    } else {
                        kept &= t[i + j * m].is_nan();
                    }
                }
            }
            (worst, kept)
        });
        assert!(lower <= 1e-3, "{compute:?}: syrk_in differs from gemm_in by {lower}");
        assert!(upper_kept, "{compute:?}: syrk_in wrote its other triangle");
        // The rounding is felt: the products differ from FP32's.
        if compute != Compute::Native {
            let u = compute.unit_roundoff().unwrap();
            assert!(
                a.iter().any(|&v| (f64::from(compute.round(v)) - f64::from(v)).abs() > 0.1 * u * f64::from(v.abs()))
            );
        }
    }
}

#[test]
fn auto_refinement_stays_classical_while_it_converges_fast() {
    // κ = 1e2 with an FP32 factor: each classical step gains far more than
    // two digits, so GMRES never starts.
    let o = options(Method::Lu, FactorPrecision::F32, Refinement::Auto);
    let r = check(200, 1e2, false, &o);
    assert_eq!((r.inner, r.fallback.as_deref()), (0, None), "{} steps", r.steps);
    // κ = 1e7: the first classical step gains less than two digits, and
    // GMRES takes over.
    let r = check(200, 1e7, false, &o);
    assert!(r.inner > 0 && r.fallback.is_none(), "{} steps, {} GMRES, {:?}", r.steps, r.inner, r.fallback);
}
