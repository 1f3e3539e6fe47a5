"""The dense factorisations of the compiled kernels: one LU (Gaussian elimination with partial
pivoting) and one Cholesky, no allocation.

PB = LU of a square matrix B (L unit lower triangular, U upper triangular, P a row
permutation), then solves with B or B' from the factors. Used by the node QP of the search
(:mod:`cudbound.search.node_qp`), the certified simplex of the hinge nodes
(:mod:`cudbound.search.lp_node_solver`, which keeps the factors of its basis) and the SVM dual's
active-set method (:mod:`cudbound.optim.svm_dual.active_set_solver`). Each caller passes the
pivot threshold that suits its matrices: a pivot at most ``pivot_tol`` times the largest entry
of B is a dependent row in all but round-off (exactly dependent rows, as discrete features
make, leave a pivot of order 1e-16 that is zero or not depending on the processor's rounding),
and the caller then reports a numerical failure and hands the question to an exact fallback.
:func:`cholesky` factors a symmetric positive definite matrix (the reduced Hessian of the hinge
nodes' active-set method, the Hessian of a smooth loss's flip-cost metric);
:func:`forward_solve` solves L x = b with a lower triangular factor (a Cholesky factor, the
hinge nodes' row basis) and :func:`cholesky_solve` H x = b from a Cholesky factor (the hinge
nodes' reduced Hessian, the rows H^-1 phi_a of a smooth node's cone flip cost); :func:`times_cols`
is the kernels' small matrix product and :func:`row_dot` their product of one row with a vector.
:func:`row_basis` is the orthonormal basis of a few rows (the hinge nodes' faces) and
:func:`least_squares` the small least-squares solve on it of the smooth nodes' KKT certificate
(``np.linalg.lstsq`` there cost LAPACK's workspace query and allocations per call, about a tenth
of a logistic search at n = 300).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["lu_factor", "lu_solve", "lu_solve_t", "solve_in_place", "cholesky", "forward_solve", "cholesky_solve",
           "times_cols", "row_dot",
           "row_basis",
           "least_squares"]


@njit(cache=True, inline="always")
def lu_factor(B, LU, perm, n, pivot_tol):
    """PB = LU of B[:n, :n], into LU[:n, :n] (the multipliers of L below the diagonal) and
    perm[:n]; LU may be B itself. False when B has a non-finite entry, is zero, or has a pivot
    at most ``pivot_tol`` times its largest entry."""
    scale = 0.0
    for i in range(n):
        for j in range(n):
            a = B[i, j]
            if not np.isfinite(a):
                return False
            LU[i, j] = a
            if abs(a) > scale:
                scale = abs(a)
        perm[i] = i
    if scale == 0.0:
        return False
    for c in range(n):
        piv = c
        for r in range(c + 1, n):
            if abs(LU[r, c]) > abs(LU[piv, c]):
                piv = r
        if not np.isfinite(LU[piv, c]) or abs(LU[piv, c]) <= pivot_tol * scale:
            return False
        if piv != c:
            for j in range(n):
                LU[c, j], LU[piv, j] = LU[piv, j], LU[c, j]
            perm[c], perm[piv] = perm[piv], perm[c]
        for r in range(c + 1, n):
            f = LU[r, c] / LU[c, c]
            LU[r, c] = f
            if f != 0.0:
                for j in range(c + 1, n):
                    LU[r, j] -= f * LU[c, j]
    return True


@njit(cache=True, inline="always")
def lu_solve(LU, perm, rhs, out, n):
    """out[:n] = B^-1 rhs[:n] from the factors of PB = LU (forward, then back substitution)."""
    for i in range(n):
        out[i] = rhs[perm[i]]
    for i in range(n):
        s = out[i]
        for j in range(i):
            s -= LU[i, j] * out[j]
        out[i] = s
    for i in range(n - 1, -1, -1):
        s = out[i]
        for j in range(i + 1, n):
            s -= LU[i, j] * out[j]
        out[i] = s / LU[i, i]


@njit(cache=True, inline="always")
def lu_solve_t(LU, perm, rhs, out, z, n):
    """out[:n] = B^-T rhs[:n] from the factors of PB = LU (B' = U'L'P); z is scratch of length n."""
    for i in range(n):           # U'z = rhs
        s = rhs[i]
        for j in range(i):
            s -= LU[j, i] * z[j]
        z[i] = s / LU[i, i]
    for i in range(n - 1, -1, -1):  # L'w = z
        s = z[i]
        for j in range(i + 1, n):
            s -= LU[j, i] * z[j]
        z[i] = s
    for i in range(n):           # out = P'w
        out[perm[i]] = z[i]


@njit(cache=True, inline="always")
def solve_in_place(M, b, x, n, perm, pivot_tol):
    """Solve M[:n, :n] x[:n] = b[:n], factoring M in place (perm: scratch of length n). False
    when :func:`lu_factor` fails or the answer is not finite."""
    if not lu_factor(M, M, perm, n, pivot_tol):
        return False
    lu_solve(M, perm, b, x, n)
    for i in range(n):
        if not np.isfinite(x[i]):
            return False
    return True


@njit(cache=True)
def cholesky(M, L, n, min_pivot):
    """M = LL' for the symmetric M[:n, :n] (its lower triangle is read), into the lower triangle
    of L (L may be M itself). False when a pivot (before its square root) is not above
    ``min_pivot``: M is not safely positive definite."""
    for j in range(n):
        s = M[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not (s > min_pivot):
            return False
        L[j, j] = math.sqrt(s)
        for i in range(j + 1, n):
            s = M[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
    return True


@njit(cache=True, inline="always")
def forward_solve(L, rhs, x, n):
    """x[:n] = L[:n, :n]^-1 rhs[:n] for a lower triangular L with a nonzero diagonal, by forward
    substitution (x may not be rhs)."""
    for i in range(n):
        s = rhs[i]
        for q in range(i):
            s -= L[i, q] * x[q]
        x[i] = s / L[i, i]


@njit(cache=True, inline="always")
def cholesky_solve(L, rhs, x, n):
    """x[:n] = (L L')^-1 rhs[:n] for a lower triangular L with a nonzero diagonal: the forward
    substitution into x, then the back substitution with L' in place (x may not be rhs)."""
    forward_solve(L, rhs, x, n)
    for i in range(n - 1, -1, -1):
        s = x[i]
        for q in range(i + 1, n):
            s -= L[q, i] * x[q]
        x[i] = s / L[i, i]


@njit(cache=True, inline="always")
def times_cols(A, B, out, rows, cols, inner):
    """out[:rows, :cols] = A[:rows, :inner] B[:inner, :cols] (no allocation)."""
    for i in range(rows):
        for a in range(cols):
            v = 0.0
            for j in range(inner):
                v += A[i, j] * B[j, a]
            out[i, a] = v


@njit(cache=True, inline="always")
def row_dot(A, k, x):
    """A[k]'x, summed in index order. Inlined, so no view of A and no call: a compiled call that
    takes arrays costs an atomic reference count per array, and ``np.dot(A[k], x)`` also a call to
    BLAS; loops over the points of a search run this once per point (issue 44: these counts were
    a fifth of the hinge search's time at n = 300)."""
    t = 0.0
    for i in range(x.shape[0]):
        t += A[k, i] * x[i]
    return t



@njit(cache=True)
def row_basis(N, r, p, U, R, v):
    """Orthonormal rows U[:rank] spanning the rows of N[:r, :p], by modified Gram-Schmidt with one
    reorthogonalisation (p is small: no LAPACK call; Giraud, Langou and Rozloznik 2005, "twice is
    enough"), and R with N[j] = sum_q R[j, q] U[q] (lower triangular when the rows are independent).
    A row whose remainder is at most 1e-10 of its norm is dependent. Returns the rank. ``v``:
    scratch of length p."""
    rank = 0
    for j in range(r):
        nv0 = 0.0
        for i in range(p):
            v[i] = N[j, i]
            nv0 += v[i] * v[i]
            R[j, i] = 0.0
        nv0 = math.sqrt(nv0)
        for _ in range(2):
            for q in range(rank):
                s = 0.0
                for i in range(p):
                    s += U[q, i] * v[i]
                R[j, q] += s
                for i in range(p):
                    v[i] -= s * U[q, i]
        nv = 0.0
        for i in range(p):
            nv += v[i] * v[i]
        nv = math.sqrt(nv)
        if nv > 1e-10 * nv0 and nv > 0.0:
            for i in range(p):
                U[rank, i] = v[i] / nv
            R[j, rank] = nv
            rank += 1
    return rank


@njit(cache=True)
def least_squares(A, g, lam):
    """lam = argmin |g - A'lam| for rows A (k x p, k <= p) that are independent: A = R U by
    :func:`row_basis` (U orthonormal rows, R lower triangular), so A'lam = U'(R'lam) and R'lam = U g
    by back substitution. False (lam not written) when a row is dependent on the others in all but
    round-off (:func:`row_basis`'s rule): the caller then takes ``np.linalg.lstsq``'s minimum-norm
    solution."""
    k, p = A.shape
    U = np.empty((k, p))
    R = np.empty((k, p))
    v = np.empty(p)
    if row_basis(A, k, p, U, R, v) < k:
        return False
    x = np.empty(k)
    for q in range(k - 1, -1, -1):
        s = 0.0
        for i in range(p):
            s += U[q, i] * g[i]
        for j in range(q + 1, k):
            s -= R[j, q] * x[j]
        x[q] = s / R[q, q]
        if not np.isfinite(x[q]):
            return False
    lam[:] = x
    return True
