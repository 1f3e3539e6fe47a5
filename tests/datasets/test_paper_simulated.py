"""The four simulated designs of the paper's coverage study (cudbound.datasets.paper_simulated).

Every documented quantity (class balance, Bayes error, beta*, limit error) is checked
against a large Monte Carlo sample with a fixed seed; tolerances are 5 standard errors.
"""
import math

import numpy as np
import pytest

from cudbound.basis import PolynomialBasis, make_basis
from cudbound.datasets import SIMULATED, ChiSquareSmall, Donut, Outlier, ThreePoints

N = 400_000  # Monte Carlo sample size
Z = 5.0      # tolerance in standard errors

GENERATORS = {  # the study's defaults and one non-default design of each class
    **SIMULATED,
    "donut_r2": Donut(radius=2.0, flip_probability=0.2),
    "outlier_alt": Outlier(outlier_probability=0.2, outlier_distance=10.0, outlier_scale=2.0, flip_probability=0.05),
    "chi2_d3": ChiSquareSmall(n_features=3, flip_probability=0.1),
    "three_points_alt": ThreePoints(points=(-1.0, 0.0, 4.0), probabilities=(0.3, 0.5, 0.2),
                                    positive_probabilities=(0.1, 0.8, 0.3)),
}


def _sample(gen, seed):
    X, y = gen.sample(N, rng=seed)
    return X, y, make_basis(gen.basis).fit_transform(X)


def _assert_proportion(events, expected):
    se = math.sqrt(expected * (1.0 - expected) / events.size) or 1.0 / events.size
    assert abs(np.mean(events) - expected) <= Z * se, (np.mean(events), expected, se)


@pytest.fixture(scope="module", params=sorted(GENERATORS))
def drawn(request):
    gen = GENERATORS[request.param]
    return gen, *_sample(gen, seed=20080709)


def test_registry_holds_the_study_defaults():
    assert list(SIMULATED) == ["donut", "outlier", "chi2_small", "three_points"]
    for name, gen in SIMULATED.items():
        assert gen.name == name
    assert {name: gen.basis for name, gen in SIMULATED.items()} == {
        "donut": "poly:2", "outlier": "linear", "chi2_small": "linear", "three_points": "linear"}
    assert [type(g) for g in SIMULATED.values()] == [Donut, Outlier, ChiSquareSmall, ThreePoints]


def test_sample_shapes_and_types(drawn):
    gen, X, y, Phi = drawn
    assert X.shape == (N, gen.n_features) and X.dtype == float
    assert y.shape == (N,) and np.issubdtype(y.dtype, np.integer)
    assert set(np.unique(y).tolist()) == {-1, 1}
    assert Phi.shape == (N, gen.limit_coef().size)


def test_class_balance_and_bayes_error(drawn):
    gen, X, y, _ = drawn
    _assert_proportion(y == 1, gen.positive_rate)
    bayes = gen.bayes_classifier(X)
    assert set(np.unique(bayes).tolist()) <= {-1, 1}
    _assert_proportion(bayes != y, gen.bayes_error)


def test_limit_coef_is_the_large_sample_least_squares_fit(drawn):
    gen, X, y, Phi = drawn
    fitted, *_ = np.linalg.lstsq(Phi, y, rcond=None)
    # sandwich standard errors of the least-squares coefficients
    resid = y - Phi @ fitted
    ginv = np.linalg.inv(Phi.T @ Phi / N)
    meat = (Phi * resid[:, None] ** 2).T @ Phi / N
    se = np.sqrt(np.diag(ginv @ meat @ ginv) / N)
    np.testing.assert_array_less(np.abs(fitted - gen.limit_coef()), Z * se)


def test_limit_error_matches_monte_carlo(drawn):
    gen, X, y, Phi = drawn
    limit = np.where(Phi @ gen.limit_coef() >= 0.0, 1, -1)
    _assert_proportion(limit != y, gen.limit_error)


