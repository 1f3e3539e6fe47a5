"""cudbound/optim/svm_dual/kkt.py: the compiled KKT check against the direct computation, and the bias and the
polish without a free multiplier."""
import numpy as np
import pytest

from cudbound.optim.svm_dual.kkt import bias_from_gradient, kkt_check, kkt_violation, polish
from cudbound.optim.svm_dual.smo_solver import gradient, smo
from svm_dual_problems import svm_problem


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
