"""The frontier of one classifier's replicate, and the joint search of a difference of two classifiers.

The CUD bound of a difference of two classifiers
(method.md, "The difference of two classifiers") needs, of each classifier X and count vector, the frontier

    F^>=(k) = min{m(s) : s realisable, C(s) >= k},    F^<=(k) = min{m(s) : s realisable, C(s) <= k},

below a level L_max (values at or above it are recorded as L_max; with alpha_n = 0 the level
is infinite and an infinite value means "not reached"). This is the branch and bound of
:mod:`cudbound.search.core` (the same nodes, node pool, node solvers, realisability decisions,
lazy children, flip costs and branching rules, imported from there) with the maximum replaced by
the frontier and its prune rule by the frontier's:

- a node's lower bounds (:func:`_profile`): every completion s flips a set J of the free points
  from the signs of the node's minimiser b (count C_0 there), so C(s) = C_0 + sum_J diff_j and
  m(s) >= m + max(floor, max_J delta_j), delta_j the flip cost; a completion with C(s) >= k
  therefore has m(s) >= m + max(floor, t(k)), t(k) the least t whose points with delta_j <= t
  and diff_j > 0 reach k (likewise for C <= k);
- a node is pruned when none of these bounds is below the frontier found so far by more than
  ``eps`` at any count of its range (the frontier only decreases, so nothing pruned could lower
  it by more than eps);
- the node with the least lower bound is expanded first, so that the smallest open bound is a
  certified lower bound of every value not yet found: the search stops when it reaches the
  frontier's largest value (or L_max), and a search cut short by a budget, or a node nobody
  solves, leaves the certified lower frontier min(F, that bound).

**The joint search.** Given the other classifier's frontier (its ``partner``), the same loop
maximises the pair objective max_a |C(s) - a| G(F_partner(a), m(s)) over the patterns s of this
classifier, G the bound's factor: Q^(b) itself, as core's loop maximises CUD's objective. A node's
bound U (:func:`_joint_bound`) pairs each count block of the lower bounds above with the partner's
certified lower frontier (F^<= for the partner's counts below, F^>= above); a node is pruned when
U is at most the best pair value attained (with the partner's frontier found), the node with the
largest U is expanded first, and the largest open U certifies Q^(b) from above at every moment.
A completed pattern's pairs are attained with the partner's frontier found; when the partner was cut
short (found above certified), they are also bounded with its certified lower frontier, and the
largest such bound joins the certified value, so that a budget never gives less than Q^(b).
For the order statistic's refinement (:mod:`cudbound.quantile`), a joint search also takes
``SearchOptions.floor`` (a node whose U is at most the floor is pruned too, and the certified value
is then at least floor + prune: status "bounded" when that is all it knows) and ``stop_above`` (it
stops, "bounded", once a pair value above it is attained, keeping the largest open U as its bound),
as core's loop does; a frontier search ignores both (it is searched in full, once per replicate).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numba import njit, objmode

from .._kernel_compile import compile_once
from ..optim.linear_solve import row_dot
from .bounds import _count_at, _free_point, _order_into, _point_flip
from .branching import _branch_point
from .codes import BELOW_FLOOR, BUDGET, EXACT, KIND_EXTERNAL, KIND_QP, KINDS, SOLVER_FAILURE, STATIC, STATUS, STOPPED_ABOVE
from .core import (_KEPT, COUNT, FALLBACKS, HSIZE, NEXT_UID, NODES, PRUNED_N, REALISABILITY, SOLVES, STATUS_CODE,
                   UNDECIDED_N, LoopOptions, ReplicateRef, SearchState, _bounding, _loop_options, _make_child,
                   _node_factor, _over_budget, _release, _room_for_two, _solve_into, _unrealisable, solver_inputs)
from .core import _placeholder_state as core_placeholder_state
from .heap import _heap_pop, _heap_push
from .hinge_qp_node_solver import HingeWorkRef, _hinge_work
from .node_pool import _as_arrays, _as_ref, _grow_pool, _new_pool, slot_nbytes
from .node_qp import _workspace
from .node_solve import NodeSolve, NodeSolveRef
from .options import SearchOptions, Tolerances
from .replicate_setup import _replicate_setup

__all__ = ["FrontierOutcome", "Target", "FORM_CODES", "run_frontier", "compiled_frontier", "count_range"]

STACK_N = 11  # the count of nodes on a joint search's depth-first stack (``node_memory``)
_N_COUNTS = 12
FORM_CODES = {"joint": 0, "min": 1, "product": 2}
"""The bound's factor G of (x_A, x_B), x = alpha_n (K - m): g(x_A + x_B), min(g(x_A), g(x_B)) and
g+(x_A) g+(x_B), g(x) = min(1, 1 + x), g+ = max(0, g) (method.md)."""
# the loop's values (the float64 array ``val``); LEAF_U: in a joint search, the largest pair value of a
# completed pattern with the partner's certified lower frontier (above BEST only when the partner is inexact);
# FLOOR: a joint search's ``SearchOptions.floor`` (-1: none), below which no value matters
BEST, LOST_LB, LOST_U, LEAF_U, FLOOR = 0, 1, 2, 3, 4
# a joint search's dive (``SearchOptions.dive_every``, :func:`_next_node`): DIVE_NODE the slot it expands
# next (-1: none), DIVE_KEY that node's bound, DIVE_AT the node count from which the next dive begins
DIVE_NODE, DIVE_KEY, DIVE_AT = 5, 6, 7
# DEPTH_FIRST: 1 once a joint search's node pool has reached ``SearchOptions.node_memory`` (:func:`_queue`)
DEPTH_FIRST = 8
_N_VALUES = 9
_RESUMED_VALUES = (BEST, LOST_LB, LOST_U, LEAF_U, DIVE_NODE, DIVE_KEY, DIVE_AT, DEPTH_FIRST)


def count_range(counts, y):
    """The least and largest C = sum_i (nu_i - 1) 1{s_i != y_i} over all sign patterns:
    -#{nu_i = 0} and sum_i (nu_i - 1)^+ (``y`` only fixes the length)."""
    c = np.asarray(counts, dtype=float)
    assert c.shape == np.shape(y)
    return -int(np.sum(c == 0)), int(np.sum(np.maximum(c - 1.0, 0.0)))


