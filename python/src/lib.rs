//! `gpumat._gpumat`: the extension module under the Python package
//! `gpumat`. It holds matrices on a device and calls the public Rust API;
//! argument handling that feels like NumPy lives in the package's Python
//! code (`gpumat/__init__.py`). Every `gpumat::Error` becomes an instance of
//! the matching class of `gpumat._errors`, its fields as attributes; the
//! GIL is released while the library works.

mod dlpack;

use gpumat::apps::swe;
use gpumat::batch::{self, Batch, TridiagonalMethod};
use gpumat::io::mps::{MpsFormat, Sense, read_mps};
use gpumat::optim::lp::{self, DenseLp, LpOptions, LpPrecision};
use gpumat::{Device, Error, FactorPrecision, Matrix, Method, MixedOptions, SolveOptions, Sym, SymStorage};
use numpy::npyffi::NPY_ORDER;
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The Python exception for a library error.
pub(crate) fn raise(e: Error) -> PyErr {
    Python::attach(|py| match exception(py, &e) {
        Ok(err) => err,
        Err(err) => err,
    })
}

fn exception(py: Python<'_>, e: &Error) -> PyResult<PyErr> {
    let module = py.import("gpumat._errors")?;
    let (class, fields): (&str, Vec<(&str, Bound<'_, PyAny>)>) = match e {
        Error::NotPositiveDefinite { column } => {
            ("NotPositiveDefiniteError", vec![("column", column.into_pyobject(py)?.into_any())])
        }
        Error::Singular { pivot } => ("SingularMatrixError", vec![("pivot", pivot.into_pyobject(py)?.into_any())]),
        Error::ZeroPivot { column } => ("ZeroPivotError", vec![("column", column.into_pyobject(py)?.into_any())]),
        Error::IllConditioned { rcond, .. } => {
            ("IllConditionedError", vec![("rcond", rcond.into_pyobject(py)?.into_any())])
        }
        Error::RankDeficient { .. } => ("RankDeficientError", vec![]),
        Error::NotConverged { iterations, residual, .. } => (
            "NotConvergedError",
            vec![
                ("iterations", iterations.into_pyobject(py)?.into_any()),
                ("residual", residual.into_pyobject(py)?.into_any()),
            ],
        ),
        Error::Overflow { .. } | Error::Underflow { .. } => ("RangeError", vec![]),
        Error::DimensionMismatch { .. } | Error::Empty { .. } | Error::LeadingDimension { .. } => {
            ("ShapeError", vec![])
        }
        Error::NonFinite { row, col, value, .. } => (
            "NonFiniteError",
            vec![
                ("row", row.into_pyobject(py)?.into_any()),
                ("col", col.into_pyobject(py)?.into_any()),
                ("value", value.into_pyobject(py)?.into_any()),
            ],
        ),
        Error::NotSymmetric { row, col } => (
            "NotSymmetricError",
            vec![("row", row.into_pyobject(py)?.into_any()), ("col", col.into_pyobject(py)?.into_any())],
        ),
        Error::NegativeWeight { .. } | Error::WeightOverflow { .. } => ("WeightError", vec![]),
        Error::OutOfDeviceMemory { .. } | Error::OutOfHostMemory { .. } => ("OutOfMemoryError", vec![]),
        Error::Parse { line, path, .. } => (
            "ParseError",
            vec![
                ("line", line.into_pyobject(py)?.into_any()),
                ("path", path.to_string_lossy().into_pyobject(py)?.into_any()),
            ],
        ),
        Error::Io { .. } => ("FileError", vec![]),
        Error::InvalidArgument(_) | Error::InvalidEnvironment { .. } => ("InvalidArgumentError", vec![]),
        Error::InBatch { index, source } => {
            let err = exception(py, source)?;
            err.value(py).setattr("index", index)?;
            return Ok(err);
        }
        _ => ("DeviceError", vec![]),
    };
    let value = module.getattr(class)?.call1((e.to_string(),))?;
    for (name, v) in fields {
        value.setattr(name, v)?;
    }
    Ok(PyErr::from_value(value))
}

trait OrRaise<T> {
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for gpumat::Result<T> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(raise)
    }
}

/// Where matrices live and work runs.
#[pyclass(name = "Device", module = "gpumat._gpumat", frozen)]
#[derive(Clone)]
struct PyDevice {
    inner: Device,
}

