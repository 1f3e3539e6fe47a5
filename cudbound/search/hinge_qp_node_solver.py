"""Nodes of the hinge loss plus a quadratic penalty (``hinge_ridge``, what ``SVC(kernel="linear")``
and ``LinearSVC(loss="hinge")`` map onto): an exact primal active-set method, compiled.

A node asks for

    m = min F(b) = sum_i c_i max(0, 1 - a_i'b) + b'Q b   s.t.  G b >= 0,

with a_i = y_i phi_i (identical rows merged, their weights c_i = nu_i / n summed), Q positive
semidefinite (the ridge penalty; in orthonormal coordinates a full matrix whose null space is the
unpenalised intercept) and G the node's signed rows. F is convex and piecewise quadratic: on
each piece a point is *below* the margin (a_i'b < 1: the linear term -c_i a_i'b), *above* it (no
term) or *on* it (a_i'b = 1). The method is the primal active-set method for convex quadratic
programs (Nocedal & Wright 2006, sec. 16.5) run on these pieces, as the SVM active-set solvers
do (Scheinberg 2006; Vogt & Kecman 2005): a working set of points held on the margin (E) and
of cone rows held at 0 (W), at most p independent rows N. Each iteration minimises the quadratic
of the current piece, b'Qb - c_L'b (c_L: the weights of the points below), on the face
{N d = 0}:

- the reduced Hessian Z'QZ (Z an orthonormal basis of the face) positive definite: the Newton
  step; singular (the unpenalised direction is free): along a null direction with a non-zero
  slope the piece decreases linearly, and the step is the ray in that direction (a point
  below the margin with a_i'd > 0 always ends it, because F >= 0);
- a ratio test stops the step at the first point that reaches the margin (it joins E) or the
  first cone row that reaches 0 (it joins W);
- at the face minimiser the multipliers of 2Qb - c_L = sum_E beta_i a_i + sum_W mu_k G_k show
  optimality: beta_i in [0, c_i] and mu_k >= 0. Otherwise the worst one leaves the working
  set (a point with beta_i > c_i goes below the margin, one with beta_i < 0 above it).

The answer is accepted only with the KKT certificate of the whole convex problem, checked from
the point alone (to ``CHECK_TOL`` relative, as the smooth solver's): every cone row holds, each
point is on the side its term assumes, and the multipliers above lie in their ranges with a
small stationarity residual. Then F(b) is the node's minimum (a KKT point of a convex problem is
a minimiser) and b a minimiser; F need not have a unique minimiser, and any one serves the
search (bounds use the value, lower bounds any point of the cone). A node the method does not
certify (a degenerate face, an iteration cap) raises :class:`NodeSolveError`, and the engine
hands it to cvxpy.

Warm start: the parent's minimiser moved onto the child's new hyperplane, when that point still
meets every other row; else b = 0, which lies in every node's closed cone.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..optim.linear_solve import cholesky
from .node_qp import _times_cols
from .node_solvers import NodeSolution, NodeSolveError, NodeSolver
from .replicate_setup import _screen_point

__all__ = ["HingeQPNodeSolver", "hinge_qp_parts"]

CHECK_TOL = 1e-7    # the KKT certificate, relative (as smooth_node_solver)
SIDE_TOL = 1e-10    # a point within this (relative) of the margin counts as on it
ZERO_EIG = 1e-10    # eigenvalues of the reduced Hessian below this fraction of the largest are zero


@njit(cache=True, inline="always")
def _col_dot(M, j, v):
    """M[:, j]'v (a column is not contiguous: np.dot on it warns and copies)."""
    s = 0.0
    for i in range(v.shape[0]):
        s += M[i, j] * v[i]
    return s


