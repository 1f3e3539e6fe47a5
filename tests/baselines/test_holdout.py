"""Hold-out bounds: Clopper-Pearson against scipy, one-sided closed forms, edges, Shah's Table 2."""
import math

import numpy as np
import pytest
from scipy import stats

from cudbound.baselines import binomial_interval, binomial_lower, binomial_upper, gaussian_interval

GRID = [(k, m) for m in (1, 2, 3, 5, 10, 30, 57, 200) for k in sorted({0, 1, m // 3, m // 2, m - 1, m}) if 0 <= k <= m]


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("k,m", GRID)
def test_two_sided_is_scipy_exact_binomial_interval(k, m, level):
    # scipy finds the limits by root finding (relative error up to ~1e-9); the closed forms
    # below pin ours down to 1e-10.
    ref = stats.binomtest(k, m).proportion_ci(confidence_level=level, method="exact")
    low, high = binomial_interval(k, m, level)
    assert low == pytest.approx(ref.low, rel=1e-8, abs=1e-14)
    assert high == pytest.approx(ref.high, rel=1e-8, abs=1e-14)
    assert 0.0 <= low <= k / m <= high <= 1.0


@pytest.mark.parametrize("delta", [0.01, 0.025, 0.05, 0.3])
@pytest.mark.parametrize("k,m", GRID)
def test_one_sided_closed_forms(k, m, delta):
    up, lo = binomial_upper(k, m, delta), binomial_lower(k, m, delta)
    if k == m:
        assert up == 1.0
    elif k == 0:
        assert up == pytest.approx(1 - delta ** (1 / m), rel=1e-13)
    else:
        assert up == pytest.approx(stats.beta.ppf(1 - delta, k + 1, m - k), rel=1e-10)
    if k == 0:
        assert lo == 0.0
    elif k == m:
        assert lo == pytest.approx(delta ** (1 / m), rel=1e-13)
    else:
        assert lo == pytest.approx(stats.beta.ppf(delta, k, m - k + 1), rel=1e-10)


@pytest.mark.parametrize("k,m", [(k, m) for k, m in GRID if 0 < k < m])
def test_bounds_solve_the_defining_tail_equations(k, m):
    delta = 0.05
    # B_u = max{p : P_p(X <= k) >= delta}: the cdf equals delta there
    assert stats.binom.cdf(k, m, binomial_upper(k, m, delta)) == pytest.approx(delta, rel=1e-8)
    # B_l = min{p : P_p(X >= k) >= delta}: the tail *including k* equals delta (k - 1 in the cdf)
    assert stats.binom.sf(k - 1, m, binomial_lower(k, m, delta)) == pytest.approx(delta, rel=1e-8)


def test_lower_bound_uses_k_minus_one_not_the_printed_k():
    # The printed form min{p : 1 - Bin(m, k, p) >= delta} would give a positive lower bound at k = 0.
    m, delta = 20, 0.05
    printed_at_zero = stats.beta.ppf(delta, 1, m)          # solves P_p(X > 0) = delta
    assert printed_at_zero > 0 and binomial_lower(0, m, delta) == 0.0


def test_m_equals_one():
    assert binomial_upper(0, 1, 0.05) == pytest.approx(0.95)
    assert binomial_lower(0, 1, 0.05) == 0.0
    assert binomial_upper(1, 1, 0.05) == 1.0
    assert binomial_lower(1, 1, 0.05) == pytest.approx(0.05)
    assert binomial_interval(0, 1, 0.9) == pytest.approx((0.0, 0.95))
    assert binomial_interval(1, 1, 0.9) == pytest.approx((0.05, 1.0))


def test_one_sided_intervals():
    assert binomial_interval(3, 40, 0.95, alternative="less") == pytest.approx((0.0, binomial_upper(3, 40, 0.05)))
    assert binomial_interval(3, 40, 0.95, alternative="greater") == pytest.approx((binomial_lower(3, 40, 0.05), 1.0))
    assert binomial_interval(3, 40, 0.95, alternative="two-sided") == binomial_interval(3, 40, 0.95)


# Shah (2008), Table 2: (m = |T|, R_T, B_l, B_u) with delta = 0.025 per side; the table truncates to 3 decimals.
SHAH_ROWS = [(300, 0.183, 0.141, 0.231), (175, 0.291, 0.225, 0.364), (300, 0.13, 0.094, 0.173),
             (107, 0.0, 0.0, 0.033), (343, 0.038, 0.020, 0.063), (150, 0.246, 0.180, 0.323),
             (200, 0.04, 0.017, 0.077), (300, 0.2, 0.156, 0.249), (284, 0.042, 0.022, 0.072)]


@pytest.mark.parametrize("m,rt,bl,bu", SHAH_ROWS)
def test_reproduces_shah_table_2_binomial_columns(m, rt, bl, bu):
    k = round(rt * m)
    low, high = binomial_interval(k, m, 0.95)
    assert math.floor(low * 1000) / 1000 == pytest.approx(bl)
    assert math.floor(high * 1000) / 1000 == pytest.approx(bu)


def test_gaussian_interval_formulas_and_no_clipping():
    k, m, level = 1, 20, 0.95
    z = stats.norm.ppf(0.975)
    t = k / m
    low, high = gaussian_interval(k, m, level)
    assert (low, high) == pytest.approx((t - z * math.sqrt(t * (1 - t) / m), t + z * math.sqrt(t * (1 - t) / m)))
    assert low < 0.0                                       # leaves [0, 1]
    dl, dh = gaussian_interval(k, m, level, spread="deviation")
    assert (dl, dh) == pytest.approx((t - z * math.sqrt(t * (1 - t)), t + z * math.sqrt(t * (1 - t))))
    assert gaussian_interval(0, 50, level) == (0.0, 0.0)    # zero width at zero errors
    assert gaussian_interval(50, 50, level) == (1.0, 1.0)


@pytest.mark.parametrize("m,rt,cl,cu", [(300, 0.183, -0.592, 0.958), (300, 0.13, -0.543, 0.803),
                                        (343, 0.038, -0.344, 0.420), (107, 0.0, 0.0, 0.0)])
def test_deviation_spread_matches_shah_table_2_gaussian_columns(m, rt, cl, cu):
    low, high = gaussian_interval(round(rt * m), m, 2 * stats.norm.cdf(2) - 1, spread="deviation")
    assert low == pytest.approx(cl, abs=3e-3) and high == pytest.approx(cu, abs=3e-3)


@pytest.mark.parametrize("call,match", [
    (lambda: binomial_upper(3, 2, 0.05), "`k`"),
    (lambda: binomial_upper(-1, 2, 0.05), "`k`"),
    (lambda: binomial_upper(1, 0, 0.05), "`m`"),
    (lambda: binomial_upper(1.5, 4, 0.05), "`k`"),
    (lambda: binomial_lower(1, 4, 0.0), "`delta`"),
    (lambda: binomial_lower(1, 4, 1.5), "`delta`"),
    (lambda: binomial_interval(1, 4, 1.0), "`confidence_level`"),
    (lambda: binomial_interval(1, 4, 0.9, alternative=1), "`alternative`"),
    (lambda: binomial_interval(1, 4, 0.9, alternative="both"), "`alternative`"),
    (lambda: gaussian_interval(1, 4, 0.9, spread="sd"), "`spread`"),
    (lambda: binomial_upper(True, 4, 0.1), "`k`"),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_whole_floats_and_numpy_integers_are_accepted():
    assert binomial_upper(np.int64(2), 10.0, 0.05) == binomial_upper(2, 10, 0.05)


@pytest.mark.parametrize("k, m", [(0, 10), (3, 10), (9, 30), (10, 10), (17, 200)])
@pytest.mark.parametrize("confidence_level", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("alternative", ["less", "greater"])
def test_one_sided_alternatives_are_scipys_one_sided_exact_binomial_bounds(k, m, confidence_level, alternative):
    """``alternative="less"`` is [0, B_u(delta)] and ``"greater"`` [B_l(delta), 1]: the one-sided
    exact (Clopper-Pearson) bounds of ``scipy.stats.binomtest`` with the same alternative."""
    ci = binomial_interval(k, m, confidence_level, alternative=alternative)
    ref = stats.binomtest(k, m, alternative=alternative).proportion_ci(confidence_level, method="exact")
    assert ci.low == pytest.approx(ref.low, abs=1e-9) and ci.high == pytest.approx(ref.high, abs=1e-9)
    assert (ci.low == 0.0) if alternative == "less" else (ci.high == 1.0)