#[pymethods]
impl PyDevice {
    /// "auto" (the GPU if there is one, else the CPU), "cpu" or "cuda".
    #[new]
    #[pyo3(signature = (name = "auto"))]
    fn new(py: Python<'_>, name: &str) -> PyResult<Self> {
        let name = name.to_string();
        Ok(PyDevice { inner: py.detach(move || Device::from_name(&name)).or_raise()? })
    }

    /// The device in a few words, and why the CPU was chosen if it was.
    fn describe(&self) -> String {
        self.inner.describe()
    }

    /// "cpu" or "cuda".
    #[getter]
    fn kind(&self) -> &'static str {
        if self.inner.is_cpu() { "cpu" } else { "cuda" }
    }

    fn __repr__(&self) -> String {
        format!("gpumat.Device('{}')  # {}", self.kind(), self.inner.short_name())
    }
}

/// A float64 matrix resident on a device, column-major.
#[pyclass(name = "Array", module = "gpumat._gpumat", frozen)]
struct PyArray {
    inner: Matrix<f64>,
}

#[pymethods]
impl PyArray {
    /// A 1-D or 2-D float64 NumPy array on `device` (a vector becomes one
    /// column). On the CPU a Fortran-ordered array is shared, not copied:
    /// the Array keeps it alive and reads its buffer. Otherwise it is copied
    /// once: straight from its buffer when Fortran-ordered, transposed on
    /// the way when C-ordered, gathered when strided.
    #[staticmethod]
    fn from_numpy(py: Python<'_>, device: &PyDevice, a: PyReadonlyArrayDyn<'_, f64>) -> PyResult<Self> {
        let (rows, cols) = shape_of(&a)?;
        let dev = device.inner.clone();
        let address = a.data() as u64;
        let inner = if a.is_fortran_contiguous() && dev.is_cpu() && address.is_multiple_of(8) {
            let owner: Py<PyAny> = a.as_any().clone().unbind();
            // SAFETY: a contiguous, aligned float64 buffer of rows·cols
            // entries, kept alive by `owner`. gpumat's computations never
            // write to their operands; a Python thread writing to the array
            // while gpumat reads it races as it would with any NumPy view.
            unsafe { dev.wrap_device_memory::<f64>(address, rows, cols, Box::new(owner)) }.or_raise()?
        } else if a.is_fortran_contiguous() {
            let data = a.as_slice().map_err(|e| PyValueError::new_err(e.to_string()))?;
            dev.from_col_major(rows, cols, data).or_raise()?
        } else {
            let data = col_major(&a)?.0;
            py.detach(move || dev.from_col_major(rows, cols, &data)).or_raise()?
        };
        Ok(PyArray { inner })
    }

    /// A Fortran-ordered 2-D NumPy copy on the host (waits for the work
    /// that computes the entries, and raises its failure).
    fn numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let inner = &self.inner;
        let (rows, cols) = inner.shape();
        let data = py.detach(|| inner.to_host()).or_raise()?;
        PyArray1::from_vec(py, data).reshape_with_order([rows, cols], NPY_ORDER::NPY_FORTRANORDER)
    }

    /// NumPy's conversion protocol: `numpy.asarray(a)`.
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if copy == Some(false) {
            return Err(PyValueError::new_err("a gpumat Array is copied to the host to make a NumPy array"));
        }
        let host = self.numpy(py)?.into_any();
        match dtype {
            Some(dtype) => host.call_method1("astype", (dtype,)),
            None => Ok(host),
        }
    }

    /// DLPack: the array shared without a copy (CuPy's and PyTorch's
    /// `from_dlpack`, NumPy's for CPU arrays). Pending work is waited for,
    /// so the consumer's `stream` may read at once.
    #[pyo3(signature = (stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        slf: &Bound<'_, Self>,
        stream: Option<Bound<'_, PyAny>>,
        max_version: Option<Bound<'_, PyAny>>,
        dl_device: Option<Bound<'_, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let _ = (stream, max_version);
        if copy == Some(true) {
            return Err(pyo3::exceptions::PyBufferError::new_err("gpumat exports its arrays without copies"));
        }
        if let Some(d) = dl_device.filter(|d| !d.is_none()) {
            let want: (i32, i32) = d.extract()?;
            if want != dlpack::device_of(slf.get().inner.device()) {
                return Err(pyo3::exceptions::PyBufferError::new_err(format!(
                    "the array is on DLPack device {:?}, not {want:?}",
                    dlpack::device_of(slf.get().inner.device())
                )));
            }
        }
        dlpack::export(slf.py(), slf.clone().into_any().unbind(), &slf.get().inner)
    }

    /// `(device type, device id)`: (1, 0) on the CPU, (2, ordinal) on a GPU.
    fn __dlpack_device__(&self) -> (i32, i32) {
        dlpack::device_of(self.inner.device())
    }

    /// The address of the entries (for checking that memory is shared).
    #[getter]
    fn address(&self) -> PyResult<usize> {
        self.inner.address().or_raise()
    }

    fn __repr__(&self) -> String {
        let (rows, cols) = self.inner.shape();
        format!("gpumat.Array(shape=({rows}, {cols}), dtype=float64, device='{}')", self.inner.device().short_name())
    }

    #[getter]
    fn shape(&self) -> (usize, usize) {
        self.inner.shape()
    }

    #[getter]
    fn device(&self) -> PyDevice {
        PyDevice { inner: self.inner.device().clone() }
    }
}

