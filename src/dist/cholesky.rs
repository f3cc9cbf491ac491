//! Cholesky factorization `A = L·Lᵀ` of a block-cyclic matrix.
//!
//! Right-looking with look-ahead, as ScaLAPACK's `pdpotrf` and SLATE's
//! `potrf` (Gates et al. 2019). Step `k`: the rank holding diagonal block
//! `k` factors it with the single-device blocked Cholesky; its process
//! column solves for the panel below with it (in the same call, when the
//! panel is that rank's alone); each row of ranks receives
//! its part of the panel by one broadcast along the row, and each column of
//! ranks the part that its columns need (the panel's transpose) by
//! broadcasts down the column; then every rank updates its own trailing
//! blocks with `gemm`s, no communication. The ranks
//! of block column `k + 1` bring it up to date first, on the main queue, and
//! go on to step `k + 1` while the side queue does the rest of step `k`'s
//! update: the next panel and its broadcasts hide behind the update.

use super::DistParams;
use super::cluster::{Cluster, Rank};
use super::comm::Communicator;
use super::grid::Cyclic;
use super::local::{Local, Storage};
use super::matrix::DistMatrix;
use super::workspace::Workspace;
use crate::backend::{Backend, Block, BufferMut, Diag, Op, Side, View, ViewMut};
use crate::factor::cholesky::{CholeskyParams, factor_in_place, factor_in_place_once};
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// Factors the symmetric positive definite `a` in place from its lower
/// triangle: `L` overwrites the lower triangle; the strict upper triangle is
/// used as workspace and left undefined. A matrix that is not positive
/// definite is [`Error::NotPositiveDefinite`] with the first failing column,
/// found by whichever rank met it.
pub fn cholesky<B: Backend, C: Communicator<B>, T: Scalar>(
    cluster: &Cluster<B, C>,
    a: &mut DistMatrix<B, T>,
    params: DistParams,
) -> Result<()> {
    a.check_cluster(cluster)?;
    if a.rows.len != a.cols.len {
        return Err(Error::dims("dist::cholesky", format!("the matrix is {}×{}, not square", a.rows.len, a.cols.len)));
    }
    a.check_finite(cluster, "the matrix")?;
    let (rows, cols, storage) = (a.rows, a.cols, a.storage);
    let failures = cluster.run_collective(a.local.iter_mut().collect(), |rank, buf| {
        factor_rank(rank, (rows, cols, storage), buf, params)
    })?;
    match failures.into_iter().filter(|&c| c > 0).min() {
        Some(column) => Err(Error::NotPositiveDefinite { column }),
        None => Ok(()),
    }
}

