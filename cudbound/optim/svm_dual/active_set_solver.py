"""A primal active-set method for the SVM dual, compiled, with its KKT solves.

:func:`active_set` changes one point's status (free, at 0, at C) per step: from SMO's rough
solution, or from the full solution in a leave-one-out refit, it reaches the exact free set
in a few steps where SMO needs thousands. Each step solves the KKT system of the free set,
by hand LU or LAPACK (``_kkt_solve``), or, when the system is singular, from an
eigendecomposition (``_eigen_step``, also used by the decremental path).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..linear_solve import solve_in_place
from .kkt import _kkt_matrix
from .smo_solver import gradient

__all__ = ["active_set"]


@njit(cache=True)
def _lu_solve(M, r):  # pragma: no cover - compiled
    """Solve M z = r by Gaussian elimination with partial pivoting (``optim.linear_solve``; M and
    r are not changed); ok is False when a pivot is below 1e-13 of the largest entry
    (numerically singular) or z is not finite."""
    m = M.shape[0]
    z = np.zeros(m)
    ok = solve_in_place(M.copy(), r.copy(), z, m, np.empty(m, dtype=np.int64), 1e-13)
    return z, ok


@njit(cache=True)
def _residual_max(M, z, r, n):  # pragma: no cover - compiled
    """max_a |(M z - r)_a| over the first n rows."""
    res = 0.0
    for a in range(n):
        acc = -r[a]
        for c in range(n):
            acc += M[a, c] * z[c]
        res = max(res, abs(acc))
    return res


@njit(cache=True)
def _kkt_solve(M, r, k):  # pragma: no cover - compiled
    """Solve the (k+1)-square KKT system M z = r: hand LU below 64 unknowns (LAPACK's call
    overhead dominates there), LAPACK above; ``solved`` is False when M is numerically singular
    (a pivot or the residual check fails, or the solution is huge)."""
    if k < 64:
        z, solved = _lu_solve(M, r)
    else:
        solved = False
        z = np.zeros(k + 1)
        try:
            z = np.linalg.solve(M, r)
            solved = True
        except Exception:  # numba raises on an exactly singular matrix
            solved = False
    if solved:
        rmax = 0.0
        zmax = 0.0
        for a in range(k + 1):
            rmax = max(rmax, abs(r[a]))
            if not np.isfinite(z[a]):
                return z, False
            zmax = max(zmax, abs(z[a]))
        resmax = _residual_max(M, z, r, k + 1)
        solved = resmax <= 1e-9 * (1.0 + rmax) and zmax < 1e12
    return z, solved


@njit(cache=True)
def _eigen_step(M, r, k):  # pragma: no cover - compiled
    """The step of :func:`active_set` from an eigendecomposition of the KKT matrix M: the
    least-norm solution when M z = r is consistent, else the part of the right-hand side in
    M's null space, along which the objective falls linearly (``linear``)."""
    w, V = np.linalg.eigh(M)
    wmax = 0.0
    for j in range(k + 1):
        wmax = max(wmax, abs(w[j]))
    thr = 1e-11 * wmax
    z = np.zeros(k + 1)
    d = np.zeros(k + 1)
    null_part = 0.0
    for j in range(k + 1):
        vr = 0.0
        for a in range(k + 1):
            vr += V[a, j] * r[a]
        if abs(w[j]) > thr:
            for a in range(k + 1):
                z[a] += vr / w[j] * V[a, j]
        else:
            # the gradient's part only (r[k], a residual of y' alpha = 0, is not a descent
            # direction): -G_F' p = sum_j (V_j' r)^2 > 0 along it
            vg = vr - V[k, j] * r[k]
            null_part += vg * vg
            for a in range(k + 1):
                d[a] += vg * V[a, j]
    gnorm = 0.0
    for a in range(k):
        gnorm += r[a] * r[a]
    linear = null_part > 1e-20 * (1.0 + gnorm)
    return (d[:k] if linear else z[:k]), z, linear


@njit(cache=True)
def _bound_states(alpha, active, C):  # pragma: no cover - compiled
    """Each point's status: 0 free, 1 at 0, 2 at C, -1 left out; a multiplier beyond a bound is
    put on it (in place)."""
    n = alpha.shape[0]
    state = np.zeros(n, dtype=np.int64)  # 0 free, 1 at 0, 2 at C, -1 left out
    for i in range(n):
        if not active[i]:
            state[i] = -1
        elif alpha[i] <= 0.0:
            alpha[i] = 0.0
            state[i] = 1
        elif alpha[i] >= C:
            alpha[i] = C
            state[i] = 2
    return state


@njit(cache=True)
def _ratio_test(alpha, C, F, k, p, linear):  # pragma: no cover - compiled
    """How far along p the free multipliers stay in the box (at most 1, or unbounded along a
    ``linear`` direction), the first of them to reach a bound (-1 for none), and max |p|."""
    step_size = np.inf if linear else 1.0
    block = -1
    pmax = 0.0
    for a in range(k):
        ia = F[a]
        pmax = max(pmax, abs(p[a]))
        if p[a] > 0.0:
            t = (C - alpha[ia]) / p[a]
        elif p[a] < 0.0:
            t = -alpha[ia] / p[a]
        else:
            continue
        if t < step_size:
            step_size = t
            block = a
    return step_size, block, pmax


