//! The precision of the multiplications in a product: how a single-precision
//! factorization's trailing updates use the tensor cores, and how a
//! double-precision product may use the integer ones.
//!
//! A product `C += A·B` in [`Compute::Fp16`] rounds the entries of `A` and
//! `B` to IEEE half precision and accumulates their products in FP32, as the
//! tensor cores do (Higham and Mary 2019 analyse this "block FMA"); the
//! error of each entry of `C` is then about `u_h·(|A|·|B|)` with
//! `u_h = 2⁻¹¹`, instead of FP32's `2⁻²⁴`. The factor of a matrix whose
//! trailing updates run so is the preconditioner of a refinement that
//! restores FP64 accuracy (`solve::refine`).

use half::{bf16, f16};

/// How [`Backend::gemm_in`](super::Backend::gemm_in) multiplies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Compute {
    /// In the operands' own precision.
    #[default]
    Native,
    /// TF32: 10 stored mantissa bits and FP32's range (`u = 2⁻¹¹`), at half
    /// the tensor-core rate of FP16.
    Tf32,
    /// IEEE half: 10 stored mantissa bits (`u = 2⁻¹¹`), finite up to 65504:
    /// operands must be scaled so that none exceeds it.
    Fp16,
    /// bfloat16: 7 stored mantissa bits (`u = 2⁻⁸`) and FP32's range.
    Bf16,
    /// Each operand split as `x = h + 2⁻¹¹·l`, `h` and `l` IEEE half (`l`
    /// scaled up to stay normal), and three half-precision products
    /// `h_a·h_b + 2⁻¹¹·(h_a·l_b + l_a·h_b)`: about FP32's accuracy (the
    /// operands keep 22 bits, `u = 2⁻²²`) at a third of the FP16 rate
    /// (Markidis et al. 2018; Ootomo and Yokota 2022). Finite up to 65504,
    /// as `Fp16`.
    Fp16x3,
    /// FP64 products from exact INT8 products with INT32 accumulation, one
    /// per modulus of the Ozaki scheme II ([`ozaki`](super::ozaki)):
    /// `moduli` of them (6 to 20), or, with `None`, the fewest that match a
    /// native FP64 product's accuracy on the operands (a sample of them),
    /// and the native product where that is more than pays (20 on the CPU,
    /// 14 on the GPU). Operands with a NaN or an infinity take the native
    /// product. For `f64` only: `f32` products are native. The GPU waits
    /// for these decisions (a scan of the operands, the sample), so work
    /// that uses them is not recorded as a CUDA graph.
    Int8 { moduli: Option<u8> },
}

impl Compute {
    /// The unit roundoff of the operands, `None` for `Native` and `Int8`
    /// (which keep FP64's).
    pub fn unit_roundoff(self) -> Option<f64> {
        match self {
            Compute::Native | Compute::Int8 { .. } => None,
            Compute::Tf32 | Compute::Fp16 => Some(2f64.powi(-11)),
            Compute::Bf16 => Some(2f64.powi(-8)),
            Compute::Fp16x3 => Some(2f64.powi(-22)),
        }
    }

    /// The largest finite operand, `None` where it is FP32's.
    pub fn overflow(self) -> Option<f64> {
        match self {
            Compute::Fp16 | Compute::Fp16x3 => Some(65504.0),
            _ => None,
        }
    }

    /// `x` rounded to the operands' format, to nearest (even), as an `f32`:
    /// what the CPU backend multiplies, so that its products have the same
    /// errors as the GPU's (for `Fp16x3`, `h + 2⁻¹¹·l`, whose products keep
    /// the `2⁻²²·l_a·l_b` that the GPU drops).
    pub fn round(self, x: f32) -> f32 {
        match self {
            Compute::Native | Compute::Int8 { .. } => x,
            Compute::Fp16 => f16::from_f32(x).to_f32(),
            Compute::Fp16x3 => {
                let h = f16::from_f32(x).to_f32();
                if !h.is_finite() {
                    return h;
                }
                h + f16::from_f32((x - h) * 2048.0).to_f32() / 2048.0
            }
            Compute::Bf16 => bf16::from_f32(x).to_f32(),
            Compute::Tf32 => {
                if !x.is_finite() {
                    return x;
                }
                // Round the 23 stored bits to 10, ties to even.
                let bits = x.to_bits();
                let dropped = 13;
                let half = 1u32 << (dropped - 1);
                let lsb = (bits >> dropped) & 1;
                let rounded = bits.wrapping_add(half - 1 + lsb) & !((1u32 << dropped) - 1);
                f32::from_bits(rounded)
            }
        }
    }

