//! The CUDA C kernels of `kernels/*.cu`, embedded in the binary and compiled
//! by NVRTC for the device's architecture on first use.
//!
//! The device helpers that several files share live in headers,
//! `kernels/*.cuh`, embedded too and handed to NVRTC with every program, so
//! that `#include "common.cuh"` resolves to the embedded text and never to a
//! file on the user's disk.
//!
//! A compiled kernel file is cached twice: in the process (a map behind a
//! mutex) and on disk, under `$XDG_CACHE_HOME/gpumat/ptx` or
//! `~/.cache/gpumat/ptx`, one `<key>.ptx` file per (source, headers,
//! architecture, NVRTC version, options), where `<key>` is [`cache_key`] in hexadecimal.
//! The disk cache is best effort: a directory that cannot be created, a file
//! that cannot be written or a file that does not look like PTX for the
//! architecture is skipped, and the source is compiled again.
//!
//! NVRTC is loaded at run time; [`nvrtc_available`] says whether it can be,
//! without the panic that cudarc's loader gives when it cannot.

use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use cudarc::nvrtc::{Ptx, result, sys};

use crate::{Error, Result};

/// One embedded source file or header.
#[derive(Clone, Copy, Debug)]
pub struct Source {
    /// File name under `kernels/`, e.g. `"copy.cu"`; NVRTC's messages name
    /// it, and a source includes a header by it (`#include "common.cuh"`).
    pub name: &'static str,
    /// The CUDA C source.
    pub code: &'static str,
}

/// Every kernel file, embedded at build time.
pub const SOURCES: &[Source] = &[
    Source { name: "elementwise.cu", code: include_str!("../../../kernels/elementwise.cu") },
    Source { name: "copy.cu", code: include_str!("../../../kernels/copy.cu") },
    Source { name: "reduce.cu", code: include_str!("../../../kernels/reduce.cu") },
    Source { name: "potrf.cu", code: include_str!("../../../kernels/potrf.cu") },
    // LU: row interchanges, and the panel factorizations a file each.
    Source { name: "lu.cu", code: include_str!("../../../kernels/lu.cu") },
    Source { name: "lu_panel_block.cu", code: include_str!("../../../kernels/lu_panel_block.cu") },
    Source { name: "lu_panel_grid.cu", code: include_str!("../../../kernels/lu_panel_grid.cu") },
    Source { name: "lu_panel_ll.cu", code: include_str!("../../../kernels/lu_panel_ll.cu") },
    Source { name: "lu_panel_reg.cu", code: include_str!("../../../kernels/lu_panel_reg.cu") },
    Source { name: "lu_panel_cluster.cu", code: include_str!("../../../kernels/lu_panel_cluster.cu") },
    Source { name: "lu_panel_nopiv.cu", code: include_str!("../../../kernels/lu_panel_nopiv.cu") },
    // Random butterflies: LU without pivoting on the transformed matrix.
    Source { name: "butterfly.cu", code: include_str!("../../../kernels/butterfly.cu") },
    Source { name: "trsm.cu", code: include_str!("../../../kernels/trsm.cu") },
    Source { name: "trsv.cu", code: include_str!("../../../kernels/trsv.cu") },
    // Symmetric indefinite LDLᵀ: the panel and solves with D.
    Source { name: "ldlt.cu", code: include_str!("../../../kernels/ldlt.cu") },
    // Householder QR.
    Source { name: "qr.cu", code: include_str!("../../../kernels/qr.cu") },
    Source { name: "larfb.cu", code: include_str!("../../../kernels/larfb.cu") },
    // Mixed precision weighted least squares.
    Source { name: "split.cu", code: include_str!("../../../kernels/split.cu") },
    Source { name: "residual.cu", code: include_str!("../../../kernels/residual.cu") },
    // Aasen's factorization: the panel and the interchanges after it.
    Source { name: "aasen.cu", code: include_str!("../../../kernels/aasen.cu") },
    // Batched tridiagonal solves.
    Source { name: "tridiagonal.cu", code: include_str!("../../../kernels/tridiagonal.cu") },
    // The semi-implicit shallow-water scheme's per-step passes.
    Source { name: "shallow_water.cu", code: include_str!("../../../kernels/shallow_water.cu") },
    // Batches of small matrices: the steps of blocked LU and Cholesky.
    Source { name: "batch_lu.cu", code: include_str!("../../../kernels/batch_lu.cu") },
    Source { name: "batch_cholesky.cu", code: include_str!("../../../kernels/batch_cholesky.cu") },
    Source { name: "batch_trsm.cu", code: include_str!("../../../kernels/batch_trsm.cu") },
    // FP64 products from INT8 products (the Ozaki scheme II).
    Source { name: "ozaki.cu", code: include_str!("../../../kernels/ozaki.cu") },
];

