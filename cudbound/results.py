"""Result objects, in the style of ``scipy.stats.bootstrap``'s ``BootstrapResult``, and the one row
layout they share.

Every result of the package is a :class:`Result`; its :meth:`~Result.to_dict` is its row, whose first
keys are :data:`COMMON_COLUMNS` (``method``, ``quantity``, ``estimate``, ``low``, ``high``,
``confidence_level``, ``n_samples``), the result's own fields after them. ``quantity`` is one of
:data:`QUANTITIES`. A list of results (:class:`ResultList`, what :func:`cudbound.intervals` and
:func:`cudbound.compare.compare` return) makes one table of these rows (:meth:`ResultList.to_frame`)
and one forest plot (:meth:`ResultList.plot`). A number a result does not have (the bounds and level
of a point estimate, a NaN) is None in ``to_dict()`` (JSON's null) and NaN in ``to_frame()``
(pandas' missing value).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np

from ._validation import LabelEncoding

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = ["ConfidenceInterval", "Result", "PointEstimateResult", "NoConfidenceIntervalError", "IntervalResult",
           "ResultList", "SearchStats", "CUDResult", "result_item", "check_quantity", "COMMON_COLUMNS",
           "QUANTITIES", "DIFFERENCES", "ERROR_RATE", "AUC", "ERROR_RATE_DIFFERENCE", "AUC_DIFFERENCE", "RECALL",
           "PRECISION", "F1", "COVERAGE"]

ERROR_RATE = "error rate"
"""The quantity of an interval or estimate of a classifier's generalization error."""
AUC = "AUC"
"""The quantity of an interval or estimate of the area under the ROC curve."""
ERROR_RATE_DIFFERENCE = "difference of error rates"
"""The quantity of a comparison of two classifiers' error rates, A - B."""
AUC_DIFFERENCE = "difference of AUCs"
"""The quantity of a comparison of two classifiers' AUCs, A - B."""
RECALL, PRECISION, F1 = "recall", "precision", "F1 score"
"""The quantities of the xi-alpha and leave-one-out rows of ``cudbound xi-alpha``."""
COVERAGE = "coverage"
"""The quantity of a coverage study's cell: the fraction of repetitions whose interval holds the target."""
QUANTITIES = (ERROR_RATE, AUC, ERROR_RATE_DIFFERENCE, AUC_DIFFERENCE, RECALL, PRECISION, F1, COVERAGE)
"""Every value of ``quantity`` (one vocabulary for the results, their tables and the ``--json`` output)."""
DIFFERENCES = (ERROR_RATE_DIFFERENCE, AUC_DIFFERENCE)
"""The quantities that are a difference A - B of two classifiers (drawn with the zero line)."""

COMMON_COLUMNS = ("method", "quantity", "estimate", "low", "high", "confidence_level", "n_samples")
"""The leading keys of every result's :meth:`~Result.to_dict` and columns of every ``to_frame()``."""

_NUMERIC_COLUMNS = ("estimate", "low", "high", "confidence_level")


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


def _short(v, key: str = "") -> str:
    if key == "confidence_level" and isinstance(v, (float, np.floating)):
        return f"{float(v):g}"
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


def check_quantity(quantity: Any) -> str:
    """``quantity`` if it is one of :data:`QUANTITIES` (a ValueError otherwise)."""
    if quantity not in QUANTITIES:
        raise ValueError(f"`quantity` must be one of {list(QUANTITIES)}; got {quantity!r}.")
    return quantity


def result_item(method: str, quantity: str, estimate: float | None, low: float | None = None,
                high: float | None = None, confidence_level: float | None = None, n_samples: int | None = None,
                **extra: Any) -> dict:
    """One result as plain Python, the one row layout of every result's :meth:`Result.to_dict` and of
    each entry of the ``--json`` output's ``results`` (``cudbound.output.OUTPUT_SCHEMA``): the keys of
    :data:`COMMON_COLUMNS` first, then ``extra``; numbers as floats, None for a missing one or NaN.

    >>> result_item("lpo_auc", AUC, 0.8125, n_samples=24)
    {'method': 'lpo_auc', 'quantity': 'AUC', 'estimate': 0.8125, 'low': None, 'high': None, 'confidence_level': None, 'n_samples': 24}
    """
    return {"method": method, "quantity": check_quantity(quantity), "estimate": _num(estimate), "low": _num(low),
            "high": _num(high), "confidence_level": _num(confidence_level),
            "n_samples": None if n_samples is None else int(n_samples), **extra}


class NoConfidenceIntervalError(AttributeError):
    """The result is a point estimate: it has no confidence interval (the message says why).

    An ``AttributeError``, so ``hasattr(result, "confidence_interval")`` is False for such a result.
    """


