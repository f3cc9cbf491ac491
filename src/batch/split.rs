//! One batch on two devices at once: the GPU takes a share of the members
//! and the CPU's threads the rest, in the ratio that makes both finish
//! together — the GPU as a coprocessor of Brodtkorb (2007), where the
//! CPU's otherwise idle time makes the GPU's work "virtually free", with
//! the ratio measured rather than set by hand.
//!
//! A [`Coprocessor`] holds the accelerator and the host. A call takes the
//! batch from host memory, starts the accelerator's share on a thread of
//! its own (upload, factor, solve, download: it returns at once to the
//! caller, which goes on to the host's share on rayon's threads) and
//! returns both shares' solutions in batch order. Each call times both
//! sides and updates, for its (operation, shape, precision, kind of host
//! memory) and the rest of the process, each side's rate while split (each
//! is slowed by the other through the host's memory and cores) and the
//! accelerator's rate alone, averaged with what was remembered; a key's
//! first call only warms up. A call gives the accelerator the share that
//! makes both sides finish together, its rate over the sum of the rates,
//! unless the accelerator alone was faster than that sum (a transfer-bound
//! accelerator can lose more than the host adds) or one side's share is
//! under 3 %; then it runs on one side, and every eighth call takes the
//! other choice, so that nothing measured goes stale for long. The host
//! takes its share in pieces of 1 MiB spread over its threads, each of
//! which stays in its thread's caches.
//! `GPUMAT_SPLIT_RATIO` (or [`Coprocessor::with_ratio`]) pins it instead.
//!
//! The batch may lie in pageable memory or in page-locked
//! [`HostArray`](crate::HostArray)s ([`Coprocessor::solve_into`]). From
//! pageable memory the accelerator's transfers are staged by the host's
//! cores (3/8 of them, taken from the host's share) at about 24 GB/s on an
//! H100; from page-locked memory its copy engines reach the memory directly,
//! at about 53 GB/s, and the host's share keeps all cores but one. Ratios
//! are remembered for each kind of memory apart.
//!
//! The solution does not depend on the split but for rounding: a member
//! solved on the GPU and on the CPU takes the same steps in the same
//! order, with possibly differently rounded products and sums (fused
//! multiply–adds, blocking of the vendor's kernels), so the two agree to
//! the backward error each meets (a few units of `n·u`), not bit for bit.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::{Batch, TridiagonalMethod, cholesky_owned, lu_owned, tridiagonal};
use crate::api::is_page_locked;
use crate::{Device, Error, Result, Scalar};

/// What a split call runs; with the shape and precision, the key of a
/// remembered ratio.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SplitOp {
    /// LU with partial pivoting and solve.
    Lu,
    /// Cholesky and solve.
    Cholesky,
    /// A tridiagonal solve.
    Tridiagonal(TridiagonalMethod),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    op: SplitOp,
    n: usize,
    nrhs: usize,
    precision: &'static str,
    host_accelerator: bool,
    /// Whether the accelerator's transfers are staged by the host's cores
    /// (from pageable memory), which changes both sides' rates.
    staged: bool,
}

/// What the calls for a key measured, in members a second: each side's
/// rate while the batch was split (each slowed by the other through the
/// host's memory and cores), and the accelerator's alone; and the calls
/// made.
#[derive(Clone, Copy, Debug, Default)]
struct Measured {
    accelerator_rate: Option<f64>,
    host_rate: Option<f64>,
    alone_rate: Option<f64>,
    calls: u64,
}

impl Measured {
    /// The share that makes both sides finish together.
    fn ratio(&self) -> Option<f64> {
        Some(self.accelerator_rate? / (self.accelerator_rate? + self.host_rate?))
    }

    /// The throughput of a split in that share.
    fn split_rate(&self) -> Option<f64> {
        Some(self.accelerator_rate? + self.host_rate?)
    }
}

/// `x` averaged into what was measured before.
fn average(old: Option<f64>, x: f64) -> f64 {
    old.map_or(x, |o| 0.5 * (o + x))
}

/// The measured shares, per key, for the process.
fn remembered() -> &'static Mutex<HashMap<Key, Measured>> {
    static RATIOS: OnceLock<Mutex<HashMap<Key, Measured>>> = OnceLock::new();
    RATIOS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The two sides' thread pools while a batch is split, as (accelerator's,
