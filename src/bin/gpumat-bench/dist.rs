//! `--suite dist`: Cholesky and LU of one matrix over the GPUs of the
//! machine (`GPUMAT_DEVICES`, default all), side by side with cusolverMg
//! (`cusolverMgPotrf`, `cusolverMgGetrf`) on the same matrices in the same
//! layout (a 1 × G grid, which is all cusolverMg takes): weak scaling from
//! `--sizes` on one GPU (`n³` growing with the GPUs; `--sizes 0` for
//! none), strong scaling at `--strong`. Each GPU generates its own blocks
//! (`DistMatrix::random`), so no host holds or computes the matrix; the
//! backward error of a solve with each side's factor is measured on the
//! host against the same counter-based generator.

use std::ffi::c_void;
use std::time::Instant;

use cudarc::cusolvermg::{result as mg_result, safe as mg, sys as mgsys};
use faer::Mat;
use gpumat::backend::cuda::{Cuda, CudaBuffer};
use gpumat::backend::{Backend, DeviceBuffer, Tuning, random};
use gpumat::dist::{
    Cluster, DistMatrix, DistParams, Grid, Nccl, Storage, cholesky, cholesky_solve, devices_from_env, lu, lu_solve,
};
use gpumat::{DeviceLibrary, Error, Result};
use rayon::prelude::*;
use serde_json::{Value, json};

use crate::harness::Settings;
use crate::harness::capacity::is_out_of_memory;
use crate::harness::results::record;
use crate::harness::timing::median;

/// `--storage` on the command line.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum StorageArg {
    Full,
    Lower,
}

impl StorageArg {
    pub fn storage(self) -> Storage {
        match self {
            StorageArg::Full => Storage::Full,
            StorageArg::Lower => Storage::Lower,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Routine {
    Cholesky,
    Lu,
}

impl Routine {
    fn name(self) -> &'static str {
        match self {
            Routine::Cholesky => "cholesky",
            Routine::Lu => "lu",
        }
    }

    /// Block order of the distributed factorization and of cusolverMg's
    /// tiles: Cholesky's panels are short on the critical path and its
    /// wider blocks halve the steps; LU's panels, with their pivot search,
    /// are long, and narrower blocks keep them short.
    fn block_size(self) -> usize {
        match self {
            Routine::Cholesky => 1024,
            Routine::Lu => 512,
        }
    }

    fn flops(self, n: usize) -> f64 {
        let n = n as f64;
        match self {
            Routine::Cholesky => n * n * n / 3.0,
            Routine::Lu => 2.0 * n * n * n / 3.0,
        }
    }

    /// Entry `(i, j)` of the test matrix of order `n`, as the GPUs
    /// generate it: uniform in [−1, 1) ([`random::uniform`]); symmetric
    /// with `n` on the diagonal (strictly diagonally dominant, so positive
    /// definite) for Cholesky.
    fn entry(self, n: usize, i: usize, j: usize) -> f64 {
        let key = random::key(SEED);
        match self {
            Routine::Cholesky if i == j => n as f64,
            Routine::Cholesky => random::symmetric(key, i, j),
            Routine::Lu => random::uniform(key, i, j),
        }
    }
}

/// Every test matrix is generated from this seed.
const SEED: u64 = 2026;

/// cusolverMg over the cluster's GPUs, with its workspace.
struct Mg {
    handle: mg::MgHandle,
    /// The matrix's descriptor (the safe wrapper keeps its pointer private).
    desc: mgsys::cudaLibMgMatrixDesc_t,
    _grid: mg::Grid,
    work: Vec<CudaBuffer<f64>>,
    ipiv: Vec<CudaBuffer<i32>>,
}

fn mg_status(op: &str, s: mgsys::cusolverStatus_t) -> Result<()> {
    if s == mgsys::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(Error::device_call(DeviceLibrary::Cusolver, op, s))
    }
}

impl Mg {
    fn new(cluster: &Cluster<Cuda, Nccl>, n: usize, nb: usize) -> Result<Self> {
        // SAFETY: only probes whether the library can be loaded.
        if !unsafe { mgsys::is_culib_present() } {
            return Err(Error::Device("libcusolverMg could not be loaded".into()));
        }
        let devices: Vec<i32> = cluster.ranks().iter().map(|r| r.be.context().ordinal() as i32).collect();
        enable_peer_access(cluster)?;
        let mg_err =
            |op: &'static str| move |e: mg::CusolverMgError| Error::device_call(DeviceLibrary::Cusolver, op, e.0);
        let handle = mg::MgHandle::new().map_err(mg_err("cusolverMgCreate"))?;
        handle.device_select(&devices).map_err(mg_err("cusolverMgDeviceSelect"))?;
        let grid = mg::Grid::new(&devices, mgsys::cusolverMgGridMapping_t::CUDALIBMG_GRID_MAPPING_COL_MAJOR)
            .map_err(mg_err("cusolverMgCreateDeviceGrid"))?;
        let (n64, nb64) = (n as i64, nb as i64);
        // SAFETY: `grid` outlives the descriptor (both in `Mg`, the
        // descriptor destroyed first).
        let desc = unsafe {
            mg_result::mg_create_matrix_desc(n64, n64, n64, nb64, mgsys::cudaDataType::CUDA_R_64F, grid.cu())
        }
        .map_err(mg_err("cusolverMgCreateMatrixDesc"))?;
        Ok(Mg { handle, desc, _grid: grid, work: vec![], ipiv: vec![] })
    }

