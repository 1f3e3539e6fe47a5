"""The registry of AUC intervals and the front end auc_interval (issue 32)."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import RepeatedStratifiedKFold

from cudbound.auc import KernelRLS, cv_auc
from cudbound.auc.registry import auc_interval, get_method, method_names, register, unregister
from cudbound.compare import compare
from cudbound.resampling import OUT_OF_FOLD_STREAM, draw_folds, stream

BUILT_IN = ("delong", "delong_logit", "hanley_mcneil", "newcombe", "bootstrap_percentile", "bootstrap_bca", "cvauc",
            "cvauc_pooled")


def data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + rng.normal(size=n) > 0, "yes", "no")
    return X, y


def test_every_built_in_interval_is_registered_in_order():
    assert method_names() == BUILT_IN
    assert get_method("bootstrap_bca").options() == ["n_resamples"] and get_method("delong").options() == []
    assert get_method("cvauc_pooled").options() == ["ids"]
    assert get_method("cvauc").uses_folds and not get_method("newcombe").uses_folds


@pytest.mark.parametrize("method", BUILT_IN)
def test_the_front_end_is_the_method_on_the_out_of_fold_scores_of_cv_auc(method):
    X, y = data()
    model = KernelRLS(regparam=2.0)
    res = auc_interval(model, X, y, method=method, cv=4, rng=3)
    root = np.random.SeedSequence([int(v) for v in np.random.default_rng(3).integers(0, 2**63, size=4)])
    cv = cv_auc(model, X, y, cv=4, pooling="pooled", rng=3)                  # the same rng, the same folds
    labels = np.where(y == "yes", 1.0, -1.0)
    direct = get_method(method).function(labels, cv.scores, cv.folds, confidence_level=0.95,
                                         rng=np.random.default_rng(stream(root, method)))
    assert res.method == direct.method and res.confidence_interval == pytest.approx(direct.confidence_interval)
    assert res.estimate == pytest.approx(direct.estimate) and res.details["cv_folds"] == 4
    if method in ("delong", "hanley_mcneil", "newcombe", "bootstrap_percentile"):
        assert res.estimate == pytest.approx(cv.estimate)     # the pooled out-of-fold AUC
    if method in ("cvauc", "cvauc_pooled"):                   # the fold-averaged AUC
        assert res.estimate == pytest.approx(np.mean(cv_auc(model, X, y, cv=cv.folds).fold_auc))


def test_the_same_rng_gives_the_same_folds_everywhere():
    """cv_auc, auc_interval and the comparisons on out-of-fold predictions deal their K stratified
    folds from one stream, OUT_OF_FOLD_STREAM of the call's root seed: equal rng, equal folds (they
    drew three different splits for rng=0)."""
    X, y = data(n=50, seed=2)
    labels = np.where(y == "yes", 1.0, -1.0)
    root = np.random.SeedSequence([int(v) for v in np.random.default_rng(0).integers(0, 2**63, size=4)])
    want = draw_folds(labels, 5, 1, True, np.random.default_rng(stream(root, OUT_OF_FOLD_STREAM)))[0]
    model = KernelRLS()
    averaged = cv_auc(model, X, y, cv=5, rng=0)
    pooled = cv_auc(model, X, y, cv=5, pooling="pooled", rng=0)
    assert np.array_equal(averaged.folds, want) and np.array_equal(pooled.folds, want)
    on_oof = compare(model, LogisticRegression(), X, y, methods=["mcnemar", "delong"], rng=0, cv=5, pos_label="yes")
    assert all(np.array_equal(r.details["folds"], want) for r in on_oof)
    # auc_interval's folds, seen through its estimates: the AUCs of cv_auc's out-of-fold scores
    assert auc_interval(model, X, y, method="delong", cv=5, rng=0).estimate == pooled.estimate
    assert auc_interval(model, X, y, method="cvauc", cv=5, rng=0).estimate == averaged.estimate
    assert not np.array_equal(cv_auc(model, X, y, cv=5, rng=1).folds, want)


def test_the_front_end_is_reproducible_by_seed_and_takes_any_sklearn_classifier():
    X, y = data(seed=1)
    a = auc_interval(LogisticRegression(), X, y, method="bootstrap_percentile", rng=5, n_resamples=300)
    b = auc_interval(LogisticRegression(), X, y, method="bootstrap_percentile", rng=5, n_resamples=300)
    c = auc_interval(LogisticRegression(), X, y, method="bootstrap_percentile", rng=6, n_resamples=300)
    assert a.confidence_interval == b.confidence_interval and a.details["n_resamples"] == 300
    assert a.confidence_interval != c.confidence_interval


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "wilson"}, "unknown AUC interval(s) wilson"),
    ({"method": "delong", "n_resamples": 10}, "unknown option(s) ['n_resamples'] for AUC interval 'delong'"),
    ({"method": "delong", "cv": RepeatedStratifiedKFold(n_splits=4, n_repeats=2)}, "one held-out score"),
])
def test_bad_front_end_input_gives_one_clear_error(kwargs, message):
    X, y = data()
    with pytest.raises(ValueError) as info:
        auc_interval(KernelRLS(), X, y, **kwargs)
    assert message in str(info.value)


def test_a_new_interval_can_be_registered_and_named():
    from cudbound.auc.intervals import delong_interval

    def wide(labels, scores, folds, *, confidence_level=0.95, rng=None, factor=2.0):
        res = delong_interval(labels, scores, confidence_level=confidence_level)
        res.method = "wide"
        return res

    register("wide", wide, "DeLong, for a test")
    try:
        assert "wide" in method_names() and get_method("wide").options() == ["factor"]
        X, y = data()
        assert auc_interval(KernelRLS(), X, y, method="wide", rng=0, factor=3.0).method == "wide"
        with pytest.raises(ValueError, match="already registered"):
            register("wide", wide, "again")
    finally:
        unregister("wide")
    assert "wide" not in method_names()
    with pytest.raises(TypeError, match="must take"):
        register("bad", lambda labels, scores: None, "no folds")


def test_cvauc_pooled_clusters_by_the_groups_the_folds_were_made_of():
    from cudbound.auc.cvauc import cvauc_interval
    X, y = data(n=48, seed=2)
    groups = np.repeat(np.arange(16), 3)
    res = auc_interval(KernelRLS(), X, y, method="cvauc_pooled", cv=4, groups=groups, rng=0)
    cv = cv_auc(KernelRLS(), X, y, cv=4, groups=groups)
    direct = cvauc_interval(y, cv.scores, cv.folds, pooled=True, ids=groups, pos_label="yes")
    assert res.confidence_interval == pytest.approx(direct.confidence_interval)
    assert res.details["n_ids"] == 16
