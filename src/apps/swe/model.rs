//! The model on a device: the fields, the work arrays of a step, and the
//! step of the alternating-direction semi-implicit scheme (Casulli 1990).
//!
//! A step `k → k + 1` (`u` lives at half steps, `z` and `v` at whole ones):
//!
//! 1. `fu`, `fv`: `u^{k−½}` and `v^k` carried along their streamlines
//!    (Eulerian–Lagrangian, [`Backend::eulerian_lagrangian`]);
//! 2. the `x` sweep: one tridiagonal system per grid line along `x` for
//!    `z^{k+½}` ([`Backend::adi_assemble`]), solved in the cells' grid as
//!    columns, then `u^{k+½}` from it ([`Backend::adi_velocity`]);
//! 3. the `y` sweep: the same along `y` for `z^{k+1}` and `v^{k+1}`, the
//!    systems solved as rows — no transposes.
//!
//! All of it runs on the model's device; nothing returns to the host but
//! what [`Model::fields`] and [`Model::check`] read.
//!
//! Why the volume `Σ z·dx·dy` is conserved: each half step's surface solves
//! `z_new + δa(F) = z_old − δc(G)`, where `F = dt/(2Δa)·α·(f − g·dt/Δa·δz)`
//! and `G = dt/(2Δc)·β·t` are fluxes through faces and `δ` takes the
//! difference of a cell's two faces. The fluxes through the walls are 0
//! (`α = β = 0` there), so along each line the differences telescope and
//! `Σ δa(F) = Σ δc(G) = 0`: summed over the cells, `Σ z_new = Σ z_old`. In
//! matrix terms each system's columns sum to 1 (its off-diagonals `−μ·α`
//! cancel the `μ·α` in the neighbouring diagonals), so `1ᵀ·T·z = 1ᵀ·z`.
//! What is left is rounding: of the right-hand sides and of the
//! elimination, a few units of `u·Σ|z|` per step, not growing with the
//! number of steps but for the random walk of those roundings.

use crate::api::device::{Resident, Storage};
use crate::apps::swe::fields::courant_error;
use crate::apps::swe::{Diagnostics, Fields, Grid, Params};
use crate::backend::{AdiFields, Backend, DeviceBuffer, Sweep, SystemLayout, ViewMut};
use crate::batch::{Coprocessor, Share, TridiagonalMethod};
use crate::{Device, Error, Matrix, Result, with_backend};

/// Where a model runs.
pub enum Execution {
    /// Every pass on one device.
    Device(Device),
    /// The fields on the host's CPU, and each half step's tridiagonal
    /// systems shared between the coprocessor's accelerator and the host
    /// in its measured ratio, as the hybrid solver of Brodtkorb (2007)
    /// runs this model.
    Split(Coprocessor),
}

/// A shallow-water model on a device; see the module's docs.
pub struct Model {
    grid: Grid,
    params: Params,
    device: Device,
    split: Option<Coprocessor>,
    last_share: Option<Share>,
    h: Matrix<f64>,
    z: Matrix<f64>,
    u: Matrix<f64>,
    v: Matrix<f64>,
    /// The convected velocities and the friction factors, on `u`'s and
    /// `v`'s faces.
    fu: Matrix<f64>,
    fv: Matrix<f64>,
    ru: Matrix<f64>,
    rv: Matrix<f64>,
    /// A half step's systems, in the cells' grid; `rhs` also holds `z^{k+½}`.
    dl: Matrix<f64>,
    d: Matrix<f64>,
    du: Matrix<f64>,
    rhs: Matrix<f64>,
    info: Storage<i32>,
    steps: u64,
}

