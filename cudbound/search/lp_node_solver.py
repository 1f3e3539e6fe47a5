"""Exact hinge-loss node solves: a compiled, warm-started simplex method with a certificate.

A node of the search fixes signs s_k on some rows; its hinge problem is the linear program

    (P)  min  sum_i c_i xi_i   s.t.  a_i'b + xi_i >= 1,  xi_i >= 0  (points with w_i > 0),
                                     g_k'b >= 0  (the node's rows, g_k = s_k phi_k),

with a_i = y_i phi_i and c_i = w_i / n (identical a_i are merged, their weights added).
Its value is the node's m = min of L(D^(b), .) over the closed cone. Its LP dual is

    (D)  max  sum_i u_i   s.t.  sum_i u_i a_i + sum_k v_k g_k = 0,  0 <= u_i <= c_i,  v_k >= 0,

an LP with only p equality rows. (D) is solved by the primal simplex method with bounded
variables (Bertsimas & Tsitsiklis 1997, ch. 3; Nocedal & Wright 2006, ch. 13), in
compiled code, with these choices:

- **Starting basis.** p artificial columns e_j fixed at 0 (a fixed column in (D) is a
  free row in (P): nothing changes). A basis is p column indices; the nonbasic u_i sit at
  0 or c_i, the nonbasic v_k at 0.
- **Warm start.** A child adds one row to (P), i.e. one column v_new >= 0 to (D): the
  parent's optimal basis, with v_new nonbasic at 0, is still feasible for (D), so the
  child starts from it (usually a few pivots). Screening solves start from the root's basis.
- **Every iteration from scratch.** The p x p basis matrix is factorised anew (LU with
  partial pivoting) at each pivot, so round-off does not build up.
- **Pricing.** Largest reduced cost divided by the column norm; after 5 consecutive
  degenerate pivots, Bland's rule until the objective increases again, so the method
  cannot cycle (Bertsimas & Tsitsiklis, sec. 3.4). An iteration limit is a failure.

**Certificate.** At the final basis B (columns B_r, costs c_B, nonbasic u at their upper
bound N_up) everything is recomputed by dense solves:

    b = B^-T c_B          (the simplex multipliers: a point of (P)),
    x_B = -B^-1 sum_{j in N_up} c_j a_j   (the basic values of (D)).

The solution is accepted only when

1. (D) is feasible: every x_B within its bounds up to 1e-9 c_max (a wrong basis is
   rejected; the dual point is then clipped into its bounds, so 0 <= u <= c, v >= 0
   hold exactly, and its residual r = sum u_i a_i + sum v_k g_k is computed);
2. (P) is feasible at b: g_k'b >= -1e-11 |g_k| |b| for every row of the node;
3. the duality gap closes: with f(b) = sum_i c_i max(0, 1 - a_i'b) (the hinge loss at b)
   and the weak-duality bound  f(b') >= sum_i u_i - r'b'  for every b' of the cone
   (0 <= u_i <= c_i, v >= 0; weak duality: Bertsimas & Tsitsiklis sec. 4.3, Nocedal &
   Wright sec. 13.1),

       f(b) - (sum_i u_i - |r| |b|) <= 1e-12 max(1, f(b)) + 1e-14 sum_i c_i (1 + |a_i'b|)

   (the last term is the round-off of f(b) itself, which matters only when b is large, as
   on a cone where the loss tends to 0; sum_i c_i = 1, so for |a_i'b| of order 1 it is
   about 1e-14).

Then m lies between sum_i u_i - |r||b*| and f(b) (b* a minimiser; |r| is round-off,
about 1e-17), so the returned value f(b) is m to about 1e-12 (exact to rounding). When
any check fails, or the basis is singular, or the iteration limit is hit, :meth:`solve`
raises :class:`NodeSolveError` and the engine hands the node to cvxpy.

**Vertex walk.** The same optimum is usually reached in fewer steps in (P) itself. The start
basis has a vertex in (P): b = B^-T c_B, where its u columns hold their points on the margin
(a_i'b = 1) and its v columns their rows at 0 (for a child: the parent's minimiser). From it,
the primal active-set method of ``hinge_qp_node_solver`` with no penalty (Q = 0) walks from
vertex to vertex of the node's cone: the child's new row joins the working set and each of
the parent's rows in turn is left out (an edge of the parent's vertex meets the new
hyperplane; the meeting point of least loss is kept); then each step follows the steepest
descent within the current face with an exact line search that crosses, in one step, every
margin the simplex on (D) crosses by one bound flip each (recorded nodes at n = 300: 11 steps
against 45 pivots). Its final working set, p independent rows, is read as a basis of (D) (the
points on the margin and the rows at 0 basic, the points below the margin at their upper
bound) and must pass the certificate above, so every node is certified as before; a walk that
fails, or ends on a face of the cone that is not a vertex, leaves the node to the simplex.

**Dual bound.** Every basis the simplex visits is a point of (D), and by the weak duality of
the certificate the node's minimum is at least its objective sum_i u_i less |r||b*| (b* a
minimiser; r the residual of the dual equality, round-off); the objective rises at every
pivot. A search that only needs to know whether the minimum reaches a *level* (``core``: the
least minimum at which the node's bound is at most the best value found) stops the simplex as
soon as sum_i u_i of its dual point, clipped into its bounds, less |r| max(1, |y|) (y = B^-T c_B,
the current point of (P)) exceeds the level by 1e-9 relative (``_STOP_MARGIN``): the node is
then pruned without its minimiser. The margin stands for |r||b*| unless |b*| exceeds about
1e-9 / |r| (|r| is of order 1e-17), the same standard as the certificate's. Such a node would
have been pruned after a full solve too (its bound at the minimum is at most the best value),
and its minimiser's value, at most that bound, could not have raised the best value, so the
search is the same node for node. A lazily solved child is pruned right after its solve four
times in five (hinge, n = 100), so a node with a level first gets up to ``_STOP_PIVOTS``
pivots of the simplex with the dual bound, and the vertex walk only when they do not settle it.

Measured (``benchmarks/hinge_nodes.py``, CPU time per node on nodes recorded from real
searches, n = 40, p = 3 and n = 50, p = 5): a median of 20-25 us per solve (36-40 us
through the engine's wrapper), against 3-4 ms through cvxpy (CLARABEL), 0.6-0.7 ms with
HiGHS warm-started through highspy and 3-4 ms with scipy's ``linprog(method="highs-ds")``.
``_solve_node`` is itself compiled, so a compiled search can call it without Python.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..losses import HingeLoss, same_math
import math

from ..optim.linear_solve import lu_factor, lu_solve, lu_solve_t
from .hinge_qp_node_solver import HingeWorkRef, _hinge_qp_node, _hinge_work
from .replicate_setup import _screen_point
from .node_solvers import NodeSolution, NodeSolveError, NodeSolver

__all__ = ["HingeLPNodeSolver", "HingeBasis", "certify"]

OPTIMAL, ITERATION_LIMIT, SINGULAR, UNBOUNDED, CERTIFICATE, DUAL_BOUND = 0, 1, 2, 3, 4, 5
STATUS_TEXT = {ITERATION_LIMIT: "iteration limit", SINGULAR: "singular basis", UNBOUNDED: "unbounded dual",
               CERTIFICATE: "certificate failed", DUAL_BOUND: "stopped at the dual bound"}

_PRICE = 1e-12     # reduced cost tolerance (relative to 1 + |col||b|)
_PIVOT = 1e-9      # pivots below this fraction of the largest entry are skipped
_FEAS_D = 1e-9     # certificate: bound violation of (D), relative to c_max
_FEAS_P = 1e-11    # certificate: g_k'b >= -_FEAS_P |g_k||b|
_GAP = 1e-12       # certificate: duality gap, relative to max(1, f(b)) ...
_EPS = 1e-14       # ... plus this times sum_i c_i (1 + |a_i'b|) (the round-off of f(b) at a large b)
_DEGENERATE = 5    # consecutive degenerate pivots before Bland's rule
_LU_PIVOT = 1e-14  # the basis is singular when an LU pivot is at most this times its largest entry
_STOP_MARGIN = 1e-9  # the dual bound stops a node only this far (relative) above its level
_STOP_PIVOTS = 8   # pivots of the simplex before the vertex walk takes over a node that has a level


# ---------------------------------------------------------------- columns of (D)
# column j of (D): j < m: a_j (u_j in [0, c_j], cost 1); m <= j < m + n: s_k phi_k with
# k = j - m (v_k >= 0 when s_k != 0, fixed at 0 when s_k = 0); m + n <= j: e_{j - m - n}
# (artificial, fixed at 0). ``cols`` stacks [a; phi; I] row-wise.
@njit(cache=True)   # once per pivot; the loops over columns write it out (a call, even inlined, counts references)
def _column(cols, sgn, m, n, j, out):
    p = cols.shape[1]
    f = 1.0
    if m <= j < m + n:
        f = float(sgn[j - m])
    for i in range(p):
        out[i] = f * cols[j, i]


@njit(cache=True)
def _factor_basis(cols, sgn, m, n, basis, B, LU, perm, col):
    p = cols.shape[1]
    for r in range(p):     # column basis[r] (:func:`_column`, written out: no reference counts per column)
        j = basis[r]
        f = float(sgn[j - m]) if m <= j < m + n else 1.0
        for i in range(p):
            B[i, r] = f * cols[j, i]
    return lu_factor(B, LU, perm, p, _LU_PIVOT)


@njit(cache=True)
def _basic_values(cols, c, m, LU, perm, atup, xB):
    """x_B = -B^-1 sum_{u_j at its upper bound} c_j a_j."""
    p = cols.shape[1]
    rhs = np.zeros(p)
    for j in range(m):
        if atup[j]:
            for i in range(p):
                rhs[i] -= c[j] * cols[j, i]
    lu_solve(LU, perm, rhs, xB, p)


@njit(cache=True)
def _multipliers(m, basis, LU, perm, y):
    """y = B^-T c_B (cost 1 for a u column, 0 otherwise): the point b of (P)."""
    p = LU.shape[0]
    cB = np.zeros(p)
    for r in range(p):
        if basis[r] < m:
            cB[r] = 1.0
    lu_solve_t(LU, perm, cB, y, np.empty(p), p)


@njit(cache=True)
def _upper(c, m, n, sgn, j):
    if j < m:
        return c[j]
    if j < m + n and sgn[j - m] != 0:
        return np.inf
    return 0.0


# ---------------------------------------------------------------- simplex on (D)
@njit(cache=True)
def _dual_lower(cols, c, m, n, sgn, basis, atup, xB, y):
    """The dual bound at a basis (module docstring, "Dual bound"): its dual point clipped into
    its bounds, sum_i u_i - |r| max(1, |y|) with r the point's residual and y = B^-T c_B."""
    p = cols.shape[1]
    dual = 0.0
    resid = np.zeros(p)
    inb = -np.ones(m, dtype=np.int64)
    for r in range(p):
        if basis[r] < m:
            inb[basis[r]] = r
    for j in range(m):
        if inb[j] >= 0:
            x = min(max(xB[inb[j]], 0.0), c[j])
        elif atup[j]:
            x = c[j]
        else:
            continue
        dual += x
        for i in range(p):
            resid[i] += x * cols[j, i]
    for r in range(p):
        j = basis[r]
        if j >= m:
            x = max(xB[r], 0.0) if j < m + n else 0.0
            f = float(sgn[j - m]) if j < m + n else 1.0
            for i in range(p):
                resid[i] += x * f * cols[j, i]
    rn = 0.0
    yn = 0.0
    for i in range(p):
        rn += resid[i] * resid[i]
        yn += y[i] * y[i]
    return dual - math.sqrt(rn) * max(1.0, math.sqrt(yn))


