"""The order statistic Q_hat of the replicate suprema, computed exactly and only as far as needed.

The CUD interval needs one number from the B replicate suprema: Q_hat, the k-th smallest
with k = ceil(level * B). Every replicate's branch and bound is *anytime*: stopped at any
moment it holds an attained value lo_b <= Q^(b) and a certified bound up_b >= Q^(b). The
order statistic is monotone in each argument, so

    k-th smallest of (lo_b)  <=  Q_hat  <=  k-th smallest of (up_b),

and Q_hat is known exactly as soon as the two sides meet. Refinement (a "selection"
version of branch and bound):

1. every replicate is searched with a small node budget;
2. with a = k-th(lo) and c = k-th(up), a replicate is *resolved* when it is exact, when
   up_b < a (it lies below Q_hat whatever the others do) or when lo_b > c (above it); of the
   others, those with lo_b <= a are searched again with a budget four times larger, pruning
   every node whose bound is at most a - 2e-12 (``floor``: its values cannot be Q_hat, and the
   replicate's bound then becomes a - 1e-12) and stopping once a value above
   t = a + (c - a) / 4 is attained (``stop_above``, :data:`STOP_FRACTION`);
3. repeat until k-th(lo) = k-th(up).

A replicate with lo_b > a waits: it is resolved once c falls below lo_b, and searched again once
a reaches lo_b. Its search would raise lo_b, which does not move a while lo_b > a, and could lower
its up_b, which moves c only when that bound is the k-th; the replicates below a raise a with their
values and lower c with their bounds.
Before issue 44 every unresolved replicate was searched each round with ``stop_above`` = c, and
at a few hundred points most of the work went to replicates far above Q_hat looking for a value
above a still loose c (measured: squared loss, n = 1000, B = 500, 4.78 M -> 3.82 M nodes). The CUD
interval of a difference keeps that rule (``wait_above=False``): its joint searches' states are large
(up to 64 MiB), and waiting ones held them longer (logistic100, B = 500: 7% fewer nodes, 12% more
time, a higher peak of memory; ``benchmarks/RESULTS.md``). Stopping
above t rather than a makes a rise by more than one attained value per round where many values lie
just above it; the rounds are still more than the rule before's (fake searches: tens at k = 0.95 B).
A search that keeps no state (a user loss given as a cvxpy expression, a state over its size limit)
starts again each time it is searched, so once a replicate's search has left none, its later
searches stop above c, as before issue 44 (a value above c then resolves it). Without that, fake
searches that never keep a state spent 0.51-2.17 times the nodes of the rule before (k = 1 to 120 of
120, ``tests/test_quantile.py``'s fakes); with it, 0.83-1.00 times.

It terminates: if no unresolved replicate has lo_b <= a, the replicates with lo_b <= a (at
least k of them) are all exact or below a, so k-th(up) <= a and a = c; when only replicates a
user's budget stopped are left below a, the waiting ones are searched with ``stop_above`` = c
(step 2 as it was), and once every replicate is resolved, the k-th smallest lies in the exact
group (a replicate below has up_b < a <= k-th(lo), one above has lo_b > c >= k-th(up)). The
result equals the full computation's (the same exact searches decide the same value),
and every decision depends only on the searches' results, never on their timing, so it
does not depend on the number of workers. A search stopped by the refinement's budget or by
its ``stop_above`` is resumed when it is next searched: its open nodes (``SearchOutcome.state``)
go back to the search with the new thresholds, which is valid because ``floor`` only rises
from round to round (a node pruned below an old floor stays below every later one) and
``stop_above`` prunes nothing.
A state larger than ``core.RESUME_MAX_BYTES`` (a joint search's of a difference:
``frontier.RESUME_MAX_BYTES``), states beyond ``RESUME_TOTAL_BYTES`` in all (``order_statistic``'s
``state_bytes``: the difference's ``compare.cud.STATE_BYTES``, 128 MiB; kept in replicate order),
each even without the smooth losses' derivative cache (which a state drops first when that is what
it takes: ``SearchState.lighter``), and searches whose node solver keeps its warm starts in Python
restart instead, and search to the end (with the round's floor and stop_above = c, under the user's
budget only): a restart under a budget four times larger would repeat the work again and again
(measured: three logistic replicates of ``benchmarks/difference.py``'s n = 100, restarted at 262,144
and 1,048,576 nodes, took 29 of 50 s). A search to the end has no bound on its work, though, and the CUD
interval of a difference gives ``restart_ahead`` (``compare.cud.RESTART_AHEAD``, 0): such a search starts
again under the budget of the round ``restart_ahead`` rounds ahead (iterative deepening: fewer than 16/3
times the nodes it needs from scratch, ``tests/test_quantile.py``): on a third-study task a round that
searched 118 such replicates to the end had not ended after 1,078 s; this way it took 30 s, and the task
53 minutes (``compare.cud.RESTART_AHEAD``).
Either way the decisions, and so the interval, are the same.
``exact_distribution=True`` skips all this and solves every replicate to the end.

A user budget (``max_nodes``, ``time_limit``) still applies to each search; a replicate it
stops keeps its certified bound, and if such replicates leave Q_hat undecided, the upper
side k-th(up) is returned (conservative).

A budget for the whole computation (``deadline``, a moment of ``clock``) is spent where it
moves Q_hat: every round searches only the replicates that still straddle the bracket. The
deadline goes into every search (``SearchOptions.deadline``: a search running then stops with
its certified bound, one not yet started returns the trivial bound max|C| / n), and no round
starts after it. The result is then k-th(up), certified (never below the exact Q_hat), with
k-th(lo) beside it: the exact Q_hat lies between the two (``QuantileOutcome.lower_value``).
"""
from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from .search import SearchOptions, SearchOutcome