/// `(rows, cols)` of a 1-D (one column) or 2-D array.
fn shape_of(a: &PyReadonlyArrayDyn<'_, f64>) -> PyResult<(usize, usize)> {
    match a.shape() {
        [n] => Ok((*n, 1)),
        [m, n] => Ok((*m, *n)),
        s => Err(PyValueError::new_err(format!("expected a 1-D or 2-D array, got {} dimensions", s.len()))),
    }
}

/// The entries of a 1-D or 2-D array, column-major, whatever its layout.
fn col_major(a: &PyReadonlyArrayDyn<'_, f64>) -> PyResult<(Vec<f64>, usize, usize)> {
    let (rows, cols) = shape_of(a)?;
    let view = a.as_array();
    let data = if a.ndim() == 1 {
        view.iter().copied().collect()
    } else {
        (0..cols).flat_map(|j| (0..rows).map(move |i| (i, j))).map(|(i, j)| view[[i, j]]).collect()
    };
    Ok((data, rows, cols))
}

fn wrap(inner: Matrix<f64>) -> PyArray {
    PyArray { inner }
}

fn storage(name: &str) -> PyResult<SymStorage> {
    match name {
        "full" => Ok(SymStorage::Full),
        "rfp" => Ok(SymStorage::Rfp),
        _ => Err(PyValueError::new_err(format!("storage must be 'full' or 'rfp', not {name:?}"))),
    }
}

fn factor_precision_named(name: &str) -> PyResult<FactorPrecision> {
    let all = [
        FactorPrecision::F64,
        FactorPrecision::F32,
        FactorPrecision::Tf32,
        FactorPrecision::Fp16,
        FactorPrecision::Bf16,
        FactorPrecision::Fp16x3,
    ];
    all.into_iter().find(|p| p.name() == name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "factor precision must be one of f64, f32, tf32, fp16, bf16, fp16x3, not {name:?}"
        ))
    })
}

/// `X` with `A·X = B`, and a dict of what is known about it.
#[pyfunction]
#[pyo3(signature = (a, b, method, precision, storage_name, factor_precision=None))]
fn solve<'py>(
    py: Python<'py>,
    a: &PyArray,
    b: &PyArray,
    method: &str,
    precision: &str,
    storage_name: &str,
    factor_precision: Option<&str>,
) -> PyResult<(PyArray, Bound<'py, PyDict>)> {
    let method = match method {
        "auto" => Method::Auto,
        "cholesky" => Method::Cholesky,
        "lu" => Method::Lu,
        "ldlt" => Method::Ldlt { pivoted: true },
        _ => {
            return Err(PyValueError::new_err(format!(
                "method must be 'auto', 'cholesky', 'lu' or 'ldlt', not {method:?}"
            )));
        }
    };
    let storage = storage(storage_name)?;
    let info = PyDict::new(py);
    let (a, b) = (&a.inner, &b.inner);
    match precision {
        "f64" => {
            let options = SolveOptions { method, storage, ..SolveOptions::default() };
            let s = py.detach(|| a.solve_with(b, &options)).or_raise()?;
            info.set_item("method", format!("{:?}", s.method).to_lowercase())?;
            info.set_item("rcond", s.rcond)?;
            info.set_item("backward_error", s.backward_error)?;
            info.set_item("forward_error_bound", s.forward_error_bound)?;
            Ok((wrap(s.x), info))
        }
        "mixed" => {
            if storage != SymStorage::Full {
                return Err(PyValueError::new_err("precision='mixed' needs storage='full'"));
            }
            let factor = factor_precision.map(factor_precision_named).transpose()?;
            let options = MixedOptions { method, factor, ..MixedOptions::default() };
            let r = py.detach(|| a.solve_mixed(b, &options)).or_raise()?;
            info.set_item("method", format!("{:?}", r.method).to_lowercase())?;
            info.set_item("factor_precision", r.factor.name())?;
            info.set_item("refinement", r.refinement.name())?;
            info.set_item("steps", r.steps)?;
            info.set_item("backward_error", r.backward_error)?;
            info.set_item("rcond", r.rcond)?;
            info.set_item("fallback", r.fallback.clone())?;
            Ok((wrap(r.x), info))
        }
        _ => Err(PyValueError::new_err(format!("precision must be 'f64' or 'mixed', not {precision:?}"))),
    }
}

