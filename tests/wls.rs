//! Mixed-precision weighted least squares (`gpumat::wls`) on the device
//! under test: Jung and O'Leary's (2008) Tables 1 and 2 at small sizes against an
//! independent FP64 solve (faer), the FP64 fallback, the stable QR route for
//! ill-conditioned polynomial fits (against an exact rational reference),
//! and bad input.

mod common;

use common::*;
use faer::Mat;
use faer::linalg::solvers::DenseSolveCore;
use faer::prelude::{Solve, SolveLstsq};
use gpumat::{Error, Matrix, Precision, WlsParams, WlsPath, wls, wls_rows, wls_with};
use num_rational::BigRational;
use num_traits::{FromPrimitive, ToPrimitive, Zero};
use rand::Rng;

fn upload(data: &[f64], rows: usize, cols: usize) -> Matrix<f64> {
    device().from_col_major(rows, cols, data).unwrap()
}

fn host(x: &Matrix<f64>) -> Vec<f64> {
    x.to_host().unwrap()
}

/// Jung and O'Leary's generator: `A` (`m × 2m`), `D²` and `b` uniform in [0, 1];
/// for Table 2, `D²ᵢᵢ = 10^(−4+8i/(n−1))`. Returns `A`, `d = √D²`, `b`.
fn seed_problem(seed: u64, m: usize, ill: bool) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let n = 2 * m;
    let mut r = rng(seed);
    let a: Vec<f64> = (0..m * n).map(|_| r.random_range(0.0..1.0)).collect();
    let d2: Vec<f64> = (0..n)
        .map(|i| if ill { 10f64.powf(-4.0 + 8.0 * i as f64 / (n - 1) as f64) } else { r.random_range(0.0..1.0) })
        .collect();
    let b: Vec<f64> = (0..n).map(|_| r.random_range(0.0..1.0)).collect();
    (a, d2.iter().map(|v| v.sqrt()).collect(), b)
}

/// The FP64 normal-equations solution by faer (as their `x_CPU`):
/// `G = A·D²·Aᵀ`, Cholesky, solve; also `‖G‖₁·‖G⁻¹‖₁`.
fn faer_normal_equations(a: &[f64], m: usize, n: usize, d: &[f64], b: &[f64]) -> (Vec<f64>, f64) {
    let fa = Mat::from_fn(m, n, |i, k| a[i + k * m]);
    let ad2 = Mat::from_fn(m, n, |i, k| a[i + k * m] * d[k] * d[k]);
    let g = &ad2 * fa.transpose();
    let c = &ad2 * Mat::from_fn(n, 1, |k, _| b[k]);
    let llt = g.llt(faer::Side::Lower).expect("G is SPD in FP64");
    let x = llt.solve(&c);
    let inv = llt.inverse();
    let norm1 = |h: &Mat<f64>| (0..m).map(|j| (0..m).map(|i| h[(i, j)].abs()).sum::<f64>()).fold(0.0, f64::max);
    ((0..m).map(|i| x[(i, 0)]).collect(), norm1(&g) * norm1(&inv))
}

