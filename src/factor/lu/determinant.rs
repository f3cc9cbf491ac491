//! The determinant as `mantissa × 2^exponent`, from the diagonal of `U`:
//! the product of `n` pivots overflows or underflows long before
//! `log|det|` does, and the determinant itself may lie outside the range of
//! `f64`; a mantissa kept in `[1, 2)` and an integer exponent hold it
//! without either (as LINPACK's `dgedi` keeps `det = d₁·10^d₂`).

use std::fmt;

use crate::factor::equilibrate::{exponent, ldexp};
use crate::{Error, Result};

/// `det A = mantissa · 2^exponent`, `1 ≤ |mantissa| < 2` (the sign is the
/// mantissa's), or `mantissa = 0` and `exponent = 0` for a singular `A`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Determinant {
    pub mantissa: f64,
    pub exponent: i64,
}

impl Determinant {
    pub const ZERO: Determinant = Determinant { mantissa: 0.0, exponent: 0 };

    /// `(−1)^swaps · Π dᵢ · 2^shift`, each `dᵢ` split into its mantissa and
    /// exponent so that only numbers in `[1, 4)` are multiplied (rounding
    /// as the plain product would, to `n` roundings in all).
    pub fn from_diagonal(diagonal: &[f64], swaps: usize, shift: i64) -> Determinant {
        let mut mantissa = if swaps.is_multiple_of(2) { 1.0 } else { -1.0 };
        let mut exp = shift;
        for &d in diagonal {
            if d == 0.0 {
                return Determinant::ZERO;
            }
            let e = exponent(d) - 1;
            mantissa *= ldexp(d, -e);
            exp += i64::from(e);
            // Renormalize: |mantissa| back into [1, 2).
            let k = exponent(mantissa) - 1;
            mantissa = ldexp(mantissa, -k);
            exp += i64::from(k);
        }
        Determinant { mantissa, exponent: exp }
    }

    /// `−1`, `0` or `1`.
    pub fn sign(&self) -> f64 {
        if self.mantissa == 0.0 { 0.0 } else { self.mantissa.signum() }
    }

    /// `ln|det A|` (−∞ for a singular `A`), finite for every nonzero
    /// determinant.
    pub fn ln_abs(&self) -> f64 {
        self.mantissa.abs().ln() + self.exponent as f64 * std::f64::consts::LN_2
    }

    /// `det A` as an `f64`: [`Error::Overflow`] beyond its largest finite
    /// number, [`Error::Underflow`] below its smallest normal one (where a
    /// subnormal result would have lost digits and a zero would claim `A`
    /// singular).
    pub fn value(&self) -> Result<f64> {
        if self.mantissa == 0.0 {
            return Ok(0.0);
        }
        if self.exponent > 1023 {
            return Err(Error::Overflow { what: "det A".into() });
        }
        if self.exponent < -1022 {
            return Err(Error::Underflow { what: "det A".into() });
        }
        Ok(ldexp(self.mantissa, self.exponent as i32))
    }
}

impl fmt::Display for Determinant {
    /// `mantissa × 2^exponent`, the mantissa to the shortest round-trip digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} × 2^{}", self.mantissa, self.exponent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_beyond_the_range_keep_their_exponent() {
        let d = Determinant::from_diagonal(&[1e300, 1e300, -3.0], 1, 0);
        let want = 600.0 * 10f64.ln() + 3f64.ln();
        assert!((d.ln_abs() - want).abs() <= 1e-13 * want);
        assert_eq!(d.sign(), 1.0);
        assert!(matches!(d.value(), Err(Error::Overflow { .. })));
        let t = Determinant::from_diagonal(&[1e-300, 1e-300], 0, 0);
        assert!(matches!(t.value(), Err(Error::Underflow { .. })));
        let e = Determinant::from_diagonal(&[2.0, 37.0], 0, 0);
        assert_eq!(e.value().unwrap(), 74.0);
        assert_eq!(e.to_string(), "1.15625 × 2^6");
        assert_eq!(Determinant::from_diagonal(&[3.0, 0.0], 0, 0), Determinant::ZERO);
        assert_eq!(Determinant::from_diagonal(&[1.0], 0, 5).value().unwrap(), 32.0);
        assert_eq!(Determinant::from_diagonal(&[f64::MIN_POSITIVE / 4.0], 0, 0).exponent, -1024);
    }
}
