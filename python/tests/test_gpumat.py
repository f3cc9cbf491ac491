"""The Python package against numpy.linalg on random inputs, each check with
its bound; the exceptions; the docstrings' examples. Runs on the device of
GPUMAT_DEVICE (the CPU in CI, the GPU on the GPU machine)."""

import doctest

import numpy as np
import pytest

import gpumat

U = np.finfo(np.float64).eps / 2


def rng(seed):
    return np.random.default_rng(seed)


def backward_error(a, x, b):
    """‖A·x − b‖_F / (‖A‖_F·‖x‖_F + ‖b‖_F)."""
    return np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x) + np.linalg.norm(b))


def spd(n, seed):
    g = rng(seed).standard_normal((n, n))
    return g @ g.T + n * np.eye(n)


def test_the_docstrings_examples_run():
    result = doctest.testmod(gpumat, extraglobs={"gpumat": gpumat, "np": np})
    assert result.attempted >= 10 and result.failed == 0


def test_solve_matches_numpy_on_every_method():
    n = 60
    general = rng(1).standard_normal((n, n))
    symmetric = spd(n, 2)
    b = rng(3).standard_normal((n, 3))
    cases = [
        (general, {}),
        (general, {"method": "lu"}),
        (symmetric, {"method": "cholesky"}),
        (symmetric, {"method": "cholesky", "storage": "rfp"}),
        (symmetric - 2.0 * n * np.eye(n), {"method": "ldlt"}),
        (general, {"precision": "mixed"}),
        (symmetric, {"precision": "mixed", "factor_precision": "f32"}),
    ]
    for a, options in cases:
        x, about = gpumat.solve(a, b, info=True, **options)
        # Backward stable: η ≤ c·n·u, with c = 10 for the factorization's constant.
        assert backward_error(a, x, b) <= 10 * n * U, options
        # Forward error within κ·η of NumPy's answer.
        kappa = np.linalg.cond(a, 1)
        assert np.linalg.norm(x - np.linalg.solve(a, b)) / np.linalg.norm(x) <= 20 * kappa * n * U, options
        assert about["backward_error"] <= 10 * n * U


def test_vectors_and_layouts():
    n = 20
    a = rng(4).standard_normal((n, n))
    b = rng(5).standard_normal(n)
    x = gpumat.solve(a, b)
    assert x.shape == (n,), "a 1-D right-hand side gives a 1-D solution"
    # C-ordered, Fortran-ordered and strided views of the same matrix agree exactly.
    wide = np.zeros((n, 2 * n))
    wide[:, ::2] = a
    for view in (np.ascontiguousarray(a), np.asfortranarray(a), wide[:, ::2]):
        assert np.array_equal(gpumat.solve(view, b), x)
    # Integers are converted as numpy.linalg does.
    assert np.allclose(gpumat.solve(np.array([[2, 0], [0, 4]]), np.array([2, 4])), [1.0, 1.0], rtol=0, atol=1e-15)


def test_arrays_stay_on_their_device():
    a = gpumat.asarray(spd(8, 6))
    b = gpumat.asarray(np.ones(8))
    x = gpumat.solve(a, b)
    assert isinstance(x, gpumat.Array) and x.shape == (8, 1)
    assert x.device.kind == gpumat.device().kind
    host = np.asarray(x)
    assert host.shape == (8, 1) and host.flags.f_contiguous
    assert np.array_equal(host, x.numpy())
    assert "gpumat.Array(shape=(8, 1)" in repr(x)


def test_lstsq_matches_numpy_and_weights_scale_rows():
    m, n = 80, 6
    a = rng(7).standard_normal((m, n))
    b = rng(8).standard_normal(m)
    fit = gpumat.lstsq(a, b)
    ref = np.linalg.lstsq(a, b, rcond=None)[0]
    # κ₂(A)·n·u bounds the difference for this well-conditioned design.
    assert np.linalg.norm(fit.x - ref) / np.linalg.norm(ref) <= np.linalg.cond(a) * 20 * n * U
    assert np.isclose(fit.residual_norm, np.linalg.norm(a @ fit.x - b), rtol=1e-12)
    assert fit.standard_errors.shape == (n,)
    w = rng(9).uniform(0.5, 2.0, m)
    weighted = gpumat.lstsq(a, b, weights=w).x
    ref = np.linalg.lstsq(a * w[:, None], b * w, rcond=None)[0]
    assert np.linalg.norm(weighted - ref) / np.linalg.norm(ref) <= 1e-12


