use super::Cuda;
use crate::backend::{AasenPanel, BufferMut, Triangle, ViewMut};
use crate::{Error, Result, Scalar};

impl Cuda {
    pub(super) fn aasen_panel_kernel<T: Scalar>(
        &self,
        _a: &BufferMut<'_, Cuda, T>,
        _tri: &Triangle,
        _k: usize,
        _panel: AasenPanel<'_, Cuda, T>,
    ) -> Result<()> {
        Err(Error::InvalidArgument("todo".into()))
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn aasen_interchange_kernels<T: Scalar>(
        &self,
        _a: &BufferMut<'_, Cuda, T>,
        _tri: &Triangle,
        _k: usize,
        _panel: AasenPanel<'_, Cuda, T>,
        _ipiv: ViewMut<'_, Cuda, i32>,
        _x: ViewMut<'_, Cuda, T>,
        _y: ViewMut<'_, Cuda, T>,
    ) -> Result<()> {
        Err(Error::InvalidArgument("todo".into()))
    }
}
