//! `A·diag(d)²·Aᵀ` and `A·diag(d)²·Bᵀ` on the GPU without a scaled copy of
//! `A`.
//!
//! `C` (`n × n`, one triangle) is computed by block columns of `nb` columns:
//! for block column `j`, cuBLAS `dgmm` scales the `nb` rows `A_j` by `d²`
//! into a workspace `W = A_j·D²` (`nb × k`, a few percent of `A`), `syrkx`
//! forms the triangle of the diagonal block `A_j·Wᵀ` (never writing across
//! the diagonal: RFP pieces share their rectangle), and one `gemm` of full
//! depth `k` forms the rest of the block column, `A[j+nb:n, :]·Wᵀ` (lower)
//! or `A[0:j, :]·Wᵀ` (upper). Almost all the work is in large `gemm`s and
//! every entry of `C` is written once. Block columns alternate between this
//! queue and the side queue, each with its own workspace, so that the
//! scaling of one overlaps the `gemm` of the other and the short `gemm`s at
//! the end of the triangle run two at a time.
//!
//! `scaled_gemm` (`C = A·D²·Bᵀ`, the RFP rectangle) is the same without
//! the diagonal blocks: `W = B_j·D²`, `C[:, j-block] = A·Wᵀ`.
//!
//! When the workspace for full depth would be large next to `A` (few rows,
//! very many columns: data fits of few parameters), the depth is taken in
//! chunks of `kc` and a block column is accumulated with `β = 1` after its
//! first chunk; the same block column always stays on the same queue.
//!
//! [`GramTuning`] (block width, depth per chunk, queues) overrides the
//! defaults of [`GramPlan::new`], for benchmarks.

use cudarc::cublas::sys::{self, cublasSideMode_t};

use super::{Cuda, CudaBuffer, blas, raw, raw_mut};
use crate::backend::tuning::{GramTuning, Split, SplitTuning};
use crate::backend::{Backend, Op, View, ViewMut, check};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// How a scaled Gram product is cut: block columns of `nb`, chunks of `kc`
/// of the depth, on `streams` queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GramPlan {
    pub nb: usize,
    pub kc: usize,
    pub streams: usize,
    /// The depth `k` (for the size of `d²`).
    pub k: usize,
}

impl GramPlan {
    /// The plan for block columns taken from `rows` rows of depth `k`:
    /// `nb = rows/16` rounded down to a multiple of 64 within 256..=1024
    /// (wide `gemm`s; 1024 was fastest at 16384 × 32768 on an H100); full
    /// depth (`kc = k`) while a workspace fits in `max(rows·k/32, 2²⁰)`
    /// entries, about 3 % of the operand; a second queue, and workspace,
    /// below 16384 rows, where one queue's `gemm`s leave the GPU idle at the
    /// tail (5–10 % faster at 8192 × 16384; no gain at 16384 × 32768).
    pub fn new(rows: usize, k: usize, tuning: &GramTuning) -> GramPlan {
        let nb = tuning.nb.unwrap_or((rows / 16 / 64 * 64).clamp(256, 1024));
        let nb = nb.clamp(1, rows.max(1));
        let budget = (rows.saturating_mul(k) / 32).max(1 << 20);
        let kc = tuning.kc.unwrap_or(budget / nb).clamp(1, k.max(1));
        let panels = rows.div_ceil(nb).max(1);
        let queues = if rows < 16384 { 2 } else { 1 };
        let streams = tuning.streams.unwrap_or(queues).clamp(1, 2).min(panels);
        GramPlan { nb, kc, streams, k }
    }

    /// Device memory taken beyond the operands and the result: one `nb × kc`
    /// workspace per queue and the `k` entries of `d²`.
    pub fn workspace_bytes(&self, elem_size: usize) -> usize {
        (self.streams * self.nb * self.kc + self.k) * elem_size
    }
}

