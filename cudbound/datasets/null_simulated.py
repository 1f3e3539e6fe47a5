"""Simulated designs on which two classifiers have equal expected error by construction.

Each design has d = 2k features in two halves, x = (u, v) with u = (x_1, ..., x_k) and
v = (x_{k+1}, ..., x_2k). A latent class c in {-1, +1} is drawn with probability 1/2 each,
then u and v independently from the same class-conditional law g_c on R^k, and the label is
y = epsilon c with P(epsilon = -1) = q (``flip_probability``) independently of everything else.
Procedure A fits on u (basis ``cols:0-(k-1)``, or a polynomial in those columns), procedure B,
the same procedure, on v (``basis_b``, the same form on columns k..2k-1).

**Why the null holds exactly.** The swap s(u, v) = (v, u) leaves the law of (x, y) unchanged:
u and v are i.i.d. given c, and y depends on c only. Map a training set D and a test set T by
s: (s(D), s(T)) has the law of (D, T), and A fitted on s(D) is B fitted on D (the same procedure
on the same columns). So (err_A, err_B) and (err_B, err_A) have one law, and so have
(auc_A, auc_B) and (auc_B, auc_A): E[err_A - err_B] = 0 and E[auc_A - auc_B] = 0, each difference
symmetric about 0, at every n. A study that redraws a training set while either design is
degenerate keeps this (its rule is symmetric in A and B). The difference of the two classifiers
fitted on one training set is not 0: it is symmetric about 0 with a spread that shrinks as n
grows; the null is the procedures' (expected) one.

The posterior P(y = +1 | x) = q + (1 - 2q) expit(r(u) + r(v)), with r = log g_{+1} - log g_{-1}
the half's log likelihood ratio (:meth:`ExchangeableHalves.half_log_ratio`), is a symmetric
function of the halves; the Bayes classifier is sign(r(u) + r(v)) (sign(0) = +1).

Designs (k = 2, registered under these names; A on columns 0-1, B on columns 2-3):

* ``null_easy``: g_c = N(0.9 c 1, I), q = 0.05, A and B linear (``cols:0-1``, ``cols:2-3``);
* ``null_hard``: g_c = N(0.45 c 1, I), q = 0.2, linear;
* ``null_nonlinear``: g_{+1} = N(0, I), g_{-1} = N(0, 9 I), q = 0.05, quadratic
  (``poly:2(cols:0-1)``, ``poly:2(cols:2-3)``);
* ``null_outliers``: g_c = N(0.9 c 1, I) with 10% of the halves N(0.9 c 1, 100 I), q = 0.1, linear.
"""
from __future__ import annotations

import abc
import math
import numbers

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from .._validation import check_scalar
from .base import Simulator
from .paper_simulated import _check_n, _check_positive, _check_probability, _check_X, _flip, _signs

__all__ = ["ExchangeableHalves", "ShiftedHalves", "ScaledHalves", "ContaminatedHalves", "NULL_DESIGNS"]


