//! Solving with a distributed factor: block triangular solves, one block
//! of the solution per step, the right-hand sides replicated along the
//! process rows (or columns) and each step's update sent by broadcast.
//!
//! The forward solve with `L` and the backward solve with `U` hold the
//! right-hand sides by process row, the rows their blocks of `L`/`U` touch;
//! the backward solve with `Lᵀ` holds them by process column, since
//! `Lᵀ`'s blocks above the diagonal are `L`'s blocks left of it. The
//! right-hand sides (`n × nrhs`, small beside the factor) pass through the
//! host between the two.

use faer::{Mat, MatRef};

use super::cluster::{Cluster, Rank};
use super::comm::Communicator;
use super::grid::Cyclic;
use super::lu::permute_rows;
use super::matrix::DistMatrix;
use crate::backend::{Backend, Block, Diag, Op, Side, View, ViewMut};
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// `X` with `A·X = B`, `A = L·Lᵀ` factored by [`super::cholesky`].
pub fn cholesky_solve<B: Backend, C: Communicator<B>, T: Scalar>(
    cluster: &Cluster<B, C>,
    factor: &DistMatrix<B, T>,
    b: MatRef<'_, T>,
) -> Result<Mat<T>> {
    check(cluster, factor, b.nrows())?;
    let y = sweep(cluster, factor, b.to_owned(), Sweep::Forward(Diag::NonUnit))?;
    sweep(cluster, factor, y, Sweep::BackwardTransposed)
}

/// `X` with `A·X = B`, `P·A = L·U` factored by [`super::lu`] with pivots
/// `ipiv`.
pub fn lu_solve<B: Backend, C: Communicator<B>, T: Scalar>(
    cluster: &Cluster<B, C>,
    factor: &DistMatrix<B, T>,
    ipiv: &[i32],
    b: MatRef<'_, T>,
) -> Result<Mat<T>> {
    check(cluster, factor, b.nrows())?;
    if ipiv.len() != factor.rows.len {
        return Err(Error::dims("dist::lu_solve", format!("{} pivots for order {}", ipiv.len(), factor.rows.len)));
    }
    let mut pb = b.to_owned();
    permute_rows(ipiv, &mut pb)?;
    let y = sweep(cluster, factor, pb, Sweep::Forward(Diag::Unit))?;
    sweep(cluster, factor, y, Sweep::Backward)
}

fn check<B: Backend, C: Communicator<B>, T: Scalar>(
    cluster: &Cluster<B, C>,
    f: &DistMatrix<B, T>,
    rows: usize,
) -> Result<()> {
    f.check_cluster(cluster)?;
    if f.rows.len != f.cols.len || rows != f.rows.len {
        return Err(Error::dims(
            "dist::solve",
            format!("the factor is {}×{}, B has {rows} rows", f.rows.len, f.cols.len),
        ));
    }
    Ok(())
}

/// One triangular solve.
#[derive(Clone, Copy)]
enum Sweep {
    /// `L·Y = B`, first block first.
    Forward(Diag),
    /// `U·X = Y` (the upper triangle), last block first.
    Backward,
    /// `Lᵀ·X = Y`, last block first.
    BackwardTransposed,
}

/// Runs one sweep on every rank and returns the solution on the host.
fn sweep<B: Backend, C: Communicator<B>, T: Scalar>(
    cluster: &Cluster<B, C>,
    f: &DistMatrix<B, T>,
    b: Mat<T>,
    kind: Sweep,
) -> Result<Mat<T>> {
    let (rows, cols) = (f.rows, f.cols);
    // By process row, or by process column for `Lᵀ`.
    let by_cols = matches!(kind, Sweep::BackwardTransposed);
    let b = &b;
    let parts = cluster.run(f.local.iter().collect(), |rank, buf| {
        let (dim, proc) = if by_cols { (cols, rank.pc) } else { (rows, rank.pr) };
        let local: Vec<T> = (0..b.ncols())
            .flat_map(|j| (0..dim.local_len(proc)).map(move |l| b[(dim.to_global(proc, l), j)]))
            .collect();
        let mut y = rank.be.upload(&local)?;
        sweep_rank(rank, rows, cols, buf, &mut y, b.ncols(), kind)?;
        let mut host = vec![T::ZERO; local.len()];
        rank.be.download(&y, &mut host)?;
        Ok(host)
    })?;
    // Every rank of a process row (column) holds the same part.
    let mut x = Mat::zeros(b.nrows(), b.ncols());
    for (rank, part) in cluster.ranks().iter().zip(parts) {
        let (dim, proc, first) = if by_cols { (cols, rank.pc, rank.pr) } else { (rows, rank.pr, rank.pc) };
        if first != 0 {
            continue;
        }
        let len = dim.local_len(proc);
        for j in 0..b.ncols() {
            for l in 0..len {
                x[(dim.to_global(proc, l), j)] = part[j * len + l];
            }
        }
    }
    Ok(x)
}

