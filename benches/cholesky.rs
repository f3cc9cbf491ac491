//! CPU Cholesky of gpumat (blocked over the backend, faer underneath) side by
//! side with faer's own `llt`, on the same SPD matrix: gpumat's
//! target is within 1.25× of faer at n = 2048 on a 2-core machine.

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use faer::{Mat, Side};
use gpumat::backend::{Backend, Block, BufferMut, Cpu, ViewMut};
use gpumat::factor::cholesky::{self, CholeskyParams};
use gpumat::layout::Uplo;
use rand::{Rng, SeedableRng, rngs::StdRng};

fn spd(n: usize) -> Mat<f64> {
    let mut r = StdRng::seed_from_u64(1);
    let g = Mat::<f64>::from_fn(n, n, |_, _| r.random_range(-1.0..1.0));
    let mut a = &g * g.transpose();
    (0..n).for_each(|i| a[(i, i)] += n as f64);
    a
}

fn cholesky_cpu(c: &mut Criterion) {
    let be = Cpu::new();
    let mut group = c.benchmark_group("cholesky");
    group.sample_size(10);
    for n in [512usize, 2048] {
        let a = spd(n);
        let data: Vec<f64> = (0..n).flat_map(|j| a.col(j).iter().copied().collect::<Vec<_>>()).collect();
        for nb in [256usize, 512] {
            group.bench_with_input(BenchmarkId::new(format!("gpumat/nb{nb}"), n), &n, |bench, &n| {
                bench.iter_batched_ref(
                    || (be.upload(&data).unwrap(), be.upload(&[0i32]).unwrap()),
                    |(buf, info)| {
                        let a = BufferMut::new(buf);
                        let mut info = ViewMut::dense(info, 1, 1).unwrap();
                        let params = CholeskyParams {
                            block_size: nb,
                            leaf_size: 64,
                            update_tile: 1024,
                            ..CholeskyParams::default()
                        };
                        cholesky::factor_in_place(&be, Uplo::Lower, &a, Block::dense(n, n), &mut info, 0, params)
                            .unwrap()
                    },
                    BatchSize::LargeInput,
                )
            });
        }
        group.bench_with_input(BenchmarkId::new("faer/llt", n), &n, |bench, _| {
            bench.iter_batched_ref(|| a.clone(), |m| m.llt(Side::Lower).unwrap(), BatchSize::LargeInput)
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // Numbers only: plots need system fonts that a bare machine lacks.
    config = Criterion::default().without_plots();
    targets = cholesky_cpu
}
criterion_main!(benches);
