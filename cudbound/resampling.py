"""Resampling: bootstrap count vectors and indices, index tallies and cross-validation folds.

The package's bootstrap draws. The one bootstrap: the methods that
resample the data by weights (the CUD replicates, the .632 family, BCCV, the .632+ delta
method, the centre of BS1/BS2) draw count vectors,

    nu^(b) ~ Multinomial(n, (1/n, ..., 1/n)),  b = 1, ..., B,

in one call from the caller's numpy Generator (:func:`draw_counts`, :func:`bootstrap_counts`),
so that the same seed gives the same resamples whichever method asks. Two callers need the
indices themselves, and draw them from their Generator in their own way, kept as it is so that
a seed keeps its numbers: the nested bootstrap of BS1/BS2 draws positions inside an outer
resample by one call to ``Generator.integers`` (:func:`draw_indices`; :func:`tally` turns
indices into counts), and the AUC's stratified bootstrap draws each class's rows in batches
(:func:`draw_indices_by_row`, floor(u n) from ``Generator.random``, which consumes the stream
row by row, so that batches of rows give the rows drawn at once). The three draws are the same
distribution (n draws with replacement), not the same numbers for one seed.

Folds of (repeated, optionally stratified) k-fold cross-validation are dealt from a
random permutation (Kohavi 1995); every function that cross-validates takes them as ``cv``,
a number of folds (dealt here) or a scikit-learn splitter (:func:`cv_splitter`,
:func:`splitter_folds`). The random stream of a named consumer (:func:`stream`) is the
registries' (``cudbound._registry``), exported here.
"""
from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike

from ._deprecation import renamed
from ._registry import generator, root_seed, stream
from ._validation import check_rng, check_scalar, encode_labels

__all__ = ["bootstrap_counts", "fold_assignments", "tally", "draw_counts", "draw_indices", "draw_indices_by_row",
           "draw_folds", "cv_splitter", "splitter_folds", "folds_or_count", "deal_folds", "stream",
           "OUT_OF_FOLD_STREAM", "out_of_fold_folds"]


class Splitter(Protocol):
    """A cross-validation splitter (scikit-learn's ``split(X, y, groups)`` -> (train, test) index pairs)."""

    def split(self, X: Any, y: Any = ..., groups: Any = ...) -> Iterable[tuple[np.ndarray, np.ndarray]]: ...


def cv_splitter(cv: Any) -> Splitter | None:
    """None when ``cv`` is a number of folds (the caller checks it and deals the folds itself, as
    :func:`fold_assignments` does); otherwise ``cv`` as a scikit-learn splitter, through
    ``sklearn.model_selection.check_cv`` (a splitter, or an iterable of (train, test) index pairs).
    Anything else is a ValueError that says what ``cv`` may be.

    >>> from sklearn.model_selection import KFold
    >>> cv_splitter(5) is None, type(cv_splitter(KFold(3))).__name__
    (True, 'KFold')
    """
    if isinstance(cv, (numbers.Real, np.number)):
        return None
    if not isinstance(cv, (str, bytes, dict)) and (hasattr(cv, "split") or isinstance(cv, Iterable)):
        from sklearn.model_selection import check_cv
        if hasattr(cv, "split"):
            return check_cv(cv)
        pairs = list(cv)
        if pairs and all(isinstance(p, (tuple, list)) and len(p) == 2 for p in pairs):
            return check_cv(pairs)
    raise ValueError(f"`cv` must be a number of folds, a scikit-learn splitter (e.g. StratifiedKFold(5)) or a "
                     f"list of (train, test) index pairs; got {cv!r}.")


def splitter_folds(splitter: Splitter, y: np.ndarray, X: ArrayLike | None = None,
                   groups: ArrayLike | None = None) -> np.ndarray:
    """The fold labels of a splitter's test sets, shape (repeats, n): a repetition ends where a test
    set holds a row already tested, and every repetition must test every row once (KFold,
    StratifiedKFold, RepeatedStratifiedKFold, LeaveOneOut, ...; not ShuffleSplit). ``groups`` is
    passed to the splitter (GroupKFold).

    >>> from sklearn.model_selection import RepeatedKFold
    >>> splitter_folds(RepeatedKFold(n_splits=2, n_repeats=3, random_state=0), np.array([1, -1, 1, -1])).shape
    (3, 4)
    """
    n = y.shape[0]
    X = np.zeros((n, 1)) if X is None else X
    if not hasattr(splitter, "split"):          # (train, test) pairs
        splitter = cv_splitter(splitter)  # type: ignore[assignment]
    rows, current, f = [], np.full(n, -1, dtype=np.int64), 0
    for _, test in splitter.split(X, y, groups):
        test = np.asarray(test, dtype=np.int64)
        if test.size and np.any(current[test] >= 0):       # a row tested again: the next repetition
            rows.append(current)
            current, f = np.full(n, -1, dtype=np.int64), 0
        current[test] = f
        f += 1
    rows.append(current)
    folds = np.asarray(rows)
    if np.any(folds < 0):
        raise ValueError("the splitter `cv` leaves some rows in no test fold (or tests a row twice in one "
                         "repetition); each repetition must test every row once, as KFold does.")
    if np.any(folds.max(axis=1) < 1):
        raise ValueError("the splitter `cv` must make at least 2 folds; got 1.")
    return folds


def draw_counts(n: int, n_resamples: int, gen: np.random.Generator) -> np.ndarray:
    """B count vectors nu^(b) ~ Multinomial(n, (1/n, ..., 1/n)), drawn in one call (no checks)."""
    return gen.multinomial(n, np.full(n, 1.0 / n), size=n_resamples)


