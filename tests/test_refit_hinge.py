"""The hinge refits of cudbound.refit: the hinge loss and its ridge forms (scikit-learn's LinearSVC and SVC
among them) solved for all parts at once give on every part the fit's own minimiser (cudbound.fit's exact
path in the part's coordinates), scikit-learn's fits, and the one-part path's fits to that path's accuracy;
degenerate parts, and any part the batched solve does not certify, are the one-part path's."""
import copy
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

import cudbound
from cudbound.design import prepare_data, reparametrise
from cudbound.fit import fit_coefficients
from cudbound.refit import DesignRefits, ProcedureRefits, _part_weights, refits_for
from cudbound.ties import decision_signs, term_scale
from call_counts import count_rows

SPECS = ["hinge", "hinge_ridge:0.05", "hinge_ridge:0.05:all", "hinge_ridge:2"]


def _data(kind, n=30, seed=4):
    """Continuous features in units a thousand apart, or three-level discrete ones (exact ties, points on the
    margin, duplicated rows)."""
    rng = np.random.default_rng(seed)
    if kind == "discrete":
        X = rng.integers(0, 3, size=(n, 3)).astype(float)
        return X, np.where(X[:, 0] + rng.normal(size=n) > 1, 1, -1)
    F = rng.normal(size=(n, 3))
    return F * [1e-3, 1.0, 1e3] + [2e-3, 0.0, -2e3], np.where(F[:, 0] - F[:, 1] + 1.5 * rng.normal(size=n) > 0, 1, -1)


def _parts(n, kind, B=8, seed=1):
    rng = np.random.default_rng(seed)
    if kind == "bootstrap":
        return rng.multinomial(n, np.ones(n) / n, size=B).astype(float)
    return (rng.random((B, n)) < 0.75).astype(float)


def _exact(design, labels, loss, w):
    """The fit's own minimiser of part w on an orthonormal design (cudbound.fit.fit_coefficients without a
    second reparametrisation: the hinge's linear program and least-distance step, or the ridge forms'
    interior-point answer polished on its active set and, where degenerate, solved in rational arithmetic):
    (values, their terms' scale)."""
    gamma = fit_coefficients(design, labels, loss, w, reparametrise=False)
    return design @ gamma, term_scale(design, gamma)


def _today(data, W, monkeypatch):
    """The refits without the batched hinge path: every part by the one-part path."""
    with monkeypatch.context() as m:
        m.setattr(cudbound.refit, "_hinge_base", lambda loss: None)
        return refits_for(data).scored(W)


def _same_fits(values, scales, refs, ref_scales, rtol=1e-9):
    """Values within ``rtol`` of each reference's largest, and the same labels (sign(0) = +1 by the tie rule)
    wherever the reference is clear of 0 by that much."""
    for v, s, r, rs in zip(values, scales, refs, ref_scales):
        size = max(1.0, np.abs(r).max())
        np.testing.assert_allclose(v, r, rtol=0, atol=rtol * size)
        clear = np.abs(r) > rtol * size
        np.testing.assert_array_equal(decision_signs(v, s)[clear], decision_signs(r, rs)[clear])


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("kind", ["bootstrap", "folds"])
@pytest.mark.parametrize("data_kind", ["continuous", "discrete"])
def test_batched_hinge_refits_are_the_fits_own_minimisers(spec, kind, data_kind, monkeypatch):
    """A fixed design: every part's decision values within 1e-9 of the fit's exact path on the part, the same
    labels, and (on continuous data) no part left to the one-part path."""
    X, y = _data(data_kind)
    W = _parts(len(y), kind)
    data = prepare_data(X, y, "linear", None, None, spec)
    loss = cudbound.losses.get_loss(spec)
    refits = refits_for(data)
    design = refits._design_refits(loss)
    assert design.kind == "hinge"
    sent = count_rows(monkeypatch, DesignRefits, "_generic")
    values, scales, log = refits.scored(W)
    assert (log.refits, log.failed, log.one_class) == (len(W), 0, 0)
    if data_kind == "continuous":
        assert sent == []
    refs = [_exact(design.design, design.labels, design.loss, w) for w in _part_weights(W, loss)]
    # both solve the minimiser's face with their residual corrected (the penalty's gradient through its factor
    # M, not P = M'M): they agree to rounding, on a machine with AVX-512 kernels as with AVX2 ones (each face
    # solved once gave 2e-10 apart with AVX2, 6e-9 with AVX-512, on the continuous data's units 1e-3 to 1e3)
    _same_fits(values, scales, [r for r, _ in refs], [s for _, s in refs], rtol=1e-12)


