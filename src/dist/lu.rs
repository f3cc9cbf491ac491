//! LU factorization with partial pivoting, `P·A = L·U`, of a block-cyclic
//! matrix.
//!
//! Right-looking with look-ahead, as the Cholesky beside it. Step `k`: the
//! panel (block column `k`, from its diagonal down) is factored on one rank
//! by the single-device blocked LU: in place when the grid has one process
//! row, else gathered from the process column onto the rank of its diagonal
//! block and scattered back, so the pivot search stays one device's and the
//! pivots are those of `dgetrf`. The pivots go to every rank, which applies
//! the row interchanges to its own columns (across process rows, rows move
//! by point-to-point exchange); `L`'s panel goes along the process rows,
//! `U`'s block row (`L11⁻¹·A12`) down the process columns, and each rank
//! updates its trailing blocks with one `gemm`.

use faer::Mat;

use super::DistParams;
use super::cluster::{Cluster, Rank};
use super::comm::Communicator;
use super::grid::Cyclic;
use super::local::Storage;
use super::matrix::DistMatrix;
use super::workspace::Workspace;
use crate::backend::{Backend, Block, BufferMut, Diag, Op, Pivoting, Side, View, ViewMut};
use crate::factor::lu::{LuParams, factor_in_place};
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// Factors the square `a` in place: `L` (unit lower) and `U` overwrite it,
/// and the pivots are returned as LAPACK's `ipiv` (1-based global rows:
/// row `i` was exchanged with row `ipiv[i]`). A zero pivot is
/// [`Error::Singular`] with its 1-based column; the factor is then not
/// usable.
pub fn lu<B: Backend, C: Communicator<B>, T: Scalar>(
    cluster: &Cluster<B, C>,
    a: &mut DistMatrix<B, T>,
    params: DistParams,
) -> Result<Vec<i32>> {
    a.check_cluster(cluster)?;
    if a.rows.len != a.cols.len {
        return Err(Error::dims("dist::lu", format!("the matrix is {}×{}, not square", a.rows.len, a.cols.len)));
    }
    if i32::try_from(a.rows.len).is_err() {
        return Err(Error::InvalidArgument(format!("order {} does not fit 32-bit pivots", a.rows.len)));
    }
    if a.storage != Storage::Full {
        return Err(Error::InvalidArgument("LU needs every block; the matrix stores its lower blocks alone".into()));
    }
    a.check_finite(cluster, "the matrix")?;
    let (rows, cols) = (a.rows, a.cols);
    let results =
        cluster.run_collective(a.local.iter_mut().collect(), |rank, buf| factor_rank(rank, rows, cols, buf, params))?;
    if let Some(pivot) = results.iter().map(|r| r.0).filter(|&c| c > 0).min() {
        return Err(Error::Singular { pivot });
    }
    Ok(results.into_iter().next().map(|r| r.1).unwrap_or_default())
}

/// Applies the interchanges `ipiv` (as [`lu`] returns them) to the rows of
/// the host matrix `b`, in order: `P·B`.
pub fn permute_rows<T: Scalar>(ipiv: &[i32], b: &mut Mat<T>) -> Result<()> {
    interchange_rows(ipiv, b, false)
}

/// The interchanges in order (`P·B`), or in reverse order (`Pᵀ·B`).
pub(super) fn interchange_rows<T: Scalar>(ipiv: &[i32], b: &mut Mat<T>, reverse: bool) -> Result<()> {
    let order: Box<dyn Iterator<Item = (usize, &i32)>> =
        if reverse { Box::new(ipiv.iter().enumerate().rev()) } else { Box::new(ipiv.iter().enumerate()) };
    for (i, &p) in order {
        let p = usize::try_from(p - 1).ok().filter(|&p| p < b.nrows()).ok_or_else(|| {
            Error::InvalidArgument(format!("pivot {p} of row {} is outside the {} rows", i + 1, b.nrows()))
        })?;
        if p != i {
            for j in 0..b.ncols() {
                let t = b[(i, j)];
                b[(i, j)] = b[(p, j)];
                b[(p, j)] = t;
            }
        }
    }
    Ok(())
}

