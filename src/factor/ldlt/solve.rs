//! Solving with the factor: `X = Pᵀ·L⁻ᵀ·D⁻¹·L⁻¹·P·B` (LAPACK's `dsytrs`,
//! and `dsytrs_aa` when `D` is Aasen's tridiagonal `T`).

use crate::backend::{Backend, Block, Diag, SystemLayout, Triangle, View, ViewMut};
use crate::factor::triangular::solve_lower;
use crate::{Error, Result, Scalar};

/// The shape of the middle factor `D` of a factorization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Middle {
    /// 1×1 and 2×2 blocks (Bunch–Kaufman, or diagonal without pivoting).
    BlockDiagonal,
    /// Symmetric tridiagonal (Aasen).
    Tridiagonal,
}

/// Overwrites `b` (`n` rows, any number of columns) with `X` such that
/// `A·X = B`, given the factorization `P·A·Pᵀ = L·D·Lᵀ` (`L` where `tri`
/// locates it in `factor`, its diagonal taken as 1; `ipiv`, `d`, `e` as
/// [`factor_in_place`](super::factor_in_place) leaves them).
pub fn solve_in_place<B: Backend, T: Scalar>(
    be: &B,
    tri: &Triangle,
    factor: &B::Buffer<T>,
    (ipiv, d, e): (View<'_, B, i32>, View<'_, B, T>, View<'_, B, T>),
    middle: Middle,
    mut b: ViewMut<'_, B, T>,
) -> Result<()> {
    if tri.cols == 0 {
        return Ok(());
    }
    be.laswp(b.rb_mut(), ipiv, 0, false)?;
    solve_lower(be, tri, factor, b.rb_mut(), false, Diag::Unit)?;
    match middle {
        Middle::BlockDiagonal => be.block_diagonal_solve(d, e, b.rb_mut())?,
        Middle::Tridiagonal => tridiagonal_solve(be, d, e, b.rb_mut())?,
    }
    solve_lower(be, tri, factor, b.rb_mut(), true, Diag::Unit)?;
    be.laswp(b, ipiv, 0, true)
}

/// `B := T⁻¹·B` for the symmetric tridiagonal `T` of diagonal `d` and
/// subdiagonal `e`, by Gaussian elimination with partial pivoting (as
/// `dsytrs_aa` calls `dgtsv`): `T` is indefinite. One system per column,
/// each with its own copy of `T` (the solver overwrites it).
fn tridiagonal_solve<B: Backend, T: Scalar>(
    be: &B,
    d: View<'_, B, T>,
    e: View<'_, B, T>,
    b: ViewMut<'_, B, T>,
) -> Result<()> {
    let (n, k) = (b.rows(), b.cols());
    let (mut dl, mut dd, mut du) = (be.alloc::<T>(n * k)?, be.alloc::<T>(n * k)?, be.alloc::<T>(n * k)?);
    let column = |c: usize, from: usize, rows: usize| Block { offset: c * n + from, rows, cols: 1, ld: n };
    for c in 0..k {
        be.copy(d, ViewMut::new(&mut dd, column(c, 0, n))?)?;
        be.copy(e, ViewMut::new(&mut du, column(c, 0, n))?)?;
        if n > 1 {
            be.copy(e.sub(0, 0, n - 1, 1)?, ViewMut::new(&mut dl, column(c, 1, n - 1))?)?;
        }
    }
    let mut info = be.alloc::<i32>(k.max(1))?;
    let blocks = (ViewMut::dense(&mut dl, n, k)?, ViewMut::dense(&mut dd, n, k)?, ViewMut::dense(&mut du, n, k)?);
    be.tridiagonal_solve(SystemLayout::Columns, true, blocks, b, ViewMut::dense(&mut info, k, 1)?)?;
    let mut status = vec![0i32; k];
    be.download(&info, &mut status)?;
    // A zero pivot: T is singular (callers refuse singular factors first).
    match status.iter().find(|&&s| s > 0) {
        Some(&row) => Err(Error::Singular { pivot: row as usize }),
        None => Ok(()),
    }
}