__all__ = ["order_statistic", "order_index", "kth_smallest", "QuantileOutcome", "FIRST_BUDGET"]

FIRST_BUDGET = 256
"""Node budget of the first pass over all replicates (each later round multiplies it by 4, up to
:data:`MAX_BUDGET`)."""

STOP_FRACTION = 0.25
"""After the first round, a replicate searched below the bracket stops above a + STOP_FRACTION (c - a)."""

MAX_BUDGET = 1 << 40
"""The refinement's round budget grows fourfold up to this many nodes."""

_FLOOR_GAP = 2e-12  # the search prunes bounds up to floor + 1e-12: stay strictly below a

RESUME_TOTAL_BYTES = 256 << 20
"""At most this much memory holds the states of searches waiting to be resumed, unless the caller gives
``order_statistic`` its own ``state_bytes`` (the CUD interval of a difference does)."""


def order_index(confidence_level: float, B: int) -> int:
    """k = ceil(level * B), at least 1: the rank of Q_hat among the B replicate values, the one
    order statistic of the CUD interval. (1e-9 absorbs the rounding of level * B: 0.95 * 20 is
    19.000000000000004 in floating point, and k is 19.)"""
    return max(math.ceil(confidence_level * B - 1e-9), 1)


def kth_smallest(values: np.ndarray, k: int) -> float:
    """The k-th smallest of ``values`` (k from 1)."""
    return float(np.partition(np.asarray(values, dtype=float), k - 1)[k - 1])


@dataclasses.dataclass
class QuantileOutcome:
    value: float                 # Q_hat (an upper bound when ``decided`` is False)
    decided: bool                # False only when user budgets or solver failures left it open
    lower: np.ndarray            # per replicate: an attained value <= Q^(b)
    upper: np.ndarray            # per replicate: a certified bound >= Q^(b)
    records: list                # per replicate: SearchOutcome with nodes etc. summed over rounds
    rounds: int
    lower_value: float = math.nan  # k-th smallest of ``lower``: the exact Q_hat is in [lower_value, value]
    out_of_time: bool = False      # the deadline stopped the computation


def _merge(old: SearchOutcome | None, new: SearchOutcome) -> SearchOutcome:
    if old is None:
        return new
    for name in ("nodes", "solves", "pruned", "realisability_checks", "seconds"):
        setattr(new, name, getattr(old, name) + getattr(new, name))
    for name in getattr(new, "SUMMED", ("fallbacks",)):   # a run's own record says which statistics add up
        if name not in ("nodes", "solves", "pruned", "realisability_checks", "seconds") and hasattr(new, name):
            setattr(new, name, getattr(old, name, 0) + getattr(new, name))
    return new


def _capped(budget: int, user: int | None) -> int:
    """A round's node budget (at most :data:`MAX_BUDGET`) under the user's ``max_nodes``."""
    budget = min(budget, MAX_BUDGET)
    return budget if user is None else min(budget, user)


