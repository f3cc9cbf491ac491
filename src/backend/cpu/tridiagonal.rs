//! Batched tridiagonal solves on the CPU: the systems split over rayon's
//! threads, each solved by the one elimination that `kernels/tridiagonal.cu`
//! runs per GPU thread (Thomas 1949; with partial pivoting, LAPACK's
//! `dgtsv`).

use rayon::prelude::*;

use super::{Cpu, SendPtr};
use crate::backend::{Block, SystemLayout, ViewMut, check};
use crate::{Result, Scalar};

/// One array of the batch: entry `i` of system `s`.
#[derive(Clone, Copy)]
struct Lines<T> {
    ptr: SendPtr<T>,
    block: Block,
    layout: SystemLayout,
}

impl<T: crate::Elem> Lines<T> {
    fn of(v: ViewMut<'_, Cpu, T>, layout: SystemLayout) -> Self {
        let (buf, block) = v.into_parts();
        Lines { ptr: SendPtr(buf.ptr()), block, layout }
    }
    /// SAFETY (of the dereference): `check::tridiagonal` proved the blocks
    /// in bounds; each system's entries are touched by its own task only.
    #[inline]
    fn at(&self, s: usize, i: usize) -> *mut T {
        let k = match self.layout {
            SystemLayout::Columns => self.block.index(i, s),
            SystemLayout::Rows => self.block.index(s, i),
        };
        unsafe { self.ptr.get().add(k) }
    }
    #[inline]
    fn get(&self, s: usize, i: usize) -> T {
        unsafe { *self.at(s, i) }
    }
    #[inline]
    fn set(&self, s: usize, i: usize, x: T) {
        unsafe { *self.at(s, i) = x }
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn tridiagonal_solve<T: Scalar>(
    layout: SystemLayout,
    pivoting: bool,
    dl: ViewMut<'_, Cpu, T>,
    d: ViewMut<'_, Cpu, T>,
    du: ViewMut<'_, Cpu, T>,
    b: ViewMut<'_, Cpu, T>,
    info: ViewMut<'_, Cpu, i32>,
) -> Result<()> {
    let (m, count) = check::tridiagonal(layout, &dl, &d, &du, &b, &info)?;
    if m == 0 || count == 0 {
        return Ok(());
    }
    let (dl, d, du, b) = (Lines::of(dl, layout), Lines::of(d, layout), Lines::of(du, layout), Lines::of(b, layout));
    let info = Lines::of(info, SystemLayout::Rows);
    (0..count).into_par_iter().for_each(|s| {
        let status = solve_one(s, m, pivoting, (dl, d, du, b));
        info.set(s, 0, status);
    });
    Ok(())
}

/// System `s`, as the kernel solves it: its status as `info` reports it.
fn solve_one<T: Scalar>(
    s: usize,
    m: usize,
    pivoting: bool,
    (dl, d, du, b): (Lines<T>, Lines<T>, Lines<T>, Lines<T>),
) -> i32 {
    let bad = |x: T| x == T::ZERO || !x.is_finite();
    let row = |i: usize| i32::try_from(i).unwrap_or(i32::MAX);
    let mut fail = 0;
    for i in 0..m - 1 {
        let sub = dl.get(s, i + 1);
        if pivoting && sub.abs() > d.get(s, i).abs() {
            if bad(sub) {
                fail = i + 1;
                break;
            }
            let f = d.get(s, i) / sub;
            let (di1, dui) = (d.get(s, i + 1), du.get(s, i));
            d.set(s, i, sub);
            du.set(s, i, di1);
            d.set(s, i + 1, dui - f * di1);
            if i + 2 < m {
                let dui1 = du.get(s, i + 1);
                dl.set(s, i + 1, dui1);
                du.set(s, i + 1, -(f * dui1));
            } else {
                dl.set(s, i + 1, T::ZERO);
            }
            let bi = b.get(s, i);
            b.set(s, i, b.get(s, i + 1));
            b.set(s, i + 1, bi - f * b.get(s, i + 1));
        } else {
            let piv = d.get(s, i);
            if bad(piv) {
                fail = i + 1;
                break;
            }
            let f = sub / piv;
            dl.set(s, i + 1, T::ZERO);
            d.set(s, i + 1, d.get(s, i + 1) - f * du.get(s, i));
            b.set(s, i + 1, b.get(s, i + 1) - f * b.get(s, i));
        }
    }
    if fail == 0 && bad(d.get(s, m - 1)) {
        fail = m;
    }
    if fail != 0 {
        (0..m).for_each(|i| b.set(s, i, T::from_f64(f64::NAN)));
        return row(fail);
    }
    let mut nonfinite = 0;
    for i in (0..m).rev() {
        let mut x = b.get(s, i);
        if i + 1 < m {
            x -= du.get(s, i) * b.get(s, i + 1);
        }
        if i + 2 < m {
            x -= dl.get(s, i + 1) * b.get(s, i + 2);
        }
        x /= d.get(s, i);
        b.set(s, i, x);
        if !x.is_finite() {
            nonfinite = i + 1;
        }
    }
    -row(nonfinite)
}
