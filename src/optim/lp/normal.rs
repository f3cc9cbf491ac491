//! The normal equations `(A·Θ·Aᵀ + δ·I)·Δy = r` of an interior-point step,
//! with `A` resident on the device.
//!
//! Each iteration forms the matrix with [`Matrix::scaled_gram`] (from one
//! triangle, full or RFP storage) and factors it by Cholesky. Solves are
//! preconditioned conjugate gradients on the FP64 operator `A·(Θ·(Aᵀ·p)) +
//! δ·p` with the factor as preconditioner: with an FP64 factor the first
//! iterate is the direct solve and the rest is iterative refinement; with an
//! FP32 factor it is what makes the step FP64-accurate.
//!
//! `δ` is the dual regularization of Altman and Gondzio (1999): it keeps the
//! matrix positive definite when rows of `A` are linearly dependent, or
//! nearly so at the end, and a Cholesky pivot that is not positive raises it
//! a hundredfold and factors again.

use std::time::Instant;

use rayon::prelude::*;

use super::LpPrecision;
use crate::{Cholesky, Device, Error, Matrix, Result, Sym, SymStorage};

/// `δ` relative to the largest diagonal entry of `A·Θ·Aᵀ` (bounded by
/// `max θ · max ‖aᵢ‖²`): where it starts, and where raising it stops.
const DELTA_START: f64 = 1e-14;
const DELTA_MAX: f64 = 1e-6;

enum Factor {
    F64(Cholesky<f64>),
    F32(Cholesky<f32>),
}

pub(super) struct Normal {
    device: Device,
    m: usize,
    n: usize,
    a: Matrix<f64>,
    /// `A` in FP32 while mixed precision serves.
    a32: Option<Matrix<f32>>,
    storage: SymStorage,
    theta: Vec<f64>,
    /// `max ‖aᵢ‖²` over the rows.
    row_norm2: f64,
    delta_relative: f64,
    /// The absolute `δ` of the current factor.
    pub delta: f64,
    factor: Option<Factor>,
    pub form_seconds: f64,
    pub factor_seconds: f64,
    /// Conjugate-gradient iterations beyond the first solve, over all
    /// solves.
    pub refinement_steps: usize,
    pub notes: Vec<String>,
}

/// The relative residual conjugate gradients stop at, and their most
/// iterations, for each factor precision.
const F64_TOLERANCE: f64 = 1e-13;
const F64_ITERATIONS: usize = 4;
const F32_TOLERANCE: f64 = 1e-11;
const F32_ITERATIONS: usize = 40;

impl Normal {
    /// `a` is `m × n`, column-major, on the host.
    pub fn new(
        device: &Device,
        m: usize,
        n: usize,
        a: &[f64],
        storage: SymStorage,
        precision: LpPrecision,
    ) -> Result<Self> {
        let row_norm2 = a
            .par_chunks(m.max(1))
            .fold(
                || vec![0.0; m],
                |mut sums, column| {
                    sums.iter_mut().zip(column).for_each(|(s, v)| *s += v * v);
                    sums
                },
            )
            .reduce(|| vec![0.0; m], |a, b| a.iter().zip(&b).map(|(x, y)| x + y).collect())
            .into_iter()
            .fold(0.0, f64::max);
        let a = device.from_col_major(m, n, a)?;
        let a32 = match precision {
            LpPrecision::Mixed => Some(a.cast()?),
            LpPrecision::F64 => None,
        };
        Ok(Normal {
            device: device.clone(),
            m,
            n,
            a,
            a32,
            storage,
            theta: vec![0.0; n],
            row_norm2,
            delta_relative: DELTA_START,
            delta: 0.0,
            factor: None,
            form_seconds: 0.0,
            factor_seconds: 0.0,
            refinement_steps: 0,
            notes: Vec::new(),
        })
    }