/// One rank's part; returns the 1-based column of the first pivot it found
/// not positive, or 0.
fn factor_rank<B: Backend, C: Communicator<B>, T: Scalar>(
    rank: &Rank<B, C>,
    (rows, cols, storage): (Cyclic, Cyclic, Storage),
    buf: &mut B::Buffer<T>,
    params: DistParams,
) -> Result<usize> {
    let be = &rank.be;
    let (p, q, nb) = (rows.procs, cols.procs, rows.nb);
    let (pr, pc) = (rank.pr, rank.pc);
    let (ml, nl) = (rows.local_len(pr), cols.local_len(pc));
    let stored = Local::new(rows, cols, pr, pc, storage);
    let a = BufferMut::new(buf);
    // Copies of the panel only where it does not lie at hand: its rows
    // for another process column, its transpose (packed for a broadcast)
    // and the diagonal block for another process row.
    let buffers = (|| {
        let ws = Workspace::<B, T>::new(be, if q > 1 { ml } else { 0 }, if p > 1 { nl } else { 0 }, nb)?;
        let (diag, pack) = if p > 1 { (nb * nb, nl * nb) } else { (0, 0) };
        Ok((ws, be.alloc::<T>(diag)?, be.alloc::<T>(pack)?, be.alloc::<i32>(1)?))
    })();
    let (mut ws, mut diag, mut pack, mut info) = rank.agree(buffers)?;
    if p * q == 1 && !stored.is_packed() {
        // One rank holds the whole matrix: the single-device factorization.
        let mut status = ViewMut::dense(&mut info, 1, 1)?;
        factor_in_place(
            be,
            Uplo::Lower,
            &a,
            stored.at(0, 0, ml, nl)?,
            &mut status,
            0,
            CholeskyParams::for_order(rows.len),
        )?;
        return first_failure(be, &info);
    }
    // Each panel is one block column, factored recursively on the main
    // queue (and its sibling), as one device's code factors each of its
    // panels: blocked in narrower columns it would use the side queue,
    // which holds this rank's trailing update, and wait for all of it.
    let local = CholeskyParams { block_size: nb, ..CholeskyParams::for_order(nb.min(rows.len)) };
    let side = be.side()?;
    side.wait_for(be)?;
    for k in 0..rows.blocks() {
        let (c0, kb) = (k * nb, rows.block_len(k));
        let (rk, ck) = (k % p, k % q);
        let (lr, lc) = (rows.local_start(k, pr), cols.local_start(k, pc));
        let (lr1, lc1) = (rows.local_start(k + 1, pr), cols.local_start(k + 1, pc));
        let (below, right) = (ml - lr1, nl - lc1);
        let set = k % 2;

        // The diagonal block, and the panel below it in process column ck:
        // with one process row the panel is one rank's, factored as one
        // block column by the single-device code (its solve for the rows
        // below blocked with the diagonal's factorization); with several,
        // the diagonal block goes down the column and each rank solves
        // for its own rows.
        if (pr, pc) == (rk, ck) {
            let mut info = ViewMut::dense(&mut info, 1, 1)?;
            let rows_here = if p == 1 { ml - lr } else { kb };
            // Each panel is factored once at its place: not recorded.
            factor_in_place_once(be, &a, stored.at(lr, lc, rows_here, kb)?, &mut info, c0, local)?;
        }
        if pc == ck && p > 1 {
            if pr == rk {
                be.copy(a.view(stored.at(lr, lc, kb, kb)?)?, ViewMut::dense(&mut diag, kb, kb)?)?;
            }
            rank.col.broadcast(be, ViewMut::dense(&mut diag, kb, kb)?, rk)?;
            if below > 0 {
                let l21 = a.view_mut(stored.at(lr1, lc, below, kb)?)?;
                be.trsm(Side::Right, Uplo::Lower, Op::Trans, Diag::NonUnit, T::ONE, View::dense(&diag, kb, kb)?, l21)?;
            }
        }

        // The panel's rows for this rank's rows, along the process row.
        if q > 1 && below > 0 {
            if pc == ck {
                be.copy(a.view(stored.at(lr1, lc, below, kb)?)?, ViewMut::dense(&mut ws.lrow[set], below, kb)?)?;
            }
            rank.row.broadcast(be, ViewMut::dense(&mut ws.lrow[set], below, kb)?, ck)?;
        }
        // With one process column the panel is used where it lies.
        let panel = |lrow| if q > 1 { View::dense(lrow, below, kb) } else { a.view(stored.at(lr1, lc, below, kb)?) };

        // The panel's rows for this rank's columns (its transpose), down the
        // process column from the process row that holds each block. With
        // one process row the update reads them from the panel itself.
        let blocks: Vec<usize> = (k + 1..cols.blocks()).filter(|j| j % q == pc).collect();
        for r in (0..p).filter(|_| p > 1) {
            let mine: Vec<usize> = blocks.iter().copied().filter(|j| j % p == r).collect();
            let count: usize = mine.iter().map(|&j| cols.block_len(j)).sum();
            if count == 0 {
                continue;
            }
            if pr == r {
                let mut at = 0;
                for &j in &mine {
                    let len = cols.block_len(j);
                    let src = panel(&ws.lrow[set])?.sub(rows.local_start(j, r) - lr1, 0, len, kb)?;
                    be.copy(src, ViewMut::new(&mut pack, Block { offset: at, rows: len, cols: kb, ld: count })?)?;
                    at += len;
                }
            }
            rank.col.broadcast(be, ViewMut::dense(&mut pack, count, kb)?, r)?;
            let mut at = 0;
            for &j in &mine {
                let len = cols.block_len(j);
                let src = View::dense(&pack, count, kb)?.sub(at, 0, len, kb)?;
                let dst = Block { offset: cols.local_start(j, pc) - lc1, rows: len, cols: kb, ld: right };
                be.copy(src, ViewMut::new(&mut ws.lcol[set], dst)?)?;
                at += len;
            }
        }

        // The trailing update: block column k + 1 first (main queue), the
        // rest beside it (side queue).
        side.wait_for(be)?;
        be.wait_for(side)?;
        // Without look-ahead the whole update is on the main queue, which
        // the next step's panel then waits for.
        let next = match params.look_ahead {
            false => right,
            true if k + 1 < cols.blocks() && (k + 1) % q == pc => cols.block_len(k + 1),
            true => 0,
        };
        let trailing = Trailing { rows, cols, pr, pc, lr1, lc1, stored: &stored, tile: params.update_tile };
        let l = panel(&ws.lrow[set])?;
        // One process row: the rows of L for a block column are in the
        // panel; several: in the transposed copy.
        let lt = if p == 1 { None } else { Some(View::dense(&ws.lcol[set], right, kb)?) };
        trailing.update(be, &a, l, lt, 0..next)?;
        trailing.update(side, &a, l, lt, next..right)?;
    }
    be.wait_for(side)?;
    first_failure(be, &info)
}