/// One row of Table 1 or 2: refined error against faer within `bound` and
/// within `κ₁(G)·u₆₄`, the first f32 solve at least 1000 times worse.
///
/// Why `κ·u`: faer's FP64 solution is itself only that close to the exact
/// one (Cholesky's backward error, and forming `G` in another summation
/// order, are both `O(u‖G‖)`), so no method can agree with it better; the
/// paper's refined errors (1e−10 at `κ ≈ 1e7`) are at that level too.
fn table_row(m: usize, ill: bool, bound: f64) {
    let n = 2 * m;
    let (a, d, b) = seed_problem(100 + m as u64, m, ill);
    let (reference, kappa) = faer_normal_equations(&a, m, n, &d, &b);
    let sol = wls(&upload(&a, m, n), &upload(&b, n, 1), Some(&upload(&d, n, 1))).unwrap();
    let refined = rel_error(&host(&sol.x), &reference);
    let first = rel_error(&host(sol.first_solve.as_ref().unwrap()), &reference);
    eprintln!(
        "m = {m} ill = {ill}: κ₁(G) = {kappa:.2e} (estimate {:.2e}), x₀ error {first:.2e}, refined {refined:.2e}, {} iterations, η = {:.2e}",
        sol.condition, sol.iterations, sol.relative_residual
    );
    assert_eq!(sol.path, WlsPath::Refined, "m = {m}");
    let bound = bound.min(kappa * f64::EPSILON / 2.0);
    assert!(refined <= bound, "m = {m}: refined error {refined:e} > {bound:e} (κ = {kappa:e})");
    // The f32 solve alone is at the level κ·u₃₂: refinement must do the rest.
    assert!(first >= 1e3 * refined.max(1e-16) && first > 1e-8, "m = {m}: x₀ error {first:e}, refined {refined:e}");
    assert!(sol.iterations >= 1);
    // The backward error the stopping test promises: ‖r‖∞ ≤ √m·ε·‖G‖∞‖x‖∞.
    assert!(sol.relative_residual <= (m as f64).sqrt() * f64::EPSILON, "η = {:e}", sol.relative_residual);
    // The 1-norm estimate is a lower bound for the matrix it sees, rarely
    // low by more than 3; it sees the f32-rounded G, whose inverse differs
    // from G⁻¹ by about κ·u₃₂ relative: a factor 10 either way.
    assert!(sol.condition <= kappa * 10.0 && sol.condition >= kappa / 10.0, "κ {kappa:e} vs {:e}", sol.condition);
}

#[test]
fn table_1_well_conditioned() {
    for m in [32, 64, 128, 256] {
        table_row(m, false, 1e-12);
    }
}

#[test]
fn table_2_ill_conditioned_weights() {
    for m in [32, 64, 128, 256] {
        table_row(m, true, 1e-8);
    }
}

/// A design whose `G` is positive definite in FP64 (`κ ≈ 1e8`) but exactly
/// singular once rounded to f32: rows 0 and 1 are `1` and `1 ± ε`
/// (alternating, `ε = 15·2⁻¹⁶`, all sums exact in FP64), so `G₀₀ = G₀₁ = n`
/// and `G₁₁ = n(1 + ε²)` with `ε² < 2⁻²⁴`, which rounds to `n` in f32; with
/// `n = 64`, `√n` is exact and the second pivot is exactly 0 with correctly
/// rounded square roots. The other rows are random.
fn singular_in_f32(m: usize) -> (Vec<f64>, Vec<f64>) {
    let n = 64;
    let eps = 15.0 * 2f64.powi(-16);
    let mut r = rng(11);
    let mut a: Vec<f64> = (0..m * n).map(|_| r.random_range(0.0..1.0)).collect();
    for k in 0..n {
        a[k * m] = 1.0;
        a[1 + k * m] = 1.0 + if k % 2 == 0 { eps } else { -eps };
    }
    let b: Vec<f64> = (0..n).map(|_| r.random_range(0.0..1.0)).collect();
    (a, b)
}

