"""The one branch and bound for the replicate supremum Q^(b) (Laber & Murphy 2008, sec. 4), compiled.

Every search of the toolkit runs this loop (numba), whatever the loss. It maximises

    |C(s)| / n * g(alpha_n (L_hat - inf_{M(s)} L))

over the realisable sign patterns s of the free points. A node fixes the signs of some free
points; its bound is ``compiled._bound`` (the paper's bound, tightened by the per-point flip
cost when the loss is a positive definite quadratic, or a built-in logistic or exponential
loss: ``compiled._flip_d``, from the Hessian at the node's minimiser, whose Cholesky factor
the node pool keeps). The open node with the largest bound is
expanded first (ties: first pushed, first popped), so the largest bound on the queue is a
certified upper bound at any moment. A node is pruned when g <= 0 or its bound is at most
the best value attained (or ``floor``).

Node solvers are pluggable (``kind``):

- ``KIND_QP`` (0): a positive definite quadratic loss; the node QP by the dual active-set
  method of Goldfarb & Idnani, allocation-free, warm-started from the parent's active set
  (``compiled._gi_ws``), solved eagerly when a child is made;
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
  primal active-set method of ``hinge_qp_node_solver._hinge_qp_node``, warm-started from the
  parent's minimiser and working sets (kept in the node pool's ``act``: a point k of the
  resample as k, a fixed free point j as m + j); a node it does not certify goes to cvxpy.

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
upper bound, with status "solver_failure". Each hand-off counts as a fallback.
"""
from __future__ import annotations

import itertools
import math
import threading
import time

import numpy as np
from numba import njit, objmode

from .compiled import (BRANCHING, STATUS, _TOL, _bound, _branch_point, _first_compile_notice, _flip_d, _gi_ws, _grow,
                       _heap_pop, _heap_push, _meets, _objective, _replicate_setup, _value_at, _workspace)
from .lp_node_solver import OPTIMAL, _solve_node
from .options import SearchOptions, SearchOutcome
from .hinge_qp_node_solver import _hinge_qp_node
from .smooth_node_solver import _factor_hn, _smooth_factor, _sqp_compiled

__all__ = ["KIND_QP", "KIND_LP", "KIND_EXTERNAL", "KIND_SMOOTH", "KIND_HINGE_QP", "SearchState", "run_search", "compiled_replicate", "SearchContext"]

KIND_QP, KIND_LP, KIND_EXTERNAL, KIND_SMOOTH, KIND_HINGE_QP = 0, 1, 2, 3, 4
STATES = ("open", "pruned", "expanded", "leaf", "unrealisable", "solver_failure")
_OPEN, _PRUNED, _EXPANDED, _LEAF, _UNREALISABLE, _FAILED = range(6)

# ------------------------------------------------------------------ the Python side of the loop
_CONTEXTS: dict = {}
_KEYS = itertools.count(1)
_LOCK = threading.Lock()


class SearchContext:
    """What the compiled loop asks of Python: node solves by a NodeSolver (with warm starts
    kept here by handle), the fallback solver, the LP decision of realisability, and the
    search tree. Registered under an integer key for the duration of one search."""

    def __init__(self, solver=None, fallback=None, root_warm=None, tree=None):
        self.solver, self.fallback, self.tree = solver, fallback, tree
        self.warms = {0: root_warm}
        self._next = 1
        self.undecided = False

    def __enter__(self):
        with _LOCK:
            self.key = next(_KEYS)
            _CONTEXTS[self.key] = self
        return self

    def __exit__(self, *exc):
        _CONTEXTS.pop(self.key, None)
        return False

    def solve(self, handle, rows, signs, use_fallback):
        """(ok, m, loss at beta, beta, new handle, fallback): ok 0 solved, 1 failed."""
        from .node_solvers import SOLVER_ERRORS, _checked
        p = None
        try:
            if use_fallback:
                if self.fallback is None:
                    return 1, math.nan, math.nan, np.zeros(0), -1, 0
                sol = _checked(self.fallback().solve(rows, signs, None))
                fb = 1
            else:
                sol = _checked(self.solver.solve(rows, signs, self.warms.get(handle)))
                fb = int(getattr(sol, "fallback", False))
        except SOLVER_ERRORS:
            return 1, math.nan, math.nan, np.zeros(0), -1, 0
        h = -1
        if sol.warm is not None:
            h = self._next
            self._next += 1
            self.warms[h] = sol.warm
        p = np.ascontiguousarray(sol.beta, dtype=np.float64)
        return 0, float(sol.value), float(sol.beta_value), p, h, fb

    def realise(self, P, signs):
        """1 realisable, 0 not, 2 undecided (the LP of ``realisability.realise`` failed)."""
        from .realisability import RealisabilityUnknown, realise
        fixed = np.flatnonzero(signs)
        try:
            point = realise(P[fixed], signs[fixed].astype(float), ())
        except (RealisabilityUnknown, ValueError, ArithmeticError):
            self.undecided = True
            return 2
        return 0 if point is None else 1

    def record(self, uid, parent, depth, m, bound, sign, state):
        t = self.tree
        if t is None:
            return
        if uid not in t:
            t.add_node(uid, depth=int(depth), m=float(m), bound=float(bound), sign=int(sign), state=STATES[state])
            if parent >= 0:
                t.add_edge(int(parent), uid)
            return
        node = t.nodes[uid]
        node["state"] = STATES[state]
        if not math.isnan(m):
            node["m"] = float(m)
        if not math.isnan(bound):
            node["bound"] = float(bound)


