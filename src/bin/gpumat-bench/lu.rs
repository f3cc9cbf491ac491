//! `--suite lu`: gpumat's LU with partial pivoting side by side with
//! cuSOLVER's `dgetrf` (64-bit API) on the same random matrices: times,
//! TFLOP/s at 2n³/3 flops, the ratio, and ‖P·A − L·U‖_F/‖A‖_F of each, with
//! its own pivots; other blockings are timed for tuning.

use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::{Backend, Block, BufferMut, Norm, Pivoting, View, ViewMut};
use gpumat::factor::lu::{self, LuParams};
use gpumat::{Error, Result};
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::errors::rel_diff;
use crate::harness::factorizations::read_info;
use crate::harness::inputs::random;
use crate::harness::results::record;
use crate::harness::timing::side_by_side;

/// ‖Pᵀ·L·U − A‖_F / ‖A‖_F for a factor and its 1-based pivots.
fn factor_error(cuda: &Cuda, n: usize, a: &CudaBuffer<f64>, lu_buf: &CudaBuffer<f64>, ipiv: &[i32]) -> Result<f64> {
    let piv = cuda.upload(ipiv)?;
    let mut out = cuda.alloc::<f64>(n * n)?;
    lu::reconstruct(cuda, View::dense(lu_buf, n, n)?, View::dense(&piv, n, 1)?, ViewMut::dense(&mut out, n, n)?)?;
    rel_diff(cuda, n, &out, a, None, Norm::Frobenius)
}

pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let mut rows = vec![];
    for &n in &settings.sizes {
        let a = random(cuda, n * n, 6)?;
        let (mut ours, mut theirs) = (cuda.alloc::<f64>(n * n)?, cuda.alloc::<f64>(n * n)?);
        let mut ipiv = cuda.alloc::<i32>(n)?;
        let mut info = cuda.upload(&[0i32])?;
        let mut vendor = vendor::DenseLu::new(cuda, n)?;
        let mut run = |params: LuParams| {
            side_by_side(
                cuda,
                settings.reps,
                || {
                    cuda.copy(View::dense(&a, n, n)?, ViewMut::dense(&mut ours, n, n)?)?;
                    let buf = BufferMut::new(&mut ours);
                    let piv = BufferMut::new(&mut ipiv);
                    let mut status = ViewMut::dense(&mut info, 1, 1)?;
                    let block = Block::dense(n, n);
                    lu::factor_in_place(
                        cuda,
                        &buf,
                        block,
                        &piv,
                        Block::dense(n, 1),
                        &mut status,
                        Pivoting::Partial,
                        params,
                    )
                },
                || {
                    cuda.copy(View::dense(&a, n, n)?, ViewMut::dense(&mut theirs, n, n)?)?;
                    vendor.factor(cuda, &mut theirs)
                },
            )
        };
        // Other blockings than the default, for tuning: timings only.
        let mut tuning = vec![];
        let blockings = [(64, 32, 1), (128, 32, 1), (256, 32, 1), (512, 32, 1), (1024, 32, 1), (256, 64, 1)];
        // Deeper look-ahead: the side queue's updates that many panels behind.
        let deeper = [(256, 32, 2), (256, 32, 3), (512, 32, 2), (512, 32, 3)];
        for (nb, leaf, look_ahead) in blockings.into_iter().chain(deeper) {
            let (t, v) = run(LuParams { block_size: nb, leaf_size: leaf, look_ahead, ..LuParams::default() })?;
            tuning.push(json!({
                "block_size": nb, "leaf_size": leaf, "look_ahead": look_ahead, "gpumat_ms": t, "vendor_ms": v,
            }));
        }
        let params = LuParams::for_order(n);
        let (t_ours, t_vendor) = run(params)?;
        let status = read_info(cuda, &info)?;
        if status != 0 || vendor.info(cuda)? != 0 {
            return Err(Error::Device(format!(
                "n = {n}: a factorization failed (gpumat {status}, vendor {})",
                vendor.info(cuda)?
            )));
        }
        let mut our_piv = vec![0i32; n];
        cuda.download(&ipiv, &mut our_piv)?;
        let their_piv: Vec<i32> = vendor.pivots(cuda)?.into_iter().map(|p| p as i32).collect();
        let same_pivots = our_piv == their_piv;
        let (e_ours, e_vendor) =
            (factor_error(cuda, n, &a, &ours, &our_piv)?, factor_error(cuda, n, &a, &theirs, &their_piv)?);
        let nn = n as f64;
        let bytes = 8 * n * n;
        rows.push(record(
            "getrf",
            n,
            t_ours,
            t_vendor,
            Some(2.0 * nn * nn * nn / 3.0),
            json!({
                "gpumat_backward_error": e_ours, "vendor_backward_error": e_vendor,
                "same_pivots": same_pivots,
                "gpumat_bytes": bytes + 4 * n, "vendor_bytes": bytes + 8 * n + vendor.workspace_bytes(),
                "block_size": params.block_size, "leaf_size": params.leaf_size, "other_blockings": tuning,
            }),
        ));
    }
    Ok(rows)
}
