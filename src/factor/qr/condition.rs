//! The diagonal of `R` and an estimate of its condition number.

use crate::backend::{Backend, Block, Diag, Norm, Op, Side, View, ViewMut};
use crate::factor::condition::inverse_one_norm_on;
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// The `min(m, n)` diagonal entries of `R`, on the host.
pub fn r_diagonal<B: Backend, T: Scalar>(be: &B, factor: View<'_, B, T>) -> Result<Vec<T>> {
    let k = factor.rows().min(factor.cols());
    if k == 0 {
        return Ok(Vec::new());
    }
    let b = factor.block();
    // A 1 × k row with stride ld + 1.
    let diagonal = View::new(factor.buffer(), Block { offset: b.offset, rows: 1, cols: k, ld: b.ld + 1 })?;
    let mut d = be.alloc::<T>(k)?;
    be.copy(diagonal, ViewMut::dense(&mut d, 1, k)?)?;
    let mut host = vec![T::ZERO; k];
    be.download(&d, &mut host)?;
    Ok(host)
}

/// An estimate of `κ₁(R) = ‖R‖₁·‖R⁻¹‖₁` for the leading `n × n` triangle of
/// the factored `m × n` matrix (`m ≥ n`): `‖R‖₁` exactly, `‖R⁻¹‖₁` from
/// the Hager–Higham estimator (LAPACK's `dtrcon`), a few triangular solves
/// with one vector. A lower bound that is rarely off by more than a factor
/// of a few; `∞` when a diagonal entry of `R` is zero or not finite.
pub fn condition_estimate<B: Backend, T: Scalar>(be: &B, factor: View<'_, B, T>) -> Result<f64> {
    let n = factor.cols().min(factor.rows());
    if n == 0 {
        return Ok(0.0);
    }
    if r_diagonal(be, factor)?.iter().any(|d| *d == T::ZERO || !Scalar::is_finite(*d)) {
        return Ok(f64::INFINITY);
    }
    let r = factor.sub(0, 0, n, n)?;
    let mut tri = be.alloc::<T>(n * n)?;
    be.copy(r, ViewMut::dense(&mut tri, n, n)?)?;
    be.fill_strict_triangle(Uplo::Lower, T::ZERO, ViewMut::dense(&mut tri, n, n)?)?;
    let norm_r = be.norm(Norm::One, View::dense(&tri, n, n)?)?.to_f64();
    let inverse_norm = inverse_one_norm_on(be, n, |v, transposed| {
        let op = if transposed { Op::Trans } else { Op::NoTrans };
        be.trsm(Side::Left, Uplo::Upper, op, Diag::NonUnit, T::ONE, r, ViewMut::dense(v, n, 1)?)
    })?;
    Ok(norm_r * inverse_norm)
}