/// host's). From pageable memory: 3/8 of the threads for the accelerator's
/// part (its host copies into pinned staging buffers run on them) and the
/// rest for the host's, so that neither starves the other of cores; on the
/// H100 machine's 16 cores, 6 staging threads gave the best split of small
/// LU batches among 1, 2, 4, 6 and 8 (1 halved the accelerator's speed).
/// From page-locked memory the copy engines need no threads: the host's
/// part takes all but the one that drives the accelerator.
fn pools(staged: bool) -> Option<&'static (rayon::ThreadPool, rayon::ThreadPool)> {
    type Pools = Option<(rayon::ThreadPool, rayon::ThreadPool)>;
    static STAGED: OnceLock<Pools> = OnceLock::new();
    static DIRECT: OnceLock<Pools> = OnceLock::new();
    let (cell, share) = if staged { (&STAGED, 3) } else { (&DIRECT, 0) };
    cell.get_or_init(|| {
        let threads = rayon::current_num_threads();
        let accelerator = (threads * share / 8).max(1);
        if threads <= accelerator {
            return None;
        }
        let pool = |n: usize| rayon::ThreadPoolBuilder::new().num_threads(n).build().ok();
        Some((pool(accelerator)?, pool(threads - accelerator)?))
    })
    .as_ref()
}

/// A measured share below `ALONE` leaves the host all the work, and one
/// beyond `1 − ALONE` leaves it too little to gain from: such a call runs
/// on one side alone. So does a call where the two sides' rates measured
/// while split add up to less than the accelerator's alone (the two sides
/// slow each other down through the memory bus and the host's cores). Every `PROBE`-th call
/// takes the other choice, so that both stay measured.
const ALONE: f64 = 0.03;
const PROBE: u64 = 8;

/// Bytes of input and solution a host thread takes at a time: a piece stays
/// in the thread's caches from the copy in to the solution out, and the
/// allocator reuses the piece's buffers rather than mapping fresh pages for
/// each call, whose first touch faults (on the H100 machine a share above
/// 32 MiB in one piece ran at half the rate of a smaller one).
const HOST_PIECE: usize = 1 << 20;

/// How a call shared its batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Share {
    /// Members the accelerator took (the first ones) and the host took.
    /// Each is at least 1 when the ratio is measured, unless the other
    /// side's share was too small to gain from (see the module's docs).
    pub accelerator: usize,
    pub host: usize,
    /// Wall time of each side, transfers included.
    pub accelerator_time: Duration,
    pub host_time: Duration,
    /// The fraction given to the accelerator, and whether it was pinned.
    pub ratio: f64,
    pub pinned: bool,
}

/// The solutions of a split call, in batch order, the members that failed
/// (by index, with why; their solutions are NaN) and how it was shared.
pub struct SplitSolution<T: Scalar> {
    pub x: Vec<T>,
    pub failures: Vec<(usize, Error)>,
    pub share: Share,
}

/// What a split call into a given array reports: the members that failed
/// (by index, with why; their solutions are NaN) and how it was shared.
pub struct SplitReport {
    pub failures: Vec<(usize, Error)>,
    pub share: Share,
}

impl SplitReport {
    fn with<T: Scalar>(self, x: Vec<T>) -> SplitSolution<T> {
        SplitSolution { x, failures: self.failures, share: self.share }
    }
}

/// An accelerator and the host, taking batches together.
pub struct Coprocessor {
    accelerator: Device,
    host: Device,
    pinned: Option<f64>,
}

/// What a side runs: its members of the batch on its device, their
/// solutions written to the slice given, their failures returned (indices
/// within the side's share).
type PartFn<'a, T> = dyn Fn(&Device, Range<usize>, &mut [T]) -> Result<Vec<(usize, Error)>> + Sync + 'a;

impl Coprocessor {
    /// `accelerator` (usually `Device::auto()`'s GPU) with the CPU, all of
    /// rayon's threads; the ratio pinned when the accelerator's tuning
    /// (`GPUMAT_SPLIT_RATIO`) says so.
    pub fn new(accelerator: Device) -> Self {
        Self::with_host(accelerator, Device::cpu())
    }

