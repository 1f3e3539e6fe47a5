"""Small SVM problems for the tests of cudbound/optim/svm_dual (tests/optim/svm_dual/)."""
import numpy as np


def svm_problem(seed, n=30, rank=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, rank or 4))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    K = X @ X.T if rank else np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    return K, y
