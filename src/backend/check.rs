//! Argument checks shared by every backend: shapes, then overlap of the
//! block written with the blocks read. Each backend calls these first, so a
//! bad call is the same `Err` on the CPU and on the GPU.

use super::region::{Region, Shape, check_disjoint};
use super::shallow_water::{AdiFields, Stepping, Sweep};
use super::{
    AasenPanel, Backend, BufferMut, DeviceBuffer, Op, Side, Strided, SymPanel, SystemLayout, Triangle, View, ViewMut,
};
use crate::layout::{Rfp, Uplo};
use crate::{Elem, Error, Result, Scalar};

fn region<B: Backend, E: Elem>(v: &View<'_, B, E>, shape: Shape) -> Region {
    Region::new(v.buffer(), v.block(), shape)
}

fn region_mut<B: Backend, E: Elem>(v: &ViewMut<'_, B, E>, shape: Shape) -> Region {
    Region::new(v.buffer(), v.block(), shape)
}

fn shape_of<B: Backend, E: Elem>(v: &View<'_, B, E>) -> String {
    format!("{}×{}", v.rows(), v.cols())
}

fn square<B: Backend, E: Elem>(op: &'static str, name: &str, a: &View<'_, B, E>) -> Result<()> {
    if a.rows() != a.cols() {
        return Err(Error::dims(op, format!("{name} must be square, is {}", shape_of(a))));
    }
    Ok(())
}

fn same_shape<B: Backend, E: Elem, F: Elem>(op: &'static str, x: &View<'_, B, E>, y: &ViewMut<'_, B, F>) -> Result<()> {
    if (x.rows(), x.cols()) != (y.rows(), y.cols()) {
        return Err(Error::dims(op, format!("source is {}, destination is {}×{}", shape_of(x), y.rows(), y.cols())));
    }
    Ok(())
}

/// Source and destination of an elementwise operation: same shape, and the
/// destination does not overlap the source unless it is the very same block.
pub fn elementwise<B: Backend, E: Elem, F: Elem>(
    op: &'static str,
    x: &View<'_, B, E>,
    y: &ViewMut<'_, B, F>,
) -> Result<()> {
    same_shape(op, x, y)?;
    let (rx, ry) = (region(x, Shape::Full), region_mut(y, Shape::Full));
    if rx.buffer == ry.buffer && x.block() == y.block() {
        return Ok(());
    }
    check_disjoint(op, ry, &[rx])
}

pub fn geam<B: Backend, T: Elem>(
    a: &View<'_, B, T>,
    op_a: Op,
    b: &View<'_, B, T>,
    op_b: Op,
    c: &ViewMut<'_, B, T>,
) -> Result<()> {
    let (sa, sb) = (op_a.apply(a.rows(), a.cols()), op_b.apply(b.rows(), b.cols()));
    if sa != sb || sa != (c.rows(), c.cols()) {
        return Err(Error::dims(
            "geam",
            format!("op(A) is {}×{}, op(B) is {}×{}, C is {}×{}", sa.0, sa.1, sb.0, sb.1, c.rows(), c.cols()),
        ));
    }
    check_disjoint("geam", region_mut(c, Shape::Full), &[region(a, Shape::Full), region(b, Shape::Full)])
}

pub fn square_mut<B: Backend, T: Elem>(op: &'static str, a: &ViewMut<'_, B, T>) -> Result<()> {
    square(op, "A", &a.rb())
}

/// Copies between distinct blocks.
pub fn copy<B: Backend, E: Elem>(src: &View<'_, B, E>, dst: &ViewMut<'_, B, E>) -> Result<()> {
    same_shape("copy", src, dst)?;
    check_disjoint("copy", region_mut(dst, Shape::Full), &[region(src, Shape::Full)])
}

pub fn gemm<B: Backend, T: Elem>(
    a: &View<'_, B, T>,
    op_a: Op,
    b: &View<'_, B, T>,
    op_b: Op,
    c: &ViewMut<'_, B, T>,
) -> Result<()> {
    let (m, k) = op_a.apply(a.rows(), a.cols());
    let (k2, n) = op_b.apply(b.rows(), b.cols());
    if k != k2 || (c.rows(), c.cols()) != (m, n) {
        return Err(Error::dims(
            "gemm",
            format!("op(A) is {m}×{k}, op(B) is {k2}×{n}, C is {}×{}", c.rows(), c.cols()),
        ));
    }
    check_disjoint("gemm", region_mut(c, Shape::Full), &[region(a, Shape::Full), region(b, Shape::Full)])
}

