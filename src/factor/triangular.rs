//! Solves with a unit or non-unit lower triangle `L` wherever a
//! [`Triangle`] stores it: in full storage one `trsm`; in RFP storage the
//! three pieces in turn, `L11`, then `L21` by `gemm`, then `L22` (the solves
//! of LAPACK's `dpftrs`).

use crate::backend::{Backend, Diag, Op, Side, Stored, Triangle, View, ViewMut};
use crate::{Result, Scalar};

/// Overwrites `b` (`n` rows) with `L⁻¹·B` (`transpose = false`) or
/// `L⁻ᵀ·B` (`true`), `L` being the `n × n` triangle `tri` locates in `buf`.
pub fn solve_lower<B: Backend, T: Scalar>(
    be: &B,
    tri: &Triangle,
    buf: &B::Buffer<T>,
    b: ViewMut<'_, B, T>,
    transpose: bool,
    diag: Diag,
) -> Result<()> {
    let n = tri.cols;
    let (n1, n2) = (tri.split.min(n), n - tri.split.min(n));
    let view = |s: Stored| View::new(buf, s.block);
    let one = T::ONE;
    let (mut top, mut bottom) = b.split_at_row(n1)?;
    let l11 = tri.at(0, 0, n1, n1)?;
    let solve =
        |l: Stored, x: ViewMut<'_, B, T>| be.trsm(Side::Left, l.uplo(), l.op(transpose), diag, one, view(l)?, x);
    if n2 == 0 {
        return solve(l11, top);
    }
    let (l21, l22) = (tri.at(n1, 0, n2, n1)?, tri.at(n1, n1, n2, n2)?);
    if transpose {
        solve(l22, bottom.rb_mut())?;
        if n1 > 0 {
            be.gemm(-one, view(l21)?, l21.op(true), bottom.rb(), Op::NoTrans, one, top.rb_mut())?;
        }
        solve(l11, top)
    } else {
        solve(l11, top.rb_mut())?;
        if n1 > 0 {
            be.gemm(-one, view(l21)?, l21.op(false), top.rb(), Op::NoTrans, one, bottom.rb_mut())?;
        }
        solve(l22, bottom)
    }
}