@njit(cache=True)
def _simplex(cols, norms, c, m, n, sgn, basis, atup, max_iter, level=np.inf):
    """Bounded primal simplex on (D) from a feasible basis; updates basis and atup in place.
    With a finite ``level``, it stops (DUAL_BOUND) as soon as the dual bound of its basis
    (:func:`_dual_lower`) is at least the level plus ``_STOP_MARGIN`` relative.

    Returns (status, iterations). Long because the pivot loop keeps its LU factors, pricing,
    ratio test and bound flips in one compiled frame (no allocation per pivot)."""
    p = cols.shape[1]
    ncol = m + n + p
    B = np.empty((p, p))
    LU = np.empty((p, p))
    perm = np.empty(p, dtype=np.int64)
    col = np.empty(p)
    xB = np.empty(p)
    y = np.empty(p)
    dx = np.empty(p)
    inbasis = np.zeros(ncol, dtype=np.bool_)
    for r in range(p):
        inbasis[basis[r]] = True
    degenerate = 0
    for it in range(max_iter):
        if not _factor_basis(cols, sgn, m, n, basis, B, LU, perm, col):
            return SINGULAR, it
        _basic_values(cols, c, m, LU, perm, atup, xB)
        _multipliers(m, basis, LU, perm, y)
        if level < np.inf:
            dual = 0.0   # the dual objective sum_i u_i, unclipped: the cheap test first
            for j in range(m):
                if atup[j]:
                    dual += c[j]
            for r in range(p):
                if basis[r] < m:
                    dual += xB[r]
            stop = level + _STOP_MARGIN * max(1.0, abs(level)) if level > -np.inf else -np.inf
            if dual >= stop and _dual_lower(cols, c, m, n, sgn, basis, atup, xB, y) >= stop:
                return DUAL_BOUND, it
        ynorm = 0.0
        for i in range(p):
            ynorm += y[i] * y[i]
        ynorm = np.sqrt(ynorm)
        bland = degenerate >= _DEGENERATE
        q, direction, best = -1, 0, 0.0
        for j in range(m + n):
            if inbasis[j]:
                continue
            s = 1.0
            if j >= m:
                if sgn[j - m] == 0:
                    continue
                s = float(sgn[j - m])
            t = 0.0
            for i in range(p):
                t += cols[j, i] * y[i]
            t *= s
            tol = _PRICE * (1.0 + norms[j] * ynorm)
            if j < m:
                d = 1.0 - t
                if atup[j]:
                    if d >= -tol:
                        continue
                    dirj = -1
                else:
                    if d <= tol or c[j] == 0.0:
                        continue
                    dirj = 1
            else:
                d = -t
                if d <= tol:
                    continue
                dirj = 1
            score = abs(d) / norms[j] if norms[j] > 0.0 else np.inf
            if q < 0 or (not bland and score > best):
                q, direction, best = j, dirj, score
                if bland:
                    break
        if q < 0:
            return OPTIMAL, it
        _column(cols, sgn, m, n, q, col)
        lu_solve(LU, perm, col, dx, LU.shape[0])     # x_B changes by -direction * t * dx
        big = 0.0
        for i in range(p):
            big = max(big, abs(dx[i]))
        piv_tol = _PIVOT * big
        step = _upper(c, m, n, sgn, q)   # the entering variable's own range
        r_out = -1
        for i in range(p):
            di = -direction * dx[i]
            if abs(di) <= piv_tol:
                continue
            j = basis[i]
            if di < 0.0:
                ti = max(xB[i], 0.0) / (-di)
            else:
                if m <= j < m + n and sgn[j - m] != 0:   # no upper bound (:func:`_upper`, written out)
                    continue
                hi = c[j] if j < m else 0.0
                ti = max(hi - xB[i], 0.0) / di
            if r_out < 0 and ti < step:
                r_out, step = i, ti
            elif r_out >= 0 and ti <= step:
                if ti < step:
                    r_out, step = i, ti
                elif bland:
                    if basis[i] < basis[r_out]:
                        r_out = i
                elif abs(dx[i]) > abs(dx[r_out]):
                    r_out = i
        if step == np.inf:
            return UNBOUNDED, it
        if r_out < 0:                    # bound flip of the entering u (a v has no upper bound)
            atup[q] = not atup[q]
            degenerate = 0
            continue
        j_out = basis[r_out]
        if j_out < m:
            atup[j_out] = (-direction * dx[r_out]) > 0.0   # it left at its upper bound
        if q < m:
            atup[q] = False
        inbasis[j_out] = False
        inbasis[q] = True
        basis[r_out] = q
        if step > 0.0:
            degenerate = 0
        else:
            degenerate += 1
    return ITERATION_LIMIT, max_iter


