//! The CUDA backend: one context and one stream per device, cuBLAS bound to
//! that stream for level 3, and NVRTC-compiled kernels from `kernels/*.cu`
//! for the rest. Every primitive is enqueued on the stream and returns;
//! downloads and reductions to the host synchronize.
//!
//! cudarc loads the driver, NVRTC and cuBLAS at run time, so a build needs no
//! CUDA and the same binary runs on the CPU where there is none.

//!
//! Its rooms: `queues` (the context, its queues and their cuBLAS handles),
//! `memory` (buffers, scratch, peak memory), `page_locked` (host memory
//! the copy engines reach directly), `launch` (kernel arguments,
//! grids, clusters), `transfer` (host ↔ device), `copy` (device blocks and
//! RFP pieces), `reduce` (norms and searches), `blas` (cuBLAS level 3),
//! `graph` (recorded work), and one file per algorithm's kernels with the
//! state they keep between launches (`potrf`, `lu`, `trsm`, `qr`,
//! `scaled_gram`, `residual`). `vendor` holds cuSOLVER and cuBLAS baselines
//! for tests and benchmarks; no algorithm calls it.

mod aasen;
mod batch;
pub(crate) mod blas;
mod copy;
mod graph;
pub mod kernels;
mod larfb;
mod launch;
mod ldlt;
mod lu;
mod memory;
mod ozaki;
pub mod page_locked;
mod potrf;
mod qr;
mod queues;
mod reduce;
mod residual;
pub mod scaled_gram;
mod shallow_water;
// Products on the tensor cores in TF32, FP16, BF16 and split FP16.
mod tensor;
mod transfer;
mod tridiagonal;
mod trsm;
mod trsv;
pub mod vendor;

pub use graph::PLAIN_RUNS;

use std::any::Any;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::cublas::CudaBlas;
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, DriverError, LaunchConfig};

use super::{
    AasenPanel, AdiFields, Backend, BufferMut, Compute, DeviceBuffer, Diag, Norm, Op, Pivoting, Side, Stepping,
    Strided, StridedMut, Sweep, SymPanel, SymPivoting, SystemLayout, Triangle, Triangular, Tuning, View, ViewMut,
    check,
};
use crate::layout::{Rfp, Uplo};
use crate::{DeviceLibrary, Elem, Error, Result, Scalar};
use blas::{operand, operand_mut};
use launch::{Arg, BLOCK, MAX_BLOCKS, elem, grid_1d, n, ptr, ptr_mut, raw, raw_mut};
use potrf::POTRF_LEAF;

/// An NVIDIA GPU.
pub struct Cuda {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    blas: CudaBlas,
    /// `sm_XY`, what NVRTC compiles for.
    arch: String,
    /// The GPU's model, as the driver names it.
    gpu: String,
    name: String,
    /// Kernels loaded so far, shared with the side queue.
    functions: Arc<Mutex<HashMap<String, CudaFunction>>>,
    staging: Mutex<transfer::Staging>,
    /// The second queue (`Backend::side`), created on first use.
    side: OnceLock<Box<Cuda>>,
    /// [`Backend::sibling`]'s queue, created on first use.
    sibling: OnceLock<Box<Cuda>>,
    /// What the Cholesky and LU kernels keep between launches on this queue.
    potrf: potrf::State,
    lu: lu::State,
    /// The knobs, shared with the other queues.
    tuning: Arc<Mutex<Tuning>>,
    /// Whether other GPUs of this process may wait in collectives on this
    /// one's progress ([`Cuda::join_cluster`]), shared with the other
    /// queues: the memory pool is then never trimmed.
    peers: Arc<AtomicBool>,
    /// Whether `replay` records graphs here (only on the main queue, and
    /// only when the tuning says so).
    record_graphs: AtomicBool,
    /// Work recorded by `replay`.
    recordings: Mutex<graph::Recordings>,
    /// The queue that `replay` records on and replays from, created on
    /// first use: a capture on this queue would also take what other
    /// threads enqueue here meanwhile.
    recorder: OnceLock<Box<Cuda>>,
    /// [`Backend::partitioned`]'s queue, created on first use.
    partitioned: OnceLock<Box<Cuda>>,
    /// On a partitioned queue, the SMs its side queue gets; `None`: all.
    side_share: Option<usize>,
    /// The SMs this queue's work is confined to, when it is a partitioned
    /// queue's side queue (as many as `side_share`, rounded up to the
    /// driver's granularity); `None`: all of them.
    confined_to: Option<usize>,
}

