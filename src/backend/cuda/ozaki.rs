//! `gemm_in` and `syrk_in` with [`Compute::Int8`] on FP64 operands: the
//! Ozaki scheme II ([`ozaki`](crate::backend::ozaki)), cuBLAS's exact INT8
//! products between the passes of `kernels/ozaki.cu`.
//!
//! The residues of `A'` and `B'` are written K-major (each row of `op(A)`
//! and column of `op(B)` contiguous, the depth padded to 16 with zeros), all
//! moduli in one pass over each operand, so that every product is "TN", the
//! layout the integer tensor cores take at full rate. Each product's INT32
//! result is reduced to one byte per entry at once; the reconstruction reads
//! the `N` bytes of an entry and writes it in FP64. `syrk_in` forms its
//! triangle by block columns, each from the diagonal block down (or up).

use super::launch::{Arg, BLOCK, MAX_BLOCKS, grid_1d, n, ptr_mut};
use super::{Cuda, CudaBuffer, blas};
use crate::backend::ozaki::{self, MAX_DEPTH, Ozaki, SAMPLE};
use crate::backend::{Backend, Compute, Op, View, ViewMut};
use crate::layout::Uplo;
use crate::{Result, Scalar};

/// Where [`Compute::Int8`]`{ moduli: None }` takes the emulation: products
/// whose three dimensions all reach `Tuning::fp64_products_from` (16384
/// unless set), with at most [`FASTER_UP_TO`] moduli. Measured on an H100
/// (`gpumat-bench --suite emu`): at order 16384 the emulation runs 1.35,
/// 1.20, 1.13 and 1.06 times as fast as `dgemm` with 13 to 16 moduli; at
/// order 8192 0.95 to 0.81 times, and at 4096 about half as fast, every
/// count. Below, the passes around the INT8 products (scaling, slicing,
/// reducing, reconstructing: `O(mn·N)`) weigh as much as the products.
pub(super) const FASTER_UP_TO: usize = 15;

/// Rows of `op(A)` or columns of `op(B)`: vector `v` has entry `p` at
/// `addr + 8·(v·vs + p·es)`.
#[derive(Clone, Copy, PartialEq)]
struct Vectors {
    addr: u64,
    vs: usize,
    es: usize,
    count: usize,
    len: usize,
}

impl Vectors {
    /// The rows (`rows`) or the columns of `op(X)`.
    fn of<T: Scalar>(x: &View<'_, Cuda, T>, op: Op, rows: bool) -> Vectors {
        let b = x.block();
        let addr = super::launch::raw(x);
        let (count, len) =
            if rows { op.apply(b.rows, b.cols) } else { (op.apply(b.rows, b.cols).1, op.apply(b.rows, b.cols).0) };
        // Rows of X itself run along its leading dimension.
        let along_rows = rows == (op == Op::NoTrans);
        let (vs, es) = if along_rows { (1, b.ld) } else { (b.ld, 1) };
        Vectors { addr, vs, es, count, len }
    }

    fn args(&self) -> [Arg; 5] {
        [Arg::Ptr(self.addr), n(self.vs), n(self.es), n(self.count), n(self.len)]
    }
}

