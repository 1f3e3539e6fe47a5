"""Intervals for the AUC of one score vector (cudbound/auc/intervals.py), against independent references:

* DeLong: a plain O(m n) placement-value implementation written here, and pROC 1.18.0's
  ``var(roc)`` and ``ci.auc(method = "delong")`` (tests/fixtures/make_auc_interval_fixtures.R,
  which wrote auc_interval_data.csv and auc_interval_delong.csv); Stata's ``roctab`` on Hanley &
  McNeil's CT ratings (the printed digits as quoted second-hand, see the test);
* Hanley & McNeil: their 1982 CT rating example (A = 0.893, SE = 0.032 as printed) and the closed
  form written out here;
* Newcombe: the roots of the defining quartic found here with numpy (his paper's printed
  examples could not be consulted: see the test);
* bootstrap: the resample draws replayed here, the AUC of each by pair counting, and
  ``scipy.stats.bootstrap`` fed that same bootstrap distribution (percentile and BCa), with
  scipy's two-sample BCa formula written out here as well.
"""
import math
import types
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from cudbound.auc import auc_score
from cudbound.auc import intervals as iv
from cudbound.auc.intervals import (DegenerateIntervalWarning, bootstrap_interval, delong_interval,
                                    hanley_mcneil_interval, newcombe_interval)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ALL = [
    ("delong", lambda y, s, **k: delong_interval(y, s, **k)),
    ("delong_logit", lambda y, s, **k: delong_interval(y, s, transform="logit", **k)),
    ("hanley_mcneil", lambda y, s, **k: hanley_mcneil_interval(y, s, **k)),
    ("newcombe", lambda y, s, **k: newcombe_interval(y, s, **k)),
    ("bootstrap_percentile", lambda y, s, **k: bootstrap_interval(y, s, n_resamples=300, rng=3, **k)),
    ("bootstrap_bca", lambda y, s, **k: bootstrap_interval(y, s, method="bca", n_resamples=300, rng=3, **k)),
]
IDS = [name for name, _ in ALL]

# Hanley & McNeil (1982), Table I: CT ratings 1 (definitely normal) .. 5 (definitely abnormal) of 58
# normal and 51 abnormal patients. The counts as Stata ships them in hanley.dta and as public test
# suites reproduce them.
HM_NORMAL = [33, 6, 6, 11, 2]
HM_ABNORMAL = [3, 2, 2, 11, 33]


def hanley_data():
    ratings = np.arange(1, 6)
    y = np.r_[np.ones(51, dtype=int), np.zeros(58, dtype=int)]
    return y, np.r_[np.repeat(ratings, HM_ABNORMAL), np.repeat(ratings, HM_NORMAL)].astype(float)


def psi(y, s):
    """The m x n matrix psi(X_i, Y_j) = 1, 1/2, 0 for X >, =, < Y, by plain comparison."""
    y, s = np.asarray(y), np.asarray(s, dtype=float)
    x, w = s[y == 1], s[y != 1]
    return (x[:, None] > w[None, :]) + 0.5 * (x[:, None] == w[None, :])


def plain_delong(y, s):
    """(AUC, SE): DeLong, DeLong & Clarke-Pearson's variance from the placements, written out."""
    p = psi(y, s)
    m, n = p.shape
    v10, v01 = p.mean(axis=1), p.mean(axis=0)
    auc = p.mean()
    s10 = ((v10 - auc) ** 2).sum() / (m - 1)
    s01 = ((v01 - auc) ** 2).sum() / (n - 1)
    return auc, math.sqrt(s10 / m + s01 / n)


def quietly(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateIntervalWarning)
        return call(*args, **kwargs)


def random_case(kind, seed):
    rng = np.random.default_rng(seed)
    if kind == "ties":
        m, n = 25, 31
        s = np.round(np.r_[rng.normal(0.7, 1, m), rng.normal(0, 1, n)], 1)
    elif kind == "below_half":
        m, n = 12, 9
        s = np.round(np.r_[rng.normal(-1, 1, m), rng.normal(0, 1, n)], 1)
    elif kind == "two_per_class":
        m, n = 2, 2
        s = rng.integers(0, 3, 4).astype(float)
        s[:2] += np.array([1.0, 0.0])
    else:  # heavy ties, unequal classes
        m, n = 7, 40
        s = rng.integers(0, 4, m + n).astype(float)
    y = np.r_[np.ones(m, dtype=int), np.zeros(n, dtype=int)]
    order = rng.permutation(m + n)
    return y[order], s[order]


