//! The blocked factorization: the loop of [`crate::factor::symmetric`]
//! with `potrf_panel` leaves and `syrk` updates, recorded for replay.

use crate::backend::{Backend, Block, BufferMut, Compute, DeviceBuffer, Triangle, ViewMut};
use crate::factor::symmetric::{self, Leaves};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Tuning of the blocked factorization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CholeskyParams {
    /// Order of the diagonal blocks of the outer loop, whose trailing updates
    /// (`syrk`, `gemm`) do nearly all the work.
    pub block_size: usize,
    /// Diagonal blocks larger than this are factored recursively, halving
    /// the block size, so that `potrf` only ever sees blocks this small and
    /// the rest of the panel work goes to `trsm` and `syrk` too.
    pub leaf_size: usize,
    /// Symmetric updates of order above twice this are split into block
    /// columns of this width: `syrk` on the diagonal tiles, `gemm` below.
    pub update_tile: usize,
    /// The multiplications of the outer loop's trailing `gemm`s
    /// ([`Backend::gemm_in`](crate::backend::Backend::gemm_in)): on the
    /// tensor cores for a single-precision factor that preconditions a
    /// refinement.
    pub update: Compute,
    /// The multiplications of the updates inside each block column's
    /// recursive factorization. `Native` keeps the panels, the critical
    /// path, in the working precision. FP64 products from INT8 products
    /// pay only on large products: `Int8` panels take native ones.
    pub panel: Compute,
}

impl Default for CholeskyParams {
    fn default() -> Self {
        CholeskyParams {
            block_size: 512,
            leaf_size: 64,
            update_tile: 1024,
            update: Compute::Native,
            panel: Compute::Native,
        }
    }
}

impl CholeskyParams {
    /// The blocking for a matrix of order `n`: small blocks keep the chain of
    /// diagonal factorizations short on small matrices, large ones make the
    /// trailing updates efficient on large matrices.
    pub fn for_order(n: usize) -> Self {
        // Measured on an H100 (bench/results): 512 is best at n = 4096, 1024
        // from 8192 up; small orders keep the panel short.
        let block_size = if n <= 2048 {
            256
        } else if n <= 6144 {
            512
        } else {
            1024
        };
        // Wider tiles of the trailing update from 8192 up: fewer calls, and
        // larger `gemm`s (38.7 against 41.1 ms at 16384, 8.11 against 8.21
        // at 8192; no change at 4096).
        let update_tile = if n <= 6144 { 1024 } else { 2048 };
        CholeskyParams { block_size, leaf_size: 64, update_tile, update: Compute::Native, panel: Compute::Native }
    }

    /// The blocking for a single-precision factor of order `n` whose
    /// trailing updates multiply in `update` on the tensor cores, as the
    /// preconditioner of a mixed-precision solve. Measured on an H200
    /// (`bench/results/2026-11-28-mixedtrace-*`): each step's trailing update
    /// in one product, not by block columns of 2048, whose 16-bit copies and
    /// calls cost more than the square's extra flops (16384: 18.4 → 17.3
    /// ms; 8192: 4.9 → 4.6); and from 16384 up, TF32 products in the panels,
    /// the critical path once the updates are fast (17.3 → 15.6 ms; at
    /// 8192 they cost more: 4.6 → 6.8). Updates more accurate than TF32
    /// (`Fp16x3`) keep the panels in FP32; native updates take
    /// [`for_order`](Self::for_order)'s blocking.
    pub fn for_tensor_updates(n: usize, update: Compute) -> Self {
        let base = CholeskyParams { update, ..CholeskyParams::for_order(n) };
        let panel = match update {
            Compute::Native | Compute::Int8 { .. } => return base,
            Compute::Fp16 | Compute::Bf16 | Compute::Tf32 if n >= 16384 => Compute::Tf32,
            _ => Compute::Native,
        };
        CholeskyParams { update_tile: 4 * base.update_tile, panel, ..base }
    }

    /// Whether the factorization can be recorded for replay: not with FP64
    /// updates from INT8 products, which decide on the host (the scan for
    /// NaN, the sampled count of moduli) and so cannot run in a graph.
    pub(crate) fn recordable(&self) -> bool {
        !matches!(self.update, Compute::Int8 { .. })
    }
}

/// Factors the `uplo` triangle of the square block `block` of `a` in place:
/// `L` with `A = L·Lᵀ` (`Lower`) or `U` with `A = Uᵀ·U` (`Upper`). The other
/// triangle is not touched.
///
/// `block` may also be a panel, `m × n` with `m > n` for `Lower` (`n × m`
/// for `Upper`): its top `n × n` block is factored and the rest solved with
/// the factor, `L21 = A21·L11⁻ᵀ`, blocked in the same pass.
///
/// If `A` is not positive definite, `info` (one entry, expected 0) receives
/// the 1-based column of the first pivot that is not positive (counted from
/// `offset`); on a GPU that happens on the device, and `info` must be read
/// before the factor is used.
pub fn factor_in_place<B: Backend, T: Scalar>(
    be: &B,
    uplo: Uplo,
    a: &BufferMut<'_, B, T>,
    block: Block,
    info: &mut ViewMut<'_, B, i32>,
    offset: usize,
    params: CholeskyParams,
) -> Result<()> {
    factor_triangle(be, Triangle::full(uplo, block)?, a, info, offset, params)
}

/// [`factor_in_place`] enqueued call by call, never recorded for replay:
/// for a factorization done once at its place, as each panel of a
/// distributed factorization is, where a capture would cost the host more
/// than replays of it ever save.
pub(crate) fn factor_in_place_once<B: Backend, T: Scalar>(
    be: &B,
    a: &BufferMut<'_, B, T>,
    block: Block,
    info: &mut ViewMut<'_, B, i32>,
    offset: usize,
    params: CholeskyParams,
) -> Result<()> {
    symmetric::factor(be, Triangle::full(Uplo::Lower, block)?, a, Leaves::Cholesky, info, offset, params)
}

/// The blocked factorization of `L` wherever `tri` stores it, enqueued as
/// one unit of [`Backend::replay`]: repeated factorizations of the same
/// memory (benchmarks, the steps of an interior-point or time-stepping
/// method) are replayed without enqueuing their hundreds of calls again.
pub(super) fn factor_triangle<B: Backend, T: Scalar>(
    be: &B,
    tri: Triangle,
    a: &BufferMut<'_, B, T>,
    info: &mut ViewMut<'_, B, i32>,
    offset: usize,
    params: CholeskyParams,
) -> Result<()> {
    let key = format!(
        "cholesky {} {tri:?} {params:?} in {:#x}, info {:#x} {:?} from {offset}",
        T::NAME,
        a.id(),
        info.buffer().id(),
        info.block()
    );
    let mut enqueue = |q: &B| symmetric::factor(q, tri, a, Leaves::Cholesky, info, offset, params);
    if !params.recordable() {
        return enqueue(be);
    }
    be.replay(&key, &mut enqueue)
}
