//! Aasen's factorization on the CPU: a panel of the column recurrence and
//! the interchanges after it, as the GPU's kernels do them (the same pivots
//! up to rounding: largest magnitude, the first row of the matrix on ties).
//!
//! Step `j` of the recurrence (Aasen 1971; in the blocked form of
//! Rozložník, Shklarski and Toledo 2011) knows `L` up to column `j` and `T`
//! up to `T(j, j − 1)`. With `W = L·T`, column `j` of the trailing matrix is
//! `Σ_{b ≤ j} W(:, b)·L(j, b)` plus the one term of the previous panel's
//! `T(k, k − 1)` that its update left, so
//!
//! `T(j, j)·L(:, j) + T(j + 1, j)·L(:, j + 1)
//!     = A(:, j) − Σ_{b < j} W(:, b)·L(j, b) − T(j − 1, j)·L(:, j − 1)`,
//!
//! row `j` of which is `T(j, j)` (`L(j, j) = 1`, `L(j, j + 1) = 0`); the rest,
//! less `T(j, j)·L(:, j)`, is `T(j + 1, j)·L(:, j + 1)`: its largest entry
//! is the pivot, and `T(j + 1, j)`. The matrix outside the panel is only
//! read: rows keep their places until [`aasen_interchange`].

use super::Cpu;
use super::ldlt::{Cols, Vector};
use crate::backend::{AasenPanel, Block, BufferMut, Triangle, ViewMut, check};
use crate::{Result, Scalar};

pub(super) fn aasen_panel<T: Scalar>(
    a: &BufferMut<'_, Cpu, T>,
    tri: &Triangle,
    k: usize,
    panel: AasenPanel<'_, Cpu, T>,
) -> Result<()> {
    let n = check::aasen_panel(a, tri, k, &panel)?;
    let nb = panel.nb;
    let base = Cols::of(a.view_mut(Block::dense(a.len(), 1))?).ptr;
    // Entry (k + i, k + j) of the symmetric trailing matrix.
    // SAFETY: `locate` addresses the triangle's pieces, checked to lie in `a`.
    let get = |i: usize, j: usize| unsafe { *base.add(tri.locate(k + i.max(j), k + i.min(j))) };
    let (l, y) = (Cols::of(panel.l), Cols::of(panel.y));
    let (rows, d, e) = (Vector::of(panel.rows), Vector::of(panel.d), Vector::of(panel.e));
    let m = n - k;
    // Rows already pivot rows: the panel's first (row k), then one a step.
    let mut chosen = vec![false; m];
    chosen[0] = true;
    let mut v = vec![T::ZERO; m];
    // e₁ = T(j, j − 1) and e₂ = T(j − 1, j − 2) at step j; p: the row of j.
    let mut e1 = if k > 0 { e.get(k - 1) } else { T::ZERO };
    let mut e2 = T::ZERO;
    let mut p = 0;
    for r in 0..m {
        y.set(r, 0, e1 * l.get(r, 1));
    }
    for s in 0..nb {
        let j = k + s;
        if s > 0 {
            let dj = d.get(j - 1);
            for r in 0..m {
                y.set(r, s, e2 * l.get(r, s - 1) + dj * l.get(r, s) + e1 * l.get(r, s + 1));
            }
        }
        let residual = |r: usize| {
            let mut dot = T::ZERO;
            for t in 0..=s {
                dot += y.get(r, t) * l.get(p, t);
            }
            get(r, p) - dot - e1 * l.get(r, s)
        };
        let dj = residual(p);
        d.set(j, dj);
        if j + 1 == n {
            break;
        }
        // The pivot: the largest |v|, a NaN before any number, the first row on ties.
        let mut best: Option<(usize, f64)> = None;
        for r in (0..m).filter(|&r| !chosen[r]) {
            v[r] = residual(r) - dj * l.get(r, s + 1);
            let mag = v[r].abs().to_f64();
            if best.is_none_or(|(_, big)| mag > big || mag.is_nan() && !big.is_nan()) {
                best = Some((r, mag));
            }
        }
        let q = best.map_or(0, |(r, _)| r);
        let ej = v[q];
        e.set(j, ej);
        rows.set(s, (k + q) as i32);
        chosen[q] = true;
        // As dgetf2: the reciprocal unless it overflows; a zero column stays zero.
        let inv = T::ONE / ej;
        for r in 0..m {
            let x = if r == q {
                T::ONE
            } else if chosen[r] || ej == T::ZERO {
                T::ZERO
            } else if inv.is_finite() {
                v[r] * inv
            } else {
                v[r] / ej
            };
            l.set(r, s + 2, x);
        }
        (e2, e1, p) = (e1, ej, q);
    }
    // Y's last column leaves out T(k + nb, k + nb − 1): the next panel's.
    let before = if nb >= 2 {
        e.get(k + nb - 2)
    } else if k > 0 {
        e.get(k - 1)
    } else {
        T::ZERO
    };
    let dl = d.get(k + nb - 1);
    for r in 0..m {
        y.set(r, nb, before * l.get(r, nb - 1) + dl * l.get(r, nb));
    }
    Ok(())
}

