"""Shared input validation. Every check returns the converted value and every
error names the argument, what was received and what was expected."""
from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "check_scalar", "check_features", "encode_labels", "check_data", "check_scores", "check_values", "check_counts",
    "check_confidence_level", "check_n_resamples", "check_alpha_n", "check_rng", "check_method_list", "check_n_jobs",
    "LabelEncoding",
    "redefined_methods"]


def _fmt(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _expected(target, min_val, max_val, include_boundaries) -> str:
    """Words for the set of accepted values: 'a positive integer', 'a number in [0, 0.5)', ..."""
    low_closed = include_boundaries in ("both", "left")
    high_closed = include_boundaries in ("both", "right")
    if target == "whole":
        if max_val is None:
            return "a whole number" if min_val is None else f"a whole number >= {min_val}"
        return f"a whole number between {min_val} and {max_val}"
    if target == "int":
        if max_val is None:
            if min_val is None:
                return "an integer"
            if min_val == 1:
                return "a positive integer"
            if min_val == 0:
                return "a non-negative integer"
            return f"an integer >= {min_val}"
        return f"an integer between {min_val} and {max_val}"
    if min_val is not None and max_val is not None:
        if not low_closed and not high_closed:
            return f"a number strictly between {_fmt(min_val)} and {_fmt(max_val)}"
        return f"a number in {'[' if low_closed else '('}{_fmt(min_val)}, {_fmt(max_val)}{']' if high_closed else ')'}"
    if min_val is not None:
        if min_val == 0:
            return "a finite non-negative number" if low_closed else "a finite positive number"
        return f"a finite number {'>=' if low_closed else '>'} {_fmt(min_val)}"
    if max_val is not None:
        return f"a finite number {'<=' if high_closed else '<'} {_fmt(max_val)}"
    return "a finite number"


def check_scalar(value, name: str, target_type: type | str = numbers.Integral, *, min_val=None, max_val=None,
                 include_boundaries: str = "both", hint: str = ""):
    """Check one scalar argument and return it as a Python int or float.

    The one validator of scalar arguments, in the manner of scikit-learn's
    ``utils.validation.check_scalar``: ``target_type`` is ``numbers.Integral`` (an integer,
    or a float holding a whole number such as 40.0, returned as int; 2.5 and booleans are
    refused), ``numbers.Real`` (finite values only) or ``"whole"`` (the same as Integral); ``min_val``/``max_val`` bound
    it, closed or open as ``include_boundaries`` says ("both", "left", "right",
    "neither"). The error is a ValueError that names the argument, what is accepted and
    what was received (``hint`` is appended to it).

    >>> check_scalar(3, "k", min_val=2)
    3
    >>> check_scalar(0.5, "flip_probability", numbers.Real, min_val=0.0, max_val=0.5, include_boundaries="left")
    Traceback (most recent call last):
    ...
    ValueError: `flip_probability` must be a number in [0, 0.5); got 0.5.
    """
    if include_boundaries not in ("both", "left", "right", "neither"):
        raise ValueError(f"include_boundaries must be 'both', 'left', 'right' or 'neither'; got {include_boundaries!r}.")
    whole = target_type == "whole"
    integral = target_type is numbers.Integral or target_type is int
    target = "whole" if whole else "int" if integral else "real"
    message = f"`{name}` must be {_expected(target, min_val, max_val, include_boundaries)}; got {value!r}.{hint}"
    if isinstance(value, bool) or isinstance(value, np.bool_):
        raise ValueError(message)
    if integral or whole:     # an int, or a float holding a whole number (40.0 yes, 40.5 no)
        if isinstance(value, numbers.Integral):
            out = int(value)
        elif isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
            out = int(value)
        else:
            raise ValueError(message)
    else:
        if not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
            raise ValueError(message)
        out = float(value)
    low_closed = include_boundaries in ("both", "left")
    high_closed = include_boundaries in ("both", "right")
    if min_val is not None and (out < min_val or (out == min_val and not low_closed)):
        raise ValueError(message)
    if max_val is not None and (out > max_val or (out == max_val and not high_closed)):
        raise ValueError(message)
    return out


def check_features(X, name: str = "X") -> np.ndarray:
    """2-D float array with finite entries; the first bad entry is named by row and column.
    Complex values are refused (their imaginary part would be dropped silently)."""
    if np.iscomplexobj(X) or (getattr(X, "dtype", None) is not None and np.asarray(X).dtype.kind == "c"):
        raise ValueError(f"`{name}` has complex values; give real-valued features.")
    try:
        arr = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`{name}` must be a numeric array; could not convert it to floats ({exc}).") from None
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"`{name}` must be 2-D (rows = observations); got an array with {arr.ndim} dimensions.")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"`{name}` is empty (shape {arr.shape}).")
    bad = ~np.isfinite(arr)
    if bad.any():
        r, c = map(int, np.argwhere(bad)[0])
        kind = "NaN" if np.isnan(arr[r, c]) else "an infinite value"
        raise ValueError(
            f"`{name}` has {int(bad.sum())} non-finite entr{'y' if bad.sum() == 1 else 'ies'}; "
            f"the first is {kind} at row {r}, column {c}. Remove or impute them first."
        )
    return arr


