//! The nonblocking API (DESIGN.md, "Nonblocking") on the device under test:
//! calls on matrices enqueue and return, only a read to the host waits, and a
//! failure is raised at that read. Written once; CI runs it on the CPU (which
//! computes eagerly), the GPU machine with `GPUMAT_DEVICE=cuda`.
//!
//! What is proved, and the bounds:
//!
//! - **A chain of five dependent operations returns before it completes.**
//!   The chain is `X = L⁻¹·(s·(A·B)·C + A)`, `s = 1/n`: a product, a
//!   scaling, a product, an addition and a triangular solve, each taking the
//!   previous result before it is computed (`matmul`, `scaled`,
//!   `add_scaled`, `Tri::solve`: none of them reads to the host). On a GPU,
//!   at order 16384 (two FP64 products and a triangular solve: about 0.43 s
//!   on an H200), the enqueueing thread returns in under 1 % of the chain's
//!   GPU time (from the first call until `Device::synchronize` returns; the
//!   result's `to_host` follows, and its copy of 2 GiB is left out of the
//!   ratio) once the memory the chain takes is in the device's memory pool
//!   (seen: 0.9 ms of 430 ms, 0.2 %; most of it cuBLAS's `trsm`). The pool
//!   gives memory back to the driver at every synchronization, so a chain
//!   run after one takes its arrays from the driver afresh, at about 1 µs
//!   per MiB of the enqueueing thread's time: that run must still return in
//!   under 10 % (seen: 10 ms of 452 ms, 2.3 %). The result has a small
//!   residual: for a random `v`,
//!   `‖L·(X·v) − (s·A·(B·(C·v)) + A·v)‖∞ ≤ 4·n·u·‖s·|A|·|B|·|C|·|v| + |A|·|v| + |L|·|X|·|v|‖∞`
//!   (the rounding errors of the products and of the solve are bounded
//!   entry by entry by `γ_{2n}` times these absolute values, and the host's
//!   matrix–vector products add as much again). On the CPU the timing claim
//!   does not apply; the same chain at order 64 must meet the same residual
//!   bound. On every device a chain of order 96 must also match an
//!   independent FP64 host reference (naive loops, forward substitution):
//!   `‖X − X_ref‖_F / ‖X_ref‖_F ≤ 4·n·u`.
//! - **A failure in the middle of a chain surfaces at the first read, naming
//!   the failing operation.** No public operation defers a failure that is
//!   *found on the device*: those that can meet one (Cholesky, LU, LDLᵀ,
//!   `solve`, the finiteness checks) read their status back and fail at once.
//!   What is deferred is a failure found when an operator is called (mismatched
//!   shapes, an allocation that cannot fit): the operator returns a matrix
//!   carrying the error, every later operator accepts it and passes the same
//!   error on without doing work, a `Result`-returning method given it fails
//!   at once with that error, and the first blocking read (`to_host`,
//!   `to_faer`, `norm`) returns it: `dimension mismatch in matmul: …` for the
//!   shapes, `out of host/device memory: …` (naming the size, not the
//!   operation) for the allocation, even when the failed matrix is too large
//!   for the host to hold (the read looks at the failure first).
//! - **Dropping unread results neither leaks device memory nor blocks.** Fifty
//!   products of two order-n matrices, each dropped unread. On a GPU (order
//!   8192, about a second of work) the loop returns in under 5 % of the time
//!   the device takes to run it (seen on an H200: 1.5 ms of 1.01 s); while the work is still queued the device's
//!   used memory has grown by at most two results (fifty leaked results would
//!   be 25 GiB), and once it has run by at most 64 MiB. The memory is read
//!   with `Cuda::memory` through `Device::backend`, the only public way;
//!   there is no public measure of the host's memory, so on the CPU the test
//!   asserts that the loop completes, that the operands are unchanged and
//!   that a last product kept matches the naive product within `2·n·u`.
//!
//! The tests take one lock so that no two run on the device at once: the
//! timings and the memory readings would otherwise measure each other.

mod common;

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use common::*;
use gpumat::api::Norm;
use gpumat::api::device::AnyBackend;
use gpumat::{Device, Error, Matrix, Tri};
use rand::Rng;

/// One test on the device at a time.
static DEVICE: Mutex<()> = Mutex::new(());