pub fn syrk<B: Backend, T: Elem>(uplo: Uplo, op: Op, a: &View<'_, B, T>, c: &ViewMut<'_, B, T>) -> Result<()> {
    let (n, k) = op.apply(a.rows(), a.cols());
    if (c.rows(), c.cols()) != (n, n) {
        return Err(Error::dims("syrk", format!("op(A) is {n}×{k}, C is {}×{}", c.rows(), c.cols())));
    }
    check_disjoint("syrk", region_mut(c, Shape::Triangle(uplo)), &[region(a, Shape::Full)])
}

/// `trsm` and `trmm`: `A` square, of `B`'s rows (`Left`) or columns (`Right`).
pub fn triangular<B: Backend, T: Elem>(
    op: &'static str,
    side: Side,
    uplo: Uplo,
    a: &View<'_, B, T>,
    b: &ViewMut<'_, B, T>,
) -> Result<()> {
    square(op, "A", a)?;
    let need = if side == Side::Left { b.rows() } else { b.cols() };
    if a.rows() != need {
        return Err(Error::dims(
            op,
            format!("A is {} but B is {}×{} ({side:?} side)", shape_of(a), b.rows(), b.cols()),
        ));
    }
    check_disjoint(op, region_mut(b, Shape::Full), &[region(a, Shape::Triangle(uplo))])
}

/// `trsv_wide`: `A` square, `x` a row or column of its order, apart from it.
pub fn trsv_wide<B: Backend, T: Elem>(uplo: Uplo, a: &View<'_, B, T>, x: &ViewMut<'_, B, f64>) -> Result<usize> {
    square("trsv_wide", "A", a)?;
    let len = x.rb().block().vector_len();
    if len != Some(a.rows()) {
        return Err(Error::dims(
            "trsv_wide",
            format!("A is {} but x is {}×{}, not a vector of its order", shape_of(a), x.rows(), x.cols()),
        ));
    }
    check_disjoint("trsv_wide", region_mut(x, Shape::Full), &[region(a, Shape::Triangle(uplo))])?;
    Ok(a.rows())
}

/// A square block to factor and a one-entry status word.
pub fn potrf<B: Backend, T: Elem>(a: &ViewMut<'_, B, T>, info: &ViewMut<'_, B, i32>) -> Result<()> {
    square_mut("potrf", a)?;
    if (info.rows(), info.cols()) != (1, 1) {
        return Err(Error::dims("potrf", format!("info must be 1×1, is {}×{}", info.rows(), info.cols())));
    }
    Ok(())
}

/// A panel for `potrf_panel`: its diagonal block on top (`Lower`, at least
/// as many rows as columns) or on the left (`Upper`).
pub fn potrf_panel<B: Backend, T: Elem>(uplo: Uplo, a: &ViewMut<'_, B, T>, info: &ViewMut<'_, B, i32>) -> Result<()> {
    let (n, m) = match uplo {
        Uplo::Lower => (a.cols(), a.rows()),
        Uplo::Upper => (a.rows(), a.cols()),
    };
    if m < n {
        return Err(Error::dims(
            "potrf_panel",
            format!("a {uplo:?} panel must be at least as long as wide, is {}×{}", a.rows(), a.cols()),
        ));
    }
    if (info.rows(), info.cols()) != (1, 1) {
        return Err(Error::dims("potrf_panel", format!("info must be 1×1, is {}×{}", info.rows(), info.cols())));
    }
    Ok(())
}

/// A panel for `ldlt_panel`, as for `potrf_panel`, with `W` shaped as the
/// rows below the diagonal block (transposed for `Upper`) and `d` a vector
/// of its width. Returns `(n, m)`: the panel's width and length.
pub fn ldlt_panel<B: Backend, T: Elem>(
    uplo: Uplo,
    a: &ViewMut<'_, B, T>,
    w: &ViewMut<'_, B, T>,
    d: &ViewMut<'_, B, T>,
    info: &ViewMut<'_, B, i32>,
) -> Result<(usize, usize)> {
    potrf_panel(uplo, a, info)?;
    let (n, m) = match uplo {
        Uplo::Lower => (a.cols(), a.rows()),
        Uplo::Upper => (a.rows(), a.cols()),
    };
    let below = if uplo == Uplo::Lower { (m - n, n) } else { (n, m - n) };
    if (w.rows(), w.cols()) != below {
        return Err(Error::dims(
            "ldlt_panel",
            format!(
                "W must be {}×{} for a {}×{} {uplo:?} panel, is {}×{}",
                below.0,
                below.1,
                a.rows(),
                a.cols(),
                w.rows(),
                w.cols()
            ),
        ));
    }
    if n > 0 && d.block().vector_len() != Some(n) {
        return Err(Error::dims(
            "ldlt_panel",
            format!("d must be a vector of {n} entries, is {}×{}", d.rows(), d.cols()),
        ));
    }
    Ok((n, m))
}

