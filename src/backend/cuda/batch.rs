//! Batched primitives on the GPU: one launch for the same step on every
//! member. The panels (`kernels/batch_lu.cu`, `batch_cholesky.cu`) take a
//! warp per member with its rows in registers up to 32 rows, else a thread
//! block per member with the panel in shared memory; the triangular solves
//! (`batch_trsm.cu`) a block per member and tile of columns; the products
//! are cuBLAS's strided batched `gemm`.

use cudarc::driver::LaunchConfig;

use super::launch::raw_strided;
use super::{Arg, Cuda, blas, n};
use crate::backend::{Diag, Op, Side, Strided, StridedMut, check};
use crate::layout::Uplo;
use crate::{DeviceLibrary, Error, Result, Scalar};

/// Most shared memory a panel kernel asks for (the H100 has 227 KiB).
const PANEL_SMEM: usize = 200 << 10;

/// Members with at most this many rows have their interchanges composed
/// into one permutation (`LASWP_REGS` rows a lane in `batch_lu.cu`).
const LASWP_ROWS: usize = 512;
/// Columns per warp of that kernel (its LASWP_COLS).
const LASWP_COLS: usize = 4;

/// Largest triangle the batched triangular solve takes.
pub(crate) const TRSM_ORDER: usize = 64;

fn int(op: &str, x: usize) -> Result<Arg> {
    i32::try_from(x).map(Arg::I32).map_err(|_| Error::TooLarge {
        op: op.into(),
        dim: x,
        limit: i32::MAX as usize,
        library: DeviceLibrary::Driver,
    })
}

fn p_mut<E: crate::Elem>(x: &StridedMut<'_, Cuda, E>) -> Arg {
    Arg::Ptr(raw_strided(x.buffer(), x.block()))
}

fn p<E: crate::Elem>(x: &Strided<'_, Cuda, E>) -> Arg {
    Arg::Ptr(raw_strided(x.buffer(), x.block()))
}

/// Distance between the entries of a vector block.
fn inc<E: crate::Elem>(x: &Strided<'_, Cuda, E>) -> Arg {
    n(if x.cols() == 1 { 1 } else { x.block().ld })
}

/// A thread block per member, `threads` threads, `smem` bytes.
fn per_member(count: usize, threads: usize, smem: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: (count as u32, 1, 1), block_dim: (threads as u32, 1, 1), shared_mem_bytes: smem as u32 }
}

/// Threads of a panel kernel's block: rows by groups of columns.
const PANEL_THREADS: usize = 256;

/// Panels up to this many rows take a warp per member, rows in registers.
const WARP_ROWS: usize = 32;

/// LU panels and solves up to this many rows (and columns) take two warps
/// per member, a row in registers per thread (`batch_get{rf,rs}_rows64`),
/// ROWS_MEMBERS members a block. (At n = 64 on the H100 Cholesky's panel
/// in shared memory was faster than such a kernel.)
const ROWS: usize = 64;
const ROWS_MEMBERS: usize = 2;

