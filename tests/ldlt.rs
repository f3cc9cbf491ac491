//! LDLᵀ with Bunch–Kaufman pivoting and without pivoting on the device under
//! test, in f64 and f32, full and RFP storage, against FP64 references
//! computed on the host independently of gpumat (faer and plain loops),
//! mostly on matrices built with known eigenvalues, `A = Q·Λ·Qᵀ`.
//!
//! With `u` the unit roundoff of the type, `n` the order, and `A` the matrix
//! as rounded to the type, the bounds are:
//!
//! - factorization: ‖A − Pᵀ·L·D·Lᵀ·P‖_F ≤ 30·n·u·‖A‖_F (Higham, Accuracy and
//!   Stability of Numerical Algorithms, ch. 11: a small multiple of `n·u`
//!   times the element growth of Bunch–Kaufman, small in practice);
//! - solve with three right-hand sides, normwise in the Frobenius norm:
//!   ‖A·X − B‖_F ≤ 30·n·u·(‖A‖_F·‖X‖_F + ‖B‖_F);
//! - forward error against `X* = Q·Λ⁻¹·Qᵀ·B` from the known spectrum:
//!   ‖X − X*‖_F ≤ 30·n·u·κ₂·‖X*‖_F, the backward error's bound times
//!   `κ₂ = max|λ|/min|λ|`;
//! - `log|det A|` against `Σ log|λᵢ|`, relatively:
//!   |error| / max(1, |Σ log|λᵢ||) ≤ 30·n·u·κ₂ (to first order the error is
//!   `Σ δλᵢ/λᵢ`, each `|δλᵢ| ≤ ‖E‖₂` for the backward error `E`);
//! - `rcond` against `1/(‖A‖₁·‖Q·Λ⁻¹·Qᵀ‖₁)`: within a factor 10 either way;
//! - the inertia, the zero pivots, the 2×2 blocks and the errors: exactly.
//!
//! Run with `--nocapture` to see the worst ratio of error to bound of each
//! family.

mod common;

use common::*;
use faer::Mat;
use gpumat::{Error, Inertia, Ldlt, LdltMethod, LdltParams, Matrix, Scalar, Sym};
use rand::Rng;
use rand::seq::SliceRandom;

/// The constant of the backward error bounds: errors ≤ 30·n·u·(their scale).
const C: f64 = 30.0;

fn upload<T: Scalar>(data: &[f64], rows: usize, cols: usize) -> Matrix<T> {
    let v: Vec<T> = data.iter().map(|&x| T::from_f64(x)).collect();
    device().from_col_major(rows, cols, &v).unwrap()
}

fn host<T: Scalar>(a: &Matrix<T>) -> Vec<f64> {
    a.to_host().unwrap().into_iter().map(Scalar::to_f64).collect()
}

/// `x` rounded to `T`, back in f64.
fn rounded<T: Scalar>(x: &[f64]) -> Vec<f64> {
    x.iter().map(|&v| T::from_f64(v).to_f64()).collect()
}

fn faer_of(a: &[f64], rows: usize, cols: usize) -> Mat<f64> {
    Mat::from_fn(rows, cols, |i, j| a[i + j * rows])
}

fn col_major(m: &Mat<f64>) -> Vec<f64> {
    (0..m.ncols()).flat_map(|j| (0..m.nrows()).map(move |i| m[(i, j)])).collect()
}

/// The lower triangle of `a` mirrored into the upper: symmetric to the last
/// bit.
fn symmetrized(a: &[f64], n: usize) -> Vec<f64> {
    (0..n * n).map(|p| if p % n >= p / n { a[p] } else { a[p / n + (p % n) * n] }).collect()
}

/// `P·A·Pᵀ` for the permutation `p`: entry `(i, j)` is `A(p[i], p[j])`.
fn permuted(a: &[f64], n: usize, p: &[usize]) -> Vec<f64> {
    (0..n * n).map(|q| a[p[q % n] + p[q / n] * n]).collect()
}

/// `A` as a `Sym` in full or RFP storage.
fn sym<T: Scalar>(a: &[f64], n: usize, packed: bool) -> Sym<T> {
    let s = Sym::from_lower(upload::<T>(a, n, n)).unwrap();
    if packed { s.to_rfp().unwrap() } else { s }
}

fn storage(packed: bool) -> &'static str {
    if packed { "RFP" } else { "full" }
}

/// The largest column sum of magnitudes.
fn one_norm(a: &[f64], n: usize) -> f64 {
    (0..n).map(|j| a[j * n..(j + 1) * n].iter().map(|v| v.abs()).sum::<f64>()).fold(0.0, f64::max)
}

/// The numbers of positive, negative and zero values.
fn signs(values: &[f64]) -> Inertia {
    Inertia {
        positive: values.iter().filter(|&&x| x > 0.0).count(),
        negative: values.iter().filter(|&&x| x < 0.0).count(),
        zero: values.iter().filter(|&&x| x == 0.0).count(),
    }
}

/// A random orthogonal matrix: the `Q` of faer's Householder QR of a matrix
/// with entries uniform in [−1, 1) (dense, every entry of order `1/√n`).
fn orthogonal(state: u64, n: usize) -> Mat<f64> {
    faer_of(&random(&mut rng(state), n, n), n, n).qr().compute_Q()
}

/// `n` eigenvalues whose magnitudes are spread geometrically from 1 down to
/// `1/cond`, `negative` of them (at random places in that order) negative.
fn spectrum(state: u64, n: usize, cond: f64, negative: usize) -> Vec<f64> {
    let mut sign: Vec<f64> = (0..n).map(|i| if i < negative { -1.0 } else { 1.0 }).collect();
    sign.shuffle(&mut rng(state ^ 0x5157));
    (0..n).map(|i| sign[i] * cond.powf(-(i as f64) / (n.max(2) - 1) as f64)).collect()
}

/// `Q·diag(λ)·Qᵀ` (Q from [`orthogonal`]) and what its spectrum says.
struct Spectral {
    n: usize,
    a: Vec<f64>,
    q: Mat<f64>,
    lambda: Vec<f64>,
}

impl Spectral {
    fn new(state: u64, lambda: Vec<f64>) -> Self {
        let n = lambda.len();
        let q = orthogonal(state, n);
        let ql = Mat::from_fn(n, n, |i, j| q[(i, j)] * lambda[j]);
        let a = symmetrized(&col_major(&(ql.as_ref() * q.transpose())), n);
        Spectral { n, a, q, lambda }
    }

    /// `κ₂ = max|λ| / min|λ|`.
    fn kappa(&self) -> f64 {
        let mag = self.lambda.iter().map(|l| l.abs());
        mag.clone().fold(0.0, f64::max) / mag.fold(f64::INFINITY, f64::min)
    }

    fn inertia(&self) -> Inertia {
        signs(&self.lambda)
    }

    /// `Q·Λ⁻¹·Qᵀ·B` for the `n × k` matrix `b`.
    fn apply_inverse(&self, b: &[f64], k: usize) -> Vec<f64> {
        let qtb = self.q.transpose() * faer_of(b, self.n, k);
        let scaled = Mat::from_fn(self.n, k, |i, j| qtb[(i, j)] / self.lambda[i]);
        col_major(&(&self.q * &scaled))
    }

    /// `‖A⁻¹‖₁` from `Q·Λ⁻¹·Qᵀ`.
    fn inverse_one_norm(&self) -> f64 {
        let n = self.n;
        let eye: Vec<f64> = (0..n * n).map(|p| f64::from(u8::from(p % (n + 1) == 0))).collect();
        one_norm(&self.apply_inverse(&eye, n), n)
    }

    fn log_abs_det(&self) -> f64 {
        self.lambda.iter().map(|l| l.abs().ln()).sum()
    }
}

/// Errors over their bounds, the worst seen.
#[derive(Clone, Copy, Debug, Default)]
struct Worst {
    factor: f64,
    solve: f64,
    forward: f64,
}