/// A batch of tridiagonal systems: `dl`, `d`, `du` and `b` of one shape,
/// `info` a vector of one entry per system. Returns `(m, count)`.
pub fn tridiagonal<B: Backend, T: Elem>(
    layout: SystemLayout,
    dl: &ViewMut<'_, B, T>,
    d: &ViewMut<'_, B, T>,
    du: &ViewMut<'_, B, T>,
    b: &ViewMut<'_, B, T>,
    info: &ViewMut<'_, B, i32>,
) -> Result<(usize, usize)> {
    let shape = (d.rows(), d.cols());
    for (name, x) in [("dl", dl), ("du", du), ("b", b)] {
        if (x.rows(), x.cols()) != shape {
            return Err(Error::dims(
                "tridiagonal_solve",
                format!("{name} is {}×{} but d is {}×{}", x.rows(), x.cols(), shape.0, shape.1),
            ));
        }
    }
    let (m, count) = match layout {
        SystemLayout::Columns => shape,
        SystemLayout::Rows => (shape.1, shape.0),
    };
    if count > 0 && info.block().vector_len() != Some(count) {
        return Err(Error::dims(
            "tridiagonal_solve",
            format!("info must be a vector of {count} entries (one per system), is {}×{}", info.rows(), info.cols()),
        ));
    }
    if i32::try_from(m).is_err() {
        return Err(Error::dims("tridiagonal_solve", format!("systems of order {m}, past 32-bit row numbers")));
    }
    // All four are written: no two may share an entry.
    let all = [dl, d, du, b].map(|x| region_mut(x, Shape::Full));
    for (k, r) in all.iter().enumerate() {
        check_disjoint("tridiagonal_solve", *r, &all[k + 1..])?;
    }
    Ok((m, count))
}

/// A vector block of `len` entries used as a diagonal scaling.
pub fn scaling<B: Backend, T: Elem>(
    op: &'static str,
    d: &View<'_, B, T>,
    len: usize,
    a: &ViewMut<'_, B, T>,
) -> Result<()> {
    if d.block().vector_len() != Some(len) {
        return Err(Error::dims(op, format!("d must be a vector of {len} entries, is {}", shape_of(d))));
    }
    check_disjoint(op, region_mut(a, Shape::Full), &[region(d, Shape::Full)])
}

/// `scaled_syrk_f32`: `C` is `n × n` for `A` of `n × k`, `d` has `k`
/// entries (`C`, of another element type, cannot overlap them).
pub fn scaled_syrk_f32<B: Backend>(a: &View<'_, B, f64>, d: &View<'_, B, f64>, c: &ViewMut<'_, B, f32>) -> Result<()> {
    let (n, k) = (a.rows(), a.cols());
    if (c.rows(), c.cols()) != (n, n) {
        return Err(Error::dims("scaled_syrk_f32", format!("A is {n}×{k}, C is {}×{}", c.rows(), c.cols())));
    }
    if d.block().vector_len() != Some(k) {
        return Err(Error::dims("scaled_syrk_f32", format!("d must be a vector of {k} entries, is {}", shape_of(d))));
    }
    Ok(())
}

