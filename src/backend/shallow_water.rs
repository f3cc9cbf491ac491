//! The per-step primitives of the semi-implicit shallow-water scheme of
//! Casulli (1990) on a staggered grid: what a backend needs to know of
//! them to run one pass over the grid.
//!
//! Both half steps of the alternating-direction scheme are the same pass
//! with the roles of `x` and `y` exchanged, so the primitives are written
//! once in the coordinates of a [`Sweep`]: `a` along the lines made
//! implicit, `c` across them. Entry `(a, c)` of a grid lies at row `a`,
//! column `c` of its block in the `X` sweep and at row `c`, column `a` in
//! the `Y` sweep. The grids of an `nx × ny` model, each a block of rows
//! `i` (along `x`) and columns `j` (along `y`):
//!
//! - cells (`h`, `z`, and the tridiagonal systems): `nx × ny`;
//! - `u` on the faces normal to `x`: `(nx + 1) × ny`, zero on rows 0, `nx`;
//! - `v` on the faces normal to `y`: `nx × (ny + 1)`, zero on columns 0, `ny`.
//!
//! In a sweep, the "normal" velocity is the one made implicit (`u` in `X`,
//! `v` in `Y`), the "tangential" one the other.

/// Which grid lines a half step makes implicit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sweep {
    /// Lines along `x` (one system per column `j` of the cell grid).
    X,
    /// Lines along `y` (one system per row `i`).
    Y,
}

impl Sweep {
    /// Cells along and across the lines of a grid of `nx × ny` cells.
    pub fn lines(self, nx: usize, ny: usize) -> (usize, usize) {
        match self {
            Sweep::X => (nx, ny),
            Sweep::Y => (ny, nx),
        }
    }

    /// The other sweep.
    pub fn other(self) -> Sweep {
        match self {
            Sweep::X => Sweep::Y,
            Sweep::Y => Sweep::X,
        }
    }
}

/// The constants of a time step: gravity `g`, the step `dt`, the cell
/// sizes, Chézy's coefficient `chezy` (`∞`: no bottom friction), and
/// `dry`, the depth at which a face runs dry.
///
/// With `dry = 0` every cell is wet and the depth on a face is the mean of
/// its two cells' (Casulli 1990). With `dry > 0` cells may dry and flood
/// (Casulli and Cheng 1992): the depth on a face is that of the higher of
/// its two bottoms under the upwind cell's surface, and a face of depth
/// `≤ dry` carries no flow. The upwind depth is what keeps a draining
/// cell's depth from going negative: with the mean depth on faces between
/// wet cells, Thacker's bowl falls to −0.5 mm within one period.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stepping {
    pub g: f64,
    pub dt: f64,
    pub dx: f64,
    pub dy: f64,
    pub chezy: f64,
    pub dry: f64,
}

impl Stepping {
    /// Cell size along and across the lines of `sweep`.
    pub fn spacing(&self, sweep: Sweep) -> (f64, f64) {
        match sweep {
            Sweep::X => (self.dx, self.dy),
            Sweep::Y => (self.dy, self.dx),
        }
    }

    /// The total depth on a face between cells of bottom depth `h` and
    /// surface `z` (`left`, `right`), for the flow `w` through it: see the
    /// type's docs; 0 for a dry face.
    #[inline]
    pub fn face_depth(&self, (h_left, z_left): (f64, f64), (h_right, z_right): (f64, f64), w: f64) -> f64 {
        if self.dry > 0.0 {
            let z = if w > 0.0 {
                z_left
            } else if w < 0.0 {
                z_right
            } else {
                z_left.max(z_right)
            };
            let depth = h_left.min(h_right) + z;
            if depth > self.dry { depth } else { 0.0 }
        } else {
            0.5 * ((h_left + z_left) + (h_right + z_right))
        }
    }

    /// `g/C²`, the friction factor of Chézy's law (0 without friction).
    pub fn friction(&self) -> f64 {
        if self.chezy.is_finite() { self.g / (self.chezy * self.chezy) } else { 0.0 }
    }
}

/// The fields [`Backend::adi_assemble`](super::Backend::adi_assemble)
/// reads: bathymetry `h` and surface `z` on the cells, the sweep's normal
/// and tangential velocities, and `f`, the normal velocity carried along
/// its streamlines ([`Backend::eulerian_lagrangian`](super::Backend::eulerian_lagrangian)).
pub struct AdiFields<'a, B: super::Backend> {
    pub h: super::View<'a, B, f64>,
    pub z: super::View<'a, B, f64>,
    pub normal: super::View<'a, B, f64>,
    pub tangential: super::View<'a, B, f64>,
    pub f: super::View<'a, B, f64>,
}
