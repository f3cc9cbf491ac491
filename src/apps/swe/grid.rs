//! The staggered grid of Arakawa's C type that Casulli (1990) uses: the
//! surface `z` and the bathymetry `h` at cell centres, `u` on the faces
//! normal to `x`, `v` on those normal to `y`.

use crate::backend::cpu::{check_fits, matrix_bytes};
use crate::{Error, Result};

/// `nx × ny` cells of `dx × dy`; cell `(i, j)` spans
/// `[i·dx, (i + 1)·dx] × [j·dy, (j + 1)·dy]`. Fields are column-major
/// arrays: cells `nx × ny`, `u` `(nx + 1) × ny` (face `(i, j)` at
/// `x = i·dx`), `v` `nx × (ny + 1)` (face `(i, j)` at `y = j·dy`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    pub nx: usize,
    pub ny: usize,
    pub dx: f64,
    pub dy: f64,
}

impl Grid {
    /// A grid of at least one cell each way, of positive finite size,
    /// whose fields fit in the host's memory.
    pub fn new(nx: usize, ny: usize, dx: f64, dy: f64) -> Result<Self> {
        if nx == 0 || ny == 0 {
            return Err(Error::InvalidArgument(format!("a grid needs at least 1×1 cells, got {nx}×{ny}")));
        }
        for (name, d) in [("dx", dx), ("dy", dy)] {
            if !(d.is_finite() && d > 0.0) {
                return Err(Error::InvalidArgument(format!(
                    "the cell size {name} must be positive and finite, is {d}"
                )));
            }
        }
        // The four fields on the host, each at most (nx + 1)·(ny + 1) values:
        // refused before anything is allocated if they cannot fit.
        let bytes = nx.checked_add(1).zip(ny.checked_add(1)).and_then(|(a, b)| matrix_bytes(a, b, 4 * 8));
        check_fits(|| format!("the fields of a grid of {nx}×{ny} cells"), bytes)?;
        Ok(Grid { nx, ny, dx, dy })
    }

    pub fn cells(&self) -> usize {
        self.nx * self.ny
    }

    /// The centre of cell `(i, j)`.
    pub fn centre(&self, i: usize, j: usize) -> (f64, f64) {
        ((i as f64 + 0.5) * self.dx, (j as f64 + 0.5) * self.dy)
    }

    /// The basin's extent `(Lx, Ly)`.
    pub fn extent(&self) -> (f64, f64) {
        (self.nx as f64 * self.dx, self.ny as f64 * self.dy)
    }

    /// Shapes of the cell, `u` and `v` arrays.
    pub fn shapes(&self) -> [(usize, usize); 3] {
        [(self.nx, self.ny), (self.nx + 1, self.ny), (self.nx, self.ny + 1)]
    }
}
