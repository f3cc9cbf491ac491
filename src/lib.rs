//! gpumat: dense linear algebra on NVIDIA GPUs, with the CPU as an equal
//! fallback.
//!
//! The layers, bottom to top (see `docs/DESIGN.md`): [`scalar`], [`layout`],
//! [`backend`], [`factor`] and [`solve`] (algorithms written once over the
//! backend), [`api`], [`io`]; [`batch`] for many small systems at once,
//! and [`apps`] for applications built on them (the shallow-water model).

pub mod api;
pub mod apps;
pub mod backend;
pub mod batch;
pub mod dist;
pub mod error;
pub mod factor;
pub mod io;
pub mod layout;
pub mod optim;
pub mod scalar;
pub mod solve;

pub use api::{Cholesky, Device, HostArray, Ldlt, LdltMethod, Lu, Matrix, PivotedQr, Qr, Rref, Sym, Tri};
pub use api::{FactorPrecision, LowLu, MixedOptions, MixedTimings, Refined};
pub use api::{LstsqSolution, lstsq, lstsq_with};
pub use api::{Method, Solution, SolveOptions, SymStorage};
pub use api::{WlsSolution, wls, wls_rows, wls_rows_with, wls_with};
pub use batch::{Batch, BatchRef};
pub use error::{DeviceLibrary, Error, Result};
pub use factor::ldlt::{BlockDiagonal, Inertia, LdltParams, SymTridiagonal};
pub use factor::lu::Determinant;
pub use scalar::{Elem, Scalar};
pub use solve::refine::{RefineParams, Refinement};
pub use solve::wls::{Precision, Stopping, WlsParams, WlsPath, WlsTimings};
