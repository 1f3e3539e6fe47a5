"""``cudbound demo`` and ``cudbound interval``: the CUD interval on simulated data or a CSV
file, and several interval methods on a CSV file (``--methods``); the classifier is ``--loss`` and
``--basis``, or a model SPEC (``--model``, :mod:`cudbound.cli.model_spec`)."""
from __future__ import annotations

import sys
from pathlib import Path

from ..cud import EngineOptions, cud_interval
from ..datasets.simulated import DEMO_GENERATOR, demo_data
from ..output import envelope
from ..refit import Procedure
from ..registry import IntervalsInterrupted, get_method, intervals, method_names
from .csv_input import read_labelled_csv
from .output import _coefficient_names, _csv_data, _format_report, _plot_to_file
from .shared import (DEFAULT_RESAMPLES, PROG, CLIError, InterruptedWithOutput, _basis_spec, _methods_spec, _positive,
                     _show_progress, add_flag, shared_flags)

__all__ = ["add_parser"]


def add_parser(subparsers) -> None:
    """The ``demo`` and ``interval`` subcommands, with the CUD interval's flags."""
    demo = subparsers.add_parser("demo", parents=[shared_flags("seed", "confidence-level", "cud", "json", "progress")],
                                 help="CUD interval on a simulated data set",
                                 description="Compute the CUD interval on simulated data: two Gaussian features, "
                                             "a linear Bayes boundary and 20% label noise (Bayes error 0.2); "
                                             "--seed draws the data and the bootstrap.")
    demo.add_argument("--n", type=int, default=50, help="number of observations (default 50)")
    demo.set_defaults(handler=_demo)

    interval = subparsers.add_parser("interval", parents=[shared_flags("data", "seed", "confidence-level", "cud",
                                                                       "model", "json", "progress")],
                                     help="CUD interval for a CSV file",
                                     description="Compute the CUD interval for a CSV file with a header row. "
                                                 "Every column except the label column is a numeric feature.")
    interval.add_argument("--basis", type=_basis_spec, default=None, metavar="linear|poly:D|pca:K|zpca:K|poly:D(zpca:K)",
                          help="basis of the linear classifier (default linear: intercept plus features)")
    interval.add_argument("--methods", type=_methods_spec, default=("cud",), metavar="M1,M2,...",
                          help="comma-separated interval methods: " + ", ".join(method_names())
                               + ", or 'all' (default cud); every option goes to each chosen method that "
                                 "takes it, and an option none of them takes is an error")
    add_flag(interval, "--cv", "--folds", type=_positive(int, "--cv"), default=None, metavar="K",
             help="folds of the methods that cross-validate (yang, wald_cv, nested_cv; each method's default otherwise)")
    interval.set_defaults(handler=_interval)


def _demo(args) -> tuple[dict, str]:
    """``cudbound demo``: the CUD interval on simulated data, against the model's exact error."""
    X, y = demo_data(args.n, args.seed)
    procedure = _procedure(args)
    result = _compute(X, y, args, procedure, seed=args.seed)
    true_error = DEMO_GENERATOR.error_rate(result.coef)
    low, high = result.confidence_interval
    source = f"simulated {DEMO_GENERATOR!r}, n = {args.n}, seed {args.seed}"
    covered = bool(low <= true_error <= high)
    context = [("data", source)]
    plotted = _maybe_plot(args, result)
    if plotted:
        context.append(("plot", plotted))
    names = _coefficient_names(procedure, X, y, ["x1", "x2"])
    record = envelope("demo", data={"source": source, "n": args.n, "features": ["x1", "x2"], "label_mapping": None},
                      seed=args.seed, results=[{**result.to_dict(), "coef_names": names}], plot=plotted,
                      details={"true_error": true_error, "bayes_error": DEMO_GENERATOR.bayes_error,
                               "covered": covered})
    truth = [("true error", f"{true_error:.4f} (exact for the simulated model; "
                            f"{'inside' if covered else 'OUTSIDE'} the interval; "
                            f"Bayes error {DEMO_GENERATOR.bayes_error:g})")]
    return record, _format_report(result, context, truth, coef_names=names)


def _maybe_plot(args, results):
    """Draw the result(s) to ``--plot FILE`` (None without the option): one CUD result as its
    replicate distribution, several as a forest plot. Returns the file name written."""
    if not getattr(args, "plot", None):
        return None

    def draw():
        if isinstance(results, list):
            from ..plotting import plot_intervals
            return plot_intervals(results, data_name=Path(args.data).name if getattr(args, "data", None) else None)
        return results.plot()
    return _plot_to_file(args.plot, draw)