#[test]
fn beyond_single_precision_falls_back_to_fp64() {
    let m = 20;
    let (a, b) = singular_in_f32(m);
    let n = b.len();
    let ones = vec![1.0; n];
    let (reference, kappa) = faer_normal_equations(&a, m, n, &ones, &b);
    assert!((1e8..1e9).contains(&kappa), "κ = {kappa:e}");
    let sol = wls(&upload(&a, m, n), &upload(&b, n, 1), None).unwrap();
    let err = rel_error(&host(&sol.x), &reference);
    eprintln!("breakdown: κ = {kappa:.2e} ({:.2e}), path {}, error {err:.2e}", sol.condition, sol.path);
    let WlsPath::Fp64 { reason } = &sol.path else { panic!("path {:?}", sol.path) };
    // Exactly 0 in IEEE arithmetic; a GPU kernel using an approximate
    // reciprocal square root may leave a tiny positive pivot instead, and
    // then refinement with that factor fails: a fallback either way.
    assert!(reason.contains("f32 Cholesky broke down at column 2") || reason.contains("refinement"), "{reason}");
    if device().is_cpu() {
        assert!(reason.contains("f32 Cholesky broke down at column 2"), "{reason}");
    }
    assert!(err <= kappa * f64::EPSILON, "error {err:e} > κ·ε = {:e}", kappa * f64::EPSILON);
    assert!(sol.relative_residual <= (m as f64).sqrt() * f64::EPSILON);
    assert!(sol.condition >= kappa / 10.0);

    // Refinement that runs out of iterations is never reported as
    // converged: with no step allowed on a Table 2 problem, the FP64 path
    // takes over and says why.
    let m = 64;
    let (a, d, b) = seed_problem(164, m, true);
    let (reference, kappa) = faer_normal_equations(&a, m, 2 * m, &d, &b);
    let params = WlsParams { max_iterations: 0, ..Default::default() };
    let sol = wls_with(&upload(&a, m, 2 * m), &upload(&b, 2 * m, 1), Some(&upload(&d, 2 * m, 1)), params).unwrap();
    let WlsPath::Fp64 { reason } = &sol.path else { panic!("path {:?}", sol.path) };
    assert!(reason.contains("did not converge in 0 iterations"), "{reason}");
    assert!(rel_error(&host(&sol.x), &reference) <= kappa * f64::EPSILON);
}

#[test]
fn fp64_on_request_and_qr_beyond_the_condition_limit() {
    let (m, n) = (48, 96);
    let (a, d, b) = seed_problem(3, m, false);
    let (reference, kappa) = faer_normal_equations(&a, m, n, &d, &b);
    let (da, db, dd) = (upload(&a, m, n), upload(&b, n, 1), upload(&d, n, 1));
    let fp64 = wls_with(&da, &db, Some(&dd), WlsParams { precision: Precision::F64, ..Default::default() }).unwrap();
    assert!(matches!(fp64.path, WlsPath::Fp64 { .. }));
    assert!(rel_error(&host(&fp64.x), &reference) <= kappa * f64::EPSILON);
    // A condition limit below κ(G) sends the same problem to QR, which
    // agrees with faer's QR of D·Aᵀ.
    let qr = wls_with(&da, &db, Some(&dd), WlsParams { max_condition: 10.0, ..Default::default() }).unwrap();
    let WlsPath::StableQr { reason } = &qr.path else { panic!("path {:?}", qr.path) };
    assert!(reason.contains("condition estimate"), "{reason}");
    assert!(qr.first_solve.is_none());
    let dat = Mat::from_fn(n, m, |k, i| d[k] * a[i + k * m]);
    let faer_qr = dat.qr().solve_lstsq(Mat::from_fn(n, 1, |k, _| d[k] * b[k]));
    let faer_x: Vec<f64> = (0..m).map(|i| faer_qr[(i, 0)]).collect();
    let bound = kappa.sqrt() * 1e3 * f64::EPSILON;
    assert!(rel_error(&host(&qr.x), &faer_x) <= bound, "QR route vs faer QR > {bound:e}");
}

/// The monomial design `[1, x, …, x^deg]`, one row per point, column-major.
fn vandermonde(x: &[f64], deg: usize) -> Vec<f64> {
    (0..=deg).flat_map(|k| x.iter().map(move |&t| t.powi(k as i32))).collect()
}

