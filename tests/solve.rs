//! `Matrix::solve` on the device under test: the route it picks, its
//! condition estimate against the true `1/κ₁` (faer's explicit inverse, or
//! exact rationals), X against an FP64 reference, and its typed refusals.
//! Bounds: backward error ≤ 10·n·u (Higham 2002, Thm 9.4 and 10.4, and
//! §11.1 for LDLᵀ, growth of a random matrix taken as ≤ 10); `rcond`
//! within a factor 10 of `1/κ₁` (the estimator is a lower bound on
//! `‖A⁻¹‖₁` nearly always within a factor 3, Higham 1988); the reported forward-error bound at least the
//! true forward error; X within `10·n·u·κ₁` of the reference.

mod common;

use common::*;
use faer::Mat;
use faer::linalg::solvers::{DenseSolveCore, Solve};
use gpumat::{Error, Matrix, Method, Scalar, Solution, SolveOptions, Sym, SymStorage};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{FromPrimitive, ToPrimitive, Zero};

fn upload<T: Scalar>(data: &[f64], rows: usize, cols: usize) -> Matrix<T> {
    let v: Vec<T> = data.iter().map(|&x| T::from_f64(x)).collect();
    device().from_col_major(rows, cols, &v).unwrap()
}

fn host<T: Scalar>(a: &Matrix<T>) -> Vec<f64> {
    a.to_host().unwrap().into_iter().map(Scalar::to_f64).collect()
}

/// `data` rounded to `T` and back: the matrix the solver is given.
fn rounded<T: Scalar>(data: &[f64]) -> Vec<f64> {
    data.iter().map(|&x| T::from_f64(x).to_f64()).collect()
}

fn faer_of(a: &[f64], rows: usize, cols: usize) -> Mat<f64> {
    Mat::from_fn(rows, cols, |i, j| a[i + j * rows])
}

/// The 1-norm of a column-major `rows × cols` array: the largest column sum.
fn one_norm(a: &[f64], rows: usize) -> f64 {
    a.chunks(rows.max(1)).map(|c| c.iter().map(|v| v.abs()).sum::<f64>()).fold(0.0, f64::max)
}

/// `κ₁(A) = ‖A‖₁·‖A⁻¹‖₁` from faer's FP64 inverse.
fn kappa_one(a: &[f64], n: usize) -> f64 {
    let inv = faer_of(a, n, n).partial_piv_lu().inverse();
    let inv: Vec<f64> = (0..n * n).map(|p| inv[(p % n, p / n)]).collect();
    one_norm(a, n) * one_norm(&inv, n)
}

/// faer's FP64 solution of `A·X = B`.
fn faer_solve(a: &[f64], n: usize, b: &[f64], k: usize) -> Vec<f64> {
    let x = faer_of(a, n, n).partial_piv_lu().solve(faer_of(b, n, k));
    (0..n * k).map(|p| x[(p % n, p / n)]).collect()
}

/// `‖X − Y‖₁ / ‖X‖₁`: the forward error of `X` against the reference `Y`,
/// relative to `X` as [`Solution::forward_error_bound`] is.
fn forward_error(x: &[f64], y: &[f64], n: usize) -> f64 {
    let d: Vec<f64> = x.iter().zip(y).map(|(p, q)| p - q).collect();
    one_norm(&d, n) / one_norm(x, n)
}

/// `‖A·X − B‖_F / (‖A‖_F·‖X‖_F + ‖B‖_F)` on the host.
fn backward_error(a: &[f64], n: usize, x: &[f64], b: &[f64], k: usize) -> f64 {
    let (ax, ..) = naive_matmul(a, (n, n), false, x, (n, k), false);
    let r: Vec<f64> = ax.iter().zip(b).map(|(p, q)| p - q).collect();
    frobenius(&r) / (frobenius(a) * frobenius(x) + frobenius(b))
}

