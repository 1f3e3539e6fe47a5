"""Comparisons of two classifiers on one set of predictions (a test set, or out-of-fold predictions).

* :func:`mcnemar`: McNemar's test on the discordant pairs, exact (binomial), mid-p or chi-square;
* :func:`error_difference_interval`: an interval for the paired difference of the error rates
  (Tango's score interval, the default; Newcombe's hybrid score interval; Agresti & Min's);
* :func:`delong_test`: DeLong's test and interval for the difference of two correlated AUCs, by
  Sun & Xu's O(n log n) algorithm (:func:`cudbound.auc.delong_placements`).

The 2 x 2 table of the n paired outcomes (wrong = the prediction differs from the label):

===========  ===========  ===========
.            B wrong      B right
A wrong      n11          b
A right      c            n22
===========  ===========  ===========

The error rates are (n11 + b) / n and (n11 + c) / n, their difference A - B is (b - c) / n, and
only the b + c discordant pairs carry information about it.
"""
from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, stats

from .._validation import check_confidence_level, check_scores, encode_labels
from ..auc import delong_placements
from ..results import AUC_DIFFERENCE
from ..statistics import check_alternative, normal_critical_value, normal_p_value, wilson_interval
from .result import ComparisonResult, clipped, ratio_statistic

__all__ = ["mcnemar", "error_difference_interval", "delong_test", "paired_table", "INTERVAL_METHODS"]

INTERVAL_METHODS = ("tango", "newcombe", "agresti_min")
"""The methods of :func:`error_difference_interval`, the default first."""


def _labels_and(y_true, name_a, a, name_b, b, *, numeric: bool, pos_label=None):
    """The labels in {-1, +1} and the two other vectors, one per label, checked.

    Predicted labels (``numeric=False``) are only right or wrong, whichever class is called
    positive, so any two label values are taken as they are (strings such as "benign" /
    "malignant" too: the larger of the two plays +1 unless ``pos_label`` says otherwise). Scores
    (``numeric=True``) are higher for the positive class, so there the labels follow the package's
    contract: {-1, 1}, {0, 1}, booleans, true/false, yes/no, 1/0, any other pair with ``pos_label``."""
    if pos_label is None and not numeric:
        pos_label = _either_class(y_true)
    labels, encoding = encode_labels(y_true, name="y_true", pos_label=pos_label)
    n = labels.shape[0]
    out = []
    for name, v in ((name_a, a), (name_b, b)):
        arr = np.asarray(v)
        if arr.ndim == 2 and 1 in arr.shape:
            arr = arr.ravel()
        if arr.ndim != 1 or arr.shape[0] != n:
            raise ValueError(f"`{name}` must hold one value per label of `y_true` ({n}); got shape {arr.shape}.")
        if numeric:
            arr = check_scores(arr, n, name)
        else:
            arr = _as_labels(arr, name, encoding)
        out.append(arr)
    return labels, out[0], out[1]


def _either_class(y_true):
    """The larger of the two label values (None when there are not exactly two, or they do not
    sort: :func:`encode_labels` then says what is wrong)."""
    arr = np.asarray(y_true)
    if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
        return None
    try:
        values = np.unique(arr.ravel())
    except TypeError:               # None or mixed types among the labels
        return None
    return values[1] if values.shape[0] == 2 else None


def _as_labels(pred, name, encoding):
    """Predicted labels as -1/+1 by the encoding of ``y_true`` (a value that is neither class is an error)."""
    pos = np.array([p == encoding.positive for p in pred.tolist()]) if pred.dtype.kind == "O" else pred == encoding.positive
    neg = np.array([p == encoding.negative for p in pred.tolist()]) if pred.dtype.kind == "O" else pred == encoding.negative
    pos, neg = np.asarray(pos, dtype=bool), np.asarray(neg, dtype=bool)
    if not np.all(pos | neg):
        i = int(np.flatnonzero(~(pos | neg))[0])
        raise ValueError(f"`{name}` must hold the two classes of `y_true` ({encoding.negative!r}, "
                         f"{encoding.positive!r}); position {i} holds {pred[i]!r}.")
    return np.where(pos, 1.0, -1.0)


