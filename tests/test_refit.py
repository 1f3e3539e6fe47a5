"""The one fit-and-score (cudbound.refit): every refit on part of the data refits the whole
procedure, basis included, and sees no held-out row; a smooth loss's parts solved together give the
one-part path's fits (and an independent scipy fit's)."""
import copy
import warnings

import numpy as np
import pytest
import scipy.optimize
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.decomposition import PCA
from sklearn.linear_model import LinearRegression, LogisticRegression, RidgeClassifier
from sklearn.model_selection import cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import cudbound
from cudbound.auc import auc_interval, cv_auc, lpo_auc
from cudbound.baselines import cross_validation, e632, leave_one_out
from cudbound.basis import Basis, LinearBasis, PCABasis
from cudbound.compare import Procedure, compare
from cudbound.design import prepare_data, reparametrise
from cudbound.fit import fit_classifier
from cudbound.losses import SquaredLoss
from cudbound.refit import (DegenerateResampleWarning, DesignRefits, ProcedureRefits, RefitLog, _part_weights,
                            as_mapped_procedure, as_refits, fit_and_score, refits_for)
from call_counts import count_rows
from reference_losses import RefLoss

N = 24


def _data(n=N, d=3, seed=0):
    """Column 0 is the row's id (never a feature): it lets a basis record the rows it is fitted on."""
    rng = np.random.default_rng(seed)
    F = rng.normal(size=(n, d))
    y = np.where(F[:, 0] + 0.8 * rng.normal(size=n) > 0, 1, -1)
    return np.column_stack([np.arange(n, dtype=float), F]), y


class RecordingBasis(Basis):
    """Standardised features (column 0, the row id, left out); every fit records its rows' ids."""

    fits: list

    def __init__(self):
        self.fits = []

    def fit(self, X):
        X = np.asarray(X, dtype=float)
        self.fits.append(np.sort(X[:, 0]).astype(int))
        self.n_features_in_ = X.shape[1]
        self.mean_, self.scale_ = X[:, 1:].mean(axis=0), X[:, 1:].std(axis=0)
        return self

    def _columns(self, X):
        return (X[:, 1:] - self.mean_) / self.scale_


class RecordingScaler(TransformerMixin, BaseEstimator):
    """A pipeline step that records (in a list shared by its clones) the row ids of every fit."""

    log: list = []

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=float)
        RecordingScaler.log.append(np.sort(X[:, 0]).astype(int))
        self.mean_, self.scale_ = X[:, 1:].mean(axis=0), X[:, 1:].std(axis=0)
        return self

    def transform(self, X):
        X = np.asarray(X, dtype=float)
        return (X[:, 1:] - self.mean_) / self.scale_


class SharedRecordingBasis(RecordingBasis):
    """RecordingBasis whose copies (one per refit) record into one list."""

    def __deepcopy__(self, memo):
        other = SharedRecordingBasis.__new__(SharedRecordingBasis)
        other.fits = self.fits
        return other


# ------------------------------------------------------------------------------ interval methods

FAST = {"cud": {"n_resamples": 20}, "bs1": {"n_resamples": 6, "n_inner": 3}, "bs2": {"n_resamples": 6, "n_inner": 3},
        "nested_cv": {"repeats": 2, "bias_repeats": 1}, "bccv": {"n_resamples": 8}}
"""Small settings; each method's expected number of basis fits below is its definition at them."""

# basis fits of each method beyond the one on all n rows, at the settings of FAST and the defaults
EXPECTED_PART_FITS = {
    "cud": 0,                                   # the class is the span of the basis fitted on D
    "bs1": 5 + 6 * (1 + 3),                     # the .632 centre (n_boot), then B outer fits with J inner each
    "bs2": 5 + 6 * (1 + 3),
    "kohavi": 5, "martin": 5, "langford": 5,    # the .632 centre's bootstrap refits
    "yang": 5 + 2 * 10,                         # the centre, and 2-fold CV repeated 10 times
    "wald_cv": 10,                              # 10 folds
    "corrected_t": 15,                          # 15 random splits
    "conservative_z": 15 + 10 * 2 * 15,         # J = 15 splits, then M = 10 halvings with J splits in each half
    "e632_delta": 200,                          # B = 200 bootstrap refits
}


def _is_part(fit, n):
    """A part's rows are not the n rows of the data: a row is missing (held out), some repeated or both."""
    return np.unique(fit).size < n


@pytest.mark.parametrize("method", cudbound.method_names())
def test_every_interval_method_refits_the_basis_on_each_part_and_on_it_only(method):
    X, y = _data()
    basis = SharedRecordingBasis()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        options = dict(FAST.get(method, {}))
        if "n_boot" in cudbound.registry.get_method(method).options():
            options["n_boot"] = 5
        cudbound.intervals(X, y, methods=[method], procedure=Procedure(basis=basis), rng=0,
                           **{f"{method}_options": options})
    fits = basis.fits
    assert np.array_equal(fits[0], np.arange(N))           # the fit on all n rows comes first
    parts = fits[1:]
    assert all(_is_part(f, N) for f in parts), method
    if method in EXPECTED_PART_FITS:
        assert len(parts) == EXPECTED_PART_FITS[method], (method, len(parts))
    else:   # nested CV and BCCV: counted from their own definitions in the tests below
        assert len(parts) > 0


def test_a_cross_validated_method_fits_the_basis_on_the_complement_of_each_fold():
    X, y = _data()
    basis = SharedRecordingBasis()
    folds = np.arange(N) % 4
    cross_validation(prepare_data(X, y, basis, None, None, "squared"), None, folds=folds)
    parts = basis.fits[1:]
    assert len(parts) == 4
    for f, part in enumerate(parts):
        assert np.array_equal(part, np.flatnonzero(folds != f))


