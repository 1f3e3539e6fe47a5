"""The registry of interval methods, and :func:`intervals`, which runs any of them on one data set.

Every method, CUD included, is registered under its name with one signature::

    function(design, y, *, confidence_level, rng, **options) -> IntervalResult

on the prepared data (``cudbound.design.PreparedData``: the features, the basis fitted on them, the
full-rank design Phi) and labels in {-1, +1}. :func:`intervals` prepares the data once, fits
beta-hat once (for CUD) and calls each selected method; a method that refits on part of the data
refits the whole procedure, basis included (:mod:`cudbound.refit`). :func:`intervals_from_design`
starts from prepared data (a coverage task) or a design matrix (fixed features). The command line, the coverage study and the
figures read the same registry (:func:`method_names`, :func:`get_method`).

Random streams. A root ``SeedSequence`` is drawn once from ``rng`` and each method draws from the
stream of its name (the rule of :mod:`cudbound._registry`, :func:`~cudbound._registry.stream`), so
its numbers depend on its name only: adding, removing or reordering other methods changes nothing.
The shared pieces draw from the streams ``"centre"`` and ``"bootstrap"``. One exception,
by design: an integer seed or a ``SeedSequence`` is given to ``"cud"`` unchanged (its hook,
:class:`IntervalMethod`), so that ``intervals(X, y, rng=seed)`` reports exactly the interval of
``cud_interval(X, y, rng=seed)``.

Adding a method (``docs/architecture.md`` has a worked example)::

    register("wald", my_wald, "Wald interval of the resubstitution error")
"""
from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from . import _budget
from ._budget import Budget, charge_shared, check_time_limit, warn_skipped
from ._kernel_compile import compile_seconds
from ._registry import Entry, Registry, generator, methods_bar, root_seed, stream
from ._validation import check_confidence_level, check_scalar
from .baselines.methods import INPUT_CHECKS as _PAPER_CHECKS
from .baselines.methods import (bs1, bs2, kohavi, langford, martin, share_centre, share_centre_and_distribution,
                                yang)
from .baselines.modern import INPUT_CHECKS as _MODERN_CHECKS
from .baselines.modern import bccv, conservative_z, corrected_t, e632_delta, nested_cv, wald_cv
from .cud import _cud_design_iv, cud_from_design, prepare_cud
from .design import PreparedData, as_prepared, prepare_data
from .fit import FittedClassifier
from .refit import Procedure, as_mapped_procedure, takes_procedure
from .results import IntervalResult, ResultList

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

# the main function first: the API reference lists them in this order
__all__ = ["intervals", "intervals_from_design", "IntervalsInterrupted", "method_names", "register", "unregister",
           "get_method", "IntervalMethod", "METHODS", "MODERN_METHODS", "stream", "check_options", "options_check", "select_methods"]

SHARED_STREAMS = ("centre", "bootstrap")
"""Streams of the computations shared between methods; no method may take these names."""

_RESERVED = ("confidence_level", "rng", "basis", "pos_label", "bootstrap_distribution", "fitted")
"""Set by :func:`intervals` itself; not accepted among the options."""


@dataclass(frozen=True)
class IntervalMethod(Entry):
    """One registered method.

    ``function(design, y, *, confidence_level, rng, **options)`` returns an
    :class:`~cudbound.results.IntervalResult`. ``label`` is the short column header of
    the tables (``"K"`` for Kohavi). ``prepare`` (optional) is the method's hook, owned by the
    module that defines the method and called before it as
    ``kwargs, details = prepare(method, data, y, options, shared=shared, root=root, rng=rng)``:
    this entry, the data, labels and options the function gets, ``shared`` (a dict kept for one
    call, so that a computation several methods need is made once; it starts as
    ``{"fitted": the caller's fitted or None}``), the call's root SeedSequence (a shared
    computation draws from ``cudbound._registry.generator(root, s)``, ``s`` in
    :data:`SHARED_STREAMS`) and the user's ``rng``. ``kwargs`` join the call (an ``rng`` among them
    replaces the method's stream), ``details`` the result's details. Among them, ``shared_pieces``
    (optional), ``{name: seconds}`` of the shared computations the method used, each timed on
    ``cudbound._budget.clock`` where it was computed: :func:`intervals` charges each one's seconds
    in equal parts to the methods that used it (``seconds``). Under a time limit, ``options`` hold
    the method's ``time_limit``, its share of the run's budget, which a shared computation
    honours too. The built-in hooks give the
    baselines the .632 centre (BS1 and BS2 also their bootstrap distribution) and CUD its beta-hat
    and its seed rule (module docstring). ``check`` (optional):
    ``check(n, *, confidence_level, **options)`` raises ValueError (or TypeError) for options the
    function would refuse on a training set of n points, without computing anything
    (:func:`check_options`; a coverage study runs it when it reads its configuration).
    ``knobs``: keywords of the function that are knobs of the run, set by :func:`intervals` alone
    (the baselines' ``time_limit``, their share of the run's). Its options (``options()``) are the
    function's keywords besides those :func:`intervals` sets and its knobs.
    """

    label: str
    prepare: Callable | None = None
    check: Callable | None = None
    knobs: tuple[str, ...] = ()

    DATA: ClassVar[tuple[str, ...]] = ("design", "y")
    RESERVED: ClassVar[tuple[str, ...]] = _RESERVED

    def default(self, option: str) -> Any:
        """The function's default value of ``option`` (what it uses when a call does not set it)."""
        return self.parameters[option].default

    def options(self) -> list[str]:
        """The option names a user may set, sorted: :meth:`cudbound._registry.Entry.options` less the knobs."""
        return [k for k in super().options() if k not in self.knobs]


