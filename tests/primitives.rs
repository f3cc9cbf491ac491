//! Every primitive of the `Backend` trait on the device under test, against
//! references computed on the host in FP64 by naive loops from the very
//! (rounded) values the device sees.
//!
//! The tests are written once, generic over the backend, and run on
//! `common::device()`: the CPU in CI, the GPU when `GPUMAT_DEVICE=cuda`.
//!
//! Operands are sub-blocks of larger buffers, at a random offset and with a
//! random leading dimension `ld > rows`, so the strided addressing is
//! exercised. The padding of a block that is written holds `SENTINEL` and
//! must keep it, bit for bit; the padding of a block that is only read holds
//! NaN, so that reading outside the block poisons the result. Inputs are
//! checked to be unchanged after every call.
//!
//! Each check states its bound; `u` is the unit roundoff of the type under
//! test. Normwise bounds carry a factor `C = 2`: one for the backend's
//! worst-case error, one for the rounding of the FP64 reference itself, which
//! is of the same order when the type under test is f64.

mod common;

use std::fmt::Debug;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use common::{frobenius, naive_matmul, rng, u};
use gpumat::backend::{Backend, Block, BufferMut, DeviceBuffer, Diag, Norm, Op, Side, View, ViewMut, random};
use gpumat::layout::{self, Full, Rfp, Transr, Uplo, in_triangle};
use gpumat::{Device, Error, Result, Scalar};
use proptest::prelude::*;
use rand::Rng;
use rand::rngs::StdRng;

/// The device under test, made once for the whole file.
fn dev() -> &'static Device {
    static DEV: OnceLock<Device> = OnceLock::new();
    DEV.get_or_init(common::device)
}

/// What the padding of a written block holds, and must still hold afterwards.
const SENTINEL: f64 = 7777.0;
const NAN: f64 = f64::NAN;
/// Safety factor of the normwise bounds (see the top of the file).
const C: f64 = 2.0;

const OPS: [Op; 2] = [Op::NoTrans, Op::Trans];
const UPLOS: [Uplo; 2] = [Uplo::Lower, Uplo::Upper];
const SIDES: [Side; 2] = [Side::Left, Side::Right];
const DIAGS: [Diag; 2] = [Diag::NonUnit, Diag::Unit];
const NORMS: [Norm; 4] = [Norm::One, Norm::Inf, Norm::Frobenius, Norm::Max];
const RFP_CASES: [(Transr, Uplo); 4] = [
    (Transr::Normal, Uplo::Lower),
    (Transr::Normal, Uplo::Upper),
    (Transr::Transpose, Uplo::Lower),
    (Transr::Transpose, Uplo::Upper),
];

/// The 16 cases of `trsm` and `trmm`.
fn tri_cases() -> impl Iterator<Item = (Side, Uplo, Op, Diag)> {
    SIDES.into_iter().flat_map(|s| {
        UPLOS.into_iter().flat_map(move |ul| OPS.into_iter().flat_map(move |o| DIAGS.map(|d| (s, ul, o, d))))
    })
}

/// Bitwise equality, any NaN matching any NaN: "unchanged".
fn same(x: f64, y: f64) -> bool {
    x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
}

/// Equality of values (−0 = +0), any NaN matching any NaN: "exact".
fn equal(x: f64, y: f64) -> bool {
    x == y || (x.is_nan() && y.is_nan())
}

/// ‖x − y‖_F; NaN if either holds a NaN.
fn dist(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len(), "compared arrays differ in length");
    frobenius(&x.iter().zip(y).map(|(a, b)| a - b).collect::<Vec<_>>())
}

fn uniform(r: &mut StdRng) -> f64 {
    r.random_range(-1.0..1.0)
}

// ---------------------------------------------------------------------------
// Operands: blocks inside padded buffers.

/// A buffer's contents on the host, and the block of it an operation uses.
#[derive(Clone, Debug)]
struct Host<T> {
    data: Vec<T>,
    block: Block,
}

impl<T: Scalar> Host<T> {
    /// A `rows × cols` block at a random offset (0–4) with a random leading
    /// dimension `rows + 1 … rows + 3`, followed by 0–3 more entries; every
    /// entry, in the block and out, holds `pad`.
    fn new(r: &mut StdRng, rows: usize, cols: usize, pad: f64) -> Self {
        let offset = r.random_range(0..5);
        let ld = rows + r.random_range(1..4);
        let block = Block { offset, rows, cols, ld };
        let len = block.end() + r.random_range(0..4);
        Host { data: vec![T::from_f64(pad); len], block }
    }

    /// As `new`, the block filled with uniform entries in [-1, 1).
    fn random(r: &mut StdRng, rows: usize, cols: usize, pad: f64) -> Self {
        let mut h = Self::new(r, rows, cols, pad);
        h.fill(|_, _| uniform(r));
        h
    }

    fn rows(&self) -> usize {
        self.block.rows
    }

    fn cols(&self) -> usize {
        self.block.cols
    }

    /// Sets block entry `(i, j)` to `f(i, j)` (rounded to `T`), column by column.
    fn fill(&mut self, mut f: impl FnMut(usize, usize) -> f64) {
        for j in 0..self.cols() {
            for i in 0..self.rows() {
                self.set(i, j, f(i, j));
            }
        }
    }

    fn get(&self, i: usize, j: usize) -> f64 {
        self.data[self.block.index(i, j)].to_f64()
    }

    fn set(&mut self, i: usize, j: usize, v: f64) {
        let k = self.block.index(i, j);
        self.data[k] = T::from_f64(v);
    }

    /// The block as a dense column-major `rows × cols` array.
    fn dense(&self) -> Vec<f64> {
        (0..self.cols()).flat_map(|j| (0..self.rows()).map(move |i| self.get(i, j))).collect()
    }

    /// Which block entry buffer entry `k` is, if any.
    fn locate(&self, k: usize) -> Option<(usize, usize)> {
        let b = self.block;
        let d = k.checked_sub(b.offset)?;
        let (i, j) = (d % b.ld, d / b.ld);
        (i < b.rows && j < b.cols).then_some((i, j))
    }

    fn upload<B: Backend>(&self, be: &B) -> Placed<B, T> {
        Placed { host: self.clone(), buf: be.upload(&self.data).unwrap() }
    }

    /// Asserts that `after` holds what `self` does, bit for bit, except at the
    /// block entries where `may_change`.
    fn assert_kept(&self, after: &Host<T>, may_change: impl Fn(usize, usize) -> bool, what: &str) {
        assert_eq!(self.data.len(), after.data.len(), "{what}: buffer length");
        for (k, (x, y)) in self.data.iter().zip(&after.data).enumerate() {
            let at = self.locate(k);
            if at.is_some_and(|(i, j)| may_change(i, j)) {
                continue;
            }
            let place = match at {
                Some((i, j)) => format!("block entry ({i}, {j})"),
                None => "outside the block".to_string(),
            };
            assert!(same(x.to_f64(), y.to_f64()), "{what}: buffer entry {k} ({place}) changed from {x} to {y}");
        }
    }
}

/// A host operand uploaded to the backend.
struct Placed<B: Backend, T: Scalar> {
    host: Host<T>,
    buf: B::Buffer<T>,
}

impl<B: Backend, T: Scalar> Placed<B, T> {
    fn view(&self) -> View<'_, B, T> {
        View::new(&self.buf, self.host.block).unwrap()
    }

    fn view_mut(&mut self) -> ViewMut<'_, B, T> {
        ViewMut::new(&mut self.buf, self.host.block).unwrap()
    }

    /// The buffer as it is now, with the same block.
    fn fetch(&self, be: &B) -> Host<T> {
        let mut data = vec![T::default(); self.buf.len()];
        be.download(&self.buf, &mut data).unwrap();
        Host { data, block: self.host.block }
    }

    /// The operation wrote the block (entries where `may_change`) and nothing
    /// else; returns the buffer as it is now.
    fn written(&self, be: &B, may_change: impl Fn(usize, usize) -> bool, what: &str) -> Host<T> {
        let after = self.fetch(be);
        self.host.assert_kept(&after, may_change, what);
        after
    }

    fn assert_unchanged(&self, be: &B, what: &str) {
        self.host.assert_kept(&self.fetch(be), |_, _| false, &format!("{what} (input)"));
    }
}

/// Runs a call that the backend must never answer with a panic: a panic
/// inside it is reported with the case that caused it.
#[track_caller]
fn call<X>(what: &str, f: impl FnOnce() -> Result<X>) -> Result<X> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => panic!("{what}: the call panicked instead of returning: {}", panic_text(&*payload)),
    }
}

/// The message of a caught panic.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// Runs a call that must succeed; panics with the case on an `Err`.
#[track_caller]
fn ok<X>(what: &str, f: impl FnOnce() -> Result<X>) -> X {
    call(what, f).unwrap_or_else(|e| panic!("{what}: unexpected error: {e}"))
}

// ---------------------------------------------------------------------------
// Strategies.

/// A size in 0..=40, zero one time in thirteen.
fn dim() -> impl Strategy<Value = usize> {
    prop_oneof![1 => Just(0usize), 12 => 1..=40usize]
}

/// A scalar coefficient (`α`, `β`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Coef {
    /// Uniform in [-2, 2).
    Random,
    Zero,
    One,
    MinusOne,
}

impl Coef {
    fn draw<T: Scalar>(self, r: &mut StdRng) -> T {
        T::from_f64(match self {
            Coef::Random => r.random_range(-2.0..2.0),
            Coef::Zero => 0.0,
            Coef::One => 1.0,
            Coef::MinusOne => -1.0,
        })
    }
}

fn coef() -> impl Strategy<Value = Coef> {
    prop_oneof![4 => Just(Coef::Random), 1 => Just(Coef::Zero), 1 => Just(Coef::One), 1 => Just(Coef::MinusOne)]
}

fn nonzero_coef() -> impl Strategy<Value = Coef> {
    prop_oneof![4 => Just(Coef::Random), 1 => Just(Coef::One), 1 => Just(Coef::MinusOne)]
}

// ---------------------------------------------------------------------------
// Level 3: gemm and syrk.

/// `‖C − C_ref‖_F` and its bound `C·(k+2)·u·(|α|·‖A‖_F·‖B‖_F + |β|·‖C₀‖_F)`
/// for `C = α·op(A)·op(B) + β·C₀`, `C_ref` computed in f64 (k products and
/// sums per entry, the scaling by α and the update by β: k + 2 roundings).
/// `C₀` is not read when `β = 0`.
#[allow(clippy::too_many_arguments)]
fn gemm_error<T: Scalar>(
    alpha: T,
    a: &Host<T>,
    op_a: Op,
    b: &Host<T>,
    op_b: Op,
    beta: T,
    c0: &Host<T>,
    c: &Host<T>,
) -> (f64, f64) {
    let k = op_a.apply(a.rows(), a.cols()).1;
    let (ab, ..) = naive_matmul(
        &a.dense(),
        (a.rows(), a.cols()),
        op_a == Op::Trans,
        &b.dense(),
        (b.rows(), b.cols()),
        op_b == Op::Trans,
    );
    let (alpha, beta) = (alpha.to_f64(), beta.to_f64());
    let c0 = c0.dense();
    let reference: Vec<f64> =
        ab.iter().zip(&c0).map(|(x, c)| alpha * x + if beta == 0.0 { 0.0 } else { beta * c }).collect();
    let mut scale = alpha.abs() * frobenius(&a.dense()) * frobenius(&b.dense());
    if beta != 0.0 {
        scale += beta.abs() * frobenius(&c0);
    }
    (dist(&c.dense(), &reference), C * (k + 2) as f64 * u::<T>() * scale)
}

#[derive(Clone, Copy, Debug)]
struct GemmCase {
    m: usize,
    n: usize,
    k: usize,
    alpha: Coef,
    /// `Zero` puts NaN in C: BLAS does not read C when β = 0.
    beta: Coef,
    seed: u64,
}

