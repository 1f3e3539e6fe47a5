"""The one compiled search (cudbound/search/core.py): every node-solver kind against the
brute-force reference, the external-solver protocol (warm starts by handle), and the
hand-off of a failed compiled solve to the fallback solver from inside the loop.
"""
import dataclasses
import math

import numpy as np
import pytest

from cudbound.cud import search_replicate
from cudbound.engine import ReplicateEngine
from cudbound.fit import fit_coefficients
from cudbound.losses import SquaredLoss, get_loss
from cudbound.search import ActiveSetNodeSolver, NodeSolver, SearchOptions, Tolerances, branch_and_bound, core
from cudbound.search.smooth_node_solver import SmoothNodeSolver, _pointwise_eval
from injected_failures import fail_some_nodes, undecide_some_questions
from reference_losses import REF_LOSSES, loss_problem_size, make_loss_problem, ref_details
from search_setup import squared_replicate
from sweeps import first_of_each

SPECS = {"ridge": "ridge:0.1", "hinge": "hinge", "logistic": "logistic", "exponential": "exponential",
         "logistic_ridge": "logistic_ridge:0.1"}
SEED0 = 12_700_000
TOLS = {"hinge": 1e-6}


def _seed(name, index):
    return SEED0 + 100 * index + len(name)


@pytest.mark.parametrize("index, name", first_of_each(
    [(index, name) for index in range(6) for name in sorted(SPECS)],
    lambda case: (case[1], loss_problem_size(_seed(case[1], case[0]))[1])))
def test_every_engine_matches_the_brute_force_reference(name, index):
    """auto (solvers inside the loop), python (NodeSolver objects called from the loop, realisability
    in Python) and cvxpy all give the enumerated Q^(b). The README's command checks the first problem
    of each loss and p, CI all 30 (the others are marked slow: tests/_support/sweeps.py)."""
    ref = REF_LOSSES[name]
    design, y, counts, info = make_loss_problem(_seed(name, index), ref)
    det = ref_details(ref, design, y, counts)
    a = float(info["n"])
    for engine in ("auto", "python", "cvxpy"):
        got = search_replicate(design, y, counts, loss=SPECS[name], alpha_n=a, engine_options={"engine": engine}).value
        assert abs(got - det.q(a)) <= TOLS.get(name, 1e-9), (name, index, engine, got, det.q(a))


def _medium(seed, n=40, p=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p - 1))
    y = np.where(X[:, 0] + rng.normal(size=n) > 0, 1.0, -1.0)
    design = np.column_stack([np.ones(n), X])
    counts = rng.multinomial(n, np.ones(n) / n).astype(float)
    return design, y, counts


@pytest.mark.parametrize("seed", range(3))
def test_smooth_nodes_are_solved_inside_the_loop(monkeypatch, seed):
    """Logistic loss on a resample nothing separates: the compiled SQP solves the nodes in the
    loop; the Python solver sees only the root and the screening solves."""
    design, y, counts = _medium(seed)
    calls = {"n": 0}
    real = SmoothNodeSolver.solve

    def counting(self, rows, signs, warm=None):
        calls["n"] += 1
        return real(self, rows, signs, warm)

    monkeypatch.setattr(SmoothNodeSolver, "solve", counting)
    loss = get_loss("logistic")
    beta = fit_coefficients(design, y, loss)
    eng = ReplicateEngine(design, y, loss)
    out = eng.search(counts, beta, float(len(y)))
    assert eng._smooth._root_sep is None
    assert out.status == "exact" and out.fallbacks == 0
    assert out.solves > calls["n"]
    slow = ReplicateEngine(design, y, loss, engine="python").search(counts, beta, float(len(y)))
    assert abs(out.value - slow.value) <= 1e-9


def _engine_with_crippled_solver(design, y, counts, spec):
    loss = get_loss(spec)
    beta = fit_coefficients(design, y, loss)
    eng = ReplicateEngine(design, y, loss)
    if spec == "hinge":
        eng._lp.max_iter = 1  # the compiled simplex stops at its iteration limit on every node but the root's
    else:
        eng._smooth.max_iter = 1
    return eng, beta


@pytest.mark.parametrize("spec", ["hinge", "logistic"])
def test_a_failed_compiled_node_solve_goes_to_the_fallback_inside_the_loop(spec):
    design, y, counts = _medium(5, n=24)
    loss = get_loss(spec)
    beta = fit_coefficients(design, y, loss)
    exact = ReplicateEngine(design, y, loss).search(counts, beta, 24.0)
    eng, _ = _engine_with_crippled_solver(design, y, counts, spec)
    out = eng.search(counts, beta, 24.0)
    assert out.fallbacks > 0
    assert out.status == "exact"
    assert abs(out.value - exact.value) <= (1e-6 if spec == "hinge" else 1e-9)