fn exclusive() -> MutexGuard<'static, ()> {
    DEVICE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `(free, total)` device memory in bytes on a GPU; `None` on the CPU, which
/// has no public measure of its memory in use.
fn device_memory(dev: &Device) -> Option<(usize, usize)> {
    match dev.backend() {
        AnyBackend::Cuda(cuda) => Some(cuda.memory().expect("the driver reports the device's free memory")),
        AnyBackend::Cpu(_) => None,
    }
}

/// Bytes of an order-`n` f64 matrix.
fn f64_bytes(n: usize) -> usize {
    n * n * size_of::<f64>()
}

const MIB: usize = 1 << 20;
const GIB: usize = 1 << 30;

/// The order of the timed chain: large on a GPU, so that its work is long
/// against the time to enqueue it (16384 where its sixteen order-n arrays
/// fit, else the largest power of two down to 4096 that does); small on the
/// CPU, so that CI stays fast.
fn chain_order(dev: &Device) -> usize {
    match device_memory(dev) {
        None => 64,
        Some((free, _)) => [16384, 8192].into_iter().find(|&n| free >= 16 * f64_bytes(n)).unwrap_or(4096),
    }
}

/// The order of the drop loop's products: 8192 on a GPU (fifty products are
/// about a second of work on an H100) where a few such arrays fit, else
/// 4096; small on the CPU.
fn drop_order(dev: &Device) -> usize {
    match device_memory(dev) {
        None => 64,
        Some((free, _)) if free >= 8 * f64_bytes(8192) => 8192,
        Some(_) => 4096,
    }
}

/// The chain's operands on the host, column-major, order `n`: `A`, `B`, `C`
/// with entries in [−1, 1), and `L`, whose lower triangle has a diagonal in
/// [2, 3) and entries in [−1/n, 1/n) below it (rows diagonally dominant, so
/// `‖L⁻¹‖∞ ≤ 1`); its upper triangle holds entries in [−1, 1) that a
/// triangular solve must never read.
struct HostOperands {
    n: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    l: Vec<f64>,
}

impl HostOperands {
    fn new(seed: u64, n: usize) -> Self {
        let mut r = rng(seed);
        let (a, b, c) = (random(&mut r, n, n), random(&mut r, n, n), random(&mut r, n, n));
        let mut l = random(&mut r, n, n);
        for j in 0..n {
            l[j + j * n] = r.random_range(2.0..3.0);
            for i in j + 1..n {
                l[i + j * n] /= n as f64;
            }
        }
        HostOperands { n, a, b, c, l }
    }

    /// The scaling between the two products.
    fn s(&self) -> f64 {
        1.0 / self.n as f64
    }

    fn upload(&self, dev: &Device) -> Operands {
        let n = self.n;
        let up = |x: &[f64]| dev.from_col_major(n, n, x).expect("an order-n operand fits on the device");
        Operands {
            a: up(&self.a),
            b: up(&self.b),
            c: up(&self.c),
            l: Tri::lower(up(&self.l)).expect("L is square"),
            s: self.s(),
        }
    }
}

/// The chain's operands on the device.
struct Operands {
    a: Matrix<f64>,
    b: Matrix<f64>,
    c: Matrix<f64>,
    l: Tri<f64>,
    s: f64,
}

/// `X = L⁻¹·(s·(A·B)·C + A)`: five operations, each on the result of the one
/// before, none of which reads to the host; with the time since the start at
/// which each returned.
fn enqueue_chain(ops: &Operands) -> (Matrix<f64>, [Duration; 5]) {
    let start = Instant::now();
    let ab = ops.a.matmul(&ops.b).expect("1: A·B is enqueued");
    let t1 = start.elapsed();
    let sab = ab.scaled(ops.s).expect("2: s·(A·B) is enqueued");
    let t2 = start.elapsed();
    let sabc = sab.matmul(&ops.c).expect("3: s·(A·B)·C is enqueued");
    let t3 = start.elapsed();
    let sum = sabc.add_scaled(1.0, 1.0, &ops.a).expect("4: s·A·B·C + A is enqueued");
    let t4 = start.elapsed();
    let x = ops.l.solve(&sum, false).expect("5: L⁻¹·(s·A·B·C + A) is enqueued");
    (x, [t1, t2, t3, t4, start.elapsed()])
}

