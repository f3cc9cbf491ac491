//! Weighted least squares on the device under test.
//!
//! The target: degree-10 polynomial fits in the monomial
//! basis on points spread over [−9, −3] (a Filip-like problem: the design's
//! condition number is far beyond 1e8) give at least 7 correct significant
//! digits in every coefficient, weighted and unweighted, against the exact
//! solution computed in rational arithmetic from the same f64 data — in
//! fact 12 (refinement reaches FP64 level, where plain QR does not). Then
//! well-conditioned problems against faer's FP64 QR, standard errors against
//! their formula, and every kind of bad input.

mod common;

use common::*;
use faer::Mat;
use faer::linalg::solvers::DenseSolveCore;
use faer::prelude::SolveLstsq;
use gpumat::{Error, Matrix, Scalar, lstsq};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{FromPrimitive, ToPrimitive, Zero};
use rand::Rng;

fn upload<T: Scalar>(data: &[f64], rows: usize, cols: usize) -> Matrix<T> {
    let v: Vec<T> = data.iter().map(|&x| T::from_f64(x)).collect();
    device().from_col_major(rows, cols, &v).unwrap()
}

/// The monomial design `[1, x, …, x^deg]`, column-major.
fn vandermonde(x: &[f64], deg: usize) -> Vec<f64> {
    (0..=deg).flat_map(|k| x.iter().map(move |&t| t.powi(k as i32))).collect()
}

/// A Filip-like data set: 82 points spread over [−9, −3], a smooth
/// response with noise.
fn filip_like(seed: u64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut r = rng(seed);
    let m = 82;
    let mut x: Vec<f64> = (0..m).map(|i| -9.0 + 6.0 * (i as f64 + r.random_range(0.0..0.9)) / m as f64).collect();
    x.sort_by(f64::total_cmp);
    let y: Vec<f64> = x.iter().map(|&t| 0.85 + 0.04 * (0.9 * t).sin() + 0.002 * r.random_range(-1.0..1.0)).collect();
    let sigma: Vec<f64> = (0..m).map(|_| r.random_range(0.5..2.0)).collect();
    (x, y, sigma)
}

fn rational(x: f64) -> BigRational {
    BigRational::from_f64(x).expect("finite")
}

/// The exact minimizer of ‖diag(w)(b − A·x)‖ for the f64 data as given:
/// the normal equations AᵀW²A·x = AᵀW²b in rational arithmetic (exact, so
/// their conditioning does not matter), by Gaussian elimination.
fn exact_lstsq(a: &[f64], m: usize, n: usize, b: &[f64], w: Option<&[f64]>) -> Vec<f64> {
    let ar: Vec<BigRational> = a.iter().map(|&v| rational(v)).collect();
    let w2: Vec<BigRational> = (0..m).map(|i| rational(w.map_or(1.0, |w| w[i]))).map(|v| &v * &v).collect();
    let br: Vec<BigRational> = b.iter().map(|&v| rational(v)).collect();
    let mut g = vec![vec![BigRational::zero(); n + 1]; n];
    for p in 0..n {
        let wa: Vec<BigRational> = (0..m).map(|i| &w2[i] * &ar[i + p * m]).collect();
        for q in 0..n {
            g[p][q] = (0..m).fold(BigRational::zero(), |s, i| s + &wa[i] * &ar[i + q * m]);
        }
        g[p][n] = (0..m).fold(BigRational::zero(), |s, i| s + &wa[i] * &br[i]);
    }
    for c in 0..n {
        let piv = (c..n).find(|&r| !g[r][c].is_zero()).expect("full rank");
        g.swap(c, piv);
        for r in c + 1..n {
            if g[r][c].is_zero() {
                continue;
            }
            let f = &g[r][c] / &g[c][c];
            let (top, bottom) = g.split_at_mut(r);
            for (x, p) in bottom[0][c..].iter_mut().zip(&top[c][c..]) {
                *x -= &f * p;
            }
        }
    }
    let mut x = vec![BigRational::zero(); n];
    for c in (0..n).rev() {
        let mut s = g[c][n].clone();
        for k in c + 1..n {
            s -= &g[c][k] * &x[k];
        }
        x[c] = s / &g[c][c];
    }
    x.iter().map(|v| v.to_f64().unwrap_or_else(|| big_to_f64(v))).collect()
}

fn big_to_f64(v: &BigRational) -> f64 {
    // Scale numerator and denominator to f64 range.
    let (n, d) = (v.numer().clone(), v.denom().clone());
    let shift = n.bits().max(d.bits()).saturating_sub(900);
    let n: BigInt = n >> shift;
    let d: BigInt = d >> shift;
    n.to_f64().unwrap() / d.to_f64().unwrap()
}

/// Worst relative error over the coefficients: significant digits lost.
fn worst_digits(x: &[f64], exact: &[f64]) -> f64 {
    x.iter().zip(exact).map(|(a, e)| ((a - e) / e).abs()).fold(0.0, f64::max)
}

