"""Every AUC interval by name, and :func:`auc_interval`, the front end that fits a learning procedure first.

The registry holds functions ``function(labels, scores, folds, *, confidence_level, rng, **options)``
on labels in {-1, +1}, one held-out score per row and the fold of each row (used by the
cross-validated intervals, ignored by the others), returning an
:class:`~cudbound.auc.result.AUCIntervalResult`. The built-in ones:

* ``delong``: DeLong's variance, Wald interval, as pROC (:func:`delong_interval`);
* ``delong_logit``: the same on the logit scale, inside [0, 1];
* ``hanley_mcneil``: Hanley & McNeil's (1982) variance, Wald interval;
* ``newcombe``: Newcombe's (2006) score-type interval;
* ``bootstrap_percentile`` and ``bootstrap_bca``: the stratified bootstrap (:func:`bootstrap_interval`);
* ``cvauc``: LeDell et al.'s (2015) influence-curve interval of the fold-averaged AUC;
* ``cvauc_pooled``: their repeated-measures version, the same AUC with the influence curve
  clustered by subject (option ``ids``; :func:`cvauc_interval` with ``pooled=True``).

A study names them (``experiments/study3.toml``), and so does ``cudbound auc --interval``.
Each draws its random numbers from the stream of its own name
(:func:`cudbound.resampling.stream`), so adding a method changes no other's numbers.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .._registry import Entry, Registry, generator, root_seed
from .._validation import check_data
from ..resampling import Splitter
from .cv import _cross_validated_auc
from .cvauc import cvauc_interval
from .intervals import bootstrap_interval, delong_interval, hanley_mcneil_interval, newcombe_interval
from .result import AUCIntervalResult

__all__ = ["AUCMethod", "register", "unregister", "get_method", "method_names", "auc_interval"]


@dataclass(frozen=True)
class AUCMethod(Entry):
    """One registered AUC interval: ``function(labels, scores, folds, *, confidence_level, rng, **options)``;
    its options (``options()``) are the function's keywords after these."""

    uses_folds: bool = False
    """Whether the interval rests on the folds (the cross-validated intervals) or on the pooled scores alone."""

    DATA: ClassVar[tuple[str, ...]] = ("labels", "scores", "folds")


_REGISTRY: Registry[AUCMethod] = Registry("AUC interval", AUCMethod, caller="auc_interval()")


def register(name: str, function: Callable, summary: str, *, uses_folds: bool = False,
             replace: bool = False) -> AUCMethod:
    """Add an AUC interval under ``name`` (lower case, no commas or spaces); its function takes
    ``(labels, scores, folds, *, confidence_level, rng, **options)`` and returns an
    :class:`AUCIntervalResult`."""
    return _REGISTRY.add(AUCMethod(name, function, summary, uses_folds), replace=replace)


def unregister(name: str) -> None:
    """Remove an AUC interval from the registry."""
    _REGISTRY.remove(name)


def method_names() -> tuple[str, ...]:
    """The registered AUC intervals, in registration order."""
    return _REGISTRY.names()


def get_method(name: str) -> AUCMethod:
    """The registered AUC interval ``name`` (a ValueError that lists the registered ones otherwise)."""
    return _REGISTRY.lookup(name)


def _delong(labels, scores, folds, *, confidence_level=0.95, rng=None):
    return delong_interval(labels, scores, confidence_level=confidence_level)


def _delong_logit(labels, scores, folds, *, confidence_level=0.95, rng=None):
    return delong_interval(labels, scores, confidence_level=confidence_level, transform="logit")


def _hanley_mcneil(labels, scores, folds, *, confidence_level=0.95, rng=None):
    return hanley_mcneil_interval(labels, scores, confidence_level=confidence_level)


def _newcombe(labels, scores, folds, *, confidence_level=0.95, rng=None):
    return newcombe_interval(labels, scores, confidence_level=confidence_level)


def _bootstrap(kind):
    def interval(labels, scores, folds, *, confidence_level=0.95, rng=None, n_resamples=2000):
        return bootstrap_interval(labels, scores, confidence_level=confidence_level, method=kind,
                                  n_resamples=n_resamples, rng=rng)
    interval.__name__ = interval.__qualname__ = f"_bootstrap_{kind}"
    return interval


def _cvauc(labels, scores, folds, *, confidence_level=0.95, rng=None):
    return cvauc_interval(labels, scores, folds, confidence_level=confidence_level)


