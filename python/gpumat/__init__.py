"""gpumat: dense linear algebra on NVIDIA GPUs, with the CPU as an equal
fallback.

Functions take NumPy arrays (or anything ``numpy.asarray`` takes) and
return NumPy arrays; they also take :class:`Array`, a matrix resident on a
:class:`Device`, and then return :class:`Array` on the same device, so that
a chain of calls on the GPU never leaves it. Work runs on
:func:`device` unless a ``device=`` is given: the GPU when there is one
(``GPUMAT_DEVICE=cpu|cuda`` forces a choice), else the CPU.

Arrays are float64. Integer and boolean input is converted, as NumPy's
``linalg`` does; complex input is refused. Arrays are copied only when the
layout demands it: on the CPU a Fortran-ordered float64 array (or vector) is
shared, not copied; on the GPU a host array is copied once into the device's
memory, straight from its buffer when it is Fortran-ordered; a C-ordered or
strided array is rearranged to column-major during its one copy, and other
dtypes are converted. Failures are exceptions
derived from :class:`LinAlgError` (a :class:`numpy.linalg.LinAlgError`).

>>> import numpy as np, gpumat
>>> a = np.array([[4.0, 1.0], [1.0, 3.0]])
>>> x = gpumat.solve(a, np.array([1.0, 2.0]))
>>> bool(np.allclose(a @ x, [1.0, 2.0]))
True
"""

import os
from collections import namedtuple

import numpy as np

from . import _gpumat
from ._errors import (
    DeviceError,
    FileError,
    IllConditionedError,
    InvalidArgumentError,
    LinAlgError,
    NonFiniteError,
    NotConvergedError,
    NotPositiveDefiniteError,
    NotSymmetricError,
    OutOfMemoryError,
    ParseError,
    RangeError,
    RankDeficientError,
    ShapeError,
    SingularMatrixError,
    WeightError,
    ZeroPivotError,
)
from ._gpumat import Array, Device

__all__ = [
    "Array",
    "Device",
    "device",
    "asarray",
    "from_dlpack",
    "solve",
    "lstsq",
    "cholesky",
    "lu",
    "ldlt",
    "inv",
    "det",
    "rref",
    "qr",
    "scaled_gram",
    "fit",
    "solve_batched",
    "solve_tridiagonal",
    "ShallowWater",
    "lp",
    "lp_file",
    "LinAlgError",
    "NotPositiveDefiniteError",
    "SingularMatrixError",
    "ZeroPivotError",
    "IllConditionedError",
    "RankDeficientError",
    "NotConvergedError",
    "RangeError",
    "ShapeError",
    "NonFiniteError",
    "NotSymmetricError",
    "WeightError",
    "InvalidArgumentError",
    "ParseError",
    "FileError",
    "OutOfMemoryError",
    "DeviceError",
]

_default = None


def device():
    """The device work runs on by default: ``GPUMAT_DEVICE`` if set, else
    the GPU when there is one, else the CPU.

    >>> gpumat.device().kind in ("cpu", "cuda")
    True
    """
    global _default
    if _default is None:
        _default = Device(os.environ.get("GPUMAT_DEVICE", "auto"))
    return _default


def asarray(x, device=None):
    """``x`` as an :class:`Array` on ``device`` (the default device when
    None). An :class:`Array` already there is returned as it is. On the CPU
    a Fortran-ordered float64 array is shared without a copy (as
    ``numpy.asarray`` shares: later writes to ``x`` are seen, and writing it
    from another thread while gpumat computes with it is a data race);
    anything else is copied once, as the module's introduction says.

    >>> a = gpumat.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> a.shape
    (2, 2)
    >>> a.numpy().tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    if isinstance(x, Array):
        if device is None or device.kind == x.device.kind:
            return x
        x = x.numpy()
    dev = device if device is not None else globals()["device"]()
    return Array.from_numpy(dev, _host(x))


def _on_gpu(x):
    """Whether ``x`` is another library's CUDA array (CuPy, PyTorch)."""
    try:
        return not isinstance(x, Array) and x.__dlpack_device__()[0] == 2
    except (AttributeError, TypeError):
        return False