#[test]
fn degree_10_monomial_fits_on_minus_9_to_minus_3_give_7_digits() {
    let (x, y, sigma) = filip_like(2008);
    let (m, n) = (x.len(), 11);
    let a = vandermonde(&x, 10);
    let w: Vec<f64> = sigma.iter().map(|s| 1.0 / s).collect();
    for weights in [None, Some(&w[..])] {
        let exact = exact_lstsq(&a, m, n, &y, weights);
        let dw = weights.map(|w| upload::<f64>(w, m, 1));
        let sol = lstsq(&upload::<f64>(&a, m, n), &upload::<f64>(&y, m, 1), dw.as_ref()).unwrap();
        let got = sol.x.to_host().unwrap();
        let err = worst_digits(&got, &exact);
        let what = if weights.is_some() { "weighted" } else { "unweighted" };
        // The target is 7 digits; refinement gives (nearly) all 16.
        assert!(
            err <= 1e-12,
            "{what}: worst coefficient relative error {err:e} > 1e-12 (condition {:e})",
            sol.condition
        );
        // The design really is that ill conditioned: κ of A itself, from faer.
        let fa = Mat::from_fn(m, n, |i, j| a[i + j * m]);
        let s = fa.singular_values().unwrap();
        let kappa = s[0] / s[n - 1];
        assert!(kappa > 1e8, "κ(A) = {kappa:e}");
        // Plain QR without refinement stops at about κ·u: the bound is one
        // that can fail.
        let plain = upload::<f64>(&a, m, n).qr().unwrap();
        let wb: Vec<f64> = (0..m).map(|i| weights.map_or(1.0, |w| w[i]) * y[i]).collect();
        let wa: Vec<f64> = (0..m * n).map(|p| weights.map_or(1.0, |w| w[p % m]) * a[p]).collect();
        let plain = if weights.is_some() { upload::<f64>(&wa, m, n).qr().unwrap() } else { plain };
        let px = plain.solve(&upload::<f64>(&wb, m, 1)).unwrap().to_host().unwrap();
        let plain_err = worst_digits(&px, &exact);
        assert!(plain_err > 1e-12, "{what}: plain QR already gives {plain_err:e}");
        assert!(sol.iterations >= 1);
        // The residual norm matches the exact solution's to 7 digits.
        let res_exact: f64 = (0..m)
            .map(|i| {
                let wi = weights.map_or(1.0, |w| w[i]);
                let p: f64 = (0..n).map(|j| a[i + j * m] * exact[j]).sum();
                (wi * (y[i] - p)).powi(2)
            })
            .sum::<f64>()
            .sqrt();
        let rel = (sol.residual_norm - res_exact).abs() / res_exact;
        assert!(rel <= 1e-7, "{what}: residual norm {} vs {res_exact} (rel {rel:e})", sol.residual_norm);
        eprintln!(
            "{what}: κ(A) = {kappa:.2e}, κ(equilibrated) ≈ {:.2e}, {} refinement steps, worst error {err:.1e} (plain QR {plain_err:.1e})",
            sol.condition, sol.iterations
        );
    }
}

#[test]
fn f32_refuses_what_it_cannot_resolve() {
    let (x, y, _) = filip_like(2008);
    let a = vandermonde(&x, 10);
    match lstsq(&upload::<f32>(&a, x.len(), 11), &upload::<f32>(&y, x.len(), 1), None) {
        Err(Error::RankDeficient { column: Some(_), condition, .. }) => assert!(condition > 1e5),
        other => panic!("expected RankDeficient in f32, got {other:?}"),
    }
}

/// A well-conditioned weighted problem against faer's FP64 QR of diag(w)·A.
fn against_faer<T: Scalar>(seed: u64, m: usize, n: usize) {
    let mut r = rng(seed);
    let a = random(&mut r, m, n);
    let b = random(&mut r, m, 1);
    let w: Vec<f64> = (0..m).map(|_| r.random_range(0.1..3.0)).collect();
    // The data as T holds it.
    let round = |v: &[f64]| v.iter().map(|&x| T::from_f64(x).to_f64()).collect::<Vec<_>>();
    let (a, b, w) = (round(&a), round(&b), round(&w));
    let sol = lstsq(&upload::<T>(&a, m, n), &upload::<T>(&b, m, 1), Some(&upload::<T>(&w, m, 1))).unwrap();
    let fa = Mat::from_fn(m, n, |i, j| w[i] * a[i + j * m]);
    let fb = Mat::from_fn(m, 1, |i, _| w[i] * b[i]);
    let xr = fa.qr().solve_lstsq(&fb);
    let xr: Vec<f64> = (0..n).map(|i| xr[(i, 0)]).collect();
    let got: Vec<f64> = sol.x.to_host().unwrap().into_iter().map(Scalar::to_f64).collect();
    // Refined to T's rounding: within a few units of T's roundoff of faer's
    // FP64 answer (whose own error, ~κ²·u₆₄, is far smaller for f32).
    let bound = 16.0 * u::<T>() + 1e3 * (m * n) as f64 * f64::EPSILON;
    let err = rel_error(&got, &xr);
    assert!(err <= bound, "{} {m}×{n}: ‖x − x_faer‖/‖x_faer‖ = {err:e} > {bound:e}", T::NAME);

    // Standard errors: σ·√diag((AᵀW²A)⁻¹), σ² = ‖r‖²/(m − n), from faer.
    let res = &fb - &fa * Mat::from_fn(n, 1, |i, _| xr[i]);
    let rn = (0..m).map(|i| res[(i, 0)].powi(2)).sum::<f64>().sqrt();
    // Relative to ‖W·b‖: a zero residual is only known to rounding.
    let nb = (0..m).map(|i| fb[(i, 0)].powi(2)).sum::<f64>().sqrt();
    let tol = 1e-6 * rn + 1e3 * (m * n) as f64 * f64::EPSILON * nb;
    assert!((sol.residual_norm - rn).abs() <= tol, "residual norm {} vs {rn}", sol.residual_norm);
    if m == n {
        assert!(sol.standard_errors.is_none());
        return;
    }
    let g = fa.transpose() * &fa;
    let ginv = g.full_piv_lu().inverse();
    let sigma2 = rn * rn / (m - n) as f64;
    let se = sol.standard_errors.expect("m > n");
    for j in 0..n {
        let want = (sigma2 * ginv[(j, j)]).sqrt();
        let e = (se[j] - want).abs() / want;
        assert!(e <= 1e3 * u::<T>(), "{}: standard error {j}: {} vs {want}", T::NAME, se[j]);
    }
}

