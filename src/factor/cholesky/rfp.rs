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
use crate::backend::{Backend, BufferMut, Diag, Triangle, View, ViewMut};
use crate::factor::triangular::solve_lower;
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
    mut b: ViewMut<'_, B, T>,
) -> Result<()> {
    let tri = Triangle::rfp(rfp, base);
    solve_lower(be, &tri, factor.buffer(), b.rb_mut(), false, Diag::NonUnit)?;
    solve_lower(be, &tri, factor.buffer(), b, true, Diag::NonUnit)
}
