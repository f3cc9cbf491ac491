//! The permutation that LAPACK-style pivots make.

use crate::{Error, Result};

/// The rows of `P·A` for the pivots `ipiv` (1-based, row `i` exchanged with
/// row `ipiv[i]` in order, as `laswp` applies them): row `i` of `P·A` is
/// row `perm[i]` of `A`, 0-based. For
/// [`Backend::permute_rows`](crate::backend::Backend::permute_rows), which
/// applies it in one pass.
/// A pivot outside `1..=n` is an error that names it.
pub fn permutation(ipiv: &[i32]) -> Result<Vec<i32>> {
    let n = ipiv.len();
    let mut perm: Vec<i32> = (0..n).map(|i| i32::try_from(i).unwrap_or(i32::MAX)).collect();
    for (i, &p) in ipiv.iter().enumerate() {
        let q = usize::try_from(p)
            .ok()
            .filter(|q| (1..=n).contains(q))
            .ok_or_else(|| Error::InvalidArgument(format!("pivot {p} in row {} is outside 1..={n}", i + 1)))?;
        perm.swap(i, q - 1);
    }
    Ok(perm)
}