#[test]
fn well_conditioned_weighted_problems_match_faer() {
    against_faer::<f64>(1, 50, 4);
    against_faer::<f64>(2, 400, 37);
    against_faer::<f32>(3, 60, 5);
    against_faer::<f64>(4, 9, 9);
}

#[test]
fn square_systems_have_no_standard_errors() {
    let a = random(&mut rng(5), 6, 6);
    let b = random(&mut rng(6), 6, 1);
    let sol = lstsq(&upload::<f64>(&a, 6, 6), &upload::<f64>(&b, 6, 1), None).unwrap();
    assert!(sol.standard_errors.is_none());
    assert!(sol.residual_norm <= 1e-13, "an interpolation leaves no residual: {}", sol.residual_norm);
}

#[test]
fn bad_input_is_a_clear_error() {
    let (m, n) = (8, 3);
    let a = random(&mut rng(7), m, n);
    let b = random(&mut rng(8), m, 1);
    let (da, db) = (upload::<f64>(&a, m, n), upload::<f64>(&b, m, 1));
    let msg = |r: gpumat::Result<gpumat::LstsqSolution<f64>>| r.unwrap_err();

    // Fewer observations than unknowns.
    let e = msg(lstsq(&upload::<f64>(&a[..6], 2, 3), &upload::<f64>(&b[..2], 2, 1), None));
    assert!(matches!(e, Error::DimensionMismatch { .. }) && e.to_string().contains("2 observations"), "{e}");
    // Mismatched lengths.
    let e = msg(lstsq(&da, &upload::<f64>(&b[..7], 7, 1), None));
    assert!(matches!(e, Error::DimensionMismatch { .. }), "{e}");
    let e = msg(lstsq(&da, &db, Some(&upload::<f64>(&[1.0; 5], 5, 1))));
    assert!(matches!(e, Error::DimensionMismatch { .. }) && e.to_string().contains("weights"), "{e}");
    // Negative weight, NaN in the data.
    let mut w = vec![1.0; m];
    w[4] = -0.5;
    let e = msg(lstsq(&da, &db, Some(&upload::<f64>(&w, m, 1))));
    assert!(matches!(e, Error::NegativeWeight { index: 5, value } if value == -0.5), "{e}");
    let mut bn = b.clone();
    bn[2] = f64::NAN;
    let e = msg(lstsq(&da, &upload::<f64>(&bn, m, 1), None));
    assert!(matches!(e, Error::NonFinite { row: 3, .. }), "{e}");
    // Rank deficient: column 3 = column 1 + column 2; and a zero column.
    let mut ad = a.clone();
    for i in 0..m {
        ad[i + 2 * m] = a[i] + a[i + m];
    }
    let e = msg(lstsq(&upload::<f64>(&ad, m, n), &db, None));
    assert!(matches!(e, Error::RankDeficient { column: Some(3), .. }), "{e}");
    let mut az = a.clone();
    az[m..2 * m].fill(0.0);
    let e = msg(lstsq(&upload::<f64>(&az, m, n), &db, None));
    assert!(matches!(e, Error::RankDeficient { column: Some(2), .. }), "{e}");
    // Zero weights that leave too few observations.
    let mut wz = vec![0.0; m];
    wz[..2].fill(1.0);
    let e = msg(lstsq(&da, &db, Some(&wz_up(&wz))));
    assert!(matches!(e, Error::RankDeficient { .. }), "{e}");
}

fn wz_up(w: &[f64]) -> Matrix<f64> {
    upload::<f64>(w, w.len(), 1)
}