/// `G·Gᵀ + n·I` for a random `G`: symmetric positive definite.
fn random_spd(seed: u64, n: usize) -> Vec<f64> {
    let g = random(&mut rng(seed), n, n);
    let (mut a, ..) = naive_matmul(&g, (n, n), false, &g, (n, n), true);
    (0..n).for_each(|i| a[i + i * n] += n as f64);
    symmetric_to_the_bit(a, n)
}

/// The lower triangle mirrored onto the upper one, so that `A` is exactly
/// symmetric.
fn symmetric_to_the_bit(a: Vec<f64>, n: usize) -> Vec<f64> {
    (0..n * n).map(|p| if p % n >= p / n { a[p] } else { a[p / n + (p % n) * n] }).collect()
}

/// The Hilbert matrix `hᵢⱼ = 1/(i + j − 1)` rounded to f64.
fn hilbert(n: usize) -> Vec<f64> {
    (0..n * n).map(|p| 1.0 / (p % n + p / n + 1) as f64).collect()
}

fn rational(x: f64) -> BigRational {
    BigRational::from_f64(x).expect("finite")
}

fn to_f64(v: &BigRational) -> f64 {
    v.to_f64().unwrap_or_else(|| {
        let shift = v.numer().bits().max(v.denom().bits()).saturating_sub(900);
        let (p, q): (BigInt, BigInt) = (v.numer() >> shift, v.denom() >> shift);
        p.to_f64().unwrap() / q.to_f64().unwrap()
    })
}

/// The exact solution of `A·X = B` for the f64 data as given, by Gaussian
/// elimination in rational arithmetic (so `A`'s conditioning is no matter),
/// rounded to f64 at the end.
fn exact_solve(a: &[f64], n: usize, b: &[f64], k: usize) -> Vec<f64> {
    let mut m: Vec<Vec<BigRational>> = (0..n)
        .map(|i| (0..n).map(|j| rational(a[i + j * n])).chain((0..k).map(|j| rational(b[i + j * n]))).collect())
        .collect();
    for c in 0..n {
        let pivot = (c..n).find(|&r| !m[r][c].is_zero()).expect("nonsingular");
        m.swap(c, pivot);
        for r in c + 1..n {
            if m[r][c].is_zero() {
                continue;
            }
            let f = &m[r][c] / &m[c][c];
            let (top, bottom) = m.split_at_mut(r);
            for (x, p) in bottom[0][c..].iter_mut().zip(&top[c][c..]) {
                *x -= &f * p;
            }
        }
    }
    let mut x = vec![vec![BigRational::zero(); k]; n];
    for c in (0..n).rev() {
        for j in 0..k {
            let mut s = m[c][n + j].clone();
            for p in c + 1..n {
                s -= &m[c][p] * &x[p][j];
            }
            x[c][j] = s / &m[c][c];
        }
    }
    (0..n * k).map(|p| to_f64(&x[p % n][p / n])).collect()
}

/// `κ₁(A)` exactly (to the last rounding) for the f64 data as given.
fn exact_kappa_one(a: &[f64], n: usize) -> f64 {
    let identity: Vec<f64> = (0..n * n).map(|p| f64::from(u8::from(p % n == p / n))).collect();
    one_norm(a, n) * one_norm(&exact_solve(a, n, &identity, n), n)
}

fn options(method: Method, storage: SymStorage) -> SolveOptions {
    SolveOptions { method, storage, ..Default::default() }
}

