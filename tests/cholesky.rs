//! Cholesky on the device under test, against FP64 references on the host:
//! ‖A − L·Lᵀ‖_F/‖A‖_F ≤ 10·n·u and a solve's backward error within the same
//! bound, on random SPD matrices and on matrices of chosen spectrum.

mod common;

use common::*;
use gpumat::backend::{Backend, Block, BufferMut, View, ViewMut};
use gpumat::factor::cholesky::{self, CholeskyParams};
use gpumat::layout::{Full, Rfp, Transr, Uplo};
use gpumat::{Error, Matrix, Scalar, Sym};

fn upload<T: Scalar>(data: &[f64], rows: usize, cols: usize) -> Matrix<T> {
    let v: Vec<T> = data.iter().map(|&x| T::from_f64(x)).collect();
    device().from_col_major(rows, cols, &v).unwrap()
}

fn host<T: Scalar>(a: &Matrix<T>) -> Vec<f64> {
    a.to_host().unwrap().into_iter().map(Scalar::to_f64).collect()
}

/// `G·Gᵀ + n·I` for a random `G`: SPD and well conditioned.
fn random_spd(seed: u64, n: usize) -> Vec<f64> {
    let g = random(&mut rng(seed), n, n);
    let (mut a, ..) = naive_matmul(&g, (n, n), false, &g, (n, n), true);
    (0..n).for_each(|i| a[i + i * n] += n as f64);
    a
}

/// `Q·diag(λ)·Qᵀ` with `Q` a product of two Householder reflectors and the
/// eigenvalues spread geometrically from 1 down to `1/cond`.
fn with_spectrum(seed: u64, n: usize, cond: f64) -> (Vec<f64>, Vec<f64>) {
    let mut r = rng(seed);
    let lambda: Vec<f64> = (0..n).map(|i| cond.powf(-(i as f64) / (n.max(2) - 1) as f64)).collect();
    let reflector = |v: &[f64]| {
        let vv: f64 = v.iter().map(|x| x * x).sum();
        let mut h = vec![0.0; n * n];
        for j in 0..n {
            for i in 0..n {
                h[i + j * n] = f64::from(u8::from(i == j)) - 2.0 * v[i] * v[j] / vv;
            }
        }
        h
    };
    let (h1, h2) = (reflector(&random(&mut r, n, 1)), reflector(&random(&mut r, n, 1)));
    let (q, ..) = naive_matmul(&h1, (n, n), false, &h2, (n, n), false);
    let ql: Vec<f64> = (0..n * n).map(|p| q[p] * lambda[p / n]).collect();
    let (a, ..) = naive_matmul(&ql, (n, n), false, &q, (n, n), true);
    // Symmetric to the last bit.
    let a = (0..n * n).map(|p| if p % n >= p / n { a[p] } else { a[p / n + (p % n) * n] }).collect();
    (a, lambda)
}

/// `A` as a `Sym` in full or RFP storage.
fn sym<T: Scalar>(a: &[f64], n: usize, packed: bool) -> Sym<T> {
    let s = Sym::from_lower(upload::<T>(a, n, n)).unwrap();
    if packed { s.to_rfp().unwrap() } else { s }
}

/// Factor, reconstruct and solve in both storages; returns the worst
/// (‖A − LLᵀ‖/‖A‖, solve backward error), and checks both storages agree.
fn check<T: Scalar>(a: &[f64], n: usize, params: CholeskyParams) -> (f64, f64) {
    let (f1, b1, x1) = check_in::<T>(a, n, params, false);
    let (f2, b2, x2) = check_in::<T>(a, n, params, true);
    // Same algorithm, other blocking: the solutions agree to rounding.
    let diff = rel_error(&x2, &x1);
    assert!(
        diff <= 1e-3_f64.max(1e4 * n as f64 * u::<T>()) || n < 2,
        "{} n={n}: full and RFP solutions differ by {diff:e}",
        T::NAME
    );
    (f1.max(f2), b1.max(b2))
}

