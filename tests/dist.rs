//! Distributed factorizations against FP64 references: on the CPU with
//! simulated ranks (threads and channels) on grids up to 2 × 3; with
//! `GPUMAT_DEVICE=cuda`, on NCCL ranks, one per GPU, on every grid the
//! GPUs allow (1 × 1 exercises NCCL's set-up on one GPU).

mod common;

use faer::Mat;
use faer::linalg::solvers::DenseSolveCore;
use gpumat::Error;
use gpumat::backend::Backend;
use gpumat::dist::{Cluster, Communicator, DistMatrix, DistParams, Grid, cholesky, cholesky_solve, lu, lu_solve};

/// The grids of the CPU runs: a row, a column, square and oblong.
const CPU_GRIDS: [(usize, usize); 6] = [(1, 1), (1, 2), (2, 1), (2, 2), (2, 3), (3, 2)];

fn on_gpu() -> bool {
    std::env::var("GPUMAT_DEVICE").is_ok_and(|d| d.trim().eq_ignore_ascii_case("cuda"))
}

/// `f(cluster)` on each grid: simulated ranks on the CPU, NCCL ranks on the
/// GPUs when the suite runs there.
macro_rules! on_each_grid {
    (|$cluster:ident| $body:block) => {{
        if on_gpu() {
            let devices = gpumat::dist::devices_from_env().expect("GPUs to count");
            for (p, q) in [(1, 1), (1, 2), (2, 1), (2, 2)] {
                if p * q > devices.len() {
                    eprintln!("skipping the {p} × {q} grid: {} GPUs", devices.len());
                    continue;
                }
                let grid = Grid::new(p, q).unwrap();
                let $cluster = Cluster::cuda(grid, &devices[..p * q], Default::default()).expect("NCCL ranks");
                $body
            }
        } else {
            for (p, q) in CPU_GRIDS {
                let $cluster = Cluster::cpu(Grid::new(p, q).unwrap());
                $body
            }
        }
    }};
}

/// A random symmetric positive definite matrix, `Q·Λ·Qᵀ`-like: `G·Gᵀ/n + I`.
fn spd(n: usize, seed: u64) -> Mat<f64> {
    let g = common::random(&mut common::rng(seed), n, n);
    Mat::from_fn(n, n, |i, j| (0..n).map(|k| g[i + k * n] * g[j + k * n]).sum::<f64>() / n as f64 + f64::from(i == j))
}

/// ‖A − L·Lᵀ‖_F / ‖A‖_F over the lower triangle's `L`, by the textbook loop.
fn cholesky_backward_error(a: &Mat<f64>, factor: &Mat<f64>) -> f64 {
    let n = a.nrows();
    let l = |i: usize, j: usize| if i >= j { factor[(i, j)] } else { 0.0 };
    let (mut diff, mut norm) = (0.0, 0.0);
    for j in 0..n {
        for i in 0..n {
            let llt: f64 = (0..=i.min(j)).map(|k| l(i, k) * l(j, k)).sum();
            diff += (a[(i, j)] - llt).powi(2);
            norm += a[(i, j)].powi(2);
        }
    }
    (diff / norm).sqrt()
}

fn check_cholesky<B: Backend, C: Communicator<B>>(cluster: &Cluster<B, C>, n: usize, nb: usize) {
    let a = spd(n, 7 + n as u64);
    let mut d = DistMatrix::from_host(cluster, a.as_ref(), nb).unwrap();
    let params = DistParams { update_tile: 2 * nb, ..Default::default() };
    cholesky(cluster, &mut d, params).unwrap();
    let l = d.to_host(cluster).unwrap();
    let err = cholesky_backward_error(&a, &l);
    // ‖A − L·Lᵀ‖ ≤ c·n·u·‖A‖ (Higham 2002, Thm 10.3), c = 4.
    let bound = 4.0 * n as f64 * f64::EPSILON / 2.0;
    let grid = cluster.grid();
    assert!(err <= bound, "{} × {} grid, n = {n}, nb = {nb}: ‖A − LLᵀ‖/‖A‖ = {err:.2e} > {bound:.2e}", grid.p, grid.q);
    // The same factor as one device's, up to rounding: against faer's.
    let reference = a.llt(faer::Side::Lower).unwrap().L().to_owned();
    let (mut diff, mut norm) = (0.0f64, 0.0f64);
    for j in 0..n {
        for i in j..n {
            diff = diff.max((l[(i, j)] - reference[(i, j)]).abs());
            norm = norm.max(reference[(i, j)].abs());
        }
    }
    assert!(
        diff <= 1e3 * n as f64 * f64::EPSILON * norm,
        "{} × {}: L differs from faer's by {diff:.2e}",
        grid.p,
        grid.q
    );
}