/// Solves in `T`, checks the route taken, the backward error against the
/// host's, `rcond` against `1/kappa` and X against `reference` within
/// `10·n·u·κ₁` and within the reported forward-error bound (less the
/// reference's own error `n·u₆₄·κ₁`); returns the solution.
#[allow(clippy::too_many_arguments)]
fn check<T: Scalar>(
    a: &[f64],
    n: usize,
    b: &[f64],
    k: usize,
    opts: SolveOptions,
    route: (Method, SymStorage),
    kappa: f64,
    reference: &[f64],
) -> Solution<T> {
    let what = format!("{} {opts:?}", T::NAME);
    let s = upload::<T>(a, n, n).solve_with(&upload::<T>(b, n, k), &opts).unwrap();
    assert_eq!((s.method, s.storage), route, "{what}");
    let x = host(&s.x);
    let (at, bt) = (rounded::<T>(a), rounded::<T>(b));
    let bound = 10.0 * n as f64 * u::<T>();
    let berr = backward_error(&at, n, &x, &bt, k);
    assert!(s.backward_error <= bound, "{what}: backward error {:e} > {bound:e}", s.backward_error);
    // In f32 the f64 residual is exact to many digits; in f64 it is mostly
    // rounding, and only its size can be compared.
    let agreement = if T::NAME == "f32" { 1e-6 * berr } else { bound };
    assert!((s.backward_error - berr).abs() <= agreement, "{what}: {:e} against the host's {berr:e}", s.backward_error);
    let ratio = s.rcond * kappa;
    assert!((0.1..=10.0).contains(&ratio), "{what}: rcond {:e} against 1/κ₁ = {:e}", s.rcond, 1.0 / kappa);
    let err = forward_error(&x, reference, n);
    let tol = 10.0 * n as f64 * u::<T>() * kappa;
    assert!(err <= tol, "{what}: forward error {err:e} > {tol:e}");
    // The reference has its own error; the bound, from solves in `T`, is
    // good to a relative `10·n·u` of `T` (it is sharp for n = 1).
    let reference_error = n as f64 * u::<f64>() * kappa;
    assert!(
        err - reference_error <= s.forward_error_bound * (1.0 + 10.0 * n as f64 * u::<T>()),
        "{what}: forward error {err:e} beyond the bound {:e}",
        s.forward_error_bound
    );
    s
}

#[test]
fn hilbert_12_by_cholesky_is_singular_to_working_precision_and_says_so() {
    // κ₁(H₁₂) ≈ 4.1e16 > 1/u: the condition estimate must say so, where
    // the Cholesky route used to report a tiny backward error alone.
    let n = 12;
    let a = hilbert(n);
    let (ax, ..) = naive_matmul(&a, (n, n), false, &vec![1.0; n], (n, 1), false);
    let mut b = ax;
    b.extend((0..n).map(|i| f64::from(u8::from(i == 0))));
    let kappa = exact_kappa_one(&a, n);
    assert!((1e16..1e17).contains(&kappa), "κ₁ of the rounded H₁₂ is {kappa:e}");
    let exact = exact_solve(&a, n, &b, 2);
    let (da, db) = (upload::<f64>(&a, n, n), upload::<f64>(&b, n, 2));
    match da.solve(&db) {
        Err(Error::IllConditioned { rcond, unit_roundoff, precision }) => {
            assert!(rcond < unit_roundoff && rcond * kappa >= 0.1, "rcond {rcond:e}, 1/κ₁ {:e}", 1.0 / kappa);
            assert_eq!((unit_roundoff, precision), (u::<f64>(), "f64"));
        }
        other => panic!("expected IllConditioned, got {other:?}"),
    }
    for (method, storage) in
        [(Method::Auto, SymStorage::Full), (Method::Cholesky, SymStorage::Rfp), (Method::Lu, SymStorage::Full)]
    {
        let opts = SolveOptions { method, storage, allow_ill_conditioned: true, ..Default::default() };
        let s = da.solve_with(&db, &opts).unwrap();
        let want = if method == Method::Lu { Method::Lu } else { Method::Cholesky };
        assert_eq!((s.method, s.storage), (want, storage));
        // The estimate: 1e-17 ≤ rcond < u, within a factor 10 of 1/κ₁.
        assert!((0.1..=10.0).contains(&(s.rcond * kappa)), "{opts:?}: rcond {:e}, 1/κ₁ {:e}", s.rcond, 1.0 / kappa);
        let x = host(&s.x);
        let bound = 10.0 * n as f64 * u::<f64>();
        assert!(s.backward_error <= bound, "{opts:?}: backward error {:e}", s.backward_error);
        // Against the exact rational solution: the bound holds, and the
        // computed X is indeed far off (no digit assured).
        let err = forward_error(&x, &exact, n);
        assert!(err <= s.forward_error_bound, "{opts:?}: forward error {err:e} > bound {:e}", s.forward_error_bound);
        assert!(s.forward_error_bound >= 1e-3, "{opts:?}: bound {:e}", s.forward_error_bound);
        eprintln!(
            "H12 {method:?} {storage:?}: rcond {:.2e} (1/κ₁ {:.2e}), backward {:.2e}, forward {err:.2e} ≤ {:.2e}",
            s.rcond,
            1.0 / kappa,
            s.backward_error,
            s.forward_error_bound
        );
    }
}