def paired_table(y_true: ArrayLike, pred_a: ArrayLike, pred_b: ArrayLike) -> np.ndarray:
    """The 2 x 2 table [[n11, b], [c, n22]] of the paired outcomes (module docstring): rows A wrong /
    right, columns B wrong / right. The labels may be any two values (right or wrong does not
    depend on which class is positive); the predictions must hold those values.

    >>> paired_table([1, 1, 0, 0, 1], [1, 0, 0, 1, 0], [1, 1, 1, 1, 0]).tolist()
    [[2, 1], [1, 1]]
    >>> paired_table(["cat", "dog", "dog"], ["cat", "cat", "dog"], ["dog", "dog", "dog"]).tolist()
    [[0, 1], [1, 1]]
    """
    labels, a, b = _labels_and(y_true, "pred_a", pred_a, "pred_b", pred_b, numeric=False)
    wa, wb = a != labels, b != labels
    return np.array([[np.sum(wa & wb), np.sum(wa & ~wb)], [np.sum(~wa & wb), np.sum(~wa & ~wb)]], dtype=np.int64)


def _binomial_pvalues(b: int, c: int, alternative: str) -> tuple[float, float]:
    """(exact, mid-p) p-values of b among the b + c discordant pairs, X ~ Bin(b + c, 1/2) under the null.

    Two-sided: the tables at least as far from (b + c) / 2 as the observed one; the mid-p counts
    the tables exactly as far with half their probability (Fagerland, Lydersen & Laake 2013).
    One-sided: "less" (A's error below B's: b small) P(X <= b), "greater" P(X >= b); mid-p
    likewise with half of P(X = b)."""
    N = b + c
    if N == 0:
        return 1.0, 1.0
    if alternative == "two-sided":
        k = min(b, c)
        tail = stats.binom.cdf(k, N, 0.5)
        exact = min(1.0, 2.0 * tail)
        if b == c:
            midp = 1.0 - 0.5 * stats.binom.pmf(k, N, 0.5)
        else:
            midp = 2.0 * tail - stats.binom.pmf(k, N, 0.5)
        return float(exact), float(midp)
    tail = stats.binom.cdf(b, N, 0.5) if alternative == "less" else stats.binom.sf(b - 1, N, 0.5)
    return float(tail), float(tail - 0.5 * stats.binom.pmf(b, N, 0.5))


