"""Old keywords kept for one release (issue 30, point 3; cudbound/_deprecation.py): every deprecated
keyword warns, names its new name, and gives the result of the new name."""
import json
import warnings

import numpy as np
import pytest

import cudbound
from cudbound._deprecation import renamed, renames_of
from cudbound.results import ConfidenceInterval
from result_makers import small_data


@renamed(k="cv", sides="alternative")
def _folds(design, *, cv=10, alternative="two-sided"):
    return design, cv, alternative


def test_an_old_keyword_warns_names_the_new_one_and_is_passed_under_it():
    with pytest.warns(DeprecationWarning, match=r"_folds\(\): `k` is deprecated .* use `cv` instead"):
        assert _folds(0, k=3) == (0, 3, "two-sided")
    with pytest.warns(DeprecationWarning, match="use `alternative`"):
        assert _folds(0, sides="less") == (0, 10, "less")


def test_old_and_new_names_at_once_are_refused():
    with pytest.raises(TypeError, match=r"_folds\(\) got both `k` \(deprecated\) and `cv`; pass `cv` only"):
        _folds(0, k=3, cv=3)


def test_a_new_name_given_positionally_and_its_old_name_are_refused():
    @renamed(model="estimator")
    def score(estimator, X):
        return estimator, X
    with pytest.raises(TypeError, match="got both `model` \\(deprecated\\) and `estimator`"):
        score(1, 2, model=1)
    with pytest.warns(DeprecationWarning, match="use `estimator`"):
        assert score(model=1, X=2) == (1, 2)


def test_the_signature_shows_the_new_names_and_the_old_ones_are_listed():
    import inspect
    assert list(inspect.signature(_folds).parameters) == ["design", "cv", "alternative"]
    assert set(renames_of(_folds)) == {"k", "sides"}
    assert renames_of(len) == {}


def test_renaming_to_a_missing_parameter_or_keeping_the_old_one_is_a_mistake_found_at_once():
    with pytest.raises(TypeError, match="no parameter 'cv'"):
        renamed(k="cv")(lambda k=1: k)
    with pytest.raises(TypeError, match="still has a parameter 'k'"):
        renamed(k="cv")(lambda k=1, cv=2: k)


def test_no_warning_without_an_old_name():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _folds(0, cv=4) == (0, 4, "two-sided")


# --------------------------------------------------------------------------- every deprecated name

@pytest.fixture(scope="module")
def data():
    X, y = small_data(1)
    return X, y, np.column_stack([np.ones(24), X])


def _same(a, b):
    """Identical results: the same type and the same numbers, bit for bit."""
    if isinstance(a, (list, tuple)) and not isinstance(a, ConfidenceInterval):
        return type(a) is type(b) and len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b))
    if isinstance(a, dict):
        return _same_dict(a, b)
    if isinstance(a, (int, float, str, type(None), np.ndarray, ConfidenceInterval)):
        return np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
    if hasattr(a, "to_dict"):
        da, db = a.to_dict(), b.to_dict()
        return type(a) is type(b) and _same_dict(da, db)
    return a == b


def _same_dict(a, b):
    if a.keys() != b.keys():
        return False
    for k in a:
        if k.endswith("seconds"):   # wall times
            continue
        if isinstance(a[k], (dict, list, tuple, np.ndarray)):
            if not _same(a[k], b[k]):
                return False
        elif a[k] != b[k] and not (a[k] != a[k] and b[k] != b[k]):   # NaN equals NaN here
            return False
    return True


def _keyword(function, args, old, new, **same):
    """(the call with ``old``, the call with ``new``), ``args`` a function of the data."""
    def run(data):
        a = args(data)
        return (lambda: function(*a, **{**same, **old})), (lambda: function(*a, **{**same, **new}))
    return run


def _design(data):
    return data[2], data[1]


def _features(data):
    return data[0], data[1]


def _labels(data):
    return (data[1],)


def _binomial(data):
    return 9, 30, 0.9


def _binomial_km(data):
    return 9, 30


def _positional_sides(value, alternative):
    def run(data):
        from cudbound.baselines import binomial_interval
        return (lambda: binomial_interval(9, 30, 0.9, value)), (lambda: binomial_interval(9, 30, 0.9, alternative))
    return run


def _study_text(*methods):
    """A small study of ``methods`` on the donut data; options follow."""
    return f"""
        [study]
        name = "s"
        seed = 1
        repetitions = 1
        sizes = [30]
        methods = {json.dumps(list(methods))}
        [[datasets]]
        name = "donut"
    """


