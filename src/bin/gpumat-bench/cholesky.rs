//! `--suite cholesky`: time, backward error and peak device memory of
//! gpumat's Cholesky factorization in full and RFP storage against cuSOLVER
//! `dpotrf` (and `spotrf` in single precision), with the sweeps that tune
//! it: other blockings, graphs off, the full factorization at the offsets
//! and leading dimensions of RFP pieces, and the other RFP orientation.

use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::{Backend, Block, BufferMut, Norm, Tuning, View, ViewMut};
use gpumat::factor::cholesky::{self, CholeskyParams};
use gpumat::layout::{Rfp, Transr, Uplo};
use gpumat::{Error, Result};
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::errors::rel_diff;
use crate::harness::factorizations::{cholesky_full, cholesky_vendor, read_info};
use crate::harness::inputs::diagonally_dominant;
use crate::harness::results::record;
use crate::harness::timing::{side_by_side, wall_ms};

/// Blockings timed besides `CholeskyParams::for_order`, for tuning.
const BLOCK_SIZES: [usize; 6] = [64, 128, 256, 512, 1024, 2048];

/// Copies the top left of `a` into `block` of `l` and factors its `uplo`
/// triangle (and the panel beside it): the full-storage factorization at
/// another offset, leading dimension or orientation, as the pieces of an
/// RFP array have them.
#[allow(clippy::too_many_arguments)]
fn factor_block(
    cuda: &Cuda,
    n: usize,
    a: &CudaBuffer<f64>,
    (l, block, uplo): (&mut CudaBuffer<f64>, Block, Uplo),
    info: &mut CudaBuffer<i32>,
    params: CholeskyParams,
) -> Result<()> {
    let top_left = Block { offset: 0, rows: block.rows, cols: block.cols, ld: n };
    cuda.copy(View::new(a, top_left)?, ViewMut::new(l, block)?)?;
    let mut status = ViewMut::dense(info, 1, 1)?;
    cholesky::factor_in_place(cuda, uplo, &BufferMut::new(l), block, &mut status, 0, params)
}

/// Copies the RFP array `arf0` into `arf` and factors it.
fn factor_rfp(
    cuda: &Cuda,
    rfp: Rfp,
    arf0: &CudaBuffer<f64>,
    arf: &mut CudaBuffer<f64>,
    info: &mut CudaBuffer<i32>,
    params: CholeskyParams,
) -> Result<()> {
    cuda.copy(View::dense(arf0, rfp.len(), 1)?, ViewMut::dense(arf, rfp.len(), 1)?)?;
    let mut status = ViewMut::dense(info, 1, 1)?;
    cholesky::factor_rfp_in_place(cuda, rfp, &BufferMut::new(arf), 0, &mut status, params)
}

/// Wall times in ms of the first runs of `f` (a new key of recorded work):
/// enqueued call by call, captured into a graph, replayed; and the device
/// memory the graph holds, in bytes.
fn first_calls(cuda: &Cuda, mut f: impl FnMut() -> Result<()>) -> Result<(Vec<f64>, i64)> {
    let plain = gpumat::backend::cuda::PLAIN_RUNS;
    let mut times = vec![0.0; plain + 2];
    let mut free = vec![0; plain + 2];
    for (t, free) in times.iter_mut().zip(&mut free) {
        cuda.synchronize()?;
        *free = cuda.memory()?.0 as i64;
        *t = wall_ms(cuda, &mut f)?;
    }
    Ok((times, free[plain] - free[plain + 1]))
}

