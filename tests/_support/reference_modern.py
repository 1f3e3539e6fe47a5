"""Slow reference computations of today's intervals (cudbound/baselines/modern.py).

Independent of the package on purpose: every refit is ``ref_fit_predict`` (an explicit
least-squares fit on the selected rows), every sum a Python loop over points, folds or
resamples, and each statistic is written the way its authors' code writes it: Bayle et al.'s
cvci (``mean(h^2) - mean(h)^2`` and ``n/(n-K) (mean(h^2) - mean_k hbar_k^2)``), the R
package nestedcv (R/core.R: lists a_list, b_list, errs; ``infl`` clamped to [1, sqrt(K)]),
Efron & Tibshirani (1997) eq. 40 term by term.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from reference_baselines import ref_fit_predict


def rows_of(mask_or_counts):
    """Row indices (with repeats) selected by a 0/1 mask or by bootstrap counts."""
    c = np.asarray(mask_or_counts).astype(int)
    return np.repeat(np.arange(c.shape[0]), c)


def ref_wald(Phi, y, folds, level, variance):
    n = len(y)
    h = np.zeros(n)
    for f in sorted(set(folds.tolist())):
        pred = ref_fit_predict(Phi, y, np.flatnonzero(folds != f))
        for i in np.flatnonzero(folds == f):
            h[i] = float(pred[i] != y[i])
    R = h.mean()
    if variance == "all-pairs":
        var = np.mean(h ** 2) - R ** 2                         # cvci's form
    else:                                                     # cvci's form, equal folds
        K = len(set(folds.tolist()))
        var = n / (n - K) * (np.mean(h ** 2) - np.mean([h[folds == f].mean() ** 2 for f in range(K)]))
    z = stats.norm.ppf(1 - (1 - level) / 2)
    return h, (R - z * math.sqrt(var / n), R + z * math.sqrt(var / n))


def ref_split_errors(Phi, y, train_masks, test_masks):
    out = []
    for tr, te in zip(train_masks, test_masks):
        pred = ref_fit_predict(Phi, y, np.flatnonzero(tr))
        out.append(sum(pred[i] != y[i] for i in np.flatnonzero(te)) / te.sum())
    return np.array(out)


def ref_nested_cv(Phi, y, layouts, cv_layouts, level):
    """nestedcv's nested_cv (R/core.R), loop by loop, on the given fold layouts."""
    n = len(y)
    K = layouts.shape[1]
    a_list, b_list, errs = [], [], []
    for folds in layouts:
        def fit_without(*ks):
            keep = np.setdiff1d(np.arange(n), np.concatenate([folds[k] for k in ks]))
            return ref_fit_predict(Phi, y, keep)
        for k in range(K):
            e_out = np.array([float(v) for v in (fit_without(k)[folds[k]] != y[folds[k]])])
            e_in = []
            for k2 in range(K):
                if k2 != k:
                    pred = fit_without(k, k2)
                    e_in.extend(float(pred[i] != y[i]) for i in folds[k2])
            a_list.append((np.mean(e_in) - np.mean(e_out)) ** 2)
            b_list.append(np.var(e_out, ddof=1) / len(e_out))
            errs.extend(e_in)
    cv_errs = []
    for labels in cv_layouts:                # (n,) fold labels of a plain CV run
        for k in range(K):
            test = [i for i in range(n) if labels[i] == k]
            pred = ref_fit_predict(Phi, y, [i for i in range(n) if labels[i] != k])
            cv_errs.append(sum(pred[i] != y[i] for i in test) / len(test))
    err_ncv, err_cv = np.mean(errs), np.mean(cv_errs)
    mse = max(0.0, np.mean(a_list) - np.mean(b_list))
    sd = np.std(errs, ddof=1)
    infl = 1.0 if sd == 0 else min(max(math.sqrt(mse) / (sd / math.sqrt(math.floor(n * (K - 1) / K))), 1.0),
                                   math.sqrt(K))
    se = infl * sd / math.sqrt(n)
    centre = err_ncv - (1 + ((K - 2) / K) ** 1.5) * (err_ncv - err_cv)
    z = stats.norm.ppf(1 - (1 - level) / 2)
    return centre, (centre - z * se, centre + z * se), mse, err_ncv, err_cv


def ref_bccv(Phi, y, counts, level, corrected):
    n = len(y)
    values = []
    for c in counts:
        total = 0.0
        for j in range(n):
            if c[j] == 0:
                continue
            cc = c.copy()
            cc[j] = 0
            pred = ref_fit_predict(Phi, y, rows_of(cc))
            total += c[j] * float(pred[j] != y[j])
        values.append(total / n)
    values = np.array(values)
    loo = np.mean([ref_fit_predict(Phi, y, np.delete(np.arange(n), i))[i] != y[i] for i in range(n)])
    a = (1 - level) / 2
    low, high = np.quantile(values, [a, 1 - a])
    shift = values.mean() - loo if corrected else 0.0
    return values, loo, (low - shift, high - shift)


def ref_delta_se(Phi, y, counts):
    """Err(1) and SE_del of Efron & Tibshirani (1997), eq. 40, term by term."""
    B, n = counts.shape
    Q = np.array([[float(p != t) for p, t in zip(ref_fit_predict(Phi, y, rows_of(c)), y)] for c in counts])
    E = []
    for i in range(n):
        num = sum(Q[b, i] for b in range(B) if counts[b, i] == 0)
        den = sum(1 for b in range(B) if counts[b, i] == 0)
        E.append(num / den)
    err1 = sum(E) / n
    q = [sum(Q[b, i] for i in range(n) if counts[b, i] == 0) / n for b in range(B)]
    e_n = (1 - 1 / n) ** (-n)
    D = []
    for i in range(n):
        nbar = sum(counts[b, i] for b in range(B)) / B
        D.append((2 + 1 / (n - 1)) * (E[i] - err1) / n + e_n * sum((counts[b, i] - nbar) * q[b] for b in range(B)) / B)
    return err1, math.sqrt(sum(d * d for d in D)), np.array(D)
