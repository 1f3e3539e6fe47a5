"""Comparing two classifiers: tests and intervals for the difference A - B.

On one set of predictions (a test set, or out-of-fold predictions), :mod:`cudbound.compare.predictions`:
:func:`mcnemar`, :func:`error_difference_interval` (Tango's score interval by default, Newcombe's,
Agresti & Min's) and :func:`delong_test` (two correlated AUCs). On two learning procedures refitted
on resamples of (X, y), :mod:`cudbound.compare.procedures`: :func:`paired_ttest_5x2cv`,
:func:`combined_ftest_5x2cv`, :func:`corrected_t_test`, :func:`wald_cv_test` and
:func:`nested_cv_test`. Every one returns a :class:`ComparisonResult` (``estimate`` = A - B,
``confidence_interval`` where the method gives one, ``statistic``, ``pvalue``, ``confidence_level``,
``alternative``, ``to_dict()``, ``to_frame()``, a short repr), so that swapping A and B flips the
sign of the estimate and keeps the two-sided p-value.

The registry. Every comparison is registered by name (:func:`method_names`), so that a study can
name it, and :func:`compare` runs any of them on one pair of procedures:

* on out-of-fold predictions: ``"mcnemar"``, ``"tango"``, ``"newcombe"``, ``"agresti_min"`` (the
  intervals of :func:`error_difference_interval`) and ``"delong"``: both procedures are refitted
  on one K-fold split (option ``cv``, default 10 stratified folds), each point is predicted and
  scored by the models fitted without its fold (as scikit-learn's ``cross_val_predict`` does;
  scores are ``decision_function``, else the positive class's ``predict_proba``, for a
  scikit-learn classifier, z' beta for a :class:`Procedure`), and the function runs on these
  predictions as on one test set. Caveat: they are not one test set. The n out-of-fold outcomes
  come from K models fitted on overlapping training sets, so they are not independent; the tests
  treat them as if they were (the usual practice; Dietterich 1998 found McNemar's test on a
  held-out set well calibrated, and warns against resampled tests that ignore the dependence).
  These five share one random stream (:data:`~cudbound.resampling.OUT_OF_FOLD_STREAM`),
  hence, in one call, the same folds and one set of refits;
* on repeated refits: ``"ttest_5x2cv"``, ``"ftest_5x2cv"``, ``"corrected_t"``, ``"wald_cv"``,
  ``"nested_cv"``, each on the stream of its own name;
* on bootstrap count vectors of the package's two classifiers: ``"cud"``, the CUD interval of the
  difference of the two fitted classifiers' true errors (:func:`cud_difference_interval`).

A stream depends on its name only (:func:`cudbound.resampling.stream`), so adding a method changes
no other's numbers. The registry is a ``cudbound._registry.Registry``, as are those of the interval
methods (:mod:`cudbound.registry`), the AUC intervals and the data sets (one name rule, one way to
split the options, one root seed), but a registry of its own: an interval method is called on a
design with ``(design, y, *, confidence_level, rng)`` and returns an ``IntervalResult``, and that
registry sits above this layer (``docs/architecture.md``); a comparison is called on two procedures
and returns a :class:`ComparisonResult`.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .._budget import Budget, charge_shared, check_time_limit, warn_skipped
from .._registry import Entry, Registry, generator, methods_bar, root_seed
from ..resampling import OUT_OF_FOLD_STREAM
from .cud import _cud, cud_difference_interval
from .predictions import INTERVAL_METHODS, delong_test, error_difference_interval, mcnemar, paired_table
from .procedures import (OutOfFold, Procedure, ProcedurePair, _corrected_t, _delong_oof, _f5x2,
                         _interval_oof, _mcnemar_oof, _nested_cv, _t5x2, _wald_cv, combined_ftest_5x2cv,
                         corrected_t_test, nested_cv_test, paired_ttest_5x2cv, wald_cv_test)
from ..results import ResultList
from .result import ALTERNATIVES, ComparisonResult

__all__ = ["compare", "mcnemar", "error_difference_interval", "delong_test", "paired_table", "paired_ttest_5x2cv",
           "combined_ftest_5x2cv", "corrected_t_test", "wald_cv_test", "nested_cv_test", "cud_difference_interval",
           "ComparisonResult",
           "Procedure", "ProcedurePair", "OutOfFold", "ComparisonMethod", "register", "unregister", "get_method",
           "method_names", "select_methods", "ALTERNATIVES", "INTERVAL_METHODS", "DEFAULT_METHODS",
           "OUT_OF_FOLD_STREAM", "compare_pair", "root_seed", "TARGETS", "ComparisonsInterrupted"]

@dataclass(frozen=True)
class ComparisonMethod(Entry):
    """One registered comparison of two procedures: ``function(pair, *, confidence_level,
    alternative, rng, **options)`` on a :class:`ProcedurePair`, returning a :class:`ComparisonResult`;
    its options (``options()``) are the function's keywords besides these."""

    stream: str = ""
    """The name of the random stream :func:`compare` gives it (default: its own name)."""

    target: str | None = None
    """The difference it addresses (:data:`TARGETS`): ``"conditional"``, that of the two classifiers
    fitted on the n points; ``"expected"``, that of the two learning procedures, in expectation over
    training sets; None when not stated (a user's method)."""

    knobs: tuple[str, ...] = ()
    """Keywords of the function that :func:`compare` sets from the run, not options: ``("time_limit",)``
    for a method that stops its repetitions when its share of the run's ``time_limit`` is spent."""

    DATA: ClassVar[tuple[str, ...]] = ("pair",)
    REQUIRED: ClassVar[tuple[str, ...]] = ("confidence_level", "alternative", "rng")
    RESERVED: ClassVar[tuple[str, ...]] = REQUIRED

    def options(self) -> list[str]:
        """The option names a user may set, sorted: :meth:`cudbound._registry.Entry.options` less the knobs."""
        return [k for k in super().options() if k not in self.knobs]