/// `A = L·Lᵀ` in full and RFP storage against cuSOLVER `dpotrf`, and in
/// single precision against `spotrf`, on one diagonally dominant SPD matrix
/// per size. Each timed run starts with a device copy of `A` into the matrix
/// factored in place, for both sides. Peak memory is measured around one run
/// that allocates its own matrix.
pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let reps = settings.reps;
    let mut rows = vec![];
    for &n in &settings.sizes {
        let a = diagonally_dominant(cuda, n, 5)?;
        // First, while only `a` takes memory (n = 32768 needs 47 GB).
        let single = single_precision(cuda, reps, n, &a)?;
        let rfp = gpumat::api::packed_layout(n);
        let mut arf0 = cuda.alloc::<f64>(rfp.len())?;
        cuda.full_to_rfp(View::dense(&a, n, n)?, rfp, ViewMut::dense(&mut arf0, rfp.len(), 1)?)?;
        let (mut ours, mut theirs, mut arf) =
            (cuda.alloc::<f64>(n * n)?, cuda.alloc::<f64>(n * n)?, cuda.alloc::<f64>(rfp.len())?);
        let (mut info, mut info_rfp) = (cuda.upload(&[0i32])?, cuda.upload(&[0i32])?);
        let mut vendor = vendor::DenseCholesky::new(cuda, n)?;
        let params = CholeskyParams::for_order(n);

        // Other blockings, and other widths of the trailing update's tiles
        // (fewer tiles, fewer calls to enqueue), for tuning: timings only.
        let blocks = BLOCK_SIZES.into_iter().filter(|&nb| nb != params.block_size && nb < n);
        let tiles = [512, 2048, 4096].into_iter().filter(|&w| w != params.update_tile && w < n);
        let variants = blocks
            .map(|nb| CholeskyParams { block_size: nb, ..params })
            .chain(tiles.map(|w| CholeskyParams { update_tile: w, ..params }));
        let mut tuning = vec![];
        for p in variants {
            let (t, v) = side_by_side(
                cuda,
                reps,
                || cholesky_full(cuda, n, &a, &mut ours, &mut info, p),
                || cholesky_vendor(cuda, n, &a, &mut theirs, &mut vendor),
            )?;
            tuning.push(json!({
                "block_size": p.block_size, "leaf_size": p.leaf_size, "update_tile": p.update_tile,
                "gpumat_ms": t, "vendor_ms": v,
            }));
        }
        // The first factorizations of one matrix: enqueued call by call
        // (`PLAIN_RUNS` times), captured into a graph and launched, replayed.
        let (first_calls, graph_bytes) =
            first_calls(cuda, || cholesky_full(cuda, n, &a, &mut ours, &mut info, params))?;
        let (t_full, t_vendor) = side_by_side(
            cuda,
            reps,
            || cholesky_full(cuda, n, &a, &mut ours, &mut info, params),
            || cholesky_vendor(cuda, n, &a, &mut theirs, &mut vendor),
        )?;
        // The same without graphs: every call enqueued by the host.
        let knobs = cuda.tuning();
        cuda.set_tuning(Tuning { graphs: false, ..knobs });
        let (t_plain, t_vendor_plain) = side_by_side(
            cuda,
            reps,
            || cholesky_full(cuda, n, &a, &mut ours, &mut info, params),
            || cholesky_vendor(cuda, n, &a, &mut theirs, &mut vendor),
        )?;
        let (t_rfp_plain, t_full_plain) = side_by_side(
            cuda,
            reps,
            || factor_rfp(cuda, rfp, &arf0, &mut arf, &mut info_rfp, params),
            || cholesky_full(cuda, n, &a, &mut ours, &mut info, params),
        )?;
        cuda.set_tuning(knobs);
        // Packed against full, interleaved, for the time ratio of the two storages.
        let (t_rfp, t_full_again) = side_by_side(
            cuda,
            reps,
            || factor_rfp(cuda, rfp, &arf0, &mut arf, &mut info_rfp, params),
            || cholesky_full(cuda, n, &a, &mut ours, &mut info, params),
        )?;
        // The full factorization at the offsets and leading dimensions of
        // RFP pieces: `TRANSR = 'N'` puts `T1` at entry 1 with ld = n + 1
        // (n even); cuBLAS is fast only on columns aligned to 128 bytes.
        let mut padded = cuda.alloc::<f64>((n + 64) * n + 1)?;
        let mut placements = vec![];
        let placed = |offset, pad| Block { offset, rows: n, cols: n, ld: n + pad };
        let cases = [(1, 1), (0, 1), (0, 8), (0, 16), (1, 16), (0, 64)].map(|(o, p)| (placed(o, p), Uplo::Lower));
        // The first half of `TRANSR = 'T'` (`T1` with `S` beside it: an
        // upper panel of n/2 rows and ld n/2), and the same with ld n and in
        // the lower form, which full storage factors.
        let half = n / 2;
        let halves = [
            (Block { offset: half, rows: half, cols: n, ld: half }, Uplo::Upper),
            (Block { offset: 0, rows: half, cols: n, ld: n }, Uplo::Upper),
            (Block { offset: 0, rows: n, cols: half, ld: n }, Uplo::Lower),
        ];
        for (block, uplo) in cases.into_iter().chain([(Block::dense(n, n), Uplo::Upper)]).chain(halves) {
            let (t, f) = side_by_side(
                cuda,
                reps,
                || factor_block(cuda, n, &a, (&mut padded, block, uplo), &mut info_rfp, params),
                || cholesky_full(cuda, n, &a, &mut ours, &mut info, params),
            )?;
            placements.push(json!({
                "uplo": format!("{uplo:?}"), "offset": block.offset, "ld": block.ld,
                "rows": block.rows, "cols": block.cols,
                "ms": t, "full_ms": f, "time_over_full": t / f,
            }));
        }
        drop(padded);
        // Other blockings of the packed factorization against the full one
        // at its default, for tuning: timings only.
        let mut rfp_tuning = vec![];
        for nb in [512, 2048].into_iter().filter(|&nb| nb != params.block_size && nb < n) {
            let p = CholeskyParams { block_size: nb, ..params };
            let (t, f) = side_by_side(
                cuda,
                reps,
                || factor_rfp(cuda, rfp, &arf0, &mut arf, &mut info_rfp, p),
                || cholesky_full(cuda, n, &a, &mut ours, &mut info, params),
            )?;
            rfp_tuning.push(json!({"block_size": nb, "rfp_ms": t, "full_ms": f, "rfp_time_over_full": t / f}));
        }
        // The other TRANSR, for the choice of `packed_layout`: its rectangle
        // has another leading dimension and the other triangle transposed.
        let other =
            Rfp::new(n, if rfp.transr == Transr::Normal { Transr::Transpose } else { Transr::Normal }, rfp.uplo);
        let (mut arf_other0, mut arf_other) = (cuda.alloc::<f64>(other.len())?, cuda.alloc::<f64>(other.len())?);
        cuda.full_to_rfp(View::dense(&a, n, n)?, other, ViewMut::dense(&mut arf_other0, other.len(), 1)?)?;
        let (t_other, t_full_other) = side_by_side(
            cuda,
            reps,
            || factor_rfp(cuda, other, &arf_other0, &mut arf_other, &mut info_rfp, params),
            || cholesky_full(cuda, n, &a, &mut ours, &mut info, params),
        )?;
        drop((arf_other0, arf_other));
        let status = [read_info(cuda, &info)?, read_info(cuda, &info_rfp)?, vendor.info(cuda)?];
        if status != [0; 3] {
            return Err(Error::Device(format!(
                "n = {n}: a factorization failed (info of gpumat full, RFP, vendor: {status:?})"
            )));
        }

        // Peak memory of one factorization each, its own matrix included.
        let (_, peak_full) = cuda.peak_memory(|| {
            let mut l = cuda.alloc::<f64>(n * n)?;
            cholesky_full(cuda, n, &a, &mut l, &mut info, params)
        })?;
        let (_, peak_rfp) = cuda.peak_memory(|| {
            let mut l = cuda.alloc::<f64>(rfp.len())?;
            factor_rfp(cuda, rfp, &arf0, &mut l, &mut info, params)
        })?;
        let (_, peak_vendor) = cuda.peak_memory(|| {
            let mut l = cuda.alloc::<f64>(n * n)?;
            let mut v = vendor::DenseCholesky::new(cuda, n)?;
            cholesky_vendor(cuda, n, &a, &mut l, &mut v)
        })?;

        // ‖A − L·Lᵀ‖_F / ‖A‖_F on the lower triangle, for each factor.
        let error = |l: &CudaBuffer<f64>| -> Result<f64> {
            let mut llt = cuda.alloc::<f64>(n * n)?;
            cholesky::reconstruct(cuda, Uplo::Lower, View::dense(l, n, n)?, ViewMut::dense(&mut llt, n, n)?)?;
            rel_diff(cuda, n, &llt, &a, Some(Uplo::Lower), Norm::Frobenius)
        };
        let mut unpacked = cuda.alloc::<f64>(n * n)?;
        cuda.rfp_to_full(View::dense(&arf, rfp.len(), 1)?, rfp, ViewMut::dense(&mut unpacked, n, n)?)?;
        let (e_full, e_vendor, e_rfp) = (error(&ours)?, error(&theirs)?, error(&unpacked)?);
        let flops = (n as f64).powi(3) / 3.0;
        rows.push(record(
            "potrf",
            n,
            t_full,
            t_vendor,
            Some(flops),
            json!({
                "gpumat_backward_error": e_full, "vendor_backward_error": e_vendor,
                "gpumat_bytes": peak_full, "vendor_bytes": peak_vendor,
                "block_size": params.block_size, "leaf_size": params.leaf_size, "other_blockings": tuning,
                "first_calls_ms": first_calls, "graph_bytes": graph_bytes,
                "ungraphed_ms": t_plain, "ungraphed_vendor_ms": t_vendor_plain,
                "ungraphed_ratio": t_vendor_plain / t_plain,
            }),
        ));
        rows.push(record(
            "potrf_rfp",
            n,
            t_rfp,
            t_vendor,
            Some(flops),
            json!({
                "gpumat_backward_error": e_rfp, "vendor_backward_error": e_vendor,
                "rfp_time_over_full": t_rfp / t_full_again, "full_ms_same_run": t_full_again,
                "gpumat_bytes": peak_rfp, "vendor_bytes": peak_vendor,
                "rfp_memory_over_full": peak_rfp as f64 / peak_full as f64,
                "transr": format!("{:?}", rfp.transr),
                "other_transr_time_over_full": t_other / t_full_other,
                "ungraphed_rfp_time_over_full": t_rfp_plain / t_full_plain,
                "full_placed_as_pieces": placements,
                "other_blockings": rfp_tuning,
            }),
        ));
        rows.push(single);
    }
    Ok(rows)
}