/// One step's geometry on one rank.
#[derive(Clone, Copy)]
struct Step {
    c0: usize,
    kb: usize,
    /// Process row and column of the diagonal block.
    rk: usize,
    ck: usize,
    /// First local row and column of block `k`, and of block `k + 1`.
    lr: usize,
    lc: usize,
    lr1: usize,
    lc1: usize,
}

/// One rank's part: the 1-based column of the first zero pivot it met (0
/// if none) and the global pivots.
fn factor_rank<B: Backend, C: Communicator<B>, T: Scalar>(
    rank: &Rank<B, C>,
    rows: Cyclic,
    cols: Cyclic,
    buf: &mut B::Buffer<T>,
    params: DistParams,
) -> Result<(usize, Vec<i32>)> {
    let be = &rank.be;
    let (p, q, nb, n) = (rows.procs, cols.procs, rows.nb, rows.len);
    let (pr, pc) = (rank.pr, rank.pc);
    let (ml, nl) = (rows.local_len(pr), cols.local_len(pc));
    let whole = Block { offset: 0, rows: ml, cols: nl, ld: ml.max(1) };
    let a = BufferMut::new(buf);
    // Copies of the panel only where it does not lie at hand (its rows
    // for another process column, `U`'s block row for another process
    // row), `L11` (two, as the panel's copies: the side queue's `trsm` of
    // step `k` may still read one while step `k + 1`'s arrives), each
    // step's pivots (relative to the panel's top row with one process row,
    // to the gathered panel's rows with several) and each step's status.
    let buffers = (|| {
        let ws = Workspace::<B, T>::new(be, if q > 1 { ml } else { 0 }, if p > 1 { nl } else { 0 }, nb)?;
        Ok((
            ws,
            [be.alloc::<T>(nb * nb)?, be.alloc::<T>(nb * nb)?],
            be.alloc::<i32>(n)?,
            be.alloc::<i32>(rows.blocks())?,
        ))
    })();
    let (mut ws, mut diag, mut ipiv, mut info) = rank.agree(buffers)?;
    let mut global = vec![0i32; n];
    let local = LuParams::for_order(n);
    if p * q == 1 {
        // One rank holds the whole matrix: the single-device factorization.
        let pivots = BufferMut::new(&mut ipiv);
        let mut status = ViewMut::new(&mut info, Block::dense(1, 1))?;
        factor_in_place(be, &a, whole, &pivots, Block::dense(n, 1), &mut status, Pivoting::Partial, local)?;
        let mut first = vec![0i32; rows.blocks()];
        be.download(&info, &mut first)?;
        be.download(&ipiv, &mut global)?;
        return Ok((usize::try_from(first[0]).unwrap_or(0), global));
    }
    let side = be.side()?;
    side.wait_for(be)?;
    for k in 0..rows.blocks() {
        let s = Step {
            c0: k * nb,
            kb: rows.block_len(k),
            rk: k % p,
            ck: k % q,
            lr: rows.local_start(k, pr),
            lc: cols.local_start(k, pc),
            lr1: rows.local_start(k + 1, pr),
            lc1: cols.local_start(k + 1, pc),
        };
        let (kb, below, right) = (s.kb, ml - s.lr1, nl - s.lc1);
        let set = k % 2;
        let pivots = Block { offset: s.c0, rows: kb, cols: 1, ld: kb };
        let mut info_k = ViewMut::new(&mut info, Block { offset: k, rows: 1, cols: 1, ld: 1 })?;
        let panel_params = LuParams { block_size: kb, ..local };

        // The panel, and its pivots on every rank.
        if p == 1 {
            if pc == s.ck {
                let panel = whole.sub(s.lr, s.lc, ml - s.lr, kb)?;
                let ipiv_k = BufferMut::new(&mut ipiv);
                factor_in_place(be, &a, panel, &ipiv_k, pivots, &mut info_k, Pivoting::Partial, panel_params)?;
            }
            rank.row.broadcast(be, ViewMut::new(&mut ipiv, pivots)?, s.ck)?;
        } else {
            if pc == s.ck {
                gathered_panel(rank, rows, s, &a, whole, &mut ipiv, pivots, &mut info_k, panel_params)?;
                rank.col.broadcast(be, ViewMut::new(&mut ipiv, pivots)?, s.rk)?;
            }
            rank.row.broadcast(be, ViewMut::new(&mut ipiv, pivots)?, s.ck)?;
            // The plan of row moves needs the pivots on the host: wait for
            // the main queue alone, not the side queue's update.
            let sibling = be.sibling()?;
            sibling.wait_for(be)?;
            let mut host = vec![0i32; n];
            sibling.download(&ipiv, &mut host)?;
            let to_global = |w: usize| gathered_row(rows, s, w);
            for i in 0..kb {
                let w = usize::try_from(host[s.c0 + i] - 1).unwrap_or(0);
                global[s.c0 + i] = to_global(w) as i32 + 1;
            }
            let moves = RowMoves::new(rows, &global[s.c0..s.c0 + kb], s.c0);
            // The rows move across every column, which the side queue may
            // still be updating with step k − 1.
            be.wait_for(side)?;
            // The panel's own columns came back interchanged.
            let ranges: Vec<(usize, usize)> =
                if pc == s.ck { vec![(0, s.lc), (s.lc + kb, nl - s.lc - kb)] } else { vec![(0, nl)] };
            for (c, w) in ranges.into_iter().filter(|r| r.1 > 0) {
                moves.apply(rank, &a, whole, c, w)?;
            }
        }

        // L's panel along the process rows, L11 along the diagonal's row.
        if q > 1 {
            if below > 0 {
                if pc == s.ck {
                    be.copy(
                        a.view(whole.sub(s.lr1, s.lc, below, kb)?)?,
                        ViewMut::dense(&mut ws.lrow[set], below, kb)?,
                    )?;
                }
                rank.row.broadcast(be, ViewMut::dense(&mut ws.lrow[set], below, kb)?, s.ck)?;
            }
            if pr == s.rk {
                if pc == s.ck {
                    be.copy(a.view(whole.sub(s.lr, s.lc, kb, kb)?)?, ViewMut::dense(&mut diag[set], kb, kb)?)?;
                }
                rank.row.broadcast(be, ViewMut::dense(&mut diag[set], kb, kb)?, s.ck)?;
            }
        }
        let l21 = |lrow| if q > 1 { View::dense(lrow, below, kb) } else { a.view(whole.sub(s.lr1, s.lc, below, kb)?) };
        let l11 = |diag| if q > 1 { View::dense(diag, kb, kb) } else { a.view(whole.sub(s.lr, s.lc, kb, kb)?) };

        // U's block row: with one process row, interchanges, `trsm` and
        // update go column range by column range, block column k + 1 on the
        // main queue; with several, the block row is solved and sent down
        // the columns on the main queue first.
        side.wait_for(be)?;
        be.wait_for(side)?;
        // Without look-ahead the whole update is on the main queue, which
        // the next step's panel then waits for.
        let next = match params.look_ahead {
            false => right,
            true if k + 1 < cols.blocks() && (k + 1) % q == pc => cols.block_len(k + 1),
            true => 0,
        };
        let ranges = [(be, 0, next), (side, next, right)];
        if p == 1 {
            for (queue, from, to) in ranges {
                if to > from {
                    let columns = whole.sub(s.lr, s.lc1 + from, ml - s.lr, to - from)?;
                    queue.laswp(a.view_mut(columns)?, View::new(&ipiv, pivots)?, 0, false)?;
                    let u12 = a.view_mut(whole.sub(s.lr, s.lc1 + from, kb, to - from)?)?;
                    queue.trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::Unit, T::ONE, l11(&diag[set])?, u12)?;
                    if below > 0 {
                        let u12 = a.view(whole.sub(s.lr, s.lc1 + from, kb, to - from)?)?;
                        let a22 = a.view_mut(whole.sub(s.lr1, s.lc1 + from, below, to - from)?)?;
                        queue.gemm(-T::ONE, l21(&ws.lrow[set])?, Op::NoTrans, u12, Op::NoTrans, T::ONE, a22)?;
                    }
                }
            }
            // The interchanges on the finished columns to the left.
            if s.lc > 0 {
                side.laswp(a.view_mut(whole.sub(s.lr, 0, ml - s.lr, s.lc)?)?, View::new(&ipiv, pivots)?, 0, false)?;
            }
        } else {
            if pr == s.rk && right > 0 {
                let u12 = a.view_mut(whole.sub(s.lr, s.lc1, kb, right)?)?;
                be.trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::Unit, T::ONE, l11(&diag[set])?, u12)?;
                be.copy(a.view(whole.sub(s.lr, s.lc1, kb, right)?)?, ViewMut::dense(&mut ws.lcol[set], kb, right)?)?;
            }
            if right > 0 {
                rank.col.broadcast(be, ViewMut::dense(&mut ws.lcol[set], kb, right)?, s.rk)?;
            }
            side.wait_for(be)?;
            for (queue, from, to) in ranges {
                if to > from && below > 0 {
                    let u12 = View::dense(&ws.lcol[set], kb, right)?.sub(0, from, kb, to - from)?;
                    let a22 = a.view_mut(whole.sub(s.lr1, s.lc1 + from, below, to - from)?)?;
                    queue.gemm(-T::ONE, l21(&ws.lrow[set])?, Op::NoTrans, u12, Op::NoTrans, T::ONE, a22)?;
                }
            }
        }
    }
    be.wait_for(side)?;
    let mut first = vec![0i32; rows.blocks()];
    be.download(&info, &mut first)?;
    let failed = first.iter().enumerate().find(|(_, c)| **c > 0).map(|(k, c)| k * nb + *c as usize).unwrap_or(0);
    if p == 1 {
        be.download(&ipiv, &mut global)?;
        for (k, chunk) in global.chunks_mut(nb).enumerate() {
            chunk.iter_mut().for_each(|x| *x += (k * nb) as i32);
        }
    }
    Ok((failed, global))
}

