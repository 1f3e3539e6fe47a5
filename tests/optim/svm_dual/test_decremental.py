"""cudbound/optim/svm_dual/decremental.py: the KKT matrix's inverse and its updates against fresh inverses, the
decremental path against SMO on the n - 1 points, and the independent free set."""
import numpy as np
import pytest

from cudbound.optim.svm_dual.decremental import (_border, _border_vector, _remove_free, decrement, independent_free_set,
                                                 kkt_inverse)
from cudbound.optim.svm_dual.kkt import bias_from_gradient, kkt_violation, polish
from cudbound.optim.svm_dual.smo_solver import gradient, smo
from svm_dual_problems import svm_problem


def bordered(K, y, F):
    """[0 y_F'; y_F Q_FF], bias first: the matrix kkt_inverse inverts."""
    M = np.zeros((len(F) + 1, len(F) + 1))
    M[0, 1:] = M[1:, 0] = y[F]
    M[1:, 1:] = np.outer(y[F], y[F]) * K[np.ix_(F, F)]
    return M


@pytest.mark.parametrize("seed", range(10))
def test_kkt_inverse_and_its_updates_match_fresh_inverses(seed):
    """The inverse of the bordered KKT matrix, bordered by a new point (Schur complement) and
    with a point removed (last-row swap, then A - b b'/d), equals numpy's inverse of the
    matrix built afresh in the same order."""
    K, y = svm_problem(seed)
    rng = np.random.default_rng(seed)
    F = rng.permutation(30)[:12].astype(np.int64)
    Minv, ok = kkt_inverse(K, y, F, 10)
    assert ok
    np.testing.assert_allclose(Minv, np.linalg.inv(bordered(K, y, F[:10])), rtol=1e-9, atol=1e-9)
    work = np.zeros((13, 13))
    work[:11, :11] = Minv
    u = np.empty(31)
    s = _border_vector(work, K, y, F, 10, int(F[10]), u)
    _border(work, u, s, 10)
    np.testing.assert_allclose(work[:12, :12], np.linalg.inv(bordered(K, y, F[:11])), rtol=1e-8, atol=1e-8)
    order = F[:11].copy()
    assert _remove_free(work, order, 11, 3, True)
    assert set(order[:10]) == set(F[:11]) - {F[3]} and order[3] == F[10]
    np.testing.assert_allclose(work[:11, :11], np.linalg.inv(bordered(K, y, order[:10])), rtol=1e-8, atol=1e-8)
    # a point in the span of F (a duplicate) gives a zero Schur complement
    Kd = K.copy()
    Kd[F[11]] = Kd[F[0]]
    Kd[:, F[11]] = Kd[:, F[0]]
    yd = y.copy()
    yd[F[11]] = y[F[0]]
    Minv, ok = kkt_inverse(Kd, yd, F, 10)
    assert abs(_border_vector(Minv, Kd, yd, F, 10, int(F[11]), u)) < 1e-9 * Kd[F[0], F[0]]


def leave_one_out_by_decrement(K, y, C, t, start):
    """The full SVM by SMO and the polish, then decrement for point t from it (``start``:
    "independent" as loo_error does, "inverse" with the polished solution and its inverse
    when it exists, "plain" without an inverse)."""
    n = len(y)
    full_alpha = np.zeros(n)
    active = np.ones(n, dtype=bool)
    G, _, _ = smo(K, y, C, full_alpha, active, 1e-12, 10 ** 6)
    b = bias_from_gradient(G, y, full_alpha, C, active)
    full_alpha, b = polish(K, y, C, full_alpha, b)
    if start == "independent":
        full_alpha = independent_free_set(K, y, C, full_alpha)
    G = gradient(K, y, full_alpha, active)
    free = np.flatnonzero((full_alpha > 0) & (full_alpha < C))
    inv, ok = kkt_inverse(K, y, free, free.size)
    inv = inv if ok and start != "plain" else np.empty((0, 0))
    keep = active.copy()
    keep[t] = False
    alpha = full_alpha.copy()
    b_t, steps, ok = decrement(K, y, C, alpha, keep, t, b, 10 * n, 1e-11, G, inv)
    return full_alpha, alpha, b_t, steps, ok, G, keep