/// Device memory of `len` elements of `E`, held as bytes so that any `Elem`
/// fits; `ptr` is its device address.
pub struct CudaBuffer<E> {
    mem: ManuallyDrop<CudaSlice<u8>>,
    ptr: u64,
    len: usize,
    /// For memory another library owns (a DLPack tensor), what keeps it
    /// alive; such memory is never freed here.
    owner: Option<Box<dyn Any + Send + Sync>>,
    _elem: PhantomData<E>,
}

impl<E> Drop for CudaBuffer<E> {
    fn drop(&mut self) {
        // SAFETY: `mem` is taken once, here, and not used after.
        let mem = unsafe { ManuallyDrop::take(&mut self.mem) };
        if self.owner.is_some() {
            // The owner may free the memory once it is dropped, after this:
            // the queue's work on it must be done by then.
            let _ = mem.stream().synchronize();
            mem.leak();
        }
    }
}

impl<E> DeviceBuffer for CudaBuffer<E> {
    fn len(&self) -> usize {
        self.len
    }

    fn id(&self) -> usize {
        self.ptr as usize
    }
}

/// Maps a driver failure while doing `op` to [`Error::DeviceCall`], with
/// the driver's name and description of the status.
fn driver(op: &str) -> impl Fn(DriverError) -> Error + '_ {
    move |e| Error::DeviceCall {
        library: DeviceLibrary::Driver,
        op: op.into(),
        status: format!("{:?}", e.0),
        detail: e.error_string().ok().map(|s| s.to_string_lossy().into_owned()),
    }
}

impl Backend for Cuda {
    type Buffer<E: Elem> = CudaBuffer<E>;
    type Mark = cudarc::driver::CudaEvent;

    // H200 (bench/results/2026-11-28-wlstrace-inverse-*): forming L⁻¹ in
    // FP64 costs 0.23 / 1.2 / 4.1 ms at 1024 / 2048 / 4096 and saves about
    // 0.15 / 0.19 / 0.27 ms an application: 2, 6 and 15 applications to pay.
    const SOLVES_BY_INVERSE_UP_TO: usize = 2048;

    fn name(&self) -> String {
        self.name.clone()
    }

    fn alloc<E: Elem>(&self, len: usize) -> Result<CudaBuffer<E>> {
        self.buffer(len, true)
    }

    fn upload<E: Elem>(&self, host: &[E]) -> Result<CudaBuffer<E>> {
        let mut buf = self.buffer::<E>(host.len(), false)?;
        if !host.is_empty() {
            // SAFETY: `E` is a plain number type; its bytes are initialized.
            let bytes = unsafe { std::slice::from_raw_parts(host.as_ptr() as *const u8, size_of_val(host)) };
            self.upload_bytes(bytes, &mut buf.mem)?;
        }
        Ok(buf)
    }

    fn download<E: Elem>(&self, src: &CudaBuffer<E>, host: &mut [E]) -> Result<()> {
        if host.len() != src.len {
            return Err(Error::dims("download", format!("buffer has {} entries, host slice {}", src.len, host.len())));
        }
        if !host.is_empty() {
            // SAFETY: any bit pattern is a valid `E` (f32, f64, i32).
            let bytes = unsafe { std::slice::from_raw_parts_mut(host.as_mut_ptr() as *mut u8, size_of_val(host)) };
            self.download_bytes(&src.mem, bytes)?;
        }
        self.synchronize()
    }

    fn synchronize(&self) -> Result<()> {
        if let Some(side) = self.side.get() {
            side.synchronize()?;
        }
        self.stream.synchronize().map_err(driver("a queued operation failed"))
    }

