//! Gauss-Jordan elimination with partial pivoting: the reduced row echelon
//! form of an `m × n` matrix, and through it `[A | B] → [I | X]`.
//!
//! Column by column: the pivot is the entry of largest magnitude at or
//! below the current row; a column whose largest entry is `≤ tol` is taken
//! as zero there (and set to zero), which is how the rank of a numerically
//! rank-deficient matrix shows. Each pivot row is scaled to a leading 1 and
//! eliminated from every other row by a rank-1 `gemm`. One pivot search per
//! column is read back to the host, so this is for moderate sizes; LU is the
//! fast way to solve and invert.

use crate::backend::{Backend, Block, BufferMut, Op, View, ViewMut};
use crate::{Result, Scalar};

/// What the elimination found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Echelon {
    /// Number of pivots: the numerical rank (at the tolerance).
    pub rank: usize,
    /// The pivot columns, 0-based and increasing (`rank` of them).
    pub pivots: Vec<usize>,
}

/// Reduces the `m × n` block `block` of `a` to reduced row echelon form in
/// place, looking for pivots in its first `search` columns only (all `n`
/// for an RREF; those of `A` in `[A | B]`) and carrying the others along.
/// Zero rows end up at the bottom.
pub fn rref_in_place<B: Backend, T: Scalar>(
    be: &B,
    a: &BufferMut<'_, B, T>,
    block: Block,
    search: usize,
    tol: f64,
) -> Result<Echelon> {
    let (m, n) = (block.rows, block.cols);
    let search = search.min(n);
    let mut col = be.alloc::<T>(m.max(1))?;
    let mut row = be.alloc::<T>(n.max(1))?;
    let mut one = be.alloc::<T>(1)?;
    let mut pivots = Vec::new();
    let mut r = 0;
    for c in 0..search {
        if r == m {
            break;
        }
        let below = a.view(block.sub(r, c, m - r, 1)?)?;
        let Some(p) = be.iamax(below)? else { break };
        let p = r + p;
        be.copy(a.view(block.sub(p, c, 1, 1)?)?, ViewMut::dense(&mut one, 1, 1)?)?;
        let mut v = [T::ZERO];
        be.download(&one, &mut v)?;
        let v = v[0];
        if v.abs().to_f64() <= tol || Scalar::is_nan(v) {
            // Numerically zero at and below row r: make it exactly so.
            be.fill(a.view_mut(block.sub(r, c, m - r, 1)?)?, T::ZERO)?;
            continue;
        }
        let w = n - c;
        if p != r {
            // Exchange rows r and p on columns c.. (the others are zero there).
            let tmp = ViewMut::dense(&mut row, 1, w)?;
            be.copy(a.view(block.sub(r, c, 1, w)?)?, tmp)?;
            be.copy(a.view(block.sub(p, c, 1, w)?)?, a.view_mut(block.sub(r, c, 1, w)?)?)?;
            be.copy(View::dense(&row, 1, w)?, a.view_mut(block.sub(p, c, 1, w)?)?)?;
        }
        be.scale(T::ONE / v, a.view_mut(block.sub(r, c, 1, w)?)?)?;
        if w > 1 && m > 1 {
            // A(i, c+1..) −= A(i, c)·A(r, c+1..) for every row i ≠ r.
            be.copy(a.view(block.sub(0, c, m, 1)?)?, ViewMut::dense(&mut col, m, 1)?)?;
            be.fill(ViewMut::new(&mut col, Block { offset: r, rows: 1, cols: 1, ld: 1 })?, T::ZERO)?;
            be.copy(a.view(block.sub(r, c + 1, 1, w - 1)?)?, ViewMut::dense(&mut row, 1, w - 1)?)?;
            be.gemm(
                -T::ONE,
                View::dense(&col, m, 1)?,
                Op::NoTrans,
                View::dense(&row, 1, w - 1)?,
                Op::NoTrans,
                T::ONE,
                a.view_mut(block.sub(0, c + 1, m, w - 1)?)?,
            )?;
        }
        // Column c is e_r exactly.
        be.fill(a.view_mut(block.sub(0, c, m, 1)?)?, T::ZERO)?;
        be.fill(a.view_mut(block.sub(r, c, 1, 1)?)?, T::ONE)?;
        pivots.push(c);
        r += 1;
    }
    Ok(Echelon { rank: r, pivots })
}