@njit(cache=True)
def _basis_workspace(p):
    """Arrays for factoring a basis: B, its LU factors, the permutation, a column, x_B."""
    return np.empty((p, p)), np.empty((p, p)), np.empty(p, dtype=np.int64), np.empty(p), np.empty(p)


@njit(cache=True)
def _certify(cols, c, m, n, sgn, basis, atup, beta):
    """The certificate of the module docstring; fills beta. Returns (ok, f(b), dual bound, gap)."""
    p = cols.shape[1]
    B, LU, perm, col, xB = _basis_workspace(p)
    if not _factor_basis(cols, sgn, m, n, basis, B, LU, perm, col):
        return False, np.nan, np.nan, np.nan
    _basic_values(cols, c, m, LU, perm, atup, xB)
    _multipliers(m, basis, LU, perm, beta)
    cmax = 0.0
    for j in range(m):
        cmax = max(cmax, c[j])
    # 1. (D) feasible; the dual point clipped into its bounds and its residual
    x = np.zeros(m + n + p)
    for j in range(m):
        if atup[j]:
            x[j] = c[j]
    for r in range(p):
        j = basis[r]
        hi = _upper(c, m, n, sgn, j)
        if xB[r] < -_FEAS_D * cmax or xB[r] > hi + _FEAS_D * cmax or not np.isfinite(xB[r]):
            return False, np.nan, np.nan, np.nan
        x[j] = min(max(xB[r], 0.0), hi)
    resid = np.zeros(p)
    dual = 0.0
    for j in range(m + n + p):
        if x[j] != 0.0:
            f = x[j] * float(sgn[j - m]) if m <= j < m + n else x[j]   # x_j times column j (:func:`_column`)
            for i in range(p):
                resid[i] += f * cols[j, i]
            if j < m:
                dual += x[j]
    bnorm = 0.0
    rnorm = 0.0
    for i in range(p):
        bnorm += beta[i] * beta[i]
        rnorm += resid[i] * resid[i]
    bnorm, rnorm = np.sqrt(bnorm), np.sqrt(rnorm)
    # 2. (P) feasible at b: the node's rows
    for k in range(n):
        if sgn[k] != 0:
            t = 0.0
            nk = 0.0
            for i in range(p):
                t += cols[m + k, i] * beta[i]
                nk += cols[m + k, i] * cols[m + k, i]
            if sgn[k] * t < -_FEAS_P * np.sqrt(nk) * bnorm:
                return False, np.nan, np.nan, np.nan
    # 3. the duality gap (beyond the round-off of f itself: eps sum_i c_i (1 + |a_i'b|))
    f = 0.0
    fscale = 0.0
    for j in range(m):
        t = 1.0
        for i in range(p):
            t -= cols[j, i] * beta[i]
        if t > 0.0:
            f += c[j] * t
        fscale += c[j] * (2.0 + abs(t))
    lower = dual - rnorm * bnorm
    gap = f - lower
    ok = np.isfinite(f) and gap <= _GAP * max(1.0, f) + _EPS * fscale
    return ok, f, lower, gap