/// The rows of the gathered panel of step `s`: process row `rk`'s rows of
/// block `k` and below first, then the next process row's, cyclically.
fn gathered_pieces(rows: Cyclic, s: Step) -> Vec<(usize, usize, usize)> {
    let p = rows.procs;
    let mut at = 0;
    (0..p)
        .map(|i| {
            let r = (s.rk + i) % p;
            let first = rows.local_start(s.c0 / rows.nb, r);
            let len = rows.local_len(r) - first;
            let piece = (r, first, at);
            at += len;
            piece
        })
        .collect()
}

/// The global row of row `w` of the gathered panel.
fn gathered_row(rows: Cyclic, s: Step, w: usize) -> usize {
    let pieces = gathered_pieces(rows, s);
    let (r, first, at) = pieces.iter().copied().rev().find(|&(_, _, at)| at <= w).expect("piece 0 starts at 0");
    rows.to_global(r, first + (w - at))
}

/// Gathers the panel of step `s` from the process column onto the rank of
/// its diagonal block, factors it there, and scatters it back.
#[allow(clippy::too_many_arguments)]
fn gathered_panel<B: Backend, C: Communicator<B>, T: Scalar>(
    rank: &Rank<B, C>,
    rows: Cyclic,
    s: Step,
    a: &BufferMut<'_, B, T>,
    whole: Block,
    ipiv: &mut B::Buffer<i32>,
    pivots: Block,
    info: &mut ViewMut<'_, B, i32>,
    params: LuParams,
) -> Result<()> {
    let be = &rank.be;
    let kb = s.kb;
    let pieces = gathered_pieces(rows, s);
    let len = |r: usize| rows.local_len(r) - rows.local_start(s.c0 / rows.nb, r);
    let mine = whole.sub(s.lr, s.lc, len(rank.pr), kb)?;
    if rank.pr != s.rk {
        // Send this rank's rows, and take them back factored.
        let mut piece = be.alloc::<T>(len(rank.pr) * kb)?;
        be.copy(a.view(mine)?, ViewMut::dense(&mut piece, len(rank.pr), kb)?)?;
        rank.col.exchange(be, &[(s.rk, View::dense(&piece, len(rank.pr), kb)?)], Vec::new())?;
        rank.col.exchange::<T>(be, &[], vec![(s.rk, ViewMut::dense(&mut piece, len(rank.pr), kb)?)])?;
        return be.copy(View::dense(&piece, len(rank.pr), kb)?, a.view_mut(mine)?);
    }
    let mw: usize = pieces.iter().map(|&(r, _, _)| len(r)).sum();
    let mut w = be.alloc::<T>(mw * kb)?;
    let whole_w = Block::dense(mw, kb);
    let mut others: Vec<(usize, usize, B::Buffer<T>)> = Vec::new();
    for &(r, _, at) in &pieces[1..] {
        others.push((r, at, be.alloc::<T>(len(r) * kb)?));
    }
    {
        let wbuf = BufferMut::new(&mut w);
        be.copy(a.view(mine)?, wbuf.view_mut(whole_w.sub(0, 0, len(s.rk), kb)?)?)?;
    }
    let recvs =
        others.iter_mut().map(|(r, _, b)| Ok((*r, ViewMut::dense(b, len(*r), kb)?))).collect::<Result<Vec<_>>>()?;
    rank.col.exchange(be, &[], recvs)?;
    let wbuf = BufferMut::new(&mut w);
    for (r, at, b) in &others {
        be.copy(View::dense(b, len(*r), kb)?, wbuf.view_mut(whole_w.sub(*at, 0, len(*r), kb)?)?)?;
    }
    let ipiv = BufferMut::new(ipiv);
    factor_in_place(be, &wbuf, whole_w, &ipiv, pivots, info, Pivoting::Partial, params)?;
    be.copy(wbuf.view(whole_w.sub(0, 0, len(s.rk), kb)?)?, a.view_mut(mine)?)?;
    for (r, at, b) in &mut others {
        be.copy(wbuf.view(whole_w.sub(*at, 0, len(*r), kb)?)?, ViewMut::dense(b, len(*r), kb)?)?;
    }
    let sends = others.iter().map(|(r, _, b)| Ok((*r, View::dense(b, len(*r), kb)?))).collect::<Result<Vec<_>>>()?;
    rank.col.exchange(be, &sends, Vec::new())
}