_REGISTRY: Registry[IntervalMethod] = Registry("interval method", IntervalMethod, caller="intervals()",
                                               taken=SHARED_STREAMS)


class IntervalsInterrupted(KeyboardInterrupt):
    """Ctrl-C (KeyboardInterrupt) during :func:`intervals` or :func:`intervals_from_design`, with what
    finished: ``results`` (a :class:`cudbound.results.ResultList` of the methods that completed, in
    order), ``method`` (the one that was running) and ``pending`` (the names not started). It is a
    KeyboardInterrupt, so code that does not look for it stops as before."""

    def __init__(self, results: Sequence[IntervalResult], method: str, pending: Sequence[str]) -> None:
        self.results, self.method, self.pending = ResultList(results), method, tuple(pending)
        super().__init__(f"interrupted during {method!r}: {len(self.results)} method(s) finished"
                         f"{', not started: ' + ', '.join(self.pending) if self.pending else ''}")


def register(name: str, function: Callable, summary: str, *, label: str | None = None,
             prepare: Callable | None = None, check: Callable | None = None, knobs: Sequence[str] = (),
             replace: bool = False) -> IntervalMethod:
    """Add an interval method to the registry under ``name`` (lower case, no commas or spaces).

    The function must accept ``(design, y, *, confidence_level, rng, ...)``: ``design`` is the
    prepared data (``cudbound.design.PreparedData``; ``np.asarray(design)`` is the design matrix Phi,
    and ``cudbound.refit.refits_for(design, loss)`` refits the whole procedure, basis included, on
    parts of it), ``y`` the labels in {-1, +1}. Its random
    stream is derived from ``name`` alone (module docstring), so registering it changes no
    other method's numbers. ``replace=True`` is needed to overwrite an existing name.
    ``prepare`` (optional, see :class:`IntervalMethod`) is the method's hook: a function called
    before the method that returns keyword arguments to add to its call and details to add to its
    result, computing what several methods share once per call (e.g. the baselines' .632 centre:
    ``prepare=get_method("kohavi").prepare``).
    ``check`` (optional, see :class:`IntervalMethod`) validates the options without computing;
    :func:`options_check` makes one from the function's own input validation. Without it,
    only the option names are checked ahead of a computation. ``knobs`` (see :class:`IntervalMethod`):
    keywords that :func:`intervals` sets from the run, not options (``("time_limit",)``: the
    function gets its share of the run's time limit, and no option sets it). A ``time_limit`` that is
    not a knob is an option too, and the smaller of it and the share is given.
    """
    knobs = tuple(knobs)
    stray = [k for k in knobs if k not in inspect.signature(function).parameters]
    if stray:
        raise TypeError(f"the knobs {stray} of interval method {name!r} are not keywords of its function.")
    return _REGISTRY.add(IntervalMethod(name, function, summary, label or name, prepare, check, knobs),
                         replace=replace)


def unregister(name: str) -> None:
    """Remove a method from the registry (the built-in ones too, e.g. in a test)."""
    _REGISTRY.remove(name)


def method_names() -> tuple:
    """The registered methods, in registration order (the built-in ones in the paper's order)."""
    return _REGISTRY.names()


