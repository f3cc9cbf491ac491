//! Batches of small dense systems: LU with partial pivoting and Cholesky of
//! every member at once, and their solves.
//!
//! Both are the right-looking blocked algorithms of LAPACK's `dgetrf` and
//! `dpotrf`, each step taken on all members by one batched primitive: the
//! panel, the row interchanges, the triangular solve and the trailing
//! update. One failing member (singular, not positive definite, NaN) is
//! recorded in its own status and leaves the others as they would be alone.

use super::{Batch, BatchRef};
use crate::api::device::{Resident, Storage};
use crate::backend::{Backend, Block, BufferMut, Diag, Op, Strided, StridedMut};
use crate::layout::Uplo;
use crate::{Error, Result, Scalar, with_backend};

/// What became of one member of a batched factorization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FactorStatus {
    Factored,
    /// LU met a zero or non-finite pivot in `pivot` (1-based): the member
    /// is singular, or holds a NaN or infinity.
    Singular {
        pivot: usize,
    },
    /// Cholesky met a pivot in `column` (1-based) that is not positive and
    /// finite: the member is not positive definite, or holds a NaN or
    /// infinity.
    NotPositiveDefinite {
        column: usize,
    },
}

impl FactorStatus {
    /// The error a failed member amounts to (`None` when factored).
    pub fn error(self) -> Option<Error> {
        match self {
            FactorStatus::Factored => None,
            FactorStatus::Singular { pivot } => Some(Error::Singular { pivot }),
            FactorStatus::NotPositiveDefinite { column } => Some(Error::NotPositiveDefinite { column }),
        }
    }
}

/// The blocking: panel width of the factorizations, width of the block
/// columns of Cholesky's trailing updates, order of the diagonal blocks of
/// the solves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchParams {
    pub panel: usize,
    pub update_block: usize,
    pub solve_block: usize,
}

impl BatchParams {
    /// LU's blocking: members of order up to 64 are one panel (held whole
    /// in one or two GPU warps' registers up to 64 rows); larger ones take
    /// panels of 32 columns, fewer when the panel would pass 128 KiB.
    pub fn for_order<T: Scalar>(n: usize) -> Self {
        let panel = if n <= 64 {
            n.max(1)
        } else {
            let mut w = 32;
            while w > 1 && n * w * size_of::<T>() > 128 << 10 {
                w /= 2;
            }
            w
        };
        BatchParams { panel, update_block: 128, solve_block: 64 }
    }

    /// Cholesky's blocking: as [`Self::for_order`], but members of 33 to 64
    /// rows take two panels of up to 32 columns (the first in shared
    /// memory, the second in a warp's registers), 1.35 × faster on the
    /// H100 at n = 64 than one panel of 64 columns.
    pub fn for_cholesky<T: Scalar>(n: usize) -> Self {
        let params = Self::for_order::<T>(n);
        BatchParams { panel: params.panel.min(32), ..params }
    }
}

/// Which factorization a [`BatchFactor`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Lu,
    Cholesky,
}

/// The factors of every member of a batch of `n × n` matrices, with each
/// member's status: `P·A = L·U` from [`lu`], or `A = L·Lᵀ` from
/// [`cholesky`] (`L` in the lower triangle, zeros above).
pub struct BatchFactor<T: Scalar> {
    kind: Kind,
    factors: Batch<T>,
    /// LU's pivots, `n` per member, 1-based as LAPACK's `ipiv`.
    ipiv: Option<Storage<i32>>,
    status: Vec<FactorStatus>,
    params: BatchParams,
}

/// LU with partial pivoting of every member of `a` (a batch of square
/// matrices), as LAPACK's `dgetrf`. Waits for the statuses.
pub fn lu<'a, T: Scalar>(a: impl Into<BatchRef<'a, T>>) -> Result<BatchFactor<T>> {
    factor(a.into(), Kind::Lu)
}

/// Cholesky `A = L·Lᵀ` of every member of `a` (a batch of symmetric
/// positive definite matrices, the lower triangle read), as LAPACK's
/// `dpotrf`. Waits for the statuses.
pub fn cholesky<'a, T: Scalar>(a: impl Into<BatchRef<'a, T>>) -> Result<BatchFactor<T>> {
    factor(a.into(), Kind::Cholesky)
}

fn factor<T: Scalar>(a: BatchRef<'_, T>, kind: Kind) -> Result<BatchFactor<T>> {
    factor_owned(a.to_batch()?, kind)
}

/// [`lu`] of `a` itself, overwritten by its factors.
pub(crate) fn lu_owned<T: Scalar>(a: Batch<T>) -> Result<BatchFactor<T>> {
    factor_owned(a, Kind::Lu)
}