impl Model {
    /// The model of `fields` on `grid`, checked ([`Fields::validate`]) and
    /// uploaded.
    pub fn new(grid: Grid, params: Params, fields: &Fields, execution: Execution) -> Result<Self> {
        params.validate()?;
        fields.validate(&grid, &params)?;
        let (device, split) = match execution {
            Execution::Device(device) => (device, None),
            Execution::Split(coprocessor) => (Device::cpu(), Some(coprocessor)),
        };
        let [(nx, ny), (ux, uy), (vx, vy)] = grid.shapes();
        let up = |rows, cols, x: &[f64]| device.from_col_major(rows, cols, x);
        let info = with_backend!(device, be => be.wrap(be.alloc::<i32>(nx.max(ny))?));
        Ok(Model {
            grid,
            params,
            h: up(nx, ny, &fields.h)?,
            z: up(nx, ny, &fields.z)?,
            u: up(ux, uy, &fields.u)?,
            v: up(vx, vy, &fields.v)?,
            fu: device.zeros(ux, uy)?,
            fv: device.zeros(vx, vy)?,
            ru: device.zeros(ux, uy)?,
            rv: device.zeros(vx, vy)?,
            dl: device.zeros(nx, ny)?,
            d: device.zeros(nx, ny)?,
            du: device.zeros(nx, ny)?,
            rhs: device.zeros(nx, ny)?,
            info,
            device,
            split,
            last_share: None,
            steps: 0,
        })
    }

    pub fn grid(&self) -> &Grid {
        &self.grid
    }
    pub fn params(&self) -> &Params {
        &self.params
    }
    /// Where the fields live (the host's CPU for a split model).
    pub fn device(&self) -> &Device {
        &self.device
    }
    pub fn steps(&self) -> u64 {
        self.steps
    }
    /// Simulated time, s.
    pub fn time(&self) -> f64 {
        self.steps as f64 * self.params.dt
    }
    /// How the last split half step shared its systems (split models).
    pub fn last_share(&self) -> Option<Share> {
        self.last_share
    }

    /// One time step `dt`.
    pub fn step(&mut self) -> Result<()> {
        let device = self.device.clone();
        with_backend!(device, be => self.step_on(be))?;
        self.steps += 1;
        Ok(())
    }

    /// `n` time steps.
    pub fn advance(&mut self, n: u64) -> Result<()> {
        (0..n).try_for_each(|_| self.step())
    }

    /// One step on `be`, recorded and replayed as one launch by a GPU
    /// backend once it has run a few times: a step's work and memory are
    /// the same every time, and the key names all of it.
    fn step_on<B: Resident>(&mut self, be: &B) -> Result<()> {
        let mut key = format!("swe step {:?} {:?}", self.grid, self.params.stepping(&self.grid));
        for m in [&self.h, &self.z, &self.u, &self.v, &self.fu, &self.fv, &self.ru, &self.rv] {
            key += &format!(" {:#x}", m.view::<B>()?.buffer().id());
        }
        for m in [&self.dl, &self.d, &self.du, &self.rhs] {
            key += &format!(" {:#x}", m.view::<B>()?.buffer().id());
        }
        key += &format!(" {:#x}", B::buffer(&self.info)?.id());
        be.replay(&key, &mut |q| self.enqueue_step(q))
    }

    /// The passes of one step. The `x` sweep starts from `z` and leaves
    /// `z^{k+½}` in `rhs`, the `y` sweep starts from `rhs` and leaves
    /// `z^{k+1}` in `z`: no copies, the same memory every step, and no
    /// state of the host changed (so that the work can be enqueued again
    /// if a recording of it fails).
    fn enqueue_step<B: Resident>(&mut self, be: &B) -> Result<()> {
        let p = self.params.stepping(&self.grid);
        be.eulerian_lagrangian(Sweep::X, &p, self.u.view()?, self.v.view()?, self.fu.view_mut()?)?;
        be.eulerian_lagrangian(Sweep::Y, &p, self.v.view()?, self.u.view()?, self.fv.view_mut()?)?;
        for sweep in [Sweep::X, Sweep::Y] {
            let (w, t, f, r, from, into) = match sweep {
                Sweep::X => (&mut self.u, &self.v, &self.fu, &mut self.ru, &self.z, &mut self.rhs),
                Sweep::Y => (&mut self.v, &self.u, &self.fv, &mut self.rv, &self.rhs, &mut self.z),
            };
            let fields = AdiFields {
                h: self.h.view()?,
                z: from.view()?,
                normal: w.view()?,
                tangential: t.view()?,
                f: f.view()?,
            };
            let tridiagonal = (self.dl.view_mut()?, self.d.view_mut()?, self.du.view_mut()?);
            be.adi_assemble(sweep, &p, fields, tridiagonal, into.view_mut()?, r.view_mut()?)?;
            match &self.split {
                None => {
                    let layout = if sweep == Sweep::X { SystemLayout::Columns } else { SystemLayout::Rows };
                    let count = sweep.lines(self.grid.nx, self.grid.ny).1;
                    let info = ViewMut::dense(B::buffer_mut(&mut self.info)?, count, 1)?;
                    let tridiagonal = (self.dl.view_mut()?, self.d.view_mut()?, self.du.view_mut()?);
                    be.tridiagonal_solve(layout, false, tridiagonal, into.view_mut()?, info)?;
                }
                Some(coprocessor) => {
                    let (z, share) = split_solve(coprocessor, &self.grid, sweep, [&self.dl, &self.d, &self.du, into])?;
                    *into = self.device.from_col_major(self.grid.nx, self.grid.ny, &z)?;
                    self.last_share = Some(share);
                }
            }
            be.adi_velocity(sweep, &p, into.view()?, f.view()?, r.view()?, w.view_mut()?)?;
        }
        Ok(())
    }