def _this_round(todo, lo, a, c, rounds, wait_above):
    """(the replicates a round searches, its ``stop_above``) among the unresolved ``todo``: after the
    first round and with ``wait_above``, those with lo_b <= a, each stopping once it attains a value
    above a + STOP_FRACTION (c - a); when there are none (or without ``wait_above``), all of them,
    stopping above c (module docstring)."""
    if rounds > 0 and wait_above:
        low = todo[lo[todo] <= a]
        if low.size:
            return low, (a + STOP_FRACTION * (c - a)) if math.isfinite(c) else a
    return todo, c


def _file_state(i, status, kept, held, saved, restart, plain, limit):
    """Where replicate i goes after a search the refinement stopped (``status``; not exact, not the
    user's stop) that left the state ``kept`` (or None), with ``held`` bytes of states kept: the state
    into ``saved`` while all stay within ``limit`` bytes (without the derivative cache if that is
    what it takes), else into ``restart`` when it had one or its budget cut it (the next search goes
    to the end); a replicate left without a state joins ``plain`` (from then on it stops above c).
    Returns the bytes held."""
    had_state = kept is not None
    if had_state and held + kept.nbytes > limit:
        kept = kept.lighter()
    if kept is not None and held + kept.nbytes <= limit:
        saved[i] = kept
        return held + kept.nbytes
    if had_state or status == "budget":
        restart.add(i)
    plain.add(i)
    return held


def _out_of_time(a, c, lo, up, final, stopped, records, rounds) -> QuantileOutcome:
    """The outcome when the deadline has passed: the upper side c is certified, the exact Q_hat is at
    least the lower side a; a replicate the refinement's budget cut is "bounded" if it is resolved,
    else "budget"."""
    resolved = final | (up < a) | (lo > c)
    for i in np.flatnonzero(~stopped):
        if records[i].status in ("budget", "bounded"):
            records[i].status = "bounded" if resolved[i] else "budget"
    return QuantileOutcome(c, bool(a >= c), lo, up, records, rounds, lower_value=min(a, c), out_of_time=True)


