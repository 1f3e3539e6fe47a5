"""One result row (cudbound/results.py: Result, ResultList, result_item): every result the
package returns, made by the public functions, has the same leading columns in ``to_frame()`` and
the same leading keys in ``to_dict()``, in the same order, with one vocabulary of quantities; the
lists of ``intervals`` and ``compare`` are ResultLists; every result speaks the common vocabulary
(estimate, confidence_interval or why it has none, confidence_level, a short repr)."""
import importlib
import json
import math
import pkgutil
import sys

import numpy as np
import pytest

import cudbound
from cudbound.results import (AUC, AUC_DIFFERENCE, COMMON_COLUMNS, ERROR_RATE, ERROR_RATE_DIFFERENCE, QUANTITIES,
                              ConfidenceInterval, IntervalResult, NoConfidenceIntervalError, Result, ResultList,
                              result_item)
from result_makers import every_result, small_data

pd = pytest.importorskip("pandas")

N = 24
EXPECTED_COLUMNS = ["method", "quantity", "estimate", "low", "high", "confidence_level", "n_samples"]


@pytest.fixture(scope="module")
def made():
    X, y = small_data(0)
    return every_result(X, y)


def _results(made):
    return {k: v for k, v in made.items() if isinstance(v, Result)}


def _result_classes():
    for info in pkgutil.walk_packages(cudbound.__path__, "cudbound."):
        if ".search" in info.name or ".optim" in info.name or info.name.endswith("__main__"):
            continue
        importlib.import_module(info.name)
    seen, todo = set(), [Result]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    return {c.__name__ for c in seen if c.__module__.startswith("cudbound.")} - {"PointEstimateResult"}


def test_the_common_columns_are_the_documented_ones():
    assert list(COMMON_COLUMNS) == EXPECTED_COLUMNS


def test_every_result_class_of_the_package_is_made_below(made):
    assert {type(r).__name__ for r in _results(made).values()} == _result_classes()


def test_every_registered_method_is_made_below(made):
    from cudbound.auc.registry import method_names as auc_methods
    from cudbound.compare import method_names as comparisons
    names = set(made)
    assert {f"intervals:{m}" for m in cudbound.method_names()} <= names
    assert {f"compare:{m}" for m in comparisons()} <= names
    assert {f"auc_interval:{m}" for m in auc_methods()} <= names


def _expected_quantity(label, res):
    if label.startswith("compare:"):
        return AUC_DIFFERENCE if res.method == "delong" else ERROR_RATE_DIFFERENCE
    if label.split(":")[0] in ("auc_interval", "cv_auc", "lpo_auc"):
        return AUC
    return ERROR_RATE


def _expected_method(label, res):
    kind, _, name = label.partition(":")
    return {"cud_interval": "cud", "cv_auc": "cv_auc", "lpo_auc": "lpo_auc", "xi_alpha": "xi_alpha",
            "loo_error": "loo_error"}.get(kind, name)


def test_every_result_has_the_common_row(made):
    """to_dict() and to_frame() of every result start with the common columns, in order, holding
    the result's own method, quantity, estimate, interval, level and sample size."""
    for label, res in _results(made).items():
        d = res.to_dict()
        assert list(d)[:7] == EXPECTED_COLUMNS, label
        frame = res.to_frame()
        assert list(frame.columns)[:7] == EXPECTED_COLUMNS and frame.shape[0] == 1, label
        row = frame.iloc[0]
        assert d["method"] == row["method"] == res.method == _expected_method(label, res), label
        assert d["quantity"] == row["quantity"] == res.quantity == _expected_quantity(label, res), label
        assert d["estimate"] == row["estimate"] == res.estimate, label
        assert d["n_samples"] == row["n_samples"] == res.n_samples == N, label
        if res.has_confidence_interval:
            low, high = res.confidence_interval
            assert (d["low"], d["high"]) == (row["low"], row["high"]) == (low, high) == (res.low, res.high), label
            assert d["confidence_level"] == row["confidence_level"] == res.confidence_level == 0.95, label
        else:   # no interval: None in to_dict (JSON null), NaN in to_frame
            assert d["low"] is d["high"] is d["confidence_level"] is None, label
            assert np.isnan([row["low"], row["high"], row["confidence_level"]]).all(), label
        # no second name for the estimate or the level
        assert not {"centre", "level", "n", "auc", "error"} & set(d) and "centre" not in frame.columns, label
        json.dumps(d, allow_nan=False)