impl Worst {
    fn add(&mut self, o: Worst) {
        self.factor = self.factor.max(o.factor);
        self.solve = self.solve.max(o.solve);
        self.forward = self.forward.max(o.forward);
    }

    fn report(&self, family: &str) {
        println!(
            "{family}: worst error/bound: factorization {:.3e}, solve {:.3e}, forward {:.3e}",
            self.factor, self.solve, self.forward
        );
    }
}

/// How a case is factored: storage, pivoting, blocking (`None`: the default
/// for its order).
#[derive(Clone, Copy, Debug)]
struct How {
    packed: bool,
    method: LdltMethod,
    params: Option<LdltParams>,
}

const FULL: How = How { packed: false, method: LdltMethod::BunchKaufman, params: None };
const RFP: How = How { packed: true, method: LdltMethod::BunchKaufman, params: None };

impl How {
    fn packed(packed: bool) -> How {
        How { packed, ..FULL }
    }
    fn unpivoted(self) -> How {
        How { method: LdltMethod::Unpivoted, ..self }
    }
    fn pivoted(&self) -> bool {
        self.method != LdltMethod::Unpivoted
    }
    fn with(self, params: LdltParams) -> How {
        How { params: Some(params), ..self }
    }
}

/// `‖A·X − B‖_F / (‖A‖_F·‖X‖_F + ‖B‖_F)` in f64 on the host.
fn backward_error(a: &[f64], n: usize, x: &[f64], b: &[f64], k: usize) -> f64 {
    let (ax, ..) = naive_matmul(a, (n, n), false, x, (n, k), false);
    let r: Vec<f64> = ax.iter().zip(b).map(|(p, q)| p - q).collect();
    frobenius(&r) / (frobenius(a) * frobenius(x) + frobenius(b))
}

/// What [`check`] leaves for further checks.
struct Checked<T: Scalar> {
    f: Ldlt<T>,
    /// `B` rounded to `T`, and the computed `X`.
    b: Vec<f64>,
    x: Vec<f64>,
    worst: Worst,
}

/// Factors `a` (rounded to `T`) as `how` says and asserts
/// ‖A − Pᵀ·L·D·Lᵀ·P‖_F ≤ 30·n·u·‖A‖_F, and for `X` solving `A·X = B` with
/// three random columns ‖A·X − B‖_F ≤ 30·n·u·(‖A‖_F·‖X‖_F + ‖B‖_F); and the
/// inertia, when it is known. Without pivoting, also that `P = I` and that
/// `D` is diagonal. A Bunch–Kaufman case is checked with Aasen's method
/// too (the worst of both is kept; the Bunch–Kaufman factor is returned).
fn check<T: Scalar>(a: &[f64], n: usize, how: How, inertia: Option<Inertia>, what: &str) -> Checked<T> {
    let checked = check_one::<T>(a, n, how, inertia, what);
    if how.method != LdltMethod::BunchKaufman {
        return checked;
    }
    let aasen = check_one::<T>(a, n, How { method: LdltMethod::Aasen, ..how }, inertia, what);
    let w = &aasen.worst;
    Checked {
        worst: Worst {
            factor: checked.worst.factor.max(w.factor),
            solve: checked.worst.solve.max(w.solve),
            forward: checked.worst.forward.max(w.forward),
        },
        ..checked
    }
}

fn check_one<T: Scalar>(a: &[f64], n: usize, how: How, inertia: Option<Inertia>, what: &str) -> Checked<T> {
    let params = how.params.unwrap_or(how.method.params(n));
    let what = format!(
        "{} {what} n={n} {} {:?} (block {}, tile {})",
        T::NAME,
        storage(how.packed),
        how.method,
        params.block_size,
        params.update_tile
    );
    let at = rounded::<T>(a);
    let f = sym::<T>(a, n, how.packed).ldlt_with(how.method, params).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!((f.n(), f.is_packed(), f.method()), (n, how.packed, how.method), "{what}");
    let bound = C * n as f64 * u::<T>();
    let fe = rel_error(&host(&f.reconstruct().unwrap()), &at);
    assert!(fe <= bound, "{what}: ‖A − Pᵀ·L·D·Lᵀ·P‖_F/‖A‖_F = {fe:e} > 30·n·u = {bound:e}");
    let b = rounded::<T>(&random(&mut rng(n as u64 + 1000), n, 3));
    let x = host(&f.solve(&upload::<T>(&b, n, 3)).unwrap_or_else(|e| panic!("{what}: solve: {e}")));
    let berr = backward_error(&at, n, &x, &b, 3);
    assert!(berr <= bound, "{what}: ‖A·X − B‖_F/(‖A‖_F·‖X‖_F + ‖B‖_F) = {berr:e} > 30·n·u = {bound:e}");
    if let Some(inertia) = inertia {
        assert_eq!(f.inertia(), inertia, "{what}: inertia");
    }
    if !how.pivoted() {
        assert_eq!(f.pivots().unwrap(), (1..=n as i32).collect::<Vec<_>>(), "{what}: unpivoted, P = I");
        assert!(f.block_diagonal().e.iter().all(|&e| e == 0.0), "{what}: unpivoted, D is diagonal");
    }
    Checked { f, b, x, worst: Worst { factor: fe / bound, solve: berr / bound, forward: 0.0 } }
}

/// The number of 2×2 blocks of `D`.
fn two_by_two_blocks<T: Scalar>(f: &Ldlt<T>) -> usize {
    f.block_diagonal().e.iter().filter(|&&e| e != 0.0).count()
}

/// [`check`] on `Q·Λ·Qᵀ`, plus the inertia from the spectrum and the
/// forward error ‖X − Q·Λ⁻¹·Qᵀ·B‖_F ≤ 30·n·u·κ₂·‖Q·Λ⁻¹·Qᵀ·B‖_F.
fn check_spectral<T: Scalar>(s: &Spectral, how: How, what: &str) -> Worst {
    let n = s.n;
    let kappa = s.kappa();
    let what = format!("{what} κ={kappa:.0e}");
    let c = check::<T>(&s.a, n, how, Some(s.inertia()), &what);
    let reference = s.apply_inverse(&c.b, 3);
    let fwd = rel_error(&c.x, &reference);
    let bound = C * n as f64 * u::<T>() * kappa;
    assert!(
        fwd <= bound,
        "{} {what} n={n} {}: ‖X − X*‖_F/‖X*‖_F = {fwd:e} > 30·n·u·κ = {bound:e}",
        T::NAME,
        storage(how.packed)
    );
    Worst { forward: fwd / bound, ..c.worst }
}

fn chosen_spectra<T: Scalar>(conds: &[f64]) -> Worst {
    let mut worst = Worst::default();
    for (n, negative) in [(40, 13), (150, 50), (151, 100)] {
        for (k, &cond) in conds.iter().enumerate() {
            let s = Spectral::new((n * 10 + k) as u64, spectrum(k as u64 + n as u64, n, cond, negative));
            for packed in [false, true] {
                worst.add(check_spectral::<T>(&s, How::packed(packed), "Q·Λ·Qᵀ"));
            }
        }
    }
    worst
}

/// `Q·Λ·Qᵀ` with a third or two thirds of the eigenvalues negative, κ₂ =
/// 1e2, 1e6, 1e12, n = 40, 150, 151, full and RFP: the bounds of the
/// module's doc, the inertia of the spectrum.
#[test]
fn chosen_spectra_in_f64() {
    chosen_spectra::<f64>(&[1e2, 1e6, 1e12]).report("f64 Q·Λ·Qᵀ, κ up to 1e12");
}

/// As in f64, with κ₂ = 10, 1e2, 1e4.
#[test]
fn chosen_spectra_in_f32() {
    chosen_spectra::<f32>(&[1e1, 1e2, 1e4]).report("f32 Q·Λ·Qᵀ, κ up to 1e4");
}

