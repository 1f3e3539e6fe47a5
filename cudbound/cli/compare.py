"""``cudbound compare``: two classifiers compared on a CSV file by the methods of
:mod:`cudbound.compare` (tests and intervals for the difference A - B), one table, ``--json``,
``--plot`` (a forest plot of the differences).

A model is named by a SPEC (``--model-a``, ``--model-b``), one of

* the package's classifier: a loss with optional ``basis=`` (``logistic``, ``hinge,basis=poly:2``,
  ``basis=poly:2`` for the default squared loss), or ``estimator=PATH(...)`` for the basis and loss
  of a scikit-learn estimator (:class:`cudbound.compare.Procedure`'s fields);
* a scikit-learn classifier by import path with keyword parameters,
  ``sklearn.linear_model.LogisticRegression(C=0.5)``: the parameters are read by
  :func:`ast.literal_eval` (numbers, strings, True/False/None, tuples, lists, dicts), never
  evaluated, and only the named class is taken from its module.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..basis import make_basis
from ..compare import (ALTERNATIVES, DEFAULT_METHODS, Procedure, compare, get_method, method_names,
                       select_methods)
from ..losses import get_loss
from ..output import envelope
from ..results import AUC_DIFFERENCE
from .csv_input import read_labelled_csv
from .output import _csv_data, _plot_to_file
from .shared import CLIError, _positive, in_flags, shared_flags

__all__ = ["add_parser", "parse_model_spec", "ModelSpec"]

_FIXED_SPLITS = ("ttest_5x2cv", "ftest_5x2cv")
"""Their ``cv`` and ``repeats`` define the test (five halvings): ``--cv`` and ``--repeats`` leave them."""

_PROCEDURE_KEYS = ("loss", "basis", "estimator")


@dataclass(frozen=True)
class ModelSpec:
    """A parsed ``--model-a`` / ``--model-b``: the text as given and the procedure it names (a
    :class:`Procedure` or a scikit-learn classifier)."""

    text: str
    procedure: Any

    def describe(self) -> str:
        return repr(self.procedure)


def _split_top_level(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses, brackets, braces and quotes."""
    parts, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth or quote:
        raise ValueError(f"unbalanced {'quote' if quote else 'parentheses'} in {text!r}.")
    parts.append(text[start:])
    return [p.strip() for p in parts]


_IMPORT_PATH = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\s*(?:\((.*)\))?", re.S)


