"""The six baseline intervals that Laber & Murphy (2008) compare the CUD interval with.

Their online appendix with the exact formulas is lost; each interval is defined
here from its source, as fixed in ``docs/method.md`` ("Baselines"). With
delta = 1 - confidence_level, z = Phi^{-1}(1 - delta / 2) and t the .632 estimate
of the error (:func:`cudbound.baselines.e632`, the centre of all six in the paper):

============  ============================================================  ========================
method        interval                                                      source
============  ============================================================  ========================
``bs1``       [q_{delta/2}, q_{1-delta/2}] of B bootstrap .632 estimates    Efron & Tibshirani 1993
``bs2``       [2t - q_{1-delta/2}, 2t - q_{delta/2}] (basic / "corrected")  Davison & Hinkley 1997
``kohavi``    Wilson score interval (inverted normal) for t, n_eff = n      Kohavi 1995
``yang``      t +/- z sqrt(t (1 - t) / n_eff), 2-fold CV, n_eff = n / 2     Yang 2006
``martin``    equal-tailed Beta(a + t m, b + (1 - t) m), a = b = 1, m = n   Martin & Hirschberg 1996
``langford``  Clopper-Pearson with k = round(t m) errors of m = n           Langford 2005
============  ============================================================  ========================

Every interval is returned as an :class:`cudbound.results.IntervalResult` clipped
to [0, 1] (the unclipped ends are kept in ``details``). The effective sizes, fold
scheme and prior are parameters; the defaults, and why, are in each docstring.

The building blocks :func:`normal_interval` and :func:`beta_interval` work on numbers alone (the
percentile, basic and Wilson intervals are :mod:`cudbound.statistics`'s).

References
----------
.. [1] Laber, E. B. and Murphy, S. A. (2008). Small sample inference for generalization
       error in classification using the CUD bound. UAI 2008, 357-365.
.. [2] Efron, B. (1983). Estimating the error rate of a prediction rule: improvement on
       cross-validation. JASA 78(382), 316-331.
.. [3] Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap.
       Chapman & Hall, ch. 13 (percentile intervals); Davison, A. C. and Hinkley, D. V.
       (1997). Bootstrap Methods and their Application, section 5.2 (basic intervals).
.. [4] Kohavi, R. (1995). A study of cross-validation and bootstrap for accuracy
       estimation and model selection. IJCAI 1995, 1137-1145.
.. [5] Yang, Y. (2006). Comparing learning methods for classification. Statistica
       Sinica 16(2), 635-657.
.. [6] Martin, J. K. and Hirschberg, D. S. (1996). Small sample statistics for
       classification error rates II: confidence intervals and significance tests.
       Technical Report ICS-TR-96-22, University of California, Irvine.
.. [7] Langford, J. (2005). Tutorial on practical prediction theory for classification.
       JMLR 6, 273-306.
"""
from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from .. import _budget
from .._budget import Budget, check_time_limit
from .._deprecation import renamed
from .._registry import generator
from .._docstrings import fill_doc
from .._validation import check_confidence_level, check_rng, check_scalar, check_values
from ..design import PreparedData
from ..losses import Loss
from ..results import ConfidenceInterval, IntervalResult
from ..resampling import Splitter, deal_folds, draw_counts, draw_indices, folds_or_count, tally as _tally
from ..refit import RefitLog, Refits
from ..statistics import basic_interval, normal_critical_value, percentile_interval, wilson_interval
from .estimators import _bootstrap_parts, _cv_parts, _e632_value, _positive_int, _refits_iv
from .holdout import _alternative_iv, _clopper_pearson

__all__ = [
    "bs1", "bs2", "kohavi", "yang", "martin", "langford",
    "normal_interval", "beta_interval", "bootstrap_632_distribution",
    "share_centre", "share_centre_and_distribution", "INPUT_CHECKS",
]

_DOC = {
    "data": """design : (n, p) array
        The design matrix Phi, full column rank.
    y : (n,) labels in {-1, +1} (or {0, 1}, booleans).
    confidence_level : float in (0, 1), default 0.95""",
    "nested": """n_resamples : int, default 1000
        B, the number of outer bootstrap samples.
    n_inner : int, default 50
        J, the inner bootstrap samples per outer sample.""",
    "centre": """n_boot : int, default 200
        Bootstrap samples for the centre t (the .632 estimate on the data).
    loss : str or Loss, default 'squared'
    centre : '632' or float, default '632'
        The centre to report; a number is used as given.
    rng : None, int, SeedSequence or Generator""",
    "time_limit": """time_limit : float, optional
        Seconds for the interval (None, default: no limit). Its resamples stop once they are spent,
        after the fewest the interval needs; those it used are the first ones of the run without a
        limit, drawn the same way, and ``details`` says how many (``<option>_used``, e.g.
        ``n_boot_used``, and ``cut_by_time_limit``).""",
    "returns_ci": """Returns
    -------
    ConfidenceInterval""",
    "warns_nested": """Warns
    -----
    DegenerateResampleWarning
        When some outer or inner sample has one class only or a singular normal matrix.""",
    "warns_centre": """Warns
    -----
    DegenerateResampleWarning
        From the bootstrap behind t.""",
}
"""Parameter descriptions and sections shared by the six intervals and their building blocks
(:func:`cudbound._docstrings.fill_doc`)."""

_CHUNK_REFITS = 8192
"""Inner refits per batch in :func:`bootstrap_632_distribution` (fixed: results do not depend on it)."""


# --------------------------------------------------------------------------- building blocks

def _values_iv(values, name="bootstrap_values", minimum=2) -> np.ndarray:
    return check_values(values, name, minimum)


def _finite(value, name: str) -> float:
    return check_scalar(value, name, numbers.Real)


