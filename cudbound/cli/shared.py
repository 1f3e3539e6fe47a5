"""What the commands share: the program's name, exit statuses, errors, the library's
parameter names in flags (``in_flags``), the parser class, the argument types, and the flags
several commands take, each defined once (``shared_flags``)."""
from __future__ import annotations

import argparse
import math
import re
import sys
import warnings

from .._validation import check_n_jobs
from ..basis import make_basis
from ..losses import get_loss
from ..registry import select_methods
from .model_spec import SPEC_HELP, model_arg

__all__ = ["PROG", "EXIT_USAGE", "EXIT_FAILURE", "EXIT_INTERRUPTED", "DEFAULT_RESAMPLES", "DEFAULT_SEED", "CLIError",
           "in_flags", "RenamedFlag", "add_flag", "shared_flags", "add_execution_flags"]

PROG = "cudbound"
EXIT_USAGE = 2
"""Exit status for bad input, as argparse uses for bad arguments."""
EXIT_FAILURE = 1
"""Exit status when the computation failed (a failed study task, a dead worker, a full disk)."""

EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), as a shell reports it."""


DEFAULT_RESAMPLES = 500
"""B of the CUD interval when ``--resamples`` is not given."""

DEFAULT_SEED = 0
"""``--seed`` of every command that draws at random, when not given: the same command gives the
same numbers (the JSON output reports the seed)."""


class CLIError(ValueError):
    """Bad input found by the command line itself (file, columns, values)."""


class InterruptedWithOutput(KeyboardInterrupt):
    """Ctrl-C after part of a command's work finished: ``record`` (the JSON record) and ``report`` (the
    text) of what finished, printed before the command ends as interrupted."""

    def __init__(self, record: dict, report: str) -> None:
        super().__init__("interrupted")
        self.record, self.report = record, report


# the library's parameter names as the command line spells them (messages speak in flags)
_FLAGS = {"confidence_level": "--confidence-level", "n_resamples": "--resamples", "alpha_n": "--alpha-n", "n_jobs": "--jobs",
          "max_nodes": "--max-nodes", "time_limit": "--time-limit", "replicate_time_limit": "--replicate-time-limit",
          "loss": "--loss", "basis": "--basis", "pos_label": "--pos-label", "cv": "--cv", "rng": "--seed",
          "exact_distribution": "--exact-distribution", "scheduler": "--scheduler", "methods": "--methods",
          "alternative": "--alternative"}


_NAMES = "|".join(sorted(map(re.escape, _FLAGS), key=len, reverse=True))
_TICKED_VALUE = re.compile(rf"`({_NAMES})`\s*=\s*")
_TICKED = re.compile(rf"`({_NAMES})`")
_ASSIGNED = re.compile(rf"(?<![,(])\b({_NAMES})=(['\"]?)([^\s'\",;)]+)\2")  # not in a spec or a call


def in_flags(message: str) -> str:
    """A library message in command-line words: `` `n_resamples` `` -> ``--resamples``,
    ``confidence_level=0.95`` -> ``--confidence-level 0.95``, ``loss='logistic_ridge:0.1'`` -> ``--loss logistic_ridge:0.1``;
    not a name=value inside a model SPEC or a call (``hinge,basis=poly:2``, ``LinearSVC(loss='hinge')``)."""
    message = _TICKED_VALUE.sub(lambda m: f"{_FLAGS[m.group(1)]} ", message)
    message = _TICKED.sub(lambda m: _FLAGS[m.group(1)], message)
    return _ASSIGNED.sub(lambda m: f"{_FLAGS[m.group(1)]} {m.group(3)}", message)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors: the message and where to read more."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {in_flags(message)} (see '{self.prog} --help')\n")


class RenamedFlag(argparse.Action):
    """A flag's old name, kept for one release: it warns (a DeprecationWarning naming the new flag,
    printed as one warning line) and stores its value where the new flag does."""

    def __init__(self, option_strings, dest, *, new: str, **options):
        super().__init__(option_strings, dest, help=f"deprecated, removed in the next release: use {new}", **options)
        self.new = new

    def __call__(self, parser, namespace, values, option_string=None):
        warnings.warn(f"{option_string} is deprecated and will be removed in the next release; use {self.new} instead.",
                      DeprecationWarning, stacklevel=2)
        setattr(namespace, self.dest, values)


def add_flag(parser, new: str, *old: str, **options) -> argparse.Action:
    """The flag ``new`` (``options`` as for ``add_argument``, its default included, so that
    ``--help`` shows it) and its ``old`` names (:class:`RenamedFlag`): one of them at most."""
    group = parser.add_mutually_exclusive_group()
    action = group.add_argument(new, **options)
    for name in old:
        group.add_argument(name, action=RenamedFlag, new=new, dest=action.dest, type=action.type, metavar=action.metavar,
                           default=argparse.SUPPRESS)
    return action


# --------------------------------------------------------------------------- shared flags

def _data_flags(parser) -> None:
    parser.add_argument("--data", required=True, metavar="FILE.csv", help="the CSV file (a header row; every column "
                                                                          "but the label column is a numeric feature)")
    parser.add_argument("--label", required=True, metavar="COLUMN", help="name of the label column")
    parser.add_argument("--pos-label", default=None, metavar="VALUE",
                        help="label value of the positive class (needed unless the labels are -1/1, 0/1, true/false "
                             "or yes/no)")
    parser.add_argument("--keep-index-column", action="store_true",
                        help="keep a first column without a name in the header as a feature, named 'index' (by "
                             "default it is read as the row index pandas' to_csv writes, and dropped with a note)")


def _seed_flag(parser) -> None:
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, metavar="INT",
                        help=f"seed of every random draw of the command (default {DEFAULT_SEED}: the same command "
                             f"gives the same numbers)")


def _level_flag(parser) -> None:
    add_flag(parser, "--confidence-level", "--level", type=float, default=0.95, metavar="LEVEL",
             help="confidence level of the intervals, strictly between 0 and 1 (default %(default)s)")


def _json_flag(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print the result as JSON (docs/json.md)")


def _progress_flag(parser) -> None:
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (shown by default when stderr is a terminal)")


def _cud_flags(parser) -> None:
    """The CUD interval's own flags (``demo``, ``interval``): its statistics, then its engine."""
    parser.add_argument("--resamples", type=int, default=None, metavar="B",
                        help=f"number of bootstrap resamples B (default {DEFAULT_RESAMPLES} for CUD; with --methods, "
                             f"given to every method that resamples: cud, bs1, bs2)")
    parser.add_argument("--alpha-n", type=float, default=None, metavar="FLOAT",
                        help="scale alpha_n of the neighbourhood (default n, the sample size)")
    parser.add_argument("--loss", type=_loss_spec, default=None, metavar="LOSS",
                        help="surrogate loss of the fit: squared (default), hinge, logistic, exponential, "
                             "ridge[:LAM] (squared plus LAM |beta|^2, intercept unpenalised, default LAM 0.1), "
                             "or hinge_ridge, logistic_ridge, exponential_ridge [:LAM] (docs/losses.md)")
    parser.add_argument("--plot", default=None, metavar="FILE.png",
                        help="also draw the result to this image file: the replicate distribution behind a CUD "
                             "interval, or a forest plot of several methods (needs matplotlib)")
    add_execution_flags(parser, "the bootstrap replicates", default=None, default_text="1")
    parser.add_argument("--exact-distribution", action="store_true",
                        help="solve every replicate to the end (slower; same interval), so the JSON output's "
                             "bootstrap values are all exact")
    parser.add_argument("--max-nodes", type=_positive(int, "--max-nodes"), default=None, metavar="N",
                        help="node budget of each replicate's search; a replicate cut short keeps a certified "
                             "upper bound and the interval is flagged conservative (default: none)")
    parser.add_argument("--time-limit", type=_positive(float, "--time-limit"), default=None, metavar="SECONDS",
                        help="time budget of the whole run (default: none). CUD spends it on the replicates that "
                             "decide the interval; when it runs out, a certified (conservative) interval is "
                             "returned at once, with how far its upper end could still move. With --methods, every "
                             "method honours it: a resampling method stops its resamples and says how many it "
                             "used; a method not started when it runs out is skipped and listed as such")
    parser.add_argument("--replicate-time-limit", type=_positive(float, "--replicate-time-limit"), default=None,
                        metavar="SECONDS", help="time budget of each replicate's search, as --max-nodes (default: none)")


