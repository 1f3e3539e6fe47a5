"""Many hinge fits at once (``cudbound/optim/hinge_parts.py``): the smoothed hinge and its exact line search,
the face read off (snap) and its active-set correction (repair) by their rules,
every part's minimiser against independent references (the least-norm minimiser of the hinge's linear
program from scipy's HiGHS and an enumeration of faces, CLARABEL for the ridge forms, a closed form where the
intercept is not unique), degenerate parts, stacked designs, and parts left uncertified."""
import warnings

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import linprog

from cudbound.design import reparametrise
from cudbound.optim.hinge_parts import SmoothedHinge, _exact_steps, hinge_parts, repair, snap
from cudbound.optim.smooth_parts import StackedParts
from reference_losses import _least_norm_in_polyhedron


def _problem(seed, n=30, d=2, discrete=False, B=8, kind="bootstrap"):
    """(Z, y, W): a design with an intercept in orthonormal coordinates (Z'Z = n I), labels, part weights."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, d)).astype(float) if discrete else rng.normal(size=(n, d)) * [1.0, 30.0][:d]
    y = np.where(X[:, 0] - X[:, 0].mean() + rng.normal(size=n) > 0, 1.0, -1.0)
    Z = reparametrise(np.column_stack([np.ones(n), X])).Z
    W = rng.multinomial(n, np.ones(n) / n, size=B).astype(float) if kind == "bootstrap" else \
        (rng.random((B, n)) < 0.75).astype(float)
    return Z, y, W


def _least_norm_hinge(Z, y, w):
    """The least-norm minimiser of sum_i w_i max(0, 1 - a_i'g): an optimal dual of the linear program (HiGHS)
    describes the set of minimisers by complementary slackness, whose least-norm point an enumeration of
    faces finds (tests/_support/reference_losses.py)."""
    on = w > 0
    a, c = (y[:, None] * Z)[on], w[on]
    m, p = a.shape
    res = linprog(np.r_[np.zeros(p), c], A_ub=np.hstack([-a, -np.eye(m)]), b_ub=-np.ones(m),
                  bounds=[(None, None)] * p + [(0, None)] * m, method="highs")
    u, r = -res.ineqlin.marginals, res.lower.marginals[p:]
    tol = 1e-9 * c
    return _least_norm_in_polyhedron(a[(u > tol) & (r > tol)], a[(u > tol) & ~(r > tol)], a[~(u > tol) & (r > tol)], p)


def _clarabel(Z, y, w, M):
    """min (1/n) sum_i w_i max(0, 1 - y_i z_i'g) + |M g|^2 by CLARABEL at tolerances 1e-12."""
    g = cp.Variable(Z.shape[1])
    objective = cp.sum(cp.multiply(w / len(y), cp.pos(1 - cp.multiply(y, Z @ g)))) + cp.sum_squares(M @ g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cp.Problem(cp.Minimize(objective)).solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12,
                                                 tol_feas=1e-12)
    return np.asarray(g.value, dtype=float)


def _objective(Z, y, w, M, g):
    return w @ np.maximum(0.0, 1.0 - y * (Z @ g)) / len(y) + (0.0 if M is None else float(np.sum((M @ g) ** 2)))


def test_the_smoothed_hinge_is_the_hinge_with_its_kink_rounded():
    """Within h/2 below the hinge, equal to it away from the zone, continuous with a continuous derivative, and its
    derivatives those of finite differences."""
    h = 0.3
    loss = SmoothedHinge(h)
    y = np.array([1.0, -1.0] * 200)
    t = np.repeat(np.linspace(-2.0, 2.0, 200), 2) * y
    m = y * t
    values = loss.pointwise(y, t)
    hinge = np.maximum(0.0, 1.0 - m)
    assert np.all(values <= hinge + 1e-15) and np.all(values >= hinge - h / 2 - 1e-15)
    np.testing.assert_allclose(values[(m >= 1.0) | (m <= 1.0 - h)], (hinge - np.where(m <= 1 - h, h / 2, 0.0))
                               [(m >= 1.0) | (m <= 1.0 - h)], atol=1e-15)
    d1, d2 = loss.derivatives(y, t)
    eps = 1e-6
    np.testing.assert_allclose(d1, (loss.pointwise(y, t + eps) - loss.pointwise(y, t - eps)) / (2 * eps), atol=1e-6)
    inside = (m > 1 - h + 1e-5) & (m < 1 - 1e-5)
    np.testing.assert_allclose(d2[inside], 1.0 / h)
    assert np.all(d2[~((m > 1 - h) & (m < 1))] == 0.0)
    edge = np.array([1.0, 1.0 - h])
    for side in (-1e-12, 1e-12):
        np.testing.assert_allclose(loss.pointwise(np.ones(2), edge + side), loss.pointwise(np.ones(2), edge),
                                   atol=1e-11)


def test_snap_reads_the_face_off_the_depths_in_the_rounded_zone():
    """Depth (1 - m) / h: inside the window on the margin (alpha = c clip(depth, 0, 1)), beyond it below (alpha = c),
    before it above (alpha = 0); a point of weight 0 nowhere."""
    C = np.array([[0.1, 0.1, 0.1, 0.0, 0.1]])
    margins = np.array([[1.5, 0.995, 0.5, 0.99, 1.0]])             # depths -50, 0.5, 50, 1, 0 at h = 0.01
    on, below, alpha = snap(C, margins, 0.01, (0.0, 1.0))
    assert on.tolist() == [[False, True, False, False, False]]
    assert below.tolist() == [[False, False, True, False, False]]
    np.testing.assert_allclose(alpha, [[0.0, 0.05, 0.1, 0.0, 0.0]], rtol=1e-12)
    on, below, _ = snap(C, margins, 0.01, (-0.5, 1.5))              # the wider window takes the point at depth 0
    assert on.tolist() == [[False, True, False, False, True]]
    assert below.tolist() == [[False, False, True, False, False]]


def test_repair_moves_each_point_that_breaks_the_kkt_conditions():
    """A multiplier below 0 sends its point above the margin, above c below it; a point below the margin with
    margin above 1, or above it with margin below 1, joins the face; the others stay; the padding of idx is
    ignored; alpha is the multipliers clipped to [0, c] on the face, c below."""
    A = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0], [0.0, 2.0], [1.0, 0.0]])
    gamma = np.array([[1.0, 0.25]])                                  # margins 1, 0.25, 1.25, 2, 0.5, 1
    C = np.full((1, 6), 0.1)
    idx, mu = np.array([[0, 1, 5, -1]]), np.array([[-0.01, 0.2, 0.04, 5.0]])
    below = np.array([[False, False, True, False, False, False]])
    on = np.array([[True, True, False, False, False, True]])
    above = ~below & ~on
    new_on, new_below, alpha = repair(A, C, gamma, mu, idx, (below, on, above))
    assert new_on.tolist() == [[False, False, True, False, True, True]]
    assert new_below.tolist() == [[False, True, False, False, False, False]]
    np.testing.assert_allclose(alpha, [[0.0, 0.1, 0.0, 0.0, 0.0, 0.04]], rtol=0, atol=0)


