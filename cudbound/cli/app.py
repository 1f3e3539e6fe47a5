"""The ``cudbound`` command: its parser (each command adds its own sub-parser, its shared flags from
``shared.shared_flags``) and ``main``, which runs a command and turns its errors, warnings and a
closed pipe into messages and exit statuses."""
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
from .shared import EXIT_FAILURE, EXIT_USAGE, PROG, InterruptedWithOutput, _Parser, in_flags

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``cudbound`` command."""
    parser = _Parser(
        prog=PROG,
        description="Small-sample confidence intervals for a classifier's generalization error: "
                    "the CUD bound of Laber & Murphy (UAI 2008), computed exactly by branch and bound.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (interval, compare, coverage, auc, xi_alpha):     # in the order of ``cudbound --help``
        command.add_parser(sub)
    return parser


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
    except InterruptedWithOutput as stop:   # Ctrl-C with finished work: print it, then end as interrupted
        _print_warnings(seen)
        if args.json:
            stop.record["warnings"] = [line.removeprefix(f"{PROG}: warning: ") for line in seen]
        try:
            print(json.dumps(stop.record, indent=2, default=_json_default) if args.json else stop.report)
            sys.stdout.flush()
        except BrokenPipeError:
            return _broken_pipe()
        print(f"{PROG}: interrupted (what finished is printed above)", file=sys.stderr)
        return 130
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