def _model_flag(parser) -> None:
    parser.add_argument("--model", type=model_arg, default=None, metavar="SPEC",
                        help=f"the classifier, in place of the command's own model flags (interval: --loss, "
                             f"--basis; auc: kernel RLS's --regparam, --kernel, --gamma): {SPEC_HELP}")


_SHARED_FLAGS = {"data": ("data", _data_flags), "cud": ("CUD interval", _cud_flags), "model": (None, _model_flag),
                 "confidence-level": (None, _level_flag), "seed": ("common options", _seed_flag),
                 "json": ("common options", _json_flag), "progress": ("common options", _progress_flag)}
"""The flags several commands share, by group: (the section of ``--help`` they are listed in, None for
the command's own options; what adds them). Each is defined here once (:func:`shared_flags`)."""


def shared_flags(*groups: str) -> argparse.ArgumentParser:
    """The one parent parser of a command's shared flags: the named groups of :data:`_SHARED_FLAGS`
    (``data``: --data, --label, --pos-label, --keep-index-column; ``cud``: the CUD interval's flags; ``model``:
    --model, a model SPEC (:mod:`cudbound.cli.model_spec`); ``confidence-level``;
    ``seed``: --seed, default :data:`DEFAULT_SEED`; ``json``; ``progress``: --no-progress), in the
    order given. ``--help`` lists them after the command's own options, in sections of their own. A new
    parser each time: argparse shares a parent's actions with its children."""
    parent = argparse.ArgumentParser(add_help=False)
    sections: dict = {}
    for group in groups:
        title, add = _SHARED_FLAGS[group]
        if title is not None and title not in sections:
            sections[title] = parent.add_argument_group(title)
        add(parent if title is None else sections[title])
    return parent


