//! The `Backend` trait: device memory and the primitive kernels that the
//! algorithms are written against.
//!
//! An algorithm never names a backend and a backend never knows an algorithm.
//! Primitives work on strided sub-blocks ([`View`], [`ViewMut`]) addressed by
//! offset and leading dimension, so a blocked factorization — in full storage
//! or on the pieces of an RFP rectangle — is a sequence of calls with other
//! offsets. Every primitive is enqueued on the backend's stream and returns;
//! only [`Backend::download`], [`Backend::synchronize`] and the reductions
//! that return a host value ([`Backend::norm`], [`Backend::iamax`],
//! [`Backend::find_non_finite`]) wait for it. The CPU backend runs eagerly.
//!
//! Argument conventions follow BLAS: `β = 0` means the output is not read
//! (NaNs in it do not propagate), `α = 0` in `trsm`/`trmm` sets the output to
//! zero without reading the triangle.

pub mod butterfly;
mod check;
pub mod compute;
pub mod cpu;
pub mod cuda;
pub mod ozaki;
pub mod random;
pub mod reflector;
pub mod region;
pub mod shallow_water;
pub mod strided;
pub mod triangle;
pub mod tuning;
pub mod view;

pub use compute::Compute;
pub use cpu::Cpu;
pub use cuda::Cuda;
pub use shallow_water::{AdiFields, Stepping, Sweep};
pub use strided::{Strided, StridedMut};
pub use triangle::{Stored, Triangle};
pub use tuning::Tuning;
pub use view::{Block, BufferMut, View, ViewMut};

use crate::layout::{Rfp, Uplo};
use crate::{Elem, Result, Scalar};

/// [`Backend::potrf_panel`] as `potrf` on the diagonal block, then `trsm`.
pub(crate) fn potrf_panel_by_blocks<B: Backend, T: Scalar>(
    be: &B,
    uplo: Uplo,
    a: ViewMut<'_, B, T>,
    mut info: ViewMut<'_, B, i32>,
    offset: usize,
) -> Result<()> {
    check::potrf_panel(uplo, &a, &info)?;
    let one = T::ONE;
    match uplo {
        Uplo::Lower => {
            let n = a.cols();
            let (mut l11, l21) = a.split_at_row(n)?;
            be.potrf(uplo, l11.rb_mut(), info.rb_mut(), offset)?;
            be.trsm(Side::Right, uplo, Op::Trans, Diag::NonUnit, one, l11.rb(), l21)
        }
        Uplo::Upper => {
            let n = a.rows();
            let (mut u11, u12) = a.split_at_col(n)?;
            be.potrf(uplo, u11.rb_mut(), info.rb_mut(), offset)?;
            be.trsm(Side::Left, uplo, Op::Trans, Diag::NonUnit, one, u11.rb(), u12)
        }
    }
}

/// Whether an operand is used as stored or transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    NoTrans,
    Trans,
}

/// Which side a triangular matrix multiplies from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
}

/// The two triangular routines, which take the same arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Triangular {
    /// `trsm`: solve with the triangle, in place.
    Solve,
    /// `trmm`: multiply by the triangle, in place.
    Multiply,
}

impl Triangular {
    /// The BLAS name.
    pub fn name(self) -> &'static str {
        match self {
            Triangular::Solve => "trsm",
            Triangular::Multiply => "trmm",
        }
    }
}

/// Whether a triangular matrix has an implicit unit diagonal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Diag {
    NonUnit,
    Unit,
}

/// How a batch of systems lies in a block: one system per column (entry
/// `i` of system `s` at `(i, s)`), or one per row (at `(s, i)`), as the
/// lines of a grid in one direction or the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SystemLayout {
    Columns,
    Rows,
}

/// Matrix norms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Norm {
    /// Maximum absolute column sum.
    One,
    /// Maximum absolute row sum.
    Inf,
    /// Square root of the sum of squares, computed without overflow.
    Frobenius,
    /// Largest absolute entry (not a matrix norm, but what `dlange` calls 'M').
    Max,
}

impl Op {
    /// Shape of `op(X)` for `X` of `rows × cols`.
    pub fn apply(self, rows: usize, cols: usize) -> (usize, usize) {
        match self {
            Op::NoTrans => (rows, cols),
            Op::Trans => (cols, rows),
        }
    }
}