def _study(old_line, new_line):
    def run(data):
        from cudbound.coverage import parse_config
        base = _study_text("yang", "langford", "e632_delta")

        def protocol(line):
            config = parse_config(base + line)
            return (config.protocol(), config.method_options("yang", 30), config.method_options("langford", 30))
        return (lambda: protocol(old_line)), (lambda: protocol(new_line))
    return run


def _import(module, name):
    import importlib
    return getattr(importlib.import_module(module), name)


_B = "cudbound.baselines"
ALIASES = {
    # id: (the old name, the new name, a function of the data giving (old call, new call))
    "cross_validation(k=)": ("k", "cv", _keyword(_import(_B, "cross_validation"), _design, {"k": 3}, {"cv": 3},
                                                 repeats=2, rng=0)),
    "fold_assignments(k=)": ("k", "cv", _keyword(_import("cudbound.resampling", "fold_assignments"), _labels,
                                                 {"k": 4}, {"cv": 4}, repeats=2, rng=0)),
    "estimate_error(k=)": ("k", "cv", _keyword(_import(_B, "estimate_error"), _features, {"k": 5}, {"cv": 5},
                                               method="cv", rng=0)),
    "yang(k=)": ("k", "cv", _keyword(_import(_B, "yang"), _design, {"k": 3}, {"cv": 3}, repeats=2, rng=0)),
    "wald_cv(k=)": ("k", "cv", _keyword(_import(_B, "wald_cv"), _design, {"k": 4}, {"cv": 4}, rng=0)),
    "nested_cv(k=)": ("k", "cv", _keyword(_import(_B, "nested_cv"), _design, {"k": 3}, {"cv": 3}, repeats=2,
                                          rng=0)),
    "intervals(k=)": ("k", "cv", _keyword(cudbound.intervals, _features, {"k": 3}, {"cv": 3},
                                          methods=["yang", "wald_cv"], rng=0)),
    "intervals(yang_options={k})": ("k", "cv", _keyword(cudbound.intervals, _features, {"yang_options": {"k": 3}},
                                                        {"yang_options": {"cv": 3}}, methods=["yang"], rng=0)),
    "langford(sides=upper)": ("sides", "alternative", _keyword(_import(_B, "langford"), _design,
                                                               {"sides": "upper"}, {"alternative": "less"}, rng=0)),
    "langford(sides=2)": ("sides", "alternative", _keyword(_import(_B, "langford"), _design, {"sides": 2},
                                                           {"alternative": "two-sided"}, rng=0)),
    "binomial_interval(sides=lower)": ("sides", "alternative", _keyword(_import(_B, "binomial_interval"), _binomial,
                                                                        {"sides": "lower"}, {"alternative": "greater"})),
    "binomial_interval(..., 'upper')": ("sides", "alternative", _positional_sides("upper", "less")),
    "binomial_interval(..., 2)": ("sides", "alternative", _positional_sides(2, "two-sided")),
    "e632_delta(estimator=)": ("estimator", "point_estimate", _keyword(_import(_B, "e632_delta"), _design,
                                                                       {"estimator": ".632"},
                                                                       {"point_estimate": ".632"}, n_resamples=30,
                                                                       rng=0)),
    "cv_auc(model=)": ("model", "estimator", _keyword(lambda X, y, **kw: _import("cudbound.auc", "cv_auc")(
        X=X, y=y, **kw), _features,
                                                      {"model": _import("cudbound.auc", "KernelRLS")()},
                                                      {"estimator": _import("cudbound.auc", "KernelRLS")()},
                                                      cv=4, rng=0)),
    "lpo_auc(model=)": ("model", "estimator", _keyword(lambda X, y, **kw: _import("cudbound.auc", "lpo_auc")(
        X=X, y=y, **kw), _features, {"model": _import("cudbound.auc", "KernelRLS")()},
        {"estimator": _import("cudbound.auc", "KernelRLS")()})),
    "coverage_interval(level=)": ("level", "confidence_level", _keyword(_import("cudbound.coverage.store",
                                                                                 "coverage_interval"), _binomial_km,
                                                                         {"level": 0.9}, {"confidence_level": 0.9})),
    # (a study's ``sides`` keeps the value written, for the stored protocols: the test below)
    "study [options] k = 3": ("k", "cv", _study("[options.yang]\nk = 3\n[options.e632_delta]\nestimator = '.632'\n",
                                                "[options.yang]\ncv = 3\n[options.e632_delta]\npoint_estimate = '.632'\n")),
}


