"""Exact solvers for the node problem of a quadratic loss.

A node of the search minimises a convex quadratic over a polyhedral cone,

    min_beta  f(beta) = beta' H beta - 2 g' beta      s.t.  G beta >= 0,

with G the signed basis rows s_k phi_k' fixed so far. With H positive definite it is
solved exactly by the dual active-set method of Goldfarb & Idnani (1983) in
``search.node_qp._gi``. ``polish_kkt`` turns an approximate (interior-point) solution
into an exact one for any positive semidefinite H, by solving the equality
problem on the detected active set and checking the KKT conditions.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg
from scipy.optimize import lsq_linear, nnls

__all__ = ["polish_kkt", "polish_hinge", "margin_faces", "positive_definite", "cone_residual"]


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


def polish_kkt(H, g, G, x0, *, active_tols=ACTIVE_TOLS, check_tol=1e-7, max_steps=None):
    """Exact minimiser of x'Hx - 2g'x over {G x >= 0} from an approximate one.

    The active set is read off ``x0`` (slack below a threshold relative to the row
    norm and |x0|); the equality problem on it is solved exactly in the null space of
    the active rows (least squares, so H may be singular), the result is projected
    towards ``x0`` within the set of minimisers, and accepted only if it satisfies the
    KKT conditions: feasibility and non-negative multipliers. The thresholds in
    ``active_tols`` are tried in turn (solvers differ in how close they bring active
    constraints to zero); the certificate, not the threshold, decides.

    A set whose point fails the certificate is refined by primal active-set steps
    (Nocedal & Wright, Numerical Optimization, 2nd ed., 2006, Algorithm 16.3): add the most
    violated constraint, or drop the active row with the most negative least-squares
    multiplier, and solve again; at most ``max_steps`` sets per threshold (default
    2 (k + p)), each set solved once. This recovers the minimiser when a constraint that is
    not active lies within every threshold of ``x0`` (a nearly degenerate vertex, common
    with a badly scaled design).

    Returns the polished point, or None if no set gives a certified point (also when the
    linear algebra of a set fails: that set certifies nothing).
    """
    x0 = np.asarray(x0, dtype=float)
    H = np.asarray(H, dtype=float)
    g = np.asarray(g, dtype=float)
    if not (np.all(np.isfinite(x0)) and np.all(np.isfinite(H)) and np.all(np.isfinite(g))):
        return None
    p = H.shape[0]
    G = np.asarray(G, dtype=float).reshape(-1, p)
    k = G.shape[0]
    scale = np.sqrt(np.einsum("ij,ij->i", G, G))
    xs = max(1.0, float(np.linalg.norm(x0)))
    slack = (G @ x0) / np.where(scale > 0, scale, 1.0)
    steps = 2 * (k + p) if max_steps is None else int(max_steps)
    tried = set()
    for tol in active_tols:
        act = tuple(int(i) for i in np.flatnonzero(slack <= tol * xs))
        for _ in range(steps):
            if act in tried:
                break
            tried.add(act)
            try:
                x, nxt = _polish_set(H, g, G, x0, np.array(act, dtype=int), scale, xs, check_tol)
            except np.linalg.LinAlgError:  # SVD / eigendecomposition did not converge
                break
            if x is not None:
                return x
            if nxt is None:
                break
            act = nxt
    return None


def _polish_once(H, g, G, x0, active_tol, check_tol):
    """The certified point of one threshold's active set, without refinement (None: rejected)."""
    G = np.asarray(G, dtype=float).reshape(-1, H.shape[0])
    scale = np.sqrt(np.einsum("ij,ij->i", G, G))
    xs = max(1.0, float(np.linalg.norm(x0)))
    act = np.flatnonzero((G @ x0) / np.where(scale > 0, scale, 1.0) <= active_tol * xs)
    return _polish_set(H, g, G, x0, act, scale, xs, check_tol)[0]