    /// "f32" while the factor is FP32, else "f64".
    pub fn precision(&self) -> &'static str {
        if self.a32.is_some() { "f32" } else { "f64" }
    }

    /// Leaves FP32 for the rest of the solve, saying why.
    fn leave_f32(&mut self, why: &str) {
        if self.a32.take().is_some() {
            self.notes.push(format!("FP32 normal matrix left for FP64: {why}"));
        }
    }

    /// Forms and factors `A·Θ·Aᵀ + δ·I` for `Θ = diag(theta)`; a failure
    /// of the FP32 path moves to FP64, and a non-positive pivot in FP64
    /// raises `δ`, up to its limit (then `NotPositiveDefinite`).
    pub fn factor(&mut self, theta: &[f64]) -> Result<()> {
        self.theta.copy_from_slice(theta);
        self.factor = None;
        let d: Vec<f64> = theta.iter().map(|t| t.sqrt()).collect();
        let scale = self.row_norm2 * theta.iter().fold(0.0f64, |m, &t| m.max(t));
        loop {
            self.delta = self.delta_relative * scale.max(f64::MIN_POSITIVE);
            let start = Instant::now();
            let factored = match &self.a32 {
                Some(a32) => {
                    let d32: Vec<f32> = d.iter().map(|&v| v as f32).collect();
                    let d32 = self.device.from_col_major(self.n, 1, &d32)?;
                    let gram = a32.scaled_gram_in(&d32, self.storage);
                    let gram = self.formed(gram, start)?;
                    let start = Instant::now();
                    let factor = gram.and_then(|g| g.shifted(self.delta)).and_then(|g| g.cholesky());
                    self.factor_seconds += start.elapsed().as_secs_f64();
                    factor.map(Factor::F32)
                }
                None => {
                    let d = self.device.from_col_major(self.n, 1, &d)?;
                    let gram = self.a.scaled_gram_in(&d, self.storage);
                    let gram = self.formed(gram, start)?;
                    let start = Instant::now();
                    let factor = gram.and_then(|g| g.shifted(self.delta)).and_then(|g| g.cholesky());
                    self.factor_seconds += start.elapsed().as_secs_f64();
                    factor.map(Factor::F64)
                }
            };
            match factored {
                Ok(f) => {
                    self.factor = Some(f);
                    return Ok(());
                }
                Err(e @ (Error::NotPositiveDefinite { .. } | Error::WeightOverflow { .. })) => {
                    if self.a32.is_some() {
                        self.leave_f32(&format!("{e}"));
                    } else if self.delta_relative * 100.0 <= DELTA_MAX {
                        self.delta_relative *= 100.0;
                        self.notes.push(format!("regularization raised to {:.0e} relative: {e}", self.delta_relative));
                    } else {
                        return Err(e);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Waits for the formed matrix, counting the time as forming's;
    /// errors of the device pass, those of the values are the caller's.
    fn formed<T: crate::Scalar>(&mut self, gram: Result<Sym<T>>, start: Instant) -> Result<Result<Sym<T>>> {
        self.device.synchronize()?;
        self.form_seconds += start.elapsed().as_secs_f64();
        match gram {
            Err(e @ (Error::WeightOverflow { .. } | Error::NotPositiveDefinite { .. })) => Ok(Err(e)),
            other => other.map(Ok),
        }
    }

    /// `A·v` for `v` of `n × k`.
    pub fn product(&self, v: &[f64], k: usize) -> Result<Vec<f64>> {
        self.a.matmul(&self.device.from_col_major(self.n, k, v)?)?.to_host()
    }

    /// `Aᵀ·w` for `w` of `m × k`.
    pub fn tr_product(&self, w: &[f64], k: usize) -> Result<Vec<f64>> {
        self.a.tr_matmul(&self.device.from_col_major(self.m, k, w)?)?.to_host()
    }

    /// `(A·Θ·Aᵀ + δ·I)·p`.
    fn apply(&self, p: &[f64], k: usize) -> Result<Vec<f64>> {
        let mut t = self.tr_product(p, k)?;
        for column in t.chunks_mut(self.n) {
            column.iter_mut().zip(&self.theta).for_each(|(v, th)| *v *= th);
        }
        let mut q = self.product(&t, k)?;
        q.iter_mut().zip(p).for_each(|(q, p)| *q += self.delta * p);
        Ok(q)
    }

    /// The factor's solve.
    fn precondition(&self, r: &[f64], k: usize) -> Result<Vec<f64>> {
        match self.factor.as_ref().ok_or_else(|| Error::InvalidArgument("normal equations not factored".into()))? {
            Factor::F64(f) => f.solve(&self.device.from_col_major(self.m, k, r)?)?.to_host(),
            Factor::F32(f) => {
                let r32: Vec<f32> = r.iter().map(|&v| v as f32).collect();
                let z = f.solve(&self.device.from_col_major(self.m, k, &r32)?)?.to_host()?;
                Ok(z.into_iter().map(f64::from).collect())
            }
        }
    }

    /// `(A·Θ·Aᵀ + δ·I)⁻¹·r` for `r` of `m × k`, by preconditioned
    /// conjugate gradients, each column its own. With an FP32 factor that
    /// does not reach its tolerance, the caller is told (`Ok(None)`) and the
    /// solve continues in FP64 after [`factor`](Self::factor) again.
    pub fn solve(&mut self, r: &[f64], k: usize) -> Result<Option<Vec<f64>>> {
        let m = self.m;
        let f32_factor = matches!(self.factor, Some(Factor::F32(_)));
        let (tolerance, iterations) =
            if f32_factor { (F32_TOLERANCE, F32_ITERATIONS) } else { (F64_TOLERANCE, F64_ITERATIONS) };
        let dot = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(a, b)| a * b).sum::<f64>();
        let norm = |x: &[f64]| dot(x, x).sqrt();
        let target: Vec<f64> = r.chunks(m).map(|c| tolerance * norm(c)).collect();
        let mut x = self.precondition(r, k)?;
        let mx = self.apply(&x, k)?;
        let mut res: Vec<f64> = r.iter().zip(&mx).map(|(a, b)| a - b).collect();
        let mut p = vec![0.0; m * k];
        let mut rz_old = vec![0.0; k];
        for it in 0..=iterations {
            let done: Vec<bool> = res.chunks(m).zip(&target).map(|(c, &t)| norm(c) <= t).collect();
            if done.iter().all(|&d| d) {
                return Ok(Some(x));
            }
            if it == iterations {
                break;
            }
            self.refinement_steps += 1;
            let z = self.precondition(&res, k)?;
            for j in 0..k {
                let cols = j * m..(j + 1) * m;
                let rz = dot(&res[cols.clone()], &z[cols.clone()]);
                let beta = if it == 0 || rz_old[j] == 0.0 { 0.0 } else { rz / rz_old[j] };
                rz_old[j] = rz;
                for i in cols {
                    p[i] = if done[j] { 0.0 } else { z[i] + beta * p[i] };
                }
            }
            let q = self.apply(&p, k)?;
            for j in 0..k {
                let cols = j * m..(j + 1) * m;
                let pq = dot(&p[cols.clone()], &q[cols.clone()]);
                if done[j] || pq <= 0.0 || !pq.is_finite() {
                    continue;
                }
                let alpha = rz_old[j] / pq;
                for i in cols {
                    x[i] += alpha * p[i];
                    res[i] -= alpha * q[i];
                }
            }
        }
        if f32_factor {
            self.leave_f32("conjugate gradients did not reach FP64 accuracy");
            Ok(None)
        } else {
            // FP64 refinement that stalls keeps its last iterate: the
            // interior-point iteration measures its own residuals.
            Ok(Some(x))
        }
    }
}
