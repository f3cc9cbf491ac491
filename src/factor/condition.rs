//! The 1-norm of an inverse, estimated from solves: Hager's method (Hager
//! 1984) with Higham's refinements (Higham 1988), as LAPACK's `dlacn2`.
//! Every condition estimate of the factorizations goes through here — LU
//! (`dgecon`), Cholesky (`dpocon`), the `R` of QR (`dtrcon`) — each giving
//! only a way to apply `A⁻¹` and `A⁻ᵀ` to a vector: a few `O(n²)` solves
//! instead of the `O(n³)` inverse.

use crate::backend::Backend;
use crate::{Result, Scalar};

/// Most iterations of the estimator (LAPACK's `ITMAX`).
const MAX_ITERATIONS: usize = 5;

/// An estimate of `‖A⁻¹‖₁` for an `n × n` matrix, given `solve(x,
/// transposed)`, which overwrites `x` with `A⁻¹·x` or `A⁻ᵀ·x`. A lower bound,
/// nearly always within a factor 3; `∞` when a solve gives a NaN or an
/// infinity (a zero or overflowing pivot); 0 for `n = 0`.
pub fn inverse_one_norm(n: usize, mut solve: impl FnMut(&mut [f64], bool) -> Result<()>) -> Result<f64> {
    if n == 0 {
        return Ok(0.0);
    }
    // A solve that overflows is `A` singular to working precision; a NaN
    // must not slip through `f64::max` below.
    let mut apply = |x: &mut [f64], transposed: bool| -> Result<bool> {
        solve(x, transposed)?;
        Ok(x.iter().all(|v| v.is_finite()))
    };
    let one_norm = |x: &[f64]| x.iter().map(|v| v.abs()).sum::<f64>();
    let sign = |x: &[f64]| x.iter().map(|&v| if v >= 0.0 { 1.0 } else { -1.0 }).collect::<Vec<f64>>();
    let argmax = |x: &[f64]| (0..x.len()).fold(0, |b, i| if x[i].abs() > x[b].abs() { i } else { b });
    let mut x = vec![1.0 / n as f64; n];
    if !apply(&mut x, false)? {
        return Ok(f64::INFINITY);
    }
    if n == 1 {
        return Ok(x[0].abs());
    }
    let mut est = one_norm(&x);
    let mut xi = sign(&x);
    let mut z = xi.clone();
    if !apply(&mut z, true)? {
        return Ok(f64::INFINITY);
    }
    let mut j = argmax(&z);
    for _ in 1..MAX_ITERATIONS {
        let mut y = vec![0.0; n];
        y[j] = 1.0;
        if !apply(&mut y, false)? {
            return Ok(f64::INFINITY);
        }
        let old = est;
        est = one_norm(&y);
        let s = sign(&y);
        // A repeated sign vector has converged; a smaller estimate cycles.
        if s == xi || est <= old {
            est = est.max(old);
            break;
        }
        xi = s;
        z.clone_from(&xi);
        if !apply(&mut z, true)? {
            return Ok(f64::INFINITY);
        }
        let last = j;
        j = argmax(&z);
        if z[last].abs() == z[j].abs() {
            break;
        }
    }
    // Higham's alternative vector catches the cases the iteration misses.
    let mut alt: Vec<f64> =
        (0..n).map(|i| (if i % 2 == 0 { 1.0 } else { -1.0 }) * (1.0 + i as f64 / (n - 1) as f64)).collect();
    if !apply(&mut alt, false)? {
        return Ok(f64::INFINITY);
    }
    Ok(est.max(2.0 * one_norm(&alt) / (3.0 * n as f64)))
}

/// [`inverse_one_norm`] with the solves on the device, in `T`: each vector
/// is rounded to `T`, uploaded as a dense `n`-vector, overwritten by
/// `solve(v, transposed)` and read back.
pub fn inverse_one_norm_on<B: Backend, T: Scalar>(
    be: &B,
    n: usize,
    mut solve: impl FnMut(&mut B::Buffer<T>, bool) -> Result<()>,
) -> Result<f64> {
    inverse_one_norm(n, |x, transposed| {
        let host: Vec<T> = x.iter().map(|&v| T::from_f64(v)).collect();
        let mut v = be.upload(&host)?;
        solve(&mut v, transposed)?;
        let mut out = vec![T::ZERO; n];
        be.download(&v, &mut out)?;
        x.iter_mut().zip(out).for_each(|(x, v)| *x = v.to_f64());
        Ok(())
    })
}

/// `1 / (‖A‖₁·‖A⁻¹‖₁)` from the two norms: 0 when either is zero or not
/// finite (a zero `A`, or one singular to working precision), `∞` for
/// `n = 0`.
pub fn reciprocal_condition(n: usize, a_norm: f64, inverse_norm: f64) -> f64 {
    if n == 0 {
        return f64::INFINITY;
    }
    let product = a_norm * inverse_norm;
    if product.is_finite() && product > 0.0 { 1.0 / product } else { 0.0 }
}