@pytest.mark.parametrize("seed", range(4))
def test_the_exact_line_search_finds_the_minimum_along_the_step(seed):
    """phi(t) = F_h(gamma + t s) at the returned t is the least of phi on a fine grid, and phi'(t) = 0."""
    Z, y, W = _problem(seed)
    rng = np.random.default_rng(seed)
    M = 0.1 * np.eye(Z.shape[1])
    parts = StackedParts(Z, y, W, M, SmoothedHinge(0.1))
    gamma = rng.normal(size=(len(W), Z.shape[1]))
    g, H = parts.gradient_hessian(gamma)
    s = -np.linalg.solve(H, g[..., None])[..., 0] * rng.uniform(0.2, 5.0, size=(len(W), 1))
    t = _exact_steps(parts, gamma, s, np.einsum("gp,gp->g", g, s), 0.1)
    grid = np.linspace(0.0, 3.0 * t.max(), 3001)
    for k in range(len(W)):
        values = parts.take([k]).value(gamma[k] + grid[:, None] * s[k])
        best = parts.take([k]).value((gamma[k] + t[k] * s[k])[None])[0]
        assert best <= values.min() + 1e-12
        slope = parts.take([k]).gradient_hessian((gamma[k] + t[k] * s[k])[None])[0][0] @ s[k]
        assert abs(slope) <= 1e-9 * max(1.0, np.abs(s[k]).max())


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", ["bootstrap", "folds"])
@pytest.mark.parametrize("discrete", [False, True])
def test_plain_hinge_parts_are_the_least_norm_minimisers(seed, kind, discrete):
    """No penalty: every part certified, and its minimiser the least-norm one of the linear program (HiGHS and
    an enumeration of faces), within 1e-8; separable parts among them (their minimisers the hard-margin SVM's)."""
    Z, y, W = _problem(seed, n=24, discrete=discrete, kind=kind)
    gamma, certified = hinge_parts(Z, y, W, None, np.zeros((len(W), Z.shape[1])))
    assert certified.sum() >= len(W) - 1
    for g, w in zip(gamma[certified], W[certified]):
        ref = _least_norm_hinge(Z, y, w)
        np.testing.assert_allclose(g, ref, rtol=0, atol=1e-8 * max(1.0, np.abs(ref).max()))


