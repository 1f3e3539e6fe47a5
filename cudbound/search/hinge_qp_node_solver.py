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

Allocation-free: every scratch array is a field of a :data:`HingeWork` record, made once per
search (or per screening loop) by :func:`_hinge_work`; only the rare singular faces (an
eigendecomposition) and a rank-deficient multiplier system (least squares) allocate.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..optim.linear_solve import cholesky, cholesky_solve, forward_solve, row_basis, times_cols
from .node_solvers import NodeSolution, NodeSolveError, NodeSolver
from .records import compiled_record
from .replicate_setup import _screen_point

__all__ = ["HingeQPNodeSolver", "hinge_qp_parts", "HingeWork", "HingeWorkRef"]

CHECK_TOL = 1e-7    # the KKT certificate, relative (as smooth_node_solver)
SIDE_TOL = 1e-10    # a point within this (relative) of the margin counts as on it
ZERO_EIG = 1e-10    # eigenvalues of the reduced Hessian below this fraction of the largest are zero

HingeWork = namedtuple("HingeWork", [
    "an",       # (m) |a_i|
    "side",     # (m) -1 below the margin, +1 above (or on it, outside E)
    "inE",      # (m) in the working set E
    "tk", "ik",  # (m) the line search's kinks: where, and which point
    "G",        # (kmax, p) the node's rows s_k phi_k ...
    "gn",       # (kmax) ... their norms ...
    "inW",      # (kmax) ... in the working set W ...
    "pos",      # (kmax) ... the free point each came from (``node_solve``)
    "E", "W",   # (p) the working sets: points on the margin, rows of G at 0
    "Enew",     # (p) scratch of the warm start
    "N", "U", "R", "Z", "QZ", "Hr", "L", "M",  # (p, p) scratch
    "g", "gm", "d", "v", "gr", "ur", "lam", "rhs", "x0",  # (p) scratch
    "Qzero",    # (p, p) zeros: the penalty of the plain hinge loss
])
"""The scratch arrays of one hinge QP with m points, at most kmax cone rows and p unknowns."""
HingeWorkRef = compiled_record(HingeWork, "The scratch arrays as the kernels hold them (by reference).")


@njit(cache=True)
def _hinge_work(A, kmax):
    """A :data:`HingeWork` for the points A (m x p) and nodes of at most kmax rows."""
    m, p = A.shape
    an = np.empty(m)
    for i in range(m):
        an[i] = math.sqrt(np.dot(A[i], A[i]))
    kmax = max(kmax, 1)
    return HingeWork(an, np.empty(m, dtype=np.int64), np.zeros(m, dtype=np.bool_), np.empty(m),
                     np.empty(m, dtype=np.int64), np.empty((kmax, p)), np.empty(kmax), np.zeros(kmax, dtype=np.bool_),
                     np.empty(kmax, dtype=np.int64), np.empty(p, dtype=np.int64), np.empty(p, dtype=np.int64),
                     np.empty(p, dtype=np.int64), np.empty((p, p)), np.empty((p, p)), np.empty((p, p)),
                     np.empty((p, p)), np.empty((p, p)), np.empty((p, p)), np.empty((p, p)), np.empty((p, p)),
                     np.empty(p), np.empty(p), np.empty(p), np.empty(p), np.empty(p), np.empty(p), np.empty(p),
                     np.empty(p), np.empty(p), np.zeros((p, p)))


@njit(cache=True, inline="always")
def _dot_rows(X, i, Y, j, p):
    """X[i, :p]'Y[j, :p], without a temporary."""
    s = 0.0
    for q in range(p):
        s += X[i, q] * Y[j, q]
    return s


@njit(cache=True, inline="always")
def _dot_row(X, i, v, p):
    """X[i, :p]'v[:p]."""
    s = 0.0
    for q in range(p):
        s += X[i, q] * v[q]
    return s