class ComparisonsInterrupted(KeyboardInterrupt):
    """Ctrl-C (KeyboardInterrupt) during :func:`compare`, with what finished: ``results`` (a
    :class:`cudbound.results.ResultList` of the comparisons that completed, in order), ``method`` (the
    one that was running) and ``pending`` (the names not started). It is a KeyboardInterrupt, so code
    that does not look for it stops as before."""

    def __init__(self, results: Sequence[ComparisonResult], method: str, pending: Sequence[str]) -> None:
        self.results, self.method, self.pending = ResultList(results), method, tuple(pending)
        super().__init__(f"interrupted during {method!r}: {len(self.results)} comparison(s) finished"
                         f"{', not started: ' + ', '.join(self.pending) if self.pending else ''}")

    def __reduce__(self):   # picklable (from a worker process) with its fields
        return type(self), (list(self.results), self.method, self.pending)


TARGETS = ("conditional", "expected")
"""What a comparison's difference A - B is of (``ComparisonMethod.target``; Dietterich 1998, and the
table of ``docs/compare.md``): ``"conditional"``, of the two classifiers fitted on these n points (the
tests on one set of predictions); ``"expected"``, of the two learning procedures at this n, in
expectation over training sets (the tests on refits over repeated splits)."""

_REGISTRY: Registry[ComparisonMethod] = Registry("comparison", ComparisonMethod, caller="compare()")


def register(name: str, function: Callable, summary: str, *, replace: bool = False,
             stream: str | None = None, target: str | None = None, knobs: Sequence[str] = ()) -> ComparisonMethod:
    """Add a comparison of two procedures under ``name`` (lower case, no commas or spaces); its
    function takes ``(pair, *, confidence_level, alternative, rng, **options)``. ``stream`` names
    the random stream :func:`compare` draws its ``rng`` from (default ``name``); methods that
    share a stream see the same random draws (the comparisons on out-of-fold predictions share
    :data:`~cudbound.resampling.OUT_OF_FOLD_STREAM`, hence their folds). ``target``, one of
    :data:`TARGETS` or None, says which difference it addresses. ``knobs``: keywords set by
    :func:`compare` alone (``("time_limit",)``: the function gets its share of the run's time limit,
    and no option sets it); a ``time_limit`` that is not a knob is an option too, and the smaller
    of it and the share is given."""
    if target is not None and target not in TARGETS:
        raise ValueError(f"`target` must be one of {TARGETS} or None; got {target!r}.")
    knobs = tuple(knobs)
    stray = [k for k in knobs if k not in inspect.signature(function).parameters]
    if stray:
        raise TypeError(f"the knobs {stray} of comparison {name!r} are not keywords of its function.")
    return _REGISTRY.add(ComparisonMethod(name, function, summary, stream or name, target, knobs), replace=replace)