@njit(cache=True)
def _face_basis(N, r, p):
    """Orthonormal basis (p x (p - rank)) of {d : N[:r] d = 0}, and the rank of N[:r], by
    modified Gram-Schmidt with reorthogonalisation (p is small: no LAPACK call)."""
    U = np.zeros((p, p))
    rank = 0
    for j in range(r):
        v = N[j].copy()
        nv0 = math.sqrt(np.dot(v, v))
        for _ in range(2):
            for q in range(rank):
                v -= np.dot(U[q], v) * U[q]
        nv = math.sqrt(np.dot(v, v))
        if nv > 1e-10 * nv0 and nv > 0.0:
            U[rank] = v / nv
            rank += 1
    Z = np.zeros((p, p - rank))
    nz = 0
    for e in range(p):
        if rank + nz == p:
            break
        v = np.zeros(p)
        v[e] = 1.0
        for _ in range(2):
            for q in range(rank):
                v -= np.dot(U[q], v) * U[q]
            for q in range(nz):
                v -= _col_dot(Z, q, v) * Z[:, q]
        nv = math.sqrt(np.dot(v, v))
        if nv > 1e-6:
            Z[:, nz] = v / nv
            nz += 1
    return Z[:, :nz].copy(), rank


@njit(cache=True)
def _cholesky_solve(M, rhs, rel):
    """x with M x = rhs for a symmetric positive definite M (every Cholesky pivot above ``rel``
    times the largest diagonal entry); (ok, x)."""
    n = M.shape[0]
    L = np.zeros((n, n))
    dmax = 0.0
    for i in range(n):
        dmax = max(dmax, M[i, i])
    if not dmax > 0.0 or not cholesky(M, L, n, rel * dmax):
        return False, rhs.copy()
    x = rhs.copy()
    for i in range(n):
        for q in range(i):
            x[i] -= L[i, q] * x[q]
        x[i] /= L[i, i]
    for i in range(n - 1, -1, -1):
        for q in range(i + 1, n):
            x[i] -= L[q, i] * x[q]
        x[i] /= L[i, i]
    return True, x


@njit(cache=True)
def _quad(Q, x):
    """x'Q x, without allocating."""
    v = 0.0
    p = x.shape[0]
    for i in range(p):
        row = 0.0
        for j in range(p):
            row += Q[i, j] * x[j]
        v += x[i] * row
    return v


@njit(cache=True)
def _objective(A, c, Q, b):
    f = 0.0
    for i in range(A.shape[0]):
        t = 1.0 - np.dot(A[i], b)
        if t > 0.0:
            f += c[i] * t
    return f + _quad(Q, b)


@njit(cache=True)
def _multipliers(A, G, Q, c, side, b, E, ne, W, nw):
    """Least-squares multipliers of 2Qb - c_L = A_E' beta + G_W' mu (c_L over the points below),
    and the residual norm. Returns (beta (ne), mu (nw), residual, gradient scale)."""
    p = b.shape[0]
    g = 2.0 * (Q @ b)
    scale = 0.0
    inE = np.zeros(A.shape[0], dtype=np.bool_)
    for j in range(ne):
        inE[E[j]] = True
    for i in range(A.shape[0]):
        if side[i] < 0 and not inE[i]:
            g -= c[i] * A[i]
            scale += c[i] * math.sqrt(np.dot(A[i], A[i]))
    r = ne + nw
    lam = np.zeros(r)
    if r > 0:
        M = np.empty((p, r))
        for j in range(ne):
            M[:, j] = A[E[j]]
        for j in range(nw):
            M[:, ne + j] = G[W[j]]
        ok, lam = _cholesky_solve(M.T @ M, M.T @ g, 1e-12)
        if not ok:
            lam = np.linalg.lstsq(M, g)[0]
        res = g - M @ lam
    else:
        res = g
    gs = max(scale, math.sqrt(np.dot(g, g)), 2.0 * math.sqrt(np.sum(Q * Q)) * max(1.0, math.sqrt(np.dot(b, b))))
    return lam[:ne].copy(), lam[ne:].copy(), math.sqrt(np.dot(res, res)), gs


