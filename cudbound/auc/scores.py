"""The AUC of one score vector, and DeLong's placement values behind its variance.

The AUC of scores s on labels y is the Wilcoxon-Mann-Whitney statistic

    AUC = 1 / (n+ n-) sum_{i: y_i = +1} sum_{j: y_j = -1} H(s_i - s_j),   H(t) = 1, 1/2, 0 for t >, =, < 0,

(ties count 1/2); :func:`delong_placements` gives its structural components (DeLong et al. 1988)
by Sun & Xu's (2014) midranks, on which DeLong's variance and test rest. Scores that agree to
within rounding are ties (:func:`cudbound.ties.snap_ties`, the package's one tie rule), so the AUC
does not depend on the machine that computed them.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._validation import encode_labels
from ..ties import snap_ties, tied_signs

__all__ = ["auc_score", "pair_auc", "delong_placements", "DeLongPlacements"]


def auc_score(y: ArrayLike, scores: ArrayLike) -> float:
    """The Wilcoxon-Mann-Whitney AUC of ``scores`` for labels ``y`` (two classes), ties 1/2
    (scores within rounding of each other tie: :func:`cudbound.ties.snap_ties`).

    >>> auc_score([1, 1, -1, -1], [0.9, 0.2, 0.2, 0.1])
    0.875
    """
    labels, _ = encode_labels(y, takes_pos_label=False)
    s = np.asarray(scores, dtype=float).ravel()
    if s.shape != labels.shape or not np.all(np.isfinite(s)):
        raise ValueError(f"`scores` must hold {labels.shape[0]} finite numbers, one per label.")
    return _auc(labels, s)


def _auc(labels, s) -> float:
    s = snap_ties(s)
    pos, neg = s[labels > 0], s[labels < 0]
    if pos.size == 0 or neg.size == 0:
        raise ValueError("the AUC needs both classes.")
    # ranks with ties averaged: U = sum of positive ranks - n+ (n+ + 1) / 2 (half-integers: summed exactly)
    from scipy.stats import rankdata

    ranks = rankdata(np.concatenate([pos, neg]))
    u = ranks[: pos.size].sum() - pos.size * (pos.size + 1) / 2.0
    return float(u / (pos.size * neg.size))


def pair_auc(pair_scores: ArrayLike) -> float:
    """The share of positive-negative pairs whose positive scores above its negative, ties 1/2.

    ``pair_scores`` (n_pairs, 2): row r the scores (f_i, f_j) of positive i and negative j, each
    pair scored by its own model (the leave-pair-out AUC). A pair ties when
    |f_i - f_j| <= ``TIE_RTOL`` * max |pair_scores| (:func:`cudbound.ties.tied_signs`, the
    package's one tie rule): rounding, not the data, separates such scores.

    >>> pair_auc([[0.9, 0.1], [0.2, 0.5], [0.3, 0.1 + 0.2]])
    0.5
    """
    pair = np.asarray(pair_scores, dtype=float)
    if pair.ndim != 2 or pair.shape[1] != 2 or pair.shape[0] == 0 or not np.all(np.isfinite(pair)):
        raise ValueError(f"`pair_scores` must be a non-empty (n_pairs, 2) array of finite scores; got shape "
                         f"{pair.shape}.")
    signs = tied_signs(pair[:, 0] - pair[:, 1], float(np.max(np.abs(pair))))
    return float(np.sum(signs + 1.0) / (2.0 * pair.shape[0]))


class DeLongPlacements(NamedTuple):
    """The structural components of DeLong's variance (:func:`delong_placements`), for k score vectors.

    ``auc`` (k,); ``positives`` (k, m): V10(X_i), the fraction of the n negatives scored below
    positive i (ties 1/2); ``negatives`` (k, n): V01(Y_j), the fraction of the m positives scored
    above negative j. Row r of each is score vector r.
    """

    auc: np.ndarray
    positives: np.ndarray
    negatives: np.ndarray

    def covariance(self) -> np.ndarray:
        """DeLong's (k, k) covariance of the AUCs: S10 / m + S01 / n, S10 and S01 the sample
        covariances (divisor m - 1, n - 1) of the placements of the positives and the negatives."""
        m, n = self.positives.shape[1], self.negatives.shape[1]
        if m < 2 or n < 2:
            raise ValueError(f"DeLong's variance needs at least 2 points of each class; got {m} positive and {n} "
                             f"negative.")
        return np.atleast_2d(np.cov(self.positives)) / m + np.atleast_2d(np.cov(self.negatives)) / n


def delong_placements(labels: np.ndarray, scores: ArrayLike) -> DeLongPlacements:
    """The AUCs and DeLong's placement values of k score vectors, by Sun & Xu's (2014) midranks.

    With m positives X_i and n negatives Y_j, psi(x, y) = 1, 1/2, 0 for x >, =, < y, DeLong,
    DeLong & Clarke-Pearson (1988) write AUC = (1/m) sum_i V10(X_i) = (1/n) sum_j V01(Y_j), with
    V10(X_i) = (1/n) sum_j psi(X_i, Y_j) and V01(Y_j) = (1/m) sum_i psi(X_i, Y_j). Sun & Xu read
    them off midranks, without the m n comparisons: T_Z the midranks of all m + n scores, T_X those
    of the positives among themselves, T_Y of the negatives,

        V10(X_i) = (T_Z(X_i) - T_X(X_i)) / n,   V01(Y_j) = 1 - (T_Z(Y_j) - T_Y(Y_j)) / m.

    O((m + n) log(m + n)) per score vector (sorting), vectorised over the k vectors (no loop over
    points): n = 100,000 takes a few hundredths of a second. ``labels`` in {-1, +1}; ``scores``
    (n_samples,) or (k, n_samples), finite (unchecked: the public functions check them); each
    score vector's ties are made exact first (:func:`cudbound.ties.snap_ties`). The AUC is
    sum_i (T_Z(X_i) - T_X(X_i)) / (m n), a sum of half-integers, exact whatever the order of the points.

    References
    ----------
    DeLong, E. R., DeLong, D. M. and Clarke-Pearson, D. L. (1988). Comparing the areas under two or
    more correlated receiver operating characteristic curves: a nonparametric approach.
    Biometrics 44, 837-845. Sun, X. and Xu, W. (2014). Fast implementation of DeLong's algorithm
    for comparing the areas under correlated receiver operating characteristic curves. IEEE
    Signal Processing Letters 21(11), 1389-1393.

    >>> p = delong_placements(np.array([1, 1, -1, -1]), [0.9, 0.2, 0.2, 0.1])
    >>> p.auc.tolist(), p.positives.tolist(), p.negatives.tolist()
    ([0.875], [[1.0, 0.75]], [[0.75, 1.0]])
    """
    from scipy.stats import rankdata

    s = snap_ties(np.atleast_2d(np.asarray(scores, dtype=float)))
    pos = np.asarray(labels) > 0
    x, y = s[:, pos], s[:, ~pos]
    m, n = x.shape[1], y.shape[1]
    if m == 0 or n == 0:
        raise ValueError("the AUC needs both classes.")
    tz = rankdata(np.concatenate([x, y], axis=1), axis=1)
    below = tz[:, :m] - rankdata(x, axis=1)          # negatives below each positive, ties 1/2: half-integers
    v10 = below / n
    v01 = 1.0 - (tz[:, m:] - rankdata(y, axis=1)) / m
    return DeLongPlacements(below.sum(axis=1) / (m * n), v10, v01)
