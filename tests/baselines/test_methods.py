"""The six baseline intervals: building blocks against scipy, BS1's distribution against the reference."""
import math
import re
import warnings

import numpy as np
import pytest
from scipy import stats

import cudbound.baselines as bl
from cudbound.baselines import (DegenerateResampleWarning, beta_interval, binomial_interval,
                                bootstrap_632_distribution, bs1, bs2, cross_validation, e632, kohavi, langford,
                                martin, normal_interval, percentile_interval, yang)
from cudbound.refit import DesignRefits
from cudbound.design import reparametrise
from cudbound.losses import SquaredLoss
from cudbound.results import IntervalResult
from reference_baselines import make_data, ref_bs632_value

# ---------------------------------------------------------------- BS1 and BS2 on scipy.stats.bootstrap's resamples
# (the percentile and basic intervals themselves: tests/test_statistics.py)


def test_bs1_and_bs2_on_scipy_resamples_give_scipy_intervals():
    # a statistic in [0, 1] that both can compute: the error rate of 0/1 mistakes
    mistakes = (np.random.default_rng(3).random(40) < 0.3).astype(float)
    level = 0.9
    kw = dict(confidence_level=level, n_resamples=500, vectorized=True)
    p = stats.bootstrap((mistakes,), np.mean, method="percentile", rng=np.random.default_rng(4), **kw)
    b = stats.bootstrap((mistakes,), np.mean, method="basic", rng=np.random.default_rng(4), **kw)
    Phi, y = make_data(20, 2, 0)
    t = float(np.mean(mistakes))
    r1 = bs1(Phi, y, confidence_level=level, centre=t, bootstrap_distribution=p.bootstrap_distribution)
    r2 = bs2(Phi, y, confidence_level=level, centre=t, bootstrap_distribution=b.bootstrap_distribution)
    assert tuple(r1.confidence_interval) == pytest.approx(tuple(p.confidence_interval), rel=1e-14)
    assert tuple(r2.confidence_interval) == pytest.approx(
        (max(0.0, b.confidence_interval.low), min(1.0, b.confidence_interval.high)), rel=1e-14)
    assert r1.estimate == r2.estimate == t


# ---------------------------------------------------------------- Beta posterior vs scipy.stats.beta

@pytest.mark.parametrize("t,m,prior", [(0.0, 30, (1, 1)), (0.2, 30, (1, 1)), (0.37, 50.5, (0.5, 0.5)),
                                       (1.0, 12, (2, 3)), (0.6321, 7, (1, 1))])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_beta_interval_is_scipy_beta_quantiles(t, m, prior, level):
    a, b = prior
    low, high = beta_interval(t, m, level, prior)
    dist = stats.beta(a + t * m, b + (1 - t) * m)
    assert low == pytest.approx(dist.ppf((1 - level) / 2), rel=1e-12, abs=1e-15)
    assert high == pytest.approx(dist.ppf(1 - (1 - level) / 2), rel=1e-12)


def test_martin_uses_the_beta_posterior_around_the_centre():
    Phi, y = make_data(30, 2, 1)
    res = martin(Phi, y, centre=0.25, confidence_level=0.9)
    dist = stats.beta(1 + 0.25 * 30, 1 + 0.75 * 30)
    assert tuple(res.confidence_interval) == pytest.approx((dist.ppf(0.05), dist.ppf(0.95)), rel=1e-12)
    assert res.details["m"] == 30 and res.details["posterior_a"] == pytest.approx(8.5)
    res = martin(Phi, y, centre=0.25, m=10, prior=(0.5, 0.5))
    dist = stats.beta(0.5 + 2.5, 0.5 + 7.5)
    assert tuple(res.confidence_interval) == pytest.approx((dist.ppf(0.025), dist.ppf(0.975)), rel=1e-12)


# ---------------------------------------------------------------- normal approximations, Langford

def test_kohavi_and_yang_formulas():
    Phi, y = make_data(40, 2, 2)
    z = stats.norm.ppf(0.975)
    t = 0.3
    k = kohavi(Phi, y, centre=t, form="wald")
    assert tuple(k.confidence_interval) == pytest.approx((t - z * math.sqrt(t * (1 - t) / 40),
                                                          t + z * math.sqrt(t * (1 - t) / 40)))
    assert k.details["n_eff"] == 40
    yv = yang(Phi, y, centre=t, rng=0)
    assert yv.details["n_eff"] == 20 and yv.details["k"] == 2 and yv.details["repeats"] == 10
    assert tuple(yv.confidence_interval) == pytest.approx((t - z * math.sqrt(t * (1 - t) / 20),
                                                           t + z * math.sqrt(t * (1 - t) / 20)))
    assert tuple(normal_interval(t, 20, 0.95)) == pytest.approx(tuple(yv.confidence_interval))
    k2 = kohavi(Phi, y, centre=0.02, n_eff=10, form="wald")
    assert k2.low == 0.0 and k2.details["unclipped_low"] < 0.0        # clipped, unclipped kept


