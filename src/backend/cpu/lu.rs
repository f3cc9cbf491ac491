//! The LU primitives on the CPU: the unblocked panel (`dgetf2`) and row
//! interchanges (`dlaswp`), plain loops over columns, rayon for wide blocks;
//! the random butterflies that make pivoting unnecessary.

use faer::MatMut;
use rayon::prelude::*;

use super::{Cpu, PARALLEL_MIN, mat_mut};
use crate::backend::{Op, Pivoting, View, ViewMut, butterfly, check};
use crate::{Error, Result, Scalar};

/// Entry `k` of a vector block of `i32`, as a raw pointer.
fn pivot_ptr(v: &View<'_, Cpu, i32>, k: usize) -> *mut i32 {
    // SAFETY (of the callers' dereference): `check` proved the vector in bounds.
    unsafe { v.buffer().ptr().add(v.block().vector_index(k)) }
}

/// The row of largest magnitude in `col[from..]` (first on ties, NaN wins).
fn pivot_row<T: Scalar>(col: &[T], from: usize) -> usize {
    let mut best = from;
    let mut big = col[from].abs();
    if Scalar::is_nan(big) {
        return from;
    }
    for (i, &x) in col.iter().enumerate().skip(from + 1) {
        let v = x.abs();
        if Scalar::is_nan(v) {
            return i;
        }
        if v > big {
            best = i;
            big = v;
        }
    }
    best
}

pub(super) fn getrf_panel<T: Scalar>(
    a: ViewMut<'_, Cpu, T>,
    ipiv: ViewMut<'_, Cpu, i32>,
    info: ViewMut<'_, Cpu, i32>,
    offset: usize,
    pivoting: Pivoting,
) -> Result<()> {
    check::getrf_panel(&a, &ipiv, &info)?;
    let mut a: MatMut<'_, T> = mat_mut(a);
    let nb = a.ncols();
    let ipiv = ipiv.rb();
    let mut failed: Option<usize> = None;
    for j in 0..nb {
        let p = match pivoting {
            Pivoting::Partial => {
                let c = a.as_ref().col(j).try_as_col_major().expect("unit row stride").as_slice();
                pivot_row(c, j)
            }
            Pivoting::None { .. } => j,
        };
        // SAFETY: in bounds (checked), and no other view of ipiv is used now.
        unsafe { *pivot_ptr(&ipiv, j) = i32::try_from(offset + p + 1).unwrap_or(i32::MAX) };
        if p != j {
            for k in 0..nb {
                let (x, y) = (a[(j, k)], a[(p, k)]);
                a[(j, k)] = y;
                a[(p, k)] = x;
            }
        }
        let d = a[(j, j)];
        let bad = match pivoting {
            Pivoting::Partial => d == T::ZERO,
            // A NaN pivot fails too.
            Pivoting::None { tol } => d.abs().to_f64() <= tol || Scalar::is_nan(d),
        };
        if bad {
            failed.get_or_insert(j);
            continue;
        }
        // As dgetf2: multiply by the reciprocal unless it overflows.
        let r = T::ONE / d;
        let scale_by_reciprocal = Scalar::is_finite(r);
        let (left, right) = a.as_mut().split_at_col_mut(j + 1);
        let l = left.col_mut(j).try_as_col_major_mut().expect("unit row stride").as_slice_mut();
        for x in &mut l[j + 1..] {
            *x = if scale_by_reciprocal { *x * r } else { *x / d };
        }
        // Rank-1 update of the panel's trailing columns.
        let l = &l[j + 1..];
        for c in right.col_iter_mut() {
            let c = c.try_as_col_major_mut().expect("unit row stride").as_slice_mut();
            let u = c[j];
            if u != T::ZERO {
                for (x, &li) in c[j + 1..].iter_mut().zip(l) {
                    *x -= li * u;
                }
            }
        }
    }
    if let Some(j) = failed {
        let (buf, b) = info.into_parts();
        // SAFETY: a 1×1 block inside the buffer (checked), exclusively ours.
        let first = unsafe { &mut *buf.ptr().add(b.offset) };
        if *first == 0 {
            *first = i32::try_from(offset + j + 1).unwrap_or(i32::MAX);
        }
    }
    Ok(())
}

