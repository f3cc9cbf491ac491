//! Matrices near the ends of the floating-point range: inverses,
//! determinants, RREFs and solves of `s·M` for a well-conditioned `M` and
//! `s` near the overflow or underflow threshold, against FP64 references
//! taken from `M` itself (faer), scaled exactly or in one rounding.
//!
//! Bounds, with `κ` the 1-norm condition of `M` (small here):
//! - an inverse or solution: `max|X − X_ref| ≤ 10·n·u·κ·max|X_ref| + n·2⁻¹⁰⁷⁴`,
//!   the last term the spacing of subnormal numbers, where the answer
//!   itself has lost digits;
//! - a determinant: `|det − det_ref| ≤ 10·n·u·κ·|det_ref|`, compared as
//!   mantissa and exponent;
//! - ranks and pivots exactly; RREFs exactly where the scaling is a power
//!   of two (which commutes with rounding).
//!
//! Results beyond the range are typed errors, never infinities or NaNs.

mod common;

use common::*;
use faer::Mat;
use faer::linalg::solvers::DenseSolveCore;
use gpumat::factor::equilibrate::ldexp;
use gpumat::{Error, Matrix, Method, Scalar, SolveOptions};

fn upload<T: Scalar>(data: &[f64], rows: usize, cols: usize) -> Matrix<T> {
    let v: Vec<T> = data.iter().map(|&x| T::from_f64(x)).collect();
    device().from_col_major(rows, cols, &v).unwrap()
}

fn host<T: Scalar>(a: &Matrix<T>) -> Vec<f64> {
    a.to_host().unwrap().into_iter().map(Scalar::to_f64).collect()
}

fn faer_of(a: &[f64], n: usize) -> Mat<f64> {
    Mat::from_fn(n, n, |i, j| a[i + j * n])
}

fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// `max|x − y|`, without the overflow of a sum of squares.
fn max_diff(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).fold(0.0, |m, (a, b)| m.max((a - b).abs()))
}

fn one_norm(a: &[f64], n: usize) -> f64 {
    (0..n).map(|j| a[j * n..(j + 1) * n].iter().map(|v| v.abs()).sum::<f64>()).fold(0.0, f64::max)
}

/// The well-conditioned test matrices: the rotation of the 2 × 2 example
/// and a diagonally dominant random one; with `κ₁` from faer's inverse.
fn matrices() -> Vec<(Vec<f64>, usize, f64)> {
    let rotation = vec![0.6, 0.8, -0.8, 0.6];
    let n = 30;
    let mut m = random(&mut rng(3), n, n);
    (0..n).for_each(|i| m[i + i * n] += n as f64);
    // Largest entry in [0.5, 1), so that s·M is representable for s < Ω.
    let k = gpumat::factor::equilibrate::exponent(max_abs(&m));
    m.iter_mut().for_each(|v| *v = ldexp(*v, -k));
    [(rotation, 2), (m, n)]
        .into_iter()
        .map(|(a, n)| {
            let inv = faer_of(&a, n).partial_piv_lu().inverse();
            let inv: Vec<f64> = (0..n * n).map(|p| inv[(p % n, p / n)]).collect();
            let kappa = one_norm(&a, n) * one_norm(&inv, n);
            (a, n, kappa)
        })
        .collect()
}

fn inverse_of(m: &[f64], n: usize) -> Vec<f64> {
    let inv = faer_of(m, n).partial_piv_lu().inverse();
    (0..n * n).map(|p| inv[(p % n, p / n)]).collect()
}

#[test]
fn inverses_of_matrices_scaled_to_the_ends_of_the_range() {
    for (m, n, kappa) in matrices() {
        let reference = inverse_of(&m, n);
        for s in [1e308, 1.5e308 / n as f64, 1e-300, 1e-308, 2f64.powi(-1000)] {
            let a: Vec<f64> = m.iter().map(|v| v * s).collect();
            let want: Vec<f64> = reference.iter().map(|v| v / s).collect();
            let got = host(&upload::<f64>(&a, n, n).inverse().unwrap());
            let bound = 10.0 * n as f64 * u::<f64>() * kappa * max_abs(&want) + n as f64 * ldexp(1.0, -1074);
            let err = max_diff(&got, &want);
            assert!(err <= bound, "n={n}, s={s:e}: max|X − A⁻¹| = {err:e} > {bound:e}");
        }
    }
    // f32: entries beyond √Ω₃₂ ≈ 1.8e19.
    let (m, n, kappa) = matrices().pop().unwrap();
    let reference = inverse_of(&m, n);
    let s = 1e37;
    let a: Vec<f64> = m.iter().map(|v| v * s).collect();
    let want: Vec<f64> = reference.iter().map(|v| v / s).collect();
    let got = host(&upload::<f32>(&a, n, n).inverse().unwrap());
    let bound = 10.0 * n as f64 * u::<f32>() * kappa * max_abs(&want) + n as f64 * f64::from(f32::from_bits(1));
    assert!(max_diff(&got, &want) <= bound, "f32: {:e} > {bound:e}", max_diff(&got, &want));
}