@pytest.mark.parametrize("t,n", [(0.0, 30), (0.3, 40), (0.5, 50), (1.0, 30), (0.137, 12.5), (0.9, 100)])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_kohavi_default_is_the_wilson_interval_of_statsmodels(t, n, level):
    from statsmodels.stats.proportion import proportion_confint
    Phi, y = make_data(30, 2, 2)
    want = proportion_confint(t * n, n, alpha=1 - level, method="wilson")
    assert tuple(bl.wilson_interval(t, n, level)) == pytest.approx(want, abs=1e-12)
    k = kohavi(Phi, y, centre=t, n_eff=n, confidence_level=level)
    assert tuple(k.confidence_interval) == pytest.approx(want, abs=1e-12) and k.details["form"] == "wilson"
    assert k.estimate == t and k.low < k.high


def test_yang_cv_centre_is_the_cross_validation_estimate():
    Phi, y = make_data(30, 2, 4)
    res = yang(Phi, y, centre="cv", rng=7)
    assert res.estimate == cross_validation(Phi, y, cv=2, repeats=10, rng=7).estimate
    assert res.details["cv_estimate"] == res.estimate
    res5 = yang(Phi, y, cv=5, repeats=2, rng=7)
    assert res5.details["n_eff"] == 6 and res5.details["centre_source"] == ".632"


@pytest.mark.parametrize("t,m,k", [(0.25, 30, 8), (0.2499, 30, 7), (0.0, 30, 0), (1.0, 30, 30), (0.51, 1, 1)])
def test_langford_rounds_and_inverts_the_binomial(t, m, k):
    Phi, y = make_data(30, 2, 5)
    res = langford(Phi, y, centre=t, m=m)
    assert res.details["k"] == k
    assert tuple(res.confidence_interval) == pytest.approx(tuple(binomial_interval(k, m, 0.95)))
    up = langford(Phi, y, centre=t, m=m, alternative="less")
    assert tuple(up.confidence_interval) == pytest.approx(tuple(binomial_interval(k, m, 0.95, alternative="less")))


# ---------------------------------------------------------------- BS1 distribution vs the reference