def feature_names(X):
    """The column names of a DataFrame as strings, else None (an array has none)."""
    columns = getattr(X, "columns", None)
    return None if columns is None else [str(c) for c in columns]


@dataclass(frozen=True, repr=False)
class LabelEncoding:
    """How the user's two label values were mapped to -1 and +1.

    ``negative`` and ``positive`` are the two values as given. Shown (``str``, ``repr``) as
    ``'no' -> -1, 'yes' -> +1``; a result's ``to_dict()`` writes that text to JSON.

    >>> enc = LabelEncoding("no", "yes")
    >>> enc.positive, enc, str(enc)
    ('yes', 'no' -> -1, 'yes' -> +1, "'no' -> -1, 'yes' -> +1")
    """

    negative: Any
    positive: Any

    def __str__(self) -> str:
        return f"{self.negative!r} -> -1, {self.positive!r} -> +1"

    __repr__ = __str__


_TEXT_PAIRS = (frozenset({"true", "false"}), frozenset({"yes", "no"}), frozenset({"1", "0"}))
_TEXT_POSITIVE = ("true", "yes", "1")


def encode_labels(y, *, pos_label=None, n_rows: int | None = None, name: str = "y", rows_of: str = "X",
                  takes_pos_label: bool = True):
    """Map labels with exactly two distinct values to {-1, +1}: the labels' contract.

    Every public function that takes labels applies it (:func:`check_data` for features and
    labels, ``cudbound.design.check_labelled_design`` for a design and labels,
    ``cudbound.design.PreparedData`` behind the functions that apply a basis): ``y`` is 1-D (or an
    (n, 1) column) with one label per row of ``rows_of`` (``n_rows``), none of them missing
    (NaN, None), and exactly two distinct values. {-1, 1}, {0, 1} and {False, True} are
    recognised, and so are the text pairs a CSV file gives, in any case: "true"/"false",
    "yes"/"no", "1"/"0" (positive: 1, True, true, yes, 1). Any other pair needs ``pos_label``
    (where the function takes one: ``takes_pos_label``). Returns ``(labels, LabelEncoding)``,
    the labels as float -1.0 / +1.0.

    >>> encode_labels(["yes", "No", "yes"])[1]
    'No' -> -1, 'yes' -> +1
    """
    arr = np.asarray(y)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D; got shape {arr.shape}.")
    if n_rows is not None and arr.shape[0] != n_rows:
        raise ValueError(f"{rows_of} has {n_rows} rows but `{name}` has {arr.shape[0]} labels; "
                         f"give {n_rows} labels, one per row.")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        i = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"`{name}` has a non-finite label at position {i} ({arr[i]!r}).")
    if arr.dtype.kind == "O" and any(v is None or (isinstance(v, float) and not math.isfinite(v)) for v in arr):
        i = [v is None or (isinstance(v, float) and not math.isfinite(v)) for v in arr].index(True)
        what = "(None)" if arr[i] is None else f"({arr[i]!r})"
        raise ValueError(f"`{name}` has a missing label {what} at position {i}.")
    values = list(np.unique(arr))
    if len(values) != 2:
        shown = ", ".join(repr(_py(v)) for v in values[:6]) + (", ..." if len(values) > 6 else "")
        raise ValueError(
            f"`{name}` must contain exactly two classes; found {len(values)}: {shown}."
        )
    values = [_py(v) for v in values]
    if pos_label is not None:
        matches = [v for v in values if v == pos_label or str(v) == str(pos_label)]
        if not matches:
            raise ValueError(f"`pos_label`={pos_label!r} is not one of the labels found in `{name}`: {values}.")
        pos = matches[0]
        neg = values[1] if values[0] == pos else values[0]
    elif set(values) == {-1, 1} or set(values) == {0, 1}:  # True == 1, False == 0: booleans too
        neg, pos = values[0], values[1]
    elif all(isinstance(v, str) for v in values) and frozenset(v.strip().lower() for v in values) in _TEXT_PAIRS:
        pos = next(v for v in values if v.strip().lower() in _TEXT_POSITIVE)
        neg = values[1] if values[0] == pos else values[0]
    else:
        raise ValueError(
            f"`{name}` has labels {values}; only {{-1, 1}}, {{0, 1}}, booleans and the text pairs true/false, "
            f"yes/no, 1/0 are mapped automatically. "
            + ("Pass `pos_label=` to say which value is the positive class." if takes_pos_label else
               "Map them to -1/+1 first, or use a function that takes `pos_label=` (cud_interval, intervals).")
        )
    out = np.where(_eq(arr, pos), 1.0, -1.0)
    return out, LabelEncoding(neg, pos)


