"""Compiled pieces of the search (numba): node QPs, bounds, branching, queue, replicate set-up.

The loop that uses them is :mod:`cudbound.search.core` (the one search of the toolkit).

- the node QP  min (b - b_u)'H(b - b_u)  s.t.  s_k phi_k'b >= 0  by the dual active-set
  method of Goldfarb & Idnani (1983), allocation-free, warm-started from the parent's
  active set (:func:`_gi_ws`);
- realisability of the node's open region by the same method on the feasibility QP
  min ||b||^2  s.t.  phi_k'b >= 0 (s_k = +1), phi_k'b <= -1 (s_k = -1), whose
  infeasibility the dual method detects exactly (cones scale, method.md);
- the node bound (:func:`_bound`), optionally tightened by the per-point flip cost: at a
  node with minimiser b_m, every b in the node's cone has L(b) >= m + (b - b_m)'H(b - b_m)
  (first-order optimality of b_m), so giving point k the other sign costs at least
  delta_k = (phi_k'b_m)^2 / (phi_k'H^-1 phi_k) (refined with the gradient in
  :func:`_flip_cost`); a completion that flips a set F of points has loss >= m + max_F
  delta_k. The bound is the largest |C|/n g(alpha_n(L_hat - m - delta)) over the prefixes
  of the points sorted by delta. The logistic and exponential losses get the same bound
  from their self-concordance (:func:`_flip_d` with r > 0);
- the branching rules (:func:`_branch_point`), the binary heap of open nodes, and the
  set-up of a quadratic replicate (:func:`_replicate_setup`).
"""
from __future__ import annotations

import contextlib
import math
import sys
import threading

import numpy as np
from numba import njit

__all__ = ["STATUS", "BRANCHING"]

STATUS = ("exact", "budget", "solver_failure", "bounded", "bounded")
"""Statuses of a replicate search. "bounded": stopped on purpose by ``floor`` (every value
above it excluded) or ``stop_above`` (a value above it attained): the value is then a
certified upper bound and ``lower`` an attained value, as after a budget."""
_TOL = 1e-12
_FEAS = 1e-9  # a violation this small (relative to |x|, row norm 1) is round-off
_PIVOT = 1e-13  # a pivot this small relative to the matrix is a dependent row in all but round-off


@njit(cache=True)
def _solve_ws(M, b, x, nn):
    """Solve M[:nn, :nn] x[:nn] = b[:nn] in place (M and b are overwritten), by Gaussian
    elimination with partial pivoting. Returns False when a pivot is at most _PIVOT times the
    largest entry of M (a matrix singular in all but round-off: exactly dependent active rows,
    as discrete features make, leave a pivot of order 1e-16 that is zero or not depending on
    the processor's rounding) or the answer is not finite; the caller then reports a
    numerical failure and the node or question goes to an exact fallback."""
    scale = 0.0
    for r in range(nn):
        for j in range(nn):
            if abs(M[r, j]) > scale:
                scale = abs(M[r, j])
    for c in range(nn):
        piv = c
        for r in range(c + 1, nn):
            if abs(M[r, c]) > abs(M[piv, c]):
                piv = r
        if not np.isfinite(M[piv, c]) or abs(M[piv, c]) <= _PIVOT * scale:
            return False
        if piv != c:
            for j in range(nn):
                M[c, j], M[piv, j] = M[piv, j], M[c, j]
            b[c], b[piv] = b[piv], b[c]
        for r in range(c + 1, nn):
            f = M[r, c] / M[c, c]
            if f != 0.0:
                for j in range(c, nn):
                    M[r, j] -= f * M[c, j]
                b[r] -= f * b[c]
    for c in range(nn - 1, -1, -1):
        v = b[c]
        for j in range(c + 1, nn):
            v -= M[c, j] * x[j]
        x[c] = v / M[c, c]
    for c in range(nn):
        if not np.isfinite(x[c]):
            return False
    return True


@njit(cache=True, inline="always")
def _times_cols(Qinv, N, QN, p, nact):
    """QN[:, :nact] = Qinv N[:, :nact] (no allocation)."""
    for i in range(p):
        for a in range(nact):
            v = 0.0
            for j in range(p):
                v += Qinv[i, j] * N[j, a]
            QN[i, a] = v


