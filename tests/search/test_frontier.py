"""The frontier of one classifier's replicate (cudbound.search.frontier) against brute force.

For every count k, F^>=(k) and F^<=(k), the least m(s) over the realisable patterns with
C(s) >= k and C(s) <= k, are enumerated by ``reference_difference.side_details`` (every pattern
decided by an LP, every m by an independent solver) and compared with the search's, below the
frontier's level (values at or above it are recorded as the level). Every option that prunes
(flip costs, screening, branching), each engine, and a budget (the certified lower frontier and
the frontier found must enclose the exact one) are checked.
"""
import dataclasses
import math

import numpy as np
import pytest

from cudbound.design import reparametrise
from cudbound.engine import ReplicateEngine
from cudbound.fit import fit_coefficients
from cudbound.losses import get_loss
from cudbound.search import SearchOptions
from cudbound.search.frontier import FORM_CODES, FrontierOutcome, _pair, _pair_above, count_range
from injected_failures import fail_some_nodes, undecide_some_questions
from reference_difference import SPECS, make_pair_problem, side_details

TOL = 1e-9
PLAIN = SearchOptions(flip_cost=False, branching="static", screen=False)


def _exact(det, y, counts, level):
    """F^>= and F^<= of the enumeration on the whole count range, each capped at ``level``."""
    kmin, kmax = count_range(counts, y)
    ks = np.arange(kmin, kmax + 1)
    up = np.array([min([level] + [m for c, m in zip(det.C, det.m) if c >= k]) for k in ks])
    down = np.array([min([level] + [m for c, m in zip(det.C, det.m) if c <= k]) for k in ks])
    return kmin, up, down


def _on_range(f: FrontierOutcome, kmin, size, which="found"):
    """The search's frontier on the whole count range: below its own range F^>= is its first value
    (every pattern below the level has a count in the range) and above it the level; F^<= likewise."""
    up, down = (f.up, f.down) if which == "found" else (f.up_lower, f.down_lower)
    ks = kmin + np.arange(size)
    i = np.clip(ks - f.kmin, 0, len(up) - 1)
    inside = (ks >= f.kmin) & (ks < f.kmin + len(up))
    cap = f.level if which == "found" else -np.inf
    out_up = np.where(inside | (ks < f.kmin), up[i], cap)
    out_down = np.where(inside | (ks >= f.kmin + len(up)), down[i], cap)
    return out_up, out_down


def _close(a, b):
    with np.errstate(invalid="ignore"):      # inf - inf where both are inf
        return bool(np.all((a == b) | (np.abs(a - b) <= TOL)))


def _engine(loss, design, y, engine="auto"):
    rep = reparametrise(design)
    loss_z = rep.loss(get_loss(SPECS[loss]))
    gamma = fit_coefficients(rep.Z, y, loss_z, reparametrise=False)
    return ReplicateEngine(rep.Z, y, loss_z, engine=engine), gamma


CASES = [(loss, seed) for loss in ("squared", "ridge", "hinge", "logistic") for seed in range(3)]


@pytest.mark.parametrize("loss,seed", CASES)
def test_the_frontier_is_the_enumerated_one_below_its_level(loss, seed):
    design, _, y, counts, _ = make_pair_problem(500 + seed, loss, "squared", same_basis=True)
    det = side_details(loss, design, y, counts)
    eng, gamma = _engine(loss, design, y)
    n = len(y)
    checked = 0
    for alpha, slack in ((float(n), 0.0), (float(n), 0.05), (float(n * n), 0.0), (1.0, 0.3), (0.0, 0.0),
                         (float(n), math.inf)):
        for options in (SearchOptions(), PLAIN):
            f = eng.frontier(counts, gamma, alpha, slack, options)
            assert f.status == "exact"
            level = math.inf if alpha == 0.0 or math.isinf(slack) else det.K + 1.0 / alpha + slack
            assert f.level == level or abs(f.level - level) <= 1e-9 * max(1.0, abs(level))
            kmin, up, down = _exact(det, y, counts, f.level)
            got_up, got_down = _on_range(f, kmin, len(up))
            assert _close(got_up, up) and _close(got_down, down), (alpha, slack, options, got_up, up, got_down, down)
            np.testing.assert_array_equal(f.up_lower, f.up)
            np.testing.assert_array_equal(f.down_lower, f.down)
            checked += 1
    assert checked == 12