# --------------------------------------------------------------------------- DeLong


@pytest.mark.parametrize("kind, seed", [("ties", 0), ("ties", 1), ("below_half", 2), ("two_per_class", 3),
                                        ("two_per_class", 4), ("heavy_ties", 5), ("heavy_ties", 6)])
def test_delong_is_the_plain_placement_formula(kind, seed):
    y, s = random_case(kind, seed)
    auc, se = plain_delong(y, s)
    z = stats.norm.ppf(0.95)                              # level 0.90
    ident = delong_interval(y, s, confidence_level=0.9)
    assert ident.estimate == pytest.approx(auc, abs=1e-15)
    assert ident.standard_error == pytest.approx(se, rel=1e-12, abs=1e-15)
    assert ident.details["variance"] == pytest.approx(se * se, rel=1e-12, abs=1e-15)
    assert ident.confidence_interval == pytest.approx((max(0.0, auc - z * se), min(1.0, auc + z * se)), abs=1e-12)
    assert ident.details["clipped"] == (auc - z * se < 0 or auc + z * se > 1)
    if se > 0:
        logit = delong_interval(y, s, confidence_level=0.9, transform="logit")
        centre, half = math.log(auc / (1 - auc)), z * se / (auc * (1 - auc))
        expected = (1 / (1 + math.exp(-(centre - half))), 1 / (1 + math.exp(-(centre + half))))
        assert logit.method == "delong_logit" and logit.standard_error == ident.standard_error
        assert logit.confidence_interval == pytest.approx(expected, rel=1e-12)
        assert 0.0 < logit.low < auc < logit.high < 1.0


@pytest.mark.parametrize("scores, auc", [([5, 6, 7, 9, 0, 1, 2, 3], 1.0), ([0, 1, 2, 3, 5, 6, 7, 9], 0.0),
                                         ([2, 2, 2, 2, 2, 2, 2, 2], 0.5)])
@pytest.mark.parametrize("transform", ["identity", "logit"])
def test_delong_zero_variance_gives_the_one_point_interval_and_warns(scores, auc, transform):
    y = [1, 1, 1, 1, 0, 0, 0, 0]
    assert plain_delong(y, scores) == (auc, 0.0)
    with pytest.warns(DegenerateIntervalWarning, match="DeLong's variance is 0") as caught:
        res = delong_interval(y, scores, transform=transform)
    assert caught[0].filename == __file__                 # attributed to the caller's line
    assert tuple(res.confidence_interval) == (auc, auc) and res.standard_error == 0.0
    assert res.details["degenerate"] is True and res.details["clipped"] is False


def _fixture_cases():
    data = pd.read_csv(FIXTURES / "auc_interval_data.csv")
    refs = pd.read_csv(FIXTURES / "auc_interval_delong.csv")
    return {c: (g["y"].to_numpy(), g["score"].to_numpy(dtype=float)) for c, g in data.groupby("case")}, refs


def test_delong_against_proc_ci_auc_and_var():
    cases, refs = _fixture_cases()
    assert len(refs) == 3 * len(cases) and {"asah_s100b", "asah_wfns", "asah_ndka"} <= set(cases)
    clipped_cases = set()
    for row in refs.itertuples():
        y, s = cases[row.case]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = delong_interval(y, s, confidence_level=row.level)
        assert res.estimate == pytest.approx(row.auc, abs=1e-12), row.case
        assert res.details["variance"] == pytest.approx(row.var, rel=1e-10, abs=1e-15), row.case
        assert res.low == pytest.approx(row.low, abs=1e-10), row.case
        assert res.high == pytest.approx(row.high, abs=1e-10), row.case
        assert res.estimate == pytest.approx(row.median, abs=1e-12)
        # pROC's clipping: a limit is moved to 0 or 1 exactly when the Wald limit lies beyond it
        se, z = math.sqrt(row.var), stats.norm.isf((1 - row.level) / 2)
        assert res.details["clipped"] == (row.auc - z * se < 0 or row.auc + z * se > 1), row.case
        if res.details["clipped"]:
            clipped_cases.add(row.case)
            assert res.low == 0.0 or res.high == 1.0
        assert bool(caught) == (row.var == 0), row.case       # the warning comes with a variance of 0 only
    # the fixtures exercise both clipped ends, and two points per class
    assert {"clipped_high", "clipped_low", "two_per_class"} <= clipped_cases


