//! The CPU backend: faer for level 3, plain loops for the rest, rayon for
//! threads. It runs eagerly: when a primitive returns, its work is done.

mod aasen;
mod batch;
mod ldlt;
mod lu;
mod memory;
mod ozaki;
mod residual;
mod scaled_gram;
mod shallow_water;
mod tridiagonal;

use std::alloc::{self, Layout};
use std::cell::UnsafeCell;
use std::ptr::NonNull;

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::{self, factor::LltError};
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::{matmul::matmul, triangular_solve as tri};
use faer::{Accum, Mat, MatMut, MatRef, Par};
use rayon::prelude::*;

use super::{
    AasenPanel, AdiFields, Backend, BufferMut, Compute, DeviceBuffer, Diag, Norm, Op, Pivoting, Side, Stepping,
    Strided, StridedMut, Sweep, SymPanel, SymPivoting, SystemLayout, Triangle, Triangular, View, ViewMut, check,
    random,
};
use crate::layout::{self, Full, Rfp, Uplo};
use crate::{Elem, Error, Result, Scalar};
use check::operand;

pub use memory::{available_memory, check_fits, matrix_bytes};

mod qr;

/// Below this many entries an elementwise pass runs on one thread.
const PARALLEL_MIN: usize = 1 << 16;

/// The CPU, with faer's rayon parallelism.
#[derive(Clone, Debug)]
pub struct Cpu {
    par: Par,
}

impl Default for Cpu {
    fn default() -> Self {
        Cpu { par: Par::rayon(0) }
    }
}

impl Cpu {
    /// All threads of rayon's global pool (set `RAYON_NUM_THREADS` to limit).
    pub fn new() -> Self {
        Self::default()
    }

    /// One thread.
    pub fn sequential() -> Self {
        Cpu { par: Par::Seq }
    }

    pub fn threads(&self) -> usize {
        self.par.degree()
    }
}

/// Buffers from this many bytes on are checked against the available
/// memory before they are allocated.
const CHECKED_BYTES: usize = 64 << 20;

/// Alignment of host buffers in bytes: faer aligns its own matrices so, and
/// its SIMD kernels take faster paths on aligned columns.
const ALIGN: usize = 128;

/// Host memory, aligned to [`ALIGN`] when gpumat allocated it, or memory
/// another library owns (a NumPy array), kept alive by `owner` and never
/// freed here. Entries sit in `UnsafeCell`s because several views of one
/// buffer may be alive at once (the pieces of an RFP rectangle); a write
/// needs a `ViewMut`, which needs `&mut` access to the buffer, and every
/// primitive checks that what it writes does not overlap what it reads.
pub struct CpuBuffer<E> {
    ptr: NonNull<UnsafeCell<E>>,
    len: usize,
    owner: Option<Box<dyn std::any::Any + Send + Sync>>,
}

// SAFETY: writes go only through `ViewMut`s, which exist only under a `&mut`
// borrow of the buffer, so no thread can read while another writes.
unsafe impl<E: Send> Send for CpuBuffer<E> {}
unsafe impl<E: Sync> Sync for CpuBuffer<E> {}

impl<E> DeviceBuffer for CpuBuffer<E> {
    fn len(&self) -> usize {
        self.len
    }

    fn id(&self) -> usize {
        self.ptr.as_ptr() as usize
    }
}

impl<E> CpuBuffer<E> {
    fn layout(len: usize) -> Option<Layout> {
        Layout::from_size_align(len.checked_mul(size_of::<E>())?, ALIGN).ok()
    }

    fn ptr(&self) -> *mut E {
        self.ptr.as_ptr() as *mut E
    }
}

impl<E: Elem> CpuBuffer<E> {
    /// `len` entries, zero-filled (all-zero bits are `0` for every `Elem`)
    /// or left uninitialized for the caller to fill at once.
    fn new(len: usize, zeroed: bool) -> Result<Self> {
        let bytes = matrix_bytes(len, 1, size_of::<E>());
        let what = || format!("a buffer of {len} entries");
        // Small buffers skip the check: it reads /proc, and they fit.
        if bytes.is_none_or(|b| b >= CHECKED_BYTES) {
            check_fits(what, bytes)?;
        }
        let oom = || Error::OutOfHostMemory {
            what: what(),
            needed: bytes.unwrap_or(usize::MAX),
            available: available_memory(),
        };
        let layout = Self::layout(len).ok_or_else(oom)?;
        if layout.size() == 0 {
            return Ok(CpuBuffer { ptr: NonNull::dangling(), len, owner: None });
        }
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { if zeroed { alloc::alloc_zeroed(layout) } else { alloc::alloc(layout) } };
        let ptr = NonNull::new(raw as *mut UnsafeCell<E>).ok_or_else(oom)?;
        Ok(CpuBuffer { ptr, len, owner: None })
    }

    /// `len` entries at `ptr`, owned by `owner`: no copy is made.
    ///
    /// # Safety
    /// `ptr` must be aligned for `E` and address `len` entries that stay
    /// valid while `owner` lives and that nothing else writes while the
    /// buffer is in use.
    pub unsafe fn wrap_foreign(ptr: *mut E, len: usize, owner: Box<dyn std::any::Any + Send + Sync>) -> Self {
        let ptr = NonNull::new(ptr as *mut UnsafeCell<E>).unwrap_or(NonNull::dangling());
        CpuBuffer { ptr, len, owner: Some(owner) }
    }
}

impl<E> Drop for CpuBuffer<E> {
    fn drop(&mut self) {
        if self.owner.is_some() {
            return;
        }
        if let Some(layout) = Self::layout(self.len).filter(|l| l.size() > 0) {
            // SAFETY: allocated in `new` with this layout.
            unsafe { alloc::dealloc(self.ptr.as_ptr() as *mut u8, layout) };
        }
    }
}

