"""Quantile-targeted refinement (``cudbound.quantile``): the same interval as solving every replicate."""
import math

import numpy as np
import pytest

import cudbound
import cudbound.quantile as quantile_module
from cudbound import Procedure
from cudbound.cud import conservative_quantile
from cudbound.datasets import LinearGaussian
from cudbound.quantile import order_statistic
from cudbound.search import SearchOptions, SearchOutcome


def _noisy(n, p, seed, noise=0.3):
    return LinearGaussian(n_features=p - 1, flip_probability=noise).sample(n, np.random.default_rng(seed))


@pytest.mark.parametrize("seed", range(8))
def test_targeted_equals_full_distribution(seed):
    n = [20, 30, 40, 50][seed % 4]
    X, y = _noisy(n, 3 + seed % 3, seed)
    level = [0.95, 0.9, 0.8, 0.5][seed % 4]
    kw = dict(n_resamples=60, rng=seed, confidence_level=level)
    fast = cudbound.cud_interval(X, y, **kw)
    full = cudbound.cud_interval(X, y, engine_options={"exact_distribution": True}, **kw)
    assert fast.confidence_interval == full.confidence_interval
    assert fast.half_width == full.half_width
    assert not fast.conservative and not full.conservative
    Q = full.bootstrap_distribution
    assert full.exact_replicates.all()
    assert full.half_width == conservative_quantile(Q, level)
    # every replicate's bounds bracket its exact value; exact ones equal it
    assert np.all(fast.bootstrap_lower <= Q + 1e-12) and np.all(Q <= fast.bootstrap_distribution + 1e-12)
    ex = fast.exact_replicates
    np.testing.assert_allclose(fast.bootstrap_distribution[ex], Q[ex], rtol=0, atol=1e-12)


@pytest.mark.parametrize("resumable", [False, True])
def test_refinement_rounds_on_synthetic_bounds(resumable):
    """order_statistic against a fake runner whose replicates reveal their value gradually. A search
    cut by the refinement's budget with a state to resume goes on under the next budget; one cut
    without a state (none to keep, or too large) is searched to the end in the next round, so no
    replicate is searched more than twice."""
    rng = np.random.default_rng(0)
    B = 200
    truth = np.round(rng.uniform(0, 1, B), 2)  # many ties
    cost = rng.integers(1, 5000, B)            # nodes needed to finish each replicate
    searches = np.zeros(B, dtype=int)

    def run(indices, opts, on_done):
        outs = []
        for i, o in zip(indices, opts):
            q = truth[i]
            searches[i] += 1
            floor = -1 if o.floor is None else o.floor
            stop = np.inf if o.stop_above is None else o.stop_above
            budget = np.inf if o.max_nodes is None else o.max_nodes
            if cost[i] <= budget:
                if q <= floor:
                    out = SearchOutcome(value=floor + 1e-12, lower=0.0, status="bounded", nodes=cost[i])
                else:
                    out = SearchOutcome(value=q, lower=q, status="exact", nodes=cost[i])
            elif q > stop:
                out = SearchOutcome(value=1.0, lower=q, status="bounded", nodes=o.max_nodes)
            else:
                out = SearchOutcome(value=min(1.0, q + 0.3), lower=max(0.0, q - 0.3), status="budget",
                                    nodes=o.max_nodes, state=_Kept() if resumable else None)
            outs.append(out)
            on_done(i, out)
        return outs

    most = []
    for k in (1, 50, 190, 200):
        searches[:] = 0
        res = order_statistic(run, B, k, SearchOptions())
        assert res.decided
        assert res.value == np.sort(truth)[k - 1]
        # resumable: budgets of 256, 1024, 4096 and 16384 nodes (every cost is below 5000); else 256, then none
        most.append(searches.max())
    # resumable: budgets of 256, 1024, 4096 and 16384 nodes (every cost is below 5000); else 256, then none
    assert max(most) == (4 if resumable else 2)


class _Kept:
    """A stand-in for a search's state (resumable, of no size)."""

    nbytes = 0


class _Spent:
    """A fake search's state: the nodes it has spent (resumable, of ``nbytes`` bytes)."""

    def __init__(self, spent, nbytes=0):
        self.spent, self.nbytes = spent, nbytes

    def lighter(self):
        return None


