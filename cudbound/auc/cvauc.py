"""The influence-curve interval of a cross-validated AUC (LeDell, Petersen & van der Laan 2015).

:func:`cvauc_interval` takes out-of-fold scores, one per row, and the fold of each row, and
returns a Wald interval around the fold-averaged AUC whose standard error comes from the AUC's
influence curve: no model is refitted and nothing is resampled. ``pooled=True`` is the version
for pooled repeated measures data (several rows per subject, R cvAUC's ``ci.pooled.cvAUC``).
``docs/auc.md`` states the formulas.
"""
from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_confidence_level, check_scores, encode_labels
from ..results import ConfidenceInterval
from ..statistics import normal_critical_value
from .result import AUCIntervalResult
from .scores import delong_placements

__all__ = ["cvauc_interval"]


def _one_per_row(values, name: str, n: int) -> np.ndarray:
    """``values`` as a 1-D array of n entries (an (n, 1) or (1, n) column is flattened)."""
    arr = np.asarray(values)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"`{name}` must hold one value per label of `y_true` ({n}); got shape {arr.shape}.")
    return arr


def _groups(values, name: str, n: int) -> tuple[np.ndarray, list]:
    """Integer codes 0..G-1 of the hashable ``values`` (one per row) and the G distinct values,
    sorted where they sort, else in the order of first appearance. A missing value (None, NaN) is
    an error: it names no group."""
    arr = _one_per_row(values, name, n)
    items = arr.tolist()
    for i, v in enumerate(items):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            raise ValueError(f"`{name}` has a missing value ({v!r}) at position {i}; every row needs one.")
    codes: dict = {}
    try:
        inverse = np.fromiter((codes.setdefault(v, len(codes)) for v in items), dtype=np.intp, count=n)
    except TypeError:
        raise ValueError(f"`{name}` must hold hashable values (numbers, strings, ...); "
                         f"got dtype {arr.dtype}.") from None
    distinct = list(codes)
    try:
        order = sorted(range(len(distinct)), key=lambda g: distinct[g])
    except TypeError:           # values that do not sort (mixed types): first appearance
        return inverse, distinct
    rank = np.empty(len(distinct), dtype=np.intp)
    rank[order] = np.arange(len(distinct))
    return rank[inverse], [distinct[g] for g in order]


