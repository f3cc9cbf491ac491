//! Choosing where to compute.

use std::sync::{Arc, OnceLock};

use faer::MatRef;

use super::Matrix;
use crate::backend::cpu::{CpuBuffer, check_fits, matrix_bytes};
use crate::backend::cuda::CudaBuffer;
use crate::backend::{Backend, Cpu, Cuda, Tuning};
use crate::{Elem, Error, Result, Scalar};

/// The environment variable that overrides [`Device::auto`]: `auto`, `cpu`
/// or `cuda`.
pub const DEVICE_VAR: &str = "GPUMAT_DEVICE";

/// Where matrices live and work runs: a CUDA GPU or the CPU.
///
/// Cloning is cheap and shares the device.
#[derive(Clone)]
pub struct Device {
    inner: Arc<Inner>,
}

struct Inner {
    backend: AnyBackend,
    /// The knobs the device was made with.
    tuning: Tuning,
    /// Why `auto` chose the CPU, when it did.
    fallback: Option<String>,
}

/// The concrete backends, for dispatch with [`with_backend!`](crate::with_backend).
// One per device, behind the device's `Arc`: the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum AnyBackend {
    Cpu(Cpu),
    Cuda(Cuda),
}

/// A buffer of one of the backends.
pub(crate) enum Storage<E: Elem> {
    Cpu(CpuBuffer<E>),
    Cuda(CudaBuffer<E>),
}

/// A backend whose buffers a [`Storage`] can hold.
pub(crate) trait Resident: Backend {
    fn buffer<E: Elem>(s: &Storage<E>) -> Result<&Self::Buffer<E>>;
    fn buffer_mut<E: Elem>(s: &mut Storage<E>) -> Result<&mut Self::Buffer<E>>;
    fn wrap<E: Elem>(&self, b: Self::Buffer<E>) -> Storage<E>;
}

fn elsewhere() -> Error {
    Error::InvalidArgument("the matrix lives on another device".into())
}

impl Resident for Cpu {
    fn buffer<E: Elem>(s: &Storage<E>) -> Result<&CpuBuffer<E>> {
        match s {
            Storage::Cpu(b) => Ok(b),
            _ => Err(elsewhere()),
        }
    }
    fn buffer_mut<E: Elem>(s: &mut Storage<E>) -> Result<&mut CpuBuffer<E>> {
        match s {
            Storage::Cpu(b) => Ok(b),
            _ => Err(elsewhere()),
        }
    }
    fn wrap<E: Elem>(&self, b: CpuBuffer<E>) -> Storage<E> {
        Storage::Cpu(b)
    }
}

impl Resident for Cuda {
    fn buffer<E: Elem>(s: &Storage<E>) -> Result<&CudaBuffer<E>> {
        match s {
            Storage::Cuda(b) => Ok(b),
            _ => Err(elsewhere()),
        }
    }
    fn buffer_mut<E: Elem>(s: &mut Storage<E>) -> Result<&mut CudaBuffer<E>> {
        match s {
            Storage::Cuda(b) => Ok(b),
            _ => Err(elsewhere()),
        }
    }
    fn wrap<E: Elem>(&self, b: CudaBuffer<E>) -> Storage<E> {
        Storage::Cuda(b)
    }
}

impl Device {
    fn new(backend: AnyBackend, tuning: Tuning, fallback: Option<String>) -> Self {
        Device { inner: Arc::new(Inner { backend, tuning, fallback }) }
    }

    /// A CUDA GPU if a driver and a GPU are present, else the CPU (and
    /// [`describe`](Self::describe) says why). `GPUMAT_DEVICE=cpu|cuda`
    /// forces the choice; forcing `cuda` without a GPU is an error. The
    /// knobs come from the environment ([`Tuning::from_env`]); a variable
    /// that does not parse is an error.
    pub fn auto() -> Result<Self> {
        match std::env::var(DEVICE_VAR) {
            Ok(name) => Self::from_name(&name),
            Err(std::env::VarError::NotPresent) => Self::from_name("auto"),
            Err(e) => Err(Error::InvalidArgument(format!("{DEVICE_VAR}: {e}"))),
        }
    }

