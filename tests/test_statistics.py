"""cudbound/statistics.py: each formula against an independent reference (scipy.stats, statsmodels,
closed forms, the type-7 quantile written out)."""
import math

import numpy as np
import pytest
from scipy import stats

from cudbound.statistics import (ALTERNATIVES, BCaLevels, basic_interval, bca_interval, bca_levels,
                                 check_alternative, normal_critical_value, normal_p_value, percentile_interval,
                                 percentile_levels, quantile_interval, t_critical_value, t_p_value, wilson_interval)

LEVELS = [0.5, 0.8, 0.9, 0.95, 0.99]


def type7(values, p):
    """Hyndman & Fan's type 7 quantile, written out: v_(j) + (h - j)(v_(j+1) - v_(j)), h = (B - 1) p."""
    v = sorted(values)
    h = (len(v) - 1) * p
    j = math.floor(h)
    return v[j] if j + 1 >= len(v) else v[j] + (h - j) * (v[j + 1] - v[j])


# --------------------------------------------------------------------------- critical values and p-values

@pytest.mark.parametrize("level", LEVELS)
def test_normal_critical_values_are_scipys_quantiles(level):
    z = normal_critical_value(level)
    assert z == pytest.approx(stats.norm.interval(level)[1], rel=1e-14)
    assert stats.norm.cdf(z) - stats.norm.cdf(-z) == pytest.approx(level, rel=1e-13)   # two-sided coverage
    for alternative in ("less", "greater"):
        assert normal_critical_value(level, alternative) == pytest.approx(stats.norm.ppf(level), rel=1e-14)


def test_the_normal_critical_value_of_95_percent_is_1_96():
    assert normal_critical_value(0.95) == pytest.approx(1.959963984540054, rel=1e-15)
    assert normal_critical_value(0.95, "greater") == pytest.approx(1.6448536269514722, rel=1e-15)


