"""Simulated data sets whose generalization error is known exactly.

A simulated design is only useful for checking coverage when the quantity the
interval is meant to cover, the generalization error tau(beta-hat) of the
fitted classifier, can be computed without a test set. The generators here
come with that computation.
"""
from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate, stats

from .._validation import check_scalar
from .base import LabelNoise

__all__ = ["LinearGaussian", "DEMO_GENERATOR", "demo_data"]


class LinearGaussian(LabelNoise):
    """Gaussian features, a linear Bayes boundary and symmetric label noise.

    The generative model is

    .. math::

        x \\sim N(0, I_d), \\qquad
        y = \\epsilon \\operatorname{sign}(c' x), \\qquad
        P(\\epsilon = -1) = q \\text{ independently of } x,

    with sign(0) = +1 and ``c = coef`` (default ``(1, ..., 1) / sqrt(d)``), ``q =
    flip_probability``. Each label is thus flipped independently with
    probability ``q``, and the two classes are equally likely.

    Because ``q < 1/2`` does not depend on ``x``, the Bayes classifier is
    ``sign(c' x)`` and the **Bayes error equals** ``flip_probability``
    **exactly** (:attr:`bayes_error`). The Bayes classifier is linear, so the
    linear basis (intercept plus identity) contains it; for the squared loss
    the limit beta* of beta-hat is known in closed form (:meth:`limit_coef`)
    and classifies like ``sign(c' x)``, so its error is also ``q``. The exact
    generalization error of any linear classifier is :meth:`error_rate`,
    which lets a coverage study use tau(beta-hat) itself rather than a test set.

    Parameters
    ----------
    n_features : int, default 2
        Dimension d of ``x``; with the linear basis the model has p = d + 1
        coefficients.
    flip_probability : float, default 0.2
        Probability q in [0, 1/2) that a label is flipped.
    coef : array_like of shape (d,), optional
        Normal vector c of the Bayes boundary ``c' x = 0`` (not necessarily of
        unit length; must be non-zero). Default ``(1, ..., 1) / sqrt(d)``.

    Attributes
    ----------
    coef : ndarray of shape (d,)
        The normal vector c used.

    Examples
    --------
    >>> from cudbound.datasets import LinearGaussian
    >>> gen = LinearGaussian(n_features=2, flip_probability=0.2)
    >>> X, y = gen.sample(5, rng=0)
    >>> X.shape, y.shape
    ((5, 2), (5,))
    >>> gen.bayes_error
    0.2
    >>> round(gen.error_rate(gen.limit_coef()), 12)  # beta* classifies like the Bayes rule
    0.2
    """

    name = "linear_gaussian"
    basis = "linear"

    def __init__(self, n_features: int = 2, flip_probability: float = 0.2, coef: ArrayLike | None = None):
        n_features = check_scalar(n_features, "n_features", min_val=1)
        check_scalar(flip_probability, "flip_probability", numbers.Real, min_val=0.0, max_val=0.5,
                     include_boundaries="left")
        if coef is None:
            coef = np.ones(n_features) / math.sqrt(n_features)
        coef = np.asarray(coef, dtype=float)
        if coef.shape != (n_features,) or not np.all(np.isfinite(coef)) or not np.any(coef):
            raise ValueError(
                f"`coef` must be a finite, non-zero vector of length n_features = {n_features}; got {coef!r}."
            )
        self.n_features = int(n_features)
        self.flip_probability = float(flip_probability)
        self.coef = coef

    def __repr__(self) -> str:
        return f"LinearGaussian(n_features={self.n_features}, flip_probability={self.flip_probability})"

    def sample(self, n: int, rng: np.random.Generator | np.random.SeedSequence | int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """n independent observations (:meth:`Simulator.sample <cudbound.datasets.base.Simulator.sample>`)."""
        n = check_scalar(n, "n", min_val=1)
        rng = np.random.default_rng(rng)
        X = rng.standard_normal((n, self.n_features))
        clean = np.where(X @ self.coef >= 0.0, 1, -1)
        flipped = rng.random(n) < self.flip_probability
        return X, np.where(flipped, -clean, clean)

    def limit_coef(self) -> np.ndarray:
        """beta* for the squared loss and the linear basis (intercept first).

        With E[x] = 0, E[x x'] = I and E[y] = 0, the population least-squares
        fit is beta* = (0, E[x y]) and
        E[x y] = (1 - 2q) E[x sign(u)] = (1 - 2q) sqrt(2 / pi) c / ||c||
        for u = c' x / ||c|| ~ N(0, 1). So sign(phi(x)' beta*) = sign(c' x),
        the Bayes classifier.

        Returns
        -------
        ndarray of shape (n_features + 1,)
        """
        unit = self.coef / np.linalg.norm(self.coef)
        slope = (1.0 - 2.0 * self.flip_probability) * math.sqrt(2.0 / math.pi) * unit
        return np.concatenate([[0.0], slope])

    def error_rate(self, beta: ArrayLike) -> float:
        """Exact generalization error of the linear classifier sign(b_0 + b' x).

        Parameters
        ----------
        beta : array_like of shape (n_features + 1,)
            Coefficients on the linear basis, intercept first (as in
            ``CUDResult.coef`` with ``basis="linear"``).

        Returns
        -------
        float
            P(sign(b_0 + b' x) != y) = q + (1 - 2q) D, where D is the
            probability that the classifier disagrees with sign(c' x).
            With u = c' x / ||c|| and w = (b_0 + b' x) / ||b|| = m + rho u +
            sqrt(1 - rho^2) z (z ~ N(0, 1) independent of u), D is a
            one-dimensional integral over u, evaluated by quadrature. A
            constant classifier (b = 0) has error 1/2.
        """
        beta = np.asarray(beta, dtype=float)
        if beta.shape != (self.n_features + 1,) or not np.all(np.isfinite(beta)):
            raise ValueError(
                f"`beta` must be a finite vector of length n_features + 1 = {self.n_features + 1} "
                f"(intercept first); got {beta!r}."
            )
        q = self.flip_probability
        b0, b = beta[0], beta[1:]
        norm_b = np.linalg.norm(b)
        if norm_b == 0.0:
            return 0.5
        m = b0 / norm_b
        rho = float(np.clip(b @ self.coef / (norm_b * np.linalg.norm(self.coef)), -1.0, 1.0))
        sigma = math.sqrt(1.0 - rho * rho)
        if sigma < 1e-12:  # w = m + rho u exactly: disagreement on an interval of u
            D = _disagreement_degenerate(m, rho)
        else:
            pos, _ = integrate.quad(lambda u: stats.norm.pdf(u) * stats.norm.cdf(-(m + rho * u) / sigma),
                                    0.0, np.inf, epsabs=1e-13)
            neg, _ = integrate.quad(lambda u: stats.norm.pdf(u) * stats.norm.cdf((m + rho * u) / sigma),
                                    -np.inf, 0.0, epsabs=1e-13)
            D = pos + neg
        return float(q + (1.0 - 2.0 * q) * D)


def _disagreement_degenerate(m: float, rho: float) -> float:
    """P(sign(u) != sign(m + rho u)) for u ~ N(0, 1) and rho = +-1."""
    if rho > 0:  # disagree for u between -m and 0
        return abs(stats.norm.cdf(0.0) - stats.norm.cdf(-m))
    return 1.0 - abs(stats.norm.cdf(m) - stats.norm.cdf(0.0))  # w = m - u: agree for u between 0 and m


DEMO_GENERATOR = LinearGaussian(n_features=2, flip_probability=0.2)
"""The generator behind :func:`demo_data`."""


def demo_data(n: int = 50, seed: int | None = 0) -> tuple[np.ndarray, np.ndarray]:
    """The simulated data set of ``cudbound demo --n N --seed SEED``.

    Two Gaussian features (p = 3 coefficients with the intercept) and a Bayes
    error of 0.2: :data:`DEMO_GENERATOR`, sampled from the first child stream
    of ``numpy.random.SeedSequence(seed)``. The data therefore do not share a
    stream with ``cud_interval(X, y, rng=seed)``, which is how the command
    draws its bootstrap resamples; those two calls reproduce the command.

    Parameters
    ----------
    n : int, default 50
        Number of observations.
    seed : None or int, default 0
        Seed of the data (None: fresh entropy).

    Returns
    -------
    X : ndarray of shape (n, 2)
    y : ndarray of shape (n,)
        Integer labels in {-1, +1}.
    """
    return DEMO_GENERATOR.sample(n, np.random.SeedSequence(seed).spawn(1)[0])

