"""Compiled branch and bound for quadratic losses (numba).

The same search as :mod:`cudbound.search.bnb` (best-first, the paper's bound, the
parent's minimiser reused by the child that does not flip, screening done before by
:class:`~cudbound.search.problem.ReplicateProblem`), with every node problem solved in
compiled code:

- the node QP  min (b - b_u)'H(b - b_u)  s.t.  s_k phi_k'b >= 0  by the dual active-set
  method of Goldfarb & Idnani (1983), warm-started from the parent's active set;
- realisability of the node's open region by the same method on the feasibility QP
  min ||b||^2  s.t.  phi_k'b >= 0 (s_k = +1), phi_k'b <= -1 (s_k = -1), whose
  infeasibility the dual method detects exactly (cones scale, method.md); it too is
  warm-started from the parent's solution, and a parent solution that already meets
  the child's new constraint is reused without any pivot.

Optionally the node bound is tightened by the per-point flip cost: at a node with
minimiser b_m, every b in the node's cone has L(b) >= m + (b - b_m)'H(b - b_m)
(first-order optimality of b_m), so giving point k the other sign costs at least
delta_k = (phi_k'b_m)^2 / (phi_k'H^-1 phi_k); a completion that flips a set F of points
has loss >= m + max_F delta_k. The bound is the largest |C|/n g(alpha_n(L_hat - m - delta))
over the prefixes of the points sorted by delta.
"""
from __future__ import annotations

import math
import time

import numpy as np
from numba import njit, objmode

__all__ = ["compiled_search", "STATUS", "BRANCHING"]

STATUS = ("exact", "budget", "solver_failure")
_TOL = 1e-12
_FEAS = 1e-9  # a violation this small (relative to |x|, row norm 1) is round-off


@njit(cache=True)
def _solve(A, b):
    """Solve A x = b by Gaussian elimination with partial pivoting.

    Returns (ok, x); ok is False when a pivot is exactly zero or the answer is not
    finite (where ``np.linalg.solve`` would raise, which compiled code cannot catch).
    """
    n = A.shape[0]
    M = A.copy()
    x = b.copy()
    for c in range(n):
        piv = c
        for r in range(c + 1, n):
            if abs(M[r, c]) > abs(M[piv, c]):
                piv = r
        if M[piv, c] == 0.0 or not np.isfinite(M[piv, c]):
            return False, x
        if piv != c:
            for j in range(n):
                M[c, j], M[piv, j] = M[piv, j], M[c, j]
            x[c], x[piv] = x[piv], x[c]
        for r in range(c + 1, n):
            f = M[r, c] / M[c, c]
            if f != 0.0:
                for j in range(c, n):
                    M[r, j] -= f * M[c, j]
                x[r] -= f * x[c]
    for c in range(n - 1, -1, -1):
        v = x[c]
        for j in range(c + 1, n):
            v -= M[c, j] * x[j]
        x[c] = v / M[c, c]
    for c in range(n):
        if not np.isfinite(x[c]):
            return False, x
    return True, x