/// Interchanges (`dlaswp`'s 1-based pivots) that bring rows `list`, in
/// order, to rows `0..list.len()`.
fn to_top(list: &[usize]) -> Vec<i32> {
    use std::collections::HashMap;
    // Where each original row is, and which original row each position holds.
    let (mut place, mut holds): (HashMap<usize, usize>, HashMap<usize, usize>) = Default::default();
    list.iter()
        .enumerate()
        .map(|(t, &row)| {
            let at = *place.get(&row).unwrap_or(&row);
            let (here, there) = (*holds.get(&t).unwrap_or(&t), *holds.get(&at).unwrap_or(&at));
            holds.insert(t, there);
            holds.insert(at, here);
            place.insert(there, t);
            place.insert(here, at);
            at as i32 + 1
        })
        .collect()
}

/// The rows one step's interchanges move, as final moves: position `g`
/// (a global row) receives the row that was at `source`.
struct RowMoves {
    rows: Cyclic,
    moves: Vec<(usize, usize)>,
}

impl RowMoves {
    fn new(rows: Cyclic, ipiv: &[i32], c0: usize) -> Self {
        let mut content: std::collections::BTreeMap<usize, usize> = Default::default();
        for (i, &p) in ipiv.iter().enumerate() {
            let (x, y) = (c0 + i, (p - 1) as usize);
            let cx = *content.get(&x).unwrap_or(&x);
            let cy = *content.get(&y).unwrap_or(&y);
            content.insert(x, cy);
            content.insert(y, cx);
        }
        RowMoves { rows, moves: content.into_iter().filter(|(g, src)| g != src).collect() }
    }

