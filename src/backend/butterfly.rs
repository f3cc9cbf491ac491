//! Random butterflies of depth two (Parker 1995): `W = W₂·W₁` of order `n`,
//! each level mixing pairs of entries with random scales, so that `Uᵀ·A·V`
//! needs no pivoting in Gaussian elimination with high probability
//! (Baboulin, Dongarra, Herrmann and Tomov 2013). Both levels act within
//! quads `{g, g + m, g + 2m, g + 3m}`, `m = ⌈n/4⌉`: `W₁` on the pairs of
//! members (0, 2), (1, 3), `W₂` on (0, 1), (2, 3). A pair `(p, q)` becomes
//! `((r_p·x_p + r_q·x_q)/√2, (r_p·x_p − r_q·x_q)/√2)`; a member whose partner
//! is past `n` is only scaled, `r_p·x_p`. The scales are `exp(u/20)` for `u`
//! the counter-based [`random::uniform`] of `(level, i)`, the same bits on
//! every backend (`kernels/butterfly.cu`).

use super::random;

/// The random scale of index `i` at `level` (0 for `W₁`, 1 for `W₂`), in
/// `[e^(−1/20), e^(1/20)]`: close to 1, so `W` is well conditioned.
pub fn scale(key: u64, level: usize, i: usize) -> f64 {
    (random::uniform(key, level, i) / 20.0).exp()
}

/// `Q(s, t) = W(g + m·s, g + m·t)` for quad `g` of the butterfly of order
/// `n` of `key`; rows and columns of absent members are zero.
pub fn quad(key: u64, n: usize, g: usize) -> [[f64; 4]; 4] {
    let m = n.div_ceil(4);
    let present: [bool; 4] = std::array::from_fn(|s| g + m * s < n);
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let level = |l: usize, pairs: [(usize, usize); 2]| {
        let mut w = [[0.0; 4]; 4];
        for (p, o) in pairs {
            if !present[p] {
                continue;
            }
            let rp = scale(key, l, g + m * p);
            if !present[o] {
                w[p][p] = rp;
                continue;
            }
            let ro = scale(key, l, g + m * o);
            w[p][p] = h * rp;
            w[p][o] = h * ro;
            w[o][p] = h * rp;
            w[o][o] = -h * ro;
        }
        w
    };
    let (w1, w2) = (level(0, [(0, 2), (1, 3)]), level(1, [(0, 1), (2, 3)]));
    std::array::from_fn(|s| std::array::from_fn(|t| (0..4).map(|k| w2[s][k] * w1[k][t]).sum()))
}