fn check_in<T: Scalar>(a: &[f64], n: usize, params: CholeskyParams, packed: bool) -> (f64, f64, Vec<f64>) {
    let da = upload::<T>(a, n, n);
    let a_rounded = host(&da);
    let f = sym::<T>(a, n, packed).cholesky_with(params).unwrap();
    assert_eq!(f.is_packed(), packed);
    let llt = host(&f.reconstruct().unwrap());
    let factor_err = rel_error(&llt, &a_rounded);
    let b = random(&mut rng(99), n, 3);
    let x = host(&f.solve(&upload::<T>(&b, n, 3)).unwrap());
    let (ax, ..) = naive_matmul(&a_rounded, (n, n), false, &x, (n, 3), false);
    let r: Vec<f64> = ax.iter().zip(&b).map(|(p, q)| p - q).collect();
    let berr = frobenius(&r) / (frobenius(&a_rounded) * frobenius(&x) + frobenius(&b));
    (factor_err, berr, x)
}

fn random_spd_case<T: Scalar>() {
    for (n, nb) in [(1, 128), (5, 2), (64, 16), (127, 32), (129, 128), (200, 64)] {
        let bound = 10.0 * n as f64 * u::<T>();
        let (fe, be) = check::<T>(
            &random_spd(n as u64, n),
            n,
            CholeskyParams { block_size: nb, leaf_size: 8, update_tile: 16, ..CholeskyParams::default() },
        );
        assert!(fe <= bound, "{} n={n} nb={nb}: ‖A − LLᵀ‖/‖A‖ = {fe:e} > {bound:e}", T::NAME);
        assert!(be <= bound, "{} n={n} nb={nb}: backward error {be:e} > {bound:e}", T::NAME);
    }
}

#[test]
fn random_spd_matrices_factor_within_the_bound() {
    random_spd_case::<f64>();
    random_spd_case::<f32>();
}

/// FP64 trailing updates from INT8 products (the Ozaki scheme II, moduli
/// fixed and chosen per update), in both storages: the same bound.
#[test]
fn fp64_updates_from_integer_products_keep_the_bound() {
    use gpumat::backend::Compute;
    for update in [Compute::Int8 { moduli: None }, Compute::Int8 { moduli: Some(14) }] {
        for (n, nb) in [(129, 32), (200, 64)] {
            let bound = 10.0 * n as f64 * u::<f64>();
            let params =
                CholeskyParams { block_size: nb, leaf_size: 8, update_tile: 16, update, ..CholeskyParams::default() };
            let (fe, be) = check::<f64>(&random_spd(n as u64, n), n, params);
            assert!(fe <= bound, "{update:?} n={n}: ‖A − LLᵀ‖/‖A‖ = {fe:e} > {bound:e}");
            assert!(be <= bound, "{update:?} n={n}: backward error {be:e} > {bound:e}");
        }
    }
}

/// An FP32 factor whose trailing updates and panel products run on the
/// tensor cores (a mixed-precision solve's preconditioner): the bound of
/// the products' unit roundoff, `‖A − LLᵀ‖/‖A‖ ≤ 10·n·u` with `u = 2⁻¹¹`
/// (FP16, TF32) or `2⁻⁸` (BF16), in both storages.
#[test]
fn tensor_core_panels_keep_their_precision_bound() {
    use gpumat::backend::Compute;
    for (compute, unit) in
        [(Compute::Fp16, 2f64.powi(-11)), (Compute::Tf32, 2f64.powi(-11)), (Compute::Bf16, 2f64.powi(-8))]
    {
        for (n, nb) in [(129, 64), (200, 128)] {
            let bound = 10.0 * n as f64 * unit;
            let params =
                CholeskyParams { block_size: nb, leaf_size: 8, update_tile: 16, update: compute, panel: compute };
            let (fe, be) = check::<f32>(&random_spd(n as u64, n), n, params);
            assert!(fe <= bound, "{compute:?} n={n}: ‖A − LLᵀ‖/‖A‖ = {fe:e} > {bound:e}");
            assert!(be <= bound, "{compute:?} n={n}: backward error {be:e} > {bound:e}");
        }
    }
}

