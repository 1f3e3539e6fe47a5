"""Many hinge fits at once: a smoothed hinge minimised by stacked Newton steps, the face of its
minimiser solved exactly, and a certificate.

Part g of a batch is

    min over gamma of  F_g(gamma) = sum_i c_gi max(0, 1 - a_gi'gamma) + |M_g gamma|^2,

c_gi = w_gi / n, a_gi = y_i z_gi (the hinge loss or its ridge form in the orthonormal coordinates
of :mod:`cudbound.design`), and the fit's minimiser (:mod:`cudbound.fit`) is asked for: the unique
one, else the one of least norm |gamma| (M = 0, or a penalty sparing the intercept).

1. *Smoothed*: the hinge with its kink rounded over margins (1 - h, 1) (quadratic there, Huber's
   smoothing), plus eps |F'gamma|^2 on the directions F the penalty leaves free, is smooth and
   strictly convex; Newton's method with exact line searches (:func:`_smoothed_minimisers`)
   minimises it for h = :data:`WIDTHS` in turn, each from the last, for the parts not yet certified.
2. *Face* (:func:`face_minimisers`): the smoothed minimiser's margins m_i split the points into
   below, on and above the margin (:func:`snap`, by the depth (1 - m_i) / h, :data:`WINDOWS`; a face
   that fails step 3 is corrected by primal-dual active-set steps, :func:`repair`). On a face the
   minimiser solves the KKT equations

       2 P gamma - A_on' mu = b,   A_on gamma = 1,    P = M'M,  b = sum_below c_i a_i,

   (with M = 0, gamma = A_on^+ 1, the face's least-norm point). For h small enough the smoothed
   minimiser's face is the minimiser's: on a fixed face the smoothed conditions are these with
   A_on gamma = 1 - h mu / c. The face's equations are solved once more for the correction of their
   residual, the penalty's gradient taken as M'(M gamma), not P gamma (:func:`_penalty_gradient`): P = M'M
   of a ridge penalty carried to orthonormal coordinates can be far worse conditioned than M.
3. *Certificate* (:func:`_certified`, relative tolerance :data:`CHECK_TOL`): 0 is in the
   subdifferential (every mu_i in [0, c_i], below-points at margin <= 1, above-points >= 1, the
   KKT residual), and it is the minimiser asked for: with P positive definite, always; with one
   free direction f (the intercept), F rises both ways along f, else the least-norm point of the
   segment of minimisers along f (:func:`_least_norm_along`); with M = 0, the KKT conditions of
   min |gamma|^2 over the minimisers, which complementary slackness with mu describes (gamma =
   sum_on lam_i a_i, lam_i >= 0 where mu_i = 0, <= 0 where mu_i = c_i; Mangasarian 1988). A part
   certified at no width is left uncertified, never an exception: the caller solves it another way.

Identical rows (same label, same z) are merged, their weights summed: the same problem, with margin
equations that stay independent.

References
----------
Mangasarian, O. L. (1988). A simple characterization of solution sets of convex programs.
Operations Research Letters 7(1), 21-26.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import lsq_linear

from .smooth_parts import StackedParts, newton_steps

__all__ = ["SmoothedHinge", "hinge_parts", "snap", "repair", "face_minimisers", "WIDTHS", "WINDOWS", "REPAIRS",
           "FREE_RIDGE", "CHECK_TOL", "STRICT_TOL", "RANK_RTOL", "DECREMENT_TOL"]

WIDTHS = (0.3, 3e-2, 3e-3, 3e-4, 3e-6)
"""The widths h of the smoothed hinges, in turn (the first from the warm start scaled by 1 - h/2, which puts
the points on its margin inside the rounded zone)."""

FREE_RIDGE = 1e-9
"""eps of the smoothed problems' eps |F'gamma|^2 (the coordinates' (1/n) Z'Z = I sets the scale)."""

CHECK_TOL = 1e-9
"""Relative tolerance of the certificate (as :func:`cudbound.optim.qp.polish_hinge`)."""

STRICT_TOL = 1e-7
"""A multiplier within this fraction of c_i of a bound is at it, for uniqueness and least norm."""

WINDOWS = ((0.0, 1.0), (-0.5, 1.5), (-3.0, 4.0))
"""The faces read off a smoothed minimiser, in turn: a point is on the margin when its depth (1 - m) / h in the
rounded zone lies inside the window (below it: below the margin). The zone itself, then wider windows that also
take the points on the margin whose multiplier is at a bound (their depth stays of order 1 as h shrinks, every
other point's grows like 1 / h)."""

REPAIRS = 2
"""Steps of :func:`repair` after each face read off that fails its certificate."""

RANK_RTOL = 1e-9
"""Singular values of the face's rows below this fraction of the largest are dropped (dependent rows)."""

DECREMENT_TOL = 1e-15
"""A smoothed problem is solved once its Newton decrement g'H^-1 g (about twice F - F*) is at most this
(F is a mean loss of order 1)."""


class SmoothedHinge:
    """l_h(y, t) = 0 (m >= 1), (1 - m)^2 / (2h) (1 - h < m < 1), 1 - m - h/2 (m <= 1 - h), m = y t:
    the hinge with its kink rounded over a width h, for :class:`cudbound.optim.smooth_parts.StackedParts`."""

    def __init__(self, width: float) -> None:
        self.width = float(width)

    def pointwise(self, y: np.ndarray, t: np.ndarray) -> np.ndarray:
        m, h = y * t, self.width
        return np.where(m >= 1.0, 0.0, np.where(m > 1.0 - h, (1.0 - m) ** 2 / (2.0 * h), 1.0 - m - 0.5 * h))

    def derivatives(self, y: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m, h = y * t, self.width
        zone = (m < 1.0) & (m > 1.0 - h)
        d1 = np.where(m >= 1.0, 0.0, np.where(zone, (m - 1.0) / h, -1.0)) * y
        return d1, np.where(zone, 1.0 / h, 0.0)


def _merged(Z: np.ndarray, y: np.ndarray, W: np.ndarray, groups: np.ndarray | None):
    """(Z, y, W) with the rows of each group (identical rows of [y, Z] when ``groups`` is None and Z is
    shared) as one row, its weights summed."""
    if groups is None:
        if Z.ndim == 3:
            return Z, y, W
        _, first, groups = np.unique(np.column_stack([y, Z]), axis=0, return_index=True, return_inverse=True)
    else:
        _, first, groups = np.unique(groups, return_index=True, return_inverse=True)
    groups = groups.ravel()
    if first.size == y.size:
        return Z, y, W
    S = np.zeros((y.size, first.size))
    S[np.arange(y.size), groups] = 1.0
    return Z[..., first, :], y[first], W @ S


def _stack(M: np.ndarray | None, F: np.ndarray, G: int) -> np.ndarray:
    """The smoothed problems' factor [M; sqrt(eps) F'] (shared (k, p) or (G, k, p))."""
    E = np.sqrt(FREE_RIDGE) * np.swapaxes(F, -1, -2)
    if M is None:
        return E
    if M.ndim == E.ndim:
        return np.concatenate([M, E], axis=-2)
    if M.ndim == 2:
        M = np.broadcast_to(M, (G,) + M.shape)
    else:
        E = np.broadcast_to(E, (G,) + E.shape)
    return np.concatenate([M, E], axis=-2)


def _solve(K: np.ndarray, R: np.ndarray) -> np.ndarray:
    """K_g^-1 R_g for a stack ((G, q, q), (G, q, r)); NaN for a singular K_g."""
    try:
        return np.linalg.solve(K, R)
    except np.linalg.LinAlgError:   # one singular matrix fails the whole stack: solve them one by one
        out = np.full(R.shape, np.nan)
        for g in range(K.shape[0]):
            try:
                out[g] = np.linalg.solve(K[g], R[g])
            except np.linalg.LinAlgError:
                pass
        return out


def _gather(A: np.ndarray, idx: np.ndarray, values: bool = False) -> np.ndarray:
    """(G, k, p) rows idx[g] of A ((n, p) shared or (G, n, p)), or with ``values`` (G, k) entries of a (G, n)
    array; 0 where idx < 0."""
    at = np.maximum(idx, 0)
    if values:
        rows = np.take_along_axis(A, at, axis=1)
    elif A.ndim == 2:
        rows = A[at]
    else:
        rows = np.take_along_axis(A, at[:, :, None], axis=1)
    valid = idx >= 0
    return rows * (valid if rows.ndim == 2 else valid[:, :, None])


def _times(P: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(G, p) P_g x_g for a symmetric P, shared (p, p) or (G, p, p)."""
    return x @ P if P.ndim == 2 else np.einsum("gpq,gq->gp", P, x)


def _penalty_gradient(P: np.ndarray, M: np.ndarray | None, x: np.ndarray) -> np.ndarray:
    """(G, p) P_g x_g, as M_g'(M_g x_g) when the factor M (shared (k, p) or (G, k, p)) is given.

    A ridge penalty carried to orthonormal coordinates (M = sqrt(lam) J T) of features in units far apart has a
    P = M'M of condition up to the square of M's (1e12 for units 1e-3 to 1e3), and a point on a face whose
    |P x| is tens of thousands where the minimiser's is 0.1: P x then rounds to 1e-11, which the face's
    smallest curvature (2e-3) turns into an error of 5e-9 in gamma, one that depends on how the machine's BLAS
    orders its sums. M x and M'(M x) round to 1e-14 there."""
    if M is None:
        return _times(P, x)
    if M.ndim == 2:
        return (x @ M.T) @ M
    return np.einsum("gkp,gk->gp", M, np.einsum("gkp,gp->gk", M, x))


def _inside(AE: np.ndarray, F: np.ndarray) -> np.ndarray:
    """(G,) whether the free directions F lie in the null space of the face's rows AE (G, k, p): |AE F| at
    most :data:`RANK_RTOL` of |AE| |F| (no row on the face, for the intercept: a_i'f = +-z_i'f is never 0)."""
    AF = AE @ F
    return np.sqrt(np.einsum("gkr,gkr->g", AF, AF)) <= RANK_RTOL * np.sqrt(np.einsum("gkp,gkp->g", AE, AE)) * \
        np.sqrt(np.sum(F * F, axis=(-2, -1)))


def _masked_pinv(U: np.ndarray, s: np.ndarray, Vt: np.ndarray, keep: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(G, k) U diag(keep / s) Vt[:r] x: the least-norm solution of A_on' v = x (A_on = U S Vt), the singular
    values below the rank cut dropped."""
    r = s.shape[1]
    inv = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)
    return np.einsum("gkr,gr->gk", U[:, :, :r], inv * np.einsum("grp,gp->gr", Vt[:, :r], x))


def snap(C: np.ndarray, margins: np.ndarray, h: float, window: tuple[float, float]) -> tuple[np.ndarray, ...]:
    """(on, below, alpha) of the face read off a smoothed minimiser's margins (G, n): a weighted point is on the
    margin when its depth (1 - m) / h lies inside ``window``, below it beyond; alpha, the smoothed multipliers,
    c_i clip(depth, 0, 1) on the face and c_i below."""
    weighted = C > 0
    depth = (1.0 - margins) / h
    on = weighted & (depth > window[0]) & (depth < window[1])
    below = weighted & (depth >= window[1])
    return on, below, np.where(on, C * np.clip(depth, 0.0, 1.0), np.where(below, C, 0.0))


def repair(A, C, gamma, mu, idx, sides) -> tuple[np.ndarray, ...]:
    """(on, below, alpha) of the next face after a failed certificate, by the violations of the last (a
    primal-dual active-set step): a point on the face whose multiplier is below 0 leaves it above the margin,
    above c_i below it; a point off the face on the wrong side of the margin joins it; the multipliers,
    clipped to [0, c_i], are the next alpha."""
    below, on, above = sides
    m = gamma @ A.T if A.ndim == 2 else np.einsum("gnp,gp->gn", A, gamma)
    full = np.zeros((C.shape[0], C.shape[1] + 1))          # the last column takes the padding's writes
    np.put_along_axis(full, np.where(idx >= 0, idx, C.shape[1]), mu, axis=1)
    full = np.where(on, full[:, :-1], 0.0)
    with np.errstate(invalid="ignore"):
        drop_up, drop_down = on & (full < 0.0), on & (full > C)
        join = (below & (m > 1.0)) | (above & (m < 1.0))
    on = (on & ~drop_up & ~drop_down) | join
    below = (below & ~join) | drop_down
    return on, below, np.where(on, np.clip(full, 0.0, C), np.where(below, C, 0.0))


def face_minimisers(A: np.ndarray, C: np.ndarray, P: np.ndarray | None, F: np.ndarray, on: np.ndarray,
                    below: np.ndarray, alpha: np.ndarray, M: np.ndarray | None = None):
    """The minimiser on a face of each part (module docstring, step 2): (gamma, mu, lam, idx, sides), with ``A``
    the rows ((n, p) or (G, n, p)), ``C`` (G, n) the weights c, ``P`` the penalty's Hessian ((p, p), (G, p, p),
    or None for M = 0), ``F`` the free directions, ``on`` and ``below`` (G, n) the face, ``alpha`` (G, n)
    multipliers near the face's (the smoothed minimiser's).

    The face's rows may be dependent (more points on the margin than p): from the singular value
    decomposition A_on = U S V' (values below :data:`RANK_RTOL` of the largest dropped), gamma = A_on^+ 1
    + N u with N the null space of A_on and u the minimiser of the face's objective, N'PN u = N'(b/2 - P A_on^+ 1)
    (with tau N'F F'N added when the free directions F lie in the face, which is then flat along them: tau the
    scale of N'PN, the point of least F'gamma, from which :func:`_least_norm_along` moves; u = 0 with M = 0),
    then u corrected once by the same equations for their residual, with P gamma as M'(M gamma) when the factor
    ``M`` of P = M'M is given (:func:`_penalty_gradient`: A_on^+ 1 is far from the minimiser, and P A_on^+ 1
    cancels to the face's gradient with the rounding of P's largest entries); and mu = alpha + (A_on')^+ (r -
    A_on' alpha), r = 2 P gamma - b: the multipliers nearest alpha that solve the KKT equations. lam = (A_on')^+
    gamma. The points on the face of part g are idx[g][idx[g] >= 0]; sides (below, on, above) are (G, n)
    masks."""
    G, n = C.shape
    p = A.shape[-1]
    weighted = C > 0
    k = int(on.sum(axis=1).max(initial=0))
    order = np.argsort(~on, axis=1, kind="stable")[:, :k]
    idx = np.where(np.take_along_axis(on, order, axis=1), order, -1)
    AE = _gather(A, idx)
    # Vt square (p x p) for the null space; U thin when there are more rows than p (memory k^2 per part)
    U, s, Vt = np.linalg.svd(AE, full_matrices=k < p) if k else (np.zeros((G, 0, 0)), np.zeros((G, 0)),
                                                                   np.broadcast_to(np.eye(p), (G, p, p)))
    keep = s > RANK_RTOL * s.max(axis=1, initial=0.0)[:, None]
    ones = (idx >= 0).astype(float)
    inv = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)
    gamma = np.einsum("grp,gr->gp", Vt[:, :s.shape[1]], inv * np.einsum("gkr,gk->gr", U[:, :, :s.shape[1]], ones))
    b = (C * below) @ A if A.ndim == 2 else np.einsum("gn,gnp->gp", C * below, A)
    if P is None:
        r = -b
    else:
        null = np.concatenate([~keep, np.ones((G, p - s.shape[1]), dtype=bool)], axis=1)   # columns of V
        N = np.swapaxes(Vt, 1, 2) * null[:, None, :]
        H = np.swapaxes(N, 1, 2) @ P @ N
        tau = np.einsum("gii->g", H) / np.maximum(null.sum(axis=1), 1)
        tau = np.where(tau > 0, tau, 1.0)[:, None, None]
        NF = np.swapaxes(N, 1, 2) @ F * _inside(AE, F)[:, None, None]     # free directions on the face: flat
        H += tau * (NF @ np.swapaxes(NF, 1, 2) + np.eye(p) * ~null[:, None, :])
        rhs = np.einsum("gpq,gp->gq", N, 0.5 * b - _times(P, gamma))
        u = _solve(H, rhs[..., None])[..., 0]
        gamma = gamma + np.einsum("gpq,gq->gp", N, u)
        # the residual of H u = N'(b/2 - P A_on^+ 1) at u, with the penalty's gradient at gamma as M gives it
        rhs = np.einsum("gpq,gp->gq", N, 0.5 * b - _penalty_gradient(P, M, gamma)) \
            - tau[:, :, 0] * (np.einsum("gpr,gr->gp", NF, np.einsum("gpr,gp->gr", NF, u)) + u * ~null)
        gamma = gamma + np.einsum("gpq,gq->gp", N, _solve(H, rhs[..., None])[..., 0])
        r = 2.0 * _penalty_gradient(P, M, gamma) - b
    aE = _gather(alpha, idx, True)
    mu = aE + (_masked_pinv(U, s, Vt, keep, r - np.einsum("gkp,gk->gp", AE, aE)) if k else 0.0)
    cE = _gather(C, idx, True)
    with np.errstate(invalid="ignore"):
        outside = np.any((mu < 0.0) | (mu > cE), axis=1) & (keep.sum(axis=1) < (idx >= 0).sum(axis=1))
    for g in np.flatnonzero(outside & np.all(np.isfinite(r), axis=1)):   # dependent rows: bounded least squares
        v = idx[g] >= 0
        mu[g, v] = lsq_linear(AE[g, v].T, r[g], bounds=(np.zeros(v.sum()), cE[g, v]), method="bvls", tol=1e-14).x
    lam = _masked_pinv(U, s, Vt, keep, gamma) if k else np.zeros((G, 0))
    return gamma, mu, lam, idx, (below, on, weighted & ~on & ~below)


def _certified(A, C, P, F, gamma, mu, lam, idx, sides) -> tuple[np.ndarray, np.ndarray]:
    """(ok, unique), (G,) each: ok, the certificate of the module docstring (step 3) that :func:`face_minimisers`'
    gamma is a minimiser; unique, that it is the minimiser asked for (the least-norm conditions with M = 0; with
    one free direction f, that F rises both ways along it, :func:`_along`; with none, always)."""
    below, on, above = sides
    valid = idx >= 0
    cE = _gather(C, idx, True)
    m = gamma @ A.T if A.ndim == 2 else np.einsum("gnp,gp->gn", A, gamma)
    norms = np.sqrt(np.einsum("...np,...np->...n", A, A))
    slack = CHECK_TOL * np.maximum(1.0, norms * np.linalg.norm(gamma, axis=1)[:, None])
    b = (C * below) @ A if A.ndim == 2 else np.einsum("gn,gnp->gp", C * below, A)
    r = -b if P is None else 2.0 * _times(P, gamma) - b
    size = np.einsum("gn,...n->g", C, norms) if A.ndim == 2 else np.einsum("gn,gn->g", C, norms)
    if P is not None:
        size = size + 2.0 * np.linalg.norm(_times(P, gamma), axis=1)
    with np.errstate(invalid="ignore"):
        ok = np.all(np.isfinite(gamma), axis=1) & np.all(np.isfinite(mu), axis=1) & np.all(np.isfinite(lam), axis=1)
        ok &= np.all(~below | (m <= 1.0 + slack), axis=1) & np.all(~above | (m >= 1.0 - slack), axis=1)
        ok &= np.all(~on | (np.abs(m - 1.0) <= slack), axis=1)
        ok &= np.all(~valid | ((mu >= -CHECK_TOL * cE) & (mu <= cE * (1.0 + CHECK_TOL))), axis=1)
        ok &= np.linalg.norm(np.einsum("gkp,gk->gp", _gather(A, idx), mu) - r, axis=1) <= CHECK_TOL * size
        lower = valid & (mu <= STRICT_TOL * cE)
        upper = valid & (mu >= (1.0 - STRICT_TOL) * cE)
    if P is None:     # the least-norm conditions
        return ok, ok & _least_norm_signs(_gather(A, idx), gamma, lam, lower, upper)
    if F.shape[-1] == 0:
        return ok, ok
    if F.shape[-1] > 1:     # not met by a ridge penalty, which spares at most the intercept
        return ok, np.zeros_like(ok)
    rise, fall = _along(A, C, F, gamma, sides)
    return ok, rise[0] & fall[0]


def _least_norm_signs(AE, gamma, lam, lower, upper) -> np.ndarray:
    """(G,) whether gamma = sum_on lam_i a_i with lam_i >= 0 where mu_i = 0 (``lower``) and <= 0 where
    mu_i = c_i (``upper``), to :data:`CHECK_TOL`: the given lam, else (more rows on the face than they have
    dimensions, so other lam solve it too) the bounded least-squares lam of the face, one part at a time."""
    top = np.max(np.abs(lam), axis=1, initial=0.0)[:, None]
    signs = np.all(~lower | (lam >= -CHECK_TOL * top), axis=1) & np.all(~upper | (lam <= CHECK_TOL * top), axis=1)
    valid = np.any(AE != 0.0, axis=2)
    for g in np.flatnonzero(~signs):
        v = valid[g]
        if v.sum() <= np.linalg.matrix_rank(AE[g, v]):     # independent rows: lam is the only solution
            continue
        fit = lsq_linear(AE[g, v].T, gamma[g], bounds=(np.where(lower[g, v], 0.0, -np.inf),
                                                       np.where(upper[g, v], 0.0, np.inf)), method="bvls", tol=1e-14)
        signs[g] = np.linalg.norm(AE[g, v].T @ fit.x - gamma[g]) <= CHECK_TOL * max(1.0, np.linalg.norm(gamma[g]))
    return signs


def _along(A, C, F, gamma, sides) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """F along the one free direction f (columns of F, unit): every minimiser shares M gamma (F is strictly
    convex off f), so the minimisers are gamma + f t over an interval of t, where the piecewise-linear
    h(t) = F(gamma + f t) is flat. Returns ((rises, t_hi), (falls, t_lo)): whether h rises from t = 0 to the
    right (to the left) with a slope above :data:`STRICT_TOL` of the sum of c_i |a_i'f| (then t_hi = 0), and
    otherwise where it starts to: the first crossing of a margin (t = (1 - m_i) / a_i'f) after which the slope,
    summed over the crossings in order, exceeds that (inf if none)."""
    below, on, above = sides
    f = F[..., 0]
    af = np.broadcast_to(A @ f if A.ndim == 2 and f.ndim == 1 else np.einsum("...np,...p->...n", A, f), C.shape)
    m = gamma @ A.T if A.ndim == 2 else np.einsum("gnp,gp->gn", A, gamma)
    tol = STRICT_TOL * np.einsum("gn,gn->g", C, np.abs(af))
    out = []
    for sign in (1.0, -1.0):
        d = sign * af
        slope = -np.einsum("gn,gn->g", C * below, d) + np.einsum("gn,gn->g", C * on, np.maximum(0.0, -d))
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where((below & (d > 0)) | (above & (d < 0)), (1.0 - m) / d, np.inf)
        order = np.argsort(t, axis=1, kind="stable")
        t = np.take_along_axis(t, order, axis=1)
        climb = slope[:, None] + np.cumsum(np.take_along_axis(C * np.abs(d), order, axis=1), axis=1)
        first = np.argmax(climb > tol[:, None], axis=1)
        reach = np.where(climb[np.arange(len(C)), first] > tol, t[np.arange(len(C)), first], np.inf)
        rises = slope > tol
        out.append((rises, np.where(rises, 0.0, reach)))
    return out[0], out[1]


def _least_norm_along(A, C, F, gamma, sides) -> np.ndarray:
    """The minimiser of least norm gamma + f t on the segment of minimisers along the free direction f
    (:func:`_along`): t = -f'gamma clipped to [-t_lo, t_hi]."""
    (_, t_hi), (_, t_lo) = _along(A, C, F, gamma, sides)
    f = np.broadcast_to(F[..., 0], gamma.shape)
    t = np.clip(-np.einsum("gp,gp->g", f, gamma), -t_lo, t_hi)
    return gamma + t[:, None] * f


def _exact_steps(parts: StackedParts, gamma: np.ndarray, s: np.ndarray, slope0: np.ndarray, h: float) -> np.ndarray:
    """(G,) the minimiser t > 0 of phi(t) = F_h(gamma + t s) for each part (``slope0`` = phi'(0) < 0). phi' is
    continuous and piecewise linear: its slope phi'' = 2|M s|^2 + sum over the rounded zone of c_i d_i^2 / h
    (d_i = a_i's) changes where a margin m_i + t d_i crosses 1 - h or 1, so phi' at the sorted crossings is a
    cumulative sum, and its root lies on the first piece where it turns non-negative (or on the last)."""
    y = parts.y
    m, d = y * parts.scores(gamma), y * parts.scores(s)
    c = parts.W / y.size
    Ms = parts._penalty(s)
    curv = c * d * d / h
    with np.errstate(divide="ignore", invalid="ignore"):
        crossings = np.concatenate([(1.0 - m) / d, (1.0 - h - m) / d], axis=1)
    toggles = np.concatenate([-np.sign(d) * curv, np.sign(d) * curv], axis=1)
    real = (np.tile(c, 2) > 0) & (crossings > 0) & np.isfinite(crossings)
    crossings = np.where(real, crossings, np.inf)
    order = np.argsort(crossings, axis=1, kind="stable")
    t = np.take_along_axis(crossings, order, axis=1)
    toggles = np.take_along_axis(np.where(real, toggles, 0.0), order, axis=1)
    inside = (c > 0) & (((m > 1.0 - h) & (m < 1.0)) | ((m == 1.0) & (d < 0)) | ((m == 1.0 - h) & (d > 0)))
    kappa = 2.0 * np.einsum("gk,gk->g", Ms, Ms)[:, None] + np.einsum("gn,gn->g", inside, curv)[:, None] \
        + np.concatenate([np.zeros((len(c), 1)), np.cumsum(toggles, axis=1)], axis=1)     # slope on each piece
    ends = np.where(np.isfinite(t), t, 0.0)
    starts = np.concatenate([np.zeros((len(c), 1)), ends[:, :-1]], axis=1)
    at_ends = slope0[:, None] + np.cumsum(kappa[:, :-1] * np.where(np.isfinite(t), ends - starts, 0.0), axis=1)
    turned = np.isfinite(t) & (at_ends >= 0.0)
    k = np.where(turned.any(axis=1), np.argmax(turned, axis=1), np.isfinite(t).sum(axis=1))
    rows = np.arange(len(c))
    start = np.where(k > 0, ends[rows, np.maximum(k - 1, 0)], 0.0)
    at_start = np.where(k > 0, at_ends[rows, np.maximum(k - 1, 0)], slope0)
    with np.errstate(divide="ignore", invalid="ignore"):
        step = start - at_start / kappa[rows, k]
    return np.where(np.isfinite(step) & (step > 0), step, 0.0)


def _smoothed_minimisers(parts: StackedParts, gamma: np.ndarray, h: float, max_iter: int) -> np.ndarray:
    """Newton's method with exact line searches on the smoothed problems from ``gamma`` (updated), each part
    until its Newton decrement g'H^-1 g is at most :data:`DECREMENT_TOL` (or its Hessian is singular), or
    ``max_iter`` steps."""
    active = np.arange(len(gamma))
    for _ in range(max_iter):
        if not active.size:
            break
        sub = parts.take(active)
        s, dec = newton_steps(sub, gamma[active])
        move = np.all(np.isfinite(s), axis=1) & (dec > DECREMENT_TOL)
        if not move.any():
            break
        active, s = active[move], s[move]
        gamma[active] += _exact_steps(sub.take(move), gamma[active], s, -dec[move], h)[:, None] * s
    return gamma


def _part(X: np.ndarray | None, idx: np.ndarray) -> np.ndarray | None:
    """The parts ``idx`` of a per-part stack; a shared (2-D) array or None as it is."""
    return X if X is None or X.ndim == 2 else X[idx]


def _certified_faces(A, C, P, F, margins, h, M=None) -> tuple[np.ndarray, np.ndarray]:
    """(gamma, done) of the parts' faces read off their smoothed margins (:func:`snap`), each window of
    :data:`WINDOWS` in turn and each followed by up to :data:`REPAIRS` steps of :func:`repair`, for the parts
    not yet done: done where certified (a minimiser, and the one asked for, after the slide along one free
    direction, :func:`_least_norm_along`); ``M`` the factor of P = M'M (:func:`face_minimisers`)."""
    G = C.shape[0]
    gamma, done = np.zeros((G, A.shape[-1])), np.zeros(G, dtype=bool)
    for window in WINDOWS:
        left = np.flatnonzero(~done)
        face = snap(C[left], margins[left], h, window)
        for step in range(REPAIRS + 1):
            if not left.size:
                break
            At, Pt, Ft = _part(A, left), _part(P, left), _part(F, left)
            exact, mu, lam, idx, sides = face_minimisers(At, C[left], Pt, Ft, *face, M=_part(M, left))
            ok, unique = _certified(At, C[left], Pt, Ft, exact, mu, lam, idx, sides)
            slide = ok & ~unique if P is not None and F.shape[-1] == 1 else np.zeros_like(ok)
            if slide.any():
                exact[slide] = _least_norm_along(_part(At, slide), C[left[slide]], _part(Ft, slide), exact[slide],
                                                 tuple(side[slide] for side in sides))
            good = ok & (unique | slide)
            gamma[left[good]], done[left[good]] = exact[good], True
            if step == REPAIRS:
                break
            retry = ~good & np.all(np.isfinite(exact), axis=1) & np.all(np.isfinite(mu), axis=1)
            face = tuple(x[retry] for x in repair(At, C[left], exact, mu, idx, sides))
            left = left[retry]
    return gamma, done


def hinge_parts(Z: np.ndarray, y: np.ndarray, W: np.ndarray, M: np.ndarray | None, start: np.ndarray, *,
                free: np.ndarray | None = None, groups: np.ndarray | None = None, max_iter: int = 50
                ) -> tuple[np.ndarray, np.ndarray]:
    """(gamma (G, p), certified (G,)) of the parts F_g (module docstring): design ``Z`` (n, p) shared or
    (G, n, p), labels ``y`` (n,), weights ``W`` (G, n), penalty factor ``M`` None (the plain hinge), (k, p) or
    (G, k, p), warm start ``start`` (G, p); ``free`` an orthonormal basis of the directions M leaves free
    ((p, r) or (G, p, r); None: every direction without M, none with it); ``groups`` (n,) labels of rows known
    to be identical (default: the identical rows of a shared Z); ``max_iter`` Newton steps per width.
    Certified parts hold the minimiser; the others the last smoothed iterate."""
    G, p, n = W.shape[0], Z.shape[-1], y.size
    if free is None:
        free = np.eye(p) if M is None else np.zeros((p, 0))
    Zm, ym, Wm = _merged(Z, y, W, groups)
    A = ym[:, None] * Zm if Zm.ndim == 2 else ym[None, :, None] * Zm
    C = Wm / n
    P = None if M is None else np.swapaxes(M, -1, -2) @ M
    smooth_M = _stack(M, free, G)
    gamma = np.array(start, dtype=float)
    certified = np.zeros(G, dtype=bool)
    for width in WIDTHS:
        todo = np.flatnonzero(~certified)
        if not todo.size:
            break
        parts = StackedParts(_part(Zm, todo), ym, C[todo] * ym.size, _part(smooth_M, todo), SmoothedHinge(width))
        shrink = 1.0 - 0.5 * width if width == WIDTHS[0] else 1.0
        gamma[todo] = _smoothed_minimisers(parts, gamma[todo] * shrink, width, max_iter)
        At = _part(A, todo)
        margins = gamma[todo] @ At.T if At.ndim == 2 else np.einsum("gnp,gp->gn", At, gamma[todo])
        exact, done = _certified_faces(At, C[todo], _part(P, todo), _part(free, todo), margins, width,
                                       _part(M, todo))
        gamma[todo[done]] = exact[done]
        certified[todo[done]] = True
    return gamma, certified
