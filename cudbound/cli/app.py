"""The ``cudbound`` command: its parser (each command adds its own sub-parser) and ``main``,
which runs a command and turns its errors, warnings and a closed pipe into messages and exit statuses."""
from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from concurrent.futures import BrokenExecutor

from .. import __version__
from . import auc, compare, coverage, interval, xi_alpha
from .output import _json_default, _print_warnings, _warning_lines
from .shared import (DEFAULT_RESAMPLES, EXIT_FAILURE, EXIT_USAGE, PROG, _jobs_spec, _loss_spec, _Parser, _positive,
                     add_flag, in_flags)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``cudbound`` command."""
    parser = _Parser(
        prog=PROG,
        description="Small-sample confidence intervals for a classifier's generalization error: "
                    "the CUD bound of Laber & Murphy (UAI 2008), computed exactly by branch and bound.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = _common_options()
    for command in (interval, compare, coverage, auc, xi_alpha):     # in the order of ``cudbound --help``
        command.add_parser(sub, common)
    return parser


def _common_options() -> argparse.ArgumentParser:
    """The options of the interval commands (``demo``, ``interval``), a parent parser."""
    common = argparse.ArgumentParser(add_help=False)
    add_flag(common, "--confidence-level", "--level", type=float, default=0.95, metavar="LEVEL",
             help="confidence level, strictly between 0 and 1 (default %(default)s)")
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
    return common


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
    with warnings.catch_warnings(record=True) as caught:   # an old flag's warning, printed with the others
        warnings.simplefilter("default")
        try:
            args, unknown = parser.parse_known_args(argv)
        except SystemExit as exc:  # --help, --version, or an argparse error (already printed)
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    parsing = _warning_lines(caught)
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
                seen = parsing + _warning_lines(caught)
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
