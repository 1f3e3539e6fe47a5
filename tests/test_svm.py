"""The xi-alpha estimators (cudbound/svm.py): the SVM against a high-accuracy QP, the
estimate's pessimism against brute-force leave-one-out, and the exact cheap leave-one-out."""
import os
import warnings
from types import SimpleNamespace

import cvxpy as cp
import numpy as np
import pytest

from cudbound.svm import (SVMConvergenceWarning, UnstableSVMWarning, centred_kernel, fit_svm, kernel_matrix,
                          loo_error, radius_sq, xi_alpha)
from sweeps import first_of_each

CLASSES = ("plain", "discrete", "shifted", "separable", "imbalanced")


def problem(seed, n=None, cls="plain"):
    """A small random SVM problem of one class of inputs: continuous features, discrete features
    (ties and duplicate points), features far from zero in odd units, separable labels, two
    positives only. Kernels rotate; C spans 0.01 to 1000."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 40)) if n is None else n
    X = rng.normal(size=(n, int(rng.integers(1, 4))))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=n) > 0, 1, -1)
    if cls == "discrete":
        X = rng.integers(0, 3, size=X.shape).astype(float)
    if cls == "shifted":
        X = X * 10.0 ** rng.uniform(-2, 2) + rng.uniform(-1e4, 1e4, size=X.shape[1])
    if cls == "separable":
        y = np.where(X[:, 0] > 0, 1, -1)
    if cls == "imbalanced":
        y = -np.ones(n, dtype=int)
        y[rng.choice(n, 2, replace=False)] = 1
    else:
        y[:2] = [1, -1]
    kernel = ["linear", "rbf"][seed % 2] if cls == "shifted" else ["linear", "rbf", "poly"][seed % 3]
    C = float(10.0 ** rng.uniform(-2, 3))
    return X, y, kernel, C


def reference_dual(K, y, C):
    """max sum alpha - 1/2 alpha'Q alpha, 0 <= alpha <= C, y'alpha = 0, by CLARABEL at 1e-12."""
    n = len(y)
    a = cp.Variable(n)
    Q = (y[:, None] * y[None, :]) * K + 1e-12 * np.eye(n)
    L = np.linalg.cholesky(Q + 1e-10 * np.eye(n))
    prob = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.sum_squares(L.T @ a)), [a >= 0, a <= C, y @ a == 0])
    with warnings.catch_warnings():  # "may be inaccurate" at 1e-12: the comparison below judges
        warnings.simplefilter("ignore", UserWarning)
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return a.value, prob.value


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("seed", range(6))
def test_the_dual_solution_matches_a_high_accuracy_qp(cls, seed):
    X, y, kernel, C = problem(seed, cls=cls)
    if kernel == "linear" or kernel == "rbf":
        X = X - X.mean(0)
    K = centred_kernel(kernel_matrix(X, X, kernel, gamma=0.5, degree=2, coef0=1.0))
    sol = fit_svm(K, y.astype(float), min(C, 100.0))
    _, ref_value = reference_dual(K, y.astype(float), min(C, 100.0))
    a = sol.alpha
    value = a.sum() - 0.5 * (a * y) @ K @ (a * y)
    assert value == pytest.approx(ref_value, rel=1e-7, abs=1e-9)
    assert np.all(a >= 0) and np.all(a <= min(C, 100.0)) and abs(a @ y) < 1e-9
    assert sol.kkt_violation < 1e-8


STRESS_SEEDS = int(os.environ.get("CUDBOUND_SVM_STRESS_SEEDS", "60"))
"""Seeds per class of the leave-one-out test; the docs' figure (1500 problems) is 300."""


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("seed", range(STRESS_SEEDS))
def test_the_estimate_is_pessimistic_and_the_cheap_loo_is_exact(cls, seed):
    """d >= leave-one-out errors (Lemma 1) against refitting every point; refitting only the
    counted points gives the same leave-one-out errors. Both need Lemma 1's premise (stable
    SVMs: a free multiplier in the full and every leave-one-out SVM); when it fails the
    shortcut's detected cases refit everything."""
    X, y, kernel, C = problem(seed, cls=cls)
    kw = dict(C=C, kernel=kernel, gamma=0.5, degree=2, coef0=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnstableSVMWarning)
        est = xi_alpha(X, y, **kw)
        full = loo_error(X, y, refit_all=True, **kw)
        cheap = loo_error(X, y, **kw)
    assert full.n_refits == len(y)
    # a training error (xi > 1) is a leave-one-out error, whatever the stability
    sure = est.slack > 1.0 + 1e-8
    assert full.errors[sure].all()
    if not est.stable:
        assert cheap.n_refits == int(np.sum(~sure))
        np.testing.assert_array_equal(cheap.errors, full.errors)
        return
    if full.unstable.any():  # outside Lemma 1: the refitted points still agree
        refitted = cheap.errors | (est.rho * est.alpha * est.radius_sq + est.slack >= 1.0)
        np.testing.assert_array_equal(cheap.errors[refitted], full.errors[refitted])
        return
    assert est.n_errors >= full.n_errors
    assert est.n_pos_errors >= int(np.sum(full.errors & (y > 0)))
    assert est.n_neg_errors >= int(np.sum(full.errors & (y < 0)))
    np.testing.assert_array_equal(cheap.errors, full.errors)
    counted = est.rho * est.alpha * est.radius_sq + est.slack >= 1.0
    assert cheap.n_refits == int(np.sum(counted & ~sure))


