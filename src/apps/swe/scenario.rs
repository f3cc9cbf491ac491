//! The test cases, each with the analytic reference it is checked
//! against: Stoker's (1957) dam break, the seiche of a closed basin,
//! Thacker's (1981) bowl, and a Gaussian hump spreading over a basin with
//! an island.

use std::str::FromStr;

use crate::apps::swe::stoker::Stoker;
use crate::apps::swe::{Diagnostics, Fields, Grid, Params};
use crate::{Error, Result};

/// Which test case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A 1-D dam break on a wet bed along `x` (Stoker 1957).
    DamBreak,
    /// The first mode of a closed rectangular basin, linear and frictionless:
    /// period `2L/√(gH)`.
    Seiche,
    /// A Gaussian hump of water spreading over a basin with an island
    /// (drying and flooding at its shore), with Chézy friction: volume
    /// conservation.
    Gaussian,
    /// Thacker's (1981) planar oscillation in a paraboloid bowl, with
    /// drying and flooding at its moving shore: the depth after one period.
    Bowl,
}

impl FromStr for Kind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "dam-break" => Ok(Kind::DamBreak),
            "seiche" => Ok(Kind::Seiche),
            "gaussian" => Ok(Kind::Gaussian),
            "bowl" => Ok(Kind::Bowl),
            _ => {
                Err(Error::InvalidArgument(format!("unknown scenario {s:?}: one of dam-break, seiche, gaussian, bowl")))
            }
        }
    }
}

/// A test case: grid, constants, initial fields, the time to run to and a
/// probe cell whose surface is recorded every step (or none).
#[derive(Clone, Debug)]
pub struct Scenario {
    pub kind: Kind,
    pub grid: Grid,
    pub params: Params,
    pub fields: Fields,
    pub t_end: f64,
    pub probe: Option<(usize, usize)>,
}

/// The dam break: a channel of 1000 m, the bottom 5 m below the datum,
/// the surface 1 m above it left of the dam at 500 m. A weak bore: the
/// Eulerian–Lagrangian convection of the velocity does not conserve
/// momentum, so a strong bore comes out too strong (at depths 10 m and
/// 5 m the middle state is 2.6 % too deep on any grid), while a weak one
/// converges to Stoker's.
const DAM_LENGTH: f64 = 1000.0;
const DAM_BOTTOM: f64 = 5.0;
const DAM_RISE: f64 = 1.0;
/// The seiche: a basin of 10 km, 10 m deep, a 1 cm first mode.
const SEICHE_LENGTH: f64 = 10_000.0;
const SEICHE_DEPTH: f64 = 10.0;
const SEICHE_AMPLITUDE: f64 = 0.01;
/// Steps per seiche period by default, and periods run.
const SEICHE_STEPS_PER_PERIOD: f64 = 200.0;
const SEICHE_PERIODS: f64 = 3.0;

