"""The one branch and bound for the replicate supremum Q^(b) (Laber & Murphy 2008, sec. 4), compiled.

Every search for Q^(b) runs this loop (numba), whatever the loss; the frontier of the
difference of two classifiers (:mod:`cudbound.search.frontier`) runs its parts under its own
prune rule. It maximises

    |C(s)| / n * g(alpha_n (L_hat - inf_{M(s)} L))

over the realisable sign patterns s of the free points. A node fixes the signs of some free
points; its bound is ``bounds._bound`` (the paper's bound, tightened by the per-point flip
cost when the loss is a positive definite quadratic, or a built-in logistic or exponential
loss: ``bounds._flip_d``, from the Hessian at the node's minimiser, whose Cholesky factor
the node pool keeps). The open node with the largest bound is
expanded first (ties: first pushed, first popped), so the largest bound on the queue is a
certified upper bound at any moment. One rule prunes (:func:`_prunes`): a node whose bound
is not positive (g <= 0) or at most the best value attained (or ``floor``), to
``Tolerances.prune``.

The loop is in parts: :func:`_open_root`, then, for each node popped from the queue
(:mod:`cudbound.search.heap`), :func:`_stop_reason`, :func:`_solve_lazy_child`,
:func:`_unrealisable`, a leaf, or :func:`_expand`; :func:`_finish` turns what is left into the
certified value. A node is a slot of the node pool (:mod:`cudbound.search.node_pool`); its
solve is :func:`cudbound.search.node_solve._solve`, by the solver its kind names; what runs in
Python is reached through :mod:`cudbound.search.context`. The codes (kinds, statuses, node
states) are named in :mod:`cudbound.search.codes`.

Node solvers are pluggable (``kind``):

- ``KIND_QP`` (0): a positive definite quadratic loss; the node QP by the dual active-set
  method of Goldfarb & Idnani, allocation-free, warm-started from the parent's active set
  (``node_qp._gi_ws``), solved eagerly when a child is made;
- ``KIND_LP`` (1): the plain hinge loss; the node LP by the certified simplex of
  ``lp_node_solver._solve_node``, warm-started from the parent's basis;
- ``KIND_EXTERNAL`` (2): any :class:`~cudbound.search.node_solvers.NodeSolver` object
  (the SQP solver of smooth losses, cvxpy, a user's solver), called from the loop through
  ``numba.objmode`` (about 5 us a call); its warm starts live on the Python side, by handle;
- ``KIND_SMOOTH`` (3): the built-in logistic and exponential losses (and their ridge
  versions) on a resample that no direction separates: the compiled SQP iteration of
  ``smooth_node_solver._sqp_compiled``, warm-started from the parent's minimiser; a node it
  does not certify goes to the full :class:`~cudbound.search.smooth_node_solver.SmoothNodeSolver`
  (polishing, then cvxpy) on the Python side.
- ``KIND_HINGE_QP`` (4): the hinge loss plus a quadratic penalty (``hinge_ridge``): the compiled
  primal active-set method of ``hinge_qp_node_solver._hinge_qp_node``, allocation-free (its
  scratch made once per search), warm-started from the parent's minimiser and working sets
  (kept in the node pool's ``act``: a point k of the resample as k, a fixed free point j as
  m + j); a node it does not certify goes to cvxpy.

With ``lazy`` a child whose new constraint the parent's minimiser violates (the "flip
child") is not solved when made: it enters the queue with its parent's minimum plus the flip
cost (first-order optimality of the parent's minimiser) and is solved only when it leads the
queue; it then goes back in with its exact bound. The other child inherits the parent's
minimiser (it meets the child's constraint, so it is the child's minimiser).

Realisability of a node's open region is decided when it is expanded: the parent's witness
if it meets the new constraint, else the warm-started feasibility QP
min |b|^2 s.t. phi_k'b >= 0 (s_k = +1), phi_k'b <= -1 (s_k = -1) (cones scale, method.md),
else (numerical failure) an LP on the Python side; a node no method decides is kept
(an unrealisable pattern can only raise the value) and flagged ``undecided``.

A node whose compiled solve fails is handed to the fallback solver on the Python side
(cvxpy); a node nobody solves is dropped with its bound, computed from the parent's minimum,
which covers its subtree: the replicate's value is then max(best, that bound), a certified
upper bound, with status "solver_failure" (unless the best value or the floor dominates the
bound: :func:`_finish`). Each hand-off counts as a fallback.
"""
from __future__ import annotations

import dataclasses
import math
import time
from collections import namedtuple

import numpy as np
from numba import njit, objmode

from .._kernel_compile import compile_once
from ..optim.linear_solve import cholesky_solve, row_dot
from .bounds import _bound, _flip_d, _objective, _value_at
from .branching import _branch_point
from .codes import (BELOW_FLOOR, BRANCHING, BUDGET, CRITICAL, EXACT, EXPANDED, FAILED, KIND_EXTERNAL, KIND_HINGE_QP,
                    KIND_LP, KIND_QP, KIND_SMOOTH, KINDS, LEAF, NOT_REALISABLE, OPEN, PRUNED, QP_FAILED, QP_INFEASIBLE,
                    REALISABLE, SOLVER_FAILURE, STATES, STATIC, STATUS, STOPPED_ABOVE, UNREALISABLE)
from .context import SearchContext, _realise_call, _record
from .heap import _heap_pop, _heap_push
from .hinge_qp_node_solver import HingeQPNodeSolver, HingeWorkRef, _hinge_work
from .lp_node_solver import HingeLPNodeSolver
from .node_pool import _as_arrays, _as_ref, _grow_pool, _inherit, _new_pool, trimmed, without_derivatives
from .node_qp import _gi_ws, _meets, _workspace
from .node_solve import NodeSolve, NodeSolveRef, _solve
from .options import SearchOptions, SearchOutcome, Tolerances
from .probes import _probe
from .records import compiled_record
from .replicate_setup import _replicate_setup
from .smooth_node_solver import _factor_hn, _smooth_factor, _smooth_factor_of, factor_workspace

__all__ = ["KIND_QP", "KIND_LP", "KIND_EXTERNAL", "KIND_SMOOTH", "KIND_HINGE_QP", "STATES", "SearchState", "run_search",
           "compiled_replicate", "SearchContext", "solver_inputs"]

# ------------------------------------------------------------------ what the loop is given
Replicate = namedtuple("Replicate", [
    "P",          # (mf, p): the free points' design rows (one per distinct row)
    "prow",       # a design row of the problem for each free point (for the Python side)
    "norms",      # |phi_k|
    "cplus",      # the cost change of each free point on the + side ...
    "cminus",     # ... and on the - side
    "C_forced",   # C of the forced (screened, singleton) points
    "n",          # the sample size
    "alpha",      # alpha_n
    "L_hat",      # the training loss
    "L_max",      # L_hat + 1 / alpha_n: g > 0 only below it
])
"""The replicate the loop searches: maximise |C(s)| / n * g(alpha_n (L_hat - inf_{M(s)} L))."""
ReplicateRef = compiled_record(Replicate, "The replicate as the compiled loop holds it (by reference).")

