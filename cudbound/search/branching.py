"""Which unfixed point a node of the search branches on (``SearchOptions.branching``)."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..optim.linear_solve import row_dot
from .bounds import _flip_d
from .codes import AMBIGUOUS, STATIC

__all__: list[str] = []


@njit(cache=True)
def _branch_point(P, hn, cplus, cminus, signs, beta, m, L_max, mode, r=0.0):
    """The unfixed point to branch on.

    mode 0 "static": the first unfixed point in the problem's order (largest |cost change|);
    mode 1 "ambiguous": the point cheapest to flip from the node's minimiser;
    mode 2 "dearest": among points that can still flip inside the neighbourhood,
    the one with the largest flip cost times |cost change|, so the flip child's minimum
    rises most and the other child loses the most |C|. Flip costs as in :func:`_bound`.
    Mode 3 "critical" (the default) takes the point the node's flip-cost bound picked
    (``bounds._critical_point``, kept in the node pool); where it picked none, it is mode 2 here.
    """
    best_j = -1
    best_key = -np.inf
    best_w = -1.0
    for k in range(P.shape[0]):
        if signs[k] != 0:
            continue
        if mode == STATIC:
            return k
        t = row_dot(P, k, beta)
        dk = _flip_d(t, hn[k], r)
        wk = abs(cplus[k] - cminus[k])
        if mode == AMBIGUOUS:
            key = -dk
        else:
            key = dk * wk if m + dk < L_max else -dk
        if best_j < 0 or key > best_key or (key == best_key and wk > best_w):
            best_j = k
            best_key = key
            best_w = wk
    return best_j