fn sweep_rank<B: Backend, C: Communicator<B>, T: Scalar>(
    rank: &Rank<B, C>,
    rows: Cyclic,
    cols: Cyclic,
    factor: &B::Buffer<T>,
    y: &mut B::Buffer<T>,
    nrhs: usize,
    kind: Sweep,
) -> Result<()> {
    let be = &rank.be;
    let (p, q, nb) = (rows.procs, cols.procs, rows.nb);
    let (pr, pc) = (rank.pr, rank.pc);
    let (ml, nl) = (rows.local_len(pr), cols.local_len(pc));
    let whole = Block { offset: 0, rows: ml, cols: nl, ld: ml.max(1) };
    let ylen = if matches!(kind, Sweep::BackwardTransposed) { nl } else { ml };
    let yblock = Block { offset: 0, rows: ylen, cols: nrhs, ld: ylen.max(1) };
    let mut t = be.alloc::<T>(nb * nrhs)?;
    let mut w = be.alloc::<T>(ml.max(nl) * nrhs)?;
    let blocks: Vec<usize> = match kind {
        Sweep::Forward(_) => (0..rows.blocks()).collect(),
        _ => (0..rows.blocks()).rev().collect(),
    };
    for k in blocks {
        let kb = rows.block_len(k);
        let (rk, ck) = (k % p, k % q);
        let (lr, lc) = (rows.local_start(k, pr), cols.local_start(k, pc));
        let diag = (pr, pc) == (rk, ck);
        // This block of the solution, on the diagonal's rank.
        let (own, uplo, op, unit) = match kind {
            Sweep::Forward(unit) => (lr, Uplo::Lower, Op::NoTrans, unit),
            Sweep::Backward => (lr, Uplo::Upper, Op::NoTrans, Diag::NonUnit),
            Sweep::BackwardTransposed => (lc, Uplo::Lower, Op::Trans, Diag::NonUnit),
        };
        if diag {
            be.copy(View::new(y, yblock.sub(own, 0, kb, nrhs)?)?, ViewMut::dense(&mut t, kb, nrhs)?)?;
            let akk = View::new(factor, whole.sub(lr, lc, kb, kb)?)?;
            be.trsm(Side::Left, uplo, op, unit, T::ONE, akk, ViewMut::dense(&mut t, kb, nrhs)?)?;
        }
        if by_rows(kind) {
            // x_k to the diagonal's process row (its copy of y) and column
            // (which holds the blocks that x_k multiplies).
            if pr == rk {
                rank.row.broadcast(be, ViewMut::dense(&mut t, kb, nrhs)?, ck)?;
                be.copy(View::dense(&t, kb, nrhs)?, ViewMut::new(y, yblock.sub(lr, 0, kb, nrhs)?)?)?;
            }
            let (first, len) = match kind {
                Sweep::Forward(_) => (rows.local_start(k + 1, pr), ml - rows.local_start(k + 1, pr)),
                _ => (0, lr),
            };
            if pc == ck {
                rank.col.broadcast(be, ViewMut::dense(&mut t, kb, nrhs)?, rk)?;
                if len > 0 {
                    let a = View::new(factor, whole.sub(first, lc, len, kb)?)?;
                    be.gemm(
                        T::ONE,
                        a,
                        Op::NoTrans,
                        View::dense(&t, kb, nrhs)?,
                        Op::NoTrans,
                        T::ZERO,
                        ViewMut::dense(&mut w, len, nrhs)?,
                    )?;
                }
            }
            if len > 0 {
                rank.row.broadcast(be, ViewMut::dense(&mut w, len, nrhs)?, ck)?;
                be.axpy(-T::ONE, View::dense(&w, len, nrhs)?, ViewMut::new(y, yblock.sub(first, 0, len, nrhs)?)?)?;
            }
        } else {
            if pc == ck {
                rank.col.broadcast(be, ViewMut::dense(&mut t, kb, nrhs)?, rk)?;
                be.copy(View::dense(&t, kb, nrhs)?, ViewMut::new(y, yblock.sub(lc, 0, kb, nrhs)?)?)?;
            }
            let len = lc;
            if pr == rk {
                rank.row.broadcast(be, ViewMut::dense(&mut t, kb, nrhs)?, ck)?;
                if len > 0 {
                    let a = View::new(factor, whole.sub(lr, 0, kb, len)?)?;
                    be.gemm(
                        T::ONE,
                        a,
                        Op::Trans,
                        View::dense(&t, kb, nrhs)?,
                        Op::NoTrans,
                        T::ZERO,
                        ViewMut::dense(&mut w, len, nrhs)?,
                    )?;
                }
            }
            if len > 0 {
                rank.col.broadcast(be, ViewMut::dense(&mut w, len, nrhs)?, rk)?;
                be.axpy(-T::ONE, View::dense(&w, len, nrhs)?, ViewMut::new(y, yblock.sub(0, 0, len, nrhs)?)?)?;
            }
        }
    }
    Ok(())
}

fn by_rows(kind: Sweep) -> bool {
    !matches!(kind, Sweep::BackwardTransposed)
}
