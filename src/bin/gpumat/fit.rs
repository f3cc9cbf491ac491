//! `gpumat fit data.csv --x COL --y COL [--sigma COL] --basis SPEC`: a
//! weighted least-squares fit of a linear model to a time series, the
//! problem that motivates Jung and O'Leary (2008).

use std::f64::consts::TAU;
use std::path::PathBuf;
use std::str::FromStr;

use gpumat::backend::cpu::{check_fits, matrix_bytes};
use gpumat::io::read_csv;
use gpumat::{Device, Error, Result};

use crate::stdout::outln;

use crate::lstsq::solve_in;
use crate::plot;
use crate::solve::Precision;

/// The basis functions φⱼ of the model u(x) = Σ cⱼ·φⱼ(x).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Basis {
    /// 1, x, x², …, x^deg (the monomial basis).
    Poly { degree: usize },
    /// 1, cos(ωt), sin(ωt), …, cos(kωt), sin(kωt), t = x − min x,
    /// ω = 2π/period (by default the span of x).
    Fourier { harmonics: usize, period: Option<f64> },
}

const SPEC: &str = "expected poly:DEG or fourier:K[:PERIOD], e.g. poly:3 or fourier:2";

impl FromStr for Basis {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let bad = |why: &str| format!("malformed basis '{s}': {why}; {SPEC}");
        let parts: Vec<&str> = s.trim().split(':').collect();
        let count = |p: &str, what: &str| {
            p.trim().parse::<usize>().map_err(|_| bad(&format!("{what} '{p}' is not a whole number")))
        };
        // K harmonics are 2K + 1 functions, which need as many data points:
        // the smallest design, (2K + 1)², must have a size and fit in memory.
        let harmonics = |k: &str| -> std::result::Result<usize, String> {
            let k = count(k, "the number of harmonics")?;
            let functions = k.checked_mul(2).and_then(|f| f.checked_add(1));
            let design = functions.and_then(|f| matrix_bytes(f, f, size_of::<f64>()));
            check_fits(|| format!("the smallest design of {k} harmonics, {0} × {0}", 2 * k as u128 + 1), design)
                .map_err(|e| bad(&format!("too many harmonics ({e})")))?;
            Ok(k)
        };
        match parts.as_slice() {
            ["poly", d] => {
                let degree = count(d, "the degree")?;
                if degree > 64 {
                    return Err(bad("degrees above 64 are not supported"));
                }
                Ok(Basis::Poly { degree })
            }
            ["fourier", k] => Ok(Basis::Fourier { harmonics: harmonics(k)?, period: None }),
            ["fourier", k, p] => {
                let period = p.trim().parse::<f64>().ok().filter(|p| p.is_finite() && *p > 0.0);
                let period = period.ok_or_else(|| bad(&format!("the period '{p}' is not a positive number")))?;
                Ok(Basis::Fourier { harmonics: harmonics(k)?, period: Some(period) })
            }
            _ => Err(bad("unknown form")),
        }
    }
}

impl Basis {
    /// The number of functions.
    pub fn len(&self) -> usize {
        match *self {
            Basis::Poly { degree } => degree + 1,
            Basis::Fourier { harmonics, .. } => 2 * harmonics + 1,
        }
    }

    /// Names of the terms, for the coefficient table.
    pub fn names(&self) -> Vec<String> {
        match *self {
            Basis::Poly { degree } => (0..=degree)
                .map(|k| match k {
                    0 => "1".into(),
                    1 => "x".into(),
                    k => format!("x^{k}"),
                })
                .collect(),
            Basis::Fourier { harmonics, .. } => std::iter::once("1".to_string())
                .chain((1..=harmonics).flat_map(|k| [format!("cos({k}ωt)"), format!("sin({k}ωt)")]))
                .collect(),
        }
    }

