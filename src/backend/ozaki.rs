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
//! `mₜ` is the residue of `A'·B'`. The Chinese remainder theorem gives each
//! entry of `A'·B'` back from its `N` residues `rₜ` as the integer in
//! `(−P/2, P/2)` congruent to `S = Σ rₜ·Zₜ` modulo `P`, with `Zₜ =
//! yₜ·P/mₜ` and `yₜ = (P/mₜ)⁻¹ mod mₜ` (so `Zₜ < P`): `S` is summed exactly
//! in FP64 by chunks of 40 bits of the `Zₜ`, and `P·round(S/P)` taken off
//! chunk by chunk (Ozaki, Uchino and Imamura's accumulation). Then `C =
//! 2^(−sᵢ−tₗ)·(A'·B')ᵢₗ`.
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

/// Bits in a chunk of the reconstruction's constants: a residue (below
/// 2⁸) times a chunk, summed over 20 moduli, stays below 2⁵³.
const CHUNK_BITS: i32 = 40;

/// The scheme with the first `count` of [`MODULI`].
#[derive(Clone, Debug, PartialEq)]
pub struct Ozaki {
    count: usize,
    /// `log₂(P/2)`.
    log2_half_p: f64,
    /// Chunks of [`CHUNK_BITS`] bits, least significant first, that make up
    /// each `Zₜ` (`chunks` of them per modulus, modulus after modulus),
    /// then `P`, then `1/P` rounded.
    constants: Vec<f64>,
    chunks: usize,
}

impl Ozaki {
    /// The scheme with `count` moduli, 2 to 20.
    pub fn new(count: usize) -> Ozaki {
        assert!((2..=MODULI.len()).contains(&count), "the Ozaki scheme takes 2 to {} moduli", MODULI.len());
        let m = &MODULI[..count];
        let log2_p = m.iter().map(|&x| (x as f64).log2()).sum::<f64>();
        let chunks = (log2_p / CHUNK_BITS as f64).ceil() as usize;
        let product = |skip: Option<usize>| {
            let mut x = Chunks::one(chunks);
            (0..count).filter(|&t| Some(t) != skip).for_each(|t| x.mul_small(m[t] as u64));
            x
        };
        let mut constants = Vec::with_capacity((count + 1) * chunks + 1);
        for (t, &mt) in m.iter().enumerate() {
            let mut z = product(Some(t));
            let weight = inverse_mod(z.rem_small(mt as u64) as u32, mt);
            z.mul_small(weight as u64);
            constants.extend(z.0.iter().map(|&c| c as f64));
        }
        let p = product(None);
        constants.extend(p.0.iter().map(|&c| c as f64));
        constants.push(1.0 / p.to_f64());
        Ozaki { count, log2_half_p: log2_p - 1.0, constants, chunks }
    }

    pub fn count(&self) -> usize {
        self.count
    }