    /// Makes each GPU's workspace at least `lwork` entries.
    fn workspace(&mut self, cluster: &Cluster<Cuda, Nccl>, lwork: i64, cols: &[usize]) -> Result<Vec<*mut c_void>> {
        let lwork = usize::try_from(lwork).unwrap_or(0).max(1);
        if self.work.first().is_none_or(|w| w.len() < lwork) {
            self.work.clear();
            for rank in cluster.ranks() {
                rank.be.enter()?;
                self.work.push(rank.be.alloc::<f64>(lwork)?);
            }
        }
        if self.ipiv.len() != cols.len() {
            self.ipiv =
                cluster.ranks().iter().zip(cols).map(|(r, &c)| r.be.alloc::<i32>(c.max(1))).collect::<Result<_>>()?;
        }
        Ok(self.work.iter().map(|w| w.id() as *mut c_void).collect())
    }

    /// `cusolverMgPotrf` (lower) or `cusolverMgGetrf` on `a`, in place;
    /// returns the global pivots of `getrf`.
    fn factor(
        &mut self,
        cluster: &Cluster<Cuda, Nccl>,
        routine: Routine,
        a: &mut DistMatrix<Cuda, f64>,
    ) -> Result<Vec<i32>> {
        let n = a.nrows() as i32;
        let (_, cols) = a.layout();
        let counts: Vec<usize> = (0..cluster.ranks().len()).map(|d| cols.local_len(d)).collect();
        let mut ptrs: Vec<*mut c_void> = a.local_arrays().iter().map(|b| b.id() as *mut c_void).collect();
        let (h, desc) = (self.handle.cu(), self.desc);
        let r64 = mgsys::cudaDataType::CUDA_R_64F;
        let lower = mgsys::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER;
        let mut lwork = 0i64;
        let mut info = 0i32;
        // SAFETY: `ptrs` holds each GPU's array of the 1 × G layout that
        // `desc` describes; workspaces and pivots are allocated to the sizes
        // cusolverMg asks for.
        unsafe {
            match routine {
                Routine::Cholesky => {
                    mg_status(
                        "cusolverMgPotrf_bufferSize",
                        mgsys::cusolverMgPotrf_bufferSize(h, lower, n, ptrs.as_mut_ptr(), 1, 1, desc, r64, &mut lwork),
                    )?;
                    let mut work = self.workspace(cluster, lwork, &counts)?;
                    mg_status(
                        "cusolverMgPotrf",
                        mgsys::cusolverMgPotrf(
                            h,
                            lower,
                            n,
                            ptrs.as_mut_ptr(),
                            1,
                            1,
                            desc,
                            r64,
                            work.as_mut_ptr(),
                            lwork,
                            &mut info,
                        ),
                    )?;
                }
                Routine::Lu => {
                    let mut ipiv: Vec<*mut i32> = self.ipiv.iter().map(|p| p.id() as *mut i32).collect();
                    if ipiv.len() != counts.len() {
                        self.workspace(cluster, 1, &counts)?;
                        ipiv = self.ipiv.iter().map(|p| p.id() as *mut i32).collect();
                    }
                    mg_status(
                        "cusolverMgGetrf_bufferSize",
                        mgsys::cusolverMgGetrf_bufferSize(
                            h,
                            n,
                            n,
                            ptrs.as_mut_ptr(),
                            1,
                            1,
                            desc,
                            ipiv.as_mut_ptr(),
                            r64,
                            &mut lwork,
                        ),
                    )?;
                    let mut work = self.workspace(cluster, lwork, &counts)?;
                    mg_status(
                        "cusolverMgGetrf",
                        mgsys::cusolverMgGetrf(
                            h,
                            n,
                            n,
                            ptrs.as_mut_ptr(),
                            1,
                            1,
                            desc,
                            ipiv.as_mut_ptr(),
                            r64,
                            work.as_mut_ptr(),
                            lwork,
                            &mut info,
                        ),
                    )?;
                }
            }
        }
        for rank in cluster.ranks() {
            rank.be.context().synchronize().map_err(|e| Error::Device(format!("after cusolverMg: {e:?}")))?;
        }
        if info != 0 {
            return Err(Error::Device(format!("cusolverMg {} returned info = {info}", routine.name())));
        }
        if routine == Routine::Cholesky {
            return Ok(vec![]);
        }
        // The pivots lie like the columns: global entry j on the GPU of
        // column j, at its local column.
        let mut global = vec![0i32; a.nrows()];
        for (d, (rank, p)) in cluster.ranks().iter().zip(&self.ipiv).enumerate() {
            let mut host = vec![0i32; p.len()];
            rank.be.download(p, &mut host)?;
            for (l, &v) in host.iter().take(counts[d]).enumerate() {
                global[cols.to_global(d, l)] = v;
            }
        }
        Ok(global)
    }
}

impl Drop for Mg {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once.
        let _ = unsafe { mg_result::mg_destroy_matrix_desc(self.desc) };
    }
}