/// `C := X·diag(x)` for the `rows × cols` block `X` (cuBLAS `dgmm`; `C` may
/// be `X` itself with the same leading dimension).
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn dgmm<T: Scalar>(
    h: sys::cublasHandle_t,
    (rows, cols): (i32, i32),
    (x, ldx): (u64, i32),
    (d, incd): (u64, i32),
    (c, ldc): (u64, i32),
) -> Result<()> {
    let side = cublasSideMode_t::CUBLAS_SIDE_RIGHT;
    // SAFETY: the caller passes device blocks of these shapes of element type `T`.
    let s = unsafe {
        if T::NAME == "f64" {
            sys::cublasDdgmm(h, side, rows, cols, x as _, ldx, d as _, incd, c as _, ldc)
        } else {
            sys::cublasSdgmm(h, side, rows, cols, x as _, ldx, d as _, incd, c as _, ldc)
        }
    };
    blas::status("dgmm", s)
}

/// `C := α·A·Bᵀ + β·C` on the `uplo` triangle of the `n × n` block `C`
/// (cuBLAS `syrkx`: `A·Bᵀ` must be symmetric, as `A_j·(A_j·D²)ᵀ` is).
#[allow(clippy::too_many_arguments)]
unsafe fn syrkx<T: Scalar>(
    h: sys::cublasHandle_t,
    uplo: Uplo,
    (n, k): (i32, i32),
    alpha: T,
    (a, lda): (u64, i32),
    (b, ldb): (u64, i32),
    beta: T,
    (c, ldc): (u64, i32),
) -> Result<()> {
    let (al, be) = (&alpha as *const T, &beta as *const T);
    let (fill, op) = (blas::fill(uplo), blas::op(Op::NoTrans));
    // SAFETY: the caller passes device blocks of these shapes of element type `T`.
    let s = unsafe {
        if T::NAME == "f64" {
            sys::cublasDsyrkx(h, fill, op, n, k, al as _, a as _, lda, b as _, ldb, be as _, c as _, ldc)
        } else {
            sys::cublasSsyrkx(h, fill, op, n, k, al as _, a as _, lda, b as _, ldb, be as _, c as _, ldc)
        }
    };
    blas::status("syrkx", s)
}

/// A block of device memory: address of `(0, 0)` and leading dimension.
#[derive(Clone, Copy)]
struct Dev {
    ptr: u64,
    ld: usize,
}

impl Dev {
    /// Address of entry `(i, j)` for elements of `size` bytes.
    fn at(self, i: usize, j: usize, size: usize) -> u64 {
        self.ptr + ((i + j * self.ld) * size) as u64
    }
}

/// What one block column needs: the rows scaled into the workspace and the
/// block of the result they produce.
struct Panel {
    /// First row of the scaled operand (= first column of `C`'s block).
    j: usize,
    jb: usize,
}

impl Cuda {
    /// `d²` into a fresh vector of `k` entries (`dgmm` of `d` as a `1 × k`
    /// row by itself), so each panel is scaled in one pass.
    fn weights_squared<T: Scalar>(&self, d: &View<'_, Cuda, T>, k: usize) -> Result<CudaBuffer<T>> {
        let d2 = self.buffer::<T>(k, false)?;
        let db = d.block();
        let incd = if db.cols == 1 { 1 } else { db.ld };
        let dim = |v| blas::dim("scaled_gram", v);
        // SAFETY: `d` is a vector block of k entries with stride incd (checked);
        // d2 holds k entries.
        unsafe {
            dgmm::<T>(*self.blas.handle(), (1, dim(k)?), (raw(d), dim(incd)?), (raw(d), dim(incd)?), (d2.ptr, 1))?;
        }
        Ok(d2)
    }

