"""The methods of an AUC and comparison study (``kind = "auc"``), read from its TOML file.

Example (``experiments/study3.toml``)::

    [study]
    kind = "auc"
    methods = ["delong", "cvauc"]         # AUC intervals, by their names in cudbound.auc
    comparisons = ["mcnemar", "wald_cv"]  # comparisons of A and B, by their names in cudbound.compare
    cv = 5                                # folds of the out-of-fold scores (shared by both families)

    [options.bootstrap_percentile]        # an AUC interval's options
    n_resamples = 1000

    [comparison_options.corrected_t]      # a comparison's options
    repeats = 10

    [[datasets]]
    name = "liver"
    basis = "zpca:3"                      # procedure A
    basis_b = "poly:2(zpca:3)"            # procedure B (default: poly:2 of A's basis)

Each task's rows, in this order (:data:`ESTIMATES` between the two families):

* one per AUC interval (its label is its name), scored against the true AUC of A;
* ``cv_auc.averaged``, ``cv_auc.pooled`` and ``lpo_auc``: the three cross-validated AUC
  estimates of A (Suominen et al. 2008), no interval, for their bias against the true AUC;
* one per comparison, labelled ``compare.<name>``, scored against the true difference A - B of
  the error rates (or of the AUCs, for ``delong``).

A study with ``methods = []`` (comparisons only) has neither the AUC intervals nor the estimates:
its tasks draw, fit and score as any other (the same seeds give the same training sets and
targets) and compute only the comparisons, e.g. a supplementary study that adds one comparison to
a committed one (``experiments/study3_cud.toml``).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .._validation import check_scalar

__all__ = ["ESTIMATES", "COMPARISON_PREFIX", "parse_auc_methods"]

ESTIMATES = ("cv_auc.averaged", "cv_auc.pooled", "lpo_auc")
"""The labels of the rows of the cross-validated AUC estimates of A."""

COMPARISON_PREFIX = "compare."
"""The labels of the comparisons' rows: this prefix and the comparison's name."""


def _out_of_fold_comparisons() -> set:
    from ..compare import OUT_OF_FOLD_STREAM, get_method, method_names
    return {m for m in method_names() if get_method(m).stream == OUT_OF_FOLD_STREAM}


def _names(value, key: str, registered, noun: str, report: Callable[[str], None]) -> list:
    if not isinstance(value, list) or not all(isinstance(m, str) for m in value):
        report(f"[study] `{key}` must be a list of {noun} names; got {value!r}.")
        return []
    if len(set(value)) != len(value):
        report(f"[study] `{key}` lists a name twice: {value}.")
    unknown = [m for m in value if m not in registered]
    if unknown:
        report(f"[study] `{key}`: unknown {noun}(s) {unknown}; registered: {list(registered)}.")
    return [m for m in dict.fromkeys(value) if m in registered]


def _options(table: dict, names, accepted, where: str, report: Callable[[str], None]) -> dict:
    """Per-name option tables, each key checked against the names the method takes."""
    out: dict[str, dict] = {m: {} for m in names}
    for key, value in table.items():
        if not isinstance(value, dict):
            report(f"[{where}] takes one table per method ([{where}.NAME]); got the key {key!r}.")
            continue
        if key not in out:
            report(f"[{where}.{key}] does not match any method of the study {list(names)}.")
            continue
        bad = sorted(k for k in value if k not in accepted(key))
        if bad:
            report(f"[{where}.{key}] has option(s) {bad} that {key!r} does not take; it takes {accepted(key)}.")
            continue
        out[key] = dict(value)
    return out


def _try_auc_options(name: str, options: dict, report: Callable[[str], None]) -> None:
    """Run the AUC interval once on a small stand-in problem with its options: a bad value is found
    here, by the method's own checks, not in a worker."""
    from ..auc.registry import get_method
    labels = np.tile([1.0, -1.0], 6)
    scores = np.arange(12.0) % 5
    folds = np.repeat(np.arange(3), 4)
    try:
        get_method(name).function(labels, scores, folds, confidence_level=0.95, rng=np.random.default_rng(0),
                                  **options)
    except (ValueError, TypeError) as exc:
        report(f"[options.{name}]: {exc}")