/// Weighted linear least squares: `x` and a dict of what is known about it.
#[pyfunction]
#[pyo3(signature = (a, b, weights=None))]
fn lstsq<'py>(
    py: Python<'py>,
    a: &PyArray,
    b: &PyArray,
    weights: Option<&PyArray>,
) -> PyResult<(PyArray, Bound<'py, PyDict>)> {
    let (a, b, w) = (&a.inner, &b.inner, weights.map(|w| &w.inner));
    if a.rows() < a.cols() {
        return min_norm(py, a, b, w.is_some());
    }
    let s = py.detach(|| gpumat::lstsq(a, b, w)).or_raise()?;
    let info = PyDict::new(py);
    info.set_item("residual_norm", s.residual_norm)?;
    info.set_item("standard_errors", s.standard_errors.clone())?;
    info.set_item("condition", s.condition)?;
    Ok((wrap(s.x), info))
}

/// `lstsq` of a wide `a` (fewer rows than columns), as NumPy's: the `x` of
/// least norm with `a·x = b`, from the QR factorization of `aᵀ`.
fn min_norm<'py>(
    py: Python<'py>,
    a: &Matrix<f64>,
    b: &Matrix<f64>,
    weighted: bool,
) -> PyResult<(PyArray, Bound<'py, PyDict>)> {
    if weighted {
        return Err(raise(gpumat::Error::dims(
            "lstsq",
            format!("weights need at least as many rows as columns; A is {}×{}", a.rows(), a.cols()),
        )));
    }
    if b.rows() != a.rows() {
        return Err(raise(gpumat::Error::dims(
            "lstsq",
            format!("A is {}×{} but b has {} rows", a.rows(), a.cols(), b.rows()),
        )));
    }
    let (x, residual, condition) = py
        .detach(|| -> gpumat::Result<_> {
            let f = a.transpose()?.qr()?;
            let condition = f.full_rank(gpumat::Qr::<f64>::RANK_TOLERANCE, "A")?;
            let x = f.solve_transposed(b)?;
            let ax = a.matmul(&x)?.to_host()?;
            let residual = ax.iter().zip(b.to_host()?).map(|(p, q)| (p - q) * (p - q)).sum::<f64>().sqrt();
            Ok((x, residual, condition))
        })
        .or_raise()?;
    let info = PyDict::new(py);
    info.set_item("residual_norm", residual)?;
    info.set_item("standard_errors", py.None())?;
    info.set_item("condition", condition)?;
    Ok((wrap(x), info))
}

/// `a`, which must be exactly symmetric, in the storage named.
fn symmetric(py: Python<'_>, a: &PyArray, storage_name: &str) -> PyResult<Sym<f64>> {
    let storage = storage(storage_name)?;
    let a = a.inner.try_clone().or_raise()?;
    py.detach(move || {
        let sym = Sym::from_symmetric(a)?;
        if storage == SymStorage::Rfp { sym.to_rfp() } else { Ok(sym) }
    })
    .or_raise()
}

/// A Cholesky factor.
#[pyclass(name = "Cholesky", module = "gpumat._gpumat", frozen)]
struct PyCholesky {
    inner: gpumat::Cholesky<f64>,
}

#[pymethods]
impl PyCholesky {
    fn solve(&self, py: Python<'_>, b: &PyArray) -> PyResult<PyArray> {
        let (f, b) = (&self.inner, &b.inner);
        Ok(wrap(py.detach(|| f.solve(b)).or_raise()?))
    }
    fn logdet(&self, py: Python<'_>) -> PyResult<f64> {
        let f = &self.inner;
        py.detach(|| f.log_det()).or_raise()
    }
    /// `L` as a dense lower-triangular matrix.
    fn lower(&self, py: Python<'_>) -> PyResult<PyArray> {
        let f = &self.inner;
        Ok(wrap(py.detach(|| f.factor().and_then(|t| t.to_dense())).or_raise()?))
    }
    #[getter]
    fn storage(&self) -> &'static str {
        if self.inner.is_packed() { "rfp" } else { "full" }
    }
}

