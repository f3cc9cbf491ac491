//! `--suite ldlt-trace`: where Aasen's factorization spends its time: the
//! whole, one panel's column recurrence at the top and halfway down, the
//! interchanges after each, and the trailing update of one panel at the
//! depths and block-column widths it could have, with cuBLAS `gemm` and
//! `syrkx` as the factorization calls them, and each of them apart.

use gpumat::Result;
use gpumat::backend::cuda::Cuda;
use gpumat::backend::{AasenPanel, Backend, Block, BufferMut, Op, Triangle, View, ViewMut};
use gpumat::factor::ldlt::{self, LdltParams, LdltPivoting, LdltWorkspace};
use gpumat::layout::Uplo;
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::inputs::{random, symmetric_indefinite};
use crate::harness::timing::per_call_us;

pub fn run(cuda: &Cuda, settings: &Settings) -> Result<Vec<Value>> {
    let mut rows = vec![];
    let reps = settings.reps.max(3);
    let per_call = |f: &mut dyn FnMut() -> Result<()>| per_call_us(cuda, reps, f);
    for &n in &settings.sizes {
        let a = symmetric_indefinite(cuda, n, 11)?;
        let mut w = cuda.alloc::<f64>(n * n)?;
        let (mut ipiv, mut d, mut e) = (cuda.alloc::<i32>(n)?, cuda.alloc::<f64>(n)?, cuda.alloc::<f64>(n)?);
        let params = LdltParams::aasen(n);
        let (nb, tile) = (params.block_size, params.update_tile);
        let tri = Triangle::full(Uplo::Lower, Block::dense(n, n))?;
        let mut out = vec![];

        let mut ws = LdltWorkspace::new(cuda, n, params)?;
        let us = per_call(&mut || {
            cuda.copy(View::dense(&a, n, n)?, ViewMut::dense(&mut w, n, n)?)?;
            let views =
                (ViewMut::dense(&mut ipiv, n, 1)?, ViewMut::dense(&mut d, n, 1)?, ViewMut::dense(&mut e, n, 1)?);
            ldlt::factor_in_place_with(cuda, &tri, &BufferMut::new(&mut w), views, LdltPivoting::Aasen, &mut ws)?;
            Ok(())
        })?;
        let copy = per_call(&mut || cuda.copy(View::dense(&a, n, n)?, ViewMut::dense(&mut w, n, n)?))?;
        out.push((format!("factor {n}x{n}, nb {nb}, tile {tile} (copy of {copy:.0} µs taken off)"), us - copy));

        // One panel at k = 0 and at k = n/2, on the matrix as given (the
        // columns of L before the panel zero): the recurrence's cost does
        // not depend on the values.
        let (mut l, mut y) = (cuda.alloc::<f64>(n * (nb + 2))?, cuda.alloc::<f64>(n * (nb + 1))?);
        let (mut x, mut yx) = (cuda.alloc::<f64>(n * (nb + 2))?, cuda.alloc::<f64>(n * (nb + 1))?);
        let mut chosen = cuda.alloc::<i32>(nb)?;
        cuda.copy(View::dense(&a, n, n)?, ViewMut::dense(&mut w, n, n)?)?;
        for k in [0, n / 2] {
            let m = n - k;
            let at = |rows: usize, cols: usize| Block { offset: 0, rows, cols, ld: n };
            let mut panel_call = |interchange: bool| -> Result<()> {
                if interchange {
                    cuda.copy(View::dense(&a, n, n)?, ViewMut::dense(&mut w, n, n)?)?;
                }
                cuda.fill(ViewMut::new(&mut l, at(m, 2))?, 0.0)?;
                cuda.copy(
                    View::dense(&cuda.upload(&[1.0])?, 1, 1)?,
                    ViewMut::new(&mut l, Block { offset: n, ..at(1, 1) })?,
                )?;
                let buf = BufferMut::new(&mut w);
                let mut panel = AasenPanel {
                    nb,
                    l: ViewMut::new(&mut l, at(m, nb + 2))?,
                    y: ViewMut::new(&mut y, at(m, nb + 1))?,
                    rows: ViewMut::dense(&mut chosen, nb, 1)?,
                    d: ViewMut::dense(&mut d, n, 1)?,
                    e: ViewMut::dense(&mut e, n, 1)?,
                };
                cuda.aasen_panel(&buf, &tri, k, panel.rb_mut())?;
                if interchange {
                    let rest = m - nb;
                    let (xv, yv) = (ViewMut::new(&mut x, at(rest, nb + 2))?, ViewMut::new(&mut yx, at(rest, nb + 1))?);
                    cuda.aasen_interchange(&buf, &tri, k, panel, ViewMut::dense(&mut ipiv, n, 1)?, xv, yv)?;
                }
                Ok(())
            };
            let panel = per_call(&mut || panel_call(false))?;
            out.push((format!("aasen_panel {m}x{nb} ({:.2} µs a column)", panel / nb as f64), panel));
            let both = per_call(&mut || panel_call(true))?;
            out.push((format!("aasen_interchange after the panel at {k} (copy taken off)"), both - panel - copy));
        }

        // The trailing update after the first panel, by block columns of
        // `tile` as the factorization goes: at depth nb + 1 (Aasen's), nb
        // and a multiple of 32 above; then at Aasen's depth with block
        // columns of half and twice the width, and its `syrkx` on the
        // diagonal tiles and `gemm` below them apart.
        let m = n - nb;
        let deepest = nb.next_multiple_of(32) + 32;
        let xs = random(cuda, 2 * m * deepest, 3)?;
        let runs = [nb + 1, nb, deepest].map(|depth| (depth, tile, true, true)).into_iter().chain([
            (nb + 1, tile / 2, true, true),
            (nb + 1, tile * 2, true, true),
            (nb + 1, tile, true, false),
            (nb + 1, tile, false, true),
        ]);
        for (depth, tile, diagonal, below) in runs {
            let xv = View::new(&xs, Block { offset: 0, rows: m, cols: depth, ld: m })?;
            let yv = View::new(&xs, Block { offset: m * deepest, rows: m, cols: depth, ld: m })?;
            let update = per_call(&mut || {
                let mut t = 0;
                while t < m {
                    let wdt = tile.min(m - t);
                    let c = Block { offset: (nb + t) * n + nb + t, rows: wdt, cols: wdt, ld: n };
                    let (xt, yt) = (xv.sub(t, 0, wdt, depth)?, yv.sub(t, 0, wdt, depth)?);
                    if diagonal {
                        cuda.syrkx(Uplo::Lower, Op::NoTrans, -1.0, xt, yt, 1.0, ViewMut::new(&mut w, c)?)?;
                    }
                    let rows = m - t - wdt;
                    if below && rows > 0 {
                        let c = Block { offset: c.offset + wdt, rows, cols: wdt, ld: n };
                        let xi = xv.sub(t + wdt, 0, rows, depth)?;
                        cuda.gemm(-1.0, xi, Op::NoTrans, yt, Op::Trans, 1.0, ViewMut::new(&mut w, c)?)?;
                    }
                    t += wdt;
                }
                Ok(())
            })?;
            let what = match (diagonal, below) {
                (true, true) => "update",
                (true, false) => "its syrkx on the diagonal tiles",
                _ => "its gemm below the diagonal tiles",
            };
            // Flops of the part timed: m²·depth for the whole lower triangle.
            let diag_part = (0..m).step_by(tile).map(|t| tile.min(m - t).pow(2) as f64).sum::<f64>();
            let entries = match (diagonal, below) {
                (true, true) => m as f64 * m as f64,
                (true, false) => diag_part,
                _ => m as f64 * m as f64 - diag_part,
            };
            let tflops = entries * depth as f64 / update / 1e6;
            out.push((format!("{what} of order {m}, depth {depth}, tile {tile} ({tflops:.1} TFLOP/s)"), update));
        }
        for (what, us) in out {
            println!("n {n}: {what}: {us:.1} µs");
            rows.push(json!({"op": format!("ldlt-trace {what}"), "n": n, "us_per_call": us}));
        }
    }
    Ok(rows)
}