impl Scenario {
    /// The case at its default size and step, or at `nx × ny` cells.
    pub fn new(kind: Kind, nx: Option<usize>, ny: Option<usize>) -> Result<Self> {
        let g = 9.81;
        match kind {
            Kind::DamBreak => {
                let (nx, ny) = (nx.unwrap_or(400), ny.unwrap_or(4));
                let dx = DAM_LENGTH / nx as f64;
                let grid = Grid::new(nx, ny, dx, dx)?;
                let h = vec![DAM_BOTTOM; nx * ny];
                let z = (0..nx * ny)
                    .map(|k| if grid.centre(k % nx, 0).0 < 0.5 * DAM_LENGTH { DAM_RISE } else { 0.0 })
                    .collect();
                // A convective Courant number of about 0.3 behind the bore.
                let params = Params::new(0.05 * dx);
                Ok(Scenario { kind, grid, params, fields: Fields::at_rest(&grid, h, z), t_end: 20.0, probe: None })
            }
            Kind::Seiche => {
                let (nx, ny) = (nx.unwrap_or(256), ny.unwrap_or(16));
                let dx = SEICHE_LENGTH / nx as f64;
                let grid = Grid::new(nx, ny, dx, dx)?;
                let period = seiche_period(g, SEICHE_LENGTH, SEICHE_DEPTH);
                let h = vec![SEICHE_DEPTH; nx * ny];
                let z = (0..nx * ny)
                    .map(|k| SEICHE_AMPLITUDE * (std::f64::consts::PI * grid.centre(k % nx, 0).0 / SEICHE_LENGTH).cos())
                    .collect();
                let params = Params::new(period / SEICHE_STEPS_PER_PERIOD);
                let fields = Fields::at_rest(&grid, h, z);
                Ok(Scenario { kind, grid, params, fields, t_end: SEICHE_PERIODS * period, probe: Some((0, 0)) })
            }
            Kind::Gaussian => {
                let (nx, ny) = (nx.unwrap_or(256), ny.unwrap_or(256));
                let (lx, ly) = (10_000.0, 10_000.0);
                let grid = Grid::new(nx, ny, lx / nx as f64, ly / ny as f64)?;
                let bump = |x: f64, y: f64, (cx, cy): (f64, f64), sigma: f64| {
                    (-((x - cx).powi(2) + (y - cy).powi(2)) / (2.0 * sigma * sigma)).exp()
                };
                let (mut h, mut z) = (Vec::with_capacity(nx * ny), Vec::with_capacity(nx * ny));
                for j in 0..ny {
                    for i in 0..nx {
                        let (x, y) = grid.centre(i, j);
                        // 20 m deep, an island rising to 4 m above the datum.
                        h.push(20.0 - 24.0 * bump(x, y, (0.65 * lx, 0.6 * ly), 900.0));
                        z.push(bump(x, y, (0.3 * lx, 0.35 * ly), 500.0));
                        // The island's land: depth 0.
                        let (hk, zk) = (h.len() - 1, z.len() - 1);
                        z[zk] = z[zk].max(-h[hk]);
                    }
                }
                // The hump's currents reach about 0.7 m/s: a convective Courant
                // number below 0.4 on any grid.
                let mut params = Params::new(2.0f64.min(0.5 * grid.dx)).with_chezy(50.0);
                params.drying = true;
                Ok(Scenario { kind, grid, params, fields: Fields::at_rest(&grid, h, z), t_end: 600.0, probe: None })
            }
            Kind::Bowl => {
                let (nx, ny) = (nx.unwrap_or(100), ny.unwrap_or(100));
                let thacker = Thacker::new(g);
                let grid = Grid::new(nx, ny, BOWL_SIDE / nx as f64, BOWL_SIDE / ny as f64)?;
                let h: Vec<f64> = (0..grid.cells()).map(|k| thacker.bottom(grid.centre(k % nx, k / nx))).collect();
                let depth = thacker.depth(&grid, 0.0);
                let z = depth.iter().zip(&h).map(|(d, h)| d - h).collect();
                let mut fields = Fields::at_rest(&grid, h, z);
                // v = ηω on the faces between wet cells, u = 0.
                let speed = thacker.eta * thacker.omega;
                for j in 1..ny {
                    for i in 0..nx {
                        if depth[i + (j - 1) * nx] > 0.0 && depth[i + j * nx] > 0.0 {
                            fields.v[i + j * nx] = speed;
                        }
                    }
                }
                let period = thacker.period();
                // A convective Courant number of about 0.4.
                let steps = (period * speed / (0.4 * grid.dx.min(grid.dy))).ceil();
                let mut params = Params::new(period / steps);
                params.drying = true;
                params.min_depth = 1e-6;
                Ok(Scenario { kind, grid, params, fields, t_end: period, probe: None })
            }
        }
    }

    /// Steps to reach `t_end` (the last one may pass it by less than `dt`).
    pub fn steps(&self) -> u64 {
        (self.t_end / self.params.dt - 1e-9).ceil().max(0.0) as u64
    }