def test_delong_on_hanley_mcneils_ct_ratings_as_stata_prints_it():
    # Stata's [R] roctab manual runs roctab on hanley.dta (the data of Hanley & McNeil 1982, Table I)
    # and prints: Obs 109, ROC area 0.8932, Std. Err. 0.0307, asymptotic normal 95% CI 0.83295 0.95339
    # (DeLong's SE, the Wald interval). The manual itself was not consulted: the digits are those
    # quoted in a public test suite found by code search.
    y, s = hanley_data()
    res = delong_interval(y, s)
    assert res.n_samples == 109
    assert round(res.estimate, 4) == 0.8932 and round(res.standard_error, 4) == 0.0307
    assert round(res.low, 5) == 0.83295 and round(res.high, 5) == 0.95339


# --------------------------------------------------------------------------- Hanley & McNeil


def hanley_mcneil_se(auc, m, n):
    """Hanley & McNeil's SE with their exponential Q1, Q2 (m positives = abnormal, n negatives = normal)."""
    q1, q2 = auc / (2 - auc), 2 * auc ** 2 / (1 + auc)
    return math.sqrt((auc * (1 - auc) + (m - 1) * (q1 - auc ** 2) + (n - 1) * (q2 - auc ** 2)) / (m * n))


def test_hanley_mcneil_on_their_ct_rating_example():
    # Hanley & McNeil (1982) print A = 0.893 and SE = 0.032 for these 58 normal / 51 abnormal ratings.
    # Their printed SE uses Q1, Q2 counted from the ratings (their Table II); this function uses the
    # exponential Q1 = A/(2 - A), Q2 = 2A^2/(1 + A), which gives 0.0325 here: equal at the printed
    # precision, and the closed form is checked to full precision against the formula written above.
    y, s = hanley_data()
    res = hanley_mcneil_interval(y, s)
    auc = psi(y, s).mean()
    assert round(res.estimate, 3) == 0.893 and round(res.standard_error, 3) == 0.032
    assert res.estimate == pytest.approx(auc, abs=1e-15)
    se = hanley_mcneil_se(auc, 51, 58)
    assert res.standard_error == pytest.approx(se, rel=1e-13)
    assert res.details["q1"] == pytest.approx(auc / (2 - auc)) and res.details["q2"] == pytest.approx(
        2 * auc ** 2 / (1 + auc))
    z = stats.norm.isf(0.025)
    assert res.confidence_interval == pytest.approx((auc - z * se, auc + z * se), rel=1e-13)
    assert res.method == "hanley_mcneil" and res.details["clipped"] is False


def test_hanley_mcneils_q1_q2_are_the_exponential_models_probabilities():
    # Q1 = P(X1 > Y, X2 > Y), Q2 = P(X > Y1, X > Y2) for negatives Exp(1) and positives Exp(mu)
    # (so A = P(X > Y) = 1/(1 + mu)): Q1 = E exp(-2 mu Y) = 1/(1 + 2 mu), Q2 = E (1 - exp(-X))^2
    # = 1 - 2 mu/(mu + 1) + mu/(mu + 2): Hanley & McNeil's A/(2 - A) and 2A^2/(1 + A).
    for mu in (0.05, 0.3, 1.0, 2.5):
        auc = 1 / (1 + mu)
        res = hanley_mcneil_interval([1] * 3 + [0] * 3, [0] * 6)      # any data: q1, q2 depend on A only
        assert res.details["q1"] == 0.5 / 1.5
        q1, q2 = 1 / (1 + 2 * mu), 1 - 2 * mu / (mu + 1) + mu / (mu + 2)
        assert auc / (2 - auc) == pytest.approx(q1) and 2 * auc ** 2 / (1 + auc) == pytest.approx(q2)


