"""Hold-out (test-set) bounds on the true risk from k errors on m test points.

A classifier f that was *not* fitted on the test set T = {z_1, ..., z_m} makes
k = m R_T(f) errors on it, and k ~ Binomial(m, R(f)) exactly, R(f) the true risk.
Shah (2008) writes the binomial cumulative distribution as

    Bin(m, k, p) = P_p(X <= k) = sum_{i=0}^{k} C(m, i) p^i (1 - p)^(m - i),

and, after Langford (2005), inverts its tails:

* upper bound (Theorem 1): B_u = max{p : Bin(m, k, p) >= delta}, so that
  P(R(f) <= B_u) >= 1 - delta;
* lower bound (Theorem 2): B_l = min{p : P_p(X >= k) >= delta}, so that
  P(R(f) >= B_l) >= 1 - delta.

The paper prints the lower bound as min{p : 1 - Bin(m, k, p) >= delta}, i.e. with
P_p(X > k); that bound is not valid (with k = 0 it is not 0), the tail must
include k itself: 1 - Bin(m, k - 1, p) = P_p(X >= k) (``docs/method.md``).
Written with the regularised incomplete beta function both are beta quantiles,
the one-sided Clopper-Pearson (1934) limits:

    B_u = F^{-1}_{Beta(k + 1, m - k)}(1 - delta)   (B_u = 1 when k = m),
    B_l = F^{-1}_{Beta(k, m - k + 1)}(delta)        (B_l = 0 when k = 0),

with the closed forms B_u = 1 - delta^(1/m) at k = 0 and B_l = delta^(1/m) at k = m.
Two-sided at level 1 - delta: [B_l(delta / 2), B_u(delta / 2)], the exact
(Clopper-Pearson) binomial interval; Shah's Table 2 uses delta = 0.025 per side.

References
----------
.. [1] Shah, M. (2008). Hold-out risk bounds for classifier performance evaluation;
       Risk bounds for classifier
       evaluation: possibilities and challenges. 3rd Workshop on Evaluation Methods
       for Machine Learning, ICML 2008.
.. [2] Langford, J. (2005). Tutorial on practical prediction theory for
       classification. Journal of Machine Learning Research 6, 273-306.
.. [3] Clopper, C. J. and Pearson, E. S. (1934). The use of confidence or fiducial
       limits illustrated in the case of the binomial. Biometrika 26, 404-413.
"""
from __future__ import annotations

import math
import numbers

from scipy import special

from .._deprecation import renamed
from .._docstrings import fill_doc
from .._validation import check_confidence_level, check_scalar
from .._warnings import warn
from ..results import ConfidenceInterval
from ..statistics import normal_critical_value

__all__ = ["binomial_upper", "binomial_lower", "binomial_interval", "gaussian_interval"]

_DOC = {
    "km": """k : int
        Number of test errors, 0 <= k <= m.
    m : int
        Number of test points, m >= 1.""",
    "delta": """delta : float in (0, 1]
        One-sided error probability.""",
}
"""Parameter descriptions shared by the bounds (:func:`cudbound._docstrings.fill_doc`)."""
_DOC["bound_parameters"] = f"""Parameters
    ----------
    {_DOC["km"]}
    {_DOC["delta"]}"""

_ALTERNATIVES = {"two-sided": "two-sided", "less": "upper", "greater": "lower"}
"""``alternative`` (scipy's words) -> the bound it asks for: both ends, [0, B_u] or [B_l, 1]."""
_OLD_SIDES = {2: "two-sided", "upper": "less", "lower": "greater"}
"""The values of ``sides``, deprecated, as ``alternative`` values."""
_SPREADS = ("standard_error", "deviation")


# --------------------------------------------------------------------------- validation

def _whole(value, name: str, low: int, high: int | None = None) -> int:
    """An integer (or a float holding a whole number) in [low, high]."""
    return check_scalar(value, name, "whole", min_val=low, max_val=high)


def _km_iv(k, m):
    m = _whole(m, "m", 1)
    k = _whole(k, "k", 0, m)
    return k, m


def _delta_iv(delta):
    return check_scalar(delta, "delta", numbers.Real, min_val=0.0, max_val=1.0, include_boundaries="right")


def _level_iv(confidence_level):
    return check_confidence_level(confidence_level)


def _binomial_upper_iv(k, m, delta):
    return (*_km_iv(k, m), _delta_iv(delta))


def _binomial_lower_iv(k, m, delta):
    return (*_km_iv(k, m), _delta_iv(delta))


def _binomial_interval_iv(k, m, confidence_level, alternative):
    k, m = _km_iv(k, m)
    return k, m, _level_iv(confidence_level), _alternative_iv(alternative)


def sides_to_alternative(sides):
    """The ``alternative`` of a value of ``sides`` (deprecated): 2 -> 'two-sided', 'upper' -> 'less',
    'lower' -> 'greater'; anything else unchanged (``alternative``'s check then refuses it)."""
    key = sides.strip().lower() if isinstance(sides, str) else sides
    if isinstance(key, bool) or not isinstance(key, (str, numbers.Integral)):
        return sides
    return _OLD_SIDES.get(key, sides)