#[test]
fn cholesky_matches_the_reference_on_every_grid() {
    on_each_grid!(|cluster| {
        // Whole blocks, a short last block, and fewer blocks than ranks.
        for (n, nb) in [(48, 8), (61, 8), (37, 5), (7, 4), (1, 4)] {
            check_cholesky(&cluster, n, nb);
        }
    });
}

#[test]
fn cholesky_names_the_first_column_that_is_not_positive() {
    on_each_grid!(|cluster| {
        let n = 30;
        let mut a = spd(n, 3);
        // The leading minor of order 18 is indefinite: its last pivot < 0.
        a[(17, 17)] = -50.0;
        let mut d = DistMatrix::from_host(&cluster, a.as_ref(), 4).unwrap();
        match cholesky(&cluster, &mut d, DistParams::default()) {
            Err(Error::NotPositiveDefinite { column }) => assert_eq!(column, 18),
            other => panic!("expected NotPositiveDefinite at 18, got {other:?}"),
        }
    });
}

/// ‖P·A − L·U‖_F / ‖A‖_F, with the interchanges applied to `A` in order.
fn lu_backward_error(a: &Mat<f64>, factor: &Mat<f64>, ipiv: &[i32]) -> f64 {
    let n = a.nrows();
    let mut pa = a.clone();
    gpumat::dist::permute_rows(ipiv, &mut pa).unwrap();
    let l = |i: usize, k: usize| {
        if i == k {
            1.0
        } else if i > k {
            factor[(i, k)]
        } else {
            0.0
        }
    };
    let u = |k: usize, j: usize| if k <= j { factor[(k, j)] } else { 0.0 };
    let (mut diff, mut norm) = (0.0, 0.0);
    for j in 0..n {
        for i in 0..n {
            let lu: f64 = (0..=i.min(j)).map(|k| l(i, k) * u(k, j)).sum();
            diff += (pa[(i, j)] - lu).powi(2);
            norm += a[(i, j)].powi(2);
        }
    }
    (diff / norm).sqrt()
}

fn check_lu<B: Backend, C: Communicator<B>>(cluster: &Cluster<B, C>, n: usize, nb: usize) {
    let g = common::random(&mut common::rng(11 + n as u64), n, n);
    let a = Mat::from_fn(n, n, |i, j| g[i + j * n]);
    let mut d = DistMatrix::from_host(cluster, a.as_ref(), nb).unwrap();
    let ipiv = lu(cluster, &mut d, DistParams { update_tile: 2 * nb, ..Default::default() }).unwrap();
    let f = d.to_host(cluster).unwrap();
    let grid = cluster.grid();
    let at = format!("{} × {} grid, n = {n}, nb = {nb}", grid.p, grid.q);
    assert_eq!(ipiv.len(), n);
    assert!(ipiv.iter().enumerate().all(|(i, &p)| (i as i32) < p && p as usize <= n), "{at}: ipiv {ipiv:?}");
    // Partial pivoting across process rows: every multiplier |lᵢₖ| ≤ 1.
    let largest =
        (0..n).flat_map(|k| (k + 1..n).map(move |i| (i, k))).map(|(i, k)| f[(i, k)].abs()).fold(0.0, f64::max);
    assert!(largest <= 1.0, "{at}: a multiplier of magnitude {largest}");
    // ‖PA − LU‖ ≤ c·n·u·‖A‖ for random matrices, whose growth is small
    // (Higham 2002, §9.4); c = 8.
    let err = lu_backward_error(&a, &f, &ipiv);
    let bound = 8.0 * n as f64 * f64::EPSILON / 2.0;
    assert!(err <= bound, "{at}: ‖PA − LU‖/‖A‖ = {err:.2e} > {bound:.2e}");
}

