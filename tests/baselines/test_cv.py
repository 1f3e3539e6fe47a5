"""``cv=`` in every baseline that cross-validates (issue 30, point 3): an int gives the folds the
old ``k=`` gave, bit for bit (tests/test_deprecation.py); a scikit-learn splitter gives its own."""
import numpy as np
import pytest
from sklearn.model_selection import KFold, RepeatedStratifiedKFold, StratifiedKFold

from cudbound.baselines import cross_validation, nested_cv, wald_cv, yang
from cudbound.resampling import splitter_folds


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=30) > 0, 1, -1)
    return np.column_stack([np.ones(30), X]), y


def test_cross_validation_with_a_splitter_is_cross_validation_on_its_folds(data):
    Phi, y = data
    splitter = RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=1)
    res = cross_validation(Phi, y, cv=splitter)
    same = cross_validation(Phi, y, folds=splitter_folds(splitter, y))
    assert res.estimate == same.estimate and res.details["k"] == 3 and res.details["repeats"] == 2


def test_yang_takes_k_and_the_repeats_from_the_splitter(data):
    Phi, y = data
    res = yang(Phi, y, cv=RepeatedStratifiedKFold(n_splits=3, n_repeats=4, random_state=0), rng=1)
    assert (res.details["k"], res.details["repeats"], res.details["n_eff"]) == (3, 4, 10.0)
    assert 0.0 <= res.low <= res.high <= 1.0


def test_wald_cv_with_a_splitter_uses_its_one_split(data):
    Phi, y = data
    res = wald_cv(Phi, y, cv=KFold(5, shuffle=True, random_state=2), rng=0)
    assert res.details["k"] == 5
    assert np.array_equal(res.details["folds"], splitter_folds(KFold(5, shuffle=True, random_state=2), y)[0])
    with pytest.raises(ValueError, match="one K-fold split; the splitter `cv` made 2 repetitions"):
        wald_cv(Phi, y, cv=RepeatedStratifiedKFold(n_splits=5, n_repeats=2, random_state=0))


def test_nested_cv_needs_a_number_of_folds_and_bad_cv_is_refused(data):
    Phi, y = data
    with pytest.raises(ValueError, match="nested_cv needs `cv` as a number of folds"):
        nested_cv(Phi, y, cv=StratifiedKFold(5))
    for f in (cross_validation, yang, wald_cv):
        with pytest.raises(ValueError, match="`cv` must be a number of folds, a scikit-learn splitter"):
            f(Phi, y, cv="ten")


@pytest.mark.parametrize("method, given", [("yang", {"repeats": 3}), ("yang", {"stratified": False}),
                                           ("wald_cv", {"stratified": False}), ("cross_validation", {"repeats": 2})])
def test_a_splitter_refuses_the_arguments_it_carries_itself(data, method, given):
    import cudbound.baselines as b
    Phi, y = data
    with pytest.raises(ValueError, match=f"`cv` is a splitter, which carries its own .*`{next(iter(given))}`"):
        getattr(b, method)(Phi, y, cv=StratifiedKFold(3), **given)
