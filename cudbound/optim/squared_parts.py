"""Least squares on many parts of the data at once, each with its own design: the compiled kernel
behind the squared-loss refits of a basis that is refitted on every part
(:meth:`cudbound.refit.Refits.scored` for PCA and composed bases).

Part g has a design Phi_g (n x p, every one of the n rows, in the part or not) and weights
w_gi >= 0 (a bootstrap sample's counts or a fold's 0/1). As :func:`cudbound.design.reparametrise`
does for one design, its columns are scaled to unit norm (A = Phi D^-1, the norm taken after
dividing by the column's largest |entry|) and A = Q R (Householder), Z = sqrt(n) Q; the part's fit
is then gamma = argmin sum_i w_gi (y_i - z_i'gamma)^2, from the normal equations
Z'W Z gamma = Z'W y under :func:`cudbound.refit.solve_normal_equations`'s singular rule (singular
when lambda_min <= ``rtol`` lambda_max; then the least-norm solution with the eigenvalues below
``rtol`` lambda_max dropped). Returned for every row i: the prediction z_i'gamma and its scale
sum_c t_ic |gamma_c| (the tie rule's yardstick, :mod:`cudbound.ties`), t_i = |z_i| + ``inputs`` sqrt(n)
e_i D^-1 |R^-1| with the terms z_i = sqrt(n) a_i R^-1 comes from, e_i those behind phi_i (|phi_i| for entries
given as data; Z = Phi T, T = sqrt(n) D^-1 R^-1; as ``Reparametrisation.Z_terms``,
``cudbound.ties.rounded_terms``: a feature at its mean has z = 0 only up to their rounding).

A design that is not clearly of full rank (least singular value of A at most ``margin`` times the
largest) or has a non-finite entry is not fitted (status 2): the caller refits it alone, where
reparametrise's pivoted QR decides its rank exactly. Clear full rank is proved cheaply for most
designs, sigma_min(R) >= 1 / |R^-1|_F and sigma_max(R) <= |R|_F; only the other designs need the
eigenvalues of R'R (LAPACK, through numba). Likewise the normal matrix is proved regular by
det(H / t) > ``regular``, t = trace(H) (:func:`cudbound.refit.regular_bound` gives it), else decided
by its eigenvalues. One part at a time in one loop, every sum in a fixed order. Fewer rows than
columns (n < p): no part is fitted.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["squared_part_fits", "FITTED", "SINGULAR", "NOT_FITTED"]

FITTED, SINGULAR, NOT_FITTED = 0, 1, 2
"""A part's status: fitted (regular normal equations), fitted by the singular rule, not fitted."""


@njit(cache=True)
def _householder_qr(A, V, tau):
    """A = Q R in place (Golub & Van Loan, Matrix Computations, 4th ed., 5.2.2; LAPACK's dgeqr2): R in
    A's upper triangle, reflector j = I - tau_j v v' with v = V[j] (zero before entry j, one there)."""
    n, p = A.shape
    for j in range(p):
        alpha = A[j, j]
        big = 0.0
        for i in range(j + 1, n):
            big = max(big, abs(A[i, j]))
        xnorm = 0.0
        if big > 0.0:
            acc = 0.0
            for i in range(j + 1, n):
                r = A[i, j] / big
                acc += r * r
            xnorm = big * math.sqrt(acc)
        for i in range(n):
            V[j, i] = 0.0
        V[j, j] = 1.0
        if xnorm == 0.0:
            tau[j] = 0.0
            continue
        beta = -math.copysign(math.hypot(alpha, xnorm), alpha)
        t = (beta - alpha) / beta
        tau[j] = t
        scale = 1.0 / (alpha - beta)
        for i in range(j + 1, n):
            V[j, i] = A[i, j] * scale
            A[i, j] = 0.0
        A[j, j] = beta
        for c in range(j + 1, p):
            dot = A[j, c]
            for i in range(j + 1, n):
                dot += V[j, i] * A[i, c]
            dot *= t
            A[j, c] -= dot
            for i in range(j + 1, n):
                A[i, c] -= dot * V[j, i]


