//! Cholesky in rectangular full packed storage, as LAPACK's `dpftrf`: the
//! RFP array is a rectangle whose three pieces are ordinary full-storage
//! blocks, so the packed factorization is the blocked one — the same loop,
//! look-ahead included, and the same primitives — with each block of the
//! factor found in its piece, in `n(n+1)/2` entries. (`dpftrf` itself runs
//! four calls in sequence: factor `T1`, solve for `S`, update `T2`, factor
//! `T2`; the update of `T2` then cannot overlap with anything.)
//!
//! Everything is read in the form `A = L·Lᵀ` (for `UPLO = U`, `L = Uᵀ`):
//! `T1` holds `L11` in its lower triangle or `L11ᵀ` in its upper one, `T2`
//! likewise `L22`, and `S` holds `L21` (`n2 × n1`) or `L21ᵀ` (`n1 × n2`).

use super::factor::{CholeskyParams, Stored, Triangle, factor_triangle};
use crate::backend::{Backend, Block, BufferMut, Diag, Op, Side, View, ViewMut};
use crate::layout::{Full, Rfp, TrianglePiece, Uplo};
use crate::{Result, Scalar};

/// Where the factor's blocks lie in the RFP array that starts at `base` in
/// its buffer: `L11` in `T1`, `L21` in `S`, `L22` in `T2`, each stored as
/// it is or transposed (an upper triangle holds `Lᵀ`). In four of the eight
/// layouts `S = L21` lies right below a lower `T1` (or `S = L21ᵀ` right of
/// an upper one) with the same leading dimension: a block column of the
/// first half is then one block.
fn triangle(rfp: Rfp, base: usize) -> Triangle {
    let p = rfp.pieces();
    let (n1, n2) = (p.n1, p.n2);
    let stored = |offset: usize, full: Full, transposed: bool| Stored {
        block: Block { offset: base + offset, rows: full.rows, cols: full.cols, ld: full.ld },
        transposed,
    };
    let triangle = |t: TrianglePiece| stored(t.offset, t.full, t.uplo == Uplo::Upper);
    let (mut l11, l22) = (triangle(p.t1), triangle(p.t2));
    // The stored off-diagonal block is A21 for UPLO = L and A12 = A21ᵀ for U.
    let l21 = stored(p.s.offset, p.s.full, (rfp.uplo == Uplo::Lower) == p.s.transposed);
    let tall = if l11.transposed { Block { cols: n1 + n2, ..l11.block } } else { Block { rows: n1 + n2, ..l11.block } };
    let tall = Stored { block: tall, ..l11 };
    let joined = n1 > 0 && n2 > 0 && tall.sub(n1, 0, n2, n1).ok() == Some(l21);
    if joined {
        l11 = tall;
    }
    Triangle { rows: rfp.n, cols: rfp.n, split: n1, l11, l21, l22, joined }
}

/// Factors the RFP array at `base` in `a` in place (`dpftrf`), as one blocked
/// factorization over the three pieces. A pivot that is not positive is
/// reported in `info` as for [`factor_in_place`](super::factor_in_place).
pub fn factor_rfp_in_place<B: Backend, T: Scalar>(
    be: &B,
    rfp: Rfp,
    a: &BufferMut<'_, B, T>,
    base: usize,
    info: &mut ViewMut<'_, B, i32>,
    params: CholeskyParams,
) -> Result<()> {
    factor_triangle(be, triangle(rfp, base), a, info, 0, params)
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
    let tri = triangle(rfp, base);
    let (n1, n2) = (tri.split, rfp.n - tri.split);
    let buf = factor.buffer();
    let (l11, l21, l22) = (tri.at(0, 0, n1, n1)?, tri.at(n1, 0, n2, n1)?, tri.at(n1, n1, n2, n2)?);
    let view = |s: Stored| View::new(buf, s.block);
    let one = T::ONE;
    let (mut top, mut bottom) = b.split_at_row(n1)?;
    // L·Y = B.
    be.trsm(Side::Left, l11.uplo(), l11.op(false), Diag::NonUnit, one, view(l11)?, top.rb_mut())?;
    if n1 > 0 && n2 > 0 {
        be.gemm(-one, view(l21)?, l21.op(false), top.rb(), Op::NoTrans, one, bottom.rb_mut())?;
    }
    be.trsm(Side::Left, l22.uplo(), l22.op(false), Diag::NonUnit, one, view(l22)?, bottom.rb_mut())?;
    // Lᵀ·X = Y.
    be.trsm(Side::Left, l22.uplo(), l22.op(true), Diag::NonUnit, one, view(l22)?, bottom.rb_mut())?;
    if n1 > 0 && n2 > 0 {
        be.gemm(-one, view(l21)?, l21.op(true), bottom.rb(), Op::NoTrans, one, top.rb_mut())?;
    }
    be.trsm(Side::Left, l11.uplo(), l11.op(true), Diag::NonUnit, one, view(l11)?, top)
}