#[test]
fn lu_matches_the_reference_on_every_grid() {
    on_each_grid!(|cluster| {
        for (n, nb) in [(48, 8), (61, 8), (37, 5), (7, 4), (1, 4)] {
            check_lu(&cluster, n, nb);
        }
    });
}

#[test]
fn lu_names_the_first_zero_pivot() {
    on_each_grid!(|cluster| {
        let n = 30;
        let g = common::random(&mut common::rng(5), n, n);
        // Column 13 (0-based) is zero: pivot 14 is zero whatever the rows.
        let a = Mat::from_fn(n, n, |i, j| if j == 13 { 0.0 } else { g[i + j * n] });
        let mut d = DistMatrix::from_host(&cluster, a.as_ref(), 4).unwrap();
        match lu(&cluster, &mut d, DistParams::default()) {
            Err(Error::Singular { pivot }) => assert_eq!(pivot, 14),
            other => panic!("expected Singular at 14, got {other:?}"),
        }
    });
}

/// ‖B − A·X‖_∞ / (‖A‖_∞·‖X‖_∞ + ‖B‖_∞), the normwise backward error.
fn solve_backward_error(a: &Mat<f64>, x: &Mat<f64>, b: &Mat<f64>) -> f64 {
    let inf =
        |m: &Mat<f64>| (0..m.nrows()).map(|i| (0..m.ncols()).map(|j| m[(i, j)].abs()).sum::<f64>()).fold(0.0, f64::max);
    let r = Mat::from_fn(b.nrows(), b.ncols(), |i, j| {
        b[(i, j)] - (0..a.ncols()).map(|k| a[(i, k)] * x[(k, j)]).sum::<f64>()
    });
    inf(&r) / (inf(a) * inf(x) + inf(b))
}

#[test]
fn solves_with_both_factors_on_every_grid() {
    on_each_grid!(|cluster| {
        let grid = cluster.grid();
        for (n, nb, nrhs) in [(45, 8, 3), (23, 4, 1), (1, 4, 2)] {
            let b = Mat::from_fn(n, nrhs, |i, j| ((i * 7 + j * 3) % 11) as f64 - 5.0);
            let bound = 4.0 * n as f64 * f64::EPSILON / 2.0;

            let a = spd(n, 21);
            let mut d = DistMatrix::from_host(&cluster, a.as_ref(), nb).unwrap();
            cholesky(&cluster, &mut d, DistParams::default()).unwrap();
            let x = cholesky_solve(&cluster, &d, b.as_ref()).unwrap();
            let err = solve_backward_error(&a, &x, &b);
            assert!(
                err <= bound,
                "{} × {}, n = {n}: Cholesky solve's backward error {err:.2e} > {bound:.2e}",
                grid.p,
                grid.q
            );

            let g = common::random(&mut common::rng(n as u64), n, n);
            let a = Mat::from_fn(n, n, |i, j| g[i + j * n]);
            let mut d = DistMatrix::from_host(&cluster, a.as_ref(), nb).unwrap();
            let ipiv = lu(&cluster, &mut d, DistParams::default()).unwrap();
            let x = lu_solve(&cluster, &d, &ipiv, b.as_ref()).unwrap();
            let err = solve_backward_error(&a, &x, &b);
            assert!(
                err <= bound,
                "{} × {}, n = {n}: LU solve's backward error {err:.2e} > {bound:.2e}",
                grid.p,
                grid.q
            );
        }
    });
}