/// Where the rows of a panel go: `at[q]` is the row (of the panel, counted
/// from `k`) that the interchanges bring to position `q`, recorded as
/// `laswp`'s 1-based `ipiv` at `k + 1..`.
pub(super) fn placement(k: usize, n: usize, chosen: &[usize], mut ipiv: impl FnMut(usize, i32)) -> Vec<usize> {
    let m = n - k;
    let mut at: Vec<usize> = (0..m).collect();
    let mut pos = at.clone();
    if k == 0 {
        ipiv(0, 1);
    }
    for (s, &r) in chosen.iter().enumerate() {
        let (q, from) = (s + 1, pos[r]);
        ipiv(k + q, (k + from + 1) as i32);
        let displaced = at[q];
        (at[q], at[from]) = (r, displaced);
        (pos[displaced], pos[r]) = (from, q);
    }
    at
}

pub(super) fn aasen_interchange<T: Scalar>(
    a: &BufferMut<'_, Cpu, T>,
    tri: &Triangle,
    k: usize,
    panel: AasenPanel<'_, Cpu, T>,
    ipiv: ViewMut<'_, Cpu, i32>,
    x: ViewMut<'_, Cpu, T>,
    y: ViewMut<'_, Cpu, T>,
) -> Result<()> {
    let n = check::aasen_interchange(a, tri, k, &panel, &ipiv, &x, &y)?;
    let nb = panel.nb;
    let base = Cols::of(a.view_mut(Block::dense(a.len(), 1))?).ptr;
    // SAFETY: as in `aasen_panel`; (i, j) of the whole matrix, i ≥ j.
    let at_ = |i: usize, j: usize| unsafe { base.add(tri.locate(i, j)) };
    let get = |i: usize, j: usize| unsafe { *at_(i.max(j), i.min(j)) };
    let set = |i: usize, j: usize, v: T| unsafe { *at_(i.max(j), i.min(j)) = v };
    let (lw, yw, d) = (Cols::of(panel.l), Cols::of(panel.y), Vector::of(panel.d));
    let rows = Vector::of(panel.rows);
    // The last step of the last panel chooses no row.
    let chosen: Vec<usize> = (0..nb).take_while(|s| k + s + 1 < n).map(|s| rows.get(s) as usize - k).collect();
    let ipiv = Vector::of(ipiv);
    let at = placement(k, n, &chosen, |i, p| ipiv.set(i, p));
    let m = n - k;
    let moved: Vec<usize> = (1..m).filter(|&q| at[q] != q).collect();
    // Everything moved is read before anything is written: a row that
    // leaves the panel's columns still has its entries there.
    let left: Vec<Vec<T>> = moved.iter().map(|&q| (0..k).map(|c| get(k + at[q], c)).collect()).collect();
    let trailing: Vec<(usize, Vec<T>)> = moved
        .iter()
        .filter(|&&q| q >= nb)
        .map(|&q| (q, (nb..m).map(|c| get(k + at[q], k + at[c])).collect()))
        .collect();
    for c in 0..nb {
        set(k + c, k + c, d.get(k + c));
        for (q, &from) in at.iter().enumerate().skip(c + 1) {
            set(k + q, k + c, lw.get(from, c + 1));
        }
    }
    for (&q, row) in moved.iter().zip(&left) {
        for (c, &v) in row.iter().enumerate() {
            unsafe { *at_(k + q, c) = v };
        }
    }
    for (q, row) in &trailing {
        for (c, &v) in (nb..m).zip(row) {
            set(k + q, k + c, v);
        }
    }
    let (x, y) = (Cols::of(x), Cols::of(y));
    for (q, &from) in at.iter().enumerate().skip(nb) {
        for t in 0..nb + 2 {
            x.set(q - nb, t, lw.get(from, t));
        }
        for t in 0..nb + 1 {
            y.set(q - nb, t, yw.get(from, t));
        }
    }
    Ok(())
}
