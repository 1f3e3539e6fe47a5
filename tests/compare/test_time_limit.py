"""A time limit on a run of comparisons (``compare(time_limit=...)``): each method that repeats its
splits stops its repetitions when its share of the run is spent, after the fewest its statistic
needs, and its statistic is the one of the same method run without a limit on the first repetitions
it used; methods not started when the time is up are skipped and named; without a limit nothing
changes.

Time is a fake clock (tests/_support/fake_clock.py): frozen, moved by a registered method, or one
second per refit of either procedure; nothing depends on real time.
"""
import warnings

import numpy as np
import pytest
from fake_clock import clock_by_the_comparison_refit, install
from sklearn.model_selection import ShuffleSplit

from cudbound._registry import generator
from cudbound.baselines.modern import nested_cv_estimate, nested_cv_splits
from cudbound.compare import (ComparisonResult, Procedure, ProcedurePair, compare, compare_pair, get_method,
                              method_names, register, root_seed, unregister)
from cudbound.results import ConfidenceInterval

A, B = Procedure(), Procedure(basis="poly:2")


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    return X, np.where(X[:, 0] + 0.8 * rng.normal(size=30) > 0, 1, -1)


def _same(cut, reference):
    assert (cut.estimate, cut.statistic, cut.pvalue) == (reference.estimate, reference.statistic, reference.pvalue)
    assert cut.has_confidence_interval == reference.has_confidence_interval
    if cut.has_confidence_interval:
        assert cut.confidence_interval == reference.confidence_interval


# method: (its options, the time limit in refits (one second each), the repetitions used then:
# 2 refits a split, one repetition first, then one at a time while the time lasts)
CUT = {
    "ttest_5x2cv": ({}, 10, 3),                                  # 4 s a repetition: 4, 8, 12 >= 10
    "ftest_5x2cv": ({}, 10, 3),
    "corrected_t": ({"cv": 5, "repeats": 6}, 25, 3),             # 10 s a repetition: 10, 20, 30 >= 25
}


@pytest.mark.parametrize("name", list(CUT))
def test_a_cut_method_is_the_method_run_on_its_first_repetitions(xy, monkeypatch, name):
    """Cut short: the repetitions used are the first ones of the run without a limit (its folds), and
    the statistic, p-value and interval are those of the method given only those folds (``cv=``)."""
    X, y = xy
    options, seconds, used = CUT[name]
    free = compare(A, B, X, y, methods=[name], rng=3, **options)[0]
    clock_by_the_comparison_refit(monkeypatch)
    cut = compare(A, B, X, y, methods=[name], rng=3, time_limit=seconds, **options)[0]
    asked = free.details["folds"].shape[0]
    assert cut.details["repeats_used"] == used < asked == cut.details["repeats"] and cut.details["cut_by_time_limit"]
    np.testing.assert_array_equal(cut.details["folds"], free.details["folds"][:used])
    reference = compare(A, B, X, y, methods=[name], rng=99, cv=free.details["folds"][:used])[0]
    _same(cut, reference)
    np.testing.assert_array_equal(cut.details["differences"], reference.details["differences"])


def test_corrected_t_with_a_splitter_is_cut_by_its_splits(xy, monkeypatch):
    """With a splitter the unit is one split (at least 2): ShuffleSplit's first k splits are those of
    ShuffleSplit(k) with the same seed, the reference."""
    X, y = xy
    clock_by_the_comparison_refit(monkeypatch)
    cut = compare(A, B, X, y, methods=["corrected_t"], rng=3, time_limit=9,
                  cv=ShuffleSplit(10, test_size=0.2, random_state=4))[0]
    used = cut.details["splits_used"]
    assert 2 <= used < 10 == cut.details["splits"] and cut.details["n_splits"] == used
    _same(cut, compare(A, B, X, y, methods=["corrected_t"], rng=3,
                       cv=ShuffleSplit(used, test_size=0.2, random_state=4))[0])


def test_nested_cv_cut_short_is_the_estimate_of_its_first_repetitions(xy, monkeypatch):
    """Nested CV (K = 3: 6 fits a repetition, 6 fits of the plain CV runs for the bias, always made with
    the first repetition) within 60 s: 4 of 6 repetitions, the first layouts of the run without a limit,
    and the estimate of the formula on those repetitions' losses and the same bias runs."""
    X, y = xy
    free = compare(A, B, X, y, methods=["nested_cv"], rng=3, cv=3, repeats=6)[0]
    clock_by_the_comparison_refit(monkeypatch)
    cut = compare(A, B, X, y, methods=["nested_cv"], rng=3, cv=3, repeats=6, time_limit=60)[0]
    assert cut.details["repeats_used"] == 4 and cut.details["repeats"] == 6 and cut.details["cut_by_time_limit"]
    np.testing.assert_array_equal(cut.details["fold_layouts"], free.details["fold_layouts"][:4])
    np.testing.assert_array_equal(cut.details["cv_layouts"], free.details["cv_layouts"])
    monkeypatch.undo()
    # the reference: the same draws, the first 4 repetitions' fits (6 each) and the 6 bias fits
    trains, layouts, cv_layouts = nested_cv_splits(30, 3, 6, 2, generator(root_seed(3), "nested_cv"))
    keep = np.r_[0:4 * 6, 6 * 6:trains.shape[0]]
    pair = ProcedurePair(A, B, X, y)
    wa, wb, _ = pair.errors(trains[keep], ~trains[keep])
    est = nested_cv_estimate(wa.astype(float) - wb.astype(float), layouts[:4], cv_layouts)
    assert cut.estimate == est["centre"] and cut.details["se"] == est["se"]


