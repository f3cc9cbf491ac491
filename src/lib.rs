//! gpumat: dense linear algebra on NVIDIA GPUs, with the CPU as an equal
//! fallback.
//!
//! The layers, bottom to top (see `DESIGN.md`): [`scalar`], [`layout`],
//! [`backend`], [`api`], [`io`].

pub mod api;
pub mod backend;
pub mod error;
pub mod factor;
pub mod io;
pub mod layout;
pub mod scalar;
// Least squares by QR with refinement (issue 5, part B).
pub mod solve;

pub use api::{Cholesky, Device, Matrix, Sym, Tri};
pub use api::{Lu, Rref};
pub use error::{Error, Result};
pub use scalar::{Elem, Scalar};

// Householder QR and least squares (issue 5, part B).
pub use api::{LstsqSolution, Qr, lstsq, lstsq_with};

// Mixed-precision weighted least squares (issue 5, items 2 and 4).
pub use api::{WlsSolution, wls, wls_rows, wls_rows_with, wls_with};
pub use solve::wls::{Precision, Stopping, WlsParams, WlsPath, WlsTimings};