LoopOptions = namedtuple("LoopOptions", [
    "max_nodes", "time_limit",     # budgets (0: none)
    "use_flip",                    # flip-cost bounds where the loss allows them
    "branching",                   # codes.BRANCHING
    "floor", "stop_above",         # SearchOptions.floor (-1: none), .stop_above (inf: none)
    "lazy",                        # flip children solved only when they lead the queue
    "record",                      # record the search tree on the Python side
    "python_realise",              # decide realisability on the Python side
    "prune",                       # Tolerances.prune
    "margin",                      # Tolerances.margin
    "dual_bound",                  # KIND_LP: a lazy child's simplex stops at the dual bound that prunes it
    "dive_every",                  # SearchOptions.dive_every (a joint search's; 0: no dives)
    "node_memory",                 # SearchOptions.node_memory in bytes (a joint search's; 0: no limit)
    "bound_chain",                 # SearchOptions.bound_chain (the nodes' chains of bounds, _expand; 0: none)
])
"""The options of one search, as the compiled loop takes them (built from SearchOptions)."""

Bounding = namedtuple("Bounding", [
    "hn",          # phi_k'H^-1 phi_k (the flip costs' metric; a smooth loss: at the node expanded)
    "tu",          # phi_k'beta_u (a quadratic loss), else empty
    "L_u",         # the unconstrained minimum (a quadratic loss)
    "quad",        # a positive definite quadratic loss: flip costs from H
    "use_flip",    # flip-cost bounds
    "smooth_flip", # ... from the Hessian at each node's minimiser (logistic, exponential)
    "branching",   # the branching rule in use
    "L_branch",    # _branch_point's "can still flip" threshold
    "tmp_d", "tmp_diff", "zm",  # scratch (zm: p entries, or smooth_node_solver.factor_workspace's with smooth flip costs)
    "eye", "zero",  # the feasibility QP's metric and centre
    "W",           # P H^-1 (KIND_QP with flip costs: the cone flip cost, bounds._cone_flip); KIND_SMOOTH with
                   # flip costs: H^-1 phi_a for the active rows a of the node expanded (_node_factor); else empty
    "cone", "cone_l", "cone_v", "cone_nu",  # its scratch
    "tmp_k", "pick",  # branching "critical": the sorted points, and the point a bound picks (bounds._bound)
    "order",       # scratch: the order of the flip costs (bounds._order_into)
])
"""What bounds and branching need, set up once per search (:func:`_bounding`)."""
BoundingRef = compiled_record(Bounding, "The bounding data as the compiled loop holds it (by reference).")

# counts of a search (the int64 array ``cnt``) and its values (the float64 array ``val``)
NODES, SOLVES, PRUNED_N, REALISABILITY, FALLBACKS, STATUS_CODE, UNDECIDED_N, NFREE, HSIZE, COUNT, NEXT_UID = range(11)
BEST, UNSOLVED = 0, 1
_N_COUNTS, _N_VALUES = 11, 2
_KEPT = (NFREE, HSIZE, COUNT, NEXT_UID, UNDECIDED_N)  # the counts a resumed search continues from


# ------------------------------------------------------------------ the loop in parts
@njit(cache=True)
def _bounding(rep, slv, quad_ok, Hinv, kind, use_flip, branching, cone):
    """Flip-cost and branching data: ``hn`` from H^-1 (a quadratic loss), from the Hessian at
    each node (a smooth loss, filled per node), or from the points' geometry (a piecewise
    linear loss: phi_k'(P'P)^-1 phi_k, P'P with a small ridge, for the branching order only); with
    ``cone``, ``W`` = P H^-1 for the cone flip cost of a quadratic loss's nodes (``bounds._cone_flip``), or
    room for the rows H^-1 phi_a of a smooth loss's active points at each node (H the Hessian at its
    minimiser; :func:`_node_factor` fills them)."""
    P = rep.P
    mf, p = P.shape
    hn = np.ones(mf)
    tu = np.zeros(0)
    smooth_flip = False
    if quad_ok:
        tu = np.empty(mf)
        for k in range(mf):
            hn[k] = np.dot(P[k], Hinv @ P[k])
            tu[k] = np.dot(P[k], slv.beta_u)
    elif kind == KIND_SMOOTH and use_flip:
        smooth_flip = True
    elif (kind == KIND_LP or kind == KIND_HINGE_QP) and branching != STATIC and mf > 0:
        use_flip = False
        A = P.T @ P
        tr = 0.0
        for i in range(p):
            tr += A[i, i]
        for i in range(p):
            A[i, i] += 1e-8 * tr / p + 1e-300
        Ai = np.linalg.inv(A)
        for k in range(mf):
            hn[k] = max(np.dot(P[k], Ai @ P[k]), 1e-300)
    else:
        use_flip = False
        branching = STATIC
    L_branch = rep.L_max if (quad_ok or smooth_flip) else np.inf
    pick = branching == CRITICAL and use_flip   # only a flip-cost bound picks (bounds._critical_point)
    W = np.zeros((0, p))
    if cone and quad_ok and kind == KIND_QP and use_flip:
        W = P @ Hinv
    elif cone and smooth_flip:
        W = np.zeros((mf, p))
    zm = np.empty(factor_workspace(p, slv.sm[1].shape[0]) if smooth_flip else p)
    return BoundingRef(hn, tu, slv.L_u, quad_ok, use_flip, smooth_flip, branching, L_branch, np.empty(mf),
                       np.empty(mf), zm, np.eye(p), np.zeros(p), W, np.empty((p, p)), np.empty((p, p)),
                       np.empty(p), np.empty(p), np.empty(mf if pick else 0, dtype=np.int64),
                       np.empty(1 if pick else 0, dtype=np.int64), np.empty(mf, dtype=np.int64))


@njit(cache=True, inline="always")
def _prunes(U, best, opt):
    """The one prune rule: a node whose bound U is not positive (g <= 0 on all of it) or at
    most the best value attained (or the floor), to ``Tolerances.prune``, is not searched."""
    return U <= _cut(best, opt)


@njit(cache=True, inline="always")
def _cut(best, opt):
    """The bound at or below which :func:`_prunes` prunes a node, given the best value attained."""
    return max(max(best, opt.floor) + opt.prune, 0.0)


@njit(cache=True, inline="always")
def _release(pool, cnt, c):
    """Slot c is finished: onto the free list."""
    pool.free[cnt[NFREE]] = c
    cnt[NFREE] += 1


