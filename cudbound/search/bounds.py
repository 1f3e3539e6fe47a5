"""The objective of the replicate supremum and the node bounds of the search (Laber & Murphy 2008, sec. 4).

- :func:`_objective`: |C| / n * g(alpha_n (L_hat - m)), g(x) = min(1, 1 + x), at a node's minimum m;
- :func:`_value_at`: the objective attained by a classifier whose signs on the free points are clear;
- :func:`_bound`: a node's upper bound, optionally tightened by the per-point flip cost: at a
  node with minimiser b_m, every b in the node's cone has L(b) >= m + (b - b_m)'H(b - b_m)
  (first-order optimality of b_m), so giving point k the other sign costs at least
  delta_k = (phi_k'b_m)^2 / (phi_k'H^-1 phi_k) (refined with the gradient in
  :func:`_flip_cost`); a completion that flips a set F of points has loss >= m + max_F
  delta_k. The bound is the largest |C|/n g(alpha_n(L_hat - m - delta)) over the prefixes
  of the points sorted by delta. The logistic and exponential losses get the same bound
  from their self-concordance (:func:`_flip_d` with r > 0). Both kinds tighten delta_k with
  the rows the node's minimiser holds at 0, which every b of the cone keeps on their side
  (:func:`_within_cone`).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..optim.linear_solve import cholesky, cholesky_solve, row_dot

__all__: list[str] = []


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
    clear, C = _count_at(P, rnorms, cplus, cminus, C_forced, x, margin)
    return _objective(C, m, n, alpha, L_hat) if clear else 0.0


@njit(cache=True)
def _count_at(P, rnorms, cplus, cminus, C_forced, x, margin):
    """(clear, C): whether classifier x's signs on the free points are all clear
    (|phi_k'x| > margin |phi_k| |x|), and then the count C of the pattern it realises."""
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
            return False, 0.0
        C += cplus[k] if t >= 0.0 else cminus[k]
    return True, C


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
    plus any quadratic penalty; H the full Hessian of L at b_m, hnk = phi'H^-1 phi and r from
    ``smooth_node_solver._factor_r``): along d = b - b_m, with q = (d'Hd)^(1/2), F(s) = L(b_m + s d)
    has F(1) - F(0) - F'(0) >= q^2 psi(r q), psi(u) = (e^-u + u - 1) / u^2 (Bach 2010,
    "Self-concordant analysis for logistic regression", Prop. 1, with r the largest
    (phi_i'H^-1 phi_i)^(1/2); ``_factor_r`` proves it for a mean of them), F'(0) >= 0 on the
    node's cone, and a flip needs q >= |t| / hnk^(1/2); q^2 psi(r q) grows with q."""
    if r <= 0.0:
        return t * t / hnk
    q = abs(t) / math.sqrt(hnk)
    u = r * q
    if u < 1e-3:
        return q * q * (0.5 - u / 6.0)  # the series of psi alternates: this is below it
    return (math.expm1(-u) + u) / (r * r) * (1.0 - 1e-12)


@njit(cache=True)
def _order_into(keys, n, out):
    """``out[:n]`` = 0..n-1 sorted by (``keys[i]``, i): the stable order of ``keys[:n]``. (The flip-cost
    bounds do not depend on the order of equal keys: every bound walks the sorted flip costs and takes
    its largest value, or its test, at the end of a run of equal costs; a stable order makes the walk
    also the same on every machine.) A few keys are sorted by insertion in place (written out:
    a helper that takes the arrays would take and drop a reference to them at every comparison), more by
    ``np.argsort``'s merge sort. The keys must not be NaN."""
    if n > 16:
        out[:n] = np.argsort(keys[:n], kind="mergesort")
        return
    for i in range(n):
        k = keys[i]
        q = i
        while q > 0 and keys[out[q - 1]] > k:
            out[q] = out[q - 1]
            q -= 1
        out[q] = i


@njit(cache=True, inline="always")
def _free_point(t, cp, cm):
    """A free point with score t = phi_k'beta at a classifier beta and counts cp, cm (``cplus[k]``,
    ``cminus[k]``): (the count it adds with beta's sign (sign(0) = +1), the change of that count when
    it takes the other sign). Scalars only: a helper inlined into a loop that takes arrays takes and
    drops a reference to each of them at every pass (``docs/engine.md``, "Reference counts")."""
    if t >= 0.0:
        return cp, cm - cp
    return cm, cp - cm


@njit(cache=True, inline="always")
def _point_flip(t, tuk, hnk, quad, m, L_u, sc_r):
    """A free point's flip cost at a node's minimiser (t = phi_k'b_m, minimum m, hnk = ``hn[k]``):
    :func:`_flip_cost` with the gradient when ``quad`` (a positive definite quadratic loss, whose
    ``tu`` is given: tuk = ``tu[k]``), else :func:`_flip_d`. Scalars only, as :func:`_free_point`."""
    if quad:
        return _flip_cost(t, tuk, hnk, 4.0 * (m - L_u))
    return _flip_d(t, hnk, sc_r)


@njit(cache=True)
def _cone_setup(P, W, signs, act, nact, M, Lm):
    """The active rows' Gram matrix M = A H^-1 A' (A: the rows s_j phi_j' held at 0 by the node's
    minimiser; ``W`` = P H^-1) into ``M`` and its Cholesky factor into ``Lm``. Returns their order
    (0 when there are none, or M is numerically singular: the cone flip cost is then not used)."""
    p = P.shape[1]
    k = nact if W.shape[0] > 0 else 0
    for a in range(k):
        ia = act[a]
        sa = 1.0 if signs[ia] > 0 else -1.0
        for b in range(a + 1):
            ib = act[b]
            sb = 1.0 if signs[ib] > 0 else -1.0
            s = 0.0
            for i in range(p):
                s += W[ia, i] * P[ib, i]
            M[a, b] = sa * sb * s
            M[b, a] = M[a, b]
    big = 0.0
    for a in range(k):
        big = max(big, M[a, a])
    return k if k > 0 and cholesky(M, Lm, k, 1e-10 * big) else 0


@njit(cache=True, inline="always")
def _cone_hn(P, W, signs, act, k_act, M, Lm, kpt, t, hnk, v, nu):
    """The metric term of a free point's flip cost within the node's cone: h <= hnk such that every
    move d that gives point ``kpt`` the other sign while keeping the node's active rows has
    d'Hd >= t^2 / h (hnk = phi'H^-1 phi gives the plain bound; ``W``'s active rows are H^-1 phi_a).

    min d'Hd s.t. f'd >= r, A d >= 0 (f = -sign(t) phi, r = |t|, t = phi'b_m; every b of the node's
    cone has A(b - b_m) >= 0 since A b_m = 0). Weak duality with multipliers mu >= 0, mu nu >= 0:
    mu r - mu^2 |f + A'nu|^2_{H^-1} / 4, at best r^2 / |f + A'nu|^2_{H^-1} for any nu >= 0; nu is the
    projection's -M^-1 A H^-1 f clipped at 0 (nu = 0 gives hnk itself, returned when it is smaller).
    Rounding is covered by a slack of 1e-10 of the terms' scale. The bound holds in exact arithmetic
    for the cone's closure; a node solver meets its active rows to its own tolerance (``node_qp._FEAS``;
    the SQP's ``smooth_node_solver.ACTIVE_TOL``), so with nearly parallel rows it can exceed the
    increase the solver reports for the flip child by about that tolerance (measured for the QP: up to
    1e-7 relative), far below the prune tolerance's effect on counts."""
    p = P.shape[1]
    sf = -1.0 if t >= 0.0 else 1.0
    for a in range(k_act):
        ia = act[a]
        s = 0.0
        for i in range(p):
            s += W[ia, i] * P[kpt, i]
        v[a] = (sf if signs[ia] > 0 else -sf) * s
    cholesky_solve(Lm, v, nu, k_act)   # M nu = -v: nu = -M^-1 v (negation is exact: the same numbers)
    for a in range(k_act):
        nu[a] = -nu[a]
    scale = math.sqrt(hnk)
    res = hnk
    for a in range(k_act):
        if nu[a] < 0.0:
            nu[a] = 0.0
        scale += nu[a] * math.sqrt(M[a, a])
        res += 2.0 * nu[a] * v[a]
    for a in range(k_act):
        for b in range(k_act):
            res += nu[a] * M[a, b] * nu[b]
    res = max(res, 0.0) + 1e-10 * scale * scale
    return res if res < hnk else hnk


@njit(cache=True, inline="always")
def _cone_flip(P, W, signs, act, k_act, M, Lm, kpt, t, hnk, v, nu):
    """A lower bound on the loss increase of a quadratic loss (H half its Hessian) that gives free point
    ``kpt`` the other sign while keeping the node's active rows: t^2 / h, h :func:`_cone_hn`'s metric term
    (a self-concordant loss's form is :func:`_within_cone`'s)."""
    h = _cone_hn(P, W, signs, act, k_act, M, Lm, kpt, t, hnk, v, nu)
    out = t * t / hnk
    if h < hnk:
        out = t * t / h * (1.0 - 1e-12)
    return out


@njit(cache=True, inline="always")
def _within_cone(P, W, signs, act, k_act, M, Lm, v, nu, k, t, dk, hnk, quad, sc_r):
    """Free point k's flip cost dk (from :func:`_point_flip`) tightened within the node's cone (``k_act`` > 0
    active rows set up by :func:`_cone_setup`): :func:`_cone_flip` for a quadratic loss; for a self-concordant
    one (sc_r > 0, H its Hessian at b_m) :func:`_flip_d` with :func:`_cone_hn`'s metric term h in place of hnk,
    only where h is below hnk (the q of ``_flip_d`` may be any lower bound on (d'Hd)^(1/2) over the flipping
    moves of the cone, and q^2 psi(r q) grows with q)."""
    if quad:
        return max(dk, _cone_flip(P, W, signs, act, k_act, M, Lm, k, t, hnk, v, nu))
    h = _cone_hn(P, W, signs, act, k_act, M, Lm, k, t, hnk, v, nu)
    if h < hnk:
        return max(dk, _flip_d(t, h, sc_r))
    return dk


@njit(cache=True)
def _bound(P, hn, cplus, cminus, signs, Cfix, beta, m, n, alpha, L_hat, L_max, use_flip, tmp_d, tmp_diff,
           floor, tu, L_u, sc_r, W, act, nact, cone, cone_l, cone_v, cone_nu, tmp_k, pick, cut, order, chain,
           chain_pick):
    """Upper bound of a node: plain (all unfixed points free at g(m)) or flip-cost.

    Every argument is given (no defaults): an omitted array or NaN default would key numba's cache
    by its object, and the kernel would be compiled again in every process.

    ``beta`` minimises the loss (value ``m``) over a cone containing the node's, and
    every completion is known to cost at least ``m + floor`` (a child not yet solved:
    its parent's minimiser and the flip cost of its new point). With ``tu`` (phi_k'b_u for
    every point) and ``L_u``, the flip costs use the gradient too (:func:`_flip_cost`); with
    sc_r > 0 (:func:`_flip_d`'s r), ``hn`` belongs to the Hessian at ``beta`` of a self-concordant loss.
    With ``pick`` (one slot) and ``tmp_k`` (scratch of mf), ``pick[0]`` becomes the point the node
    should branch on (:func:`_critical_point`) when its bound is above ``cut`` (a node at or below
    the prune level is never expanded); else -1, as for the plain bound. An array of size 0 (``tu``, ``W``
    with ``nact`` 0, ``tmp_k`` and ``pick``) leaves its part out. ``order``: scratch of mf for the order of
    the flip costs (:func:`_order_into`). With a pick, ``chain`` and ``chain_pick`` (K slots each; size 0:
    none) receive the bounds and picks of the node's next K descendants that keep its minimiser
    (:func:`_chain`; NaN and -1 where not known).
    """
    mf = P.shape[0]
    want = pick.shape[0] > 0
    if want:
        pick[0] = -1
    for i in range(chain.shape[0]):
        chain[i] = np.nan
        chain_pick[i] = -1
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
    k_act = _cone_setup(P, W, signs, act, nact, cone, cone_l) if nact > 0 else 0
    quad = tu.shape[0] > 0
    # A flip whose completion costs at most L_hat is counted where g = 1: the bound's value there is
    # largest with all of them counted, at no sort. Only the costlier flips (where g falls) are sorted.
    nflat = 0
    for k in range(mf):
        if signs[k] != 0:
            continue
        t = row_dot(P, k, beta)
        cost, diff = _free_point(t, cplus[k], cminus[k])
        C0 += cost
        if diff == 0.0:
            continue
        dk = _point_flip(t, tu[k] if quad else 0.0, hn[k], quad, m, L_u, sc_r)
        if k_act > 0 and m + max(dk, floor) < L_max:
            dk = _within_cone(P, W, signs, act, k_act, cone, cone_l, cone_v, cone_nu, k, t, dk, hn[k], quad, sc_r)
        mm = m + max(dk, floor)
        if mm >= L_max:  # only points that can flip, and matter, are counted
            continue
        if mm <= L_hat:
            nflat += 1
            q = mf - nflat   # kept at the end of the scratch
        else:
            q = r
            r += 1
        tmp_diff[q] = diff
        tmp_d[q] = dk
        if want:
            tmp_k[q] = k
    if r + nflat == 0:
        return abs(C0) / n * g0
    _order_into(tmp_d, r, order)
    best, level = _levels(tmp_d, tmp_diff, order, r, mf - nflat, nflat, C0, m, floor, n, alpha, L_hat, g0)
    if want and level > -np.inf and best > cut:
        for i in range(nflat):   # the flat flips next to the sorted ones (a forward copy: r <= mf - nflat)
            tmp_d[r + i] = tmp_d[mf - nflat + i]
            tmp_diff[r + i] = tmp_diff[mf - nflat + i]
            tmp_k[r + i] = tmp_k[mf - nflat + i]
        pick[0] = _critical_point(tmp_d, tmp_diff, tmp_k, r + nflat, m, floor, level, C0)
        if pick[0] >= 0 and chain.shape[0] > 0:
            _chain(tmp_d, tmp_diff, tmp_k, order, r, nflat, C0, m, floor, n, alpha, L_hat, g0, cut, pick[0], chain,
                   chain_pick)
    return best


@njit(cache=True)
def _levels(tmp_d, tmp_diff, order, r, flat0, nflat, C0, m, floor, n, alpha, L_hat, g0):
    """The flip-cost bound's largest value over its levels, and the level where it is reached (-inf: at the
    node's own minimum, where nothing is flipped): the ``nflat`` flips at ``flat0`` cost at most L_hat and
    count together (g = 1: the value there is largest with all of them counted, and it last rose at the
    dearest flip of the side that reached the largest |C| first); the ``r`` costlier ones are walked in
    ``order`` (increasing cost), each prefix at g of its dearest flip. A flip whose count change is 0
    (:func:`_chain` took it out) counts nowhere. The counts are whole numbers, so the sums are exact in
    any order."""
    best = abs(C0) / n * g0
    hf = 0.0
    lf = 0.0
    top_up = -np.inf   # the dearest counted flip that raises C, and that lowers it (for the level)
    top_down = -np.inf
    counted = 0
    for i in range(flat0, flat0 + nflat):
        d = tmp_diff[i]
        if d == 0.0:
            continue
        mm = m + max(tmp_d[i], floor)
        if d > 0:
            hf += d
            top_up = max(top_up, mm)
        else:
            lf += d
            top_down = max(top_down, mm)
        counted += 1
    hi = C0 + hf
    lo = C0 + lf
    level = -np.inf
    if counted > 0:
        v = max(abs(hi), abs(lo)) / n   # g = 1
        if v > best:
            best = v
            if hi > -lo:
                level = top_up
            elif -lo > hi:
                level = top_down
            else:
                level = min(top_up, top_down)
    for idx in range(r):   # the costlier flips in increasing cost, g falling
        j = order[idx]
        if tmp_diff[j] > 0:
            hi += tmp_diff[j]
        elif tmp_diff[j] < 0:
            lo += tmp_diff[j]
        else:
            continue
        mm = m + max(tmp_d[j], floor)
        v = max(abs(hi), abs(lo)) / n * _gval(mm, alpha, L_hat)
        if v > best:
            best = v
            level = mm
    return best, level


@njit(cache=True)
def _chain(tmp_d, tmp_diff, tmp_k, order, r, nflat, C0, m, floor, n, alpha, L_hat, g0, cut, k, chain, chain_pick):
    """The bounds and picks of a node's next descendants that keep its minimiser, from its own flip costs.

    The node branches on its pick k (:func:`_critical_point`). The child that fixes k on the side k has at
    the node's minimiser keeps that minimiser, its minimum and its active rows (``core._make_child``), so
    its flip costs are the node's without k's, and so is its bound: the same C0 (k's count moves from the
    free points to the fixed ones), the same levels without k. That child branches on its own pick, whose
    child on its side keeps the minimiser again, and so on: ``chain[i]`` and ``chain_pick[i]`` are the bound
    and pick of the descendant i + 1 steps down that line (what :func:`_bound` gives there, exactly: the same
    numbers, walked in the same order; a pick only where the bound is above ``cut``, as there), and the line
    stops at a descendant with no pick. The flips taken out get a count change of 0 (``tmp_diff``)."""
    nk = r + nflat
    for step in range(chain.shape[0]):
        for i in range(nk):
            if tmp_k[i] == k and tmp_diff[i] != 0.0:
                tmp_diff[i] = 0.0
                break
        best, level = _levels(tmp_d, tmp_diff, order, r, r, nflat, C0, m, floor, n, alpha, L_hat, g0)
        chain[step] = best
        k = -1
        if level > -np.inf and best > cut:
            k = _critical_point(tmp_d, tmp_diff, tmp_k, nk, m, floor, level, C0)
        chain_pick[step] = k
        if k < 0:
            return


@njit(cache=True)
def _critical_point(tmp_d, tmp_diff, tmp_k, r, m, floor, level, C0):
    """The point a node branches on under ``branching="critical"``: of the flips its flip-cost bound
    counts where it is largest (every free point k whose flip cost gives m + max(delta_k, floor) <=
    ``level``, the bound's maximising level, and whose flip moves C the way |C| grows there: up when
    |C| is largest with the upward flips, else down), the one with the largest delta_k |change of C|
    (ties: the larger |change|, then the smaller index). Its flip child's minimum must rise by delta_k,
    and without it the other child's bound at that level loses its count; a point outside that set
    (``dearest`` may pick one) leaves one child's bound as its parent's. -1 if the set is empty.
    ``tmp_d``, ``tmp_diff``, ``tmp_k``: the flip costs, count changes and points of :func:`_bound`'s
    sort, in any order (the pick does not depend on it)."""
    hi = C0
    lo = C0
    for i in range(r):
        if m + max(tmp_d[i], floor) <= level:
            if tmp_diff[i] > 0:
                hi += tmp_diff[i]
            else:
                lo += tmp_diff[i]
    side = 1.0 if abs(hi) >= abs(lo) else -1.0
    best_k = -1
    best_key = -np.inf
    best_w = -1.0
    for i in range(r):
        if m + max(tmp_d[i], floor) <= level and tmp_diff[i] * side > 0.0:
            w = abs(tmp_diff[i])
            key = tmp_d[i] * w
            k = tmp_k[i]
            if best_k < 0 or key > best_key or (key == best_key and (w > best_w or (w == best_w and k < best_k))):
                best_k = k
                best_key = key
                best_w = w
    return best_k