/// The exact minimizer of ‖diag(w)(b − A·x)‖ for the f64 data as given
/// (`A` is `n × p`, rows = observations): the normal equations in rational
/// arithmetic, by Gaussian elimination, so their conditioning is no matter.
fn exact_lstsq(a: &[f64], n: usize, p: usize, b: &[f64], w: &[f64]) -> Vec<f64> {
    let q = |x: f64| BigRational::from_f64(x).expect("finite");
    let ar: Vec<BigRational> = a.iter().map(|&v| q(v)).collect();
    let w2: Vec<BigRational> = w.iter().map(|&v| q(v) * q(v)).collect();
    let mut g = vec![vec![BigRational::zero(); p + 1]; p];
    for i in 0..p {
        let wa: Vec<BigRational> = (0..n).map(|k| &w2[k] * &ar[k + i * n]).collect();
        for j in 0..p {
            g[i][j] = (0..n).fold(BigRational::zero(), |s, k| s + &wa[k] * &ar[k + j * n]);
        }
        g[i][p] = (0..n).fold(BigRational::zero(), |s, k| s + &wa[k] * q(b[k]));
    }
    for c in 0..p {
        let piv = (c..p).find(|&r| !g[r][c].is_zero()).expect("full rank");
        g.swap(c, piv);
        for r in c + 1..p {
            let f = &g[r][c] / &g[c][c];
            let (top, bottom) = g.split_at_mut(r);
            for (x, t) in bottom[0][c..].iter_mut().zip(&top[c][c..]) {
                *x -= &f * t;
            }
        }
    }
    let mut x = vec![BigRational::zero(); p];
    for c in (0..p).rev() {
        let mut s = g[c][p].clone();
        for k in c + 1..p {
            s -= &g[c][k] * &x[k];
        }
        x[c] = s / &g[c][c];
    }
    x.iter().map(|v| v.to_f64().expect("representable")).collect()
}

#[test]
fn degree_10_fits_on_minus_9_to_minus_3_take_the_qr_route_and_give_7_digits() {
    let mut r = rng(2008);
    let n = 82;
    let mut t: Vec<f64> = (0..n).map(|i| -9.0 + 6.0 * (i as f64 + r.random_range(0.0..0.9)) / n as f64).collect();
    t.sort_by(f64::total_cmp);
    let y: Vec<f64> = t.iter().map(|&s| 0.85 + 0.04 * (0.9 * s).sin() + 0.002 * r.random_range(-1.0..1.0)).collect();
    let w: Vec<f64> = (0..n).map(|_| 1.0 / r.random_range(0.5..2.0)).collect();
    let p = 11;
    let a = vandermonde(&t, 10);
    for weighted in [false, true] {
        let weights = if weighted { w.clone() } else { vec![1.0; n] };
        let exact = exact_lstsq(&a, n, p, &y, &weights);
        let dw = weighted.then(|| upload(&w, n, 1));
        let sol = wls_rows(&upload(&a, n, p), &upload(&y, n, 1), dw.as_ref()).unwrap();
        let got = host(&sol.x);
        let worst = got.iter().zip(&exact).map(|(g, e)| ((g - e) / e).abs()).fold(0.0, f64::max);
        eprintln!("poly weighted = {weighted}: path {}, κ(G) ≈ {:.2e}, worst {worst:.2e}", sol.path, sol.condition);
        assert!(matches!(sol.path, WlsPath::StableQr { .. }), "path {:?}", sol.path);
        assert!(sol.condition > 1e9);
        assert!(worst <= 1e-7, "weighted = {weighted}: worst coefficient relative error {worst:e}");
    }
}

