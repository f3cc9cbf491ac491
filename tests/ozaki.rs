//! FP64 products emulated from INT8 products (`Compute::Int8`, the Ozaki
//! scheme II) against double-double references computed here: each entry
//! within the scheme's bound, the automatic choice of moduli as accurate as
//! a native FP64 product, and the inputs it must not take (NaN, infinity,
//! exponent spreads beyond every modulus) given to the native product.

mod common;

use common::{device, rng};
use gpumat::Error;
use gpumat::backend::ozaki::{MAX_DEPTH, MODULI};
use gpumat::backend::{Backend, Compute, Cpu, Op, Tuning, View, ViewMut};
use gpumat::layout::Uplo;
use rand::Rng;
use rand::rngs::StdRng;

const U: f64 = f64::EPSILON / 2.0;

/// Entries `(r − ½)·e^(φ·g)`, `r` uniform and `g` standard normal: `φ`
/// spreads the exponents (Ozaki, Uchino and Imamura's test matrices).
fn spread(rng: &mut StdRng, len: usize, phi: f64) -> Vec<f64> {
    (0..len)
        .map(|_| {
            let (u1, u2): (f64, f64) = (rng.random_range(f64::MIN_POSITIVE..1.0), rng.random());
            let g = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            (rng.random::<f64>() - 0.5) * (phi * g).exp()
        })
        .collect()
}

/// `Σ xₚ·yₚ` in double-double (Knuth's two-sum, the FMA two-product),
/// rounded once, and `Σ |xₚ·yₚ|`.
fn dot(terms: impl Iterator<Item = (f64, f64)>) -> (f64, f64) {
    let (mut hi, mut lo, mut size) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in terms {
        let prod = x * y;
        let err = x.mul_add(y, -prod);
        let sum = hi + prod;
        let bb = sum - hi;
        lo += (hi - (sum - bb)) + (prod - bb) + err;
        hi = sum;
        size += prod.abs();
    }
    (hi + lo, size)
}

/// `op(A)·op(B)` and `|op(A)|·|op(B)|` by [`dot`]; `a` is `m × k` after
/// `op`.
fn reference(a: &[f64], ta: bool, b: &[f64], tb: bool, (m, k, n): (usize, usize, usize)) -> (Vec<f64>, Vec<f64>) {
    let at = |i: usize, p: usize| if ta { a[p + i * k] } else { a[i + p * m] };
    let bt = |p: usize, l: usize| if tb { b[l + p * n] } else { b[p + l * k] };
    let (mut exact, mut size) = (vec![0.0; m * n], vec![0.0; m * n]);
    for l in 0..n {
        for i in 0..m {
            (exact[i + l * m], size[i + l * m]) = dot((0..k).map(|p| (at(i, p), bt(p, l))));
        }
    }
    (exact, size)
}

/// The device under test, emulating products of every size where the count
/// of moduli is chosen (`Tuning::fp64_products_from` is 16384 on the GPU
/// otherwise), so that small products test the choice.
fn emulating() -> gpumat::Device {
    let dev = device();
    let name = if dev.is_cpu() { "cpu" } else { "cuda" };
    gpumat::Device::with_tuning(name, Tuning { fp64_products_from: 0, ..dev.tuning() }).unwrap()
}

/// `C := α·op(A)·op(B) + β·C` by `gemm_in` on the device under test
/// ([`emulating`]), `C` starting as `c0`.
fn gemm_in(
    compute: Compute,
    alpha: f64,
    a: (&[f64], bool),
    b: (&[f64], bool),
    beta: f64,
    c0: &[f64],
    mkn: (usize, usize, usize),
) -> gpumat::Result<Vec<f64>> {
    gemm_on(&emulating(), compute, alpha, a, b, beta, c0, mkn)
}

