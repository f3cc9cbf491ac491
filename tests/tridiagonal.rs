//! Batched tridiagonal solves (`Backend::tridiagonal_solve`) on the device
//! under test, against an independent FP64 reference: each system's
//! normwise backward error ‖T·x − b‖∞ / (‖T‖∞·‖x‖∞ + ‖b‖∞) ≤ 10·u, in both
//! layouts, with and without pivoting, blocks with offsets and leading
//! dimensions past their rows, entries outside them poisoned with NaN. A
//! singular or NaN system is reported by its index and leaves the others
//! solved.

mod common;

use common::rng;
use gpumat::backend::{Backend, Block, SystemLayout, ViewMut};
use gpumat::{Error, Result, Scalar, with_backend};
use rand::Rng;
use rand::rngs::StdRng;

/// A batch on the host: `count` systems of order `m`, each entry by (system, row).
struct Batch {
    m: usize,
    count: usize,
    dl: Vec<f64>,
    d: Vec<f64>,
    du: Vec<f64>,
    b: Vec<f64>,
}

impl Batch {
    /// Diagonally dominant (`dominant`), else with small diagonals that
    /// need row interchanges (every third one zero).
    fn random(r: &mut StdRng, m: usize, count: usize, dominant: bool) -> Self {
        let len = m * count;
        let mut x = |_| r.random_range(-1.0..1.0);
        let (dl, du, b): (Vec<f64>, Vec<f64>, Vec<f64>) =
            ((0..len).map(&mut x).collect(), (0..len).map(&mut x).collect(), (0..len).map(&mut x).collect());
        let d = (0..len)
            .map(|k| {
                let v: f64 = r.random_range(-1.0..1.0);
                if dominant {
                    v.signum() * (2.5 + v.abs())
                } else if k % 3 == 0 && m > 1 {
                    0.0
                } else {
                    1e-3 * v
                }
            })
            .collect();
        Batch { m, count, dl, d, du, b }
    }

    fn at(&self, s: usize, i: usize) -> usize {
        s * self.m + i
    }

    /// ‖T·x − b‖∞ / (‖T‖∞·‖x‖∞ + ‖b‖∞) of system `s` for the solution `x`.
    fn backward_error(&self, s: usize, x: &[f64]) -> f64 {
        let m = self.m;
        let (mut r, mut t, mut xn, mut bn) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for i in 0..m {
            let k = self.at(s, i);
            let (sub, sup) = (if i > 0 { self.dl[k] } else { 0.0 }, if i + 1 < m { self.du[k] } else { 0.0 });
            let mut ax = self.d[k] * x[i];
            if i > 0 {
                ax += sub * x[i - 1];
            }
            if i + 1 < m {
                ax += sup * x[i + 1];
            }
            r = r.max((ax - self.b[k]).abs());
            t = t.max(sub.abs() + self.d[k].abs() + sup.abs());
            xn = xn.max(x[i].abs());
            bn = bn.max(self.b[k].abs());
        }
        r / (t * xn + bn)
    }
}

/// The batch solved on `be` in `layout`: each array in a block at offset 2
/// with 3 entries of slack per line, NaN around; returns x by (system, row)
/// and `info`.
fn solve_on<B: Backend, T: Scalar>(
    be: &B,
    batch: &Batch,
    layout: SystemLayout,
    pivoting: bool,
) -> Result<(Vec<f64>, Vec<i32>)> {
    let (m, count) = (batch.m, batch.count);
    let (rows, cols) = if layout == SystemLayout::Columns { (m, count) } else { (count, m) };
    let block = Block { offset: 2, rows, cols, ld: rows + 3 };
    let index =
        |s: usize, i: usize| if layout == SystemLayout::Columns { block.index(i, s) } else { block.index(s, i) };
    let place = |v: &[f64]| {
        let mut host = vec![T::from_f64(f64::NAN); block.end() + 2];
        for s in 0..count {
            for i in 0..m {
                host[index(s, i)] = T::from_f64(v[batch.at(s, i)]);
            }
        }
        host
    };
    let (mut dl, mut d, mut du, mut b) = (
        be.upload(&place(&batch.dl))?,
        be.upload(&place(&batch.d))?,
        be.upload(&place(&batch.du))?,
        be.upload(&place(&batch.b))?,
    );
    let mut info = be.upload(&vec![7i32; count.max(1)])?;
    be.tridiagonal_solve(
        layout,
        pivoting,
        (ViewMut::new(&mut dl, block)?, ViewMut::new(&mut d, block)?, ViewMut::new(&mut du, block)?),
        ViewMut::new(&mut b, block)?,
        ViewMut::new(&mut info, Block::dense(count, 1))?,
    )?;
    let mut host = vec![T::ZERO; block.end() + 2];
    be.download(&b, &mut host)?;
    let mut status = vec![0i32; count.max(1)];
    be.download(&info, &mut status)?;
    for (k, v) in host.iter().enumerate() {
        let inside = (k >= 2 && k < block.end()) && ((k - 2) % block.ld) < rows;
        assert!(inside || v.to_f64().is_nan(), "entry {k} outside the block written");
    }
    let mut x = vec![0.0; m * count];
    for s in 0..count {
        for i in 0..m {
            x[batch.at(s, i)] = host[index(s, i)].to_f64();
        }
    }
    status.truncate(count);
    Ok((x, status))
}