/// The entries of the block `v`, column by column: for the in-process
/// ranks of `dist`, which pass host copies between threads.
pub(crate) fn read_block<E: Elem>(v: &View<'_, Cpu, E>) -> Vec<E> {
    let b = v.block();
    let mut out = Vec::with_capacity(b.rows * b.cols);
    for j in 0..b.cols {
        // SAFETY: `View::new` checked the block lies inside the buffer.
        out.extend((0..b.rows).map(|i| unsafe { *v.buffer().ptr().add(b.offset + j * b.ld + i) }));
    }
    out
}

/// Writes `data` (column by column, one entry per entry of the block) into
/// the block `v`.
pub(crate) fn write_block<E: Elem>(v: ViewMut<'_, Cpu, E>, data: &[E]) -> Result<()> {
    let (buf, b) = v.into_parts();
    if data.len() != b.rows * b.cols {
        return Err(Error::dims("write_block", format!("{} entries for a {}×{} block", data.len(), b.rows, b.cols)));
    }
    for j in 0..b.cols {
        for i in 0..b.rows {
            // SAFETY: inside the buffer, as checked by `ViewMut::new`; the
            // `ViewMut` is the only access to these entries.
            unsafe { *buf.ptr().add(b.offset + j * b.ld + i) = data[j * b.rows + i] };
        }
    }
    Ok(())
}

fn mat<'a, T: Scalar>(v: View<'a, Cpu, T>) -> MatRef<'a, T> {
    let b = v.block();
    // SAFETY: `View::new` checked the block lies inside the buffer with
    // `ld ≥ rows`; no write to these entries runs during this operation.
    unsafe { MatRef::from_raw_parts(v.buffer().ptr().add(b.offset), b.rows, b.cols, 1, b.ld as isize) }
}

fn mat_mut<'a, T: Scalar>(v: ViewMut<'a, Cpu, T>) -> MatMut<'a, T> {
    let (buf, b) = v.into_parts();
    // SAFETY: as `mat`; the checks in `check` ensure no entry written here is
    // read through another view in the same operation.
    unsafe { MatMut::from_raw_parts_mut(buf.ptr().add(b.offset), b.rows, b.cols, 1, b.ld as isize) }
}

/// A dense copy of the block `v` with its entries rounded as `compute`
/// rounds the operands of a product.
fn rounded<T: Scalar>(cpu: &Cpu, compute: Compute, v: View<'_, Cpu, T>) -> Result<CpuBuffer<T>> {
    let m = mat(v);
    let mut out = Vec::with_capacity(m.nrows() * m.ncols());
    for j in 0..m.ncols() {
        out.extend((0..m.nrows()).map(|i| T::from_f64(f64::from(compute.round(m[(i, j)].to_f64() as f32)))));
    }
    cpu.upload(&out)
}

/// `C := α·P + β·C` on all of `C` or on its `part` triangle, `β = 0` not
/// reading `C`.
fn add_product<T: Scalar>(mut c: MatMut<'_, T>, alpha: T, p: MatRef<'_, f64>, beta: T, part: Option<Uplo>) {
    for j in 0..c.ncols() {
        let rows = match part {
            None => 0..c.nrows(),
            Some(Uplo::Lower) => j..c.nrows(),
            Some(Uplo::Upper) => 0..(j + 1).min(c.nrows()),
        };
        for i in rows {
            let ap = alpha * T::from_f64(p[(i, j)]);
            c[(i, j)] = if beta == T::ZERO { ap } else { ap + beta * c[(i, j)] };
        }
    }
}

fn op_of<T: Scalar>(a: MatRef<'_, T>, op: Op) -> MatRef<'_, T> {
    match op {
        Op::NoTrans => a,
        Op::Trans => a.transpose(),
    }
}

/// Column `j` of a matrix with unit row stride, as a slice.
fn col<'a, T>(a: MatRef<'a, T>, j: usize) -> &'a [T] {
    a.col(j).try_as_col_major().expect("unit row stride").as_slice()
}

/// Runs `f(j, column j)` on every column, in parallel for large matrices.
fn for_each_col<T: Scalar>(a: MatMut<'_, T>, f: impl Fn(usize, &mut [T]) + Sync + Send) {
    let (m, n) = a.shape();
    let run =
        |(j, c): (usize, faer::ColMut<'_, T>)| f(j, c.try_as_col_major_mut().expect("unit row stride").as_slice_mut());
    if m * n >= PARALLEL_MIN {
        a.par_col_chunks_mut(1).map(|c| c.col_mut(0)).enumerate().for_each(run);
    } else {
        a.col_iter_mut().enumerate().for_each(run);
    }
}

fn nan_max<T: Scalar>(a: T, b: T) -> T {
    if Scalar::is_nan(a) || Scalar::is_nan(b) { T::from_f64(f64::NAN) } else { Scalar::max(a, b) }
}

/// Scales the `uplo` triangle (or all, for `None`) of `c` by `beta`.
fn scale_part<T: Scalar>(c: MatMut<'_, T>, beta: T, part: Option<Uplo>) {
    for_each_col(c, |j, col| {
        let rows = match part {
            None => 0..col.len(),
            Some(Uplo::Lower) => j.min(col.len())..col.len(),
            Some(Uplo::Upper) => 0..(j + 1).min(col.len()),
        };
        for x in &mut col[rows] {
            *x = if beta == T::ZERO { T::ZERO } else { *x * beta };
        }
    });
}

/// BLAS's `β`: 0 overwrites without reading, 1 accumulates, else scale first.
fn accumulate<T: Scalar>(mut c: MatMut<'_, T>, beta: T, part: Option<Uplo>, f: impl FnOnce(MatMut<'_, T>, Accum)) {
    if beta == T::ZERO {
        f(c, Accum::Replace)
    } else {
        if beta != T::ONE {
            scale_part(c.as_mut(), beta, part);
        }
        f(c, Accum::Add)
    }
}