@njit(cache=True)
def _workspace(p):
    """Scratch arrays of :func:`_gi_ws` for a problem with p unknowns (allocated once per search)."""
    return (np.empty(p), np.empty(p), np.empty((p, p)), np.empty((p, p)), np.empty((p, p)), np.empty(p),
            np.empty(p), np.empty(p), np.empty(p), np.empty(p))


@njit(cache=True)
def _gi(Qinv, P, norms, signs, rhs_neg, x0, x, act, u, nact):
    """:func:`_gi_ws` with a fresh workspace (for callers outside the compiled search)."""
    return _gi_ws(Qinv, P, norms, signs, rhs_neg, x0, x, act, u, nact, _workspace(x.shape[0]))


@njit(cache=True)
def _gi_ws(Qinv, P, norms, signs, rhs_neg, x0, x, act, u, nact, ws):
    """Goldfarb-Idnani on  s_k P_k x >= h_k  (h_k = rhs_neg when s_k = -1, else 0).

    x0 is the unconstrained minimiser; (x, act[:nact], u[:nact]) is a dual-feasible
    start and is updated in place. After each constraint is added, x is recomputed
    as the exact minimiser on the active set, x0 + Qinv N (N'Qinv N)^-1 (h_A - N'x0),
    so round-off does not build up along the pivots. ``ws`` is a :func:`_workspace`:
    the routine allocates nothing.
    Returns (status, nact): status 0 optimal, 1 infeasible, 2 numerical failure.
    """
    nq, Qn, N, QN, M, r, z, rhs, hA, tmp = ws
    p = x.shape[0]
    m = P.shape[0]
    maxit = 20 * (m + p) + 50
    for _ in range(maxit):
        xs = 1.0
        for i in range(p):
            if abs(x[i]) > xs:
                xs = abs(x[i])
        q = -1
        worst = -_TOL * xs
        for k in range(m):
            s = signs[k]
            if s == 0:
                continue
            v = 0.0
            for i in range(p):
                v += P[k, i] * x[i]
            v = s * v
            if s < 0:
                v -= rhs_neg
            v /= norms[k]
            if v < worst:
                worst = v
                q = k
        if q < 0:
            if rhs_neg > 0.0 and xs > 1.0 / _FEAS:
                # the relative tolerance above is then loose against the right-hand side itself:
                # accept x only if every row with h_k = rhs_neg meets it to _FEAS * rhs_neg
                for k in range(m):
                    if signs[k] < 0:
                        v = 0.0
                        for i in range(p):
                            v += P[k, i] * x[i]
                        if -v - rhs_neg < -_FEAS * rhs_neg:
                            return 2, nact
            return 0, nact
        sq = signs[q]
        for i in range(p):
            nq[i] = sq * P[q, i]
        hq = rhs_neg if sq < 0 else 0.0
        u_plus = 0.0
        done = False
        for _inner in range(maxit):
            for i in range(p):
                v = 0.0
                for j in range(p):
                    v += Qinv[i, j] * nq[j]
                Qn[i] = v
            if nact > 0:
                # N = the active normals (p x nact), QN = Qinv N, M = N'QN, solve M r = N'Qn
                for a in range(nact):
                    k = act[a]
                    sk = signs[k]
                    for i in range(p):
                        N[i, a] = sk * P[k, i]
                _times_cols(Qinv, N, QN, p, nact)
                for a in range(nact):
                    v = 0.0
                    for i in range(p):
                        v += N[i, a] * Qn[i]
                    rhs[a] = v
                    for b2 in range(nact):
                        v = 0.0
                        for i in range(p):
                            v += N[i, a] * QN[i, b2]
                        M[a, b2] = v
                if not _solve_ws(M, rhs, r, nact):  # dependent active rows (exactly, in floating point)
                    return 2, nact
                for i in range(p):
                    v = Qn[i]
                    for a in range(nact):
                        v -= QN[i, a] * r[a]
                    z[i] = v
            else:
                for i in range(p):
                    z[i] = Qn[i]
            t1 = np.inf
            drop = -1
            for a in range(nact):
                if r[a] > 1e-14 and u[a] / r[a] < t1:
                    t1 = u[a] / r[a]
                    drop = a
            zn = 0.0
            nQn = 0.0
            for i in range(p):
                zn += z[i] * nq[i]
                nQn += nq[i] * Qn[i]
            if nact >= p or zn <= 1e-15 * nQn:
                if drop < 0:
                    # n_q depends on the active normals with no dual step left: the system is
                    # infeasible, unless q is violated only by round-off (q is the most
                    # violated row, so x then meets every constraint to that tolerance)
                    sl = 0.0
                    for i in range(p):
                        sl += nq[i] * x[i]
                    if (hq - sl) / norms[q] <= _FEAS * xs:
                        return 0, nact
                    return 1, nact
                for a in range(nact):
                    u[a] -= t1 * r[a]
                u_plus += t1
                for a in range(drop, nact - 1):
                    act[a] = act[a + 1]
                    u[a] = u[a + 1]
                nact -= 1
                continue
            sl = 0.0
            for i in range(p):
                sl += nq[i] * x[i]
            t2 = -(sl - hq) / zn
            t = t2 if t2 <= t1 else t1
            for i in range(p):
                x[i] += t * z[i]
            for a in range(nact):
                u[a] -= t * r[a]
            u_plus += t
            if t2 <= t1:
                if nact >= p:
                    return 2, nact
                act[nact] = q
                u[nact] = u_plus
                nact += 1
                for a in range(nact):
                    k = act[a]
                    hA[a] = rhs_neg if signs[k] < 0 else 0.0
                    for i in range(p):
                        N[i, a] = signs[k] * P[k, i]
                if nact == p:  # a vertex: x is fixed by the active rows alone
                    for a in range(nact):
                        for i in range(p):
                            M[a, i] = N[i, a]
                    if not _solve_ws(M, hA, tmp, nact):
                        return 2, nact
                    for i in range(p):
                        x[i] = tmp[i]
                else:
                    _times_cols(Qinv, N, QN, p, nact)
                    for a in range(nact):
                        v = hA[a]
                        for i in range(p):
                            v -= N[i, a] * x0[i]
                        rhs[a] = v
                        for b2 in range(nact):
                            w = 0.0
                            for i in range(p):
                                w += N[i, a] * QN[i, b2]
                            M[a, b2] = w
                    if not _solve_ws(M, rhs, tmp, nact):
                        return 2, nact
                    for i in range(p):
                        v = x0[i]
                        for a in range(nact):
                            v += QN[i, a] * tmp[a]
                        x[i] = v
                done = True
                break
            for a in range(drop, nact - 1):
                act[a] = act[a + 1]
                u[a] = u[a + 1]
            nact -= 1
        if not done:
            return 2, nact
    return 2, nact