/// Lets each GPU of the cluster address the others' memory, as cusolverMg
/// needs: peer access between the contexts, and access to each GPU's
/// default memory pool, where gpumat's buffers come from
/// (`cuMemAllocAsync`), for the others.
fn enable_peer_access(cluster: &Cluster<Cuda, Nccl>) -> Result<()> {
    use cudarc::driver::sys;
    let check = |op: &str, r: sys::CUresult| {
        if r == sys::CUresult::CUDA_SUCCESS || r == sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
            Ok(())
        } else {
            Err(Error::device_call(DeviceLibrary::Driver, op, r))
        }
    };
    for a in cluster.ranks() {
        a.be.enter()?;
        let mut pool = std::ptr::null_mut();
        // SAFETY: a live device; `pool` receives its default pool.
        check("reading the default memory pool", unsafe {
            sys::cuDeviceGetDefaultMemPool(&mut pool, a.be.context().cu_device())
        })?;
        for b in cluster.ranks() {
            if std::ptr::eq(a, b) {
                continue;
            }
            // SAFETY: both contexts are live primary contexts.
            check("enabling peer access", unsafe { sys::cuCtxEnablePeerAccess(b.be.context().cu_ctx(), 0) })?;
            let access = sys::CUmemAccessDesc {
                location: sys::CUmemLocation {
                    type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                    id: b.be.context().ordinal() as i32,
                },
                flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            // SAFETY: one access descriptor for a live pool.
            check("opening a memory pool to a peer", unsafe { sys::cuMemPoolSetAccess(pool, &access, 1) })?;
        }
    }
    Ok(())
}

/// The test matrix of `routine` in `storage` (`Lower` for Cholesky
/// alone) in blocks of `nb`, generated on the GPUs; returns once they
/// have written it, so that no timing includes it.
fn generate(
    cluster: &Cluster<Cuda, Nccl>,
    routine: Routine,
    n: usize,
    nb: usize,
    storage: Storage,
) -> Result<DistMatrix<Cuda, f64>> {
    let a = match routine {
        Routine::Cholesky => DistMatrix::random_symmetric(cluster, n, nb, SEED, n as f64, storage)?,
        Routine::Lu => DistMatrix::random(cluster, (n, n), nb, SEED)?,
    };
    cluster.ranks().iter().try_for_each(|r| r.be.synchronize())?;
    Ok(a)
}

