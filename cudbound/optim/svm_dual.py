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

:func:`decrement` takes one point out of an optimal solution by following the solution path
as its multiplier falls to 0 (Cauwenberghs & Poggio 2001): one event per change of status,
each an O(|F|^2) update of the KKT matrix's inverse; it is how leave-one-out refits start.

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
Cauwenberghs, G., Poggio, T. (2001). Incremental and decremental support vector machine
learning. NIPS 13, 409-415.
"""
from __future__ import annotations

import warnings

import numpy as np
from numba import njit

__all__ = ["smo", "active_set", "decrement", "kkt_inverse", "independent_free_set", "kkt_check_near", "gradient", "kkt_check", "bias_from_gradient", "polish", "kkt_violation", "solve_conic"]

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
def _kkt_solve(M, r, k):  # pragma: no cover - compiled
    """Solve the (k+1)-square KKT system M z = r: hand LU below 64 unknowns (LAPACK's call
    overhead dominates there), LAPACK above; ``solved`` is False when M is numerically singular
    (a pivot or the residual check fails, or the solution is huge)."""
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
        for a in range(k + 1):
            rmax = max(rmax, abs(r[a]))
            if not np.isfinite(z[a]):
                return z, False
            zmax = max(zmax, abs(z[a]))
        resmax = 0.0
        for a in range(k + 1):
            acc = -r[a]
            for c in range(k + 1):
                acc += M[a, c] * z[c]
            resmax = max(resmax, abs(acc))
        solved = resmax <= 1e-9 * (1.0 + rmax) and zmax < 1e12
    return z, solved


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
            # the gradient's part only (r[k], a residual of y' alpha = 0, is not a descent
            # direction): -G_F' p = sum_j (V_j' r)^2 > 0 along it
            vg = vr - V[k, j] * r[k]
            null_part += vg * vg
            for a in range(k + 1):
                d[a] += vg * V[a, j]
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
        # a start off y' alpha = 0 (a leave-one-out refit drops alpha_t): the next full step restores it
        eq = 0.0
        amax = 0.0
        for i in range(n):
            if state[i] >= 0:
                eq += y[i] * alpha[i]
                amax = max(amax, alpha[i])
        infeasible = abs(eq) > 1e-12 * max(amax, 1e-300) * n
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
            r[k] = -eq
            z, solved = _kkt_solve(M, r, k)
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
        if k == 0 and infeasible:  # no free multiplier to restore y' alpha = 0 with
            return nu, it, False
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
def _remove_free(Minv, F, k, leave, valid):  # pragma: no cover - compiled
    """Drop F[leave] from the free list (the last one takes its place) and its row and column
    from the inverse of the bordered KKT matrix: move them last, then the Schur complement
    A - b b' / d of [A b; b' d]. Returns whether the inverse is still usable."""
    last = k - 1
    F[leave] = F[last]
    if not valid:
        return False
    p = leave + 1
    q = last + 1
    if p != q:
        for c in range(k + 1):
            Minv[p, c], Minv[q, c] = Minv[q, c], Minv[p, c]
        for c in range(k + 1):
            Minv[c, p], Minv[c, q] = Minv[c, q], Minv[c, p]
    d = Minv[q, q]
    if d == 0.0 or not np.isfinite(d):
        return False
    for a in range(q):
        fa = Minv[a, q] / d
        for c in range(q):
            Minv[a, c] -= fa * Minv[q, c]
    return True


@njit(cache=True)
def _border_vector(Minv, K, y, F, k, j, u):  # pragma: no cover - compiled
    """For point j joining F: m = [y_j; Q_Fj], u = Minv m (written into ``u``), and the Schur
    complement s = Q_jj - m'u, zero when Q is singular on F and j."""
    for a in range(k + 1):
        acc = Minv[a, 0] * y[j]
        for c in range(k):
            acc += Minv[a, c + 1] * y[F[c]] * y[j] * K[F[c], j]
        u[a] = acc
    s = K[j, j] - y[j] * u[0]
    for c in range(k):
        s -= y[F[c]] * y[j] * K[F[c], j] * u[c + 1]
    return s