#[test]
fn bad_input_is_refused_before_any_work() {
    let cluster = Cluster::cpu(Grid::new(1, 2).unwrap());
    let rect = Mat::<f64>::zeros(4, 6);
    let mut d = DistMatrix::from_host(&cluster, rect.as_ref(), 2).unwrap();
    assert!(matches!(cholesky(&cluster, &mut d, DistParams::default()), Err(Error::DimensionMismatch { .. })));
    assert!(matches!(lu(&cluster, &mut d, DistParams::default()), Err(Error::DimensionMismatch { .. })));
    assert!(matches!(DistMatrix::from_host(&cluster, rect.as_ref(), 0), Err(Error::InvalidArgument(_))));
    // A matrix dealt over another grid.
    let other = Cluster::cpu(Grid::new(2, 1).unwrap());
    let a = spd(6, 1);
    let mut d = DistMatrix::from_host(&other, a.as_ref(), 2).unwrap();
    assert!(matches!(cholesky(&cluster, &mut d, DistParams::default()), Err(Error::InvalidArgument(_))));
    // Right-hand sides of the wrong height.
    cholesky(&other, &mut d, DistParams::default()).unwrap();
    let b = Mat::<f64>::zeros(5, 1);
    assert!(matches!(cholesky_solve(&other, &d, b.as_ref()), Err(Error::DimensionMismatch { .. })));
    assert!(matches!(lu_solve(&other, &d, &[1, 2, 3, 4, 5, 6], b.as_ref()), Err(Error::DimensionMismatch { .. })));
    assert!(Grid::new(0, 3).is_err());
}

#[test]
fn non_finite_entries_are_refused_with_their_place() {
    on_each_grid!(|cluster| {
        let mut a = spd(13, 2);
        a[(9, 4)] = f64::NAN;
        a[(11, 7)] = f64::INFINITY;
        let mut d = DistMatrix::from_host(&cluster, a.as_ref(), 3).unwrap();
        match cholesky(&cluster, &mut d, DistParams::default()) {
            Err(Error::NonFinite { row: 10, col: 5, .. }) => {}
            other => panic!("expected NonFinite at (10, 5), got {other:?}"),
        }
        match lu(&cluster, &mut d, DistParams::default()) {
            Err(Error::NonFinite { row: 10, col: 5, .. }) => {}
            other => panic!("expected NonFinite at (10, 5), got {other:?}"),
        }
    });
}

/// ‖A⁻¹‖₁ from faer's inverse (via LU), the reference of the estimates.
fn inverse_one_norm(a: &Mat<f64>) -> f64 {
    let n = a.nrows();
    let inv = a.partial_piv_lu().inverse();
    (0..n).map(|j| (0..n).map(|i| inv[(i, j)].abs()).sum::<f64>()).fold(0.0, f64::max)
}

fn one_norm(a: &Mat<f64>) -> f64 {
    (0..a.ncols()).map(|j| (0..a.nrows()).map(|i| a[(i, j)].abs()).sum::<f64>()).fold(0.0, f64::max)
}

#[test]
fn condition_estimates_bracket_the_true_condition() {
    on_each_grid!(|cluster| {
        let grid = cluster.grid();
        let n = 40;
        // An SPD matrix graded over six orders of magnitude.
        let base = spd(n, 8);
        let a = Mat::from_fn(n, n, |i, j| base[(i, j)] * 10f64.powf(-3.0 * (i + j) as f64 / n as f64));
        let mut d = DistMatrix::from_host(&cluster, a.as_ref(), 6).unwrap();
        let anorm = d.norm_one(&cluster).unwrap();
        assert!((anorm - one_norm(&a)).abs() <= 1e-12 * anorm, "‖A‖₁ {anorm} against {}", one_norm(&a));
        cholesky(&cluster, &mut d, DistParams::default()).unwrap();
        let est = gpumat::dist::cholesky_rcond(&cluster, &d, anorm).unwrap();
        let exact = 1.0 / (one_norm(&a) * inverse_one_norm(&a));
        // The estimate of ‖A⁻¹‖₁ is a lower bound, rarely off by more than 3
        // (Higham 2002, §15.3): rcond is at least the true one.
        assert!(
            est >= exact * (1.0 - 1e-10) && est <= 10.0 * exact,
            "{} × {}: Cholesky rcond {est:.3e}, exact {exact:.3e}",
            grid.p,
            grid.q
        );

        let g = common::random(&mut common::rng(31), n, n);
        let a = Mat::from_fn(n, n, |i, j| g[i + j * n] * if j == 7 { 1e-5 } else { 1.0 });
        let mut d = DistMatrix::from_host(&cluster, a.as_ref(), 6).unwrap();
        let anorm = d.norm_one(&cluster).unwrap();
        let ipiv = lu(&cluster, &mut d, DistParams::default()).unwrap();
        let est = gpumat::dist::lu_rcond(&cluster, &d, &ipiv, anorm).unwrap();
        let exact = 1.0 / (one_norm(&a) * inverse_one_norm(&a));
        assert!(
            est >= exact * (1.0 - 1e-10) && est <= 10.0 * exact,
            "{} × {}: LU rcond {est:.3e}, exact {exact:.3e}",
            grid.p,
            grid.q
        );

        // Aᵀ·X = B with the same factor.
        let b = Mat::from_fn(n, 2, |i, j| (i + 2 * j) as f64 - 20.0);
        let x = gpumat::dist::lu_solve_transposed(&cluster, &d, &ipiv, b.as_ref()).unwrap();
        let at = a.transpose().to_owned();
        let err = solve_backward_error(&at, &x, &b);
        let bound = 4.0 * n as f64 * f64::EPSILON / 2.0;
        assert!(err <= bound, "{} × {}: Aᵀ solve's backward error {err:.2e} > {bound:.2e}", grid.p, grid.q);
    });
}

