//! Batched tridiagonal solves on the GPU (`kernels/tridiagonal.cu`): one
//! thread per system, the CPU backend's elimination step for step.

use super::launch::{BLOCK, grid_1d};
use super::{Arg, Cuda, n, ptr_mut};
use crate::backend::{SystemLayout, ViewMut, check};
use crate::{Result, Scalar};

impl Cuda {
    pub(super) fn batched_tridiagonal<T: Scalar>(
        &self,
        layout: SystemLayout,
        pivoting: bool,
        (dl, d, du): (ViewMut<'_, Cuda, T>, ViewMut<'_, Cuda, T>, ViewMut<'_, Cuda, T>),
        b: ViewMut<'_, Cuda, T>,
        info: ViewMut<'_, Cuda, i32>,
    ) -> Result<()> {
        let (m, count) = check::tridiagonal(layout, &dl, &d, &du, &b, &info)?;
        if m == 0 || count == 0 {
            return Ok(());
        }
        // One system per thread: as many blocks as that takes.
        let cfg = grid_1d(count, count.div_ceil(BLOCK));
        let rows = Arg::I32(i32::from(layout == SystemLayout::Rows));
        let args = [
            ptr_mut(&dl),
            n(dl.block().ld),
            ptr_mut(&d),
            n(d.block().ld),
            ptr_mut(&du),
            n(du.block().ld),
            ptr_mut(&b),
            n(b.block().ld),
            n(m),
            n(count),
            rows,
            Arg::I32(i32::from(pivoting)),
            ptr_mut(&info),
        ];
        self.launch("tridiagonal", &format!("tridiagonal_{}", T::NAME), cfg, &args)
    }
}