@njit(cache=True)
def _face_basis(ws, r, p):
    """Orthonormal basis Z[:, :nz] of the face {d : N[:r] d = 0} (the complement of
    :func:`~cudbound.optim.linear_solve.row_basis`'s rows, from the unit vectors) and the rank of N[:r]: (nz, rank)."""
    U, Z, v = ws.U, ws.Z, ws.v
    rank = row_basis(ws.N, r, p, U, ws.R, v)
    nz = 0
    for e in range(p):
        if rank + nz == p:
            break
        for i in range(p):
            v[i] = 0.0
        v[e] = 1.0
        for _ in range(2):
            for q in range(rank):
                s = _dot_row(U, q, v, p)
                for i in range(p):
                    v[i] -= s * U[q, i]
            for q in range(nz):
                s = 0.0
                for i in range(p):
                    s += Z[i, q] * v[i]
                for i in range(p):
                    v[i] -= s * Z[i, q]
        nv = 0.0
        for i in range(p):
            nv += v[i] * v[i]
        nv = math.sqrt(nv)
        if nv > 1e-6:
            for i in range(p):
                Z[i, nz] = v[i] / nv
            nz += 1
    return nz, rank


@njit(cache=True)
def _cholesky_solve(M, n, rhs, x, L, rel):
    """x[:n] with M[:n, :n] x = rhs[:n] for a symmetric positive definite M (every Cholesky
    pivot above ``rel`` times the largest diagonal entry), L the factor's scratch; False when M
    is not."""
    dmax = 0.0
    for i in range(n):
        dmax = max(dmax, M[i, i])
    if not dmax > 0.0 or not cholesky(M, L, n, rel * dmax):
        return False
    cholesky_solve(L, rhs, x, n)
    return True


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
    p = b.shape[0]
    for i in range(A.shape[0]):
        t = 1.0 - _dot_row(A, i, b, p)
        if t > 0.0:
            f += c[i] * t
    return f + _quad(Q, b)


@njit(cache=True)
def _gradient(A, c, Q, ws, b, g):
    """g = 2Qb - sum c_i a_i over the points below the margin and outside E (the gradient of the
    current piece); returns sum c_i |a_i| over those points (the scale of its round-off)."""
    p = b.shape[0]
    for j in range(p):
        v = 0.0
        for q in range(p):
            v += Q[j, q] * b[q]
        g[j] = 2.0 * v
    side, inE, an = ws.side, ws.inE, ws.an
    scale = 0.0
    for i in range(A.shape[0]):
        if side[i] < 0 and not inE[i]:
            for j in range(p):
                g[j] -= c[i] * A[i, j]
            scale += c[i] * an[i]
    return scale


@njit(cache=True)
def _multipliers(A, c, Q, Qn, ws, b, ne, nw):
    """Least-squares multipliers lam = (beta (ne), mu (nw)) of 2Qb - c_L = A_E' beta + G_W' mu (c_L
    over the points below), into ``ws.lam``. Returns (residual norm, gradient scale)."""
    p = b.shape[0]
    E, W, G, M, gm, lam, rhs, Hr, L = ws.E, ws.W, ws.G, ws.M, ws.gm, ws.lam, ws.rhs, ws.Hr, ws.L
    scale = _gradient(A, c, Q, ws, b, gm)
    r = ne + nw
    gg = 0.0
    for i in range(p):
        gg += gm[i] * gm[i]
    if r > 0:
        # M = [A_E; G_W] (rows), normal equations (M M') lam = M gm
        for j in range(ne):
            for i in range(p):
                M[j, i] = A[E[j], i]
        for j in range(nw):
            for i in range(p):
                M[ne + j, i] = G[W[j], i]
        for a in range(r):
            rhs[a] = _dot_row(M, a, gm, p)
            for q in range(a + 1):
                v = _dot_rows(M, a, M, q, p)
                Hr[a, q] = v
                Hr[q, a] = v
        if not _cholesky_solve(Hr, r, rhs, lam, L, 1e-12):
            sol = np.linalg.lstsq(np.ascontiguousarray(M[:r].T), gm.copy())[0]
            for a in range(r):
                lam[a] = sol[a]
        res = 0.0
        for i in range(p):
            v = gm[i]
            for a in range(r):
                v -= M[a, i] * lam[a]
            res += v * v
    else:
        res = gg
    gs = max(scale, math.sqrt(gg), 2.0 * Qn * max(1.0, math.sqrt(np.dot(b, b))))
    return math.sqrt(res), gs