@njit(cache=True)
def _certified(A, G, Q, c, side, b, E, ne, W, nw):
    """The KKT certificate from the point b and its working sets (module docstring)."""
    bs = max(1.0, math.sqrt(np.dot(b, b)))
    for k in range(G.shape[0]):
        if np.dot(G[k], b) < -CHECK_TOL * bs * math.sqrt(np.dot(G[k], G[k])):
            return False
    inE = np.zeros(A.shape[0], dtype=np.bool_)
    for j in range(ne):
        inE[E[j]] = True
    for i in range(A.shape[0]):
        an = math.sqrt(np.dot(A[i], A[i]))
        t = np.dot(A[i], b) - 1.0
        tol = CHECK_TOL * max(1.0, an * bs)
        if inE[i]:
            if abs(t) > tol:
                return False
        elif side[i] < 0 and t > tol:
            return False
        elif side[i] > 0 and t < -tol:
            return False
    beta, mu, res, gs = _multipliers(A, G, Q, c, side, b, E, ne, W, nw)
    for j in range(ne):
        slack = CHECK_TOL * max(1.0, c[E[j]])
        if beta[j] < -slack * gs or beta[j] > c[E[j]] + slack * gs:
            return False
    for j in range(nw):
        if mu[j] < -CHECK_TOL * gs:
            return False
    return res <= CHECK_TOL * max(1.0, gs)


@njit(cache=True)
def _start_point(A, G, b, E0, W0):
    """The point nearest b on the face {a_E'x = 1, G_W x = 0} of the parent's working set plus
    the row b misses (the child's new one); (ok, working sets). ok is False when b misses more
    than one row, the face's rows are dependent, or the point misses a row of the cone."""
    p = b.shape[0]
    k = G.shape[0]
    miss = -1
    nmiss = 0
    bn = math.sqrt(np.dot(b, b))
    worst = 0.0
    for q in range(k):
        # rows the parent held at 0 are met to rounding only: a miss is a clear one
        v = np.dot(G[q], b) / math.sqrt(np.dot(G[q], G[q]))
        if v < -1e-9 * max(1.0, bn):
            nmiss += 1
            if v < worst:
                worst = v
                miss = q
    if nmiss > 1:
        return False, E0[:0].copy(), W0[:0].copy()
    W = []
    if miss >= 0:
        W.append(miss)
    for q in W0:
        if q != miss and len(W) < p:
            W.append(q)
    E = []
    for i in E0:
        if len(E) + len(W) < p:
            E.append(i)
    Ea = np.array(E, dtype=np.int64)
    Wa = np.array(W, dtype=np.int64)
    r = len(E) + len(W)
    if r == 0:
        return True, Ea, Wa
    N = np.empty((r, p))
    h = np.zeros(r)
    for j in range(len(E)):
        N[j] = A[Ea[j]]
        h[j] = 1.0
    for j in range(len(W)):
        N[len(E) + j] = G[Wa[j]]
    _, sv, _ = np.linalg.svd(N)
    if sv[r - 1] <= 1e-10 * sv[0]:
        return False, Ea[:0].copy(), Wa[:0].copy()
    y = np.linalg.solve(N @ N.T, N @ b - h)
    x = b - N.T @ y
    for q in range(k):
        if np.dot(G[q], x) < -1e-12 * math.sqrt(np.dot(G[q], G[q])) * max(1.0, math.sqrt(np.dot(x, x))):
            return False, Ea[:0].copy(), Wa[:0].copy()
    b[:] = x
    return True, Ea, Wa


@njit(cache=True)
def _hinge_qp_node(A, c, Q, G, b, maxit, E0, W0):
    """A node from its parent's minimiser b (overwritten by the answer) and working sets (E0:
    points, W0: rows of G): from :func:`_start_point` when it is found, else from b = 0 (in every
    closed cone) with empty working sets; a start that is not certified is retried from 0.
    Returns (status, F(b), iterations, E, W) of :func:`_hinge_qp`."""
    x0 = b.copy()
    ok, E, W = _start_point(A, G, b, E0, W0)
    if not ok:
        b[:] = 0.0
    status, f, its, E1, W1 = _hinge_qp(A, c, Q, G, b, maxit, E, W)
    if status != 0 and ok and np.any(x0 != 0.0):
        b[:] = 0.0
        status, f, its2, E1, W1 = _hinge_qp(A, c, Q, G, b, maxit, E[:0], W[:0])
        its += its2
    return status, f, its, E1, W1


