//! FP64 matrix products from exact INT8 products: the Ozaki scheme II
//! (Ozaki, Uchino and Imamura 2025).
//!
//! Row `i` of `op(A)` is scaled by a power of two `2^sᵢ` and column `l` of
//! `op(B)` by `2^tₗ`, and both are rounded to integers, `A'` and `B'`, with
//! `‖a'ᵢ‖₂·‖b'ₗ‖₂ < P/2` for `P = m₁·m₂·…·m_N`, the product of `N` pairwise
//! coprime moduli of at most 256. By Cauchy–Schwarz every entry of `A'·B'`
//! then lies in `(−P/2, P/2)`, so it is determined by its residues modulo
//! the `mₜ`. For each modulus the residues of `A'` and `B'` (balanced, in
//! −128…127) are INT8 matrices, and their product with INT32 accumulation is
//! exact while the depth stays under 2¹⁷ ([`MAX_DEPTH`]); its residue modulo
//! `mₜ` is the residue of `A'·B'`. The Chinese remainder theorem, in Garner's
//! mixed-radix form with balanced digits, gives each entry of `A'·B'` back
//! from its `N` residues, and `C = 2^(−sᵢ−tₗ)·(A'·B')ᵢₗ`.
//!
//! The only errors are the roundings of `A` and `B` to integers and the last
//! rounding of each entry: `|Ĉᵢₗ − Cᵢₗ| ≲ ‖aᵢ‖₂·‖bₗ‖₂/R + u·|Cᵢₗ|` with
//! `R = √(P/2)`. Native FP64 products err by a few `u·(|A|·|B|)ᵢₗ`, so the
//! emulation matches them when `R ≳ κ/u` for `κ = ‖aᵢ‖₂·‖bₗ‖₂/(|aᵢ|·|bₗ|)`,
//! which is about 4/3 for entries of one magnitude and grows with the spread
//! of their exponents; [`moduli_for`] picks `N` from `κ` on a sample of
//! rows and columns. Each modulus costs one INT8 product, so the scheme pays
//! where the INT8 rate is more than `N` times the FP64 rate.
//!
//! Both backends share what is here: the moduli, the scaling exponents, the
//! residues and the reconstruction; `kernels/ozaki.cu` repeats them on the
//! GPU operation for operation (its 2-norms sum in another order).

use crate::scalar::dd::Dd;

/// Pairwise coprime moduli, largest first: `256 = 2⁸`, `255 = 3·5·17`,
/// `253 = 11·23`, `247 = 13·19`, `217 = 7·31`, and primes.
pub const MODULI: [u32; 20] =
    [256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211, 199, 197, 193, 191, 181, 179, 173];

/// The deepest exact INT8 product: `k·128² < 2³¹`. Deeper products are
/// taken in chunks whose residues are added.
pub const MAX_DEPTH: usize = 131_056;

/// The smallest number of moduli [`moduli_for`] takes: below it the
/// integers keep fewer bits than FP32.
pub const MIN_MODULI: usize = 6;

/// The scheme with the first `count` of [`MODULI`].
#[derive(Clone, Debug, PartialEq)]
pub struct Ozaki {
    count: usize,
    /// `log₂(P/2)`.
    log2_half_p: f64,
    /// `inverses[t·(t−1)/2 + s] = mₛ⁻¹ mod mₜ` for `s < t`: Garner's
    /// constants.
    inverses: Vec<u32>,
}

impl Ozaki {
    /// The scheme with `count` moduli, 2 to 20.
    pub fn new(count: usize) -> Ozaki {
        assert!((2..=MODULI.len()).contains(&count), "the Ozaki scheme takes 2 to {} moduli", MODULI.len());
        let m = &MODULI[..count];
        let log2_half_p = m.iter().map(|&x| (x as f64).log2()).sum::<f64>() - 1.0;
        let mut inverses = Vec::with_capacity(count * (count - 1) / 2);
        for t in 1..count {
            for s in 0..t {
                inverses.push(inverse_mod(m[s] % m[t], m[t]));
            }
        }
        Ozaki { count, log2_half_p, inverses }
    }

