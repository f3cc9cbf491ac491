//! The `Device`/`Matrix`/`Sym`/`Tri` API, on the device under test, against
//! FP64 references computed on the host by naive loops.

mod common;

use common::*;
use gpumat::api::{Norm, SymStorage};
use gpumat::{Error, Matrix, Scalar, Sym, Tri};

fn upload<T: Scalar>(data: &[f64], rows: usize, cols: usize) -> Matrix<T> {
    let v: Vec<T> = data.iter().map(|&x| T::from_f64(x)).collect();
    device().from_col_major(rows, cols, &v).unwrap()
}

fn host<T: Scalar>(a: &Matrix<T>) -> Vec<f64> {
    a.to_host().unwrap().into_iter().map(Scalar::to_f64).collect()
}

fn check_matmul<T: Scalar>() {
    let mut r = rng(1);
    for (m, k, n) in [(1, 1, 1), (7, 3, 5), (33, 64, 17), (128, 96, 130)] {
        let (a, b) = (random(&mut r, m, k), random(&mut r, k, n));
        // Round the inputs first so the reference sees exactly what the device does.
        let (da, db) = (upload::<T>(&a, m, k), upload::<T>(&b, k, n));
        let (c_ref, ..) = naive_matmul(&host(&da), (m, k), false, &host(&db), (k, n), false);
        let c = &da * &db;
        assert_eq!(c.shape(), (m, n));
        // ‖C − C_ref‖_F / ‖C_ref‖_F ≤ 2·k·u (entries are O(1), no cancellation blow-up at these sizes).
        let err = rel_error(&host(&c), &c_ref);
        assert!(err <= 2.0 * k as f64 * u::<T>(), "{} {m}×{k}×{n}: {err:e}", T::NAME);
    }
}

#[test]
fn matmul_matches_naive_product() {
    check_matmul::<f64>();
    check_matmul::<f32>();
}

#[test]
fn tr_matmul_multiplies_by_the_transpose_without_forming_it() {
    let mut r = rng(11);
    for (k, m, n) in [(1, 1, 1), (9, 4, 3), (64, 33, 2), (130, 70, 1)] {
        let (a, b) = (random(&mut r, k, m), random(&mut r, k, n));
        let c = upload::<f64>(&a, k, m).tr_matmul(&upload::<f64>(&b, k, n)).unwrap();
        assert_eq!(c.shape(), (m, n));
        let (c_ref, ..) = naive_matmul(&a, (k, m), true, &b, (k, n), false);
        // ‖C − AᵀB‖_F / ‖AᵀB‖_F ≤ 2·k·u.
        let err = rel_error(&host(&c), &c_ref);
        assert!(err <= 2.0 * k as f64 * u::<f64>(), "{k}×{m}, {k}×{n}: {err:e}");
    }
    let (a, b) = (upload::<f64>(&[1.0; 6], 2, 3), upload::<f64>(&[1.0; 6], 3, 2));
    assert!(matches!(a.tr_matmul(&b), Err(Error::DimensionMismatch { op: "tr_matmul", .. })));
}

#[test]
fn elementwise_operators_are_exact() {
    let mut r = rng(2);
    let (a, b) = (random(&mut r, 9, 4), random(&mut r, 9, 4));
    let (da, db) = (upload::<f64>(&a, 9, 4), upload::<f64>(&b, 9, 4));
    let sum: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let diff: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
    let scaled: Vec<f64> = a.iter().map(|x| 2.5 * x).collect();
    let neg: Vec<f64> = a.iter().map(|x| -x).collect();
    assert_eq!(host(&(&da + &db)), sum);
    assert_eq!(host(&(&da - &db)), diff);
    assert_eq!(host(&(&da * 2.5)), scaled);
    assert_eq!(host(&(2.5 * &da)), scaled);
    assert_eq!(host(&-&da), neg);
    let t = da.transpose().unwrap();
    assert_eq!(t.shape(), (4, 9));
    let at: Vec<f64> = (0..9 * 4).map(|p| a[(p / 4) + (p % 4) * 9]).collect();
    assert_eq!(host(&t), at);
}

#[test]
fn mismatched_shapes_fail_now_or_at_the_first_read() {
    let (a, b) = (upload::<f64>(&[1.0; 6], 2, 3), upload::<f64>(&[1.0; 6], 2, 3));
    assert!(matches!(a.matmul(&b), Err(Error::DimensionMismatch { op: "matmul", .. })));
    let c = &a * &b; // deferred
    let d = &c + &c; // and passed on
    let e = d.to_host().unwrap_err();
    assert!(matches!(e, Error::DimensionMismatch { .. }), "{e}");
    assert!(e.to_string().contains("A is 2×3 but B is 2×3"), "{e}");
    assert!(a.add_scaled(1.0, 1.0, &upload::<f64>(&[1.0; 4], 2, 2)).is_err());
    assert!(device().from_col_major(2, 2, &[1.0f64; 3]).is_err());
}

