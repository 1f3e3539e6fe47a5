"""Folds as ``cv`` (issue 30, point 3; cudbound/resampling.py): a number of folds, dealt as always,
or a scikit-learn splitter, whose test sets give the fold labels; and the bootstrap's index draws."""
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


# --------------------------------------------------------------------------- the index draws

def test_index_rows_drawn_in_batches_are_the_rows_drawn_at_once():
    from cudbound.resampling import draw_indices_by_row
    whole = draw_indices_by_row(7, 10, np.random.default_rng(4))
    gen = np.random.default_rng(4)
    parts = np.vstack([draw_indices_by_row(7, b, gen) for b in (3, 1, 6)])
    assert np.array_equal(whole, parts) and whole.shape == (10, 7)
    assert whole.min() >= 0 and whole.max() <= 6 and np.issubdtype(whole.dtype, np.integer)


def test_the_auc_bootstrap_draws_its_rows_by_draw_indices_by_row():
    """Resample b's positives and negatives are row b of each class's draw from the two children of
    ``rng`` (the documented stream of ``cudbound.auc.bootstrap_interval``)."""
    from cudbound.auc import auc_score, bootstrap_interval
    from cudbound.resampling import draw_indices_by_row
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0])
    s = np.array([0.9, 0.4, 0.7, 0.2, 0.5, 0.1, 0.3, 0.8, 0.05])
    got = bootstrap_interval(y, s, n_resamples=25, rng=3).details["bootstrap_distribution"]
    child_pos, child_neg = np.random.default_rng(3).spawn(2)
    pos, neg = draw_indices_by_row(4, 25, child_pos), draw_indices_by_row(5, 25, child_neg)
    want = [auc_score(np.r_[np.ones(4), -np.ones(5)], np.r_[s[:4][p], s[4:][q]]) for p, q in zip(pos, neg)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


def test_draw_indices_is_one_call_to_integers_and_tallies_to_n():
    from cudbound.resampling import draw_indices, tally
    idx = draw_indices(6, (4, 6), np.random.default_rng(9))
    assert np.array_equal(idx, np.random.default_rng(9).integers(0, 6, size=(4, 6)))
    assert tally(idx, 6).sum(axis=1).tolist() == [6, 6, 6, 6]