class ExchangeableHalves(Simulator):
    """Two halves of k features drawn i.i.d. given a latent class (module docstring): A on the
    first half and B on the second have equal expected error and AUC by construction.

    Subclasses define the class-conditional law of one half (``_half``) and its log likelihood
    ratio (:meth:`half_log_ratio`); ``degree`` 1 fits each half's columns, 2 a quadratic in them.
    """

    null_by_construction = True
    degree = 1

    def __init__(self, name: str, half_size: int, flip_probability: float):
        self.name = name
        self.half_size = check_scalar(half_size, "half_size", min_val=1)
        self.n_features = 2 * self.half_size
        self.flip_probability = _check_probability(flip_probability, "flip_probability")
        # A's basis, the first half's columns; B's, the same form on the second half's
        self.basis, self.basis_b = self._spec(0), self._spec(self.half_size)

    def _spec(self, first: int) -> str:
        cols = f"cols:{first}-{first + self.half_size - 1}"
        return cols if self.degree == 1 else f"poly:{self.degree}({cols})"

    @abc.abstractmethod
    def _half(self, c: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One half, (n, k), drawn from g_c row by row."""

    @abc.abstractmethod
    def half_log_ratio(self, U: ArrayLike) -> np.ndarray:
        """r(u) = log g_{+1}(u) - log g_{-1}(u) for each row u of U, (m, k)."""

    def sample(self, n: int, rng: np.random.Generator | np.random.SeedSequence | int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """n independent observations (:meth:`Simulator.sample <cudbound.datasets.base.Simulator.sample>`):
        c, then u and v by the same draw, then the flips."""
        n = _check_n(n)
        rng = np.random.default_rng(rng)
        c = np.where(rng.random(n) < 0.5, 1, -1)
        X = np.hstack([self._half(c, rng), self._half(c, rng)])
        return X, _flip(c, self.flip_probability, rng)

    def swap_halves(self, X: ArrayLike) -> np.ndarray:
        """s(x) = (v, u): the map under which the design's law is invariant."""
        X = _check_X(X, self.n_features)
        return np.hstack([X[:, self.half_size:], X[:, :self.half_size]])

    def _log_ratio(self, X: ArrayLike) -> np.ndarray:
        X = _check_X(X, self.n_features)
        return self.half_log_ratio(X[:, :self.half_size]) + self.half_log_ratio(X[:, self.half_size:])

    def positive_probability(self, X: ArrayLike) -> np.ndarray:
        """P(y = +1 | x) = q + (1 - 2q) expit(r(u) + r(v))."""
        q = self.flip_probability
        return q + (1.0 - 2.0 * q) * special.expit(self._log_ratio(X))

    def bayes_classifier(self, X: ArrayLike) -> np.ndarray:
        """sign(r(u) + r(v)), with sign(0) = +1."""
        return _signs(self._log_ratio(X))

    def _with_noise(self, clean_error: float) -> float:
        """The error q + (1 - 2q) e of a rule whose error on the latent class is e."""
        q = self.flip_probability
        return q + (1.0 - 2.0 * q) * clean_error


class ShiftedHalves(ExchangeableHalves):
    """Gaussian halves shifted by the class: g_c = N(c delta 1_k, I_k), a linear Bayes boundary.

    r(u) = 2 delta sum(u). The best rule on one half is sign(sum(u)); its error is
    q + (1 - 2q) Phi(-delta sqrt(k)) (:attr:`half_bayes_error`). The least-squares fit on a half
    (basis ``cols``) estimates that rule (Fisher's discriminant, the classes balanced).

    >>> gen = ShiftedHalves("demo", 2, shift=0.9, flip_probability=0.05)
    >>> gen.basis, gen.basis_b, round(gen.half_bayes_error, 4)
    ('cols:0-1', 'cols:2-3', 0.1414)
    """

    def __init__(self, name: str, half_size: int = 2, shift: float = 0.9, flip_probability: float = 0.05):
        super().__init__(name, half_size, flip_probability)
        self.shift = _check_positive(shift, "shift")

    def __repr__(self) -> str:
        return (f"ShiftedHalves({self.name!r}, half_size={self.half_size}, shift={self.shift}, "
                f"flip_probability={self.flip_probability})")

    def _half(self, c, rng):
        return c[:, None] * self.shift + rng.standard_normal((c.size, self.half_size))

    def half_log_ratio(self, U: ArrayLike) -> np.ndarray:
        return 2.0 * self.shift * _check_X(U, self.half_size).sum(axis=1)

    @property
    def half_bayes_error(self) -> float:
        """The error of the best classifier of y on one half, q + (1 - 2q) Phi(-delta sqrt(k))."""
        return self._with_noise(float(stats.norm.cdf(-self.shift * math.sqrt(self.half_size))))


class ScaledHalves(ExchangeableHalves):
    """Centred Gaussian halves whose spread is the class: g_{+1} = N(0, I_k), g_{-1} = N(0, s^2 I_k),
    a radial (quadratic) Bayes boundary; A and B are quadratics in their half (``poly:2(cols:...)``).

    r(u) = k log s - ||u||^2 (1 - 1/s^2) / 2, so the best rule on one half is ||u||^2 <= t with
    t = 2 k log s / (1 - 1/s^2), a quadratic, and its error is
    q + (1 - 2q) (P(chi^2_k > t) + P(chi^2_k <= t / s^2)) / 2 (:attr:`half_bayes_error`).

    >>> gen = ScaledHalves("demo", 2, scale=3.0, flip_probability=0.05)
    >>> gen.basis, gen.basis_b, round(gen.half_bayes_error, 4)
    ('poly:2(cols:0-1)', 'poly:2(cols:2-3)', 0.1961)
    """

    degree = 2

    def __init__(self, name: str, half_size: int = 2, scale: float = 3.0, flip_probability: float = 0.05):
        super().__init__(name, half_size, flip_probability)
        self.scale = check_scalar(scale, "scale", numbers.Real, min_val=1.0, include_boundaries="neither")

    def __repr__(self) -> str:
        return (f"ScaledHalves({self.name!r}, half_size={self.half_size}, scale={self.scale}, "
                f"flip_probability={self.flip_probability})")

    def _half(self, c, rng):
        return rng.standard_normal((c.size, self.half_size)) * np.where(c > 0, 1.0, self.scale)[:, None]

    def half_log_ratio(self, U: ArrayLike) -> np.ndarray:
        U = _check_X(U, self.half_size)
        s2 = self.scale ** 2
        return self.half_size * math.log(self.scale) - np.sum(U * U, axis=1) * (1.0 - 1.0 / s2) / 2.0

    @property
    def half_bayes_error(self) -> float:
        """The error of the best classifier of y on one half (class docstring)."""
        k, s2 = self.half_size, self.scale ** 2
        t = 2.0 * k * math.log(self.scale) / (1.0 - 1.0 / s2)
        return self._with_noise(float(stats.chi2.sf(t, k) + stats.chi2.cdf(t / s2, k)) / 2.0)


class ContaminatedHalves(ExchangeableHalves):
    """Shifted Gaussian halves with gross outliers: g_c = (1 - pi) N(c delta 1_k, I_k) +
    pi N(c delta 1_k, sigma^2 I_k), each half contaminated independently; the least-squares fit
    on a half (``cols``) is pulled by the few far points.

    r(u) = log g_{+1}(u) - log g_{-1}(u), each a two-component mixture density (no closed-form
    error).

    >>> gen = ContaminatedHalves("demo")
    >>> gen.basis, gen.basis_b, gen.null_by_construction
    ('cols:0-1', 'cols:2-3', True)
    """

    def __init__(self, name: str, half_size: int = 2, shift: float = 0.9, contamination: float = 0.1,
                 outlier_scale: float = 10.0, flip_probability: float = 0.1):
        super().__init__(name, half_size, flip_probability)
        self.shift = _check_positive(shift, "shift")
        self.contamination = _check_probability(contamination, "contamination", 0.0, 1.0)
        self.outlier_scale = _check_positive(outlier_scale, "outlier_scale")

    def __repr__(self) -> str:
        return (f"ContaminatedHalves({self.name!r}, half_size={self.half_size}, shift={self.shift}, "
                f"contamination={self.contamination}, outlier_scale={self.outlier_scale}, "
                f"flip_probability={self.flip_probability})")

    def _half(self, c, rng):
        noise = rng.standard_normal((c.size, self.half_size))
        far = rng.random(c.size) < self.contamination
        noise[far] *= self.outlier_scale
        return c[:, None] * self.shift + noise

    def _log_density(self, U: np.ndarray, c: int) -> np.ndarray:
        """log g_c(u) up to a constant shared by both classes."""
        sq = np.sum((U - c * self.shift) ** 2, axis=1)
        pi, sigma, k = self.contamination, self.outlier_scale, self.half_size
        with np.errstate(divide="ignore"):
            return np.logaddexp(math.log1p(-pi) - sq / 2.0, np.log(pi) - k * math.log(sigma) - sq / (2.0 * sigma ** 2))

    def half_log_ratio(self, U: ArrayLike) -> np.ndarray:
        U = _check_X(U, self.half_size)
        return self._log_density(U, 1) - self._log_density(U, -1)


NULL_DESIGNS = {gen.name: gen for gen in (
    ShiftedHalves("null_easy", 2, shift=0.9, flip_probability=0.05),
    ShiftedHalves("null_hard", 2, shift=0.45, flip_probability=0.2),
    ScaledHalves("null_nonlinear", 2, scale=3.0, flip_probability=0.05),
    ContaminatedHalves("null_outliers", 2, shift=0.9, contamination=0.1, outlier_scale=10.0, flip_probability=0.1),
)}
"""Name -> the registered null design (module docstring's table)."""
