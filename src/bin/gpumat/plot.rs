//! PNG plots of fits, with plotters' bitmap backend. Text is drawn with a
//! bundled font (DejaVu Sans Mono, `assets/fonts`, Bitstream Vera licence)
//! through ab_glyph, so nothing depends on the system's fonts.

use std::path::{Path, PathBuf};

use gpumat::{Error, Result};
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSansMono.ttf");

/// Width and height of the image in pixels.
pub const SIZE: (u32, u32) = (960, 640);

/// The formats `--plot` writes, chosen by the file's extension.
pub const FORMATS: &[&str] = &["png"];

/// A `--plot` value: a file whose extension names a format of [`FORMATS`],
/// so that the picture is what its name says.
pub fn image_path(s: &str) -> std::result::Result<PathBuf, String> {
    let path = PathBuf::from(s);
    if path.is_dir() {
        return Err(format!("'{s}' is a directory; expected a file name ending in .{}", FORMATS.join(", .")));
    }
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext {
        Some(e) if FORMATS.contains(&e.as_str()) => Ok(path),
        _ => Err(format!("'{s}': the extension chooses the format, one of: .{}", FORMATS.join(", ."))),
    }
}

/// Padded range of the finite values.
fn range(values: impl Iterator<Item = f64>, pad: f64) -> std::ops::Range<f64> {
    let (lo, hi) =
        values.filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(v), h.max(v)));
    if lo > hi || lo.is_nan() || hi.is_nan() {
        return -1.0..1.0;
    }
    let span = if hi > lo { hi - lo } else { lo.abs().max(1.0) };
    (lo - pad * span)..(hi + pad * span)
}

/// Draws the data `(x, y)` (with error bars `±σ` when given) and the curve
/// `f` over the data's x range into the PNG `path`.
pub fn draw(
    path: &Path,
    (x, y): (&[f64], &[f64]),
    sigma: Option<&[f64]>,
    f: impl Fn(f64) -> f64,
    (title, x_name, y_name): (&str, &str, &str),
) -> Result<()> {
    let fail = |e: &dyn std::fmt::Display| Error::io(path, std::io::Error::other(format!("drawing the plot: {e}")));
    // The file is made here so that a missing folder or a denied write
    // reads as the system's message, not as the encoder's.
    std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
    register_font("sans-serif", FontStyle::Normal, FONT).map_err(|_| fail(&"the bundled font cannot be read"))?;
    let xr = range(x.iter().copied(), 0.03);
    let curve: Vec<(f64, f64)> = (0..=400)
        .map(|k| {
            let t = xr.start + (xr.end - xr.start) * k as f64 / 400.0;
            (t, f(t))
        })
        .collect();
    let lo_hi = |i: usize, s: f64| [y[i] - s, y[i] + s];
    let bars = (0..y.len()).flat_map(|i| lo_hi(i, sigma.map_or(0.0, |s| s[i])));
    let yr = range(bars.chain(curve.iter().map(|p| p.1)), 0.05);

    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(84)
        .build_cartesian_2d(xr, yr)
        .map_err(|e| fail(&e))?;
    chart
        .configure_mesh()
        .x_desc(x_name)
        .y_desc(y_name)
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| fail(&e))?;
    let blue = RGBColor(31, 119, 180);
    if let Some(s) = sigma {
        chart
            .draw_series(
                (0..x.len())
                    .map(|i| ErrorBar::new_vertical(x[i], y[i] - s[i], y[i], y[i] + s[i], blue.stroke_width(1), 6)),
            )
            .map_err(|e| fail(&e))?;
    }
    chart
        .draw_series(x.iter().zip(y).map(|(&a, &b)| Circle::new((a, b), 3, blue.filled())))
        .map_err(|e| fail(&e))?
        .label("data")
        .legend(move |(a, b)| Circle::new((a + 10, b), 3, blue.filled()));
    let red = RGBColor(214, 39, 40);
    chart
        .draw_series(LineSeries::new(curve.into_iter().filter(|p| p.1.is_finite()), red.stroke_width(2)))
        .map_err(|e| fail(&e))?
        .label("fit")
        .legend(move |(a, b)| PathElement::new(vec![(a, b), (a + 20, b)], red.stroke_width(2)));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))
}
