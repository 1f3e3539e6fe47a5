"""cudbound/optim/svm_dual/smo_solver.py: SMO from a feasible start stops at its tolerance with a feasible point,
leaves the inactive points out, and returns the gradient of where it stopped."""
import numpy as np
import pytest

from cudbound.optim.svm_dual.kkt import bias_from_gradient, kkt_violation
from cudbound.optim.svm_dual.smo_solver import gradient, smo
from svm_dual_problems import svm_problem


@pytest.mark.parametrize("rank", [None, 3])
@pytest.mark.parametrize("seed", range(6))
def test_smo_reaches_its_tolerance_on_the_active_points(seed, rank):
    K, y = svm_problem(seed, rank=rank)
    C = 2.0
    active = np.random.default_rng(seed).random(30) < 0.8
    alpha = np.zeros(30)
    G, it, gap = smo(K, y, C, alpha, active, 1e-10, 10 ** 6)
    assert gap < 1e-10 and it > 0
    assert np.all(alpha[~active] == 0.0) and np.all((alpha >= 0.0) & (alpha <= C))
    assert abs(alpha @ y) < 1e-12 * max(1.0, alpha.sum())
    np.testing.assert_allclose(G, gradient(K, y, alpha, active), atol=1e-9)
    b = bias_from_gradient(G, y, alpha, C, active)
    assert kkt_violation(K, y, C, alpha, b, active) < 1e-8
    # a warm start at the optimum takes no step
    again = alpha.copy()
    _, it, _ = smo(K, y, C, again, active, 1e-8, 10 ** 6)
    assert it == 0 and np.array_equal(again, alpha)