/// [`gemm_in`] on `dev`.
#[allow(clippy::too_many_arguments)]
fn gemm_on(
    dev: &gpumat::Device,
    compute: Compute,
    alpha: f64,
    (a, ta): (&[f64], bool),
    (b, tb): (&[f64], bool),
    beta: f64,
    c0: &[f64],
    (m, k, n): (usize, usize, usize),
) -> gpumat::Result<Vec<f64>> {
    let op = |t| if t { Op::Trans } else { Op::NoTrans };
    let (ar, ac) = if ta { (k, m) } else { (m, k) };
    let (br, bc) = if tb { (n, k) } else { (k, n) };
    gpumat::with_backend!(dev, be => {
        let (ab, bb) = (be.upload(a)?, be.upload(b)?);
        let mut cb = be.upload(c0)?;
        let (av, bv) = (View::dense(&ab, ar, ac)?, View::dense(&bb, br, bc)?);
        be.gemm_in(compute, alpha, av, op(ta), bv, op(tb), beta, ViewMut::dense(&mut cb, m, n)?)?;
        let mut out = vec![0.0; m * n];
        be.download(&cb, &mut out)?;
        Ok(out)
    })
}

/// The largest `|Ĉ − C|/(|A|·|B|)` in units of `u` (entries with
/// `|A|·|B| = 0` must be exact).
fn worst(got: &[f64], exact: &[f64], size: &[f64]) -> f64 {
    got.iter().zip(exact).zip(size).fold(0.0, |w, ((g, e), s)| {
        if *s == 0.0 {
            assert_eq!(g, e, "an entry whose terms are all zero is not zero");
            w
        } else {
            w.max((g - e).abs() / s / U)
        }
    })
}

/// With `N` moduli every entry is within the scheme's bound:
/// `|Ĉᵢₗ − Cᵢₗ| ≤ (‖aᵢ‖₂‖bₗ‖₁ + ‖bₗ‖₂‖aᵢ‖₁)/R + k‖aᵢ‖₂‖bₗ‖₂/R² + 2u|Cᵢₗ|`,
/// `R = √(P/2)·(1 − 2⁻²⁴) − √k/2` (each integer rounds by at most ½ at a
/// scale `2^−s ≤ 2‖aᵢ‖₂/R`), for every transpose and with `α`, `β`.
#[test]
fn each_entry_is_within_the_bound_of_its_moduli() {
    let (m, k, n) = (23, 300, 17);
    let mut r = rng(5);
    for (count, phi, ta, tb) in
        [(8u8, 0.0, false, false), (14, 1.0, true, false), (20, 2.0, false, true), (11, 0.5, true, true)]
    {
        let a = spread(&mut r, m * k, phi);
        let b = spread(&mut r, k * n, phi);
        let c0: Vec<f64> = (0..m * n).map(|x| x as f64 - 100.0).collect();
        let (alpha, beta) = (-1.5, 0.25);
        let got =
            gemm_in(Compute::Int8 { moduli: Some(count) }, alpha, (&a, ta), (&b, tb), beta, &c0, (m, k, n)).unwrap();
        let (exact, _) = reference(&a, ta, &b, tb, (m, k, n));
        let half_p: f64 = MODULI[..count as usize].iter().map(|&x| x as f64).product::<f64>() / 2.0;
        let radius = half_p.sqrt() * (1.0 - 2f64.powi(-24)) - (k as f64).sqrt() / 2.0;
        let at = |i: usize, p: usize| if ta { a[p + i * k] } else { a[i + p * m] };
        let bt = |p: usize, l: usize| if tb { b[l + p * n] } else { b[p + l * k] };
        for l in 0..n {
            let b2 = (0..k).map(|p| bt(p, l).powi(2)).sum::<f64>().sqrt();
            let b1: f64 = (0..k).map(|p| bt(p, l).abs()).sum();
            for i in 0..m {
                let a2 = (0..k).map(|p| at(i, p).powi(2)).sum::<f64>().sqrt();
                let a1: f64 = (0..k).map(|p| at(i, p).abs()).sum();
                let c = exact[i + l * m];
                let product_bound =
                    (a2 * b1 + b2 * a1) / radius + k as f64 * a2 * b2 / radius.powi(2) + 2.0 * U * c.abs();
                let want = alpha * c + beta * c0[i + l * m];
                let bound = alpha.abs() * product_bound * 1.001 + 4.0 * U * (want.abs() + (beta * c0[i + l * m]).abs());
                let err = (got[i + l * m] - want).abs();
                assert!(err <= bound, "{count} moduli, φ = {phi}, ({i}, {l}): error {err:e} over the bound {bound:e}");
            }
        }
    }
}

