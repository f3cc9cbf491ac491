//! Solvers built on the factorizations.

// Least squares by QR with refinement (issue 5, part B).
pub mod dd;
pub mod lstsq;

// Mixed-precision weighted least squares by the normal equations (issue 5, item 2).
pub mod wls;