@pytest.mark.parametrize("engine", ["python", "cvxpy"])
@pytest.mark.parametrize("loss", ["squared", "hinge", "logistic"])
def test_every_engine_finds_the_same_frontier(loss, engine):
    design, _, y, counts, _ = make_pair_problem(600, loss, "squared", same_basis=True)
    n = len(y)
    eng, gamma = _engine(loss, design, y)
    other, _ = _engine(loss, design, y, engine)
    for alpha in (float(n), float(n * n)):
        a = eng.frontier(counts, gamma, alpha, 0.02)
        b = other.frontier(counts, gamma, alpha, 0.02)
        assert b.status == "exact"
        size = max(len(a.up), len(b.up)) + 2 * n
        kmin = min(a.kmin, b.kmin) - n
        for x, z in zip(_on_range(a, kmin, size), _on_range(b, kmin, size)):
            assert np.all(np.abs(x - z) <= 1e-7)   # cvxpy's solvers: to their tolerances


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_a_budget_leaves_a_frontier_found_above_and_a_certified_one_below_the_exact(loss):
    """A wide level (alpha_n = 1, slack 1): many patterns matter, and small node budgets stop the search."""
    design, _, y, counts, _ = make_pair_problem(703, loss, "squared", same_basis=True)
    det = side_details(loss, design, y, counts)
    eng, gamma = _engine(loss, design, y)
    exact = eng.frontier(counts, gamma, 1.0, 1.0)
    assert exact.status == "exact"
    kmin, up, down = _exact(det, y, counts, exact.level)
    statuses = []
    for budget in (1, 2, 3, 5, 8):
        f = eng.frontier(counts, gamma, 1.0, 1.0, SearchOptions(max_nodes=budget))
        statuses.append(f.status)
        found = _on_range(f, kmin, len(up))
        lower = _on_range(f, kmin, len(up), "lower")
        assert np.all(found[0] >= up - TOL) and np.all(found[1] >= down - TOL)
        assert np.all(lower[0] <= up + TOL) and np.all(lower[1] <= down + TOL)
    assert statuses[0] == "budget" and exact.nodes > 8


def test_a_spent_deadline_leaves_the_trivial_frontier():
    design, _, y, counts, _ = make_pair_problem(701, "squared", "squared", same_basis=True)
    eng, gamma = _engine("squared", design, y)
    f = eng.frontier(counts, gamma, float(len(y)), 0.0, SearchOptions(deadline=0.0))
    assert f.status == "budget" and (f.kmin, f.kmin + len(f.up) - 1) == count_range(counts, y)
    assert np.all(f.up_lower == -np.inf) and np.all(f.up == np.inf)


def test_count_range():
    y = np.ones(5)
    assert count_range(np.array([0, 0, 3, 1, 1]), y) == (-2, 2)
    assert count_range(np.ones(5), y) == (0, 0)


# ------------------------------------------------------------------ resuming a stopped search
def _medium_pair(loss_a, loss_b, seed, n=36):
    """A and B (linear and quadratic bases) on n points, and a count vector, as DifferenceSides."""
    from cudbound.cud_difference import DifferenceSide
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.9 * rng.standard_normal(n) > 0, 1.0, -1.0)
    A = np.column_stack([np.ones(n), X])
    B = np.column_stack([A, X[:, 0] ** 2, X[:, 0] * X[:, 1], X[:, 1] ** 2])
    counts = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
    return (DifferenceSide.from_design(A, y, SPECS[loss_a]), DifferenceSide.from_design(B, y, SPECS[loss_b]), counts,
            float(n))


@pytest.mark.parametrize("loss", ["squared", "ridge", "hinge", "logistic"])
@pytest.mark.parametrize("joint,dive_every,memory", [(False, 32, None), (True, 32, None), (True, 3, None),
                                                     (True, 0, None), (True, 32, 1), (True, 3, 5_000)])
