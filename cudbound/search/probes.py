"""A value attained before the search: classifiers probed on the neighbourhood's boundary.

The search prunes a node once its bound is at most the best value attained, and the quantile
refinement (:mod:`cudbound.quantile`) prunes below the k-th smallest attained value; best-first
order finds high values late, so at a few hundred points most of the work went to nodes that a
good value from the start prunes (issue 44). For a positive definite quadratic loss
L(b) = L_u + (b - b_u)'H(b - b_u) the classifiers at loss level L_u + R^2 are
b = b_u + R d with d'Hd = 1. :func:`_probe` (compiled, run by the compiled replicate) tries, at
R^2 = L_hat - L_u (g = 1) and at R^2 = L_hat - L_u + 1 / (2 alpha_n) (g = 1/2):

- for each free point k, the direction that gives it the other sign fastest,
  d_k = -sign(phi_k'b_u) H^-1 phi_k / (phi_k'H^-1 phi_k)^(1/2);
- then, twice, the normalised sums of pairs of the best ``n_top`` directions so far.

Each probe's value is :func:`~cudbound.search.bounds._value_at` at its loss computed as the node
solver computes a minimum's (counted only when its signs on the free points are clear), so the
best of them is a value some classifier attains: a valid starting value of the search. It changes
which nodes the search visits (and so a budget-stopped search's ``lower`` and certified bound),
never the exact Q^(b). Nothing here is random.

:func:`probe_classifier` does the same for every other loss (a replicate set up in Python), with the
loss's Hessian at b_u as the metric and each direction tried at several radii, since the level
sets are no longer ellipsoids.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..design import PenalisedLoss, is_margin_loss, penalty_factor
from ..losses import RidgeLoss
from ..optim.smooth_parts import StackedParts
from .bounds import _value_at
from .node_solve import _quad_form

__all__: list[str] = []

N_TOP = 10
"""How many of the best directions are combined in pairs."""


@njit(cache=True)
def _keep_top(top_v, top_d, v, d):
    """Insert direction d (value v) into the best-first list (top_v, top_d) if it beats its last."""
    m = top_v.shape[0]
    if not v > top_v[m - 1]:
        return
    i = m - 1
    while i > 0 and top_v[i - 1] < v:
        top_v[i] = top_v[i - 1]
        top_d[i] = top_d[i - 1]
        i -= 1
    top_v[i] = v
    top_d[i] = d


@njit(cache=True)
def _probe(P, norms, cplus, cminus, C_forced, H, Hinv, beta_u, L_u, L_hat, n, alpha, margin, n_top=N_TOP):
    """The largest value attained by the probed classifiers (module docstring); 0 when there is
    nothing to probe (no free point, or alpha_n = 0). A level whose radius is not positive is
    skipped (L_hat <= L_u leaves the g = 1/2 level only)."""
    mf, p = P.shape
    best = 0.0
    if mf == 0 or alpha <= 0.0:
        return best
    dirs = P @ Hinv   # row k: H^-1 phi_k, scaled below to d_k
    for k in range(mf):
        hn = np.dot(P[k], dirs[k])
        if not hn > 0.0:
            hn = 1e-300
        s = (-1.0 if np.dot(P[k], beta_u) >= 0.0 else 1.0) / math.sqrt(hn)
        for i in range(p):
            dirs[k, i] *= s
    zero = np.zeros(p)
    x = np.empty(p)
    d = np.empty(p)
    top_v = np.empty(n_top)
    top_d = np.empty((n_top, p))
    new_v = np.empty(n_top)
    new_d = np.empty((n_top, p))
    for level in range(2):
        # just inside g = 1 (the value is then |C| / n whatever the rounding of the loss), and g = 1/2
        R2 = (L_hat - L_u) * (1.0 - 1e-9) if level == 0 else L_hat - L_u + 0.5 / alpha
        if not R2 > 0.0:
            continue
        R = math.sqrt(R2)
        top_v[:] = -1.0
        for k in range(mf):
            for i in range(p):
                x[i] = beta_u[i] + R * dirs[k, i]
            v = _value_at(P, norms, cplus, cminus, C_forced, x, L_u + _quad_form(H, x, beta_u), n, alpha, L_hat,
                          margin)
            best = max(best, v)
            _keep_top(top_v, top_d, v, dirs[k])
        n_have = 0
        for a in range(n_top):
            if top_v[a] >= 0.0:
                n_have += 1
        for _round in range(2):
            new_v[:] = -1.0
            for a in range(n_have):
                for b in range(a + 1, n_have):
                    for i in range(p):
                        d[i] = top_d[a, i] + top_d[b, i]
                    q = _quad_form(H, d, zero)
                    if not q > 1e-24:
                        continue
                    sc = R / math.sqrt(q)
                    for i in range(p):
                        x[i] = beta_u[i] + sc * d[i]
                    v = _value_at(P, norms, cplus, cminus, C_forced, x, L_u + _quad_form(H, x, beta_u), n, alpha,
                                  L_hat, margin)
                    best = max(best, v)
                    for i in range(p):
                        d[i] /= math.sqrt(q)
                    _keep_top(new_v, new_d, v, d)
            n_have = 0
            for a in range(n_top):
                if new_v[a] >= 0.0:
                    top_v[n_have] = new_v[a]
                    top_d[n_have] = new_d[a]
                    n_have += 1
    return best


# ---------------------------------------------------------------------------------------------
# Any loss, in Python (the replicates set up in Python: every loss but a positive definite quadratic)

PROBE_RADII_SMOOTH = (0.5, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0)
"""Radii tried along each direction, as multiples of the quadratic model's radius (smooth losses)."""