def test_separable_parts_get_the_hard_margin_solution():
    """Separable data, no penalty: the minimisers are the directions with every weighted margin >= 1, and the
    one of least norm is the hard-margin SVM (CLARABEL: min |g|^2 subject to the margins)."""
    Z, y, W = _problem(3, n=20)
    y = np.where(Z[:, 1] > 0, 1.0, -1.0)
    gamma, certified = hinge_parts(Z, y, W, None, np.zeros((len(W), Z.shape[1])))
    assert certified.all()
    for g, w in zip(gamma, W):
        v = cp.Variable(Z.shape[1])
        on = w > 0
        cp.Problem(cp.Minimize(cp.sum_squares(v)), [cp.multiply(y[on], Z[on] @ v) >= 1]).solve(
            solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
        np.testing.assert_allclose(g, v.value, rtol=0, atol=1e-7 * np.abs(v.value).max())
        assert _objective(Z, y, w, None, g) <= 1e-15


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("spare", [False, True])
@pytest.mark.parametrize("discrete", [False, True])
def test_ridge_parts_equal_clarabel(seed, spare, discrete):
    """A ridge penalty on every direction (LinearSVC's) or sparing the intercept (SVC's, here unique): every part
    certified, with an objective no larger than CLARABEL's and within 1e-5 of its minimiser (CLARABEL's accuracy
    where many points sit on the margin, as discrete features make them)."""
    Z, y, W = _problem(seed, discrete=discrete)
    p = Z.shape[1]
    M = np.sqrt(0.02) * np.eye(p)[1:] if spare else np.sqrt(0.02) * np.eye(p)
    free = np.eye(p)[:, :1] if spare else None
    gamma, certified = hinge_parts(Z, y, W, M, np.zeros((len(W), p)), free=free)
    assert certified.all()
    for g, w in zip(gamma, W):
        ref = _clarabel(Z, y, w, M)
        assert _objective(Z, y, w, M, g) <= _objective(Z, y, w, M, ref) + 1e-12
        np.testing.assert_allclose(g, ref, rtol=0, atol=1e-5 * max(1.0, np.abs(ref).max()))


def test_a_flat_intercept_takes_the_least_norm_point():
    """Mirror-symmetric data ((x, y) and (-x, -y) with the same weight) and a strong penalty on the slope: every
    margin is below 1, the loss is flat in the intercept, and the least-norm minimiser is intercept 0 and slope
    S / (2 lam), S = (1/n) sum_i w_i y_i x_i (in coordinates where the intercept column is orthogonal)."""
    x = np.array([0.5, 1.0, 1.5, 2.0, -0.3, 0.7])
    y = np.array([1.0, 1.0, -1.0, 1.0, -1.0, 1.0])
    X, Y = np.r_[x, -x], np.r_[y, -y]
    n = X.size
    Z = np.column_stack([np.ones(n), X])
    lam = 5.0
    M = np.sqrt(lam) * np.array([[0.0, 1.0]])
    W = np.tile(np.r_[[1.0, 2.0, 1.0, 3.0, 1.0, 2.0]] * 1.0, (1, 2))
    gamma, certified = hinge_parts(Z, Y, W, M, np.array([[0.3, 0.0]]), free=np.array([[1.0], [0.0]]))
    S = W[0] @ (Y * X) / n
    assert certified[0] and np.all(Y * (Z @ gamma[0]) < 1.0)
    np.testing.assert_allclose(gamma[0], [0.0, S / (2 * lam)], rtol=0, atol=1e-12)


def test_identical_rows_are_one_row_with_the_summed_weight():
    """Rows repeated with their label solve the problem of the distinct rows with the weights summed; rows
    repeated with the other label (a point with both labels) solve CLARABEL's problem."""
    Z, y, W = _problem(5, n=16, discrete=True)
    p = Z.shape[1]
    M = np.sqrt(0.05) * np.eye(p)
    Zd, Wd = np.vstack([Z, Z[:6]]), np.hstack([W, W[:, :6]])
    same, ok = hinge_parts(Zd, np.r_[y, y[:6]], Wd, M, np.zeros((len(W), p)))
    summed = W.copy()
    summed[:, :6] += W[:, :6]
    alone, ok_alone = hinge_parts(Z, y, summed * (16 / 22), M, np.zeros((len(W), p)))
    assert ok.all() and ok_alone.all()
    np.testing.assert_allclose(same, alone, rtol=0, atol=1e-10 * np.abs(alone).max())
    both, ok_both = hinge_parts(Zd, np.r_[y, -y[:6]], Wd, M, np.zeros((len(W), p)))
    assert ok_both.all()
    for g, w in zip(both, Wd):
        ref = _clarabel(Zd, np.r_[y, -y[:6]], w, M)
        np.testing.assert_allclose(g, ref, rtol=0, atol=1e-6 * max(1.0, np.abs(ref).max()))


def test_stacked_designs_are_each_part_solved_alone():
    """A (G, n, p) stack of designs with (G, k, p) penalty factors and (G, p, r) free directions: each part's
    minimiser is the one of its own design solved alone."""
    Z, y, W = _problem(7, n=20)
    rng = np.random.default_rng(7)
    G, p = len(W), Z.shape[1]
    Q = [np.linalg.qr(rng.normal(size=(p, p)))[0] for _ in range(G)]
    Zs = np.stack([Z @ q for q in Q])
    Ms = np.stack([np.sqrt(0.03) * np.eye(p)[1:] @ q for q in Q])
    Fs = np.stack([q.T[:, :1] for q in Q])
    gamma, ok = hinge_parts(Zs, y, W, Ms, np.zeros((G, p)), free=Fs)
    assert ok.all()
    for g, q, w in zip(gamma, Q, W):
        alone, ok1 = hinge_parts(Z, y, w[None], np.sqrt(0.03) * np.eye(p)[1:], np.zeros((1, p)),
                                 free=np.eye(p)[:, :1])
        assert ok1[0]
        np.testing.assert_allclose(q @ g, alone[0], rtol=0, atol=1e-9 * max(1.0, np.abs(alone).max()))


def test_a_part_no_face_certifies_is_left_uncertified():
    """With no Newton step allowed from a start far off, no face read off certifies: the parts come back
    uncertified, without an exception, holding their iterate."""
    Z, y, W = _problem(1)
    p = Z.shape[1]
    start = np.full((len(W), p), 7.0)
    gamma, certified = hinge_parts(Z, y, W, 0.1 * np.eye(p), start, max_iter=0)
    assert not certified.any() and np.all(np.isfinite(gamma))