/// Every header, embedded at build time and given to NVRTC with each source.
pub const HEADERS: &[Source] = &[
    // IEEE helpers, warp reductions, the grid-stride walk over a block.
    Source { name: "common.cuh", code: include_str!("../../../kernels/common.cuh") },
    // The pivot candidate and the grid barrier of the pivoting panels.
    Source { name: "pivot.cuh", code: include_str!("../../../kernels/pivot.cuh") },
    // Exchanges between blocks through L2 (the LL protocol) of the panels.
    Source { name: "ll.cuh", code: include_str!("../../../kernels/ll.cuh") },
    // What the LU kernels share; the register rows of two panel kernels.
    Source { name: "lu.cuh", code: include_str!("../../../kernels/lu.cuh") },
    Source { name: "lu_reg.cuh", code: include_str!("../../../kernels/lu_reg.cuh") },
    // Where the lower triangle of a symmetric matrix lies, as Triangle.
    Source { name: "triangle.cuh", code: include_str!("../../../kernels/triangle.cuh") },
    // Thread-block clusters: their barrier and shared memory.
    Source { name: "cluster.cuh", code: include_str!("../../../kernels/cluster.cuh") },
];

/// The options every kernel is compiled with, besides the architecture.
///
/// NVRTC optimizes fully by default (`-dopt on`). No `--use_fast_math`: the
/// results must be IEEE (no flush to zero, correctly rounded division and
/// square root); contraction of `a*b + c` into one FMA stays on, as in nvcc.
/// Line information costs nothing at run time and lets `ncu` and
/// `compute-sanitizer` point at source lines.
pub const OPTIONS: &[&str] = &["--std=c++17", "--generate-line-info"];

/// Whether libnvrtc can be loaded (never panics; probed once per process).
pub fn nvrtc_available() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to open the library by its candidate names.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// NVRTC's `(major, minor)` version, or `None` when libnvrtc cannot be loaded.
pub fn nvrtc_version() -> Option<(i32, i32)> {
    if !nvrtc_available() {
        return None;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present; nvrtcVersion writes two ints.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }.result().ok()?;
    Some((major, minor))
}

/// The key of a compiled file in the caches: 64-bit FNV-1a (offset basis
/// `0xcbf29ce484222325`, prime `0x100000001b3`, stable across Rust versions
/// and platforms) over a format tag, the source code, the name and code of
/// each header (NVRTC is given them all: [`HEADERS`]), the architecture, the
/// NVRTC version and [`OPTIONS`], each followed by a zero byte.
pub fn cache_key(code: &str, headers: &[Source], arch: &str, nvrtc_version: (i32, i32)) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes.iter().chain(&[0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    // Format 2: the headers joined the key.
    eat(b"gpumat-ptx-2");
    eat(code.as_bytes());
    for h in headers {
        eat(h.name.as_bytes());
        eat(h.code.as_bytes());
    }
    eat(arch.as_bytes());
    eat(&nvrtc_version.0.to_le_bytes());
    eat(&nvrtc_version.1.to_le_bytes());
    for o in OPTIONS {
        eat(o.as_bytes());
    }
    h
}

/// The disk cache directory: `$XDG_CACHE_HOME/gpumat/ptx` when that variable
/// is an absolute path, else `$HOME/.cache/gpumat/ptx`; `None` when neither is
/// set.
pub fn cache_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from) {
        Some(p) if p.is_absolute() => p,
        _ => PathBuf::from(std::env::var_os("HOME").filter(|h| !h.is_empty())?).join(".cache"),
    };
    Some(base.join("gpumat").join("ptx"))
}