@pytest.mark.parametrize("spec", SPECS)
def test_the_one_part_path_agrees_to_its_own_accuracy(spec, monkeypatch):
    """The one-part path (cvxpy with a least-norm second solve for the ridge forms) gives the same values within
    its accuracy (1e-9 for the hinge's exact linear program, 1e-2 of the scores' scale for the ridge forms, whose
    least-norm step keeps a slack of 1e-10 in the objective) and the same labels off its error's reach."""
    X, y = _data("continuous")
    W = _parts(len(y), "bootstrap", B=6)
    data = prepare_data(X, y, "linear", None, None, spec)
    values, scales, _ = refits_for(data).scored(W)
    old, old_scales, old_log = _today(data, W, monkeypatch)
    assert old_log.failed == 0
    _same_fits(values, scales, old, old_scales, 1e-9 if spec == "hinge" else 1e-2)


@pytest.mark.parametrize("model", ["LinearSVC", "SVC", "scaled SVC"])
@pytest.mark.parametrize("kind", ["bootstrap", "folds"])
def test_scikit_learn_svms_refit_as_their_own_fit(model, kind, monkeypatch):
    """LinearSVC(loss='hinge') and SVC(kernel='linear') (alone, and after a StandardScaler refitted per part), C
    at the part's size: every part's decision values within 1e-5 of scikit-learn's own fit at a tight tolerance
    on the part's rows, and nothing left to the one-part path."""
    rng = np.random.default_rng(2)
    n = 30
    X = rng.normal(size=(n, 3)) * [1.0, 2.0, 0.5] + [0.3, 0.0, -1.0]
    y = np.where(X[:, 0] - X[:, 1] + rng.normal(size=n) > 0, 1, -1)
    W = _parts(n, kind, B=6, seed=3)
    svm = LinearSVC(loss="hinge", C=0.7) if model == "LinearSVC" else SVC(kernel="linear", C=0.7)
    est = make_pipeline(StandardScaler(), svm) if model == "scaled SVC" else svm
    tight = {"tol": 1e-10} if model != "LinearSVC" else {"tol": 1e-10, "max_iter": 10 ** 6}
    sent = count_rows(monkeypatch, ProcedureRefits, "_one_part")
    values, _ = refits_for(prepare_data(X, y, None, est, None, None)).decision(W)
    assert sent == []
    for b, w in enumerate(W):
        idx = np.repeat(np.arange(n), w.astype(int))
        fitted = clone(est).set_params(**{(("svc__" if model == "scaled SVC" else "") + k): v
                                          for k, v in tight.items()})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = fitted.fit(X[idx], y[idx]).decision_function(X)
        np.testing.assert_allclose(values[b], theirs, rtol=0, atol=1e-5 * np.abs(theirs).max())


def _own_design_exact(data, loss_for, w):
    """The fit's exact minimiser of part w in the coordinates of the basis refitted on the part's rows."""
    y = data.labels
    idx = np.repeat(np.arange(len(y)), w.astype(int))
    rep = reparametrise(copy.deepcopy(data.basis).fit(data.X[idx]).transform(data.X))
    loss = loss_for(int(w.sum()))
    return _exact(rep.Z, y, rep.loss(loss), _part_weights(w[None], loss)[0])


