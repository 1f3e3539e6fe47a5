"""Today's intervals (cudbound/baselines/modern.py) against hand calculations, statsmodels and
slow reference computations that follow the authors' code (tests/_support/reference_modern.py)."""
import math
import warnings

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.weightstats import DescrStatsW

import cudbound
from cudbound.baselines import (DegenerateResampleWarning, bccv, conservative_z, conservative_z_interval,
                                corrected_t, corrected_t_interval, delta_method_se, e632_delta, e632plus,
                                nested_cv, wald_cv, wald_interval)
from cudbound.registry import MODERN_METHODS, get_method
from cudbound.results import IntervalResult
from reference_baselines import make_data, ref_632, ref_632plus, ref_fit_predict
from reference_modern import ref_bccv, ref_delta_se, ref_nested_cv, ref_split_errors, ref_wald, rows_of

Z95 = 1.959963984540054


# ---------------------------------------------------------------- building blocks: hand calculations

def test_wald_interval_by_hand():
    """h = (0,1,0,0 | 1,1,0,0), K = 2: R = 3/8, sigma_out^2 = 15/64, sigma_in^2 = (1/4 + 1/3)/2 = 7/24."""
    h, f = [0, 1, 0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1]
    out = wald_interval(h, f, 0.95)
    half = Z95 * math.sqrt(15 / 64 / 8)
    assert out == pytest.approx((0.375 - half, 0.375 + half), abs=1e-12)
    inn = wald_interval(h, f, 0.95, "within-fold")
    half = Z95 * math.sqrt(7 / 24 / 8)
    assert inn == pytest.approx((0.375 - half, 0.375 + half), abs=1e-12)


def test_corrected_t_interval_by_hand_and_against_statsmodels():
    """mu_j = (.10,.12,.08,.11,.09), n1 = 90, n2 = 10: s^2 = 2.5e-4, var = (1/5 + 1/9) s^2.
    statsmodels' t interval of the mean uses s^2 / J; the correction multiplies the half-width
    by sqrt((1/J + n2/n1) J)."""
    mu = np.array([.10, .12, .08, .11, .09])
    ci = corrected_t_interval(mu, 90, 10, 0.95)
    half = stats.t.ppf(0.975, 4) * math.sqrt((1 / 5 + 10 / 90) * 2.5e-4)
    assert ci == pytest.approx((0.1 - half, 0.1 + half), abs=1e-12)
    lo, hi = DescrStatsW(mu).tconfint_mean(alpha=0.05)
    factor = math.sqrt((1 / 5 + 10 / 90) * 5)
    assert ci == pytest.approx((0.1 - (0.1 - lo) * factor, 0.1 + (hi - 0.1) * factor), abs=1e-12)


def test_conservative_z_interval_by_hand():
    """pairs (.12,.11), (.10,.13), (.14,.12): sigma^2 = (1e-4 + 9e-4 + 4e-4) / 6."""
    ci = conservative_z_interval(0.10, [(.12, .11), (.10, .13), (.14, .12)], 0.95)
    half = Z95 * math.sqrt(14e-4 / 6)
    assert ci == pytest.approx((0.1 - half, 0.1 + half), abs=1e-12)


def test_delta_method_influences_sum_to_zero():
    """Every bootstrap sample has sum_i N_i^b = n, so sum_i D_i = 0 exactly (Efron & Tibshirani 1997)."""
    rng = np.random.default_rng(3)
    counts = rng.multinomial(12, np.full(12, 1 / 12), size=60)
    wrong = rng.random((60, 12)) < 0.3
    _, _, D = delta_method_se(wrong, counts)
    assert abs(D.sum()) < 1e-12


# ---------------------------------------------------------------- whole methods against the references

@pytest.mark.parametrize("variance", ["all-pairs", "within-fold"])
@pytest.mark.parametrize("seed", range(3))
def test_wald_cv_matches_reference(seed, variance):
    Phi, y = make_data(n=24, seed=seed)
    res = wald_cv(Phi, y, cv=4, variance=variance, rng=seed, confidence_level=0.9)
    h, (lo, hi) = ref_wald(Phi, y, res.details["folds"], 0.9, variance)
    np.testing.assert_array_equal(res.details["losses"], h)
    assert res.estimate == pytest.approx(h.mean(), abs=1e-15)
    assert (res.details["unclipped_low"], res.details["unclipped_high"]) == pytest.approx((lo, hi), abs=1e-12)
    assert np.bincount(res.details["folds"]).tolist() == [6, 6, 6, 6]


