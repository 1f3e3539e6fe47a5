"""Confidence intervals for the AUC of one score vector.

With m positives X_i and n negatives Y_j, the AUC is the Wilcoxon-Mann-Whitney statistic
A = (1 / m n) sum_i sum_j psi(X_i, Y_j), psi = 1, 1/2, 0 for X >, =, < Y (higher scores mean the
positive class; :func:`cudbound.auc.auc_score`; scores within rounding of each other tie,
:func:`cudbound.ties.snap_ties`), and z = Phi^{-1}(1 - alpha/2):

* :func:`delong_interval`: the Wald interval A +/- z SE with DeLong's variance S10/m + S01/n (as
  pROC's ``ci.auc(method="delong")``, clipped to [0, 1] as pROC does), or on the logit scale;
* :func:`hanley_mcneil_interval`: the Wald interval with Hanley & McNeil's (1982) variance;
* :func:`newcombe_interval`: Newcombe's (2006) score-type interval (his Method 5);
* :func:`bootstrap_interval`: the stratified bootstrap's percentile or BCa interval.

Every function returns an :class:`~cudbound.auc.AUCIntervalResult`. ``docs/auc.md`` ("Intervals
for the AUC of one score vector") states the formulas, the defaults and where implementations
differ.
"""
from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, special

from .._docstrings import fill_doc
from .._validation import check_confidence_level, check_rng, check_scalar, check_scores, encode_labels
from .._warnings import warn
from ..resampling import draw_indices_by_row
from ..results import ConfidenceInterval
from ..statistics import bca_levels, normal_critical_value, percentile_levels, quantile_interval
from ..ties import snap_ties
from .result import AUCIntervalResult
from .scores import delong_placements

__all__ = ["delong_interval", "hanley_mcneil_interval", "newcombe_interval", "bootstrap_interval",
           "DegenerateIntervalWarning", "TRANSFORMS", "BOOTSTRAP_METHODS"]

TRANSFORMS = ("identity", "logit")
"""The scales of :func:`delong_interval`'s Wald interval, the default first."""

BOOTSTRAP_METHODS = ("percentile", "bca")
"""The intervals of :func:`bootstrap_interval`, the default first."""

_DOC = {
    "pos_label": "pos_label : the positive class (see :func:`delong_interval`).",
    "example": """>>> y = [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
    >>> s = [0.9, 0.8, 0.7, 0.6, 0.3, 0.65, 0.4, 0.2, 0.1, 0.05]""",
}
_DOC["parameters_returns"] = f"""Parameters
    ----------
    y_true : (n,) labels with two classes, at least 1 point of each.
    scores : (n,) finite scores, higher for the positive class.
    confidence_level : float in (0, 1), default 0.95
    {_DOC["pos_label"]}

    Returns
    -------
    AUCIntervalResult"""
"""Docstring blocks shared by the intervals (:func:`cudbound._docstrings.fill_doc`): the Parameters
and Returns sections of the two that take the data alone, ``pos_label``'s line and the examples' data."""

_BATCH_ELEMENTS = 1 << 21
"""Resampled points drawn per batch of :func:`bootstrap_interval` (a few tens of MB at most);
the draws do not depend on it."""


class DegenerateIntervalWarning(UserWarning):
    """The interval has no width: its variance is 0 (DeLong's and Hanley & McNeil's at an AUC of 0
    or 1), every bootstrap resample gave the same AUC (e.g. perfect separation), or the AUC lies
    outside every resampled AUC (the BCa's bias correction is infinite). The interval is one
    point, ``details["degenerate"]`` is True and ``details["degenerate_reason"]`` says why;
    :func:`newcombe_interval` stays informative there."""


# --------------------------------------------------------------------------- input

def _data(y_true, scores, pos_label, *, least: int, who: str):
    """Labels (-1/+1), finite float scores with their ties made exact (:func:`cudbound.ties.snap_ties`)
    and the class counts, checked: at least ``least`` points of each class."""
    labels, _ = encode_labels(y_true, name="y_true", pos_label=pos_label)
    s = snap_ties(check_scores(scores, labels.shape[0]))
    m, n = int(np.sum(labels > 0)), int(np.sum(labels < 0))
    if m < least or n < least:
        raise ValueError(f"{who} needs at least {least} point{'s' if least > 1 else ''} of each class; got {m} "
                         f"positive and {n} negative.")
    return labels, s, m, n