@dataclass
class FrontierOutcome:
    """One classifier's frontier for one count vector.

    ``up[i]`` and ``down[i]`` hold F^>=(k) and F^<=(k) of the patterns found, k = ``kmin`` + i
    (each at most ``level``; an upper bound of the exact value), ``up_lower`` and ``down_lower``
    certified lower bounds of the exact values (equal to ``up`` and ``down`` when ``status`` is
    "exact"). ``L_hat``: the resample's loss at beta_hat (K); ``level``: the frontier's level
    L_max. A joint search (:class:`Target` with a partner) returns Q^(b) as ``value`` (exact when
    ``status`` is "exact", else a certified upper bound) and ``value_lower`` (attained); its own
    frontier is then only what the search met (pruned for Q^(b), not for the frontier)."""

    kmin: int
    up: np.ndarray
    down: np.ndarray
    up_lower: np.ndarray
    down_lower: np.ndarray
    level: float
    L_hat: float
    status: str
    nodes: int = 0
    solves: int = 0
    pruned: int = 0
    realisability_checks: int = 0
    screened: int = 0
    fallbacks: int = 0
    undecided: bool = False
    seconds: float = field(default=0.0, compare=False)
    value: float = math.nan
    value_lower: float = math.nan
    state: object = field(default=None, repr=False, compare=False)  # a SearchState when stopped by max_nodes

    @classmethod
    def trivial(cls, counts, y, L_hat, status, seconds=0.0, partner=None):
        """Nothing found, and the certified lower frontier -inf at every count of the range
        :func:`count_range` (the bound that a replicate keeps when its search cannot run); with a
        ``partner`` frontier, the value max |C - a| / n over both ranges (G <= 1)."""
        kmin, kmax = count_range(counts, y)
        size = kmax - kmin + 1
        value = math.nan
        if partner is not None:
            pmax = partner.kmin + len(partner.up) - 1
            value = max(kmax - partner.kmin, pmax - kmin, 0) / len(y)
        return cls(kmin, np.full(size, np.inf), np.full(size, np.inf), np.full(size, -np.inf),
                   np.full(size, -np.inf), math.inf, float(L_hat), status, seconds=seconds, value=value,
                   value_lower=0.0 if partner is not None else math.nan)


class Target(NamedTuple):
    """What a frontier search is for: ``alpha_n`` (the bound's: the prune tolerance, the factor);
    ``partner``: the other classifier's :class:`FrontierOutcome` for a joint search (None: the
    frontier itself); ``form``: the factor, a key of :data:`FORM_CODES`."""

    alpha_n: float
    partner: FrontierOutcome | None = None
    form: str = "joint"


# ------------------------------------------------------------------ the frontier and its bounds
@njit(cache=True, inline="always")
def _improves(b, f, eps):
    """Whether a lower bound b may lower a frontier value f by more than eps (f = inf: not reached)."""
    if f == np.inf:
        return b < np.inf
    return b < f - eps


@njit(cache=True, inline="always")
def _index(C, kmin):
    return int(math.floor(C + 0.5)) - kmin


@njit(cache=True)
def _attain(up, down, i, v):
    """A realisable pattern of count index i and minimum (or loss) v: F^>= falls to v at every
    count up to it, F^<= at every count from it (each stays monotone, so the walk stops early)."""
    j = i
    while j >= 0 and up[j] > v:
        up[j] = v
        j -= 1
    j = i
    while j < down.shape[0] and down[j] > v:
        down[j] = v
        j += 1


@njit(cache=True, inline="always")
def _factor(xa, xb, form):
    """The factor G at x_A, x_B (:data:`FORM_CODES`); x_A + x_B is the same number either way round."""
    if form == 0:
        return min(1.0, 1.0 + (xa + xb))
    ga = min(1.0, 1.0 + xa)
    gb = min(1.0, 1.0 + xb)
    if form == 1:
        return min(ga, gb)
    return max(ga, 0.0) * max(gb, 0.0)


@njit(cache=True)
def _pair(c, b, K, pt, lower, below, above):
    """max(0, max over the partner's counts a of |c - a| G(alpha (K_p - F_p(a)), alpha (K - b))),
    with F_p^<= for a < c (``below``) and F_p^>= for a > c (``above``): the partner's certified
    lower frontier when ``lower``, else its frontier found. Not divided by n."""
    _, pk, pup, pdown, pup_lo, pdown_lo, pK, alpha, form = pt
    fu = pup_lo if lower else pup
    fd = pdown_lo if lower else pdown
    xb = alpha * (K - b)
    best = 0.0
    for i in range(fu.shape[0]):
        a = pk + i
        if a < c and below:
            f = fd[i]
        elif a > c and above:
            f = fu[i]
        else:
            continue
        if f == np.inf:
            continue
        G = 1.0 if alpha == 0.0 else _factor(alpha * (pK - f), xb, form)
        v = abs(c - a) * G
        if v > best:
            best = v
    return best


@njit(cache=True, inline="always")
def _attain_pattern(rep, up, down, kmin, C, v, pt, val):
    """A realisable pattern of count C and minimum (or loss) v found: the frontier, and in a joint
    search the best pair value attained with the partner's frontier found."""
    _attain(up, down, _index(C, kmin), v)
    if pt[0]:
        q = _pair(C, v, rep.L_hat, pt, False, True, True) / rep.n
        if q > val[BEST]:
            val[BEST] = q


@njit(cache=True, inline="always")
def _attain_at(rep, up, down, kmin, x, v, margin, pt, val):
    """Classifier x with loss v realises its own pattern when its signs are clear."""
    if not v < rep.L_max:
        return
    clear, C = _count_at(rep.P, rep.norms, rep.cplus, rep.cminus, rep.C_forced, x, margin)
    if clear:
        _attain_pattern(rep, up, down, kmin, C, v, pt, val)


