//! The blocked factorization.
//!
//! Right-looking by panels, as LAPACK's `dsytrf_rk`: the backend's
//! [`Backend::sytrf_panel`] factors a panel of `nb` (or `nb + 1`) columns,
//! choosing each pivot from the trailing matrix as it stands, and leaves in
//! two dense workspaces the panel's `L` and `W = L·D`; the rest of the
//! trailing matrix is then updated by one level-3 product,
//! `A₂₂ := A₂₂ − L₂₁·W₂₁ᵀ`, on its lower triangle only (`syrkx` on the
//! diagonal tiles, `gemm` below them). A Bunch–Kaufman pivot may come from
//! any column of the trailing matrix, so the next panel waits for the whole
//! update: there is no look-ahead, and the panel's latency is the cost to
//! keep small.
//!
//! The width of a panel is known only once its last pivot is chosen (a 2×2
//! pivot takes one column more), so the host reads it after each panel.
//! Aasen's factorization (`aasen.rs`) and the unpivoted one (`unpivoted.rs`)
//! start from the same entry points.

use super::{aasen, unpivoted};
use crate::backend::{Backend, Block, BufferMut, Op, SymPanel, SymPivoting, Triangle, View, ViewMut};
use crate::factor::cholesky::CholeskyParams;
use crate::layout::Uplo;
use crate::{Error, Result, Scalar};

/// How the factorization chooses its pivots.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LdltPivoting {
    /// Bunch–Kaufman 1×1 and 2×2 pivots: backward stable for every
    /// symmetric matrix, as LAPACK's `dsytrf`.
    BunchKaufman,
    /// Aasen's `P·A·Pᵀ = L·T·Lᵀ` with `T` tridiagonal (Aasen 1971): backward
    /// stable as Bunch–Kaufman, its pivots found in one column as partial
    /// pivoting finds them, and its panels of one width, so the GPU runs it
    /// without waiting on the host. `D` is then `T`.
    Aasen,
    /// No interchanges, 1×1 pivots: `A = L·D·Lᵀ`. Safe for matrices whose
    /// leading principal minors are all safely nonzero — symmetric
    /// quasi-definite matrices `[[H, Bᵀ], [B, −G]]` with `H`, `G` positive
    /// definite (Vanderbei 1995), diagonally dominant matrices. A pivot of
    /// magnitude `≤ tol` is refused as a zero pivot.
    None { tol: f64 },
}

/// Tuning of the blocked factorization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LdltParams {
    /// Columns per block column. With pivoting, the panel that one
    /// `sytrf_panel` call factors: wider panels make the trailing update
    /// more efficient and each pivot search longer. Without, the block
    /// factored recursively before the trailing update, as Cholesky's.
    pub block_size: usize,
    /// Without pivoting, the order of the diagonal blocks at the bottom of
    /// the recursion, at most 64 (unused with pivoting).
    pub leaf_size: usize,
    /// Symmetric updates go by block columns of this width: `syrkx` on
    /// each diagonal tile, `gemm` below it.
    pub update_tile: usize,
}

impl LdltParams {
    /// The blocking of the pivoted factorization of order `n`.
    pub fn pivoted(n: usize) -> Self {
        LdltParams { block_size: 64, leaf_size: 64, update_tile: if n <= 6144 { 1024 } else { 2048 } }
    }

    /// The blocking of Aasen's factorization of order `n`: its panel's cost
    /// is one synchronization of the GPU's blocks a column whatever its
    /// width, so the panels are wide enough for an efficient update (depth
    /// `nb + 1`), and the update goes by wide block columns (measured on
    /// the H100: `nb` 96 against 64, 16 % faster at `n = 16384`).
    pub fn aasen(n: usize) -> Self {
        LdltParams { block_size: 96, leaf_size: 64, update_tile: if n <= 6144 { 1024 } else { 4096 } }
    }

    /// The blocking of the unpivoted factorization of order `n`: that of
    /// Cholesky, whose shape it has.
    pub fn unpivoted(n: usize) -> Self {
        let c = CholeskyParams::for_order(n);
        LdltParams { block_size: c.block_size, leaf_size: c.leaf_size, update_tile: c.update_tile }
    }
}

