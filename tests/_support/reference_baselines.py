"""Slow, obviously correct reference implementations of the baseline estimators.

Independent of ``cudbound.baselines`` on purpose: every refit is an explicit
least-squares fit (``numpy.linalg.lstsq``) on the rows a resample or a training
fold selects, in a Python loop, and every average is written out point by point.

Conventions (the ones ``cudbound.baselines.estimators`` documents):

* labels in {-1, +1}; prediction sign(phi'beta) with sign(0) = +1;
* a training set holding one class only predicts that class everywhere;
* otherwise the least-squares fit on the selected rows; when it is not unique (a
  rank-deficient selection), the one whose scores Phi beta on all the data have the least
  norm: with Phi = QR (numpy), Phi beta = Q c, and c is the minimum-norm least-squares
  solution of Q_rows c = y_rows. For a full-rank selection this is ordinary least squares.
"""
from __future__ import annotations

import numpy as np


def ref_fit_predict(Phi, y, rows):
    """Predictions at every data point of the classifier refitted on the rows ``rows`` (with repeats)."""
    rows = np.asarray(rows)
    yr = y[rows]
    classes = set(yr.tolist())
    if len(classes) == 1:
        return np.full(Phi.shape[0], float(yr[0]))
    Q, _ = np.linalg.qr(Phi)
    c, *_ = np.linalg.lstsq(Q[rows], yr, rcond=None)
    return np.where(Q @ c >= 0.0, 1.0, -1.0)


def ref_train_error(Phi, y):
    pred = ref_fit_predict(Phi, y, np.arange(len(y)))
    return float(np.mean(pred != y)), pred


def ref_err1(Phi, y, indices):
    """Efron's Err(1): for each point, the mean error of the fits whose sample left it out."""
    n = len(y)
    fits = [ref_fit_predict(Phi, y, idx) for idx in indices]
    per_point = []
    for i in range(n):
        errs = [fits[b][i] != y[i] for b, idx in enumerate(indices) if i not in set(idx.tolist())]
        if errs:                       # points never left out are dropped
            per_point.append(sum(errs) / len(errs))
    return sum(per_point) / len(per_point)


def ref_632(Phi, y, indices):
    err, _ = ref_train_error(Phi, y)
    return 0.368 * err + 0.632 * ref_err1(Phi, y, indices)


def ref_632plus(Phi, y, indices):
    err, pred = ref_train_error(Phi, y)
    err1 = ref_err1(Phi, y, indices)
    p1 = np.mean(y == 1)
    q1 = np.mean(pred == 1)
    gamma = p1 * (1 - q1) + (1 - p1) * q1
    err1p = min(err1, gamma)
    if err1 > err and gamma > err:
        R = (err1p - err) / (gamma - err)
    else:
        R = 0.0
    return 0.368 * err + 0.632 * err1 + (err1p - err) * (0.368 * 0.632 * R) / (1 - 0.368 * R)


def ref_cv(Phi, y, folds):
    """Repeated CV, pooled over the held-out points, averaged over the repeats (rows of ``folds``)."""
    n = len(y)
    out = []
    for row in np.atleast_2d(folds):
        mistakes = 0
        for f in sorted(set(row.tolist())):
            train = [i for i in range(n) if row[i] != f]
            pred = ref_fit_predict(Phi, y, np.array(train))
            mistakes += sum(pred[i] != y[i] for i in range(n) if row[i] == f)
        out.append(mistakes / n)
    return sum(out) / len(out)


def ref_loo(Phi, y):
    n = len(y)
    mistakes = 0
    for i in range(n):
        pred = ref_fit_predict(Phi, y, np.array([j for j in range(n) if j != i]))
        mistakes += pred[i] != y[i]
    return mistakes / n


def ref_bs632_value(Phi, y, outer, inner_positions):
    """The .632 estimate recomputed on the data set D* = rows ``outer`` (duplicates are separate rows)."""
    ys = y[outer]
    n = len(ys)
    fit = ref_fit_predict(Phi, y, outer)[outer]
    err = float(np.mean(fit != ys))
    fits = [ref_fit_predict(Phi, y, outer[pos])[outer] for pos in inner_positions]
    per_row = []
    for r in range(n):
        errs = [fits[j][r] != ys[r] for j, pos in enumerate(inner_positions) if r not in set(pos.tolist())]
        if errs:
            per_row.append(sum(errs) / len(errs))
    err1 = sum(per_row) / len(per_row) if per_row else err
    return 0.368 * err + 0.632 * err1


def make_data(n=20, d=2, seed=0, noise=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + noise * rng.normal(size=n) > 0, 1.0, -1.0)
    if len(set(y.tolist())) < 2:
        y[0] = -y[0]
    return np.column_stack([np.ones(n), X]), y


def tally(indices, n):
    return np.array([np.bincount(idx, minlength=n) for idx in indices])