    pub fn count(&self) -> usize {
        self.count
    }

    pub fn moduli(&self) -> &'static [u32] {
        &MODULI[..self.count]
    }

    /// Garner's constants, `mₛ⁻¹ mod mₜ` for `s < t`, ordered by `t`, then
    /// `s`.
    pub fn inverses(&self) -> &[u32] {
        &self.inverses
    }

    /// The most a row of `A'` or a column of `B'` of `depth` entries may
    /// have as its 2-norm before rounding to integers: `√(P/2)`, less a
    /// margin of `2⁻²⁴` for the rounding of the computed norm and `√k/2`
    /// for the roundings of the entries (each moves by at most ½).
    pub fn radius(&self, depth: usize) -> f64 {
        (self.log2_half_p / 2.0).exp2() * (1.0 - 2f64.powi(-24)) - (depth as f64).sqrt() / 2.0
    }

    /// `(hi, lo)` of the balanced mixed-radix digits of the integer whose
    /// residues modulo the moduli are `residues` (each in `0..mₜ`), as a
    /// double-double: the integer in `(−P/2, P/2)` with those residues,
    /// to about 106 bits.
    pub fn reconstruct(&self, residues: &[u32]) -> Dd {
        debug_assert_eq!(residues.len(), self.count);
        let m = self.moduli();
        let mut digits = [0u32; MODULI.len()];
        for t in 0..self.count {
            let mt = m[t];
            let mut x = residues[t];
            let base = t * t.saturating_sub(1) / 2;
            for (s, &d) in digits[..t].iter().enumerate() {
                x = (x + mt - d % mt) % mt * self.inverses[base + s] % mt;
            }
            digits[t] = x;
        }
        // Balanced digits, `−mₜ/2 ≤ dₜ < mₜ/2`: the final carry is the `P`
        // that a negative integer's residues add.
        let mut balanced = [0i32; MODULI.len()];
        let mut carry = 0;
        for t in 0..self.count {
            let d = (digits[t] + carry) as i32;
            (balanced[t], carry) = if d > (m[t] as i32 - 1) / 2 { (d - m[t] as i32, 1) } else { (d, 0) };
        }
        // Horner from the most significant digit, in double-double.
        let mut x = Dd::new(balanced[self.count - 1] as f64);
        for t in (0..self.count - 1).rev() {
            x = x.mul_f64(m[t] as f64).add_f64(balanced[t] as f64);
        }
        x
    }
}

/// `Err` for a count of moduli outside [`MIN_MODULI`]`..=20`.
pub fn check_count(moduli: Option<u8>) -> crate::Result<()> {
    match moduli {
        Some(n) if !(MIN_MODULI..=MODULI.len()).contains(&(n as usize)) => Err(crate::Error::InvalidArgument(format!(
            "the Ozaki scheme takes {MIN_MODULI} to {} moduli, not {n}",
            MODULI.len()
        ))),
        _ => Ok(()),
    }
}

/// `x⁻¹ mod m`, for `x` coprime to `m` (extended Euclid).
fn inverse_mod(x: u32, m: u32) -> u32 {
    let (mut r0, mut r1) = (m as i64, x as i64);
    let (mut t0, mut t1) = (0i64, 1i64);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (t0, t1) = (t1, t0 - q * t1);
    }
    assert_eq!(r0, 1, "{x} has no inverse modulo {m}");
    t0.rem_euclid(m as i64) as u32
}

/// `x·2^e`, exact wherever the result is a normal number, for any `e`
/// (the power itself may be out of FP64's range).
pub fn ldexp(mut x: f64, mut e: i32) -> f64 {
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    x * 2f64.powi(e)
}

/// The exponent `s` with `norm·2^s ≤ radius < norm·2^(s+1)`, by comparing
/// significands (no logarithm to round); 0 for a zero norm.
pub fn exponent(norm: f64, radius: f64) -> i32 {
    if norm == 0.0 {
        return 0;
    }
    let (fr, er) = frexp(radius);
    let (fn_, en) = frexp(norm);
    er - en - (fn_ > fr) as i32
}