@njit(cache=True)
def _gi(Qinv, P, norms, signs, rhs_neg, x0, x, act, u, nact):
    """Goldfarb-Idnani on  s_k P_k x >= h_k  (h_k = rhs_neg when s_k = -1, else 0).

    x0 is the unconstrained minimiser; (x, act[:nact], u[:nact]) is a dual-feasible
    start and is updated in place. After each constraint is added, x is recomputed
    as the exact minimiser on the active set, x0 + Qinv N (N'Qinv N)^-1 (h_A - N'x0),
    so round-off does not build up along the pivots.
    Returns (status, nact): status 0 optimal, 1 infeasible, 2 numerical failure.
    """
    p = x.shape[0]
    m = P.shape[0]
    nq = np.empty(p)
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
            return 0, nact
        sq = signs[q]
        for i in range(p):
            nq[i] = sq * P[q, i]
        hq = rhs_neg if sq < 0 else 0.0
        u_plus = 0.0
        done = False
        for _inner in range(maxit):
            Qn = Qinv @ nq
            if nact > 0:
                N = np.empty((p, nact))
                for a in range(nact):
                    k = act[a]
                    for i in range(p):
                        N[i, a] = signs[k] * P[k, i]
                QN = Qinv @ N
                M = N.T @ QN
                ok, r = _solve(M, N.T @ Qn)
                if not ok:  # dependent active rows (exactly, in floating point)
                    return 2, nact
                z = Qn - QN @ r
            else:
                r = np.zeros(0)
                z = Qn
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
                N = np.empty((p, nact))
                hA = np.empty(nact)
                for a in range(nact):
                    k = act[a]
                    hA[a] = rhs_neg if signs[k] < 0 else 0.0
                    for i in range(p):
                        N[i, a] = signs[k] * P[k, i]
                if nact == p:  # a vertex: x is fixed by the active rows alone
                    ok, xv = _solve(N.T.copy(), hA)
                    if not ok:
                        return 2, nact
                    x[:] = xv
                else:
                    QN = Qinv @ N
                    ok, lam = _solve(N.T @ QN, hA - N.T @ x0)
                    if not ok:
                        return 2, nact
                    x[:] = x0 + QN @ lam
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
def _bound(P, hn, cplus, cminus, signs, Cfix, beta, m, n, alpha, L_hat, L_max, use_flip, tmp_d, tmp_diff,
           floor=0.0):
    """Upper bound of a node: plain (all unfixed points free at g(m)) or flip-cost.

    ``beta`` minimises the loss (value ``m``) over a cone containing the node's, and
    every completion is known to cost at least ``m + floor`` (a child not yet solved:
    its parent's minimiser and the flip cost of its new point).
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
        dk = t * t / hn[k]
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
def _branch_point(P, hn, cplus, cminus, signs, beta, m, L_max, mode):
    """The unfixed point to branch on.

    mode 0 "static": the first unfixed point in the problem's order (largest |cost change|);
    mode 1 "ambiguous": the point cheapest to flip from the node's minimiser;
    mode 2 "dearest" (default): among points that can still flip inside the neighbourhood,
    the one with the largest flip cost times |cost change|, so the flip child's minimum
    rises most and the other child loses the most |C|.
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
        dk = t * t / hn[k]
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
def _grow(a, cap):
    shape = (cap,) + a.shape[1:]
    b = np.zeros(shape, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def _search(P, cplus, cminus, H, Hinv, beta_u, L_u, L_hat, alpha, C_forced, n, best0,
            max_nodes, time_limit, use_flip, branching):
    mf, p = P.shape
    L_max = L_hat + 1.0 / alpha if alpha > 0.0 else np.inf
    norms = np.empty(mf)
    hn = np.empty(mf)
    for k in range(mf):
        norms[k] = math.sqrt(np.dot(P[k], P[k]))
        hn[k] = np.dot(P[k], Hinv @ P[k])
    Qinv_loss = 0.5 * Hinv
    Qinv_real = np.eye(p)
    zero_p = np.zeros(p)
    tmp_d = np.empty(mf)
    tmp_diff = np.empty(mf)
    cap = 256
    sgn = np.zeros((cap, mf), dtype=np.int8)
    depth = np.zeros(cap, dtype=np.int64)
    Cfix = np.zeros(cap)
    mval = np.zeros(cap)
    bound = np.zeros(cap)
    beta = np.zeros((cap, p))
    act = np.zeros((cap, p), dtype=np.int64)
    nact = np.zeros(cap, dtype=np.int64)
    uu = np.zeros((cap, p))
    wx = np.zeros((cap, p))
    wact = np.zeros((cap, p), dtype=np.int64)
    wn = np.zeros(cap, dtype=np.int64)
    wu = np.zeros((cap, p))
    hk = np.zeros(cap)
    hid = np.zeros(cap, dtype=np.int64)
    last = np.zeros(cap, dtype=np.int64)  # the point fixed last at each node
    free = np.zeros(cap, dtype=np.int64)  # slots of finished nodes, reused (keeps the pool small)
    nfree = 0
    hsize = 0
    best = best0
    nodes = 1
    solves = 0
    pruned = 0
    real_solves = 0
    status = 0
    unsolved = -1.0
    t_start = 0.0
    if time_limit > 0:
        with objmode(t_start="float64"):
            t_start = time.perf_counter()
    # root
    depth[0] = 0
    Cfix[0] = C_forced
    mval[0] = L_u
    beta[0] = beta_u
    v = _value_at(P, norms, cplus, cminus, C_forced, beta_u, L_u, n, alpha, L_hat, 1e-9)
    if v > best:
        best = v
    U = _bound(P, hn, cplus, cminus, sgn[0], C_forced, beta_u, L_u, n, alpha, L_hat, L_max, use_flip, tmp_d, tmp_diff)
    count = 1
    if U > best + _TOL:
        hsize = _heap_push(hk, hid, hsize, U, 0)
    else:
        pruned += 1
    pops = 0
    while hsize > 0:
        U = hk[0]
        if U <= best + _TOL:
            break
        if max_nodes > 0 and nodes >= max_nodes:
            status = 1
            break
        if time_limit > 0 and pops % 64 == 0:
            with objmode(now="float64"):
                now = time.perf_counter()
            if now - t_start > time_limit:
                status = 1
                break
        U, v_id, hsize = _heap_pop(hk, hid, hsize)
        pops += 1
        d = depth[v_id]
        jl = last[v_id]
        if d > 0 and not _meets(P, norms, jl, sgn[v_id, jl], wx[v_id]):
            # realisability: warm-started min-norm feasibility QP (only when the parent's point
            # misses the new constraint; otherwise that point is still optimal for the child)
            ok, nw = _gi(Qinv_real, P, norms, sgn[v_id], 1.0, zero_p, wx[v_id], wact[v_id], wu[v_id], wn[v_id])
            wn[v_id] = nw
            real_solves += 1
            if ok == 1:
                free[nfree] = v_id
                nfree += 1
                continue
            if ok == 2:
                status = 2
                if U > unsolved:
                    unsolved = U
                free[nfree] = v_id
                nfree += 1
                continue
        if d == mf:
            v = _objective(Cfix[v_id], mval[v_id], n, alpha, L_hat)
            if v > best:
                best = v
            free[nfree] = v_id
            nfree += 1
            continue
        j = _branch_point(P, hn, cplus, cminus, sgn[v_id], beta[v_id], mval[v_id], L_max, branching)
        side = np.dot(P[j], beta[v_id])
        for s in (1, -1):
            if nfree == 0 and count + 1 >= cap:
                cap *= 2
                sgn = _grow(sgn, cap)
                depth = _grow(depth, cap)
                Cfix = _grow(Cfix, cap)
                mval = _grow(mval, cap)
                bound = _grow(bound, cap)
                beta = _grow(beta, cap)
                act = _grow(act, cap)
                nact = _grow(nact, cap)
                uu = _grow(uu, cap)
                wx = _grow(wx, cap)
                wact = _grow(wact, cap)
                wn = _grow(wn, cap)
                wu = _grow(wu, cap)
                hk = _grow(hk, cap)
                hid = _grow(hid, cap)
                last = _grow(last, cap)
                free = _grow(free, cap)
            if nfree > 0:
                nfree -= 1
                c = free[nfree]
            else:
                c = count
                count += 1
            nodes += 1
            sgn[c] = sgn[v_id]
            sgn[c, j] = s
            last[c] = j
            depth[c] = d + 1
            Cfix[c] = Cfix[v_id] + (cplus[j] if s > 0 else cminus[j])
            beta[c] = beta[v_id]
            act[c] = act[v_id]
            nact[c] = nact[v_id]
            uu[c] = uu[v_id]
            mval[c] = mval[v_id]
            wx[c] = wx[v_id]
            wact[c] = wact[v_id]
            wn[c] = wn[v_id]
            wu[c] = wu[v_id]
            if s * side < 0.0:
                ok, na = _gi(Qinv_loss, P, norms, sgn[c], 0.0, beta_u, beta[c], act[c], uu[c], nact[c])
                nact[c] = na
                solves += 1
                if ok != 0:
                    # certified: the child's minimum is at least the parent's
                    status = 2
                    Ub = _bound(P, hn, cplus, cminus, sgn[c], Cfix[c], beta[v_id], mval[v_id], n, alpha,
                                L_hat, L_max, False, tmp_d, tmp_diff)
                    if Ub > unsolved:
                        unsolved = Ub
                    free[nfree] = c
                    nfree += 1
                    continue
                dd = beta[c] - beta_u
                mval[c] = L_u + np.dot(dd, H @ dd)
                v = _value_at(P, norms, cplus, cminus, C_forced, beta[c], mval[c], n, alpha, L_hat, 1e-9)
                if v > best:
                    best = v
            Ub = _bound(P, hn, cplus, cminus, sgn[c], Cfix[c], beta[c], mval[c], n, alpha, L_hat, L_max,
                        use_flip, tmp_d, tmp_diff)
            if Ub <= best + _TOL:
                pruned += 1
                free[nfree] = c
                nfree += 1
                continue
            hsize = _heap_push(hk, hid, hsize, Ub, c)
        free[nfree] = v_id
        nfree += 1
    upper = best
    if status == 1 and hsize > 0 and hk[0] > upper:
        upper = hk[0]
    if unsolved > upper:
        upper = unsolved
    elif status == 2:
        status = 0
    return upper, best, status, nodes, solves, pruned, real_solves


def compiled_search(problem, quad, *, best0=0.0, max_nodes=None, time_limit=None, flip_cost=True,
                    branching="dearest"):
    """Run the compiled search on a ReplicateProblem with a positive definite quadratic form.

    Returns (value, lower, status, nodes, solves, pruned, realisability_solves).
    """
    H = np.ascontiguousarray(quad.H)
    P = np.ascontiguousarray(problem.design[problem.rows], dtype=np.float64)
    if P.shape[0] == 0:
        P = np.zeros((0, H.shape[0]))
    out = _search(P, np.ascontiguousarray(problem.cost_plus, dtype=np.float64),
                  np.ascontiguousarray(problem.cost_minus, dtype=np.float64), H, np.linalg.inv(H),
                  np.ascontiguousarray(problem.beta_u, dtype=np.float64), float(problem.L_u), float(problem.L_hat),
                  float(problem.alpha_n), float(problem.C_forced), float(problem.n), float(best0),
                  int(max_nodes or 0), float(time_limit or 0.0), bool(flip_cost), BRANCHING[branching])
    value, lower, status, nodes, solves, pruned, real = out
    return float(value), float(lower), STATUS[status], int(nodes), int(solves), int(pruned), int(real)