/// Shifts `σ` with the number of eigenvalues below each: below all, above
/// all, and between two consecutive eigenvalues near the quartiles, where
/// both are at least `gap·max|λ|` away from `σ` (so that `A − σ·I` is safely
/// nonsingular).
fn shifts(lambda: &[f64], gap: f64) -> Vec<(f64, usize)> {
    let mut s = lambda.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let big = s.iter().fold(0.0f64, |m, l| m.max(l.abs()));
    let mut out = vec![(s[0] - 0.5 * big, 0), (s[n - 1] + 0.5 * big, n)];
    for start in [n / 4, n / 2, 3 * n / 4] {
        let k = (start.max(1)..n).find(|&k| s[k] - s[k - 1] >= 2.0 * gap * big).expect("a gap between eigenvalues");
        out.push(((s[k - 1] + s[k]) / 2.0, k));
    }
    out
}

fn shifted_inertia<T: Scalar>(cond: f64, gap: f64) {
    let n = 120;
    let s = Spectral::new(77, spectrum(78, n, cond, 40));
    for packed in [false, true] {
        let a = sym::<T>(&s.a, n, packed);
        // A + α·I, to the rounding of each diagonal entry.
        for m in [5, 6] {
            let small = rounded::<T>(&random_symmetric(m as u64, m, false).0);
            let got = host(&sym::<T>(&small, m, packed).shifted(2.5).unwrap().to_dense().unwrap());
            let want: Vec<f64> = (0..m * m).map(|p| small[p] + if p % (m + 1) == 0 { 2.5 } else { 0.0 }).collect();
            assert!(rel_error(&got, &want) <= 2.0 * u::<T>(), "{} {} n={m}: shifted(2.5)", T::NAME, storage(packed));
        }
        assert_eq!(a.inertia(0.0).unwrap(), s.inertia(), "{} {} σ = 0", T::NAME, storage(packed));
        for (sigma, below) in shifts(&s.lambda, gap) {
            let want = Inertia { positive: n - below, negative: below, zero: 0 };
            assert_eq!(a.inertia(sigma).unwrap(), want, "{} {} σ = {sigma}", T::NAME, storage(packed));
        }
    }
}

/// `Sym::inertia(σ)`: the numbers of eigenvalues of `A` above and below `σ`
/// exactly, for shifts at least 1e−3 (f64) or 1e−2 (f32) of `‖A‖₂` away
/// from every eigenvalue.
#[test]
fn shifted_inertia_counts_the_eigenvalues_below_the_shift() {
    shifted_inertia::<f64>(1e6, 1e-3);
    shifted_inertia::<f32>(1e2, 1e-2);
}

/// Definite matrices (unpivoted and pivoted), and diagonally dominant
/// indefinite ones, unpivoted: the element growth is bounded without
/// pivoting, and the inertia is that of the diagonal (Gershgorin's discs
/// all avoid 0).
fn definite_and_dominant<T: Scalar>(conds: &[f64]) -> Worst {
    let mut worst = Worst::default();
    for (n, state) in [(1, 1), (17, 2), (100, 3)] {
        for &cond in conds {
            for negative in [0, n] {
                let s = Spectral::new(state, spectrum(state, n, cond, negative));
                for packed in [false, true] {
                    worst.add(check_spectral::<T>(&s, How::packed(packed).unpivoted(), "definite"));
                    worst.add(check_spectral::<T>(&s, How::packed(packed), "definite"));
                }
            }
        }
        let mut r = rng(state + 50);
        let mut a = symmetrized(&random(&mut r, n, n), n);
        let mut diagonal = vec![0.0; n];
        for (i, d) in diagonal.iter_mut().enumerate() {
            let off: f64 = (0..n).filter(|&j| j != i).map(|j| a[i + j * n].abs()).sum();
            *d = if r.random_bool(0.4) { -1.0 } else { 1.0 } * (off + r.random_range(0.1..1.0));
            a[i + i * n] = *d;
        }
        for packed in [false, true] {
            worst.add(check::<T>(&a, n, How::packed(packed).unpivoted(), Some(signs(&diagonal)), "dominant").worst);
        }
    }
    worst
}

/// [`definite_and_dominant`] with κ₂ up to 1e6 (f64) and 1e3 (f32).
#[test]
fn definite_and_diagonally_dominant_matrices_unpivoted() {
    definite_and_dominant::<f64>(&[1e2, 1e6]).report("f64 definite and dominant");
    definite_and_dominant::<f32>(&[1e2, 1e3]).report("f32 definite and dominant");
}

/// `[[H, Bᵀ], [B, −δ·I]]` with `H` SPD of order `nh` (eigenvalues from 1 to
/// 10) and `B` uniform in [−1, 1), `m × nh`, full row rank.
fn kkt(state: u64, nh: usize, m: usize, delta: f64) -> Vec<f64> {
    let h = Spectral::new(state, (0..nh).map(|i| 1.0 + 9.0 * i as f64 / nh.max(2) as f64).collect()).a;
    let b = random(&mut rng(state + 1), m, nh);
    let n = nh + m;
    let mut k = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..n {
            k[i + j * n] = match (i < nh, j < nh) {
                (true, true) => h[i + j * nh],
                (false, true) => b[(i - nh) + j * m],
                (true, false) => b[(j - nh) + i * m],
                (false, false) => f64::from(u8::from(i == j)) * -delta,
            };
        }
    }
    k
}

fn kkt_case<T: Scalar>(sizes: &[(usize, usize)]) -> Worst {
    let mut worst = Worst::default();
    for &(nh, m) in sizes {
        let n = nh + m;
        let inertia = Some(Inertia { positive: nh, negative: m, zero: 0 });
        let a = kkt(nh as u64, nh, m, 0.0);
        // The same, rows and columns shuffled: the zero block's diagonal
        // entries lie anywhere among H's.
        let mut p: Vec<usize> = (0..n).collect();
        p.shuffle(&mut rng(m as u64));
        let interleaved = permuted(&a, n, &p);
        // Quasi-definite, −δ·I for the zero block: no pivoting needed.
        let quasi = [kkt(nh as u64, nh, m, 1.0), kkt(nh as u64, nh, m, 1e-2)];
        for packed in [false, true] {
            let how = How::packed(packed);
            worst.add(check::<T>(&a, n, how, inertia, "KKT").worst);
            worst.add(check::<T>(&interleaved, n, how, inertia, "KKT interleaved").worst);
            worst.add(check::<T>(&quasi[0], n, how.unpivoted(), inertia, "quasi-definite δ=1").worst);
            worst.add(check::<T>(&quasi[1], n, how.unpivoted(), inertia, "quasi-definite δ=1e-2").worst);
            worst.add(check::<T>(&quasi[1], n, how, inertia, "quasi-definite δ=1e-2").worst);
        }
    }
    worst
}

/// KKT matrices `[[H, Bᵀ], [B, 0]]`: inertia `(n_H, m, 0)`; quasi-definite
/// ones, `−δ·I` for the zero block, also unpivoted.
#[test]
fn kkt_matrices_have_the_inertia_of_their_blocks() {
    kkt_case::<f64>(&[(1, 1), (10, 4), (60, 25), (100, 50)]).report("f64 KKT");
    kkt_case::<f32>(&[(10, 4), (60, 30)]).report("f32 KKT");
}

/// A symmetric matrix with entries uniform in [−1, 1), its diagonal zero
/// if `zero_diagonal`; and its inertia from faer's eigenvalues, asserting
/// that none lies within 1e−6·‖A‖_F of zero (so that the rounding to f32
/// keeps the inertia).
fn random_symmetric(state: u64, n: usize, zero_diagonal: bool) -> (Vec<f64>, Inertia) {
    let mut a = symmetrized(&random(&mut rng(state), n, n), n);
    if zero_diagonal {
        (0..n).for_each(|i| a[i + i * n] = 0.0);
    }
    let eig = faer_of(&a, n, n).self_adjoint_eigenvalues(faer::Side::Lower).unwrap();
    let closest = eig.iter().fold(f64::INFINITY, |m, l| m.min(l.abs()));
    assert!(closest > 1e-6 * frobenius(&a), "n={n}: the test matrix has an eigenvalue {closest:e} too near 0");
    (a, signs(&eig))
}