def get_method(name: str) -> IntervalMethod:
    """The registered method ``name`` (a ValueError that lists the registered ones otherwise)."""
    return _REGISTRY.lookup(name)


def _stand_in(n: int):
    """A full-rank design of n rows (an intercept and a ramp) with both classes: what an option
    check runs a method's input validation on (n >= 2)."""
    return np.column_stack([np.ones(n), np.arange(n, dtype=float)]), np.where(np.arange(n) % 2 == 0, 1, -1)


def options_check(function: Callable, iv: Callable, *extra: Callable) -> Callable:
    """A ``check`` for :func:`register` made of the method's own input validation.

    ``iv`` is the function that ``function`` calls first to check its arguments, with
    parameters named as ``function``'s (``design``, ``y``, ``confidence_level``, options,
    ``rng``); the check calls it with the options given, ``function``'s defaults for the
    others and a stand-in design of n rows, so exactly the checks of a real call run, and
    nothing is computed. ``extra`` functions get the dict of every argument (checks that
    ``function`` makes outside ``iv``).
    """
    params = inspect.signature(function).parameters
    names = list(inspect.signature(iv).parameters)
    stray = [k for k in names if k not in params]
    if stray:
        raise TypeError(f"the validation {iv.__name__} takes {stray}, which {function.__name__} does not.")
    defaults = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty}

    def check(n, *, confidence_level=0.95, **options):
        design, y = _stand_in(n)
        values = {**defaults, **options, "design": design, "y": y, "confidence_level": confidence_level,
                  "rng": None}
        iv(**{k: values[k] for k in names})
        for more in extra:
            more(values)
    return check


def check_options(name: str, n: int, *, confidence_level: float = 0.95, **options: Any) -> None:
    """Raise ValueError (or TypeError) if method ``name`` would refuse ``options`` on a training set of
    n points at this level, without computing anything.

    The option names are checked against the method's signature; their values by the method's
    ``check`` (:class:`IntervalMethod`), which for the built-in methods is their own input
    validation (:func:`options_check`): e.g. B below 1 / (1 - level) for CUD, ``cv`` above n
    for cross-validation. ``n`` must be at least 2.
    """
    method = get_method(name)
    n = check_scalar(n, "n", min_val=2)
    options = _REGISTRY.entry_options(name, options, f"check_options({name!r})")
    if method.check is not None:
        method.check(n, confidence_level=confidence_level, **options)


_PAPER, _MODERN = "paper", "modern"


class _BuiltIn(NamedTuple):
    """One built-in method: what :func:`register` is given, and its family (the paper's or modern)."""

    name: str
    function: Callable
    checks: tuple[Callable, ...]    # its input validation, and extra checks (:func:`options_check`)
    summary: str
    label: str
    prepare: Callable | None    # its hook (:class:`IntervalMethod`)
    family: str


