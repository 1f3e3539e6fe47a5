"""The decremental path of the SVM dual: one point taken out of an optimal solution, compiled.

:func:`decrement` takes one point out of an optimal solution by following the solution path
as its multiplier falls to 0 (Cauwenberghs & Poggio 2001): one event per change of status,
each an O(|F|^2) update of the inverse of the KKT matrix (:func:`kkt_inverse`); it is how
leave-one-out refits start. :func:`independent_free_set` first moves the full solution, without
changing f, until that matrix is nonsingular.

References
----------
Cauwenberghs, G., Poggio, T. (2001). Incremental and decremental support vector machine
learning. NIPS 13, 409-415.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .active_set_solver import _eigen_step, _residual_max
from .kkt import _kkt_matrix

__all__ = ["decrement", "kkt_inverse", "independent_free_set"]


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
    M = _kkt_matrix(K, y, F, k, True)
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
        w, V = np.linalg.eigh(_kkt_matrix(K, y, F, F.size, True))
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
def _path_states(alpha, active, C, t):  # pragma: no cover - compiled
    """The status of each point at the start of the path (0 free, 1 at 0, 2 at C, -1 left out;
    t by its multiplier), the free points F in index order, their number, and t's place in F
    (-1 when t is not free)."""
    n = alpha.shape[0]
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
    return state, F, k, t_at


@njit(cache=True)
def _bias_event(G, y, state, t, nu):  # pragma: no cover - compiled
    """With no free multiplier: how far the bias (alone) moves until a point that can make up
    for alpha_t in y' alpha = 0 (one at 0 of t's class, or one at C of the other class) reaches
    the margin, |G_i + y_i nu|, and that point (-1 when there is none)."""
    n = y.shape[0]
    theta = np.inf
    event = -1
    for i in range(n):
        if (state[i] == 1 and y[i] == y[t]) or (state[i] == 2 and y[i] != y[t]):
            g = abs(G[i] + y[i] * nu)
            if g < theta:
                theta = g
                event = i
    return theta, event


@njit(cache=True)
def _path_rhs(K, y, G, alpha, state, F, k, t, pt, r):  # pragma: no cover - compiled
    """The right-hand side of the path's KKT system for alpha_t moving by p_t, written into
    ``r``: r = [-y_t p_t - y' alpha; -G_F - Q_Ft p_t]. Returns max |r|."""
    n = y.shape[0]
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
    return rmax


@njit(cache=True)
def _inverse_solve(K, y, F, k, r, rmax, Minv, valid, z):  # pragma: no cover - compiled
    """z = Minv r (written into ``z``) for the path's KKT system, checked by the residual of
    M z = r with M from K (the inverse drifts over many updates); an inverse that is not
    valid, or fails the check, is computed afresh once (:func:`kkt_inverse`). Returns (Minv, a
    larger array when it had to grow; whether it is valid; whether z solves the system)."""
    n = y.shape[0]
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
    return Minv, valid, solved


@njit(cache=True)
def _least_norm_solve(K, y, F, k, r, rmax, z):  # pragma: no cover - compiled
    """The path's KKT system when Q_FF is singular on y_F' p = 0 (free points dependent in
    feature space): any solution gives a path when the system is consistent; the least-norm
    one (:func:`~cudbound.optim.svm_dual.active_set_solver._eigen_step`) is written into ``z``.
    Returns False when the system is inconsistent."""
    M = _kkt_matrix(K, y, F, k, False)
    rr = np.zeros(k + 1)
    for a in range(k):
        rr[a] = r[a + 1]
    rr[k] = r[0]
    _, zz, _ = _eigen_step(M, rr, k)
    res = _residual_max(M, zz, rr, k + 1)
    if not res <= 1e-9 * (1.0 + rmax):
        return False
    z[0] = zz[k]
    for a in range(k):
        z[a + 1] = zz[a]
    return True


@njit(cache=True)
def _gradient_change(K, y, F, k, t, pt, z, dG):  # pragma: no cover - compiled
    """The change of G over the whole segment, written into ``dG`` for every point:
    dG_i = y_i (K_it y_t p_t + sum_F K_ia y_a p_a), p_F = z[1:]."""
    n = y.shape[0]
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


@njit(cache=True)
def _first_event(alpha, C, y, G, dG, state, F, k, z, nu, nu_end, tol):  # pragma: no cover - compiled
    """Where the segment ends, as a fraction of it in [0, 1]: at the first free multiplier to
    reach 0 or C, or the first bound point whose margin reaches 1. Returns (step, the point,
    its place in F or -1 for a bound point, whether it reached C)."""
    n = y.shape[0]
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
    return step, event, leave, hit_C


@njit(cache=True)
def _advance(alpha, C, G, dG, state, F, k, z, step, t):  # pragma: no cover - compiled
    """Move the free multipliers and the gradient (of the points that stay, and t's) by
    ``step`` of the segment."""
    n = G.shape[0]
    for a in range(k):
        alpha[F[a]] = min(max(alpha[F[a]] + step * z[a + 1], 0.0), C)
    for i in range(n):
        if state[i] >= 0 or i == t:
            G[i] += step * dG[i]


@njit(cache=True)
def _join(Minv, K, y, C, alpha, state, F, k, event, u, valid):  # pragma: no cover - compiled
    """A bound point ``event`` whose margin reached 1 joins F, bordering the inverse (unless
    the inverse is not valid: then the next solve computes it afresh). Returns (Minv, a larger
    array when it had to grow; the new number of free points; whether the inverse is valid).

    With a zero Schur complement, Q is singular on F and the new point j: a direction d of the
    multipliers of F and j leaves f (and so every margin, the bias and y' alpha) unchanged:
    d_j = +-1 (into the box), d_F = -d_j u[1:] (from [0 y'; y Q] [-u; 1] = [0; s] = 0). Moving
    along it changes nothing but the multipliers; the first of F to reach a bound leaves, and
    the test is repeated (duplicates can leave more than one such direction)."""
    n = y.shape[0]
    if not valid:
        state[event] = 0
        F[k] = event
        k += 1
        return Minv, k, valid
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
        # the null direction d (see above)
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
    return Minv, k, valid


@njit(cache=True)
def _signs_hold(G, y, state, nu, tol):  # pragma: no cover - compiled
    """Whether every KKT sign condition holds to ``tol``: y_i f(x_i) - 1 = G_i + y_i nu >= 0 at
    0, <= 0 at C."""
    n = y.shape[0]
    for i in range(n):
        if state[i] == 1 and -(G[i] + y[i] * nu) > tol:
            return False
        if state[i] == 2 and G[i] + y[i] * nu > tol:
            return False
    return True


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
    until a free multiplier reaches a bound exchanges the two (``_join``).

    ``alpha`` and ``G`` are updated in place (alpha_t included) and stay consistent however
    the routine ends. Returns (bias, steps, converged): converged means alpha_t = 0 and every
    KKT sign condition holds to ``tol``; otherwise (an inconsistent singular system, 50
    zero-length steps in a row at a degenerate point, or ``max_iter`` events) the caller goes
    on from the current point with :func:`~cudbound.optim.svm_dual.active_set_solver.active_set`.
    """
    n = y.shape[0]
    state, F, k, t_at = _path_states(alpha, active, C, t)
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
            # reaches the margin; it joins F (the path's empty-margin event).
            theta, event = _bias_event(G, y, state, t, nu)
            if event < 0:
                return nu, it, False
            nu -= y[t] * theta
            state[event] = 0
            F[0] = event
            k = 1
            valid = False
            continue
        pt = -alpha[t]
        rmax = _path_rhs(K, y, G, alpha, state, F, k, t, pt, r)
        Minv, valid, solved = _inverse_solve(K, y, F, k, r, rmax, Minv, valid, z)
        if not solved and not _least_norm_solve(K, y, F, k, r, rmax, z):
            return nu, it, False
        nu_end = z[0]
        _gradient_change(K, y, F, k, t, pt, z, dG)
        step, event, leave, hit_C = _first_event(alpha, C, y, G, dG, state, F, k, z, nu, nu_end, tol)
        # degenerate points (several bound points exactly on the margin, as discrete features
        # make) give zero-length steps, a point entering or leaving F at each; they usually
        # find the way out, as the simplex method does at a degenerate vertex, but can cycle:
        # after 50 in a row the caller takes over
        stalled = stalled + 1 if step <= 1e-14 else 0
        if stalled > 50:
            return nu, it, False
        _advance(alpha, C, G, dG, state, F, k, z, step, t)
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
        Minv, k, valid = _join(Minv, K, y, C, alpha, state, F, k, event, u, valid)
    # done: every sign condition must hold (they can fail only by round-off at the start)
    return nu, it, _signs_hold(G, y, state, nu, tol)
