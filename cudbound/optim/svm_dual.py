"""The soft-margin SVM dual, solved to high accuracy: compiled SMO, then a KKT polish.

The dual of the soft-margin SVM with a bias on kernel matrix K and labels y in {-1, +1}:

    min_alpha  1/2 alpha' Q alpha - sum(alpha),   Q = (y y') * K,
    subject to 0 <= alpha_i <= C,  y' alpha = 0.

:func:`smo` is sequential minimal optimisation with second-order working-set selection
(Fan, Chen & Lin 2005, the rule libsvm uses): each step moves one pair (i, j) along the
feasible direction d_i = y_i, d_j = -y_j, whose curvature is the kernel distance
K_ii + K_jj - 2 K_ij, by the exact minimising step clipped to the box. It stops when the
maximal KKT violation m - M (m = max over I_up of -y_t G_t, M = min over I_low, G the
gradient Q alpha - 1) is below ``tol``. It starts from any feasible alpha, which is what
makes warm starts (leave-one-out) cheap, and it can leave points out (``active``).

:func:`polish` then takes the set of free multipliers (0 < alpha_i < C) as exact and solves
the KKT equations y_i f(x_i) = 1 on it together with y' alpha = 0; the polished point is
kept only when it satisfies every KKT condition to 1e-9. The pair gives multipliers exact
to round-off whenever SMO has identified the free set, which the xi-alpha count
(a comparison with 1) needs.

scikit-learn's ``SVC`` (libsvm) was the first choice; at the tolerance 1e-10 the count needs
it did not terminate on a 20-point problem (polynomial kernel), so the toolkit solves the
dual itself, and its tests check it against CLARABEL at 1e-12.

References
----------
Fan, R.-E., Chen, P.-H., Lin, C.-J. (2005). Working set selection using second order
information for training support vector machines. JMLR 6, 1889-1918.
Platt, J. (1998). Sequential minimal optimization. Microsoft Research TR-98-14.
"""
from __future__ import annotations

import warnings

import numpy as np
from numba import njit

__all__ = ["smo", "bias_from_gradient", "polish", "kkt_violation"]

_TAU = 1e-12  # curvature used when two points coincide in feature space


@njit(cache=True)
def smo(K, y, C, alpha, active, tol, max_iter):  # pragma: no cover - compiled
    """Minimise the SVM dual over the active points from the feasible ``alpha`` (updated in place).

    Returns (gradient G = Q alpha - 1 on the active points, number of iterations,
    final violation m - M). Inactive points keep alpha = 0 and are ignored.
    """
    n = y.shape[0]
    G = np.zeros(n)
    for i in range(n):
        if active[i]:
            s = 0.0
            for j in range(n):
                if active[j] and alpha[j] != 0.0:
                    s += y[j] * alpha[j] * K[i, j]
            G[i] = y[i] * s - 1.0
    it = 0
    gap = np.inf
    while it < max_iter:
        # i: the most violating point that may increase y_i alpha_i
        m = -np.inf
        i = -1
        for t in range(n):
            if active[t] and ((y[t] > 0 and alpha[t] < C) or (y[t] < 0 and alpha[t] > 0.0)):
                v = -y[t] * G[t]
                if v > m:
                    m = v
                    i = t
        if i < 0:
            gap = 0.0
            break
        # j: among points that may decrease y_j alpha_j, the largest second-order decrease
        M = np.inf
        j = -1
        best = np.inf
        for t in range(n):
            if active[t] and ((y[t] > 0 and alpha[t] > 0.0) or (y[t] < 0 and alpha[t] < C)):
                v = -y[t] * G[t]
                if v < M:
                    M = v
                if v < m:
                    a = K[i, i] + K[t, t] - 2.0 * K[i, t]
                    if a <= 0.0:
                        a = _TAU
                    dec = -(m - v) * (m - v) / a
                    if dec < best:
                        best = dec
                        j = t
        gap = m - M
        if gap < tol or j < 0:
            break
        a = K[i, i] + K[j, j] - 2.0 * K[i, j]
        if a <= 0.0:
            a = _TAU
        step = (m + y[j] * G[j]) / a
        # feasible steps: alpha_i + y_i s in [0, C] and alpha_j - y_j s in [0, C]
        smax_i = C - alpha[i] if y[i] > 0 else alpha[i]
        smax_j = alpha[j] if y[j] > 0 else C - alpha[j]
        smax = min(smax_i, smax_j)
        if step >= smax:  # a bound is reached: set it exactly
            step = smax
            alpha[i] = (C if y[i] > 0 else 0.0) if smax_i == smax else min(max(alpha[i] + y[i] * step, 0.0), C)
            alpha[j] = (0.0 if y[j] > 0 else C) if smax_j == smax else min(max(alpha[j] - y[j] * step, 0.0), C)
        else:
            alpha[i] = min(max(alpha[i] + y[i] * step, 0.0), C)
            alpha[j] = min(max(alpha[j] - y[j] * step, 0.0), C)
        for t in range(n):
            if active[t]:
                G[t] += y[t] * (K[t, i] - K[t, j]) * step
        it += 1
    return G, it, gap


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


