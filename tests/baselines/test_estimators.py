"""Point estimators against the slow reference (same resamples, same folds), degenerate refits, validation."""
import warnings

import numpy as np
import pytest

from cudbound.baselines import (DegenerateResampleWarning, ErrorEstimate, bootstrap_counts, cross_validation, e632,
                                e632plus, estimate_error, fold_assignments, leave_one_out, loo_bootstrap,
                                resubstitution)
from cudbound.refit import SINGULAR_RTOL, DesignRefits, solve_normal_equations
from cudbound.design import reparametrise
from cudbound.losses import SquaredLoss, get_loss
from reference_baselines import (make_data, ref_632, ref_632plus, ref_cv, ref_err1, ref_fit_predict, ref_loo,
                                      ref_train_error, tally)

TOL = 1e-12
CASES = [(16, 1, 0), (20, 2, 1), (23, 3, 2), (30, 2, 3)]


def _indices(n, B, seed):
    return np.random.default_rng(seed).integers(0, n, size=(B, n))


@pytest.mark.parametrize("n,d,seed", CASES)
def test_bootstrap_estimators_match_reference(n, d, seed):
    Phi, y = make_data(n, d, seed)
    idx = _indices(n, 25, seed + 100)
    counts = tally(idx, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateResampleWarning)
        assert resubstitution(Phi, y).estimate == pytest.approx(ref_train_error(Phi, y)[0], abs=TOL)
        assert loo_bootstrap(Phi, y, counts=counts).estimate == pytest.approx(ref_err1(Phi, y, idx), abs=TOL)
        assert e632(Phi, y, counts=counts).estimate == pytest.approx(ref_632(Phi, y, idx), abs=TOL)
        assert e632plus(Phi, y, counts=counts).estimate == pytest.approx(ref_632plus(Phi, y, idx), abs=TOL)


@pytest.mark.parametrize("n,d,seed", CASES)
@pytest.mark.parametrize("k", [2, 3, 7])
def test_cross_validation_matches_reference(n, d, seed, k):
    Phi, y = make_data(n, d, seed)
    folds = fold_assignments(y, k, 3, rng=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateResampleWarning)
        got = cross_validation(Phi, y, folds=folds).estimate
        # the same folds drawn from the same seed through the public arguments
        again = cross_validation(Phi, y, cv=k, repeats=3, rng=seed).estimate
    assert got == pytest.approx(ref_cv(Phi, y, folds), abs=TOL)
    assert again == got


@pytest.mark.parametrize("n,d,seed", CASES)
def test_leave_one_out_matches_reference(n, d, seed):
    Phi, y = make_data(n, d, seed)
    assert leave_one_out(Phi, y).estimate == pytest.approx(ref_loo(Phi, y), abs=TOL)
    assert cross_validation(Phi, y, cv=n, stratified=False, rng=0).estimate == pytest.approx(ref_loo(Phi, y), abs=TOL)


def test_632plus_ingredients_follow_efron_tibshirani():
    Phi, y = make_data(25, 2, 7, noise=3.0)
    est = e632plus(Phi, y, rng=5)
    d = est.details
    p1, q1 = d["p1"], d["q1"]
    assert d["gamma"] == pytest.approx(p1 * (1 - q1) + (1 - p1) * q1)
    assert 0.0 <= d["relative_overfitting_rate"] <= 1.0
    assert d["err1_prime"] == min(d["err1"], d["gamma"])
    assert d["weight"] == pytest.approx(0.632 / (1 - 0.368 * d["relative_overfitting_rate"]))
    if d["err1"] <= d["gamma"]:   # then .632+ = (1 - w) err + w Err(1)
        assert est.estimate == pytest.approx((1 - d["weight"]) * d["train_error"] + d["weight"] * d["err1"])