/// The device memory of an LDLᵀ factorization of order `n` besides the
/// matrix and its outputs: two dense block columns (pivoted, a panel's `L`
/// and `W`; unpivoted, the `W`s of two consecutive block columns), a
/// leaf's scratch and the status words. A caller that factors repeatedly
/// keeps one: the GPU then replays its recording of an unpivoted
/// factorization of the same memory instead of enqueuing it call by call.
pub struct LdltWorkspace<B: Backend, T: Scalar> {
    n: usize,
    params: LdltParams,
    l: B::Buffer<T>,
    w: B::Buffer<T>,
    leaf: B::Buffer<T>,
    diagonal: B::Buffer<T>,
    info: B::Buffer<i32>,
}

impl<B: Backend, T: Scalar> LdltWorkspace<B, T> {
    pub fn new(be: &B, n: usize, params: LdltParams) -> Result<Self> {
        let nb = params.block_size.clamp(1, n.max(1));
        let (cols, leaf) = ((nb + 1).min(n.max(1)), params.leaf_size.clamp(1, unpivoted::LEAF).min(nb));
        Ok(LdltWorkspace {
            n,
            params,
            l: be.alloc(n * cols)?,
            w: be.alloc(n * cols)?,
            leaf: be.alloc(leaf * leaf)?,
            diagonal: be.alloc(n.max(1))?,
            info: be.alloc(2)?,
        })
    }
}

/// Factors the symmetric matrix whose lower triangle `tri` locates in `a`,
/// in place: `L` strictly below the diagonal (with 0 at `(j + 1, j)` of
/// each 2×2 block), `D`'s diagonal on it. `ipiv`, `d` and `e` (vectors of
/// `n` entries) receive the interchanges (1-based rows, applied in order as
/// `laswp` does: `P`), `D`'s diagonal and its subdiagonal (nonzero exactly
/// at the first column of each 2×2 block).
///
/// With Aasen's method `D` is the tridiagonal `T` (`e` its whole
/// subdiagonal, `L(:, 0) = e₀`).
///
/// Returns the first zero pivot (1-based column), if any: with
/// Bunch–Kaufman a column that is exactly zero where it is reached, which
/// leaves `D` singular but the factorization complete; unpivoted, a pivot
/// of magnitude `≤ tol`, which leaves the rest of the factor meaningless.
/// Aasen's method has none to report: `T`'s singularity is read from it.
/// Waits for the factorization (the host reads each panel's width).
#[allow(clippy::too_many_arguments)]
pub fn factor_in_place<B: Backend, T: Scalar>(
    be: &B,
    tri: &Triangle,
    a: &BufferMut<'_, B, T>,
    ipiv: ViewMut<'_, B, i32>,
    d: ViewMut<'_, B, T>,
    e: ViewMut<'_, B, T>,
    pivoting: LdltPivoting,
    params: LdltParams,
) -> Result<Option<usize>> {
    let mut ws = LdltWorkspace::new(be, tri.cols, params)?;
    factor_in_place_with(be, tri, a, (ipiv, d, e), pivoting, &mut ws)
}

