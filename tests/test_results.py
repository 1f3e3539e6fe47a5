"""The one result vocabulary (issue 30, point 3; cudbound/results.py: Result, PointEstimateResult):
every result class of the package has estimate, confidence_interval (or says why it has none),
confidence_level, to_dict(), to_frame() and a short repr."""
import importlib
import json
import math
import pkgutil
import sys

import numpy as np
import pytest

import cudbound
from cudbound.results import ConfidenceInterval, NoConfidenceIntervalError, PointEstimateResult, Result
from result_makers import MAKERS, small_data


@pytest.fixture(scope="module")
def data():
    return small_data(0)


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


def test_every_result_class_of_the_package_is_tested_below():
    assert _result_classes() == set(MAKERS)


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_every_result_speaks_the_common_vocabulary(name, data):
    res = MAKERS[name](*data)
    assert type(res).__name__ == name and isinstance(res, Result)
    assert isinstance(res.estimate, float) and math.isfinite(res.estimate)
    if isinstance(res, PointEstimateResult):
        assert res.confidence_level is None and not res.has_confidence_interval
        assert not hasattr(res, "confidence_interval")
        with pytest.raises(NoConfidenceIntervalError, match=f"{name} has no confidence interval: .+"):
            res.confidence_interval
        assert type(res).no_interval_reason in str(pytest.raises(AttributeError, getattr, res,
                                                                 "confidence_interval").value)
        low = high = None
    else:
        ci = res.confidence_interval
        lowest = -1.0 if name == "ComparisonResult" else 0.0      # a difference of two error rates
        assert isinstance(ci, ConfidenceInterval) and lowest <= ci.low <= ci.high <= 1.0
        assert 0.0 < res.confidence_level < 1.0
        low, high = ci
    d = res.to_dict()
    assert list(d)[:6] == ["method", "quantity", "estimate", "low", "high", "confidence_level"]
    assert (d["estimate"], d["low"], d["high"], d["confidence_level"]) == (res.estimate, low, high,
                                                                          res.confidence_level)
    quantity = "error difference" if name == "ComparisonResult" else ("auc" if "AUC" in name else "error")
    assert d["quantity"] == quantity and isinstance(d["method"], str) and d["method"]
    json.dumps(d)
    frame = res.to_frame()
    assert frame.shape[0] == 1
    row = frame.iloc[0]
    # interval tables keep their column ``centre`` (a column cannot warn; docs/guide.md)
    column = "centre" if name in ("IntervalResult", "CUDResult", "AUCIntervalResult") else "estimate"
    assert column in frame.columns and row[column] == res.estimate
    text = repr(res)
    assert text.startswith(name + "(") and "\n" not in text and len(text) < 260
    assert ("train_error=" if name == "CUDResult" else "estimate=") in text


@pytest.mark.parametrize("name", ["ErrorEstimate", "IntervalResult"])
def test_to_frame_without_pandas_says_how_to_install_it(name, data, monkeypatch):
    res = MAKERS[name](*data)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="to_frame\\(\\) needs pandas: pip install pandas"):
        res.to_frame()