#[test]
fn empty_matrices_factor_to_nothing() {
    let cluster = Cluster::cpu(Grid::new(2, 2).unwrap());
    let a = Mat::<f64>::zeros(0, 0);
    let mut d = DistMatrix::from_host(&cluster, a.as_ref(), 4).unwrap();
    cholesky(&cluster, &mut d, DistParams::default()).unwrap();
    assert!(lu(&cluster, &mut d, DistParams::default()).unwrap().is_empty());
    let x = cholesky_solve(&cluster, &d, Mat::<f64>::zeros(0, 1).as_ref()).unwrap();
    assert_eq!((x.nrows(), x.ncols()), (0, 1));
}

#[test]
fn single_precision_factors_to_its_own_unit_roundoff() {
    on_each_grid!(|cluster| {
        let grid = cluster.grid();
        let n = 33;
        let a = spd(n, 4);
        let a32 = Mat::from_fn(n, n, |i, j| a[(i, j)] as f32);
        let a64 = Mat::from_fn(n, n, |i, j| f64::from(a32[(i, j)]));
        let mut d = DistMatrix::from_host(&cluster, a32.as_ref(), 4).unwrap();
        cholesky(&cluster, &mut d, DistParams::default()).unwrap();
        let l = d.to_host(&cluster).unwrap();
        let l64 = Mat::from_fn(n, n, |i, j| f64::from(l[(i, j)]));
        let err = cholesky_backward_error(&a64, &l64);
        let bound = 4.0 * n as f64 * f64::from(f32::EPSILON) / 2.0;
        assert!(err <= bound, "{} × {}: f32 ‖A − LLᵀ‖/‖A‖ = {err:.2e} > {bound:.2e}", grid.p, grid.q);

        let mut d = DistMatrix::from_host(&cluster, a32.as_ref(), 4).unwrap();
        let ipiv = lu(&cluster, &mut d, DistParams::default()).unwrap();
        let f = d.to_host(&cluster).unwrap();
        let f64_ = Mat::from_fn(n, n, |i, j| f64::from(f[(i, j)]));
        let err = lu_backward_error(&a64, &f64_, &ipiv);
        assert!(err <= 2.0 * bound, "{} × {}: f32 ‖PA − LU‖/‖A‖ = {err:.2e}", grid.p, grid.q);
    });
}

