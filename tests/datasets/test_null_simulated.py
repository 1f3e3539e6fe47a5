"""The null designs: the two halves are exchangeable, the posterior and the closed-form errors
agree with the sampler, and procedures A and B have equal expected error and AUC."""
import itertools

import numpy as np
import pytest
from scipy import stats

from cudbound.auc.scores import auc_score
from cudbound.basis import make_basis
from cudbound.datasets import (NULL_DESIGNS, ContaminatedHalves, ScaledHalves, ShiftedHalves, dataset_names,
                               get_dataset)
from cudbound.fit import predict_signs

NAMES = list(NULL_DESIGNS)
BIG = 200_000


def test_the_null_designs_are_registered_and_marked():
    assert NAMES == ["null_easy", "null_hard", "null_nonlinear", "null_outliers"]
    assert dataset_names(null=True) == tuple(NAMES)
    assert not set(NAMES) & set(dataset_names(null=False))
    assert set(dataset_names(null=False)) | set(NAMES) == set(dataset_names())
    assert not any(get_dataset(name).null_by_construction for name in dataset_names(null=False))
    for name in NAMES:
        gen = get_dataset(name)
        assert gen is NULL_DESIGNS[name] and gen.null_by_construction and gen.kind == "simulated"
        assert gen.n_features == 4 and gen.half_size == 2
        assert {gen.basis, gen.basis_b} in ({"cols:0-1", "cols:2-3"}, {"poly:2(cols:0-1)", "poly:2(cols:2-3)"})
    with pytest.raises(ValueError, match="`null` must be"):
        dataset_names(null="yes")


@pytest.mark.parametrize("name", NAMES)
def test_a_and_b_read_disjoint_halves_the_same_way(name):
    gen = NULL_DESIGNS[name]
    X, _ = gen.sample(50, 0)
    a, b = make_basis(gen.basis).fit(X), make_basis(gen.basis_b).fit(X)
    np.testing.assert_array_equal(a.transform(gen.swap_halves(X)), b.transform(X))


def _half_statistics(H, y):
    """Per row: a half's coordinates, their products and both multiplied by the label."""
    k = H.shape[1]
    prods = [H[:, i] * H[:, j] for i, j in itertools.combinations_with_replacement(range(k), 2)]
    cols = [H[:, i] for i in range(k)] + prods
    return np.column_stack(cols + [c * y for c in cols])


@pytest.mark.parametrize("name", NAMES)
def test_the_halves_have_the_same_moments_and_the_swap_keeps_the_cross_moments(name):
    """Paired per row: the mean of h(u) - h(v) is 0 within 5 standard errors for every moment h up
    to the second (and times y), and E[u_i v_j] = E[v_i u_j]."""
    gen = NULL_DESIGNS[name]
    X, y = gen.sample(BIG, 11)
    k = gen.half_size
    U, V = X[:, :k], X[:, k:]
    D = _half_statistics(U, y) - _half_statistics(V, y)
    cross = np.column_stack([U[:, i] * V[:, j] - V[:, i] * U[:, j] for i in range(k) for j in range(k) if i != j])
    D = np.column_stack([D, cross])
    z = D.mean(axis=0) / (D.std(axis=0, ddof=1) / np.sqrt(BIG))
    assert np.all(np.abs(z) < 5), z
    # and the halves carry the class: the label's covariance with each half's sum is clearly not 0
    assert abs(np.mean(y * U.sum(axis=1)) - np.mean(y) * np.mean(U.sum(axis=1))) > 0.05 or name == "null_nonlinear"


def test_the_moment_check_sees_halves_drawn_differently():
    """The check above fails on a design whose second half is shifted less than the first."""
    gen = ShiftedHalves("lopsided", 2, shift=0.9, flip_probability=0.05)
    X, y = gen.sample(BIG, 11)
    X[:, 2:] -= y[:, None] * 0.05
    D = _half_statistics(X[:, :2], y) - _half_statistics(X[:, 2:], y)
    z = D.mean(axis=0) / (D.std(axis=0, ddof=1) / np.sqrt(BIG))
    assert np.max(np.abs(z)) > 5


@pytest.mark.parametrize("name", NAMES)
def test_the_posterior_is_symmetric_in_the_halves_and_calibrated_to_the_sampler(name):
    gen = NULL_DESIGNS[name]
    rng = np.random.default_rng(3)
    P = rng.normal(size=(500, 4)) * rng.choice([0.5, 2.0, 8.0], size=(500, 1))
    p = gen.positive_probability(P)
    np.testing.assert_allclose(gen.positive_probability(gen.swap_halves(P)), p, rtol=1e-12, atol=1e-15)
    assert np.ptp(p) > 0.3   # not symmetric by being constant
    assert np.all((p >= gen.flip_probability - 1e-12) & (p <= 1 - gen.flip_probability + 1e-12))
    # the sampler's labels follow the posterior: in each decile of p, the share of +1 is the mean p
    X, y = gen.sample(BIG, 5)
    p = gen.positive_probability(X)
    for part in np.array_split(np.argsort(p, kind="stable"), 10):
        share, mean_p = np.mean(y[part] > 0), np.mean(p[part])
        assert abs(share - mean_p) < 5 * np.sqrt(mean_p * (1 - mean_p) / part.size), (share, mean_p)
    np.testing.assert_array_equal(gen.bayes_classifier(X), np.where(p >= 0.5, 1, -1))