    /// The fields, read back to the host (waits for the queued steps).
    pub fn fields(&self) -> Result<Fields> {
        Ok(Fields { h: self.h.to_host()?, z: self.z.to_host()?, u: self.u.to_host()?, v: self.v.to_host()? })
    }

    /// The surface at cell `(i, j)` (waits; for a probe's time series).
    pub fn surface_at(&self, i: usize, j: usize) -> Result<f64> {
        if i >= self.grid.nx || j >= self.grid.ny {
            return Err(Error::InvalidArgument(format!(
                "cell ({i}, {j}) is outside the grid of {}×{}",
                self.grid.nx, self.grid.ny
            )));
        }
        self.z.entry(i, j)
    }

    /// The fields read back and checked: finite, all wet, the convective
    /// Courant number in bounds; an error names the first fault.
    pub fn check(&self) -> Result<(Fields, Diagnostics)> {
        let fields = self.fields()?;
        let d = fields.diagnostics(&self.grid, &self.params);
        let at = format!("after {} steps (t = {} s)", self.steps, self.time());
        if let Some(k) = fields.z.iter().position(|x| !x.is_finite()) {
            let (i, j) = (k % self.grid.nx + 1, k / self.grid.nx + 1);
            return Err(Error::InvalidArgument(format!("the surface z is not finite at cell ({i}, {j}) {at}")));
        }
        let floor = self.params.depth_floor();
        if d.min_depth.is_nan() || d.min_depth <= floor {
            let why = if self.params.drying {
                "a cell ran dry faster than the scheme can follow"
            } else {
                "this model keeps every cell wet unless drying is on"
            };
            return Err(Error::InvalidArgument(format!(
                "the total depth fell to {} m {at}, not above {floor} m: {why}",
                d.min_depth
            )));
        }
        if d.courant.is_nan() || d.courant > self.params.max_courant {
            return Err(courant_error(d.courant, &self.params));
        }
        Ok((fields, d))
    }
}

/// A half step's systems solved by the coprocessor: the arrays brought to
/// the host with each system's entries together (the `y` sweep's rows
/// transposed), solved, and the new surface returned in the cells' grid.
fn split_solve(
    coprocessor: &Coprocessor,
    grid: &Grid,
    sweep: Sweep,
    arrays: [&Matrix<f64>; 4],
) -> Result<(Vec<f64>, Share)> {
    let (nx, ny) = (grid.nx, grid.ny);
    let (m, count) = sweep.lines(nx, ny);
    let transpose = |x: &[f64], rows: usize, cols: usize| {
        let mut t = vec![0.0; x.len()];
        for j in 0..cols {
            for i in 0..rows {
                t[j + i * cols] = x[i + j * rows];
            }
        }
        t
    };
    let mut host = Vec::with_capacity(4);
    for a in arrays {
        let x = a.to_host()?;
        host.push(if sweep == Sweep::Y { transpose(&x, nx, ny) } else { x });
    }
    let solution = coprocessor.solve_tridiagonal(
        m,
        count,
        [&host[0], &host[1], &host[2], &host[3]],
        TridiagonalMethod::NoPivoting,
    )?;
    if let Some((index, source)) = solution.failures.into_iter().next() {
        return Err(Error::InBatch { index, source: Box::new(source) });
    }
    let z = if sweep == Sweep::Y { transpose(&solution.x, ny, nx) } else { solution.x };
    Ok((z, solution.share))
}
