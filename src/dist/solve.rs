//! Solving with a distributed factor, and its condition: block triangular
//! solves, one block of the solution per step, the right-hand sides
//! replicated along the process rows (or columns) and each step's update
//! sent by broadcast.
//!
//! A solve with a triangle by its block columns (`L·Y = B`, `U·X = Y`)
//! holds the right-hand sides by process row, the rows those blocks touch;
//! a solve with a transposed triangle (`Lᵀ`, `Uᵀ`) uses the triangle's
//! block rows and holds them by process column. The right-hand sides
//! (`n × nrhs`, small beside the factor) pass through the host between two
//! solves.

use faer::{Mat, MatRef};

use super::cluster::{Cluster, Rank};
use super::comm::Communicator;
use super::grid::Cyclic;
use super::local::{Local, Storage};
use super::lu::{interchange_rows, permute_rows};
use super::matrix::DistMatrix;
use crate::backend::{Backend, Block, Diag, Op, Side, View, ViewMut};
use crate::factor::condition::inverse_one_norm;
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// `X` with `A·X = B`, `A = L·Lᵀ` factored by [`super::cholesky`].
pub fn cholesky_solve<B: Backend, C: Communicator<B>, T: Scalar>(
    cluster: &Cluster<B, C>,
    factor: &DistMatrix<B, T>,
    b: MatRef<'_, T>,
) -> Result<Mat<T>> {
    check(cluster, factor, b.nrows())?;
    let y = sweep(cluster, factor, b.to_owned(), Sweep::L)?;
    sweep(cluster, factor, y, Sweep::Lt)
}

/// `X` with `A·X = B`, `P·A = L·U` factored by [`super::lu`] with pivots
/// `ipiv`.
pub fn lu_solve<B: Backend, C: Communicator<B>, T: Scalar>(
    cluster: &Cluster<B, C>,
    factor: &DistMatrix<B, T>,
    ipiv: &[i32],
    b: MatRef<'_, T>,
) -> Result<Mat<T>> {
    lu_solve_op(cluster, factor, ipiv, b, false)
}

/// `X` with `Aᵀ·X = B`, as [`lu_solve`].
pub fn lu_solve_transposed<B: Backend, C: Communicator<B>, T: Scalar>(
    cluster: &Cluster<B, C>,
    factor: &DistMatrix<B, T>,
    ipiv: &[i32],
    b: MatRef<'_, T>,
) -> Result<Mat<T>> {
    lu_solve_op(cluster, factor, ipiv, b, true)
}

fn lu_solve_op<B: Backend, C: Communicator<B>, T: Scalar>(
    cluster: &Cluster<B, C>,
    factor: &DistMatrix<B, T>,
    ipiv: &[i32],
    b: MatRef<'_, T>,
    transposed: bool,
) -> Result<Mat<T>> {
    check(cluster, factor, b.nrows())?;
    if ipiv.len() != factor.rows.len {
        return Err(Error::dims("dist::lu_solve", format!("{} pivots for order {}", ipiv.len(), factor.rows.len)));
    }
    if transposed {
        // Aᵀ = Uᵀ·Lᵀ·P: the interchanges last, in reverse order.
        let y = sweep(cluster, factor, b.to_owned(), Sweep::Ut)?;
        let mut x = sweep(cluster, factor, y, Sweep::UnitLt)?;
        interchange_rows(ipiv, &mut x, true)?;
        return Ok(x);
    }
    let mut pb = b.to_owned();
    permute_rows(ipiv, &mut pb)?;
    let y = sweep(cluster, factor, pb, Sweep::UnitL)?;
    sweep(cluster, factor, y, Sweep::U)
}

/// The reciprocal condition number `1 / (‖A‖₁·‖A⁻¹‖₁)` of the matrix whose
/// Cholesky factor is `factor`, `‖A⁻¹‖₁` estimated from solves (Hager
/// 1984, Higham 1988) as LAPACK's `dpocon`; `anorm` is `‖A‖₁`, taken
/// before factoring ([`DistMatrix::norm_one`]).
pub fn cholesky_rcond<B: Backend, C: Communicator<B>, T: Scalar>(
    cluster: &Cluster<B, C>,
    factor: &DistMatrix<B, T>,
    anorm: f64,
) -> Result<f64> {
    let n = factor.rows.len;
    let inverse = inverse_one_norm(n, |x, _| solve_vector(x, |b| cholesky_solve(cluster, factor, b)))?;
    Ok(reciprocal(anorm, inverse))
}