/// The failing column in `info`, once the queue has run.
fn first_failure<B: Backend>(be: &B, info: &B::Buffer<i32>) -> Result<usize> {
    let mut first = [0i32];
    be.download(info, &mut first)?;
    Ok(usize::try_from(first[0]).unwrap_or(0))
}

/// The trailing matrix of one step on one rank: local rows from `lr1`,
/// columns from `lc1`, those below the diagonal.
struct Trailing<'s> {
    rows: Cyclic,
    cols: Cyclic,
    pr: usize,
    pc: usize,
    lr1: usize,
    lc1: usize,
    stored: &'s Local,
    tile: usize,
}

impl Trailing<'_> {
    /// `A −= L·Ltᵀ` on the trailing columns `range` (counted from `lc1`),
    /// in slabs of `tile` columns, each from the first row of its first
    /// block's diagonal down: the rest of the slab is above the diagonal.
    /// Without `lt` (one process row) `Lt`'s rows are `L`'s, a block
    /// column at a time, each from its own diagonal down.
    fn update<B: Backend, T: Scalar>(
        &self,
        be: &B,
        a: &BufferMut<'_, B, T>,
        l: View<'_, B, T>,
        lt: Option<View<'_, B, T>>,
        range: std::ops::Range<usize>,
    ) -> Result<()> {
        let nb = self.cols.nb;
        // Packed, each block column has its own leading dimension.
        let tile = if lt.is_some() && !self.stored.is_packed() { (self.tile / nb).max(1) * nb } else { nb };
        let (below, kb) = (l.rows(), l.cols());
        let mut c = range.start;
        while c < range.end {
            let end = (c + tile).min(range.end);
            let first = self.cols.to_global(self.pc, self.lc1 + c) / nb;
            let r0 = self.rows.local_start(first, self.pr) - self.lr1;
            if r0 < below {
                let right = match lt {
                    Some(lt) => lt.sub(c, 0, end - c, kb)?,
                    None => l.sub(r0, 0, end - c, kb)?,
                };
                let target = a.view_mut(self.stored.at(self.lr1 + r0, self.lc1 + c, below - r0, end - c)?)?;
                be.gemm(-T::ONE, l.sub(r0, 0, below - r0, kb)?, Op::NoTrans, right, Op::Trans, T::ONE, target)?;
            }
            c = end;
        }
        Ok(())
    }
}
