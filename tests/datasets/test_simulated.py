"""The simulated data sets: the demo's data and the LinearGaussian generator."""
import numpy as np
import pytest

from cudbound.datasets import LinearGaussian, demo_data


def test_demo_data_is_reproducible_and_balanced():
    X, y = demo_data()
    assert X.shape == (50, 2) and set(y.tolist()) == {-1, 1}
    X2, y2 = demo_data(50, seed=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert not np.array_equal(X, demo_data(50, seed=1)[0])


def test_linear_gaussian_noise_and_bayes_error():
    gen = LinearGaussian(n_features=3, flip_probability=0.1, coef=[1.0, 2.0, -1.0])
    X, y = gen.sample(200_000, rng=0)
    clean = np.where(X @ gen.coef >= 0, 1, -1)
    assert gen.bayes_error == 0.1
    assert np.mean(y != clean) == pytest.approx(0.1, abs=0.003)
    assert np.mean(y == 1) == pytest.approx(0.5, abs=0.005)
    assert gen.error_rate(np.concatenate([[0.0], gen.coef])) == pytest.approx(0.1, abs=1e-9)
    assert gen.error_rate(gen.limit_coef()) == pytest.approx(0.1, abs=1e-9)


@pytest.mark.parametrize("beta", [[0.3, 1.0, 0.5, 0.2], [0.5, -1.0, -2.0, 1.0], [-0.7, 2.0, 4.0, -2.0],
                                  [1.0, 0.0, 0.0, 0.0], [0.2, -1.0, 0.3, 0.9]])
def test_linear_gaussian_error_rate_matches_monte_carlo(beta):
    gen = LinearGaussian(n_features=3, flip_probability=0.1, coef=[1.0, 2.0, -1.0])
    X, y = gen.sample(400_000, rng=1)
    beta = np.asarray(beta)
    empirical = np.mean(np.where(beta[0] + X @ beta[1:] >= 0, 1, -1) != y)
    assert gen.error_rate(beta) == pytest.approx(empirical, abs=0.003)


def test_linear_gaussian_limit_coef_is_the_least_squares_limit():
    gen = LinearGaussian(n_features=2, flip_probability=0.2)
    X, y = gen.sample(400_000, rng=2)
    fitted, *_ = np.linalg.lstsq(np.column_stack([np.ones(len(y)), X]), y, rcond=None)
    np.testing.assert_allclose(fitted, gen.limit_coef(), atol=0.005)


@pytest.mark.parametrize("kwargs, fragment", [
    ({"n_features": 0}, "`n_features`"),
    ({"flip_probability": 0.5}, r"`flip_probability` must be a number in \[0, 0.5\)"),
    ({"n_features": 2, "coef": [0.0, 0.0]}, "`coef` must be a finite, non-zero vector of length n_features = 2"),
    ({"n_features": 2, "coef": [1.0]}, "`coef`"),
])
def test_linear_gaussian_bad_parameters(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        LinearGaussian(**kwargs)