fn check_gemm<B: Backend, T: Scalar>(be: &B, case: GemmCase) {
    let r = &mut rng(case.seed);
    let GemmCase { m, n, k, .. } = case;
    for op_a in OPS {
        for op_b in OPS {
            let what = format!("gemm {} op_a = {op_a:?}, op_b = {op_b:?}, {case:?}", T::NAME);
            let (alpha, beta) = (case.alpha.draw::<T>(r), case.beta.draw::<T>(r));
            let (ar, ac) = op_a.apply(m, k);
            let (br, bc) = op_b.apply(k, n);
            let a = Host::<T>::random(r, ar, ac, NAN).upload(be);
            let b = Host::<T>::random(r, br, bc, NAN).upload(be);
            let mut c0 = Host::<T>::random(r, m, n, SENTINEL);
            if beta == T::ZERO {
                c0.fill(|_, _| NAN);
            }
            let mut c = c0.upload(be);
            ok(&what, || be.gemm(alpha, a.view(), op_a, b.view(), op_b, beta, c.view_mut()));
            let got = c.written(be, |_, _| true, &what);
            a.assert_unchanged(be, &what);
            b.assert_unchanged(be, &what);
            let (err, bound) = gemm_error(alpha, &a.host, op_a, &b.host, op_b, beta, &c0, &got);
            assert!(err <= bound, "{what}: ‖C − C_ref‖_F = {err:e} > {bound:e}");
        }
    }
}

/// `‖C − C_ref‖_F` on the `uplo` triangle, and its bound
/// `C·(k+2)·u·(|α|·‖A‖²_F + |β|·‖C₀‖_F)`, for `C = α·op(A)·op(A)ᵀ + β·C₀`.
#[allow(clippy::too_many_arguments)]
fn syrk_error<T: Scalar>(uplo: Uplo, op: Op, alpha: T, a: &Host<T>, beta: T, c0: &Host<T>, c: &Host<T>) -> (f64, f64) {
    let (n, k) = op.apply(a.rows(), a.cols());
    let shape = (a.rows(), a.cols());
    let (aat, ..) = naive_matmul(&a.dense(), shape, op == Op::Trans, &a.dense(), shape, op == Op::NoTrans);
    let (alpha, beta) = (alpha.to_f64(), beta.to_f64());
    let (mut err, mut c0_norm) = (0.0, 0.0);
    for j in 0..n {
        for i in (0..n).filter(|&i| in_triangle(uplo, i, j)) {
            let old = if beta == 0.0 { 0.0 } else { beta * c0.get(i, j) };
            err += (c.get(i, j) - (alpha * aat[i + j * n] + old)).powi(2);
            c0_norm += old * old;
        }
    }
    let scale = alpha.abs() * frobenius(&a.dense()).powi(2) + c0_norm.sqrt();
    (err.sqrt(), C * (k + 2) as f64 * u::<T>() * scale)
}

#[derive(Clone, Copy, Debug)]
struct SyrkCase {
    n: usize,
    k: usize,
    alpha: Coef,
    /// `Zero` puts NaN in the `uplo` triangle of C.
    beta: Coef,
    seed: u64,
}

fn check_syrk<B: Backend, T: Scalar>(be: &B, case: SyrkCase) {
    let r = &mut rng(case.seed);
    let SyrkCase { n, k, .. } = case;
    for uplo in UPLOS {
        for op in OPS {
            let what = format!("syrk {} uplo = {uplo:?}, op = {op:?}, {case:?}", T::NAME);
            let (alpha, beta) = (case.alpha.draw::<T>(r), case.beta.draw::<T>(r));
            let (ar, ac) = op.apply(n, k);
            let a = Host::<T>::random(r, ar, ac, NAN).upload(be);
            // The other triangle holds old values that must survive bit for bit.
            let mut c0 = Host::<T>::random(r, n, n, SENTINEL);
            if beta == T::ZERO {
                for j in 0..n {
                    for i in (0..n).filter(|&i| in_triangle(uplo, i, j)) {
                        c0.set(i, j, NAN);
                    }
                }
            }
            let mut c = c0.upload(be);
            ok(&what, || be.syrk(uplo, op, alpha, a.view(), beta, c.view_mut()));
            let got = c.written(be, |i, j| in_triangle(uplo, i, j), &what);
            a.assert_unchanged(be, &what);
            let (err, bound) = syrk_error(uplo, op, alpha, &a.host, beta, &c0, &got);
            assert!(err <= bound, "{what}: ‖C − C_ref‖_F on the triangle = {err:e} > {bound:e}");
        }
    }
}

// ---------------------------------------------------------------------------
// Level 3: trsm and trmm.

/// An `n × n` block whose `uplo` triangle is well conditioned: off-diagonal
/// entries uniform in [-1/n, 1/n), diagonal entries of magnitude in [2, 3)
/// with a random sign, so every row is strictly diagonally dominant. The
/// other triangle holds NaN, and so does the diagonal for `Unit`: neither may
/// be read.
fn triangular<T: Scalar>(r: &mut StdRng, n: usize, uplo: Uplo, diag: Diag) -> Host<T> {
    let mut a = Host::<T>::new(r, n, n, NAN);
    a.fill(|i, j| {
        if i == j {
            match diag {
                Diag::Unit => NAN,
                Diag::NonUnit => (2.0 + r.random_range(0.0..1.0)) * if r.random_bool(0.5) { 1.0 } else { -1.0 },
            }
        } else if in_triangle(uplo, i, j) {
            uniform(r) / n as f64
        } else {
            NAN
        }
    });
    a
}

/// The triangle of `a` as a dense `n × n` array: zeros outside, ones on the
/// diagonal for `Unit`.
fn tri_dense<T: Scalar>(a: &Host<T>, uplo: Uplo, diag: Diag) -> Vec<f64> {
    let n = a.rows();
    let mut t = vec![0.0; n * n];
    for j in 0..n {
        for i in (0..n).filter(|&i| in_triangle(uplo, i, j)) {
            t[i + j * n] = if i == j && diag == Diag::Unit { 1.0 } else { a.get(i, j) };
        }
    }
    t
}

/// `op(T)·X` (`Left`) or `X·op(T)` (`Right`), `T` dense `n × n`, `X` `rows × cols`.
fn tri_apply(side: Side, op: Op, t: &[f64], n: usize, x: &[f64], shape: (usize, usize)) -> Vec<f64> {
    match side {
        Side::Left => naive_matmul(t, (n, n), op == Op::Trans, x, shape, false).0,
        Side::Right => naive_matmul(x, shape, false, t, (n, n), op == Op::Trans).0,
    }
}

/// The backward error of a triangular solve, `‖op(A)·X − α·B₀‖_F` (or
/// `X·op(A)`), and its bound `C·(n+2)·u·(‖A‖_F·‖X‖_F + |α|·‖B₀‖_F)`: `n`
/// roundings in each entry of the substitution, one in the scaling by `α`.
#[allow(clippy::too_many_arguments)]
fn trsm_error<T: Scalar>(
    side: Side,
    uplo: Uplo,
    op: Op,
    diag: Diag,
    alpha: T,
    a: &Host<T>,
    b0: &Host<T>,
    x: &Host<T>,
) -> (f64, f64) {
    let n = a.rows();
    let t = tri_dense(a, uplo, diag);
    let xd = x.dense();
    let ax = tri_apply(side, op, &t, n, &xd, (x.rows(), x.cols()));
    let alpha = alpha.to_f64();
    let rhs: Vec<f64> = b0.dense().iter().map(|b| alpha * b).collect();
    let scale = frobenius(&t) * frobenius(&xd) + alpha.abs() * frobenius(&b0.dense());
    (dist(&ax, &rhs), C * (n + 2) as f64 * u::<T>() * scale)
}

#[derive(Clone, Copy, Debug)]
struct TriCase {
    /// Order of A.
    n: usize,
    /// The other dimension of B.
    m: usize,
    alpha: Coef,
    seed: u64,
}

fn check_trsm<B: Backend, T: Scalar>(be: &B, case: TriCase) {
    let r = &mut rng(case.seed);
    let TriCase { n, m, .. } = case;
    for (side, uplo, op, diag) in tri_cases() {
        let what = format!("trsm {} {side:?} {uplo:?} {op:?} {diag:?}, {case:?}", T::NAME);
        let alpha = case.alpha.draw::<T>(r);
        let a = triangular::<T>(r, n, uplo, diag).upload(be);
        let (rows, cols) = if side == Side::Left { (n, m) } else { (m, n) };
        let b0 = Host::<T>::random(r, rows, cols, SENTINEL);
        let mut b = b0.upload(be);
        ok(&what, || be.trsm(side, uplo, op, diag, alpha, a.view(), b.view_mut()));
        let x = b.written(be, |_, _| true, &what);
        a.assert_unchanged(be, &what);
        let (err, bound) = trsm_error(side, uplo, op, diag, alpha, &a.host, &b0, &x);
        assert!(err <= bound, "{what}: backward error ‖op(A)·X − α·B‖_F = {err:e} > {bound:e}");
    }
}

fn check_trmm<B: Backend, T: Scalar>(be: &B, case: TriCase) {
    let r = &mut rng(case.seed);
    let TriCase { n, m, .. } = case;
    for (side, uplo, op, diag) in tri_cases() {
        let what = format!("trmm {} {side:?} {uplo:?} {op:?} {diag:?}, {case:?}", T::NAME);
        let alpha = case.alpha.draw::<T>(r);
        let a = triangular::<T>(r, n, uplo, diag).upload(be);
        let (rows, cols) = if side == Side::Left { (n, m) } else { (m, n) };
        let b0 = Host::<T>::random(r, rows, cols, SENTINEL);
        let mut b = b0.upload(be);
        ok(&what, || be.trmm(side, uplo, op, diag, alpha, a.view(), b.view_mut()));
        let got = b.written(be, |_, _| true, &what);
        a.assert_unchanged(be, &what);
        // ‖B − α·op(A)·B₀‖_F ≤ C·(n+2)·u·|α|·‖A‖_F·‖B₀‖_F: n roundings per
        // entry of the product, one for α.
        let t = tri_dense(&a.host, uplo, diag);
        let alpha = alpha.to_f64();
        let reference: Vec<f64> =
            tri_apply(side, op, &t, n, &b0.dense(), (rows, cols)).iter().map(|x| alpha * x).collect();
        let err = dist(&got.dense(), &reference);
        let bound = C * (n + 2) as f64 * u::<T>() * alpha.abs() * frobenius(&t) * frobenius(&b0.dense());
        assert!(err <= bound, "{what}: ‖B − α·op(A)·B₀‖_F = {err:e} > {bound:e}");
    }
}

