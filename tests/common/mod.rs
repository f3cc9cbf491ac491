//! Shared by the integration tests: the device under test and FP64
//! references computed independently of gpumat (naive loops on the host).
#![allow(dead_code)]

use gpumat::Device;
use rand::{Rng, SeedableRng, rngs::StdRng};

/// The device the suite runs on: `GPUMAT_DEVICE` (cpu in CI, cuda on the GPU
/// machine), else whatever `auto` finds.
pub fn device() -> Device {
    Device::auto().expect("GPUMAT_DEVICE names a usable device")
}

pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// A column-major `rows × cols` matrix, entries uniform in [-1, 1).
pub fn random(rng: &mut StdRng, rows: usize, cols: usize) -> Vec<f64> {
    (0..rows * cols).map(|_| rng.random_range(-1.0..1.0)).collect()
}

/// `op(A)·op(B)` by the textbook triple loop, in f64.
pub fn naive_matmul(
    a: &[f64],
    (ar, ac): (usize, usize),
    ta: bool,
    b: &[f64],
    (br, bc): (usize, usize),
    tb: bool,
) -> (Vec<f64>, usize, usize) {
    let at = |i: usize, k: usize| if ta { a[k + i * ar] } else { a[i + k * ar] };
    let bt = |k: usize, j: usize| if tb { b[j + k * br] } else { b[k + j * br] };
    let (m, k) = if ta { (ac, ar) } else { (ar, ac) };
    let n = if tb { br } else { bc };
    let mut c = vec![0.0; m * n];
    for j in 0..n {
        for i in 0..m {
            c[i + j * m] = (0..k).map(|p| at(i, p) * bt(p, j)).sum();
        }
    }
    (c, m, n)
}

pub fn frobenius(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>().sqrt()
}

/// ‖x − y‖_F / ‖y‖_F (absolute when ‖y‖ = 0).
pub fn rel_error(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len(), "compared arrays differ in length");
    let diff: Vec<f64> = x.iter().zip(y).map(|(a, b)| a - b).collect();
    let ny = frobenius(y);
    frobenius(&diff) / if ny == 0.0 { 1.0 } else { ny }
}

/// Unit roundoff of `T`.
pub fn u<T: gpumat::Scalar>() -> f64 {
    T::unit_roundoff()
}