@njit(cache=True)
def _profile(rep, bd, signs, Cfix, beta, m, floor, use_flip, r):
    """A node's lower bounds (module docstring): (C_0, the number of the points that can flip below
    the level); their flip costs and count changes in ``bd.tmp_d`` and ``bd.tmp_diff``, and their order by
    flip cost in ``bd.order``."""
    # the records' fields read once: a field read inside the loop takes and drops a reference each time
    P, cplus, cminus, L_max = rep.P, rep.cplus, rep.cminus, rep.L_max
    hn, tu, L_u, tmp_d, tmp_diff = bd.hn, bd.tu, bd.L_u, bd.tmp_d, bd.tmp_diff
    quad = tu.shape[0] > 0
    C0 = Cfix
    nr = 0
    for k in range(P.shape[0]):
        if signs[k] != 0:
            continue
        t = row_dot(P, k, beta)
        cost, diff = _free_point(t, cplus[k], cminus[k])
        C0 += cost
        if diff == 0.0:
            continue
        dk = _point_flip(t, tu[k] if quad else 0.0, hn[k], quad, m, L_u, r) if use_flip else 0.0
        if m + max(dk, floor) < L_max:  # a flip that reaches the level matters nowhere
            tmp_d[nr] = dk
            tmp_diff[nr] = diff
            nr += 1
    _order_into(tmp_d, nr, bd.order)
    return C0, nr


@njit(cache=True)
def _lowers(bd, C0, nr, m, floor, up, down, kmin, eps):
    """Whether the lower bounds of :func:`_profile` fall below the frontier by more than eps at
    some count: the counts reached at one flip cost form a block, where F^>= is largest at its top
    and F^<= at its bottom."""
    tmp_d, tmp_diff, order = bd.tmp_d, bd.tmp_diff, bd.order
    base = m + floor
    i0 = _index(C0, kmin)
    if _improves(base, up[i0], eps) or _improves(base, down[i0], eps):
        return True
    hi = i0
    lo = i0
    for idx in range(nr):
        j = order[idx]
        b = m + max(tmp_d[j], floor)
        d = int(math.floor(tmp_diff[j] + 0.5))
        if d > 0:
            hi += d
            if _improves(b, up[hi], eps):
                return True
        else:
            lo += d
            if _improves(b, down[lo], eps):
                return True
    return False


@njit(cache=True, inline="always")
def _g_at(f, pK, alpha, xb, form):
    """The factor G of a partner frontier value f (-1: f not reached)."""
    if f == np.inf:
        return -1.0
    return 1.0 if alpha == 0.0 else _factor(alpha * (pK - f), xb, form)


@njit(cache=True, inline="always")
def _saturated(f, pK, alpha, xb, form):
    """G no longer grows as the partner's frontier value falls below f (alpha = 0: G = 1 throughout;
    the joint form: 1 + x_A + x_B >= 1; the others: g(x_A) = 1)."""
    if alpha == 0.0:
        return True
    xa = alpha * (pK - f)
    return xa + xb >= 0.0 if form == 0 else xa >= 0.0


@njit(cache=True)
def _pair_above(c, b, K, pk, pup_lo, pdown_lo, pK, alpha, form, below, above, best):
    """max(best, :func:`_pair` with the partner's certified lower frontier), found without visiting
    every count. The lower frontier is monotone (F^<= falls and F^>= rises with the count: the
    :func:`_partner` of a search makes it so), and G rises as the partner's value falls, so below c
    the counts where G > 0 are those from the first found by bisection on, and past the first count
    where G stops rising (:func:`_saturated`) every term is smaller than that count's; the walk
    also stops once |c - a| <= best (G <= 1). The terms left out are at most the maximum, so it is
    the same number, computed the same way. Above c likewise, walking down. Needs alpha_n >= 0 (G then
    never falls as the partner's value falls, in floating point too: every step is monotone).
    The partner ("pt" of the search) comes unpacked (pk, its lower frontier, K, alpha_n, the form's code):
    a loop unpacks the tuple once, since each unpacking takes and drops a reference to each of its arrays."""
    xb = alpha * (K - b)
    nf = pup_lo.shape[0]
    if below:
        end = min(nf, max(0, int(math.ceil(c - pk))))          # the counts a = pk + i < c
        while end < nf and pk + end < c:                        # (c - pk rounded: the test a < c decides)
            end += 1
        while end > 0 and not pk + end - 1 < c:
            end -= 1
        lo, hi = 0, end
        while lo < hi:
            mid = (lo + hi) // 2
            if _g_at(pdown_lo[mid], pK, alpha, xb, form) > 0.0:
                hi = mid
            else:
                lo = mid + 1
        for i in range(lo, end):
            a = pk + i
            if c - a <= best:
                break
            f = pdown_lo[i]
            v = (c - a) * _g_at(f, pK, alpha, xb, form)
            if v > best:
                best = v
            if _saturated(f, pK, alpha, xb, form):
                break
    if above:
        start = min(nf, max(0, int(math.floor(c - pk)) + 1))   # the counts a = pk + i > c
        while start > 0 and pk + start - 1 > c:
            start -= 1
        while start < nf and not pk + start > c:
            start += 1
        lo, hi = start, nf
        while lo < hi:                                          # the first count past the last G > 0
            mid = (lo + hi) // 2
            if _g_at(pup_lo[mid], pK, alpha, xb, form) > 0.0:
                lo = mid + 1
            else:
                hi = mid
        for i in range(lo - 1, start - 1, -1):
            a = pk + i
            if a - c <= best:
                break
            f = pup_lo[i]
            v = (a - c) * _g_at(f, pK, alpha, xb, form)
            if v > best:
                best = v
            if _saturated(f, pK, alpha, xb, form):
                break
    return best