def _clip(low: float, high: float, details: dict) -> ConfidenceInterval:
    """(low, high) within [0, 1], as pROC clips; ``details`` records whether it did, and the limits before."""
    details.update(clipped=bool(low < 0.0 or high > 1.0), low_unclipped=float(low), high_unclipped=float(high))
    return ConfidenceInterval(float(min(max(low, 0.0), 1.0)), float(min(max(high, 0.0), 1.0)))


def _degenerate(details: dict, reason: str, name: str) -> None:
    details.update(degenerate=True, degenerate_reason=reason)
    warn(f"{name}: {reason}; the interval is one point. newcombe_interval() stays informative there.",
         DegenerateIntervalWarning)


# --------------------------------------------------------------------------- DeLong

@fill_doc(**_DOC)
def delong_interval(y_true: ArrayLike, scores: ArrayLike, *, confidence_level: float = 0.95,
                    transform: str = "identity", pos_label: Any = None) -> AUCIntervalResult:
    """DeLong's Wald interval for the AUC, on the AUC's scale or on the logit scale.

    With V10(X_i) the fraction of negatives scored below positive i and V01(Y_j) the fraction of
    positives scored above negative j (ties 1/2; :func:`cudbound.auc.delong_placements`, Sun &
    Xu's midranks, O(n log n)), S10 and S01 their sample variances (divisors m - 1 and n - 1), DeLong,
    DeLong & Clarke-Pearson (1988) estimate

        Var(A) = S10 / m + S01 / n,   SE = sqrt(Var(A)).

    * ``transform="identity"`` (method ``"delong"``): A +/- z SE, then clipped to [0, 1], exactly
      as pROC's ``ci.auc(method="delong")`` computes it (``qnorm`` around the AUC with sd SE, limits
      above 1 set to 1 and below 0 set to 0). ``details["clipped"]`` says whether a limit was moved,
      ``details["low_unclipped"]``/``["high_unclipped"]`` give them before.
    * ``transform="logit"`` (method ``"delong_logit"``): the Wald interval of logit(A) with the
      delta method's SE / (A (1 - A)), mapped back:

          expit(logit(A) -/+ z SE / (A (1 - A))),

      inside (0, 1) without clipping (the transform Pepe 2003 recommends for the AUC;
      ``details["logit_se"]``).

    At A = 0 or 1 every placement equals A, so DeLong's variance is 0 (and logit(A) infinite):
    neither form has a width to give. Both return the one-point interval [A, A] (what pROC
    returns, with its warning that it "can be misleading"), set ``details["degenerate"]`` and
    warn with :class:`DegenerateIntervalWarning`; the same when the variance is 0 for another
    reason (e.g. all scores tied, A = 1/2). :func:`newcombe_interval` gives a proper interval there.

    Parameters
    ----------
    y_true : (n,) labels with two classes, at least 2 points of each.
    scores : (n,) finite scores, higher for the positive class.
    confidence_level : float in (0, 1), default 0.95
    transform : {"identity", "logit"}
    pos_label : the positive class, when the labels are not {-1, 1}, {0, 1}, booleans or
        true/false, yes/no, 1/0 text.

    Returns
    -------
    AUCIntervalResult
        ``standard_error`` is DeLong's SE of A; ``details`` has the class counts, ``variance``,
        ``s10``, ``s01``, ``z``, ``transform``, ``clipped`` and ``degenerate``.

    References
    ----------
    DeLong, E. R., DeLong, D. M. and Clarke-Pearson, D. L. (1988). Comparing the areas under two or
    more correlated receiver operating characteristic curves: a nonparametric approach.
    Biometrics 44, 837-845. Sun, X. and Xu, W. (2014). IEEE Signal Processing Letters 21(11),
    1389-1393. Robin, X. et al. (2011). pROC: an open-source package for R and S+ to analyze and
    compare ROC curves. BMC Bioinformatics 12, 77 (``ci.auc``, the reference of the tests). Pepe,
    M. S. (2003). The Statistical Evaluation of Medical Tests for Classification and Prediction.
    Oxford University Press.

    Examples
    --------
    %(example)s
    >>> delong_interval(y, s)
    AUCIntervalResult(method='delong', confidence_interval=ConfidenceInterval(low=0.6583, high=1), confidence_level=0.95, estimate=0.88, standard_error=0.1131, n_samples=10)
    >>> delong_interval(y, s, transform="logit")
    AUCIntervalResult(method='delong_logit', confidence_interval=ConfidenceInterval(low=0.4732, high=0.9836), confidence_level=0.95, estimate=0.88, standard_error=0.1131, n_samples=10)
    """
    t0 = time.perf_counter()
    level = check_confidence_level(confidence_level)
    if not isinstance(transform, str) or transform not in TRANSFORMS:
        raise ValueError(f"`transform` must be one of {list(TRANSFORMS)}; got {transform!r}.")
    labels, s, m, n = _data(y_true, scores, pos_label, least=2, who="DeLong's variance")
    placements = delong_placements(labels, s)
    auc = float(placements.auc[0])
    s10 = float(np.var(placements.positives[0], ddof=1))
    s01 = float(np.var(placements.negatives[0], ddof=1))
    var = max(0.0, float(placements.covariance()[0, 0]))
    se = math.sqrt(var)
    z = normal_critical_value(level)
    method = "delong" if transform == "identity" else "delong_logit"
    details: dict = {"n_positive": m, "n_negative": n, "variance": var, "s10": s10, "s01": s01, "z": z,
                     "transform": transform, "degenerate": False}
    if se == 0.0:
        details.update(clipped=False, low_unclipped=auc, high_unclipped=auc)
        _degenerate(details, f"DeLong's variance is 0 (AUC = {auc:g})", method)
        ci = ConfidenceInterval(auc, auc)
    elif transform == "identity":
        ci = _clip(auc - z * se, auc + z * se, details)
    else:
        logit_se = se / (auc * (1.0 - auc))
        centre = math.log(auc) - math.log1p(-auc)
        ci = ConfidenceInterval(float(special.expit(centre - z * logit_se)), float(special.expit(centre + z * logit_se)))
        details.update(logit_se=logit_se, clipped=False, low_unclipped=ci.low, high_unclipped=ci.high)
    return AUCIntervalResult(method=method, confidence_interval=ci, confidence_level=level, estimate=auc,
                             standard_error=se, n_samples=m + n, seconds=time.perf_counter() - t0, details=details)


