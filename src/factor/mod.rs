//! Factorizations, each written once against [`Backend`](crate::backend::Backend):
//! one folder per factorization, with `factor.rs`, `solve.rs` and
//! `reconstruct.rs` inside, as faer does.

pub mod cholesky;
// The Hager–Higham estimate of ‖A⁻¹‖₁ that every factorization's condition
// estimate uses.
pub mod condition;
// Row and column scalings by powers of two (dgeequb, dpoequb).
pub mod equilibrate;
pub mod ldlt;
pub mod lu;
// Householder QR.
pub mod qr;
// The blocked loop of Cholesky and unpivoted LDLᵀ.
pub(crate) mod symmetric;
// Solves with a lower triangle in full or RFP storage.
pub mod triangular;