/// `y = M·v` for column-major `M` of order `n`, on the lower triangle only
/// when `lower`, with `|M|` and `|v|` when `abs`.
fn matvec(m: &[f64], n: usize, v: &[f64], lower: bool, abs: bool) -> Vec<f64> {
    let f = |x: f64| if abs { x.abs() } else { x };
    let mut y = vec![0.0; n];
    for (j, &vj) in v.iter().enumerate() {
        let vj = f(vj);
        let first = if lower { j } else { 0 };
        for i in first..n {
            y[i] += f(m[i + j * n]) * vj;
        }
    }
    y
}

fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// `(‖r‖∞, ‖bound‖∞)` for the chain's result `x` and a random probe `v`:
/// `r = L·(X·v) − (s·A·(B·(C·v)) + A·v)` and
/// `bound = s·|A|·(|B|·(|C|·|v|)) + |A|·|v| + |L|·(|X|·|v|)`, all on the host
/// in f64 in O(n²).
fn chain_residual(h: &HostOperands, x: &[f64], seed: u64) -> (f64, f64) {
    let n = h.n;
    assert_eq!(x.len(), n * n, "the chain's result is n × n");
    let v = random(&mut rng(seed), n, 1);
    let s = h.s();
    let lx = matvec(&h.l, n, &matvec(x, n, &v, false, false), true, false);
    let sabc = matvec(&h.a, n, &matvec(&h.b, n, &matvec(&h.c, n, &v, false, false), false, false), false, false);
    let av = matvec(&h.a, n, &v, false, false);
    let r: Vec<f64> = (0..n).map(|i| lx[i] - (s * sabc[i] + av[i])).collect();
    let abc = matvec(&h.a, n, &matvec(&h.b, n, &matvec(&h.c, n, &v, false, true), false, true), false, true);
    let a_abs = matvec(&h.a, n, &v, false, true);
    let lx_abs = matvec(&h.l, n, &matvec(x, n, &v, false, true), true, true);
    let bound: Vec<f64> = (0..n).map(|i| s * abc[i] + a_abs[i] + lx_abs[i]).collect();
    (max_abs(&r), max_abs(&bound))
}

/// Asserts the residual bound of the module's doc comment on the chain's
/// result `x`.
fn assert_small_residual(h: &HostOperands, x: &[f64], what: &str) {
    assert!(x.iter().all(|v| v.is_finite()), "{what}: the chain's result has a non-finite entry");
    let (r, bound) = chain_residual(h, x, 99);
    let tol = 4.0 * h.n as f64 * u::<f64>() * bound;
    eprintln!("{what}: residual {r:e}, 4·n·u·bound {tol:e}");
    assert!(r <= tol, "{what}: ‖L·X·v − (s·A·B·C·v + A·v)‖∞ = {r:e} > 4·n·u·‖bound‖∞ = {tol:e}");
}

/// `X_ref = L⁻¹·(s·(A·B)·C + A)` by naive loops on the host in f64 (forward
/// substitution on `L`'s lower triangle).
fn reference_chain(h: &HostOperands) -> Vec<f64> {
    let n = h.n;
    let (ab, ..) = naive_matmul(&h.a, (n, n), false, &h.b, (n, n), false);
    let sab: Vec<f64> = ab.iter().map(|x| h.s() * x).collect();
    let (sabc, ..) = naive_matmul(&sab, (n, n), false, &h.c, (n, n), false);
    let mut x: Vec<f64> = sabc.iter().zip(&h.a).map(|(p, a)| p + a).collect();
    for col in x.chunks_mut(n) {
        for i in 0..n {
            let partial: f64 = (0..i).map(|k| h.l[i + k * n] * col[k]).sum();
            col[i] = (col[i] - partial) / h.l[i + i * n];
        }
    }
    x
}

#[test]
fn chain_of_five_matches_an_fp64_host_reference() {
    let _one = exclusive();
    let dev = device();
    let h = HostOperands::new(1, 96);
    let (x, _) = enqueue_chain(&h.upload(&dev));
    assert_eq!(x.shape(), (h.n, h.n));
    let got = x.to_host().expect("the chain's result reads back");
    let err = rel_error(&got, &reference_chain(&h));
    let tol = 4.0 * h.n as f64 * u::<f64>();
    eprintln!("{dev:?}: order {}: relative error {err:e}, 4·n·u = {tol:e}", h.n);
    assert!(err <= tol, "{dev:?}: ‖X − X_ref‖_F/‖X_ref‖_F = {err:e} > 4·n·u = {tol:e}");
}