@dataclass(kw_only=True, repr=False, eq=False)
class Result:
    """The base of every result of the package (after ``scipy.stats``' ``BootstrapResult``).

    Attributes
    ----------
    method : str
        The method's name (``"cud"``, ``"kohavi"``, ``"delong"``, ``"cv_auc"``, ``"xi_alpha"``, ...).
    estimate : float
        The point estimate: an error rate, an AUC, or a difference of two (``quantity`` says which).
    n_samples : int
        The number of data points the result was computed from.
    quantity : str
        What is estimated, one of :data:`QUANTITIES` (``"error rate"``, ``"AUC"``,
        ``"difference of error rates"``, ``"difference of AUCs"``, ...).
    details : dict
        Method-specific extras (their scalars go to ``to_dict()["details"]``).

    Besides: ``confidence_interval``, a :class:`ConfidenceInterval` ``(low, high)``, also read as
    ``low`` and ``high`` (a result without an interval raises :class:`NoConfidenceIntervalError`,
    saying why, and ``has_confidence_interval`` is False); ``confidence_level`` (None without an
    interval); ``to_dict()``, the result's row (:data:`COMMON_COLUMNS`, then the result's own fields,
    then ``details``: plain Python, JSON-serialisable); ``to_frame()``, that row as a one-row pandas
    DataFrame; ``plot()``; and a short repr, the class name and a few fields (numbers to 4 significant
    digits, :meth:`_repr_fields`).
    """

    method: str
    estimate: float
    n_samples: int
    quantity: str = ERROR_RATE
    details: dict = field(default_factory=dict)

    no_interval_reason: ClassVar[str | None] = None
    """Why this kind of result has no confidence interval (None: it has one)."""

    def __post_init__(self) -> None:
        check_quantity(self.quantity)

    def _interval(self) -> tuple[ConfidenceInterval, float] | None:
        """The interval and its level, None without one (the one hook the common columns read)."""
        return None

    def _missing_interval(self) -> NoConfidenceIntervalError:
        return NoConfidenceIntervalError(f"{type(self).__name__} ({self.method}) has no confidence interval: "
                                         f"{self.no_interval_reason}.")

    @property
    def has_confidence_interval(self) -> bool:
        return self._interval() is not None

    def _bounds(self) -> ConfidenceInterval:
        interval = self._interval()
        if interval is None:
            raise self._missing_interval()
        return interval[0]

    @property
    def low(self) -> float:
        """The lower end of the interval (:class:`NoConfidenceIntervalError` without one)."""
        return float(self._bounds().low)

    @property
    def high(self) -> float:
        """The upper end of the interval (:class:`NoConfidenceIntervalError` without one)."""
        return float(self._bounds().high)

    @property
    def is_difference(self) -> bool:
        """Whether the estimate is a difference A - B of two classifiers (:data:`DIFFERENCES`)."""
        return self.quantity in DIFFERENCES

    def _repr_fields(self) -> dict:
        return {"estimate": self.estimate}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={_short(v, k)}' for k, v in self._repr_fields().items())})"

    def _extra_dict(self) -> dict:
        """The result's own fields, after :data:`COMMON_COLUMNS` in :meth:`to_dict` (scalars only)."""
        return {}

    def to_dict(self) -> dict:
        """The result's row as plain Python (JSON-serialisable): :data:`COMMON_COLUMNS`
        (:func:`result_item`, the ``--json`` output's layout), the result's own scalar fields, then
        ``details`` (its scalars)."""
        interval = self._interval()
        ci, level = (None, None) if interval is None else interval
        out = result_item(self.method, self.quantity, self.estimate, None if ci is None else ci.low,
                          None if ci is None else ci.high, level, self.n_samples)
        out.update({k: v for k, v in _scalars(self._extra_dict()).items() if k not in out})
        out["details"] = _scalars(self.details)
        return out

    def _row(self) -> dict:
        """The row of :meth:`to_frame`: :meth:`to_dict` without its nested values (``details``, ...)."""
        return {k: v for k, v in self.to_dict().items() if _scalar(v)}

    def to_frame(self) -> pd.DataFrame:
        """A one-row tidy pandas DataFrame: :data:`COMMON_COLUMNS`, then the result's own scalar fields
        (:meth:`ResultList.to_frame`); needs pandas."""
        return ResultList([self]).to_frame()

    def plot(self, ax: Axes | None = None, **options: Any) -> Axes:
        """The result as a one-row forest plot (:func:`cudbound.plotting.plot_intervals`); needs matplotlib."""
        return ResultList([self]).plot(ax=ax, **options)


