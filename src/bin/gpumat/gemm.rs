//! `gpumat gemm A.mtx B.mtx [-o C.mtx]`.

use std::path::PathBuf;
use std::time::Instant;

use gpumat::{Device, Result};

use crate::input::{read_matrix, write_matrix};

#[derive(clap::Args)]
pub struct Args {
    /// Left factor, a Matrix Market file.
    a: PathBuf,
    /// Right factor, a Matrix Market file.
    b: PathBuf,
    /// Where to write C (Matrix Market array); stdout when absent.
    #[arg(short, long, value_name = "C.mtx")]
    output: Option<PathBuf>,
}

pub fn run(dev: &Device, args: &Args) -> Result<()> {
    let a = read_matrix(dev, &args.a)?;
    let b = read_matrix(dev, &args.b)?;
    let start = Instant::now();
    let c = a.matmul(&b)?;
    dev.synchronize()?;
    let elapsed = start.elapsed();
    write_matrix(&c, args.output.as_ref())?;
    eprintln!(
        "gemm: {}×{} · {}×{} on {} in {:.3} ms",
        a.rows(),
        a.cols(),
        b.rows(),
        b.cols(),
        dev.short_name(),
        elapsed.as_secs_f64() * 1e3
    );
    Ok(())
}