def _try_comparison_options(name: str, options: dict, report: Callable[[str], None]) -> None:
    """Run the comparison once on a small stand-in pair with its options, as :func:`_try_auc_options`."""
    from ..compare import Procedure, ProcedurePair, get_method
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.tile([1.0, -1.0], 20)
    pair = ProcedurePair(Procedure(basis="linear", loss="squared"), Procedure(basis="linear", loss="squared"), X, y)
    try:
        get_method(name).function(pair, confidence_level=0.95, alternative="two-sided", rng=rng, **options)
    except (ValueError, TypeError) as exc:
        report(f"[comparison_options.{name}]: {exc}")


def parse_auc_methods(study: dict, doc: dict, report: Callable[[str], None],
                      sizes: Sequence[int] = ()) -> tuple[list, dict, dict, dict]:
    """(labels, method_of, options, extra StudyConfig fields) of an AUC study; each problem found is
    given to ``report`` (a message), so that the configuration's problems are raised together."""
    from ..auc.registry import get_method as auc_method, method_names as auc_names
    from ..compare import get_method as comparison, method_names as comparison_names
    if "methods" not in study:
        return [], {}, {}, {"cv": 5}
    aucs = _names(study.get("methods"), "methods", auc_names(), "AUC interval", report)
    comparisons = _names(study.get("comparisons", []), "comparisons", comparison_names(), "comparison", report)
    cv = study.get("cv", 5)
    try:
        cv = check_scalar(cv, "cv", min_val=2)
    except ValueError as exc:
        report(f"[study] `cv` (the folds of the out-of-fold scores): {exc}")
        cv = 5
    else:
        if sizes and cv > min(sizes) // 2:
            report(f"[study] `cv` = {cv}: every class of a training draw needs at least `cv` points (one "
                         f"per fold), which n = {min(sizes)} cannot give both classes; use cv <= {min(sizes) // 2}.")
    raw = doc.get("options", {})
    auc_opts = _options(raw if isinstance(raw, dict) else {}, aucs, lambda m: auc_method(m).options(), "options",
                        report)
    for name, opts in auc_opts.items():
        if opts:
            _try_auc_options(name, opts, report)
    raw = doc.get("comparison_options", {})
    cmp_opts = _options(raw if isinstance(raw, dict) else {}, comparisons, lambda m: comparison(m).options(),
                        "comparison_options", report)
    for name, opts in cmp_opts.items():
        if opts:
            _try_comparison_options(name, {k: v for k, v in opts.items() if k != "cv"} if name in
                                    _out_of_fold_comparisons() else opts, report)
    oof = _out_of_fold_comparisons()
    for name in comparisons:
        if name in oof:
            if "cv" in cmp_opts[name]:
                report(f"[comparison_options.{name}] sets `cv`; the comparisons on out-of-fold predictions "
                             f"use the study's `cv` ({cv}), shared with the AUC intervals.")
            cmp_opts[name]["cv"] = int(cv)
    if not aucs and not comparisons:
        report("[study] an AUC study needs an AUC interval in `methods` or a comparison in `comparisons`.")
    estimates = ESTIMATES if aucs else ()      # comparisons only: no AUC rows at all
    labels = [*aucs, *estimates, *(COMPARISON_PREFIX + c for c in comparisons)]
    method_of = {**{m: m for m in aucs}, **{e: e for e in estimates},
                 **{COMPARISON_PREFIX + c: c for c in comparisons}}
    options = {**auc_opts, **{e: {} for e in estimates}, **{COMPARISON_PREFIX + c: o for c, o in cmp_opts.items()}}
    return labels, method_of, options, {"cv": int(cv)}
