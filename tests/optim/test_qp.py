"""Exact QP pieces (``cudbound/optim/qp.py``): the cone residual of the KKT certificate against
bounded least squares, KKT polishing against face enumeration, and failures that certify
nothing instead of raising."""
import numpy as np
import pytest
from scipy.optimize import lsq_linear

import cudbound.optim.qp as qp_mod
import cudbound.optim.smooth as smooth_mod
from cudbound.optim.qp import cone_residual, polish_kkt


@pytest.mark.parametrize("seed", range(20))
def test_cone_residual_matches_bounded_least_squares(seed):
    """min ||A' lam - b||, lam >= 0, with rows of wildly different norms and more rows than
    columns: equal to the bounded least-squares answer on the unscaled rows."""
    rng = np.random.default_rng(seed)
    p = int(rng.integers(2, 8))
    k = int(rng.integers(1, 2 * p + 1))
    A = rng.standard_normal((k, p)) * 10.0 ** rng.uniform(-4, 4, size=(k, 1))
    b = rng.standard_normal(p) * 10.0 ** rng.uniform(-2, 2)
    r = cone_residual(A, b)
    ref = lsq_linear(A.T, b, bounds=(0, np.inf), method="bvls", tol=1e-14)
    assert r == pytest.approx(np.linalg.norm(A.T @ ref.x - b), rel=1e-7, abs=1e-9 * np.linalg.norm(b))


def test_cone_residual_edge_cases():
    assert cone_residual(np.zeros((0, 3)), np.array([3.0, 4.0, 0.0])) == pytest.approx(5.0)
    assert cone_residual(np.array([[1.0, np.nan]]), np.ones(2)) is None


def brute_force_qp(H, g, G):
    """min x'Hx - 2g'x over {G x >= 0}, H positive definite, by enumerating the faces: the
    minimiser lies in the relative interior of some face {G_S x = 0}, where it is the
    face's equality-constrained minimiser; the least feasible one is the answer."""
    k, p = G.shape
    best = None
    for mask in range(1 << k):
        S = [i for i in range(k) if mask >> i & 1]
        if S:
            _, sv, vt = np.linalg.svd(G[S])
            Z = vt[int(np.sum(sv > 1e-12 * sv[0])):].T
        else:
            Z = np.eye(p)
        x = Z @ np.linalg.solve(Z.T @ H @ Z, Z.T @ g) if Z.shape[1] else np.zeros(p)
        if np.all(G @ x >= -1e-10 * np.linalg.norm(G, axis=1) * max(1.0, np.linalg.norm(x))):
            f = x @ H @ x - 2 * g @ x
            if best is None or f < best[0]:
                best = (f, x)
    return best


def test_polish_drops_a_constraint_that_is_nearly_but_not_active():
    """min (x - c)'H(x - c), H = diag(1, 1, 1e8), c = (-1, 1, 0), s.t. x_1 >= 0 and
    x_3 + 1e-11 x_2 >= 0: at the minimiser (0, 1, 0) the second row has relative slack 1e-11,
    below every threshold, but it is not active: forcing it moves x_3 by 1e-11, which the
    stiff third direction turns into a gradient of -2e-3 that no non-negative multiplier
    balances (the Pima failure of replicate 107 in miniature). One primal active-set step
    drops the row."""
    H = np.diag([1.0, 1.0, 1e8])
    c = np.array([-1.0, 1.0, 0.0])
    g = H @ c
    G = np.array([[1.0, 0.0, 0.0], [0.0, 1e-11, 1.0]])
    x0 = np.array([1e-13, 1.0, 1e-14])
    assert all(qp_mod._polish_once(H, g, G, x0, tol, 1e-7) is None for tol in qp_mod.ACTIVE_TOLS)
    x = polish_kkt(H, g, G, x0)
    f_ref, x_ref = brute_force_qp(H, g, G)
    np.testing.assert_allclose(x, x_ref, atol=1e-12)
    np.testing.assert_allclose(x, [0.0, 1.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_polish_matches_face_enumeration(seed):
    """Random small cone QPs, some with rows of very different norms and nearly parallel rows;
    from the exact minimiser perturbed by 1e-9 (an interior-point answer), the polished point
    has the brute-force minimum."""
    rng = np.random.default_rng(seed)
    p = int(rng.integers(2, 5))
    k = int(rng.integers(1, 7))
    M = rng.standard_normal((p, p)) * 10.0 ** rng.uniform(-2, 2, size=p)
    H = M.T @ M + 1e-3 * np.eye(p)
    g = rng.standard_normal(p) * 10.0
    G = rng.standard_normal((k, p)) * 10.0 ** rng.uniform(-3, 3, size=(k, 1))
    if k > 1 and seed % 3 == 0:
        G[1] = G[0] * 7.0 + 1e-10 * rng.standard_normal(p)  # nearly parallel to row 0
    f_ref, x_ref = brute_force_qp(H, g, G)
    x0 = x_ref + 1e-9 * max(1.0, np.linalg.norm(x_ref)) * rng.standard_normal(p)
    x = polish_kkt(H, g, G, x0)
    assert x is not None
    f = x @ H @ x - 2 * g @ x
    assert f == pytest.approx(f_ref, rel=1e-9, abs=1e-9 * max(1.0, abs(f_ref)))


def _raise_nnls(*args, **kwargs):
    raise RuntimeError("Maximum number of iterations reached.")


def test_polishes_return_none_when_nnls_fails(monkeypatch):
    """A polish whose certificate cannot be computed certifies nothing: None, never an exception."""
    monkeypatch.setattr(qp_mod, "nnls", _raise_nnls)
    H = np.diag([2.0, 1.0])
    g = np.array([-1.0, 1.0])  # unconstrained minimiser (-0.5, 1) violates x0 >= 0
    G = np.array([[1.0, 0.0]])
    x0 = np.array([1e-9, 1.0])
    assert cone_residual(G, np.array([1.0, 0.0])) is None
    assert polish_kkt(H, g, G, x0) is None
    f = lambda x: float(x @ H @ x - 2 * g @ x)  # noqa: E731
    assert smooth_mod.polish_smooth(f, lambda x: 2 * (H @ x - g), lambda x: 2 * H, G, x0) is None
    monkeypatch.undo()
    np.testing.assert_allclose(polish_kkt(H, g, G, x0), [0.0, 1.0], atol=1e-12)


def test_polish_survives_linalg_failure(monkeypatch):
    def bad_svd(*args, **kwargs):
        raise np.linalg.LinAlgError("SVD did not converge")

    monkeypatch.setattr(qp_mod.np.linalg, "svd", bad_svd)
    H, g, G = np.eye(2), np.array([-1.0, 1.0]), np.array([[1.0, 0.0]])
    assert polish_kkt(H, g, G, np.array([0.0, 1.0])) is None
    assert polish_kkt(H, g, np.zeros((0, 2)), np.array([0.0, 0.0])) is not None  # no SVD needed
    assert polish_kkt(H, g, G, np.array([np.nan, 1.0])) is None
