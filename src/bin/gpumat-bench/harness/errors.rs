//! Error measures on the device, the same for gpumat and the vendor so that
//! their figures compare.

use gpumat::backend::cuda::{Cuda, CudaBuffer};
use gpumat::backend::{Backend, Block, Norm, Op, View, ViewMut};
use gpumat::factor::{cholesky, ldlt};
use gpumat::layout::Uplo;
use gpumat::{Result, Scalar};

use super::inputs::random;

/// `‖X − Y‖ / ‖Y‖` of two dense `n × n` buffers in `norm` (Frobenius for a
/// relative difference, `Max` for the largest entry against the largest),
/// on the `uplo` triangle only if given.
pub fn rel_diff(
    cuda: &Cuda,
    n: usize,
    x: &CudaBuffer<f64>,
    y: &CudaBuffer<f64>,
    uplo: Option<Uplo>,
    norm: Norm,
) -> Result<f64> {
    let mut t = cuda.alloc::<f64>(n * n)?;
    let (xv, yv) = (View::dense(x, n, n)?, View::dense(y, n, n)?);
    let measure = |t: &mut CudaBuffer<f64>| -> Result<f64> {
        if let Some(u) = uplo {
            cuda.fill_strict_triangle(u.flip(), 0.0, ViewMut::dense(t, n, n)?)?;
        }
        cuda.norm(norm, View::dense(t, n, n)?)
    };
    cuda.geam(1.0, xv, Op::NoTrans, -1.0, yv, Op::NoTrans, ViewMut::dense(&mut t, n, n)?)?;
    let diff = measure(&mut t)?;
    cuda.copy(yv, ViewMut::dense(&mut t, n, n)?)?;
    Ok(diff / measure(&mut t)?)
}

/// Backward error of a product `C ≈ A·op(B)` of `n × n` matrices by a
/// random probe `x`: ‖C·x − A·(op(B)·x)‖₂ / (‖A‖_F·‖B‖_F·‖x‖₂). `lower`:
/// only C's lower triangle holds the (symmetric) result.
pub fn product_error(
    cuda: &Cuda,
    n: usize,
    a: &CudaBuffer<f64>,
    b: (&CudaBuffer<f64>, Op),
    c: &CudaBuffer<f64>,
    lower: bool,
) -> Result<f64> {
    let mut full = cuda.alloc::<f64>(n * n)?;
    cuda.copy(View::dense(c, n, n)?, ViewMut::dense(&mut full, n, n)?)?;
    if lower {
        cuda.symmetrize(Uplo::Lower, ViewMut::dense(&mut full, n, n)?)?;
    }
    let x = random(cuda, n, 4)?;
    let (mut cx, mut bx, mut abx) = (cuda.alloc::<f64>(n)?, cuda.alloc::<f64>(n)?, cuda.alloc::<f64>(n)?);
    let (xv, bv) = (View::dense(&x, n, 1)?, View::dense(b.0, n, n)?);
    cuda.gemm(1.0, View::dense(&full, n, n)?, Op::NoTrans, xv, Op::NoTrans, 0.0, ViewMut::dense(&mut cx, n, 1)?)?;
    cuda.gemm(1.0, bv, b.1, xv, Op::NoTrans, 0.0, ViewMut::dense(&mut bx, n, 1)?)?;
    let (av, bxv) = (View::dense(a, n, n)?, View::dense(&bx, n, 1)?);
    cuda.gemm(1.0, av, Op::NoTrans, bxv, Op::NoTrans, 0.0, ViewMut::dense(&mut abx, n, 1)?)?;
    cuda.axpy(-1.0, View::dense(&abx, n, 1)?, ViewMut::dense(&mut cx, n, 1)?)?;
    let norm = |v: View<'_, Cuda, f64>| cuda.norm(Norm::Frobenius, v);
    Ok(norm(View::dense(&cx, n, 1)?)? / (norm(av)? * norm(bv)? * norm(xv)?))
}

