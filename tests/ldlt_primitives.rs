//! The LDLᵀ primitives on the device under test against the CPU backend,
//! bit for bit: `sytrf_panel` (Bunch–Kaufman and unpivoted, full and RFP
//! storage, panels over one block of rows or many) and
//! `block_diagonal_solve` (strided `d` and `e`). The CUDA kernels do the
//! CPU's arithmetic operation for operation, so every output — the matrix,
//! the workspaces `L` and `W` (and what they leave untouched), `d`, `e`,
//! `ipiv`, `info` — must be the same; a NaN matches any NaN. Then the
//! blocked factorization on the device reconstructs `A` within its backward
//! error bound.
//!
//! On the CPU (CI) the bitwise tests compare the CPU with itself; they
//! matter with `GPUMAT_DEVICE=cuda`.

mod common;

use common::{frobenius, rng};
use gpumat::backend::{Backend, Block, BufferMut, Cpu, SymPanel, SymPivoting, Triangle, View, ViewMut};
use gpumat::layout::{Rfp, Transr, Uplo};
use gpumat::{LdltParams, Result, Scalar, Sym, with_backend};
use rand::Rng;
use rand::rngs::StdRng;

/// How the test matrices are drawn: entries uniform in [-1, 1), and then
/// some made special.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Random,
    /// Tiny diagonal: Bunch–Kaufman takes many 2×2 pivots.
    SmallDiagonal,
    /// Every fifth row and column zero: zero pivots.
    ZeroColumns,
    /// Small integers: ties between candidates.
    Integers,
    /// Diagonally dominant: safe without pivoting.
    Dominant,
    /// One NaN below the diagonal.
    Nan,
}

/// The symmetric matrix's entry (i, j), i ≥ j.
fn entry(r: &mut StdRng, kind: Kind, n: usize, i: usize, j: usize) -> f64 {
    let v: f64 = r.random_range(-1.0..1.0);
    match kind {
        Kind::SmallDiagonal if i == j => v * 1e-3,
        Kind::ZeroColumns if i % 5 == 2 || j % 5 == 2 => 0.0,
        Kind::Integers => f64::from(r.random_range(-2..3)),
        Kind::Dominant if i == j => n as f64 + v,
        Kind::Nan if (i, j) == (n - 2, 1) => f64::NAN,
        _ => v,
    }
}

/// The inputs of one `sytrf_panel` call, on the host.
struct Case<T> {
    a: Vec<T>,
    tri: Triangle,
    k: usize,
    nb: usize,
    pivoting: SymPivoting,
    /// The first zero pivot already in `info[0]`.
    info0: i32,
}

impl<T: Scalar> Case<T> {
    /// A matrix of order `n` in `storage` (`None`: full, with a leading
    /// dimension past `n` and an offset; else that RFP layout), every entry
    /// outside the triangle NaN, which no output may come from.
    fn new(r: &mut StdRng, n: usize, storage: Option<(Transr, Uplo)>, kind: Kind) -> Self {
        let (tri, len) = match storage {
            None => {
                let block = Block { offset: 3, rows: n, cols: n, ld: n + 2 };
                (Triangle::full(Uplo::Lower, block).unwrap(), block.end() + 1)
            }
            Some((transr, uplo)) => {
                let rfp = Rfp::new(n, transr, uplo);
                (Triangle::rfp(rfp, 2), rfp.len() + 3)
            }
        };
        let mut a = vec![T::from_f64(f64::NAN); len];
        for j in 0..n {
            for i in j..n {
                a[tri.locate(i, j)] = T::from_f64(entry(r, kind, n, i, j));
            }
        }
        Case { a, tri, k: 0, nb: 1, pivoting: SymPivoting::BunchKaufman, info0: 0 }
    }
}

/// Bits of each entry, every NaN the same.
fn bits<T: Scalar>(x: &[T]) -> Vec<u64> {
    x.iter().map(|v| if v.to_f64().is_nan() { u64::MAX } else { v.to_f64().to_bits() }).collect()
}

/// Everything `sytrf_panel` may write, downloaded.
#[derive(Debug, PartialEq)]
struct Out {
    a: Vec<u64>,
    l: Vec<u64>,
    w: Vec<u64>,
    d: Vec<u64>,
    e: Vec<u64>,
    ipiv: Vec<i32>,
    info: Vec<i32>,
}

fn download<B: Backend, E: gpumat::Elem + Default + Clone>(be: &B, buf: &B::Buffer<E>, len: usize) -> Result<Vec<E>> {
    let mut host = vec![E::default(); len];
    be.download(buf, &mut host)?;
    Ok(host)
}