def from_dlpack(x, device=None):
    """An :class:`Array` sharing the memory of ``x``, a CUDA array of
    another library (a CuPy array, a PyTorch tensor) or any DLPack producer:
    no copy for a float64 vector or Fortran-ordered (column-major) matrix,
    one copy on the device (a transpose) for a C-ordered one. The
    producer's pending work is ordered before gpumat's through DLPack's
    ``stream``. Host producers (NumPy) go through :func:`asarray`.
    The reverse needs nothing: ``cupy.from_dlpack(a)`` and
    ``torch.from_dlpack(a)`` share an :class:`Array`'s memory.
    """
    if not _on_gpu(x):
        return asarray(np.from_dlpack(x), device)
    dev = device if device is not None else globals()["device"]()
    return _gpumat.from_dlpack(dev, x)


def _host(x, name="array"):
    """``x`` as a float64 NumPy array of one or two dimensions."""
    a = np.asarray(x)
    if a.dtype.kind == "c":
        raise TypeError(f"{name} is complex ({a.dtype}); gpumat works in real arithmetic")
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{name} has dtype {a.dtype}; expected numbers")
    if a.ndim not in (1, 2):
        raise ShapeError(f"{name} has {a.ndim} dimensions; expected 1 (a vector) or 2 (a matrix)")
    return a.astype(np.float64, copy=False)


class _Call:
    """The arrays of one call on one device, and how to give results back:
    NumPy when every input was a host array, :class:`Array` otherwise."""

    def __init__(self, device, **arrays):
        given = [a for a in arrays.values() if a is not None]
        resident = [a for a in given if isinstance(a, Array)]
        foreign = [a for a in given if _on_gpu(a)]
        self.host = not resident and not foreign
        # Results go back to the library of the first CUDA array given.
        self.library = _library(foreign[0]) if foreign and not resident else None
        self.device = device or (resident[0].device if resident else globals()["device"]())
        self.vectors = {k: (not isinstance(a, Array) and np.ndim(a) == 1) for k, a in arrays.items() if a is not None}
        self.arrays = {k: _operand(a, k, self.device) if a is not None else None for k, a in arrays.items()}

    def __getitem__(self, name):
        return self.arrays[name]

    def out(self, array, like=None):
        """``array`` as the caller gave its inputs (NumPy, the CUDA library's
        own type, or :class:`Array`); a vector where input ``like`` was
        one."""
        if self.host:
            out = array.numpy()
        elif self.library is not None:
            out = self.library.from_dlpack(array)
        else:
            return array
        return out[:, 0] if like is not None and self.vectors.get(like) else out


def _library(x):
    """The module whose ``from_dlpack`` makes arrays like ``x``."""
    import importlib

    return importlib.import_module(type(x).__module__.split(".")[0])


def _operand(a, name, device):
    if isinstance(a, Array):
        return a
    if _on_gpu(a):
        return from_dlpack(a, device)
    return Array.from_numpy(device, _host(a, name))


def _solve_with(factor, call, b):
    """``factor.solve`` for a right-hand side given as the factor's input was."""
    inner = _Call(call.device, b=b)
    return inner.out(factor.solve(inner["b"]), like="b")


def solve(a, b, method="auto", precision="f64", storage="full", factor_precision=None, device=None, info=False):
    """``x`` with ``a @ x = b``.

    ``method``: ``"auto"`` (Cholesky for an exactly symmetric ``a``, pivoted
    LDLᵀ if that finds it indefinite, LU otherwise), ``"cholesky"``,
    ``"ldlt"`` or ``"lu"``. ``precision="mixed"`` factors in low precision
    (``factor_precision``: ``"fp16x3"`` on a GPU, ``"f32"`` on a CPU by
    default) and refines to float64 accuracy. ``storage="rfp"`` keeps a
    symmetric factor in half the memory. A matrix singular to working
    precision raises :class:`IllConditionedError`. With ``info=True`` the
    result is ``(x, dict)``: the method, the reciprocal condition estimate,
    the backward error and (mixed) the refinement.

    >>> a = np.array([[2.0, 1.0], [1.0, 2.0]])
    >>> x, about = gpumat.solve(a, [3.0, 3.0], info=True)
    >>> x.round(12).tolist(), about["method"]
    ([1.0, 1.0], 'cholesky')
    """
    call = _Call(device, a=a, b=b)
    x, about = _gpumat.solve(call["a"], call["b"], method, precision, storage, factor_precision)
    x = call.out(x, like="b")
    return (x, about) if info else x