# --------------------------------------------------------------------------- Hanley & McNeil

def _auc_of(labels: np.ndarray, s: np.ndarray) -> float:
    return float(delong_placements(labels, s).auc[0])


@fill_doc(**_DOC)
def hanley_mcneil_interval(y_true: ArrayLike, scores: ArrayLike, *, confidence_level: float = 0.95,
                           pos_label: Any = None) -> AUCIntervalResult:
    """Hanley & McNeil's (1982) Wald interval for the AUC.

    Hanley & McNeil's standard error of the Wilcoxon AUC A, with m positives ("abnormal") and n
    negatives ("normal"),

        SE^2 = [A (1 - A) + (m - 1)(Q1 - A^2) + (n - 1)(Q2 - A^2)] / (m n),
        Q1 = A / (2 - A),   Q2 = 2 A^2 / (1 + A),

    Q1 (two positives both above one negative) and Q2 (one positive above two negatives) taken
    from their exponential approximation, which depends on A only (their eq. 2 and the
    approximations beside it; the paper also computes Q1, Q2 from rating data, which this
    function does not). The interval is A +/- z SE, clipped to [0, 1] (``details["clipped"]``).
    At A = 0 or 1 the SE is 0: the one-point interval, flagged and warned about
    (:class:`DegenerateIntervalWarning`).

    %(parameters_returns)s
        ``method="hanley_mcneil"``; ``details`` has the class counts, ``q1``, ``q2``, ``variance``,
        ``z``, ``clipped`` and ``degenerate``.

    References
    ----------
    Hanley, J. A. and McNeil, B. J. (1982). The meaning and use of the area under a receiver
    operating characteristic (ROC) curve. Radiology 143, 29-36.

    Examples
    --------
    %(example)s
    >>> hanley_mcneil_interval(y, s)
    AUCIntervalResult(method='hanley_mcneil', confidence_interval=ConfidenceInterval(low=0.6486, high=1), confidence_level=0.95, estimate=0.88, standard_error=0.1181, n_samples=10)
    """
    t0 = time.perf_counter()
    level = check_confidence_level(confidence_level)
    labels, s, m, n = _data(y_true, scores, pos_label, least=1, who="Hanley & McNeil's interval")
    auc = _auc_of(labels, s)
    q1, q2 = auc / (2.0 - auc), 2.0 * auc * auc / (1.0 + auc)
    var = max(0.0, (auc * (1.0 - auc) + (m - 1) * (q1 - auc * auc) + (n - 1) * (q2 - auc * auc)) / (m * n))
    se = math.sqrt(var)
    z = normal_critical_value(level)
    details: dict = {"n_positive": m, "n_negative": n, "q1": q1, "q2": q2, "variance": var, "z": z,
                     "degenerate": False}
    if se == 0.0:
        details.update(clipped=False, low_unclipped=auc, high_unclipped=auc)
        _degenerate(details, f"Hanley & McNeil's variance is 0 (AUC = {auc:g})", "hanley_mcneil")
        ci = ConfidenceInterval(auc, auc)
    else:
        ci = _clip(auc - z * se, auc + z * se, details)
    return AUCIntervalResult(method="hanley_mcneil", confidence_interval=ci, confidence_level=level, estimate=auc,
                             standard_error=se, n_samples=m + n, seconds=time.perf_counter() - t0, details=details)


