//! Equilibration: row and column scalings by powers of two that bring the
//! entries of a matrix near 1, computed as LAPACK's `dgeequb` (general) and
//! `dpoequb` (symmetric positive definite) compute them and applied as
//! `dlaqge` applies them.
//!
//! A power of two multiplies exactly (unless the product leaves the normal
//! range), so whatever is computed from the scaled matrix is unscaled
//! exactly. What equilibration buys is exponent range: a matrix whose
//! entries are near the overflow threshold has norms, factors and
//! condition estimates that overflow, one near the underflow threshold has
//! inverse norms that do, while those of the scaled matrix are near 1.
//!
//! Callers equilibrate only when the largest entry lies outside
//! `[√ω, √Ω]` ([`in_range`]; `ω` the smallest normal number, `Ω` the
//! overflow threshold). Inside it, products of two entries, sums of `n` of
//! them and `‖A‖·‖A⁻¹‖` for any condition short of `1/u` stay far from
//! both thresholds, and leaving the matrix alone keeps the pivots and the
//! results of well-scaled matrices what they were. Outside it the row and
//! column maxima are read one at a time (the backends have no row-maximum
//! primitive), a cost paid only by matrices that need it.

use crate::backend::{Backend, Block, View, ViewMut};
use crate::{Result, Scalar};

/// `A_s = diag(2^rows)·A·diag(2^cols)`: the exponents of the scalings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scaling {
    /// One exponent per row.
    pub rows: Vec<i32>,
    /// One exponent per column.
    pub cols: Vec<i32>,
}

impl Scaling {
    /// `Σ rows + Σ cols`: `det A_s = 2^sum · det A`.
    pub fn exponent_sum(&self) -> i64 {
        self.rows.iter().chain(&self.cols).map(|&e| i64::from(e)).sum()
    }

    /// `min cⱼ / max cⱼ` (LAPACK's `COLCND`): relative 1-norm errors of
    /// `Y` grow by at most its inverse in `X = diag(c)·Y`.
    pub fn col_ratio(&self) -> f64 {
        match (self.cols.iter().min(), self.cols.iter().max()) {
            (Some(&lo), Some(&hi)) => pow2(lo.saturating_sub(hi)),
            _ => 1.0,
        }
    }
}

/// `2^k` exactly for `k` in `[−1074, 1023]`; 0 below, ∞ above.
pub fn pow2(k: i32) -> f64 {
    if k > 1023 {
        f64::INFINITY
    } else if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else if k >= -1074 {
        f64::from_bits(1u64 << (k + 1074))
    } else {
        0.0
    }
}

/// `x·2^k` (C's `ldexp`), in two steps so that `2^k` need not be
/// representable: exact whenever the result is a normal number.
pub fn ldexp(x: f64, k: i32) -> f64 {
    x * pow2(k / 2) * pow2(k - k / 2)
}

/// `e` with `x = f·2^e`, `0.5 ≤ f < 1`, for a finite `x ≠ 0` (C's `frexp`).
pub fn exponent(x: f64) -> i32 {
    let bits = x.abs().to_bits();
    let biased = (bits >> 52) as i32;
    if biased == 0 {
        // Subnormal: bring it into the normal range first.
        exponent(x * pow2(64)) - 64
    } else {
        biased - 1022
    }
}

/// `(emin, emax)`: `2^k` is a normal number of `T` for `k` in `emin..=emax`.
pub fn exponent_range<T: Scalar>() -> (i32, i32) {
    let emax = (0..1024).take_while(|&k| T::from_f64(pow2(k)).is_finite()).last().unwrap_or(0);
    (1 - emax, emax)
}

/// Whether a matrix whose largest entry is `amax` is left as it is:
/// `amax = 0` or `√ω ≤ amax ≤ √Ω` for the precision `T`.
pub fn in_range<T: Scalar>(amax: f64) -> bool {
    let (emin, emax) = exponent_range::<T>();
    amax == 0.0 || (amax >= pow2(emin / 2) && amax <= pow2((emax + 1) / 2))
}

/// The exponent `k` with `2^k·amax` in `[0.5, 1)`, within the normal range
/// of `T` (0 for `amax = 0`): one scaling for the whole matrix.
pub fn uniform<T: Scalar>(amax: f64) -> i32 {
    if amax == 0.0 || !amax.is_finite() {
        return 0;
    }
    let (emin, emax) = exponent_range::<T>();
    (-exponent(amax)).clamp(emin, emax)
}