#[pyfunction]
fn cholesky(py: Python<'_>, a: &PyArray, storage_name: &str) -> PyResult<PyCholesky> {
    let a = symmetric(py, a, storage_name)?;
    Ok(PyCholesky { inner: py.detach(|| a.cholesky()).or_raise()? })
}

/// An LU factorization with partial pivoting.
#[pyclass(name = "Lu", module = "gpumat._gpumat", frozen)]
struct PyLu {
    inner: gpumat::Lu<f64>,
}

#[pymethods]
impl PyLu {
    fn solve(&self, py: Python<'_>, b: &PyArray) -> PyResult<PyArray> {
        let (f, b) = (&self.inner, &b.inner);
        Ok(wrap(py.detach(|| f.solve(b)).or_raise()?))
    }
    fn det(&self, py: Python<'_>) -> PyResult<f64> {
        let f = &self.inner;
        py.detach(|| f.det()).or_raise()
    }
    /// `(sign, log|det|)`.
    fn slogdet(&self, py: Python<'_>) -> PyResult<(f64, f64)> {
        let f = &self.inner;
        py.detach(|| f.sign_log_abs_det()).or_raise()
    }
    fn rcond(&self, py: Python<'_>) -> PyResult<f64> {
        let f = &self.inner;
        py.detach(|| f.rcond()).or_raise()
    }
}

#[pyfunction]
fn lu(py: Python<'_>, a: &PyArray) -> PyResult<PyLu> {
    let a = &a.inner;
    Ok(PyLu { inner: py.detach(|| a.lu()).or_raise()? })
}

#[pyfunction]
fn inv(py: Python<'_>, a: &PyArray) -> PyResult<PyArray> {
    let a = &a.inner;
    Ok(wrap(py.detach(|| a.inverse()).or_raise()?))
}

#[pyfunction]
fn det(py: Python<'_>, a: &PyArray) -> PyResult<f64> {
    let a = &a.inner;
    py.detach(|| a.det()).or_raise()
}

/// `(Q, R)` of the economic QR factorization, and with `pivoting` the
/// column order `P` (`a[:, P] = Q·R`, `|R(j, j)|` non-increasing).
#[pyfunction]
#[pyo3(signature = (a, pivoting=false))]
fn qr(py: Python<'_>, a: &PyArray, pivoting: bool) -> PyResult<(PyArray, PyArray, Option<Vec<usize>>)> {
    let a = &a.inner;
    let (q, r, p) = py
        .detach(|| -> gpumat::Result<_> {
            if pivoting {
                let f = a.qr_pivoted()?;
                Ok((f.qr().q()?, f.qr().r()?, Some(f.permutation().to_vec())))
            } else {
                let f = a.qr()?;
                Ok((f.q()?, f.r()?, None))
            }
        })
        .or_raise()?;
    Ok((wrap(q), wrap(r), p))
}

/// `(R, pivot columns, rank)` of the reduced row echelon form.
#[pyfunction]
#[pyo3(signature = (a, tol=None))]
fn rref(py: Python<'_>, a: &PyArray, tol: Option<f64>) -> PyResult<(PyArray, Vec<usize>, usize)> {
    let a = &a.inner;
    let r = py.detach(|| a.rref(tol)).or_raise()?;
    Ok((wrap(r.matrix), r.pivots, r.rank))
}

/// `A·diag(d)²·Aᵀ`, both triangles filled.
#[pyfunction]
fn scaled_gram(py: Python<'_>, a: &PyArray, d: &PyArray) -> PyResult<PyArray> {
    let (a, d) = (&a.inner, &d.inner);
    Ok(wrap(py.detach(|| a.scaled_gram(d).and_then(|g| g.to_dense())).or_raise()?))
}

/// A pivoted LDLᵀ factorization of a symmetric matrix.
#[pyclass(name = "Ldlt", module = "gpumat._gpumat", frozen)]
struct PyLdlt {
    inner: gpumat::Ldlt<f64>,
}

