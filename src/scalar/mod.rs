//! Element types.
//!
//! [`Elem`] is anything a device buffer can hold (floating-point data and the
//! integer status words and pivots that factorizations write on the device).
//! [`Scalar`] is the floating-point subset the algorithms compute with: `f32`
//! and `f64`. Storage-only low-precision types (BF16, FP16) will be `Elem` but
//! not `Scalar`.

pub mod dd;

use std::fmt::{Debug, Display};

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for i32 {}
}

/// A plain-old-data element of a device buffer.
pub trait Elem: sealed::Sealed + Copy + Default + Debug + PartialEq + Send + Sync + 'static {
    /// Short name used in messages and file headers (`"f64"`, `"i32"`).
    const NAME: &'static str;
}

impl Elem for f32 {
    const NAME: &'static str = "f32";
}
impl Elem for f64 {
    const NAME: &'static str = "f64";
}
impl Elem for i32 {
    const NAME: &'static str = "i32";
}

/// A real floating-point scalar: `f32` or `f64`.
///
/// Carries what the algorithms need beyond arithmetic: the unit roundoff for
/// error bounds, and lossless-where-possible conversions through `f64`.
pub trait Scalar: Elem + faer::traits::RealField + Display + Debug + PartialOrd {
    /// Machine epsilon: the gap between 1 and the next representable number.
    const EPSILON: Self;
    /// Precision of the other floating-point type, for casts (`f32` ↔ `f64`).
    type Other: Scalar;

    const ZERO: Self;
    const ONE: Self;
    fn abs(self) -> Self;
    fn sqrt(self) -> Self;
    fn is_finite(self) -> bool;
    fn is_nan(self) -> bool;
    fn max(self, other: Self) -> Self;
    /// Rounds `x` to this precision.
    fn from_f64(x: f64) -> Self;
    /// Exact widening (or identity) to `f64`.
    fn to_f64(self) -> f64;
    /// Unit roundoff `u = ε/2`: the bound on the relative error of one rounding.
    fn unit_roundoff() -> f64 {
        Self::EPSILON.to_f64() / 2.0
    }
    fn cast_other(self) -> Self::Other {
        Self::Other::from_f64(self.to_f64())
    }
}

macro_rules! impl_scalar {
    ($t:ty, $other:ty) => {
        impl Scalar for $t {
            const EPSILON: Self = <$t>::EPSILON;
            type Other = $other;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline]
            fn max(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            #[inline]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    };
}
impl_scalar!(f32, f64);
impl_scalar!(f64, f32);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_roundoff_is_half_epsilon() {
        assert_eq!(f64::unit_roundoff(), 2f64.powi(-53));
        assert_eq!(f32::unit_roundoff(), 2f64.powi(-24));
    }

    #[test]
    fn casts_round_to_nearest() {
        let x = 1.0f64 + 2f64.powi(-30);
        assert_eq!(x.cast_other(), 1.0f32);
        assert_eq!(0.1f32.cast_other(), 0.1f32 as f64);
    }
}
