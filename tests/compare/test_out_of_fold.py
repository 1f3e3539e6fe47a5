"""The comparisons on out-of-fold predictions reachable from compare() (issue 32 names every method of
cudbound.compare): McNemar, the paired error-difference intervals and DeLong on the predictions and
scores of one K-fold split give exactly what the functions give on cross_val_predict's predictions
of the same folds (scikit-learn classifiers), or on a hand loop of refits (the package's Procedure)."""
import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import PredefinedSplit, StratifiedKFold, cross_val_predict
from sklearn.naive_bayes import GaussianNB

from cudbound.losses import get_loss
from cudbound.compare import (Procedure, ProcedurePair, compare, delong_test, error_difference_interval, get_method,
                              mcnemar)
from cudbound.resampling import OUT_OF_FOLD_STREAM
from cudbound.design import prepare_data, reparametrise
from cudbound.fit import fit_coefficients

ON_PREDICTIONS = ["mcnemar", "tango", "newcombe", "agresti_min", "delong"]


def _data(n=60, seed=3):
    gen = np.random.default_rng(seed)
    X = gen.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.6 * X[:, 1] ** 2 + 0.7 * gen.normal(size=n) > 0.3, 1, 0)
    return X, y


def _same(got, expected):
    """Two ComparisonResults with the same numbers (the out-of-fold one adds details and time)."""
    a, b = got.to_dict(), expected.to_dict()
    for key in ("method", "quantity", "estimate", "low", "high", "confidence_level", "statistic", "pvalue",
                "alternative", "n_samples"):
        assert a[key] == b[key], (key, a[key], b[key])


def _functions(y, pa, pb, sa, sb, **kw):
    level = {k: v for k, v in kw.items() if k == "confidence_level"}
    alt = {k: v for k, v in kw.items() if k == "alternative"}
    return {"mcnemar": mcnemar(y, pa, pb, **alt),
            **{m: error_difference_interval(y, pa, pb, method=m, **level, **alt)
               for m in ("tango", "newcombe", "agresti_min")},
            "delong": delong_test(y, sa, sb, **level, **alt)}


@pytest.mark.parametrize("kw", [{}, {"confidence_level": 0.9, "alternative": "less"}])
def test_compare_on_predictions_is_the_functions_on_cross_val_predict(kw):
    X, y = _data()
    a, b = LogisticRegression(C=0.5), GaussianNB()
    res = compare(a, b, X, y, methods=ON_PREDICTIONS, rng=4, cv=5, **kw)
    folds = res[0].details["folds"]
    assert all(np.array_equal(r.details["folds"], folds) for r in res)        # one set of folds
    assert np.bincount(folds).tolist() == [12] * 5 and res[0].details["k"] == 5
    assert "not independent" in res[0].details["out_of_fold"]
    split = PredefinedSplit(folds)
    pa, pb = (cross_val_predict(m, X, y, cv=split) for m in (a, b))
    sa = cross_val_predict(a, X, y, cv=split, method="decision_function")
    sb = cross_val_predict(b, X, y, cv=split, method="predict_proba")[:, 1]   # GaussianNB: no decision_function
    expected = _functions(y, pa, pb, sa, sb, **kw)
    for r in res:
        _same(r, expected[r.method])


def test_a_package_procedure_against_a_hand_loop_of_refits():
    X, y = _data()
    spec = Procedure(basis="poly:2", loss="logistic")
    folds = np.arange(60) % 4
    res = compare(spec, LogisticRegression(), X, y, methods=ON_PREDICTIONS, cv=folds)
    assert np.array_equal(res[0].details["folds"], folds)
    data = prepare_data(X, y, "poly:2", None, None, "logistic")
    rep = reparametrise(data.design)
    Z, labels, loss = rep.Z, data.labels, rep.loss(get_loss(data.loss))
    scores = np.empty(60)
    for f in range(4):
        test = folds == f
        scores[test] = Z[test] @ fit_coefficients(Z[~test], labels[~test], loss)
    pa = np.where(scores >= 0, 1, 0)
    split = PredefinedSplit(folds)
    pb = cross_val_predict(LogisticRegression(), X, y, cv=split)
    sb = cross_val_predict(LogisticRegression(), X, y, cv=split, method="decision_function")
    expected = _functions(y, pa, pb, scores, sb)
    for r in res[:4]:
        _same(r, expected[r.method])
    assert res[4].estimate == pytest.approx(expected["delong"].estimate, abs=1e-12)
    assert res[4].pvalue == pytest.approx(expected["delong"].pvalue, rel=1e-6)


