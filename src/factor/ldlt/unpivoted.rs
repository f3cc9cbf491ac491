//! LDLᵀ without pivoting, blocked as Cholesky is.
//!
//! With no pivot to search for, nothing in a block column depends on the
//! trailing matrix beyond it, so the factorization has Cholesky's shape:
//! block columns of `block_size` factored recursively down to leaves, each
//! leaf factoring its small diagonal block alone (`sytrf_panel` on that
//! block), then the rows below it by two triangular solves,
//! `W₂₁ = A₂₁·L₁₁⁻ᵀ` and `L₂₁ = W₂₁·D₁⁻¹`, where Cholesky has one. The
//! updates are `C −= L·Wᵀ` with `W = L·D` kept in a dense workspace.
//! This is Paciullo and Krawezik's blocked LDLᵀ in packed storage, in RFP
//! storage here, on the GPU's level-3 routines.

use super::factor::update_columns;
use crate::backend::{
    Backend, Block, BufferMut, Diag, Op, Side, Stored, SymPanel, SymPivoting, Triangle, View, ViewMut,
};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// The dense copies of the current block column's `L` and `W = L·D`,
/// row `r` and column `c` being row `k0 + r` and column `k0 + c` of `L`.
struct Workspace<'a, 'b, B: Backend, T: Scalar> {
    l: &'a BufferMut<'b, B, T>,
    w: &'a BufferMut<'b, B, T>,
    k0: usize,
    ld: usize,
}

impl<B: Backend, T: Scalar> Workspace<'_, '_, B, T> {
    fn block(&self, (i, rows): (usize, usize), (j, cols): (usize, usize)) -> Block {
        Block { offset: (i - self.k0) + (j - self.k0) * self.ld, rows, cols, ld: self.ld }
    }
}

/// Factors `L` where `tri` locates it without interchanges; `d` receives
/// `D` (`e` is left zero, `ipiv` is the caller's). A pivot of magnitude
/// `≤ tol` is not divided by (its column of `L` is zero).
pub(super) fn factor<B: Backend, T: Scalar>(
    be: &B,
    tri: &Triangle,
    a: &BufferMut<'_, B, T>,
    d: &mut ViewMut<'_, B, T>,
    tol: f64,
    (block_size, leaf, tile): (usize, usize, usize),
) -> Result<()> {
    let n = tri.cols;
    let nb = block_size.clamp(1, n.max(1));
    let (mut l, mut w) = (be.alloc::<T>(n * nb)?, be.alloc::<T>(n * nb)?);
    // Scratch of a leaf: D₁ as a triangle, and e and ipiv of the leaf's
    // own factorization (zero and the identity, unused).
    let leaf = leaf.clamp(1, nb);
    let mut scratch = Scratch {
        dmat: be.alloc::<T>(leaf * leaf)?,
        l: be.alloc::<T>(leaf * leaf)?,
        w: be.alloc::<T>(leaf * leaf)?,
        e: be.alloc::<T>(leaf)?,
        ipiv: be.alloc::<i32>(leaf)?,
        info: be.upload(&[0i32, 0])?,
    };
    for (k0, width) in tri.column_blocks(nb) {
        {
            let (lv, wv) = (BufferMut::new(&mut l), BufferMut::new(&mut w));
            let ws = Workspace { l: &lv, w: &wv, k0, ld: n };
            factor_panel(be, tri, a, &ws, (k0, width), d, &mut scratch, tol, (leaf, tile))?;
        }
        let end = k0 + width;
        if end < n {
            let rows = Block { offset: width, rows: n - end, cols: width, ld: n };
            update_columns(be, tri, a, (View::new(&l, rows)?, View::new(&w, rows)?), end, (end, n), tile)?;
        }
    }
    Ok(())
}

/// The leaf's scratch: `D₁` as a triangle, the workspaces of its
/// `sytrf_panel`, and that call's `e` and `ipiv` (zero and the identity
/// without pivoting, unused) and `info`.
struct Scratch<B: Backend, T: Scalar> {
    dmat: B::Buffer<T>,
    l: B::Buffer<T>,
    w: B::Buffer<T>,
    e: B::Buffer<T>,
    ipiv: B::Buffer<i32>,
    info: B::Buffer<i32>,
}