/// The launch of a kernel of two warps per member.
fn per_rows(count: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (count.div_ceil(ROWS_MEMBERS) as u32, 1, 1),
        block_dim: ((ROWS * ROWS_MEMBERS) as u32, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Threads per block of the warp-per-member kernels.
const WARP_BLOCK: usize = 128;

/// The register rows of a warp-per-member panel kernel: 8, 16 or 32
/// columns, the fewest that hold `nb`.
fn warp_columns(nb: usize) -> usize {
    nb.next_power_of_two().clamp(8, 32)
}

/// The launch of a warp-per-member kernel with `lanes` (32 or 16) a member.
fn per_warp(count: usize, lanes: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (count.div_ceil(WARP_BLOCK / lanes) as u32, 1, 1),
        block_dim: (WARP_BLOCK as u32, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Lanes a member in the LU kernels of a warp per member: members of up
/// to 16 rows go two to a warp.
fn lu_lanes(m: usize) -> usize {
    if m <= 16 { 16 } else { 32 }
}

fn panel_smem<T: Scalar>(op: &str, m: usize, nb: usize) -> Result<usize> {
    let bytes = m * nb * size_of::<T>();
    if bytes > PANEL_SMEM {
        return Err(Error::InvalidArgument(format!(
            "{op}: a {m}×{nb} panel needs {bytes} bytes of shared memory, past the {PANEL_SMEM} a batched panel takes"
        )));
    }
    Ok(bytes)
}

impl Cuda {
    pub(super) fn batch_getrf_panel<T: Scalar>(
        &self,
        a: StridedMut<'_, Cuda, T>,
        ipiv: StridedMut<'_, Cuda, i32>,
        info: StridedMut<'_, Cuda, i32>,
        offset: usize,
    ) -> Result<()> {
        const OP: &str = "batched_getrf_panel";
        let count = check::members(
            OP,
            &[check::operand("a", &a.rb()), check::operand("ipiv", &ipiv.rb()), check::operand("info", &info.rb())],
        )?;
        check::getrf_panel(&a.member_mut(0)?, &ipiv.member_mut(0)?, &info.member_mut(0)?)?;
        let (m, nb) = (a.rows(), a.cols());
        if count == 0 || nb == 0 {
            return Ok(());
        }
        int(OP, count)?;
        let args = vec![
            p_mut(&a),
            n(a.block().ld),
            n(a.stride()),
            int(OP, m)?,
            int(OP, nb)?,
            p_mut(&ipiv),
            inc(&ipiv.rb()),
            n(ipiv.stride()),
            p_mut(&info),
            n(info.stride()),
            int(OP, offset)?,
        ];
        self.launch_panel::<T>(("batch_lu", "batch_getrf"), (m, nb, count), args)
    }

    pub(super) fn batch_potrf_panel<T: Scalar>(
        &self,
        a: StridedMut<'_, Cuda, T>,
        info: StridedMut<'_, Cuda, i32>,
        offset: usize,
    ) -> Result<()> {
        const OP: &str = "batched_potrf_panel";
        let count = check::members(OP, &[check::operand("a", &a.rb()), check::operand("info", &info.rb())])?;
        let (rows, nb) = (a.rows(), a.cols());
        if offset + nb > rows {
            return Err(Error::dims(OP, format!("a panel of {nb} columns from row {offset} of {rows} rows")));
        }
        let panel = a.member_mut(0)?.sub_mut(offset, 0, rows - offset, nb)?;
        check::potrf_panel(Uplo::Lower, &panel, &info.member_mut(0)?)?;
        if count == 0 || nb == 0 {
            return Ok(());
        }
        int(OP, count)?;
        let m = rows - offset;
        let args = vec![
            p_mut(&a),
            n(a.block().ld),
            n(a.stride()),
            int(OP, rows)?,
            int(OP, nb)?,
            p_mut(&info),
            n(info.stride()),
            int(OP, offset)?,
        ];
        self.launch_panel::<T>(("batch_cholesky", "batch_potrf"), (m, nb, count), args)
    }

    /// A panel kernel `{kernel}_warp{NB}` (a warp per member, `count`
    /// appended to `args`; `{kernel}_warp{NB}x{lanes}` for LU, whose small
    /// members go two to a warp) for panels of up to 32 rows,
    /// `batch_getrf_rows64` (two warps per member) for LU up to 64 rows and
    /// columns, else `{kernel}_panel` (a block per member, the panel in shared
    /// memory).
    fn launch_panel<T: Scalar>(
        &self,
        (file, kernel): (&str, &str),
        (m, nb, count): (usize, usize, usize),
        mut args: Vec<Arg>,
    ) -> Result<()> {
        if m <= WARP_ROWS {
            args.push(n(count));
            let (name, lanes) = if kernel == "batch_getrf" {
                (format!("{kernel}_warp{}x{}_{}", warp_columns(nb), lu_lanes(m), T::NAME), lu_lanes(m))
            } else {
                (format!("{kernel}_warp{}_{}", warp_columns(nb), T::NAME), 32)
            };
            return self.launch(file, &name, per_warp(count, lanes), &args);
        }
        if kernel == "batch_getrf" && m <= ROWS && nb <= ROWS {
            args.push(n(count));
            return self.launch(file, &format!("{kernel}_rows{ROWS}_{}", T::NAME), per_rows(count), &args);
        }
        let cfg = per_member(count, PANEL_THREADS, panel_smem::<T>(kernel, m, nb)?);
        self.launch(file, &format!("{kernel}_panel_{}", T::NAME), cfg, &args)
    }

    pub(super) fn batch_laswp<T: Scalar>(
        &self,
        a: StridedMut<'_, Cuda, T>,
        ipiv: Strided<'_, Cuda, i32>,
        shift: usize,
        reverse: bool,
    ) -> Result<()> {
        const OP: &str = "batched_laswp";
        let count = check::members(OP, &[check::operand("a", &a.rb()), check::operand("ipiv", &ipiv)])?;
        let k = ipiv.member(0)?.block().vector_len().ok_or_else(|| {
            Error::dims(OP, format!("ipiv must be a vector block, is {}×{}", ipiv.rows(), ipiv.cols()))
        })?;
        let (rows, cols) = (a.rows(), a.cols());
        if count == 0 || cols == 0 || k == 0 {
            return Ok(());
        }
        let mut args = vec![
            p_mut(&a),
            n(a.block().ld),
            n(a.stride()),
            int(OP, rows)?,
            int(OP, cols)?,
            p(&ipiv),
            inc(&ipiv),
            n(ipiv.stride()),
            int(OP, k)?,
            int(OP, shift)?,
            Arg::I32(i32::from(reverse)),
        ];
        if rows <= LASWP_ROWS && cols >= 8 {
            // A block per member and tile of 32 columns, a warp per 4 columns
            // (few columns, as a solve's right-hand sides, take the
            // thread-per-column kernel below, many members to a block).
            let cfg = LaunchConfig {
                grid_dim: (count as u32, cols.div_ceil(8 * LASWP_COLS) as u32, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: (rows * size_of::<i32>()) as u32,
            };
            return self.launch("batch_lu", &format!("batch_laswp_perm_{}", T::NAME), cfg, &args);
        }
        // A thread per (member, column) pair; the kernel takes their number
        // after the shape.
        let pairs = count * cols;
        let cfg = super::launch::grid_1d(pairs, pairs.div_ceil(super::launch::BLOCK));
        int(OP, pairs.div_ceil(super::launch::BLOCK))?;
        args.insert(5, n(pairs));
        self.launch("batch_lu", &format!("batch_laswp_{}", T::NAME), cfg, &args)
    }

    pub(super) fn batch_trsm<T: Scalar>(
        &self,
        uplo: Uplo,
        op: Op,
        diag: Diag,
        a: Strided<'_, Cuda, T>,
        b: StridedMut<'_, Cuda, T>,
    ) -> Result<()> {
        const OP: &str = "batched_trsm";
        let count = check::members(OP, &[check::operand("A", &a), check::operand("B", &b.rb())])?;
        check::triangular(OP, Side::Left, uplo, &a.member(0)?, &b.member_mut(0)?)?;
        let (m, cols) = (b.rows(), b.cols());
        if count == 0 || m == 0 || cols == 0 {
            return Ok(());
        }
        if m > TRSM_ORDER {
            return Err(Error::InvalidArgument(format!(
                "{OP}: a triangle of order {m}, past the {TRSM_ORDER} it takes (solve by blocks)"
            )));
        }
        // A thread per row (16, 32 or 64 rows) by as many (member, column)
        // pairs as make 256 threads.
        let rows = if m <= 16 {
            16
        } else if m <= 32 {
            32
        } else {
            64
        };
        let (pairs, tile) = (count * cols, 256 / rows);
        int(OP, pairs.div_ceil(tile))?;
        let cfg = LaunchConfig {
            grid_dim: (pairs.div_ceil(tile) as u32, 1, 1),
            block_dim: (rows as u32, tile as u32, 1),
            shared_mem_bytes: (2 * tile * size_of::<T>()) as u32,
        };
        let args = [
            p(&a),
            n(a.block().ld),
            n(a.stride()),
            p_mut(&b),
            n(b.block().ld),
            n(b.stride()),
            int(OP, m)?,
            int(OP, cols)?,
            n(pairs),
            Arg::I32(i32::from(uplo == Uplo::Lower)),
            Arg::I32(i32::from(op == Op::Trans)),
            Arg::I32(i32::from(diag == Diag::Unit)),
        ];
        self.launch("batch_trsm", &format!("batch_trsm_{}", T::NAME), cfg, &args)
    }

    pub(super) fn batch_getrs<T: Scalar>(
        &self,
        lu: Strided<'_, Cuda, T>,
        ipiv: Strided<'_, Cuda, i32>,
        mut b: StridedMut<'_, Cuda, T>,
    ) -> Result<()> {
        const OP: &str = "batched_getrs";
        let count = check::members(
            OP,
            &[check::operand("LU", &lu), check::operand("ipiv", &ipiv), check::operand("B", &b.rb())],
        )?;
        check::triangular(OP, Side::Left, Uplo::Lower, &lu.member(0)?, &b.member_mut(0)?)?;
        let (m, cols) = (b.rows(), b.cols());
        if ipiv.member(0)?.block().vector_len() != Some(m) {
            return Err(Error::dims(
                OP,
                format!("ipiv must be a vector of {m} entries, is {}×{}", ipiv.rows(), ipiv.cols()),
            ));
        }
        if count == 0 || m == 0 || cols == 0 {
            return Ok(());
        }
        if m > ROWS {
            // The three steps, each over every member.
            self.batch_laswp(b.rb_mut(), ipiv, 0, false)?;
            self.batch_trsm(Uplo::Lower, Op::NoTrans, Diag::Unit, lu, b.rb_mut())?;
            return self.batch_trsm(Uplo::Upper, Op::NoTrans, Diag::NonUnit, lu, b);
        }
        // A warp per member (two up to 64 rows), its rows of LU in
        // registers, all in one pass.
        int(OP, count)?;
        let args = [
            p(&lu),
            n(lu.block().ld),
            n(lu.stride()),
            int(OP, m)?,
            p(&ipiv),
            inc(&ipiv),
            n(ipiv.stride()),
            p_mut(&b),
            n(b.block().ld),
            n(b.stride()),
            int(OP, cols)?,
            n(count),
        ];
        if m > WARP_ROWS {
            return self.launch("batch_lu", &format!("batch_getrs_rows{ROWS}_{}", T::NAME), per_rows(count), &args);
        }
        let name = format!("batch_getrs_warp{}x{}_{}", warp_columns(m), lu_lanes(m), T::NAME);
        self.launch("batch_lu", &name, per_warp(count, lu_lanes(m)), &args)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn batch_gemm<T: Scalar>(
        &self,
        alpha: T,
        a: Strided<'_, Cuda, T>,
        op_a: Op,
        b: Strided<'_, Cuda, T>,
        op_b: Op,
        beta: T,
        c: StridedMut<'_, Cuda, T>,
    ) -> Result<()> {
        const OP: &str = "batched_gemm";
        let count =
            check::members(OP, &[check::operand("A", &a), check::operand("B", &b), check::operand("C", &c.rb())])?;
        check::gemm(&a.member(0)?, op_a, &b.member(0)?, op_b, &c.member_mut(0)?)?;
        let (m, n_, k) = (c.rows(), c.cols(), op_a.apply(a.rows(), a.cols()).1);
        if count == 0 || m == 0 || n_ == 0 {
            return Ok(());
        }
        let d = |x| blas::dim(OP, x);
        let s = |x: usize| i64::try_from(x).unwrap_or(i64::MAX);
        let at = |x: &Strided<'_, Cuda, T>| -> Result<(u64, i32, i64)> {
            Ok((raw_strided(x.buffer(), x.block()), d(x.block().ld)?, s(x.stride())))
        };
        let cc = (raw_strided(c.buffer(), c.block()), d(c.block().ld)?, s(c.stride()));
        // SAFETY: every member's blocks checked by `check` and `Strided`; see `blas`.
        unsafe {
            blas::gemm_strided_batched(
                *self.blas.handle(),
                (op_a, op_b),
                (d(m)?, d(n_)?, d(k)?),
                alpha,
                at(&a)?,
                at(&b)?,
                beta,
                cc,
                d(count)?,
            )
        }
    }
}
