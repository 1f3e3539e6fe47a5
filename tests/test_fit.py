"""The full fit's signs (``cudbound.fit``) against rational arithmetic, in any row order, origin and unit."""
import numpy as np
import pytest

from cudbound.fit import fit_classifier
from cudbound.losses import SquaredLoss
from exact_least_squares import balanced_integer_problem, exact_least_squares, exact_signs, small_integer_problems

# origins and units that keep small integers exact, so the exact decision values stay what they were
TRANSFORMS = [(0.0, 1.0), (100.0, 1.0), (-7.0, 0.125), (0.5, 3.0)]


@pytest.mark.parametrize("with_zero", [True, False])
def test_least_squares_signs_equal_exact_arithmetic_in_any_row_order_origin_and_unit(with_zero):
    """Least squares on small integer designs, half of them with a decision value exactly 0 at a training row
    (often a feature at its mean: z = 0 in the fit's orthonormal coordinates only up to rounding). The training
    error and the signs are those of rational arithmetic with sign(0) = +1, whatever the row order, origin and
    unit. Before 2026-12-04 a point at the mean was signed by rounding (the third study's Three Points n = 30
    rep 222 had a training error of 0.1 or 0.367 by BLAS kernel)."""
    rng = np.random.default_rng(11 if with_zero else 12)
    for x, y in small_integer_problems(rng, 25, with_zero=with_zero):
        n = len(y)
        Phi = np.column_stack([np.ones(n, dtype=int), x])
        signs, _ = exact_signs(Phi, exact_least_squares(Phi, y, np.ones(n)))
        for shift, unit in TRANSFORMS:
            perm = rng.permutation(n)
            design = np.column_stack([np.ones(n), x[perm] * unit + shift])
            fit = fit_classifier(design, y[perm], SquaredLoss())
            assert fit.train_error == np.mean(signs != y)
            np.testing.assert_array_equal(fit.predict(design), signs[perm])


@pytest.mark.parametrize("spec", ["zpca", "pca", "poly:1(zpca)"])
def test_a_principal_component_fit_signs_as_exact_arithmetic(spec):
    """A principal-component basis keeping every component spans the columns of (1, x): its least-squares fit
    is the linear one, so on small integer designs with a decision value exactly 0 at a training row its
    training error, its signs and ``predict`` at those rows as new points are those of rational arithmetic, at
    any origin. A score (x - mu)' v that is 0 in exact arithmetic is computed from terms of size |x| + |mu|
    (``Basis.transform_terms``, the design's terms in ``reparametrise``); with |Phi| as the design's terms
    (before 2026-12-04), 1-3% of such fits were signed by rounding."""
    from cudbound.design import prepare_data

    rng = np.random.default_rng(13)
    for x, y in small_integer_problems(rng, 60):
        n, q = x.shape
        Phi = np.column_stack([np.ones(n, dtype=int), x])
        signs, _ = exact_signs(Phi, exact_least_squares(Phi, y, np.ones(n)))
        for shift in (0.0, 1e4):
            perm = rng.permutation(n)
            X = x[perm] + shift
            data = prepare_data(X, y[perm], spec.replace("pca", f"pca:{q}"), None, None)
            fit = fit_classifier(data.design, data.labels, SquaredLoss(), entry_terms=data.design_terms)
            assert fit.train_error == np.mean(signs != y)
            np.testing.assert_array_equal(fit.predict(data.basis.transform(X), data.basis.transform_terms(X)),
                                          signs[perm])


@pytest.mark.parametrize("seed", range(30))
def test_balanced_labels_far_from_the_origin_predict_plus_one_everywhere(seed):
    """Three small integer features shifted by 1e8 (exact in floating point); the points labelled -1 are those
    labelled +1 with each feature's values permuted among them, so the label sums of 1 and of every feature are
    equal: the least-squares gradient is 0 and the fit is the zero classifier in exact arithmetic, so every
    point is predicted +1 (sign(0) = +1) and the training error is 1/2, by ``train_error``, by ``predict`` at the
    training rows and at new rows, by the full fit of the refits (which reparametrises Z again) and by refits
    on parts that weight every point alike (their gradient is 0 too). The shift
    makes Z's entries cancel about 1e8 of their terms: with the tie scale |z|' |gamma| (before 2026-12-04)
    many of these fits were signed by rounding."""
    from cudbound.design import prepare_data
    from cudbound.refit import refits_for

    rng = np.random.default_rng(seed)
    x, y = balanced_integer_problem(seed, 1e8)
    design = np.column_stack([np.ones(20), x])
    fit = fit_classifier(design, y, SquaredLoss())
    assert fit.train_error == 0.5
    assert (fit.predict(design) == 1.0).all()
    assert (fit.predict(np.column_stack([np.ones(5), rng.integers(0, 4, size=(5, 3)) + 1e8])) == 1.0).all()
    refits = refits_for(prepare_data(x, y, "linear", None, None), loss="squared")
    assert (refits.full_fit()[1] == 1.0).all()
    preds, _ = refits.predict(np.array([[1.0] * 20, [2.0] * 20, [3.0] * 20]))   # parts that balance too
    assert (preds == 1.0).all()