/// `‖b − A·x‖_∞ / (‖A‖_∞·‖x‖_∞ + ‖b‖_∞)` of a solve with the factor in
/// `a`, `b = A·z` for a random `z`, `A` from the generator.
fn solve_backward_error(
    cluster: &Cluster<Cuda, Nccl>,
    routine: Routine,
    a: &DistMatrix<Cuda, f64>,
    ipiv: &[i32],
) -> Result<f64> {
    let n = a.nrows();
    let z: Vec<f64> = (0..n).map(|i| routine.entry(n, i, n + 1).abs() + 0.5).collect();
    let times = |x: &[f64]| -> (Vec<f64>, f64) {
        let rows: Vec<(f64, f64)> = (0..n)
            .into_par_iter()
            .map(|i| {
                (0..n).fold((0.0, 0.0), |(s, r), j| {
                    let e = routine.entry(n, i, j);
                    (s + e * x[j], r + e.abs())
                })
            })
            .collect();
        (rows.iter().map(|r| r.0).collect(), rows.iter().map(|r| r.1).fold(0.0, f64::max))
    };
    let (b, _) = times(&z);
    let bm = Mat::from_fn(n, 1, |i, _| b[i]);
    let x = match routine {
        Routine::Cholesky => cholesky_solve(cluster, a, bm.as_ref())?,
        Routine::Lu => lu_solve(cluster, a, ipiv, bm.as_ref())?,
    };
    let x: Vec<f64> = (0..n).map(|i| x[(i, 0)]).collect();
    let (ax, norm_a) = times(&x);
    let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let r: Vec<f64> = b.iter().zip(&ax).map(|(b, y)| b - y).collect();
    Ok(inf(&r) / (norm_a * inf(&x) + inf(&b)))
}

/// One measurement: a routine at order `n` on a grid, the matrix in
/// `storage` in blocks of `nb`.
#[derive(Clone, Copy)]
struct Case {
    grid: Grid,
    routine: Routine,
    n: usize,
    nb: usize,
    storage: Storage,
}

/// gpumat's and cusolverMg's median times of a case (a fresh matrix before
/// each run, not timed) and backward errors; cusolverMg on full storage in
/// one process row alone, as it takes no other.
fn measure(devices: &[usize], case: Case, reps: usize, scaling: &str, vendor: bool) -> Result<Value> {
    let Case { grid, routine, n, nb, storage } = case;
    let g = grid.size();
    let cluster = Cluster::cuda(grid, &devices[..g], Tuning::default())?;
    eprintln!("dist: {} n = {n} on {} × {} ({} GPUs), {storage:?} storage", routine.name(), grid.p, grid.q, g);
    let params = DistParams::default();
    let (mut ours, mut theirs) = (vec![], vec![]);
    let mg_fits = grid.p == 1 && storage == Storage::Full;
    let mut mg = if mg_fits && vendor { Some(Mg::new(&cluster, n, nb)) } else { None };
    let mut err_ours = f64::NAN;
    let mut err_theirs = f64::NAN;
    let mut bytes = 0;
    for rep in 0..=reps {
        let mut a = generate(&cluster, routine, n, nb, storage)?;
        bytes = a.local_bytes();
        let start = Instant::now();
        let ipiv = match routine {
            Routine::Cholesky => cholesky(&cluster, &mut a, params).map(|()| vec![])?,
            Routine::Lu => lu(&cluster, &mut a, params)?,
        };
        let t = start.elapsed().as_secs_f64() * 1e3;
        if rep > 0 {
            ours.push(t);
        }
        if rep == reps {
            err_ours = solve_backward_error(&cluster, routine, &a, &ipiv)?;
        }
        drop(a);
        if let Some(Ok(vendor)) = mg.as_mut() {
            let mut a = generate(&cluster, routine, n, nb, storage)?;
            let start = Instant::now();
            let ipiv = vendor.factor(&cluster, routine, &mut a)?;
            let t = start.elapsed().as_secs_f64() * 1e3;
            if rep > 0 {
                theirs.push(t);
            }
            if rep == reps {
                err_theirs = solve_backward_error(&cluster, routine, &a, &ipiv)?;
            }
        }
    }
    let t_ours = median(ours);
    let t_theirs = match &mg {
        Some(Ok(_)) => median(theirs),
        _ => f64::NAN,
    };
    let skipped = match &mg {
        None if !vendor => Some("cusolverMg not run (--no-vendor)".to_string()),
        None => Some("cusolverMg takes full storage on 1 × G grids only".to_string()),
        Some(Err(e)) => Some(format!("cusolverMg: {e}")),
        Some(Ok(_)) => None,
    };
    let mut extra = json!({
        "gpus": g, "grid": format!("{}x{}", grid.p, grid.q), "scaling": scaling, "block_size": nb,
        "storage": format!("{storage:?}"),
        "gpumat_solve_backward_error": err_ours, "vendor_solve_backward_error": err_theirs,
        "gpumat_bytes": bytes as f64,
    });
    if let Some(s) = skipped {
        extra["skipped"] = json!(s);
    }
    let lower = if storage == Storage::Lower { " lower" } else { "" };
    let op = format!("dist {}{lower} {}x{} ({scaling})", routine.name(), grid.p, grid.q);
    // At once, so that a run cut short keeps what it measured.
    eprintln!(
        "dist: {op} n = {n} nb = {nb}: {t_ours:.1} ms, cusolverMg {t_theirs:.1} ms; backward errors {err_ours:.2e}, {err_theirs:.2e}"
    );
    Ok(record(&op, n, t_ours, t_theirs, Some(routine.flops(n)), extra))
}