def test_same_seed_same_sample_and_different_seeds_differ():
    for gen in GENERATORS.values():
        X1, y1 = gen.sample(50, rng=3)
        X2, y2 = gen.sample(50, rng=np.random.default_rng(3))
        np.testing.assert_array_equal(X1, X2)
        np.testing.assert_array_equal(y1, y2)
        X3, y3 = gen.sample(50, rng=4)
        assert not (np.array_equal(X1, X3) and np.array_equal(y1, y3))
        rng = np.random.default_rng(5)  # a Generator is consumed, not re-seeded
        (X4, y4), (X5, y5) = gen.sample(50, rng), gen.sample(50, rng)
        assert not (np.array_equal(X4, X5) and np.array_equal(y4, y5))


def test_close_to_or_far_from_bayes():
    assert SIMULATED["donut"].limit_error - SIMULATED["donut"].bayes_error < 0.02
    for name in ("outlier", "chi2_small", "three_points"):
        gen = SIMULATED[name]
        assert gen.limit_error - gen.bayes_error > 0.1, name


def test_documented_values():
    donut, outlier, chi2, three = (SIMULATED[k] for k in ("donut", "outlier", "chi2_small", "three_points"))
    np.testing.assert_allclose(donut.limit_coef(), [1.2, 0, 0, -2.4, 0, -2.4], atol=1e-15)
    assert donut.bayes_error == donut.limit_error == 0.1
    np.testing.assert_allclose(outlier.limit_coef(), [-0.0288906, 0.0544453, 0.0], atol=1e-7)
    assert outlier.bayes_error == 0.1 and outlier.limit_error == pytest.approx(0.2455584, abs=1e-7)
    assert outlier.positive_rate == pytest.approx(0.54, abs=1e-12)
    assert chi2.threshold == pytest.approx(2 * math.log(2)) and chi2.bayes_error == 0.05
    np.testing.assert_allclose(three.limit_coef(), [-1971 / 4990, 801 / 2495], rtol=1e-13)
    assert three.bayes_error == pytest.approx(0.14, abs=1e-15)
    assert three.limit_error == pytest.approx(0.455, abs=1e-15)
    assert three.positive_rate == pytest.approx(0.455, abs=1e-15)
    # f* labels x = 1 as -1 (fitted value -369/4990 = -0.074), the Bayes rule as +1
    b0, b1 = three.limit_coef()
    assert b0 + b1 * 1.0 == pytest.approx(-369 / 4990, rel=1e-12)
    np.testing.assert_array_equal(three.bayes_classifier([0.0, 1.0, 3.0]), [-1, 1, 1])


def test_poly2_basis_contains_the_circle():
    Phi = PolynomialBasis(2).fit_transform(np.array([[2.0, 3.0]]))
    np.testing.assert_array_equal(Phi, [[1.0, 2.0, 3.0, 4.0, 6.0, 9.0]])  # 1, x1, x2, x1^2, x1 x2, x2^2
    gen = Donut()
    X, _ = gen.sample(1000, rng=0)
    np.testing.assert_array_equal(np.where(make_basis("poly:2").fit_transform(X) @ gen.limit_coef() >= 0, 1, -1),
                                  gen.bayes_classifier(X))


@pytest.mark.parametrize("d", [1, 2, 4])
def test_chi2_small_beta_star_is_zero(d):
    gen = ChiSquareSmall(n_features=d)
    assert np.array_equal(gen.limit_coef(), np.zeros(d + 1)) and gen.limit_error == 0.5
    X, y = gen.sample(N, rng=11)
    Phi = np.column_stack([np.ones(N), X])
    fitted, *_ = np.linalg.lstsq(Phi, y, rcond=None)
    # with beta* = 0 and E[phi phi'] = I, beta-hat has standard errors sqrt(E[x_j^2 y^2] / N) = 1/sqrt(N)
    np.testing.assert_array_less(np.abs(fitted), Z / math.sqrt(N))
    _assert_proportion(y == -1, 0.5)


