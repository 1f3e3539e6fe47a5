"""One result of every result class of the package, made on small data (tests/test_results.py
checks the common vocabulary on them, tests/test_deprecation.py the old field names)."""
import numpy as np

import cudbound


def small_data(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """24 rows, 2 features, labels -1/+1 from the first feature plus noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(24, 2))
    return X, np.where(X[:, 0] + 0.7 * rng.normal(size=24) > 0, 1, -1)


def _interval(X, y):
    return cudbound.intervals(X, y, methods=["kohavi"], rng=0)[0]


def _cud(X, y):
    return cudbound.cud_interval(X, y, n_resamples=20, rng=0)


def _error_estimate(X, y):
    from cudbound.baselines import estimate_error
    return estimate_error(X, y, "632", rng=0)


def _cv_auc(X, y):
    from cudbound.auc import KernelRLS, cv_auc
    return cv_auc(KernelRLS(), X, y, cv=4, rng=0)


def _lpo_auc(X, y):
    from cudbound.auc import KernelRLS, lpo_auc
    return lpo_auc(KernelRLS(), X, y)


def _auc_interval(X, y):
    from cudbound.auc import KernelRLS, auc_interval
    return auc_interval(KernelRLS(), X, y, method="newcombe", cv=4, rng=0)


def _xi_alpha(X, y):
    from cudbound.svm import xi_alpha
    return xi_alpha(X, y, C=1.0)


def _loo(X, y):
    from cudbound.svm import loo_error
    return loo_error(X, y, C=1.0)


def _comparison(X, y):
    from sklearn.dummy import DummyClassifier

    from cudbound.compare import Procedure, corrected_t_test
    return corrected_t_test(Procedure(), DummyClassifier(), X, y, cv=4, repeats=2, rng=0)


MAKERS = {"IntervalResult": _interval, "CUDResult": _cud, "ErrorEstimate": _error_estimate,
          "CVAUCResult": _cv_auc, "LPOAUCResult": _lpo_auc, "XiAlphaEstimate": _xi_alpha, "LOOResult": _loo,
          "ComparisonResult": _comparison, "AUCIntervalResult": _auc_interval}
"""Result class name -> a function of (X, y) returning one such result."""