/// Chosen per product, the moduli make the largest error, relative to
/// `|A|·|B|`, at most 2.5·u (a native FP64 product's is a few `u`: about
/// 3.6·u for cuBLAS on an H100), or no larger than the native product's
/// where the exponents spread beyond what 20 moduli can carry.
#[test]
fn chosen_moduli_are_as_accurate_as_native_products() {
    let (m, k, n) = (40, 700, 30);
    for (seed, phi) in [(1, 0.0), (2, 0.5), (3, 1.0), (4, 2.0), (5, 4.0)] {
        let mut r = rng(seed);
        let a = spread(&mut r, m * k, phi);
        let b = spread(&mut r, k * n, phi);
        let (exact, size) = reference(&a, false, &b, false, (m, k, n));
        let run =
            |compute| gemm_in(compute, 1.0, (&a, false), (&b, false), 0.0, &vec![f64::NAN; m * n], (m, k, n)).unwrap();
        let native = worst(&run(Compute::Native), &exact, &size);
        let emulated = worst(&run(Compute::Int8 { moduli: None }), &exact, &size);
        assert!(emulated <= native.max(2.5), "φ = {phi}: emulated {emulated:.2}·u, native {native:.2}·u");
        // Too few moduli are measurably worse: the choice is not idle.
        let coarse = worst(&run(Compute::Int8 { moduli: Some(10) }), &exact, &size);
        assert!(coarse > 10.0 * emulated.max(0.1), "φ = {phi}: 10 moduli give {coarse:.2}·u");
    }
}

/// Rows of `|A|` far apart in scale (1e±300, subnormal, zero) keep their
/// relative accuracy: each row and column is scaled on its own.
#[test]
fn rows_of_any_scale_keep_their_accuracy() {
    let (m, k, n) = (6, 200, 5);
    let mut r = rng(9);
    let mut a = spread(&mut r, m * k, 0.0);
    let mut b = spread(&mut r, k * n, 0.0);
    for (i, scale) in [1e300, 1e-300, 1e-310, 0.0, 1.0, 2f64.powi(-60)].into_iter().enumerate() {
        for p in 0..k {
            a[i + p * m] *= scale;
        }
    }
    for p in 0..k {
        b[p + k] *= 1e-8;
        b[p + 2 * k] *= 1e8;
    }
    let (exact, size) = reference(&a, false, &b, false, (m, k, n));
    let got = gemm_in(Compute::Int8 { moduli: None }, 1.0, (&a, false), (&b, false), 0.0, &vec![0.0; m * n], (m, k, n))
        .unwrap();
    for l in 0..n {
        for i in 0..m {
            let (g, e, s) = (got[i + l * m], exact[i + l * m], size[i + l * m]);
            if i == 3 {
                assert_eq!(g, 0.0, "a zero row gives a zero row");
            } else if s > f64::MIN_POSITIVE * 1e20 {
                assert!((g - e).abs() <= 2.5 * U * s, "({i}, {l}): {g:e} vs {e:e}");
            } else {
                // Products in the subnormal range lose relative accuracy as
                // native products do: within a few of the smallest spacing.
                assert!((g - e).abs() <= 2.5 * U * s + 4.0 * f64::from_bits(1), "({i}, {l}): {g:e} vs {e:e}");
            }
        }
    }
}

/// `syrk_in` writes only its triangle, the same entries `gemm_in` forms
/// for `A·Aᵀ`, which are exactly symmetric: one diagonal block, and (on the
/// GPU) a triangle of two block columns, of an order that is no multiple
/// of 4.
#[test]
fn symmetric_products_write_one_exact_triangle() {
    for (n, k) in [(19, 150), (1101, 40)] {
        symmetric_product_is_one_exact_triangle(n, k);
    }
}