/// `weighted_residual`: `d`, `b` vectors of `A`'s columns, `x`, `r` of its
/// rows; `r` disjoint from the operands.
pub fn weighted_residual<B: Backend>(
    a: &View<'_, B, f64>,
    d: &View<'_, B, f64>,
    b: &View<'_, B, f64>,
    x: &View<'_, B, f64>,
    r: &ViewMut<'_, B, f64>,
) -> Result<()> {
    let (m, n) = (a.rows(), a.cols());
    for (name, v, len) in [("d", d, n), ("b", b, n), ("x", x, m)] {
        if v.block().vector_len() != Some(len) {
            return Err(Error::dims(
                "weighted_residual",
                format!("A is {m}×{n}: {name} must be a vector of {len} entries, is {}", shape_of(v)),
            ));
        }
    }
    if r.block().vector_len() != Some(m) {
        return Err(Error::dims(
            "weighted_residual",
            format!("A is {m}×{n}: r must be a vector of {m} entries, is {}×{}", r.rows(), r.cols()),
        ));
    }
    let operands = [region(a, Shape::Full), region(d, Shape::Full), region(b, Shape::Full), region(x, Shape::Full)];
    check_disjoint("weighted_residual", region_mut(r, Shape::Full), &operands)
}

pub fn vector<B: Backend, T: Elem>(op: &'static str, x: &View<'_, B, T>) -> Result<usize> {
    x.block().vector_len().ok_or_else(|| Error::dims(op, format!("x must be a row or a column, is {}", shape_of(x))))
}

fn rfp_shapes(op: &'static str, full: (usize, usize), rfp: Rfp, arf: (usize, usize), same_buffer: bool) -> Result<()> {
    if full != (rfp.n, rfp.n) {
        return Err(Error::dims(op, format!("full block is {}×{}, RFP holds n = {}", full.0, full.1, rfp.n)));
    }
    if arf != (rfp.len(), 1) {
        return Err(Error::dims(
            op,
            format!("the RFP array must be one column of n(n+1)/2 = {} entries, is {}×{}", rfp.len(), arf.0, arf.1),
        ));
    }
    if same_buffer {
        return Err(Error::Overlapping { op: op.into(), operands: "the RFP array and the full matrix" });
    }
    Ok(())
}

/// Packing: the `rfp.uplo` triangle of the `n × n` block `a` into a column of
/// `n(n+1)/2` entries of another buffer.
pub fn full_to_rfp<B: Backend, T: Elem>(a: &View<'_, B, T>, rfp: Rfp, arf: &ViewMut<'_, B, T>) -> Result<()> {
    let same = region(a, Shape::Full).buffer == region_mut(arf, Shape::Full).buffer;
    rfp_shapes("full_to_rfp", (a.rows(), a.cols()), rfp, (arf.rows(), arf.cols()), same)
}

/// Unpacking into the `rfp.uplo` triangle of `a`.
pub fn rfp_to_full<B: Backend, T: Elem>(arf: &View<'_, B, T>, rfp: Rfp, a: &ViewMut<'_, B, T>) -> Result<()> {
    let same = region(arf, Shape::Full).buffer == region_mut(a, Shape::Full).buffer;
    rfp_shapes("rfp_to_full", (a.rows(), a.cols()), rfp, (arf.rows(), arf.cols()), same)
}

/// A Householder panel (`m × k`, `m ≥ k`) and its `k × k` triangular factor,
/// both written, so disjoint.
pub fn householder<B: Backend, T: Elem>(a: &ViewMut<'_, B, T>, t: &ViewMut<'_, B, T>) -> Result<()> {
    if a.rows() < a.cols() {
        return Err(Error::dims("householder", format!("the panel must not be wide, is {}×{}", a.rows(), a.cols())));
    }
    if a.cols() > super::HOUSEHOLDER_MAX_COLS {
        return Err(Error::dims(
            "householder",
            format!("a panel has at most {} columns, this one {}", super::HOUSEHOLDER_MAX_COLS, a.cols()),
        ));
    }
    if (t.rows(), t.cols()) != (a.cols(), a.cols()) {
        return Err(Error::dims(
            "householder",
            format!("T must be {0}×{0} for a panel of {0} columns, is {1}×{2}", a.cols(), t.rows(), t.cols()),
        ));
    }
    check_disjoint("householder", region_mut(t, Shape::Full), &[region_mut(a, Shape::Full)])
}