def mcnemar(y_true: ArrayLike, pred_a: ArrayLike, pred_b: ArrayLike, *, exact: bool = True, correction: bool = True,
            mid_p: bool = False, alternative: str = "two-sided") -> ComparisonResult:
    """McNemar's test of equal error rates of two classifiers on the same points.

    With b the points A gets wrong and B right and c the reverse (module docstring), the error
    difference A - B is (b - c) / n and, under the null hypothesis of equal error rates, b is
    Binomial(b + c, 1/2) given b + c (McNemar 1947).

    * ``exact=True`` (default): the exact binomial test of b; two-sided p = min(1, 2 P(X <= min(b, c))),
      the statistic min(b, c) (as statsmodels reports it); one-sided, p = P(X <= b) ("less") or
      P(X >= b) ("greater"), the statistic b (as R's ``binom.test(b, b + c)`` reports it). ``mid_p=True``: the mid-p value
      instead, p - P(X = b) (two-sided; 1 - P(X = b) / 2 when b = c), which Fagerland, Lydersen &
      Laake (2013) recommend over the exact test (it is less conservative and held the level in
      all their scenarios).
    * ``exact=False``: the chi-square form (one degree of freedom), X^2 = (|b - c| - 1)^2 / (b + c)
      with ``correction=True`` (Edwards 1948), |b - c| - 1 floored at 0 as R's ``mcnemar.test``
      does (b = c gives statistic 0 and p-value 1), and (b - c)^2 / (b + c) without. Two-sided only.

    No discordant pair (b + c = 0, e.g. identical predictions) is no evidence of a difference:
    the statistic is 0 and the p-value 1 (R's ``mcnemar.test`` gives NaN there).

    Parameters
    ----------
    y_true : (n,) labels with two classes (any two values: only right or wrong counts).
    pred_a, pred_b : (n,) predicted labels of A and B, values among those of ``y_true``.
    exact, correction, mid_p : bool
    alternative : {"two-sided", "less", "greater"}
        "less": A's error rate is below B's (b < c). The exact and mid-p tests only.

    Returns
    -------
    ComparisonResult
        ``method="mcnemar"``, ``estimate`` = (b - c) / n; no confidence interval
        (:func:`error_difference_interval` gives one); ``details`` has the table, b, c and every
        p-value (exact, mid-p, chi-square with and without correction, two-sided).

    References
    ----------
    McNemar, Q. (1947). Note on the sampling error of the difference between correlated
    proportions or percentages. Psychometrika 12, 153-157. Edwards, A. L. (1948). Note on the
    "correction for continuity" in testing the significance of the difference between correlated
    proportions. Psychometrika 13, 185-187. Fagerland, M. W., Lydersen, S. and Laake, P. (2013).
    The McNemar test for binary matched-pairs data: mid-p and asymptotic are better than exact
    conditional. BMC Medical Research Methodology 13, 91.

    Examples
    --------
    >>> y = [1] * 10 + [0] * 10
    >>> a = [1] * 9 + [0] + [0] * 10          # one mistake
    >>> b = [1] * 5 + [0] * 5 + [0] * 9 + [1]  # six mistakes
    >>> mcnemar(y, a, b)
    ComparisonResult(method='mcnemar', estimate=-0.25, statistic=0, pvalue=0.0625)
    """
    t0 = time.perf_counter()
    alternative = check_alternative(alternative)
    for name, flag in (("exact", exact), ("correction", correction), ("mid_p", mid_p)):
        if not isinstance(flag, (bool, np.bool_)):
            raise ValueError(f"`{name}` must be True or False; got {flag!r}.")
    if mid_p and not exact:
        raise ValueError("`mid_p=True` is a form of the exact test; leave `exact=True`.")
    if not exact and alternative != "two-sided":
        raise ValueError("the chi-square form of McNemar's test is two-sided; use exact=True for a one-sided test.")
    table = paired_table(y_true, pred_a, pred_b)
    n = int(table.sum())
    b, c = int(table[0, 1]), int(table[1, 0])
    N = b + c
    chi2_cc = max(0, abs(b - c) - 1) ** 2 / N if N else 0.0
    chi2 = (b - c) ** 2 / N if N else 0.0
    p_cc = float(stats.chi2.sf(chi2_cc, 1)) if N else 1.0
    p_chi2 = float(stats.chi2.sf(chi2, 1)) if N else 1.0
    p_exact2, p_mid2 = _binomial_pvalues(b, c, "two-sided")
    if exact:
        p_exact, p_mid = _binomial_pvalues(b, c, alternative)
        statistic = float(min(b, c) if alternative == "two-sided" else b)
        pvalue, form = (p_mid if mid_p else p_exact), ("mid-p" if mid_p else "exact")
    else:
        statistic, pvalue = (chi2_cc, p_cc) if correction else (chi2, p_chi2)
        form = "chi-square, corrected" if correction else "chi-square"
    return ComparisonResult(
        method="mcnemar", estimate=(b - c) / n, statistic=statistic, pvalue=pvalue, alternative=alternative,
        n_samples=n, no_interval_reason="McNemar's test gives none; error_difference_interval() does",
        seconds=time.perf_counter() - t0,
        details={"form": form, "table": table, "b": b, "c": c, "discordant": N, "error_a": (table[0].sum()) / n,
                 "error_b": (table[:, 0].sum()) / n, "pvalue_exact": p_exact2, "pvalue_mid_p": p_mid2,
                 "chi2_corrected": chi2_cc, "pvalue_chi2_corrected": p_cc, "chi2": chi2, "pvalue_chi2": p_chi2})


# --------------------------------------------------------------------------- paired intervals