/// An FP64 copy of the dense `rows × cols` buffer `x` (exact from FP32).
pub fn widen<T: Scalar>(cuda: &Cuda, x: &CudaBuffer<T>, rows: usize, cols: usize) -> Result<CudaBuffer<f64>> {
    let mut y = cuda.alloc::<f64>(rows * cols)?;
    cuda.cast(View::dense(x, rows, cols)?, ViewMut::dense(&mut y, rows, cols)?)?;
    Ok(y)
}

/// The normwise backward error of `X` as a solution of `A·X = B`,
/// `‖B − A·X‖_∞ / (‖A‖_∞·‖X‖_∞ + ‖B‖_∞)` (Rigal and Gaches 1967): `A` the
/// whole `n × n` matrix (both triangles), `X` and `B` of `n × nrhs`.
pub fn solve_error(
    cuda: &Cuda,
    n: usize,
    a: &CudaBuffer<f64>,
    x: &CudaBuffer<f64>,
    b: &CudaBuffer<f64>,
    nrhs: usize,
) -> Result<f64> {
    let mut r = cuda.alloc::<f64>(n * nrhs)?;
    let (av, xv, bv) = (View::dense(a, n, n)?, View::dense(x, n, nrhs)?, View::dense(b, n, nrhs)?);
    cuda.copy(bv, ViewMut::dense(&mut r, n, nrhs)?)?;
    cuda.gemm(-1.0, av, Op::NoTrans, xv, Op::NoTrans, 1.0, ViewMut::dense(&mut r, n, nrhs)?)?;
    let inf = |v: View<'_, Cuda, f64>| cuda.norm(Norm::Inf, v);
    Ok(inf(View::dense(&r, n, nrhs)?)? / (inf(av)? * inf(xv)? + inf(bv)?))
}

/// `‖A − Pᵀ·L·D·Lᵀ·P‖_F / ‖A‖_F` on the lower triangle, for a factorization
/// in gpumat's form: `L` strictly below the diagonal of the `n × n` buffer
/// `l` (its diagonal taken as 1), the interchanges `ipiv` (1-based, applied
/// in order), `D` as its diagonal `d` and subdiagonal `e`.
pub fn ldlt_error(
    cuda: &Cuda,
    n: usize,
    a: &CudaBuffer<f64>,
    l: &CudaBuffer<f64>,
    ipiv: &CudaBuffer<i32>,
    (d, e): (&CudaBuffer<f64>, &CudaBuffer<f64>),
) -> Result<f64> {
    // D made dense: its diagonal, and its subdiagonal on both sides.
    let mut dense = cuda.alloc::<f64>(n * n)?;
    let row = |offset, len, ld| Block { offset, rows: 1, cols: len, ld };
    cuda.copy(View::new(d, row(0, n, 1))?, ViewMut::new(&mut dense, row(0, n, n + 1))?)?;
    if n > 1 {
        cuda.copy(View::new(e, row(0, n - 1, 1))?, ViewMut::new(&mut dense, row(1, n - 1, n + 1))?)?;
        cuda.copy(View::new(e, row(0, n - 1, 1))?, ViewMut::new(&mut dense, row(n, n - 1, n + 1))?)?;
    }
    let mut out = cuda.alloc::<f64>(n * n)?;
    let (lv, dv, pv) = (View::dense(l, n, n)?, View::dense(&dense, n, n)?, View::dense(ipiv, n, 1)?);
    ldlt::reconstruct(cuda, lv, dv, pv, ViewMut::dense(&mut out, n, n)?)?;
    drop(dense);
    rel_diff(cuda, n, &out, a, Some(Uplo::Lower), Norm::Frobenius)
}

/// `‖A − L·Lᵀ‖_F / ‖A‖_F` on the lower triangle, `L` the lower triangle of
/// the `n × n` buffer `l`.
pub fn cholesky_error(cuda: &Cuda, n: usize, a: &CudaBuffer<f64>, l: &CudaBuffer<f64>) -> Result<f64> {
    let mut llt = cuda.alloc::<f64>(n * n)?;
    cholesky::reconstruct(cuda, Uplo::Lower, View::dense(l, n, n)?, ViewMut::dense(&mut llt, n, n)?)?;
    rel_diff(cuda, n, &llt, a, Some(Uplo::Lower), Norm::Frobenius)
}
