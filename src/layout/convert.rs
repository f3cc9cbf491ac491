//! Copies of a triangle between full, packed and RFP storage: LAPACK's
//! `dtrttf`/`dtfttr` (full ↔ RFP), `dtrttp`/`dtpttr` (full ↔ packed) and
//! `dtfttp`/`dtpttf` (RFP ↔ packed).
//!
//! Only the stored triangle is read or written; the other triangle of a full
//! array is left as it was. Slices may be longer than needed; a shorter one,
//! a non-square full array or mismatched orders is an `Err`.
//!
//! The RFP copies walk the three pieces of the rectangle column by column.
//! A piece stored as is holds, in each of its columns, a run of one column
//! of `A`, contiguous in full and in packed storage alike: one slice copy.
//! A piece stored transposed holds a run of one row of `A`: a strided gather.

use super::full::{Full, triangle_rows};
use super::packed::Packed;
use super::rfp::Rfp;
use crate::{Error, Result};

/// A triangle storage whose columns are contiguous: `at(i, j)` is the
/// position of `A(i, j)` in the triangle, and `at(i + 1, j) = at(i, j) + 1`.
trait Columns {
    fn at(&self, i: usize, j: usize) -> usize;
}

impl Columns for Full {
    #[inline]
    fn at(&self, i: usize, j: usize) -> usize {
        self.index(i, j)
    }
}

impl Columns for Packed {
    #[inline]
    fn at(&self, i: usize, j: usize) -> usize {
        Packed::at(self, i, j)
    }
}

/// Where a run of consecutive RFP entries lives in `A`: down column `j` or
/// along row `i`, starting at `A(i, j)`.
#[derive(Clone, Copy)]
enum Run {
    Down { i: usize, j: usize },
    Along { i: usize, j: usize },
}

/// Calls `f(start, len, run)` for every column of every piece: RFP entries
/// `start..start + len` are the `len` entries of `A` that `run` names.
#[inline]
fn for_each_run(rfp: Rfp, mut f: impl FnMut(usize, usize, Run)) {
    for p in rfp.placements() {
        let (i0, j0) = p.origin;
        for c in 0..p.cols {
            let rows = p.rows_of(c);
            if rows.is_empty() {
                continue;
            }
            let start = p.offset + rows.start + c * p.ld;
            let run = if p.transposed {
                Run::Along { i: i0 + c, j: j0 + rows.start }
            } else {
                Run::Down { i: i0 + rows.start, j: j0 + c }
            };
            f(start, rows.len(), run);
        }
    }
}

/// RFP ← triangle of `a` in storage `st`.
fn gather<T: Copy>(a: &[T], st: &impl Columns, rfp: Rfp, arf: &mut [T]) {
    for_each_run(rfp, |start, len, run| {
        let dst = &mut arf[start..start + len];
        match run {
            Run::Down { i, j } => {
                let at = st.at(i, j);
                dst.copy_from_slice(&a[at..at + len]);
            }
            Run::Along { i, j } => {
                for (t, d) in dst.iter_mut().enumerate() {
                    *d = a[st.at(i, j + t)];
                }
            }
        }
    });
}

/// Triangle of `a` in storage `st` ← RFP.
fn scatter<T: Copy>(arf: &[T], rfp: Rfp, a: &mut [T], st: &impl Columns) {
    for_each_run(rfp, |start, len, run| {
        let src = &arf[start..start + len];
        match run {
            Run::Down { i, j } => {
                let at = st.at(i, j);
                a[at..at + len].copy_from_slice(src);
            }
            Run::Along { i, j } => {
                for (t, &s) in src.iter().enumerate() {
                    a[st.at(i, j + t)] = s;
                }
            }
        }
    });
}

/// Checks that `full` is a valid `n × n` array and `len` covers it.
fn check_full(op: &'static str, full: Full, n: usize, len: usize) -> Result<()> {
    full.check()?;
    if full.rows != n || full.cols != n {
        return Err(Error::dims(op, format!("full array is {}×{}, the triangle has order {n}", full.rows, full.cols)));
    }
    check_len(op, "full array", full.len(), len)
}