def order_statistic(run, B: int, k: int, options: SearchOptions, *, exact_distribution: bool = False, progress=None,
                    deadline: float | None = None, clock=time.time, on_bounds=None, wait_above: bool = True,
                    state_bytes: int | None = None, restart_ahead: int | None = None) -> QuantileOutcome:
    """The k-th smallest replicate supremum.

    ``run(indices, options_list, on_done)`` searches the replicates ``indices`` with the given
    SearchOptions (one per index) and returns their SearchOutcomes in that order, calling
    ``on_done(index, outcome)`` as each finishes (for progress). ``options`` holds the user's
    budgets and switches. ``progress``: an object with ``update(n)`` and ``n``/``refresh()``
    (a tqdm bar), or None. ``deadline``: the moment of ``clock`` (default ``time.time``) by which
    to return (module docstring). ``on_bounds(a, c)``: called after every round with the
    bracket k-th(lo) <= Q_hat <= k-th(up) (for a progress display). ``wait_above``: replicates
    above a wait (module docstring); False: the rule before (the interval of a difference).
    ``state_bytes``: the most bytes of search states kept between rounds (None: RESUME_TOTAL_BYTES).
    ``restart_ahead``: a search the refinement's budget cut without a state to resume goes to the end
    when next searched (None, module docstring), or starts again under the budget of the round
    ``restart_ahead`` rounds after the one that searches it (0: that round's budget).
    """
    limit = RESUME_TOTAL_BYTES if state_bytes is None else state_bytes
    if deadline is not None and clock is time.time:
        # the searches read the same clock (another clock, in tests, times the rounds only)
        options = dataclasses.replace(options, deadline=float(deadline))
    lo = np.zeros(B)
    up = np.full(B, np.inf)
    records: list = [None] * B
    final = np.zeros(B, dtype=bool)   # no further search can change it (exact, or stopped by the user)
    stopped = np.zeros(B, dtype=bool)  # stopped by the user's budget or a solver failure
    state = {"a": 0.0, "c": math.inf, "resolved": np.zeros(B, dtype=bool)}

    def note(i, out):
        lo[i] = max(lo[i], out.lower)
        up[i] = min(up[i], out.value)
        if out.status == "exact":
            lo[i] = up[i] = out.value
        records[i] = _merge(records[i], out)
        if progress is not None:
            res = out.status == "exact" or up[i] < state["a"] or lo[i] > state["c"]
            if res and not state["resolved"][i]:
                state["resolved"][i] = True
                progress.update(1)

    def user_stop(out, budget):
        """Did the user's budget (not the refinement's) or a solver failure stop this search?"""
        if out.status == "solver_failure":
            return True
        if out.status != "budget":
            return False
        nodes = getattr(out, "round_nodes", out.nodes)   # a run's record may count more searches than the capped one
        return budget is None or nodes < budget or (options.max_nodes is not None and budget >= options.max_nodes)

    if exact_distribution:
        idx = list(range(B))
        outs = run(idx, [options] * B, note)
        for i, out in zip(idx, outs):
            final[i] = True
            out.state = None    # nothing is resumed
        a, c = kth_smallest(lo, k), kth_smallest(up, k)
        return QuantileOutcome(c, bool(np.all(lo == up) or a >= c), lo, up, records, 1, lower_value=min(a, c),
                               out_of_time=deadline is not None and clock() >= deadline)

    budget = FIRST_BUDGET     # read at the call (tests lower it)
    todo = np.arange(B)
    rounds = 0
    saved: dict = {}  # replicate -> SearchState of its budget-stopped search, to be resumed
    restart: set = set()  # nothing to resume (budget-cut, no state or state dropped): next search under ``again``
    plain: set = set()  # replicates whose search left no state: from then on they stop above c (module docstring)
    while True:
        if deadline is not None and rounds > 0 and clock() >= deadline:
            return _out_of_time(state["a"], state["c"], lo, up, final, stopped, records, rounds)
        cap = _capped(budget, options.max_nodes)
        a, c = state["a"], state["c"]
        todo, stop = _this_round(todo, lo, a, c, rounds, wait_above)
        opts = dataclasses.replace(options, max_nodes=cap,
                                   floor=(a - _FLOOR_GAP) if a > _FLOOR_GAP else None,
                                   stop_above=stop if math.isfinite(stop) else None)
        # a search the last round cut without a state to resume goes to the end (only the user's budget), or
        # starts again under the budget restart_ahead rounds ahead
        again = options.max_nodes if restart_ahead is None else _capped(budget * 4 ** restart_ahead, options.max_nodes)
        caps = {int(i): again if int(i) in restart else cap for i in todo}
        above_c = c if math.isfinite(c) else None
        outs = run(list(todo), [dataclasses.replace(opts, max_nodes=caps[int(i)], resume=saved.pop(int(i), None),
                                                    stop_above=above_c if int(i) in plain else opts.stop_above)
                                for i in todo], note)
        rounds += 1
        held = sum(st.nbytes for st in saved.values())   # the states of replicates this round left alone
        restart = restart - {int(i) for i in todo}
        for i, out in zip(todo, outs):
            kept, out.state = out.state, None
            if user_stop(out, caps[int(i)]):
                final[i] = stopped[i] = True
            elif out.status == "exact":
                final[i] = True
            else:
                held = _file_state(int(i), out.status, kept, held, saved, restart, plain, limit)
        a, c = kth_smallest(lo, k), kth_smallest(up, k)
        state["a"], state["c"] = a, c
        if on_bounds is not None:
            on_bounds(a, c)
        resolved = final | (up < a) | (lo > c)
        if progress is not None:
            newly = resolved & ~state["resolved"]
            state["resolved"] |= resolved
            if newly.any():
                progress.update(int(newly.sum()))
        if a >= c or not (~resolved).any():
            if progress is not None and a >= c and not state["resolved"].all():   # Q_hat decided: its ties too
                progress.update(int(np.count_nonzero(~state["resolved"])))
            for i in np.flatnonzero(~stopped):
                if records[i].status == "budget":  # cut by the refinement's own budget, then resolved
                    records[i].status = "bounded"
            # when only user-stopped replicates straddle Q_hat, the upper side is certified
            return QuantileOutcome(c, bool(a >= c), lo, up, records, rounds, lower_value=min(a, c),
                                   out_of_time=deadline is not None and clock() >= deadline and a < c)
        todo = np.flatnonzero(~resolved)
        saved = {i: st for i, st in saved.items() if not resolved[i]}
        budget = min(4 * budget, MAX_BUDGET)