#[test]
fn casts_round_to_nearest() {
    let x = [1.0 + 2f64.powi(-40), 0.1, -3.0, 1e-30];
    let a = upload::<f64>(&x, 2, 2);
    let s = a.cast().unwrap();
    assert_eq!(s.to_host().unwrap(), x.iter().map(|&v| v as f32).collect::<Vec<_>>());
    let back = s.cast().unwrap();
    assert_eq!(back.to_host().unwrap(), x.iter().map(|&v| v as f32 as f64).collect::<Vec<_>>());
}

#[test]
fn norms_match_definitions() {
    let a = [1.0, -2.0, 3.0, -4.0, 5.0, 6.0]; // 2×3: rows (1, 3, 5), (-2, -4, 6)
    let m = upload::<f64>(&a, 2, 3);
    assert_eq!(m.norm(Norm::One).unwrap(), 11.0);
    assert_eq!(m.norm(Norm::Inf).unwrap(), 12.0);
    assert_eq!(m.norm(Norm::Max).unwrap(), 6.0);
    let fro = (a.iter().map(|x| x * x).sum::<f64>()).sqrt();
    assert!((m.norm(Norm::Frobenius).unwrap() - fro).abs() <= 4.0 * f64::EPSILON * fro);
    // No overflow where the squares would.
    let big = upload::<f64>(&[1e200, 1e200], 2, 1);
    assert!((big.norm(Norm::Frobenius).unwrap() / (1e200 * 2f64.sqrt()) - 1.0).abs() < 1e-15);
    let nan = upload::<f64>(&[1.0, f64::NAN], 2, 1);
    for n in [Norm::One, Norm::Inf, Norm::Max, Norm::Frobenius] {
        assert!(nan.norm(n).unwrap().is_nan(), "{n:?} must propagate NaN");
    }
    assert_eq!(nan.find_non_finite().unwrap(), Some((1, 0)));
}

#[test]
fn scaling_rows_and_columns() {
    let a = upload::<f64>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3);
    let dr = upload::<f64>(&[10.0, 100.0], 2, 1);
    let dc = upload::<f64>(&[1.0, 2.0, 3.0], 1, 3);
    assert_eq!(host(&a.scale_rows(&dr).unwrap()), [10.0, 200.0, 30.0, 400.0, 50.0, 600.0]);
    assert_eq!(host(&a.scale_cols(&dc).unwrap()), [1.0, 2.0, 6.0, 8.0, 15.0, 18.0]);
    assert!(a.scale_rows(&dc).is_err());
}

#[test]
fn faer_round_trip_with_strides() {
    let m = faer::Mat::<f64>::from_fn(3, 4, |i, j| (10 * i + j) as f64);
    let dev = device();
    let a = dev.upload(m.as_ref().transpose()).unwrap();
    assert_eq!(a.shape(), (4, 3));
    assert_eq!(a.to_faer().unwrap(), m.transpose().to_owned());
}

fn check_gram_and_rfp<T: Scalar>() {
    let mut r = rng(3);
    for (m, k) in [(1, 1), (5, 3), (6, 9), (31, 40), (64, 64)] {
        let a = upload::<T>(&random(&mut r, m, k), m, k);
        let g = Sym::gram(&a).unwrap();
        let (g_ref, ..) = naive_matmul(&host(&a), (m, k), false, &host(&a), (m, k), true);
        let dense = host(&g.to_dense().unwrap());
        // ‖G − A·Aᵀ‖_F / ‖A·Aᵀ‖_F ≤ 2·k·u.
        let err = rel_error(&dense, &g_ref);
        assert!(err <= 2.0 * k as f64 * u::<T>(), "{} m={m} k={k}: {err:e}", T::NAME);

        let p = g.to_rfp().unwrap();
        assert_eq!(p.storage(), SymStorage::Rfp);
        assert_eq!(p.stored_len(), m * (m + 1) / 2);
        assert_eq!(host(&p.to_dense().unwrap()), dense, "RFP round trip is exact");
        assert_eq!(host(&p.to_full().unwrap().to_dense().unwrap()), dense);
        // A cast keeps the storage and rounds each entry once.
        for sym in [&g, &p] {
            let cast = sym.cast().unwrap();
            assert_eq!(cast.storage(), sym.storage());
            let rounded: Vec<f64> = dense.iter().map(|&v| T::Other::from_f64(v).to_f64()).collect();
            assert_eq!(host(&cast.to_dense().unwrap()), rounded);
        }
    }
}

#[test]
fn gram_lower_triangle_and_rfp_storage() {
    check_gram_and_rfp::<f64>();
    check_gram_and_rfp::<f32>();
}

