//! `--suite primitives`: gemm and syrk against cuBLAS, RFP pack and unpack
//! against a device-to-device copy of as many entries, and host ↔ device
//! transfers from ordinary host memory against copies from pinned memory.

use gpumat::backend::cuda::{Cuda, vendor};
use gpumat::backend::{Backend, Norm, Op, View, ViewMut};
use gpumat::layout::Uplo;
use gpumat::{Error, Result};
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::errors::{product_error, rel_diff};
use crate::harness::inputs::random;
use crate::harness::results::record;
use crate::harness::timing::side_by_side;

/// Device memory taken since `baseline_free` bytes were free.
fn used_bytes(cuda: &Cuda, baseline_free: usize) -> Result<usize> {
    Ok(baseline_free.saturating_sub(cuda.memory()?.0))
}

pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let reps = settings.reps;
    let mut rows = vec![];
    for &n in &settings.sizes {
        let free0 = cuda.memory()?.0;
        let (a, b) = (random(cuda, n * n, 1)?, random(cuda, n * n, 2)?);
        let (mut c_ours, mut c_vendor) = (cuda.alloc::<f64>(n * n)?, cuda.alloc::<f64>(n * n)?);
        let peak = used_bytes(cuda, free0)?;
        let nn = n as f64;

        let (t_ours, t_vendor) = side_by_side(
            cuda,
            reps,
            || {
                let (av, bv) = (View::dense(&a, n, n)?, View::dense(&b, n, n)?);
                cuda.gemm(1.0, av, Op::NoTrans, bv, Op::NoTrans, 0.0, ViewMut::dense(&mut c_ours, n, n)?)
            },
            || vendor::gemm(cuda, n, &a, &b, &mut c_vendor),
        )?;
        let diff = rel_diff(cuda, n, &c_ours, &c_vendor, None, Norm::Frobenius)?;
        let errors = json!({
            "gpumat_backward_error": product_error(cuda, n, &a, (&b, Op::NoTrans), &c_ours, false)?,
            "vendor_backward_error": product_error(cuda, n, &a, (&b, Op::NoTrans), &c_vendor, false)?,
            "rel_diff_vs_vendor": diff, "peak_bytes": peak,
        });
        rows.push(record("gemm", n, t_ours, t_vendor, Some(2.0 * nn * nn * nn), errors));

        let (t_ours, t_vendor) = side_by_side(
            cuda,
            reps,
            || {
                let av = View::dense(&a, n, n)?;
                cuda.syrk(Uplo::Lower, Op::NoTrans, 1.0, av, 0.0, ViewMut::dense(&mut c_ours, n, n)?)
            },
            || vendor::syrk(cuda, n, &a, &mut c_vendor),
        )?;
        let diff = rel_diff(cuda, n, &c_ours, &c_vendor, Some(Uplo::Lower), Norm::Frobenius)?;
        let errors = json!({
            "gpumat_backward_error": product_error(cuda, n, &a, (&a, Op::Trans), &c_ours, true)?,
            "vendor_backward_error": product_error(cuda, n, &a, (&a, Op::Trans), &c_vendor, true)?,
            "rel_diff_vs_vendor": diff, "peak_bytes": peak,
        });
        rows.push(record("syrk", n, t_ours, t_vendor, Some(nn * nn * nn), errors));

        // RFP pack and unpack against a device-to-device copy of the same number of entries.
        let rfp = gpumat::api::packed_layout(n);
        let mut arf = cuda.alloc::<f64>(rfp.len())?;
        let src = random(cuda, rfp.len(), 3)?;
        let mut dst = cuda.alloc::<f64>(rfp.len())?;
        let bytes = 2.0 * 8.0 * rfp.len() as f64;
        let (t_pack, t_copy) = side_by_side(
            cuda,
            reps,
            || cuda.full_to_rfp(View::dense(&a, n, n)?, rfp, ViewMut::dense(&mut arf, rfp.len(), 1)?),
            || vendor::copy(cuda, &src, &mut dst),
        )?;
        let (t_unpack, _) = side_by_side(
            cuda,
            reps,
            || cuda.rfp_to_full(View::dense(&arf, rfp.len(), 1)?, rfp, ViewMut::dense(&mut c_ours, n, n)?),
            || Ok(()),
        )?;
        // The round trip must reproduce A's lower triangle exactly.
        let exact = rel_diff(cuda, n, &c_ours, &a, Some(Uplo::Lower), Norm::Frobenius)?;
        let gbs = |t: f64| bytes / (t * 1e6);
        rows.push(record(
            "rfp_pack",
            n,
            t_pack,
            t_copy,
            None,
            json!({"gpumat_gbs": gbs(t_pack), "copy_gbs": gbs(t_copy), "fraction_of_copy": t_copy / t_pack, "round_trip_diff": exact}),
        ));
        rows.push(record(
            "rfp_unpack",
            n,
            t_unpack,
            t_copy,
            None,
            json!({"gpumat_gbs": gbs(t_unpack), "copy_gbs": gbs(t_copy), "fraction_of_copy": t_copy / t_unpack}),
        ));

        // Host ↔ device: gpumat from ordinary (pageable) host memory against
        // the ceiling, a copy from pinned memory.
        let host: Vec<f64> = (0..n * n).map(|k| k as f64).collect();
        let bytes = 8 * n * n;
        let (mut pin, mut dev_bytes) = (vendor::pinned(cuda, bytes)?, vendor::device_bytes(cuda, bytes)?);
        let mut back = vec![0.0f64; n * n];
        let mut up = None;
        let (t_up, t_pin_up) = side_by_side(
            cuda,
            reps,
            || {
                up = Some(cuda.upload(&host)?);
                Ok(())
            },
            || vendor::pinned_upload(cuda, &pin, &mut dev_bytes),
        )?;
        let up = up.ok_or_else(|| Error::Device("upload did not run".into()))?;
        let (t_down, t_pin_down) = side_by_side(
            cuda,
            reps,
            || cuda.download(&up, &mut back),
            || vendor::pinned_download(cuda, &dev_bytes, &mut pin),
        )?;
        if back != host {
            return Err(Error::Device(format!("upload/download round trip of {n}×{n} changed the data")));
        }
        let gbs = |t: f64| bytes as f64 / (t * 1e6);
        for (op, t, t_pin) in [("upload", t_up, t_pin_up), ("download", t_down, t_pin_down)] {
            rows.push(record(
                op,
                n,
                t,
                t_pin,
                None,
                json!({"gpumat_gbs": gbs(t), "pinned_gbs": gbs(t_pin), "fraction_of_pinned": t_pin / t}),
            ));
        }
    }
    Ok(rows)
}