#[pymethods]
impl PyLdlt {
    fn solve(&self, py: Python<'_>, b: &PyArray) -> PyResult<PyArray> {
        let (f, b) = (&self.inner, &b.inner);
        Ok(wrap(py.detach(|| f.solve(b)).or_raise()?))
    }
    /// `(positive, negative, zero)` eigenvalue counts.
    fn inertia(&self) -> (usize, usize, usize) {
        let i = self.inner.inertia();
        (i.positive, i.negative, i.zero)
    }
    /// `(sign, log|det|)`.
    fn slogdet(&self) -> (f64, f64) {
        self.inner.sign_log_det()
    }
}

#[pyfunction]
fn ldlt(py: Python<'_>, a: &PyArray, storage_name: &str) -> PyResult<PyLdlt> {
    let a = symmetric(py, a, storage_name)?;
    Ok(PyLdlt { inner: py.detach(|| a.ldlt()).or_raise()? })
}

/// A linear program with dense `A` (column-major, `m × n`): a dict with the
/// status, objective, `x`, row duals `y`, reduced costs, iterations and
/// timings.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (device, m, n, a, c, row_lower, row_upper, lower, upper, maximize, tol, max_iterations, storage_name, precision))]
fn lp_solve<'py>(
    py: Python<'py>,
    device: &PyDevice,
    m: usize,
    n: usize,
    a: PyReadonlyArray1<'py, f64>,
    c: PyReadonlyArray1<'py, f64>,
    row_lower: PyReadonlyArray1<'py, f64>,
    row_upper: PyReadonlyArray1<'py, f64>,
    lower: PyReadonlyArray1<'py, f64>,
    upper: PyReadonlyArray1<'py, f64>,
    maximize: bool,
    tol: f64,
    max_iterations: usize,
    storage_name: &str,
    precision: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let sense = if maximize { Sense::Maximize } else { Sense::Minimize };
    let vec = |v: PyReadonlyArray1<'py, f64>| v.to_vec().map_err(|e| PyValueError::new_err(e.to_string()));
    let problem = DenseLp {
        sense,
        m,
        n,
        a: vec(a)?,
        c: vec(c)?,
        constant: 0.0,
        row_lower: vec(row_lower)?,
        row_upper: vec(row_upper)?,
        lower: vec(lower)?,
        upper: vec(upper)?,
    };
    solve_lp(py, device, problem, tol, max_iterations, storage_name, precision)
}

/// Solves `problem` and reports it as a dict.
fn solve_lp<'py>(
    py: Python<'py>,
    device: &PyDevice,
    problem: DenseLp,
    tol: f64,
    max_iterations: usize,
    storage_name: &str,
    precision: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let precision = match precision {
        "f64" => LpPrecision::F64,
        "mixed" => LpPrecision::Mixed,
        _ => return Err(PyValueError::new_err(format!("precision must be 'f64' or 'mixed', not {precision:?}"))),
    };
    let options = LpOptions { tolerance: tol, max_iterations, storage: storage(storage_name)?, precision, scale: true };
    let dev = device.inner.clone();
    let s = py.detach(move || lp::solve(&dev, problem, &options)).or_raise()?;
    let out = PyDict::new(py);
    out.set_item("status", s.status.name())?;
    out.set_item("detail", &s.detail)?;
    out.set_item("fun", s.objective)?;
    out.set_item("dual_objective", s.dual_objective)?;
    out.set_item("x", PyArray1::from_vec(py, s.x))?;
    out.set_item("y", PyArray1::from_vec(py, s.y))?;
    out.set_item("reduced_costs", PyArray1::from_vec(py, s.reduced_costs))?;
    out.set_item("primal_residual", s.primal_residual)?;
    out.set_item("dual_residual", s.dual_residual)?;
    out.set_item("gap", s.relative_gap)?;
    out.set_item("iterations", s.iterations)?;
    out.set_item("seconds", s.timings.total)?;
    out.set_item("notes", s.notes)?;
    Ok(out)
}