def _ext_solve(key, handle, rows, signs, use_fallback):
    ctx = _CONTEXTS.get(key)
    if ctx is None:  # no Python side (a kernel called directly): the node stays unsolved
        return 1, math.nan, math.nan, np.zeros(0), -1, 0
    return ctx.solve(handle, rows, signs, use_fallback)


def _ext_realise(key, P, signs):
    ctx = _CONTEXTS.get(key)
    if ctx is None:
        return 2
    return ctx.realise(P, signs)


def _ext_record(key, uid, parent, depth, m, bound, sign, state):
    _CONTEXTS[key].record(uid, parent, depth, m, bound, sign, state)


# ------------------------------------------------------------------ the compiled loop
@njit(cache=True)
def _fixed(sgn_row, prow):
    """Design rows and signs (+-1.0) of a node's fixed points."""
    k = 0
    for i in range(sgn_row.shape[0]):
        if sgn_row[i] != 0:
            k += 1
    rows = np.empty(k, dtype=np.int64)
    signs = np.empty(k)
    k = 0
    for i in range(sgn_row.shape[0]):
        if sgn_row[i] != 0:
            rows[k] = prow[i]
            signs[k] = 1.0 if sgn_row[i] > 0 else -1.0
            k += 1
    return rows, signs


@njit(cache=True)
def _record_call(key, uid, parent, depth, m, bound, sign, state):
    with objmode():
        _ext_record(key, uid, parent, depth, m, bound, sign, state)


@njit(cache=True)
def _record(key, record, uid, parent, depth, m, bound, sign, state):
    if record:
        _record_call(key, uid, parent, depth, m, bound, sign, state)


@njit(cache=True)
def _solve_call(key, handle, rows, signs, use_fallback):
    """A node solve on the Python side: (ok, m, loss at b, b, new handle, fallback)."""
    with objmode(ok="int64", m="float64", bv="float64", b="float64[::1]", h2="int64", fb="int64"):
        ok, m, bv, b, h2, fb = _ext_solve(key, handle, rows, signs, use_fallback)
    return ok, m, bv, b, h2, fb


@njit(cache=True)
def _realise_call(key, P, signs):
    with objmode(res="int64"):
        res = _ext_realise(key, P, signs)
    return res


