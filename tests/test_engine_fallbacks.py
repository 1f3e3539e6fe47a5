"""Issue 12, point 2: no solver failure aborts an interval.

Every numerical failure in the search (NNLS, the active-set method, cvxpy, the separation
and realisability LPs, the root and screening solves, the compiled search) is handed to
another solver or to a certified bound; the replicate then holds a value >= the exact Q^(b),
its status says whether it is still exact, and ``fallbacks`` counts the hand-offs.

The regression case is the one of the issue: ``cudbound interval --basis poly:2 --seed 0``
on the first 40 rows of the Pima data (glucose, BMI, age) died with scipy's
``RuntimeError: Maximum number of iterations reached.`` from NNLS inside ``polish_kkt``.
The failing node was found by running the replicates of that interval one by one on
bcb6719 (replicate 60 of ``rng.multinomial(40, [1/40] * 40, size=500)`` with
``rng = np.random.default_rng(0)``) and recording the node's constraints and ECOS's
answer, stored below.
"""
import math
import os

import cvxpy as cp
import numpy as np
import pytest
from search_setup import squared_replicate
from scipy.optimize import lsq_linear

import cudbound
import cudbound.engine as engine_mod
import cudbound.search.bnb as bnb_mod
import cudbound.search.realisability as realisability_mod
import cudbound.optim.smooth as convex_mod
import cudbound.optim.qp as qp_mod
from cudbound.basis import PolynomialBasis
from cudbound.cud import search_replicate
from cudbound.engine import ReplicateEngine, trivial_bound
from cudbound.losses import SquaredLoss
from cudbound.results import SearchStats
from cudbound.search import (ActiveSetNodeSolver, CvxpyNodeSolver, NodeSolution, NodeSolveError, NodeSolver, branch_and_bound)
from cudbound.search.bnb import SearchOptions, SearchOutcome
from cudbound.search.node_solvers import SOLVER_ERRORS, QuadraticReplicate
from cudbound.optim.qp import polish_kkt
from cudbound.search.realisability import RealisabilityUnknown

# ---------------------------------------------------------------- the Pima case of the issue

PIMA_COUNTS = np.array([1, 0, 3, 0, 2, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 4, 2, 2, 3, 0, 2, 0, 1, 0, 2, 2, 1, 0, 0,
                        3, 2, 2, 1, 0, 0, 2, 0, 0, 0, 1])
# the node whose polish crashed: signs[k] * phi_{rows[k]}' beta >= 0
PIMA_ROWS = np.array([15, 18, 29, 2, 6, 1, 3, 38, 33, 27, 21, 37, 35, 17, 30, 10, 19, 7, 16, 23])
PIMA_SIGNS = np.array([1, -1, -1, 1, 1, 1, 1, -1, 1, 1, 1, 1, -1, 1, -1, 1, 1, 1, 1, -1], dtype=float)
# ECOS's (interior-point) answer for that node, which polish_kkt was asked to make exact
PIMA_X0 = np.array([2.908935310387984, -0.05900672258000376, -0.0059539400034863185, 0.026778393508890257,
                    0.00019906553356273182, 0.0006440618079685515, -0.00015656873413868403,
                    -0.0006205068182335763, -0.0007501547151456592, 0.00019069724738189257])


def pima_design(data_dir):
    """The first 40 rows of the raw Pima file, glucose, BMI and age (columns 2, 6, 8), poly:2."""
    raw = np.loadtxt(os.path.join(data_dir, "pima-indians-diabetes.data"), delimiter=",")[:40]
    design = PolynomialBasis(2).fit_transform(raw[:, [1, 5, 7]])
    y = np.where(raw[:, 8] == 1, 1.0, -1.0)
    return design, y


def reference_node_minimum(design, y, counts, rows, signs):
    """min of the bootstrap squared loss over the node's cone, by CLARABEL on an orthonormal basis
    of the design's column space (the same cone and loss, well scaled), tight tolerances."""
    Q, _ = np.linalg.qr(design)
    b = cp.Variable(Q.shape[1])
    w = counts / len(counts)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(w, cp.square(y - Q @ b)))),
                      [cp.multiply(signs, Q[rows] @ b) >= 0])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert prob.status == cp.OPTIMAL
    return prob.value


