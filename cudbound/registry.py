"""The registry of interval methods, and :func:`intervals`, which runs any of them on one data set.

Every method, CUD included, is registered under its name with one signature::

    function(design, y, *, confidence_level, rng, **options) -> IntervalResult

on a full-rank design matrix Phi (the basis already applied) and labels in {-1, +1}.
:func:`intervals` applies the basis once, fits beta-hat once (for CUD) and calls each
selected method; :func:`intervals_from_design` starts from the design (a coverage task,
which has drawn and fitted it already). The command line, the coverage study and the
figures read the same registry (:func:`method_names`, :func:`get_method`).

Random streams. ``rng`` is normalised once with ``np.random.default_rng`` and a root
``SeedSequence`` is drawn from it. The stream of a consumer called ``name`` is the child

    SeedSequence(root.entropy, spawn_key=root.spawn_key + (h(name),)),

h(name) the first four bytes of SHA-256(name) as an integer, so it depends on the
method's name only: adding, removing or reordering other methods changes nothing.
The shared pieces draw from the streams ``"centre"`` and ``"bootstrap"``. One exception,
by design: an integer seed or a ``SeedSequence`` is given to ``"cud"`` unchanged, so that
``intervals(X, y, rng=seed)`` reports exactly the interval of ``cud_interval(X, y, rng=seed)``.

Adding a method (``docs/architecture.md`` has a worked example)::

    register("wald", my_wald, "Wald interval of the resubstitution error")
"""
from __future__ import annotations

import inspect
import numbers
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._deprecation import apply_renames, renames_of
from ._validation import check_confidence_level, check_method_list, check_rng, check_scalar
from .baselines.methods import (_bs632_distribution, _bs_iv, _centre_value, _distribution_iv, _kohavi_iv,
                                _langford_iv, _martin_iv, _yang_iv, bs1, bs2, kohavi, langford, martin, yang)
from .baselines.modern import (_bccv_iv, _conservative_z_iv, _corrected_t_iv, _e632_delta_iv, _nested_cv_iv,
                               _wald_cv_iv, bccv, conservative_z, corrected_t, e632_delta, nested_cv, wald_cv)
from .basis import Basis
from .cud import _cud_design_iv, cud_from_design
from .design import _prepare, check_labelled_design
from .fit import FittedClassifier, fit_classifier
from .losses import get_loss
from .resampling import stream
from .results import IntervalResult, ResultList

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

# the main function first: the API reference lists them in this order
__all__ = ["intervals", "intervals_from_design", "method_names", "register", "unregister", "get_method",
           "IntervalMethod", "METHODS", "MODERN_METHODS", "stream", "check_options", "options_check"]

SHARED_STREAMS = ("centre", "bootstrap")
"""Streams of the computations shared between methods; no method may take these names."""

_RESERVED = ("confidence_level", "rng", "basis", "pos_label", "bootstrap_distribution", "fitted")
"""Set by :func:`intervals` itself; not accepted among the options."""


@dataclass(frozen=True)
class IntervalMethod:
    """One registered method.

    ``function(design, y, *, confidence_level, rng, **options)`` returns an
    :class:`~cudbound.results.IntervalResult`. ``label`` is the short column header of
    the tables (``"K"`` for Kohavi). ``shares_centre``: the method takes ``centre``,
    ``n_boot`` and ``loss`` and is given the .632 estimate computed once for all such
    methods; ``shares_distribution``: it takes ``bootstrap_distribution`` (BS1, BS2).
    ``uses_fit``: it takes ``fitted``, the beta-hat fitted once (CUD). ``check`` (optional):
    ``check(n, *, confidence_level, **options)`` raises ValueError (or TypeError) for options the
    function would refuse on a training set of n points, without computing anything
    (:func:`check_options`; a coverage study runs it when it reads its configuration).
    """

    name: str
    function: Callable
    summary: str
    label: str
    shares_centre: bool = False
    shares_distribution: bool = False
    uses_fit: bool = False
    check: Callable | None = None

    @property
    def parameters(self) -> Mapping[str, inspect.Parameter]:
        return inspect.signature(self.function).parameters

    @property
    def renamed(self) -> dict:
        """The method's deprecated option names (old name -> new), still accepted for one release."""
        return renames_of(self.function)

    def options(self) -> list:
        """The option names a user may set for this method (deprecated ones excluded: the entry
        points turn them into these names first, :func:`_new_option_names`)."""
        return sorted(k for k in self.parameters if k not in _RESERVED + ("design", "y"))