    /// `accelerator` with the host device `host`.
    pub fn with_host(accelerator: Device, host: Device) -> Self {
        let pinned = accelerator.tuning().split_ratio;
        Coprocessor { accelerator, host, pinned }
    }

    /// Pins the accelerator's share (`Some`, from 0 to 1) or lets it be
    /// measured (`None`).
    pub fn with_ratio(mut self, ratio: Option<f64>) -> Result<Self> {
        if let Some(r) = ratio.filter(|r| !(0.0..=1.0).contains(r)) {
            return Err(Error::InvalidArgument(format!("a split ratio is a fraction from 0 to 1, not {r}")));
        }
        self.pinned = ratio;
        Ok(self)
    }

    pub fn accelerator(&self) -> &Device {
        &self.accelerator
    }

    /// The accelerator's share remembered for `op` on members of order `n`
    /// with `nrhs` right-hand sides in precision `T`, from pageable or
    /// page-locked host memory, once a call measured it.
    pub fn ratio<T: Scalar>(&self, op: SplitOp, n: usize, nrhs: usize, page_locked: bool) -> Option<f64> {
        let key = self.key::<T>(op, n, nrhs, !page_locked);
        remembered().lock().unwrap_or_else(|e| e.into_inner()).get(&key).and_then(Measured::ratio)
    }

    fn key<T: Scalar>(&self, op: SplitOp, n: usize, nrhs: usize, staged: bool) -> Key {
        let host_accelerator = self.accelerator.is_cpu();
        Key { op, n, nrhs, precision: T::NAME, host_accelerator, staged: staged && !host_accelerator }
    }

    /// Solves `A_s·X_s = B_s` for `count` members: `a` holds the `n × n`
    /// members one after another (column-major; for Cholesky the lower
    /// triangles are read), `b` the `n × nrhs` right-hand sides.
    pub fn solve<T: Scalar>(
        &self,
        op: SplitOp,
        n: usize,
        count: usize,
        a: &[T],
        b: &[T],
        nrhs: usize,
    ) -> Result<SplitSolution<T>> {
        check_dense(op, n, count, a, b, nrhs)?;
        let mut x = vec![T::ZERO; b.len()];
        Ok(self.solve_into(op, n, count, a, b, nrhs, &mut x)?.with(x))
    }

    /// [`solve`](Self::solve) into `x` (as long as `b`). With `a`, `b` and
    /// `x` in [`HostArray`](crate::HostArray)s of a GPU, the GPU's share
    /// moves on its copy engines alone and the host's share keeps all but
    /// one of the cores.
    #[allow(clippy::too_many_arguments)]
    pub fn solve_into<T: Scalar>(
        &self,
        op: SplitOp,
        n: usize,
        count: usize,
        a: &[T],
        b: &[T],
        nrhs: usize,
        x: &mut [T],
    ) -> Result<SplitReport> {
        check_dense(op, n, count, a, b, nrhs)?;
        check_solution("Coprocessor::solve_into", b.len(), x.len())?;
        let part = |device: &Device, range: Range<usize>, x: &mut [T]| -> Result<Vec<(usize, Error)>> {
            let k = range.len();
            if k == 0 {
                return Ok(Vec::new());
            }
            let members = Batch::from_host(device, (n, n), k, &a[range.start * n * n..range.end * n * n])?;
            let rhs = Batch::from_host(device, (n, nrhs), k, &b[range.start * n * nrhs..range.end * n * nrhs])?;
            // Factored and solved in the arrays just filled: no more copies.
            let f = if op == SplitOp::Lu { lu_owned(members)? } else { cholesky_owned(members)? };
            f.solve_owned(rhs)?.to_host_into(x)?;
            Ok(f.failures().filter_map(|(s, status)| status.error().map(|e| (s, e))).collect())
        };
        let staged = !(is_page_locked(a) && is_page_locked(b) && is_page_locked(x));
        let bytes = (n * n + 2 * n * nrhs) * size_of::<T>();
        self.split::<T>(self.key::<T>(op, n, nrhs, staged), count, (n * nrhs, bytes), &part, x)
    }

