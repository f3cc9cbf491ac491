//! Reductions to the host: norms, the largest entry, the first non-finite
//! entry. Each kernel leaves one partial per block; the host combines them
//! with the same rules (NaN propagates; ties go to the first index).

use cudarc::driver::LaunchConfig;

use super::{Arg, BLOCK, Cuda, MAX_BLOCKS, driver, grid_1d, kernels, n, ptr};
use crate::backend::{Norm, View, check};
use crate::{Result, Scalar};

/// Most partial results a reduction produces.
const MAX_PARTIALS: usize = 1024;

fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) }
}

impl Cuda {
    /// A 1-D reduction kernel over a block (`max_abs`, or `sum_sq_scaled`
    /// with its scale), its per-block partials combined on the host.
    fn reduce<T: Scalar>(&self, name: &str, a: &View<'_, Cuda, T>, extra: Option<f64>) -> Result<f64> {
        let (rows, cols) = (a.rows(), a.cols());
        let cfg = grid_1d(rows * cols, MAX_PARTIALS);
        let parts = cfg.grid_dim.0 as usize;
        let out = self.scratch::<f64>(parts)?;
        let mut args = vec![ptr(a), n(a.block().ld), n(rows), n(cols)];
        args.extend(extra.map(Arg::F64));
        args.push(Arg::Ptr(self.slice_ptr(&out)));
        self.launch("reduce", &format!("{name}_{}", T::NAME), cfg, &args)?;
        let partials = self.read(&out, parts)?;
        Ok(match name {
            "max_abs" => partials.into_iter().fold(0.0, nan_max),
            _ => partials.into_iter().sum(),
        })
    }

    /// Abs sums per column (`col_abs_sums`) or per row (`row_abs_sums`), then their NaN-propagating max.
    fn max_abs_sum<T: Scalar>(&self, name: &str, a: &View<'_, Cuda, T>) -> Result<f64> {
        Ok(self.per_line(name, a)?.into_iter().fold(0.0, nan_max))
    }

    /// [`Backend::abs_maxima`](crate::backend::Backend::abs_maxima).
    pub(super) fn abs_maxima_of<T: Scalar>(&self, a: View<'_, Cuda, T>, rows: bool) -> Result<Vec<f64>> {
        if a.rows() == 0 || a.cols() == 0 {
            return Ok(vec![0.0; if rows { a.rows() } else { a.cols() }]);
        }
        self.per_line(if rows { "row_abs_max" } else { "col_abs_max" }, &a)
    }

    /// One value per column (`col_*` kernels) or per row (`row_*`), on the
    /// host. The grid splits the other dimension into chunks when the lines
    /// are too few to fill the GPU (`*_abs_sums_grid`); the kernel leaves a
    /// partial per chunk, combined here (added, or their NaN-propagating max).
    fn per_line<T: Scalar>(&self, name: &str, a: &View<'_, Cuda, T>) -> Result<Vec<f64>> {
        let (rows, cols) = (a.rows(), a.cols());
        let by_cols = name.starts_with("col_");
        let len = if by_cols { cols } else { rows };
        let grid_dim =
            if by_cols { kernels::col_abs_sums_grid(rows, cols) } else { kernels::row_abs_sums_grid(rows, cols) };
        let chunks = grid_dim.1 as usize;
        let cfg = LaunchConfig { grid_dim, block_dim: (BLOCK as u32, 1, 1), shared_mem_bytes: 0 };
        let out = self.scratch::<f64>(len * chunks)?;
        let args = [ptr(a), n(a.block().ld), n(rows), n(cols), Arg::Ptr(self.slice_ptr(&out))];
        self.launch("reduce", &format!("{name}_{}", T::NAME), cfg, &args)?;
        let partials = self.read(&out, len * chunks)?;
        let sums = name.ends_with("_sums");
        Ok((0..len)
            .map(|i| {
                let chunk = (0..chunks).map(|c| partials[i + c * len]);
                if sums { chunk.sum() } else { chunk.fold(0.0, nan_max) }
            })
            .collect())
    }