@pytest.mark.parametrize("procedure", ["zpca:2 hinge", "zpca:2 hinge_ridge:0.05", "pca:2 hinge_ridge:0.05:all"])
@pytest.mark.parametrize("kind", ["bootstrap", "folds"])
def test_batched_hinge_refits_of_a_refitted_basis_are_the_fits_own(procedure, kind, monkeypatch):
    """A basis refitted per part (principal components): each part solved in its own design's coordinates gives
    the fit's exact minimiser there, within 1e-9; only the parts the basis's batched form leaves alone go to the
    one-part path."""
    head, _, tail = procedure.partition(" ")
    X, y = _data("continuous", n=24, seed=11)
    W = _parts(len(y), kind, B=6)
    data = prepare_data(X, y, head, None, None, tail)
    refits = refits_for(data)
    _, designed, _ = refits._part_designs(W)
    sent = count_rows(monkeypatch, ProcedureRefits, "_one_part")
    values, scales, log = refits.scored(W)
    assert sum(sent) == int((~designed).sum()) and log.refits == len(W)
    refs = [_own_design_exact(data, lambda m: cudbound.losses.get_loss(tail), w) for w in W]
    _same_fits(values, scales, [r for r, _ in refs], [s for _, s in refs])


@pytest.mark.parametrize("spec", SPECS)
def test_degenerate_parts(spec):
    """One class only (the constant classifier, counted), a part of two distinct rows carrying both labels,
    separable parts (no penalty: the hard-margin solution), and rows repeated with both labels: the fit's own
    minimisers."""
    X, y = _data("discrete", n=16, seed=5)
    X = np.vstack([X, X[:4]])
    y = np.r_[y, -y[:4]]                               # four points with both labels
    n = len(y)
    W = _parts(n, "bootstrap", B=6, seed=2)
    W[0] = np.where(y > 0, 2.0, 0.0)                    # one class
    W[1] = 0.0
    W[1, [0, 16]] = [3.0, 2.0]                          # one point, both labels: two distinct rows
    W[1, int(np.flatnonzero((X[:, 0] != X[0, 0]) & (y > 0))[0])] = 1.0
    order = np.argsort(X[:, 0] + 0.01 * X[:, 1] + 1e-4 * X[:, 2], kind="stable")
    separable = np.where(X[:, 0] >= 1, 1, -1)
    W[2] = 0.0
    W[2, order[np.r_[0:3, -3:0]]] = 1.0
    data = prepare_data(X, y, "linear", None, None, spec)
    values, scales, log = refits_for(data).scored(W)
    assert log.one_class == 1 and values[0].tolist() == [1.0] * n
    loss = cudbound.losses.get_loss(spec)
    design = refits_for(data)._design_refits(loss)
    refs = [_exact(design.design, design.labels, design.loss, w) for w in _part_weights(W[1:], loss)]
    _same_fits(values[1:], scales[1:], [r for r, _ in refs], [s for _, s in refs])
    sep = prepare_data(X, separable, "linear", None, None, spec)
    values, scales, _ = refits_for(sep).scored(W[2:])
    design = refits_for(sep)._design_refits(loss)
    refs = [_exact(design.design, design.labels, design.loss, w) for w in _part_weights(W[2:], loss)]
    _same_fits(values, scales, [r for r, _ in refs], [s for _, s in refs])


@pytest.mark.parametrize("learning", [False, True])
def test_a_part_the_batched_solve_does_not_certify_takes_the_one_part_path(learning, monkeypatch):
    """With the batched solve certifying nothing (forced), every part takes the one-part path and gets exactly its
    values and log."""
    X, y = _data("continuous")
    W = _parts(len(y), "bootstrap", B=4)
    data = prepare_data(X, y, "zpca:2" if learning else "linear", None, None, "hinge_ridge:0.05")
    expected, expected_scales, expected_log = _today(data, W, monkeypatch)
    original = cudbound.refit.hinge_parts

    def nothing(*args, **kwargs):
        gamma, certified = original(*args, **kwargs)
        return gamma, np.zeros_like(certified)
    monkeypatch.setattr(cudbound.refit, "hinge_parts", nothing)
    sent = count_rows(monkeypatch, DesignRefits, "_generic")
    values, scales, log = refits_for(data).scored(W)
    assert sum(sent) == len(W) and log.as_details() == expected_log.as_details()
    np.testing.assert_array_equal(values, expected)
    np.testing.assert_array_equal(scales, expected_scales)