@pytest.mark.parametrize("spec", ["hinge", "logistic"])
@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("failure", ["node", "realisability"])
@pytest.mark.parametrize("stop", ["budget", "stop_above"])
def test_a_resumed_search_keeps_what_it_could_not_decide(monkeypatch, spec, seed, failure, stop):
    """Nodes that no solver solves are released unsearched, their bound kept in the value; a node whose
    realisability no method decides is kept, and the search is not exact. A search stopped by a budget
    of 3 nodes, or by a ``stop_above`` raised by one count after each stop, and resumed until it ends
    gives the value, status and ``undecided`` of the search left uninterrupted (before 2026-12-02 the
    resumed search dropped both: "exact", and a value below the failed nodes' bounds). Both stay above
    the exact Q^(b)."""
    design, y, counts = _medium(seed, n=24)
    loss = get_loss(spec)
    beta = fit_coefficients(design, y, loss)
    exact = ReplicateEngine(design, y, loss).search(counts, beta, 24.0)
    eng = ReplicateEngine(design, y, loss)
    if failure == "node":
        fail_some_nodes(monkeypatch, eng)
    else:
        undecide_some_questions(monkeypatch, "branch_and_bound")
    whole = eng.search(counts, beta, 24.0)
    assert whole.status == "solver_failure"
    assert whole.undecided if failure == "realisability" else whole.value > exact.value + 1e-3
    state, stops = None, 0
    while True:
        options = SearchOptions(max_nodes=3) if stop == "budget" else SearchOptions(stop_above=stops / 24.0)
        out = eng.search(counts, beta, 24.0, dataclasses.replace(options, resume=state))
        if out.status not in ("budget", "bounded"):
            break
        assert out.value >= exact.value - 1e-9 and out.state is not None
        state, stops = out.state, stops + 1
    assert stops >= 2
    assert (out.status, out.undecided) == (whole.status, whole.undecided)
    assert out.value == whole.value >= exact.value


@pytest.mark.parametrize("spec", ["hinge", "logistic"])
def test_a_failed_node_below_the_floor_is_dominated(monkeypatch, spec):
    """A node nobody solved whose bound is at most the floor is dominated, as one below the best value
    attained. A search stopped by its budget one node before its end and resumed under a floor above
    every failed bound (as the order statistic's later rounds resume it) ends "bounded" at the floor,
    as the search started with that floor does, not "solver_failure" (which the order statistic
    counted as inexact). Under a floor between the best value and the largest failed bound it stays a
    solver failure with that bound as its value."""
    design, y, counts = _medium(0, n=24)
    loss = get_loss(spec)
    beta = fit_coefficients(design, y, loss)
    eng = ReplicateEngine(design, y, loss)
    fail_some_nodes(monkeypatch, eng)
    whole = eng.search(counts, beta, 24.0)
    assert whole.status == "solver_failure" and whole.value > whole.lower + 1e-3  # a failed bound above the best
    cut = eng.search(counts, beta, 24.0, SearchOptions(max_nodes=whole.nodes - 1))
    assert cut.status == "budget" and cut.value == whole.value
    floor = whole.value + 0.01       # above every failed bound
    out = eng.search(counts, beta, 24.0, SearchOptions(floor=floor, resume=cut.state))
    fresh = eng.search(counts, beta, 24.0, SearchOptions(floor=floor))
    for res in (out, fresh):
        assert res.status == "bounded" and res.value == pytest.approx(floor + 1e-12, abs=1e-15)
    cut = eng.search(counts, beta, 24.0, SearchOptions(max_nodes=whole.nodes - 1))
    between = eng.search(counts, beta, 24.0, SearchOptions(floor=(whole.lower + whole.value) / 2, resume=cut.state))
    assert between.status == "solver_failure" and between.value == whole.value

class _Recording(NodeSolver):
    """The active-set solver, recording the warm starts it is handed and returns."""

    def __init__(self, inner):
        self.inner, self.given, self.returned = inner, [], []

    def solve(self, rows, signs, warm=None):
        self.given.append(warm)
        sol = self.inner.solve(rows, signs, warm)
        self.returned.append(sol.warm)
        return sol


@pytest.mark.parametrize("seed", [1, 2])
def test_a_user_node_solver_gets_its_own_warm_starts_back(seed):
    design, y, counts = _medium(seed, n=30)
    exact = search_replicate(design, y, counts)
    problem, root, quad, beta_hat = squared_replicate(design, y, counts)
    inner = ActiveSetNodeSolver(SquaredLoss(), design, y)
    inner.set_weights(counts)
    solver = _Recording(inner)
    out = branch_and_bound(problem, solver, root, quad=quad, extra_lower=[(beta_hat, problem.L_hat)])
    assert out.status == "exact" and abs(out.value - exact.value) <= 1e-10
    assert out.solves == len(solver.given) > 0
    known = [root.warm] + solver.returned
    # every warm start handed in is the root's or one the solver itself returned earlier
    for i, w in enumerate(solver.given):
        assert any(w is k for k in known[: i + 1]), i