/// The grids for `g` GPUs: a row of them, and a square for four or more.
fn grids(g: usize) -> Vec<Grid> {
    let mut grids = vec![Grid { p: 1, q: g }];
    let side = (g as f64).sqrt() as usize;
    if g >= 4 && side * side == g {
        grids.push(Grid { p: side, q: side });
    }
    grids
}

/// Bytes the largest rank needs to factor order `n` in `storage` on `g`
/// GPUs (one process row): its blocks (rank 0 holds the first block column
/// and, when they do not divide evenly, one more than others), the two
/// copies of the panel and a margin for the libraries' workspaces.
fn bytes_needed(n: usize, nb: usize, g: usize, storage: Storage) -> f64 {
    let blocks = n.div_ceil(nb);
    let entries: usize = (0..blocks)
        .step_by(g)
        .map(|j| {
            let width = nb.min(n - j * nb);
            match storage {
                Storage::Full => n * width,
                Storage::Lower => (n - j * nb) * width,
            }
        })
        .sum();
    (entries + 2 * n * nb) as f64 * 8.0 + 6e9
}

/// The largest order the Cholesky factors on all the GPUs (one process row)
/// in each storage, and its time: the order is the largest multiple of the
/// block whose [`bytes_needed`] fits the free memory, stepped down by 2 %
/// while a factorization fails for memory.
pub fn capacity() -> Result<Vec<Value>> {
    let devices = devices_from_env()?;
    let g = devices.len();
    let nb = Routine::Cholesky.block_size();
    let (mut rows, mut largest) = (vec![], vec![]);
    for storage in [Storage::Full, Storage::Lower] {
        let cluster = Cluster::cuda(Grid::row_of(g)?, &devices, Tuning::default())?;
        let free = cluster.ranks().iter().map(|r| r.be.memory().map(|m| m.0)).collect::<Result<Vec<_>>>()?;
        let free = free.into_iter().min().unwrap_or(0) as f64;
        let mut n = nb;
        while bytes_needed(n + nb, nb, g, storage) <= free {
            n += nb;
        }
        loop {
            eprintln!("dist: capacity, {storage:?} storage, n = {n} on {g} GPUs");
            match factor_once(&cluster, n, storage) {
                Ok((ms, bytes)) => {
                    rows.push(capacity_row(g, n, storage, ms, bytes, free));
                    break;
                }
                Err(e) if is_out_of_memory(&e) && n > nb => {
                    eprintln!("dist: n = {n} did not fit ({e})");
                    n = ((n as f64 * 0.98) as usize / nb).max(1) * nb;
                }
                Err(e) => return Err(e),
            }
        }
        largest.push(n);
    }
    // Lower storage at full storage's largest order: the time of the two
    // on the same matrix.
    let cluster = Cluster::cuda(Grid::row_of(g)?, &devices, Tuning::default())?;
    let (ms, bytes) = factor_once(&cluster, largest[0], Storage::Lower)?;
    let mut row = capacity_row(g, largest[0], Storage::Lower, ms, bytes, f64::NAN);
    row["op"] = json!(format!("dist cholesky 1x{g} (Lower) at full storage's largest order"));
    rows.push(row);
    Ok(rows)
}

