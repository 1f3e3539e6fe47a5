"""Command-line interface: ``cudbound demo``, ``interval``, ``coverage``, ``store``, ``auc``, ``xi-alpha``.

``cudbound demo`` computes the CUD interval on a simulated data set (no files,
no network); ``cudbound interval`` on a CSV file. Both print a readable table,
or with ``--json`` the result as JSON. ``cudbound coverage`` runs or resumes a coverage
study (``--check``: only validate its configuration); ``cudbound store check FILE``
verifies a study's store (exit status 1 when it finds problems) and ``cudbound store
export FILE DIR`` writes its complete blocks as result chunks. ``cudbound auc`` and
``cudbound xi-alpha`` compute the other estimators on a CSV file. Bad input (a bad
file, configuration or store included) prints ``cudbound: error: <message>`` on stderr
and exits with status 2; an interrupted coverage run exits with status 130.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import secrets
import sys
import warnings
from concurrent.futures import BrokenExecutor
from pathlib import Path

import numpy as np

from . import __version__
from ._validation import encode_labels
from .registry import get_method, intervals, method_names
from .basis import make_basis
from .cud import cud_interval
from .datasets.simulated import DEMO_GENERATOR, demo_data
from .losses import get_loss
from .output import envelope, result_item

__all__ = ["main", "build_parser", "read_csv", "CLIError"]

PROG = "cudbound"
EXIT_USAGE = 2
"""Exit status for bad input, as argparse uses for bad arguments."""
EXIT_FAILURE = 1
"""Exit status when the computation failed (a failed study task, a dead worker, a full disk)."""

EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), as a shell reports it."""


DEFAULT_RESAMPLES = 500
"""B of the CUD interval when ``--resamples`` is not given."""


class CLIError(ValueError):
    """Bad input found by the command line itself (file, columns, values)."""


# the library's parameter names as the command line spells them (messages speak in flags)
_FLAGS = {"confidence_level": "--level", "n_resamples": "--resamples", "alpha_n": "--alpha-n", "n_jobs": "--jobs",
          "max_nodes": "--max-nodes", "time_limit": "--time-limit", "replicate_time_limit": "--replicate-time-limit",
          "loss": "--loss", "basis": "--basis", "pos_label": "--pos-label", "k": "--folds", "rng": "--seed",
          "exact_distribution": "--exact-distribution", "scheduler": "--scheduler"}


_NAMES = "|".join(sorted(map(re.escape, _FLAGS), key=len, reverse=True))
_TICKED_VALUE = re.compile(rf"`({_NAMES})`\s*=\s*")
_TICKED = re.compile(rf"`({_NAMES})`")
_ASSIGNED = re.compile(rf"\b({_NAMES})=(['\"]?)([^\s'\",;)]+)\2")


def in_flags(message: str) -> str:
    """A library message in command-line words: `` `n_resamples` `` -> ``--resamples``,
    ``confidence_level=0.95`` -> ``--level 0.95``, ``loss='logistic_ridge:0.1'`` -> ``--loss logistic_ridge:0.1``."""
    message = _TICKED_VALUE.sub(lambda m: f"{_FLAGS[m.group(1)]} ", message)
    message = _TICKED.sub(lambda m: _FLAGS[m.group(1)], message)
    return _ASSIGNED.sub(lambda m: f"{_FLAGS[m.group(1)]} {m.group(3)}", message)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors: the message and where to read more."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {in_flags(message)} (see '{self.prog} --help')\n")


# --------------------------------------------------------------------------- CSV input

