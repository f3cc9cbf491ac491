//! Batches of tridiagonal systems `T_s·x_s = b_s`, one per member, solved
//! at once on the batch's device (`Backend::tridiagonal_solve`).

use super::{Batch, BatchRef};
use crate::backend::{Backend, SystemLayout, ViewMut};
use crate::{Error, Result, Scalar, with_backend};

/// How each system is eliminated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TridiagonalMethod {
    /// Thomas's elimination, no interchanges (Thomas 1949): stable for
    /// diagonally dominant and for symmetric positive definite systems
    /// (the implicit time steps of diffusion and shallow-water models).
    #[default]
    NoPivoting,
    /// Gaussian elimination with partial pivoting, as LAPACK's `dgtsv`:
    /// for any nonsingular system.
    PartialPivoting,
}

/// What became of one system of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SystemStatus {
    Solved,
    /// The pivot of `row` (1-based) was zero or not finite: the system is
    /// singular (or, without pivoting, needs pivoting), or holds a NaN or
    /// an infinity. Its `x` is NaN.
    ZeroPivot {
        row: usize,
    },
    /// The elimination went through but `x(row)` (1-based) is not finite:
    /// a NaN or infinity in `b`, or an overflow.
    NotFinite {
        row: usize,
    },
}

/// The solutions of a batch and each system's status: one failing system
/// leaves the others solved.
pub struct TridiagonalSolution<T: Scalar> {
    pub x: Batch<T>,
    pub status: Vec<SystemStatus>,
}

impl<T: Scalar> TridiagonalSolution<T> {
    /// The systems that failed, by index in the batch solved, with why.
    pub fn failures(&self) -> impl Iterator<Item = (usize, SystemStatus)> + '_ {
        self.status.iter().copied().enumerate().filter(|(_, s)| *s != SystemStatus::Solved)
    }

    /// `x` if every system was solved, else the first failure as an error
    /// naming its system.
    pub fn into_result(self) -> Result<Batch<T>> {
        let first = self.failures().next();
        match first {
            None => Ok(self.x),
            Some((index, status)) => {
                Err(Error::InBatch { index, source: Box::new(status.error().expect("a failure is an error")) })
            }
        }
    }
}

impl SystemStatus {
    /// The error a failed system amounts to (`None` when solved).
    pub fn error(self) -> Option<Error> {
        match self {
            SystemStatus::Solved => None,
            SystemStatus::ZeroPivot { row } => Some(Error::Singular { pivot: row }),
            SystemStatus::NotFinite { row } => {
                Some(Error::NonFinite { what: "x".into(), row, col: 1, value: f64::NAN })
            }
        }
    }
}

/// Solves the tridiagonal systems of a batch: member `s` of `dl`, `d`,
/// `du` and `b` (batches of vectors of one length `m`, on one device) are
/// the subdiagonal (entry `i` is `T(i, i − 1)`; entry 0 is not read), the
/// diagonal, the superdiagonal (`T(i, i + 1)`; entry `m − 1` not read) and
/// the right-hand side of system `s`. The inputs are left as they are.
pub fn solve_tridiagonal<'a, T: Scalar>(
    dl: impl Into<BatchRef<'a, T>>,
    d: impl Into<BatchRef<'a, T>>,
    du: impl Into<BatchRef<'a, T>>,
    b: impl Into<BatchRef<'a, T>>,
    method: TridiagonalMethod,
) -> Result<TridiagonalSolution<T>> {
    let parts = [dl.into(), d.into(), du.into(), b.into()];
    let (m, count) = (parts[1].shape().0, parts[1].count());
    for (name, p) in ["dl", "d", "du", "b"].into_iter().zip(&parts) {
        if p.shape().1 != 1 {
            return Err(Error::dims(
                "solve_tridiagonal",
                format!("{name} must be a batch of vectors, holds {}×{} matrices", p.shape().0, p.shape().1),
            ));
        }
        if (p.shape().0, p.count()) != (m, count) {
            return Err(Error::dims(
                "solve_tridiagonal",
                format!("{name} holds {} vectors of {} but d holds {count} of {m}", p.count(), p.shape().0),
            ));
        }
        p.batch().as_matrix().check_with(parts[1].batch().as_matrix())?;
    }
    // The elimination overwrites all four: it works on copies.
    let [dl, d, du, b] = parts.map(|p| p.to_batch());
    solve_owned([dl?, d?, du?, b?], method)
}

/// [`solve_tridiagonal`] in the arrays of `dl`, `d`, `du` and `b` (checked
/// by the caller: vectors of one length and count on one device), which
/// it overwrites.
pub(crate) fn solve_owned<T: Scalar>(
    [dl, d, du, b]: [Batch<T>; 4],
    method: TridiagonalMethod,
) -> Result<TridiagonalSolution<T>> {
    let (m, count) = (b.rows, b.count());
    let (mut dl, mut d, mut du, mut x) = (dl.data, d.data, du.data, b.data);
    let device = x.device().clone();
    let status = with_backend!(device, be => {
        let mut info = be.alloc::<i32>(count.max(1))?;
        be.tridiagonal_solve(
            SystemLayout::Columns,
            method == TridiagonalMethod::PartialPivoting,
            (dl.view_mut()?, d.view_mut()?, du.view_mut()?),
            x.view_mut()?,
            ViewMut::dense(&mut info, count, 1)?,
        )?;
        let mut host = vec![0i32; count.max(1)];
        be.download(&info, &mut host)?;
        host.truncate(count);
        host
    });
    let status = status.into_iter().map(|k| match k {
        0 => SystemStatus::Solved,
        k if k > 0 => SystemStatus::ZeroPivot { row: k as usize },
        k => SystemStatus::NotFinite { row: k.unsigned_abs() as usize },
    });
    Ok(TridiagonalSolution { x: Batch { rows: m, cols: 1, data: x }, status: status.collect() })
}
