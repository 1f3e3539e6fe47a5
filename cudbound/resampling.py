"""Resampling: bootstrap count vectors, index tallies and cross-validation folds.

The one bootstrap of the package. Every method that resamples the data (the CUD
replicates, the .632 family, BS1/BS2) draws its count vectors here,

    nu^(b) ~ Multinomial(n, (1/n, ..., 1/n)),  b = 1, ..., B,

in one call from the caller's numpy Generator, so that the same seed gives the same
resamples whichever method asks. The nested bootstrap of BS1/BS2 draws positions inside
an outer resample and needs the indices themselves; :func:`tally` turns them into counts.
Folds of (repeated, optionally stratified) k-fold cross-validation are dealt from a
random permutation (Kohavi 1995).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_rng, check_scalar, encode_labels

__all__ = ["bootstrap_counts", "fold_assignments", "tally", "draw_counts", "draw_folds"]


def draw_counts(n: int, n_resamples: int, gen: np.random.Generator) -> np.ndarray:
    """B count vectors nu^(b) ~ Multinomial(n, (1/n, ..., 1/n)), drawn in one call (no checks)."""
    return gen.multinomial(n, np.full(n, 1.0 / n), size=n_resamples)


def bootstrap_counts(n: int, n_resamples: int,
                     rng: np.random.Generator | np.random.SeedSequence | int | None = None) -> np.ndarray:
    """B bootstrap count vectors: row b counts how often each of the n points was drawn.

    Row b is Multinomial(n, (1/n, ..., 1/n)): the counts of n draws with replacement
    (Efron 1979). All rows come from one call to ``Generator.multinomial``.

    Parameters
    ----------
    n : int
        Number of data points.
    n_resamples : int
        B.
    rng : None, int, SeedSequence or Generator

    Returns
    -------
    ndarray of shape (B, n), integers summing to n along each row

    Examples
    --------
    >>> c = bootstrap_counts(5, 3, rng=0)
    >>> c.shape, c.sum(axis=1).tolist()
    ((3, 5), [5, 5, 5])
    """
    n = check_scalar(n, "n", min_val=1)
    B = check_scalar(n_resamples, "n_resamples", min_val=1)
    return draw_counts(n, B, check_rng(rng))


def tally(idx: np.ndarray, n: int) -> np.ndarray:
    """Row-wise counts of the values 0..n-1 in an integer array of shape (..., m)."""
    lead = idx.shape[:-1]
    rows = int(np.prod(lead)) if lead else 1
    flat = (idx.reshape(rows, -1) + n * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(*lead, n)


def _fold_assignments_iv(y, k, repeats, stratified, rng):
    labels, _ = encode_labels(y, takes_pos_label=False)
    n = labels.shape[0]
    k = check_scalar(k, "k", min_val=2)
    if k > n:
        raise ValueError(f"`k` must be at most n = {n} (k = n is leave-one-out); got {k}.")
    if not isinstance(stratified, (bool, np.bool_)):
        raise ValueError(f"`stratified` must be True or False; got {stratified!r}.")
    return labels, k, check_scalar(repeats, "repeats", min_val=1), bool(stratified), check_rng(rng)


def fold_assignments(y: ArrayLike, k: int, repeats: int = 1, *, stratified: bool = True,
                     rng: np.random.Generator | np.random.SeedSequence | int | None = None) -> np.ndarray:
    """Fold labels for repeated k-fold cross-validation, shape (repeats, n), values 0..k-1.

    Unstratified: a random permutation of the points is dealt to the folds in
    turn (point at position j of the permutation goes to fold j mod k), so fold
    sizes are floor(n / k) or ceil(n / k) whether or not k divides n.
    Stratified (default): the points of class -1 in random order followed by those
    of class +1 in random order are dealt the same way; fold sizes are as above
    and each class is split as evenly as it can be (its counts per fold differ by
    at most one).

    Parameters
    ----------
    y : (n,) labels with two classes ({-1, 1}, {0, 1} or booleans)
    k : int, 2 <= k <= n
    repeats : int, default 1
    stratified : bool, default True
    rng : None, int, SeedSequence or Generator

    Returns
    -------
    ndarray of shape (repeats, n)

    References
    ----------
    Kohavi, R. (1995). IJCAI 1995 (stratified cross-validation).
    """
    labels, k, repeats, stratified, gen = _fold_assignments_iv(y, k, repeats, stratified, rng)
    return draw_folds(labels, k, repeats, stratified, gen)


def draw_folds(y: np.ndarray, k: int, repeats: int, stratified: bool, gen: np.random.Generator) -> np.ndarray:
    """The folds of :func:`fold_assignments` for labels in {-1, +1}, without checks."""
    n = y.shape[0]
    out = np.empty((repeats, n), dtype=np.int64)
    neg, pos = np.flatnonzero(y < 0), np.flatnonzero(y > 0)
    for r in range(repeats):
        order = np.concatenate([gen.permutation(neg), gen.permutation(pos)]) if stratified else gen.permutation(n)
        out[r, order] = np.arange(n) % k
    return out
