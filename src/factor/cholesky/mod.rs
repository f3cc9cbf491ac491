//! Cholesky factorization of a symmetric positive definite matrix:
//! `A = L·Lᵀ` from the lower triangle, or `A = Uᵀ·U` from the upper one.
//!
//! Blocked and right-looking: each step factors a diagonal block with the
//! backend's `potrf`, solves for the panel below (or beside) it with `trsm`,
//! and updates the trailing matrix with `syrk`, where nearly all the work is.

mod condition;
mod factor;
mod reconstruct;
mod rfp;
mod solve;

pub use condition::{rcond, rcond_rfp};
pub(crate) use factor::factor_in_place_once;
pub use factor::{CholeskyParams, factor_in_place};
pub use reconstruct::reconstruct;
pub use rfp::{factor_rfp_in_place, solve_rfp_in_place};
pub use solve::{apply_inverse_wide, inverse_lower_wide, solve_in_place, solve_wide_in_place};
