"""Principal components fitted on many parts of the data at once: the compiled kernel behind
:meth:`cudbound.basis.PCABasis.refit_designs`.

Part g (a weight w_gi >= 0 per row, the rows of a bootstrap sample or a fold repeated by their
counts) gets :meth:`PCABasis.fit`'s copy: the weighted centre mu_g = sum_i w_gi x_i / m_g
(m_g = sum_i w_gi), the weighted standard deviations s_g (``standardize``; a column constant on
the part keeps scale 1) and the k leading right singular vectors v_1..v_k of
R_g = diag(sqrt(w_g)) (X - mu_g) / s_g restricted to the part's rows. They come from the
eigendecomposition of the smaller Gram matrix of R_g, R'R or RR' (then v = R'u / |R'u|), each
component signed so that its largest |entry| is positive, as :meth:`PCABasis.fit` signs them.
The part's design is then [1, ((x_i - mu_g) / s_g) v_1, ..., ((x_i - mu_g) / s_g) v_k] at every
row i of X, in or out of the part.

The vectors span the SVD's leading subspace to within about machine epsilon / ``gap`` when the
k-th eigenvalue of the Gram matrix exceeds the (k+1)-th and zero by ``gap`` times the largest;
a part where it does not, or whose total weight is below k, or with a column constant on the part
up to rounding (0 < var <= (1e-12 mean)^2, where :meth:`PCABasis.fit` and this kernel could
disagree on the scale), is flagged (ok False) and its design left at zero: the caller refits it
alone, by :meth:`PCABasis.fit`'s SVD. One part at a time, in one loop without temporaries per
part beyond the Gram matrix and its eigenvectors (``numpy.linalg.eigh``: LAPACK's ``syevd``).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["pca_part_designs"]


@njit(cache=True)
def _gram(M):
    """M'M, the Gram matrix of M's columns (symmetric, summed over M's rows in order)."""
    rows, size = M.shape
    A = np.empty((size, size))
    for a in range(size):
        for b in range(a + 1):
            s = 0.0
            for t in range(rows):
                s += M[t, a] * M[t, b]
            A[a, b] = s
            A[b, a] = s
    return A


@njit(cache=True)
def pca_part_designs(X, weights, k, standardize, intercept, gap):
    """(designs (G, n, k + intercept), ok (G,)) for the parts ``weights`` (G, n) of X (Gx, n, d),
    Gx = 1 (the same features for every part) or G (part g's own features X[g])."""
    G, n = weights.shape
    d = X.shape[2]
    q = k + (1 if intercept else 0)
    out = np.zeros((G, n, q))
    ok = np.zeros(G, dtype=np.bool_)
    mean = np.empty(d)
    var = np.empty(d)
    scale = np.empty(d)
    rows = np.empty(n, dtype=np.int64)
    root = np.empty(n)
    R = np.empty((n, d))
    V = np.empty((k, d))
    for g in range(G):
        x = X[g] if X.shape[0] > 1 else X[0]
        m = 0.0
        r = 0
        for i in range(n):
            w = weights[g, i]
            if w > 0:
                rows[r] = i
                root[r] = math.sqrt(w)
                r += 1
                m += w
        if m < k or r == 0:
            continue
        for j in range(d):
            s = 0.0
            for t in range(r):
                i = rows[t]
                s += weights[g, i] * x[i, j]
            mean[j] = s / m
        flat = False
        for j in range(d):
            s = 0.0
            for t in range(r):
                i = rows[t]
                e = x[i, j] - mean[j]
                s += weights[g, i] * e * e
            var[j] = s / m
            if var[j] > 0 and var[j] <= (1e-12 * mean[j]) ** 2:
                flat = True
            scale[j] = math.sqrt(var[j]) if (standardize and var[j] > 0) else 1.0
        if flat:
            continue
        for t in range(r):
            i = rows[t]
            for j in range(d):
                R[t, j] = (x[i, j] - mean[j]) / scale[j] * root[t]
        tall = r >= d
        size = d if tall else r
        if k > size:
            continue
        if tall:
            A = _gram(R[:r])                                         # R'R
        else:
            A = _gram(R[:r].T)                                       # RR'
        lam, U = np.linalg.eigh(A)                                   # ascending
        top = max(lam[size - 1], 0.0)
        below = max(lam[size - 1 - k], 0.0) if k < size else 0.0
        if not (top > 0 and lam[size - k] - below > gap * top):
            continue
        for c in range(k):
            col = size - 1 - c
            if tall:
                for j in range(d):
                    V[c, j] = U[j, col]
            else:
                norm = 0.0
                for j in range(d):
                    s = 0.0
                    for t in range(r):
                        s += R[t, j] * U[t, col]
                    V[c, j] = s
                    norm += s * s
                norm = math.sqrt(norm)
                for j in range(d):
                    V[c, j] /= norm
            lead = 0                                                 # the first largest |entry|
            for j in range(1, d):
                if abs(V[c, j]) > abs(V[c, lead]):
                    lead = j
            if V[c, lead] < 0:
                for j in range(d):
                    V[c, j] = -V[c, j]
            for j in range(d):
                V[c, j] /= scale[j]
        for i in range(n):
            if intercept:
                out[g, i, 0] = 1.0
            for c in range(k):
                s = 0.0
                for j in range(d):
                    s += (x[i, j] - mean[j]) * V[c, j]
                out[g, i, q - k + c] = s
        ok[g] = True
    return out, ok