/// `x = f·2^e` with `f` in `[1, 2)`, for finite positive `x` (subnormals
/// included).
fn frexp(x: f64) -> (f64, i32) {
    debug_assert!(x > 0.0 && x.is_finite());
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        let (f, e) = frexp(x * 2f64.powi(64));
        return (f, e - 64);
    }
    (f64::from_bits((bits & !(0x7ffu64 << 52)) | (1023u64 << 52)), biased - 1023)
}

/// `x` scaled by `2^s` and rounded to the nearest integer (ties to even),
/// as an `f64`: an entry of `A'` or `B'`.
pub fn to_integer(x: f64, s: i32) -> f64 {
    ldexp(x, s).round_ties_even()
}

/// The balanced residue of the integer-valued `x` modulo `m`: in
/// `−⌊m/2⌋ … m−1−⌊m/2⌋`, so −128…127 for 256 and −127…127 for odd
/// moduli. `fmod` is exact, so this holds for any integer-valued `f64`.
pub fn residue(x: f64, m: u32) -> i8 {
    let mut r = x % m as f64;
    let half = (m / 2) as f64;
    if r > m as f64 - 1.0 - half {
        r -= m as f64;
    } else if r < -half {
        r += m as f64;
    }
    r as i8
}

/// The fewest moduli with which the emulated product errs no more than a
/// native FP64 product, for operands whose rows and columns have the ratio
/// `kappa` = max `‖aᵢ‖₂·‖bₗ‖₂/(|aᵢ|·|bₗ|)`, or `None` where more than
/// `limit` would be needed (then the native product is the better one).
///
/// The emulation's error in entry `(i, l)` is about `0.9·‖aᵢ‖₂·‖bₗ‖₂/R`
/// (rounding errors uniform in ±½, root-sum-square), its largest over a
/// matrix a few times that; native products' largest is measured at a few
/// `u·(|A|·|B|)ᵢₗ`. So `R = κ/(τ·u)`, with `τ` set by measuring both.
pub fn moduli_for(kappa: f64, limit: usize) -> Option<usize> {
    const TAU: f64 = 0.5;
    if !kappa.is_finite() {
        return None;
    }
    let log2_radius = (kappa.max(1.0) / TAU).log2() + 53.0;
    (MIN_MODULI..=limit.min(MODULI.len())).find(|&count| Ozaki::new(count).log2_half_p / 2.0 >= log2_radius)
}

/// Rows of `op(A)` and columns of `op(B)` that [`kappa`] samples, at most.
pub const SAMPLE: usize = 64;

/// `count` indices spread evenly over `0..len` (all of them if fewer).
pub fn sample(len: usize, count: usize) -> Vec<usize> {
    if len <= count {
        return (0..len).collect();
    }
    (0..count).map(|j| (2 * j + 1) * len / (2 * count)).collect()
}