def _newcombe(table: np.ndarray, level: float) -> tuple[float, float]:
    """Newcombe's (1998) method 10: the Wilson limits of the two rates combined with the estimated
    correlation of the two (square-and-add), phi corrected towards 0 as the paper does."""
    (n11, b), (c, n22) = table.tolist()
    n = n11 + b + c + n22
    x1, x2 = n11 + b, n11 + c                       # A's and B's mistakes
    p1, p2 = x1 / n, x2 / n
    l1, u1 = wilson_interval(p1, n, level)
    l2, u2 = wilson_interval(p2, n, level)
    margins = (n11 + b) * (c + n22) * (n11 + c) * (b + n22)
    if margins == 0:
        phi = 0.0
    else:
        A = n11 * n22 - b * c
        phi = (A - n / 2) / math.sqrt(margins) if A > n / 2 else (0.0 if A >= 0 else A / math.sqrt(margins))
    d = p1 - p2
    low = d - math.sqrt(max(0.0, (p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2)))
    high = d + math.sqrt(max(0.0, (p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1)))
    return low, high


def _tango_score(delta: float, b: int, c: int, n: int) -> float:
    """Tango's (1998) score statistic for H0: difference = delta, with p21 at its restricted MLE."""
    A = 2.0 * n
    B = -b - c + (2.0 * n - b + c) * delta
    C = -c * delta * (1.0 - delta)
    p21 = (math.sqrt(max(0.0, B * B - 4.0 * A * C)) - B) / (2.0 * A)
    var = n * (2.0 * p21 + delta * (1.0 - delta))
    return ratio_statistic(b - c - n * delta, math.sqrt(max(0.0, var)))


def _tango(table: np.ndarray, level: float) -> tuple[float, float]:
    """Tango's score interval: the deltas whose score statistic lies within +/- z."""
    z = normal_critical_value(level)
    (n11, b), (c, n22) = table.tolist()
    n = n11 + b + c + n22
    est = (b - c) / n
    eps = 1e-12

    def limit(target, lo, hi, end):
        f_lo, f_hi = _tango_score(lo, b, c, n) - target, _tango_score(hi, b, c, n) - target
        if f_lo * f_hi > 0:         # no crossing inside: the limit is the end of the range
            return end
        return optimize.brentq(lambda d: _tango_score(d, b, c, n) - target, lo, hi, xtol=1e-13, rtol=1e-13)

    low = -1.0 if est <= -1.0 else limit(z, -1.0 + eps, est, -1.0)
    high = 1.0 if est >= 1.0 else limit(-z, est, 1.0 - eps, 1.0)
    return low, high


def _agresti_min(table: np.ndarray, level: float) -> tuple[float, float]:
    """Agresti & Min's (2005) Wald interval after adding 1/2 to each cell, within [-1, 1]."""
    z = normal_critical_value(level)
    t = table.astype(float) + 0.5
    N = t.sum()
    d = (t[0, 1] - t[1, 0]) / N
    se = math.sqrt((t[0, 1] + t[1, 0]) - (t[0, 1] - t[1, 0]) ** 2 / N) / N
    return clipped(d - z * se, d + z * se)


_INTERVALS = {"tango": _tango, "newcombe": _newcombe, "agresti_min": _agresti_min}