@pytest.mark.parametrize("kind, seed", [("ties", 7), ("below_half", 8), ("heavy_ties", 9)])
def test_hanley_mcneil_closed_form_and_clipping(kind, seed):
    y, s = random_case(kind, seed)
    auc = psi(y, s).mean()
    m, n = int(np.sum(y == 1)), int(np.sum(y == 0))
    res = hanley_mcneil_interval(y, s, confidence_level=0.99)
    se = hanley_mcneil_se(auc, m, n)
    z = stats.norm.isf(0.005)
    assert res.standard_error == pytest.approx(se, rel=1e-13)
    assert res.confidence_interval == pytest.approx((max(0, auc - z * se), min(1, auc + z * se)), abs=1e-13)
    y2 = [1, 1, 1, 0, 0, 0]
    near = hanley_mcneil_interval(y2, [4, 5, 6, 1, 2, 4.5])   # A = 8/9, small n: the upper limit is clipped
    assert near.details["clipped"] is True and near.high == 1.0 and near.details["high_unclipped"] > 1.0
    with pytest.warns(DegenerateIntervalWarning, match="Hanley & McNeil's variance is 0"):
        perfect = hanley_mcneil_interval(y2, [4, 5, 6, 1, 2, 3])
    assert tuple(perfect.confidence_interval) == (1.0, 1.0) and perfect.details["degenerate"] is True


# --------------------------------------------------------------------------- Newcombe


def newcombe_roots(auc, m, n, z):
    """The real roots in [0, 1] of Newcombe's defining equation (A - theta)^2 = z^2 V(theta), with V
    in the form N = (m + n)/2: V = theta (1 - theta) [2N - 1 - 3(N - 1)/((2 - theta)(1 + theta))]/(m n),
    multiplied by (2 - theta)(1 + theta) into a quartic and solved by numpy's companion matrix."""
    N = (m + n) / 2
    P = np.polynomial.Polynomial
    t = P([0, 1])
    g = (2 - t) * (1 + t)
    quartic = m * n * (auc - t) ** 2 * g - z * z * t * (1 - t) * ((2 * N - 1) * g - 3 * (N - 1))
    roots = quartic.roots()
    real = np.sort(roots[np.abs(roots.imag) < 1e-7].real)
    return np.clip(real[(real >= -1e-7) & (real <= 1 + 1e-7)], 0.0, 1.0)


@pytest.mark.parametrize("y, s", [random_case("ties", 10), random_case("below_half", 11),
                                  random_case("two_per_class", 12), random_case("heavy_ties", 13),
                                  ([1, 0], [2.0, 1.0]), ([1, 1, 0, 0, 0], [3, 3, 1, 2, 3]),
                                  ([1] * 10 + [0] * 10, list(range(10, 20)) + list(range(10)))])
@pytest.mark.parametrize("level", [0.95, 0.8])
def test_newcombe_limits_are_the_roots_of_the_defining_equation(y, s, level):
    # Newcombe (2006), Part 2, Method 5. His paper's worked examples and tables could not be found
    # (search of public pages and code); the reference is therefore the defining equation itself,
    # solved here independently (quartic roots, not the implementation's Brent search).
    y, s = np.asarray(y), np.asarray(s, dtype=float)
    m, n = int(np.sum(y == 1)), int(np.sum(y == 0))
    auc = psi(y, s).mean()
    z = stats.norm.isf((1 - level) / 2)
    res = newcombe_interval(y, s, confidence_level=level)
    roots = newcombe_roots(auc, m, n, z)
    inner = roots[(roots > 1e-7) & (roots < 1 - 1e-7)]       # A = 0 or 1 is itself a root: the end it is at
    low = 0.0 if auc == 0.0 else inner[inner < auc].max()
    high = 1.0 if auc == 1.0 else inner[inner > auc].min()
    assert res.confidence_interval == pytest.approx((low, high), abs=1e-9)
    assert res.low < auc < res.high or res.high == auc == 1.0 or res.low == auc == 0.0
    # one root on each side of A inside [0, 1], as the docstring says (A = 1: the root 1 is A itself)
    assert len(inner) == 2 - (auc in (0.0, 1.0))
    N = (m + n) / 2
    v = auc * (1 - auc) * (2 * N - 1 - 3 * (N - 1) / ((2 - auc) * (1 + auc))) / (m * n)
    assert res.standard_error == pytest.approx(math.sqrt(v), rel=1e-12, abs=1e-15)
    assert res.details["n_star"] == N - 1 and res.method == "newcombe"