/// One timed run of the chain, started with the device idle.
struct Run {
    /// When each of the five operations returned.
    steps: [Duration; 5],
    /// When the device had run the chain (`Device::synchronize` returned).
    ran: Duration,
    /// When the result's `to_host` returned.
    read: Duration,
    x: Vec<f64>,
}

fn timed_chain(ops: &Operands) -> Run {
    let start = Instant::now();
    let (x, steps) = enqueue_chain(ops);
    ops.a.device().synchronize().expect("the chain runs without error");
    let ran = start.elapsed();
    let x = x.to_host().expect("the chain's result reads back");
    Run { steps, ran, read: start.elapsed(), x }
}

#[test]
fn chain_of_five_returns_before_it_completes() {
    let _one = exclusive();
    let dev = device();
    let n = chain_order(&dev);
    let h = HostOperands::new(2, n);
    let ops = h.upload(&dev);
    dev.synchronize().expect("the uploads complete");
    if dev.is_cpu() {
        // Eager: the chain is computed by the time it returns, and no timing
        // claim applies; its result must be right.
        let run = timed_chain(&ops);
        eprintln!("{dev:?}: order {n}: chain returned after {:?}, read after {:?}", run.steps[4], run.read);
        assert_small_residual(&h, &run.x, &format!("{dev:?}, order {n}"));
        return;
    }
    // A first run compiles the kernels it uses and sets cuBLAS up: what a
    // long-running program has done once.
    drop(enqueue_chain(&ops).0);
    dev.synchronize().expect("the warm-up chain completes");
    let ratio = |run: &Run| run.steps[4].as_secs_f64() / run.ran.as_secs_f64();
    let report = |what: &str, run: &Run| {
        format!(
            "{dev:?}, order {n}, {what}: the five operations returned at {:?}, the device had run them after {:?} \
             ({:.2} %), the result was read after {:?}",
            run.steps,
            run.ran,
            100.0 * ratio(run),
            run.read
        )
    };
    // The memory pool gives back what is not in use at every
    // synchronization, so the chain's five new arrays are taken from the
    // driver afresh: that costs the enqueueing thread about 1 µs per MiB.
    let cold = timed_chain(&ops);
    eprintln!("{}", report("memory taken from the driver", &cold));
    assert!(ratio(&cold) < 0.10, "{}: not under 10 %", report("memory taken from the driver", &cold));
    // With the memory in the pool (six order-n arrays allocated, synchronized
    // and dropped just before, so that nothing is left running), the
    // operations themselves return in under 1 % of the chain's GPU time.
    let mut last = None;
    for _ in 0..3 {
        let ballast: Vec<Matrix<f64>> =
            (0..6).map(|_| dev.zeros(n, n).expect("six order-n arrays fit beside the chain's")).collect();
        dev.synchronize().expect("the ballast is allocated");
        drop(ballast);
        let run = timed_chain(&ops);
        eprintln!("{}", report("memory in the pool", &run));
        assert!(ratio(&run) < 0.01, "{}: not under 1 %", report("memory in the pool", &run));
        last = Some(run);
    }
    // The results are the same computation: one residual check covers them.
    assert_small_residual(&h, &last.expect("three runs").x, &format!("{dev:?}, order {n}"));
}

/// Asserts that `m` carries a failure of `matmul`'s shape check, and that a
/// blocking read raises it naming `matmul` and the shapes.
fn assert_carries_matmul_mismatch(m: &Matrix<f64>, n: usize, what: &str) {
    let named = |e: &Error| {
        matches!(e, Error::DimensionMismatch { op: "matmul", .. })
            && e.to_string().contains(&format!("dimension mismatch in matmul: A is {n}×{n} but B is {}×{n}", n + 1))
    };
    let carried = m.error().unwrap_or_else(|| panic!("{what} should carry the failure of the mismatched product"));
    assert!(named(carried), "{what} carries {carried}");
    let read = m.to_host().expect_err("reading a matrix that carries a failure must fail");
    assert!(named(&read), "{what}: the read raised {read}");
}

