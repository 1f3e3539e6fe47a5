"""A run of many methods as one job (``cudbound.intervals``): a time limit for the whole run that every
method honours, methods not started when it runs out skipped and listed, and each method's ``seconds``
with its share of the work it shares, adding up to the run's time.

Time is a fake clock (tests/_support/fake_clock.py): frozen, moved by a registered method, or one
second per refit; nothing depends on real time.
"""
import warnings

import numpy as np
import pytest
from fake_clock import clock_by_the_refit, install

import cudbound.registry
from cudbound.registry import IntervalsInterrupted, intervals, register, unregister
from cudbound.results import ConfidenceInterval, IntervalResult


def _result(name, y):
    return IntervalResult(method=name, confidence_interval=ConfidenceInterval(0.1, 0.6), confidence_level=0.95,
                          estimate=0.3, n_samples=len(y))


@pytest.fixture
def slow(monkeypatch):
    """A registered method ``slow`` whose call moves the fake clock 100 s on (the clock it returns)."""
    clock = install(monkeypatch)

    def slow_method(design, y, *, confidence_level=0.95, rng=None):
        clock.advance(100.0)
        return _result("slow", y)
    register("slow", slow_method, "moves the fake clock 100 s")
    yield clock
    unregister("slow")


@pytest.fixture
def probe():
    """A registered method ``probe`` that takes a ``time_limit`` and keeps the ones it was given."""
    given = []

    def probe_method(design, y, *, confidence_level=0.95, rng=None, time_limit=None):
        given.append(time_limit)
        return _result("probe", y)
    register("probe", probe_method, "keeps its time_limit")
    yield given
    unregister("probe")


def test_methods_not_started_when_the_time_is_up_are_skipped_and_listed(xy01, slow):
    """``slow`` spends 100 s of a 50 s run: the methods after it are not started, the results are the
    ones before (the numbers of a run without a limit), ``skipped`` names the others and a warning says so."""
    X, y = xy01
    free = intervals(X, y, methods=["kohavi", "slow", "martin", "langford"], rng=3)
    with pytest.warns(UserWarning, match=r"time limit ran out before martin, langford started"):
        res = intervals(X, y, methods=["kohavi", "slow", "martin", "langford"], rng=3, time_limit=50)
    assert [r.method for r in res] == ["kohavi", "slow"] and res.skipped == ("martin", "langford")
    assert res[0].confidence_interval == free[0].confidence_interval
    assert free.skipped == ()


def test_each_method_gets_an_equal_share_of_what_is_left(xy01, slow, probe):
    """A method is given the time left divided by the methods not yet run, itself included: first of
    two in a 130 s run, ``probe`` gets 65 s; after ``slow``'s 100 s, the 30 s left; its own smaller limit
    wins; without a run limit it is given its own, or nothing."""
    X, y = xy01
    intervals(X, y, methods=["probe", "slow"], time_limit=130)
    intervals(X, y, methods=["slow", "probe"], time_limit=130)
    intervals(X, y, methods=["slow", "probe"], time_limit=130, probe_options={"time_limit": 10})
    intervals(X, y, methods=["slow", "probe"], probe_options={"time_limit": 10})
    intervals(X, y, methods=["slow", "probe"])
    assert probe == [65.0, 30.0, 10.0, 10.0, None]


def test_a_time_limit_must_be_positive(xy01):
    X, y = xy01
    for bad in (0, -1.0, "ten"):
        with pytest.raises(ValueError, match="time_limit"):
            intervals(X, y, methods=["kohavi"], time_limit=bad)


def test_cud_in_a_run_is_conservative_when_the_time_runs_out(xy01, monkeypatch):
    """CUD is given what is left of the run (a frozen clock: all of it, 1e-9 s): its searches stop at
    once and it returns a certified interval that holds the exact one, flagged as cut short."""
    X, y = xy01
    free = intervals(X, y, methods=["cud"], rng=2, n_resamples=20)[0]
    install(monkeypatch)
    cut = intervals(X, y, methods=["cud", "kohavi"], rng=2, n_resamples=20, time_limit=1e-9)[0]
    assert cut.conservative and cut.stats.out_of_time and cut.details["cut_by_time_limit"]
    assert cut.low <= free.low and cut.high >= free.high
    assert free.details.get("cut_by_time_limit") is None