/// Solves at the bench's block sizes, where on the GPUs the side queue's
/// trailing update of step `k` still runs while the main queue receives
/// step `k + 1`'s panel: a copy that one overwrites while the other reads
/// shows here as a backward error far above rounding.
#[test]
fn solves_where_the_look_ahead_overlaps_the_update() {
    use gpumat::dist::Storage;
    let (n, nb) = if on_gpu() { (8192, 512) } else { (384, 32) };
    on_each_grid!(|cluster| {
        let grid = cluster.grid();
        let b = Mat::from_fn(n, 1, |i, _| ((i * 7) % 11) as f64 - 5.0);
        let bound = 4.0 * n as f64 * f64::EPSILON / 2.0;

        let mut d = DistMatrix::random_symmetric(&cluster, n, nb, 5, n as f64, Storage::Full).unwrap();
        let a = d.to_host(&cluster).unwrap();
        let a = Mat::from_fn(n, n, |i, j| if i >= j { a[(i, j)] } else { a[(j, i)] });
        cholesky(&cluster, &mut d, DistParams::default()).unwrap();
        let err = solve_backward_error(&a, &cholesky_solve(&cluster, &d, b.as_ref()).unwrap(), &b);
        assert!(err <= bound, "{} × {}, n = {n}: Cholesky solve's backward error {err:.2e}", grid.p, grid.q);

        let mut d = DistMatrix::random(&cluster, (n, n), nb, 6).unwrap();
        let a = d.to_host(&cluster).unwrap();
        let ipiv = lu(&cluster, &mut d, DistParams::default()).unwrap();
        let err = solve_backward_error(&a, &lu_solve(&cluster, &d, &ipiv, b.as_ref()).unwrap(), &b);
        assert!(err <= bound, "{} × {}, n = {n}: LU solve's backward error {err:.2e}", grid.p, grid.q);
    });
}

#[test]
fn random_matrices_are_generated_on_the_ranks() {
    use gpumat::backend::random;
    use gpumat::dist::Storage;
    on_each_grid!(|cluster| {
        let grid = cluster.grid();
        for (m, n, nb) in [(37, 29, 8), (16, 16, 4), (1, 5, 4)] {
            let at = format!("{} × {} grid, {m} × {n}, nb = {nb}", grid.p, grid.q);
            let key = random::key(11);
            let a = DistMatrix::<_, f64>::random(&cluster, (m, n), nb, 11).unwrap().to_host(&cluster).unwrap();
            for j in 0..n {
                for i in 0..m {
                    assert_eq!(a[(i, j)], random::uniform(key, i, j), "{at}: A({i}, {j})");
                }
            }
        }
        // Symmetric with a dominant diagonal: both storages hold the same
        // lower triangle, which factors.
        let (n, nb, seed) = (45, 8, 3);
        let key = random::key(seed);
        let expected = Mat::from_fn(n, n, |i, j| if i == j { n as f64 } else { random::symmetric(key, i, j) });
        for storage in [Storage::Full, Storage::Lower] {
            let at = format!("{} × {} grid, {storage:?}", grid.p, grid.q);
            let mut d = DistMatrix::random_symmetric(&cluster, n, nb, seed, n as f64, storage).unwrap();
            let a = d.to_host(&cluster).unwrap();
            for j in 0..n {
                for i in j..n {
                    assert_eq!(a[(i, j)], expected[(i, j)], "{at}: A({i}, {j})");
                }
            }
            cholesky(&cluster, &mut d, DistParams::default()).unwrap();
            let err = cholesky_backward_error(&expected, &d.to_host(&cluster).unwrap());
            let bound = 4.0 * n as f64 * f64::EPSILON / 2.0;
            assert!(err <= bound, "{at}: ‖A − LLᵀ‖/‖A‖ = {err:.2e} > {bound:.2e}");
        }
    });
}

