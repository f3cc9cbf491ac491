//! Cholesky in rectangular full packed storage, as LAPACK's `dpftrf`: the
//! RFP array is a rectangle whose three pieces are ordinary full-storage
//! blocks, so the packed factorization is one step of the blocked one —
//! factor `T1`, solve for `S`, update `T2`, factor `T2` — with the same
//! primitives at other offsets, in `n(n+1)/2` entries.
//!
//! Everything is read in the form `A = L·Lᵀ` (for `UPLO = U`, `L = Uᵀ`):
//! `T1` holds `L11` in its lower triangle or `L11ᵀ` in its upper one, `T2`
//! likewise `L22`, and `S` holds `L21` (`n2 × n1`) or `L21ᵀ` (`n1 × n2`).

use super::factor::{CholeskyParams, factor_in_place, symmetric_update};
use crate::backend::{Backend, Block, BufferMut, Diag, Op, Side, View, ViewMut};
use crate::layout::{Rfp, TrianglePiece, Uplo};
use crate::{Result, Scalar};

/// The pieces of an RFP array that starts at `base` in its buffer.
struct Pieces {
    n1: usize,
    n2: usize,
    t1: (Block, Uplo),
    s: Block,
    t2: (Block, Uplo),
    /// `S` holds `L21` rather than `L21ᵀ`.
    s_is_l21: bool,
}

fn pieces(rfp: Rfp, base: usize) -> Pieces {
    let p = rfp.pieces();
    let tri = |t: TrianglePiece| {
        (Block { offset: base + t.offset, rows: t.full.rows, cols: t.full.cols, ld: t.full.ld }, t.uplo)
    };
    let s = Block { offset: base + p.s.offset, rows: p.s.full.rows, cols: p.s.full.cols, ld: p.s.full.ld };
    // The stored off-diagonal block is A21 for UPLO = L and A12 = A21ᵀ for U.
    let s_is_l21 = (rfp.uplo == Uplo::Lower) != p.s.transposed;
    Pieces { n1: p.n1, n2: p.n2, t1: tri(p.t1), s, t2: tri(p.t2), s_is_l21 }
}

/// `T1` and `S` as one panel of the blocked factorization, when they are
/// laid out as one: `S = L21` right below a lower `T1`, or `S = L21ᵀ` right
/// of an upper one, with the same leading dimension (four of the eight RFP
/// layouts).
fn panel(n1: usize, n2: usize, t1: (Block, Uplo), s: Block, s_is_l21: bool) -> Option<Block> {
    let (t, uplo) = t1;
    let joined = match (uplo, s_is_l21) {
        (Uplo::Lower, true) => Block { rows: n1 + n2, ..t },
        (Uplo::Upper, false) => Block { cols: n1 + n2, ..t },
        _ => return None,
    };
    let tail = match uplo {
        Uplo::Lower => joined.sub(n1, 0, n2, n1),
        Uplo::Upper => joined.sub(0, n1, n1, n2),
    };
    (n1 > 0 && n2 > 0 && tail.ok() == Some(s)).then_some(joined)
}

/// `op` applied to a stored triangle gives `L` (`lower`: it holds `L`) or `Lᵀ`.
fn op_for(stored: Uplo, want_transpose: bool) -> Op {
    if (stored == Uplo::Upper) != want_transpose { Op::Trans } else { Op::NoTrans }
}

/// Factors the RFP array at `base` in `a` in place (`dpftrf`). A pivot that
/// is not positive is reported in `info` as for [`factor_in_place`].
pub fn factor_rfp_in_place<B: Backend, T: Scalar>(
    be: &B,
    rfp: Rfp,
    a: &BufferMut<'_, B, T>,
    base: usize,
    info: &mut ViewMut<'_, B, i32>,
    params: CholeskyParams,
) -> Result<()> {
    let Pieces { n1, n2, t1, s, t2, s_is_l21 } = pieces(rfp, base);
    if let Some(panel) = panel(n1, n2, t1, s, s_is_l21) {
        // T1 and S form one block column of L: factor and solve in one
        // blocked pass, then update and factor T2.
        factor_in_place(be, t1.1, a, panel, info, 0, params)?;
        let op = if s_is_l21 { Op::NoTrans } else { Op::Trans };
        symmetric_update(be, (t2.1, op), a, s, t2.0, params.update_tile)?;
        return factor_in_place(be, t2.1, a, t2.0, info, n1, params);
    }
    factor_in_place(be, t1.1, a, t1.0, info, 0, params)?;
    if n1 > 0 && n2 > 0 {
        let one = T::ONE;
        if s_is_l21 {
            // L21 = A21·L11⁻ᵀ, then A22 -= L21·L21ᵀ.
            let op = op_for(t1.1, true);
            be.trsm(Side::Right, t1.1, op, Diag::NonUnit, one, a.view(t1.0)?, a.view_mut(s)?)?;
            symmetric_update(be, (t2.1, Op::NoTrans), a, s, t2.0, params.update_tile)?;
        } else {
            // L21ᵀ = L11⁻¹·A21ᵀ, then A22 -= (L21ᵀ)ᵀ·L21ᵀ.
            let op = op_for(t1.1, false);
            be.trsm(Side::Left, t1.1, op, Diag::NonUnit, one, a.view(t1.0)?, a.view_mut(s)?)?;
            symmetric_update(be, (t2.1, Op::Trans), a, s, t2.0, params.update_tile)?;
        }
    }
    factor_in_place(be, t2.1, a, t2.0, info, n1, params)
}

/// Overwrites `b` (`n` rows) with `X` such that `A·X = B`, `A = L·Lᵀ` given
/// by its RFP factor at `base` in `factor`'s buffer (`dpftrs`).
pub fn solve_rfp_in_place<B: Backend, T: Scalar>(
    be: &B,
    rfp: Rfp,
    factor: View<'_, B, T>,
    base: usize,
    b: ViewMut<'_, B, T>,
) -> Result<()> {
    let Pieces { n1, n2, t1, s, t2, s_is_l21 } = pieces(rfp, base);
    let buf = factor.buffer();
    let (t1v, t2v, sv) = (View::new(buf, t1.0)?, View::new(buf, t2.0)?, View::new(buf, s)?);
    let one = T::ONE;
    let (mut top, mut bottom) = b.split_at_row(n1)?;
    let s_op = |transpose: bool| if s_is_l21 != transpose { Op::NoTrans } else { Op::Trans };
    // L·Y = B.
    be.trsm(Side::Left, t1.1, op_for(t1.1, false), Diag::NonUnit, one, t1v, top.rb_mut())?;
    if n1 > 0 && n2 > 0 {
        be.gemm(-one, sv, s_op(false), top.rb(), Op::NoTrans, one, bottom.rb_mut())?;
    }
    be.trsm(Side::Left, t2.1, op_for(t2.1, false), Diag::NonUnit, one, t2v, bottom.rb_mut())?;
    // Lᵀ·X = Y.
    be.trsm(Side::Left, t2.1, op_for(t2.1, true), Diag::NonUnit, one, t2v, bottom.rb_mut())?;
    if n1 > 0 && n2 > 0 {
        be.gemm(-one, sv, s_op(true), bottom.rb(), Op::NoTrans, one, top.rb_mut())?;
    }
    be.trsm(Side::Left, t1.1, op_for(t1.1, true), Diag::NonUnit, one, t1v, top)
}
