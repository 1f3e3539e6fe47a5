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
    ("sklearn.preprocessing.StandardScaler()", "neither a classifier"),
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


MY_LOSSES = '''
import cvxpy as cp
import numpy as np

from cudbound.losses import Loss


class SquaredHingeLoss(Loss):
    """l(y, t) = max(0, 1 - y t)^2 (docs/losses.md, "Adding a loss")."""

    name = "squared_hinge"

    def __init__(self, scale=1.0):
        self.scale = scale

    def pointwise(self, y, t):
        return self.scale * np.maximum(0.0, 1.0 - y * t) ** 2

    def cvxpy_pointwise(self, y, t):
        return self.scale * cp.square(cp.pos(1.0 - cp.multiply(y, t)))


class NotALoss:
    pass
'''


@pytest.fixture
def my_losses(tmp_path, monkeypatch):
    """A module of one's own on the import path (as PYTHONPATH=. puts one), holding a loss class."""
    import importlib
    import sys
    name = f"my_losses_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(MY_LOSSES)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield name
    sys.modules.pop(name, None)


def test_a_loss_class_by_import_path_is_the_procedures_loss(my_losses):
    """A Loss subclass by import path, alone, first, or as loss= beside a basis: the procedure's loss is an
    instance of that class built from the literal parameters."""
    import importlib
    cls = importlib.import_module(my_losses).SquaredHingeLoss
    for text, basis in [(f"{my_losses}.SquaredHingeLoss(scale=2.0)", None),
                        (f"{my_losses}.SquaredHingeLoss(scale=2.0),basis=poly:2", "poly:2"),
                        (f"basis=poly:2(zpca:1), loss={my_losses}.SquaredHingeLoss(scale=2.0)", "poly:2(zpca:1)")]:
        proc = parse_model_spec(text).procedure
        assert isinstance(proc, Procedure) and proc.basis == basis and proc.estimator is None
        assert type(proc.loss) is cls and proc.loss.scale == 2.0


def test_a_spec_says_what_is_wrong_with_a_loss_class(my_losses):
    with pytest.raises(ValueError, match="is not a cudbound.losses.Loss"):
        parse_model_spec(f"loss=sklearn.linear_model.LogisticRegression(),basis=poly:2")
    with pytest.raises(ValueError, match="is a loss, not a scikit-learn estimator"):
        parse_model_spec(f"estimator={my_losses}.SquaredHingeLoss()")
    with pytest.raises(ValueError, match="neither a classifier"):
        parse_model_spec(f"{my_losses}.NotALoss()")
    with pytest.raises(ValueError, match="PYTHONPATH=."):
        parse_model_spec("no_such_module_of_mine.MyLoss()")
