"""Q^(b) of the engine against brute-force enumeration on 2100 random small problems.

The reference values (``tests/fixtures/bruteforce_q.json.gz``, made by
``tests/fixtures/make_bruteforce_fixture.py`` from ``tests/_support/reference_losses.py``
alone) cover 300 problems for each of logistic, exponential, their ridge forms, hinge, its
ridge form (SVC) and squared, in four classes: Gaussian features, discrete features (duplicate
rows, ties), features far from their zero and in another unit, nearly separable labels; four
alpha_n each. Every search option that prunes (the self-concordant flip-cost bound and
closed-form screening of the smooth losses, flip-cost branching of every loss) must leave the
value unchanged: checked with the default options, and on a quarter of the problems also with
every bound and screening off; and every third problem again through the scikit-learn
estimators that fit the loss (``estimator=``).

The whole sweep takes minutes, so it is marked ``slow`` (CI runs it: ``.ci/run``; locally
``python -m pytest -m slow tests/search``). The default run checks, for each loss, the first
problem of every (class, p, n) the fixture holds: about 40 of the 300, every class of input and
every size, with the same checks (``representatives`` of tests/_support/sweeps.py, the rule of
every sweep); through the estimators, one problem of each class and p.
"""
import gzip
import json
import os

import numpy as np
import pytest

from cudbound.design import reparametrise
from cudbound.engine import ReplicateEngine
from cudbound.losses import get_loss
from cudbound.search import SearchOptions
from sweeps import representatives

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "bruteforce_q.json.gz")
TOLS = {"hinge": 1e-6, "hinge_ridge": 1e-6}   # references: HiGHS (LP), CLARABEL at 1e-12 (QP)
PLAIN = SearchOptions(flip_cost=False, branching="static", screen=False, dual_bound=False)


def _problems():
    with gzip.open(FIXTURE, "rt") as fh:
        return json.load(fh)["problems"]


PROBLEMS = _problems()
LOSSES = sorted({p["loss"] for p in PROBLEMS})


def test_the_fixture_has_300_problems_per_loss_in_every_class():
    for loss in LOSSES:
        mine = [p for p in PROBLEMS if p["loss"] == loss]
        assert len(mine) >= 300
        kinds = {p["kind"] for p in mine}
        assert kinds == {"gaussian", "discrete", "shifted", "near_separable"}
    discrete = [p for p in PROBLEMS if p["kind"] == "discrete"]
    dup = sum(len({tuple(r) for r in p["design"]}) < len(p["design"]) for p in discrete)
    assert dup > len(discrete) // 2


def _shape(prob):
    """A problem's class, p and n: the default run checks the first problem of each."""
    return prob["kind"], len(prob["design"][0]), len(prob["y"])


def test_the_default_run_checks_every_class_and_size_of_every_loss():
    for loss in LOSSES:
        chosen = representatives((p for p in PROBLEMS if p["loss"] == loss), _shape)
        assert 30 <= len(chosen) <= 60, (loss, len(chosen))      # of 300
        assert {p["kind"] for p in chosen} == {"gaussian", "discrete", "shifted", "near_separable"}
        assert {len(p["design"][0]) for p in chosen} == {2, 3} and {len(p["y"]) for p in chosen} == set(range(5, 10))
        assert sum(p["index"] % 4 == 0 for p in chosen) >= 5      # checked again without bounds and screening


def _check_enumeration(loss, problems):
    """As ``cudbound.cud.search_replicate`` does (orthonormal coordinates, the engine), at the
    reference's beta_hat, one engine per problem for its four alpha_n; problem k of a loss again
    with every bound and screening off when k is a multiple of 4."""
    tol = TOLS.get(loss.split(":")[0], 1e-9)
    bad = []
    for prob in problems:
        k = prob["index"]
        design, y, counts = (np.array(prob[key], dtype=float) for key in ("design", "y", "counts"))
        rep = reparametrise(design)
        eng = ReplicateEngine(rep.Z, y, rep.loss(get_loss(loss)))
        gamma_hat = rep.from_user(np.array(prob["beta_hat"]))
        for a, q in zip(prob["alphas"], prob["q"]):
            got = eng.search(counts, gamma_hat, a).value
            if not abs(got - q) <= tol:
                bad.append((prob["index"], prob["kind"], a, got, q))
            if k % 4 == 0:
                plain = eng.search(counts, gamma_hat, a, PLAIN).value
                if not abs(plain - q) <= tol:
                    bad.append(("plain", prob["index"], prob["kind"], a, plain, q))
    assert not bad, bad[:5]