/// `larfb`: `V` (`mp × kb`, `mp ≥ kb`), `T` (`kb × kb`) and `C` (`mp` rows)
/// agree, `work` holds `W` (`kb·nc` entries), and `C` overlaps none of them.
pub fn larfb<B: Backend, T: Elem>(
    v: &View<'_, B, T>,
    t: &View<'_, B, T>,
    c: &ViewMut<'_, B, T>,
    work: &B::Buffer<T>,
) -> Result<()> {
    let (mp, kb, nc) = (v.rows(), v.cols(), c.cols());
    if mp < kb || c.rows() != mp || (t.rows(), t.cols()) != (kb, kb) {
        return Err(Error::dims("larfb", format!("V is {mp}×{kb}, T {}×{}, C {}×{nc}", t.rows(), t.cols(), c.rows())));
    }
    if work.len() < kb * nc {
        return Err(Error::dims("larfb", format!("the workspace holds {} entries, W needs {kb}·{nc}", work.len())));
    }
    check_disjoint("larfb", region_mut(c, Shape::Full), &[region(v, Shape::Full), region(t, Shape::Full)])
}

/// `getrf_panel`: a block with at least as many rows as columns, a vector of
/// one pivot per column and a one-entry status word.
pub fn getrf_panel<B: Backend, T: Elem>(
    a: &ViewMut<'_, B, T>,
    ipiv: &ViewMut<'_, B, i32>,
    info: &ViewMut<'_, B, i32>,
) -> Result<()> {
    if a.rows() < a.cols() {
        return Err(Error::dims("getrf_panel", format!("the panel must be tall, is {}×{}", a.rows(), a.cols())));
    }
    if ipiv.rb().block().vector_len() != Some(a.cols()) {
        return Err(Error::dims(
            "getrf_panel",
            format!("ipiv must be a vector of {} entries, is {}×{}", a.cols(), ipiv.rows(), ipiv.cols()),
        ));
    }
    if (info.rows(), info.cols()) != (1, 1) {
        return Err(Error::dims("getrf_panel", format!("info must be 1×1, is {}×{}", info.rows(), info.cols())));
    }
    Ok(())
}

/// `getrf_leaf`: the leaf's columns lie in the block; returns it.
pub fn getrf_leaf<'a, B: Backend, T: Elem>(
    a: ViewMut<'a, B, T>,
    cols: &std::ops::Range<usize>,
) -> Result<ViewMut<'a, B, T>> {
    if cols.start > cols.end || cols.end > a.cols() {
        return Err(Error::dims(
            "getrf_leaf",
            format!("columns {}..{} of a block of {} columns", cols.start, cols.end, a.cols()),
        ));
    }
    Ok(a)
}

/// `laswp`: the pivots are a vector of at most `a.rows` entries.
pub fn laswp<B: Backend, T: Elem>(a: &ViewMut<'_, B, T>, ipiv: &View<'_, B, i32>) -> Result<usize> {
    let k = vector("laswp", ipiv)?;
    if k > a.rows() {
        return Err(Error::dims("laswp", format!("{k} pivots for a block of {} rows", a.rows())));
    }
    Ok(k)
}

/// `permute_rows`: one index for every row of `B`.
pub fn permute_rows<B: Backend, T: Elem>(perm: &View<'_, B, i32>, b: &ViewMut<'_, B, T>) -> Result<()> {
    let len = vector("permute_rows", perm)?;
    if len != b.rows() {
        return Err(Error::dims("permute_rows", format!("{len} indices for a block of {} rows", b.rows())));
    }
    Ok(())
}

/// `scaled_syrk`: `C` of `A`'s rows, `d` of `A`'s columns, `C` disjoint from both.
pub fn scaled_syrk<B: Backend, T: Elem>(
    uplo: Uplo,
    a: &View<'_, B, T>,
    d: &View<'_, B, T>,
    c: &ViewMut<'_, B, T>,
) -> Result<()> {
    syrk(uplo, Op::NoTrans, a, c)?;
    scaling("scaled_syrk", d, a.cols(), c)
}

/// `scaled_gemm`: `C = A·diag(d)²·Bᵀ` shapes, `C` disjoint from the operands.
pub fn scaled_gemm<B: Backend, T: Elem>(
    a: &View<'_, B, T>,
    b: &View<'_, B, T>,
    d: &View<'_, B, T>,
    c: &ViewMut<'_, B, T>,
) -> Result<()> {
    gemm(a, Op::NoTrans, b, Op::Trans, c)?;
    scaling("scaled_gemm", d, a.cols(), c)
}

