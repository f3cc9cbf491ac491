//! The model's fields on the host: what a run starts from and what a
//! frame or a check reads back.

use crate::apps::swe::{Grid, Params};
use crate::{Error, Result};

/// Bathymetry `h` (depth of the bottom below the datum, m) and surface
/// `z` (elevation above it) at the cells, velocities `u`, `v` on the
/// faces; column-major arrays of the shapes [`Grid::shapes`] gives.
#[derive(Clone, Debug, PartialEq)]
pub struct Fields {
    pub h: Vec<f64>,
    pub z: Vec<f64>,
    pub u: Vec<f64>,
    pub v: Vec<f64>,
}

/// What a check of the fields found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Diagnostics {
    /// Water volume `Σ (h + z)·dx·dy`, summed with compensation (Neumaier
    /// 1974), so that its own rounding is far below the drift it measures.
    pub volume: f64,
    /// `Σ z·dx·dy`, the volume above the datum, summed alone: its change
    /// is the volume's, free of the rounding of `Σ h`.
    pub surface: f64,
    /// The smallest total depth `h + z`.
    pub min_depth: f64,
    /// The largest convective Courant number `max(|u|·dt/dx, |v|·dt/dy)`.
    pub courant: f64,
}

impl Fields {
    /// Still water at rest over `h` with the surface `z`.
    pub fn at_rest(grid: &Grid, h: Vec<f64>, z: Vec<f64>) -> Self {
        let [_, su, sv] = grid.shapes();
        Fields { h, z, u: vec![0.0; su.0 * su.1], v: vec![0.0; sv.0 * sv.1] }
    }

    /// The arrays of the grid's shapes, finite, zero normal velocity on
    /// the walls, and all wet (`h + z > min_depth`; with drying,
    /// `h + z ≥ 0`); else an error naming the first fault.
    pub fn validate(&self, grid: &Grid, params: &Params) -> Result<()> {
        let [sc, su, sv] = grid.shapes();
        let arrays = [("h", &self.h, sc), ("z", &self.z, sc), ("u", &self.u, su), ("v", &self.v, sv)];
        for (name, x, (rows, cols)) in arrays {
            if x.len() != rows * cols {
                return Err(Error::dims(
                    "shallow water",
                    format!("{name} holds {} values but the grid needs {rows}×{cols} = {}", x.len(), rows * cols),
                ));
            }
            if let Some(k) = x.iter().position(|v| !v.is_finite()) {
                return Err(Error::NonFinite { what: name.into(), row: k % rows + 1, col: k / rows + 1, value: x[k] });
            }
        }
        let (nx, ny) = (grid.nx, grid.ny);
        let wall_u = (0..ny).any(|j| self.u[j * (nx + 1)] != 0.0 || self.u[nx + j * (nx + 1)] != 0.0);
        let wall_v = (0..nx).any(|i| self.v[i] != 0.0 || self.v[i + ny * nx] != 0.0);
        if wall_u || wall_v {
            return Err(Error::InvalidArgument("the velocity normal to a wall must be 0 (reflective walls)".into()));
        }
        let d = self.diagnostics(grid, params);
        // Dry cells start at depth 0 exactly.
        let floor = if params.drying { 0.0 } else { params.min_depth };
        if d.min_depth.is_nan() || d.min_depth < floor || (!params.drying && d.min_depth == floor) {
            let k = (0..self.h.len()).min_by(|&a, &b| (self.h[a] + self.z[a]).total_cmp(&(self.h[b] + self.z[b])));
            let (i, j) = k.map_or((0, 0), |k| (k % nx + 1, k / nx + 1));
            let why = if params.drying {
                "not below 0 where cells may dry".to_string()
            } else {
                format!("not above {} m: the model keeps every cell wet unless drying is on", params.min_depth)
            };
            return Err(Error::InvalidArgument(format!(
                "the total depth h + z is {} at cell ({i}, {j}), {why}",
                d.min_depth
            )));
        }
        if d.courant > params.max_courant {
            return Err(courant_error(d.courant, params));
        }
        Ok(())
    }

    /// Volume, smallest depth and Courant number of the fields.
    pub fn diagnostics(&self, grid: &Grid, params: &Params) -> Diagnostics {
        // Σh and Σz apart, so that a change of z below the rounding of
        // h + z still shows in Σz.
        let (mut bottom, mut surface) = (Neumaier::default(), Neumaier::default());
        let mut min_depth = f64::INFINITY;
        for (h, z) in self.h.iter().zip(&self.z) {
            let depth = h + z;
            bottom.add(*h);
            surface.add(*z);
            min_depth = if depth.is_nan() { f64::NAN } else { min_depth.min(depth) };
        }
        let max_abs = |x: &[f64]| x.iter().fold(0.0f64, |m, v| if v.is_nan() { f64::NAN } else { m.max(v.abs()) });
        let courant = (max_abs(&self.u) * params.dt / grid.dx).max(max_abs(&self.v) * params.dt / grid.dy);
        let area = grid.dx * grid.dy;
        Diagnostics { volume: (bottom.sum() + surface.sum()) * area, surface: surface.sum() * area, min_depth, courant }
    }
}

/// The error of a convective Courant number past the limit.
pub(crate) fn courant_error(courant: f64, params: &Params) -> Error {
    Error::InvalidArgument(format!(
        "the convective Courant number max(|u|·dt/dx, |v|·dt/dy) reached {courant:.3}, past {}: dt = {} s \
         traces streamlines across more than one cell in one step; take a smaller dt",
        params.max_courant, params.dt
    ))
}

/// A sum with Neumaier's (1974) compensation: exact to about one rounding
/// of the result for any number of terms.
#[derive(Clone, Copy, Debug, Default)]
pub struct Neumaier {
    sum: f64,
    carry: f64,
}

impl Neumaier {
    pub fn add(&mut self, x: f64) {
        let t = self.sum + x;
        self.carry += if self.sum.abs() >= x.abs() { (self.sum - t) + x } else { (x - t) + self.sum };
        self.sum = t;
    }
    pub fn sum(&self) -> f64 {
        self.sum + self.carry
    }
}