@njit(cache=True)
def _search(P, prow, cplus, cminus, C_forced, n, alpha, L_hat, best0, root_beta, root_m, root_bv,
            kind, quad_ok, H, Hinv, beta_u, L_u,
            lp_cols, lp_norms, lp_c, lp_m, lp_n, lp_basis, lp_atup, lp_maxit, sm,
            key, max_nodes, time_limit, use_flip, branching, floor, stop_above, lazy, record, python_realise,
            resume, state):
    """The loop. Returns (value, lower, status, nodes, solves, pruned, realisability solves,
    fallbacks, undecided, state); status indexes ``compiled.STATUS``. With ``resume``, the search
    continues from ``state`` (the last output of a search of the same replicate stopped by its
    node budget; ``floor`` may only have risen and ``stop_above`` fallen since); the counts are
    then those of this call."""
    mf, p = P.shape
    L_max = L_hat + 1.0 / alpha if alpha > 0.0 else np.inf
    norms = np.empty(mf)
    hn = np.ones(mf)
    tu = np.zeros(0)
    for k in range(mf):
        norms[k] = math.sqrt(np.dot(P[k], P[k]))
    sm_flip = False  # flip costs of a logistic or exponential loss, from the Hessian at each node's minimiser
    if quad_ok:
        tu = np.empty(mf)
        for k in range(mf):
            hn[k] = np.dot(P[k], Hinv @ P[k])
            tu[k] = np.dot(P[k], beta_u)
    elif kind == 3 and use_flip:
        sm_flip = True
    elif (kind == 1 or kind == 4) and branching != 0 and mf > 0:
        # a piecewise linear loss: no flip cost, but a branching order from the points'
        # geometry, hn_k = phi_k'(P'P)^-1 phi_k (P'P with a small ridge)
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
        branching = 0
    L_branch = L_max if (quad_ok or sm_flip) else np.inf  # _branch_point's "can still flip" test
    r_node = 0.0  # _flip_d's r at the node whose minimiser ``hn`` belongs to (sm_flip); < 0: no flip cost there
    zm = np.empty(p)
    pf = p if sm_flip else 0
    Qinv_loss = 0.5 * Hinv
    ws = _workspace(p)
    Qinv_real = np.eye(p)
    zero_p = np.zeros(p)
    tmp_d = np.empty(mf)
    tmp_diff = np.empty(mf)
    nb = lp_basis.shape[0]
    na = lp_atup.shape[0]
    if resume:
        sgn, depth, Cfix, mval, fl, solved, beta, act, nact, uu = state[:10]
        lb, la, wh, wx, wact, wn, wu, uid, hk, hid, last, free = state[10:22]
        chol, rr = state[22:24]
        cap = sgn.shape[0]
    else:
        cap = 256
        sgn = np.zeros((cap, mf), dtype=np.int8)
        depth = np.zeros(cap, dtype=np.int64)
        Cfix = np.zeros(cap)
        mval = np.zeros(cap)
        fl = np.zeros(cap)                                  # a lazy child's minimum is >= mval + fl
        solved = np.ones(cap, dtype=np.bool_)
        beta = np.zeros((cap, p))
        act = np.zeros((cap, p), dtype=np.int64)            # KIND_QP warm start
        nact = np.zeros(cap, dtype=np.int64)
        uu = np.zeros((cap, p))
        lb = np.zeros((cap, nb), dtype=np.int64)            # KIND_LP warm start
        la = np.zeros((cap, na), dtype=np.bool_)
        wh = np.zeros(cap, dtype=np.int64)                  # KIND_EXTERNAL warm start handle
        wx = np.zeros((cap, p))                             # realisability witness and its warm start
        wact = np.zeros((cap, p), dtype=np.int64)
        wn = np.zeros(cap, dtype=np.int64)
        wu = np.zeros((cap, p))
        uid = np.zeros(cap, dtype=np.int64)
        hk = np.zeros(cap)
        hid = np.zeros(cap, dtype=np.int64)
        last = np.zeros(cap, dtype=np.int64)                # the point fixed last at each node
        free = np.zeros(cap, dtype=np.int64)                # slots of finished nodes, reused
        chol = np.zeros((cap, pf, pf))                      # sm_flip: Cholesky factor of the Hessian at beta
        rr = np.zeros(cap)                                  # sm_flip: _flip_d's r at beta (< 0: none)
    nfree = 0
    hsize = 0
    best = best0
    nodes = 1
    count = 1
    next_uid = 1
    solves = 0
    pruned = 0
    real_solves = 0
    fallbacks = 0
    undecided = False
    status = 0
    unsolved = -1.0
    t_start = 0.0
    if time_limit > 0:
        with objmode(t_start="float64"):
            t_start = time.perf_counter()
    if resume:
        # a search stopped by its node budget, continued: the queue and the node pool as they were
        sc = state[24]
        nfree = int(sc[0])
        hsize = int(sc[1])
        count = int(sc[2])
        next_uid = int(sc[3])
        if sc[4] > best:
            best = sc[4]
        nodes = 0
    else:
        # root
        Cfix[0] = C_forced
        mval[0] = root_m
        beta[0] = root_beta
        lb[0] = lp_basis
        la[0] = lp_atup
        wx[0, :] = 1.0
        v = _value_at(P, norms, cplus, cminus, C_forced, root_beta, root_bv, n, alpha, L_hat, 1e-9)
        if v > best:
            best = v
        if sm_flip:
            r_node = rr[0] = _smooth_factor(sm, root_beta, chol[0], zm)
            if r_node >= 0.0:
                _factor_hn(P, sgn[0], chol[0], hn, zm)
        U = _bound(P, hn, cplus, cminus, sgn[0], C_forced, root_beta, root_m, n, alpha, L_hat, L_max,
                   use_flip and r_node >= 0.0, tmp_d, tmp_diff, 0.0, tu, L_u, r_node)
        _record(key, record, 0, -1, 0, root_m, U, 0, _OPEN)
        if U > max(best, floor) + _TOL:
            hsize = _heap_push(hk, hid, hsize, U, 0)
        else:
            pruned += 1
            _record(key, record, 0, -1, 0, np.nan, np.nan, 0, _PRUNED)
    pops = 0
    while hsize > 0:
        U = hk[0]
        if U <= max(best, floor) + _TOL:
            break
        if best > stop_above:
            status = 3
            break
        if max_nodes > 0 and nodes >= max_nodes:
            status = 1
            break
        if time_limit > 0 and pops % 64 == 0:
            with objmode(now="float64"):
                now = time.perf_counter()
            if now - t_start > time_limit:
                status = 1
                break
        U, v_id, hsize = _heap_pop(hk, hid, hsize)
        pops += 1
        d = depth[v_id]
        if not solved[v_id]:
            # a lazy flip child leads the queue: solve it, and put it back with its exact bound
            ok, m_new, bv = _solve(v_id, P, prow, sgn, beta, kind, H, Qinv_loss, beta_u, L_u, act, nact, uu, ws,
                                   norms, lp_cols, lp_norms, lp_c, lp_m, lp_n, lp_basis, lp_atup, lp_maxit,
                                   sm, lb, la, wh, key)
            if ok < 0:
                status = 2
                fallbacks += 1
                if U > unsolved:
                    unsolved = U
                _record(key, record, uid[v_id], -1, d, np.nan, np.nan, 0, _FAILED)
                free[nfree] = v_id
                nfree += 1
                continue
            solves += 1
            fallbacks += ok
            mval[v_id] = m_new
            fl[v_id] = 0.0
            solved[v_id] = True
            v = _value_at(P, norms, cplus, cminus, C_forced, beta[v_id], bv, n, alpha, L_hat, 1e-9)
            if v > best:
                best = v
            if sm_flip:
                r_node = rr[v_id] = _smooth_factor(sm, beta[v_id], chol[v_id], zm)
                if r_node >= 0.0:
                    _factor_hn(P, sgn[v_id], chol[v_id], hn, zm)
            Ub = _bound(P, hn, cplus, cminus, sgn[v_id], Cfix[v_id], beta[v_id], m_new, n, alpha, L_hat, L_max,
                        use_flip and r_node >= 0.0, tmp_d, tmp_diff, 0.0, tu, L_u, r_node)
            _record(key, record, uid[v_id], -1, d, m_new, Ub, 0, _OPEN)
            if Ub <= 0.0 or Ub <= max(best, floor) + _TOL:
                pruned += 1
                _record(key, record, uid[v_id], -1, d, np.nan, np.nan, 0, _PRUNED)
                free[nfree] = v_id
                nfree += 1
            else:
                hsize = _heap_push(hk, hid, hsize, Ub, v_id)
            continue
        jl = last[v_id]
        if d > 0 and (python_realise or not _meets(P, norms, jl, sgn[v_id, jl], wx[v_id])):
            # realisability: warm-started min-norm feasibility QP (only when the parent's point
            # misses the new constraint; otherwise that point is still a witness for the child)
            real_solves += 1
            ok = 2
            if not python_realise:
                ok, nw = _gi_ws(Qinv_real, P, norms, sgn[v_id], 1.0, zero_p, wx[v_id], wact[v_id], wu[v_id],
                                wn[v_id], ws)
                wn[v_id] = nw
                if ok == 2:
                    # numerical failure: decided on the Python side; the warm start restarts from 0
                    fallbacks += 1
                    wx[v_id] = 0.0
                    wn[v_id] = 0
            if ok == 2:
                res = _realise_call(key, P, sgn[v_id].copy())
                if res == 0:
                    ok = 1
                elif res == 1:
                    ok = 0
                else:
                    ok = 0  # undecided: kept (an unrealisable pattern can only raise the value)
                    undecided = True
                    status = 2
                    if python_realise:
                        fallbacks += 1
            if ok == 1:
                _record(key, record, uid[v_id], -1, d, np.nan, np.nan, 0, _UNREALISABLE)
                free[nfree] = v_id
                nfree += 1
                continue
        if d == mf:
            v = _objective(Cfix[v_id], mval[v_id], n, alpha, L_hat)
            if v > best:
                best = v
            _record(key, record, uid[v_id], -1, d, np.nan, np.nan, 0, _LEAF)
            free[nfree] = v_id
            nfree += 1
            continue
        _record(key, record, uid[v_id], -1, d, np.nan, np.nan, 0, _EXPANDED)
        if sm_flip:
            r_node = rr[v_id]
            if r_node >= 0.0:
                _factor_hn(P, sgn[v_id], chol[v_id], hn, zm)
        j = _branch_point(P, hn, cplus, cminus, sgn[v_id], beta[v_id], mval[v_id], L_branch,
                          branching if r_node >= 0.0 else 0, r_node)
        side = np.dot(P[j], beta[v_id])
        for s in (1, -1):
            if nfree == 0 and count + 1 >= cap:
                cap *= 2
                sgn = _grow(sgn, cap)
                depth = _grow(depth, cap)
                Cfix = _grow(Cfix, cap)
                mval = _grow(mval, cap)
                fl = _grow(fl, cap)
                solved = _grow(solved, cap)
                beta = _grow(beta, cap)
                act = _grow(act, cap)
                nact = _grow(nact, cap)
                uu = _grow(uu, cap)
                lb = _grow(lb, cap)
                la = _grow(la, cap)
                wh = _grow(wh, cap)
                wx = _grow(wx, cap)
                wact = _grow(wact, cap)
                wn = _grow(wn, cap)
                wu = _grow(wu, cap)
                uid = _grow(uid, cap)
                hk = _grow(hk, cap)
                hid = _grow(hid, cap)
                last = _grow(last, cap)
                free = _grow(free, cap)
                chol = _grow(chol, cap)
                rr = _grow(rr, cap)
            if nfree > 0:
                nfree -= 1
                c = free[nfree]
            else:
                c = count
                count += 1
            nodes += 1
            sgn[c] = sgn[v_id]
            sgn[c, j] = s
            last[c] = j
            depth[c] = d + 1
            Cfix[c] = Cfix[v_id] + (cplus[j] if s > 0 else cminus[j])
            beta[c] = beta[v_id]
            mval[c] = mval[v_id]
            fl[c] = 0.0
            solved[c] = True
            if kind == 0 or kind == 4:
                act[c] = act[v_id]
                nact[c] = nact[v_id]
                uu[c] = uu[v_id]
            elif kind == 1:
                lb[c] = lb[v_id]
                la[c] = la[v_id]
            else:
                wh[c] = wh[v_id]
            wx[c] = wx[v_id]
            wact[c] = wact[v_id]
            wn[c] = wn[v_id]
            wu[c] = wu[v_id]
            if sm_flip:
                chol[c] = chol[v_id]
                rr[c] = rr[v_id]
            uid[c] = next_uid
            next_uid += 1
            solved_by_parent = True
            if s * side < 0.0:
                if lazy:
                    solved[c] = False
                    if quad_ok:
                        fl[c] = side * side / hn[j]
                    elif sm_flip and r_node >= 0.0:
                        fl[c] = _flip_d(side, hn[j], r_node)
                else:
                    solved_by_parent = False
                    ok, m_new, bv = _solve(c, P, prow, sgn, beta, kind, H, Qinv_loss, beta_u, L_u, act, nact, uu,
                                           ws, norms, lp_cols, lp_norms, lp_c, lp_m, lp_n, lp_basis, lp_atup,
                                           lp_maxit, sm, lb, la, wh, key)
                    if ok < 0:
                        # certified: the child's minimum is at least the parent's
                        status = 2
                        fallbacks += 1
                        Ub = _bound(P, hn, cplus, cminus, sgn[c], Cfix[c], beta[v_id], mval[v_id], n, alpha,
                                    L_hat, L_max, False, tmp_d, tmp_diff, 0.0, tu, L_u)
                        if Ub > unsolved:
                            unsolved = Ub
                        _record(key, record, uid[c], uid[v_id], d + 1, mval[c], Ub, s, _FAILED)
                        free[nfree] = c
                        nfree += 1
                        continue
                    solves += 1
                    fallbacks += ok
                    mval[c] = m_new
                    if sm_flip:
                        rr[c] = _smooth_factor(sm, beta[c], chol[c], zm)  # for its expansion
                    v = _value_at(P, norms, cplus, cminus, C_forced, beta[c], bv, n, alpha, L_hat, 1e-9)
                    if v > best:
                        best = v
            # ``hn`` belongs to the parent's minimiser: a child solved here gets the plain bound
            flip_c = use_flip and r_node >= 0.0 and (solved_by_parent or not sm_flip)
            Ub = _bound(P, hn, cplus, cminus, sgn[c], Cfix[c], beta[c], mval[c], n, alpha, L_hat, L_max,
                        flip_c, tmp_d, tmp_diff, fl[c], tu, L_u, r_node)
            _record(key, record, uid[c], uid[v_id], d + 1, mval[c], Ub, s, _OPEN)
            if Ub <= 0.0 or Ub <= max(best, floor) + _TOL:
                pruned += 1
                _record(key, record, uid[c], uid[v_id], d + 1, np.nan, np.nan, s, _PRUNED)
                free[nfree] = c
                nfree += 1
                continue
            hsize = _heap_push(hk, hid, hsize, Ub, c)
        free[nfree] = v_id
        nfree += 1
    upper = best
    if (status == 1 or status == 3) and hsize > 0 and hk[0] > upper:
        upper = hk[0]
    if unsolved > upper:
        upper = unsolved
    elif status == 2 and not undecided:
        status = 0  # every unsolved node was dominated by an attained value
    if floor + _TOL > upper:
        upper = floor + _TOL  # nodes with bounds up to floor + _TOL were pruned unexplored
        if status == 0:
            status = 4
    sc_out = np.array([float(nfree), float(hsize), float(count), float(next_uid), best])
    out_state = (sgn, depth, Cfix, mval, fl, solved, beta, act, nact, uu, lb, la, wh, wx, wact, wn, wu, uid, hk, hid,
                 last, free, chol, rr, sc_out)
    return upper, best, status, nodes, solves, pruned, real_solves, fallbacks, undecided, out_state


