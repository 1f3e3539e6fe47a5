"""The frontier of one classifier's replicate: for every count k, the least loss that reaches C >= k and C <= k.

The CUD bound of a difference of two classifiers
(method.md, "The difference of two classifiers") needs, of each classifier X and count vector, the frontier

    F^>=(k) = min{m(s) : s realisable, C(s) >= k},    F^<=(k) = min{m(s) : s realisable, C(s) <= k},

below a level L_max (values at or above it are recorded as L_max; with alpha_n = 0 the level
is infinite and an infinite value means "not reached"). This is the branch and bound of
:mod:`cudbound.search.core` (the same nodes, node pool, node solvers, realisability decisions,
lazy children, flip costs and branching rules, imported from there) with the maximum replaced by
the frontier and its prune rule by the frontier's:

- a node's lower bounds (:func:`_useful`): every completion s flips a set J of the free points
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
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit, objmode

from .._kernel_compile import compile_once
from .bounds import _count_at, _flip_d, _point_flip
from .branching import _branch_point
from .codes import BUDGET, KIND_QP, SOLVER_FAILURE, STATIC, STATUS
from .core import (COUNT, FALLBACKS, HSIZE, NEXT_UID, NODES, PRUNED_N, REALISABILITY, SOLVES, STATUS_CODE, UNDECIDED_N,
                   LoopOptions, ReplicateRef, _bounding, _loop_options, _node_factor, _release, _room_for_two,
                   _take_slot, _unrealisable, solver_inputs)
from .heap import _heap_pop, _heap_push
from .hinge_qp_node_solver import HingeWorkRef
from .node_pool import _as_arrays, _as_ref, _grow_pool, _inherit, _new_pool
from .node_qp import _workspace
from .node_solve import NodeSolve, NodeSolveRef, _solve
from .options import SearchOptions, Tolerances
from .replicate_setup import _replicate_setup
from .smooth_node_solver import _smooth_factor

__all__ = ["FrontierOutcome", "run_frontier", "compiled_frontier", "count_range"]

_N_COUNTS = 11


@dataclass
class FrontierOutcome:
    """One classifier's frontier for one count vector.

    ``up[i]`` and ``down[i]`` hold F^>=(k) and F^<=(k) of the patterns found, k = ``kmin`` + i
    (each at most ``level``; an upper bound of the exact value), ``up_lower`` and ``down_lower``
    certified lower bounds of the exact values (equal to ``up`` and ``down`` when ``status`` is
    "exact"). ``L_hat``: the resample's loss at beta_hat (K); ``level``: the frontier's level
    L_max."""

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

    @classmethod
    def trivial(cls, counts, y, L_hat, status, seconds=0.0):
        """Nothing found, and the certified lower frontier -inf at every count of the range
        :func:`count_range` (the bound that a replicate keeps when its search cannot run)."""
        kmin, kmax = count_range(counts, y)
        size = kmax - kmin + 1
        return cls(kmin, np.full(size, np.inf), np.full(size, np.inf), np.full(size, -np.inf),
                   np.full(size, -np.inf), math.inf, float(L_hat), status, seconds=seconds)


def count_range(counts, y):
    """The least and largest C = sum_i (nu_i - 1) 1{s_i != y_i} over all sign patterns:
    -#{nu_i = 0} and sum_i (nu_i - 1)^+ (``y`` only fixes the length)."""
    c = np.asarray(counts, dtype=float)
    assert c.shape == np.shape(y)
    return -int(np.sum(c == 0)), int(np.sum(np.maximum(c - 1.0, 0.0)))


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
def _attain_at(rep, up, down, kmin, x, v, margin):
    """Classifier x with loss v realises its own pattern when its signs are clear."""
    if not v < rep.L_max:
        return
    clear, C = _count_at(rep.P, rep.norms, rep.cplus, rep.cminus, rep.C_forced, x, margin)
    if clear:
        _attain(up, down, _index(C, kmin), v)