def _cvauc_pooled(labels, scores, folds, *, confidence_level=0.95, rng=None, ids=None):
    return cvauc_interval(labels, scores, folds, confidence_level=confidence_level, pooled=True, ids=ids)


for _name, _function, _summary, _folds in (
        ("delong", _delong, "DeLong's variance, Wald interval (DeLong et al. 1988; as pROC)", False),
        ("delong_logit", _delong_logit, "DeLong's variance, Wald interval on the logit scale", False),
        ("hanley_mcneil", _hanley_mcneil, "Hanley & McNeil's (1982) variance, Wald interval", False),
        ("newcombe", _newcombe, "Newcombe's (2006) score-type interval", False),
        ("bootstrap_percentile", _bootstrap("percentile"), "stratified bootstrap, percentile (as pROC)", False),
        ("bootstrap_bca", _bootstrap("bca"), "stratified bootstrap, BCa", False),
        ("cvauc", _cvauc, "influence-curve interval of the fold-averaged AUC (LeDell et al. 2015)", True),
        ("cvauc_pooled", _cvauc_pooled, "the same, its influence curve clustered by subject (`ids`; LeDell et al. "
         "2015, repeated measures)", True)):
    register(_name, _function, _summary, uses_folds=_folds)


def auc_interval(estimator: Any, X: ArrayLike, y: ArrayLike, *, method: str = "delong",
                 cv: int | Splitter | ArrayLike = 5, groups: ArrayLike | None = None, confidence_level: float = 0.95,
                 rng: np.random.Generator | np.random.SeedSequence | int | None = None, pos_label: Any = None,
                 **options: Any) -> AUCIntervalResult:
    """An interval for the AUC of a learning procedure: fit out of fold, then the interval ``method``.

    ``estimator`` (any scikit-learn classifier with ``decision_function``) is refitted on the
    training part of each fold of ``cv`` and scores the held-out part (:func:`cudbound.auc.cv_auc`,
    which takes ``cv`` and ``groups`` as here, and draws the same folds from the same ``rng``); the
    interval ``method`` (a registered name, :func:`method_names`) is computed on these out-of-fold
    scores: on all of them as one score vector (DeLong, Hanley-McNeil, Newcombe, the bootstraps:
    the usual practice, although they come from different models), or fold by fold (``cvauc``,
    ``cvauc_pooled``, the intervals made for cross-validation; with ``groups``, ``cvauc_pooled``
    clusters by them). ``options`` go to the method (``n_resamples`` for the bootstraps). ``rng`` seeds the folds and the method, each from a
    stream of its own (:func:`cudbound.resampling.stream`): the folds from the out-of-fold stream
    (:data:`cudbound.resampling.OUT_OF_FOLD_STREAM`), the method from its name.

    >>> import numpy as np
    >>> from cudbound.auc import KernelRLS
    >>> X = np.arange(40.0)[:, None] + np.tile([0.0, 9.0], 20)[:, None]; y = np.where(np.arange(40) >= 20, 1, -1)
    >>> res = auc_interval(KernelRLS(), X, y, method="delong", cv=5, rng=0)
    >>> res.method, 0.5 < res.estimate <= 1.0, res.low <= res.estimate <= res.high
    ('delong', True, True)
    """
    name = _REGISTRY.select([method] if isinstance(method, str) else method)
    if len(name) != 1:
        raise ValueError(f"`method` names one AUC interval; got {method!r}.")
    spec = get_method(name[0])
    options = _REGISTRY.entry_options(spec.name, options, "auc_interval()")
    root = root_seed(rng)
    t0 = time.perf_counter()
    X, labels, _ = check_data(X, y, pos_label=pos_label)
    cv_result = _cross_validated_auc(estimator, X, labels, cv=cv, pooling="pooled", groups=groups, root=root)
    if np.ndim(cv_result.scores) != 1:
        raise ValueError("`cv` must give every row one held-out score (a K-fold split, not a repeated one) for an "
                         "AUC interval.")
    if spec.name == "cvauc_pooled" and groups is not None and "ids" not in options:
        options = {**options, "ids": np.asarray(groups)}     # the subjects the folds were grouped by
    result = spec.function(labels, cv_result.scores, cv_result.folds, confidence_level=confidence_level,
                           rng=generator(root, spec.name), **options)
    result.seconds = time.perf_counter() - t0
    result.details = {**result.details, "cv_folds": int(np.max(cv_result.folds)) + 1}
    return result