#[test]
fn hilbert_8_is_accepted_with_an_honest_bound() {
    // κ₁(H₈) ≈ 3.4e10: between 1/√u and 1/u, so answered, with a bound
    // near κ·u that the exact solution confirms.
    let n = 8;
    let a = hilbert(n);
    let b: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
    let kappa = exact_kappa_one(&a, n);
    let exact = exact_solve(&a, n, &b, 1);
    let s = check::<f64>(&a, n, &b, 1, SolveOptions::default(), (Method::Cholesky, SymStorage::Full), kappa, &exact);
    assert!(s.rcond < u::<f64>().sqrt() && s.rcond > u::<f64>(), "rcond {:e}", s.rcond);
    let err = forward_error(&host(&s.x), &exact, n);
    assert!(err <= s.forward_error_bound && s.forward_error_bound <= 1e-3, "{err:e} ≤ {:e}", s.forward_error_bound);
}

#[test]
fn spd_by_cholesky_in_both_storages_and_precisions() {
    for n in [1, 7, 64, 131] {
        let a = random_spd(n as u64, n);
        let b = random(&mut rng(n as u64 + 1), n, 3);
        for packed in [false, true] {
            let storage = if packed { SymStorage::Rfp } else { SymStorage::Full };
            let route = (Method::Cholesky, storage);
            let kappa = kappa_one(&a, n);
            let reference = faer_solve(&a, n, &b, 3);
            check::<f64>(&a, n, &b, 3, options(Method::Auto, storage), route, kappa, &reference);
            check::<f64>(&a, n, &b, 3, options(Method::Cholesky, storage), route, kappa, &reference);
            // f32: against faer on the f32-rounded data.
            let (a32, b32) = (rounded::<f32>(&a), rounded::<f32>(&b));
            let kappa = kappa_one(&a32, n);
            check::<f32>(&a, n, &b, 3, options(Method::Auto, storage), route, kappa, &faer_solve(&a32, n, &b32, 3));
        }
    }
}

#[test]
fn cholesky_rcond_and_the_symmetric_norm_agree_across_storages() {
    let n = 37;
    let a = random_spd(5, n);
    let kappa = kappa_one(&a, n);
    for packed in [false, true] {
        let mut s = Sym::from_lower(upload::<f64>(&a, n, n)).unwrap();
        if packed {
            s = s.to_rfp().unwrap();
        }
        let norm = s.one_norm().unwrap();
        assert!(
            (norm - one_norm(&a, n)).abs() <= 1e-14 * norm,
            "packed {packed}: ‖A‖₁ {norm} against {}",
            one_norm(&a, n)
        );
        let rcond = s.cholesky().unwrap().rcond(norm).unwrap();
        assert!((0.1..=10.0).contains(&(rcond * kappa)), "packed {packed}: rcond {rcond:e}, 1/κ₁ {:e}", 1.0 / kappa);
    }
}