/// Factors columns `k..k + w` of `L` (all rows from `k`), recursively as
/// Cholesky's panels: the left half, its update of the right half, the
/// right half.
#[allow(clippy::too_many_arguments)]
fn factor_panel<B: Backend, T: Scalar>(
    be: &B,
    tri: &Triangle,
    a: &BufferMut<'_, B, T>,
    ws: &Workspace<'_, '_, B, T>,
    (k, w): (usize, usize),
    d: &mut ViewMut<'_, B, T>,
    scratch: &mut Scratch<B, T>,
    tol: f64,
    (leaf, tile): (usize, usize),
) -> Result<()> {
    if w <= leaf {
        return factor_leaf(be, tri, a, ws, (k, w), d, scratch, tol);
    }
    let w1 = w.div_ceil(2).div_ceil(leaf) * leaf;
    let (k2, w2) = (k + w1, w - w1);
    factor_panel(be, tri, a, ws, (k, w1), d, scratch, tol, (leaf, tile))?;
    let n = tri.cols;
    let rows = (k2, n - k2);
    let (x, y) = (ws.l.view(ws.block(rows, (k, w1)))?, ws.w.view(ws.block(rows, (k, w1)))?);
    update_columns(be, tri, a, (x, y), k2, (k2, k2 + w2), tile)?;
    factor_panel(be, tri, a, ws, (k2, w2), d, scratch, tol, (leaf, tile))
}

/// The leaf: `D₁` and `L₁₁` of the `w × w` diagonal block at `k`, then
/// `W₂₁ = A₂₁·L₁₁⁻ᵀ` and `L₂₁ = W₂₁·D₁⁻¹` on the rows below, each copied
/// into the workspace for the updates.
#[allow(clippy::too_many_arguments)]
fn factor_leaf<B: Backend, T: Scalar>(
    be: &B,
    tri: &Triangle,
    a: &BufferMut<'_, B, T>,
    ws: &Workspace<'_, '_, B, T>,
    (k, w): (usize, usize),
    d: &mut ViewMut<'_, B, T>,
    s: &mut Scratch<B, T>,
    tol: f64,
) -> Result<()> {
    let n = tri.cols;
    let l11 = tri.at(k, k, w, w)?;
    let diagonal = Triangle::full(l11.uplo(), l11.block)?;
    let leaf_ws = Block { offset: 0, rows: w, cols: w, ld: w };
    be.sytrf_panel(
        a,
        &diagonal,
        0,
        SymPanel {
            nb: w,
            l: ViewMut::new(&mut s.l, leaf_ws)?,
            w: ViewMut::new(&mut s.w, leaf_ws)?,
            ipiv: ViewMut::new(&mut s.ipiv, Block::dense(w, 1))?,
            d: d.rb_mut().sub_mut(k, 0, w, 1)?,
            e: ViewMut::new(&mut s.e, Block::dense(w, 1))?,
            info: ViewMut::dense(&mut s.info, 2, 1)?,
        },
        SymPivoting::None { tol },
    )?;
    if k + w == n {
        return Ok(());
    }
    // D₁ alone in the lower triangle of a w × w block.
    let mut dmat = ViewMut::new(&mut s.dmat, Block { offset: 0, rows: w, cols: w, ld: w })?;
    copy_as_lower(be, l11, a.view(l11.block)?, dmat.rb_mut())?;
    be.fill_strict_triangle(Uplo::Lower, T::ZERO, dmat.rb_mut())?;
    let one = T::ONE;
    for (i, rows) in tri.row_runs(k + w, n - k - w, k) {
        let b = tri.at(i, k, rows, w)?;
        let (lv, dv) = (a.view(l11.block)?, dmat.rb());
        // W₂₁ = A₂₁·L₁₁⁻ᵀ (stored transposed: W₂₁ᵀ = L₁₁⁻¹·A₂₁ᵀ), kept.
        if b.transposed {
            be.trsm(Side::Left, l11.uplo(), l11.op(false), Diag::Unit, one, lv, a.view_mut(b.block)?)?;
        } else {
            be.trsm(Side::Right, l11.uplo(), l11.op(true), Diag::Unit, one, lv, a.view_mut(b.block)?)?;
        }
        copy_as_lower(be, b, a.view(b.block)?, ws.w.view_mut(ws.block((i, rows), (k, w)))?)?;
        // L₂₁ = W₂₁·D₁⁻¹.
        if b.transposed {
            be.trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, one, dv, a.view_mut(b.block)?)?;
        } else {
            be.trsm(Side::Right, Uplo::Lower, Op::NoTrans, Diag::NonUnit, one, dv, a.view_mut(b.block)?)?;
        }
        copy_as_lower(be, b, a.view(b.block)?, ws.l.view_mut(ws.block((i, rows), (k, w)))?)?;
    }
    Ok(())
}

/// Copies a stored block of `L` into `dst` in `L`'s own orientation.
fn copy_as_lower<B: Backend, T: Scalar>(
    be: &B,
    stored: Stored,
    src: View<'_, B, T>,
    dst: ViewMut<'_, B, T>,
) -> Result<()> {
    if stored.transposed { be.geam(T::ONE, src, Op::Trans, T::ZERO, src, Op::Trans, dst) } else { be.copy(src, dst) }
}