@pytest.mark.parametrize("seed", range(3))
def test_corrected_t_matches_reference(seed):
    Phi, y = make_data(n=30, seed=seed)
    res = corrected_t(Phi, y, rng=seed)
    d = res.details
    assert (d["n_train"], d["n_test"], d["n_splits"]) == (27, 3, 15)
    assert np.all(d["test_masks"].sum(axis=1) == 3) and not np.any(d["test_masks"] & d["train_masks"])
    assert np.all(d["train_masks"] | d["test_masks"])
    mu = ref_split_errors(Phi, y, d["train_masks"], d["test_masks"])
    np.testing.assert_allclose(d["split_errors"], mu, atol=1e-15)
    lo, hi = stats.t.interval(0.95, 14, loc=mu.mean(), scale=math.sqrt((1 / 15 + 3 / 27) * np.var(mu, ddof=1)))
    assert (d["unclipped_low"], d["unclipped_high"]) == pytest.approx((lo, hi), abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_conservative_z_matches_reference(seed):
    n = 31
    Phi, y = make_data(n=n, seed=seed)
    res = conservative_z(Phi, y, n_splits=4, n_halves=3, rng=seed)
    d = res.details
    tr, te = d["train_masks"], d["test_masks"]
    J, M, n2 = 4, 3, 3
    assert tr.shape == (J + 2 * M * J, n)
    assert np.all(te.sum(axis=1) == n2) and np.all(tr[:J].sum(axis=1) == n - n2)
    assert np.all(tr[J:].sum(axis=1) == n // 2 - n2)          # each half trains on n' - n2 points
    halves = (tr[J:] | te[J:]).reshape(M, 2, J, n)
    for m in range(M):   # within a halving: one half per side, the same half for its J splits, disjoint sides
        a, b = halves[m, 0], halves[m, 1]
        assert np.all(a == a[0]) and np.all(b == b[0]) and not np.any(a[0] & b[0])
        assert a[0].sum() == b[0].sum() == n // 2
    mu = ref_split_errors(Phi, y, tr, te)
    pairs = mu[J:].reshape(M, 2, J).mean(axis=2)
    np.testing.assert_allclose(d["half_errors"], pairs, atol=1e-15)
    sigma = math.sqrt(sum((p - q) ** 2 for p, q in pairs) / (2 * M))
    assert res.estimate == pytest.approx(mu[:J].mean(), abs=1e-15)
    assert (d["unclipped_low"], d["unclipped_high"]) == pytest.approx(
        (mu[:J].mean() - Z95 * sigma, mu[:J].mean() + Z95 * sigma), abs=1e-12)


@pytest.mark.parametrize("n,k,seed", [(20, 4, 0), (23, 5, 1), (30, 3, 2)])
def test_nested_cv_matches_the_authors_procedure(n, k, seed):
    Phi, y = make_data(n=n, seed=seed)
    res = nested_cv(Phi, y, cv=k, repeats=3, rng=seed)
    d = res.details
    layouts, cv_layouts = d["fold_layouts"], d["cv_layouts"]
    assert layouts.shape == (3, k, n // k) and cv_layouts.shape == (1, n)   # ceil(3 / 5) = 1
    for folds in layouts:
        assert len(set(folds.ravel().tolist())) == k * (n // k)
    sizes = np.bincount(cv_layouts[0], minlength=k)          # plain CV tests every point
    assert sizes.sum() == n and sizes.max() - sizes.min() <= 1
    centre, (lo, hi), mse, err_ncv, err_cv = ref_nested_cv(Phi, y, layouts, cv_layouts, 0.95)
    assert (d["err_ncv"], d["err_cv"], d["mse"]) == pytest.approx((err_ncv, err_cv, mse), abs=1e-12)
    assert res.estimate == pytest.approx(centre, abs=1e-12)
    assert (d["unclipped_low"], d["unclipped_high"]) == pytest.approx((lo, hi), abs=1e-12)
    assert 1.0 <= d["se_inflation"] <= math.sqrt(k)


@pytest.mark.parametrize("corrected", [True, False])
@pytest.mark.parametrize("seed", range(2))
def test_bccv_matches_reference(seed, corrected):
    Phi, y = make_data(n=14, seed=seed)
    res = bccv(Phi, y, n_resamples=25, bias_correction=corrected, rng=seed)
    values, loo, (lo, hi) = ref_bccv(Phi, y, res.details["counts"], 0.95, corrected)
    np.testing.assert_allclose(res.details["bootstrap_distribution"], values, atol=1e-15)
    assert res.details["loo_error"] == pytest.approx(loo, abs=1e-15)
    assert (res.details["unclipped_low"], res.details["unclipped_high"]) == pytest.approx((lo, hi), abs=1e-12)
    assert res.estimate == pytest.approx(loo if corrected else values.mean(), abs=1e-15)


@pytest.mark.parametrize("estimator", [".632+", ".632", "err1"])
@pytest.mark.parametrize("seed", range(2))
def test_e632_delta_matches_reference(seed, estimator):
    Phi, y = make_data(n=15, seed=seed)
    res = e632_delta(Phi, y, n_resamples=40, point_estimate=estimator, rng=seed)
    counts = res.details["counts"]
    err1, se_del, D = ref_delta_se(Phi, y, counts)
    assert res.details["err1"] == pytest.approx(err1, abs=1e-15)
    assert res.details["se_err1"] == pytest.approx(se_del, rel=1e-12)
    indices = [rows_of(c) for c in counts]
    est = {"err1": err1, ".632": ref_632(Phi, y, indices),
           ".632+": ref_632plus(Phi, y, indices)}[estimator]
    if estimator == ".632+":
        assert est == pytest.approx(e632plus(Phi, y, counts=counts).estimate, abs=1e-15)
    assert res.estimate == pytest.approx(est, abs=1e-12)
    se = se_del * est / err1
    assert (res.details["unclipped_low"], res.details["unclipped_high"]) == pytest.approx(
        (est - Z95 * se, est + Z95 * se), abs=1e-12)


# ---------------------------------------------------------------- registry, invariance, input

def test_registered_and_run_through_intervals():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
    assert MODERN_METHODS == ("wald_cv", "corrected_t", "conservative_z", "nested_cv", "bccv", "e632_delta")
    res = cudbound.intervals(X, y, methods=list(MODERN_METHODS), rng=3)
    assert [r.method for r in res] == list(MODERN_METHODS)
    for r in res:
        assert isinstance(r, IntervalResult) and 0.0 <= r.low <= r.high <= 1.0
        assert r.details["unclipped_low"] <= r.estimate <= r.details["unclipped_high"] or r.method == "bccv"
    again = cudbound.intervals(X, y, methods=["nested_cv", "wald_cv"], rng=3)   # streams keyed by name
    assert again[1].confidence_interval == res[0].confidence_interval
    assert again[0].confidence_interval == res[3].confidence_interval
    everything = cudbound.intervals(X, y, methods="all", rng=3, n_resamples=200, cud_options={"n_resamples": 100})
    assert [r.method for r in everything] == list(cudbound.method_names())
    assert {get_method(m).label for m in MODERN_METHODS} == {"WCV", "CT", "CZ", "NCV", "BCCV", "D632"}


@pytest.mark.parametrize("method", MODERN_METHODS)
def test_units_and_origins_change_nothing(method):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    a = cudbound.intervals(X, y, methods=[method], rng=2)[0]
    b = cudbound.intervals(X * [1e3, 1e-2] + [5e4, -7.0], y, methods=[method], rng=2)[0]
    assert a.confidence_interval == pytest.approx(b.confidence_interval, abs=1e-12)
    assert a.estimate == pytest.approx(b.estimate, abs=1e-12)


@pytest.mark.parametrize("method", MODERN_METHODS)
def test_one_positive_warns_and_gives_an_interval(method):
    Phi, y = make_data(n=30, seed=1)
    y[:] = -1.0
    y[0] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateResampleWarning)
        res = get_method(method).function(Phi, y, confidence_level=0.9, rng=0)
    assert 0.0 <= res.low <= res.high <= 1.0 and np.isfinite(res.estimate)


@pytest.mark.parametrize("call,match", [
    (lambda P, y: wald_cv(P, y, cv=1), "`cv`"),
    (lambda P, y: wald_cv(P, y, cv=31), "`cv`"),
    (lambda P, y: wald_cv(P, y, variance="pooled"), "variance"),
    (lambda P, y: wald_cv(P, y, cv=20, variance="within-fold"), "2 points per fold"),
    (lambda P, y: corrected_t(P, y, n_splits=1), "n_splits"),
    (lambda P, y: corrected_t(P, y, test_fraction=1.0), "test_fraction"),
    (lambda P, y: conservative_z(P, y, test_fraction=0.6), "n2 < n / 2"),
    (lambda P, y: nested_cv(P, y, cv=2), "`cv`"),
    (lambda P, y: nested_cv(P, y, cv=16), "2 points per fold"),
    (lambda P, y: nested_cv(P, y, repeats=0), "repeats"),
    (lambda P, y: bccv(P, y, n_resamples=1), "n_resamples"),
    (lambda P, y: bccv(P, y, bias_correction="yes"), "bias_correction"),
    (lambda P, y: e632_delta(P, y, point_estimate="cv"), "point_estimate"),
    (lambda P, y: wald_interval([0, 1], [0]), "folds"),
    (lambda P, y: conservative_z_interval(0.1, [0.1, 0.2]), "half_errors"),
])
def test_bad_input_names_the_argument(call, match):
    Phi, y = make_data(n=30, seed=0)
    with pytest.raises(ValueError, match=match):
        call(Phi, y)


def test_a_refit_matches_the_reference_fit():
    """The held-out losses rest on refits: one of them, against the reference least squares."""
    Phi, y = make_data(n=20, seed=4)
    res = wald_cv(Phi, y, cv=5, rng=0)
    folds = res.details["folds"]
    pred = ref_fit_predict(Phi, y, np.flatnonzero(folds != 0))
    np.testing.assert_array_equal(res.details["losses"][folds == 0], (pred != y)[folds == 0])


@pytest.mark.parametrize("n,k", [(30, 10), (50, 10), (23, 5), (31, 4)])
def test_plain_cv_folds_cover_every_point_and_match_the_nested_folds_when_k_divides_n(n, k):
    from cudbound.baselines.modern import _all_folds, _equal_folds
    labels = _all_folds(n, k, np.random.default_rng(1))
    sizes = np.bincount(labels, minlength=k)
    assert sizes.sum() == n and sizes.max() - sizes.min() <= 1
    if n % k == 0:
        folds = _equal_folds(n, k, np.random.default_rng(1))
        for a in range(k):
            assert set(np.flatnonzero(labels == a)) == set(folds[a])