@njit(cache=True)
def _joint_bound(rep, bd, C0, nr, m, floor, pt):
    """U >= the pair value of every completion (module docstring): C_0 at the node's minimum with
    every partner count; a block of counts above C_0 at its top with the partner's counts below
    (its pairs with counts above are dominated by C_0's), a block below at its bottom likewise."""
    _, pk, _, _, fu, fd, pK, alpha, form = pt   # unpacked once (see _pair_above)
    tmp_d, tmp_diff, order, K = bd.tmp_d, bd.tmp_diff, bd.order, rep.L_hat
    U = _pair_above(C0, m + floor, K, pk, fu, fd, pK, alpha, form, True, True, 0.0)
    hi = C0
    lo = C0
    for idx in range(nr):
        j = order[idx]
        b = m + max(tmp_d[j], floor)
        d = tmp_diff[j]
        if d > 0:
            hi += d
            U = _pair_above(hi, b, K, pk, fu, fd, pK, alpha, form, True, False, U)
        else:
            lo += d
            U = _pair_above(lo, b, K, pk, fu, fd, pK, alpha, form, False, True, U)
    return U / rep.n


@njit(cache=True)
def _assess(rep, bd, signs, Cfix, beta, m, floor, use_flip, r, up, down, kmin, eps, pt, val, prune):
    """(keep, key) of a node: whether it may still matter, and its place on the queue: the frontier's
    (it may lower the frontier; least m + floor first, key -(m + floor)) or, in a joint search, its
    bound U > the best pair value attained + prune (largest U first, key U)."""
    base = m + floor
    if not base < rep.L_max:
        return False, 0.0
    C0, nr = _profile(rep, bd, signs, Cfix, beta, m, floor, use_flip, r)
    if pt[0]:
        U = _joint_bound(rep, bd, C0, nr, m, floor, pt)
        return U > max(val[BEST], val[FLOOR]) + prune, U
    return _lowers(bd, C0, nr, m, floor, up, down, kmin, eps), -base


@njit(cache=True, inline="always")
def _offer(pool, cnt, c, keep, key):
    """Node c goes on the queue under ``key``, or is pruned and its slot freed."""
    if keep:
        cnt[HSIZE] = _heap_push(pool.heap_keys, pool.heap_ids, cnt[HSIZE], key, c)
    else:
        cnt[PRUNED_N] += 1
        _release(pool, cnt, c)


@njit(cache=True, inline="always")
def _queue(pool, cnt, stack, val, c, keep, key):
    """Node c kept goes on the queue, or, once the search is depth first (``SearchOptions.node_memory``:
    the pool has reached its limit), on the stack, whose top the loop expands next; else it is pruned.
    Depth first, the nodes in use are the queue's (which no longer grows), the stack's and the path's:
    the stack holds at most two nodes per depth below the node it began from."""
    if keep and val[DEPTH_FIRST] > 0.0 and cnt[STACK_N] < stack.shape[0]:  # (never full: the room is insurance)
        stack[cnt[STACK_N], 0] = c
        stack[cnt[STACK_N], 1] = key
        cnt[STACK_N] += 1
    else:
        _offer(pool, cnt, c, keep, key)


@njit(cache=True)
def _open_top(pool, cnt, val, stack):
    """The largest key of the open nodes (-inf: none): the queue's top, the node a dive expands next and
    the stack's nodes (a joint search's keys; a frontier search has only the queue)."""
    top = pool.heap_keys[0] if cnt[HSIZE] > 0 else -np.inf
    if val[DIVE_NODE] >= 0.0 and val[DIVE_KEY] > top:
        top = val[DIVE_KEY]
    for i in range(cnt[STACK_N]):
        if stack[i, 1] > top:
            top = stack[i, 1]
    return top


@njit(cache=True, inline="always")
def _lost(rep, bd, pool, c, v, up, down, kmin, eps, pt, val, prune):
    """Node c nobody solves: the bound of its parent v's minimiser and minimum with c's floor (no
    flip costs) stands in for its subtree when it may still matter."""
    floor = pool.flip_gap[c]
    keep, key = _assess(rep, bd, pool.signs[c], pool.fixed_cost[c], pool.beta[v], pool.minimum[v], floor, False, 0.0,
                        up, down, kmin, eps, pt, val, prune)
    if keep:
        if pt[0]:
            val[LOST_U] = max(val[LOST_U], key)
        else:
            val[LOST_LB] = min(val[LOST_LB], -key)


@njit(cache=True, inline="always")
def _expand(rep, slv, bd, opt, pool, cnt, v, r, up, down, kmin, eps, pt, val, dive, stack):
    """Branch node v on one free point: two children (``core._make_child``), each kept when
    :func:`_assess` says so (:func:`_queue`). With ``dive``, the kept child of the larger key (the first
    on a tie) is not queued but returned, (its slot, its key), for the loop to expand next; else
    (-1, 0). Depth first, that child goes on the stack after the other, so that it is expanded next."""
    P = rep.P
    j = _branch_point(P, bd.hn, rep.cplus, rep.cminus, pool.signs[v], pool.beta[v], pool.minimum[v], bd.L_branch,
                      bd.branching if r >= 0.0 else STATIC, r)
    side = row_dot(P, j, pool.beta[v])
    chosen, chosen_key = -1, 0.0
    for s in (1, -1):
        c, solved_now, ok, bv = _make_child(rep, slv, bd, opt, pool, cnt, v, j, s, side, r)
        if ok < 0:
            cnt[FALLBACKS] += 1
            _lost(rep, bd, pool, c, v, up, down, kmin, eps, pt, val, opt.prune)
            _release(pool, cnt, c)
            continue
        if solved_now:
            _attain_at(rep, up, down, kmin, pool.beta[c], bv, opt.margin, pt, val)
        # ``hn`` belongs to the parent's minimiser: a child solved here gets the plain bound
        flip_c = bd.use_flip and r >= 0.0 and (not solved_now or not bd.smooth_flip)
        keep, key = _assess(rep, bd, pool.signs[c], pool.fixed_cost[c], pool.beta[c], pool.minimum[c],
                            pool.flip_gap[c], flip_c, r, up, down, kmin, eps, pt, val, opt.prune)
        if (dive or val[DEPTH_FIRST] > 0.0) and keep and (chosen < 0 or key > chosen_key):
            if chosen >= 0:  # the first child goes to the queue (or the stack) after all
                _queue(pool, cnt, stack, val, chosen, True, chosen_key)
            chosen, chosen_key = c, key
        else:
            _queue(pool, cnt, stack, val, c, keep, key)
    _release(pool, cnt, v)
    if chosen >= 0 and not dive:
        _queue(pool, cnt, stack, val, chosen, True, chosen_key)
        chosen = -1
    return chosen, chosen_key