#[test]
fn the_factorization_of_an_equilibrated_matrix_reconstructs_it() {
    let (m, n, _) = matrices().pop().unwrap();
    let a: Vec<f64> = m.iter().map(|v| v * 1e307).collect();
    let f = upload::<f64>(&a, n, n).lu().unwrap();
    assert!(f.scaling().is_some(), "entries of 1e307 are equilibrated");
    let back = host(&f.reconstruct().unwrap());
    let err = max_diff(&back, &a) / max_abs(&a);
    assert!(err <= 10.0 * n as f64 * u::<f64>(), "‖A − 2^−r·PᵀLU·2^−c‖/‖A‖ = {err:e}");
    // In range: no equilibration, the factors of A itself.
    assert!(upload::<f64>(&m, n, n).lu().unwrap().scaling().is_none());
}

#[test]
fn determinants_beyond_the_range_keep_their_exponent() {
    for (m, n, kappa) in matrices() {
        let det_m = faer_of(&m, n).determinant();
        // s = 2^k exactly: det(s·M) = det(M)·2^(n·k), compared as mantissa and exponent.
        for k in [1020, -1020, 500, 3] {
            let a: Vec<f64> = m.iter().map(|&v| ldexp(v, k)).collect();
            let d = upload::<f64>(&a, n, n).determinant().unwrap();
            let got = ldexp(d.mantissa, (d.exponent - n as i64 * i64::from(k)) as i32);
            let bound = 10.0 * n as f64 * u::<f64>() * kappa * det_m.abs();
            assert!((got - det_m).abs() <= bound, "n={n}, 2^{k}: det/2^(nk) = {got:e}, want {det_m:e}");
            let ln = det_m.abs().ln() + (n as i64 * i64::from(k)) as f64 * std::f64::consts::LN_2;
            assert!((d.ln_abs() - ln).abs() <= 1e-12 * ln.abs().max(1.0), "log|det|: {} vs {ln}", d.ln_abs());
            let m_a = upload::<f64>(&a, n, n);
            match m_a.det() {
                Ok(v) => assert!((v - ldexp(det_m, n as i32 * k)).abs() <= ldexp(bound, n as i32 * k), "{v:e}"),
                Err(Error::Overflow { .. }) => assert!(ln > 709.0, "overflow claimed for log|det| = {ln}"),
                Err(Error::Underflow { .. }) => assert!(ln < -708.0, "underflow claimed for log|det| = {ln}"),
                Err(e) => panic!("{e}"),
            }
        }
    }
}

#[test]
fn det_of_200_by_200_diagonal_matrices_beyond_the_range() {
    let n = 200;
    for (x, exponent) in [(1e10, 6643), (1e-10, -6644)] {
        let a: Vec<f64> = (0..n * n).map(|p| if p % (n + 1) == 0 { x } else { 0.0 }).collect();
        let m = upload::<f64>(&a, n, n);
        let d = m.determinant().unwrap();
        // 10^±2000 = 2^(±2000·log₂10), log₂10·2000 = 6643.856…
        assert_eq!(d.exponent, exponent, "{d}");
        let want = (n as f64 * x.ln()).abs();
        assert!((d.ln_abs().abs() - want).abs() <= 10.0 * n as f64 * u::<f64>() * want, "{}", d.ln_abs());
        assert_eq!(d.sign(), 1.0);
        let e = m.det().unwrap_err();
        assert!(matches!(e, Error::Overflow { .. } | Error::Underflow { .. }), "{e}");
    }
    // −I of odd order: the sign through the mantissa.
    let a: Vec<f64> = (0..9).map(|p| if p % 4 == 0 { -1e300 } else { 0.0 }).collect();
    let d = upload::<f64>(&a, 3, 3).determinant().unwrap();
    assert_eq!(d.sign(), -1.0);
}