def error_difference_interval(y_true: ArrayLike, pred_a: ArrayLike, pred_b: ArrayLike, *, method: str = "tango",
                              confidence_level: float = 0.95, alternative: str = "two-sided") -> ComparisonResult:
    """Confidence interval for the paired difference of two classifiers' error rates, A - B.

    On the table of paired outcomes (module docstring), delta = (b - c) / n, z = Phi^{-1}(1 - alpha/2):

    * ``"tango"`` (default): Tango's (1998) score interval, the deltas with |T(delta)| <= z,
      T(delta) = (b - c - n delta) / sqrt(n (2 p21~ + delta (1 - delta))), p21~ the maximum
      likelihood estimate of P(A right, B wrong) under the constraint (closed form, Tango's eq. 6).
      T(0) is McNemar's uncorrected z, so the interval excludes 0 exactly when McNemar's
      chi-square test without correction rejects at this level: the interval and the test agree.
      The result carries T(0) and that test's p-value.
    * ``"newcombe"``: Newcombe's (1998) method 10, the hybrid score (square-and-add) interval: the
      Wilson limits of the two error rates combined through their estimated correlation phi
      (phi set to 0 when a margin is 0, and shrunk by n/2 towards 0 when positive, as in the
      paper). Closed form; no test.
    * ``"agresti_min"``: Agresti & Min's (2005) Wald interval with 1/2 added to each cell, truncated
      to [-1, 1]. Closed form; no test.

    Why Tango by default: Fagerland, Lydersen & Laake (2014) compared the intervals for paired
    proportions and recommend Tango's score interval (with Newcombe's, which performs about as
    well, and the Bonett-Price Wald interval); of these it is the one that inverts a test, the
    score test whose value at 0 is McNemar's statistic, so the interval and the test reported
    beside it never disagree; it stays within [-1, 1] and is defined when b = c = 0.

    Parameters
    ----------
    y_true : (n,) labels with two classes (any two values: only right or wrong counts).
    pred_a, pred_b : (n,) predicted labels of A and B.
    method : {"tango", "newcombe", "agresti_min"}
    confidence_level : float in (0, 1), default 0.95
    alternative : {"two-sided", "less", "greater"}
        The alternative of Tango's p-value, the normal test of T(0) ("less": A's error rate is below
        B's); the interval is two-sided whatever it is. Newcombe's and Agresti & Min's intervals
        come with no test.

    Returns
    -------
    ComparisonResult
        ``method`` as given; ``estimate`` = (b - c) / n; ``details`` has the table.

    References
    ----------
    Tango, T. (1998). Equivalence test and confidence interval for the difference in proportions
    for the paired-sample design. Statistics in Medicine 17, 891-908. Newcombe, R. G. (1998).
    Improved confidence intervals for the difference between binomial proportions based on paired
    data. Statistics in Medicine 17, 2635-2650. Agresti, A. and Min, Y. (2005). Simple improved
    confidence intervals for comparing matched proportions. Statistics in Medicine 24, 729-740.
    Fagerland, M. W., Lydersen, S. and Laake, P. (2014). Recommended tests and confidence intervals
    for paired binomial proportions. Statistics in Medicine 33, 2850-2875.

    Examples
    --------
    >>> y = [1] * 10 + [0] * 10
    >>> a = [1] * 9 + [0] + [0] * 10
    >>> b = [1] * 5 + [0] * 5 + [0] * 9 + [1]
    >>> error_difference_interval(y, a, b)
    ComparisonResult(method='tango', estimate=-0.25, confidence_interval=ConfidenceInterval(low=-0.4687, high=-0.04859), confidence_level=0.95, statistic=-2.236, pvalue=0.02535)
    """
    t0 = time.perf_counter()
    if not isinstance(method, str) or method not in _INTERVALS:
        raise ValueError(f"`method` must be one of {list(INTERVAL_METHODS)}; got {method!r}.")
    level = check_confidence_level(confidence_level)
    alternative = check_alternative(alternative)
    table = paired_table(y_true, pred_a, pred_b)
    n = int(table.sum())
    b, c = int(table[0, 1]), int(table[1, 0])
    low, high = _INTERVALS[method](table, level)
    statistic = pvalue = None
    if method == "tango":
        statistic = _tango_score(0.0, b, c, n)
        pvalue = normal_p_value(statistic, alternative) if b + c else 1.0
    return ComparisonResult(method=method, estimate=(b - c) / n, statistic=statistic, pvalue=pvalue,
                            confidence_interval=(low, high), confidence_level=level, alternative=alternative,
                            n_samples=n,
                            seconds=time.perf_counter() - t0, details={"table": table, "b": b, "c": c})


# --------------------------------------------------------------------------- DeLong