@njit(cache=True)
def _border(Minv, u, s, k):  # pragma: no cover - compiled
    """The inverse of [M m; m' c] from Minv = M^-1, u = Minv m, s = c - m'u:
    [Minv + u u'/s, -u/s; -u'/s, 1/s] (in place, in the first k + 2 rows and columns)."""
    for a in range(k + 1):
        for c in range(k + 1):
            Minv[a, c] += u[a] * u[c] / s
        Minv[a, k + 1] = -u[a] / s
        Minv[k + 1, a] = -u[a] / s
    Minv[k + 1, k + 1] = 1.0 / s


@njit(cache=True)
def _grown(Minv, k, cap):  # pragma: no cover - compiled
    """A larger work array for the inverse, its first k + 1 rows and columns copied."""
    grown = np.empty((cap + 1, cap + 1))
    grown[:k + 1, :k + 1] = Minv[:k + 1, :k + 1]
    return grown


@njit(cache=True)
def kkt_inverse(K, y, F, k):  # pragma: no cover - compiled
    """The inverse of the bordered KKT matrix [0 y_F'; y_F Q_FF] (bias first, then the k
    points F[:k] in order), and whether LAPACK found it finite and moderate (each solve with
    it is checked by its residual). Used once per leave-one-out study for the full solution's
    free set, and by :func:`decrement` to refresh its updated inverse."""
    M = np.zeros((k + 1, k + 1))
    for a in range(k):
        M[0, a + 1] = y[F[a]]
        M[a + 1, 0] = y[F[a]]
        for c in range(k):
            M[a + 1, c + 1] = y[F[a]] * y[F[c]] * K[F[a], F[c]]
    Minv = np.zeros((k + 1, k + 1))
    try:
        Minv = np.linalg.inv(M)
    except Exception:  # numba raises on an exactly singular matrix
        return Minv, False
    big = 0.0
    for a in range(k + 1):
        for c in range(k + 1):
            big = max(big, abs(M[a, c]))
    for a in range(k + 1):
        for c in range(k + 1):
            if not np.isfinite(Minv[a, c]) or abs(Minv[a, c]) * big > 1e12:
                return Minv, False
    return Minv, True


def independent_free_set(K, y, C, alpha, max_rounds=None):
    """An optimal ``alpha`` moved, without changing f or the bias, until the KKT matrix of its
    free set is nonsingular: while [0 y_F'; y_F Q_FF] has a null vector (0, d) (then
    sum_F d_a y_a phi(x_a) = 0 and y_F' d = 0: duplicated or affinely dependent free points),
    alpha_F moves along d until a multiplier reaches a bound. Each round frees the set of one
    point. Leave-one-out paths (:func:`decrement`) start from the result, so that their
    updated inverse exists from the first step. Returns a new array."""
    alpha = np.array(alpha, dtype=float)
    rounds = alpha.size if max_rounds is None else max_rounds
    for _ in range(rounds):
        F = np.flatnonzero((alpha > 0.0) & (alpha < C))
        if F.size == 0 or kkt_inverse(K, y, F, F.size)[1]:
            return alpha
        M = np.zeros((F.size + 1, F.size + 1))
        M[0, 1:] = M[1:, 0] = y[F]
        M[1:, 1:] = np.outer(y[F], y[F]) * K[np.ix_(F, F)]
        w, V = np.linalg.eigh(M)
        j = int(np.argmin(np.abs(w)))
        if abs(w[j]) > 1e-9 * np.max(np.abs(w)):
            return alpha
        d = V[1:, j]
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(d > 0, (C - alpha[F]) / d, np.where(d < 0, -alpha[F] / d, np.inf))
        a = int(np.argmin(room))
        if not np.isfinite(room[a]):
            return alpha
        alpha[F] = np.clip(alpha[F] + room[a] * d, 0.0, C)
        alpha[F[a]] = C if d[a] > 0 else 0.0
    return alpha


