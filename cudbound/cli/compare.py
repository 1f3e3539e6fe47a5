"""``cudbound compare``: two classifiers compared on a CSV file by the methods of
:mod:`cudbound.compare` (tests and intervals for the difference A - B), one table, ``--json``,
``--plot`` (a forest plot of the differences). A and B are model SPECs (``--model-a``,
``--model-b``; :mod:`cudbound.cli.model_spec`).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ..compare import (ALTERNATIVES, DEFAULT_METHODS, ComparisonsInterrupted, compare, get_method, method_names,
                       select_methods)
from ..output import envelope
from ..results import AUC_DIFFERENCE
from .csv_input import read_labelled_csv
from .interval import _time_limit_details, _time_note
from .model_spec import SPEC_HELP, model_arg
from .output import _csv_data, _plot_to_file
from .shared import CLIError, InterruptedWithOutput, _positive, _show_progress, in_flags, shared_flags

__all__ = ["add_parser"]

_FIXED_SPLITS = ("ttest_5x2cv", "ftest_5x2cv")
"""Their ``cv`` and ``repeats`` define the test (five halvings): ``--cv`` and ``--repeats`` leave them."""


def _comparison_methods(text: str) -> tuple:
    """``--methods``: registered comparisons, parsed by the package's one method-list parser."""
    try:
        return select_methods(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(in_flags(str(exc))) from None


def add_parser(subparsers) -> None:
    """The ``compare`` subcommand."""
    cmd = subparsers.add_parser(
        "compare", parents=[shared_flags("data", "confidence-level", "seed", "json", "progress")], help="compare two classifiers on a CSV file: tests and intervals for the difference A - B",
        description="Compare two classifiers A and B on a CSV file by the methods of cudbound.compare: McNemar's "
                    "test, the paired error-difference intervals and DeLong's test on out-of-fold predictions, "
                    "tests and intervals on repeated refits (5x2cv, corrected t, Wald-CV, nested CV), and the CUD "
                    "interval of the difference of the two fitted classifiers' errors (cud). Every "
                    "estimate is A - B: a negative error difference favours A. A SPEC is " + SPEC_HELP + ".")
    cmd.add_argument("--model-a", required=True, type=model_arg, metavar="SPEC", help="classifier A")
    cmd.add_argument("--model-b", required=True, type=model_arg, metavar="SPEC", help="classifier B")
    cmd.add_argument("--methods", type=_comparison_methods, default=DEFAULT_METHODS, metavar="M1,M2,...",
                     help="comma-separated comparisons: " + ", ".join(method_names()) + ", or 'all' (default "
                          + ",".join(DEFAULT_METHODS) + ", cudbound.compare.DEFAULT_METHODS: docs/compare.md)")
    cmd.add_argument("--alternative", choices=ALTERNATIVES, default="two-sided",
                     help="alternative of the tests' p-values: 'less' says A's error (or AUC) is below B's "
                          "(default two-sided; the intervals are two-sided whatever it is)")
    cmd.add_argument("--cv", type=_positive(int, "--cv"), default=None, metavar="K",
                     help="folds of the methods that cross-validate (the out-of-fold predictions, corrected_t, "
                          "wald_cv, nested_cv; default 10); the 5x2cv tests keep their halvings")
    cmd.add_argument("--repeats", type=_positive(int, "--repeats"), default=None, metavar="R",
                     help="repetitions of corrected_t (default 10) and nested_cv (default 50); the 5x2cv tests "
                          "keep their five")
    cmd.add_argument("--resamples", type=_positive(int, "--resamples"), default=None, metavar="B",
                     help="bootstrap resamples of cud, the CUD interval of the difference (default 500)")
    cmd.add_argument("--alpha-n", type=float, default=None, metavar="FLOAT",
                     help="scale alpha_n of cud's neighbourhood (default n, the sample size)")
    cmd.add_argument("--time-limit", type=_positive(float, "--time-limit"), default=None, metavar="SECONDS",
                     help="time budget of the whole run (default: none), shared as by 'cudbound interval': each "
                          "method that repeats its splits (5x2cv t and F, corrected_t, nested_cv) stops its "
                          "repetitions when its share is spent and says how many it used; cud returns a certified "
                          "(conservative) interval; a method not started when it runs out is skipped and listed")
    cmd.add_argument("--plot", default=None, metavar="FILE.png",
                     help="also draw a forest plot of the differences, with the zero line, to this image file "
                          "(needs matplotlib)")
    cmd.set_defaults(handler=_compare)


def _options(args, methods) -> dict:
    """{<method>_options: {...}}: ``--cv``, ``--repeats``, ``--resamples`` and ``--alpha-n`` to every
    chosen method that takes them (not the 5x2cv tests); one that none of them takes is an error. cud gets
    ``progress``: its bar over the replicates whenever the run shows one."""
    per: dict[str, dict] = {}
    for flag, attr, param in (("--cv", "cv", "cv"), ("--repeats", "repeats", "repeats"),
                              ("--resamples", "resamples", "n_resamples"), ("--alpha-n", "alpha_n", "alpha_n")):
        value = getattr(args, attr)
        if value is None:
            continue
        takers = [m for m in methods if m not in _FIXED_SPLITS and param in get_method(m).options()]
        if not takers:
            users = [m for m in method_names() if m not in _FIXED_SPLITS and param in get_method(m).options()]
            raise CLIError(f"{flag} is used by {', '.join(users)}, and none of the chosen methods "
                           f"({', '.join(methods)}) takes it; drop it or add a method that uses it.")
        for m in takers:
            per.setdefault(f"{m}_options", {})[param] = value
    if "cud" in methods:   # its bar over the replicates, under the bar over the methods
        per.setdefault("cud_options", {})["progress"] = _show_progress(args)
    return per


_OUT_OF_FOLD = ("mcnemar", "tango", "newcombe", "agresti_min", "delong")


def _compare(args) -> tuple[dict, str]:
    """``cudbound compare``: the chosen comparisons of A and B on the CSV file, one table."""
    X, _, features, labels, encoding = read_labelled_csv(args)
    seed = args.seed
    try:
        results = compare(args.model_a.procedure, args.model_b.procedure, X, labels, methods=args.methods,
                          confidence_level=args.confidence_level, alternative=args.alternative, rng=seed,
                          time_limit=args.time_limit, progress=_show_progress(args), **_options(args, args.methods))
    except ComparisonsInterrupted as stop:     # Ctrl-C: keep and print what finished
        record, report = _output(args, X, features, encoding, seed, stop.results, None)
        record["details"]["interrupted"] = {"during": stop.method, "not_started": list(stop.pending)}
        report += (f"\n  interrupted during {stop.method}; not started: {', '.join(stop.pending) or 'none'}")
        raise InterruptedWithOutput(record, report) from None
    return _output(args, X, features, encoding, seed, results, _maybe_plot(args, results))


def _output(args, X, features, encoding, seed, results, plotted) -> tuple[dict, str]:
    """The JSON record and the table of ``results``."""
    record = envelope("compare", data=_csv_data(args, X, features, encoding), seed=seed,
                      results=[_record(r) for r in results], plot=plotted,
                      details={"model_a": args.model_a.text, "model_b": args.model_b.text,
                               "procedure_a": args.model_a.describe(), "procedure_b": args.model_b.describe(),
                               "alternative": args.alternative, **_time_limit_details(args, results)})
    return record, _report(args, X, encoding, seed, results, plotted)


def _record(result) -> dict:
    """A result's ``to_dict()`` with its folds (fold labels per point, a list per repetition), so
    that the comparison can be repeated on the same splits elsewhere (``PredefinedSplit``)."""
    out = result.to_dict()
    folds = result.details.get("folds")
    if folds is not None:
        out["details"]["folds"] = np.asarray(folds).tolist()
    return out


def _number(value, width, digits=4):
    if value is None:
        return f"{'-':>{width}}"
    if isinstance(value, float) and value != value:
        return f"{'nan':>{width}}"
    return f"{value:>{width}.{digits}f}"


def _report(args, X, encoding, seed, results, plotted) -> str:
    w = max([12] + [2 + len(r.method) for r in results])
    lines = [f"Comparison of two classifiers, A - B (level {args.confidence_level:g}, {args.alternative}, "
             f"n = {X.shape[0]}, seed {seed})",
             f"  A  {args.model_a.text}  ->  {args.model_a.describe()}",
             f"  B  {args.model_b.text}  ->  {args.model_b.describe()}",
             f"  data {args.data}, labels {encoding!r}", "",
             f"  {'method':<{w}}{'of':<7}{'A - B':>8}{'low':>9}{'high':>9}{'statistic':>11}{'p-value':>9}"
             f"{'seconds':>9}"]
    for r in results:
        what = "AUC" if r.quantity == AUC_DIFFERENCE else "error"
        low, high = (r.low, r.high) if r.has_confidence_interval else (None, None)
        lines.append(f"  {r.method:<{w}}{what:<7}{_number(r.estimate, 8)}{_number(low, 9)}{_number(high, 9)}"
                     f"{_number(r.statistic, 11, 3)}{_number(r.pvalue, 9)}{r.seconds:>9.2f}  {_time_note(r)}".rstrip())
    lines += ["", "  A - B of the error rates (negative: A errs less) or of the AUCs (positive: A ranks better);",
              "  '-': the method gives no interval (or no test)."]
    oof = [r for r in results if r.method in _OUT_OF_FOLD]
    if oof:
        k = oof[0].details.get("k")
        lines += [f"  {', '.join(r.method for r in oof)}: on the out-of-fold predictions of one {k}-fold split "
                  f"(refitted once, timed in the first),",
                  "  treated as one test set; they are not independent (the models share training points)."]
    skipped = tuple(getattr(results, "skipped", ()))
    if skipped:
        lines.append(f"  not started, the time limit of {args.time_limit:g} s having run out: {', '.join(skipped)}.")
    if plotted:
        lines.append(f"  plot: {plotted}")
    return "\n".join(lines)


def _maybe_plot(args, results):
    """A forest plot of the differences to ``--plot FILE`` (None without the option)."""
    if not args.plot:
        return None
    return _plot_to_file(args.plot, lambda: results.plot(data_name=Path(args.data).name))