    fn side(&self) -> Result<&Self> {
        if let Some(side) = self.side.get() {
            return Ok(side);
        }
        let side = Box::new(self.fork(false)?);
        // Another thread may have won the race; its queue is as good.
        Ok(self.side.get_or_init(|| side))
    }

    fn sibling(&self) -> Result<&Self> {
        if let Some(sibling) = self.sibling.get() {
            return Ok(sibling);
        }
        let sibling = Box::new(self.fork(true)?);
        Ok(self.sibling.get_or_init(|| sibling))
    }

    fn partitioned(&self) -> Result<&Self> {
        if let Some(p) = self.partitioned.get() {
            return Ok(p);
        }
        let mut p = self.fork(true)?;
        let sms = self.sms()?;
        // Measured on an H200 (FP32 LU, FP16 updates, n = 16384): 88, 72
        // and 56 SMs of 132 for the updates, 56 the fastest.
        p.side_share = Some(self.tuning().side_sms.unwrap_or(sms * 3 / 7).max(1));
        if p.side().is_err() {
            // No green contexts here (a driver before CUDA 12.4): the
            // queue is an ordinary one, which is only slower.
            p.side_share = None;
        }
        Ok(self.partitioned.get_or_init(|| Box::new(p)))
    }

    fn replay(&self, key: &str, enqueue: &mut dyn FnMut(&Self) -> Result<()>) -> Result<()> {
        self.replay_impl(key, enqueue)
    }

    fn wait_for(&self, other: &Self) -> Result<()> {
        if Arc::ptr_eq(&self.stream, &other.stream) {
            return Ok(());
        }
        self.wait_mark(&other.mark()?)
    }

    fn mark(&self) -> Result<cudarc::driver::CudaEvent> {
        let flags = cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;
        self.stream.record_event(Some(flags)).map_err(driver("recording an event"))
    }

    fn wait_mark(&self, mark: &cudarc::driver::CudaEvent) -> Result<()> {
        self.stream.wait(mark).map_err(driver("waiting for another queue"))
    }

    fn enter(&self) -> Result<()> {
        self.ctx.bind_to_thread().map_err(driver("binding the context to a rank's thread"))
    }

    fn copy<E: Elem>(&self, src: View<'_, Cuda, E>, dst: ViewMut<'_, Cuda, E>) -> Result<()> {
        check::copy(&src, &dst)?;
        let (s, d) = (src.block(), dst.block());
        self.copy_block::<E>(raw(&src), s.ld, raw_mut(&dst), d.ld, s.rows, s.cols, false, 0)
    }

    fn fill<E: Elem>(&self, dst: ViewMut<'_, Cuda, E>, value: E) -> Result<()> {
        let b = dst.block();
        let args = [ptr_mut(&dst), n(b.ld), n(b.rows), n(b.cols), elem(value)];
        self.elementwise(&format!("fill_{}", E::NAME), b.rows, b.cols, &args)
    }

    fn cast<S: Scalar, D: Scalar>(&self, src: View<'_, Cuda, S>, dst: ViewMut<'_, Cuda, D>) -> Result<()> {
        check::elementwise("cast", &src, &dst)?;
        let (s, d) = (src.block(), dst.block());
        if S::NAME == D::NAME {
            return self.copy_block::<S>(raw(&src), s.ld, raw_mut(&dst), d.ld, s.rows, s.cols, false, 0);
        }
        let args = [ptr(&src), n(s.ld), ptr_mut(&dst), n(d.ld), n(s.rows), n(s.cols)];
        self.elementwise(&format!("cast_{}_{}", S::NAME, D::NAME), s.rows, s.cols, &args)
    }

    fn full_to_rfp<T: Scalar>(&self, a: View<'_, Cuda, T>, rfp: Rfp, arf: ViewMut<'_, Cuda, T>) -> Result<()> {
        check::full_to_rfp(&a, rfp, &arf)?;
        self.rfp_pieces::<T>(rfp, raw(&a), a.block().ld, raw_mut(&arf), true)
    }