@njit(cache=True)
def _clearly_full_rank(R, p, margin, Rinv):
    """Whether sigma_min(R) > margin sigma_max(R) for the upper-triangular p x p R: proved by
    1 / (|R^-1|_F |R|_F) > margin where it can be, else decided by the eigenvalues of R'R."""
    for j in range(p):
        if R[j, j] == 0.0 or not math.isfinite(R[j, j]):
            return False
    for c in range(p):                                               # R^-1, upper triangular, by columns
        for i in range(p):
            Rinv[i, c] = 0.0
        Rinv[c, c] = 1.0 / R[c, c]
        for i in range(c - 1, -1, -1):
            acc = 0.0
            for m in range(i + 1, c + 1):
                acc += R[i, m] * Rinv[m, c]
            Rinv[i, c] = -acc / R[i, i]
    fr = 0.0
    fi = 0.0
    for i in range(p):
        for c in range(i, p):
            fr += R[i, c] * R[i, c]
            fi += Rinv[i, c] * Rinv[i, c]
    if math.isfinite(fi) and 1.0 / math.sqrt(fr * fi) > margin:
        return True
    G = np.zeros((p, p))
    for a in range(p):
        for b in range(p):
            acc = 0.0
            for m in range(min(a, b) + 1):
                acc += R[m, a] * R[m, b]
            G[a, b] = acc
    ev = np.linalg.eigvalsh(G)                                       # ascending
    return ev[0] > margin * margin * ev[p - 1]


@njit(cache=True)
def _lu_det_trace(H, LU, piv):
    """LU of H with partial pivoting into ``LU``/``piv`` (H kept); returns (det(H / trace(H)), trace(H)),
    the determinant scaled so that it neither overflows nor underflows with p (1 for trace(H) <= 0)."""
    p = H.shape[0]
    det = 1.0
    trace = 0.0
    for a in range(p):
        trace += H[a, a]
        for b in range(p):
            LU[a, b] = H[a, b]
    unit = trace if trace > 0.0 else 1.0
    for j in range(p):
        best = j
        for i in range(j + 1, p):
            if abs(LU[i, j]) > abs(LU[best, j]):
                best = i
        piv[j] = best
        if best != j:
            for b in range(p):
                LU[j, b], LU[best, b] = LU[best, b], LU[j, b]
            det = -det
        d = LU[j, j]
        det *= d / unit
        if d == 0.0:
            continue
        for i in range(j + 1, p):
            f = LU[i, j] / d
            LU[i, j] = f
            for b in range(j + 1, p):
                LU[i, b] -= f * LU[j, b]
    return det, trace


@njit(cache=True)
def _lu_solve(LU, piv, g, x):
    """x = H^-1 g from :func:`_lu_det_trace`'s factors (P H = L U, the row interchanges applied to the
    multipliers too, as LAPACK's getf2 does: so all of them are applied to g first)."""
    p = LU.shape[0]
    for i in range(p):
        x[i] = g[i]
    for j in range(p):
        if piv[j] != j:
            x[j], x[piv[j]] = x[piv[j]], x[j]
    for j in range(p):
        for i in range(j + 1, p):
            x[i] -= LU[i, j] * x[j]
    for i in range(p - 1, -1, -1):
        acc = x[i]
        for b in range(i + 1, p):
            acc -= LU[i, b] * x[b]
        x[i] = acc / LU[i, i]


@njit(cache=True)
def _normal_solution(H, g, rtol, regular, beta, LU, piv):
    """beta solving H beta = g under the singular rule; returns whether H was singular."""
    p = H.shape[0]
    det, trace = _lu_det_trace(H, LU, piv)
    if trace > 0.0 and det > regular:
        _lu_solve(LU, piv, g, beta)
        return False
    lam, U = np.linalg.eigh(H)                                       # ascending
    cut = rtol * max(lam[p - 1], 0.0)
    if lam[0] > cut:
        _lu_solve(LU, piv, g, beta)
        return False
    for a in range(p):
        beta[a] = 0.0
    for c in range(p):
        if lam[c] > cut:
            coef = 0.0
            for a in range(p):
                coef += U[a, c] * g[a]
            coef /= lam[c]
            for a in range(p):
                beta[a] += U[a, c] * coef
    return True