@njit(cache=True)
def _meets(P, norms, k, s, x):
    """Does x meet the feasibility-QP row of point k (s phi_k'x >= 0, or >= 1 when s = -1)?"""
    v = 0.0
    for i in range(x.shape[0]):
        v += P[k, i] * x[i]
    v = s * v - (1.0 if s < 0 else 0.0)
    xs = 1.0
    for i in range(x.shape[0]):
        if abs(x[i]) > xs:
            xs = abs(x[i])
    return v / norms[k] >= -_TOL * xs


@njit(cache=True)
def _objective(C, m, n, alpha, L_hat):
    if alpha == 0.0:
        return abs(C) / n
    g = 1.0 + alpha * (L_hat - m)
    if g > 1.0:
        g = 1.0
    return abs(C) / n * g


@njit(cache=True)
def _gval(m, alpha, L_hat):
    if alpha == 0.0:
        return 1.0
    g = 1.0 + alpha * (L_hat - m)
    return 1.0 if g > 1.0 else g


@njit(cache=True)
def _value_at(P, rnorms, cplus, cminus, C_forced, x, m, n, alpha, L_hat, margin):
    """Objective at classifier x when all its signs on the free points are clear, else 0."""
    if _gval(m, alpha, L_hat) <= 0.0:
        return 0.0
    xn = 0.0
    for i in range(x.shape[0]):
        xn += x[i] * x[i]
    xn = math.sqrt(xn)
    C = C_forced
    for k in range(P.shape[0]):
        t = 0.0
        for i in range(x.shape[0]):
            t += P[k, i] * x[i]
        if abs(t) <= margin * xn * rnorms[k]:
            return 0.0
        C += cplus[k] if t >= 0.0 else cminus[k]
    return _objective(C, m, n, alpha, L_hat)