@njit(cache=True)
def _useful(rep, bd, signs, Cfix, beta, m, floor, use_flip, r, up, down, kmin, eps):
    """Whether a node (minimiser ``beta``, minimum ``m``, completions at least ``m + floor``, the
    fixed part ``Cfix``) may lower the frontier by more than eps at some count (module docstring)."""
    base = m + floor
    if not base < rep.L_max:
        return False
    P = rep.P
    mf, p = P.shape
    C0 = Cfix
    nr = 0
    for k in range(mf):
        if signs[k] != 0:
            continue
        t = 0.0
        for i in range(p):
            t += P[k, i] * beta[i]
        if t >= 0.0:
            C0 += rep.cplus[k]
            diff = rep.cminus[k] - rep.cplus[k]
        else:
            C0 += rep.cminus[k]
            diff = rep.cplus[k] - rep.cminus[k]
        if diff == 0.0:
            continue
        dk = _point_flip(t, k, bd.hn, bd.tu, m, bd.L_u, r) if use_flip else 0.0
        if m + max(dk, floor) < rep.L_max:  # a flip that reaches the level matters nowhere
            bd.tmp_d[nr] = dk
            bd.tmp_diff[nr] = diff
            nr += 1
    i0 = _index(C0, kmin)
    if _improves(base, up[i0], eps) or _improves(base, down[i0], eps):
        return True
    order = np.argsort(bd.tmp_d[:nr])
    hi = i0
    lo = i0
    for idx in range(nr):
        j = order[idx]
        b = m + max(bd.tmp_d[j], floor)
        d = int(math.floor(bd.tmp_diff[j] + 0.5))
        # the counts reached with this flip cost form one block; F^>= is largest at its top
        # and F^<= at its bottom
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
def _offer(pool, cnt, c, useful, lb):
    """Node c with lower bound lb goes on the queue (least lb first), or is pruned and its slot freed."""
    if useful:
        cnt[HSIZE] = _heap_push(pool.heap_keys, pool.heap_ids, cnt[HSIZE], -lb, c)
    else:
        cnt[PRUNED_N] += 1
        _release(pool, cnt, c)


@njit(cache=True, inline="always")
def _lost(rep, bd, pool, c, unsolved, up, down, kmin, eps):
    """Node c nobody solves: its bound from its parent (the parent's minimiser, minimum and the
    node's floor) stands in for its subtree when it may still matter."""
    lb = pool.minimum[c] + pool.flip_gap[c]
    if lb < unsolved[0] and _useful(rep, bd, pool.signs[c], pool.fixed_cost[c], pool.beta[c], pool.minimum[c],
                                    pool.flip_gap[c], False, 0.0, up, down, kmin, eps):
        unsolved[0] = lb


@njit(cache=True, inline="always")
def _expand(rep, slv, bd, opt, pool, cnt, v, r, up, down, kmin, eps, unsolved):
    """Branch node v on one free point: two children, each inheriting v's minimiser when it
    meets the child's constraint, else solved now or (lazy) queued with v's minimum plus the
    flip cost, as in ``core._expand``; each kept when :func:`_useful`."""
    P = rep.P
    j = _branch_point(P, bd.hn, rep.cplus, rep.cminus, pool.signs[v], pool.beta[v], pool.minimum[v], bd.L_branch,
                      bd.branching if r >= 0.0 else STATIC, r)
    side = np.dot(P[j], pool.beta[v])
    for s in (1, -1):
        c = _take_slot(pool, cnt)
        cnt[NODES] += 1
        _inherit(pool, c, v, j, s, rep.cplus[j] if s > 0 else rep.cminus[j], slv.kind, bd.smooth_flip)
        pool.uid[c] = cnt[NEXT_UID]
        cnt[NEXT_UID] += 1
        solved_by_parent = True
        if s * side < 0.0:
            if opt.lazy:
                pool.solved[c] = False
                if bd.quad:
                    pool.flip_gap[c] = side * side / bd.hn[j]
                elif bd.smooth_flip and r >= 0.0:
                    pool.flip_gap[c] = _flip_d(side, bd.hn[j], r)
            else:
                solved_by_parent = False
                ok, m_new, bv = _solve(c, rep, slv, pool)
                if ok < 0:
                    cnt[FALLBACKS] += 1
                    _lost(rep, bd, pool, c, unsolved, up, down, kmin, eps)
                    _release(pool, cnt, c)
                    continue
                cnt[SOLVES] += 1
                cnt[FALLBACKS] += ok
                pool.minimum[c] = m_new
                if bd.smooth_flip:
                    pool.flip_r[c] = _smooth_factor(slv.sm, pool.beta[c], pool.chol[c], bd.zm)
                _attain_at(rep, up, down, kmin, pool.beta[c], bv, opt.margin)
        # ``hn`` belongs to the parent's minimiser: a child solved here gets the plain bound
        flip_c = bd.use_flip and r >= 0.0 and (solved_by_parent or not bd.smooth_flip)
        useful = _useful(rep, bd, pool.signs[c], pool.fixed_cost[c], pool.beta[c], pool.minimum[c], pool.flip_gap[c],
                         flip_c, r, up, down, kmin, eps)
        _offer(pool, cnt, c, useful, pool.minimum[c] + pool.flip_gap[c])
    _release(pool, cnt, v)


