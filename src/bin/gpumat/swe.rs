//! `gpumat swe --scenario NAME`: the shallow-water model (Casulli 1990) on
//! a test case, with a progress bar, PNG frames and a GIF, and a summary
//! of the run and of its verification against the case's analytic answer.

use std::path::{Path, PathBuf};
use std::time::Instant;

use gpumat::apps::swe::scenario::{self, Kind, Scenario};
use gpumat::apps::swe::{Execution, Model};
use gpumat::batch::Coprocessor;
use gpumat::io::{read_csv, read_matrix_market};
use gpumat::{Device, Error, Result};
use indicatif::{ProgressBar, ProgressStyle};

use crate::exit::{self, Failure};
use crate::stdout::outln;
use crate::swe_frame::{self, Recorder};
use crate::values;

/// Where the steps run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Split {
    /// Everything on the device (`--device`; the GPU when there is one).
    Gpu,
    /// Everything on the CPU.
    Cpu,
    /// The fields on the host, each half step's tridiagonal systems shared
    /// between the device and the CPU in the ratio measured as it runs.
    Auto,
}

#[derive(clap::Args)]
pub struct Args {
    /// The test case: dam-break (Stoker 1957), seiche (a basin's first
    /// mode), gaussian (a hump around an island, with friction), bowl
    /// (Thacker 1981: an oscillation in a paraboloid, with drying).
    #[arg(long, value_parser = scenario_kind)]
    scenario: Kind,
    /// Cells along x (the case's default otherwise).
    #[arg(long, value_parser = values::positive_count)]
    nx: Option<usize>,
    /// Cells along y.
    #[arg(long, value_parser = values::positive_count)]
    ny: Option<usize>,
    /// Simulated time to reach, s.
    #[arg(long, value_parser = values::positive_number)]
    t_end: Option<f64>,
    /// Time step, s.
    #[arg(long, value_parser = values::positive_number)]
    dt: Option<f64>,
    /// Chézy's coefficient, m^½/s (the case's default otherwise).
    #[arg(long, value_parser = values::positive_number)]
    chezy: Option<f64>,
    /// Let cells dry and flood (Casulli and Cheng 1992) instead of
    /// requiring every cell wet; on by itself for bowl.
    #[arg(long)]
    drying: bool,
    /// Where the steps run.
    #[arg(long, value_enum, default_value_t = Split::Gpu)]
    split: Split,
    /// Frames to draw, evenly over the run (60 with --gif alone).
    #[arg(long, value_parser = values::positive_count)]
    frames: Option<usize>,
    /// Folder for the PNG frames.
    #[arg(long)]
    out: Option<PathBuf>,
    /// An animated GIF of the frames.
    #[arg(long, value_parser = swe_frame::gif_path)]
    gif: Option<PathBuf>,
    /// The bathymetry h (m below the datum) of every cell: a Matrix
    /// Market array of nx rows and ny columns, or a CSV file with a header
    /// row and then nx rows of ny numbers.
    #[arg(long)]
    bathymetry: Option<PathBuf>,
    /// The initial surface z (m above the datum), in the same forms.
    #[arg(long)]
    init: Option<PathBuf>,
}

fn scenario_kind(s: &str) -> std::result::Result<Kind, String> {
    s.parse::<Kind>().map_err(|e| match e {
        Error::InvalidArgument(why) => why,
        e => e.to_string(),
    })
}

/// A grid of `nx × ny` values from a Matrix Market or CSV file (by its
/// extension), rows along x.
fn read_grid(path: &Path, (nx, ny): (usize, usize)) -> Result<Vec<f64>> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let (rows, cols, data) = match ext.as_deref() {
        Some("csv") => {
            let t = read_csv(path)?;
            let (rows, cols) = (t.nrows(), t.ncols());
            // Columns of the table are columns of the grid: column-major already.
            (rows, cols, t.data.into_iter().flatten().collect())
        }
        Some("mtx") | Some("mm") => {
            let mm = read_matrix_market(path)?;
            (mm.rows, mm.cols, mm.data)
        }
        _ => {
            return Err(Error::InvalidArgument(format!(
                "{}: a grid file is Matrix Market (.mtx) or CSV (.csv)",
                path.display()
            )));
        }
    };
    if (rows, cols) != (nx, ny) {
        return Err(Error::dims(
            "swe",
            format!("{} holds {rows}×{cols} values but the grid has {nx}×{ny} cells (rows along x)", path.display()),
        ));
    }
    Ok(data)
}