@njit(cache=True)
def _flip_cost(t, tu, hn, a):
    """A lower bound on the loss increase L(b) - m that puts a point on the other side.

    At the node's minimiser b_m (t = phi'b_m, tu = phi'b_u, hn = phi'H^-1 phi,
    a = 4 (m - L_u) = |grad L(b_m)|^2 in the H^-1 metric), with d = b - b_m, every b of
    the node's cone has L(b) - m = grad'd + d'Hd and grad'd >= 0 (first-order optimality).
    Flipping needs f'd >= r with f = -sign(t) phi, r = |t|. Weak duality for
    min grad'd + d'Hd  s.t.  f'd >= r, grad'd >= 0, with multipliers mu >= 0 and 1 - tau >= 0:
    phi(mu, tau) = mu r - |tau grad - mu f|^2_{H^-1} / 4 <= the minimum, for every tau <= 1.
    With c = grad'H^-1 f = -2 sign(t) (t - tu) and b = hn: tau = 0 gives delta = r^2 / b
    (the plain flip cost), tau = 1 gives (r + c/2)^2 / b - a/4, and the interior optimum
    tau = mu c / a (when <= 1) gives r^2 a / (a b - c^2). The largest of them is returned.
    """
    r = abs(t)
    best = r * r / hn
    if a <= 0.0:
        return best
    c = -2.0 * (t - tu) if t >= 0.0 else 2.0 * (t - tu)
    v = r + 0.5 * c
    if v > 0.0:
        val = v * v / hn - 0.25 * a
        if val > best:
            best = val
    den = a * hn - c * c
    if den > 0.0 and (c <= 0.0 or 2.0 * r * c <= den):
        val = r * r * a / den
        if val > best:
            best = val
    return best


@njit(cache=True, inline="always")
def _flip_d(t, hnk, r):
    """A lower bound on the loss increase that gives a point the other sign, from t = phi'b_m.

    r = 0 (a quadratic loss L = m + grad'd + d'Hd, H half its Hessian): t^2 / hnk with
    hnk = phi'H^-1 phi. r > 0 (a loss whose terms have |l'''| <= l'': logistic, exponential,
    plus any quadratic penalty; H the full Hessian of L at b_m, hnk = phi'H^-1 phi and r^2 the
    largest phi_i'H^-1 phi_i over the points of the loss): along d = b - b_m the second
    derivative F'' of F(s) = L(b_m + s d) has |F'''| <= M F'' with M = max_i |phi_i'd| <= r q,
    q = (d'Hd)^(1/2), so F(1) - F(0) - F'(0) >= q^2 psi(r q), psi(u) = (e^-u + u - 1) / u^2
    (Bach 2010, "Self-concordant analysis for logistic regression", Prop. 1), F'(0) >= 0 on the
    node's cone, and a flip needs q >= |t| / hnk^(1/2); q^2 psi(r q) grows with q."""
    if r <= 0.0:
        return t * t / hnk
    q = abs(t) / math.sqrt(hnk)
    u = r * q
    if u < 1e-3:
        return q * q * (0.5 - u / 6.0)  # the series of psi alternates: this is below it
    return (math.expm1(-u) + u) / (r * r) * (1.0 - 1e-12)


@njit(cache=True)
def _bound(P, hn, cplus, cminus, signs, Cfix, beta, m, n, alpha, L_hat, L_max, use_flip, tmp_d, tmp_diff,
           floor=0.0, tu=np.zeros(0), L_u=0.0, sc_r=0.0):
    """Upper bound of a node: plain (all unfixed points free at g(m)) or flip-cost.

    ``beta`` minimises the loss (value ``m``) over a cone containing the node's, and
    every completion is known to cost at least ``m + floor`` (a child not yet solved:
    its parent's minimiser and the flip cost of its new point). With ``tu`` (phi_k'b_u for
    every point) and ``L_u``, the flip costs use the gradient too (:func:`_flip_cost`); with
    sc_r > 0 (:func:`_flip_d`'s r), ``hn`` belongs to the Hessian at ``beta`` of a self-concordant loss.
    """
    mf = P.shape[0]
    p = beta.shape[0]
    g0 = _gval(m + floor, alpha, L_hat)
    if g0 <= 0.0:
        return -1.0
    if not use_flip:
        hi = Cfix
        lo = Cfix
        for k in range(mf):
            if signs[k] == 0:
                hi += max(cplus[k], cminus[k])
                lo += min(cplus[k], cminus[k])
        return max(abs(hi), abs(lo)) / n * g0
    C0 = Cfix
    r = 0
    for k in range(mf):
        if signs[k] != 0:
            continue
        t = 0.0
        for i in range(p):
            t += P[k, i] * beta[i]
        if t >= 0.0:
            C0 += cplus[k]
            diff = cminus[k] - cplus[k]
        else:
            C0 += cminus[k]
            diff = cplus[k] - cminus[k]
        if tu.shape[0] > 0:
            dk = _flip_cost(t, tu[k], hn[k], 4.0 * (m - L_u))
        else:
            dk = _flip_d(t, hn[k], sc_r)
        if m + max(dk, floor) < L_max and diff != 0.0:  # only points that can flip, and matter, are sorted
            tmp_diff[r] = diff
            tmp_d[r] = dk
            r += 1
    best = abs(C0) / n * g0
    if r == 0:
        return best
    order = np.argsort(tmp_d[:r])
    hi = C0
    lo = C0
    for idx in range(r):
        j = order[idx]
        mm = m + max(tmp_d[j], floor)
        if mm >= L_max:
            break
        d = tmp_diff[j]
        if d > 0:
            hi += d
        else:
            lo += d
        v = max(abs(hi), abs(lo)) / n * _gval(mm, alpha, L_hat)
        if v > best:
            best = v
    return best