fn symmetric_product_is_one_exact_triangle(n: usize, k: usize) {
    let a = spread(&mut rng(11), n * k, 1.0);
    let dev = device();
    for uplo in [Uplo::Lower, Uplo::Upper] {
        let compute = Compute::Int8 { moduli: Some(15) };
        let (full, tri) = gpumat::with_backend!(dev, be => {
            let ab = be.upload(&a).unwrap();
            let av = View::dense(&ab, n, k).unwrap();
            let mut full = be.upload(&vec![f64::NAN; n * n]).unwrap();
            let mut tri = be.upload(&vec![f64::NAN; n * n]).unwrap();
            be.gemm_in(compute, 2.0, av, Op::NoTrans, av, Op::Trans, 0.0, ViewMut::dense(&mut full, n, n).unwrap()).unwrap();
            be.syrk_in(compute, uplo, Op::NoTrans, 2.0, av, 0.0, ViewMut::dense(&mut tri, n, n).unwrap()).unwrap();
            let (mut f, mut t) = (vec![0.0; n * n], vec![0.0; n * n]);
            be.download(&full, &mut f).unwrap();
            be.download(&tri, &mut t).unwrap();
            (f, t)
        });
        for j in 0..n {
            for i in 0..n {
                let stored = if uplo == Uplo::Lower { i >= j } else { i <= j };
                if stored {
                    assert_eq!(tri[i + j * n].to_bits(), full[i + j * n].to_bits(), "{uplo:?} ({i}, {j})");
                } else {
                    assert!(tri[i + j * n].is_nan(), "{uplo:?}: ({i}, {j}) of the other triangle was written");
                }
                assert_eq!(full[i + j * n].to_bits(), full[j + i * n].to_bits(), "A·Aᵀ is not symmetric at ({i}, {j})");
            }
        }
        // Through Aᵀ: Aᵀ·A of the k × n transpose gives the same triangle.
        let at: Vec<f64> = (0..n * k).map(|x| a[(x / k) + (x % k) * n]).collect();
        let tri_t = gpumat::with_backend!(dev, be => {
            let ab = be.upload(&at).unwrap();
            let mut tri = be.upload(&vec![f64::NAN; n * n]).unwrap();
            be.syrk_in(compute, uplo, Op::Trans, 2.0, View::dense(&ab, k, n).unwrap(), 0.0, ViewMut::dense(&mut tri, n, n).unwrap())
                .unwrap();
            let mut t = vec![0.0; n * n];
            be.download(&tri, &mut t).unwrap();
            t
        });
        assert!(tri.iter().zip(&tri_t).all(|(x, y)| x.to_bits() == y.to_bits()), "{uplo:?}: Aᵀ·A differs from A·Aᵀ");
    }
}