/// Full-storage Cholesky in single precision against cuSOLVER `spotrf`, on
/// `a` rounded to `f32`. The backward errors are taken in FP64 against the
/// rounded matrix.
fn single_precision(cuda: &Cuda, reps: usize, n: usize, a: &CudaBuffer<f64>) -> Result<Value> {
    let mut a32 = cuda.alloc::<f32>(n * n)?;
    cuda.cast(View::dense(a, n, n)?, ViewMut::dense(&mut a32, n, n)?)?;
    let (mut ours, mut theirs) = (cuda.alloc::<f32>(n * n)?, cuda.alloc::<f32>(n * n)?);
    let mut info = cuda.upload(&[0i32])?;
    let mut vendor = vendor::DenseCholesky::<f32>::new(cuda, n)?;
    let params = CholeskyParams::for_order(n);
    let (t, t_vendor) = side_by_side(
        cuda,
        reps,
        || cholesky_full(cuda, n, &a32, &mut ours, &mut info, params),
        || cholesky_vendor(cuda, n, &a32, &mut theirs, &mut vendor),
    )?;
    let status = [read_info(cuda, &info)?, vendor.info(cuda)?];
    if status != [0; 2] {
        return Err(Error::Device(format!(
            "n = {n}: an f32 factorization failed (info of gpumat, vendor: {status:?})"
        )));
    }
    let widen = |x: &CudaBuffer<f32>| -> Result<CudaBuffer<f64>> {
        let mut y = cuda.alloc::<f64>(n * n)?;
        cuda.cast(View::dense(x, n, n)?, ViewMut::dense(&mut y, n, n)?)?;
        Ok(y)
    };
    let rounded = widen(&a32)?;
    drop(a32);
    let error = |l: &CudaBuffer<f32>| -> Result<f64> {
        let (l, mut llt) = (widen(l)?, cuda.alloc::<f64>(n * n)?);
        cholesky::reconstruct(cuda, Uplo::Lower, View::dense(&l, n, n)?, ViewMut::dense(&mut llt, n, n)?)?;
        rel_diff(cuda, n, &llt, &rounded, Some(Uplo::Lower), Norm::Frobenius)
    };
    let (e, e_vendor) = (error(&ours)?, error(&theirs)?);
    let flops = (n as f64).powi(3) / 3.0;
    Ok(record(
        "potrf_f32",
        n,
        t,
        t_vendor,
        Some(flops),
        json!({
            "precision": "f32", "gpumat_backward_error": e, "vendor_backward_error": e_vendor,
            "block_size": params.block_size,
        }),
    ))
}
