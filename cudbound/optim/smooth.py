"""Exact pieces for non-quadratic convex losses: separation and Newton polishing.

**Separation.** For a margin loss that tends to 0 at infinity (logistic, exponential;
``Loss.tends_to_zero``), the infimum of L over a polyhedral cone K need not be attained.
Let D = {d in K : d unpenalised, y_i phi_i'd >= 0 for every point with weight > 0} and
I+ the points with y_i phi_i'd > 0 for some d in D (one d* in D achieves all of them).
Then inf_K L = min_K L_rest, where L_rest drops the points of I+: moving along d* sends
their terms to 0 and leaves the others unchanged (phi_i'd* = 0 off I+), and every term is
>= 0. L_rest attains its minimum on K: a direction in which it does not increase would
separate a point off I+. :func:`separation` finds I+ and d* with one linear program.
The minimum of L over K is then approached by b* + T d* as T grows.

**Newton polishing.** An interior-point answer is accurate to the solver's tolerance
only. With the gradient and Hessian of the loss, :func:`polish_smooth` reads the active
set off the approximate minimiser, minimises the loss on the subspace
{G_A beta = 0} by Newton's method (a singular Hessian is allowed: least-squares steps),
and accepts the point only if it satisfies the KKT conditions of the cone: feasibility
and non-negative multipliers (non-negative least squares). The certificate, not the
threshold used to read the active set, decides. A threshold whose linear algebra
fails (NNLS not converging, an eigendecomposition that does not converge, a non-finite
loss) certifies nothing and the next one is tried; with none left the answer is None,
never an exception.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from .qp import cone_residual

__all__ = ["separation", "polish_smooth", "push_to_infimum", "SeparationUnknown"]

ACTIVE_TOLS = (1e-6, 1e-4, 1e-8, 1e-3, 1e-10)


class SeparationUnknown(RuntimeError):
    """The separation linear program could not be solved (no method succeeded, or the
    linear algebra of cleaning its answer failed)."""


def separation(design, y, weights, free, G=None, candidates=None):
    """The points a direction of the cone separates, and such a direction.

    Parameters
    ----------
    design, y, weights : the data; only points with weight > 0 count.
    free : (p, r) orthonormal basis of the directions the penalty ignores.
    G : (k, p) rows of the cone {G beta >= 0} (None: the whole space).
    candidates : optional boolean (n,) mask; the separated set is known to lie inside it.

    Returns
    -------
    mask : (n,) bool, the set I+ (empty when nothing can be separated)
    d : (p,) direction with y_i phi_i'd >= 1 (rows normalised) on I+, = 0 on the other
        weighted points, in the cone; None when I+ is empty.
    """
    n, p = design.shape
    w = np.asarray(weights, dtype=float)
    mask = np.zeros(n, dtype=bool)
    r = free.shape[1]
    if r == 0:
        return mask, None
    A = (design @ free) * y[:, None]                  # y_i phi_i' N
    an = np.sqrt(np.einsum("ij,ij->i", A, A))
    weighted = w > 0
    cand = weighted & (an > 1e-12 * max(1.0, float(an.max(initial=0.0))))
    if candidates is not None:
        cand &= candidates
    idx = np.flatnonzero(cand)
    if len(idx) == 0:
        return mask, None
    rest = np.flatnonzero(weighted & ~cand & (an > 0))
    An = A[idx] / an[idx, None]
    k = len(idx)
    rows_ub = [np.hstack([-An, np.eye(k)])]           # z_i <= a_i'u
    if len(rest):                                      # the other weighted points: a_i'u >= 0
        Ar = A[rest] / an[rest, None]
        rows_ub.append(np.hstack([-Ar, np.zeros((len(rest), k))]))
    if G is not None and len(G):
        GN = np.asarray(G, dtype=float) @ free
        gn = np.sqrt(np.einsum("ij,ij->i", GN, GN))
        keep = gn > 0
        rows_ub.append(np.hstack([-GN[keep] / gn[keep, None], np.zeros((int(keep.sum()), k))]))
    A_ub = np.vstack(rows_ub)
    c = np.r_[np.zeros(r), -np.ones(k)]
    bounds = [(None, None)] * r + [(0.0, 1.0)] * k
    if not np.all(np.isfinite(A_ub)):
        raise SeparationUnknown("non-finite constraint rows")
    messages = []
    for method in ("highs-ds", "highs-ipm", "highs"):
        try:
            res = linprog(c, A_ub=A_ub, b_ub=np.zeros(A_ub.shape[0]), bounds=bounds, method=method)
        except (ValueError, RuntimeError, ArithmeticError) as exc:
            messages.append(f"{method}: {type(exc).__name__}: {exc}")
            continue
        if res.status == 0 and res.x is not None and np.all(np.isfinite(res.x)):
            break
        messages.append(f"{method}: {res.message}")
    else:
        raise SeparationUnknown("; ".join(messages))
    z = res.x[r:]
    sep = z > 0.5
    if not sep.any():
        return mask, None
    mask[idx[sep]] = True
    u = res.x[:r]
    # the other weighted points have a_i'd = 0 for every admissible d: remove the LP's round-off
    others = np.flatnonzero(weighted & ~mask & (an > 0))
    if len(others):
        try:
            Z = _null_space(A[others], r)
        except np.linalg.LinAlgError as exc:
            raise SeparationUnknown(f"null space: {exc}") from None
        u = Z @ (Z.T @ u)
    d = free @ u
    if np.any(A[mask] @ u <= 0.25 * an[mask]):
        raise SeparationUnknown("the separating direction lost its margin when cleaned")
    if G is not None and len(G):
        Gd = np.asarray(G, dtype=float) @ d
        if np.any(Gd < -1e-8 * np.linalg.norm(G, axis=1) * np.linalg.norm(d)):
            raise SeparationUnknown("the separating direction leaves the cone")
    return mask, d


def push_to_infimum(loss, design, y, weights, beta, d, m, *, rows=None, rel=1e-13):
    """beta + T d with loss within ``rel`` (relative) of the infimum m, and on the limiting
    side of every row of ``rows`` that d does not leave on its hyperplane."""
    dn = float(np.linalg.norm(d))
    T = 1.0
    if rows is not None and len(rows):
        a, b = rows @ d, rows @ beta
        big = np.abs(a) > 1e-9 * dn * np.linalg.norm(rows, axis=1)
        if big.any():
            T = max(T, 2.0 * float(np.max(np.abs(b[big]) / np.abs(a[big]))))
    target = m + rel * max(1.0, abs(m))
    for _ in range(200):
        x = beta + T * d
        v = loss.value(design, y, weights, x)
        if v <= target:
            return x, v
        T *= 2.0
    return x, v


def _null_space(A, p):
    """Orthonormal basis (p, p - rank) of {u : A u = 0}; rank counts singular values above 1e-10 sv_max."""
    if A.shape[0] == 0:
        return np.eye(p)
    _, sv, vt = np.linalg.svd(A, full_matrices=True)
    rank = int(np.sum(sv > 1e-10 * sv[0])) if sv.size else 0
    return vt[rank:].T


def polish_smooth(fun, grad, hess, G, x0, *, active_tols=ACTIVE_TOLS, check_tol=1e-7, max_iter=100):
    """Exact minimiser of a smooth convex function over {G x >= 0} from an approximate one.

    ``fun``, ``grad``, ``hess`` are functions of x. Returns the polished point or None
    (no threshold gives a point that passes the KKT certificate).
    """
    x0 = np.asarray(x0, dtype=float)
    if not np.all(np.isfinite(x0)):
        return None
    G = np.asarray(G, dtype=float).reshape(-1, len(x0))
    tried = set()
    for tol in active_tols:
        xs = max(1.0, float(np.linalg.norm(x0)))
        if G.shape[0]:
            scale = np.sqrt(np.einsum("ij,ij->i", G, G))
            act = np.flatnonzero((G @ x0) / scale <= tol * xs)
        else:
            scale, act = np.zeros(0), np.zeros(0, dtype=int)
        key = tuple(act)
        if key in tried:
            continue
        tried.add(key)
        try:
            x = _newton_on_face(fun, grad, hess, G[act], x0, max_iter)
        except np.linalg.LinAlgError:  # an SVD or eigendecomposition did not converge
            continue
        if x is None or not np.all(np.isfinite(x)):
            continue
        xs = max(1.0, float(np.linalg.norm(x)))
        if G.shape[0] and np.min((G @ x) / scale) < -check_tol * xs:
            continue
        g = grad(x)
        if not np.all(np.isfinite(g)):
            continue
        gscale = max(1.0, float(np.linalg.norm(g)))
        if len(act):
            resid = cone_residual(G[act], g)  # None: NNLS did not converge, no certificate
            if resid is None or resid > check_tol * gscale:
                continue
        elif np.linalg.norm(g) > check_tol:
            continue
        return x
    return None


def _newton_step(H, g):
    """-H^+ g, with the eigenvalues below 1e-12 max(1, |H|) treated as zero (flat directions):
    a loss that is constant along a direction (or nearly so) takes no step along it."""
    w, V = np.linalg.eigh(0.5 * (H + H.T))
    keep = w > 1e-12 * max(1.0, float(np.max(np.abs(w), initial=0.0)))
    return -(V[:, keep] @ ((V[:, keep].T @ g) / w[keep]))


def _newton_on_face(fun, grad, hess, GA, x0, max_iter):
    """Minimise fun over the subspace {GA x = 0} from the projection of x0 (None: no convergence)."""
    p = len(x0)
    Z = _null_space(GA, p)
    if Z.shape[1] == 0:
        return np.zeros(p)
    x = Z @ (Z.T @ x0)
    f = fun(x)
    if not np.isfinite(f):
        return None
    for _ in range(max_iter):
        g = Z.T @ grad(x)
        step = _newton_step(Z.T @ hess(x) @ Z, g)
        dec = -float(g @ step)  # Newton decrement squared: twice the predicted decrease
        if not np.isfinite(dec):
            return None
        if dec <= 1e-15 * max(1.0, abs(f)):
            # in the quadratic phase and below what f can resolve: one last full step
            return x + Z @ step
        t = 1.0
        while True:
            xn = x + t * (Z @ step)
            fn = fun(xn)
            if np.isfinite(fn) and fn <= f - 1e-4 * t * dec:
                break
            t *= 0.5
            if t < 1e-12:
                return None
        x, f = xn, fn
    return None