#[test]
fn chosen_spectra_up_to_condition_1e12() {
    let n = 150;
    for (k, cond) in [1e2, 1e6, 1e9, 1e12].into_iter().enumerate() {
        let (a, lambda) = with_spectrum(k as u64, n, cond);
        let bound = 10.0 * n as f64 * u::<f64>();
        let (fe, be) = check::<f64>(
            &a,
            n,
            CholeskyParams { block_size: 32, leaf_size: 8, update_tile: 16, ..CholeskyParams::default() },
        );
        assert!(fe <= bound, "cond {cond:e}: ‖A − LLᵀ‖/‖A‖ = {fe:e} > {bound:e}");
        assert!(be <= bound, "cond {cond:e}: backward error {be:e} > {bound:e}");
        // log det A = Σ log λ; the factor's is within n·u·cond relatively of
        // each pivot, far below this tolerance at these sizes.
        let exact: f64 = lambda.iter().map(|l| l.ln()).sum();
        for packed in [false, true] {
            let logdet = sym::<f64>(&a, n, packed).cholesky().unwrap().log_det().unwrap();
            assert!(
                (logdet - exact).abs() <= 1e-6 * exact.abs().max(1.0),
                "cond {cond:e}: log det {logdet} vs {exact}"
            );
        }
    }
}

#[test]
fn not_positive_definite_names_the_first_failing_column() {
    let n = 300;
    let spd = random_spd(7, n);
    for (bad, nb) in [(0, 128), (41, 16), (200, 128), (299, 64)] {
        let mut a = spd.clone();
        // Makes the leading minor of order bad + 1 indefinite, and no smaller one.
        a[bad + bad * n] = -1e6;
        for packed in [false, true] {
            match sym::<f64>(&a, n, packed).cholesky_with(CholeskyParams {
                block_size: nb,
                leaf_size: 8,
                update_tile: 16,
                ..CholeskyParams::default()
            }) {
                Err(Error::NotPositiveDefinite { column }) => assert_eq!(column, bad + 1, "nb={nb} packed={packed}"),
                other => panic!("column {}: expected NotPositiveDefinite, got {other:?}", bad + 1),
            }
        }
    }
    let e = Sym::from_lower(upload::<f64>(&[1.0, 2.0, 2.0, 1.0], 2, 2)).unwrap().cholesky().unwrap_err();
    assert_eq!(e.to_string(), "matrix is not positive definite: pivot in column 2 is not positive");
}

#[test]
fn non_finite_input_is_refused_before_any_work() {
    let mut a = random_spd(3, 6);
    a[4 + 2 * 6] = f64::NAN; // (5, 3), lower triangle
    let e = Sym::from_lower(upload::<f64>(&a, 6, 6)).unwrap().cholesky().unwrap_err();
    assert!(matches!(e, Error::NonFinite { row: 5, col: 3, .. }), "{e}");
    // The upper triangle is not A's: a NaN there is ignored.
    let mut a = random_spd(3, 6);
    a[4 + 2 * 6] = f64::NAN;
    let e = sym::<f64>(&a, 6, true).cholesky().unwrap_err();
    assert!(matches!(e, Error::NonFinite { row: 5, col: 3, .. }), "packed: {e}");
    let mut a = random_spd(3, 6);
    a[2 + 4 * 6] = f64::INFINITY;
    assert!(Sym::from_lower(upload::<f64>(&a, 6, 6)).unwrap().cholesky().is_ok());
    assert!(sym::<f64>(&a, 6, true).cholesky().is_ok(), "packing drops the upper triangle");
}

#[test]
fn solve_checks_shapes() {
    let f = Sym::from_lower(upload::<f64>(&random_spd(1, 4), 4, 4)).unwrap().cholesky().unwrap();
    assert!(matches!(f.solve(&upload::<f64>(&[1.0; 3], 3, 1)), Err(Error::DimensionMismatch { .. })));
    let f = sym::<f64>(&random_spd(1, 4), 4, true).cholesky().unwrap();
    assert!(matches!(f.solve(&upload::<f64>(&[1.0; 3], 3, 1)), Err(Error::DimensionMismatch { .. })));
}