/// `[[0, C], [Cᵀ, 0]]` with `C` uniform in [−1, 1), `m × m`, rows and
/// columns shuffled: order `2m`, zero diagonal, eigenvalues `±σᵢ(C)`, so
/// inertia `(m, m, 0)`.
fn swap_block(state: u64, m: usize) -> Vec<f64> {
    let c = random(&mut rng(state), m, m);
    let mut a = vec![0.0; 4 * m * m];
    for j in 0..m {
        for i in 0..m {
            a[(m + i) + j * 2 * m] = c[i + j * m];
        }
    }
    let a = symmetrized(&a, 2 * m);
    let mut p: Vec<usize> = (0..2 * m).collect();
    p.shuffle(&mut rng(state + 1));
    permuted(&a, 2 * m, &p)
}

fn zero_diagonal<T: Scalar>(orders: &[usize]) -> Worst {
    let mut worst = Worst::default();
    for &n in orders {
        let (a, inertia) = random_symmetric(n as u64 + 300, n, true);
        let m = n / 2;
        let block = swap_block(n as u64 + 400, m);
        let half = Some(Inertia { positive: m, negative: m, zero: 0 });
        for packed in [false, true] {
            for (a, n, inertia, what) in
                [(&a, n, Some(inertia), "zero diagonal"), (&block, 2 * m, half, "[[0, C], [Cᵀ, 0]]")]
            {
                let c = check::<T>(a, n, How::packed(packed), inertia, what);
                assert!(two_by_two_blocks(&c.f) >= 1, "{what} n={n}: no 2×2 block in D");
                assert!(c.f.block_diagonal().e[0] != 0.0, "{what} n={n}: the first pivot is 2×2");
                worst.add(c.worst);
                match sym::<T>(a, n, packed).ldlt_unpivoted() {
                    Err(Error::ZeroPivot { column: 1 }) => {}
                    other => {
                        panic!("{what} n={n}: unpivoted, expected ZeroPivot {{ column: 1 }}, got {:?}", other.err())
                    }
                }
            }
        }
    }
    worst
}

/// Every diagonal entry zero: the first pivot must be a 2×2 block.
#[test]
fn zero_diagonals_need_two_by_two_pivots() {
    zero_diagonal::<f64>(&[2, 3, 7, 8, 50, 101, 200]).report("f64 zero diagonal");
    zero_diagonal::<f32>(&[2, 3, 8, 101]).report("f32 zero diagonal");
}

/// Entries uniform in [−1, 1), n from 1 to 257: the bounds of the module's
/// doc, the inertia of faer's eigenvalues.
#[test]
fn random_symmetric_matrices_of_many_orders() {
    let mut worst = Worst::default();
    for n in [1, 2, 3, 5, 16, 33, 100, 257] {
        let (a, inertia) = random_symmetric(n as u64 + 500, n, false);
        for packed in [false, true] {
            worst.add(check::<f64>(&a, n, How::packed(packed), Some(inertia), "random").worst);
            worst.add(check::<f32>(&a, n, How::packed(packed), Some(inertia), "random").worst);
        }
    }
    worst.report("f64 and f32 random symmetric");
}

fn exchange_matrix<T: Scalar>(packed: bool) {
    let what = format!("{} {}", T::NAME, storage(packed));
    let a = sym::<T>(&[0.0, 1.0, 1.0, 0.0], 2, packed);
    let f = a.ldlt().unwrap();
    assert_eq!(f.inertia(), Inertia { positive: 1, negative: 1, zero: 0 }, "{what}");
    assert_eq!(f.block_diagonal().d, vec![0.0, 0.0], "{what}");
    assert_eq!(f.block_diagonal().e, vec![1.0, 0.0], "{what}: one 2×2 block");
    assert_eq!(f.zero_pivot(), None, "{what}");
    let det = f.determinant();
    assert_eq!((det.mantissa, det.exponent), (-1.0, 0), "{what}: det = −1");
    assert_eq!(f.sign_log_det(), (-1.0, 0.0), "{what}");
    assert_eq!(host(&f.reconstruct().unwrap()), vec![0.0, 1.0, 1.0, 0.0], "{what}: exact");
    // The inverse is itself: x = (b₂, b₁), exactly; ‖A‖₁ = ‖A⁻¹‖₁ = 1.
    let x = host(&f.solve(&upload::<T>(&[3.0, -5.0, 0.5, 7.0], 2, 2)).unwrap());
    assert_eq!(x, vec![-5.0, 3.0, 7.0, 0.5], "{what}");
    let rcond = f.rcond().unwrap();
    assert!((rcond - 1.0).abs() <= 4.0 * u::<T>(), "{what}: rcond {rcond} vs 1");
    assert!(matches!(a.ldlt_unpivoted(), Err(Error::ZeroPivot { column: 1 })), "{what}: unpivoted");
}

/// `[[0, 1], [1, 0]]`: inertia (1, 1, 0), det −1, one 2×2 block, its own
/// inverse.
#[test]
fn the_exchange_matrix_is_one_two_by_two_block() {
    for packed in [false, true] {
        exchange_matrix::<f64>(packed);
        exchange_matrix::<f32>(packed);
    }
}

fn orders_zero_and_one_in<T: Scalar>(packed: bool) {
    let what = format!("{} {}", T::NAME, storage(packed));
    let f = sym::<T>(&[], 0, packed).ldlt().unwrap();
    assert_eq!(f.inertia(), Inertia::default(), "{what} n=0");
    assert_eq!(f.zero_pivot(), None, "{what} n=0");
    assert_eq!(f.sign_log_det(), (1.0, 0.0), "{what} n=0: the empty product");
    let x = f.solve(&upload::<T>(&[], 0, 2)).unwrap();
    assert_eq!(x.shape(), (0, 2), "{what} n=0");
    assert_eq!(f.rcond().unwrap(), f64::INFINITY, "{what} n=0: the documented convention");
    assert!(sym::<T>(&[], 0, packed).ldlt_unpivoted().is_ok(), "{what} n=0 unpivoted");
    for (value, inertia) in [
        (2.0, Inertia { positive: 1, negative: 0, zero: 0 }),
        (-3.0, Inertia { positive: 0, negative: 1, zero: 0 }),
        (0.0, Inertia { positive: 0, negative: 0, zero: 1 }),
    ] {
        let what = format!("{what} [[{value}]]");
        let a = sym::<T>(&[value], 1, packed);
        let f = a.ldlt().unwrap();
        assert_eq!(f.inertia(), inertia, "{what}");
        assert_eq!(f.block_diagonal().d, vec![value], "{what}");
        assert_eq!(host(&f.reconstruct().unwrap()), vec![value], "{what}");
        let det = f.determinant();
        assert_eq!(det.mantissa * 2f64.powi(det.exponent as i32), value, "{what}: det");
        let b = upload::<T>(&[6.0, -1.5], 1, 2);
        if value == 0.0 {
            assert_eq!(f.zero_pivot(), Some(1), "{what}");
            assert_eq!(f.sign_log_det(), (0.0, f64::NEG_INFINITY), "{what}");
            assert!(matches!(f.solve(&b), Err(Error::Singular { pivot: 1 })), "{what}");
            assert_eq!(f.rcond().unwrap(), 0.0, "{what}");
            assert!(matches!(a.ldlt_unpivoted(), Err(Error::ZeroPivot { column: 1 })), "{what} unpivoted");
        } else {
            assert_eq!(f.zero_pivot(), None, "{what}");
            let (sign, log) = f.sign_log_det();
            assert_eq!(sign, value.signum(), "{what}");
            assert!((log - value.abs().ln()).abs() <= 4.0 * f64::EPSILON, "{what}: log|det| {log}");
            // x = b/d and rcond = 1, each to a rounding or two.
            let x = host(&f.solve(&b).unwrap());
            assert!(rel_error(&x, &[6.0 / value, -1.5 / value]) <= 2.0 * u::<T>(), "{what}: x = {x:?}");
            let rcond = f.rcond().unwrap();
            assert!((rcond - 1.0).abs() <= 4.0 * u::<T>(), "{what}: rcond {rcond}");
            assert_eq!(a.ldlt_unpivoted().unwrap().block_diagonal().d, vec![value], "{what} unpivoted");
        }
    }
}