@njit(cache=True)
def _quad_form(H, x, x0):
    """(x - x0)'H(x - x0), without allocating."""
    v = 0.0
    p = x.shape[0]
    for i in range(p):
        di = x[i] - x0[i]
        row = 0.0
        for j in range(p):
            row += H[i, j] * (x[j] - x0[j])
        v += di * row
    return v


@njit(cache=True)
def _solve(c, P, prow, sgn, beta, kind, H, Qinv_loss, beta_u, L_u, act, nact, uu, ws, norms,
           lp_cols, lp_norms, lp_c, lp_m, lp_n, lp_basis, lp_atup, lp_maxit, sm, lb, la, wh, key):
    """Solve node c in place (beta[c] and its warm start). Returns (ok, m, loss at beta[c]):
    ok 0 solved, 1 solved by the fallback solver, -1 not solved."""
    if kind == 0:
        if nact[c] == 0:
            beta[c] = beta_u  # an empty active set is dual feasible only at the unconstrained minimiser
        st, na_ = _gi_ws(Qinv_loss, P, norms, sgn[c], 0.0, beta_u, beta[c], act[c], uu[c], nact[c], ws)
        nact[c] = na_
        if st == 0:
            m = L_u + _quad_form(H, beta[c], beta_u)
            return 0, m, m
    elif kind == 1:
        rows, signs = _fixed(sgn[c], prow)
        st, its, f, gap, b, basis, atup = _solve_node(lp_cols, lp_norms, lp_c, lp_m, lp_n, rows, signs, lb[c], la[c],
                                                      lp_basis, lp_atup, lp_maxit)
        if st == OPTIMAL:
            beta[c] = b
            lb[c] = basis
            la[c] = atup
            return 0, f, f
    elif kind == 3:
        sm_kind, D, yo, wn, pen, maxit = sm
        k = 0
        for i in range(sgn.shape[1]):
            if sgn[c, i] != 0:
                k += 1
        G = np.empty((k, P.shape[1]))
        gn = np.empty(k)
        k = 0
        for i in range(sgn.shape[1]):
            if sgn[c, i] != 0:
                G[k] = P[i] * sgn[c, i]
                gn[k] = norms[i]
                k += 1
        act_s = np.zeros(P.shape[1], dtype=np.int64)
        st, f, na_ = _sqp_compiled(sm_kind, D, yo, wn, pen, G, gn, beta[c], maxit, act_s)
        if st == 0:
            return 0, f, f
    elif kind == 4:
        _, Ah, ch, _, Qh, maxit = sm
        mA = Ah.shape[0]
        mf, p = P.shape
        k = 0
        pos = np.full(mf, -1, dtype=np.int64)   # free point -> its row of G
        for i in range(mf):
            if sgn[c, i] != 0:
                pos[i] = k
                k += 1
        G = np.empty((k, p))
        for i in range(mf):
            if sgn[c, i] != 0:
                G[pos[i]] = P[i] * sgn[c, i]
        ne0 = 0
        nw0 = 0
        for a in range(nact[c]):
            if act[c, a] < mA:
                ne0 += 1
            elif pos[act[c, a] - mA] >= 0:
                nw0 += 1
        E0 = np.empty(ne0, dtype=np.int64)
        W0 = np.empty(nw0, dtype=np.int64)
        ne0 = 0
        nw0 = 0
        for a in range(nact[c]):
            v = act[c, a]
            if v < mA:
                E0[ne0] = v
                ne0 += 1
            elif pos[v - mA] >= 0:
                W0[nw0] = pos[v - mA]
                nw0 += 1
        st, f, its, E1, W1 = _hinge_qp_node(Ah, ch, Qh, G, beta[c], maxit, E0, W0)
        if st == 0:
            na = 0
            for v in E1:
                act[c, na] = v
                na += 1
            for q in W1:
                for i in range(mf):
                    if pos[i] == q:
                        act[c, na] = mA + i
                        na += 1
                        break
            nact[c] = na
            return 0, f, f
        nact[c] = 0
    else:
        rows, signs = _fixed(sgn[c], prow)
        ok, m, bv, b, h2, fb = _solve_call(key, wh[c], rows, signs, False)
        if ok == 0:
            beta[c] = b
            wh[c] = h2
            return fb, m, bv
        return -1, 0.0, 0.0
    # a compiled solve failed: the fallback solver on the Python side
    rows, signs = _fixed(sgn[c], prow)
    ok, m, bv, b, h2, fb = _solve_call(key, -1, rows, signs, True)
    if ok == 0:
        beta[c] = b
        if kind == 0:
            nact[c] = 0  # no active set goes with this point: the children's QPs start cold
        return 1, m, bv
    return -1, 0.0, 0.0


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
    f2 = np.zeros((0, p))
    i2 = np.zeros((0, p), dtype=np.int64)
    f1 = np.zeros(0)
    i1 = np.zeros(0, dtype=np.int64)
    return (np.zeros((0, 0), dtype=np.int8), i1, f1, f1, f1, np.zeros(0, dtype=np.bool_), f2, i2, i1, f2,
            np.zeros((0, 0), dtype=np.int64), np.zeros((0, 0), dtype=np.bool_), i1, f2, i2, i1, f2, i1, f1, i1, i1,
            i1, np.zeros((0, 0, 0)), f1, np.zeros(5))


