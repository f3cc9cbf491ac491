//! The per-step passes of the semi-implicit shallow-water scheme (Casulli
//! 1990) on the CPU: the grid's columns split over rayon's threads, each
//! entry computed by the same arithmetic that `kernels/shallow_water.cu`
//! runs per GPU thread.

use rayon::prelude::*;

use super::{Cpu, SendPtr};
use crate::Result;
use crate::backend::{AdiFields, Block, Stepping, Sweep, View, ViewMut, check};

/// One grid of a sweep: entry `(a, c)` at row `a`, column `c` of the block
/// (`X`) or at row `c`, column `a` (`Y`).
#[derive(Clone, Copy)]
struct Grid {
    ptr: SendPtr<f64>,
    block: Block,
    transposed: bool,
}

impl Grid {
    fn of(v: View<'_, Cpu, f64>, sweep: Sweep) -> Self {
        Grid { ptr: SendPtr(v.buffer().ptr()), block: v.block(), transposed: sweep == Sweep::Y }
    }
    fn of_mut(v: ViewMut<'_, Cpu, f64>, sweep: Sweep) -> Self {
        let (buf, block) = v.into_parts();
        Grid { ptr: SendPtr(buf.ptr()), block, transposed: sweep == Sweep::Y }
    }
    /// SAFETY (of the dereferences): the checks proved every block in
    /// bounds, the written ones disjoint from the rest; each entry is
    /// written by the one task that owns its column of the block.
    #[inline]
    fn at(&self, a: usize, c: usize) -> *mut f64 {
        let k = if self.transposed { self.block.index(c, a) } else { self.block.index(a, c) };
        unsafe { self.ptr.get().add(k) }
    }
    #[inline]
    fn get(&self, a: usize, c: usize) -> f64 {
        unsafe { *self.at(a, c) }
    }
    #[inline]
    fn set(&self, a: usize, c: usize, x: f64) {
        unsafe { *self.at(a, c) = x }
    }
}

/// The mean of the four tangential velocities around normal face `(a, c)`
/// (interior: `0 < a < na`).
#[inline]
fn tangential_mean(t: Grid, a: usize, c: usize) -> f64 {
    0.25 * ((t.get(a - 1, c) + t.get(a, c)) + (t.get(a - 1, c + 1) + t.get(a, c + 1)))
}

/// Calls `body(a, c)` for every point of a grid of `along × across`
/// points, in memory order: the block's columns split over rayon's
/// threads, each walked down its rows, so that each thread reads whole
/// cache lines in either sweep.
fn for_each_point(along: usize, across: usize, transposed: bool, body: impl Fn(usize, usize) + Sync) {
    if transposed {
        (0..along).into_par_iter().for_each(|a| (0..across).for_each(|c| body(a, c)));
    } else {
        (0..across).into_par_iter().for_each(|c| (0..along).for_each(|a| body(a, c)));
    }
}

pub(super) fn eulerian_lagrangian(
    sweep: Sweep,
    p: &Stepping,
    normal: View<'_, Cpu, f64>,
    tangential: View<'_, Cpu, f64>,
    f: ViewMut<'_, Cpu, f64>,
) -> Result<()> {
    let (nx, ny) = check::eulerian_lagrangian(sweep, p, &normal, &tangential, &f)?;
    let (na, nc) = sweep.lines(nx, ny);
    let (da, dc) = p.spacing(sweep);
    let (ca, cc) = (p.dt / da, p.dt / dc);
    let (w, t, f) = (Grid::of(normal, sweep), Grid::of(tangential, sweep), Grid::of_mut(f, sweep));
    for_each_point(na + 1, nc, sweep == Sweep::Y, |a, c| {
        if a == 0 || a == na {
            f.set(a, c, 0.0);
            return;
        }
        // The foot of the streamline, in index units of w's grid.
        let foot_a = (a as f64 - w.get(a, c) * ca).clamp(0.0, na as f64);
        let foot_c = (c as f64 - tangential_mean(t, a, c) * cc).clamp(0.0, (nc - 1) as f64);
        f.set(a, c, bilinear(w, na, nc, foot_a, foot_c));
    });
    Ok(())
}

/// `w` at the point `(fa, fc)` of its grid (`0 ≤ fa ≤ na`,
/// `0 ≤ fc ≤ nc − 1`), interpolated bilinearly.
#[inline]
fn bilinear(w: Grid, na: usize, nc: usize, fa: f64, fc: f64) -> f64 {
    let a0 = (fa.floor() as usize).min(na - 1);
    let c0 = (fc.floor() as usize).min(nc.saturating_sub(2));
    let c1 = (c0 + 1).min(nc - 1);
    let (sa, sc) = (fa - a0 as f64, fc - c0 as f64);
    let low = (1.0 - sa) * w.get(a0, c0) + sa * w.get(a0 + 1, c0);
    let high = (1.0 - sa) * w.get(a0, c1) + sa * w.get(a0 + 1, c1);
    (1.0 - sc) * low + sc * high
}

