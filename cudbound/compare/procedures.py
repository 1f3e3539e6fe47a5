"""Comparisons of two learning procedures, refitted on the same resamples of (X, y).

A procedure is a scikit-learn classifier (anything with ``fit`` and ``predict``) or the package's
own classifier, :class:`Procedure`: a basis and a loss (or a scikit-learn estimator mapped to them
by :mod:`cudbound.sklearn_bridge`). Each is refitted whole on every training set, basis included
(:mod:`cudbound.refit`). Both procedures are refitted on exactly the same training sets, and
each held-out point's 0-1 loss difference l_A - l_B (or each split's error difference) enters the
test. The error difference is A - B throughout.

* :func:`paired_ttest_5x2cv`: Dietterich's (1998) 5x2cv paired t test;
* :func:`combined_ftest_5x2cv`: Alpaydin's (1999) combined 5x2cv F test;
* :func:`corrected_t_test`: Nadeau & Bengio's (2003) corrected resampled t test and interval on the
  split differences of repeated k-fold cross-validation (Bouckaert & Frank 2004);
* :func:`wald_cv_test`: Bayle, Bayle, Janson & Mackey's (2020) cross-validation test and interval,
  the Wald-CV interval (``cudbound.baselines.wald_cv``) of the per-point loss differences;
* :func:`nested_cv_test`: Bates, Hastie & Tibshirani's (2023) nested-CV interval
  (``cudbound.baselines.nested_cv``) of the per-point loss differences.

The formulas of the last three are those of the single-classifier intervals
(:func:`cudbound.baselines.modern.corrected_t_mean_se`, :func:`~cudbound.baselines.modern.wald_mean_se`,
:func:`~cudbound.baselines.modern.nested_cv_estimate`), applied to differences.
"""
from __future__ import annotations

import hashlib
import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from .. import _budget
from .._budget import Budget, check_time_limit
from .._docstrings import fill_doc
from .._validation import check_confidence_level, check_data, check_rng, check_scalar
from ..baselines.modern import (corrected_t_mean_se, nested_cv_estimate, nested_cv_splits,
                                wald_mean_se)
from ..refit import Procedure, RefitLog, as_procedure, as_refits
from ..resampling import cv_splitter, draw_folds, splitter_folds
from .predictions import delong_test, error_difference_interval, mcnemar
from ..statistics import check_alternative, normal_critical_value, normal_p_value, t_critical_value, t_p_value
from .result import ComparisonResult, clipped, ratio_statistic

__all__ = ["Procedure", "ProcedurePair", "OutOfFold", "paired_ttest_5x2cv", "combined_ftest_5x2cv", "corrected_t_test",
           "wald_cv_test", "nested_cv_test"]


class _Refits:
    """One procedure of a pair, refitted whole on every training set (:mod:`cudbound.refit`: the
    package's classifier with its basis refitted per part, a scikit-learn classifier cloned and
    fitted per part)."""

    def __init__(self, procedure, X, y, pos_label, name):
        self.procedure, self.name = as_procedure(procedure, f"procedure {name}"), name
        self.refits = as_refits(self.procedure, X, y, pos_label, f"procedure {name}")

    def _check_labels(self, labels):
        if not np.array_equal(labels, self.refits.labels):
            raise ValueError(f"procedure {self.name} reads the labels otherwise than the other procedure; "
                             f"pass `pos_label`.")

    def wrong(self, X, labels, trains, tests):
        wrong, log = self.wrong_unlogged(labels, trains, tests)
        log.warn(f"procedure {self.name}")
        return wrong, log.as_details()

    def wrong_unlogged(self, labels, trains, tests):
        """(wrong, log): the held-out mistakes of the refits on ``trains``, their log not yet reported."""
        self._check_labels(labels)
        _, preds, log = self.refits.fit_score(np.asarray(trains, dtype=float), tests)
        return (preds != labels) & tests, log

    def out_of_fold(self, X, labels, folds):
        """(predictions, scores, details): point i predicted and scored by the procedure refitted
        without its fold; scores None for a scikit-learn classifier with neither
        ``decision_function`` nor ``predict_proba``."""
        self._check_labels(labels)
        tests = folds[None, :] == np.arange(int(folds.max()) + 1)[:, None]
        values, preds, log = self.refits.fit_score((~tests).astype(float), tests)
        log.warn(f"procedure {self.name}")
        at = (folds, np.arange(folds.shape[0]))
        return preds[at], None if values is None else values[at], log.as_details()

    def describe(self):
        return repr(self.procedure)