/// The linear program of an MPS file (`fixed` or free format), solved as
/// [`lp_solve`] does, with the columns' and rows' names and the reader's
/// notes.
#[pyfunction]
#[pyo3(signature = (device, path, fixed, maximize, tol, max_iterations, storage_name, precision))]
#[allow(clippy::too_many_arguments)]
fn lp_mps<'py>(
    py: Python<'py>,
    device: &PyDevice,
    path: std::path::PathBuf,
    fixed: bool,
    maximize: Option<bool>,
    tol: f64,
    max_iterations: usize,
    storage_name: &str,
    precision: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let format = if fixed { MpsFormat::Fixed } else { MpsFormat::Free };
    let mut problem = py.detach(|| read_mps(&path, format)).or_raise()?;
    if let Some(max) = maximize {
        problem.sense = if max { Sense::Maximize } else { Sense::Minimize };
    }
    let dense = DenseLp::from_mps(&problem).or_raise()?;
    let out = solve_lp(py, device, dense, tol, max_iterations, storage_name, precision)?;
    out.set_item("columns", problem.columns)?;
    out.set_item("rows", problem.rows.into_iter().map(|(name, _)| name).collect::<Vec<_>>())?;
    out.get_item("notes")?.map(|n| n.call_method1("extend", (problem.notes,))).transpose()?;
    Ok(out)
}

/// A batch's solutions, flat, and each member's exception or `None`.
type Members<'py> = (Bound<'py, PyArray1<f64>>, Vec<Option<Py<PyAny>>>);

/// Each failed member's exception (with `.index`), or `None`.
fn member_errors(py: Python<'_>, errors: impl Iterator<Item = Option<Error>>) -> PyResult<Vec<Option<Py<PyAny>>>> {
    errors
        .enumerate()
        .map(|(index, e)| {
            e.map(|e| {
                let err = exception(py, &Error::InBatch { index, source: Box::new(e) })?;
                Ok(err.value(py).clone().into_any().unbind())
            })
            .transpose()
        })
        .collect()
}

/// `count` dense systems `A_s·X_s = B_s` at once (`a`: the `n × n` members
/// one after another, column-major; `b`: the `n × k` ones): `x` in the same
/// layout and each member's failure or `None`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn solve_batched<'py>(
    py: Python<'py>,
    device: &PyDevice,
    n: usize,
    k: usize,
    count: usize,
    a: PyReadonlyArray1<'py, f64>,
    b: PyReadonlyArray1<'py, f64>,
    method: &str,
) -> PyResult<Members<'py>> {
    let cholesky = match method {
        "lu" => false,
        "cholesky" => true,
        _ => return Err(PyValueError::new_err(format!("method must be 'lu' or 'cholesky', not {method:?}"))),
    };
    let dev = &device.inner;
    let (a, b) = (
        a.as_slice().map_err(|e| PyValueError::new_err(e.to_string()))?,
        b.as_slice().map_err(|e| PyValueError::new_err(e.to_string()))?,
    );
    let (x, status) = py
        .detach(|| {
            let a = Batch::from_host(dev, (n, n), count, a)?;
            let b = Batch::from_host(dev, (n, k), count, b)?;
            let f = if cholesky { batch::cholesky(&a)? } else { batch::lu(&a)? };
            let x = f.solve(&b)?.to_host()?;
            Ok::<_, Error>((x, f.status().to_vec()))
        })
        .or_raise()?;
    Ok((PyArray1::from_vec(py, x), member_errors(py, status.into_iter().map(|s| s.error()))?))
}

/// `count` tridiagonal systems (each argument the `m`-vectors one after
/// another): `x` and each system's failure or `None`.
#[pyfunction]
fn solve_tridiagonal<'py>(
    py: Python<'py>,
    device: &PyDevice,
    m: usize,
    count: usize,
    parts: [PyReadonlyArray1<'py, f64>; 4],
    pivoting: bool,
) -> PyResult<Members<'py>> {
    let dev = &device.inner;
    let slices: Vec<&[f64]> = parts
        .iter()
        .map(|p| p.as_slice().map_err(|e| PyValueError::new_err(e.to_string())))
        .collect::<PyResult<_>>()?;
    let method = if pivoting { TridiagonalMethod::PartialPivoting } else { TridiagonalMethod::NoPivoting };
    let (x, status) = py
        .detach(|| {
            let [dl, d, du, b] = [0, 1, 2, 3].map(|i| Batch::from_host(dev, (m, 1), count, slices[i]));
            let s = batch::solve_tridiagonal(&dl?, &d?, &du?, &b?, method)?;
            Ok::<_, Error>((s.x.to_host()?, s.status))
        })
        .or_raise()?;
    Ok((PyArray1::from_vec(py, x), member_errors(py, status.into_iter().map(|s| s.error()))?))
}

/// Time steps between two looks for Ctrl-C.
const SIGNAL_STEPS: u64 = 64;