/// The exponent that brings `max` into `[0.5, 1)` (`[0.25, 1)` for `half`,
/// which scales twice), clamped to `T`'s normal range; 0 for a zero line.
fn scaling_exponent<T: Scalar>(max: f64, half: bool) -> i32 {
    if max == 0.0 || !max.is_finite() {
        return 0;
    }
    let (emin, emax) = exponent_range::<T>();
    let e = if half { -exponent(max).div_euclid(2) } else { -exponent(max) };
    e.clamp(emin, emax)
}

fn powers<B: Backend, T: Scalar>(be: &B, exps: &[i32]) -> Result<B::Buffer<T>> {
    let host: Vec<T> = exps.iter().map(|&e| T::from_f64(pow2(e))).collect();
    be.upload(&host)
}

/// `A := diag(2^exps)·A`.
pub fn scale_rows<B: Backend, T: Scalar>(be: &B, exps: &[i32], a: ViewMut<'_, B, T>) -> Result<()> {
    if exps.iter().all(|&e| e == 0) || a.cols() == 0 {
        return Ok(());
    }
    let d = powers::<B, T>(be, exps)?;
    be.scale_rows(View::dense(&d, exps.len(), 1)?, a)
}

/// `A := A·diag(2^exps)`.
pub fn scale_cols<B: Backend, T: Scalar>(be: &B, a: ViewMut<'_, B, T>, exps: &[i32]) -> Result<()> {
    if exps.iter().all(|&e| e == 0) || a.rows() == 0 {
        return Ok(());
    }
    let d = powers::<B, T>(be, exps)?;
    be.scale_cols(a, View::dense(&d, exps.len(), 1)?)
}

/// `dgeequb` then `dlaqge`: scales each row of `a` so that its largest
/// entry is in `[0.5, 1)`, then each column of the result likewise, in
/// place; returns the exponents. A zero row or column is left alone.
pub fn general<B: Backend, T: Scalar>(be: &B, mut a: ViewMut<'_, B, T>) -> Result<Scaling> {
    let rows: Vec<i32> = be.abs_maxima(a.rb(), true)?.into_iter().map(|m| scaling_exponent::<T>(m, false)).collect();
    scale_rows(be, &rows, a.rb_mut())?;
    let cols: Vec<i32> = be.abs_maxima(a.rb(), false)?.into_iter().map(|m| scaling_exponent::<T>(m, false)).collect();
    scale_cols(be, a, &cols)?;
    Ok(Scaling { rows, cols })
}

/// `dpoequb` then `dlaqsy`: the symmetric scaling `diag(s)·A·diag(s)` of
/// the square `a` in place, `sᵢ ≈ 1/√aᵢᵢ` so that the diagonal is near 1
/// (the best diagonal scaling for Cholesky to within a factor `n`, van der
/// Sluis 1969). A matrix with a non-positive diagonal entry, which is not
/// positive definite, gets `sᵢ ≈ 1/√(max_j |aᵢⱼ|)` instead, so that its
/// entries are at most about 1 too. Exact symmetry is kept.
pub fn symmetric<B: Backend, T: Scalar>(be: &B, mut a: ViewMut<'_, B, T>) -> Result<Scaling> {
    let diag = diagonal(be, &a)?;
    let source = if diag.iter().all(|&d| d > 0.0) { diag } else { be.abs_maxima(a.rb(), true)? };
    let s: Vec<i32> = source.into_iter().map(|m| scaling_exponent::<T>(m, true)).collect();
    scale_rows(be, &s, a.rb_mut())?;
    scale_cols(be, a, &s)?;
    Ok(Scaling { rows: s.clone(), cols: s })
}

/// The diagonal of the square `a`, on the host.
fn diagonal<B: Backend, T: Scalar>(be: &B, a: &ViewMut<'_, B, T>) -> Result<Vec<f64>> {
    let n = a.rows();
    let mut diag = vec![T::ZERO; n.max(1)];
    if n > 0 {
        let mut d = be.alloc::<T>(n)?;
        let (buf, block) = (a.buffer(), a.block());
        let on_diagonal = Block { offset: block.offset, rows: 1, cols: n, ld: block.ld + 1 };
        be.copy(View::new(buf, on_diagonal)?, ViewMut::dense(&mut d, 1, n)?)?;
        be.download(&d, &mut diag)?;
    }
    Ok(diag.into_iter().take(n).map(Scalar::to_f64).collect())
}