/// `weighted_residual` on data of known units (`A` in units of 2⁻²⁰, `d` of
/// 2⁻¹⁰, `b` and `x` of 2⁻³⁰), so that the exact residual is an integer sum
/// in units of 2⁻⁹⁰ (`i128`), rounded once to f64. `x` is the least-squares
/// solution rounded to those units: `r` is about 1e−9 of its terms. Bound, entry by entry:
/// `|r − r_exact| ≤ 2u·|r_exact| + 8n·u²·(|A|·D²·(|b| + |Aᵀ|·|x|))`
/// (double-double); the same sums in plain FP64 fail it. `r` is a strided
/// row in a NaN-filled buffer whose other entries must keep their bits.
fn residual_against_integers<B: gpumat::backend::Backend>(be: &B, m: usize, n: usize) {
    use gpumat::backend::{Block, View, ViewMut};
    let mut g = rng((m * n) as u64);
    let ai: Vec<i128> = (0..m * n).map(|_| g.random_range(-(1 << 20)..(1 << 20))).collect();
    let di: Vec<i128> = (0..n).map(|k| if k % 9 == 4 { 0 } else { g.random_range(1..(1 << 11)) }).collect();
    let bi: Vec<i128> = (0..n).map(|_| g.random_range(-(1 << 30)..(1 << 30))).collect();
    let f = |v: i128, e: i32| v as f64 * 2f64.powi(-e);
    let (a, d, b): (Vec<f64>, Vec<f64>, Vec<f64>) = (
        ai.iter().map(|&v| f(v, 20)).collect(),
        di.iter().map(|&v| f(v, 10)).collect(),
        bi.iter().map(|&v| f(v, 30)).collect(),
    );
    let dat = Mat::from_fn(n, m, |k, i| d[k] * a[i + k * m]);
    let xs = dat.qr().solve_lstsq(Mat::from_fn(n, 1, |k, _| d[k] * b[k]));
    let xi: Vec<i128> = (0..m).map(|i| (xs[(i, 0)] * 2f64.powi(30)).round() as i128).collect();
    let x: Vec<f64> = xi.iter().map(|&v| f(v, 30)).collect();
    // Exact: s = b − Aᵀx in units of 2⁻⁵⁰, w = D²s in 2⁻⁷⁰, r = A·w in 2⁻⁹⁰.
    let s: Vec<i128> = (0..n).map(|k| (bi[k] << 20) - (0..m).map(|i| ai[i + k * m] * xi[i]).sum::<i128>()).collect();
    let w: Vec<i128> = (0..n).map(|k| di[k] * di[k] * s[k]).collect();
    let exact: Vec<f64> = (0..m).map(|i| f((0..n).map(|k| ai[i + k * m] * w[k]).sum::<i128>(), 90)).collect();
    // (|Aᵀ|·|x|)ₖ and (Aᵀ·x)ₖ once per k, not once per (i, k): m times less work.
    let abs_ax: Vec<f64> = (0..n).map(|k| (0..m).map(|l| (a[l + k * m] * x[l]).abs()).sum()).collect();
    let scale: Vec<f64> =
        (0..m).map(|i| (0..n).map(|k| (a[i + k * m] * d[k] * d[k]).abs() * (b[k].abs() + abs_ax[k])).sum()).collect();
    let u = f64::EPSILON / 2.0;
    let bound = |i: usize| 2.0 * u * exact[i].abs() + 8.0 * n as f64 * u * u * scale[i];
    let smallest = (0..m).map(|i| exact[i].abs() / scale[i]).fold(f64::INFINITY, f64::min);
    assert!(smallest < 1e-4, "x is not near the solution: |r|/scale ≥ {smallest:e}");

    let rb = Block { offset: 1, rows: 1, cols: m, ld: 2 };
    let mut rbuf = be.upload(&vec![f64::NAN; 2 * m + 1]).unwrap();
    let (ab, db, bb, xb) =
        (be.upload(&a).unwrap(), be.upload(&d).unwrap(), be.upload(&b).unwrap(), be.upload(&x).unwrap());
    be.weighted_residual(
        View::dense(&ab, m, n).unwrap(),
        View::dense(&db, n, 1).unwrap(),
        View::dense(&bb, n, 1).unwrap(),
        View::dense(&xb, m, 1).unwrap(),
        ViewMut::new(&mut rbuf, rb).unwrap(),
    )
    .unwrap();
    let mut out = vec![0.0; 2 * m + 1];
    be.download(&rbuf, &mut out).unwrap();
    for (p, v) in out.iter().enumerate() {
        if p % 2 == 0 {
            assert!(v.is_nan(), "m = {m}: entry {p} outside r changed to {v}");
        }
    }
    for i in 0..m {
        let got = out[rb.vector_index(i)];
        assert!((got - exact[i]).abs() <= bound(i), "m = {m}, n = {n}: r[{i}] = {got:e}, exact {:e}", exact[i]);
    }
    // The bound has teeth: the same sums in FP64 miss it.
    let ax: Vec<f64> = (0..n).map(|k| (0..m).map(|l| a[l + k * m] * x[l]).sum()).collect();
    let plain: Vec<f64> = (0..m).map(|i| (0..n).map(|k| a[i + k * m] * d[k] * d[k] * (b[k] - ax[k])).sum()).collect();
    assert!((0..m).any(|i| (plain[i] - exact[i]).abs() > bound(i)), "m = {m}: FP64 meets the bound too");
}