def test_a_bootstrap_method_fits_the_basis_on_each_resample_with_its_repeats():
    X, y = _data()
    basis = SharedRecordingBasis()
    counts = np.random.default_rng(3).multinomial(N, np.full(N, 1 / N), size=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateResampleWarning)
        e632(prepare_data(X, y, basis, None, None, "squared"), None, counts=counts)
    parts = basis.fits[1:]
    assert len(parts) == 7
    for c, part in zip(counts, parts):
        assert np.array_equal(part, np.repeat(np.arange(N), c))


def test_leave_one_out_fits_the_basis_n_times_without_the_point():
    X, y = _data()
    basis = SharedRecordingBasis()
    leave_one_out(prepare_data(X, y, basis, None, None, "squared"), None)
    parts = basis.fits[1:]
    assert [np.setdiff1d(np.arange(N), p).tolist() for p in parts] == [[i] for i in range(N)]


# ------------------------------------------------------------------------------ comparisons and AUC

def test_every_comparison_refits_each_procedure_whole_on_its_training_sets():
    X, y = _data(n=40)
    basis = SharedRecordingBasis()
    RecordingScaler.log = []
    pipe = make_pipeline(RecordingScaler(), LogisticRegression())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # few repeats of the repeated-split methods: what is tested is which rows each fit sees
        # cud refits nothing: it fits each classifier once on all rows and reweights them (not asked here)
        refitting = [m for m in cudbound.compare.method_names() if m != "cud"]
        results = compare(Procedure(basis=basis), pipe, X, y, methods=refitting, rng=0,
                          nested_cv_options={"repeats": 2, "bias_repeats": 1}, corrected_t_options={"repeats": 2})
    assert len(results) == len(refitting)
    for fits in (basis.fits, RecordingScaler.log):
        assert len(fits) > 0
        assert all(f.size < 40 and np.unique(f).size == f.size for f in fits[1:] if f.size != 40)
    # the procedure's fit on all rows (the front door) is its only fit that sees every row
    assert sum(f.size == 40 for f in basis.fits) == 1 and all(f.size < 40 for f in RecordingScaler.log)


@pytest.mark.parametrize("run", [
    lambda est, X, y: cv_auc(est, X, y, cv=np.arange(X.shape[0]) % 5),
    lambda est, X, y: auc_interval(est, X, y, method="delong", cv=np.arange(X.shape[0]) % 5),
], ids=["cv_auc", "auc_interval"])
def test_the_auc_functions_refit_a_pipeline_without_each_fold(run):
    X, y = _data(n=30)
    RecordingScaler.log = []
    run(make_pipeline(RecordingScaler(), LogisticRegression()), X, y)
    folds = np.arange(30) % 5
    assert [f.tolist() for f in RecordingScaler.log] == [np.flatnonzero(folds != k).tolist() for k in range(5)]


def test_lpo_auc_refits_a_procedure_whose_basis_learns_without_each_pair():
    X, y = _data(n=10)
    basis = SharedRecordingBasis()
    res = lpo_auc(Procedure(basis=basis), X, y)
    n_pos = int(np.sum(y > 0))
    assert res.n_pairs == n_pos * (10 - n_pos) == len(basis.fits) - 1
    for fit in basis.fits[1:]:
        assert fit.size == 8


@pytest.mark.parametrize("spec, columns, plain", [("cols:1-2", [1, 2], "linear"),
                                                  ("poly:2(cols:2-3)", [2, 3], "poly:2")])
def test_a_column_selection_is_a_fixed_design_refitted_in_batches(spec, columns, plain, monkeypatch):
    """``cols:I-J`` (alone or inside a polynomial) learns nothing: its refits take the batched path
    of a fixed design, and score as the plain basis on the selected columns does."""
    X, y = _data(n=20)
    weights = np.random.default_rng(4).multinomial(20, np.full(20, 1 / 20), size=6)
    expected = fit_and_score(Procedure(basis=plain), X[:, columns], y, weights)
    assert not as_refits(Procedure(basis=spec), X, y).learns

    def per_part(*args):
        raise AssertionError("a fixed design must not be refitted part by part")
    monkeypatch.setattr(ProcedureRefits, "_one_part", per_part)
    np.testing.assert_allclose(fit_and_score(Procedure(basis=spec), X, y, weights), expected, atol=1e-9)


# ------------------------------------------------------------------------------ the leak, against scikit-learn

def _noisy(n=30, d=12, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.linspace(1, 40, d) + np.linspace(-100, 100, d)
    y = np.where(X[:, 0] / 1 + 0.5 * rng.normal(size=n) > -100, 1, -1)
    return X, y


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_out_of_fold_scores_of_zpca_equal_cross_val_predict_of_the_same_pipeline(seed):
    """zpca:3 + least squares is StandardScaler -> PCA(3) -> least squares on the +-1 labels."""
    X, y = _noisy(seed=seed)
    folds = np.arange(X.shape[0]) % 5
    tests = folds[None, :] == np.arange(5)[:, None]
    values = fit_and_score(Procedure(basis="zpca:3"), X, y, (~tests).astype(int))
    ours = values[folds, np.arange(X.shape[0])]
    pipe = make_pipeline(StandardScaler(), PCA(3, svd_solver="full"), LinearRegression())
    theirs = cross_val_predict(pipe, X, y.astype(float), cv=[(np.flatnonzero(~t), np.flatnonzero(t)) for t in tests])
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9)
    # and the CV error of the package's estimator is that of scikit-learn's predictions
    data = prepare_data(X, y, "zpca:3", None, None, "squared")
    est = cross_validation(data, None, folds=folds).estimate
    assert est == np.mean(np.where(theirs >= 0, 1, -1) != y)
    # the basis fitted once on all rows (the leak: its design taken as fixed features) scores otherwise
    leaky = fit_and_score(Procedure(basis=LinearBasis(intercept=False)), data.design, y, (~tests).astype(int))
    assert not np.allclose(leaky[folds, np.arange(X.shape[0])], theirs, atol=1e-3)


