//! The 1-norm condition estimate, as LAPACK's `dgecon`: `‖A⁻¹‖₁` by
//! Hager's method with Higham's refinements (`dlacn2`), which needs only
//! solves with `A` and `Aᵀ` — a few `O(n²)` solves instead of the `O(n³)`
//! inverse — then `rcond = 1 / (‖A‖₁·‖A⁻¹‖₁)`.

use super::solve::solve_in_place;
use crate::backend::{Backend, Op, View, ViewMut};
use crate::{Result, Scalar};

/// Most iterations of the estimator (LAPACK's `ITMAX`).
const MAX_ITERATIONS: usize = 5;

/// An estimate (a lower bound, nearly always within a factor 3) of
/// `‖A⁻¹‖₁` for an `n × n` matrix, given `solve(x, transposed)`, which
/// overwrites `x` with `A⁻¹·x` or `A⁻ᵀ·x`.
pub fn inverse_one_norm(n: usize, mut solve: impl FnMut(&mut [f64], bool) -> Result<()>) -> Result<f64> {
    if n == 0 {
        return Ok(0.0);
    }
    let one_norm = |x: &[f64]| x.iter().map(|v| v.abs()).sum::<f64>();
    let sign = |x: &[f64]| x.iter().map(|&v| if v >= 0.0 { 1.0 } else { -1.0 }).collect::<Vec<f64>>();
    let argmax = |x: &[f64]| (0..x.len()).fold(0, |b, i| if x[i].abs() > x[b].abs() { i } else { b });
    let mut x = vec![1.0 / n as f64; n];
    solve(&mut x, false)?;
    if n == 1 {
        return Ok(x[0].abs());
    }
    let mut est = one_norm(&x);
    let mut xi = sign(&x);
    let mut z = xi.clone();
    solve(&mut z, true)?;
    let mut j = argmax(&z);
    for _ in 1..MAX_ITERATIONS {
        let mut y = vec![0.0; n];
        y[j] = 1.0;
        solve(&mut y, false)?;
        let old = est;
        est = one_norm(&y);
        let s = sign(&y);
        if s == xi || est <= old {
            est = est.max(old);
            break;
        }
        xi = s;
        z.clone_from(&xi);
        solve(&mut z, true)?;
        let last = j;
        j = argmax(&z);
        if z[last].abs() == z[j].abs() {
            break;
        }
    }
    // Higham's alternative vector catches the cases the iteration misses.
    let mut alt: Vec<f64> =
        (0..n).map(|i| (if i % 2 == 0 { 1.0 } else { -1.0 }) * (1.0 + i as f64 / (n - 1) as f64)).collect();
    solve(&mut alt, false)?;
    Ok(est.max(2.0 * one_norm(&alt) / (3.0 * n as f64)))
}

/// The reciprocal condition number `1 / (‖A‖₁·‖A⁻¹‖₁)` estimated from the
/// factorization `P·A = L·U` (`lu`, `ipiv`) and `‖A‖₁` (`a_norm`, taken
/// before factoring). 0 for a zero matrix; waits for the solves.
pub fn rcond<B: Backend, T: Scalar>(be: &B, lu: View<'_, B, T>, ipiv: View<'_, B, i32>, a_norm: f64) -> Result<f64> {
    let n = lu.rows();
    if n == 0 {
        return Ok(f64::INFINITY);
    }
    if a_norm == 0.0 || !a_norm.is_finite() {
        return Ok(0.0);
    }
    let inv_norm = inverse_one_norm(n, |x, transposed| {
        let host: Vec<T> = x.iter().map(|&v| T::from_f64(v)).collect();
        let mut work = be.upload(&host)?;
        let op = if transposed { Op::Trans } else { Op::NoTrans };
        solve_in_place(be, lu, ipiv, op, ViewMut::dense(&mut work, n, 1)?)?;
        let mut out = vec![T::ZERO; n];
        be.download(&work, &mut out)?;
        x.iter_mut().zip(out).for_each(|(x, v)| *x = v.to_f64());
        Ok(())
    })?;
    Ok(if inv_norm.is_finite() && inv_norm > 0.0 { 1.0 / (a_norm * inv_norm) } else { 0.0 })
}
