//! Factorizations, each written once against [`Backend`](crate::backend::Backend):
//! one folder per factorization, with `factor.rs`, `solve.rs` and
//! `reconstruct.rs` inside, as faer does.

pub mod cholesky;
pub mod lu;
// Householder QR.
pub mod qr;