    /// Moves the rows of local columns `c..c + w` of this rank's process
    /// column: rows staying on this process row through a packed copy,
    /// the others by one exchange with each process row. Each packed set
    /// of rows is read (or written) as one block: interchanges bring its
    /// rows to the top of the columns, one copy takes them, and the same
    /// interchanges in reverse put every row back.
    fn apply<B: Backend, C: Communicator<B>, T: Scalar>(
        &self,
        rank: &Rank<B, C>,
        a: &BufferMut<'_, B, T>,
        whole: Block,
        c: usize,
        w: usize,
    ) -> Result<()> {
        let be = &rank.be;
        let p = self.rows.procs;
        let columns = whole.sub(0, c, whole.rows, w)?;
        // Per process row: the rows this rank sends it (local sources) and
        // the rows it receives from it (local destinations).
        let mut sends: Vec<Vec<usize>> = vec![Vec::new(); p];
        let mut recvs: Vec<Vec<usize>> = vec![Vec::new(); p];
        for &(g, src) in &self.moves {
            let (to, lg) = self.rows.to_local(g);
            let (from, ls) = self.rows.to_local(src);
            if from == rank.pr {
                sends[to].push(ls);
            }
            if to == rank.pr {
                recvs[from].push(lg);
            }
        }
        let mut packed: Vec<(usize, B::Buffer<T>)> = Vec::new();
        for (r, list) in sends.iter().enumerate().filter(|(_, l)| !l.is_empty()) {
            let mut buf = be.alloc::<T>(list.len() * w)?;
            let order = be.upload(&to_top(list))?;
            let order = View::dense(&order, list.len(), 1)?;
            be.laswp(a.view_mut(columns)?, order, 0, false)?;
            be.copy(a.view(columns.sub(0, 0, list.len(), w)?)?, ViewMut::dense(&mut buf, list.len(), w)?)?;
            be.laswp(a.view_mut(columns)?, order, 0, true)?;
            packed.push((r, buf));
        }
        let mut incoming: Vec<(usize, B::Buffer<T>)> = Vec::new();
        for (r, list) in recvs.iter().enumerate().filter(|(r, l)| *r != rank.pr && !l.is_empty()) {
            incoming.push((r, be.alloc::<T>(list.len() * w)?));
        }
        let remote_sends = packed
            .iter()
            .filter(|(r, _)| *r != rank.pr)
            .map(|(r, b)| Ok((*r, View::dense(b, sends[*r].len(), w)?)))
            .collect::<Result<Vec<_>>>()?;
        let remote_recvs = incoming
            .iter_mut()
            .map(|(r, b)| Ok((*r, ViewMut::dense(b, recvs[*r].len(), w)?)))
            .collect::<Result<Vec<_>>>()?;
        // Every rank of the process column, with nothing to move or not:
        // the ranks of a communicator make the same calls.
        rank.col.exchange(be, &remote_sends, remote_recvs)?;
        let local = packed.iter().find(|(r, _)| *r == rank.pr).map(|(_, b)| (rank.pr, b));
        for (r, buf) in incoming.iter().map(|(r, b)| (*r, b)).chain(local) {
            let list = &recvs[r];
            let order = be.upload(&to_top(list))?;
            let order = View::dense(&order, list.len(), 1)?;
            be.laswp(a.view_mut(columns)?, order, 0, false)?;
            be.copy(View::dense(buf, list.len(), w)?, a.view_mut(columns.sub(0, 0, list.len(), w)?)?)?;
            be.laswp(a.view_mut(columns)?, order, 0, true)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::to_top;

    #[test]
    fn interchanges_bring_the_listed_rows_to_the_top_in_order() {
        for list in [vec![5, 2, 0], vec![0, 1, 2], vec![2, 0, 1], vec![7, 3, 1, 6], vec![1, 0], vec![]] {
            let mut rows: Vec<usize> = (0..8).collect();
            for (t, &p) in to_top(&list).iter().enumerate() {
                rows.swap(t, p as usize - 1);
            }
            assert_eq!(&rows[..list.len()], &list[..], "{list:?}");
            let mut sorted = rows.clone();
            sorted.sort();
            assert_eq!(sorted, (0..8).collect::<Vec<_>>());
        }
    }
}