/// Reduces `op(A)` applied from `side` to a left multiplication by a
/// triangle: `X·op(A) = B` is `op(A)ᵀ·Xᵀ = Bᵀ`. Returns the effective left
/// factor, whether it is lower, and the effective right-hand side.
fn as_left<'a, 'b, T: Scalar>(
    side: Side,
    uplo: Uplo,
    op: Op,
    a: MatRef<'a, T>,
    b: MatMut<'b, T>,
) -> (MatRef<'a, T>, bool, MatMut<'b, T>) {
    let transposed = (op == Op::Trans) ^ (side == Side::Right);
    let lower = (uplo == Uplo::Lower) ^ transposed;
    let m = if transposed { a.transpose() } else { a };
    let b = if side == Side::Right { b.transpose_mut() } else { b };
    (m, lower, b)
}

impl Cpu {
    /// `C := α·op(A)·op(B)ᵀ + β·C` on the `uplo` triangle of `C` (`syrk`
    /// when `B` is `A`, `syrkx` otherwise), the shapes checked.
    #[allow(clippy::too_many_arguments)]
    fn triangle_of_product<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        alpha: T,
        a: View<'_, Cpu, T>,
        b: View<'_, Cpu, T>,
        beta: T,
        c: ViewMut<'_, Cpu, T>,
    ) {
        let (a, b) = (op_of(mat(a), op), op_of(mat(b), op));
        let structure = match uplo {
            Uplo::Lower => BlockStructure::TriangularLower,
            Uplo::Upper => BlockStructure::TriangularUpper,
        };
        accumulate(mat_mut(c), beta, Some(uplo), |c, acc| {
            triangular::matmul(
                c,
                structure,
                acc,
                a,
                BlockStructure::Rectangular,
                b.transpose(),
                BlockStructure::Rectangular,
                alpha,
                self.par,
            )
        });
    }
}

impl Backend for Cpu {
    type Buffer<E: Elem> = CpuBuffer<E>;
    /// The CPU runs eagerly: every mark is already reached.
    type Mark = ();

    fn name(&self) -> String {
        format!("CPU ({} threads)", self.threads())
    }

    fn alloc<E: Elem>(&self, len: usize) -> Result<CpuBuffer<E>> {
        CpuBuffer::new(len, true)
    }

    fn upload<E: Elem>(&self, host: &[E]) -> Result<CpuBuffer<E>> {
        let buf = CpuBuffer::<E>::new(host.len(), false)?;
        // Large copies in parallel: the first touch of fresh pages (a fault
        // each) costs more than the copy, and the threads share it.
        let dst = SendPtr(buf.ptr());
        host.par_chunks(PARALLEL_MIN).enumerate().with_min_len(4).for_each(|(k, chunk)| {
            // SAFETY: chunk `k` of `host` goes to the same entries of the
            // fresh allocation of `host.len()` entries, disjoint from `host`
            // and from every other chunk's.
            unsafe { std::ptr::copy_nonoverlapping(chunk.as_ptr(), dst.get().add(k * PARALLEL_MIN), chunk.len()) };
        });
        Ok(buf)
    }