fn solves<T: Scalar>() {
    let mut r = rng(31);
    let u = T::unit_roundoff();
    let dev = common::device();
    for (m, count) in [(1, 5), (2, 3), (17, 40), (64, 7), (300, 9), (1000, 3), (5003, 2), (8192, 2)] {
        for (dominant, pivoting) in [(true, false), (true, true), (false, true)] {
            let batch = Batch::random(&mut r, m, count, dominant);
            for layout in [SystemLayout::Columns, SystemLayout::Rows] {
                let what =
                    format!("{} m={m} count={count} dominant={dominant} pivoting={pivoting} {layout:?}", T::NAME);
                let (x, info) = with_backend!(dev, be => solve_on::<_, T>(be, &batch, layout, pivoting))
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(info.iter().all(|&i| i == 0), "{what}: info {info:?}");
                // The inputs rounded to T are what was solved.
                let rounded = Batch {
                    m,
                    count,
                    dl: batch.dl.iter().map(|&v| T::from_f64(v).to_f64()).collect(),
                    d: batch.d.iter().map(|&v| T::from_f64(v).to_f64()).collect(),
                    du: batch.du.iter().map(|&v| T::from_f64(v).to_f64()).collect(),
                    b: batch.b.iter().map(|&v| T::from_f64(v).to_f64()).collect(),
                };
                for s in 0..count {
                    let err = rounded.backward_error(s, &x[s * m..(s + 1) * m]);
                    assert!(err <= 10.0 * u, "{what}: system {s}: backward error {err:e}");
                }
            }
        }
    }
}

#[test]
fn batches_solve_to_their_backward_error_bound() {
    solves::<f64>();
    solves::<f32>();
}

/// A singular system (zero first column), one with a NaN in the matrix and
/// one with a NaN in `b`, among good ones: each named in `info`, its `x`
/// NaN or not finite, the others solved.
#[test]
fn a_failing_system_is_named_and_spoils_no_other() {
    let mut r = rng(37);
    let dev = common::device();
    for pivoting in [false, true] {
        let mut batch = Batch::random(&mut r, 6, 5, true);
        let (k, below) = (batch.at(1, 0), batch.at(1, 1));
        (batch.d[k], batch.dl[below]) = (0.0, 0.0);
        let k = batch.at(2, 3);
        batch.d[k] = f64::NAN;
        let k = batch.at(3, 4);
        batch.b[k] = f64::NAN;
        for layout in [SystemLayout::Columns, SystemLayout::Rows] {
            let what = format!("pivoting={pivoting} {layout:?}");
            let (x, info) = with_backend!(dev, be => solve_on::<_, f64>(be, &batch, layout, pivoting)).unwrap();
            assert_eq!(info[1], 1, "{what}: the zero pivot in row 0 of system 1");
            assert_eq!(info[2], 4, "{what}: the NaN pivot in row 3 of system 2");
            assert!(info[3] < 0, "{what}: system 3's x is not finite: {}", info[3]);
            assert!(x[6..12].iter().all(|v| v.is_nan()), "{what}: system 1's x");
            for s in [0, 4] {
                assert_eq!(info[s], 0, "{what}: system {s}");
                let err = batch.backward_error(s, &x[s * 6..(s + 1) * 6]);
                assert!(err <= 10.0 * f64::EPSILON, "{what}: system {s}: {err:e}");
            }
        }
    }
}