impl Cuda {
    /// The scheme for `op(A)·op(B)` under `Compute::Int8 { moduli }`, or
    /// `None` where the native product is the one to take: an empty
    /// product, a NaN or an infinity in an operand, or (for `moduli: None`)
    /// a product smaller than `Tuning::fp64_products_from` or operands that
    /// need more than [`FASTER_UP_TO`] moduli.
    pub(super) fn ozaki_plan<T: Scalar>(
        &self,
        moduli: Option<u8>,
        (a, op_a): (&View<'_, Cuda, T>, Op),
        (b, op_b): (&View<'_, Cuda, T>, Op),
    ) -> Result<Option<Ozaki>> {
        ozaki::check_count(moduli)?;
        let (rows, cols) = (Vectors::of(a, op_a, true), Vectors::of(b, op_b, false));
        if rows.count == 0 || cols.count == 0 || rows.len == 0 {
            return Ok(None);
        }
        let small = rows.count.min(cols.count).min(rows.len) < self.tuning().fp64_products_from;
        if moduli.is_none() && small {
            return Ok(None);
        }
        // A·Aᵀ (syrk_in) scans its one operand once.
        if self.find_non_finite(*a)?.is_some() || (cols != rows && self.find_non_finite(*b)?.is_some()) {
            return Ok(None);
        }
        let count = match moduli {
            Some(count) => count as usize,
            None => match ozaki::moduli_for(self.kappa(rows, cols)?, FASTER_UP_TO) {
                Some(count) => count,
                None => return Ok(None),
            },
        };
        Ok(Some(Ozaki::new(count)))
    }

    /// `C := α·op(A)·op(B) + β·C` on all of `C`, or on its `part` triangle,
    /// by the scheme `oz` (from [`ozaki_plan`](Self::ozaki_plan)).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn gemm_ozaki<T: Scalar>(
        &self,
        oz: &Ozaki,
        alpha: T,
        (a, op_a): (&View<'_, Cuda, T>, Op),
        (b, op_b): (&View<'_, Cuda, T>, Op),
        beta: T,
        c: ViewMut<'_, Cuda, T>,
        part: Option<Uplo>,
    ) -> Result<()> {
        let (rows, cols) = (Vectors::of(a, op_a, true), Vectors::of(b, op_b, false));
        let (m, nc, k, count) = (rows.count, cols.count, rows.len, oz.count());
        let radius = oz.radius(k);
        let moduli = self.upload(&oz.moduli().iter().map(|&x| x as i32).collect::<Vec<_>>())?;
        let constants = self.upload(oz.constants())?;
        let depth = k.next_multiple_of(16);
        let s = self.exponents(rows, radius)?;
        let wa = self.slices(rows, &s, count, moduli.ptr, depth)?;
        // A·Aᵀ (syrk_in): the columns of op(B) are the rows of op(A).
        let other = if cols == rows {
            None
        } else {
            let t = self.exponents(cols, radius)?;
            let wb = self.slices(cols, &t, count, moduli.ptr, depth)?;
            Some((t, wb))
        };
        let (t, wb) = other.as_ref().map_or((&s, &wa), |(t, wb)| (t, wb));

        // The residue planes share the INT32 product's leading dimension, a
        // multiple of 4, so that ozaki_residues stores four bytes at once.
        let ldc = m.next_multiple_of(4);
        let product = self.buffer::<i32>(ldc * nc, false)?;
        let plane = ldc * nc;
        let residues = self.buffer::<i32>((count * plane).div_ceil(4), false)?;
        let d = |x| blas::dim("gemm (INT8)", x);
        let h = *self.blas.handle();
        let tiles = tiles(m, nc, part);
        for (q, &mq) in oz.moduli().iter().enumerate() {
            for &(row0, rows, col0, cols) in &tiles {
                for segment in (0..depth).step_by(MAX_DEPTH) {
                    let end = depth.min(segment + MAX_DEPTH);
                    for (i0, j0) in blocks(rows, cols) {
                        let (r, c) = (INT8_TILE.min(rows - i0), INT8_TILE.min(cols - j0));
                        let at = wa.ptr + (q * depth * m + (row0 + i0) * depth + segment) as u64;
                        let bt = wb.ptr + (q * depth * nc + (col0 + j0) * depth + segment) as u64;
                        let ct = product.ptr + 4 * (row0 + i0 + (col0 + j0) * ldc) as u64;
                        // SAFETY: the slices hold `count` planes of `depth ×
                        // m` and `depth × nc` bytes; `product` holds `ldc ×
                        // nc` INT32; the block lies inside all three.
                        unsafe {
                            blas::gemm_i8(
                                h,
                                (Op::Trans, Op::NoTrans),
                                (d(r)?, d(c)?, d(end - segment)?),
                                (at, d(depth)?),
                                (bt, d(depth)?),
                                (ct, d(ldc)?),
                                false,
                            )?;
                        }
                    }
                    let offset = (row0 + col0 * ldc) as u64;
                    let args = [
                        Arg::Ptr(product.ptr + 4 * offset),
                        n(ldc),
                        n(rows),
                        n(cols),
                        Arg::I32(mq as i32),
                        Arg::Ptr(residues.ptr + (q * plane) as u64 + offset),
                        n(ldc),
                        Arg::I32((segment > 0) as i32),
                    ];
                    self.launch("ozaki", "ozaki_residues", grid_2d(rows.div_ceil(4), cols), &args)?;
                }
            }
        }
        let part = match part {
            None => 0,
            Some(Uplo::Lower) => 1,
            Some(Uplo::Upper) => 2,
        };
        let args = [
            Arg::Ptr(residues.ptr),
            n(plane),
            Arg::I32(count as i32),
            Arg::I32(oz.chunks() as i32),
            Arg::Ptr(constants.ptr),
            Arg::Ptr(s.ptr),
            Arg::Ptr(t.ptr),
            n(m),
            n(nc),
            n(ldc),
            Arg::F64(alpha.to_f64()),
            Arg::F64(beta.to_f64()),
            ptr_mut(&c),
            n(c.block().ld),
            Arg::I32(part),
        ];
        self.launch("ozaki", "ozaki_reconstruct", grid_2d(m, nc), &args)
    }

    /// The scaling exponent of each vector: a warp a vector where its
    /// entries are adjacent, a lane a vector where the vectors are (rows
    /// of a column-major operand), so that loads are coalesced either way.
    fn exponents(&self, v: Vectors, radius: f64) -> Result<CudaBuffer<i32>> {
        let s = self.buffer::<i32>(v.count, false)?;
        let [x, vs, es, count, len] = v.args();
        let (radius, out) = (Arg::F64(radius), Arg::Ptr(s.ptr));
        if v.vs == 1 && v.es != 1 {
            let cfg = grid_1d(v.count.div_ceil(32) * BLOCK, MAX_BLOCKS);
            self.launch("ozaki", "ozaki_exponents_rows", cfg, &[x, es, count, len, radius, out])?;
        } else {
            let mut cfg = grid_1d(v.count * 32, MAX_BLOCKS);
            cfg.grid_dim.0 = v.count.div_ceil(BLOCK / 32).clamp(1, MAX_BLOCKS) as u32;
            self.launch("ozaki", "ozaki_exponents", cfg, &[x, vs, es, count, len, radius, out])?;
        }
        Ok(s)
    }

    /// The INT8 residues of the vectors scaled by `2^s` and rounded, modulo
    /// each modulus: `count` planes of `depth × v.count` bytes.
    fn slices(
        &self,
        v: Vectors,
        s: &CudaBuffer<i32>,
        count: usize,
        moduli: u64,
        depth: usize,
    ) -> Result<CudaBuffer<i32>> {
        let plane = depth * v.count;
        let w = self.buffer::<i32>((count * plane).div_ceil(4), false)?;
        let [x, vs, es, vcount, len] = v.args();
        let args = [
            x,
            vs,
            es,
            vcount,
            len,
            Arg::Ptr(s.ptr),
            Arg::I32(count as i32),
            Arg::Ptr(moduli),
            Arg::Ptr(w.ptr),
            n(depth),
            n(plane),
        ];
        // One block per tile of 32 vectors by 32 positions.
        let tiles = v.count.div_ceil(32) * depth.div_ceil(32);
        self.launch("ozaki", "ozaki_slice", grid_1d(tiles * BLOCK, MAX_BLOCKS), &args)?;
        Ok(w)
    }

    /// [`ozaki::kappa`] on [`SAMPLE`] rows of `op(A)` and columns of
    /// `op(B)`: their absolute values, each over its largest, side by side
    /// in `W`, and `G = Wᵀ·W` by an FP64 product.
    fn kappa(&self, rows: Vectors, cols: Vectors) -> Result<f64> {
        let (ra, cb) = (rows.count.min(SAMPLE), cols.count.min(SAMPLE));
        let (k, order) = (rows.len, ra + cb);
        let w = self.buffer::<f64>(k * order, false)?;
        for (v, samples, col0) in [(rows, ra, 0), (cols, cb, ra)] {
            let mut cfg = grid_1d(BLOCK, 1);
            cfg.grid_dim.0 = samples as u32;
            let [x, vs, es, count, len] = v.args();
            let args = [x, vs, es, count, len, n(samples), Arg::Ptr(w.ptr), n(k), n(col0)];
            self.launch("ozaki", "ozaki_sample", cfg, &args)?;
        }
        let mut g = self.buffer::<f64>(order * order, false)?;
        let wv = View::dense(&w, k, order)?;
        self.gemm(1.0, wv, Op::Trans, wv, Op::NoTrans, 0.0, ViewMut::dense(&mut g, order, order)?)?;
        let mut gram = vec![0.0; order * order];
        self.download(&g, &mut gram)?;
        Ok(ozaki::kappa(&gram, ra, cb))
    }
}

/// A grid over the rows (x) and the columns (y) of a `rows × cols` block.
fn grid_2d(rows: usize, cols: usize) -> cudarc::driver::LaunchConfig {
    let mut cfg = grid_1d(rows, MAX_BLOCKS);
    cfg.grid_dim.1 = cols.clamp(1, MAX_BLOCKS) as u32;
    cfg
}

/// The most rows and columns of one INT8 product: on an H100, cuBLAS runs
/// a product of order 16384 at under 800 TOP/s, and the same by blocks of
/// 8192 rows and columns (the whole depth each) at 1 400.
const INT8_TILE: usize = 8192;

/// `(i0, j0)` of the INT8 products, blocks of at most [`INT8_TILE`], that
/// cover a `rows × cols` block.
fn blocks(rows: usize, cols: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..cols).step_by(INT8_TILE).flat_map(move |j0| (0..rows).step_by(INT8_TILE).map(move |i0| (i0, j0)))
}

/// Width of the block columns of a triangle: a product per block column,
/// from its diagonal block down (or up), wastes only the other half of the
/// diagonal blocks.
const TILE: usize = 1024;

/// `(row0, rows, col0, cols)` of the blocks of the `m × n` product to
/// form: all of it, or the block columns that cover its `part` triangle
/// (`m = n`).
fn tiles(m: usize, n: usize, part: Option<Uplo>) -> Vec<(usize, usize, usize, usize)> {
    let Some(uplo) = part else {
        return vec![(0, m, 0, n)];
    };
    (0..n)
        .step_by(TILE)
        .map(|j0| {
            let w = TILE.min(n - j0);
            match uplo {
                Uplo::Lower => (j0, m - j0, j0, w),
                Uplo::Upper => (0, j0 + w, j0, w),
            }
        })
        .collect()
}

/// Whether `compute` asks for the Ozaki scheme on `T`.
pub(super) fn int8<T: Scalar>(compute: Compute) -> Option<Option<u8>> {
    match compute {
        Compute::Int8 { moduli } if T::NAME == "f64" => Some(moduli),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_cover_the_triangle_once() {
        for (n, uplo) in [(1, Uplo::Lower), (1000, Uplo::Upper), (2500, Uplo::Lower), (3072, Uplo::Upper)] {
            let mut covered = vec![0u8; n * n];
            for (r0, rows, c0, cols) in tiles(n, n, Some(uplo)) {
                for j in c0..c0 + cols {
                    for i in r0..r0 + rows {
                        covered[i + j * n] += 1;
                    }
                }
            }
            for j in 0..n {
                for i in 0..n {
                    let want = (uplo == Uplo::Lower && i >= j) || (uplo == Uplo::Upper && i <= j);
                    assert!(covered[i + j * n] == 1 || (!want && covered[i + j * n] == 0), "{n} {uplo:?} ({i}, {j})");
                }
            }
        }
        assert_eq!(tiles(5, 7, None), vec![(0, 5, 0, 7)]);
    }
}
