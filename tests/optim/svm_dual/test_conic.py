"""cudbound/optim/svm_dual/conic.py: the interior-point fallback finds the optimum SMO finds, and the polish of
its solution (as fit_svm uses it) is the polish of SMO's."""
import numpy as np
import pytest

from cudbound.optim.svm_dual.conic import solve_conic
from cudbound.optim.svm_dual.kkt import bias_from_gradient, kkt_violation, polish
from cudbound.optim.svm_dual.smo_solver import smo
from svm_dual_problems import svm_problem


@pytest.mark.parametrize("rank", [None, 3])
@pytest.mark.parametrize("seed", range(3))
def test_the_conic_solution_polishes_to_the_smo_solution(seed, rank):
    K, y = svm_problem(seed, rank=rank)
    C = 2.0
    active = np.ones(30, dtype=bool)
    active[seed] = False
    alpha = np.zeros(30)
    G, _, _ = smo(K, y, C, alpha, active, 1e-12, 10 ** 6)
    alpha, b = polish(K, y, C, alpha, bias_from_gradient(G, y, alpha, C, active), active=active)
    a_conic, b_conic = solve_conic(K, y, C, active)
    assert a_conic[seed] == 0.0
    np.testing.assert_allclose(a_conic, alpha, atol=1e-6)
    a_pol, b_pol = polish(K, y, C, a_conic, b_conic, snap=1e-10, active=active)
    np.testing.assert_allclose(a_pol, alpha, atol=1e-9)
    assert b_pol == pytest.approx(b, abs=1e-9)
    assert kkt_violation(K, y, C, a_pol, b_pol, active) < 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_the_conic_bias_is_the_bias_of_its_free_multipliers(seed):
    """The raw bias, before any polish: y_i f_i = 1 at every free multiplier, f = K (alpha y) + b
    (it came out as -b, hidden by the polish whenever some multiplier is free)."""
    K, y = svm_problem(seed)
    C = 2.0
    alpha, b = solve_conic(K, y, C, np.ones(30, dtype=bool))
    free = (alpha > 1e-6 * C) & (alpha < C * (1 - 1e-6))
    assert free.any()
    f = K @ (alpha * y) + b
    np.testing.assert_allclose(y[free] * f[free], 1.0, atol=1e-6)