def test_632plus_edge_cases_of_R():
    from cudbound.baselines.estimators import _e632plus_parts
    y = np.array([1.0, 1.0, -1.0, -1.0])
    preds = np.array([1.0, 1.0, -1.0, 1.0])         # p1 = 0.5, q1 = 0.75: gamma = 0.5
    v, d = _e632plus_parts(y, preds, 0.25, 0.2)     # Err(1) <= err: R' = 0, plain .632
    assert d["relative_overfitting_rate"] == 0.0 and v == pytest.approx(0.368 * 0.25 + 0.632 * 0.2)
    v, d = _e632plus_parts(y, preds, 0.25, 0.7)     # Err(1) > gamma: Err(1)' = gamma, R' = 1
    assert d["relative_overfitting_rate"] == 1.0 and d["err1_prime"] == 0.5
    assert v == pytest.approx(0.368 * 0.25 + 0.632 * 0.7 + (0.5 - 0.25) * 0.368)


def test_points_never_left_out_are_dropped():
    Phi, y = make_data(12, 1, 4)
    n = len(y)
    idx = _indices(n, 3, 9)
    counts = tally(idx, n)
    est = loo_bootstrap(Phi, y, counts=counts)
    never = int(np.sum((counts == 0).sum(axis=0) == 0))
    assert never > 0 and est.details["points_never_left_out"] == never
    assert est.estimate == pytest.approx(ref_err1(Phi, y, idx), abs=TOL)


def test_no_point_left_out_falls_back_to_training_error():
    Phi, y = make_data(6, 1, 2)
    counts = np.ones((2, 6), dtype=int)          # both resamples are the data itself
    est = e632(Phi, y, counts=counts)
    assert est.details["err1_fallback"] == "train_error"
    assert est.estimate == pytest.approx(resubstitution(Phi, y).estimate)


def test_estimates_are_reproducible_and_rng_forms_agree():
    Phi, y = make_data(20, 2, 0)
    a = e632(Phi, y, rng=3).estimate
    assert e632(Phi, y, rng=np.random.default_rng(3)).estimate == a
    assert e632(Phi, y, rng=np.random.SeedSequence(3)).estimate == a
    assert e632(Phi, y, counts=bootstrap_counts(20, 200, 3)).estimate == a
    assert float(e632(Phi, y, rng=3)) == a


# ---------------------------------------------------------------- degenerate refits

def _one_positive(n=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 1))
    y = -np.ones(n)
    y[0] = 1.0
    return np.column_stack([np.ones(n), X]), y


def test_one_class_resamples_warn_and_match_reference():
    Phi, y = _one_positive()
    n = len(y)
    idx = _indices(n, 40, 1)
    assert any(0 not in set(row.tolist()) for row in idx)   # some samples miss the positive point
    counts = tally(idx, n)
    with pytest.warns(DegenerateResampleWarning, match="only one class"):
        est = e632plus(Phi, y, counts=counts)
    assert est.details["one_class_refits"] == sum(0 not in set(row.tolist()) for row in idx)
    assert est.estimate == pytest.approx(ref_632plus(Phi, y, idx), abs=TOL)
    assert np.isfinite(est.estimate)


def test_training_folds_without_both_classes():
    Phi, y = _one_positive(9)
    with pytest.warns(DegenerateResampleWarning, match="only one class"):
        est = leave_one_out(Phi, y)
    assert est.details["one_class_refits"] == 1                 # leaving out the only positive
    assert est.estimate == pytest.approx(ref_loo(Phi, y), abs=TOL)
    folds = np.array([[0, 1, 1, 1, 1, 2, 2, 2, 2]])
    with pytest.warns(DegenerateResampleWarning):
        est = cross_validation(Phi, y, folds=folds)
    assert est.estimate == pytest.approx(ref_cv(Phi, y, folds), abs=TOL)


def _few_distinct_rows():
    # 3 basis columns; the data have 4 distinct rows (full rank), so resamples often see only 2
    # (irregular values: with symmetric ones the minimum-norm fit can put a point exactly on
    # the boundary, where rounding decides the sign;
    base = np.array([[1.0, 0.3, -0.2], [1.0, 1.7, 0.2], [1.0, 0.1, 1.3], [1.0, 1.1, 0.9]])
    # and copies of a row share its label, else a fit can average them to exactly 0)
    Phi = np.repeat(base, [1, 1, 1, 3], axis=0)
    y = np.array([-1.0, 1.0, -1.0, 1.0, 1.0, 1.0])
    return Phi, y