/// `(α, r)` on normal face `a` of line `c`: `r = 1/(1 + dt·γ)`, `α = H·r`;
/// both 0 on the walls and on dry faces.
#[inline]
fn face(p: &Stepping, (h, z): (Grid, Grid), w: Grid, t: Grid, na: usize, a: usize, c: usize) -> (f64, f64) {
    if a == 0 || a == na {
        return (0.0, 0.0);
    }
    let wn = w.get(a, c);
    let depth = p.face_depth((h.get(a - 1, c), z.get(a - 1, c)), (h.get(a, c), z.get(a, c)), wn);
    if depth == 0.0 {
        return (0.0, 0.0);
    }
    let wt = tangential_mean(t, a, c);
    let gamma = p.friction() * (wn * wn + wt * wt).sqrt() / depth;
    let r = 1.0 / (1.0 + p.dt * gamma);
    (depth * r, r)
}

pub(super) fn adi_assemble(
    sweep: Sweep,
    p: &Stepping,
    x: AdiFields<'_, Cpu>,
    (dl, d, du): (ViewMut<'_, Cpu, f64>, ViewMut<'_, Cpu, f64>, ViewMut<'_, Cpu, f64>),
    rhs: ViewMut<'_, Cpu, f64>,
    r: ViewMut<'_, Cpu, f64>,
) -> Result<()> {
    let (nx, ny) = check::adi_assemble(sweep, p, &x, [&dl, &d, &du], &rhs, &r)?;
    let (na, nc) = sweep.lines(nx, ny);
    let (da, dc) = p.spacing(sweep);
    let mu = p.g * p.dt * p.dt / (2.0 * da * da);
    let (sa, sc) = (p.dt / (2.0 * da), p.dt / (2.0 * dc));
    let [h, z, w, t, f] = [x.h, x.z, x.normal, x.tangential, x.f].map(|v| Grid::of(v, sweep));
    let [dl, d, du, rhs, r] = [dl, d, du, rhs, r].map(|v| Grid::of_mut(v, sweep));
    let cell = |a: usize, c: usize| (h.get(a, c), z.get(a, c));
    for_each_point(na, nc, sweep == Sweep::Y, |a, c| {
        let (alpha_lo, r_lo) = face(p, (h, z), w, t, na, a, c);
        let (alpha_hi, r_hi) = face(p, (h, z), w, t, na, a + 1, c);
        dl.set(a, c, -mu * alpha_lo);
        du.set(a, c, -mu * alpha_hi);
        d.set(a, c, 1.0 + mu * (alpha_lo + alpha_hi));
        // β on the tangential faces c and c + 1 of the cell (0 on the walls).
        let beta_lo = if c == 0 { 0.0 } else { p.face_depth(cell(a, c - 1), cell(a, c), t.get(a, c)) };
        let beta_hi = if c + 1 == nc { 0.0 } else { p.face_depth(cell(a, c), cell(a, c + 1), t.get(a, c + 1)) };
        let along = alpha_hi * f.get(a + 1, c) - alpha_lo * f.get(a, c);
        let across = beta_hi * t.get(a, c + 1) - beta_lo * t.get(a, c);
        rhs.set(a, c, z.get(a, c) - sa * along - sc * across);
        r.set(a, c, r_lo);
        if a + 1 == na {
            r.set(na, c, r_hi);
        }
    });
    Ok(())
}

pub(super) fn adi_velocity(
    sweep: Sweep,
    p: &Stepping,
    z: View<'_, Cpu, f64>,
    f: View<'_, Cpu, f64>,
    r: View<'_, Cpu, f64>,
    normal: ViewMut<'_, Cpu, f64>,
) -> Result<()> {
    let (nx, ny) = check::adi_velocity(sweep, p, &z, &f, &r, &normal)?;
    let (na, nc) = sweep.lines(nx, ny);
    let ga = p.g * p.dt / p.spacing(sweep).0;
    let (z, f, r, w) = (Grid::of(z, sweep), Grid::of(f, sweep), Grid::of(r, sweep), Grid::of_mut(normal, sweep));
    for_each_point(na + 1, nc, sweep == Sweep::Y, |a, c| {
        let x =
            if a == 0 || a == na { 0.0 } else { r.get(a, c) * (f.get(a, c) - ga * (z.get(a, c) - z.get(a - 1, c))) };
        w.set(a, c, x);
    });
    Ok(())
}