#[test]
fn nonsymmetric_by_lu() {
    for n in [2, 33, 100] {
        let a = random(&mut rng(100 + n as u64), n, n);
        let b = random(&mut rng(200 + n as u64), n, 2);
        let kappa = kappa_one(&a, n);
        let route = (Method::Lu, SymStorage::Full);
        let reference = faer_solve(&a, n, &b, 2);
        check::<f64>(&a, n, &b, 2, SolveOptions::default(), route, kappa, &reference);
        check::<f64>(&a, n, &b, 2, options(Method::Lu, SymStorage::Full), route, kappa, &reference);
        // Auto with RFP asked for: the LU it falls to is in full storage.
        check::<f64>(&a, n, &b, 2, options(Method::Auto, SymStorage::Rfp), route, kappa, &reference);
        let (a32, b32) = (rounded::<f32>(&a), rounded::<f32>(&b));
        let kappa = kappa_one(&a32, n);
        check::<f32>(&a, n, &b, 2, SolveOptions::default(), route, kappa, &faer_solve(&a32, n, &b32, 2));
    }
}

#[test]
fn symmetric_indefinite_falls_back_to_pivoted_ldlt() {
    let n = 40;
    let g = random(&mut rng(9), n, n);
    let a = symmetric_to_the_bit((0..n * n).map(|p| g[p] + g[p / n + (p % n) * n]).collect(), n);
    let b = random(&mut rng(10), n, 1);
    let kappa = kappa_one(&a, n);
    let reference = faer_solve(&a, n, &b, 1);
    for storage in [SymStorage::Full, SymStorage::Rfp] {
        let route = (Method::Ldlt { pivoted: true }, storage);
        let s = check::<f64>(&a, n, &b, 1, options(Method::Auto, storage), route, kappa, &reference);
        let e = upload::<f64>(&a, n, n).solve_with(&upload::<f64>(&b, n, 1), &options(Method::Cholesky, storage));
        assert!(matches!(e, Err(Error::NotPositiveDefinite { .. })), "{e:?}");
        // The solution names Cholesky's failure, column and all.
        let (Some(Error::NotPositiveDefinite { column }), Err(Error::NotPositiveDefinite { column: want })) =
            (&s.fallback, &e)
        else {
            panic!("fallback {:?}", s.fallback)
        };
        assert_eq!(column, want);
    }
}

#[test]
fn singular_3x3_is_refused_unless_allowed() {
    // [1 2 3; 4 5 6; 7 8 9]: singular, but LU's last pivot is a rounding
    // error (6.7e-16), not zero.
    let a = [1.0, 4.0, 7.0, 2.0, 5.0, 8.0, 3.0, 6.0, 9.0];
    let b = [1.0, 2.0, 3.0];
    let (da, db) = (upload::<f64>(&a, 3, 3), upload::<f64>(&b, 3, 1));
    match da.solve(&db) {
        Err(e @ Error::IllConditioned { rcond, unit_roundoff, .. }) => {
            assert!(rcond < unit_roundoff, "{rcond:e}");
            assert!(e.to_string().contains("singular to working precision"), "{e}");
        }
        other => panic!("expected IllConditioned, got {other:?}"),
    }
    assert!(matches!(da.inverse(), Err(Error::IllConditioned { .. })));
    let s = da.solve_with(&db, &SolveOptions { allow_ill_conditioned: true, ..Default::default() }).unwrap();
    assert_eq!(s.method, Method::Lu);
    assert!(s.rcond < u::<f64>(), "rcond {:e}", s.rcond);
    assert!(s.forward_error_bound >= 1.0, "no digit is assured: bound {:e}", s.forward_error_bound);
    assert!(s.backward_error <= 10.0 * 3.0 * u::<f64>(), "backward error {:e}", s.backward_error);
    // Exactly singular (a zero pivot) cannot be solved even when allowed.
    let z = [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 4.0, 5.0, 7.0];
    let e =
        upload::<f64>(&z, 3, 3).solve_with(&db, &SolveOptions { allow_ill_conditioned: true, ..Default::default() });
    assert!(matches!(e, Err(Error::Singular { pivot: 2 })), "{e:?}");
}