@njit(cache=True, inline="always")
def _take_slot(pool, cnt):
    """A slot for a new node: a freed one, else the next (:func:`_room_for_two` made room)."""
    if cnt[NFREE] > 0:
        cnt[NFREE] -= 1
        return pool.free[cnt[NFREE]]
    c = cnt[COUNT]
    cnt[COUNT] += 1
    return c


@njit(cache=True, inline="always")
def _room_for_two(pool, cnt):
    """Whether the pool holds two more nodes (the children of an expansion) without growing.
    A node's slot depends only on the free list and the count, never on the capacity."""
    return cnt[COUNT] + 2 < pool.depth.shape[0]


@njit(cache=True, inline="always")
def _attained(val, v):
    if v > val[BEST]:
        val[BEST] = v


@njit(cache=True, inline="always")
def _offer(pool, cnt, val, opt, key, c, U, parent, depth, sign):
    """Node c with bound U goes on the queue, or is pruned (:func:`_prunes`) and its slot freed."""
    _record(key, opt.record, pool.uid[c], parent, depth, pool.minimum[c], U, sign, OPEN)
    if _prunes(U, val[BEST], opt):
        cnt[PRUNED_N] += 1
        _record(key, opt.record, pool.uid[c], parent, depth, np.nan, np.nan, sign, PRUNED)
        _release(pool, cnt, c)
    else:
        cnt[HSIZE] = _heap_push(pool.heap_keys, pool.heap_ids, cnt[HSIZE], U, c)


@njit(cache=True, inline="always")
def _fresh_factor(slv, bd, pool, c):
    """``smooth_node_solver._smooth_factor`` at node c's minimiser into ``pool.chol[c]``, from the
    Hessian its SQP left in the pool when there is one (no second evaluation)."""
    if pool.grad.shape[1] > 0 and np.isfinite(pool.grad[c, 0]):
        return _smooth_factor_of(pool.hess[c], slv.sm, pool.beta[c], pool.chol[c], bd.zm)
    return _smooth_factor(slv.sm, pool.beta[c], pool.chol[c], bd.zm)


@njit(cache=True, inline="always")
def _node_factor(rep, slv, bd, pool, c, fresh):
    """A smooth loss's flip-cost metric at node c's minimiser: ``bd.hn`` from the Cholesky
    factor of the Hessian there (computed afresh when ``fresh``, else the pool's) and, for the cone
    flip cost, ``bd.W``'s rows H^-1 phi_a of the node's active points. Returns r
    (< 0: no flip cost at this node; 0 when the loss has no smooth flip cost)."""
    if not bd.smooth_flip:
        return 0.0
    if fresh:
        pool.flip_r[c] = _fresh_factor(slv, bd, pool, c)
    r = pool.flip_r[c]
    if r >= 0.0:
        L, P, W = pool.chol[c], rep.P, bd.W   # the records' fields read once (a read takes a reference)
        _factor_hn(P, pool.signs[c], L, bd.hn, bd.zm)
        if W.shape[0] > 0:
            act = pool.active[c]
            for a in range(pool.n_active[c]):
                cholesky_solve(L, P[act[a]], W[act[a]], L.shape[0])
    return r


@njit(cache=True, inline="always")
def _cone_rows(bd, pool, c):
    """How many of node c's active rows (its minimiser's QP or SQP active set) the cone flip cost uses:
    all of them when ``bd.W`` is set (KIND_QP or KIND_SMOOTH with flip costs), else none."""
    return pool.n_active[c] if bd.W.shape[0] > 0 else 0


@njit(cache=True, inline="always")
def _node_bound(rep, bd, pool, c, beta, m, use_flip, gap, r, cut):
    """:func:`bounds._bound` of node c from a minimiser ``beta`` with minimum ``m``; under
    ``branching="critical"`` it keeps the point the bound picks for c to branch on, or -1 when c is
    not expanded as it stands (a lazy child not yet solved, or a bound at most ``cut``: pruned)."""
    pick_above = cut if pool.solved[c] else np.inf
    U = _bound(rep.P, bd.hn, rep.cplus, rep.cminus, pool.signs[c], pool.fixed_cost[c], beta, m, rep.n, rep.alpha,
               rep.L_hat, rep.L_max, use_flip, bd.tmp_d, bd.tmp_diff, gap, bd.tu, bd.L_u, r, bd.W, pool.active[c],
               _cone_rows(bd, pool, c), bd.cone, bd.cone_l, bd.cone_v, bd.cone_nu, bd.tmp_k, bd.pick, pick_above,
               bd.order, pool.chain[c], pool.chain_pick[c])
    if bd.pick.shape[0] > 0:
        pool.branch_on[c] = bd.pick[0]
    return U


@njit(cache=True, inline="always")
def _open_root(rep, slv, bd, opt, pool, cnt, val, root_beta, root_m, root_bv):
    """The root (no point fixed): its minimiser is the unconstrained one; queue it or prune it."""
    pool.fixed_cost[0] = rep.C_forced
    pool.minimum[0] = root_m
    pool.beta[0] = root_beta
    pool.lp_basis[0] = slv.lp[5]
    pool.lp_at_upper[0] = slv.lp[6]
    pool.witness[0, :] = 1.0
    _attained(val, _value_at(rep.P, rep.norms, rep.cplus, rep.cminus, rep.C_forced, root_beta, root_bv, rep.n,
                             rep.alpha, rep.L_hat, opt.margin))
    r = _node_factor(rep, slv, bd, pool, 0, True)
    U = _node_bound(rep, bd, pool, 0, root_beta, root_m, bd.use_flip and r >= 0.0, 0.0, r, _cut(val[BEST], opt))
    _offer(pool, cnt, val, opt, slv.key, 0, U, -1, 0, 0)


@njit(cache=True)
def _over_budget(opt, nodes, t_start, pops):
    """Whether the node budget, or the time budget (read every 64 pops), is spent."""
    if opt.max_nodes > 0 and nodes >= opt.max_nodes:
        return True
    if opt.time_limit > 0 and pops % 64 == 0:
        with objmode(now="float64"):
            now = time.perf_counter()
        if now - t_start > opt.time_limit:
            return True
    return False


@njit(cache=True)
def _stop_reason(top, best, nodes, opt, t_start, pops):
    """Why the loop stops before its next pop (``top``: the largest bound on the queue): -1 it
    goes on, EXACT every open node is pruned (status unchanged), else the status code (a value
    above stop_above, a budget)."""
    if _prunes(top, best, opt):
        return EXACT
    if best > opt.stop_above:
        return STOPPED_ABOVE
    if _over_budget(opt, nodes, t_start, pops):
        return BUDGET
    return -1


