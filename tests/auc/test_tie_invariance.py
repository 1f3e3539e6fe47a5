"""Every AUC estimate and interval is unchanged when the rows are permuted (the folds with them) and
when a feature is multiplied by a power of two, on Three Points (x in {0, 1, 3}) and on a discrete
design with many equal scores (tests/_support/tie_problems.py).

The refitted models score equal rows a rounding apart, differently after each transformation;
the package's tie rule (``cudbound.ties``) makes those scores ties. Estimates (AUCs: sums of
half-integers over m n) must be equal exactly; standard errors and interval limits to 1e-12,
because their variances are sums over the rows in row order, which a permutation legitimately
changes. Before the tie rule, the pooled AUC of the Three Points problem changed with the order
of its rows (0.7665 against 0.7617) and DeLong's interval with it."""
import warnings

import numpy as np
import pytest
from tie_problems import PROBLEMS, TRANSFORMS, LeastSquares

from cudbound.auc import KernelRLS, auc_interval, auc_score, cv_auc, lpo_auc, pair_auc
from cudbound.auc.registry import get_method, method_names
from cudbound.coverage.auc_tasks import lpo_auc_least_squares

ROUNDING = 1e-12
"""Tolerance of a sum over rows taken in another order (standard errors, interval limits)."""

PERMUTATIONS = ("permuted", "interleaved")


def _cases(transforms=tuple(TRANSFORMS)):
    return [(p, t) for p in PROBLEMS for t in transforms]


@pytest.fixture(scope="module")
def problems():
    return {name: make() for name, make in PROBLEMS.items()}


@pytest.mark.parametrize("problem, transform", _cases())
@pytest.mark.parametrize("pooling", ["pooled", "averaged"])
def test_cv_auc_of_least_squares(problems, problem, transform, pooling):
    X, y, folds = problems[problem]
    Xt, yt, ft = TRANSFORMS[transform](X, y, folds)
    before = cv_auc(LeastSquares(), X, y, cv=folds, pooling=pooling)
    after = cv_auc(LeastSquares(), Xt, yt, cv=ft, pooling=pooling)
    assert after.estimate == before.estimate
    assert np.array_equal(after.fold_auc, before.fold_auc)


@pytest.mark.parametrize("problem, transform", _cases(PERMUTATIONS))
@pytest.mark.parametrize("pooling", ["pooled", "averaged"])
def test_cv_auc_of_kernel_rls_under_permutations(problems, problem, transform, pooling):
    X, y, folds = problems[problem]
    Xt, yt, ft = TRANSFORMS[transform](X, y, folds)
    model = KernelRLS(regparam=0.5)
    assert cv_auc(model, Xt, yt, cv=ft, pooling=pooling).estimate == cv_auc(model, X, y, cv=folds,
                                                                             pooling=pooling).estimate


@pytest.mark.parametrize("problem, transform", _cases())
def test_lpo_auc(problems, problem, transform):
    X, y, folds = problems[problem]
    Xt, yt, _ = TRANSFORMS[transform](X, y, folds)
    assert lpo_auc(LeastSquares(), Xt, yt).estimate == lpo_auc(LeastSquares(), X, y).estimate
    design, design_t = np.column_stack([np.ones(len(y)), X]), np.column_stack([np.ones(len(yt)), Xt])
    assert lpo_auc_least_squares(design_t, yt.astype(float)) == lpo_auc_least_squares(design, y.astype(float))
    if transform in PERMUTATIONS:     # kernel RLS is invariant to the order of the rows, not to units
        assert lpo_auc(KernelRLS(regparam=0.5), Xt, yt).estimate == lpo_auc(KernelRLS(regparam=0.5), X, y).estimate


def _bootstrap(method):
    return method.startswith("bootstrap")


@pytest.mark.parametrize("problem, transform", _cases())
@pytest.mark.parametrize("method", method_names())
def test_every_auc_interval(problems, problem, transform, method):
    if _bootstrap(method) and transform == "permuted":
        pytest.skip("the stratified bootstrap draws each class's rows by position: a permutation that reorders a "
                    "class draws other resamples (the 'interleaved' case keeps each class's order)")
    X, y, folds = problems[problem]
    Xt, yt, ft = TRANSFORMS[transform](X, y, folds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # degenerate intervals warn alike before and after
        before = auc_interval(LeastSquares(), X, y, method=method, cv=folds, rng=7)
        after = auc_interval(LeastSquares(), Xt, yt, method=method, cv=ft, rng=7)
    assert after.estimate == before.estimate
    assert after.low == pytest.approx(before.low, abs=ROUNDING)
    assert after.high == pytest.approx(before.high, abs=ROUNDING)
    if before.standard_error is None:
        assert after.standard_error is None
    else:
        assert after.standard_error == pytest.approx(before.standard_error, abs=ROUNDING)


def test_the_three_points_problem_has_scores_a_rounding_apart(problems):
    """The tests above test the tie rule: permuted, the fold models score equal rows differently
    in the last bits (so a rule that compared exactly would see other orders)."""
    X, y, folds = problems["three_points"]
    Xt, yt, ft = TRANSFORMS["permuted"](X, y, folds)
    s = cv_auc(LeastSquares(), X, y, cv=folds, pooling="pooled").scores
    st = cv_auc(LeastSquares(), Xt, yt, cv=ft, pooling="pooled").scores
    p = np.random.default_rng(100).permutation(len(y))        # the permutation of TRANSFORMS["permuted"]
    assert np.allclose(st, s[p], rtol=0, atol=1e-13)
    if np.array_equal(st, s[p]):
        pytest.skip("this machine rounds the permuted fits alike: the refit tests above do not exercise the tie "
                    "rule here (the tests below do, with scores moved by hand)")


def _rounded_apart(scores, seed=0):
    """The scores each moved by a few units in the last place: what another machine's rounding does."""
    steps = np.random.default_rng(seed).integers(-4, 5, size=scores.shape)
    return scores + steps * np.spacing(scores)


@pytest.mark.parametrize("method", method_names())
def test_every_registered_interval_sees_scores_a_rounding_apart_as_ties(method):
    """The same on every machine, without refits: scores with many exact ties, and the same scores
    a few roundings apart, give the same interval (a rule that compared exactly would rank the
    perturbed copies and change the AUC)."""
    rng = np.random.default_rng(5)
    labels = np.repeat([1.0, -1.0], 30)
    scores = rng.choice([-0.7, 0.1, 0.2, 0.3, 1.3], size=60) + 0.2 * (labels > 0)   # 0.1 + 0.2 != 0.3 exactly
    folds = np.tile(np.arange(3), 20)
    function = get_method(method).function
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = function(labels, scores, folds, confidence_level=0.9, rng=np.random.default_rng(1))
        after = function(labels, _rounded_apart(scores), folds, confidence_level=0.9, rng=np.random.default_rng(1))
    assert after.estimate == before.estimate
    assert (after.low, after.high) == pytest.approx((before.low, before.high), abs=ROUNDING)


def test_the_auc_of_scores_and_of_pairs_sees_roundings_as_ties():
    rng = np.random.default_rng(6)
    labels = np.repeat([1, -1], 25)
    scores = rng.choice([0.1, 0.2, 0.3], size=50)
    exact = auc_score(labels, scores)
    assert auc_score(labels, _rounded_apart(scores)) == exact
    assert auc_score(labels, 2.0 ** -7 * _rounded_apart(scores, 1)) == exact
    pairs = np.column_stack([scores[:25], scores[25:]])
    assert pair_auc(_rounded_apart(pairs)) == pair_auc(pairs)