#[test]
fn cholesky_on_a_nonsymmetric_matrix_names_the_first_asymmetric_pair() {
    let n = 6;
    let mut a = random_spd(3, n);
    // A(2, 4) (1-based) changed: the pair is (4, 2), row below the diagonal;
    // a later pair in column order, (6, 5), changed too.
    a[1 + 3 * n] += 1e-12;
    a[5 + 4 * n] *= 2.0;
    let b = random(&mut rng(4), n, 1);
    for storage in [SymStorage::Full, SymStorage::Rfp] {
        let e = upload::<f64>(&a, n, n).solve_with(&upload::<f64>(&b, n, 1), &options(Method::Cholesky, storage));
        assert!(matches!(e, Err(Error::NotSymmetric { row: 4, col: 2 })), "{e:?}");
    }
    // Auto reads the same asymmetry as a reason for LU.
    let s = upload::<f64>(&a, n, n).solve(&upload::<f64>(&b, n, 1)).unwrap();
    assert_eq!(s.method, Method::Lu);
}

#[test]
fn shapes_and_arguments_are_refused() {
    let dims = |r: Result<Solution<f64>, Error>| matches!(r, Err(Error::DimensionMismatch { .. }));
    let a = random(&mut rng(1), 4, 4);
    let da = upload::<f64>(&a, 4, 4);
    assert!(dims(upload::<f64>(&a[..12], 3, 4).solve(&upload::<f64>(&[1.0; 3], 3, 1))), "non-square A");
    assert!(dims(da.solve(&upload::<f64>(&[1.0; 3], 3, 1))), "B with 3 rows for a 4 × 4 A");
    let e = da.solve_with(&upload::<f64>(&[1.0; 4], 4, 1), &options(Method::Lu, SymStorage::Rfp));
    assert!(matches!(e, Err(Error::InvalidArgument(ref m)) if m.contains("LU needs full storage")), "{e:?}");
    let e = da.solve(&upload::<f64>(&[1.0, f64::NAN, 1.0, 1.0], 4, 1));
    assert!(matches!(e, Err(Error::NonFinite { ref what, row: 2, col: 1, .. }) if what == "B"), "{e:?}");
}

/// `G + Gᵀ` for a random `G`: symmetric and indefinite (for `n > 1`, with
/// probability 1).
fn random_symmetric_indefinite(stream: u64, n: usize) -> Vec<f64> {
    let g = random(&mut rng(stream), n, n);
    symmetric_to_the_bit((0..n * n).map(|p| g[p] + g[p / n + (p % n) * n]).collect(), n)
}

/// `[[H, Bᵀ], [B, −G]]` with `H` (`p × p`) and `G` (`q × q`) symmetric
/// positive definite and `B` random: quasi-definite, so unpivoted LDLᵀ
/// applies (Vanderbei 1995), though `A` is indefinite.
fn quasi_definite(stream: u64, p: usize, q: usize) -> Vec<f64> {
    let n = p + q;
    let (h, g, b) = (random_spd(stream, p), random_spd(stream + 1, q), random(&mut rng(stream + 2), q, p));
    let mut a = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..n {
            a[i + j * n] = match (i < p, j < p) {
                (true, true) => h[i + j * p],
                (false, false) => -g[(i - p) + (j - p) * q],
                (false, true) => b[(i - p) + j * q],
                (true, false) => b[(j - p) + i * q],
            };
        }
    }
    a
}