@njit(cache=True)
def _over_budget(opt, nodes, t_start, pops):
    if opt.max_nodes > 0 and nodes >= opt.max_nodes:
        return True
    if opt.time_limit > 0 and pops % 64 == 0:
        with objmode(now="float64"):
            now = time.perf_counter()
        if now - t_start > opt.time_limit:
            return True
    return False


@njit(cache=True)
def _frontier(P, prow, cplus, cminus, C_forced, n, L_hat, L_max, root, seeds, seed_losses, solve_data, quad_ok, Hinv,
              opt, eps):
    """The loop: least lower bound first over the realisable sign patterns of the free points,
    for the frontier below L_max.

    ``root``: (minimiser, minimum, loss at the minimiser); ``seeds`` (rows) with their losses:
    classifiers whose patterns are found at once (beta_hat). Returns (kmin, up, down, up_lower,
    down_lower, status, nodes, solves, pruned, realisability solves, fallbacks, undecided)."""
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
    kind, H, Qinv_loss, beta_u, L_u, lp, sm, key, ws, hq = solve_data
    slv = NodeSolveRef(kind, H, Qinv_loss, beta_u, L_u, lp, sm, key, ws, HingeWorkRef(*hq))
    bd = _bounding(rep, slv, quad_ok, Hinv, slv.kind, opt.use_flip, opt.branching)
    opt = LoopOptions(opt.max_nodes, opt.time_limit, bd.use_flip, bd.branching, opt.floor, opt.stop_above, opt.lazy,
                      opt.record, opt.python_realise, opt.prune, opt.margin, opt.dual_bound)
    up = np.full(size, L_max)
    down = np.full(size, L_max)
    unsolved = np.full(1, np.inf)
    cnt = np.zeros(_N_COUNTS, dtype=np.int64)
    t_start = 0.0
    if opt.time_limit > 0:
        with objmode(t_start="float64"):
            t_start = time.perf_counter()
    root_beta, root_m, root_bv = root
    pool = _as_ref(_new_pool(256, mf, p, slv.lp[5].shape[0], slv.lp[6].shape[0], p if bd.smooth_flip else 0))
    cnt[NODES] = 1
    cnt[COUNT] = 1
    cnt[NEXT_UID] = 1
    pool.fixed_cost[0] = C_forced
    pool.minimum[0] = root_m
    pool.beta[0] = root_beta
    pool.lp_basis[0] = slv.lp[5]
    pool.lp_at_upper[0] = slv.lp[6]
    pool.witness[0, :] = 1.0
    _attain_at(rep, up, down, ik, root_beta, root_bv, opt.margin)
    for q in range(seeds.shape[0]):
        _attain_at(rep, up, down, ik, seeds[q], seed_losses[q], opt.margin)
    r = _node_factor(rep, slv, bd, pool, 0, True)
    _offer(pool, cnt, 0, _useful(rep, bd, pool.signs[0], C_forced, root_beta, root_m, 0.0, bd.use_flip and r >= 0.0,
                                 r, up, down, ik, eps), root_m)
    pops = 0
    while cnt[HSIZE] > 0:
        if not _improves(-pool.heap_keys[0], max(up[size - 1], down[0]), eps):
            break  # every open node is pruned: the frontier is exact
        if _over_budget(opt, cnt[NODES], t_start, pops):
            cnt[STATUS_CODE] = BUDGET
            break
        key, v, hsize = _heap_pop(pool.heap_keys, pool.heap_ids, cnt[HSIZE])
        cnt[HSIZE] = hsize
        pops += 1
        if not pool.solved[v]:  # a lazy flip child: solve it, and queue it with its own bound
            ok, m_new, bv = _solve(v, rep, slv, pool)
            if ok < 0:
                cnt[FALLBACKS] += 1
                _lost(rep, bd, pool, v, unsolved, up, down, ik, eps)
                _release(pool, cnt, v)
                continue
            cnt[SOLVES] += 1
            cnt[FALLBACKS] += ok
            pool.minimum[v] = m_new
            pool.flip_gap[v] = 0.0
            pool.solved[v] = True
            _attain_at(rep, up, down, ik, pool.beta[v], bv, opt.margin)
            r = _node_factor(rep, slv, bd, pool, v, True)
            _offer(pool, cnt, v, _useful(rep, bd, pool.signs[v], pool.fixed_cost[v], pool.beta[v], m_new, 0.0,
                                         bd.use_flip and r >= 0.0, r, up, down, ik, eps), m_new)
            continue
        r = _node_factor(rep, slv, bd, pool, v, False)
        if not _useful(rep, bd, pool.signs[v], pool.fixed_cost[v], pool.beta[v], pool.minimum[v], 0.0,
                       bd.use_flip and r >= 0.0, r, up, down, ik, eps):
            cnt[PRUNED_N] += 1  # the frontier has fallen since the node was queued
            _release(pool, cnt, v)
        elif _unrealisable(rep, slv, bd, opt, pool, cnt, v):
            _release(pool, cnt, v)
        elif pool.depth[v] == mf:
            _attain(up, down, _index(pool.fixed_cost[v], ik), pool.minimum[v])
            _release(pool, cnt, v)
        else:
            while not _room_for_two(pool, cnt):
                pool = _as_ref(_grow_pool(_as_arrays(pool), 2 * pool.depth.shape[0] + 2))
            _expand(rep, slv, bd, opt, pool, cnt, v, r, up, down, ik, eps, unsolved)
    status = cnt[STATUS_CODE]
    under = np.inf  # every value not found is at least this
    if status == BUDGET and cnt[HSIZE] > 0:
        under = -pool.heap_keys[0]
    if _improves(unsolved[0], max(up[size - 1], down[0]), eps):
        under = min(under, unsolved[0])
        if status != BUDGET:
            status = SOLVER_FAILURE
    return (ik, up, down, np.minimum(up, under), np.minimum(down, under), status, cnt[NODES], cnt[SOLVES],
            cnt[PRUNED_N], cnt[REALISABILITY], cnt[FALLBACKS], cnt[UNDECIDED_N] != 0)