_REGISTRY: dict[str, IntervalMethod] = {}


def register(name: str, function: Callable, summary: str, *, label: str | None = None, shares_centre: bool = False,
             shares_distribution: bool = False, uses_fit: bool = False, check: Callable | None = None,
             replace: bool = False) -> IntervalMethod:
    """Add an interval method to the registry under ``name`` (lower case, no commas or spaces).

    The function must accept ``(design, y, *, confidence_level, rng, ...)``. Its random
    stream is derived from ``name`` alone (module docstring), so registering it changes no
    other method's numbers. ``replace=True`` is needed to overwrite an existing name.
    ``check`` (optional, see :class:`IntervalMethod`) validates the options without computing;
    :func:`options_check` makes one from the function's own input validation. Without it,
    only the option names are checked ahead of a computation.
    """
    if not isinstance(name, str) or not name or name != name.strip().lower() or "," in name or " " in name:
        raise ValueError(f"a method name must be a non-empty lower-case string without commas or spaces; got {name!r}.")
    if name in SHARED_STREAMS:
        raise ValueError(f"{name!r} is the name of a shared random stream; choose another name.")
    if name in _REGISTRY and not replace:
        raise ValueError(f"an interval method {name!r} is already registered (pass replace=True to overwrite it).")
    params = inspect.signature(function).parameters
    missing = [p for p in ("confidence_level", "rng") if p not in params]
    if missing or len(params) < 2:
        raise TypeError(f"the function of method {name!r} must take (design, y, *, confidence_level, rng, ...); "
                        f"it lacks {missing or ['design, y']}.")
    method = IntervalMethod(name, function, summary, label or name, shares_centre, shares_distribution, uses_fit,
                            check)
    _REGISTRY[name] = method
    return method


def unregister(name: str) -> None:
    """Remove a method from the registry (the built-in ones too, e.g. in a test)."""
    if name not in _REGISTRY:
        raise ValueError(f"no interval method {name!r} is registered; registered: {list(_REGISTRY)}.")
    del _REGISTRY[name]


def method_names() -> tuple:
    """The registered methods, in registration order (the built-in ones in the paper's order)."""
    return tuple(_REGISTRY)


def get_method(name: str) -> IntervalMethod:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown interval method {name!r}; registered methods are {list(_REGISTRY)}.") from None


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
    options = apply_renames(f"check_options({name!r})", method.renamed, options)
    valid = method.options()
    unknown = sorted(k for k in options if k not in valid)
    if unknown:
        raise ValueError(f"method {name!r} takes no option(s) {unknown}; its options are {valid}.")
    if method.check is not None:
        method.check(n, confidence_level=confidence_level, **options)


def _distribution_check(values):
    _distribution_iv(values["distribution"])


_PAPER, _MODERN = "paper", "modern"


class _BuiltIn(NamedTuple):
    """One built-in method: what :func:`register` is given, and its family (the paper's or modern)."""

    name: str
    function: Callable
    checks: tuple[Callable, ...]    # its input validation, and extra checks (:func:`options_check`)
    summary: str
    label: str
    shares: dict[str, bool]
    family: str