# --------------------------------------------------------------------------- Newcombe

def _newcombe_bracket(theta: float, n_star: float) -> float:
    """1 + N* ((1 - theta) / (2 - theta) + theta / (1 + theta)): Hanley & McNeil's bracket with
    m - 1 and n - 1 replaced by N* = (m + n)/2 - 1."""
    return 1.0 + n_star * ((1.0 - theta) / (2.0 - theta) + theta / (1.0 + theta))


def _newcombe_variance(theta: float, m: int, n: int) -> float:
    """Newcombe's V(theta) = theta (1 - theta) [1 + N* ((1 - theta)/(2 - theta) + theta/(1 + theta))] / (m n)."""
    return theta * (1.0 - theta) * _newcombe_bracket(theta, (m + n) / 2.0 - 1.0) / (m * n)


def _newcombe_lower(auc: float, z: float, m: int, n: int) -> float:
    """The lower limit: the root in [0, A) of A - theta = z sqrt(V(theta)) (the only one: the
    quartic has one root in each of (-inf, 0), (0, A), (A, 1), (1, inf))."""
    if auc <= 0.0:
        return 0.0
    if auc >= 1.0:
        # (1 - theta)^2 = z^2 V(theta): divided by (1 - theta), the root of (1 - theta) - z^2 theta bracket / (m n)
        n_star = (m + n) / 2.0 - 1.0
        f = lambda t: (1.0 - t) - z * z * t * _newcombe_bracket(t, n_star) / (m * n)  # noqa: E731
    else:
        f = lambda t: (auc - t) - z * math.sqrt(_newcombe_variance(t, m, n))  # noqa: E731
    return float(optimize.brentq(f, 0.0, auc, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200))