def optimal_bias_interval(K, y, C, alpha):
    """The biases b with which alpha meets the KKT conditions, y_i (s_i + b) >= 1 at 0, <= 1 at
    C, = 1 in between (s = K (alpha y)): an interval, a point when a multiplier is free."""
    s = K @ (alpha * y)
    edge = y - s  # y_i (s_i + b) = 1  <=>  b = y_i - s_i
    at0, atC = alpha <= 0.0, alpha >= C
    free = ~at0 & ~atC
    lo = max(np.max(edge[(at0 & (y > 0)) | (atC & (y < 0)) | free], initial=-np.inf), -np.inf)
    hi = min(np.min(edge[(at0 & (y < 0)) | (atC & (y > 0)) | free], initial=np.inf), np.inf)
    return lo, hi


@pytest.mark.parametrize("seed, cls", first_of_each([(seed, cls) for seed in range(20) for cls in CLASSES],
                                                    lambda case: case[1]))
def test_warm_started_refits_equal_cold_fits(cls, seed):
    """The README's command checks the first seed of each class (5 of 100), CI all of them (slow).

    Each leave-one-out refit (fit_svm's warm start; loo_error's path from the full solution,
    with and without its shared start) reaches the optimum a cold fit of the n - 1 points
    reaches: the same dual objective, the same function, an optimal bias; and without a free
    multiplier (the bias one of an interval) the one nearest the full SVM's, as documented."""
    from cudbound.optim.svm_dual import kkt_violation
    from cudbound.svm import _prepare, _refit, _refit_start, _warm_start
    X, y, kernel, C = problem(seed, cls=cls)
    _, labels, C, K, _, _ = _prepare(X, y, C, kernel, 0.5, 2, 1.0, None)
    full = fit_svm(K, labels, C)
    start, G_full, scale_full, Minv0 = _refit_start(K, labels, C, full)
    for t in range(len(labels)):
        keep = np.arange(len(labels)) != t
        if np.unique(labels[keep]).size < 2:
            continue
        cold = fit_svm(K[np.ix_(keep, keep)], labels[keep], C)
        Kk = K[np.ix_(keep, keep)]
        c = cold.alpha * labels[keep]
        lo, hi = optimal_bias_interval(Kk, labels[keep], C, cold.alpha)
        for warm in (fit_svm(K, labels, C, alpha0=_warm_start(full.alpha, labels, C, K[t], t), active=keep,
                             prefer_bias=full.intercept),
                     SimpleNamespace(**dict(zip(("alpha", "intercept"), _refit(K, labels, C, full, keep, t)))),
                     SimpleNamespace(**dict(zip(("alpha", "intercept"),
                                                _refit(K, labels, C, start, keep, t, G_full, scale_full, Minv0))))):
            if hi - lo > 1e-6 * max(1.0, abs(lo)):  # the bias is not unique: the rule picks one
                assert warm.intercept == pytest.approx(min(max(full.intercept, lo), hi), abs=1e-7)
            a = warm.alpha[keep] * labels[keep]
            assert warm.alpha[t] == 0.0
            assert np.abs(warm.alpha[keep]).sum() - 0.5 * a @ Kk @ a == pytest.approx(
                np.abs(cold.alpha).sum() - 0.5 * c @ Kk @ c, rel=1e-9, abs=1e-12)
            # the function without its bias, sum_j alpha_j y_j K(x_j, x_t), is unique; the bias may
            # not be (no free multiplier), but each bias is optimal for the other's multipliers
            assert K[t, keep] @ a == pytest.approx(K[t, keep] @ c, rel=1e-7, abs=1e-9)
            assert kkt_violation(Kk, labels[keep], C, cold.alpha, warm.intercept) < 1e-8
            assert kkt_violation(Kk, labels[keep], C, warm.alpha[keep], cold.intercept) < 1e-8