def test_singular_resamples_warn_and_match_reference():
    Phi, y = _few_distinct_rows()
    n = len(y)
    idx = _indices(n, 60, 2)
    counts = tally(idx, n)
    with pytest.warns(DegenerateResampleWarning, match="singular normal matrix"):
        est = e632(Phi, y, counts=counts)
    assert est.details["singular_refits"] > 0
    assert est.estimate == pytest.approx(ref_632(Phi, y, idx), abs=TOL)


def test_refit_predictions_match_reference_row_by_row_including_singular():
    Phi, y = _few_distinct_rows()
    n = len(y)
    idx = _indices(n, 200, 5)
    preds, log = DesignRefits(reparametrise(Phi).Z, y, SquaredLoss()).predict(tally(idx, n))  # orthonormal coordinates
    assert log.singular > 0 and log.one_class > 0
    for row, b in zip(preds, idx):
        assert np.array_equal(row, ref_fit_predict(Phi, y, b))


def test_singular_rule_is_scale_invariant_and_min_norm():
    H = np.array([[[4.0, 2.0], [2.0, 1.0]]])              # rank one
    g = np.array([[2.0, 1.0]])
    beta, singular = solve_normal_equations(H, g)
    assert singular[0] and np.all(np.isfinite(beta))
    np.testing.assert_allclose(H[0] @ beta[0], g[0], atol=1e-12)   # solves the consistent system
    D = np.diag([1.0, 1e6])                                         # rescale the second feature
    beta2, singular2 = solve_normal_equations((D @ H[0] @ D)[None], (D @ g[0])[None])
    assert singular2[0]
    np.testing.assert_allclose(D @ beta2[0], beta[0], rtol=1e-9)    # the same classifier
    # regular but badly scaled systems are not declared singular
    Hr = np.array([[[1e12, 1.0], [1.0, 1e-6]]])
    assert not solve_normal_equations(Hr, np.array([[1.0, 1.0]]))[1][0]
    assert SINGULAR_RTOL == 1e-10


def test_the_singular_rule_does_not_depend_on_the_scale_of_unequilibrated_systems():
    """equilibrate=False (a design in orthonormal coordinates, H = Z'WZ of size about n): the rule
    lambda_min <= SINGULAR_RTOL lambda_max decides, whatever the scale c of H; its cheap determinant
    test once bounded lambda_max by p instead of trace(H), so c = 100 declared a rank-deficient H
    regular and solved it."""
    rng = np.random.default_rng(4)
    Q = np.linalg.qr(rng.normal(size=(4, 4)))[0]
    for spectrum, expect in [([1.0, 1.0, 1.0, 1e-12], True), ([1.0, 0.5, 0.2, 1e-9], False), ([1.0, 1.0, 1.0, 0.0], True)]:
        H0 = (Q * spectrum) @ Q.T
        H0 = (H0 + H0.T) / 2
        g0 = H0 @ np.ones(4)                                        # consistent: beta = 1 solves it
        for c in (1e-3, 1.0, 100.0, 1e4, 1e6):
            beta, singular = solve_normal_equations((c * H0)[None], (c * g0)[None], equilibrate=False)
            assert singular[0] == expect, (spectrum, c)
            np.testing.assert_allclose(c * H0 @ beta[0], c * g0, atol=1e-8 * c)
            if expect:
                assert np.linalg.norm(beta[0]) <= np.linalg.norm(np.ones(4)) + 1e-6   # the least-norm solution