#[test]
fn lower_storage_factors_and_solves_in_about_half_the_memory() {
    on_each_grid!(|cluster| {
        let grid = cluster.grid();
        for (n, nb) in [(64, 8), (45, 8), (23, 4), (1, 4)] {
            let at = format!("{} × {} grid, n = {n}, nb = {nb}", grid.p, grid.q);
            let a = spd(n, 40 + n as u64);
            let full = DistMatrix::from_host(&cluster, a.as_ref(), nb).unwrap();
            let mut d = DistMatrix::symmetric_from_host(&cluster, a.as_ref(), nb).unwrap();
            assert_eq!(d.storage(), gpumat::dist::Storage::Lower);
            // Half the blocks and the diagonal ones: (nblocks + 1) / (2·nblocks).
            let blocks = n.div_ceil(nb) as f64;
            let ratio = d.local_bytes() as f64 / full.local_bytes() as f64;
            if n >= 32 && grid.size() <= 2 {
                assert!(
                    ratio <= (blocks + 1.0) / (2.0 * blocks) + 0.15,
                    "{at}: lower storage takes {ratio:.2} of full"
                );
            }
            let anorm = d.norm_one(&cluster).unwrap();
            assert!((anorm - one_norm(&a)).abs() <= 1e-12 * anorm, "{at}: ‖A‖₁ {anorm} against {}", one_norm(&a));
            cholesky(&cluster, &mut d, DistParams::default()).unwrap();
            let l = d.to_host(&cluster).unwrap();
            let err = cholesky_backward_error(&a, &l);
            let bound = 4.0 * n as f64 * f64::EPSILON / 2.0;
            assert!(err <= bound, "{at}: ‖A − LLᵀ‖/‖A‖ = {err:.2e} > {bound:.2e}");
            let b = Mat::from_fn(n, 2, |i, j| (i + 3 * j) as f64 - 7.0);
            let x = cholesky_solve(&cluster, &d, b.as_ref()).unwrap();
            let err = solve_backward_error(&a, &x, &b);
            assert!(err <= bound, "{at}: solve's backward error {err:.2e} > {bound:.2e}");
            let est = gpumat::dist::cholesky_rcond(&cluster, &d, anorm).unwrap();
            let exact = 1.0 / (one_norm(&a) * inverse_one_norm(&a));
            assert!(est >= exact * (1.0 - 1e-10) && est <= 10.0 * exact, "{at}: rcond {est:.3e}, exact {exact:.3e}");
            // LU needs every block.
            assert!(matches!(lu(&cluster, &mut d, DistParams::default()), Err(Error::InvalidArgument(_))));
        }
        // NaN in a stored block is found with its place; an indefinite
        // matrix names its first failing column, as in full storage.
        let mut a = spd(20, 9);
        a[(15, 6)] = f64::NAN;
        let mut d = DistMatrix::symmetric_from_host(&cluster, a.as_ref(), 4).unwrap();
        match cholesky(&cluster, &mut d, DistParams::default()) {
            Err(Error::NonFinite { row: 16, col: 7, .. }) => {}
            other => panic!("expected NonFinite at (16, 7), got {other:?}"),
        }
        let mut a = spd(20, 9);
        a[(11, 11)] = -30.0;
        let mut d = DistMatrix::symmetric_from_host(&cluster, a.as_ref(), 4).unwrap();
        match cholesky(&cluster, &mut d, DistParams::default()) {
            Err(Error::NotPositiveDefinite { column }) => assert_eq!(column, 12),
            other => panic!("expected NotPositiveDefinite at 12, got {other:?}"),
        }
    });
}

#[test]
fn without_look_ahead_the_factors_are_the_same() {
    on_each_grid!(|cluster| {
        let n = 29;
        let a = spd(n, 12);
        let factor = |look_ahead: bool, cholesky_first: bool| {
            let params = DistParams { look_ahead, update_tile: 8 };
            let mut d = DistMatrix::from_host(&cluster, a.as_ref(), 4).unwrap();
            if cholesky_first {
                cholesky(&cluster, &mut d, params).unwrap();
            } else {
                lu(&cluster, &mut d, params).unwrap();
            }
            d.to_host(&cluster).unwrap()
        };
        for chol in [true, false] {
            let (with, without) = (factor(true, chol), factor(false, chol));
            // The same operations in the same order on each entry: equal
            // up to the backend's blocking of each `gemm`.
            let diff =
                (0..n).flat_map(|j| (j..n).map(move |i| (i, j))).map(|(i, j)| (with[(i, j)] - without[(i, j)]).abs());
            let diff = diff.fold(0.0, f64::max);
            assert!(diff <= 1e-12, "look-ahead changes the factor by {diff:.2e} (cholesky: {chol})");
        }
    });
}