    /// A short name: `native`, `tf32`, `fp16`, `bf16`, `fp16x3`, `int8`.
    pub fn name(self) -> &'static str {
        match self {
            Compute::Native => "native",
            Compute::Tf32 => "tf32",
            Compute::Fp16 => "fp16",
            Compute::Bf16 => "bf16",
            Compute::Fp16x3 => "fp16x3",
            Compute::Int8 { .. } => "int8",
        }
    }

    /// The emulation of FP64 products that `spec` names: `native` (none),
    /// `int8` (moduli chosen per product) or `int8:N` (`N` moduli, 6 to
    /// 20).
    pub fn parse_fp64(spec: &str) -> Result<Compute, String> {
        let bad = || format!("'{spec}' is not an FP64 product: use native, int8, or int8:N with N from 6 to 20");
        match spec.split_once(':') {
            None if spec == "native" => Ok(Compute::Native),
            None if spec == "int8" => Ok(Compute::Int8 { moduli: None }),
            Some(("int8", n)) => match n.parse::<u8>() {
                Ok(n) if (super::ozaki::MIN_MODULI..=super::ozaki::MODULI.len()).contains(&(n as usize)) => {
                    Ok(Compute::Int8 { moduli: Some(n) })
                }
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Compute;

    #[test]
    fn rounding_keeps_the_stated_bits() {
        // TF32 keeps 10 stored bits: a spacing of 2⁻¹⁰ at 1, ties to even.
        assert_eq!(Compute::Tf32.round(1.0 + 2f32.powi(-12) + 2f32.powi(-20)), 1.0);
        assert_eq!(Compute::Tf32.round(1.0 + 2f32.powi(-11)), 1.0);
        assert_eq!(Compute::Tf32.round(1.0 + 3.0 * 2f32.powi(-11)), 1.0 + 2f32.powi(-9));
        assert_eq!(Compute::Tf32.round(-(1.0 + 2f32.powi(-11) + 2f32.powi(-20))), -(1.0 + 2f32.powi(-10)));
        for c in [Compute::Tf32, Compute::Fp16, Compute::Bf16, Compute::Fp16x3] {
            let u = c.unit_roundoff().unwrap() as f32;
            for &v in &[1.0f32, 3.3, -0.71, 1234.567, 1.0e-3] {
                let r = c.round(v);
                assert!((r - v).abs() <= u * v.abs(), "{c:?}: {v} rounded to {r}");
                assert_eq!(c.round(r), r, "{c:?}: rounding is idempotent");
            }
        }
        assert_eq!(Compute::Fp16.round(1.0e5), f32::INFINITY);
        assert!(Compute::Tf32.round(3.0e38).is_finite());
        assert_eq!(Compute::Native.round(0.1), 0.1);
    }

    #[test]
    fn fp64_products_parse() {
        assert_eq!(Compute::parse_fp64("native"), Ok(Compute::Native));
        assert_eq!(Compute::parse_fp64("int8"), Ok(Compute::Int8 { moduli: None }));
        assert_eq!(Compute::parse_fp64("int8:14"), Ok(Compute::Int8 { moduli: Some(14) }));
        for bad in ["int8:5", "int8:21", "int8:x", "fp16", "", "int8:"] {
            let e = Compute::parse_fp64(bad).unwrap_err();
            assert!(e.contains(&format!("'{bad}'")), "{e}");
        }
    }
}