def test_a_search_resumed_in_small_steps_is_the_uninterrupted_search(loss, joint, dive_every, memory):
    """Stopped every 7 nodes and resumed from its state (``FrontierOutcome.state``), a frontier search,
    and a joint search against the other classifier's frontier, pop the same nodes in the same order
    as without stops: the same frontier and value, and exactly the same number of nodes. The
    compiled quadratic replicate (squared, ridge) and the Python set-up (hinge, logistic) alike; a
    joint search with its dives (every 3 nodes: most stops fall inside a dive, which the state carries)
    and without, and depth first (``node_memory``: from the start, and from about a dozen nodes on
    (5,000 bytes); the state carries the stack)."""
    a, b, counts, alpha = _medium_pair("squared", loss, 4)
    lead = a.frontier(counts, alpha, b.slack(counts), SearchOptions()) if joint else None
    slack = a.slack(counts)

    def search(options):
        return b.frontier(counts, alpha, slack, options, partner=lead)
    exact = search(SearchOptions(dive_every=dive_every, node_memory=memory))
    assert exact.status == "exact" and exact.state is None and exact.nodes > 20
    out = search(SearchOptions(max_nodes=7, dive_every=dive_every, node_memory=memory))
    total, steps = out.nodes, 1
    while out.status == "budget" and steps <= exact.nodes:   # (a search that did not resume never ends)
        assert out.state is not None
        out = search(SearchOptions(max_nodes=7, dive_every=dive_every, node_memory=memory, resume=out.state))
        total, steps = total + out.nodes, steps + 1
    assert out.status == "exact" and steps > 2 and total == exact.nodes
    assert np.array_equal(out.up, exact.up) and np.array_equal(out.down, exact.down)
    assert np.array_equal(out.up_lower, exact.up_lower) and np.array_equal(out.down_lower, exact.down_lower)
    if joint:
        assert out.value == exact.value and out.value_lower == exact.value_lower



@pytest.mark.parametrize("loss", ["hinge", "logistic"])
@pytest.mark.parametrize("joint", [False, True])
@pytest.mark.parametrize("failure", ["node", "realisability"])
def test_a_search_resumed_after_failures_is_the_uninterrupted_search(monkeypatch, loss, joint, failure):
    """What a search could not decide carries over a resume: nodes no solver solves (their bounds kept
    as lost values; the compiled solver cut to one iteration and the fallback failing on a fixed third
    of the patterns) or realisability questions no method decides (every question sent to the Python
    side, whose LP fails on that third). Stopped every 7 nodes and resumed, the search ends with the
    uninterrupted search's status, frontiers and value (before 2026-12-02 an undecided question was
    forgotten on resume: "exact"; the lost values always carried over)."""
    a, b, counts, alpha = _medium_pair("squared", loss, 4)
    lead = a.frontier(counts, alpha, b.slack(counts), SearchOptions()) if joint else None
    slack = b.slack(counts)
    if failure == "node":
        fail_some_nodes(monkeypatch, b.engine)
    else:
        undecide_some_questions(monkeypatch, "run_frontier")

    def search(options):
        return b.frontier(counts, alpha, slack, options, partner=lead)
    whole = search(SearchOptions())
    assert whole.status == "solver_failure" and whole.nodes > 20
    out = search(SearchOptions(max_nodes=7))
    steps = 1
    while out.status == "budget" and steps <= whole.nodes:
        out = search(SearchOptions(max_nodes=7, resume=out.state))
        steps += 1
    assert steps > 2 and (out.status, out.undecided) == (whole.status, whole.undecided)
    assert np.array_equal(out.up, whole.up) and np.array_equal(out.down, whole.down)
    assert np.array_equal(out.up_lower, whole.up_lower) and np.array_equal(out.down_lower, whole.down_lower)
    if joint:
        assert out.value == whole.value and out.value_lower == whole.value_lower


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_a_joint_search_resumed_under_a_rising_floor_keeps_its_value(loss):
    """As the order statistic resumes it: each step's floor at least the last one's and below the
    exact Q^(b); the resumed search ends with Q^(b) exactly. A floor above Q^(b) ends it below that
    floor ("bounded"), its certified value at least Q^(b)."""
    a, b, counts, alpha = _medium_pair("squared", loss, 6)
    lead = a.frontier(counts, alpha, b.slack(counts), SearchOptions())
    slack = a.slack(counts)
    exact = b.frontier(counts, alpha, slack, SearchOptions(), partner=lead)
    q = exact.value
    assert q > 0 and exact.status == "exact"
    for floors in ([0.25 * q, 0.5 * q, 0.9 * q], [0.5 * q, 1.5 * q]):
        out = b.frontier(counts, alpha, slack, SearchOptions(max_nodes=5), partner=lead)
        for f in floors:
            if out.status != "budget":
                break
            out = b.frontier(counts, alpha, slack, SearchOptions(max_nodes=5, floor=f, resume=out.state), partner=lead)
        while out.status == "budget":
            out = b.frontier(counts, alpha, slack, SearchOptions(floor=floors[-1], resume=out.state), partner=lead)
        assert out.value_lower <= q + TOL and out.value >= q - TOL
        if floors[-1] < q:
            assert out.status == "exact" and abs(out.value - q) <= TOL
        else:
            assert out.status == "bounded" and out.value >= floors[-1]