    /// `auto`, `cpu` or `cuda` (case-insensitive, surrounding spaces
    /// ignored), with the knobs of the environment.
    pub fn from_name(name: &str) -> Result<Self> {
        let choice = Choice::parse(name)?;
        let tuning = Tuning::from_env()?;
        match choice {
            Choice::Auto => Ok(Self::detect(tuning)),
            Choice::Cpu => Ok(Self::new(AnyBackend::Cpu(Cpu::new()), tuning, None)),
            Choice::Cuda => Self::cuda_shared(tuning),
        }
    }

    /// The device `name` names, with the given knobs instead of the
    /// environment's: for benchmarks and tests that force a kernel path or
    /// a blocking. A GPU opened this way is a device of its own, apart from
    /// the one [`auto`](Self::auto) shares.
    pub fn with_tuning(name: &str, tuning: Tuning) -> Result<Self> {
        match Choice::parse(name)? {
            Choice::Cpu => Ok(Self::new(AnyBackend::Cpu(Cpu::new()), tuning, None)),
            Choice::Cuda => Ok(Self::new(AnyBackend::Cuda(Cuda::new(0, tuning)?), tuning, None)),
            Choice::Auto => match Cuda::new(0, tuning) {
                Ok(cuda) => Ok(Self::new(AnyBackend::Cuda(cuda), tuning, None)),
                Err(e) => Ok(Self::cpu_fallback(tuning, e)),
            },
        }
    }

    /// The CPU, with all of rayon's threads.
    pub fn cpu() -> Self {
        Self::new(AnyBackend::Cpu(Cpu::new()), Tuning::default(), None)
    }

    /// The first CUDA GPU with the environment's knobs, or why there is
    /// none to use. The GPU is opened once per process; every call returns
    /// the same device.
    pub fn cuda() -> Result<Self> {
        Self::cuda_shared(Tuning::from_env()?)
    }

    fn cuda_shared(tuning: Tuning) -> Result<Self> {
        static CUDA: OnceLock<Result<Device>> = OnceLock::new();
        CUDA.get_or_init(|| Ok(Self::new(AnyBackend::Cuda(Cuda::new(0, tuning)?), tuning, None))).clone()
    }

    fn detect(tuning: Tuning) -> Self {
        Self::cuda_shared(tuning).unwrap_or_else(|e| Self::cpu_fallback(tuning, e))
    }

    fn cpu_fallback(tuning: Tuning, why: Error) -> Self {
        let why = match why {
            Error::Device(why) => why,
            e => e.to_string(),
        };
        Self::new(AnyBackend::Cpu(Cpu::new()), tuning, Some(why))
    }

    /// The knobs this device was made with.
    pub fn tuning(&self) -> Tuning {
        self.inner.tuning
    }

    /// Which device this is and, when `auto` fell back to the CPU, why.
    pub fn describe(&self) -> String {
        let name = with_backend!(self, be => be.name());
        match &self.inner.fallback {
            Some(why) => format!("{name}; no GPU used: {why}"),
            None => name,
        }
    }

    /// The device's name alone, without [`describe`](Self::describe)'s
    /// reason for a CPU fallback: for summary lines.
    pub fn short_name(&self) -> String {
        with_backend!(self, be => be.name())
    }