class ResultList(list):
    """A list of results, what :func:`cudbound.intervals` and :func:`cudbound.compare.compare` return,
    with one table (:meth:`to_frame`) and one picture (:meth:`plot`); ``skipped``, the names of the
    methods a call left out (:func:`cudbound.intervals`: not started when its time limit ran out).

    >>> import numpy as np, cudbound
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2)); y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    >>> frame = cudbound.intervals(X, y, methods=["kohavi", "martin"], rng=1).to_frame()
    >>> list(frame["method"]), list(frame.columns[:7])
    (['kohavi', 'martin'], ['method', 'quantity', 'estimate', 'low', 'high', 'confidence_level', 'n_samples'])
    """

    def __init__(self, results: Iterable[Any] = (), *, skipped: Sequence[str] = ()) -> None:
        super().__init__(results)
        self.skipped: tuple[str, ...] = tuple(skipped)

    def plot(self, ax: Axes | None = None, **options: Any) -> Axes:
        """Forest plot of the results (:func:`cudbound.plotting.plot_intervals`, which takes ``labels``,
        ``title``, ``full_range`` and ``data_name``): intervals, or differences A - B with the zero line;
        needs matplotlib."""
        from .plotting import plot_intervals
        return plot_intervals(self, ax=ax, **options)

    def to_frame(self) -> pd.DataFrame:
        """A tidy pandas DataFrame, one row per result (:meth:`Result.to_dict` without its nested
        values): :data:`COMMON_COLUMNS` first, then every other column in the order the rows first
        name it (NaN where a row has none); needs pandas."""
        pandas = _pandas()
        rows = [r._row() for r in self]
        others = [k for k in dict.fromkeys(k for row in rows for k in row) if k not in COMMON_COLUMNS]
        frame = pandas.DataFrame(rows, columns=[*COMMON_COLUMNS, *others])
        for column in _NUMERIC_COLUMNS:
            frame[column] = frame[column].astype(float)
        return frame


@dataclass(kw_only=True, repr=False)
class PointEstimateResult(Result):
    """A :class:`Result` without a confidence interval: ``confidence_level`` is None and reading
    ``confidence_interval`` (or ``low``, ``high``) raises :class:`NoConfidenceIntervalError` with
    ``no_interval_reason``; its row's ``low``, ``high`` and ``confidence_level`` are missing."""

    no_interval_reason: ClassVar[str | None] = "it is a point estimate"

    @property
    def confidence_interval(self) -> ConfidenceInterval:
        raise self._missing_interval()

    @property
    def confidence_level(self) -> None:
        return None


@dataclass(kw_only=True, repr=False)
class IntervalResult(Result):
    """What every interval method returns (CUD and the baselines alike): a :class:`Result` with an interval.

    Attributes
    ----------
    method : str
        Short name: ``"cud"``, ``"bs1"``, ``"bs2"``, ``"kohavi"``, ``"yang"``, ``"martin"``, ``"langford"``, ...
    confidence_interval : ConfidenceInterval
        (low, high), within [0, 1].
    confidence_level : float
    estimate : float
        The point estimate the interval is built around (training error for CUD, the
        .632 estimate for the paper's baselines).
    n_samples : int
    seconds : float
        Wall time of the computation (CUD's leaves out the time numba spent compiling kernels in
        this process on a first run: ``details["compile_seconds"]``; from :func:`cudbound.intervals`,
        every method's does, and includes its share of the work it shares with others).
    details : dict
        Method-specific extras (effective sample sizes, bootstrap values, warnings).
    """

    confidence_interval: ConfidenceInterval
    confidence_level: float
    seconds: float = 0.0

    def _interval(self) -> tuple[ConfidenceInterval, float]:
        return self.confidence_interval, self.confidence_level

    @property
    def width(self) -> float:
        return self.high - self.low

    def _repr_fields(self) -> dict:
        return {"method": self.method, "confidence_interval": self.confidence_interval,
                "confidence_level": self.confidence_level, **self._own_repr_fields()}

    def _own_repr_fields(self) -> dict:
        return {"estimate": float(self.estimate), "n_samples": self.n_samples}

    def _extra_dict(self) -> dict:
        return {"width": self.width, "seconds": self.seconds}


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

    # [override]: not Result.plot's options (a CUD result draws its replicates, not a forest plot)
    def plot(self, ax: Axes | None = None, bins: int | str | Sequence[float] = "auto",  # type: ignore[override]
             title: str | None = None) -> Axes:
        """Histogram of the replicate suprema with Q_hat and the interval marked
        (:func:`cudbound.plotting.plot_replicates`); needs matplotlib."""
        from .plotting import plot_replicates
        return plot_replicates(self, ax=ax, bins=bins, title=title)

    def _extra_dict(self) -> dict:
        return {**super()._extra_dict(), "loss": self.details.get("loss"), "basis": self.details.get("basis"),
                "label_encoding": _plain(self.label_encoding), "train_error": self.train_error,
                "half_width": self.half_width, "alpha_n": self.alpha_n, "n_resamples": self.n_resamples,
                "conservative": self.conservative, "upper_gap": self.upper_gap, "fallbacks": self.fallbacks}

    def to_dict(self) -> dict:
        """Plain-Python summary (JSON-serialisable): :meth:`Result.to_dict`, then the coefficients
        (``coef``) and the search statistics (``search``, :meth:`SearchStats.summary`)."""
        return {**super().to_dict(), "coef": [float(c) for c in self.coef], "search": self.stats.summary()}
