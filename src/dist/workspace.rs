//! Each rank's copies of the current panel, two of each: with look-ahead
//! the side queue still updates with step `k`'s copies while the main queue
//! receives step `k + 1`'s.

use crate::backend::Backend;
use crate::{Result, Scalar};

pub(super) struct Workspace<B: Backend, T: Scalar> {
    /// The panel's rows for this rank's rows (`local rows × nb`).
    pub lrow: [B::Buffer<T>; 2],
    /// The panel's other factor for this rank's columns (`local columns ×
    /// nb`): `L`'s rows again for Cholesky, `U`'s block row for LU.
    pub lcol: [B::Buffer<T>; 2],
}

impl<B: Backend, T: Scalar> Workspace<B, T> {
    pub fn new(be: &B, local_rows: usize, local_cols: usize, nb: usize) -> Result<Self> {
        let rows = || be.alloc::<T>(local_rows * nb);
        let cols = || be.alloc::<T>(local_cols * nb);
        Ok(Workspace { lrow: [rows()?, rows()?], lcol: [cols()?, cols()?] })
    }
}