LstsqResult = namedtuple("LstsqResult", ["x", "residual_norm", "standard_errors", "condition"])


def lstsq(a, b, weights=None, device=None):
    """Weighted linear least squares: ``x`` minimizing
    ``‖diag(weights)·(b − a @ x)‖₂`` for ``a`` with at least as many rows as
    columns, stable for ill-conditioned designs (QR with refinement).
    For ``a`` with fewer rows than columns (and no weights), the ``x`` of
    least norm with ``a @ x = b``, as ``numpy.linalg.lstsq`` gives (QR of
    ``a.T``; ``a`` must have full row rank).
    Returns ``LstsqResult(x, residual_norm, standard_errors, condition)``.

    >>> t = np.linspace(0.0, 1.0, 20)
    >>> fit = gpumat.lstsq(np.vander(t, 3), 1.0 + 2.0 * t - t**2)
    >>> fit.x.round(10).tolist()
    [-1.0, 2.0, 1.0]
    """
    call = _Call(device, a=a, b=b, weights=weights)
    x, about = _gpumat.lstsq(call["a"], call["b"], call["weights"])
    x = call.out(x, like="b")
    errors = about["standard_errors"]
    return LstsqResult(x, about["residual_norm"], None if errors is None else np.array(errors), about["condition"])


class Cholesky:
    """``a = L·Lᵀ`` of a symmetric positive definite matrix (from
    :func:`cholesky`)."""

    def __init__(self, factor, call):
        self._factor, self._call = factor, call

    def solve(self, b):
        """``x`` with ``a @ x = b``."""
        return _solve_with(self._factor, self._call, b)

    def logdet(self):
        """``log det a``."""
        return self._factor.logdet()

    @property
    def L(self):
        """The lower-triangular factor, dense."""
        return self._call.out(self._factor.lower())

    @property
    def storage(self):
        """``"full"`` or ``"rfp"`` (half the memory)."""
        return self._factor.storage


def cholesky(a, storage="full", device=None):
    """The Cholesky factorization of a symmetric positive definite ``a``
    (exactly symmetric: :class:`NotSymmetricError` otherwise), in full or
    RFP storage; :class:`NotPositiveDefiniteError` names the failed column.

    >>> f = gpumat.cholesky(np.array([[4.0, 2.0], [2.0, 3.0]]))
    >>> f.L.round(12).tolist()
    [[2.0, 0.0], [1.0, 1.414213562373]]
    >>> bool(abs(f.logdet() - np.log(8.0)) < 1e-12)
    True
    """
    call = _Call(device, a=a)
    return Cholesky(_gpumat.cholesky(call["a"], storage), call)


class LU:
    """``P·a = L·U`` with partial pivoting (from :func:`lu`)."""

    def __init__(self, factor, call):
        self._factor, self._call = factor, call

    def solve(self, b):
        """``x`` with ``a @ x = b``."""
        return _solve_with(self._factor, self._call, b)

    def det(self):
        return self._factor.det()

    def slogdet(self):
        """``(sign, log|det a|)``, as :func:`numpy.linalg.slogdet`."""
        return self._factor.slogdet()

    def rcond(self):
        """An estimate of ``1/κ₁(a)``."""
        return self._factor.rcond()


def lu(a, device=None):
    """The LU factorization with partial pivoting of a square ``a``;
    :class:`SingularMatrixError` names an exactly zero pivot.

    >>> f = gpumat.lu(np.array([[0.0, 2.0], [3.0, 1.0]]))
    >>> f.det()
    -6.0
    """
    call = _Call(device, a=a)
    return LU(_gpumat.lu(call["a"]), call)


