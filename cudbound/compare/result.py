"""What every comparison of two classifiers returns: :class:`ComparisonResult`."""
from __future__ import annotations

import math
from typing import Any

from .._validation import check_confidence_level
from ..results import ConfidenceInterval, NoConfidenceIntervalError, Result, _scalars, _Shown
from ..statistics import ALTERNATIVES, check_alternative

__all__ = ["ComparisonResult", "ALTERNATIVES"]


class ComparisonResult(Result):
    """The result of a comparison of two classifiers A and B, a :class:`~cudbound.results.Result`.

    Attributes
    ----------
    method : str
        The registered name of the method (``"mcnemar"``, ``"tango"``, ``"delong"``,
        ``"ttest_5x2cv"``, ...).
    estimate : float
        The difference A - B (of the error rates, or of the AUCs: ``quantity`` says which), so that
        swapping A and B flips its sign.
    confidence_interval : ConfidenceInterval
        (low, high) for the difference at ``confidence_level`` (two-sided whatever ``alternative``);
        a test that gives none raises :class:`~cudbound.results.NoConfidenceIntervalError` saying why
        (``no_interval_reason``), and its ``confidence_level`` is None.
    statistic, pvalue : float or None
        The test statistic and its p-value for the null hypothesis of no difference, against
        ``alternative``; None for an interval that comes with no test.
    alternative : {"two-sided", "less", "greater"}
        As in scipy: ``"less"`` is the alternative that A's value is below B's.
    n_samples : int
    quantity : str
        ``"error difference"`` or ``"auc difference"``.
    details : dict
        The method's parts (counts, per-split differences, degrees of freedom, ...).
    """

    def __init__(self, *, method: str, estimate: float, statistic: float | None = None, pvalue: float | None = None,
                 confidence_interval: tuple[float, float] | None = None, confidence_level: float | None = None,
                 alternative: str = "two-sided", n_samples: int = 0, quantity: str = "error difference",
                 no_interval_reason: str | None = None, details: dict | None = None, seconds: float = 0.0):
        if confidence_interval is None and not no_interval_reason:
            raise ValueError("a ComparisonResult without a confidence interval needs `no_interval_reason`.")
        self.method = method
        self.estimate = float(estimate)
        self.statistic = None if statistic is None else float(statistic)
        self.pvalue = None if pvalue is None else float(pvalue)
        self._interval = None if confidence_interval is None else ConfidenceInterval(*map(float, confidence_interval))
        self._level = None if self._interval is None else check_confidence_level(confidence_level)
        self.alternative = check_alternative(alternative)
        self.n_samples = int(n_samples)
        self.quantity = quantity  # type: ignore[misc]  # per result here, not per class
        self.no_interval_reason = None if self._interval is not None else no_interval_reason  # type: ignore[misc]
        self.details = {} if details is None else details
        self.seconds = float(seconds)

    @property
    def has_confidence_interval(self) -> bool:
        return self._interval is not None

    @property
    def confidence_interval(self) -> ConfidenceInterval:  # type: ignore[override]  # read-only: none for a test
        if self._interval is None:
            raise NoConfidenceIntervalError(f"{self.method} gives no confidence interval: {self.no_interval_reason}.")
        return self._interval

    @property
    def confidence_level(self) -> float | None:  # type: ignore[override]  # None without an interval
        return self._level

    @property
    def low(self) -> float:
        return self.confidence_interval.low

    @property
    def high(self) -> float:
        return self.confidence_interval.high

    def _method(self) -> str:
        return self.method

    def _repr_fields(self) -> dict:
        out: dict[str, Any] = {"method": self.method, "estimate": self.estimate}
        if self._interval is not None:
            out["confidence_interval"] = self._interval
            out["confidence_level"] = _Shown(f"{self._level:g}")
        if self.statistic is not None:
            out["statistic"] = self.statistic
        if self.pvalue is not None:
            out["pvalue"] = self.pvalue
        if self.alternative != "two-sided":
            out["alternative"] = self.alternative
        return out

    def _extra_dict(self) -> dict:
        return {"statistic": _finite_or_none(self.statistic), "pvalue": self.pvalue, "alternative": self.alternative,
                "n_samples": self.n_samples, "seconds": self.seconds, "no_interval_reason": self.no_interval_reason}

    def _row(self) -> dict:
        """The row of :meth:`to_frame`: :meth:`to_dict` without the nested ``details``."""
        return {k: v for k, v in self.to_dict().items() if k != "details"}

    def to_dict(self) -> dict:
        """Plain-Python summary (JSON-serialisable): the common keys of
        :func:`cudbound.results.result_item`, then ``statistic``, ``pvalue``, ``alternative``,
        ``n_samples``, ``seconds``, ``no_interval_reason`` and the scalar ``details``."""
        out = super().to_dict()
        for key in ("statistic", "no_interval_reason"):   # None is a value here (JSON null)
            out.setdefault(key, None)
        out.setdefault("pvalue", None)
        out["details"] = _scalars(self.details)
        return out


def _finite_or_none(value):
    """A statistic as JSON takes it: an infinite one (a zero variance) as its sign in a string."""
    if value is None or math.isfinite(value):
        return value
    return None if value != value else ("inf" if value > 0 else "-inf")


def ratio_statistic(numerator: float, scale: float) -> float:
    """numerator / scale, with the degenerate cases of a zero scale defined: 0 when the numerator is
    0 too (no difference at all: p-value 1), +/-inf otherwise (p-value 0)."""
    if scale > 0.0:
        return numerator / scale
    return 0.0 if numerator == 0.0 else math.copysign(math.inf, numerator)


def clipped(low: float, high: float, bound: float = 1.0) -> tuple[float, float]:
    """An interval of a difference of two rates within [-bound, bound]."""
    return max(-bound, float(low)), min(bound, float(high))

