//! The Cholesky benches. `cholesky`: time, backward error and peak device
//! memory of gpumat's factorization in full and RFP storage against cuSOLVER
//! `dpotrf` (and `spotrf` in single precision). `capacity`: the largest order
//! each can factor on the device, found by bisection and confirmed by a
//! factorization.

use std::time::Instant;

use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::{Backend, Block, BufferMut, Tuning, View, ViewMut};
use gpumat::factor::cholesky::{self, CholeskyParams};
use gpumat::layout::{Rfp, Transr, Uplo};
use gpumat::{Error, Result, Scalar};
use serde_json::{Value, json};

use crate::bench::{Args, enqueue_and_per_call_us, per_call_us, random, record, rel_diff, side_by_side};

/// Blockings timed besides `CholeskyParams::for_order`, for tuning.
const BLOCK_SIZES: [usize; 6] = [64, 128, 256, 512, 1024, 2048];

/// Copies `a` into `l` and factors it in full storage.
fn factor_full<T: Scalar>(
    cuda: &Cuda,
    n: usize,
    a: &CudaBuffer<T>,
    l: &mut CudaBuffer<T>,
    info: &mut CudaBuffer<i32>,
    params: CholeskyParams,
) -> Result<()> {
    cuda.copy(View::dense(a, n, n)?, ViewMut::dense(l, n, n)?)?;
    let mut status = ViewMut::dense(info, 1, 1)?;
    cholesky::factor_in_place(cuda, Uplo::Lower, &BufferMut::new(l), Block::dense(n, n), &mut status, 0, params)
}

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

/// Copies `a` into `l` and factors it with cuSOLVER.
fn factor_vendor<T: Scalar>(
    cuda: &Cuda,
    n: usize,
    a: &CudaBuffer<T>,
    l: &mut CudaBuffer<T>,
    vendor: &mut vendor::DenseCholesky<T>,
) -> Result<()> {
    cuda.copy(View::dense(a, n, n)?, ViewMut::dense(l, n, n)?)?;
    vendor.factor(cuda, l)
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
        let start = Instant::now();
        f()?;
        cuda.synchronize()?;
        *t = start.elapsed().as_secs_f64() * 1e3;
    }
    Ok((times, free[plain] - free[plain + 1]))
}

fn read_info(cuda: &Cuda, info: &CudaBuffer<i32>) -> Result<i32> {
    let mut host = [0i32];
    cuda.download(info, &mut host)?;
    Ok(host[0])
}