def test_pima_counts_are_replicate_60_of_seed_0():
    counts = np.random.default_rng(0).multinomial(40, np.full(40, 1 / 40), size=500)
    np.testing.assert_array_equal(counts[60], PIMA_COUNTS)


def test_pima_polish_is_exact_where_nnls_used_to_crash(shared_data):
    """The node's KKT polish: scipy's NNLS on the 14 nearly active rows of the first threshold
    (10 coefficients, row norms about 1e4, H with condition number about 1e12) stopped at its
    iteration cap. The polish now returns a certified point, the node's exact minimum."""
    design, y = pima_design(shared_data)
    quad = QuadraticReplicate(SquaredLoss(), design, y, PIMA_COUNTS.astype(float))
    G = design[PIMA_ROWS] * PIMA_SIGNS[:, None]
    x = polish_kkt(quad.H, quad.g, G, PIMA_X0)
    assert x is not None
    scale = np.linalg.norm(G, axis=1)
    assert np.min(G @ x / scale) >= -1e-7 * max(1.0, np.linalg.norm(x))
    ref = reference_node_minimum(design, y, PIMA_COUNTS.astype(float), PIMA_ROWS, PIMA_SIGNS)
    value = SquaredLoss().value(design, y, PIMA_COUNTS.astype(float), x)
    assert value == pytest.approx(ref, rel=1e-8)
    assert quad.value(x) == pytest.approx(ref, rel=1e-8)


def test_pima_node_solve_returns_the_node_minimum(shared_data):
    """The same node through the cvxpy node solver (ECOS, then the polish) on the raw design."""
    design, y = pima_design(shared_data)
    solver = CvxpyNodeSolver(SquaredLoss(), design, y)
    solver.set_weights(PIMA_COUNTS)
    sol = solver.solve(PIMA_ROWS, PIMA_SIGNS)
    ref = reference_node_minimum(design, y, PIMA_COUNTS.astype(float), PIMA_ROWS, PIMA_SIGNS)
    assert sol.value == pytest.approx(ref, rel=1e-8)


def test_pima_replicate_search_on_the_raw_design_reaches_the_node_and_returns(shared_data, monkeypatch):
    """Design level, on the raw (badly scaled) poly:2 design, whatever the fit does: the search of
    the replicate reaches the node that crashed bcb6719 (after 2469 nodes), now solves it
    exactly, and returns. A node budget just past that node keeps the test short (the whole
    replicate takes minutes on this path); the budget's answer is a certified bound."""
    design, y = pima_design(shared_data)
    beta_hat = np.linalg.lstsq(design, y, rcond=None)[0]
    seen = []
    real = CvxpyNodeSolver.solve

    def spy(self, rows, signs, warm=None):
        sol = real(self, rows, signs, warm)
        if len(rows) == len(PIMA_ROWS) and np.array_equal(rows, PIMA_ROWS) and np.array_equal(signs, PIMA_SIGNS):
            seen.append(sol.value)
        return sol

    monkeypatch.setattr(CvxpyNodeSolver, "solve", spy)
    # the engine itself on the raw design (search_replicate would search in orthonormal
    # coordinates, where this node is well conditioned)
    out = ReplicateEngine(design, y, SquaredLoss()).search(PIMA_COUNTS, beta_hat, float(len(y)),
                                                           SearchOptions(max_nodes=2600))
    assert len(seen) == 1
    ref = reference_node_minimum(design, y, PIMA_COUNTS.astype(float), PIMA_ROWS, PIMA_SIGNS)
    assert seen[0] == pytest.approx(ref, rel=1e-8)
    assert out.status == "budget" and out.nodes >= 2469
    assert out.value >= out.lower > 0.0