def delong_test(y_true: ArrayLike, scores_a: ArrayLike, scores_b: ArrayLike, *, confidence_level: float = 0.95,
                alternative: str = "two-sided", pos_label: Any = None) -> ComparisonResult:
    """DeLong's test and interval for the difference of two correlated AUCs, AUC_A - AUC_B.

    The AUCs and their covariance S = S10 / m + S01 / n come from the placement values of
    :func:`cudbound.auc.delong_placements` (Sun & Xu's O(n log n) midrank algorithm); with
    var = S_AA + S_BB - 2 S_AB (DeLong, DeLong & Clarke-Pearson 1988),

        z = (AUC_A - AUC_B) / sqrt(var),   interval (AUC_A - AUC_B) +/- Phi^{-1}(1 - alpha/2) sqrt(var),

    the interval two-sided whatever ``alternative`` (pROC's ``roc.test`` computes the same z and
    interval; here the interval is also clipped to [-1, 1], which pROC does not do). Higher scores
    mean the positive class (+1, 1, True, "yes", "true", or ``pos_label``); ties count 1/2. A zero variance (e.g. the same scores twice) gives z = 0 and p-value 1 when the AUCs are
    equal, z = +/-inf and p-value 0 otherwise.

    Parameters
    ----------
    y_true : (n,) labels with two classes, at least 2 points of each.
    scores_a, scores_b : (n,) finite scores of A and B (decision values or probabilities).
    pos_label : the positive class, when the labels are not {-1, 1}, {0, 1}, booleans or
        true/false, yes/no, 1/0 text.
    confidence_level : float in (0, 1), default 0.95
    alternative : {"two-sided", "less", "greater"}
        "less": A's AUC is below B's.

    Returns
    -------
    ComparisonResult
        ``method="delong"``, ``quantity="difference of AUCs"``; ``details`` has both AUCs, their
        variances and covariance.

    References
    ----------
    DeLong, E. R., DeLong, D. M. and Clarke-Pearson, D. L. (1988). Biometrics 44, 837-845.
    Sun, X. and Xu, W. (2014). IEEE Signal Processing Letters 21(11), 1389-1393. Robin, X. et al.
    (2011). pROC: an open-source package for R and S+ to analyze and compare ROC curves. BMC
    Bioinformatics 12, 77 (``roc.test``, the reference of the tests).

    Examples
    --------
    >>> y = [1, 1, 1, 0, 0, 0]
    >>> delong_test(y, [0.9, 0.8, 0.4, 0.5, 0.2, 0.1], [0.6, 0.4, 0.3, 0.7, 0.5, 0.2])
    ComparisonResult(method='delong', estimate=0.4444, confidence_interval=ConfidenceInterval(low=-0.04251, high=0.9314), confidence_level=0.95, statistic=1.789, pvalue=0.07364)
    """
    t0 = time.perf_counter()
    alternative = check_alternative(alternative)
    level = check_confidence_level(confidence_level)
    labels, a, b = _labels_and(y_true, "scores_a", scores_a, "scores_b", scores_b, numeric=True, pos_label=pos_label)
    placements = delong_placements(labels, np.vstack([a, b]))
    S = placements.covariance()
    diff = float(placements.auc[0] - placements.auc[1])
    var = max(0.0, float(S[0, 0] + S[1, 1] - 2.0 * S[0, 1]))
    se = math.sqrt(var)
    z = ratio_statistic(diff, se)
    half = normal_critical_value(level) * se
    return ComparisonResult(
        method="delong", estimate=diff, statistic=z, pvalue=normal_p_value(z, alternative),
        confidence_interval=clipped(diff - half, diff + half), confidence_level=level, alternative=alternative,
        n_samples=labels.shape[0], quantity=AUC_DIFFERENCE, seconds=time.perf_counter() - t0,
        details={"auc_a": float(placements.auc[0]), "auc_b": float(placements.auc[1]), "var_a": float(S[0, 0]),
                 "var_b": float(S[1, 1]), "covariance": float(S[0, 1]), "se": se,
                 "n_positive": int(placements.positives.shape[1]), "n_negative": int(placements.negatives.shape[1])})
