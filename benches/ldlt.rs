//! CPU LDLᵀ with Bunch–Kaufman pivoting (Bunch and Kaufman 1977): gpumat
//! (blocked over the backend, its panel in `backend/cpu/ldlt.rs`, the
//! trailing update by faer's matmul) side by side with faer's own `lblt`, on
//! the same random symmetric indefinite matrix `G + Gᵀ`.
//!
//! Two pairs: the APIs as a user calls them (`Sym::ldlt`, which copies `A`
//! and reads `D` back, against `Mat::lblt`, which copies `A` and forms the
//! permutation; faer's default pivoting there is its partial pivoting with a
//! diagonal search), and the factorizations alone on a copy made outside the
//! timing (`factor_in_place` against faer's `cholesky_in_place` with partial
//! Bunch–Kaufman pivoting, the same strategy as gpumat's). gpumat's target is
//! within 1.25× of faer at n = 2048 on a 2-core machine.

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::lblt::factor::{self as lblt, LbltParams, PivotingStrategy};
use faer::{Auto, Mat, Par, Side, Spec};
use gpumat::backend::{Backend, Block, BufferMut, Cpu, Triangle, ViewMut};
use gpumat::factor::ldlt::{self, LdltParams, LdltPivoting};
use gpumat::layout::Uplo;
use gpumat::{Device, Sym};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// `G + Gᵀ` with `G` uniform in [−1, 1): symmetric and indefinite.
fn indefinite(n: usize) -> Mat<f64> {
    let mut r = StdRng::seed_from_u64(7);
    let g = Mat::<f64>::from_fn(n, n, |_, _| r.random_range(-1.0..1.0));
    &g + g.transpose()
}

fn col_major(a: &Mat<f64>) -> Vec<f64> {
    (0..a.ncols()).flat_map(|j| a.col(j).iter().copied().collect::<Vec<_>>()).collect()
}

fn ldlt_cpu(c: &mut Criterion) {
    let be = Cpu::new();
    let device = Device::cpu();
    let par = Par::rayon(0);
    let mut group = c.benchmark_group("ldlt");
    group.sample_size(10);
    for n in [512usize, 2048] {
        let a = indefinite(n);
        let data = col_major(&a);
        let sym = Sym::from_lower(device.from_col_major(n, n, &data).unwrap()).unwrap();
        let params = LdltParams::pivoted(n);

        group.bench_with_input(BenchmarkId::new("gpumat/Sym::ldlt", n), &n, |bench, _| {
            bench.iter(|| sym.ldlt().unwrap())
        });
        group
            .bench_with_input(BenchmarkId::new("faer/Mat::lblt", n), &n, |bench, _| bench.iter(|| a.lblt(Side::Lower)));
        group.bench_with_input(BenchmarkId::new("gpumat/factor_in_place", n), &n, |bench, &n| {
            let tri = Triangle::full(Uplo::Lower, Block::dense(n, n)).unwrap();
            bench.iter_batched_ref(
                || {
                    let buf = be.upload(&data).unwrap();
                    (buf, be.alloc::<i32>(n).unwrap(), be.alloc::<f64>(n).unwrap(), be.alloc::<f64>(n).unwrap())
                },
                |(buf, ipiv, d, e)| {
                    let a = BufferMut::new(buf);
                    let (ipiv, d, e) = (
                        ViewMut::dense(ipiv, n, 1).unwrap(),
                        ViewMut::dense(d, n, 1).unwrap(),
                        ViewMut::dense(e, n, 1).unwrap(),
                    );
                    ldlt::factor_in_place(&be, &tri, &a, ipiv, d, e, LdltPivoting::BunchKaufman, params).unwrap()
                },
                BatchSize::LargeInput,
            )
        });
        group.bench_with_input(BenchmarkId::new("faer/cholesky_in_place(partial)", n), &n, |bench, &n| {
            let faer_params: Spec<LbltParams, f64> =
                LbltParams { pivoting: PivotingStrategy::Partial, ..<LbltParams as Auto<f64>>::auto() }.into();
            let scratch = lblt::cholesky_in_place_scratch::<usize, f64>(n, par, faer_params);
            bench.iter_batched_ref(
                || (a.clone(), Diag::<f64>::zeros(n), vec![0usize; n], vec![0usize; n], MemBuffer::new(scratch)),
                |(m, subdiag, perm, perm_inv, mem)| {
                    let stack = MemStack::new(mem);
                    lblt::cholesky_in_place(m.as_mut(), subdiag.as_mut(), perm, perm_inv, par, stack, faer_params)
                        .0
                        .transposition_count
                },
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
    targets = ldlt_cpu
}
criterion_main!(benches);