/// `n = 0` (the empty product: det 1) and `n = 1` (positive, negative, zero).
#[test]
fn orders_zero_and_one() {
    for packed in [false, true] {
        orders_zero_and_one_in::<f64>(packed);
        orders_zero_and_one_in::<f32>(packed);
    }
}

/// `A` of order `m + zeros.len()` with exact zero rows and columns at
/// `zeros` and `Q·Λ·Qᵀ` elsewhere.
fn with_zero_rows(s: &Spectral, zeros: &[usize]) -> Vec<f64> {
    let n = s.n + zeros.len();
    let rest: Vec<usize> = (0..n).filter(|i| !zeros.contains(i)).collect();
    let mut a = vec![0.0; n * n];
    for (jj, &j) in rest.iter().enumerate() {
        for (ii, &i) in rest.iter().enumerate() {
            a[i + j * n] = s.a[ii + jj * s.n];
        }
    }
    a
}

/// The number of 1×1 blocks of `D` that are exactly zero.
fn zero_one_by_one_pivots(d: &gpumat::BlockDiagonal) -> usize {
    let (mut j, mut count) = (0, 0);
    while j < d.d.len() {
        if d.e[j] != 0.0 {
            j += 2;
        } else {
            count += usize::from(d.d[j] == 0.0);
            j += 1;
        }
    }
    count
}

/// What a singular `A` must give: `zero_pivot()` some column (with
/// Bunch–Kaufman, where `D` has an exact zero 1×1 pivot, `expected` when
/// known), `Singular` from a solve naming it, rcond 0, det 0, and the
/// factorization still within its bound — by both pivoted methods.
fn check_singular<T: Scalar>(a: &[f64], n: usize, packed: bool, inertia: Inertia, expected: Option<usize>, what: &str) {
    check_singular_by::<T>(a, n, packed, inertia, expected, LdltMethod::BunchKaufman, what);
    check_singular_by::<T>(a, n, packed, inertia, None, LdltMethod::Aasen, what);
}

fn check_singular_by<T: Scalar>(
    a: &[f64],
    n: usize,
    packed: bool,
    inertia: Inertia,
    expected: Option<usize>,
    method: LdltMethod,
    what: &str,
) {
    let what = format!("{} {what} n={n} {} {method:?}", T::NAME, storage(packed));
    let at = rounded::<T>(a);
    let f = sym::<T>(a, n, packed).ldlt_with(method, LdltParams::pivoted(n)).unwrap();
    let bound = C * n as f64 * u::<T>();
    let fe = rel_error(&host(&f.reconstruct().unwrap()), &at);
    assert!(fe <= bound, "{what}: ‖A − Pᵀ·L·D·Lᵀ·P‖_F/‖A‖_F = {fe:e} > 30·n·u = {bound:e}");
    assert_eq!(f.inertia(), inertia, "{what}: inertia");
    assert_eq!(sym::<T>(a, n, packed).inertia(0.0).unwrap(), inertia, "{what}: Sym::inertia(0)");
    let column = f.zero_pivot().unwrap_or_else(|| panic!("{what}: no zero pivot"));
    let d = f.block_diagonal();
    // Aasen's T is singular only up to rounding: its Bunch pivots are tiny, not zero.
    if method == LdltMethod::BunchKaufman {
        assert!(
            d.d[column - 1] == 0.0 && d.e[column - 1] == 0.0 && (column == 1 || d.e[column - 2] == 0.0),
            "{what}: zero pivot {column}, but D there is {:?}",
            (&d.d[column - 1], &d.e[column.max(2) - 2..column])
        );
        assert_eq!(zero_one_by_one_pivots(d), inertia.zero, "{what}: exact zero 1×1 pivots");
    }
    if let Some(expected) = expected {
        assert_eq!(column, expected, "{what}: zero pivot");
    }
    let b = upload::<T>(&random(&mut rng(3), n, 2), n, 2);
    match f.solve(&b) {
        Err(Error::Singular { pivot }) => assert_eq!(pivot, column, "{what}"),
        other => panic!("{what}: expected Singular, got {:?}", other.map(|x| x.shape())),
    }
    assert_eq!(f.rcond().unwrap(), 0.0, "{what}: rcond");
    assert_eq!(f.determinant(), gpumat::Determinant::ZERO, "{what}: det");
    assert_eq!(f.sign_log_det(), (0.0, f64::NEG_INFINITY), "{what}");
}

fn singular<T: Scalar>() {
    // Exact zero rows and columns around an indefinite Q·Λ·Qᵀ: they stay
    // zero under elimination, each a zero pivot.
    let s = Spectral::new(5, spectrum(6, 30, 1e2, 12));
    let base = s.inertia();
    for (zeros, first) in [(vec![0, 9, 20, 33], Some(1)), (vec![5, 17], None), (vec![30], None)] {
        let a = with_zero_rows(&s, &zeros);
        let inertia = Inertia { zero: zeros.len(), ..base };
        for packed in [false, true] {
            check_singular::<T>(&a, a.len().isqrt(), packed, inertia, first, &format!("zero rows {zeros:?}"));
        }
    }
    // [[1, 1], [1, 1]] at rows 4 and 11 of an SPD matrix whose eigenvalues
    // lie in [1, 2]: its diagonal is ≥ 1 and its other entries ≤ 1/2, in it
    // and in every Schur complement, so every pivot is 1×1 without
    // interchange, and the second of the pair is 1 − 1·1 = 0 exactly, at
    // column 11.
    let (n, pair) = (20, [3, 10]);
    let spd = Spectral::new(8, (0..n - 2).map(|i| 1.0 + i as f64 / (n - 3) as f64).collect());
    let mut a = with_zero_rows(&spd, &pair);
    for i in pair {
        for j in pair {
            a[i + j * n] = 1.0;
        }
    }
    for packed in [false, true] {
        let inertia = Inertia { positive: n - 1, negative: 0, zero: 1 };
        check_singular::<T>(&a, n, packed, inertia, Some(11), "[[1, 1], [1, 1]] inside SPD");
    }
    // The whole matrix zero.
    for packed in [false, true] {
        check_singular::<T>(&[0.0; 16], 4, packed, Inertia { positive: 0, negative: 0, zero: 4 }, Some(1), "zero");
    }
}

/// Singular matrices factor; `zero_pivot()` names the column, `inertia()`
/// counts the zeros, `solve` refuses, `rcond()` is 0.
#[test]
fn singular_matrices_name_the_zero_pivot() {
    singular::<f64>();
    singular::<f32>();
}

fn unpivoted_refusals<T: Scalar>(packed: bool) {
    let zero_diag = random_symmetric(9, 5, true).0;
    let tiny = [1e-20, 1.0, 1.0, 1.0];
    let ones = [1.0; 4];
    // The identity with a zero at (6, 6), past the first panel of 4.
    let mut eye6: Vec<f64> = (0..81).map(|p| f64::from(u8::from(p % 10 == 0))).collect();
    eye6[5 + 5 * 9] = 0.0;
    let cases: [(&[f64], usize, usize, Option<LdltParams>); 4] = [
        (&zero_diag, 5, 1, None),
        (&tiny, 2, 1, None),
        (&ones, 2, 2, None),
        (&eye6, 9, 6, Some(LdltParams { block_size: 4, leaf_size: 4, update_tile: 3 })),
    ];
    for (a, n, column, params) in cases {
        let what = format!("{} {} n={n} expecting column {column}", T::NAME, storage(packed));
        let s = sym::<T>(a, n, packed);
        match s.ldlt_with(LdltMethod::Unpivoted, params.unwrap_or(LdltParams::unpivoted(n))) {
            Err(Error::ZeroPivot { column: c }) => assert_eq!(c, column, "{what}"),
            other => panic!("{what}: expected ZeroPivot, got {:?}", other.err()),
        }
        assert!(s.ldlt().is_ok(), "{what}: pivoted");
    }
    // The tiny pivot is fine with pivoting: det = 1e−20 − 1.
    let f = sym::<T>(&tiny, 2, packed).ldlt().unwrap();
    assert_eq!(f.inertia(), Inertia { positive: 1, negative: 1, zero: 0 }, "{} {}", T::NAME, storage(packed));
    assert_eq!(f.sign_log_det().0, -1.0, "{} {}", T::NAME, storage(packed));
}

