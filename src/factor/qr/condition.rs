//! The diagonal of `R` and an estimate of its condition number.

use crate::backend::{Backend, Block, Diag, Norm, Op, Side, View, ViewMut};
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
/// Hager's method with Higham's refinements (LAPACK's `dtrcon`/`dlacn2`),
/// a few triangular solves with one vector. A lower bound that is rarely
/// off by more than a factor of a few; `∞` when a diagonal entry of `R` is
/// zero or not finite.
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

    // y = R⁻¹·x or R⁻ᵀ·x.
    let solve = |x: &[f64], op: Op| -> Result<Vec<f64>> {
        let host: Vec<T> = x.iter().map(|&v| T::from_f64(v)).collect();
        let mut v = be.upload(&host)?;
        be.trsm(Side::Left, Uplo::Upper, op, Diag::NonUnit, T::ONE, r, ViewMut::dense(&mut v, n, 1)?)?;
        let mut out = vec![T::ZERO; n];
        be.download(&v, &mut out)?;
        Ok(out.into_iter().map(Scalar::to_f64).collect())
    };
    let norm1 = |y: &[f64]| y.iter().map(|v| v.abs()).sum::<f64>();
    let mut x = vec![1.0 / n as f64; n];
    let mut est = 0.0f64;
    for iter in 0..5 {
        let y = solve(&x, Op::NoTrans)?;
        let ny = norm1(&y);
        if !ny.is_finite() {
            return Ok(f64::INFINITY);
        }
        if iter > 0 && ny <= est {
            break;
        }
        est = ny;
        let sign: Vec<f64> = y.iter().map(|&v| if v >= 0.0 { 1.0 } else { -1.0 }).collect();
        let z = solve(&sign, Op::Trans)?;
        let (j, zj) = z.iter().enumerate().fold((0, -1.0), |b, (i, v)| if v.abs() > b.1 { (i, v.abs()) } else { b });
        let ztx: f64 = z.iter().zip(&x).map(|(a, b)| a * b).sum();
        if iter > 0 && zj <= ztx {
            break;
        }
        x = vec![0.0; n];
        x[j] = 1.0;
    }
    // Higham's alternating vector catches what the iteration misses.
    let alt: Vec<f64> = (0..n)
        .map(|i| {
            let s = if i % 2 == 0 { 1.0 } else { -1.0 };
            s * (1.0 + i as f64 / (n.max(2) - 1) as f64)
        })
        .collect();
    let y = solve(&alt, Op::NoTrans)?;
    est = est.max(2.0 * norm1(&y) / (3.0 * n as f64));
    Ok(norm_r * est)
}