@njit(cache=True, inline="always")
def _settled(top, up, down, eps, pt, val, prune):
    """Every open node is pruned: the frontier's least open bound reaches its largest value, or the
    joint search's largest open bound is at most the best pair value attained."""
    if pt[0]:
        return top <= max(val[BEST], val[FLOOR]) + prune
    return not _improves(-top, max(up[up.shape[0] - 1], down[0]), eps)


@njit(cache=True)
def _max_slots(pool, node_memory):
    """The slots of ``node_memory`` bytes (at least 1; 0: no limit)."""
    if node_memory <= 0:
        return 0
    return max(1, int(node_memory // slot_nbytes(pool)))


@njit(cache=True, inline="always")
def _grown(cap, max_slots, mf, val):
    """The pool's next capacity: twice the last, but no more than ``max_slots`` and the depth-first
    stack's room beyond it; once depth first, that room again (the path's nodes)."""
    room = 2 * mf + 64
    if val[DEPTH_FIRST] > 0.0:
        return cap + room
    if max_slots > 0:
        return max(cap + room, min(2 * cap + 2, max_slots + room))
    return 2 * cap + 2


@njit(cache=True, inline="always")
def _next_node(pool, cnt, val, stack, joint, every):
    """(the node to expand next, whether a dive expands it): the node a dive left, else the top of the
    stack (depth first), else the top of the queue, which begins a dive when the search is joint, not
    depth first, and has made ``every`` nodes (> 0) since the last dive began (the first at the first
    pop).

    A dive expands, from the node it begins at, the child of the larger bound, and that child's, down
    to a leaf (or a node pruned or unrealisable), the other children queued as usual. Best-first order
    attains high pair values late (a leaf fixes every free point); a dive attains one early, which a
    search with ``stop_above`` needs in order to stop, and which prunes the open nodes whose bound is
    below it. A dive's nodes are nodes of the same tree, so the exact Q^(b) is unchanged; where it
    stands is part of the search's state, so a resumed search expands the nodes the uninterrupted one
    would have."""
    if val[DIVE_NODE] >= 0.0:
        v = int(val[DIVE_NODE])
        val[DIVE_NODE] = -1.0
        return v, True
    if cnt[STACK_N] > 0:
        cnt[STACK_N] -= 1
        return int(stack[cnt[STACK_N], 0]), False
    _, v, hsize = _heap_pop(pool.heap_keys, pool.heap_ids, cnt[HSIZE])
    cnt[HSIZE] = hsize
    diving = joint and every > 0 and val[DEPTH_FIRST] == 0.0 and cnt[NODES] >= val[DIVE_AT]
    if diving:
        val[DIVE_AT] = cnt[NODES] + every
    return v, diving


@njit(cache=True)
def _stopped(pool, cnt, val, stack, up, down, eps, pt, floor, prune):
    """(status, Q^(b) certified from above, Q^(b) attained, the least frontier value not found) of a
    frontier search that has stopped: the open queue's top bound, values lost to failed solves, a partner
    cut short and the floor's pruning all enter the certified side."""
    status = cnt[STATUS_CODE]
    open_top = np.nan
    if status == BUDGET or status == STOPPED_ABOVE:
        top = _open_top(pool, cnt, val, stack)
        if top > -np.inf:
            open_top = top
    under = np.inf  # every frontier value not found is at least this
    upper, best = np.nan, np.nan
    if pt[0]:
        best = val[BEST]
        upper = best
        if open_top == open_top and open_top > upper:
            upper = open_top
        if val[LEAF_U] > upper + prune:  # a partner cut short: its pairs are bounded, not attained
            upper = val[LEAF_U]  # (the status stays this search's own: the partner's carries its inexactness)
        if val[LOST_U] > max(best, floor) + prune:   # (at most the floor: dominated, as core._finish has it)
            upper = max(upper, val[LOST_U])
            if status == EXACT:
                status = SOLVER_FAILURE
        if floor + prune > upper:  # nodes with bounds up to floor + prune were pruned unexplored
            upper = floor + prune
            if status == EXACT:
                status = BELOW_FLOOR
    else:
        if open_top == open_top:
            under = -open_top
        if _improves(val[LOST_LB], max(up[up.shape[0] - 1], down[0]), eps):
            under = min(under, val[LOST_LB])
            if status != BUDGET:
                status = SOLVER_FAILURE
    return status, upper, best, under


@njit(cache=True, inline="always")
def _solve_lazy(rep, slv, bd, opt, pool, cnt, v, up, down, kmin, eps, pt, val, diving, stack):
    """A lazy flip child v at the top: solved, and queued with its own bound (a dive goes on from it)."""
    ok, bv = _solve_into(v, rep, slv, pool, cnt)
    if ok < 0:
        cnt[FALLBACKS] += 1
        _lost(rep, bd, pool, v, v, up, down, kmin, eps, pt, val, opt.prune)
        _release(pool, cnt, v)
        return
    _attain_at(rep, up, down, kmin, pool.beta[v], bv, opt.margin, pt, val)
    r = _node_factor(rep, slv, bd, pool, v, True)
    keep, key = _assess(rep, bd, pool.signs[v], pool.fixed_cost[v], pool.beta[v], pool.minimum[v], 0.0,
                        bd.use_flip and r >= 0.0, r, up, down, kmin, eps, pt, val, opt.prune)
    if diving and keep:
        val[DIVE_NODE], val[DIVE_KEY] = v, key
    else:
        _queue(pool, cnt, stack, val, v, keep, key)


@njit(cache=True)
def _frontier(P, prow, cplus, cminus, C_forced, n, L_hat, L_max, root, seeds, seed_losses, solve_data, quad_ok, Hinv,
              opt, eps, pt, resume, state, kind):
    """The loop over the realisable sign patterns of the free points, for the frontier below L_max
    (least lower bound first) or, with a partner (``pt[0]``), for Q^(b) (largest bound first).

    ``root``: (minimiser, minimum, loss at the minimiser); ``seeds`` (rows) with their losses:
    classifiers whose patterns are found at once (beta_hat); ``pt``: (joint search?, the partner's
    kmin, F^>=, F^<=, their certified lower bounds, its K, alpha_n, the factor's code). Returns
    (kmin, up, down, up_lower, down_lower, status, nodes, solves, pruned, realisability solves,
    fallbacks, undecided, Q^(b) certified from above, Q^(b) attained, the state); Q^(b) NaN without a
    partner. ``kind``: ``solve_data``'s kind, as in :func:`cudbound.search.core._search`. With
    ``resume``, the search continues from ``state`` (the last output of a search of the same
    replicate, partner and set-up stopped by its node budget: the node pool and queue, the counts,
    the values and the frontier found), as core's loop does; the state's shape is checked here."""
    mf, p = P.shape
    norms = np.empty(mf)
    kmin = C_forced
    kmax = C_forced
    for k in range(mf):
        norms[k] = math.sqrt(np.dot(P[k], P[k]))
        kmin += min(cplus[k], cminus[k])
        kmax += max(cplus[k], cminus[k])
    ik = int(math.floor(kmin + 0.5))
    size = int(math.floor(kmax + 0.5)) - ik + 1
    rep = ReplicateRef(P, prow, norms, cplus, cminus, C_forced, n, 0.0, L_hat, L_max)
    _, H, Qinv_loss, beta_u, L_u, lp, sm, key, ws, hq = solve_data
    slv = NodeSolveRef(kind, H, Qinv_loss, beta_u, L_u, lp, sm, key, ws, HingeWorkRef(*hq))
    bd = _bounding(rep, slv, quad_ok, Hinv, slv.kind, opt.use_flip, opt.branching, False)
    opt = LoopOptions(opt.max_nodes, opt.time_limit, bd.use_flip, bd.branching, opt.floor, opt.stop_above, opt.lazy,
                      opt.record, opt.python_realise, opt.prune, opt.margin, opt.dual_bound, opt.dive_every,
                      opt.node_memory, 0)
    up = np.full(size, L_max)
    down = np.full(size, L_max)
    val = np.array([0.0, np.inf, -np.inf, 0.0, opt.floor, -1.0, 0.0, 0.0, 0.0])
    stack = np.zeros((2 * mf + 4, 2))
    cnt = np.zeros(_N_COUNTS, dtype=np.int64)
    t_start = 0.0
    if opt.time_limit > 0:
        with objmode(t_start="float64"):
            t_start = time.perf_counter()
    # a partner cut short (values found above its certified ones): completed patterns need both
    partner_cut = pt[0] and not (np.array_equal(pt[2], pt[4]) and np.array_equal(pt[3], pt[5]))
    if resume and (state[0].signs.shape[1] != mf or state[3].shape[0] != size):
        resume = False
    if resume:  # stopped by its node budget, continued: the queue, the node pool and what it found
        pool = _as_ref(state[0])
        for i in _KEPT:
            cnt[i] = state[1][i]
        if cnt[UNDECIDED_N] != 0:  # as in the search left uninterrupted (the lost values are in val)
            cnt[STATUS_CODE] = SOLVER_FAILURE
        for i in _RESUMED_VALUES:
            val[i] = state[2][i]
        cnt[STACK_N] = state[1][STACK_N]
        stack[:] = state[5]
        up[:] = state[3]
        down[:] = state[4]
    else:
        root_beta, root_m, root_bv = root
        pool = _as_ref(_new_pool(256, mf, p, slv.lp[5].shape[0], slv.lp[6].shape[0], p if bd.smooth_flip else 0, 0))
        cnt[NODES] = 1
        cnt[COUNT] = 1
        cnt[NEXT_UID] = 1
        pool.fixed_cost[0] = C_forced
        pool.minimum[0] = root_m
        pool.beta[0] = root_beta
        pool.lp_basis[0] = slv.lp[5]
        pool.lp_at_upper[0] = slv.lp[6]
        pool.witness[0, :] = 1.0
        _attain_at(rep, up, down, ik, root_beta, root_bv, opt.margin, pt, val)
        for q in range(seeds.shape[0]):
            _attain_at(rep, up, down, ik, seeds[q], seed_losses[q], opt.margin, pt, val)
        r = _node_factor(rep, slv, bd, pool, 0, True)
        keep, key = _assess(rep, bd, pool.signs[0], C_forced, root_beta, root_m, 0.0, bd.use_flip and r >= 0.0, r,
                            up, down, ik, eps, pt, val, opt.prune)
        _offer(pool, cnt, 0, keep, key)
    pops = 0
    max_slots = _max_slots(pool, opt.node_memory) if pt[0] else 0
    while cnt[HSIZE] > 0 or val[DIVE_NODE] >= 0.0 or cnt[STACK_N] > 0:
        if _settled(_open_top(pool, cnt, val, stack), up, down, eps, pt, val, opt.prune):
            break
        if pt[0] and val[BEST] > opt.stop_above:
            cnt[STATUS_CODE] = STOPPED_ABOVE
            break
        if _over_budget(opt, cnt[NODES], t_start, pops):
            cnt[STATUS_CODE] = BUDGET
            break
        v, diving = _next_node(pool, cnt, val, stack, pt[0], opt.dive_every)
        pops += 1
        if not pool.solved[v]:
            _solve_lazy(rep, slv, bd, opt, pool, cnt, v, up, down, ik, eps, pt, val, diving, stack)
            continue
        r = _node_factor(rep, slv, bd, pool, v, False)
        keep, _ = _assess(rep, bd, pool.signs[v], pool.fixed_cost[v], pool.beta[v], pool.minimum[v], 0.0,
                          bd.use_flip and r >= 0.0, r, up, down, ik, eps, pt, val, opt.prune)
        if not keep:
            cnt[PRUNED_N] += 1  # the frontier has fallen, or the best pair value risen, since it was queued
            _release(pool, cnt, v)
        elif _unrealisable(rep, slv, bd, opt, pool, cnt, v):
            _release(pool, cnt, v)
        elif pool.depth[v] == mf:
            _attain_pattern(rep, up, down, ik, pool.fixed_cost[v], pool.minimum[v], pt, val)
            if partner_cut:  # what the pattern may reach with the partner's values not found
                val[LEAF_U] = max(val[LEAF_U], _pair(pool.fixed_cost[v], pool.minimum[v], rep.L_hat, pt, True, True,
                                                     True) / rep.n)
            _release(pool, cnt, v)
        else:
            if max_slots > 0 and cnt[COUNT] + 2 >= max_slots:
                val[DEPTH_FIRST] = 1.0
            while not _room_for_two(pool, cnt):
                pool = _as_ref(_grow_pool(_as_arrays(pool), _grown(pool.depth.shape[0], max_slots, mf, val)))
            c, key = _expand(rep, slv, bd, opt, pool, cnt, v, r, up, down, ik, eps, pt, val, diving, stack)
            if c >= 0:
                val[DIVE_NODE], val[DIVE_KEY] = c, key
    status, upper, best, under = _stopped(pool, cnt, val, stack, up, down, eps, pt, opt.floor, opt.prune)
    val[DIVE_AT] -= cnt[NODES]  # a resumed search counts its nodes from 0
    return (ik, up, down, np.minimum(up, under), np.minimum(down, under), status, cnt[NODES], cnt[SOLVES],
            cnt[PRUNED_N], cnt[REALISABILITY], cnt[FALLBACKS], cnt[UNDECIDED_N] != 0, upper, best,
            (_as_arrays(pool), cnt, val, up.copy(), down.copy(), stack))


_NO_STATE: dict = {}


def _placeholder_state(p):
    """A placeholder of the type of a frontier search's state, for p unknowns (for a search that starts
    afresh): core's placeholder pool and counts, made once (the search never writes to it)."""
    st = _NO_STATE.get(p)
    if st is None:
        pool, _, _ = core_placeholder_state(p)
        st = _NO_STATE[p] = (pool, np.zeros(_N_COUNTS, dtype=np.int64), np.zeros(_N_VALUES), np.zeros(0),
                             np.zeros(0), np.zeros((0, 2)))
    return st


def _resume_from(options, kind, shape):
    """(resume?, the state's arrays) for a search with ``options.resume`` (a frontier's
    :class:`~cudbound.search.core.SearchState` of the same kind and shape, else none)."""
    st = options.resume
    if isinstance(st, SearchState) and st.matches(kind, shape):
        return True, st.arrays
    return False, _placeholder_state(shape[-1])


RESUME_MAX_BYTES = 64 << 20
"""A frontier search stopped by its node budget keeps its state up to this size (core's searches up to
``core.RESUME_MAX_BYTES``, 8 MiB, as their states travel to worker processes; the difference's run
in one process). The few joint searches that go past 65,536 nodes have states above 8 MiB
(logistic, ``benchmarks/difference.py``'s n = 100, B = 100, seed 0; one run on a shared core): restarted,
they took 24 of 40 s, resumed 18 of 34 s."""


def _kept_state(options, kind, shape, out):
    """The state a search stopped by its node budget leaves for a resume (None otherwise)."""
    status, nodes = out[5], out[6]
    if status == BUDGET and options.max_nodes and nodes >= options.max_nodes and kind != KIND_EXTERNAL:
        return SearchState.keep(kind, shape, out[14], RESUME_MAX_BYTES)
    return None


# ------------------------------------------------------------------ Python entry points
def _outcome(out, level, L_hat, screened=0, state=None):
    kmin, up, down, up_lo, down_lo, status, nodes, solves, pruned, real, fallbacks, undecided, upper, best, _ = out
    return FrontierOutcome(int(kmin), up, down, up_lo, down_lo, float(level), float(L_hat), STATUS[status],
                           nodes=int(nodes), solves=int(solves), pruned=int(pruned), realisability_checks=int(real),
                           screened=int(screened), fallbacks=int(fallbacks), undecided=bool(undecided),
                           value=float(upper), value_lower=float(best), state=state)


def _eps(alpha_n, tol):
    """The frontier's prune tolerance: an error eps in a loss moves Q^(b) by at most alpha_n eps."""
    return tol.prune / alpha_n if alpha_n > 0 else math.inf


_NO_PARTNER = (False, 0, np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), 0.0, 0.0, 0)


def _partner(target):
    """The loop's ``pt`` of a :class:`Target`."""
    f = target.partner
    if f is None:
        return _NO_PARTNER
    if target.form not in FORM_CODES:
        raise ValueError(f"`form` must be one of {sorted(FORM_CODES)}; got {target.form!r}.")
    up, down, up_lo, down_lo = (np.array(a, dtype=np.float64) for a in (f.up, f.down, f.up_lower, f.down_lower))
    # the certified lower frontier made monotone, as :func:`_pair_above` needs: F^>= rises with the count, so
    # F^>=(k) >= F^>=(j) >= up_lo(j) for j <= k, and the running maximum is a lower bound too (F^<= likewise
    # from above); unchanged when already monotone, as every search's frontier is
    up_lo = np.maximum.accumulate(up_lo)
    down_lo = np.maximum.accumulate(down_lo[::-1])[::-1].copy()
    return (True, int(f.kmin), up, down, up_lo, down_lo, float(f.L_hat), float(target.alpha_n), FORM_CODES[target.form])


def _frontier_for_kind(kind):
    """:func:`_frontier` compiled for one node solver (as ``core.SEARCH_FOR_KIND``)."""
    @njit(cache=True)
    def frontier(P, prow, cplus, cminus, C_forced, n, L_hat, L_max, root, seeds, seed_losses, solve_data, quad_ok,
                 Hinv, opt, eps, pt, resume, state):
        return _frontier(P, prow, cplus, cminus, C_forced, n, L_hat, L_max, root, seeds, seed_losses, solve_data,
                         quad_ok, Hinv, opt, eps, pt, resume, state, kind)
    return frontier


FRONTIER_FOR_KIND = {kind: _frontier_for_kind(kind) for kind in KINDS}
"""The frontier loop of each kind of node solver (what :func:`run_frontier` calls)."""


def run_frontier(problem, root, target, *, seeds=(), quad=None, inner=None, context=None, options=None,
                 python_realise=False):
    """The frontier (or, with a partner, the joint search) of a prepared replicate below ``problem.L_max``.

    ``problem``: a :class:`~cudbound.search.problem.ReplicateProblem` set up at the frontier's
    level (its ``alpha_n`` the level's, not the bound's); ``target``: a :class:`Target`;
    ``seeds``: (beta, loss at beta) pairs whose patterns are found at once; ``root``, ``quad``,
    ``inner``, ``context``, ``options`` (its budgets) and ``python_realise`` as in
    :func:`cudbound.search.core.run_search` (the tolerances are the defaults). Returns a
    :class:`FrontierOutcome` (``seconds`` the caller's to fill)."""
    options = options if options is not None else SearchOptions()
    tol = Tolerances()
    kind, P, slv, Hinv = solver_inputs(problem, quad, inner, context)
    p = P.shape[1]
    shape = ("frontier", P.shape[0], int(slv.lp[3]), bool(options.flip_cost), p)
    resume, state = _resume_from(options, kind, shape) if kind != KIND_EXTERNAL else (False, _placeholder_state(p))
    seed_rows = np.array([np.asarray(b, dtype=np.float64) for b, _ in seeds], dtype=np.float64).reshape(-1, p)
    seed_losses = np.array([float(v) for _, v in seeds], dtype=np.float64)
    start = (np.ascontiguousarray(root.beta, dtype=np.float64), float(root.value), float(root.beta_value))
    args = (P, np.ascontiguousarray(problem.rows, dtype=np.int64),
            np.ascontiguousarray(problem.cost_plus, dtype=np.float64),
            np.ascontiguousarray(problem.cost_minus, dtype=np.float64), float(problem.C_forced), float(problem.n),
            float(problem.L_hat), float(problem.L_max), start, seed_rows, seed_losses, slv, quad is not None, Hinv,
            _loop_options(options, tol, kind != KIND_QP, False, python_realise), _eps(target.alpha_n, tol),
            _partner(target), resume, state)
    frontier = FRONTIER_FOR_KIND[kind]
    with compile_once(frontier, args):
        out = frontier(*args)
    return _outcome(out, problem.L_max, problem.L_hat, problem.n_screened, _kept_state(options, kind, shape, out))


@njit(cache=True)
def _replicate_frontier(Zu, group, y, counts, H, g, c, beta_hat, alpha_level, screen, key, opt, eps, pt, resume,
                        state):
    """Set-up (``replicate_setup._replicate_setup`` at the level's alpha) and frontier (or joint
    search) of one replicate of a positive definite quadratic loss, all in compiled code.

    Returns (ok, the loop's output, L_hat, L_max, n_screened); when H is not positive definite
    (ok False) the loop runs on no point and its output is to be ignored."""
    ok, P, cplus, cminus, C_forced, n_screened, Hinv, beta_u, L_u, L_hat, uidx = _replicate_setup(
        Zu, group, y, counts, H, g, c, beta_hat, alpha_level, screen)
    p = H.shape[0]
    lp = (np.zeros((0, p)), np.zeros(0), np.zeros(0), 0, 0, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.bool_), 0)
    sm = (0, np.zeros((0, p)), np.zeros(0), np.zeros(0), np.zeros((p, p)), 0)
    L_max = L_hat + 1.0 / alpha_level if alpha_level > 0.0 else np.inf
    rep = np.full(Zu.shape[0], -1, dtype=np.int64)  # a design row of each distinct row
    for i in range(group.shape[0]):
        if rep[group[i]] < 0:
            rep[group[i]] = i
    prow = np.empty(P.shape[0], dtype=np.int64)
    for f in range(P.shape[0]):
        prow[f] = rep[uidx[f]]
    slv = NodeSolve(KIND_QP, H, 0.5 * Hinv, beta_u, L_u, lp, sm, key, _workspace(p), _hinge_work(np.zeros((0, p)), 0))
    seeds = np.empty((1, p))
    seeds[0] = beta_hat
    out = _frontier(P, prow, cplus, cminus, C_forced, float(y.shape[0]), L_hat, L_max, (beta_u, L_u, L_u), seeds,
                    np.full(1, L_hat), slv, True, Hinv, opt, eps, pt, resume, state, KIND_QP)
    return ok, out, L_hat, L_max, n_screened


