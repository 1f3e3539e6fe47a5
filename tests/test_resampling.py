"""Folds as ``cv`` (issue 30, point 3; cudbound/resampling.py): a number of folds, dealt as always,
or a scikit-learn splitter, whose test sets give the fold labels."""
import numpy as np
import pytest
from sklearn.model_selection import KFold, LeaveOneOut, RepeatedStratifiedKFold, ShuffleSplit, StratifiedKFold

from cudbound.resampling import cv_splitter, fold_assignments, splitter_folds

Y = np.array([1, -1] * 6)


def test_a_number_of_folds_is_left_to_the_caller_and_anything_else_goes_through_check_cv():
    assert cv_splitter(5) is None and cv_splitter(np.int64(3)) is None and cv_splitter(2.0) is None
    assert isinstance(cv_splitter(KFold(3)), KFold)
    pairs = [(np.arange(6, 12), np.arange(6)), (np.arange(6), np.arange(6, 12))]
    assert [t.tolist() for _, t in cv_splitter(pairs).split(np.zeros((12, 1)))] == [list(range(6)), list(range(6, 12))]
    with pytest.raises(ValueError, match="`cv` must be a number of folds, a scikit-learn splitter"):
        cv_splitter("five")


@pytest.mark.parametrize("splitter, shape", [(KFold(4), (1, 12)), (StratifiedKFold(3), (1, 12)),
                                             (LeaveOneOut(), (1, 12)),
                                             (RepeatedStratifiedKFold(n_splits=2, n_repeats=3, random_state=0), (3, 12))])
def test_a_splitters_test_sets_are_the_folds_one_row_per_repetition(splitter, shape):
    folds = splitter_folds(splitter, Y)
    assert folds.shape == shape
    for row, (r, k) in zip(folds, [(r, k) for r in range(shape[0]) for k in [int(folds[r].max()) + 1]]):
        assert sorted(np.unique(row)) == list(range(k))
    tests = [t for _, t in splitter.split(np.zeros((12, 1)), Y)]
    flat = [(r, f) for r in range(shape[0]) for f in range(int(folds[r].max()) + 1)]
    for (r, f), t in zip(flat, tests):
        assert np.array_equal(np.flatnonzero(folds[r] == f), np.sort(t))


def test_a_splitter_that_does_not_test_every_row_once_per_repetition_is_refused():
    with pytest.raises(ValueError, match="leaves some rows in no test fold"):
        splitter_folds(ShuffleSplit(n_splits=3, test_size=0.25, random_state=0), Y)
    with pytest.raises(ValueError, match="at least 2 folds"):
        splitter_folds([(np.arange(0), np.arange(12))], Y)


def test_fold_assignments_takes_a_splitter_and_an_int_as_before():
    assert np.array_equal(fold_assignments(Y, StratifiedKFold(3)), splitter_folds(StratifiedKFold(3), Y))
    assert np.array_equal(fold_assignments(Y, 3, 2, rng=4), fold_assignments(Y, cv=3, repeats=2, rng=4))


def test_cv_that_is_neither_a_count_nor_a_splitter_is_one_clear_error():
    """A list of fold labels is no ``cv`` of fold_assignments: one ValueError saying what cv may be
    (it was a TypeError from inside scikit-learn)."""
    with pytest.raises(ValueError, match="`cv` must be a number of folds, a scikit-learn splitter .* pairs"):
        fold_assignments(np.array([1, -1] * 15), cv=[0, 1] * 15)


@pytest.mark.parametrize("given", [{"repeats": 5}, {"stratified": False}, {"rng": 3}])
def test_a_splitter_refuses_the_arguments_it_carries_itself(given):
    y = np.array([1, -1] * 15)
    with pytest.raises(ValueError, match=f"`cv` is a splitter, which carries its own .*`{next(iter(given))}`"):
        fold_assignments(y, StratifiedKFold(3), **given)
    assert fold_assignments(y, StratifiedKFold(3), repeats=1, stratified=True, rng=None).shape == (1, 30)
