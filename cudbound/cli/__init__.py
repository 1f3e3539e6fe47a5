"""Command-line interface: ``cudbound demo``, ``interval``, ``compare``, ``coverage``, ``store``, ``auc``, ``xi-alpha``.

``cudbound demo`` computes the CUD interval on a simulated data set (no files,
no network); ``cudbound interval`` on a CSV file. Both print a readable table,
or with ``--json`` the result as JSON. ``cudbound coverage`` runs or resumes a coverage
study (``--check``: only validate its configuration); ``cudbound store check FILE``
verifies a study's store (exit status 1 when it finds problems) and ``cudbound store
export FILE DIR`` writes its complete blocks as result chunks. ``cudbound auc`` and
``cudbound xi-alpha`` compute the other estimators on a CSV file. Bad input (a bad
file, configuration or store included) prints ``cudbound: error: <message>`` on stderr
and exits with status 2; an interrupted coverage run exits with status 130.

One module per job: ``shared`` (program name, exit statuses, errors, flags, argument types),
``csv_input`` (``read_csv``), ``model_spec`` (a model SPEC, how every command names a classifier),
``output`` (the printed report, warnings), one module per command (``interval`` with ``demo``,
``compare``, ``coverage`` with ``store``, ``auc``, ``xi_alpha``), each adding its own sub-parser, and
``app`` (the parser and ``main``).
"""
from __future__ import annotations

from .csv_input import read_csv
from .app import build_parser, main
from .shared import (DEFAULT_RESAMPLES, EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_USAGE, PROG,  # noqa: F401 (re-exported)
                     CLIError, in_flags)

__all__ = ["main", "build_parser", "read_csv", "CLIError"]
