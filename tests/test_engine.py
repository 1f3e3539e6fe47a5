"""The search engine: statistics, tree export, budgets, solver failures, engines agreeing."""
import math
import os
from pathlib import Path

import cvxpy as cp
import networkx as nx
import numpy as np
import pytest
from search_setup import squared_replicate
from sweeps import first_of_each

import cudbound
from cudbound.cud import conservative_quantile, search_replicate
from cudbound.losses import SquaredLoss
from cudbound.search import ActiveSetNodeSolver, SearchOptions, CvxpyNodeSolver, NodeSolveError, NodeSolver, branch_and_bound
from cudbound.search.smooth_node_solver import SmoothNodeSolver


def make_problem(seed, n=30, d=2, noise=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ np.ones(d) + noise * rng.normal(size=n) >= 0, 1.0, -1.0)
    design = np.column_stack([np.ones(n), X])
    counts = rng.multinomial(n, np.full(n, 1.0 / n))
    return design, y, counts


@pytest.mark.parametrize("seed", first_of_each(range(100), lambda seed: (seed % 2, seed // 2 % 2, seed % 3)))
def test_compiled_and_cvxpy_engines_agree(seed):
    """Issue 3: the fast path and the generic cvxpy path agree to 1e-8 (n in {30, 50}). The README's
    command checks the first seed of each n, noise and alpha_n (12 of 100), CI all of them (the
    others are marked slow: tests/_support/sweeps.py)."""
    rng = np.random.default_rng(1000 + seed)
    n = (30, 50)[seed % 2]
    d = int(rng.integers(1, 4))
    design, y, counts = make_problem(1000 + seed, n=n, d=d, noise=(0.3, 1.5)[seed // 2 % 2])
    alpha = (None, float(np.sqrt(n)), float(n) ** 2)[seed % 3]
    fast = search_replicate(design, y, counts, alpha_n=alpha)
    generic = search_replicate(design, y, counts, alpha_n=alpha, engine_options={"engine": "cvxpy"})
    assert fast.status == generic.status == "exact"
    assert abs(fast.value - generic.value) <= 1e-8, (seed, fast.value, generic.value)


@pytest.mark.parametrize("seed", range(6))
def test_search_options_do_not_change_the_value(seed):
    design, y, counts = make_problem(seed, n=40, d=3)
    values = [search_replicate(design, y, counts, search_options=SearchOptions(flip_cost=f, branching=b,
                                                                               screen=sc)).value
              for f in (True, False) for b in ("critical", "dearest", "static", "ambiguous") for sc in (True, False)]
    values.append(search_replicate(design, y, counts, engine_options={"engine": "python"}).value)
    assert max(values) - min(values) <= 1e-12


def test_tree_export_matches_statistics():
    design, y, counts = make_problem(3)
    out = search_replicate(design, y, counts, record_tree=True)
    tree = out.tree
    assert isinstance(tree, nx.DiGraph) and nx.is_tree(tree)
    assert tree.number_of_nodes() == out.nodes
    assert [v for v, d in tree.in_degree() if d == 0] == [0]
    states = nx.get_node_attributes(tree, "state")
    assert set(states.values()) <= {"open", "pruned", "expanded", "leaf", "unrealisable", "solver_failure"}
    assert sum(s == "pruned" for s in states.values()) == out.pruned
    # every expanded node has exactly two children, one per sign
    for v, s in states.items():
        if s == "expanded":
            assert sorted(tree.nodes[c]["sign"] for c in tree.successors(v)) == [-1, 1]
    assert search_replicate(design, y, counts).tree is None


def test_node_budget_gives_certified_upper_bound():
    # a replicate whose exact search needs more than a few nodes (a probed starting value settles
    # some small ones at the root: search/probes.py)
    for seed in range(5, 50):
        design, y, counts = make_problem(seed, n=60)
        exact = search_replicate(design, y, counts)
        if exact.nodes > 5:
            break
    assert exact.status == "exact" and exact.nodes > 5
    cut = search_replicate(design, y, counts, engine_options={"max_nodes": 3})
    assert cut.status == "budget"
    assert cut.value >= exact.value - 1e-12
    assert cut.lower <= exact.value + 1e-12


def test_time_budget_flags_interval_conservative():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
    exact = cudbound.cud_interval(X, y, n_resamples=20, rng=4)
    cut = cudbound.cud_interval(X, y, n_resamples=20, rng=4, engine_options={"max_nodes": 2})
    assert not exact.conservative and cut.conservative
    assert np.all(cut.bootstrap_distribution >= exact.bootstrap_distribution - 1e-12)
    assert cut.half_width >= exact.half_width
    # the same settings as an EngineOptions, and through intervals()' per-method options
    same = cudbound.cud_interval(X, y, n_resamples=20, rng=4, engine_options=cudbound.EngineOptions(max_nodes=2))
    [via] = cudbound.intervals(X, y, methods=["cud"], rng=4, cud_options={"n_resamples": 20,
                                                                          "engine_options": {"max_nodes": 2}})
    for other in (same, via):
        np.testing.assert_array_equal(other.bootstrap_distribution, cut.bootstrap_distribution)
        assert other.confidence_interval == cut.confidence_interval and other.conservative


def test_engine_options_take_a_dict_of_their_fields_and_refuse_anything_else():
    from cudbound import EngineOptions
    assert EngineOptions.coerce(None) == EngineOptions() == EngineOptions.coerce({})
    assert EngineOptions.coerce({"engine": "cvxpy", "max_nodes": 5.0}) == EngineOptions(engine="cvxpy", max_nodes=5)
    opts = EngineOptions(max_nodes=9)
    assert EngineOptions.coerce(opts) is opts
    budgets = opts.search_options(SearchOptions(time_limit=3.0, branching="static"))
    assert (budgets.max_nodes, budgets.time_limit, budgets.branching) == (9, 3.0, "static")
    for bad, error, fragment in [({"max_node": 1}, ValueError, r"no field\(s\) \['max_node'\]"),
                                 ({"max_nodes": 0}, ValueError, "`max_nodes` must be a positive integer"),
                                 ({"replicate_time_limit": -1.0}, ValueError, "`replicate_time_limit` must be"),
                                 ({"engine": "fast"}, ValueError, "`engine` must be one of"),
                                 ({"exact_distribution": 1}, TypeError, "`exact_distribution` must be True or False"),
                                 ({"scheduler": 8786}, TypeError, "`scheduler` must be None"),
                                 ({"solver": 3}, TypeError, "`solver` must be None"),
                                 ("auto", TypeError, "`engine_options` must be a cudbound.EngineOptions")]:
        with pytest.raises(error, match=fragment):
            EngineOptions.coerce(bad)


class _Failing(NodeSolver):
    def solve(self, rows, signs, warm=None):
        raise NodeSolveError("always fails")


@pytest.mark.parametrize("seed", [6, 7])
def test_solver_failure_keeps_certified_bound(seed):
    design, y, counts = make_problem(seed, n=30)
    exact = search_replicate(design, y, counts)
    problem, root, quad, beta_hat = squared_replicate(design, y, counts)
    out = branch_and_bound(problem, _Failing(), root, extra_lower=[(beta_hat, problem.L_hat)])
    assert out.value >= exact.value - 1e-12  # never below the exact supremum
    if out.status == "exact":  # every unsolved subtree was dominated: nothing was lost
        assert out.value == pytest.approx(exact.value, abs=1e-12)
    else:
        assert out.status == "solver_failure" and out.value > exact.value


def test_cvxpy_failure_is_retried_with_next_solver(monkeypatch):
    design, y, counts = make_problem(2, n=24)
    exact = search_replicate(design, y, counts)
    real_solve = cp.Problem.solve
    calls = {"ECOS": 0}

    def flaky(self, *args, solver=None, **kwargs):
        if solver == "ECOS":
            calls["ECOS"] += 1
            raise cp.error.SolverError("injected failure")
        return real_solve(self, *args, solver=solver, **kwargs)

    monkeypatch.setattr(cp.Problem, "solve", flaky)
    retried = search_replicate(design, y, counts, engine_options={"engine": "cvxpy"})
    assert calls["ECOS"] > 0
    assert retried.status == "exact"
    assert retried.value == pytest.approx(exact.value, abs=1e-8)


def test_cvxpy_node_problem_is_dpp_and_reused():
    """One cvxpy problem serves every node: it is DPP, it is canonicalised once (the same
    parametrised program after nodes with other constraints and other weights), and each
    node's answer is that node's minimum (the exact active-set solver agrees)."""
    design, y, counts = make_problem(1, n=20)
    solver = CvxpyNodeSolver(SquaredLoss(), design, y)
    assert solver.problem.is_dcp(dpp=True)
    exact = ActiveSetNodeSolver(SquaredLoss(), design, y)
    solver.set_weights(counts)
    exact.set_weights(counts)
    first = solver.solve(np.array([0, 1]), np.array([1.0, -1.0]))
    program = solver.problem._cache.param_prog
    assert program is not None
    for rows, signs in [([0, 1], [-1.0, 1.0]), ([2, 5, 7], [1.0, 1.0, -1.0]), ([], [])]:
        rows, signs = np.array(rows, dtype=int), np.array(signs)
        got = solver.solve(rows, signs)
        want = exact.solve(rows, signs)
        assert got.value == pytest.approx(want.value, abs=1e-9)
        assert solver.problem._cache.param_prog is program
    solver.set_weights(np.roll(counts, 3))
    solver.solve(np.array([0, 1]), np.array([1.0, -1.0]))
    assert solver.problem._cache.param_prog is program
    assert first.value == pytest.approx(exact.solve(np.array([0, 1]), np.array([1.0, -1.0])).value, abs=1e-9)
    with pytest.raises(ValueError, match="not installed"):
        CvxpyNodeSolver(SquaredLoss(), design, y, solver="NO_SUCH_SOLVER")


def test_unknown_engine_is_rejected():
    design, y, counts = make_problem(1, n=20)
    with pytest.raises(ValueError, match="engine"):
        search_replicate(design, y, counts, engine_options={"engine": "fast"})


@pytest.mark.parametrize("B,level", [(20, 0.95), (500, 0.95), (19, 0.9), (7, 0.5), (1000, 0.99)])
def test_conservative_quantile_is_ceil_order_statistic(B, level):
    values = np.random.default_rng(B).random(B)
    k = math.ceil(round(level * B, 9))
    assert conservative_quantile(values, level) == np.sort(values)[k - 1]


def test_interval_is_training_error_plus_minus_quantile():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 1] + 0.5 * rng.normal(size=30) > 0, 1, 0)
    res = cudbound.cud_interval(X, y, n_resamples=40, rng=2, confidence_level=0.9)
    assert res.method == "cud" and res.estimate == res.train_error
    assert len(res.bootstrap_distribution) == 40 and len(res.stats.nodes) == 40
    assert res.half_width == conservative_quantile(res.bootstrap_distribution, 0.9)
    assert res.confidence_interval.low == max(0.0, res.train_error - res.half_width)
    assert res.confidence_interval.high == min(1.0, res.train_error + res.half_width)
    design = np.column_stack([np.ones(30), X])
    yy = np.where(y == 1, 1.0, -1.0)
    np.testing.assert_allclose(res.coef, np.linalg.lstsq(design, yy, rcond=None)[0], atol=1e-12)
    assert res.train_error == np.mean(np.where(design @ res.coef >= 0, 1.0, -1.0) != yy)
    # the replicate values are the replicate suprema of the same count vectors
    counts = np.random.default_rng(2).multinomial(30, np.full(30, 1 / 30), size=40)
    for b in (0, 17, 39):
        assert res.bootstrap_distribution[b] == pytest.approx(
            cudbound.replicate_sup(design, yy, counts[b]), abs=1e-12)


def test_n_jobs_gives_identical_results():
    rng = np.random.default_rng(21)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] - X[:, 2] + rng.normal(size=40) > 0, 1, -1)
    one = cudbound.cud_interval(X, y, n_resamples=30, rng=5, n_jobs=1)
    two = cudbound.cud_interval(X, y, n_resamples=30, rng=5, n_jobs=2)
    np.testing.assert_array_equal(one.bootstrap_distribution, two.bootstrap_distribution)
    np.testing.assert_array_equal(one.stats.nodes, two.stats.nodes)
    assert one.confidence_interval == two.confidence_interval
    for bad in (0, 1.5, True, -(os.cpu_count() or 1) - 1):   # the last leaves no core
        with pytest.raises(ValueError, match="n_jobs"):
            cudbound.cud_interval(X, y, n_resamples=30, rng=5, n_jobs=bad)


def test_root_solve_failure_gives_the_trivial_certified_bound(monkeypatch):
    """A non-quadratic loss whose root problem no solver can solve: the replicate keeps
    max|C|/n, flagged, instead of aborting the interval."""
    design, y, counts = make_problem(3, n=20)
    exact = search_replicate(design, y, counts, loss="logistic")

    def fail(self, rows, signs, warm=None):
        raise NodeSolveError("injected failure")

    monkeypatch.setattr(CvxpyNodeSolver, "solve", fail)
    monkeypatch.setattr(SmoothNodeSolver, "solve", fail)  # the default path's node solver, then cvxpy
    out = search_replicate(design, y, counts, loss="logistic")
    trivial = max(np.sum(np.maximum(counts - 1, 0)), np.sum(counts == 0)) / len(counts)
    assert out.status == "solver_failure" and out.value == pytest.approx(trivial)
    assert out.value >= exact.value
    assert out.fallbacks == 1 and exact.fallbacks == 0


def test_exactly_dependent_active_rows_fall_back_instead_of_crashing(shared_data):
    """Mammogram (discrete features, so rows that are exact affine combinations of others):
    a replicate on which the compiled dual active-set method met an exactly singular
    active-set system and used to raise LinAlgError. It now reports a numerical failure,
    the engine reruns the replicate on the exact Python path, and the value is the cvxpy
    engine's."""
    from cudbound.coverage import Task, load_config
    from cudbound.coverage.tasks import draw_split
    from cudbound.resampling import bootstrap_counts

    root = Path(__file__).resolve().parents[1]
    config = load_config(root / "experiments" / "paper.toml")
    task = Task("mammogram", 30, 3)
    data_ss, method_ss = config.task_seed(task).spawn(2)
    _, y, _, _, _, design, _ = draw_split(config, task, np.random.default_rng(data_ss), shared_data)
    counts = bootstrap_counts(30, 54, np.random.default_rng(method_ss))[53]
    beta_hat = np.linalg.lstsq(design, y, rcond=None)[0]
    fast = search_replicate(design, y, counts, beta_hat=beta_hat, alpha_n=30.0)
    generic = search_replicate(design, y, counts, beta_hat=beta_hat, alpha_n=30.0, engine_options={"engine": "cvxpy"})
    assert fast.status == generic.status == "exact"
    assert fast.value == pytest.approx(generic.value, abs=1e-8)


@pytest.mark.parametrize("loss", ["hinge", "hinge_ridge:0.05", "logistic"])
def test_a_replicate_is_screened_once_for_all_its_searches(loss):
    """A second search of the same replicate (counts, beta_hat and alpha_n: the refinement's
    next round) takes the first one's screening outcome: the same points fixed, the same search,
    none of the screening solves again."""
    from cudbound.design import reparametrise
    from cudbound.engine import ReplicateEngine
    from cudbound.fit import fit_coefficients
    from cudbound.losses import get_loss

    design, y, counts = make_problem(7, n=40, d=2)
    rep = reparametrise(design)
    lz = rep.loss(get_loss(loss))
    beta = fit_coefficients(rep.Z, y, lz, reparametrise=False)
    eng = ReplicateEngine(rep.Z, y, lz)
    first, again = (eng.search(counts.astype(float), beta, 40.0) for _ in range(2))
    other = eng.search(counts.astype(float), beta, 20.0)              # another alpha_n: screened anew
    fresh = ReplicateEngine(rep.Z, y, lz).search(counts.astype(float), beta, 20.0)
    assert first.screened > 0
    assert (again.value, again.nodes, again.pruned, again.screened) == (first.value, first.nodes, first.pruned,
                                                                        first.screened)
    assert again.solves < first.solves
    assert (other.value, other.nodes, other.solves, other.screened) == (fresh.value, fresh.nodes, fresh.solves,
                                                                        fresh.screened)


@pytest.mark.parametrize("seed", range(6))
def test_root_minimum_of_a_quadratic_loss_is_the_weighted_least_squares_minimum(seed):
    """``ReplicateEngine.root_minimum`` (L_u, the difference's slack K - L_u) of squared loss and its ridge form
    against an independent minimiser (SciPy's least squares on the rows repeated by their counts); a resample
    whose H is singular (fewer distinct rows than coefficients) takes the generic path and still finds it."""
    import scipy.linalg
    from cudbound.engine import ReplicateEngine
    from cudbound.losses import get_loss

    design, y, counts = make_problem(2000 + seed, n=30, d=2)
    if seed == 4:   # two distinct rows carry all the weight: H singular for 3 coefficients
        counts = np.zeros(30)
        counts[0], counts[1] = 20, 10
    loss = get_loss("squared" if seed % 2 == 0 else "ridge:0.3")
    lam = 0.0 if seed % 2 == 0 else 0.3
    engine = ReplicateEngine(design, y, loss)
    w = np.sqrt(np.asarray(counts, dtype=float) / len(y))
    A = w[:, None] * design
    b = w * y
    if lam:   # the ridge penalty lam |beta_{1:}|^2 as rows appended (the intercept unpenalised)
        A = np.vstack([A, np.sqrt(lam) * np.eye(design.shape[1])[1:]])
        b = np.concatenate([b, np.zeros(design.shape[1] - 1)])
    beta = scipy.linalg.lstsq(A, b)[0]
    expected = float(np.sum((A @ beta - b) ** 2))
    assert math.isclose(engine.root_minimum(counts), expected, rel_tol=1e-9, abs_tol=1e-12)
    assert engine.root_minimum(counts) == engine.root_minimum(np.asarray(counts, dtype=float).copy())
