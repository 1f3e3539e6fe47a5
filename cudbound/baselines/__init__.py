"""Baselines: the intervals the CUD paper compares with, their point estimators, hold-out bounds.

* :mod:`cudbound.baselines.estimators`: resubstitution, Err(1), .632, .632+, CV, LOO.
* :mod:`cudbound.baselines.methods`: BS1, BS2, K, Y, M, L (Laber & Murphy 2008).
* :mod:`cudbound.baselines.holdout`: Shah's (2008) binomial tail inversion bounds and
  Gaussian interval for a test set.
* :func:`intervals`: run any subset of the methods, CUD included, on the same data and seed.

Definitions and defaults: ``docs/method.md``, section "Baselines, as this project defines them".
"""
from __future__ import annotations

import inspect
import numbers
import time
from collections.abc import Mapping

import numpy as np

from .._validation import check_confidence_level, check_design, check_features, check_rng, encode_labels
from ..basis import make_basis
from ..losses import get_loss
from ..results import IntervalResult
from .estimators import (ESTIMATORS, DegenerateResampleWarning, ErrorEstimate, _positive_int, bootstrap_counts,
                         cross_validation, e632, e632plus, estimate_error, fold_assignments, leave_one_out,
                         loo_bootstrap, resubstitution)
from .holdout import binomial_interval, binomial_lower, binomial_upper, gaussian_interval
from .methods import (INTERVALS, _bs632_distribution, _centre_value, basic_interval, beta_interval, bs1, bs2,
                        bootstrap_632_distribution, kohavi, langford, martin, normal_interval, percentile_interval,
                        yang)

__all__ = [
    "intervals", "METHODS",
    "DegenerateResampleWarning", "ErrorEstimate",
    "resubstitution", "loo_bootstrap", "e632", "e632plus", "cross_validation", "leave_one_out",
    "estimate_error", "bootstrap_counts", "fold_assignments", "ESTIMATORS",
    "bs1", "bs2", "kohavi", "yang", "martin", "langford", "INTERVALS",
    "percentile_interval", "basic_interval", "normal_interval", "beta_interval", "bootstrap_632_distribution",
    "binomial_upper", "binomial_lower", "binomial_interval", "gaussian_interval",
]

METHODS = ("cud", "bs1", "bs2", "kohavi", "yang", "martin", "langford")
"""Every method :func:`intervals` runs, in the column order of Laber & Murphy's tables."""

_STREAMS = ("centre", "bootstrap") + METHODS
"""Fixed stream index of each consumer of randomness: the child SeedSequence of a method
depends on its name only, never on which other methods are run."""

_RESERVED = ("confidence_level", "rng", "basis", "pos_label", "bootstrap_distribution")
"""Set by :func:`intervals` itself; not accepted among the options."""


def _cud_interval():
    from ..cud import cud_interval  # imported on use: cud.py imports nothing from here
    return cud_interval


def _function(method):
    return _cud_interval() if method == "cud" else INTERVALS[method]


def _params(method) -> Mapping[str, inspect.Parameter]:
    return inspect.signature(_function(method)).parameters


def _methods_iv(methods) -> tuple:
    if isinstance(methods, str):
        methods = [m for m in methods.replace(" ", "").split(",") if m]
    try:
        methods = [m.strip().lower() if isinstance(m, str) else m for m in methods]
    except TypeError:
        raise ValueError(f"`methods` must be a sequence of method names from {list(METHODS)}; "
                         f"got {methods!r}.") from None
    if not methods:
        raise ValueError(f"`methods` is empty; choose from {list(METHODS)}.")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown} in `methods`; valid methods are {list(METHODS)}.")
    dup = sorted({m for m in methods if methods.count(m) > 1})
    if dup:
        raise ValueError(f"`methods` lists {dup} more than once.")
    return tuple(methods)


def _options_iv(methods, options):
    """Split **options into shared options and ``<method>_options`` dicts, and check every name."""
    per, shared = {}, {}
    for key, value in options.items():
        if key.endswith("_options") and key[: -len("_options")] in METHODS:
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
        params = _params(method)
        for key in opts:
            if key in _RESERVED:
                raise ValueError(f"`{method}_options` may not set `{key}`: it is set by intervals() for every method.")
            if key not in params or key in ("X", "y", "design"):
                valid = sorted(k for k in params if k not in _RESERVED + ("X", "y", "design"))
                raise ValueError(f"`{method}_options` has an unknown option {key!r}; valid options of "
                                 f"{method!r} are {valid}.")
    accepted = {k for m in methods for k in _params(m)}
    for key in shared:
        if key not in accepted or key in ("X", "y", "design"):
            valid = sorted({k for m in methods for k in _params(m)} - set(_RESERVED) - {"X", "y", "design"})
            raise ValueError(f"unknown option {key!r} for methods {list(methods)}; options they accept: {valid} "
                             f"(or per-method dicts: {', '.join(m + '_options' for m in METHODS)}).")
    return shared, per


def _intervals_iv(X, y, methods, basis, confidence_level, rng, pos_label, options):
    methods = _methods_iv(methods)
    X = check_features(X)
    labels, encoding = encode_labels(y, pos_label=pos_label, n_rows=X.shape[0])
    level = check_confidence_level(confidence_level)
    basis_obj = make_basis(basis)
    design = check_design(basis_obj.fit_transform(X), name="design (basis applied to X)")
    shared, per = _options_iv(methods, options)
    return X, labels, encoding, design, basis_obj, level, methods, check_rng(rng), shared, per


def _is_seed(rng) -> bool:
    return isinstance(rng, np.random.SeedSequence) or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool))


