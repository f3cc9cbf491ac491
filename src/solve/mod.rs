//! Solvers built on the factorizations.

// Least squares by QR with refinement.
pub mod lstsq;

// Mixed-precision weighted least squares by the normal equations.
pub mod wls;
