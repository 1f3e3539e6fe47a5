"""Every warning of the package is attributed to the user's line (cudbound._warnings), whatever
the depth of the call that issues it: here, the line of this file that called the package."""
import warnings

import numpy as np
import pytest

from cudbound import SmallSampleWarning, cud_from_design, cud_interval
from cudbound._warnings import user_stacklevel, warn
from cudbound.auc import KernelRLS, OneClassFoldWarning, cv_auc
from cudbound.baselines import DegenerateResampleWarning, leave_one_out

X6 = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [0.5, 3.0], [3.0, 1.0], [1.0, 1.0]])
Y6 = np.array([1, -1, 1, -1, 1, -1])


def _caught(category, call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w for w in caught if issubclass(w.category, category)]


@pytest.mark.parametrize("call", [
    lambda: cud_interval(X6, Y6, n_resamples=20, rng=0),                                  # through the front door
    lambda: cud_from_design(np.column_stack([np.ones(6), X6]), Y6, n_resamples=20, rng=0),  # one frame less
], ids=["cud_interval", "cud_from_design"])
def test_the_small_sample_warning_points_at_the_callers_line(call):
    caught = _caught(SmallSampleWarning, call)
    assert caught and all(w.filename == __file__ for w in caught), [(w.filename, w.lineno) for w in caught]


def test_a_degenerate_refit_warning_points_at_the_callers_line():
    Phi = np.column_stack([np.ones(9), np.random.default_rng(0).normal(size=9)])
    y = -np.ones(9)
    y[0] = 1.0                                     # leaving out the only positive: a one-class refit
    caught = _caught(DegenerateResampleWarning, lambda: leave_one_out(Phi, y))
    assert caught and all(w.filename == __file__ for w in caught)


def test_a_one_class_fold_warning_points_at_the_callers_line():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 2))
    y = np.where(X[:, 0] + rng.normal(size=12) > 0, 1, -1)
    y[:2] = [1, -1]
    folds = np.where(y > 0, 0, 1)
    folds[:2] = 2
    caught = _caught(OneClassFoldWarning, lambda: cv_auc(KernelRLS(), X, y, cv=folds))
    assert caught and all(w.filename == __file__ for w in caught)


def test_warn_called_from_outside_the_package_points_at_that_line():
    caught = _caught(UserWarning, lambda: warn("here", UserWarning))
    assert [w.filename for w in caught] == [__file__]
    assert user_stacklevel() == 2                  # called from here, outside the package: our caller
