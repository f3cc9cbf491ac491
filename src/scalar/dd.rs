//! Double-double arithmetic on the host: a value `hi + lo` with
//! `|lo| ≤ ulp(hi)/2`, about 106 bits of precision, from error-free
//! transformations (Knuth's two-sum, the FMA two-product). For residuals
//! `b − A·x` of least-squares refinement, whose cancellation would otherwise
//! eat the digits that refinement is after.

/// An unevaluated sum `hi + lo` of two `f64`s.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Dd {
    pub hi: f64,
    pub lo: f64,
}

/// `a + b = s + e` exactly (Knuth).
#[inline]
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `a·b = p + e` exactly (barring underflow), by one FMA.
#[inline]
pub fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

impl Dd {
    pub const ZERO: Dd = Dd { hi: 0.0, lo: 0.0 };

    #[inline]
    pub fn new(x: f64) -> Dd {
        Dd { hi: x, lo: 0.0 }
    }

    /// The exact product `a·b`.
    #[inline]
    pub fn product(a: f64, b: f64) -> Dd {
        let (hi, lo) = two_prod(a, b);
        Dd { hi, lo }
    }

    #[inline]
    fn renormalize(hi: f64, lo: f64) -> Dd {
        let (hi, lo) = two_sum(hi, lo);
        Dd { hi, lo }
    }

    /// `self + x`.
    #[inline]
    pub fn add_f64(self, x: f64) -> Dd {
        let (s, e) = two_sum(self.hi, x);
        Self::renormalize(s, e + self.lo)
    }

    /// `self·x`.
    #[inline]
    pub fn mul_f64(self, x: f64) -> Dd {
        let (p, e) = two_prod(self.hi, x);
        Self::renormalize(p, e + self.lo * x)
    }

    /// Rounded to the nearest `f64` (to within one rounding).
    #[inline]
    pub fn to_f64(self) -> f64 {
        self.hi + self.lo
    }
}

impl std::ops::Add for Dd {
    type Output = Dd;

    #[inline]
    fn add(self, other: Dd) -> Dd {
        let (s, e) = two_sum(self.hi, other.hi);
        let (t, f) = two_sum(self.lo, other.lo);
        let (s, e) = two_sum(s, e + t);
        Dd::renormalize(s, e + f)
    }
}

impl std::ops::Sub for Dd {
    type Output = Dd;

    #[inline]
    fn sub(self, other: Dd) -> Dd {
        self + Dd { hi: -other.hi, lo: -other.lo }
    }
}

/// `Σ xᵢ·yᵢ` in double-double.
pub fn dot(x: &[f64], y: &[f64]) -> Dd {
    x.iter().zip(y).fold(Dd::ZERO, |s, (&a, &b)| s + Dd::product(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_what_f64_loses() {
        // 1 + 2⁻⁶⁰ − 1 is 0 in f64 and 2⁻⁶⁰ in double-double.
        let tiny = 2f64.powi(-60);
        let s = Dd::new(1.0).add_f64(tiny).add_f64(-1.0);
        assert_eq!(s.to_f64(), tiny);
        // (1 + 2⁻³⁰)² − 1 − 2⁻²⁹ = 2⁻⁶⁰ exactly.
        let a = 1.0 + 2f64.powi(-30);
        let d = Dd::product(a, a).add_f64(-1.0).add_f64(-(2f64.powi(-29)));
        assert_eq!(d.to_f64(), tiny);
    }

    #[test]
    fn dot_cancels_exactly() {
        let x = [1e16, 1.0, -1e16];
        let y = [1.0, 1.0, 1.0];
        assert_eq!(dot(&x, &y).to_f64(), 1.0);
        assert_eq!(Dd::new(3.0).mul_f64(0.5) - Dd::new(1.5), Dd::ZERO);
    }
}