def test_the_cheap_regularity_proof_is_sound_and_works_at_every_size():
    """regular_bound(p): det(H / trace) above it implies lambda_min > SINGULAR_RTOL lambda_max (checked on
    random spectra around the threshold, p = 2..40); it holds for well-conditioned systems at every p (a
    bound of SINGULAR_RTOL p^p once failed for every system of p >= 10, which then all paid for their
    eigenvalues, and its power overflowed for p = 105 at a trace of 10^4)."""
    import warnings
    from cudbound.refit import regular_bound
    rng = np.random.default_rng(13)
    for p in (2, 3, 5, 10, 20, 40):
        Q = np.linalg.qr(rng.normal(size=(p, p)))[0]
        for _ in range(60):
            lam = np.sort(rng.uniform(0.5, 2.0, p)) * 10.0 ** rng.uniform(-5, 5)
            lam[0] = lam[-1] * 10.0 ** rng.uniform(-12, -7)
            H = (Q * lam) @ Q.T
            H = (H + H.T) / 2
            if np.linalg.det(H / np.trace(H)) > regular_bound(p):
                assert lam[0] > SINGULAR_RTOL * lam[-1]
        assert np.linalg.det(np.eye(p) / p) > regular_bound(p)                 # c I: proved regular
    H = 1e4 * np.eye(105)[None]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        beta, singular = solve_normal_equations(H, np.ones((1, 105)), equilibrate=False)
    assert not singular[0] and np.allclose(beta, 1e-4)


class _FailingLoss(type(get_loss("squared"))):
    name = "failing"
    is_quadratic = False

    def cvxpy_pointwise(self, y, t):
        raise RuntimeError("solver exploded")


def test_generic_loss_failures_fall_back_to_majority_class():
    """Every refit of a loss whose solver always raises predicts its weighted sample's
    majority class (+1 on a tie); a one-class sample predicts that class."""
    Phi, y = make_data(12, 1, 0)
    counts = bootstrap_counts(12, 40, 0).astype(float)
    counts[0] = np.where(y > 0, 1.0, 1.0)          # an exact tie when the classes balance
    counts[1] = np.where(y > 0, 2.0, 0.0)          # one class only
    preds, log = DesignRefits(Phi, y, _FailingLoss()).predict(counts)
    has_both = (counts @ (y > 0) > 0) & (counts @ (y < 0) > 0)
    assert log.one_class == int(np.sum(~has_both)) >= 1
    assert log.failed == int(np.sum(has_both)) >= 30
    for row, w, both in zip(preds, counts, has_both):
        expected = 1.0 if np.dot(w, y) >= 0.0 else -1.0
        if not both:
            expected = 1.0 if np.dot(w, y > 0) > 0 else -1.0
        assert np.all(row == expected)
    # the two labels occur among the fallbacks, so the rule is not a constant
    assert {1.0, -1.0} <= {row[0] for row, both in zip(preds, has_both) if both}


def test_generic_loss_path_matches_batched_path():
    Phi, y = make_data(15, 2, 1)

    class Squared2(SquaredLoss):       # the same loss, but not the batched class
        pass

    loss = Squared2()
    loss.is_quadratic = False
    counts = bootstrap_counts(15, 6, 2)
    a, _ = DesignRefits(Phi, y, SquaredLoss()).predict(counts)
    b, _ = DesignRefits(Phi, y, loss).predict(counts)
    assert np.array_equal(a, b)
    q = Squared2()                      # quadratic but not SquaredLoss: per-row forms, batched solve
    c, _ = DesignRefits(Phi, y, q).predict(counts)
    assert np.array_equal(a, c)


# ---------------------------------------------------------------- folds

@pytest.mark.parametrize("n,k", [(10, 3), (17, 4), (23, 5), (9, 9), (31, 2)])
def test_fold_assignments_sizes_and_stratification(n, k):
    y = np.where(np.arange(n) % 3 == 0, 1.0, -1.0)
    folds = fold_assignments(y, k, 4, rng=0)
    assert folds.shape == (4, n)
    for row in folds:
        sizes = np.bincount(row, minlength=k)
        assert sizes.max() - sizes.min() <= 1 and sizes.sum() == n
        for c in (-1.0, 1.0):
            per = np.bincount(row[y == c], minlength=k)
            assert per.max() - per.min() <= 1