_BUILT_IN: tuple[_BuiltIn, ...] = (
    _BuiltIn("cud", cud_from_design, (_cud_design_iv,), "CUD confidence set (Laber & Murphy 2008)", "CUD",
             prepare_cud, _PAPER),
    _BuiltIn("bs1", bs1, (_PAPER_CHECKS["bs1"],), "percentile interval of bootstrapped .632 estimates", "BS1",
             share_centre_and_distribution, _PAPER),
    _BuiltIn("bs2", bs2, (_PAPER_CHECKS["bs2"],),
             "basic (corrected) interval of bootstrapped .632 estimates", "BS2",
             share_centre_and_distribution, _PAPER),
    _BuiltIn("kohavi", kohavi, (_PAPER_CHECKS["kohavi"],),
             "Wilson (inverted normal) interval of the .632 estimate, n_eff = n (Kohavi 1995)",
             "K", share_centre, _PAPER),
    _BuiltIn("yang", yang, (_PAPER_CHECKS["yang"],),
             "normal interval, n_eff from 2-fold cross-validation (Yang 2006)", "Y", share_centre, _PAPER),
    _BuiltIn("martin", martin, (_PAPER_CHECKS["martin"],),
             "Beta posterior interval (Martin & Hirschberg 1996)", "M", share_centre, _PAPER),
    _BuiltIn("langford", langford, (_PAPER_CHECKS["langford"],),
             "Clopper-Pearson interval of the .632 estimate (Langford 2005)", "L",
             share_centre, _PAPER),
    _BuiltIn("wald_cv", wald_cv, (_MODERN_CHECKS["wald_cv"],),
             "Wald interval from 10-fold cross-validation (Bayle et al. 2020)", "WCV",
             None, _MODERN),
    _BuiltIn("corrected_t", corrected_t, (_MODERN_CHECKS["corrected_t"],),
             "corrected resampled t, 15 splits of 90/10 (Nadeau & Bengio 2003)", "CT", None, _MODERN),
    _BuiltIn("conservative_z", conservative_z, (_MODERN_CHECKS["conservative_z"],),
             "conservative Z from 10 random halvings (Nadeau & Bengio 2003)", "CZ", None, _MODERN),
    _BuiltIn("nested_cv", nested_cv, (_MODERN_CHECKS["nested_cv"],),
             "nested cross-validation, bias-corrected (Bates, Hastie & Tibshirani 2023)", "NCV", None, _MODERN),
    _BuiltIn("bccv", bccv, (_MODERN_CHECKS["bccv"],),
             "bootstrap case cross-validation, bias-reduced percentile (Jiang, Varma & Simon 2008)", "BCCV",
             None, _MODERN),
    _BuiltIn("e632_delta", e632_delta, (_MODERN_CHECKS["e632_delta"],),
             ".632+ with the delta-method standard error (Efron & Tibshirani 1997)", "D632", None, _MODERN),
)
"""The built-in methods, in the order they are registered: the paper's seven in the column order of
its tables, then the intervals in use today. Each one's option check is its own input validation
(:func:`options_check`). A resampling baseline's ``time_limit`` is a knob (its share of the run's);
CUD's is an option as well (its own budget, which a study may set)."""

for _entry in _BUILT_IN:
    register(_entry.name, _entry.function, _entry.summary, label=_entry.label, prepare=_entry.prepare,
             check=options_check(_entry.function, *_entry.checks),
             knobs=("time_limit",) if _entry.name != "cud" and "time_limit" in inspect.signature(
                 _entry.function).parameters else ())

METHODS = tuple(entry.name for entry in _BUILT_IN if entry.family == _PAPER)
"""The methods of Laber & Murphy's comparison, in the column order of their tables (the default of
:func:`intervals`)."""

MODERN_METHODS = tuple(entry.name for entry in _BUILT_IN if entry.family == _MODERN)
"""The intervals in use today, registered after the paper's seven."""


def select_methods(methods: str | Sequence[str]) -> tuple[str, ...]:
    """The registered interval methods that ``methods`` names, as :func:`intervals` reads it (and
    ``--methods`` on the command line): a list of registered names, a comma-separated string or
    ``"all"``; a ValueError that lists the registered ones for an unknown name.

    >>> select_methods("kohavi, martin")
    ('kohavi', 'martin')
    """
    return _REGISTRY.select(methods)


def _new_option_names(methods: Sequence[str], options: Mapping[str, Any], where: str = "intervals()") -> dict:
    """``options`` (of :func:`intervals`: shared options and ``<method>_options`` dicts) with every
    deprecated option name of the selected ``methods`` replaced by its new one, once, where they enter
    (:meth:`cudbound._registry.Registry.rename_options`)."""
    return _REGISTRY.rename_options(methods, options, where)


def _options_iv(methods, options):
    """Split **options into shared options and ``<method>_options`` dicts, and check every name
    (:meth:`cudbound._registry.Registry.split_options`)."""
    return _REGISTRY.split_options(methods, options, "intervals_from_design()")