def _interval(args) -> tuple[dict, str]:
    """``cudbound interval``: the CUD interval for a CSV file, or with ``--methods`` several intervals."""
    X, y, features, labels, encoding = read_labelled_csv(args)
    seed = args.seed
    procedure = _procedure(args)
    if args.methods != ("cud",):
        return _interval_methods(args, X, y, labels, features, encoding, seed, procedure)
    _per_method_options(args, ("cud",))     # an option CUD does not take (--cv) is an error
    result = _compute(X, y, args, procedure, seed=seed, pos_label=args.pos_label)
    shown = ", ".join(features[:8]) + (", ..." if len(features) > 8 else "")
    context = [("data", f"{args.data} (n = {X.shape[0]}, {len(features)} feature"
                        f"{'s' if len(features) != 1 else ''}: {shown})"),
               ("label column", args.label),
               ("seed", f"{seed}")]
    if args.model is not None:
        context.append(("classifier", f"{args.model.text}  ->  {args.model.describe()}"))
    plotted = _maybe_plot(args, result)
    if plotted:
        context.append(("plot", plotted))
    names = _coefficient_names(procedure, X, labels, features)
    record = envelope("interval", data=_csv_data(args, X, features, result.label_encoding), seed=seed,
                      results=[{**result.to_dict(), "coef_names": names}], plot=plotted, details=_model_details(args))
    return record, _format_report(result, context, coef_names=names)


def _procedure(args):
    """The classifier of ``demo`` and ``interval``: ``--model``'s, or a Procedure of ``--basis`` (default
    linear) and ``--loss`` (default squared); both at once is an error."""
    model = getattr(args, "model", None)
    if model is None:
        return Procedure(basis=getattr(args, "basis", None) or "linear", loss=args.loss or "squared")
    given = [flag for flag, value in (("--loss", args.loss), ("--basis", args.basis)) if value is not None]
    if given:
        raise CLIError(f"--model names the classifier, basis and loss included; leave out {' and '.join(given)} "
                       f"(or give the loss and basis in the SPEC: 'hinge,basis=poly:2').")
    return model.procedure


def _model_details(args) -> dict:
    """The ``details`` of the JSON output: the ``--model`` SPEC as given, when one is."""
    return {} if args.model is None else {"model": args.model.text, "procedure": args.model.describe()}


# the options of the interval commands that not every method takes: flag -> parameter name (a field of
# CUD's engine_options, cudbound.EngineOptions, as "engine_options.FIELD"); --time-limit is the whole
# run's (intervals(time_limit=...)), which every method honours
_METHOD_OPTIONS = {"--resamples": "n_resamples", "--alpha-n": "alpha_n", "--jobs": "n_jobs",
                   "--scheduler": "engine_options.scheduler",
                   "--exact-distribution": "engine_options.exact_distribution",
                   "--max-nodes": "engine_options.max_nodes",
                   "--replicate-time-limit": "engine_options.replicate_time_limit", "--cv": "cv"}


def _given_options(args) -> dict:
    """The method options the user gave on the command line: {flag: value} (defaults left out)."""
    given = {}
    for flag, param in _METHOD_OPTIONS.items():
        value = getattr(args, flag[2:].replace("-", "_"), None)
        if value is not None and value is not False:
            given[flag] = value
    return given


def _per_method_options(args, methods) -> dict:
    """{method: {parameter: value}}: every given option goes to every chosen method that takes
    it; an option that none of them takes is an error (it would otherwise be ignored)."""
    per: dict[str, dict] = {m: {} for m in methods}
    for flag, value in _given_options(args).items():
        param, _, field = _METHOD_OPTIONS[flag].partition(".")
        takers = [m for m in methods if param in get_method(m).parameters]
        if not takers:
            users = [m for m in method_names() if param in get_method(m).parameters]
            raise CLIError(f"{flag} is used by {', '.join(users) or 'no method'}, and none of the chosen methods "
                           f"({', '.join(methods)}) takes it; drop it or add a method that uses it.")
        for m in takers:
            if field:
                per[m].setdefault(param, {})[field] = value
            else:
                per[m][param] = value
    if "cud" in per:
        per["cud"].setdefault("n_resamples", DEFAULT_RESAMPLES)
        per["cud"]["progress"] = _show_progress(args)
    return per


