"""Result objects, in the style of ``scipy.stats.bootstrap``'s ``BootstrapResult``."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np

from ._deprecation import renamed_fields
from ._validation import LabelEncoding

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = ["ConfidenceInterval", "Result", "PointEstimateResult", "NoConfidenceIntervalError", "IntervalResult",
           "IntervalResults", "SearchStats", "CUDResult", "result_item"]

FRAME_COLUMNS = ("method", "low", "high", "centre", "width", "level", "n_samples", "seconds")
"""The columns of :meth:`IntervalResult.to_frame`, one row per interval."""


class _Shown(str):
    """A value already formatted for a repr (shown as is, without quotes)."""

    def __repr__(self) -> str:
        return str(self)


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError("to_frame() needs pandas: pip install pandas") from None
    return pandas


class ConfidenceInterval(NamedTuple):
    """A (low, high) pair, like ``scipy.stats._common.ConfidenceInterval``."""

    low: float
    high: float


def _short(v) -> str:
    if isinstance(v, ConfidenceInterval):
        return f"ConfidenceInterval(low={v.low:.4g}, high={v.high:.4g})"
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.4g}"
    return repr(v)


def _scalar(v) -> bool:
    return isinstance(v, (int, float, str, bool, type(None), np.integer, np.floating, np.bool_))


def _plain(v):
    """A NumPy scalar as the Python one, a label encoding as its text (JSON-serialisable)."""
    if isinstance(v, LabelEncoding):
        return str(v)
    return v.item() if isinstance(v, (np.integer, np.floating, np.bool_)) else v


def _scalars(values: dict) -> dict:
    """The JSON-serialisable scalars of ``values`` (:func:`_plain`), the others left out."""
    return {k: p for k, v in values.items() for p in [_plain(v)] if _scalar(p)}


def _num(value: float | None) -> float | None:
    """A float, or None for None and NaN (JSON has no NaN)."""
    if value is None:
        return None
    value = float(value)
    return None if value != value else value


def result_item(method: str, quantity: str, estimate: float | None, low: float | None = None,
                high: float | None = None, confidence_level: float | None = None, **extra: Any) -> dict:
    """One result as plain Python, the one layout of every result's :meth:`Result.to_dict` and of each
    entry of the ``--json`` output's ``results`` (``cudbound.output.OUTPUT_SCHEMA``): the common keys
    first, then ``extra``; numbers as floats, None for a missing one or NaN."""
    return {"method": method, "quantity": quantity, "estimate": _num(estimate), "low": _num(low),
            "high": _num(high), "confidence_level": _num(confidence_level), **extra}


class NoConfidenceIntervalError(AttributeError):
    """The result is a point estimate: it has no confidence interval (the message says why).

    An ``AttributeError``, so ``hasattr(result, "confidence_interval")`` is False for such a result.
    """


class Result:
    """The vocabulary every result of the package speaks (after ``scipy.stats``' ``BootstrapResult``).

    * ``estimate``: the point estimate (an error rate, or an AUC);
    * ``confidence_interval``: a :class:`ConfidenceInterval` ``(low, high)``; a point estimate
      has none, and reading it raises :class:`NoConfidenceIntervalError` saying why;
    * ``confidence_level``: the level of the interval (None for a point estimate);
    * ``to_dict()``: plain Python (JSON-serialisable): ``method``, ``quantity`` (``"error"`` or
      ``"auc"``), ``estimate``, ``low``, ``high`` (None without an interval),
      ``confidence_level``, then the result's own scalar fields;
    * ``to_frame()``: a one-row pandas DataFrame (pandas is optional: an ImportError says how
      to install it when it is missing);
    * a short repr: the class name and a few fields, numbers to 4 significant digits.

    A result class sets ``quantity`` and ``method_name`` (the function that made it) and lists
    the fields of its repr in ``_repr_fields``.
    """

    quantity: ClassVar[str] = "error"
    method_name: ClassVar[str] = ""
    no_interval_reason: ClassVar[str | None] = None
    """Why this kind of result has no confidence interval (None: it has one)."""

    estimate: float
    confidence_interval: ConfidenceInterval
    confidence_level: float | None

    @property
    def has_confidence_interval(self) -> bool:
        return self.no_interval_reason is None

    def _method(self) -> str:
        return self.method_name

    def _repr_fields(self) -> dict:
        return {"estimate": self.estimate}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={_short(v)}' for k, v in self._repr_fields().items())})"

    def _extra_dict(self) -> dict:
        """The result's own scalar fields, after the common ones in :meth:`to_dict`."""
        return {}

    def to_dict(self) -> dict:
        """Plain-Python summary (JSON-serialisable): the common keys (:func:`result_item`, the
        ``--json`` output's layout), then the result's own."""
        low, high = self.confidence_interval if self.has_confidence_interval else (None, None)
        out = result_item(self._method(), self.quantity, self.estimate, low, high, self.confidence_level)
        out.update({k: v for k, v in _scalars(self._extra_dict()).items() if k not in out})
        return out

    def _row(self) -> dict:
        return self.to_dict()

    def to_frame(self) -> pd.DataFrame:
        """A one-row tidy pandas DataFrame (the columns of :meth:`to_dict`, for an interval
        :data:`FRAME_COLUMNS`); needs pandas."""
        return _pandas().DataFrame([self._row()])


class PointEstimateResult(Result):
    """A :class:`Result` without a confidence interval: ``confidence_level`` is None and reading
    ``confidence_interval`` raises :class:`NoConfidenceIntervalError` with ``no_interval_reason``."""

    no_interval_reason: ClassVar[str | None] = "it is a point estimate"

    @property
    def confidence_interval(self) -> ConfidenceInterval:  # type: ignore[override]  # read-only: there is none
        raise NoConfidenceIntervalError(f"{type(self).__name__} has no confidence interval: "
                                        f"{self.no_interval_reason}.")

    @property
    def confidence_level(self) -> None:  # type: ignore[override]
        return None


@renamed_fields(centre="estimate")
@dataclass(kw_only=True, repr=False)
class IntervalResult(Result):
    """What every interval method returns (CUD and the baselines alike): a :class:`Result`.

    Attributes
    ----------
    method : str
        Short name: ``"cud"``, ``"bs1"``, ``"bs2"``, ``"kohavi"``, ``"yang"``, ``"martin"``, ``"langford"``.
    confidence_interval : ConfidenceInterval
        (low, high), within [0, 1].
    confidence_level : float
    estimate : float
        The point estimate the interval is built around (training error for CUD, the
        .632 estimate for the baselines). ``centre`` is its old name (deprecated).
    n_samples : int
    seconds : float
        Wall time of the computation.
    details : dict
        Method-specific extras (effective sample sizes, bootstrap values, warnings).
    """

    method: str
    confidence_interval: ConfidenceInterval
    confidence_level: float
    estimate: float
    n_samples: int = 0
    seconds: float = 0.0
    details: dict = field(default_factory=dict)

    @property
    def low(self) -> float:
        return float(self.confidence_interval.low)

    @property
    def high(self) -> float:
        return float(self.confidence_interval.high)

    @property
    def width(self) -> float:
        return self.high - self.low

    def _method(self) -> str:
        return self.method

    def _repr_fields(self) -> dict:
        return {"method": self.method, "confidence_interval": self.confidence_interval,
                "confidence_level": _Shown(f"{self.confidence_level:g}"), **self._own_repr_fields()}

    def _own_repr_fields(self) -> dict:
        return {"estimate": float(self.estimate), "n_samples": self.n_samples}

    def _row(self) -> dict:
        return {"method": self.method, "low": self.low, "high": self.high, "centre": float(self.estimate),
                "width": self.width, "level": self.confidence_level, "n_samples": self.n_samples,
                "seconds": self.seconds}

    def plot(self, ax: Axes | None = None, **options: Any) -> Axes:
        """The interval as a one-row forest plot (:func:`cudbound.plotting.plot_intervals`); needs matplotlib."""
        from .plotting import plot_intervals
        return plot_intervals([self], ax=ax, **options)

    def to_frame(self) -> pd.DataFrame:
        """A one-row tidy pandas DataFrame: method, low, high, centre, width, level, n_samples, seconds
        (:data:`FRAME_COLUMNS`; ``centre`` is the estimate)."""
        return IntervalResults([self]).to_frame()

    def to_dict(self) -> dict:
        """Plain-Python summary (JSON-serialisable): one entry of the ``results`` list of the ``--json``
        output (:mod:`cudbound.output`); ``centre`` repeats the estimate."""
        out = super().to_dict()
        return {**out, "centre": out["estimate"], "n_samples": self.n_samples,
                "seconds": self.seconds,
                "details": _scalars(self.details)}


class IntervalResults(list):
    """The list of results :func:`cudbound.intervals` returns, with :meth:`to_frame`.

    >>> import numpy as np, cudbound
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2)); y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    >>> frame = cudbound.intervals(X, y, methods=["kohavi", "martin"], rng=1).to_frame()
    >>> list(frame["method"]), list(frame.columns[:3])
    (['kohavi', 'martin'], ['method', 'low', 'high'])
    """

    def plot(self, ax: Axes | None = None, **options: Any) -> Axes:
        """Forest plot of the intervals (:func:`cudbound.plotting.plot_intervals`, which takes
        ``labels``, ``title``, ``full_range`` and ``data_name``); needs matplotlib."""
        from .plotting import plot_intervals
        return plot_intervals(self, ax=ax, **options)

    def to_frame(self) -> pd.DataFrame:
        """A tidy pandas DataFrame, one row per interval (columns as :meth:`IntervalResult.to_frame`)."""
        return _pandas().DataFrame([r._row() for r in self], columns=list(FRAME_COLUMNS))


@dataclass
class SearchStats:
    """Per-replicate statistics of the branch and bound (arrays of length B).

    ``status`` is ``"exact"`` when the search closed; ``"bounded"`` when the
    quantile-targeted refinement stopped it on purpose once its bounds showed on which side
    of Q-hat it lies (``cudbound.quantile``: the interval is exact all the same);
    ``"solver_failure"`` when a node
    could not be solved by any solver (the replicate then holds a certified upper
    bound on Q^(b), never a value below it), ``"budget"`` when a node or time budget
    stopped the search (likewise an upper bound). ``fallbacks`` counts, per replicate,
    the hand-offs of a node (or the whole replicate) from one solver to another or to a
    certified bound; a replicate with fallbacks is still exact unless its status says
    otherwise. ``lower`` holds, per replicate, a value attained below Q^(b) (equal to it
    where exact), and ``decided`` says whether the bounds decided Q-hat (False only when
    budgets or solver failures left it open: the interval is then conservative).
    """

    nodes: np.ndarray
    solves: np.ndarray
    pruned: np.ndarray
    realisability_checks: np.ndarray
    screened: np.ndarray
    seconds: np.ndarray
    status: np.ndarray
    fallbacks: np.ndarray | None = None
    lower: np.ndarray | None = None
    decided: bool = True
    half_width_lower: float | None = None   # the exact Q-hat is at least this (k-th smallest of ``lower``)
    out_of_time: bool = False                # the interval's time budget ran out

    def __post_init__(self):
        if self.fallbacks is None:
            self.fallbacks = np.zeros(len(self.nodes), dtype=int)

    _PER_REPLICATE = ("nodes", "solves", "pruned", "realisability_checks", "screened", "seconds", "status")

    @classmethod
    def from_records(cls, records, *, lower=None, decided: bool = True, half_width_lower=None,
                     out_of_time: bool = False) -> "SearchStats":
        """Statistics of B search records (``SearchOutcome``), with the per-replicate lower
        bounds, whether the order statistic was decided, the lower side of its bracket and
        whether the time budget ran out (``cudbound.quantile``)."""
        cols = {name: [getattr(rec, name) for rec in records] for name in cls._PER_REPLICATE}
        arrays = {k: np.asarray(v, dtype=object if k == "status" else None) for k, v in cols.items()}
        fallbacks = np.asarray([getattr(rec, "fallbacks", 0) for rec in records], dtype=int)
        low = None if lower is None else np.asarray(lower, dtype=float)
        hwl = None if half_width_lower is None or not np.isfinite(half_width_lower) else float(half_width_lower)
        return cls(**arrays, fallbacks=fallbacks, lower=low, decided=bool(decided), half_width_lower=hwl,
                   out_of_time=bool(out_of_time))

    @property
    def n_inexact(self) -> int:
        """Replicates cut short by a budget or a solver failure (only these can widen the interval)."""
        return int(np.sum((self.status == "budget") | (self.status == "solver_failure")))

    @property
    def n_bounded(self) -> int:
        """Replicates the quantile-targeted refinement left bounded (exactly on one side of Q-hat)."""
        return int(np.sum(self.status == "bounded"))

    @property
    def fallbacks_total(self) -> int:
        """Hand-offs to another solver or to a certified bound, summed over the replicates."""
        return int(np.sum(self.fallbacks))  # type: ignore[arg-type]  # never None after __post_init__

    def summary(self) -> dict:
        """Medians and totals over the replicates, for printing."""
        return {
            "replicates": int(len(self.nodes)),
            "nodes_median": float(np.median(self.nodes)) if len(self.nodes) else 0.0,
            "nodes_total": int(np.sum(self.nodes)),
            "solves_median": float(np.median(self.solves)) if len(self.nodes) else 0.0,
            "solves_total": int(np.sum(self.solves)),
            "pruned_total": int(np.sum(self.pruned)),
            "realisability_checks_total": int(np.sum(self.realisability_checks)),
            "screened_median": float(np.median(self.screened)) if len(self.nodes) else 0.0,
            "seconds_median": float(np.median(self.seconds)) if len(self.nodes) else 0.0,
            "bounded": self.n_bounded,
            "not_exact": self.n_inexact,
            "solver_failures": int(np.sum(self.status == "solver_failure")),
            "budget_stops": int(np.sum(self.status == "budget")),
            "fallbacks_total": self.fallbacks_total,
            "replicates_with_fallbacks": int(np.sum(self.fallbacks > 0)),  # type: ignore[operator]  # see __post_init__
            "out_of_time": self.out_of_time,
        }


@renamed_fields(centre="estimate")
@dataclass(kw_only=True, repr=False)
class CUDResult(IntervalResult):
    """The CUD confidence set for the generalization error of beta-hat.

    Besides the :class:`IntervalResult` fields (``method="cud"``; ``estimate`` is the
    training error err_D(beta-hat), also readable as ``train_error``):

    Attributes
    ----------
    half_width : float
        Q-hat, the ceil(level * B)-th smallest replicate value (unclipped).
    bootstrap_distribution : ndarray
        The B replicate suprema Q^(b): exact where ``stats.status`` is ``"exact"``, otherwise a
        certified upper bound (``engine_options={"exact_distribution": True}`` makes them all exact).
    coef : ndarray
        beta-hat, the coefficients of the fitted classifier on the basis.
    alpha_n : float
    stats : SearchStats
        Per-replicate search statistics, lower bounds included.
    details : dict
        ``loss`` and ``basis`` (their names) and ``label_encoding`` (how the labels were
        mapped to -1/+1, a ``LabelEncoding``; None when given as -1/+1 to the design-level entry).

    Derived: ``train_error`` (= ``estimate``), ``n_resamples`` (B), ``bootstrap_lower``
    (``stats.lower``), ``conservative`` (True when budgets or solver failures left Q-hat
    undecided: the interval is then wider than the exact one, never narrower) and
    ``fallbacks`` (solver hand-offs over all replicates; those another solver resolved
    leave the interval exact).

    Examples
    --------
    >>> import numpy as np, cudbound
    >>> X = np.arange(12.0)[:, None]; y = np.where(X[:, 0] > 5.5, 1, -1); y[[2, 9]] *= -1
    >>> cudbound.cud_interval(X, y, n_resamples=20, rng=0)   # doctest: +ELLIPSIS
    CUDResult(method='cud', confidence_interval=ConfidenceInterval(low=..., high=...), confidence_level=0.95, train_error=0.1667, half_width=..., n_resamples=20, alpha_n=12, conservative=False)
    """

    method: str = "cud"
    half_width: float
    bootstrap_distribution: np.ndarray
    coef: np.ndarray
    alpha_n: float
    stats: SearchStats

    def _own_repr_fields(self) -> dict:
        return {"train_error": float(self.estimate), "half_width": float(self.half_width),
                "n_resamples": self.n_resamples, "alpha_n": self.alpha_n, "conservative": self.conservative}

    @property
    def train_error(self) -> float:
        """err_D(beta-hat), the centre of the set (the estimate)."""
        return float(self.estimate)

    @property
    def n_resamples(self) -> int:
        return int(len(self.bootstrap_distribution))

    @property
    def bootstrap_lower(self) -> np.ndarray | None:
        """Attained values below each Q^(b) (equal to it where exact)."""
        return self.stats.lower

    @property
    def label_encoding(self):
        return self.details.get("label_encoding")

    @property
    def conservative(self) -> bool:
        return (not self.stats.decided) or self.stats.n_inexact > 0

    @property
    def exact_replicates(self) -> np.ndarray:
        """Boolean mask: the replicates whose Q^(b) is known exactly."""
        return self.stats.status == "exact"

    @property
    def fallbacks(self) -> int:
        return self.stats.fallbacks_total

    @property
    def upper_gap(self) -> float:
        """How far the upper end could still move in: the certified half-width Q-hat minus the
        largest value the searches proved the exact Q-hat reaches (0 when Q-hat is exact; more
        when a budget cut the computation short: the exact interval's upper end then lies in
        [``high - upper_gap``, ``high``])."""
        if self.stats.decided or self.stats.half_width_lower is None:
            return 0.0
        return float(max(0.0, self.half_width - self.stats.half_width_lower))

    # [override]: not IntervalResult.plot's options (a CUD result draws its replicates, not a forest plot)
    def plot(self, ax: Axes | None = None, bins: int | str | Sequence[float] = "auto",  # type: ignore[override]
             title: str | None = None) -> Axes:
        """Histogram of the replicate suprema with Q_hat and the interval marked
        (:func:`cudbound.plotting.plot_replicates`); needs matplotlib."""
        from .plotting import plot_replicates
        return plot_replicates(self, ax=ax, bins=bins, title=title)

    def to_dict(self) -> dict:
        """Plain-Python summary (JSON-serialisable)."""
        out = super().to_dict()
        out["details"]["label_encoding"] = _plain(self.label_encoding)
        out.update({
            "loss": self.details.get("loss"),
            "basis": self.details.get("basis"),
            "label_encoding": out["details"]["label_encoding"],
            "train_error": self.train_error,
            "half_width": self.half_width,
            "alpha_n": self.alpha_n,
            "n_resamples": self.n_resamples,
            "coef": [float(c) for c in self.coef],
            "conservative": self.conservative,
            "upper_gap": self.upper_gap,
            "fallbacks": self.fallbacks,
            "search": self.stats.summary(),
        })
        return out