@njit(cache=True)
def _certified(A, c, ws, b, k, ne, nw, res, gs):
    """The KKT certificate from the point b, its working sets and their multipliers
    (:func:`_multipliers`, residual ``res``, scale ``gs``; module docstring)."""
    p = b.shape[0]
    G, gn, an, side, inE, E, lam = ws.G, ws.gn, ws.an, ws.side, ws.inE, ws.E, ws.lam
    bs = max(1.0, math.sqrt(np.dot(b, b)))
    for q in range(k):
        if _dot_row(G, q, b, p) < -CHECK_TOL * bs * gn[q]:
            return False
    for i in range(A.shape[0]):
        t = _dot_row(A, i, b, p) - 1.0
        tol = CHECK_TOL * max(1.0, an[i] * bs)
        if inE[i]:
            if abs(t) > tol:
                return False
        elif side[i] < 0 and t > tol:
            return False
        elif side[i] > 0 and t < -tol:
            return False
    for j in range(ne):
        slack = CHECK_TOL * max(1.0, c[E[j]])
        if lam[j] < -slack * gs or lam[j] > c[E[j]] + slack * gs:
            return False
    for j in range(nw):
        if lam[ne + j] < -CHECK_TOL * gs:
            return False
    return res <= CHECK_TOL * max(1.0, gs)


@njit(cache=True)
def _project(A, ws, k, b, ne, skip_e, nw, skip_w, x):
    """x = the point nearest b on the face {a_E'x = 1, G_W x = 0} of ``ws.E[:ne]`` and
    ``ws.W[:nw]`` less the positions ``skip_e``, ``skip_w`` (-1: none). False when the face's
    rows are dependent or x misses a row of the cone."""
    p = b.shape[0]
    G, gn, E, W, N, U, R, v, rhs = ws.G, ws.gn, ws.E, ws.W, ws.N, ws.U, ws.R, ws.v, ws.rhs
    r = 0
    for j in range(ne):
        if j != skip_e:
            for i in range(p):
                N[r, i] = A[E[j], i]
            rhs[r] = _dot_row(N, r, b, p) - 1.0
            r += 1
    for j in range(nw):
        if j != skip_w:
            for i in range(p):
                N[r, i] = G[W[j], i]
            rhs[r] = _dot_row(N, r, b, p)
            r += 1
    if row_basis(N, r, p, U, R, v) < r:
        return False
    # N = R U (R lower triangular): x = b - N'(NN')^-1 (Nb - h) = b - U'R^-1 (Nb - h)
    forward_solve(R, rhs, v, r)
    for i in range(p):
        s = b[i]
        for j in range(r):
            s -= U[j, i] * v[j]
        x[i] = s
    xn = max(1.0, math.sqrt(np.dot(x, x)))
    for q in range(k):
        if _dot_row(G, q, x, p) < -1e-12 * gn[q] * xn:
            return False
    return True


@njit(cache=True, inline="always")
def _drop(idx, pos, n):
    """Remove position ``pos`` (-1: none) from idx[:n]; the new length."""
    if pos < 0:
        return n
    for j in range(pos, n - 1):
        idx[j] = idx[j + 1]
    return n - 1


@njit(cache=True)
def _start_point(A, c, Q, ws, k, b, ne0, nw0):
    """The point nearest b on the face {a_E'x = 1, G_W x = 0} of the parent's working set
    (``ws.E[:ne0]``, ``ws.W[:nw0]``) plus the row b misses (the child's new one), into b; the
    new working sets into ``ws.E``, ``ws.W``. When that makes one row more than p, each of the
    parent's rows is tried as the one left out (an edge of the parent's vertex meets the new
    hyperplane there) and the point of least F is kept. Returns (ok, ne, nw): ok is False (b
    untouched) when b misses more than one row, or no face's rows are independent with a
    nearest point that meets every row of the cone."""
    p = b.shape[0]
    G, gn, E, W, Enew, x, best = ws.G, ws.gn, ws.E, ws.W, ws.Enew, ws.x0, ws.ur
    miss = -1
    nmiss = 0
    bn = math.sqrt(np.dot(b, b))
    worst = 0.0
    for q in range(k):
        # rows the parent held at 0 are met to rounding only: a miss is a clear one
        t = _dot_row(G, q, b, p) / gn[q]
        if t < -1e-9 * max(1.0, bn):
            nmiss += 1
            if t < worst:
                worst = t
                miss = q
    if nmiss > 1:
        return False, 0, 0
    nw = 0
    if miss >= 0:
        Enew[0] = miss
        nw = 1
    for j in range(nw0):
        if W[j] != miss and nw < p:
            Enew[nw] = W[j]
            nw += 1
    for j in range(nw):
        W[j] = Enew[j]
    ne = ne0
    if ne + nw <= p:
        if ne + nw == 0:
            return True, 0, 0
        if not _project(A, ws, k, b, ne, -1, nw, -1, x):
            return False, 0, 0
        for i in range(p):
            b[i] = x[i]
        return True, ne, nw
    if ne + nw > p + 1:
        ne = p - nw  # more rows than an edge: the first of the parent's points only
        if not _project(A, ws, k, b, ne, -1, nw, -1, x):
            return False, 0, 0
        for i in range(p):
            b[i] = x[i]
        return True, ne, nw
    # one row too many: leave out each of the parent's rows in turn (not the new one, W[0])
    f_best = np.inf
    e_best = -2
    w_best = -2
    for j in range(ne + nw - 1):
        se = j if j < ne else -1
        sw = j - ne + 1 if j >= ne else -1
        if _project(A, ws, k, b, ne, se, nw, sw, x):
            f = _objective(A, c, Q, x)
            if f < f_best:
                f_best, e_best, w_best = f, se, sw
                for i in range(p):
                    best[i] = x[i]
    if e_best == -2:
        return False, 0, 0
    ne = _drop(E, e_best, ne)
    nw = _drop(W, w_best, nw)
    for i in range(p):
        b[i] = best[i]
    return True, ne, nw