/// [`symmetric`] or [`general`] only where `a` needs it, as LAPACK's
/// `dposvx` and `dgesvx` decide: when the scales would lie within a factor
/// 10 of each other (`SCOND`, or `ROWCND` and then `COLCND`, `≥ 0.1`), one
/// power of two for the whole matrix instead (`rows` all equal, `cols`
/// zero), which brings its largest entry into `[0.5, 1)` in one pass —
/// what a low precision needs to neither overflow nor flush — and leaves
/// the entries' relative sizes alone.
pub fn when_needed<B: Backend, T: Scalar>(be: &B, mut a: ViewMut<'_, B, T>, symmetric: bool) -> Result<Scaling> {
    let (m, n) = (a.rows(), a.cols());
    let balanced = |v: &[f64]| {
        let (lo, hi) = v.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        v.is_empty() || (lo >= 0.1 * hi && hi.is_finite())
    };
    let largest = if symmetric {
        let diag = diagonal(be, &a)?;
        // Positive definite matrices have their largest entries on the diagonal.
        if !(diag.iter().all(|&d| d > 0.0) && balanced(&diag)) {
            return self::symmetric(be, a);
        }
        diag.into_iter().fold(0.0, f64::max)
    } else {
        let rows = be.abs_maxima(a.rb(), true)?;
        if !balanced(&rows) || !balanced(&be.abs_maxima(a.rb(), false)?) {
            return general(be, a);
        }
        rows.into_iter().fold(0.0, f64::max)
    };
    let e = uniform::<T>(largest);
    if e != 0 {
        be.scale(T::from_f64(pow2(e)), a.rb_mut())?;
    }
    Ok(Scaling { rows: vec![e; m], cols: vec![0; n] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_is_uniform_unless_lines_differ() {
        use crate::backend::{Backend, Cpu};
        let cpu = Cpu::new();
        let n = 4;
        // Entries near 300: one power of two brings them below 1.
        let a: Vec<f64> = (0..n * n).map(|k| 300.0 + k as f64).collect();
        let mut buf = cpu.upload(&a).unwrap();
        let s = when_needed(&cpu, ViewMut::dense(&mut buf, n, n).unwrap(), false).unwrap();
        assert_eq!((s.rows, s.cols), (vec![-9; n], vec![0; n]));
        let mut out = vec![0.0; n * n];
        cpu.download(&buf, &mut out).unwrap();
        assert!(out.iter().zip(&a).all(|(o, a)| *o == a / 512.0));
        // A row 1e6 times the others: rows and columns scaled apart.
        let mut b = a.clone();
        for j in 0..n {
            b[1 + j * n] *= 1e6;
        }
        let mut buf = cpu.upload(&b).unwrap();
        let s = when_needed(&cpu, ViewMut::dense(&mut buf, n, n).unwrap(), false).unwrap();
        assert!(s.rows[1] < s.rows[0] - 15, "{:?}", s.rows);
        // Symmetric with a balanced diagonal: uniform, symmetry kept.
        let spd = [4.0, 1.0, 1.0, 3.0];
        let mut buf = cpu.upload(&spd).unwrap();
        let s = when_needed(&cpu, ViewMut::dense(&mut buf, 2, 2).unwrap(), true).unwrap();
        assert_eq!((s.rows, s.cols), (vec![-3; 2], vec![0; 2]));
    }

    #[test]
    fn powers_and_exponents_are_exact() {
        assert_eq!(pow2(0), 1.0);
        assert_eq!(pow2(1023), 2f64.powi(1023));
        assert_eq!(pow2(-1074), f64::from_bits(1));
        assert_eq!(pow2(-1075), 0.0);
        assert_eq!(exponent(1.0), 1);
        assert_eq!(exponent(0.75), 0);
        assert_eq!(exponent(f64::MAX), 1024);
        assert_eq!(exponent(f64::from_bits(1)), -1073);
        assert_eq!(exponent_range::<f64>(), (-1022, 1023));
        assert_eq!(exponent_range::<f32>(), (-126, 127));
        assert!(in_range::<f64>(1e150) && !in_range::<f64>(1e160) && !in_range::<f64>(1e-160));
        assert!(!in_range::<f32>(1e20) && in_range::<f32>(1e18));
        assert_eq!(uniform::<f64>(1e300) + exponent(1e300), 0);
        // 2^−1023 is not normal: the scaling stops at 2^−1022.
        assert_eq!(uniform::<f64>(1e308), -1022);
    }
}