def unregister(name: str) -> None:
    """Remove a comparison from the registry."""
    _REGISTRY.remove(name)


def method_names() -> tuple[str, ...]:
    """The registered comparisons of procedures, in registration order."""
    return _REGISTRY.names()


def get_method(name: str) -> ComparisonMethod:
    """The registered comparison ``name`` (a ValueError that lists the registered ones otherwise)."""
    return _REGISTRY.lookup(name)


for _name, _function, _summary in (
        ("mcnemar", _mcnemar_oof, "McNemar's test on out-of-fold predictions (McNemar 1947)"),
        ("tango", _interval_oof("tango"), "Tango's score interval on out-of-fold predictions (Tango 1998)"),
        ("newcombe", _interval_oof("newcombe"), "Newcombe's interval on out-of-fold predictions (Newcombe 1998)"),
        ("agresti_min", _interval_oof("agresti_min"),
         "Agresti & Min's interval on out-of-fold predictions (Agresti & Min 2005)"),
        ("delong", _delong_oof, "DeLong's test of two AUCs on out-of-fold scores (DeLong et al. 1988)")):
    register(_name, _function, _summary, stream=OUT_OF_FOLD_STREAM, target="conditional")

for _name, _function, _summary in (
        ("ttest_5x2cv", _t5x2, "5x2cv paired t test (Dietterich 1998)"),
        ("ftest_5x2cv", _f5x2, "combined 5x2cv F test (Alpaydin 1999)"),
        ("corrected_t", _corrected_t, "corrected repeated k-fold t test and interval (Nadeau & Bengio 2003)"),
        ("wald_cv", _wald_cv, "cross-validation Wald test and interval (Bayle et al. 2020)"),
        ("nested_cv", _nested_cv, "nested cross-validation interval (Bates, Hastie & Tibshirani 2023)")):
    register(_name, _function, _summary, target="expected",
             knobs=("time_limit",) if "time_limit" in inspect.signature(_function).parameters else ())

register("cud", _cud, "CUD interval of the difference of the two fitted classifiers' true errors (Laber & Murphy "
         "2008, for the joint loss)", target="conditional")

DEFAULT_METHODS = ("mcnemar", "corrected_t")
"""The comparisons :func:`compare` and ``cudbound compare`` run by default, one per question of
``docs/compare.md``: McNemar's test of the two fitted classifiers on out-of-fold predictions, and the
corrected repeated k-fold t test and interval of the two procedures' expected difference, the
interval nearest 95% coverage in the third study after nested CV (``results/REPORT.md``, sections 5
and 6) at 1/28 of its refits. Both take either alternative and any classifier. Wald-CV's interval
and the paired intervals on out-of-fold predictions fall short of 95% there; ``nested_cv`` comes
closest but refits each procedure 2,770 times: name it to run it."""


def select_methods(methods: str | Sequence[str]) -> tuple[str, ...]:
    """The registered comparisons that ``methods`` names, as :func:`compare` reads it (and
    ``--methods`` of ``cudbound compare``): a list of registered names, a comma-separated string or
    ``"all"``; a ValueError that lists the registered ones for an unknown name.

    >>> select_methods("mcnemar,delong")
    ('mcnemar', 'delong')
    """
    return _REGISTRY.select(methods)


