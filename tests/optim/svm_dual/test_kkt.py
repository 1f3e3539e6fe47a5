"""cudbound/optim/svm_dual/kkt.py: the bordered KKT matrix against a plain NumPy construction, the compiled KKT
check against the direct computation, and the bias and the polish without a free multiplier."""
import numpy as np
import pytest

from cudbound.optim.svm_dual.kkt import _kkt_matrix, bias_from_gradient, kkt_check, kkt_violation, polish
from cudbound.optim.svm_dual.smo_solver import gradient, smo
from svm_dual_problems import svm_problem


def numpy_kkt_matrix(K, y, F, bias_first):
    """Q_FF = (y_F y_F') * K_FF bordered by y_F: [0 y_F'; y_F Q_FF], or [Q_FF y_F; y_F' 0]."""
    k = len(F)
    M = np.zeros((k + 1, k + 1))
    pts = slice(1, k + 1) if bias_first else slice(0, k)
    at = 0 if bias_first else k
    M[pts, pts] = np.outer(y[F], y[F]) * K[np.ix_(F, F)]
    M[pts, at] = M[at, pts] = y[F]
    return M


@pytest.mark.parametrize("seed", range(6))
def test_kkt_matrix_is_the_bordered_matrix(seed):
    """The one builder of the bordered KKT matrix (the polish, the active-set steps, the decremental path): equal
    to NumPy's construction for free sets in any order, of any size (0 included), with the bias first or last; only
    the first k entries of F count."""
    K, y = svm_problem(seed)
    rng = np.random.default_rng(seed)
    for k in (0, 1, 2, 7, 30):
        F = rng.permutation(30).astype(np.int64)
        for bias_first in (True, False):
            M = _kkt_matrix(K, y, F, k, bias_first)
            np.testing.assert_array_equal(M, numpy_kkt_matrix(K, y, F[:k], bias_first))
            if k:
                lead = (M[0, 1:], M[1:, 0]) if bias_first else (M[k, :k], M[:k, k])
                assert all(np.array_equal(v, y[F[:k]]) for v in lead)


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