def test_a_programming_error_in_an_external_solver_propagates():
    design, y, counts = _medium(3, n=20)
    problem, root, _, _ = squared_replicate(design, y, counts)

    class Buggy(NodeSolver):
        def solve(self, rows, signs, warm=None):
            raise KeyError("a bug")

    with pytest.raises(KeyError):
        branch_and_bound(problem, Buggy(), root)


def test_budget_and_floor_hold_for_the_external_kind():
    design, y, counts = _medium(4, n=30)
    exact = search_replicate(design, y, counts, loss="logistic", engine_options={"engine": "python"})
    cut = search_replicate(design, y, counts, loss="logistic", engine_options={"engine": "python", "max_nodes": 3})
    assert cut.status == "budget" and cut.lower <= exact.value + 1e-12 and cut.value >= exact.value - 1e-12
    assert math.isfinite(cut.value)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_loop_reads_its_tolerances(seed):
    """Tolerances.prune is the prune rule's slack, Tolerances.margin the test of a clear sign."""
    design, y, counts = _medium(seed, n=30)
    problem, root, quad, beta_hat = squared_replicate(design, y, counts)
    solver = ActiveSetNodeSolver(SquaredLoss(), design, y)
    solver.set_weights(counts)
    exact = branch_and_bound(problem, solver, root, quad=quad)
    assert exact.status == "exact" and exact.nodes > 1
    # every bound is at most 1 <= best + 1: the root is pruned at once
    loose = branch_and_bound(problem, solver, root, quad=quad, tol=Tolerances(prune=1.0))
    assert loose.nodes == 1 and loose.pruned == 1
    # stopped after the root: the value attained at the root's minimiser counts only when its
    # signs are clear, which no sign is with margin 1
    first = branch_and_bound(problem, solver, root, quad=quad, options=SearchOptions(max_nodes=1))
    blind = branch_and_bound(problem, solver, root, quad=quad, options=SearchOptions(max_nodes=1),
                             tol=Tolerances(margin=1.0))
    assert first.status == blind.status == "budget"
    assert first.lower > 0.0 and blind.lower == 0.0


