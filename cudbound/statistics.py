"""The formulas every interval of the package shares: critical values and p-values of the normal
and t distributions, the Wilson score interval, and intervals from bootstrap values (percentile,
basic, BCa).

With delta = 1 - confidence_level:

* critical values: z = Phi^{-1}(1 - delta/2) two-sided, Phi^{-1}(1 - delta) one-sided (``alternative``
  "less" or "greater", as in scipy), likewise t_{df} for Student's t;
* p-values of a z or t statistic against ``alternative``;
* :func:`wilson_interval`: a binomial proportion's score interval (Wilson 1927);
* :func:`percentile_interval`, :func:`basic_interval`, :func:`bca_interval`: intervals read from
  the B values of a statistic recomputed on bootstrap resamples (Efron & Tibshirani 1993,
  ch. 13-14; Davison & Hinkley 1997, section 5.2).

Every interval from bootstrap values takes its ends as quantiles Q(p) of the B values, always by
one definition, numpy.quantile's default (linear interpolation between order statistics, Hyndman
& Fan 1996 type 7, R's default; pROC's and scipy.stats.bootstrap's): with v_(0) <= ... <= v_(B-1)
the sorted values, h = (B - 1) p and j = floor(h),

    Q(p) = v_(j) + (h - j) (v_(j+1) - v_(j)).

The resamples themselves are drawn in :mod:`cudbound.resampling`.

References
----------
Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
Davison, A. C. and Hinkley, D. V. (1997). Bootstrap Methods and their Application. Cambridge
University Press. Hyndman, R. J. and Fan, Y. (1996). Sample quantiles in statistical packages.
The American Statistician 50(4), 361-365. Wilson, E. B. (1927). JASA 22(158), 209-212.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from ._docstrings import fill_doc
from ._validation import check_confidence_level, check_scalar, check_values
from .results import ConfidenceInterval

__all__ = ["ALTERNATIVES", "check_alternative", "normal_critical_value", "t_critical_value", "normal_p_value",
           "t_p_value", "wilson_interval", "percentile_levels", "quantile_interval", "percentile_interval",
           "basic_interval", "BCaLevels", "bca_levels", "bca_interval"]

_DOC = {"level_returns": """confidence_level : float in (0, 1)

    Returns
    -------
    ConfidenceInterval"""}
"""The end of the Parameters section and the Returns section of the intervals' docstrings
(:func:`cudbound._docstrings.fill_doc`)."""

ALTERNATIVES = ("two-sided", "less", "greater")
"""The alternatives of every test and one-sided bound, as in scipy: ``"less"`` says the quantity
lies below the null value (for a comparison: A's error, or AUC, below B's)."""


def check_alternative(alternative: Any) -> str:
    """``alternative`` as one of :data:`ALTERNATIVES` (a ValueError otherwise)."""
    if not isinstance(alternative, str) or alternative not in ALTERNATIVES:
        raise ValueError(f"`alternative` must be 'two-sided', 'less' or 'greater'; got {alternative!r}.")
    return alternative


def _tail(confidence_level: float, alternative: str) -> float:
    """The upper tail probability of the critical value: delta/2 two-sided, delta one-sided."""
    level = check_confidence_level(confidence_level)
    return (1.0 - level) / 2.0 if check_alternative(alternative) == "two-sided" else 1.0 - level


# --------------------------------------------------------------------------- critical values, p-values

def normal_critical_value(confidence_level: float, alternative: str = "two-sided") -> float:
    """The standard normal critical value of a Wald interval or bound: z = Phi^{-1}(1 - delta/2)
    two-sided, Phi^{-1}(1 - delta) for ``alternative="less"`` or ``"greater"`` (a one-sided bound,
    est + z se or est - z se), delta = 1 - confidence_level; computed as ``scipy.stats.norm.isf``
    of the tail.

    >>> round(normal_critical_value(0.95), 6), round(normal_critical_value(0.95, "less"), 6)
    (1.959964, 1.644854)
    """
    return float(stats.norm.isf(_tail(confidence_level, alternative)))


def t_critical_value(confidence_level: float, df: float, alternative: str = "two-sided") -> float:
    """Student's t critical value with ``df`` degrees of freedom: t_{df}^{-1}(1 - delta/2)
    two-sided, t_{df}^{-1}(1 - delta) one-sided (as :func:`normal_critical_value`); computed as
    ``scipy.stats.t.isf`` of the tail.

    >>> round(t_critical_value(0.95, 4), 6)
    2.776445
    """
    df = check_scalar(df, "df", numbers.Real, min_val=0.0, include_boundaries="neither")
    return float(stats.t.isf(_tail(confidence_level, alternative), df))


def normal_p_value(z: float, alternative: str = "two-sided") -> float:
    """The p-value of a standard normal statistic ``z`` (infinite allowed): 2 (1 - Phi(|z|)),
    capped at 1, two-sided; Phi(z) for ``"less"``; 1 - Phi(z) for ``"greater"``.

    >>> round(normal_p_value(1.959964), 4), normal_p_value(0.0, "less")
    (0.05, 0.5)
    """
    if check_alternative(alternative) == "two-sided":
        return float(min(1.0, 2.0 * stats.norm.sf(abs(z))))
    return float(stats.norm.cdf(z) if alternative == "less" else stats.norm.sf(z))


def t_p_value(t: float, df: float, alternative: str = "two-sided") -> float:
    """The p-value of a Student t statistic with ``df`` degrees of freedom, as
    :func:`normal_p_value` with the t distribution's tails.

    >>> round(t_p_value(2.776445, 4), 4)
    0.05
    """
    if check_alternative(alternative) == "two-sided":
        return float(min(1.0, 2.0 * stats.t.sf(abs(t), df)))
    return float(stats.t.cdf(t, df) if alternative == "less" else stats.t.sf(t, df))


# --------------------------------------------------------------------------- Wilson

@fill_doc(**_DOC)
def wilson_interval(proportion: float, n: float, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Wilson's score interval for a binomial proportion: the normal approximation, inverted.

    The p with |t - p| <= z sqrt(p (1 - p) / n), t = ``proportion``, z = Phi^{-1}(1 - delta/2):

        (2 n t + z^2 -/+ z sqrt(z^2 + 4 n t (1 - t))) / (2 (n + z^2)),

    within [0, 1] (the ends are clipped against rounding), of positive width at t = 0 and 1
    (Wilson 1927; Kohavi 1995, section 2). ``n`` may be an effective, non-whole size. The same
    interval as ``statsmodels.stats.proportion.proportion_confint(t n, n, method="wilson")``.

    Parameters
    ----------
    proportion : float in [0, 1]
        The observed proportion t (errors / trials).
    n : float > 0
        The number of trials.
    %(level_returns)s

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
    JASA 22(158), 209-212. Kohavi, R. (1995). IJCAI 1995, section 2.

    >>> wilson_interval(0.0, 30)
    ConfidenceInterval(low=0.0, high=0.1135...)
    """
    t = check_scalar(proportion, "proportion", numbers.Real, min_val=0.0, max_val=1.0)
    n = check_scalar(n, "n", numbers.Real, min_val=0.0, include_boundaries="right")
    z = normal_critical_value(confidence_level)
    centre = 2.0 * n * t + z * z
    half = z * math.sqrt(z * z + 4.0 * n * t * (1.0 - t))
    den = 2.0 * (n + z * z)
    return ConfidenceInterval(max(0.0, (centre - half) / den), min(1.0, (centre + half) / den))