/// Without pivoting, a pivot of magnitude ≤ n·ε·max|aᵢⱼ| is refused, naming
/// its column; the pivoted factorization handles each of these.
#[test]
fn unpivoted_refuses_a_zero_pivot() {
    for packed in [false, true] {
        unpivoted_refusals::<f64>(packed);
        unpivoted_refusals::<f32>(packed);
    }
}

fn non_finite_in<T: Scalar>(n: usize, packed: bool) {
    let (a, _) = random_symmetric(n as u64, n, false);
    for (i, j, bad) in
        [(4, 2, f64::NAN), (0, 0, f64::INFINITY), (n - 1, 0, f64::NEG_INFINITY), (n - 1, n - 1, f64::NAN)]
    {
        let what = format!("{} n={n} {} A({}, {}) = {bad}", T::NAME, storage(packed), i + 1, j + 1);
        let mut m = a.clone();
        m[i + j * n] = bad;
        let s = sym::<T>(&m, n, packed);
        for method in [LdltMethod::BunchKaufman, LdltMethod::Aasen, LdltMethod::Unpivoted] {
            let params =
                if method == LdltMethod::Unpivoted { LdltParams::unpivoted(n) } else { LdltParams::pivoted(n) };
            match s.ldlt_with(method, params) {
                Err(Error::NonFinite { what: w, row, col, value }) => {
                    assert_eq!((w.as_str(), row, col), ("A", i + 1, j + 1), "{what}");
                    assert!(value.is_nan() == bad.is_nan() && (value.is_nan() || value == bad), "{what}: {value}");
                }
                other => panic!("{what}: expected NonFinite, got {:?}", other.err()),
            }
        }
        assert!(matches!(s.inertia(0.5), Err(Error::NonFinite { .. })), "{what}: Sym::inertia");
        // In the strictly upper part, which is not read: not refused, and
        // the factorization is that of the lower triangle's matrix.
        if i != j {
            let mut m = a.clone();
            m[j + i * n] = bad;
            let f = sym::<T>(&m, n, packed).ldlt().unwrap_or_else(|e| panic!("{what}, mirrored above: {e}"));
            let fe = rel_error(&host(&f.reconstruct().unwrap()), &rounded::<T>(&a));
            let bound = C * n as f64 * u::<T>();
            assert!(fe <= bound, "{what}, mirrored above: ‖A − Pᵀ·L·D·Lᵀ·P‖_F/‖A‖_F = {fe:e} > {bound:e}");
        }
    }
}

/// NaN and ±∞ in the stored lower triangle are refused naming their row
/// and column (1-based), in both storages, odd and even `n` (the RFP array
/// maps them back); in the unread strictly upper part they are ignored.
#[test]
fn non_finite_entries_are_refused_naming_their_position() {
    for packed in [false, true] {
        for n in [6, 7] {
            non_finite_in::<f64>(n, packed);
            non_finite_in::<f32>(n, packed);
        }
    }
}

/// A non-finite right-hand side is refused naming its position, one of the
/// wrong number of rows is a `DimensionMismatch`.
#[test]
fn solve_refuses_bad_right_hand_sides() {
    let n = 5;
    let (a, _) = random_symmetric(21, n, false);
    for packed in [false, true] {
        let f = sym::<f64>(&a, n, packed).ldlt().unwrap();
        let mut b = random(&mut rng(22), n, 3);
        b[2 + n] = f64::NAN;
        match f.solve(&upload::<f64>(&b, n, 3)) {
            Err(Error::NonFinite { what, row: 3, col: 2, .. }) => assert_eq!(what, "B"),
            other => panic!("{}: expected NonFinite at (3, 2), got {:?}", storage(packed), other.err()),
        }
        b[2 + n] = 0.0;
        b[4 + 2 * n] = f64::INFINITY;
        assert!(matches!(f.solve(&upload::<f64>(&b, n, 3)), Err(Error::NonFinite { row: 5, col: 3, .. })));
        for (rows, cols) in [(n - 1, 1), (n + 1, 2), (0, 1)] {
            let r = f.solve(&upload::<f64>(&vec![1.0; rows * cols], rows, cols));
            assert!(matches!(r, Err(Error::DimensionMismatch { .. })), "{}: B {rows}×{cols}", storage(packed));
        }
        let f32 = sym::<f32>(&a, n, packed).ldlt().unwrap();
        let r = f32.solve(&upload::<f32>(&[f64::NAN; 5], n, 1));
        assert!(matches!(r, Err(Error::NonFinite { row: 1, col: 1, .. })), "f32 {}", storage(packed));
    }
}

fn determinant_case<T: Scalar>(conds: &[f64]) -> f64 {
    let mut worst = 0.0f64;
    let n = 100;
    for (k, &cond) in conds.iter().enumerate() {
        // Definite and indefinite, with |det| = 10^±400 and more.
        for (negative, scale) in [(0, 1.0), (33, 1.0), (50, 1e4), (100, 1e-4), (67, 1e-4)] {
            let lambda: Vec<f64> = spectrum(k as u64, n, cond, negative).iter().map(|l| l * scale).collect();
            let s = Spectral::new(k as u64 + 60, lambda);
            let exact = s.log_abs_det();
            let bound = C * n as f64 * u::<T>() * s.kappa() * exact.abs().max(1.0);
            for packed in [false, true] {
                let what = format!("{} κ={cond:e} scale {scale:e}, {negative} negative, {}", T::NAME, storage(packed));
                let f = sym::<T>(&s.a, n, packed).ldlt().unwrap();
                let (sign, log) = f.sign_log_det();
                let want = if negative % 2 == 0 { 1.0 } else { -1.0 };
                assert_eq!(sign, want, "{what}: sign");
                assert_eq!(f.determinant().mantissa.signum(), want, "{what}: determinant's sign");
                let err = (log - exact).abs();
                assert!(err <= bound, "{what}: log|det| {log} vs {exact}: {err:e} > {bound:e}");
                worst = worst.max(err / bound);
                // mantissa·2^exponent is the same number.
                let det = f.determinant();
                let again = det.mantissa.abs().ln() + det.exponent as f64 * std::f64::consts::LN_2;
                assert!((again - log).abs() <= 1e-12 * log.abs().max(1.0), "{what}");
                assert!((1.0..2.0).contains(&det.mantissa.abs()), "{what}: mantissa {}", det.mantissa);
            }
        }
    }
    worst
}

/// `sign_log_det()` against the known eigenvalues, with determinants far
/// beyond f64's range (`|det| = 10^±400` and more): |log|det| − Σ log|λᵢ||
/// ≤ 30·n·u·κ₂·max(1, |Σ log|λᵢ||); the sign is `(−1)^(negative count)`.
#[test]
fn determinant_against_the_spectrum() {
    let w64 = determinant_case::<f64>(&[2.0, 1e2, 1e6, 1e12]);
    let w32 = determinant_case::<f32>(&[2.0, 1e2, 1e3]);
    println!("log|det|: worst error/bound f64 {w64:.3e}, f32 {w32:.3e}");
}