    /// [`Backend::norm`](crate::backend::Backend::norm).
    pub(super) fn norm_of<T: Scalar>(&self, norm: Norm, a: View<'_, Cuda, T>) -> Result<T> {
        if a.rows() == 0 || a.cols() == 0 {
            return Ok(T::ZERO);
        }
        let v = match norm {
            Norm::Max => self.reduce("max_abs", &a, None)?,
            Norm::One => self.max_abs_sum("col_abs_sums", &a)?,
            Norm::Inf => self.max_abs_sum("row_abs_sums", &a)?,
            Norm::Frobenius => {
                // Scaled by the largest entry so that no square overflows.
                let scale = self.reduce("max_abs", &a, None)?;
                if scale == 0.0 || !scale.is_finite() {
                    scale
                } else {
                    scale * self.reduce("sum_sq_scaled", &a, Some(scale))?.sqrt()
                }
            }
        };
        Ok(T::from_f64(v))
    }

    /// [`Backend::iamax`](crate::backend::Backend::iamax).
    pub(super) fn largest_abs<T: Scalar>(&self, x: View<'_, Cuda, T>) -> Result<Option<usize>> {
        let len = check::vector("iamax", &x)?;
        if len == 0 {
            return Ok(None);
        }
        let b = x.block();
        let inc = if b.cols == 1 { 1 } else { b.ld };
        let cfg = grid_1d(len, MAX_PARTIALS);
        let parts = cfg.grid_dim.0 as usize;
        let (idx, val) = (self.scratch::<i64>(parts)?, self.scratch::<f64>(parts)?);
        let args = [ptr(&x), n(inc), n(len), Arg::Ptr(self.slice_ptr(&idx)), Arg::Ptr(self.slice_ptr(&val))];
        self.launch("reduce", &format!("iamax_{}", T::NAME), cfg, &args)?;
        let (idx, val) = (self.read(&idx, parts)?, self.read(&val, parts)?);
        // The kernel's rule across blocks: first NaN, else largest, ties to the first.
        let mut best: Option<(i64, f64)> = None;
        for (&i, &v) in idx.iter().zip(&val) {
            if i < 0 {
                continue;
            }
            best = match best {
                None => Some((i, v)),
                Some((bi, bv)) => {
                    let better = match (v.is_nan(), bv.is_nan()) {
                        (true, true) => i < bi,
                        (true, false) => true,
                        (false, true) => false,
                        (false, false) => v > bv || (v == bv && i < bi),
                    };
                    Some(if better { (i, v) } else { (bi, bv) })
                }
            };
        }
        Ok(best.map(|(i, _)| i as usize))
    }

    /// [`Backend::find_non_finite`](crate::backend::Backend::find_non_finite).
    pub(super) fn first_non_finite<T: Scalar>(&self, a: View<'_, Cuda, T>) -> Result<Option<(usize, usize)>> {
        let (rows, cols) = (a.rows(), a.cols());
        if rows == 0 || cols == 0 {
            return Ok(None);
        }
        let first = self.scratch::<u64>(1)?;
        // All ones, on the queue: a copy from the host would wait for it.
        // SAFETY: 8 bytes of `first`, allocated on this queue.
        unsafe { cudarc::driver::result::memset_d8_async(self.slice_ptr(&first), 0xff, 8, self.stream.cu_stream()) }
            .map_err(driver("find_non_finite"))?;
        let args = [ptr(&a), n(a.block().ld), n(rows), n(cols), Arg::Ptr(self.slice_ptr(&first))];
        self.launch("reduce", &format!("first_non_finite_{}", T::NAME), grid_1d(rows * cols, MAX_BLOCKS), &args)?;
        let k = self.read(&first, 1)?[0];
        Ok((k != u64::MAX).then(|| ((k as usize) % rows, (k as usize) / rows)))
    }
}
