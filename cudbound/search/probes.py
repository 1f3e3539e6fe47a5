"""A value attained before the search: classifiers probed on the neighbourhood's boundary (quadratic losses).

The search prunes a node once its bound is at most the best value attained, and the quantile
refinement (:mod:`cudbound.quantile`) prunes below the k-th smallest attained value; best-first
order finds high values late, so at a few hundred points most of the work went to nodes that a
good value from the start prunes (issue 44). For a positive definite quadratic loss
L(b) = L_u + (b - b_u)'H(b - b_u) the classifiers at loss level L_u + R^2 are
b = b_u + R d with d'Hd = 1. :func:`_probe` tries, at R^2 = L_hat - L_u (g = 1) and at
R^2 = L_hat - L_u + 1 / (2 alpha_n) (g = 1/2):

- for each free point k, the direction that gives it the other sign fastest,
  d_k = -sign(phi_k'b_u) H^-1 phi_k / (phi_k'H^-1 phi_k)^(1/2);
- then, twice, the normalised sums of pairs of the best ``n_top`` directions so far.

Each probe's value is :func:`~cudbound.search.bounds._value_at` at its loss computed as the node
solver computes a minimum's (counted only when its signs on the free points are clear), so the
best of them is a value some classifier attains: a valid starting value of the search. It changes
which nodes the search visits (and so a budget-stopped search's ``lower`` and certified bound),
never the exact Q^(b). Nothing here is random.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

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