def compare(estimator_a: Any, estimator_b: Any, X: ArrayLike, y: ArrayLike,
            methods: str | Sequence[str] = DEFAULT_METHODS, *, confidence_level: float = 0.95,
            alternative: str = "two-sided", rng: np.random.Generator | np.random.SeedSequence | int | None = None,
            pos_label: Any = None, time_limit: float | None = None, progress: bool | None = None,
            **options: Any) -> ResultList:
    """Run registered comparisons of two learning procedures on the same data.

    Parameters
    ----------
    estimator_a, estimator_b : scikit-learn classifier, Procedure or dict
        A and B: scikit-learn classifiers (cloned and refitted), or the package's classifier as a
        :class:`Procedure` (``basis``, ``loss`` or ``estimator``, as :func:`cudbound.cud_interval`
        takes them) or a dict of its fields.
    X : (n, d) array of features.
    y : (n,) labels with two classes.
    methods : sequence of str, a comma-separated str, or "all"
        Registered names (:func:`method_names`); default :data:`DEFAULT_METHODS`. ``"mcnemar"``,
        ``"tango"``, ``"newcombe"``, ``"agresti_min"`` and ``"delong"`` run on the out-of-fold
        predictions (and scores) of one K-fold split, the same for all five (module docstring).
    confidence_level, alternative
        Given to every method.
    rng : None, int, SeedSequence or Generator
        Each method draws its splits from its own stream, derived from ``rng`` and the method's name
        (:func:`cudbound.resampling.stream`; the comparisons on out-of-fold predictions share one),
        so its result does not depend on the other methods run.
    pos_label : the positive class, when the labels need it.
    time_limit : float > 0, optional
        Seconds for the whole run, the checks of the data and procedures included (None, default: no
        limit), shared as by :func:`cudbound.intervals`: each method that can stop early gets, when it
        starts, the time left divided by the number of methods not yet run, itself included (or
        ``cud``'s own ``time_limit`` option, if smaller); what it leaves unused goes to the ones after
        it. Such a method draws all its splits as without a limit, refits both procedures
        repetition by repetition, stops once its share is spent and computes its statistic from
        the repetitions it used, the first ones of the run without a limit (``details``:
        ``repeats_used``, ``splits_used`` for ``corrected_t`` with a splitter, and
        ``cut_by_time_limit``), never fewer than keep the statistic defined: one repetition of the
        5x2cv tests (t with 1 degree of freedom, F(2, 1)), of ``corrected_t`` with K folds (K splits;
        2 splits with a splitter) and of ``nested_cv`` (its plain CV runs for the bias are always
        made). ``cud`` keeps a certified, conservative interval (:func:`cud_difference_interval`).
        ``wald_cv`` and the five on out-of-fold predictions (one K-fold split) run to their end. A
        method not started when the time is up is skipped: it is not in the results,
        ``ResultList.skipped`` names it and a warning says so.
    progress : bool or None, default None
        One progress bar over the comparisons on stderr, naming the one that runs: None shows it on a
        terminal once the call has lasted 2 seconds, True always, False never.
    **options
        Shared options, given to every selected method that takes them (``cv``, ``repeats``,
        ``exact``, ...; :meth:`ComparisonMethod.options` lists a method's),
        and per-method dicts ``<name>_options`` that override them for one method. Unknown names
        raise ValueError.

    Returns
    -------
    ResultList
        The :class:`ComparisonResult` of each method that ran, in the order of ``methods`` (a list with
        ``to_frame()`` and ``plot()``, a forest plot of the differences with the zero line), and
        ``.skipped``, the methods the time limit left out.

    Raises
    ------
    ComparisonsInterrupted
        On Ctrl-C: a KeyboardInterrupt that keeps the results of the comparisons that finished.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.dummy import DummyClassifier
    >>> rng = np.random.default_rng(1)
    >>> X = rng.normal(size=(40, 2)); y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1, -1)
    >>> res = compare(Procedure(), DummyClassifier(), X, y, methods=["corrected_t", "wald_cv", "ftest_5x2cv"],
    ...               rng=0, corrected_t_options={"repeats": 2})
    >>> [r.method for r in res], all(r.estimate < 0 for r in res)
    (['corrected_t', 'wald_cv', 'ftest_5x2cv'], True)
    """
    budget = Budget(check_time_limit(time_limit, zero=False))
    names = select_methods(methods)
    shared, per = _REGISTRY.split_options(names, options, "compare()")
    pair = ProcedurePair(estimator_a, estimator_b, X, y, pos_label)
    return _loop(pair, names, root_seed(rng), confidence_level, alternative, shared, per, progress, budget)


