//! The LDLᵀ primitives on the GPU (being written).

use super::Cuda;
use crate::backend::{BufferMut, SymPanel, SymPivoting, Triangle, View, ViewMut};
use crate::{Error, Result, Scalar};

impl Cuda {
    pub(super) fn ldlt_sytrf_panel<T: Scalar>(
        &self,
        _a: &BufferMut<'_, Cuda, T>,
        _tri: &Triangle,
        _k: usize,
        _panel: SymPanel<'_, Cuda, T>,
        _pivoting: SymPivoting,
    ) -> Result<()> {
        Err(Error::InvalidArgument("sytrf_panel: not yet on the GPU".into()))
    }

    pub(super) fn ldlt_block_diagonal_solve<T: Scalar>(
        &self,
        _d: View<'_, Cuda, T>,
        _e: View<'_, Cuda, T>,
        _b: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        Err(Error::InvalidArgument("block_diagonal_solve: not yet on the GPU".into()))
    }
}
