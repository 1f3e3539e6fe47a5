"""The solve of one node of the search, by the solver its kind names (chosen when the loop compiles).

A node fixes the signs s_j of some free points; its minimum is min L(b) s.t. s_j phi_j'b >= 0
over those points (the cone of the node). :func:`_solve` solves node ``c`` of the node pool in
place (its minimiser ``beta[c]`` and its warm start) with:

- ``KIND_QP``: the dual active-set QP of :mod:`cudbound.search.node_qp`, warm-started from the
  parent's active set;
- ``KIND_LP``: the certified simplex of :mod:`cudbound.search.lp_node_solver`, warm-started from
  the parent's basis;
- ``KIND_SMOOTH``: the compiled SQP of :mod:`cudbound.search.smooth_node_solver`, from the
  parent's minimiser;
- ``KIND_HINGE_QP``: the primal active-set method of :mod:`cudbound.search.hinge_qp_node_solver`,
  from the parent's minimiser and working sets;
- ``KIND_EXTERNAL``: a NodeSolver object on the Python side (:mod:`cudbound.search.context`).

A compiled solve that fails goes to the fallback solver on the Python side (cvxpy).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, types
from numba.core.errors import TypingError
from numba.extending import overload

from .codes import KIND_EXTERNAL, KIND_HINGE_QP, KIND_LP, KIND_QP, KIND_SMOOTH, QP_OPTIMAL
from .context import _solve_call
from .hinge_qp_node_solver import _hinge_qp_node
from .lp_node_solver import DUAL_BOUND, OPTIMAL, _solve_node_ws
from .node_qp import _gi_ws
from .records import compiled_record
from .smooth_node_solver import _sqp_compiled

__all__ = ["NodeSolve", "NodeSolveRef"]

NodeSolve = namedtuple("NodeSolve", [
    "kind",       # KIND_*
    "H",          # KIND_QP: L(b) = L_u + (b - beta_u)'H(b - beta_u) ...
    "Qinv_loss",  # ... H^-1 / 2 ...
    "beta_u",     # ... the unconstrained minimiser ...
    "L_u",        # ... and its loss
    "lp",         # KIND_LP: (columns, their norms, c, m, n, root basis, root at-upper, max iterations)
    "sm",         # KIND_SMOOTH: (loss id, D, yo, wn, penalty, max iterations);
                  # KIND_HINGE_QP: (0, A, c, [Frobenius norm of Q], Q, max iterations)
    "key",        # the SearchContext of the Python side
    "ws",         # node_qp._workspace (shared with the realisability QP)
    "hq",         # KIND_HINGE_QP: the hinge QP's scratch (a HingeWork; in the loop, its HingeWorkRef)
])
"""What the node solvers of one search need, besides the replicate and the node pool."""
NodeSolveRef = compiled_record(NodeSolve, "The solver data as the compiled loop holds it (by reference).")


@njit(cache=True, inline="always")
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


def _solve(c, rep, slv, pool, level=np.inf):
    """Solve node c in place (``pool.beta[c]`` and its warm start). Returns (ok, m, loss at
    beta[c]): ok 0 solved, 1 solved by the fallback solver, -1 not solved, 2 (KIND_LP with a
    finite ``level``) stopped by a dual bound: the node's minimum is at least ``level`` (m is
    the level; nothing else is set).

    Compiled code only, by the solver ``slv.kind`` names, a constant of the loop
    (:data:`~cudbound.search.records.CONSTANT_FIELDS`): the loop is compiled for one solver."""
    raise TypeError("node_solve._solve runs in compiled code only")


@overload(_solve)
def _solve_for_kind(c, rep, slv, pool, level=np.inf):
    kind = slv.field_dict["kind"]
    if not isinstance(kind, types.IntegerLiteral):
        raise TypingError(f"the node solver's kind must be a constant of the loop, not {kind}")
    solver = _BY_KIND[kind.literal_value]

    def impl(c, rep, slv, pool, level=np.inf):
        return solver(c, rep, slv, pool, level)
    return impl


@njit(cache=True, inline="always")
def _fallback(c, rep, slv, pool, qp):
    """After a compiled solve that failed: the fallback solver's (1, m, loss at its minimiser), or
    (-1, 0, 0) when it fails too; ``qp``: the compiled solver was the QP, whose active set does not
    go with the fallback's point."""
    rows, signs = _fixed(pool.signs[c], rep.prow)
    st, m, bv, b, h2, fb = _solve_call(slv.key, -1, rows, signs, True)
    if st == 0:
        pool.beta[c] = b
        if qp:
            pool.n_active[c] = 0  # no active set goes with this point: the children's QPs start cold
        return 1, m, bv
    return -1, 0.0, 0.0


@njit(cache=True, inline="always")
def _solve_external(c, rep, slv, pool, level):
    """KIND_EXTERNAL: the NodeSolver on the Python side, from the node's warm start (its handle)."""
    rows, signs = _fixed(pool.signs[c], rep.prow)
    ok, m, bv, b, h2, fb = _solve_call(slv.key, pool.handle[c], rows, signs, False)
    if ok == 0:
        pool.beta[c] = b
        pool.handle[c] = h2
        return fb, m, bv
    return -1, 0.0, 0.0