    /// Runs `panel(queue, workspace, p)` for `p` in `0..count`, block column
    /// `p` on queue `p % streams` with that queue's workspace. The side
    /// queue starts after what this queue has enqueued, and this queue
    /// resumes after the side queue's share — also on failure, so that the
    /// workspaces (freed on this queue) outlive their last use.
    fn on_queues<T: Scalar>(
        &self,
        streams: usize,
        count: usize,
        workspaces: &[CudaBuffer<T>],
        mut panel: impl FnMut(&Cuda, &CudaBuffer<T>, usize) -> Result<()>,
    ) -> Result<()> {
        if streams == 1 {
            return (0..count).try_for_each(|p| panel(self, &workspaces[0], p));
        }
        let side = self.side()?;
        side.wait_for(self)?;
        let queues = [self, side];
        let run = (0..count).try_for_each(|p| panel(queues[p % 2], &workspaces[p % 2], p));
        let joined = self.wait_for(side);
        run.and(joined)
    }

    /// Workspaces of `nb × kc` entries, one per queue.
    fn workspaces<T: Scalar>(&self, plan: &GramPlan) -> Result<Vec<CudaBuffer<T>>> {
        (0..plan.streams).map(|_| self.buffer::<T>(plan.nb * plan.kc, false)).collect()
    }

    /// The scaled product by block columns: for each panel of `nb` rows of
    /// `x` (of `n`) and each chunk `(c0, cols)` of the depth `k`, the panel
    /// scaled by `d²` into its queue's workspace `w`, then `product(queue,
    /// panel, (c0, cols), w, β)` with the caller's `β` on the first chunk
    /// and 1 after, so the chunks accumulate. The plan comes from the
    /// tuning; a panel stays on one queue for all its chunks.
    fn by_panels<T: Scalar>(
        &self,
        (n, k): (usize, usize),
        x: Dev,
        d: &View<'_, Cuda, T>,
        beta: T,
        mut product: impl FnMut(&Cuda, &Panel, (usize, usize), &CudaBuffer<T>, T) -> Result<()>,
    ) -> Result<()> {
        let plan = GramPlan::new(n, k, &self.tuning().gram);
        let d2 = self.weights_squared(d, k)?;
        let ws = self.workspaces::<T>(&plan)?;
        self.on_queues(plan.streams, n.div_ceil(plan.nb), &ws, |q, w, p| {
            let j = p * plan.nb;
            let panel = Panel { j, jb: plan.nb.min(n - j) };
            for c0 in (0..k).step_by(plan.kc) {
                let cols = plan.kc.min(k - c0);
                q.scale_panel(x, &d2, &panel, (c0, cols), w)?;
                product(q, &panel, (c0, cols), w, if c0 == 0 { beta } else { T::ONE })?;
            }
            Ok(())
        })
    }

    /// `W := X[j:j+jb, c0:c0+cols]·diag(d²[c0:c0+cols])` into the dense
    /// `jb × cols` workspace `w`.
    #[allow(clippy::too_many_arguments)]
    fn scale_panel<T: Scalar>(
        &self,
        x: Dev,
        d2: &CudaBuffer<T>,
        p: &Panel,
        (c0, cols): (usize, usize),
        w: &CudaBuffer<T>,
    ) -> Result<()> {
        let size = size_of::<T>();
        let dim = |v| blas::dim("scaled_gram", v);
        // SAFETY: a sub-block of the checked operand; `w` holds nb·kc ≥ jb·cols
        // entries; d2 holds k entries.
        unsafe {
            dgmm::<T>(
                *self.blas.handle(),
                (dim(p.jb)?, dim(cols)?),
                (x.at(p.j, c0, size), dim(x.ld)?),
                (d2.ptr + (c0 * size) as u64, 1),
                (w.ptr, dim(p.jb)?),
            )
        }
    }

