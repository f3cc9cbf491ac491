//! `gpumat info`: which device, and why.

use gpumat::{Device, Result};

pub fn run(device: Result<Device>) -> Result<()> {
    let dev = device?;
    println!("gpumat {}", env!("CARGO_PKG_VERSION"));
    println!("device:      {}", dev.describe());
    if let Some(why) = dev.fallback_reason() {
        println!("CPU because: {why}");
    }
    if dev.tuning() != gpumat::backend::Tuning::default() {
        println!("tuning:      {:?}", dev.tuning());
    }
    println!("CPU threads: {} (set RAYON_NUM_THREADS to change)", dev.cpu_threads());
    Ok(())
}