@njit(cache=True)
def _hinge_qp_node(A, c, Q, Qn, ws, k, b, maxit, ne0, nw0):
    """A node (rows ``ws.G[:k]``, norms ``ws.gn[:k]``) from its parent's minimiser b
    (overwritten by the answer) and working sets (``ws.E[:ne0]``: points, ``ws.W[:nw0]``: rows of
    G): from :func:`_start_point` when it is found, else from b = 0 (in every closed cone) with
    empty working sets; a start that is not certified is retried from 0. ``Qn`` is the Frobenius
    norm of Q. Returns (status, F(b), iterations, ne, nw) of :func:`_hinge_qp`, the final
    working sets in ``ws.E[:ne]``, ``ws.W[:nw]``."""
    moved_from_0 = False
    for i in range(b.shape[0]):
        if b[i] != 0.0:
            moved_from_0 = True
    ok, ne, nw = _start_point(A, c, Q, ws, k, b, ne0, nw0)
    if not ok:
        b[:] = 0.0
    status, f, its, ne, nw = _hinge_qp(A, c, Q, Qn, ws, k, b, maxit, ne, nw)
    if status != 0 and ok and moved_from_0:
        b[:] = 0.0
        empty = np.int64(0)   # not the constant 0: _hinge_qp would compile once more for its literal type
        status, f, its2, ne, nw = _hinge_qp(A, c, Q, Qn, ws, k, b, maxit, empty, empty)
        its += its2
    return status, f, its, ne, nw


@njit(cache=True)
def _hinge_qp(A, c, Q, Qn, ws, k, b, maxit, ne, nw):
    """The active-set iteration from a point b of the closed cone (overwritten by the answer),
    with working sets ``ws.E[:ne]`` (points on the margin at b) and ``ws.W[:nw]`` (rows of G at 0
    at b), independent.

    Each step minimises F over the face the working sets fix (:func:`_face_direction`), walks
    along that direction with an exact line search (:func:`_line_search`) that may add a point
    to E or a cone row to W, and at the face's minimiser drops the working row whose multiplier
    has the wrong sign (:func:`_leaving_row`), or certifies b.

    Returns (status, F(b), iterations, ne, nw): status 0 certified, 1 not certified, 2 iteration
    cap, 3 unbounded ray (cannot happen for c > 0; a numerical failure); the final working sets
    in ``ws.E[:ne]``, ``ws.W[:nw]``."""
    m, p = A.shape
    side, inE, inW, E, W, N, g, d = ws.side, ws.inE, ws.inW, ws.E, ws.W, ws.N, ws.g, ws.d
    for i in range(m):
        side[i] = -1 if _dot_row(A, i, b, p) < 1.0 else 1
        inE[i] = False
    for q in range(k):
        inW[q] = False
    for j in range(ne):
        inE[E[j]] = True
    for j in range(nw):
        inW[W[j]] = True
    f0 = _objective(A, c, Q, b)   # F only falls: F(b) <= f0 at every later b
    for it in range(maxit):
        r = ne + nw
        for j in range(ne):
            for i in range(p):
                N[j, i] = A[E[j], i]
        for j in range(nw):
            for i in range(p):
                N[ne + j, i] = ws.G[W[j], i]
        nz, rank = _face_basis(ws, r, p)
        if rank < r:
            return 1, _objective(A, c, Q, b), it, ne, nw  # a dependent working set: degenerate, not handled
        _gradient(A, c, Q, ws, b, g)
        ray = _face_direction(Q, ws, nz, p, Qn == 0.0)
        dn = math.sqrt(np.dot(d, d))
        moved = False
        slope = np.dot(d, g)
        # no descent left (to rounding): the face minimiser, whatever d's length
        if dn > 0.0 and (-slope > 1e-15 * max(1.0, f0) or -slope > 1e-15 * max(1.0, _objective(A, c, Q, b))):
            stop_t, join, join_kind, moved = _line_search(A, c, Q, ws, k, b, slope, dn)
            if stop_t < 0.0:
                return 3, _objective(A, c, Q, b), it, ne, nw
            for i in range(p):
                b[i] += stop_t * d[i]
            if join >= 0:
                if ne + nw >= p:
                    return 1, _objective(A, c, Q, b), it, ne, nw
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
        res, gs = _multipliers(A, c, Q, Qn, ws, b, ne, nw)
        out, out_kind, leave_above = _leaving_row(c, ws, ne, nw, gs)
        if out < 0:
            ok = _certified(A, c, ws, b, k, ne, nw, res, gs)
            return (0 if ok else 1), _objective(A, c, Q, b), it, ne, nw
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
    return 2, _objective(A, c, Q, b), maxit, ne, nw