def _gradual_search(q, cost, grid, start, o):
    """A replicate of value q (on a grid of ``grid`` steps) whose search, after s of its ``cost`` nodes,
    has attained lo(s) = q s / cost rounded down to the grid and bounds it by up(s) = q + (1 - q)(1 - s /
    cost): (outcome, nodes spent in all) when searched on from ``start`` nodes with the options ``o``
    (a floor prunes the bounds below it, stop_above stops at the first value above it, max_nodes caps
    this search)."""
    def lo(s):
        return math.floor(q * min(s, cost) / cost * grid + 1e-9) / grid

    events = [(cost, "exact")]
    if o.floor is not None and q <= o.floor:
        events.append((math.ceil(cost * (1 - (o.floor - q) / (1 - q))) if q < 1 else cost, "bounded"))
    if o.stop_above is not None and q > o.stop_above:   # the first s with lo(s) above it
        steps = math.floor(o.stop_above * grid + 1e-9) + 1
        events.append((math.ceil(steps / grid * cost / q - 1e-9), "above"))
    if o.max_nodes is not None:
        events.append((start + o.max_nodes, "budget"))
    s, what = min((max(s, start), w) for s, w in events)
    if what == "exact":
        return SearchOutcome(value=q, lower=q, status="exact", nodes=s - start), s
    if what == "bounded":
        return SearchOutcome(value=o.floor + 1e-12, lower=lo(s), status="bounded", nodes=s - start), s
    up = q + (1 - q) * (1 - s / cost)
    return SearchOutcome(value=up, lower=lo(s), status="bounded" if what == "above" else "budget", nodes=s - start,
                         state=_Spent(s)), s


class _Bar:
    """A stand-in for the progress bar: the replicates counted as settled (``n``) and the most ever counted."""

    def __init__(self):
        self.n = self.most = 0

    def update(self, k):
        assert k > 0
        self.n += k
        self.most = max(self.most, self.n)


def _gradual_problem(grid, seed, B=120):
    """(B, each replicate's value on a grid of ``grid`` steps, the nodes each needs) for fake gradual searches."""
    rng = np.random.default_rng(seed)
    truth = np.floor(rng.beta(2, 5, B) * grid) / grid
    return B, truth, rng.integers(1, 200_000, B)


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("wait_above", [True, False])
@pytest.mark.parametrize("grid, seed", [(10, 0), (100, 1), (1000, 2)])
def test_refinement_on_gradual_searches(grid, seed, wait_above, keep):
    """order_statistic against fake searches whose values and bounds close in gradually (as a branch and
    bound's do), resumable after a budget or a stop above (``keep``) or starting again each time: Q_hat
    exact for every k, also with many ties (grid 10); with states, no node searched twice (a resumed
    search goes on where it stopped); without, no replicate stopped above a value more than once (a
    search that left no state stops above c from then on, so that stop resolves it)."""
    B, truth, cost = _gradual_problem(grid, seed)
    for k in (1, 7, 60, 114, 120):
        spent = np.zeros(B, dtype=np.int64)
        above = np.zeros(B, dtype=np.int64)

        def run(indices, opts, on_done):
            outs = []
            for i, o in zip(indices, opts):
                start = o.resume.spent if o.resume is not None else 0
                out, s = _gradual_search(truth[i], cost[i], grid, start, o)
                if not keep:
                    out.state = None
                spent[i] += out.nodes
                above[i] += out.status == "bounded" and o.stop_above is not None and out.lower > o.stop_above
                outs.append(out)
                on_done(i, out)
            return outs

        bar = _Bar()
        res = order_statistic(run, B, k, SearchOptions(), wait_above=wait_above, progress=bar)
        assert res.decided
        assert res.value == np.sort(truth)[k - 1]
        assert bar.n == B and bar.most <= B   # every replicate settled once, those tied at Q_hat included
        if keep:
            assert np.all(spent <= cost)
        else:
            assert np.all(above <= 1), (k, above.max())
        assert np.all(res.lower <= truth + 1e-12) and np.all(truth <= res.upper + 1e-12)