/// Memory owned by a backend.
pub trait DeviceBuffer {
    /// Number of elements.
    fn len(&self) -> usize;
    /// Where the memory lies (its address), for keys of
    /// [`Backend::replay`].
    fn id(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Widest panel [`Backend::householder`] takes: wider panels are split
/// recursively (`factor::qr`), so the unblocked work stays this narrow.
pub const HOUSEHOLDER_MAX_COLS: usize = 32;

/// A place to compute: memory, a stream of work, and the primitives.
pub trait Backend: Sized + Send + Sync + 'static {
    /// A handle to `len` elements of device memory.
    type Buffer<E: Elem>: DeviceBuffer + Send + Sync;
    /// A point in a queue's work that another queue can wait for later
    /// ([`Backend::mark`], [`Backend::wait_mark`]).
    type Mark;

    /// What the backend runs on, for `Device::describe`.
    fn name(&self) -> String;

    // Memory and the stream.

    /// A zero-filled buffer of `len` elements.
    fn alloc<E: Elem>(&self, len: usize) -> Result<Self::Buffer<E>>;
    /// A buffer holding a copy of `host`.
    fn upload<E: Elem>(&self, host: &[E]) -> Result<Self::Buffer<E>>;
    /// Copies the whole buffer to `host` (same length), after all queued work.
    fn download<E: Elem>(&self, src: &Self::Buffer<E>, host: &mut [E]) -> Result<()>;
    /// Waits for all queued work and reports a failure of any of it.
    fn synchronize(&self) -> Result<()>;
    /// A second queue on the same device and memory, for independent work
    /// that may overlap this queue's (look-ahead in blocked factorizations).
    /// Order between the two is only what [`Backend::wait_for`] imposes; an
    /// algorithm that uses the side queue makes this one wait for it before
    /// it returns. The CPU backend, which runs eagerly, is its own side.
    fn side(&self) -> Result<&Self>;
    /// A queue of the highest priority, like the main queue's, for the
    /// pieces of a critical path that do not depend on each other: two
    /// small calls, one on each queue, run at once instead of one after the
    /// other. The CPU backend is its own sibling.
    fn sibling(&self) -> Result<&Self>;
    /// A queue like this one for a blocked factorization whose trailing
    /// updates are cheap next to its panels (tensor-core updates): its side
    /// queue runs on part of the SMs and its panels keep the rest, so that
    /// a panel never waits for an update to leave the SMs it needs. Order
    /// with this queue is what [`Backend::wait_for`] imposes. Where the
    /// GPU cannot be partitioned it is an ordinary queue; the CPU backend
    /// is its own.
    fn partitioned(&self) -> Result<&Self>;
    /// Work enqueued on `self` from now on waits for all work enqueued on
    /// `other` so far.
    fn wait_for(&self, other: &Self) -> Result<()>;
    /// The point this queue's work has been enqueued to: a queue that waits
    /// for it later ([`Backend::wait_mark`]) waits for that work and not
    /// for what this queue is given after it.
    fn mark(&self) -> Result<Self::Mark>;
    /// Work enqueued on `self` from now on waits for the work before `mark`.
    fn wait_mark(&self, mark: &Self::Mark) -> Result<()>;
    /// Runs `enqueue` on a queue that it is given and that is ordered
    /// after this one's work and before what follows on it; its work (on
    /// that queue, and on that queue's side queue joined before it returns)
    /// is the same whenever `key` is: the key names the operation, its
    /// shapes and parameters, and the memory it uses. A GPU backend may
    /// record the work when a key comes back and replay the recording from
    /// then on, at the cost of one launch instead of one per call. The CPU
    /// backend runs `enqueue` on itself.
    fn replay(&self, key: &str, enqueue: &mut dyn FnMut(&Self) -> Result<()>) -> Result<()> {
        let _ = key;
        enqueue(self)
    }

    /// Makes this backend's device current on the calling thread, for a
    /// thread that drives one rank of a distributed computation
    /// ([`crate::dist`]). The CPU needs nothing.
    fn enter(&self) -> Result<()> {
        Ok(())
    }

    // Data movement.

    /// `dst := src` (same shape).
    fn copy<E: Elem>(&self, src: View<'_, Self, E>, dst: ViewMut<'_, Self, E>) -> Result<()>;
    /// Every entry of `dst` set to `value`.
    fn fill<E: Elem>(&self, dst: ViewMut<'_, Self, E>, value: E) -> Result<()>;
    /// `dst := src` rounded to the destination's precision.
    fn cast<S: Scalar, D: Scalar>(&self, src: View<'_, Self, S>, dst: ViewMut<'_, Self, D>) -> Result<()>;
    /// Packs the `uplo` triangle of the `n × n` block `a` (`uplo` = `rfp.uplo`)
    /// into the RFP array `arf` (`dtrttf`).
    fn full_to_rfp<T: Scalar>(&self, a: View<'_, Self, T>, rfp: Rfp, arf: ViewMut<'_, Self, T>) -> Result<()>;
    /// Unpacks the RFP array into the `rfp.uplo` triangle of `a` (`dtfttr`);
    /// the other triangle is left as it was.
    fn rfp_to_full<T: Scalar>(&self, arf: View<'_, Self, T>, rfp: Rfp, a: ViewMut<'_, Self, T>) -> Result<()>;

    // Level 3.

    /// `C := α·op(A)·op(B) + β·C`.
    #[allow(clippy::too_many_arguments)]
    fn gemm<T: Scalar>(
        &self,
        alpha: T,
        a: View<'_, Self, T>,
        op_a: Op,
        b: View<'_, Self, T>,
        op_b: Op,
        beta: T,
        c: ViewMut<'_, Self, T>,
    ) -> Result<()>;

    /// [`gemm`](Self::gemm) with the multiplications in `compute`: the
    /// entries of `op(A)` and `op(B)` rounded to its format and the products
    /// accumulated in `T` — on the tensor cores, for the trailing updates of
    /// a low-precision factorization. `f64`, and `Compute::Native`, are
    /// `gemm`. With `Compute::Fp16` an entry beyond 65504 becomes an
    /// infinity: the caller scales the operands.
    #[allow(clippy::too_many_arguments)]
    fn gemm_in<T: Scalar>(
        &self,
        compute: Compute,
        alpha: T,
        a: View<'_, Self, T>,
        op_a: Op,
        b: View<'_, Self, T>,
        op_b: Op,
        beta: T,
        c: ViewMut<'_, Self, T>,
    ) -> Result<()>;

    /// `C := α·op(A)·op(A)ᵀ + β·C` on the `uplo` triangle of `C` only
    /// (`op = NoTrans`: `A·Aᵀ`; `Trans`: `Aᵀ·A`).
    fn syrk<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        alpha: T,
        a: View<'_, Self, T>,
        beta: T,
        c: ViewMut<'_, Self, T>,
    ) -> Result<()>;

    /// [`syrk`](Self::syrk) with the multiplications in `compute`, as
    /// [`gemm_in`](Self::gemm_in) takes them; only the `uplo` triangle of
    /// `C` is written.
    #[allow(clippy::too_many_arguments)]
    fn syrk_in<T: Scalar>(
        &self,
        compute: Compute,
        uplo: Uplo,
        op: Op,
        alpha: T,
        a: View<'_, Self, T>,
        beta: T,
        c: ViewMut<'_, Self, T>,
    ) -> Result<()>;

    /// `trsm` or `trmm`, which take the same arguments: `which` says which.
    #[allow(clippy::too_many_arguments)]
    fn triangular<T: Scalar>(
        &self,
        which: Triangular,
        side: Side,
        uplo: Uplo,
        op: Op,
        diag: Diag,
        alpha: T,
        a: View<'_, Self, T>,
        b: ViewMut<'_, Self, T>,
    ) -> Result<()>;

    /// Solves `op(A)·X = α·B` (`Left`) or `X·op(A) = α·B` (`Right`) for `X`,
    /// overwriting `B`; `A` is the `uplo` triangle of a square block.
    #[allow(clippy::too_many_arguments)]
    fn trsm<T: Scalar>(
        &self,
        side: Side,
        uplo: Uplo,
        op: Op,
        diag: Diag,
        alpha: T,
        a: View<'_, Self, T>,
        b: ViewMut<'_, Self, T>,
    ) -> Result<()> {
        self.triangular(Triangular::Solve, side, uplo, op, diag, alpha, a, b)
    }

    /// `B := α·op(A)·B` (`Left`) or `B := α·B·op(A)` (`Right`), `A` triangular.
    #[allow(clippy::too_many_arguments)]
    fn trmm<T: Scalar>(
        &self,
        side: Side,
        uplo: Uplo,
        op: Op,
        diag: Diag,
        alpha: T,
        a: View<'_, Self, T>,
        b: ViewMut<'_, Self, T>,
    ) -> Result<()> {
        self.triangular(Triangular::Multiply, side, uplo, op, diag, alpha, a, b)
    }

    /// The largest order of a triangular factor that an iteration applying
    /// it many times (GMRES's preconditioner) applies better through its
    /// explicit inverse, formed once, than by [`trsv_wide`](Self::trsv_wide):
    /// 0 for none. On a GPU each solve waits at every block row of its
    /// chain and a product with the inverse does not; on the CPU a solve
    /// costs what a product does, and forming the inverse never pays.
    const SOLVES_BY_INVERSE_UP_TO: usize = 0;

    /// Solves `op(A)·x = b` for one vector, overwriting `x` (a row or a
    /// column): in FP64 arithmetic whatever `A`'s precision, each entry of
    /// `A` widened exactly as it is read. The triangular solves of
    /// refinement with a single-precision factor: the FP64 solve with the
    /// widened factor, without a widened copy.
    fn trsv_wide<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        diag: Diag,
        a: View<'_, Self, T>,
        x: ViewMut<'_, Self, f64>,
    ) -> Result<()>;