def _alternative_iv(alternative) -> str:
    """'two-sided', 'less' or 'greater' (scipy's words; the old values of ``sides``, 2, 'upper' and
    'lower', with a DeprecationWarning) -> the bound asked for: 'two-sided', 'upper' or 'lower'."""
    new = sides_to_alternative(alternative)
    if new is not alternative and new != alternative:
        warn(f"`alternative`={alternative!r}: {alternative!r} is a value of `sides`, which is deprecated and will "
             f"be removed in the next release; use `alternative`={new!r} instead.", DeprecationWarning)
    key = new.strip().lower() if isinstance(new, str) else new
    if not isinstance(key, str) or key not in _ALTERNATIVES:
        hint = " (one-sided: say which side, 'less' or 'greater')" if key == 1 else ""
        raise ValueError(f"`alternative` must be 'two-sided', 'less' or 'greater'; got {alternative!r}{hint}.")
    return _ALTERNATIVES[key]


def _gaussian_interval_iv(k, m, confidence_level, spread):
    k, m = _km_iv(k, m)
    level = _level_iv(confidence_level)
    if spread not in _SPREADS:
        raise ValueError(f"`spread` must be one of {list(_SPREADS)}; got {spread!r}.")
    return k, m, level, spread


# --------------------------------------------------------------------------- bounds

def _upper(k: int, m: int, delta: float) -> float:
    if k == m:
        return 1.0                               # Bin(m, m, p) = 1 for every p
    if k == 0:
        return -math.expm1(math.log(delta) / m)  # (1 - p)^m = delta
    return float(special.betainccinv(k + 1, m - k, delta))  # I_p(k + 1, m - k) = 1 - delta


def _lower(k: int, m: int, delta: float) -> float:
    if k == 0:
        return 0.0                               # P_p(X >= 0) = 1 for every p
    if k == m:
        return delta ** (1.0 / m)                # p^m = delta (exact for m = 1)
    return float(special.betaincinv(k, m - k + 1, delta))   # I_p(k, m - k + 1) = delta


@fill_doc(**_DOC)
def binomial_upper(k: int, m: int, delta: float) -> float:
    """Binomial tail inversion upper bound on the true risk (Langford 2005; Shah 2008, Theorem 1).

    B_u = max{p : Bin(m, k, p) >= delta}, where Bin(m, k, p) = P_p(X <= k) for
    X ~ Binomial(m, p). With probability at least 1 - delta over the draw of the
    test set, R(f) <= B_u. Equivalently the one-sided Clopper-Pearson upper limit

        B_u = F^{-1}_{Beta(k + 1, m - k)}(1 - delta),

    computed with the inverse regularised incomplete beta function.

    %(bound_parameters)s

    Returns
    -------
    float
        B_u in [0, 1]. Exact edges: B_u = 1 when k = m; B_u = 1 - delta^(1/m) when k = 0.

    References
    ----------
    Langford, J. (2005). Tutorial on practical prediction theory for classification.
    JMLR 6, 273-306 (test set bound). Shah, M. (2008). Hold-out risk bounds for
    classifier performance evaluation, Theorem 1.

    Examples
    --------
    >>> from cudbound.baselines import binomial_upper
    >>> round(binomial_upper(0, 100, 0.05), 6)   # 1 - 0.05 ** (1 / 100)
    0.029513
    """
    k, m, delta = _binomial_upper_iv(k, m, delta)
    return _upper(k, m, delta)


@fill_doc(**_DOC)
def binomial_lower(k: int, m: int, delta: float) -> float:
    """Binomial tail inversion lower bound on the true risk (Shah 2008, Theorem 2, corrected).

    B_l = min{p : P_p(X >= k) >= delta} = min{p : 1 - Bin(m, k - 1, p) >= delta}.
    With probability at least 1 - delta, R(f) >= B_l. The tail contains k: the
    paper's printed P_p(X > k) is not a valid bound (module docstring,
    ``docs/method.md``). Equivalently the one-sided Clopper-Pearson lower limit

        B_l = F^{-1}_{Beta(k, m - k + 1)}(delta).

    %(bound_parameters)s

    Returns
    -------
    float
        B_l in [0, 1]. Exact edges: B_l = 0 when k = 0; B_l = delta^(1/m) when k = m.

    References
    ----------
    Shah, M. (2008). Hold-out risk bounds for classifier performance evaluation,
    Theorem 2. Langford, J. (2005). JMLR 6, 273-306. Clopper, C. J. and Pearson, E. S.
    (1934). Biometrika 26, 404-413.

    Examples
    --------
    >>> from cudbound.baselines import binomial_lower
    >>> binomial_lower(0, 30, 0.025)
    0.0
    >>> round(binomial_lower(30, 30, 0.025), 6)   # 0.025 ** (1 / 30)
    0.884297
    """
    k, m, delta = _binomial_lower_iv(k, m, delta)
    return _lower(k, m, delta)