/// Compiles `src` to PTX for `arch` (`"sm_90"`, from the device's compute
/// capability), through the in-process cache and the disk cache of
/// [`cache_dir`].
///
/// The result is the PTX text, as [`Ptx::from_src`] (so `to_src()` gives it
/// back). A failed compilation is [`Error::Device`] with the file name, the
/// architecture and NVRTC's full log.
pub fn compile(src: &Source, arch: &str) -> Result<Ptx> {
    compile_in(src, arch, cache_dir().as_deref())
}

/// [`compile`] with the disk cache in `dir` (`None`: memory cache only).
pub fn compile_in(src: &Source, arch: &str, dir: Option<&Path>) -> Result<Ptx> {
    let version = nvrtc_version().ok_or_else(|| {
        Error::Device(format!("cannot compile kernels/{} for {arch}: libnvrtc could not be loaded", src.name))
    })?;
    let key = cache_key(src.code, HEADERS, arch, version);

    static MEMORY: OnceLock<Mutex<HashMap<u64, String>>> = OnceLock::new();
    // The lock is held while compiling, so one source is never compiled
    // twice at once; a panic elsewhere does not spoil the map.
    let mut memory = MEMORY.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(ptx) = memory.get(&key) {
        return Ok(Ptx::from_src(ptx.clone()));
    }
    let file = dir.map(|d| d.join(format!("{key:016x}.ptx")));
    let cached = file.as_deref().and_then(|f| std::fs::read_to_string(f).ok()).filter(|p| looks_like_ptx(p, arch));
    let ptx = match cached {
        Some(ptx) => ptx,
        None => {
            let ptx = compile_uncached(src, arch)?.ptx;
            if let (Some(dir), Some(file)) = (dir, &file) {
                store(dir, file, &ptx);
            }
            ptx
        }
    };
    memory.insert(key, ptx.clone());
    Ok(Ptx::from_src(ptx))
}

/// The output of one NVRTC run.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The PTX text.
    pub ptx: String,
    /// NVRTC's log: empty when there were no warnings.
    pub log: String,
}

/// Compiles `src` for `arch` with [`OPTIONS`] and [`HEADERS`], bypassing
/// both caches, and keeps NVRTC's log (tests check that it has no warnings).
pub fn compile_uncached(src: &Source, arch: &str) -> Result<Compiled> {
    let fail = |what: String| Error::Device(format!("NVRTC could not compile kernels/{} for {arch}: {what}", src.name));
    if !nvrtc_available() {
        return Err(fail("libnvrtc could not be loaded".into()));
    }
    let c_strings = |s: &Source| match (CString::new(s.code), CString::new(s.name)) {
        (Ok(code), Ok(name)) => Ok((code, name)),
        _ => Err(fail(format!("{} contains a NUL byte", s.name))),
    };
    let (code, name) = c_strings(src)?;
    let headers = HEADERS.iter().map(c_strings).collect::<Result<Vec<_>>>()?;
    let header_code: Vec<*const c_char> = headers.iter().map(|(c, _)| c.as_ptr()).collect();
    let header_names: Vec<*const c_char> = headers.iter().map(|(_, n)| n.as_ptr()).collect();
    let mut prog = std::mem::MaybeUninit::<sys::nvrtcProgram>::uninit();
    // SAFETY: the library is present; each pointer is to a NUL-terminated
    // string that outlives the program, and both arrays have
    // `header_code.len()` entries. (cudarc's `result::create_program` passes
    // no headers.)
    let prog = unsafe {
        sys::nvrtcCreateProgram(
            prog.as_mut_ptr(),
            code.as_ptr(),
            name.as_ptr(),
            header_code.len() as i32,
            header_code.as_ptr(),
            header_names.as_ptr(),
        )
        .result()
        .map_err(|e| fail(format!("creating the program: {e}")))?;
        prog.assume_init()
    };
    let mut options: Vec<String> = OPTIONS.iter().map(|o| o.to_string()).collect();
    options.push(format!("--gpu-architecture={arch}"));
    // SAFETY: `prog` was created above and is destroyed only at the end;
    // `code`, `name` and `headers` outlive it.
    unsafe {
        let compiled = result::compile_program(prog, &options);
        let log = result::get_program_log(prog).map(|l| text(&l)).unwrap_or_default();
        let out = match compiled {
            Ok(()) => match result::get_ptx(prog) {
                Ok(ptx) => Ok(Compiled { ptx: text(&ptx), log }),
                Err(e) => Err(fail(format!("reading the PTX: {e}"))),
            },
            Err(e) => Err(fail(format!("{e}\n{}", log.trim_end()))),
        };
        let _ = result::destroy_program(prog);
        out
    }
}