@takes_procedure
def intervals(X: ArrayLike, y: ArrayLike, methods: str | Sequence[str] = METHODS, *,
              procedure: Procedure | Mapping[str, Any] | BaseEstimator | None = None, confidence_level: float = 0.95,
              rng: np.random.Generator | np.random.SeedSequence | int | None = None, pos_label: Any = None,
              time_limit: float | None = None, progress: bool | None = None, **options: Any) -> ResultList:
    """Run any registered interval methods (CUD and the six baselines by default) on the same data and seed.

    Parameters
    ----------
    X : (n, d) array of features.
    y : (n,) labels with two classes: {-1, 1}, {0, 1}, booleans, or any pair with ``pos_label``.
    methods : sequence of str, or a comma-separated str
        Any registered names (:func:`method_names`): ``"cud"`` (:func:`cudbound.cud_interval`),
        ``"bs1"``, ``"bs2"``, ``"kohavi"``, ``"yang"``, ``"martin"``, ``"langford"``
        (:mod:`cudbound.baselines.methods`), ``"wald_cv"``, ``"corrected_t"``,
        ``"conservative_z"``, ``"nested_cv"``, ``"bccv"``, ``"e632_delta"``
        (:mod:`cudbound.baselines.modern`, :data:`MODERN_METHODS`), ``"all"`` for every
        registered method, or a method added with :func:`register`; default the seven of
        Laber & Murphy's comparison (:data:`METHODS`), in this order.
    procedure : the classifier, as :func:`cudbound.cud_interval` takes it: None (default:
        ``Procedure()``, the 'linear' basis and the 'squared' loss), a :class:`cudbound.Procedure` or
        a dict of its fields (``basis``: 'linear', 'poly:D', 'pca:K', 'zpca:K', a callable or a
        Basis; ``loss``: a loss name or a :class:`cudbound.losses.Loss`), or a scikit-learn
        classifier or Pipeline (:mod:`cudbound.sklearn_bridge`: its earlier steps are the basis,
        its objective the loss of every method). A method that refits on part of the data refits
        the whole procedure on that part: a basis that learns from the data (PCA), a scikit-learn
        classifier as its own ``fit`` would (earlier steps included, its penalty for the part's
        size; :mod:`cudbound.refit`). CUD keeps the basis fitted on all n points.
    confidence_level : float in (0, 1), default 0.95
    rng : None, int, SeedSequence or Generator
        Each method draws from its own stream, derived from ``rng`` and the method's name
        (module docstring), so a method's result depends on the data, ``rng`` and its own
        options only. An integer seed or a SeedSequence is passed to ``"cud"`` unchanged.
    pos_label : the label value of the positive class (+1), when needed.
    time_limit : float > 0, optional
        Seconds for the whole run, the data's preparation included (None, default: no limit).
        Each method that takes a ``time_limit`` gets, when it starts, an equal share of the time
        left: that time divided by the number of methods not yet run, itself included (or CUD's own
        ``cud_options`` limit, if smaller), so that the first methods cannot starve the last;
        what a method leaves unused goes to the ones after it. CUD returns a certified, conservative
        interval when its share runs out (:func:`cudbound.cud_interval`); a resampling method stops
        its resamples, after the fewest its interval needs, and says how many it used
        (``details``: ``<option>_used``, ``cut_by_time_limit``); the resamples it used are the
        first ones of the run without a limit, drawn the same way. A method without a
        ``time_limit`` (``wald_cv``, one K-fold split) runs to its end. A method that has not
        started when the time is up is skipped: it is not in the results, ``ResultList.skipped``
        names it and a warning says so (an interval is never computed another way to fit the time).
    progress : bool or None, default None
        One progress bar over the methods on stderr, naming the method that runs (and the time left
        of ``time_limit``): None shows it on a terminal once the run has lasted 2 seconds, True always,
        False never. (CUD's own bar over its replicates is ``cud_options={"progress": True}``.)
    **options
        Shared options, given to every selected method whose signature has them
        (e.g. ``n_boot``, ``n_resamples``: note that ``n_resamples`` means B
        for both CUD and BS1/BS2), and per-method dicts ``cud_options``,
        ``bs1_options``, ... that override them for one method (a dict for a method not
        selected is ignored). Unknown names raise ValueError.

    Raises
    ------
    IntervalsInterrupted
        On Ctrl-C: a KeyboardInterrupt that keeps the results of the methods that finished
        (``.results``), the method that was running (``.method``) and those not started (``.pending``).

    Returns
    -------
    ResultList
        A list of IntervalResult, one per method that ran, in the order of ``methods``
        (``CUDResult`` for ``"cud"``), and ``.skipped``, the methods the time limit left out;
        ``.to_frame()`` gives them as a tidy pandas DataFrame, ``.plot()`` as a forest plot. With a
        DataFrame ``X`` the column names are in each result's ``details["feature_names"]``.

    Notes
    -----
    Shared computations, so that the baselines are compared on equal terms:

    * The .632 estimate t, the centre of the six baselines (Laber & Murphy 2008), is
      computed once per (``loss``, ``n_boot``) setting, from stream ``"centre"``, and
      passed to every baseline that does not set its own ``centre``
      (``details["centre_shared"]``).
    * The bootstrap distribution of the .632 estimate is computed once, from stream
      ``"bootstrap"``, and shared by BS1 and BS2 when their ``n_resamples``,
      ``n_inner`` and ``loss`` agree, so the two have the same width as in the
      paper's tables.

    ``seconds`` of each result is its method's own time plus an equal share of each shared
    computation it used (``details["shared_pieces"]``) and of the data's preparation
    (``details["shared_seconds"]``, its share of both): they add up to the run's time, less the
    time spent compiling kernels (``details["compile_seconds"]``).

    Examples
    --------
    >>> import numpy as np
    >>> from cudbound import intervals
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2)); y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    >>> res = intervals(X, y, methods=["kohavi", "martin", "langford"], rng=1)
    >>> [r.method for r in res]
    ['kohavi', 'martin', 'langford']
    >>> len({r.estimate for r in res})   # one shared .632 centre
    1
    """
    began = _budget.clock()
    budget = Budget(check_time_limit(time_limit, zero=False))
    methods = select_methods(methods)
    options = _new_option_names(methods, options)
    model = as_mapped_procedure(procedure)
    data = prepare_data(X, y, model.basis, model.estimator, pos_label, model.loss)
    if data.mapping is not None or model.loss is not None:
        options["loss"] = data.loss
    level = check_confidence_level(confidence_level)
    try:
        results = _run(_Call(data, methods, level, rng, None, budget, began), progress, options)
    except IntervalsInterrupted as stop:
        for res in stop.results:
            res.details.update(data.details())
        raise
    for res in results:
        res.details.update(data.details())
    return results