#[test]
fn the_residual_is_exact_to_rounding() {
    let dev = device();
    // On the GPU, 40 × 90 is one column per chunk of A·w and 300 × 5000
    // ten columns per chunk over two blocks of rows.
    gpumat::with_backend!(dev, be => {
        residual_against_integers(be, 40, 90);
        residual_against_integers(be, 300, 5000);
    });
}

/// Refinement with exact residuals converges to the solution of the data,
/// not to an FP64 normal-equations solve: on a Table 2 problem
/// (`κ(G) ≈ 1e6`) the refined `x` is within `10·√m·u` of the exact
/// (rational) least-squares solution, where faer's FP64 solve is hundreds
/// of times further off.
#[test]
fn refinement_reaches_the_exact_solution() {
    let m = 24;
    let n = 2 * m;
    let (a, d, b) = seed_problem(31, m, true);
    let rows: Vec<f64> = (0..m).flat_map(|i| (0..n).map(move |k| (i, k))).map(|(i, k)| a[i + k * m]).collect();
    let exact = exact_lstsq(&rows, n, m, &b, &d);
    let (fp64, kappa) = faer_normal_equations(&a, m, n, &d, &b);
    let sol = wls(&upload(&a, m, n), &upload(&b, n, 1), Some(&upload(&d, n, 1))).unwrap();
    let (ours, theirs) = (rel_error(&host(&sol.x), &exact), rel_error(&fp64, &exact));
    eprintln!(
        "exact solution: κ₁(G) = {kappa:.2e}, refined error {ours:.2e}, FP64 solve {theirs:.2e}, {} steps",
        sol.iterations
    );
    assert_eq!(sol.path, WlsPath::Refined);
    let bound = 10.0 * (m as f64).sqrt() * f64::EPSILON / 2.0;
    assert!(ours <= bound, "refined error {ours:e} > {bound:e}");
    assert!(theirs > 100.0 * ours, "the FP64 solve ({theirs:e}) is not far worse than refinement ({ours:e})");
}

#[test]
fn bad_input_is_a_clear_error() {
    let (m, n) = (4, 10);
    let (a, d, b) = seed_problem(5, 5, false);
    let a = &a[..m * n];
    let (da, db) = (upload(a, m, n), upload(&b[..n], n, 1));
    let dd = |v: &[f64]| upload(v, v.len(), 1);
    // A and d of different lengths; b of the wrong length.
    assert!(matches!(wls(&da, &db, Some(&dd(&d[..n - 1]))), Err(Error::DimensionMismatch { .. })));
    assert!(matches!(wls(&da, &upload(&b[..n - 2], n - 2, 1), None), Err(Error::DimensionMismatch { .. })));
    // Negative weight.
    let mut neg = d[..n].to_vec();
    neg[3] = -0.5;
    assert!(matches!(wls(&da, &db, Some(&dd(&neg))), Err(Error::NegativeWeight { index: 4, value }) if value == -0.5));
    // NaN in A, b, d.
    let mut nan_a = a.to_vec();
    nan_a[5] = f64::NAN;
    assert!(matches!(wls(&upload(&nan_a, m, n), &db, None), Err(Error::NonFinite { .. })));
    let mut nan_b = b[..n].to_vec();
    nan_b[2] = f64::NAN;
    assert!(matches!(wls(&da, &dd(&nan_b), None), Err(Error::NonFinite { .. })));
    let mut inf_d = d[..n].to_vec();
    inf_d[0] = f64::INFINITY;
    assert!(matches!(wls(&da, &db, Some(&dd(&inf_d))), Err(Error::NonFinite { .. })));
    // A weight whose square overflows: G = A·D²·Aᵀ scales by d² in one pass.
    let mut huge = d[..n].to_vec();
    huge[1] = 1e160;
    let e = wls(&da, &db, Some(&dd(&huge))).unwrap_err();
    assert!(matches!(e, Error::WeightOverflow { index: 2, precision: "f64", .. }), "{e}");
    // Fewer observations than unknowns.
    let wide = upload(&a[..m * 3], m, 3);
    assert!(matches!(wls(&wide, &upload(&b[..3], 3, 1), None), Err(Error::DimensionMismatch { .. })));
    // Rank-deficient design: two unknowns with the same basis function.
    let mut rd = a.to_vec();
    for k in 0..n {
        rd[2 + k * m] = rd[k * m];
    }
    let e = wls(&upload(&rd, m, n), &db, None).unwrap_err();
    assert!(matches!(e, Error::RankDeficient { .. }), "{e}");
    // All-zero weights leave nothing to fit: also rank deficient.
    let e = wls(&da, &db, Some(&dd(&vec![0.0; n]))).unwrap_err();
    assert!(matches!(e, Error::RankDeficient { .. }), "{e}");
}