/// All eight RFP layouts (TRANSR × UPLO × odd/even n) through the algorithm
/// layer: factor the packed array in place, unpack, and compare `L·Lᵀ` (or
/// `Uᵀ·U`) with `A`; then solve and check the backward error. Two blockings:
/// block columns narrower than a leaf, and wide ones factored recursively
/// whose trailing updates are tiled, so that panels, leaves and tiles cross
/// from `T1` into `S` and updates reach from `S` into `T2`.
fn every_rfp_layout<B: Backend>(be: &B) {
    let blockings = [
        CholeskyParams { block_size: 4, leaf_size: 8, update_tile: 16, ..CholeskyParams::default() },
        CholeskyParams { block_size: 16, leaf_size: 4, update_tile: 3, ..CholeskyParams::default() },
    ];
    for (n, params) in [1, 2, 7, 8, 33, 34, 75, 76].into_iter().flat_map(|n| blockings.map(|p| (n, p))) {
        let a = random_spd(n as u64 + 20, n);
        for transr in [Transr::Normal, Transr::Transpose] {
            for uplo in [Uplo::Lower, Uplo::Upper] {
                let rfp = Rfp::new(n, transr, uplo);
                let mut arf = vec![f64::NAN; rfp.len()];
                gpumat::layout::full_to_rfp(&a, Full::new(n, n), rfp, &mut arf).unwrap();
                let mut buf = be.upload(&arf).unwrap();
                let mut info = be.upload(&[0i32]).unwrap();
                {
                    let packed = BufferMut::new(&mut buf);
                    let mut status = ViewMut::dense(&mut info, 1, 1).unwrap();
                    cholesky::factor_rfp_in_place(be, rfp, &packed, 0, &mut status, params).unwrap();
                }
                let mut status = [9i32];
                be.download(&info, &mut status).unwrap();
                let case = format!("n={n} {transr:?} {uplo:?} {params:?}");
                assert_eq!(status, [0], "{case}");
                // Unpack the factor into its triangle and rebuild A.
                let mut full = be.alloc::<f64>(n * n).unwrap();
                be.rfp_to_full(View::dense(&buf, rfp.len(), 1).unwrap(), rfp, ViewMut::dense(&mut full, n, n).unwrap())
                    .unwrap();
                let mut out = be.alloc::<f64>(n * n).unwrap();
                let f = View::dense(&full, n, n).unwrap();
                cholesky::reconstruct(be, uplo, f, ViewMut::dense(&mut out, n, n).unwrap()).unwrap();
                let mut rebuilt = vec![0.0; n * n];
                be.download(&out, &mut rebuilt).unwrap();
                let err = rel_error(&rebuilt, &a);
                assert!(err <= 10.0 * n as f64 * u::<f64>(), "{case}: ‖A − LLᵀ‖/‖A‖ = {err:e}");
                // Solve with the packed factor.
                let b = random(&mut rng(5), n, 2);
                let mut x = be.upload(&b).unwrap();
                let view = View::dense(&buf, rfp.len(), 1).unwrap();
                cholesky::solve_rfp_in_place(be, rfp, view, 0, ViewMut::dense(&mut x, n, 2).unwrap()).unwrap();
                let mut xh = vec![0.0; 2 * n];
                be.download(&x, &mut xh).unwrap();
                let (ax, ..) = naive_matmul(&a, (n, n), false, &xh, (n, 2), false);
                let r: Vec<f64> = ax.iter().zip(&b).map(|(p, q)| p - q).collect();
                let berr = frobenius(&r) / (frobenius(&a) * frobenius(&xh) + frobenius(&b));
                assert!(berr <= 10.0 * n as f64 * u::<f64>(), "{case}: backward error {berr:e}");
            }
        }
    }
}

#[test]
fn rfp_factorization_in_every_layout() {
    let dev = device();
    gpumat::with_backend!(dev, be => every_rfp_layout(be));
}

/// The upper variant, `A = Uᵀ·U`, through the algorithm layer, on a block
/// inside a larger buffer.
fn upper_on_a_sub_block<B: Backend>(be: &B) {
    let (n, ld, off) = (70, 75, 3);
    let a = random_spd(11, n);
    let mut data = vec![f64::NAN; off + ld * n];
    for j in 0..n {
        for i in 0..=j {
            data[off + i + j * ld] = a[i + j * n];
        }
    }
    let mut buf = be.upload(&data).unwrap();
    let block = Block { offset: off, rows: n, cols: n, ld };
    let mut info = be.upload(&[0i32]).unwrap();
    {
        let a = BufferMut::new(&mut buf);
        let mut info = ViewMut::dense(&mut info, 1, 1).unwrap();
        cholesky::factor_in_place(
            be,
            Uplo::Upper,
            &a,
            block,
            &mut info,
            0,
            CholeskyParams { block_size: 16, leaf_size: 8, update_tile: 16, ..CholeskyParams::default() },
        )
        .unwrap();
    }
    let mut status = [7i32];
    be.download(&info, &mut status).unwrap();
    assert_eq!(status, [0]);
    let mut out = be.alloc::<f64>(n * n).unwrap();
    cholesky::reconstruct(be, Uplo::Upper, View::new(&buf, block).unwrap(), ViewMut::dense(&mut out, n, n).unwrap())
        .unwrap();
    let mut utu = vec![0.0; n * n];
    be.download(&out, &mut utu).unwrap();
    let err = rel_error(&utu, &a);
    assert!(err <= 10.0 * n as f64 * f64::EPSILON / 2.0, "‖A − UᵀU‖/‖A‖ = {err:e}");
}

