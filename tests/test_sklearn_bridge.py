"""scikit-learn classifiers as an exact basis and loss (cudbound/sklearn_bridge.py, issue 16).

For every supported estimator, cudbound's beta-hat on the mapped basis and loss must equal the
estimator's own (intercept_, coef_), fitted with a tight tolerance, to 1e-6.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression, RidgeClassifier, SGDClassifier
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler
from sklearn.svm import SVC, LinearSVC

import cudbound
from cudbound import Procedure
from cudbound.fit import fit_classifier
from cudbound.sklearn_bridge import SUPPORTED_ESTIMATORS, EstimatorBasis, from_estimator


def data(seed=0, n=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 3.0, 0.5] + [0.0, 2.0, -1.0]
    y = np.where(X[:, 0] - 0.3 * X[:, 1] + rng.normal(size=n) > 0, 1, -1)
    return X, y


def theirs(estimator):
    """(intercept, coef) of a fitted estimator or pipeline, in cudbound's column order."""
    last = estimator[-1] if hasattr(estimator, "steps") else estimator
    return np.r_[np.ravel(last.intercept_), np.ravel(last.coef_)]


def ours(estimator, X, y):
    mapping = from_estimator(estimator, n_samples=len(y))
    design = mapping.basis.fit_transform(X)
    coef = fit_classifier(design, y.astype(float), mapping.loss).coef
    # columns the basis dropped (constant under the transformer) have coefficient 0 in scikit-learn's fit
    full = np.zeros(1 + len(mapping.basis.keep_))
    full[0] = coef[0]
    full[1:][mapping.basis.keep_] = coef[1:]
    return full, mapping


TIGHT = dict(tol=1e-10)
CASES = [
    ("LogisticRegression lbfgs C=0.7", LogisticRegression(C=0.7, max_iter=10_000, **TIGHT)),
    ("LogisticRegression lbfgs C=20", LogisticRegression(C=20.0, max_iter=10_000, **TIGHT)),
    ("LogisticRegression unpenalised", LogisticRegression(C=np.inf, max_iter=10_000, **TIGHT)),
    ("LogisticRegression newton-cg", LogisticRegression(C=0.3, solver="newton-cg", max_iter=10_000, **TIGHT)),
    ("LogisticRegression liblinear", LogisticRegression(C=0.7, solver="liblinear", max_iter=100_000, **TIGHT)),
    ("RidgeClassifier alpha=2", RidgeClassifier(alpha=2.0, **TIGHT)),
    ("RidgeClassifier alpha=0", RidgeClassifier(alpha=0.0, **TIGHT)),
    ("SVC linear C=0.7", SVC(kernel="linear", C=0.7, **TIGHT)),
    ("LinearSVC hinge C=0.7", LinearSVC(loss="hinge", C=0.7, max_iter=10**6, **TIGHT)),
    ("pipeline scaler + logistic", make_pipeline(StandardScaler(), LogisticRegression(C=0.5, max_iter=10_000,
                                                                                       **TIGHT))),
    ("pipeline poly + ridge", make_pipeline(StandardScaler(), PolynomialFeatures(2), RidgeClassifier(alpha=1.0))),
    ("pipeline PCA + SVC", make_pipeline(StandardScaler(), PCA(2), SVC(kernel="linear", C=1.0, **TIGHT))),
]