fn condition_case<T: Scalar>(conds: &[f64]) -> (f64, f64) {
    let mut range = (f64::INFINITY, 0.0f64);
    for n in [2, 30, 100] {
        for (k, &cond) in conds.iter().enumerate() {
            let s = Spectral::new(n as u64 * 7 + k as u64, spectrum(k as u64, n, cond, n / 3));
            let truth = 1.0 / (one_norm(&rounded::<T>(&s.a), n) * s.inverse_one_norm());
            for packed in [false, true] {
                let est = sym::<T>(&s.a, n, packed).ldlt().unwrap().rcond().unwrap();
                let ratio = est / truth;
                assert!(
                    (0.1..=10.0).contains(&ratio),
                    "{} n={n} κ={cond:e} {}: rcond {est:e} vs 1/κ₁ = {truth:e}",
                    T::NAME,
                    storage(packed)
                );
                range = (range.0.min(ratio), range.1.max(ratio));
            }
        }
    }
    range
}

/// `rcond()` within a factor 10 either way of `1/(‖A‖₁·‖Q·Λ⁻¹·Qᵀ‖₁)`.
#[test]
fn condition_estimate_within_a_factor_of_ten() {
    let r64 = condition_case::<f64>(&[1e2, 1e6, 1e12]);
    let r32 = condition_case::<f32>(&[1e2, 1e4]);
    println!("rcond / (1/κ₁): f64 in [{:.3}, {:.3}], f32 in [{:.3}, {:.3}]", r64.0, r64.1, r32.0, r32.1);
}

/// `L·D·Lᵀ` and `P·A·Pᵀ` built on the host from what the factorization
/// exposes — the stored factor (`L` strictly below the diagonal, in the
/// full array or in the RFP array at `packed_layout(n)`), `pivots()`
/// (row and column `j` exchanged with `ipiv[j] − 1`, in order) and
/// `block_diagonal()` — agree within ‖P·A·Pᵀ − L·D·Lᵀ‖_F ≤ 30·n·u·‖A‖_F:
/// the documented layout, independently of `reconstruct()`.
fn host_reconstruction<T: Scalar>(
    a: &[f64],
    n: usize,
    packed: bool,
    (method, params): (LdltMethod, LdltParams),
    what: &str,
) -> f64 {
    let what = format!("{} {what} n={n} {} {method:?} {params:?}", T::NAME, storage(packed));
    let f = sym::<T>(a, n, packed).ldlt_with(method, params).unwrap();
    let stored = host(f.stored());
    let rfp = gpumat::api::packed_layout(n);
    let entry = |i: usize, j: usize| if packed { stored[rfp.index(i, j).unwrap()] } else { stored[i + j * n] };
    let l: Vec<f64> = (0..n * n)
        .map(|p| match (p % n, p / n) {
            (i, j) if i == j => 1.0,
            (i, j) if i > j => entry(i, j),
            _ => 0.0,
        })
        .collect();
    // D: Bunch–Kaufman's block diagonal, or Aasen's tridiagonal T.
    let d = f.middle();
    let mut dense = vec![0.0; n * n];
    for j in 0..n {
        dense[j + j * n] = d.d[j];
        if j + 1 < n && d.e[j] != 0.0 {
            if method == LdltMethod::BunchKaufman {
                assert!(j == 0 || d.e[j - 1] == 0.0, "{what}: 2×2 blocks overlap at {j}");
                assert_eq!(entry(j + 1, j), 0.0, "{what}: L(j + 1, j) of a 2×2 block at {j}");
            }
            dense[j + 1 + j * n] = d.e[j];
            dense[j + (j + 1) * n] = d.e[j];
        }
    }
    let (ld, ..) = naive_matmul(&l, (n, n), false, &dense, (n, n), false);
    let (ldlt, ..) = naive_matmul(&ld, (n, n), false, &l, (n, n), true);
    let mut pap = rounded::<T>(a);
    for (j, &p) in f.pivots().unwrap().iter().enumerate() {
        let p = p as usize - 1;
        assert!(p >= j && p < n, "{what}: pivot {j} → {p}");
        (0..n).for_each(|c| pap.swap(j + c * n, p + c * n));
        (0..n).for_each(|r| pap.swap(r + j * n, r + p * n));
    }
    let err = rel_error(&ldlt, &pap);
    let bound = C * n as f64 * u::<T>();
    assert!(err <= bound, "{what}: ‖P·A·Pᵀ − L·D·Lᵀ‖_F/‖A‖_F = {err:e} > 30·n·u = {bound:e}");
    err / bound
}

/// [`host_reconstruction`] at n from 1 to 60, in panels of 3 and of 64.
#[test]
fn the_stored_factor_pivots_and_d_rebuild_a_on_the_host() {
    let mut worst = 0.0f64;
    for n in [1, 2, 9, 24, 25, 60] {
        let s = Spectral::new(n as u64 + 700, spectrum(n as u64, n, 1e4, n / 2));
        let zero = if n > 1 { random_symmetric(n as u64 + 710, n, true).0 } else { vec![0.0] };
        for packed in [false, true] {
            for params in [LdltParams { block_size: 3, leaf_size: 4, update_tile: 4 }, LdltParams::pivoted(n)] {
                for method in [LdltMethod::BunchKaufman, LdltMethod::Aasen] {
                    for (a, what) in [(&s.a, "Q·Λ·Qᵀ"), (&zero, "zero diagonal")] {
                        worst = worst.max(host_reconstruction::<f64>(a, n, packed, (method, params), what));
                        worst = worst.max(host_reconstruction::<f32>(a, n, packed, (method, params), what));
                    }
                }
            }
        }
    }
    println!("host reconstruction: worst error/bound {worst:.3e}");
}

/// One matrix, many blockings: panels of 1 to more than `n` columns,
/// trailing updates by tiles narrower than a panel and wider than `n`.
#[test]
fn every_blocking_gives_a_factorization_within_the_bound() {
    let n = 80;
    let s = Spectral::new(90, spectrum(91, n, 1e6, 40));
    let (zero, zero_inertia) = random_symmetric(92, n, true);
    let s32 = Spectral::new(93, spectrum(94, n, 1e2, 40));
    let mut worst = Worst::default();
    for (block_size, update_tile) in [(1, 3), (2, 1024), (3, 16), (7, 1), (7, 50), (64, 16), (79, 7), (150, 1)] {
        let params = LdltParams { block_size, leaf_size: 4, update_tile };
        for packed in [false, true] {
            let how = How::packed(packed).with(params);
            worst.add(check_spectral::<f64>(&s, how, "Q·Λ·Qᵀ"));
            worst.add(check::<f64>(&zero, n, how, Some(zero_inertia), "zero diagonal").worst);
            if block_size <= 7 {
                worst.add(check_spectral::<f32>(&s32, how, "Q·Λ·Qᵀ"));
            }
        }
    }
    worst.report("blockings");
}

/// The default blocking (panels of 64) at orders around its boundaries.
#[test]
fn orders_around_block_boundaries() {
    let mut worst = Worst::default();
    for n in [63, 64, 65, 127, 128, 129] {
        let s = Spectral::new(n as u64 + 110, spectrum(n as u64, n, 1e4, n / 2));
        for packed in [false, true] {
            worst.add(check_spectral::<f64>(&s, How::packed(packed), "Q·Λ·Qᵀ"));
            if n < 100 {
                worst.add(check_spectral::<f32>(&s, How::packed(packed), "Q·Λ·Qᵀ"));
            }
        }
    }
    worst.report("block boundaries");
}