def draw_indices(n: int, size: int | tuple[int, ...], gen: np.random.Generator) -> np.ndarray:
    """Indices in 0..n-1 drawn uniformly with replacement, of shape ``size``, in one call to
    ``gen.integers(0, n, size=size)`` (no checks): the last axis of length n is one bootstrap
    sample of positions."""
    return gen.integers(0, n, size=size)


def draw_indices_by_row(n: int, rows: int, gen: np.random.Generator) -> np.ndarray:
    """``rows`` bootstrap samples of n indices, shape (rows, n): floor(u n) for u from
    ``gen.random((rows, n))`` (no checks). The stream is consumed row by row, so drawing the rows
    in batches gives the rows drawn at once."""
    return np.floor(gen.random((rows, n)) * n).astype(np.intp)


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


def folds_or_count(cv: Any, y: np.ndarray, X: ArrayLike | None, check_count: Callable[[Any], int],
                   carried: Mapping[str, tuple[Any, Any]] = {}) -> int | np.ndarray:
    """What a function's input validation makes of its ``cv``: a number of folds, checked by
    ``check_count`` (the folds are dealt later from the caller's stream, by :func:`deal_folds`), or
    a splitter's fold labels (:func:`splitter_folds`), shape (repeats, n).

    ``carried``: the caller's arguments that a splitter carries itself (name -> (value, default):
    ``repeats``, ``stratified``, ``rng``); with a splitter, a value other than the default is
    refused instead of being ignored.
    """
    splitter = cv_splitter(cv)
    if splitter is None:
        return check_count(cv)
    given = [name for name, (value, default) in carried.items() if value is not default and value != default]
    if given:
        raise ValueError(f"`cv` is a splitter, which carries its own {', '.join(carried)}: leave "
                         f"{', '.join(f'`{g}`' for g in given)} at the default, or set it in the splitter.")
    return splitter_folds(splitter, y, X)


def deal_folds(cv: int | np.ndarray, y: np.ndarray, repeats: int, stratified: bool,
               gen: np.random.Generator) -> np.ndarray:
    """The (repeats, n) fold labels of :func:`folds_or_count`'s answer: dealt by :func:`draw_folds`
    for a number of folds, a splitter's as they are."""
    return cv if isinstance(cv, np.ndarray) else draw_folds(y, cv, repeats, stratified, gen)


def _fold_assignments_iv(y, cv, repeats, stratified, rng):
    labels, _ = encode_labels(y, takes_pos_label=False)
    n = labels.shape[0]

    def check_count(k):
        k = check_scalar(k, "cv", min_val=2)
        if k > n:
            raise ValueError(f"`cv` must be at most n = {n} (cv = n is leave-one-out); got {k}.")
        return k
    cv = folds_or_count(cv, labels, None, check_count,
                        {"repeats": (repeats, 1), "stratified": (stratified, True), "rng": (rng, None)})
    if not isinstance(stratified, (bool, np.bool_)):
        raise ValueError(f"`stratified` must be True or False; got {stratified!r}.")
    return labels, cv, check_scalar(repeats, "repeats", min_val=1), bool(stratified), check_rng(rng)


@renamed(k="cv")
def fold_assignments(y: ArrayLike, cv: int | Splitter, repeats: int = 1, *, stratified: bool = True,
                     rng: np.random.Generator | np.random.SeedSequence | int | None = None) -> np.ndarray:
    """Fold labels for repeated k-fold cross-validation, shape (repeats, n), values 0..k-1.

    ``cv`` is the number of folds k (``k`` is its old name, deprecated), or a scikit-learn
    splitter, whose test sets give the folds (:func:`splitter_folds`; ``repeats``, ``stratified``
    and ``rng`` are then the splitter's, and other values of them than the defaults are refused).

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
    cv : int, 2 <= k <= n, or a scikit-learn splitter
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
    labels, folds_or_k, repeats, stratified, gen = _fold_assignments_iv(y, cv, repeats, stratified, rng)
    return deal_folds(folds_or_k, labels, repeats, stratified, gen)


OUT_OF_FOLD_STREAM = "out_of_fold"
"""The name of the one random stream of the folds of out-of-fold predictions: ``cv_auc``,
``auc_interval`` and the comparisons on out-of-fold predictions of ``cudbound.compare`` deal their
K stratified folds from it (:func:`out_of_fold_folds`), so that the same ``rng`` and K give the same
folds in each; being a stream of its own (:func:`stream`), no other method changes them."""


def out_of_fold_folds(y: np.ndarray, k: int, root: np.random.SeedSequence) -> np.ndarray:
    """The (n,) fold labels of a call's out-of-fold predictions: ``k`` stratified folds
    (:func:`draw_folds`) dealt from the stream :data:`OUT_OF_FOLD_STREAM` of ``root``, the call's
    root seed (``cudbound._registry.root_seed(rng)``). Labels in {-1, +1}, ``k`` checked by the caller.

    >>> y = np.array([1, -1] * 5)
    >>> np.array_equal(out_of_fold_folds(y, 5, root_seed(0)), out_of_fold_folds(y, 5, root_seed(0)))
    True
    """
    return draw_folds(y, k, 1, True, generator(root, OUT_OF_FOLD_STREAM))[0]


def draw_folds(y: np.ndarray, k: int, repeats: int, stratified: bool, gen: np.random.Generator) -> np.ndarray:
    """The folds of :func:`fold_assignments` for labels in {-1, +1}, without checks."""
    n = y.shape[0]
    out = np.empty((repeats, n), dtype=np.int64)
    neg, pos = np.flatnonzero(y < 0), np.flatnonzero(y > 0)
    for r in range(repeats):
        order = np.concatenate([gen.permutation(neg), gen.permutation(pos)]) if stratified else gen.permutation(n)
        out[r, order] = np.arange(n) % k
    return out
