//! LU factorization with partial pivoting, `P·A = L·U` (`L` unit lower and
//! `U` upper in one array, pivots LAPACK-style), its unpivoted variant for
//! matrices known to be safe, and Gauss-Jordan elimination.
//!
//! Blocked and right-looking: each step factors a panel (recursively, down
//! to the backend's `getrf_panel`), applies its row interchanges across the
//! matrix (`laswp`), solves for the block row of `U` (`trsm`) and updates
//! the trailing matrix (`gemm`), where nearly all the work is.

mod condition;
mod determinant;
mod factor;
mod gauss_jordan;
mod permutation;
mod reconstruct;
mod solve;

pub use condition::rcond;
pub use determinant::Determinant;
pub use factor::{LuParams, factor_in_place};
pub use gauss_jordan::{Echelon, rref_in_place};
pub use permutation::permutation;
pub use reconstruct::reconstruct;
pub use solve::{solve_in_place, solve_wide_in_place};