def _interval_methods(args, X, y, labels, features, encoding, seed, procedure) -> tuple[dict, str]:
    """Several methods on the same data and seed (:func:`cudbound.intervals`)."""
    per = _per_method_options(args, args.methods)
    try:
        results = intervals(X, y, methods=args.methods, procedure=procedure,
                            confidence_level=args.confidence_level, rng=seed, pos_label=args.pos_label,
                            time_limit=args.time_limit, progress=_show_progress(args),
                            **{f"{m}_options": opts for m, opts in per.items() if opts})
    except IntervalsInterrupted as stop:     # Ctrl-C: keep and print what finished
        note = (f"interrupted during {stop.method}; not started: {', '.join(stop.pending) or 'none'}")
        record, report = _methods_output(args, X, labels, features, encoding, seed, procedure, stop.results, note)
        record["details"]["interrupted"] = {"during": stop.method, "not_started": list(stop.pending)}
        raise InterruptedWithOutput(record, report) from None
    return _methods_output(args, X, labels, features, encoding, seed, procedure, results)


def _time_note(result) -> str:
    """What the time limit cut short in one result: each loop's resamples used of those asked for
    (``<option>_used`` against ``<option>``), or CUD's certified, conservative interval; "" if nothing."""
    details = result.details
    if not details.get("cut_by_time_limit"):
        return ""
    cut = [f"{key[:-5]} {used} of {details[key[:-5]]}" for key, used in details.items()
           if key.endswith("_used") and key[:-5] in details and used < details[key[:-5]]]
    return "time limit: " + (", ".join(cut) if cut else "conservative")


def _time_limit_details(args, results) -> dict:
    """The record's ``details`` on the time limit: its seconds and the methods it left out."""
    if args.time_limit is None:
        return {}
    return {"time_limit": args.time_limit, "skipped": list(getattr(results, "skipped", ()))}


def _methods_output(args, X, labels, features, encoding, seed, procedure, results, note=None) -> tuple[dict, str]:
    """The table (and record) of several methods' results; ``note`` a line on what did not finish, and a
    line on the methods the time limit left out (the results' ``ResultList.skipped``)."""
    skipped = tuple(getattr(results, "skipped", ()))
    if skipped:
        note = (f"{note}; " if note else "") + (f"not started, the time limit of {args.time_limit:g} s having run "
                                               f"out: {', '.join(skipped)}")
    details = {**_model_details(args), **_time_limit_details(args, results)}
    if not results:
        lines = [f"No method finished ({note})." if note else "No method finished."]
        return envelope("interval", data=_csv_data(args, X, features, encoding), seed=seed, results=[], plot=None,
                        details=details), "\n".join(lines)
    w = max(10, 2 + max(len(r.method) for r in results))
    lines = [f"Confidence intervals for the generalization error (level {args.confidence_level:g}, n = {X.shape[0]}, "
             f"seed {seed})", f"labels: {encoding!r}", "",
             f"  {'method':<{w}}{'low':>8}{'high':>8}{'estimate':>10}{'width':>8}{'seconds':>9}"]
    lines += [(f"  {r.method:<{w}}{r.low:>8.4f}{r.high:>8.4f}{r.estimate:>10.4f}{r.width:>8.4f}{r.seconds:>9.2f}"
               f"  {_time_note(r)}").rstrip() for r in results]
    lines += ["", "  estimate: training error for cud, the .632 estimate for the paper's six baselines (Laber & Murphy "
                  "2008), each method's own estimate for the others; seconds: each method's own, plus its share of "
                  "what it shares with others."]
    if note:
        lines.append(f"  {note}.")
    plotted = _maybe_plot(args, list(results))
    if plotted:
        lines.append(f"  plot: {plotted}")
    names = _coefficient_names(procedure, X, labels, features) if "cud" in args.methods else None
    record = envelope("interval", data=_csv_data(args, X, features, encoding), seed=seed,
                      results=[{**r.to_dict(), "coef_names": names} if r.method == "cud" else r.to_dict()
                               for r in results], plot=plotted, details=details)
    return record, "\n".join(lines)


def _compute(X, y, args, procedure, *, seed, pos_label=None):
    """cud_interval of ``procedure`` with the options shared by every command."""
    resamples = DEFAULT_RESAMPLES if args.resamples is None else args.resamples
    if sys.stderr.isatty():
        print(f"{PROG}: computing the CUD interval (n = {len(y)}, B = {resamples}) ...", file=sys.stderr)
    engine = EngineOptions(max_nodes=args.max_nodes, replicate_time_limit=args.replicate_time_limit,
                           exact_distribution=args.exact_distribution, scheduler=args.scheduler)
    return cud_interval(X, y, procedure, confidence_level=args.confidence_level,
                        n_resamples=resamples, alpha_n=args.alpha_n, rng=seed, pos_label=pos_label, n_jobs=args.jobs,
                        time_limit=args.time_limit, progress=_show_progress(args), engine_options=engine)