#[test]
fn failure_mid_chain_is_raised_at_the_first_read_naming_the_operation() {
    let _one = exclusive();
    let dev = device();
    let n = 48;
    let mut r = rng(3);
    let up = |x: &[f64], rows| dev.from_col_major(rows, n, x).expect("operand fits");
    let (a, b) = (up(&random(&mut r, n, n), n), up(&random(&mut r, n, n), n));
    let wrong = up(&random(&mut r, n + 1, n), n + 1);

    // 1. A valid product.
    let ab = &a * &b;
    assert!(ab.error().is_none(), "A·B is valid: {ab:?}");
    // 2. The failing operation: (n × n)·((n+1) × n). An operator cannot
    //    return a `Result`; it returns an n × n matrix that carries the error.
    let failed = &ab * &wrong;
    assert_eq!(failed.shape(), (n, n));
    // 3.–7. Later operators accept the failed operand and return at once,
    //    passing the same error on (no work is done for them).
    let sum = &failed + &a;
    let scaled = &sum * 0.5;
    let product = &scaled * &b;
    let negated = -&product;
    let copy = negated.clone();
    assert_eq!(copy.shape(), (n, n));
    // Methods that return a `Result` fail at once with the carried error.
    for (what, e) in [
        ("matmul", product.matmul(&b).err()),
        ("add_scaled", a.add_scaled(1.0, 1.0, &product).err()),
        ("transpose", product.transpose().err()),
        ("Tri::solve", Tri::lower(a.clone()).expect("A is square").solve(&product, false).err()),
    ] {
        let e = e.unwrap_or_else(|| panic!("{what} on a failed operand must fail"));
        assert!(matches!(e, Error::DimensionMismatch { op: "matmul", .. }), "{what} raised {e}");
    }
    // The first blocking read, of the chain's last result, raises the
    // failure and names the operation that failed (`Matrix::error` says so
    // without waiting); so does a read of any result between.
    assert_carries_matmul_mismatch(&copy, n, "the chain's last result, a clone of −(·)");
    for (what, m) in
        [("the failed product", &failed), ("(·)+A", &sum), ("½·(·)", &scaled), ("(·)·B", &product), ("−(·)", &negated)]
    {
        assert_carries_matmul_mismatch(m, n, what);
    }
    let e = copy.to_faer().expect_err("to_faer is a read");
    assert!(e.to_string().contains("in matmul"), "to_faer raised {e}");
    let e = copy.norm(Norm::Frobenius).expect_err("norm is a read");
    assert!(e.to_string().contains("in matmul"), "norm raised {e}");
    // What came before the failure is unaffected.
    let (ab_ref, ..) = naive_matmul(
        &a.to_host().expect("A reads back"),
        (n, n),
        false,
        &b.to_host().expect("B reads back"),
        (n, n),
        false,
    );
    let err = rel_error(&ab.to_host().expect("A·B reads back"), &ab_ref);
    assert!(err <= 2.0 * n as f64 * u::<f64>(), "A·B before the failure: relative error {err:e}");
}

#[test]
fn failed_allocation_mid_chain_is_raised_at_the_first_read() {
    let _one = exclusive();
    let dev = device();
    // The outer product of two vectors of 2²⁰ entries has 2⁴⁰ entries
    // (8 TiB): no device or host holds it, and the size is refused before
    // anything is allocated.
    let len = 1 << 20;
    let col = dev.from_col_major(len, 1, &vec![1.0f64; len]).expect("a column of 2²⁰ entries fits");
    let row = dev.from_col_major(1, len, &vec![2.0f64; len]).expect("a row of 2²⁰ entries fits");
    let small = &row * &col; // 1 × 1: 2·2²⁰, exactly
    let outer = &col * &row;
    assert_eq!(outer.shape(), (len, len));
    let later = &(&outer * 3.0) + &outer;
    let chained = &later * &col;
    assert_eq!(chained.shape(), (len, 1));
    let oom = |e: &Error| match e {
        Error::OutOfHostMemory { needed, .. } => dev.is_cpu() && *needed == 8 << 40,
        Error::OutOfDeviceMemory { requested, .. } => !dev.is_cpu() && *requested == 8 << 40,
        _ => false,
    };
    // The chain's result, len × 1, is read to the host: the read raises the
    // allocation failure of the outer product.
    let e = chained.to_host().expect_err("a result computed from a failed allocation cannot be read");
    assert!(oom(&e), "(·)·x: {e}");
    let text = e.to_string();
    assert!(text.contains("out of") && text.contains("8192.0 GiB"), "(·)·x: {text}");
    // The 2²⁰ × 2²⁰ intermediates: reading them raises the failure before
    // any host copy of their 8 TiB is made, through `to_host` and `norm`.
    for (what, m) in [("the outer product", &outer), ("3·(·) + (·)", &later)] {
        let e = m.to_host().expect_err("reading a failed matrix fails");
        assert!(oom(&e), "{what}: {e}");
        let e = m.norm(Norm::Max).expect_err("a norm of a failed matrix is a read that fails");
        assert!(oom(&e), "{what}: {e}");
    }
    assert_eq!(small.to_host().expect("the inner product reads back"), vec![2.0 * len as f64]);
}