@njit(cache=True)
def _move(K, y, alpha, G, active, F, k, p, step_size):  # pragma: no cover - compiled
    """alpha_F += step_size p and the gradient with it on the active points (in place)."""
    n = y.shape[0]
    for a in range(k):
        alpha[F[a]] += step_size * p[a]
    for i in range(n):
        if active[i]:
            s = 0.0
            for a in range(k):
                s += K[i, F[a]] * y[F[a]] * p[a]
            G[i] += y[i] * s * step_size


@njit(cache=True)
def _nearest_bias(G, y, state, b0):  # pragma: no cover - compiled
    """With no free multiplier the optimal biases form an interval (G_i + y_i nu >= 0 at 0,
    <= 0 at C): the one nearest ``b0``, or the middle when round-off leaves it empty."""
    n = y.shape[0]
    lo = -np.inf
    hi = np.inf
    for i in range(n):
        if state[i] == 1:  # G_i + y_i nu >= 0
            if y[i] > 0:
                lo = max(lo, -G[i])
            else:
                hi = min(hi, G[i])
        elif state[i] == 2:  # G_i + y_i nu <= 0
            if y[i] > 0:
                hi = min(hi, -G[i])
            else:
                lo = max(lo, G[i])
    if lo <= hi:
        return min(max(b0, lo), hi)
    return 0.5 * (lo + hi)


@njit(cache=True)
def _most_violated(G, y, state, nu, tol):  # pragma: no cover - compiled
    """The bound point whose KKT sign condition (G_i + y_i nu >= 0 at 0, <= 0 at C) is most
    violated, by more than ``tol``; -1 when none is."""
    n = y.shape[0]
    worst = tol
    release = -1
    for i in range(n):
        if state[i] == 1:
            v = -(G[i] + y[i] * nu)
        elif state[i] == 2:
            v = G[i] + y[i] * nu
        else:
            continue
        if v > worst:
            worst = v
            release = i
    return release


@njit(cache=True)
def active_set(K, y, C, alpha, active, b0, max_iter, tol, G0):  # pragma: no cover - compiled
    """A primal active-set method for the dual, from the feasible ``alpha`` (updated in place).

    The points are split into free (F), at 0 and at C. Each step minimises the dual over the
    free multipliers with the others fixed and y' alpha = 0: the KKT system
    [Q_FF y_F; y_F' 0] [p; nu] = [-G_F; 0] (G the gradient) gives the step p and the bias nu.
    A step that would leave the box stops at the first bound, and that point joins the bound
    (one change per step). When Q_FF is singular on {y_F' p = 0} and -G_F has a part in its
    null space, the objective falls linearly along that part, which is followed to the first
    bound. At a minimiser over F, the bound point whose KKT sign condition is most violated
    (y_i f(x_i) - 1 = G_i + y_i nu must be >= 0 at 0 and <= 0 at C) is freed. From a nearby
    start (leave-one-out warm starts) the method needs about one step per change of status,
    where SMO needs thousands of pair steps. ``G0`` is the gradient at ``alpha`` when the caller
    has it (an empty array otherwise). Returns (bias, steps, converged).
    """
    n = y.shape[0]
    state = _bound_states(alpha, active, C)
    G = G0.copy() if G0.shape[0] == n else gradient(K, y, alpha, active)
    nu = b0
    F = np.empty(n, dtype=np.int64)
    for it in range(max_iter):
        k = 0
        for i in range(n):
            if state[i] == 0:
                F[k] = i
                k += 1
        at_minimum = True
        # a start off y' alpha = 0 (a leave-one-out refit drops alpha_t): the next full step restores it
        eq = 0.0
        amax = 0.0
        for i in range(n):
            if state[i] >= 0:
                eq += y[i] * alpha[i]
                amax = max(amax, alpha[i])
        infeasible = abs(eq) > 1e-12 * max(amax, 1e-300) * n
        if k > 0:
            M = _kkt_matrix(K, y, F, k, False)
            r = np.zeros(k + 1)
            for a in range(k):
                r[a] = -G[F[a]]
            r[k] = -eq
            z, solved = _kkt_solve(M, r, k)
            if solved:
                linear = False
                p = z[:k]
            else:
                p, z, linear = _eigen_step(M, r, k)
            step_size, block, pmax = _ratio_test(alpha, C, F, k, p, linear)
            if not np.isfinite(step_size):
                return nu, it, False
            if pmax > 0.0 and step_size > 0.0:
                _move(K, y, alpha, G, active, F, k, p, step_size)
            if block >= 0:
                ib = F[block]
                if p[block] > 0.0:
                    alpha[ib] = C
                    state[ib] = 2
                else:
                    alpha[ib] = 0.0
                    state[ib] = 1
                at_minimum = False
            elif linear:
                return nu, it, False
            else:
                nu = z[k]
        if not at_minimum:
            continue
        if k == 0 and infeasible:  # no free multiplier to restore y' alpha = 0 with
            return nu, it, False
        if k == 0:  # nu is free: the optimal biases form an interval; take the one nearest b0
            nu = _nearest_bias(G, y, state, b0)
        release = _most_violated(G, y, state, nu, tol)
        if release < 0:
            return nu, it, True
        state[release] = 0
    return nu, max_iter, False