def _py(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def cvauc_interval(y_true: ArrayLike, scores: ArrayLike, folds: ArrayLike, *, confidence_level: float = 0.95,
                   pooled: bool = False, ids: ArrayLike | None = None, pos_label: Any = None) -> AUCIntervalResult:
    """The influence-curve (Wald) interval of a cross-validated AUC (LeDell et al. 2015; R's cvAUC).

    With V folds, fold v holding n_v rows (m_v positives, k_v negatives) and AUC_v the AUC of its
    out-of-fold scores (ties 1/2), the estimate is the fold-averaged AUC

        cvAUC = (1/V) sum_v AUC_v.

    Its influence curve (LeDell et al., the AUC's influence curve evaluated fold by fold) is, for
    row i of fold v, with p = n+ / n the proportion of positives among all n rows,

        positive i:  IC_i = (F0_v(s_i) - AUC_v) / p,        F0_v(s) = the fraction of the fold's
                                                                     negatives scored below s,
        negative j:  IC_j = (F1_v(s_j) - AUC_v) / (1 - p),  F1_v(s) = the fraction of the fold's
                                                                     positives scored above s,

    ties counting 1/2 in both fractions (they are DeLong's placement values of the fold,
    :func:`delong_placements`). The IC has mean 0 within each class of each fold.

    * ``pooled=False`` (method ``"cvauc"``, cvAUC's ``ci.cvAUC``): the rows are independent;

          sigma^2 = (1/V) sum_v (1/n_v) sum_{i in fold v} IC_i^2,    SE = sqrt(sigma^2 / n).

    * ``pooled=True`` (method ``"cvauc_pooled"``, cvAUC's ``ci.pooled.cvAUC``): pooled repeated
      measures, the J subjects (``ids``) are independent and a subject's rows are not. The
      estimate is the same fold-averaged AUC (cvAUC's "pooled" means the subjects' rows are
      pooled into one data set, not that the folds' scores are pooled into one AUC). With
      tau = n / J the mean number of rows per subject, a subject's influence is the sum of its
      rows' IC over tau, and with J_v the subjects of fold v,

          IC_id = (1/tau) sum_{i of id} IC_i,   sigma^2 = (1/V) sum_v (1/J_v) sum_{id in fold v} IC_id^2,
          SE = sqrt(sigma^2 / J).

      Every subject's rows must lie in one fold. ``ids=None`` makes every row its own subject,
      and then the result equals ``pooled=False`` (tau = 1, J = n); unlike it, one fold is
      accepted (the interval of one AUC: the DeLong variance with the divisors m and k in place
      of m - 1 and k - 1, S10 (m - 1) / m^2 + S01 (k - 1) / k^2).

    The interval is cvAUC +/- z SE, z = Phi^{-1}((1 + level) / 2), clipped to [0, 1] as cvAUC
    clips it; ``details`` keeps the limits before clipping. A fold whose classes are perfectly
    separated contributes 0 to the variance: when every fold is, SE = 0 and the interval is the
    point [cvAUC, cvAUC].

    Where this differs from R's cvAUC (1.1.4): cvAUC's influence curve counts a tied score of the
    other class as 0 (it takes the negatives scored strictly below a positive, and the positives
    strictly above a negative) while its AUC (ROCR's) counts it 1/2; here both count it 1/2, so the
    influence curve is the derivative of the AUC that is reported and has mean 0. With no tie
    between a positive's and a negative's score inside a fold the two agree to rounding (the
    tests check 1e-10 on cvAUC's own examples); with ties the standard errors differ. cvAUC
    also accepts one fold in ``ci.cvAUC`` and only warns when a subject's rows are spread over
    several folds; here both are errors. Everything else (p from all rows, the unweighted mean
    over folds of the within-fold mean of IC^2, tau and J over all rows and subjects, the
    clipping) follows cvAUC's source.

    Long because this docstring states the formulas of both versions and where they differ from
    cvAUC's; the code is some 70 lines.

    Parameters
    ----------
    y_true : (n,) labels with two classes (positive: +1, 1, True, "yes", "true", or ``pos_label``).
    scores : (n,) finite out-of-fold scores, higher for the positive class.
    folds : (n,) the fold of each row, any hashable values (ints, strings); at least 2 folds
        with ``pooled=False``, and every fold holding both classes.
    confidence_level : float in (0, 1), default 0.95
    pooled : bool, default False
        The pooled repeated measures version (``ids`` are the independent units).
    ids : (n,) the subject of each row (any hashable values), with ``pooled=True`` only; None:
        one subject per row.
    pos_label : the positive class, for labels other than {-1, 1}, {0, 1}, booleans and the
        text pairs true/false, yes/no, 1/0.

    Returns
    -------
    AUCIntervalResult
        ``method`` "cvauc" or "cvauc_pooled", ``estimate`` the fold-averaged AUC,
        ``standard_error`` SE; ``details``: ``n_folds``, ``fold_ids`` and ``fold_auc`` (sorted
        by fold id where the ids sort), ``fold_sizes``, ``n_positive``, ``n_negative``,
        ``variance`` (sigma^2), ``clipped``, ``low_unclipped``, ``high_unclipped``,
        ``label_encoding``, and with ``pooled=True`` ``n_ids`` (J) and ``rows_per_id`` (tau).

    Raises
    ------
    ValueError
        A fold holding one class only (named), fewer than 2 folds with ``pooled=False``, a
        non-finite score, a length that is not the labels', ``ids`` with ``pooled=False``, a
        subject in several folds, a level outside (0, 1), labels of one class.

    References
    ----------
    LeDell, E., Petersen, M. and van der Laan, M. (2015). Computationally efficient confidence
    intervals for cross-validated area under the ROC curve estimates. Electronic Journal of
    Statistics 9, 1583-1607. doi:10.1214/15-EJS1035. LeDell, E., Petersen, M. and van der Laan, M.
    cvAUC: Cross-Validated Area Under the ROC Curve Confidence Intervals, R package 1.1.4 (2022),
    ``ci.cvAUC`` and ``ci.pooled.cvAUC`` (the reference of the tests). DeLong, E. R., DeLong, D. M.
    and Clarke-Pearson, D. L. (1988). Biometrics 44, 837-845 (the placement values).

    Examples
    --------
    >>> y = [1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1]
    >>> s = [0.9, 0.3, 0.6, 0.4, 0.1, 0.7, 0.8, 0.5, 0.2, 0.6, 0.3, 0.9]
    >>> res = cvauc_interval(y, s, folds=[1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3])
    >>> res.method, round(res.estimate, 4), res.details["fold_auc"].round(4).tolist()
    ('cvauc', 0.6667, [1.0, 0.5, 0.5])
    >>> round(res.standard_error, 4), round(res.low, 4), round(res.high, 4)
    (0.1667, 0.34, 0.9933)
    """
    t0 = time.perf_counter()
    level = check_confidence_level(confidence_level)
    if not isinstance(pooled, (bool, np.bool_)):
        raise ValueError(f"`pooled` must be True or False; got {pooled!r}.")
    if ids is not None and not pooled:
        raise ValueError("`ids` is for the pooled repeated measures version: pass pooled=True with it (with "
                         "pooled=False every row is an independent unit).")
    labels, encoding = encode_labels(y_true, pos_label=pos_label, name="y_true")
    n = labels.shape[0]
    s = check_scores(scores, n)
    fold, fold_ids = _groups(folds, "folds", n)
    n_folds = len(fold_ids)
    if not pooled and n_folds < 2:
        raise ValueError(f"the cross-validated AUC needs at least 2 folds; `folds` holds {n_folds} "
                         f"({_py(fold_ids[0])!r}). For the interval of one AUC pass pooled=True.")
    if pooled:
        subject, subject_ids = _groups(np.arange(n) if ids is None else ids, "ids", n)
        n_ids = len(subject_ids)
        folds_of = np.zeros(n_ids, dtype=np.intp)
        np.maximum.at(folds_of, subject, fold)
        spread = np.flatnonzero(folds_of[subject] != fold)
        if spread.size:
            sid = subject_ids[int(subject[spread[0]])]
            where = sorted({_py(fold_ids[f]) for f in fold[subject == subject[spread[0]]]}, key=str)
            raise ValueError(f"the rows of id {_py(sid)!r} lie in several folds ({where}); every subject's rows "
                             f"must be in one fold (make the folds by id, e.g. cv_auc(..., groups=ids)).")
        tau = n / n_ids

    positive = labels > 0
    n_pos = int(positive.sum())
    p = n_pos / n
    fold_auc = np.empty(n_folds)
    fold_sizes = np.bincount(fold, minlength=n_folds)
    mean_sq = np.empty(n_folds)
    for v in range(n_folds):
        rows = np.flatnonzero(fold == v)
        lab = labels[rows]
        m_v = int(np.sum(lab > 0))
        if m_v == 0 or m_v == rows.size:
            kind = "positive" if m_v else "negative"
            raise ValueError(f"fold {_py(fold_ids[v])!r} holds one class only ({rows.size} row(s), all {kind}); "
                             f"every fold needs both classes for its AUC. Stratify the folds by class.")
        pl = delong_placements(lab, s[rows])
        auc = float(pl.auc[0])
        fold_auc[v] = auc
        ic = np.empty(rows.size)
        ic[lab > 0] = (pl.positives[0] - auc) / p
        ic[lab < 0] = (pl.negatives[0] - auc) / (1.0 - p)
        if pooled:
            _, who = np.unique(subject[rows], return_inverse=True)
            per_id = np.bincount(who.ravel(), weights=ic) / tau
            mean_sq[v] = float(np.mean(per_id ** 2))
        else:
            mean_sq[v] = float(np.mean(ic ** 2))
    sigma2 = float(np.mean(mean_sq))
    se = math.sqrt(sigma2 / (n_ids if pooled else n))
    estimate = float(np.mean(fold_auc))
    z = normal_critical_value(level)
    low, high = estimate - z * se, estimate + z * se
    details: dict[str, Any] = {
        "n_folds": n_folds, "fold_ids": [_py(f) for f in fold_ids], "fold_auc": fold_auc,
        "fold_sizes": fold_sizes, "n_positive": n_pos, "n_negative": n - n_pos, "variance": sigma2,
        "clipped": bool(low < 0.0 or high > 1.0), "low_unclipped": low, "high_unclipped": high,
        "label_encoding": encoding}
    if pooled:
        details.update(n_ids=n_ids, rows_per_id=tau)
    return AUCIntervalResult(
        method="cvauc_pooled" if pooled else "cvauc", estimate=estimate,
        confidence_interval=ConfidenceInterval(max(0.0, low), min(1.0, high)), confidence_level=level,
        standard_error=se, n_samples=n, seconds=time.perf_counter() - t0, details=details)