@pytest.mark.parametrize("ahead", [0, 2])
@pytest.mark.parametrize("grid, seed", [(10, 0), (100, 1), (1000, 2)])
def test_restarts_under_a_rounds_budget(grid, seed, ahead):
    """``restart_ahead=m``: a search that keeps no state starts again each round under the budget of the
    round m rounds ahead instead of going to the end. Q_hat exact for every k; no search without a node
    budget; and each replicate spends less than 16/3 times what it needs or its first budget (iterative
    deepening with budgets growing fourfold: the budgets up to the first at least its cost add up to
    under 4/3 of that one, which is under 4 times the cost or the first)."""
    B, truth, cost = _gradual_problem(grid, seed)
    for k in (1, 7, 60, 114, 120):
        spent = np.zeros(B, dtype=np.int64)
        caps, rounds = [], []

        def run(indices, opts, on_done):
            outs = []
            rounds.append(sorted({o.max_nodes for o in opts}, key=lambda c: -1 if c is None else c))
            for i, o in zip(indices, opts):
                assert o.resume is None
                caps.append(o.max_nodes)
                out, _ = _gradual_search(truth[i], cost[i], grid, 0, o)
                out.state = None
                spent[i] += out.nodes
                outs.append(out)
                on_done(i, out)
            return outs

        res = order_statistic(run, B, k, SearchOptions(), restart_ahead=ahead)
        assert res.decided and res.value == np.sort(truth)[k - 1]
        assert None not in caps and caps[0] == 256 and max(caps) > 256
        # every search of round one (256 nodes) left no state: round two's start again m rounds ahead
        assert rounds[0] == [256] and rounds[1] == [1024 * 4 ** ahead]
        first = 256 * 4 ** (ahead + 1)     # the first restart: in round two, m rounds ahead
        assert np.all(spent < 16 / 3 * np.maximum(cost, first) + 256), (k, float(np.max(spent / cost)))
        assert np.all(res.lower <= truth + 1e-12) and np.all(truth <= res.upper + 1e-12)
        default = order_statistic(run, B, k, SearchOptions())      # the rule before: searches to the end
        assert default.value == res.value and None in caps


def test_user_budget_makes_it_conservative_never_narrower():
    X, y = _noisy(50, 5, 1)
    full = cudbound.cud_interval(X, y, n_resamples=40, rng=1, engine_options={"exact_distribution": True})
    cut = cudbound.cud_interval(X, y, n_resamples=40, rng=1, engine_options={"max_nodes": 5})
    assert cut.conservative
    assert cut.half_width >= full.half_width - 1e-12


@pytest.mark.parametrize("exact", [False, True])
def test_workers_do_not_change_the_result(exact):
    X, y = _noisy(40, 4, 2)
    one = cudbound.cud_interval(X, y, n_resamples=40, rng=3, engine_options={"exact_distribution": exact})
    two = cudbound.cud_interval(X, y, n_resamples=40, rng=3, n_jobs=2, engine_options={"exact_distribution": exact})
    assert one.confidence_interval == two.confidence_interval
    np.testing.assert_array_equal(one.bootstrap_distribution, two.bootstrap_distribution)
    np.testing.assert_array_equal(one.stats.nodes, two.stats.nodes)


def test_progress_bar_is_shown(capsys):
    X, y = _noisy(30, 3, 0)
    cudbound.cud_interval(X, y, n_resamples=30, rng=0, progress=True)
    err = capsys.readouterr().err
    assert "CUD replicates" in err


# slow (a local Dask cluster of two processes): the README's command keeps a study on such a cluster
# (tests/coverage/test_study.py::test_dask_local_cluster_gives_identical_rows) and the replicates of one
# interval spread over worker processes (test_workers_do_not_change_the_result)
@pytest.mark.slow
def test_dask_cluster_gives_the_same_interval():
    """One large interval spread over a local Dask cluster (127.0.0.1) equals the in-process one."""
    distributed = pytest.importorskip("distributed")
    X, y = _noisy(40, 4, 5)
    one = cudbound.cud_interval(X, y, n_resamples=40, rng=5)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        dask = cudbound.cud_interval(X, y, n_resamples=40, rng=5, engine_options={"scheduler": cluster.scheduler_address})
    assert dask.confidence_interval == one.confidence_interval
    np.testing.assert_array_equal(dask.bootstrap_distribution, one.bootstrap_distribution)


