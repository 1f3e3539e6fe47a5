"""Invariance of everything the toolkit reports under the design's parametrisation (issue 12).

A linear classifier with an intercept does not change when a feature is shifted or
rescaled, or when the features are permuted, so neither may the fit's signs, the training
error, the bootstrap distribution or the interval (same seed). ``cudbound.design``
computes in orthonormal coordinates to make this hold in floating point too.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import cudbound
from cudbound import Procedure
from cudbound.design import RankDeficientError, reparametrise
from cudbound.fit import fit_classifier, fit_coefficients, predict_signs
from cudbound.losses import get_loss

N = 40


def _data(seed, n=N, d=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1, -1)
    return X, y


def _report(X, y, loss="squared", B=30, basis="linear", **kw):
    res = cudbound.cud_interval(X, y, procedure=Procedure(basis=basis, loss=loss), n_resamples=B, rng=1,
                                engine_options={"exact_distribution": True}, **kw)
    # the fit's signs as the training error decides them, in the coordinates of the fit with ties on the scale
    # of Z's terms (on the raw design, a shift of 1e4 makes a score of 1e-6 a tie: TIE_RTOL of |phi|'|beta|)
    fit = fit_classifier(cudbound.basis.make_basis(basis).fit_transform(X), y, get_loss(loss))
    np.testing.assert_allclose(fit.coef, res.coef, rtol=1e-12, atol=0)
    return res, predict_signs(fit.rep.Z, fit.gamma, fit.rep.Z_terms)


def _assert_same(a, b, tol=1e-9):
    (ra, sa), (rb, sb) = a, b
    assert np.array_equal(sa, sb)
    assert ra.train_error == rb.train_error
    np.testing.assert_allclose(ra.bootstrap_distribution, rb.bootstrap_distribution, rtol=0, atol=tol)
    assert abs(ra.half_width - rb.half_width) <= tol
    assert abs(ra.confidence_interval.low - rb.confidence_interval.low) <= tol
    assert abs(ra.confidence_interval.high - rb.confidence_interval.high) <= tol


def test_issue_reproduction_shift_and_scale():
    """The issue's example: shifting by 2e4 or scaling by 1e-9 changed the interval before."""
    X, y = _data(0)
    base = _report(X, y, B=100)
    assert base[0].train_error == pytest.approx(0.15)
    for Xs in (X + [20000, 0], X * 1e-9, X * 1e300, X - [3e5, 0], X * 1e-300):
        _assert_same(base, _report(Xs, y, B=100))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), shift=st.floats(-1e6, 1e6), log_scale=st.floats(-12, 12),
       column=st.integers(0, 2), permute=st.booleans())
@example(seed=3771, shift=23578.0, log_scale=0.0, column=0, permute=False)  # a raw-design tie (see _report)
def test_squared_loss_invariant_under_affine_feature_maps(seed, shift, log_scale, column, permute):
    """Shift a feature by up to 1e6 (in its own units), rescale it by 1e-12 to 1e12, permute.

    Storing x + 1e6 in floating point moves x by up to 1e-10 (rounding of the data itself),
    which can move a replicate value inside the neighbourhood (g < 1) by about alpha_n times
    that; 1e-7 allows for it. Signs and the training error must not move at all.
    """
    X, y = _data(seed, d=3)
    base = _report(X, y)
    Xt = X.copy()
    Xt[:, column] = (Xt[:, column] + shift) * 10.0 ** log_scale
    if permute:
        Xt = Xt[:, ::-1]
    _assert_same(base, _report(Xt, y), tol=1e-7)


@pytest.mark.parametrize("loss", ["hinge", "logistic", "exponential"])
@pytest.mark.parametrize("transform", ["shift", "scale_up", "scale_down"])
def test_other_losses_invariant(loss, transform):
    rng = np.random.default_rng(3)
    n = 16
    X = rng.standard_normal((n, 1))
    y = np.where(X[:, 0] + 0.8 * rng.standard_normal(n) > 0, 1, -1)
    Xt = {"shift": X + 3e5, "scale_up": X * 1e9, "scale_down": X * 1e-9}[transform]
    _assert_same(_report(X, y, loss=loss, B=20), _report(Xt, y, loss=loss, B=20), tol=1e-7)


