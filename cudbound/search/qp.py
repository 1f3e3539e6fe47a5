"""Exact solvers for the node problem of a quadratic loss.

A node of the search minimises a convex quadratic over a polyhedral cone,

    min_beta  f(beta) = beta' H beta - 2 g' beta      s.t.  G beta >= 0,

with G the signed basis rows s_k phi_k' fixed so far. ``dual_active_set`` is the
dual method of Goldfarb & Idnani (1983, Math. Programming 27, 1-33), which starts
from any dual-feasible active set: the parent's solution is one for a child that
adds a single constraint, so a child costs a few small pivots. It needs H
positive definite. ``polish_kkt`` turns an approximate (interior-point) solution
into an exact one for any positive semidefinite H, by solving the equality
problem on the detected active set and checking the KKT conditions.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import nnls

__all__ = ["QPFailure", "dual_active_set", "polish_kkt", "positive_definite"]


def positive_definite(H, rtol: float = 1e-10) -> bool:
    """Smallest eigenvalue above ``rtol`` times the largest (singular in all but round-off otherwise)."""
    w = np.linalg.eigvalsh(H)
    return bool(w[0] > rtol * max(w[-1], 1e-300))


class QPFailure(RuntimeError):
    """The exact QP did not converge (degeneracy or round-off); the caller retries elsewhere."""


def dual_active_set(H, Hinv, g, G, active=(), u=None, x=None, *, tol=1e-12, max_iter=None):
    """Goldfarb-Idnani dual active-set method.

    Parameters
    ----------
    H, Hinv : (p, p) positive definite matrix and its inverse.
    g : (p,) linear term, f(x) = x'Hx - 2 g'x.
    G : (m, p) constraint rows, G x >= 0.
    active, u, x : a dual-feasible start: ``x`` minimises f subject to
        G[active] x = 0 with multipliers ``u >= 0``. Default: the unconstrained
        minimiser and an empty active set.

    Returns
    -------
    x, active (list of row indices), u (multipliers, same order)
    """
    # work with f = 1/2 x'Qx + c'x, Q = 2H, c = -2g
    Qinv = 0.5 * Hinv
    if x is None:
        x = Hinv @ g
        active, u = [], []
    else:
        x = np.array(x, dtype=float)
        active, u = list(active), list(u if u is not None else [])
    m = G.shape[0]
    if m == 0:
        return x, active, u
    scale = np.sqrt(np.einsum("ij,ij->i", G, G))
    max_iter = max_iter or 20 * (m + G.shape[1]) + 50
    for _ in range(max_iter):
        slack = G @ x
        xs = max(1.0, float(np.max(np.abs(x))))
        viol = slack / scale
        q = int(np.argmin(viol))
        if viol[q] >= -tol * xs:
            return x, active, u
        nq = G[q]
        u_plus = 0.0
        for _inner in range(max_iter):
            if active:
                N = G[active].T
                QiN = Qinv @ N
                r = np.linalg.solve(N.T @ QiN, QiN.T @ nq)
                z = Qinv @ nq - QiN @ r
            else:
                r = np.zeros(0)
                z = Qinv @ nq
            t1, drop = np.inf, -1
            for j in range(len(active)):
                if r[j] > 1e-14 and u[j] / r[j] < t1:
                    t1, drop = u[j] / r[j], j
            zn = float(z @ nq)
            if zn <= 1e-14 * float(nq @ Qinv @ nq):
                if drop < 0:
                    raise QPFailure("constraint appears infeasible: round-off in a degenerate cone")
                u = [uj - t1 * rj for uj, rj in zip(u, r)]
                u_plus += t1
                del active[drop], u[drop]
                continue
            t2 = -float(nq @ x) / zn
            t = min(t1, t2)
            x = x + t * z
            u = [uj - t * rj for uj, rj in zip(u, r)]
            u_plus += t
            if t2 <= t1:
                active.append(q)
                u.append(u_plus)
                break
            del active[drop], u[drop]
        else:
            raise QPFailure("dual active-set inner loop did not terminate")
    raise QPFailure("dual active-set method did not converge")


ACTIVE_TOLS = (1e-6, 1e-4, 1e-8, 1e-3, 1e-10)


def polish_kkt(H, g, G, x0, *, active_tols=ACTIVE_TOLS, check_tol=1e-7):
    """Exact minimiser of x'Hx - 2g'x over {G x >= 0} from an approximate one.

    The active set is read off ``x0`` (slack below a threshold relative to the row
    norm and |x0|); the equality problem on it is solved exactly in the null space of
    the active rows (least squares, so H may be singular), the result is projected
    towards ``x0`` within the set of minimisers, and accepted only if it satisfies the
    KKT conditions: feasibility and non-negative multipliers. The thresholds in
    ``active_tols`` are tried in turn (solvers differ in how close they bring active
    constraints to zero); the certificate, not the threshold, decides.
    Returns the polished point, or None if no threshold gives a certified point.
    """
    for tol in active_tols:
        x = _polish_once(H, g, G, x0, tol, check_tol)
        if x is not None:
            return x
    return None


def _polish_once(H, g, G, x0, active_tol, check_tol):
    p = H.shape[0]
    xs = max(1.0, float(np.linalg.norm(x0)))
    if G.shape[0]:
        scale = np.sqrt(np.einsum("ij,ij->i", G, G))
        slack = (G @ x0) / scale
        act = np.flatnonzero(slack <= active_tol * xs)
    else:
        scale, act = np.zeros(0), np.zeros(0, dtype=int)
    GA = G[act]
    if len(act):
        _, sv, vt = np.linalg.svd(GA)
        rank = int(np.sum(sv > 1e-10 * sv[0])) if sv.size else 0
        Z = vt[rank:].T
    else:
        Z = np.eye(p)
    if Z.shape[1] == 0:
        x = np.zeros(p)
    else:
        Hz = Z.T @ H @ Z
        u, *_ = np.linalg.lstsq(Hz, Z.T @ g, rcond=1e-12)
        # minimisers on the face form u + null(Hz); move to the one nearest x0
        w, V = np.linalg.eigh(Hz)
        null = V[:, w <= 1e-12 * max(1.0, float(np.max(np.abs(w))))]
        if null.shape[1]:
            u = u + null @ (null.T @ (Z.T @ x0 - u))
        x = Z @ u
    # certificate
    if G.shape[0] and np.min((G @ x) / scale) < -check_tol * xs:
        return None
    grad = 2.0 * (H @ x - g)
    if len(act):
        # multipliers >= 0 with grad = GA' lam: non-negative least squares, which also
        # copes with dependent active rows (where plain least squares may go negative)
        lam, resid = nnls(GA.T, grad)
        gscale = max(1.0, float(np.linalg.norm(grad)), float(np.linalg.norm(2 * g)))
        if resid > check_tol * gscale:
            return None
    elif np.linalg.norm(grad) > check_tol * max(1.0, float(np.linalg.norm(2 * g))):
        return None
    return x
