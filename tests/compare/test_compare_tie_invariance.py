"""The comparisons on out-of-fold predictions (``cudbound.compare.compare``: mcnemar, tango, newcombe,
agresti_min, delong) give the same result when the rows are permuted (the folds with them) and
when a feature is multiplied by a power of two, on Three Points and on a discrete design
(tests/_support/tie_problems.py), for A = least squares on the linear basis and B = on ``poly:2``.

On Three Points, B fits the three cell means; where a training part holds as many positives as
negatives at x = 3, B's score there is 0 in exact arithmetic and its sign, hence B's prediction
and McNemar's table, was the machine's. DeLong's AUCs must be equal exactly; its variance (a sum
over the rows in row order) to 1e-12."""
import warnings

import pytest
from tie_problems import COMPARE_PROBLEMS, TRANSFORMS

from cudbound.compare import Procedure, compare

METHODS = ("mcnemar", "tango", "newcombe", "agresti_min", "delong")
A, B = Procedure(basis="linear", loss="squared"), Procedure(basis="poly:2", loss="squared")

# Three Points permuted and interleaved: B's predictions turn on the sign of an exact 0 (measured);
# McNemar, Tango, Newcombe and Agresti-Min failed there before the refits' signs were taken by the
# tie rule (cudbound.refit through cudbound.ties.decision_signs).


def _case(problem, transform, method):
    return pytest.param(problem, transform, method)


@pytest.fixture(scope="module")
def problems():
    return {name: make() for name, make in COMPARE_PROBLEMS.items()}


def _run(X, y, folds):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dict(zip(METHODS, compare(A, B, X, y, METHODS, cv=folds, rng=0)))


@pytest.mark.parametrize("problem, transform, method",
                         [_case(p, t, m) for p in COMPARE_PROBLEMS for t in TRANSFORMS for m in METHODS])
def test_every_prediction_level_comparison(problems, problem, transform, method):
    X, y, folds = problems[problem]
    before = _run(X, y, folds)[method]
    after = _run(*TRANSFORMS[transform](X, y, folds))[method]
    assert after.estimate == before.estimate
    if method == "delong":
        assert after.details["auc_a"] == before.details["auc_a"]
        assert after.details["auc_b"] == before.details["auc_b"]
        assert after.statistic == pytest.approx(before.statistic, rel=1e-12, abs=1e-12)
    else:
        assert after.details["table"].tolist() == before.details["table"].tolist()
        assert after.statistic == before.statistic
    if before.pvalue is None:
        assert after.pvalue is None
    else:
        assert after.pvalue == pytest.approx(before.pvalue, rel=1e-12, abs=1e-15)
    if before.has_confidence_interval:
        assert tuple(after.confidence_interval) == pytest.approx(tuple(before.confidence_interval), abs=1e-12)
