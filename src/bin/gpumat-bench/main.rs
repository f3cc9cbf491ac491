//! `gpumat-bench`: gpumat side by side with the vendor's routines (cuBLAS,
//! cuSOLVER), on the same inputs in one process, as `BENCHMARKS.md`
//! prescribes: warm, runs interleaved, median of `--reps`; the ratio is
//! vendor time / gpumat time.
//!
//! A developer's instrument, apart from the `gpumat` command line, which
//! never carries or calls a vendor solver. Each suite is one module that
//! uses the harness and never another suite.

mod batched;
mod batched_dense;
mod capacity;
mod cholesky;
mod dist;
mod emu;
mod gram;
mod harness;
mod ldlt;
mod ldlt_capacity;
mod ldlt_trace;
mod lp;
mod lu;
mod lu_trace;
mod mixed;
mod mixed_trace;
mod primitives;
mod qr;
mod split;
mod swe;
mod trace;
mod wls;
mod wls_trace;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use gpumat::api::device::AnyBackend;
use gpumat::backend::Backend;
use gpumat::{Device, Error, Result};

use harness::Settings;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Suite {
    /// gemm, syrk, RFP pack/unpack, transfers.
    Primitives,
    /// Cholesky in full and RFP storage against cuSOLVER dpotrf: time,
    /// accuracy and peak memory.
    Cholesky,
    /// The largest order whose FP64 Cholesky fits on the device, in RFP
    /// storage against cuSOLVER dpotrf in full storage (`--sizes` unused).
    Capacity,
    /// Where a Cholesky's time goes: enqueue against wall time, per-call
    /// costs of its primitives, one factorization each in a profiler range.
    Trace,
    /// Householder QR and least squares on square and tall shapes
    /// (`--shapes`) against cuSOLVER dgeqrf (+ dormqr + cuBLAS dtrsm).
    Qr,
    /// LU with partial pivoting against cuSOLVER dgetrf.
    Lu,
    /// Where an LU's time goes: the whole, its panels alone and beside a
    /// trailing gemm, and the cost per call of its primitives, with the
    /// host's time to enqueue each.
    LuTrace,
    /// Symmetric indefinite LDLᵀ (Bunch–Kaufman) in full and RFP storage
    /// against cuSOLVER dsytrf + dsytrs, and unpivoted LDLᵀ against
    /// Cholesky, in FP64 and FP32: time, fraction of the GEMM rate, backward
    /// errors, peak memory.
    Ldlt,
    /// The largest order whose FP64 LDLᵀ fits on the device, in RFP storage
    /// against cuSOLVER dsytrf in full storage (`--sizes` unused).
    LdltCapacity,
    /// Where Aasen's LDLᵀ spends its time: the whole, one panel's column
    /// recurrence, the interchanges, the trailing update at several depths.
    LdltTrace,
    /// A·D²·Aᵀ for A of m × 2m, full and RFP storage, against cuBLAS dgmm
    /// + dsyrk and dgmm + dgemm: time, extra memory, difference.
    Gram,
    /// Mixed-precision weighted least squares (m × 2m, f32 Cholesky refined
    /// to FP64) against cuBLAS dgmm + dsyrk and cuSOLVER dpotrf + dpotrs.
    Wls,
    /// Where a weighted least-squares solve's time goes: the cost per call
    /// of each of its parts at `m × 2m`.
    WlsTrace,
    /// Batched tridiagonal solves against cuSPARSE gtsv2StridedBatch and
    /// gtsvInterleavedBatch, FP64 and FP32, at four (order, count) shapes;
    /// batched LU and Cholesky + solve against cuBLAS getrfBatched +
    /// getrsBatched and cuSOLVER potrfBatched + potrsBatched at n = 16 …
    /// 512, 1 GB of members each; the CPU+GPU split against the CPU and
    /// the GPU alone (`--sizes` unused): time, throughput, backward errors.
    Batched,
    /// The CPU+GPU split of `batched` alone: LU and tridiagonal batches on
    /// the CPU, the GPU and both.
    Split,
    /// The dense half of `batched` alone, at the orders `--sizes` names
    /// (those up to 512; the six of `batched` when none is).
    BatchedDense,
    /// The tridiagonal half of `batched` alone.
    Tridiagonal,
    /// The shallow-water model at n × n cells for each size (run with
    /// `--sizes 1024,4096,8192`): cells·steps/s on the GPU, the CPU and
    /// split, and the fraction of the memory bandwidth reached.
    Swe,
    /// FP64-accurate solves from low-precision LU and Cholesky (FP16, split
    /// FP16, TF32 updates; GMRES-IR) against cuSOLVER dgetrf + dgetrs and
    /// dpotrf + dpotrs, with cuSOLVER's mixed-precision gesv beside them:
    /// time, backward errors, iterations, the time split.
    Mixed,
    /// Where the FP16-updated Cholesky of a mixed-precision solve spends
    /// its time: block sizes, the panels' precision, the panels alone, and
    /// the refinement's triangular solves in FP64 and FP32.
    MixedTrace,
    /// Dense random LPs against HiGHS; sizes are rows (columns are 4×);
    /// runs on the CPU too.
    Lp,
    /// Cholesky and LU over the GPUs of `GPUMAT_DEVICES` against
    /// cusolverMg: weak scaling from `--sizes` on one GPU, strong scaling
    /// at `--strong`.
    Dist,
    /// FP64 products from INT8 products (the Ozaki scheme II, 13 to 16
    /// moduli and the count chosen per product) against cuBLAS dgemm at
    /// n³ for each size (run with `--sizes 4096,8192,16384`) and dsyrk at
    /// 8192 × 16384: time, TFLOP/s equivalent, errors relative to |A|·|B|.
    Emu,
    /// The `dsyrk` and `A·D²·Aᵀ` (8192 × 16384) rows of `emu` alone.
    EmuGram,
}