class LDLT:
    """``P·a·Pᵀ = L·D·Lᵀ`` of a symmetric matrix, definite or not (from
    :func:`ldlt`)."""

    def __init__(self, factor, call):
        self._factor, self._call = factor, call

    def solve(self, b):
        """``x`` with ``a @ x = b``."""
        return _solve_with(self._factor, self._call, b)

    @property
    def inertia(self):
        """``(positive, negative, zero)``: the counts of ``a``'s eigenvalues
        of each sign."""
        return self._factor.inertia()

    def slogdet(self):
        """``(sign, log|det a|)``."""
        return self._factor.slogdet()


def ldlt(a, storage="full", device=None):
    """The pivoted LDLᵀ factorization of an exactly symmetric ``a``.

    >>> gpumat.ldlt(np.array([[1.0, 2.0], [2.0, 1.0]])).inertia
    (1, 1, 0)
    """
    call = _Call(device, a=a)
    return LDLT(_gpumat.ldlt(call["a"], storage), call)


def inv(a, device=None):
    """The inverse of a square ``a`` (through LU; :class:`IllConditionedError`
    when it is singular to working precision).

    >>> gpumat.inv(np.array([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    call = _Call(device, a=a)
    return call.out(_gpumat.inv(call["a"]))


def det(a, device=None):
    """The determinant of a square ``a`` (0 when it is singular).

    >>> gpumat.det(np.array([[1.0, 2.0], [3.0, 4.0]]))
    -2.0
    """
    call = _Call(device, a=a)
    return _gpumat.det(call["a"])


def rref(a, tol=None, device=None):
    """The reduced row echelon form of ``a`` by Gauss-Jordan elimination:
    ``(R, pivot_columns)``, the columns 0-based; ``len(pivot_columns)`` is
    the numerical rank at ``tol``.

    >>> r, pivots = gpumat.rref(np.array([[1.0, 2.0], [2.0, 4.0]]))
    >>> r.tolist(), pivots
    ([[1.0, 2.0], [0.0, 0.0]], [0])
    """
    call = _Call(device, a=a)
    r, pivots, _rank = _gpumat.rref(call["a"], tol)
    return call.out(r), pivots


def qr(a, pivoting=False, device=None):
    """The economic QR factorization of an m × n ``a``: ``(Q, R)``, ``Q``
    m × k with orthonormal columns and ``R`` k × n upper trapezoidal,
    k = min(m, n), as ``scipy.linalg.qr(a, mode="economic")``. With
    ``pivoting=True``, ``(Q, R, P)`` with ``a[:, P] == Q @ R`` and
    ``|R[j, j]|`` non-increasing (column pivoting, which reveals the
    numerical rank; column by column, slower than the plain factorization).

    >>> q, r = gpumat.qr(np.array([[3.0], [4.0]]))
    >>> round(float(abs(r[0, 0])), 12), q.shape
    (5.0, (2, 1))
    """
    call = _Call(device, a=a)
    q, r, p = _gpumat.qr(call["a"], pivoting)
    if pivoting:
        return call.out(q), call.out(r), p
    return call.out(q), call.out(r)


def scaled_gram(a, d, device=None):
    """``a @ diag(d)**2 @ a.T``, computed from one triangle.

    >>> gpumat.scaled_gram(np.array([[1.0, 2.0]]), np.array([3.0, 1.0])).tolist()
    [[13.0]]
    """
    call = _Call(device, a=a, d=d)
    return call.out(_gpumat.scaled_gram(call["a"], call["d"]))


def _members(failures, x, check):
    """``x``, or the first failed member's exception (``.index``, with
    ``.failed``, every failed index, and ``.x``, the others' solutions)."""
    failed = {i: e for i, e in enumerate(failures) if e is not None}
    if check and failed:
        first = failed[min(failed)]
        first.failed, first.x = sorted(failed), x
        raise first
    return x if check else (x, failed)