/// The shallow-water equations by Casulli's (1990) semi-implicit scheme
/// (`gpumat::apps::swe`): still water over the bathymetry `h` (depth below
/// the datum, `nx × ny`) with the surface `z`, on cells of `dx × dy`
/// metres, stepped by `dt` seconds; Chézy friction `chezy` (infinite: none)
/// and wetting and drying when `drying`.
#[pyclass(name = "ShallowWater", module = "gpumat._gpumat", unsendable)]
struct PyShallowWater {
    inner: swe::Model,
}

#[pymethods]
impl PyShallowWater {
    #[new]
    #[pyo3(signature = (device, h, z, dx, dy, dt, chezy=f64::INFINITY, drying=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        device: &PyDevice,
        h: PyReadonlyArrayDyn<'_, f64>,
        z: PyReadonlyArrayDyn<'_, f64>,
        dx: f64,
        dy: f64,
        dt: f64,
        chezy: f64,
        drying: bool,
    ) -> PyResult<Self> {
        let (h, nx, ny) = col_major(&h)?;
        let (z, zx, zy) = col_major(&z)?;
        if (zx, zy) != (nx, ny) {
            return Err(raise(Error::dims("ShallowWater", format!("h is {nx}×{ny} but z is {zx}×{zy}"))));
        }
        let grid = swe::Grid::new(nx, ny, dx, dy).or_raise()?;
        let params = swe::Params { drying, ..swe::Params::new(dt).with_chezy(chezy) };
        let fields = swe::Fields::at_rest(&grid, h, z);
        let execution = swe::Execution::Device(device.inner.clone());
        let inner = py.detach(move || swe::Model::new(grid, params, &fields, execution)).or_raise()?;
        Ok(PyShallowWater { inner })
    }

    /// Takes `steps` time steps, in runs of at most `SIGNAL_STEPS` with a
    /// look for Ctrl-C between them, which raises `KeyboardInterrupt`
    /// after the run under way.
    fn advance(&mut self, py: Python<'_>, steps: u64) -> PyResult<()> {
        let mut left = steps;
        while left > 0 {
            let run = left.min(SIGNAL_STEPS);
            self.inner.advance(run).or_raise()?;
            left -= run;
            py.check_signals()?;
        }
        Ok(())
    }

    /// Seconds simulated.
    #[getter]
    fn time(&self) -> f64 {
        self.inner.time()
    }

    #[getter]
    fn steps(&self) -> u64 {
        self.inner.steps()
    }

    /// `{"h", "z", "u", "v"}` as flat column-major arrays with their
    /// shapes, checked (finite, wet, Courant number in bounds), and the
    /// diagnostics (volume, smallest depth, Courant number).
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (f, d) = self.inner.check().or_raise()?;
        let [sc, su, sv] = self.inner.grid().shapes();
        let out = PyDict::new(py);
        for (name, data, shape) in [("h", f.h, sc), ("z", f.z, sc), ("u", f.u, su), ("v", f.v, sv)] {
            out.set_item(name, (PyArray1::from_vec(py, data), shape))?;
        }
        out.set_item("volume", d.volume)?;
        out.set_item("min_depth", d.min_depth)?;
        out.set_item("courant", d.courant)?;
        Ok(out)
    }
}

/// A CUDA tensor of another library (CuPy, PyTorch) as an array on
/// `device`, shared without a copy when column-major (see `dlpack`).
#[pyfunction]
fn from_dlpack(py: Python<'_>, device: &PyDevice, x: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    Ok(wrap(dlpack::import(py, &device.inner, x)?))
}

#[pymodule]
fn _gpumat(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDevice>()?;
    m.add_class::<PyArray>()?;
    m.add_class::<PyCholesky>()?;
    m.add_class::<PyLu>()?;
    m.add_class::<PyLdlt>()?;
    m.add_class::<PyShallowWater>()?;
    for f in [
        wrap_pyfunction!(solve, m)?,
        wrap_pyfunction!(lstsq, m)?,
        wrap_pyfunction!(cholesky, m)?,
        wrap_pyfunction!(lu, m)?,
        wrap_pyfunction!(inv, m)?,
        wrap_pyfunction!(det, m)?,
        wrap_pyfunction!(rref, m)?,
        wrap_pyfunction!(qr, m)?,
        wrap_pyfunction!(scaled_gram, m)?,
        wrap_pyfunction!(ldlt, m)?,
        wrap_pyfunction!(lp_solve, m)?,
        wrap_pyfunction!(lp_mps, m)?,
        wrap_pyfunction!(from_dlpack, m)?,
        wrap_pyfunction!(solve_batched, m)?,
        wrap_pyfunction!(solve_tridiagonal, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