def test_pima_first_threshold_residual_matches_bounded_least_squares(shared_data, monkeypatch):
    """The NNLS problem that hit scipy's iteration cap (the multipliers of the first threshold's
    14 nearly active rows, 10 coefficients: more rows than coefficients, row norms about 1e4),
    solved by ``cone_residual`` and by an independent bounded least-squares solver (scipy's
    lsq_linear, bounded-variable least squares). The residual is far above the certificate's
    tolerance, so this threshold rightly certifies nothing and the polish moves on."""
    design, y = pima_design(shared_data)
    quad = QuadraticReplicate(SquaredLoss(), design, y, PIMA_COUNTS.astype(float))
    G = design[PIMA_ROWS] * PIMA_SIGNS[:, None]
    calls = []
    real = qp_mod.cone_residual

    def record(A, b):
        calls.append((A, b))
        return real(A, b)

    monkeypatch.setattr(qp_mod, "cone_residual", record)
    assert qp_mod._polish_once(quad.H, quad.g, G, PIMA_X0, 1e-6, 1e-7) is None
    (A, b), = calls
    assert A.shape == (14, 10)
    r = real(A, b)
    assert r is not None
    An = (A / np.linalg.norm(A, axis=1)[:, None]).T
    ref = lsq_linear(An, b, bounds=(0, np.inf), method="bvls", tol=1e-14)
    assert r == pytest.approx(np.linalg.norm(An @ ref.x - b), rel=1e-6)
    assert r > 1e-7 * max(1.0, np.linalg.norm(b), np.linalg.norm(2 * quad.g))


# replicate 107 of the same interval: at this node ECOS, CLARABEL and SCS all failed the KKT
# check, because a constraint that is not active at the minimum has relative slack 4e-11 there,
# below every threshold of ACTIVE_TOLS (bcb6719 and the first version of this fix kept a
# certified bound, 0.275 for this replicate, whose exact value is 0.2624)
PIMA_ROWS_107 = np.array([17, 29, 14, 6, 3, 38, 33, 27, 37, 35, 18, 19, 7, 5, 9, 20, 12])
PIMA_SIGNS_107 = np.array([1, -1, 1, -1, 1, 1, 1, 1, -1, 1, 1, -1, 1, 1, 1, 1, -1], dtype=float)


def test_pima_node_with_a_nearly_active_constraint_is_solved_exactly(shared_data):
    design, y = pima_design(shared_data)
    counts = np.random.default_rng(0).multinomial(40, np.full(40, 1 / 40), size=500)[107]
    solver = CvxpyNodeSolver(SquaredLoss(), design, y)
    solver.set_weights(counts)
    sol = solver.solve(PIMA_ROWS_107, PIMA_SIGNS_107)
    ref = reference_node_minimum(design, y, counts.astype(float), PIMA_ROWS_107, PIMA_SIGNS_107)
    assert sol.value == pytest.approx(ref, rel=1e-8)
    assert not sol.fallback  # the first solver's answer is polished now


# ---------------------------------------------------------------- cone_residual and the polishes


# ---------------------------------------------------------------- intervals and replicates


def _raise_nnls(*args, **kwargs):
    raise RuntimeError("Maximum number of iterations reached.")


def small_data(seed=0, n=24):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] + 0.7 * rng.standard_normal(n) > 0, 1, -1)
    return X, y


def make_problem(seed, n=24):
    X, y = small_data(seed, n)
    design = np.column_stack([np.ones(n), X])
    counts = np.random.default_rng(seed + 100).multinomial(n, np.full(n, 1.0 / n))
    return design, y.astype(float), counts