fn check_len(op: &'static str, what: &str, need: usize, len: usize) -> Result<()> {
    if len < need {
        return Err(Error::dims(op, format!("{what} slice has {len} entries, needs at least {need}")));
    }
    Ok(())
}

fn check_packed_rfp(op: &'static str, packed: Packed, rfp: Rfp) -> Result<()> {
    if packed.n != rfp.n || packed.uplo != rfp.uplo {
        return Err(Error::dims(
            op,
            format!(
                "packed triangle is {:?} of order {}, RFP triangle is {:?} of order {}",
                packed.uplo, packed.n, rfp.uplo, rfp.n
            ),
        ));
    }
    Ok(())
}

/// Packs the `rfp.uplo` triangle of the `n × n` array `a` into RFP
/// (`dtrttf`). The other triangle of `a` is not read.
pub fn full_to_rfp<T: Copy>(a: &[T], full: Full, rfp: Rfp, arf: &mut [T]) -> Result<()> {
    const OP: &str = "full_to_rfp";
    check_full(OP, full, rfp.n, a.len())?;
    check_len(OP, "RFP", rfp.len(), arf.len())?;
    gather(a, &full, rfp, arf);
    Ok(())
}

/// Unpacks RFP into the `rfp.uplo` triangle of the `n × n` array `a`
/// (`dtfttr`). The other triangle of `a` is not written.
pub fn rfp_to_full<T: Copy>(arf: &[T], rfp: Rfp, a: &mut [T], full: Full) -> Result<()> {
    const OP: &str = "rfp_to_full";
    check_full(OP, full, rfp.n, a.len())?;
    check_len(OP, "RFP", rfp.len(), arf.len())?;
    scatter(arf, rfp, a, &full);
    Ok(())
}

/// Packs the `packed.uplo` triangle of `a` into packed storage (`dtrttp`).
pub fn full_to_packed<T: Copy>(a: &[T], full: Full, packed: Packed, ap: &mut [T]) -> Result<()> {
    const OP: &str = "full_to_packed";
    check_full(OP, full, packed.n, a.len())?;
    check_len(OP, "packed", packed.len(), ap.len())?;
    for j in 0..packed.n {
        let rows = triangle_rows(packed.uplo, packed.n, j);
        let (from, to) = (full.index(rows.start, j), packed.at(rows.start, j));
        ap[to..to + rows.len()].copy_from_slice(&a[from..from + rows.len()]);
    }
    Ok(())
}

/// Unpacks packed storage into the `packed.uplo` triangle of `a` (`dtpttr`).
pub fn packed_to_full<T: Copy>(ap: &[T], packed: Packed, a: &mut [T], full: Full) -> Result<()> {
    const OP: &str = "packed_to_full";
    check_full(OP, full, packed.n, a.len())?;
    check_len(OP, "packed", packed.len(), ap.len())?;
    for j in 0..packed.n {
        let rows = triangle_rows(packed.uplo, packed.n, j);
        let (from, to) = (packed.at(rows.start, j), full.index(rows.start, j));
        a[to..to + rows.len()].copy_from_slice(&ap[from..from + rows.len()]);
    }
    Ok(())
}

/// RFP to packed storage of the same triangle (`dtfttp`).
pub fn rfp_to_packed<T: Copy>(arf: &[T], rfp: Rfp, ap: &mut [T], packed: Packed) -> Result<()> {
    const OP: &str = "rfp_to_packed";
    check_packed_rfp(OP, packed, rfp)?;
    check_len(OP, "RFP", rfp.len(), arf.len())?;
    check_len(OP, "packed", packed.len(), ap.len())?;
    scatter(arf, rfp, ap, &packed);
    Ok(())
}

/// Packed storage to RFP of the same triangle (`dtpttf`).
pub fn packed_to_rfp<T: Copy>(ap: &[T], packed: Packed, arf: &mut [T], rfp: Rfp) -> Result<()> {
    const OP: &str = "packed_to_rfp";
    check_packed_rfp(OP, packed, rfp)?;
    check_len(OP, "packed", packed.len(), ap.len())?;
    check_len(OP, "RFP", rfp.len(), arf.len())?;
    gather(ap, &packed, rfp, arf);
    Ok(())
}