def intervals_from_design(design: ArrayLike | PreparedData, y: ArrayLike | None, methods: str | Sequence[str] = METHODS, *,
                          confidence_level: float = 0.95,
                          rng: np.random.Generator | np.random.SeedSequence | int | None = None,
                          fitted: FittedClassifier | None = None, time_limit: float | None = None,
                          progress: bool | None = False, **options: Any) -> ResultList:
    """:func:`intervals` on a design matrix and its labels (the basis already applied), or on a
    prepared data set (``cudbound.design.PreparedData``, with ``y`` None).

    The labels as ``cudbound.design.check_labelled_design`` takes them: {-1, +1}, {0, 1}, booleans
    or the text pairs. A design matrix is fixed features: a method that refits on part of the data
    refits the classifier only. Prepared data (what :func:`intervals` passes, and a coverage task)
    carry the features and the basis, and every refit refits the basis on its part too
    (:mod:`cudbound.refit`); CUD uses the design (its class is the span of the basis fitted on D).

    ``fitted`` (optional): the :class:`cudbound.fit.FittedClassifier` of this design and
    the methods' loss, given to the methods that use a fit (CUD), so that a caller that has
    fitted beta-hat does not fit it again. Without it, beta-hat is fitted here, once.

    ``time_limit`` and ``progress``: as for :func:`intervals` (the bar is off by default here).
    Ctrl-C raises :class:`IntervalsInterrupted` with the results that finished.
    """
    began = _budget.clock()
    budget = Budget(check_time_limit(time_limit, zero=False))
    methods = select_methods(methods)
    data = as_prepared(design, y)
    level = check_confidence_level(confidence_level)
    if fitted is not None and not isinstance(fitted, FittedClassifier):
        raise TypeError(f"`fitted` must be a cudbound.fit.FittedClassifier; got {type(fitted).__name__}.")
    return _run(_Call(data, methods, level, rng, fitted, budget, began), progress, options)


class _Call(NamedTuple):
    """What every method of one call of :func:`intervals` shares: the data, the methods, the level,
    the user's rng, the caller's beta-hat, the run's time budget and the moment the run began."""

    data: PreparedData
    methods: tuple[str, ...]
    level: float
    rng: Any
    fitted: FittedClassifier | None
    budget: Budget
    began: float