#[test]
fn rref_ranks_of_scaled_matrices() {
    let (m, n, _) = matrices().pop().unwrap();
    for s in [1e308, 1e-308, 1e-320] {
        let a: Vec<f64> = m.iter().map(|v| v * s).collect();
        let r = upload::<f64>(&a, n, n).rref(None).unwrap();
        assert_eq!(r.rank, n, "s = {s:e}");
        assert_eq!(r.pivots, (0..n).collect::<Vec<_>>());
    }
    // Rank 3 of 6 × 5, at 2^1000 and 2^−1000 the same R bit for bit as the
    // matrix scaled into [0.5, 1) (a power of two commutes with rounding).
    let mut g = rng(8);
    let (x, y) = (random(&mut g, 6, 3), random(&mut g, 3, 5));
    let low = naive_matmul(&x, (6, 3), false, &y, (3, 5), false).0;
    let k = -gpumat::factor::equilibrate::exponent(max_abs(&low));
    let unit: Vec<f64> = low.iter().map(|&v| ldexp(v, k)).collect();
    let base = upload::<f64>(&unit, 6, 5).rref(None).unwrap();
    assert_eq!(base.rank, 3);
    for e in [1000, -1000] {
        let a: Vec<f64> = unit.iter().map(|&v| ldexp(v, e)).collect();
        let r = upload::<f64>(&a, 6, 5).rref(None).unwrap();
        assert_eq!((r.rank, &r.pivots), (base.rank, &base.pivots), "2^{e}");
        assert_eq!(host(&r.matrix), host(&base.matrix), "2^{e}");
        // A given tolerance scales with the matrix: 0.1·(2^e·A) is large.
        let t = upload::<f64>(&a, 6, 5).rref(Some(ldexp(0.9, e))).unwrap();
        assert_eq!(t.rank, upload::<f64>(&unit, 6, 5).rref(Some(0.9)).unwrap().rank);
    }
}

#[test]
fn rref_refuses_a_negative_or_nan_tolerance() {
    let a = upload::<f64>(&[1.0, 2.0, 3.0, 4.0], 2, 2);
    for t in [-1.0, f64::NAN, f64::NEG_INFINITY] {
        assert!(matches!(a.rref(Some(t)), Err(Error::InvalidArgument(_))), "tol {t}");
    }
    assert_eq!(a.rref(Some(0.0)).unwrap().rank, 2);
}

#[test]
fn solves_of_scaled_systems_and_solutions_beyond_the_range() {
    let (m, n, kappa) = matrices().pop().unwrap();
    let b = random(&mut rng(4), n, 2);
    let inv = inverse_of(&m, n);
    let x_m = naive_matmul(&inv, (n, n), false, &b, (n, 2), false).0;
    // Symmetric positive definite too: M + Mᵀ, for the Cholesky route.
    let spd: Vec<f64> = (0..n * n).map(|p| m[p] + m[(p / n) + (p % n) * n]).collect();
    let spd_inv = inverse_of(&spd, n);
    let x_spd = naive_matmul(&spd_inv, (n, n), false, &b, (n, 2), false).0;
    let kappa_spd = one_norm(&spd, n) * one_norm(&spd_inv, n);
    for (mat, x_ref, kappa, method) in [(&m, &x_m, kappa, Method::Lu), (&spd, &x_spd, kappa_spd, Method::Cholesky)] {
        for s in [1e300, 1e-300] {
            let a: Vec<f64> = mat.iter().map(|v| v * s).collect();
            let sol = upload::<f64>(&a, n, n).solve(&upload::<f64>(&b, n, 2)).unwrap();
            assert_eq!(sol.method, method);
            let want: Vec<f64> = x_ref.iter().map(|v| v / s).collect();
            let err = max_diff(&host(&sol.x), &want);
            let bound = 10.0 * n as f64 * u::<f64>() * kappa * max_abs(&want);
            assert!(err <= bound, "{method:?}, s={s:e}: {err:e} > {bound:e}");
            assert!(sol.rcond >= 1.0 / (3.0 * kappa) && sol.forward_error_bound < 1e-12, "{sol:?}");
        }
    }
    // X = A⁻¹B beyond the range: 1e-300·M with B of 1e10.
    let a: Vec<f64> = m.iter().map(|v| v * 1e-300).collect();
    let big: Vec<f64> = b.iter().map(|v| v * 1e10).collect();
    let e = upload::<f64>(&a, n, n).solve(&upload::<f64>(&big, n, 2)).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    // In range but singular to working precision, allowed: X overflows.
    let d = upload::<f64>(&[1e-300, 0.0, 0.0, 1.0], 2, 2);
    let rhs = upload::<f64>(&[1e10, 1.0], 2, 1);
    let allow = SolveOptions { allow_ill_conditioned: true, ..Default::default() };
    assert!(matches!(d.solve_with(&rhs, &allow), Err(Error::Overflow { .. })));
    assert!(matches!(d.lu().unwrap().solve(&rhs), Err(Error::Overflow { .. })));
    // An inverse beyond the range.
    let tiny = upload::<f64>(&[1e-320, 0.0, 0.0, 1.0], 2, 2);
    let f = tiny.lu().unwrap();
    assert!(matches!(f.solve(&device().identity(2).unwrap()), Err(Error::Overflow { .. })));
}
