"""polish_hinge (cudbound/optim/qp.py): the exact minimiser of a weighted hinge loss plus a
quadratic penalty, read off an approximate one and certified; never a point that is not it."""
import cvxpy as cp
import numpy as np
import pytest

from cudbound.optim.qp import polish_hinge


def problem(seed, n=30, p=4, definite=True):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, p - 1)) * rng.uniform(0.2, 5, size=p - 1)])
    y = np.where(X[:, 1] + rng.normal(size=n) > 0, 1.0, -1.0)
    A = y[:, None] * X
    c = rng.integers(0, 3, size=n) / n            # bootstrap-like weights, some zero
    lam = rng.uniform(0.005, 0.2)
    Q = lam * np.diag([1.0 if (definite or j > 0) else 0.0 for j in range(p)])
    return A, c, Q


def reference(A, c, Q):
    x = cp.Variable(A.shape[1])
    F = c @ cp.pos(1 - A @ x) + cp.quad_form(x, cp.psd_wrap(Q))
    cp.Problem(cp.Minimize(F)).solve(solver="CLARABEL", tol_gap_abs=1e-13, tol_gap_rel=1e-13, tol_feas=1e-13)
    return x.value


def objective(A, c, Q, x):
    return float(c @ np.maximum(0, 1 - A @ x) + x @ Q @ x)


@pytest.mark.parametrize("seed", range(12))
def test_polished_point_is_the_minimiser_to_round_off(seed):
    A, c, Q = problem(seed)
    approx = reference(A, c, Q) + np.random.default_rng(seed).normal(scale=1e-6, size=A.shape[1])
    x = polish_hinge(A, c, Q, approx)
    assert x is not None
    best = reference(A, c, Q)
    assert objective(A, c, Q, x) <= objective(A, c, Q, best) + 1e-12
    np.testing.assert_allclose(x, best, atol=1e-7)


@pytest.mark.parametrize("seed", range(12))
def test_semidefinite_penalty_is_polished_only_when_the_minimiser_is_unique(seed):
    """Unpenalised intercept: a certified point is returned only under strict complementarity; it
    is then a minimiser (objective no larger than a tight interior-point answer)."""
    A, c, Q = problem(100 + seed, definite=False)
    best = reference(A, c, Q)
    x = polish_hinge(A, c, Q, best)
    assert x is not None        # these draws have strictly complementary minimisers
    assert objective(A, c, Q, x) <= objective(A, c, Q, best) + 1e-12
    np.testing.assert_allclose(x, best, atol=1e-6)


@pytest.mark.parametrize("seed", range(8))
def test_a_wrong_start_never_gives_a_wrong_point(seed):
    A, c, Q = problem(200 + seed)
    best = reference(A, c, Q)
    wrong = best + np.random.default_rng(seed).normal(scale=0.5, size=A.shape[1])
    x = polish_hinge(A, c, Q, wrong)
    assert x is None or np.allclose(x, best, atol=1e-7)


def test_non_finite_input_gives_none():
    A, c, Q = problem(0)
    assert polish_hinge(A, c, Q, np.full(A.shape[1], np.nan)) is None


@pytest.mark.parametrize("seed", range(6))
def test_duplicate_rows_do_not_stop_the_polish(seed):
    """Discrete features repeat rows (some on the margin); merged, they are one hinge term."""
    rng = np.random.default_rng(300 + seed)
    n = 40
    X = np.column_stack([np.ones(n), rng.integers(0, 3, size=(n, 2)).astype(float)])
    y = np.where(X[:, 1] + rng.normal(size=n) > 1, 1.0, -1.0)
    A, c = y[:, None] * X, np.full(n, 1.0 / n)
    Q = 0.05 * np.eye(3)
    best = reference(A, c, Q)
    x = polish_hinge(A, c, Q, best)
    assert x is not None
    assert objective(A, c, Q, x) <= objective(A, c, Q, best) + 1e-12
    np.testing.assert_allclose(x, best, atol=1e-6)
