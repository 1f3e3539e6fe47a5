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

__all__ = ["polish_kkt", "positive_definite", "cone_residual"]


def positive_definite(H, rtol: float = 1e-10) -> bool:
    """Smallest eigenvalue above ``rtol`` times the largest (singular in all but round-off otherwise).

    A matrix whose eigenvalues cannot be computed (LinAlgError, non-finite entries) counts as
    not positive definite: the caller then takes the generic path.
    """
    H = np.asarray(H, dtype=float)
    if not np.all(np.isfinite(H)):
        return False
    try:
        w = np.linalg.eigvalsh(H)
    except np.linalg.LinAlgError:
        return False
    return bool(w[0] > rtol * max(w[-1], 1e-300))


def cone_residual(A, b):
    """min ||A' lam - b|| over lam >= 0 (the distance from b to the cone spanned by the rows of A).

    Non-negative least squares (scipy's ``nnls``) on the rows scaled to unit norm: the substitution
    lam_k = mu_k / |A_k| maps the non-negative orthant onto itself, so the minimum is the same,
    and unit rows keep an ill-scaled active set (rows of very different norms, several nearly
    parallel) from stalling the solver. Returns None when NNLS does not converge (scipy raises
    ``RuntimeError: Maximum number of iterations reached``; an iteration cap of 50 (k + p)
    instead of scipy's default 3k makes that rare) or meets non-finite data: the caller then
    has no certificate, which is always safe.
    """
    A = np.asarray(A, dtype=float)
    b = np.asarray(b, dtype=float)
    if A.shape[0] == 0:
        return float(np.linalg.norm(b))
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
        return None
    norms = np.sqrt(np.einsum("ij,ij->i", A, A))
    An = A / np.where(norms > 0, norms, 1.0)[:, None]
    try:
        _, resid = nnls(An.T, b, maxiter=50 * (A.shape[0] + A.shape[1]))
    except (RuntimeError, ValueError):  # no convergence (RuntimeError); LinAlgError is a ValueError
        return None
    resid = float(resid)
    return resid if np.isfinite(resid) else None


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
    Returns the polished point, or None if no threshold gives a certified point (also when
    the linear algebra of a threshold fails: that threshold certifies nothing).
    """
    x0 = np.asarray(x0, dtype=float)
    if not (np.all(np.isfinite(x0)) and np.all(np.isfinite(H)) and np.all(np.isfinite(g))):
        return None
    for tol in active_tols:
        try:
            x = _polish_once(H, g, G, x0, tol, check_tol)
        except np.linalg.LinAlgError:  # SVD / eigendecomposition did not converge
            continue
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
    if not np.all(np.isfinite(x)):
        return None
    grad = 2.0 * (H @ x - g)
    if len(act):
        # multipliers >= 0 with grad = GA' lam: non-negative least squares, which also
        # copes with dependent active rows (where plain least squares may go negative)
        resid = cone_residual(GA, grad)
        gscale = max(1.0, float(np.linalg.norm(grad)), float(np.linalg.norm(2 * g)))
        if resid is None or resid > check_tol * gscale:
            return None
    elif np.linalg.norm(grad) > check_tol * max(1.0, float(np.linalg.norm(2 * g))):
        return None
    return x