# ------------------------------------------------------------------ Python entry points
def _outcome(out, level, L_hat, screened=0):
    kmin, up, down, up_lo, down_lo, status, nodes, solves, pruned, real, fallbacks, undecided = out
    return FrontierOutcome(int(kmin), up, down, up_lo, down_lo, float(level), float(L_hat), STATUS[status],
                           nodes=int(nodes), solves=int(solves), pruned=int(pruned), realisability_checks=int(real),
                           screened=int(screened), fallbacks=int(fallbacks), undecided=bool(undecided))


def _eps(alpha_n, tol):
    """The frontier's prune tolerance: an error eps in a loss moves Q^(b) by at most alpha_n eps."""
    return tol.prune / alpha_n if alpha_n > 0 else math.inf


def run_frontier(problem, root, alpha_n, *, seeds=(), quad=None, inner=None, context=None, options=None, tol=None,
                 python_realise=False):
    """The frontier of a prepared replicate below ``problem.L_max``.

    ``problem``: a :class:`~cudbound.search.problem.ReplicateProblem` set up at the frontier's
    level (its ``alpha_n`` the level's, not the bound's); ``alpha_n``: the bound's, which sets the
    prune tolerance; ``seeds``: (beta, loss at beta) pairs whose patterns are found at once;
    ``root``, ``quad``, ``inner``, ``context``, ``options`` (its budgets), ``tol`` and
    ``python_realise`` as in :func:`cudbound.search.core.run_search`. Returns a
    :class:`FrontierOutcome` (``seconds`` the caller's to fill)."""
    options = options if options is not None else SearchOptions()
    tol = tol if tol is not None else Tolerances()
    kind, P, slv, Hinv = solver_inputs(problem, quad, inner, context)
    p = P.shape[1]
    seed_rows = np.array([np.asarray(b, dtype=np.float64) for b, _ in seeds], dtype=np.float64).reshape(-1, p)
    seed_losses = np.array([float(v) for _, v in seeds], dtype=np.float64)
    start = (np.ascontiguousarray(root.beta, dtype=np.float64), float(root.value), float(root.beta_value))
    args = (P, np.ascontiguousarray(problem.rows, dtype=np.int64),
            np.ascontiguousarray(problem.cost_plus, dtype=np.float64),
            np.ascontiguousarray(problem.cost_minus, dtype=np.float64), float(problem.C_forced), float(problem.n),
            float(problem.L_hat), float(problem.L_max), start, seed_rows, seed_losses, slv, quad is not None, Hinv,
            _loop_options(options, tol, kind != KIND_QP, False, python_realise), _eps(alpha_n, tol))
    with compile_once(_frontier, args):
        out = _frontier(*args)
    return _outcome(out, problem.L_max, problem.L_hat, problem.n_screened)