# ------------------------------------------------------------------ Python entry points
_EMPTY_I = np.zeros(0, dtype=np.int64)
_EMPTY_B = np.zeros(0, dtype=np.bool_)
RESUME_MAX_BYTES = 8 << 20
"""A search stopped by its node budget keeps its state for a later resume only up to this size."""


class SearchState:
    """The open nodes of a search stopped by its node budget (queue, node pool, best value), to be
    resumed by the next search of the same replicate with the same set-up (``SearchOptions.resume``)."""

    __slots__ = ("kind", "shape", "arrays")

    def __init__(self, kind, shape, arrays):
        self.kind, self.shape, self.arrays = kind, shape, arrays

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in self.arrays))

    @classmethod
    def keep(cls, kind, shape, arrays):
        """The state trimmed to the node slots in use, or None when it is larger than RESUME_MAX_BYTES."""
        count = int(arrays[-1][2])
        trimmed = tuple(np.ascontiguousarray(a[:count]) for a in arrays[:-1]) + (arrays[-1].copy(),)
        state = cls(kind, shape, trimmed)
        return state if state.nbytes <= RESUME_MAX_BYTES else None

    def matches(self, kind, shape) -> bool:
        return self.kind == kind and self.shape == shape


def run_search(P, prow, cplus, cminus, C_forced, n, alpha, L_hat, *, root_beta, root_m, root_bv=None,
               best0=0.0, kind=KIND_EXTERNAL, quad=None, lp=None, smooth=None, hinge_qp=None, context=None,
               options=None, lazy=None, record=False, python_realise=False):
    """Run the compiled loop on a prepared replicate (``bnb.branch_and_bound`` and the engine call it).

    ``quad``: (H, Hinv, beta_u, L_u) of a positive definite quadratic loss (flip-cost bound
    and branching; required by KIND_QP), else None. ``lp``: a set-up
    :class:`~cudbound.search.lp_node_solver.HingeLPNodeSolver` (KIND_LP). ``smooth``: a set-up
    :class:`~cudbound.search.smooth_node_solver.SmoothNodeSolver` of a built-in loss whose
    resample nothing separates (KIND_SMOOTH). ``hinge_qp``: a set-up
    :class:`~cudbound.search.hinge_qp_node_solver.HingeQPNodeSolver` (KIND_HINGE_QP). ``context``: the
    :class:`SearchContext` (entered) for external solves, fallbacks and the tree.
    ``python_realise``: decide every realisability question on the Python side
    (``realisability.realise``: witness points, the feasibility QP, then an LP) instead of
    the warm-started compiled QP (an independent check; the ``python`` and ``cvxpy`` engines).
    ``options.resume``: a :class:`SearchState` of this replicate to continue from (ignored for
    KIND_EXTERNAL, whose warm starts live in Python, or when it does not match).
    Returns a :class:`~cudbound.search.options.SearchOutcome` (``state``: a
    :class:`SearchState` when the search stopped at its node budget, else None; ``screened``,
    ``seconds`` and ``tree`` are the caller's to fill).
    """
    options = options if options is not None else SearchOptions()
    P = np.ascontiguousarray(P, dtype=np.float64)
    p = P.shape[1]
    if quad is not None:
        H, Hinv, beta_u, L_u = (np.ascontiguousarray(quad[0], dtype=np.float64),
                                np.ascontiguousarray(quad[1], dtype=np.float64),
                                np.ascontiguousarray(quad[2], dtype=np.float64), float(quad[3]))
    else:
        H, Hinv, beta_u, L_u = np.zeros((p, p)), np.zeros((p, p)), np.zeros(p), 0.0
    if lp is not None:
        root = lp._root
        lp_args = (lp.cols, lp.norms, lp.c, int(lp.m), int(lp.n), root.basis, root.atup, int(lp._max_iter))
    else:
        lp_args = (np.zeros((0, p)), np.zeros(0), np.zeros(0), 0, 0, _EMPTY_I, _EMPTY_B, 0)
    if hinge_qp is not None:
        sm = (0, np.ascontiguousarray(hinge_qp.A, dtype=np.float64), np.ascontiguousarray(hinge_qp.c, dtype=np.float64),
              np.zeros(0), np.ascontiguousarray(hinge_qp.Q, dtype=np.float64), int(hinge_qp._maxit))
    elif smooth is not None:
        obj = smooth._objective(smooth.counts)
        sm = (int(obj.kind_id), np.ascontiguousarray(obj.D, dtype=np.float64),
              np.ascontiguousarray(obj.yo, dtype=np.float64), np.ascontiguousarray(obj.wn, dtype=np.float64),
              np.ascontiguousarray(obj.pen, dtype=np.float64), int(smooth.max_iter))
    else:
        sm = (0, np.zeros((0, p)), np.zeros(0), np.zeros(0), np.zeros((p, p)), 0)
    if lazy is None:
        lazy = kind != KIND_QP
    shape = (P.shape[0], p, int(lp_args[3]), bool(lazy))
    resume = options.resume
    resumable = kind != KIND_EXTERNAL and not record
    if not (resumable and isinstance(resume, SearchState) and resume.matches(kind, shape)):
        resume = None
    with _first_compile_notice(_search):
        out = _search(P, np.ascontiguousarray(prow, dtype=np.int64), np.ascontiguousarray(cplus, dtype=np.float64),
                      np.ascontiguousarray(cminus, dtype=np.float64), float(C_forced), float(n), float(alpha),
                      float(L_hat), float(best0), np.ascontiguousarray(root_beta, dtype=np.float64), float(root_m),
                      float(root_m if root_bv is None else root_bv), int(kind), quad is not None, H, Hinv, beta_u,
                      L_u, *lp_args, sm, int(context.key if context is not None else 0),
                      int(options.max_nodes or 0), float(options.time_limit or 0.0), bool(options.flip_cost),
                      BRANCHING[options.branching], -1.0 if options.floor is None else float(options.floor),
                      math.inf if options.stop_above is None else float(options.stop_above), bool(lazy),
                      bool(record), bool(python_realise), resume is not None,
                      resume.arrays if resume is not None else _placeholder_state(p))
    value, lower, status, nodes, solves, pruned, real, fallbacks, undecided, arrays = out
    state = None
    if resumable and status == 1 and options.max_nodes and nodes >= options.max_nodes:
        state = SearchState.keep(kind, shape, arrays)
    return SearchOutcome(value=float(value), lower=float(lower), status=STATUS[status], nodes=int(nodes),
                         solves=int(solves), pruned=int(pruned), realisability_checks=int(real),
                         fallbacks=int(fallbacks), undecided=bool(undecided), state=state)


