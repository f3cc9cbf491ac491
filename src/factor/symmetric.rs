//! The blocked factorization of a symmetric matrix without interchanges:
//! Cholesky's `A = L·Lᵀ` and unpivoted LDLᵀ's `A = L·D·Lᵀ`, one loop for
//! both.
//!
//! Right-looking, with look-ahead: once block column `k` is factored, the
//! main queue updates only block column `k + 1` with it and goes on to factor
//! that, while the side queue ([`Backend::side`]) applies block column `k` to
//! the rest of the trailing matrix. The diagonal blocks, whose latency is
//! the critical path, are factored recursively down to leaves of at most
//! `leaf_size` columns, each factored with the rows below it in one backend
//! call (`potrf_panel`, `ldlt_panel`).
//!
//! The two differ only in the updates' right-hand factor: Cholesky's are
//! `C −= L·Lᵀ` (`syrk`, `gemm`), LDLᵀ's `C −= L·Wᵀ` with `W = L·D`
//! (`syrkx`, `gemm`), which the leaves leave in a dense copy of the block
//! column. Paciullo and Krawezik's blocked LDLᵀ in packed storage is this
//! loop on the RFP pieces.
//!
//! The algorithm addresses blocks of the factor `L` by their rows and columns
//! in `L`; a [`Triangle`] says where each block is stored. For full storage
//! that is one triangle of an array; for RFP storage it is three pieces of
//! the packed rectangle, so that the packed factorization is this same loop,
//! look-ahead included, with other offsets and leading dimensions.

use super::cholesky::CholeskyParams;
use crate::backend::{Backend, Block, BufferMut, Compute, Diag, Op, Side, Stored, Triangle, View, ViewMut};
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// What the leaves compute, and what they need besides `L`'s storage.
pub(crate) enum Leaves<'f, B: Backend, T: Scalar> {
    /// `A = L·Lᵀ`.
    Cholesky,
    /// `A = L·D·Lᵀ`: `D` into `d` (`n` entries), pivots of magnitude `≤ tol`
    /// refused as `ldlt_panel` does, and `W = L·D` of each block column into
    /// `w`, alternately the two buffers (`n × block_size` each), so that
    /// the side queue's updates with one block column overlap the next
    /// one's leaves. `dmat` (`leaf_size²`) is a leaf's scratch.
    Ldlt { d: ViewMut<'f, B, T>, tol: f64, w: [&'f BufferMut<'f, B, T>; 2], dmat: &'f BufferMut<'f, B, T> },
}

/// `W` of one block column (`k0..k0 + width`, rows from `k0`), dense, each
/// run of rows that one piece of `L` holds stored as that piece is: then
/// `L` and `W` go to `syrkx` with one `Op`.
struct Shadow<'s, 'f, B: Backend, T: Scalar> {
    buf: &'s BufferMut<'f, B, T>,
    k0: usize,
    width: usize,
    /// First row, rows, transposed, offset in `buf`.
    runs: Vec<(usize, usize, bool, usize)>,
}

impl<'s, 'f, B: Backend, T: Scalar> Shadow<'s, 'f, B, T> {
    fn new(buf: &'s BufferMut<'f, B, T>, tri: &Triangle, (k0, width): (usize, usize)) -> Result<Self> {
        let mut offset = 0;
        let mut runs = Vec::with_capacity(2);
        for (i, rows) in tri.row_runs(k0, tri.rows - k0, k0) {
            runs.push((i, rows, tri.at(i, k0, rows, width)?.transposed, offset));
            offset += rows * width;
        }
        Ok(Shadow { buf, k0, width, runs })
    }

    /// Rows `i..i + rows`, columns `j..j + cols` of `W`, in one run.
    fn at(&self, i: usize, j: usize, rows: usize, cols: usize) -> Result<Stored> {
        let &(first, len, transposed, offset) = self
            .runs
            .iter()
            .find(|r| r.0 <= i && i + rows <= r.0 + r.1)
            .ok_or_else(|| Error::InvalidArgument(format!("rows {i}..{} of W cross its runs", i + rows)))?;
        let whole = if transposed {
            Block { offset, rows: self.width, cols: len, ld: self.width }
        } else {
            Block { offset, rows: len, cols: self.width, ld: len.max(1) }
        };
        Stored { block: whole, transposed }.sub(i - first, j - self.k0, rows, cols)
    }
}