BASELINES = ["bs1", "bs2", "kohavi", "yang", "martin", "langford", "wald_cv", "corrected_t", "conservative_z",
             "nested_cv", "bccv", "e632_delta"]
FEW = {"n_boot": 8, "n_resamples": 4, "n_inner": 3, "repeats": 2, "n_splits": 4, "n_halves": 2, "cv": 4}
"""Every baseline that refits on parts, with few resamples (each still refits on bootstrap samples or folds)."""

PROCEDURES = {"LinearSVC": lambda: LinearSVC(loss="hinge", C=0.5), "hinge": lambda: {"loss": "hinge"},
              "hinge_ridge": lambda: {"loss": "hinge_ridge:0.05"},
              "zpca hinge_ridge all": lambda: {"basis": "zpca:2", "loss": "hinge_ridge:0.05:all"}}


def _intervals(X, y, procedure, seed, monkeypatch, one_part):
    """(results, parts sent to the one-part path) of every baseline, with the batched hinge refits or (``one_part``)
    without them."""
    with monkeypatch.context() as m:
        if one_part:
            m.setattr(cudbound.refit, "_hinge_base", lambda loss: None)
        sent = count_rows(m, DesignRefits, "_generic")
        learned = count_rows(m, ProcedureRefits, "_one_part")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cudbound.refit.DegenerateResampleWarning)
            results = cudbound.intervals(X, y, methods=BASELINES, procedure=procedure, rng=seed, **FEW)
    return results, sum(sent) + sum(learned)


@pytest.mark.parametrize("procedure", [p if p in ("LinearSVC", "hinge") else pytest.param(p, marks=pytest.mark.slow)
                                       for p in sorted(PROCEDURES)])   # the ridge forms' one-part path is slow: CI's slow run
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)])
def test_every_baseline_gives_the_one_part_paths_interval(procedure, seed, monkeypatch):
    """bs1, bs2, the .632 centres, the cross-validations: with the batched hinge refits, the same estimate and
    interval as with every part refitted by the one-part path (to 1e-9: the error counts agree), the same counts
    of refits and of degenerate ones (one-class parts among them: a minority of 4 in 20), and no part left to the
    one-part path."""
    rng = np.random.default_rng(seed)
    n = 20
    y = np.where(np.arange(n) < 4, 1, -1)
    X = rng.normal(size=(n, 3)) + 0.8 * (y[:, None] > 0)
    fast, fast_sent = _intervals(X, y, PROCEDURES[procedure](), seed, monkeypatch, False)
    slow, slow_sent = _intervals(X, y, PROCEDURES[procedure](), seed, monkeypatch, True)
    assert fast_sent == 0 and slow_sent > 0
    assert [r.method for r in fast] == [r.method for r in slow] == BASELINES
    for a, b in zip(fast, slow):
        np.testing.assert_allclose([a.estimate, a.low, a.high], [b.estimate, b.low, b.high], rtol=0, atol=1e-9,
                                   err_msg=a.method)
        counts = {k: v for k, v in a.details.items() if k.endswith("refits")}
        assert counts and counts == {k: v for k, v in b.details.items() if k.endswith("refits")}, a.method
    assert sum(r.details.get("one_class_refits", 0) for r in fast) > 0


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("data_kind", ["continuous", "discrete"])
def test_the_fit_on_all_points_is_cuds_fit(spec, data_kind):
    """The refits' fit on all n points (the centre of the baselines) is CUD's, cudbound.fit.fit_classifier's:
    the same coefficients within 1e-9 and the same predictions."""
    X, y = _data(data_kind)
    data = prepare_data(X, y, "linear", None, None, spec)
    coef, preds = refits_for(data).full_fit()
    fitted = cudbound.fit.fit_classifier(data.design, data.labels, cudbound.losses.get_loss(spec))
    np.testing.assert_allclose(coef, fitted.gamma, rtol=0, atol=1e-9 * max(1.0, np.abs(fitted.gamma).max()))
    np.testing.assert_array_equal(preds, cudbound.fit.predict_signs(fitted.rep.Z, fitted.gamma, fitted.rep.Z_terms))
