"""What the commands print: the CUD report, the ``data`` member of a CSV command's JSON,
the JSON encoder's fallback, the warnings as one line each, and ``--plot``'s image file."""
from __future__ import annotations

import sys

import numpy as np

from ..basis import ColumnBasis, ComposedBasis, LinearBasis, PCABasis, PolynomialBasis
from ..design import prepare_data
from ..refit import Procedure
from ..sklearn_bridge import EstimatorBasis
from .shared import PROG, in_flags

__all__: list[str] = []   # the commands' helpers, each imported by name (underscore names)

_SEARCH_ROWS = [  # (label, median key, total key, scale of the median) in SearchStats.summary()
    ("nodes", "nodes_median", "nodes_total", 1),
    ("solves", "solves_median", "solves_total", 1),
    ("pruned", None, "pruned_total", 1),
    ("realisability checks", None, "realisability_checks_total", 1),
    ("screened points", "screened_median", None, 1),
    ("milliseconds", "seconds_median", None, 1000),
]


def _column_names(basis, names: list) -> list | None:
    """The names of a fitted basis's columns on inputs named ``names``: ``intercept`` first when it has
    one, then a feature's name (``linear``, ``cols:``), a monomial of them (``poly:D``: ``x1^2``,
    ``x1*x2``), a principal component (``PC1``, ...) or the name a scikit-learn pipeline's earlier
    steps give their column (``get_feature_names_out``); None for a basis of another kind."""
    if isinstance(basis, EstimatorBasis):
        return _estimator_column_names(basis, names)
    if isinstance(basis, ComposedBasis):     # the outer basis on the inner columns it kept
        inner = _column_names(basis.inner, names)
        return None if inner is None else _column_names(basis.outer, [n for n, k in zip(inner, basis.keep_) if k])
    if isinstance(basis, PolynomialBasis):
        columns = ["*".join(f"{names[j]}^{c.count(j)}" if c.count(j) > 1 else names[j] for j in sorted(set(c)))
                   for c in basis.powers_]
    elif isinstance(basis, PCABasis):
        columns = [f"PC{j + 1}" for j in range(basis.components_.shape[0])]
    elif isinstance(basis, ColumnBasis):
        columns = [names[j] for j in basis.columns]
    elif isinstance(basis, LinearBasis):
        columns = list(names)
    else:
        return None
    return None if columns is None else (["intercept"] if basis.intercept else []) + columns


def _estimator_column_names(basis, names: list) -> list | None:
    """:func:`_column_names` of a scikit-learn pipeline's earlier steps (an :class:`EstimatorBasis`)."""
    columns = list(names)
    if basis.transformer_ is not None:
        try:
            columns = [str(c) for c in basis.transformer_.get_feature_names_out(names)]
        except (AttributeError, TypeError, ValueError):
            return None
    return (["intercept"] if basis.intercept else []) + [c for c, k in zip(columns, basis.keep_) if k]


def _coefficient_names(procedure, X, labels, features) -> list:
    """The names of the CUD coefficients of ``procedure`` (a Procedure or a scikit-learn classifier),
    its basis fitted here on X as the interval fits it (:func:`cudbound.design.prepare_data`):
    :func:`_column_names`, or ``phi_1``, ``phi_2``, ... for a basis it cannot name."""
    if not isinstance(procedure, Procedure):
        procedure = Procedure(estimator=procedure)
    data = prepare_data(X, labels, procedure.basis, procedure.estimator, None, procedure.loss)
    names = _column_names(data.basis, list(features))
    return names if names is not None else [f"phi_{j + 1}" for j in range(data.design.shape[1])]


def _format_report(result, context, extra=(), coef_names=None) -> str:
    """The readable table: context rows, the interval, its coefficients (named ``coef_names``), then
    the search statistics."""
    low, high = result.confidence_interval
    names = coef_names if coef_names is not None else [f"phi_{j + 1}" for j in range(len(result.coef))]
    name_width = max(len(n) for n in names)
    coefficients = [("coefficients" if j == 0 else "", f"{n:<{name_width}}  {c:+.4f}")
                    for j, (n, c) in enumerate(zip(names, result.coef))]
    rows = [
        *context,
        ("labels", repr(result.label_encoding) if result.label_encoding is not None else "as given"),
        ("model", f"{result.details['basis']}, {result.details['loss']} loss, alpha_n = {result.alpha_n:g}"),
        *coefficients,
        ("confidence level", f"{result.confidence_level:g} (B = {result.n_resamples} bootstrap resamples)"),
        ("interval", f"[{low:.4f}, {high:.4f}]" + ("  (conservative)" if result.conservative else "")),
        ("training error", f"{result.train_error:.4f}"),
        ("half-width", f"{result.half_width:.4f} (before clipping to [0, 1])"),
        *extra,
        *_compile_row(result),
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


def _compile_row(result) -> list:
    """The report's row for the kernels numba compiled during the call (a first run only; the
    result's ``seconds`` leave that time out): none when it compiled nothing."""
    compiled = result.details.get("compile_seconds", 0.0)
    if not compiled:
        return []
    return [("compiled kernels", f"in {compiled:.2f} s (first run only; cached for later runs)")]


def _json_default(obj):
    """What ``json.dumps`` cannot encode: NumPy scalars and arrays as Python's, anything else by its repr."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return repr(obj)


def _csv_data(args, X, features, encoding) -> dict:
    """The ``data`` member of the JSON output for a command that read a CSV file."""
    mapping = None if encoding is None else {"positive": encoding.positive, "negative": encoding.negative}
    return {"source": str(args.data), "n": int(X.shape[0]), "features": list(features),
            "label_column": args.label, "label_mapping": mapping}


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
    """The warning lines on stderr."""
    for line in lines:
        print(line, file=sys.stderr)


def _plot_to_file(path, draw) -> str:
    """``--plot FILE``: the Axes ``draw()`` returns (a function of :mod:`cudbound.plotting`) saved to
    ``path``, off screen; a CLIError when matplotlib is missing or the file cannot be written.
    Returns the file name written."""
    from .shared import CLIError
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise CLIError('--plot needs matplotlib: pip install "cudbound[figures]"') from None
    fig = draw().figure
    try:
        fig.savefig(path, dpi=150)
    except (OSError, ValueError) as exc:
        raise CLIError(f"--plot: cannot write {path!r}: {exc}") from None
    finally:
        plt.close(fig)
    return str(path)
