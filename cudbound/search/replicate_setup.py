"""The set-up of a replicate in compiled code: the free points, their costs and screening.

:func:`_replicate_setup` is the compiled twin of :class:`~cudbound.search.problem.ReplicateProblem`
for a positive definite quadratic loss (the whole replicate then runs compiled,
``core._replicate``); :func:`quadratic_minimum` its minimum of the quadratic loss, which the
difference's slack asks for too (``engine.ReplicateEngine.root_minimum``); :func:`_mark_can_flip` is
the screening step the node solvers of the other losses share.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..optim.linear_solve import row_dot

__all__ = ["quadratic_minimum"]


@njit(cache=True)
def quadratic_minimum(H, g, c):
    """(ok, b_u, L_u) of the quadratic loss L(b) = b'Hb - 2g'b + c: ok when H is positive definite
    (smallest eigenvalue above 1e-10 times the largest), then b_u = H^-1 g and L_u = c - g'b_u, its
    minimum (the compiled set-up's own; when not ok, b_u and L_u are not computed: zeros)."""
    p = H.shape[0]
    ev = np.linalg.eigvalsh(H)
    if not ev[0] > 1e-10 * max(ev[p - 1], 1e-300):
        return False, np.zeros(p), 0.0
    beta_u = np.ascontiguousarray(np.linalg.solve(H, g))
    return True, beta_u, c - np.dot(g, beta_u)


@njit(cache=True)
def _mark_can_flip(Phi, sides, can_flip, j, x):
    """Screening: x has loss below L_max, so every later row j' (> j) that x puts on the side
    opposite to sides[j'] (closed) can flip; mark it (its solve is skipped)."""
    for jj in range(j + 1, Phi.shape[0]):
        if not can_flip[jj] and sides[jj] * row_dot(Phi, jj, x) <= 0.0:
            can_flip[jj] = True


@njit(cache=True)
def _screen_point(out, j, f, level, L_max, Phi, sides, can_flip, x):
    """Point j's screening solve reached minimum f at x (the loss with j on its other side):
    fixed when f >= level (out[j] = 1); else if x has loss below L_max, every later point it
    puts on the other side can flip (:func:`_mark_can_flip`)."""
    if f >= level:
        out[j] = 1
    elif f < L_max:
        _mark_can_flip(Phi, sides, can_flip, j, x)


@njit(cache=True)
def _replicate_setup(Zu, group, y, counts, H, g, c, beta_hat, alpha, screen):
    """The compiled twin of :class:`~cudbound.search.problem.ReplicateProblem` for a
    quadratic loss L(b) = b'Hb - 2g'b + c with H positive definite: the free points of S =
    {i : nu_i != 1} merged by identical rows (``group`` numbers the distinct rows of the
    design in lexicographic order, ``Zu`` holds them), their costs, screening by the
    neighbourhood ellipsoid, and the branching order (largest |cost change| first, stable).

    Returns (ok, P, cplus, cminus, C_forced, n_screened, Hinv, beta_u, L_u, L_hat, uidx), uidx
    the distinct row of each free point; ok is False when H is not positive definite (smallest
    eigenvalue <= 1e-10 times the largest).
    """
    n = y.shape[0]
    p = H.shape[0]
    U = Zu.shape[0]
    empty = np.zeros((0, p))
    z = np.zeros(0)
    ok, beta_u, L_u = quadratic_minimum(H, g, c)
    if not ok:
        return False, empty, z, z, 0.0, 0, np.zeros((p, p)), beta_hat.copy(), 0.0, 0.0, np.zeros(0, dtype=np.int64)
    Hinv = np.ascontiguousarray(np.linalg.inv(H))
    L_hat = np.dot(beta_hat, H @ beta_hat) - 2.0 * np.dot(g, beta_hat) + c
    L_max = L_hat + 1.0 / alpha if alpha > 0.0 else np.inf
    cp_ = np.zeros(U)
    cm_ = np.zeros(U)
    present = np.zeros(U, dtype=np.bool_)
    for i in range(n):
        if counts[i] != 1.0:
            k = group[i]
            present[k] = True
            w = counts[i] - 1.0
            if y[i] != 1.0:
                cp_[k] += w
            if y[i] != -1.0:
                cm_[k] += w
    forced = np.zeros(U, dtype=np.int64)
    nrep = 0
    for k in range(U):
        if not present[k]:
            continue
        nrep += 1
        nz = False
        for j in range(p):
            if Zu[k, j] != 0.0:
                nz = True
        if not nz:
            forced[k] = 1
        elif cp_[k] == cm_[k]:
            forced[k] = 1
    if screen and alpha > 0.0:
        radius = L_max - L_u
        for k in range(U):
            if not present[k] or forced[k] != 0:
                continue
            t = np.dot(Zu[k], beta_u)
            hn = np.dot(Zu[k], Hinv @ Zu[k])
            if hn > 0.0 and t != 0.0 and t * t / hn >= radius * (1.0 + 1e-9):
                forced[k] = 1 if t > 0.0 else -1
    C_forced = 0.0
    n_screened = 0
    nfree = 0
    for k in range(U):
        if not present[k]:
            continue
        if forced[k] > 0:
            C_forced += cp_[k]
            n_screened += 1
        elif forced[k] < 0:
            C_forced += cm_[k]
            n_screened += 1
        else:
            nfree += 1
    free = np.empty(nfree, dtype=np.int64)
    key = np.empty(nfree)
    f = 0
    for k in range(U):
        if present[k] and forced[k] == 0:
            free[f] = k
            key[f] = -abs(cp_[k] - cm_[k])
            f += 1
    order = np.argsort(key, kind="mergesort")
    P = np.empty((nfree, p))
    cplus = np.empty(nfree)
    cminus = np.empty(nfree)
    uidx = np.empty(nfree, dtype=np.int64)
    for f in range(nfree):
        k = free[order[f]]
        uidx[f] = k
        P[f] = Zu[k]
        cplus[f] = cp_[k]
        cminus[f] = cm_[k]
    return True, P, cplus, cminus, C_forced, n_screened, Hinv, beta_u, L_u, L_hat, uidx