/// The panel on backend `be`: workspaces with a leading dimension past
/// their rows, `d` and `e` rows of a matrix (stride 2), each prefilled with
/// its own sentinel.
fn panel_on<B: Backend, T: Scalar>(be: &B, case: &Case<T>) -> Result<Out> {
    let n = case.tri.cols;
    let rows = n - case.k;
    let ws = Block { offset: 2, rows, cols: (case.nb + 1).min(rows), ld: rows + 3 };
    let vector = Block { offset: 1, rows: 1, cols: n, ld: 2 };
    let mut a = be.upload(&case.a)?;
    let mut l = be.upload(&vec![T::from_f64(7777.0); ws.end() + 2])?;
    let mut w = be.upload(&vec![T::from_f64(-5555.0); ws.end() + 2])?;
    let mut d = be.upload(&vec![T::from_f64(11.0); vector.end() + 1])?;
    let mut e = be.upload(&vec![T::from_f64(13.0); vector.end() + 1])?;
    let mut ipiv = be.upload(&vec![-7i32; n])?;
    let mut info = be.upload(&[case.info0, -9])?;
    be.sytrf_panel(
        &BufferMut::new(&mut a),
        &case.tri,
        case.k,
        SymPanel {
            nb: case.nb,
            l: ViewMut::new(&mut l, ws)?,
            w: ViewMut::new(&mut w, ws)?,
            ipiv: ViewMut::dense(&mut ipiv, n, 1)?,
            d: ViewMut::new(&mut d, vector)?,
            e: ViewMut::new(&mut e, vector)?,
            info: ViewMut::dense(&mut info, 2, 1)?,
        },
        case.pivoting,
    )?;
    Ok(Out {
        a: bits(&download(be, &a, case.a.len())?),
        l: bits(&download(be, &l, ws.end() + 2)?),
        w: bits(&download(be, &w, ws.end() + 2)?),
        d: bits(&download(be, &d, vector.end() + 1)?),
        e: bits(&download(be, &e, vector.end() + 1)?),
        ipiv: download(be, &ipiv, n)?,
        info: download(be, &info, 2)?,
    })
}

/// The device's panel is the CPU's, output by output.
fn agree<T: Scalar>(case: &Case<T>, what: &str) {
    let want = panel_on(&Cpu::new(), case).unwrap();
    let dev = common::device();
    let got = with_backend!(dev, be => panel_on(be, case)).unwrap_or_else(|e| panic!("{what}: {e}"));
    let name = T::NAME;
    let fields = [("a", &got.a, &want.a), ("L", &got.l, &want.l), ("W", &got.w, &want.w)];
    for (field, g, w) in fields.into_iter().chain([("d", &got.d, &want.d), ("e", &got.e, &want.e)]) {
        if let Some(p) = g.iter().zip(w.iter()).position(|(x, y)| x != y) {
            panic!(
                "{name} {what}: {field} differs first at {p}: {} vs {} (CPU)",
                f64::from_bits(g[p]),
                f64::from_bits(w[p])
            );
        }
    }
    assert_eq!(got.ipiv, want.ipiv, "{name} {what}: ipiv");
    assert_eq!(got.info, want.info, "{name} {what}: info");
}

const RFP_CASES: [(Transr, Uplo); 4] = [
    (Transr::Normal, Uplo::Lower),
    (Transr::Normal, Uplo::Upper),
    (Transr::Transpose, Uplo::Lower),
    (Transr::Transpose, Uplo::Upper),
];

fn panels<T: Scalar>() {
    let mut r = rng(17);
    // (n, k, nb): one block of rows or several (256 rows each), the last
    // panel of a matrix, a panel wider than the kernel's staging (256).
    let shapes = [(9, 2, 4), (600, 0, 64), (600, 537, 63), (1100, 300, 32), (560, 0, 260)];
    let kinds = [Kind::Random, Kind::SmallDiagonal, Kind::ZeroColumns, Kind::Integers, Kind::Nan];
    for (s, &(n, k, nb)) in shapes.iter().enumerate() {
        // The wide panel is slow on the CPU: two storages.
        let storages = [None].into_iter().chain(RFP_CASES.map(Some)).take(if nb > 256 { 2 } else { 5 });
        for (t, storage) in storages.enumerate() {
            let kind = kinds[(s + t) % kinds.len()];
            let mut case = Case::<T>::new(&mut r, n, storage, kind);
            (case.k, case.nb) = (k, nb);
            case.info0 = if t % 2 == 0 { 0 } else { 5 };
            agree(&case, &format!("Bunch–Kaufman n={n} k={k} nb={nb} {storage:?} {kind:?}"));
            let mut case = Case::<T>::new(&mut r, n, storage, Kind::Dominant);
            (case.k, case.nb, case.pivoting) = (k, nb, SymPivoting::None { tol: 0.5 });
            agree(&case, &format!("unpivoted n={n} k={k} nb={nb} {storage:?}"));
        }
        // Unpivoted with pivots below the tolerance: zero pivots go on.
        let mut case = Case::<T>::new(&mut r, n, None, Kind::Random);
        (case.k, case.nb, case.pivoting) = (k, nb, SymPivoting::None { tol: 0.3 });
        agree(&case, &format!("unpivoted, small pivots, n={n} k={k} nb={nb}"));
    }
}

#[test]
fn the_panel_is_the_cpus_bit_for_bit() {
    panels::<f64>();
    panels::<f32>();
}