/// [`cholesky`] of `a` itself, overwritten by its factors.
pub(crate) fn cholesky_owned<T: Scalar>(a: Batch<T>) -> Result<BatchFactor<T>> {
    factor_owned(a, Kind::Cholesky)
}

fn factor_owned<T: Scalar>(mut factors: Batch<T>, kind: Kind) -> Result<BatchFactor<T>> {
    let op = if kind == Kind::Lu { "batch::lu" } else { "batch::cholesky" };
    let (n, cols) = factors.shape();
    if n != cols {
        return Err(Error::dims(op, format!("the members must be square, are {n}×{cols}")));
    }
    let count = factors.count();
    let params = if kind == Kind::Lu { BatchParams::for_order::<T>(n) } else { BatchParams::for_cholesky::<T>(n) };
    let device = factors.device().clone();
    let (ipiv, info) = with_backend!(device, be => {
        let mut ipiv = be.alloc::<i32>((n * count).max(1))?;
        let mut info = be.upload(&vec![0i32; count.max(1)])?;
        {
            let (a, p, i) = (BufferMut::new(factors.data.buffer_mut(be)?), BufferMut::new(&mut ipiv), BufferMut::new(&mut info));
            match kind {
                Kind::Lu => lu_in_place(be, &a, n, count, &p, &i, params)?,
                Kind::Cholesky => cholesky_in_place(be, &a, n, count, &i, params)?,
            }
        }
        let mut host = vec![0i32; count.max(1)];
        be.download(&info, &mut host)?;
        host.truncate(count);
        (be.wrap(ipiv), host)
    });
    let status = info
        .into_iter()
        .map(|k| match (k, kind) {
            (0, _) => FactorStatus::Factored,
            (k, Kind::Lu) => FactorStatus::Singular { pivot: k as usize },
            (k, Kind::Cholesky) => FactorStatus::NotPositiveDefinite { column: k as usize },
        })
        .collect();
    let ipiv = (kind == Kind::Lu).then_some(ipiv);
    Ok(BatchFactor { kind, factors, ipiv, status, params })
}

/// The block `(i, j, rows, cols)` of each of `count` `n × n` members of
/// `a`, writable.
fn members<'a, B: Backend, T: Scalar>(
    a: &'a BufferMut<'_, B, T>,
    n: usize,
    count: usize,
    (i, j, rows, cols): (usize, usize, usize, usize),
) -> Result<StridedMut<'a, B, T>> {
    a.strided_mut(Block::dense(n, n).sub(i, j, rows, cols)?, n * n, count)
}

/// [`members`], to read.
fn read<'a, B: Backend, T: Scalar>(
    a: &'a B::Buffer<T>,
    n: usize,
    count: usize,
    (i, j, rows, cols): (usize, usize, usize, usize),
) -> Result<Strided<'a, B, T>> {
    Strided::new(a, Block::dense(n, n).sub(i, j, rows, cols)?, n * n, count)
}

/// The blocked right-looking LU of `count` `n × n` members of `a`, their
/// pivots to `ipiv` (`n` per member) and first failures to `info` (one per
/// member, zero on entry). Enqueues only.
pub fn lu_in_place<B: Backend, T: Scalar>(
    be: &B,
    a: &BufferMut<'_, B, T>,
    n: usize,
    count: usize,
    ipiv: &BufferMut<'_, B, i32>,
    info: &BufferMut<'_, B, i32>,
    params: BatchParams,
) -> Result<()> {
    if n == 0 || count == 0 {
        return Ok(());
    }
    let status = || info.strided_mut(Block::dense(1, 1), 1, count);
    for k in (0..n).step_by(params.panel) {
        let (w, rest) = (params.panel.min(n - k), n - k - params.panel.min(n - k));
        let piv = Block::dense(n, 1).sub(k, 0, w, 1)?;
        be.batched_getrf_panel(
            members(a, n, count, (k, k, n - k, w))?,
            ipiv.strided_mut(piv, n, count)?,
            status()?,
            k,
        )?;
        let piv = ipiv.strided(piv, n, count)?;
        if k > 0 {
            be.batched_laswp(members(a, n, count, (k, 0, n - k, k))?, piv, k, false)?;
        }
        if rest > 0 {
            be.batched_laswp(members(a, n, count, (k, k + w, n - k, rest))?, piv, k, false)?;
            let l11 = read(a.buffer(), n, count, (k, k, w, w))?;
            be.batched_trsm(Uplo::Lower, Op::NoTrans, Diag::Unit, l11, members(a, n, count, (k, k + w, w, rest))?)?;
            let (l21, u12) =
                (read(a.buffer(), n, count, (k + w, k, rest, w))?, read(a.buffer(), n, count, (k, k + w, w, rest))?);
            let a22 = members(a, n, count, (k + w, k + w, rest, rest))?;
            be.batched_gemm(-T::ONE, l21, Op::NoTrans, u12, Op::NoTrans, T::ONE, a22)?;
        }
    }
    Ok(())
}