class ProcedurePair:
    """Two learning procedures on one data set (features and labels checked once): what every
    registered comparison of procedures receives. :meth:`errors` refits both on the same training
    sets and returns their held-out mistakes."""

    def __init__(self, estimator_a, estimator_b, X: ArrayLike, y: ArrayLike, pos_label: Any = None):
        self.X, self.labels, self.encoding = check_data(X, y, pos_label=pos_label)
        self.n = self.X.shape[0]
        if np.min(np.bincount((self.labels > 0).astype(int))) < 2:
            raise ValueError("comparing two procedures needs at least 2 points of each class.")
        self.a = _Refits(estimator_a, X, y, pos_label, "A")
        self.b = _Refits(estimator_b, X, y, pos_label, "B")
        self._out_of_fold: dict[bytes, OutOfFold] = {}

    def errors(self, trains: np.ndarray, tests: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
        """(wrong_A, wrong_B, details): (S, n) booleans, True where the procedure refitted on
        ``trains[s]`` errs at a point of ``tests[s]`` (False elsewhere)."""
        wa, da = self.a.wrong(self.X, self.labels, trains, tests)
        wb, db = self.b.wrong(self.X, self.labels, trains, tests)
        return wa & tests, wb & tests, self._details(da, db)

    def errors_within(self, trains: np.ndarray, tests: np.ndarray, budget: Budget, *, offsets=None,
                      minimum: int = 1) -> tuple[np.ndarray, np.ndarray, dict, int]:
        """:meth:`errors` repetition by repetition while ``budget`` lasts (:meth:`cudbound._budget.Budget.chunks`,
        at least ``minimum`` repetitions): ``(wrong_A, wrong_B, details, used)``, the rows of the first
        ``used`` repetitions. ``offsets`` (R + 1,): where each repetition's rows start (default one row
        each). Without a limit, :meth:`errors` on all rows at once. Each row is refitted on its own, so
        the rows done are those of the run without a limit."""
        offsets = np.arange(trains.shape[0] + 1) if offsets is None else np.asarray(offsets)
        if not budget.limited:
            return (*self.errors(trains, tests), len(offsets) - 1)
        parts, logs, used = [], (RefitLog(), RefitLog()), 0
        for start, stop in budget.chunks(len(offsets) - 1, minimum=minimum):
            rows = slice(offsets[start], offsets[stop])
            chunk = []
            for side, log in zip((self.a, self.b), logs):
                wrong, lg = side.wrong_unlogged(self.labels, trains[rows], tests[rows])
                log.add(lg)
                chunk.append(wrong)
            parts.append(chunk)
            used = stop
        for side, log in zip((self.a, self.b), logs):
            log.warn(f"procedure {side.name}")
        wa, wb = (np.concatenate([chunk[j] for chunk in parts]) for j in (0, 1))
        tests = tests[:offsets[used]]
        return wa & tests, wb & tests, self._details(logs[0].as_details(), logs[1].as_details()), used

    def _details(self, da: dict, db: dict) -> dict:
        """Both procedures described, and their refits' details prefixed a_ and b_."""
        return {"procedure_a": self.a.describe(), "procedure_b": self.b.describe(),
                **{f"a_{k}": v for k, v in da.items()}, **{f"b_{k}": v for k, v in db.items()}}

    def out_of_fold(self, folds: np.ndarray) -> OutOfFold:
        """Both procedures' out-of-fold predictions and scores on the fold labels ``folds`` (n,):
        point i predicted by the procedure refitted without fold ``folds[i]``, as scikit-learn's
        ``cross_val_predict`` does. Computed once per set of folds and kept, so that the comparisons
        on predictions (McNemar, the intervals, DeLong) run on one set of refits."""
        folds = np.ascontiguousarray(folds, dtype=np.int64)
        key = folds.tobytes()
        if key not in self._out_of_fold:
            t0 = _budget.clock()
            pa, sa, da = self.a.out_of_fold(self.X, self.labels, folds)
            pb, sb, db = self.b.out_of_fold(self.X, self.labels, folds)
            self._out_of_fold[key] = OutOfFold(folds, pa, pb, sa, sb, self._details(da, db), _budget.clock() - t0)
        return self._out_of_fold[key]

    @staticmethod
    def piece(folds: np.ndarray) -> str:
        """The name of the out-of-fold refits on ``folds`` as a piece of work several comparisons share."""
        key = np.ascontiguousarray(folds, dtype=np.int64).tobytes()
        return f"out_of_fold {hashlib.sha256(key).hexdigest()[:16]}"

    def pieces(self) -> set[str]:
        """The names of the out-of-fold refits computed so far (:meth:`piece`)."""
        return {self.piece(np.frombuffer(key, dtype=np.int64)) for key in self._out_of_fold}


@dataclass(frozen=True, eq=False)
class OutOfFold:
    """Out-of-fold predictions (-1/+1) and scores (higher for +1; None for a scikit-learn classifier
    with neither ``decision_function`` nor ``predict_proba``) of A and B on one set of folds."""

    folds: np.ndarray
    pred_a: np.ndarray
    pred_b: np.ndarray
    score_a: np.ndarray | None
    score_b: np.ndarray | None
    details: dict
    seconds: float = 0.0
    """The refits' time (on :func:`cudbound._budget.clock`), which the comparisons that use these
    predictions share (``details["shared_pieces"]``)."""


# --------------------------------------------------------------------------- folds

def _fold_labels(cv, pair: ProcedurePair, repeats: int, gen: np.random.Generator, *, k_max: int | None = None):
    """(R, n) fold labels: an int K (stratified folds dealt ``repeats`` times from ``gen``), a
    scikit-learn splitter (its test sets, :func:`cudbound.resampling.splitter_folds`) or an array of
    fold labels, one row per repetition."""
    n = pair.n
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        k = check_scalar(cv, "cv", min_val=2, max_val=n if k_max is None else k_max)
        return draw_folds(pair.labels, k, repeats, True, gen)
    if hasattr(cv, "split"):
        return splitter_folds(cv, pair.labels, pair.X)
    arr = np.asarray(cv)
    if arr.ndim in (1, 2) and arr.shape[-1] == n and arr.dtype.kind in "iu":
        folds = np.atleast_2d(arr).astype(np.int64)
        for r, row in enumerate(folds):
            if row.min() != 0 or np.unique(row).size != row.max() + 1 or row.max() < 1:
                raise ValueError(f"row {r} of the fold labels `cv` must number at least 2 folds 0, 1, ..., K - 1, "
                                 f"each used.")
        return folds
    raise ValueError(f"`cv` must be a number of folds, a scikit-learn splitter or fold labels of shape "
                     f"(repeats, {n}); got {cv!r}.")


def _masks(folds: np.ndarray):
    """Training and test masks of every fold of every repetition, repetition by repetition."""
    tests = np.concatenate([row[None, :] == np.arange(row.max() + 1)[:, None] for row in folds])
    return ~tests, tests


def _split_differences(pair: ProcedurePair, trains, tests, budget: Budget, *, offsets=None, minimum: int = 1):
    """(d, wrong_A, wrong_B, details, used): each split's error difference A - B on its test part, for the
    splits of the first ``used`` repetitions (:meth:`ProcedurePair.errors_within`)."""
    wa, wb, details, used = pair.errors_within(trains, tests, budget, offsets=offsets, minimum=minimum)
    size = tests[:wa.shape[0]].sum(axis=1)
    return (wa.sum(axis=1) - wb.sum(axis=1)) / size, wa, wb, details, used


def _iv(pair_args, confidence_level, alternative, rng):
    return check_confidence_level(confidence_level), check_alternative(alternative), check_rng(rng)


# --------------------------------------------------------------------------- 5x2cv

def _five_by_two(pair, cv, repeats, gen, time_limit):
    """(p, s2, folds, details, asked) of the halvings used, ``asked`` the number drawn: every halving is
    drawn, then both procedures are refitted on them repetition by repetition while ``time_limit`` lasts
    (at least one repetition, which defines both statistics); under a limit ``details`` says how many
    were used (``repeats_used``)."""
    budget = Budget(check_time_limit(time_limit))
    R = check_scalar(repeats, "repeats", min_val=1)
    folds = _fold_labels(2 if cv is None else cv, pair, R, gen, k_max=2)
    if folds.max() != 1:
        raise ValueError(f"the 5x2cv tests need 2 folds per repetition; `cv` made {int(folds.max()) + 1}.")
    trains, tests = _masks(folds)
    d, _, _, details, used = _split_differences(pair, trains, tests, budget, offsets=np.arange(folds.shape[0] + 1) * 2)
    p = d.reshape(used, 2)
    s2 = ((p - p.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    budget.note(details, "repeats", used, folds.shape[0])
    return p, s2, folds[:used], details, folds.shape[0]


def _t5x2(pair: ProcedurePair, *, confidence_level=0.95, alternative="two-sided", rng=None, cv=None, repeats=5,
          time_limit=None):
    t0 = _budget.clock()
    _, alternative, gen = _iv(pair, confidence_level, alternative, rng)
    p, s2, folds, details, asked = _five_by_two(pair, cv, repeats, gen, time_limit)
    R = p.shape[0]
    t = ratio_statistic(float(p[0, 0]), math.sqrt(float(s2.mean())))
    return ComparisonResult(
        method="ttest_5x2cv", estimate=float(p.mean()), statistic=t, pvalue=t_p_value(t, R, alternative),
        alternative=alternative, n_samples=pair.n, seconds=_budget.clock() - t0,
        no_interval_reason="Dietterich's statistic divides the first split's difference alone by the pooled "
                           "variance, so it inverts to no interval around the estimate (the mean of all splits)",
        details={**details, "differences": p, "variances": s2, "first_difference": float(p[0, 0]), "df": R,
                 "repeats": asked, "folds": folds})


def _f5x2(pair: ProcedurePair, *, confidence_level=0.95, alternative="two-sided", rng=None, cv=None, repeats=5,
          time_limit=None):
    t0 = _budget.clock()
    _, alternative, gen = _iv(pair, confidence_level, alternative, rng)
    if alternative != "two-sided":
        raise ValueError("the combined 5x2cv F test is two-sided (its statistic is a sum of squares); use "
                         "alternative='two-sided'.")
    p, s2, folds, details, asked = _five_by_two(pair, cv, repeats, gen, time_limit)
    R = p.shape[0]
    f = ratio_statistic(float(np.sum(p ** 2)), 2.0 * float(s2.sum()))
    return ComparisonResult(
        method="ftest_5x2cv", estimate=float(p.mean()), statistic=f, pvalue=float(stats.f.sf(f, 2 * R, R)),
        n_samples=pair.n, seconds=_budget.clock() - t0,
        no_interval_reason="Alpaydin's F statistic is a ratio of sums of squares, which inverts to no interval",
        details={**details, "differences": p, "variances": s2, "df_numerator": 2 * R, "df_denominator": R,
                 "repeats": asked, "folds": folds})


# --------------------------------------------------------------------------- corrected t

def _corrected_t(pair: ProcedurePair, *, confidence_level=0.95, alternative="two-sided", rng=None, cv=10,
                 repeats=10, time_limit=None):
    t0 = _budget.clock()
    level, alternative, gen = _iv(pair, confidence_level, alternative, rng)
    budget = Budget(check_time_limit(time_limit))
    R = check_scalar(repeats, "repeats", min_val=1)
    splitter = cv_splitter(cv) if hasattr(cv, "split") else None
    if splitter is not None:        # any splitter, ShuffleSplit too: its (train, test) pairs as they are
        pairs = list(splitter.split(pair.X, pair.labels))
        trains = np.zeros((len(pairs), pair.n), dtype=bool)
        tests = np.zeros((len(pairs), pair.n), dtype=bool)
        for s, (train, test) in enumerate(pairs):
            trains[s, train], tests[s, test] = True, True
        folds, option, offsets, minimum = None, "splits", np.arange(len(pairs) + 1), 2
    else:
        folds = _fold_labels(cv, pair, R, gen)
        trains, tests = _masks(folds)   # a repetition's K >= 2 splits: one repetition defines the statistic
        option, offsets, minimum = "repeats", np.concatenate([[0], np.cumsum(folds.max(axis=1) + 1)]), 1
    if trains.shape[0] < 2:
        raise ValueError("the corrected t test needs at least 2 splits.")
    d, _, _, details, used = _split_differences(pair, trains, tests, budget, offsets=offsets, minimum=minimum)
    if budget.limited:
        details[option] = len(offsets) - 1
        budget.note(details, option, used, len(offsets) - 1)
        trains, tests, folds = trains[:d.shape[0]], tests[:d.shape[0]], None if folds is None else folds[:used]
    ratio = float(tests.sum(axis=1).mean() / trains.sum(axis=1).mean())
    mean, se, df = corrected_t_mean_se(d, ratio)
    t = ratio_statistic(mean, se)
    half = t_critical_value(level, df) * se
    return ComparisonResult(
        method="corrected_t", estimate=mean, statistic=t, pvalue=t_p_value(t, df, alternative),
        confidence_interval=clipped(mean - half, mean + half), confidence_level=level, alternative=alternative,
        n_samples=pair.n, seconds=_budget.clock() - t0,
        details={**details, "differences": d, "n_splits": int(d.shape[0]), "test_train_ratio": ratio, "df": df,
                 "se": se, "low_unclipped": mean - half, "high_unclipped": mean + half, "folds": folds})


# --------------------------------------------------------------------------- the normal test and interval

def _normal_result(method: str, estimate: float, se: float, level: float, alternative: str, pair: ProcedurePair,
                   t0: float, details: dict) -> ComparisonResult:
    """The normal test z = estimate / se and the interval estimate +/- z_{1-alpha/2} se (within [-1, 1])."""
    z = ratio_statistic(estimate, se)
    half = normal_critical_value(level) * se
    return ComparisonResult(
        method=method, estimate=estimate, statistic=z, pvalue=normal_p_value(z, alternative),
        confidence_interval=clipped(estimate - half, estimate + half), confidence_level=level,
        alternative=alternative, n_samples=pair.n, seconds=_budget.clock() - t0, details=details)


# --------------------------------------------------------------------------- Wald-CV (Bayle et al.)

def _wald_cv(pair: ProcedurePair, *, confidence_level=0.95, alternative="two-sided", rng=None, cv=10,
             variance="all-pairs"):
    t0 = _budget.clock()
    level, alternative, gen = _iv(pair, confidence_level, alternative, rng)
    folds = _fold_labels(cv, pair, 1, gen)
    if folds.shape[0] != 1:
        raise ValueError(f"the Wald-CV test takes one K-fold split; `cv` made {folds.shape[0]} repetitions.")
    trains, tests = _masks(folds)
    wa, wb, details = pair.errors(trains, tests)
    h = wa.any(axis=0).astype(float) - wb.any(axis=0).astype(float)
    R, se = wald_mean_se(h, folds[0], variance)
    return _normal_result("wald_cv", R, se, level, alternative, pair, t0,
                          {**details, "k": int(folds.max()) + 1, "variance": variance, "se": se,
                           "loss_differences": h, "folds": folds[0]})


# --------------------------------------------------------------------------- nested CV

def _nested_cv(pair: ProcedurePair, *, confidence_level=0.95, alternative="two-sided", rng=None, cv=10,
               repeats=50, bias_repeats=None, time_limit=None):
    t0 = _budget.clock()
    level, alternative, gen = _iv(pair, confidence_level, alternative, rng)
    if cv_splitter(cv) is not None:
        raise ValueError(f"nested_cv needs `cv` as a number of folds (its algorithm draws its own splits); "
                         f"got {cv!r}.")
    K = check_scalar(cv, "cv", min_val=3)
    if pair.n // K < 2:
        raise ValueError(f"nested cross-validation needs at least 2 points per fold: cv = {K} > n / 2 = "
                         f"{pair.n / 2:g}.")
    R = check_scalar(repeats, "repeats", min_val=1)
    Rb = math.ceil(R / 5) if bias_repeats is None else check_scalar(bias_repeats, "bias_repeats", min_val=1)
    trains, layouts, cv_layouts = nested_cv_splits(pair.n, K, R, Rb, gen)
    budget = Budget(check_time_limit(time_limit))
    if budget.limited:   # the plain CV runs for Err_CV (the last Rb K fits) with the first repetition, always
        bias = Rb * K
        nested = trains.shape[0] - bias
        order = np.r_[nested:trains.shape[0], 0:nested]
        wa, wb, details, used = pair.errors_within(trains[order], ~trains[order], budget,
                                                   offsets=np.r_[0, bias + np.arange(1, R + 1) * (nested // R)])
        wa, wb = (np.concatenate([w[bias:], w[:bias]]) for w in (wa, wb))
        budget.note(details, "repeats", used, R)
        layouts = layouts[:used]
    else:
        wa, wb, details = pair.errors(trains, ~trains)
    est = nested_cv_estimate(wa.astype(float) - wb.astype(float), layouts, cv_layouts)
    return _normal_result("nested_cv", est["centre"], est["se"], level, alternative, pair, t0,
                          {**details, **{k: v for k, v in est.items() if k != "centre"}, "k": K, "repeats": R,
                           "bias_repeats": Rb, "fold_layouts": layouts, "cv_layouts": cv_layouts})


# --------------------------------------------------------------------------- on out-of-fold predictions

_OUT_OF_FOLD_CAVEAT = ("the out-of-fold predictions of one K-fold split treated as one test set: they come from K "
                       "models fitted on overlapping training sets, so they are not independent test outcomes")


def _out_of_fold(pair: ProcedurePair, cv, gen) -> tuple[OutOfFold, dict]:
    folds = _fold_labels(cv, pair, 1, gen)
    if folds.shape[0] != 1:
        raise ValueError(f"the comparisons on out-of-fold predictions take one K-fold split; `cv` made "
                         f"{folds.shape[0]} repetitions.")
    oof = pair.out_of_fold(folds[0])
    return oof, {**oof.details, "out_of_fold": _OUT_OF_FOLD_CAVEAT, "k": int(folds.max()) + 1, "folds": oof.folds,
                 "shared_pieces": {pair.piece(oof.folds): oof.seconds}}


def _finish_out_of_fold(res: ComparisonResult, details: dict, t0: float) -> ComparisonResult:
    res.details = {**details, **res.details}
    res.seconds = _budget.clock() - t0
    return res


def _mcnemar_oof(pair: ProcedurePair, *, confidence_level=0.95, alternative="two-sided", rng=None, cv=10, exact=True,
                 correction=True, mid_p=False):
    t0 = _budget.clock()
    _, alternative, gen = _iv(pair, confidence_level, alternative, rng)
    oof, details = _out_of_fold(pair, cv, gen)
    res = mcnemar(pair.labels, oof.pred_a, oof.pred_b, exact=exact, correction=correction, mid_p=mid_p,
                  alternative=alternative)
    return _finish_out_of_fold(res, details, t0)


def _interval_oof(method: str):
    def interval(pair: ProcedurePair, *, confidence_level=0.95, alternative="two-sided", rng=None, cv=10):
        t0 = _budget.clock()
        level, alternative, gen = _iv(pair, confidence_level, alternative, rng)
        oof, details = _out_of_fold(pair, cv, gen)
        res = error_difference_interval(pair.labels, oof.pred_a, oof.pred_b, method=method, confidence_level=level,
                                        alternative=alternative)
        return _finish_out_of_fold(res, details, t0)
    interval.__name__ = interval.__qualname__ = f"_{method}_oof"
    interval.__doc__ = f"error_difference_interval(method={method!r}) on the out-of-fold predictions of A and B."
    return interval


def _delong_oof(pair: ProcedurePair, *, confidence_level=0.95, alternative="two-sided", rng=None, cv=10):
    t0 = _budget.clock()
    level, alternative, gen = _iv(pair, confidence_level, alternative, rng)
    oof, details = _out_of_fold(pair, cv, gen)
    scores = []
    for name, score, refits in (("A", oof.score_a, pair.a), ("B", oof.score_b, pair.b)):
        if score is None:
            raise ValueError(f"DeLong's test needs scores, and procedure {name} ({refits.describe()}) has neither "
                             f"decision_function nor predict_proba.")
        scores.append(score)
    res = delong_test(pair.labels, *scores, confidence_level=level, alternative=alternative)
    return _finish_out_of_fold(res, details, t0)


# --------------------------------------------------------------------------- public functions

_DOC_COMMON = """estimator_a, estimator_b : scikit-learn classifier, Procedure or dict
        The two learning procedures A and B (module docstring).
    X : (n, d) array of features.
    y : (n,) labels with two classes ({-1, 1}, {0, 1}, booleans, or any pair with ``pos_label``)."""


@fill_doc(common=_DOC_COMMON)
def paired_ttest_5x2cv(estimator_a: Any, estimator_b: Any, X: ArrayLike, y: ArrayLike, *,
                       alternative: str = "two-sided", cv: Any = None, repeats: int = 5,
                       rng: np.random.Generator | np.random.SeedSequence | int | None = None,
                       pos_label: Any = None) -> ComparisonResult:
    """Dietterich's (1998) 5x2cv paired t test of equal error rates of two learning procedures.

    Five times, the data are split into two halves (stratified, from ``rng``); each procedure is
    trained on one half and tested on the other, then the other way round. With p_i^(j) the error
    difference A - B on fold j of repetition i, pbar_i their mean and
    s_i^2 = (p_i^(1) - pbar_i)^2 + (p_i^(2) - pbar_i)^2,

        t = p_1^(1) / sqrt((1/5) sum_i s_i^2)   ~ t with 5 degrees of freedom under the null.

    The estimate reported is the mean of the ten differences; there is no interval (the statistic
    uses the first difference alone). All s_i^2 = 0 gives t = 0 and p-value 1 when p_1^(1) = 0 too,
    t = +/-inf and p-value 0 otherwise.

    Parameters
    ----------
    %(common)s
    alternative : {"two-sided", "less", "greater"}
        "less": A's error is below B's.
    cv : None, scikit-learn splitter or (repeats, n) fold labels 0/1
        The halvings: None draws ``repeats`` stratified ones from ``rng``; a splitter
        (``RepeatedStratifiedKFold(n_splits=2, n_repeats=5)``) or fold labels give them (fold 0 of
        each row is the test set of its first split).
    repeats : int, default 5
        Dietterich's five; the t statistic then has ``repeats`` degrees of freedom.
    rng : None, int, SeedSequence or Generator
    pos_label : the positive class, when the labels need it.

    Returns
    -------
    ComparisonResult
        ``method="ttest_5x2cv"``; ``details`` has the (5, 2) differences, the s_i^2 and the folds.

    References
    ----------
    Dietterich, T. G. (1998). Approximate statistical tests for comparing supervised
    classification learning algorithms. Neural Computation 10(7), 1895-1923.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.dummy import DummyClassifier
    >>> from sklearn.linear_model import LogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1, -1)
    >>> res = paired_ttest_5x2cv(LogisticRegression(), DummyClassifier(), X, y, rng=0)
    >>> res.estimate < 0, res.details["differences"].shape
    (True, (5, 2))
    """
    return _t5x2(ProcedurePair(estimator_a, estimator_b, X, y, pos_label), alternative=alternative, cv=cv,
                 repeats=repeats, rng=rng)


@fill_doc(common=_DOC_COMMON)
def combined_ftest_5x2cv(estimator_a: Any, estimator_b: Any, X: ArrayLike, y: ArrayLike, *, cv: Any = None,
                         repeats: int = 5, rng: np.random.Generator | np.random.SeedSequence | int | None = None,
                         pos_label: Any = None) -> ComparisonResult:
    """Alpaydin's (1999) combined 5x2cv F test of equal error rates of two learning procedures.

    On the splits of :func:`paired_ttest_5x2cv` (same ``cv``, ``repeats`` and ``rng`` give the same
    splits),

        f = sum_i sum_j (p_i^(j))^2 / (2 sum_i s_i^2)   ~ F(10, 5) under the null,

    which uses all ten differences rather than the first. Two-sided by nature; no interval.

    Parameters
    ----------
    %(common)s
    cv, repeats, rng, pos_label
        As :func:`paired_ttest_5x2cv` (F(2 R, R) for R repeats).

    Returns
    -------
    ComparisonResult
        ``method="ftest_5x2cv"``; ``estimate`` the mean of the ten differences.

    References
    ----------
    Alpaydin, E. (1999). Combined 5 x 2 cv F test for comparing supervised classification
    learning algorithms. Neural Computation 11(8), 1885-1892.
    """
    return _f5x2(ProcedurePair(estimator_a, estimator_b, X, y, pos_label), cv=cv, repeats=repeats, rng=rng)


@fill_doc(common=_DOC_COMMON)
def corrected_t_test(estimator_a: Any, estimator_b: Any, X: ArrayLike, y: ArrayLike, *,
                     confidence_level: float = 0.95, alternative: str = "two-sided", cv: Any = 10, repeats: int = 10,
                     rng: np.random.Generator | np.random.SeedSequence | int | None = None,
                     pos_label: Any = None) -> ComparisonResult:
    """Nadeau & Bengio's (2003) corrected resampled t test and interval for the error difference A - B.

    On J splits (``repeats`` repetitions of stratified K-fold cross-validation by default:
    Bouckaert & Frank's (2004) corrected repeated k-fold test, 10 x 10), d_j the error difference
    A - B on the test part of split j, and with the shared formula
    (:func:`cudbound.baselines.modern.corrected_t_mean_se`, the one of ``corrected_t``),

        t = dbar / sqrt((1/J + n2/n1) s_d^2)   ~ t with J - 1 degrees of freedom,
        interval dbar +/- t_{J-1, 1-alpha/2} sqrt((1/J + n2/n1) s_d^2)   (within [-1, 1]),

    n2/n1 the mean test size over the mean training size (1/(K - 1) for K folds). The factor n2/n1
    corrects the variance for the overlap of the training sets.

    Parameters
    ----------
    %(common)s
    confidence_level : float in (0, 1), default 0.95
    alternative : {"two-sided", "less", "greater"}
        For the p-value; the interval is two-sided.
    cv : int, scikit-learn splitter or fold labels, default 10
        K; or a splitter, any (``ShuffleSplit(15, test_size=0.1)`` gives the random splits of
        ``cudbound.baselines.corrected_t``); or (repeats, n) fold labels.
    repeats : int, default 10
        Repetitions of K-fold (with an int ``cv``).
    rng, pos_label

    Returns
    -------
    ComparisonResult
        ``method="corrected_t"``; ``details`` has the J differences, n2/n1 and the degrees of freedom.

    References
    ----------
    Nadeau, C. and Bengio, Y. (2003). Inference for the generalization error. Machine Learning 52,
    239-281. Bouckaert, R. R. and Frank, E. (2004). Evaluating the replicability of significance
    tests for comparing learning algorithms. PAKDD 2004, LNCS 3056, 3-12.
    """
    return _corrected_t(ProcedurePair(estimator_a, estimator_b, X, y, pos_label), confidence_level=confidence_level,
                        alternative=alternative, cv=cv, repeats=repeats, rng=rng)


@fill_doc(common=_DOC_COMMON)
def wald_cv_test(estimator_a: Any, estimator_b: Any, X: ArrayLike, y: ArrayLike, *, confidence_level: float = 0.95,
                 alternative: str = "two-sided", cv: Any = 10, variance: str = "all-pairs",
                 rng: np.random.Generator | np.random.SeedSequence | int | None = None,
                 pos_label: Any = None) -> ComparisonResult:
    """Bayle, Bayle, Janson & Mackey's (2020) cross-validation test and interval for the error difference.

    One K-fold split (stratified, from ``rng``); h_i = l_A(i) - l_B(i), the difference of the two
    procedures' held-out 0-1 losses at point i; with the Wald-CV formula of
    ``cudbound.baselines.wald_cv`` (:func:`cudbound.baselines.modern.wald_mean_se`) on the h_i,

        R = (1/n) sum_i h_i,   z = R / (sigma / sqrt(n)),   interval R +/- z_{1-alpha/2} sigma / sqrt(n),

    sigma^2 the all-pairs variance (1/n) sum_i (h_i - R)^2 (default) or the within-fold one. Bayle et
    al. prove the central limit theorem behind it for the K-fold test error of the difference
    (their Section 5 tests which of two algorithms has the smaller error this way).

    Parameters
    ----------
    %(common)s
    confidence_level : float in (0, 1), default 0.95
    alternative : {"two-sided", "less", "greater"}
    cv : int or splitter, default 10
        K, or a splitter making one K-fold split.
    variance : "all-pairs" (default) or "within-fold"
    rng, pos_label

    Returns
    -------
    ComparisonResult
        ``method="wald_cv"``; ``details`` has the h_i and the folds.

    References
    ----------
    Bayle, P., Bayle, A., Janson, L. and Mackey, L. (2020). Cross-validation confidence intervals
    for test error. NeurIPS 33.
    """
    return _wald_cv(ProcedurePair(estimator_a, estimator_b, X, y, pos_label), confidence_level=confidence_level,
                    alternative=alternative, cv=cv, variance=variance, rng=rng)


@fill_doc(common=_DOC_COMMON)
def nested_cv_test(estimator_a: Any, estimator_b: Any, X: ArrayLike, y: ArrayLike, *,
                   confidence_level: float = 0.95, alternative: str = "two-sided", cv: int = 10, repeats: int = 50,
                   bias_repeats: int | None = None,
                   rng: np.random.Generator | np.random.SeedSequence | int | None = None,
                   pos_label: Any = None) -> ComparisonResult:
    """Bates, Hastie & Tibshirani's (2023) nested-CV interval for the error difference A - B.

    The algorithm of ``cudbound.baselines.nested_cv`` (the same splits,
    :func:`cudbound.baselines.modern.nested_cv_splits`, and estimate,
    :func:`~cudbound.baselines.modern.nested_cv_estimate`) on the per-point loss differences
    l_A - l_B in place of one procedure's losses (the authors' method takes any loss): the centre
    Err_NCV - bias, the standard error SE from nested CV's estimate of the MSE of CV, and the
    interval centre +/- z SE; the p-value is that of the normal test the interval inverts,
    z = centre / SE. Costs R (K + K (K - 1) / 2) + ceil(R / 5) K refits of each procedure
    (2,770 at the defaults).

    Why differences are allowed: both procedures are refitted on the same training sets, so
    l_A - l_B is the loss of one joint procedure at one held-out point, and nested CV's estimate
    of the mean squared error of CV, hence SE, holds for any such loss. One part is a heuristic
    here: the bias correction (1 + ((K - 2)/K)^1.5) (Err_NCV - Err_CV) extrapolates along a
    learning curve, and the difference of two learning curves need not have the shape the
    authors assume; ``details["bias"]`` shows how much it moves the centre.

    Parameters
    ----------
    %(common)s
    confidence_level : float in (0, 1), default 0.95
    alternative : {"two-sided", "less", "greater"}
    cv : int, default 10
        K, at least 3 and at most n / 2.
    repeats : int, default 50
    bias_repeats : int, optional, default ceil(repeats / 5)
    rng, pos_label

    Returns
    -------
    ComparisonResult
        ``method="nested_cv"``; ``details`` has Err_NCV, Err_CV, the bias, MSE, SE.

    References
    ----------
    Bates, S., Hastie, T. and Tibshirani, R. (2023). Cross-validation: what does it estimate and
    how well does it do it? JASA 119, 1434-1445.
    """
    return _nested_cv(ProcedurePair(estimator_a, estimator_b, X, y, pos_label), confidence_level=confidence_level,
                      alternative=alternative, cv=cv, repeats=repeats, bias_repeats=bias_repeats, rng=rng)
