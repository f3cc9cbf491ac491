//! The shallow-water model (Casulli 1990) against analytic solutions, on
//! the device under test (`GPUMAT_DEVICE`; the CPU in CI): the seiche of a
//! closed basin, volume conservation, Stoker's (1957) dam break, Thacker's
//! (1981) bowl, the split of the systems between two devices, and bad
//! input refused with an `Err`.

mod common;

use gpumat::apps::swe::scenario::{self, Kind, Scenario};
use gpumat::apps::swe::{Execution, Fields, Grid, Model, Params};
use gpumat::backend::{AdiFields, Backend, Stepping, Sweep, ViewMut};
use gpumat::batch::Coprocessor;
use gpumat::{Device, Error, with_backend};

fn model(s: &Scenario, device: Device) -> Model {
    Model::new(s.grid, s.params, &s.fields, Execution::Device(device)).expect("a valid scenario")
}

/// The first mode of a 10 km basin 10 m deep at 256 × 16 cells, 1 cm
/// high (linear) and without friction: the period measured from the
/// zero crossings at the wall over three periods is within 1 % of
/// 2L/√(gH), the linear theory's.
#[test]
fn seiche_period_is_within_one_percent_of_linear_theory() {
    let s = Scenario::new(Kind::Seiche, None, None).unwrap();
    let mut m = model(&s, common::device());
    let (i, j) = s.probe.unwrap();
    let mut series = vec![(0.0, m.surface_at(i, j).unwrap())];
    for _ in 0..s.steps() {
        m.step().unwrap();
        series.push((m.time(), m.surface_at(i, j).unwrap()));
    }
    let measured = scenario::measured_period(&series).expect("three crossings");
    let exact = scenario::seiche_period(s.params.g, 10_000.0, 10.0);
    let error = (measured - exact).abs() / exact;
    assert!(error <= 0.01, "period {measured} s against {exact} s: relative error {error:.2e} > 1e-2");
}

/// A closed basin with an island, friction and a Gaussian hump: the change
/// of Σ z·dx·dy over `steps` steps, summed with compensation, is within
/// 1e-12 of the water volume Σ (h + z)·dx·dy (the scheme's fluxes
/// telescope; only rounding is left).
fn volume_drift(steps: u64) -> f64 {
    let mut s = Scenario::new(Kind::Gaussian, Some(16), Some(12)).unwrap();
    s.params.dt = 20.0;
    let mut m = model(&s, common::device());
    let (_, first) = m.check().unwrap();
    m.advance(steps).unwrap();
    let (_, last) = m.check().unwrap();
    (last.surface - first.surface).abs() / first.volume
}

#[test]
fn volume_is_conserved_to_1e12_over_10000_steps() {
    let drift = volume_drift(10_000);
    assert!(drift <= 1e-12, "relative volume drift {drift:.2e} > 1e-12");
}

/// The dam break on a wet bed (depths 6 m and 5 m) after 20 s on 100,
/// 200 and 400 cells at a fixed Courant number: the mean absolute error of
/// z against Stoker's (1957) solution falls with each refinement, at an
/// observed order of at least 0.5 (a captured bore converges at order at
/// most 1 in L1; this scheme shows about 0.65 up to 1600 cells), and is
/// below 6 mm on the finest grid.
#[test]
fn dam_break_converges_to_stoker() {
    let mut errors = Vec::new();
    for nx in [100, 200, 400] {
        let s = Scenario::new(Kind::DamBreak, Some(nx), Some(1)).unwrap();
        let mut m = model(&s, common::device());
        m.advance(s.steps()).unwrap();
        let (fields, _) = m.check().unwrap();
        errors.push(scenario::dam_break_l1(&s.grid, s.params.g, &fields.z, m.time()));
    }
    let orders: Vec<f64> = errors.windows(2).map(|e| (e[0] / e[1]).log2()).collect();
    println!("L1 errors {errors:?}, observed orders {orders:?}");
    assert!(orders.iter().all(|&p| p >= 0.5), "L1 errors {errors:?}: orders {orders:?} < 0.5");
    assert!(errors[2] <= 0.006, "L1 error {} m on 400 cells > 0.006 m", errors[2]);
}