    /// The basis bound to the data: the origin and frequency of a Fourier
    /// basis come from the x values.
    pub fn bind(self, x: &[f64]) -> Result<Model> {
        let lo = x.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let omega = match self {
            Basis::Poly { .. } => 0.0,
            Basis::Fourier { period: Some(p), .. } => TAU / p,
            Basis::Fourier { period: None, .. } => {
                if hi <= lo || hi.is_nan() || lo.is_nan() {
                    return Err(Error::InvalidArgument(
                        "a Fourier basis needs x values that are not all equal (its period is their span)".into(),
                    ));
                }
                TAU / (hi - lo)
            }
        };
        Ok(Model { basis: self, origin: lo, omega })
    }
}

/// A basis bound to the data's x range.
#[derive(Clone, Copy, Debug)]
pub struct Model {
    pub basis: Basis,
    origin: f64,
    omega: f64,
}

impl Model {
    /// φⱼ(x) for every j.
    pub fn row(&self, x: f64) -> Vec<f64> {
        match self.basis {
            Basis::Poly { degree } => (0..=degree).map(|k| x.powi(k as i32)).collect(),
            Basis::Fourier { harmonics, .. } => {
                let t = x - self.origin;
                std::iter::once(1.0)
                    .chain((1..=harmonics).flat_map(|k| {
                        let a = k as f64 * self.omega * t;
                        [a.cos(), a.sin()]
                    }))
                    .collect()
            }
        }
    }

    /// u(x) = Σ cⱼ·φⱼ(x).
    pub fn eval(&self, c: &[f64], x: f64) -> f64 {
        self.row(x).iter().zip(c).map(|(p, c)| p * c).sum()
    }