@fill_doc(**_DOC)
def newcombe_interval(y_true: ArrayLike, scores: ArrayLike, *, confidence_level: float = 0.95,
                      pos_label: Any = None) -> AUCIntervalResult:
    """Newcombe's (2006) score-type interval for the AUC (his Method 5, the one he recommends).

    Newcombe takes Hanley & McNeil's variance with their exponential Q1 = theta/(2 - theta),
    Q2 = 2 theta^2/(1 + theta), and replaces both m - 1 and n - 1 by N* = (m + n)/2 - 1 (so the
    variance is symmetric in the two classes):

        V(theta) = theta (1 - theta) [1 + N* ((1 - theta)/(2 - theta) + theta/(1 + theta))] / (m n)
                 = theta (1 - theta) [2N - 1 - 3(N - 1) / ((2 - theta)(1 + theta))] / (m n),  N = (m + n)/2.

    Method 4 is the Wald interval A +/- z sqrt(V(A)); Method 5, this one, inverts the score-type
    test instead: the limits are the two solutions theta of

        |A - theta| = z sqrt(V(theta)),

    one below A and one above it (the equation is a quartic in theta with exactly one root in
    each of (0, A) and (A, 1); each is found by Brent's method). V vanishes at 0 and 1 only, so
    the interval lies in [0, 1] and keeps a width at A = 0 or 1 (the upper limit is then 1, the
    lower one below it), where DeLong's and Hanley & McNeil's Wald intervals collapse to a point.
    ``standard_error`` is sqrt(V(A)), Method 4's SE.

    The formulation was checked against two public implementations that agree with each other
    algebraically (the R package auRoc's ``auc.nonpara.mw(method = "newcombe")``, which solves the
    quartic, and the "NewcombeScore" of the AUCCI simulation code, which writes V in the second
    form above); the paper's printed examples could not be consulted.

    %(parameters_returns)s
        ``method="newcombe"``; ``details`` has the class counts, ``n_star`` (N*), ``variance``
        (V(A)), ``z`` and ``newcombe_method`` (5).

    References
    ----------
    Newcombe, R. G. (2006). Confidence intervals for an effect size measure based on the
    Mann-Whitney statistic. Part 2: asymptotic methods and evaluation. Statistics in Medicine 25,
    559-573. Hanley, J. A. and McNeil, B. J. (1982). Radiology 143, 29-36.

    Examples
    --------
    %(example)s
    >>> newcombe_interval(y, s)
    AUCIntervalResult(method='newcombe', confidence_interval=ConfidenceInterval(low=0.5047, high=0.9788), confidence_level=0.95, estimate=0.88, standard_error=0.1181, n_samples=10)
    >>> low, high = newcombe_interval(y, [5, 6, 7, 8, 9, 0, 1, 2, 3, 4]).confidence_interval   # AUC = 1
    >>> round(low, 4), high
    (0.6427, 1.0)
    """
    t0 = time.perf_counter()
    level = check_confidence_level(confidence_level)
    labels, s, m, n = _data(y_true, scores, pos_label, least=1, who="Newcombe's interval")
    auc = _auc_of(labels, s)
    z = normal_critical_value(level)
    low = _newcombe_lower(auc, z, m, n)
    high = 1.0 - _newcombe_lower(1.0 - auc, z, m, n)      # V(theta) = V(1 - theta): the mirror image
    var = _newcombe_variance(auc, m, n)
    details = {"n_positive": m, "n_negative": n, "n_star": (m + n) / 2.0 - 1.0, "variance": var, "z": z,
               "newcombe_method": 5}
    return AUCIntervalResult(method="newcombe", confidence_interval=ConfidenceInterval(low, high),
                             confidence_level=level, estimate=auc, standard_error=math.sqrt(var), n_samples=m + n,
                             seconds=time.perf_counter() - t0, details=details)


# --------------------------------------------------------------------------- bootstrap

