//! Weighted linear least squares, solved stably: `min ‖diag(w)·(b − A·x)‖₂`
//! for `A` of `m × n`, `m ≥ n` (rows are observations).
//!
//! Normal equations square the condition number; this path never forms
//! `AᵀA`. It factors `Ã = diag(w)·A·S` by Householder QR on the backend,
//! where `S` scales every column to unit norm by a power of two (exact, and
//! often many orders of magnitude off the condition number of a monomial
//! design), and then refines the solution of the augmented system
//!
//! ```text
//! [ I   Ã ] [r]   [b̃]        b̃ = diag(w)·b,  x = S·y
//! [ Ãᵀ  0 ] [y] = [0]
//! ```
//!
//! (Björck's refinement): residuals `f = b̃ − r − Ã·y` and `g = −Ãᵀ·r` in
//! double-double on the host from the original data, corrections from the
//! QR factors (`h = R⁻ᵀ·g`, `d = Qᵀ·f`, `δy = R⁻¹·(d₁ − h)`,
//! `δr = Q·[h; d₂]`). Because the residuals are exact to about 106 bits, the
//! iteration converges to the solution of the problem as given, to the
//! working precision, whenever `κ(Ã)·u` is safely below 1 — also when the
//! residual is large, where plain QR loses `κ²·u`. Designs too close to
//! rank deficient for that are refused with [`Error::RankDeficient`].
//!
//! The first iteration, from `r = 0, y = 0`, is the plain QR solution; the
//! iterations counted are the corrections after it.

use crate::backend::{Backend, Block, Diag, Op, Side, View, ViewMut};
use crate::factor::qr::{self, QrParams};
use crate::layout::Uplo;
use crate::scalar::dd::{Dd, dot};
use crate::solve::check;
use crate::{Error, Result, Scalar};

/// Tuning of [`lstsq`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LstsqParams {
    /// Most refinement steps after the initial solve.
    pub max_iterations: usize,
    /// Designs whose estimated condition (after weighting and column
    /// equilibration) exceeds `rank_tolerance / u` of the factorization's
    /// precision are rank deficient for this method; `R`'s diagonal entries
    /// below `u / rank_tolerance` relative to the largest name the column.
    pub rank_tolerance: f64,
    pub qr: QrParams,
}

impl Default for LstsqParams {
    fn default() -> Self {
        // 1e-2/u: refinement contracts by about κ·u per step, so each step
        // still gains two digits at the limit.
        LstsqParams { max_iterations: 30, rank_tolerance: crate::Qr::<f64>::RANK_TOLERANCE, qr: QrParams::default() }
    }
}

/// The least-squares solution and what is known about it. All in `f64`.
#[derive(Clone, Debug, PartialEq)]
pub struct LstsqOutcome {
    /// The coefficients (`n`).
    pub x: Vec<f64>,
    /// `‖diag(w)·(b − A·x)‖₂`, computed in double-double.
    pub residual_norm: f64,
    /// `σ·√((ÃᵀÃ)⁻¹)ⱼⱼ` scaled back to `x`, with `σ² = ‖residual‖²/(m − n)`;
    /// `None` when `m = n` (no degrees of freedom).
    pub standard_errors: Option<Vec<f64>>,
    /// Estimated 1-norm condition number of the weighted, column-equilibrated
    /// design (that of `R`).
    pub condition: f64,
    /// Refinement steps after the initial QR solve.
    pub iterations: usize,
    /// `‖δx‖∞/‖x‖∞` of the last step.
    pub last_correction: f64,
}

/// Checks the problem: shapes, finite data, weights ≥ 0.
fn validate(a: &[f64], m: usize, n: usize, b: &[f64], w: Option<&[f64]>) -> Result<()> {
    check::observations("lstsq", "the design matrix A", "rows", m, n)?;
    if a.len() != m * n {
        return Err(Error::dims("lstsq", format!("A is {m}×{n} but holds {} entries", a.len())));
    }
    if b.len() != m {
        return Err(Error::dims("lstsq", format!("A has {m} rows (observations) but b has {} entries", b.len())));
    }
    check::finite("A", a, m)?;
    check::finite("b", b, m)?;
    if let Some(w) = w {
        if w.len() != m {
            return Err(Error::dims("lstsq", format!("A has {m} rows (observations) but {} weights", w.len())));
        }
        check::weights(w)?;
    }
    Ok(())
}

/// `2^−round(log₂ c)`: scales `c` into `[1/√2, √2]` exactly.
fn power_of_two_inverse(c: f64) -> f64 {
    let e = c.log2().round().clamp(-1000.0, 1000.0) as i32;
    2f64.powi(-e)
}