@pytest.mark.parametrize("name, options, unit, fewest", [
    ("ttest_5x2cv", {}, "repeats", 1), ("ftest_5x2cv", {}, "repeats", 1),
    ("corrected_t", {"cv": 5, "repeats": 4}, "repeats", 1),
    ("corrected_t", {"cv": ShuffleSplit(6, test_size=0.2, random_state=0)}, "splits", 2),
    ("nested_cv", {"cv": 3, "repeats": 4}, "repeats", 1)])
def test_the_fewest_repetitions_are_made_whatever_the_time(xy, monkeypatch, name, options, unit, fewest):
    """A limit spent by the first refit: the method still makes the fewest repetitions that define its
    statistic, and the statistic is a number."""
    X, y = xy
    clock_by_the_comparison_refit(monkeypatch, per_refit=100.0)
    res = compare(A, B, X, y, methods=[name], rng=1, time_limit=1.0, **options)[0]
    assert res.details[f"{unit}_used"] == fewest and res.details["cut_by_time_limit"]
    assert np.isfinite(res.statistic) and 0.0 <= res.pvalue <= 1.0


def _result(name):
    return ComparisonResult(method=name, estimate=0.0, statistic=0.0, pvalue=1.0, n_samples=30, confidence_level=0.95,
                            confidence_interval=ConfidenceInterval(-0.1, 0.1))


@pytest.fixture
def slow(monkeypatch):
    """A registered comparison ``slow`` whose call moves the fake clock 100 s on."""
    clock = install(monkeypatch)

    def slow_method(pair, *, confidence_level=0.95, alternative="two-sided", rng=None):
        clock.advance(100.0)
        return _result("slow")
    register("slow", slow_method, "moves the fake clock 100 s")
    yield clock
    unregister("slow")


@pytest.fixture
def probe():
    """A registered comparison ``probe`` with a ``time_limit`` option (as ``cud``), keeping the ones given."""
    given = []

    def probe_method(pair, *, confidence_level=0.95, alternative="two-sided", rng=None, time_limit=None):
        given.append(time_limit)
        return _result("probe")
    register("probe", probe_method, "keeps its time_limit")
    yield given
    unregister("probe")


def test_methods_not_started_when_the_time_is_up_are_skipped_and_named(xy, slow):
    X, y = xy
    free = compare(A, B, X, y, methods=["wald_cv", "slow", "mcnemar", "corrected_t"], rng=3, repeats=2)
    with pytest.warns(UserWarning, match=r"time limit ran out before mcnemar, corrected_t started"):
        res = compare(A, B, X, y, methods=["wald_cv", "slow", "mcnemar", "corrected_t"], rng=3, repeats=2,
                      time_limit=50)
    assert [r.method for r in res] == ["wald_cv", "slow"] and res.skipped == ("mcnemar", "corrected_t")
    _same(res[0], free[0])
    assert free.skipped == () and "cut_by_time_limit" not in res[0].details


def test_each_method_gets_an_equal_share_of_what_is_left(xy, slow, probe):
    """The time left divided by the methods not yet run, itself included: first of two in 130 s, 65 s;
    after ``slow``'s 100 s, the 30 s left; its own smaller limit wins; without a run limit, its own or
    nothing. ``compare_pair`` shares the same way, and what one method leaves goes to the next."""
    X, y = xy
    compare(A, B, X, y, methods=["probe", "slow"], time_limit=130)
    compare(A, B, X, y, methods=["slow", "probe"], time_limit=130)
    compare(A, B, X, y, methods=["slow", "probe"], time_limit=130, probe_options={"time_limit": 10})
    compare(A, B, X, y, methods=["slow", "probe"], probe_options={"time_limit": 10})
    compare(A, B, X, y, methods=["slow", "probe"])
    compare_pair(ProcedurePair(A, B, X, y), ["probe", "probe", "slow"], root_seed(0), time_limit=90)
    assert probe == [65.0, 30.0, 10.0, 10.0, None, 30.0, 45.0]