def _resample_aucs(lev_pos: np.ndarray, lev_neg: np.ndarray, n_levels: int, rng_pos, rng_neg,
                   n_resamples: int) -> np.ndarray:
    """The AUCs of ``n_resamples`` stratified resamples: the positives' indices floor(u m) with u from
    ``rng_pos.random((B, m))`` row by row, the negatives' likewise from ``rng_neg`` (each a stream of
    its own, so the draws do not depend on the batches). Each resample's AUC from its counts per
    distinct score (level k): 2 m n AUC = sum_k P_k (2 N_below_k + N_k), exact in integers."""
    m, n = lev_pos.shape[0], lev_neg.shape[0]
    batch = max(1, min(n_resamples, _BATCH_ELEMENTS // (m + n)))
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, batch):
        b = min(batch, n_resamples - start)
        offsets = (np.arange(b) * n_levels)[:, None]
        counts = []
        for lev, gen, size in ((lev_pos, rng_pos, m), (lev_neg, rng_neg, n)):
            idx = draw_indices_by_row(size, b, gen)
            counts.append(np.bincount((lev[idx] + offsets).ravel(), minlength=b * n_levels).reshape(b, n_levels))
        pos, neg = counts
        below = np.cumsum(neg, axis=1) - neg
        out[start:start + b] = np.sum(pos * (2 * below + neg), axis=1) / (2.0 * m * n)
    return out


def _levels(labels: np.ndarray, s: np.ndarray):
    """Each positive's and negative's index among the distinct scores (sorted), and their number."""
    values, inverse = np.unique(s, return_inverse=True)
    return inverse[labels > 0], inverse[labels < 0], values.shape[0]


def _exact_auc(lev_pos: np.ndarray, lev_neg: np.ndarray, n_levels: int) -> float:
    """The AUC by the resamples' own arithmetic (so a resample equal to the data gives the same float)."""
    pos = np.bincount(lev_pos, minlength=n_levels)
    neg = np.bincount(lev_neg, minlength=n_levels)
    below = np.cumsum(neg) - neg
    return float(np.sum(pos * (2 * below + neg)) / (2.0 * lev_pos.shape[0] * lev_neg.shape[0]))


def _acceleration(labels: np.ndarray, s: np.ndarray) -> float:
    """The acceleration a of :func:`bootstrap_interval`'s BCa interval, from the stratified jackknife
    (its docstring states the formula; U_i = V10_i - A and V01_j - A, the centred DeLong placements).
    The denominator is 0 only when every placement equals A, and then (sorted by score, the rows of
    psi only grow and the columns only shrink, so equal sums make them all equal) every resample has
    the same AUC: the caller has returned the one-point interval already; 0 is returned all the same."""
    p = delong_placements(labels, s)
    auc = float(p.auc[0])
    up, un = p.positives[0] - auc, p.negatives[0] - auc
    m, n = up.shape[0], un.shape[0]
    den = float(np.sum(up ** 2) / m ** 2 + np.sum(un ** 2) / n ** 2)
    if den == 0.0:
        return 0.0
    return float((np.sum(up ** 3) / m ** 3 + np.sum(un ** 3) / n ** 3) / (6.0 * den ** 1.5))


@fill_doc(**_DOC)
def bootstrap_interval(y_true: ArrayLike, scores: ArrayLike, *, confidence_level: float = 0.95,
                       method: str = "percentile", n_resamples: int = 2000, rng: Any = None,
                       pos_label: Any = None) -> AUCIntervalResult:
    """The stratified bootstrap's percentile or BCa interval for the AUC.

    Each resample draws m positives from the m positives and n negatives from the n negatives,
    with replacement (stratified, as pROC's ``ci.auc(method="bootstrap", boot.stratified=TRUE)``,
    whose default ``boot.n`` = 2000 is the default here), and takes its AUC A*_b (ties 1/2). The
    B resamples are computed together, by the counts of each distinct score (no sort per
    resample). With Q the quantile of the A*_b by linear interpolation (type 7, pROC's
    ``quantile``; :mod:`cudbound.statistics`):

    * ``method="percentile"`` (method ``"bootstrap_percentile"``): (Q(alpha/2), Q(1 - alpha/2)),
      pROC's interval (:func:`cudbound.statistics.percentile_interval`);
    * ``method="bca"`` (method ``"bootstrap_bca"``): Efron's bias-corrected and accelerated
      interval (Q(alpha_1), Q(alpha_2)), its levels from the bias correction z0 and the
      acceleration a (:func:`cudbound.statistics.bca_levels`), as
      ``scipy.stats.bootstrap(method="BCa")`` computes it for two samples,
      with the acceleration a from the stratified jackknife: every point deleted once, from its
      own class, the two classes' jackknife values combined as scipy combines several samples
      (its ``_bca_interval``, after Efron & Tibshirani 1993, section 14.3 and eq. 15.36): with
      U_i = (m - 1)(mean of the m leave-one-positive-out AUCs - the AUC without positive i), and
      likewise for the negatives with n,
      a = (1/6) [sum U_pos^3/m^3 + sum U_neg^3/n^3] / [sum U_pos^2/m^2 + sum U_neg^2/n^2]^(3/2).
      This is not the one-sample jackknife over all m + n points pooled with one mean and one
      n: the resampling keeps m and n fixed, and so does this jackknife. Leaving positive i out
      gives (m A - V10_i)/(m - 1), so U_i = V10_i - A, its centred DeLong placement (likewise
      V01_j - A for a negative): a costs no refit. The BCa needs 2 points of each class (the
      jackknife deletes one).

    Degenerate resample distributions do not fail: when every resample has the same AUC (e.g.
    perfect separation: every A*_b = 1) the interval is that one point, ``details["degenerate"]``
    is True with the reason, and a :class:`DegenerateIntervalWarning` is issued. Likewise for the
    BCa when A lies outside the resamples (p = 0 or 1, z0 infinite): the limits are then the
    smallest (or largest) resampled AUC, the limit of the formula.

    Reproducibility: ``rng`` (a numpy Generator, SeedSequence, int seed or None, as
    :func:`cudbound._validation.check_rng` takes it) spawns two child Generators,
    ``rng.spawn(2)``; resample b's positives are ``floor(u * m)`` for the b-th row of
    ``children[0].random((B, m))``, its negatives likewise from ``children[1]`` with n. The same
    seed gives the same interval, whatever the memory (the draws are made in batches of rows,
    which leaves the streams unchanged). The draws pick rows by their position within their class:
    the positives (or the negatives) in another order draw other resamples.

    Parameters
    ----------
    y_true : (n,) labels with two classes, at least 1 point of each (2 for the BCa).
    scores : (n,) finite scores, higher for the positive class.
    confidence_level : float in (0, 1), default 0.95
    method : {"percentile", "bca"}
    n_resamples : int >= 1, default 2000
    rng : numpy Generator, SeedSequence, int or None
    %(pos_label)s

    Returns
    -------
    AUCIntervalResult
        ``standard_error`` is None (the interval rests on the resampled AUCs); ``details`` has the
        class counts, ``n_resamples``, ``bootstrap_distribution`` (the B resampled AUCs, in draw
        order), ``bootstrap_se`` (their standard deviation), ``level_low``/``level_high`` (the
        quantile levels used), ``degenerate``, and for the BCa ``bias_correction`` (z0) and
        ``acceleration`` (a).

    References
    ----------
    Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    Robin, X. et al. (2011). BMC Bioinformatics 12, 77 (pROC's ``ci.auc``).

    Examples
    --------
    %(example)s
    >>> r = bootstrap_interval(y, s, rng=0)
    >>> r.method, r.estimate, r.details["n_resamples"]
    ('bootstrap_percentile', 0.88, 2000)
    >>> r.confidence_interval == bootstrap_interval(y, s, rng=0).confidence_interval
    True
    >>> 0.5 < r.confidence_interval.low < 0.88 < r.confidence_interval.high <= 1.0
    True
    """
    t0 = time.perf_counter()
    level = check_confidence_level(confidence_level)
    if not isinstance(method, str) or method.lower() not in BOOTSTRAP_METHODS:
        raise ValueError(f"`method` must be one of {list(BOOTSTRAP_METHODS)}; got {method!r}.")
    method = method.lower()
    n_resamples = check_scalar(n_resamples, "n_resamples", min_val=1)
    generator = check_rng(rng)
    bca = method == "bca"
    labels, s, m, n = _data(y_true, scores, pos_label, least=2 if bca else 1,
                            who="the BCa interval (its jackknife deletes one point)" if bca else "the bootstrap")
    name = "bootstrap_bca" if bca else "bootstrap_percentile"
    lev_pos, lev_neg, k = _levels(labels, s)
    auc = _exact_auc(lev_pos, lev_neg, k)
    rng_pos, rng_neg = generator.spawn(2)
    aucs = _resample_aucs(lev_pos, lev_neg, k, rng_pos, rng_neg, n_resamples)
    details: dict = {"n_positive": m, "n_negative": n, "n_resamples": n_resamples, "bootstrap_distribution": aucs,
                     "bootstrap_se": float(np.std(aucs, ddof=1)) if n_resamples > 1 else 0.0, "degenerate": False}
    levels = percentile_levels(level)
    if np.ptp(aucs) == 0.0:
        details.update(level_low=levels[0], level_high=levels[1])
        _degenerate(details, f"every bootstrap resample has the same AUC ({aucs[0]:g})", name)
        ci = ConfidenceInterval(float(aucs[0]), float(aucs[0]))
    else:
        if bca:
            a = _acceleration(labels, s)
            bca_at = bca_levels(auc, aucs, a, level)
            z0, levels = bca_at.bias_correction, (bca_at.low, bca_at.high)
            details.update(bias_correction=z0, acceleration=a)
            if not np.isfinite(z0):     # A outside the resamples: both levels are 0 (z0 = -inf) or 1 (z0 = +inf)
                _degenerate(details, f"the AUC ({auc:g}) lies {'below' if z0 < 0 else 'above'} every resampled "
                                     f"AUC (the BCa's bias correction is infinite)", name)
        details.update(level_low=levels[0], level_high=levels[1])
        ci = quantile_interval(aucs, levels)
    return AUCIntervalResult(method=name, confidence_interval=ci, confidence_level=level, estimate=auc,
                             standard_error=None, n_samples=m + n, seconds=time.perf_counter() - t0, details=details)