@njit(cache=True)
def _feasible_start(cols, c, m, n, sgn, basis, atup):
    """True when ``basis`` is a non-singular basis of the node's (D) whose basic values are
    within their bounds (a parent's optimal basis always is: the child only adds a column)."""
    p = cols.shape[1]
    B, LU, perm, col, xB = _basis_workspace(p)
    cmax = 0.0
    for j in range(m):
        cmax = max(cmax, c[j])
    for r in range(p):
        j = basis[r]
        if m <= j < m + n and sgn[j - m] == 0:
            return False
        for q in range(r):
            if basis[q] == j:
                return False
    if not _factor_basis(cols, sgn, m, n, basis, B, LU, perm, col):
        return False
    _basic_values(cols, c, m, LU, perm, atup, xB)
    for r in range(p):
        if not (xB[r] >= -_FEAS_D * cmax and xB[r] <= _upper(c, m, n, sgn, basis[r]) + _FEAS_D * cmax):
            return False
    return True


@njit(cache=True)
def _vertex_walk(cols, c, m, n, rows, signs, start, ws, max_iter, basis, atup, beta):
    """The node's optimal basis found in (P) (module docstring, "Vertex walk"): the active-set
    method of ``hinge_qp_node_solver`` with Q = 0 from the vertex of the basis ``start`` (its
    u columns the points on the margin, its v columns the rows at 0, its point b = B^-T c_B),
    its final working sets read as a basis of (D) (``basis``, and ``atup``: the points below
    the margin), its point into ``beta``. Returns (found, iterations): False when the method
    fails or ends on a face that is not a vertex (fewer than p working rows)."""
    p = cols.shape[1]
    k = rows.shape[0]
    B, LU, perm, col, xB = ws.QZ, ws.Hr, ws.Enew, ws.v, ws.rhs
    for r in range(p):
        for i in range(p):
            B[i, r] = 0.0
    # the start's point b = B^-T c_B (its v columns enter B as s_k phi_k: their signs below)
    for r in range(p):
        j = start[r]
        f = 1.0
        if m <= j < m + n:
            f = 0.0
            for q in range(k):
                if rows[q] == j - m:
                    f = signs[q]
        for i in range(p):
            B[i, r] = f * cols[j, i]
    if not lu_factor(B, LU, perm, p, _LU_PIVOT):
        return False, 0
    for r in range(p):
        col[r] = 1.0 if start[r] < m else 0.0
    lu_solve_t(LU, perm, col, beta, ws.gr, p)
    G, gn, E, W = ws.G, ws.gn, ws.E, ws.W
    for q in range(k):
        s = 0.0
        for i in range(p):
            G[q, i] = signs[q] * cols[m + rows[q], i]
            s += G[q, i] * G[q, i]
        gn[q] = math.sqrt(s)
    ne0 = np.int64(0)   # not the constant 0: _hinge_qp_node would compile once more for its literal type
    nw0 = np.int64(0)
    for r in range(p):
        j = start[r]
        if j < m:
            E[ne0] = j
            ne0 += 1
        elif j < m + n:
            for q in range(k):
                if rows[q] == j - m:
                    W[nw0] = q
                    nw0 += 1
    st, f, its, ne, nw = _hinge_qp_node(cols[:m], c, ws.Qzero, 0.0, ws, k, beta, max_iter, ne0, nw0)
    if st != 0 or ne + nw != p:
        return False, its
    for j in range(ne):
        basis[j] = E[j]
    for j in range(nw):
        basis[ne + j] = m + rows[W[j]]
    for j in range(m):
        atup[j] = ws.side[j] < 0 and not ws.inE[j]
    return True, its