def _rate(value, name: str) -> float:
    v = _finite(value, name)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"`{name}` must be an error rate in [0, 1]; got {value!r}.")
    return v


def _positive(value, name: str) -> float:
    v = _finite(value, name)
    if v <= 0.0:
        raise ValueError(f"`{name}` must be a number > 0; got {value!r}.")
    return v


def _normal_interval_iv(t, n_eff, confidence_level):
    return _rate(t, "t"), _positive(n_eff, "n_eff"), check_confidence_level(confidence_level)


def _prior_iv(prior):
    try:
        a, b = prior
    except (TypeError, ValueError):
        raise ValueError(f"`prior` must be a pair (a, b) of positive numbers; got {prior!r}.") from None
    return _positive(a, "prior[0]"), _positive(b, "prior[1]")


def _beta_interval_iv(t, m, confidence_level, prior):
    return _rate(t, "t"), _positive(m, "m"), check_confidence_level(confidence_level), _prior_iv(prior)


@fill_doc(**_DOC)
def normal_interval(t: float, n_eff: float, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Normal approximation to a binomial proportion: t +/- z sqrt(t (1 - t) / n_eff). Not clipped.

    z = Phi^{-1}(1 - delta / 2). The width is zero when t is 0 or 1.

    Parameters
    ----------
    t : float in [0, 1]
        The error estimate.
    n_eff : float > 0
        The effective sample size.
    confidence_level : float in (0, 1)

    %(returns_ci)s

    References
    ----------
    Kohavi, R. (1995). IJCAI 1995, section 2 (the holdout accuracy as a binomial
    proportion and its normal approximation).
    """
    t, n_eff, level = _normal_interval_iv(t, n_eff, confidence_level)
    half = normal_critical_value(level) * math.sqrt(t * (1.0 - t) / n_eff)
    return ConfidenceInterval(t - half, t + half)


@fill_doc(**_DOC)
def beta_interval(t: float, m: float, confidence_level: float = 0.95,
                  prior: tuple[float, float] = (1.0, 1.0)) -> ConfidenceInterval:
    """Equal-tailed credible interval of the Beta(a + t m, b + (1 - t) m) posterior.

    The posterior of an error rate after t m errors in m trials under a Beta(a, b)
    prior (t m need not be whole). Its delta/2 and 1 - delta/2 quantiles, i.e.
    ``scipy.stats.beta(a + t m, b + (1 - t) m).interval(confidence_level)``.

    Parameters
    ----------
    t : float in [0, 1]
    m : float > 0
        Effective number of trials.
    confidence_level : float in (0, 1)
    prior : (a, b), default (1, 1), the uniform prior

    %(returns_ci)s
        Within [0, 1].

    References
    ----------
    Martin, J. K. and Hirschberg, D. S. (1996). Small sample statistics for classification
    error rates II. Technical Report ICS-TR-96-22, UC Irvine.
    """
    t, m, level, (a, b) = _beta_interval_iv(t, m, confidence_level, prior)
    low, high = stats.beta.interval(level, a + t * m, b + (1.0 - t) * m)
    return ConfidenceInterval(float(low), float(high))


# --------------------------------------------------------------------------- bootstrap of the .632 estimate

def _bs632_values(refits: Refits, outer_idx: np.ndarray, inner_pos: np.ndarray):
    """.632 estimates recomputed on outer bootstrap samples, each with its own inner bootstrap.

    ``outer_idx`` (B, n): the data points drawn for each outer sample D*_b.
    ``inner_pos`` (B, J, n): for each outer sample, J inner samples given as
    positions 0..n-1 into D*_b (rows of D*_b are distinct observations, even when
    they repeat a data point). Returns (values (B,), RefitLog).
    """
    B, n = outer_idx.shape
    J = inner_pos.shape[1]
    y = refits.labels
    log = RefitLog()
    # outer fits: training error of each D*_b, err = (1/n) sum_i nu_bi 1{f_b(x_i) != y_i}
    nu = _tally(outer_idx, n)
    preds, lg = refits.predict(nu)
    log.add(lg)
    train = (nu * (preds != y)).sum(axis=1) / n
    # inner fits: the data point behind each inner draw, tallied on the data points
    orig = np.take_along_axis(np.broadcast_to(outer_idx[:, None, :], inner_pos.shape), inner_pos, axis=2)
    W = _tally(orig, n).reshape(B * J, n)
    preds, lg = refits.predict(W)
    log.add(lg)
    wrong_pts = (preds != y).reshape(B, J, n)
    wrong_pos = np.take_along_axis(wrong_pts, np.broadcast_to(outer_idx[:, None, :], (B, J, n)), axis=2)
    out = _tally(inner_pos, n) == 0                    # position left out of the inner sample
    L = out.sum(axis=1)                                # (B, n)
    num = (out & wrong_pos).sum(axis=1)
    keep = L > 0
    per_pos = np.where(keep, num / np.where(keep, L, 1), 0.0)
    kept = keep.sum(axis=1)
    err1 = np.where(kept > 0, per_pos.sum(axis=1) / np.maximum(kept, 1), train)
    return _e632_value(train, err1), log


def _bootstrap_632_distribution_iv(design, y, loss, n_resamples, n_inner, rng):
    refits = _refits_iv(design, y, loss)
    return (refits, _positive_int(n_resamples, "n_resamples", 2), _positive_int(n_inner, "n_inner"),
            check_rng(rng))


def _bs632_distribution(refits: Refits, B, J, gen, budget: Budget | None = None):
    """The B values (the first ones the ``budget`` allowed, at least 2) and the log: the outer samples
    drawn at once, the inner ones chunk by chunk (the same numbers whatever the chunks)."""
    n = refits.n
    outer_idx = draw_indices(n, (B, n), gen)
    values, log, used = np.empty(B), RefitLog(), 0
    for start, stop in (budget or Budget(None)).chunks(B, minimum=2, cap=max(1, _CHUNK_REFITS // J)):
        inner_pos = draw_indices(n, (stop - start, J, n), gen)
        values[start:stop], lg = _bs632_values(refits, outer_idx[start:stop], inner_pos)
        log.add(lg)
        used = stop
    return values[:used], log


@fill_doc(**_DOC)
def bootstrap_632_distribution(design: ArrayLike, y: ArrayLike, *, n_resamples: int = 1000, n_inner: int = 50,
                               loss: str | Loss = "squared",
                               rng: np.random.Generator | np.random.SeedSequence | int | None = None) -> np.ndarray:
    """The bootstrap distribution of the .632 estimate (the values behind BS1 and BS2).

    Draw B outer bootstrap samples D*_1..D*_B of the n rows; on each, recompute the
    .632 estimate exactly as :func:`cudbound.baselines.e632` does on data:
    0.368 err(D*_b) + 0.632 Err(1)(D*_b), the training error of the classifier
    refitted on D*_b plus the leave-one-out bootstrap error from J inner bootstrap
    samples of D*_b. The rows of D*_b are distinct observations even when they
    repeat a data point, so a row is "left out" by an inner sample that did not draw
    that row, even if it drew another copy of the same point (the literal bootstrap
    of the procedure). All B (J + 1) refits are solved in batches.

    Parameters
    ----------
    design : (n, p) array
        The design matrix Phi, full column rank.
    y : (n,) labels in {-1, +1} (or {0, 1}, booleans).
    n_resamples : int, default 1000
        B, the number of outer samples (at least 2).
    n_inner : int, default 50
        J, the inner bootstrap samples per outer sample. Efron & Tibshirani (1997)
        use 50 bootstrap samples for Err(1); with J = 50 a row is never left out with
        probability 0.632^50 < 1e-9 (such rows are dropped from the Err(1) average).
    loss : str or Loss
        Default squared (batched; other losses cost B (J + 1) convex solves).
    rng : None, int, SeedSequence or Generator

    Returns
    -------
    ndarray of shape (B,)

    %(warns_nested)s

    References
    ----------
    Efron, B. (1983). JASA 78, 316-331. Efron, B. and Tibshirani, R. J. (1993). An
    Introduction to the Bootstrap, ch. 13 and 17.
    """
    refits, B, J, gen = _bootstrap_632_distribution_iv(design, y, loss, n_resamples, n_inner, rng)
    values, log = _bs632_distribution(refits, B, J, gen)
    log.warn("bootstrap_632_distribution")
    return values


# --------------------------------------------------------------------------- shared pieces of the intervals

def _centre_iv(centre, allowed=("632",)):
    if isinstance(centre, str):
        key = centre.strip().lower().lstrip(".")
        if key in allowed:
            return key
        raise ValueError(f"`centre` must be one of {list(allowed)} or an error rate in [0, 1]; got {centre!r}.")
    return _rate(centre, "centre")


def _centre_value(refits: Refits, centre, n_boot, gen, name, budget: Budget | None = None):
    """t: the given number, or the .632 estimate from n_boot bootstrap samples drawn from gen (the
    first ones the ``budget`` allowed, ``n_boot_used``)."""
    if not isinstance(centre, str):
        return centre, {"centre_source": "given"}
    counts = draw_counts(refits.n, n_boot, gen)
    _, _, train, err1, det, log = _bootstrap_parts(refits, counts, budget, "n_boot")
    log.warn(f"{name} (.632 centre)")
    return _e632_value(train, err1), {"centre_source": ".632", "train_error": train, "err1": err1, "n_boot": n_boot,
                                      "centre_degenerate_refits": log.degenerate,
                                      **{k: det[k] for k in ("n_boot_used", "cut_by_time_limit") if k in det}}


def _loss_key(loss):
    """The key of a loss among a call's shared pieces: a name by its spelling, an object by identity."""
    return loss.strip().lower() if isinstance(loss, str) else id(loss)


def _shared_piece(shared, key, compute) -> tuple[Any, dict, dict]:
    """(value, details, {name: seconds}) of the piece ``key`` of a call, computed by ``compute()`` (which
    returns the value and its details) the first time a method asks, timed on the budgets' clock."""
    if key not in shared:
        t0 = _budget.clock()
        value, det = compute()
        shared[key] = (value, det, _budget.clock() - t0)
    value, det, seconds = shared[key]
    return value, det, {" ".join(map(str, key)): seconds}


def _shared_632_centre(method, data, options, shared, root, budget) -> tuple[dict, dict, dict]:
    """(kwargs, details, pieces) of the .632 centre computed once per (loss, n_boot) of a call, from
    stream ``"centre"`` (within ``budget``); nothing when the method's options set their own ``centre``."""
    if "centre" in options:
        return {}, {}, {}
    loss, n_boot = options.get("loss", method.default("loss")), options.get("n_boot", method.default("n_boot"))
    t, det, piece = _shared_piece(shared, ("centre", _loss_key(loss), n_boot), lambda: _centre_value(
        _refits_iv(data, None, loss), "632", check_scalar(n_boot, "n_boot", min_val=1), generator(root, "centre"),
        "intervals", budget))
    return {"centre": t}, {**det, "centre_source": ".632", "centre_shared": True}, piece


def _shared_632_distribution(method, data, options, shared, root, budget) -> tuple[dict, dict, dict]:
    """(kwargs, details, pieces) of the bootstrap distribution of the .632 estimate computed once per
    (loss, n_resamples, n_inner) of a call, from stream ``"bootstrap"`` (within ``budget``)."""
    loss = options.get("loss", method.default("loss"))
    B, J = options.get("n_resamples", method.default("n_resamples")), options.get("n_inner", method.default("n_inner"))

    def compute():
        B_, J_ = check_scalar(B, "n_resamples", min_val=2), check_scalar(J, "n_inner", min_val=1)
        dist, log = _bs632_distribution(_refits_iv(data, None, loss), B_, J_, generator(root, "bootstrap"), budget)
        log.warn("intervals (bootstrap distribution of the .632 estimate)")
        det = {"n_resamples": B_, "n_inner": J_, "distribution_degenerate_refits": log.degenerate,
               "distribution_refits": log.refits}
        budget.note(det, "n_resamples", dist.shape[0], B_)
        return dist, det
    dist, det, piece = _shared_piece(shared, ("bootstrap", _loss_key(loss), B, J), compute)
    return {"bootstrap_distribution": dist}, {**det, "distribution_source": "bootstrap (shared by bs1 and bs2)"}, piece


def _merge_notes(first: dict, second: dict) -> dict:
    """Two pieces' details as one, ``cut_by_time_limit`` True if either was cut short."""
    cut = [d["cut_by_time_limit"] for d in (first, second) if "cut_by_time_limit" in d]
    return {**first, **second, **({"cut_by_time_limit": any(cut)} if cut else {})}


def share_centre(method: Any, data: PreparedData, y: np.ndarray, options: Mapping[str, Any], *,
                 shared: dict[Any, Any], root: np.random.SeedSequence,
                 rng: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``prepare`` hook of K, Y, M and L in :mod:`cudbound.registry` (its signature is
    :class:`cudbound.registry.IntervalMethod`'s): the .632 centre computed once per call and shared by
    every baseline (:func:`_shared_632_centre`), within the method's ``time_limit``; its name and
    seconds in ``details["shared_pieces"]``."""
    budget = Budget(check_time_limit(options.get("time_limit")))
    kwargs, details, pieces = _shared_632_centre(method, data, options, shared, root, budget)
    return kwargs, {**details, "shared_pieces": pieces}


def share_centre_and_distribution(method: Any, data: PreparedData, y: np.ndarray, options: Mapping[str, Any], *,
                                  shared: dict[Any, Any], root: np.random.SeedSequence,
                                  rng: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``prepare`` hook of BS1 and BS2 in :mod:`cudbound.registry`: the shared .632 centre
    (:func:`share_centre`) and the bootstrap distribution of the .632 estimate, computed once per call
    for both (:func:`_shared_632_distribution`), within the method's ``time_limit``; the names and
    seconds of both in ``details["shared_pieces"]``."""
    budget = Budget(check_time_limit(options.get("time_limit")))
    centre, centre_details, centre_piece = _shared_632_centre(method, data, options, shared, root, budget)
    dist, dist_details, dist_piece = _shared_632_distribution(method, data, options, shared, root, budget)
    return {**centre, **dist}, {**_merge_notes(centre_details, dist_details),
                                "shared_pieces": {**centre_piece, **dist_piece}}


def _result(method, ci, level, t, n, t0, details) -> IntervalResult:
    low, high = float(ci.low), float(ci.high)
    details = {**details, "unclipped_low": low, "unclipped_high": high}
    clipped = ConfidenceInterval(min(1.0, max(0.0, low)), min(1.0, max(0.0, high)))
    return IntervalResult(method=method, confidence_interval=clipped, confidence_level=level, estimate=float(t),
                          n_samples=int(n), seconds=time.perf_counter() - t0, details=details)


def _bs_iv(design, y, confidence_level, n_resamples, n_inner, n_boot, loss, centre, rng, bootstrap_distribution):
    refits = _refits_iv(design, y, loss)
    level = check_confidence_level(confidence_level)
    B = _positive_int(n_resamples, "n_resamples", 2)
    J = _positive_int(n_inner, "n_inner")
    n_boot = _positive_int(n_boot, "n_boot")
    centre = _centre_iv(centre)
    if bootstrap_distribution is not None:
        bootstrap_distribution = _values_iv(bootstrap_distribution, "bootstrap_distribution")
    return refits, level, B, J, n_boot, centre, check_rng(rng), bootstrap_distribution


def _bs1_iv(*args):
    return _bs_iv(*args)


def _bs2_iv(*args):
    return _bs_iv(*args)


def _bs_common(name, design, y, confidence_level, n_resamples, n_inner, n_boot, loss, centre, rng,
               bootstrap_distribution, iv, time_limit):
    budget = Budget(check_time_limit(time_limit))
    refits, level, B, J, n_boot, centre, gen, dist = iv(
        design, y, confidence_level, n_resamples, n_inner, n_boot, loss, centre, rng, bootstrap_distribution)
    t, details = _centre_value(refits, centre, n_boot, gen, name, budget)
    if dist is None:
        dist, log = _bs632_distribution(refits, B, J, gen, budget)
        log.warn(f"{name} (bootstrap distribution)")
        details.update({"n_resamples": B, "n_inner": J, "distribution_degenerate_refits": log.degenerate,
                        "distribution_refits": log.refits})
        budget.note(details, "n_resamples", dist.shape[0], B)
    else:
        details.update({"n_resamples": int(dist.shape[0]), "distribution_source": "given"})
    details["bootstrap_distribution"] = dist
    return refits.n, level, t, dist, details


def _distribution_iv(distribution):
    if distribution not in ("literal", "bias_corrected"):
        raise ValueError(f"`distribution` must be 'literal' or 'bias_corrected'; got {distribution!r}.")
    return distribution


def _variant(dist, t, distribution, details):
    """The values the interval is read from: the literal nested bootstrap, or the same values
    shifted by t - mean (the bias-corrected variant, centred at t); ``distribution`` already checked
    (:func:`_distribution_iv`)."""
    shift = float(t - dist.mean()) if distribution == "bias_corrected" else 0.0
    details.update({"distribution": distribution, "bootstrap_bias": float(dist.mean() - t),
                    "distribution_shift": shift})
    return dist + shift


# --------------------------------------------------------------------------- the six intervals

@fill_doc(**_DOC)
def bs1(design: ArrayLike, y: ArrayLike, *, confidence_level: float = 0.95, n_resamples: int = 1000, n_inner: int = 50,
        n_boot: int = 200, loss: str | Loss = "squared", centre: str | float = "632",
        rng: np.random.Generator | np.random.SeedSequence | int | None = None,
        bootstrap_distribution: ArrayLike | None = None, distribution: str = "literal",
        time_limit: float | None = None) -> IntervalResult:
    r"""BS1: percentile bootstrap interval of the .632 estimate (Efron & Tibshirani 1993, ch. 13).

    .. math::

        \bigl[q_{\delta/2}, \; q_{1-\delta/2}\bigr], \qquad \delta = 1 - \text{confidence level},

    q the quantiles (:func:`percentile_interval`) of the
    B values of the .632 estimate recomputed on B bootstrap samples of the data,
    each with an inner bootstrap of J samples for its Err(1)
    (:func:`bootstrap_632_distribution`). Reported with centre t, the .632 estimate
    on the data, and clipped to [0, 1] (it lies in [0, 1] anyway).

    Defaults: B = 1000 outer samples (Efron & Tibshirani 1993 advise about 1000
    bootstrap samples for percentile intervals, whose ends are tail quantiles,
    against 25-200 for a standard error) and J = 50 inner samples (the number
    Efron & Tibshirani 1997 use for Err(1)). These B (J + 1) = 51,000 least-squares refits take well under 2 s at
    n = 50 with the batched solver.

    Parameters
    ----------
    %(data)s
    %(nested)s
    %(centre)s
    bootstrap_distribution : (B,) array, optional
        Reuse values from :func:`bootstrap_632_distribution` (or ``details`` of an
        earlier BS1/BS2 result); then n_resamples, n_inner do not apply.
    distribution : 'literal' (default) or 'bias_corrected'
        'literal': the nested bootstrap's values as they are, the procedure Laber & Murphy
        describe and the one the coverage study uses. 'bias_corrected': the same values
        shifted by t - mean(values), removing the nested bootstrap's bias (its .632 values sit
        below t, because a copy of a left-out row can stay in the inner sample);
        ``details["bootstrap_bias"]`` reports mean(values) - t either way.
    %(time_limit)s

    Returns
    -------
    IntervalResult
        ``method="bs1"``; ``details`` has the bootstrap distribution, B, J and the
        unclipped ends.

    %(warns_nested)s

    References
    ----------
    Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman &
    Hall, ch. 13. Efron, B. (1983). JASA 78, 316-331 (the .632 estimate). Laber, E. B.
    and Murphy, S. A. (2008). UAI 2008 (BS1, "quantile bootstrap").

    Examples
    --------
    >>> import numpy as np
    >>> from cudbound.baselines import bs1
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2)); y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    >>> res = bs1(np.column_stack([np.ones(30), X]), y, n_resamples=200, n_inner=20, rng=1)
    >>> 0.0 <= res.low <= res.high <= 1.0
    True
    """
    t0 = time.perf_counter()
    _distribution_iv(distribution)
    n, level, t, dist, details = _bs_common("bs1", design, y, confidence_level, n_resamples, n_inner, n_boot, loss,
                                            centre, rng, bootstrap_distribution, _bs1_iv, time_limit)
    dist = _variant(dist, t, distribution, details)
    return _result("bs1", percentile_interval(dist, level), level, t, n, t0, details)


@fill_doc(**_DOC)
def bs2(design: ArrayLike, y: ArrayLike, *, confidence_level: float = 0.95, n_resamples: int = 1000, n_inner: int = 50,
        n_boot: int = 200, loss: str | Loss = "squared", centre: str | float = "632",
        rng: np.random.Generator | np.random.SeedSequence | int | None = None,
        bootstrap_distribution: ArrayLike | None = None, distribution: str = "literal",
        time_limit: float | None = None) -> IntervalResult:
    r"""BS2: basic ("corrected") bootstrap interval of the .632 estimate.

    .. math::

        \bigl[2t - q_{1-\delta/2}, \; 2t - q_{\delta/2}\bigr]

    (:func:`basic_interval`), with t the .632
    estimate on the data and q the quantiles of the same bootstrap distribution as
    BS1 (:func:`bootstrap_632_distribution`), so BS1 and BS2 have the same width, as
    in the tables of Laber & Murphy (2008). Clipped to [0, 1]. Defaults as for
    :func:`bs1`.

    Parameters
    ----------
    %(data)s
    %(nested)s
    n_boot : int, default 200
        Bootstrap samples for t.
    loss : str or Loss, default 'squared'
    centre : '632' or float, default '632'
        t; a number is used as given (the interval is reflected about it).
    rng : None, int, SeedSequence or Generator
    bootstrap_distribution : (B,) array, optional
        Reuse the values of a BS1 run.
    distribution : 'literal' (default) or 'bias_corrected'
        As for :func:`bs1`; with 'bias_corrected' BS2 is BS1 reflected about t.
    %(time_limit)s

    Returns
    -------
    IntervalResult
        ``method="bs2"``.

    Warns
    -----
    DegenerateResampleWarning

    References
    ----------
    Davison, A. C. and Hinkley, D. V. (1997). Bootstrap Methods and their Application,
    section 5.2. Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap.
    Laber, E. B. and Murphy, S. A. (2008). UAI 2008 (BS2, "corrected bootstrap").
    """
    t0 = time.perf_counter()
    _distribution_iv(distribution)
    n, level, t, dist, details = _bs_common("bs2", design, y, confidence_level, n_resamples, n_inner, n_boot, loss,
                                            centre, rng, bootstrap_distribution, _bs2_iv, time_limit)
    dist = _variant(dist, t, distribution, details)
    return _result("bs2", basic_interval(t, dist, level), level, t, n, t0, details)


def _kohavi_iv(design, y, confidence_level, n_eff, form, n_boot, loss, centre, rng):
    refits = _refits_iv(design, y, loss)
    n_eff = float(refits.n) if n_eff is None else _positive(n_eff, "n_eff")
    if form not in ("wilson", "wald"):
        raise ValueError(f"`form` must be 'wilson' (Kohavi's inversion) or 'wald'; got {form!r}.")
    return (refits, check_confidence_level(confidence_level), n_eff, form,
            _positive_int(n_boot, "n_boot"), _centre_iv(centre), check_rng(rng))


@fill_doc(**_DOC)
def kohavi(design: ArrayLike, y: ArrayLike, *, confidence_level: float = 0.95, n_eff: float | None = None,
           form: str = "wilson", n_boot: int = 200, loss: str | Loss = "squared", centre: str | float = "632",
           rng: np.random.Generator | np.random.SeedSequence | int | None = None,
           time_limit: float | None = None) -> IntervalResult:
    r"""K: Kohavi's normal approximation around the .632 estimate, inverted (Wilson).

    The error estimate t is treated as a binomial proportion over n_eff test cases and its
    normal approximation is solved for p (Kohavi 1995, section 2, the interval for the accuracy):

    .. math::

        \Bigl\{p : |t - p| \le z \sqrt{p (1 - p) / n_{\mathrm{eff}}}\Bigr\}
        = \frac{t + \frac{z^2}{2 n_{\mathrm{eff}}} \pm z \sqrt{\frac{t (1 - t)}{n_{\mathrm{eff}}}
          + \frac{z^2}{4 n_{\mathrm{eff}}^2}}}{1 + z^2 / n_{\mathrm{eff}}},
        \qquad z = \Phi^{-1}(1 - \delta/2),

    the Wilson score interval of t with n = n_eff (:func:`cudbound.statistics.wilson_interval`).

    ``form="wald"`` gives the un-inverted t +/- z sqrt(t (1 - t) / n_eff), clipped to [0, 1]
    (zero width at t = 0), the form the stored results of the paper's study use
    (``experiments/paper.toml``). The Wilson interval is not centred at t; ``centre`` reports t.

    Default n_eff = n: Kohavi's bootstrap estimate uses all n instances, and the
    widths of K in Laber & Murphy's Tables 3 and 5 (about 0.32 at n = 30 and 0.25 at
    n = 50, for errors near 0.3) are 2 z sqrt(t (1 - t) / n).

    Parameters
    ----------
    %(data)s
    n_eff : float > 0, optional
        Effective sample size, default n.
    form : 'wilson' (default) or 'wald'
    %(centre)s
    %(time_limit)s

    Returns
    -------
    IntervalResult
        ``method="kohavi"``; ``details`` has n_eff and form.

    %(warns_centre)s

    References
    ----------
    Kohavi, R. (1995). A study of cross-validation and bootstrap for accuracy estimation
    and model selection. IJCAI 1995, 1137-1145. Efron, B. (1983). JASA 78, 316-331.
    """
    t0 = time.perf_counter()
    refits, level, n_eff, form, n_boot, centre, gen = _kohavi_iv(design, y, confidence_level, n_eff, form,
                                                                            n_boot, loss, centre, rng)
    t, details = _centre_value(refits, centre, n_boot, gen, "kohavi", Budget(check_time_limit(time_limit)))
    details.update({"n_eff": n_eff, "form": form})
    ci = wilson_interval(t, n_eff, level) if form == "wilson" else normal_interval(t, n_eff, level)
    return _result("kohavi", ci, level, t, refits.n, t0, details)


def _yang_iv(design, y, confidence_level, cv, repeats, stratified, n_eff, n_boot, loss, centre, rng):
    refits = _refits_iv(design, y, loss)
    n = refits.n

    def check_count(k):
        k = _positive_int(k, "cv", 2)
        if k > n:
            raise ValueError(f"`cv` must be at most n = {n}; got {k}.")
        return k
    cv = folds_or_count(cv, refits.labels, refits.X, check_count, {"repeats": (repeats, 10), "stratified": (stratified, True)})
    if not isinstance(stratified, (bool, np.bool_)):
        raise ValueError(f"`stratified` must be True or False; got {stratified!r}.")
    n_eff = None if n_eff is None else _positive(n_eff, "n_eff")   # default n / k, k once the folds are dealt
    return (refits, check_confidence_level(confidence_level), cv, _positive_int(repeats, "repeats"),
            bool(stratified), n_eff, _positive_int(n_boot, "n_boot"), _centre_iv(centre, ("632", "cv")),
            check_rng(rng))


@renamed(k="cv")
@fill_doc(**_DOC)
def yang(design: ArrayLike, y: ArrayLike, *, confidence_level: float = 0.95, cv: int | Splitter = 2, repeats: int = 10,
         stratified: bool = True, n_eff: float | None = None, n_boot: int = 200, loss: str | Loss = "squared",
         centre: str | float = "632", rng: np.random.Generator | np.random.SeedSequence | int | None = None,
         time_limit: float | None = None) -> IntervalResult:
    r"""Y: Yang's cross-validation normal approximation.

    .. math::

        \Bigl[t - z \sqrt{t (1 - t) / n_{\mathrm{eff}}}, \; t + z \sqrt{t (1 - t) / n_{\mathrm{eff}}}\Bigr]
        \cap [0, 1], \qquad z = \Phi^{-1}(1 - \delta/2).

    Yang (2006) evaluates a
    classifier by cross-validation with data splitting: fit on n_1 points, test on
    the remaining n_2 = n - n_1, average over random splits; the error estimate is
    then asymptotically normal with variance of order t (1 - t) / n_2, the size of
    one *test* set, not n (the splits re-use the same points).

    Fold scheme (default): ``cv`` = k = 2, i.e. half/half splits (n_1 = n_2 = n / 2, Yang's
    balanced case), stratified by class, repeated 10 times with independent random
    splits (:func:`cudbound.baselines.cross_validation`). n_eff defaults to n / k,
    the mean test-set size (n / 2). The widths of Y in Laber & Murphy's Table 3
    (about 1.4 times those of K at n = 30) agree with n_eff = n / 2.

    Centre: the .632 estimate by default, as for all six baselines in Laber & Murphy
    (2008, experiments step 3); ``centre="cv"`` uses the CV estimate itself (Yang's
    own centre). The CV estimate is computed and reported in ``details`` either way.

    Parameters
    ----------
    %(data)s
    cv : int or scikit-learn splitter, default 2
        Folds per cross-validation run, k (2 <= k <= n; ``k`` is its old name, deprecated), or a
        splitter whose test sets are the folds (``RepeatedStratifiedKFold(n_splits=2, n_repeats=10)``;
        :func:`cudbound.resampling.splitter_folds`: ``repeats`` and ``stratified`` are then the
        splitter's, other values of them refused, and k its number of folds).
    repeats : int, default 10
        Independent fold assignments averaged over.
    stratified : bool, default True
    n_eff : float > 0, optional
        Effective (test) sample size, default n / k.
    n_boot : int, default 200
        Bootstrap samples for the .632 centre.
    loss : str or Loss, default 'squared'
    centre : '632', 'cv' or float, default '632'
    rng : None, int, SeedSequence or Generator
        Source of the folds, then of the .632 bootstrap.
    %(time_limit)s
        The cross-validation runs (``repeats_used``) come before the centre's bootstrap.

    Returns
    -------
    IntervalResult
        ``method="yang"``; ``details`` has n_eff, k, repeats and cv_estimate.

    Warns
    -----
    DegenerateResampleWarning
        When a training fold (or a bootstrap sample) has one class only or is singular.

    References
    ----------
    Yang, Y. (2006). Comparing learning methods for classification. Statistica Sinica
    16(2), 635-657. Laber, E. B. and Murphy, S. A. (2008). UAI 2008.
    """
    t0 = time.perf_counter()
    budget = Budget(check_time_limit(time_limit))
    (refits, level, folds_or_k, repeats, stratified, n_eff, n_boot, centre, gen) = _yang_iv(
        design, y, confidence_level, cv, repeats, stratified, n_eff, n_boot, loss, centre, rng)
    folds = deal_folds(folds_or_k, refits.labels, repeats, stratified, gen)
    k, repeats = int(folds[0].max()) + 1, int(folds.shape[0])
    n_eff = refits.n / k if n_eff is None else n_eff
    per_repeat, log = _cv_runs(refits, folds, budget)
    log.warn("yang (cross-validation)")
    cv_estimate = float(per_repeat.mean())
    details: dict[str, Any]
    if centre == "cv":
        t, details = cv_estimate, {"centre_source": "cv"}
    else:
        t, details = _centre_value(refits, centre, n_boot, gen, "yang", budget)
    budget.note(details, "repeats", per_repeat.shape[0], repeats)
    details.update({"n_eff": n_eff, "k": k, "repeats": repeats, "stratified": stratified, "cv_estimate": cv_estimate,
                    "cv_degenerate_refits": log.degenerate})
    return _result("yang", normal_interval(t, n_eff, level), level, t, refits.n, t0, details)


def _cv_runs(refits: Refits, folds: np.ndarray, budget: Budget) -> tuple[np.ndarray, RefitLog]:
    """The pooled CV error of each run of ``folds`` (:func:`cudbound.baselines.estimators._cv_parts`), the
    runs one after the other while ``budget`` lasts (at least one; all at once without a limit)."""
    parts, log = [], RefitLog()
    for start, stop in budget.chunks(folds.shape[0]):
        per_repeat, lg = _cv_parts(refits, folds[start:stop])
        parts.append(per_repeat)
        log.add(lg)
    return np.concatenate(parts), log


def _martin_iv(design, y, confidence_level, m, prior, n_boot, loss, centre, rng):
    refits = _refits_iv(design, y, loss)
    m = float(refits.n) if m is None else _positive(m, "m")
    return (refits, check_confidence_level(confidence_level), m, _prior_iv(prior),
            _positive_int(n_boot, "n_boot"), _centre_iv(centre), check_rng(rng))


@fill_doc(**_DOC)
def martin(design: ArrayLike, y: ArrayLike, *, confidence_level: float = 0.95, m: float | None = None,
           prior: tuple[float, float] = (1.0, 1.0), n_boot: int = 200, loss: str | Loss = "squared",
           centre: str | float = "632", rng: np.random.Generator | np.random.SeedSequence | int | None = None,
           time_limit: float | None = None) -> IntervalResult:
    r"""M: Martin & Hirschberg's Beta-posterior interval around the .632 estimate.

    The error rate after e errors in m trials has, under a Beta(a, b) prior, the
    posterior Beta(a + e, b + m - e); plugging in e = t m with t the .632 estimate
    ("acting as if we had a test set", Laber & Murphy 2008, footnote 3) gives the
    equal-tailed credible interval

    .. math::

        \bigl[F^{-1}(\delta/2), \; F^{-1}(1 - \delta/2)\bigr], \qquad
        F \text{ the cdf of } \mathrm{Beta}\bigl(a + t m, \; b + (1 - t) m\bigr)

    (:func:`beta_interval`). Defaults: uniform prior a = b = 1, and m = n, the number of
    cases the estimate is computed from (M's widths in Laber & Murphy's Table 3 match
    K's, i.e. m = n).

    Parameters
    ----------
    %(data)s
    m : float > 0, optional
        Effective number of test cases, default n.
    prior : (a, b), default (1, 1)
    %(centre)s
    %(time_limit)s

    Returns
    -------
    IntervalResult
        ``method="martin"``; ``details`` has m, a, b and the posterior parameters.

    %(warns_centre)s

    References
    ----------
    Martin, J. K. and Hirschberg, D. S. (1996). Small sample statistics for classification
    error rates II: confidence intervals and significance tests. Technical Report
    ICS-TR-96-22, University of California, Irvine.
    """
    t0 = time.perf_counter()
    refits, level, m, (a, b), n_boot, centre, gen = _martin_iv(design, y, confidence_level, m, prior,
                                                                          n_boot, loss, centre, rng)
    t, details = _centre_value(refits, centre, n_boot, gen, "martin", Budget(check_time_limit(time_limit)))
    details.update({"m": m, "prior_a": a, "prior_b": b, "posterior_a": a + t * m, "posterior_b": b + (1.0 - t) * m})
    return _result("martin", beta_interval(t, m, level, (a, b)), level, t, refits.n, t0, details)


def _langford_iv(design, y, confidence_level, m, alternative, n_boot, loss, centre, rng):
    refits = _refits_iv(design, y, loss)
    if m is None:
        m = refits.n
    else:
        m = check_scalar(m, "m", min_val=1, hint=" (a number of test cases)")
    return (refits, check_confidence_level(confidence_level), int(m), _alternative_iv(alternative),
            _positive_int(n_boot, "n_boot"), _centre_iv(centre), check_rng(rng))


@renamed(sides="alternative")
@fill_doc(**_DOC)
def langford(design: ArrayLike, y: ArrayLike, *, confidence_level: float = 0.95, m: int | None = None,
             alternative: str = "two-sided", n_boot: int = 200, loss: str | Loss = "squared",
             centre: str | float = "632", rng: np.random.Generator | np.random.SeedSequence | int | None = None,
             time_limit: float | None = None) -> IntervalResult:
    r"""L: Langford's inverted binomial (Clopper-Pearson) with the .632 estimate as test error.

    "Acting as if we had a test set" (Laber & Murphy 2008, footnote 3): k = round(t m)
    errors out of m test cases (rounding half up, k = floor(t m + 1/2)), and the
    binomial tail inversion of Langford (2005) (:func:`cudbound.baselines.binomial_interval`):

    * two-sided (default): :math:`[B_l(\delta/2), B_u(\delta/2)]`, the exact Clopper-Pearson
      interval, with :math:`X \sim \mathrm{Bin}(m, p)` and

      .. math::

          B_u(\epsilon) = \max\{p : P_p(X \le k) \ge \epsilon\}, \qquad
          B_l(\epsilon) = \min\{p : P_p(X \ge k) \ge \epsilon\};

    * ``alternative="less"``: :math:`[0, B_u(\delta)]`, Langford's one-sided test set bound;
    * ``alternative="greater"``: :math:`[B_l(\delta), 1]`.

    Default m = n (L's widths in Laber & Murphy's Table 3, 0.32-0.37 at n = 30, are
    the Clopper-Pearson widths for 30 trials).

    Parameters
    ----------
    %(data)s
    m : int, optional
        Effective number of test cases, default n.
    alternative : 'two-sided' (default), 'less' or 'greater'
        As in ``scipy.stats.binomtest`` (``sides``, 2, 'upper' or 'lower', is its old name, deprecated).
    %(centre)s
    %(time_limit)s

    Returns
    -------
    IntervalResult
        ``method="langford"``; ``details`` has k, m and sides (the bound: 'two-sided', 'upper' or 'lower').

    %(warns_centre)s

    References
    ----------
    Langford, J. (2005). Tutorial on practical prediction theory for classification.
    JMLR 6, 273-306. Clopper, C. J. and Pearson, E. S. (1934). Biometrika 26, 404-413.
    Shah, M. (2008). Hold-out risk bounds for classifier performance evaluation.
    """
    t0 = time.perf_counter()
    refits, level, m, sides, n_boot, centre, gen = _langford_iv(design, y, confidence_level, m,
                                                                           alternative, n_boot, loss, centre, rng)
    t, details = _centre_value(refits, centre, n_boot, gen, "langford", Budget(check_time_limit(time_limit)))
    k = min(m, max(0, math.floor(t * m + 0.5)))
    details.update({"k": k, "m": m, "sides": sides})
    return _result("langford", _clopper_pearson(k, m, level, sides), level, t, refits.n, t0, details)


def _bs_options_iv(design, y, confidence_level, n_resamples, n_inner, n_boot, loss, centre, rng,
                   bootstrap_distribution, distribution):
    out = _bs_iv(design, y, confidence_level, n_resamples, n_inner, n_boot, loss, centre, rng, bootstrap_distribution)
    _distribution_iv(distribution)
    return out


INPUT_CHECKS: dict[str, Callable[..., object]] = {
    "bs1": _bs_options_iv, "bs2": _bs_options_iv, "kohavi": _kohavi_iv, "yang": _yang_iv, "martin": _martin_iv,
    "langford": _langford_iv,
}
"""The input validation of each interval, by the interval's name: called with (some of) the
interval's own arguments, by name, it raises ValueError (or TypeError) for what the interval would
refuse and computes nothing (:func:`cudbound.registry.options_check` makes a registered method's
option check of it)."""