def _polish_set(H, g, G, x0, act, scale, xs, check_tol):
    """(x, None) if the minimiser on the face {G_act x = 0} passes the KKT certificate, else
    (None, the next active set to try, or None)."""
    p = H.shape[0]
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
    if not np.all(np.isfinite(x)):
        return None, None
    # certificate: feasibility ...
    if G.shape[0]:
        rel = (G @ x) / np.where(scale > 0, scale, 1.0)
        worst = int(np.argmin(rel))
        if rel[worst] < -check_tol * xs:
            return None, tuple(sorted({int(i) for i in act} | {worst}))
    grad = 2.0 * (H @ x - g)
    if not len(act):
        if np.linalg.norm(grad) > check_tol * max(1.0, float(np.linalg.norm(2 * g))):
            return None, None
        return x, None
    # ... and multipliers >= 0 with grad = GA' lam: non-negative least squares, which also
    # copes with dependent active rows (where plain least squares may go negative)
    resid = cone_residual(GA, grad)
    gscale = max(1.0, float(np.linalg.norm(grad)), float(np.linalg.norm(2 * g)))
    if resid is not None and resid <= check_tol * gscale:
        return x, None
    lam, *_ = np.linalg.lstsq(GA.T, grad, rcond=None)
    drop = int(np.argmin(lam))
    if not np.isfinite(lam[drop]) or lam[drop] >= 0.0:
        return None, None
    return None, tuple(int(i) for j, i in enumerate(act) if j != drop)


def margin_faces(A, x0, active_tols):
    """The distinct splits of the rows a_i into (on the margin, below it) read off an approximate
    point x0, one per threshold of ``active_tols`` (a row is on the margin when
    |a_i'x0 - 1| <= tol |a_i| max(1, |x0|)); yields boolean masks (on, below), each split once."""
    norms = np.sqrt(np.einsum("ij,ij->i", A, A))
    gap = (A @ x0 - 1.0) / np.maximum(norms, 1e-300) / max(1.0, float(np.linalg.norm(x0)))
    tried = set()
    for tol in active_tols:
        on = np.abs(gap) <= tol
        key = tuple(np.flatnonzero(on))
        if key in tried:
            continue
        tried.add(key)
        yield on, (gap < 0) & ~on


