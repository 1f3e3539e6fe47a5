"""Sequential minimal optimisation of the SVM dual, compiled, and the dual's gradient.

:func:`smo` is SMO with second-order working-set selection (Fan, Chen & Lin 2005, the rule
libsvm uses): each step moves one pair (i, j) along the feasible direction d_i = y_i,
d_j = -y_j, whose curvature is the kernel distance K_ii + K_jj - 2 K_ij, by the exact
minimising step clipped to the box. It stops when the maximal KKT violation m - M
(m = max over I_up of -y_t G_t, M = min over I_low, G the gradient Q alpha - 1) is below
``tol``. It starts from any feasible alpha, which is what makes warm starts (leave-one-out)
cheap, and it can leave points out (``active``).

References
----------
Fan, R.-E., Chen, P.-H., Lin, C.-J. (2005). Working set selection using second order
information for training support vector machines. JMLR 6, 1889-1918.
Platt, J. (1998). Sequential minimal optimization. Microsoft Research TR-98-14.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["smo", "gradient"]

_TAU = 1e-12  # curvature used when two points coincide in feature space


@njit(cache=True)
def support_vectors(alpha, active):  # pragma: no cover - compiled
    """(sv, m): the active points with alpha_j != 0 in sv[:m], in order."""
    n = alpha.shape[0]
    sv = np.empty(n, dtype=np.int64)
    m = 0
    for j in range(n):
        if active[j] and alpha[j] != 0.0:
            sv[m] = j
            m += 1
    return sv, m


@njit(cache=True)
def gradient(K, y, alpha, active):  # pragma: no cover - compiled
    """G_i = y_i sum_j alpha_j y_j K_ij - 1 on the active points (0 elsewhere), summing over the
    support vectors only: O(n x #SV)."""
    n = y.shape[0]
    sv, m = support_vectors(alpha, active)
    G = np.zeros(n)
    for i in range(n):
        if active[i]:
            s = 0.0
            for q in range(m):
                j = sv[q]
                s += y[j] * alpha[j] * K[i, j]
            G[i] = y[i] * s - 1.0
    return G


@njit(cache=True)
def smo(K, y, C, alpha, active, tol, max_iter):  # pragma: no cover - compiled
    """Minimise the SVM dual over the active points from the feasible ``alpha`` (updated in place).

    Returns (gradient G = Q alpha - 1 on the active points, number of iterations,
    final violation m - M). Inactive points keep alpha = 0 and are ignored.
    """
    n = y.shape[0]
    G = gradient(K, y, alpha, active)
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
