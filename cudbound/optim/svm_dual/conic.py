"""The SVM dual by an interior-point method (CLARABEL through cvxpy): the fallback when SMO
stalls."""
from __future__ import annotations

import warnings

import numpy as np

__all__ = ["solve_conic"]


def solve_conic(K, y, C, active):
    """The dual by CLARABEL through cvxpy at tolerance 1e-12, on a factor L L' = K (eigenvalues
    below 1e-12 of the largest dropped): the fallback when SMO stalls, which it does when K has
    low rank and C is large (many multipliers must move together). Returns alpha (zero where
    inactive) and the bias from the equality constraint's multiplier."""
    import cvxpy as cp

    idx = np.flatnonzero(active)
    Ka, ya = K[np.ix_(idx, idx)], y[idx]
    w, V = np.linalg.eigh(Ka)
    keep = w > 1e-12 * max(w[-1], 1e-300)
    L = V[:, keep] * np.sqrt(w[keep])
    a = cp.Variable(idx.size)
    eq = ya @ a == 0
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ cp.multiply(ya, a)) - cp.sum(a)), [a >= 0, a <= C, eq])
    try:
        with warnings.catch_warnings():  # "may be inaccurate": the caller checks the KKT conditions itself
            warnings.simplefilter("ignore", UserWarning)
            prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, max_iter=500)
    except cp.error.SolverError:
        return None
    alpha = np.zeros(y.shape[0])
    if a.value is None:
        return None
    alpha[idx] = np.clip(a.value, 0.0, C)
    # the multiplier of y'a = 0 is the bias: stationarity at a free i, (Q a)_i - 1 + nu y_i = 0, is
    # y_i f_i = 1 with f = K (alpha y) + nu (cvxpy's dual of an equality has this sign)
    b = float(eq.dual_value) if eq.dual_value is not None else 0.0
    return alpha, b