@pytest.mark.parametrize("key", list(ALIASES))
def test_every_old_name_warns_names_the_new_one_and_gives_the_identical_result(key, data):
    old, new, make = ALIASES[key]
    old_call, new_call = make(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        expected = new_call()
    with pytest.warns(DeprecationWarning, match=f"`{old}`.* is deprecated .* use `{new}`") as caught:
        got = old_call()
    # attributed to the user's line (here), so that Python's default filters show it
    assert all(w.filename == __file__ for w in caught if issubclass(w.category, DeprecationWarning)), \
        [(w.filename, str(w.message)) for w in caught]
    assert _same(got, expected)


@pytest.mark.parametrize("old", [2, "upper", "lower", "two-sided"])
def test_a_renamed_option_keeps_its_value_in_a_stored_protocol(old):
    """A study's ``sides`` is recorded under its old name and its old value, as before the rename
    (``alternative``): the fingerprint of an existing store does not change."""
    from cudbound._deprecation import apply_renames, renames_of
    from cudbound.baselines import langford
    from cudbound.coverage.config import _stored_names

    with pytest.warns(DeprecationWarning, match="alternative"):
        options = apply_renames("langford()", renames_of(langford), {"sides": old})
    assert options == {"alternative": old}
    assert _stored_names("langford", options) == {"sides": old}


# --------------------------------------------------------------------------- options: one entry, new names

def test_an_old_shared_option_and_a_new_one_in_a_methods_dict_work_together(data):
    """``k`` (shared, old) and ``yang_options={"cv": 4}`` (new): renamed once where they enter, so
    the method's own dict overrides the shared value as it always does (it used to be a TypeError
    in the middle of the run)."""
    from cudbound.registry import intervals_from_design
    X, y, design = data
    with pytest.warns(DeprecationWarning, match=r"intervals_from_design\(\): `k` is deprecated .* `cv`") as caught:
        res = intervals_from_design(design, y, ["wald_cv", "yang"], k=3, yang_options={"cv": 4}, rng=0)
    assert [r.details["k"] for r in res] == [3, 4]
    assert [w.filename for w in caught] == [__file__]
    with pytest.warns(DeprecationWarning) as caught:
        res = cudbound.intervals(X, y, ["wald_cv", "yang"], k=3, yang_options={"cv": 4}, rng=0)
    assert [r.details["k"] for r in res] == [3, 4] and [w.filename for w in caught] == [__file__]


@pytest.mark.parametrize("options", [{"k": 3, "cv": 3}, {"yang_options": {"k": 3, "cv": 4}}])
def test_an_old_and_a_new_name_of_one_option_are_one_error_before_any_method_runs(data, options):
    from cudbound.registry import intervals_from_design, register, unregister
    ran = []

    def spy(design, y, *, confidence_level=0.95, rng=None):
        ran.append(1)
        raise AssertionError("no method may run")
    register("spy", spy, "records that it ran")
    try:
        with pytest.raises(TypeError, match="got both `k` \\(deprecated\\) and `cv`; pass `cv` only"):
            intervals_from_design(data[2], data[1], ["spy", "yang"], rng=0, **options)
    finally:
        unregister("spy")
    assert ran == []


def test_check_options_takes_an_old_name_under_the_new_one():
    from cudbound.registry import check_options
    with pytest.warns(DeprecationWarning, match="use `cv`") as caught:
        check_options("yang", 30, k=3)
    assert [w.filename for w in caught] == [__file__]
    with pytest.raises(ValueError, match="at most n = 30"):
        check_options("yang", 30, cv=31)
    with pytest.raises(ValueError, match="at most n = 30"), pytest.warns(DeprecationWarning):
        check_options("yang", 30, k=31)


def test_a_study_renames_its_shared_options_and_refuses_old_and_new_together():
    from cudbound.coverage import ConfigError, parse_config
    base = _study_text("yang", "wald_cv") + "[options]\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new = parse_config(base + "cv = 3\n")
    with pytest.warns(DeprecationWarning, match=r"\[options\]: `k` is deprecated") as caught:
        old = parse_config(base + "k = 3\n")
    assert [w.filename for w in caught] == [__file__]
    assert old.options == new.options and old.protocol() == new.protocol()
    assert old.options["yang"]["cv"] == 3 and "k" not in old.options["wald_cv"]
    with pytest.raises(ConfigError, match="got both `k` \\(deprecated\\) and `cv`"):
        parse_config(base + "k = 3\ncv = 3\n")
