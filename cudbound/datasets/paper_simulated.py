"""The four simulated data sets of the coverage study of Laber & Murphy (2008).

Table 1 of the paper names four simulated designs and the reason each was included,
but the generators were never published:

========================  ==================================================
Donut                     f* close to Bayes
Outlier                   f* far from Bayes
chi^2 small               beta* = 0, low noise, f* far from Bayes
Three Points              training error highly non-normal, f* far from Bayes
========================  ==================================================

Here f* = sign(phi(x)' beta*) is the limit of the fitted classifier sign(phi(x)'
beta-hat), with beta-hat the least-squares fit of y in {-1, +1} on the basis phi
(intercept first) and beta* = E[phi phi']^{-1} E[phi y] its population limit. Each
class below is our own design meeting the stated purpose. Everything the study and
its checks need is known in closed form: the Bayes error and classifier, the class
balance, beta* and the error of f* (``limit_error``); :class:`ThreePoints` also gives
the exact error of any linear classifier (``error_rate``). The study itself scores
the fitted classifier on 5000 fresh test points, as in the paper. See
``docs/datasets.md`` ("Simulated data") for the table of designs and values.

The classifier convention is the package's: sign(0) = +1.

References
----------
E. B. Laber and S. A. Murphy. Small sample inference for generalization error in
classification using the CUD bound. UAI 2008, section 5 and Table 1.
"""
from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from .._validation import check_scalar
from ..ties import decision_signs
from .base import LabelNoise, Simulator

__all__ = ["Donut", "Outlier", "ChiSquareSmall", "ThreePoints", "SIMULATED"]


# --------------------------------------------------------------------------- validation
def _check_probability(value, name, low=0.0, high=0.5, *, closed_high=False):
    """A real number in [low, high) (or [low, high]); returns it as a float."""
    return check_scalar(value, name, numbers.Real, min_val=low, max_val=high,
                        include_boundaries="both" if closed_high else "left")


def _check_positive(value, name, *, allow_zero=False):
    """A finite real number > 0 (or >= 0); returns it as a float."""
    return check_scalar(value, name, numbers.Real, min_val=0.0, include_boundaries="left" if allow_zero else "neither")


def _check_n(n):
    return check_scalar(n, "n", min_val=1)


def _check_X(X: ArrayLike, d: int) -> np.ndarray:
    """X as a float (m, d) array (a 1-D array is one feature when d = 1)."""
    X = np.asarray(X, dtype=float)
    if X.ndim == 1 and d == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[1] != d:
        raise ValueError(f"`X` must have shape (m, {d}); got an array of shape {X.shape}.")
    return X


def _signs(t):
    """sign(t) with sign(0) = +1, as integers."""
    return np.where(t >= 0.0, 1, -1)


def _flip(clean, q, rng):
    """Flip each label of ``clean`` independently with probability q."""
    return np.where(rng.random(clean.shape[0]) < q, -clean, clean)


