//! Triangular solves with a lower triangle of order up to
//! [`KERNEL_MAX_ORDER`], `B := α·L⁻¹·B` (the LU's) and `B := α·B·L⁻ᵀ` (the
//! Cholesky's panels), on the kernels of `kernels/trsm.cu`, whose only serial
//! chain is the 32 steps of each diagonal tile: cuBLAS's `trsm` takes 26 µs
//! for order 128 on 128 columns and 185 µs for order 256 on 7936 on an H100,
//! the orders the factorizations' panels and block columns use.

use cudarc::driver::LaunchConfig;

use super::blas::{operand, operand_mut};
use super::{Arg, Cuda, blas, elem, n, ptr_mut, raw, raw_mut};
use crate::backend::{Backend, Diag, Op, Side, Triangular, View, ViewMut, check};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Threads per block and columns of B per warp (`TRSM_THREADS`, `TRSM_COLS`
/// in `trsm.cu`).
const TRSM_THREADS: usize = 256;
const TRSM_COLS: usize = 4;
/// The largest order one launch takes (32 rows per tile, 1, 2, 4 or 8 tiles).
const LAUNCH_MAX_ORDER: usize = 256;
/// Orders up to this go through the kernels, in diagonal blocks of
/// [`LAUNCH_MAX_ORDER`] with a `gemm` between them; larger ones to cuBLAS,
/// whose blocking is as good there.
pub(super) const KERNEL_MAX_ORDER: usize = 1024;

/// Which side of `B` the lower triangle solves from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LowerSolve {
    /// `B := α·L⁻¹·B`.
    Left,
    /// `B := α·B·L⁻ᵀ`, that is `Bᵀ := α·L⁻¹·Bᵀ`.
    RightTransposed,
}

impl Cuda {
    /// `B := α·L⁻¹·B` or `B := α·B·L⁻ᵀ`, `L` the lower triangle of `a`
    /// (order at most [`KERNEL_MAX_ORDER`], checked by the caller), by blocks
    /// of `L`'s order: each diagonal block is one launch, and a `gemm` takes
    /// its solution out of the rest of `B` (scaling it by `α` the first time).
    pub(super) fn trsm_lower<T: Scalar>(
        &self,
        solve: LowerSolve,
        diag: Diag,
        alpha: T,
        a: View<'_, Cuda, T>,
        mut b: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        let m = a.rows();
        for p in (0..m).step_by(LAUNCH_MAX_ORDER) {
            let pb = LAUNCH_MAX_ORDER.min(m - p);
            let scale = if p == 0 { alpha } else { T::ONE };
            let l21 = a.sub(p + pb, p, m - p - pb, pb)?;
            let (mut done, mut rest) = match solve {
                LowerSolve::Left => b.split_at_row(pb)?,
                LowerSolve::RightTransposed => b.split_at_col(pb)?,
            };
            self.trsm_lower_launch(solve, diag, scale, a.sub(p, p, pb, pb)?, done.rb_mut())?;
            if l21.rows() == 0 {
                break;
            }
            match solve {
                // B₂ := α·B₂ − L₂₁·X₁.
                LowerSolve::Left => {
                    self.gemm(-T::ONE, l21, Op::NoTrans, done.rb(), Op::NoTrans, scale, rest.rb_mut())?
                }
                // B₂ := α·B₂ − X₁·L₂₁ᵀ.
                LowerSolve::RightTransposed => {
                    self.gemm(-T::ONE, done.rb(), Op::NoTrans, l21, Op::Trans, scale, rest.rb_mut())?
                }
            }
            b = rest;
        }
        Ok(())
    }

    /// One launch of `trsm_lower_*`: order at most [`LAUNCH_MAX_ORDER`].
    fn trsm_lower_launch<T: Scalar>(
        &self,
        solve: LowerSolve,
        diag: Diag,
        alpha: T,
        a: View<'_, Cuda, T>,
        b: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        let (m, cols) = match solve {
            LowerSolve::Left => (b.rows(), b.cols()),
            LowerSolve::RightTransposed => (b.cols(), b.rows()),
        };
        let tiles = m.div_ceil(32).next_power_of_two();
        let blocks = cols.div_ceil(TRSM_THREADS / 32 * TRSM_COLS);
        // With no more blocks than SMs, load the next tile column of L while
        // one is used; with more, a tile column at a time lets more blocks
        // share an SM.
        let prefetch = blocks <= self.sms()?;
        let tile_column = 32 * 32 * tiles * size_of::<T>();
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (TRSM_THREADS as u32, 1, 1),
            shared_mem_bytes: (if prefetch { 2 } else { 1 } * tile_column) as u32,
        };
        let args = [
            Arg::Ptr(raw(&a)),
            n(a.block().ld),
            ptr_mut(&b),
            n(b.block().ld),
            n(m),
            n(cols),
            elem(alpha),
            Arg::I32((diag == Diag::Unit) as i32),
            Arg::I32((solve == LowerSolve::RightTransposed) as i32),
            Arg::I32(prefetch as i32),
        ];
        self.launch("trsm", &format!("trsm_lower_{}_{tiles}", T::NAME), cfg, &args)
    }

    /// `trsm` and `trmm`, which share their checks and arguments.
    pub(super) fn triangular_impl<T: Scalar>(
        &self,
        which: Triangular,
        (side, uplo, op, diag): (Side, Uplo, Op, Diag),
        alpha: T,
        a: View<'_, Cuda, T>,
        b: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        let name = which.name();
        check::triangular(name, side, uplo, &a, &b)?;
        if b.rows() == 0 || b.cols() == 0 {
            return Ok(());
        }
        if alpha == T::ZERO {
            // BLAS: B := 0 without reading A (cuBLAS would form 0·NaN).
            return self.fill(b, T::ZERO);
        }
        if which == Triangular::Solve && a.rows() <= KERNEL_MAX_ORDER {
            let solve = match (side, uplo, op) {
                (Side::Left, Uplo::Lower, Op::NoTrans) => Some(LowerSolve::Left),
                (Side::Right, Uplo::Lower, Op::Trans) => Some(LowerSolve::RightTransposed),
                _ => None,
            };
            if let Some(solve) = solve {
                return self.trsm_lower(solve, diag, alpha, a, b);
            }
        }
        let d = |x| blas::dim(name, x);
        if side == Side::Left && b.cols() == 1 && alpha == T::ONE {
            // One column: the level-2 routines, faster for it than cuBLAS's
            // `trsm` and `trmm`.
            // SAFETY: blocks checked by `check`; `b` is one column.
            return unsafe {
                blas::triangular_vector::<T>(
                    *self.blas.handle(),
                    which,
                    (uplo, op, diag),
                    d(b.rows())?,
                    operand(&a, name)?,
                    (raw_mut(&b), 1),
                )
            };
        }
        // SAFETY: blocks checked by `check`; see `blas`.
        unsafe {
            blas::triangular(
                *self.blas.handle(),
                which,
                (side, uplo, op, diag),
                (d(b.rows())?, d(b.cols())?),
                alpha,
                operand(&a, name)?,
                operand_mut(&b, name)?,
            )
        }
    }
}