def test_the_half_log_ratios_in_closed_form():
    """r(u) against the densities written out with scipy."""
    U = np.random.default_rng(8).normal(size=(20, 2)) * 3
    shift = ShiftedHalves("a", 2, shift=0.7)
    mvn = stats.multivariate_normal
    expected = mvn(mean=[0.7, 0.7]).logpdf(U) - mvn(mean=[-0.7, -0.7]).logpdf(U)
    np.testing.assert_allclose(shift.half_log_ratio(U), expected, rtol=1e-10)
    scaled = ScaledHalves("b", 2, scale=2.5)
    expected = mvn(mean=[0, 0]).logpdf(U) - mvn(mean=[0, 0], cov=6.25 * np.eye(2)).logpdf(U)
    np.testing.assert_allclose(scaled.half_log_ratio(U), expected, rtol=1e-10)
    cont = ContaminatedHalves("c", 2, shift=0.7, contamination=0.2, outlier_scale=4.0)

    def density(c):
        m = [c * 0.7, c * 0.7]
        return 0.8 * mvn(mean=m).pdf(U) + 0.2 * mvn(mean=m, cov=16 * np.eye(2)).pdf(U)
    np.testing.assert_allclose(cont.half_log_ratio(U), np.log(density(1)) - np.log(density(-1)), rtol=1e-10)


@pytest.mark.parametrize("gen", [NULL_DESIGNS["null_easy"], NULL_DESIGNS["null_hard"],
                                 NULL_DESIGNS["null_nonlinear"], ScaledHalves("s", 3, scale=2.0, flip_probability=0.1)],
                         ids=lambda g: g.name)
def test_the_half_bayes_error_against_simulation(gen):
    X, y = gen.sample(BIG, 9)
    rule = np.where(gen.half_log_ratio(X[:, :gen.half_size]) >= 0, 1, -1)
    err = gen.half_bayes_error
    assert abs(np.mean(rule != y) - err) < 5 * np.sqrt(err * (1 - err) / BIG)


def test_the_half_bayes_errors_docs_datasets_md_quotes():
    assert {name: round(NULL_DESIGNS[name].half_bayes_error, 4) for name in NAMES[:3]} == {
        "null_easy": 0.1414, "null_hard": 0.3574, "null_nonlinear": 0.1961}
    assert not hasattr(NULL_DESIGNS["null_outliers"], "half_bayes_error")


def _differences(gen, basis_b, reps=300, n=30, test_size=1000, seed=0):
    """err_A - err_B and auc_A - auc_B of the squared-loss fits of A (gen.basis) and B on
    ``reps`` training sets of n points (a draw with a class of fewer than 3 points is redrawn)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < reps:
        X, y, Xt, yt = gen.draw(n, test_size, rng)
        if min(np.sum(y > 0), np.sum(y < 0)) < 3:
            continue
        row = []
        for spec in (gen.basis, basis_b):
            basis = make_basis(spec).fit(X)
            coef = np.linalg.lstsq(basis.transform(X), y, rcond=None)[0]   # the squared loss's fit
            Z = basis.transform(Xt)
            row.append((np.mean(predict_signs(Z, coef) != yt), auc_score(yt, Z @ coef)))
        out.append([row[0][0] - row[1][0], row[0][1] - row[1][1]])
    return np.array(out)


@pytest.mark.parametrize("name", NAMES)
def test_a_and_b_have_equal_expected_error_and_auc(name):
    """The mean of err_A - err_B (and of auc_A - auc_B) over 300 fits at n = 30 is within 3 standard
    errors of 0."""
    gen = NULL_DESIGNS[name]
    diff = _differences(gen, gen.basis_b)
    z = diff.mean(axis=0) / (diff.std(axis=0, ddof=1) / np.sqrt(len(diff)))
    assert np.all(np.abs(z) < 3), z
    assert np.all(diff.std(axis=0) > 0)


def test_the_monte_carlo_check_sees_a_b_that_reads_less():
    """The same check rejects when B reads one column of its half only (B worse by construction)."""
    gen = NULL_DESIGNS["null_easy"]
    diff = _differences(gen, "cols:2")
    z = diff.mean(axis=0) / (diff.std(axis=0, ddof=1) / np.sqrt(len(diff)))
    assert z[0] < -3 and z[1] > 3


@pytest.mark.parametrize("make, message", [
    (lambda: ShiftedHalves("x", 0), "`half_size`"),
    (lambda: ShiftedHalves("x", 2, shift=0.0), "`shift`"),
    (lambda: ShiftedHalves("x", 2, flip_probability=0.5), "`flip_probability`"),
    (lambda: ScaledHalves("x", 2, scale=1.0), "`scale`"),
    (lambda: ContaminatedHalves("x", contamination=1.0), "`contamination`"),
    (lambda: ContaminatedHalves("x", outlier_scale=-1.0), "`outlier_scale`"),
    (lambda: NULL_DESIGNS["null_easy"].positive_probability(np.zeros((3, 3))), r"shape \(m, 4\)"),
])
def test_bad_parameters(make, message):
    with pytest.raises(ValueError, match=message):
        make()
