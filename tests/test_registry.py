"""The registry of interval methods (``cudbound.registry``) and ``cudbound.intervals``: name-keyed streams,
sharing, options, CUD, registering a method."""
import hashlib

import numpy as np
import pytest

import cudbound
from cudbound.baselines import kohavi
from cudbound.fit import fit_classifier
from cudbound.registry import (METHODS, get_method, intervals, intervals_from_design, method_names, register, stream,
                                unregister)
from cudbound.losses import SquaredLoss
from cudbound.results import ConfidenceInterval, CUDResult, IntervalResult

FAST = {"n_resamples": 60, "n_inner": 10}
BASELINES = ["bs1", "bs2", "kohavi", "yang", "martin", "langford"]


def _by_method(results):
    return {r.method: r for r in results}


def test_runs_every_baseline_with_one_shared_centre(xy01):
    X, y = xy01
    res = intervals(X, y, methods=BASELINES, rng=1, bs1_options=FAST, bs2_options=FAST)
    assert [r.method for r in res] == BASELINES
    assert all(isinstance(r, IntervalResult) and 0.0 <= r.low <= r.high <= 1.0 for r in res)
    assert len({r.estimate for r in res}) == 1
    assert all(r.details["centre_shared"] for r in res)
    by = _by_method(res)
    np.testing.assert_array_equal(by["bs1"].details["bootstrap_distribution"],
                                  by["bs2"].details["bootstrap_distribution"])
    assert by["bs1"].width == pytest.approx(by["bs2"].width) or by["bs2"].low == 0.0 or by["bs2"].high == 1.0


def _numbers(results):
    """Every number a result reports, by method (interval, centre, method-specific floats)."""
    out = {}
    for r in results:
        nums = {"low": r.low, "high": r.high, "centre": r.estimate}
        nums.update({k: v for k, v in r.details.items() if isinstance(v, float) and k != "shared_seconds"})
        if isinstance(r, CUDResult):
            nums["dist"] = tuple(r.bootstrap_distribution)
        out[r.method] = nums
    return out


def _first_draw(design, y, *, confidence_level=0.95, rng=None, draws=3):
    """A registered probe: its interval is made of the first uniforms of its stream."""
    u = np.sort(rng.random(draws))
    return IntervalResult(method="probe", confidence_interval=ConfidenceInterval(float(u[0]), float(u[-1])),
                          confidence_level=confidence_level, estimate=float(u[1]), n_samples=len(y))


@pytest.fixture
def probe():
    register("probe", _first_draw, "test probe: the first draws of its stream")
    yield "probe"
    unregister("probe")


ALL_FAST = {"bs1_options": FAST, "bs2_options": FAST, "cud_options": {"n_resamples": 20}}


@pytest.mark.parametrize("make_rng", [lambda: 7, lambda: np.random.SeedSequence(7), lambda: np.random.default_rng(7)],
                         ids=["int", "seedsequence", "generator"])
def test_registering_or_removing_a_method_changes_no_other_number(xy01, make_rng):
    """Name-keyed streams: the numbers of every built-in method (CUD included) are the same
    with and without a newly registered method that consumes random numbers, whatever the
    order, and with a built-in method removed from the registry."""
    X, y = xy01[0][:20], xy01[1][:20]
    before = _numbers(intervals(X, y, methods=METHODS, rng=make_rng(), **ALL_FAST))
    register("aaa_probe", _first_draw, "probe sorted first")
    register("zzz_probe", _first_draw, "probe sorted last")
    try:
        mixed = ["zzz_probe", "langford", "cud", "aaa_probe", "yang", "bs2", "martin", "bs1", "kohavi"]
        after = _numbers(intervals(X, y, methods=mixed, rng=make_rng(), **ALL_FAST))
    finally:
        unregister("aaa_probe")
        unregister("zzz_probe")
    assert after.pop("probe") is not None
    assert after == before
    from cudbound import registry

    snapshot = dict(registry._REGISTRY)   # restored exactly afterwards (order, check): no state leaks
    saved = get_method("yang")
    unregister("yang")
    try:
        fewer = _numbers(intervals(X, y, methods=[m for m in METHODS if m != "yang"], rng=make_rng(), **ALL_FAST))
        register("yang", saved.function, saved.summary, label=saved.label, prepare=saved.prepare)
        assert method_names()[-1] == "yang"   # re-registered at the end: the order does not matter either
        again = _numbers(intervals(X, y, methods=METHODS, rng=make_rng(), **ALL_FAST))
    finally:
        registry._REGISTRY.clear()
        registry._REGISTRY.update(snapshot)
    assert fewer == {k: v for k, v in before.items() if k != "yang"}
    assert again == before
    assert get_method("yang") is saved and list(registry._REGISTRY) == list(snapshot)