#[test]
fn the_seeds_absolute_stopping_test_is_available() {
    // The paper's ε = 1e−8 on ‖r‖₂/‖x‖₂: with ‖G‖ ≈ m·n/8 here that is a
    // backward error near 1e−8/‖G‖, so the refined error is still far below
    // the f32 solve's.
    let m = 64;
    let (a, d, b) = seed_problem(9, m, false);
    let (reference, kappa) = faer_normal_equations(&a, m, 2 * m, &d, &b);
    let params = WlsParams { stopping: gpumat::Stopping::Absolute(1e-8), ..Default::default() };
    let sol = wls_with(&upload(&a, m, 2 * m), &upload(&b, 2 * m, 1), Some(&upload(&d, 2 * m, 1)), params).unwrap();
    assert_eq!(sol.path, WlsPath::Refined);
    let refined = rel_error(&host(&sol.x), &reference);
    let first = rel_error(&host(sol.first_solve.as_ref().unwrap()), &reference);
    let g_norm = (m * 2 * m) as f64 / 8.0;
    assert!(refined <= kappa * 1e-8 / g_norm * 10.0, "refined {refined:e}");
    assert!(first > 100.0 * refined, "x₀ {first:e}, refined {refined:e}");
}

#[test]
fn one_unknown_is_the_weighted_mean() {
    // A = ones (1 × n): x = Σ dₖ²bₖ / Σ dₖ², refined to FP64 level.
    let n = 7;
    let b: Vec<f64> = (0..n).map(|k| 1.0 + 0.25 * k as f64).collect();
    let d: Vec<f64> = (0..n).map(|k| 0.5 + 0.1 * k as f64).collect();
    let mean = (0..n).map(|k| d[k] * d[k] * b[k]).sum::<f64>() / d.iter().map(|v| v * v).sum::<f64>();
    let sol = wls(&upload(&vec![1.0; n], 1, n), &upload(&b, 1, n), Some(&upload(&d, 1, n))).unwrap();
    assert_eq!(sol.path, WlsPath::Refined);
    let x = host(&sol.x)[0];
    assert!((x - mean).abs() <= 4.0 * f64::EPSILON * mean, "{x} vs {mean}");
    // Square problems (n = m) are interpolation: residual zero.
    let sq = wls(&upload(&[2.0, 0.0, 1.0, 3.0], 2, 2), &upload(&[4.0, 7.0], 2, 1), None).unwrap();
    // Aᵀx = b with Aᵀ = [2 0; 1 3]: x = (2, 5/3).
    let x = host(&sq.x);
    assert!((x[0] - 2.0).abs() <= 1e-15 && (x[1] - 5.0 / 3.0).abs() <= 1e-15, "{x:?}");
}