    pub(super) fn scaled_syrk_impl<T: Scalar>(
        &self,
        uplo: Uplo,
        alpha: T,
        a: View<'_, Cuda, T>,
        d: View<'_, Cuda, T>,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        check::scaled_syrk(uplo, &a, &d, &c)?;
        let (n, k) = (a.rows(), a.cols());
        if n == 0 {
            return Ok(());
        }
        if k == 0 || alpha == T::ZERO {
            // C := β·C on the triangle without reading A (cuBLAS: k = 0).
            return Backend::syrk(self, uplo, Op::NoTrans, alpha, a.sub(0, 0, n, 0)?, beta, c);
        }
        let size = size_of::<T>();
        let av = Dev { ptr: raw(&a), ld: a.block().ld };
        let cv = Dev { ptr: raw_mut(&c), ld: c.block().ld };
        let dim = |v| blas::dim("scaled_syrk", v);
        let (ld_a, ld_c) = (dim(av.ld)?, dim(cv.ld)?);
        self.by_panels((n, k), av, &d, beta, |q, panel, (c0, cols), w, beta| {
            let (j, jb) = (panel.j, dim(panel.jb)?);
            let h = *q.blas.handle();
            // SAFETY: sub-blocks of the checked operands; W is jb × cols, ld jb.
            unsafe {
                syrkx(
                    h,
                    uplo,
                    (jb, dim(cols)?),
                    alpha,
                    (av.at(j, c0, size), ld_a),
                    (w.ptr, jb),
                    beta,
                    (cv.at(j, j, size), ld_c),
                )?;
                // The rest of the block column, below (lower) or above (upper).
                let (r0, rows) = match uplo {
                    Uplo::Lower => (j + panel.jb, n - j - panel.jb),
                    Uplo::Upper => (0, j),
                };
                if rows > 0 {
                    blas::gemm(
                        h,
                        (Op::NoTrans, Op::Trans),
                        (dim(rows)?, jb, dim(cols)?),
                        alpha,
                        (av.at(r0, c0, size), ld_a),
                        (w.ptr, jb),
                        beta,
                        (cv.at(r0, j, size), ld_c),
                    )?;
                }
            }
            Ok(())
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn scaled_gemm_impl<T: Scalar>(
        &self,
        alpha: T,
        a: View<'_, Cuda, T>,
        b: View<'_, Cuda, T>,
        d: View<'_, Cuda, T>,
        beta: T,
        c: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        check::scaled_gemm(&a, &b, &d, &c)?;
        let (m, n, k) = (a.rows(), b.rows(), a.cols());
        if m == 0 || n == 0 {
            return Ok(());
        }
        if k == 0 || alpha == T::ZERO {
            // C := β·C without reading A or B (cuBLAS: k = 0).
            let (a0, b0) = (a.sub(0, 0, m, 0)?, b.sub(0, 0, n, 0)?);
            return Backend::gemm(self, alpha, a0, Op::NoTrans, b0, Op::Trans, beta, c);
        }
        // Block columns of C are block rows of B.
        let size = size_of::<T>();
        let av = Dev { ptr: raw(&a), ld: a.block().ld };
        let bv = Dev { ptr: raw(&b), ld: b.block().ld };
        let cv = Dev { ptr: raw_mut(&c), ld: c.block().ld };
        let dim = |v| blas::dim("scaled_gemm", v);
        let (ld_a, ld_c) = (dim(av.ld)?, dim(cv.ld)?);
        self.by_panels((n, k), bv, &d, beta, |q, panel, (c0, cols), w, beta| {
            let jb = dim(panel.jb)?;
            // SAFETY: sub-blocks of the checked operands; W is jb × cols, ld jb.
            unsafe {
                blas::gemm(
                    *q.blas.handle(),
                    (Op::NoTrans, Op::Trans),
                    (dim(m)?, jb, dim(cols)?),
                    alpha,
                    (av.at(0, c0, size), ld_a),
                    (w.ptr, jb),
                    beta,
                    (cv.at(0, panel.j, size), ld_c),
                )
            }
        })
    }

    /// `C := A·D²·Aᵀ` in `f32` from FP64 `A` by three products on the tensor
    /// cores (`kernels/split.cu`): for each panel of `kb` columns, a split
    /// kernel writes `[lo | hi | hi | lo]` of `A_p·D_p` (in half precision,
    /// rows scaled by powers of two; or in TF32), and `gemm`s of depth
    /// `3·kb` add `hi·loᵀ + hi·hiᵀ + lo·hiᵀ` to the squares of
    /// [`lower_cover`], a few strided batches per panel. The upper triangle
    /// is then mirrored from the lower (and the scales taken out).
    pub(super) fn scaled_syrk_f32_impl(
        &self,
        a: View<'_, Cuda, f64>,
        d: View<'_, Cuda, f64>,
        mut c: ViewMut<'_, Cuda, f32>,
    ) -> Result<()> {
        check::scaled_syrk_f32(&a, &d, &c)?;
        let (n, k) = (a.rows(), a.cols());
        if n == 0 {
            return Ok(());
        }
        if k == 0 {
            return self.fill(c, 0.0);
        }
        let plan = SplitPlan::new(n, k, &self.tuning().split);
        let half = plan.kind == Split::Half;
        let size = if half { 2 } else { 4 };
        // 4·n·kb entries of `size` bytes, as f32 words.
        let w = self.buffer::<f32>((4 * n * plan.kb * size).div_ceil(4), false)?;
        let av = Dev { ptr: raw(&a), ld: a.block().ld };
        let cv = Dev { ptr: raw_mut(&c), ld: c.block().ld };
        let wd = Dev { ptr: w.ptr, ld: n };
        let db = d.block();
        let incd = if db.cols == 1 { 1 } else { db.ld };
        let dim = |v| blas::dim("scaled_syrk_f32", v);
        let (ld_c, ld_w) = (dim(cv.ld)?, dim(n)?);
        let scale = if half { Some(self.row_scales(av, (raw(&d), incd), n, k)?) } else { None };
        let cover = lower_cover(n, plan.leaf);
        let h = *self.blas.handle();
        for c0 in (0..k).step_by(plan.kb) {
            let cols = plan.kb.min(k - c0);
            let cfg = cudarc::driver::LaunchConfig {
                grid_dim: (n.div_ceil(super::BLOCK).min(64) as u32, cols as u32, 1),
                block_dim: (super::BLOCK as u32, 1, 1),
                shared_mem_bytes: 0,
            };
            let (a_p, d_p) = (super::Arg::Ptr(av.at(0, c0, 8)), super::Arg::Ptr(raw(&d) + (c0 * incd * 8) as u64));
            let (rows, width, out) = (super::n(n), super::n(cols), super::Arg::Ptr(w.ptr));
            match &scale {
                Some(s) => {
                    let args = [
                        a_p,
                        super::n(av.ld),
                        d_p,
                        super::n(incd),
                        super::Arg::Ptr(s.ptr),
                        rows,
                        width,
                        out,
                        super::n(n),
                    ];
                    self.launch("split", "split_f16_f64", cfg, &args)?;
                }
                None => {
                    let args = [a_p, super::n(av.ld), d_p, super::n(incd), rows, width, out, super::n(n)];
                    self.launch("split", "split_tf32_f64", cfg, &args)?;
                }
            }
            let beta = if c0 == 0 { 0.0f32 } else { 1.0 };
            for t in &cover {
                // SAFETY: W is n × 4·cols (ld n); every square of the cover
                // lies in the checked n × n block C.
                unsafe {
                    split_gemm_nt(
                        h,
                        plan.kind,
                        (dim(t.rows)?, dim(t.cols)?, dim(3 * cols)?),
                        (wd.at(t.row, cols, size), ld_w),
                        (wd.at(t.col, 0, size), ld_w),
                        beta,
                        (cv.at(t.row, t.col, 4), ld_c),
                        (t.count, t.step, t.step * (cv.ld + 1)),
                    )?;
                }
            }
        }
        match scale {
            Some(s) => {
                let cfg = cudarc::driver::LaunchConfig {
                    grid_dim: (n.div_ceil(super::BLOCK).min(8) as u32, n.min(65_535) as u32, 1),
                    block_dim: (super::BLOCK as u32, 1, 1),
                    shared_mem_bytes: 0,
                };
                let args = [super::ptr_mut(&c), super::n(cv.ld), super::n(n), super::Arg::Ptr(s.ptr)];
                self.launch("split", "unscale_symmetrize_f32", cfg, &args)
            }
            None => self.symmetrize(Uplo::Lower, c.rb_mut()),
        }
    }

    /// The powers of two `sᵢ` that put the largest `|a(i, j)·d_j|` of each
    /// row in `[2¹⁴, 2¹⁵)` (`split_f16_f64`'s scales), in a fresh vector.
    fn row_scales(&self, a: Dev, (d, incd): (u64, usize), n: usize, k: usize) -> Result<CudaBuffer<f64>> {
        let row_blocks = n.div_ceil(super::BLOCK);
        let chunks = (1024 / row_blocks).clamp(1, k);
        let cols = k.div_ceil(chunks);
        let chunks = k.div_ceil(cols);
        let part = self.buffer::<f64>(chunks * n, false)?;
        let scale = self.buffer::<f64>(n, false)?;
        let cfg = |y: usize| cudarc::driver::LaunchConfig {
            grid_dim: (row_blocks as u32, y as u32, 1),
            block_dim: (super::BLOCK as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let args = [
            super::Arg::Ptr(a.ptr),
            super::n(a.ld),
            super::Arg::Ptr(d),
            super::n(incd),
            super::n(n),
            super::n(k),
            super::n(cols),
            super::Arg::Ptr(part.ptr),
        ];
        self.launch("split", "row_max_f64", cfg(chunks), &args)?;
        let args = [super::Arg::Ptr(part.ptr), super::n(n), super::n(chunks), super::Arg::Ptr(scale.ptr)];
        self.launch("split", "row_scale_f64", cfg(1), &args)?;
        Ok(scale)
    }
}

/// `count` squares of `C` (`rows × cols`), the first at `(row, col)`, each
/// `step` rows and `step` columns after the one before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Squares {
    pub row: usize,
    pub col: usize,
    pub rows: usize,
    pub cols: usize,
    pub count: usize,
    pub step: usize,
}

/// Blocks that cover the lower triangle of an `n × n` matrix once (and the
/// diagonal blocks whole), as a few strided batches: the diagonal leaves of
/// order `leaf`, and for `h = leaf, 2·leaf, …` the squares below the
/// diagonal that join two neighbouring halves of a dyadic interval, rows
/// `[(2j+1)h, (2j+2)h)` by columns `[2jh, (2j+1)h)` (the last one cut at
/// row `n`). Most of the work is in a few large squares.
pub fn lower_cover(n: usize, leaf: usize) -> Vec<Squares> {
    let leaf = leaf.clamp(1, n.max(1));
    let mut out = vec![];
    let full = n / leaf;
    if full > 0 {
        out.push(Squares { row: 0, col: 0, rows: leaf, cols: leaf, count: full, step: leaf });
    }
    if !n.is_multiple_of(leaf) {
        let r = full * leaf;
        out.push(Squares { row: r, col: r, rows: n - r, cols: n - r, count: 1, step: 0 });
    }
    let mut h = leaf;
    while h < n {
        let full = n / (2 * h);
        if full > 0 {
            out.push(Squares { row: h, col: 0, rows: h, cols: h, count: full, step: 2 * h });
        }
        let r = (2 * full + 1) * h;
        if r < n {
            out.push(Squares { row: r, col: 2 * full * h, rows: n - r, cols: h, count: 1, step: 0 });
        }
        h *= 2;
    }
    out
}

/// How `scaled_syrk_f32` is cut: panels of `kb` columns of `A`, diagonal
/// leaves of order `leaf`, and the type of the split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitPlan {
    pub kb: usize,
    pub leaf: usize,
    pub kind: Split,
}

impl SplitPlan {
    /// `kb = k/8` within 64..=2048: the `4·n·kb` workspace of halves is
    /// `kb/k` of an FP64 `A` (12.5 %; twice that in TF32), and depth
    /// `3·kb` (6144 for large `k`) keeps each pass over `C` (read and
    /// written once per panel) short next to its arithmetic (at 8192 ×
    /// 16384 on an H100: 7.1 ms with `kb = 2048`, 7.9 with 1024, 10.6 with
    /// 512; TF32 takes 16.4, 17.4, 20.4). `leaf = n/8` rounded
    /// to 64 within 256..=1024: the work above the diagonal of the leaves
    /// is `leaf/(2n)` of the total. [`SplitTuning`] overrides them
    /// (benchmarks).
    pub fn new(n: usize, k: usize, tuning: &SplitTuning) -> SplitPlan {
        let kb = tuning.kb.unwrap_or((k / 8).clamp(64, 2048)).clamp(1, k.max(1));
        let leaf = tuning.leaf.unwrap_or((n / 8 / 64 * 64).clamp(256, 1024)).clamp(1, n.max(1));
        SplitPlan { kb, leaf, kind: tuning.kind }
    }
}

/// `C := A·Bᵀ + β·C` for `A` (`m × k`), `B` (`n × k`) in half precision or
/// TF32 (as `f32`) on the tensor cores, sums in FP32 into the `f32` `C`, for
/// `count` blocks `step` entries apart (`C`'s `stride_c`).
#[allow(clippy::too_many_arguments)]
unsafe fn split_gemm_nt(
    h: sys::cublasHandle_t,
    kind: Split,
    (m, n, k): (i32, i32, i32),
    (a, lda): (u64, i32),
    (b, ldb): (u64, i32),
    beta: f32,
    (c, ldc): (u64, i32),
    (count, step, stride_c): (usize, usize, usize),
) -> Result<()> {
    use sys::cudaDataType::{CUDA_R_16F, CUDA_R_32F};
    let (input, compute) = match kind {
        Split::Half => (CUDA_R_16F, sys::cublasComputeType_t::CUBLAS_COMPUTE_32F),
        Split::Tf32 => (CUDA_R_32F, sys::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32),
    };
    let alpha = 1.0f32;
    let (al, be) = (&alpha as *const f32, &beta as *const f32);
    let (ta, tb) = (blas::op(Op::NoTrans), blas::op(Op::Trans));
    let (step, stride_c) = (step as i64, stride_c as i64);
    let count = blas::dim("gemm (split)", count)?;
    // SAFETY: the caller passes device blocks of these shapes of f32.
    let s = unsafe {
        sys::cublasGemmStridedBatchedEx(
            h,
            ta,
            tb,
            m,
            n,
            k,
            al as _,
            a as _,
            input,
            lda,
            step,
            b as _,
            input,
            ldb,
            step,
            be as _,
            c as _,
            CUDA_R_32F,
            ldc,
            stride_c,
            count,
            compute,
            sys::cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
        )
    };
    blas::status("gemm (split)", s)
}

#[cfg(test)]
mod tests {
    use super::lower_cover;

    /// Every entry of the lower triangle once, every diagonal block whole,
    /// nothing outside the matrix.
    #[test]
    fn the_cover_tiles_the_lower_triangle_once() {
        for n in [1, 2, 5, 63, 64, 65, 300, 1000, 1024, 1500, 4096, 5000] {
            for leaf in [1, 7, 64, 256, 1024] {
                let mut hits = vec![0u8; n * n];
                for s in lower_cover(n, leaf) {
                    for b in 0..s.count {
                        let (r0, c0) = (s.row + b * s.step, s.col + b * s.step);
                        assert!(
                            r0 + s.rows <= n && c0 + s.cols <= n,
                            "n = {n}, leaf = {leaf}: {s:?} leaves the matrix"
                        );
                        for j in c0..c0 + s.cols {
                            for i in r0..r0 + s.rows {
                                hits[i + j * n] += 1;
                            }
                        }
                    }
                }
                for j in 0..n {
                    for i in j..n {
                        assert_eq!(
                            hits[i + j * n],
                            1,
                            "n = {n}, leaf = {leaf}: ({i}, {j}) covered {} times",
                            hits[i + j * n]
                        );
                    }
                }
            }
        }
    }
}