# ---------------------------------------------------------------- input validation and convenience

@pytest.mark.parametrize("call,match", [
    (lambda P, y: e632(P, y, n_resamples=0), "`n_resamples`"),
    (lambda P, y: e632(P, y, counts=np.ones((2, 5)), ), "`counts`"),
    (lambda P, y: e632(P, y, counts=np.full((1, len(y)), 2)), "sum to n"),
    (lambda P, y: cross_validation(P, y, cv=1), "`cv`"),
    (lambda P, y: cross_validation(P, y, cv=len(y) + 1), "`cv`"),
    (lambda P, y: cross_validation(P, y, repeats=0), "`repeats`"),
    (lambda P, y: cross_validation(P, y, stratified="yes"), "`stratified`"),
    (lambda P, y: cross_validation(P, y, folds=np.zeros(len(y), dtype=int)), "single fold"),
    (lambda P, y: e632(P, y[:-1]), "labels"),
    (lambda P, y: e632(P, np.full(len(y), 1.0)), "two classes"),
    (lambda P, y: resubstitution(np.column_stack([P, P[:, :1]]), y), "rank-deficient"),
    (lambda P, y: e632(P, y, loss="hinge2"), "`loss`"),
])
def test_bad_input_raises_naming_the_argument(call, match):
    Phi, y = make_data(12, 2, 0)
    with pytest.raises(ValueError, match=match):
        call(Phi, y)


def test_estimate_error_applies_the_basis_and_labels(xy01):
    X, y01 = xy01
    ystr = np.where(y01 == 1, "spam", "ham")
    Phi = np.column_stack([np.ones(30), X])
    a = estimate_error(X, ystr, "632", pos_label="spam", rng=4)
    b = e632(Phi, np.where(y01 == 1, 1, -1), rng=4)
    assert isinstance(a, ErrorEstimate) and a.estimate == b.estimate
    assert a.details["basis"] == "LinearBasis()"
    assert estimate_error(X, y01, "loo").estimate == leave_one_out(Phi, y01).estimate
    with pytest.raises(ValueError, match="`method`"):
        estimate_error(X, y01, "bootstrap")


def test_fold_assignments_and_bootstrap_counts_validate_and_accept_01_labels():
    folds = fold_assignments(np.array([0, 1, 0, 1, 1, 0, 0]), 3, 2, rng=1)
    assert folds.shape == (2, 7) and set(np.unique(folds)) == {0, 1, 2}
    with pytest.raises(ValueError, match="`cv`"):
        fold_assignments([0, 1, 1], 4)
    with pytest.raises(ValueError, match="two classes"):
        fold_assignments([1, 1, 1], 2)
    c = bootstrap_counts(9, 5, rng=0)
    assert c.shape == (5, 9) and np.all(c.sum(axis=1) == 9)
    with pytest.raises(ValueError, match="`n_resamples`"):
        bootstrap_counts(9, 0)


def test_632plus_hand_computed_when_err1_exceeds_gamma():
    """Efron & Tibshirani (1997), eq. (32), by hand: y = (1, 1, -1, -1), full-data predictions
    (1, 1, -1, 1), err = 0.25, Err(1) = 0.7. Then p1 = 0.5, q1 = 0.75, gamma = 0.5,
    Err(1)' = 0.5, R' = 1, and Err(.632+) = .368 * .25 + .632 * .7 + .25 * .368 * .632 / .632
    = 0.092 + 0.4424 + 0.092 = 0.6264."""
    from cudbound.baselines.estimators import _e632plus_parts
    value, parts = _e632plus_parts(np.array([1.0, 1, -1, -1]), np.array([1.0, 1, -1, 1]), 0.25, 0.7)
    assert parts["gamma"] == 0.5 and parts["err1_prime"] == 0.5 and parts["relative_overfitting_rate"] == 1.0
    assert value == pytest.approx(0.6264, abs=1e-12)
