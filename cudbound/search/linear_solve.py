"""The one Gaussian elimination of the compiled kernels (partial pivoting, in place, no allocation).

Used by the dual active-set QP of the search (:mod:`cudbound.search.node_qp`), the certified
simplex of the hinge nodes (:mod:`cudbound.search.lp_node_solver`) and the SVM dual's active-set
method (:mod:`cudbound.optim.svm_dual.active_set_solver`); each caller passes the pivot threshold
that suits its matrices.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__: list[str] = []

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

