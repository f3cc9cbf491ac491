//! Random inputs, fresh for every order and never zeros; a matrix that must
//! be SPD is made so. The generators start from fixed states, so that runs
//! on different days factor the same matrices.

use std::ops::Range;

use gpumat::Result;
use gpumat::backend::cuda::{Cuda, CudaBuffer, vendor};
use gpumat::backend::{Backend, Block, Op, View, ViewMut};
use gpumat::layout::Uplo;
use gpumat::solve::wls_problem;
use rand::{Rng, SeedableRng, rngs::StdRng};

/// `len` entries uniform in `range`, from a generator seeded with `seed`.
pub fn uniform(len: usize, seed: u64, range: Range<f64>) -> Vec<f64> {
    let mut r = StdRng::seed_from_u64(seed);
    (0..len).map(|_| r.random_range(range.clone())).collect()
}

/// `len` entries uniform in [−1, 1) on the device.
pub fn random(cuda: &Cuda, len: usize, seed: u64) -> Result<CudaBuffer<f64>> {
    cuda.upload(&uniform(len, seed, -1.0..1.0))
}

/// An `n × n` matrix with entries in [−1, 1) and diagonal `2n`: its lower
/// triangle, which a Cholesky factorization reads, is that of a strictly
/// diagonally dominant, hence positive definite, symmetric matrix.
pub fn diagonally_dominant(cuda: &Cuda, n: usize, seed: u64) -> Result<CudaBuffer<f64>> {
    let mut a = random(cuda, n * n, seed)?;
    cuda.fill(ViewMut::new(&mut a, Block { offset: 0, rows: 1, cols: n, ld: n + 1 })?, 2.0 * n as f64)?;
    Ok(a)
}

/// `G + Gᵀ` of order `n`, `G` with entries uniform in [−1, 1) from the
/// generator state `state`: symmetric and indefinite, its eigenvalues
/// spread over both signs.
pub fn symmetric_indefinite(cuda: &Cuda, n: usize, state: u64) -> Result<CudaBuffer<f64>> {
    let g = random(cuda, n * n, state)?;
    let mut a = cuda.alloc::<f64>(n * n)?;
    let gv = View::dense(&g, n, n)?;
    cuda.geam(1.0, gv, Op::NoTrans, 1.0, gv, Op::Trans, ViewMut::dense(&mut a, n, n)?)?;
    Ok(a)
}

/// `U·diag(σ)·Vᵀ` of order `n` with `σᵢ = cond^(−i/(n−1))`, geometric from
/// 1 to `1/cond` (Higham's `randsvd`, mode 3, the hardest spread for a
/// low-precision preconditioner), `U` and `V` the orthogonal factors of
/// random matrices (cuSOLVER `dgeqrf`, `dorgqr`); `V = U`, and symmetric to
/// the last bit, when `spd`.
pub fn conditioned(cuda: &Cuda, n: usize, cond: f64, spd: bool, seed: u64) -> Result<CudaBuffer<f64>> {
    let orthogonal = |seed| -> Result<CudaBuffer<f64>> {
        let mut q = random(cuda, n * n, seed)?;
        let mut qr = vendor::DenseQr::<f64>::new(cuda, n, n)?;
        qr.factor(cuda, &mut q)?;
        qr.explicit_q(cuda, &mut q)?;
        Ok(q)
    };
    let mut us = orthogonal(seed)?;
    let v = if spd {
        let mut copy = cuda.alloc::<f64>(n * n)?;
        cuda.copy(View::dense(&us, n, n)?, ViewMut::dense(&mut copy, n, n)?)?;
        copy
    } else {
        orthogonal(seed ^ 0x9e37)?
    };
    let sigma: Vec<f64> = (0..n).map(|i| cond.powf(-(i as f64) / (n.max(2) - 1) as f64)).collect();
    cuda.scale_cols(ViewMut::dense(&mut us, n, n)?, View::dense(&cuda.upload(&sigma)?, n, 1)?)?;
    let mut a = cuda.alloc::<f64>(n * n)?;
    let (uv, vv) = (View::dense(&us, n, n)?, View::dense(&v, n, n)?);
    cuda.gemm(1.0, uv, Op::NoTrans, vv, Op::Trans, 0.0, ViewMut::dense(&mut a, n, n)?)?;
    if spd {
        cuda.symmetrize(Uplo::Lower, ViewMut::dense(&mut a, n, n)?)?;
    }
    Ok(a)
}

/// A weighted least-squares problem `(A, d, b)`: `A` is `m × 2m`, `d` and
/// `b` have `2m` entries.
pub type WlsData<V> = (V, V, V);

/// A problem on the host and the same on the device.
pub type WlsProblem = (WlsData<Vec<f64>>, WlsData<CudaBuffer<f64>>);

/// The random problem of Jung & O'Leary's Table 1 with `m` unknowns (seed
/// 2008, as `gpumat wls-table`), on the host and on the device.
pub fn wls_problem(cuda: &Cuda, m: usize) -> Result<WlsProblem> {
    let (a, d, b) = wls_problem::random(2008, m, false)?;
    let device = (cuda.upload(&a)?, cuda.upload(&d)?, cuda.upload(&b)?);
    Ok(((a, d, b), device))
}
