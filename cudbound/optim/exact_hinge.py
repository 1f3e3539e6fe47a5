"""The exact least-norm minimiser of a weighted hinge loss plus a ridge penalty, certified in
rational arithmetic (the ``hinge_ridge`` fit, what ``SVC(kernel="linear")`` maps onto).

The problem is

    F(x) = sum_i c_i max(0, 1 - a_i'x) + |M x|^2,        c_i > 0,

with M the penalty's square root (its null space the unpenalised intercept direction n, at most
one dimension). All minimisers share M x (F is strictly convex off span(n)), so they form a
segment x* + n T; the fit's convention is the one of least norm |R x| (R the design: least
|Phi beta|, the root mean square of the training scores).

Floating point decides neither "on the margin" nor "multiplier at its bound", which is where
designs with discrete features, duplicate rows or many points on the margin put the minimiser.
So the answer is computed and checked in exact rational arithmetic on the floating-point data
(:class:`fractions.Fraction`; every float is a rational):

1. *snap*: the sides (below / on / above the margin) read off an approximate minimiser fix a
   face; its minimiser solves the KKT system [2P, -A_S'; A_S, 0] (P = M'M, S an independent
   subset of the rows on the margin), with n'x = n'x0 added when the face leaves n free;
2. *slide*: the exact minimum of the piecewise-linear h(t) = F(x + n t) over t (sorted
   breakpoints, slopes summed), and in its set of minimisers T the t of least |R(x + n t)|;
3. *certify*: at that point, with the sides recomputed exactly, multipliers mu_i in [0, c_i]
   of the points on the margin solve 2 P x - sum_below c_i a_i = sum_on mu_i a_i exactly (a
   vertex found by HiGHS, re-solved exactly; this is the KKT condition, sufficient for a convex
   F), and least norm holds: n'R'R x = 0, or the one-sided slope of h towards smaller
   |R(x + n t)| is positive.

The data are taken as exact where they are: the fit calls this on the user's design (a
discrete feature's ties are exact there), with the penalty lam |beta_pen|^2 as given and the
bootstrap counts divided by n exactly (``divisor``); in orthonormal coordinates rounding would
make the ties inexact and the exact minimiser of that rounded problem a different face.

The certified rational point is returned rounded to floats (so to within half an ulp per
coordinate). Anything that does not certify returns None and the caller keeps its own rule.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from .qp import margin_faces

__all__ = ["exact_hinge_ridge_minimiser"]

ACTIVE_TOLS = (1e-6, 1e-8, 1e-4, 1e-10, 1e-3)


def _fr(v) -> Fraction:
    return Fraction(float(v))


def _dot(u, v) -> Fraction:
    return sum((a * b for a, b in zip(u, v)), Fraction(0))


def _solve(K, rhs):
    """The unique solution of the square rational system K z = rhs, or None (singular)."""
    m = len(K)
    aug = [list(row) + [r] for row, r in zip(K, rhs)]
    for col in range(m):
        piv = next((r for r in range(col, m) if aug[r][col] != 0), None)
        if piv is None:
            return None
        aug[col], aug[piv] = aug[piv], aug[col]
        pr = aug[col]
        inv = 1 / pr[col]
        for r in range(m):
            if r != col and aug[r][col] != 0:
                f = aug[r][col] * inv
                row = aug[r]
                for j in range(col, m + 1):
                    if pr[j]:
                        row[j] -= f * pr[j]
    return [aug[i][m] / aug[i][i] for i in range(m)]


def _independent(rows, p):
    """Indices of a maximal linearly independent subset of ``rows`` (greedy, exact)."""
    basis = []      # reduced rows with their pivot column
    keep = []
    for idx, row in enumerate(rows):
        v = list(row)
        for piv, b in basis:
            if v[piv]:
                f = v[piv] / b[piv]
                v = [vi - f * bi for vi, bi in zip(v, b)]
        piv = next((j for j in range(p) if v[j]), None)
        if piv is not None:
            basis.append((piv, v))
            keep.append(idx)
            if len(keep) == p:
                break
    return keep


def _null_space(M, p):
    """An exact basis of {x : M x = 0} (list of rational vectors)."""
    rows = [list(r) for r in M]
    pivots = []
    r = 0
    for col in range(p):
        piv = next((i for i in range(r, len(rows)) if rows[i][col] != 0), None)
        if piv is None:
            continue
        rows[r], rows[piv] = rows[piv], rows[r]
        inv = 1 / rows[r][col]
        rows[r] = [v * inv for v in rows[r]]
        for i in range(len(rows)):
            if i != r and rows[i][col] != 0:
                f = rows[i][col]
                rows[i] = [a - f * b for a, b in zip(rows[i], rows[r])]
        pivots.append(col)
        r += 1
    free = [j for j in range(p) if j not in pivots]
    basis = []
    for fcol in free:
        v = [Fraction(0)] * p
        v[fcol] = Fraction(1)
        for i, pc in enumerate(pivots):
            v[pc] = -rows[i][fcol]
        basis.append(v)
    return basis


def _symmetric_psd(Q) -> bool:
    """Q == Q' and positive semidefinite, decided exactly (symmetric Gaussian elimination: every
    pivot >= 0, and a zero pivot only with a zero row below it). A float matrix that is PSD to
    rounding can be exactly indefinite; the certificate's gradient 2Px needs the exact property."""
    p = len(Q)
    if any(Q[i][j] != Q[j][i] for i in range(p) for j in range(i)):
        return False
    S = [list(row) for row in Q]
    for k in range(p):
        piv = S[k][k]
        if piv < 0:
            return False
        if piv == 0:
            if any(S[k][j] != 0 for j in range(k + 1, p)):
                return False
            continue
        for i in range(k + 1, p):
            if S[i][k]:
                f = S[i][k] / piv
                for j in range(k + 1, p):
                    S[i][j] -= f * S[k][j]
    return True


