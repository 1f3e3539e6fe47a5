"""The KKT conditions of the SVM dual: the bias from the gradient, the polish, the checks.

:func:`polish` takes the set of free multipliers (0 < alpha_i < C) as exact and solves the
KKT equations y_i f(x_i) = 1 on it together with y' alpha = 0; the polished point is kept
only when it satisfies every KKT condition to 1e-9. After SMO or the active-set method has
identified the free set, this gives multipliers exact to round-off. :func:`kkt_violation`
measures a solution; :func:`kkt_check` and :func:`kkt_check_near` are its compiled forms
for the leave-one-out refits (afresh, or from a nearby solution's gradient).
:func:`_kkt_matrix` builds the bordered KKT matrix of a free set, for the polish, the
active-set steps and the decremental path alike.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .smo_solver import support_vectors

__all__ = ["bias_from_gradient", "kkt_violation", "polish", "kkt_check", "kkt_check_near"]


@njit(cache=True)
def _kkt_matrix(K, y, F, k, bias_first):  # pragma: no cover - compiled
    """The KKT matrix of the k free points F[:k]: Q_FF (Q_ac = y_a y_c K_ac) bordered by y_F,
    the bias first, [0 y_F'; y_F Q_FF] (``bias_first``), or last, [Q_FF y_F; y_F' 0]."""
    M = np.zeros((k + 1, k + 1))
    off = 1 if bias_first else 0   # the points' first row
    at = 0 if bias_first else k    # the bias's row
    for a in range(k):
        ia = F[a]
        for c in range(k):
            M[a + off, c + off] = y[ia] * y[F[c]] * K[ia, F[c]]
        M[a + off, at] = y[ia]
        M[at, a + off] = y[ia]
    return M


def bias_from_gradient(G, y, alpha, C, active, prefer=None):
    """b with y_t f(x_t) = 1 on the free points: b = -y_t G_t averaged over them. With no free
    point every b in an interval is optimal: the one nearest ``prefer``, or its middle."""
    yG = -y * G
    free = active & (alpha > 0.0) & (alpha < C)
    if free.any():
        return float(np.mean(yG[free]))
    up = active & (((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0.0)))
    low = active & (((y > 0) & (alpha > 0.0)) | ((y < 0) & (alpha < C)))
    # optimal b: yG_t <= b for t in I_up, b <= yG_t for t in I_low (f = K(alpha y) + b, G = y(f - b) - 1)
    lo = np.max(yG[up]) if up.any() else -np.inf
    hi = np.min(yG[low]) if low.any() else np.inf
    if lo > hi:  # round-off
        lo = hi = 0.5 * (lo + hi)
    if prefer is not None:
        return float(min(max(prefer, lo), hi))
    if np.isfinite(lo) and np.isfinite(hi):
        return float(0.5 * (lo + hi))
    return float(lo if np.isfinite(lo) else hi)


def kkt_violation(K, y, C, alpha, b, active=None):
    """The largest violation of the SVM's KKT conditions at (alpha, b): margins y_i f(x_i)
    >= 1 where alpha_i = 0, <= 1 where alpha_i = C, = 1 in between; and |y' alpha|. Only the
    ``active`` points count (alpha must be 0 elsewhere)."""
    m = y * (K @ (alpha * y) + b)
    v = np.where(alpha <= 0.0, np.maximum(1.0 - m, 0.0),
                 np.where(alpha >= C, np.maximum(m - 1.0, 0.0), np.abs(m - 1.0)))
    if active is not None:
        v = v[active]
    return float(max(np.max(v, initial=0.0), abs(alpha @ y) / max(1.0, C)))


def polish(K, y, C, alpha, b, tol=1e-9, snap=1e-12, active=None, prefer=None):
    """Solve the KKT equations with the free set of ``alpha`` taken as exact.

    Multipliers within ``snap * C`` of a bound are put on it; the others (F) and the bias
    solve [Q_FF y_F; y_F' 0] [alpha_F; b] = [1 - Q_FB alpha_B; -y_B' alpha_B] (B: the points at C).
    The system is solved for the least-norm correction of the current (alpha_F, b), so that a
    rank-deficient Q_FF (more free points than the feature space has dimensions) keeps the
    solution nearest to the one given. With no free multiplier every b in an interval is
    optimal: the one nearest ``prefer`` (default: ``b``) is taken. ``tol`` is relative to the
    size of the terms summed into a margin, max_i sum_j alpha_j |K_ij| (at least 1). Returns the polished (alpha, b), or None when the result
    leaves the box or violates a KKT condition by more than ``tol``.
    """
    lo = alpha <= snap * C
    hi = alpha >= C * (1.0 - snap)
    if active is not None:
        lo = lo | ~active
        hi = hi & active
    F = np.flatnonzero(~lo & ~hi)
    a = np.where(hi, C, 0.0)
    if F.size:
        yF = y[F]
        A = _kkt_matrix(K, y, F, F.size, False)
        rhs = np.empty(F.size + 1)
        rhs[:F.size] = 1.0 - yF * (K[F] @ (a * y))
        rhs[F.size] = -(y @ a)
        z0 = np.append(alpha[F], b)
        try:
            dz = np.linalg.lstsq(A, rhs - A @ z0, rcond=None)[0]
        except np.linalg.LinAlgError:
            return None
        z = z0 + dz
        if not np.all(np.isfinite(z)) or np.any(z[:F.size] < 0.0) or np.any(z[:F.size] > C):
            return None
        a[F] = z[:F.size]
        b = float(z[F.size])
    else:  # y_i b >= 1 - y_i s_i at 0, <= at C, with s = K (a y)
        ys = y * (K @ (a * y))
        on = np.ones(y.shape[0], dtype=bool) if active is None else active
        lower = np.where(y > 0, 1.0 - ys, -(1.0 - ys))  # at 0: b >= (y>0) or b <= (y<0)
        at0, atC = on & ~hi, on & hi
        lo = max(np.max(lower[at0 & (y > 0)], initial=-np.inf), np.max(lower[atC & (y < 0)], initial=-np.inf))
        up = min(np.min(lower[at0 & (y < 0)], initial=np.inf), np.min(lower[atC & (y > 0)], initial=np.inf))
        b = float(min(max(b if prefer is None else prefer, lo), up))
    # the margins are sums of terms as large as sum_j |alpha_j K_ij|: their round-off scales with it
    scale = max(1.0, float(np.max(np.abs(K) @ a)))
    if kkt_violation(K, y, C, a, b, active) > tol * scale:
        return None
    return a, b


@njit(cache=True, inline="always")
def _margin_violation(a, C, m):  # pragma: no cover - compiled
    """How far a point with multiplier a and margin m = y_i f(x_i) is from its KKT condition:
    m >= 1 at a = 0, m <= 1 at a = C, m = 1 in between."""
    if a <= 0.0:
        return 1.0 - m
    if a >= C:
        return m - 1.0
    return abs(m - 1.0)


@njit(cache=True)
def _violation(y, C, alpha, active, margins):  # pragma: no cover - compiled
    """max(the largest :func:`_margin_violation` over the active points, |sum_i y_i alpha_i| / max(1, C))."""
    worst = 0.0
    ya = 0.0
    for i in range(y.shape[0]):
        if not active[i]:
            continue
        ya += y[i] * alpha[i]
        worst = max(worst, _margin_violation(alpha[i], C, margins[i]))
    return max(worst, abs(ya) / max(1.0, C))


@njit(cache=True)
def kkt_check(K, y, C, alpha, active, b):  # pragma: no cover - compiled
    """The KKT violation of (alpha, b) computed afresh (as
    :func:`~cudbound.optim.svm_dual.kkt.kkt_violation`), and the size of the terms summed into a
    margin, max_i sum_j alpha_j |K_ij| (at least 1); O(n x #SV)."""
    n = y.shape[0]
    sv, nsv = support_vectors(alpha, active)
    scale = 1.0
    margins = np.zeros(n)
    for i in range(n):
        if not active[i]:
            continue
        s = 0.0
        mag = 0.0
        for q in range(nsv):
            j = sv[q]
            s += y[j] * alpha[j] * K[i, j]
            mag += alpha[j] * abs(K[i, j])
        scale = max(scale, mag)
        margins[i] = y[i] * (s + b)
    return _violation(y, C, alpha, active, margins), scale


@njit(cache=True)
def kkt_check_near(K, y, C, alpha, active, b, alpha_ref, G_ref):  # pragma: no cover - compiled
    """The KKT violation of (alpha, b) as :func:`~cudbound.optim.svm_dual.kkt.kkt_violation`, with
    the gradient obtained from ``G_ref`` (that of ``alpha_ref``, t's term included) in one update over the
    multipliers that differ: O(n x #changed) instead of O(n x #SV) afresh. K must be
    symmetric (rows are streamed in place of columns)."""
    n = y.shape[0]
    G = G_ref.copy()
    for j in range(n):
        d = alpha[j] - alpha_ref[j]
        if d != 0.0:
            Kj = K[j]
            w = d * y[j]
            for i in range(n):
                G[i] += Kj[i] * w * y[i]
    for i in range(n):
        G[i] = G[i] + 1.0 + y[i] * b   # the margin y_i f(x_i)
    return _violation(y, C, alpha, active, G)