@njit(cache=True)
def _prune_level(rep, pool, c, best):
    """The least minimum m at which node c's plain bound Cmax / n g(alpha_n (L_hat - m)) is at
    most ``best`` (-inf: at every m; inf: at none), for a solver that can stop once it proves
    m at least this (the plain hinge's dual bound). Its node is then pruned as the solved node
    would be, and its minimiser, whose value is at most that bound, could not have raised
    ``best``: the search is unchanged."""
    hi = pool.fixed_cost[c]
    lo = hi
    for k in range(rep.P.shape[0]):
        if pool.signs[c, k] == 0:
            hi += max(rep.cplus[k], rep.cminus[k])
            lo += min(rep.cplus[k], rep.cminus[k])
    cmax = max(abs(hi), abs(lo)) / rep.n
    if best >= cmax:
        return -np.inf
    if rep.alpha == 0.0:
        return np.inf
    return rep.L_hat + (1.0 - best / cmax) / rep.alpha


@njit(cache=True, inline="always")
def _solve_lazy_child(rep, slv, bd, opt, pool, cnt, val, v, U):
    """A lazy flip child leads the queue: solve it, and put it back with its exact bound (or
    prune it). A child nobody solves is dropped; its bound U (from the parent) covers it. The
    plain hinge's solve stops early once its dual bound proves the child pruned
    (:func:`_prune_level`; flip costs play no part in its bound)."""
    d = pool.depth[v]
    level = _prune_level(rep, pool, v, val[BEST]) if slv.kind == KIND_LP and opt.dual_bound and not bd.use_flip \
        else np.inf
    ok, m_new, bv = _solve(v, rep, slv, pool, level)
    if ok == 2:   # its minimum is at least the level: pruned, as after the solve
        cnt[SOLVES] += 1
        cnt[PRUNED_N] += 1
        _record(slv.key, opt.record, pool.uid[v], -1, d, m_new, np.nan, 0, PRUNED)
        _release(pool, cnt, v)
        return
    if ok < 0:
        cnt[STATUS_CODE] = SOLVER_FAILURE
        cnt[FALLBACKS] += 1
        if U > val[UNSOLVED]:
            val[UNSOLVED] = U
        _record(slv.key, opt.record, pool.uid[v], -1, d, np.nan, np.nan, 0, FAILED)
        _release(pool, cnt, v)
        return
    cnt[SOLVES] += 1
    cnt[FALLBACKS] += ok
    pool.minimum[v] = m_new
    pool.flip_gap[v] = 0.0
    pool.solved[v] = True
    _attained(val, _value_at(rep.P, rep.norms, rep.cplus, rep.cminus, rep.C_forced, pool.beta[v], bv, rep.n,
                             rep.alpha, rep.L_hat, opt.margin))
    r = _node_factor(rep, slv, bd, pool, v, True)
    Ub = _node_bound(rep, bd, pool, v, pool.beta[v], m_new, bd.use_flip and r >= 0.0, 0.0, r, _cut(val[BEST], opt))
    _offer(pool, cnt, val, opt, slv.key, v, Ub, -1, d, 0)


@njit(cache=True, inline="always")
def _unrealisable(rep, slv, bd, opt, pool, cnt, v):
    """Is node v's open region empty? Decided only when the parent's witness misses the new
    constraint: the warm-started feasibility QP, else (numerical failure) the LP on the Python
    side. A node no method decides is kept (an unrealisable pattern can only raise the value)."""
    d = pool.depth[v]
    j = pool.last[v]
    if d == 0 or not (opt.python_realise or not _meets(rep.P, rep.norms, j, pool.signs[v, j], pool.witness[v])):
        return False
    cnt[REALISABILITY] += 1
    ok = QP_FAILED
    if not opt.python_realise:
        ok, nw = _gi_ws(bd.eye, rep.P, rep.norms, pool.signs[v], 1.0, bd.zero, pool.witness[v], pool.witness_active[v],
                        pool.witness_dual[v], pool.witness_n[v], slv.ws)
        pool.witness_n[v] = nw
        if ok == QP_FAILED:  # the warm start restarts from 0
            cnt[FALLBACKS] += 1
            pool.witness[v] = 0.0
            pool.witness_n[v] = 0
    if ok == QP_FAILED:
        res = _realise_call(slv.key, rep.P, pool.signs[v].copy())
        if res == NOT_REALISABLE:
            ok = QP_INFEASIBLE
        elif res == REALISABLE:
            ok = 0
        else:
            ok = 0  # undecided: kept
            cnt[UNDECIDED_N] = 1
            cnt[STATUS_CODE] = SOLVER_FAILURE
            if opt.python_realise:
                cnt[FALLBACKS] += 1
    return ok == QP_INFEASIBLE


@njit(cache=True, inline="always")
def _solve_into(c, rep, slv, pool, cnt):
    """Solve node c (:func:`node_solve._solve`); when solved, count the solve and keep its minimum
    (the node is then solved, with no floor). Returns (ok, the loss at its minimiser), ok as
    ``_solve`` returns it (< 0: no solver solved it)."""
    ok, m_new, bv = _solve(c, rep, slv, pool, np.inf)   # the level given: one compile of the solve, not two
    if ok >= 0:
        cnt[SOLVES] += 1
        cnt[FALLBACKS] += ok
        pool.minimum[c] = m_new
        pool.flip_gap[c] = 0.0
        pool.solved[c] = True
    return ok, bv


@njit(cache=True, inline="always")
def _make_child(rep, slv, bd, opt, pool, cnt, v, j, s, side, r):
    """A new slot c becomes node v's child that fixes free point j to sign s (``side`` = phi_j'b_v):
    it keeps v's minimiser when that meets the new constraint; else (the flip child) it is queued
    lazily with v's minimum plus the flip cost, or solved now. Returns (c, solved now, ok, loss at
    its minimiser): ok < 0 when the solve failed (the caller releases c)."""
    c = _take_slot(pool, cnt)
    cnt[NODES] += 1
    _inherit(pool, c, v, j, s, rep.cplus[j] if s > 0 else rep.cminus[j], slv.kind, bd.smooth_flip)
    pool.uid[c] = cnt[NEXT_UID]
    cnt[NEXT_UID] += 1
    if s * side >= 0.0:
        return c, False, 0, 0.0
    if opt.lazy:
        pool.solved[c] = False
        if bd.quad:
            pool.flip_gap[c] = side * side / bd.hn[j]
        elif bd.smooth_flip and r >= 0.0:
            pool.flip_gap[c] = _flip_d(side, bd.hn[j], r)
        return c, False, 0, 0.0
    ok, bv = _solve_into(c, rep, slv, pool, cnt)
    if ok >= 0 and bd.smooth_flip:
        pool.flip_r[c] = _fresh_factor(slv, bd, pool, c)  # for its expansion
    return c, True, ok, bv


