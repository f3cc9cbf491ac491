//! The physical and numerical constants of a run.

use crate::apps::swe::Grid;
use crate::backend::Stepping;
use crate::{Error, Result};

/// Gravity `g` (m/s²), Chézy's coefficient `chezy` (m^½/s; `∞` for no
/// bottom friction), the time step `dt` (s), and the limits the scheme is
/// run under:
///
/// - wet or dry: by default (`drying = false`) every cell stays wet: the
///   total depth `h + z` must stay above `min_depth` everywhere, and a run
///   that leaves it is an error, never a clamp. With `drying`, cells dry
///   and flood as in Casulli and Cheng (1992): a face whose depth (the
///   higher bottom under the upwind surface) is `min_depth` or less
///   carries no flow; a cell's depth may then dip below 0 by rounding and
///   by the explicit part of the fluxes, and a run where it falls below
///   `−min_depth` is an error;
/// - `max_courant`: the semi-implicit scheme is stable for any `dt` as to
///   gravity waves, and the Eulerian–Lagrangian convection is too, but its
///   streamlines are traced back in one step with the velocity held
///   constant, which is only accurate while the step crosses at most
///   about one cell: a run whose convective Courant number
///   `max(|u|·dt/dx, |v|·dt/dy)` exceeds `max_courant` is an error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    pub g: f64,
    pub chezy: f64,
    pub dt: f64,
    pub min_depth: f64,
    pub max_courant: f64,
    pub drying: bool,
}

impl Params {
    /// Standard gravity, no friction, all wet, the limits at 1 mm and 1.
    pub fn new(dt: f64) -> Self {
        Params { g: 9.81, chezy: f64::INFINITY, dt, min_depth: 1e-3, max_courant: 1.0, drying: false }
    }

    pub fn with_chezy(self, chezy: f64) -> Self {
        Params { chezy, ..self }
    }

    /// The depth below which the fields are refused: above `min_depth`
    /// all wet, above `−min_depth` with drying.
    pub fn depth_floor(&self) -> f64 {
        if self.drying { -self.min_depth } else { self.min_depth }
    }

    /// Every constant in range, or an error naming the first one that is not.
    pub fn validate(&self) -> Result<()> {
        let positive = [("g", self.g), ("dt", self.dt), ("max_courant", self.max_courant)];
        for (name, x) in positive {
            if !(x.is_finite() && x > 0.0) {
                return Err(Error::InvalidArgument(format!("{name} must be positive and finite, is {x}")));
            }
        }
        if self.chezy.is_nan() || self.chezy <= 0.0 {
            return Err(Error::InvalidArgument(format!(
                "Chézy's coefficient must be positive (infinite: no friction), is {}",
                self.chezy
            )));
        }
        if !(self.min_depth.is_finite() && self.min_depth > 0.0) {
            return Err(Error::InvalidArgument(format!(
                "min_depth must be positive and finite, is {}",
                self.min_depth
            )));
        }
        Ok(())
    }

    /// The constants of one step on `grid`, as the backend takes them.
    pub fn stepping(&self, grid: &Grid) -> Stepping {
        let dry = if self.drying { self.min_depth } else { 0.0 };
        Stepping { g: self.g, dt: self.dt, dx: grid.dx, dy: grid.dy, chezy: self.chezy, dry }
    }
}
