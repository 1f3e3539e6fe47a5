"""The hinge loss's certified simplex node solver (``search/lp_node_solver.py``).

Node values against the cvxpy node solver and scipy's HiGHS simplex (independent
solvers of the same linear program), replicate suprema against the ``engine="cvxpy"``
path and the brute-force reference of ``reference_losses.py``, the certificate on bases
that are not optimal, and the fallback to cvxpy when a node is not certified.
Each random problem has its own seed (printed on failure).
"""
import dataclasses
import math

import numpy as np
import pytest
from numba import njit
from scipy.optimize import linprog

from cudbound.engine import ReplicateEngine, _WithFallback
from cudbound.fit import fit_coefficients
from cudbound.losses import HingeLoss, get_loss
from cudbound.search import CvxpyNodeSolver, NodeSolveError, SearchOptions
from cudbound.search import lp_node_solver as lpmod
from cudbound.search.hinge_qp_node_solver import HingeWorkRef, _hinge_work
from cudbound.search.lp_node_solver import HingeBasis, HingeLPNodeSolver, certify
from reference_losses import REF_LOSSES, make_loss_problem, ref_details
from sweeps import first_of_each

HINGE = HingeLoss()
REF = REF_LOSSES["hinge"]
SEED0 = 7_300_000


def _highs_node(design, y, counts, rows, signs):
    """The node LP in its primal form, by scipy's HiGHS dual simplex with tight tolerances."""
    n, p = design.shape
    on = counts > 0
    A = y[on, None] * design[on]
    m = len(A)
    G = design[rows] * signs[:, None]
    A_ub = np.vstack([np.hstack([-A, -np.eye(m)]), np.hstack([-G, np.zeros((len(rows), m))])])
    b_ub = np.r_[-np.ones(m), np.zeros(len(rows))]
    res = linprog(np.r_[np.zeros(p), counts[on] / n], A_ub=A_ub, b_ub=b_ub,
                  bounds=[(None, None)] * p + [(0.0, None)] * m, method="highs-ds",
                  options=dict(primal_feasibility_tolerance=1e-10, dual_feasibility_tolerance=1e-10))
    assert res.status == 0, res.message
    return float(res.fun)