/// `syrkx`: `op(A)` and `op(B)` of one shape, `C` square of their rows and
/// disjoint from both.
pub fn syrkx<B: Backend, T: Elem>(
    uplo: Uplo,
    op: Op,
    a: &View<'_, B, T>,
    b: &View<'_, B, T>,
    c: &ViewMut<'_, B, T>,
) -> Result<()> {
    if (a.rows(), a.cols()) != (b.rows(), b.cols()) {
        return Err(Error::dims("syrkx", format!("A is {} but B is {}", shape_of(a), shape_of(b))));
    }
    syrk(uplo, op, a, c)?;
    check_disjoint("syrkx", region_mut(c, Shape::Triangle(uplo)), &[region(b, Shape::Full)])
}

/// `sytrf_panel`: a square triangle whose pieces lie in `a`, the panel
/// inside it, workspaces of `(n − k) × (nb + 1)` and vectors of `n`.
pub fn sytrf_panel<B: Backend, T: Scalar>(
    a: &BufferMut<'_, B, T>,
    tri: &Triangle,
    k: usize,
    panel: &SymPanel<'_, B, T>,
) -> Result<()> {
    let n = tri.cols;
    if tri.rows != n {
        return Err(Error::dims("sytrf_panel", format!("the triangle must be square, is {}×{n}", tri.rows)));
    }
    for piece in [tri.l11, tri.l21, tri.l22] {
        a.view(piece.block)?;
    }
    if panel.nb == 0 || k + panel.nb > n {
        return Err(Error::dims(
            "sytrf_panel",
            format!("panel of {} columns at {k} in a matrix of order {n}", panel.nb),
        ));
    }
    let width = (panel.nb + 1).min(n - k);
    for (name, x) in [("L", &panel.l), ("W", &panel.w)] {
        if x.rows() < n - k || x.cols() < width {
            return Err(Error::dims(
                "sytrf_panel",
                format!("{name} must be at least {}×{width}, is {}×{}", n - k, x.rows(), x.cols()),
            ));
        }
    }
    let (ipiv, d, e) = (panel.ipiv.block(), panel.d.block(), panel.e.block());
    if [ipiv, d, e].iter().any(|b| b.vector_len() != Some(n)) {
        return Err(Error::dims("sytrf_panel", format!("ipiv, d and e must be vectors of {n} entries")));
    }
    if panel.info.block().vector_len() != Some(2) {
        return Err(Error::dims("sytrf_panel", "info must be a vector of 2 entries".to_string()));
    }
    Ok(())
}

/// `aasen_panel`: a square triangle whose pieces lie in `a`, `1 ≤ nb ≤
/// n − k`, workspaces of `(n − k) × (nb + 2)` and `(n − k) × (nb + 1)`,
/// `nb` rows and vectors of `n`. Returns `n`.
pub fn aasen_panel<B: Backend, T: Scalar>(
    a: &BufferMut<'_, B, T>,
    tri: &Triangle,
    k: usize,
    panel: &AasenPanel<'_, B, T>,
) -> Result<usize> {
    let n = tri.cols;
    if tri.rows != n {
        return Err(Error::dims("aasen_panel", format!("the triangle must be square, is {}×{n}", tri.rows)));
    }
    for piece in [tri.l11, tri.l21, tri.l22] {
        a.view(piece.block)?;
    }
    let nb = panel.nb;
    if nb == 0 || k + nb > n || i32::try_from(n).is_err() {
        return Err(Error::dims("aasen_panel", format!("panel of {nb} columns at {k} in a matrix of order {n}")));
    }
    for (name, x, cols) in [("L", &panel.l, nb + 2), ("Y", &panel.y, nb + 1)] {
        if x.rows() != n - k || x.cols() != cols {
            return Err(Error::dims(
                "aasen_panel",
                format!("{name} must be {}×{cols}, is {}×{}", n - k, x.rows(), x.cols()),
            ));
        }
    }
    if panel.rows.block().vector_len() != Some(nb) {
        return Err(Error::dims("aasen_panel", format!("rows must be a vector of {nb} entries")));
    }
    if [panel.d.block(), panel.e.block()].iter().any(|b| b.vector_len() != Some(n)) {
        return Err(Error::dims("aasen_panel", format!("d and e must be vectors of {n} entries")));
    }
    Ok(n)
}