    /// Solves `count` tridiagonal systems of order `m`: `dl`, `d`, `du` and
    /// `b` hold each system's entries one system after another (as
    /// [`solve_tridiagonal`](super::solve_tridiagonal) takes them).
    pub fn solve_tridiagonal<T: Scalar>(
        &self,
        m: usize,
        count: usize,
        systems: [&[T]; 4],
        method: TridiagonalMethod,
    ) -> Result<SplitSolution<T>> {
        check_tridiagonal(m, count, systems)?;
        let mut x = vec![T::ZERO; systems[3].len()];
        Ok(self.solve_tridiagonal_into(m, count, systems, method, &mut x)?.with(x))
    }

    /// [`solve_tridiagonal`](Self::solve_tridiagonal) into `x` (as long as
    /// `b`); from and into [`HostArray`](crate::HostArray)s as
    /// [`solve_into`](Self::solve_into).
    pub fn solve_tridiagonal_into<T: Scalar>(
        &self,
        m: usize,
        count: usize,
        systems: [&[T]; 4],
        method: TridiagonalMethod,
        x: &mut [T],
    ) -> Result<SplitReport> {
        check_tridiagonal(m, count, systems)?;
        check_solution("Coprocessor::solve_tridiagonal_into", systems[3].len(), x.len())?;
        let part = |device: &Device, range: Range<usize>, x: &mut [T]| -> Result<Vec<(usize, Error)>> {
            let k = range.len();
            if k == 0 {
                return Ok(Vec::new());
            }
            let slice = |v: &[T]| Batch::from_host(device, (m, 1), k, &v[range.start * m..range.end * m]);
            let [dl, d, du, b] = systems;
            // Solved in the arrays just filled: no more copies.
            let solution = tridiagonal::solve_owned([slice(dl)?, slice(d)?, slice(du)?, slice(b)?], method)?;
            solution.x.to_host_into(x)?;
            Ok(solution.failures().filter_map(|(s, status)| status.error().map(|e| (s, e))).collect())
        };
        let staged = !(systems.iter().all(|v| is_page_locked(v)) && is_page_locked(x));
        let bytes = 5 * m * size_of::<T>();
        self.split::<T>(self.key::<T>(SplitOp::Tridiagonal(method), m, 1, staged), count, (m, bytes), &part, x)
    }

    /// Runs `part` on the accelerator for the first members and on the
    /// host for the rest, at once, into `x`: `size` entries of solution and
    /// `bytes` of input and solution a member.
    fn split<T: Scalar>(
        &self,
        key: Key,
        count: usize,
        (size, bytes): (usize, usize),
        part: &PartFn<'_, T>,
        x: &mut [T],
    ) -> Result<SplitReport> {
        let m = remembered().lock().unwrap_or_else(|e| e.into_inner()).get(&key).copied().unwrap_or_default();
        let start = if self.accelerator.is_cpu() { 0.5 } else { 0.9 };
        let ratio = self.pinned.unwrap_or(m.ratio().unwrap_or(start));
        let mut k = (ratio * count as f64).round() as usize;
        if self.pinned.is_none() && count >= 2 {
            let probe = m.calls % PROBE == PROBE - 1;
            let alone_is_faster = match (m.split_rate(), m.alone_rate) {
                (Some(split), Some(alone)) => alone > split,
                // The accelerator alone not yet measured: measure it next.
                (Some(_), None) => true,
                _ => false,
            };
            k = if m.split_rate().is_none() {
                k.clamp(1, count - 1)
            } else if ratio < ALONE && !probe {
                0
            } else if (ratio > 1.0 - ALONE || alone_is_faster) != probe {
                count
            } else {
                k.clamp(1, count - 1)
            };
        }
        // One array for both sides' solutions, each writing its own part.
        let (x_acc, x_host) = x.split_at_mut(k * size);
        let ((ours, t_acc), (rest, t_host)) = std::thread::scope(|scope| {
            let both = pools(key.staged || key.host_accelerator).filter(|_| k > 0 && k < count);
            let accelerator = scope.spawn(move || {
                let start = Instant::now();
                let x = match both {
                    Some((own, _)) => own.install(|| part(&self.accelerator, 0..k, x_acc)),
                    None => part(&self.accelerator, 0..k, x_acc),
                };
                (x, start.elapsed())
            });
            let start = Instant::now();
            let mut host_part = || self.host_part(part, k..count, (size, bytes), x_host);
            let host = match both {
                Some((_, host)) => host.install(host_part),
                None => host_part(),
            };
            let host = (host, start.elapsed());
            let accelerator = accelerator.join().unwrap_or_else(|_| {
                (Err(Error::Device("the accelerator's share of a split batch panicked".into())), Duration::ZERO)
            });
            (accelerator, host)
        });
        let mut failures = ours?;
        failures.extend(rest?.into_iter().map(|(s, e)| (s + k, e)));
        if self.pinned.is_none() {
            let mut map = remembered().lock().unwrap_or_else(|e| e.into_inner());
            let entry = map.entry(key).or_default();
            let rate = |members: usize, t: Duration| members as f64 / t.as_secs_f64().max(1e-9);
            // A key's first call warms up (kernels compiled, thread pools
            // and staging buffers made): its times are not kept.
            let warm = entry.calls > 0;
            if warm && k > 0 && k < count {
                entry.accelerator_rate = Some(average(entry.accelerator_rate, rate(k, t_acc)));
                entry.host_rate = Some(average(entry.host_rate, rate(count - k, t_host)));
            } else if warm && k == count {
                entry.alone_rate = Some(average(entry.alone_rate, rate(count, t_acc)));
            }
            entry.calls += 1;
        }
        let share = Share {
            accelerator: k,
            host: count - k,
            accelerator_time: t_acc,
            host_time: t_host,
            ratio,
            pinned: self.pinned.is_some(),
        };
        Ok(SplitReport { failures, share })
    }