def test_a_state_is_not_resumed_by_another_search():
    """A state resumes only a search of its own kind and shape: the frontier of another classifier,
    or another count vector's replicate of another size, starts afresh."""
    a, b, counts, alpha = _medium_pair("squared", "squared", 4)
    cut = b.frontier(counts, alpha, a.slack(counts), SearchOptions(max_nodes=3))
    assert cut.state is not None
    fresh = a.frontier(counts, alpha, b.slack(counts), SearchOptions())
    again = a.frontier(counts, alpha, b.slack(counts), SearchOptions(resume=cut.state))
    assert again.nodes == fresh.nodes and np.array_equal(again.up, fresh.up)
    other = counts.copy()
    other[np.flatnonzero(other == 0)[0]] = 1.0
    other[np.flatnonzero(other >= 2)[0]] -= 1.0
    fresh = b.frontier(other, alpha, a.slack(other), SearchOptions())
    again = b.frontier(other, alpha, a.slack(other), SearchOptions(resume=cut.state))
    assert again.nodes == fresh.nodes and np.array_equal(again.up, fresh.up)


# ------------------------------------------------------------------ dives
@pytest.mark.parametrize("loss_a,loss_b", [("squared", "squared"), ("squared", "logistic"), ("hinge", "squared"),
                                           ("ridge", "hinge")])
@pytest.mark.parametrize("seed", [0, 2, 3])
def test_dives_and_depth_first_change_the_work_not_the_value(loss_a, loss_b, seed):
    """A joint search's Q^(b) with no dives, the default dives, a dive begun at every pop (each node
    expanded on a dive's path), and depth first (``node_memory`` of 1 byte: from the first node; of
    5,000 bytes: from about a dozen), each equal to Q^(b) from the two frontiers searched in full
    (``search_replicate_difference(full=True)``, which runs no joint search). Under a budget with
    ``stop_above`` below Q^(b), each search certifies at least Q^(b) and attains at most it."""
    from cudbound.cud_difference import search_replicate_difference
    a, b, counts, alpha = _medium_pair(loss_a, loss_b, seed)
    q = search_replicate_difference(a, b, counts, alpha, full=True).value
    lead = a.frontier(counts, alpha, b.slack(counts), SearchOptions())
    slack = a.slack(counts)
    nodes = {}
    for every, memory in ((0, None), (32, None), (1, None), (32, 1), (0, 5_000)):
        opts = SearchOptions(dive_every=every, node_memory=memory)
        out = b.frontier(counts, alpha, slack, opts, partner=lead)
        assert out.status == "exact" and abs(out.value - q) <= TOL and abs(out.value_lower - q) <= TOL
        nodes[every, memory] = out.nodes
        for budget in (3, 9, 30):
            cut = b.frontier(counts, alpha, slack, dataclasses.replace(opts, max_nodes=budget, stop_above=0.5 * q),
                             partner=lead)
            assert cut.value >= q - TOL and cut.value_lower <= q + TOL
    assert q > 0 and nodes[0, None] > 20
    assert nodes[1, None] != nodes[0, None]   # the dives happen: other nodes, the same value


