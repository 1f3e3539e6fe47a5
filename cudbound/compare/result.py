"""What every comparison of two classifiers returns: :class:`ComparisonResult`."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .._validation import check_confidence_level
from ..results import DIFFERENCES, ERROR_RATE_DIFFERENCE, ConfidenceInterval, Result
from ..statistics import ALTERNATIVES, check_alternative

__all__ = ["ComparisonResult", "ALTERNATIVES"]


@dataclass(kw_only=True, repr=False, eq=False, init=False)
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
        ``"difference of error rates"`` (:data:`~cudbound.results.ERROR_RATE_DIFFERENCE`) or
        ``"difference of AUCs"`` (:data:`~cudbound.results.AUC_DIFFERENCE`).
    seconds : float
    details : dict
        The method's parts (counts, per-split differences, degrees of freedom, ...).
    """

    quantity: str = ERROR_RATE_DIFFERENCE
    statistic: float | None = None
    pvalue: float | None = None
    alternative: str = "two-sided"
    seconds: float = 0.0

    def __init__(self, *, method: str, estimate: float, n_samples: int, statistic: float | None = None,
                 pvalue: float | None = None, confidence_interval: tuple[float, float] | None = None,
                 confidence_level: float | None = None, alternative: str = "two-sided",
                 quantity: str = ERROR_RATE_DIFFERENCE, no_interval_reason: str | None = None,
                 details: dict | None = None, seconds: float = 0.0):
        if confidence_interval is None and not no_interval_reason:
            raise ValueError("a ComparisonResult without a confidence interval needs `no_interval_reason`.")
        if quantity not in DIFFERENCES:
            raise ValueError(f"`quantity` of a comparison must be one of {list(DIFFERENCES)}; got {quantity!r}.")
        self.method = method
        self.estimate = float(estimate)
        self.n_samples = int(n_samples)
        self.quantity = quantity
        self.details = {} if details is None else details
        self.statistic = None if statistic is None else float(statistic)
        self.pvalue = None if pvalue is None else float(pvalue)
        self._ci = None if confidence_interval is None else ConfidenceInterval(*map(float, confidence_interval))
        self._level = None if self._ci is None else check_confidence_level(confidence_level)
        self.alternative = check_alternative(alternative)
        self.no_interval_reason = None if self._ci is not None else no_interval_reason  # type: ignore[misc]
        self.seconds = float(seconds)

    def _interval(self) -> tuple[ConfidenceInterval, float] | None:
        return None if self._ci is None or self._level is None else (self._ci, self._level)

    @property
    def confidence_interval(self) -> ConfidenceInterval:
        """(low, high) for A - B (:class:`~cudbound.results.NoConfidenceIntervalError` for a test that gives none)."""
        if self._ci is None:
            raise self._missing_interval()
        return self._ci

    @property
    def confidence_level(self) -> float | None:
        return self._level

    def _repr_fields(self) -> dict:
        out: dict[str, Any] = {"method": self.method, "estimate": self.estimate}
        if self._ci is not None:
            out["confidence_interval"] = self._ci
            out["confidence_level"] = self._level
        if self.statistic is not None:
            out["statistic"] = self.statistic
        if self.pvalue is not None:
            out["pvalue"] = self.pvalue
        if self.alternative != "two-sided":
            out["alternative"] = self.alternative
        return out

    def _extra_dict(self) -> dict:
        return {"statistic": _finite_or_none(self.statistic), "pvalue": self.pvalue, "alternative": self.alternative,
                "seconds": self.seconds, "no_interval_reason": self.no_interval_reason}


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