def test_newcombe_stays_informative_at_perfect_separation_and_is_symmetric():
    y = [1] * 6 + [0] * 8
    up = newcombe_interval(y, list(range(8, 14)) + list(range(8)))
    down = newcombe_interval(y, list(range(6)) + list(range(6, 14)))
    assert up.estimate == 1.0 and up.high == 1.0 and 0.5 < up.low < 1.0
    assert down.estimate == 0.0 and down.low == 0.0
    assert down.high == pytest.approx(1 - up.low, abs=1e-12)
    roots = newcombe_roots(1.0, 6, 8, stats.norm.isf(0.025))
    assert up.low == pytest.approx(roots[roots < 1 - 1e-7].max(), abs=1e-9)


# --------------------------------------------------------------------------- bootstrap


def replay(y, s, seed, n_resamples):
    """The documented draws: rng.spawn(2); positives floor(u m) from the first child's random((B, m)),
    negatives from the second's; each resample's AUC by pair counting."""
    y, s = np.asarray(y), np.asarray(s, dtype=float)
    x, w = s[y == 1], s[y != 1]
    m, n = x.size, w.size
    g_pos, g_neg = np.random.default_rng(seed).spawn(2)
    ip = np.floor(g_pos.random((n_resamples, m)) * m).astype(int)
    ineg = np.floor(g_neg.random((n_resamples, n)) * n).astype(int)
    return x, w, two_sample_auc(x[ip], w[ineg])


def two_sample_auc(x, w, axis=-1):
    """AUC of positives x against negatives w along the last axis (vectorised for scipy)."""
    x, w = np.moveaxis(x, axis, -1), np.moveaxis(w, axis, -1)
    d = x[..., :, None] - w[..., None, :]
    return ((d > 0) + 0.5 * (d == 0)).mean(axis=(-2, -1))


def scipy_bca_levels(x, w, theta_b, alpha):
    """scipy.stats.bootstrap's BCa levels for two samples, written out: z0 from the mid-rank
    percentile of the AUC among the resamples, the acceleration from each sample's own jackknife."""
    theta = two_sample_auc(x, w)
    z0 = special.ndtri((np.sum(theta_b < theta) + np.sum(theta_b <= theta)) / (2 * theta_b.size))
    nums = dens = 0.0
    for jack in ([two_sample_auc(np.delete(x, i), w) for i in range(x.size)],
                 [two_sample_auc(x, np.delete(w, j)) for j in range(w.size)]):
        jack = np.asarray(jack)
        k = jack.size
        u = (k - 1) * (jack.mean() - jack)
        nums += np.sum(u ** 3) / k ** 3
        dens += np.sum(u ** 2) / k ** 2
    a = nums / (6 * dens ** 1.5)
    za = special.ndtri(np.array([alpha, 1 - alpha]))
    return z0, a, special.ndtr(z0 + (z0 + za) / (1 - a * (z0 + za)))