/// Thacker's (1981) planar oscillation in a paraboloid bowl, with drying
/// and flooding at the moving shore, over one period on 50 and 100 cells
/// a side: the mean absolute depth error over the basin against the
/// analytic solution falls with refinement and is below 3 % of the
/// bowl's central depth on 100 cells; no depth falls below −1e-6 m, and
/// the volume drifts by at most 1e-12.
#[test]
fn thacker_bowl_over_one_period() {
    let mut errors = Vec::new();
    for n in [50, 100] {
        let s = Scenario::new(Kind::Bowl, Some(n), Some(n)).unwrap();
        let mut m = model(&s, common::device());
        let (_, first) = m.check().unwrap();
        m.advance(s.steps()).unwrap();
        let (fields, last) = m.check().unwrap();
        assert!(last.min_depth >= -1e-6, "depth {}", last.min_depth);
        let drift = (last.surface - first.surface).abs() / first.volume;
        assert!(drift <= 1e-12, "volume drift {drift:.2e}");
        let figures = s.verify(&first, &last, &fields, m.time(), &[]);
        let error = figures.iter().find(|f| f.name.contains("Thacker")).unwrap().value;
        errors.push(error);
    }
    println!("relative depth errors {errors:?}");
    assert!(errors[1] < errors[0], "errors {errors:?} do not fall");
    assert!(errors[1] <= 0.03, "error {} of h0 > 0.03", errors[1]);
}

/// 100 steps of the Gaussian case on one device and with each half
/// step's systems split half and half between an accelerator and the
/// host (both the CPU without a GPU): the fields agree to 1e-10 relative
/// in the max norm.
#[test]
fn split_systems_give_the_same_fields() {
    let s = Scenario::new(Kind::Gaussian, Some(24), Some(20)).unwrap();
    let mut alone = model(&s, common::device());
    let accelerator = if common::device().is_cpu() { Device::cpu() } else { common::device() };
    let coprocessor = Coprocessor::with_host(accelerator, Device::cpu()).with_ratio(Some(0.5)).unwrap();
    let mut split = Model::new(s.grid, s.params, &s.fields, Execution::Split(coprocessor)).unwrap();
    alone.advance(100).unwrap();
    split.advance(100).unwrap();
    let share = split.last_share().unwrap();
    assert!(share.accelerator > 0 && share.host > 0, "{share:?}");
    let (a, b) = (alone.fields().unwrap(), split.fields().unwrap());
    for (name, x, y) in [("z", &a.z, &b.z), ("u", &a.u, &b.u), ("v", &a.v, &b.v)] {
        let scale = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = x.iter().zip(y).fold(0.0f64, |m, (p, q)| m.max((p - q).abs()));
        assert!(diff <= 1e-10 * scale, "{name}: max difference {diff:.2e} > 1e-10 × {scale:.2e}");
    }
}

/// The CPU and the device under test agree to 1e-10 relative after 100
/// steps (trivially on the CPU).
#[test]
fn device_matches_the_cpu() {
    let s = Scenario::new(Kind::Gaussian, Some(40), Some(33)).unwrap();
    let mut cpu = model(&s, Device::cpu());
    let mut dev = model(&s, common::device());
    cpu.advance(100).unwrap();
    dev.advance(100).unwrap();
    let (a, b) = (cpu.fields().unwrap(), dev.fields().unwrap());
    for (name, x, y) in [("z", &a.z, &b.z), ("u", &a.u, &b.u), ("v", &a.v, &b.v)] {
        let scale = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = x.iter().zip(y).fold(0.0f64, |m, (p, q)| m.max((p - q).abs()));
        assert!(diff <= 1e-10 * scale, "{name}: max difference {diff:.2e} > 1e-10 × {scale:.2e}");
    }
}

fn refused(s: &Scenario, fields: &Fields, params: Params) -> Error {
    match Model::new(s.grid, params, fields, Execution::Device(common::device())) {
        Ok(_) => panic!("accepted bad input"),
        Err(e) => e,
    }
}

