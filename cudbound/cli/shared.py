"""What the commands share: the program's name, exit statuses, errors, the library's
parameter names in flags (``in_flags``), the parser class and the argument types."""
from __future__ import annotations

import argparse
import math
import re
import sys
import warnings

from ..basis import make_basis
from ..losses import get_loss
from ..registry import _methods_iv

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


def _show_progress(args) -> bool:
    """A progress bar when stderr is a terminal, unless --no-progress."""
    return not args.no_progress and sys.stderr.isatty()


# --------------------------------------------------------------------------- argument types

def _jobs_spec(text: str) -> int:
    """``--jobs``: a positive integer or -1."""
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs == 0 or jobs < -1:
        raise argparse.ArgumentTypeError(f"must be a positive integer or -1 (all cores); got {text!r}.")
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
        return _methods_iv(text)
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