/// [`factor_in_place`] in the caller's workspace, whose order must be the
/// matrix's; the blocking is the workspace's.
pub fn factor_in_place_with<B: Backend, T: Scalar>(
    be: &B,
    tri: &Triangle,
    a: &BufferMut<'_, B, T>,
    (mut ipiv, mut d, mut e): (ViewMut<'_, B, i32>, ViewMut<'_, B, T>, ViewMut<'_, B, T>),
    pivoting: LdltPivoting,
    ws: &mut LdltWorkspace<B, T>,
) -> Result<Option<usize>> {
    let n = tri.cols;
    if ws.n != n {
        return Err(Error::dims("ldlt", format!("a workspace of order {} for a matrix of order {n}", ws.n)));
    }
    if n == 0 {
        return Ok(None);
    }
    let params = ws.params;
    if pivoting == LdltPivoting::Aasen {
        aasen::factor(be, tri, a, (ipiv, d, e), params.block_size, params.update_tile)?;
        return Ok(None);
    }
    if let LdltPivoting::None { tol } = pivoting {
        let rows: Vec<i32> = (1..=n).map(|i| i32::try_from(i).unwrap_or(i32::MAX)).collect();
        be.copy(View::dense(&be.upload(&rows)?, n, 1)?, ipiv)?;
        be.fill(e, T::ZERO)?;
        let blocking = CholeskyParams {
            block_size: params.block_size,
            leaf_size: params.leaf_size,
            update_tile: params.update_tile,
            ..CholeskyParams::default()
        };
        let work = unpivoted::Work {
            w: [BufferMut::new(&mut ws.l), BufferMut::new(&mut ws.w)],
            leaf: BufferMut::new(&mut ws.leaf),
            info: ViewMut::new(&mut ws.info, Block::dense(1, 1))?,
        };
        unpivoted::factor(be, tri, a, &mut d, tol, blocking, work)?;
        let mut host = vec![T::ZERO; n];
        be.copy(d.rb(), ViewMut::dense(&mut ws.diagonal, n, 1)?)?;
        be.download(&ws.diagonal, &mut host)?;
        // The panel's own test: not above tol, NaN included.
        let zero = host.iter().position(|x| x.abs().to_f64().partial_cmp(&tol) != Some(std::cmp::Ordering::Greater));
        return Ok(zero.map(|j| j + 1));
    }
    let nb = params.block_size.clamp(1, n);
    let (l, w, info) = (&mut ws.l, &mut ws.w, &mut ws.info);
    be.fill(ViewMut::dense(info, 2, 1)?, 0)?;
    let mut k = 0;
    while k < n {
        let nbk = nb.min(n - k);
        let panel = Block { offset: 0, rows: n - k, cols: (nbk + 1).min(n - k), ld: n };
        be.sytrf_panel(
            a,
            tri,
            k,
            SymPanel {
                nb: nbk,
                l: ViewMut::new(l, panel)?,
                w: ViewMut::new(w, panel)?,
                ipiv: ipiv.rb_mut(),
                d: d.rb_mut(),
                e: e.rb_mut(),
                info: ViewMut::dense(info, 2, 1)?,
            },
            SymPivoting::BunchKaufman,
        )?;
        let mut status = [0i32; 2];
        be.download(info, &mut status)?;
        let jb = usize::try_from(status[1]).unwrap_or(0);
        if jb < nbk || jb > nbk + 1 || k + jb > n {
            return Err(Error::InvalidArgument(format!(
                "sytrf_panel factored {} columns of a panel of {nbk} at column {k} of {n}",
                status[1]
            )));
        }
        let k2 = k + jb;
        if k2 < n {
            let rows = Block { offset: jb, rows: n - k2, cols: jb, ld: n };
            update_columns(be, tri, a, (View::new(l, rows)?, View::new(w, rows)?), k2, (k2, n), params.update_tile)?;
        }
        k = k2;
    }
    let mut status = [0i32; 2];
    be.download(info, &mut status)?;
    Ok(usize::try_from(status[0]).ok().filter(|&c| c > 0))
}

/// `C := C − X·Yᵀ` on the lower triangle of the block columns `from..to`
/// of `L`, all rows from `from` down (`C = L[from.., from..to]`); `X` and
/// `Y` are dense, their row `r` standing for row `k + r` of `L` (`k ≤
/// from`). By block columns of `tile`, none across the triangle's split:
/// the diagonal tile by `syrkx` in the orientation its piece is stored
/// in, the rows below it by `gemm`.
pub(super) fn update_columns<B: Backend, T: Scalar>(
    be: &B,
    tri: &Triangle,
    a: &BufferMut<'_, B, T>,
    (x, y): (View<'_, B, T>, View<'_, B, T>),
    k: usize,
    (from, to): (usize, usize),
    tile: usize,
) -> Result<()> {
    let (n, depth, s) = (tri.cols, x.cols(), tri.split);
    let one = T::ONE;
    let mut t = from;
    while t < to {
        let wdt = tile.max(1).min(to - t).min(if t < s { s - t } else { to - t });
        let c = tri.at(t, t, wdt, wdt)?;
        let (xt, yt) = (x.sub(t - k, 0, wdt, depth)?, y.sub(t - k, 0, wdt, depth)?);
        if c.transposed {
            // Cᵀ −= Y·Xᵀ, on the upper triangle.
            be.syrkx(Uplo::Upper, Op::NoTrans, -one, yt, xt, one, a.view_mut(c.block)?)?;
        } else {
            be.syrkx(Uplo::Lower, Op::NoTrans, -one, xt, yt, one, a.view_mut(c.block)?)?;
        }
        for (i, rows) in tri.row_runs(t + wdt, n - t - wdt, t) {
            let c = tri.at(i, t, rows, wdt)?;
            let xi = x.sub(i - k, 0, rows, depth)?;
            if c.transposed {
                be.gemm(-one, yt, Op::NoTrans, xi, Op::Trans, one, a.view_mut(c.block)?)?;
            } else {
                be.gemm(-one, xi, Op::NoTrans, yt, Op::Trans, one, a.view_mut(c.block)?)?;
            }
        }
        t += wdt;
    }
    Ok(())
}