# --------------------------------------------------------------------------- intervals from bootstrap values

def percentile_levels(confidence_level: float) -> tuple[float, float]:
    """The quantile levels (delta/2, 1 - delta/2) of an equal-tailed interval.

    >>> percentile_levels(0.9)
    (0.04999999999999999, 0.95)
    """
    alpha = (1.0 - check_confidence_level(confidence_level)) / 2.0
    return alpha, 1.0 - alpha


def quantile_interval(bootstrap_values: ArrayLike, levels: tuple[float, float]) -> ConfidenceInterval:
    """(Q(p_low), Q(p_high)) of the values, Q the quantile of the module docstring (type 7).

    >>> quantile_interval([3.0, 1.0, 2.0, 4.0], (0.5, 1.0))
    ConfidenceInterval(low=2.5, high=4.0)
    """
    values = check_values(bootstrap_values, "bootstrap_values", 1)
    for p in levels:
        check_scalar(p, "levels", numbers.Real, min_val=0.0, max_val=1.0)
    return _quantiles(values, levels)


def _quantiles(values: np.ndarray, levels: tuple[float, float]) -> ConfidenceInterval:
    low, high = np.quantile(values, levels)
    return ConfidenceInterval(float(low), float(high))


@fill_doc(**_DOC)
def percentile_interval(bootstrap_values: ArrayLike, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Percentile bootstrap interval [Q(delta/2), Q(1 - delta/2)] of the bootstrap values.

    Q is the quantile of the module docstring (type 7), exactly as
    ``scipy.stats.bootstrap(..., method="percentile")`` reads it from its
    ``bootstrap_distribution``. Not clipped.

    Parameters
    ----------
    bootstrap_values : (B,) array, B >= 2
        The statistic recomputed on each bootstrap sample.
    %(level_returns)s

    References
    ----------
    Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap, ch. 13.
    """
    return _quantiles(check_values(bootstrap_values, "bootstrap_values", 2), percentile_levels(confidence_level))


@fill_doc(**_DOC)
def basic_interval(theta_hat: float, bootstrap_values: ArrayLike, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Basic ("reverse percentile", "corrected") bootstrap interval.

    [2 theta_hat - Q(1 - delta/2), 2 theta_hat - Q(delta/2)], with Q as in
    :func:`percentile_interval`: the percentile interval reflected about theta_hat, so of the
    same width. Equals ``scipy.stats.bootstrap(..., method="basic")``. Not clipped.

    Parameters
    ----------
    theta_hat : float
        The statistic on the original data.
    bootstrap_values : (B,) array, B >= 2
    %(level_returns)s

    References
    ----------
    Davison, A. C. and Hinkley, D. V. (1997). Bootstrap Methods and their Application.
    Cambridge University Press, section 5.2 (basic bootstrap confidence limits).
    """
    theta = check_scalar(theta_hat, "theta_hat", numbers.Real)
    low, high = percentile_interval(bootstrap_values, confidence_level)
    return ConfidenceInterval(float(2.0 * theta - high), float(2.0 * theta - low))


class BCaLevels(NamedTuple):
    """The bias correction z0 of a BCa interval and the quantile levels of its two ends."""

    bias_correction: float
    low: float
    high: float


def bca_levels(theta_hat: float, bootstrap_values: ArrayLike, acceleration: float,
               confidence_level: float = 0.95) -> BCaLevels:
    """The levels of Efron's bias-corrected and accelerated (BCa) interval.

    With the B values theta*_b, the acceleration a (computed by the caller, e.g. from a
    jackknife) and z_{p} = Phi^{-1}(p):

        z0 = Phi^{-1}(p0),  p0 = (#{theta*_b < theta_hat} + #{theta*_b <= theta_hat}) / (2B),
        alpha_1,2 = Phi(z0 + (z0 + z_{delta/2, 1-delta/2}) / (1 - a (z0 + z_{delta/2, 1-delta/2}))),

    as ``scipy.stats.bootstrap(method="BCa")`` computes them (Efron & Tibshirani 1993, ch. 14 and
    section 14.3). When theta_hat lies outside the values (p0 = 0 or 1, z0 infinite) both levels
    are the formula's limit, 0 or 1.

    >>> [round(v, 6) for v in bca_levels(2.0, [1.0, 2.0, 3.0], 0.0, 0.9)]   # z0 = 0, a = 0: the percentile levels
    [0.0, 0.05, 0.95]
    """
    values = check_values(bootstrap_values, "bootstrap_values", 1)
    return _bca_levels(check_scalar(theta_hat, "theta_hat", numbers.Real), values,
                       check_scalar(acceleration, "acceleration", numbers.Real), confidence_level)


def _bca_levels(theta: float, values: np.ndarray, a: float, confidence_level: float) -> BCaLevels:
    levels = percentile_levels(confidence_level)
    p = (np.count_nonzero(values < theta) + np.count_nonzero(values <= theta)) / (2.0 * values.shape[0])
    z0 = float(special.ndtri(p))
    if not np.isfinite(z0):
        edge = 0.0 if z0 < 0 else 1.0
        return BCaLevels(z0, edge, edge)
    zs = special.ndtri(np.array(levels))
    low, high = special.ndtr(z0 + (z0 + zs) / (1.0 - a * (z0 + zs)))
    return BCaLevels(z0, float(low), float(high))


def bca_interval(theta_hat: float, bootstrap_values: ArrayLike, acceleration: float,
                 confidence_level: float = 0.95) -> ConfidenceInterval:
    """Efron's BCa interval (Q(alpha_1), Q(alpha_2)) of the bootstrap values, not clipped: the
    levels alpha_1,2 from :func:`bca_levels`, Q the quantile of the module docstring. The caller
    computes the acceleration, e.g. (1/6) sum U_i^3 / (sum U_i^2)^(3/2) of the jackknife's U_i
    (Efron & Tibshirani 1993, eq. 14.15).

    >>> [round(v, 6) for v in bca_interval(2.0, [1.0, 2.0, 3.0], 0.0, 0.9)]   # the percentile interval
    [1.1, 2.9]
    """
    values = check_values(bootstrap_values, "bootstrap_values", 1)
    _, low, high = bca_levels(theta_hat, values, acceleration, confidence_level)
    return _quantiles(values, (low, high))