/// Table 2 at `m` (seed 2008) on the device, with faer's FP64 solution and
/// `κ₁(G)`.
struct TableTwo {
    reference: Vec<f64>,
    kappa: f64,
    a: Matrix<f64>,
    b: Matrix<f64>,
    d: Matrix<f64>,
}

fn table_2_at(m: usize) -> TableTwo {
    let (a, d, b) = seed_problem(2008, m, true);
    let (reference, kappa) = faer_normal_equations(&a, m, 2 * m, &d, &b);
    TableTwo { reference, kappa, a: upload(&a, m, 2 * m), b: upload(&b, 2 * m, 1), d: upload(&d, 2 * m, 1) }
}

#[test]
fn gmres_keeps_converging_where_classical_refinement_is_too_slow() {
    // Table 2 at m = 256 (κ(G) ≈ 5e7, κ·u₃₂ ≈ 3): classical corrections
    // shrink by about 0.6 a step, too slowly for a limit of 8 steps, and
    // the FP64 path takes over; GMRES-IR reaches the same accuracy on the
    // low-precision factor in a few steps.
    let m = 256;
    let TableTwo { reference, kappa, a: da, b: db, d: dd } = table_2_at(m);
    let classical = WlsParams { max_iterations: 8, refinement: gpumat::Refinement::Classical, ..Default::default() };
    let sol = wls_with(&da, &db, Some(&dd), classical).unwrap();
    assert!(matches!(sol.path, WlsPath::Fp64 { .. }), "classical: {:?} after {} steps", sol.path, sol.iterations);
    let gmres = WlsParams { max_iterations: 8, ..Default::default() };
    let sol = wls_with(&da, &db, Some(&dd), gmres).unwrap();
    assert_eq!(sol.path, WlsPath::Refined, "GMRES-IR");
    assert!(
        sol.iterations <= 4 && sol.gmres_iterations > 0,
        "{} steps, {} GMRES",
        sol.iterations,
        sol.gmres_iterations
    );
    // Bounds: the backward error of the normal equations at rounding level,
    // the forward error within an FP64 solve's κ·u.
    assert!(sol.relative_residual <= (m as f64).sqrt() * f64::EPSILON, "{:e}", sol.relative_residual);
    assert!(rel_error(&host(&sol.x), &reference) <= kappa * f64::EPSILON);
}

#[test]
fn gmres_through_the_explicit_inverse_converges_as_through_solves() {
    // The same Table 2 problem with GMRES's preconditioner applied by
    // triangular solves and by products with L⁻¹ formed in FP64: one
    // operator to FP64's rounding, so the same path, steps within one, and
    // both at the accuracy the stopping test promises.
    let m = 256;
    let TableTwo { reference, kappa, a: da, b: db, d: dd } = table_2_at(m);
    let [solves, products] = [0, m].map(|up_to| {
        let params =
            WlsParams { refinement: gpumat::Refinement::Gmres, inverse_up_to: Some(up_to), ..Default::default() };
        wls_with(&da, &db, Some(&dd), params).unwrap()
    });
    for (how, sol) in [("solves", &solves), ("products", &products)] {
        assert_eq!(sol.path, WlsPath::Refined, "{how}");
        assert!(sol.gmres_iterations > 0, "{how}: no GMRES iteration");
        assert!(sol.relative_residual <= (m as f64).sqrt() * f64::EPSILON, "{how}: η = {:e}", sol.relative_residual);
        let error = rel_error(&host(&sol.x), &reference);
        assert!(error <= kappa * f64::EPSILON, "{how}: error {error:e} (κ = {kappa:e})");
    }
    eprintln!(
        "by solves: {} steps, {} GMRES; by products: {} steps, {} GMRES",
        solves.iterations, solves.gmres_iterations, products.iterations, products.gmres_iterations
    );
    assert!(
        solves.iterations.abs_diff(products.iterations) <= 1,
        "{} vs {} steps",
        solves.iterations,
        products.iterations
    );
    let (s, p) = (solves.gmres_iterations, products.gmres_iterations);
    assert!(s.abs_diff(p) <= 1 + s / 10, "GMRES iterations: {s} by solves, {p} by products");
}