@njit(cache=True)
def _solve_node(cols, norms, c, m, n, rows, signs, basis0, atup0, root_basis, root_atup, max_iter, work):
    """:func:`_solve_node_ws` with the scratch ``work`` (a ``HingeWork`` of the points, with room
    for the node's rows) and no level, for callers outside the compiled search."""
    return _solve_node_ws(cols, norms, c, m, n, rows, signs, basis0, atup0, root_basis, root_atup, max_iter,
                          HingeWorkRef(*work), np.inf)


@njit(cache=True)
def _solve_node_ws(cols, norms, c, m, n, rows, signs, basis0, atup0, root_basis, root_atup, max_iter, ws, level):
    """One node: its signs, the start (the parent's basis when it is a feasible basis of the
    node's (D), else the root's, else the artificial one); with a finite ``level``, up to
    ``_STOP_PIVOTS`` pivots of the simplex that stop at the dual bound (status DUAL_BOUND, f
    the bound: the node's minimum is at least the level); then the vertex walk from the start
    (:func:`_vertex_walk`), else the simplex from it, and the certificate.

    Returns (status, iterations, f(b), gap, b, basis, atup)."""
    p = cols.shape[1]
    sgn = np.zeros(n, dtype=np.int64)
    for k in range(rows.shape[0]):
        sgn[rows[k]] = 1 if signs[k] > 0 else -1
    if _feasible_start(cols, c, m, n, sgn, basis0, atup0):
        basis, atup = basis0.copy(), atup0.copy()
    else:  # not a basis of this node's (D) (not expected from a parent): start from the root's
        basis, atup = root_basis.copy(), root_atup.copy()
        if not _feasible_start(cols, c, m, n, sgn, basis, atup):
            for r in range(p):
                basis[r] = m + n + r
            atup[:] = False
    beta = np.zeros(p)
    if level < np.inf:
        # (an optimum the pivots reach is not kept: the node's minimiser is the walk's, as without
        # a level, so that the search does not depend on the level)
        db, da = basis.copy(), atup.copy()
        status, its = _simplex(cols, norms, c, m, n, sgn, db, da, min(_STOP_PIVOTS, max_iter), level)
        if status == DUAL_BOUND:
            return DUAL_BOUND, its, level, np.nan, beta, db, da
    if ws.an.shape[0] == m:
        vb, va = basis.copy(), atup.copy()
        found, its = _vertex_walk(cols, c, m, n, rows, signs, basis, ws, max_iter, vb, va, beta)
        if found:
            good, f, lower, gap = _certify(cols, c, m, n, sgn, vb, va, beta)
            if good:
                return OPTIMAL, its, f, gap, beta, vb, va
    status, its = _simplex(cols, norms, c, m, n, sgn, basis, atup, max_iter)
    if status != OPTIMAL:
        return status, its, np.nan, np.nan, beta, basis, atup
    good, f, lower, gap = _certify(cols, c, m, n, sgn, basis, atup, beta)
    if not good:
        return CERTIFICATE, its, f, gap, beta, basis, atup
    return OPTIMAL, its, f, gap, beta, basis, atup