    fn download<E: Elem>(&self, src: &CpuBuffer<E>, host: &mut [E]) -> Result<()> {
        if host.len() != src.len() {
            return Err(Error::dims(
                "download",
                format!("buffer has {} entries, host slice {}", src.len(), host.len()),
            ));
        }
        // SAFETY: `&CpuBuffer` excludes a concurrent `ViewMut`.
        let src = unsafe { std::slice::from_raw_parts(src.ptr(), src.len()) };
        // In parallel, as `upload`.
        host.par_chunks_mut(PARALLEL_MIN)
            .zip(src.par_chunks(PARALLEL_MIN))
            .with_min_len(4)
            .for_each(|(dst, src)| dst.copy_from_slice(src));
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    /// Work runs as it is called, so there is nothing to overlap.
    fn side(&self) -> Result<&Self> {
        Ok(self)
    }

    fn sibling(&self) -> Result<&Self> {
        Ok(self)
    }

    fn partitioned(&self) -> Result<&Self> {
        Ok(self)
    }

    fn wait_for(&self, _other: &Self) -> Result<()> {
        Ok(())
    }

    fn mark(&self) -> Result<()> {
        Ok(())
    }

    fn wait_mark(&self, _mark: &()) -> Result<()> {
        Ok(())
    }

    fn copy<E: Elem>(&self, src: View<'_, Cpu, E>, dst: ViewMut<'_, Cpu, E>) -> Result<()> {
        check::copy(&src, &dst)?;
        let (s, d) = (src.block(), dst.block());
        let (sp, (dbuf, _)) = (src.buffer().ptr(), dst.into_parts());
        for j in 0..s.cols {
            // SAFETY: blocks are in bounds and do not overlap (checked).
            unsafe { std::ptr::copy_nonoverlapping(sp.add(s.index(0, j)), dbuf.ptr().add(d.index(0, j)), s.rows) };
        }
        Ok(())
    }

    fn fill<E: Elem>(&self, dst: ViewMut<'_, Cpu, E>, value: E) -> Result<()> {
        let (buf, b) = dst.into_parts();
        for j in 0..b.cols {
            // SAFETY: the column is in bounds and exclusively ours.
            let c = unsafe { std::slice::from_raw_parts_mut(buf.ptr().add(b.index(0, j)), b.rows) };
            c.fill(value);
        }
        Ok(())
    }

    fn cast<S: Scalar, D: Scalar>(&self, src: View<'_, Cpu, S>, dst: ViewMut<'_, Cpu, D>) -> Result<()> {
        check::elementwise("cast", &src, &dst)?;
        let s = mat(src);
        for_each_col(mat_mut(dst), |j, d| {
            for (d, &x) in d.iter_mut().zip(col(s, j)) {
                *d = D::from_f64(x.to_f64());
            }
        });
        Ok(())
    }

    fn full_to_rfp<T: Scalar>(&self, a: View<'_, Cpu, T>, rfp: Rfp, arf: ViewMut<'_, Cpu, T>) -> Result<()> {
        check::full_to_rfp(&a, rfp, &arf)?;
        let ab = a.block();
        let full = Full::with_ld(rfp.n, rfp.n, ab.ld)?;
        // SAFETY: different buffers (checked); spans are in bounds.
        let src = unsafe { std::slice::from_raw_parts(a.buffer().ptr().add(ab.offset), ab.end() - ab.offset) };
        let (buf, fb) = arf.into_parts();
        let dst = unsafe { std::slice::from_raw_parts_mut(buf.ptr().add(fb.offset), fb.rows) };
        layout::full_to_rfp(src, full, rfp, dst)
    }

    fn rfp_to_full<T: Scalar>(&self, arf: View<'_, Cpu, T>, rfp: Rfp, a: ViewMut<'_, Cpu, T>) -> Result<()> {
        check::rfp_to_full(&arf, rfp, &a)?;
        let fb = arf.block();
        // SAFETY: different buffers (checked); spans are in bounds.
        let src = unsafe { std::slice::from_raw_parts(arf.buffer().ptr().add(fb.offset), fb.rows) };
        let (buf, ab) = a.into_parts();
        let full = Full::with_ld(rfp.n, rfp.n, ab.ld)?;
        let dst = unsafe { std::slice::from_raw_parts_mut(buf.ptr().add(ab.offset), ab.end() - ab.offset) };
        layout::rfp_to_full(src, rfp, dst, full)
    }

    fn gemm<T: Scalar>(
        &self,
        alpha: T,
        a: View<'_, Cpu, T>,
        op_a: Op,
        b: View<'_, Cpu, T>,
        op_b: Op,
        beta: T,
        c: ViewMut<'_, Cpu, T>,
    ) -> Result<()> {
        check::gemm(&a, op_a, &b, op_b, &c)?;
        let (a, b) = (op_of(mat(a), op_a), op_of(mat(b), op_b));
        accumulate(mat_mut(c), beta, None, |c, acc| matmul(c, acc, a, b, alpha, self.par));
        Ok(())
    }

    fn gemm_in<T: Scalar>(
        &self,
        compute: Compute,
        alpha: T,
        a: View<'_, Cpu, T>,
        op_a: Op,
        b: View<'_, Cpu, T>,
        op_b: Op,
        beta: T,
        c: ViewMut<'_, Cpu, T>,
    ) -> Result<()> {
        if let Compute::Int8 { moduli } = compute
            && T::NAME == "f64"
        {
            check::gemm(&a, op_a, &b, op_b, &c)?;
            super::ozaki::check_count(moduli)?;
            if let Some(p) = ozaki::product(self.par, moduli, op_of(mat(a), op_a), op_of(mat(b), op_b)) {
                add_product(mat_mut(c), alpha, p.as_ref(), beta, None);
                return Ok(());
            }
        }
        if T::NAME != "f32" || matches!(compute, Compute::Native | Compute::Int8 { .. }) {
            return self.gemm(alpha, a, op_a, b, op_b, beta, c);
        }
        check::gemm(&a, op_a, &b, op_b, &c)?;
        // The operands rounded as the tensor cores take them; faer's FP32
        // product then accumulates as theirs does.
        let (ra, rb) = (rounded(self, compute, a)?, rounded(self, compute, b)?);
        let av = View::dense(&ra, a.rows(), a.cols())?;
        let bv = View::dense(&rb, b.rows(), b.cols())?;
        self.gemm(alpha, av, op_a, bv, op_b, beta, c)
    }

    fn syrk_in<T: Scalar>(
        &self,
        compute: Compute,
        uplo: Uplo,
        op: Op,
        alpha: T,
        a: View<'_, Cpu, T>,
        beta: T,
        c: ViewMut<'_, Cpu, T>,
    ) -> Result<()> {
        if let Compute::Int8 { moduli } = compute
            && T::NAME == "f64"
        {
            check::syrk(uplo, op, &a, &c)?;
            super::ozaki::check_count(moduli)?;
            let a = op_of(mat(a), op);
            if let Some(p) = ozaki::product(self.par, moduli, a, a.transpose()) {
                add_product(mat_mut(c), alpha, p.as_ref(), beta, Some(uplo));
                return Ok(());
            }
        }
        if T::NAME != "f32" || matches!(compute, Compute::Native | Compute::Int8 { .. }) {
            return self.syrk(uplo, op, alpha, a, beta, c);
        }
        check::syrk(uplo, op, &a, &c)?;
        let ra = rounded(self, compute, a)?;
        self.syrk(uplo, op, alpha, View::dense(&ra, a.rows(), a.cols())?, beta, c)
    }

    fn syrk<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        alpha: T,
        a: View<'_, Cpu, T>,
        beta: T,
        c: ViewMut<'_, Cpu, T>,
    ) -> Result<()> {
        check::syrk(uplo, op, &a, &c)?;
        self.triangle_of_product(uplo, op, alpha, a, a, beta, c);
        Ok(())
    }

    fn triangular<T: Scalar>(
        &self,
        which: Triangular,
        side: Side,
        uplo: Uplo,
        op: Op,
        diag: Diag,
        alpha: T,
        a: View<'_, Cpu, T>,
        b: ViewMut<'_, Cpu, T>,
    ) -> Result<()> {
        check::triangular(which.name(), side, uplo, &a, &b)?;
        let mut b = mat_mut(b);
        if alpha == T::ZERO {
            // BLAS: B := 0 without reading the triangle.
            scale_part(b.as_mut(), T::ZERO, None);
            return Ok(());
        }
        if which == Triangular::Solve && alpha != T::ONE {
            scale_part(b.as_mut(), alpha, None);
        }
        let (m, lower, b) = as_left(side, uplo, op, mat(a), b);
        match which {
            Triangular::Solve => match (lower, diag) {
                (true, Diag::NonUnit) => tri::solve_lower_triangular_in_place(m, b, self.par),
                (true, Diag::Unit) => tri::solve_unit_lower_triangular_in_place(m, b, self.par),
                (false, Diag::NonUnit) => tri::solve_upper_triangular_in_place(m, b, self.par),
                (false, Diag::Unit) => tri::solve_unit_upper_triangular_in_place(m, b, self.par),
            },
            Triangular::Multiply => {
                let structure = match (lower, diag) {
                    (true, Diag::NonUnit) => BlockStructure::TriangularLower,
                    (true, Diag::Unit) => BlockStructure::UnitTriangularLower,
                    (false, Diag::NonUnit) => BlockStructure::TriangularUpper,
                    (false, Diag::Unit) => BlockStructure::UnitTriangularUpper,
                };
                // faer's product cannot write over its own operand: multiply a copy.
                let rhs = b.to_owned();
                triangular::matmul(
                    b,
                    BlockStructure::Rectangular,
                    Accum::Replace,
                    m,
                    structure,
                    rhs.as_ref(),
                    BlockStructure::Rectangular,
                    alpha,
                    self.par,
                );
            }
        }
        Ok(())
    }