@njit(cache=True)
def _hinge_qp(A, c, Q, G, b, maxit, E0, W0):
    """The active-set iteration from a point b of the closed cone (overwritten by the answer),
    with working sets E0 (points on the margin at b) and W0 (rows of G at 0 at b), independent.

    Each step minimises F over the face the working sets fix (:func:`_face_direction`), walks
    along that direction with an exact line search (:func:`_line_search`) that may add a point
    to E or a cone row to W, and at the face's minimiser drops the working row whose multiplier
    has the wrong sign (:func:`_leaving_row`), or certifies b.

    Returns (status, F(b), iterations, E, W): status 0 certified, 1 not certified, 2 iteration
    cap, 3 unbounded ray (cannot happen for c > 0; a numerical failure); E and W the final
    working sets."""
    m, p = A.shape
    k = G.shape[0]
    an_ = np.empty(m)
    for i in range(m):
        an_[i] = math.sqrt(np.dot(A[i], A[i]))
    gn_ = np.empty(k)
    for q in range(k):
        gn_[q] = math.sqrt(np.dot(G[q], G[q]))
    side = np.empty(m, dtype=np.int64)  # -1 below the margin, +1 above (or on it, outside E)
    for i in range(m):
        side[i] = -1 if np.dot(A[i], b) < 1.0 else 1
    E = np.zeros(p, dtype=np.int64)
    W = np.zeros(p, dtype=np.int64)
    inE = np.zeros(m, dtype=np.bool_)
    inW = np.zeros(k, dtype=np.bool_)
    ne = 0
    nw = 0
    for i in E0:
        E[ne] = i
        inE[i] = True
        ne += 1
    for q in W0:
        W[nw] = q
        inW[q] = True
        nw += 1
    N = np.zeros((p, p))
    g = np.empty(p)
    tk = np.empty(m)
    ik = np.empty(m, dtype=np.int64)
    for it in range(maxit):
        r = ne + nw
        for j in range(ne):
            N[j] = A[E[j]]
        for j in range(nw):
            N[ne + j] = G[W[j]]
        Z, rank = _face_basis(N, r, p)
        if rank < r:
            return 1, _objective(A, c, Q, b), it, E[:ne].copy(), W[:nw].copy()  # a dependent working set: degenerate, not handled
        for j in range(p):
            v = 0.0
            for q in range(p):
                v += Q[j, q] * b[q]
            g[j] = 2.0 * v
        for i in range(m):
            if side[i] < 0 and not inE[i]:
                for j in range(p):
                    g[j] -= c[i] * A[i, j]
        d, ray = _face_direction(Q, Z, g)
        dn = math.sqrt(np.dot(d, d))
        moved = False
        slope = np.dot(d, g)
        # no descent left (to rounding): the face minimiser, whatever d's length
        if dn > 0.0 and -slope > 1e-15 * max(1.0, _objective(A, c, Q, b)):
            stop_t, join, join_kind, moved = _line_search(A, c, Q, G, b, d, slope, dn, side, inE, inW, an_, gn_, tk, ik)
            if stop_t < 0.0:
                return 3, _objective(A, c, Q, b), it, E[:ne].copy(), W[:nw].copy()
            b += stop_t * d
            if join >= 0:
                if ne + nw >= p:
                    return 1, _objective(A, c, Q, b), it, E[:ne].copy(), W[:nw].copy()
                if join_kind == 1:
                    inE[join] = True
                    E[ne] = join
                    ne += 1
                else:
                    inW[join] = True
                    W[nw] = join
                    nw += 1
                continue
            if moved or ray:
                continue
        # the face minimiser: check the multipliers
        out, out_kind, leave_above = _leaving_row(A, G, Q, c, side, b, E, ne, W, nw)
        if out < 0:
            ok = _certified(A, G, Q, c, side, b, E, ne, W, nw)
            return (0 if ok else 1), _objective(A, c, Q, b), it, E[:ne].copy(), W[:nw].copy()
        if out_kind == 1:
            i = E[out]
            side[i] = 1 if leave_above else -1
            inE[i] = False
            for j in range(out, ne - 1):
                E[j] = E[j + 1]
            ne -= 1
        else:
            inW[W[out]] = False
            for j in range(out, nw - 1):
                W[j] = W[j + 1]
            nw -= 1
    return 2, _objective(A, c, Q, b), maxit, E[:ne].copy(), W[:nw].copy()


