//! Batched primitives on the CPU: the single-matrix primitive on every
//! member, in parallel over members (each on one thread) when there are
//! enough of them to keep the threads busy, else one member after another
//! with the primitive's own parallelism.

use rayon::prelude::*;

use super::Cpu;
use crate::Result;

impl Cpu {
    pub(super) fn for_each_member(&self, count: usize, f: impl Fn(&Cpu, usize) -> Result<()> + Sync) -> Result<()> {
        if count >= 2 * self.threads() {
            let one = Cpu::sequential();
            (0..count).into_par_iter().try_for_each(|s| f(&one, s))
        } else {
            (0..count).try_for_each(|s| f(self, s))
        }
    }
}
