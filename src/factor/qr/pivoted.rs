//! QR with column pivoting, `A·P = Q·R` (Businger and Golub 1965; LAPACK's
//! `dgeqp3`): at each step the column of largest remaining norm comes
//! first, so that `|R(j, j)|` does not increase with `j` and a rank
//! deficiency shows as a trailing block of small `R`. The remaining
//! norms are downdated from the new row of `R` and recomputed where
//! cancellation has eaten their accuracy (Drmač and Bujanović 2008).
//!
//! Column by column: each step reads one row of `R` to the host, so this
//! is level-2 work with a wait per column, unlike the blocked factorization
//! of [`factor_in_place`](super::factor_in_place). The factored array and
//! the `T` array are laid out as that one's, so `Q` is applied, formed and
//! solved with as for any QR.

use super::factor::blocking;
use super::panel::form_t;
use crate::backend::{Backend, Block, BufferMut, Norm, Op, ViewMut};
use crate::{Result, Scalar};

/// Factors the `m × n` block `block` of `a` in place with column pivoting
/// and writes the panels' `T` factors (blocks of `nb` columns) into `t`,
/// `min(nb, k) × k` for `k = min(m, n)`. Returns the permutation: column
/// `j` of `A·P` is column `perm[j]` of `A`.
pub fn factor_pivoted_in_place<B: Backend, T: Scalar>(
    be: &B,
    a: &BufferMut<'_, B, T>,
    block: Block,
    mut t: ViewMut<'_, B, T>,
    nb: usize,
) -> Result<Vec<usize>> {
    let (m, n) = (block.rows, block.cols);
    let k = m.min(n);
    let nb = blocking("qr_pivoted", block, &t, nb)?;
    if k == 0 {
        return Ok((0..n).collect());
    }
    let column_norm = |j: usize, from: usize| -> Result<f64> {
        Ok(be.norm(Norm::Frobenius, a.view(block.sub(from, j, m - from, 1)?)?)?.to_f64())
    };
    let mut perm: Vec<usize> = (0..n).collect();
    // Partial norms, and each one's value when it was last computed.
    let mut partial: Vec<f64> = (0..n).map(|j| column_norm(j, 0)).collect::<Result<_>>()?;
    let mut exact = partial.clone();
    let mut swap = be.alloc::<T>(m.max(1))?;
    let mut work = be.alloc::<T>(n.max(1))?;
    let mut row = vec![T::ZERO; n];
    let tol = f64::EPSILON.sqrt();
    for j in 0..k {
        let p =
            j + partial[j..].iter().enumerate().fold(0, |best, (i, v)| if *v > partial[j + best] { i } else { best });
        if p != j {
            let column = |c: usize| block.sub(0, c, m, 1);
            let tmp = Block::dense(m, 1);
            be.copy(a.view(column(j)?)?, ViewMut::new(&mut swap, tmp)?)?;
            be.copy(a.view(column(p)?)?, a.view_mut(column(j)?)?)?;
            be.copy(crate::backend::View::new(&swap, tmp)?, a.view_mut(column(p)?)?)?;
            perm.swap(j, p);
            partial.swap(j, p);
            exact.swap(j, p);
        }
        // The reflector of column j; its τ on the diagonal of its panel's T.
        let v = block.sub(j, j, m - j, 1)?;
        let tau = t.rb_mut().sub_mut(j % nb, j, 1, 1)?;
        be.householder(a.view_mut(v)?, tau)?;
        let rest = n - j - 1;
        if rest == 0 {
            continue;
        }
        let trailing = block.sub(j, j + 1, m - j, rest)?;
        let tau = t.rb().sub(j % nb, j, 1, 1)?;
        be.larfb(a.view(v)?, tau, Op::Trans, a.view_mut(trailing)?, &mut work)?;
        // Downdate with the new row of R, recomputing where cancellation
        // has left fewer than half the digits (dlaqp2's test).
        let mut r = be.alloc::<T>(rest)?;
        be.copy(a.view(block.sub(j, j + 1, 1, rest)?)?, ViewMut::dense(&mut r, 1, rest)?)?;
        be.download(&r, &mut row[..rest])?;
        for (i, rij) in row[..rest].iter().enumerate() {
            let c = j + 1 + i;
            if partial[c] == 0.0 {
                continue;
            }
            let ratio = rij.to_f64().abs() / partial[c];
            let left = (1.0 - ratio * ratio).max(0.0);
            if left * (partial[c] / exact[c]).powi(2) <= tol {
                let fresh = if j + 1 < m { column_norm(c, j + 1)? } else { 0.0 };
                (partial[c], exact[c]) = (fresh, fresh);
            } else {
                partial[c] *= left.sqrt();
            }
        }
    }
    for j0 in (0..k).step_by(nb) {
        let kb = nb.min(k - j0);
        form_t(be, a, block.sub(j0, j0, m - j0, kb)?, t.rb_mut().sub_mut(0, j0, kb, kb)?)?;
    }
    Ok(perm)
}