/// `aasen_interchange`: as `aasen_panel`, `ipiv` a vector of `n`, `x` and
/// `y` of `n − k − nb` rows and `nb + 2`, `nb + 1` columns. Returns `n`.
pub fn aasen_interchange<B: Backend, T: Scalar>(
    a: &BufferMut<'_, B, T>,
    tri: &Triangle,
    k: usize,
    panel: &AasenPanel<'_, B, T>,
    ipiv: &ViewMut<'_, B, i32>,
    x: &ViewMut<'_, B, T>,
    y: &ViewMut<'_, B, T>,
) -> Result<usize> {
    let n = aasen_panel(a, tri, k, panel)?;
    if ipiv.block().vector_len() != Some(n) {
        return Err(Error::dims("aasen_interchange", format!("ipiv must be a vector of {n} entries")));
    }
    let rows = n - k - panel.nb;
    for (name, m, cols) in [("X", x, panel.nb + 2), ("Y", y, panel.nb + 1)] {
        if m.rows() != rows || m.cols() != cols {
            return Err(Error::dims(
                "aasen_interchange",
                format!("{name} must be {rows}×{cols}, is {}×{}", m.rows(), m.cols()),
            ));
        }
    }
    Ok(n)
}

/// `block_diagonal_solve`: `d` and `e` vectors of `B`'s rows.
pub fn block_diagonal_solve<B: Backend, T: Elem>(
    d: &View<'_, B, T>,
    e: &View<'_, B, T>,
    b: &ViewMut<'_, B, T>,
) -> Result<()> {
    let n = b.rows();
    if vector("block_diagonal_solve", d)? != n || vector("block_diagonal_solve", e)? != n {
        return Err(Error::dims(
            "block_diagonal_solve",
            format!("d and e must have {n} entries, have {} and {}", shape_of(d), shape_of(e)),
        ));
    }
    check_disjoint(
        "block_diagonal_solve",
        region_mut(b, Shape::Full),
        &[region(d, Shape::Full), region(e, Shape::Full)],
    )
}

/// The operands of a batched primitive, as `(name, buffer id, stride,
/// count)`: one count for all, and one stride for the operands that share
/// a buffer (then what member 0's check proves holds for every member).
/// Returns the count.
pub fn members(op: &'static str, operands: &[(&str, usize, usize, usize)]) -> Result<usize> {
    let (_, _, _, count) = operands[0];
    for (i, &(name, id, stride, n)) in operands.iter().enumerate() {
        if n != count {
            return Err(Error::dims(op, format!("{name} has {n} members, {} has {count}", operands[0].0)));
        }
        if let Some(&(other, ..)) = operands[..i].iter().find(|o| o.1 == id && o.2 != stride && count > 1) {
            return Err(Error::InvalidArgument(format!(
                "{op}: {name} and {other} share a buffer with different strides"
            )));
        }
    }
    Ok(count)
}

/// `(name, buffer id, stride, count)` of a strided operand, for [`members`].
pub fn operand<'a, B: Backend, E: Elem>(name: &'a str, x: &Strided<'_, B, E>) -> (&'a str, usize, usize, usize) {
    (name, x.buffer().id(), x.stride(), x.count())
}

/// The three grids of a staggered shallow-water model of `nx × ny` cells,
/// in the coordinates of a sweep.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Staggered {
    Cells,
    Normal,
    Tangential,
}

impl Staggered {
    /// The block shape of this grid for the cells' shape `(nx, ny)`.
    fn shape(self, sweep: Sweep, (nx, ny): (usize, usize)) -> (usize, usize) {
        let faces_x = (nx + 1, ny);
        let faces_y = (nx, ny + 1);
        match (self, sweep) {
            (Staggered::Cells, _) => (nx, ny),
            (Staggered::Normal, Sweep::X) | (Staggered::Tangential, Sweep::Y) => faces_x,
            (Staggered::Normal, Sweep::Y) | (Staggered::Tangential, Sweep::X) => faces_y,
        }
    }
}

