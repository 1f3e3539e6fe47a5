"""The node QP and the feasibility QP of the search, by the dual active-set method of Goldfarb & Idnani (1983).

- the node QP  min (b - b_u)'H(b - b_u)  s.t.  s_k phi_k'b >= 0  (a positive definite quadratic
  loss), warm-started from the parent's active set (:func:`_gi_ws`);
- realisability of a node's open region by the same method on the feasibility QP
  min ||b||^2  s.t.  phi_k'b >= 0 (s_k = +1), phi_k'b <= -1 (s_k = -1), whose infeasibility the
  dual method detects exactly (cones scale, method.md); :func:`_meets` asks whether a witness
  still meets a new row.

Allocation-free: the scratch arrays are a :func:`_workspace` made once per search.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..optim.linear_solve import solve_in_place, times_cols
from .codes import QP_FAILED, QP_INFEASIBLE, QP_OPTIMAL

__all__: list[str] = []

_TOL = 1e-12  # a row violated by less than this (relative to |x|, row norm 1) is met
_FEAS = 1e-9  # a violation this small (relative to |x|, row norm 1) is round-off
_PIVOT = 1e-13  # N'Qinv N is singular when an LU pivot is at most this times its largest entry


@njit(cache=True)
def _workspace(p):
    """Scratch arrays of :func:`_gi_ws` for a problem with p unknowns (allocated once per search)."""
    return (np.empty(p), np.empty(p), np.empty((p, p)), np.empty((p, p)), np.empty((p, p)), np.empty(p),
            np.empty(p), np.empty(p), np.empty(p), np.empty(p), np.empty(p, dtype=np.int64), np.empty((p, p)))


@njit(cache=True)
def _gi(Qinv, P, norms, signs, rhs_neg, x0, x, act, u, nact):
    """:func:`_gi_ws` with a fresh workspace (for callers outside the compiled search)."""
    return _gi_ws(Qinv, P, norms, signs, rhs_neg, x0, x, act, u, nact, _workspace(x.shape[0]))


@njit(cache=True)
def _gi_ws(Qinv, P, norms, signs, rhs_neg, x0, x, act, u, nact, ws):
    """Goldfarb-Idnani on  s_k P_k x >= h_k  (h_k = rhs_neg when s_k = -1, else 0).

    x0 is the unconstrained minimiser; (x, act[:nact], u[:nact]) is a dual-feasible
    start and is updated in place. Each outer step adds the most violated row q
    (:func:`_most_violated`); the inner steps move along the primal and dual directions of q
    (:func:`_directions`), dropping an active row whose multiplier reaches 0, until q is met.
    After each row is added, x is recomputed as the exact minimiser on the active set
    (:func:`_active_minimiser`), so round-off does not build up along the pivots. The active
    normals N, Qinv N and N'Qinv N are built at the first step and then kept in step with the active set
    (a column added or dropped: :func:`_add_row`, :func:`_drop_row`), each entry the same sum in the
    same order as building them again, so the answer is the same to the last bit, for O(p nact) work
    a change instead of O(p^2 nact). ``ws`` is a :func:`_workspace`: the routine allocates nothing.
    Returns (status, nact): QP_OPTIMAL, QP_INFEASIBLE or QP_FAILED (numerical failure).
    """
    nq, Qn, N, QN, M, r, z, rhs, hA, tmp, perm, Mk = ws
    p = x.shape[0]
    m = P.shape[0]
    maxit = 20 * (m + p) + 50
    built = False  # N, QN and Mk are built at the first step (a start already optimal needs none)
    for _ in range(maxit):
        xs = 1.0
        for i in range(p):
            if abs(x[i]) > xs:
                xs = abs(x[i])
        q = _most_violated(P, norms, signs, rhs_neg, x, xs)
        if q < 0:
            if rhs_neg > 0.0 and xs > 1.0 / _FEAS and not _meets_rhs(P, signs, rhs_neg, x):
                return QP_FAILED, nact
            return QP_OPTIMAL, nact
        sq = signs[q]
        for i in range(p):
            nq[i] = sq * P[q, i]
        hq = rhs_neg if sq < 0 else 0.0
        u_plus = 0.0
        added = False
        for _inner in range(maxit):
            if not built:
                _build_rows(Qinv, P, signs, act, nact, N, QN, Mk, p)
                built = True
            if not _directions(Qinv, nact, nq, Qn, N, QN, M, Mk, rhs, r, z, perm):
                return QP_FAILED, nact  # dependent active rows (exactly, in floating point)
            t1 = np.inf  # the dual step length: the first active multiplier to reach 0
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
                # no primal step: n_q depends on the active normals
                if drop < 0:
                    # no dual step left: the system is infeasible, unless q is violated only by
                    # round-off (q is the most violated row, so x then meets every constraint to
                    # that tolerance)
                    sl = 0.0
                    for i in range(p):
                        sl += nq[i] * x[i]
                    if (hq - sl) / norms[q] <= _FEAS * xs:
                        return QP_OPTIMAL, nact
                    return QP_INFEASIBLE, nact
                for a in range(nact):
                    u[a] -= t1 * r[a]
                u_plus += t1
                _drop_row(N, QN, Mk, drop, nact, p)
                nact = _drop(act, u, drop, nact)
                continue
            sl = 0.0
            for i in range(p):
                sl += nq[i] * x[i]
            t2 = -(sl - hq) / zn  # the primal step length: q met
            t = t2 if t2 <= t1 else t1
            for i in range(p):
                x[i] += t * z[i]
            for a in range(nact):
                u[a] -= t * r[a]
            u_plus += t
            if t2 <= t1:
                if nact >= p:
                    return QP_FAILED, nact
                act[nact] = q
                u[nact] = u_plus
                _add_row(nq, Qn, N, QN, Mk, nact, p)
                nact += 1
                if not _active_minimiser(signs, rhs_neg, x0, x, act, nact, N, QN, M, Mk, rhs, hA, tmp, perm):
                    return QP_FAILED, nact
                added = True
                break
            _drop_row(N, QN, Mk, drop, nact, p)
            nact = _drop(act, u, drop, nact)
        if not added:
            return QP_FAILED, nact
    return QP_FAILED, nact


@njit(cache=True, inline="always")
def _most_violated(P, norms, signs, rhs_neg, x, xs):
    """The row most violated at x, relative to its norm, beyond _TOL * xs; -1 if none."""
    p = x.shape[0]
    q = -1
    worst = -_TOL * xs
    for k in range(P.shape[0]):
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
    return q


@njit(cache=True, inline="always")
def _meets_rhs(P, signs, rhs_neg, x):
    """At a large x the relative tolerance of :func:`_most_violated` is loose against the
    right-hand side itself: does every row with h_k = rhs_neg meet x to _FEAS * rhs_neg?"""
    for k in range(P.shape[0]):
        if signs[k] < 0:
            v = 0.0
            for i in range(x.shape[0]):
                v += P[k, i] * x[i]
            if -v - rhs_neg < -_FEAS * rhs_neg:
                return False
    return True


@njit(cache=True, inline="always")
def _build_rows(Qinv, P, signs, act, nact, N, QN, Mk, p):
    """The active normals N (p x nact, columns s_k phi_k), QN = Qinv N and Mk = N'Qinv N, built whole."""
    for a in range(nact):
        k = act[a]
        sk = signs[k]
        for i in range(p):
            N[i, a] = sk * P[k, i]
    _normal_matrix(Qinv, N, QN, Mk, p, nact)


