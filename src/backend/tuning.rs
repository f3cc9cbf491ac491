//! The knobs of the backends, read from the environment once, when a device
//! is made, and handed to the plans as data.
//!
//! Every field has a default that was measured to be the best on an H100;
//! the knobs exist for benchmarks (sweeps) and tests (forcing each kernel
//! path on small inputs). A value that does not parse is an error naming the
//! variable, never a silent default. Benchmarks and tests that want other
//! values build a device with [`Device::with_tuning`](crate::Device::with_tuning)
//! or call [`Cuda::set_tuning`](crate::backend::Cuda::set_tuning), never
//! `std::env::set_var`.

use super::Compute;
use crate::{Error, Result};

/// How the CUDA backend chooses among its algorithms and blockings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tuning {
    /// Record repeated work as CUDA graphs and replay it
    /// ([`Backend::replay`](super::Backend::replay)); `GPUMAT_GRAPHS=0` turns
    /// it off.
    pub graphs: bool,
    /// One LU panel kernel for every panel, with few rows per block so that
    /// small panels take the exchanges between blocks (`GPUMAT_LU_PANEL`);
    /// `None`: chosen by shape and GPU.
    pub lu_panel: Option<LuPanel>,
    /// The Householder panel kernel (`GPUMAT_QR_PANEL`); `None`: chosen by
    /// shape.
    pub qr_panel: Option<QrPanel>,
    /// The fewest rows a block of the shared-memory Householder kernel
    /// takes (`GPUMAT_QR_PANEL_ROWS`): fewer blocks, each with more rows;
    /// `None`: 128.
    pub qr_panel_rows: Option<usize>,
    /// Block columns, depth per chunk and queues of the scaled Gram product
    /// `A·D²·Aᵀ` (`GPUMAT_SCALED_GRAM_NB`, `_KC`, `_STREAMS`); `None`: the
    /// plan's choice for the shape.
    pub gram: GramTuning,
    /// The low-precision Gram matrix of weighted least squares: split type,
    /// panel depth and diagonal leaf (`GPUMAT_SPLIT`, `_KB`, `_LEAF`).
    pub split: SplitTuning,
    /// The GPU's share of a batch split between the GPU and the CPU
    /// ([`Coprocessor`](crate::batch::Coprocessor)), pinned
    /// (`GPUMAT_SPLIT_RATIO`, from 0 to 1); `None`: measured.
    pub split_ratio: Option<f64>,
    /// How the FP64 factorizations' trailing updates (Cholesky, LU) and
    /// scaled Gram matrices `A·D²·Aᵀ` multiply (`GPUMAT_FP64_PRODUCTS`):
    /// natively (the default), or from INT8 products by the Ozaki scheme
    /// ([`Compute::Int8`](super::Compute::Int8)).
    pub fp64_products: Compute,
    /// The smallest `m`, `n` and `k` of a product that
    /// [`Compute::Int8`](super::Compute::Int8)`{ moduli: None }` emulates
    /// on the GPU; smaller ones are native (`GPUMAT_FP64_PRODUCTS_FROM`).
    /// The default, 16384, is where the emulation overtakes `dgemm` on an
    /// H100; GPUs with another ratio of INT8 to FP64 rates move it.
    pub fp64_products_from: usize,
    /// The SMs that the trailing updates of an LU with tensor-core updates
    /// (the mixed-precision solves) run on (`GPUMAT_SIDE_SMS`;
    /// [`Backend::partitioned`](super::Backend::partitioned): a green
    /// context, the count rounded up to the driver's granularity and at most
    /// one granule less than the GPU has); its panels keep the others.
    /// `None`: three sevenths of the GPU's SMs (56 of 132).
    pub side_sms: Option<usize>,
}