def compiled_frontier(Zu, group, y, counts, H, g, c, beta_hat, alpha_level, target, options, context=None):
    """:func:`_replicate_frontier` with a SearchOptions, a :class:`Target` and the default
    Tolerances; None when H is not positive definite.

    ``alpha_level``: the alpha whose neighbourhood L_hat + 1/alpha is the frontier's level;
    ``context`` as in :func:`cudbound.search.core.compiled_replicate`."""
    tol = Tolerances()
    opt = _loop_options(options, tol, False, False, False)
    shape = ("frontier-replicate", bool(options.screen), bool(options.flip_cost), H.shape[0])
    resume, state = _resume_from(options, KIND_QP, shape)
    args = (Zu, group, y, np.asarray(counts, dtype=np.float64), np.ascontiguousarray(H, dtype=np.float64),
            np.ascontiguousarray(g, dtype=np.float64), float(c), np.ascontiguousarray(beta_hat, dtype=np.float64),
            float(alpha_level), bool(options.screen), int(context.key if context is not None else 0), opt,
            _eps(target.alpha_n, tol), _partner(target), resume, state)
    with compile_once(_replicate_frontier, args):
        ok, out, L_hat, L_max, screened = _replicate_frontier(*args)
    if not ok:
        return None
    return _outcome(out, L_max, L_hat, screened, _kept_state(options, KIND_QP, shape, out))