def test_the_procedures_time_limit_is_a_knob_of_the_run_not_an_option():
    """A study's options cannot set it (nor record it); cud's own ``time_limit`` stays an option."""
    for name in ("ttest_5x2cv", "ftest_5x2cv", "corrected_t", "nested_cv"):
        assert get_method(name).knobs == ("time_limit",) and "time_limit" not in get_method(name).options()
    assert get_method("cud").knobs == () and "time_limit" in get_method("cud").options()
    assert all("time_limit" not in get_method(m).parameters for m in ("wald_cv", "mcnemar", "tango", "delong"))
    with pytest.raises(TypeError, match="knobs"):
        register("knobless", lambda pair, *, confidence_level=0.95, alternative="two-sided", rng=None: None, "x",
                 knobs=("time_limit",))


def test_a_knob_cannot_be_set_as_an_option(xy):
    X, y = xy
    with pytest.raises(ValueError, match="time_limit"):
        compare(A, B, X, y, methods=["corrected_t"], corrected_t_options={"time_limit": 5})


@pytest.mark.parametrize("bad", [0, -1.0, "ten", float("nan")])
def test_a_time_limit_must_be_a_positive_number(xy, bad):
    X, y = xy
    with pytest.raises(ValueError, match="time_limit"):
        compare(A, B, X, y, methods=["wald_cv"], time_limit=bad)
    with pytest.raises(ValueError, match="time_limit"):
        compare_pair(ProcedurePair(A, B, X, y), ["wald_cv"], root_seed(0), time_limit=bad)


_LIMIT_KEYS = ("repeats_used", "splits", "splits_used", "cut_by_time_limit")


def _without_timing(details):
    return {k: v for k, v in details.items()
            if k not in _LIMIT_KEYS + ("stats", "shared_pieces", "shared_seconds") and not k.startswith("search_")}


def test_no_limit_and_a_limit_that_never_runs_out_give_identical_results(xy, monkeypatch):
    """Every registered method, with no limit and with 1e9 s on a frozen clock (so each loop runs in
    chunks of 1, 2, 4, ... repetitions): the same numbers, bit for bit, and the same details but the
    limit's own keys; without a limit the details are those of before (no limit key)."""
    X, y = xy
    names = method_names()
    options = {"repeats": 4, "cv": 3, "n_resamples": 20, "ttest_5x2cv_options": {"cv": None},
               "ftest_5x2cv_options": {"cv": None}}
    free = compare(A, B, X, y, methods=names, rng=7, **options)
    install(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        timed = compare(A, B, X, y, methods=names, rng=7, time_limit=1e9, **options)
    assert [r.method for r in timed] == list(names) and timed.skipped == ()
    for f, t in zip(free, timed):
        _same(t, f)
        assert not any(k in f.details for k in _LIMIT_KEYS), f.method
        assert t.details.get("cut_by_time_limit", False) is False
        # corrected_t says under a limit how many repeats were asked (the others have the key anyway)
        assert set(t.details) - set(f.details) <= {*_LIMIT_KEYS, "repeats"}, f.method
        np.testing.assert_equal(_without_timing({k: t.details[k] for k in f.details}), _without_timing(f.details),
                                err_msg=f.method)
    np.testing.assert_array_equal(timed[-1].details["bootstrap_distribution"],
                                  free[-1].details["bootstrap_distribution"])


def test_cud_is_conservative_when_its_share_runs_out(xy, monkeypatch):
    """``cud`` given what is left of a run of 1e-9 s (a frozen clock): its searches stop at once and it
    returns a certified interval that holds the exact one, flagged as cut short."""
    X, y = xy
    free = compare(A, B, X, y, methods=["cud"], rng=2, n_resamples=20)[0]
    install(monkeypatch)
    cut = compare(A, B, X, y, methods=["cud", "wald_cv"], rng=2, n_resamples=20, time_limit=1e-9)[0]
    assert cut.details["conservative"] and cut.details["cut_by_time_limit"]
    assert cut.low <= free.low and cut.high >= free.high
    assert "cut_by_time_limit" not in free.details


@pytest.mark.filterwarnings("ignore::cudbound.refit.DegenerateResampleWarning")   # separable parts: the same too
@pytest.mark.parametrize("pair", ["smooth and hinge", "scikit-learn"])
def test_refits_in_chunks_are_those_of_one_batch_for_other_losses(xy, monkeypatch, pair):
    """The batched Newton (logistic), the batched hinge on a learned basis, and scikit-learn classifiers
    refitted per part: chunked (a limit that never runs out) or all at once, the same statistics."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    a, b = ((Procedure(loss="logistic"), Procedure(loss="hinge_ridge", basis="pca:2")) if pair == "smooth and hinge"
            else (LogisticRegression(), GaussianNB()))
    X, y = xy
    names = ["ttest_5x2cv", "corrected_t", "nested_cv"]
    free = compare(a, b, X, y, methods=names, rng=7, cv=3, repeats=4, ttest_5x2cv_options={"cv": None})
    install(monkeypatch)
    timed = compare(a, b, X, y, methods=names, rng=7, cv=3, repeats=4, ttest_5x2cv_options={"cv": None},
                    time_limit=1e9)
    for f, t in zip(free, timed):
        _same(t, f)