def test_lstsq_of_a_wide_matrix_is_the_least_norm_solution():
    m, n = 12, 40
    a = rng(10).standard_normal((m, n))
    b = rng(11).standard_normal((m, 2))
    fit = gpumat.lstsq(a, b)
    ref = np.linalg.lstsq(a, b, rcond=None)[0]  # NumPy's minimum-norm solution
    assert fit.x.shape == (n, 2)
    assert np.linalg.norm(fit.x - ref) / np.linalg.norm(ref) <= np.linalg.cond(a) * 20 * n * U
    # a @ x = b to rounding, and the reported residual says so.
    assert fit.residual_norm <= 20 * n * U * np.linalg.norm(a) * np.linalg.norm(fit.x)
    assert fit.standard_errors is None and fit.condition >= 1.0
    with pytest.raises(gpumat.ShapeError):
        gpumat.lstsq(a, b[:, 0], weights=np.ones(m))
    with pytest.raises(gpumat.RankDeficientError):
        gpumat.lstsq(np.vstack([a[:1], a[:1]]), np.ones(2))


def test_qr_and_column_pivoting():
    m, n = 30, 12
    a = rng(21).standard_normal((m, n))
    q, r = gpumat.qr(a)
    assert q.shape == (m, n) and r.shape == (n, n)
    # ‖A − QR‖_F/‖A‖_F ≤ c·m·n·u, ‖QᵀQ − I‖_F ≤ c·m·u, R upper triangular.
    assert np.linalg.norm(q @ r - a) / np.linalg.norm(a) <= 10 * m * n * U
    assert np.linalg.norm(q.T @ q - np.eye(n)) <= 10 * m * U
    assert not np.tril(r, -1).any()
    low = a[:, :4] @ rng(22).standard_normal((4, n))  # rank 4
    q, r, p = gpumat.qr(low, pivoting=True)
    assert sorted(p) == list(range(n))
    assert np.linalg.norm(q @ r - low[:, p]) / np.linalg.norm(low) <= 10 * m * n * U
    d = np.abs(np.diag(r))
    assert np.all(d[1:] <= d[:-1] * (1 + 1e-10))
    assert np.sum(d > max(m, n) * U * d[0]) == 4 == np.linalg.matrix_rank(low)
    with pytest.raises(gpumat.NonFiniteError):
        gpumat.qr(np.array([[np.nan, 1.0]]), pivoting=True)


def test_factor_objects():
    n = 40
    a = spd(n, 10)
    b = rng(11).standard_normal(n)
    for storage in ("full", "rfp"):
        f = gpumat.cholesky(a, storage=storage)
        assert f.storage == storage
        # ‖A − L·Lᵀ‖_F / ‖A‖_F ≤ c·n·u.
        assert np.linalg.norm(f.L @ f.L.T - a) / np.linalg.norm(a) <= 10 * n * U
        assert np.allclose(f.L, np.linalg.cholesky(a), rtol=0, atol=1e3 * n * U * np.sqrt(np.abs(a).max()))
        assert abs(f.logdet() - np.linalg.slogdet(a)[1]) <= 10 * n * U * abs(np.linalg.slogdet(a)[1])
        assert backward_error(a, f.solve(b), b) <= 10 * n * U
    g = rng(12).standard_normal((n, n))
    f = gpumat.lu(g)
    sign, logdet = np.linalg.slogdet(g)
    assert f.slogdet()[0] == sign and abs(f.slogdet()[1] - logdet) <= 10 * n * U * max(1.0, abs(logdet))
    assert abs(f.det() - np.linalg.det(g)) <= 1e3 * n * U * abs(np.linalg.det(g))
    assert 0 < f.rcond() <= 1
    assert backward_error(g, f.solve(b), b) <= 10 * n * U
    inverse = gpumat.inv(g)
    assert np.linalg.norm(inverse @ g - np.eye(n)) <= np.linalg.cond(g) * 20 * n * U * np.sqrt(n)
    assert abs(gpumat.det(g) - np.linalg.det(g)) <= 1e3 * n * U * abs(np.linalg.det(g))
    indefinite = a - 2.0 * n * np.eye(n)
    eig = np.linalg.eigvalsh(indefinite)
    f = gpumat.ldlt(indefinite)
    assert f.inertia == (int((eig > 0).sum()), int((eig < 0).sum()), 0)
    assert backward_error(indefinite, f.solve(b), b) <= 10 * n * U


