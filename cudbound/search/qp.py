"""Exact solvers for the node problem of a quadratic loss.

A node of the search minimises a convex quadratic over a polyhedral cone,

    min_beta  f(beta) = beta' H beta - 2 g' beta      s.t.  G beta >= 0,

with G the signed basis rows s_k phi_k' fixed so far. With H positive definite it is
solved exactly by the dual active-set method of Goldfarb & Idnani (1983) in
``compiled._gi``. ``polish_kkt`` turns an approximate (interior-point) solution
into an exact one for any positive semidefinite H, by solving the equality
problem on the detected active set and checking the KKT conditions.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import nnls

__all__ = ["polish_kkt", "positive_definite"]


def positive_definite(H, rtol: float = 1e-10) -> bool:
    """Smallest eigenvalue above ``rtol`` times the largest (singular in all but round-off otherwise)."""
    w = np.linalg.eigvalsh(H)
    return bool(w[0] > rtol * max(w[-1], 1e-300))


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