/// Wrong sizes, NaN, dry cells, velocity through a wall and bad constants
/// are each an `Err`, not a panic.
#[test]
fn bad_input_is_an_error() {
    let s = Scenario::new(Kind::Gaussian, Some(8), Some(6)).unwrap();
    let p = s.params;
    let mut f = s.fields.clone();
    f.h.pop();
    assert!(matches!(refused(&s, &f, p), Error::DimensionMismatch { .. }));
    let mut f = s.fields.clone();
    f.h[5] = f64::NAN;
    assert!(matches!(refused(&s, &f, p), Error::NonFinite { .. }));
    // A dry cell where every cell must be wet; water below the bottom.
    let mut f = s.fields.clone();
    f.z[7] = -f.h[7];
    assert!(refused(&s, &f, Params { drying: false, ..p }).to_string().contains("wet"));
    f.z[7] = -f.h[7] - 0.5;
    assert!(refused(&s, &f, Params { drying: true, ..p }).to_string().contains("below 0"));
    let mut f = s.fields.clone();
    f.u[0] = 1.0;
    assert!(refused(&s, &f, p).to_string().contains("wall"));
    for dt in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        refused(&s, &s.fields, Params { dt, ..p });
    }
    refused(&s, &s.fields, Params { chezy: 0.0, ..p });
    refused(&s, &s.fields, Params { g: f64::NAN, ..p });
    // A velocity that crosses two cells in a step.
    let mut f = s.fields.clone();
    f.u[3] = 2.0 * s.grid.dx / p.dt;
    assert!(refused(&s, &f, p).to_string().contains("Courant"));
    assert!(Grid::new(0, 4, 1.0, 1.0).is_err());
    assert!(Grid::new(4, 4, f64::NAN, 1.0).is_err());
    assert!("lake".parse::<Kind>().is_err());
}

/// The backend's passes refuse operands of the wrong grid and bad
/// constants with an `Err`.
#[test]
fn the_passes_check_their_operands() {
    let dev = common::device();
    let (nx, ny) = (5, 4);
    let p = Stepping { g: 9.81, dt: 1.0, dx: 1.0, dy: 1.0, chezy: f64::INFINITY, dry: 0.0 };
    with_backend!(dev, be => {
        let cells = be.alloc::<f64>(nx * ny).unwrap();
        let u = be.alloc::<f64>((nx + 1) * ny).unwrap();
        let v = be.alloc::<f64>(nx * (ny + 1)).unwrap();
        let mut out = be.alloc::<f64>((nx + 1) * (ny + 1)).unwrap();
        let view = |b, r, c| gpumat::backend::View::dense(b, r, c).unwrap();
        // f on v's grid in the x sweep.
        let e = be.eulerian_lagrangian(Sweep::X, &p, view(&u, nx + 1, ny), view(&v, nx, ny + 1),
            ViewMut::dense(&mut out, nx, ny + 1).unwrap());
        assert!(matches!(e, Err(Error::DimensionMismatch { .. })), "{e:?}");
        let bad = Stepping { dt: f64::NAN, ..p };
        let e = be.eulerian_lagrangian(Sweep::X, &bad, view(&u, nx + 1, ny), view(&v, nx, ny + 1),
            ViewMut::dense(&mut out, nx + 1, ny).unwrap());
        assert!(matches!(e, Err(Error::InvalidArgument(_))), "{e:?}");
        let mut sys = [0; 5].map(|_| be.alloc::<f64>(nx * ny).unwrap());
        let [dl, d, du, rhs, _] = &mut sys;
        let fields = AdiFields { h: view(&cells, nx, ny), z: view(&cells, nx, ny), normal: view(&v, nx, ny + 1),
            tangential: view(&v, nx, ny + 1), f: view(&v, nx, ny + 1) };
        let e = be.adi_assemble(Sweep::X, &p, fields,
            (ViewMut::dense(dl, nx, ny).unwrap(), ViewMut::dense(d, nx, ny).unwrap(), ViewMut::dense(du, nx, ny).unwrap()),
            ViewMut::dense(rhs, nx, ny).unwrap(), ViewMut::dense(&mut out, nx + 1, ny).unwrap());
        assert!(matches!(e, Err(Error::DimensionMismatch { .. })), "{e:?}");
    });
}
