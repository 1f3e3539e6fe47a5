"""Every result the package returns, made by its public functions on small data
(tests/test_results.py checks the common row layout and vocabulary on them)."""
import numpy as np

import cudbound


def small_data(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """24 rows, 2 features, labels -1/+1 from the first feature plus noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(24, 2))
    return X, np.where(X[:, 0] + 0.7 * rng.normal(size=24) > 0, 1, -1)


def every_result(X, y) -> dict:
    """label -> result, from every public function that returns one: ``cud_interval``, every method of
    ``intervals``, every point estimator, every comparison of ``compare``, every AUC interval of
    ``auc_interval``, ``cv_auc`` (both poolings), ``lpo_auc`` (closed form and refits), ``xi_alpha``
    and ``loo_error``; the lists ``intervals`` and ``compare`` return under "intervals" and "compare"."""
    from sklearn.dummy import DummyClassifier
    from sklearn.linear_model import RidgeClassifier

    from cudbound.auc import KernelRLS, auc_interval, cv_auc, lpo_auc
    from cudbound.auc.registry import method_names as auc_methods
    from cudbound.baselines import ESTIMATORS, estimate_error
    from cudbound.compare import Procedure, compare, method_names
    from cudbound.svm import loo_error, xi_alpha

    out = {"cud_interval": cudbound.cud_interval(X, y, n_resamples=20, rng=0)}
    out["intervals"] = cudbound.intervals(X, y, methods="all", rng=0, cud_options={"n_resamples": 20})
    out.update({f"intervals:{r.method}": r for r in out["intervals"]})
    out.update({f"estimate_error:{m}": estimate_error(X, y, m, **({} if m in ("resubstitution", "loo") else {"rng": 0}))
                for m in ESTIMATORS})
    # every comparison but cud, whose classifiers must have a loss (a DummyClassifier has none)
    out["compare"] = compare(Procedure(), DummyClassifier(), X, y, methods=[m for m in method_names() if m != "cud"],
                             rng=0, corrected_t_options={"repeats": 2}, nested_cv_options={"repeats": 2, "bias_repeats": 2})
    out.update({f"compare:{r.method}": r for r in out["compare"]})
    out["compare:cud"] = compare(Procedure(), Procedure(loss="hinge"), X, y, methods=["cud"], rng=0,
                                 cud_options={"n_resamples": 20})[0]
    out.update({f"auc_interval:{m}": auc_interval(KernelRLS(), X, y, method=m, cv=4, rng=0,
                                                  **({"n_resamples": 200} if m.startswith("bootstrap") else {}))
                for m in auc_methods()})
    out.update({f"cv_auc:{p}": cv_auc(KernelRLS(), X, y, cv=4, pooling=p, rng=0) for p in ("averaged", "pooled")})
    out["lpo_auc:closed form"] = lpo_auc(KernelRLS(), X, y)
    out["lpo_auc:refits"] = lpo_auc(RidgeClassifier(), X, y)
    out["xi_alpha"] = xi_alpha(X, y, C=1.0)
    out["loo_error"] = loo_error(X, y, C=1.0)
    return out