impl Tuning {
    /// The trailing updates of an FP64 factorization of order `n` under
    /// [`fp64_products`](Self::fp64_products): native where the count of
    /// moduli is chosen and no update can reach
    /// [`fp64_products_from`](Self::fp64_products_from) (every one is
    /// smaller than `n`), so that the factorization stays recordable as a
    /// CUDA graph; otherwise the setting itself.
    pub fn fp64_updates(&self, n: usize) -> Compute {
        match self.fp64_products {
            Compute::Int8 { moduli: None } if n <= self.fp64_products_from => Compute::Native,
            other => other,
        }
    }
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            graphs: true,
            lu_panel: None,
            qr_panel: None,
            qr_panel_rows: None,
            gram: GramTuning::default(),
            split: SplitTuning::default(),
            split_ratio: None,
            fp64_products: Compute::Native,
            fp64_products_from: 16384,
            side_sms: None,
        }
    }
}

/// The LU panel kernels of the CUDA backend, fastest first where they apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LuPanel {
    /// Rows in registers, the blocks of one thread-block cluster exchanging
    /// pivot candidates in shared memory (sm_90 and later).
    Cluster,
    /// Rows in registers, one exchange through global memory per column.
    Register,
    /// Rows in shared memory, one exchange per column.
    SharedMemory,
    /// Rows in global memory, a grid-wide barrier per column.
    Grid,
    /// One thread block for the whole panel.
    Block,
}

/// The Householder panel kernels of the CUDA backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QrPanel {
    /// Each block's rows in shared memory, one exchange per column
    /// (leaves whose rows fit in the SMs' shared memory; the default
    /// there).
    Shared,
    /// Each block's rows in global memory, one exchange per column.
    Global,
}

/// Overrides of the scaled Gram product's plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GramTuning {
    pub nb: Option<usize>,
    pub kc: Option<usize>,
    /// 1 or 2.
    pub streams: Option<usize>,
}

/// The type the low-precision Gram matrix is split into on the tensor cores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Split {
    /// IEEE half, rows scaled by powers of two.
    #[default]
    Half,
    /// TF32 (half the rate, no scaling).
    Tf32,
}

/// Overrides of the low-precision Gram matrix's plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SplitTuning {
    pub kind: Split,
    pub kb: Option<usize>,
    pub leaf: Option<usize>,
}

/// Every variable [`Tuning::from_env`] reads, with the values it takes.
pub const VARIABLES: &[(&str, &str)] = &[
    ("GPUMAT_GRAPHS", "1 (default) or 0"),
    ("GPUMAT_LU_PANEL", "cluster, reg, ll, grid or block"),
    ("GPUMAT_QR_PANEL", "shared or global"),
    ("GPUMAT_QR_PANEL_ROWS", "a positive integer"),
    ("GPUMAT_SCALED_GRAM_NB", "a positive integer"),
    ("GPUMAT_SCALED_GRAM_KC", "a positive integer"),
    ("GPUMAT_SCALED_GRAM_STREAMS", "1 or 2"),
    ("GPUMAT_SPLIT", "half (default) or tf32"),
    ("GPUMAT_SPLIT_KB", "a positive integer"),
    ("GPUMAT_SPLIT_LEAF", "a positive integer"),
    ("GPUMAT_SPLIT_RATIO", "the GPU's share of a split batch, from 0 to 1"),
    ("GPUMAT_FP64_PRODUCTS", "native (default), int8, or int8:N with N from 6 to 20"),
    ("GPUMAT_FP64_PRODUCTS_FROM", "an order"),
    ("GPUMAT_SIDE_SMS", "a positive integer"),
];