@njit(cache=True)
def squared_part_fits(Phi, terms, weights, y, todo, margin, rtol, regular, tie, inputs):
    """(predictions (G, n), scales (G, n), status (G,)) of the least-squares fits of the parts
    ``weights`` (G, n) on their designs ``Phi`` (G, n, p), ``terms`` (Phi's shape) the magnitude of the terms
    behind Phi's entries (|Phi| for entries given as data; ``cudbound.basis.Basis.transform_terms``, which
    replace |Phi| in Z's terms below), labels ``y`` (n,); parts with ``todo`` False
    are skipped (status :data:`NOT_FITTED`). A component of g = Z'Wy within ``tie`` (``cudbound.ties.TIE_RTOL``)
    of the magnitude of its terms is made 0 (``cudbound.ties.snap_zeros``: labels that balance give the zero
    classifier, not the rounding of g); ``inputs`` is ``cudbound.ties.INPUT_RTOL``, the weight of the terms
    behind Z in those magnitudes."""
    G, n, p = Phi.shape
    out = np.zeros((G, n))
    scale = np.zeros((G, n))
    status = np.full(G, NOT_FITTED, dtype=np.int8)
    if n < p:
        return out, scale, status
    A = np.empty((n, p))
    V = np.empty((p, n))
    tau = np.empty(p)
    Z = np.empty((n, p))
    Rinv = np.empty((p, p))
    H = np.empty((p, p))
    LU = np.empty((p, p))
    piv = np.empty(p, dtype=np.int64)
    g = np.empty(p)
    gmag = np.empty(p)
    dcol = np.empty(p)
    Zt = np.empty((n, p))
    beta = np.empty(p)
    root_n = math.sqrt(n)
    for part in range(G):
        if not todo[part]:
            continue
        finite = True
        for j in range(p):                                           # A = Phi D^-1, unit columns
            big = 0.0
            for i in range(n):
                v = Phi[part, i, j]
                if not math.isfinite(v):
                    finite = False
                big = max(big, abs(v))
            if not finite:
                break
            big = big if big > 0.0 else 1.0
            acc = 0.0
            for i in range(n):
                r = Phi[part, i, j] / big
                A[i, j] = r
                acc += r * r
            norm = math.sqrt(acc)
            norm = norm if norm > 0.0 else 1.0
            dcol[j] = big * norm
            for i in range(n):
                A[i, j] /= norm
        if not finite:
            continue
        _householder_qr(A, V, tau)
        if not _clearly_full_rank(A, p, margin, Rinv):
            continue
        for i in range(n):                                           # Z = sqrt(n) Q, Q = H_0 ... H_{p-1} [I; 0]
            for c in range(p):
                Z[i, c] = 1.0 if i == c else 0.0
        for j in range(p - 1, -1, -1):
            t = tau[j]
            if t == 0.0:
                continue
            for c in range(p):
                dot = 0.0
                for i in range(j, n):
                    dot += V[j, i] * Z[i, c]
                dot *= t
                for i in range(j, n):
                    Z[i, c] -= dot * V[j, i]
        for i in range(n):
            for c in range(p):
                Z[i, c] *= root_n
        for i in range(n):                               # |Z| + inputs sqrt(n) e_i D^-1 |R^-1| (Z's terms)
            for c in range(p):
                acc = 0.0
                for j in range(c + 1):
                    acc += terms[part, i, j] / dcol[j] * abs(Rinv[j, c])
                Zt[i, c] = abs(Z[i, c]) + inputs * root_n * acc
        for a in range(p):                                           # H = Z'WZ, g = Z'Wy
            g[a] = 0.0
            gmag[a] = 0.0
            for b in range(p):
                H[a, b] = 0.0
        for i in range(n):
            w = weights[part, i]
            if w == 0.0:
                continue
            for a in range(p):
                wa = w * Z[i, a]
                g[a] += wa * y[i]
                gmag[a] += w * Zt[i, a] * abs(y[i])
                for b in range(p):
                    H[a, b] += wa * Z[i, b]
        for a in range(p):   # 0 within rounding of its terms is 0 (cudbound.ties.snap_zeros): balanced labels
            if abs(g[a]) <= tie * gmag[a]:
                g[a] = 0.0
        singular = _normal_solution(H, g, rtol, regular, beta, LU, piv)
        for i in range(n):
            acc = 0.0
            mag = 0.0
            for c in range(p):
                acc += Z[i, c] * beta[c]
                mag += Zt[i, c] * abs(beta[c])
            out[part, i] = acc
            scale[part, i] = mag
        status[part] = SINGULAR if singular else FITTED
    return out, scale, status