def test_interval_with_failing_nnls_is_conservative_not_aborted(monkeypatch):
    """Every KKT polish fails (scipy's NNLS monkeypatched to raise, as on the Pima case): the
    cvxpy-engine interval still returns, flagged conservative, with fallbacks counted and a
    half-width (and every replicate value) at least the exact one."""
    X, y = small_data(1, n=20)
    kw = dict(n_resamples=10, confidence_level=0.8, rng=3, engine_options={"engine": "cvxpy"})
    exact = cudbound.cud_interval(X, y, **kw)
    assert not exact.conservative and exact.fallbacks == 0
    monkeypatch.setattr(qp_mod, "nnls", _raise_nnls)
    res = cudbound.cud_interval(X, y, **kw)
    assert res.conservative
    assert res.fallbacks > 0 and res.fallbacks == res.stats.summary()["fallbacks_total"]
    assert res.stats.summary()["solver_failures"] == res.stats.n_inexact > 0
    assert set(res.stats.status) <= {"exact", "solver_failure"}
    assert np.all(res.bootstrap_distribution >= exact.bootstrap_distribution - 1e-12)
    # an exact replicate keeps its exact value
    ex = res.stats.status == "exact"
    np.testing.assert_allclose(res.bootstrap_distribution[ex], exact.bootstrap_distribution[ex], atol=1e-12)
    assert res.half_width >= exact.half_width
    assert res.high >= exact.high and res.low <= exact.low
    d = res.to_dict()
    assert d["conservative"] is True and d["fallbacks"] == res.fallbacks


def test_active_set_failure_handed_to_cvxpy_is_a_fallback_but_exact(monkeypatch):
    """Nodes the active-set solver cannot solve are solved by cvxpy: the value is exact, the
    replicate says so, and each hand-off is counted."""
    design, y, counts = make_problem(2)
    exact = search_replicate(design, y, counts, engine_options={"engine": "python"})
    assert exact.fallbacks == 0 and exact.solves > 0

    def fail(self, rows, signs, warm=None):
        raise NodeSolveError("injected failure")

    monkeypatch.setattr(ActiveSetNodeSolver, "solve", fail)
    out = search_replicate(design, y, counts, engine_options={"engine": "python"})
    assert out.status == "exact"
    assert out.value == pytest.approx(exact.value, abs=1e-8)
    assert out.fallbacks == out.solves > 0


def test_compiled_replicate_failure_is_handed_to_the_python_set_up(monkeypatch):
    design, y, counts = make_problem(3)
    exact = search_replicate(design, y, counts)
    assert exact.fallbacks == 0

    def fail(*args, **kwargs):
        raise np.linalg.LinAlgError("injected")

    # the whole-replicate kernel fails: the replicate is set up in Python and searched by the
    # same loop with the active-set node solver called from it
    monkeypatch.setattr(engine_mod, "compiled_replicate", fail)
    out = search_replicate(design, y, counts)
    assert out.status == "exact" and out.fallbacks == 1
    assert out.value == pytest.approx(exact.value, abs=1e-8)


@pytest.mark.parametrize("exc", [NodeSolveError("x"), np.linalg.LinAlgError("x"), cp.error.SolverError("x"),
                                 RealisabilityUnknown("x"), ZeroDivisionError("x")])
def test_root_failure_of_any_numerical_family_keeps_the_trivial_bound(monkeypatch, exc):
    design, y, counts = make_problem(4, n=16)
    exact = search_replicate(design, y, counts, loss="logistic", engine_options={"engine": "cvxpy"})

    def fail(self, rows, signs, warm=None):
        raise exc

    monkeypatch.setattr(CvxpyNodeSolver, "solve", fail)
    out = search_replicate(design, y, counts, loss="logistic", engine_options={"engine": "cvxpy"})
    assert out.status == "solver_failure" and out.fallbacks == 1
    assert out.value == trivial_bound(counts) >= exact.value
    # |C| / n over all sign patterns, by enumeration of the costs: never above the trivial bound
    w = counts - 1.0
    assert max(np.sum(np.maximum(w, 0)), np.sum(np.maximum(-w, 0))) / len(counts) == trivial_bound(counts)


def test_programming_errors_are_not_swallowed(monkeypatch):
    design, y, counts = make_problem(4, n=16)

    def bug(self, rows, signs, warm=None):
        raise TypeError("a bug, not a numerical failure")

    monkeypatch.setattr(CvxpyNodeSolver, "solve", bug)
    with pytest.raises(TypeError):
        search_replicate(design, y, counts, loss="logistic", engine_options={"engine": "cvxpy"})
    assert not any(issubclass(TypeError, e) for e in SOLVER_ERRORS)