/// gpumat side by side with cuBLAS and cuSOLVER on the same inputs (needs
/// a GPU); writes JSON and markdown under bench/results/.
#[derive(Parser)]
#[command(name = "gpumat-bench", version, about, long_about = None)]
struct Cli {
    /// What to measure.
    #[arg(long, value_enum, default_value_t = Suite::Primitives)]
    suite: Suite,
    /// Matrix orders to run.
    #[arg(long, value_delimiter = ',', default_values_t = [4096, 8192])]
    sizes: Vec<usize>,
    /// Timed runs of each routine (the median is reported).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Folder for the JSON and markdown results.
    #[arg(long, default_value = "bench/results")]
    out: PathBuf,
    /// `--suite qr`: the `MxN` shapes to factor.
    #[arg(long, value_delimiter = ',', default_values_t = qr::SHAPES.map(|(m, n)| format!("{m}x{n}")))]
    shapes: Vec<String>,
    /// `--suite qr`: the block sizes to try (the fastest also solves; by
    /// default the library's). `--suite ldlt`: panel widths of the pivoted
    /// factorization to time beside the default.
    #[arg(long, value_delimiter = ',')]
    block_sizes: Vec<usize>,
    /// `--suite dist`: orders for strong scaling (the same matrix on 1, 2,
    /// 4… GPUs).
    #[arg(long, value_delimiter = ',')]
    strong: Vec<usize>,
    /// `--suite dist`: instead, the largest order the Cholesky factors on
    /// the GPUs in full and in lower-block storage.
    #[arg(long)]
    capacity: bool,
    /// `--suite dist`: the factorizations to scale.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [dist::Routine::Cholesky, dist::Routine::Lu])]
    routines: Vec<dist::Routine>,
    /// `--suite dist`: the Cholesky's storages (`full`, `lower`: the blocks
    /// on and below the diagonal alone).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [dist::StorageArg::Full])]
    storage: Vec<dist::StorageArg>,
    /// `--suite dist`: the block order (default: 1024 for Cholesky, 512 for LU).
    #[arg(long)]
    nb: Option<usize>,
    /// `--suite dist`: gpumat alone, without cusolverMg beside it.
    #[arg(long)]
    no_vendor: bool,
    /// `--suite lp`: HiGHS runs on problems of at most this many rows.
    #[arg(long, default_value_t = 1024)]
    highs_max_rows: usize,
    /// `--suite lp`: HiGHS's threads (0: its default).
    #[arg(long, default_value_t = 0)]
    highs_threads: usize,
    /// `--suite lp`: seconds each HiGHS solver may take.
    #[arg(long, default_value_t = 600.0)]
    highs_time_limit: f64,
}

