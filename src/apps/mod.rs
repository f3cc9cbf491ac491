//! Applications built on the library's solvers: each a model with its
//! scenarios and its verification against analytic answers.

pub mod swe;
