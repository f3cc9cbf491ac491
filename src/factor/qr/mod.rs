//! Householder QR of an `m × n` matrix: `A = Q·R`, `Q` orthogonal as a
//! product of `k = min(m, n)` reflectors, `R` upper trapezoidal.
//!
//! Blocked in LAPACK's compact WY form (`dgeqrt`): each panel of `nb`
//! columns is factored recursively (`panel.rs`) down to leaves for the
//! backend's `householder` primitive, which also forms the `nb × nb`
//! triangular `T` with `H₀⋯H_{nb−1} = I − V·T·Vᵀ`, and
//! the trailing matrix is updated as `C −= V·Tᵀ·(Vᵀ·C)` with `trmm` and
//! `gemm`, where nearly all the work is.
//!
//! Storage, as LAPACK's: the factored `m × n` array holds `R` on and above
//! the diagonal and the reflectors' vectors below it (unit first entries
//! implicit); the `T` factors of the panels sit side by side in a
//! `min(nb, k) × k` array, panel `p`'s in columns `p·nb..`, rows `0..kb`.
//! The block size is the `T` array's row count, so the factors describe
//! themselves.

mod apply;
mod condition;
mod factor;
mod panel;
mod pivoted;
mod reconstruct;
mod solve;

pub use apply::apply_q;
pub use condition::{condition_estimate, r_diagonal};
pub use factor::{QrParams, factor_in_place};
pub use panel::{factor_panel, form_t};
pub use pivoted::factor_pivoted_in_place;
pub use reconstruct::{reconstruct, thin_q};
pub use solve::solve_in_place;
