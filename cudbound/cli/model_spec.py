"""A model SPEC: the one way the commands name a classifier (``interval --model``, ``auc --model``,
``compare --model-a`` / ``--model-b``). A SPEC is one of

* the package's classifier: a loss with optional ``basis=`` (``logistic``, ``hinge,basis=poly:2``,
  ``basis=poly:2`` for the default squared loss), or ``estimator=PATH(...)`` for the basis and loss
  of a scikit-learn estimator (:class:`cudbound.refit.Procedure`'s fields);
* a scikit-learn classifier by import path with keyword parameters,
  ``sklearn.linear_model.LogisticRegression(C=0.5)``: the parameters are read by
  :func:`ast.literal_eval` (numbers, strings, True/False/None, tuples, lists, dicts), never
  evaluated, and only the named class is taken from its module;
* a loss of one's own (a :class:`cudbound.losses.Loss` subclass, docs/losses.md "Adding a loss") by
  import path, alone (``mylosses.SquaredHingeLoss()``) or as ``loss=`` beside a basis
  (``loss=mylosses.SquaredHingeLoss(),basis=poly:2``); its module must be importable (for a file in
  the working directory: ``PYTHONPATH=.`` or ``python -m cudbound``).
"""
from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import re
from dataclasses import dataclass
from typing import Any

from ..basis import make_basis
from ..losses import Loss, get_loss
from ..refit import Procedure

__all__ = ["ModelSpec", "parse_model_spec", "model_arg", "SPEC_HELP"]

SPEC_HELP = ("a loss with optional basis= (logistic; hinge,basis=poly:2; basis=poly:2 for the squared loss; a loss "
             "class of one's own by import path, loss=mylosses.MyLoss()), estimator=PATH(...) for the basis and loss "
             "of a scikit-learn estimator, or a scikit-learn classifier by import path with parameters "
             "(sklearn.linear_model.LogisticRegression(C=0.5); quote it in the shell)")
"""What a SPEC may be, in the words of every command's ``--help``."""

_PROCEDURE_KEYS = ("loss", "basis", "estimator")


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model SPEC (``--model``, ``--model-a``, ``--model-b``): the text as given and the
    procedure it names (a :class:`Procedure` or a scikit-learn classifier)."""

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


def _construct(text: str):
    """An instance of the class named by ``module.Class(name=literal, ...)``: the parameters read by
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
        raise ValueError(f"cannot import module {module_name!r} for {path}: {exc} (a module of your own must be "
                         f"on the import path: PYTHONPATH=. for one in the working directory).") from None
    cls = getattr(module, class_name, None)
    if not inspect.isclass(cls):
        raise ValueError(f"module {module_name!r} has no class {class_name!r}.")
    if not issubclass(cls, Loss) and not (hasattr(cls, "fit") and hasattr(cls, "predict")):
        raise ValueError(f"{path} is neither a classifier (it lacks fit and predict) nor a cudbound.losses.Loss.")
    try:
        return cls(**params)
    except Exception as exc:  # noqa: BLE001 - any constructor error, one line naming the class
        raise ValueError(f"{path}({args}) could not be built: {type(exc).__name__}: {exc}") from None


def _estimator(text: str):
    """A scikit-learn classifier from ``module.Class(name=literal, ...)`` (:func:`_construct`)."""
    est = _construct(text)
    if isinstance(est, Loss):
        raise ValueError(f"{text!r} is a loss, not a scikit-learn estimator: give it as loss= (or alone).")
    return est


def _loss(text: str, built: Any = None) -> Loss:
    """A loss of one's own from ``module.Class(name=literal, ...)`` (:func:`_construct`, or ``built``
    if given), checked by :func:`cudbound.losses.get_loss`."""
    loss = _construct(text) if built is None else built
    if not isinstance(loss, Loss):
        raise ValueError(f"{text!r} is not a cudbound.losses.Loss; loss= takes a loss (a name or a Loss class).")
    try:
        return get_loss(loss)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{text!r}: {exc}") from None


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
    items = _split_top_level(text)
    if len(items) == 1 and _IMPORT_PATH.fullmatch(text):
        built = _construct(text)
        if isinstance(built, Loss):
            return ModelSpec(text, Procedure(loss=_loss(text, built)))
        return ModelSpec(text, built)
    fields: dict[str, Any] = {}
    for i, item in enumerate(items):
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if _IMPORT_PATH.fullmatch(item):                              # a loss class, its parameters' "=" aside
            key, eq, value = "", "", item
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
    if "loss" in fields and _IMPORT_PATH.fullmatch(fields["loss"]):
        fields["loss"] = _loss(fields["loss"])
    elif "loss" in fields:
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


def model_arg(text: str) -> ModelSpec:
    """``--model``, ``--model-a``, ``--model-b``: a model SPEC as an argument type (argparse's error on a bad one)."""
    try:
        return parse_model_spec(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
