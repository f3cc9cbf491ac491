//! Solvers built on the factorizations.

// Checks on the host data of a problem.
pub mod check;

// Least squares by QR with refinement.
pub mod lstsq;

// Refinement to FP64 accuracy from a low-precision factor: classical and
// GMRES-IR.
pub mod refine;

// Mixed-precision weighted least squares by the normal equations.
pub mod wls;
// Its random test problems (Jung & O'Leary 2008, Tables 1 and 2).
pub mod wls_problem;