_BUILT_IN: tuple[_BuiltIn, ...] = (
    _BuiltIn("cud", cud_from_design, (_cud_design_iv,), "CUD confidence set (Laber & Murphy 2008)", "CUD",
             {"uses_fit": True}, _PAPER),
    _BuiltIn("bs1", bs1, (_bs_iv, _distribution_check), "percentile interval of bootstrapped .632 estimates", "BS1",
             {"shares_centre": True, "shares_distribution": True}, _PAPER),
    _BuiltIn("bs2", bs2, (_bs_iv, _distribution_check),
             "basic (corrected) interval of bootstrapped .632 estimates", "BS2",
             {"shares_centre": True, "shares_distribution": True}, _PAPER),
    _BuiltIn("kohavi", kohavi, (_kohavi_iv,),
             "Wilson (inverted normal) interval of the .632 estimate, n_eff = n (Kohavi 1995)",
             "K", {"shares_centre": True}, _PAPER),
    _BuiltIn("yang", yang, (_yang_iv,), "normal interval, n_eff from 2-fold cross-validation (Yang 2006)", "Y",
             {"shares_centre": True}, _PAPER),
    _BuiltIn("martin", martin, (_martin_iv,), "Beta posterior interval (Martin & Hirschberg 1996)", "M",
             {"shares_centre": True}, _PAPER),
    _BuiltIn("langford", langford, (_langford_iv,),
             "Clopper-Pearson interval of the .632 estimate (Langford 2005)", "L",
             {"shares_centre": True}, _PAPER),
    _BuiltIn("wald_cv", wald_cv, (_wald_cv_iv,),
             "Wald interval from 10-fold cross-validation (Bayle et al. 2020)", "WCV",
             {}, _MODERN),
    _BuiltIn("corrected_t", corrected_t, (_corrected_t_iv,),
             "corrected resampled t, 15 splits of 90/10 (Nadeau & Bengio 2003)", "CT", {}, _MODERN),
    _BuiltIn("conservative_z", conservative_z, (_conservative_z_iv,),
             "conservative Z from 10 random halvings (Nadeau & Bengio 2003)", "CZ", {}, _MODERN),
    _BuiltIn("nested_cv", nested_cv, (_nested_cv_iv,),
             "nested cross-validation, bias-corrected (Bates, Hastie & Tibshirani 2023)", "NCV", {}, _MODERN),
    _BuiltIn("bccv", bccv, (_bccv_iv,),
             "bootstrap case cross-validation, bias-reduced percentile (Jiang, Varma & Simon 2008)", "BCCV",
             {}, _MODERN),
    _BuiltIn("e632_delta", e632_delta, (_e632_delta_iv,),
             ".632+ with the delta-method standard error (Efron & Tibshirani 1997)", "D632", {}, _MODERN),
)
"""The built-in methods, in the order they are registered: the paper's seven in the column order of
its tables, then the intervals in use today. Each one's option check is its own input validation
(:func:`options_check`)."""

for _entry in _BUILT_IN:
    register(_entry.name, _entry.function, _entry.summary, label=_entry.label,
             check=options_check(_entry.function, *_entry.checks), **_entry.shares)

METHODS = tuple(entry.name for entry in _BUILT_IN if entry.family == _PAPER)
"""The methods of Laber & Murphy's comparison, in the column order of their tables (the default of
:func:`intervals`)."""

MODERN_METHODS = tuple(entry.name for entry in _BUILT_IN if entry.family == _MODERN)
"""The intervals in use today, registered after the paper's seven."""


def _generator(root, name) -> np.random.Generator:
    return np.random.default_rng(stream(root, name))


def _methods_iv(methods) -> tuple:
    """A list of interval methods parsed by the package's one method-list parser
    (:func:`cudbound._validation.check_method_list`), for :func:`intervals` and ``--methods`` on the
    command line: registered names, a comma-separated string or ``"all"``."""
    return check_method_list(methods, _REGISTRY)


def _new_option_names(methods: Sequence[str], options: Mapping[str, Any], where: str = "intervals()") -> dict:
    """``options`` (of :func:`intervals`: shared options and ``<method>_options`` dicts) with every
    deprecated option name of the selected ``methods`` replaced by its new one, once, where they enter
    (a DeprecationWarning naming the new name, attributed to the user's line).

    An old and a new name of one option given together (both shared, or both in one method's dict)
    raise TypeError before any method runs. A shared old name with the new one in a method's dict is
    no conflict: the method's dict overrides the shared options, as always.
    """
    methods = _methods_iv(methods)
    options_of = [set(get_method(name).options()) for name in methods]
    shared_renames = {old: new for name in methods for old, new in get_method(name).renamed.items()
                      if not any(old in opts for opts in options_of)}
    shared, per = {}, {}
    for key, value in options.items():
        method = key.removesuffix("_options")
        if key != method and method in _REGISTRY and isinstance(value, Mapping):
            per[key] = apply_renames(f"`{key}`", get_method(method).renamed, value)
        else:
            shared[key] = value
    return {**apply_renames(where, shared_renames, shared), **per}


