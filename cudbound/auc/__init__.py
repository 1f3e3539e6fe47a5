"""The AUC of a classifier from a small sample: estimates under cross-validation and intervals.

* :mod:`cudbound.auc.scores`: the AUC of one score vector (:func:`auc_score`) and DeLong's
  placement values (:func:`delong_placements`, Sun & Xu's midranks);
* :mod:`cudbound.auc.cv`: the AUC under cross-validation, pooled, averaged and leave-pair-out
  (Suominen, Pahikkala & Salakoski 2008; :func:`cv_auc`, :func:`lpo_auc`, :class:`KernelRLS`);
* :mod:`cudbound.auc.result`: :class:`AUCIntervalResult`, what every AUC interval returns.

``docs/auc.md`` states the formulas and the references.
"""
from .cv import CVAUCResult, KernelRLS, LPOAUCResult, OneClassFoldWarning, cv_auc, lpo_auc
from .result import AUCIntervalResult
from .scores import DeLongPlacements, auc_score, delong_placements

__all__ = ["KernelRLS", "auc_score", "cv_auc", "lpo_auc", "CVAUCResult", "LPOAUCResult", "OneClassFoldWarning",
           "delong_placements", "DeLongPlacements", "AUCIntervalResult"]