@renamed(sides="alternative")
@fill_doc(**_DOC)
def binomial_interval(k: int, m: int, confidence_level: float = 0.95,
                      alternative: str = "two-sided") -> ConfidenceInterval:
    """Exact binomial (Clopper-Pearson) interval from the two tail inversions.

    With delta = 1 - confidence_level, and ``alternative`` as in ``scipy.stats.binomtest``:

    * ``alternative="two-sided"`` (default): [B_l(delta / 2), B_u(delta / 2)], each tail
      at delta / 2 as in Shah's Table 2 (delta = 0.025 per side for 95 %). This is
      ``scipy.stats.binomtest(k, m).proportion_ci(confidence_level, method="exact")``.
    * ``alternative="less"``: [0, B_u(delta)], the one-sided upper bound (Langford's test set bound).
    * ``alternative="greater"``: [B_l(delta), 1].

    ``sides`` (2, 'upper', 'lower') is the old name of ``alternative`` ('two-sided', 'less',
    'greater'), deprecated.

    See :func:`binomial_upper` and :func:`binomial_lower` for B_u and B_l.

    Parameters
    ----------
    %(km)s
    confidence_level : float in (0, 1)
    alternative : 'two-sided', 'less' or 'greater'

    Returns
    -------
    ConfidenceInterval
        (low, high), always within [0, 1].

    References
    ----------
    Clopper, C. J. and Pearson, E. S. (1934). Biometrika 26, 404-413. Langford, J.
    (2005). JMLR 6, 273-306. Shah, M. (2008). Hold-out risk bounds for classifier
    performance evaluation, Theorems 1 and 2.

    Examples
    --------
    >>> from cudbound.baselines import binomial_interval
    >>> low, high = binomial_interval(9, 30, 0.95)
    >>> round(low, 4), round(high, 4)
    (0.1473, 0.494)
    """
    k, m, level, bound = _binomial_interval_iv(k, m, confidence_level, alternative)
    return _clopper_pearson(k, m, level, bound)


def _clopper_pearson(k: int, m: int, level: float, bound: str) -> ConfidenceInterval:
    """:func:`binomial_interval` on checked arguments; ``bound`` 'two-sided', 'upper' or 'lower'."""
    delta = 1.0 - level
    if bound == "upper":
        return ConfidenceInterval(0.0, _upper(k, m, delta))
    if bound == "lower":
        return ConfidenceInterval(_lower(k, m, delta), 1.0)
    return ConfidenceInterval(_lower(k, m, delta / 2.0), _upper(k, m, delta / 2.0))


@fill_doc(**_DOC)
def gaussian_interval(k: int, m: int, confidence_level: float = 0.95, *,
                      spread: str = "standard_error") -> ConfidenceInterval:
    """The Gaussian ("traditional") interval that Shah (2008) compares with, NOT clipped.

    With t = k / m and z = Phi^{-1}(1 - delta / 2), delta = 1 - confidence_level:

    * ``spread="standard_error"`` (default): t +/- z sqrt(t (1 - t) / m), the normal
      approximation to the binomial proportion (Wald interval), i.e. the central
      limit theorem argument of the paper's introduction: a Gaussian around the
      mean empirical risk, with its variance estimated from the test set.
    * ``spread="deviation"``: t +/- z sqrt(t (1 - t)), the standard deviation of a
      single 0-1 loss rather than of their mean. This is what the numbers of
      Shah's Table 2 are ("two standard deviation limits around the empirical
      risk"): e.g. R_T = 0.183 there gives [-0.592, 0.958] = 0.183 +/- 2 x 0.387.

    The interval is returned as computed, without clipping, because the point of
    the comparison is that it can leave [0, 1] (and that it has zero width when
    k = 0 or k = m), where the binomial interval cannot.

    Parameters
    ----------
    %(km)s
    confidence_level : float in (0, 1)
        Shah uses two standard deviations, i.e. confidence_level = 2 Phi(2) - 1 = 0.9545.
    spread : 'standard_error' or 'deviation'

    Returns
    -------
    ConfidenceInterval
        (t - h, t + h), possibly outside [0, 1].

    References
    ----------
    Shah, M. (2008). Hold-out risk bounds for classifier performance evaluation,
    sections 1 and 3 (Table 2, columns CI_l and CI_u).

    Examples
    --------
    >>> from cudbound.baselines import gaussian_interval
    >>> low, high = gaussian_interval(1, 20, 0.95)
    >>> low < 0 < high
    True
    """
    k, m, level, spread = _gaussian_interval_iv(k, m, confidence_level, spread)
    t = k / m
    z = normal_critical_value(level)
    sd = math.sqrt(t * (1.0 - t))
    half = z * sd / math.sqrt(m) if spread == "standard_error" else z * sd
    return ConfidenceInterval(t - half, t + half)