def test_cli_jobs_progress_and_exact_distribution(capsys):
    from cudbound.cli import main

    code = main(["demo", "--n", "30", "--resamples", "20", "--json", "--jobs", "2", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0 and "CUD replicates" not in err
    import json
    record = json.loads(out)["results"][0]
    code = main(["demo", "--n", "30", "--resamples", "20", "--json", "--exact-distribution"])
    full = json.loads(capsys.readouterr().out)["results"][0]
    assert code == 0 and (full["low"], full["high"]) == (record["low"], record["high"])
    assert full["search"]["bounded"] == 0
    assert main(["demo", "--jobs", "0"]) == 2
    assert "argument --jobs: must be a positive integer, -1 (every core) or -k" in capsys.readouterr().err


# (hinge: seed 9, since with the branching of issue 28 every replicate of seed 7 is decided in
# the first round, and there is nothing to resume)
@pytest.mark.parametrize("loss, seed", [("squared", 6), ("hinge", 9), ("logistic", 8)])
def test_resumed_refinement_gives_the_interval_of_restarts_with_fewer_nodes(monkeypatch, loss, seed):
    import cudbound.quantile as quantile_mod
    X, y = _noisy(44, 4, seed)
    kw = dict(n_resamples=60, rng=seed, procedure=Procedure(loss=loss))
    resumed = cudbound.cud_interval(X, y, **kw)
    full = cudbound.cud_interval(X, y, engine_options={"exact_distribution": True}, **kw)
    monkeypatch.setattr(quantile_mod, "RESUME_TOTAL_BYTES", 0)
    restarted = cudbound.cud_interval(X, y, **kw)
    assert resumed.confidence_interval == restarted.confidence_interval == full.confidence_interval
    assert np.sum(resumed.stats.nodes) < np.sum(restarted.stats.nodes)



def test_the_states_kept_between_rounds_are_within_the_callers_limit(monkeypatch):
    """``order_statistic(state_bytes=...)`` (the difference's ``compare.cud.STATE_BYTES``) bounds the states
    it keeps between rounds, in place of RESUME_TOTAL_BYTES: with 0 no search is resumed, with room for
    all some are, even when RESUME_TOTAL_BYTES is 0; Q_hat is exact every time."""
    import cudbound.quantile as quantile_mod
    rng = np.random.default_rng(3)
    B, grid, k = 80, 100, 76
    truth = np.floor(rng.beta(2, 5, B) * grid) / grid
    cost = rng.integers(1, 200_000, B)

    def resumes(state_bytes):
        count = [0]

        def run(indices, opts, on_done):
            outs = []
            for i, o in zip(indices, opts):
                count[0] += o.resume is not None
                start = o.resume.spent if o.resume is not None else 0
                out, s = _gradual_search(truth[i], cost[i], grid, start, o)
                if out.state is not None:
                    out.state = _Spent(s, nbytes=1000)
                outs.append(out)
                on_done(i, out)
            return outs

        res = order_statistic(run, B, k, SearchOptions(), state_bytes=state_bytes)
        assert res.decided and res.value == np.sort(truth)[k - 1]
        return count[0]

    assert resumes(None) > 0
    assert resumes(0) == 0
    monkeypatch.setattr(quantile_mod, "RESUME_TOTAL_BYTES", 0)
    assert resumes(None) == 0
    assert resumes(10**9) > 0

# ------------------------------------------------------------------ a budget for the whole interval
class _Clock:
    """A clock that moves only when told: the deadline passes after ``rounds`` refinement rounds."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.mark.parametrize("seed, rounds", [(1, 1), (2, 1), (2, 2), (3, 3)])
def test_interval_budget_returns_a_certified_bracket(seed, rounds, monkeypatch):
    """Out of time after ``rounds`` rounds (an injected clock: no timing involved), the result is
    the upper side of the bracket, never below the exact Q_hat, and the lower side never above it."""
    from cudbound.fit import fit_classifier
    from cudbound.losses import get_loss
    from cudbound.resampling import draw_counts
    from cudbound.workers import ReplicateRunner

    X, y = _noisy(40, 4, seed)
    design = np.column_stack([np.ones(len(y)), X])
    fit = fit_classifier(design, y, get_loss("logistic"))
    B, k = 60, 57
    counts = draw_counts(len(y), B, np.random.default_rng(seed))
    clock = _Clock()
    seen = []

    def after_round(a, c):
        seen.append((a, c))
        if len(seen) >= rounds:
            clock.now = 10.0  # the deadline (1.0) has passed

    with ReplicateRunner(fit.rep.Z, y, fit.loss_z, counts, fit.gamma, float(len(y))) as runner:
        exact = order_statistic(runner, B, k, SearchOptions(), exact_distribution=True)
        monkeypatch.setattr(quantile_module, "FIRST_BUDGET", 8)
        cut = order_statistic(runner, B, k, SearchOptions(), deadline=1.0, clock=clock,
                              on_bounds=after_round)
    assert exact.decided
    assert cut.rounds == min(rounds, cut.rounds) and cut.rounds <= rounds
    assert cut.value >= exact.value - 1e-12
    assert cut.lower_value <= exact.value + 1e-12
    assert cut.decided == (cut.lower_value >= cut.value)
    assert cut.out_of_time or cut.decided
    if not cut.decided:
        assert any(r.status == "budget" for r in cut.records)


def test_spent_interval_budget_gives_the_trivial_bounds_and_a_wider_interval():
    """A budget that is spent before the first search (no timing involved: 1 microsecond is over
    once the fit is done): every replicate keeps max|C| / n, the interval contains the exact one."""
    from cudbound.engine import trivial_bound
    from cudbound.resampling import draw_counts

    X, y = _noisy(30, 3, 4)
    exact = cudbound.cud_interval(X, y, procedure=Procedure(loss="logistic"), n_resamples=40, rng=2)
    cut = cudbound.cud_interval(X, y, procedure=Procedure(loss="logistic"), n_resamples=40, rng=2, time_limit=1e-6)
    counts = draw_counts(30, 40, np.random.default_rng(2))
    np.testing.assert_allclose(cut.bootstrap_distribution, [trivial_bound(c) for c in counts])
    assert cut.conservative and cut.stats.out_of_time
    assert cut.low <= exact.low and cut.high >= exact.high
    assert cut.upper_gap == pytest.approx(cut.half_width - cut.stats.half_width_lower)
    assert cut.half_width - cut.upper_gap <= exact.half_width + 1e-12
    assert exact.upper_gap == 0.0 and not exact.stats.out_of_time
    assert cut.to_dict()["upper_gap"] == cut.upper_gap


def test_replicate_time_limit_is_the_per_replicate_budget():
    X, y = _noisy(30, 3, 5)
    res = cudbound.cud_interval(X, y, n_resamples=20, rng=1, engine_options={"replicate_time_limit": 60.0})
    assert not res.conservative
    with pytest.raises(ValueError, match="time_limit"):
        cudbound.cud_interval(X, y, n_resamples=20, rng=1, time_limit=-1.0)
    with pytest.raises(ValueError, match="time_limit"):
        cudbound.cud_interval(X, y, n_resamples=20, rng=1, engine_options={"replicate_time_limit": 0.0})


@pytest.mark.parametrize("budget", [{"time_limit": -1.0}, {"time_limit": "1"},
                                    {"engine_options": {"max_nodes": 0}},
                                    {"engine_options": {"replicate_time_limit": 0.0}}])
def test_budgets_are_checked_one_way(budget):
    """Every budget is checked where it enters cud_from_design (``time_limit`` by its input
    validation, the per-replicate ones by ``EngineOptions``), so the registry's option check of
    "cud" (a coverage study's configuration) refuses what cud_from_design refuses."""
    from cudbound.registry import check_options
    with pytest.raises(ValueError, match="`(max_nodes|time_limit|replicate_time_limit)`"):
        check_options("cud", 30, **budget)
    check_options("cud", 30, time_limit=0.0)   # cud_from_design takes 0 s: what cud_interval has left