fn run(cli: &Cli) -> Result<()> {
    let dev = Device::auto()?;
    if cli.suite == Suite::Lp {
        let highs =
            lp::Highs { max_rows: cli.highs_max_rows, threads: cli.highs_threads, time_limit: cli.highs_time_limit };
        let rows = lp::run(&dev, &cli.sizes, cli.reps, &highs)?;
        let (description, name) = match dev.backend() {
            AnyBackend::Cuda(cuda) => (cuda.name(), cuda.gpu_name().to_string()),
            AnyBackend::Cpu(_) => (dev.describe(), "cpu".to_string()),
        };
        return harness::results::write(&description, &name, "lp", cli.reps, &cli.out, &rows);
    }
    let AnyBackend::Cuda(cuda) = dev.backend() else {
        return Err(Error::InvalidArgument(format!(
            "the benchmarks compare with the vendor's GPU routines and need a CUDA device; this one is {}",
            dev.describe()
        )));
    };
    let settings = Settings { sizes: cli.sizes.clone(), reps: cli.reps };
    let rows = match cli.suite {
        Suite::Primitives => primitives::run(cuda, &settings)?,
        Suite::Cholesky => cholesky::run(cuda, &settings)?,
        Suite::Capacity => capacity::run(cuda)?,
        Suite::Trace => trace::run(cuda, &settings)?,
        Suite::Qr => qr::run(cuda, &settings, &parse_shapes(&cli.shapes)?, &cli.block_sizes)?,
        Suite::Lu => lu::run(cuda, &settings)?,
        Suite::Ldlt => ldlt::run(cuda, &settings, &cli.block_sizes)?,
        Suite::LdltCapacity => ldlt_capacity::run(cuda)?,
        Suite::LdltTrace => ldlt_trace::run(cuda, &settings)?,
        Suite::LuTrace => lu_trace::run(cuda, &settings)?,
        Suite::Gram => gram::run(cuda, &settings)?,
        Suite::Wls => wls::run(cuda, &settings)?,
        Suite::WlsTrace => wls_trace::run(cuda, &settings)?,
        Suite::Batched => {
            let mut rows = batched::run(cuda, &settings)?;
            rows.extend(batched_dense::run(cuda, &batched_dense::ORDERS, settings.reps)?);
            rows.extend(split::run(settings.reps)?);
            rows
        }
        Suite::Split => split::run(settings.reps)?,
        Suite::Tridiagonal => batched::run(cuda, &settings)?,
        Suite::Swe => swe::run(cuda, &settings)?,
        Suite::Mixed => mixed::run(cuda, &settings)?,
        Suite::MixedTrace => mixed_trace::run(cuda, &settings)?,
        Suite::Dist => {
            let what = dist::What {
                routines: cli.routines.clone(),
                strong: cli.strong.clone(),
                storages: cli.storage.iter().map(|s| s.storage()).collect(),
                nb: cli.nb,
                vendor: !cli.no_vendor,
            };
            if cli.capacity { dist::capacity()? } else { dist::run(&settings, &what)? }
        }
        Suite::Emu => emu::run(cuda, &settings)?,
        Suite::EmuGram => emu::run_gram(cuda, &settings)?,
        Suite::Lp => unreachable!("the LP suite runs on any device and returned above"),
        Suite::BatchedDense => {
            let orders: Vec<usize> = settings.sizes.iter().copied().filter(|&n| n <= 512).collect();
            let orders = if orders.is_empty() { batched_dense::ORDERS.to_vec() } else { orders };
            batched_dense::run(cuda, &orders, settings.reps)?
        }
    };
    // The files' names keep the history's spelling: `lutrace`, `wlstrace`
    // (and `ldltcapacity`).
    let name = format!("{:?}", cli.suite).to_lowercase();
    // A capacity search times each order once.
    let once = matches!(cli.suite, Suite::Capacity | Suite::LdltCapacity) || (cli.suite == Suite::Dist && cli.capacity);
    let reps = if once { 1 } else { cli.reps };
    harness::results::write(&cuda.name(), cuda.gpu_name(), &name, reps, &cli.out, &rows)
}

/// `MxN` strings as `(m, n)`.
fn parse_shapes(shapes: &[String]) -> Result<Vec<(usize, usize)>> {
    shapes
        .iter()
        .map(|s| {
            let (m, n) = s.split_once(['x', '×']).unwrap_or((s, ""));
            match (m.trim().parse(), n.trim().parse()) {
                (Ok(m), Ok(n)) => Ok((m, n)),
                _ => Err(Error::InvalidArgument(format!("--shapes: {s:?} is not MxN (e.g. 8192x1024)"))),
            }
        })
        .collect()
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.suite == Suite::Dist {
        // SAFETY: no other thread has started, and CUDA is not yet loaded.
        unsafe { gpumat::dist::load_kernels_eagerly() };
    }
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gpumat-bench: error: {e}");
            ExitCode::FAILURE
        }
    }
}