def test_a_method_stream_is_derived_from_its_name(xy01, probe):
    """The probe's generator is SeedSequence(root.entropy, spawn_key=(h(name),)), h the first
    four bytes of SHA-256 of the name, with the root drawn from the user's generator."""
    X, y = xy01
    res = intervals(X, y, methods=[probe], rng=11)[0]
    gen = np.random.default_rng(11)
    root = np.random.SeedSequence([int(v) for v in gen.integers(0, 2**63, size=4)])
    key = int.from_bytes(hashlib.sha256(b"probe").digest()[:4], "little")
    u = np.sort(np.random.default_rng(np.random.SeedSequence(root.entropy, spawn_key=(key,))).random(3))
    assert (res.low, res.estimate, res.high) == (u[0], u[1], u[2])
    assert stream(root, probe).spawn_key == (key,)


def test_register_rejects_bad_methods(probe):
    with pytest.raises(ValueError, match="already registered"):
        register("probe", _first_draw, "again")
    with pytest.raises(ValueError, match="shared random stream"):
        register("centre", _first_draw, "clash")
    with pytest.raises(ValueError, match="lower-case"):
        register("Bad Name", _first_draw, "x")
    with pytest.raises(TypeError, match="confidence_level, rng"):
        register("noargs", lambda design, y: None, "x")
    with pytest.raises(ValueError, match="unknown interval method 'never_registered'"):
        unregister("never_registered")


def test_a_hook_computes_what_two_methods_share_once_and_a_new_method_can_take_the_baselines_centre(xy01):
    """A ``prepare`` hook: its kwargs join the call (an ``rng`` replaces the method's stream), its details
    the result's, and the ``shared`` dict of one call lets two methods use one computation."""
    X, y = xy01
    calls = []

    def hook(method, data, labels, options, *, shared, root, rng):
        if "draw" not in shared:
            calls.append(method.name)
            shared["draw"] = float(np.random.default_rng(stream(root, "centre")).random())
        return {"rng": np.random.default_rng(99)}, {"hooked": shared["draw"], "default_draws": method.default("draws")}

    register("hooked_a", _first_draw, "probe with a hook", prepare=hook)
    register("hooked_b", _first_draw, "probe with a hook", prepare=hook)
    register("centred", lambda design, y, *, confidence_level, rng, centre=None, loss="squared", n_boot=200:
             IntervalResult(method="centred", confidence_interval=ConfidenceInterval(centre, centre),
                            confidence_level=confidence_level, estimate=centre, n_samples=len(y)),
             "the baselines' shared centre", prepare=get_method("kohavi").prepare)
    try:
        a, b, c, k = intervals(X, y, methods=["hooked_a", "hooked_b", "centred", "kohavi"], rng=5)
    finally:
        for name in ("hooked_a", "hooked_b", "centred"):
            unregister(name)
    assert calls == ["hooked_a"]
    assert a.details["hooked"] == b.details["hooked"] and a.details["default_draws"] == 3
    u = np.sort(np.random.default_rng(99).random(3))
    assert (a.low, a.estimate, a.high) == (b.low, b.estimate, b.high) == (u[0], u[1], u[2])
    assert c.estimate == k.estimate and c.details["centre_shared"] and "shared_seconds" in c.details


def test_a_method_that_returns_no_result_is_named(xy01):
    register("broken", lambda design, y, *, confidence_level, rng: (0, 1), "returns a tuple")
    try:
        with pytest.raises(TypeError, match="'broken' returned tuple"):
            intervals(*xy01, methods=["broken"], rng=0)
    finally:
        unregister("broken")