@njit(cache=True)
def _face_direction(Q, Z, g):
    """The step to the minimiser of F on the face spanned by Z's columns, from the gradient g:
    the Newton step Z (Z'2QZ)^-1 Z'(-g) when Z'2QZ is positive definite (Cholesky), else from
    its eigendecomposition: a ray (``ray`` True) along a direction of zero curvature with a
    slope, or the least-norm step on the positive eigenvalues."""
    p = g.shape[0]
    dim = Z.shape[1]
    d = np.zeros(p)
    ray = False
    if dim == 0:
        return d, ray
    # Hr = Z'(2Q)Z and gr = Z'g, by loops (p is small)
    QZ = np.zeros((p, dim))
    _times_cols(Q, Z, QZ, p, dim, p)
    Hr = np.empty((dim, dim))
    gr = np.empty(dim)
    for i in range(dim):
        v = 0.0
        for q in range(p):
            v += Z[q, i] * g[q]
        gr[i] = v
        for j in range(i + 1):
            v = 0.0
            for q in range(p):
                v += Z[q, i] * QZ[q, j]
            Hr[i, j] = 2.0 * v
            Hr[j, i] = 2.0 * v
    # positive definite on the face (the usual case): the Newton step by Cholesky
    pd, ur = _cholesky_solve(Hr, -gr, 1e-10)
    if pd:
        for i in range(p):
            v = 0.0
            for j in range(dim):
                v += Z[i, j] * ur[j]
            d[i] = v
        return d, ray
    w, V = np.linalg.eigh(Hr)
    top = max(w[dim - 1], 0.0)
    gn = math.sqrt(np.dot(g, g))
    # a direction of zero curvature with a slope: the ray
    best = 0.0
    for j in range(dim):
        if w[j] <= ZERO_EIG * max(top, 1e-300) or top == 0.0:
            slope = _col_dot(V, j, gr)
            if abs(slope) > 1e-12 * max(1.0, gn) and abs(slope) > abs(best):
                best = slope
                u = -np.sign(slope) * V[:, j]
                d = Z @ u
                ray = True
    if not ray:
        ur = np.zeros(dim)
        for j in range(dim):
            if w[j] > ZERO_EIG * top and top > 0.0:
                ur -= (_col_dot(V, j, gr) / w[j]) * V[:, j]
        d = Z @ ur
    return d, ray


@njit(cache=True)
def _line_search(A, c, Q, G, b, d, slope, dn, side, inE, inW, an_, gn_, tk, ik):
    """Exact line search along d from b: F(b + t d) is convex and piecewise quadratic in t,
    with a kink where a point's margin crosses 1; walk the kinks in order (crossing a point
    switches its ``side``), stop at the minimum, at a kink that holds it (the point joins E:
    join_kind 1) or at the first cone row that reaches 0 (it joins W: join_kind 2).

    Returns (t, join, join_kind, moved): t < 0 when F falls without end along d (a ray);
    ``moved`` when a kink was crossed."""
    m = A.shape[0]
    k = G.shape[0]
    kappa = 2.0 * _quad(Q, d)
    t_cone = np.inf
    q_cone = -1
    for q in range(k):
        if inW[q]:
            continue
        sq = np.dot(G[q], d)
        if sq < -1e-13 * gn_[q] * dn:
            tq = -np.dot(G[q], b) / sq
            if tq < 0.0:
                tq = 0.0
            if tq < t_cone:
                t_cone = tq
                q_cone = q
    nb = 0
    for i in range(m):
        if inE[i]:
            continue
        si = np.dot(A[i], d)
        if abs(si) <= 1e-13 * an_[i] * dn:
            continue
        if (side[i] < 0 and si > 0.0) or (side[i] > 0 and si < 0.0):
            ti = (1.0 - np.dot(A[i], b)) / si
            if ti < 0.0:
                ti = 0.0
            if ti <= t_cone:
                tk[nb] = ti
                ik[nb] = i
                nb += 1
    t_prev = 0.0
    cur = slope
    moved = False
    # the slope's round-off scale: a slope within it of 0 is 0 (a kink whose weights
    # cancel the slope exactly must hold the point, not be crossed)
    sscale = abs(slope)
    for o in range(nb):
        sscale += c[ik[o]] * abs(np.dot(A[ik[o]], d))
    sscale *= 1e-12
    for o in range(nb):
        # the next kink (selection: usually only the first few are reached)
        jmin = o
        for o2 in range(o + 1, nb):
            if tk[o2] < tk[jmin] or (tk[o2] == tk[jmin] and ik[o2] < ik[jmin]):
                jmin = o2
        tk[o], tk[jmin] = tk[jmin], tk[o]
        ik[o], ik[jmin] = ik[jmin], ik[o]
        i = ik[o]
        ti = tk[o]
        if kappa > 0.0 and cur < 0.0 and t_prev - cur / kappa <= ti:
            return t_prev - cur / kappa, -1, 0, moved
        left = cur + kappa * (ti - t_prev)
        right = left + c[i] * abs(np.dot(A[i], d))
        if right >= -sscale:
            return ti, i, 1, moved
        side[i] = -side[i]
        cur = right
        t_prev = ti
        moved = True
    if kappa > 0.0 and cur < 0.0 and t_prev - cur / kappa <= t_cone:
        return t_prev - cur / kappa, -1, 0, moved
    if cur >= -sscale:
        return t_prev, -1, 0, moved
    if q_cone >= 0:
        return t_cone, q_cone, 2, moved
    return -1.0, -1, 0, moved


