//! Device-to-device copies of strided blocks (tiled, transposed or of one
//! triangle) and the copies between a full matrix and the pieces of its RFP
//! rectangle.

use cudarc::driver::LaunchConfig;

use super::{Arg, Cuda, MAX_BLOCKS, driver, n};
use crate::layout::rfp::Placement;
use crate::layout::{Rfp, Uplo};
use crate::{Elem, Result, Scalar};

impl Cuda {
    /// `dst := src` or `srcᵀ` on the `tri` part of the source (0 all,
    /// 1 lower, 2 upper), by 32×32 tiles; a whole block that is one run of
    /// memory on both sides (a vector, or columns without gaps) by the copy
    /// engine, since the tiles of a single column would use 1/32 of their
    /// threads (an RFP array is such a column).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn copy_block<E: Elem>(
        &self,
        src: u64,
        lds: usize,
        dst: u64,
        ldd: usize,
        rows: usize,
        cols: usize,
        transpose: bool,
        tri: i32,
    ) -> Result<()> {
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        let run = |ld: usize| cols == 1 || ld == rows;
        if !transpose && tri == 0 && run(lds) && run(ldd) {
            if src == dst {
                return Ok(());
            }
            // SAFETY: both blocks were checked to lie in their buffers, and a
            // copy's source and destination do not overlap.
            return unsafe {
                cudarc::driver::result::memcpy_dtod_async(
                    dst,
                    src,
                    rows * cols * size_of::<E>(),
                    self.stream.cu_stream(),
                )
            }
            .map_err(driver("copying a block"));
        }
        let cfg = LaunchConfig {
            grid_dim: (cols.div_ceil(32).min(MAX_BLOCKS) as u32, rows.div_ceil(32).min(MAX_BLOCKS) as u32, 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let args =
            [Arg::Ptr(src), n(lds), Arg::Ptr(dst), n(ldd), n(rows), n(cols), Arg::I32(transpose as i32), Arg::I32(tri)];
        self.launch("copy", &format!("copy_block_{}", E::NAME), cfg, &args)
    }

    /// Copies each RFP piece between the full matrix at `a` and the RFP array
    /// at `arf`: three tiled copies (one transposed) per direction.
    pub(super) fn rfp_pieces<T: Scalar>(&self, rfp: Rfp, a: u64, lda: usize, arf: u64, pack: bool) -> Result<()> {
        let size = size_of::<T>() as u64;
        for p in rfp.placements() {
            let Placement { offset, ld, rows, cols, shape, origin, transposed } = p;
            let a_block = a + ((origin.0 + origin.1 * lda) as u64) * size;
            let piece = arf + offset as u64 * size;
            let tri = |u: Option<Uplo>| match u {
                None => 0,
                Some(Uplo::Lower) => 1,
                Some(Uplo::Upper) => 2,
            };
            if pack {
                // Source: A's block, `cols × rows` when the piece holds its transpose.
                let (r, c, mask) =
                    if transposed { (cols, rows, tri(shape.map(Uplo::flip))) } else { (rows, cols, tri(shape)) };
                self.copy_block::<T>(a_block, lda, piece, ld, r, c, transposed, mask)?;
            } else {
                self.copy_block::<T>(piece, ld, a_block, lda, rows, cols, transposed, tri(shape))?;
            }
        }
        Ok(())
    }
}