/// The blocked right-looking Cholesky of `count` `n × n` members of `a`
/// (lower triangle), first failures to `info`. The trailing updates are
/// products of block columns from their diagonal blocks down (`gemm`s that
/// also write the upper part of the diagonal blocks: each panel clears
/// what lies above its diagonal). Enqueues only.
pub fn cholesky_in_place<B: Backend, T: Scalar>(
    be: &B,
    a: &BufferMut<'_, B, T>,
    n: usize,
    count: usize,
    info: &BufferMut<'_, B, i32>,
    params: BatchParams,
) -> Result<()> {
    if n == 0 || count == 0 {
        return Ok(());
    }
    for k in (0..n).step_by(params.panel) {
        let (w, rest) = (params.panel.min(n - k), n - k - params.panel.min(n - k));
        be.batched_potrf_panel(
            members(a, n, count, (0, k, n, w))?,
            info.strided_mut(Block::dense(1, 1), 1, count)?,
            k,
        )?;
        // The lower part of the trailing matrix, a block column at a time
        // (each from its diagonal block down).
        for j in (0..rest).step_by(params.update_block) {
            let wj = params.update_block.min(rest - j);
            let l21 = read(a.buffer(), n, count, (k + w + j, k, rest - j, w))?;
            let l21_top = read(a.buffer(), n, count, (k + w + j, k, wj, w))?;
            let a22 = members(a, n, count, (k + w + j, k + w + j, rest - j, wj))?;
            be.batched_gemm(-T::ONE, l21, Op::NoTrans, l21_top, Op::Trans, T::ONE, a22)?;
        }
    }
    Ok(())
}

/// `X := A⁻¹·X` for every member from its factors: `x` holds `count`
/// members of `n × nrhs`. Blocked forward and back substitution, diagonal
/// blocks of `params.solve_block`. Enqueues only.
#[allow(clippy::too_many_arguments)]
pub fn solve_in_place<B: Backend, T: Scalar>(
    be: &B,
    cholesky: bool,
    f: &B::Buffer<T>,
    ipiv: Option<&B::Buffer<i32>>,
    n: usize,
    count: usize,
    x: &BufferMut<'_, B, T>,
    nrhs: usize,
    params: BatchParams,
) -> Result<()> {
    if n == 0 || count == 0 || nrhs == 0 {
        return Ok(());
    }
    let rhs = |i: usize, rows: usize| x.strided_mut(Block::dense(n, nrhs).sub(i, 0, rows, nrhs)?, n * nrhs, count);
    let rhs_read = |i: usize, rows: usize| x.strided(Block::dense(n, nrhs).sub(i, 0, rows, nrhs)?, n * nrhs, count);
    if let (Some(ipiv), true) = (ipiv, n <= params.solve_block) {
        // One diagonal block: the whole solve in one call.
        let ipiv = Strided::new(ipiv, Block::dense(n, 1), n, count)?;
        return be.batched_getrs(read(f, n, count, (0, 0, n, n))?, ipiv, rhs(0, n)?);
    }
    if let Some(ipiv) = ipiv {
        be.batched_laswp(rhs(0, n)?, Strided::new(ipiv, Block::dense(n, 1), n, count)?, 0, false)?;
    }
    let nb = params.solve_block;
    let diag = if cholesky { Diag::NonUnit } else { Diag::Unit };
    // L·Y = B, forward.
    for k in (0..n).step_by(nb) {
        let w = nb.min(n - k);
        be.batched_trsm(Uplo::Lower, Op::NoTrans, diag, read(f, n, count, (k, k, w, w))?, rhs(k, w)?)?;
        if k + w < n {
            let l21 = read(f, n, count, (k + w, k, n - k - w, w))?;
            be.batched_gemm(-T::ONE, l21, Op::NoTrans, rhs_read(k, w)?, Op::NoTrans, T::ONE, rhs(k + w, n - k - w)?)?;
        }
    }
    // U·X = Y (LU) or Lᵀ·X = Y (Cholesky), backward.
    let starts: Vec<usize> = (0..n).step_by(nb).collect();
    for &k in starts.iter().rev() {
        let w = nb.min(n - k);
        let (uplo, op) = if cholesky { (Uplo::Lower, Op::Trans) } else { (Uplo::Upper, Op::NoTrans) };
        be.batched_trsm(uplo, op, Diag::NonUnit, read(f, n, count, (k, k, w, w))?, rhs(k, w)?)?;
        if k > 0 {
            // The block column above the diagonal block: U(0..k, k..k+w), or
            // Lᵀ's, which is L(k..k+w, 0..k) transposed.
            let (above, op) = if cholesky {
                (read(f, n, count, (k, 0, w, k))?, Op::Trans)
            } else {
                (read(f, n, count, (0, k, k, w))?, Op::NoTrans)
            };
            be.batched_gemm(-T::ONE, above, op, rhs_read(k, w)?, Op::NoTrans, T::ONE, rhs(0, k)?)?;
        }
    }
    Ok(())
}