/// NaN and infinities propagate as in the native product, and operands
/// whose exponents spread beyond 20 moduli take the native product, bit
/// for bit; a count of moduli outside 6…20 is refused.
#[test]
fn what_the_integers_cannot_carry_takes_the_native_product() {
    let (m, k, n) = (5, 40, 4);
    let mut r = rng(13);
    let b = spread(&mut r, k * n, 0.0);
    let c0 = vec![1.0; m * n];
    for poison in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut a = spread(&mut r, m * k, 0.0);
        a[2 + 7 * m] = poison;
        let native = gemm_in(Compute::Native, 1.0, (&a, false), (&b, false), 1.0, &c0, (m, k, n)).unwrap();
        let emulated =
            gemm_in(Compute::Int8 { moduli: None }, 1.0, (&a, false), (&b, false), 1.0, &c0, (m, k, n)).unwrap();
        for (x, y) in native.iter().zip(&emulated) {
            assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()), "{poison}: {x} vs {y}");
        }
        assert!(emulated[2..].iter().step_by(m).any(|v| !v.is_finite()), "{poison} did not reach row 2");
    }
    // Rows (1, ε) against columns (ε, 1): |a|·|b| = 2ε while ‖a‖‖b‖ ≈ 1,
    // κ ≈ 1/(2ε), beyond what 20 moduli carry at ε = 1e-30.
    let eps = 1e-30;
    let a: Vec<f64> = (0..2 * 2).map(|x| if x / 2 == x % 2 { 1.0 } else { eps }).collect();
    let b: Vec<f64> = (0..2 * 2).map(|x| if x / 2 == x % 2 { eps } else { 1.0 }).collect();
    let native = gemm_in(Compute::Native, 1.0, (&a, false), (&b, false), 0.0, &[0.0; 4], (2, 2, 2)).unwrap();
    let emulated =
        gemm_in(Compute::Int8 { moduli: None }, 1.0, (&a, false), (&b, false), 0.0, &[0.0; 4], (2, 2, 2)).unwrap();
    assert_eq!(native, emulated);
    assert_eq!(native[0], 2.0 * eps);
    // k = 0: C := β·C.
    let empty =
        gemm_in(Compute::Int8 { moduli: Some(8) }, 1.0, (&[], false), (&[], false), 3.0, &c0, (m, 0, n)).unwrap();
    assert!(empty.iter().all(|&v| v == 3.0));
    for bad in [0u8, 5, 21] {
        let e = gemm_in(
            Compute::Int8 { moduli: Some(bad) },
            1.0,
            (&c0, false),
            (&c0, true),
            0.0,
            &vec![0.0; m * m],
            (m, n, m),
        );
        assert!(matches!(e, Err(Error::InvalidArgument(ref s)) if s.contains("moduli")), "{bad} moduli: {e:?}");
    }
}

/// Products deeper than one exact INT32 accumulation (`k·128² < 2³¹`) are
/// taken in chunks whose residues are added: the same accuracy.
#[test]
fn deep_products_are_exact_in_chunks() {
    let (m, k, n) = (3, MAX_DEPTH + 9_000, 2);
    let mut r = rng(17);
    let a = spread(&mut r, m * k, 0.0);
    let b = spread(&mut r, k * n, 0.0);
    let (exact, size) = reference(&a, false, &b, false, (m, k, n));
    let got =
        gemm_in(Compute::Int8 { moduli: Some(16) }, 1.0, (&a, false), (&b, false), 0.0, &[0.0; 6], (m, k, n)).unwrap();
    let err = worst(&got, &exact, &size);
    assert!(err <= 1.0, "k = {k}: {err:.2}·u");
}

/// On the GPU, a product smaller than `Tuning::fp64_products_from` in any
/// dimension is native where the count is chosen (the emulation's passes
/// would outweigh its products), bit for bit; a fixed count still emulates.
#[test]
fn small_products_are_native_where_the_count_is_chosen() {
    let dev = device();
    if dev.is_cpu() {
        return; // the CPU's emulation is the reference, of every size
    }
    let (m, k, n) = (64, 300, 48);
    let mut r = rng(21);
    let (a, b) = (spread(&mut r, m * k, 0.0), spread(&mut r, k * n, 0.0));
    let run = |compute| gemm_on(&dev, compute, 1.0, (&a, false), (&b, false), 0.0, &vec![0.0; m * n], (m, k, n));
    let native = run(Compute::Native).unwrap();
    assert_eq!(run(Compute::Int8 { moduli: None }).unwrap(), native);
    assert_ne!(run(Compute::Int8 { moduli: Some(13) }).unwrap(), native, "a fixed count emulates at any size");
}