@njit(cache=True)
def _face_direction(Q, ws, nz, p, linear):
    """The step ``ws.d`` to the minimiser of F on the face spanned by Z[:, :nz], from the
    gradient ``ws.g``: the Newton step Z (Z'2QZ)^-1 Z'(-g) when Z'2QZ is positive definite
    (Cholesky), else from its eigendecomposition: a ray (returns True) along a direction of
    zero curvature with a slope, or the least-norm step on the positive eigenvalues. With
    ``linear`` (Q = 0) the ray along -ZZ'g."""
    Z, QZ, Hr, gr, ur, d, g, L = ws.Z, ws.QZ, ws.Hr, ws.gr, ws.ur, ws.d, ws.g, ws.L
    for i in range(p):
        d[i] = 0.0
    if nz == 0:
        return False
    # gr = -Z'g and Hr = Z'(2Q)Z, by loops (p is small)
    for i in range(nz):
        v = 0.0
        for q in range(p):
            v += Z[q, i] * g[q]
        gr[i] = -v
    if linear:
        # Q = 0 (the plain hinge loss): F is linear on the piece, the step a ray along the
        # steepest descent in the face, d = -ZZ'g (an edge of the polyhedron at a vertex)
        gn = 0.0
        s = 0.0
        for i in range(p):
            gn += g[i] * g[i]
        for a in range(nz):
            s += gr[a] * gr[a]
        if not math.sqrt(s) > 1e-12 * max(1.0, math.sqrt(gn)):
            return False
        for i in range(p):
            v = 0.0
            for a in range(nz):
                v += Z[i, a] * gr[a]
            d[i] = v
        return True
    times_cols(Q, Z, QZ, p, nz, p)
    for i in range(nz):
        for j in range(i + 1):
            v = 0.0
            for q in range(p):
                v += Z[q, i] * QZ[q, j]
            Hr[i, j] = 2.0 * v
            Hr[j, i] = 2.0 * v
    # positive definite on the face (the usual case): the Newton step by Cholesky
    if _cholesky_solve(Hr, nz, gr, ur, L, 1e-10):
        for i in range(p):
            v = 0.0
            for j in range(nz):
                v += Z[i, j] * ur[j]
            d[i] = v
        return False
    # singular on the face (rare: the unpenalised direction is free): by eigendecomposition
    for i in range(nz):
        gr[i] = -gr[i]
    w, V = np.linalg.eigh(Hr[:nz, :nz].copy())
    top = max(w[nz - 1], 0.0)
    gn = math.sqrt(np.dot(g, g))
    # a direction of zero curvature with a slope: the ray
    best = 0.0
    ray = False
    for j in range(nz):
        if w[j] <= ZERO_EIG * max(top, 1e-300) or top == 0.0:
            slope = 0.0
            for i in range(nz):
                slope += V[i, j] * gr[i]
            if abs(slope) > 1e-12 * max(1.0, gn) and abs(slope) > abs(best):
                best = slope
                sg = -1.0 if slope > 0.0 else 1.0
                for i in range(p):
                    v = 0.0
                    for a in range(nz):
                        v += Z[i, a] * V[a, j]
                    d[i] = sg * v
                ray = True
    if not ray:
        for a in range(nz):
            ur[a] = 0.0
        for j in range(nz):
            if w[j] > ZERO_EIG * top and top > 0.0:
                s = 0.0
                for i in range(nz):
                    s += V[i, j] * gr[i]
                for a in range(nz):
                    ur[a] -= (s / w[j]) * V[a, j]
        for i in range(p):
            v = 0.0
            for a in range(nz):
                v += Z[i, a] * ur[a]
            d[i] = v
    return ray