@njit(cache=True)
def _leaving_row(A, G, Q, c, side, b, E, ne, W, nw):
    """At the face's minimiser, the working row whose multiplier is most out of its range
    (beyond CHECK_TOL): (its position in E or W, 1 for E / 2 for W, whether a point of E
    leaves above its margin); position -1 when every multiplier is in range."""
    beta, mu, res, gs = _multipliers(A, G, Q, c, side, b, E, ne, W, nw)
    worst = CHECK_TOL * gs
    out = -1
    out_kind = 0
    for j in range(ne):
        v = -beta[j] if -beta[j] > beta[j] - c[E[j]] else beta[j] - c[E[j]]
        if v > worst:
            worst = v
            out = j
            out_kind = 1
    for j in range(nw):
        if -mu[j] > worst:
            worst = -mu[j]
            out = j
            out_kind = 2
    leave_above = out_kind == 1 and not beta[out] > c[E[out]]
    return out, out_kind, leave_above


@njit(cache=True)
def _screen_compiled(A, c, Q, Phi, sides, can_flip, b_root, E_root, maxit, level, L_max):
    """The screening solves of ``problem.ReplicateProblem`` for the hinge loss plus a quadratic
    penalty in one compiled loop: for each row ``Phi[j]`` not yet known to flip (``can_flip``,
    updated in place), the node with the single row -sides_j Phi_j'b >= 0, from the root's
    minimiser ``b_root`` and margin set ``E_root`` (as :meth:`HingeQPNodeSolver.solve` starts a
    screening solve). Returns (out, solves) as ``lp_node_solver._screen_compiled``: out_j = 1
    when the least loss is >= level, 0 when not or skipped, -1 when the solve was not certified."""
    k, p = Phi.shape
    out = np.zeros(k, dtype=np.int64)
    solves = 0
    G = np.empty((1, p))
    b = np.empty(p)
    W0 = np.zeros(0, dtype=np.int64)
    for j in range(k):
        if can_flip[j]:
            continue
        for i in range(p):
            G[0, i] = -sides[j] * Phi[j, i]
            b[i] = b_root[i]
        status, f, its, E, W = _hinge_qp_node(A, c, Q, G, b, maxit, E_root, W0)
        if status != 0 or not np.isfinite(f):
            out[j] = -1
            continue
        solves += 1
        _screen_point(out, j, f, level, L_max, Phi, sides, can_flip, b)
    return out, solves


