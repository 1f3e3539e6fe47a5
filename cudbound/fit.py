"""Fitting beta-hat = argmin_beta L(D, beta) for a loss written as a weighted mean."""
from __future__ import annotations

import cvxpy as cp
import numpy as np

from .losses import Loss

__all__ = ["fit_coefficients", "training_error", "predict_signs"]


def predict_signs(design: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """sign(phi_i' beta) with the convention sign(0) = +1 (method.md)."""
    return np.where(design @ beta >= 0.0, 1.0, -1.0)


def training_error(design, y, beta, weights=None) -> float:
    """err_D(beta) = (1/n) sum_i w_i 1{f(x_i; beta) != y_i} (w = 1 for the data itself)."""
    wrong = predict_signs(design, beta) != y
    if weights is None:
        return float(np.mean(wrong))
    return float(np.dot(weights, wrong) / len(y))


def fit_coefficients(design, y, loss: Loss, weights=None, *, solver: str = "ECOS") -> np.ndarray:
    """beta-hat minimising ``loss.value(design, y, weights, .)``; weights default to ones.

    Quadratic losses are solved in closed form from their normal equations
    H beta = g; other losses through cvxpy.
    """
    n, p = design.shape
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if loss.is_quadratic:
        H, g, _ = loss.quadratic_form(design, y, w)
        beta, *_ = np.linalg.lstsq(H, g, rcond=None)
        return beta
    beta = cp.Variable(p)
    prob = cp.Problem(cp.Minimize(loss.expression(design, y, w, beta)))
    prob.solve(solver=solver)
    if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or beta.value is None:
        raise RuntimeError(f"fitting the {loss.name} loss failed (solver status {prob.status!r}).")
    return np.asarray(beta.value, dtype=float)
