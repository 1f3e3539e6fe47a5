"""The AUC of a classifier from a small sample: estimates under cross-validation and intervals.

* :mod:`cudbound.auc.scores`: the AUC of one score vector (:func:`auc_score`), of scored pairs
  (:func:`pair_auc`, the leave-pair-out AUC) and DeLong's placement values (:func:`delong_placements`, Sun & Xu's midranks);
* :mod:`cudbound.auc.cv`: the AUC under cross-validation, pooled, averaged and leave-pair-out
  (Suominen, Pahikkala & Salakoski 2008; :func:`cv_auc`, :func:`lpo_auc`, :class:`KernelRLS`);
* :mod:`cudbound.auc.intervals`: intervals for the AUC of one score vector (DeLong, on the logit
  scale too; Hanley & McNeil; Newcombe's score interval; the stratified bootstrap, percentile and BCa);
* :mod:`cudbound.auc.cvauc`: the influence-curve interval of a cross-validated AUC (LeDell,
  Petersen & van der Laan 2015; :func:`cvauc_interval`);
* :mod:`cudbound.auc.result`: :class:`AUCIntervalResult`, what every AUC interval returns;
* :mod:`cudbound.auc.registry`: every interval by name, and :func:`auc_interval`, which fits a
  learning procedure out of fold first (``cudbound auc --interval``, the third study).

``docs/auc.md`` states the formulas and the references.
"""
from .scores import DeLongPlacements, auc_score, delong_placements, pair_auc   # first: cudbound.compare needs it
from .cv import CVAUCResult, KernelRLS, LPOAUCResult, OneClassFoldWarning, cv_auc, lpo_auc
from .cvauc import cvauc_interval
from .intervals import (DegenerateIntervalWarning, bootstrap_interval, delong_interval, hanley_mcneil_interval,
                        newcombe_interval)
from .registry import auc_interval
from .result import AUCIntervalResult

__all__ = ["KernelRLS", "auc_score", "pair_auc", "cv_auc", "lpo_auc", "CVAUCResult", "LPOAUCResult", "OneClassFoldWarning",
           "delong_placements", "DeLongPlacements", "AUCIntervalResult", "delong_interval", "hanley_mcneil_interval",
           "newcombe_interval", "bootstrap_interval", "cvauc_interval", "auc_interval",
           "DegenerateIntervalWarning"]
