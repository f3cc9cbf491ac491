//! Error measures on the device, the same for gpumat and the vendor so that
//! their figures compare.

use gpumat::Result;
use gpumat::backend::cuda::{Cuda, CudaBuffer};
use gpumat::backend::{Backend, Norm, Op, View, ViewMut};
use gpumat::layout::Uplo;

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
