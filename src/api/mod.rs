//! The user-facing API: a [`Device`], and matrices that live on it.
//!
//! Calls return at once: on a GPU they enqueue work on the device's stream,
//! and the CPU backend simply runs eagerly. Only reading a result to the host
//! ([`Matrix::to_host`], [`Matrix::to_faer`], norms) waits. An operator cannot
//! return a `Result`, so `&a * &b` with mismatched shapes gives a matrix that
//! carries the error and raises it at its first read, as a failure found on
//! the device would be; [`Matrix::matmul`] and friends report it at once.

/// Runs `$body` with `$be` bound to the concrete backend of the device
/// `$dev`: the body is compiled once per backend, so generic code over
/// [`Backend`](crate::backend::Backend) runs on whichever the device has.
///
/// ```
/// use gpumat::{Device, backend::Backend};
/// let dev = Device::cpu();
/// let name = gpumat::with_backend!(dev, be => be.name());
/// assert!(name.starts_with("CPU"));
/// ```
#[macro_export]
macro_rules! with_backend {
    ($dev:expr, $be:ident => $body:expr) => {
        match $dev.backend() {
            $crate::api::device::AnyBackend::Cpu($be) => $body,
            $crate::api::device::AnyBackend::Cuda($be) => $body,
        }
    };
}

mod cholesky;
pub mod device;
// Host memory the devices copy at full speed.
mod host;
// Sharing memory with other GPU libraries (DLPack).
mod interop;
// Symmetric indefinite LDLᵀ.
mod ldlt;
mod lu;
pub mod matrix;
mod ops;
// Scaled Gram matrices and weighted least squares.
mod scaled_gram;
pub use scaled_gram::scaled_gram_to_rfp;
// MATLAB's `\`: the factorization chosen from the matrix, the answer judged.
mod solve;
pub mod sym;
pub mod tri;
// The checks on arguments that the API makes before any work.
mod validate;

pub use crate::backend::{Diag, Norm};
pub use crate::layout::Uplo;
pub use cholesky::Cholesky;
pub use device::Device;
pub use host::{HostArray, is_page_locked};
pub use ldlt::{Ldlt, LdltMethod};
pub use lu::{Lu, Rref};
pub use matrix::Matrix;
pub use solve::{Method, Solution, SolveOptions, check_rcond};
pub use sym::{Sym, SymStorage, packed_layout};
pub use tri::Tri;

// FP64 answers from low-precision factorizations, refined.
mod mixed;
pub use mixed::{FactorPrecision, LowLu, MixedOptions, MixedTimings, Refined};

// Householder QR and least squares.
mod lstsq;
mod pivoted_qr;
mod qr;
pub use lstsq::{LstsqSolution, lstsq, lstsq_with};
pub use pivoted_qr::PivotedQr;
pub use qr::Qr;

// Weighted least squares by mixed-precision normal equations.
mod wls;
pub use wls::{WlsSolution, wls, wls_rows, wls_rows_with, wls_with};
