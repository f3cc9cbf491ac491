//! Applying `Q` or `Qᵀ` from the left, one block reflector at a time.

use crate::backend::{Backend, Op, View, ViewMut};
use crate::{Error, Result, Scalar};

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
        be.larfb(v, tb, op, b.rb_mut().sub_mut(j, 0, m - j, nrhs)?, &mut work)?;
    }
    Ok(())
}