/// The operands of a shallow-water pass: each of the shape its grid has
/// for the cells' `(nx, ny)` (both at least 1), the constants positive and
/// finite, and no block written overlapping another operand. Returns
/// `(nx, ny)`.
fn staggered<B: Backend>(
    op: &'static str,
    sweep: Sweep,
    p: &Stepping,
    cells: (usize, usize),
    read: &[(&str, Staggered, &View<'_, B, f64>)],
    written: &[(&str, Staggered, &ViewMut<'_, B, f64>)],
) -> Result<(usize, usize)> {
    if cells.0 == 0 || cells.1 == 0 {
        return Err(Error::dims(op, format!("a grid of {}×{} cells: both must be at least 1", cells.0, cells.1)));
    }
    let shapes = read
        .iter()
        .map(|(name, grid, v)| (*name, *grid, (v.rows(), v.cols())))
        .chain(written.iter().map(|(name, grid, v)| (*name, *grid, (v.rows(), v.cols()))));
    for (name, grid, shape) in shapes {
        let want = grid.shape(sweep, cells);
        if shape != want {
            return Err(Error::dims(
                op,
                format!(
                    "{name} is {}×{} but {}×{} cells need {}×{}",
                    shape.0, shape.1, cells.0, cells.1, want.0, want.1
                ),
            ));
        }
    }
    for (name, x) in [("g", p.g), ("dt", p.dt), ("dx", p.dx), ("dy", p.dy), ("Chézy coefficient", p.chezy)] {
        if x.is_nan() || x <= 0.0 || (name != "Chézy coefficient" && x.is_infinite()) {
            return Err(Error::InvalidArgument(format!("{op}: {name} must be positive and finite, is {x}")));
        }
    }
    if !(p.dry.is_finite() && p.dry >= 0.0) {
        return Err(Error::InvalidArgument(format!("{op}: the dry depth must be finite and ≥ 0, is {}", p.dry)));
    }
    let reads: Vec<Region> = read.iter().map(|(_, _, v)| region(v, Shape::Full)).collect();
    let writes: Vec<Region> = written.iter().map(|(_, _, v)| region_mut(v, Shape::Full)).collect();
    for (k, w) in writes.iter().enumerate() {
        check_disjoint(op, *w, &reads)?;
        check_disjoint(op, *w, &writes[k + 1..])?;
    }
    Ok(cells)
}

/// `eulerian_lagrangian`: `normal` and `f` on the sweep's normal faces,
/// `tangential` on the others. Returns the cells' `(nx, ny)`.
pub fn eulerian_lagrangian<B: Backend>(
    sweep: Sweep,
    p: &Stepping,
    normal: &View<'_, B, f64>,
    tangential: &View<'_, B, f64>,
    f: &ViewMut<'_, B, f64>,
) -> Result<(usize, usize)> {
    let cells = match sweep {
        Sweep::X => (normal.rows().saturating_sub(1), normal.cols()),
        Sweep::Y => (normal.rows(), normal.cols().saturating_sub(1)),
    };
    staggered(
        "eulerian_lagrangian",
        sweep,
        p,
        cells,
        &[("normal", Staggered::Normal, normal), ("tangential", Staggered::Tangential, tangential)],
        &[("f", Staggered::Normal, f)],
    )
}

/// `adi_assemble`: `h`, `z` and the systems' four arrays on the cells,
/// `normal`, `f` and `r` on the normal faces. Returns the cells' `(nx, ny)`.
pub fn adi_assemble<B: Backend>(
    sweep: Sweep,
    p: &Stepping,
    x: &AdiFields<'_, B>,
    [dl, d, du]: [&ViewMut<'_, B, f64>; 3],
    rhs: &ViewMut<'_, B, f64>,
    r: &ViewMut<'_, B, f64>,
) -> Result<(usize, usize)> {
    use Staggered::*;
    staggered(
        "adi_assemble",
        sweep,
        p,
        (x.z.rows(), x.z.cols()),
        &[
            ("h", Cells, &x.h),
            ("z", Cells, &x.z),
            ("normal", Normal, &x.normal),
            ("tangential", Tangential, &x.tangential),
            ("f", Normal, &x.f),
        ],
        &[("dl", Cells, dl), ("d", Cells, d), ("du", Cells, du), ("rhs", Cells, rhs), ("r", Normal, r)],
    )
}

/// `adi_velocity`: `z` on the cells, `f`, `r` and `normal` on the normal
/// faces. Returns the cells' `(nx, ny)`.
pub fn adi_velocity<B: Backend>(
    sweep: Sweep,
    p: &Stepping,
    z: &View<'_, B, f64>,
    f: &View<'_, B, f64>,
    r: &View<'_, B, f64>,
    normal: &ViewMut<'_, B, f64>,
) -> Result<(usize, usize)> {
    use Staggered::*;
    staggered(
        "adi_velocity",
        sweep,
        p,
        (z.rows(), z.cols()),
        &[("z", Cells, z), ("f", Normal, f), ("r", Normal, r)],
        &[("normal", Normal, normal)],
    )
}