def polish_hinge(A, c, Q, x0, *, active_tols=(1e-6, 1e-8, 1e-4, 1e-10), check_tol=1e-9, strict_tol=1e-7,
                 factor=None):
    """Exact minimiser of  F(x) = sum_i c_i max(0, 1 - a_i'x) + x'Qx  (c >= 0, Q positive
    semidefinite) from an approximate one ``x0``, or None.

    The margins m = A x0 split the points into those below 1 (the loss is linear there), at 1
    (active: a_i'x = 1) and above 1 (no loss). On that split the minimiser solves the KKT system

        2 Q x - A_act' mu = sum_{below} c_i a_i,     A_act x = 1,

    (with A_act a maximal independent subset of the active rows; when more than that sit on
    the margin, the multipliers of all of them are found within their bounds by bounded least
    squares), and x is accepted only with the certificate of the whole (convex) problem: 0 is
    in the subdifferential, i.e. every mu_i lies in [0, c_i], and every point stays on its side
    (m_i <= 1 below, m_i >= 1 above), all to ``check_tol`` relative. The minimiser is unique,
    and x is returned, when Q is positive definite (F strictly convex), or else when the KKT
    matrix is nonsingular and complementarity is strict (every mu_i inside (0, c_i), every
    other point off the margin, by ``strict_tol``): a dual solution is shared by all
    minimisers, so every minimiser lies on this face, where F is strictly convex. Otherwise
    None (the caller keeps its own rule for a set of minimisers). Thresholds ``active_tols``
    for "at 1" are tried in turn; the certificate, not the threshold, decides.

    The KKT system is solved once more for the correction of its residual, with Q x computed as R'(R x) when
    ``factor`` R (Q = R'R) is given: a ridge penalty carried to orthonormal coordinates of features in units far
    apart has a Q of condition up to the square of R's, whose products Q x round to 1e-11 where the minimiser's
    Q x is 0.1, and a nearly flat face turns that into an error of 1e-9 in x that depends on the machine's BLAS.
    """
    A = np.asarray(A, dtype=float)
    c = np.asarray(c, dtype=float)
    Q = np.asarray(Q, dtype=float)
    x0 = np.asarray(x0, dtype=float)
    if not (np.all(np.isfinite(x0)) and np.all(np.isfinite(A)) and np.all(np.isfinite(Q))):
        return None
    definite = positive_definite(Q)
    p = Q.shape[0]
    R = None if factor is None else np.asarray(factor, dtype=float).reshape(-1, p)

    def times_q(v):
        return Q @ v if R is None else R.T @ (R @ v)

    on = c > 0
    # identical rows are one hinge term with the summed weight (the same problem): merging them
    # keeps the KKT matrix nonsingular for discrete features
    A, inverse = np.unique(A[on], axis=0, return_inverse=True)
    c = np.bincount(inverse.ravel(), weights=c[on], minlength=A.shape[0])
    norms = np.sqrt(np.einsum("ij,ij->i", A, A))
    for act, below in margin_faces(A, x0, active_tols):
        Aa = A[act]
        # the face is fixed by a maximal independent subset of the active rows (more than p
        # points can sit on the margin when features are discrete)
        if len(Aa):
            _, r, piv = scipy.linalg.qr(Aa.T, pivoting=True, mode="economic")
            d = np.abs(np.diag(r))
            idx = np.sort(piv[:int(np.sum(d > 1e-10 * d[0]))]) if d.size and d[0] > 0 else np.zeros(0, int)
        else:
            idx = np.zeros(0, int)
        k = len(idx)
        K = np.zeros((p + k, p + k))
        K[:p, :p] = 2.0 * Q
        K[:p, p:] = -Aa[idx].T
        K[p:, :p] = Aa[idx]
        b = c[below] @ A[below]
        rhs = np.r_[b, np.ones(k)]
        try:
            if np.linalg.cond(K) > 1e12:
                continue
            sol = np.linalg.solve(K, rhs)
            sol = sol + np.linalg.solve(K, rhs - np.r_[2.0 * times_q(sol[:p]) - Aa[idx].T @ sol[p:], Aa[idx] @ sol[:p]])
        except np.linalg.LinAlgError:
            continue
        if not np.all(np.isfinite(sol)):
            continue
        x = sol[:p]
        if k == len(Aa):
            mu = sol[p:]
        else:   # multipliers of every active row within their bounds [0, c_i]: a bounded least squares
            if not definite:
                continue
            fit = lsq_linear(Aa.T, 2.0 * times_q(x) - b, bounds=(np.zeros(len(Aa)), c[act]), method="bvls",
                             tol=1e-14)
            mu = fit.x
            if np.linalg.norm(Aa.T @ mu - (2.0 * times_q(x) - b)) > check_tol * max(1.0, float(np.linalg.norm(b))):
                continue
        m = A @ x
        scale = check_tol * np.maximum(1.0, norms * max(1.0, float(np.linalg.norm(x))))
        ok = (np.all(mu >= -check_tol * np.maximum(c[act], 1e-300) - 1e-15)
              and np.all(mu <= c[act] * (1 + check_tol) + 1e-15)
              and np.all(np.abs(m[act] - 1.0) <= scale[act])
              and np.all(m[below] <= 1.0 + scale[below])
              and np.all(m[~below & ~act] >= 1.0 - scale[~below & ~act]))
        if ok and not definite:
            rest = ~act
            ok = (np.all(mu > strict_tol * c[act]) and np.all(mu < c[act] * (1 - strict_tol))
                  and np.all(np.abs(m[rest] - 1.0) > strict_tol * np.maximum(1.0, norms[rest])))
        if ok:
            return x
    return None
