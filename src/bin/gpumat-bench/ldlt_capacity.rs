//! `--suite ldlt-capacity`: the largest order whose FP64 LDLᵀ with
//! Bunch–Kaufman pivoting fits on the device, gpumat in RFP storage against
//! cuSOLVER `dsytrf` in full storage, each found by bisection on what can
//! be allocated and confirmed by factoring a symmetric indefinite matrix
//! with a known factor (`--sizes` is not used). As `--suite capacity` does
//! for Cholesky, through the same search (`harness::capacity`).

use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::{Backend, Block, BufferMut, Triangle, View, ViewMut};
use gpumat::factor::ldlt::{self, LdltParams, LdltPivoting};
use gpumat::layout::Rfp;
use gpumat::{Error, Result};
use serde_json::{Value, json};

use crate::harness::capacity::{Found, entry, find, is_out_of_memory, largest, succeeds};
use crate::harness::results::record;
use crate::harness::timing::wall_ms;

/// `A = α·11ᵀ + β·diag(s)` with `β = n`, `s_j = +1` below the RFP split `n1`
/// and `−1` from it: `n1` positive and `n − n1` negative eigenvalues. Every
/// step of the elimination leaves `diag(β·s) + c_j·11ᵀ` on the trailing
/// rows, with `1/c_j = 1/α + Σ_{k<j} 1/(β·s_k)` (between 2/3 and 1 here): a
/// diagonal entry `c_j ± β` outweighs the `c_j` below it, so Bunch–Kaufman
/// takes every pivot 1×1 without an interchange, `D(j) = c_j + β·s_j` and
/// `L(i, j) = c_j / D(j)` for `i > j`.
const ALPHA: f64 = 1.0;

/// The order past which cuSOLVER's 32-bit `sytrf` has `n·n ≥ 2³¹` entries.
const LEGACY_MAX: usize = 46340;

/// `(c_j, D(j))` of the matrix of order `n` split at `n1`.
fn expected(n: usize, n1: usize, j: usize) -> (f64, f64) {
    let beta = n as f64;
    let (positive, negative) = (j.min(n1) as f64, j.saturating_sub(n1) as f64);
    let c = 1.0 / (1.0 / ALPHA + (positive - negative) / beta);
    (c, c + if j < n1 { beta } else { -beta })
}

/// The off-diagonal entries of `L` checked after a run, as (row, col).
fn probes(n: usize, n1: usize) -> [(usize, usize); 4] {
    [(n - 1, 0), (n - 1, n1.saturating_sub(1)), (n - 1, n1.min(n - 2)), (n / 2 + 1, n / 2)]
}

/// The largest relative error of `D` (all of it, `d`) and of the probed
/// entries of `L` (`at` reads entry `(i, j)`), after checking that no
/// interchange and no 2×2 block was taken.
fn check(
    name: &str,
    n: usize,
    n1: usize,
    (d, ipiv, two_by_two): (&[f64], &[i64], usize),
    at: impl Fn(usize, usize) -> Result<f64>,
) -> Result<f64> {
    if let Some(j) = ipiv.iter().enumerate().position(|(j, &p)| p != j as i64 + 1) {
        return Err(Error::Device(format!("capacity: {name} at n = {n} interchanged at step {j} ({})", ipiv[j])));
    }
    if two_by_two > 0 {
        return Err(Error::Device(format!("capacity: {name} at n = {n} took {two_by_two} 2×2 blocks")));
    }
    let mut err = 0.0f64;
    for (j, &x) in d.iter().enumerate() {
        err = err.max((x / expected(n, n1, j).1 - 1.0).abs());
    }
    for (i, j) in probes(n, n1) {
        let (c, dj) = expected(n, n1, j);
        err = err.max((at(i, j)? / (c / dj) - 1.0).abs());
    }
    Ok(err)
}

