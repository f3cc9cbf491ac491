"""The exceptions gpumat raises: one class for each kind of failure of the
library, all derived from :class:`LinAlgError`, itself a subclass of
:class:`numpy.linalg.LinAlgError` so that existing ``except`` clauses catch
them. Fields of the failure are attributes (``column`` of a Cholesky pivot,
``row`` and ``col`` of a non-finite entry, 1-based as in the message)."""

import numpy as np


class LinAlgError(np.linalg.LinAlgError):
    """Every error of gpumat."""


class NotPositiveDefiniteError(LinAlgError):
    """Cholesky met a non-positive pivot; ``.column`` (1-based) names it."""

    column = None


class SingularMatrixError(LinAlgError):
    """A zero pivot: the matrix is singular; ``.pivot`` (1-based)."""

    pivot = None


class ZeroPivotError(SingularMatrixError):
    """A factorization without pivoting met a tiny pivot in ``.column``."""

    column = None


class IllConditionedError(SingularMatrixError):
    """Singular to working precision: ``.rcond`` below the unit roundoff."""

    rcond = None


class RankDeficientError(LinAlgError):
    """A least-squares design without full column rank."""


class NotConvergedError(LinAlgError):
    """Iterative refinement did not converge (``.iterations``, ``.residual``)."""

    iterations = None
    residual = None


class RangeError(LinAlgError, ArithmeticError):
    """A result beyond the range of float64 (overflow or underflow)."""


class ShapeError(LinAlgError, ValueError):
    """Operand shapes that do not fit the operation."""


class NonFiniteError(LinAlgError, ValueError):
    """A NaN or infinity where finite input is required (``.row``, ``.col``,
    1-based, and ``.value``)."""

    row = None
    col = None
    value = None


class NotSymmetricError(LinAlgError, ValueError):
    """A matrix that must be exactly symmetric is not: ``A[row, col]`` differs
    from ``A[col, row]`` (1-based)."""

    row = None
    col = None


class WeightError(LinAlgError, ValueError):
    """A negative weight, or one whose square overflows."""


class InvalidArgumentError(LinAlgError, ValueError):
    """An option or argument outside its domain."""


class ParseError(LinAlgError, ValueError):
    """A malformed file: ``.path`` and ``.line`` (1-based)."""

    path = None
    line = None


class FileError(LinAlgError, OSError):
    """Reading or writing a file failed."""


class OutOfMemoryError(LinAlgError, MemoryError):
    """An allocation, on the device or the host, that does not fit."""


class DeviceError(LinAlgError, RuntimeError):
    """The device failed or could not be used."""
