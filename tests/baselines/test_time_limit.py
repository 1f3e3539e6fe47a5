"""A time limit on a resampling interval (``time_limit=``, cudbound/baselines/): the resamples stop once
it is spent, after the fewest the interval needs, and the ones used are the first ones of the run
without a limit, drawn the same way, so the interval is the one computed on those first resamples.

Time is a fake clock that advances one second per refit (tests/_support/fake_clock.py): a budget
of T seconds lasts about T refits, wherever they are made, and nothing depends on real time.
"""
import numpy as np
import pytest
from fake_clock import clock_by_the_refit, install
from reference_baselines import make_data

from cudbound.baselines import (bccv, bs1, bs2, conservative_z, corrected_t, e632_delta, kohavi, langford, martin,
                                nested_cv, yang)
from cudbound.baselines.modern import nested_cv_estimate, nested_cv_splits
from cudbound.design import as_prepared
from cudbound.refit import refits_for
from cudbound.statistics import basic_interval, normal_critical_value, percentile_interval


@pytest.fixture(scope="module")
def data():
    return make_data(n=30, seed=11, noise=0.8)


def _same(a, b):
    assert (a.low, a.high, a.estimate) == (b.low, b.high, b.estimate)


# each method whose loop stops by resamples that a smaller option draws exactly: (function, options,
# the option that counts the resamples, the fewest the interval needs, the budget in refits)
PREFIX = {
    "e632_delta": (e632_delta, {"n_resamples": 60}, "n_resamples", 2, 25),
    "bccv": (bccv, {"n_resamples": 40}, "n_resamples", 2, 30 + 200),          # n leave-one-out fits first
    "corrected_t": (corrected_t, {"n_splits": 30}, "n_splits", 2, 10),
    "conservative_z": (conservative_z, {"n_halves": 10}, "n_halves", 1, 15 + 4 * 30),  # the J splits first
    "kohavi": (kohavi, {"n_boot": 100}, "n_boot", 1, 30),
    "martin": (martin, {"n_boot": 100}, "n_boot", 1, 30),
    "langford": (langford, {"n_boot": 100}, "n_boot", 1, 30),
    "yang": (yang, {"repeats": 12, "cv": 2, "centre": "cv", "n_eff": 15.0}, "repeats", 1, 10),
}


@pytest.mark.parametrize("name", list(PREFIX))
def test_a_limited_run_is_the_run_on_its_first_resamples(data, monkeypatch, name):
    """Cut short: k resamples used (between the fewest and all), and the interval is the one the method
    gives without a limit when asked for k resamples: its draws come first from its stream, one resample
    after the other, so those k are the first k of the run without a limit."""
    function, options, option, fewest, seconds = PREFIX[name]
    Phi, y = data
    clock_by_the_refit(monkeypatch)
    cut = function(Phi, y, rng=5, time_limit=seconds, **options)
    used = cut.details[f"{option}_used"]
    assert fewest <= used < options[option] and cut.details["cut_by_time_limit"]
    assert cut.details[option] == options[option]
    _same(cut, function(Phi, y, rng=5, **{**options, option: used}))


@pytest.mark.parametrize("name", list(PREFIX) + ["bs1", "bs2", "nested_cv"])
def test_enough_time_gives_the_numbers_of_no_limit(data, monkeypatch, name):
    """A limit that does not run out: the same numbers as no limit, though the loop ran in chunks of
    other sizes (the first of the fewest resamples, then sized to the time left)."""
    function, options = (bs1, {"n_resamples": 30, "n_inner": 5}) if name == "bs1" else \
        (bs2, {"n_resamples": 30, "n_inner": 5}) if name == "bs2" else \
        (nested_cv, {"cv": 3, "repeats": 6}) if name == "nested_cv" else PREFIX[name][:2]
    Phi, y = data
    free = function(Phi, y, rng=5, **options)
    clock_by_the_refit(monkeypatch, per_refit=1e-3)
    timed = function(Phi, y, rng=5, time_limit=1e6, **options)
    _same(timed, free)
    assert timed.details["cut_by_time_limit"] is False


