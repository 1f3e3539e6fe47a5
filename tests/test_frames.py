"""pandas in and out (issue 16, part 2): DataFrames and Series as X and y, feature names kept,
tidy tables from results (cudbound/results.py: Result.to_frame, ResultList)."""
import numpy as np
import pytest

import cudbound

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    return pd.DataFrame(X, columns=["age", "dose"]), pd.Series(y, name="outcome"), X, y


def test_dataframe_and_series_give_the_array_result_and_keep_the_names(frame):
    Xf, yf, X, y = frame
    a = cudbound.cud_interval(Xf, yf, n_resamples=20, rng=3)
    b = cudbound.cud_interval(X, y, n_resamples=20, rng=3)
    assert a.confidence_interval == b.confidence_interval
    assert a.details["feature_names"] == ["age", "dose"] and "feature_names" not in b.details
    res = cudbound.intervals(Xf, yf, methods=["kohavi", "yang"], rng=1)
    assert all(r.details["feature_names"] == ["age", "dose"] for r in res)


def test_to_frame_is_one_tidy_row_per_method(frame):
    Xf, yf, _, _ = frame
    res = cudbound.intervals(Xf, yf, methods=["cud", "kohavi", "martin"], rng=1, cud_options={"n_resamples": 20})
    table = res.to_frame()
    assert list(table.columns)[:9] == ["method", "quantity", "estimate", "low", "high", "confidence_level",
                                       "n_samples", "width", "seconds"]
    assert list(table["method"]) == ["cud", "kohavi", "martin"] and set(table["quantity"]) == {"error rate"}
    for (_, row), r in zip(table.iterrows(), res):
        assert (row["low"], row["high"], row["estimate"]) == (r.low, r.high, r.estimate)
        assert row["width"] == pytest.approx(r.high - r.low) and row["confidence_level"] == 0.95
        assert row["n_samples"] == 30
    one = res[0].to_frame()
    assert len(one) == 1 and one.loc[0, "method"] == "cud"
    assert isinstance(res, list) and isinstance(res, cudbound.ResultList)
