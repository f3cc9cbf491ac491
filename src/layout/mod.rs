//! Storage formats and their index maps.
//!
//! Everything is column-major with an explicit leading dimension, as in LAPACK
//! and cuBLAS, and every format follows LAPACK's conventions exactly, so that
//! arrays can be handed to a vendor routine unchanged:
//!
//! - [`Full`]: an `m × n` array, entry `(i, j)` at `i + j·ld`; a triangle of
//!   it is named by [`Uplo`] ([`in_triangle`]).
//! - [`Packed`]: LAPACK's column-packed triangle (`dpptrf`, `dtrttp`).
//! - [`Rfp`]: LAPACK's rectangular full packed format (`dpftrf`, `dtrttf`):
//!   a triangle of order `n` in `n(n+1)/2` entries laid out as a full
//!   rectangle, so that it splits into two triangles and one rectangle
//!   ([`RfpPieces`]) on which ordinary full-storage kernels run.
//!
//! Indices are 0-based. The conversions between every pair of formats copy
//! one triangle; they check every length and return `Err` rather than panic.

mod convert;
mod full;
mod packed;
pub(crate) mod rfp;

pub use convert::{full_to_packed, full_to_rfp, packed_to_full, packed_to_rfp, rfp_to_full, rfp_to_packed};
pub use full::{Full, in_triangle};
pub use packed::Packed;
pub use rfp::{RectPiece, Rfp, RfpPieces, TrianglePiece};

/// Which triangle of a square matrix is stored or referenced (LAPACK's
/// `UPLO`): `Lower` is `i ≥ j`, `Upper` is `i ≤ j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Uplo {
    Lower,
    Upper,
}

impl Uplo {
    /// The other triangle: where the transpose of this one lives.
    pub fn flip(self) -> Self {
        match self {
            Uplo::Lower => Uplo::Upper,
            Uplo::Upper => Uplo::Lower,
        }
    }
}

/// Whether an RFP array holds the rectangle itself or its transpose
/// (LAPACK's `TRANSR` = `'N'` or `'T'`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transr {
    Normal,
    Transpose,
}

impl Transr {
    /// The other form.
    pub fn flip(self) -> Self {
        match self {
            Transr::Normal => Transr::Transpose,
            Transr::Transpose => Transr::Normal,
        }
    }
}