def test_the_shared_distribution_cut_short_is_a_prefix_and_both_bs_use_it(xy01, monkeypatch):
    """BS1's hook makes the .632 centre (20 refits) and the bootstrap distribution (6 refits an outer
    sample) within BS1's share of the run, half of 136 s: the distribution stops after about 8 of 40
    outer samples, its values the first ones of the run without a limit; BS2 reads the same values
    and says so."""
    X, y = xy01
    options = {"n_resamples": 40, "n_inner": 5, "n_boot": 20}
    free = intervals(X, y, methods=["bs1"], rng=4, **options)[0]
    clock_by_the_refit(monkeypatch)
    bs1, bs2 = intervals(X, y, methods=["bs1", "bs2"], rng=4, time_limit=2 * (20 + 6 * 8), **options)
    used = bs1.details["n_resamples_used"]
    assert 2 <= used < 40 and bs1.details["cut_by_time_limit"] and bs1.details["n_boot_used"] == 20
    assert bs1.estimate == free.estimate
    np.testing.assert_array_equal(bs1.details["bootstrap_distribution"], free.details["bootstrap_distribution"][:used])
    np.testing.assert_array_equal(bs2.details["bootstrap_distribution"], bs1.details["bootstrap_distribution"])
    assert bs2.details["n_resamples_used"] == used and bs2.details["cut_by_time_limit"]


def test_seconds_charge_each_shared_piece_in_equal_parts_and_add_up_to_the_run(xy01, monkeypatch):
    """One second per refit, and the data's preparation 6 s: the .632 centre (n_boot refits) is used by
    bs1, bs2 and kohavi, a third each; the bootstrap distribution (B (1 + J) refits) by bs1 and bs2, half
    each; e632_delta's B refits are its own; the preparation is shared by all four. BS1, BS2 and Kohavi
    refit nothing of their own, so their seconds are their shares, and the four add up to the run."""
    X, y = xy01
    clock = clock_by_the_refit(monkeypatch)
    prepare = cudbound.registry.prepare_data

    def slow_prepare(*args):
        clock.advance(6.0)
        return prepare(*args)
    monkeypatch.setattr(cudbound.registry, "prepare_data", slow_prepare)
    B, J, n_boot = 10, 3, 12
    before = clock.now
    res = intervals(X, y, methods=["bs1", "bs2", "kohavi", "e632_delta"], rng=1, n_resamples=B, n_inner=J,
                    n_boot=n_boot)
    total = clock.now - before
    bs1, bs2, kohavi, delta = res
    centre, dist = n_boot / 3, B * (1 + J) / 2
    assert sorted(bs1.details["shared_pieces"].values()) == [n_boot, B * (1 + J)]
    assert bs1.seconds == pytest.approx(centre + dist + 6 / 4) == bs2.seconds
    assert kohavi.seconds == pytest.approx(centre + 6 / 4) == kohavi.details["shared_seconds"]
    assert delta.seconds == pytest.approx(B + 6 / 4) and delta.details["shared_seconds"] == pytest.approx(6 / 4)
    assert sum(r.seconds for r in res) == pytest.approx(total) == pytest.approx(6 + n_boot + B * (1 + J) + B)


def test_seconds_of_the_methods_that_finished_before_ctrl_c(xy01, monkeypatch):
    """Ctrl-C during the second method: the first one's seconds are the centre it computed (used by no
    other finished method) and the whole preparation."""
    X, y = xy01
    clock_by_the_refit(monkeypatch)

    def stop(design, y, *, confidence_level=0.95, rng=None):
        raise KeyboardInterrupt
    register("ctrl_c", stop, "raises KeyboardInterrupt")
    try:
        with pytest.raises(IntervalsInterrupted) as info:
            intervals(X, y, methods=["kohavi", "ctrl_c", "martin"], rng=3, n_boot=15)
    finally:
        unregister("ctrl_c")
    (kohavi,) = info.value.results
    assert kohavi.seconds == pytest.approx(15.0) and kohavi.details["shared_seconds"] == pytest.approx(15.0)


def test_a_run_without_a_limit_skips_nothing_and_warns_nothing(xy01):
    X, y = xy01
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = intervals(X, y, methods=["kohavi", "wald_cv"], rng=1)
    assert res.skipped == () and [r.method for r in res] == ["kohavi", "wald_cv"]


def test_a_baselines_time_limit_is_the_runs_not_an_option(xy01):
    """The resampling baselines take ``time_limit`` as a knob of the run (their share of it), not as an
    option: a study's protocol does not record it, and ``<method>_options`` cannot set it; CUD's own
    ``time_limit`` stays an option. A knob must be a keyword of the function."""
    from cudbound.registry import check_options, get_method
    X, y = xy01
    assert get_method("bs1").knobs == ("time_limit",) and "time_limit" not in get_method("bs1").options()
    assert get_method("cud").knobs == () and "time_limit" in get_method("cud").options()
    with pytest.raises(ValueError, match="time_limit"):
        intervals(X, y, methods=["kohavi"], kohavi_options={"time_limit": 5})
    with pytest.raises(ValueError, match="time_limit"):
        check_options("bs1", 30, time_limit=5)
    check_options("cud", 30, time_limit=5)
    with pytest.raises(TypeError, match="knobs"):
        register("knobless", lambda design, y, *, confidence_level=0.95, rng=None: None, "x", knobs=("time_limit",))
