from typing import Any, Callable, Literal, NamedTuple, Optional, Sequence, Union, overload

import numpy as np
import numpy.typing as npt

from ._errors import (
    DeviceError as DeviceError,
    FileError as FileError,
    IllConditionedError as IllConditionedError,
    InvalidArgumentError as InvalidArgumentError,
    LinAlgError as LinAlgError,
    NonFiniteError as NonFiniteError,
    NotConvergedError as NotConvergedError,
    NotPositiveDefiniteError as NotPositiveDefiniteError,
    NotSymmetricError as NotSymmetricError,
    OutOfMemoryError as OutOfMemoryError,
    ParseError as ParseError,
    RangeError as RangeError,
    RankDeficientError as RankDeficientError,
    ShapeError as ShapeError,
    SingularMatrixError as SingularMatrixError,
    WeightError as WeightError,
    ZeroPivotError as ZeroPivotError,
)
from ._gpumat import Array as Array, Device as Device

Host = npt.ArrayLike
Operand = Union[Host, Array, Any]  # also CuPy arrays and PyTorch CUDA tensors (DLPack)
Result = Union[npt.NDArray[np.float64], Array, Any]

def device() -> Device: ...
def asarray(x: Operand, device: Optional[Device] = None) -> Array: ...
def from_dlpack(x: Any, device: Optional[Device] = None) -> Array: ...
def solve(
    a: Operand,
    b: Operand,
    method: str = "auto",
    precision: str = "f64",
    storage: str = "full",
    factor_precision: Optional[str] = None,
    device: Optional[Device] = None,
    info: bool = False,
) -> Any: ...

class LstsqResult(NamedTuple):
    x: Result
    residual_norm: float
    standard_errors: Optional[npt.NDArray[np.float64]]
    condition: float

def lstsq(a: Operand, b: Operand, weights: Optional[Operand] = None, device: Optional[Device] = None) -> LstsqResult: ...

class Cholesky:
    def solve(self, b: Operand) -> Result: ...
    def logdet(self) -> float: ...
    @property
    def L(self) -> Result: ...
    @property
    def storage(self) -> str: ...

class LU:
    def solve(self, b: Operand) -> Result: ...
    def det(self) -> float: ...
    def slogdet(self) -> tuple[float, float]: ...
    def rcond(self) -> float: ...

class LDLT:
    def solve(self, b: Operand) -> Result: ...
    @property
    def inertia(self) -> tuple[int, int, int]: ...
    def slogdet(self) -> tuple[float, float]: ...

def cholesky(a: Operand, storage: str = "full", device: Optional[Device] = None) -> Cholesky: ...
def lu(a: Operand, device: Optional[Device] = None) -> LU: ...
def ldlt(a: Operand, storage: str = "full", device: Optional[Device] = None) -> LDLT: ...
def inv(a: Operand, device: Optional[Device] = None) -> Result: ...
def det(a: Operand, device: Optional[Device] = None) -> float: ...
def rref(a: Operand, tol: Optional[float] = None, device: Optional[Device] = None) -> tuple[Result, list[int]]: ...
def scaled_gram(a: Operand, d: Operand, device: Optional[Device] = None) -> Result: ...
@overload
def qr(a: Operand, pivoting: Literal[False] = False, device: Optional[Device] = None) -> tuple[Result, Result]: ...
@overload
def qr(a: Operand, pivoting: Literal[True], device: Optional[Device] = None) -> tuple[Result, Result, list[int]]: ...

def solve_batched(
    a: Host, b: Host, method: str = "lu", check: bool = True, device: Optional[Device] = None
) -> Any: ...
def solve_tridiagonal(
    dl: Host,
    d: Host,
    du: Host,
    b: Host,
    pivoting: bool = False,
    check: bool = True,
    device: Optional[Device] = None,
) -> Any: ...

class ShallowWater:
    def __init__(
        self,
        h: Host,
        z: Host,
        dx: float,
        dy: float,
        dt: float,
        chezy: float = ...,
        drying: bool = False,
        device: Optional[Device] = None,
    ) -> None: ...
    def advance(self, steps: int) -> None: ...
    @property
    def time(self) -> float: ...
    @property
    def steps(self) -> int: ...
    def fields(self) -> dict[str, Any]: ...

class FitResult(NamedTuple):
    coefficients: Result
    standard_errors: Optional[npt.NDArray[np.float64]]
    residual_norm: float
    condition: float
    model: Callable[[npt.ArrayLike], npt.NDArray[np.float64]]

def fit(
    x: Host, y: Host, basis: str = "poly:1", sigma: Optional[Host] = None, device: Optional[Device] = None
) -> FitResult: ...

class LpResult(NamedTuple):
    x: npt.NDArray[np.float64]
    fun: float
    status: str
    success: bool
    message: str
    y: npt.NDArray[np.float64]
    reduced_costs: npt.NDArray[np.float64]
    nit: int
    primal_residual: float
    gap: float
    seconds: float

def lp(
    c: Host,
    A_ub: Optional[Host] = None,
    b_ub: Optional[Host] = None,
    A_eq: Optional[Host] = None,
    b_eq: Optional[Host] = None,
    bounds: Optional[Union[tuple[Optional[float], Optional[float]], Sequence[tuple[Optional[float], Optional[float]]]]] = None,
    maximize: bool = False,
    tol: float = 1e-8,
    max_iterations: int = 200,
    storage: str = "full",
    precision: str = "f64",
    device: Optional[Device] = None,
) -> LpResult: ...
def lp_file(
    path: Any,
    format: str = "free",
    maximize: Optional[bool] = None,
    tol: float = 1e-8,
    max_iterations: int = 200,
    storage: str = "full",
    precision: str = "f64",
    device: Optional[Device] = None,
) -> tuple[LpResult, list[str], list[str]]: ...