    fn geam<T: Scalar>(
        &self,
        alpha: T,
        a: View<'_, Cpu, T>,
        op_a: Op,
        beta: T,
        b: View<'_, Cpu, T>,
        op_b: Op,
        c: ViewMut<'_, Cpu, T>,
    ) -> Result<()> {
        check::geam(&a, op_a, &b, op_b, &c)?;
        let (a, b) = (op_of(mat(a), op_a), op_of(mat(b), op_b));
        // As cuBLAS: a zero coefficient means that operand is not read.
        let term = |x: MatRef<'_, T>, s: T, i: usize, j: usize| if s == T::ZERO { T::ZERO } else { s * x[(i, j)] };
        for_each_col(mat_mut(c), |j, c| {
            for (i, c) in c.iter_mut().enumerate() {
                *c = term(a, alpha, i, j) + term(b, beta, i, j);
            }
        });
        Ok(())
    }

    fn symmetrize<T: Scalar>(&self, uplo: Uplo, a: ViewMut<'_, Cpu, T>) -> Result<()> {
        check::square_mut("symmetrize", &a)?;
        let mut a = mat_mut(a);
        for j in 0..a.ncols() {
            for i in j + 1..a.nrows() {
                match uplo {
                    Uplo::Lower => a[(j, i)] = a[(i, j)],
                    Uplo::Upper => a[(i, j)] = a[(j, i)],
                }
            }
        }
        Ok(())
    }

    fn fill_strict_triangle<T: Scalar>(&self, uplo: Uplo, value: T, a: ViewMut<'_, Cpu, T>) -> Result<()> {
        for_each_col(mat_mut(a), |j, c| {
            let rows = match uplo {
                Uplo::Lower => (j + 1).min(c.len())..c.len(),
                Uplo::Upper => 0..j.min(c.len()),
            };
            c[rows].fill(value);
        });
        Ok(())
    }

    fn fill_random<T: Scalar>(
        &self,
        a: ViewMut<'_, Cpu, T>,
        (i0, j0): (usize, usize),
        key: u64,
        symmetric: bool,
    ) -> Result<()> {
        let entry = if symmetric { random::symmetric } else { random::uniform };
        for_each_col(mat_mut(a), |j, c| {
            for (i, x) in c.iter_mut().enumerate() {
                *x = T::from_f64(entry(key, i0 + i, j0 + j));
            }
        });
        Ok(())
    }

