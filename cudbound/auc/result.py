"""What every AUC interval returns: :class:`AUCIntervalResult`."""
from __future__ import annotations

from dataclasses import dataclass

from ..results import AUC, IntervalResult

__all__ = ["AUCIntervalResult"]


@dataclass(kw_only=True, repr=False)
class AUCIntervalResult(IntervalResult):
    """An interval for an AUC, an :class:`~cudbound.results.IntervalResult` whose ``quantity`` is ``"AUC"``.

    Attributes
    ----------
    method : str
        The registered name of the interval (``"delong"``, ``"delong_logit"``, ``"hanley_mcneil"``,
        ``"newcombe"``, ``"bootstrap_percentile"``, ``"bootstrap_bca"``, ``"cvauc"``, ``"cvauc_pooled"``).
    estimate : float
        The AUC the interval is built around.
    confidence_interval : ConfidenceInterval
        (low, high), within [0, 1] unless the method says otherwise (``details["clipped"]``).
    confidence_level : float
    standard_error : float or None
        The standard error of ``estimate`` the interval rests on (None for a bootstrap percentile
        or BCa interval, which rests on the resampled AUCs).
    n_samples : int
        The number of scored points.
    details : dict
        The method's parts (class counts, the variance components, the number of resamples, ...).
    """

    quantity: str = AUC
    standard_error: float | None = None

    def _own_repr_fields(self) -> dict:
        return {"estimate": float(self.estimate), "standard_error": self.standard_error, "n_samples": self.n_samples}

    def _extra_dict(self) -> dict:
        return {"standard_error": self.standard_error, **super()._extra_dict()}