def test_the_rest_of_the_row_is_the_results_own_fields(made):
    cud = made["cud_interval"].to_dict()
    assert cud["train_error"] == cud["estimate"] and cud["n_resamples"] == 20 and "search" in cud
    assert "search" not in made["cud_interval"].to_frame().columns      # nested values stay out of the frame
    assert made["lpo_auc:closed form"].to_dict()["computation"] == "closed form"
    assert made["lpo_auc:refits"].to_dict()["computation"] == "refits"
    assert made["cv_auc:pooled"].to_dict()["pooling"] == "pooled"
    assert made["compare:mcnemar"].to_dict()["no_interval_reason"]
    assert made["auc_interval:delong"].to_dict()["standard_error"] > 0


def test_intervals_and_compare_return_one_list_type_with_one_table(made):
    for key, count in (("intervals", len(cudbound.method_names())), ("compare", 10)):
        results = made[key]
        assert type(results) is ResultList and len(results) == count
        frame = results.to_frame()
        assert list(frame.columns)[:7] == EXPECTED_COLUMNS
        assert list(frame["method"]) == [r.method for r in results]
        assert frame["estimate"].tolist() == [r.estimate for r in results]
        assert frame["low"].dtype == float and frame["confidence_level"].dtype == float
    frame = made["compare"].to_frame()   # tests without an interval: NaN, beside the intervals
    assert frame.loc[frame["method"] == "mcnemar", "low"].isna().all()
    assert frame.loc[frame["method"] == "tango", "low"].notna().all()


def test_a_list_of_mixed_results_is_one_table():
    X, y = small_data(1)
    from cudbound.auc import KernelRLS, lpo_auc
    mixed = ResultList([cudbound.intervals(X, y, methods=["kohavi"], rng=0)[0], lpo_auc(KernelRLS(), X, y)])
    frame = mixed.to_frame()
    assert list(frame.columns)[:7] == EXPECTED_COLUMNS and list(frame["quantity"]) == [ERROR_RATE, AUC]
    assert math.isnan(frame.loc[1, "low"]) and math.isnan(frame.loc[0, "n_pairs"]) and frame.loc[1, "n_pairs"] > 0
    assert list(ResultList().to_frame().columns) == EXPECTED_COLUMNS


def test_the_quantities_are_one_vocabulary():
    assert len(set(QUANTITIES)) == len(QUANTITIES)
    with pytest.raises(ValueError, match="`quantity` must be one of"):
        result_item("m", "error", 0.1)
    with pytest.raises(ValueError, match="`quantity` must be one of"):
        IntervalResult(method="m", confidence_interval=ConfidenceInterval(0.1, 0.3), confidence_level=0.9,
                       estimate=0.2, n_samples=10, quantity="auc")
    from cudbound.compare import ComparisonResult
    with pytest.raises(ValueError, match="quantity` of a comparison"):
        ComparisonResult(method="m", estimate=0.0, n_samples=3, pvalue=1.0, no_interval_reason="x", quantity=AUC)


def test_every_result_speaks_the_common_vocabulary(made):
    for label, res in _results(made).items():
        name = type(res).__name__
        assert isinstance(res.estimate, float) and math.isfinite(res.estimate), label
        if not res.has_confidence_interval:
            assert res.confidence_level is None and not hasattr(res, "confidence_interval"), label
            with pytest.raises(NoConfidenceIntervalError) as raised:
                res.confidence_interval
            assert str(raised.value).startswith(f"{name} ({res.method}) has no confidence interval: "), label
            assert res.no_interval_reason and res.no_interval_reason in str(raised.value), label
            with pytest.raises(NoConfidenceIntervalError):
                res.low
        else:
            ci = res.confidence_interval
            lowest = -1.0 if res.is_difference else 0.0
            assert isinstance(ci, ConfidenceInterval) and lowest <= ci.low <= ci.high <= 1.0, label
        text = repr(res)
        assert text.startswith(name + "(") and "\n" not in text and len(text) < 260, label
        assert ("train_error=" if name == "CUDResult" else "estimate=") in text, label


def test_to_frame_without_pandas_says_how_to_install_it(made, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    for key in ("intervals:kohavi", "estimate_error:632", "intervals"):
        with pytest.raises(ImportError, match="to_frame\\(\\) needs pandas: pip install pandas"):
            made[key].to_frame()
