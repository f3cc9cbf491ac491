//! The LDLᵀ primitives on the CPU: the panel of the blocked Bunch–Kaufman
//! factorization (LAPACK's `dlasyf_rk`, lower) and solves with `D`.
//!
//! The panel is left-looking inside itself: a column is brought up to date
//! with the panel's earlier columns only when it is needed, from the dense
//! copies `L` and `W = L·D` of those columns (two matrix–vector products
//! per step), so the trailing matrix outside the panel keeps its entries as
//! they were when the panel started, and the caller updates it afterwards
//! with one level-3 product `L·Wᵀ`.

use super::Cpu;
use crate::backend::{
    Backend, Block, BufferMut, Diag, Op, Side, SymPanel, SymPivoting, Triangle, View, ViewMut, check,
};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Bunch and Kaufman's `α = (1 + √17)/8`, which minimizes the bound on the
/// element growth of their pivoting.
pub const ALPHA: f64 = 0.640_388_203_202_208_4;

/// A column-major block of a CPU buffer, by raw pointer: the panel reads and
/// writes single entries of several blocks of one buffer in turn.
#[derive(Clone, Copy)]
pub(super) struct Cols<T> {
    pub(super) ptr: *mut T,
    ld: usize,
}

impl<T: Copy> Cols<T> {
    pub(super) fn of(v: ViewMut<'_, Cpu, T>) -> Self
    where
        T: crate::Elem,
    {
        let (buf, b) = v.into_parts();
        // SAFETY: the block lies in the buffer (checked when the view was made).
        Cols { ptr: unsafe { buf.ptr().add(b.offset) }, ld: b.ld }
    }
    /// Entry `(i, j)`; for a vector block, entry `i` with `j = 0`.
    #[inline]
    fn at(&self, i: usize, j: usize) -> *mut T {
        // SAFETY (of the callers' dereference): `check::sytrf_panel` proved
        // the shapes; the blocks of one call do not overlap.
        unsafe { self.ptr.add(i + j * self.ld) }
    }
    #[inline]
    pub(super) fn get(&self, i: usize, j: usize) -> T {
        unsafe { *self.at(i, j) }
    }
    #[inline]
    pub(super) fn set(&self, i: usize, j: usize, x: T) {
        unsafe { *self.at(i, j) = x }
    }
    fn swap(&self, (i, j): (usize, usize), (p, q): (usize, usize)) {
        unsafe { std::ptr::swap(self.at(i, j), self.at(p, q)) }
    }
}

/// A vector block (a row or a column) by raw pointer: entry `i` is `step`
/// entries after entry `i − 1`.
#[derive(Clone, Copy)]
pub(super) struct Vector<T> {
    ptr: *mut T,
    step: usize,
}

impl<T: crate::Elem> Vector<T> {
    pub(super) fn of(v: ViewMut<'_, Cpu, T>) -> Self {
        let (buf, b) = v.into_parts();
        // SAFETY: the block lies in the buffer (checked when the view was made).
        Vector { ptr: unsafe { buf.ptr().add(b.offset) }, step: if b.cols == 1 { 1 } else { b.ld } }
    }
    #[inline]
    pub(super) fn get(&self, i: usize) -> T {
        // SAFETY: `check` proved the vector's length.
        unsafe { *self.ptr.add(i * self.step) }
    }
    #[inline]
    pub(super) fn set(&self, i: usize, x: T) {
        unsafe { *self.ptr.add(i * self.step) = x }
    }
}

/// The index and magnitude of the first entry of largest magnitude of
/// `x[from..to]` other than `skip`; `(from, 0)` for an empty range.
fn largest<T: Scalar>(x: &Cols<T>, j: usize, (from, to): (usize, usize), skip: Option<usize>) -> (usize, f64) {
    let mut best = (from, 0.0);
    let mut found = false;
    for i in from..to {
        if Some(i) == skip {
            continue;
        }
        let v = x.get(i, j).abs().to_f64();
        if !found || v > best.1 || v.is_nan() && !best.1.is_nan() {
            best = (i, v);
            found = true;
        }
    }
    best
}

pub(super) fn sytrf_panel<T: Scalar>(
    a: &BufferMut<'_, Cpu, T>,
    tri: &Triangle,
    k: usize,
    panel: SymPanel<'_, Cpu, T>,
    pivoting: SymPivoting,
) -> Result<()> {
    check::sytrf_panel(a, tri, k, &panel)?;
    let n = tri.cols;
    let nb = panel.nb;
    let base = Cols::of(a.view_mut(Block::dense(a.len(), 1))?).ptr;
    // Entry (i, j) of the lower triangle (i ≥ j), and of the symmetric matrix.
    let at = |i: usize, j: usize| -> *mut T {
        // SAFETY: `locate` addresses the triangle's pieces, checked to lie in `a`.
        unsafe { base.add(tri.locate(i, j)) }
    };
    let get = |i: usize, j: usize| unsafe { *at(i.max(j), i.min(j)) };
    let set = |i: usize, j: usize, x: T| unsafe { *at(i, j) = x };
    // L and W: row r is row k + r of the matrix.
    let (l, w) = (Cols::of(panel.l), Cols::of(panel.w));
    let (ipiv, d, e) = (Vector::of(panel.ipiv), Vector::of(panel.d), Vector::of(panel.e));
    let info = Vector::of(panel.info);
    let mut zero: Option<usize> = None;

    // Column `c` of the matrix, rows `kk..n`, as the panel's first `j`
    // columns have updated it, into column `into` of W.
    let current = |c: usize, kk: usize, j: usize, into: usize| {
        for i in kk..n {
            w.set(i - k, into, get(i, c));
        }
        for t in 0..j {
            let y = w.get(c - k, t);
            if y != T::ZERO {
                for i in kk..n {
                    w.set(i - k, into, w.get(i - k, into) - l.get(i - k, t) * y);
                }
            }
        }
    };

    let mut j = 0;
    while j < nb {
        let kk = k + j;
        current(kk, kk, j, j);
        let absakk = w.get(kk - k, j).abs().to_f64();
        let (imax, colmax) = largest(&w, j, (kk + 1 - k, n - k), None);
        let imax = imax + k;
        // (pivot row, block order, whether the pivot is zero)
        let (kp, kstep, is_zero) = match pivoting {
            // Not above tol: NaN included.
            SymPivoting::None { tol } => (kk, 1, absakk.partial_cmp(&tol) != Some(std::cmp::Ordering::Greater)),
            SymPivoting::BunchKaufman => {
                if absakk.is_nan() || colmax.is_nan() {
                    // Overflow upstream: no choice is meaningful; the NaN
                    // goes on into D, where the caller finds it.
                    (kk, 1, false)
                } else if absakk.max(colmax) == 0.0 {
                    (kk, 1, true)
                } else if absakk >= ALPHA * colmax {
                    (kk, 1, false)
                } else {
                    // Column imax, brought up to date, into W[:, j + 1].
                    current(imax, kk, j, j + 1);
                    let (_, rowmax) = largest(&w, j + 1, (kk - k, n - k), Some(imax - k));
                    if absakk * rowmax >= ALPHA * colmax * colmax {
                        (kk, 1, false)
                    } else if w.get(imax - k, j + 1).abs().to_f64() >= ALPHA * rowmax {
                        for i in kk..n {
                            w.set(i - k, j, w.get(i - k, j + 1));
                        }
                        (imax, 1, false)
                    } else {
                        (imax, 2, false)
                    }
                }
            }
        };
        // Interchange rows and columns kkk and kp: the trailing matrix gets
        // kkk's entries at kp (kkk's own become the factored column), and the
        // rows are exchanged in every column left of the pivot, in L and in W.
        let kkk = kk + kstep - 1;
        if kp != kkk {
            set(kp, kp, get(kkk, kkk));
            for i in kkk + 1..kp {
                set(kp, i, get(i, kkk));
            }
            for i in kp + 1..n {
                set(i, kp, get(i, kkk));
            }
            for c in 0..kk {
                unsafe { std::ptr::swap(at(kkk, c), at(kp, c)) };
            }
            for t in 0..j {
                l.swap((kkk - k, t), (kp - k, t));
            }
            for t in 0..j + kstep {
                w.swap((kkk - k, t), (kp - k, t));
            }
        }
        if kstep == 1 {
            let dk = w.get(kk - k, j);
            set(kk, kk, dk);
            d.set(kk, dk);
            e.set(kk, T::ZERO);
            l.set(kk - k, j, T::ONE);
            ipiv.set(kk, (kp + 1) as i32);
            if is_zero {
                zero.get_or_insert(kk);
            }
            // As dgetf2: multiply by the reciprocal unless it overflows.
            let r = T::ONE / dk;
            for i in kk + 1..n {
                let x = w.get(i - k, j);
                let li = if is_zero {
                    T::ZERO
                } else if r.to_f64().is_finite() {
                    x * r
                } else {
                    x / dk
                };
                set(i, kk, li);
                l.set(i - k, j, li);
            }
        } else {
            // The 2×2 block [[d11, d21], [d21, d22]], and L = W·D⁻¹ in
            // LAPACK's scaled form (the determinant is negative: no
            // cancellation in it).
            let (d11, d21, d22) = (w.get(kk - k, j), w.get(kk + 1 - k, j), w.get(kk + 1 - k, j + 1));
            set(kk, kk, d11);
            set(kk + 1, kk, T::ZERO);
            set(kk + 1, kk + 1, d22);
            d.set(kk, d11);
            d.set(kk + 1, d22);
            e.set(kk, d21);
            e.set(kk + 1, T::ZERO);
            ipiv.set(kk, (kk + 1) as i32);
            ipiv.set(kk + 1, (kp + 1) as i32);
            l.set(kk - k, j, T::ONE);
            l.set(kk + 1 - k, j, T::ZERO);
            l.set(kk - k, j + 1, T::ZERO);
            l.set(kk + 1 - k, j + 1, T::ONE);
            let (a11, a22) = (d22 / d21, d11 / d21);
            let scale = (T::ONE / (a11 * a22 - T::ONE)) / d21;
            for i in kk + 2..n {
                let (w1, w2) = (w.get(i - k, j), w.get(i - k, j + 1));
                let (l1, l2) = (scale * (a11 * w1 - w2), scale * (a22 * w2 - w1));
                set(i, kk, l1);
                set(i, kk + 1, l2);
                l.set(i - k, j, l1);
                l.set(i - k, j + 1, l2);
            }
        }
        j += kstep;
    }
    info.set(1, j as i32);
    if let Some(c) = zero
        && info.get(0) == 0
    {
        info.set(0, (c + 1) as i32);
    }
    Ok(())
}

/// The unpivoted panel: the diagonal block right-looking entry by entry,
/// the rows below by a unit triangular solve and two scalings (`L₂₁`, then
/// `W₂₁ = L₂₁·D` from it, so that `W` is the product of the stored factors).
#[allow(clippy::too_many_arguments)]
pub(super) fn ldlt_panel<T: Scalar>(
    cpu: &Cpu,
    uplo: Uplo,
    mut a: ViewMut<'_, Cpu, T>,
    w: ViewMut<'_, Cpu, T>,
    d: ViewMut<'_, Cpu, T>,
    info: ViewMut<'_, Cpu, i32>,
    offset: usize,
    tol: f64,
) -> Result<()> {
    let (n, m) = check::ldlt_panel(uplo, &a, &w, &d, &info)?;
    if n == 0 {
        return Ok(());
    }
    let upper = uplo == Uplo::Upper;
    let p = Cols::of(a.rb_mut());
    // Entry (i, j) of the panel's L, wherever its orientation puts it.
    let (get, set) = (
        |i: usize, j: usize| if upper { p.get(j, i) } else { p.get(i, j) },
        |i: usize, j: usize, x: T| if upper { p.set(j, i, x) } else { p.set(i, j, x) },
    );
    let (dv, status) = (Vector::of(d), Vector::of(info));
    let mut inverse = vec![T::ZERO; n];
    // W(·, j): column j as the earlier columns left it, before the scaling.
    let mut wj = vec![T::ZERO; n];
    for (j, inv) in inverse.iter_mut().enumerate() {
        let dj = get(j, j);
        dv.set(j, dj);
        *inv = if dj.abs().to_f64() > tol && dj.is_finite() {
            T::ONE / dj
        } else {
            if status.get(0) == 0 {
                status.set(0, i32::try_from(offset + j + 1).unwrap_or(i32::MAX));
            }
            T::ZERO
        };
        for (i, x) in wj.iter_mut().enumerate().skip(j + 1) {
            *x = get(i, j);
            set(i, j, *x * *inv);
        }
        for (c, &y) in wj.iter().enumerate().skip(j + 1) {
            if y != T::ZERO {
                for i in c..n {
                    set(i, c, get(i, c) - get(i, j) * y);
                }
            }
        }
    }
    if m == n {
        return Ok(());
    }
    let one = T::ONE;
    let (diagonal, scale) = (cpu.upload(&(0..n).map(|j| get(j, j)).collect::<Vec<_>>())?, cpu.upload(&inverse)?);
    let (diagonal, scale) = (View::dense(&diagonal, n, 1)?, View::dense(&scale, n, 1)?);
    let mut w = w;
    if upper {
        let (l11, mut l21) = a.split_at_col(n)?;
        // L₂₁ᵀ = D⁻¹·L₁₁⁻¹·A₂₁ᵀ, then W₂₁ᵀ = D·L₂₁ᵀ.
        cpu.trsm(Side::Left, Uplo::Upper, Op::Trans, Diag::Unit, one, l11.rb(), l21.rb_mut())?;
        cpu.scale_rows(scale, l21.rb_mut())?;
        cpu.copy(l21.rb(), w.rb_mut())?;
        cpu.scale_rows(diagonal, w)
    } else {
        let (l11, mut l21) = a.split_at_row(n)?;
        cpu.trsm(Side::Right, Uplo::Lower, Op::Trans, Diag::Unit, one, l11.rb(), l21.rb_mut())?;
        cpu.scale_cols(l21.rb_mut(), scale)?;
        cpu.copy(l21.rb(), w.rb_mut())?;
        cpu.scale_cols(w, diagonal)
    }
}

pub(super) fn block_diagonal_solve<T: Scalar>(
    d: View<'_, Cpu, T>,
    e: View<'_, Cpu, T>,
    b: ViewMut<'_, Cpu, T>,
) -> Result<()> {
    check::block_diagonal_solve(&d, &e, &b)?;
    let n = b.rows();
    let entry = |v: &View<'_, Cpu, T>, i: usize| unsafe { *v.buffer().ptr().add(v.block().vector_index(i)) };
    let nrhs = b.cols();
    let b = Cols::of(b);
    let mut i = 0;
    while i < n {
        let (di, ei) = (entry(&d, i), entry(&e, i));
        if ei == T::ZERO || i + 1 == n {
            let r = T::ONE / di;
            for c in 0..nrhs {
                b.set(i, c, b.get(i, c) * r);
            }
            i += 1;
        } else {
            // dsytrs: [x1, x2] = [[d1, e], [e, d2]]⁻¹·[b1, b2], scaled by e.
            let (a1, a2) = (di / ei, entry(&d, i + 1) / ei);
            let denom = a1 * a2 - T::ONE;
            for c in 0..nrhs {
                let (b1, b2) = (b.get(i, c) / ei, b.get(i + 1, c) / ei);
                b.set(i, c, (a2 * b1 - b2) / denom);
                b.set(i + 1, c, (a1 * b2 - b1) / denom);
            }
            i += 2;
        }
    }
    Ok(())
}