@pytest.mark.parametrize("loss", ["squared", "hinge", "logistic"])
def test_depth_first_holds_few_nodes(loss):
    """Past ``node_memory`` a joint search goes depth first: the node slots it ever used (the pool's
    count, its peak) stay within the stack's two nodes per depth below the free points' number,
    whatever the budget, where best first holds several times more; both end with the same Q^(b)."""
    from cudbound.search.core import COUNT
    a, b, counts, alpha = _medium_pair("squared", loss, 0, n=150)
    lead = a.frontier(counts, alpha, b.slack(counts), SearchOptions())
    slack = a.slack(counts)
    free = int(np.sum(counts > 0))   # the free points are among the resampled ones

    def peaks(memory):
        whole = b.frontier(counts, alpha, slack, SearchOptions(dive_every=0, node_memory=memory), partner=lead)
        used = []
        for share in (0.25, 0.5, 0.75, 0.9):
            cut = b.frontier(counts, alpha, slack, SearchOptions(dive_every=0, node_memory=memory,
                                                                 max_nodes=int(share * whole.nodes)), partner=lead)
            assert cut.status == "budget" and cut.state is not None
            used.append(int(cut.state.arrays[1][COUNT]))
        return whole, max(used)
    best_first, most = peaks(None)
    deep, least = peaks(1)
    assert least <= 2 * free + 6 and most > 3 * least
    assert best_first.status == deep.status == "exact" and abs(deep.value - best_first.value) <= TOL


def _monotone_frontier(rng, size, level):
    """A random certified lower frontier as a joint search's partner holds it: F^>= rising and F^<=
    falling with the count, values not reached (inf) at the ends, many ties."""
    steps = rng.choice([0.0, 0.0, 1e-3, 1e-2, 0.05], size=size)
    base = rng.uniform(0.0, 0.5 * level)
    up = base + np.cumsum(steps)
    down = base + np.cumsum(rng.choice([0.0, 1e-3, 1e-2, 0.05], size=size)[::-1])[::-1]
    up[up >= level] = np.inf
    down[down >= level] = np.inf
    if rng.random() < 0.3:
        up[int(rng.integers(size)):] = np.inf
    if rng.random() < 0.3:
        down[:int(rng.integers(size))] = np.inf
    if rng.random() < 0.1:        # a trivial partner's (a spent deadline): -inf, "every value possible"
        up[:int(rng.integers(size + 1))] = -np.inf
        down[int(rng.integers(size + 1)):] = -np.inf
    return up, down


@pytest.mark.parametrize("form", sorted(FORM_CODES))
def test_the_joint_bounds_walk_gives_the_maximum_over_every_partner_count(form):
    """``frontier._pair_above`` (bisection to the counts where G > 0, a walk that stops where G stops
    rising or |c - a| <= best) against the plain maximum over every count (``frontier._pair``): the same
    number, on random monotone partner frontiers (with the -inf of a trivial one), counts c inside and
    outside the partner's range and one rounding step from an integer, alpha_n 0 and positive, and starting
    values below and above the maximum."""
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(3000):
        size = int(rng.integers(1, 40))
        level = 1.0
        up_lo, down_lo = _monotone_frontier(rng, size, level)
        pk = int(rng.integers(-20, 5))
        pK = rng.uniform(0.0, level)
        alpha = float(rng.choice([0.0, 1.0, 30.0, 100.0, 1e4]))
        pt = (True, pk, up_lo.copy(), down_lo.copy(), up_lo, down_lo, pK, alpha, FORM_CODES[form])
        c = float(rng.integers(pk - 5, pk + size + 5))
        c = float(rng.choice([c, c, c + 0.5, np.nextafter(c, -np.inf), np.nextafter(c, np.inf)]))
        b, K = rng.uniform(0.0, level), rng.uniform(0.0, level)
        below, above = bool(rng.integers(2)), bool(rng.integers(2))
        exact = _pair(c, b, K, pt, True, below, above)
        for best in (0.0, 0.5 * exact, exact, exact + 1.0):
            assert _pair_above(c, b, K, pk, up_lo, down_lo, pK, alpha, FORM_CODES[form], below, above,
                               best) == max(best, exact)
        checked += exact > 0.0
    assert checked > 1000