def add_execution_flags(parser, what: str, *, default, default_text: str) -> None:
    """``--jobs`` and ``--scheduler``: where ``what`` runs. ``--jobs`` counts worker processes as
    ``n_jobs`` does everywhere (:func:`cudbound._validation.check_n_jobs`)."""
    parser.add_argument("--jobs", type=_jobs_spec, default=default, metavar="N",
                        help=f"worker processes for {what}: N, -1 every core, -k every core but k - 1 (default "
                             f"{default_text}); the result does not depend on it")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help=f"run {what} on this Dask scheduler instead, e.g. tcp://10.0.0.5:8786 (needs "
                             f"cudbound[cluster])")


def _show_progress(args) -> bool:
    """A progress bar when stderr is a terminal, unless --no-progress."""
    return not args.no_progress and sys.stderr.isatty()


# --------------------------------------------------------------------------- argument types

def _jobs_spec(text: str) -> int:
    """``--jobs``: a worker count as ``n_jobs`` takes it (a positive integer, -1 or -k)."""
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs == 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, -1 (every core) or -k (every core but k - 1); "
                                         f"got {text!r}.")
    try:
        check_n_jobs(jobs)
    except ValueError as exc:   # -k beyond the cores
        raise argparse.ArgumentTypeError(str(exc).replace("`n_jobs` = ", "")) from None
    return jobs


def _positive(kind, name):
    """An argument type for the option ``name``: a positive (and finite) ``kind``, int or float."""
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
    """``--basis``: a basis specification that :func:`cudbound.basis.make_basis` accepts."""
    try:
        make_basis(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _loss_spec(text: str) -> str:
    """``--loss``: a loss specification, as the name :func:`cudbound.losses.get_loss` gives it."""
    try:
        return get_loss(text).name
    except ValueError as exc:
        message = str(exc).replace("`loss`: ", "").replace("`loss` must be", "must be").replace(" or a Loss instance", "")
        raise argparse.ArgumentTypeError(message) from None


def _methods_spec(text: str) -> tuple:
    """``--methods``: registered method names, comma-separated, or 'all' (the library's parser,
    ``cudbound.registry``'s, so the command refuses what :func:`cudbound.intervals` refuses)."""
    try:
        return select_methods(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(in_flags(str(exc))) from None


def _radius_arg(text):
    """``xi-alpha --radius``: 'theorem', 'svmlight' or a number (a ValueError otherwise)."""
    if text in ("theorem", "svmlight"):
        return text
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"--radius must be 'theorem', 'svmlight' or a number; got {text!r}.") from None