@pytest.mark.parametrize("df", [1, 4, 9.5, 30, 1e6])
@pytest.mark.parametrize("level", LEVELS)
def test_t_critical_values_are_scipys_quantiles(level, df):
    assert t_critical_value(level, df) == pytest.approx(stats.t.interval(level, df)[1], rel=1e-12)
    assert t_critical_value(level, df, "less") == pytest.approx(stats.t.ppf(level, df), rel=1e-12)
    if df == 1:   # the Cauchy distribution: tan(pi (p - 1/2))
        assert t_critical_value(level, df) == pytest.approx(math.tan(math.pi * level / 2), rel=1e-12)
    if df == 1e6:
        assert t_critical_value(level, df) == pytest.approx(normal_critical_value(level), rel=1e-5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_t_p_values_are_those_of_scipys_one_sample_t_test(seed):
    x = np.random.default_rng(seed).normal(0.3, 1.0, size=12)
    for alternative in ALTERNATIVES:
        res = stats.ttest_1samp(x, 0.0, alternative=alternative)
        assert t_p_value(float(res.statistic), 11, alternative) == pytest.approx(res.pvalue, rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_normal_p_values_are_those_of_statsmodels_z_test(seed):
    from statsmodels.stats.weightstats import ztest
    x = np.random.default_rng(seed).normal(0.4, 1.0, size=30)
    for alternative, theirs in zip(ALTERNATIVES, ("two-sided", "smaller", "larger")):
        z, p = ztest(x, value=0.0, alternative=theirs)
        assert normal_p_value(z, alternative) == pytest.approx(p, rel=1e-12)


@pytest.mark.parametrize("level", LEVELS)
def test_a_critical_value_is_where_the_p_value_is_one_minus_the_level(level):
    z2, z1 = normal_critical_value(level), normal_critical_value(level, "greater")
    assert normal_p_value(z2) == pytest.approx(1 - level, rel=1e-12)
    assert normal_p_value(z1, "greater") == pytest.approx(1 - level, rel=1e-12)
    assert normal_p_value(-z1, "less") == pytest.approx(1 - level, rel=1e-12)
    t2 = t_critical_value(level, 7)
    assert t_p_value(t2, 7) == pytest.approx(1 - level, rel=1e-12)
    assert t_p_value(-t_critical_value(level, 7, "less"), 7, "less") == pytest.approx(1 - level, rel=1e-12)


def test_infinite_statistics_have_p_values_0_and_1():
    assert normal_p_value(math.inf) == 0.0 and normal_p_value(-math.inf, "greater") == 1.0
    assert t_p_value(-math.inf, 3, "less") == 0.0 and normal_p_value(0.0) == 1.0


# --------------------------------------------------------------------------- Wilson

@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
def test_wilson_is_statsmodels_wilson_interval(level):
    from statsmodels.stats.proportion import proportion_confint
    for n in (1, 2, 7, 30, 101):
        for x in range(n + 1):
            want = proportion_confint(x, n, alpha=1 - level, method="wilson")
            assert tuple(wilson_interval(x / n, n, level)) == pytest.approx(want, abs=2e-15)


@pytest.mark.parametrize("t, n", [(0.0, 12.5), (0.137, 12.5), (0.5, 3.3), (0.9, 250.0), (1.0, 0.7)])
def test_wilson_ends_solve_the_score_equation(t, n):
    """|t - p| = z sqrt(p (1 - p) / n) at both ends (Wilson 1927), n not whole; at t = 0 (1) the
    lower (upper) end is t itself."""
    z = stats.norm.isf(0.05)
    low, high = wilson_interval(t, n, 0.9)
    for p in (low, high):
        if p == pytest.approx(t, abs=1e-15) and t in (0.0, 1.0):
            continue
        assert abs(t - p) == pytest.approx(z * math.sqrt(p * (1 - p) / n), abs=1e-13)
    assert 0.0 <= low <= high <= 1.0 and low - 1e-15 <= t <= high + 1e-15 and high - low > 0.05


def test_wilson_at_zero_and_one_errors_keeps_a_width():
    assert wilson_interval(0.0, 30).low == 0.0 and wilson_interval(0.0, 30).high > 0.1
    assert wilson_interval(1.0, 30).high == 1.0 and wilson_interval(1.0, 30).low < 0.9


# --------------------------------------------------------------------------- intervals from bootstrap values

@pytest.mark.parametrize("B", [2, 3, 10, 999])
def test_the_quantiles_are_type_7(B):
    values = np.random.default_rng(B).exponential(size=B)
    for levels in [(0.0, 1.0), (0.025, 0.975), (0.1, 0.5), (0.333, 0.9)]:
        assert tuple(quantile_interval(values, levels)) == pytest.approx(
            (type7(values, levels[0]), type7(values, levels[1])), rel=1e-14)
    assert percentile_interval(values, 0.9) == pytest.approx((type7(values, 0.05), type7(values, 0.95)), rel=1e-14)


def test_percentile_levels_are_equal_tails():
    for level in LEVELS:
        low, high = percentile_levels(level)
        assert low == pytest.approx((1 - level) / 2, rel=1e-14) and high - low == pytest.approx(level, rel=1e-14)


@pytest.mark.parametrize("level", [0.8, 0.9, 0.95])
@pytest.mark.parametrize("seed", [0, 1])
def test_percentile_and_basic_are_scipys_on_its_resamples(level, seed):
    data = np.random.default_rng(seed).exponential(size=25)
    kw = dict(confidence_level=level, n_resamples=999, vectorized=True)
    p = stats.bootstrap((data,), np.mean, method="percentile", rng=np.random.default_rng(seed + 10), **kw)
    b = stats.bootstrap((data,), np.mean, method="basic", rng=np.random.default_rng(seed + 10), **kw)
    np.testing.assert_array_equal(p.bootstrap_distribution, b.bootstrap_distribution)
    ours_p = percentile_interval(p.bootstrap_distribution, level)
    ours_b = basic_interval(np.mean(data), b.bootstrap_distribution, level)
    assert ours_p == pytest.approx(tuple(p.confidence_interval), rel=1e-14)
    assert ours_b == pytest.approx(tuple(b.confidence_interval), rel=1e-14)
    assert ours_b.high - ours_b.low == pytest.approx(ours_p.high - ours_p.low)     # reflected, same width


def _jackknife_acceleration(data, statistic):
    """a = sum U^3 / (6 (sum U^2)^(3/2)), U_i = mean of the jackknife values - the i-th (Efron &
    Tibshirani 1993, eq. 14.15)."""
    jack = np.array([statistic(np.delete(data, i)) for i in range(data.shape[0])])
    u = jack.mean() - jack
    return float(np.sum(u ** 3) / (6.0 * np.sum(u ** 2) ** 1.5))


@pytest.mark.parametrize("statistic", [np.mean, np.std], ids=["mean", "std"])
@pytest.mark.parametrize("level", [0.8, 0.9, 0.95])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bca_is_scipys_bca_on_its_resamples(seed, level, statistic):
    data = np.random.default_rng(seed).lognormal(size=20)
    res = stats.bootstrap((data,), statistic, method="BCa", confidence_level=level, n_resamples=1999,
                          rng=np.random.default_rng(seed + 5))
    a = _jackknife_acceleration(data, statistic)
    ours = bca_interval(float(statistic(data)), res.bootstrap_distribution, a, level)
    assert tuple(ours) == pytest.approx(tuple(res.confidence_interval), rel=1e-10)


def test_bca_without_bias_or_acceleration_is_the_percentile_interval():
    values = np.random.default_rng(3).normal(size=401)
    centre = float(np.median(values))              # as many values below as above: z0 = 0
    z0, low, high = bca_levels(centre, values, 0.0, 0.9)
    assert z0 == 0.0 and (low, high) == pytest.approx(percentile_levels(0.9), rel=1e-14)
    assert bca_interval(centre, values, 0.0, 0.9) == pytest.approx(percentile_interval(values, 0.9), rel=1e-14)


def test_bca_levels_follow_the_closed_form():
    values = np.arange(10.0)
    z0, low, high = bca_levels(3.0, values, 0.1, 0.9)   # 3 values below 3, 4 at most 3: p0 = 7/20
    assert z0 == pytest.approx(stats.norm.ppf(7 / 20), rel=1e-14)
    for got, zp in ((low, stats.norm.ppf(0.05)), (high, stats.norm.ppf(0.95))):
        assert got == pytest.approx(stats.norm.cdf(z0 + (z0 + zp) / (1 - 0.1 * (z0 + zp))), rel=1e-13)


@pytest.mark.parametrize("theta, edge", [(-1.0, 0.0), (11.0, 1.0)])
def test_bca_outside_every_value_has_the_formulas_limit(theta, edge):
    values = np.arange(10.0)
    levels = bca_levels(theta, values, 0.05, 0.95)
    assert isinstance(levels, BCaLevels) and math.isinf(levels.bias_correction)
    assert (levels.low, levels.high) == (edge, edge)
    assert tuple(bca_interval(theta, values, 0.05, 0.95)) == (9.0 * edge, 9.0 * edge)


# --------------------------------------------------------------------------- input

@pytest.mark.parametrize("call, match", [
    (lambda: normal_critical_value(95), "`confidence_level`"),
    (lambda: normal_critical_value(0.95, "both"), "`alternative`"),
    (lambda: t_critical_value(0.95, 0), "`df`"),
    (lambda: t_p_value(1.0, 3, "two.sided"), "`alternative`"),
    (lambda: wilson_interval(1.2, 10), "`proportion`"),
    (lambda: wilson_interval(0.2, 0), "`n`"),
    (lambda: percentile_interval([0.1], 0.9), "`bootstrap_values`"),
    (lambda: percentile_interval([0.1, np.nan], 0.9), "`bootstrap_values` has a non-finite value at position 1"),
    (lambda: basic_interval(math.nan, [0.1, 0.2]), "`theta_hat`"),
    (lambda: quantile_interval([0.1, 0.2], (0.1, 1.5)), "`levels`"),
    (lambda: bca_levels(0.1, [0.1, 0.2], math.inf), "`acceleration`"),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_the_alternatives_are_scipys():
    assert ALTERNATIVES == ("two-sided", "less", "greater")
    assert [check_alternative(a) for a in ALTERNATIVES] == list(ALTERNATIVES)