@njit(cache=True)
def _replicate(Zu, group, y, counts, H, g, c, beta_hat, alpha, screen, key, max_nodes, time_limit, use_flip,
               branching, floor, stop_above, resume, state):
    """Set-up (``compiled._replicate_setup``) and search of one replicate of a positive
    definite quadratic loss, all in compiled code.

    Returns (ok, value, lower, status, nodes, solves, pruned, real_solves, n_screened, fallbacks, state, mf)."""
    ok, P, cplus, cminus, C_forced, n_screened, Hinv, beta_u, L_u, L_hat, uidx = _replicate_setup(
        Zu, group, y, counts, H, g, c, beta_hat, alpha, screen)
    if not ok:
        return False, 0.0, 0.0, 2, 0, 0, 0, 0, 0, 0, _no_state(H.shape[0]), 0
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
    best0 = _value_at(P, norms, cplus, cminus, C_forced, beta_hat, L_hat, n, alpha, L_hat, 1e-9)
    prow = np.empty(mf, dtype=np.int64)
    for f in range(mf):
        prow[f] = rep[uidx[f]]
    if resume and state[0].shape[1] != mf:
        resume = False
    upper, best, status, nodes, solves, pruned, real, fallbacks, undecided, out_state = _search(
        P, prow, cplus, cminus, C_forced, n, alpha, L_hat, best0, beta_u, L_u, L_u, 0, True, H, Hinv, beta_u, L_u,
        np.zeros((0, p)), np.zeros(0), np.zeros(0), 0, 0, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.bool_),
        0, (0, np.zeros((0, p)), np.zeros(0), np.zeros(0), np.zeros((p, p)), 0), key, max_nodes, time_limit, use_flip,
        branching, floor, stop_above, False, False, False, resume, state)
    return True, upper, best, status, nodes, solves, pruned, real, n_screened, fallbacks, out_state, mf