def kkt_violation(K, y, C, alpha, b):
    """The largest violation of the SVM's KKT conditions at (alpha, b): margins y_i f(x_i)
    >= 1 where alpha_i = 0, <= 1 where alpha_i = C, = 1 in between; and |y' alpha|."""
    m = y * (K @ (alpha * y) + b)
    v = np.where(alpha <= 0.0, np.maximum(1.0 - m, 0.0),
                 np.where(alpha >= C, np.maximum(m - 1.0, 0.0), np.abs(m - 1.0)))
    return float(max(np.max(v, initial=0.0), abs(alpha @ y) / max(1.0, C)))


def polish(K, y, C, alpha, b, tol=1e-9, snap=0.0):
    """Solve the KKT equations with the free set of ``alpha`` taken as exact.

    Multipliers within ``snap * C`` of a bound are put on it; the others (F) and the bias
    solve [Q_FF y_F; y_F' 0] [alpha_F; b] = [1 - Q_FB alpha_B; -y_B' alpha_B] (B: the points at C).
    The system is solved for the least-norm correction of the current (alpha_F, b), so that a
    rank-deficient Q_FF (more free points than the feature space has dimensions) keeps the
    solution nearest to the one given. Returns the polished (alpha, b), or None when the result
    leaves the box or violates a KKT condition by more than ``tol``.
    """
    lo = alpha <= snap * C
    hi = alpha >= C * (1.0 - snap)
    F = np.flatnonzero(~lo & ~hi)
    a = np.where(hi, C, 0.0)
    if F.size:
        yF = y[F]
        A = np.empty((F.size + 1, F.size + 1))
        A[:F.size, :F.size] = (yF[:, None] * yF[None, :]) * K[np.ix_(F, F)]
        A[:F.size, F.size] = yF
        A[F.size, :F.size] = yF
        A[F.size, F.size] = 0.0
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
    if kkt_violation(K, y, C, a, b) > tol:
        return None
    return a, b


def solve_conic(K, y, C, active):
    """The dual by CLARABEL through cvxpy at tolerance 1e-12, on a factor L L' = K (eigenvalues
    below 1e-12 of the largest dropped): the fallback when SMO stalls, which it does when K has
    low rank and C is large (many multipliers must move together). Returns alpha (zero where
    inactive) and the bias from the equality constraint's multiplier."""
    import cvxpy as cp

    idx = np.flatnonzero(active)
    Ka, ya = K[np.ix_(idx, idx)], y[idx]
    w, V = np.linalg.eigh(Ka)
    keep = w > 1e-12 * max(w[-1], 1e-300)
    L = V[:, keep] * np.sqrt(w[keep])
    a = cp.Variable(idx.size)
    eq = ya @ a == 0
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ cp.multiply(ya, a)) - cp.sum(a)), [a >= 0, a <= C, eq])
    try:
        with warnings.catch_warnings():  # "may be inaccurate": the caller checks the KKT conditions itself
            warnings.simplefilter("ignore", UserWarning)
            prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, max_iter=500)
    except cp.error.SolverError:
        return None
    alpha = np.zeros(y.shape[0])
    if a.value is None:
        return None
    alpha[idx] = np.clip(a.value, 0.0, C)
    # the multiplier of y' a = 0 is the bias up to sign convention: f = K (alpha y) + b
    b = float(-eq.dual_value) if eq.dual_value is not None else 0.0
    return alpha, b

