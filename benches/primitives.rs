//! CPU primitives of gpumat against faer called directly, side by side on the
//! same inputs: the harness every later CPU claim uses. The ratio
//! (faer time / gpumat time) should be ≈ 1 for the level-3 primitives, which
//! are faer underneath; what it measures is the cost of gpumat's layer.

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, Mat, Par};
use gpumat::backend::{Backend, Cpu, Diag, Op, Side, View, ViewMut};
use gpumat::layout::Uplo;
use rand::{Rng, SeedableRng, rngs::StdRng};

fn random(n: usize, seed: u64) -> Mat<f64> {
    let mut r = StdRng::seed_from_u64(seed);
    Mat::from_fn(n, n, |_, _| r.random_range(-1.0..1.0))
}

fn buffers(be: &Cpu, a: &Mat<f64>) -> <Cpu as Backend>::Buffer<f64> {
    let data: Vec<f64> = (0..a.ncols()).flat_map(|j| a.col(j).iter().copied().collect::<Vec<_>>()).collect();
    be.upload(&data).unwrap()
}

fn level3(c: &mut Criterion) {
    let be = Cpu::new();
    let par = Par::rayon(0);
    let mut group = c.benchmark_group("level3");
    group.sample_size(10);
    for n in [256usize, 1024] {
        let (a, b) = (random(n, 1), random(n, 2));
        let (ba, bb) = (buffers(&be, &a), buffers(&be, &b));
        let mut bc = be.alloc::<f64>(n * n).unwrap();
        let mut fc = Mat::<f64>::zeros(n, n);

        group.bench_with_input(BenchmarkId::new("gemm/gpumat", n), &n, |bench, &n| {
            bench.iter(|| {
                let (va, vb) = (View::dense(&ba, n, n).unwrap(), View::dense(&bb, n, n).unwrap());
                be.gemm(1.0, va, Op::NoTrans, vb, Op::NoTrans, 0.0, ViewMut::dense(&mut bc, n, n).unwrap()).unwrap()
            })
        });
        group.bench_with_input(BenchmarkId::new("gemm/faer", n), &n, |bench, _| {
            bench.iter(|| faer::linalg::matmul::matmul(fc.as_mut(), Accum::Replace, a.as_ref(), b.as_ref(), 1.0, par))
        });

        group.bench_with_input(BenchmarkId::new("syrk/gpumat", n), &n, |bench, &n| {
            bench.iter(|| {
                let va = View::dense(&ba, n, n).unwrap();
                be.syrk(Uplo::Lower, Op::NoTrans, 1.0, va, 0.0, ViewMut::dense(&mut bc, n, n).unwrap()).unwrap()
            })
        });
        group.bench_with_input(BenchmarkId::new("syrk/faer", n), &n, |bench, _| {
            bench.iter(|| {
                triangular::matmul(
                    fc.as_mut(),
                    BlockStructure::TriangularLower,
                    Accum::Replace,
                    a.as_ref(),
                    BlockStructure::Rectangular,
                    a.transpose(),
                    BlockStructure::Rectangular,
                    1.0,
                    par,
                )
            })
        });

        // A well-conditioned lower triangle for the solves.
        let l = Mat::<f64>::from_fn(n, n, |i, j| if i == j { 4.0 } else { a[(i, j)] / n as f64 });
        let bl = buffers(&be, &l);
        // Each solve starts from a fresh right-hand side (setup is not timed),
        // so repeated solves do not drift towards subnormal numbers.
        group.bench_with_input(BenchmarkId::new("trsm/gpumat", n), &n, |bench, &n| {
            bench.iter_batched_ref(
                || buffers(&be, &b),
                |rhs| {
                    let vl = View::dense(&bl, n, n).unwrap();
                    let vb = ViewMut::dense(rhs, n, n).unwrap();
                    be.trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, 1.0, vl, vb).unwrap()
                },
                BatchSize::LargeInput,
            )
        });
        group.bench_with_input(BenchmarkId::new("trsm/faer", n), &n, |bench, _| {
            bench.iter_batched_ref(
                || b.clone(),
                |rhs| faer::linalg::triangular_solve::solve_lower_triangular_in_place(l.as_ref(), rhs.as_mut(), par),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // Numbers only: plots need system fonts that a bare machine lacks.
    config = Criterion::default().without_plots();
    targets = level3
}
criterion_main!(benches);