def test_rref_and_scaled_gram():
    a = rng(13).standard_normal((6, 3)) @ rng(14).standard_normal((3, 8))  # rank 3
    r, pivots = gpumat.rref(a)
    assert len(pivots) == 3 and r.shape == a.shape
    assert np.allclose(r[3:], 0.0, atol=1e-12)
    a = rng(15).standard_normal((7, 30))
    d = rng(16).uniform(0.1, 2.0, 30)
    g = gpumat.scaled_gram(a, d)
    ref = (a * d**2) @ a.T
    # Each entry within γ_{k+3}·(|A|·D²·|A|ᵀ)ᵢⱼ.
    bound = (30 + 3) * U * ((np.abs(a) * d**2) @ np.abs(a).T)
    assert np.all(np.abs(g - ref) <= bound)
    assert np.array_equal(g, g.T)


def test_fit_matches_a_weighted_vandermonde_solve():
    t = np.linspace(0.0, 10.0, 50)
    y = np.sin(t) + 0.1 * t
    sigma = np.linspace(0.5, 1.5, 50)
    r = gpumat.fit(t, y, basis="poly:3", sigma=sigma)
    v = np.vander(t, 4, increasing=True) / sigma[:, None]
    ref = np.linalg.lstsq(v, y / sigma, rcond=None)[0]
    assert np.linalg.norm(r.coefficients - ref) / np.linalg.norm(ref) <= np.linalg.cond(v) * 50 * U
    assert np.allclose(r.model(t), np.vander(t, 4, increasing=True) @ r.coefficients)
    # Fourier: a pure harmonic of the data's span is fitted exactly.
    r = gpumat.fit(t, 2.0 + np.cos(2 * np.pi * t / 10.0), basis="fourier:2")
    assert np.abs(r.coefficients - [2.0, 1.0, 0.0, 0.0, 0.0]).max() <= 1e-12
    for bad in ("poly", "poly:x", "poly:-1", "cubic:3"):
        with pytest.raises(gpumat.InvalidArgumentError):
            gpumat.fit(t, y, basis=bad)


def test_lp_reaches_a_constructed_optimum():
    m, n = 30, 90
    r = rng(17)
    a = r.uniform(-1.0, 1.0, (m, n))
    x = np.zeros(n)
    basic = r.choice(n, m, replace=False)
    x[basic] = r.uniform(1.0, 2.0, m)
    z = r.uniform(1.0, 2.0, n)
    z[basic] = 0.0
    y = r.uniform(-1.0, 1.0, m)
    b, c = a @ x, a.T @ y + z
    result = gpumat.lp(c, A_eq=a, b_eq=b)
    assert result.success and result.status == "optimal", result.message
    assert abs(result.fun - b @ y) <= 1e-8 * abs(b @ y)
    assert np.abs(result.x - x).max() <= 1e-6
    assert np.abs(result.y - y).max() <= 1e-6
    infeasible = gpumat.lp([1.0, 1.0], A_ub=[[1.0, 1.0], [-1.0, -1.0]], b_ub=[1.0, -2.0])
    assert infeasible.status == "infeasible" and not infeasible.success
    unbounded = gpumat.lp([1.0, 1.0], A_ub=[[1.0, -1.0]], b_ub=[1.0], maximize=True)
    assert unbounded.status == "unbounded"
    free = gpumat.lp([1.0], A_ub=[[-1.0]], b_ub=[5.0], bounds=[(None, None)])
    assert free.status == "optimal" and abs(free.fun + 5.0) <= 1e-8