def _estimator(text: str):
    """A scikit-learn classifier from ``module.Class(name=literal, ...)``: the parameters read by
    ``ast.literal_eval``, the module imported and the class alone taken from it."""
    match = _IMPORT_PATH.fullmatch(text.strip())
    if not match:
        raise ValueError(f"{text!r} is not an import path with parameters, e.g. "
                         f"sklearn.linear_model.LogisticRegression(C=0.5).")
    path, args = match.group(1), match.group(2) or ""
    try:
        call = ast.parse(f"_({args})", mode="eval").body
    except SyntaxError:
        raise ValueError(f"the parameters of {path} are not name=value pairs: ({args}).") from None
    if not isinstance(call, ast.Call) or call.args or any(kw.arg is None for kw in call.keywords):
        raise ValueError(f"the parameters of {path} must be given by name, as name=value: ({args}).")
    params = {}
    for kw in call.keywords:
        try:
            params[kw.arg] = ast.literal_eval(kw.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise ValueError(f"parameter {kw.arg} of {path} must be a literal (a number, string, True, False, "
                             f"None, or a tuple, list or dict of them); got {ast.unparse(kw.value)}.") from None
    module_name, _, class_name = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import module {module_name!r} for {path}: {exc}.") from None
    cls = getattr(module, class_name, None)
    if not inspect.isclass(cls):
        raise ValueError(f"module {module_name!r} has no class {class_name!r}.")
    if not (hasattr(cls, "fit") and hasattr(cls, "predict")):
        raise ValueError(f"{path} is not a classifier: it lacks fit and predict.")
    try:
        return cls(**params)
    except Exception as exc:  # noqa: BLE001 - any constructor error, one line naming the class
        raise ValueError(f"{path}({args}) could not be built: {type(exc).__name__}: {exc}") from None


def parse_model_spec(text: str) -> ModelSpec:
    """A model SPEC (module docstring) as the procedure it names; a ValueError saying what is wrong.

    >>> parse_model_spec("hinge,basis=poly:2").procedure
    Procedure(basis='poly:2', loss='hinge', estimator=None)
    >>> parse_model_spec("sklearn.linear_model.LogisticRegression(C=0.5)").procedure
    LogisticRegression(C=0.5)
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a model SPEC is empty; give a loss (e.g. logistic), a loss with basis= (e.g. "
                         "hinge,basis=poly:2) or a scikit-learn classifier by import path.")
    text = text.strip()
    if _IMPORT_PATH.fullmatch(text):
        return ModelSpec(text, _estimator(text))
    fields: dict[str, Any] = {}
    for i, item in enumerate(_split_top_level(text)):
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq:
            if i:
                raise ValueError(f"{item!r} in {text!r}: only the first item may be a bare loss name; the others "
                                 f"are key=value ({', '.join(_PROCEDURE_KEYS)}).")
            key, value = "loss", item
        if key not in _PROCEDURE_KEYS:
            raise ValueError(f"unknown key {key!r} in {text!r}; a model SPEC takes {', '.join(_PROCEDURE_KEYS)} "
                             f"(or is a scikit-learn classifier by import path).")
        if key in fields:
            raise ValueError(f"{key} is given twice in {text!r}.")
        if not value:
            raise ValueError(f"{key} has no value in {text!r}.")
        fields[key] = value
    if "loss" in fields:
        try:
            fields["loss"] = get_loss(fields["loss"]).name
        except ValueError as exc:
            raise ValueError(f"{text!r}: {exc}".replace("`loss`: ", "").replace("`loss` must", "the loss must")
                             .replace(" or a Loss instance", "")) from None
    if "basis" in fields:
        try:
            make_basis(fields["basis"])
        except ValueError as exc:
            raise ValueError(f"{text!r}: {exc}".replace("`basis` must", "the basis must")
                             .replace(", a callable or a cudbound.basis.Basis", "")) from None
    if "estimator" in fields:
        if set(fields) != {"estimator"}:
            raise ValueError(f"{text!r}: estimator= takes its basis and loss from the estimator; leave out the loss "
                             f"and basis= (or give the estimator alone, by its import path, to refit it as it is).")
        fields["estimator"] = _estimator(fields["estimator"])
    return ModelSpec(text, Procedure(**fields))


def _model_arg(text: str) -> ModelSpec:
    try:
        return parse_model_spec(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _comparison_methods(text: str) -> tuple:
    """``--methods``: registered comparisons, parsed by the package's one method-list parser."""
    try:
        return select_methods(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(in_flags(str(exc))) from None


def add_parser(subparsers) -> None:
    """The ``compare`` subcommand."""
    cmd = subparsers.add_parser(
        "compare", parents=[shared_flags("data", "confidence-level", "seed", "json")], help="compare two classifiers on a CSV file: tests and intervals for the difference A - B",
        description="Compare two classifiers A and B on a CSV file by the methods of cudbound.compare: McNemar's "
                    "test, the paired error-difference intervals and DeLong's test on out-of-fold predictions, "
                    "and tests and intervals on repeated refits (5x2cv, corrected t, Wald-CV, nested CV). Every "
                    "estimate is A - B: a negative error difference favours A. A SPEC is a loss with optional "
                    "basis= (logistic; hinge,basis=poly:2), estimator=PATH(...) for the basis and loss of a "
                    "scikit-learn estimator, or a scikit-learn classifier by import path with parameters "
                    "(sklearn.linear_model.LogisticRegression(C=0.5); quote it in the shell).")
    cmd.add_argument("--model-a", required=True, type=_model_arg, metavar="SPEC", help="classifier A")
    cmd.add_argument("--model-b", required=True, type=_model_arg, metavar="SPEC", help="classifier B")
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
    cmd.add_argument("--plot", default=None, metavar="FILE.png",
                     help="also draw a forest plot of the differences, with the zero line, to this image file "
                          "(needs matplotlib)")
    cmd.set_defaults(handler=_compare)


def _options(args, methods) -> dict:
    """{<method>_options: {...}}: ``--cv`` and ``--repeats`` to every chosen method that takes them
    (not the 5x2cv tests); one that none of them takes is an error."""
    per: dict[str, dict] = {}
    for flag, param in (("--cv", "cv"), ("--repeats", "repeats")):
        value = getattr(args, param)
        if value is None:
            continue
        takers = [m for m in methods if m not in _FIXED_SPLITS and param in get_method(m).options()]
        if not takers:
            users = [m for m in method_names() if m not in _FIXED_SPLITS and param in get_method(m).options()]
            raise CLIError(f"{flag} is used by {', '.join(users)}, and none of the chosen methods "
                           f"({', '.join(methods)}) takes it; drop it or add a method that uses it.")
        for m in takers:
            per.setdefault(f"{m}_options", {})[param] = value
    return per


_OUT_OF_FOLD = ("mcnemar", "tango", "newcombe", "agresti_min", "delong")


def _compare(args) -> tuple[dict, str]:
    """``cudbound compare``: the chosen comparisons of A and B on the CSV file, one table."""
    X, _, features, labels, encoding = read_labelled_csv(args)
    seed = args.seed
    results = compare(args.model_a.procedure, args.model_b.procedure, X, labels, methods=args.methods,
                      confidence_level=args.confidence_level, alternative=args.alternative, rng=seed,
                      **_options(args, args.methods))
    plotted = _maybe_plot(args, results)
    record = envelope("compare", data=_csv_data(args, X, features, encoding), seed=seed,
                      results=[_record(r) for r in results], plot=plotted,
                      details={"model_a": args.model_a.text, "model_b": args.model_b.text,
                               "procedure_a": args.model_a.describe(), "procedure_b": args.model_b.describe(),
                               "alternative": args.alternative})
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
    w = max(12, 2 + max(len(r.method) for r in results))
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
                     f"{_number(r.statistic, 11, 3)}{_number(r.pvalue, 9)}{r.seconds:>9.2f}")
    lines += ["", "  A - B of the error rates (negative: A errs less) or of the AUCs (positive: A ranks better);",
              "  '-': the method gives no interval (or no test)."]
    oof = [r for r in results if r.method in _OUT_OF_FOLD]
    if oof:
        k = oof[0].details.get("k")
        lines += [f"  {', '.join(r.method for r in oof)}: on the out-of-fold predictions of one {k}-fold split "
                  f"(refitted once, timed in the first),",
                  "  treated as one test set; they are not independent (the models share training points)."]
    if plotted:
        lines.append(f"  plot: {plotted}")
    return "\n".join(lines)


def _maybe_plot(args, results):
    """A forest plot of the differences to ``--plot FILE`` (None without the option)."""
    if not args.plot:
        return None
    return _plot_to_file(args.plot, lambda: results.plot(data_name=Path(args.data).name))
