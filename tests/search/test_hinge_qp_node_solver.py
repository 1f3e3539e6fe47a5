"""The hinge loss plus a quadratic penalty (``hinge_ridge``: SVC and LinearSVC) solved by the
compiled primal active-set method (``search/hinge_qp_node_solver.py``; issue 28, point 1).

References, independent of the package's solvers: every node against CLARABEL with tolerances
1e-12 (the node is a convex QP with linear constraints in (b, xi)), and whole replicates against
brute-force enumeration of the realisable sign patterns (``reference.realisable_patterns``, HiGHS
LPs) with the same node reference. The problems are the classes that break active-set methods:
discrete features (duplicate rows, many points on the margin), shifted and scaled features,
nearly separable labels, in the user's coordinates and in orthonormal ones (a full penalty
matrix with a null direction).
"""
import math
import warnings

import cvxpy as cp
import numpy as np
import pytest

from cudbound.cud import search_replicate
from cudbound.design import reparametrise
from cudbound.engine import ReplicateEngine
from cudbound.losses import HingeLoss, RidgeLoss, get_loss
from cudbound.search.hinge_qp_node_solver import HingeQPNodeSolver, hinge_qp_parts
from reference import realisable_patterns
from sweeps import first_of_each

KINDS = ("gaussian", "discrete", "shifted", "near_separable")


def _data(seed, kind, n=None, p=None):
    rng = np.random.default_rng(seed)
    while True:
        n_ = int(rng.integers(5, 11)) if n is None else n
        p_ = int(rng.choice([2, 3])) if p is None else p
        if kind == "discrete":
            F = rng.integers(0, 3, size=(n_, p_ - 1)).astype(float)
        else:
            F = rng.standard_normal((n_, p_ - 1))
        if kind == "shifted":
            F = F * rng.choice([0.05, 20.0], size=p_ - 1) + rng.choice([-30.0, 100.0], size=p_ - 1)
        design = np.column_stack([np.ones(n_), F])
        score = F @ rng.standard_normal(p_ - 1)
        noise = 0.05 if kind == "near_separable" else 1.0
        y = np.where(score - np.median(score) + noise * np.std(score) * rng.standard_normal(n_) >= 0, 1.0, -1.0)
        if len(np.unique(y)) == 2 and np.linalg.matrix_rank(design) == p_:
            return design, y, rng.multinomial(n_, np.full(n_, 1.0 / n_)).astype(float), rng


def _reference_node(design, y, w, Q, G):
    """min sum_i w_i/n max(0, 1 - y_i phi_i'b) + b'Qb over {G b >= 0}, by CLARABEL (tolerances 1e-12)."""
    n, p = design.shape
    b = cp.Variable(p)
    L = np.linalg.cholesky(Q + 1e-300 * np.eye(p)) if np.all(np.linalg.eigvalsh(Q) > 1e-14) else None
    pen = cp.sum_squares(L.T @ b) if L is not None else cp.quad_form(b, cp.psd_wrap(Q))
    obj = (w / n) @ cp.pos(1 - cp.multiply(y, design @ b)) + pen
    cons = [G @ b >= 0] if len(G) else []
    prob = cp.Problem(cp.Minimize(obj), cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE), prob.status
    return float(prob.value)


def _loss_and_coordinates(design, kind, lam, index):
    """Half the cases in orthonormal coordinates (as the search runs them), half in the user's."""
    loss = get_loss(f"hinge_ridge:{lam}" + (":all" if index % 5 == 4 else ""))
    if index % 2:
        rep = reparametrise(design)
        return rep.Z, rep.loss(loss)
    return design, loss


@pytest.mark.parametrize("index, kind", first_of_each([(index, kind) for index in range(40) for kind in KINDS],
                                                      lambda case: (case[1], case[0] % 2, case[0] % 5 == 4)))
