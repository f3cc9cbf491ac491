//! What the block diagonal `D` says about `A`: by Sylvester's law of
//! inertia `A` and `D` have as many positive, negative and zero eigenvalues
//! (`P·A·Pᵀ = L·D·Lᵀ` is a congruence), and `det A = det D`.

use crate::factor::lu::Determinant;

/// The numbers of positive, negative and zero eigenvalues of a symmetric
/// matrix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inertia {
    pub positive: usize,
    pub negative: usize,
    pub zero: usize,
}

/// `D` of an LDLᵀ factorization, read back to the host: its diagonal `d`
/// and subdiagonal `e` (`e[j] ≠ 0` at the first row of each 2×2 block).
#[derive(Clone, Debug, PartialEq)]
pub struct BlockDiagonal {
    pub d: Vec<f64>,
    pub e: Vec<f64>,
}

/// A block of `D`: a 1×1 pivot, or a 2×2 block `[[a, b], [b, c]]`.
enum Pivot {
    One(f64),
    Two(f64, f64, f64),
}

impl BlockDiagonal {
    fn blocks(&self) -> impl Iterator<Item = (usize, Pivot)> + '_ {
        let n = self.d.len();
        let mut j = 0;
        std::iter::from_fn(move || {
            if j >= n {
                return None;
            }
            let at = j;
            if self.e[j] != 0.0 && j + 1 < n {
                j += 2;
                Some((at, Pivot::Two(self.d[at], self.e[at], self.d[at + 1])))
            } else {
                j += 1;
                Some((at, Pivot::One(self.d[at])))
            }
        })
    }

    /// The eigenvalues of each block, in order: a 2×2 block's two are
    /// found without cancellation (the larger from the half trace and the
    /// radius, the other as the determinant over it).
    fn eigenvalues(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.blocks().flat_map(|(j, p)| match p {
            Pivot::One(x) => vec![(j, x)],
            Pivot::Two(a, b, c) => {
                let (mean, radius) = ((a + c) / 2.0, ((a - c) / 2.0).hypot(b));
                let big = if mean >= 0.0 { mean + radius } else { mean - radius };
                let det = a * c - b * b;
                let small = if big == 0.0 { 0.0 } else { det / big };
                vec![(j, big), (j + 1, small)]
            }
        })
    }

    /// The inertia of `D` (and of `A`), counting an eigenvalue of magnitude
    /// `≤ tol` as zero.
    pub fn inertia(&self, tol: f64) -> Inertia {
        let mut i = Inertia::default();
        for (_, x) in self.eigenvalues() {
            if x.abs() <= tol {
                i.zero += 1;
            } else if x > 0.0 {
                i.positive += 1;
            } else {
                i.negative += 1;
            }
        }
        i
    }

    /// The first column (1-based) where `D` has an eigenvalue of magnitude
    /// `≤ tol`: `A` is singular to that tolerance.
    pub fn first_zero(&self, tol: f64) -> Option<usize> {
        self.eigenvalues().find(|(_, x)| x.abs() <= tol).map(|(j, _)| j + 1)
    }

    /// `det A = det D`: the product of the 1×1 pivots and of the 2×2
    /// blocks' determinants, as `mantissa · 2^exponent` whatever its size.
    pub fn determinant(&self) -> Determinant {
        let factors: Vec<f64> = self
            .blocks()
            .map(|(_, p)| match p {
                Pivot::One(x) => x,
                Pivot::Two(a, b, c) => a * c - b * b,
            })
            .collect();
        Determinant::from_diagonal(&factors, 0, 0)
    }

    /// `D` as a dense column-major `n × n` array.
    pub fn dense(&self) -> Vec<f64> {
        let n = self.d.len();
        let mut out = vec![0.0; n * n];
        for (j, p) in self.blocks() {
            match p {
                Pivot::One(x) => out[j + j * n] = x,
                Pivot::Two(a, b, c) => {
                    out[j + j * n] = a;
                    out[j + 1 + j * n] = b;
                    out[j + (j + 1) * n] = b;
                    out[j + 1 + (j + 1) * n] = c;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inertia_of_blocks() {
        // 1×1 pivots 2, −3, 0; a 2×2 block [[0, 1], [1, 0]] (eigenvalues ±1);
        // a 2×2 block [[1, 1], [1, 1]] (eigenvalues 2 and 0).
        let d =
            BlockDiagonal { d: vec![2.0, -3.0, 0.0, 0.0, 0.0, 1.0, 1.0], e: vec![0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0] };
        assert_eq!(d.inertia(0.0), Inertia { positive: 3, negative: 2, zero: 2 });
        assert_eq!(d.first_zero(0.0), Some(3));
        assert_eq!(d.determinant(), Determinant::ZERO);
        let d = BlockDiagonal { d: vec![2.0, 0.0, 0.0], e: vec![0.0, 3.0, 0.0] };
        // det = 2 · (0·0 − 9) = −18.
        let det = d.determinant();
        assert_eq!(det.mantissa * 2f64.powi(det.exponent as i32), -18.0);
        assert_eq!(d.first_zero(1e-12), None);
    }
}