    pub fn moduli(&self) -> &'static [u32] {
        &MODULI[..self.count]
    }

    /// The chunks of the `Zₜ` and of `P`, and `1/P`: the reconstruction's
    /// constants, as `kernels/ozaki.cu` takes them.
    pub fn constants(&self) -> &[f64] {
        &self.constants
    }

    /// Chunks per constant: `⌈log₂P/40⌉`.
    pub fn chunks(&self) -> usize {
        self.chunks
    }

    /// The most a row of `A'` or a column of `B'` of `depth` entries may
    /// have as its 2-norm before rounding to integers: `√(P/2)`, less a
    /// margin of `2⁻²⁴` for the rounding of the computed norm and `√k/2`
    /// for the roundings of the entries (each moves by at most ½).
    pub fn radius(&self, depth: usize) -> f64 {
        (self.log2_half_p / 2.0).exp2() * (1.0 - 2f64.powi(-24)) - (depth as f64).sqrt() / 2.0
    }

    /// The integer in `(−P/2, P/2)` whose residues modulo the moduli are
    /// `residues` (each in `0..mₜ`), rounded to FP64. Every step is exact
    /// but the last sum of chunks: `Sⱼ = Σ rₜ·Zₜⱼ < 20·2⁸·2⁴⁰`; `q =
    /// round(S/P)`, at most `20·2⁸`, from an approximate `S` (the integer's
    /// distance to ±P/2, over `2⁻²⁴·P/2`, absorbs the approximation);
    /// `Sⱼ − q·Pⱼ`; carries that bring every chunk but the top one under
    /// `2³⁹`; and the chunks summed from the top in double-double.
    pub fn reconstruct(&self, residues: &[u32]) -> f64 {
        debug_assert_eq!(residues.len(), self.count);
        let c = self.chunks;
        let (z, rest) = self.constants.split_at(self.count * c);
        let (p, p_inv) = (&rest[..c], rest[c]);
        let mut x = [0.0f64; 4];
        for (t, &r) in residues.iter().enumerate() {
            for j in 0..c {
                x[j] = (r as f64).mul_add(z[t * c + j], x[j]);
            }
        }
        let radix = 2f64.powi(CHUNK_BITS);
        let approx = (0..c).rev().fold(0.0, |a, j| a * radix + x[j]);
        let q = (approx * p_inv).round_ties_even();
        for j in 0..c {
            x[j] = (-q).mul_add(p[j], x[j]);
        }
        for j in 0..c - 1 {
            let carry = (x[j] / radix).round_ties_even();
            x[j] = (-carry).mul_add(radix, x[j]);
            x[j + 1] += carry;
        }
        let (mut hi, mut lo) = (x[c - 1] * 2f64.powi(CHUNK_BITS * (c as i32 - 1)), 0.0);
        for j in (0..c - 1).rev() {
            let (sum, err) = two_sum(hi, x[j] * 2f64.powi(CHUNK_BITS * j as i32));
            (hi, lo) = two_sum(sum, lo + err);
        }
        hi + lo
    }
}

/// `(s, e)` with `s = fl(a + b)` and `s + e = a + b` exactly (Knuth).
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// A nonnegative integer in chunks of [`CHUNK_BITS`] bits, least
/// significant first: the products of moduli, which pass 2¹²⁸.
struct Chunks(Vec<u64>);

impl Chunks {
    fn one(len: usize) -> Chunks {
        let mut x = vec![0; len];
        x[0] = 1;
        Chunks(x)
    }

    /// `self·f` for `f < 2¹⁶`; the product must fit.
    fn mul_small(&mut self, f: u64) {
        let mut carry = 0;
        for c in &mut self.0 {
            let v = *c * f + carry;
            *c = v & ((1 << CHUNK_BITS) - 1);
            carry = v >> CHUNK_BITS;
        }
        assert_eq!(carry, 0, "the product of the moduli outgrew its chunks");
    }

    fn rem_small(&self, m: u64) -> u64 {
        self.0.iter().rev().fold(0, |r, &c| ((r << CHUNK_BITS) + c) % m)
    }

    fn to_f64(&self) -> f64 {
        self.0.iter().rev().fold(0.0, |a, &c| a * 2f64.powi(CHUNK_BITS) + c as f64)
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
        // Integers near ±P/2 (within the margin that `radius` keeps) and
        // small ones, for several counts, where the integer fits in i128
        // (whose conversion to f64 rounds correctly); and the constants of
        // every count fit their chunks.
        for count in [2, 6, 8, 13, 14, 16] {
            let oz = Ozaki::new(count);
            let p: i128 = oz.moduli().iter().map(|&m| m as i128).product();
            let edge = p / 2 - (p >> 25);
            let cases = [0, 1, -1, 255, -256, 123_456_789, edge, -edge, p / 3, -p / 7, (1 << 100) + 1];
            for &v in cases.iter().filter(|v| v.abs() < p / 2) {
                let residues: Vec<u32> = oz.moduli().iter().map(|&m| v.rem_euclid(m as i128) as u32).collect();
                assert_eq!(oz.reconstruct(&residues), v as f64, "count {count}: {v}");
            }
        }
        for count in 2..=MODULI.len() {
            assert_eq!(Ozaki::new(count).chunks(), (Ozaki::new(count).log2_half_p + 1.0).div_euclid(40.0) as usize + 1);
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