/// The RFP array of the matrix of order `n`.
fn rfp_matrix(cuda: &Cuda, rfp: Rfp) -> Result<CudaBuffer<f64>> {
    let n = rfp.n;
    let mut arf = cuda.alloc::<f64>(rfp.len())?;
    cuda.fill(ViewMut::dense(&mut arf, rfp.len(), 1)?, ALPHA)?;
    let p = rfp.pieces();
    for (t, sign) in [(p.t1, 1.0), (p.t2, -1.0)].into_iter().filter(|(t, _)| t.full.rows > 0) {
        let diagonal = Block { offset: t.offset, rows: 1, cols: t.full.rows, ld: t.full.ld + 1 };
        cuda.fill(ViewMut::new(&mut arf, diagonal)?, ALPHA + sign * n as f64)?;
    }
    Ok(arf)
}

/// Factors the matrix of order `n` in RFP storage with gpumat; returns the
/// time and the largest relative error of the checked entries.
fn confirm_rfp(cuda: &Cuda, n: usize) -> Result<(f64, f64)> {
    let rfp = gpumat::api::packed_layout(n);
    let n1 = rfp.pieces().n1;
    let mut arf = rfp_matrix(cuda, rfp)?;
    let (mut ipiv, mut d, mut e) = (cuda.alloc::<i32>(n)?, cuda.alloc::<f64>(n)?, cuda.alloc::<f64>(n)?);
    let tri = Triangle::rfp(rfp, 0);
    let params = LdltParams::pivoted(n);
    let mut zero = None;
    let ms = wall_ms(cuda, &mut || {
        let (p, dv, ev) =
            (ViewMut::dense(&mut ipiv, n, 1)?, ViewMut::dense(&mut d, n, 1)?, ViewMut::dense(&mut e, n, 1)?);
        zero = ldlt::factor_in_place(
            cuda,
            &tri,
            &BufferMut::new(&mut arf),
            p,
            dv,
            ev,
            LdltPivoting::BunchKaufman,
            params,
        )?;
        Ok(())
    })?;
    if let Some(column) = zero {
        return Err(Error::Device(format!("capacity: gpumat's RFP LDLᵀ at n = {n}: zero pivot at {column}")));
    }
    let (mut dh, mut eh, mut ph) = (vec![0.0; n], vec![0.0; n], vec![0i32; n]);
    cuda.download(&d, &mut dh)?;
    cuda.download(&e, &mut eh)?;
    cuda.download(&ipiv, &mut ph)?;
    let ph: Vec<i64> = ph.into_iter().map(i64::from).collect();
    let two_by_two = eh.iter().filter(|x| **x != 0.0).count();
    let at = |i: usize, j: usize| -> Result<f64> {
        let idx = rfp.index(i, j).ok_or_else(|| Error::Device(format!("({i}, {j}) is not in the RFP triangle")))?;
        entry(cuda, &arf, idx)
    };
    Ok((ms, check("gpumat RFP", n, n1, (&dh, &ph, two_by_two), at)?))
}

/// As [`confirm_rfp`], in full storage with cuSOLVER `dsytrf`.
fn confirm_vendor(cuda: &Cuda, n: usize) -> Result<(f64, f64)> {
    let n1 = gpumat::api::packed_layout(n).pieces().n1;
    let mut a = cuda.alloc::<f64>(n * n)?;
    cuda.fill(ViewMut::dense(&mut a, n, n)?, ALPHA)?;
    let diagonal = |offset, len| Block { offset, rows: 1, cols: len, ld: n + 1 };
    cuda.fill(ViewMut::new(&mut a, diagonal(0, n1))?, ALPHA + n as f64)?;
    cuda.fill(ViewMut::new(&mut a, diagonal(n1 * (n + 1), n - n1))?, ALPHA - n as f64)?;
    let mut v = vendor::DenseLdlt::<f64>::new(cuda, n)?;
    let ms = wall_ms(cuda, &mut || v.factor(cuda, &mut a))?;
    let status = v.info(cuda)?;
    if status != 0 {
        return Err(Error::Device(format!("capacity: cuSOLVER dsytrf at n = {n} failed with info {status}")));
    }
    let ipiv: Vec<i64> = v.pivots(cuda)?.into_iter().map(i64::from).collect();
    let two_by_two = ipiv.iter().filter(|&&p| p < 0).count() / 2;
    let mut d = cuda.alloc::<f64>(n)?;
    cuda.copy(View::new(&a, diagonal(0, n))?, ViewMut::new(&mut d, Block { offset: 0, rows: 1, cols: n, ld: 1 })?)?;
    let mut dh = vec![0.0; n];
    cuda.download(&d, &mut dh)?;
    let at = |i: usize, j: usize| entry(cuda, &a, i + j * n);
    Ok((ms, check("cuSOLVER dsytrf", n, n1, (&dh, &ipiv, two_by_two), at)?))
}