@pytest.mark.parametrize("kind, seed", [("ties", 20), ("below_half", 21), ("heavy_ties", 22)])
@pytest.mark.parametrize("method, scipy_method", [("percentile", "percentile"), ("bca", "BCa")])
def test_bootstrap_is_scipys_interval_on_the_replayed_resamples(kind, seed, method, scipy_method):
    y, s = random_case(kind, seed)
    res = bootstrap_interval(y, s, method=method, n_resamples=499, rng=seed, confidence_level=0.9)
    x, w, theta_b = replay(y, s, seed, 499)
    np.testing.assert_array_equal(res.details["bootstrap_distribution"], theta_b)
    ref = stats.bootstrap((x, w), two_sample_auc, n_resamples=0, method=scipy_method, vectorized=True,
                          confidence_level=0.9,
                          bootstrap_result=types.SimpleNamespace(bootstrap_distribution=theta_b))
    assert res.confidence_interval == pytest.approx(tuple(map(float, ref.confidence_interval)), rel=1e-12)
    assert res.estimate == two_sample_auc(x, w) and res.standard_error is None
    assert res.details["bootstrap_se"] == pytest.approx(float(ref.standard_error), rel=1e-12)
    assert res.method == f"bootstrap_{method}" and res.details["n_resamples"] == 499
    if method == "bca":
        z0, a, levels = scipy_bca_levels(x, w, theta_b, 0.05)
        assert res.details["bias_correction"] == pytest.approx(z0, rel=1e-12, abs=1e-15)
        assert res.details["acceleration"] == pytest.approx(a, rel=1e-9, abs=1e-15)
        assert (res.details["level_low"], res.details["level_high"]) == pytest.approx(tuple(levels), rel=1e-10)
    else:
        assert np.quantile(theta_b, [0.05, 0.95]) == pytest.approx(tuple(res.confidence_interval), rel=1e-15)


def test_bootstrap_is_reproducible_by_seed_and_independent_of_the_batches(monkeypatch):
    y, s = random_case("ties", 30)
    base = bootstrap_interval(y, s, method="bca", n_resamples=257, rng=11)
    dist = base.details["bootstrap_distribution"]
    for same in (11, np.random.SeedSequence(11), np.random.default_rng(11)):
        again = bootstrap_interval(y, s, method="bca", n_resamples=257, rng=same)
        np.testing.assert_array_equal(again.details["bootstrap_distribution"], dist)
        assert again.confidence_interval == base.confidence_interval
    other = bootstrap_interval(y, s, method="bca", n_resamples=257, rng=12)
    assert not np.array_equal(other.details["bootstrap_distribution"], dist)
    monkeypatch.setattr(iv, "_BATCH_ELEMENTS", 100)         # batches of one or two resamples
    small = bootstrap_interval(y, s, method="bca", n_resamples=257, rng=11)
    np.testing.assert_array_equal(small.details["bootstrap_distribution"], dist)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_degenerate_distribution_gives_the_one_point_interval(method):
    y = [1] * 5 + [0] * 6
    s = [7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5]                   # perfect separation: every resample AUC = 1
    with pytest.warns(DegenerateIntervalWarning, match="every bootstrap resample has the same AUC"):
        res = bootstrap_interval(y, s, method=method, rng=0)
    assert tuple(res.confidence_interval) == (1.0, 1.0) and res.details["degenerate"] is True
    assert np.all(res.details["bootstrap_distribution"] == 1.0)
    with pytest.warns(DegenerateIntervalWarning):
        one = bootstrap_interval([1, 1, 0, 0], [1.0, 3.0, 2.0, 0.0], method=method, n_resamples=1, rng=0)
    assert one.low == one.high == one.details["bootstrap_distribution"][0]


def test_bca_with_the_auc_outside_every_resample_takes_the_limit_of_the_formula():
    y, s = [1, 1, 1, 0, 0, 0], [3, 1, 2.5, 2, 0, 2.6]
    auc = psi(y, s).mean()
    for seed in range(100):                              # a few resamples, all above the AUC, not all equal
        _, _, theta_b = replay(y, s, seed, 4)
        if np.all(theta_b > auc) and np.ptp(theta_b) > 0:
            break
    else:
        pytest.fail("no such seed among 100")
    with pytest.warns(DegenerateIntervalWarning, match="below every resampled AUC"):
        res = bootstrap_interval(y, s, method="bca", n_resamples=4, rng=seed)
    # z0 = -inf: both BCa levels are Phi(-inf) = 0, so both limits are the smallest resampled AUC
    assert res.details["bias_correction"] == -np.inf
    assert tuple(res.confidence_interval) == (theta_b.min(), theta_b.min())


# --------------------------------------------------------------------------- invariances


