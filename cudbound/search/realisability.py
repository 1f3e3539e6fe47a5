"""Is a sign pattern realised by some classifier?

A node fixes signs s_k on some points; its region is
M = {beta : phi_k'beta >= 0 where s_k = +1, phi_k'beta < 0 where s_k = -1}
(sign(0) = +1). The node problem is solved on the closure of M, which always
contains beta = 0, so the closure alone cannot tell an empty M from a non-empty
one. M is non-empty iff the linear program
{phi_k'beta >= 0 (s_k = +1), phi_k'beta <= -1 (s_k = -1)} is feasible, since
cones scale (method.md). The search first looks for a cheap witness (a point
shown to lie in M with a margin); :func:`realise` then decides by the compiled
feasibility QP min |b|^2 s.t. the same rows (the dual active-set method detects an
infeasible system exactly; it is the test of the compiled search), and the LP is the
fallback when that QP fails numerically.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from scipy.optimize import linprog

from ..optim.linear_solve import row_dot
from .node_qp import _gi

__all__ = ["is_witness", "find_witness", "realisable_by_lp", "realise", "RealisabilityUnknown"]

_MARGIN = 1e-9


def is_witness(G: np.ndarray, z: np.ndarray | None) -> bool:
    """True if every signed row satisfies G_k z > margin * |G_k| |z| (strictly inside M)."""
    if z is None:
        return False
    if G.shape[0] == 0:
        return True
    zn = float(np.linalg.norm(z))
    if zn == 0.0:
        return False
    return bool(np.all(G @ z > _MARGIN * zn * np.sqrt(np.einsum("ij,ij->i", G, G))))


def find_witness(G: np.ndarray, candidates) -> np.ndarray | None:
    """A point strictly inside the cone {G z > 0}, tried from cheap candidates.

    For each candidate x (e.g. the node's minimiser, which usually lies on a few of
    the hyperplanes), rows nearly active at x define a direction d with G_A d = 1;
    a small step x + eps d keeps the inactive rows positive. Returns None when no
    candidate works (then decide by :func:`realisable_by_lp`).
    """
    if G.shape[0] == 0:
        return np.ones(G.shape[1])
    norms = np.sqrt(np.einsum("ij,ij->i", G, G))
    for x in candidates:
        if x is None:
            continue
        if is_witness(G, x):
            return x
        xn = float(np.linalg.norm(x))
        slack = G @ x
        act = slack <= 1e-7 * max(xn, 1e-300) * norms
        if xn == 0.0:
            act[:] = True
        d, *_ = np.linalg.lstsq(G[act], np.ones(int(act.sum())), rcond=None)
        if not np.allclose(G[act] @ d, 1.0, atol=1e-9):
            continue
        dn = float(np.linalg.norm(d))
        if dn == 0.0:
            continue
        rate = G[~act] @ d
        eps = (xn if xn > 0 else 1.0) / dn * 1e-3
        falling = rate < 0
        if falling.any():
            eps = min(eps, 0.5 * float(np.min(slack[~act][falling] / -rate[falling])))
        z = x + eps * d
        if is_witness(G, z):
            return z
    return None


class RealisabilityUnknown(RuntimeError):
    """No LP method could decide whether a pattern is realised."""


def realisable_by_lp(G: np.ndarray, signs: np.ndarray):
    """LP test: exists beta with s_k phi_k'beta >= 0 (s_k = +1) and <= -1 (s_k = -1).

    ``G`` holds the signed rows s_k phi_k', so the constraints read
    -G_k beta <= 0 for s_k = +1 and -G_k beta <= -1 for s_k = -1. Rows are scaled to
    unit norm first (feasibility does not change under positive row scaling, as cones
    scale) and the HiGHS methods are tried in turn. Returns a feasible beta (a realising
    classifier) or None; raises :class:`RealisabilityUnknown` if no method decides.
    """
    if G.shape[0] == 0:
        return np.ones(G.shape[1])
    norms = np.sqrt(np.einsum("ij,ij->i", G, G))
    Gn = G / np.where(norms > 0, norms, 1.0)[:, None]
    b_ub = np.where(signs < 0, -1.0, 0.0)
    messages = []
    for method in ("highs", "highs-ds", "highs-ipm"):
        res = linprog(np.zeros(G.shape[1]), A_ub=-Gn, b_ub=b_ub, bounds=[(None, None)] * G.shape[1],
                      method=method)
        if res.status == 0:
            return np.asarray(res.x, dtype=float)
        if res.status == 2:
            return None
        messages.append(f"{method}: {res.message}")
    raise RealisabilityUnknown("; ".join(messages))


@njit(cache=True)
def _strict(P, signs, norms, z):
    zn = np.sqrt(np.dot(z, z))
    if zn == 0.0:
        return False
    for k in range(P.shape[0]):
        if signs[k] * row_dot(P, k, z) <= _MARGIN * zn * norms[k]:
            return False
    return True


@njit(cache=True)
def _realise_compiled(P, signs, c1, c2):
    """(status, point): 0 realised (point realises the pattern), 1 not realisable, 2 undecided.

    Candidates c1, c2 (length 0: none) are tried as strict witnesses first; otherwise the
    feasibility QP min |b|^2 s.t. phi_k'b >= 0 (s_k = +1), phi_k'b <= -1 (s_k = -1)."""
    k, p = P.shape
    norms = np.empty(k)
    for i in range(k):
        norms[i] = np.sqrt(np.dot(P[i], P[i]))
    if c1.shape[0] == p and _strict(P, signs, norms, c1):
        return 0, c1.copy()
    if c2.shape[0] == p and _strict(P, signs, norms, c2):
        return 0, c2.copy()
    x = np.zeros(p)
    act = np.zeros(p, dtype=np.int64)
    u = np.zeros(p)
    status, _ = _gi(np.eye(p), P, norms, signs, 1.0, np.zeros(p), x, act, u, 0)
    return status, x


def realise(rows, signs, candidates=()):
    """Is the pattern ``signs`` on the basis ``rows`` realised? Returns a realising point or None.

    Tries the candidates as strict witnesses, then the compiled feasibility QP, then the LP
    (:func:`realisable_by_lp`; raises :class:`RealisabilityUnknown` if that fails too).
    """
    P = np.ascontiguousarray(rows, dtype=np.float64)
    if P.shape[0] == 0:
        return np.ones(P.shape[1])
    sg = np.asarray(signs).astype(np.int8)
    empty = np.zeros(0)
    c = [np.ascontiguousarray(z, dtype=np.float64) if z is not None else empty for z in (*candidates, None, None)][:2]
    status, point = _realise_compiled(P, sg, c[0], c[1])
    if status == 0:
        return point
    if status == 1:
        return None
    return realisable_by_lp(P * sg[:, None].astype(float), sg.astype(float))