# ---------------------------------------------------------------- Python interface
class HingeBasis:
    """A basis of (D) (the warm start a node hands its children)."""

    __slots__ = ("basis", "atup")

    def __init__(self, basis, atup):
        self.basis, self.atup = basis, atup


@njit(cache=True)
def _screen_compiled(cols, norms, c, m, n, rows, sides, can_flip, basis, atup, max_iter, Phi, level, L_max, work):
    """The screening solves of ``problem.ReplicateProblem`` for the plain hinge loss in one
    compiled loop: for each design row ``rows[j]`` not yet known to flip (``can_flip``, updated
    in place), the node LP with the single constraint -side_j phi_j'b >= 0, from the root's
    basis, stopped at the dual bound once it proves the least loss at least ``level`` (the point
    is then fixed, as after the full solve, which marks nothing when it is). Returns (out,
    solves) as ``smooth_node_solver._screen_compiled``: out_j = 1 when the least loss is >=
    level, 0 when not or skipped, -1 when the LP was not certified."""
    k = rows.shape[0]
    out = np.zeros(k, dtype=np.int64)
    solves = 0
    one = np.zeros(1, dtype=np.int64)
    sg = np.zeros(1)
    ws = HingeWorkRef(*work)
    for j in range(k):
        if can_flip[j]:
            continue
        one[0] = rows[j]
        sg[0] = -sides[j]
        status, its, f, gap, b, bs, at = _solve_node_ws(cols, norms, c, m, n, one, sg, basis, atup, basis, atup,
                                                        max_iter, ws, level)
        if status == DUAL_BOUND:   # the least loss is at least the level: fixed, as by the full solve
            solves += 1
            out[j] = 1
            continue
        if status != OPTIMAL:
            out[j] = -1
            continue
        solves += 1
        _screen_point(out, j, f, level, L_max, Phi, sides, can_flip, b)
    return out, solves