@njit(cache=True)
def _replicate_frontier(Zu, group, y, counts, H, g, c, beta_hat, alpha_level, screen, key, opt, eps):
    """Set-up (``replicate_setup._replicate_setup`` at the level's alpha) and frontier of one
    replicate of a positive definite quadratic loss, all in compiled code.

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
    slv = NodeSolve(KIND_QP, H, 0.5 * Hinv, beta_u, L_u, lp, sm, key, _workspace(p))
    seeds = np.empty((1, p))
    seeds[0] = beta_hat
    out = _frontier(P, prow, cplus, cminus, C_forced, float(y.shape[0]), L_hat, L_max, (beta_u, L_u, L_u), seeds,
                    np.full(1, L_hat), slv, True, Hinv, opt, eps)
    return ok, out, L_hat, L_max, n_screened


def compiled_frontier(Zu, group, y, counts, H, g, c, beta_hat, alpha_level, alpha_n, options, context=None):
    """:func:`_replicate_frontier` with a SearchOptions and the default Tolerances; None when H is not
    positive definite.

    ``alpha_level``: the alpha whose neighbourhood L_hat + 1/alpha is the frontier's level;
    ``alpha_n``: the bound's (the prune tolerance); ``context`` as in
    :func:`cudbound.search.core.compiled_replicate`."""
    tol = Tolerances()
    opt = _loop_options(options, tol, False, False, False)
    args = (Zu, group, y, np.asarray(counts, dtype=np.float64), np.ascontiguousarray(H, dtype=np.float64),
            np.ascontiguousarray(g, dtype=np.float64), float(c), np.ascontiguousarray(beta_hat, dtype=np.float64),
            float(alpha_level), bool(options.screen), int(context.key if context is not None else 0), opt,
            _eps(alpha_n, tol))
    with compile_once(_replicate_frontier, args):
        ok, out, L_hat, L_max, screened = _replicate_frontier(*args)
    if not ok:
        return None
    return _outcome(out, L_max, L_hat, screened)
