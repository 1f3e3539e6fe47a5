"""Shared input validation. Every check returns the converted value and every
error names the argument, what was received and what was expected."""
from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "check_features", "encode_labels", "check_counts", "check_confidence_level",
    "check_n_resamples", "check_alpha_n", "check_design", "check_rng", "LabelEncoding",
]


def check_features(X, name: str = "X") -> np.ndarray:
    """2-D float array with finite entries; the first bad entry is named by row and column."""
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


class LabelEncoding:
    """How the user's two label values were mapped to -1 and +1."""

    def __init__(self, negative, positive):
        self.negative, self.positive = negative, positive

    def __repr__(self) -> str:
        return f"{self.negative!r} -> -1, {self.positive!r} -> +1"


def encode_labels(y, *, pos_label=None, n_rows: int | None = None, name: str = "y"):
    """Map labels with exactly two distinct values to {-1, +1}.

    {-1, 1}, {0, 1} and {False, True} are recognised; any other pair needs
    ``pos_label``. Returns ``(labels, LabelEncoding)``.
    """
    arr = np.asarray(y)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D; got shape {arr.shape}.")
    if n_rows is not None and arr.shape[0] != n_rows:
        raise ValueError(f"X has {n_rows} rows but `{name}` has {arr.shape[0]} labels.")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        i = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"`{name}` has a non-finite label at position {i} ({arr[i]!r}).")
    if arr.dtype.kind == "O" and any(v is None for v in arr):
        raise ValueError(f"`{name}` has a missing label (None) at position {[v is None for v in arr].index(True)}.")
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
    else:
        raise ValueError(
            f"`{name}` has labels {values}; only {{-1, 1}}, {{0, 1}} and booleans are mapped "
            f"automatically. Pass `pos_label=` to say which value is the positive class."
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
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not (0.0 < float(level) < 1.0):
        raise ValueError(f"`{name}` must be a number strictly between 0 and 1; got {level!r}.")
    return float(level)


def check_n_resamples(n_resamples, confidence_level: float, name: str = "n_resamples") -> int:
    """At least ceil(1 / (1 - level)) replicates, so the order statistic exists."""
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, numbers.Integral) or n_resamples < 1:
        raise ValueError(f"`{name}` must be a positive integer; got {n_resamples!r}.")
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
    if isinstance(alpha_n, bool) or not isinstance(alpha_n, numbers.Real) or not math.isfinite(alpha_n) or alpha_n < 0:
        raise ValueError(f"`{name}` must be a finite number >= 0 (None for the default n = {n}); got {alpha_n!r}.")
    return float(alpha_n)


def check_design(design, name: str = "design", names=None) -> np.ndarray:
    """Finite n x p matrix with n >= p and full column rank (beta-hat must be unique).

    The rank is decided on the column-scaled design (``cudbound.design.reparametrise``),
    so it does not depend on the units of the features; a rank-deficient design raises
    ``RankDeficientError`` (a ``ValueError``) naming the dependent columns.
    """
    Phi = check_features(design, name)
    n, p = Phi.shape
    if n < p:
        raise ValueError(f"`{name}` has {n} rows but {p} basis columns; the fit needs at least as many rows as columns.")
    from .design import reparametrise

    reparametrise(Phi, names=names, name=name)
    return Phi


def check_rng(rng) -> np.random.Generator:
    """None, an int seed, a SeedSequence or a Generator -> a Generator."""
    if isinstance(rng, np.random.RandomState):
        raise TypeError("`rng` must be a numpy Generator, SeedSequence, int or None; legacy RandomState is not accepted.")
    return np.random.default_rng(rng)