def test_features_far_from_zero_change_nothing():
    """The SVM with a bias and the theorem's R^2 do not see where the features' zero is."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1, -1)
    for kernel in ("linear", "rbf"):
        base = xi_alpha(X, y, C=2.0, kernel=kernel)
        moved = xi_alpha(X + [1e4, -3e3, 7.0], y, C=2.0, kernel=kernel)
        assert moved.radius_sq == pytest.approx(base.radius_sq, rel=1e-9)
        np.testing.assert_allclose(moved.alpha, base.alpha, atol=1e-8)
        assert (moved.n_errors, moved.n_pos_errors) == (base.n_errors, base.n_pos_errors)
        np.testing.assert_array_equal(loo_error(X + 5e3, y, C=2.0, kernel=kernel).errors,
                                      loo_error(X, y, C=2.0, kernel=kernel).errors)


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
def test_the_intercept_is_for_the_kernel_as_given(kernel):
    """f(x) = sum alpha_i y_i K(x_i, x) + intercept with the user's kernel and features
    reproduces the training margins (the SVM is solved on a centred kernel)."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(40, 2)) + [3.0, -2.0]
    y = np.where(X[:, 0] - 3.0 + 0.5 * rng.normal(size=40) > 0, 1, -1)
    e = xi_alpha(X, y, C=1.0, kernel=kernel, gamma=0.3, degree=2, coef0=1.0)
    f = kernel_matrix(X, X, kernel, gamma=0.3, degree=2, coef0=1.0) @ (e.alpha * y) + e.intercept
    np.testing.assert_allclose(np.maximum(0.0, 1.0 - y * f), e.slack, atol=1e-8)
    free = (e.alpha > 1e-8) & (e.alpha < 1.0 - 1e-8)
    assert free.any() and np.allclose(y[free] * f[free], 1.0, atol=1e-8)


def test_the_svmlight_radius_and_rho():
    """SVM-light's R^2 is the largest squared distance from the image of 0; its rho is 1."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 2)) + 3.0
    y = np.where(X[:, 0] > 3.0, 1, -1)
    e = xi_alpha(X, y, radius="svmlight")
    assert e.rho == 1.0 and e.radius_sq == pytest.approx(np.max((X ** 2).sum(1)))
    r = xi_alpha(X, y, radius="svmlight", kernel="rbf", gamma=0.3)
    assert r.radius_sq == pytest.approx(np.max(2.0 - 2.0 * np.exp(-0.3 * (X ** 2).sum(1))))
    p = xi_alpha(X, y, radius="svmlight", kernel="poly", gamma=0.5, degree=2, coef0=1.0)
    assert p.radius_sq == pytest.approx(np.max((0.5 * (X ** 2).sum(1) + 1.0) ** 2 - 2.0 + 1.0))
    assert xi_alpha(X, y, radius=2.5, rho=1.5).rho == 1.5
    assert e.n_errors == int(np.sum(1.0 * e.alpha * e.radius_sq + e.slack >= 1.0))


def test_an_unstable_svm_is_reported_and_loo_refits_everything():
    X, y, _, _ = problem(1, n=12, cls="separable")
    with pytest.warns(UnstableSVMWarning):
        e = xi_alpha(X, y, C=1e-3, kernel="rbf", gamma=0.5)
    assert not e.stable
    with pytest.warns(UnstableSVMWarning):
        assert loo_error(X, y, C=1e-3, kernel="rbf", gamma=0.5).n_refits == int(np.sum(e.slack <= 1.0 + 1e-8))


def test_an_ill_conditioned_kernel_is_reported():
    """A polynomial kernel on features near 1e4 (values near 1e16) loses its differences to
    round-off: no solver can meet the KKT conditions, and the user is told."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(25, 2)) + 1e4
    y = np.where(X[:, 0] > 1e4, 1, -1)
    y[:2] = [1, -1]
    with pytest.warns(SVMConvergenceWarning, match="KKT conditions hold only"):
        xi_alpha(X, y, C=50.0, kernel="poly", gamma=0.5, degree=2, coef0=1.0)