#[test]
fn upper_factorization_on_a_strided_block() {
    let dev = device();
    gpumat::with_backend!(dev, be => upper_on_a_sub_block(be));
}

/// A panel, `m × n` with `m > n` (`n × m` for `Upper`): the top block is
/// factored and the rows below solved with it, so `[L11; L21]·L11ᵀ` must
/// give back `[A11; A21]` within the factorization's bound.
fn panel_factorization<B: Backend>(be: &B) {
    let (n, m) = (40, 97);
    let spd = random_spd(13, m);
    let params = CholeskyParams { block_size: 16, leaf_size: 4, update_tile: 8, ..CholeskyParams::default() };
    for uplo in [Uplo::Lower, Uplo::Upper] {
        // The first n columns of the SPD matrix: A11 on top of A21.
        let a: Vec<f64> = spd[..m * n].to_vec();
        let (block, data) = match uplo {
            Uplo::Lower => (Block::dense(m, n), a.clone()),
            Uplo::Upper => (Block::dense(n, m), (0..n * m).map(|p| a[p / n + (p % n) * m]).collect()),
        };
        let mut buf = be.upload(&data).unwrap();
        let mut info = be.upload(&[0i32]).unwrap();
        {
            let mut status = ViewMut::dense(&mut info, 1, 1).unwrap();
            cholesky::factor_in_place(be, uplo, &BufferMut::new(&mut buf), block, &mut status, 0, params).unwrap();
        }
        let (mut status, mut f) = ([9i32], vec![0.0; m * n]);
        be.download(&info, &mut status).unwrap();
        be.download(&buf, &mut f).unwrap();
        assert_eq!(status, [0], "{uplo:?}");
        // L (m × n, lower trapezoid) from the stored factor.
        let l: Vec<f64> = (0..m * n)
            .map(|p| {
                let (i, j) = (p % m, p / m);
                match (i >= j, uplo) {
                    (false, _) => 0.0,
                    (true, Uplo::Lower) => f[i + j * m],
                    (true, Uplo::Upper) => f[j + i * n],
                }
            })
            .collect();
        let l11: Vec<f64> = (0..n * n).map(|p| l[p % n + (p / n) * m]).collect();
        let (llt, ..) = naive_matmul(&l, (m, n), false, &l11, (n, n), true);
        // Only A11's lower triangle is A's: compare it and A21.
        let mask = |x: &[f64]| -> Vec<f64> { (0..m * n).map(|p| if p % m >= p / m { x[p] } else { 0.0 }).collect() };
        let err = rel_error(&mask(&llt), &mask(&a));
        assert!(err <= 10.0 * m as f64 * u::<f64>(), "{uplo:?}: ‖[A11; A21] − [L11; L21]·L11ᵀ‖/‖A‖ = {err:e}");
    }
    let mut buf = be.upload(&[0.0; 6]).unwrap();
    let mut info = be.upload(&[0i32]).unwrap();
    let mut status = ViewMut::dense(&mut info, 1, 1).unwrap();
    let wide = cholesky::factor_in_place(
        be,
        Uplo::Lower,
        &BufferMut::new(&mut buf),
        Block::dense(2, 3),
        &mut status,
        0,
        params,
    );
    assert!(matches!(wide, Err(Error::DimensionMismatch { .. })), "{wide:?}");
}

#[test]
fn factorization_of_a_panel() {
    let dev = device();
    gpumat::with_backend!(dev, be => panel_factorization(be));
}

#[test]
fn every_leaf_size_gives_the_same_accuracy() {
    // Leaves of order ≤ 64 are factored in shared memory on the GPU, larger
    // ones in global memory: both paths, and the recursion between them.
    let n = 150;
    let a = random_spd(42, n);
    for (block_size, leaf_size) in [(150, 200), (150, 64), (64, 64), (100, 16)] {
        let (fe, be) = check::<f64>(
            &a,
            n,
            CholeskyParams { block_size, leaf_size, update_tile: 1024, ..CholeskyParams::default() },
        );
        let bound = 10.0 * n as f64 * u::<f64>();
        assert!(fe <= bound && be <= bound, "block {block_size} leaf {leaf_size}: {fe:e}, {be:e} > {bound:e}");
    }
}