@pytest.mark.parametrize("spec", ["logistic", "logistic_ridge:0.05", "exponential_ridge:0.05", "hinge",
                                  "hinge_ridge:0.05"])
@pytest.mark.parametrize("shift", [0.0, 1e4])
def test_labels_that_balance_give_the_zero_classifier_for_every_margin_loss(spec, shift):
    """Labels that balance (sum_i y_i phi_i = 0) make 0 the least-norm minimiser of every convex margin loss and
    its ridge forms (``fit.labels_balance``), so every point is predicted +1: by the full fit, its ``predict``,
    the refits' full fit and refits on parts that weight every point alike. Before 2026-12-04 an iterative
    solver's answer near 0 was its rounding or tolerance and signed 16 of 30 such logistic-ridge fits."""
    from cudbound.design import prepare_data
    from cudbound.losses import get_loss
    from cudbound.refit import refits_for

    for seed in range(8):
        x, y = balanced_integer_problem(seed, shift)
        design = np.column_stack([np.ones(20), x])
        fit = fit_classifier(design, y, get_loss(spec))
        assert (fit.gamma == 0.0).all() and fit.train_error == 0.5 and (fit.predict(design) == 1.0).all()
        refits = refits_for(prepare_data(x, y, "linear", None, None), loss=spec)
        assert (refits.full_fit()[1] == 1.0).all()
        preds, _ = refits.predict(np.array([[1.0] * 20, [2.0] * 20, [3.0] * 20]))
        assert (preds == 1.0).all()


def test_every_entry_point_signs_a_principal_component_fit_as_exact_arithmetic(monkeypatch):
    """x = 1e4 + (0, 1, 0, 2, 3, 0), three times, labels (+, +, -, -, +, -): under ``zpca:1`` the row x = 1e4 + 1
    is the centre, its score 0 only up to the rounding of terms of 2e4, and the least-squares fit's decision
    value there is 0 exactly, so it is predicted +1 and the training error is 1/3 (6 of 18 wrong, by rational
    arithmetic on (1, x)). Every front door that fits beta-hat on a prepared basis gives
    1/3: ``cud_interval``, ``intervals(["cud"])``, ``compare(methods=["cud"])`` and a task of each kind of
    coverage study (training and true error, the test set the training rows). With |Phi| as the design's terms
    (before 2026-12-04) each gave 1/2."""
    import warnings
    from pathlib import Path

    import cudbound
    import cudbound.coverage.auc_tasks as auc_tasks
    import cudbound.coverage.tasks as tasks
    from cudbound.basis import make_basis
    from cudbound.compare import Procedure, compare
    from cudbound.coverage import Task, load_config

    x = np.array([0, 1, 0, 2, 3, 0] * 3)[:, None]
    y = np.array([1, 1, -1, -1, 1, -1] * 3)
    Phi = np.column_stack([np.ones(18, dtype=int), x])
    signs, zero = exact_signs(Phi, exact_least_squares(Phi, y.astype(float), np.ones(18)))
    exact = float(np.mean(signs != y))
    assert zero and exact == pytest.approx(1 / 3)
    X = x + 1e4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # few rows per coefficient
        assert cudbound.cud_interval(X, y, Procedure(basis="zpca:1"), n_resamples=20, rng=1).estimate == exact
        assert cudbound.intervals(X, y, ["cud"], procedure={"basis": "zpca:1"}, rng=1)[0].estimate == exact
        pair = compare(Procedure(basis="zpca:1"), Procedure(basis="linear"), X, y, methods=["cud"], rng=1)[0]
        assert pair.details["train_error_a"] == pair.details["train_error_b"] == exact
        basis = make_basis("zpca:1").fit(X)
        monkeypatch.setattr(tasks, "draw_split", lambda *args: (X, y, X, y, basis, basis.transform(X), 0))
        experiments = Path(__file__).parents[1] / "experiments"
        row = tasks.run_task(load_config(experiments / "smoke.toml"), Task("three_points", 30, 0))
        linear = make_basis("linear").fit(X)
        monkeypatch.setattr(auc_tasks, "_draw", lambda *args: (X, y, X, y, (basis, basis.transform(X)),
                                                               (linear, linear.transform(X)), 0))
        auc_row = auc_tasks.run_auc_task(load_config(experiments / "smoke_auc.toml"), Task("linear_gaussian", 30, 0))
    assert row["train_error"] == row["true_error"] == exact
    assert auc_row["train_error"] == auc_row["true_error"] == exact