def test_cvxpy_library_errors_become_node_failures(monkeypatch):
    """A ValueError or RuntimeError raised inside cvxpy's solve by every solver in the chain is a
    NodeSolveError for the search, which keeps a certified bound."""
    design, y, counts = make_problem(5)
    exact = search_replicate(design, y, counts, engine_options={"engine": "cvxpy"})
    real = cp.Problem.solve
    calls = {"n": 0}

    def flaky(self, *args, solver=None, **kwargs):
        calls["n"] += 1
        if solver == "ECOS":
            raise ValueError("injected library failure")
        if solver == "CLARABEL":
            raise RuntimeError("injected library failure")
        return real(self, *args, solver=solver, **kwargs)

    monkeypatch.setattr(cp.Problem, "solve", flaky)
    out = search_replicate(design, y, counts, engine_options={"engine": "cvxpy"})  # SCS answers, polished exactly
    assert calls["n"] > 0
    assert out.value >= exact.value - 1e-9
    assert out.fallbacks >= out.solves > 0
    if out.status == "exact":
        assert out.value == pytest.approx(exact.value, abs=1e-8)


class _NaNSolver(NodeSolver):
    def solve(self, rows, signs, warm=None):
        return NodeSolution(float("nan"), np.full(3, np.nan))


@pytest.mark.parametrize("seed", [6, 7, 8])
def test_non_finite_node_solution_is_a_failure_not_a_value(seed):
    design, y, counts = make_problem(seed, n=30)
    exact = search_replicate(design, y, counts)
    problem, root, quad, beta_hat = squared_replicate(design, y, counts)
    out = branch_and_bound(problem, _NaNSolver(), root, extra_lower=[(beta_hat, problem.L_hat)])
    assert math.isfinite(out.value) and out.value >= exact.value - 1e-12
    assert out.fallbacks > 0
    assert out.status in ("exact", "solver_failure")
    if out.status == "exact":
        assert out.value == pytest.approx(exact.value, abs=1e-12)
    assert bnb_mod._value_at(problem, np.full(3, np.nan), 0.0, bnb_mod.Tolerances()) == 0.0


def test_undecided_realisability_keeps_node_and_counts_fallback(monkeypatch):
    design, y, counts = make_problem(9, n=30)
    exact = search_replicate(design, y, counts, engine_options={"engine": "python"})
    def undecided(rows, signs, candidates=()):
        raise ValueError("injected linprog failure")

    monkeypatch.setattr(realisability_mod, "realise", undecided)
    out = search_replicate(design, y, counts, engine_options={"engine": "python"})
    assert out.status == "solver_failure" and out.undecided
    assert out.fallbacks == out.realisability_checks > 0
    assert out.value >= exact.value - 1e-12


def test_separation_lp_errors_do_not_escape(monkeypatch):
    """Logistic loss: linprog raising inside the separation LP makes the replicate fall back,
    never raise."""
    design, y, counts = make_problem(10, n=16)
    exact = search_replicate(design, y, counts, loss="logistic")

    def bad_linprog(*args, **kwargs):
        raise ValueError("injected linprog failure")

    monkeypatch.setattr(convex_mod, "linprog", bad_linprog)
    out = search_replicate(design, y, counts, loss="logistic")
    assert out.value >= exact.value - 1e-9
    assert out.fallbacks >= 1 or out.status == "exact"


def test_search_stats_fallback_column():
    recs = [SearchOutcome(value=0.1, lower=0.1, status="exact", fallbacks=2),
            SearchOutcome(value=0.3, lower=0.0, status="solver_failure", fallbacks=1),
            SearchOutcome(value=0.2, lower=0.2, status="exact")]
    stats = SearchStats.from_records(recs)
    np.testing.assert_array_equal(stats.fallbacks, [2, 1, 0])
    s = stats.summary()
    assert s["fallbacks_total"] == 3 and s["replicates_with_fallbacks"] == 2
    assert s["solver_failures"] == 1 == s["not_exact"] and s["budget_stops"] == 0
    # built without the column (older records): zeros
    old = SearchStats(**{k: getattr(stats, k) for k in ("nodes", "solves", "pruned", "realisability_checks",
                                                        "screened", "seconds", "status")})
    assert old.fallbacks_total == 0
