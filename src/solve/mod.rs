//! Solvers built on the factorizations.

// Least squares by QR with refinement (issue 5, part B).
pub mod dd;
pub mod lstsq;
