//! FP64 products by the Ozaki scheme II on the CPU: the numerics of the
//! GPU's emulation, for testing it and for choosing it, not for speed. The
//! products of residues are taken as FP64 products, which are exact: every
//! partial sum is an integer of at most `k·2¹⁴ < 2⁵³`.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};

use crate::Scalar;
use crate::backend::ozaki::{self, Ozaki, SAMPLE};

/// `op(A)·op(B)` (`a` and `b` with the operations applied), emulated with
/// `moduli` moduli, or as many as the operands need when `None`. `None`
/// back where the native product is the one to take: an operand has a NaN
/// or an infinity (whose IEEE propagation the integers cannot carry), or
/// matching FP64's accuracy would take more than every modulus.
pub(super) fn product<T: Scalar>(par: Par, moduli: Option<u8>, a: MatRef<'_, T>, b: MatRef<'_, T>) -> Option<Mat<f64>> {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    let a = Mat::from_fn(m, k, |i, j| a[(i, j)].to_f64());
    let b = Mat::from_fn(k, n, |i, j| b[(i, j)].to_f64());
    let finite = |x: &Mat<f64>| (0..x.ncols()).all(|j| x.col(j).iter().all(|v| v.is_finite()));
    if !finite(&a) || !finite(&b) {
        return None;
    }
    let count = match moduli {
        Some(count) => count as usize,
        None => ozaki::moduli_for(kappa(par, a.as_ref(), b.as_ref()), ozaki::MODULI.len())?,
    };
    let oz = Ozaki::new(count);
    let radius = oz.radius(k);
    let s: Vec<i32> =
        (0..m).map(|i| ozaki::exponent(norm2(&a.row(i).iter().copied().collect::<Vec<_>>()), radius)).collect();
    let t: Vec<i32> =
        (0..n).map(|l| ozaki::exponent(norm2(&b.col(l).iter().copied().collect::<Vec<_>>()), radius)).collect();
    let ai = Mat::from_fn(m, k, |i, j| ozaki::to_integer(a[(i, j)], s[i]));
    let bi = Mat::from_fn(k, n, |j, l| ozaki::to_integer(b[(j, l)], t[l]));

    // The residues of A'·B', modulus by modulus.
    let mut residues = vec![0u32; m * n * count];
    let mut ct = Mat::<f64>::zeros(m, n);
    for (index, &mt) in oz.moduli().iter().enumerate() {
        let at = Mat::from_fn(m, k, |i, j| ozaki::residue(ai[(i, j)], mt) as f64);
        let bt = Mat::from_fn(k, n, |j, l| ozaki::residue(bi[(j, l)], mt) as f64);
        matmul(ct.as_mut(), Accum::Replace, at.as_ref(), bt.as_ref(), 1.0, par);
        for l in 0..n {
            for i in 0..m {
                residues[(i + l * m) * count + index] = ct[(i, l)].rem_euclid(mt as f64) as u32;
            }
        }
    }
    Some(Mat::from_fn(m, n, |i, l| {
        let entry = &residues[(i + l * m) * count..][..count];
        ozaki::ldexp(oz.reconstruct(entry), -(s[i] + t[l]))
    }))
}

/// The 2-norm, its terms scaled by the power of two nearest the largest
/// so that the squares neither overflow nor underflow.
fn norm2(x: &[f64]) -> f64 {
    let top = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if top == 0.0 {
        return 0.0;
    }
    let e = ozaki::exponent(top, 1.0);
    ozaki::ldexp(x.iter().map(|&v| ozaki::ldexp(v, e).powi(2)).sum::<f64>().sqrt(), -e)
}

/// [`ozaki::kappa`] on a sample of `a`'s rows and `b`'s columns.
fn kappa(par: Par, a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    let (rows, cols) = (ozaki::sample(a.nrows(), SAMPLE), ozaki::sample(b.ncols(), SAMPLE));
    let k = a.ncols();
    let normalized = |v: Vec<f64>| {
        let top = v.iter().fold(0.0f64, |x, y| x.max(y.abs()));
        v.into_iter().map(|x| if top > 0.0 { x.abs() / top } else { 0.0 }).collect::<Vec<_>>()
    };
    let mut w = Mat::<f64>::zeros(k, rows.len() + cols.len());
    for (p, &i) in rows.iter().enumerate() {
        for (j, x) in normalized((0..k).map(|j| a[(i, j)]).collect()).into_iter().enumerate() {
            w[(j, p)] = x;
        }
    }
    for (p, &l) in cols.iter().enumerate() {
        for (j, x) in normalized((0..k).map(|j| b[(j, l)]).collect()).into_iter().enumerate() {
            w[(j, rows.len() + p)] = x;
        }
    }
    let order = w.ncols();
    let mut g = Mat::<f64>::zeros(order, order);
    matmul(g.as_mut(), Accum::Replace, w.transpose(), w.as_ref(), 1.0, par);
    let gram: Vec<f64> = (0..order).flat_map(|j| (0..order).map(move |i| (i, j))).map(|(i, j)| g[(i, j)]).collect();
    ozaki::kappa(&gram, rows.len(), cols.len())
}
