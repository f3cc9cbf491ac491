//! Aasen's factorization `P·A·Pᵀ = L·T·Lᵀ`, `T` symmetric tridiagonal
//! (Aasen 1971), blocked as Rozložník, Shklarski and Toledo (2011) and
//! LAPACK's `dsytrf_aa`: right-looking by panels of `nb` columns.
//!
//! A panel ([`Backend::aasen_panel`]) runs the column recurrence on the
//! trailing matrix as the earlier panels left it; its pivots are chosen in
//! the column of `L` being formed, as partial pivoting chooses them, so a
//! step needs one search over the rows, not Bunch–Kaufman's search of a
//! second column. Then [`Backend::aasen_interchange`] moves the pivot rows
//! and columns into place, and the trailing matrix takes the panel's part
//! of `L·T·Lᵀ` as one symmetric level-3 product of depth `nb + 1`,
//! `A₂₂ −= L(:, Q)·(T(Q, Q)·L(:, Q)ᵀ)`, `Q = k − 1..k + nb` (the panel's
//! columns and the last one before it, whose coupling `T(k, k − 1)` with
//! the panel is not yet in the trailing matrix). The growth of `T` is
//! bounded by `4ⁿ⁻²` (Higham 2002, §11.2), and the factorization is
//! backward stable as `dsytrf`'s; no step ever divides by a zero: a column
//! that is already zero gives a zero `T(j + 1, j)`.
//!
//! The panels have a fixed width, so the host enqueues the whole
//! factorization without waiting for any of it.

use super::factor::update_columns;
use crate::backend::{AasenPanel, Backend, Block, BufferMut, Triangle, View, ViewMut};
use crate::{Result, Scalar};

/// Factors the symmetric matrix whose lower triangle `tri` locates in `a`,
/// in place: `L` strictly below the diagonal (its column 0 is `e₀`, stored
/// as zeros), `T`'s diagonal on it; `ipiv` (1-based, applied in order as
/// `laswp` does, `ipiv[0] = 1`), `d` and `e` (`T`'s diagonal and
/// subdiagonal, `e[n − 1] = 0`) vectors of `n`. `nb` columns a panel,
/// updates by block columns of `tile`.
pub(super) fn factor<B: Backend, T: Scalar>(
    be: &B,
    tri: &Triangle,
    a: &BufferMut<'_, B, T>,
    (mut ipiv, mut d, mut e): (ViewMut<'_, B, i32>, ViewMut<'_, B, T>, ViewMut<'_, B, T>),
    nb: usize,
    tile: usize,
) -> Result<()> {
    let n = tri.cols;
    if n == 0 {
        return Ok(());
    }
    let nb = nb.clamp(1, n);
    let (mut l, mut y) = (be.alloc::<T>(n * (nb + 2))?, be.alloc::<T>(n * (nb + 1))?);
    let (mut xs, mut ys) = (be.alloc::<T>(n * (nb + 2))?, be.alloc::<T>(n * (nb + 1))?);
    let mut rows = be.alloc::<i32>(nb)?;
    let at = |rows: usize, cols: usize, first: usize| Block { offset: first * n, rows, cols, ld: n };
    be.fill(e.rb_mut(), T::ZERO)?;
    // L(:, −1) = 0 and L(:, 0) = e₀.
    be.fill(ViewMut::new(&mut l, at(n, 2, 0))?, T::ZERO)?;
    be.copy(View::dense(&be.upload(&[T::ONE])?, 1, 1)?, ViewMut::new(&mut l, at(1, 1, 1))?)?;
    let mut k = 0;
    while k < n {
        let (m, w) = (n - k, nb.min(n - k));
        let rest = m - w;
        {
            let mut panel = AasenPanel {
                nb: w,
                l: ViewMut::new(&mut l, at(m, w + 2, 0))?,
                y: ViewMut::new(&mut y, at(m, w + 1, 0))?,
                rows: ViewMut::dense(&mut rows, w, 1)?,
                d: d.rb_mut(),
                e: e.rb_mut(),
            };
            be.aasen_panel(a, tri, k, panel.rb_mut())?;
            let (x, yx) = (ViewMut::new(&mut xs, at(rest, w + 2, 0))?, ViewMut::new(&mut ys, at(rest, w + 1, 0))?);
            be.aasen_interchange(a, tri, k, panel, ipiv.rb_mut(), x, yx)?;
        }
        let k2 = k + w;
        if k2 < n {
            let (x, yx) = (View::new(&xs, at(rest, w + 1, 0))?, View::new(&ys, at(rest, w + 1, 0))?);
            update_columns(be, tri, a, (x, yx), k2, (k2, n), tile)?;
            // The next panel's L(:, k2 − 1) and L(:, k2).
            be.copy(View::new(&xs, at(rest, 2, w))?, ViewMut::new(&mut l, at(rest, 2, 0))?)?;
        }
        k = k2;
    }
    Ok(())
}