@njit(cache=True)
def decrement(K, y, C, alpha, active, t, b0, max_iter, tol, G, Minv0):  # pragma: no cover - compiled
    """Take point t out of an optimal solution by following the solution path as alpha_t falls
    to 0 (decremental unlearning, Cauwenberghs & Poggio 2001).

    ``alpha``, ``b0`` and ``G`` (= Q alpha - 1 on all points, t's term included) are the
    optimal solution with t; ``active`` marks the points that stay (t excluded). Along the
    path the free multipliers (F) keep y_i f(x_i) = 1 and y' alpha = 0: with alpha_t moving by
    p_t, the KKT system [0 y_F'; y_F Q_FF] [b; p_F] = [-y_t p_t - y' alpha; -G_F - Q_Ft p_t]
    gives the free multipliers' move and the bias at the end of the segment; y_i f(x_i) - 1 is
    linear along it for every point. A segment ends at the first event: a free multiplier
    reaching 0 or C (it joins that bound), a bound point's margin reaching 1 (it becomes free),
    or alpha_t reaching 0 (done). One event is one change of status, so a refit costs about as
    many steps as the leave-one-out solution differs from the full one in status. The inverse
    of the KKT matrix is updated in O(|F|^2) per event (bordering, and its Schur complement
    when a point leaves), checked by the residual of each solve and recomputed when it fails;
    ``Minv0`` is the inverse for the starting free set in index order (:func:`kkt_inverse`,
    shared by all refits of a leave-one-out study), or an empty array.

    Two events need more than a pivot. With F empty, the bias alone moves (every bias of an
    interval is optimal) until a point that can make up for alpha_t in y' alpha = 0 reaches
    the margin. A point that joins F with a zero Schur complement lies in the affine hull of F
    in feature space, so its margin was 1 all along and only round-off made it cross: a
    direction of the multipliers of F and that point leaves f unchanged, and moving along it
    until a free multiplier reaches a bound exchanges the two.

    ``alpha`` and ``G`` are updated in place (alpha_t included) and stay consistent however
    the routine ends. Returns (bias, steps, converged): converged means alpha_t = 0 and every
    KKT sign condition holds to ``tol``; otherwise (an inconsistent singular system, 50
    zero-length steps in a row at a degenerate point, or ``max_iter`` events) the caller goes
    on from the current point with :func:`active_set`.
    """
    n = y.shape[0]
    state = np.zeros(n, dtype=np.int64)  # 0 free, 1 at 0, 2 at C, -1 left out or t
    F = np.empty(n, dtype=np.int64)  # the free points, in the order of the inverse's rows
    k = 0
    t_at = -1
    for i in range(n):
        if i != t and not active[i]:
            state[i] = -1
        elif alpha[i] <= 0.0:
            state[i] = 1
        elif alpha[i] >= C:
            state[i] = 2
        else:
            if i == t:
                t_at = k
            F[k] = i
            k += 1
    cap = min(n, k + 32)
    Minv = np.empty((cap + 1, cap + 1))
    valid = Minv0.shape[0] == k + 1
    if valid:
        Minv[:k + 1, :k + 1] = Minv0
    if t_at >= 0:  # t was free: its row and column leave the inverse
        valid = _remove_free(Minv, F, k, t_at, valid)
        k -= 1
    state[t] = -1
    nu = b0
    dG = np.empty(n)
    r = np.empty(n + 1)
    z = np.empty(n + 1)
    u = np.empty(n + 1)
    it = 0
    stalled = 0
    while alpha[t] > 0.0:
        if it >= max_iter:
            return nu, it, False
        it += 1
        if k == 0:
            # no free multiplier: every bias in an interval is optimal and y' alpha = 0 cannot
            # follow alpha_t. Move the bias (alone) until a point that can make up for alpha_t
            # reaches the margin: one at 0 of t's class, or one at C of the other class; it
            # joins F (the path's empty-margin event).
            theta = np.inf
            event = -1
            for i in range(n):
                if (state[i] == 1 and y[i] == y[t]) or (state[i] == 2 and y[i] != y[t]):
                    g = abs(G[i] + y[i] * nu)
                    if g < theta:
                        theta = g
                        event = i
            if event < 0:
                return nu, it, False
            nu -= y[t] * theta
            state[event] = 0
            F[0] = event
            k = 1
            valid = False
            continue
        pt = -alpha[t]
        eq = y[t] * alpha[t]
        for i in range(n):
            if state[i] >= 0:
                eq += y[i] * alpha[i]
        r[0] = -y[t] * pt - eq
        for a in range(k):
            r[a + 1] = -G[F[a]] - y[F[a]] * y[t] * K[F[a], t] * pt
        rmax = 0.0
        for a in range(k + 1):
            rmax = max(rmax, abs(r[a]))
        solved = False
        for attempt in range(2):
            if not valid:
                if attempt == 0:
                    inv, valid = kkt_inverse(K, y, F, k)
                    if valid:
                        if k + 1 > Minv.shape[0]:
                            Minv = np.empty((min(n, 2 * k + 32) + 1, min(n, 2 * k + 32) + 1))
                        Minv[:k + 1, :k + 1] = inv
                if not valid:
                    break
            for a in range(k + 1):
                acc = 0.0
                for c in range(k + 1):
                    acc += Minv[a, c] * r[c]
                z[a] = acc
            # residual of M z = r, M from K (the inverse drifts over many updates)
            res = -r[0]
            for a in range(k):
                res += y[F[a]] * z[a + 1]
            res = abs(res)
            zmax = 0.0
            for a in range(k + 1):
                zmax = max(zmax, abs(z[a]))
            for a in range(k):
                acc = y[F[a]] * z[0] - r[a + 1]
                for c in range(k):
                    acc += y[F[a]] * y[F[c]] * K[F[a], F[c]] * z[c + 1]
                res = max(res, abs(acc))
            if np.isfinite(res) and res <= 1e-9 * (1.0 + rmax) and zmax < 1e12:
                solved = True
                break
            valid = False
        if not solved:  # Q_FF singular on y_F' p = 0 (free points dependent in feature space):
            # any solution gives a path when the system is consistent; take the least-norm one
            M = np.zeros((k + 1, k + 1))
            rr = np.zeros(k + 1)
            for a in range(k):
                for c in range(k):
                    M[a, c] = y[F[a]] * y[F[c]] * K[F[a], F[c]]
                M[a, k] = y[F[a]]
                M[k, a] = y[F[a]]
                rr[a] = r[a + 1]
            rr[k] = r[0]
            _, zz, _ = _eigen_step(M, rr, k)
            res = 0.0
            for a in range(k + 1):
                acc = -rr[a]
                for c in range(k + 1):
                    acc += M[a, c] * zz[c]
                res = max(res, abs(acc))
            if not res <= 1e-9 * (1.0 + rmax):
                return nu, it, False
            z[0] = zz[k]
            for a in range(k):
                z[a + 1] = zz[a]
        nu_end = z[0]
        # the change of G over the whole segment, for every point that stays and for t
        # K is symmetric: K[i, j] = K[j, i], so whole rows are streamed (contiguous, vectorised)
        ytp = y[t] * pt
        Kt = K[t]
        for i in range(n):
            dG[i] = Kt[i] * ytp
        for a in range(k):
            Ka = K[F[a]]
            ua = y[F[a]] * z[a + 1]
            for i in range(n):
                dG[i] += Ka[i] * ua
        for i in range(n):
            dG[i] *= y[i]
        step = 1.0
        event = -1
        leave = -1
        hit_C = False
        for a in range(k):
            ia = F[a]
            if z[a + 1] > 0.0:
                s_a = (C - alpha[ia]) / z[a + 1]
            elif z[a + 1] < 0.0:
                s_a = -alpha[ia] / z[a + 1]
            else:
                continue
            if s_a < step:
                step = s_a
                event = ia
                leave = a
                hit_C = z[a + 1] > 0.0
        for i in range(n):
            if state[i] == 1 or state[i] == 2:
                g0 = G[i] + y[i] * nu
                g1 = G[i] + dG[i] + y[i] * nu_end
                if state[i] == 2:  # at C: y_i f(x_i) - 1 must stay <= 0
                    g0 = -g0
                    g1 = -g1
                # a point whose margin only touches 1 (within tol, e.g. a duplicate of a free
                # point) is no event: counting it would exchange duplicates without end
                if g1 < -tol and g1 < g0:
                    s_i = max(g0, 0.0) / (g0 - g1)
                    if s_i < step:
                        step = s_i
                        event = i
                        leave = -1
        step = max(step, 0.0)
        # degenerate points (several bound points exactly on the margin, as discrete features
        # make) give zero-length steps, a point entering or leaving F at each; they usually
        # find the way out, as the simplex method does at a degenerate vertex, but can cycle:
        # after 50 in a row the caller takes over
        stalled = stalled + 1 if step <= 1e-14 else 0
        if stalled > 50:
            return nu, it, False
        for a in range(k):
            alpha[F[a]] = min(max(alpha[F[a]] + step * z[a + 1], 0.0), C)
        for i in range(n):
            if state[i] >= 0 or i == t:
                G[i] += step * dG[i]
        nu += step * (nu_end - nu)
        if event < 0:
            alpha[t] = 0.0
            continue
        alpha[t] += step * pt
        if leave >= 0:  # a free multiplier reached its bound: it leaves F
            alpha[event] = C if hit_C else 0.0
            state[event] = 2 if hit_C else 1
            valid = _remove_free(Minv, F, k, leave, valid)
            k -= 1
            continue
        # a bound point reached the margin: it joins F, bordering the inverse
        if not valid:
            state[event] = 0
            F[k] = event
            k += 1
            continue
        sgn = 1.0 if state[event] == 1 else -1.0  # into the box from its bound
        while True:
            s = _border_vector(Minv, K, y, F, k, event, u)
            if abs(s) > 1e-9 * (K[event, event] + abs(K[event, event] - s)):
                if k + 2 > Minv.shape[0]:
                    Minv = _grown(Minv, k, min(n, 2 * k + 32))
                _border(Minv, u, s, k)
                state[event] = 0
                F[k] = event
                k += 1
                break
            # Q is singular on F and the new point j: a direction d of the multipliers of F and
            # j leaves f (and so every margin, the bias and y' alpha) unchanged: d_j = +-1 (into
            # the box), d_F = -d_j u[1:] (from [0 y'; y Q] [-u; 1] = [0; s] = 0). Moving along it
            # changes nothing but the multipliers; the first of F to reach a bound leaves, and
            # the test is repeated (duplicates can leave more than one such direction).
            theta = C - alpha[event] if sgn > 0.0 else alpha[event]
            out = -1
            out_C = False
            for a in range(k):
                da = -sgn * u[a + 1]
                if da > 0.0:
                    lim = (C - alpha[F[a]]) / da
                elif da < 0.0:
                    lim = -alpha[F[a]] / da
                else:
                    continue
                if lim < theta:
                    theta = lim
                    out = a
                    out_C = da > 0.0
            for a in range(k):
                alpha[F[a]] = min(max(alpha[F[a]] - theta * sgn * u[a + 1], 0.0), C)
            if out < 0:  # j crosses its box before any free multiplier reaches a bound
                alpha[event] = C if sgn > 0.0 else 0.0
                state[event] = 2 if sgn > 0.0 else 1
                break
            alpha[event] = min(max(alpha[event] + sgn * theta, 0.0), C)
            gone = F[out]
            alpha[gone] = C if out_C else 0.0
            state[gone] = 2 if out_C else 1
            valid = _remove_free(Minv, F, k, out, valid)
            k -= 1
            if not valid:
                state[event] = 0
                F[k] = event
                k += 1
                break
    # done: every sign condition must hold (they can fail only by round-off at the start)
    for i in range(n):
        if state[i] == 1 and -(G[i] + y[i] * nu) > tol:
            return nu, it, False
        if state[i] == 2 and G[i] + y[i] * nu > tol:
            return nu, it, False
    return nu, it, True


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


@njit(cache=True)
def kkt_check_near(K, y, C, alpha, active, b, alpha_ref, G_ref):  # pragma: no cover - compiled
    """The KKT violation of (alpha, b) as :func:`kkt_violation`, with the gradient obtained
    from ``G_ref`` (that of ``alpha_ref``, t's term included) in one update over the
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
    worst = 0.0
    ya = 0.0
    for i in range(n):
        if not active[i]:
            continue
        ya += y[i] * alpha[i]
        m = G[i] + 1.0 + y[i] * b
        if alpha[i] <= 0.0:
            v = 1.0 - m
        elif alpha[i] >= C:
            v = m - 1.0
        else:
            v = abs(m - 1.0)
        worst = max(worst, v)
    return max(worst, abs(ya) / max(1.0, C))
