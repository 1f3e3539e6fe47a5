"""A model SPEC, the one way the commands name a classifier (cudbound/cli/model_spec.py): a loss
with a basis, estimator=..., or a scikit-learn classifier by import path; its parameters read as
literals, never evaluated; the same SPEC gives the same classifier in interval, auc and compare."""
import re

import pytest

from cudbound.cli.model_spec import parse_model_spec
from cudbound.compare import Procedure


@pytest.mark.parametrize("text, procedure", [
    ("logistic", Procedure(loss="logistic")),
    ("hinge,basis=poly:2", Procedure(basis="poly:2", loss="hinge")),
    (" basis=poly:2(zpca:1) , loss=ridge:0.5 ", Procedure(basis="poly:2(zpca:1)", loss="ridge:0.5")),
    ("basis=poly:2", Procedure(basis="poly:2")),
])
def test_a_package_spec_is_a_procedure(text, procedure):
    assert parse_model_spec(text).procedure == procedure


def test_an_estimator_spec_builds_the_named_class_from_literals():
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC
    est = parse_model_spec("sklearn.linear_model.LogisticRegression(C=0.5, class_weight={0: 1.0, 1: 2.0}, "
                           "solver='lbfgs', max_iter=200)").procedure
    assert isinstance(est, LogisticRegression)
    assert (est.C, est.class_weight, est.max_iter) == (0.5, {0: 1.0, 1: 2.0}, 200)
    assert isinstance(parse_model_spec("sklearn.naive_bayes.GaussianNB").procedure.fit, object)
    proc = parse_model_spec("estimator=sklearn.svm.LinearSVC(C=2.0, loss='hinge')").procedure
    assert isinstance(proc, Procedure) and isinstance(proc.estimator, LinearSVC) and proc.estimator.C == 2.0


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("bogus", "the loss must be one of"),
    ("hinge,basis=cubic:3", "the basis must be"),
    ("hinge,lam=2", "unknown key 'lam'"),
    ("hinge,logistic", "only the first item may be a bare loss name"),
    ("hinge,basis=linear,basis=poly:2", "basis is given twice"),
    ("hinge,basis=", "basis has no value"),
    ("logistic,estimator=sklearn.svm.LinearSVC()", "leave out the loss"),
    ("sklearn.linear_model.LogisticRegression(C=__import__('os').getcwd())", "must be a literal"),
    ("sklearn.linear_model.LogisticRegression(0.5)", "given by name"),
    ("sklearn.linear_model.LogisticRegression(C=)", "not name=value pairs"),
    ("sklearn.linear_model.Nope()", "has no class 'Nope'"),
    ("no_such_package.Model()", "cannot import module 'no_such_package'"),
    ("os.path.join()", "has no class 'join'"),
    ("sklearn.preprocessing.StandardScaler()", "not a classifier"),
    ("sklearn.linear_model.LogisticRegression(bogus=1)", "could not be built: TypeError"),
    ("hinge,basis=poly:2(zpca:1", "unbalanced parentheses"),
])
def test_a_bad_spec_says_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_model_spec(text)


def test_a_literal_is_never_evaluated(tmp_path, monkeypatch):
    """Parameters are read by ast.literal_eval: a call inside them is refused before anything runs."""
    marker = tmp_path / "ran"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="must be a literal"):
        parse_model_spec(f"sklearn.linear_model.LogisticRegression(C=open({str(marker)!r}, 'w'))")
    assert not marker.exists()
