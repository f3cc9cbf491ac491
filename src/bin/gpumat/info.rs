//! `gpumat info`: which device, and why.

use gpumat::{Device, Result};

use crate::stdout::outln;

pub fn run(dev: &Device) -> Result<()> {
    outln!("gpumat {}", env!("CARGO_PKG_VERSION"))?;
    outln!("device:      {}", dev.short_name())?;
    if let Some(why) = dev.fallback_reason() {
        outln!("CPU because: {why}")?;
    }
    if dev.tuning() != gpumat::backend::Tuning::default() {
        outln!("tuning:      {:?}", dev.tuning())?;
    }
    outln!("CPU threads: {} (set RAYON_NUM_THREADS to change)", dev.cpu_threads())?;
    Ok(())
}