#[test]
fn a_tall_panel_over_many_blocks_is_the_cpus() {
    // 11 blocks of rows: candidate exchanges and interchanges cross them.
    let mut r = rng(5);
    for kind in [Kind::Random, Kind::SmallDiagonal] {
        let mut case = Case::<f64>::new(&mut r, 2600, Some((Transr::Transpose, Uplo::Lower)), kind);
        case.nb = 64;
        agree(&case, &format!("n=2600 nb=64 {kind:?}"));
    }
}

/// `B := D⁻¹·B` on `be`, `d` and `e` rows of a matrix (stride 3), `B` a
/// block with an offset and a leading dimension past its rows.
fn solve_on<B: Backend, T: Scalar>(be: &B, d: &[T], e: &[T], b: &[T], rows: usize, cols: usize) -> Result<Vec<u64>> {
    let vector = Block { offset: 2, rows: 1, cols: rows, ld: 3 };
    let strided = |x: &[T]| {
        let mut v = vec![T::from_f64(f64::NAN); vector.end() + 1];
        for (i, &xi) in x.iter().enumerate() {
            v[vector.vector_index(i)] = xi;
        }
        be.upload(&v)
    };
    let (dd, ee) = (strided(d)?, strided(e)?);
    let block = Block { offset: 1, rows, cols, ld: rows + 2 };
    let mut host = vec![T::from_f64(3.0); block.end() + 1];
    for j in 0..cols {
        for i in 0..rows {
            host[block.index(i, j)] = b[i + j * rows];
        }
    }
    let mut bb = be.upload(&host)?;
    be.block_diagonal_solve(View::new(&dd, vector)?, View::new(&ee, vector)?, ViewMut::new(&mut bb, block)?)?;
    Ok(bits(&download(be, &bb, host.len())?))
}

fn solves<T: Scalar>() {
    let mut r = rng(3);
    for (rows, cols) in [(1, 1), (2, 3), (7, 1), (1000, 5), (300, 700)] {
        // 2×2 blocks at random, as a factorization leaves them: e[i] ≠ 0
        // only at the first row of one, with e[i + 1] = 0.
        let mut e = vec![T::ZERO; rows];
        let mut i = 0;
        while i + 1 < rows {
            if r.random_bool(0.4) {
                e[i] = T::from_f64(r.random_range(-2.0..2.0));
                i += 2;
            } else {
                i += 1;
            }
        }
        let d: Vec<T> = (0..rows).map(|_| T::from_f64(r.random_range(-1.0..1.0))).collect();
        let b: Vec<T> = (0..rows * cols).map(|_| T::from_f64(r.random_range(-1.0..1.0))).collect();
        let want = solve_on(&Cpu::new(), &d, &e, &b, rows, cols).unwrap();
        let dev = common::device();
        let got = with_backend!(dev, be => solve_on(be, &d, &e, &b, rows, cols)).unwrap();
        assert_eq!(got, want, "{} {rows}×{cols}", T::NAME);
    }
}

#[test]
fn the_solve_with_d_is_the_cpus_bit_for_bit() {
    solves::<f64>();
    solves::<f32>();
}

/// ‖A − Pᵀ·L·D·Lᵀ·P‖_F / ‖A‖_F for the factorization on the device.
fn reconstruction<T: Scalar>(a: &[f64], n: usize, rfp: bool, pivoted: bool, params: LdltParams) -> f64 {
    let dev = common::device();
    let values: Vec<T> = a.iter().map(|&x| T::from_f64(x)).collect();
    let sym = Sym::from_lower(dev.from_col_major(n, n, &values).unwrap()).unwrap();
    let sym = if rfp { sym.to_rfp().unwrap() } else { sym };
    let f = sym.ldlt_with(pivoted, params).unwrap();
    let back: Vec<f64> = f.reconstruct().unwrap().to_host().unwrap().into_iter().map(Scalar::to_f64).collect();
    let rounded: Vec<f64> = values.iter().map(|v| v.to_f64()).collect();
    let diff: Vec<f64> = back.iter().zip(&rounded).map(|(x, y)| x - y).collect();
    frobenius(&diff) / frobenius(&rounded)
}

#[test]
fn the_blocked_factorization_reconstructs_a() {
    let mut r = rng(11);
    for (n, nb) in [(1, 64), (70, 16), (700, 64)] {
        let params = LdltParams { block_size: nb, leaf_size: 16, update_tile: 256 };
        for kind in [Kind::Random, Kind::SmallDiagonal, Kind::Dominant] {
            let mut a = vec![0.0; n * n];
            for j in 0..n {
                for i in j..n {
                    a[i + j * n] = entry(&mut r, kind, n, i, j);
                    a[j + i * n] = a[i + j * n];
                }
            }
            for rfp in [false, true] {
                let pivoted = !matches!(kind, Kind::Dominant);
                // Growth is small for these matrices: a bound of n·u with room.
                let err = reconstruction::<f64>(&a, n, rfp, pivoted, params);
                assert!(err <= 50.0 * n as f64 * f64::EPSILON, "f64 n={n} {kind:?} rfp={rfp}: {err:e}");
                let err = reconstruction::<f32>(&a, n, rfp, pivoted, params);
                assert!(err <= 50.0 * n as f64 * f64::from(f32::EPSILON), "f32 n={n} {kind:?} rfp={rfp}: {err:e}");
            }
        }
    }
}
