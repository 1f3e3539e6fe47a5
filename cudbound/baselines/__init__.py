"""Baselines: the intervals the CUD paper compares with, their point estimators, hold-out bounds.

* :mod:`cudbound.baselines.estimators`: resubstitution, Err(1), .632, .632+, CV, LOO.
* :mod:`cudbound.baselines.methods`: BS1, BS2, K, Y, M, L (Laber & Murphy 2008).
* :mod:`cudbound.baselines.modern`: the intervals in use today: Wald-CV, corrected t,
  conservative Z, nested CV, BCCV, .632+ with a delta-method SE.
* :mod:`cudbound.baselines.holdout`: Shah's (2008) binomial tail inversion bounds and
  Gaussian interval for a test set.

The registry of every interval method, CUD included, and :func:`cudbound.registry.intervals`,
which runs any of them on one data set, are in :mod:`cudbound.registry`.

Definitions and defaults: ``docs/method.md``, section "Baselines, as this project defines them".
"""
from __future__ import annotations

from ..resampling import bootstrap_counts, fold_assignments
from ..statistics import basic_interval, percentile_interval, wilson_interval
from .estimators import (ESTIMATORS, DegenerateResampleWarning, ErrorEstimate, cross_validation, e632, e632plus,
                         estimate_error, leave_one_out, loo_bootstrap, resubstitution)
from .holdout import binomial_interval, binomial_lower, binomial_upper, gaussian_interval
from .modern import (bccv, conservative_z, conservative_z_interval, corrected_t, corrected_t_interval,
                     delta_method_se, e632_delta, nested_cv, wald_cv, wald_interval)
from .methods import (beta_interval, bootstrap_632_distribution, bs1, bs2, kohavi, langford, martin, normal_interval,
                      yang)

__all__ = [
    "DegenerateResampleWarning", "ErrorEstimate",
    "resubstitution", "loo_bootstrap", "e632", "e632plus", "cross_validation", "leave_one_out",
    "estimate_error", "bootstrap_counts", "fold_assignments", "ESTIMATORS",
    "bs1", "bs2", "kohavi", "yang", "martin", "langford",
    "percentile_interval", "basic_interval", "normal_interval", "wilson_interval", "beta_interval", "bootstrap_632_distribution",
    "wald_cv", "corrected_t", "conservative_z", "nested_cv", "bccv", "e632_delta",
    "wald_interval", "corrected_t_interval", "conservative_z_interval", "delta_method_se",
    "binomial_upper", "binomial_lower", "binomial_interval", "gaussian_interval",
]