def compare_pair(pair: ProcedurePair, names: Sequence[str], root: np.random.SeedSequence, *,
                 confidence_level: float = 0.95, alternative: str = "two-sided", shared: Mapping | None = None,
                 per: Mapping | None = None, progress: bool | None = False,
                 time_limit: float | None = None) -> ResultList:
    """The loop of :func:`compare` on a pair already built, its streams children of ``root``
    (:func:`root_seed`): ``shared`` given to every method that takes them and ``per[name]`` to one.
    The options are not checked here (:func:`compare` checks them first; a study checks them when it
    reads its configuration). A study calls it to share the pair's refits with its AUC intervals.
    ``progress`` and ``time_limit`` (seconds from this call): as for :func:`compare` (the bar is off by
    default here); Ctrl-C raises :class:`ComparisonsInterrupted` with the comparisons that finished."""
    budget = Budget(check_time_limit(time_limit, zero=False))
    return _loop(pair, names, root, confidence_level, alternative, shared, per, progress, budget)


def _loop(pair: ProcedurePair, names: Sequence[str], root: np.random.SeedSequence, confidence_level: float,
          alternative: str, shared: Mapping | None, per: Mapping | None, progress: bool | None,
          budget: Budget) -> ResultList:
    """:func:`compare_pair` under ``budget``: each method that takes a ``time_limit`` gets its equal share
    of what is left (:meth:`cudbound._budget.Budget.share`); those not started when it is spent are
    skipped (``ResultList.skipped``, a warning names them)."""
    shared, per = dict(shared or {}), dict(per or {})
    made_before = pair.pieces()     # shared work the run did not do (e.g. a study's AUC rows' refits)
    results: list[ComparisonResult] = []
    skipped: tuple[str, ...] = ()
    bar = methods_bar(progress, len(names), "compare")
    try:
        for i, name in enumerate(names):
            if budget.spent():
                skipped = tuple(names[i:])
                break
            method = get_method(name)
            kwargs = {k: v for k, v in shared.items() if k in method.options()}
            kwargs.update(per.get(name, {}))
            if "time_limit" in method.parameters:
                share = budget.share(len(names) - i, kwargs.get("time_limit"))
                if share is not None:
                    kwargs["time_limit"] = share.left()
            if bar is not None:
                bar.set_description(f"compare: {name}")
                left = budget.left()
                if left is not None:
                    bar.set_postfix_str(f"{left:.0f} s left", refresh=False)
            try:
                res = method.function(pair, confidence_level=confidence_level, alternative=alternative,
                                      rng=generator(root, method.stream), **kwargs)
            except KeyboardInterrupt:
                raise ComparisonsInterrupted(results, name, names[i + 1:]) from None
            except ValueError as exc:
                if len(names) == 1:
                    raise
                raise ValueError(f"comparison {name!r}: {exc}") from exc
            results.append(res)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    warn_skipped(skipped)
    _charge(results, made_before)
    return ResultList(results, skipped=skipped)


def _charge(results: list[ComparisonResult], made_before: set[str]) -> None:
    """Each result's ``seconds``: its own time, less the shared pieces it computed (the out-of-fold
    refits, computed by the first comparison on predictions and reused by the others), plus its
    equal share of every shared piece it used (``details["shared_pieces"]``; the share in
    ``details["shared_seconds"]``). Pieces computed before the run (``made_before``) cost it
    nothing and are charged to no one. Summed, the seconds are the comparisons' time, unchanged."""
    pieces = [{k: v for k, v in res.details.get("shared_pieces", {}).items() if k not in made_before}
              for res in results]
    own = [res.seconds for res in results]
    share = charge_shared(own, pieces)
    for i, res in enumerate(results):
        if pieces[i]:
            res.seconds = own[i] + share[i]
            res.details["shared_seconds"] = share[i]
