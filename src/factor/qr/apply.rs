//! Applying `Q` or `Qᵀ` from the left, one block reflector at a time.

use crate::backend::{Backend, Block, Diag, Op, Side, View, ViewMut};
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// `C := Hᵀ·C` (`op = Trans`) or `H·C` (`NoTrans`) for the block reflector
/// `H = I − V·T·Vᵀ` of the `mp × kb` panel `v` (unit lower trapezoidal, as
/// left by `householder`) and its `kb × kb` `t`; `C` is `mp × nc`. `work`
/// holds at least `kb·nc` entries and is overwritten.
pub fn apply_block<B: Backend, T: Scalar>(
    be: &B,
    v: View<'_, B, T>,
    t: View<'_, B, T>,
    op: Op,
    c: ViewMut<'_, B, T>,
    work: &mut B::Buffer<T>,
) -> Result<()> {
    let (mp, kb, nc) = (v.rows(), v.cols(), c.cols());
    if c.rows() != mp || t.rows() != kb || t.cols() != kb {
        return Err(Error::dims(
            "apply_block",
            format!("V is {mp}×{kb}, T {}×{}, C {}×{nc}", t.rows(), t.cols(), c.rows()),
        ));
    }
    if nc == 0 || kb == 0 {
        return Ok(());
    }
    let one = T::ONE;
    let mut w = ViewMut::new(work, Block::dense(kb, nc))?;
    let (v1, v2) = (v.sub(0, 0, kb, kb)?, v.sub(kb, 0, mp - kb, kb)?);
    let (mut c1, mut c2) = c.split_at_row(kb)?;
    // W = Vᵀ·C = V1ᵀ·C1 + V2ᵀ·C2.
    be.copy(c1.rb(), w.rb_mut())?;
    be.trmm(Side::Left, Uplo::Lower, Op::Trans, Diag::Unit, one, v1, w.rb_mut())?;
    if mp > kb {
        be.gemm(one, v2, Op::Trans, c2.rb(), Op::NoTrans, one, w.rb_mut())?;
    }
    // W = op(T)·W: Hᵀ = I − V·Tᵀ·Vᵀ.
    be.trmm(Side::Left, Uplo::Upper, op, Diag::NonUnit, one, t, w.rb_mut())?;
    // C −= V·W.
    if mp > kb {
        be.gemm(-one, v2, Op::NoTrans, w.rb(), Op::NoTrans, one, c2.rb_mut())?;
    }
    be.trmm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::Unit, one, v1, w.rb_mut())?;
    be.axpy(-one, w.rb(), c1.rb_mut())
}

/// `B := Qᵀ·B` (`op = Trans`) or `Q·B` (`NoTrans`) for `Q` of the factored
/// `m × n` `factor` with its `T` array `t`; `B` has `m` rows.
pub fn apply_q<B: Backend, T: Scalar>(
    be: &B,
    factor: View<'_, B, T>,
    t: View<'_, B, T>,
    op: Op,
    mut b: ViewMut<'_, B, T>,
) -> Result<()> {
    let (m, n) = (factor.rows(), factor.cols());
    let k = m.min(n);
    if b.rows() != m {
        return Err(Error::dims("apply_q", format!("Q is {m}×{m} but B has {} rows", b.rows())));
    }
    if t.cols() != k || (k > 0 && t.rows() == 0) {
        return Err(Error::dims("apply_q", format!("T must be nb×{k}, is {}×{}", t.rows(), t.cols())));
    }
    let nrhs = b.cols();
    if k == 0 || nrhs == 0 {
        return Ok(());
    }
    let nb = t.rows();
    let mut work = be.alloc::<T>(nb * nrhs)?;
    let starts: Vec<usize> = (0..k).step_by(nb).collect();
    // Qᵀ = H_last ᵀ⋯H₀ᵀ applies the first block first; Q the last first.
    let order: Box<dyn Iterator<Item = &usize>> =
        if op == Op::Trans { Box::new(starts.iter()) } else { Box::new(starts.iter().rev()) };
    for &j in order {
        let kb = nb.min(k - j);
        let v = factor.sub(j, j, m - j, kb)?;
        let tb = t.sub(0, j, kb, kb)?;
        apply_block(be, v, tb, op, b.rb_mut().sub_mut(j, 0, m - j, nrhs)?, &mut work)?;
    }
    Ok(())
}
