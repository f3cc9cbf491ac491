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

use super::factor::{CholeskyParams, factor_triangle};
use crate::backend::{Backend, BufferMut, Diag, Op, Side, Stored, Triangle, View, ViewMut};
use crate::layout::Rfp;
use crate::{Result, Scalar};

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
    factor_triangle(be, Triangle::rfp(rfp, base), a, info, 0, params)
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
    let tri = Triangle::rfp(rfp, base);
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