@pytest.mark.parametrize("label, estimator", CASES, ids=[c[0] for c in CASES])
def test_beta_hat_equals_the_estimators_own_coefficients(label, estimator):
    for seed in (0, 1):
        X, y = data(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator.fit(X, y)
        mine, _ = ours(estimator, X, y)
        np.testing.assert_allclose(mine, theirs(estimator), rtol=0, atol=1e-6, err_msg=f"{label}, seed {seed}")


@pytest.mark.parametrize("loss, reference", [
    ("log_loss", lambda alpha, n: LogisticRegression(C=1.0 / (alpha * n), max_iter=10_000, tol=1e-10)),
    ("hinge", lambda alpha, n: SVC(kernel="linear", C=1.0 / (alpha * n), tol=1e-10)),
])
def test_sgd_maps_to_the_exact_minimiser_of_its_objective(loss, reference):
    """SGD's objective (1/n) sum l + alpha |w|^2 / 2 is the objective of LogisticRegression / SVC
    with C = 1 / (alpha n): cudbound's fit equals theirs, and the stochastic iterate is not used."""
    X, y = data(2)
    alpha = 0.05
    sgd = SGDClassifier(loss=loss, alpha=alpha, max_iter=5, tol=None, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sgd.fit(X, y)
    mine, mapping = ours(sgd, X, y)
    exact = reference(alpha, len(y)).fit(X, y)
    np.testing.assert_allclose(mine, theirs(exact), rtol=0, atol=1e-6)
    assert "not the stochastic iterate" in mapping.objective
    assert np.max(np.abs(mine - theirs(sgd))) > 1e-3   # five epochs of SGD are not the minimiser


@pytest.mark.parametrize("estimator, message", [
    (LogisticRegression(l1_ratio=1.0, solver="saga"), "l1"),
    (SVC(kernel="rbf"), "not linear"),
    (LinearSVC(), "squared_hinge"),
    (LogisticRegression(class_weight="balanced"), "class_weight"),
    (SGDClassifier(loss="modified_huber"), "modified_huber"),
    (RidgeClassifier(positive=True), "positive"),
    (KNeighborsClassifier(), "KNeighborsClassifier is not a supported"),
    (LinearSVC(loss="hinge", intercept_scaling=10.0), "intercept_scaling"),
])
def test_unsupported_estimators_are_refused_with_the_supported_list(estimator, message):
    with pytest.raises(ValueError, match=message) as info:
        from_estimator(estimator, n_samples=30)
    assert "exact minimiser of a convex loss" in str(info.value)
    assert all(s.split(" ")[0] in str(info.value) for s in SUPPORTED_ESTIMATORS)


def test_cud_interval_with_an_estimator_equals_the_interval_on_its_basis_and_loss():
    X, y = data(3, n=30)
    pipe = make_pipeline(StandardScaler(), LogisticRegression(C=0.5))
    via_estimator = cudbound.cud_interval(X, y, procedure=pipe, n_resamples=20, rng=4)
    mapping = from_estimator(pipe, n_samples=30)
    direct = cudbound.cud_interval(X, y, procedure=Procedure(basis=EstimatorBasis(StandardScaler()), loss=mapping.loss),
                                   n_resamples=20, rng=4)
    assert via_estimator.confidence_interval == direct.confidence_interval
    np.testing.assert_allclose(via_estimator.coef, direct.coef)
    assert via_estimator.details["estimator_objective"] == mapping.objective
    assert "LogisticRegression" in via_estimator.details["estimator"]
    assert not hasattr(pipe[-1], "coef_")          # an unfitted estimator stays unfitted


def test_intervals_with_an_estimator_pass_its_loss_to_every_method():
    X, y = data(4, n=30)
    res = cudbound.intervals(X, y, methods=["kohavi", "yang"], procedure=RidgeClassifier(alpha=3.0), rng=1)
    assert all(r.details["estimator_objective"].endswith("n x ridge:0.1") for r in res)
    same = cudbound.intervals(X, y, methods=["kohavi", "yang"], procedure=Procedure(loss="ridge:0.1"), rng=1)
    assert [r.confidence_interval for r in res] == [r.confidence_interval for r in same]


def test_estimator_and_basis_or_loss_together_are_refused():
    X, y = data(0, n=30)
    with pytest.raises(TypeError, match="either `estimator` or `basis`/`loss`"):
        cudbound.cud_interval(X, y, Procedure(estimator=LogisticRegression(), loss="logistic"), n_resamples=20)
    with pytest.raises(TypeError, match="either `estimator` or `basis`/`loss`"):
        cudbound.intervals(X, y, methods=["kohavi"], procedure={"estimator": LogisticRegression(), "basis": "poly:2"})


def test_string_labels_take_scikit_learns_positive_class():
    X, y = data(5, n=30)
    words = np.where(y > 0, "yes", "no")
    est = LogisticRegression(C=1.0, tol=1e-10, max_iter=10_000).fit(X, words)
    res = cudbound.cud_interval(X, words, procedure=est, n_resamples=20, rng=0)
    np.testing.assert_allclose(res.coef, theirs(est), atol=1e-6)   # positive class 'yes' = classes_[1]
    assert list(est.classes_) == ["no", "yes"]


def test_a_fitted_estimator_is_not_changed():
    X, y = data(6)
    est = LogisticRegression(C=0.4).fit(X, y)
    before = theirs(est).copy()
    cudbound.cud_interval(X[:30], y[:30], procedure=est, n_resamples=20, rng=0)
    np.testing.assert_array_equal(theirs(est), before)


def test_svc_whose_intercept_is_not_determined_agrees_in_the_objective():
    """When the SVM's optimal intercept is an interval (draw 7 below), libsvm picks one point of it
    and cudbound the least-norm minimiser.
    Both minimise the same objective, and w (penalised, so unique) agrees; which intercept libsvm
    picks changed between releases (scikit-learn 1.9.1 picks one 0.014 from cudbound's), so only the
    objective decides there. Known limit: cudbound's least-norm point is computed within the
    solver's tolerance (objective to 1e-10), which lets w move by ~1e-4 here."""
    X, y = data(7)
    pipe = make_pipeline(StandardScaler(), PCA(2), SVC(kernel="linear", C=1.0, tol=1e-10)).fit(X, y)
    mine, mapping = ours(pipe, X, y)
    design = mapping.basis.fit_transform(X)
    value = lambda beta: mapping.loss.value(design, y.astype(float), np.ones(len(y)), beta)
    assert abs(value(mine) - value(theirs(pipe))) < 1e-9
    assert np.max(np.abs(mine[1:] - theirs(pipe)[1:])) < 1e-3
    other = theirs(pipe) + np.r_[-0.01, 0.0, 0.0]     # another intercept, same w: also a minimiser
    assert abs(value(other) - value(theirs(pipe))) < 1e-9


def test_no_intercept_penalises_every_coefficient_even_a_constant_column():
    X, y = data(0)
    for est in (LogisticRegression(C=0.7, fit_intercept=False, tol=1e-10, max_iter=10_000),
                RidgeClassifier(alpha=2.0, fit_intercept=False)):
        pipe = make_pipeline(PolynomialFeatures(2), est).fit(X, y)    # a bias column of ones
        mapping = from_estimator(pipe, n_samples=len(y))
        assert mapping.loss.name.endswith(":all")
        design = mapping.basis.fit_transform(X)
        coef = fit_classifier(design, y.astype(float), mapping.loss).coef
        np.testing.assert_allclose(coef, np.ravel(pipe[-1].coef_), atol=1e-5)


@pytest.mark.parametrize("estimator", [
    make_pipeline(PolynomialFeatures(2), LinearSVC(loss="hinge", C=0.7)),
    make_pipeline(PolynomialFeatures(2), LogisticRegression(C=0.7, solver="liblinear")),
])
def test_a_penalised_intercept_beside_a_constant_column_is_refused(estimator):
    X, y = data(0)
    with pytest.raises(ValueError, match="include_bias=False"):
        cudbound.cud_interval(X, y, procedure=estimator, n_resamples=20)


@pytest.mark.parametrize("estimator, message", [
    (LinearSVC(loss="hinge", multi_class="crammer_singer"), "crammer_singer"),
    (LinearSVC(loss="hinge", dual=False), "dual=False"),
    (LogisticRegression(C=np.inf, solver="liblinear"), "liblinear"),
    (RidgeClassifier(alpha=-1.0), "alpha"),
    (LogisticRegression(C=0.0), "C"),
])
def test_settings_that_scikit_learn_or_the_mapping_rejects_are_refused(estimator, message):
    with pytest.raises(ValueError, match=message):
        from_estimator(estimator, n_samples=30)


def test_sgd_without_penalty_or_with_alpha_zero_is_the_plain_loss():
    assert from_estimator(SGDClassifier(loss="log_loss", alpha=0.0), 30).loss.name == "logistic"
    assert from_estimator(SGDClassifier(loss="hinge", penalty=None), 30).loss.name == "hinge"


def test_a_dataframe_reaches_a_column_transformer_by_name():
    pd = pytest.importorskip("pandas")
    from sklearn.compose import ColumnTransformer
    X, y = data(1, n=30)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    pipe = make_pipeline(ColumnTransformer([("scale", StandardScaler(), ["a", "b"])]), LogisticRegression(C=1.0))
    res = cudbound.cud_interval(frame, y, procedure=pipe, n_resamples=20, rng=0)
    direct = cudbound.cud_interval(X[:, :2], y, procedure=make_pipeline(StandardScaler(), LogisticRegression(C=1.0)),
                                   n_resamples=20, rng=0)
    np.testing.assert_allclose(tuple(res.confidence_interval), tuple(direct.confidence_interval), atol=1e-12)
    np.testing.assert_allclose(res.coef, direct.coef, atol=1e-9)


def test_a_supervised_step_is_refused_with_a_clear_message():
    from sklearn.feature_selection import SelectKBest
    X, y = data(1, n=30)
    with pytest.raises(ValueError, match="must be unsupervised"):
        cudbound.cud_interval(X, y, procedure=make_pipeline(SelectKBest(k=2), LogisticRegression()), n_resamples=20)


class _RenamedSVC(SVC):
    """A renamed SVC with other defaults: it fits what SVC fits."""

    def __init__(self, C=0.7, kernel="linear", tol=1e-10):
        super().__init__(C=C, kernel=kernel, tol=tol)


class _SVCWithOtherFit(SVC):
    def fit(self, X, y, sample_weight=None):
        return super().fit(X, y, sample_weight=None if sample_weight is None else 2 * sample_weight)


def test_a_subclass_maps_by_what_it_fits_not_by_its_name():
    """Capabilities, not exact classes (issue 30): a renamed subclass maps like its parent (it
    used to be refused for its name); one that redefines a method is refused, naming it; and so
    is scikit-learn's own LogisticRegressionCV, a LogisticRegression whose fit chooses C."""
    from sklearn.linear_model import LogisticRegressionCV

    X, y = data(5)
    mine, parent = from_estimator(_RenamedSVC(), 40), from_estimator(SVC(C=0.7, kernel="linear"), 40)
    assert mine.loss.name == parent.loss.name and mine.objective == parent.objective
    coef, _ = ours(_RenamedSVC(), X, y)
    assert np.array_equal(coef, ours(SVC(C=0.7, kernel="linear"), X, y)[0])
    np.testing.assert_allclose(coef, theirs(_RenamedSVC().fit(X, y)), atol=1e-5)  # libsvm's tolerance
    with pytest.raises(ValueError, match="_SVCWithOtherFit redefines fit of SVC"):
        from_estimator(_SVCWithOtherFit(kernel="linear"), 40)
    with pytest.raises(ValueError, match="LogisticRegressionCV redefines .*fit.* of LogisticRegression"):
        from_estimator(LogisticRegressionCV(), 40)


def test_a_pipelines_scaler_and_components_give_the_terms_of_zpca():
    """``StandardScaler`` then ``PCA(k)`` computes zpca:k's scores ((x - mu) / s)' v (up to each component's
    sign), so the terms behind them (``EstimatorBasis.transform_terms``, step by step through
    ``transformer_terms``) are ``PCABasis``'s, sum_j (t_j + |mu_j|) |v_j| / s_j, at features far from their
    zero and with a column in large units; a step whose arithmetic is unknown (``PolynomialFeatures``) gives
    |phi| (the entries count as exact), and so does a whitening PCA's design scaled by the whitening."""
    from cudbound.basis import make_basis
    from cudbound.sklearn_bridge import transformer_terms

    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 4)) * [1.0, 10.0, 0.1, 1e3] + [1e4, -3.0, 0.0, 5e5]
    ours = make_basis("zpca:2").fit(X)
    basis = EstimatorBasis(make_pipeline(StandardScaler(), PCA(2))).fit(X)
    np.testing.assert_allclose(np.abs(basis.transform(X)), np.abs(ours.transform(X)), rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(basis.transform_terms(X), ours.transform_terms(X), rtol=1e-8)
    assert basis.transform_terms(X)[:, 1:].min() > 500 * np.abs(basis.transform(X))[:, 1:].max()   # far from 0
    poly = EstimatorBasis(make_pipeline(StandardScaler(), PolynomialFeatures(2, include_bias=False))).fit(X)
    np.testing.assert_array_equal(poly.transform_terms(X), np.abs(poly.transform(X)))
    assert transformer_terms(PolynomialFeatures(2).fit(X), X, np.abs(X)) is None
    white = make_pipeline(StandardScaler(), PCA(2, whiten=True)).fit(X)
    plain = make_pipeline(StandardScaler(), PCA(2)).fit(X)
    np.testing.assert_allclose(transformer_terms(white, X, np.abs(X)) * np.sqrt(plain[-1].explained_variance_),
                               transformer_terms(plain, X, np.abs(X)), rtol=1e-10)