/// Shapes that disagree, an `info` of the wrong length, written arrays
/// that overlap: errors, nothing solved. An empty batch is no work.
#[test]
fn bad_shapes_are_errors() {
    let dev = common::device();
    with_backend!(dev, be => {
        let mut a = be.upload(&[1.0f64; 64]).unwrap();
        let (mut b, mut c, mut e) = (be.alloc::<f64>(64).unwrap(), be.alloc::<f64>(64).unwrap(), be.alloc::<f64>(64).unwrap());
        let mut info = be.alloc::<i32>(8).unwrap();
        let cols = SystemLayout::Columns;
        let sq = |rows, cols| Block { offset: 0, rows, cols, ld: rows.max(1) };
        let r = be.tridiagonal_solve::<f64>(
            cols,
            false,
            (ViewMut::new(&mut a, sq(4, 4)).unwrap(), ViewMut::new(&mut b, sq(4, 4)).unwrap(), ViewMut::new(&mut c, sq(4, 3)).unwrap()),
            ViewMut::new(&mut e, sq(4, 4)).unwrap(),
            ViewMut::new(&mut info, Block::dense(4, 1)).unwrap(),
        );
        assert!(matches!(r, Err(Error::DimensionMismatch { .. })), "du's shape: {r:?}");
        let r = be.tridiagonal_solve::<f64>(
            cols,
            false,
            (ViewMut::new(&mut a, sq(4, 4)).unwrap(), ViewMut::new(&mut b, sq(4, 4)).unwrap(), ViewMut::new(&mut c, sq(4, 4)).unwrap()),
            ViewMut::new(&mut e, sq(4, 4)).unwrap(),
            ViewMut::new(&mut info, Block::dense(3, 1)).unwrap(),
        );
        assert!(matches!(r, Err(Error::DimensionMismatch { .. })), "info's length: {r:?}");
        let r = be.tridiagonal_solve::<f64>(
            cols,
            false,
            (ViewMut::new(&mut a, sq(0, 0)).unwrap(), ViewMut::new(&mut b, sq(0, 0)).unwrap(), ViewMut::new(&mut c, sq(0, 0)).unwrap()),
            ViewMut::new(&mut e, sq(0, 0)).unwrap(),
            ViewMut::new(&mut info, Block::dense(0, 1)).unwrap(),
        );
        assert!(r.is_ok(), "an empty batch: {r:?}");
        let whole = gpumat::backend::BufferMut::new(&mut a);
        let r = be.tridiagonal_solve::<f64>(
            cols,
            false,
            (whole.view_mut(sq(4, 4)).unwrap(), whole.view_mut(Block { offset: 2, ..sq(4, 4) }).unwrap(), ViewMut::new(&mut c, sq(4, 4)).unwrap()),
            ViewMut::new(&mut e, sq(4, 4)).unwrap(),
            ViewMut::new(&mut info, Block::dense(4, 1)).unwrap(),
        );
        assert!(matches!(r, Err(Error::Overlapping { .. })), "dl and d overlap: {r:?}");
    });
}

/// Long systems in columns without pivoting (a block each on the GPU):
/// a NaN pivot in one, a NaN in another's `b`, each named; the rest solved.
#[test]
fn a_failing_long_system_is_named_too() {
    let mut r = rng(41);
    let dev = common::device();
    let (m, count) = (700, 4);
    let mut batch = Batch::random(&mut r, m, count, true);
    let k = batch.at(1, 345);
    batch.d[k] = f64::NAN;
    let k = batch.at(2, 600);
    batch.b[k] = f64::INFINITY;
    let (x, info) = with_backend!(dev, be => solve_on::<_, f64>(be, &batch, SystemLayout::Columns, false)).unwrap();
    assert!(info[1] > 0 && info[1] as usize <= 346, "system 1: info {}", info[1]);
    assert!(x[m..2 * m].iter().all(|v| v.is_nan()), "system 1's x");
    assert!(info[2] < 0, "system 2: info {}", info[2]);
    for s in [0, 3] {
        assert_eq!(info[s], 0, "system {s}");
        let err = batch.backward_error(s, &x[s * m..(s + 1) * m]);
        assert!(err <= 10.0 * f64::EPSILON, "system {s}: {err:e}");
    }
}