def _options_iv(methods, options):
    """Split **options into shared options and ``<method>_options`` dicts, and check every name."""
    options = _new_option_names(methods, options, "intervals_from_design()")
    per, shared = {}, {}
    for key, value in options.items():
        if key.endswith("_options") and key[: -len("_options")] in _REGISTRY:
            if value is None:
                continue
            if not isinstance(value, Mapping):
                raise ValueError(f"`{key}` must be a dict of keyword arguments; got {type(value).__name__}.")
            per[key[: -len("_options")]] = dict(value)
        elif key in _RESERVED:
            raise ValueError(f"`{key}` is set by intervals() itself and cannot be passed as an option.")
        else:
            shared[key] = value
    for method, opts in per.items():
        valid = get_method(method).options()
        for key in opts:
            if key in _RESERVED:
                raise ValueError(f"`{method}_options` may not set `{key}`: it is set by intervals() for every method.")
            if key not in valid:
                raise ValueError(f"`{method}_options` has an unknown option {key!r}; valid options of "
                                 f"{method!r} are {valid}.")
    accepted = {k for m in methods for k in get_method(m).options()}
    for key in shared:
        if key not in accepted:
            raise ValueError(f"unknown option {key!r} for methods {list(methods)}; options they accept: "
                             f"{sorted(accepted)} (or per-method dicts: "
                             f"{', '.join(m + '_options' for m in _REGISTRY)}).")
    return shared, per


def _is_seed(rng) -> bool:
    return isinstance(rng, np.random.SeedSequence) or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool))


def _loss_key(loss):
    return loss.strip().lower() if isinstance(loss, str) else id(loss)


def intervals(X: ArrayLike, y: ArrayLike, methods: str | Sequence[str] = METHODS, *,
              basis: str | Basis | Callable[[np.ndarray], ArrayLike] | None = None,
              estimator: BaseEstimator | None = None, confidence_level: float = 0.95,
              rng: np.random.Generator | np.random.SeedSequence | int | None = None, pos_label: Any = None,
              **options: Any) -> ResultList:
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
    basis : 'linear' (intercept + identity, default), 'poly:D', 'pca:K', a callable or a Basis.
    estimator : optional scikit-learn classifier or Pipeline instead of ``basis`` and ``loss``
        (:mod:`cudbound.sklearn_bridge`): its earlier steps are the basis, its objective the loss of
        every method. Methods that refit on parts of the data keep the penalty of the full fit.
    confidence_level : float in (0, 1), default 0.95
    rng : None, int, SeedSequence or Generator
        Each method draws from its own stream, derived from ``rng`` and the method's name
        (module docstring), so a method's result depends on the data, ``rng`` and its own
        options only. An integer seed or a SeedSequence is passed to ``"cud"`` unchanged.
    pos_label : the label value of the positive class (+1), when needed.
    **options
        Shared options, given to every selected method whose signature has them
        (e.g. ``loss``, ``n_boot``, ``n_resamples``: note that ``n_resamples`` means B
        for both CUD and BS1/BS2), and per-method dicts ``cud_options``,
        ``bs1_options``, ... that override them for one method (a dict for a method not
        selected is ignored). Unknown names raise ValueError.

    Returns
    -------
    ResultList
        A list of IntervalResult, one per method, in the order of ``methods`` (``CUDResult`` for
        ``"cud"``); ``.to_frame()`` gives them as a tidy pandas DataFrame, ``.plot()`` as a forest
        plot. With a DataFrame ``X``
        the column names are in each result's ``details["feature_names"]``.

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

    ``seconds`` of a baseline covers its own work; the time of the shared pieces it
    used is in ``details["shared_seconds"]``.

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
    methods = _methods_iv(methods)
    options = _new_option_names(methods, options)
    user_loss = options.pop("loss", None)
    data = _prepare(X, y, basis, estimator, pos_label, user_loss)
    if data.mapping is not None or user_loss is not None:
        options["loss"] = data.loss
    level = check_confidence_level(confidence_level)
    results = intervals_from_design(data.design, data.labels, methods, confidence_level=level, rng=rng, **options)
    for res in results:
        res.details.update(data.details())
    return ResultList(results)