def test_nodes_match_a_conic_reference(kind, index):
    """The README's command checks the first case of each kind, coordinates and penalty on the intercept
    or not (16 of 160), CI all of them (the others are marked slow: tests/_support/sweeps.py)."""
    design0, y, w, rng = _data(7_000 + 100 * KINDS.index(kind) + index, kind)
    lam = float(rng.choice([1e-3, 0.05, 1.0]))
    design, loss = _loss_and_coordinates(design0, kind, lam, index)
    solver = HingeQPNodeSolver(loss, design, y)
    solver.set_weights(w)
    Q = np.asarray(loss.penalty_matrix(design), dtype=float)
    n, p = design.shape
    warm = None
    for depth in range(int(rng.integers(0, min(n, 5) + 1))):
        rows = rng.choice(n, size=depth, replace=False)
        signs = rng.choice([-1.0, 1.0], size=depth)
        sol = solver.solve(rows, signs, warm)
        G = design[rows] * signs[:, None]
        want = _reference_node(design, y, w, Q, G)
        assert abs(sol.value - want) <= 1e-7 * max(1.0, abs(want)), (kind, index, depth, sol.value, want)
        # the point is in the cone and attains the value
        assert np.all(G @ sol.beta >= -1e-9 * max(1.0, np.linalg.norm(sol.beta)) * np.linalg.norm(G, axis=1))
        assert abs(loss.value(design, y, w, sol.beta) - sol.value) <= 1e-10 * max(1.0, sol.value)
        warm = sol.warm


def _reference_sup(design, y, counts, loss, gamma_hat, alphas):
    """Q^(b) by enumerating the realisable patterns of the points with nu != 1 (orthonormal coordinates)."""
    n = len(y)
    Q = np.asarray(loss.penalty_matrix(design), dtype=float)
    L_hat = loss.value(design, y, counts, gamma_hat)
    S = np.flatnonzero(counts != 1)
    pats = realisable_patterns(design[S])
    out = {a: 0.0 for a in alphas}
    for s in pats:
        C = float(np.sum((counts[S] - 1) * (s != y[S])))
        m = _reference_node(design, y, counts, Q, s[:, None] * design[S])
        for a in alphas:
            out[a] = max(out[a], abs(C) / n * min(1.0, a * (L_hat - m) + 1.0))
    return out


@pytest.mark.parametrize("index, kind", first_of_each([(index, kind) for index in range(8) for kind in KINDS],
                                                      lambda case: (case[1], case[0] % 3)))
def test_replicates_match_brute_force(kind, index):
    """The README's command checks the first replicate of each kind and n (12 of 32), CI all of them (slow)."""
    design0, y, counts, rng = _data(9_000 + 100 * KINDS.index(kind) + index, kind, n=int(7 + index % 3))
    rep = reparametrise(design0)
    loss = rep.loss(get_loss("hinge_ridge:0.05"))
    from cudbound.fit import fit_coefficients
    gamma = fit_coefficients(rep.Z, y, loss, reparametrise=False)
    n = len(y)
    alphas = (1.0, math.sqrt(n), float(n), float(n) ** 2)
    want = _reference_sup(rep.Z, y, counts, loss, gamma, alphas)
    eng = ReplicateEngine(rep.Z, y, loss)
    assert eng._hinge_qp is not None
    for a in alphas:
        got = eng.search(counts, gamma, a)
        assert got.status == "exact"
        assert abs(got.value - want[a]) <= 1e-7, (kind, index, a, got.value, want[a])


def test_solver_is_chosen_for_the_hinge_ridge_forms_only():
    rng = np.random.default_rng(0)
    design = np.column_stack([np.ones(10), rng.normal(size=(10, 2))])
    rep = reparametrise(design)
    assert hinge_qp_parts(get_loss("hinge_ridge:0.1")) is not None
    assert hinge_qp_parts(rep.loss(get_loss("hinge_ridge:0.1:all"))) is not None
    for spec in ("hinge", "logistic_ridge", "ridge"):
        assert hinge_qp_parts(get_loss(spec)) is None

    class Shifted(HingeLoss):  # another loss: max(0, 2 - y t)
        kind = "piecewise_linear"

        def pointwise(self, y, t):
            return np.maximum(0.0, 2.0 - y * t)

        def cvxpy_pointwise(self, y, t):
            return cp.pos(2.0 - cp.multiply(y, t))

    assert hinge_qp_parts(RidgeLoss(0.1, Shifted())) is None
    with pytest.raises(ValueError, match="hinge"):
        HingeQPNodeSolver(get_loss("hinge"), design, np.ones(10))