BRANCHING = {"static": 0, "ambiguous": 1, "dearest": 2}


@njit(cache=True)
def _branch_point(P, hn, cplus, cminus, signs, beta, m, L_max, mode, r=0.0):
    """The unfixed point to branch on.

    mode 0 "static": the first unfixed point in the problem's order (largest |cost change|);
    mode 1 "ambiguous": the point cheapest to flip from the node's minimiser;
    mode 2 "dearest" (default): among points that can still flip inside the neighbourhood,
    the one with the largest flip cost times |cost change|, so the flip child's minimum
    rises most and the other child loses the most |C|. Flip costs as in :func:`_bound`.
    """
    best_j = -1
    best_key = -np.inf
    best_w = -1.0
    for k in range(P.shape[0]):
        if signs[k] != 0:
            continue
        if mode == 0:
            return k
        t = np.dot(P[k], beta)
        dk = _flip_d(t, hn[k], r)
        wk = abs(cplus[k] - cminus[k])
        if mode == 1:
            key = -dk
        else:
            key = dk * wk if m + dk < L_max else -dk
        if best_j < 0 or key > best_key or (key == best_key and wk > best_w):
            best_j = k
            best_key = key
            best_w = wk
    return best_j


@njit(cache=True)
def _heap_push(hk, hid, size, key, nid):
    i = size
    hk[i] = key
    hid[i] = nid
    while i > 0:
        par = (i - 1) // 2
        if hk[par] > hk[i] or (hk[par] == hk[i] and hid[par] < hid[i]):
            break
        hk[par], hk[i] = hk[i], hk[par]
        hid[par], hid[i] = hid[i], hid[par]
        i = par
    return size + 1


@njit(cache=True)
def _heap_pop(hk, hid, size):
    key = hk[0]
    nid = hid[0]
    size -= 1
    hk[0] = hk[size]
    hid[0] = hid[size]
    i = 0
    while True:
        lft = 2 * i + 1
        rgt = lft + 1
        top = i
        if lft < size and (hk[lft] > hk[top] or (hk[lft] == hk[top] and hid[lft] < hid[top])):
            top = lft
        if rgt < size and (hk[rgt] > hk[top] or (hk[rgt] == hk[top] and hid[rgt] < hid[top])):
            top = rgt
        if top == i:
            break
        hk[top], hk[i] = hk[i], hk[top]
        hid[top], hid[i] = hid[i], hid[top]
        i = top
    return key, nid, size


@njit(cache=True)
def _mark_can_flip(Phi, sides, can_flip, j, x):
    """Screening: x has loss below L_max, so every later row j' (> j) that x puts on the side
    opposite to sides[j'] (closed) can flip; mark it (its solve is skipped)."""
    for jj in range(j + 1, Phi.shape[0]):
        if not can_flip[jj] and sides[jj] * np.dot(Phi[jj], x) <= 0.0:
            can_flip[jj] = True


