//! `--suite qr`: gpumat's blocked Householder QR against cuSOLVER's
//! `dgeqrf` on tall least-squares shapes (`m × m/8` for each size `m`),
//! same inputs, interleaved. The panel kernel is one thread block by design
//! (simple first), so the ratio says what the panel costs.

use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::{Backend, Block, BufferMut, Norm, Op, View, ViewMut};
use gpumat::factor::qr::{self, QrParams};
use gpumat::layout::Uplo;
use gpumat::{Error, Result};
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::inputs::random;
use crate::harness::results::record;
use crate::harness::timing::side_by_side;

/// `‖AᵀA − RᵀR‖_F / ‖AᵀA‖_F` on the lower triangle: a backward error of
/// `R` alone, the same measure for both (cuSOLVER's `Q` is not formed).
fn gram_error(cuda: &Cuda, m: usize, n: usize, a: &CudaBuffer<f64>, factored: &CudaBuffer<f64>) -> Result<f64> {
    let (mut g, mut h, mut r) = (cuda.alloc::<f64>(n * n)?, cuda.alloc::<f64>(n * n)?, cuda.alloc::<f64>(n * n)?);
    cuda.syrk(Uplo::Lower, Op::Trans, 1.0, View::dense(a, m, n)?, 0.0, ViewMut::dense(&mut g, n, n)?)?;
    cuda.copy(View::dense(factored, m, n)?.sub(0, 0, n, n)?, ViewMut::dense(&mut r, n, n)?)?;
    cuda.fill_strict_triangle(Uplo::Lower, 0.0, ViewMut::dense(&mut r, n, n)?)?;
    cuda.syrk(Uplo::Lower, Op::Trans, 1.0, View::dense(&r, n, n)?, 0.0, ViewMut::dense(&mut h, n, n)?)?;
    cuda.geam(
        1.0,
        View::dense(&g, n, n)?,
        Op::NoTrans,
        -1.0,
        View::dense(&h, n, n)?,
        Op::NoTrans,
        ViewMut::dense(&mut r, n, n)?,
    )?;
    for x in [&mut r, &mut g] {
        cuda.fill_strict_triangle(Uplo::Upper, 0.0, ViewMut::dense(x, n, n)?)?;
    }
    Ok(cuda.norm(Norm::Frobenius, View::dense(&r, n, n)?)? / cuda.norm(Norm::Frobenius, View::dense(&g, n, n)?)?)
}

pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let mut rows = vec![];
    for &m in &settings.sizes {
        let n = (m / 8).max(1);
        let params = QrParams::default();
        let nb = params.block_size.min(n);
        let a = random(cuda, m * n, 11)?;
        let (mut ours, mut theirs) = (cuda.alloc::<f64>(m * n)?, cuda.alloc::<f64>(m * n)?);
        let mut t = cuda.alloc::<f64>(nb * n)?;
        let mut vendor = vendor::DenseQr::new(cuda, m, n)?;
        let (t_ours, t_vendor) = side_by_side(
            cuda,
            settings.reps,
            || {
                cuda.copy(View::dense(&a, m, n)?, ViewMut::dense(&mut ours, m, n)?)?;
                let buf = BufferMut::new(&mut ours);
                qr::factor_in_place(cuda, &buf, Block::dense(m, n), ViewMut::dense(&mut t, nb, n)?, params)
            },
            || {
                cuda.copy(View::dense(&a, m, n)?, ViewMut::dense(&mut theirs, m, n)?)?;
                vendor.factor(cuda, &mut theirs)
            },
        )?;
        if vendor.info(cuda)? != 0 {
            return Err(Error::Device(format!("{m}×{n}: cuSOLVER dgeqrf failed (info {})", vendor.info(cuda)?)));
        }
        // Ours also in full: ‖A − Q·R‖_F / ‖A‖_F.
        let mut qr_ = cuda.alloc::<f64>(m * n)?;
        qr::reconstruct(cuda, View::dense(&ours, m, n)?, View::dense(&t, nb, n)?, ViewMut::dense(&mut qr_, m, n)?)?;
        cuda.axpy(-1.0, View::dense(&a, m, n)?, ViewMut::dense(&mut qr_, m, n)?)?;
        let e_full = cuda.norm(Norm::Frobenius, View::dense(&qr_, m, n)?)?
            / cuda.norm(Norm::Frobenius, View::dense(&a, m, n)?)?;
        let (mm, nn) = (m as f64, n as f64);
        rows.push(record(
            &format!("geqrf {m}×{n}"),
            m,
            t_ours,
            t_vendor,
            Some(2.0 * mm * nn * nn - 2.0 * nn * nn * nn / 3.0),
            json!({
                "cols": n,
                "gpumat_gram_error": gram_error(cuda, m, n, &a, &ours)?,
                "vendor_gram_error": gram_error(cuda, m, n, &a, &theirs)?,
                "gpumat_backward_error": e_full,
                "gpumat_bytes": 8 * (m * n + nb * n), "vendor_bytes": 8 * m * n + vendor.workspace_bytes(),
                "block_size": nb,
            }),
        ));
    }
    Ok(rows)
}