/// `α = 0`: B becomes exactly zero, reading neither A nor the old B — BLAS:
/// "when alpha is zero then A is not referenced and B need not be set". Two
/// variants, so that a failure says which was read: A all NaN (both
/// triangles and the diagonal) with B finite, and a finite A with B all NaN.
/// Every case runs; the failures are listed together at the end.
fn check_triangular_alpha_zero<B: Backend, T: Scalar>(be: &B) {
    let r = &mut rng(11);
    let mut failures = Vec::new();
    for (n, m) in [(1, 1), (5, 3), (17, 9)] {
        for (side, uplo, op, diag) in tri_cases() {
            for name in ["trsm", "trmm"] {
                for nan_in in ["A", "B"] {
                    let what = format!(
                        "{name} {} α = 0, NaN in {nan_in}, {side:?} {uplo:?} {op:?} {diag:?}, n = {n}, m = {m}",
                        T::NAME
                    );
                    let a = if nan_in == "A" { Host::<T>::new(r, n, n, NAN) } else { triangular(r, n, uplo, diag) };
                    let a = a.upload(be);
                    let (rows, cols) = if side == Side::Left { (n, m) } else { (m, n) };
                    let mut b0 = Host::<T>::random(r, rows, cols, SENTINEL);
                    if nan_in == "B" {
                        b0.fill(|_, _| NAN);
                    }
                    let mut b = b0.upload(be);
                    let res = catch_unwind(AssertUnwindSafe(|| {
                        ok(&what, || {
                            if name == "trsm" {
                                be.trsm(side, uplo, op, diag, T::ZERO, a.view(), b.view_mut())
                            } else {
                                be.trmm(side, uplo, op, diag, T::ZERO, a.view(), b.view_mut())
                            }
                        });
                        let got = b.written(be, |_, _| true, &what);
                        let bad = got.dense().into_iter().filter(|&x| x != 0.0).count();
                        assert!(bad == 0, "{what}: {bad} of the {} entries of B are not 0", rows * cols);
                    }));
                    if let Err(payload) = res {
                        failures.push(panic_text(&*payload));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of 192 cases failed:\n{}", failures.len(), failures.join("\n"));
}

// ---------------------------------------------------------------------------
// Elementwise: geam, scale_rows, scale_cols, axpy, scale.

/// The bound on `|c − (x + y)|` where `c` and the reference each round the
/// two terms and their sum (or fuse one product): each is within
/// `(2u + u²)·(|x| + |y|)` of the exact value, so they are within twice that
/// of each other. For f32 the f64 reference is nearly exact and this is
/// twice the backend's bound.
fn two_term_bound<T: Scalar>(x: f64, y: f64) -> f64 {
    let u = u::<T>();
    2.0 * (2.0 * u + u * u) * (x.abs() + y.abs())
}

#[derive(Clone, Copy, Debug)]
struct GeamCase {
    m: usize,
    n: usize,
    /// `Zero` fills A with NaN: a zero coefficient means the operand is not read.
    alpha: Coef,
    /// `Zero` fills B with NaN.
    beta: Coef,
    seed: u64,
}

fn check_geam<B: Backend, T: Scalar>(be: &B, case: GeamCase) {
    let r = &mut rng(case.seed);
    let GeamCase { m, n, .. } = case;
    for op_a in OPS {
        for op_b in OPS {
            let what = format!("geam {} op_a = {op_a:?}, op_b = {op_b:?}, {case:?}", T::NAME);
            let (alpha, beta) = (case.alpha.draw::<T>(r), case.beta.draw::<T>(r));
            let operand = |r: &mut StdRng, op: Op, coef: T| {
                let (rows, cols) = op.apply(m, n);
                let mut h = Host::<T>::random(r, rows, cols, NAN);
                if coef == T::ZERO {
                    h.fill(|_, _| NAN);
                }
                h
            };
            let a = operand(r, op_a, alpha).upload(be);
            let b = operand(r, op_b, beta).upload(be);
            // C is only written: NaN in it must not show.
            let mut c0 = Host::<T>::new(r, m, n, SENTINEL);
            c0.fill(|_, _| NAN);
            let mut c = c0.upload(be);
            ok(&what, || be.geam(alpha, a.view(), op_a, beta, b.view(), op_b, c.view_mut()));
            let got = c.written(be, |_, _| true, &what);
            a.assert_unchanged(be, &what);
            b.assert_unchanged(be, &what);
            let entry =
                |h: &Host<T>, op: Op, i: usize, j: usize| if op == Op::NoTrans { h.get(i, j) } else { h.get(j, i) };
            let term = |s: T, x: f64| if s == T::ZERO { 0.0 } else { s.to_f64() * x };
            for j in 0..n {
                for i in 0..m {
                    let x = term(alpha, entry(&a.host, op_a, i, j));
                    let y = term(beta, entry(&b.host, op_b, i, j));
                    let (c, bound) = (got.get(i, j), two_term_bound::<T>(x, y));
                    assert!(
                        (c - (x + y)).abs() <= bound,
                        "{what}: C({i}, {j}) = {c:e}, α·op(A) + β·op(B) = {:e}, bound {bound:e}",
                        x + y
                    );
                }
            }
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct ScaleCase {
    m: usize,
    n: usize,
    /// Whether `d` is a row vector (a `1 × len` block with `ld > 1`).
    row_vector: bool,
    alpha: Coef,
    seed: u64,
}

/// A vector of `len` entries uniform in [-2, 2) as a column or a row block.
fn diagonal<T: Scalar>(r: &mut StdRng, len: usize, row: bool) -> Host<T> {
    let mut d = if row { Host::<T>::new(r, 1, len, NAN) } else { Host::<T>::new(r, len, 1, NAN) };
    d.fill(|_, _| r.random_range(-2.0..2.0));
    d
}

fn vector_entry<T: Scalar>(d: &Host<T>, k: usize) -> f64 {
    if d.cols() == 1 { d.get(k, 0) } else { d.get(0, k) }
}

/// `scale_rows`, `scale_cols` and `scale`: one product per entry, which both
/// the device and the reference round correctly (the product of two f32 is
/// exact in f64), so the result is exact: `T::from_f64(s·a)`.
fn check_scalings<B: Backend, T: Scalar>(be: &B, case: ScaleCase) {
    let r = &mut rng(case.seed);
    let ScaleCase { m, n, row_vector, .. } = case;
    let exact = |what: &str, got: &Host<T>, a0: &Host<T>, s: &dyn Fn(usize, usize) -> f64| {
        for j in 0..n {
            for i in 0..m {
                let expected = T::from_f64(s(i, j) * a0.get(i, j)).to_f64();
                let x = got.get(i, j);
                assert!(equal(x, expected), "{what}: A({i}, {j}) = {x:e}, expected {expected:e}");
            }
        }
    };

    let what = format!("scale_rows {} {case:?}", T::NAME);
    let d = diagonal::<T>(r, m, row_vector).upload(be);
    let a0 = Host::<T>::random(r, m, n, SENTINEL);
    let mut a = a0.upload(be);
    ok(&what, || be.scale_rows(d.view(), a.view_mut()));
    let got = a.written(be, |_, _| true, &what);
    d.assert_unchanged(be, &what);
    exact(&what, &got, &a0, &|i, _| vector_entry(&d.host, i));

    let what = format!("scale_cols {} {case:?}", T::NAME);
    let d = diagonal::<T>(r, n, row_vector).upload(be);
    let a0 = Host::<T>::random(r, m, n, SENTINEL);
    let mut a = a0.upload(be);
    ok(&what, || be.scale_cols(a.view_mut(), d.view()));
    let got = a.written(be, |_, _| true, &what);
    d.assert_unchanged(be, &what);
    exact(&what, &got, &a0, &|_, j| vector_entry(&d.host, j));

    let what = format!("scale {} {case:?}", T::NAME);
    let alpha = case.alpha.draw::<T>(r);
    let a0 = Host::<T>::random(r, m, n, SENTINEL);
    let mut a = a0.upload(be);
    ok(&what, || be.scale(alpha, a.view_mut()));
    let got = a.written(be, |_, _| true, &what);
    exact(&what, &got, &a0, &|_, _| alpha.to_f64());
}

/// `Y := α·X + Y`: a product and a sum (or one fused), bound `two_term_bound`.
fn check_axpy<B: Backend, T: Scalar>(be: &B, case: ScaleCase) {
    let r = &mut rng(case.seed);
    let ScaleCase { m, n, .. } = case;
    let what = format!("axpy {} {case:?}", T::NAME);
    let alpha = case.alpha.draw::<T>(r);
    let x = Host::<T>::random(r, m, n, NAN).upload(be);
    let y0 = Host::<T>::random(r, m, n, SENTINEL);
    let mut y = y0.upload(be);
    ok(&what, || be.axpy(alpha, x.view(), y.view_mut()));
    let got = y.written(be, |_, _| true, &what);
    x.assert_unchanged(be, &what);
    for j in 0..n {
        for i in 0..m {
            let (ax, y) = (alpha.to_f64() * x.host.get(i, j), y0.get(i, j));
            let (v, bound) = (got.get(i, j), two_term_bound::<T>(ax, y));
            assert!(
                (v - (ax + y)).abs() <= bound,
                "{what}: Y({i}, {j}) = {v:e}, α·x + y = {:e}, bound {bound:e}",
                ax + y
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Triangles: symmetrize, fill_strict_triangle (exact).

#[derive(Clone, Copy, Debug)]
struct ShapeCase {
    m: usize,
    n: usize,
    seed: u64,
}

fn strictly_in(uplo: Uplo, i: usize, j: usize) -> bool {
    i != j && in_triangle(uplo, i, j)
}

fn check_triangles<B: Backend, T: Scalar>(be: &B, case: ShapeCase) {
    let r = &mut rng(case.seed);
    let ShapeCase { m, n, .. } = case;
    for uplo in UPLOS {
        // symmetrize on the n × n block: the `uplo` triangle is kept bit for
        // bit, the other one becomes its transpose, exactly.
        let what = format!("symmetrize {} {uplo:?}, {case:?}", T::NAME);
        let a0 = Host::<T>::random(r, n, n, SENTINEL);
        let mut a = a0.upload(be);
        ok(&what, || be.symmetrize(uplo, a.view_mut()));
        let got = a.written(be, |i, j| !in_triangle(uplo, i, j), &what);
        for j in 0..n {
            for i in (0..n).filter(|&i| !in_triangle(uplo, i, j)) {
                assert!(
                    same(got.get(i, j), a0.get(j, i)),
                    "{what}: A({i}, {j}) = {}, expected A({j}, {i}) = {}",
                    got.get(i, j),
                    a0.get(j, i)
                );
            }
        }

        // fill_strict_triangle on an m × n block (rectangular too): exactly
        // the entries strictly inside the triangle become `value`.
        let what = format!("fill_strict_triangle {} {uplo:?}, {case:?}", T::NAME);
        let value = T::from_f64(uniform(r));
        let a0 = Host::<T>::random(r, m, n, SENTINEL);
        let mut a = a0.upload(be);
        ok(&what, || be.fill_strict_triangle(uplo, value, a.view_mut()));
        let got = a.written(be, |i, j| strictly_in(uplo, i, j), &what);
        for j in 0..n {
            for i in (0..m).filter(|&i| strictly_in(uplo, i, j)) {
                assert!(
                    same(got.get(i, j), value.to_f64()),
                    "{what}: A({i}, {j}) = {}, expected {value}",
                    got.get(i, j)
                );
            }
        }
    }
}

/// `fill_random` on an m × n block at a random origin: every entry is the
/// host's `random::uniform` (or `symmetric`) of its global place, rounded to
/// `T`, bit for bit; the padding keeps its sentinel.
fn check_fill_random<B: Backend, T: Scalar>(be: &B, case: ShapeCase) {
    let r = &mut rng(case.seed);
    let ShapeCase { m, n, .. } = case;
    let (i0, j0, key) = (r.random_range(0..1usize << 31), r.random_range(0..1usize << 31), r.random::<u64>());
    for symmetric in [false, true] {
        let what = format!("fill_random {} at ({i0}, {j0}), symmetric {symmetric}, {case:?}", T::NAME);
        let mut a = Host::<T>::random(r, m, n, SENTINEL).upload(be);
        ok(&what, || be.fill_random(a.view_mut(), (i0, j0), key, symmetric));
        let got = a.written(be, |_, _| true, &what);
        let entry = if symmetric { random::symmetric } else { random::uniform };
        for j in 0..n {
            for i in 0..m {
                let expected = T::from_f64(entry(key, i0 + i, j0 + j)).to_f64();
                assert!(same(got.get(i, j), expected), "{what}: A({i}, {j}) = {}, expected {expected}", got.get(i, j));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Reductions: norm, iamax, find_non_finite.

#[derive(Clone, Copy, Debug)]
struct NormCase {
    m: usize,
    n: usize,
    /// 0: entries in [-1, 1); 1: times a huge power (squares overflow);
    /// 2: times a tiny one (squares underflow).
    magnitude: usize,
    nan: bool,
    seed: u64,
}

/// Against the definitions, in f64 from the rounded entries: `Max` exactly;
/// `One` and `Inf` to `C·m·u` and `C·n·u` relative (sums of m or n
/// nonnegative terms); `Frobenius` to `C·(m·n + 2)·u` relative, the
/// reference computed as `s·‖A/s‖_F` with `s = max|a|` so it neither
/// overflows nor underflows. A NaN anywhere gives NaN; an empty block, 0.
/// The padding is NaN, so a read outside the block shows as a NaN.
fn check_norm<B: Backend, T: Scalar>(be: &B, case: NormCase) {
    let r = &mut rng(case.seed);
    let NormCase { m, n, .. } = case;
    let f64_type = T::NAME == "f64";
    let scale = match (case.magnitude, f64_type) {
        (0, _) => 1.0,
        (1, true) => 1e300,
        (1, false) => 1e36,
        (_, true) => 1e-300,
        (_, false) => 1e-36,
    };
    let mut a = Host::<T>::new(r, m, n, NAN);
    a.fill(|_, _| scale * uniform(r));
    let nan = case.nan && m * n > 0;
    if nan {
        let (i, j) = (r.random_range(0..m), r.random_range(0..n));
        a.set(i, j, NAN);
    }
    let a = a.upload(be);
    let h = &a.host;
    for norm in NORMS {
        let what = format!("norm {} {norm:?}, {case:?}", T::NAME);
        let got = ok(&what, || be.norm(norm, a.view())).to_f64();
        if nan {
            assert!(got.is_nan(), "{what}: {got:e} with a NaN in A, expected NaN");
            continue;
        }
        if m * n == 0 {
            assert!(got == 0.0, "{what}: {got:e} for an empty block, expected 0");
            continue;
        }
        let abs = |i: usize, j: usize| h.get(i, j).abs();
        let max = (0..n).flat_map(|j| (0..m).map(move |i| abs(i, j))).fold(0.0, f64::max);
        let (reference, rel) = match norm {
            Norm::Max => (max, 0.0),
            Norm::One => ((0..n).map(|j| (0..m).map(|i| abs(i, j)).sum::<f64>()).fold(0.0, f64::max), m as f64),
            Norm::Inf => ((0..m).map(|i| (0..n).map(|j| abs(i, j)).sum::<f64>()).fold(0.0, f64::max), n as f64),
            Norm::Frobenius => {
                let ss: f64 = (0..n).flat_map(|j| (0..m).map(move |i| (abs(i, j) / max).powi(2))).sum();
                (if max == 0.0 { 0.0 } else { max * ss.sqrt() }, (m * n + 2) as f64)
            }
        };
        let bound = C * rel * u::<T>() * reference;
        assert!((got - reference).abs() <= bound, "{what}: {got:e}, reference {reference:e}, bound {bound:e}");
    }
    a.assert_unchanged(be, &format!("norm {} {case:?}", T::NAME));
}

#[derive(Clone, Copy, Debug)]
struct IamaxCase {
    len: usize,
    /// A `1 × len` block with `ld > 1` rather than a column.
    row: bool,
    /// Entries from {−3, …, 3}, so that magnitudes tie.
    ties: bool,
    /// How many NaNs to put in.
    nans: usize,
    seed: u64,
}

/// The first index of the largest `|x|`, ties to the first; the first NaN if
/// there is one; `None` for an empty vector. The padding is NaN.
fn check_iamax<B: Backend, T: Scalar>(be: &B, case: IamaxCase) {
    let r = &mut rng(case.seed);
    let IamaxCase { len, row, ties, nans, .. } = case;
    let what = format!("iamax {} {case:?}", T::NAME);
    let mut x = if row { Host::<T>::new(r, 1, len, NAN) } else { Host::<T>::new(r, len, 1, NAN) };
    x.fill(|_, _| if ties { r.random_range(-3..=3) as f64 } else { uniform(r) });
    if len > 0 {
        for _ in 0..nans {
            let k = r.random_range(0..len);
            if row { x.set(0, k, NAN) } else { x.set(k, 0, NAN) }
        }
    }
    let values: Vec<f64> = (0..len).map(|k| vector_entry(&x, k)).collect();
    let expected = values.iter().position(|v| v.is_nan()).or_else(|| {
        let mut best: Option<usize> = None;
        for (k, v) in values.iter().enumerate() {
            if best.is_none_or(|b| v.abs() > values[b].abs()) {
                best = Some(k);
            }
        }
        best
    });
    let x = x.upload(be);
    let got = ok(&what, || be.iamax(x.view()));
    assert_eq!(got, expected, "{what}: x = {values:?}");
    x.assert_unchanged(be, &what);
}

#[derive(Clone, Copy, Debug)]
struct NonFiniteCase {
    m: usize,
    n: usize,
    /// How many NaN / ±∞ entries to put in.
    count: usize,
    seed: u64,
}

/// The first non-finite entry in column-major order, or `None`; the padding
/// is NaN and must not be reported.
fn check_find_non_finite<B: Backend, T: Scalar>(be: &B, case: NonFiniteCase) {
    let r = &mut rng(case.seed);
    let NonFiniteCase { m, n, count, .. } = case;
    let what = format!("find_non_finite {} {case:?}", T::NAME);
    let mut a = Host::<T>::random(r, m, n, NAN);
    if m * n > 0 {
        for _ in 0..count {
            let v = [NAN, f64::INFINITY, f64::NEG_INFINITY][r.random_range(0..3)];
            let (i, j) = (r.random_range(0..m), r.random_range(0..n));
            a.set(i, j, v);
        }
    }
    let expected = (0..n).find_map(|j| (0..m).find(|&i| !a.get(i, j).is_finite()).map(|i| (i, j)));
    let a = a.upload(be);
    let got = ok(&what, || be.find_non_finite(a.view()));
    assert_eq!(got, expected, "{what}");
    a.assert_unchanged(be, &what);
}

// ---------------------------------------------------------------------------
// Data movement: cast, copy, fill, full_to_rfp, rfp_to_full (all exact).

/// Mostly uniform values times 10^(−40 … 40), sometimes a special value: ±0,
/// NaN, ±∞, out of f32's range, subnormal in f64 or in f32, halfway between
/// two f32 (ties to even, down and up).
fn cast_value(r: &mut StdRng) -> f64 {
    const SPECIAL: [f64; 12] = [
        0.0,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e300,
        -1e39,
        1e-310,
        1e-40,
        -1e-46,
        1.0 + 1.0 / (1u64 << 24) as f64,
        1.0 + 3.0 / (1u64 << 24) as f64,
    ];
    if r.random_range(0..8) == 0 {
        SPECIAL[r.random_range(0..SPECIAL.len())]
    } else {
        uniform(r) * 10f64.powi(r.random_range(-40..=40))
    }
}

/// `dst := src` converted, on sub-blocks; every entry must equal the `as`
/// cast bit for bit (any NaN for a NaN).
fn cast_into<B: Backend, S: Scalar, D: Scalar>(
    be: &B,
    r: &mut StdRng,
    src: &Placed<B, S>,
    src_now: &Host<S>,
    what: &str,
) -> Host<D> {
    let dst0 = Host::<D>::random(r, src_now.rows(), src_now.cols(), SENTINEL);
    let mut dst = dst0.upload(be);
    ok(what, || be.cast(src.view(), dst.view_mut()));
    let got = dst.written(be, |_, _| true, what);
    for j in 0..got.cols() {
        for i in 0..got.rows() {
            let (x, y) = (src_now.get(i, j), got.get(i, j));
            let expected = D::from_f64(x).to_f64();
            assert!(same(y, expected), "{what}: ({i}, {j}): {x:e} became {y:e}, `as` gives {expected:e}");
        }
    }
    got
}

/// f64 → f32 → f64 and the same-type casts, each checked against `as`.
fn check_cast<B: Backend>(be: &B, case: ShapeCase) {
    let r = &mut rng(case.seed);
    let ShapeCase { m, n, .. } = case;
    let mut src = Host::<f64>::new(r, m, n, NAN);
    src.fill(|_, _| cast_value(r));
    let src = src.upload(be);
    let narrow: Host<f32> = cast_into(be, r, &src, &src.host, &format!("cast f64 → f32 {case:?}"));
    src.assert_unchanged(be, &format!("cast f64 → f32 {case:?}"));
    let mid = Host { data: narrow.data.clone(), block: narrow.block }.upload(be);
    let _: Host<f64> = cast_into(be, r, &mid, &narrow, &format!("cast f32 → f64 {case:?}"));
    let _: Host<f64> = cast_into(be, r, &src, &src.host, &format!("cast f64 → f64 {case:?}"));
    let _: Host<f32> = cast_into(be, r, &mid, &narrow, &format!("cast f32 → f32 {case:?}"));
}

fn check_copy_fill<B: Backend, T: Scalar>(be: &B, case: ShapeCase) {
    let r = &mut rng(case.seed);
    let ShapeCase { m, n, .. } = case;

    // Between buffers, with different offsets and leading dimensions.
    let what = format!("copy {} {case:?}", T::NAME);
    let src = Host::<T>::random(r, m, n, NAN).upload(be);
    let dst0 = Host::<T>::random(r, m, n, SENTINEL);
    let mut dst = dst0.upload(be);
    ok(&what, || be.copy(src.view(), dst.view_mut()));
    let got = dst.written(be, |_, _| true, &what);
    src.assert_unchanged(be, &what);
    assert_eq!(
        got.dense().iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        src.host.dense().iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        "{what}"
    );

    // Within one buffer: src, then dst further on with another ld.
    let what = format!("copy within a buffer {} {case:?}", T::NAME);
    let s = Host::<T>::new(r, m, n, SENTINEL).block;
    let d = Block { offset: s.end() + r.random_range(0..3), rows: m, cols: n, ld: m + r.random_range(1..4) };
    let host: Vec<T> = (0..d.end() + 2).map(|_| T::from_f64(uniform(r))).collect();
    let mut buf = be.upload(&host).unwrap();
    {
        let bm = BufferMut::<B, T>::new(&mut buf);
        ok(&what, || be.copy(bm.view(s).unwrap(), bm.view_mut(d).unwrap()));
    }
    let mut after = vec![T::default(); host.len()];
    be.download(&buf, &mut after).unwrap();
    let mut expected = host.clone();
    for j in 0..n {
        for i in 0..m {
            expected[d.index(i, j)] = host[s.index(i, j)];
        }
    }
    for (k, (x, y)) in after.iter().zip(&expected).enumerate() {
        assert!(same(x.to_f64(), y.to_f64()), "{what}: buffer entry {k} is {x}, expected {y}");
    }

    let what = format!("fill {} {case:?}", T::NAME);
    let value = T::from_f64(uniform(r));
    let a0 = Host::<T>::random(r, m, n, SENTINEL);
    let mut a = a0.upload(be);
    ok(&what, || be.fill(a.view_mut(), value));
    let got = a.written(be, |_, _| true, &what);
    assert!(got.dense().iter().all(|&x| same(x, value.to_f64())), "{what}: {:?}", got.dense());
}

/// Packing and unpacking on a block with `ld > n`, against
/// `gpumat::layout::{full_to_rfp, rfp_to_full}` on the host, bit for bit.
/// The triangle not packed is NaN: it must not be read; on unpacking it
/// holds old values that must be kept.
fn check_rfp<B: Backend, T: Scalar>(be: &B, n: usize, seed: u64) {
    let r = &mut rng(seed);
    for (transr, uplo) in RFP_CASES {
        let rfp = Rfp::new(n, transr, uplo);
        let what = format!("full_to_rfp {} n = {n}, {transr:?}, {uplo:?}, seed = {seed}", T::NAME);
        let mut a = Host::<T>::new(r, n, n, NAN);
        a.fill(|i, j| if in_triangle(uplo, i, j) { uniform(r) } else { NAN });
        let a = a.upload(be);
        let arf0 = Host::<T>::random(r, rfp.len(), 1, SENTINEL);
        let mut arf = arf0.upload(be);
        ok(&what, || be.full_to_rfp(a.view(), rfp, arf.view_mut()));
        let got = arf.written(be, |_, _| true, &what);
        a.assert_unchanged(be, &what);
        let full = Full::with_ld(n, n, a.host.block.ld).unwrap();
        let mut expected = vec![T::ZERO; rfp.len()];
        layout::full_to_rfp(&a.host.data[a.host.block.offset..], full, rfp, &mut expected).unwrap();
        for (k, x) in expected.iter().enumerate() {
            assert!(same(got.get(k, 0), x.to_f64()), "{what}: arf[{k}] = {}, expected {x}", got.get(k, 0));
        }

        let what = format!("rfp_to_full {} n = {n}, {transr:?}, {uplo:?}, seed = {seed}", T::NAME);
        let arf = Host::<T>::random(r, rfp.len(), 1, NAN).upload(be);
        let a0 = Host::<T>::random(r, n, n, SENTINEL);
        let mut a = a0.upload(be);
        ok(&what, || be.rfp_to_full(arf.view(), rfp, a.view_mut()));
        let got = a.written(be, |i, j| in_triangle(uplo, i, j), &what);
        arf.assert_unchanged(be, &what);
        let mut expected = a0.data.clone();
        let o = arf.host.block.offset;
        let full = Full::with_ld(n, n, a0.block.ld).unwrap();
        layout::rfp_to_full(&arf.host.data[o..o + rfp.len()], rfp, &mut expected[a0.block.offset..], full).unwrap();
        for (k, (x, y)) in got.data.iter().zip(&expected).enumerate() {
            assert!(same(x.to_f64(), y.to_f64()), "{what}: buffer entry {k} is {x}, expected {y}");
        }
    }
}

// ---------------------------------------------------------------------------
// Blocks of one buffer: the pieces of an RFP rectangle.

/// The `trsm` and `syrk` calls of `dpftrf` on the pieces of an RFP array, in
/// all eight layouts: the triangle read, the rectangle written and the other
/// triangle all live in one buffer with one leading dimension and
/// overlapping address ranges, yet share no element, so the calls must be
/// accepted; each writes its block only, and is as accurate as on separate
/// buffers (same bounds as above).
///
/// `base` is where the RFP array starts in its buffer: 0, or an offset that
/// is not a multiple of the leading dimension (an array inside a larger
/// allocation), where the pieces are just as disjoint.
///
/// Every case runs; the failures are listed together at the end.
fn check_rfp_pieces<B: Backend>(be: &B, base: usize) {
    let r = &mut rng(21 + base as u64);
    let mut failures = Vec::new();
    for n in 1..=9 {
        for (transr, uplo) in RFP_CASES {
            let res = catch_unwind(AssertUnwindSafe(|| rfp_pieces_case(be, r, n, transr, uplo, base)));
            if let Err(payload) = res {
                failures.push(panic_text(&*payload));
            }
        }
    }
    assert!(failures.is_empty(), "{} of 36 cases failed:\n{}", failures.len(), failures.join("\n"));
}

fn rfp_pieces_case<B: Backend>(be: &B, r: &mut StdRng, n: usize, transr: Transr, uplo: Uplo, base: usize) {
    let what = format!("RFP pieces n = {n}, {transr:?}, {uplo:?}, array at offset {base}");
    let rfp = Rfp::new(n, transr, uplo);
    let p = rfp.pieces();
    let place = |offset: usize, f: Full| Block { offset: base + offset, rows: f.rows, cols: f.cols, ld: f.ld };
    let (t1, s, t2) = (place(p.t1.offset, p.t1.full), place(p.s.offset, p.s.full), place(p.t2.offset, p.t2.full));
    let mut host = vec![SENTINEL; base + rfp.len() + 2];
    for x in &mut host[base..base + rfp.len()] {
        *x = uniform(r) / n as f64;
    }
    for i in 0..p.n1 {
        host[t1.index(i, i)] = 3.0;
    }
    // dpftrf: TRANSR = 'N' solves with A11 from the right (lower) or
    // left, then updates A22 by syrk; TRANSR = 'T' the transposes.
    let (side, op, syrk_op) = match (transr, uplo) {
        (Transr::Normal, Uplo::Lower) => (Side::Right, Op::Trans, Op::NoTrans),
        (Transr::Normal, Uplo::Upper) => (Side::Left, Op::NoTrans, Op::Trans),
        (Transr::Transpose, Uplo::Lower) => (Side::Left, Op::Trans, Op::Trans),
        (Transr::Transpose, Uplo::Upper) => (Side::Right, Op::NoTrans, Op::NoTrans),
    };
    let mut buf = be.upload(&host).unwrap();
    {
        let bm = BufferMut::<B, f64>::new(&mut buf);
        let (a, b) = (bm.view(t1).unwrap(), bm.view_mut(s).unwrap());
        ok(&what, || be.trsm(side, p.t1.uplo, op, Diag::NonUnit, 1.0, a, b));
    }
    let mut mid = host.clone();
    be.download(&buf, &mut mid).unwrap();
    let whole = |data: &[f64], block| Host { data: data.to_vec(), block };
    whole(&host, s).assert_kept(&whole(&mid, s), |_, _| true, &format!("{what}: trsm"));
    let (err, bound) =
        trsm_error(side, p.t1.uplo, op, Diag::NonUnit, 1.0, &whole(&host, t1), &whole(&host, s), &whole(&mid, s));
    assert!(err <= bound, "{what}: trsm backward error {err:e} > {bound:e}");
    {
        let bm = BufferMut::<B, f64>::new(&mut buf);
        let (a, c) = (bm.view(s).unwrap(), bm.view_mut(t2).unwrap());
        ok(&what, || be.syrk(p.t2.uplo, syrk_op, -1.0, a, 1.0, c));
    }
    let mut last = host.clone();
    be.download(&buf, &mut last).unwrap();
    whole(&mid, t2).assert_kept(&whole(&last, t2), |i, j| in_triangle(p.t2.uplo, i, j), &format!("{what}: syrk"));
    let (err, bound) = syrk_error(p.t2.uplo, syrk_op, -1.0, &whole(&mid, s), 1.0, &whole(&mid, t2), &whole(&last, t2));
    assert!(err <= bound, "{what}: syrk error {err:e} > {bound:e}");
}

// ---------------------------------------------------------------------------
// Bad arguments: an `Err`, never a panic, and nothing written.

#[track_caller]
fn expect_dims<X: Debug>(what: &str, f: impl FnOnce() -> Result<X>) {
    match call(what, f) {
        Err(Error::DimensionMismatch { .. }) => {}
        other => panic!("{what}: expected a dimension mismatch, got {other:?}"),
    }
}

/// A leading dimension below the rows (`ld_bad`), else a block outside
/// its buffer.
#[track_caller]
fn expect_bad_block<X: Debug>(what: &str, ld_bad: bool, f: impl FnOnce() -> Result<X>) {
    match call(what, f) {
        Err(Error::LeadingDimension { .. }) if ld_bad => {}
        Err(Error::InvalidArgument(_)) if !ld_bad => {}
        other => panic!("{what}: expected a bad block (leading dimension: {ld_bad}), got {other:?}"),
    }
}

#[track_caller]
fn expect_overlap<X: Debug>(what: &str, f: impl FnOnce() -> Result<X>) {
    match call(what, f) {
        Err(Error::Overlapping { .. }) => {}
        other => panic!("{what}: expected overlapping operands, got {other:?}"),
    }
}

fn dense<B: Backend>(buf: &B::Buffer<f64>, rows: usize, cols: usize) -> View<'_, B, f64> {
    View::new(buf, Block::dense(rows, cols)).unwrap()
}

fn dense_mut<B: Backend>(buf: &mut B::Buffer<f64>, rows: usize, cols: usize) -> ViewMut<'_, B, f64> {
    ViewMut::new(buf, Block::dense(rows, cols)).unwrap()
}

/// Blocks outside their buffer and leading dimensions below the row count.
fn check_bad_blocks<B: Backend>(be: &B) {
    let mut buf = be.upload(&[1.0f64; 100]).unwrap();
    let blk = |offset, rows, cols, ld| Block { offset, rows, cols, ld };
    let past_end = blk(95, 3, 2, 3); // reaches element 101
    let ld_small = blk(0, 3, 2, 2);
    let ld_zero = blk(0, 0, 2, 0);
    for (what, b, ld_bad) in [
        ("past the end", past_end, false),
        ("ld < rows", ld_small, true),
        ("ld = 0", ld_zero, true),
        ("far offset", blk(200, 1, 1, 1), false),
    ] {
        expect_bad_block(&format!("View::new {what}"), ld_bad, || View::<B, f64>::new(&buf, b).map(|_| ()));
        expect_bad_block(&format!("ViewMut::new {what}"), ld_bad, || ViewMut::<B, f64>::new(&mut buf, b).map(|_| ()));
        let bm = BufferMut::<B, f64>::new(&mut buf);
        expect_bad_block(&format!("BufferMut::view {what}"), ld_bad, || bm.view(b).map(|_| ()));
        expect_bad_block(&format!("BufferMut::view_mut {what}"), ld_bad, || bm.view_mut(b).map(|_| ()));
    }
    // The last element exactly: fine.
    assert!(View::<B, f64>::new(&buf, blk(94, 3, 2, 3)).is_ok(), "a block ending at the buffer's end");
    let v = View::<B, f64>::new(&buf, blk(0, 4, 4, 10)).unwrap();
    assert!(v.sub(1, 1, 3, 3).is_ok(), "sub-block that fits");
    assert!(v.sub(2, 0, 3, 1).is_err(), "sub-block past the rows");
    assert!(v.sub(0, 2, 1, 3).is_err(), "sub-block past the columns");
}

/// Shape mismatches for every primitive that has shapes to match.
fn check_bad_shapes<B: Backend>(be: &B) {
    let host: Vec<f64> = (0..100).map(|k| 1.0 + k as f64 / 100.0).collect();
    let (x, y) = (be.upload(&host).unwrap(), be.upload(&host).unwrap());
    let mut z = be.upload(&host).unwrap();
    let (n, t) = (Op::NoTrans, Op::Trans);
    let v = |rows, cols| dense::<B>(&x, rows, cols);
    let v2 = |rows, cols| dense::<B>(&y, rows, cols);

    expect_dims("gemm inner dims", || be.gemm(1.0, v(3, 4), n, v2(5, 2), n, 0.0, dense_mut::<B>(&mut z, 3, 2)));
    expect_dims("gemm C shape", || be.gemm(1.0, v(3, 4), n, v2(4, 2), n, 0.0, dense_mut::<B>(&mut z, 2, 3)));
    expect_dims("gemm Aᵀ·B inner dims", || be.gemm(1.0, v(3, 4), t, v2(4, 2), n, 0.0, dense_mut::<B>(&mut z, 4, 2)));
    expect_dims("gemm A·Bᵀ C shape", || be.gemm(1.0, v(3, 4), n, v2(2, 4), t, 0.0, dense_mut::<B>(&mut z, 3, 4)));
    ok("gemm Aᵀ·Bᵀ fits", || be.gemm(1.0, v(4, 3), t, v2(2, 4), t, 0.0, dense_mut::<B>(&mut z, 3, 2)));

    expect_dims("syrk C of op(A)ᵀ's size", || {
        be.syrk(Uplo::Lower, n, 1.0, v(3, 4), 0.0, dense_mut::<B>(&mut z, 4, 4))
    });
    expect_dims("syrk C not square", || be.syrk(Uplo::Lower, n, 1.0, v(3, 4), 0.0, dense_mut::<B>(&mut z, 3, 4)));
    expect_dims("syrk Trans, C of A's rows", || {
        be.syrk(Uplo::Upper, t, 1.0, v(3, 4), 0.0, dense_mut::<B>(&mut z, 3, 3))
    });
    ok("syrk fits", || be.syrk(Uplo::Upper, t, 1.0, v(3, 4), 0.0, dense_mut::<B>(&mut z, 4, 4)));

    for side in SIDES {
        let (fits, wrong) = if side == Side::Left { ((3, 2), (4, 2)) } else { ((2, 3), (2, 4)) };
        for name in ["trsm", "trmm"] {
            let call = |a: View<'_, B, f64>, b: ViewMut<'_, B, f64>| {
                if name == "trsm" {
                    be.trsm(side, Uplo::Lower, n, Diag::NonUnit, 1.0, a, b)
                } else {
                    be.trmm(side, Uplo::Lower, n, Diag::NonUnit, 1.0, a, b)
                }
            };
            expect_dims(&format!("{name} {side:?} A not square"), || call(v(3, 4), dense_mut::<B>(&mut z, 3, 3)));
            expect_dims(&format!("{name} {side:?} B of wrong size"), || {
                call(v(3, 3), dense_mut::<B>(&mut z, wrong.0, wrong.1))
            });
            ok(&format!("{name} {side:?} fits"), || call(v(3, 3), dense_mut::<B>(&mut z, fits.0, fits.1)));
        }
    }

    expect_dims("geam A, B differ", || be.geam(1.0, v(3, 4), n, 1.0, v2(4, 3), n, dense_mut::<B>(&mut z, 3, 4)));
    expect_dims("geam C differs", || be.geam(1.0, v(3, 4), n, 1.0, v2(3, 4), n, dense_mut::<B>(&mut z, 4, 3)));
    expect_dims("geam op(B) differs", || be.geam(1.0, v(3, 4), n, 1.0, v2(3, 4), t, dense_mut::<B>(&mut z, 3, 4)));
    ok("geam Aᵀ + B fits", || be.geam(1.0, v(4, 3), t, 1.0, v2(3, 4), n, dense_mut::<B>(&mut z, 3, 4)));

    expect_dims("scale_rows d too long", || be.scale_rows(v(4, 1), dense_mut::<B>(&mut z, 3, 4)));
    expect_dims("scale_rows d not a vector", || be.scale_rows(v(3, 2), dense_mut::<B>(&mut z, 3, 4)));
    ok("scale_rows row vector d", || be.scale_rows(v(1, 3), dense_mut::<B>(&mut z, 3, 4)));
    expect_dims("scale_cols d too short", || be.scale_cols(dense_mut::<B>(&mut z, 3, 4), v(3, 1)));
    expect_dims("scale_cols d not a vector", || be.scale_cols(dense_mut::<B>(&mut z, 3, 4), v(2, 2)));
    ok("scale_cols fits", || be.scale_cols(dense_mut::<B>(&mut z, 3, 4), v(4, 1)));

    expect_dims("axpy shapes differ", || be.axpy(1.0, v(3, 4), dense_mut::<B>(&mut z, 4, 3)));
    expect_dims("copy shapes differ", || be.copy(v(3, 4), dense_mut::<B>(&mut z, 3, 3)));
    {
        let mut w = be.alloc::<f32>(100).unwrap();
        expect_dims("cast shapes differ", || {
            be.cast(v(3, 4), ViewMut::<B, f32>::new(&mut w, Block::dense(4, 3)).unwrap())
        });
    }
    expect_dims("symmetrize not square", || be.symmetrize(Uplo::Lower, dense_mut::<B>(&mut z, 3, 4)));
    expect_dims("iamax not a vector", || be.iamax(v(2, 3)));

    let rfp = Rfp::new(4, Transr::Normal, Uplo::Lower);
    expect_dims("full_to_rfp A not square", || be.full_to_rfp(v(4, 3), rfp, dense_mut::<B>(&mut z, 10, 1)));
    expect_dims("full_to_rfp A of another n", || be.full_to_rfp(v(3, 3), rfp, dense_mut::<B>(&mut z, 10, 1)));
    expect_dims("full_to_rfp arf too short", || be.full_to_rfp(v(4, 4), rfp, dense_mut::<B>(&mut z, 9, 1)));
    expect_dims("full_to_rfp arf a row", || be.full_to_rfp(v(4, 4), rfp, dense_mut::<B>(&mut z, 1, 10)));
    expect_dims("rfp_to_full A of another n", || be.rfp_to_full(v(10, 1), rfp, dense_mut::<B>(&mut z, 5, 5)));
    expect_dims("rfp_to_full arf too long", || be.rfp_to_full(v(11, 1), rfp, dense_mut::<B>(&mut z, 4, 4)));
    ok("full_to_rfp fits", || be.full_to_rfp(v(4, 4), rfp, dense_mut::<B>(&mut z, 10, 1)));
    ok("rfp_to_full fits", || be.rfp_to_full(v(10, 1), rfp, dense_mut::<B>(&mut z, 4, 4)));

    // Nothing the failed calls were given was written.
    let mut after = vec![0.0; 100];
    for (name, buf) in [("x", &x), ("y", &y)] {
        be.download(buf, &mut after).unwrap();
        assert_eq!(after, host, "buffer {name} changed");
    }
}

/// A block written that shares elements with a block read, in one buffer:
/// `Err`, and nothing written. Blocks that share no element: accepted and
/// computed correctly, even where their bounding boxes intersect.
fn check_overlaps<B: Backend>(be: &B) {
    let r = &mut rng(31);
    let ld = 10;
    let blk = |offset, rows, cols| Block { offset, rows, cols, ld };
    // Entries of modest size with a dominant diagonal for the 3 × 3 triangles at offset 0.
    let mut host: Vec<f64> = (0..200).map(|_| uniform(r) / 3.0).collect();
    for i in 0..3 {
        host[i + i * ld] = 3.0;
    }
    let mut buf = be.upload(&host).unwrap();
    let (n, t) = (Op::NoTrans, Op::Trans);
    {
        let bm = BufferMut::<B, f64>::new(&mut buf);
        let v = |b| bm.view(b).unwrap();
        let w = |b| bm.view_mut(b).unwrap();
        // A: rows 0–3 of columns 0–3; B: rows 5–8 of columns 0–3.
        let (a, b) = (blk(0, 4, 4), blk(5, 4, 4));
        expect_overlap("gemm C overlaps A", || be.gemm(1.0, v(a), n, v(b), n, 0.0, w(blk(2, 4, 4))));
        expect_overlap("gemm C is A", || be.gemm(1.0, v(a), n, v(b), t, 0.0, w(a)));
        expect_overlap("gemm C overlaps B", || be.gemm(1.0, v(a), n, v(b), n, 1.0, w(blk(16, 4, 4))));
        // C with another leading dimension: compared by address range, and
        // here the ranges share elements of A and B.
        let c_other_ld = Block { offset: 30, rows: 4, cols: 4, ld: 5 };
        expect_overlap("gemm C overlaps A, another ld", || be.gemm(1.0, v(a), n, v(b), n, 1.0, w(c_other_ld)));
        expect_overlap("geam C overlaps A", || be.geam(1.0, v(a), n, 1.0, v(b), n, w(blk(1, 4, 4))));
        expect_overlap("geam C is B", || be.geam(1.0, v(a), n, 1.0, v(b), n, w(b)));
        // syrk writes the lower triangle of rows 0–3 × columns 0–3 and reads
        // the column of rows 1–4 in column 0: they share (1..4, 0).
        expect_overlap("syrk lower C overlaps A", || be.syrk(Uplo::Lower, n, 1.0, v(blk(1, 4, 1)), 0.0, w(a)));
        // trsm / trmm read the upper triangle of the 3 × 3 block at 0 and
        // write row 0 of columns 1–3, which holds A(0, 1) and A(0, 2).
        for name in ["trsm", "trmm"] {
            expect_overlap(&format!("{name} B overlaps the upper triangle of A"), || {
                if name == "trsm" {
                    be.trsm(Side::Right, Uplo::Upper, n, Diag::NonUnit, 1.0, v(blk(0, 3, 3)), w(blk(ld, 1, 3)))
                } else {
                    be.trmm(Side::Right, Uplo::Upper, n, Diag::NonUnit, 1.0, v(blk(0, 3, 3)), w(blk(ld, 1, 3)))
                }
            });
            expect_overlap(&format!("{name} B overlaps the lower triangle of A"), || {
                if name == "trsm" {
                    be.trsm(Side::Left, Uplo::Lower, t, Diag::Unit, 1.0, v(blk(0, 3, 3)), w(blk(2, 3, 2)))
                } else {
                    be.trmm(Side::Left, Uplo::Lower, t, Diag::Unit, 1.0, v(blk(0, 3, 3)), w(blk(2, 3, 2)))
                }
            });
        }
        expect_overlap("copy onto an overlapping block", || be.copy(v(a), w(blk(1, 4, 4))));
        expect_overlap("copy onto itself", || be.copy(v(a), w(a)));
        expect_overlap("axpy Y overlaps X", || be.axpy(2.0, v(a), w(blk(ld, 4, 4))));
        expect_overlap("scale_rows d inside A", || be.scale_rows(v(blk(0, 4, 1)), w(a)));
        expect_overlap("scale_cols d inside A", || be.scale_cols(w(a), v(blk(3, 1, 4))));
        let rfp = Rfp::new(3, Transr::Normal, Uplo::Lower);
        let arf = Block { offset: 150, rows: 6, cols: 1, ld: 6 };
        expect_overlap("full_to_rfp within one buffer", || be.full_to_rfp(v(blk(0, 3, 3)), rfp, w(arf)));
        expect_overlap("rfp_to_full within one buffer", || be.rfp_to_full(v(arf), rfp, w(blk(0, 3, 3))));
    }
    let mut after = vec![0.0; host.len()];
    be.download(&buf, &mut after).unwrap();
    assert!(after.iter().zip(&host).all(|(x, y)| same(*x, *y)), "a rejected call wrote to the buffer");

    // Accepted: disjoint blocks of the one buffer.
    let whole = |data: &[f64], block| Host { data: data.to_vec(), block };
    let fetch = |buf: &B::Buffer<f64>| {
        let mut v = vec![0.0; host.len()];
        be.download(buf, &mut v).unwrap();
        v
    };
    let (a, b, c) = (blk(0, 4, 4), blk(5, 4, 4), blk(4 * ld, 4, 4));
    {
        let bm = BufferMut::<B, f64>::new(&mut buf);
        ok("gemm C beside A and B", || {
            be.gemm(1.5, bm.view(a).unwrap(), n, bm.view(b).unwrap(), t, 0.5, bm.view_mut(c).unwrap())
        });
    }
    let now = fetch(&buf);
    whole(&host, c).assert_kept(&whole(&now, c), |_, _| true, "gemm C beside A and B");
    let (err, bound) =
        gemm_error(1.5, &whole(&host, a), n, &whole(&host, b), t, 0.5, &whole(&host, c), &whole(&now, c));
    assert!(err <= bound, "gemm C beside A and B: {err:e} > {bound:e}");

    // syrk writes the upper triangle of rows 0–3 × columns 0–3 (only row 0
    // of column 0) and reads rows 1–4 of column 0: bounding boxes intersect.
    let (before, ca, cc) = (now, blk(1, 4, 1), blk(0, 4, 4));
    {
        let bm = BufferMut::<B, f64>::new(&mut buf);
        ok("syrk upper C beside A", || {
            be.syrk(Uplo::Upper, n, -1.0, bm.view(ca).unwrap(), 1.0, bm.view_mut(cc).unwrap())
        });
    }
    let now = fetch(&buf);
    whole(&before, cc).assert_kept(&whole(&now, cc), |i, j| i <= j, "syrk upper C beside A");
    let (err, bound) =
        syrk_error(Uplo::Upper, n, -1.0, &whole(&before, ca), 1.0, &whole(&before, cc), &whole(&now, cc));
    assert!(err <= bound, "syrk upper C beside A: {err:e} > {bound:e}");

    // trsm / trmm read the lower triangle of the 3 × 3 block at 0 and write
    // row 0 of columns 1–3: inside A's strict upper triangle, which is free.
    for name in ["trsm", "trmm"] {
        let what = format!("{name} B in the other triangle of A");
        let (before, ta, tb) = (fetch(&buf), blk(0, 3, 3), blk(ld, 1, 3));
        {
            let bm = BufferMut::<B, f64>::new(&mut buf);
            let (av, bv) = (bm.view(ta).unwrap(), bm.view_mut(tb).unwrap());
            ok(&what, || {
                if name == "trsm" {
                    be.trsm(Side::Right, Uplo::Lower, n, Diag::NonUnit, 2.0, av, bv)
                } else {
                    be.trmm(Side::Right, Uplo::Lower, n, Diag::NonUnit, 2.0, av, bv)
                }
            });
        }
        let now = fetch(&buf);
        whole(&before, tb).assert_kept(&whole(&now, tb), |_, _| true, &what);
        let (a0, b0, x) = (whole(&before, ta), whole(&before, tb), whole(&now, tb));
        if name == "trsm" {
            let (err, bound) = trsm_error(Side::Right, Uplo::Lower, n, Diag::NonUnit, 2.0, &a0, &b0, &x);
            assert!(err <= bound, "{what}: {err:e} > {bound:e}");
        } else {
            let tri = tri_dense(&a0, Uplo::Lower, Diag::NonUnit);
            let reference: Vec<f64> =
                tri_apply(Side::Right, n, &tri, 3, &b0.dense(), (1, 3)).iter().map(|v| 2.0 * v).collect();
            let err = dist(&x.dense(), &reference);
            let bound = C * 5.0 * u::<f64>() * 2.0 * frobenius(&tri) * frobenius(&b0.dense());
            assert!(err <= bound, "{what}: {err:e} > {bound:e}");
        }
    }

    // axpy on the very same block: Y := α·Y + Y.
    let (before, yb) = (fetch(&buf), blk(6 * ld, 4, 4));
    {
        let bm = BufferMut::<B, f64>::new(&mut buf);
        ok("axpy with X = Y", || be.axpy(0.5, bm.view(yb).unwrap(), bm.view_mut(yb).unwrap()));
    }
    let now = fetch(&buf);
    whole(&before, yb).assert_kept(&whole(&now, yb), |_, _| true, "axpy with X = Y");
    for j in 0..4 {
        for i in 0..4 {
            let (y0, y) = (before[yb.index(i, j)], now[yb.index(i, j)]);
            let bound = two_term_bound::<f64>(0.5 * y0, y0);
            assert!((y - 1.5 * y0).abs() <= bound, "axpy with X = Y: ({i}, {j}) = {y}, expected {}", 1.5 * y0);
        }
    }
}

// ---------------------------------------------------------------------------
// The tests.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn gemm_on_sub_blocks(m in dim(), n in dim(), k in dim(), alpha in coef(), beta in coef(), seed in any::<u64>()) {
        let case = GemmCase { m, n, k, alpha, beta, seed };
        gpumat::with_backend!(dev(), be => {
            check_gemm::<_, f64>(be, case);
            check_gemm::<_, f32>(be, case);
        });
    }

    #[test]
    fn syrk_on_sub_blocks(n in dim(), k in dim(), alpha in coef(), beta in coef(), seed in any::<u64>()) {
        let case = SyrkCase { n, k, alpha, beta, seed };
        gpumat::with_backend!(dev(), be => {
            check_syrk::<_, f64>(be, case);
            check_syrk::<_, f32>(be, case);
        });
    }

    #[test]
    fn geam_on_sub_blocks(m in dim(), n in dim(), alpha in coef(), beta in coef(), seed in any::<u64>()) {
        let case = GeamCase { m, n, alpha, beta, seed };
        gpumat::with_backend!(dev(), be => {
            check_geam::<_, f64>(be, case);
            check_geam::<_, f32>(be, case);
        });
    }

    #[test]
    fn scalings_and_axpy_on_sub_blocks(m in dim(), n in dim(), row_vector in any::<bool>(), alpha in coef(), seed in any::<u64>()) {
        let case = ScaleCase { m, n, row_vector, alpha, seed };
        gpumat::with_backend!(dev(), be => {
            check_scalings::<_, f64>(be, case);
            check_scalings::<_, f32>(be, case);
            check_axpy::<_, f64>(be, case);
            check_axpy::<_, f32>(be, case);
        });
    }

    #[test]
    fn triangles_on_sub_blocks(m in dim(), n in dim(), seed in any::<u64>()) {
        let case = ShapeCase { m, n, seed };
        gpumat::with_backend!(dev(), be => {
            check_triangles::<_, f64>(be, case);
            check_triangles::<_, f32>(be, case);
            check_fill_random::<_, f64>(be, case);
            check_fill_random::<_, f32>(be, case);
        });
    }

    #[test]
    fn norms_on_sub_blocks(m in dim(), n in dim(), magnitude in 0..3usize, nan in prop::bool::weighted(0.2), seed in any::<u64>()) {
        let case = NormCase { m, n, magnitude, nan, seed };
        gpumat::with_backend!(dev(), be => {
            check_norm::<_, f64>(be, case);
            check_norm::<_, f32>(be, case);
        });
    }

    #[test]
    fn iamax_on_rows_and_columns(len in dim(), row in any::<bool>(), ties in any::<bool>(), nans in prop_oneof![3 => Just(0usize), 1 => 1..3usize], seed in any::<u64>()) {
        let case = IamaxCase { len, row, ties, nans, seed };
        gpumat::with_backend!(dev(), be => {
            check_iamax::<_, f64>(be, case);
            check_iamax::<_, f32>(be, case);
        });
    }

    #[test]
    fn find_non_finite_on_sub_blocks(m in dim(), n in dim(), count in prop_oneof![1 => Just(0usize), 2 => 1..4usize], seed in any::<u64>()) {
        let case = NonFiniteCase { m, n, count, seed };
        gpumat::with_backend!(dev(), be => {
            check_find_non_finite::<_, f64>(be, case);
            check_find_non_finite::<_, f32>(be, case);
        });
    }

    #[test]
    fn cast_copy_and_fill_on_sub_blocks(m in dim(), n in dim(), seed in any::<u64>()) {
        let case = ShapeCase { m, n, seed };
        gpumat::with_backend!(dev(), be => {
            check_cast(be, case);
            check_copy_fill::<_, f64>(be, case);
            check_copy_fill::<_, f32>(be, case);
        });
    }

    #[test]
    fn rfp_conversions_on_sub_blocks(n in 0..=15usize, seed in any::<u64>()) {
        // n and n + 1: odd and even orders, so all eight layouts every time.
        gpumat::with_backend!(dev(), be => {
            for order in [n, n + 1] {
                check_rfp::<_, f64>(be, order, seed);
                check_rfp::<_, f32>(be, order, seed);
            }
        });
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn trsm_on_sub_blocks(n in dim(), m in dim(), alpha in nonzero_coef(), seed in any::<u64>()) {
        let case = TriCase { n, m, alpha, seed };
        gpumat::with_backend!(dev(), be => {
            check_trsm::<_, f64>(be, case);
            check_trsm::<_, f32>(be, case);
        });
    }

    #[test]
    fn trmm_on_sub_blocks(n in dim(), m in dim(), alpha in nonzero_coef(), seed in any::<u64>()) {
        let case = TriCase { n, m, alpha, seed };
        gpumat::with_backend!(dev(), be => {
            check_trmm::<_, f64>(be, case);
            check_trmm::<_, f32>(be, case);
        });
    }
}

/// Orders past the 32-row blocks of the LU's leaves and up to its block
/// columns, with many right-hand sides: on the GPU the solves `L⁻¹·B` and
/// `B·L⁻ᵀ` of order up to 256 are one launch of `kernels/trsm.cu` (tiles of
/// 32 rows, a warp per 4 columns of the solve), so these orders and sizes
/// take every edge of it: a partial tile, a partial warp, several blocks.
#[test]
fn trsm_across_diagonal_blocks() {
    let cases = [(1, 3, 6), (31, 1, 7), (32, 33, 8), (33, 9, 1), (100, 45, 2), (256, 17, 3)];
    check_trsm_cases(&cases);
}

/// The same edges with more columns, and one order past 256.
#[test]
#[ignore = "long: run by CI's long job (cargo test -- --ignored)"]
fn trsm_across_diagonal_blocks_with_more_columns() {
    check_trsm_cases(&[(100, 300, 2), (257, 40, 4)]);
}

/// Many columns: on the GPU, many blocks of 32 columns, each staging two
/// tile columns of L (as long as there are no more blocks than SMs).
#[test]
fn trsm_on_many_columns() {
    check_trsm_cases(&[(40, 700, 12)]);
}

/// So many columns that the GPU's kernel has more blocks than SMs and
/// stages one tile column of L at a time instead of two.
#[test]
#[ignore = "long: run by CI's long job (cargo test -- --ignored)"]
fn trsm_on_more_columns_than_the_sms_take() {
    check_trsm_cases(&[(40, 8500, 12)]);
}

/// Orders past 256, which the GPU solves in diagonal blocks of 256 with a
/// `gemm` between them up to 1024, and through cuBLAS above: two diagonal
/// blocks, the last partial.
#[test]
fn trsm_by_diagonal_blocks_of_256() {
    check_trsm_cases(&[(300, 3, 9)]);
}

/// The same at larger orders and more columns: several diagonal blocks,
/// exactly 1024, and past it (cuBLAS on the GPU).
#[test]
#[ignore = "long: run by CI's long job (cargo test -- --ignored)"]
fn trsm_by_many_diagonal_blocks_of_256() {
    check_trsm_cases(&[(600, 7, 9), (1024, 5, 10), (1025, 3, 11)]);
}

/// One right-hand side with `α = 1`, which the GPU hands to cuBLAS `trsv`
/// (orders above 1024, and every transposed or upper solve). Orders below,
/// at and past a tile of 32, and past 1024.
#[test]
fn trsv_single_vectors() {
    check_trsv_cases(&[(1, 1), (31, 2), (32, 3), (33, 4), (100, 5), (1025, 6)]);
}

/// The same far past 1024.
#[test]
#[ignore = "long: run by CI's long job (cargo test -- --ignored)"]
fn trsv_single_long_vectors() {
    check_trsv_cases(&[(2100, 7)]);
}

// ---------------------------------------------------------------------------
// The block reflector of Householder QR.

/// `larfb` on `C` of `nc` columns: against `op(H)·C₀` with `H = I − V·T·Vᵀ`
/// formed densely in FP64, `V` read as unit lower trapezoidal. NaN on and
/// above `V`'s diagonal and below `T`'s, which must not be read. Bound:
/// `C·(mp + kb + 2)·u·(‖C₀‖_F + ‖V‖_F²·‖T‖_F·‖C₀‖_F)`, the rounding of the
/// three products and the subtraction.
fn check_larfb<B: Backend, T: Scalar>(be: &B, (mp, kb, nc): (usize, usize, usize), op: Op, seed: u64) {
    let r = &mut rng(seed);
    let what = format!("larfb {} {op:?}, V {mp}×{kb}, C {mp}×{nc}", T::NAME);
    let mut v = Host::<T>::new(r, mp, kb, NAN);
    v.fill(|i, j| if i > j { uniform(r) } else { NAN });
    let mut t = Host::<T>::new(r, kb, kb, NAN);
    t.fill(|i, j| if i <= j { uniform(r) } else { NAN });
    let c0 = Host::<T>::random(r, mp, nc, SENTINEL);
    let (vp, tp) = (v.upload(be), t.upload(be));
    let mut c = c0.upload(be);
    let mut work = be.alloc::<T>(kb * nc).unwrap();
    ok(&what, || be.larfb(vp.view(), tp.view(), op, c.view_mut(), &mut work));
    let got = c.written(be, |_, _| true, &what);
    vp.assert_unchanged(be, &what);
    tp.assert_unchanged(be, &what);
    let vd: Vec<f64> = (0..kb)
        .flat_map(|j| (0..mp).map(move |i| (i, j)))
        .map(|(i, j)| match i.cmp(&j) {
            std::cmp::Ordering::Greater => v.get(i, j),
            std::cmp::Ordering::Equal => 1.0,
            std::cmp::Ordering::Less => 0.0,
        })
        .collect();
    let td: Vec<f64> = (0..kb)
        .flat_map(|j| (0..kb).map(move |i| (i, j)))
        .map(|(i, j)| if i <= j { t.get(i, j) } else { 0.0 })
        .collect();
    let cd = c0.dense();
    // op(H)·C = C − V·op(T)·(Vᵀ·C).
    let (w, ..) = naive_matmul(&vd, (mp, kb), true, &cd, (mp, nc), false);
    let (tw, ..) = naive_matmul(&td, (kb, kb), op == Op::Trans, &w, (kb, nc), false);
    let (vtw, ..) = naive_matmul(&vd, (mp, kb), false, &tw, (kb, nc), false);
    let reference: Vec<f64> = cd.iter().zip(&vtw).map(|(c, x)| c - x).collect();
    let err = dist(&got.dense(), &reference);
    let (nv, nt, nc0) = (frobenius(&vd), frobenius(&td), frobenius(&cd));
    let bound = C * (mp + kb + 2) as f64 * u::<T>() * (nc0 + nv * nv * nt * nc0);
    assert!(err <= bound, "{what}: ‖C − op(H)·C₀‖_F = {err:e} > {bound:e}");
}

/// Few columns (the GPU's kernels, built for 1, 2 and 4) and more (its
/// level-3 products); reflectors of one column, a square `V`, tall ones
/// whose rows the GPU splits over several blocks, and a `T` wider than its
/// kernels take.
#[test]
fn block_reflectors() {
    let shapes = [(1, 1), (5, 5), (40, 7), (300, 32), (2000, 128), (200, 130)];
    for (case, &(mp, kb)) in shapes.iter().enumerate() {
        for nc in [1, 2, 3, 4, 5] {
            for op in OPS {
                let seed = (case * 100 + nc) as u64;
                gpumat::with_backend!(dev(), be => {
                    check_larfb::<_, f64>(be, (mp, kb, nc), op, seed);
                    check_larfb::<_, f32>(be, (mp, kb, nc), op, seed);
                });
            }
        }
    }
}

/// `C` empty, and a workspace too small for `W`.
#[test]
fn block_reflector_edges() {
    gpumat::with_backend!(dev(), be => {
        let r = &mut rng(3);
        let v = Host::<f64>::random(r, 6, 3, NAN).upload(be);
        let t = Host::<f64>::random(r, 3, 3, NAN).upload(be);
        let mut c = Host::<f64>::random(r, 6, 0, SENTINEL).upload(be);
        let mut work = be.alloc::<f64>(1).unwrap();
        ok("larfb on no columns", || be.larfb(v.view(), t.view(), Op::Trans, c.view_mut(), &mut work));
        let mut c = Host::<f64>::random(r, 6, 2, SENTINEL).upload(be);
        let err = call("larfb", || be.larfb(v.view(), t.view(), Op::Trans, c.view_mut(), &mut work));
        assert!(matches!(err, Err(Error::DimensionMismatch { .. })), "larfb with a workspace of 1 for W 3×2: {err:?}");
        c.assert_unchanged(be, "larfb refused");
    });
}

/// One column with `α = 1` in a product, which the GPU hands to cuBLAS
/// `trmv` on the left: every triangle, transposition and diagonal.
#[test]
fn trmv_single_vectors() {
    for (n, seed) in [(1, 1), (32, 2), (128, 3), (1025, 4)] {
        let case = TriCase { n, m: 1, alpha: Coef::One, seed };
        gpumat::with_backend!(dev(), be => {
            check_trmm::<_, f64>(be, case);
            check_trmm::<_, f32>(be, case);
        });
    }
}

/// One vector solved in FP64 from a triangle stored in either precision:
/// the backward error of the FP64 solve with the widened triangle,
/// `‖op(A)·x − b‖_F ≤ C·(n+2)·u₆₄·(‖A‖_F·‖x‖_F + ‖b‖_F)`, for every
/// triangle, transposition and diagonal, `x` a column and a row (stride
/// `ld`). Orders around the GPU's block rows of 64 and past a grid of them;
/// what lies outside the triangle, and a unit diagonal, is NaN and must not
/// be read.
#[test]
fn trsv_wide_vectors() {
    for (n, seed) in [(0, 1), (1, 2), (63, 3), (64, 4), (65, 5), (200, 6), (1000, 7), (4100, 8)] {
        gpumat::with_backend!(dev(), be => {
            check_trsv_wide::<_, f64>(be, n, seed);
            check_trsv_wide::<_, f32>(be, n, seed);
        });
    }
}

fn check_trsv_wide<B: Backend, T: Scalar>(be: &B, n: usize, seed: u64) {
    let r = &mut rng(seed);
    // `side` says how x is stored: a column (`Left`) or a row (`Right`).
    for (side, uplo, op, diag) in tri_cases() {
        let shape = if side == Side::Left { (n, 1) } else { (1, n) };
        let what = format!("trsv_wide {} {uplo:?} {op:?} {diag:?}, n = {n}, x {}×{}", T::NAME, shape.0, shape.1);
        let a = triangular::<T>(r, n, uplo, diag).upload(be);
        let b0 = Host::<f64>::random(r, shape.0, shape.1, SENTINEL);
        let mut x = b0.upload(be);
        ok(&what, || be.trsv_wide(uplo, op, diag, a.view(), x.view_mut()));
        let got = x.written(be, |_, _| true, &what).dense();
        a.assert_unchanged(be, &what);
        let t = tri_dense(&a.host, uplo, diag);
        let b = b0.dense();
        let ax = tri_apply(Side::Left, op, &t, n, &got, (n, 1));
        let err = dist(&ax, &b);
        let bound = C * (n + 2) as f64 * u::<f64>() * (frobenius(&t) * frobenius(&got) + frobenius(&b));
        assert!(err <= bound, "{what}: backward error ‖op(A)·x − b‖_F = {err:e} > {bound:e}");
    }
}

/// A triangle that is not square, or a vector not of its order, is an
/// error that names the shapes.
#[test]
fn trsv_wide_refuses_wrong_shapes() {
    gpumat::with_backend!(dev(), be => {
        let a = be.upload(&[1.0f32; 12]).unwrap();
        let mut x = be.upload(&[1.0f64; 4]).unwrap();
        for (rows, cols, len) in [(3, 4, 3), (3, 3, 4)] {
            let a = View::new(&a, Block::dense(rows, cols)).unwrap();
            let x = ViewMut::new(&mut x, Block::dense(len, 1)).unwrap();
            match be.trsv_wide(Uplo::Lower, Op::NoTrans, Diag::NonUnit, a, x) {
                Err(Error::DimensionMismatch { .. }) => {}
                other => panic!("A {rows}×{cols}, x of {len}: {other:?}"),
            }
        }
    });
}

fn check_trsv_cases(cases: &[(usize, u64)]) {
    for &(n, seed) in cases {
        let case = TriCase { n, m: 1, alpha: Coef::One, seed };
        gpumat::with_backend!(dev(), be => {
            check_trsm::<_, f64>(be, case);
            check_trsm::<_, f32>(be, case);
        });
    }
}

fn check_trsm_cases(cases: &[(usize, usize, u64)]) {
    for &(n, m, seed) in cases {
        let case = TriCase { n, m, alpha: Coef::Random, seed };
        gpumat::with_backend!(dev(), be => {
            check_trsm::<_, f64>(be, case);
            check_trsm::<_, f32>(be, case);
        });
    }
}

#[test]
fn gemm_of_one_column() {
    // A matrix times a vector, deep and shallow, with
    // every β: the same bound as any product.
    for (m, k) in [(1, 1), (7, 300), (64, 5000), (300, 40)] {
        for beta in [Coef::Zero, Coef::One, Coef::Random] {
            let case = GemmCase { m, n: 1, k, alpha: Coef::Random, beta, seed: 6 };
            gpumat::with_backend!(dev(), be => {
                check_gemm::<_, f64>(be, case);
                check_gemm::<_, f32>(be, case);
            });
        }
    }
}

#[test]
fn gemm_with_k_zero_scales_c() {
    for (m, n) in [(1, 1), (5, 3), (0, 4), (7, 0)] {
        for beta in [Coef::Zero, Coef::One, Coef::Random] {
            let case = GemmCase { m, n, k: 0, alpha: Coef::Random, beta, seed: 5 };
            gpumat::with_backend!(dev(), be => {
                check_gemm::<_, f64>(be, case);
                check_gemm::<_, f32>(be, case);
            });
        }
    }
}

#[test]
fn triangular_with_alpha_zero_reads_nothing() {
    gpumat::with_backend!(dev(), be => {
        check_triangular_alpha_zero::<_, f64>(be);
        check_triangular_alpha_zero::<_, f32>(be);
    });
}

#[test]
fn empty_vectors_have_no_iamax() {
    for (row, len) in [(false, 0), (true, 0)] {
        let case = IamaxCase { len, row, ties: false, nans: 0, seed: 1 };
        gpumat::with_backend!(dev(), be => check_iamax::<_, f64>(be, case));
    }
}

#[test]
fn rfp_pieces_in_one_buffer() {
    gpumat::with_backend!(dev(), be => check_rfp_pieces(be, 0));
}

#[test]
fn rfp_pieces_in_one_buffer_at_an_offset() {
    for base in 1..=3 {
        gpumat::with_backend!(dev(), be => check_rfp_pieces(be, base));
    }
}

#[test]
fn bad_blocks_are_errors() {
    gpumat::with_backend!(dev(), be => check_bad_blocks(be));
}

#[test]
fn shape_mismatches_are_errors() {
    gpumat::with_backend!(dev(), be => check_bad_shapes(be));
}

#[test]
fn overlapping_blocks_are_errors_and_disjoint_ones_are_not() {
    gpumat::with_backend!(dev(), be => check_overlaps(be));
}

// ---------------------------------------------------------------------------
// Cholesky panels.

/// `potrf_panel` on an `m × n` panel (`Lower`; `n × m` for `Upper`) of a
/// diagonally dominant SPD matrix: backward error ‖A − L·L11ᵀ‖_F / ‖A‖_F ≤
/// 10·n·u over the panel, computed in FP64 from the factor returned; the
/// other triangle of the diagonal block (NaN) is neither read nor written.
/// With `bad = Some(j)`, pivot `j` is made negative: `info` must name it.
fn check_potrf_panel<B: Backend, T: Scalar>(be: &B, uplo: Uplo, n: usize, m: usize, bad: Option<usize>) {
    let r = &mut rng((n * 1000 + m) as u64);
    let what = format!("potrf_panel {} {uplo:?} n = {n}, m = {m}, bad pivot {bad:?}", T::NAME);
    // Panel entry (i, j) of the lower form: row i < m, column j < n.
    let defined = |i: usize, j: usize| i >= j;
    let mut lower = vec![0.0; m * n];
    for j in 0..n {
        for i in j..m {
            lower[i + j * m] = if i == j { m as f64 + 1.0 } else { uniform(r) };
        }
    }
    if let Some(j) = bad {
        lower[j + j * m] = -1.0;
    }
    let (rows, cols) = if uplo == Uplo::Lower { (m, n) } else { (n, m) };
    let at = |i: usize, j: usize| if uplo == Uplo::Lower { (i, j) } else { (j, i) };
    let mut a = Host::<T>::new(r, rows, cols, NAN);
    for j in 0..n {
        for i in 0..m {
            let (p, q) = at(i, j);
            a.set(p, q, if defined(i, j) { lower[i + j * m] } else { NAN });
        }
    }
    let mut placed = a.upload(be);
    let mut info = be.upload(&[0i32]).unwrap();
    let offset = 5;
    ok(&what, || be.potrf_panel(uplo, placed.view_mut(), ViewMut::dense(&mut info, 1, 1)?, offset));
    let mut status = [0i32];
    be.download(&info, &mut status).unwrap();
    let got = placed.written(
        be,
        |p, q| {
            let (i, j) = at(p, q);
            defined(i, j)
        },
        &what,
    );
    if let Some(j) = bad {
        assert_eq!(status[0], (offset + j + 1) as i32, "{what}: info");
        return;
    }
    assert_eq!(status[0], 0, "{what}: info");
    let l = |i: usize, j: usize| {
        let (p, q) = at(i, j);
        got.get(p, q)
    };
    let (mut err, mut norm) = (0.0f64, 0.0f64);
    for j in 0..n {
        for i in j..m {
            let llt: f64 = (0..=j).map(|k| l(i, k) * l(j, k)).sum();
            let x = T::from_f64(lower[i + j * m]).to_f64();
            err += (x - llt).powi(2);
            norm += x * x;
        }
    }
    let bound = 10.0 * n as f64 * u::<T>();
    let e = (err / norm).sqrt();
    assert!(e <= bound, "{what}: backward error {e:.2e} > {bound:.2e}");
}

#[test]
fn potrf_panel_factors_and_solves() {
    // Widths around the GPU's one-kernel limit of 64, lengths around its
    // 64-row blocks, and a panel of many blocks (past what the GPU holds at
    // once in the long run).
    let cases =
        [(1, 1), (1, 9), (7, 7), (13, 200), (63, 64), (64, 64), (64, 129), (65, 65), (65, 300), (100, 170), (64, 3000)];
    for uplo in UPLOS {
        for (n, m) in cases {
            gpumat::with_backend!(dev(), be => {
                check_potrf_panel::<_, f64>(be, uplo, n, m, None);
                check_potrf_panel::<_, f32>(be, uplo, n, m, None);
            });
        }
        for (n, m, j) in [(1, 4, 0), (40, 300, 17), (64, 64, 63), (90, 200, 70)] {
            gpumat::with_backend!(dev(), be => check_potrf_panel::<_, f64>(be, uplo, n, m, Some(j)));
        }
    }
}

/// A panel of more row blocks than the GPU holds at once.
#[test]
#[ignore = "long: run by CI's long job (cargo test -- --ignored)"]
fn potrf_panel_longer_than_the_gpu_holds() {
    for uplo in UPLOS {
        gpumat::with_backend!(dev(), be => {
            check_potrf_panel::<_, f64>(be, uplo, 64, 60_000, None);
            check_potrf_panel::<_, f32>(be, uplo, 64, 60_000, None);
        });
    }
}