def test_polynomial_basis_invariant_under_shift():
    """A degree-2 basis with an intercept spans the same functions of x and of x + c."""
    X, y = _data(5, d=2)
    _assert_same(_report(X, y, basis="poly:2"), _report(X + [50.0, -7.0], y, basis="poly:2"), tol=1e-8)


def test_ridge_penalty_is_carried_over_exactly():
    """The ridge loss is not scale invariant, but its fit must be the same minimiser in any coordinates."""
    X, y = _data(7, d=2)
    Phi = np.column_stack([np.ones(len(y)), X])
    loss = cudbound.losses.get_loss("ridge:0.5")
    beta = fit_coefficients(Phi, y, loss)
    H, g, _ = loss.quadratic_form(Phi, y, np.ones(len(y)))
    np.testing.assert_allclose(beta, np.linalg.solve(H, g), rtol=1e-12, atol=1e-12)
    # shift invariant (intercept unpenalised)
    beta_s = fit_coefficients(Phi + np.r_[0.0, 1e4, 0.0], y, loss)
    np.testing.assert_allclose(Phi @ beta, (Phi + np.r_[0.0, 1e4, 0.0]) @ beta_s, rtol=0, atol=1e-8)


def test_reparametrisation_is_orthonormal_and_maps_back():
    X, y = _data(1, d=3)
    Phi = np.column_stack([np.ones(N), (X + [1e5, 0, -1e3]) * [1e-8, 1.0, 1e8]])
    rep = reparametrise(Phi)
    np.testing.assert_allclose(rep.Z.T @ rep.Z / N, np.eye(4), atol=1e-9)
    gamma = np.array([0.3, -1.0, 2.0, 0.5])
    np.testing.assert_allclose(Phi @ rep.to_user(gamma), rep.Z @ gamma, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(rep.from_user(rep.to_user(gamma)), gamma, rtol=1e-9, atol=1e-12)


def test_identical_rows_stay_identical():
    X, _ = _data(2, d=2)
    X[5] = X[3]
    Phi = np.column_stack([np.ones(N), X * 1e7 + 3.0])
    Z = reparametrise(Phi).Z
    assert np.array_equal(Z[5], Z[3])


@pytest.mark.parametrize("scale", [1.0, 1e-12, 1e12, 1e300])
def test_rank_deficient_design_names_the_columns(scale):
    X, y = _data(4, d=3)
    X = X * scale
    X[:, 2] = 2.0 * X[:, 0] - X[:, 1]
    with pytest.raises(RankDeficientError, match="rank-deficient .*column"):
        cudbound.cud_interval(X, y, n_resamples=20, rng=0)


def test_constant_feature_is_named():
    X, y = _data(4, d=2)
    X[:, 1] = 7.0
    with pytest.raises(ValueError, match=r"column (0|2) is a linear combination"):
        cudbound.cud_interval(X, y, n_resamples=20, rng=0)


@pytest.mark.parametrize("method", ["cud", "kohavi", "wald_cv"])
def test_an_all_zero_feature_is_named_not_a_nan_error(method):
    """Found by tests/test_fuzz.py: a column of zeros gave scipy's bare "array must not contain infs or NaNs"."""
    X, y = _data(4, d=2)
    X[:, 1] = 0.0
    with pytest.raises(RankDeficientError, match=r"column 2 is a linear combination"):
        cudbound.intervals(X, y, methods=[method], rng=0, cud_options={"n_resamples": 20})
    with pytest.raises(RankDeficientError, match=r"column 1 is a linear combination"):
        reparametrise(np.column_stack([np.ones(5), np.zeros(5), np.arange(5.0)]))


def test_well_scaled_full_rank_extremes_are_accepted():
    X, y = _data(6, d=2)
    for Xs in (X * 1e300, X * 1e-300, X + 1e6):
        res = cudbound.cud_interval(Xs, y, n_resamples=20, rng=0)
        assert 0.0 <= res.confidence_interval.low <= res.confidence_interval.high <= 1.0