impl Tuning {
    /// The tuning the environment asks for; unset variables take the
    /// defaults.
    pub fn from_env() -> Result<Tuning> {
        Self::from_lookup(|name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    }

    /// [`from_env`](Self::from_env) with the variables read through `var`.
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<Tuning> {
        let read = |name: &'static str| -> Option<(&'static str, String)> {
            var(name).map(|v| (name, v.trim().to_ascii_lowercase())).filter(|(_, v)| !v.is_empty())
        };
        let invalid = |name: &'static str, value: &str| {
            let expected = VARIABLES.iter().find(|(n, _)| *n == name).map_or("", |(_, e)| e);
            Error::InvalidEnvironment { variable: name, value: value.to_string(), expected }
        };
        let positive = |name: &'static str| -> Result<Option<usize>> {
            read(name)
                .map(|(n, v)| v.parse::<usize>().ok().filter(|&x| x > 0).ok_or_else(|| invalid(n, &v)))
                .transpose()
        };
        let graphs = match read("GPUMAT_GRAPHS") {
            None => true,
            Some((_, v)) if v == "1" => true,
            Some((_, v)) if v == "0" => false,
            Some((n, v)) => return Err(invalid(n, &v)),
        };
        let lu_panel = match read("GPUMAT_LU_PANEL") {
            None => None,
            Some((n, v)) => Some(match v.as_str() {
                "cluster" => LuPanel::Cluster,
                "reg" => LuPanel::Register,
                "ll" => LuPanel::SharedMemory,
                "grid" => LuPanel::Grid,
                "block" => LuPanel::Block,
                _ => return Err(invalid(n, &v)),
            }),
        };
        let qr_panel = match read("GPUMAT_QR_PANEL") {
            None => None,
            Some((_, v)) if v == "shared" => Some(QrPanel::Shared),
            Some((_, v)) if v == "global" => Some(QrPanel::Global),
            Some((n, v)) => return Err(invalid(n, &v)),
        };
        let streams = positive("GPUMAT_SCALED_GRAM_STREAMS")?;
        if let Some(s) = streams.filter(|&s| s > 2) {
            return Err(invalid("GPUMAT_SCALED_GRAM_STREAMS", &s.to_string()));
        }
        let kind = match read("GPUMAT_SPLIT") {
            None => Split::Half,
            Some((_, v)) if v == "half" => Split::Half,
            Some((_, v)) if v == "tf32" => Split::Tf32,
            Some((n, v)) => return Err(invalid(n, &v)),
        };
        Ok(Tuning {
            graphs,
            lu_panel,
            qr_panel,
            qr_panel_rows: positive("GPUMAT_QR_PANEL_ROWS")?,
            gram: GramTuning {
                nb: positive("GPUMAT_SCALED_GRAM_NB")?,
                kc: positive("GPUMAT_SCALED_GRAM_KC")?,
                streams,
            },
            split: SplitTuning { kind, kb: positive("GPUMAT_SPLIT_KB")?, leaf: positive("GPUMAT_SPLIT_LEAF")? },
            split_ratio: match read("GPUMAT_SPLIT_RATIO") {
                None => None,
                Some((n, v)) => {
                    Some(v.parse::<f64>().ok().filter(|f| (0.0..=1.0).contains(f)).ok_or_else(|| invalid(n, &v))?)
                }
            },
            fp64_products: match read("GPUMAT_FP64_PRODUCTS") {
                None => Compute::Native,
                Some((n, v)) => Compute::parse_fp64(&v).map_err(|_| invalid(n, &v))?,
            },
            fp64_products_from: match read("GPUMAT_FP64_PRODUCTS_FROM") {
                None => Tuning::default().fp64_products_from,
                Some((n, v)) => v.parse().map_err(|_| invalid(n, &v))?,
            },
            side_sms: positive("GPUMAT_SIDE_SMS")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(vars: &[(&str, &str)]) -> Result<Tuning> {
        Tuning::from_lookup(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn unset_is_the_default() {
        assert_eq!(parse(&[]).unwrap(), Tuning::default());
        assert_eq!(parse(&[("GPUMAT_LU_PANEL", "  ")]).unwrap(), Tuning::default());
    }

    #[test]
    fn every_knob_parses() {
        let t = parse(&[
            ("GPUMAT_GRAPHS", "0"),
            ("GPUMAT_LU_PANEL", "Cluster"),
            ("GPUMAT_QR_PANEL", "Shared"),
            ("GPUMAT_QR_PANEL_ROWS", "256"),
            ("GPUMAT_SCALED_GRAM_NB", "48"),
            ("GPUMAT_SCALED_GRAM_KC", "100"),
            ("GPUMAT_SCALED_GRAM_STREAMS", "1"),
            ("GPUMAT_SPLIT", "tf32"),
            ("GPUMAT_SPLIT_KB", "512"),
            ("GPUMAT_SPLIT_LEAF", "256"),
            ("GPUMAT_SPLIT_RATIO", "0.75"),
            ("GPUMAT_FP64_PRODUCTS", "INT8:15"),
            ("GPUMAT_FP64_PRODUCTS_FROM", "0"),
            ("GPUMAT_SIDE_SMS", "100"),
        ])
        .unwrap();
        assert_eq!(t.split_ratio, Some(0.75));
        assert_eq!(t.fp64_products, Compute::Int8 { moduli: Some(15) });
        assert_eq!(t.fp64_products_from, 0);
        assert_eq!(t.side_sms, Some(100));
        let chosen = Tuning { fp64_products: Compute::Int8 { moduli: None }, ..Tuning::default() };
        assert_eq!(chosen.fp64_updates(16384), Compute::Native);
        assert_eq!(chosen.fp64_updates(16385), Compute::Int8 { moduli: None });
        assert_eq!(t.fp64_updates(100), Compute::Int8 { moduli: Some(15) });
        assert!(!t.graphs);
        assert_eq!(t.lu_panel, Some(LuPanel::Cluster));
        assert_eq!(t.qr_panel, Some(QrPanel::Shared));
        assert_eq!(t.qr_panel_rows, Some(256));
        assert_eq!(parse(&[("GPUMAT_QR_PANEL", "global")]).unwrap().qr_panel, Some(QrPanel::Global));
        assert_eq!(t.gram, GramTuning { nb: Some(48), kc: Some(100), streams: Some(1) });
        assert_eq!(t.split, SplitTuning { kind: Split::Tf32, kb: Some(512), leaf: Some(256) });
        for (value, panel) in [("reg", LuPanel::Register), ("ll", LuPanel::SharedMemory), ("grid", LuPanel::Grid)] {
            assert_eq!(parse(&[("GPUMAT_LU_PANEL", value)]).unwrap().lu_panel, Some(panel));
        }
    }

    #[test]
    fn an_invalid_value_names_the_variable() {
        for (name, value) in [
            ("GPUMAT_GRAPHS", "no"),
            ("GPUMAT_LU_PANEL", "fast"),
            ("GPUMAT_QR_PANEL", "cluster"),
            ("GPUMAT_SCALED_GRAM_NB", "0"),
            ("GPUMAT_SCALED_GRAM_KC", "-3"),
            ("GPUMAT_SCALED_GRAM_STREAMS", "3"),
            ("GPUMAT_SPLIT", "bf16"),
            ("GPUMAT_SPLIT_RATIO", "1.5"),
            ("GPUMAT_SPLIT_RATIO", "half"),
            ("GPUMAT_SPLIT_KB", "1e3"),
            ("GPUMAT_FP64_PRODUCTS", "int8:30"),
            ("GPUMAT_FP64_PRODUCTS", "fp16"),
            ("GPUMAT_FP64_PRODUCTS_FROM", "large"),
            ("GPUMAT_SIDE_SMS", "0"),
        ] {
            let e = parse(&[(name, value)]).unwrap_err();
            assert!(matches!(e, Error::InvalidEnvironment { variable, .. } if variable == name), "{name}={value}: {e}");
            let text = e.to_string();
            assert!(text.contains(name) && text.contains(value), "{text}");
        }
    }
}