class _Problem:
    """The data of F in rationals; identical rows merged into one term whose weight is the exact
    sum of theirs (the same function)."""

    def __init__(self, A, c, M=None, Q=None, norm_root=None, divisor=1):
        self.valid = True
        A = np.asarray(A, dtype=float)
        c = np.asarray(c, dtype=float)
        on = c > 0
        Au, inverse = np.unique(A[on], axis=0, return_inverse=True)
        weights = [Fraction(0)] * Au.shape[0]
        for k, w in zip(inverse.ravel(), c[on]):
            weights[int(k)] += _fr(w)
        if divisor != 1:
            weights = [w / _fr(divisor) for w in weights]
        self.Af = Au
        self.m, self.p = Au.shape
        self.A = [[_fr(v) for v in row] for row in Au]
        self.c = weights
        p = self.p
        if M is not None:   # the penalty |M x|^2: P = M'M and its null space exactly from M
            Mr = [[_fr(v) for v in row] for row in np.asarray(M, dtype=float).reshape(-1, p)]
            self.P = [[sum((row[i] * row[j] for row in Mr), Fraction(0)) for j in range(p)] for i in range(p)]
        else:               # the penalty x'Qx: only an exactly symmetric positive semidefinite Q
            Mr = [[_fr(v) for v in row] for row in np.asarray(Q, dtype=float).reshape(p, p)]
            self.P = Mr
            self.valid = _symmetric_psd(Mr)
        null = _null_space(Mr, p)
        self.null_dim = len(null)
        self.n = null[0] if len(null) == 1 else None
        self.s = [_dot(a, self.n) for a in self.A] if self.n is not None else None
        if self.n is not None:      # the norm |R x|^2 = x'Wx, W = R'R: W n and n'Wn, exactly
            if norm_root is None:
                self.Wn = list(self.n)
            else:
                R = [[_fr(v) for v in row] for row in np.asarray(norm_root, dtype=float).reshape(-1, p)]
                Rn = [_dot(row, self.n) for row in R]
                self.Wn = [sum((R[k][j] * Rn[k] for k in range(len(R)) if Rn[k]), Fraction(0)) for j in range(p)]
            self.nWn = _dot(self.n, self.Wn)
            if self.nWn == 0:       # R does not see n: no least norm to speak of
                self.valid = False

    def margins(self, x):
        return [_dot(a, x) for a in self.A]

    # -- 1. snap: the minimiser of the face fixed by a guess of the sides
    def snap(self, below, on, x0):
        p = self.p
        S = [on[i] for i in _independent([self.A[i] for i in on], p)]
        k = len(S)
        b = [sum((self.c[i] * self.A[i][j] for i in below), Fraction(0)) for j in range(p)]
        free_n = self.n is not None and all(self.s[i] == 0 for i in S)
        size = p + k + (1 if free_n else 0)
        K = [[Fraction(0)] * size for _ in range(size)]
        rhs = [Fraction(0)] * size
        for i in range(p):
            for j in range(p):
                K[i][j] = 2 * self.P[i][j]
            rhs[i] = b[i]
        for r, i in enumerate(S):
            for j in range(p):
                K[j][p + r] = -self.A[i][j]
                K[p + r][j] = self.A[i][j]
            rhs[p + r] = Fraction(1)
        if free_n:      # the face leaves n free: stay where the approximate minimiser is along it
            for j in range(p):
                K[j][size - 1] = self.n[j]
                K[size - 1][j] = self.n[j]
            rhs[size - 1] = _dot(self.n, [_fr(v) for v in x0])
        z = _solve(K, rhs)
        return None if z is None else z[:p]

    # -- 2. slide: the exact minimum of h(t) = F(x + n t), and its point of least norm
    def slide(self, x):
        if self.n is None:
            return x
        n, s, c = self.n, self.s, self.c
        u = [1 - mi for mi in self.margins(x)]          # term i is c_i max(0, u_i - s_i t)
        breaks = {}
        slope = Fraction(0)                             # the slope as t -> -infinity
        for i in range(self.m):
            if s[i] > 0:
                slope -= c[i] * s[i]
            if s[i] != 0:
                t = u[i] / s[i]
                breaks[t] = breaks.get(t, Fraction(0)) + c[i] * abs(s[i])
        # slopes rise at each breakpoint (h is convex); T = [lo, hi] is where the slope crosses 0
        ts = sorted(breaks)
        lo = hi = None                                  # None: unbounded on that side
        if slope == 0:
            hi = ts[0] if ts else None
        else:
            for k, t in enumerate(ts):
                slope += breaks[t]
                if slope >= 0:
                    lo = t
                    hi = t if slope > 0 else (ts[k + 1] if k + 1 < len(ts) else None)
                    break
            else:
                return None
        t = -_dot(self.Wn, x) / self.nWn                # the least-norm point on the whole line
        if lo is not None and t < lo:
            t = lo
        if hi is not None and t > hi:
            t = hi
        return [xi + t * ni for xi, ni in zip(x, n)]

    # -- 3. certify: KKT (exact) and least norm (exact)
    def certify(self, x):
        p, A, c = self.p, self.A, self.c
        marg = self.margins(x)
        below = [i for i in range(self.m) if marg[i] < 1]
        on = [i for i in range(self.m) if marg[i] == 1]
        r = [2 * _dot(self.P[j], x) - sum((c[i] * A[i][j] for i in below), Fraction(0)) for j in range(p)]
        if not self._multipliers(on, r):
            return False
        if self.n is None:
            return True
        nx = _dot(self.Wn, x)
        if nx == 0:
            return True
        # moving along -sign(nx) n shortens x: h must rise that way at once
        sign = -1 if nx > 0 else 1
        slope = Fraction(0)
        for i in range(self.m):
            d = -self.s[i] * sign                       # d/dt of u_i along the move
            if marg[i] < 1 or (marg[i] == 1 and d > 0):
                slope += c[i] * d
        return slope > 0

    def _multipliers(self, on, r):
        """Whether mu in [0, c_on] with sum_on mu_i a_i = r exists.

        HiGHS finds a vertex in floating point; its free multipliers (and, when rounding made
        the float problem more degenerate than the exact one, some of those it put at a bound)
        are then solved for exactly, the others held at their bounds, and the bounds checked
        exactly.
        """
        from itertools import combinations

        from scipy.optimize import linprog

        p, A, c = self.p, self.A, self.c
        if not on:
            return all(v == 0 for v in r)
        Aon = np.array([[float(v) for v in A[i]] for i in on])
        cu = np.array([float(c[i]) for i in on])
        res = linprog(np.zeros(len(on)), A_eq=Aon.T, b_eq=np.array([float(v) for v in r]),
                      bounds=list(zip(np.zeros(len(on)), cu)), method="highs-ds")
        if res.status != 0:
            return False
        mu = res.x
        rank = len(_independent([A[i] for i in on], p))
        tried = 0
        for tol in (1e-9, 1e-6, 1e-12):
            low = mu <= tol * cu
            up = (mu >= cu * (1 - tol)) & ~low
            free = [j for j in range(len(on)) if not (low[j] or up[j])]
            if _independent([A[on[j]] for j in free], p) != list(range(len(free))):
                continue
            # complete the free set to a basis with multipliers HiGHS put at a bound, nearest first
            bound = sorted((j for j in range(len(on)) if low[j] or up[j]),
                           key=lambda j: min(mu[j], cu[j] - mu[j]) / cu[j])
            for extra in combinations(bound, rank - len(free)):
                tried += 1
                if tried > 200:
                    return False
                basis = free + list(extra)
                if self._vertex(on, r, basis, up):
                    return True
        return False

    def _vertex(self, on, r, basis, up):
        """mu on ``basis`` solved exactly, the others at 0 or (``up``) at c: within the bounds?"""
        p, A, c = self.p, self.A, self.c
        cols = [A[on[j]] for j in basis]
        if _independent(cols, p) != list(range(len(basis))):
            return False
        fixed = [j for j in range(len(on)) if j not in basis and up[j]]
        rest = [r[k] - sum((c[on[j]] * A[on[j]][k] for j in fixed), Fraction(0)) for k in range(p)]
        # sum_basis mu_j a_j = rest: the normal equations of independent columns, then every equation checked
        G = [[_dot(cols[a], cols[b]) for b in range(len(basis))] for a in range(len(basis))]
        h = [_dot(cols[a], rest) for a in range(len(basis))]
        sol = _solve(G, h) if basis else []
        if sol is None:
            return False
        if [sum((sol[a] * cols[a][k] for a in range(len(basis))), Fraction(0)) for k in range(p)] != rest:
            return False
        return all(0 <= v <= c[on[j]] for v, j in zip(sol, basis))