def test_svc_intervals_use_it_and_agree_with_the_cvxpy_engine():
    from sklearn.svm import SVC
    import cudbound
    from cudbound.datasets import demo_data
    X, y = demo_data(n=24, seed=5)
    fast = cudbound.cud_interval(X, y, procedure=SVC(kernel="linear", C=2.0), n_resamples=20, rng=3)
    slow = cudbound.cud_interval(X, y, procedure=SVC(kernel="linear", C=2.0), n_resamples=20, rng=3,
                                 engine_options={"engine": "cvxpy", "exact_distribution": True})
    assert abs(fast.half_width - slow.half_width) <= 1e-7
    assert not fast.conservative


@pytest.mark.parametrize("loss", ["hinge_ridge:0.05", "logistic_ridge:0.05"])
def test_workers_do_not_change_the_interval(loss):
    """The compiled solvers of the ridge forms give the same interval on 2 worker processes."""
    import cudbound
    from cudbound.datasets import demo_data
    X, y = demo_data(n=30, seed=8)
    one = cudbound.cud_interval(X, y, procedure=cudbound.Procedure(loss=loss), n_resamples=40, rng=2)
    two = cudbound.cud_interval(X, y, procedure=cudbound.Procedure(loss=loss), n_resamples=40, rng=2, n_jobs=2)
    assert one.confidence_interval == two.confidence_interval
    np.testing.assert_array_equal(one.bootstrap_distribution, two.bootstrap_distribution)
    np.testing.assert_array_equal(one.stats.nodes, two.stats.nodes)


def _degenerate(seed, kind):
    """``_data``'s kinds, and the degenerate ones: separable labels, and a resample whose points
    with nu != 1 all have one label (the other class only among its singletons)."""
    if kind not in ("separable", "one_class"):
        return _data(seed, kind)
    design, y, counts, rng = _data(seed, "gaussian", n=int(np.random.default_rng(seed).integers(6, 11)))
    if kind == "separable":
        y = np.where(design[:, 1:] @ np.ones(design.shape[1] - 1) >= 0.0, 1.0, -1.0)
        if len(np.unique(y)) < 2:
            y[0] = -y[0]
    else:
        # the points of class -1 once each, those of class +1 0, 2 or more times
        pos = np.flatnonzero(y > 0)
        counts = np.where(y > 0, 0.0, 1.0)
        left = len(pos)
        while left > 0:
            take = left if left <= 3 else int(rng.integers(2, 4))
            counts[int(rng.choice(pos))] += take
            left -= take
    return design, y, counts, rng


SCREEN_KINDS = (*KINDS, "separable", "one_class")


@pytest.mark.parametrize("kind", SCREEN_KINDS)
def test_compiled_screening_fixes_the_same_points_as_the_python_loop(kind):
    """The compiled screening loop (``HingeQPNodeSolver.screen_batch``) and the one Python solve
    per point it replaces fix the same points with the same signs, with the same number of
    solves, on 12 problems of each kind for every alpha_n (the neighbourhood from everything to
    a sliver)."""
    from cudbound.fit import fit_coefficients
    from cudbound.search import ReplicateProblem, Screening

    solves = 0
    for index in range(12):
        design0, y, counts, rng = _degenerate(11_000 + 100 * SCREEN_KINDS.index(kind) + index, kind)
        rep = reparametrise(design0)
        loss = rep.loss(get_loss(f"hinge_ridge:{float(rng.choice([1e-3, 0.05, 1.0]))}"))
        gamma = fit_coefficients(rep.Z, y, loss, reparametrise=False)
        eng = ReplicateEngine(rep.Z, y, loss)
        eng._fallbacks = 0  # as a search starts
        n = len(y)
        for a in (1.0, math.sqrt(n), float(n), float(n) ** 2):
            solver, root, _ = eng.prepare(counts)
            batch = eng._screen_batch(solver, root)
            assert batch is not None
            made = []
            for fast in (True, False):
                screening = Screening(True, eng._screen_solver(solver), [(root.beta, root.beta_value)], None,
                                      batch if fast else None)
                made.append(ReplicateProblem(rep.Z, y, counts, gamma, loss, a, beta_u=root.beta, L_u=root.value,
                                             screening=screening))
            fast, slow = made
            np.testing.assert_array_equal(fast.rows, slow.rows)
            np.testing.assert_array_equal(fast.cost_plus, slow.cost_plus)
            assert (fast.n_screened, fast.C_forced, fast.screen_solves) == (slow.n_screened, slow.C_forced,
                                                                            slow.screen_solves)
            solves += fast.screen_solves
    assert solves > 0   # the compiled loop ran