/// Factors one buffer five times, in full and RFP storage, with new
/// contents each time: on a GPU the third run is captured into a graph and
/// the later ones replay it (`Backend::replay`), which must compute on the
/// new contents, give the bits of the first run for the same input, and
/// report a pivot that is not positive.
fn repeated_factorizations<B: Backend>(be: &B, n: usize, bad: usize) {
    let params = CholeskyParams { block_size: 64, leaf_size: 16, update_tile: 64, ..CholeskyParams::default() };
    let bound = 10.0 * n as f64 * u::<f64>();
    for packed in [false, true] {
        let rfp = Rfp::new(n, Transr::Normal, Uplo::Lower);
        let stored = |a: &[f64]| -> Vec<f64> {
            if !packed {
                return a.to_vec();
            }
            let mut arf = vec![f64::NAN; rfp.len()];
            gpumat::layout::full_to_rfp(a, Full::new(n, n), rfp, &mut arf).unwrap();
            arf
        };
        let len = if packed { rfp.len() } else { n * n };
        let mut buf = be.alloc::<f64>(len).unwrap();
        let mut info = be.alloc::<i32>(1).unwrap();
        let mut factor = |a: &[f64]| -> (i32, Vec<f64>) {
            let fresh = be.upload(&stored(a)).unwrap();
            be.copy(View::dense(&fresh, len, 1).unwrap(), ViewMut::dense(&mut buf, len, 1).unwrap()).unwrap();
            be.fill(ViewMut::dense(&mut info, 1, 1).unwrap(), 0).unwrap();
            {
                let (a, mut status) = (BufferMut::new(&mut buf), ViewMut::dense(&mut info, 1, 1).unwrap());
                if packed {
                    cholesky::factor_rfp_in_place(be, rfp, &a, 0, &mut status, params).unwrap();
                } else {
                    cholesky::factor_in_place(be, Uplo::Lower, &a, Block::dense(n, n), &mut status, 0, params).unwrap();
                }
            }
            let (mut status, mut f) = ([9i32], vec![0.0; len]);
            be.download(&info, &mut status).unwrap();
            be.download(&buf, &mut f).unwrap();
            (status[0], f)
        };
        let mut first = None;
        for run in 0..5 {
            // Runs 0, 2 and 4 factor the same matrix; 1 and 3 others.
            let a = random_spd(if run % 2 == 0 { 50 } else { 51 + run as u64 }, n);
            let (status, f) = factor(&a);
            let case = format!("packed={packed} run {run}");
            assert_eq!(status, 0, "{case}");
            let mut l = vec![0.0; n * n];
            if packed {
                gpumat::layout::rfp_to_full(&f, rfp, &mut l, Full::new(n, n)).unwrap();
            } else {
                l.copy_from_slice(&f);
            }
            let l: Vec<f64> = (0..n * n).map(|p| if p % n >= p / n { l[p] } else { 0.0 }).collect();
            let (llt, ..) = naive_matmul(&l, (n, n), false, &l, (n, n), true);
            let err = rel_error(&llt, &a);
            assert!(err <= bound, "{case}: ‖A − LLᵀ‖/‖A‖ = {err:e} > {bound:e}");
            if run % 2 == 0 {
                let first = first.get_or_insert_with(|| f.clone());
                assert!(first.iter().zip(&f).all(|(x, y)| x.to_bits() == y.to_bits()), "{case}: other bits");
            }
        }
        // A matrix that is not positive definite, in the same buffer.
        let mut a = random_spd(60, n);
        a[bad + bad * n] = -1e6;
        assert_eq!(factor(&a).0, bad as i32 + 1, "packed={packed}: info of an indefinite matrix");
    }
}

/// Three block columns of 64, the last partial.
#[test]
fn repeated_factorizations_of_one_buffer() {
    let dev = device();
    gpumat::with_backend!(dev, be => repeated_factorizations(be, 130, 100));
}

#[test]
#[ignore = "long: run by CI's long job (cargo test -- --ignored)"]
fn repeated_factorizations_of_one_larger_buffer() {
    let dev = device();
    gpumat::with_backend!(dev, be => repeated_factorizations(be, 300, 170));
}