def intervals_from_design(design: ArrayLike, y: ArrayLike, methods: str | Sequence[str] = METHODS, *,
                          confidence_level: float = 0.95,
                          rng: np.random.Generator | np.random.SeedSequence | int | None = None,
                          fitted: FittedClassifier | None = None, **options: Any) -> list[IntervalResult]:
    """:func:`intervals` on a design matrix and its labels (the basis already applied).

    The labels as ``cudbound.design.check_labelled_design`` takes them: {-1, +1}, {0, 1}, booleans
    or the text pairs.

    ``fitted`` (optional): the :class:`cudbound.fit.FittedClassifier` of this design and
    the methods' loss, given to the methods that use a fit (CUD), so that a caller that has
    fitted beta-hat does not fit it again. Without it, beta-hat is fitted here, once.
    """
    methods = _methods_iv(methods)
    design, labels = check_labelled_design(design, y)
    level = check_confidence_level(confidence_level)
    shared, per = _options_iv(methods, options)
    if fitted is not None and not isinstance(fitted, FittedClassifier):
        raise TypeError(f"`fitted` must be a cudbound.fit.FittedClassifier; got {type(fitted).__name__}.")
    gen = check_rng(rng)
    root = np.random.SeedSequence([int(v) for v in gen.integers(0, 2**63, size=4)])
    centres, distributions, fits, results = {}, {}, {}, []
    if fitted is not None:
        fits[_loss_key(fitted.loss.name)] = fitted
    for name in methods:
        method = get_method(name)
        params = method.parameters
        kwargs = {k: v for k, v in shared.items() if k in params}
        kwargs.update(per.get(name, {}))
        if name == "cud" and _is_seed(rng):
            method_rng = rng   # cud_interval(X, y, rng=seed) gives the same interval
        else:
            method_rng = _generator(root, name)
        extra = {}
        shared_seconds = 0.0
        if method.uses_fit:
            loss = get_loss(kwargs.get("loss", params["loss"].default))
            key = _loss_key(loss.name)
            if key not in fits:
                fits[key] = fit_classifier(design, labels, loss)
            kwargs["fitted"] = fits[key]
        if method.shares_centre and "centre" not in kwargs:
            loss = kwargs.get("loss", params["loss"].default)
            n_boot = kwargs.get("n_boot", params["n_boot"].default)
            key = (_loss_key(loss), n_boot)
            if key not in centres:
                t0 = time.perf_counter()
                t, det = _centre_value(design, labels, get_loss(loss), "632", check_scalar(n_boot, "n_boot", min_val=1),
                                       _generator(root, "centre"), "intervals")
                centres[key] = (t, det, time.perf_counter() - t0)
            t, det, secs = centres[key]
            kwargs["centre"] = t
            shared_seconds += secs
            extra.update({**det, "centre_source": ".632", "centre_shared": True})
        if method.shares_distribution:
            loss = kwargs.get("loss", params["loss"].default)
            B = kwargs.get("n_resamples", params["n_resamples"].default)
            J = kwargs.get("n_inner", params["n_inner"].default)
            key = (_loss_key(loss), B, J)
            if key not in distributions:
                t0 = time.perf_counter()
                B_, J_ = check_scalar(B, "n_resamples", min_val=2), check_scalar(J, "n_inner", min_val=1)
                dist, log = _bs632_distribution(design, labels, get_loss(loss), B_, J_, _generator(root, "bootstrap"))
                log.warn("intervals (bootstrap distribution of the .632 estimate)")
                distributions[key] = (dist, {"n_resamples": B_, "n_inner": J_,
                                             "distribution_degenerate_refits": log.degenerate,
                                             "distribution_refits": log.refits}, time.perf_counter() - t0)
            dist, det, secs = distributions[key]
            kwargs["bootstrap_distribution"] = dist
            shared_seconds += secs
            extra.update({**det, "distribution_source": "bootstrap (shared by bs1 and bs2)"})
        try:
            res = method.function(design, labels, confidence_level=level, rng=method_rng, **kwargs)
        except ValueError as exc:   # say which of several methods refused (e.g. k > n on 5 rows)
            if len(methods) == 1:
                raise
            raise type(exc)(f"interval method {name!r}: {exc}") from exc
        if not isinstance(res, IntervalResult):
            raise TypeError(f"interval method {name!r} returned {type(res).__name__}, not an IntervalResult.")
        res.details.update(extra)
        if method.shares_centre or method.shares_distribution:
            res.details["shared_seconds"] = shared_seconds
        results.append(res)
    return results
