//! The two-dimensional shallow-water equations with Chézy's bottom
//! friction, by the alternating-direction semi-implicit scheme of Casulli
//! (1990) on a staggered grid: each half step is one symmetric positive
//! definite tridiagonal system per grid line, solved as one batch
//! ([`crate::backend::Backend::tridiagonal_solve`]), and the convective
//! terms are Eulerian–Lagrangian (backward streamlines with bilinear
//! interpolation). Written once over the `Backend`, so that it runs on the
//! CPU and on the GPU, or with its systems split between the two.
//!
//! [`Grid`], [`Params`] and [`Fields`] describe a run; [`Model`] steps it
//! on a device; [`scenario`] holds the test cases with their analytic
//! references (Stoker 1957's dam break, the seiche of a closed basin,
//! Thacker 1981's bowl). Cells stay wet unless [`Params::drying`] lets them
//! dry and flood (Casulli and Cheng 1992).

mod fields;
mod grid;
mod model;
mod params;
pub mod scenario;
pub mod stoker;

pub use fields::{Diagnostics, Fields, Neumaier};
pub use grid::Grid;
pub use model::{Execution, Model};
pub use params::Params;
