//! The middle factor of Aasen's factorization, a symmetric tridiagonal `T`,
//! on the host: its inertia and determinant through Bunch's block LDLᵀ
//! factorization `T = M·D·Mᵀ` (Bunch 1974), which keeps the tridiagonal
//! structure (no interchanges, 1×1 and 2×2 pivots) and is backward stable
//! (Higham 1999). `O(n)`: the host reads `T` once after the factorization.

use super::BlockDiagonal;

/// A symmetric tridiagonal matrix: diagonal `d` and subdiagonal `e`
/// (`e[j] = T(j + 1, j)`, `e[n − 1]` unused).
#[derive(Clone, Debug, PartialEq)]
pub struct SymTridiagonal {
    pub d: Vec<f64>,
    pub e: Vec<f64>,
}

/// Bunch's constant `α = (√5 − 1)/2`, which bounds the growth of `D`.
const ALPHA: f64 = 0.618_033_988_749_894_9;

impl SymTridiagonal {
    /// `D` of `T = M·D·Mᵀ`, a 1×1 pivot `T(j, j)` (as updated) when
    /// `σ·|T(j, j)| ≥ α·T(j + 1, j)²`, `σ = max|tᵢⱼ|`, else the 2×2 block on
    /// rows `j, j + 1`. `T` and `D` are congruent: they have one inertia,
    /// and `det T = det D`.
    pub fn block_diagonal(&self) -> BlockDiagonal {
        let n = self.d.len();
        let e = |j: usize| if j + 1 < n { self.e[j] } else { 0.0 };
        let sigma = self.d.iter().chain(&self.e[..n.saturating_sub(1)]).fold(0.0f64, |m, x| m.max(x.abs()));
        let (mut d, mut off) = (vec![0.0; n], vec![0.0; n]);
        // The leading entry of the trailing matrix, updated by the last pivot.
        let mut lead = self.d.first().copied().unwrap_or(0.0);
        let mut j = 0;
        while j < n {
            let ej = e(j);
            if j + 1 == n || sigma * lead.abs() >= ALPHA * ej * ej {
                d[j] = lead;
                lead = if j + 1 < n { self.d[j + 1] - if ej == 0.0 { 0.0 } else { ej * (ej / lead) } } else { 0.0 };
                j += 1;
            } else {
                // [[lead, ej], [ej, d₁]]: its determinant is negative,
                // |lead·d₁| ≤ σ·|lead| < α·ej², so never zero.
                let d1 = self.d[j + 1];
                (d[j], off[j], d[j + 1]) = (lead, ej, d1);
                let det = lead * d1 - ej * ej;
                if j + 2 < n {
                    let e1 = e(j + 1);
                    lead = self.d[j + 2] - if e1 == 0.0 { 0.0 } else { e1 * (e1 * lead / det) };
                }
                j += 2;
            }
        }
        BlockDiagonal { d, e: off }
    }

    /// `T` as a dense column-major `n × n` array.
    pub fn dense(&self) -> Vec<f64> {
        let n = self.d.len();
        let mut out = vec![0.0; n * n];
        for j in 0..n {
            out[j + j * n] = self.d[j];
            if j + 1 < n {
                out[j + 1 + j * n] = self.e[j];
                out[j + (j + 1) * n] = self.e[j];
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::factor::ldlt::Inertia;

    /// Eigenvalues of a small dense symmetric matrix by Jacobi rotations:
    /// an independent reference for the inertia.
    fn eigenvalues(mut a: Vec<f64>, n: usize) -> Vec<f64> {
        for _ in 0..100 {
            for p in 0..n {
                for q in p + 1..n {
                    let apq = a[p + q * n];
                    if apq.abs() < 1e-300 {
                        continue;
                    }
                    let theta = (a[q + q * n] - a[p + p * n]) / (2.0 * apq);
                    let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                    let t = if theta == 0.0 { 1.0 } else { t };
                    let (c, s) = (1.0 / (t * t + 1.0).sqrt(), t / (t * t + 1.0).sqrt());
                    for k in 0..n {
                        let (akp, akq) = (a[k + p * n], a[k + q * n]);
                        a[k + p * n] = c * akp - s * akq;
                        a[k + q * n] = s * akp + c * akq;
                    }
                    for k in 0..n {
                        let (apk, aqk) = (a[p + k * n], a[q + k * n]);
                        a[p + k * n] = c * apk - s * aqk;
                        a[q + k * n] = s * apk + c * aqk;
                    }
                }
            }
        }
        (0..n).map(|i| a[i + i * n]).collect()
    }

    #[test]
    fn inertia_and_determinant_of_tridiagonals() {
        // Zero diagonals (2×2 pivots throughout), a definite one, mixed
        // signs, a decoupled zero block, and a singular one.
        let cases = [
            SymTridiagonal { d: vec![0.0; 5], e: vec![1.0, 2.0, 3.0, 4.0, 0.0] },
            SymTridiagonal { d: vec![4.0, 4.0, 4.0, 4.0], e: vec![1.0, 1.0, 1.0, 0.0] },
            SymTridiagonal { d: vec![1e-9, -3.0, 2.0, 0.5, -7.0, 1.0], e: vec![2.0, 1e-3, -5.0, 0.25, 3.0, 0.0] },
            SymTridiagonal { d: vec![1.0, 0.0, 0.0, 2.0], e: vec![0.0, 0.0, 0.0, 0.0] },
            SymTridiagonal { d: vec![1.0, 1.0, 1.0], e: vec![1.0, 1.0, 0.0] },
        ];
        for t in cases {
            let n = t.d.len();
            let lambda = eigenvalues(t.dense(), n);
            let tol = 1e-12;
            let mut expected = Inertia::default();
            for &x in &lambda {
                if x.abs() <= tol {
                    expected.zero += 1;
                } else if x > 0.0 {
                    expected.positive += 1;
                } else {
                    expected.negative += 1;
                }
            }
            let d = t.block_diagonal();
            assert_eq!(d.inertia(tol), expected, "{t:?}: eigenvalues {lambda:?}");
            // det T = Π λ, relatively to 1e-12 (these are well scaled).
            let det = d.determinant();
            let got = det.mantissa * 2f64.powi(det.exponent as i32);
            let want: f64 = lambda.iter().product();
            assert!((got - want).abs() <= 1e-10 * want.abs().max(1e-300) + 1e-12, "{t:?}: det {got} vs Π λ {want}");
        }
    }
}