/// Generates the Cholesky test matrix of order `n` in `storage` and times
/// its factorization; returns the time in ms and the bytes of a rank.
fn factor_once(cluster: &Cluster<Cuda, Nccl>, n: usize, storage: Storage) -> Result<(f64, usize)> {
    let start = Instant::now();
    let mut a = generate(cluster, Routine::Cholesky, n, Routine::Cholesky.block_size(), storage)?;
    let bytes = a.local_bytes();
    eprintln!("dist: generated {:.1} GB a GPU in {:.1} s", bytes as f64 / 1e9, start.elapsed().as_secs_f64());
    let start = Instant::now();
    cholesky(cluster, &mut a, DistParams::default())?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    eprintln!("dist: factored in {:.1} s", ms / 1e3);
    Ok((ms, bytes))
}

fn capacity_row(g: usize, n: usize, storage: Storage, ms: f64, bytes: usize, free: f64) -> Value {
    let extra = json!({
        "gpus": g, "grid": format!("1x{g}"), "storage": format!("{storage:?}"),
        "gpumat_bytes": bytes as f64, "free_bytes": free, "block_size": Routine::Cholesky.block_size(),
        "skipped": "cusolverMg not run at capacity",
    });
    record(
        &format!("dist cholesky capacity 1x{g} ({storage:?})"),
        n,
        ms,
        f64::NAN,
        Some(Routine::Cholesky.flops(n)),
        extra,
    )
}

/// What `run` scales.
pub struct What {
    pub routines: Vec<Routine>,
    /// Orders for strong scaling.
    pub strong: Vec<usize>,
    /// Cholesky's storages (LU's is full).
    pub storages: Vec<Storage>,
    /// The block order, instead of each routine's own.
    pub nb: Option<usize>,
    /// cusolverMg beside gpumat.
    pub vendor: bool,
}

pub fn run(settings: &Settings, what: &What) -> Result<Vec<Value>> {
    let devices = devices_from_env()?;
    let counts: Vec<usize> = (0..).map(|k| 1usize << k).take_while(|&g| g <= devices.len()).collect();
    let reps = settings.reps;
    let mut rows = vec![];
    for &routine in &what.routines {
        let nb = what.nb.unwrap_or(routine.block_size());
        let storages = if routine == Routine::Cholesky { what.storages.clone() } else { vec![Storage::Full] };
        for storage in storages {
            // `--sizes 0`: strong scaling alone.
            for &n1 in settings.sizes.iter().filter(|&&n| n > 0) {
                let mut base = None;
                for &g in &counts {
                    // n³ grows with the GPUs: the work per GPU stays that of n1.
                    let n = ((n1 as f64 * (g as f64).cbrt() / nb as f64).round() as usize).max(1) * nb;
                    for grid in grids(g) {
                        let case = Case { grid, routine, n, nb, storage };
                        let mut row = measure(&devices, case, reps, "weak", what.vendor)?;
                        let rate = row["gpumat_tflops"].as_f64().unwrap_or(f64::NAN);
                        let base_rate = *base.get_or_insert(rate);
                        row["efficiency"] = json!(rate / (g as f64 * base_rate));
                        rows.push(row);
                    }
                }
            }
            for &n in &what.strong {
                let mut base = None;
                for &g in &counts {
                    for grid in grids(g) {
                        let case = Case { grid, routine, n, nb, storage };
                        let mut row = measure(&devices, case, reps, "strong", what.vendor)?;
                        let t = row["gpumat_ms"].as_f64().unwrap_or(f64::NAN);
                        let t1 = *base.get_or_insert(t);
                        row["speedup"] = json!(t1 / t);
                        row["efficiency"] = json!(t1 / (t * g as f64));
                        rows.push(row);
                    }
                }
            }
        }
    }
    Ok(rows)
}