/// A NUL-terminated buffer from NVRTC as text.
fn text(buf: &[c_char]) -> String {
    // SAFETY: c_char and u8 have the same size and alignment.
    let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), buf.len()) };
    match CStr::from_bytes_until_nul(bytes) {
        Ok(s) => s.to_string_lossy().into_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// Whether a cached file is plausibly complete PTX for `arch`: the driver
/// reads it as a C string, so it must hold no NUL.
fn looks_like_ptx(ptx: &str, arch: &str) -> bool {
    !ptx.contains('\0')
        && ptx.contains(".version ")
        && ptx.lines().any(|l| l.trim_start().strip_prefix(".target ").is_some_and(|t| t.starts_with(arch)))
        && ptx.contains(".entry ")
}

/// Writes `ptx` to `file` in `dir` through a temporary file and a rename, so
/// a reader never sees half a file. Errors are ignored.
fn store(dir: &Path, file: &Path, ptx: &str) {
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = file.with_extension(format!("ptx.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, ptx).and_then(|()| std::fs::rename(&tmp, file)).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Largest grid dimension the backend uses (the kernels stride over the rest).
const MAX_GRID: usize = 65_535;

/// Block shape of `copy_block_*`.
pub const COPY_BLOCK_DIM: (u32, u32, u32) = (32, 8, 1);

/// The grid of `copy_block_*` that gives each block one 32 × 32 tile of a
/// `rows × cols` source block with mask `tri` (0 all, 1 lower, 2 upper):
/// for a triangle the tiles are folded so that no block is launched for a
/// tile outside the mask. Any grid is correct; this one is the fastest. Each
/// dimension is at least 1 and at most 65535.
pub fn copy_block_grid(rows: usize, cols: usize, tri: i32) -> (u32, u32, u32) {
    let (r, c) = (rows.div_ceil(32), cols.div_ceil(32));
    let (x, y) = if tri == 0 {
        (c, r)
    } else {
        // Must match the kernel: m lines of tiles, l tiles along the longest.
        let m = r.min(c);
        let l = if tri == 1 { r } else { c };
        (m.div_ceil(2), if m >= 2 { 2 * l - m + 1 } else { l })
    };
    (x.clamp(1, MAX_GRID) as u32, y.clamp(1, MAX_GRID) as u32, 1)
}

/// Blocks a reduction grid aims at: two waves of 8 blocks on each of the
/// 132 SMs of an H100, enough for any current GPU.
const TARGET_BLOCKS: usize = 2048;

/// The grid of `col_abs_sums_*` (256 threads per block) for a `rows × cols`
/// block: one block per column, and the rows split into `y` chunks when there
/// are too few columns to fill the GPU. The kernel writes `cols · y` partial
/// sums, `out[j + c·cols]` for chunk `c`; the sum of column `j` is the sum of
/// its `y` partials.
pub fn col_abs_sums_grid(rows: usize, cols: usize) -> (u32, u32, u32) {
    let x = cols.clamp(1, MAX_GRID);
    // A chunk is worth a block when each thread gets a full batch of loads.
    let y = TARGET_BLOCKS.div_ceil(x).clamp(1, (rows / 2048).clamp(1, MAX_GRID));
    (x as u32, y as u32, 1)
}

/// The grid of `row_abs_sums_*` (256 threads per block) for a `rows × cols`
/// block: one block per 32 rows, and the columns split into `y` chunks when
/// there are too few rows to fill the GPU. The kernel writes `rows · y`
/// partial sums, `out[i + c·rows]` for chunk `c`; the sum of row `i` is the
/// sum of its `y` partials.
pub fn row_abs_sums_grid(rows: usize, cols: usize) -> (u32, u32, u32) {
    let x = rows.div_ceil(32).clamp(1, MAX_GRID);
    let y = TARGET_BLOCKS.div_ceil(x).clamp(1, (cols / 64).clamp(1, MAX_GRID));
    (x as u32, y as u32, 1)
}