    /// The figures that check a run of this case that reached `time` with
    /// `fields`, from the initial and final diagnostics and the probe's
    /// `(t, z)` series.
    pub fn verify(
        &self,
        initial: &Diagnostics,
        last: &Diagnostics,
        fields: &Fields,
        time: f64,
        probe: &[(f64, f64)],
    ) -> Vec<Figure> {
        let drift = (last.surface - initial.surface).abs() / initial.volume;
        let mut figures = vec![Figure::bounded("relative volume drift", drift, 1e-12)];
        match self.kind {
            Kind::DamBreak => {
                let l1 = dam_break_l1(&self.grid, self.params.g, &fields.z, time);
                figures.push(Figure::plain("L1 error of z against Stoker (1957), m", l1));
            }
            Kind::Seiche => {
                let exact = seiche_period(self.params.g, SEICHE_LENGTH, SEICHE_DEPTH);
                let measured = measured_period(probe).unwrap_or(f64::NAN);
                figures.push(Figure::plain("seiche period 2L/√(gH), s", exact));
                figures.push(Figure::bounded(
                    "measured period, relative error",
                    (measured - exact).abs() / exact,
                    0.01,
                ));
            }
            Kind::Gaussian => figures.push(Figure::plain("smallest depth, m", last.min_depth)),
            Kind::Bowl => {
                let exact = Thacker::new(self.params.g).depth(&self.grid, time);
                let error =
                    fields.h.iter().zip(&fields.z).zip(&exact).map(|((h, z), e)| (h + z - e).abs()).sum::<f64>()
                        / exact.len() as f64;
                figures.push(Figure::plain("mean |depth − Thacker (1981)| / h0 at t", error / BOWL_DEPTH));
                figures.push(Figure::plain("smallest depth, m", last.min_depth));
            }
        }
        figures
    }
}

/// One verification figure, with its bound where it has one.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub name: String,
    pub value: f64,
    pub bound: Option<f64>,
}

impl Figure {
    fn plain(name: &str, value: f64) -> Self {
        Figure { name: name.into(), value, bound: None }
    }
    fn bounded(name: &str, value: f64, bound: f64) -> Self {
        Figure { name: name.into(), value, bound: Some(bound) }
    }
    /// Whether the value is within its bound (true without one).
    pub fn passes(&self) -> bool {
        self.bound.is_none_or(|b| self.value <= b)
    }
}

/// The period of the first mode of a closed basin of length `l` and depth
/// `depth` in the linear theory: `2L/√(g·H)`.
pub fn seiche_period(g: f64, l: f64, depth: f64) -> f64 {
    2.0 * l / (g * depth).sqrt()
}

/// The period of an oscillating series `(t, z)`: twice the mean time
/// between its zero crossings (each located by linear interpolation),
/// from the first crossing to the last; `None` with fewer than three.
pub fn measured_period(series: &[(f64, f64)]) -> Option<f64> {
    let crossings: Vec<f64> = series
        .windows(2)
        .filter(|w| (w[0].1 > 0.0) != (w[1].1 > 0.0))
        .map(|w| w[0].0 + (w[1].0 - w[0].0) * w[0].1 / (w[0].1 - w[1].1))
        .collect();
    let n = crossings.len();
    (n >= 3).then(|| 2.0 * (crossings[n - 1] - crossings[0]) / (n - 1) as f64)
}

/// The dam break's surface at time `t` by Stoker (1957), per cell.
pub fn dam_break_reference(grid: &Grid, g: f64, t: f64) -> Result<Vec<f64>> {
    let stoker = Stoker::new(g, DAM_BOTTOM + DAM_RISE, DAM_BOTTOM)?;
    let profile: Vec<f64> =
        (0..grid.nx).map(|i| stoker.at(grid.centre(i, 0).0 - 0.5 * DAM_LENGTH, t).0 - DAM_BOTTOM).collect();
    Ok((0..grid.cells()).map(|k| profile[k % grid.nx]).collect())
}

/// The mean absolute error of the dam break's surface `z` against Stoker's.
pub fn dam_break_l1(grid: &Grid, g: f64, z: &[f64], t: f64) -> f64 {
    match dam_break_reference(grid, g, t) {
        Ok(reference) => z.iter().zip(&reference).map(|(a, b)| (a - b).abs()).sum::<f64>() / z.len() as f64,
        Err(_) => f64::NAN,
    }
}

