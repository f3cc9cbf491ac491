//! Host memory: how much a new allocation may take, and the check that a
//! dense size fits before anything is allocated. Linux overcommits, so an
//! allocation larger than the machine often succeeds and the process is
//! killed later, when the pages are touched; sizes are therefore checked
//! against what is available first.

use crate::{Error, Result};

/// Bytes a new allocation may take: the smallest of the kernel's
/// `MemAvailable`, the room left under the process's cgroup (v2) memory
/// limit and under its address-space limit (`ulimit -v`). `usize::MAX` where
/// none of them can be read (not Linux).
pub fn available_memory() -> usize {
    [mem_available(), cgroup_room(), address_space_room()].into_iter().flatten().min().unwrap_or(usize::MAX)
}

/// Bytes of a `rows × cols` array of `size`-byte entries; `None` on overflow.
pub fn matrix_bytes(rows: usize, cols: usize, size: usize) -> Option<usize> {
    rows.checked_mul(cols)?.checked_mul(size)
}

/// `Ok` if `needed` bytes (`None`: the size overflowed) fit in the
/// [`available_memory`]; else [`Error::OutOfHostMemory`] for `what`.
pub fn check_fits(what: impl FnOnce() -> String, needed: Option<usize>) -> Result<()> {
    let needed = needed.unwrap_or(usize::MAX);
    let available = available_memory();
    if needed <= available { Ok(()) } else { Err(Error::OutOfHostMemory { what: what(), needed, available }) }
}

fn mem_available() -> Option<usize> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    kib_field(&meminfo, "MemAvailable:")
}

/// `field`'s value in KiB, as bytes, from a `/proc` file of `name: value kB`.
fn kib_field(text: &str, field: &str) -> Option<usize> {
    let line = text.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse::<usize>().ok()?.checked_mul(1024)
}

/// `memory.max − memory.current` of the process's cgroup (v2); `None` when
/// unlimited or unreadable.
fn cgroup_room() -> Option<usize> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cgroups.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok()?.trim().parse::<usize>().ok();
    Some(read("memory.max")?.saturating_sub(read("memory.current")?))
}

/// The soft address-space limit less the process's virtual size; `None`
/// when unlimited.
fn address_space_room() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max address space"))?;
    let limit = line["Max address space".len()..].split_whitespace().next()?.parse::<usize>().ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    Some(limit.saturating_sub(kib_field(&status, "VmSize:")?))
}