/// [`cholesky_rcond`] for an LU factor (LAPACK's `dgecon`).
pub fn lu_rcond<B: Backend, C: Communicator<B>, T: Scalar>(
    cluster: &Cluster<B, C>,
    factor: &DistMatrix<B, T>,
    ipiv: &[i32],
    anorm: f64,
) -> Result<f64> {
    let n = factor.rows.len;
    let inverse =
        inverse_one_norm(n, |x, transposed| solve_vector(x, |b| lu_solve_op(cluster, factor, ipiv, b, transposed)))?;
    Ok(reciprocal(anorm, inverse))
}

fn reciprocal(anorm: f64, inverse: f64) -> f64 {
    if anorm == 0.0 || inverse.is_infinite() { 0.0 } else { 1.0 / (anorm * inverse) }
}

/// Overwrites the host vector `x` with `solve(x)`, through `T`.
fn solve_vector<T: Scalar>(x: &mut [f64], solve: impl FnOnce(MatRef<'_, T>) -> Result<Mat<T>>) -> Result<()> {
    let b = Mat::from_fn(x.len(), 1, |i, _| T::from_f64(x[i]));
    let y = solve(b.as_ref())?;
    x.iter_mut().enumerate().for_each(|(i, v)| *v = y[(i, 0)].to_f64());
    Ok(())
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

/// One triangular solve with the factor's lower (`L`) or upper (`U`)
/// triangle, or their transposes.
#[derive(Clone, Copy)]
enum Sweep {
    L,
    UnitL,
    U,
    Lt,
    UnitLt,
    Ut,
}

impl Sweep {
    fn triangle(self) -> Uplo {
        match self {
            Sweep::L | Sweep::UnitL | Sweep::Lt | Sweep::UnitLt => Uplo::Lower,
            Sweep::U | Sweep::Ut => Uplo::Upper,
        }
    }

    fn diag(self) -> Diag {
        match self {
            Sweep::UnitL | Sweep::UnitLt => Diag::Unit,
            _ => Diag::NonUnit,
        }
    }

    /// By the triangle's block rows (its transpose's block columns).
    fn transposed(self) -> bool {
        matches!(self, Sweep::Lt | Sweep::UnitLt | Sweep::Ut)
    }

    /// First block first (the solved triangle is lower).
    fn ascending(self) -> bool {
        matches!(self, Sweep::L | Sweep::UnitL | Sweep::Ut)
    }
}

/// Runs one sweep on every rank and returns the solution on the host.
fn sweep<B: Backend, C: Communicator<B>, T: Scalar>(
    cluster: &Cluster<B, C>,
    f: &DistMatrix<B, T>,
    b: Mat<T>,
    kind: Sweep,
) -> Result<Mat<T>> {
    let (rows, cols) = (f.rows, f.cols);
    let by_cols = kind.transposed();
    let b = &b;
    let parts = cluster.run_collective(f.local.iter().collect(), |rank, buf| {
        let (dim, proc) = if by_cols { (cols, rank.pc) } else { (rows, rank.pr) };
        let local: Vec<T> = (0..b.ncols())
            .flat_map(|j| (0..dim.local_len(proc)).map(move |l| b[(dim.to_global(proc, l), j)]))
            .collect();
        let mut y = rank.be.upload(&local)?;
        sweep_rank(rank, (rows, cols, f.storage), buf, &mut y, b.ncols(), kind)?;
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

/// One rank's part of a sweep. Step `k`: the diagonal's rank solves for
/// block `k`; it goes to the ranks that hold that block of the solution
/// and to those that hold the triangle's blocks it multiplies, which send
/// their products along to the ranks that subtract them.
fn sweep_rank<B: Backend, C: Communicator<B>, T: Scalar>(
    rank: &Rank<B, C>,
    (rows, cols, storage): (Cyclic, Cyclic, Storage),
    factor: &B::Buffer<T>,
    y: &mut B::Buffer<T>,
    nrhs: usize,
    kind: Sweep,
) -> Result<()> {
    let be = &rank.be;
    let nb = rows.nb;
    let (pr, pc) = (rank.pr, rank.pc);
    let (ml, nl) = (rows.local_len(pr), cols.local_len(pc));
    let stored = Local::new(rows, cols, pr, pc, storage);
    // In column space the roles of process rows and columns swap.
    let t_ = kind.transposed();
    let (mine, other) = if t_ { (&rank.col, &rank.row) } else { (&rank.row, &rank.col) };
    let (dim, across) = if t_ { (cols, rows) } else { (rows, cols) };
    let (me, me_across) = if t_ { (pc, pr) } else { (pr, pc) };
    let ylen = dim.local_len(me);
    let yblock = Block { offset: 0, rows: ylen, cols: nrhs, ld: ylen.max(1) };
    let mut t = be.alloc::<T>(nb * nrhs)?;
    let mut w = be.alloc::<T>(ml.max(nl) * nrhs)?;
    let (op, gemm_op) = if t_ { (Op::Trans, Op::Trans) } else { (Op::NoTrans, Op::NoTrans) };
    let blocks: Vec<usize> =
        if kind.ascending() { (0..rows.blocks()).collect() } else { (0..rows.blocks()).rev().collect() };
    for k in blocks {
        let kb = rows.block_len(k);
        // The diagonal's rank: `k`'s owner along the solution's dimension
        // and across it.
        let (owner, owner_across) = (dim.owner(k), across.owner(k));
        let (lr, lc) = (rows.local_start(k, pr), cols.local_start(k, pc));
        let own = dim.local_start(k, me);
        if (me, me_across) == (owner, owner_across) {
            be.copy(View::new(y, yblock.sub(own, 0, kb, nrhs)?)?, ViewMut::dense(&mut t, kb, nrhs)?)?;
            let akk = View::new(factor, stored.at(lr, lc, kb, kb)?)?;
            be.trsm(Side::Left, kind.triangle(), op, kind.diag(), T::ONE, akk, ViewMut::dense(&mut t, kb, nrhs)?)?;
        }
        // x_k to the ranks that hold block k of the solution, and to those
        // that hold the triangle's blocks beside the diagonal.
        if me == owner {
            mine.broadcast(be, ViewMut::dense(&mut t, kb, nrhs)?, owner_across)?;
            be.copy(View::dense(&t, kb, nrhs)?, ViewMut::new(y, yblock.sub(own, 0, kb, nrhs)?)?)?;
        }
        // The part of the solution those blocks update.
        let (first, len) = if kind.ascending() {
            let after = dim.local_start(k + 1, me);
            (after, ylen - after)
        } else {
            (0, own)
        };
        if me_across == owner_across {
            other.broadcast(be, ViewMut::dense(&mut t, kb, nrhs)?, owner)?;
            if len > 0 && t_ {
                // The triangle's block row, a run of block columns at a time
                // (each its own array when packed).
                for (j, c) in stored.runs(first, len) {
                    let a = View::new(factor, stored.at(lr, j, kb, c)?)?;
                    let part = Block { offset: j - first, rows: c, cols: nrhs, ld: len };
                    let t = View::dense(&t, kb, nrhs)?;
                    be.gemm(T::ONE, a, gemm_op, t, Op::NoTrans, T::ZERO, ViewMut::new(&mut w, part)?)?;
                }
            } else if len > 0 {
                let a = View::new(factor, stored.at(first, lc, len, kb)?)?;
                let t = View::dense(&t, kb, nrhs)?;
                be.gemm(T::ONE, a, gemm_op, t, Op::NoTrans, T::ZERO, ViewMut::dense(&mut w, len, nrhs)?)?;
            }
        }
        if len > 0 {
            mine.broadcast(be, ViewMut::dense(&mut w, len, nrhs)?, owner_across)?;
            be.axpy(-T::ONE, View::dense(&w, len, nrhs)?, ViewMut::new(y, yblock.sub(first, 0, len, nrhs)?)?)?;
        }
    }
    Ok(())
}