    /// The design matrix, one row per x, column-major.
    pub fn design(&self, x: &[f64]) -> Vec<f64> {
        let rows: Vec<Vec<f64>> = x.iter().map(|&t| self.row(t)).collect();
        (0..self.basis.len()).flat_map(|j| rows.iter().map(move |r| r[j])).collect()
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// The data: a CSV file with a header row of column names.
    data: PathBuf,
    /// The column of the independent variable.
    #[arg(long, value_name = "COL")]
    x: String,
    /// The column of the observed values.
    #[arg(long, value_name = "COL")]
    y: String,
    /// The column of the observations' standard deviations (> 0); each
    /// residual is weighted by 1/σ.
    #[arg(long, value_name = "COL")]
    sigma: Option<String>,
    /// The model: poly:DEG (1, x, …, x^DEG) or fourier:K[:PERIOD]
    /// (1, cos(kωt), sin(kωt) for k ≤ K, t = x − min x, ω = 2π/PERIOD,
    /// the period by default the span of x).
    #[arg(long, value_name = "SPEC")]
    basis: Basis,
    /// Draw the data with error bars and the fitted curve into this file;
    /// its extension chooses the format, one of: png.
    #[arg(long, value_name = "FIT.png", value_parser = plot::image_path)]
    plot: Option<PathBuf>,
    /// Precision of the QR factorization.
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    precision: Precision,
}

pub fn run(dev: &Device, args: &Args) -> Result<()> {
    let table = read_csv(&args.data)?;
    let at = |name: &str| -> Result<Vec<f64>> {
        table.column(name).map(<[f64]>::to_vec).map_err(|e| match e {
            Error::InvalidArgument(msg) => Error::InvalidArgument(format!("{}: {msg}", args.data.display())),
            e => e,
        })
    };
    let (x, y) = (at(&args.x)?, at(&args.y)?);
    let sigma = args.sigma.as_deref().map(at).transpose()?;
    if let (Some(s), Some(name)) = (&sigma, &args.sigma)
        && let Some(i) = s.iter().position(|&v| v <= 0.0 || v.is_nan())
    {
        return Err(Error::InvalidArgument(format!(
            "{}: column '{name}' (σ) must be positive, is {} in data row {} (line {})",
            args.data.display(),
            s[i],
            i + 1,
            i + 2
        )));
    }
    let (m, n) = (x.len(), args.basis.len());
    if m < n {
        return Err(Error::InvalidArgument(format!(
            "{}: {m} data points for the {n} coefficients of {}: a fit needs at least as many points as coefficients",
            args.data.display(),
            spec(&args.basis)
        )));
    }
    let model = args.basis.bind(&x)?;
    let a = model.design(&x);
    if let Some(p) = a.iter().position(|v| !v.is_finite()) {
        return Err(Error::NonFinite {
            what: format!("the design matrix of {} (x = {} in data row {})", spec(&args.basis), x[p % m], p % m + 1),
            row: p % m + 1,
            col: p / m + 1,
            value: a[p],
        });
    }
    let w: Option<Vec<f64>> = sigma.as_ref().map(|s| s.iter().map(|v| 1.0 / v).collect());
    let (c, se, residual, condition, steps) = match args.precision {
        Precision::F64 => {
            let s = solve_in::<f64>(dev, &a, (m, n), &y, w.as_deref())?;
            (s.x_host, s.standard_errors, s.residual_norm, s.condition, s.iterations)
        }
        Precision::F32 => {
            let s = solve_in::<f32>(dev, &a, (m, n), &y, w.as_deref())?;
            (s.x_host, s.standard_errors, s.residual_norm, s.condition, s.iterations)
        }
    };
    // The picture first: a plot that cannot be written fails the command
    // before any result is reported.
    if let Some(path) = &args.plot {
        let title = format!("{} fit of {} against {}", spec(&args.basis), args.y, args.x);
        plot::draw(path, (&x, &y), sigma.as_deref(), |t| model.eval(&c, t), (&title, &args.x, &args.y))?;
    }
    outln!(
        "fit: {} to {m} points of '{}' against '{}'{}",
        spec(&args.basis),
        args.y,
        args.x,
        args.sigma.as_ref().map(|s| format!(", weights 1/'{s}'")).unwrap_or_default()
    )?;
    if let Basis::Fourier { .. } = args.basis {
        outln!("t = x − {:e}, ω = {:.17e}", model.origin, model.omega)?;
    }
    outln!("{:<12} {:>24} {:>12}", "term", "coefficient", "std. error")?;
    for (j, name) in args.basis.names().iter().enumerate() {
        let e = se.as_ref().map_or("-".to_string(), |se| format!("{:.3e}", se[j]));
        outln!("{name:<12} {:>24.16e} {e:>12}", c[j])?;
    }
    outln!("residual norm: {residual:.6e}{}", if w.is_some() { " (weighted; its square is χ²)" } else { "" })?;
    outln!("condition estimate: {condition:.3e} (columns scaled to unit norm); refinement steps: {steps}")?;
    if let Some(path) = &args.plot {
        eprintln!("fit: plot written to {}", path.display());
    }
    Ok(())
}

fn spec(b: &Basis) -> String {
    match *b {
        Basis::Poly { degree } => format!("poly:{degree}"),
        Basis::Fourier { harmonics, period: None } => format!("fourier:{harmonics}"),
        Basis::Fourier { harmonics, period: Some(p) } => format!("fourier:{harmonics}:{p}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        assert_eq!("poly:3".parse::<Basis>(), Ok(Basis::Poly { degree: 3 }));
        assert_eq!("fourier:2".parse::<Basis>(), Ok(Basis::Fourier { harmonics: 2, period: None }));
        assert_eq!("fourier:1:12.5".parse::<Basis>(), Ok(Basis::Fourier { harmonics: 1, period: Some(12.5) }));
        for bad in ["poly", "poly:x", "poly:-1", "cubic:3", "fourier:2:-1", ""] {
            let e = bad.parse::<Basis>().unwrap_err();
            assert!(e.contains("malformed basis"), "{bad}: {e}");
        }
    }

    #[test]
    fn fourier_rows() {
        let m = Basis::Fourier { harmonics: 1, period: Some(4.0) }.bind(&[1.0, 3.0]).unwrap();
        let r = m.row(2.0);
        assert_eq!(r.len(), 3);
        assert!((r[1] - 0.0).abs() < 1e-15 && (r[2] - 1.0).abs() < 1e-15, "{r:?}");
    }
}