@njit(cache=True, inline="always")
def _chained(pool, c, v):
    """Node v's child c that fixes v's pick on its side at v's minimiser (so keeps that minimiser, its
    minimum and its active rows: :func:`_make_child`) takes its bound and pick from v's chain
    (``bounds._chain``: what ``bounds._bound`` gives at c, without computing its flip costs again), and the
    rest of the chain, shifted by one. Returns c's bound."""
    K = pool.chain.shape[1]
    chain = pool.chain
    chain_pick = pool.chain_pick
    for i in range(K - 1):
        chain[c, i] = chain[v, i + 1]
        chain_pick[c, i] = chain_pick[v, i + 1]
    chain[c, K - 1] = np.nan
    chain_pick[c, K - 1] = -1
    pool.branch_on[c] = chain_pick[v, 0]
    return chain[v, 0]


@njit(cache=True, inline="always")
def _expand(rep, slv, bd, opt, pool, cnt, val, v):
    """Branch node v on one free point (:func:`branching._branch_point`): two children, each
    inheriting v's minimiser when it meets the child's constraint, else solved now or (lazy)
    queued with v's minimum plus the flip cost; each bounded, then queued or pruned (the pool
    has room for both: :func:`_room_for_two`)."""
    P = rep.P
    d = pool.depth[v]
    r = _node_factor(rep, slv, bd, pool, v, False)
    j = pool.branch_on[v] if bd.pick.shape[0] > 0 else -1   # branching "critical": the bound's pick
    if j < 0:
        j = _branch_point(P, bd.hn, rep.cplus, rep.cminus, pool.signs[v], pool.beta[v], pool.minimum[v], bd.L_branch,
                          bd.branching if r >= 0.0 else STATIC, r)
    side = row_dot(P, j, pool.beta[v])
    keep = 1 if side >= 0.0 else -1   # the side j has at v's minimiser (sign(0) = +1, as bounds._free_point)
    chained = pool.chain.shape[1] > 0 and j == pool.branch_on[v] and not np.isnan(pool.chain[v, 0])
    for s in (1, -1):
        c, solved_now, ok, bv = _make_child(rep, slv, bd, opt, pool, cnt, v, j, s, side, r)
        if chained and s == keep:   # keeps v's minimiser: its bound and pick are the first of v's chain
            _offer(pool, cnt, val, opt, slv.key, c, _chained(pool, c, v), pool.uid[v], d + 1, s)
            continue
        if ok < 0:  # certified: the child's minimum is at least the parent's
            cnt[STATUS_CODE] = SOLVER_FAILURE
            cnt[FALLBACKS] += 1
            Ub = _node_bound(rep, bd, pool, c, pool.beta[v], pool.minimum[v], False, 0.0, 0.0, np.inf)
            if Ub > val[UNSOLVED]:
                val[UNSOLVED] = Ub
            _record(slv.key, opt.record, pool.uid[c], pool.uid[v], d + 1, pool.minimum[c], Ub, s, FAILED)
            _release(pool, cnt, c)
            continue
        if solved_now:
            _attained(val, _value_at(P, rep.norms, rep.cplus, rep.cminus, rep.C_forced, pool.beta[c], bv, rep.n,
                                     rep.alpha, rep.L_hat, opt.margin))
        # ``hn`` belongs to the parent's minimiser: a child solved here gets the plain bound
        flip_c = bd.use_flip and r >= 0.0 and (not solved_now or not bd.smooth_flip)
        Ub = _node_bound(rep, bd, pool, c, pool.beta[c], pool.minimum[c], flip_c, pool.flip_gap[c], r,
                         _cut(val[BEST], opt))
        _offer(pool, cnt, val, opt, slv.key, c, Ub, pool.uid[v], d + 1, s)
    _release(pool, cnt, v)


@njit(cache=True, inline="always")
def _finish(pool, cnt, val, opt):
    """The search's value (certified upper bound) and final status, from the best value
    attained, the queue left by a budget, the nodes nobody solved and the floor. A node nobody
    solved whose bound is at most the value otherwise certified (the best value, or the queue's
    top after a stop) or at most floor + prune is dominated: the status is then what it would be had
    the node been solved (exact, bounded by the floor, or the stop's)."""
    upper = val[BEST]
    status = cnt[STATUS_CODE]
    if (status == BUDGET or status == STOPPED_ABOVE) and cnt[HSIZE] > 0 and pool.heap_keys[0] > upper:
        upper = pool.heap_keys[0]
    if val[UNSOLVED] > upper and val[UNSOLVED] > opt.floor + opt.prune:
        upper = val[UNSOLVED]
    elif status == SOLVER_FAILURE and cnt[UNDECIDED_N] == 0:
        status = EXACT  # every unsolved node was dominated by an attained value or the floor
    if opt.floor + opt.prune > upper:
        upper = opt.floor + opt.prune  # nodes with bounds up to floor + prune were pruned unexplored
        if status == EXACT:
            status = BELOW_FLOOR
    return upper, status