    fn trsv_wide<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        diag: Diag,
        a: View<'_, Cpu, T>,
        x: ViewMut<'_, Cpu, f64>,
    ) -> Result<()> {
        let n = check::trsv_wide(uplo, &a, &x)?;
        let a = mat(a);
        let mut x = mat_mut(x);
        let at = |i: usize, j: usize| a[(i, j)].to_f64();
        let pivot = |j: usize| if diag == Diag::Unit { 1.0 } else { at(j, j) };
        let mut v: Vec<f64> = (0..n).map(|k| if x.nrows() == n { x[(k, 0)] } else { x[(0, k)] }).collect();
        // Column by column without transposition, row by row with it: A's
        // columns are contiguous either way.
        match (uplo, op) {
            (Uplo::Lower, Op::NoTrans) => {
                for j in 0..n {
                    v[j] /= pivot(j);
                    for i in j + 1..n {
                        v[i] -= at(i, j) * v[j];
                    }
                }
            }
            (Uplo::Upper, Op::NoTrans) => {
                for j in (0..n).rev() {
                    v[j] /= pivot(j);
                    for i in 0..j {
                        v[i] -= at(i, j) * v[j];
                    }
                }
            }
            (Uplo::Lower, Op::Trans) => {
                for i in (0..n).rev() {
                    let s: f64 = (i + 1..n).map(|k| at(k, i) * v[k]).sum();
                    v[i] = (v[i] - s) / pivot(i);
                }
            }
            (Uplo::Upper, Op::Trans) => {
                for i in 0..n {
                    let s: f64 = (0..i).map(|k| at(k, i) * v[k]).sum();
                    v[i] = (v[i] - s) / pivot(i);
                }
            }
        }
        for (k, value) in v.into_iter().enumerate() {
            if x.nrows() == n {
                x[(k, 0)] = value;
            } else {
                x[(0, k)] = value;
            }
        }
        Ok(())
    }

    fn potrf<T: Scalar>(
        &self,
        uplo: Uplo,
        a: ViewMut<'_, Cpu, T>,
        info: ViewMut<'_, Cpu, i32>,
        offset: usize,
    ) -> Result<()> {
        check::potrf(&a, &info)?;
        let a = mat_mut(a);
        let n = a.nrows();
        // faer factors the lower triangle; the upper one is the lower of Aᵀ.
        let mut lower = match uplo {
            Uplo::Lower => a,
            Uplo::Upper => a.transpose_mut(),
        };
        // faer may use the other triangle, which in an RFP array is another
        // piece's: factor a copy of the triangle and copy the factor back.
        let mut work = Mat::<T>::from_fn(n, n, |i, j| if i >= j { lower[(i, j)] } else { T::ZERO });
        let par = if n >= 256 { self.par } else { Par::Seq };
        let params = Default::default();
        let scratch = llt::factor::cholesky_in_place_scratch::<T>(n, par, params);
        let mut mem = MemBuffer::try_new(scratch).map_err(|_| Error::OutOfHostMemory {
            what: format!("the workspace of a Cholesky factorization of order {n}"),
            needed: scratch.size_bytes(),
            available: available_memory(),
        })?;
        let result =
            llt::factor::cholesky_in_place(work.as_mut(), Default::default(), par, MemStack::new(&mut mem), params);
        for j in 0..n {
            for i in j..n {
                lower[(i, j)] = work[(i, j)];
            }
        }
        if let Err(LltError::NonPositivePivot { index }) = result {
            let (buf, b) = info.into_parts();
            // SAFETY: a 1×1 block inside the buffer (checked), exclusively ours.
            let first = unsafe { &mut *buf.ptr().add(b.offset) };
            if *first == 0 {
                *first = i32::try_from(offset + index + 1).unwrap_or(i32::MAX);
            }
        }
        Ok(())
    }

    fn scale_rows<T: Scalar>(&self, d: View<'_, Cpu, T>, a: ViewMut<'_, Cpu, T>) -> Result<()> {
        check::scaling("scale_rows", &d, a.rows(), &a)?;
        let d = vector(d);
        for_each_col(mat_mut(a), |_, c| {
            for (i, x) in c.iter_mut().enumerate() {
                *x *= d(i);
            }
        });
        Ok(())
    }

    fn scale_cols<T: Scalar>(&self, a: ViewMut<'_, Cpu, T>, d: View<'_, Cpu, T>) -> Result<()> {
        check::scaling("scale_cols", &d, a.cols(), &a)?;
        let d = vector(d);
        for_each_col(mat_mut(a), |j, c| {
            let s = d(j);
            c.iter_mut().for_each(|x| *x *= s);
        });
        Ok(())
    }

    fn axpy<T: Scalar>(&self, alpha: T, x: View<'_, Cpu, T>, y: ViewMut<'_, Cpu, T>) -> Result<()> {
        check::elementwise("axpy", &x, &y)?;
        let x = mat(x);
        for_each_col(mat_mut(y), |j, y| {
            for (y, &x) in y.iter_mut().zip(col(x, j)) {
                *y += alpha * x;
            }
        });
        Ok(())
    }

    fn scale<T: Scalar>(&self, alpha: T, a: ViewMut<'_, Cpu, T>) -> Result<()> {
        for_each_col(mat_mut(a), |_, c| c.iter_mut().for_each(|x| *x *= alpha));
        Ok(())
    }

    fn abs_maxima<T: Scalar>(&self, a: View<'_, Cpu, T>, rows: bool) -> Result<Vec<f64>> {
        let a = mat(a);
        let mut out = vec![0.0; if rows { a.nrows() } else { a.ncols() }];
        for j in 0..a.ncols() {
            for (i, &x) in col(a, j).iter().enumerate() {
                let m = &mut out[if rows { i } else { j }];
                *m = nan_max(*m, x.abs().to_f64());
            }
        }
        Ok(out)
    }

    fn norm<T: Scalar>(&self, norm: Norm, a: View<'_, Cpu, T>) -> Result<T> {
        let a = mat(a);
        let cols = || (0..a.ncols()).map(|j| col(a, j));
        let zero = T::ZERO;
        Ok(match norm {
            Norm::Frobenius => a.norm_l2(),
            Norm::Max => cols().flat_map(|c| c.iter()).fold(zero, |m, &x| nan_max(m, x.abs())),
            Norm::One => cols().fold(zero, |m, c| nan_max(m, c.iter().fold(zero, |s, &x| s + x.abs()))),
            Norm::Inf => {
                let mut rows = vec![zero; a.nrows()];
                for c in cols() {
                    rows.iter_mut().zip(c).for_each(|(r, &x)| *r += x.abs());
                }
                rows.into_iter().fold(zero, nan_max)
            }
        })
    }

    fn iamax<T: Scalar>(&self, x: View<'_, Cpu, T>) -> Result<Option<usize>> {
        let n = check::vector("iamax", &x)?;
        let get = vector(x);
        let mut best: Option<(usize, T)> = None;
        for k in 0..n {
            let v = get(k).abs();
            if Scalar::is_nan(v) {
                return Ok(Some(k));
            }
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((k, v));
            }
        }
        Ok(best.map(|(k, _)| k))
    }

    fn find_non_finite<T: Scalar>(&self, a: View<'_, Cpu, T>) -> Result<Option<(usize, usize)>> {
        let a = mat(a);
        Ok((0..a.ncols()).find_map(|j| col(a, j).iter().position(|x| !Scalar::is_finite(*x)).map(|i| (i, j))))
    }

    // Householder QR.

    fn householder<T: Scalar>(&self, a: ViewMut<'_, Cpu, T>, t: ViewMut<'_, Cpu, T>) -> Result<()> {
        check::householder(&a, &t)?;
        qr::householder(mat_mut(a), mat_mut(t));
        Ok(())
    }

    // LU factorization, in `cpu/lu.rs`.

    fn getrf_panel<T: Scalar>(
        &self,
        a: ViewMut<'_, Cpu, T>,
        ipiv: ViewMut<'_, Cpu, i32>,
        info: ViewMut<'_, Cpu, i32>,
        offset: usize,
        pivoting: Pivoting,
    ) -> Result<()> {
        lu::getrf_panel(a, ipiv, info, offset, pivoting)
    }

    fn laswp<T: Scalar>(
        &self,
        a: ViewMut<'_, Cpu, T>,
        ipiv: View<'_, Cpu, i32>,
        shift: usize,
        reverse: bool,
    ) -> Result<()> {
        lu::laswp(a, ipiv, shift, reverse)
    }

    fn permute_rows<T: Scalar>(&self, perm: View<'_, Cpu, i32>, inverse: bool, b: ViewMut<'_, Cpu, T>) -> Result<()> {
        lu::permute_rows(perm, inverse, b)
    }

    fn butterfly<T: Scalar>(&self, left: Option<(u64, Op)>, right: Option<u64>, a: ViewMut<'_, Cpu, T>) -> Result<()> {
        lu::butterfly(left, right, a)
    }

    // LDLᵀ: `syrkx` here, the panel and `D` in `cpu/ldlt.rs`.

    fn syrkx<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        alpha: T,
        a: View<'_, Cpu, T>,
        b: View<'_, Cpu, T>,
        beta: T,
        c: ViewMut<'_, Cpu, T>,
    ) -> Result<()> {
        check::syrkx(uplo, op, &a, &b, &c)?;
        self.triangle_of_product(uplo, op, alpha, a, b, beta, c);
        Ok(())
    }

    fn sytrf_panel<T: Scalar>(
        &self,
        a: &BufferMut<'_, Cpu, T>,
        tri: &Triangle,
        k: usize,
        panel: SymPanel<'_, Cpu, T>,
        pivoting: SymPivoting,
    ) -> Result<()> {
        ldlt::sytrf_panel(a, tri, k, panel, pivoting)
    }

    fn aasen_panel<T: Scalar>(
        &self,
        a: &BufferMut<'_, Cpu, T>,
        tri: &Triangle,
        k: usize,
        panel: AasenPanel<'_, Cpu, T>,
    ) -> Result<()> {
        aasen::aasen_panel(a, tri, k, panel)
    }

    fn aasen_interchange<T: Scalar>(
        &self,
        a: &BufferMut<'_, Cpu, T>,
        tri: &Triangle,
        k: usize,
        panel: AasenPanel<'_, Cpu, T>,
        ipiv: ViewMut<'_, Cpu, i32>,
        x: ViewMut<'_, Cpu, T>,
        y: ViewMut<'_, Cpu, T>,
    ) -> Result<()> {
        aasen::aasen_interchange(a, tri, k, panel, ipiv, x, y)
    }

    fn ldlt_panel<T: Scalar>(
        &self,
        uplo: Uplo,
        a: ViewMut<'_, Cpu, T>,
        w: ViewMut<'_, Cpu, T>,
        d: ViewMut<'_, Cpu, T>,
        info: ViewMut<'_, Cpu, i32>,
        offset: usize,
        tol: f64,
    ) -> Result<()> {
        ldlt::ldlt_panel(self, uplo, a, w, d, info, offset, tol)
    }

    fn tridiagonal_solve<T: Scalar>(
        &self,
        layout: SystemLayout,
        pivoting: bool,
        (dl, d, du): (ViewMut<'_, Cpu, T>, ViewMut<'_, Cpu, T>, ViewMut<'_, Cpu, T>),
        b: ViewMut<'_, Cpu, T>,
        info: ViewMut<'_, Cpu, i32>,
    ) -> Result<()> {
        tridiagonal::tridiagonal_solve(layout, pivoting, dl, d, du, b, info)
    }

    // The shallow-water passes, in `cpu/shallow_water.rs`.

    fn eulerian_lagrangian(
        &self,
        sweep: Sweep,
        p: &Stepping,
        normal: View<'_, Cpu, f64>,
        tangential: View<'_, Cpu, f64>,
        f: ViewMut<'_, Cpu, f64>,
    ) -> Result<()> {
        shallow_water::eulerian_lagrangian(sweep, p, normal, tangential, f)
    }

    fn adi_assemble(
        &self,
        sweep: Sweep,
        p: &Stepping,
        fields: AdiFields<'_, Cpu>,
        tridiagonal: (ViewMut<'_, Cpu, f64>, ViewMut<'_, Cpu, f64>, ViewMut<'_, Cpu, f64>),
        rhs: ViewMut<'_, Cpu, f64>,
        r: ViewMut<'_, Cpu, f64>,
    ) -> Result<()> {
        shallow_water::adi_assemble(sweep, p, fields, tridiagonal, rhs, r)
    }

    fn adi_velocity(
        &self,
        sweep: Sweep,
        p: &Stepping,
        z: View<'_, Cpu, f64>,
        f: View<'_, Cpu, f64>,
        r: View<'_, Cpu, f64>,
        normal: ViewMut<'_, Cpu, f64>,
    ) -> Result<()> {
        shallow_water::adi_velocity(sweep, p, z, f, r, normal)
    }

    fn block_diagonal_solve<T: Scalar>(
        &self,
        d: View<'_, Cpu, T>,
        e: View<'_, Cpu, T>,
        b: ViewMut<'_, Cpu, T>,
    ) -> Result<()> {
        ldlt::block_diagonal_solve(d, e, b)
    }

    // Batches: the single-matrix primitives member by member (`cpu/batch.rs`).

    fn batched_getrf_panel<T: Scalar>(
        &self,
        a: StridedMut<'_, Cpu, T>,
        ipiv: StridedMut<'_, Cpu, i32>,
        info: StridedMut<'_, Cpu, i32>,
        offset: usize,
    ) -> Result<()> {
        let count = check::members(
            "batched_getrf_panel",
            &[operand("a", &a.rb()), operand("ipiv", &ipiv.rb()), operand("info", &info.rb())],
        )?;
        self.for_each_member(count, |be, s| {
            let mut status = info.member_mut(s)?;
            be.getrf_panel(a.member_mut(s)?, ipiv.member_mut(s)?, status.rb_mut(), offset, Pivoting::Partial)?;
            // A member's non-finite pivot fails it too (as a zero one does).
            let panel = mat(a.member(s)?);
            let first = (0..panel.ncols()).find(|&j| !Scalar::is_finite(panel[(j, j)]));
            if let Some(j) = first.map(|j| i32::try_from(offset + j + 1).unwrap_or(i32::MAX)) {
                // SAFETY: one entry in bounds (checked by `getrf_panel`), this
                // member's alone, and no other view of it is in use.
                let info = unsafe { &mut *status.buffer().ptr().add(status.block().offset) };
                if *info == 0 || *info > j {
                    *info = j;
                }
            }
            Ok(())
        })
    }

    fn batched_potrf_panel<T: Scalar>(
        &self,
        a: StridedMut<'_, Cpu, T>,
        info: StridedMut<'_, Cpu, i32>,
        offset: usize,
    ) -> Result<()> {
        let count = check::members("batched_potrf_panel", &[operand("a", &a.rb()), operand("info", &info.rb())])?;
        let nb = a.cols();
        if offset + nb > a.rows() {
            return Err(Error::dims(
                "batched_potrf_panel",
                format!("a panel of {nb} columns from row {offset} of {} rows", a.rows()),
            ));
        }
        self.for_each_member(count, |be, s| {
            let (above, panel) = a.member_mut(s)?.split_at_row(offset)?;
            be.fill(above, T::ZERO)?;
            let mut panel = panel;
            be.potrf_panel(Uplo::Lower, panel.rb_mut(), info.member_mut(s)?, offset)?;
            be.fill_strict_triangle(Uplo::Upper, T::ZERO, panel.sub_mut(0, 0, nb, nb)?)
        })
    }

    fn batched_laswp<T: Scalar>(
        &self,
        a: StridedMut<'_, Cpu, T>,
        ipiv: Strided<'_, Cpu, i32>,
        shift: usize,
        reverse: bool,
    ) -> Result<()> {
        let count = check::members("batched_laswp", &[operand("a", &a.rb()), operand("ipiv", &ipiv)])?;
        self.for_each_member(count, |be, s| be.laswp(a.member_mut(s)?, ipiv.member(s)?, shift, reverse))
    }

    fn batched_trsm<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        diag: Diag,
        a: Strided<'_, Cpu, T>,
        b: StridedMut<'_, Cpu, T>,
    ) -> Result<()> {
        let count = check::members("batched_trsm", &[operand("A", &a), operand("B", &b.rb())])?;
        self.for_each_member(count, |be, s| be.trsm(Side::Left, uplo, op, diag, T::ONE, a.member(s)?, b.member_mut(s)?))
    }

    fn batched_getrs<T: Scalar>(
        &self,
        lu: Strided<'_, Cpu, T>,
        ipiv: Strided<'_, Cpu, i32>,
        b: StridedMut<'_, Cpu, T>,
    ) -> Result<()> {
        let count =
            check::members("batched_getrs", &[operand("LU", &lu), operand("ipiv", &ipiv), operand("B", &b.rb())])?;
        self.for_each_member(count, |be, s| {
            let (lu, mut x) = (lu.member(s)?, b.member_mut(s)?);
            be.laswp(x.rb_mut(), ipiv.member(s)?, 0, false)?;
            be.trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::Unit, T::ONE, lu, x.rb_mut())?;
            be.trsm(Side::Left, Uplo::Upper, Op::NoTrans, Diag::NonUnit, T::ONE, lu, x)
        })
    }

    fn batched_gemm<T: Scalar>(
        &self,
        alpha: T,
        a: Strided<'_, Cpu, T>,
        op_a: Op,
        b: Strided<'_, Cpu, T>,
        op_b: Op,
        beta: T,
        c: StridedMut<'_, Cpu, T>,
    ) -> Result<()> {
        let count = check::members("batched_gemm", &[operand("A", &a), operand("B", &b), operand("C", &c.rb())])?;
        self.for_each_member(count, |be, s| {
            be.gemm(alpha, a.member(s)?, op_a, b.member(s)?, op_b, beta, c.member_mut(s)?)
        })
    }

    // Scaled Gram matrices, in `cpu/scaled_gram.rs`.

    fn scaled_syrk<T: Scalar>(
        &self,
        uplo: Uplo,
        alpha: T,
        a: View<'_, Cpu, T>,
        d: View<'_, Cpu, T>,
        beta: T,
        c: ViewMut<'_, Cpu, T>,
    ) -> Result<()> {
        self.scaled_syrk_impl(uplo, alpha, a, d, beta, c)
    }

    fn scaled_gemm<T: Scalar>(
        &self,
        alpha: T,
        a: View<'_, Cpu, T>,
        b: View<'_, Cpu, T>,
        d: View<'_, Cpu, T>,
        beta: T,
        c: ViewMut<'_, Cpu, T>,
    ) -> Result<()> {
        self.scaled_gemm_impl(alpha, a, b, d, beta, c)
    }

    // Mixed precision weighted least squares, in `cpu/scaled_gram.rs` and
    // `cpu/residual.rs`.

    fn scaled_syrk_f32(&self, a: View<'_, Cpu, f64>, d: View<'_, Cpu, f64>, c: ViewMut<'_, Cpu, f32>) -> Result<()> {
        self.scaled_syrk_f32_impl(a, d, c)
    }

    fn weighted_residual(
        &self,
        a: View<'_, Cpu, f64>,
        d: View<'_, Cpu, f64>,
        b: View<'_, Cpu, f64>,
        x: View<'_, Cpu, f64>,
        r: ViewMut<'_, Cpu, f64>,
    ) -> Result<()> {
        self.weighted_residual_impl(a, d, b, x, r)
    }
}

/// Entry `k` of a vector block, by value.
fn vector<'a, T: Scalar>(x: View<'a, Cpu, T>) -> impl Fn(usize) -> T + Sync + Send + 'a {
    let b = x.block();
    let p = SendPtr(x.buffer().ptr());
    // SAFETY: the callers checked `x` is a vector block in bounds that nothing
    // writes during the operation.
    move |k| unsafe { *p.get().add(b.vector_index(k)) }
}

#[derive(Clone, Copy)]
struct SendPtr<T>(*mut T);
// SAFETY: only read, under the same guarantees as the view it came from.
unsafe impl<T> Send for SendPtr<T> {}
unsafe impl<T> Sync for SendPtr<T> {}
impl<T> SendPtr<T> {
    fn get(self) -> *mut T {
        self.0
    }
}