def hinge_qp_parts(loss):
    """(penalty matrix function) when ``loss`` is the hinge loss plus a quadratic penalty b'Qb whose
    hinge part computes :class:`~cudbound.losses.HingeLoss`'s loss; else None."""
    from ..design import PenalisedLoss
    from ..losses import HingeLoss, RidgeLoss, same_math

    if (same_math(loss, RidgeLoss) or same_math(loss, PenalisedLoss)) and same_math(loss.base, HingeLoss):
        return loss.penalty_matrix
    return None


class HingeQPNodeSolver(NodeSolver):
    """Exact node solver for the hinge loss plus a quadratic penalty (module docstring).

    ``warm`` is the parent's minimiser (and the replicate it belongs to)."""

    def __init__(self, loss, design, y, *, max_iter=None):
        penalty = hinge_qp_parts(loss)
        if penalty is None:
            raise ValueError("HingeQPNodeSolver solves the hinge loss plus a quadratic penalty only")
        self.loss = loss
        self.design = np.ascontiguousarray(design, dtype=float)
        self.y = np.ascontiguousarray(y, dtype=float)
        Q = np.asarray(penalty(self.design), dtype=float)
        self.Q = np.ascontiguousarray(0.5 * (Q + Q.T))
        self.max_iter = max_iter
        self.stats = {"solves": 0, "iterations": 0, "failures": 0}
        self._token = 0
        self._root_warm = None

    def set_weights(self, counts):
        counts = np.asarray(counts, dtype=float)
        n = len(self.y)
        on = counts > 0
        rows = self.y[on, None] * self.design[on]
        self.A, inverse = np.unique(rows, axis=0, return_inverse=True)
        self.A = np.ascontiguousarray(self.A)
        self.c = np.bincount(inverse.ravel(), weights=counts[on] / n, minlength=self.A.shape[0])
        self._maxit = self.max_iter or 20 * (self.A.shape[0] + self.design.shape[1]) + 50
        self._token += 1
        self._root_warm = None

    def screen_batch(self, rows, sides, can_flip, level, L_max):
        """The screening solves of the design rows (``problem.ReplicateProblem._screen_by_solves``)
        in compiled code, each from the root's minimiser as :meth:`solve` starts them: (out, solves)
        of :func:`_screen_compiled`."""
        p = self.design.shape[1]
        warm = self._root_warm
        b, E = (np.zeros(p), np.zeros(0, dtype=np.int64)) if warm is None or warm[1] != self._token else \
            (np.ascontiguousarray(warm[0], dtype=float), np.ascontiguousarray(warm[2], dtype=np.int64))
        out, solves = _screen_compiled(self.A, self.c, self.Q, np.ascontiguousarray(self.design[rows]),
                                       np.ascontiguousarray(sides, dtype=float), can_flip, b, E, self._maxit,
                                       float(level), float(L_max))
        self.stats["solves"] += int(solves)
        return out, solves

    def solve(self, rows, signs, warm=None):
        rows = np.asarray(rows, dtype=np.int64)
        signs = np.asarray(signs, dtype=float)
        G = np.ascontiguousarray(self.design[rows] * signs[:, None])
        p = self.design.shape[1]
        b = np.zeros(p)
        E0 = W0 = np.zeros(0, dtype=np.int64)
        if warm is None and len(rows):
            warm = self._root_warm  # a screening solve: from the root's minimiser
        if warm is not None and warm[1] == self._token:
            b = np.array(warm[0], dtype=float)
            E0 = warm[2]
            # the parent's active rows (design row, sign) as rows of this node's G
            where = {(int(r), float(s)): j for j, (r, s) in enumerate(zip(rows, signs))}
            W0 = np.array([where[key] for key in warm[3] if key in where], dtype=np.int64)
        self.stats["solves"] += 1
        status, value, its, E, W = _hinge_qp_node(self.A, self.c, self.Q, G, b, self._maxit, E0, W0)
        self.stats["iterations"] += its
        if status != 0 or not np.isfinite(value):
            self.stats["failures"] += 1
            raise NodeSolveError(f"hinge QP active set: status {status}")
        active = [(int(rows[q]), float(signs[q])) for q in W]
        sol = NodeSolution(float(value), b, (b, self._token, E, active))
        if len(rows) == 0:
            self._root_warm = sol.warm
        return sol