@njit(cache=True, inline="always")
def _add_row(nq, Qn, N, QN, Mk, nact, p):
    """Active row n_q joins as column ``nact`` (Qn = Qinv n_q): N, QN and Mk's new row and column, each
    entry the sum :func:`_normal_matrix` forms."""
    for i in range(p):
        N[i, nact] = nq[i]
        QN[i, nact] = Qn[i]
    for a in range(nact + 1):
        v = 0.0
        w = 0.0
        for i in range(p):
            v += N[i, a] * QN[i, nact]
            w += N[i, nact] * QN[i, a]
        Mk[a, nact] = v
        Mk[nact, a] = w


@njit(cache=True, inline="always")
def _drop_row(N, QN, Mk, a0, nact, p):
    """Active row a0 of nact leaves: its column of N and QN, its row and column of Mk."""
    for a in range(a0, nact - 1):
        for i in range(p):
            N[i, a] = N[i, a + 1]
            QN[i, a] = QN[i, a + 1]
    for a in range(nact):
        for b in range(a0, nact - 1):
            Mk[a, b] = Mk[a, b + 1]
    for a in range(a0, nact - 1):
        for b in range(nact - 1):
            Mk[a, b] = Mk[a + 1, b]


@njit(cache=True, inline="always")
def _directions(Qinv, nact, nq, Qn, N, QN, M, Mk, rhs, r, z, perm):
    """The step directions of adding row n_q: the dual r = (N'Qinv N)^-1 N'Qinv n_q and the
    primal z = Qinv n_q - Qinv N r (N the active normals, p x nact, with QN and Mk = N'Qinv N kept by
    :func:`_gi_ws`). False when N'Qinv N is singular in all but round-off."""
    p = nq.shape[0]
    for i in range(p):
        v = 0.0
        for j in range(p):
            v += Qinv[i, j] * nq[j]
        Qn[i] = v
    if nact == 0:
        for i in range(p):
            z[i] = Qn[i]
        return True
    for a in range(nact):
        for b in range(nact):
            M[a, b] = Mk[a, b]
    for a in range(nact):
        v = 0.0
        for i in range(p):
            v += N[i, a] * Qn[i]
        rhs[a] = v
    if not solve_in_place(M, rhs, r, nact, perm, _PIVOT):
        return False
    _add_columns(Qn, QN, r, -1.0, nact, z)
    return True