def _run(call: _Call, progress: bool | None, options: dict) -> ResultList:
    """Every method of ``call`` in order, each from its own stream, the shared pieces once; a method
    not started when the budget is spent is skipped (a warning names them). Each result's
    ``seconds`` (:func:`_charge`) are read on ``cudbound._budget.clock``; Ctrl-C raises
    :class:`IntervalsInterrupted` with the finished ones."""
    methods, budget = call.methods, call.budget
    shared, per = _options_iv(methods, options)
    root = root_seed(call.rng)
    cache: dict[Any, Any] = {"fitted": call.fitted}   # the hooks' shared computations (IntervalMethod)
    results: list[IntervalResult] = []
    bounds: list[float] = []      # when each method began, then when the last one ended
    compiled: list[float] = []    # seconds each spent compiling kernels
    skipped: tuple[str, ...] = ()
    bar = methods_bar(progress, len(methods), "intervals")
    try:
        for i, name in enumerate(methods):
            if budget.spent():
                skipped = methods[i:]
                break
            bounds.append(_budget.clock())
            before = compile_seconds()
            _show(bar, name, budget)
            try:
                results.append(_run_method(name, call, shared, per, cache, root, len(methods) - i))
            except KeyboardInterrupt:
                _charge(results, bounds, compiled, call.began)
                raise IntervalsInterrupted(results, name, methods[i + 1:]) from None
            compiled.append(compile_seconds() - before)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    bounds.append(_budget.clock())
    _charge(results, bounds, compiled, call.began)
    warn_skipped(skipped)
    return ResultList(results, skipped=skipped)


def _show(bar, name: str, budget: Budget) -> None:
    """The bar's text: the method that runs, and the time left of the budget."""
    if bar is None:
        return
    bar.set_description(f"intervals: {name}")
    left = budget.left()
    if left is not None:
        bar.set_postfix_str(f"{left:.0f} s left", refresh=False)


def _charge(results: list[IntervalResult], bounds: list[float], compiled: list[float], began: float) -> None:
    """Each result's ``seconds``: the time from its method's start to the next one's (``bounds``), less
    the kernels' compile time (``details["compile_seconds"]``) and the shared pieces computed during
    it, plus its equal share of every shared piece it used (``details["shared_pieces"]``) and of the
    time before the first method (the data's preparation). Summed, they are the run's time from
    ``began`` to the last bound, less the compile time."""
    if not results:
        return
    own = [bounds[i + 1] - bounds[i] - compiled[i] for i in range(len(results))]
    pieces = charge_shared(own, [res.details.get("shared_pieces", {}) for res in results])
    share = [(bounds[0] - began) / len(results) + s for s in pieces]
    for i, res in enumerate(results):
        res.seconds = own[i] + share[i]
        res.details["shared_seconds"] = share[i]
        res.details.pop("compile_seconds", None)
        if compiled[i] > 0:
            res.details["compile_seconds"] = compiled[i]


def _method_budget(method: IntervalMethod, kwargs: dict, budget: Budget, remaining: int) -> Budget | None:
    """The budget of a method that takes a ``time_limit``: an equal share of what is left of the run's,
    the time left divided by the ``remaining`` methods (itself included), or the method's own limit if
    it ends first; None for a method without one, or when neither is limited."""
    if "time_limit" not in method.parameters:
        return None
    return budget.share(remaining, kwargs.get("time_limit"))


def _run_method(name: str, call: _Call, shared: dict, per: dict, cache: dict, root, remaining: int) -> IntervalResult:
    """One method of :func:`intervals`: its options, its ``prepare`` hook (the shared pieces), its own
    stream, its budget (``time_limit``, :func:`_method_budget`: what is left of it when the hook starts,
    then when the method starts), its result."""
    method = get_method(name)
    kwargs = {k: v for k, v in shared.items() if k in method.parameters}
    kwargs.update(per.get(name, {}))
    budget = _method_budget(method, kwargs, call.budget, remaining)
    if budget is not None:
        kwargs["time_limit"] = budget.left()
    details: dict[str, Any] = {}
    if method.prepare is not None:
        more, details = method.prepare(method, call.data, call.data.labels, kwargs, shared=cache, root=root,
                                       rng=call.rng)
        kwargs = {**kwargs, **more}
    if budget is not None:
        kwargs["time_limit"] = budget.left()
    if "rng" not in kwargs:
        kwargs["rng"] = generator(root, name)
    try:
        res = method.function(call.data, call.data.labels, confidence_level=call.level, **kwargs)
    except ValueError as exc:   # say which of several methods refused (e.g. k > n on 5 rows)
        if len(call.methods) == 1:
            raise
        raise type(exc)(f"interval method {name!r}: {exc}") from exc
    if not isinstance(res, IntervalResult):
        raise TypeError(f"interval method {name!r} returned {type(res).__name__}, not an IntervalResult.")
    cut = res.details.get("cut_by_time_limit", False) or details.get("cut_by_time_limit", False)
    res.details.update(details)
    if "cut_by_time_limit" in res.details:
        res.details["cut_by_time_limit"] = bool(cut)
    return res