/// The largest order whose FP64 LDLᵀ fits on the device: gpumat in RFP
/// storage (`n(n+1)/2` entries, two `n × 65` panel copies, pivots and `D`)
/// against cuSOLVER `dsytrf` (`n²` entries, its workspace and pivots).
/// Each is found by bisection on whether its memory can be allocated, then
/// confirmed by a factorization at that order (stepping down 1% at a time
/// while that run does not fit). cuSOLVER's `sytrf` has only the 32-bit
/// API: if it fails past order 46340 for another reason than memory, the
/// failure is recorded and its largest order is sought again below that.
pub fn run(cuda: &Cuda) -> Result<Vec<Value>> {
    // Kernels compiled, the side stream and cuSOLVER loaded before measuring.
    confirm_rfp(cuda, 1024)?;
    confirm_vendor(cuda, 1024)?;
    let free = cuda.memory()?.0;
    // No order past √(2·free/8) fits in either storage.
    let hi = ((free as f64 / 4.0).sqrt() as usize) + 2;
    let ours_fits = |n: usize| {
        succeeds(cuda, || {
            let width = (LdltParams::pivoted(n).block_size + 1).min(n);
            let _panels = cuda.alloc::<f64>(2 * n * width)?;
            let _pivots = (cuda.alloc::<i32>(n + 2)?, cuda.alloc::<f64>(2 * n)?);
            cuda.alloc::<f64>(n * (n + 1) / 2)
        })
    };
    let vendor_fits = |n: usize| {
        succeeds(cuda, || {
            let _a = cuda.alloc::<f64>(n * n)?;
            vendor::DenseLdlt::<f64>::new(cuda, n)
        })
    };
    let ours = find(cuda, "gpumat RFP LDLᵀ", hi, ours_fits, confirm_rfp)?;
    let (vendor, vendor_failure) = match find(cuda, "cuSOLVER dsytrf", hi, vendor_fits, confirm_vendor) {
        Ok(found) => (found, None),
        Err(e) if !is_out_of_memory(&e) && hi > LEGACY_MAX + 1 => {
            println!("cuSOLVER dsytrf failed at its memory limit ({e}); searching up to order {LEGACY_MAX}");
            cuda.synchronize()?;
            (find(cuda, "cuSOLVER dsytrf", LEGACY_MAX + 1, vendor_fits, confirm_vendor)?, Some(e.to_string()))
        }
        Err(e) => return Err(e),
    };
    // What limits cuSOLVER: its workspace at that order, and the order its
    // matrix alone would reach.
    let vendor_workspace = vendor::DenseLdlt::<f64>::new(cuda, vendor.n)?.workspace_bytes();
    let matrix_only = largest(1024, hi, |n| succeeds(cuda, || cuda.alloc::<f64>(n * n)))?;
    let Found { n: n_ours, ms: t_ours, .. } = ours;
    let tflops = |n: usize, ms: f64| (n as f64).powi(3) / 3.0 / (ms * 1e9);
    let mut row = record(
        "sytrf_capacity",
        n_ours,
        t_ours,
        vendor.ms,
        None,
        json!({
            "gpumat_n": n_ours, "vendor_n": vendor.n, "capacity_ratio": n_ours as f64 / vendor.n as f64,
            "gpumat_bisected_n": ours.bisected, "vendor_bisected_n": vendor.bisected,
            "gpumat_entry_error": ours.entry_error, "vendor_entry_error": vendor.entry_error,
            "gpumat_tflops_at_own_n": tflops(n_ours, t_ours), "vendor_tflops_at_own_n": tflops(vendor.n, vendor.ms),
            "free_bytes": free, "vendor_workspace_bytes": vendor_workspace, "full_matrix_only_n": matrix_only,
            "capacity_ratio_to_matrix_only": n_ours as f64 / matrix_only as f64,
            "vendor_failure_at_memory_limit": vendor_failure,
            "note": "times are of one factorization each at its own largest order: not equal work, no time ratio",
        }),
    );
    row["ratio"] = Value::Null;
    Ok(vec![row])
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumat::backend::Cpu;

    /// The known factor, checked on the CPU in RFP storage: every pivot
    /// 1×1 in place, `D` and `L` as [`expected`] says.
    #[test]
    fn known_factor_on_the_cpu() {
        let be = Cpu::new();
        for n in [300, 301] {
            let rfp = gpumat::api::packed_layout(n);
            let n1 = rfp.pieces().n1;
            let mut full = vec![ALPHA; n * n];
            for j in 0..n {
                full[j + j * n] += if j < n1 { n as f64 } else { -(n as f64) };
            }
            let a = be.upload(&full).unwrap();
            let mut arf = be.alloc::<f64>(rfp.len()).unwrap();
            be.full_to_rfp(View::dense(&a, n, n).unwrap(), rfp, ViewMut::dense(&mut arf, rfp.len(), 1).unwrap())
                .unwrap();
            let (mut ipiv, mut d, mut e) =
                (be.alloc::<i32>(n).unwrap(), be.alloc::<f64>(n).unwrap(), be.alloc::<f64>(n).unwrap());
            let params = LdltParams { block_size: 16, leaf_size: 16, update_tile: 64 };
            ldlt::factor_in_place(
                &be,
                &Triangle::rfp(rfp, 0),
                &BufferMut::new(&mut arf),
                ViewMut::dense(&mut ipiv, n, 1).unwrap(),
                ViewMut::dense(&mut d, n, 1).unwrap(),
                ViewMut::dense(&mut e, n, 1).unwrap(),
                LdltPivoting::BunchKaufman,
                params,
            )
            .unwrap();
            let (mut dh, mut eh, mut ph, mut lh) = (vec![0.0; n], vec![0.0; n], vec![0i32; n], vec![0.0; rfp.len()]);
            be.download(&d, &mut dh).unwrap();
            be.download(&e, &mut eh).unwrap();
            be.download(&ipiv, &mut ph).unwrap();
            be.download(&arf, &mut lh).unwrap();
            let ph: Vec<i64> = ph.into_iter().map(i64::from).collect();
            let two_by_two = eh.iter().filter(|x| **x != 0.0).count();
            let at = |i: usize, j: usize| Ok(lh[rfp.index(i, j).unwrap()]);
            let err = check("CPU", n, n1, (&dh, &ph, two_by_two), at).unwrap();
            assert!(err < 1e-13, "n = {n}: {err:.2e}");
            // Every entry of L, not only the probes.
            for j in 0..n {
                let (c, dj) = expected(n, n1, j);
                for i in j + 1..n {
                    let x = lh[rfp.index(i, j).unwrap()];
                    assert!((x / (c / dj) - 1.0).abs() < 1e-12, "L({i}, {j}) = {x}, expected {}", c / dj);
                }
            }
        }
    }
}
