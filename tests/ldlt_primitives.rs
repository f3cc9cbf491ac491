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
//!
//! The unpivoted leaf, `ldlt_panel`, is checked against its definition in
//! FP64 on the host instead (the GPU's leaf orders its sums its own way),
//! and the unpivoted blocked factorization in every storage.

mod common;

use common::{frobenius, rng};
use gpumat::backend::{Backend, Block, BufferMut, Cpu, SymPanel, SymPivoting, Triangle, View, ViewMut};
use gpumat::factor::ldlt::{LdltPivoting, factor_in_place};
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
    let method = if pivoted { gpumat::LdltMethod::BunchKaufman } else { gpumat::LdltMethod::Unpivoted };
    let f = sym.ldlt_with(method, params).unwrap();
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

/// `ldlt_panel` on `be` for an `n`-wide, `m`-long `uplo` panel of `a`
/// (its `block`), `W` in a block with an offset and a leading dimension
/// past its rows; returns `a`, `W`'s buffer, `d` and `info` downloaded.
#[allow(clippy::type_complexity)]
fn leaf_on<B: Backend, T: Scalar>(
    be: &B,
    a: &[T],
    (uplo, block): (Uplo, Block),
    (n, m): (usize, usize),
    (wblock, wlen): (Block, usize),
    tol: f64,
) -> Result<(Vec<T>, Vec<T>, Vec<T>, i32)> {
    let mut buf = be.upload(a)?;
    let mut w = be.upload(&vec![T::from_f64(f64::NAN); wlen])?;
    let mut d = be.upload(&vec![T::from_f64(f64::NAN); n.max(1)])?;
    let mut info = be.upload(&[0i32])?;
    be.ldlt_panel(
        uplo,
        ViewMut::new(&mut buf, block)?,
        ViewMut::new(&mut w, wblock)?,
        ViewMut::dense(&mut d, n, 1)?,
        ViewMut::dense(&mut info, 1, 1)?,
        4,
        tol,
    )?;
    let _ = m;
    Ok((download(be, &buf, a.len())?, download(be, &w, wlen)?, download(be, &d, n.max(1))?, download(be, &info, 1)?[0]))
}

/// The leaf against its definition: `L·D·L₁₁ᵀ = A` on the panel's lower
/// trapezoid within `c·n·u·‖A‖`, `d` the diagonal kept, `W = L₂₁·D` to the
/// rounding of one product, every entry outside the trapezoid (and `W`'s
/// block) untouched; a pivot below `tol` gives a zero column of `L` and
/// its column in `info`.
fn leaves<T: Scalar>() {
    let mut r = rng(23);
    let u = T::unit_roundoff();
    for (n, m) in [(1, 1), (5, 5), (64, 64), (64, 200), (37, 300), (16, 1000), (3, 70)] {
        for uplo in [Uplo::Lower, Uplo::Upper] {
            for zero in [None, Some(2usize)] {
                if zero.is_some_and(|z| z >= n) {
                    continue;
                }
                // Entry (i, j) of L's trapezoid, i ≥ j, i < m, j < n.
                let mut l = vec![0.0; m * n];
                for j in 0..n {
                    for i in j..m {
                        // Diagonally dominant: every pivot near m + 1, above tol.
                        l[i + j * m] = entry(&mut r, Kind::Dominant, m + 1, i, j);
                        if zero.is_some_and(|z| i == z || j == z) {
                            l[i + j * m] = 0.0;
                        }
                    }
                }
                let (rows, cols) = if uplo == Uplo::Lower { (m, n) } else { (n, m) };
                let block = Block { offset: 3, rows, cols, ld: rows + 2 };
                let at = |i: usize, j: usize| if uplo == Uplo::Lower { block.index(i, j) } else { block.index(j, i) };
                let mut a = vec![T::from_f64(f64::NAN); block.end() + 2];
                for j in 0..n {
                    for i in j..m {
                        a[at(i, j)] = T::from_f64(l[i + j * m]);
                    }
                }
                let (wr, wc) = if uplo == Uplo::Lower { (m - n, n) } else { (n, m - n) };
                let wblock = Block { offset: 1, rows: wr, cols: wc, ld: wr + 3 };
                let wlen = wblock.end() + 2;
                let tol = 0.5;
                let what = format!("{} leaf {n}×{m} {uplo:?} zero {zero:?}", T::NAME);
                let dev = common::device();
                let (out, w, d, info) =
                    with_backend!(dev, be => leaf_on(be, &a, (uplo, block), (n, m), (wblock, wlen), tol))
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(info, zero.map_or(0, |z| 4 + z as i32 + 1), "{what}: info");
                let lf = |i: usize, j: usize| if i == j { 1.0 } else { out[at(i, j)].to_f64() };
                let dv: Vec<f64> = d.iter().take(n).map(|x| x.to_f64()).collect();
                let mut diff = 0.0f64;
                let mut norm = 0.0f64;
                for j in 0..n {
                    assert_eq!(
                        out[at(j, j)].to_f64().to_bits(),
                        dv[j].to_bits(),
                        "{what}: D({j}) kept on the diagonal"
                    );
                    for i in j..m {
                        let x = out[at(i, j)].to_f64();
                        assert!(x.is_finite(), "{what}: L({i},{j}) = {x}");
                        if zero == Some(j) && i > j {
                            assert_eq!(x, 0.0, "{what}: L({i},{j}) of the zero pivot's column");
                        }
                        let ldl: f64 = (0..=j).map(|k| lf(i, k) * dv[k] * lf(j, k)).sum();
                        diff += (ldl - l[i + j * m]).powi(2);
                        norm += l[i + j * m].powi(2);
                    }
                }
                let err = diff.sqrt() / norm.sqrt();
                assert!(err <= 30.0 * n as f64 * u, "{what}: ‖L·D·L₁₁ᵀ − A‖/‖A‖ = {err:e}");
                let mut inside = vec![false; a.len()];
                for j in 0..n {
                    for i in j..m {
                        inside[at(i, j)] = true;
                    }
                }
                for (p, x) in a.iter().enumerate() {
                    if !inside[p] {
                        assert!(x.to_f64().is_nan() && out[p].to_f64().is_nan(), "{what}: entry {p} outside written");
                    }
                }
                let mut covered = vec![false; w.len()];
                for (k, &dk) in dv.iter().enumerate() {
                    for i in n..m {
                        let p = if uplo == Uplo::Lower { wblock.index(i - n, k) } else { wblock.index(k, i - n) };
                        covered[p] = true;
                        let (got, want) = (w[p].to_f64(), lf(i, k) * dk);
                        assert!(
                            (got - want).abs() <= 2.0 * u * want.abs(),
                            "{what}: W({i},{k}) = {got} for L·D = {want}"
                        );
                    }
                }
                for (p, x) in w.iter().enumerate() {
                    assert!(covered[p] || x.to_f64().is_nan(), "{what}: W's entry {p} outside its block written");
                }
            }
        }
    }
}