def test_mps_files_are_solved_as_the_cli_does(tmp_path):
    import pathlib

    data = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "lp"
    listed = {"afiro": -4.6475314286e2, "sc50a": -6.4575077059e1, "adlittle": 2.2549496316e5}
    for name, optimum in listed.items():
        result, columns, rows = gpumat.lp_file(data / f"{name}.mps", format="fixed")
        assert result.success and abs(result.fun - optimum) <= 1e-8 * abs(optimum), (name, result.message)
        assert len(columns) == result.x.size and len(rows) == result.y.size
    bad = tmp_path / "bad.mps"
    bad.write_text("NAME T\nROWS\n N obj\n Q r\nENDATA\n")
    with pytest.raises(gpumat.ParseError) as e:
        gpumat.lp_file(bad)
    assert e.value.line == 4
    with pytest.raises(gpumat.FileError):
        gpumat.lp_file(tmp_path / "missing.mps")


def test_failures_are_exceptions_with_their_fields():
    not_spd = np.array([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(gpumat.NotPositiveDefiniteError) as e:
        gpumat.cholesky(not_spd)
    assert e.value.column == 2
    assert isinstance(e.value, np.linalg.LinAlgError)
    with pytest.raises(np.linalg.LinAlgError):
        gpumat.solve(not_spd, np.ones(2), method="cholesky")
    with pytest.raises(gpumat.NotSymmetricError) as e:
        gpumat.cholesky(np.array([[2.0, 1.0], [0.0, 2.0]]))
    assert (e.value.row, e.value.col) == (2, 1)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(gpumat.SingularMatrixError):
        gpumat.solve(singular, np.ones(2), method="lu")
    with pytest.raises(gpumat.SingularMatrixError):
        gpumat.lu(np.zeros((2, 2)))
    with pytest.raises(gpumat.NonFiniteError) as e:
        gpumat.solve(np.array([[1.0, np.nan], [0.0, 1.0]]), np.ones(2))
    assert (e.value.row, e.value.col) == (1, 2) and isinstance(e.value, ValueError)
    with pytest.raises(gpumat.ShapeError):
        gpumat.solve(np.eye(3), np.ones(4))
    with pytest.raises(gpumat.ShapeError):
        gpumat.solve(np.ones((2, 2, 2)), np.ones(2))
    with pytest.raises(gpumat.WeightError):
        gpumat.scaled_gram(np.ones((2, 2)), np.array([1.0, -1.0]))
    with pytest.raises(TypeError):
        gpumat.solve(np.eye(2, dtype=complex), np.ones(2))
    with pytest.raises(TypeError):
        gpumat.solve([["a", "b"], ["c", "d"]], np.ones(2))
    with pytest.raises(ValueError, match="method"):
        gpumat.solve(np.eye(2), np.ones(2), method="qr")
    with pytest.raises(ValueError, match="storage"):
        gpumat.cholesky(np.eye(2), storage="packed")
    with pytest.raises(ValueError):
        gpumat.Device("tpu")


def test_device_choice():
    d = gpumat.device()
    assert d.kind in ("cpu", "cuda") and d.describe()
    cpu = gpumat.Device("cpu")
    x = gpumat.solve(np.eye(2) * 2.0, np.ones(2), device=cpu)
    assert np.abs(x - 0.5).max() <= 4 * U
    assert gpumat.asarray(np.eye(2), device=cpu).device.kind == "cpu"


def test_batched_solves_match_numpy_and_report_each_failure():
    count, n = 50, 6
    a = rng(30).standard_normal((count, n, n)) + 3.0 * np.eye(n)
    b = rng(31).standard_normal((count, n))
    x = gpumat.solve_batched(a, b)
    assert x.shape == (count, n)
    for s in range(count):
        assert backward_error(a[s], x[s], b[s]) <= 10 * n * U
    spd_batch = np.einsum("sij,skj->sik", a, a)
    x = gpumat.solve_batched(spd_batch, b[:, :, None], method="cholesky")
    assert x.shape == (count, n, 1)
    assert max(backward_error(spd_batch[s], x[s, :, 0], b[s]) for s in range(count)) <= 10 * n * U
    # Members 3 and 7 singular: the others are solved, each failure named.
    a[3] = 0.0
    a[7, :, 2] = 0.0
    with pytest.raises(gpumat.SingularMatrixError) as e:
        gpumat.solve_batched(a, b)
    assert e.value.index == 3 and e.value.failed == [3, 7]
    assert np.isnan(e.value.x[3]).all() and np.isfinite(e.value.x[4]).all()
    x, failed = gpumat.solve_batched(a, b, check=False)
    assert sorted(failed) == [3, 7] and isinstance(failed[7], gpumat.SingularMatrixError)
    assert backward_error(a[0], x[0], b[0]) <= 10 * n * U
    with pytest.raises(gpumat.ShapeError):
        gpumat.solve_batched(a[:, :, :3], b)


def test_tridiagonal_batches_match_a_dense_solve():
    count, m = 20, 30
    r = rng(32)
    dl, du, b = r.uniform(-1.0, 1.0, (3, count, m))
    d = 3.0 + r.uniform(0.0, 1.0, (count, m))
    for pivoting in (False, True):
        x = gpumat.solve_tridiagonal(dl, d, du, b, pivoting=pivoting)
        for s in range(count):
            t = np.diag(d[s]) + np.diag(dl[s, 1:], -1) + np.diag(du[s, :-1], 1)
            assert backward_error(t, x[s], b[s]) <= 10 * m * U
    d[5, 0], du[5, 0] = 0.0, 0.0  # system 5 singular: a zero first row
    with pytest.raises(gpumat.SingularMatrixError) as e:
        gpumat.solve_tridiagonal(dl, d, du, b)
    assert e.value.index == 5 and e.value.failed == [5]


def test_the_shallow_water_model_keeps_a_lake_at_rest_and_conserves_volume():
    nx, ny = 32, 6
    h = np.full((nx, ny), 8.0)
    rest = gpumat.ShallowWater(h, np.zeros((nx, ny)), dx=50.0, dy=50.0, dt=2.0)
    rest.advance(10)
    f = rest.fields()
    assert np.abs(f["z"]).max() == 0.0 and np.abs(f["u"]).max() == 0.0
    assert rest.steps == 10 and rest.time == 20.0
    wave = 0.05 * np.cos(np.pi * (np.arange(nx) + 0.5) / nx)[:, None] * np.ones((1, ny))
    model = gpumat.ShallowWater(h, wave, dx=50.0, dy=50.0, dt=2.0, chezy=60.0)
    volume = model.fields()["volume"]
    model.advance(50)
    f = model.fields()
    # Mass is conserved to rounding (a relative 1e−12 leaves room for it).
    assert abs(f["volume"] - volume) <= 1e-12 * volume
    assert f["u"].shape == (nx + 1, ny) and f["v"].shape == (nx, ny + 1)
    assert np.abs(f["u"]).max() > 0.0, "the surface tilt drives a current"
    with pytest.raises(gpumat.InvalidArgumentError):
        gpumat.ShallowWater(h, np.zeros((nx, ny)), dx=-1.0, dy=50.0, dt=2.0)
    with pytest.raises(gpumat.ShapeError):
        gpumat.ShallowWater(h, np.zeros((nx, ny + 1)), dx=50.0, dy=50.0, dt=2.0)


def test_ctrl_c_interrupts_a_long_run():
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import numpy as np, gpumat\n"
        "m = gpumat.ShallowWater(np.full((16, 2), 5.0), np.zeros((16, 2)), dx=10.0, dy=10.0, dt=1.0)\n"
        "print('running', flush=True)\n"
        "m.advance(10**12)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "running"
    time.sleep(0.5)
    child.send_signal(signal.SIGINT)
    try:
        _, err = child.communicate(timeout=30)
    finally:
        child.kill()
    assert "KeyboardInterrupt" in err, err


def test_dlpack_export_shares_memory():
    a = gpumat.asarray(np.arange(6.0).reshape(2, 3), device=gpumat.Device("cpu"))
    assert a.__dlpack_device__() == (1, 0)
    view = np.from_dlpack(a)
    assert view.shape == (2, 3) and np.array_equal(view, np.arange(6.0).reshape(2, 3))
    # The same memory, column-major: no copy was made.
    assert view.__array_interface__["data"][0] == a.address
    assert view.strides == (8, 16)
    with pytest.raises(BufferError):
        a.__dlpack__(copy=True)
    # A host producer goes through asarray: shared on the CPU when column-major.
    eye = np.asfortranarray(np.eye(2))
    b = gpumat.from_dlpack(eye, device=gpumat.Device("cpu"))
    assert b.numpy().tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert b.address == eye.ctypes.data


def test_host_arrays_are_copied_only_when_the_layout_demands_it():
    cpu = gpumat.Device("cpu")
    n = 30
    a = rng(21).standard_normal((n, n))
    b = rng(22).standard_normal(n)
    # Column-major float64 matrices and vectors are shared on the CPU.
    fortran = np.asfortranarray(a)
    shared = gpumat.asarray(fortran, device=cpu)
    assert shared.address == fortran.ctypes.data
    assert gpumat.asarray(b, device=cpu).address == b.ctypes.data
    # C-ordered, strided and integer arrays are copied (transposed, gathered, converted).
    for copied in (np.ascontiguousarray(a), np.asfortranarray(np.vstack([a, a]))[::2], a.astype(np.int64)):
        assert gpumat.asarray(copied, device=cpu).address != copied.ctypes.data
    # A shared array keeps NumPy's buffer alive after the last NumPy reference goes.
    expected = fortran.copy()
    del fortran
    import gc

    gc.collect()
    assert np.array_equal(shared.numpy(), expected)
    # Solving on the shared matrix reads it and leaves it as it was.
    x = gpumat.solve(shared, gpumat.asarray(b, device=cpu)).numpy()[:, 0]
    assert backward_error(a, x, b) <= 10 * n * U
    assert np.array_equal(shared.numpy(), expected)
    # So do the factorizations and the functions that take a matrix.
    s = np.asfortranarray(spd(n, 23))
    shared_spd = gpumat.asarray(s, device=cpu)
    for operation in (gpumat.cholesky, gpumat.lu, gpumat.ldlt, gpumat.inv, gpumat.det, gpumat.rref):
        operation(shared_spd)
        assert np.array_equal(s, spd(n, 23)), operation.__name__
    # A read-only array is shared too: gpumat never writes its operands.
    frozen = np.asfortranarray(a)
    frozen.flags.writeable = False
    assert gpumat.asarray(frozen, device=cpu).address == frozen.ctypes.data


cupy = pytest.importorskip("cupy") if gpumat.device().kind == "cuda" else None


@pytest.mark.skipif(gpumat.device().kind != "cuda", reason="needs a GPU and CuPy")
def test_cupy_arrays_are_shared_both_ways():
    n = 64
    a = cupy.asfortranarray(cupy.asarray(spd(n, 20)))
    b = cupy.asarray(rng(21).standard_normal(n))
    wrapped = gpumat.from_dlpack(a)
    assert wrapped.address == a.data.ptr, "a Fortran-ordered array is shared, not copied"
    x = gpumat.solve(a, b)
    assert isinstance(x, cupy.ndarray) and x.shape == (n,)
    assert backward_error(spd(n, 20), cupy.asnumpy(x), cupy.asnumpy(b)) <= 10 * n * U
    # C-ordered: one transpose on the device, same answer.
    assert cupy.array_equal(gpumat.solve(cupy.ascontiguousarray(a), b), x)
    back = cupy.from_dlpack(gpumat.asarray(np.eye(3)))
    assert cupy.array_equal(back, cupy.eye(3))
    # Work queued by CuPy on its own stream is ordered before gpumat's.
    with cupy.cuda.Stream(non_blocking=True):
        c = cupy.asfortranarray(cupy.ones((n, n)) * 2.0 + cupy.eye(n))
        y = gpumat.solve(c, cupy.ones(n))
    assert float(cupy.abs(c @ y - 1.0).max()) <= 1e-12


@pytest.mark.skipif(gpumat.device().kind != "cuda", reason="needs a GPU and PyTorch")
def test_torch_tensors_are_shared_both_ways():
    torch = pytest.importorskip("torch")
    n = 48
    a = torch.tensor(spd(n, 22), device="cuda").T  # column-major view
    b = torch.ones(n, dtype=torch.float64, device="cuda")
    assert gpumat.from_dlpack(a).address == a.data_ptr()
    x = gpumat.solve(a, b)
    assert isinstance(x, torch.Tensor) and x.shape == (n,)
    assert backward_error(spd(n, 22), x.cpu().numpy(), np.ones(n)) <= 10 * n * U
    back = torch.from_dlpack(gpumat.asarray(np.eye(2)))
    assert back.device.type == "cuda" and torch.equal(back, torch.eye(2, dtype=torch.float64, device="cuda"))
    with pytest.raises(TypeError):
        gpumat.from_dlpack(torch.ones(3, 3, device="cuda"))  # float32