@pytest.mark.parametrize("function, interval", [(bs1, percentile_interval), (bs2, basic_interval)])
def test_bs1_and_bs2_cut_short_use_the_first_values_of_the_distribution(data, monkeypatch, function, interval):
    """The .632 centre in full (20 refits), then outer samples of 1 + J = 6 refits each until the budget
    is spent: the values are the first ones of the unlimited run's distribution, and the interval is
    read from them."""
    Phi, y = data
    options = {"n_resamples": 40, "n_inner": 5, "n_boot": 20}
    free = function(Phi, y, rng=2, **options)
    clock_by_the_refit(monkeypatch)
    cut = function(Phi, y, rng=2, time_limit=20 + 6 * 8, **options)
    used = cut.details["n_resamples_used"]
    assert 2 <= used < 40 and cut.details["n_boot_used"] == 20 and cut.details["cut_by_time_limit"]
    values = free.details["bootstrap_distribution"][:used]
    np.testing.assert_array_equal(cut.details["bootstrap_distribution"], values)
    low, high = interval(cut.estimate, values, 0.95) if function is bs2 else interval(values, 0.95)
    assert cut.estimate == free.estimate
    assert (cut.low, cut.high) == (min(1.0, max(0.0, low)), min(1.0, max(0.0, high)))


def test_a_spent_budget_still_gives_the_fewest_resamples(data, monkeypatch):
    """Nothing left: BS1 makes the centre from 1 bootstrap sample and the distribution from 2 outer
    samples, the fewest its interval needs, and says so."""
    Phi, y = data
    install(monkeypatch)
    cut = bs1(Phi, y, rng=2, n_resamples=40, n_inner=5, n_boot=20, time_limit=0.0)
    assert (cut.details["n_boot_used"], cut.details["n_resamples_used"]) == (1, 2)
    assert cut.details["bootstrap_distribution"].shape == (2,) and cut.details["cut_by_time_limit"]


def test_nested_cv_cut_short_is_the_estimate_of_its_first_repetitions(data, monkeypatch):
    """The plain CV runs for Err_CV in full, then repetitions of K + K(K-1)/2 = 6 fits (K = 3) until the
    budget is spent: the estimate of Bates et al. on the first repetitions' fits (the splits drawn as
    without a limit, ``nested_cv_splits``), from the same refits."""
    Phi, y = data
    K, R, Rb = 3, 20, 4
    clock_by_the_refit(monkeypatch)
    cut = nested_cv(Phi, y, cv=K, repeats=R, bias_repeats=Rb, rng=9, time_limit=Rb * K + 6 * 5)
    used = cut.details["repeats_used"]
    assert 1 <= used < R and cut.details["cut_by_time_limit"]
    trains, layouts, cv_layouts = nested_cv_splits(30, K, R, Rb, np.random.default_rng(9))
    np.testing.assert_array_equal(cut.details["fold_layouts"], layouts[:used])
    refits = refits_for(as_prepared(Phi, y), "squared")
    rows = np.concatenate([trains[:used * 6], trains[R * 6:]]).astype(float)
    est = nested_cv_estimate(refits.predict(rows)[0] != refits.labels, layouts[:used], cv_layouts)
    half = normal_critical_value(0.95) * est["se"]
    assert cut.estimate == est["centre"] and cut.details["se"] == est["se"]
    assert (cut.low, cut.high) == (max(0.0, est["centre"] - half), min(1.0, est["centre"] + half))


def test_yang_spends_the_budget_on_its_runs_then_on_the_centre(data, monkeypatch):
    Phi, y = data
    clock_by_the_refit(monkeypatch)
    cut = yang(Phi, y, rng=4, repeats=10, n_boot=50, time_limit=2 * 10 + 20)
    assert cut.details["repeats_used"] == 10 and 1 <= cut.details["n_boot_used"] < 50
    assert cut.details["cut_by_time_limit"]


@pytest.mark.parametrize("function", [e632_delta, bs1, kohavi, nested_cv])
def test_no_limit_records_nothing_about_one(data, function):
    Phi, y = data
    options = {"n_resamples": 20, "n_inner": 3} if function is bs1 else {"cv": 3, "repeats": 2} \
        if function is nested_cv else {}
    details = function(Phi, y, rng=1, **options).details
    assert not [k for k in details if k.endswith("_used") or k == "cut_by_time_limit"]