def compiled_replicate(Zu, group, y, counts, H, g, c, beta_hat, alpha, options, context=None):
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
    with _first_compile_notice(_replicate):
        out = _replicate(Zu, group, y, np.asarray(counts, dtype=np.float64), np.ascontiguousarray(H, dtype=np.float64),
                         np.ascontiguousarray(g, dtype=np.float64), float(c), beta_hat, float(alpha),
                         bool(options.screen), int(context.key if context is not None else 0),
                         int(options.max_nodes or 0), float(options.time_limit or 0.0),
                         bool(options.flip_cost), BRANCHING[options.branching],
                         -1.0 if options.floor is None else float(options.floor),
                         math.inf if options.stop_above is None else float(options.stop_above),
                         resume is not None, resume.arrays if resume is not None else _placeholder_state(p))
    ok, value, lower, status, nodes, solves, pruned, real, screened, fallbacks, arrays, mf = out
    if not ok:
        return None
    state = None
    if status == 1 and options.max_nodes and nodes >= options.max_nodes:
        state = SearchState.keep(KIND_QP, shape, arrays)
    return SearchOutcome(value=float(value), lower=float(lower), status=STATUS[status], nodes=int(nodes),
                         solves=int(solves), pruned=int(pruned), realisability_checks=int(real),
                         screened=int(screened), fallbacks=int(fallbacks), state=state)