    fn rfp_to_full<T: Scalar>(&self, arf: View<'_, Cuda, T>, rfp: Rfp, a: ViewMut<'_, Cuda, T>) -> Result<()> {
        check::rfp_to_full(&arf, rfp, &a)?;
        self.rfp_pieces::<T>(rfp, raw_mut(&a), a.block().ld, raw(&arf), false)
    }

    fn gemm<T: Scalar>(
        &self,
        alpha: T,
        a: View<'_, Cuda, T>,
        op_a: Op,
        b: View<'_, Cuda, T>,
        op_b: Op,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        check::gemm(&a, op_a, &b, op_b, &c)?;
        let (m, n_, k) = (c.rows(), c.cols(), op_a.apply(a.rows(), a.cols()).1);
        if m == 0 || n_ == 0 {
            return Ok(());
        }
        let d = |x| blas::dim("gemm", x);
        // SAFETY: blocks checked by `check`; see `blas`.
        unsafe {
            blas::gemm(
                *self.blas.handle(),
                (op_a, op_b),
                (d(m)?, d(n_)?, d(k)?),
                alpha,
                operand(&a, "gemm")?,
                operand(&b, "gemm")?,
                beta,
                operand_mut(&c, "gemm")?,
            )
        }
    }

    fn gemm_in<T: Scalar>(
        &self,
        compute: Compute,
        alpha: T,
        a: View<'_, Cuda, T>,
        op_a: Op,
        b: View<'_, Cuda, T>,
        op_b: Op,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        self.gemm_tensor(compute, alpha, (a, op_a), (b, op_b), beta, c)
    }

    fn syrk_in<T: Scalar>(
        &self,
        compute: Compute,
        uplo: Uplo,
        op: Op,
        alpha: T,
        a: View<'_, Cuda, T>,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        self.syrk_tensor(compute, uplo, op, alpha, a, beta, c)
    }

