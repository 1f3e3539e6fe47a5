"""Surrogate losses, written as weighted means.

For bootstrap counts ``nu`` (all ones for the original data) a loss is

    L(D^(b), beta) = (1/n) * sum_i nu_i * l(y_i, phi_i' beta),

with ``n = len(y)`` (Laber & Murphy 2008, section 3; see ``docs/method.md``).
The search only talks to a loss through this small protocol:

``value(design, y, weights, beta)``
    the number above, in NumPy;
``expression(design, y, weights, beta)``
    the same as a cvxpy expression (``weights`` may be a ``cvxpy.Parameter`` and
    ``beta`` a ``cvxpy.Variable``); it must be DPP so that a node problem is
    compiled once and re-solved by changing parameter values;
``is_quadratic``
    whether ``value`` is a quadratic function of ``beta``; a quadratic loss also
    gives ``quadratic_form(design, y, weights) -> (H, g, c)`` with
    ``value = beta' H beta - 2 g' beta + c``, which unlocks the closed-form
    screening and exact polishing of node solutions.
"""
from __future__ import annotations

import abc

import cvxpy as cp
import numpy as np

__all__ = ["Loss", "SquaredLoss", "get_loss", "LOSSES"]


class Loss(abc.ABC):
    """A surrogate loss l(y, t), convex in t, used as a weighted mean."""

    name: str = "loss"
    is_quadratic: bool = False

    @abc.abstractmethod
    def pointwise(self, y: np.ndarray, t: np.ndarray) -> np.ndarray:
        """l(y_i, t_i) elementwise, in NumPy."""

    @abc.abstractmethod
    def cvxpy_pointwise(self, y: np.ndarray, t: cp.Expression) -> cp.Expression:
        """l(y_i, t_i) elementwise as a convex cvxpy expression in ``t``."""

    def value(self, design, y, weights, beta) -> float:
        """(1/n) sum_i w_i l(y_i, phi_i' beta)."""
        t = design @ beta
        return float(np.dot(weights, self.pointwise(y, t)) / len(y))

    def expression(self, design, y, weights, beta) -> cp.Expression:
        """The cvxpy expression of :meth:`value` (DPP in ``weights``)."""
        return (weights @ self.cvxpy_pointwise(y, design @ beta)) / len(y)

    def quadratic_form(self, design, y, weights):
        """(H, g, c) with value(beta) = beta'H beta - 2 g'beta + c (quadratic losses only)."""
        raise NotImplementedError(f"the {self.name} loss is not quadratic")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class SquaredLoss(Loss):
    """Squared loss l(y, t) = (y - t)^2, the loss of the paper's experiments.

    As a mean, L(beta) = (1/n) sum_i w_i (y_i - phi_i'beta)^2 = beta'H beta - 2 g'beta + c
    with H = Phi'W Phi / n, g = Phi'W y / n, c = y'W y / n.
    """

    name = "squared"
    is_quadratic = True

    def pointwise(self, y, t):
        return (y - t) ** 2

    def cvxpy_pointwise(self, y, t):
        return cp.square(y - t)

    def quadratic_form(self, design, y, weights):
        n = len(y)
        w = np.asarray(weights, dtype=float)
        wd = design * w[:, None]
        return design.T @ wd / n, wd.T @ y / n, float(np.dot(w, y * y) / n)


LOSSES = {"squared": SquaredLoss}


def get_loss(loss) -> Loss:
    """Return a :class:`Loss` instance from a name or an instance."""
    if isinstance(loss, Loss):
        return loss
    if isinstance(loss, str):
        key = loss.strip().lower()
        if key in LOSSES:
            return LOSSES[key]()
        raise ValueError(f"`loss` must be one of {sorted(LOSSES)} or a Loss instance; got {loss!r}.")
    raise TypeError(f"`loss` must be a string or a cudbound.losses.Loss instance; got {type(loss).__name__}.")