#[test]
fn ldlt_in_both_storages_and_precisions_pivoted_or_not() {
    // The bounds of `check`: backward error ≤ 10·n·u (Higham 2002, §11.1
    // for Bunch–Kaufman, growth of a random matrix taken as ≤ 10),
    // rcond within a factor 10 of 1/κ₁, X within 10·n·u·κ₁ of faer's.
    for n in [1, 7, 64, 131] {
        let a = random_symmetric_indefinite(300 + n as u64, n);
        let b = random(&mut rng(400 + n as u64), n, 3);
        let kappa = kappa_one(&a, n);
        let reference = faer_solve(&a, n, &b, 3);
        let (a32, b32) = (rounded::<f32>(&a), rounded::<f32>(&b));
        let (kappa32, reference32) = (kappa_one(&a32, n), faer_solve(&a32, n, &b32, 3));
        for storage in [SymStorage::Full, SymStorage::Rfp] {
            let method = Method::Ldlt { pivoted: true };
            let s = check::<f64>(&a, n, &b, 3, options(method, storage), (method, storage), kappa, &reference);
            assert!(s.fallback.is_none(), "{:?}", s.fallback);
            check::<f32>(&a, n, &b, 3, options(method, storage), (method, storage), kappa32, &reference32);
        }
    }
    // Unpivoted on quasi-definite matrices: the same bounds (Gill, Saunders
    // and Shinnerl 1996 bound its growth by the conditioning of H, G and B,
    // all modest here).
    for (p, q) in [(1, 1), (5, 3), (40, 24), (70, 61)] {
        let n = p + q;
        let a = quasi_definite(500 + n as u64, p, q);
        let b = random(&mut rng(600 + n as u64), n, 2);
        let kappa = kappa_one(&a, n);
        let reference = faer_solve(&a, n, &b, 2);
        for storage in [SymStorage::Full, SymStorage::Rfp] {
            let method = Method::Ldlt { pivoted: false };
            check::<f64>(&a, n, &b, 2, options(method, storage), (method, storage), kappa, &reference);
        }
    }
}

#[test]
fn auto_keeps_cholesky_for_positive_definite_and_says_nothing() {
    let n = 30;
    let (a, b) = (random_spd(7, n), random(&mut rng(8), n, 1));
    for storage in [SymStorage::Full, SymStorage::Rfp] {
        let s = upload::<f64>(&a, n, n).solve_with(&upload::<f64>(&b, n, 1), &options(Method::Auto, storage)).unwrap();
        assert_eq!((s.method, s.storage), (Method::Cholesky, storage));
        assert!(s.fallback.is_none(), "{:?}", s.fallback);
    }
    // A non-symmetric A: LU, which is not a fallback either.
    let g = random(&mut rng(11), n, n);
    let s = upload::<f64>(&g, n, n).solve(&upload::<f64>(&b, n, 1)).unwrap();
    assert_eq!((s.method, s.fallback.is_none()), (Method::Lu, true));
}

#[test]
fn ldlt_refusals_are_typed() {
    let b2 = upload::<f64>(&[3.0, 5.0], 2, 1);
    let pivoted = |p| options(Method::Ldlt { pivoted: p }, SymStorage::Full);
    // [[0, 1], [1, 0]]: no 1×1 pivot without interchanges, and a 2×2 pivot
    // with Bunch–Kaufman, which solves exactly: x = (5, 3).
    let swap = upload::<f64>(&[0.0, 1.0, 1.0, 0.0], 2, 2);
    for storage in [SymStorage::Full, SymStorage::Rfp] {
        let unpivoted = options(Method::Ldlt { pivoted: false }, storage);
        let e = swap.solve_with(&b2, &unpivoted);
        assert!(matches!(e, Err(Error::ZeroPivot { column: 1 })), "{storage:?}: {e:?}");
        let s = swap.solve_with(&b2, &options(Method::Ldlt { pivoted: true }, storage)).unwrap();
        assert_eq!(host(&s.x), [5.0, 3.0], "{storage:?}");
        assert_eq!((s.backward_error, s.forward_error_bound), (0.0, 0.0), "an exact X has no error");
    }
    // [[1, 1], [1, 1]]: singular, D's second pivot exactly 0; refused even
    // when allowed, as LU's exactly zero pivot is, on the auto route too.
    let ones = upload::<f64>(&[1.0; 4], 2, 2);
    for opts in [pivoted(true), SolveOptions { allow_ill_conditioned: true, ..pivoted(true) }, SolveOptions::default()]
    {
        let e = ones.solve_with(&b2, &opts);
        assert!(matches!(e, Err(Error::Singular { pivot: 2 })), "{opts:?}: {e:?}");
    }
    // Not exactly symmetric: the first pair, in both storages, as Cholesky.
    let n = 6;
    let mut a = random_symmetric_indefinite(12, n);
    a[1 + 3 * n] += 1e-12;
    let b = upload::<f64>(&random(&mut rng(13), n, 1), n, 1);
    for storage in [SymStorage::Full, SymStorage::Rfp] {
        for p in [true, false] {
            let e = upload::<f64>(&a, n, n).solve_with(&b, &options(Method::Ldlt { pivoted: p }, storage));
            assert!(matches!(e, Err(Error::NotSymmetric { row: 4, col: 2 })), "{e:?}");
        }
    }
}