def test_a_scikit_learn_estimator_refits_with_the_penalty_of_the_parts_size():
    """intervals(estimator=...) refits C's objective on each part's m rows, as its own fit would."""
    X, y = _noisy(n=40, d=3)
    est = make_pipeline(StandardScaler(), LogisticRegression(C=0.3))
    data = prepare_data(X, y, None, est, None, None)
    folds = np.arange(40) % 4
    tests = folds[None, :] == np.arange(4)[:, None]
    ours, _ = refits_for(data).decision((~tests).astype(float))
    for k in range(4):
        fitted = make_pipeline(StandardScaler(), LogisticRegression(C=0.3, tol=1e-12, max_iter=10_000)).fit(
            X[~tests[k]], y[~tests[k]])
        np.testing.assert_allclose(ours[k], fitted.decision_function(X), rtol=1e-5, atol=1e-5)


def test_bad_weights_are_one_clear_error():
    X, y = _data()
    with pytest.raises(ValueError, match="whole numbers"):
        fit_and_score(Procedure(), X, y, np.full(N, 0.5))
    with pytest.raises(ValueError, match="shape"):
        fit_and_score(Procedure(), X, y, np.ones((2, N + 1)))
    with pytest.raises(TypeError, match="Procedure"):
        fit_and_score(42, X, y, np.ones(N))


def test_a_procedure_for_the_interval_methods_is_read_from_every_form():
    est = make_pipeline(StandardScaler(), LogisticRegression(C=0.3))
    assert as_mapped_procedure(None) == Procedure() == Procedure(basis=None, loss=None, estimator=None)
    assert as_mapped_procedure({"basis": "zpca:3", "loss": "hinge"}) == Procedure(basis="zpca:3", loss="hinge")
    assert as_mapped_procedure(Procedure(loss="logistic")) == Procedure(loss="logistic")
    assert as_mapped_procedure(est) == Procedure(estimator=est)      # its exact basis and loss, not a clone
    with pytest.raises(ValueError, match="'basis', 'loss', 'estimator'; got \\['bases'\\]"):
        as_mapped_procedure({"bases": "poly:2"})
    with pytest.raises(TypeError, match="`procedure` must be .* got str"):
        as_mapped_procedure("poly:2")


@pytest.mark.parametrize("front_door", ["cud_interval", "intervals"])
@pytest.mark.parametrize("keywords, fragment", [
    ({"basis": "poly:2"}, "pass procedure=Procedure(basis='poly:2') (cudbound.Procedure, or a dict of its fields) "
                          "instead of basis=."),
    ({"loss": "hinge", "basis": "zpca:3"}, "pass procedure=Procedure(basis='zpca:3', loss='hinge') "),
    ({"estimator": LogisticRegression()}, "pass the scikit-learn classifier itself as `procedure`"),
])
def test_the_front_doors_refuse_the_models_fields_as_keywords(front_door, keywords, fragment):
    X, y = _data()
    with pytest.raises(TypeError, match=f"^{front_door}\\(\\) names the model by one argument: ") as caught:
        getattr(cudbound, front_door)(X, y, **keywords)
    assert fragment in str(caught.value)


def test_the_front_doors_read_the_procedure_in_every_form_alike():
    X, y = _noisy(n=30, d=2)
    kw = {"confidence_level": 0.8, "n_resamples": 10, "rng": 3}
    default = cudbound.cud_interval(X, y, **kw)
    for same in (Procedure(), {"basis": "linear", "loss": "squared"}, Procedure(basis="linear", loss="squared")):
        res = cudbound.cud_interval(X, y, same, **kw)
        assert res.confidence_interval == default.confidence_interval and res.details["loss"] == "squared"
    ridge = cudbound.cud_interval(X, y, procedure={"loss": "ridge:0.5"}, **kw)
    assert ridge.details["loss"] == "ridge:0.5"
    a = cudbound.intervals(X, y, ["kohavi", "wald_cv"], procedure={"basis": "zpca:1", "loss": "ridge:5"}, rng=1)
    b = cudbound.intervals(X, y, ["kohavi", "wald_cv"], procedure=Procedure(basis="zpca:1", loss="ridge:5"), rng=1)
    squared = cudbound.intervals(X, y, ["kohavi", "wald_cv"], procedure={"basis": "zpca:1"}, rng=1)
    assert [r.confidence_interval for r in a] == [r.confidence_interval for r in b]
    assert all(r.details["basis"].startswith("PCABasis(n_components=1") for r in a)
    assert all(r.confidence_interval != s.confidence_interval for r, s in zip(a, squared))   # the loss reached both


# ------------------------------------------------------------------ batched refits of a learning basis
def _reference_values(spec, X, y, w):
    """Least squares on part w with the basis refitted on the part's rows, one part at a time, by
    NumPy's lstsq: an independent computation of what ProcedureRefits.scored returns."""
    idx = np.repeat(np.arange(len(y)), w.astype(int))
    if np.unique(y[idx]).size == 1:
        return np.full(len(y), float(y[idx][0]))
    design = cudbound.basis.make_basis(spec).fit(X[idx]).transform(X)
    beta = np.linalg.lstsq(design[idx], y[idx].astype(float), rcond=None)[0]
    return design @ beta


def _parts(rng, n, kind, B=60):
    if kind == "bootstrap":
        return rng.multinomial(n, np.ones(n) / n, size=B).astype(float)
    return (rng.random((B, n)) < 0.75).astype(float)


@pytest.mark.parametrize("spec, d", [("zpca:3", 6), ("pca:2", 4), ("poly:2(zpca:2)", 5), ("zpca:3", 40),
                                     ("poly:2(pca:3)", 3)])