/// The device under test and the CPU backend (the scheme's reference) give
/// the same products to within a unit roundoff of `|A|·|B|` (their 2-norms
/// may round apart, and with them a scaling exponent).
#[test]
fn the_device_agrees_with_the_cpu_reference() {
    let (m, k, n) = (33, 500, 21);
    let mut r = rng(19);
    let a = spread(&mut r, m * k, 1.0);
    let b = spread(&mut r, n * k, 1.0);
    let (_, size) = reference(&a, false, &b, true, (m, k, n));
    let compute = Compute::Int8 { moduli: Some(16) };
    let device = gemm_in(compute, 1.0, (&a, false), (&b, true), 0.0, &vec![0.0; m * n], (m, k, n)).unwrap();
    let cpu = {
        let be = Cpu::new();
        let (ab, bb) = (be.upload(&a).unwrap(), be.upload(&b).unwrap());
        let mut cb = be.upload(&vec![0.0; m * n]).unwrap();
        let (av, bv) = (View::dense(&ab, m, k).unwrap(), View::dense(&bb, n, k).unwrap());
        be.gemm_in(compute, 1.0, av, Op::NoTrans, bv, Op::Trans, 0.0, ViewMut::dense(&mut cb, m, n).unwrap()).unwrap();
        let mut out = vec![0.0; m * n];
        be.download(&cb, &mut out).unwrap();
        out
    };
    for (idx, ((d, c), s)) in device.iter().zip(&cpu).zip(&size).enumerate() {
        assert!((d - c).abs() <= U * s, "entry {idx}: device {d:e}, CPU {c:e}");
    }
}

/// `GPUMAT_FP64_PRODUCTS` (`Tuning::fp64_products`) reaches the scaled Gram
/// matrix `A·D²·Aᵀ`, in full and RFP storage, and the Cholesky
/// factorization's updates: each entry of the Gram matrix within
/// `3u·(|A|·D²·|A|ᵀ)ᵢⱼ` of a double-double reference (one rounding of
/// `A·D`, the emulation's, the last), and a factor within the bound
/// `‖A − LLᵀ‖/‖A‖ ≤ 10·n·u` that is not the native one bit for bit.
#[test]
fn the_fp64_products_setting_reaches_gram_matrices_and_cholesky() {
    use gpumat::{Device, SymStorage};
    let native = device();
    let name = if native.is_cpu() { "cpu" } else { "cuda" };
    let tuning = Tuning { fp64_products: Compute::Int8 { moduli: Some(16) }, ..native.tuning() };
    let emulating = Device::with_tuning(name, tuning).unwrap();
    let (m, k) = (70, 150);
    let mut r = rng(23);
    let a = spread(&mut r, m * k, 1.0);
    let d: Vec<f64> = (0..k).map(|_| r.random_range(0.1..3.0)).collect();
    for storage in [SymStorage::Full, SymStorage::Rfp] {
        let g = emulating
            .from_col_major(m, k, &a)
            .unwrap()
            .scaled_gram_in(&emulating.from_col_major(k, 1, &d).unwrap(), storage)
            .unwrap();
        let g = g.to_dense().unwrap().to_host().unwrap();
        for j in 0..m {
            for i in j..m {
                // The rounded aᵢₚ·dₚ: the bound's first u covers them.
                let (exact, size) = dot((0..k).map(|p| (a[i + p * m] * d[p], a[j + p * m] * d[p])));
                let got = g[i + j * m];
                assert!((got - exact).abs() <= 3.0 * U * size, "{storage:?} ({i}, {j}): {got:e} vs {exact:e}");
            }
        }
    }
    // Cholesky of X·Xᵀ + n·I through the setting, of an order past one
    // block (256), so that there are trailing updates.
    let n = 300;
    let x = spread(&mut rng(29), n * n, 0.0);
    let mut spd = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..n {
            spd[i + j * n] =
                (0..n).map(|p| x[i + p * n] * x[j + p * n]).sum::<f64>() + if i == j { n as f64 } else { 0.0 };
        }
    }
    let factor = |dev: &Device| {
        let sym = gpumat::Sym::from_lower(dev.from_col_major(n, n, &spd).unwrap()).unwrap();
        let f = sym.cholesky().unwrap();
        (f.factor().unwrap().to_dense().unwrap().to_host().unwrap(), f.reconstruct().unwrap().to_host().unwrap())
    };
    let ((l_native, _), (l_emulated, llt)) = (factor(&native), factor(&emulating));
    let err = common::rel_error(&llt, &spd);
    assert!(err <= 10.0 * n as f64 * U, "‖A − LLᵀ‖/‖A‖ = {err:e}");
    assert!(l_native.iter().zip(&l_emulated).any(|(x, y)| x != y), "the factor's updates were native");
}
