"""cudbound/optim/svm_dual.py: the pieces of the SVM dual solver, each against numpy or a
direct computation (the whole solver is tested against CLARABEL in tests/test_svm.py)."""
import numpy as np
import pytest

from cudbound.optim.svm_dual import (_lu_solve, active_set, bias_from_gradient, gradient, kkt_check, kkt_violation,
                                     polish, smo)


def svm_problem(seed, n=30, rank=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, rank or 4))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    K = X @ X.T if rank else np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    return K, y


@pytest.mark.parametrize("seed", range(20))
def test_small_lu_solve_matches_numpy_and_refuses_singular_systems(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 30))
    M = rng.normal(size=(m, m))
    r = rng.normal(size=m)
    z, ok = _lu_solve(M, r)
    assert ok
    np.testing.assert_allclose(z, np.linalg.solve(M, r), rtol=1e-8, atol=1e-10)
    if m > 1:
        M[:, -1] = M[:, 0] * 2.0  # exactly dependent columns
        assert not _lu_solve(M, r)[1]


@pytest.mark.parametrize("seed", range(10))
def test_gradient_and_kkt_check_match_direct_computations(seed):
    K, y = svm_problem(seed)
    rng = np.random.default_rng(seed + 100)
    alpha = np.where(rng.random(30) < 0.4, 0.0, rng.random(30))
    active = rng.random(30) < 0.9
    alpha[~active] = 0.0
    G = gradient(K, y, alpha, active)
    np.testing.assert_allclose(G[active], (y * (K @ (alpha * y)) - 1.0)[active], atol=1e-12)
    assert np.all(G[~active] == 0.0)
    violation, scale = kkt_check(K, y, 1.0, alpha, active, 0.3)
    assert violation == pytest.approx(kkt_violation(K, y, 1.0, alpha, 0.3, active), abs=1e-12)
    assert scale == pytest.approx(max(1.0, np.max((np.abs(K) @ alpha)[active])))


@pytest.mark.parametrize("rank", [None, 2, 3])
@pytest.mark.parametrize("seed", range(8))
def test_active_set_from_zero_and_smo_reach_the_same_optimum(seed, rank):
    """From alpha = 0 the active-set method alone, and SMO then the polish, meet the KKT
    conditions with the same dual objective; a low-rank kernel (linear, d = 2, 3) makes the
    KKT matrix singular on the way, which the method's null-space steps handle."""
    K, y = svm_problem(seed, rank=rank)
    C = 2.0
    active = np.ones(30, dtype=bool)
    a1 = np.zeros(30)
    b1, steps, ok = active_set(K, y, C, a1, active, 0.0, 600, 1e-11, np.empty(0))
    assert ok and kkt_violation(K, y, C, a1, b1) < 1e-8
    a2 = np.zeros(30)
    G, _, _ = smo(K, y, C, a2, active, 1e-10, 10 ** 6)
    b2 = bias_from_gradient(G, y, a2, C, active)
    a2, b2 = polish(K, y, C, a2, b2)
    value = [a.sum() - 0.5 * (a * y) @ K @ (a * y) for a in (a1, a2)]
    assert value[0] == pytest.approx(value[1], rel=1e-10)


def test_without_a_free_multiplier_the_bias_nearest_the_preferred_one_is_kept():
    K, _ = svm_problem(3)
    y = np.tile([1.0, -1.0], 15)  # balanced classes and a tiny C: every multiplier at C
    C = 1e-4
    active = np.ones(30, dtype=bool)
    alpha = np.zeros(30)
    G, _, _ = smo(K, y, C, alpha, active, 1e-12, 10 ** 5)
    assert not np.any((alpha > 0) & (alpha < C))
    lo_hi = [bias_from_gradient(G, y, alpha, C, active, prefer) for prefer in (-1e9, 1e9)]
    assert lo_hi[0] < lo_hi[1]
    middle = bias_from_gradient(G, y, alpha, C, active)
    assert lo_hi[0] < middle < lo_hi[1]
    for prefer in (-1e9, middle, 1e9):
        a, b = polish(K, y, C, alpha, middle, prefer=prefer)
        assert b == pytest.approx(min(max(prefer, lo_hi[0]), lo_hi[1]), abs=1e-12)
        assert kkt_violation(K, y, C, a, b) < 1e-9