#[test]
fn sym_ignores_the_upper_triangle() {
    let a = upload::<f64>(&[1.0, 2.0, f64::NAN, 3.0], 2, 2);
    let s = Sym::from_lower(a).unwrap();
    assert_eq!(host(&s.to_dense().unwrap()), [1.0, 2.0, 2.0, 3.0]);
    assert!(Sym::from_lower(upload::<f64>(&[1.0; 6], 2, 3)).is_err());
}

#[test]
fn triangular_solve_and_product() {
    let mut r = rng(4);
    let n = 50;
    // Well-conditioned lower triangle: unit-ish diagonal dominance.
    let mut l = random(&mut r, n, n);
    for i in 0..n {
        l[i + i * n] = 4.0 + l[i + i * n].abs();
    }
    let b = random(&mut r, n, 3);
    let (dl, db) = (upload::<f64>(&l, n, n), upload::<f64>(&b, n, 3));
    let t = Tri::lower(dl).unwrap();
    let dense = host(&t.to_dense().unwrap());
    assert!((0..n).all(|j| (0..j).all(|i| dense[i + j * n] == 0.0)), "upper part zeroed");
    for transpose in [false, true] {
        let x = host(&t.solve(&db, transpose).unwrap());
        // Backward error: ‖op(L)·x − b‖_F / (‖L‖_F·‖x‖_F) ≤ n·u.
        let (lx, ..) = naive_matmul(&dense, (n, n), transpose, &x, (n, 3), false);
        let res: Vec<f64> = lx.iter().zip(&b).map(|(p, q)| p - q).collect();
        let berr = frobenius(&res) / (frobenius(&dense) * frobenius(&x));
        assert!(berr <= n as f64 * f64::EPSILON / 2.0, "transpose={transpose}: {berr:e}");
    }
    let lb = host(&t.matmul(&db).unwrap());
    let (lb_ref, ..) = naive_matmul(&dense, (n, n), false, &b, (n, 3), false);
    assert!(rel_error(&lb, &lb_ref) <= 2.0 * n as f64 * f64::EPSILON / 2.0);
    assert!(t.solve(&upload::<f64>(&[1.0; 4], 4, 1), false).is_err());
}

#[test]
fn empty_matrices_are_valid_operands() {
    let dev = device();
    let a = dev.zeros::<f64>(3, 0).unwrap();
    let b = dev.zeros::<f64>(0, 2).unwrap();
    let c = a.matmul(&b).unwrap();
    assert_eq!(c.shape(), (3, 2));
    assert_eq!(c.to_host().unwrap(), vec![0.0; 6], "a product over k = 0 is zero");
    assert_eq!(a.norm(Norm::Frobenius).unwrap(), 0.0);
}

#[test]
fn allocations_that_do_not_fit_are_errors_not_aborts() {
    // 2^48 entries of 8 bytes: more than any device or address space holds.
    let n = 1usize << 24;
    let dev = device();
    match dev.zeros::<f64>(n, n) {
        Err(Error::OutOfDeviceMemory { requested, free }) if !dev.is_cpu() => {
            assert_eq!(requested, n * n * 8);
            assert!(free < requested, "free {free} ≥ requested {requested}");
        }
        Err(Error::OutOfHostMemory { needed, available, .. }) if dev.is_cpu() => {
            assert_eq!(needed, n * n * 8);
            assert!(available < needed, "available {available} ≥ needed {needed}");
        }
        other => panic!("expected running out of the device's memory, got {other:?}"),
    }
    assert!(dev.zeros::<f64>(usize::MAX, 2).is_err(), "rows·cols overflow");
    assert!(dev.zeros::<f64>(usize::MAX / 4, 2).is_err(), "bytes overflow");
    // The identity is built on the host: an order whose square overflows, or
    // whose copy there does not fit, is an error and not an abort.
    for n in [1usize << 24, 1 << 33, usize::MAX] {
        let e = dev.identity::<f64>(n).err().unwrap_or_else(|| panic!("identity({n}) allocated"));
        assert!(matches!(e, Error::OutOfHostMemory { .. }), "identity({n}): {e}");
        assert!(!e.to_string().contains('\n'), "{e}");
    }
}

#[test]
fn large_transfers_round_trip_exactly() {
    // Over 8 MiB, the CUDA backend stages transfers through pinned buffers in
    // chunks; several sizes hit whole chunks, a partial last chunk, and
    // back-to-back transfers of different data through the same buffers.
    let dev = device();
    for (k, len) in [(1usize << 20) + 1, 3 << 20, (3 << 20) + 12_345].into_iter().enumerate() {
        let data: Vec<f64> = (0..len).map(|i| (i * (k + 3)) as f64 + 0.5).collect();
        let a = dev.from_col_major(len, 1, &data).unwrap();
        let b = dev.from_col_major(1, len, &data.iter().map(|x| -x).collect::<Vec<_>>()).unwrap();
        assert!(a.to_host().unwrap() == data, "len {len}: upload/download changed the data");
        assert!(b.to_host().unwrap().iter().zip(&data).all(|(y, x)| *y == -x), "len {len}: second matrix");
    }
}