@njit(cache=True)
def _search(P, prow, cplus, cminus, C_forced, n, alpha, L_hat, root, solve_data, quad_ok, Hinv, opt, resume, state,
            kind):
    """The loop: best-first branch and bound over the realisable sign patterns of the free points.

    ``root``: (minimiser, minimum, loss at the minimiser, a value attained already);
    ``solve_data``: the :data:`~cudbound.search.node_solve.NodeSolve`. The replicate, the
    solver data, the bounding data and the node pool are held as structrefs
    (:mod:`cudbound.search.records`: passing a tuple of arrays to each part costs an atomic
    reference count per array). Returns
    (value, lower, status, nodes, solves, pruned, realisability solves, fallbacks, undecided,
    state); status indexes ``codes.STATUS``; ``state`` = (pool, counts, values) for a resume.
    With ``resume``, the search continues from ``state`` (the last output of a search of the
    same replicate stopped by its node budget or its ``stop_above``; ``floor`` may only have risen
    since); the counts are then those of this call, but the bounds of the nodes nobody solved and an
    undecided realisability question carry over, as in the search left uninterrupted. ``kind``: ``solve_data``'s kind, a
    constant (:data:`SEARCH_FOR_KIND`, ``_replicate``'s KIND_QP): the loop is compiled for that node
    solver alone (:func:`~cudbound.search.node_solve._solve` refuses a variable)."""
    mf, p = P.shape
    norms = np.empty(mf)
    for k in range(mf):
        norms[k] = math.sqrt(np.dot(P[k], P[k]))
    rep = ReplicateRef(P, prow, norms, cplus, cminus, C_forced, n, alpha, L_hat,
                       L_hat + 1.0 / alpha if alpha > 0.0 else np.inf)
    _, H, Qinv_loss, beta_u, L_u, lp, sm, key, ws, hq = solve_data
    slv = NodeSolveRef(kind, H, Qinv_loss, beta_u, L_u, lp, sm, key, ws, HingeWorkRef(*hq))
    bd = _bounding(rep, slv, quad_ok, Hinv, slv.kind, opt.use_flip, opt.branching, True)
    opt = LoopOptions(opt.max_nodes, opt.time_limit, bd.use_flip, bd.branching, opt.floor, opt.stop_above, opt.lazy,
                      opt.record, opt.python_realise, opt.prune, opt.margin, opt.dual_bound, opt.dive_every,
                      opt.node_memory, opt.bound_chain)
    root_beta, root_m, root_bv, best0 = root
    cnt = np.zeros(_N_COUNTS, dtype=np.int64)
    val = np.zeros(_N_VALUES)
    val[BEST] = best0
    val[UNSOLVED] = -1.0
    t_start = 0.0
    if opt.time_limit > 0:
        with objmode(t_start="float64"):
            t_start = time.perf_counter()
    if resume:  # a search stopped by its node budget, continued: the queue and the node pool as they were
        pool = _as_ref(state[0])
        kept_cnt, kept_val = state[1], state[2]
        for i in _KEPT:
            cnt[i] = kept_cnt[i]
        if kept_val[BEST] > val[BEST]:
            val[BEST] = kept_val[BEST]
        # a node nobody solved was released unsearched: its bound stays in the value, and the status
        # is a solver failure again (``_finish`` clears it when the best value or the floor dominates)
        val[UNSOLVED] = kept_val[UNSOLVED]
        if val[UNSOLVED] > -1.0 or cnt[UNDECIDED_N] != 0:
            cnt[STATUS_CODE] = SOLVER_FAILURE
    else:
        chains = (bd.quad and kind == KIND_QP) or bd.smooth_flip   # the kinds whose nodes have flip-cost bounds
        nk = opt.bound_chain if bd.pick.shape[0] > 0 and chains else 0
        pool = _as_ref(_new_pool(256, mf, p, slv.lp[5].shape[0], slv.lp[6].shape[0], p if bd.smooth_flip else 0, nk))
        cnt[NODES] = 1
        cnt[COUNT] = 1
        cnt[NEXT_UID] = 1
        _open_root(rep, slv, bd, opt, pool, cnt, val, root_beta, root_m, root_bv)
    pops = 0
    while cnt[HSIZE] > 0:
        stop = _stop_reason(pool.heap_keys[0], val[BEST], cnt[NODES], opt, t_start, pops)
        if stop >= 0:
            if stop != EXACT:
                cnt[STATUS_CODE] = stop
            break
        U, v, hsize = _heap_pop(pool.heap_keys, pool.heap_ids, cnt[HSIZE])
        cnt[HSIZE] = hsize
        pops += 1
        d = pool.depth[v]
        if not pool.solved[v]:
            _solve_lazy_child(rep, slv, bd, opt, pool, cnt, val, v, U)
        elif _unrealisable(rep, slv, bd, opt, pool, cnt, v):
            _record(slv.key, opt.record, pool.uid[v], -1, d, np.nan, np.nan, 0, UNREALISABLE)
            _release(pool, cnt, v)
        elif d == mf:
            _attained(val, _objective(pool.fixed_cost[v], pool.minimum[v], n, alpha, L_hat))
            _record(slv.key, opt.record, pool.uid[v], -1, d, np.nan, np.nan, 0, LEAF)
            _release(pool, cnt, v)
        else:
            _record(slv.key, opt.record, pool.uid[v], -1, d, np.nan, np.nan, 0, EXPANDED)
            while not _room_for_two(pool, cnt):
                pool = _as_ref(_grow_pool(_as_arrays(pool), 2 * pool.depth.shape[0] + 2))
            _expand(rep, slv, bd, opt, pool, cnt, val, v)
    upper, status = _finish(pool, cnt, val, opt)
    return (upper, val[BEST], status, cnt[NODES], cnt[SOLVES], cnt[PRUNED_N], cnt[REALISABILITY], cnt[FALLBACKS],
            cnt[UNDECIDED_N] != 0, (_as_arrays(pool), cnt, val))



def _search_for_kind(kind):
    """:func:`_search` compiled for one node solver: its ``kind`` a constant (numba keeps a
    closure's constants and caches one entry per value)."""
    @njit(cache=True)
    def search(P, prow, cplus, cminus, C_forced, n, alpha, L_hat, root, solve_data, quad_ok, Hinv, opt, resume, state):
        return _search(P, prow, cplus, cminus, C_forced, n, alpha, L_hat, root, solve_data, quad_ok, Hinv, opt,
                       resume, state, kind)
    return search


SEARCH_FOR_KIND = {kind: _search_for_kind(kind) for kind in KINDS}
"""The loop of each kind of node solver (what :func:`run_search` calls): compiled on first use for
that solver alone, so that a loss compiles only the node solver it uses."""

_NO_STATE: dict = {}


def _placeholder_state(p):
    """:func:`_no_state` for p unknowns, made once (the search never writes to it)."""
    st = _NO_STATE.get(p)
    if st is None:
        st = _NO_STATE[p] = _no_state(p)
    return st


@njit(cache=True)
def _no_state(p):
    """A placeholder of the type of a search state (for a search that starts afresh)."""
    return _new_pool(0, 0, p, 0, 0, 0, 0), np.zeros(_N_COUNTS, dtype=np.int64), np.zeros(_N_VALUES)


# ------------------------------------------------------------------ Python entry points
_EMPTY_I = np.zeros(0, dtype=np.int64)
_EMPTY_B = np.zeros(0, dtype=np.bool_)
RESUME_MAX_BYTES = 8 << 20
"""A search stopped by its node budget or its ``stop_above`` keeps its state for a later resume only up to this size."""


class SearchState:
    """The open nodes of a search stopped by its node budget or its ``stop_above`` (queue, node pool,
    best value), to be resumed by the next search of the same replicate with the same set-up
    (``SearchOptions.resume``).

    ``arrays``: (a :class:`~cudbound.search.node_pool.NodePool` cut to the slots in use, the
    counts, the values, and any further arrays of the loop: the frontier's found values,
    :mod:`cudbound.search.frontier`) as the compiled loop hands them back."""

    __slots__ = ("kind", "shape", "arrays")

    def __init__(self, kind, shape, arrays):
        self.kind, self.shape, self.arrays = kind, shape, arrays

    @property
    def nbytes(self) -> int:
        pool, *rest = self.arrays
        return int(sum(a.nbytes for a in pool) + sum(a.nbytes for a in rest))

    def lighter(self):
        """The same state without the smooth losses' derivatives at the minimisers (the node pool's
        ``grad`` and ``hess``, a cache: the resumed search evaluates them again), or None when it has none."""
        pool, *rest = self.arrays
        if pool.grad.shape[1] == 0:
            return None
        return SearchState(self.kind, self.shape, (without_derivatives(pool), *rest))

    @classmethod
    def keep(cls, kind, shape, arrays, limit=None):
        """The state trimmed to the node slots in use (without the derivative cache when only that
        brings it within ``limit``, default RESUME_MAX_BYTES), or None when it is larger."""
        limit = RESUME_MAX_BYTES if limit is None else limit
        pool, cnt, *rest = arrays
        state = cls(kind, shape, (trimmed(pool, int(cnt[COUNT])), cnt.copy(), *(a.copy() for a in rest)))
        if state.nbytes > limit:
            state = state.lighter()
        return state if state is not None and state.nbytes <= limit else None

    def matches(self, kind, shape) -> bool:
        return self.kind == kind and self.shape == shape