def test_adding_a_method_does_not_change_another(xy01):
    X, y = xy01
    alone = _by_method(intervals(X, y, methods=["yang"], rng=5))
    more = _by_method(intervals(X, y, methods=["bs1", "kohavi", "yang"], rng=5, n_resamples=40, n_inner=5))
    assert alone["yang"].confidence_interval == more["yang"].confidence_interval
    assert alone["yang"].details["cv_estimate"] == more["yang"].details["cv_estimate"]
    order = _by_method(intervals(X, y, methods=["kohavi", "yang"], rng=5))
    assert order["yang"].confidence_interval == alone["yang"].confidence_interval


def test_same_seed_same_results_and_generators_advance(xy01):
    X, y = xy01
    a = intervals(X, y, methods=["kohavi", "yang"], rng=3)
    b = intervals(X, y, methods=["kohavi", "yang"], rng=3)
    assert [r.confidence_interval for r in a] == [r.confidence_interval for r in b]
    gen = np.random.default_rng(3)
    c = intervals(X, y, methods=["kohavi"], rng=gen)
    d = intervals(X, y, methods=["kohavi"], rng=gen)
    assert c[0].estimate != d[0].estimate or c[0].details["err1"] != d[0].details["err1"]


def test_shared_and_per_method_options(xy01):
    X, y = xy01
    res = _by_method(intervals(X, y, methods=["kohavi", "martin"], rng=2, n_boot=50,
                               kohavi_options={"n_eff": 10}, martin_options={"centre": 0.4}))
    assert res["kohavi"].details["n_eff"] == 10 and res["kohavi"].details["n_boot"] == 50
    assert res["martin"].estimate == 0.4 and "centre_shared" not in res["martin"].details
    # a per-method option equal to the direct call with the shared centre
    design = np.column_stack([np.ones(30), X])
    direct = kohavi(design, np.where(y == 1, 1, -1), n_eff=10, centre=res["kohavi"].estimate)
    assert direct.confidence_interval == res["kohavi"].confidence_interval


def test_cud_is_cud_interval_with_the_same_seed(xy01):
    X, y = xy01
    res = intervals(X[:20], y[:20], methods=["cud", "kohavi"], rng=4, cud_options={"n_resamples": 20})
    assert isinstance(res[0], CUDResult) and res[0].method == "cud" and res[0].n_resamples == 20
    direct = cudbound.cud_interval(X[:20], y[:20], n_resamples=20, rng=4)
    assert direct.confidence_interval == res[0].confidence_interval
    np.testing.assert_array_equal(direct.bootstrap_distribution, res[0].bootstrap_distribution)
    np.testing.assert_array_equal(direct.coef, res[0].coef)


def test_a_given_fit_is_used_and_gives_the_same_interval(xy01, monkeypatch):
    """intervals_from_design with ``fitted`` fits nothing and gives the interval it gives without."""
    X, y = xy01[0][:20], np.where(xy01[1][:20] == 1, 1.0, -1.0)
    design = np.column_stack([np.ones(20), X])
    fitted = fit_classifier(design, y, SquaredLoss())
    free = intervals_from_design(design, y, ["cud"], rng=4, cud_options={"n_resamples": 20})[0]
    import cudbound.cud as cud_mod

    def no_fit(*a, **k):
        raise AssertionError("beta-hat fitted again")

    monkeypatch.setattr(cud_mod, "fit_classifier", no_fit)   # CUD's hook fits beta-hat there
    given = intervals_from_design(design, y, ["cud"], rng=4, fitted=fitted, cud_options={"n_resamples": 20})[0]
    assert given.confidence_interval == free.confidence_interval
    np.testing.assert_array_equal(given.bootstrap_distribution, free.bootstrap_distribution)
    with pytest.raises(ValueError, match="another design"):
        cudbound.cud_from_design(design[::-1], y, fitted=fitted, n_resamples=20)
    with pytest.raises(ValueError, match="not the hinge loss"):
        cudbound.cud_from_design(design, y, loss="hinge", fitted=fitted, n_resamples=20)


def test_labels_and_pos_label(xy01):
    X, y = xy01
    ys = np.where(y == 1, "yes", "no")
    a = intervals(X, ys, methods="kohavi,langford", pos_label="yes", rng=1)
    b = intervals(X, y, methods=("kohavi", "langford"), rng=1)
    assert [r.confidence_interval for r in a] == [r.confidence_interval for r in b]
    assert a[0].details["label_encoding"].positive == "yes"