# --------------------------------------------------------------------------- Donut
class Donut(LabelNoise):
    """A disc of +1 inside a ring of -1: the best quadratic classifier is the Bayes rule.

    The generative model (radius rho = ``radius``, flip probability q =
    ``flip_probability``) is

    .. math::

        x \\sim \\text{Uniform}\\{x \\in R^2 : \\|x\\| \\le \\rho\\}, \\qquad
        y = \\epsilon \\, s(x), \\qquad
        s(x) = +1 \\text{ if } \\|x\\|^2 \\le \\rho^2 / 2, \\; -1 \\text{ otherwise},

    with P(epsilon = -1) = q independently of x. The +1 class fills the inner disc of
    half the area, the -1 class the surrounding ring (the "donut"); both classes have
    probability 1/2. The Bayes classifier is s(x) and the **Bayes error is q exactly**.

    The basis is ``"poly:2"``: phi(x) = (1, x1, x2, x1^2, x1 x2, x2^2) (the column
    order of :class:`cudbound.basis.PolynomialBasis`), which contains the Bayes rule
    sign(rho^2/2 - x1^2 - x2^2). The least-squares limit is found in closed form
    (:meth:`limit_coef`) and classifies exactly like the Bayes rule, so ``limit_error``
    equals ``bayes_error``: the design of Table 1's "f close to Bayes", made exact.

    Parameters
    ----------
    radius : float, default 1.0
        Radius rho > 0 of the support.
    flip_probability : float, default 0.1
        Label-noise probability q in [0, 1/2).

    Examples
    --------
    >>> from cudbound.datasets import Donut
    >>> gen = Donut()
    >>> X, y = gen.sample(4, rng=0)
    >>> X.shape, sorted(set(y.tolist())) <= [-1, 1]
    ((4, 2), True)
    >>> gen.limit_coef().round(3).tolist()
    [1.2, 0.0, 0.0, -2.4, 0.0, -2.4]
    >>> gen.bayes_error, gen.limit_error
    (0.1, 0.1)
    """

    name = "donut"
    basis = "poly:2"
    n_features = 2

    def __init__(self, radius: float = 1.0, flip_probability: float = 0.1):
        self.radius = _check_positive(radius, "radius")
        self.flip_probability = _check_probability(flip_probability, "flip_probability")

    def __repr__(self) -> str:
        return f"Donut(radius={self.radius}, flip_probability={self.flip_probability})"

    @property
    def positive_rate(self) -> float:
        """P(y = +1) = 1/2 (the inner disc has half the area; flips are symmetric)."""
        return 0.5

    def bayes_classifier(self, X: ArrayLike) -> np.ndarray:
        """s(x) = +1 if ||x||^2 <= rho^2 / 2, else -1."""
        X = _check_X(X, 2)
        return _signs(self.radius ** 2 / 2.0 - np.sum(X * X, axis=1))

    def sample(self, n: int, rng: np.random.Generator | np.random.SeedSequence | int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """n independent observations (:meth:`Simulator.sample <cudbound.datasets.base.Simulator.sample>`)."""
        n = _check_n(n)
        rng = np.random.default_rng(rng)
        r = self.radius * np.sqrt(rng.random(n))  # uniform on the disc: R = ||x||^2 ~ U(0, rho^2)
        theta = 2.0 * math.pi * rng.random(n)
        X = np.column_stack([r * np.cos(theta), r * np.sin(theta)])
        return X, _flip(self.bayes_classifier(X), self.flip_probability, rng)

    def limit_coef(self) -> np.ndarray:
        """beta* for the squared loss and the ``poly:2`` basis, in closed form.

        Write R = x1^2 + x2^2 ~ U(0, rho^2) and a = 1 - 2q, so E[y | x] = a s(x).
        *Symmetry.* The law of (x, y) is invariant under x1 -> -x1, x2 -> -x2 and
        x1 <-> x2. The odd columns x1, x2, x1 x2 are therefore orthogonal to the even
        ones and to y, and x1^2 - x2^2 is orthogonal to every function of R and to y;
        so beta* has zero coefficients on x1, x2, x1 x2 and equal ones on x1^2 and x2^2,
        i.e. it is the least-squares fit of y on (1, R):
        b_R = Cov(R, y) / Var(R) and b_0 = E[y] - b_R E[R].
        *Moments.* E[R] = rho^2/2, Var(R) = rho^4/12, E[y] = 0 and
        E[R y] = a (int_0^{rho^2/2} - int_{rho^2/2}^{rho^2}) r dr / rho^2 = -a rho^2 / 4.
        Hence

            beta* = (3a/2, 0, 0, -3a/rho^2, 0, -3a/rho^2),

        and phi(x)' beta* = (3a/rho^2)(rho^2/2 - R) has the sign of the Bayes rule.

        Returns
        -------
        ndarray of shape (6,)
            Coefficients on (1, x1, x2, x1^2, x1 x2, x2^2).
        """
        a = 1.0 - 2.0 * self.flip_probability
        b = -3.0 * a / self.radius ** 2
        return np.array([1.5 * a, 0.0, 0.0, b, 0.0, b])

    @property
    def limit_error(self) -> float:
        """Error of sign(phi(x)' beta*): equal to the Bayes error, q (see :meth:`limit_coef`)."""
        return self.flip_probability


# --------------------------------------------------------------------------- Outlier
class Outlier(LabelNoise):
    """A linear Bayes boundary and a far-away cluster that drags the least-squares fit.

    With probability 1 - pi (pi = ``outlier_probability``) x is drawn from the main
    cluster N(0, I_2), otherwise from the outlier cluster N((M, 0), s^2 I_2)
    (M = ``outlier_distance``, s = ``outlier_scale``). In both clusters

    .. math::

        y = \\epsilon \\operatorname{sign}(x_1), \\qquad P(\\epsilon = -1) = q
        \\text{ independently of } x,

    so the Bayes classifier is sign(x1), linear, and the **Bayes error is q exactly**.
    The outliers sit on the correct (+1) side of the Bayes boundary, far from it. The
    squared loss is not robust: to bring phi(x)' beta close to y at x1 ~ M, the fit
    flattens its slope, and in the main cluster the boundary moves from x1 = 0 to
    x1 = t* = -b_0 / b_1 > 0 (about 0.53 with the defaults). Every main-cluster point
    with 0 < x1 < t* is then misclassified by the limit f*, whose error
    ``limit_error`` (0.2456 with the defaults) is far above the Bayes error 0.1.

    The basis is ``"linear"``: phi(x) = (1, x1, x2), which contains the Bayes rule.

    Parameters
    ----------
    outlier_probability : float, default 0.1
        Probability pi in [0, 1) of the outlier cluster.
    outlier_distance : float, default 20.0
        Distance M >= 0 of the outlier cluster's centre (M, 0) from the origin.
    outlier_scale : float, default 1.0
        Standard deviation s > 0 of each coordinate within the outlier cluster.
    flip_probability : float, default 0.1
        Label-noise probability q in [0, 1/2).

    Examples
    --------
    >>> from cudbound.datasets import Outlier
    >>> gen = Outlier()
    >>> gen.limit_coef().round(4).tolist()
    [-0.0289, 0.0544, 0.0]
    >>> round(gen.limit_error, 4), gen.bayes_error
    (0.2456, 0.1)
    """

    name = "outlier"
    basis = "linear"
    n_features = 2

    def __init__(self, outlier_probability: float = 0.1, outlier_distance: float = 20.0,
                 outlier_scale: float = 1.0, flip_probability: float = 0.1):
        self.outlier_probability = _check_probability(outlier_probability, "outlier_probability", 0.0, 1.0)
        self.outlier_distance = _check_positive(outlier_distance, "outlier_distance", allow_zero=True)
        self.outlier_scale = _check_positive(outlier_scale, "outlier_scale")
        self.flip_probability = _check_probability(flip_probability, "flip_probability")

    def __repr__(self) -> str:
        return (f"Outlier(outlier_probability={self.outlier_probability}, outlier_distance="
                f"{self.outlier_distance}, outlier_scale={self.outlier_scale}, "
                f"flip_probability={self.flip_probability})")

    def _x1_cdf(self, t: float) -> float:
        """P(x1 <= t) under the two-cluster mixture."""
        pi, M, s = self.outlier_probability, self.outlier_distance, self.outlier_scale
        return float((1.0 - pi) * stats.norm.cdf(t) + pi * stats.norm.cdf((t - M) / s))

    @property
    def positive_rate(self) -> float:
        """P(y = +1) = 1/2 + (1 - 2q) pi (1/2 - Phi(-M/s)): the outliers are mostly +1."""
        a = 1.0 - 2.0 * self.flip_probability
        return 0.5 + 0.5 * a * (1.0 - 2.0 * self._x1_cdf(0.0))

    def bayes_classifier(self, X: ArrayLike) -> np.ndarray:
        """sign(x1), with sign(0) = +1."""
        return _signs(_check_X(X, 2)[:, 0])

    def sample(self, n: int, rng: np.random.Generator | np.random.SeedSequence | int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """n independent observations (:meth:`Simulator.sample <cudbound.datasets.base.Simulator.sample>`)."""
        n = _check_n(n)
        rng = np.random.default_rng(rng)
        out = rng.random(n) < self.outlier_probability
        X = rng.standard_normal((n, 2))
        X[out] = X[out] * self.outlier_scale + np.array([self.outlier_distance, 0.0])
        return X, _flip(self.bayes_classifier(X), self.flip_probability, rng)

    def limit_coef(self) -> np.ndarray:
        """beta* for the squared loss and the linear basis (1, x1, x2), in closed form.

        With a = 1 - 2q, Phi the standard normal cdf and phi its density:

        * E[x] = (pi M, 0); E[x1^2] = 1 - pi + pi (s^2 + M^2); E[x2^2] = 1 - pi + pi s^2;
          E[x1 x2] = 0.
        * E[y] = a pi (1 - 2 Phi(-M/s)).
        * E[x1 y] = a ((1 - pi) sqrt(2/pi0) + pi E|N(M, s^2)|), with pi0 = 3.14159... and
          E|N(M, s^2)| = s sqrt(2/pi0) exp(-M^2 / (2 s^2)) + M (1 - 2 Phi(-M/s)).
        * E[x2 y] = 0: x2 is independent of (x1, y) and centred in both clusters.

        The normal equations split into a 2 x 2 system for (b_0, b_1), solved here, and
        b_2 = E[x2 y] / E[x2^2] = 0 exactly.

        Returns
        -------
        ndarray of shape (3,)
        """
        pi, M, s = self.outlier_probability, self.outlier_distance, self.outlier_scale
        a = 1.0 - 2.0 * self.flip_probability
        tail = stats.norm.cdf(-M / s)
        e_y = a * pi * (1.0 - 2.0 * tail)
        e_abs = s * math.sqrt(2.0 / math.pi) * math.exp(-M * M / (2.0 * s * s)) + M * (1.0 - 2.0 * tail)
        e_x1y = a * ((1.0 - pi) * math.sqrt(2.0 / math.pi) + pi * e_abs)
        gram = np.array([[1.0, pi * M], [pi * M, 1.0 - pi + pi * (s * s + M * M)]])
        b0, b1 = np.linalg.solve(gram, [e_y, e_x1y])
        return np.array([b0, b1, 0.0])

    @property
    def limit_error(self) -> float:
        """Error of f* = sign(b_0 + b_1 x1), in closed form.

        Because y = epsilon sign(x1), the error of any classifier g(x) is
        q + (1 - 2q) P(g(x) != sign(x1)). For b_1 > 0 (always the case: x1 and y are
        positively correlated) f* predicts +1 iff x1 >= t* = -b_0/b_1, and disagrees with
        sign(x1) exactly when x1 lies between 0 and t*, an event of probability
        |F(t*) - F(0)| with F the mixture cdf of x1.
        """
        b0, b1, _ = self.limit_coef()
        q = self.flip_probability
        if b1 == 0.0:  # constant classifier sign(b0)
            disagree = self._x1_cdf(0.0) if b0 >= 0.0 else 1.0 - self._x1_cdf(0.0)
        else:
            between = abs(self._x1_cdf(-b0 / b1) - self._x1_cdf(0.0))
            disagree = between if b1 > 0.0 else 1.0 - between
        return float(q + (1.0 - 2.0 * q) * disagree)


# --------------------------------------------------------------------------- chi^2 small
class ChiSquareSmall(LabelNoise):
    """Label "the chi-square statistic is small": beta* = 0, a non-regular case.

    The generative model (d = ``n_features``, q = ``flip_probability``) is

    .. math::

        x \\sim N(0, I_d), \\qquad
        y = \\epsilon \\, s(x), \\qquad
        s(x) = +1 \\text{ if } \\|x\\|^2 \\le m_d, \\; -1 \\text{ otherwise},

    where ||x||^2 ~ chi^2_d and m_d is the median of chi^2_d (m_2 = 2 log 2 exactly),
    and P(epsilon = -1) = q independently of x. The noise is low (q = 0.05 by
    default): the labels are nearly a deterministic function of x. The Bayes classifier
    is s(x) and the **Bayes error is q exactly**; each class has probability 1/2.

    The basis is ``"linear"``, phi(x) = (1, x_1, ..., x_d), blind to a radial rule.

    **beta* = 0 exactly.** The Gram matrix E[phi phi'] is the identity (x ~ N(0, I)),
    so beta* = E[phi y] = (E[y], E[x_1 y], ..., E[x_d y]).

    * E[y] = (1 - 2q) (P(chi^2_d <= m_d) - P(chi^2_d > m_d)) = 0, as m_d is the median
      of a continuous law.
    * For each j the reflection x_j -> -x_j leaves the law of x unchanged and leaves
      ||x||^2, hence s(x) and (with the independent flip) y, unchanged. So (x_j, y)
      and (-x_j, y) have the same law and E[x_j y] = -E[x_j y] = 0.

    The limit classifier is sign(phi(x)' 0) = sign(0) = +1 everywhere, whose error is
    P(y = -1) = 1/2 (``limit_error``), far from the Bayes error. Since beta* = 0 lies on
    every boundary between sign patterns, sqrt(n) beta-hat has a non-degenerate limit
    law and the fitted classifier keeps a random direction however large n is: the
    non-regular case for the bootstrap of Table 1.

    Parameters
    ----------
    n_features : int, default 2
        Dimension d >= 1 (the degrees of freedom of the chi-square statistic).
    flip_probability : float, default 0.05
        Label-noise probability q in [0, 1/2).

    Examples
    --------
    >>> from cudbound.datasets import ChiSquareSmall
    >>> gen = ChiSquareSmall()
    >>> gen.limit_coef().tolist(), gen.limit_error, gen.bayes_error
    ([0.0, 0.0, 0.0], 0.5, 0.05)
    """

    name = "chi2_small"
    basis = "linear"

    def __init__(self, n_features: int = 2, flip_probability: float = 0.05):
        self.n_features = check_scalar(n_features, "n_features", min_val=1)
        self.flip_probability = _check_probability(flip_probability, "flip_probability")
        # the median of chi^2_d; 2 log 2 in closed form for d = 2
        self.threshold = 2.0 * math.log(2.0) if self.n_features == 2 else float(stats.chi2.median(self.n_features))

    def __repr__(self) -> str:
        return f"ChiSquareSmall(n_features={self.n_features}, flip_probability={self.flip_probability})"

    @property
    def positive_rate(self) -> float:
        """P(y = +1) = 1/2."""
        return 0.5

    def bayes_classifier(self, X: ArrayLike) -> np.ndarray:
        """s(x) = +1 if ||x||^2 <= m_d, else -1."""
        X = _check_X(X, self.n_features)
        return _signs(self.threshold - np.sum(X * X, axis=1))

    def sample(self, n: int, rng: np.random.Generator | np.random.SeedSequence | int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """n independent observations (:meth:`Simulator.sample <cudbound.datasets.base.Simulator.sample>`)."""
        n = _check_n(n)
        rng = np.random.default_rng(rng)
        X = rng.standard_normal((n, self.n_features))
        return X, _flip(self.bayes_classifier(X), self.flip_probability, rng)

    def limit_coef(self) -> np.ndarray:
        """beta* = 0 exactly, for the squared loss and the linear basis (proof in the class docstring).

        Returns
        -------
        ndarray of shape (n_features + 1,)
        """
        return np.zeros(self.n_features + 1)

    @property
    def limit_error(self) -> float:
        """Error of sign(phi(x)' 0) = +1: P(y = -1) = 1/2."""
        return 0.5


# --------------------------------------------------------------------------- Three Points
class ThreePoints(Simulator):
    """x takes three values; the least-squares line misclassifies a heavy point.

    The feature is one-dimensional and takes the value ``points[k]`` with probability
    ``probabilities[k]`` (k = 0, 1, 2); given x = points[k], y = +1 with probability
    eta_k = ``positive_probabilities[k]``. The defaults are

    ====  =====  ====  =========  =====
    k     x_k    p_k   eta_k      Bayes
    ====  =====  ====  =========  =====
    0     0      0.45  0.05       -1
    1     1      0.35  0.95       +1
    2     3      0.20  0.50       +1 (tie)
    ====  =====  ====  =========  =====

    The Bayes classifier predicts +1 where eta_k >= 1/2 (a tie counted as +1, like
    sign(0) = +1) and the **Bayes error is sum_k p_k min(eta_k, 1 - eta_k)** = 0.14
    exactly. It is a threshold rule, so the linear basis (1, x) contains it.

    The point x = 3 carries no information (eta = 1/2) but high leverage: the
    least-squares line through the weighted conditional means E[y | x_k] = 2 eta_k - 1 =
    (-0.9, 0.9, 0) is dragged down at x = 1, where phi(1)' beta* = -0.074 < 0. So f*
    labels x = 1 as -1 and its error is 0.455, far above the Bayes error 0.14.

    Because that fitted value is close to 0 relative to its sampling spread at n = 30 or
    50, the fitted classifier switches between f* (error 0.455) and the Bayes rule
    (error 0.14) from one training set to the next, and the training error is a
    two-component mixture: bimodal and discrete, with excess kurtosis about -1.2 at
    n = 30 (see ``docs/datasets.md``). Everything is exact: beta* solves a 2 x 2 system
    of moments, and :meth:`error_rate` gives the error of any (b_0, b_1).

    Parameters
    ----------
    points : array_like of 3 floats, default (0, 1, 3)
        The three distinct values of x.
    probabilities : array_like of 3 floats, default (0.45, 0.35, 0.2)
        Their probabilities: positive, summing to 1.
    positive_probabilities : array_like of 3 floats, default (0.05, 0.95, 0.5)
        P(y = +1 | x = points[k]), each in [0, 1].

    Examples
    --------
    >>> from cudbound.datasets import ThreePoints
    >>> gen = ThreePoints()
    >>> gen.limit_coef().round(4).tolist()
    [-0.395, 0.321]
    >>> round(gen.bayes_error, 4), round(gen.limit_error, 4)
    (0.14, 0.455)
    >>> round(gen.error_rate([-0.5, 1.0]), 4)  # threshold at x = 0.5: the Bayes rule
    0.14
    """

    name = "three_points"
    basis = "linear"
    n_features = 1

    def __init__(self, points: ArrayLike = (0.0, 1.0, 3.0), probabilities: ArrayLike = (0.45, 0.35, 0.2),
                 positive_probabilities: ArrayLike = (0.05, 0.95, 0.5)):
        pts = self._vector(points, "points")
        if len(np.unique(pts)) != 3:
            raise ValueError(f"`points` must be three distinct values; got {points!r}.")
        probs = self._vector(probabilities, "probabilities")
        if np.any(probs <= 0.0) or abs(probs.sum() - 1.0) > 1e-12:
            raise ValueError(f"`probabilities` must be three positive numbers summing to 1; got {probabilities!r}.")
        eta = self._vector(positive_probabilities, "positive_probabilities")
        if np.any((eta < 0.0) | (eta > 1.0)):
            raise ValueError(
                f"`positive_probabilities` must be three numbers in [0, 1]; got {positive_probabilities!r}.")
        self.points, self.probabilities, self.positive_probabilities = pts, probs / probs.sum(), eta

    @staticmethod
    def _vector(value, name):
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"`{name}` must be three finite numbers; got {value!r}.") from None
        if arr.shape != (3,) or not np.all(np.isfinite(arr)):
            raise ValueError(f"`{name}` must be three finite numbers; got {value!r}.")
        return arr

    def __repr__(self) -> str:
        return (f"ThreePoints(points={self.points.tolist()}, probabilities={self.probabilities.tolist()}, "
                f"positive_probabilities={self.positive_probabilities.tolist()})")

    def _index(self, X) -> np.ndarray:
        """Index k of each row's value among ``points``; other values raise."""
        x = _check_X(X, 1)[:, 0]
        match = x[:, None] == self.points[None, :]
        if not np.all(match.any(axis=1)):
            bad = x[~match.any(axis=1)][0]
            raise ValueError(f"`X` must take only the values {self.points.tolist()}; got {bad!r}.")
        return np.argmax(match, axis=1)

    @property
    def positive_rate(self) -> float:
        """P(y = +1) = sum_k p_k eta_k (0.455 with the defaults)."""
        return float(self.probabilities @ self.positive_probabilities)

    @property
    def bayes_error(self) -> float:
        """sum_k p_k min(eta_k, 1 - eta_k), exact."""
        eta = self.positive_probabilities
        return float(self.probabilities @ np.minimum(eta, 1.0 - eta))

    def bayes_classifier(self, X: ArrayLike) -> np.ndarray:
        """+1 where eta_k >= 1/2, else -1 (X may only take the three values)."""
        return np.where(self.positive_probabilities >= 0.5, 1, -1)[self._index(X)]

    def sample(self, n: int, rng: np.random.Generator | np.random.SeedSequence | int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """n independent observations (:meth:`Simulator.sample <cudbound.datasets.base.Simulator.sample>`)."""
        n = _check_n(n)
        rng = np.random.default_rng(rng)
        k = rng.choice(3, size=n, p=self.probabilities)
        y = np.where(rng.random(n) < self.positive_probabilities[k], 1, -1)
        return self.points[k][:, None].copy(), y

    def limit_coef(self) -> np.ndarray:
        """beta* for the squared loss and the linear basis (1, x), exactly.

        With m_k = 2 eta_k - 1 = E[y | x_k], the normal equations are

            [1      E[x]  ] beta* = [E[y]  ]    E[x^j] = sum_k p_k x_k^j,
            [E[x]   E[x^2]]         [E[x y]],   E[x^j y] = sum_k p_k x_k^j m_k,

        i.e. b_1 = Cov(x, y) / Var(x) and b_0 = E[y] - b_1 E[x]. With the defaults
        b_1 = 0.4005 / 1.2475 = 801/2495 and b_0 = -0.09 - 0.95 b_1 = -1971/4990.

        Returns
        -------
        ndarray of shape (2,)
        """
        p, x, m = self.probabilities, self.points, 2.0 * self.positive_probabilities - 1.0
        ex, ey = p @ x, p @ m
        b1 = (p @ (x * m) - ex * ey) / (p @ (x * x) - ex * ex)
        return np.array([ey - b1 * ex, b1])

    def error_rate(self, beta: ArrayLike) -> float:
        """Exact generalization error of sign(b_0 + b_1 x) (sign(0) = +1).

        Parameters
        ----------
        beta : array_like of shape (2,)
            Coefficients (intercept, slope) on the linear basis.

        Returns
        -------
        float
            sum_k p_k (1 - eta_k if b_0 + b_1 x_k >= 0 else eta_k), a value within rounding of 0
            counting as 0 (:func:`cudbound.ties.decision_signs`).
        """
        beta = np.asarray(beta, dtype=float)
        if beta.shape != (2,) or not np.all(np.isfinite(beta)):
            raise ValueError(f"`beta` must be a finite vector of length 2 (intercept, slope); got {beta!r}.")
        # sign(0) = +1 within rounding: a line through a point at 0 in exact arithmetic predicts +1 there
        positive = decision_signs(beta[0] + beta[1] * self.points, abs(beta[0]) + np.abs(beta[1] * self.points)) > 0
        eta = self.positive_probabilities
        return float(self.probabilities @ np.where(positive, 1.0 - eta, eta))

    @property
    def limit_error(self) -> float:
        """Error of sign(b_0* + b_1* x), exact (0.455 with the defaults)."""
        return self.error_rate(self.limit_coef())


SIMULATED = {gen.name: gen for gen in (Donut(), Outlier(), ChiSquareSmall(), ThreePoints())}
"""Name -> generator with the coverage study's default parameters."""