#[test]
fn equilibrated_indefinite_systems_take_ldlt_with_symmetric_scaling() {
    // A symmetric matrix with a zero diagonal (so the symmetric scaling
    // comes from row maxima, not from the diagonal), every row's largest
    // entry in [0.5, 1), scaled by 2^±900, beyond [√ω, √Ω]: Auto falls back
    // from Cholesky to pivoted LDLᵀ on the equilibrated matrix, and X comes
    // back unscaled exactly. The scaling is then one power of two for every
    // row, so the equilibrated matrix is 2^k·A and its κ₁ is A's. Bounds:
    // X within 10·n·u·κ₁ of faer's solution of the unscaled system, times
    // 2^∓900 (exact); backward error ≤ 10·n·u; rcond within a factor 10 of
    // 1/κ₁.
    let n = 28;
    let mut a: Vec<f64> = random_symmetric_indefinite(700, n).into_iter().map(|v| v / 2.0).collect();
    (0..n).for_each(|i| a[i + i * n] = 0.0);
    for i in 0..n {
        let row_max = (0..n).map(|j| a[i + j * n].abs()).fold(0.0, f64::max);
        assert!((0.5..1.0).contains(&row_max), "row {i}: largest entry {row_max}");
    }
    let b = random(&mut rng(701), n, 2);
    let kappa = kappa_one(&a, n);
    let reference = faer_solve(&a, n, &b, 2);
    for k in [900, -900] {
        let scale = 2f64.powi(k);
        let big: Vec<f64> = a.iter().map(|v| v * scale).collect();
        let want: Vec<f64> = reference.iter().map(|v| v / scale).collect();
        for storage in [SymStorage::Full, SymStorage::Rfp] {
            for method in [Method::Auto, Method::Ldlt { pivoted: true }] {
                let what = format!("scale 2^{k}, {method:?}, {storage:?}");
                let s = upload::<f64>(&big, n, n).solve_with(&upload::<f64>(&b, n, 2), &options(method, storage));
                let s = s.unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!((s.method, s.storage), (Method::Ldlt { pivoted: true }, storage), "{what}");
                assert_eq!(s.fallback.is_some(), method == Method::Auto, "{what}");
                let err = forward_error(&host(&s.x), &want, n);
                let tol = 10.0 * n as f64 * u::<f64>() * kappa;
                assert!(err <= tol, "{what}: forward error {err:e} > {tol:e}");
                // Less the reference's own error n·u·κ₁, as in `check`.
                let beyond = err - n as f64 * u::<f64>() * kappa;
                assert!(
                    beyond <= s.forward_error_bound,
                    "{what}: {err:e} beyond the bound {:e}",
                    s.forward_error_bound
                );
                assert!(s.backward_error <= 10.0 * n as f64 * u::<f64>(), "{what}: {:e}", s.backward_error);
                assert!(
                    (0.1..=10.0).contains(&(s.rcond * kappa)),
                    "{what}: rcond {:e}, 1/κ₁ {:e}",
                    s.rcond,
                    1.0 / kappa
                );
            }
        }
    }
}
