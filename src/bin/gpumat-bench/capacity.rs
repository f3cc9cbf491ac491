//! `--suite capacity`: the largest order whose FP64 Cholesky fits on the
//! device, gpumat in RFP storage against cuSOLVER `dpotrf` in full storage,
//! each found by bisection on what can be allocated and confirmed by a
//! factorization of a matrix with a known factor (`--sizes` is not used).

use gpumat::backend::cuda::{Cuda, vendor};
use gpumat::backend::{Backend, Block, BufferMut, ViewMut};
use gpumat::factor::cholesky::{self, CholeskyParams};
use gpumat::{Error, Result};
use serde_json::{Value, json};

use crate::harness::capacity::{Found, entry, find, largest, succeeds};
use crate::harness::factorizations::read_info;
use crate::harness::results::record;
use crate::harness::timing::wall_ms;

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
    let params = CholeskyParams::for_order(n);
    let ms = wall_ms(cuda, &mut || {
        let mut status = ViewMut::dense(&mut info, 1, 1)?;
        cholesky::factor_rfp_in_place(cuda, rfp, &BufferMut::new(&mut arf), 0, &mut status, params)
    })?;
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
    let ms = wall_ms(cuda, &mut || vendor.factor(cuda, &mut a))?;
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
pub fn run(cuda: &Cuda) -> Result<Vec<Value>> {
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
    let Found { n: n_ours, ms: t_ours, entry_error: e_ours, bisected: b_ours } =
        find(cuda, "gpumat RFP", hi, ours_fits, confirm_rfp)?;
    let Found { n: n_vendor, ms: t_vendor, entry_error: e_vendor, bisected: b_vendor } =
        find(cuda, "cuSOLVER dpotrf", hi, vendor_fits, confirm_vendor)?;
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