    /// The host's members `range` into `x`, by pieces of about
    /// [`HOST_PIECE`] bytes (`bytes` a member, `size` entries of solution),
    /// the pieces spread over the threads.
    fn host_part<T: Scalar>(
        &self,
        part: &PartFn<'_, T>,
        range: Range<usize>,
        (size, bytes): (usize, usize),
        x: &mut [T],
    ) -> Result<Vec<(usize, Error)>> {
        if size == 0 {
            return part(&self.host, range, x);
        }
        let per = (HOST_PIECE / bytes.max(1)).max(1);
        let found = x
            .par_chunks_mut(per * size)
            .enumerate()
            .map(|(i, x)| {
                let at = i * per;
                let first = range.start + at;
                let failures = part(&self.host, first..first + x.len() / size, x)?;
                Ok(failures.into_iter().map(|(s, e)| (s + at, e)).collect::<Vec<_>>())
            })
            .collect::<Result<Vec<_>>>()?;
        let failures = found.into_iter().flatten().collect();
        Ok(failures)
    }
}

fn check_dense<T>(op: SplitOp, n: usize, count: usize, a: &[T], b: &[T], nrhs: usize) -> Result<()> {
    if op != SplitOp::Lu && op != SplitOp::Cholesky {
        return Err(Error::InvalidArgument(format!("Coprocessor::solve takes LU or Cholesky, not {op:?}")));
    }
    let sizes = [("a", n.checked_mul(n), a.len()), ("b", n.checked_mul(nrhs), b.len())];
    for (name, size, len) in sizes {
        if size.and_then(|s| s.checked_mul(count)) != Some(len) {
            let size = size.map_or("too many".into(), |s| s.to_string());
            return Err(Error::dims(
                "Coprocessor::solve",
                format!("{count} members need {name} of {count}×{size} entries, got {len}"),
            ));
        }
    }
    Ok(())
}

fn check_tridiagonal<T>(m: usize, count: usize, [dl, d, du, b]: [&[T]; 4]) -> Result<()> {
    for (name, len) in [("dl", dl.len()), ("d", d.len()), ("du", du.len()), ("b", b.len())] {
        if m.checked_mul(count) != Some(len) {
            return Err(Error::dims(
                "Coprocessor::solve_tridiagonal",
                format!("{count} systems of order {m} need {name} of {} entries, got {len}", m.saturating_mul(count)),
            ));
        }
    }
    Ok(())
}

fn check_solution(op: &'static str, needed: usize, len: usize) -> Result<()> {
    if needed == len {
        return Ok(());
    }
    Err(Error::dims(op, format!("the solutions need x of {needed} entries, got {len}")))
}