def _child(root: np.random.SeedSequence, name: str) -> np.random.Generator:
    """The generator of stream ``name``: SeedSequence(entropy, spawn_key=(index,)), index fixed per name."""
    return np.random.default_rng(np.random.SeedSequence(root.entropy, spawn_key=(_STREAMS.index(name),)))


def _loss_key(loss):
    return loss.strip().lower() if isinstance(loss, str) else id(loss)


def intervals(X, y, methods=METHODS, *, basis="linear", confidence_level=0.95, rng=None, pos_label=None,
              **options) -> list[IntervalResult]:
    """Run any subset of the CUD interval and the six baselines on the same data and seed.

    Parameters
    ----------
    X : (n, d) array of features.
    y : (n,) labels with two classes: {-1, 1}, {0, 1}, booleans, or any pair with ``pos_label``.
    methods : sequence of str, or a comma-separated str
        Any of ``"cud"`` (:func:`cudbound.cud_interval`), ``"bs1"``, ``"bs2"``,
        ``"kohavi"``, ``"yang"``, ``"martin"``, ``"langford"``
        (:mod:`cudbound.baselines.methods`); default all seven, in this order.
    basis : 'linear' (intercept + identity, default), 'poly:D', 'pca:K', a callable or a Basis.
    confidence_level : float in (0, 1), default 0.95
    rng : None, int, SeedSequence or Generator
        Normalised once with ``np.random.default_rng``; a root SeedSequence is drawn
        from it, and every consumer gets the child ``SeedSequence(root.entropy,
        spawn_key=(i,))`` with a fixed index i per name (``_STREAMS``), except that an
        integer seed or a SeedSequence is passed to ``"cud"`` unchanged (its interval is
        then exactly ``cud_interval(X, y, rng=seed)``). So a method's
        result depends on the data, ``rng`` and its own options only: adding or
        removing another method changes nothing else.
    pos_label : the label value of the positive class (+1), when needed.
    **options
        Shared options, given to every selected method whose signature has them
        (e.g. ``loss``, ``n_boot``, ``n_resamples``: note that ``n_resamples`` means B
        for both CUD and BS1/BS2), and per-method dicts ``cud_options``,
        ``bs1_options``, ..., ``langford_options`` that override them for one method
        (a dict for a method not selected is ignored). Unknown names raise ValueError.

    Returns
    -------
    list of IntervalResult
        One per method, in the order of ``methods`` (``CUDResult`` for ``"cud"``).

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
    >>> from cudbound.baselines import intervals
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2)); y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    >>> res = intervals(X, y, methods=["kohavi", "martin", "langford"], rng=1)
    >>> [r.method for r in res]
    ['kohavi', 'martin', 'langford']
    >>> len({r.centre for r in res})   # one shared .632 centre
    1
    """
    X, labels, encoding, design, basis_obj, level, methods, gen, shared, per = _intervals_iv(
        X, y, methods, basis, confidence_level, rng, pos_label, options)
    root = np.random.SeedSequence([int(v) for v in gen.integers(0, 2**63, size=4)])
    centres, distributions, results = {}, {}, []
    for method in methods:
        params = _params(method)
        kwargs = {k: v for k, v in shared.items() if k in params}
        kwargs.update(per.get(method, {}))
        if method == "cud":
            # an integer seed or SeedSequence goes to CUD unchanged, so its interval is the one
            # cud_interval(X, y, rng=seed) gives (and the CLI gives with or without --methods)
            cud_rng = rng if _is_seed(rng) else _child(root, "cud")
            results.append(_function("cud")(X, y, basis=basis, confidence_level=level, rng=cud_rng,
                                            pos_label=pos_label, **kwargs))
            continue
        loss = kwargs.get("loss", params["loss"].default)
        shared_seconds = 0.0
        extra = {}
        if "centre" not in kwargs:
            n_boot = kwargs.get("n_boot", params["n_boot"].default)
            key = (_loss_key(loss), n_boot)
            if key not in centres:
                t0 = time.perf_counter()
                t, det = _centre_value(design, labels, get_loss(loss), "632", _positive_int(n_boot, "n_boot"),
                                       _child(root, "centre"), "intervals")
                centres[key] = (t, det, time.perf_counter() - t0)
            t, det, secs = centres[key]
            kwargs["centre"] = t
            shared_seconds += secs
            extra.update({**det, "centre_source": ".632", "centre_shared": True})
        if method in ("bs1", "bs2"):
            B = kwargs.get("n_resamples", params["n_resamples"].default)
            J = kwargs.get("n_inner", params["n_inner"].default)
            key = (_loss_key(loss), B, J)
            if key not in distributions:
                t0 = time.perf_counter()
                B_, J_ = _positive_int(B, "n_resamples", 2), _positive_int(J, "n_inner")
                dist, log = _bs632_distribution(design, labels, get_loss(loss), B_, J_, _child(root, "bootstrap"))
                log.warn("intervals (bootstrap distribution of the .632 estimate)", stacklevel=3)
                distributions[key] = (dist, {"n_resamples": B_, "n_inner": J_,
                                             "distribution_degenerate_refits": log.degenerate,
                                             "distribution_refits": log.refits}, time.perf_counter() - t0)
            dist, det, secs = distributions[key]
            kwargs["bootstrap_distribution"] = dist
            shared_seconds += secs
            extra.update({**det, "distribution_source": "bootstrap (shared by bs1 and bs2)"})
        res = INTERVALS[method](design, labels, confidence_level=level, rng=_child(root, method), **kwargs)
        res.details.update(extra)
        res.details["shared_seconds"] = shared_seconds
        res.details["label_encoding"] = repr(encoding)
        res.details["basis"] = repr(basis_obj)
        results.append(res)
    return results