def _py(v):
    return v.item() if isinstance(v, np.generic) else v


def _eq(arr, value):
    try:
        return arr == value if arr.dtype.kind != "O" else np.array([a == value for a in arr])
    except TypeError:
        return np.array([a == value for a in arr])


def check_data(X, y, *, pos_label=None, takes_pos_label: bool = True) -> tuple[np.ndarray, np.ndarray, LabelEncoding]:
    """Features and labels, checked together: ``(X, labels, encoding)``.

    ``X`` as :func:`check_features` returns it, and the labels by the one contract of
    :func:`encode_labels` (one per row of ``X``)."""
    X = check_features(X)
    labels, encoding = encode_labels(y, pos_label=pos_label, n_rows=X.shape[0], takes_pos_label=takes_pos_label)
    return X, labels, encoding


def check_scores(scores, n: int, name: str = "scores") -> np.ndarray:
    """One finite real score per label: ``scores`` as a float (n,) array (an (n, 1) or (1, n) column
    is flattened), or a ValueError that names ``name``, the shape, the first non-finite score.

    >>> check_scores([[0.5], [2]], 2).tolist()
    [0.5, 2.0]
    """
    arr = np.asarray(scores)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"`{name}` must hold one score per label of `y_true` ({n}); got shape {arr.shape}.")
    if arr.dtype.kind == "c":
        raise ValueError(f"`{name}` has complex values; give real-valued scores.")
    try:
        s = arr.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must hold numbers (scores); got dtype {arr.dtype}.") from None
    bad = ~np.isfinite(s)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"`{name}` has {int(bad.sum())} non-finite score(s); the first is {float(s[i])!r} at "
                         f"position {i}. Remove or impute them first.")
    return s


def check_values(values, name: str, minimum: int = 1) -> np.ndarray:
    """A 1-D float array of at least ``minimum`` finite numbers (e.g. a statistic's bootstrap values),
    or a ValueError that names ``name`` and the first non-finite position.

    >>> check_values([0.25, 1], "values").tolist()
    [0.25, 1.0]
    """
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be a 1-D array of numbers.") from None
    if arr.ndim != 1 or arr.shape[0] < minimum:
        raise ValueError(f"`{name}` must be a 1-D array with at least {minimum} values; got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` has a non-finite value at position {int(np.flatnonzero(~np.isfinite(arr))[0])}.")
    return arr


def check_counts(counts, n: int, name: str = "counts") -> np.ndarray:
    """Bootstrap multiplicities: length n, whole numbers >= 0 (any numeric dtype), summing to n."""
    arr = np.asarray(counts)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"`{name}` must be a 1-D array of length n = {n}; got shape {arr.shape}.")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"`{name}` must be numeric; got dtype {arr.dtype}.")
    f = arr.astype(float)
    if not np.all(np.isfinite(f)) or np.any(f != np.round(f)) or np.any(f < 0):
        i = int(np.flatnonzero(~np.isfinite(f) | (f != np.round(f)) | (f < 0))[0])
        raise ValueError(f"`{name}` must hold whole numbers >= 0; entry {i} is {_py(arr[i])!r}.")
    total = int(f.sum())
    if total != n:
        raise ValueError(f"`{name}` must sum to n = {n} (a bootstrap resample of the data); it sums to {total}.")
    return f.astype(np.int64)


def check_confidence_level(level, name: str = "confidence_level") -> float:
    """A level strictly between 0 and 1."""
    return check_scalar(level, name, numbers.Real, min_val=0.0, max_val=1.0, include_boundaries="neither")


def check_n_resamples(n_resamples, confidence_level: float, name: str = "n_resamples") -> int:
    """At least ceil(1 / (1 - level)) replicates, so the order statistic exists."""
    n_resamples = check_scalar(n_resamples, name, min_val=1)
    need = math.ceil(1.0 / (1.0 - confidence_level) - 1e-9)
    if n_resamples < need:
        raise ValueError(
            f"`{name}`={n_resamples} is too few for confidence_level={confidence_level}: "
            f"at least 1/(1 - level) = {need} resamples are needed."
        )
    return int(n_resamples)