    fn syrk<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        alpha: T,
        a: View<'_, Cuda, T>,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        check::syrk(uplo, op, &a, &c)?;
        let (nn, k) = op.apply(a.rows(), a.cols());
        if nn == 0 {
            return Ok(());
        }
        let d = |x| blas::dim("syrk", x);
        // SAFETY: blocks checked by `check`; see `blas`.
        unsafe {
            blas::syrk(
                *self.blas.handle(),
                uplo,
                op,
                (d(nn)?, d(k)?),
                alpha,
                operand(&a, "syrk")?,
                beta,
                operand_mut(&c, "syrk")?,
            )
        }
    }

    fn syrkx<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        alpha: T,
        a: View<'_, Cuda, T>,
        b: View<'_, Cuda, T>,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        check::syrkx(uplo, op, &a, &b, &c)?;
        let (nn, k) = op.apply(a.rows(), a.cols());
        if nn == 0 {
            return Ok(());
        }
        let d = |x| blas::dim("syrkx", x);
        // SAFETY: blocks checked by `check`; see `blas`.
        unsafe {
            blas::syrkx(
                *self.blas.handle(),
                uplo,
                op,
                (d(nn)?, d(k)?),
                alpha,
                operand(&a, "syrkx")?,
                operand(&b, "syrkx")?,
                beta,
                operand_mut(&c, "syrkx")?,
            )
        }
    }

    fn triangular<T: Scalar>(
        &self,
        which: Triangular,
        side: Side,
        uplo: Uplo,
        op: Op,
        diag: Diag,
        alpha: T,
        a: View<'_, Cuda, T>,
        b: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        self.triangular_impl(which, (side, uplo, op, diag), alpha, a, b)
    }

    fn geam<T: Scalar>(
        &self,
        alpha: T,
        a: View<'_, Cuda, T>,
        op_a: Op,
        beta: T,
        b: View<'_, Cuda, T>,
        op_b: Op,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        check::geam(&a, op_a, &b, op_b, &c)?;
        let (m, nn) = (c.rows(), c.cols());
        if m == 0 || nn == 0 {
            return Ok(());
        }
        // A zero coefficient means that operand is not read (as on the CPU):
        // cuBLAS would still form 0·NaN, so fill or point at the other one.
        let (alpha, a, op_a, beta, b, op_b) = match (alpha == T::ZERO, beta == T::ZERO) {
            (true, true) => return self.fill(c, T::ZERO),
            (true, false) => (beta, b, op_b, T::ZERO, b, op_b),
            (false, true) => (alpha, a, op_a, T::ZERO, a, op_a),
            (false, false) => (alpha, a, op_a, beta, b, op_b),
        };
        let d = |x| blas::dim("geam", x);
        // SAFETY: blocks checked by `check`; see `blas`.
        unsafe {
            blas::geam(
                *self.blas.handle(),
                (op_a, op_b),
                (d(m)?, d(nn)?),
                alpha,
                operand(&a, "geam")?,
                beta,
                operand(&b, "geam")?,
                operand_mut(&c, "geam")?,
            )
        }
    }

    fn symmetrize<T: Scalar>(&self, uplo: Uplo, a: ViewMut<'_, Cuda, T>) -> Result<()> {
        check::square_mut("symmetrize", &a)?;
        let b = a.block();
        let args = [ptr_mut(&a), n(b.ld), n(b.rows), Arg::I32((uplo == Uplo::Lower) as i32)];
        self.elementwise(&format!("symmetrize_{}", T::NAME), b.rows, b.cols, &args)
    }

    fn fill_strict_triangle<T: Scalar>(&self, uplo: Uplo, value: T, a: ViewMut<'_, Cuda, T>) -> Result<()> {
        let b = a.block();
        let args = [ptr_mut(&a), n(b.ld), n(b.rows), n(b.cols), Arg::I32((uplo == Uplo::Upper) as i32), elem(value)];
        self.elementwise(&format!("fill_strict_triangle_{}", T::NAME), b.rows, b.cols, &args)
    }

    fn fill_random<T: Scalar>(
        &self,
        a: ViewMut<'_, Cuda, T>,
        (i0, j0): (usize, usize),
        key: u64,
        symmetric: bool,
    ) -> Result<()> {
        let b = a.block();
        let args =
            [ptr_mut(&a), n(b.ld), n(b.rows), n(b.cols), n(i0), n(j0), Arg::Bits64(key), Arg::I32(symmetric as i32)];
        self.elementwise(&format!("fill_random_{}", T::NAME), b.rows, b.cols, &args)
    }

    fn potrf<T: Scalar>(
        &self,
        uplo: Uplo,
        a: ViewMut<'_, Cuda, T>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
    ) -> Result<()> {
        check::potrf(&a, &info)?;
        if a.rows() == 0 {
            return Ok(());
        }
        if a.rows() <= POTRF_LEAF {
            // The blocked algorithm's leaves: a panel with nothing below.
            let n = a.rows();
            return self.leaf_panel(uplo, a, info, offset, (n, n), None);
        }
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (BLOCK as u32, 1, 1), shared_mem_bytes: 0 };
        let upper = Arg::I32((uplo == Uplo::Upper) as i32);
        let args = [ptr_mut(&a), n(a.block().ld), n(a.rows()), upper, ptr_mut(&info), n(offset)];
        self.launch("potrf", &format!("potrf_{}", T::NAME), cfg, &args)
    }

    fn potrf_panel<T: Scalar>(
        &self,
        uplo: Uplo,
        a: ViewMut<'_, Cuda, T>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
    ) -> Result<()> {
        check::potrf_panel(uplo, &a, &info)?;
        let (width, len) = match uplo {
            Uplo::Lower => (a.cols(), a.rows()),
            Uplo::Upper => (a.rows(), a.cols()),
        };
        if width == 0 {
            return Ok(());
        }
        if width > POTRF_LEAF {
            return crate::backend::potrf_panel_by_blocks(self, uplo, a, info, offset);
        }
        self.leaf_panel(uplo, a, info, offset, (width, len), None)
    }

    fn scale_rows<T: Scalar>(&self, d: View<'_, Cuda, T>, a: ViewMut<'_, Cuda, T>) -> Result<()> {
        check::scaling("scale_rows", &d, a.rows(), &a)?;
        self.scale_by_vector("scale_rows", d, a)
    }

    fn scale_cols<T: Scalar>(&self, a: ViewMut<'_, Cuda, T>, d: View<'_, Cuda, T>) -> Result<()> {
        check::scaling("scale_cols", &d, a.cols(), &a)?;
        self.scale_by_vector("scale_cols", d, a)
    }

    fn axpy<T: Scalar>(&self, alpha: T, x: View<'_, Cuda, T>, y: ViewMut<'_, Cuda, T>) -> Result<()> {
        check::elementwise("axpy", &x, &y)?;
        let (bx, by) = (x.block(), y.block());
        let args = [elem(alpha), ptr(&x), n(bx.ld), ptr_mut(&y), n(by.ld), n(by.rows), n(by.cols)];
        self.elementwise(&format!("axpy_{}", T::NAME), by.rows, by.cols, &args)
    }

    fn scale<T: Scalar>(&self, alpha: T, a: ViewMut<'_, Cuda, T>) -> Result<()> {
        let b = a.block();
        let args = [ptr_mut(&a), n(b.ld), n(b.rows), n(b.cols), elem(alpha)];
        self.elementwise(&format!("scale_{}", T::NAME), b.rows, b.cols, &args)
    }

    fn norm<T: Scalar>(&self, norm: Norm, a: View<'_, Cuda, T>) -> Result<T> {
        self.norm_of(norm, a)
    }

    fn abs_maxima<T: Scalar>(&self, a: View<'_, Cuda, T>, rows: bool) -> Result<Vec<f64>> {
        self.abs_maxima_of(a, rows)
    }

    fn iamax<T: Scalar>(&self, x: View<'_, Cuda, T>) -> Result<Option<usize>> {
        self.largest_abs(x)
    }

    fn find_non_finite<T: Scalar>(&self, a: View<'_, Cuda, T>) -> Result<Option<(usize, usize)>> {
        self.first_non_finite(a)
    }

    // Householder QR.

    fn householder<T: Scalar>(&self, a: ViewMut<'_, Cuda, T>, t: ViewMut<'_, Cuda, T>) -> Result<()> {
        self.householder_panel(a, t)
    }

    fn householder_leaf<T: Scalar>(&self, rows: usize) -> usize {
        self.householder_panel_leaf::<T>(rows)
    }

    fn larfb<T: Scalar>(
        &self,
        v: View<'_, Cuda, T>,
        t: View<'_, Cuda, T>,
        op: Op,
        c: ViewMut<'_, Cuda, T>,
        work: &mut CudaBuffer<T>,
    ) -> Result<()> {
        self.larfb_impl(v, t, op, c, work)
    }

    fn trsv_wide<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        diag: Diag,
        a: View<'_, Cuda, T>,
        x: ViewMut<'_, Cuda, f64>,
    ) -> Result<()> {
        self.trsv_wide_impl(uplo, op, diag, a, x)
    }

    // LU factorization, in `cuda/lu.rs`.

    fn getrf_panel<T: Scalar>(
        &self,
        a: ViewMut<'_, Cuda, T>,
        ipiv: ViewMut<'_, Cuda, i32>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
        pivoting: Pivoting,
    ) -> Result<()> {
        let cols = 0..a.cols();
        self.lu_getrf_leaf(a, cols, ipiv, info, offset, pivoting)
    }

    fn getrf_leaf<T: Scalar>(
        &self,
        a: ViewMut<'_, Cuda, T>,
        cols: std::ops::Range<usize>,
        ipiv: ViewMut<'_, Cuda, i32>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
        pivoting: Pivoting,
    ) -> Result<()> {
        self.lu_getrf_leaf(a, cols, ipiv, info, offset, pivoting)
    }

    fn laswp<T: Scalar>(
        &self,
        a: ViewMut<'_, Cuda, T>,
        ipiv: View<'_, Cuda, i32>,
        shift: usize,
        reverse: bool,
    ) -> Result<()> {
        self.lu_laswp(a, ipiv, shift, reverse)
    }

    fn permute_rows<T: Scalar>(&self, perm: View<'_, Cuda, i32>, inverse: bool, b: ViewMut<'_, Cuda, T>) -> Result<()> {
        self.lu_permute_rows(perm, inverse, b)
    }

    fn butterfly<T: Scalar>(&self, left: Option<(u64, Op)>, right: Option<u64>, a: ViewMut<'_, Cuda, T>) -> Result<()> {
        self.lu_butterfly(left, right, a)
    }

    // LDLᵀ: the panel and `D`, in `cuda/ldlt.rs` (`syrkx` with cuBLAS above).

    fn sytrf_panel<T: Scalar>(
        &self,
        a: &BufferMut<'_, Cuda, T>,
        tri: &Triangle,
        k: usize,
        panel: SymPanel<'_, Cuda, T>,
        pivoting: SymPivoting,
    ) -> Result<()> {
        self.ldlt_sytrf_panel(a, tri, k, panel, pivoting)
    }

    fn aasen_panel<T: Scalar>(
        &self,
        a: &BufferMut<'_, Cuda, T>,
        tri: &Triangle,
        k: usize,
        panel: AasenPanel<'_, Cuda, T>,
    ) -> Result<()> {
        self.aasen_panel_kernel(a, tri, k, panel)
    }

    fn aasen_interchange<T: Scalar>(
        &self,
        a: &BufferMut<'_, Cuda, T>,
        tri: &Triangle,
        k: usize,
        panel: AasenPanel<'_, Cuda, T>,
        ipiv: ViewMut<'_, Cuda, i32>,
        x: ViewMut<'_, Cuda, T>,
        y: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        self.aasen_interchange_kernels(a, tri, k, panel, ipiv, x, y)
    }

    fn ldlt_panel<T: Scalar>(
        &self,
        uplo: Uplo,
        a: ViewMut<'_, Cuda, T>,
        w: ViewMut<'_, Cuda, T>,
        d: ViewMut<'_, Cuda, T>,
        info: ViewMut<'_, Cuda, i32>,
        offset: usize,
        tol: f64,
    ) -> Result<()> {
        let (width, len) = check::ldlt_panel(uplo, &a, &w, &d, &info)?;
        if width == 0 {
            return Ok(());
        }
        if width > POTRF_LEAF {
            return Err(Error::dims(
                "ldlt_panel",
                format!("a panel of {width} columns: the GPU's leaf takes at most {POTRF_LEAF}"),
            ));
        }
        self.leaf_panel(uplo, a, info, offset, (width, len), Some((w, d, tol)))
    }

    fn batched_getrf_panel<T: Scalar>(
        &self,
        a: StridedMut<'_, Cuda, T>,
        ipiv: StridedMut<'_, Cuda, i32>,
        info: StridedMut<'_, Cuda, i32>,
        offset: usize,
    ) -> Result<()> {
        self.batch_getrf_panel(a, ipiv, info, offset)
    }

    fn batched_potrf_panel<T: Scalar>(
        &self,
        a: StridedMut<'_, Cuda, T>,
        info: StridedMut<'_, Cuda, i32>,
        offset: usize,
    ) -> Result<()> {
        self.batch_potrf_panel(a, info, offset)
    }

    fn batched_laswp<T: Scalar>(
        &self,
        a: StridedMut<'_, Cuda, T>,
        ipiv: Strided<'_, Cuda, i32>,
        shift: usize,
        reverse: bool,
    ) -> Result<()> {
        self.batch_laswp(a, ipiv, shift, reverse)
    }

    fn batched_trsm<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        diag: Diag,
        a: Strided<'_, Cuda, T>,
        b: StridedMut<'_, Cuda, T>,
    ) -> Result<()> {
        self.batch_trsm(uplo, op, diag, a, b)
    }

    fn batched_getrs<T: Scalar>(
        &self,
        lu: Strided<'_, Cuda, T>,
        ipiv: Strided<'_, Cuda, i32>,
        b: StridedMut<'_, Cuda, T>,
    ) -> Result<()> {
        self.batch_getrs(lu, ipiv, b)
    }

    fn batched_gemm<T: Scalar>(
        &self,
        alpha: T,
        a: Strided<'_, Cuda, T>,
        op_a: Op,
        b: Strided<'_, Cuda, T>,
        op_b: Op,
        beta: T,
        c: StridedMut<'_, Cuda, T>,
    ) -> Result<()> {
        self.batch_gemm(alpha, a, op_a, b, op_b, beta, c)
    }

    fn tridiagonal_solve<T: Scalar>(
        &self,
        layout: SystemLayout,
        pivoting: bool,
        tridiagonal: (ViewMut<'_, Cuda, T>, ViewMut<'_, Cuda, T>, ViewMut<'_, Cuda, T>),
        b: ViewMut<'_, Cuda, T>,
        info: ViewMut<'_, Cuda, i32>,
    ) -> Result<()> {
        self.batched_tridiagonal(layout, pivoting, tridiagonal, b, info)
    }

    // The shallow-water passes, in `cuda/shallow_water.rs`.

    fn eulerian_lagrangian(
        &self,
        sweep: Sweep,
        p: &Stepping,
        normal: View<'_, Cuda, f64>,
        tangential: View<'_, Cuda, f64>,
        f: ViewMut<'_, Cuda, f64>,
    ) -> Result<()> {
        self.swe_eulerian_lagrangian(sweep, p, normal, tangential, f)
    }

    fn adi_assemble(
        &self,
        sweep: Sweep,
        p: &Stepping,
        fields: AdiFields<'_, Cuda>,
        tridiagonal: (ViewMut<'_, Cuda, f64>, ViewMut<'_, Cuda, f64>, ViewMut<'_, Cuda, f64>),
        rhs: ViewMut<'_, Cuda, f64>,
        r: ViewMut<'_, Cuda, f64>,
    ) -> Result<()> {
        self.swe_adi_assemble(sweep, p, fields, tridiagonal, rhs, r)
    }

    fn adi_velocity(
        &self,
        sweep: Sweep,
        p: &Stepping,
        z: View<'_, Cuda, f64>,
        f: View<'_, Cuda, f64>,
        r: View<'_, Cuda, f64>,
        normal: ViewMut<'_, Cuda, f64>,
    ) -> Result<()> {
        self.swe_adi_velocity(sweep, p, z, f, r, normal)
    }

    fn block_diagonal_solve<T: Scalar>(
        &self,
        d: View<'_, Cuda, T>,
        e: View<'_, Cuda, T>,
        b: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        self.ldlt_block_diagonal_solve(d, e, b)
    }

    // Scaled Gram matrices, in `cuda/scaled_gram.rs`.

    fn scaled_syrk<T: Scalar>(
        &self,
        uplo: Uplo,
        alpha: T,
        a: View<'_, Cuda, T>,
        d: View<'_, Cuda, T>,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        self.scaled_syrk_impl(uplo, alpha, a, d, beta, c)
    }

    fn scaled_gemm<T: Scalar>(
        &self,
        alpha: T,
        a: View<'_, Cuda, T>,
        b: View<'_, Cuda, T>,
        d: View<'_, Cuda, T>,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        self.scaled_gemm_impl(alpha, a, b, d, beta, c)
    }

    // Mixed precision weighted least squares, in `scaled_gram.rs` and
    // `residual.rs`.

    fn scaled_syrk_f32(&self, a: View<'_, Cuda, f64>, d: View<'_, Cuda, f64>, c: ViewMut<'_, Cuda, f32>) -> Result<()> {
        self.scaled_syrk_f32_impl(a, d, c)
    }

    fn weighted_residual(
        &self,
        a: View<'_, Cuda, f64>,
        d: View<'_, Cuda, f64>,
        b: View<'_, Cuda, f64>,
        x: View<'_, Cuda, f64>,
        r: ViewMut<'_, Cuda, f64>,
    ) -> Result<()> {
        self.weighted_residual_impl(a, d, b, x, r)
    }
}