@njit(cache=True, inline="always")
def _active_minimiser(signs, rhs_neg, x0, x, act, nact, N, QN, M, Mk, rhs, hA, tmp, perm):
    """x = the exact minimiser with the active rows at equality: the vertex they fix when
    there are p of them, else x0 + Qinv N (N'Qinv N)^-1 (h_A - N'x0) (N, QN, Mk kept by
    :func:`_gi_ws`). False when singular."""
    p = x.shape[0]
    for a in range(nact):
        hA[a] = rhs_neg if signs[act[a]] < 0 else 0.0
    if nact == p:  # a vertex: x is fixed by the active rows alone
        for a in range(nact):
            for i in range(p):
                M[a, i] = N[i, a]
        if not solve_in_place(M, hA, tmp, nact, perm, _PIVOT):
            return False
        for i in range(p):
            x[i] = tmp[i]
        return True
    for a in range(nact):
        for b in range(nact):
            M[a, b] = Mk[a, b]
    for a in range(nact):
        v = hA[a]
        for i in range(p):
            v -= N[i, a] * x0[i]
        rhs[a] = v
    if not solve_in_place(M, rhs, tmp, nact, perm, _PIVOT):
        return False
    _add_columns(x0, QN, tmp, 1.0, nact, x)
    return True


@njit(cache=True, inline="always")
def _normal_matrix(Qinv, N, QN, M, p, nact):
    """QN = Qinv N and M = N'Qinv N for the nact active normals (the columns of N)."""
    times_cols(Qinv, N, QN, p, nact, p)
    times_cols(N.T, QN, M, nact, nact, p)


@njit(cache=True, inline="always")
def _add_columns(base, QN, coef, sign, nact, out):
    """out = base + sign QN[:, :nact] coef[:nact] (sign +-1), summed column by column."""
    for i in range(out.shape[0]):
        v = base[i]
        for a in range(nact):
            v += sign * QN[i, a] * coef[a]
        out[i] = v


@njit(cache=True, inline="always")
def _drop(act, u, a0, nact):
    """Remove active row a0 (and its multiplier); the new size."""
    for a in range(a0, nact - 1):
        act[a] = act[a + 1]
        u[a] = u[a + 1]
    return nact - 1


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