#[test]
fn dropping_unread_results_frees_device_memory_without_waiting() {
    let _one = exclusive();
    let dev = device();
    let n = drop_order(&dev);
    let iterations = 50;
    let mut r = rng(4);
    let (a_host, b_host) = (random(&mut r, n, n), random(&mut r, n, n));
    let a = dev.from_col_major(n, n, &a_host).expect("A fits");
    let b = dev.from_col_major(n, n, &b_host).expect("B fits");
    // A first product compiles and sets up what later ones use.
    drop(&a * &b);
    dev.synchronize().expect("the warm-up product completes");
    let before = device_memory(&dev);

    let start = Instant::now();
    for _ in 0..iterations {
        let unread = &a * &b;
        assert!(unread.error().is_none(), "{dev:?}: the product could not be enqueued: {unread:?}");
        drop(unread);
    }
    let looped = start.elapsed();
    let queued = device_memory(&dev);
    dev.synchronize().expect("the dropped products complete without error");
    let ran = start.elapsed();
    let after = device_memory(&dev);
    eprintln!("{dev:?}: order {n}: {iterations} products enqueued and dropped in {looped:?}, run in {ran:?}");

    if let (Some((free0, _)), Some((free_queued, _)), Some((free1, _))) = (before, queued, after) {
        let grown = |free: usize| free0.saturating_sub(free);
        eprintln!(
            "{dev:?}: used memory grew by {} MiB while queued, {} MiB once run",
            grown(free_queued) / MIB,
            grown(free1) / MIB
        );
        assert!(
            looped.as_secs_f64() < 0.05 * ran.as_secs_f64(),
            "{dev:?}, order {n}: enqueueing and dropping {iterations} products took {looped:?}, not under 5 % of \
             the {ran:?} the device took to run them"
        );
        assert!(
            grown(free_queued) <= 2 * f64_bytes(n) + 64 * MIB,
            "{dev:?}: with the dropped products still queued, used memory grew by {} MiB, more than two \
             results ({} MiB each): dropped results are not freed",
            grown(free_queued) / MIB,
            f64_bytes(n) / MIB
        );
        assert!(
            grown(free1) <= 64 * MIB,
            "{dev:?}: once the dropped products ran, used memory had grown by {} MiB (of {:.1} GiB free before)",
            grown(free1) / MIB,
            free0 as f64 / GIB as f64
        );
    }

    // Dropping results unread leaves the operands as they were, and the
    // device computes the next product right.
    assert!(a.to_host().expect("A reads back") == a_host, "{dev:?}: A changed");
    assert!(b.to_host().expect("B reads back") == b_host, "{dev:?}: B changed");
    let kept = &a * &b;
    let got = kept.to_host().expect("the kept product reads back");
    // The naive reference is O(n³) on the host: check a few columns on a GPU's order.
    let cols = if dev.is_cpu() { n } else { 4 };
    let (c_ref, ..) = naive_matmul(&a_host, (n, n), false, &b_host[..n * cols], (n, cols), false);
    let err = rel_error(&got[..n * cols], &c_ref);
    assert!(err <= 2.0 * n as f64 * u::<f64>(), "{dev:?}: the product after the loop: relative error {err:e}");
}