PROBE_RADII_WIDE = tuple(2.0 ** (k / 2.0) for k in range(-10, 5))
"""The same for a loss without a Hessian (hinge forms, user losses without derivatives), whose
growth along a direction the metric does not predict: 2^(k/2), k = -10, ..., 4."""


def _metric(loss, design, y, w, beta_u):
    """(H, smooth): the loss's Hessian at beta_u when it has one (smooth = True), else the weighted
    Gram matrix (1/n) sum_i w_i phi_i phi_i' plus any ridge penalty's; a tiny multiple of the
    identity (1e-10 of the mean diagonal) keeps it invertible. Only directions are taken from it."""
    p = design.shape[1]
    H, smooth = None, False
    if loss.has_derivatives:
        try:
            H = np.asarray(loss.hessian(design, y, w, beta_u), dtype=float)
            smooth = bool(np.all(np.isfinite(H)))
        except (NotImplementedError, ArithmeticError, ValueError, np.linalg.LinAlgError):
            H = None
    if not smooth:
        H = design.T @ (design * (w / len(y))[:, None])
        if hasattr(loss, "penalty_matrix"):
            H = H + 2.0 * loss.penalty_matrix(design)
    scale = float(np.trace(H)) / p
    if not scale > 0.0 or not math.isfinite(scale):
        return None, False
    return H + 1e-10 * scale * np.eye(p), smooth


PROBE_FIRST_BATCH = 64
"""The candidates whose loss :func:`_lazy_round` computes first (then twice as many each time)."""

PROBE_CHUNK = 1 << 21
"""At most this many scores (points x classifiers) are formed at once by :func:`_batched_losses`."""