@pytest.mark.parametrize("kwargs,match", [
    ({"methods": ["kohavi", "wilson"]}, "valid interval methods are"),
    ({"methods": []}, "empty"),
    ({"methods": ["kohavi", "kohavi"]}, "more than once"),
    ({"methods": ["kohavi"], "n_inner": 5}, r"unknown option\(s\) \['n_inner'\] for interval methods \['kohavi'\]"),
    ({"methods": ["kohavi"], "kohavi_options": {"prior": (1, 1)}},
     r"unknown option\(s\) \['prior'\] for interval method 'kohavi' in `kohavi_options`"),
    ({"methods": ["kohavi"], "kohavi_options": {"rng": 1}}, "may not set `rng`"),
    ({"methods": ["kohavi"], "bootstrap_distribution": [0.1, 0.2]}, "set by intervals"),
    ({"methods": ["kohavi"], "confidence_level": 1.2}, "`confidence_level`"),
    ({"methods": ["kohavi"], "kohavi_options": 3}, "must be a dict"),
])
def test_bad_input(xy01, kwargs, match):
    X, y = xy01
    with pytest.raises(ValueError, match=match):
        intervals(X, y, **kwargs)


def test_the_builtin_methods_are_the_papers_in_its_column_order():
    assert METHODS == ("cud", "bs1", "bs2", "kohavi", "yang", "martin", "langford")
    assert [get_method(m).label for m in METHODS] == ["CUD", "BS1", "BS2", "K", "Y", "M", "L"]


def test_methods_all_runs_every_registered_method_in_order(xy01):
    """Issue 17: ``methods="all"`` was refused."""
    X, y = xy01
    res = intervals(X, y, methods="all", rng=2, n_boot=20, n_resamples=20, n_inner=5)
    assert [r.method for r in res] == list(method_names())
    kohavi_alone = intervals(X, y, methods=["kohavi"], rng=2, n_boot=20)[0]
    assert _by_method(res)["kohavi"].confidence_interval == kohavi_alone.confidence_interval
    with pytest.raises(ValueError, match=r"unknown interval method\(s\) everything"):
        intervals(X, y, methods="everything")


# ------------------------------------------------------------------ one job: progress bar and Ctrl-C

@pytest.fixture
def stopping_method():
    """A registered method that raises KeyboardInterrupt when called, as Ctrl-C during it would."""
    def stop(design, y, *, confidence_level=0.95, rng=None):
        raise KeyboardInterrupt
    register("ctrl_c", stop, "raises KeyboardInterrupt")
    yield "ctrl_c"
    unregister("ctrl_c")


def test_ctrl_c_keeps_the_methods_that_finished(xy01, stopping_method):
    """Ctrl-C during the second of three methods: IntervalsInterrupted (a KeyboardInterrupt) carries the
    first method's result, equal to what a run of that method alone gives, the running method's name
    and the one not started."""
    from cudbound.registry import IntervalsInterrupted
    X, y = xy01
    alone = intervals(X, y, methods=["kohavi"], rng=3)[0]
    with pytest.raises(IntervalsInterrupted) as info:
        intervals(X, y, methods=["kohavi", stopping_method, "langford"], rng=3)
    stop = info.value
    assert isinstance(stop, KeyboardInterrupt)
    assert [r.method for r in stop.results] == ["kohavi"] and stop.method == stopping_method
    assert stop.pending == ("langford",)
    assert stop.results[0].confidence_interval == alone.confidence_interval
    assert stop.results[0].details["basis"] == alone.details["basis"]      # intervals()' details added
    assert "interrupted during 'ctrl_c'" in str(stop) and "langford" in str(stop)


def test_one_progress_bar_over_the_methods_names_each(xy01, capsys):
    """progress=True: one bar on stderr over the methods (3/3 at the end, each method named while it
    runs); progress=False and the default off a terminal: nothing on stderr."""
    X, y = xy01
    intervals(X, y, methods=["kohavi", "martin", "langford"], rng=3, progress=True)
    err = capsys.readouterr().err
    assert "3/3" in err and "intervals: langford" in err
    intervals(X, y, methods=["kohavi", "martin"], rng=3, progress=False)
    intervals(X, y, methods=["kohavi", "martin"], rng=3)          # stderr is not a terminal under pytest
    assert capsys.readouterr().err == ""
