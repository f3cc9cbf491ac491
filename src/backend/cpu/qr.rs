//! The CPU's Householder panel: `dgeqr2` and `dlarft` as plain loops. Panels
//! are a few dozen columns wide, so this is a small share of a blocked QR,
//! whose trailing updates go to faer's `gemm` and `trmm`.

use faer::MatMut;

use crate::Scalar;

/// `√(Σ xᵢ²)` without overflow or harmful underflow: scaled by the largest
/// magnitude, as `dnrm2` does.
fn norm2<T: Scalar>(x: impl Iterator<Item = T> + Clone) -> T {
    let scale = x.clone().fold(T::ZERO, |m, v| Scalar::max(m, v.abs()));
    if scale == T::ZERO || !Scalar::is_finite(scale) {
        return scale;
    }
    let sum = x.fold(T::ZERO, |s, v| {
        let r = v / scale;
        s + r * r
    });
    scale * sum.sqrt()
}

/// `dgeqr2` + `dlarft` on the `m × k` panel `a`, `T` into the `k × k` `t`.
pub(super) fn householder<T: Scalar>(mut a: MatMut<'_, T>, mut t: MatMut<'_, T>) {
    let (m, k) = a.shape();
    for j in 0..k {
        // The reflector that zeroes a(j+1.., j) (dlarfg).
        let alpha = a[(j, j)];
        let xnorm = norm2((j + 1..m).map(|i| a[(i, j)]));
        let tau = if xnorm == T::ZERO {
            T::ZERO
        } else {
            let h = norm2([alpha, xnorm].into_iter());
            let beta = if alpha >= T::ZERO { -h } else { h };
            let d = alpha - beta;
            for i in j + 1..m {
                a[(i, j)] /= d;
            }
            a[(j, j)] = beta;
            (beta - alpha) / beta
        };
        // Apply Hⱼ = I − τ·v·vᵀ to the rest of the panel.
        if tau != T::ZERO {
            for c in j + 1..k {
                let mut w = a[(j, c)];
                for i in j + 1..m {
                    w += a[(i, j)] * a[(i, c)];
                }
                let tw = tau * w;
                a[(j, c)] -= tw;
                for i in j + 1..m {
                    let v = a[(i, j)];
                    a[(i, c)] -= tw * v;
                }
            }
        }
        // Column j of T (dlarft): T(0..j, j) = −τ·T(0..j, 0..j)·V(:, 0..j)ᵀ·vⱼ.
        for i in 0..k {
            if i > j {
                t[(i, j)] = T::ZERO;
            }
        }
        t[(j, j)] = tau;
        if j == 0 {
            continue;
        }
        let mut w = vec![T::ZERO; j];
        if tau != T::ZERO {
            for (p, wp) in w.iter_mut().enumerate() {
                // vⱼ is 0 above row j and 1 at row j.
                let mut s = a[(j, p)];
                for i in j + 1..m {
                    s += a[(i, p)] * a[(i, j)];
                }
                *wp = s;
            }
        }
        for p in 0..j {
            let mut s = T::ZERO;
            for (q, &wq) in w.iter().enumerate().skip(p) {
                s += t[(p, q)] * wq;
            }
            t[(p, j)] = -tau * s;
        }
    }
}