def _batched_losses(loss, design, y, w, betas):
    """L(D^(b), beta) for each row of ``betas``: for a margin loss and its ridge forms (in the user's
    coordinates, a :class:`~cudbound.losses.RidgeLoss`, or in orthonormal ones, a
    :class:`~cudbound.design.PenalisedLoss`) by :meth:`cudbound.optim.smooth_parts.StackedParts.value`
    in blocks of at most :data:`PROBE_CHUNK` scores (:meth:`Loss.value` up to rounding); a call of
    ``loss.value`` per row for any other loss."""
    base = loss.base if type(loss) in (RidgeLoss, PenalisedLoss) else loss
    if not is_margin_loss(base):
        return np.array([loss.value(design, y, w, b) for b in betas])
    M = None if base is loss else penalty_factor(loss, design)
    parts = StackedParts(design, y, np.broadcast_to(w, (len(betas), len(y))), M, base)
    step = max(1, PROBE_CHUNK // len(y))
    values = np.empty(len(betas))
    for a in range(0, len(betas), step):
        values[a:a + step] = parts.take(slice(a, a + step)).value(betas[a:a + step])
    return values


def _lazy_round(X, n_dirs, signs, values, best_v, top_k):
    """One round of :func:`probe_classifier`'s candidates, their losses computed only where needed.

    ``X`` holds ``n_dirs`` directions at each radius (row r n_dirs + j: radius r, direction j);
    ``signs(X)`` gives each row's upper bound u >= v (|C| / n, 0 where a sign is not clear, since
    v = |C| / n g with g <= 1; or tighter, as with a floor on the loss) and its |C| / n;
    ``values(rows, absC)`` the exact objective v. Returns (i, v_i,
    per_dir): i is argmax v (its first index) when v_i > ``best_v`` (else v_i <= best_v), and
    per_dir[j] = max over radii of v for every direction among the ``top_k`` best (stable order:
    larger value, then smaller index; a direction below them may have a smaller per_dir). The
    losses are computed in order of u (largest first, stable) until no row left can change either
    answer: the same answers as computing every row's v (``tests/search/test_probes.py``), for a
    fraction of the losses (a loss costs a pass over the points; u a pass over the free points).
    """
    ub, absC = signs(X)
    n_rows = len(X)
    v = np.where(ub > 0.0, -np.inf, 0.0)         # -inf: not computed; a row with u = 0 has v = 0
    order = np.argsort(-ub, kind="stable")
    order = order[ub[order] > 0.0]
    done, batch = 0, PROBE_FIRST_BATCH
    while True:
        if done < len(order):
            rows = order[done:done + batch]
            v[rows] = values(X[rows], absC[rows])
            done += len(rows)
            batch *= 2
        rest = ub[order[done]] if done < len(order) else -np.inf   # the largest u not computed
        best_known = float(v.max()) if n_rows else 0.0
        found = rest <= best_v or best_known > rest
        per_dir = None
        if top_k:
            # a direction whose max is at least the k-th's > rest has its max computed
            per_dir = v.reshape(-1, n_dirs).max(axis=0)
            if done < len(order):
                ranked = np.sort(per_dir)[::-1]
                kth = ranked[min(top_k, n_dirs) - 1]
                found = found and kth > rest
        if found or done >= len(order):
            i = int(np.argmax(v)) if n_rows else 0
            return i, (float(v[i]) if n_rows else 0.0), per_dir


def probe_classifier(problem, loss, design, y, counts, beta_u, L_u, *, n_top=N_TOP, margin=1e-9, losses=None,
                     floor=None):
    """The best probed classifier (beta, L(D^(b), beta)) of a replicate set up in Python, or None.

    As :func:`_probe` for the quadratic losses, with the loss's Hessian H at the root minimiser
    beta_u as the metric (the weighted Gram matrix for a loss without one): for each free point k
    the direction d_k = -sign(phi_k'beta_u) H^-1 phi_k / (phi_k'H^-1 phi_k)^(1/2), then twice the
    normalised sums of pairs of the best ``n_top``. A loss is not quadratic, so its level sets are
    not ellipsoids: each direction is tried at several radii (:data:`PROBE_RADII_SMOOTH` times the
    quadratic model's R = (2 (L_level - L_u))^(1/2) for L_level = L_hat (g = 1) and
    L_hat + 1 / (2 alpha_n) (g = 1/2); :data:`PROBE_RADII_WIDE` without a Hessian), and a
    candidate's value is computed from its exact loss wherever it can change the outcome
    (:func:`_lazy_round`: the outcome of computing every loss). The returned pair goes to the search's
    ``extra_lower`` (``bnb._value_at`` evaluates it again), so it is a value some classifier
    attains; like the quadratic probes it changes which nodes are visited, never the exact Q^(b).
    ``margin``: a sign is clear when |phi'beta| > margin |phi| |beta| (``Tolerances.margin``).
    ``losses``: L(D^(b), beta) for each row of an array of classifiers, the candidates' losses (default
    :func:`_batched_losses`; the engine gives a built-in smooth loss's compiled evaluation,
    ``SmoothNodeSolver.values_at``, the one its node solver computes a minimum with). ``floor``: a lower
    bound on L(D^(b), beta) for each row (``SmoothNodeSolver.loss_floor``; default none), which tightens
    each candidate's bound |C| / n to |C| / n min(1, 1 + alpha_n (L_hat - floor)) (clipped at 0), so
    that fewer losses are computed; the answers are the same.
    """
    P = design[problem.rows]
    mf, p = P.shape
    alpha = problem.alpha_n
    if mf == 0 or not alpha > 0.0 or beta_u is None or not math.isfinite(L_u):
        return None
    w = np.asarray(counts, dtype=float)
    beta_u = np.asarray(beta_u, dtype=float)
    H, smooth = _metric(loss, design, y, w, beta_u)
    if H is None:
        return None
    try:
        Q = np.linalg.solve(H, P.T).T   # row k: H^-1 phi_k
    except np.linalg.LinAlgError:
        return None
    hn = np.einsum("ij,ij->i", P, Q)
    sign = np.where(P @ beta_u >= 0.0, -1.0, 1.0)
    D = (sign / np.sqrt(np.maximum(hn, 1e-300)))[:, None] * Q
    rnorm = np.linalg.norm(P, axis=1)
    radii = PROBE_RADII_SMOOTH if smooth else PROBE_RADII_WIDE

    def signs(X):
        """(|C| / n where every free point's sign is clear, else 0, times g at ``floor`` when given; |C| / n)
        at each row of X: the largest value each can have, since g <= 1 (and g decreases in L)."""
        clear = np.empty(len(X), dtype=bool)
        C = np.empty(len(X))
        step = max(1, PROBE_CHUNK // mf)
        for a in range(0, len(X), step):
            Xa = X[a:a + step]
            T = P @ Xa.T
            clear[a:a + step] = np.all(np.abs(T) > margin * rnorm[:, None] * np.linalg.norm(Xa, axis=1)[None, :],
                                       axis=0)
            C[a:a + step] = problem.C_forced + np.where(T >= 0.0, problem.cost_plus[:, None],
                                                        problem.cost_minus[:, None]).sum(axis=0)
        absC = np.abs(C) / problem.n
        ub = np.where(clear, absC, 0.0)
        if floor is not None:   # v = |C| / n g(L) with g decreasing in L: at most g at L's lower bound
            with np.errstate(invalid="ignore"):
                g_up = np.clip(1.0 + alpha * (problem.L_hat - floor(X)), 0.0, 1.0)
            ub = ub * np.where(np.isnan(g_up), 1.0, g_up)
        return ub, absC

    def values(X, absC):
        """The objective at each row of X whose signs are clear (absC its |C| / n)."""
        L = _batched_losses(loss, design, y, w, X) if losses is None else losses(X)
        g = np.minimum(1.0, 1.0 + alpha * (problem.L_hat - L))
        return np.where(np.isfinite(L), absC * np.where(g > 0.0, g, 0.0), 0.0)

    best_v, best_x = 0.0, None
    for level in (problem.L_hat, problem.L_hat + 0.5 / alpha):
        if not level > L_u:
            continue
        R = math.sqrt(2.0 * (level - L_u))
        dirs = D
        for rnd in range(3):   # the single directions, then pairs of the best twice
            X = np.concatenate([beta_u[None, :] + f * R * dirs for f in radii])
            top_k = 0 if rnd == 2 else n_top
            i, v_i, per_dir = _lazy_round(X, len(dirs), signs, values, best_v, top_k)
            if v_i > best_v:
                best_v, best_x = v_i, X[i].copy()
            if rnd == 2 or not n_top:   # no directions to pair
                break
            top = dirs[np.argsort(-per_dir, kind="stable")[:n_top]]
            a, b = np.triu_indices(len(top), k=1)
            if len(a) == 0:
                break
            pairs = top[a] + top[b]
            q = np.einsum("ij,jk,ik->i", pairs, H, pairs)
            keep = q > 1e-24
            dirs = pairs[keep] / np.sqrt(q[keep])[:, None]
            if len(dirs) == 0:
                break
    if best_x is None:
        return None
    return best_x, float(loss.value(design, y, w, best_x))