/// RFP at odd and even orders (the two triangles of the array split the
/// columns unevenly for odd `n`), with panels and tiles that cross the
/// split.
#[test]
fn rfp_at_odd_and_even_orders() {
    let mut worst = Worst::default();
    for n in (2..=12).chain([15, 16, 31, 32, 33]) {
        let s = Spectral::new(n as u64 + 120, spectrum(n as u64, n, 1e3, n / 2));
        let (zero, zero_inertia) = random_symmetric(n as u64 + 130, n, true);
        for params in [
            LdltParams { block_size: 2, leaf_size: 4, update_tile: 4 },
            LdltParams { block_size: 3, leaf_size: 4, update_tile: 2 },
            LdltParams::pivoted(n),
        ] {
            worst.add(check_spectral::<f64>(&s, RFP.with(params), "Q·Λ·Qᵀ"));
            worst.add(check_spectral::<f32>(&s, RFP.with(params), "Q·Λ·Qᵀ"));
            worst.add(check::<f64>(&zero, n, RFP.with(params), Some(zero_inertia), "zero diagonal").worst);
        }
    }
    worst.report("RFP odd and even");
}

/// A matrix whose Bunch–Kaufman pivots are known in advance: `pattern`
/// lists its blocks, 1 for a 1×1 block ±(1 to 2), 2 for a 2×2 block [[0,
/// c], [c, 0]] (c from 1 to 2), in order along the diagonal; to their
/// direct sum `S` is added a coupling `ε·R`, `R` symmetric with zero
/// diagonal and entries uniform in [−1, 1), `ε = 1/(4n)`. With
/// `‖ε·R‖₂ ≤ 1/4` every column stays dominated by its block: each 1×1 block
/// is a 1×1 pivot and each 2×2 block a 2×2 pivot, without interchanges, and
/// the inertia is `S`'s (Weyl).
fn with_pivots(state: u64, pattern: &[usize]) -> (Vec<f64>, Inertia) {
    let n: usize = pattern.iter().sum();
    let mut r = rng(state);
    let eps = 0.25 / n as f64;
    let mut a = symmetrized(&random(&mut r, n, n), n);
    a.iter_mut().for_each(|x| *x *= eps);
    let mut inertia = Inertia::default();
    let mut j = 0;
    for &size in pattern {
        if size == 1 {
            let d = if r.random_bool(0.5) { -1.0 } else { 1.0 } * r.random_range(1.0..2.0);
            a[j + j * n] = d;
            if d > 0.0 {
                inertia.positive += 1;
            } else {
                inertia.negative += 1;
            }
        } else {
            let c = r.random_range(1.0..2.0);
            a[j + j * n] = 0.0;
            a[j + 1 + (j + 1) * n] = 0.0;
            a[j + 1 + j * n] = c;
            a[j + (j + 1) * n] = c;
            inertia.positive += 1;
            inertia.negative += 1;
        }
        j += size;
    }
    (a, inertia)
}

/// How many panels of `nb` columns end with a 2×2 pivot taking one column
/// more, for `D`'s blocks in `pattern` (as `factor_in_place` takes them).
fn panels_widened(pattern: &[usize], nb: usize) -> usize {
    let n: usize = pattern.iter().sum();
    let starts: Vec<usize> =
        pattern.iter().scan(0, |j, &s| Some((std::mem::replace(j, *j + s), s))).map(|p| p.0).collect();
    let size = |j: usize| pattern[starts.iter().position(|&s| s == j).unwrap()];
    let (mut k, mut widened) = (0, 0);
    while k < n {
        let nbk = nb.min(n - k);
        let mut j = k;
        while j < k + nbk {
            j += size(j);
        }
        widened += usize::from(j == k + nbk + 1);
        k = j;
    }
    widened
}

/// 2×2 pivots chosen at the last column of a panel, which then takes one
/// column more: with panels of 1, every 2×2 block; with wider ones, where
/// the pattern puts them. `D`'s blocks and `P = I` are known exactly.
#[test]
fn two_by_two_pivots_at_the_last_column_of_a_panel() {
    let mut worst = Worst::default();
    let mixed: Vec<usize> = {
        let mut r = rng(140);
        let mut p = Vec::new();
        while p.iter().sum::<usize>() < 40 {
            p.push(if r.random_bool(0.5) { 2 } else { 1 });
        }
        p
    };
    // Every diagonal entry zero: 2×2 blocks only, odd and even counts.
    let pairs = [vec![2; 20], vec![2; 21]];
    for pattern in std::iter::once(&mixed).chain(&pairs) {
        let n: usize = pattern.iter().sum();
        let (a, inertia) = with_pivots(n as u64, pattern);
        let e: Vec<bool> = pattern.iter().flat_map(|&s| if s == 2 { vec![true, false] } else { vec![false] }).collect();
        for block_size in [1, 2, 3, 7, 64] {
            let widened = panels_widened(pattern, block_size);
            if block_size == 1 || (block_size < 8 && pattern == &mixed) {
                assert!(widened >= 1, "the pattern {pattern:?} widens no panel of {block_size}");
            }
            for update_tile in [3, 1024] {
                for packed in [false, true] {
                    let how = How::packed(packed).with(LdltParams { block_size, leaf_size: 4, update_tile });
                    let c = check::<f64>(&a, n, how, Some(inertia), "known pivots");
                    let what = format!("n={n} block {block_size} {}", storage(packed));
                    assert_eq!(c.f.block_diagonal().e.iter().map(|&x| x != 0.0).collect::<Vec<_>>(), e, "{what}");
                    assert_eq!(c.f.pivots().unwrap(), (1..=n as i32).collect::<Vec<_>>(), "{what}");
                    worst.add(c.worst);
                    worst.add(check::<f32>(&a, n, how, Some(inertia), "known pivots").worst);
                }
            }
        }
    }
    worst.report("2×2 pivots at panel ends");
}

/// `Q·Λ·Qᵀ` at n = 1000 (κ = 1e6) and 2000 (κ = 1e3) in f64, full and RFP,
/// and in f32 (κ = 1e2): the bounds of the module's doc, and the inertia.
#[test]
#[ignore = "long: run by CI's long job (cargo test -- --ignored)"]
fn long_chosen_spectra_of_order_1000_and_2000() {
    let mut worst = Worst::default();
    for (n, cond) in [(1000, 1e6), (2000, 1e3)] {
        let s = Spectral::new(n as u64, spectrum(n as u64 + 1, n, cond, n / 3));
        for packed in [false, true] {
            worst.add(check_spectral::<f64>(&s, How::packed(packed), "Q·Λ·Qᵀ"));
        }
        worst.add(check_spectral::<f32>(
            &Spectral::new(n as u64, spectrum(n as u64 + 1, n, 1e2, n / 3)),
            FULL,
            "Q·Λ·Qᵀ",
        ));
    }
    worst.report("long Q·Λ·Qᵀ");
}

/// A KKT matrix of order 1500 (n_H = 1000, m = 500), pivoted as it is and
/// shuffled, unpivoted with −δ·I for its zero block; a zero diagonal at
/// n = 1200: the bounds of the module's doc, and the inertia.
#[test]
#[ignore = "long: run by CI's long job (cargo test -- --ignored)"]
fn long_kkt_and_zero_diagonal() {
    let mut worst = Worst::default();
    let (nh, m) = (1000, 500);
    let n = nh + m;
    let inertia = Some(Inertia { positive: nh, negative: m, zero: 0 });
    let a = kkt(1, nh, m, 0.0);
    let mut p: Vec<usize> = (0..n).collect();
    p.shuffle(&mut rng(2));
    worst.add(check::<f64>(&a, n, FULL, inertia, "KKT").worst);
    worst.add(check::<f64>(&permuted(&a, n, &p), n, RFP, inertia, "KKT interleaved").worst);
    worst.add(check::<f64>(&kkt(1, nh, m, 1e-2), n, FULL.unpivoted(), inertia, "quasi-definite δ=1e-2").worst);
    let (m, n) = (600, 1200);
    let inertia = Inertia { positive: m, negative: m, zero: 0 };
    let c = check::<f64>(&swap_block(3, m), n, RFP, Some(inertia), "[[0, C], [Cᵀ, 0]] shuffled");
    assert!(c.f.block_diagonal().e[0] != 0.0, "zero diagonal n={n}: the first pivot is 2×2");
    worst.add(c.worst);
    worst.report("long KKT and zero diagonal");
}
