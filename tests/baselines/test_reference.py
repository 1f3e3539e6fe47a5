"""Checks of the slow baseline reference (tests/_support/reference_baselines.py) itself."""
import numpy as np

from reference_baselines import make_data, ref_fit_predict


def test_reference_fit_is_ordinary_least_squares_on_full_rank_data():
    Phi, y = make_data(15, 2, seed=3)
    beta, *_ = np.linalg.lstsq(Phi, y, rcond=None)
    assert np.array_equal(ref_fit_predict(Phi, y, np.arange(15)), np.where(Phi @ beta >= 0, 1.0, -1.0))


def test_reference_one_class_predicts_it():
    Phi, y = make_data(10, 2, seed=1)
    rows = np.flatnonzero(y == 1)
    assert np.all(ref_fit_predict(Phi, y, rows) == 1.0)
