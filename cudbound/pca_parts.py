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
row i of X, in or out of the part, with the terms of each score, sum_j (t_ij + |mu_gj|) |v_cj| / s_gj
(t the terms of X's entries): a row at the part's centre has the score 0 only up to their rounding, and
the tie rule must see it (``cudbound.basis.Basis.transform_terms``).

The vectors span the SVD's leading subspace to within about machine epsilon / ``gap`` when the
k-th eigenvalue of the Gram matrix exceeds the (k+1)-th and zero by ``gap`` times the largest
(a largest eigenvalue within rounding of zero, :data:`_ZERO_TOL`, counting as zero);
a part where it does not, or whose total weight is below k, or with a column constant on the part
up to rounding (0 < var <= (1e-12 mean)^2, where :meth:`PCABasis.fit` and this kernel could
disagree on the scale), is flagged (ok False) and its design left at zero: the caller refits it
alone, by :meth:`PCABasis.fit`'s SVD. One part at a time, in one loop without temporaries per
part beyond the Gram matrix and its eigenvectors. Only the k + 1 largest eigenvalues and k
eigenvectors of each Gram matrix are computed (:func:`_leading_pairs`: Householder
tridiagonalisation, bisection, inverse iteration, every sum in a fixed order), except below 9 x 9,
where LAPACK's full eigendecomposition is as fast (:func:`_top_eigen`).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["pca_part_designs"]


@njit(cache=True)
def _gram_rows(P, A):
    """A <- P P', the Gram matrix of P's rows (each entry summed over P's columns in order, four
    entries at a time so that their sums run side by side)."""
    size, length = P.shape
    for a in range(size):
        b = 0
        while b + 4 <= a + 1:
            s0 = s1 = s2 = s3 = 0.0
            for t in range(length):
                pa = P[a, t]
                s0 += pa * P[b, t]
                s1 += pa * P[b + 1, t]
                s2 += pa * P[b + 2, t]
                s3 += pa * P[b + 3, t]
            A[a, b], A[a, b + 1], A[a, b + 2], A[a, b + 3] = s0, s1, s2, s3
            b += 4
        while b <= a:
            s0 = 0.0
            for t in range(length):
                s0 += P[a, t] * P[b, t]
            A[a, b] = s0
            b += 1
        for b in range(a):
            A[b, a] = A[a, b]


@njit(cache=True)
def _tridiagonalize(A, d, e, tau, H, v, w):
    """A = Q T Q' by Householder reflections H_0 .. H_{s-3} (Q = H_0 H_1 ... H_{s-3}), in place:
    T's diagonal in ``d``, its off-diagonal in ``e``; reflector j is I - tau_j v v' with v = H[j]
    (zero before entry j + 1, one there) (Golub & Van Loan, Matrix Computations, 4th ed., section
    8.3.1; LAPACK's dsytd2). A is symmetric and read whole; its trailing blocks are overwritten;
    ``v`` and ``w`` (length s) are work space."""
    s = A.shape[0]
    for j in range(s - 2):
        alpha = A[j + 1, j]
        xnorm = _norm(A[j + 2:, j])
        d[j] = A[j, j]
        for i in range(s):
            H[j, i] = 0.0
        if xnorm == 0.0:
            tau[j] = 0.0
            e[j] = alpha
            continue
        beta = -math.copysign(math.hypot(alpha, xnorm), alpha)
        t = (beta - alpha) / beta
        tau[j] = t
        e[j] = beta
        scale = 1.0 / (alpha - beta)
        v[j + 1] = 1.0
        for i in range(j + 2, s):
            v[i] = A[i, j] * scale
        for i in range(j + 1, s):
            H[j, i] = v[i]
        # w = p - (tau/2)(p'v) v with p = tau B v, B = A[j+1:, j+1:]; then B -= v w' + w v'
        a = j + 1                                                    # p = tau B v, four rows at a time
        while a + 4 <= s:
            s0 = s1 = s2 = s3 = 0.0
            for b in range(j + 1, s):
                vb = v[b]
                s0 += A[a, b] * vb
                s1 += A[a + 1, b] * vb
                s2 += A[a + 2, b] * vb
                s3 += A[a + 3, b] * vb
            w[a], w[a + 1], w[a + 2], w[a + 3] = t * s0, t * s1, t * s2, t * s3
            a += 4
        while a < s:
            s0 = 0.0
            for b in range(j + 1, s):
                s0 += A[a, b] * v[b]
            w[a] = t * s0
            a += 1
        dot = 0.0
        for a in range(j + 1, s):
            dot += w[a] * v[a]
        half = 0.5 * t * dot
        for a in range(j + 1, s):
            w[a] -= half * v[a]
        for a in range(j + 1, s):
            va, wa = v[a], w[a]
            for b in range(j + 1, s):
                A[a, b] -= va * w[b] + wa * v[b]
    if s >= 2:
        d[s - 2] = A[s - 2, s - 2]
        e[s - 2] = A[s - 1, s - 2]
    d[s - 1] = A[s - 1, s - 1]


@njit(cache=True)
def _norm(x):
    """The Euclidean norm of x, scaled by its largest |entry| so that no square overflows (NaN if an
    entry is NaN)."""
    big = 0.0
    for i in range(x.shape[0]):
        if x[i] != x[i]:
            return math.nan
        big = max(big, abs(x[i]))
    if big == 0.0 or not math.isfinite(big):
        return big
    acc = 0.0
    for i in range(x.shape[0]):
        r = x[i] / big
        acc += r * r
    return big * math.sqrt(acc)


@njit(cache=True)
def _bisect_top(d, e2, count, low, high, pivmin, tol, lam, lo, hi, mid, q, below):
    """The ``count`` largest eigenvalues of T (descending, into ``lam``) by bisection on the Sturm
    count, all at once (their bisections interleaved in one pass over T), each to ``tol`` times its
    size (or machine epsilon times |T|, whichever is larger), from an interval [low, high] that holds
    the whole spectrum; ``lo``, ``hi``, ``mid``, ``q`` and ``below`` (length >= count) are work space."""
    s = d.shape[0]
    floor = 4.440892098500626e-16 * max(abs(low), abs(high)) + 2.0 * pivmin
    for c in range(count):
        lo[c], hi[c] = low, high
    for _ in range(200):
        busy = False
        for c in range(count):
            mid[c] = 0.5 * (lo[c] + hi[c])
            if hi[c] - lo[c] > max(tol * max(abs(lo[c]), abs(hi[c])), floor):
                busy = True
        if not busy:
            break
        for c in range(count):
            x = d[0] - mid[c]
            q[c] = -pivmin if abs(x) <= pivmin else x
            below[c] = 1 if q[c] < 0 else 0
        for i in range(1, s):
            for c in range(count):
                x = d[i] - mid[c] - e2[i - 1] / q[c]
                if abs(x) <= pivmin:
                    x = -pivmin
                q[c] = x
                if x < 0:
                    below[c] += 1
        for c in range(count):                                      # eigenvalue s - 1 - c
            if below[c] <= s - 1 - c:
                lo[c] = mid[c]
            else:
                hi[c] = mid[c]
    for c in range(count):
        lam[c] = 0.5 * (lo[c] + hi[c])


@njit(cache=True)
def _tridiagonal_solve(d, e, sigma, x, tiny, u0, u1, u2, mult, swap):
    """x <- (T - sigma I)^-1 x by Gaussian elimination with partial pivoting (T symmetric tridiagonal;
    a zero pivot replaced by ``tiny``, as inverse iteration needs: LAPACK's dlagtf / dlagts)."""
    s = d.shape[0]
    p0 = d[0] - sigma
    p1 = e[0] if s > 1 else 0.0
    for i in range(s - 1):
        q0, q1 = e[i], d[i + 1] - sigma
        q2 = e[i + 1] if i + 2 < s else 0.0
        if abs(q0) > abs(p0):
            swap[i] = True
            u0[i], u1[i], u2[i] = q0, q1, q2
            o0, o1, o2 = p0, p1, 0.0
        else:
            swap[i] = False
            u0[i], u1[i], u2[i] = p0, p1, 0.0
            o0, o1, o2 = q0, q1, q2
        if u0[i] == 0.0:
            u0[i] = tiny
        m = o0 / u0[i]
        mult[i] = m
        p0 = o1 - m * u1[i]
        p1 = o2 - m * u2[i]
    u0[s - 1] = p0 if p0 != 0.0 else tiny
    for i in range(s - 1):
        if swap[i]:
            x[i], x[i + 1] = x[i + 1], x[i]
        x[i + 1] -= mult[i] * x[i]
    x[s - 1] /= u0[s - 1]
    if s >= 2:
        x[s - 2] = (x[s - 2] - u1[s - 2] * x[s - 1]) / u0[s - 2]
    for i in range(s - 3, -1, -1):
        x[i] = (x[i] - u1[i] * x[i + 1] - u2[i] * x[i + 2]) / u0[i]


@njit(cache=True)
def _eigen_workspace(size, k):
    """(F, mats, swap, below): the work space of :func:`_top_eigen` for matrices up to size x size and
    k vectors (``mats[0]`` is left for the matrix itself), allocated once for all parts."""
    m = max(size, k + 1, 2)
    return np.zeros((10, m)), np.zeros((3, m * m)), np.zeros(m, dtype=np.bool_), np.zeros(m, dtype=np.int64)


_SHIFT_TOL = 1e-10
"""The relative accuracy of the eigenvalues :func:`_top_eigen` bisects for: enough for the gap rule
(which compares them at 1e-6 of the largest; within about 1e-11 of that threshold its decision may
differ from one on exact eigenvalues, as any solver's may) and for inverse iteration, which converges by
a factor of about _SHIFT_TOL / gap per step from such a shift: three steps leave about 1e-13 at the
smallest gap the rule admits, far below the eps / gap of the subspace itself."""


_ZERO_TOL = 1e-9
"""An eigenvalue at most this times |A| (its largest Gershgorin bound, or largest |eigenvalue|) counts as
zero in the gap rule: both solvers know the eigenvalues only to about _SHIFT_TOL |A| (bisection) or
s eps |A| (LAPACK), so a largest eigenvalue of 1e-15 |A| is zero up to rounding, and which side of 0
it lands on differs between machines (seen on AVX-512 against AVX2 builds of the same code)."""


@njit(cache=True)
def _gap_rule(lam, k, s, gap, scale):
    """The rule of :func:`_leading_pairs` on the computed eigenvalues ``lam`` (descending) of an s x s
    matrix of norm ``scale``: the k-th exceeds the next (zero when k = s) and zero by ``gap`` times the
    largest, the largest itself above ``_ZERO_TOL * scale`` (else the spectrum is zero up to rounding)."""
    top = lam[0] if lam[0] > _ZERO_TOL * scale else 0.0
    below_k = max(lam[k], 0.0) if k < s else 0.0
    return top > 0 and lam[k - 1] - below_k > gap * top


_FULL_BELOW = 9
"""Below this size :func:`_top_eigen` takes LAPACK's full eigendecomposition (``numpy.linalg.eigh``):
there it costs no more than the subset solver (measured 2026-11-30 on Mammogram's and Liver's 4 x 4
to 6 x 6 Gram matrices), above it the subset solver is faster (at 13 x 13 by about a quarter, at
32 x 32 by half; benchmarks/RESULTS.md, 2026-11-30, second sitting)."""


@njit(cache=True)
def _top_eigen(A, k, gap, lam, vecs, F, mats, swap, below):
    """:func:`_leading_pairs`'s answer (same arguments and meaning), by LAPACK's full eigendecomposition
    for matrices smaller than :data:`_FULL_BELOW` and by :func:`_leading_pairs` for the others."""
    s = A.shape[0]
    if s >= _FULL_BELOW:
        return _leading_pairs(A, k, gap, lam, vecs, F, mats, swap, below)
    w, U = np.linalg.eigh(A)                                         # ascending
    for c in range(min(k + 1, s)):
        lam[c] = w[s - 1 - c]
    if not _gap_rule(lam, k, s, gap, max(abs(w[0]), abs(w[s - 1]))):
        return False
    for c in range(k):
        for i in range(s):
            vecs[c, i] = U[i, s - 1 - c]
    return True


@njit(cache=True)
def _leading_pairs(A, k, gap, lam, vecs, F, mats, swap, below):
    """Whether the k-th largest eigenvalue of the symmetric s x s matrix A (k <= s) exceeds the next one
    (zero when k = s) and zero by ``gap`` times the largest, and if so unit eigenvectors for the k
    largest in the rows of ``vecs`` (``lam``: the min(k + 1, s) largest eigenvalues, descending); A is
    overwritten. Householder tridiagonalisation A = Q T Q', T scaled to |T| = 1, bisection on the
    Sturm count for the eigenvalues (to :data:`_SHIFT_TOL`), inverse iteration for the vectors (three
    steps from a fixed start, each orthogonalised against the earlier vectors of its cluster,
    eigenvalues closer than 1e-3 |T|, as LAPACK's dstein does), then Q. The method of LAPACK's
    dsyevx for a subset of the spectrum (Golub & Van Loan, Matrix Computations, 4th ed., sections
    8.3-8.4, 8.4.1 and 8.2.2); written out because these matrices are small (s <= min(n, d)) and many,
    so LAPACK's per-call cost exceeds their arithmetic, and only k + 1 of the s eigenvalues and k of
    the vectors are needed: at s = 32, half the time of ``numpy.linalg.eigh`` in the same compiled
    loop (benchmarks/RESULTS.md, 2026-11-30; below 9 x 9 no faster, see :func:`_top_eigen`). The leading k-dimensional subspace is as accurate as a
    full eigendecomposition's (about eps |A| / gap); a vector within a cluster of close eigenvalues is
    determined only up to a rotation within the cluster, as from any solver."""
    s = A.shape[0]
    d, e, tau, e2 = F[0, :s], F[1, :s], F[2, :s], F[3, :s]
    H = mats[1, :max(s - 2, 1) * s].reshape((max(s - 2, 1), s))
    Y = mats[2, :k * s].reshape((k, s))
    _tridiagonalize(A, d, e, tau, H, F[4, :s], F[5, :s])
    bound = 0.0                                                      # |T| <= the largest Gershgorin bound
    for i in range(s):
        r = (abs(e[i - 1]) if i > 0 else 0.0) + (abs(e[i]) if i < s - 1 else 0.0)
        if not math.isfinite(d[i] + r):                              # NaN or inf in A: refused
            return False
        bound = max(bound, abs(d[i]) + r)
    if not bound > 0:
        return False
    for i in range(s):                                               # T / |T|: no overflow in the solves
        d[i] /= bound
    big = 0.0
    for i in range(s - 1):
        e[i] /= bound
        e2[i] = e[i] * e[i]
        big = max(big, e2[i])
    pivmin = 2.2250738585072014e-308 / 2.220446049250313e-16 * max(1.0, big)
    _bisect_top(d, e2, min(k + 1, s), -1.0 - 1e-14 - pivmin, 1.0 + 1e-14 + pivmin, pivmin, _SHIFT_TOL, lam,
                F[6], F[7], F[8], F[9], below)
    for c in range(min(k + 1, s)):
        lam[c] *= bound
    if not _gap_rule(lam, k, s, gap, bound):
        return False
    tiny = 2.220446049250313e-16
    u0, u1, u2, mult, y = F[4, :s], F[5, :s], F[6, :s], F[7, :s], F[8, :s]
    first = 0                                                        # the first vector of the cluster
    for c in range(k):
        if c > 0 and lam[c - 1] - lam[c] > 1e-3 * bound:
            first = c
        seed = 12345 + 7919 * c
        for i in range(s):                                           # a fixed pseudo-random start
            seed = (seed * 1103515245 + 12345) % 2147483648
            y[i] = seed / 2147483648.0 - 0.5
        for _ in range(3):
            _tridiagonal_solve(d, e, lam[c] / bound, y, tiny, u0, u1, u2, mult, swap)
            for o in range(first, c):
                dot = 0.0
                for i in range(s):
                    dot += Y[o, i] * y[i]
                for i in range(s):
                    y[i] -= dot * Y[o, i]
            nrm = _norm(y)
            for i in range(s):
                y[i] /= nrm
        for i in range(s):
            Y[c, i] = y[i]
    for c in range(k):                                               # x = H_0 H_1 ... H_{s-3} y
        for j in range(s - 3, -1, -1):
            t = tau[j]
            if t == 0.0:
                continue
            dot = 0.0
            for i in range(j + 1, s):
                dot += H[j, i] * Y[c, i]
            dot *= t
            for i in range(j + 1, s):
                Y[c, i] -= dot * H[j, i]
        for i in range(s):
            vecs[c, i] = Y[c, i]
    return True


@njit(cache=True)
def pca_part_designs(X, Xterms, weights, k, standardize, intercept, gap):
    """(designs (G, n, k + intercept), ok (G,), terms (G, n, k + intercept)) for the parts ``weights`` (G, n)
    of X (Gx, n, d), Gx = 1 (the same features for every part) or G (part g's own features X[g]). ``Xterms``
    (X's shape) is the magnitude of the terms behind X's entries (|X| for features given as data); a score's
    terms are sum_j (t_ij + |mu_j|) |v_cj| / s_j, the scale of its rounding (a row at the centre has the score 0
    only up to it), the intercept's 1."""
    G, n = weights.shape
    d = X.shape[2]
    q = k + (1 if intercept else 0)
    out = np.zeros((G, n, q))
    terms = np.zeros((G, n, q))
    ok = np.zeros(G, dtype=np.bool_)
    mean = np.empty(d)
    var = np.empty(d)
    scale = np.empty(d)
    rows = np.empty(n, dtype=np.int64)
    root = np.empty(n)
    R = np.empty((n, d))
    V = np.empty((k, d))
    absV = np.empty((k, d))
    absmean = np.empty(d)
    lam = np.empty(k + 1)
    U = np.empty((k, min(n, d)))
    F, mats, swap, below = _eigen_workspace(min(n, d), k)                # s <= min(n, d)
    P = np.empty(n * d)
    for g in range(G):
        x = X[g] if X.shape[0] > 1 else X[0]
        xt = Xterms[g] if Xterms.shape[0] > 1 else Xterms[0]
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
            rows_of = P[:d * r].reshape((d, r))                      # R'R, from the rows of R'
            for t in range(r):
                for j in range(d):
                    rows_of[j, t] = R[t, j]
        else:
            rows_of = R[:r]                                          # RR'
        A = mats[0, :size * size].reshape((size, size))
        _gram_rows(rows_of, A)
        if not _top_eigen(A, k, gap, lam, U, F, mats, swap, below):
            continue
        for c in range(k):
            if tall:
                for j in range(d):
                    V[c, j] = U[c, j]
            else:
                norm = 0.0
                for j in range(d):
                    s = 0.0
                    for t in range(r):
                        s += R[t, j] * U[c, t]
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
        for j in range(d):
            absmean[j] = abs(mean[j])
            for c in range(k):
                absV[c, j] = abs(V[c, j])
        for i in range(n):
            if intercept:
                out[g, i, 0] = 1.0
                terms[g, i, 0] = 1.0
            for c in range(k):
                s = 0.0
                t = 0.0
                for j in range(d):
                    s += (x[i, j] - mean[j]) * V[c, j]
                    t += (xt[i, j] + absmean[j]) * absV[c, j]
                out[g, i, q - k + c] = s
                terms[g, i, q - k + c] = t
        ok[g] = True
    return out, ok, terms
