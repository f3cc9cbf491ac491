//! Pictures of a shallow-water run: the surface as a colour map with
//! velocity arrows, as PNG frames and as one animated GIF, drawn with
//! plotters' bitmap backend.

use std::path::{Path, PathBuf};

use gpumat::apps::swe::{Fields, Grid};
use gpumat::{Error, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSansMono.ttf");

/// Width of a picture; its height follows the basin's aspect, within limits.
const WIDTH: u32 = 720;
const MIN_MAP_HEIGHT: u32 = 120;
/// The band above the map that holds the caption.
const CAPTION: u32 = 28;
/// Pixels between arrows.
const ARROW_SPACING: i32 = 36;
/// Cells this shallow (m) are drawn as land.
const DRY: f64 = 1e-6;
const LAND: RGBColor = RGBColor(196, 180, 150);
/// Delay between the GIF's frames, ms.
const GIF_DELAY: u32 = 100;

/// Where the frames go, and the colour scale they share.
pub struct Recorder {
    grid: Grid,
    name: String,
    out: Option<PathBuf>,
    gif: Option<DrawingArea<BitMapBackend<'static>, Shift>>,
    gif_path: Option<PathBuf>,
    /// The surface drawn white at 0 and red (blue) at ±`scale`.
    scale: f64,
    size: (u32, u32),
    written: usize,
}

fn fail(path: &Path, e: &dyn std::fmt::Display) -> Error {
    Error::io(path, std::io::Error::other(format!("drawing a frame: {e}")))
}

impl Recorder {
    /// Frames of `grid` as `name-NNNN.png` in `out` and/or into the GIF
    /// `gif`, coloured on the scale of the initial surface `z0` where the
    /// initial depth `h0 + z0` is wet.
    pub fn new(
        grid: Grid,
        name: &str,
        out: Option<PathBuf>,
        gif: Option<PathBuf>,
        (h0, z0): (&[f64], &[f64]),
    ) -> Result<Self> {
        if let Some(dir) = &out {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let (lx, ly) = grid.extent();
        let map = ((WIDTH as f64 * ly / lx).round() as u32).clamp(MIN_MAP_HEIGHT, WIDTH);
        let size = (WIDTH, map + CAPTION);
        register_font("sans-serif", FontStyle::Normal, FONT)
            .map_err(|_| Error::InvalidArgument("the bundled font cannot be read".into()))?;
        let area = match &gif {
            Some(path) => {
                std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
                let backend = BitMapBackend::gif(path, size, GIF_DELAY).map_err(|e| fail(path, &e))?;
                Some(backend.into_drawing_area())
            }
            None => None,
        };
        let scale =
            z0.iter().zip(h0).filter(|(z, h)| *z + *h > DRY).fold(0.0f64, |m, (z, _)| m.max(z.abs())).max(1e-12);
        Ok(Recorder { grid, name: name.into(), out, gif: area, gif_path: gif, scale, size, written: 0 })
    }

    /// Draws `fields` at time `t` into the next PNG and the GIF.
    pub fn frame(&mut self, fields: &Fields, t: f64) -> Result<()> {
        if let Some(dir) = &self.out {
            let path = dir.join(format!("{}-{:04}.png", self.name, self.written));
            let root = BitMapBackend::new(&path, self.size).into_drawing_area();
            self.draw(&root, fields, t).map_err(|e| fail(&path, &e))?;
            root.present().map_err(|e| fail(&path, &e))?;
        }
        if let (Some(root), Some(path)) = (&self.gif, &self.gif_path) {
            self.draw(root, fields, t).map_err(|e| fail(path, &e))?;
            root.present().map_err(|e| fail(path, &e))?;
        }
        self.written += 1;
        Ok(())
    }

    pub fn written(&self) -> usize {
        self.written
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        f: &Fields,
        t: f64,
    ) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let Grid { nx, ny, .. } = self.grid;
        let (w, h) = (self.size.0 as i32, (self.size.1 - CAPTION) as i32);
        root.fill(&WHITE)?;
        let caption = format!("{}  t = {t:.1} s   surface z, colour ∝ √|z| to ±{:.3} m", self.name, self.scale);
        root.draw(&Text::new(caption, (8, 6), ("sans-serif", 16).into_font().color(&BLACK)))?;
        // The cell under each pixel; row 0 of the picture is the basin's top.
        let cell = |px: i32, py: i32| {
            let i = ((px as f64 + 0.5) / w as f64 * nx as f64) as usize;
            let j = ((h - 1 - py) as f64 + 0.5) / h as f64 * ny as f64;
            (i.min(nx - 1), (j as usize).min(ny - 1))
        };
        for py in 0..h {
            for px in 0..w {
                let (i, j) = cell(px, py);
                let k = i + j * nx;
                let c = if f.h[k] + f.z[k] > DRY { colour(f.z[k] / self.scale) } else { LAND };
                root.draw_pixel((px, py + CAPTION as i32), &c)?;
            }
        }
        // Velocity at the cell centres under the arrows' points, scaled so
        // that the 90th percentile of their speeds is one spacing long
        // (a few fast shallow cells at a shore do not shrink the rest).
        let centre = |i: usize, j: usize| {
            (0.5 * (f.u[i + j * (nx + 1)] + f.u[i + 1 + j * (nx + 1)]), 0.5 * (f.v[i + j * nx] + f.v[i + (j + 1) * nx]))
        };
        let mut arrows = Vec::new();
        for py in (ARROW_SPACING / 2..h).step_by(ARROW_SPACING as usize) {
            for px in (ARROW_SPACING / 2..w).step_by(ARROW_SPACING as usize) {
                let (i, j) = cell(px, py);
                arrows.push(((px, py + CAPTION as i32), centre(i, j)));
            }
        }
        let mut speeds: Vec<f64> = arrows.iter().map(|(_, (a, b))| a.hypot(*b)).filter(|s| s.is_finite()).collect();
        speeds.sort_by(f64::total_cmp);
        let typical = speeds.get(speeds.len() * 9 / 10).copied().unwrap_or(0.0);
        if typical > 0.0 {
            let unit = 0.9 * ARROW_SPACING as f64 / typical;
            let longest = 1.5 * ARROW_SPACING as f64;
            for (from, (a, b)) in arrows {
                let (mut dx, mut dy) = (a * unit, -b * unit);
                let length = dx.hypot(dy);
                if length.is_nan() || length < 1.5 {
                    continue;
                }
                if length > longest {
                    (dx, dy) = (dx * longest / length, dy * longest / length);
                }
                let to = (from.0 + dx.round() as i32, from.1 + dy.round() as i32);
                let head = |turn: f64| {
                    let (c, s) = (turn.cos(), turn.sin());
                    let (hx, hy) = (-(dx * c - dy * s) * 0.3, -(dx * s + dy * c) * 0.3);
                    (to.0 + hx.round() as i32, to.1 + hy.round() as i32)
                };
                let style = BLACK.stroke_width(1);
                root.draw(&PathElement::new(vec![from, to], style))?;
                root.draw(&PathElement::new(vec![head(0.45), to, head(-0.45)], style))?;
            }
        }
        Ok(())
    }
}

/// A diverging colour map: blue at −1, white at 0, red at +1 (clamped),
/// on the square root of `|x|`, so that waves a tenth of the initial
/// hump's height still show.
fn colour(x: f64) -> RGBColor {
    let x = if x.is_nan() { 0.0 } else { x.clamp(-1.0, 1.0) };
    let x = x.signum() * x.abs().sqrt();
    let mix = |a: u8, b: u8, s: f64| (a as f64 + (b as f64 - a as f64) * s).round() as u8;
    let white = (247u8, 247u8, 247u8);
    let end = if x >= 0.0 { (178u8, 24u8, 43u8) } else { (33u8, 102u8, 172u8) };
    let s = x.abs();
    RGBColor(mix(white.0, end.0, s), mix(white.1, end.1, s), mix(white.2, end.2, s))
}

/// A `--gif` value: a file ending in .gif.
pub fn gif_path(s: &str) -> std::result::Result<PathBuf, String> {
    let path = PathBuf::from(s);
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase) {
        Some(e) if e == "gif" && !path.is_dir() => Ok(path),
        _ => Err(format!("'{s}': expected a file name ending in .gif")),
    }
}