/// `A = L·Lᵀ` in full and RFP storage against cuSOLVER `dpotrf`, and in
/// single precision against `spotrf`, on one diagonally dominant SPD matrix
/// per size. Each timed run starts with a device copy of `A` into the matrix
/// factored in place, for both sides. Peak memory is measured around one run
/// that allocates its own matrix.
pub fn cholesky(cuda: &Cuda, args: &Args) -> Result<Vec<Value>> {
    let mut rows = vec![];
    for &n in &args.sizes {
        // Entries in [-1, 1), diagonal 2n: strictly diagonally dominant.
        let mut a = random(cuda, n * n, 5)?;
        cuda.fill(ViewMut::new(&mut a, Block { offset: 0, rows: 1, cols: n, ld: n + 1 })?, 2.0 * n as f64)?;
        // First, while only `a` takes memory (n = 32768 needs 47 GB).
        let single = single_precision(cuda, args, n, &a)?;
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
                args.reps,
                || factor_full(cuda, n, &a, &mut ours, &mut info, p),
                || factor_vendor(cuda, n, &a, &mut theirs, &mut vendor),
            )?;
            tuning.push(json!({
                "block_size": p.block_size, "leaf_size": p.leaf_size, "update_tile": p.update_tile,
                "gpumat_ms": t, "vendor_ms": v,
            }));
        }
        // The first factorizations of one matrix: enqueued call by call
        // (`PLAIN_RUNS` times), captured into a graph and launched, replayed.
        let (first_calls, graph_bytes) = first_calls(cuda, || factor_full(cuda, n, &a, &mut ours, &mut info, params))?;
        let (t_full, t_vendor) = side_by_side(
            cuda,
            args.reps,
            || factor_full(cuda, n, &a, &mut ours, &mut info, params),
            || factor_vendor(cuda, n, &a, &mut theirs, &mut vendor),
        )?;
        // The same without graphs: every call enqueued by the host.
        let knobs = cuda.tuning();
        cuda.set_tuning(Tuning { graphs: false, ..knobs });
        let (t_plain, t_vendor_plain) = side_by_side(
            cuda,
            args.reps,
            || factor_full(cuda, n, &a, &mut ours, &mut info, params),
            || factor_vendor(cuda, n, &a, &mut theirs, &mut vendor),
        )?;
        let (t_rfp_plain, t_full_plain) = side_by_side(
            cuda,
            args.reps,
            || factor_rfp(cuda, rfp, &arf0, &mut arf, &mut info_rfp, params),
            || factor_full(cuda, n, &a, &mut ours, &mut info, params),
        )?;
        cuda.set_tuning(knobs);
        // Packed against full, interleaved, for the time ratio the issue sets.
        let (t_rfp, t_full_again) = side_by_side(
            cuda,
            args.reps,
            || factor_rfp(cuda, rfp, &arf0, &mut arf, &mut info_rfp, params),
            || factor_full(cuda, n, &a, &mut ours, &mut info, params),
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
                args.reps,
                || factor_block(cuda, n, &a, (&mut padded, block, uplo), &mut info_rfp, params),
                || factor_full(cuda, n, &a, &mut ours, &mut info, params),
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
                args.reps,
                || factor_rfp(cuda, rfp, &arf0, &mut arf, &mut info_rfp, p),
                || factor_full(cuda, n, &a, &mut ours, &mut info, params),
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
            args.reps,
            || factor_rfp(cuda, other, &arf_other0, &mut arf_other, &mut info_rfp, params),
            || factor_full(cuda, n, &a, &mut ours, &mut info, params),
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
            factor_full(cuda, n, &a, &mut l, &mut info, params)
        })?;
        let (_, peak_rfp) = cuda.peak_memory(|| {
            let mut l = cuda.alloc::<f64>(rfp.len())?;
            factor_rfp(cuda, rfp, &arf0, &mut l, &mut info, params)
        })?;
        let (_, peak_vendor) = cuda.peak_memory(|| {
            let mut l = cuda.alloc::<f64>(n * n)?;
            let mut v = vendor::DenseCholesky::new(cuda, n)?;
            factor_vendor(cuda, n, &a, &mut l, &mut v)
        })?;

        // ‖A − L·Lᵀ‖_F / ‖A‖_F on the lower triangle, for each factor.
        let error = |l: &CudaBuffer<f64>| -> Result<f64> {
            let mut llt = cuda.alloc::<f64>(n * n)?;
            cholesky::reconstruct(cuda, Uplo::Lower, View::dense(l, n, n)?, ViewMut::dense(&mut llt, n, n)?)?;
            rel_diff(cuda, n, &llt, &a, Some(Uplo::Lower))
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
fn single_precision(cuda: &Cuda, args: &Args, n: usize, a: &CudaBuffer<f64>) -> Result<Value> {
    let mut a32 = cuda.alloc::<f32>(n * n)?;
    cuda.cast(View::dense(a, n, n)?, ViewMut::dense(&mut a32, n, n)?)?;
    let (mut ours, mut theirs) = (cuda.alloc::<f32>(n * n)?, cuda.alloc::<f32>(n * n)?);
    let mut info = cuda.upload(&[0i32])?;
    let mut vendor = vendor::DenseCholesky::<f32>::new(cuda, n)?;
    let params = CholeskyParams::for_order(n);
    let (t, t_vendor) = side_by_side(
        cuda,
        args.reps,
        || factor_full(cuda, n, &a32, &mut ours, &mut info, params),
        || factor_vendor(cuda, n, &a32, &mut theirs, &mut vendor),
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
        rel_diff(cuda, n, &llt, &rounded, Some(Uplo::Lower))
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

/// `A = α·11ᵀ + β·I` is SPD with a known factor: eliminating `j` columns
/// leaves `β·I + α_j·11ᵀ` with `α_j = αβ/(β + jα)`, so `L(j, j) =
/// √(β + α_j)` and `L(i, 0) = α/√(α + β)`.
const ALPHA: f64 = 1.0;

fn expected_diagonal(beta: f64, j: usize) -> f64 {
    (beta + ALPHA * beta / (beta + j as f64 * ALPHA)).sqrt()
}

/// The entries of the factor checked after a capacity run, as (row, col).
fn probes(n: usize) -> [(usize, usize); 4] {
    [(0, 0), (n / 2, n / 2), (n - 1, n - 1), (n - 1, 0)]
}

fn expected(n: usize, (i, j): (usize, usize)) -> f64 {
    let beta = n as f64;
    if i == j { expected_diagonal(beta, j) } else { ALPHA / (ALPHA + beta).sqrt() }
}

/// The entry at `offset` of a device buffer.
fn entry(cuda: &Cuda, buf: &CudaBuffer<f64>, offset: usize) -> Result<f64> {
    let mut one = cuda.alloc::<f64>(1)?;
    cuda.copy(View::new(buf, Block { offset, rows: 1, cols: 1, ld: 1 })?, ViewMut::dense(&mut one, 1, 1)?)?;
    let mut host = [0.0];
    cuda.download(&one, &mut host)?;
    Ok(host[0])
}

/// Largest `n` in `[lo, hi)` with `fits(n)`, given `fits(lo)` and not
/// `fits(hi)`; `fits` is monotone (a larger order needs more memory).
fn largest(lo: usize, hi: usize, fits: impl Fn(usize) -> Result<bool>) -> Result<usize> {
    let (mut lo, mut hi) = (lo, hi);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid)? { lo = mid } else { hi = mid }
    }
    Ok(lo)
}

/// Whether `f` succeeds: an allocation that does not fit is an `Err`. The
/// memory is given back before the next try.
fn succeeds<R>(cuda: &Cuda, f: impl FnOnce() -> Result<R>) -> Result<bool> {
    let ok = f().is_ok();
    cuda.synchronize()?;
    Ok(ok)
}

/// Factors `α·11ᵀ + β·I` of order `n` in RFP storage; returns the time and
/// the largest relative error of the probed entries.
fn confirm_rfp(cuda: &Cuda, n: usize) -> Result<(f64, f64)> {
    let rfp = gpumat::api::packed_layout(n);
    let mut arf = cuda.alloc::<f64>(rfp.len())?;
    cuda.fill(ViewMut::dense(&mut arf, rfp.len(), 1)?, ALPHA)?;
    let p = rfp.pieces();
    for t in [p.t1, p.t2].into_iter().filter(|t| t.full.rows > 0) {
        let diagonal = Block { offset: t.offset, rows: 1, cols: t.full.rows, ld: t.full.ld + 1 };
        cuda.fill(ViewMut::new(&mut arf, diagonal)?, ALPHA + n as f64)?;
    }
    let mut info = cuda.upload(&[0i32])?;
    cuda.synchronize()?;
    let start = Instant::now();
    let mut status = ViewMut::dense(&mut info, 1, 1)?;
    let params = CholeskyParams::for_order(n);
    cholesky::factor_rfp_in_place(cuda, rfp, &BufferMut::new(&mut arf), 0, &mut status, params)?;
    cuda.synchronize()?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let status = read_info(cuda, &info)?;
    if status != 0 {
        return Err(Error::Device(format!(
            "capacity: gpumat's RFP factorization at n = {n} failed with info {status}"
        )));
    }
    let mut err = 0.0f64;
    for (i, j) in probes(n) {
        let idx = rfp.index(i, j).ok_or_else(|| Error::Device(format!("({i}, {j}) is not in the RFP triangle")))?;
        err = err.max((entry(cuda, &arf, idx)? / expected(n, (i, j)) - 1.0).abs());
    }
    Ok((ms, err))
}

/// As [`confirm_rfp`], in full storage with cuSOLVER.
fn confirm_vendor(cuda: &Cuda, n: usize) -> Result<(f64, f64)> {
    let mut a = cuda.alloc::<f64>(n * n)?;
    cuda.fill(ViewMut::dense(&mut a, n, n)?, ALPHA)?;
    cuda.fill(ViewMut::new(&mut a, Block { offset: 0, rows: 1, cols: n, ld: n + 1 })?, ALPHA + n as f64)?;
    let mut vendor = vendor::DenseCholesky::new(cuda, n)?;
    cuda.synchronize()?;
    let start = Instant::now();
    vendor.factor(cuda, &mut a)?;
    cuda.synchronize()?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let status = vendor.info(cuda)?;
    if status != 0 {
        return Err(Error::Device(format!("capacity: cuSOLVER dpotrf at n = {n} failed with info {status}")));
    }
    let mut err = 0.0f64;
    for (i, j) in probes(n) {
        err = err.max((entry(cuda, &a, i + j * n)? / expected(n, (i, j)) - 1.0).abs());
    }
    Ok((ms, err))
}

/// The largest order whose FP64 Cholesky fits on the device: gpumat in RFP
/// storage (`n(n+1)/2` entries, no workspace) against cuSOLVER `dpotrf`
/// (`n²` entries and its workspace). Each is found by bisection on whether
/// its memory can be allocated, then confirmed by factoring a matrix with a
/// known factor at that order (stepping down 1% if that run does not fit).
pub fn capacity(cuda: &Cuda) -> Result<Vec<Value>> {
    // Kernels compiled, the side stream and cuSOLVER loaded before measuring.
    confirm_rfp(cuda, 1024)?;
    confirm_vendor(cuda, 1024)?;
    let free = cuda.memory()?.0;
    // No order past √(2·free/8) fits in either storage.
    let hi = ((free as f64 / 4.0).sqrt() as usize) + 2;
    let ours_fits = |n: usize| {
        succeeds(cuda, || {
            let _info = cuda.alloc::<i32>(1)?;
            cuda.alloc::<f64>(n * (n + 1) / 2)
        })
    };
    let vendor_fits = |n: usize| {
        succeeds(cuda, || {
            let _a = cuda.alloc::<f64>(n * n)?;
            vendor::DenseCholesky::<f64>::new(cuda, n)
        })
    };
    let (n_ours, t_ours, e_ours, b_ours) = find(cuda, "gpumat RFP", hi, ours_fits, confirm_rfp)?;
    let (n_vendor, t_vendor, e_vendor, b_vendor) = find(cuda, "cuSOLVER dpotrf", hi, vendor_fits, confirm_vendor)?;
    // What limits cuSOLVER: its workspace at that order, and the order its
    // matrix alone would reach.
    let vendor_workspace = vendor::DenseCholesky::<f64>::new(cuda, n_vendor)?.workspace_bytes();
    let matrix_only = largest(1024, hi, |n| succeeds(cuda, || cuda.alloc::<f64>(n * n)))?;
    let mut row = record(
        "potrf_capacity",
        n_ours,
        t_ours,
        t_vendor,
        None,
        json!({
            "gpumat_n": n_ours, "vendor_n": n_vendor, "capacity_ratio": n_ours as f64 / n_vendor as f64,
            "gpumat_bisected_n": b_ours, "vendor_bisected_n": b_vendor,
            "gpumat_entry_error": e_ours, "vendor_entry_error": e_vendor, "free_bytes": free,
            "vendor_workspace_bytes": vendor_workspace, "full_matrix_only_n": matrix_only,
            "capacity_ratio_to_matrix_only": n_ours as f64 / matrix_only as f64,
            "note": "times are of one factorization each at its own largest order: not equal work, no time ratio",
        }),
    );
    row["ratio"] = Value::Null;
    Ok(vec![row])
}

/// Bisection, then a confirming factorization: (order, ms, entry error,
/// bisected order).
fn find(
    cuda: &Cuda,
    name: &str,
    hi: usize,
    fits: impl Fn(usize) -> Result<bool>,
    confirm: fn(&Cuda, usize) -> Result<(f64, f64)>,
) -> Result<(usize, f64, f64, usize)> {
    let bisected = largest(1024, hi, fits)?;
    let mut n = bisected;
    let (ms, err) = loop {
        match confirm(cuda, n) {
            Ok(r) => break r,
            Err(e) if is_out_of_memory(&e) && n > bisected - bisected / 20 => {
                cuda.synchronize()?;
                n -= bisected / 100;
            }
            Err(e) => return Err(e),
        }
    };
    if err > 1e-12 {
        return Err(Error::Device(format!("capacity: {name} at n = {n}: factor entries off by {err:.2e}")));
    }
    println!(
        "{name}: largest order {n} (bisection {bisected}), factored in {:.1} s, entries within {err:.1e}",
        ms / 1e3
    );
    Ok((n, ms, err, bisected))
}

fn is_out_of_memory(e: &Error) -> bool {
    match e {
        Error::OutOfDeviceMemory { .. } => true,
        Error::Device(msg) => msg.contains("OUT_OF_MEMORY") || msg.contains("out of memory"),
        _ => false,
    }
}

/// Where the time of a full-storage factorization goes: the host's enqueue
/// time against the wall time, and the cost per call of each primitive at
/// the shapes the blocked algorithm uses. One factorization each of gpumat
/// and cuSOLVER runs inside a profiler range (`nsys --capture-range=cudaProfilerApi`,
/// `ncu --profile-from-start off`).
pub fn trace(cuda: &Cuda, args: &Args) -> Result<Vec<Value>> {
    use gpumat::backend::{Diag, Op, Side};
    let mut rows = vec![];
    for &n in &args.sizes {
        let mut a = random(cuda, n * n, 5)?;
        cuda.fill(ViewMut::new(&mut a, Block { offset: 0, rows: 1, cols: n, ld: n + 1 })?, 2.0 * n as f64)?;
        let (mut l, mut theirs, mut info) =
            (cuda.alloc::<f64>(n * n)?, cuda.alloc::<f64>(n * n)?, cuda.upload(&[0i32])?);
        let mut vendor = vendor::DenseCholesky::new(cuda, n)?;
        let params = CholeskyParams::for_order(n);
        factor_full(cuda, n, &a, &mut l, &mut info, params)?;
        factor_vendor(cuda, n, &a, &mut theirs, &mut vendor)?;
        cuda.synchronize()?;
        let start = Instant::now();
        factor_full(cuda, n, &a, &mut l, &mut info, params)?;
        let enqueue = start.elapsed().as_secs_f64() * 1e3;
        cuda.synchronize()?;
        let wall = start.elapsed().as_secs_f64() * 1e3;
        rows.push(json!({"op": "trace_enqueue", "n": n, "enqueue_ms": enqueue, "wall_ms": wall, "block_size": params.block_size}));

        // SAFETY: profiler range markers; no effect without a profiler.
        unsafe { cudarc::driver::sys::cuProfilerStart() };
        factor_full(cuda, n, &a, &mut l, &mut info, params)?;
        cuda.synchronize()?;
        factor_vendor(cuda, n, &a, &mut theirs, &mut vendor)?;
        cuda.synchronize()?;
        unsafe { cudarc::driver::sys::cuProfilerStop() };

        // Per-call times, `l` holding the factor so that solves are sane.
        let reps = 20;
        let per_call = |f: &mut dyn FnMut() -> Result<()>| per_call_us(cuda, reps, f);
        let nb = params.block_size;
        let mut w = cuda.alloc::<f64>(n * n)?;
        let mut out = vec![];
        for m in [64, 128, 256] {
            let l11 = View::new(&l, Block { offset: 0, rows: m, cols: m, ld: n })?;
            let mut us = per_call(&mut || {
                let b = ViewMut::new(&mut w, Block { offset: 0, rows: m, cols: m, ld: n })?;
                cuda.trsm(Side::Right, Uplo::Lower, Op::Trans, Diag::NonUnit, 1.0, l11, b)
            })?;
            out.push((format!("trsm {m}x{m}"), us));
            us = per_call(&mut || {
                let c = ViewMut::new(&mut w, Block { offset: 0, rows: m, cols: m, ld: n })?;
                cuda.syrk(Uplo::Lower, Op::NoTrans, -1.0, l11, 1.0, c)
            })?;
            out.push((format!("syrk {m} k {m}"), us));
        }
        let below = n - nb;
        let l11 = View::new(&l, Block { offset: 0, rows: nb, cols: nb, ld: n })?;
        let us = per_call(&mut || {
            let b = ViewMut::new(&mut w, Block { offset: nb, rows: below, cols: nb, ld: n })?;
            cuda.trsm(Side::Right, Uplo::Lower, Op::Trans, Diag::NonUnit, 1.0, l11, b)
        })?;
        out.push((format!("trsm panel {below}x{nb}"), us));
        let panel = View::new(&l, Block { offset: nb, rows: below, cols: nb, ld: n })?;
        let us = per_call(&mut || {
            let c = ViewMut::new(&mut w, Block { offset: 0, rows: below, cols: below, ld: n })?;
            cuda.syrk(Uplo::Lower, Op::NoTrans, -1.0, panel, 1.0, c)
        })?;
        out.push((format!("syrk trailing {below} k {nb}"), us));
        let us = per_call(&mut || {
            let x = View::new(&l, Block { offset: nb, rows: nb, cols: nb, ld: n })?;
            let c = ViewMut::new(&mut w, Block { offset: 0, rows: below, cols: nb, ld: n })?;
            cuda.gemm(-1.0, panel, Op::NoTrans, x, Op::Trans, 1.0, c)
        })?;
        out.push((format!("gemm {below}x{nb} k {nb}"), us));
        // Leaves: 64 copies of the leading 64 × 64 block, factored one each.
        let leaf = params.leaf_size;
        let copies = reps + 1;
        let mut leaves = cuda.alloc::<f64>(leaf * leaf * copies)?;
        for c in 0..copies {
            let dst = ViewMut::new(&mut leaves, Block { offset: c * leaf * leaf, rows: leaf, cols: leaf, ld: leaf })?;
            cuda.copy(View::new(&a, Block { offset: 0, rows: leaf, cols: leaf, ld: n })?, dst)?;
        }
        let mut c = 0;
        let us = per_call(&mut || {
            let blk = Block { offset: c * leaf * leaf, rows: leaf, cols: leaf, ld: leaf };
            c += 1;
            cuda.potrf(Uplo::Lower, ViewMut::new(&mut leaves, blk)?, ViewMut::dense(&mut info, 1, 1)?, 0)
        })?;
        out.push((format!("potrf leaf {leaf}"), us));
        // A whole block column as one panel, on a fresh copy each time; and
        // the same transposed, as one of the two triangles of an RFP array
        // stores it (upper, `Lᵀ`): a 64 × n panel.
        for (uplo, panel) in [
            (Uplo::Lower, Block { offset: 0, rows: n, cols: leaf, ld: n }),
            (Uplo::Upper, Block { offset: 0, rows: leaf, cols: n, ld: n }),
        ] {
            let copy = per_call(&mut || cuda.copy(View::new(&a, panel)?, ViewMut::new(&mut w, panel)?))?;
            let us = per_call(&mut || {
                cuda.copy(View::new(&a, panel)?, ViewMut::new(&mut w, panel)?)?;
                cuda.potrf_panel(uplo, ViewMut::new(&mut w, panel)?, ViewMut::dense(&mut info, 1, 1)?, 0)
            })?;
            let (rows, cols) = (panel.rows, panel.cols);
            out.push((format!("potrf_panel {uplo:?} {rows}x{cols} (copy of {copy:.1} µs taken off)"), us - copy));
        }
        // syrk and gemm on transposed blocks, and a whole factorization of
        // the upper triangle against the lower one.
        let panel_t = View::new(&l, Block { offset: nb * n, rows: nb, cols: below, ld: n })?;
        let us = per_call(&mut || {
            let c = ViewMut::new(&mut w, Block { offset: 0, rows: below, cols: below, ld: n })?;
            cuda.syrk(Uplo::Upper, Op::Trans, -1.0, panel_t, 1.0, c)
        })?;
        out.push((format!("syrk upper trans trailing {below} k {nb}"), us));
        // As `TRANSR = 'T'` updates `T2` (lower) from `S` (which holds `L21ᵀ`).
        let us = per_call(&mut || {
            let c = ViewMut::new(&mut w, Block { offset: 0, rows: below, cols: below, ld: n })?;
            cuda.syrk(Uplo::Lower, Op::Trans, -1.0, panel_t, 1.0, c)
        })?;
        out.push((format!("syrk lower trans trailing {below} k {nb}"), us));
        let us = per_call(&mut || {
            let x = View::new(&l, Block { offset: nb * n + nb, rows: nb, cols: nb, ld: n })?;
            let c = ViewMut::new(&mut w, Block { offset: 0, rows: nb, cols: below, ld: n })?;
            cuda.gemm(-1.0, x, Op::Trans, panel_t, Op::NoTrans, 1.0, c)
        })?;
        out.push((format!("gemm transposed {nb}x{below} k {nb}"), us));
        for uplo in [Uplo::Lower, Uplo::Upper] {
            let us = per_call(&mut || {
                cuda.copy(View::dense(&a, n, n)?, ViewMut::dense(&mut w, n, n)?)?;
                let mut status = ViewMut::dense(&mut info, 1, 1)?;
                cholesky::factor_in_place(
                    cuda,
                    uplo,
                    &BufferMut::new(&mut w),
                    Block::dense(n, n),
                    &mut status,
                    0,
                    params,
                )
            })?;
            out.push((format!("factorization {uplo:?} (with a copy)"), us));
        }
        let side = cuda.side()?;
        let us = per_call(&mut || {
            side.wait_for(cuda)?;
            cuda.wait_for(side)
        })?;
        out.push(("wait_for both ways".into(), us));
        let us = per_call(&mut || cuda.fill(ViewMut::dense(&mut info, 1, 1)?, 0))?;
        out.push(("launch (fill 1 entry)".into(), us));
        for (what, us) in out {
            println!("n {n}: {what}: {us:.1} µs");
            rows.push(json!({"op": format!("trace {what}"), "n": n, "us_per_call": us}));
        }
        // The host's share: enqueue time per call against time per call, for
        // the calls a block column makes, at its shapes.
        let tall = View::new(&l, Block { offset: nb, rows: below, cols: leaf, ld: n })?;
        let top = View::new(&l, Block { offset: nb, rows: leaf, cols: leaf, ld: n })?;
        let mut host: Vec<(String, (f64, f64))> = vec![];
        host.push((
            format!("potrf_panel {below}x{leaf}"),
            enqueue_and_per_call_us(cuda, reps, &mut || {
                let p = Block { offset: 0, rows: below, cols: leaf, ld: n };
                cuda.potrf_panel(Uplo::Lower, ViewMut::new(&mut w, p)?, ViewMut::dense(&mut info, 1, 1)?, 0)
            })?,
        ));
        host.push((
            format!("syrk {leaf} k {leaf}"),
            enqueue_and_per_call_us(cuda, reps, &mut || {
                let c = ViewMut::new(&mut w, Block { offset: 0, rows: leaf, cols: leaf, ld: n })?;
                cuda.syrk(Uplo::Lower, Op::NoTrans, -1.0, top, 1.0, c)
            })?,
        ));
        host.push((
            format!("gemm {below}x{leaf} k {leaf}"),
            enqueue_and_per_call_us(cuda, reps, &mut || {
                let c = ViewMut::new(&mut w, Block { offset: 0, rows: below, cols: leaf, ld: n })?;
                cuda.gemm(-1.0, tall, Op::NoTrans, top, Op::Trans, 1.0, c)
            })?,
        ));
        host.push((
            format!("syrk {nb} k {nb}"),
            enqueue_and_per_call_us(cuda, reps, &mut || {
                let x = View::new(&l, Block { offset: nb, rows: nb, cols: nb, ld: n })?;
                let c = ViewMut::new(&mut w, Block { offset: 0, rows: nb, cols: nb, ld: n })?;
                cuda.syrk(Uplo::Lower, Op::NoTrans, -1.0, x, 1.0, c)
            })?,
        ));
        host.push((
            "wait_for both ways".into(),
            enqueue_and_per_call_us(cuda, reps, &mut || {
                side.wait_for(cuda)?;
                cuda.wait_for(side)
            })?,
        ));
        for (what, (enqueue, us)) in host {
            println!("n {n}: host {what}: enqueue {enqueue:.1} µs of {us:.1} µs per call");
            rows.push(json!({"op": format!("trace host {what}"), "n": n, "enqueue_us": enqueue, "us_per_call": us}));
        }
    }
    Ok(rows)
}