def _kept_state(kind, shape, arrays, status, nodes, options):
    """The state a search leaves for a resume: when its node budget or its ``stop_above`` stopped it
    (:meth:`SearchState.keep`: None when it is too large), else None."""
    if (status == BUDGET and options.max_nodes and nodes >= options.max_nodes) or status == STOPPED_ABOVE:
        return SearchState.keep(kind, shape, arrays)
    return None


def _loop_options(options, tol, lazy, record, python_realise):
    """The compiled loop's :data:`LoopOptions` from a SearchOptions and Tolerances."""
    return LoopOptions(int(options.max_nodes or 0), float(options.time_limit or 0.0), bool(options.flip_cost),
                       BRANCHING[options.branching], -1.0 if options.floor is None else float(options.floor),
                       math.inf if options.stop_above is None else float(options.stop_above), bool(lazy),
                       bool(record), bool(python_realise), float(tol.prune), float(tol.margin),
                       bool(options.dual_bound), int(options.dive_every), int(options.node_memory or 0),
                       int(options.bound_chain))


def solver_inputs(problem, quad, inner, context):
    """What the compiled loop needs of a prepared replicate's node solver: (kind, P, NodeSolve, Hinv).

    ``problem``, ``quad``, ``inner`` and ``context`` as in :func:`run_search`; P holds the free
    points' design rows; Hinv is the quadratic form's inverse (zeros without one)."""
    kind = (KIND_EXTERNAL if inner is None else KIND_LP if isinstance(inner, HingeLPNodeSolver)
            else KIND_HINGE_QP if isinstance(inner, HingeQPNodeSolver) else KIND_SMOOTH)
    lp = inner if kind == KIND_LP else None
    hinge_qp = inner if kind == KIND_HINGE_QP else None
    smooth = inner if kind == KIND_SMOOTH else None
    p = problem.design.shape[1]
    P = np.ascontiguousarray(problem.design[problem.rows], dtype=float).reshape(-1, p)
    if quad is not None:
        H, Hinv, beta_u, L_u = (np.ascontiguousarray(quad[0], dtype=np.float64),
                                np.ascontiguousarray(quad[1], dtype=np.float64),
                                np.ascontiguousarray(quad[2], dtype=np.float64), float(quad[3]))
    else:
        H, Hinv, beta_u, L_u = np.zeros((p, p)), np.zeros((p, p)), np.zeros(p), 0.0
    if lp is not None:
        lp_root = lp._root
        lp_args = (lp.cols, lp.norms, lp.c, int(lp.m), int(lp.n), lp_root.basis, lp_root.atup, int(lp._max_iter))
    else:
        lp_args = (np.zeros((0, p)), np.zeros(0), np.zeros(0), 0, 0, _EMPTY_I, _EMPTY_B, 0)
    hq = _hinge_work(np.zeros((0, p)), 0)
    if hinge_qp is not None:
        sm = (0, np.ascontiguousarray(hinge_qp.A, dtype=np.float64), np.ascontiguousarray(hinge_qp.c, dtype=np.float64),
              np.array([hinge_qp.Qn]), np.ascontiguousarray(hinge_qp.Q, dtype=np.float64), int(hinge_qp._maxit))
        hq = _hinge_work(sm[1], P.shape[0])
    elif smooth is not None:
        obj = smooth._objective(smooth.counts)
        sm = (int(obj.kind_id), np.ascontiguousarray(obj.D, dtype=np.float64),
              np.ascontiguousarray(obj.yo, dtype=np.float64), np.ascontiguousarray(obj.wn, dtype=np.float64),
              np.ascontiguousarray(obj.pen, dtype=np.float64), int(smooth.max_iter))
    else:
        sm = (0, np.zeros((0, p)), np.zeros(0), np.zeros(0), np.zeros((p, p)), 0)
    if lp is not None:
        hq = _hinge_work(np.ascontiguousarray(lp.cols[:lp.m]), P.shape[0])   # the vertex walk's scratch
    slv = NodeSolve(int(kind), H, 0.5 * Hinv, beta_u, L_u, lp_args, sm, int(context.key if context is not None else 0),
                    _workspace(p), hq)
    return kind, P, slv, Hinv


