"""The soft-margin SVM dual, solved to high accuracy: compiled SMO, active-set steps, a KKT polish.

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

:func:`active_set` is a primal active-set method (one change of a point's status per step):
from SMO's rough solution, or from the full solution in a leave-one-out refit, it reaches
the exact free set in a few steps where SMO needs thousands.

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

__all__ = ["smo", "active_set", "gradient", "kkt_check", "bias_from_gradient", "polish", "kkt_violation", "solve_conic"]

_TAU = 1e-12  # curvature used when two points coincide in feature space


@njit(cache=True)
def gradient(K, y, alpha, active):  # pragma: no cover - compiled
    """G_i = y_i sum_j alpha_j y_j K_ij - 1 on the active points (0 elsewhere), summing over the
    support vectors only: O(n x #SV)."""
    n = y.shape[0]
    sv = np.empty(n, dtype=np.int64)
    m = 0
    for j in range(n):
        if active[j] and alpha[j] != 0.0:
            sv[m] = j
            m += 1
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



@njit(cache=True)
def _lu_solve(M, r):  # pragma: no cover - compiled
    """Solve M z = r by Gaussian elimination with partial pivoting (M is not changed); ok is
    False when a pivot is below 1e-13 of the largest entry (numerically singular)."""
    m = M.shape[0]
    A = M.copy()
    z = r.copy()
    big = 0.0
    for a in range(m):
        for c in range(m):
            big = max(big, abs(A[a, c]))
    if big == 0.0:
        return z, False
    for c in range(m):
        piv = c
        for a in range(c + 1, m):
            if abs(A[a, c]) > abs(A[piv, c]):
                piv = a
        if abs(A[piv, c]) <= 1e-13 * big:
            return z, False
        if piv != c:
            for q in range(m):
                A[c, q], A[piv, q] = A[piv, q], A[c, q]
            z[c], z[piv] = z[piv], z[c]
        for a in range(c + 1, m):
            f = A[a, c] / A[c, c]
            if f != 0.0:
                for q in range(c, m):
                    A[a, q] -= f * A[c, q]
                z[a] -= f * z[c]
    for c in range(m - 1, -1, -1):
        acc = z[c]
        for q in range(c + 1, m):
            acc -= A[c, q] * z[q]
        z[c] = acc / A[c, c]
    return z, True


@njit(cache=True)
def _eigen_step(M, r, k):  # pragma: no cover - compiled
    """The step of :func:`active_set` from an eigendecomposition of the KKT matrix M: the
    least-norm solution when M z = r is consistent, else the part of the right-hand side in
    M's null space, along which the objective falls linearly (``linear``)."""
    w, V = np.linalg.eigh(M)
    wmax = 0.0
    for j in range(k + 1):
        wmax = max(wmax, abs(w[j]))
    thr = 1e-11 * wmax
    z = np.zeros(k + 1)
    d = np.zeros(k + 1)
    null_part = 0.0
    for j in range(k + 1):
        vr = 0.0
        for a in range(k + 1):
            vr += V[a, j] * r[a]
        if abs(w[j]) > thr:
            for a in range(k + 1):
                z[a] += vr / w[j] * V[a, j]
        else:
            null_part += vr * vr
            for a in range(k + 1):
                d[a] += vr * V[a, j]
    gnorm = 0.0
    for a in range(k):
        gnorm += r[a] * r[a]
    linear = null_part > 1e-20 * (1.0 + gnorm)
    return (d[:k] if linear else z[:k]), z, linear


@njit(cache=True)
def active_set(K, y, C, alpha, active, b0, max_iter, tol, G0):  # pragma: no cover - compiled
    """A primal active-set method for the dual, from the feasible ``alpha`` (updated in place).

    The points are split into free (F), at 0 and at C. Each step minimises the dual over the
    free multipliers with the others fixed and y' alpha = 0: the KKT system
    [Q_FF y_F; y_F' 0] [p; nu] = [-G_F; 0] (G the gradient) gives the step p and the bias nu.
    A step that would leave the box stops at the first bound, and that point joins the bound
    (one change per step). When Q_FF is singular on {y_F' p = 0} and -G_F has a part in its
    null space, the objective falls linearly along that part, which is followed to the first
    bound. At a minimiser over F, the bound point whose KKT sign condition is most violated
    (y_i f(x_i) - 1 = G_i + y_i nu must be >= 0 at 0 and <= 0 at C) is freed. From a nearby
    start (leave-one-out warm starts) the method needs about one step per change of status,
    where SMO needs thousands of pair steps. ``G0`` is the gradient at ``alpha`` when the caller
    has it (an empty array otherwise). Returns (bias, steps, converged).
    """
    n = y.shape[0]
    state = np.zeros(n, dtype=np.int64)  # 0 free, 1 at 0, 2 at C, -1 left out
    for i in range(n):
        if not active[i]:
            state[i] = -1
        elif alpha[i] <= 0.0:
            alpha[i] = 0.0
            state[i] = 1
        elif alpha[i] >= C:
            alpha[i] = C
            state[i] = 2
    G = G0.copy() if G0.shape[0] == n else gradient(K, y, alpha, active)
    nu = b0
    F = np.empty(n, dtype=np.int64)
    for it in range(max_iter):
        k = 0
        for i in range(n):
            if state[i] == 0:
                F[k] = i
                k += 1
        at_minimum = True
        if k > 0:
            M = np.zeros((k + 1, k + 1))
            r = np.zeros(k + 1)
            for a in range(k):
                ia = F[a]
                for c in range(k):
                    M[a, c] = y[ia] * y[F[c]] * K[ia, F[c]]
                M[a, k] = y[ia]
                M[k, a] = y[ia]
                r[a] = -G[ia]
            # the usual case: M nonsingular, one LU solve (a sixth of an eigendecomposition);
            # small systems in loops, which beats LAPACK's call overhead below about 64 unknowns
            if k < 64:
                z, solved = _lu_solve(M, r)
            else:
                solved = False
                z = np.zeros(k + 1)
                try:
                    z = np.linalg.solve(M, r)
                    solved = True
                except Exception:  # numba raises on an exactly singular matrix
                    solved = False
            if solved:
                rmax = 0.0
                zmax = 0.0
                ok = True
                for a in range(k + 1):
                    rmax = max(rmax, abs(r[a]))
                    if not np.isfinite(z[a]):
                        ok = False
                    zmax = max(zmax, abs(z[a]))
                resmax = 0.0
                if ok:
                    for a in range(k + 1):
                        acc = -r[a]
                        for c in range(k + 1):
                            acc += M[a, c] * z[c]
                        resmax = max(resmax, abs(acc))
                solved = ok and resmax <= 1e-9 * (1.0 + rmax) and zmax < 1e12
            if solved:
                linear = False
                p = z[:k]
            else:
                p, z, linear = _eigen_step(M, r, k)
            step_size = np.inf if linear else 1.0
            block = -1
            pmax = 0.0
            for a in range(k):
                ia = F[a]
                pmax = max(pmax, abs(p[a]))
                if p[a] > 0.0:
                    t = (C - alpha[ia]) / p[a]
                elif p[a] < 0.0:
                    t = -alpha[ia] / p[a]
                else:
                    continue
                if t < step_size:
                    step_size = t
                    block = a
            if not np.isfinite(step_size):
                return nu, it, False
            if pmax > 0.0 and step_size > 0.0:
                for a in range(k):
                    alpha[F[a]] += step_size * p[a]
                for i in range(n):
                    if active[i]:
                        s = 0.0
                        for a in range(k):
                            s += K[i, F[a]] * y[F[a]] * p[a]
                        G[i] += y[i] * s * step_size
            if block >= 0:
                ib = F[block]
                if p[block] > 0.0:
                    alpha[ib] = C
                    state[ib] = 2
                else:
                    alpha[ib] = 0.0
                    state[ib] = 1
                at_minimum = False
            elif linear:
                return nu, it, False
            else:
                nu = z[k]
        if not at_minimum:
            continue
        if k == 0:  # nu is free: the optimal biases form an interval; take the one nearest b0
            lo = -np.inf
            hi = np.inf
            for i in range(n):
                if state[i] == 1:  # G_i + y_i nu >= 0
                    if y[i] > 0:
                        lo = max(lo, -G[i])
                    else:
                        hi = min(hi, G[i])
                elif state[i] == 2:  # G_i + y_i nu <= 0
                    if y[i] > 0:
                        hi = min(hi, -G[i])
                    else:
                        lo = max(lo, G[i])
            if lo <= hi:
                nu = min(max(b0, lo), hi)
            else:
                nu = 0.5 * (lo + hi)
        worst = tol
        release = -1
        for i in range(n):
            if state[i] == 1:
                v = -(G[i] + y[i] * nu)
            elif state[i] == 2:
                v = G[i] + y[i] * nu
            else:
                continue
            if v > worst:
                worst = v
                release = i
        if release < 0:
            return nu, it, True
        state[release] = 0
    return nu, max_iter, False


@njit(cache=True)
def kkt_check(K, y, C, alpha, active, b):  # pragma: no cover - compiled
    """The KKT violation of (alpha, b) computed afresh (as :func:`kkt_violation`), and the size
    of the terms summed into a margin, max_i sum_j alpha_j |K_ij| (at least 1); O(n x #SV)."""
    n = y.shape[0]
    sv = np.empty(n, dtype=np.int64)
    nsv = 0
    for j in range(n):
        if active[j] and alpha[j] != 0.0:
            sv[nsv] = j
            nsv += 1
    worst = 0.0
    scale = 1.0
    ya = 0.0
    for i in range(n):
        if not active[i]:
            continue
        ya += y[i] * alpha[i]
        s = 0.0
        mag = 0.0
        for q in range(nsv):
            j = sv[q]
            s += y[j] * alpha[j] * K[i, j]
            mag += alpha[j] * abs(K[i, j])
        scale = max(scale, mag)
        m = y[i] * (s + b)
        if alpha[i] <= 0.0:
            v = 1.0 - m
        elif alpha[i] >= C:
            v = m - 1.0
        else:
            v = abs(m - 1.0)
        worst = max(worst, v)
    return max(worst, abs(ya) / max(1.0, C)), scale