/// One factorization: where `L` is stored, and its blocking.
struct Loop<'f, B: Backend, T: Scalar> {
    tri: Triangle,
    a: &'f BufferMut<'f, B, T>,
    params: CholeskyParams,
}

impl<B: Backend, T: Scalar> Loop<'_, B, T> {
    /// `C := C − X·Yᵀ` with `X = L[i.., k..]`, `Y = L[j.., k..]` (or `W`'s)
    /// and `C = L[i.., j..]` strictly below the diagonal (`i ≥ j + cols`),
    /// the products in `compute`.
    fn update(
        &self,
        be: &B,
        w: Option<&Shadow<'_, '_, B, T>>,
        (i, rows): (usize, usize),
        (j, cols): (usize, usize),
        (k, depth): (usize, usize),
        compute: Compute,
    ) -> Result<()> {
        let (tri, a) = (&self.tri, self.a);
        let (y, ybuf) = match w {
            Some(w) => (w.at(j, k, cols, depth)?, w.buf),
            None => (tri.at(j, k, cols, depth)?, a),
        };
        for (i, rows) in tri.row_runs(i, rows, j) {
            let (x, c) = (tri.at(i, k, rows, depth)?, tri.at(i, j, rows, cols)?);
            let (xv, yv, cv) = (a.view(x.block)?, ybuf.view(y.block)?, a.view_mut(c.block)?);
            if c.transposed {
                // Cᵀ −= Y·Xᵀ.
                be.gemm_in(compute, -T::ONE, yv, y.op(false), xv, x.op(true), T::ONE, cv)?;
            } else {
                be.gemm_in(compute, -T::ONE, xv, x.op(false), yv, y.op(true), T::ONE, cv)?;
            }
        }
        Ok(())
    }

    /// `C := C − X·Yᵀ` on the lower triangle of the diagonal block
    /// `C = L[j.., j..]`, `X = L[j.., k..]` (`syrk`; `syrkx` with `W`). A
    /// large `C` is updated by block columns of `tile`, the diagonal tile
    /// alone and `gemm` below it: `gemm` runs faster than a large `syrk`.
    /// Products in `compute` (LDLᵀ's `syrkx` natively).
    fn update_diagonal(
        &self,
        be: &B,
        w: Option<&Shadow<'_, '_, B, T>>,
        (j, order): (usize, usize),
        (k, depth): (usize, usize),
        compute: Compute,
    ) -> Result<()> {
        let (tri, a, tile) = (&self.tri, self.a, self.params.update_tile);
        let end = j + order;
        // Tiles never cross `split`: the diagonal blocks on either side are
        // stored apart.
        let tile = if order <= 2 * tile.max(1) { order } else { tile.max(1) };
        let mut t = j;
        while t < end {
            let wd = tile.min(end - t).min(if t < tri.split { tri.split - t } else { end - t });
            let (x, c) = (tri.at(t, k, wd, depth)?, tri.at(t, t, wd, wd)?);
            let (xv, cv) = (a.view(x.block)?, a.view_mut(c.block)?);
            match w {
                None => be.syrk_in(compute, c.uplo(), x.op(false), -T::ONE, xv, T::ONE, cv)?,
                // W's run is stored as X's piece: one Op for both.
                Some(w) => {
                    let y = w.buf.view(w.at(t, k, wd, depth)?.block)?;
                    be.syrkx(c.uplo(), x.op(false), -T::ONE, xv, y, T::ONE, cv)?
                }
            }
            if t + wd < end {
                self.update(be, w, (t + wd, end - t - wd), (t, wd), (k, depth), compute)?;
            }
            t += wd;
        }
        Ok(())
    }

    /// `C := C − X·Yᵀ` on the trapezoid `C = L[j.., j..j + order]` (all
    /// rows from `j`), `X = L[j.., k..k + depth]`: the diagonal block by
    /// [`update_diagonal`](Self::update_diagonal) on the sibling queue and
    /// the rows below by `gemm` on this one, at once, since they are
    /// independent; both are on the critical path.
    fn update_trapezoid(
        &self,
        be: &B,
        w: Option<&Shadow<'_, '_, B, T>>,
        (j, order): (usize, usize),
        (k, depth): (usize, usize),
        compute: Compute,
    ) -> Result<()> {
        let sibling = be.sibling()?;
        sibling.wait_for(be)?;
        self.update_diagonal(sibling, w, (j, order), (k, depth), compute)?;
        let below = j + order;
        if self.tri.rows > below {
            self.update(be, w, (below, self.tri.rows - below), (j, order), (k, depth), compute)?;
        }
        be.wait_for(sibling)
    }

    /// Factors the `w × w` diagonal block at `k` (`w` no larger than a leaf)
    /// and solves the rows of `L` below it with it: one backend call for the
    /// rows stored with the diagonal block, triangular solves for the rest
    /// (RFP storage whose first half is split).
    fn factor_leaf(
        &self,
        be: &B,
        leaves: &mut Leaves<'_, B, T>,
        shadow: Option<&Shadow<'_, '_, B, T>>,
        (k, w): (usize, usize),
        info: &mut ViewMut<'_, B, i32>,
        offset: usize,
    ) -> Result<()> {
        let (tri, a) = (&self.tri, self.a);
        let mut runs = tri.row_runs(k, tri.rows - k, k);
        let (top, len) = runs.next().expect("a leaf has its diagonal block");
        let panel = tri.at(top, k, len, w)?;
        match &mut *leaves {
            Leaves::Ldlt { d, tol, .. } => {
                let s = shadow.ok_or_else(|| Error::InvalidArgument("an LDLᵀ leaf without its W".into()))?;
                let wv = s.buf.view_mut(s.at(k + w, k, len - w, w)?.block)?;
                let dk = d.rb_mut().sub_mut(k, 0, w, 1)?;
                be.ldlt_panel(panel.uplo(), a.view_mut(panel.block)?, wv, dk, info.rb_mut(), offset + k, *tol)?;
            }
            Leaves::Cholesky => be.potrf_panel(panel.uplo(), a.view_mut(panel.block)?, info.rb_mut(), offset + k)?,
        }
        let l11 = tri.at(k, k, w, w)?;
        for (i, rows) in runs {
            let b = tri.at(i, k, rows, w)?;
            let (lv, bv) = (a.view(l11.block)?, a.view_mut(b.block)?);
            let Leaves::Ldlt { dmat, .. } = &*leaves else {
                if b.transposed {
                    // L21ᵀ = L11⁻¹·A21ᵀ.
                    be.trsm(Side::Left, l11.uplo(), l11.op(false), Diag::NonUnit, T::ONE, lv, bv)?;
                } else {
                    be.trsm(Side::Right, l11.uplo(), l11.op(true), Diag::NonUnit, T::ONE, lv, bv)?;
                }
                continue;
            };
            let s = shadow.ok_or_else(|| Error::InvalidArgument("an LDLᵀ leaf without its W".into()))?;
            // W₂₁ = A₂₁·L₁₁⁻ᵀ (L₁₁ unit), kept; then L₂₁ = W₂₁·D₁⁻¹, with D₁
            // as a diagonal triangle.
            let dblock = Block::dense(w, w);
            copy_as_lower(be, l11, a.view(l11.block)?, dmat.view_mut(dblock)?)?;
            be.fill_strict_triangle(Uplo::Lower, T::ZERO, dmat.view_mut(dblock)?)?;
            let dv = dmat.view(dblock)?;
            if b.transposed {
                be.trsm(Side::Left, l11.uplo(), l11.op(false), Diag::Unit, T::ONE, lv, bv)?;
                be.copy(a.view(b.block)?, s.buf.view_mut(s.at(i, k, rows, w)?.block)?)?;
                be.trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, T::ONE, dv, a.view_mut(b.block)?)?;
            } else {
                be.trsm(Side::Right, l11.uplo(), l11.op(true), Diag::Unit, T::ONE, lv, bv)?;
                be.copy(a.view(b.block)?, s.buf.view_mut(s.at(i, k, rows, w)?.block)?)?;
                be.trsm(Side::Right, Uplo::Lower, Op::NoTrans, Diag::NonUnit, T::ONE, dv, a.view_mut(b.block)?)?;
            }
        }
        Ok(())
    }

    /// Factors block column `k..k + w` of `L`, from its diagonal to the last
    /// row, on the main queue: recursively, halving the width down to
    /// leaves, each half-width step applying the left half to the right one
    /// (left-looking within the panel, so that the updates are tall
    /// products).
    fn factor_panel(
        &self,
        be: &B,
        leaves: &mut Leaves<'_, B, T>,
        shadow: Option<&Shadow<'_, '_, B, T>>,
        (k, w): (usize, usize),
        info: &mut ViewMut<'_, B, i32>,
        offset: usize,
    ) -> Result<()> {
        let leaf = self.params.leaf_size.max(1);
        if w <= leaf {
            return self.factor_leaf(be, leaves, shadow, (k, w), info, offset);
        }
        let w1 = w.div_ceil(2).div_ceil(leaf) * leaf;
        let (k2, w2) = (k + w1, w - w1);
        self.factor_panel(be, leaves, shadow, (k, w1), info, offset)?;
        let compute = match self.params.panel {
            Compute::Int8 { .. } => Compute::Native,
            other => other,
        };
        self.update_trapezoid(be, shadow, (k2, w2), (k, w1), compute)?;
        self.factor_panel(be, leaves, shadow, (k2, w2), info, offset)
    }
}