/// `B := P·B` by the permutation `perm` (0-based; `inverse`: its inverse),
/// each column gathered from a copy of it. `perm` must be a permutation.
pub(super) fn permute_rows<T: Scalar>(perm: View<'_, Cpu, i32>, inverse: bool, b: ViewMut<'_, Cpu, T>) -> Result<()> {
    check::permute_rows(&perm, &b)?;
    let m = b.rows();
    let mut seen = vec![false; m];
    let mut p = Vec::with_capacity(m);
    for i in 0..m {
        // SAFETY: in bounds (checked); perm is another buffer, not written.
        let v = unsafe { *pivot_ptr(&perm, i) };
        match usize::try_from(v).ok().filter(|&q| q < m && !seen[q]) {
            Some(q) => {
                seen[q] = true;
                p.push(q);
            }
            None => {
                return Err(Error::InvalidArgument(format!(
                    "permute_rows: index {v} at {i} is outside 0..{m} or repeated, not a permutation"
                )));
            }
        }
    }
    let apply = |c: faer::ColMut<'_, T>| {
        let c = c.try_as_col_major_mut().expect("unit row stride").as_slice_mut();
        let old = c.to_vec();
        for (i, &q) in p.iter().enumerate() {
            if inverse {
                c[q] = old[i];
            } else {
                c[i] = old[q];
            }
        }
    };
    let mut b = mat_mut(b);
    if m * b.ncols() >= PARALLEL_MIN {
        b.par_col_chunks_mut(1).for_each(|c| apply(c.col_mut(0)));
    } else {
        b.as_mut().col_iter_mut().for_each(apply);
    }
    Ok(())
}

pub(super) fn laswp<T: Scalar>(
    a: ViewMut<'_, Cpu, T>,
    ipiv: View<'_, Cpu, i32>,
    shift: usize,
    reverse: bool,
) -> Result<()> {
    let k = check::laswp(&a, &ipiv)?;
    let mut a = mat_mut(a);
    let m = a.nrows();
    // SAFETY: in bounds (checked); ipiv is another buffer, not written.
    let mut swaps: Vec<(usize, usize)> = (0..k)
        .filter_map(|i| {
            let p = unsafe { *pivot_ptr(&ipiv, i) } as i64 - 1 - shift as i64;
            (p >= 0 && (p as usize) < m && p as usize != i).then_some((i, p as usize))
        })
        .collect();
    if reverse {
        swaps.reverse();
    }
    if swaps.is_empty() {
        return Ok(());
    }
    let apply = |c: faer::ColMut<'_, T>| {
        let c = c.try_as_col_major_mut().expect("unit row stride").as_slice_mut();
        for &(i, p) in &swaps {
            c.swap(i, p);
        }
    };
    if m * a.ncols() >= PARALLEL_MIN {
        a.par_col_chunks_mut(1).for_each(|c| apply(c.col_mut(0)));
    } else {
        a.as_mut().col_iter_mut().for_each(apply);
    }
    Ok(())
}

/// [`Backend::butterfly`](crate::backend::Backend::butterfly): each quad of
/// rows (columns) read into FP64, transformed, and written back.
pub(super) fn butterfly<T: Scalar>(left: Option<(u64, Op)>, right: Option<u64>, a: ViewMut<'_, Cpu, T>) -> Result<()> {
    let mut a = mat_mut(a);
    let (rows, cols) = (a.nrows(), a.ncols());
    if let Some((key, op)) = left {
        let m = rows.div_ceil(4);
        let quads: Vec<[[f64; 4]; 4]> = (0..m)
            .map(|g| {
                let q = butterfly::quad(key, rows, g);
                if op == Op::NoTrans { q } else { std::array::from_fn(|s| std::array::from_fn(|t| q[t][s])) }
            })
            .collect();
        let apply = |c: faer::ColMut<'_, T>| {
            let c = c.try_as_col_major_mut().expect("unit row stride").as_slice_mut();
            for (g, q) in quads.iter().enumerate() {
                let at = |s: usize| Some(g + m * s).filter(|&i| i < rows);
                let x: [f64; 4] = std::array::from_fn(|s| at(s).map_or(0.0, |i| c[i].to_f64()));
                for (s, row) in q.iter().enumerate() {
                    if let Some(i) = at(s) {
                        c[i] = T::from_f64(row.iter().zip(&x).map(|(w, v)| w * v).sum());
                    }
                }
            }
        };
        if rows * cols >= PARALLEL_MIN {
            a.as_mut().par_col_chunks_mut(1).for_each(|c| apply(c.col_mut(0)));
        } else {
            a.as_mut().col_iter_mut().for_each(apply);
        }
    }
    if let Some(key) = right {
        let m = cols.div_ceil(4);
        for g in 0..m {
            let q = butterfly::quad(key, cols, g);
            let members: Vec<usize> = (0..4).map(|s| g + m * s).filter(|&j| j < cols).collect();
            for i in 0..rows {
                let x: Vec<f64> = members.iter().map(|&j| a[(i, j)].to_f64()).collect();
                for (t, &j) in members.iter().enumerate() {
                    a[(i, j)] = T::from_f64((0..x.len()).map(|k| x[k] * q[k][t]).sum());
                }
            }
        }
    }
    Ok(())
}
