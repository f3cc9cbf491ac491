//! Batched tridiagonal solves on the CPU: `Backend::tridiagonal_solve`
//! (rayon over the systems) against a plain single-thread Thomas loop over
//! the same systems, FP64, diagonally dominant, one system per column. The
//! target is the loop's time divided by the number of cores, within 1.5 ×;
//! the loop also runs on one core of rayon's pool for the scaling.
//!
//! `cargo bench --bench tridiagonal`; `RAYON_NUM_THREADS` sets the cores.

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use gpumat::backend::{Backend, Block, Cpu, SystemLayout, ViewMut};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// `count` diagonally dominant systems of order `m`, system after system.
fn batch(m: usize, count: usize) -> [Vec<f64>; 4] {
    let mut r = StdRng::seed_from_u64(3);
    let mut x = |d: bool| -> Vec<f64> {
        (0..m * count).map(|_| if d { 3.0 + r.random_range(0.0..1.0) } else { r.random_range(-1.0..1.0) }).collect()
    };
    [x(false), x(true), x(false), x(false)]
}

/// Thomas's elimination on each system in turn, in place: the baseline.
fn thomas(m: usize, [dl, d, du, b]: &mut [Vec<f64>; 4]) {
    for s in 0..dl.len() / m {
        let o = s * m;
        for i in 1..m {
            let w = dl[o + i] / d[o + i - 1];
            d[o + i] -= w * du[o + i - 1];
            b[o + i] -= w * b[o + i - 1];
        }
        b[o + m - 1] /= d[o + m - 1];
        for i in (0..m - 1).rev() {
            b[o + i] = (b[o + i] - du[o + i] * b[o + i + 1]) / d[o + i];
        }
    }
}

/// `Backend::tridiagonal_solve` on the four buffers, one system per column.
fn solve(
    be: &Cpu,
    m: usize,
    count: usize,
    [dl, d, du, b]: &mut [<Cpu as Backend>::Buffer<f64>; 4],
    info: &mut <Cpu as Backend>::Buffer<i32>,
) {
    let block = Block::dense(m, count);
    be.tridiagonal_solve(
        SystemLayout::Columns,
        false,
        (ViewMut::new(dl, block).unwrap(), ViewMut::new(d, block).unwrap(), ViewMut::new(du, block).unwrap()),
        ViewMut::new(b, block).unwrap(),
        ViewMut::dense(info, count, 1).unwrap(),
    )
    .unwrap()
}

fn tridiagonal_cpu(c: &mut Criterion) {
    let be = Cpu::new();
    let mut group = c.benchmark_group("tridiagonal");
    group.sample_size(10);
    for (m, count) in [(256, 16384), (4096, 1024)] {
        let host = batch(m, count);
        let id = format!("{m}x{count}");
        group.bench_with_input(BenchmarkId::new("gpumat/tridiagonal_solve", &id), &m, |bench, &m| {
            bench.iter_batched_ref(
                || {
                    let bufs = host.clone().map(|v| be.upload(&v).unwrap());
                    (bufs, be.alloc::<i32>(count).unwrap())
                },
                |(bufs, info)| solve(&be, m, count, bufs, info),
                BatchSize::LargeInput,
            )
        });
        group.bench_with_input(BenchmarkId::new("thomas/single-thread", &id), &m, |bench, &m| {
            bench.iter_batched_ref(|| host.clone(), |a| thomas(m, a), BatchSize::LargeInput)
        });
    }
    group.finish();
    // The parallel path once more on one core, for the scaling.
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let mut group = c.benchmark_group("tridiagonal-1-core");
    group.sample_size(10);
    let (m, count) = (256, 16384);
    let host = batch(m, count);
    group.bench_function("gpumat/tridiagonal_solve", |bench| {
        bench.iter_batched_ref(
            || (host.clone().map(|v| be.upload(&v).unwrap()), be.alloc::<i32>(count).unwrap()),
            |(bufs, info)| one.install(|| solve(&be, m, count, bufs, info)),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, tridiagonal_cpu);
criterion_main!(benches);