def check_alpha_n(alpha_n, n: int, name: str = "alpha_n") -> float:
    """alpha_n >= 0 and finite; None means the default alpha_n = n."""
    if alpha_n is None:
        return float(n)
    return check_scalar(alpha_n, name, numbers.Real, min_val=0.0, hint=f" None gives the default n = {n}.")


def check_rng(rng) -> np.random.Generator:
    """None, a non-negative int seed, a SeedSequence or a Generator -> a Generator (as in scipy).

    Anything else is a TypeError (a negative seed a ValueError) naming ``rng``.

    >>> check_rng("abc")
    Traceback (most recent call last):
    ...
    TypeError: `rng` must be None, a non-negative int seed, a numpy SeedSequence or Generator; got str 'abc'.
    """
    if isinstance(rng, np.random.RandomState):
        raise TypeError("`rng` must be a numpy Generator, SeedSequence, int or None; legacy RandomState is not accepted.")
    if rng is None or isinstance(rng, (np.random.Generator, np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(rng)
    if isinstance(rng, (bool, np.bool_)) or not isinstance(rng, (numbers.Integral, np.integer)):
        raise TypeError(f"`rng` must be None, a non-negative int seed, a numpy SeedSequence or Generator; "
                        f"got {type(rng).__name__} {rng!r}.")
    if int(rng) < 0:
        raise ValueError(f"`rng` must be a non-negative int seed; got {rng!r}.")
    return np.random.default_rng(int(rng))


def check_n_jobs(n_jobs, name: str = "n_jobs") -> int:
    """The number of worker processes ``n_jobs`` asks for, read as scikit-learn reads it: None is 1,
    a positive integer that many, -1 every core, -k every core but k - 1 (at least one must remain).

    >>> check_n_jobs(None), check_n_jobs(3)
    (1, 3)
    >>> check_n_jobs(0)
    Traceback (most recent call last):
    ...
    ValueError: `n_jobs` must be a positive integer, -1 (every core), -k (every core but k - 1) or None (one); got 0.
    """
    if n_jobs is None:
        return 1
    message = (f"`{name}` must be a positive integer, -1 (every core), -k (every core but k - 1) or None (one); "
               f"got {n_jobs!r}.")
    try:
        jobs = check_scalar(n_jobs, name)
    except ValueError:
        raise ValueError(message) from None
    if jobs == 0:
        raise ValueError(message)
    if jobs > 0:
        return jobs
    cores = os.cpu_count() or 1
    if cores + 1 + jobs < 1:
        raise ValueError(f"`{name}` = {jobs} asks for every core but {-jobs - 1}, and this machine has {cores}; "
                         f"use -1 (every core) or a positive integer.")
    return cores + 1 + jobs


def check_method_list(methods, registered, noun: str = "method") -> tuple:
    """The one parser of a list of method names (:func:`cudbound.intervals`, :func:`cudbound.compare.compare`
    and ``--methods`` of every command): names from ``registered`` as a sequence or a comma-separated
    string (spaces and case ignored), or ``"all"`` for every registered one, in registration order; an
    unknown, missing or repeated name is refused (``noun`` names what they are in the messages).

    >>> check_method_list("B, a", ["a", "b"])
    ('b', 'a')
    """
    registered = list(registered)
    if isinstance(methods, str) and methods.strip().lower() == "all":
        return tuple(registered)
    if isinstance(methods, str):
        methods = [m for m in methods.replace(" ", "").split(",") if m]
    try:
        methods = [m.strip().lower() if isinstance(m, str) else m for m in methods]
    except TypeError:
        raise ValueError(f"`methods` must be a sequence of {noun} names from {registered}; "
                         f"got {methods!r}.") from None
    if not methods:
        raise ValueError(f"`methods` is empty; choose from {registered} or 'all'.")
    unknown = [m for m in methods if m not in registered]
    if unknown:
        raise ValueError(f"unknown {noun}(s) {', '.join(map(str, unknown))} in `methods`; valid {noun}s are "
                         f"{registered} or 'all'.")
    dup = sorted({m for m in methods if methods.count(m) > 1})
    if dup:
        raise ValueError(f"`methods` lists {dup} more than once.")
    return tuple(methods)


def redefined_methods(obj, cls: type) -> list[str]:
    """The methods that the classes between ``type(obj)`` and ``cls`` (an ancestor) define anew,
    ``__init__`` and dunders aside: empty when ``obj`` computes what a ``cls`` computes (a renamed
    class, other defaults, extra attributes). Lets a fast path be chosen by what a model does
    rather than by its exact class."""
    t = type(obj)
    below = t.__mro__[:t.__mro__.index(cls)]
    return sorted({name for c in below for name, attr in vars(c).items()
                   if callable(attr) and not name.startswith("__")})