#[test]
fn the_unpivoted_leaf_is_its_definition() {
    leaves::<f64>();
    leaves::<f32>();
}

/// The unpivoted blocked factorization of a diagonally dominant matrix on
/// the device, full storage and the eight RFP layouts (odd and even order),
/// blocked small so that the look-ahead, the recursion and every leaf path
/// run: ‖A − L·D·Lᵀ‖_F / ‖A‖_F ≤ 30·n·u, from the stored factor on the host.
fn unpivoted_storages<B: Backend, T: Scalar>(be: &B) -> Result<()> {
    let mut r = rng(29);
    let params = LdltParams { block_size: 32, leaf_size: 8, update_tile: 12 };
    for n in [150usize, 151] {
        let mut lower = vec![0.0; n * n];
        for j in 0..n {
            for i in j..n {
                lower[i + j * n] = entry(&mut r, Kind::Dominant, n, i, j);
            }
        }
        let storages = [None].into_iter().chain(RFP_CASES.map(Some));
        for storage in storages {
            let (tri, len) = match storage {
                None => {
                    let block = Block { offset: 1, rows: n, cols: n, ld: n + 1 };
                    (Triangle::full(Uplo::Lower, block)?, block.end())
                }
                Some((transr, uplo)) => {
                    let rfp = Rfp::new(n, transr, uplo);
                    (Triangle::rfp(rfp, 0), rfp.len())
                }
            };
            let mut host = vec![T::ZERO; len];
            for j in 0..n {
                for i in j..n {
                    host[tri.locate(i, j)] = T::from_f64(lower[i + j * n]);
                }
            }
            let mut a = be.upload(&host)?;
            let (mut ipiv, mut d, mut e) = (be.alloc::<i32>(n)?, be.alloc::<T>(n)?, be.alloc::<T>(n)?);
            let zero = factor_in_place(
                be,
                &tri,
                &BufferMut::new(&mut a),
                ViewMut::dense(&mut ipiv, n, 1)?,
                ViewMut::dense(&mut d, n, 1)?,
                ViewMut::dense(&mut e, n, 1)?,
                LdltPivoting::None { tol: 1.0 },
                params,
            )?;
            let what = format!("{} n={n} {storage:?}", T::NAME);
            assert_eq!(zero, None, "{what}: a zero pivot");
            let out = download(be, &a, len)?;
            let dv: Vec<f64> = download(be, &d, n)?.iter().map(|x| x.to_f64()).collect();
            let l = |i: usize, j: usize| if i == j { 1.0 } else { out[tri.locate(i, j)].to_f64() };
            let (mut diff, mut norm) = (0.0f64, 0.0f64);
            for j in 0..n {
                assert_eq!(out[tri.locate(j, j)].to_f64(), dv[j], "{what}: D({j}) on the diagonal");
                for i in j..n {
                    let ldl: f64 = (0..=j).map(|k| l(i, k) * dv[k] * l(j, k)).sum();
                    let w = if i == j { 1.0 } else { 2.0 };
                    diff += w * (ldl - lower[i + j * n]).powi(2);
                    norm += w * lower[i + j * n].powi(2);
                }
            }
            let err = diff.sqrt() / norm.sqrt();
            assert!(err <= 30.0 * n as f64 * T::unit_roundoff(), "{what}: ‖A − L·D·Lᵀ‖_F/‖A‖_F = {err:e}");
        }
    }
    Ok(())
}

#[test]
fn the_unpivoted_factorization_in_every_storage() {
    let dev = common::device();
    with_backend!(dev, be => unpivoted_storages::<_, f64>(be)).unwrap();
    with_backend!(dev, be => unpivoted_storages::<_, f32>(be)).unwrap();
}