@pytest.mark.parametrize("name, call", ALL, ids=IDS)
def test_every_interval_is_invariant_to_increasing_transforms_and_label_coding(name, call):
    y01, s = random_case("ties", 40)
    base = call(y01, s)
    assert base.method == name and base.estimate == auc_score(y01, s)
    for t in (np.exp(s), s ** 3 - 7.0, 1e6 * s + 3.0, special.expit(s)):
        assert t.shape == s.shape and np.all(np.diff(t[np.argsort(s)]) >= 0)      # increasing in s
        assert call(y01, t).confidence_interval == base.confidence_interval, name
    for labels, pos in ((np.where(y01 == 1, 1, -1), None), (y01.astype(bool), None),
                        (np.where(y01 == 1, "malignant", "benign"), "malignant"),
                        (np.where(y01 == 1, "a", "b"), "a"), (np.where(y01 == 1, 7, 3), 7)):
        res = call(labels, s, pos_label=pos)
        assert res.confidence_interval == base.confidence_interval and res.estimate == base.estimate, name
    flipped = call(np.where(y01 == 1, "a", "b"), s, pos_label="b")       # the other class positive: 1 - A
    assert flipped.estimate == pytest.approx(1 - base.estimate, abs=1e-15)


@pytest.mark.parametrize("name, call", ALL, ids=IDS)
def test_every_result_is_an_auc_interval_with_plain_json(name, call):
    import json

    y, s = random_case("ties", 41)
    res = call(y, s)
    d = res.to_dict()
    json.dumps(d)
    assert d["method"] == name and d["quantity"] == "AUC" and d["low"] <= d["estimate"] <= d["high"]
    assert res.n_samples == len(y) and res.confidence_level == 0.95 and res.seconds >= 0


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("name, call", ALL, ids=IDS)
def test_bad_input_gives_one_clear_value_error(name, call):
    y, s = [1, 1, 1, 0, 0, 0], [0.9, 0.8, 0.3, 0.4, 0.2, 0.1]
    cases = [
        (([1, 1, 1, 1], [0.1, 0.2, 0.3, 0.4]), {}, "exactly two classes"),
        ((y, [0.9, np.nan, 0.3, 0.4, 0.2, 0.1]), {}, "non-finite score"),
        ((y, [0.9, 0.8, np.inf, 0.4, 0.2, 0.1]), {}, "non-finite score"),
        ((y, [0.9, 0.8, 0.3]), {}, "one score per label"),
        ((y, ["a", "b", "c", "d", "e", "f"]), {}, "must hold numbers"),
        ((y, np.array(s) + 1j), {}, "complex"),
        ((y, [s, s]), {}, "one score per label"),
        ((["x", "x", "x", "y", "y", "y"], s), {}, "pos_label"),
        ((y, s), {"pos_label": "z"}, "not one of the labels"),
    ] + [((y, s), {"confidence_level": bad}, "confidence_level") for bad in (0, 1, 1.5, -0.2, float("nan"), "0.9")]
    for args, kwargs, match in cases:
        with pytest.raises(ValueError, match=match):
            call(*args, **kwargs)


def test_bad_options_give_one_clear_value_error():
    y, s = [1, 1, 1, 0, 0, 0], [0.9, 0.8, 0.3, 0.4, 0.2, 0.1]
    for bad in ("log", "Logit", None, 1):
        with pytest.raises(ValueError, match="`transform` must be one of"):
            delong_interval(y, s, transform=bad)
    for bad in ("basic", "bc", None):
        with pytest.raises(ValueError, match="`method` must be one of"):
            bootstrap_interval(y, s, method=bad)
    assert bootstrap_interval(y, s, method="BCa", rng=0).method == "bootstrap_bca"
    for bad in (0, -3, 2.5, True, "100", float("inf")):
        with pytest.raises(ValueError, match="`n_resamples` must be a positive integer"):
            bootstrap_interval(y, s, n_resamples=bad)
    one_positive = ([1, 0, 0], [0.9, 0.2, 0.1])
    with pytest.raises(ValueError, match="at least 2 points of each class; got 1 positive and 2 negative"):
        delong_interval(*one_positive)
    with pytest.raises(ValueError, match="at least 2 points of each class"):
        bootstrap_interval(*one_positive, method="bca")
    # one point of a class is enough for the others
    for call in (hanley_mcneil_interval, newcombe_interval, bootstrap_interval):
        assert quietly(call, *one_positive).estimate == 1.0