impl<T: Scalar> BatchFactor<T> {
    /// Each member's status, in batch order.
    pub fn status(&self) -> &[FactorStatus] {
        &self.status
    }

    /// The members that failed, by index, with why.
    pub fn failures(&self) -> impl Iterator<Item = (usize, FactorStatus)> + '_ {
        self.status.iter().copied().enumerate().filter(|(_, s)| *s != FactorStatus::Factored)
    }

    /// `self` if every member was factored, else the first failure as an
    /// error naming its member.
    pub fn check(self) -> Result<Self> {
        let first = self.failures().next();
        match first {
            None => Ok(self),
            Some((index, status)) => {
                Err(Error::InBatch { index, source: Box::new(status.error().expect("a failure is an error")) })
            }
        }
    }

    /// The factors, as LAPACK leaves them: `L` (unit, below the diagonal)
    /// and `U` in one array for LU; `L` with zeros above for Cholesky. A
    /// failed member's factors are unspecified.
    pub fn factors(&self) -> &Batch<T> {
        &self.factors
    }

    /// LU's pivots, `n` per member, 1-based as LAPACK's `ipiv` (empty for
    /// Cholesky). Waits.
    pub fn pivots(&self) -> Result<Vec<i32>> {
        let Some(ipiv) = &self.ipiv else { return Ok(Vec::new()) };
        let len = self.factors.rows * self.factors.count();
        let mut host = vec![0i32; len.max(1)];
        with_backend!(self.factors.device(), be => be.download(resident(be, ipiv)?, &mut host))?;
        host.truncate(len);
        Ok(host)
    }

    /// Solves `A_s·X_s = B_s` for every member: `b` holds as many members
    /// as the factored batch, each `n × nrhs`. A failed member's `X` is NaN.
    pub fn solve<'a>(&self, b: impl Into<BatchRef<'a, T>>) -> Result<Batch<T>> {
        let b = b.into();
        self.check_rhs(b.shape(), b.count())?;
        b.batch().as_matrix().check_with(self.factors.as_matrix())?;
        self.solve_owned(b.to_batch()?)
    }

    fn check_rhs(&self, (rows, nrhs): (usize, usize), members: usize) -> Result<()> {
        let (n, count) = (self.factors.rows, self.factors.count());
        if rows != n || members != count {
            return Err(Error::dims(
                "BatchFactor::solve",
                format!("{count} members of order {n}, but {members} right-hand sides of {rows}×{nrhs}"),
            ));
        }
        Ok(())
    }

    /// [`solve`](Self::solve) with `x` holding `B`, overwritten by `X`.
    pub(crate) fn solve_owned(&self, mut x: Batch<T>) -> Result<Batch<T>> {
        self.check_rhs(x.shape(), x.count())?;
        x.as_matrix().check_with(self.factors.as_matrix())?;
        let (n, count, nrhs) = (self.factors.rows, self.factors.count(), x.shape().1);
        let cholesky = self.kind == Kind::Cholesky;
        with_backend!(self.factors.device(), be => {
            let f = self.factors.data.view_on(be)?.buffer();
            let ipiv = self.ipiv.as_ref().map(|p| resident(be, p)).transpose()?;
            let xs = BufferMut::new(x.data.buffer_mut(be)?);
            solve_in_place(be, cholesky, f, ipiv, n, count, &xs, nrhs, self.params)?;
            for (s, _) in self.failures() {
                be.fill(xs.view_mut(Block::dense(n * nrhs, count).sub(0, s, n * nrhs, 1)?)?, T::from_f64(f64::NAN))?;
            }
        });
        Ok(x)
    }
}

/// The buffer of `s` on `be`'s device.
fn resident<'s, B: Resident>(_: &B, s: &'s Storage<i32>) -> Result<&'s B::Buffer<i32>> {
    B::buffer(s)
}