def exact_hinge_ridge_minimiser(A, c, x0, *, M=None, Q=None, norm_root=None, divisor=1,
                                active_tols=ACTIVE_TOLS):
    """The least-norm minimiser of sum_i c_i max(0, 1 - a_i'x) + |M x|^2 (or + x'Qx), certified
    exactly, or None.

    ``A`` (m, p): the rows a_i = y_i phi_i; ``c / divisor`` (m,): the non-negative weights (the
    division done exactly: ``c`` the bootstrap counts, ``divisor`` = n); the penalty as its
    root ``M`` (k, p) or as the matrix ``Q`` (p, p), either with a null space of dimension at most
    one; ``norm_root`` R (k, p, full column rank; default the identity): the answer has the least
    |R x| among the minimisers (the fit passes the design: least |Phi beta|); ``x0``: an approximate minimiser (an interior-point answer) from which the sides of the
    points are read. See the module docstring for the method.
    """
    x0 = np.asarray(x0, dtype=float)
    pen = M if M is not None else Q
    if pen is None:
        raise ValueError("give the penalty as M or Q.")
    if np.any(np.asarray(c, dtype=float) < 0) or not divisor > 0:
        raise ValueError("the weights c must be non-negative and the divisor positive.")
    if norm_root is not None and not np.all(np.isfinite(norm_root)):
        return None
    if not all(np.all(np.isfinite(v)) for v in (x0, A, c, pen)):
        return None
    prob = _Problem(A, c, M=M, Q=Q, norm_root=norm_root, divisor=divisor)
    if not prob.valid or prob.null_dim > 1 or prob.m == 0:
        return None
    for on_mask, below_mask in margin_faces(prob.Af, x0, active_tols):
        below = [int(i) for i in np.flatnonzero(below_mask)]
        on = [int(i) for i in np.flatnonzero(on_mask)]
        x = prob.snap(below, on, x0)
        if x is None:
            continue
        x = prob.slide(x)
        if x is None:
            continue
        if prob.certify(x):
            return np.array([float(v) for v in x])
    return None