def run_search(problem, root, *, best0=0.0, quad=None, inner=None, context=None, options=None, tol=None, lazy=None,
               record=False, python_realise=False, fresh_best=None):
    """Run the compiled loop on a prepared replicate (``bnb.branch_and_bound`` and the engine call it).

    ``problem``: the replicate's points and costs (a :class:`~cudbound.search.problem.ReplicateProblem`);
    ``root``: the NodeSolution of its unconstrained problem; ``best0``: a value already attained.
    ``quad``: (H, Hinv, beta_u, L_u) of a positive definite quadratic loss (flip-cost bound
    and branching), else None. ``inner``: the compiled node solver run inside the loop, with its
    weights set: a :class:`~cudbound.search.lp_node_solver.HingeLPNodeSolver` (KIND_LP), a
    :class:`~cudbound.search.hinge_qp_node_solver.HingeQPNodeSolver` (KIND_HINGE_QP) or a
    :class:`~cudbound.search.smooth_node_solver.SmoothNodeSolver` of a built-in loss whose
    resample nothing separates (KIND_SMOOTH); None: every node goes to the context's solver
    (KIND_EXTERNAL). ``context``: the :class:`SearchContext` (entered) for external solves,
    fallbacks and the tree.
    ``tol``: the :class:`~cudbound.search.options.Tolerances` (default: the defaults).
    ``python_realise``: decide every realisability question on the Python side
    (``realisability.realise``: witness points, the feasibility QP, then an LP) instead of
    the warm-started compiled QP (an independent check; the ``python`` and ``cvxpy`` engines).
    ``options.resume``: a :class:`SearchState` of this replicate to continue from (ignored for
    KIND_EXTERNAL, whose warm starts live in Python, or when it does not match).
    ``fresh_best``: a callable giving one more attained value, called only when the search does not
    resume (a resumed search keeps its best value); its time counts against ``options.time_limit``.
    Returns a :class:`~cudbound.search.options.SearchOutcome` (``state``: a
    :class:`SearchState` when the search stopped at its node budget or its ``stop_above``, else None
    (:func:`_kept_state`); ``screened``,
    ``seconds`` and ``tree`` are the caller's to fill).
    """
    kind, P, slv, Hinv = solver_inputs(problem, quad, inner, context)
    p = P.shape[1]
    options = options if options is not None else SearchOptions()
    tol = tol if tol is not None else Tolerances()
    if lazy is None:
        lazy = kind != KIND_QP
    shape = (P.shape[0], p, int(slv.lp[3]), bool(lazy), bool(options.flip_cost))
    resume = options.resume
    resumable = kind != KIND_EXTERNAL and not record
    if not (resumable and isinstance(resume, SearchState) and resume.matches(kind, shape)):
        resume = None
    if resume is None and fresh_best is not None:
        t0 = time.perf_counter()
        best0 = max(best0, fresh_best())
        if options.time_limit:  # the probe's time counts against the search's budget (0 would mean none)
            options = dataclasses.replace(options, time_limit=max(options.time_limit - (time.perf_counter() - t0),
                                                                  1e-9))
    start = (np.ascontiguousarray(root.beta, dtype=np.float64), float(root.value), float(root.beta_value),
             float(best0))
    args = (P, np.ascontiguousarray(problem.rows, dtype=np.int64), np.ascontiguousarray(problem.cost_plus, dtype=np.float64),
            np.ascontiguousarray(problem.cost_minus, dtype=np.float64), float(problem.C_forced), float(problem.n),
            float(problem.alpha_n), float(problem.L_hat), start, slv, quad is not None, Hinv,
            _loop_options(options, tol, lazy, record, python_realise), resume is not None,
            resume.arrays if resume is not None else _placeholder_state(p))
    search = SEARCH_FOR_KIND[kind]
    with compile_once(search, args):
        out = search(*args)
    value, lower, status, nodes, solves, pruned, real, fallbacks, undecided, arrays = out
    state = _kept_state(kind, shape, arrays, status, nodes, options) if resumable else None
    return SearchOutcome(value=float(value), lower=float(lower), status=STATUS[status], nodes=int(nodes),
                         solves=int(solves), pruned=int(pruned), realisability_checks=int(real),
                         fallbacks=int(fallbacks), undecided=bool(undecided), state=state)


@njit(cache=True)
def _replicate(Zu, group, y, counts, H, g, c, beta_hat, alpha, screen, key, opt, resume, state):
    """Set-up (``replicate_setup._replicate_setup``) and search of one replicate of a positive
    definite quadratic loss, all in compiled code.

    Returns (ok, value, lower, status, nodes, solves, pruned, real_solves, n_screened, fallbacks, undecided,
    state, mf)."""
    ok, P, cplus, cminus, C_forced, n_screened, Hinv, beta_u, L_u, L_hat, uidx = _replicate_setup(
        Zu, group, y, counts, H, g, c, beta_hat, alpha, screen)
    if not ok:
        return False, 0.0, 0.0, SOLVER_FAILURE, 0, 0, 0, 0, 0, 0, False, _no_state(H.shape[0]), 0
    rep = np.full(Zu.shape[0], -1, dtype=np.int64)  # a design row of each distinct row
    for i in range(group.shape[0]):
        if rep[group[i]] < 0:
            rep[group[i]] = i
    n = float(y.shape[0])
    mf = P.shape[0]
    p = H.shape[0]
    norms = np.empty(mf)
    for k in range(mf):
        norms[k] = math.sqrt(np.dot(P[k], P[k]))
    best0 = _value_at(P, norms, cplus, cminus, C_forced, beta_hat, L_hat, n, alpha, L_hat, opt.margin)
    prow = np.empty(mf, dtype=np.int64)
    for f in range(mf):
        prow[f] = rep[uidx[f]]
    if resume and state[0].signs.shape[1] != mf:
        resume = False
    if not resume:  # a resumed search keeps its best value
        best0 = max(best0, _probe(P, norms, cplus, cminus, C_forced, H, Hinv, beta_u, L_u, L_hat, n, alpha,
                                  opt.margin))
    lp = (np.zeros((0, p)), np.zeros(0), np.zeros(0), 0, 0, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.bool_), 0)
    sm = (0, np.zeros((0, p)), np.zeros(0), np.zeros(0), np.zeros((p, p)), 0)
    slv = NodeSolve(KIND_QP, H, 0.5 * Hinv, beta_u, L_u, lp, sm, key, _workspace(p), _hinge_work(np.zeros((0, p)), 0))
    upper, best, status, nodes, solves, pruned, real, fallbacks, undecided, out_state = _search(
        P, prow, cplus, cminus, C_forced, n, alpha, L_hat, (beta_u, L_u, L_u, best0), slv, True, Hinv, opt, resume,
        state, KIND_QP)
    return True, upper, best, status, nodes, solves, pruned, real, n_screened, fallbacks, undecided, out_state, mf


def compiled_replicate(Zu, group, y, counts, H, g, c, beta_hat, alpha, options, context=None, tol=None):
    """Run :func:`_replicate` with a SearchOptions; None when H is not positive definite.

    ``context``: an entered :class:`SearchContext` whose ``fallback`` solves a node the
    compiled QP solver fails on (the rows it is given are design rows, one per distinct row).
    ``options.resume``: a :class:`SearchState` of this replicate to continue from.
    Returns a :class:`~cudbound.search.options.SearchOutcome` (with ``screened``; ``state`` as
    in :func:`run_search`; ``seconds`` is the caller's to fill), or None."""
    p = H.shape[0]
    shape = ("replicate", p)
    resume = options.resume if isinstance(options.resume, SearchState) and options.resume.matches(KIND_QP, shape) \
        else None
    opt = _loop_options(options, tol if tol is not None else Tolerances(), False, False, False)
    args = (Zu, group, y, np.asarray(counts, dtype=np.float64), np.ascontiguousarray(H, dtype=np.float64),
            np.ascontiguousarray(g, dtype=np.float64), float(c), beta_hat, float(alpha),
            bool(options.screen), int(context.key if context is not None else 0), opt,
            resume is not None, resume.arrays if resume is not None else _placeholder_state(p))
    with compile_once(_replicate, args):
        out = _replicate(*args)
    ok, value, lower, status, nodes, solves, pruned, real, screened, fallbacks, undecided, arrays, mf = out
    if not ok:
        return None
    state = _kept_state(KIND_QP, shape, arrays, status, nodes, options)
    return SearchOutcome(value=float(value), lower=float(lower), status=STATUS[status], nodes=int(nodes),
                         solves=int(solves), pruned=int(pruned), realisability_checks=int(real),
                         screened=int(screened), fallbacks=int(fallbacks), undecided=bool(undecided), state=state)