/// `κ = max ‖aᵢ‖₂·‖bₗ‖₂/(|aᵢ|·|bₗ|)` over sampled rows `aᵢ` of `op(A)`
/// and columns `bₗ` of `op(B)`, from `G = Wᵀ·W` (`gram`, column-major,
/// `ra + cb` square), where the columns of `W` are the `ra` rows' and then
/// the `cb` columns' absolute values, each divided by its largest (which
/// leaves `κ` as it is and keeps the squares in range). Pairs with
/// `|aᵢ|·|bₗ| = 0` are skipped: their product is an exact zero either way.
pub fn kappa(gram: &[f64], ra: usize, cb: usize) -> f64 {
    let order = ra + cb;
    debug_assert_eq!(gram.len(), order * order);
    let mut worst = 1.0f64;
    for l in 0..cb {
        let bl = gram[(ra + l) * (order + 1)];
        for i in 0..ra {
            let cross = gram[i + (ra + l) * order];
            if cross > 0.0 {
                worst = worst.max((gram[i * (order + 1)] * bl).sqrt() / cross);
            }
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moduli_are_pairwise_coprime() {
        fn gcd(a: u32, b: u32) -> u32 {
            if b == 0 { a } else { gcd(b, a % b) }
        }
        for (i, &a) in MODULI.iter().enumerate() {
            for &b in &MODULI[i + 1..] {
                assert_eq!(gcd(a, b), 1, "{a} and {b}");
            }
        }
        assert!(MODULI.windows(2).all(|w| w[0] > w[1]));
        assert!((MAX_DEPTH as u64) * 128 * 128 < 1 << 31 && MAX_DEPTH.is_multiple_of(16));
    }

    #[test]
    fn residues_are_balanced_and_exact() {
        for &m in &[256u32, 255, 173] {
            for x in [0.0, 1.0, -1.0, 127.0, 128.0, -128.0, -129.0, 1e15 + 7.0, -(2f64.powi(70) + 2f64.powi(20))] {
                let r = residue(x, m) as i64;
                assert!(r >= -((m / 2) as i64) && r <= (m - 1 - m / 2) as i64, "{x} mod {m} = {r}");
                // x − r is a multiple of m, checked exactly in integers.
                let xi = x as i128;
                assert_eq!((xi - r as i128).rem_euclid(m as i128), 0, "{x} mod {m} = {r}");
            }
        }
    }

    #[test]
    fn reconstruction_inverts_the_residues() {
        // Integers near ±P/2 and small ones, for several counts: exact where
        // the integer fits in i128 (and so in 106 bits for the comparison).
        for count in [2, 6, 8, 13, 14, 16] {
            let oz = Ozaki::new(count);
            let p: i128 = oz.moduli().iter().map(|&m| m as i128).product();
            let cases = [0, 1, -1, 255, -256, 123_456_789, p / 2 - 1, -(p / 2 - 1), p / 3, -p / 7];
            for &v in cases.iter().filter(|v| v.abs() < p / 2) {
                let residues: Vec<u32> = oz.moduli().iter().map(|&m| v.rem_euclid(m as i128) as u32).collect();
                let x = oz.reconstruct(&residues);
                let back = x.hi as i128 + x.lo as i128;
                let tolerance = (v.unsigned_abs() >> 104) as i128;
                assert!((back - v).abs() <= tolerance, "count {count}: {v} came back as {back}");
            }
        }
    }

    #[test]
    fn exponents_put_the_norm_under_the_radius() {
        let radius = Ozaki::new(14).radius(1000);
        for norm in [1.0, 0.75, 3.0e-300, 5e-324, 1.7e308, 123.456, 2f64.powi(52)] {
            let s = exponent(norm, radius);
            let scaled = ldexp(norm, s);
            assert!(scaled <= radius && 2.0 * scaled > radius, "norm {norm}: 2^{s} gives {scaled}");
        }
        assert_eq!(exponent(0.0, radius), 0);
        assert_eq!(ldexp(3.0, 2000), f64::INFINITY);
        assert_eq!(ldexp(ldexp(1.5, -1070), 1070), 1.5);
    }

    #[test]
    fn kappa_is_the_worst_sampled_ratio() {
        // Rows a = (1, 1), b = (1, 0); a column c = (1, 1): κ(a, c) = 1 and
        // κ(b, c) = √2, after each is divided by its largest.
        let w = [[1.0, 1.0], [1.0, 0.0], [1.0, 1.0]];
        let g: Vec<f64> = (0..9).map(|x| (0..2).map(|p| w[x % 3][p] * w[x / 3][p]).sum()).collect();
        assert!((kappa(&g, 2, 1) - 2f64.sqrt()).abs() < 1e-15);
        assert_eq!(sample(5, 64), vec![0, 1, 2, 3, 4]);
        assert_eq!(sample(100, 4), vec![12, 37, 62, 87]);
    }

    #[test]
    fn the_count_grows_with_the_spread_of_exponents() {
        let uniform = moduli_for(4.0 / 3.0, 20).unwrap();
        let wide = moduli_for(1e4, 20).unwrap();
        assert!((12..=16).contains(&uniform), "{uniform}");
        assert!(wide > uniform);
        assert_eq!(moduli_for(1e30, 20), None);
        assert_eq!(moduli_for(f64::INFINITY, 20), None);
        assert!(moduli_for(4.0 / 3.0, uniform - 1).is_none());
    }
}