    /// Why [`auto`](Self::auto) chose the CPU, if it did.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.inner.fallback.as_deref()
    }

    pub fn is_cpu(&self) -> bool {
        matches!(self.inner.backend, AnyBackend::Cpu(_))
    }

    /// Threads the CPU backend uses.
    pub fn cpu_threads(&self) -> usize {
        rayon::current_num_threads()
    }

    /// The backend, to run generic code over [`Backend`] on this device.
    pub fn backend(&self) -> &AnyBackend {
        &self.inner.backend
    }

    /// Whether buffers of `self` and `other` can be used together.
    pub(crate) fn same(&self, other: &Device) -> bool {
        match (self.backend(), other.backend()) {
            (AnyBackend::Cpu(_), AnyBackend::Cpu(_)) => true,
            // One context per process and ordinal: the same GPU only if the same handle.
            (AnyBackend::Cuda(_), AnyBackend::Cuda(_)) => Arc::ptr_eq(&self.inner, &other.inner),
            _ => false,
        }
    }

    /// Waits for all work queued on the device.
    pub fn synchronize(&self) -> Result<()> {
        with_backend!(self, be => be.synchronize())
    }

    /// A `rows × cols` matrix from column-major `data` (`rows·cols` entries).
    pub fn from_col_major<T: Scalar>(&self, rows: usize, cols: usize, data: &[T]) -> Result<Matrix<T>> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(Error::dims(
                "from_col_major",
                format!("{rows}×{cols} needs {} entries, got {}", rows.saturating_mul(cols), data.len()),
            ));
        }
        let storage = with_backend!(self, be => be.wrap(be.upload(data)?));
        Ok(Matrix::from_storage(self.clone(), rows, cols, storage))
    }

    /// A copy of a faer matrix (any strides) on this device.
    pub fn upload<T: Scalar>(&self, a: MatRef<'_, T>) -> Result<Matrix<T>> {
        let data: Vec<T> = (0..a.ncols()).flat_map(|j| a.col(j).iter().copied().collect::<Vec<_>>()).collect();
        self.from_col_major(a.nrows(), a.ncols(), &data)
    }

    /// The `rows × cols` zero matrix. A size that overflows or does not fit
    /// in the device's memory is an error before anything is allocated.
    pub fn zeros<T: Scalar>(&self, rows: usize, cols: usize) -> Result<Matrix<T>> {
        let len = rows
            .checked_mul(cols)
            .ok_or_else(|| Error::InvalidArgument(format!("a {rows}×{cols} matrix: rows × columns overflows")))?;
        // The backend's allocation checks the size against its memory.
        let storage = with_backend!(self, be => be.wrap(be.alloc::<T>(len)?));
        Ok(Matrix::from_storage(self.clone(), rows, cols, storage))
    }

    /// The `n × n` identity, built on the host: its copy there is checked
    /// against the host's memory first, the device's copy by the backend.
    pub fn identity<T: Scalar>(&self, n: usize) -> Result<Matrix<T>> {
        check_fits(|| format!("the {n}×{n} identity"), matrix_bytes(n, n, size_of::<T>()))?;
        let mut data = vec![T::ZERO; n * n];
        (0..n).for_each(|i| data[i * n + i] = T::ONE);
        self.from_col_major(n, n, &data)
    }
}

/// What a device name asks for.
enum Choice {
    Auto,
    Cpu,
    Cuda,
}

impl Choice {
    fn parse(name: &str) -> Result<Choice> {
        match name.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Choice::Auto),
            "cpu" => Ok(Choice::Cpu),
            "cuda" | "gpu" => Ok(Choice::Cuda),
            other => Err(Error::InvalidArgument(format!("unknown device '{other}' (expected auto, cpu or cuda)"))),
        }
    }
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse() {
        assert!(Device::from_name(" CPU ").unwrap().is_cpu());
        assert!(Device::from_name("auto").unwrap().is_cpu());
        let e = Device::from_name("tpu").unwrap_err().to_string();
        assert!(e.contains("unknown device 'tpu'"), "{e}");
    }

    #[test]
    fn forcing_cuda_without_one_is_an_error() {
        assert!(matches!(Device::from_name("cuda"), Err(Error::Device(_))));
    }

    #[test]
    fn auto_says_why_it_fell_back() {
        let dev = Device::from_name("auto").unwrap();
        assert!(dev.describe().contains("no GPU used"), "{}", dev.describe());
        assert!(Device::cpu().fallback_reason().is_none());
    }
}