@pytest.mark.parametrize("kind", ["bootstrap", "folds"])
def test_batched_refits_of_a_learning_basis_equal_one_refit_per_part(spec, d, kind):
    """The batched path (PCA from the stacked Gram matrices, stacked least squares) gives every
    part's decision values as a basis refitted alone on the part and least squares give them, with
    features in very different units and centres (d = 40 > n: the PCA from the n x n Gram matrix)."""
    rng = np.random.default_rng(d)
    n = 30
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) * rng.uniform(0.01, 100, size=d) + rng.normal(0, 50, d)
    y = np.where(X[:, 0] / X[:, 0].std() + rng.normal(size=n) > 0, 1, -1)
    W = _parts(rng, n, kind)
    values, log = refits_for(prepare_data(X, y, spec, None, None)).decision(W)
    reference = np.array([_reference_values(spec, X, y, w) for w in W])
    assert log.refits == len(W) and log.failed == 0
    np.testing.assert_allclose(values, reference, rtol=0, atol=1e-9 * np.abs(reference).max())


def test_batched_refits_take_the_one_part_path_where_the_part_is_degenerate():
    """One-class parts and a part of two distinct rows (a zero eigenvalue inside the leading k, a
    singular normal matrix) give what one refit per part gives, degenerate refits counted alike."""
    rng = np.random.default_rng(5)
    n = 16
    F = rng.normal(size=(n, 2))
    X = np.column_stack([F, F[:, ::-1]])
    y = np.where(F[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    W = rng.multinomial(n, np.ones(n) / n, size=40).astype(float)
    W[0] = np.where(y > 0, 1.0, 0.0) * 2                   # one class only
    W[1] = 0.0
    W[1, [0, int(np.flatnonzero(y != y[0])[0])]] = 8.0      # two distinct rows, both classes: singular
    refits = refits_for(prepare_data(X, y, "zpca:2", None, None))
    values, log = refits.decision(W)
    one_by_one = [refits._one_part(w) for w in W]
    np.testing.assert_allclose(values, np.array([v for v, _, _ in one_by_one]), atol=1e-9)
    expected = RefitLog()
    for _, _, lg in one_by_one:
        expected.add(lg)
    assert (log.one_class, log.failed, log.singular) == (expected.one_class, expected.failed, expected.singular)
    assert log.one_class >= 1 and log.failed + log.singular >= 1


def test_batched_refits_give_the_predictions_of_the_one_part_path_under_the_tie_rule():
    """Predicted labels (sign with sign(0) = +1 by the tie rule) of the batched path equal the one-part
    path's on many parts, including points exactly on a refit's boundary (duplicated rows, symmetric data)."""
    rng = np.random.default_rng(11)
    n = 24
    X = np.repeat(rng.normal(size=(n // 2, 3)), 2, axis=0)
    y = np.tile([1, -1], n // 2)                           # each duplicated row carries both labels
    W = rng.multinomial(n, np.ones(n) / n, size=80).astype(float)
    refits = refits_for(prepare_data(X, y, "zpca:2", None, None))
    preds, _ = refits.predict(W)
    ref = np.array([cudbound.ties.decision_signs(*refits._one_part(w)[:2]) for w in W])
    np.testing.assert_array_equal(preds, ref)


@pytest.mark.parametrize("spec,basis", [("squared", "linear"), ("ridge:0.1", "linear"), ("squared", "zpca:1")])
def test_parts_whose_labels_balance_give_the_zero_classifier_in_any_row_order(spec, basis):
    """One feature with three values (as Three Points) and parts whose labels balance at each value: the
    least-squares gradient is 0 in exact arithmetic, so each refit, and the fit on all the rows, is the zero
    classifier, which predicts +1 everywhere (sign(0) = +1), whatever the order of the rows. Before 2026-12-04
    the gradient's rounding (1e-17) decided the fit and so its signs, which changed with the order of the rows
    and with the BLAS kernel (the second study's Three Points rows moved between machines). A learning basis
    (zpca) refits through the compiled batched path (``optim.squared_parts``), a fixed one through the stacked
    normal equations."""
    x = np.repeat([0.0, 1.0, 3.0], [8, 6, 4])
    y = np.tile([1, -1], 9)                      # rows 2k and 2k + 1: the same x, labels +1 and -1
    rng = np.random.default_rng(5)
    pairs = rng.integers(0, 3, size=(40, 9))
    pairs[pairs.sum(axis=1) == 0, 0] = 1
    W = np.repeat(pairs, 2, axis=1).astype(float)  # each pair's two rows weighted alike: balanced labels
    loss = cudbound.losses.get_loss(spec)
    for _ in range(8):
        perm = rng.permutation(len(y))
        data = prepare_data(x[perm, None], y[perm], basis, None, None)
        preds, _ = refits_for(data, loss=loss).predict(W[:, perm])
        assert (preds == 1.0).all()
        beta = cudbound.fit.fit_coefficients(data.design, data.labels, loss)
        assert (beta == 0.0).all()


# ------------------------------------------------------------------------------ smooth losses, batched

SMOOTH_SPECS = ["logistic", "logistic_ridge:0.05", "logistic_ridge:0.05:all", "exponential", "exponential_ridge:0.02"]


def _smooth_data(n=30, seed=4, noise=1.5):
    """Three features in units a million apart (spreads 1e-3, 1 and 1e3), off centre (2e-3, 0, -2e3)."""
    rng = np.random.default_rng(seed)
    F = rng.normal(size=(n, 3))
    X = F * [1e-3, 1.0, 1e3] + [2e-3, 0.0, -2e3]
    y = np.where(F[:, 0] - F[:, 1] + noise * rng.normal(size=n) > 0, 1, -1)
    return rng, X, y


def _scipy_decision(X, y, w, spec):
    """Decision values at every row of the linear classifier minimising the part's mean loss plus lam |beta|^2
    (intercept spared unless ':all'), by scipy's trust-exact on standardised features and Newton steps to
    rounding: no code of cudbound's (the losses of tests/_support/reference_losses.py)."""
    base, _, rest = spec.partition("_ridge:")
    lam, _, every = rest.partition(":")
    lam = float(lam) if lam else 0.0
    mu, sd = X.mean(axis=0), X.std(axis=0)
    A = np.column_stack([np.ones(len(y)), (X - mu) / sd])
    L = np.zeros((A.shape[1], A.shape[1]))            # beta (user coefficients) = L c
    L[0, 0], L[0, 1:], L[1:, 1:] = 1.0, -mu / sd, np.diag(1.0 / sd)
    J = np.diag([1.0 if every == "all" else 0.0] + [1.0] * X.shape[1])
    P = lam * L.T @ J @ L
    yf, m, ref = y.astype(float), w.sum(), RefLoss(base, "smooth")

    def f(c):
        return w @ ref.l(yf, A @ c) / m + c @ P @ c

    def grad(c):
        return A.T @ (w * ref.d(yf, A @ c)[0]) / m + 2 * P @ c

    def hess(c):
        return A.T @ (A * (w * ref.d(yf, A @ c)[1])[:, None]) / m + 2 * P
    c = scipy.optimize.minimize(f, np.zeros(A.shape[1]), jac=grad, hess=hess, method="trust-exact",
                                options={"gtol": 1e-13, "maxiter": 5000}).x
    for _ in range(3):
        c = c - np.linalg.solve(hess(c), grad(c))
    return A @ c


def _one_part_fits(data, loss, W):
    """The one-part path on a fixed design: cudbound.fit.fit_coefficients part by part (DesignRefits._generic)."""
    log = RefitLog()
    refits = DesignRefits(data.Z, data.labels, data.rep.loss(loss))
    values, _ = refits._generic(_part_weights(W, loss), log)
    return values, log


@pytest.mark.parametrize("spec", SMOOTH_SPECS)
@pytest.mark.parametrize("kind", ["bootstrap", "folds"])
def test_batched_smooth_refits_equal_scipy_and_the_one_part_path(spec, kind, monkeypatch):
    """Logistic and exponential losses, unpenalised and ridge (intercept spared or not), features in very
    different units: every part's decision values within 1e-9 of an independent scipy fit (the batched Newton
    is accurate to rounding), within 1e-6 of the one-part path (cvxpy polished by Newton: accurate to ~1e-8
    here), the same parts failed with the same fallback, and the same predictions under the tie rule except
    where the reference is within 1e-6 of 0. Only the failed parts reach the one-part path."""
    rng, X, y = _smooth_data()
    W = _parts(rng, len(y), kind, B=10)
    data = prepare_data(X, y, "linear", None, None, spec)
    loss = cudbound.losses.get_loss(spec)
    refits = refits_for(data)
    assert refits._design_refits(loss).kind == "smooth"
    sent = count_rows(monkeypatch, DesignRefits, "_generic")
    values, log = refits.decision(W)
    assert sum(sent) == log.failed
    preds, _ = refits.predict(W)
    one_part, one_log = _one_part_fits(data, loss, W)
    assert (log.refits, log.failed, log.one_class) == (len(W), one_log.failed, 0)
    for b, w in enumerate(W):
        scale = np.abs(one_part[b]).max()
        if np.all(np.abs(one_part[b]) == 1.0) and np.unique(one_part[b]).size == 1:   # failed: majority class
            np.testing.assert_array_equal(values[b], one_part[b])
            continue
        ref = _scipy_decision(X, data.labels, w, spec)
        np.testing.assert_allclose(values[b], ref, rtol=0, atol=1e-9 * scale)
        np.testing.assert_allclose(one_part[b], ref, rtol=0, atol=1e-6 * scale)
        clear = np.abs(ref) > 1e-6 * scale
        np.testing.assert_array_equal(preds[b][clear], np.where(ref[clear] >= 0, 1.0, -1.0))
    assert log.failed < len(W)


@pytest.mark.parametrize("spec", ["logistic", "exponential"])
def test_separable_parts_are_declared_as_by_the_one_part_path(spec):
    """An unpenalised vanishing-margin loss on small data: the parts the fit's rule declares without a
    minimiser (separable) are the one-part path's, with the same fallback (the weighted majority class), and
    the others are fitted alike."""
    rng = np.random.default_rng(0)
    x = np.sort(rng.normal(size=12))
    y = np.where(x > 0, 1, -1)
    y[[4, 7]] *= -1                                      # two points on the wrong side: the data are not separable
    X = x[:, None] * 1e3 + 50.0
    W = rng.multinomial(12, np.ones(12) / 12, size=40).astype(float)
    data = prepare_data(X, y, "linear", None, None, spec)
    values, log = refits_for(data).decision(W)
    one_part, one_log = _one_part_fits(data, cudbound.losses.get_loss(spec), W)
    assert 0 < log.failed < len(W) - log.one_class and log.failed == one_log.failed
    failed = np.all(np.abs(one_part) == 1.0, axis=1) & (np.ptp(one_part, axis=1) == 0)
    np.testing.assert_array_equal(values[failed], one_part[failed])
    np.testing.assert_allclose(values[~failed], one_part[~failed], rtol=0, atol=1e-6 * np.abs(one_part).max())


@pytest.mark.parametrize("spec", ["logistic", "exponential"])
def test_a_part_whose_rows_do_not_span_the_basis_takes_the_one_part_path(spec, monkeypatch):
    """Unpenalised, on a part of two distinct rows each with both labels (no separating direction, a flat
    direction: no unique minimiser): the batched path leaves it to the one-part path and returns its values."""
    _, X, y = _smooth_data()
    W = np.zeros((2, len(y)))
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    X[neg[0]], X[neg[1]] = X[pos[0]], X[pos[1]]               # rows of both labels at two points
    W[0, [pos[0], pos[1], neg[0], neg[1]]] = [3.0, 1.0, 1.0, 2.0]
    W[1] = 1.0
    data = prepare_data(X, y, "linear", None, None, spec)
    sent = count_rows(monkeypatch, DesignRefits, "_generic")
    values, _ = refits_for(data).decision(W)
    assert sent == [1]
    one_part, _ = _one_part_fits(data, cudbound.losses.get_loss(spec), W[:1])
    np.testing.assert_array_equal(values[0], one_part[0])


@pytest.mark.parametrize("lp_separates", [False, True])
def test_a_part_the_multipliers_do_not_certify_is_decided_by_the_fits_linear_program(lp_separates, monkeypatch):
    """Where the certificate from the multipliers fails (forced here), the fit's own rule decides: the part keeps
    its Newton fit when the linear program finds no separated point, and goes to the one-part path (which asks
    the program again and declares the part) when it finds one."""
    rng, X, y = _smooth_data()
    W = _parts(rng, len(y), "bootstrap", B=6)
    data = prepare_data(X, y, "linear", None, None, "logistic")
    expected, _ = refits_for(data).decision(W)
    asked = []

    def separated_points(design, labels, loss, w):
        asked.append(1)
        return np.arange(len(w)) == int(np.argmax(w)) if lp_separates else np.zeros(len(w), dtype=bool)
    monkeypatch.setattr(cudbound.refit, "separation_excluded", lambda rows, W, lam: np.zeros(len(W), dtype=bool))
    monkeypatch.setattr(cudbound.refit, "separated_points", separated_points)
    sent = count_rows(monkeypatch, DesignRefits, "_generic")
    values, log = refits_for(data).decision(W)
    assert len(asked) == len(W) + 1                       # every part, and the fit on all n points (the warm start)
    assert sum(sent) == (len(W) if lp_separates else 0)
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-6 * np.abs(expected).max())


def test_one_class_parts_of_a_smooth_loss_are_the_constant_classifier():
    _, X, y = _smooth_data()
    W = np.vstack([np.where(y > 0, 1.0, 0.0), np.where(y < 0, 2.0, 0.0), np.ones(len(y))])
    values, log = refits_for(prepare_data(X, y, "linear", None, None, "logistic_ridge:0.1")).decision(W)
    assert values[0].tolist() == [1.0] * len(y) and values[1].tolist() == [-1.0] * len(y)
    assert (log.one_class, log.failed) == (2, 0) and np.ptp(values[2]) > 0


class PseudoHuberMarginLoss(cudbound.losses.Loss):
    """l(y, t) = sqrt(1 + (1 - y t)^2) + (1 - y t): smooth, convex, tends to 0 as y t grows (a user loss,
    not declared strictly convex: the fit checks that its Hessian is positive definite)."""

    name = "pseudo_huber_margin"

    def pointwise(self, y, t):
        u = 1.0 - y * t
        return np.sqrt(1.0 + u * u) + u

    def cvxpy_pointwise(self, y, t):
        import cvxpy as cp
        u = 1.0 - cp.multiply(y, t)
        return cp.norm(cp.vstack([np.ones(len(y)), u]), 2, axis=0) + u

    def derivatives(self, y, t):
        u = 1.0 - y * t
        root = np.sqrt(1.0 + u * u)
        return -y * (u / root + 1.0), 1.0 / root ** 3


def test_a_user_loss_with_derivatives_is_batched_and_equals_scipy():
    """A user's margin loss given by pointwise, cvxpy_pointwise and derivatives: batched, and every part's
    decision values as scipy's fit of the same objective (and the one-part path's)."""
    rng, X, y = _smooth_data(seed=7)
    W = _parts(rng, len(y), "bootstrap", B=8)
    loss = PseudoHuberMarginLoss()
    data = prepare_data(X, y, "linear", None, None, loss)
    refits = refits_for(data)
    assert refits._design_refits(loss).kind == "smooth"
    values, log = refits.decision(W)
    one_part, _ = _one_part_fits(data, loss, W)
    Phi, yf = data.design, data.labels
    for b, w in enumerate(W):
        def f(beta, w=w):
            return w @ loss.pointwise(yf, Phi @ beta)
        ref = scipy.optimize.minimize(f, np.zeros(Phi.shape[1]), method="BFGS",
                                      jac=lambda beta, w=w: Phi.T @ (w * loss.derivatives(yf, Phi @ beta)[0]),
                                      options={"gtol": 1e-12, "maxiter": 10000}).x
        scale = np.abs(values[b]).max()
        np.testing.assert_allclose(values[b], Phi @ ref, rtol=0, atol=1e-6 * scale)
        np.testing.assert_allclose(values[b], one_part[b], rtol=0, atol=1e-6 * scale)
    assert log.failed == 0


def _old_one_part(data, loss_for, w):
    """A refitted basis's one-part path as it was: the basis fitted on the part's rows, the design
    reparametrised, cudbound.fit.fit_coefficients on the part (DesignRefits._generic)."""
    y = data.labels
    idx = np.repeat(np.arange(len(y)), w.astype(int))
    if np.unique(y[idx]).size == 1:
        return np.full(len(y), float(y[idx][0])), RefitLog(refits=1, one_class=1)
    rep = reparametrise(copy.deepcopy(data.basis).fit(data.X[idx]).transform(data.X))
    loss = loss_for(int(w.sum()))
    log = RefitLog(refits=1)
    values, _ = DesignRefits(rep.Z, y, rep.loss(loss))._generic(_part_weights(w[None], loss), log)
    return values[0], log


@pytest.mark.parametrize("procedure", ["zpca:2 logistic_ridge:0.05", "pca:2 exponential", "zpca:3 logistic",
                                       "StandardScaler LogisticRegression(C=0.5)", "LogisticRegression()"])
@pytest.mark.parametrize("kind", ["bootstrap", "folds"])
def test_batched_smooth_refits_of_a_refitted_basis_equal_the_one_part_path(procedure, kind, monkeypatch):
    """A basis refitted per part (principal components, a pipeline's scaler, a scikit-learn classifier's own
    basis, whose penalty follows the part's size): the batched path gives the old one-part path's decision
    values within 1e-6 (the one-part path's accuracy), its failed parts and fallbacks, and, for the
    classifiers, scikit-learn's own fit within 1e-6; a penalised loss sends no part to the one-part path."""
    rng, X, y = _smooth_data(n=24, seed=11, noise=1.0)
    W = _parts(rng, len(y), kind, B=8)
    head, _, tail = procedure.partition(" ")
    if "LogisticRegression" in procedure:
        C = 0.5 if "C=0.5" in procedure else 1.0
        est = make_pipeline(StandardScaler(), LogisticRegression(C=C)) if head == "StandardScaler" else \
            LogisticRegression()
        data = prepare_data(X, y, None, est, None, None)
        loss_for = lambda m: cudbound.sklearn_bridge.from_estimator(est, m).loss  # noqa: E731
    else:
        data = prepare_data(X, y, head, None, None, tail)
        est, loss_for = None, lambda m: cudbound.losses.get_loss(tail)  # noqa: E731
    sent = count_rows(monkeypatch, ProcedureRefits, "_one_part")
    values, log = refits_for(data).decision(W)
    if "ridge" in procedure or "LogisticRegression" in procedure:   # a minimiser always: nothing falls back
        assert not sent
    old = [_old_one_part(data, loss_for, w) for w in W]
    expected = RefitLog()
    for _, lg in old:
        expected.add(lg)
    assert (log.refits, log.failed, log.one_class) == (expected.refits, expected.failed, expected.one_class)
    reference = np.array([v for v, _ in old])
    np.testing.assert_allclose(values, reference, rtol=0, atol=1e-6 * np.abs(reference).max())
    if est is not None:
        for b, w in enumerate(W):
            idx = np.repeat(np.arange(len(y)), w.astype(int))
            tight = clone(est).set_params(**{("logisticregression__" if head == "StandardScaler" else "") + k: v
                                             for k, v in {"tol": 1e-12, "max_iter": 100_000}.items()})
            theirs = tight.fit(X[idx], y[idx]).decision_function(X)
            np.testing.assert_allclose(values[b], theirs, rtol=0, atol=1e-6 * np.abs(theirs).max())


def test_smooth_refits_predict_as_the_one_part_path_off_exact_ties():
    """Symmetric data (x and -x with opposite labels, two rows at 0 with both labels) and symmetric parts: the
    logistic ridge fit's decision value at 0 is 0 in exact arithmetic. Both paths give it within 1e-12 of the
    scores' scale (its sign is rounding's: the tie rule sees no tie, its only term being the solver's residual
    intercept), and the same labels everywhere else."""
    x = np.array([-3.0, -2.0, -1.0, 0.0, 0.0, 1.0, 2.0, 3.0])
    y = np.array([-1, 1, -1, -1, 1, 1, -1, 1])
    X = np.column_stack([x * 1e3, x ** 3])
    W = np.array([[1, 1, 1, 1, 1, 1, 1, 1], [2, 1, 3, 1, 1, 3, 1, 2], [1, 0, 2, 4, 4, 2, 0, 1]], dtype=float)
    data = prepare_data(X, y, "linear", None, None, "logistic_ridge:0.1")
    refits = refits_for(data)
    values, _ = refits.decision(W)
    preds, _ = refits.predict(W)
    loss = cudbound.losses.get_loss("logistic_ridge:0.1")
    one_part, one_scale = DesignRefits(data.Z, data.labels, data.rep.loss(loss))._generic(_part_weights(W, loss),
                                                                                       RefitLog())
    tie = x == 0
    big = np.abs(values).max(axis=1, keepdims=True)
    assert np.all(np.abs(values[:, tie]) <= 1e-12 * big) and np.all(np.abs(one_part[:, tie]) <= 1e-12 * big)
    np.testing.assert_array_equal(preds[:, ~tie], cudbound.ties.decision_signs(one_part, one_scale)[:, ~tie])
    np.testing.assert_array_equal(preds[:, ~tie], np.where(one_part[:, ~tie] >= 0, 1.0, -1.0))


class _PartMinimum(Basis):
    """phi(x) = (1, x - min x): a basis that learns (each part's minimum) and whose entries stay exact on
    small integers, with a batched form (``batched``) or without one (each part then refitted alone)."""

    def __init__(self, batched: bool):
        self.batched = batched

    def fit(self, X):
        super().fit(X)
        self.min_ = np.min(np.asarray(X, dtype=float), axis=0)
        return self

    def _columns(self, X):
        return X - self.min_

    def refit_designs(self, X, weights):
        if not self.batched:
            return None
        low = np.array([np.min(X[w > 0], axis=0) for w in weights])
        cols = X[None, :, :] - low[:, None, :]
        ones = np.ones(cols.shape[:2] + (1,))
        return np.concatenate([ones, cols], axis=2), np.ones(len(weights), dtype=bool)


@pytest.mark.filterwarnings("ignore:invalid value encountered in divide:RuntimeWarning")   # PCA on a part of one row
@pytest.mark.parametrize("basis,shift", [("linear", 0.0), ("linear", 1e4), ("batched", 0.0), ("alone", 0.0),
                                         ("zpca", 0.0), ("zpca", 1e4), ("pca", 0.0), ("pca", 1e4),
                                         ("poly:1(zpca)", 0.0), ("poly:1(zpca)", 1e4), ("linear(zpca)", 1e4),
                                         ("pca(zpca)", 1e4), ("pipeline", 0.0), ("pipeline", 1e4)])
def test_least_squares_refits_sign_as_exact_arithmetic_in_any_row_order(basis, shift):
    """Least-squares refits on bootstrap samples and 0/1 training parts of small integer designs whose fit
    has a decision value exactly 0 at some row: every part's prediction at every row is that of rational
    arithmetic (sign(0) = +1), in any row order, and so are the full fit's signs, at the training rows and
    at the same rows given as new points (``FittedClassifier.predict``). The fixed basis refits through the
    stacked normal equations; a learning basis with exact entries (x less the part's minimum: the same column
    space, so the same exact fits) through the compiled batched path (``optim.squared_parts``) or one part at a
    time; principal components keeping every component (the same column space again), alone or inside another
    basis (their terms passed on), through the compiled kernels (``pca_parts``, ``squared_parts``), and as a
    scikit-learn pipeline (``StandardScaler``, ``PCA``, ``RidgeClassifier(alpha=0)``: least squares) one part
    at a time; the fixed basis and the components also on the features shifted by 1e4 (exact, the same exact
    fits; Z's entries then cancel more). A part whose labels are one class predicts it; a part whose normal
    equations are singular is left out (its least-norm rule has no exact analogue here). Before 2026-12-04
    about 0.5% of the parts were signed by rounding: a point at the mean of the data has z = 0 in orthonormal
    coordinates only up to rounding, and a score (x - mu)' v that is 0 exactly only up to the rounding of terms
    of size |x| + |mu| (``Basis.transform_terms``)."""
    from exact_least_squares import exact_least_squares, exact_signs, small_integer_problems

    rng = np.random.default_rng(21)
    checked = zeros = 0
    count = 20 if basis == "pipeline" else 40            # scikit-learn refits every part alone: slower
    for x, y in small_integer_problems(rng, count):
        n, q = x.shape
        Phi = np.column_stack([np.ones(n, dtype=int), x])
        W = np.vstack([rng.multinomial(n, np.full(n, 1.0 / n), size=15), rng.random((15, n)) < 0.7]).astype(float)
        full, _ = exact_signs(Phi, exact_least_squares(Phi, y, np.ones(n)))
        expected, known = np.empty(W.shape), np.zeros(W.shape[0], dtype=bool)
        for b, w in enumerate(W):
            labels = set(y[w > 0])
            if len(labels) == 1:
                expected[b], known[b] = labels.pop(), True
            elif (beta := exact_least_squares(Phi, y, w)) is not None:
                expected[b], zero = exact_signs(Phi, beta)
                known[b], zeros = True, zeros + zero
        spec = _PartMinimum(basis == "batched") if basis in ("batched", "alone") else basis.replace("pca", f"pca:{q}")
        estimator = make_pipeline(StandardScaler(), PCA(q), RidgeClassifier(alpha=0)) if basis == "pipeline" else None
        for _ in range(2):
            perm = rng.permutation(n)
            X = x[perm] + shift
            data = prepare_data(X, y[perm], None if estimator else spec, estimator, None)
            refits = refits_for(data, loss="squared")
            preds, _ = refits.predict(W[:, perm])
            np.testing.assert_array_equal(preds[known], expected[known][:, perm])
            np.testing.assert_array_equal(refits.full_fit()[1], full[perm])    # the fit every interval centres on
            fitted = fit_classifier(data.design, data.labels, SquaredLoss(), entry_terms=data.design_terms)
            np.testing.assert_array_equal(fitted.predict(data.basis.transform(X), data.basis.transform_terms(X)),
                                          full[perm])
            checked += int(known.sum())
    assert checked > 37 * count and zeros > 2.5 * count     # the exact zeros this test is about do occur


class _PCAAlone(PCABasis):
    """A principal-component basis without a batched form: its parts are refitted one by one."""

    def refit_designs(self, X, weights, terms=None):
        return None


@pytest.mark.parametrize("loss", ["squared", "logistic_ridge:0.05", "hinge_ridge:0.05"])
def test_principal_component_refits_tie_on_the_scale_of_the_scores_terms_on_every_path(loss):
    """Features far from their zero (shifted by 1e4): a score sum_j (x_j - mu_j) v_j cancels terms of about
    1e4, which the tie scale of every refit's decision values counts (``Basis.transform_terms``). The scales
    of the batched path (the compiled PCA designs, then the compiled least squares or the stacked Newton and
    hinge solvers) are those of a basis with no batched form (one design per part, then the same solvers, or
    one part at a time for least squares) and of each part refitted alone; leaving the terms out of any one
    path (before 2026-12-04, all of them) fails, as Phi's own terms are about 2e4 times smaller here."""
    rng, X, y = _smooth_data(n=24, seed=5)
    X = X[:, :2] + 1e4
    W = _parts(rng, len(y), "bootstrap", B=6)
    values, scale, _ = refits_for(prepare_data(X, y, "zpca:2", None, None, loss)).scored(W)
    alone = refits_for(prepare_data(X, y, _PCAAlone(2, standardize=True), None, None, loss))
    values_alone, scale_alone, _ = alone.scored(W)
    one = [alone._one_part(w) for w in W]
    np.testing.assert_allclose(values_alone, values, rtol=0, atol=1e-6 * np.abs(values).max())
    np.testing.assert_allclose(scale_alone, scale, rtol=1e-5)
    np.testing.assert_allclose(np.array([s for _, s, _ in one]), scale, rtol=1e-5)


@pytest.mark.parametrize("spec", ["logistic_ridge:0.05", "hinge_ridge:0.05"])
def test_a_learning_basis_refits_parts_whose_labels_balance_to_the_zero_classifier(spec):
    """A learning basis (x less the part's minimum) refitted on parts weighting alike points whose labels
    balance (sum_i y_i phi_i = 0): the smooth and hinge refits on stacked designs (``_stacked_iterative``)
    give the zero classifier, +1 everywhere (``fit.labels_balance``); before 2026-12-04, 59 of 60 such parts
    were the solvers' tolerance, signed by it."""
    from exact_least_squares import balanced_integer_problem

    for seed in range(10):
        x, y = balanced_integer_problem(seed, 1e4)
        preds, _ = refits_for(prepare_data(x, y, _PartMinimum(True), None, None), loss=spec).predict(
            np.array([[1.0] * 20, [2.0] * 20]))
        assert (preds == 1.0).all()