/// Solves `min ‖diag(w)·(b − A·x)‖₂` (see the module documentation), with
/// the QR factorization in `T` on `be`. `a` is `m × n` column-major, `b`
/// has `m` entries, `w` (if any) `m` weights ≥ 0; all on the host in `f64`.
#[allow(clippy::too_many_arguments)]
pub fn lstsq<B: Backend, T: Scalar>(
    be: &B,
    a: &[f64],
    m: usize,
    n: usize,
    b: &[f64],
    w: Option<&[f64]>,
    params: LstsqParams,
) -> Result<LstsqOutcome> {
    validate(a, m, n, b, w)?;
    let weight = |i: usize| w.map_or(1.0, |w| w[i]);
    // diag(w)·A, exactly in double-double where it matters (the residuals);
    // its rounding to f64 is only what gets factored.
    let aw: Vec<f64> = (0..m * n).map(|p| weight(p % m) * a[p]).collect();
    let mut s = vec![0.0; n];
    for j in 0..n {
        let norm = aw[j * m..(j + 1) * m].iter().map(|v| v * v).sum::<f64>().sqrt();
        let norm = if norm.is_finite() {
            norm
        } else {
            let big = aw[j * m..(j + 1) * m].iter().fold(0.0f64, |x, v| x.max(v.abs()));
            big * aw[j * m..(j + 1) * m].iter().map(|v| (v / big).powi(2)).sum::<f64>().sqrt()
        };
        if norm == 0.0 {
            return Err(Error::RankDeficient {
                what: if w.is_some() { "the weighted design matrix" } else { "the design matrix" }.into(),
                column: Some(j + 1),
                condition: f64::INFINITY,
            });
        }
        s[j] = power_of_two_inverse(norm);
    }
    let scaled: Vec<T> = (0..m * n).map(|p| T::from_f64(aw[p] * s[p / m])).collect();

    // Factor.
    let k = n;
    let nb = params.qr.block_size.max(1).min(k);
    let mut f = be.upload(&scaled)?;
    let mut t = be.alloc::<T>(nb * k)?;
    {
        let buf = crate::backend::BufferMut::new(&mut f);
        qr::factor_in_place(be, &buf, Block::dense(m, n), ViewMut::dense(&mut t, nb, k)?, params.qr)?;
    }
    let fv = View::dense(&f, m, n)?;
    let tv = View::dense(&t, nb, k)?;

    // Rank: R's diagonal, then the condition estimate.
    let u = T::unit_roundoff();
    let diag: Vec<f64> = qr::r_diagonal(be, fv)?.into_iter().map(Scalar::to_f64).collect();
    let dmax = diag.iter().fold(0.0f64, |x, d| x.max(d.abs()));
    let small = u / params.rank_tolerance * dmax;
    let condition = qr::condition_estimate(be, fv)?;
    let first_small = diag.iter().position(|d| d.abs() <= small || !d.is_finite());
    if first_small.is_some() || condition.is_nan() || condition * u > params.rank_tolerance {
        let column = first_small
            .unwrap_or_else(|| (0..n).fold(0, |best, j| if diag[j].abs() < diag[best].abs() { j } else { best }));
        return Err(Error::RankDeficient {
            what: format!("the design matrix ({}QR in {})", if w.is_some() { "weighted, " } else { "" }, T::NAME),
            column: Some(column + 1),
            condition,
        });
    }

    // Device helpers on host vectors.
    let to_t = |x: &[f64]| x.iter().map(|&v| T::from_f64(v)).collect::<Vec<T>>();
    let to_f64 = |x: Vec<T>| x.into_iter().map(Scalar::to_f64).collect::<Vec<f64>>();
    let download = |buf: &B::Buffer<T>, len: usize| -> Result<Vec<f64>> {
        let mut h = vec![T::ZERO; len];
        be.download(buf, &mut h)?;
        Ok(to_f64(h))
    };
    let r_block = fv.sub(0, 0, n, n)?;
    let tri_solve = |x: &[f64], op: Op| -> Result<Vec<f64>> {
        let mut v = be.upload(&to_t(x))?;
        be.trsm(Side::Left, Uplo::Upper, op, Diag::NonUnit, T::ONE, r_block, ViewMut::dense(&mut v, n, 1)?)?;
        download(&v, n)
    };
    let apply = |x: &[f64], op: Op| -> Result<Vec<f64>> {
        let mut v = be.upload(&to_t(x))?;
        qr::apply_q(be, fv, tv, op, ViewMut::dense(&mut v, m, 1)?)?;
        download(&v, m)
    };

    // The exact weighted design entry w_i·a_ij and b̃_i, in double-double.
    let wa = |i: usize, j: usize| Dd::product(weight(i), a[i + j * m]);
    let wb = |i: usize| Dd::product(weight(i), b[i]);
    // ρ = b̃ − Ã·y − r, with Ã·y = diag(w)·A·(S·y).
    let residual = |y: &[f64], r: Option<&[f64]>| -> Vec<f64> {
        let x: Vec<f64> = (0..n).map(|j| s[j] * y[j]).collect();
        (0..m)
            .map(|i| {
                let mut acc = wb(i);
                if let Some(r) = r {
                    acc = acc.add_f64(-r[i]);
                }
                for (j, &xj) in x.iter().enumerate() {
                    acc = acc - wa(i, j).mul_f64(xj);
                }
                acc.to_f64()
            })
            .collect()
    };
    // g = −Ãᵀ·r.
    let gradient = |r: &[f64]| -> Vec<f64> {
        (0..n)
            .map(|j| {
                let col: Vec<f64> = (0..m).map(|i| weight(i) * a[i + j * m]).collect();
                let lo: Vec<f64> = (0..m).map(|i| wa(i, j).lo).collect();
                -((dot(&col, r) + dot(&lo, r)).to_f64() * s[j])
            })
            .collect()
    };

    let (mut y, mut r) = (vec![0.0; n], vec![0.0; m]);
    let norm_inf = |v: &[f64]| v.iter().fold(0.0f64, |x, e| x.max(e.abs()));
    let mut steps = 0;
    let mut last = f64::INFINITY;
    let mut converged = false;
    for it in 0..=params.max_iterations {
        let f_res = residual(&y, Some(&r));
        let g = if it == 0 { vec![0.0; n] } else { gradient(&r) };
        let h = tri_solve(&g, Op::Trans)?;
        let d = apply(&f_res, Op::Trans)?;
        let rhs: Vec<f64> = (0..n).map(|j| d[j] - h[j]).collect();
        let dy = tri_solve(&rhs, Op::NoTrans)?;
        let mut hd = d;
        hd[..n].copy_from_slice(&h);
        let dr = apply(&hd, Op::NoTrans)?;
        y.iter_mut().zip(&dy).for_each(|(a, b)| *a += b);
        r.iter_mut().zip(&dr).for_each(|(a, b)| *a += b);
        if it == 0 {
            continue;
        }
        steps = it;
        // Compare corrections of x = S·y: the scale is per coefficient.
        let xs: Vec<f64> = (0..n).map(|j| s[j] * y[j]).collect();
        let dxs: Vec<f64> = (0..n).map(|j| s[j] * dy[j]).collect();
        let ratio = norm_inf(&dxs) / norm_inf(&xs).max(f64::MIN_POSITIVE);
        if !ratio.is_finite() {
            break;
        }
        let stalled = ratio > 0.5 * last;
        last = ratio;
        if ratio <= 2.0 * u || (ratio == 0.0) {
            converged = true;
            break;
        }
        if stalled {
            // No more progress: accept only a correction at rounding level.
            converged = ratio <= 8.0 * n as f64 * u;
            break;
        }
    }
    if !converged {
        return Err(Error::NotConverged {
            what: format!("least-squares refinement (condition estimate {condition:.2e})"),
            iterations: steps,
            residual: last,
        });
    }

    let x: Vec<f64> = (0..n).map(|j| s[j] * y[j]).collect();
    let rho = residual(&y, None);
    let residual_norm = rho.iter().map(|v| v * v).sum::<f64>().sqrt();
    let standard_errors = if m > n {
        // diag((RᵀR)⁻¹) = squared row norms of R⁻¹.
        let mut eye = vec![T::ZERO; n * n];
        (0..n).for_each(|j| eye[j + j * n] = T::ONE);
        let mut rinv = be.upload(&eye)?;
        be.trsm(
            Side::Left,
            Uplo::Upper,
            Op::NoTrans,
            Diag::NonUnit,
            T::ONE,
            r_block,
            ViewMut::dense(&mut rinv, n, n)?,
        )?;
        let rinv = download(&rinv, n * n)?;
        let sigma2 = residual_norm * residual_norm / (m - n) as f64;
        Some((0..n).map(|j| s[j] * (sigma2 * (0..n).map(|k| rinv[j + k * n].powi(2)).sum::<f64>()).sqrt()).collect())
    } else {
        None
    };
    Ok(LstsqOutcome { x, residual_norm, standard_errors, condition, iterations: steps, last_correction: last })
}