@pytest.mark.parametrize("bad", [dict(prune=-1e-12), dict(margin=float("nan")), dict(margin=2.0)])
def test_tolerances_are_checked(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        Tolerances(**bad)


@pytest.mark.parametrize("bad", [dict(dive_every=-1), dict(dive_every=2.5), dict(dive_every=True),
                                 dict(max_nodes=0), dict(branching="deepest")])
def test_search_options_are_checked(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        SearchOptions(**bad)


# ------------------------------------------------------------------ resuming a stopped search
@pytest.mark.parametrize("spec", ["squared", "ridge:0.2", "hinge", "logistic", "exponential_ridge:0.1"])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_search_resumed_in_small_steps_is_the_uninterrupted_search(spec, seed):
    """Stopped every 7 nodes and resumed from its state, the search pops the same nodes in the
    same order as without stops: the same value, and exactly the same number of nodes."""
    design, y, counts = _medium(seed, n=36)
    loss = get_loss(spec)
    beta = fit_coefficients(design, y, loss)
    eng = ReplicateEngine(design, y, loss)
    exact = eng.search(counts, beta, 36.0)
    assert exact.status == "exact" and exact.state is None
    out = eng.search(counts, beta, 36.0, SearchOptions(max_nodes=7))
    total, steps = out.nodes, 1
    while out.status == "budget":
        assert out.state is not None
        out = eng.search(counts, beta, 36.0, SearchOptions(max_nodes=7, resume=out.state))
        total, steps = total + out.nodes, steps + 1
    assert out.status == "exact"
    assert out.value == exact.value
    assert total == exact.nodes
    if exact.nodes > 20:
        assert steps > 2


@pytest.mark.parametrize("spec", ["logistic", "logistic_ridge:0.1", "exponential"])
def test_a_smooth_node_keeps_its_minimisers_active_rows(spec):
    """The cone flip cost of a smooth loss reads the rows its node's minimiser holds at 0 (the SQP's
    certified active set, ``node_solve._solve_smooth``): in the node pool of searches stopped by their node
    budget, every open node's active rows are fixed points whose score at the node's minimiser is 0 to the
    SQP's tolerance, each once; and nodes with active rows occur."""
    loss = get_loss(spec)
    with_rows = 0
    for seed in range(4):
        design, y, counts = _medium(20 + seed, n=150)
        beta = fit_coefficients(design, y, loss)
        eng = ReplicateEngine(design, y, loss)
        for budget in (10, 30):
            out = eng.search(counts, beta, 150.0, SearchOptions(max_nodes=budget))
            P = design[eng._python_setup(counts, beta, 150.0, SearchOptions())[0].rows]   # the search's free points
            if out.state is None:
                continue
            pool, cnt = out.state.arrays[0], out.state.arrays[1]
            for c in pool.heap_ids[:cnt[core.HSIZE]]:
                na = pool.n_active[c]
                act = pool.active[c, :na]
                assert len(set(act.tolist())) == na
                b = pool.beta[c]
                for a in act:
                    assert pool.signs[c, a] != 0, (seed, budget, c, a)
                    assert abs(P[a] @ b) <= 1e-8 * np.linalg.norm(P[a]) * max(1.0, np.linalg.norm(b)), (seed, c, a)
                with_rows += na > 0
    assert with_rows > 5, with_rows


@pytest.mark.parametrize("seed, n, branching", [(6, 36, "dearest"), (2, 36, "dearest"), (3, 36, "dearest"),
                                               (2, 80, "critical"), (3, 80, "critical")])
def test_a_state_kept_without_the_derivative_cache_resumes_the_same_search(seed, n, branching, monkeypatch):
    """A state too large for ``RESUME_MAX_BYTES`` drops the smooth losses' derivatives at the minimisers
    (``SearchState.lighter``); resumed from it, the search evaluates them again and is the same search.
    (The problems are those whose search has known derivatives in its state after 15 nodes.)"""
    design, y, counts = _medium(seed, n=n)
    loss = get_loss("logistic")
    beta = fit_coefficients(design, y, loss)
    eng = ReplicateEngine(design, y, loss)
    exact = eng.search(counts, beta, float(n), SearchOptions(branching=branching))
    out = eng.search(counts, beta, float(n), SearchOptions(branching=branching, max_nodes=15))  # past the first solves
    total = out.nodes
    assert out.status == "budget"
    pool = out.state.arrays[0]
    assert pool.grad.shape[1] == design.shape[1] and np.isfinite(pool.grad[:, 0]).any()
    # every known entry is the value, gradient and Hessian at its slot's minimiser, to the last bit
    obj = eng._smooth._objective(eng._smooth.counts)
    model = (obj.kind_id, obj.D, obj.yo, obj.wn, obj.pen)
    p = design.shape[1]
    for c in np.flatnonzero(np.isfinite(pool.grad[:, 0])):
        g, H = np.empty(p), np.empty((p, p))
        f = _pointwise_eval(*model, pool.beta[c].copy(), g, H, True)
        assert f == pool.minimum[c] and np.array_equal(g, pool.grad[c]) and np.array_equal(H, pool.hess[c]), c
    light = out.state.lighter()
    assert light.arrays[0].grad.shape[1] == 0 and light.nbytes < out.state.nbytes
    assert light.lighter() is None
    # keep() drops the cache when only that brings the state within RESUME_MAX_BYTES, and no more
    monkeypatch.setattr(core, "RESUME_MAX_BYTES", light.nbytes)
    kept = core.SearchState.keep(out.state.kind, out.state.shape, out.state.arrays)
    assert kept is not None and kept.arrays[0].grad.shape[1] == 0
    monkeypatch.setattr(core, "RESUME_MAX_BYTES", light.nbytes - 1)
    assert core.SearchState.keep(out.state.kind, out.state.shape, out.state.arrays) is None
    monkeypatch.undo()
    state = light
    while True:   # the resumed search goes on without the cache (its states have none either)
        out = eng.search(counts, beta, float(n), SearchOptions(branching=branching, max_nodes=2, resume=state))
        total += out.nodes
        if out.status != "budget":
            break
        state = out.state
        assert state.arrays[0].grad.shape[1] == 0
    assert out.value == exact.value and total == exact.nodes


def test_a_state_is_not_resumed_by_another_replicate_shape():
    design, y, counts = _medium(2, n=36)
    loss = get_loss("hinge")
    beta = fit_coefficients(design, y, loss)
    eng = ReplicateEngine(design, y, loss)
    cut = eng.search(counts, beta, 36.0, SearchOptions(max_nodes=3))
    assert cut.state is not None
    other = ReplicateEngine(design[:30], y[:30], loss)
    c2 = np.ones(30)
    c2[:6] = [2, 0, 3, 0, 0, 1]
    fresh = other.search(c2, fit_coefficients(design[:30], y[:30], loss), 30.0)
    again = other.search(c2, fit_coefficients(design[:30], y[:30], loss), 30.0, SearchOptions(resume=cut.state))
    assert again.value == fresh.value and again.nodes == fresh.nodes