/// Thacker's bowl: a paraboloid 0.1 m deep at its centre, 1 m in radius,
/// in a square basin of 4 m; the planar oscillation of amplitude η = 0.5.
const BOWL_SIDE: f64 = 4.0;
const BOWL_DEPTH: f64 = 0.1;
const BOWL_RADIUS: f64 = 1.0;
const BOWL_ETA: f64 = 0.5;

/// Thacker's (1981) planar oscillation in the paraboloid
/// `h = h0·(1 − r²/a²)` (depth below the datum; land where negative):
/// the surface stays a plane, `z = η·h0/a²·(2x·cos ωt + 2y·sin ωt − η)`
/// from the centre, over the wet part, the velocity `(−ηω·sin ωt,
/// ηω·cos ωt)` is uniform there, and `ω = √(2g·h0)/a`.
#[derive(Clone, Copy, Debug)]
pub struct Thacker {
    pub eta: f64,
    pub omega: f64,
}

impl Thacker {
    pub fn new(g: f64) -> Self {
        Thacker { eta: BOWL_ETA, omega: (2.0 * g * BOWL_DEPTH).sqrt() / BOWL_RADIUS }
    }

    pub fn period(&self) -> f64 {
        std::f64::consts::TAU / self.omega
    }

    /// The bottom's depth below the datum at `(x, y)`.
    pub fn bottom(&self, (x, y): (f64, f64)) -> f64 {
        let (dx, dy) = (x - 0.5 * BOWL_SIDE, y - 0.5 * BOWL_SIDE);
        BOWL_DEPTH * (1.0 - (dx * dx + dy * dy) / (BOWL_RADIUS * BOWL_RADIUS))
    }

    /// The total depth at each cell centre at time `t` (0 where dry).
    pub fn depth(&self, grid: &Grid, t: f64) -> Vec<f64> {
        let (c, s) = ((self.omega * t).cos(), (self.omega * t).sin());
        (0..grid.cells())
            .map(|k| {
                let (x, y) = grid.centre(k % grid.nx, k / grid.nx);
                let (dx, dy) = (x - 0.5 * BOWL_SIDE, y - 0.5 * BOWL_SIDE);
                let z = self.eta * BOWL_DEPTH / (BOWL_RADIUS * BOWL_RADIUS) * (2.0 * dx * c + 2.0 * dy * s - self.eta);
                (self.bottom((x, y)) + z).max(0.0)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Thacker's solution keeps its volume: the depth summed over 2000²
    /// cells is the same at four times of a period to 1e-5 relative, and
    /// the motion returns to its start after one period to 1e-12.
    #[test]
    fn thacker_keeps_its_volume_and_period() {
        let grid = Grid::new(2000, 2000, BOWL_SIDE / 2000.0, BOWL_SIDE / 2000.0).unwrap();
        let t = Thacker::new(9.81);
        let volume = |time: f64| t.depth(&grid, time).iter().sum::<f64>();
        let v0 = volume(0.0);
        for k in 1..4 {
            let v = volume(t.period() * k as f64 / 4.0);
            assert!((v - v0).abs() <= 1e-5 * v0, "{k}/4 period: {v} against {v0}");
        }
        let (a, b) = (t.depth(&grid, 0.0), t.depth(&grid, t.period()));
        let diff = a.iter().zip(&b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(diff <= 1e-12, "{diff}");
    }

    /// The period of a series sampled from cos(2πt/T) is T to 1e-6.
    #[test]
    fn measured_period_of_a_cosine() {
        let series: Vec<(f64, f64)> =
            (0..2000).map(|k| k as f64 * 0.01).map(|t| (t, (std::f64::consts::TAU * t / 3.7).cos())).collect();
        let p = measured_period(&series).unwrap();
        assert!((p - 3.7).abs() <= 1e-6 * 3.7, "{p}");
    }
}
