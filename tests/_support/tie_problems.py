"""Problems with many scores equal in exact arithmetic, and the transformations that must leave
every result unchanged (tests/auc/test_tie_invariance.py, tests/compare/test_compare_tie_invariance.py).

Each problem comes with fixed fold labels; a transformation returns (X, y, folds) with the rows
permuted (the folds with them), or one feature multiplied by a power of two. Fitted on rows in
another order, or on a rescaled feature, the models give scores equal in exact arithmetic that
differ by a rounding; the package's tie rule (``cudbound.ties``) must make every result the same.
"""
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from cudbound.datasets import ThreePoints
from cudbound.resampling import draw_folds


class LeastSquares(ClassifierMixin, BaseEstimator):
    """Least squares on the labels -1/+1 with an intercept (LAPACK's SVD solver): invariant, in
    exact arithmetic, to the order of the rows and to the units of the features."""

    def fit(self, X, y):
        y = np.asarray(y)
        self.classes_ = np.unique(y)
        A = np.column_stack([np.ones(len(X)), X])
        self.coef_ = np.linalg.lstsq(A, np.where(y == self.classes_[1], 1.0, -1.0), rcond=None)[0]
        return self

    def decision_function(self, X):
        return np.column_stack([np.ones(len(X)), X]) @ self.coef_


def three_points(seed=32, n=50):
    """A Three Points draw (x in {0, 1, 3}) with 5 stratified folds. Seed 32: the pooled AUC of
    least squares before the tie rule changed when the rows were permuted (0.7665 against 0.7617);
    seed 2: least squares on ``poly:2`` scores x = 3 exactly 0 in some training part (as many
    positives as negatives there), and McNemar's table changed with the order of the rows."""
    X, y = ThreePoints().sample(n, np.random.default_rng(seed))
    y = np.where(y > 0, 1, -1)
    return X, y, draw_folds(y.astype(float), 5, 1, True, np.random.default_rng(seed))[0]


def discrete(seed=0, n=48):
    """Two features in {0, 1, 3} (9 distinct rows), labels depending on both: many equal scores."""
    rng = np.random.default_rng(seed)
    X = rng.choice([0.0, 1.0, 3.0], size=(n, 2))
    t = X[:, 0] - 0.5 * X[:, 1] - 0.5 + rng.normal(scale=1.0, size=n)
    y = np.where(t > 0, 1, -1)
    return X, y, draw_folds(y.astype(float), 4, 1, True, np.random.default_rng(seed))[0]


PROBLEMS = {"three_points": three_points, "discrete": discrete}
"""The problems of the AUC tests."""
COMPARE_PROBLEMS = {"three_points": lambda: three_points(seed=2), "discrete": discrete}
"""The problems of the comparisons' tests."""


def permuted(X, y, folds, seed=100):
    """The rows (and their folds) in a random order."""
    p = np.random.default_rng(seed).permutation(len(y))
    return X[p], y[p], folds[p]


def interleaved(X, y, folds, seed=200):
    """The rows in another order that keeps the order of the positives among themselves and of the
    negatives among themselves (the classes interleaved otherwise): the stratified bootstrap, which
    draws each class's rows by position, draws the same resamples."""
    rng = np.random.default_rng(seed)
    n = len(y)
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    slots = rng.permutation(n)
    perm = np.empty(n, dtype=np.intp)
    perm[np.sort(slots[:pos.size])] = pos
    perm[np.sort(slots[pos.size:])] = neg
    return X[perm], y[perm], folds[perm]


def rescaled(X, y, folds, factor=2.0 ** -3, column=0):
    """One feature multiplied by a power of two (exact)."""
    X = X.copy()
    X[:, column] *= factor
    return X, y, folds


TRANSFORMS = {"permuted": permuted, "interleaved": interleaved, "rescaled": rescaled,
              "rescaled_up": lambda X, y, f: rescaled(X, y, f, 2.0 ** 5, X.shape[1] - 1)}
"""Every transformation that must leave the results unchanged."""