def _node_problem(seed):
    """n in 8..40, p in 1..5; every third design rounded (duplicate rows, ties)."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(8, 41)), int(rng.integers(1, 6))
    design = np.column_stack([np.ones(n), rng.standard_normal((n, p - 1))])
    if seed % 3 == 0:
        design = np.round(design, 1)
    y = np.where(design @ rng.standard_normal(p) + rng.standard_normal(n) >= 0, 1.0, -1.0)
    counts = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
    return design, y, counts, rng


# ------------------------------------------------------------------- node values
def _node_class(index):
    """p, and whether the design is rounded: the shape of ``_node_problem(SEED0 + index)``."""
    rng = np.random.default_rng(SEED0 + index)
    rng.integers(8, 41)                                  # n
    return int(rng.integers(1, 6)), (SEED0 + index) % 3 == 0


@pytest.mark.parametrize("index", first_of_each(range(12), _node_class))
def test_node_values_match_cvxpy_and_highs(index):
    """Chains of nodes (each child adds one row to its parent, warm-started from the
    parent's basis, and its sibling with the other sign): values equal the cvxpy
    solver's (CLARABEL, tolerance 1e-10) to 1e-8 and HiGHS's simplex to 1e-10; a cold
    start gives the same value; the point is in the cone and its loss is the value. The README's
    command checks the first problem of each class (``_node_class``), CI all 12."""
    seed = SEED0 + index
    design, y, counts, rng = _node_problem(seed)
    assert (design.shape[1], seed % 3 == 0) == _node_class(index)
    n = len(y)
    lp = HingeLPNodeSolver(HINGE, design, y)
    lp.set_weights(counts)
    cvx = CvxpyNodeSolver(HINGE, design, y)
    cvx.set_weights(counts)
    for chain in range(3):
        rows, signs, warm = [], [], None
        for k in rng.permutation(n)[:10]:
            for s in (1.0, -1.0):       # the two children of the same parent
                R, S = np.array(rows + [k]), np.array(signs + [s])
                sol = lp.solve(R, S, warm)
                info = f"seed={seed} rows={R.tolist()} signs={S.tolist()}"
                assert abs(sol.value - cvx.solve(R, S).value) <= 1e-8, info
                assert abs(sol.value - _highs_node(design, y, counts, R, S)) <= 1e-10, info
                assert abs(sol.value - lp.solve(R, S).value) <= 1e-12, info
                G = design[R] * S[:, None]
                assert np.all(G @ sol.beta >= -1e-11 * np.linalg.norm(G, axis=1) * np.linalg.norm(sol.beta)), info
                scale = max(1.0, float(np.abs(design @ sol.beta).max()))  # round-off of 1 - y phi'b
                assert abs(HINGE.value(design, y, counts, sol.beta) - sol.value) <= 1e-14 * scale, info
                child = sol
            rows.append(k)
            signs.append(float(S[-1]))
            warm = child.warm
    assert lp.stats["failures"] == 0


@njit
def _walk(cols, c, m, n, rows, signs, start, work, max_iter):
    """``lp_node_solver._vertex_walk`` from the basis ``start``: (found, basis, atup)."""
    ws = HingeWorkRef(*work)
    basis = start.copy()
    atup = np.zeros(m, dtype=np.bool_)
    beta = np.zeros(cols.shape[1])
    found, its = lpmod._vertex_walk(cols, c, m, n, rows, signs, start, ws, max_iter, basis, atup, beta)
    return found, basis, atup


@njit
def _with_level(cols, norms, c, m, n, rows, signs, basis0, atup0, max_iter, work, level):
    """``lp_node_solver._solve_node_ws`` with a level: (status, value or the level)."""
    out = lpmod._solve_node_ws(cols, norms, c, m, n, rows, signs, basis0, atup0, basis0, atup0, max_iter,
                               HingeWorkRef(*work), level)
    return out[0], out[2]


def _node_chains(lp, n, rng, chains=2, depth=8):
    """(rows, signs, the parent's solution, the node's solution) along random chains of nodes,
    each child warm-started from its parent's basis, both signs of each new row."""
    for _ in range(chains):
        rows, signs, parent = [], [], lp.solve(np.zeros(0, dtype=int), np.zeros(0))
        for k in rng.permutation(n)[:depth]:
            for s in (1.0, -1.0):
                R, S = np.array(rows + [k]), np.array(signs + [s])
                sol = lp.solve(R, S, parent.warm)
                yield R, S, parent, sol
            rows.append(k)
            signs.append(-1.0)
            parent = sol


def test_the_vertex_walk_ends_on_a_certified_basis_of_the_simplexs_value():
    """On six problems (every third with rounded features: duplicate rows, ties), the walk from
    the parent's basis (``_vertex_walk``) ends, on most nodes, on a basis that passes the
    certificate, with the value of the simplex alone (run with a scratch of no points, which
    skips the walk) to 1e-12; where it does not (a resample of one class, whose optimum is a
    face of the cone), the node's solve still has the simplex's value."""
    found = total = 0
    for index in range(6):
        seed = SEED0 + 500 + index
        design, y, counts, rng = _node_problem(seed)
        n = len(y)
        lp = HingeLPNodeSolver(HINGE, design, y)
        lp.set_weights(counts)
        no_walk = _hinge_work(np.zeros((0, design.shape[1])), 0)
        for R, S, parent, sol in _node_chains(lp, n, rng):
            info = f"seed={seed} rows={R.tolist()} signs={S.tolist()}"
            R = R.astype(np.int64)
            ok, basis, atup = _walk(lp.cols, lp.c, lp.m, lp.n, R, S, parent.warm.basis, lp.work, lp._max_iter)
            total += 1
            simplex = lpmod._solve_node(lp.cols, lp.norms, lp.c, lp.m, lp.n, R, S, parent.warm.basis,
                                        parent.warm.atup, lp._root.basis, lp._root.atup, lp._max_iter, no_walk)
            assert simplex[0] == lpmod.OPTIMAL and abs(simplex[2] - sol.value) <= 1e-12, info
            if ok:
                good, f, lower, gap, b = certify(lp, R, S, HingeBasis(basis, atup))
                found += good
                if good:
                    assert abs(f - simplex[2]) <= 1e-12, info
    assert found >= 0.75 * total, (found, total)


@pytest.mark.parametrize("index", range(6))
def test_the_dual_bound_stops_a_node_only_when_its_minimum_reaches_the_level(index):
    """Given a level, the node's solve stops at the dual bound (status DUAL_BOUND) only when the
    node's minimum (the full solve's) is at least the level, never for a level above the
    minimum, and it does stop for levels between the parent's minimum and the node's."""
    seed = SEED0 + 600 + index
    design, y, counts, rng = _node_problem(seed)
    n = len(y)
    lp = HingeLPNodeSolver(HINGE, design, y)
    lp.set_weights(counts)
    stopped = 0
    for R, S, parent, sol in _node_chains(lp, n, rng):
        m0, m1 = parent.value, sol.value
        for level in (m0 + 0.3 * (m1 - m0), m0 + 0.9 * (m1 - m0), m1 - 1e-6, m1, m1 + 1e-8, m1 + 0.1, -np.inf):
            st, v = _with_level(lp.cols, lp.norms, lp.c, lp.m, lp.n, R.astype(np.int64), S, parent.warm.basis,
                                parent.warm.atup, lp._max_iter, lp.work, level)
            info = f"seed={seed} rows={R.tolist()} signs={S.tolist()} level={level} m={m1}"
            if st == lpmod.DUAL_BOUND:
                stopped += 1
                assert m1 >= level - 1e-12 and v == level, info
            else:
                assert st == lpmod.OPTIMAL and abs(v - m1) <= 1e-12, info
            if level > m1:
                assert st != lpmod.DUAL_BOUND, info
            if level == -np.inf:
                assert st == lpmod.DUAL_BOUND, info
    assert stopped > 0


def _search_problem(index):
    """A replicate of four kinds: Gaussian features, rounded ones (duplicate rows, ties),
    separable labels, and a resample whose points with nu != 1 all have one label."""
    design, y, counts, rng = _node_problem(SEED0 + 700 + index)
    kind = ("gaussian", "rounded", "separable", "one_class")[index % 4]
    if kind == "rounded":
        design = np.round(design, 0)
        design[:, 0] = 1.0
    elif kind == "separable":
        y = np.where(design[:, 1:].sum(axis=1) >= 0.0, 1.0, -1.0)
    elif kind == "one_class":
        counts = np.where(y > 0, 0.0, 1.0)
        pos = np.flatnonzero(y > 0)
        for _ in range(len(pos)):
            counts[int(rng.choice(pos))] += 1.0
    if len(np.unique(y)) < 2 or np.linalg.matrix_rank(design) < design.shape[1]:
        return _search_problem(index + 1000)
    return design, y, counts, kind


@pytest.mark.parametrize("index", range(8))
def test_the_dual_bound_leaves_every_search_the_same(index):
    """With and without the dual bound (``SearchOptions.dual_bound``) a search has the same
    value, attained value, status, nodes, solves and pruned nodes: from scratch at four
    alpha_n, with the refinement's floor, and stopped by a node budget and resumed."""
    design, y, counts, kind = _search_problem(index)
    n = len(y)
    beta = fit_coefficients(design, y, HINGE)
    engines = {d: ReplicateEngine(design, y, HINGE) for d in (True, False)}   # each keeps its screenings

    def outcome(out):
        return out.value, out.lower, out.status, out.nodes, out.solves, out.pruned

    for a in (1.0, math.sqrt(n), float(n), float(n) ** 2):
        on, off = (engines[d].search(counts, beta, a, SearchOptions(dual_bound=d)) for d in (True, False))
        assert outcome(on) == outcome(off), (kind, a)
        floor = SearchOptions(floor=0.5 * on.value, max_nodes=4)
        cut = {d: engines[d].search(counts, beta, a, dataclasses.replace(floor, dual_bound=d)) for d in (True, False)}
        assert outcome(cut[True]) == outcome(cut[False]), (kind, a)
        if cut[True].state is not None:
            more = [engines[d].search(counts, beta, a, dataclasses.replace(floor, max_nodes=None, resume=cut[d].state,
                                                                           dual_bound=d)) for d in (True, False)]
            assert outcome(more[0]) == outcome(more[1]), (kind, a)


def test_root_value_is_the_fit_loss():
    """At the root (no rows) the value is the least weighted hinge loss, which the fit's
    exact minimiser attains (HingeLoss.minimiser, an independent LP route)."""
    for seed in range(SEED0 + 100, SEED0 + 110):
        design, y, counts, _ = _node_problem(seed)
        lp = HingeLPNodeSolver(HINGE, design, y)
        lp.set_weights(counts)
        root = lp.solve(np.zeros(0, dtype=int), np.zeros(0))
        beta = HINGE.minimiser(design, y, counts)
        assert abs(root.value - HINGE.value(design, y, counts, beta)) <= 1e-12, seed


# ------------------------------------------------------------- replicate values
def _replicate_case(index):
    """n in 8..25, p in 1..3 (p = 4 for some n <= 12)."""
    n = 8 + index % 18
    p = 4 if (n <= 12 and index % 4 == 3) else 1 + index % 3
    return make_loss_problem(SEED0 + 1000 + index, REF, n=n, p=p)


def _replicate_class(index):
    """p, and whether the brute-force reference is run (n <= 14): the size of ``_replicate_case(index)``."""
    n = 8 + index % 18
    return (4 if (n <= 12 and index % 4 == 3) else 1 + index % 3), n <= 14


@pytest.mark.parametrize("index", first_of_each(range(32), _replicate_class))
def test_replicate_matches_cvxpy_engine_and_reference(index):
    """The README's command checks the first problem of each class (``_replicate_class``), CI all 32
    (the others are marked slow: tests/_support/sweeps.py)."""
    """Q^(b) at four alpha_n equals the brute-force reference to 1e-9 (when it enumerates
    quickly: p <= 2 or n <= 14) and the engine="cvxpy" value to 1e-8 (at two alpha_n);
    no node needs the fallback."""
    design, y, counts, info = _replicate_case(index)
    n, p = design.shape
    beta = fit_coefficients(design, y, HINGE)
    det = ref_details(REF, design, y, counts, beta_hat=beta) if (p <= 2 or n <= 14) else None
    fast = ReplicateEngine(design, y, HINGE, engine="auto")
    slow = ReplicateEngine(design, y, HINGE, engine="cvxpy")
    for a in (1.0, math.sqrt(n), float(n), float(n) ** 2):
        got = fast.search(counts, beta, a)
        assert got.status == "exact", info
        if det is not None:
            assert abs(got.value - det.q(a)) <= 1e-9, (info, a, got.value, det.q(a))
        if a in (math.sqrt(n), float(n)):
            want = slow.search(counts, beta, a)
            assert abs(got.value - want.value) <= 1e-8, (info, a, got.value, want.value)
    assert fast._lp.stats["failures"] == 0, info
    assert fast._cvxpy_counts is None, "cvxpy was used although no node failed"


def test_replicate_suite_covers_the_intended_space():
    infos = [_replicate_case(i)[3] for i in range(32)]
    assert [(i["p"], i["n"] <= 14) for i in infos] == [_replicate_class(i) for i in range(32)]
    assert {i["p"] for i in infos} == {1, 2, 3, 4}
    assert min(i["n"] for i in infos) == 8 and max(i["n"] for i in infos) == 25
    with_reference = sum(i["p"] <= 2 or i["n"] <= 14 for i in infos)
    assert with_reference >= 24, with_reference


def test_engine_uses_the_lp_for_the_plain_hinge_loss_only():
    design, y, counts, _ = _replicate_case(5)
    for engine in ("auto", "python"):
        eng = ReplicateEngine(design, y, HINGE, engine=engine)
        solver, root, quad = eng.prepare(counts)
        assert isinstance(solver, _WithFallback) and solver.primary is eng._lp and quad is None
        assert root.value == pytest.approx(HINGE.value(design, y, counts, root.beta), abs=1e-14)
    assert ReplicateEngine(design, y, HINGE, engine="cvxpy")._lp is None

    class Renamed(HingeLoss):  # the same loss under another name: the same LP (issue 28)
        name = "renamed"
    assert ReplicateEngine(design, y, Renamed())._lp is not None

    class Shifted(HingeLoss):  # a subclass that changes the loss: not this LP
        name = "shifted"

        def pointwise(self, y, t):
            return np.maximum(0.0, 2.0 - y * t)
    assert ReplicateEngine(design, y, Shifted())._lp is None
    assert ReplicateEngine(design, y, get_loss("hinge_ridge:0.1"))._lp is None
    with pytest.raises(ValueError, match="plain hinge"):
        HingeLPNodeSolver(get_loss("hinge_ridge:0.1"), design, y)


def test_screening_solves_go_through_the_lp():
    design, y, counts, _ = make_loss_problem(SEED0 + 2000, REF, n=30, p=3)
    beta = fit_coefficients(design, y, HINGE)
    eng = ReplicateEngine(design, y, HINGE)
    out = eng.search(counts, beta, math.sqrt(30))
    assert out.screened > 0 and out.solves > 0 and out.fallbacks == 0
    # the root and the screening solves go through the Python interface of the LP solver, the
    # node solves through the same compiled simplex inside the search loop
    assert eng._lp.stats["solves"] >= 1 + out.screened
    assert eng._cvxpy_counts is None  # cvxpy never asked


# ------------------------------------------------------------- the certificate
def test_certificate_accepts_optimal_and_rejects_other_bases():
    design, y, counts, rng = _node_problem(SEED0 + 300)
    lp = HingeLPNodeSolver(HINGE, design, y)
    lp.set_weights(counts)
    root = lp.solve(np.zeros(0, dtype=int), np.zeros(0))
    t = design @ root.beta
    k = int(np.argmax(np.abs(t)))
    assert abs(t[k]) > 1e-6
    rows, signs = np.array([k]), np.array([-np.sign(t[k])])  # the root's minimiser violates this row
    node = lp.solve(rows, signs, root.warm)
    assert node.value > root.value + 1e-9
    ok, f, lower, gap, b = certify(lp, rows, signs, node.warm)
    assert ok and abs(f - node.value) <= 1e-15 and 0 <= gap <= 1e-12 * max(1.0, f)
    # the parent's (root's) basis is optimal for the parent, not for the node: rejected
    ok, *_ = certify(lp, rows, signs, root.warm)
    assert not ok
    # a nonbasic u moved to its other bound: no longer a dual point of the same value
    basic = set(node.warm.basis.tolist())
    rejected = 0
    for j in range(lp.m):
        if j in basic:
            continue
        atup = node.warm.atup.copy()
        atup[j] = not atup[j]
        ok, *_ = certify(lp, rows, signs, HingeBasis(node.warm.basis.copy(), atup))
        rejected += not ok
    assert rejected == lp.m - sum(j < lp.m for j in basic)


def _fail_every(monkeypatch, every):
    """Make every ``every``-th node solve called from Python report a failed certificate (the
    screening solves then run one by one in Python, as without the compiled batch)."""
    monkeypatch.setattr(lpmod.HingeLPNodeSolver, "screen_batch", lambda self, *args: None)
    real = lpmod._solve_node
    calls = {"n": 0}

    def flaky(*args):
        out = real(*args)
        calls["n"] += 1
        if calls["n"] % every == 0:
            return (lpmod.CERTIFICATE,) + tuple(out[1:])
        return out
    monkeypatch.setattr(lpmod, "_solve_node", flaky)


@pytest.mark.parametrize("every", [1, 3])
def test_failed_certificate_falls_back_to_cvxpy(monkeypatch, every):
    design, y, counts, info = make_loss_problem(SEED0 + 3000, REF, n=16, p=2)
    beta = fit_coefficients(design, y, HINGE)
    alpha = 4.0
    want = ReplicateEngine(design, y, HINGE).search(counts, beta, alpha).value
    assert abs(want - ref_details(REF, design, y, counts, beta_hat=beta).q(alpha)) <= 1e-9
    _fail_every(monkeypatch, every)
    eng = ReplicateEngine(design, y, HINGE)
    got = eng.search(counts, beta, alpha)
    assert got.status == "exact"
    assert eng._lp.stats["failures"] > 0 and eng._cvxpy_counts is not None  # cvxpy did solve nodes
    assert abs(got.value - want) <= 1e-8, info
    if every == 1:
        with pytest.raises(NodeSolveError, match="certificate failed"):
            eng._lp.solve(np.zeros(0, dtype=int), np.zeros(0))


def test_iteration_limit_falls_back_to_cvxpy():
    design, y, counts, info = make_loss_problem(SEED0 + 3001, REF, n=14, p=3)
    beta = fit_coefficients(design, y, HINGE)
    want = ReplicateEngine(design, y, HINGE, engine="cvxpy").search(counts, beta, 3.0)
    eng = ReplicateEngine(design, y, HINGE)
    eng._lp.max_iter = 1
    got = eng.search(counts, beta, 3.0)
    assert got.status == "exact" and eng._lp.stats["failures"] > 0
    assert abs(got.value - want.value) <= 1e-8, info


def test_identical_points_are_merged_with_their_weights():
    rng = np.random.default_rng(SEED0 + 4000)
    for _ in range(50):
        A = np.round(rng.standard_normal((int(rng.integers(1, 30)), int(rng.integers(1, 4)))))
        c = rng.random(len(A))
        U, w = lpmod._merge(A, c)
        want, inverse = np.unique(A, axis=0, return_inverse=True)
        assert len(U) == len(want) and abs(w.sum() - c.sum()) <= 1e-12
        for row, weight in zip(want, np.bincount(inverse.ravel(), weights=c)):
            k = np.flatnonzero(np.all(U == row, axis=1))
            assert len(k) == 1 and abs(w[k[0]] - weight) <= 1e-12


def test_screening_solves_the_compiled_batch_leaves_are_solved_in_python(monkeypatch):
    """The compiled screening loop (``_screen_compiled``) hands a point whose LP it does not
    certify back to the one-by-one Python solves: with every point handed back, and with the
    batch off, the replicate has the same value and the same points fixed."""
    design, y, counts, info = make_loss_problem(SEED0 + 3100, REF, n=16, p=2)
    beta = fit_coefficients(design, y, HINGE)
    want = ReplicateEngine(design, y, HINGE).search(counts, beta, 4.0)
    real = lpmod._screen_compiled

    def none_certified(*args):
        out, solves = real(*args)
        return np.where(out == 0, out, -1), 0
    monkeypatch.setattr(lpmod, "_screen_compiled", none_certified)
    handed = ReplicateEngine(design, y, HINGE).search(counts, beta, 4.0)
    monkeypatch.setattr(lpmod.HingeLPNodeSolver, "screen_batch", lambda self, *args: None)
    python = ReplicateEngine(design, y, HINGE).search(counts, beta, 4.0)
    assert want.value == handed.value == python.value
    assert want.screened == handed.screened == python.screened
    assert want.screened > 0