@pytest.mark.parametrize("n,seed", [(8, 0), (11, 1), (14, 2)])
def test_bs632_values_match_reference(n, seed):
    from cudbound.baselines.methods import _bs632_values
    Phi, y = make_data(n, 2, seed)
    rng = np.random.default_rng(seed + 50)
    outer = rng.integers(0, n, size=(4, n))
    inner = rng.integers(0, n, size=(4, 6, n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateResampleWarning)
        Z = reparametrise(Phi).Z  # the estimators work in orthonormal coordinates
        values, _ = _bs632_values(DesignRefits(Z, y, SquaredLoss()), outer, inner)
    for b in range(4):
        assert values[b] == pytest.approx(ref_bs632_value(Phi, y, outer[b], inner[b]), abs=1e-12)


def test_bootstrap_632_distribution_is_the_bs1_distribution():
    Phi, y = make_data(20, 2, 3)
    dist = bootstrap_632_distribution(Phi, y, n_resamples=50, n_inner=10, rng=4)
    res = bs1(Phi, y, n_resamples=50, n_inner=10, centre=0.2, rng=4)
    np.testing.assert_array_equal(res.details["bootstrap_distribution"], dist)
    assert tuple(res.confidence_interval) == pytest.approx(tuple(percentile_interval(dist, 0.95)))
    r2 = bs2(Phi, y, n_resamples=50, n_inner=10, centre=0.2, rng=4)
    assert r2.width == pytest.approx(res.width) or r2.low == 0.0 or r2.high == 1.0


def test_bs1_centre_is_the_632_estimate_from_the_same_stream():
    Phi, y = make_data(20, 2, 3)
    res = bs1(Phi, y, n_resamples=20, n_inner=5, n_boot=30, rng=8)
    assert res.estimate == e632(Phi, y, n_resamples=30, rng=np.random.default_rng(8)).estimate
    assert res.details["centre_source"] == ".632"


def test_bias_corrected_variant_shifts_the_literal_values_to_the_centre():
    """bias_corrected: the percentile and basic intervals of values - mean + t (scipy's
    percentile/basic arithmetic, numpy.quantile type 7), BS2 then BS1 reflected about t."""
    Phi, y = make_data(25, 2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateResampleWarning)
        lit = bs1(Phi, y, n_resamples=60, n_inner=8, n_boot=30, rng=4)
    dist, t = lit.details["bootstrap_distribution"], lit.estimate
    one = bs1(Phi, y, centre=t, bootstrap_distribution=dist, distribution="bias_corrected")
    two = bs2(Phi, y, centre=t, bootstrap_distribution=dist, distribution="bias_corrected")
    shifted = dist - dist.mean() + t
    lo, hi = np.quantile(shifted, [0.025, 0.975])
    assert (one.details["unclipped_low"], one.details["unclipped_high"]) == pytest.approx((lo, hi), abs=1e-14)
    assert (two.details["unclipped_low"], two.details["unclipped_high"]) == pytest.approx((2 * t - hi, 2 * t - lo),
                                                                                        abs=1e-14)
    assert one.details["bootstrap_bias"] == pytest.approx(dist.mean() - t, abs=1e-15)
    assert lit.details["distribution"] == "literal" and lit.details["distribution_shift"] == 0.0


def test_bs1_default_sizes():
    """The documented defaults (1000 outer resamples, 50 inner) are the ones used; the speed of
    bs1 is a benchmark matter, not a test."""
    Phi, y = make_data(50, 4, 0)
    res = bs1(Phi, y, rng=0)
    assert res.details["n_resamples"] == 1000 and res.details["n_inner"] == 50
    assert 0.0 <= res.low <= res.high <= 1.0


# ---------------------------------------------------------------- degenerate data: warning, finite interval

def _one_positive(n=12, seed=0):
    rng = np.random.default_rng(seed)
    y = -np.ones(n)
    y[0] = 1.0
    return np.column_stack([np.ones(n), rng.normal(size=(n, 1))]), y


@pytest.mark.parametrize("method", ["bs1", "bs2", "kohavi", "yang", "martin", "langford"])
def test_degenerate_data_warn_and_give_finite_intervals(method):
    Phi, y = _one_positive()
    kw = {"n_resamples": 40, "n_inner": 8} if method in ("bs1", "bs2") else {}
    with pytest.warns(DegenerateResampleWarning):
        res = getattr(bl, method)(Phi, y, rng=0, **kw)
    assert isinstance(res, IntervalResult) and res.method == method
    assert np.all(np.isfinite([res.low, res.high, res.estimate]))
    assert 0.0 <= res.low <= res.high <= 1.0


def test_yang_with_more_folds_than_class_members():
    Phi, y = _one_positive(10)
    with pytest.warns(DegenerateResampleWarning, match="only one class"):
        res = yang(Phi, y, cv=5, centre="cv", rng=1)
    assert np.isfinite(res.estimate) and res.details["cv_degenerate_refits"] > 0


# ---------------------------------------------------------------- validation and docs

@pytest.mark.parametrize("call,match", [
    (lambda P, y: bs1(P, y, n_resamples=1), "`n_resamples`"),
    (lambda P, y: bs1(P, y, n_inner=0), "`n_inner`"),
    (lambda P, y: bs2(P, y, centre="median"), "`centre`"),
    (lambda P, y: bs2(P, y, bootstrap_distribution=[0.1, np.nan]), "`bootstrap_distribution`"),
    (lambda P, y: bs1(P, y, n_resamples=20, n_inner=2, distribution="shifted"), "`distribution`"),
    (lambda P, y: kohavi(P, y, form="score"), "`form`"),
    (lambda P, y: kohavi(P, y, n_eff=0), "`n_eff`"),
    (lambda P, y: kohavi(P, y, centre=1.5), "`centre`"),
    (lambda P, y: kohavi(P, y, confidence_level=95), "`confidence_level`"),
    (lambda P, y: yang(P, y, cv=1), "`cv`"),
    (lambda P, y: yang(P, y, centre="bogus"), "`centre`"),
    (lambda P, y: martin(P, y, prior=(0, 1)), "`prior"),
    (lambda P, y: martin(P, y, prior=3), "`prior`"),
    (lambda P, y: langford(P, y, m=2.5), "`m`"),
    (lambda P, y: langford(P, y, alternative="left"), "`alternative`"),
    (lambda P, y: percentile_interval([0.1], 0.9), "`bootstrap_values`"),
])
def test_bad_input_names_the_argument(call, match):
    Phi, y = make_data(12, 2, 0)
    with pytest.raises(ValueError, match=match):
        call(Phi, y)


PUBLIC = [bl.resubstitution, bl.loo_bootstrap, bl.e632, bl.e632plus, bl.cross_validation, bl.leave_one_out,
          bl.bs1, bl.bs2, bl.kohavi, bl.yang, bl.martin, bl.langford, bl.percentile_interval, bl.basic_interval,
          bl.normal_interval, bl.beta_interval, bl.bootstrap_632_distribution, bl.binomial_upper,
          bl.binomial_lower, bl.binomial_interval, bl.gaussian_interval]


@pytest.mark.parametrize("func", PUBLIC, ids=lambda f: f.__name__)
def test_docstrings_state_a_source(func):
    """numpydoc sections: every parameter of the signature is documented, and the References
    section cites at least one dated source."""
    import inspect
    doc = inspect.getdoc(func) or ""
    params = doc.split("Parameters\n----------\n", 1)
    assert len(params) == 2, "no numpydoc Parameters section"
    documented = set(re.findall(r"^(\w+)\s*:", params[1], flags=re.M))
    wanted = {name for name, par in inspect.signature(func).parameters.items()
              if par.kind not in (par.VAR_POSITIONAL, par.VAR_KEYWORD)}
    assert wanted <= documented, sorted(wanted - documented)
    refs = doc.split("References\n----------\n", 1)
    assert len(refs) == 2, "no numpydoc References section"
    assert re.search(r"\((19|20)\d\d\)|\b(19|20)\d\d\b", refs[1]), "no dated source"