@pytest.mark.parametrize("loss", LOSSES)
def test_the_representative_problems_match_the_enumeration(loss):
    _check_enumeration(loss, representatives((p for p in PROBLEMS if p["loss"] == loss), _shape))


@pytest.mark.slow
@pytest.mark.parametrize("loss", LOSSES)
def test_every_problem_matches_the_enumeration(loss):
    _check_enumeration(loss, [p for p in PROBLEMS if p["loss"] == loss])


def _estimators(loss, n):
    """scikit-learn classifiers whose exact fit on n rows is the fixture's loss (``docs/losses.md``)."""
    from sklearn.linear_model import LogisticRegression, RidgeClassifier, SGDClassifier
    from sklearn.svm import SVC

    C = 1.0 / (2.0 * 0.05 * n)      # lam = 1 / (2 C n) = 0.05 (to an ulp)
    return {"logistic": [LogisticRegression(penalty=None), SGDClassifier(loss="log_loss", penalty=None)],
            "logistic_ridge:0.05": [LogisticRegression(C=C), SGDClassifier(loss="log_loss", alpha=0.1)],
            "hinge": [SGDClassifier(loss="hinge", penalty=None)],
            "hinge_ridge:0.05": [SVC(kernel="linear", C=C), SGDClassifier(loss="hinge", alpha=0.1)],
            "squared": [RidgeClassifier(alpha=0.0)]}.get(loss, [])


def _check_through_estimator(loss, problems):
    """The problems given as a scikit-learn estimator (``estimator=``): its basis and loss
    (``cudbound.sklearn_bridge.from_estimator``) reach the same Q^(b). The number of searches."""
    from cudbound.sklearn_bridge import from_estimator

    tol = TOLS.get(loss.split(":")[0], 1e-9)
    if not _estimators(loss, 5):
        pytest.skip(f"no scikit-learn estimator fits {loss}")
    bad = []
    checked = 0
    for prob in problems:
        design, y, counts = (np.array(prob[key], dtype=float) for key in ("design", "y", "counts"))
        for est in _estimators(loss, len(y)):
            mapping = from_estimator(est, len(y))
            assert mapping.loss.name.split(":")[0] == loss.split(":")[0]
            Phi = mapping.basis.fit(design[:, 1:]).transform(design[:, 1:])
            np.testing.assert_array_equal(Phi, design)
            rep = reparametrise(Phi)
            eng = ReplicateEngine(rep.Z, y, rep.loss(mapping.loss))
            gamma_hat = rep.from_user(np.array(prob["beta_hat"]))
            for a, q in zip(prob["alphas"], prob["q"]):
                got = eng.search(counts, gamma_hat, a).value
                checked += 1
                if not abs(got - q) <= tol:
                    bad.append((repr(est), prob["index"], prob["kind"], a, got, q))
    assert not bad, bad[:5]
    return checked


def _by_class_and_p(prob):
    return prob["kind"], len(prob["design"][0])


@pytest.mark.parametrize("loss", LOSSES)
def test_through_estimator_on_one_problem_of_each_class_and_p(loss):
    """Of every third problem, the first of each class and p (8 problems)."""
    mine = representatives([p for p in PROBLEMS if p["loss"] == loss][::3], _by_class_and_p)
    assert len(mine) == 8
    assert _check_through_estimator(loss, mine) >= 4 * 8


@pytest.mark.slow
@pytest.mark.parametrize("loss", LOSSES)
def test_through_estimator(loss):
    """Every third problem."""
    assert _check_through_estimator(loss, [p for p in PROBLEMS if p["loss"] == loss][::3]) >= 4 * 100