#[test]
fn interop_shares_memory_another_owner_keeps_alive() {
    let dev = device();
    let a = upload::<f64>(&[1.0, 2.0, 3.0, 4.0], 2, 2);
    let b = a.try_clone().unwrap();
    // Two matrices, two places; the address is stable while a matrix lives.
    assert_ne!(a.address().unwrap(), b.address().unwrap());
    assert_eq!(a.address().unwrap(), a.address().unwrap());
    assert_eq!(dev.stream_handle().is_some(), !dev.is_cpu());
    if dev.is_cpu() {
        assert_eq!(dev.ordinal(), 0);
    }
    // Memory of another matrix, shared: the wrapper reads what `a` holds,
    // and dropping it frees nothing (`a` stays readable).
    let keep = a.try_clone().unwrap();
    let address = keep.address().unwrap() as u64;
    // SAFETY: `keep` owns 4 f64 at `address` and outlives the wrapper.
    let shared = unsafe { dev.wrap_device_memory::<f64>(address, 2, 2, Box::new(keep)) }.unwrap();
    assert_eq!(shared.to_host().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
    assert_eq!(shared.address().unwrap() as u64, address);
    // Computations read the shared entries and write only their results.
    let product = shared.matmul(&shared).unwrap().to_host().unwrap();
    assert_eq!(product, vec![7.0, 10.0, 15.0, 22.0]);
    assert_eq!(shared.to_host().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
    drop(shared);
    assert_eq!(a.to_host().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
    // A misaligned address is refused before it is used.
    // SAFETY: refused before the pointer is read.
    let misaligned = unsafe { dev.wrap_device_memory::<f64>(address + 4, 1, 1, Box::new(())) };
    assert!(matches!(misaligned, Err(Error::InvalidArgument(_))));
    if dev.is_cpu() {
        // Host memory of a Rust vector, which the wrapper keeps alive.
        let mut host = vec![2.0f64, 0.0, 0.0, 4.0];
        let ptr = host.as_mut_ptr() as u64;
        // SAFETY: the box owns the vector's heap buffer, which moving it
        // does not move; nothing else writes it.
        let wrapped = unsafe { dev.wrap_device_memory::<f64>(ptr, 2, 2, Box::new(host)) }.unwrap();
        assert_eq!(wrapped.address().unwrap() as u64, ptr);
        let x = wrapped.solve(&upload::<f64>(&[2.0, 8.0], 2, 1)).unwrap().x;
        // diag(2, 4)·x = (2, 8): x = (1, 2) to a few units of rounding.
        let x = x.to_host().unwrap();
        assert!((x[0] - 1.0).abs() <= 4.0 * f64::EPSILON && (x[1] - 2.0).abs() <= 8.0 * f64::EPSILON, "{x:?}");
    }
}

#[test]
fn host_arrays_round_trip_and_refuse_what_does_not_fit() {
    let dev = device();
    // 16 MiB: above the size from which pageable copies are staged, so a
    // GPU copies this one straight from the page-locked memory.
    let len = 2 << 20;
    let mut host = dev.host_array::<f64>(len).unwrap();
    assert_eq!(host.len(), len);
    assert!(host.iter().all(|&v| v == 0.0), "a new host array holds zeros");
    assert_eq!(host.is_page_locked(), !dev.is_cpu());
    assert_eq!(gpumat::api::is_page_locked(&host[10..20]), !dev.is_cpu());
    let values = random(&mut rng(9), len, 1);
    assert!(!gpumat::api::is_page_locked(&values), "a Vec is pageable");
    host.copy_from_slice(&values);
    let a = dev.from_col_major(1024, 2048, &host).unwrap();
    let mut back = dev.host_array_from(&vec![f64::NAN; len]).unwrap();
    let batch = gpumat::Batch::from_matrix(a, (1024, 1)).unwrap();
    batch.to_host_into(&mut back).unwrap();
    assert!(back[..] == values[..], "the round trip changed entries");
    assert!(format!("{back:?}").contains("2097152 entries"));
    assert!(dev.host_array::<f32>(0).unwrap().is_empty());
    for len in [usize::MAX, 1 << 60] {
        let refused = dev.host_array::<f64>(len);
        assert!(matches!(refused, Err(Error::OutOfHostMemory { .. })), "{len} entries: {refused:?}");
    }
}