@njit(cache=True, inline="always")
def _solve_qp(c, rep, slv, pool, level):
    """KIND_QP: the dual active-set QP from the parent's active set."""
    if pool.n_active[c] == 0:
        pool.beta[c] = slv.beta_u  # an empty active set is dual feasible only at the unconstrained minimiser
    st, na_ = _gi_ws(slv.Qinv_loss, rep.P, rep.norms, pool.signs[c], 0.0, slv.beta_u, pool.beta[c], pool.active[c],
                     pool.dual[c], pool.n_active[c], slv.ws)
    pool.n_active[c] = na_
    if st == QP_OPTIMAL:
        m = slv.L_u + _quad_form(slv.H, pool.beta[c], slv.beta_u)
        return 0, m, m
    return _fallback(c, rep, slv, pool, True)


@njit(cache=True, inline="always")
def _solve_lp(c, rep, slv, pool, level):
    """KIND_LP: the certified simplex from the parent's basis, stopped by its dual bound at ``level``."""
    lp_cols, lp_norms, lp_c, lp_m, lp_n, lp_basis, lp_atup, lp_maxit = slv.lp
    rows, signs = _fixed(pool.signs[c], rep.prow)
    st, its, f, gap, b, basis, atup = _solve_node_ws(lp_cols, lp_norms, lp_c, lp_m, lp_n, rows, signs,
                                                     pool.lp_basis[c], pool.lp_at_upper[c], lp_basis, lp_atup,
                                                     lp_maxit, slv.hq, level)
    if st == OPTIMAL:
        pool.beta[c] = b
        pool.lp_basis[c] = basis
        pool.lp_at_upper[c] = atup
        return 0, f, f
    if st == DUAL_BOUND:
        return 2, f, f
    return _fallback(c, rep, slv, pool, False)


@njit(cache=True, inline="always")
def _solve_smooth(c, rep, slv, pool, level):
    """KIND_SMOOTH: the compiled SQP from the parent's minimiser (and, with flip costs, from the
    gradient and Hessian there, which the pool keeps with it; the solve leaves those at its answer,
    and the rows its certificate holds active, as free points, in ``active[c, :n_active[c]]``)."""
    sm_kind, D, yo, wn, pen, maxit = slv.sm
    P = rep.P
    sgn = pool.signs
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
            gn[k] = rep.norms[i]
            k += 1
    act_s = np.zeros(P.shape[1], dtype=np.int64)
    cached = pool.grad.shape[1] > 0   # the pool keeps derivatives (else grad[c], hess[c] are empty)
    f0 = pool.minimum[c] if cached and np.isfinite(pool.grad[c, 0]) else np.nan   # known at the start
    st, f, na_ = _sqp_compiled((sm_kind, D, yo, wn, pen), G, gn, pool.beta[c], maxit, act_s, f0, pool.grad[c],
                               pool.hess[c])
    if st != 0 and cached:
        pool.grad[c, 0] = np.nan   # not the derivatives at the point the fallback finds
    if st == 0:
        k = 0   # the certified active rows (indices of G's rows) as free points: the cone flip cost
        a = 0
        for i in range(sgn.shape[1]):
            if sgn[c, i] != 0:
                for q in range(na_):
                    if act_s[q] == k:
                        pool.active[c, a] = i
                        a += 1
                k += 1
        pool.n_active[c] = a
        return 0, f, f
    pool.n_active[c] = 0   # the fallback's point comes with no active set
    return _fallback(c, rep, slv, pool, False)


@njit(cache=True, inline="always")
def _solve_hinge_qp(c, rep, slv, pool, level):
    """KIND_HINGE_QP: the primal active-set method. The warm start ``active[c, :n_active[c]]`` holds a
    point k of the resample as k and a fixed free point j as mA + j (points first)."""
    _, Ah, ch, Qn, Qh, maxit = slv.sm
    ws = slv.hq
    P = rep.P
    act = pool.active
    mA = Ah.shape[0]
    mf, p = P.shape
    G, gn, pos, E, W = ws.G, ws.gn, ws.pos, ws.E, ws.W
    k = 0
    for i in range(mf):   # the node's rows: G[pos[i]] = s_i P_i
        s = pool.signs[c, i]
        if s != 0:
            for q in range(p):
                G[k, q] = P[i, q] * s
            gn[k] = rep.norms[i]
            pos[k] = i
            k += 1
    ne0 = np.int64(0)   # not the constant 0: _hinge_qp_node would compile once more for its literal type
    nw0 = np.int64(0)
    for a in range(pool.n_active[c]):
        v = act[c, a]
        if v < mA:
            E[ne0] = v
            ne0 += 1
        else:
            for q in range(k):
                if pos[q] == v - mA:
                    W[nw0] = q
                    nw0 += 1
                    break
    st, f, its, ne, nw = _hinge_qp_node(Ah, ch, Qh, Qn[0], ws, k, pool.beta[c], maxit, ne0, nw0)
    if st == 0:
        for j in range(ne):
            act[c, j] = E[j]
        for j in range(nw):
            act[c, ne + j] = mA + pos[W[j]]
        pool.n_active[c] = ne + nw
        return 0, f, f
    pool.n_active[c] = 0
    return _fallback(c, rep, slv, pool, False)


_BY_KIND = {KIND_QP: _solve_qp, KIND_LP: _solve_lp, KIND_SMOOTH: _solve_smooth, KIND_HINGE_QP: _solve_hinge_qp,
            KIND_EXTERNAL: _solve_external}
"""The node solver of each kind, each returning what :func:`_solve` returns."""