@njit(cache=True, inline="always")
def _sift_down(tk, ik, o, nb):
    """Restore the min-heap order of (tk, ik) below position o (ties: the lower point first)."""
    while True:
        lo = o
        for ch in (2 * o + 1, 2 * o + 2):
            if ch < nb and (tk[ch] < tk[lo] or (tk[ch] == tk[lo] and ik[ch] < ik[lo])):
                lo = ch
        if lo == o:
            return
        tk[o], tk[lo] = tk[lo], tk[o]
        ik[o], ik[lo] = ik[lo], ik[o]
        o = lo


@njit(cache=True)
def _line_search(A, c, Q, ws, k, b, slope, dn):
    """Exact line search along d = ``ws.d`` from b: F(b + t d) is convex and piecewise quadratic
    in t, with a kink where a point's margin crosses 1; walk the kinks in order (crossing a point
    switches its ``side``), stop at the minimum, at a kink that holds it (the point joins E:
    join_kind 1) or at the first cone row that reaches 0 (it joins W: join_kind 2).

    Returns (t, join, join_kind, moved): t < 0 when F falls without end along d (a ray);
    ``moved`` when a kink was crossed."""
    m, p = A.shape
    d, G, gn, inW, an, side, inE, tk, ik = ws.d, ws.G, ws.gn, ws.inW, ws.an, ws.side, ws.inE, ws.tk, ws.ik
    kappa = 2.0 * _quad(Q, d)
    t_cone = np.inf
    q_cone = -1
    for q in range(k):
        if inW[q]:
            continue
        sq = _dot_row(G, q, d, p)
        if sq < -1e-13 * gn[q] * dn:
            tq = -_dot_row(G, q, b, p) / sq
            if tq < 0.0:
                tq = 0.0
            if tq < t_cone:
                t_cone = tq
                q_cone = q
    nb = 0
    for i in range(m):
        if inE[i]:
            continue
        si = _dot_row(A, i, d, p)
        if abs(si) <= 1e-13 * an[i] * dn:
            continue
        if (side[i] < 0 and si > 0.0) or (side[i] > 0 and si < 0.0):
            ti = (1.0 - _dot_row(A, i, b, p)) / si
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
        sscale += c[ik[o]] * abs(_dot_row(A, ik[o], d, p))
    sscale *= 1e-12
    # the kinks in order of (t, point): a binary min-heap in tk[:nb], ik[:nb]
    for o in range(nb // 2 - 1, -1, -1):
        _sift_down(tk, ik, o, nb)
    while nb > 0:
        i = ik[0]
        ti = tk[0]
        nb -= 1
        tk[0] = tk[nb]
        ik[0] = ik[nb]
        _sift_down(tk, ik, 0, nb)
        if kappa > 0.0 and cur < 0.0 and t_prev - cur / kappa <= ti:
            return t_prev - cur / kappa, -1, 0, moved
        left = cur + kappa * (ti - t_prev)
        right = left + c[i] * abs(_dot_row(A, i, d, p))
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
def _leaving_row(c, ws, ne, nw, gs):
    """At the face's minimiser, with its multipliers in ``ws.lam`` (:func:`_multipliers`), the
    working row whose multiplier is most out of its range (beyond CHECK_TOL): (its position in
    E or W, 1 for E / 2 for W, whether a point of E leaves above its margin); position -1 when
    every multiplier is in range."""
    E, lam = ws.E, ws.lam
    worst = CHECK_TOL * gs
    out = -1
    out_kind = 0
    for j in range(ne):
        v = -lam[j] if -lam[j] > lam[j] - c[E[j]] else lam[j] - c[E[j]]
        if v > worst:
            worst = v
            out = j
            out_kind = 1
    for j in range(nw):
        if -lam[ne + j] > worst:
            worst = -lam[ne + j]
            out = j
            out_kind = 2
    leave_above = out_kind == 1 and not lam[out] > c[E[out]]
    return out, out_kind, leave_above


@njit(cache=True)
def _solve_one(A, c, Q, Qn, work, G, b, maxit, E0, W0):
    """:func:`_hinge_qp_node` for the rows G (copied into ``work``, a :data:`HingeWork` with
    room for them) from b and the working sets E0, W0: (status, F(b), iterations, E, W)."""
    ws = HingeWorkRef(*work)
    k, p = G.shape
    for q in range(k):
        s = 0.0
        for i in range(p):
            ws.G[q, i] = G[q, i]
            s += G[q, i] * G[q, i]
        ws.gn[q] = math.sqrt(s)
    for j in range(E0.shape[0]):
        ws.E[j] = E0[j]
    for j in range(W0.shape[0]):
        ws.W[j] = W0[j]
    status, f, its, ne, nw = _hinge_qp_node(A, c, Q, Qn, ws, k, b, maxit, E0.shape[0], W0.shape[0])
    return status, f, its, ws.E[:ne].copy(), ws.W[:nw].copy()


@njit(cache=True)
def _screen_compiled(A, c, Q, Qn, Phi, sides, can_flip, b_root, E_root, maxit, level, L_max):
    """The screening solves of ``problem.ReplicateProblem`` for the hinge loss plus a quadratic
    penalty in one compiled loop: for each row ``Phi[j]`` not yet known to flip (``can_flip``,
    updated in place), the node with the single row -sides_j Phi_j'b >= 0, from the root's
    minimiser ``b_root`` and margin set ``E_root`` (as :meth:`HingeQPNodeSolver.solve` starts a
    screening solve). Returns (out, solves) as ``lp_node_solver._screen_compiled``: out_j = 1
    when the least loss is >= level, 0 when not or skipped, -1 when the solve was not certified."""
    k, p = Phi.shape
    out = np.zeros(k, dtype=np.int64)
    solves = 0
    ws = HingeWorkRef(*_hinge_work(A, 1))
    G, gn, E = ws.G, ws.gn, ws.E
    b = np.empty(p)
    for j in range(k):
        if can_flip[j]:
            continue
        s = 0.0
        for i in range(p):
            G[0, i] = -sides[j] * Phi[j, i]
            s += G[0, i] * G[0, i]
            b[i] = b_root[i]
        gn[0] = math.sqrt(s)
        for q in range(E_root.shape[0]):
            E[q] = E_root[q]
        status, f, its, ne, nw = _hinge_qp_node(A, c, Q, Qn, ws, np.int64(1), b, maxit, E_root.shape[0],
                                                np.int64(0))   # int64s, not constants: one compile
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
        self.Qn = float(np.sqrt(np.sum(self.Q * self.Q)))
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
        self.work = _hinge_work(self.A, n)   # scratch for nodes of up to n rows

    def screen_batch(self, rows, sides, can_flip, level, L_max):
        """The screening solves of the design rows (``problem.ReplicateProblem._screen_by_solves``)
        in compiled code, each from the root's minimiser as :meth:`solve` starts them: (out, solves)
        of :func:`_screen_compiled`."""
        p = self.design.shape[1]
        warm = self._root_warm
        b, E = (np.zeros(p), np.zeros(0, dtype=np.int64)) if warm is None or warm[1] != self._token else \
            (np.ascontiguousarray(warm[0], dtype=float), np.ascontiguousarray(warm[2], dtype=np.int64))
        out, solves = _screen_compiled(self.A, self.c, self.Q, self.Qn, np.ascontiguousarray(self.design[rows]),
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
        if len(rows) > self.work.G.shape[0]:
            self.work = _hinge_work(self.A, len(rows))
        status, value, its, E, W = _solve_one(self.A, self.c, self.Q, self.Qn, self.work, G, b, self._maxit,
                                              np.ascontiguousarray(E0, dtype=np.int64), W0)
        self.stats["iterations"] += its
        if status != 0 or not np.isfinite(value):
            self.stats["failures"] += 1
            raise NodeSolveError(f"hinge QP active set: status {status}")
        active = [(int(rows[q]), float(signs[q])) for q in W]
        sol = NodeSolution(float(value), b, (b, self._token, E, active))
        if len(rows) == 0:
            self._root_warm = sol.warm
        return sol