def discrete_problem(seed, d):
    """Integer features (0..3): many points exactly on the margin, free sets that empty."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(40, d)).astype(float)
    y = np.where(X.sum(1) + rng.normal(size=40) > 1.5 * d, 1.0, -1.0)
    Xc = X - X.mean(0)
    return Xc @ Xc.T, y


@pytest.mark.parametrize("kind", ["rbf", "linear2", "duplicates", "discrete2", "discrete3"])
@pytest.mark.parametrize("seed", range(6))
def test_decrement_follows_the_path_to_the_leave_one_out_optimum(seed, kind):
    """From the full solution, taking alpha_t to 0 along the solution path ends at the SVM
    without t: its KKT conditions hold on the other points and its dual objective is that of
    SMO on the n - 1 points; alpha and G stay consistent. Kernels: Gaussian (nonsingular),
    linear in 2 dimensions, with duplicated rows (the polished solution's free set is
    singular: "plain" and "inverse" starts exercise the least-norm steps) and linear on
    integer features (degenerate points, free sets that empty: the bias-only move). Nearly
    every path converges; the others are finished by the caller's active-set steps."""
    if kind.startswith("discrete"):
        K, y = discrete_problem(seed, int(kind[-1]))
    else:
        K, y = svm_problem(seed, rank=2 if kind == "linear2" else None)
    if kind == "duplicates":
        K[20:] = K[:10]
        K[:, 20:] = K[:, :10]
        y[20:] = y[:10]
    n = len(y)
    C = 0.5 if kind.startswith("discrete") else 2.0
    converged = tried = 0
    for t in range(n):
        start = ("independent", "inverse", "plain")[t % 3]
        full, alpha, b, steps, ok, G, keep = leave_one_out_by_decrement(K, y, C, t, start)
        if full[t] == 0.0:
            continue
        tried += 1
        np.testing.assert_allclose(G, y * (K @ (alpha * y)) - 1.0, atol=1e-9)
        if not ok:
            continue
        converged += 1
        assert alpha[t] == 0.0
        assert kkt_violation(K, y, C, alpha, b, keep) < 1e-8
        cold = np.zeros(n)
        smo(K, y, C, cold, keep, 1e-12, 10 ** 6)
        value = [a.sum() - 0.5 * (a * y) @ K @ (a * y) for a in (alpha, cold)]
        assert value[0] == pytest.approx(value[1], rel=1e-9)
    assert converged >= 0.9 * tried


@pytest.mark.parametrize("seed", range(6))
def test_an_independent_free_set_keeps_the_function_and_optimality(seed):
    """With duplicated rows the polished solution splits a multiplier between duplicates,
    both free, and the KKT matrix is singular; moving along its null vectors keeps the
    decision function and the KKT conditions and ends with an invertible matrix."""
    K, y = svm_problem(seed)
    K[20:] = K[:10]
    K[:, 20:] = K[:, :10]
    y[20:] = y[:10]
    C = 2.0
    alpha = np.zeros(30)
    active = np.ones(30, dtype=bool)
    G, _, _ = smo(K, y, C, alpha, active, 1e-12, 10 ** 6)
    alpha, b = polish(K, y, C, alpha, bias_from_gradient(G, y, alpha, C, active))
    moved = independent_free_set(K, y, C, alpha)
    free = np.flatnonzero((moved > 0) & (moved < C))
    assert kkt_inverse(K, y, free, free.size)[1]
    np.testing.assert_allclose(K @ (moved * y), K @ (alpha * y), atol=1e-9)
    assert abs(moved @ y) < 1e-10 and np.all((moved >= 0) & (moved <= C))
    assert kkt_violation(K, y, C, moved, b) < 1e-8
    old_free = np.flatnonzero((alpha > 0) & (alpha < C))
    if not kkt_inverse(K, y, old_free, old_free.size)[1]:
        assert free.size < old_free.size