@pytest.mark.parametrize("beta", [[0.0, 0.0], [-0.5, 1.0], [-2.0, 1.0], [0.5, -1.0], [-1.0, 1.0], [1.0, 0.0],
                                  [-0.39499, 0.32104], [0.1, -0.2]])
def test_three_points_error_rate_matches_monte_carlo(beta):
    gen = SIMULATED["three_points"]
    X, y = gen.sample(N, rng=12)
    pred = np.where(beta[0] + beta[1] * X[:, 0] >= 0.0, 1, -1)
    _assert_proportion(pred != y, gen.error_rate(beta))


def test_three_points_error_rate_values():
    gen = SIMULATED["three_points"]
    assert gen.error_rate([-0.5, 1.0]) == pytest.approx(0.14)     # threshold 0.5: the Bayes rule
    assert gen.error_rate([-1.0, 1.0]) == pytest.approx(0.14)     # phi(1)'beta = 0 -> +1 (sign(0) = +1)
    assert gen.error_rate([0.0, 0.0]) == pytest.approx(0.545)     # constant +1: P(y = -1)
    assert gen.error_rate([-2.0, 1.0]) == pytest.approx(0.455)    # f*'s pattern (-1, -1, +1)


@pytest.mark.parametrize("factory, fragment", [
    (lambda: Donut(radius=0.0), "`radius` must be a finite positive number"),
    (lambda: Donut(radius=float("inf")), "`radius`"),
    (lambda: Donut(flip_probability=0.5), r"`flip_probability` must be a number in \[0, 0.5\)"),
    (lambda: Donut(flip_probability=True), "`flip_probability`"),
    (lambda: Outlier(outlier_probability=1.0), r"`outlier_probability` must be a number in \[0, 1\)"),
    (lambda: Outlier(outlier_distance=-1.0), "`outlier_distance` must be a finite non-negative number"),
    (lambda: Outlier(outlier_scale=0.0), "`outlier_scale` must be a finite positive number"),
    (lambda: Outlier(flip_probability=-0.1), "`flip_probability`"),
    (lambda: ChiSquareSmall(n_features=0), "`n_features` must be a positive integer"),
    (lambda: ChiSquareSmall(n_features=2.5), "`n_features`"),
    (lambda: ChiSquareSmall(flip_probability=0.7), "`flip_probability`"),
    (lambda: ThreePoints(points=(0.0, 1.0, 1.0)), "`points` must be three distinct values"),
    (lambda: ThreePoints(points=(0.0, 1.0)), "`points` must be three finite numbers"),
    (lambda: ThreePoints(points=(0.0, 1.0, float("nan"))), "`points`"),
    (lambda: ThreePoints(probabilities=(0.5, 0.5, 0.1)), "`probabilities` must be three positive numbers summing to 1"),
    (lambda: ThreePoints(probabilities=(0.5, 0.5, 0.0)), "`probabilities`"),
    (lambda: ThreePoints(positive_probabilities=(0.1, 1.2, 0.5)),
     r"`positive_probabilities` must be three numbers in \[0, 1\]"),
    (lambda: ThreePoints(positive_probabilities="abc"), "`positive_probabilities`"),
    (lambda: SIMULATED["donut"].sample(0), "`n` must be a positive integer"),
    (lambda: SIMULATED["outlier"].sample(2.5), "`n`"),
    (lambda: SIMULATED["chi2_small"].sample(True), "`n`"),
    (lambda: SIMULATED["three_points"].bayes_classifier([0.0, 2.0]),
     r"`X` must take only the values \[0.0, 1.0, 3.0\]"),
    (lambda: SIMULATED["three_points"].error_rate([1.0, 2.0, 3.0]), "`beta` must be a finite vector of length 2"),
    (lambda: SIMULATED["donut"].bayes_classifier(np.zeros((3, 3))), r"`X` must have shape \(m, 2\)"),
])
def test_bad_arguments(factory, fragment):
    with pytest.raises(ValueError, match=fragment):
        factory()