    /// Unblocked Cholesky of the `uplo` triangle of the square block `a`, in
    /// place: `A = L·Lᵀ` (`Lower`) or `A = Uᵀ·U` (`Upper`); the other triangle
    /// is not touched. For the diagonal blocks of blocked factorizations.
    ///
    /// A pivot that is not positive and finite stops the block; then, if
    /// `info` (one entry) still holds 0, it becomes `offset + j + 1` for the
    /// failing column `j` — LAPACK's `INFO`, counted in the whole matrix. The
    /// failure stays on the device until `info` is read.
    fn potrf<T: Scalar>(
        &self,
        uplo: Uplo,
        a: ViewMut<'_, Self, T>,
        info: ViewMut<'_, Self, i32>,
        offset: usize,
    ) -> Result<()>;

    /// Cholesky of a panel of the `uplo` triangle: factors the `n × n`
    /// diagonal block at the top of `a` as [`Backend::potrf`] does and solves
    /// the rest of the panel with it, `L21 := A21·L11⁻ᵀ` (`Lower`, `a` is
    /// `m × n`) or `U12 := U11⁻ᵀ·A12` (`Upper`, `a` is `n × m`). A failed
    /// pivot is reported in `info` as by `potrf`; the panel is then garbage.
    ///
    /// One call instead of `potrf` and `trsm`: the GPU factors narrow panels
    /// with one kernel, off the blocked algorithm's critical path of small
    /// triangular solves.
    fn potrf_panel<T: Scalar>(
        &self,
        uplo: Uplo,
        a: ViewMut<'_, Self, T>,
        info: ViewMut<'_, Self, i32>,
        offset: usize,
    ) -> Result<()> {
        potrf_panel_by_blocks(self, uplo, a, info, offset)
    }

    // Level 1 and 2.