def solve_batched(a, b, method="lu", check=True, device=None):
    """``count`` independent dense systems at once: ``a`` of shape
    ``(count, n, n)`` and ``b`` of ``(count, n)`` or ``(count, n, k)``;
    ``method`` ``"lu"`` (partial pivoting) or ``"cholesky"``. A failed
    member spoils none of the others: with ``check=True`` (the default) its
    exception is raised, naming it (``.index``), with ``.failed`` (every
    failed index) and ``.x`` (the solutions, NaN where failed); with
    ``check=False`` the result is ``(x, {index: exception})``. The members
    are rearranged into gpumat's column-major layout on the way (one copy).

    >>> a = np.array([np.eye(2) * 2.0, [[0.0, 1.0], [1.0, 0.0]]])
    >>> gpumat.solve_batched(a, np.ones((2, 2))).tolist()
    [[0.5, 0.5], [1.0, 1.0]]
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 3 or a.shape[1] != a.shape[2]:
        raise ShapeError(f"a has shape {a.shape}; expected (count, n, n)")
    count, n = a.shape[0], a.shape[1]
    vector = b.ndim == 2
    b3 = b[:, :, None] if vector else b
    if b3.ndim != 3 or b3.shape[:2] != (count, n):
        raise ShapeError(f"b has shape {b.shape}; expected ({count}, {n}) or ({count}, {n}, k)")
    k = b3.shape[2]
    column_major = lambda m: np.ascontiguousarray(np.swapaxes(m, 1, 2)).ravel()  # noqa: E731
    dev = device if device is not None else globals()["device"]()
    x, failures = _gpumat.solve_batched(dev, n, k, count, column_major(a), column_major(b3), method)
    x = np.swapaxes(x.reshape(count, k, n), 1, 2)
    return _members(failures, x[:, :, 0] if vector else x, check)


def solve_tridiagonal(dl, d, du, b, pivoting=False, check=True, device=None):
    """``count`` tridiagonal systems at once, each argument of shape
    ``(count, m)`` (or ``(m,)`` for one system): ``dl[s, i]`` is
    ``T(i, i−1)`` (``dl[s, 0]`` not read), ``d`` the diagonal, ``du[s, i]``
    is ``T(i, i+1)`` (``du[s, m−1]`` not read), ``b`` the right-hand side.
    Thomas's elimination without pivoting (diagonally dominant or SPD
    systems), or with ``pivoting=True`` partial pivoting as LAPACK's
    ``dgtsv``. Failures as :func:`solve_batched`.

    >>> gpumat.solve_tridiagonal([0.0, 1.0, 1.0], [4.0, 4.0, 4.0], [1.0, 1.0, 0.0], [5.0, 6.0, 5.0]).tolist()
    [1.0, 1.0, 1.0]
    """
    parts = [np.asarray(v, dtype=np.float64) for v in (dl, d, du, b)]
    single = parts[1].ndim == 1
    parts = [np.atleast_2d(v) for v in parts]
    shape = parts[1].shape
    if len(shape) != 2 or any(v.shape != shape for v in parts):
        raise ShapeError(f"dl, d, du and b must share one shape (count, m); got {[v.shape for v in parts]}")
    count, m = shape
    dev = device if device is not None else globals()["device"]()
    x, failures = _gpumat.solve_tridiagonal(dev, m, count, [np.ascontiguousarray(v).ravel() for v in parts], pivoting)
    x = x.reshape(count, m)
    return _members(failures, x[0] if single else x, check)


class ShallowWater:
    """The shallow-water equations with Chézy friction by Casulli's (1990)
    semi-implicit scheme, as ``gpumat swe`` runs them: still water at
    ``t = 0`` over the bathymetry ``h`` (depth below the datum, an
    ``nx × ny`` array) with the surface elevation ``z``, cells of
    ``dx × dy`` metres, time step ``dt`` seconds, ``chezy`` the friction
    coefficient (infinite: none), ``drying`` to let cells dry and flood.
    Each half step solves one tridiagonal system per grid line, all at once
    on the device.

    >>> h = np.full((40, 4), 10.0)
    >>> z = np.tile(0.1 * np.cos(np.pi * (np.arange(40) + 0.5) / 40)[:, None], (1, 4))
    >>> model = gpumat.ShallowWater(h, z, dx=100.0, dy=100.0, dt=5.0)
    >>> model.advance(20)
    >>> f = model.fields()
    >>> f["z"].shape, f["u"].shape, bool(abs(f["volume"] - 40 * 4 * 100.0**2 * 10.0) < 1e-6)
    ((40, 4), (41, 4), True)
    """

    def __init__(self, h, z, dx, dy, dt, chezy=float("inf"), drying=False, device=None):
        dev = device if device is not None else globals()["device"]()
        h, z = _host(h, "h"), _host(z, "z")
        self._model = _gpumat.ShallowWater(dev, h, z, dx, dy, dt, chezy, drying)

    def advance(self, steps):
        """Takes ``steps`` time steps."""
        self._model.advance(steps)

    @property
    def time(self):
        """Seconds simulated."""
        return self._model.time

    @property
    def steps(self):
        return self._model.steps

    def fields(self):
        """The fields, checked (finite, wet, Courant number in bounds): ``h``
        and ``z`` (``nx × ny``), ``u`` (``(nx+1) × ny``, on the faces across
        x), ``v`` (``nx × (ny+1)``), and the diagnostics ``volume`` (m³),
        ``min_depth`` and ``courant``."""
        out = self._model.fields()
        for name in ("h", "z", "u", "v"):
            flat, shape = out[name]
            out[name] = flat.reshape(shape, order="F")
        return out


FitResult = namedtuple("FitResult", ["coefficients", "standard_errors", "residual_norm", "condition", "model"])


def fit(x, y, basis="poly:1", sigma=None, device=None):
    """A weighted least-squares fit of a linear model to ``(x, y)``, as
    ``gpumat fit`` does: ``basis`` is ``"poly:DEG"`` (1, x, …, x^DEG) or
    ``"fourier:K[:PERIOD]"`` (1, cos(kωt), sin(kωt) for k ≤ K, t = x − min x,
    ω = 2π/PERIOD, by default the span of x); ``sigma`` are the measurement
    errors (weights 1/σ). Returns ``FitResult(coefficients, standard_errors,
    residual_norm, condition, model)`` where ``model(x)`` evaluates the fit.

    >>> t = np.linspace(0.0, 2.0, 30)
    >>> r = gpumat.fit(t, 3.0 - 0.5 * t**2, basis="poly:2")
    >>> (r.coefficients.round(10) + 0.0).tolist(), round(float(r.model(1.0)), 10)
    ([3.0, 0.0, -0.5], 2.5)
    """
    x, y = _host(x, "x").ravel(), _host(y, "y").ravel()
    parts = basis.strip().split(":")
    try:
        if parts[0] == "poly" and len(parts) == 2:
            degree = int(parts[1])

            def design(t):
                return np.vander(np.asarray(t, dtype=float).ravel(), degree + 1, increasing=True)

        elif parts[0] == "fourier" and len(parts) in (2, 3):
            harmonics, origin = int(parts[1]), x.min()
            period = float(parts[2]) if len(parts) == 3 else x.max() - origin
            if not period > 0:
                raise InvalidArgumentError("a Fourier basis needs a positive period (by default the span of x)")
            omega = 2.0 * np.pi / period

            def design(t):
                angle = np.outer(np.asarray(t, dtype=float).ravel() - origin, omega * np.arange(1, harmonics + 1))
                columns = [np.ones((angle.shape[0], 1))]
                for k in range(harmonics):
                    columns += [np.cos(angle[:, k : k + 1]), np.sin(angle[:, k : k + 1])]
                return np.hstack(columns)

        else:
            raise ValueError
        if int(parts[1]) < 0:
            raise ValueError
    except ValueError:
        raise InvalidArgumentError(
            f"malformed basis {basis!r}: expected poly:DEG or fourier:K[:PERIOD], e.g. poly:3 or fourier:2"
        ) from None
    weights = None if sigma is None else 1.0 / _host(sigma, "sigma").ravel()
    solution = lstsq(design(x), y, weights=weights, device=device)
    c = solution.x

    def model(t):
        values = design(t) @ c
        return values[0] if np.ndim(t) == 0 else values

    return FitResult(c, solution.standard_errors, solution.residual_norm, solution.condition, model)


LpResult = namedtuple(
    "LpResult",
    ["x", "fun", "status", "success", "message", "y", "reduced_costs", "nit", "primal_residual", "gap", "seconds"],
)


def _bounds(bounds, n):
    """SciPy's ``bounds`` (None: ``x ≥ 0``; one ``(lo, hi)`` pair for all;
    or one pair per variable, ``None`` for no bound) as two arrays."""
    if bounds is None:
        return np.zeros(n), np.full(n, np.inf)
    pairs = [bounds] * n if len(bounds) == 2 and np.ndim(bounds[0]) == 0 else list(bounds)
    if len(pairs) != n:
        raise ShapeError(f"bounds has {len(pairs)} pairs for {n} variables")
    lower = np.array([-np.inf if lo is None else lo for lo, _ in pairs], dtype=float)
    upper = np.array([np.inf if hi is None else hi for _, hi in pairs], dtype=float)
    return lower, upper


def lp(
    c,
    A_ub=None,
    b_ub=None,
    A_eq=None,
    b_eq=None,
    bounds=None,
    maximize=False,
    tol=1e-8,
    max_iterations=200,
    storage="full",
    precision="f64",
    device=None,
):
    """A linear program, in the form of :func:`scipy.optimize.linprog`:
    minimize (or, ``maximize=True``, maximize) ``c @ x`` subject to
    ``A_ub @ x <= b_ub``, ``A_eq @ x == b_eq`` and ``bounds`` (default
    ``x >= 0``), by gpumat's interior-point method on the normal equations.

    Returns an ``LpResult``: ``status`` is ``"optimal"``, ``"infeasible"``,
    ``"unbounded"``, ``"iteration limit"`` or ``"numerical failure"``
    (``success`` is whether it is optimal, ``message`` how it was decided);
    ``y`` are the rows' duals (``A_ub`` rows, then ``A_eq`` rows).

    >>> r = gpumat.lp([-1.0, -2.0], A_ub=[[1.0, 1.0]], b_ub=[4.0], bounds=(0, 3))
    >>> r.status, round(r.fun, 8), r.x.round(8).tolist()
    ('optimal', -7.0, [1.0, 3.0])
    """
    c = _host(c, "c").ravel()
    n = c.size
    blocks, lower_rows, upper_rows = [], [], []
    for a, b, equality in ((A_ub, b_ub, False), (A_eq, b_eq, True)):
        if a is None:
            continue
        a, b = np.atleast_2d(_host(a, "A")), _host(b, "b").ravel()
        if a.shape != (b.size, n):
            raise ShapeError(f"A is {a.shape[0]}×{a.shape[1]} but b has {b.size} entries and c {n}")
        blocks.append(a)
        lower_rows.append(b if equality else np.full(b.size, -np.inf))
        upper_rows.append(b)
    a = np.vstack(blocks) if blocks else np.zeros((0, n))
    lower, upper = _bounds(bounds, n)
    dev = device if device is not None else globals()["device"]()
    out = _gpumat.lp_solve(
        dev,
        a.shape[0],
        n,
        a.ravel(order="F"),
        c,
        np.concatenate(lower_rows) if blocks else np.zeros(0),
        np.concatenate(upper_rows) if blocks else np.zeros(0),
        lower,
        upper,
        maximize,
        tol,
        max_iterations,
        storage,
        precision,
    )
    return _lp_result(out)


def lp_file(path, format="free", maximize=None, tol=1e-8, max_iterations=200, storage="full", precision="f64", device=None):
    """The linear program of an MPS file (``format`` ``"free"`` or
    ``"fixed"``), as ``gpumat lp`` solves it: an ``LpResult`` as :func:`lp`
    returns, and ``(result, columns, rows)``: the names of ``x``'s entries
    and of ``y``'s. ``maximize`` overrides the file's OBJSENSE. A malformed
    file raises :class:`ParseError` naming the line.
    """
    if format not in ("free", "fixed"):
        raise ValueError(f"format must be 'free' or 'fixed', not {format!r}")
    dev = device if device is not None else globals()["device"]()
    out = _gpumat.lp_mps(dev, os.fspath(path), format == "fixed", maximize, tol, max_iterations, storage, precision)
    return _lp_result(out), out["columns"], out["rows"]


def _lp_result(out):
    return LpResult(
        x=out["x"],
        fun=out["fun"],
        status=out["status"],
        success=out["status"] == "optimal",
        message=out["detail"],
        y=out["y"],
        reduced_costs=out["reduced_costs"],
        nit=out["iterations"],
        primal_residual=out["primal_residual"],
        gap=out["gap"],
        seconds=out["seconds"],
    )