/// Enqueues the blocked factorization of `L` wherever `tri` stores it, in
/// place: the leaves' failures (a pivot not positive for Cholesky, of
/// magnitude `≤ tol` for LDLᵀ) go to `info` as 1-based columns counted
/// from `offset`, as `potrf` reports them.
pub(crate) fn factor<B: Backend, T: Scalar>(
    be: &B,
    tri: Triangle,
    a: &BufferMut<'_, B, T>,
    mut leaves: Leaves<'_, B, T>,
    info: &mut ViewMut<'_, B, i32>,
    offset: usize,
    params: CholeskyParams,
) -> Result<()> {
    let f = Loop { tri, a, params };
    let (n, m) = (tri.cols, tri.rows);
    let w = match &leaves {
        Leaves::Ldlt { w, .. } => Some(*w),
        Leaves::Cholesky => None,
    };
    let shadow = |step: usize, kb| w.map(|w| Shadow::new(w[step % 2], &tri, kb)).transpose();
    let blocks = tri.column_blocks(params.block_size);
    if blocks.len() <= 1 {
        for (step, &kb) in blocks.iter().enumerate() {
            f.factor_panel(be, &mut leaves, shadow(step, kb)?.as_ref(), kb, info, offset)?;
        }
        return Ok(());
    }
    let side = be.side()?;
    // The side queue starts after what the caller enqueued.
    side.wait_for(be)?;
    let mut current = shadow(0, blocks[0])?;
    for (step, &(k, kb)) in blocks.iter().enumerate() {
        f.factor_panel(be, &mut leaves, current.as_ref(), (k, kb), info, offset)?;
        let Some(&(k1, next)) = blocks.get(step + 1) else { break };
        let k2 = k1 + next;
        // The side queue may apply the factored panel to the far trailing
        // matrix; block column k + 1 must first have the side queue's
        // earlier updates, and gets its last one here (look-ahead). That
        // wait also ends the side queue's reads of the W that block column
        // k + 1 is about to overwrite.
        side.wait_for(be)?;
        be.wait_for(side)?;
        let compute = params.update;
        f.update_trapezoid(be, current.as_ref(), (k1, next), (k, kb), compute)?;
        if n > k2 {
            f.update_diagonal(side, current.as_ref(), (k2, n - k2), (k, kb), compute)?;
            if m > n {
                f.update(side, current.as_ref(), (n, m - n), (k2, n - k2), (k, kb), compute)?;
            }
        }
        current = shadow(step + 1, (k1, next))?;
    }
    // The caller's next work sees the whole factor.
    be.wait_for(side)
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
