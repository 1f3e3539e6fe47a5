"""The entry point ``cudbound.baselines.intervals``: streams, sharing, options, CUD."""
import numpy as np
import pytest

from cudbound.baselines import METHODS, intervals, kohavi
from cudbound.results import CUDResult, IntervalResult

FAST = {"n_resamples": 60, "n_inner": 10}
BASELINES = ["bs1", "bs2", "kohavi", "yang", "martin", "langford"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, 0)
    return X, y


def _by_method(results):
    return {r.method: r for r in results}


def test_runs_every_baseline_with_one_shared_centre(data):
    X, y = data
    res = intervals(X, y, methods=BASELINES, rng=1, bs1_options=FAST, bs2_options=FAST)
    assert [r.method for r in res] == BASELINES
    assert all(isinstance(r, IntervalResult) and 0.0 <= r.low <= r.high <= 1.0 for r in res)
    assert len({r.centre for r in res}) == 1
    assert all(r.details["centre_shared"] for r in res)
    by = _by_method(res)
    np.testing.assert_array_equal(by["bs1"].details["bootstrap_distribution"],
                                  by["bs2"].details["bootstrap_distribution"])
    assert by["bs1"].width == pytest.approx(by["bs2"].width) or by["bs2"].low == 0.0 or by["bs2"].high == 1.0


def test_adding_a_method_does_not_change_another(data):
    X, y = data
    alone = _by_method(intervals(X, y, methods=["yang"], rng=5))
    more = _by_method(intervals(X, y, methods=["bs1", "kohavi", "yang"], rng=5, n_resamples=40, n_inner=5))
    assert alone["yang"].confidence_interval == more["yang"].confidence_interval
    assert alone["yang"].details["cv_estimate"] == more["yang"].details["cv_estimate"]
    order = _by_method(intervals(X, y, methods=["kohavi", "yang"], rng=5))
    assert order["yang"].confidence_interval == alone["yang"].confidence_interval


def test_same_seed_same_results_and_generators_advance(data):
    X, y = data
    a = intervals(X, y, methods=["kohavi", "yang"], rng=3)
    b = intervals(X, y, methods=["kohavi", "yang"], rng=3)
    assert [r.confidence_interval for r in a] == [r.confidence_interval for r in b]
    gen = np.random.default_rng(3)
    c = intervals(X, y, methods=["kohavi"], rng=gen)
    d = intervals(X, y, methods=["kohavi"], rng=gen)
    assert c[0].centre != d[0].centre or c[0].details["err1"] != d[0].details["err1"]


def test_shared_and_per_method_options(data):
    X, y = data
    res = _by_method(intervals(X, y, methods=["kohavi", "martin"], rng=2, n_boot=50,
                               kohavi_options={"n_eff": 10}, martin_options={"centre": 0.4}))
    assert res["kohavi"].details["n_eff"] == 10 and res["kohavi"].details["n_boot"] == 50
    assert res["martin"].centre == 0.4 and "centre_shared" not in res["martin"].details
    # a per-method option equal to the direct call with the shared centre
    design = np.column_stack([np.ones(30), X])
    direct = kohavi(design, np.where(y == 1, 1, -1), n_eff=10, centre=res["kohavi"].centre)
    assert direct.confidence_interval == res["kohavi"].confidence_interval


def test_cud_is_run_through_cud_interval(data):
    X, y = data
    res = intervals(X[:20], y[:20], methods=["cud", "kohavi"], rng=4, cud_options={"n_resamples": 20})
    assert isinstance(res[0], CUDResult) and res[0].method == "cud" and res[0].n_resamples == 20
    again = intervals(X[:20], y[:20], methods=["cud"], rng=4, cud_options={"n_resamples": 20})
    assert again[0].confidence_interval == res[0].confidence_interval


def test_labels_and_pos_label(data):
    X, y = data
    ys = np.where(y == 1, "yes", "no")
    a = intervals(X, ys, methods="kohavi,langford", pos_label="yes", rng=1)
    b = intervals(X, y, methods=("kohavi", "langford"), rng=1)
    assert [r.confidence_interval for r in a] == [r.confidence_interval for r in b]
    assert "yes" in a[0].details["label_encoding"]


@pytest.mark.parametrize("kwargs,match", [
    ({"methods": ["kohavi", "wilson"]}, "valid methods are"),
    ({"methods": []}, "empty"),
    ({"methods": ["kohavi", "kohavi"]}, "more than once"),
    ({"methods": ["kohavi"], "n_inner": 5}, "unknown option 'n_inner'"),
    ({"methods": ["kohavi"], "kohavi_options": {"prior": (1, 1)}}, "unknown option 'prior'"),
    ({"methods": ["kohavi"], "kohavi_options": {"rng": 1}}, "may not set `rng`"),
    ({"methods": ["kohavi"], "bootstrap_distribution": [0.1, 0.2]}, "set by intervals"),
    ({"methods": ["kohavi"], "confidence_level": 1.2}, "`confidence_level`"),
    ({"methods": ["kohavi"], "kohavi_options": 3}, "must be a dict"),
])
def test_bad_input(data, kwargs, match):
    X, y = data
    with pytest.raises(ValueError, match=match):
        intervals(X, y, **kwargs)


def test_method_list_is_the_papers():
    assert METHODS == ("cud", "bs1", "bs2", "kohavi", "yang", "martin", "langford")