def test_the_folds_come_from_the_familys_own_stream():
    """An int cv deals stratified folds from the stream OUT_OF_FOLD_STREAM: the same in every
    method of the family, and unchanged by the other methods run beside them."""
    X, y = _data()
    assert {get_method(m).stream for m in ON_PREDICTIONS} == {OUT_OF_FOLD_STREAM}
    alone = compare(GaussianNB(), LogisticRegression(), X, y, methods=["tango"], rng=7)[0]
    mixed = compare(GaussianNB(), LogisticRegression(), X, y, methods=["wald_cv", "delong", "tango"], rng=7)
    assert np.array_equal(alone.details["folds"], mixed[2].details["folds"])
    assert alone.confidence_interval == mixed[2].confidence_interval and alone.details["k"] == 10
    per_class = [np.bincount(alone.details["folds"][y == c]) for c in (0, 1)]
    assert all(c.max() - c.min() <= 1 for c in per_class)            # stratified
    other = compare(GaussianNB(), LogisticRegression(), X, y, methods=["tango"], rng=8)[0]
    assert not np.array_equal(other.details["folds"], alone.details["folds"])


def test_the_refits_are_shared_within_one_call(monkeypatch):
    X, y = _data()
    calls = []
    original = ProcedurePair.out_of_fold

    def counted(self, folds):
        calls.append(len(self._out_of_fold))
        return original(self, folds)

    monkeypatch.setattr(ProcedurePair, "out_of_fold", counted)
    fits = []
    real_fit = GaussianNB.fit
    monkeypatch.setattr(GaussianNB, "fit", lambda self, X, y: (fits.append(1), real_fit(self, X, y))[1])
    compare(GaussianNB(), Procedure(), X, y, methods=ON_PREDICTIONS, rng=0, cv=6)
    assert len(calls) == 5 and len(fits) == 6            # five methods, one fit per fold


def test_options_reach_their_method_and_a_splitter_is_taken():
    X, y = _data()
    res = compare(GaussianNB(), LogisticRegression(), X, y, methods=["mcnemar", "tango"],
                  cv=StratifiedKFold(3, shuffle=True, random_state=0), mcnemar_options={"exact": False})
    assert res[0].details["form"] == "chi-square, corrected" and res[0].details["k"] == 3
    with pytest.raises(ValueError, match="unknown option"):
        compare(GaussianNB(), LogisticRegression(), X, y, methods=["tango"], exact=False)
    with pytest.raises(ValueError, match="one K-fold split"):
        compare(GaussianNB(), LogisticRegression(), X, y, methods=["mcnemar"], cv=np.vstack([np.arange(60) % 2] * 2))


class Sign(ClassifierMixin, BaseEstimator):
    """Predicts sign(x_0) and gives no scores."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.where(np.asarray(X)[:, 0] > 0, 1.0, -1.0)


def test_delong_needs_scores_and_says_so():
    X, y = _data()
    res = compare(Sign(), GaussianNB(), X, y, methods=["mcnemar"], rng=0)[0]
    assert res.details["table"].sum() == 60
    with pytest.raises(ValueError, match=r"procedure A \(Sign\(\)\) has neither decision_function nor predict_proba"):
        compare(Sign(), GaussianNB(), X, y, methods=["delong"], rng=0)
