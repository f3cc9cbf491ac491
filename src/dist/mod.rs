//! One factorization across several devices: matrices dealt 2-D
//! block-cyclically over a `P × Q` grid of ranks ([`DistMatrix`], in full
//! or lower-block [`Storage`]), factored by Cholesky ([`cholesky`]) or LU
//! with partial pivoting ([`lu`]), solved and their condition estimated
//! ([`cholesky_solve`], [`lu_rcond`], …). The algorithms are written once
//! for one rank against a [`Communicator`] (NCCL between GPUs, channels
//! between in-process ranks on the CPU), with the single-device code of
//! [`crate::factor`] and the backend primitives for each rank's own work.
//!
//! One process drives the GPUs of one host, a thread per rank
//! ([`Cluster`]); see [`Nccl`] for one process per GPU across hosts.

mod channels;
mod cholesky;
mod cluster;
mod comm;
mod grid;
mod local;
mod lu;
mod matrix;
mod nccl;
mod rendezvous;
mod solve;
mod workspace;

pub use channels::Channels;
pub use cholesky::cholesky;
pub use cluster::{Cluster, DEVICES_VAR, MODULE_LOADING_VAR, Rank, devices_from_env, load_kernels_eagerly};
pub use comm::Communicator;
pub use grid::{Cyclic, Grid};
pub use local::Storage;
pub use lu::{lu, permute_rows};
pub use matrix::DistMatrix;
pub use nccl::Nccl;
pub use solve::{cholesky_rcond, cholesky_solve, lu_rcond, lu_solve, lu_solve_transposed};

/// Tuning of the distributed factorizations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DistParams {
    /// Columns per `gemm` of the trailing update (rounded to whole blocks).
    pub update_tile: usize,
    /// Look-ahead: the next block column first, on the main queue, the
    /// rest of the update on the side queue beside the next panel; without
    /// it, the whole update on the main queue before the next panel.
    pub look_ahead: bool,
}

impl Default for DistParams {
    fn default() -> Self {
        DistParams { update_tile: 1024, look_ahead: true }
    }
}