def _merge(A, c):
    """Identical rows of A merged, their weights added (fewer, non-degenerate columns)."""
    order = np.lexsort(A.T[::-1])
    S = A[order]
    new = np.ones(len(S), dtype=bool)
    new[1:] = np.any(S[1:] != S[:-1], axis=1)
    if new.all():
        return A, c
    group = np.cumsum(new) - 1
    return S[new], np.bincount(group, weights=c[order], minlength=int(group[-1]) + 1)


def certify(solver, rows, signs, warm):
    """The certificate of the module docstring at a given basis ``warm`` (a :class:`HingeBasis`)
    of the node (rows, signs) of ``solver``'s replicate: (ok, f(b), dual bound, gap, b)."""
    sgn = np.zeros(solver.n, dtype=np.int64)
    sgn[np.asarray(rows, dtype=np.int64)] = np.where(np.asarray(signs) > 0, 1, -1)
    beta = np.empty(solver.p)
    ok, f, lower, gap = _certify(solver.cols, solver.c, solver.m, solver.n, sgn, warm.basis.copy(),
                                 warm.atup.copy(), beta)
    return bool(ok), float(f), float(lower), float(gap), beta


class HingeLPNodeSolver(NodeSolver):
    """Node solver for the plain hinge loss: compiled simplex on the dual LP, certified.

    ``warm`` is the parent's :class:`HingeBasis` (None: the root's). ``stats`` counts
    solves, simplex iterations and failures (each failure raises :class:`NodeSolveError`).
    """

    def __init__(self, loss, design, y, *, max_iter=None):
        if not same_math(loss, HingeLoss):
            raise ValueError("HingeLPNodeSolver solves the plain hinge loss only")
        self.loss = loss
        self.design = np.ascontiguousarray(design, dtype=float)
        self.y = np.asarray(y, dtype=float)
        self.n, self.p = self.design.shape
        self.max_iter = max_iter
        self.stats = {"solves": 0, "iterations": 0, "failures": 0}
        self._root = None

    def set_weights(self, counts):
        counts = np.asarray(counts, dtype=float)
        on = counts > 0
        A, c = _merge(self.y[on, None] * self.design[on], counts[on] / self.n)
        self.m = len(c)
        self.c = np.ascontiguousarray(c, dtype=float)
        self.cols = np.ascontiguousarray(np.vstack([A, self.design, np.eye(self.p)]))
        self.norms = np.sqrt(np.einsum("ij,ij->i", self.cols, self.cols))
        ncol = self.m + self.n + self.p
        self._max_iter = int(self.max_iter if self.max_iter is not None else 50 * ncol + 100)
        self.work = _hinge_work(np.ascontiguousarray(A), self.n)   # the vertex walk's scratch
        start = HingeBasis(np.arange(self.m + self.n, ncol, dtype=np.int64), np.zeros(self.m, dtype=np.bool_))
        self._root = start
        try:
            self._root = self.solve(np.zeros(0, dtype=int), np.zeros(0)).warm
        except NodeSolveError:
            pass  # every node then starts from the artificial basis (and may fall back alone)

    def screen_batch(self, rows, sides, can_flip, level, L_max):
        """The screening solves of the design rows (``problem.ReplicateProblem._screen_by_solves``)
        in compiled code, from the root's basis: (out, solves) of :func:`_screen_compiled`."""
        out, solves = _screen_compiled(self.cols, self.norms, self.c, self.m, self.n,
                                       np.ascontiguousarray(rows, dtype=np.int64),
                                       np.ascontiguousarray(sides, dtype=float), can_flip, self._root.basis,
                                       self._root.atup, self._max_iter, np.ascontiguousarray(self.design[rows]),
                                       float(level), float(L_max), self.work)
        self.stats["solves"] += int(solves)
        return out, solves

    def solve(self, rows, signs, warm=None):
        start, root = (warm if isinstance(warm, HingeBasis) else self._root), self._root
        status, its, f, gap, beta, basis, atup = _solve_node(
            self.cols, self.norms, self.c, self.m, self.n, np.asarray(rows, dtype=np.int64),
            np.asarray(signs, dtype=np.float64), start.basis, start.atup, root.basis, root.atup, self._max_iter,
            self.work)
        self.stats["solves"] += 1
        self.stats["iterations"] += int(its)
        if status != OPTIMAL:
            self.stats["failures"] += 1
            raise NodeSolveError(f"hinge LP: {STATUS_TEXT[int(status)]} (gap {gap:.3g})")
        return NodeSolution(float(f), beta, HingeBasis(basis, atup))

