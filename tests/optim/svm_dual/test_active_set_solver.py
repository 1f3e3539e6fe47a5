"""cudbound/optim/svm_dual/active_set_solver.py: the small LU solve against numpy, and the active-set method
against SMO and the polish (the whole solver is tested against CLARABEL in tests/test_svm.py)."""
import numpy as np
import pytest

from cudbound.optim.svm_dual.active_set_solver import _lu_solve, active_set
from cudbound.optim.svm_dual.kkt import bias_from_gradient, kkt_violation, polish
from cudbound.optim.svm_dual.smo_solver import smo
from svm_dual_problems import svm_problem


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
