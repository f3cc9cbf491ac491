//! LDLᵀ factorization of a symmetric indefinite matrix from its lower
//! triangle: `P·A·Pᵀ = L·D·Lᵀ` with `L` unit lower triangular and `D` block
//! diagonal (1×1 and 2×2 blocks), by Bunch–Kaufman pivoting (Bunch and
//! Kaufman 1977); `P·A·Pᵀ = L·T·Lᵀ` with `T` tridiagonal, by Aasen's method
//! (Aasen 1971); or `A = L·D·Lᵀ` without pivoting for matrices known to
//! allow it. Full and RFP storage, through the same [`Triangle`] map as
//! Cholesky.
//!
//! [`Triangle`]: crate::backend::Triangle

mod aasen;
mod condition;
mod diagonal;
mod factor;
mod reconstruct;
mod solve;
mod tridiagonal;
mod unpivoted;

pub use condition::rcond;
pub use diagonal::{BlockDiagonal, Inertia};
pub use factor::{LdltParams, LdltPivoting, LdltWorkspace, factor_in_place, factor_in_place_with};
pub use reconstruct::reconstruct;
pub use solve::{Middle, solve_in_place};
pub use tridiagonal::SymTridiagonal;