    /// `A := diag(d)·A`; `d` is a vector block of `A.rows` entries.
    fn scale_rows<T: Scalar>(&self, d: View<'_, Self, T>, a: ViewMut<'_, Self, T>) -> Result<()>;
    /// `A := A·diag(d)`; `d` is a vector block of `A.cols` entries.
    fn scale_cols<T: Scalar>(&self, a: ViewMut<'_, Self, T>, d: View<'_, Self, T>) -> Result<()>;
    /// `C := α·op(A) + β·op(B)` (cuBLAS `geam`): sums, differences,
    /// transposes and scalings of whole matrices.
    #[allow(clippy::too_many_arguments)]
    fn geam<T: Scalar>(
        &self,
        alpha: T,
        a: View<'_, Self, T>,
        op_a: Op,
        beta: T,
        b: View<'_, Self, T>,
        op_b: Op,
        c: ViewMut<'_, Self, T>,
    ) -> Result<()>;
    /// Copies the `uplo` triangle of the square block `a` onto the other one.
    fn symmetrize<T: Scalar>(&self, uplo: Uplo, a: ViewMut<'_, Self, T>) -> Result<()>;
    /// Sets the entries strictly inside the `uplo` triangle of `a` to `value`.
    fn fill_strict_triangle<T: Scalar>(&self, uplo: Uplo, value: T, a: ViewMut<'_, Self, T>) -> Result<()>;
    /// `a(i, j) := r(i0 + i, j0 + j)` for `origin = (i0, j0)`, `r` the
    /// random matrix of `key` ([`random::uniform`], or
    /// [`random::symmetric`] when `symmetric`), rounded to `T`: a block of
    /// one matrix, whichever device fills it.
    fn fill_random<T: Scalar>(
        &self,
        a: ViewMut<'_, Self, T>,
        origin: (usize, usize),
        key: u64,
        symmetric: bool,
    ) -> Result<()>;
    /// `Y := α·X + Y` (same shape).
    fn axpy<T: Scalar>(&self, alpha: T, x: View<'_, Self, T>, y: ViewMut<'_, Self, T>) -> Result<()>;
    /// `A := α·A`.
    fn scale<T: Scalar>(&self, alpha: T, a: ViewMut<'_, Self, T>) -> Result<()>;

    // Reductions to the host (these wait for queued work).

    /// The norm of `A`; NaN if `A` holds a NaN. Zero for an empty block.
    fn norm<T: Scalar>(&self, norm: Norm, a: View<'_, Self, T>) -> Result<T>;
    /// `max_j |aᵢⱼ|` of every row (`rows`) or `max_i |aᵢⱼ|` of every column
    /// of `A`, NaN for a line holding one: the scales of an equilibration
    /// (LAPACK's `dgeequ`).
    fn abs_maxima<T: Scalar>(&self, a: View<'_, Self, T>, rows: bool) -> Result<Vec<f64>>;
    /// Index of the first entry of largest magnitude of a vector block, a NaN
    /// counting as larger than any number (so a pivot search finds it);
    /// `None` for an empty vector.
    fn iamax<T: Scalar>(&self, x: View<'_, Self, T>) -> Result<Option<usize>>;
    /// `(row, col)` of the first non-finite entry in column-major order.
    fn find_non_finite<T: Scalar>(&self, a: View<'_, Self, T>) -> Result<Option<(usize, usize)>>;

    // Householder QR.

    /// Unblocked Householder QR of the `m × k` panel `a` (`m ≥ k`,
    /// `k ≤` [`HOUSEHOLDER_MAX_COLS`]) in place,
    /// as LAPACK's `dgeqr2` followed by `dlarft` (forward, columnwise): `R`
    /// in the upper triangle, the reflectors' vectors `vⱼ` below the diagonal
    /// (their unit first entries implicit), and in the `k × k` block `t` the
    /// upper triangular `T` of the compact WY form
    /// `Q = H₀·H₁⋯Hₖ₋₁ = I − V·T·Vᵀ`, `Hⱼ = I − τⱼ·vⱼ·vⱼᵀ`, `τⱼ = T(j, j)`
    /// (the strict lower triangle of `t` is set to zero). Reflectors follow
    /// `dlarfg`: `R(j, j) = −sign(a(j, j))·‖a(j:m, j)‖`, and `τⱼ = 0`
    /// (`Hⱼ = I`) when the column is already zero below the diagonal. The
    /// leaf of blocked QR's recursive panel.
    fn householder<T: Scalar>(&self, a: ViewMut<'_, Self, T>, t: ViewMut<'_, Self, T>) -> Result<()>;
    /// The widest leaf (at most [`HOUSEHOLDER_MAX_COLS`] columns) that
    /// [`Self::householder`] factors best for panels of `rows` rows.
    fn householder_leaf<T: Scalar>(&self, _rows: usize) -> usize {
        HOUSEHOLDER_MAX_COLS
    }
    /// `C := Hᵀ·C` (`op = Trans`) or `H·C` (`NoTrans`) for the block
    /// reflector `H = I − V·T·Vᵀ` of the `mp × kb` panel `v` (unit lower
    /// trapezoidal, as left by `householder`: its diagonal and what lies
    /// above it are not read) and its `kb × kb` upper triangular `t`; `C` is
    /// `mp × nc`. `work` holds at least `kb·nc` entries and is overwritten.
    /// LAPACK's `dlarfb` (left, forward, columnwise).
    fn larfb<T: Scalar>(
        &self,
        v: View<'_, Self, T>,
        t: View<'_, Self, T>,
        op: Op,
        c: ViewMut<'_, Self, T>,
        work: &mut Self::Buffer<T>,
    ) -> Result<()> {
        reflector::larfb_by_products(self, v, t, op, c, work)
    }

    // LU factorization: the panel and the row interchanges.

    /// Unblocked LU of the tall `m × nb` block `a` (`m ≥ nb`) in place:
    /// `P·A = L·U` with `L` unit lower (`m × nb`) below the diagonal and `U`
    /// on and above it, as LAPACK's `dgetf2`. Pivot `j` goes to entry `j` of
    /// the vector `ipiv` (`nb` entries) as `offset + p + 1`: the 1-based row
    /// of the whole matrix, whose row `offset` is the panel's top row. With
    /// [`Pivoting::Partial`] the pivot is the entry of largest magnitude in
    /// its column (the first one on ties, a NaN winning); with
    /// [`Pivoting::None`] rows are not exchanged (`ipiv[j] = offset + j + 1`).
    ///
    /// A zero pivot (or, unpivoted, one of magnitude `≤ tol`) is not divided
    /// by; then, if `info` (one entry) still holds 0, it becomes
    /// `offset + j + 1` and the factorization goes on, as `dgetrf` does. The
    /// failure stays on the device until `info` is read.
    fn getrf_panel<T: Scalar>(
        &self,
        a: ViewMut<'_, Self, T>,
        ipiv: ViewMut<'_, Self, i32>,
        info: ViewMut<'_, Self, i32>,
        offset: usize,
        pivoting: Pivoting,
    ) -> Result<()>;

    /// [`Backend::getrf_panel`] on columns `cols` of `a` (all of its rows),
    /// with the panel's row interchanges applied to `a`'s other columns too:
    /// `getrf_panel` followed by [`Backend::laswp`] on the columns left and
    /// right of it, which a GPU does in one pass. The leaf step of the
    /// blocked LU, `a` being the rows of the block column from the leaf's
    /// top row down.
    fn getrf_leaf<T: Scalar>(
        &self,
        a: ViewMut<'_, Self, T>,
        cols: std::ops::Range<usize>,
        ipiv: ViewMut<'_, Self, i32>,
        info: ViewMut<'_, Self, i32>,
        offset: usize,
        pivoting: Pivoting,
    ) -> Result<()> {
        getrf_leaf_by_parts(self, a, cols, ipiv, info, offset, pivoting)
    }

    /// Row interchanges (`dlaswp`) on every column of `a`: for `i` in
    /// `0..len(ipiv)` (or in reverse order when `reverse`), rows `i` and
    /// `ipiv[i] − 1 − shift` of `a` are exchanged; `shift` is the row of the
    /// whole matrix that `a`'s top row is, so that `ipiv` holds 1-based rows
    /// of the whole matrix as [`Backend::getrf_panel`] writes them. A pivot
    /// outside `a` is skipped (it cannot come from `getrf_panel`).
    fn laswp<T: Scalar>(
        &self,
        a: ViewMut<'_, Self, T>,
        ipiv: View<'_, Self, i32>,
        shift: usize,
        reverse: bool,
    ) -> Result<()>;

    /// `B := P·B` for the permutation `perm` of `B`'s rows (0-based): row
    /// `i` of the result is row `perm[i]` of `B`, or with `inverse`, row
    /// `perm[i]` of the result is row `i` of `B`. One pass, where
    /// [`laswp`](Self::laswp) follows the interchanges one after another:
    /// for solves repeated on single vectors with one LU factor
    /// ([`lu::permutation`](crate::factor::lu::permutation) forms its
    /// rows' permutation once). `perm` must be a permutation: the CPU
    /// refuses anything else; a GPU fills a row whose index lies outside `B`
    /// with NaN (skips it with `inverse`) and does not look for repeats.
    fn permute_rows<T: Scalar>(&self, perm: View<'_, Self, i32>, inverse: bool, b: ViewMut<'_, Self, T>) -> Result<()>;
    /// `A := op(U)·A·V` for the random butterflies
    /// ([`butterfly`](crate::backend::butterfly)) `U` of order `A.rows` and
    /// key `left.0`, `op = left.1`, and `V` of order `A.cols` and key
    /// `right`; a side given `None` is not transformed. Each entry is
    /// formed in FP64 from at most 16 and rounded to `T` once.
    fn butterfly<T: Scalar>(&self, left: Option<(u64, Op)>, right: Option<u64>, a: ViewMut<'_, Self, T>) -> Result<()>;

    // Symmetric indefinite LDLᵀ: the trailing update, the panel and `D`.

    /// `C := α·op(A)·op(B)ᵀ + β·C` on the `uplo` triangle of `C` only
    /// (cuBLAS `syrkx`), for a product known to be symmetric such as
    /// `L·(D·Lᵀ)`: `op = NoTrans` takes `A·Bᵀ`, `Trans` takes `Aᵀ·B`.
    #[allow(clippy::too_many_arguments)]
    fn syrkx<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        alpha: T,
        a: View<'_, Self, T>,
        b: View<'_, Self, T>,
        beta: T,
        c: ViewMut<'_, Self, T>,
    ) -> Result<()>;

    /// LDLᵀ of block column `k..k + panel.nb` of the symmetric matrix whose
    /// lower triangle `tri` locates in `a` (LAPACK's `dlasyf_rk`, lower):
    /// columns `0..k` hold `L` and `D` already, and the trailing matrix
    /// (rows and columns from `k`) has every earlier panel's update. The
    /// panel's columns are factored in order, with Bunch–Kaufman pivots
    /// (1×1 or 2×2) or none, and the rest of the trailing matrix is left for
    /// the caller to update with the panel's `L` and `W = L·D`.
    ///
    /// Columns are factored until at least `nb` are; the last pivot may be
    /// 2×2 and take column `k + nb` too, if there is one. `info[1]` receives
    /// the number `jb` of columns factored (`nb` or `nb + 1`).
    ///
    /// On return, in `a`: the factored columns hold `L` strictly below the
    /// diagonal (0 at `(j + 1, j)` of a 2×2 block) and `D`'s diagonal on it;
    /// rows and columns interchanged by the pivots are interchanged in the
    /// trailing matrix and in every column left of the pivot. `ipiv[j]`
    /// (1-based rows of the whole matrix) records the interchange of rows
    /// `j` and `ipiv[j] − 1` made at step `j`, in order, as `laswp` applies
    /// them; `d[j]` is `D(j, j)` and `e[j]` is `D(j + 1, j)`, nonzero exactly
    /// at the first column of a 2×2 block. `panel.l` and `panel.w` (rows
    /// `k..n`) receive `L` (with its unit diagonal) and `W = L·D`.
    ///
    /// A column that is zero (Bunch–Kaufman) or whose pivot has magnitude
    /// `≤ tol` (unpivoted) is a zero pivot: it is not divided by, its `L`
    /// column is zero, and `info[0]`, if still 0, becomes its 1-based
    /// column. The factorization goes on, as `dsytrf` does.
    fn sytrf_panel<T: Scalar>(
        &self,
        a: &BufferMut<'_, Self, T>,
        tri: &Triangle,
        k: usize,
        panel: SymPanel<'_, Self, T>,
        pivoting: SymPivoting,
    ) -> Result<()>;

    /// One panel of Aasen's factorization `P·A·Pᵀ = L·T·Lᵀ`, `T` symmetric
    /// tridiagonal and `L` unit lower triangular with `L(:, 0) = e₀`
    /// (Aasen 1971, blocked as Rozložník, Shklarski and Toledo 2011): steps
    /// `j = k..k + nb` of the column recurrence on the lower triangle that
    /// `tri` locates in `a`, whose trailing matrix (rows and columns from
    /// `k`) holds `A − Σ_{i,j<k} L(:,i)·T(i,j)·L(:,j)ᵀ` in the order the
    /// earlier panels' interchanges left it. `a` is only read.
    ///
    /// The pivot of step `j` is the row of largest magnitude in the part of
    /// column `j + 1` of `L` still to be scaled, over the rows not yet
    /// chosen (the first such row of the matrix on ties). Rows keep their
    /// places during the panel; [`Backend::aasen_interchange`] moves them
    /// after it. `d[k..k + nb]` receives `T`'s diagonal and `e[j]` (`j <
    /// n − 1`) its subdiagonal `T(j + 1, j)`; `e[k − 1]` is read.
    fn aasen_panel<T: Scalar>(
        &self,
        a: &BufferMut<'_, Self, T>,
        tri: &Triangle,
        k: usize,
        panel: AasenPanel<'_, Self, T>,
    ) -> Result<()>;

    /// Moves the rows and columns of an [`Backend::aasen_panel`]'s pivots
    /// into place: records them in `ipiv` (1-based, at `k + 1..=k + nb`,
    /// applied in order as `laswp` does; `ipiv[0] = 1` when `k = 0`),
    /// interchanges the rows of `L` left of the panel and the rows and
    /// columns of the trailing matrix from `k + nb`, writes the panel's
    /// columns `k..k + nb` of `L` below the diagonal of `a` and `T`'s
    /// diagonal on it, and, for the rows from `k + nb` in their new order,
    /// `x` (`(n − k − nb) × (nb + 2)`) receives `L(:, k − 1..=k + nb)` and
    /// `y` (`(n − k − nb) × (nb + 1)`) the panel's `Y`: the trailing update
    /// is then `A₂₂ −= x[:, ..=nb]·yᵀ` on its lower triangle.
    #[allow(clippy::too_many_arguments)]
    fn aasen_interchange<T: Scalar>(
        &self,
        a: &BufferMut<'_, Self, T>,
        tri: &Triangle,
        k: usize,
        panel: AasenPanel<'_, Self, T>,
        ipiv: ViewMut<'_, Self, i32>,
        x: ViewMut<'_, Self, T>,
        y: ViewMut<'_, Self, T>,
    ) -> Result<()>;

    /// LDLᵀ without pivoting of a panel of the `uplo` triangle, as
    /// [`Backend::potrf_panel`] is Cholesky's: the `n × n` diagonal block at
    /// the top of `a` (`Lower`: `m × n`; `Upper`: `n × m`, holding `Lᵀ`)
    /// becomes `L₁₁` (unit, not stored) below its diagonal and `D` on it,
    /// and the rest of the panel `L₂₁ = A₂₁·L₁₁⁻ᵀ·D⁻¹`. `d` (`n` entries)
    /// receives `D`, and `w` (`(m − n) × n`, or its transpose for `Upper`)
    /// receives `W₂₁ = L₂₁·D` for the trailing updates `C −= L·Wᵀ`.
    ///
    /// A pivot of magnitude `≤ tol`, or not finite, is not divided by: its
    /// column of `L` is zero, and `info`, if still 0, becomes its 1-based
    /// column counted from `offset`. The factorization goes on.
    #[allow(clippy::too_many_arguments)]
    fn ldlt_panel<T: Scalar>(
        &self,
        uplo: Uplo,
        a: ViewMut<'_, Self, T>,
        w: ViewMut<'_, Self, T>,
        d: ViewMut<'_, Self, T>,
        info: ViewMut<'_, Self, i32>,
        offset: usize,
        tol: f64,
    ) -> Result<()>;

    /// Solves independent tridiagonal systems `T_s·x_s = b_s` of order `m`,
    /// one per column of the blocks (`SystemLayout::Columns`, `m × count`)
    /// or per row (`Rows`, `count × m`); the four blocks have one shape.
    /// `dl` holds the subdiagonals (entry `i` is `T(i, i − 1)`; entry 0 is
    /// not read), `d` the diagonals and `du` the superdiagonals (`T(i, i +
    /// 1)`; entry `m − 1` is not read). Without `pivoting` (Thomas's
    /// elimination) for diagonally dominant and symmetric positive definite
    /// systems; with it, partial pivoting as LAPACK's `dgtsv`, for any. `b`
    /// becomes `x`; `dl`, `d`, `du` are overwritten.
    ///
    /// `info` (a vector of `count` entries) receives each system's status:
    /// 0; `k > 0` when the pivot of row `k − 1` is zero or not finite (that
    /// system's `x` is NaN, the others are solved); `−k` when `x(k − 1)` came
    /// out not finite (NaN or infinity in `b`, or overflow).
    fn tridiagonal_solve<T: Scalar>(
        &self,
        layout: SystemLayout,
        pivoting: bool,
        tridiagonal: (ViewMut<'_, Self, T>, ViewMut<'_, Self, T>, ViewMut<'_, Self, T>),
        b: ViewMut<'_, Self, T>,
        info: ViewMut<'_, Self, i32>,
    ) -> Result<()>;

    // The semi-implicit shallow-water scheme of Casulli (1990), in the
    // coordinates of a sweep (`backend/shallow_water.rs`): `a` along the
    // lines, `c` across, `na × nc` cells.

    /// The Eulerian–Lagrangian convection of the sweep's normal velocity
    /// `w` (Casulli 1990): at each interior normal face, the streamline
    /// through it traced back one step `dt` with the velocity there
    /// (`w`, and the mean of the four tangential velocities around the
    /// face) held constant, and `f := w` at its foot by bilinear
    /// interpolation in `w`'s grid (the foot clamped into the grid). `f`
    /// is 0 on the walls `a = 0` and `a = na`.
    fn eulerian_lagrangian(
        &self,
        sweep: Sweep,
        p: &Stepping,
        normal: View<'_, Self, f64>,
        tangential: View<'_, Self, f64>,
        f: ViewMut<'_, Self, f64>,
    ) -> Result<()>;

    /// The tridiagonal systems of a half step (Casulli 1990, eq. 5.5 of
    /// the ADI form), one per line `c` of cells, for the new surface `z`:
    /// `−μ·α₋·z(a−1) + (1 + μ·(α₋ + α₊))·z(a) − μ·α₊·z(a+1) = rhs(a)`,
    /// `μ = g·dt²/(2·Δa²)`, with `α = H/(1 + dt·γ)` on the normal faces
    /// (`H` the mean total depth `h + z` of the two cells, `γ` Chézy's
    /// friction `g·|w|/(C²·H)`; `α = 0` on the walls) and
    /// `rhs = z − dt/(2Δa)·δa(α·f) − dt/(2Δc)·δc(β·t)`, `β` the mean depth
    /// on the tangential faces (0 on the walls) and `t` the tangential
    /// velocity. `r` receives `1/(1 + dt·γ)` on the normal faces (0 on
    /// the walls) for [`Backend::adi_velocity`]. The systems lie in the
    /// cells' grid: one per column (`X`) or per row (`Y`).
    fn adi_assemble(
        &self,
        sweep: Sweep,
        p: &Stepping,
        fields: AdiFields<'_, Self>,
        tridiagonal: (ViewMut<'_, Self, f64>, ViewMut<'_, Self, f64>, ViewMut<'_, Self, f64>),
        rhs: ViewMut<'_, Self, f64>,
        r: ViewMut<'_, Self, f64>,
    ) -> Result<()>;

    /// The new normal velocity from the new surface `z` (eq. 5.3):
    /// `w := r·(f − g·dt/Δa·δa z)` on the interior normal faces, 0 on the
    /// walls.
    fn adi_velocity(
        &self,
        sweep: Sweep,
        p: &Stepping,
        z: View<'_, Self, f64>,
        f: View<'_, Self, f64>,
        r: View<'_, Self, f64>,
        normal: ViewMut<'_, Self, f64>,
    ) -> Result<()>;

    /// `B := D⁻¹·B` for the block diagonal `D` of an LDLᵀ factorization:
    /// `d` its diagonal and `e` its subdiagonal (vector blocks of `B.rows`
    /// entries; `e[j] ≠ 0` marks the 2×2 block at rows `j, j + 1`). 2×2
    /// blocks are solved in the scaled form of LAPACK's `dsytrs`. A zero
    /// pivot gives infinities: callers refuse singular factors first.
    fn block_diagonal_solve<T: Scalar>(
        &self,
        d: View<'_, Self, T>,
        e: View<'_, Self, T>,
        b: ViewMut<'_, Self, T>,
    ) -> Result<()>;

    // Batches of small matrices: each step of a blocked factorization on
    // the same block of every member at once (`Strided` operands).

    /// [`Backend::getrf_panel`] with partial pivoting on every member: `ipiv`
    /// a vector block and `info` one entry of each member.
    fn batched_getrf_panel<T: Scalar>(
        &self,
        a: StridedMut<'_, Self, T>,
        ipiv: StridedMut<'_, Self, i32>,
        info: StridedMut<'_, Self, i32>,
        offset: usize,
    ) -> Result<()>;

    /// [`Backend::potrf_panel`] of the lower triangle on every member: `a` is
    /// a block column of each member (all its rows, `nb` columns), the panel
    /// its rows `offset..` (the diagonal block on top), `info` one entry of
    /// each member. Rows `0..offset` of `a` and the strict upper triangle of
    /// the diagonal block are set to zero, so that a blocked factorization
    /// whose updates write whole blocks leaves `L` alone in its array.
    fn batched_potrf_panel<T: Scalar>(
        &self,
        a: StridedMut<'_, Self, T>,
        info: StridedMut<'_, Self, i32>,
        offset: usize,
    ) -> Result<()>;

    /// [`Backend::laswp`] on every member.
    fn batched_laswp<T: Scalar>(
        &self,
        a: StridedMut<'_, Self, T>,
        ipiv: Strided<'_, Self, i32>,
        shift: usize,
        reverse: bool,
    ) -> Result<()>;

    /// [`Backend::trsm`] on the left with `α = 1` on every member:
    /// `B := op(A)⁻¹·B`.
    fn batched_trsm<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        diag: Diag,
        a: Strided<'_, Self, T>,
        b: StridedMut<'_, Self, T>,
    ) -> Result<()>;

    /// `B := A⁻¹·B` on every member from its LU factors as
    /// [`Backend::batched_getrf_panel`] leaves them for a whole member
    /// (`lu` square, `ipiv` a vector block of each member): the
    /// interchanges, then `L` (unit) and `U` forward and back — LAPACK's
    /// `dgetrs`. For members small enough to be one diagonal block of the
    /// blocked solve, which a GPU does in one pass.
    fn batched_getrs<T: Scalar>(
        &self,
        lu: Strided<'_, Self, T>,
        ipiv: Strided<'_, Self, i32>,
        b: StridedMut<'_, Self, T>,
    ) -> Result<()>;

    /// [`Backend::gemm`] on every member.
    #[allow(clippy::too_many_arguments)]
    fn batched_gemm<T: Scalar>(
        &self,
        alpha: T,
        a: Strided<'_, Self, T>,
        op_a: Op,
        b: Strided<'_, Self, T>,
        op_b: Op,
        beta: T,
        c: StridedMut<'_, Self, T>,
    ) -> Result<()>;

    // Scaled Gram matrices A·D²·Aᵀ (weighted least squares).

    /// `C := α·A·diag(d)²·Aᵀ + β·C` on the `uplo` triangle of `C` only (the
    /// other one is neither read nor written), for `A` of `n × k` and `d` a
    /// vector block of `k` entries. `A` is not modified and no scaled copy
    /// of all of it is made: a backend scales a block of rows (GPU) or of
    /// columns (CPU) at a time into a small workspace. As in BLAS, `α = 0`
    /// or `k = 0` gives `β·C` without reading `A`, and `β = 0` does not
    /// read `C`.
    fn scaled_syrk<T: Scalar>(
        &self,
        uplo: Uplo,
        alpha: T,
        a: View<'_, Self, T>,
        d: View<'_, Self, T>,
        beta: T,
        c: ViewMut<'_, Self, T>,
    ) -> Result<()>;

    /// `C := α·A·diag(d)²·Bᵀ + β·C` for `A` of `m × k`, `B` of `n × k` and
    /// `d` a vector block of `k` entries: the off-diagonal blocks of a
    /// scaled Gram matrix (the rectangle of RFP storage).
    #[allow(clippy::too_many_arguments)]
    fn scaled_gemm<T: Scalar>(
        &self,
        alpha: T,
        a: View<'_, Self, T>,
        b: View<'_, Self, T>,
        d: View<'_, Self, T>,
        beta: T,
        c: ViewMut<'_, Self, T>,
    ) -> Result<()>;

    // Mixed precision weighted least squares.

    /// `C := A·diag(d)²·Aᵀ`, all of the symmetric `n × n` block `C`, in `f32`
    /// from FP64 `A` (`n × k`) and `d` (`k` entries): the normal matrix that
    /// a low-precision factorization needs, to about single precision (each
    /// entry within `2·(k + 16)·u₃₂·(|A|·D²·|A|ᵀ)ᵢⱼ + 2⁻³⁶·k·Rᵢ·Rⱼ`, `Rᵢ` the
    /// largest `|aᵢₚ·dₚ|` of row `i`). No scaled copy of `A` is made. The
    /// CUDA backend splits panels of `A·D` into pairs of half-precision
    /// numbers and takes three products on the tensor cores
    /// (`kernels/split.cu`; TF32 with `GPUMAT_SPLIT=tf32`); the CPU backend
    /// rounds the FP64 product.
    fn scaled_syrk_f32(&self, a: View<'_, Self, f64>, d: View<'_, Self, f64>, c: ViewMut<'_, Self, f32>) -> Result<()>;

    /// `r := A·diag(d)²·(b − Aᵀ·x)` for `A` of `m × n`, `d` and `b` vectors
    /// of `n` entries and `x`, `r` of `m`: the residual of the normal
    /// equations `A·D²·Aᵀ·x = A·D²·b` without forming `A·D²·Aᵀ`. Every sum is
    /// taken in double-double and rounded once, so `r` is accurate to about
    /// `u·|r| + u²·|A|·D²·(|b| + |Aᵀ|·|x|)` even when it is the small
    /// difference of large terms, as it is near a solution.
    fn weighted_residual(
        &self,
        a: View<'_, Self, f64>,
        d: View<'_, Self, f64>,
        b: View<'_, Self, f64>,
        x: View<'_, Self, f64>,
        r: ViewMut<'_, Self, f64>,
    ) -> Result<()>;
}

/// How [`Backend::getrf_panel`] chooses its pivots.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pivoting {
    /// Partial pivoting: the largest entry of the column.
    Partial,
    /// No row exchanges: for matrices known to be safe (diagonally dominant,
    /// symmetric positive definite). A pivot of magnitude `≤ tol` fails.
    None { tol: f64 },
}

/// How [`Backend::sytrf_panel`] chooses its pivots.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SymPivoting {
    /// Bunch–Kaufman (Bunch and Kaufman 1977): a 1×1 or 2×2 pivot from the
    /// column and, when its diagonal entry is small, from the row of its
    /// largest entry, with `α = (1 + √17)/8`; growth is bounded by
    /// `(2.57)ⁿ⁻¹` and the factorization is backward stable.
    BunchKaufman,
    /// No interchanges and 1×1 pivots only: for matrices known to allow it
    /// (quasi-definite, diagonally dominant). A pivot of magnitude `≤ tol`
    /// is a zero pivot.
    None { tol: f64 },
}

/// The workspace and outputs of one [`Backend::sytrf_panel`] call.
pub struct SymPanel<'a, B: Backend, T: Scalar> {
    /// Columns to factor (one more when the last pivot is 2×2).
    pub nb: usize,
    /// At least `(n − k) × (nb + 1)`: receives `L` of the panel's columns,
    /// row `r` being row `k + r` of the matrix.
    pub l: ViewMut<'a, B, T>,
    /// The same shape: receives `W = L·D` of the panel's columns.
    pub w: ViewMut<'a, B, T>,
    /// Vectors of `n` entries, written at `k..k + jb`.
    pub ipiv: ViewMut<'a, B, i32>,
    pub d: ViewMut<'a, B, T>,
    pub e: ViewMut<'a, B, T>,
    /// Two entries: the first zero pivot (1-based, 0 if none yet; kept if
    /// already set) and the number of columns factored.
    pub info: ViewMut<'a, B, i32>,
}

/// The workspaces and outputs of one [`Backend::aasen_panel`] step; rows
/// `r` of `l` and `y` stand for row `k + r` of the matrix, in its order at
/// the panel's start.
pub struct AasenPanel<'a, B: Backend, T: Scalar> {
    /// Columns of `T` to factor: `1 ≤ nb ≤ n − k`.
    pub nb: usize,
    /// `(n − k) × (nb + 2)`: columns 0 and 1 hold `L(:, k − 1)` (zero when
    /// `k = 0`) and `L(:, k)` (`e₀` when `k = 0`); column `1 + t` receives
    /// `L(:, k + t)`, the last only when `k + nb < n`.
    pub l: ViewMut<'a, B, T>,
    /// `(n − k) × (nb + 1)`: receives `Y = L(:, Q)·T'` for `Q = k − 1..k +
    /// nb`, `T'` the part of `T` on `Q × Q` without `T(k − 1, k − 1)`.
    pub y: ViewMut<'a, B, T>,
    /// `nb` entries: the row of the matrix chosen at each step.
    pub rows: ViewMut<'a, B, i32>,
    /// Vectors of `n` entries.
    pub d: ViewMut<'a, B, T>,
    pub e: ViewMut<'a, B, T>,
}

impl<B: Backend, T: Scalar> AasenPanel<'_, B, T> {
    pub fn rb_mut(&mut self) -> AasenPanel<'_, B, T> {
        AasenPanel {
            nb: self.nb,
            l: self.l.rb_mut(),
            y: self.y.rb_mut(),
            rows: self.rows.rb_mut(),
            d: self.d.rb_mut(),
            e: self.e.rb_mut(),
        }
    }
}

/// [`Backend::getrf_leaf`] as `getrf_panel` on the leaf's columns, then
/// `laswp` on the columns left and right of them.
pub fn getrf_leaf_by_parts<B: Backend, T: Scalar>(
    be: &B,
    a: ViewMut<'_, B, T>,
    cols: std::ops::Range<usize>,
    mut ipiv: ViewMut<'_, B, i32>,
    info: ViewMut<'_, B, i32>,
    offset: usize,
    pivoting: Pivoting,
) -> Result<()> {
    let (left, rest) = check::getrf_leaf(a, &cols)?.split_at_col(cols.start)?;
    let (panel, right) = rest.split_at_col(cols.len())?;
    be.getrf_panel(panel, ipiv.rb_mut(), info, offset, pivoting)?;
    if pivoting == Pivoting::Partial {
        for side in [left, right] {
            if side.cols() > 0 {
                be.laswp(side, ipiv.rb(), offset, false)?;
            }
        }
    }
    Ok(())
}