@njit(cache=True)
def _grow(a, cap):
    shape = (cap,) + a.shape[1:]
    b = np.zeros(shape, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


_LOADED: set = set()  # kernels known to be compiled or loaded in this process
_NOTICE_AFTER = 2.0  # seconds: loading the cached kernel takes less


@contextlib.contextmanager
def _first_compile_notice(kernel):
    """Say on stderr what is happening when the first call compiles the kernel (numba; the
    result is cached on disk, so later runs load it in well under a second)."""
    if kernel in _LOADED:
        yield
        return
    if kernel.signatures:  # costly for long signatures: asked once per kernel
        _LOADED.add(kernel)
        yield
        return
    timer = threading.Timer(_NOTICE_AFTER, lambda: print(
        "cudbound: compiling the branch-and-bound kernel with numba (first run only; cached for later runs, "
        "about a minute) ...", file=sys.stderr, flush=True))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


@njit(cache=True)
def _replicate_setup(Zu, group, y, counts, H, g, c, beta_hat, alpha, screen):
    """The compiled twin of :class:`~cudbound.search.problem.ReplicateProblem` for a
    quadratic loss L(b) = b'Hb - 2g'b + c with H positive definite: the free points of S =
    {i : nu_i != 1} merged by identical rows (``group`` numbers the distinct rows of the
    design in lexicographic order, ``Zu`` holds them), their costs, screening by the
    neighbourhood ellipsoid, and the branching order (largest |cost change| first, stable).

    Returns (ok, P, cplus, cminus, C_forced, n_screened, Hinv, beta_u, L_u, L_hat, uidx), uidx
    the distinct row of each free point; ok is False when H is not positive definite (smallest
    eigenvalue <= 1e-10 times the largest).
    """
    n = y.shape[0]
    p = H.shape[0]
    U = Zu.shape[0]
    ev = np.linalg.eigvalsh(H)
    empty = np.zeros((0, p))
    z = np.zeros(0)
    if not ev[0] > 1e-10 * max(ev[p - 1], 1e-300):
        return False, empty, z, z, 0.0, 0, np.zeros((p, p)), beta_hat.copy(), 0.0, 0.0, np.zeros(0, dtype=np.int64)
    Hinv = np.ascontiguousarray(np.linalg.inv(H))
    beta_u = np.ascontiguousarray(np.linalg.solve(H, g))
    L_u = c - np.dot(g, beta_u)
    L_hat = np.dot(beta_hat, H @ beta_hat) - 2.0 * np.dot(g, beta_hat) + c
    L_max = L_hat + 1.0 / alpha if alpha > 0.0 else np.inf
    cp_ = np.zeros(U)
    cm_ = np.zeros(U)
    present = np.zeros(U, dtype=np.bool_)
    for i in range(n):
        if counts[i] != 1.0:
            k = group[i]
            present[k] = True
            w = counts[i] - 1.0
            if y[i] != 1.0:
                cp_[k] += w
            if y[i] != -1.0:
                cm_[k] += w
    forced = np.zeros(U, dtype=np.int64)
    nrep = 0
    for k in range(U):
        if not present[k]:
            continue
        nrep += 1
        nz = False
        for j in range(p):
            if Zu[k, j] != 0.0:
                nz = True
        if not nz:
            forced[k] = 1
        elif cp_[k] == cm_[k]:
            forced[k] = 1
    if screen and alpha > 0.0:
        radius = L_max - L_u
        for k in range(U):
            if not present[k] or forced[k] != 0:
                continue
            t = np.dot(Zu[k], beta_u)
            hn = np.dot(Zu[k], Hinv @ Zu[k])
            if hn > 0.0 and t != 0.0 and t * t / hn >= radius * (1.0 + 1e-9):
                forced[k] = 1 if t > 0.0 else -1
    C_forced = 0.0
    n_screened = 0
    nfree = 0
    for k in range(U):
        if not present[k]:
            continue
        if forced[k] > 0:
            C_forced += cp_[k]
            n_screened += 1
        elif forced[k] < 0:
            C_forced += cm_[k]
            n_screened += 1
        else:
            nfree += 1
    free = np.empty(nfree, dtype=np.int64)
    key = np.empty(nfree)
    f = 0
    for k in range(U):
        if present[k] and forced[k] == 0:
            free[f] = k
            key[f] = -abs(cp_[k] - cm_[k])
            f += 1
    order = np.argsort(key, kind="mergesort")
    P = np.empty((nfree, p))
    cplus = np.empty(nfree)
    cminus = np.empty(nfree)
    uidx = np.empty(nfree, dtype=np.int64)
    for f in range(nfree):
        k = free[order[f]]
        uidx[f] = k
        P[f] = Zu[k]
        cplus[f] = cp_[k]
        cminus[f] = cm_[k]
    return True, P, cplus, cminus, C_forced, n_screened, Hinv, beta_u, L_u, L_hat, uidx