def test_definitions_of_recall_precision_and_f1():
    X, y, kernel, C = problem(3, n=30)
    e = xi_alpha(X, y, C=1.0, kernel=kernel, gamma=0.5)
    npos, dp, dn = e.n_pos, e.n_pos_errors, e.n_neg_errors
    assert e.estimate == (dp + dn) / len(y) and e.recall == 1 - dp / npos
    assert e.precision == (npos - dp) / (npos - dp + dn) and e.f1 == (2 * npos - 2 * dp) / (2 * npos - dp + dn)
    counted = e.rho * e.alpha * e.radius_sq + e.slack >= 1
    assert counted.sum() == e.n_errors


def test_a_constant_added_to_the_kernel_changes_nothing():
    """Lemma 2: the SVM with a bias does not see a constant added to the kernel, and the
    theorem's R^2 (max diagonal minus minimum) does not either."""
    X, y, _, _ = problem(5, n=20)
    base = xi_alpha(X, y, C=2.0, kernel=lambda A, B: A @ B.T)
    shifted = xi_alpha(X, y, C=2.0, kernel=lambda A, B: A @ B.T + 7.0)
    assert shifted.radius_sq == pytest.approx(base.radius_sq)
    assert radius_sq(X, centred_kernel(X @ X.T + 7.0), "theorem", {}) == pytest.approx(base.radius_sq)
    np.testing.assert_allclose(shifted.alpha, base.alpha, atol=1e-7)
    assert shifted.n_errors == base.n_errors


def test_labels_radius_and_errors():
    X, y, _, _ = problem(1, n=16)
    a = xi_alpha(X, np.where(y > 0, "spam", "ham"), pos_label="spam")
    b = xi_alpha(X, y)
    assert a.n_errors == b.n_errors
    assert xi_alpha(X, y, radius=0.0).n_errors == int(np.sum(b.slack >= 1))
    with pytest.raises(ValueError, match="`C` must be a finite positive number"):
        xi_alpha(X, y, C=0.0)
    with pytest.raises(ValueError, match="kernel"):
        xi_alpha(X, y, kernel="sigmoid")
    with pytest.raises(ValueError, match="radius"):
        xi_alpha(X, y, radius="largest")
    with pytest.raises(ValueError, match="symmetric"):
        xi_alpha(X, y, kernel=lambda A, B: A @ B.T + np.arange(len(B))[None, :])


def test_command_line(tmp_path, capsys):
    import json

    from cudbound.cli import main
    rng = np.random.default_rng(7)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=30) > 0, 1, -1)
    path = tmp_path / "d.csv"
    rows = ["a,b,outcome"] + [f"{float(a)!r},{float(b)!r},{'sick' if t > 0 else 'well'}" for (a, b), t in zip(X, y)]
    path.write_text("\n".join(rows) + "\n")
    assert main(["xi-alpha", "--data", str(path), "--label", "outcome", "--pos-label", "sick", "--C", "2",
                 "--loo", "--no-progress", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    est, loo = xi_alpha(X, y, C=2.0), loo_error(X, y, C=2.0)
    got = {(r["method"], r["quantity"]): r for r in rec["results"]}
    assert (got["xi_alpha", "error rate"]["n_errors"], got["xi_alpha", "error rate"]["estimate"],
            got["xi_alpha", "F1 score"]["estimate"]) == (est.n_errors, est.estimate, est.f1)
    assert got["xi_alpha", "recall"]["n_errors"] == est.n_pos_errors
    assert (got["loo_error", "error rate"]["n_errors"], got["loo_error", "error rate"]["n_refits"]) == (
        loo.n_errors, loo.n_refits)
    assert got["loo_error", "error rate"]["estimate"] == loo.estimate and got["loo_error", "recall"]["n_samples"] == 30
    assert len(got) == 8
    assert main(["xi-alpha", "--data", str(path), "--label", "outcome", "--pos-label", "sick", "--radius",
                 "svmlight", "--kernel", "rbf", "--gamma", "0.5"]) == 0
    out = capsys.readouterr().out
    light = xi_alpha(X, y, radius="svmlight", kernel="rbf", gamma=0.5)
    assert out.startswith(f"xi-alpha estimates (Joachims 2000), rho = 1, R^2 = {light.radius_sq:.6g} (svmlight)")
    assert f"error     <= {light.estimate:.4f}" in out
    assert main(["xi-alpha", "--data", str(path), "--label", "outcome", "--pos-label", "sick", "--radius", "big"]) == 2
    assert "--radius" in capsys.readouterr().err
    assert main(["xi-alpha", "--data", str(path), "--label", "outcome"]) == 2
    assert "pos-label" in capsys.readouterr().err
