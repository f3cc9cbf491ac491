//! The per-step passes of the semi-implicit shallow-water scheme (Casulli
//! 1990) on the GPU (`kernels/shallow_water.cu`): one thread per entry of
//! the grid written, consecutive threads on consecutive addresses in
//! either sweep, the arithmetic that of `backend/cpu/shallow_water.rs`.

use super::Cuda;
use super::launch::{Arg, MAX_BLOCKS, grid_1d, n, ptr, ptr_mut};
use crate::Result;
use crate::backend::{AdiFields, Stepping, Sweep, View, ViewMut, check};

/// The kernels' `transposed` flag: entry `(a, c)` at `(c, a)` of its block.
fn transposed(sweep: Sweep) -> Arg {
    Arg::I32(i32::from(sweep == Sweep::Y))
}

impl Cuda {
    pub(super) fn swe_eulerian_lagrangian(
        &self,
        sweep: Sweep,
        p: &Stepping,
        normal: View<'_, Cuda, f64>,
        tangential: View<'_, Cuda, f64>,
        f: ViewMut<'_, Cuda, f64>,
    ) -> Result<()> {
        let (nx, ny) = check::eulerian_lagrangian(sweep, p, &normal, &tangential, &f)?;
        let (na, nc) = sweep.lines(nx, ny);
        let (da, dc) = p.spacing(sweep);
        let args = [
            ptr(&normal),
            n(normal.block().ld),
            ptr(&tangential),
            n(tangential.block().ld),
            ptr_mut(&f),
            n(f.block().ld),
            n(na),
            n(nc),
            transposed(sweep),
            Arg::F64(p.dt / da),
            Arg::F64(p.dt / dc),
        ];
        self.launch("shallow_water", "eulerian_lagrangian", grid_1d((na + 1) * nc, MAX_BLOCKS), &args)
    }

    pub(super) fn swe_adi_assemble(
        &self,
        sweep: Sweep,
        p: &Stepping,
        x: AdiFields<'_, Cuda>,
        (dl, d, du): (ViewMut<'_, Cuda, f64>, ViewMut<'_, Cuda, f64>, ViewMut<'_, Cuda, f64>),
        rhs: ViewMut<'_, Cuda, f64>,
        r: ViewMut<'_, Cuda, f64>,
    ) -> Result<()> {
        let (nx, ny) = check::adi_assemble(sweep, p, &x, [&dl, &d, &du], &rhs, &r)?;
        let (na, nc) = sweep.lines(nx, ny);
        let (da, dc) = p.spacing(sweep);
        let mut args = Vec::with_capacity(29);
        for v in [&x.h, &x.z, &x.normal, &x.tangential, &x.f] {
            args.extend([ptr(v), n(v.block().ld)]);
        }
        for v in [&dl, &d, &du, &rhs, &r] {
            args.extend([ptr_mut(v), n(v.block().ld)]);
        }
        args.extend([
            n(na),
            n(nc),
            transposed(sweep),
            Arg::F64(p.g * p.dt * p.dt / (2.0 * da * da)),
            Arg::F64(p.dt / (2.0 * da)),
            Arg::F64(p.dt / (2.0 * dc)),
            Arg::F64(p.dt),
            Arg::F64(p.friction()),
            Arg::F64(p.dry),
        ]);
        self.launch("shallow_water", "adi_assemble", grid_1d(na * nc, MAX_BLOCKS), &args)
    }

    pub(super) fn swe_adi_velocity(
        &self,
        sweep: Sweep,
        p: &Stepping,
        z: View<'_, Cuda, f64>,
        f: View<'_, Cuda, f64>,
        r: View<'_, Cuda, f64>,
        normal: ViewMut<'_, Cuda, f64>,
    ) -> Result<()> {
        let (nx, ny) = check::adi_velocity(sweep, p, &z, &f, &r, &normal)?;
        let (na, nc) = sweep.lines(nx, ny);
        let args = [
            ptr(&z),
            n(z.block().ld),
            ptr(&f),
            n(f.block().ld),
            ptr(&r),
            n(r.block().ld),
            ptr_mut(&normal),
            n(normal.block().ld),
            n(na),
            n(nc),
            transposed(sweep),
            Arg::F64(p.g * p.dt / p.spacing(sweep).0),
        ];
        self.launch("shallow_water", "adi_velocity", grid_1d((na + 1) * nc, MAX_BLOCKS), &args)
    }
}