def read_csv(path, label: str):
    """Read a CSV file with a header row into features and raw labels.

    Every column except ``label`` is a feature and must be numeric and finite.
    Blank lines are skipped.

    Parameters
    ----------
    path : str or Path
        The file, comma-separated, UTF-8 (a byte-order mark is allowed).
    label : str
        Name of the label column in the header.

    Returns
    -------
    X : ndarray of shape (n, d)
        The feature columns, in file order.
    y : ndarray of shape (n,)
        The labels: integers if every label is a whole number, floats if every
        label is a finite number, else the stripped strings.
    features : list of str
        The feature column names.

    Raises
    ------
    CLIError
        The file cannot be read, has no data rows, lacks the label column, has
        a ragged row or an unnamed column (other than a row index, see below), or a
        feature value is missing, non-numeric or non-finite; the message names the
        column and the line.

    Warns
    -----
    UserWarning
        An unnamed first column holding 0, 1, ..., n-1 (the row index pandas writes)
        is dropped.
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            rows = [(reader.line_num, [cell.strip() for cell in row]) for row in reader if any(c.strip() for c in row)]
    except FileNotFoundError:
        raise CLIError(f"data file '{path}' not found.") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise CLIError(f"cannot read data file '{path}' as CSV: {exc}") from None
    if not rows:
        raise CLIError(f"data file '{path}' is empty; expected a header row and data rows.")
    header = rows[0][1]
    if len(set(header)) != len(header):
        dup = next(name for name in header if header.count(name) > 1)
        raise CLIError(f"column name {dup!r} appears more than once in the header of '{path}'.")
    if label not in header:
        raise CLIError(f"label column {label!r} is not in the header of '{path}'; the columns are: {', '.join(header)}.")
    body = rows[1:]
    if not body:
        raise CLIError(f"data file '{path}' has a header but no data rows.")
    for line, row in body:
        if len(row) != len(header):
            raise CLIError(f"line {line} of '{path}' has {len(row)} fields but the header has {len(header)}.")
    header, body = _drop_index_column(path, header, body, label)
    features = [name for name in header if name != label]
    if not features:
        raise CLIError(f"data file '{path}' has no feature columns besides the label column {label!r}.")
    columns = {name: j for j, name in enumerate(header)}
    X = np.column_stack([_feature_column(name, [(line, row[columns[name]]) for line, row in body])
                         for name in features])
    y = _label_column(label, [(line, row[columns[label]]) for line, row in body])
    return X, y, features


def _drop_index_column(path, header, body, label):
    """An unnamed first column holding 0, 1, ..., n-1 is a row index (pandas' ``to_csv`` writes
    one unless ``index=False``): dropped, with a warning. Any other unnamed column is refused."""
    unnamed = [j for j, name in enumerate(header) if name == "" and name != label]
    if not unnamed:
        return header, body
    if unnamed == [0] and [row[0] for _, row in body] == [str(i) for i in range(len(body))]:
        warnings.warn(f"the first column of '{path}' has no name and holds 0, 1, ..., {len(body) - 1}: read as a "
                      f"row index (as pandas' to_csv writes one) and not used as a feature", UserWarning, stacklevel=3)
        return header[1:], [(line, row[1:]) for line, row in body]
    where = "the first column" if unnamed[0] == 0 else f"column {unnamed[0] + 1}"
    raise CLIError(f"{where} of '{path}' has no name in the header; name it to use it as a feature "
                   f"(or drop it).")


def _feature_column(name: str, cells) -> np.ndarray:
    """Floats from ``(line, cell)`` pairs; a missing, non-numeric or non-finite cell is an error."""
    out = np.empty(len(cells))
    for i, (line, cell) in enumerate(cells):
        if not cell:
            raise CLIError(f"feature column {name!r} has a missing value at line {line}; remove or impute it first.")
        try:
            out[i] = float(cell)
        except ValueError:
            raise CLIError(
                f"feature column {name!r} is not numeric: line {line} holds {cell!r}. "
                f"Encode it as numbers or drop the column."
            ) from None
        if not math.isfinite(out[i]):
            raise CLIError(f"feature column {name!r} has a non-finite value {cell!r} at line {line}; "
                           f"remove or impute it first.")
    return out


def _label_column(name: str, cells) -> np.ndarray:
    """Labels from ``(line, cell)`` pairs: integers, floats or strings (see :func:`read_csv`)."""
    for line, cell in cells:
        if not cell:
            raise CLIError(f"label column {name!r} has a missing value at line {line}.")
    values = [cell for _, cell in cells]
    try:
        as_float = np.array([float(v) for v in values])
    except ValueError:
        return np.array(values)
    if not np.all(np.isfinite(as_float)):
        return np.array(values)
    if np.all(as_float == np.round(as_float)):
        return as_float.astype(np.int64)
    return as_float


# --------------------------------------------------------------------------- commands

def _demo(args) -> tuple[dict, str]:
    X, y = demo_data(args.n, args.seed)
    result = _compute(X, y, args, basis="linear", seed=args.seed)
    true_error = DEMO_GENERATOR.error_rate(result.coef)
    low, high = result.confidence_interval
    source = f"simulated {DEMO_GENERATOR!r}, n = {args.n}, seed {args.seed}"
    covered = bool(low <= true_error <= high)
    context = [("data", source)]
    plotted = _maybe_plot(args, result)
    if plotted:
        context.append(("plot", plotted))
    record = envelope("demo", data={"source": source, "n": args.n, "features": ["x1", "x2"], "label_mapping": None},
                      seed=args.seed, results=[result.to_dict()], plot=plotted,
                      details={"true_error": true_error, "bayes_error": DEMO_GENERATOR.bayes_error,
                               "covered": covered})
    truth = [("true error", f"{true_error:.4f} (exact for the simulated model; "
                            f"{'inside' if covered else 'OUTSIDE'} the interval; "
                            f"Bayes error {DEMO_GENERATOR.bayes_error:g})")]
    return record, _format_report(result, context, truth)


def _maybe_plot(args, results):
    """Draw the result(s) to ``--plot FILE`` (None without the option): one CUD result as its
    replicate distribution, several as a forest plot. Returns the file name written."""
    if not getattr(args, "plot", None):
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise CLIError('--plot needs matplotlib: pip install "cudbound[figures]"') from None
    from .plotting import plot_intervals
    if isinstance(results, list):
        ax = plot_intervals(results, data_name=Path(args.data).name if getattr(args, "data", None) else None)
    else:
        ax = results.plot()
    fig = ax.figure
    try:
        fig.savefig(args.plot, dpi=150)
    except (OSError, ValueError) as exc:
        raise CLIError(f"--plot: cannot write {args.plot!r}: {exc}") from None
    finally:
        plt.close(fig)
    return str(args.plot)


def _interval(args) -> tuple[dict, str]:
    X, y, features = read_csv(args.data, args.label)
    _check_labels(y, args.label, args.pos_label)
    seed = secrets.randbits(32) if args.seed is None else args.seed
    if args.methods != ("cud",):
        return _interval_methods(args, X, y, features, seed)
    _per_method_options(args, ("cud",))     # an option CUD does not take (--folds) is an error
    result = _compute(X, y, args, basis=args.basis, seed=seed, pos_label=args.pos_label)
    shown = ", ".join(features[:8]) + (", ..." if len(features) > 8 else "")
    context = [("data", f"{args.data} (n = {X.shape[0]}, {len(features)} feature"
                        f"{'s' if len(features) != 1 else ''}: {shown})"),
               ("label column", args.label),
               ("seed", f"{seed}" + (" (drawn at random; pass --seed to repeat)" if args.seed is None else ""))]
    plotted = _maybe_plot(args, result)
    if plotted:
        context.append(("plot", plotted))
    record = envelope("interval", data=_csv_data(args, X, features, result.label_encoding), seed=seed,
                      results=[result.to_dict()], plot=plotted)
    return record, _format_report(result, context)


def _csv_data(args, X, features, encoding) -> dict:
    """The ``data`` member of the JSON output for a command that read a CSV file."""
    mapping = None if encoding is None else {"positive": encoding.positive, "negative": encoding.negative}
    return {"source": str(args.data), "n": int(X.shape[0]), "features": list(features),
            "label_column": args.label, "label_mapping": mapping}


# the options of the interval commands that not every method takes: flag -> parameter name
_METHOD_OPTIONS = {"--resamples": "n_resamples", "--alpha-n": "alpha_n", "--jobs": "n_jobs",
                   "--scheduler": "scheduler", "--exact-distribution": "exact_distribution",
                   "--max-nodes": "max_nodes", "--time-limit": "time_limit",
                   "--replicate-time-limit": "replicate_time_limit", "--folds": "k"}


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
    per = {m: {} for m in methods}
    for flag, value in _given_options(args).items():
        param = _METHOD_OPTIONS[flag]
        takers = [m for m in methods if param in get_method(m).parameters]
        if not takers:
            users = [m for m in method_names() if param in get_method(m).parameters]
            raise CLIError(f"{flag} is used by {', '.join(users) or 'no method'}, and none of the chosen methods "
                           f"({', '.join(methods)}) takes it; drop it or add a method that uses it.")
        for m in takers:
            per[m][param] = value
    if "cud" in per:
        per["cud"].setdefault("n_resamples", DEFAULT_RESAMPLES)
        per["cud"]["progress"] = _show_progress(args)
    return per


def _interval_methods(args, X, y, features, seed) -> tuple[dict, str]:
    """Several methods on the same data and seed (:func:`cudbound.intervals`)."""
    per = _per_method_options(args, args.methods)
    results = intervals(X, y, methods=args.methods, basis=args.basis, confidence_level=args.level, rng=seed,
                        pos_label=args.pos_label, loss=args.loss,
                        **{f"{m}_options": opts for m, opts in per.items() if opts})
    _, encoding = encode_labels(y, pos_label=args.pos_label, name=args.label)
    w = max(10, 2 + max(len(r.method) for r in results))
    lines = [f"Confidence intervals for the generalization error (level {args.level:g}, n = {X.shape[0]}, "
             f"seed {seed})", f"labels: {encoding!r}", "",
             f"  {'method':<{w}}{'low':>8}{'high':>8}{'centre':>8}{'width':>8}{'seconds':>9}"]
    lines += [f"  {r.method:<{w}}{r.low:>8.4f}{r.high:>8.4f}{r.centre:>8.4f}{r.width:>8.4f}"
              f"{r.seconds + r.details.get('shared_seconds', 0.0):>9.2f}" for r in results]
    lines += ["", "  centre: training error for cud, the .632 estimate for the paper's six baselines (Laber & Murphy "
                  "2008), each method's own estimate for the others."]
    plotted = _maybe_plot(args, list(results))
    if plotted:
        lines.append(f"  plot: {plotted}")
    record = envelope("interval", data=_csv_data(args, X, features, encoding), seed=seed,
                      results=[r.to_dict() for r in results], plot=plotted)
    return record, "\n".join(lines)


def _methods_spec(text: str) -> tuple:
    names = [m.strip().lower() for m in text.split(",") if m.strip()]
    known = method_names()
    if names == ["all"]:
        return known
    bad = [m for m in names if m not in known]
    if not names or bad:
        raise argparse.ArgumentTypeError(
            f"unknown method(s) {', '.join(bad) or '(none)'}; choose from {', '.join(known)} or 'all'.")
    return tuple(dict.fromkeys(names))


def _check_labels(y, column: str, pos_label) -> None:
    """Fail early, naming the column and the option, if the labels cannot be mapped to -1/+1."""
    try:
        encode_labels(y, pos_label=pos_label, name=column)
    except ValueError as exc:
        raise CLIError(str(exc).replace("`pos_label=`", "--pos-label").replace("`pos_label`", "--pos-label")) from None


def _show_progress(args) -> bool:
    """A progress bar when stderr is a terminal, unless --no-progress."""
    return not args.no_progress and sys.stderr.isatty()


def _compute(X, y, args, *, basis, seed, pos_label=None):
    """cud_interval with the options shared by every command."""
    resamples = DEFAULT_RESAMPLES if args.resamples is None else args.resamples
    if sys.stderr.isatty():
        print(f"{PROG}: computing the CUD interval (n = {len(y)}, B = {resamples}) ...", file=sys.stderr)
    return cud_interval(X, y, basis=basis, loss=args.loss, confidence_level=args.level, n_resamples=resamples,
                        alpha_n=args.alpha_n, rng=seed, pos_label=pos_label, n_jobs=1 if args.jobs is None else args.jobs,
                        scheduler=args.scheduler, exact_distribution=args.exact_distribution,
                        max_nodes=args.max_nodes, time_limit=args.time_limit,
                        replicate_time_limit=args.replicate_time_limit, progress=_show_progress(args))


# --------------------------------------------------------------------------- output

_SEARCH_ROWS = [  # (label, median key, total key, scale of the median) in SearchStats.summary()
    ("nodes", "nodes_median", "nodes_total", 1),
    ("solves", "solves_median", "solves_total", 1),
    ("pruned", None, "pruned_total", 1),
    ("realisability checks", None, "realisability_checks_total", 1),
    ("screened points", "screened_median", None, 1),
    ("milliseconds", "seconds_median", None, 1000),
]


def _format_report(result, context, extra=()) -> str:
    """The readable table: context rows, the interval, then the search statistics."""
    low, high = result.confidence_interval
    rows = [
        *context,
        ("labels", repr(result.label_encoding) if result.label_encoding is not None else "as given"),
        ("model", f"{result.details['basis']}, {result.details['loss']} loss, alpha_n = {result.alpha_n:g}"),
        ("coefficients", " ".join(f"{c:+.4f}" for c in result.coef)),
        ("level", f"{result.confidence_level:g} (B = {result.n_resamples} bootstrap resamples)"),
        ("interval", f"[{low:.4f}, {high:.4f}]" + ("  (conservative)" if result.conservative else "")),
        ("training error", f"{result.train_error:.4f}"),
        ("half-width", f"{result.half_width:.4f} (before clipping to [0, 1])"),
        *extra,
        ("time", f"{result.seconds:.2f} s"),
    ]
    summary = result.stats.summary()
    table = [("  " + name, "-" if med is None else f"{scale * summary[med]:,.4g}",
              "-" if tot is None else f"{summary[tot]:,}")
             for name, med, tot, scale in _SEARCH_ROWS]
    table.append(("  replicates bounded (one side of Q-hat)", "", f"{summary['bounded']} of {summary['replicates']}"))
    table.append(("  replicates cut short", "", f"{summary['not_exact']} of {summary['replicates']}"))
    table.append(("  solver fallbacks (nodes handed on)", "", f"{summary['fallbacks_total']}"))
    heading = (f"search ({summary['replicates']} replicates)", "median", "total")

    width = max(len(name) for name, *_ in [*rows, *table, heading]) + 2
    lines = ["CUD confidence interval for the generalization error (Laber & Murphy, 2008)", ""]
    lines += [f"  {name:<{width}}{value}" for name, value in rows]
    lines.append("")
    lines += [f"  {name:<{width}}{med:>10}{tot:>14}" for name, med, tot in [heading, *table]]
    if result.conservative:
        lines += ["", f"  {summary['not_exact']} replicate(s) hold only a certified upper bound "
                      f"({summary['not_exact'] - summary['solver_failures']} stopped by a budget, "
                      f"{summary['solver_failures']} by solver failures): the interval is valid but may be "
                      f"wider than the exact one."]
        if result.upper_gap > 0:
            lines.append(f"  The exact interval's upper end lies in [{min(1.0, high - result.upper_gap):.4f}, "
                         f"{high:.4f}]" + (" (the time budget ran out)." if summary["out_of_time"] else "."))
    return "\n".join(lines)


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return repr(obj)


# --------------------------------------------------------------------------- parser

def _jobs_spec(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs == 0 or jobs < -1:
        raise argparse.ArgumentTypeError(f"must be a positive integer or -1 (all cores); got {text!r}.")
    return jobs


def _positive(kind, name):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if not value > 0 or (kind is float and not math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"must be a positive {'integer' if kind is int else 'number'}; "
                                             f"got {text!r}.")
        return value
    return parse


def _basis_spec(text: str) -> str:
    try:
        make_basis(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _loss_spec(text: str) -> str:
    try:
        return get_loss(text).name
    except ValueError as exc:
        message = str(exc).replace("`loss`: ", "").replace("`loss` must be", "must be").replace(" or a Loss instance", "")
        raise argparse.ArgumentTypeError(message) from None


def _coverage(args):
    """``cudbound coverage``: validate the whole configuration (every error at once, before any task
    or the store), then run or resume the study; ``--check`` stops after the validation."""
    from .coverage import ResultStore, load_config, run_study
    from .coverage.runner import RunInterrupted

    data_home = args.data_home or os.environ.get("CUDBOUND_DATA") or None
    config = load_config(args.config, data_home=data_home)
    if args.max_tasks is not None and args.max_tasks < 0:
        raise CLIError(f"--max-tasks must be a non-negative integer; got {args.max_tasks}.")
    if args.chunk_size < 1:
        raise CLIError(f"--chunk-size must be a positive integer; got {args.chunk_size}.")
    if args.check:
        return _coverage_check(args, config)
    if args.store is None:
        raise CLIError("--store FILE.sqlite is required to run a study (only --check runs without it).")
    try:
        report = run_study(config, args.store, workers=args.workers, scheduler=args.scheduler,
                           data_home=args.data_home, progress=_show_progress(args), max_tasks=args.max_tasks,
                           chunks=args.chunks, chunk_size=args.chunk_size)
        interrupted = False
    except RunInterrupted as stop:     # Ctrl-C: the workers are stopped, the finished tasks kept
        report, interrupted = stop.report, True
        print(f"{PROG}: interrupted: the {report.already + report.computed} finished tasks are kept in "
              f"{args.store} ({report.computed} computed now, {report.remaining} remaining); to resume, run the "
              f"same command again.", file=sys.stderr)
    with ResultStore(args.store) as store:
        summary = [r for r in store.summary() if r["method"] in config.methods]
    record = envelope("coverage", data={"source": str(args.config), "n": None},
                      seed=int(config.seed),
                      results=[_coverage_item(r) for r in summary],
                      details={"study": config.name, "store": str(args.store), "tasks": report.total,
                               "already": report.already, "computed": report.computed,
                               "remaining": report.remaining,
                               "failed": [{"task": [t.dataset, t.n, t.rep], "message": m} for t, m in report.failed],
                               "chunks_written": [str(p) for p in report.chunks_written]})
    lines = [f"study {config.name}: {report.total} tasks, {report.already} already stored, "
             f"{report.computed} computed now, {len(report.failed)} failed, {report.remaining} remaining",
             f"store: {args.store}"]
    if report.others or report.duplicates:     # runs sharing the store (cudbound.coverage.leases)
        record["details"].update(by_other_runs=report.others, duplicates=report.duplicates)
        lines.append(f"other runs on this store: {report.others} task(s) stored by them meanwhile, "
                     f"{report.duplicates} computed here but stored by them first")
    if args.chunks is not None:
        lines.append(f"chunks: {args.chunks} ({len(report.chunks_written)} written now)")
    lines.append("")
    lines += _coverage_table(summary, config.methods)
    for task, message in report.failed:
        lines.append(f"failed: {task}: {message.splitlines()[0]}")
    if interrupted:
        record["details"]["interrupted"] = True
        return record, "\n".join(lines), EXIT_INTERRUPTED
    return record, "\n".join(lines), (1 if report.failed else 0)


def _coverage_item(cell: dict) -> dict:
    """One (data set, n, method) cell of a study as a JSON result: the coverage with its exact
    (Clopper-Pearson) 95% interval over the repetitions."""
    from .coverage.store import coverage_interval
    low, high = coverage_interval(cell["covered"], cell["reps"])
    extra = {k: v for k, v in cell.items() if k not in ("method", "coverage")}
    return result_item(cell["method"], "coverage", cell["coverage"], low, high, 0.95, **extra)


def _coverage_check(args, config):
    """``cudbound coverage --check``: the configuration is valid (load_config raised otherwise); with
    an existing --store, whether it would accept the configuration. Creates and writes nothing."""
    from .coverage import ResultStore

    tasks = config.tasks()
    sizes = sorted({n for d in config.datasets for n in config.sizes_of(d)})
    reps = sorted({config.repetitions_for(n) for n in sizes})
    details = {"check": True, "ok": True, "study": config.name, "tasks": len(tasks),
               "datasets": [d.label for d in config.datasets], "sizes": sizes, "methods": list(config.methods)}
    lines = [f"configuration OK: {len(tasks)} tasks ({len(config.datasets)} data set entries, sizes "
             f"{', '.join(map(str, sizes))}, {'/'.join(map(str, reps))} repetitions), {len(config.methods)} methods "
             f"({', '.join(config.methods)}); {args.config}"]
    if args.store is not None:
        if Path(args.store).exists():
            with ResultStore(args.store, readonly=True) as store:
                store.check_protocol(config)
                done = len(store.finished() & set(tasks))
            details.update(store=str(args.store), stored=done)
            lines.append(f"store {args.store}: same protocol, {done} of the {len(tasks)} tasks already stored")
        else:
            details.update(store=str(args.store), stored=0)
            lines.append(f"store {args.store}: does not exist yet (a run creates it)")
    record = envelope("coverage", data={"source": str(args.config), "n": None}, seed=int(config.seed), results=[],
                      details=details)
    return record, "\n".join(lines)


def _coverage_table(summary, methods) -> list[str]:
    """Coverage (mean width) per data set and n, one column per method."""
    cells = {(r["dataset"], r["n"], r["method"]): r for r in summary}
    keys = sorted({(r["dataset"], r["n"]) for r in summary})
    if not keys:
        return ["(no finished tasks yet)"]
    head = f"{'data set':<14} {'n':>4} {'reps':>5}  " + "  ".join(f"{m:>13}" for m in methods)
    out = ["coverage (mean width)", head, "-" * len(head)]
    for d, n in keys:
        reps = max(cells[(d, n, m)]["reps"] for m in methods if (d, n, m) in cells)
        row = [f"{cells[(d, n, m)]['coverage']:.3f} ({cells[(d, n, m)]['mean_width']:.3f})"
               if (d, n, m) in cells else "-" for m in methods]
        out.append(f"{d:<14} {n:>4} {reps:>5}  " + "  ".join(f"{c:>13}" for c in row))
    return out


def _store_check(args):
    """``cudbound store check FILE``: :func:`cudbound.coverage.check.check_store`; status 1 when a
    check fails (a file that is not a store is a StoreError: status 2)."""
    from .coverage.check import check_store

    result = check_store(args.file)
    record = envelope("store check", data={"source": str(args.file), "n": None}, results=[],
                      details=result.to_dict())
    return record, result.report(), (0 if result.ok else 1)


def _store_export(args):
    """``cudbound store export FILE DIR``: :func:`cudbound.coverage.chunks.export_store`."""
    from .coverage import load_config
    from .coverage.chunks import export_store

    if args.chunk_size < 1:
        raise CLIError(f"--chunk-size must be a positive integer; got {args.chunk_size}.")
    config = load_config(args.config) if args.config else None
    out = export_store(args.file, args.dir, config, args.chunk_size)
    details = {"store": str(args.file), "directory": str(args.dir), "chunk_size": args.chunk_size,
               "written": [str(p) for p in out.written], "existing": [str(p) for p in out.existing],
               "incomplete": [{"dataset": d, "n": n, "reps": [a, b], "stored": k} for d, n, a, b, k in out.incomplete],
               "outside_configuration": out.outside}
    record = envelope("store export", data={"source": str(args.file), "n": None}, results=[], details=details)
    lines = [f"exported {args.file} to {args.dir}: {len(out.written)} chunk file(s) written, "
             f"{len(out.existing)} already there (left as they are)"]
    lines += [f"  wrote {p}" for p in out.written]
    if out.incomplete:
        lines.append(f"{len(out.incomplete)} incomplete block(s) not exported (a chunk holds every repetition "
                     f"of its block; finish the study to export them):")
        lines += [f"  {d} n = {n} reps {a}-{b}: {k} of {b - a + 1} stored" for d, n, a, b, k in out.incomplete]
    if out.outside:
        lines.append(f"{out.outside} stored task(s) are not tasks of the configuration and were not exported; "
                     f"pass the study's current configuration with --config.")
    return record, "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``cudbound`` command."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--level", type=float, default=0.95, metavar="LEVEL",
                        help="confidence level, strictly between 0 and 1 (default 0.95)")
    common.add_argument("--resamples", type=int, default=None, metavar="B",
                        help=f"number of bootstrap resamples B (default {DEFAULT_RESAMPLES} for CUD; with --methods, "
                             f"given to every method that resamples: cud, bs1, bs2)")
    common.add_argument("--alpha-n", type=float, default=None, metavar="FLOAT",
                        help="scale alpha_n of the neighbourhood (default n, the sample size)")
    common.add_argument("--loss", type=_loss_spec, default="squared", metavar="LOSS",
                        help="surrogate loss of the fit: squared (default), hinge, logistic, exponential, "
                             "ridge[:LAM] (squared plus LAM |beta|^2, intercept unpenalised, default LAM 0.1), "
                             "or hinge_ridge, logistic_ridge, exponential_ridge [:LAM] (docs/losses.md)")
    common.add_argument("--json", action="store_true", help="print the result as JSON")
    common.add_argument("--plot", default=None, metavar="FILE.png",
                        help="also draw the result to this image file: the replicate distribution behind a CUD "
                             "interval, or a forest plot of several methods (needs matplotlib)")
    common.add_argument("--jobs", type=_jobs_spec, default=None, metavar="N",
                        help="worker processes for the bootstrap replicates (default 1; -1 = all cores); "
                             "the result does not depend on it")
    common.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="run the replicates on this Dask scheduler instead (needs cudbound[cluster])")
    common.add_argument("--exact-distribution", action="store_true",
                        help="solve every replicate to the end (slower; same interval), so the JSON output's "
                             "bootstrap values are all exact")
    common.add_argument("--max-nodes", type=_positive(int, "--max-nodes"), default=None, metavar="N",
                        help="node budget of each replicate's search; a replicate cut short keeps a certified "
                             "upper bound and the interval is flagged conservative (default: none)")
    common.add_argument("--time-limit", type=_positive(float, "--time-limit"), default=None, metavar="SECONDS",
                        help="time budget of the whole CUD interval: spent on the replicates that decide it; when "
                             "it runs out, a certified (conservative) interval is returned at once, with how far "
                             "its upper end could still move (default: none)")
    common.add_argument("--replicate-time-limit", type=_positive(float, "--replicate-time-limit"), default=None,
                        metavar="SECONDS", help="time budget of each replicate's search, as --max-nodes (default: none)")
    common.add_argument("--no-progress", action="store_true",
                        help="no progress bar (shown by default when stderr is a terminal)")

    parser = _Parser(
        prog=PROG,
        description="Small-sample confidence intervals for a classifier's generalization error: "
                    "the CUD bound of Laber & Murphy (UAI 2008), computed exactly by branch and bound.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", parents=[common], help="CUD interval on a simulated data set",
                          description="Compute the CUD interval on simulated data: two Gaussian features, "
                                      "a linear Bayes boundary and 20%% label noise (Bayes error 0.2).")
    demo.add_argument("--n", type=int, default=50, help="number of observations (default 50)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the data and the bootstrap (default 0)")
    demo.set_defaults(handler=_demo)

    interval = sub.add_parser("interval", parents=[common], help="CUD interval for a CSV file",
                              description="Compute the CUD interval for a CSV file with a header row. "
                                          "Every column except the label column is a numeric feature.")
    interval.add_argument("--data", required=True, metavar="FILE.csv", help="the CSV file")
    interval.add_argument("--label", required=True, metavar="COLUMN", help="name of the label column")
    interval.add_argument("--pos-label", default=None, metavar="VALUE",
                          help="label value of the positive class (needed unless labels are -1/1, 0/1, true/false, yes/no)")
    interval.add_argument("--basis", type=_basis_spec, default="linear", metavar="linear|poly:D|pca:K|zpca:K|poly:D(zpca:K)",
                          help="basis of the linear classifier (default linear: intercept plus features)")
    interval.add_argument("--seed", type=int, default=None,
                          help="seed of the bootstrap (default: drawn at random and reported)")
    interval.add_argument("--methods", type=_methods_spec, default=("cud",), metavar="M1,M2,...",
                          help="comma-separated interval methods: " + ", ".join(method_names())
                               + ", or 'all' (default cud); every option goes to each chosen method that "
                                 "takes it, and an option none of them takes is an error")
    interval.add_argument("--folds", type=_positive(int, "--folds"), default=None, metavar="K",
                          help="folds of the methods that cross-validate (yang, wald_cv, nested_cv; each method's "
                               "default otherwise)")
    interval.set_defaults(handler=_interval)

    cov = sub.add_parser("coverage", help="run (or resume) a coverage study into an SQLite store",
                         description="Run a coverage study (Laber & Murphy 2008, section 5) described by a TOML "
                                     "file. Every finished task is saved at once; rerunning the same command "
                                     "resumes where it stopped. Prints coverage and mean width per data set, "
                                     "n and method.")
    cov.add_argument("--config", required=True, metavar="FILE.toml", help="the study configuration")
    cov.add_argument("--store", default=None, metavar="FILE.sqlite",
                     help="the result store (created or resumed); required unless --check")
    cov.add_argument("--check", action="store_true",
                     help="only validate the configuration (every error at once) and, if --store exists, that "
                          "the store accepts it; compute and write nothing")
    cov.add_argument("--workers", type=int, default=None, metavar="N",
                     help="local worker processes (default: all cores; 1 = in this process)")
    cov.add_argument("--scheduler", default=None, metavar="ADDRESS",
                     help="run the tasks on a Dask distributed scheduler, e.g. tcp://10.0.0.5:8786")
    cov.add_argument("--data-home", default=None, metavar="DIR",
                     help="directory of the real data files (default: $CUDBOUND_DATA)")
    cov.add_argument("--max-tasks", type=int, default=None, metavar="N",
                     help="compute at most N unfinished tasks, then stop")
    cov.add_argument("--chunks", default=None, metavar="DIR",
                     help="directory of immutable result chunks: loaded first (those tasks are done), and each "
                          "block of repetitions written there when it completes")
    cov.add_argument("--chunk-size", type=int, default=50, metavar="N", help="repetitions per chunk (default 50)")
    cov.add_argument("--no-progress", action="store_true", help="no progress bar")
    cov.add_argument("--json", action="store_true", help="print the summary as JSON")
    cov.set_defaults(handler=_coverage)

    store = sub.add_parser("store", help="check a coverage store, or export it as result chunks",
                           description="Tools for a coverage study's SQLite store: `check` verifies it (SQLite's "
                                       "integrity and foreign-key checks, and the toolkit's: a result row for "
                                       "every task and method, numeric sanity); `export` writes its complete "
                                       "blocks as the chunk files --chunks would. Both only read the store.")
    store_sub = store.add_subparsers(dest="store_command", required=True, metavar="ACTION")
    check = store_sub.add_parser("check", help="verify a store; exit 0 if sound, 1 if problems are found",
                                 description="Verify a coverage store: exit status 0 if every check passes, 1 if "
                                             "problems are found (listed), 2 if the file is not a store.")
    check.add_argument("file", metavar="FILE.sqlite", help="the result store")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(handler=_store_check)
    export = store_sub.add_parser("export", help="write a store's complete blocks as result chunks",
                                  description="Write the gzipped CSV chunk of every complete block of repetitions "
                                              "of the store into DIR, the files `cudbound coverage --chunks DIR` "
                                              "writes. Chunks already in DIR are not rewritten.")
    export.add_argument("file", metavar="FILE.sqlite", help="the result store")
    export.add_argument("dir", metavar="DIR", help="the chunk directory (created if absent)")
    export.add_argument("--config", default=None, metavar="FILE.toml",
                        help="the study's configuration (default: the one kept in the store, with the "
                             "repetitions it was created with)")
    export.add_argument("--chunk-size", type=int, default=50, metavar="N", help="repetitions per chunk (default 50)")
    export.add_argument("--json", action="store_true", help="print the report as JSON")
    export.set_defaults(handler=_store_export)

    auc = sub.add_parser("auc", help="cross-validated AUC of kernel RLS for a CSV file: pooled, averaged or "
                                     "leave-pair-out",
                         description="The AUC of regularized least squares (kernel ridge on -1/+1 labels) under "
                                     "cross-validation (Suominen, Pahikkala & Salakoski 2008): per fold then "
                                     "averaged, pooled over folds, or leave-pair-out (exact, closed form).")
    auc.add_argument("--data", required=True, metavar="FILE.csv", help="the CSV file")
    auc.add_argument("--label", required=True, metavar="COLUMN", help="name of the label column")
    auc.add_argument("--pos-label", default=None, metavar="VALUE", help="label value of the positive class")
    auc.add_argument("--method", choices=("lpo", "pooled", "averaged"), default="lpo",
                     help="leave-pair-out (default), pooled or averaged cross-validation")
    auc.add_argument("--folds", type=_positive(int, "--folds"), default=5, metavar="K",
                     help="folds of pooled/averaged cross-validation (default 5, stratified)")
    auc.add_argument("--regparam", type=_positive(float, "--regparam"), default=1.0, metavar="LAMBDA",
                     help="regularization parameter of the RLS (default 1)")
    auc.add_argument("--kernel", choices=("linear", "gaussian"), default="linear", help="kernel (default linear)")
    auc.add_argument("--gamma", type=_positive(float, "--gamma"), default=1.0, help="Gaussian kernel width (default 1)")
    auc.add_argument("--seed", type=int, default=0, help="seed of the fold assignment (default 0)")
    auc.add_argument("--json", action="store_true", help="print the result as JSON")
    auc.set_defaults(handler=_auc)

    xa = sub.add_parser("xi-alpha", help="Joachims' xi-alpha estimates (error, recall, precision, F1) of a "
                                         "soft-margin SVM for a CSV file",
                        description="Train a soft-margin SVM once and count the points with rho alpha_i R^2 + "
                                    "xi_i >= 1 (Joachims 2000): estimates of the error, recall, precision and F1 "
                                    "that are pessimistic with rho = 2 and the theorem's R^2. --loo adds the exact "
                                    "leave-one-out error of the same SVM.")
    xa.add_argument("--data", required=True, metavar="FILE.csv", help="the CSV file")
    xa.add_argument("--label", required=True, metavar="COLUMN", help="name of the label column")
    xa.add_argument("--pos-label", default=None, metavar="VALUE", help="label value of the positive class")
    xa.add_argument("--C", dest="C", type=_positive(float, "--C"), default=1.0, help="SVM cost parameter (default 1)")
    xa.add_argument("--kernel", choices=("linear", "rbf", "poly"), default="linear", help="kernel (default linear)")
    xa.add_argument("--gamma", type=_positive(float, "--gamma"), default=None,
                    help="rbf/poly gamma (default: 1 / (d Var(X)), scikit-learn's 'scale' on centred features)")
    xa.add_argument("--degree", type=_positive(int, "--degree"), default=3, help="poly degree (default 3)")
    xa.add_argument("--coef0", type=float, default=0.0, help="poly coef0 (default 0)")
    xa.add_argument("--rho", type=float, default=None,
                    help="rho (default 2 with the theorem's radius, 1 with --radius svmlight)")
    xa.add_argument("--radius", default="theorem", metavar="theorem|svmlight|R2",
                    help="R^2: 'theorem' (default, pessimistic), 'svmlight' (as SVM-light V6.02) or a number")
    xa.add_argument("--loo", action="store_true", help="also compute the exact leave-one-out error")
    xa.add_argument("--no-progress", action="store_true", help="no progress bar for --loo")
    xa.add_argument("--json", action="store_true", help="print the result as JSON")
    xa.set_defaults(handler=_xi_alpha)
    return parser


def _radius_arg(text):
    if text in ("theorem", "svmlight"):
        return text
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"--radius must be 'theorem', 'svmlight' or a number; got {text!r}.") from None


def _xi_alpha(args) -> tuple[dict, str]:
    """``cudbound xi-alpha``: cudbound.svm.xi_alpha, and with --loo cudbound.svm.loo_error."""
    from .svm import loo_error, xi_alpha

    X, y, features = read_csv(args.data, args.label)
    _check_labels(y, args.label, args.pos_label)
    labels, encoding = encode_labels(y, pos_label=args.pos_label, name=args.label)
    kw = dict(C=args.C, kernel=args.kernel, gamma=args.gamma, degree=args.degree, coef0=args.coef0)
    est = xi_alpha(X, labels, rho=args.rho, radius=_radius_arg(args.radius), **kw)
    results = [result_item("xi_alpha", "error", est.error, n_errors=est.n_errors),
               result_item("xi_alpha", "recall", est.recall, n_errors=est.n_pos_errors),
               result_item("xi_alpha", "precision", est.precision, n_errors=est.n_neg_errors),
               result_item("xi_alpha", "f1", est.f1)]
    details = {"n_errors": est.n_errors, "n_pos_errors": est.n_pos_errors, "n_neg_errors": est.n_neg_errors,
               "n_pos": est.n_pos, "radius_sq": est.radius_sq, "rho": est.rho, "stable": est.stable,
               "n_support": int(np.sum(est.alpha > 0)), "svm": {**kw, "radius": args.radius}}
    lines = [f"xi-alpha estimates (Joachims 2000), rho = {est.rho:g}, R^2 = {est.radius_sq:.6g} ({args.radius}):",
             f"  error     <= {est.error:.4f}  (d = {est.n_errors} of n = {est.n})",
             f"  recall    >= {est.recall:.4f}  (d+ = {est.n_pos_errors} of n+ = {est.n_pos})",
             f"  precision >= {est.precision:.4f}  (d- = {est.n_neg_errors})",
             f"  F1        >= {est.f1:.4f}"]
    if not est.stable:
        lines.append("  warning: no free support vector; the bound of Lemma 1 does not apply")
    if args.loo:
        loo = loo_error(X, labels, progress=_show_progress(args), **kw)
        results += [result_item("loo", "error", loo.error, n_errors=loo.n_errors, n_refits=loo.n_refits),
                    result_item("loo", "recall", loo.recall), result_item("loo", "precision", loo.precision),
                    result_item("loo", "f1", loo.f1)]
        details["loo"] = {"n_errors": loo.n_errors, "n_refits": loo.n_refits}
        lines.append(f"exact leave-one-out: error {loo.error:.4f} ({loo.n_errors} errors, {loo.n_refits} refits), "
                     f"recall {loo.recall:.4f}, precision {loo.precision:.4f}, F1 {loo.f1:.4f}")
    lines.append(f"  SVM     C = {args.C:g}, kernel {args.kernel}; data {args.data} (n = {X.shape[0]}, "
                 f"{len(features)} features), labels {encoding!r}")
    record = envelope("xi-alpha", data=_csv_data(args, X, features, encoding), results=results, details=details)
    return record, "\n".join(lines)


def _auc(args) -> tuple[dict, str]:
    """``cudbound auc``: one of the three cross-validated AUCs of cudbound.auc."""
    from .auc import KernelRLS, cv_auc, lpo_auc

    X, y, features = read_csv(args.data, args.label)
    _check_labels(y, args.label, args.pos_label)
    labels, encoding = encode_labels(y, pos_label=args.pos_label, name=args.label)
    model = KernelRLS(regparam=args.regparam, kernel=args.kernel, gamma=args.gamma)
    seed = None
    if args.method == "lpo":
        res = lpo_auc(model, X, labels)
        extra = {"n_pairs": res.n_pairs, "method_detail": res.method}
        how = f"leave-pair-out over {res.n_pairs} positive-negative pairs ({res.method})"
    else:
        res = cv_auc(model, X, labels, cv=args.folds, pooling=args.method, rng=args.seed)
        extra = {"folds": args.folds, "fold_auc": [None if np.isnan(v) else float(v) for v in res.fold_auc],
                 "n_skipped_folds": res.n_skipped_folds}
        seed = args.seed
        how = f"{args.method} over {args.folds} stratified folds (seed {args.seed})" + (
            f", {res.n_skipped_folds} one-class folds skipped" if res.n_skipped_folds else "")
    record = envelope("auc", data=_csv_data(args, X, features, encoding), seed=seed,
                      results=[result_item(args.method, "auc", res.auc, **extra)], details={"model": repr(model)})
    report = "\n".join([f"AUC {res.auc:.4f}: {how}",
                        f"  model   {model!r} (kernel ridge on -1/+1 labels)",
                        f"  data    {args.data} (n = {X.shape[0]}, {len(features)} features), labels {encoding!r}"])
    return record, report


def main(argv=None) -> int:
    """Run the ``cudbound`` command.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status: 0 on success, 1 when a coverage task failed or the system did (a worker process
        killed, a full disk), 2 for bad arguments or bad input.
    """
    parser = build_parser()
    try:
        args, unknown = parser.parse_known_args(argv)
    except SystemExit as exc:  # --help, --version, or an argparse error (already printed)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if unknown:     # named with the subcommand that does not know them
        prog = " ".join([PROG, args.command] + ([args.store_command] if getattr(args, "store_command", None) else []))
        print(f"{prog}: error: unrecognized arguments: {' '.join(unknown)} (see '{prog} --help')", file=sys.stderr)
        return EXIT_USAGE
    seen = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")   # each distinct warning once, as Python would show it
            try:
                record, report, *status = args.handler(args)
            finally:
                seen = _warning_lines(caught)
    except (ValueError, FileNotFoundError) as exc:
        _print_warnings(seen)
        print(f"{PROG}: error: {in_flags(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except (OSError, BrokenExecutor) as exc:  # the system, not the input: disk full, a worker killed, ...
        _print_warnings(seen)
        what = "a worker process died" if isinstance(exc, BrokenExecutor) else type(exc).__name__
        print(f"{PROG}: error: {what}: {' '.join(str(exc).split()) or 'no message'}"
              f"{'; a coverage run resumes where it stopped when rerun' if args.command == 'coverage' else ''}",
              file=sys.stderr)
        return EXIT_FAILURE
    _print_warnings(seen)
    if args.json:
        record["warnings"] = [line.removeprefix(f"{PROG}: warning: ") for line in seen]
    try:
        print(json.dumps(record, indent=2, default=_json_default) if args.json else report)
        sys.stdout.flush()
    except BrokenPipeError:     # `cudbound demo | head -1`: the reader has gone; end quietly
        return _broken_pipe()
    return status[0] if status else 0


def _broken_pipe() -> int:
    """Point stdout at /dev/null (so the interpreter's final flush cannot fail again) and
    return 141 (128 + SIGPIPE), what a shell reports for a writer killed by the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141


def _warning_lines(caught) -> list:
    """One line per distinct warning: its category and message, never a file path or code line."""
    lines = []
    for w in caught:
        text = in_flags(" ".join(str(w.message).split()))
        line = f"{PROG}: warning: {text} ({w.category.__name__})"
        if line not in lines:
            lines.append(line)
    return lines


def _print_warnings(lines) -> None:
    for line in lines:
        print(line, file=sys.stderr)
