//! `Q·R` and the thin `Q` from the factors, for tests and backward errors.

use super::apply::apply_q;
use crate::backend::{Backend, Block, Op, View, ViewMut};
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// Writes `Q·R` (`m × n`) into `out`.
pub fn reconstruct<B: Backend, T: Scalar>(
    be: &B,
    factor: View<'_, B, T>,
    t: View<'_, B, T>,
    mut out: ViewMut<'_, B, T>,
) -> Result<()> {
    // out := R (the upper trapezoid), then out := Q·out.
    be.copy(factor, out.rb_mut())?;
    be.fill_strict_triangle(Uplo::Lower, T::ZERO, out.rb_mut())?;
    apply_q(be, factor, t, Op::NoTrans, out)
}

/// Writes the first `k = min(m, n)` columns of `Q` (`m × k`) into `out`.
pub fn thin_q<B: Backend, T: Scalar>(
    be: &B,
    factor: View<'_, B, T>,
    t: View<'_, B, T>,
    mut out: ViewMut<'_, B, T>,
) -> Result<()> {
    let (m, k) = (factor.rows(), factor.rows().min(factor.cols()));
    if (out.rows(), out.cols()) != (m, k) {
        return Err(Error::dims(
            "thin_q",
            format!("Q's first columns are {m}×{k}, output is {}×{}", out.rows(), out.cols()),
        ));
    }
    // [I; 0], built on the host: Q's columns are Q applied to it.
    let mut eye = vec![T::ZERO; m * k];
    (0..k).for_each(|j| eye[j + j * m] = T::ONE);
    let eye = be.upload(&eye)?;
    be.copy(View::new(&eye, Block::dense(m, k))?, out.rb_mut())?;
    apply_q(be, factor, t, Op::NoTrans, out)
}