pub fn run(dev: &Device, args: &Args) -> exit::Result<()> {
    if args.out.is_some() && args.frames.is_none() {
        return Err(Failure::Usage("--out needs --frames".into()));
    }
    if args.frames.is_some() && args.out.is_none() && args.gif.is_none() {
        return Err(Failure::Usage("--frames needs --out or --gif".into()));
    }
    let mut s = Scenario::new(args.scenario, args.nx, args.ny)?;
    if let Some(dt) = args.dt {
        s.params.dt = dt;
    }
    if let Some(t) = args.t_end {
        s.t_end = t;
    }
    if let Some(c) = args.chezy {
        s.params.chezy = c;
    }
    s.params.drying |= args.drying;
    let cells = (s.grid.nx, s.grid.ny);
    if let Some(path) = &args.bathymetry {
        s.fields.h = read_grid(path, cells)?;
    }
    if let Some(path) = &args.init {
        s.fields.z = read_grid(path, cells)?;
    }
    let execution = match args.split {
        Split::Gpu => Execution::Device(dev.clone()),
        Split::Cpu => Execution::Device(Device::cpu()),
        Split::Auto => Execution::Split(Coprocessor::new(dev.clone())),
    };
    let mut model = Model::new(s.grid, s.params, &s.fields, execution)?;
    let name = scenario_name(s.kind);
    let frames = args.frames.or(args.gif.as_ref().map(|_| 60)).unwrap_or(0);
    let mut recorder = match frames {
        0 => None,
        _ => Some(Recorder::new(s.grid, name, args.out.clone(), args.gif.clone(), (&s.fields.h, &s.fields.z))?),
    };
    let (_, first) = model.check()?;
    let steps = s.steps();
    let bar = ProgressBar::new(steps);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} steps  {msg}  eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut probe = Vec::new();
    let read_probe = |m: &Model, series: &mut Vec<(f64, f64)>| -> Result<()> {
        if let Some((i, j)) = s.probe {
            series.push((m.time(), m.surface_at(i, j)?));
        }
        Ok(())
    };
    read_probe(&model, &mut probe)?;
    let cells_per_step = s.grid.cells() as f64;
    let start = Instant::now();
    let mut drawn = 0;
    for k in 0..=steps {
        // Frame f at step round(f·steps/(frames − 1)), the first and last included.
        while let Some(rec) = recorder.as_mut().filter(|_| drawn < frames) {
            let at = if frames == 1 { steps } else { (drawn as u64 * steps).div_ceil(frames as u64 - 1) };
            if at != k {
                break;
            }
            let (fields, _) = model.check()?;
            rec.frame(&fields, model.time())?;
            drawn += 1;
        }
        if k == steps {
            break;
        }
        model.step()?;
        read_probe(&model, &mut probe)?;
        if k % 16 == 15 || k + 1 == steps {
            let rate = (k + 1) as f64 * cells_per_step / start.elapsed().as_secs_f64().max(1e-9);
            bar.set_position(k + 1);
            bar.set_message(format!("t = {:.1} s  {rate:.3e} cells·steps/s", model.time()));
        }
    }
    model.device().synchronize()?;
    let wall = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let (fields, last) = model.check()?;
    let figures = s.verify(&first, &last, &fields, model.time(), &probe);
    outln!(
        "scenario     {name} on {}×{} cells of {:.4}×{:.4} m, dt = {} s",
        s.grid.nx,
        s.grid.ny,
        s.grid.dx,
        s.grid.dy,
        s.params.dt
    )?;
    let place = match (&args.split, model.last_share()) {
        (Split::Auto, Some(share)) => format!(
            "split: fields on the CPU, systems {} : {} between {} and the CPU",
            share.accelerator,
            share.host,
            dev.short_name()
        ),
        _ => model.device().describe(),
    };
    outln!("device       {place}")?;
    outln!("steps        {steps} to t = {:.3} s", model.time())?;
    outln!("wall time    {wall:.3} s (frames and probes included)")?;
    outln!("throughput   {:.4e} cells·steps/s", steps as f64 * cells_per_step / wall.max(1e-9))?;
    outln!("max Courant  {:.3} (convective)", last.courant)?;
    if let Some(rec) = &recorder {
        outln!("frames       {}", rec.written())?;
    }
    if s.kind == Kind::DamBreak && args.bathymetry.is_none() && args.init.is_none() && s.grid.nx >= 16 {
        refinement(&s, args, dev, &fields.z, model.time())?;
    }
    let mut failed = Vec::new();
    for f in &figures {
        let verdict = match f.bound {
            Some(b) if f.passes() => format!("  ≤ {b:.0e}  ok"),
            Some(b) => {
                failed.push(f.name.clone());
                format!("  > {b:.0e}  FAILED")
            }
            None => String::new(),
        };
        outln!("{:<40} {:.6e}{verdict}", f.name, f.value)?;
    }
    if !failed.is_empty() {
        return Err(Failure::Lib(Error::InvalidArgument(format!("verification failed: {}", failed.join(", ")))));
    }
    Ok(())
}

/// The dam break's error against Stoker (1957) on the grid run and on two
/// coarser ones (halved and quartered, the same Courant number), and the
/// observed orders of convergence between them.
fn refinement(s: &Scenario, args: &Args, dev: &Device, z: &[f64], time: f64) -> exit::Result<()> {
    let mut errors = vec![(s.grid.nx, scenario::dam_break_l1(&s.grid, s.params.g, z, time))];
    for k in [2, 4] {
        let mut c = Scenario::new(Kind::DamBreak, Some(s.grid.nx / k), Some(s.grid.ny))?;
        c.params = s.params;
        c.params.dt = s.params.dt * (c.grid.dx / s.grid.dx);
        c.t_end = s.t_end;
        let execution = match args.split {
            Split::Cpu => Execution::Device(Device::cpu()),
            _ => Execution::Device(dev.clone()),
        };
        let mut m = Model::new(c.grid, c.params, &c.fields, execution)?;
        m.advance(c.steps())?;
        let (f, _) = m.check()?;
        errors.push((c.grid.nx, scenario::dam_break_l1(&c.grid, c.params.g, &f.z, m.time())));
    }
    errors.reverse();
    for w in errors.windows(2) {
        let ((n0, e0), (n1, e1)) = (w[0], w[1]);
        outln!("L1 error on {n0} → {n1} cells: {e0:.4e} → {e1:.4e} m, observed order {:.2}", (e0 / e1).log2())?;
    }
    Ok(())
}

fn scenario_name(kind: Kind) -> &'static str {
    match kind {
        Kind::DamBreak => "dam-break",
        Kind::Seiche => "seiche",
        Kind::Gaussian => "gaussian",
        Kind::Bowl => "bowl",
    }
}
