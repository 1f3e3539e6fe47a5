"""AUC under cross-validation: pooled, averaged and leave-pair-out (Suominen, Pahikkala & Salakoski 2008).

Under cross-validation the AUC can be estimated three ways:

* **averaged**: the AUC of each held-out fold, averaged over the folds (a fold with one class
  has no AUC and is skipped, with a warning);
* **pooled**: one AUC of all held-out scores together. Scores of different folds come from
  different models, whose offsets differ, so pooling is biased (usually downwards) when
  folds are small (Suominen et al.'s first pitfall);
* **leave-pair-out** (Pahikkala et al. 2008): for every positive-negative pair (i, j), train
  on the other n - 2 points and compare the two held-out scores. Every pair is scored by a
  model that saw neither point, and no cross-fold pooling happens. For regularized least
  squares the held-out scores have a closed form, so all n+ n- pairs cost one n x n inverse.

:class:`KernelRLS` is regularized least squares on -1/+1 labels (kernel ridge regression,
RLScore's conventions), a scikit-learn estimator.

References
----------
Suominen, H., Pahikkala, T. and Salakoski, T. (2008). Critical points in assessing learning
performance via cross-validation. Proceedings of AKRR 2008.
Pahikkala, T., Airola, A., Boberg, J. and Salakoski, T. (2008). Exact and efficient
leave-pair-out cross-validation for ranking RLS. AKRR 2008.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Self

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import GroupKFold

from .._deprecation import renamed
from .._registry import root_seed
from .._validation import check_data, check_features, check_scalar, redefined_methods
from .._warnings import warn
from ..refit import as_refits
from ..resampling import Splitter, cv_splitter, out_of_fold_folds, splitter_folds
from ..results import AUC, PointEstimateResult
from ..ties import decision_signs, term_scale
from .scores import _auc, pair_auc

__all__ = ["KernelRLS", "cv_auc", "lpo_auc", "CVAUCResult", "LPOAUCResult", "OneClassFoldWarning"]


_PAIRS_PER_BATCH = 64
"""Leave-pair-out refits asked of the fit-and-score at a time (the progress bar moves per batch)."""


class OneClassFoldWarning(UserWarning):
    """A cross-validation fold held out one class only: it has no AUC and was skipped."""


class KernelRLS(ClassifierMixin, BaseEstimator):
    """Regularized least squares on labels -1/+1 (kernel ridge regression), RLScore's conventions.

    Dual coefficients a = (K + regparam I)^-1 y; the score of x is sum_i a_i k(x_i, x).
    Kernels: ``"linear"``, k(x, x') = <x, x'> + bias (the bias is added to every inner
    product, which acts as an unpenalised-in-spirit intercept feature of value sqrt(bias));
    ``"gaussian"`` (alias ``"rbf"``), k(x, x') = exp(-gamma |x - x'|^2).

    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([-1, -1, 1, 1])
    >>> KernelRLS(regparam=0.1).fit(X, y).predict(X).tolist()
    [-1, -1, 1, 1]
    """

    def __init__(self, regparam: float = 1.0, kernel: str = "linear", bias: float = 1.0, gamma: float = 1.0):
        self.regparam = regparam
        self.kernel = kernel
        self.bias = bias
        self.gamma = gamma

    def _kernel(self, A, B):
        kind = self.kernel
        if kind == "linear":
            return A @ B.T + float(self.bias)
        if kind in ("gaussian", "rbf"):
            d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
            return np.exp(-float(self.gamma) * np.maximum(d2, 0.0))
        raise ValueError(f"`kernel` must be 'linear', 'gaussian' or 'rbf'; got {kind!r}.")

    def _check_params(self):
        check_scalar(self.regparam, "regparam", numbers.Real, min_val=0.0, include_boundaries="neither")
        check_scalar(self.bias, "bias", numbers.Real, min_val=0.0)
        check_scalar(self.gamma, "gamma", numbers.Real, min_val=0.0, include_boundaries="neither")

    def fit(self, X: ArrayLike, y: ArrayLike) -> Self:
        self._check_params()
        X, labels, encoding = check_data(X, y, takes_pos_label=False)
        self.X_fit_ = X
        self.classes_ = np.array([encoding.negative, encoding.positive])
        K = self._kernel(X, X)
        self.dual_coef_ = scipy.linalg.solve(K + float(self.regparam) * np.eye(len(labels)), labels,
                                             assume_a="pos")
        return self

    def _kernel_to_fit(self, X) -> np.ndarray:
        X = check_features(X)
        if not hasattr(self, "dual_coef_"):
            raise RuntimeError("KernelRLS is not fitted; call fit(X, y) first.")
        return self._kernel(X, self.X_fit_)

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        return self._kernel_to_fit(X) @ self.dual_coef_

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The class of sign(score), sign(0) = +1 within rounding (:func:`cudbound.ties.decision_signs`,
        the scale of each score sum_i |a_i k(x_i, x)|)."""
        K = self._kernel_to_fit(X)
        signs = decision_signs(K @ self.dual_coef_, term_scale(K, self.dual_coef_))
        return np.where(signs > 0, self.classes_[1], self.classes_[0])


@dataclass(kw_only=True, repr=False)
class CVAUCResult(PointEstimateResult):
    """What :func:`cv_auc` returns, a :class:`~cudbound.results.Result` without an interval
    (``method`` ``"cv_auc"``, ``quantity`` ``"AUC"``).

    ``estimate``: the pooled or averaged AUC (``pooling`` says which); ``fold_auc``: each fold's AUC
    (NaN when skipped), repetition after repetition; ``folds``: the fold label of every row;
    ``scores``: every row's held-out score (``folds`` and ``scores`` of shape (repeats, n) for a
    repeated splitter, else (n,)).
    """

    no_interval_reason = ("the cross-validated AUC is a point estimate: its folds share training points, so the "
                          "spread of the fold AUCs (fold_auc) is no standard error, and no interval is computed")

    method: str = "cv_auc"
    quantity: str = AUC
    pooling: str
    fold_auc: np.ndarray
    folds: np.ndarray
    scores: np.ndarray
    n_skipped_folds: int = 0

    def _repr_fields(self) -> dict:
        return {"estimate": self.estimate, "pooling": self.pooling, "n_folds": int(self.fold_auc.size),
                "n_skipped_folds": self.n_skipped_folds}

    def _extra_dict(self) -> dict:
        return {"pooling": self.pooling, "n_folds": int(self.fold_auc.size), "n_skipped_folds": self.n_skipped_folds}


@dataclass(kw_only=True, repr=False)
class LPOAUCResult(PointEstimateResult):
    """What :func:`lpo_auc` returns, a :class:`~cudbound.results.Result` without an interval
    (``method`` ``"lpo_auc"``, ``quantity`` ``"AUC"``).

    ``estimate``: the leave-pair-out AUC over ``n_pairs`` positive-negative pairs; ``computation``:
    how the held-out scores were computed, ``"closed form"`` (KernelRLS) or ``"refits"``.
    """

    no_interval_reason = ("the leave-pair-out AUC is a point estimate: its pairs share points, and no interval "
                          "is computed")

    method: str = "lpo_auc"
    quantity: str = AUC
    n_pairs: int
    computation: str
    pair_scores: np.ndarray | None = field(repr=False, default=None)

    def _repr_fields(self) -> dict:
        return {"estimate": self.estimate, "n_pairs": self.n_pairs, "computation": self.computation}

    def _extra_dict(self) -> dict:
        return {"n_pairs": self.n_pairs, "computation": self.computation}


def _folds(cv, X, labels, groups, root):
    """The (repeats, n) fold labels of ``cv``: a number of folds (grouped by ``groups``, or
    stratified and dealt from the out-of-fold stream of ``root``,
    :func:`cudbound.resampling.out_of_fold_folds`), a splitter
    (:func:`cudbound.resampling.splitter_folds`), or one fold label per row."""
    n = X.shape[0]
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        k = check_scalar(cv, "cv", min_val=2, max_val=n)
        if groups is None:
            return out_of_fold_folds(labels, k, root).reshape(1, n)
        cv = GroupKFold(n_splits=k)
    elif not hasattr(cv, "split") and np.ndim(cv) == 1 and np.shape(cv) == (n,):   # a fold label per row
        return np.unique(np.asarray(cv), return_inverse=True)[1].astype(np.int64).reshape(1, n)
    return splitter_folds(cv_splitter(cv), labels, X, groups)


@renamed(model="estimator")
def cv_auc(estimator: BaseEstimator, X: ArrayLike, y: ArrayLike, *, cv: int | Splitter | ArrayLike = 5,
           pooling: str = "averaged", groups: ArrayLike | None = None,
           rng: np.random.Generator | np.random.SeedSequence | int | None = None, pos_label: Any = None) -> CVAUCResult:
    """Cross-validated AUC, ``pooling="averaged"`` (per fold, then the mean) or ``"pooled"``.

    ``cv``: a number of folds (grouped by ``groups`` when given, so that related rows stay in one
    fold; otherwise stratified, dealt from the out-of-fold stream of ``rng``,
    :func:`cudbound.resampling.out_of_fold_folds`, so that the same ``rng`` gives the folds of
    :func:`cudbound.auc.auc_interval` and of the comparisons on out-of-fold predictions of
    :func:`cudbound.compare.compare`), a scikit-learn splitter (a repeated one,
    ``RepeatedStratifiedKFold``, gives every fold of every repetition: the averaged AUC is their
    mean, the pooled one the mean of each repetition's pooled AUC), or a fold label per row. ``estimator`` is any scikit-learn estimator with ``fit`` and
    ``decision_function`` (``model`` is its old name, deprecated); it is cloned and refitted on each
    training part.

    >>> import numpy as np
    >>> X = np.arange(12.0)[:, None]; y = np.where(X[:, 0] > 5.5, 1, -1)
    >>> cv_auc(KernelRLS(), X, y, cv=3, rng=0)
    CVAUCResult(estimate=1, pooling='averaged', n_folds=3, n_skipped_folds=0)
    """
    if pooling not in ("averaged", "pooled"):
        raise ValueError(f"`pooling` must be 'averaged' or 'pooled'; got {pooling!r}.")
    X, labels, _ = check_data(X, y, pos_label=pos_label)
    return _cross_validated_auc(estimator, X, labels, cv=cv, pooling=pooling, groups=groups, root=root_seed(rng))


def _cross_validated_auc(estimator: BaseEstimator, X: np.ndarray, labels: np.ndarray, *, cv: int | Splitter | ArrayLike,
                         pooling: str, groups: ArrayLike | None, root: np.random.SeedSequence) -> CVAUCResult:
    """:func:`cv_auc` on checked features and labels in {-1, +1}, a number of folds dealt from the
    out-of-fold stream of ``root`` (the call's root seed, ``cudbound._registry.root_seed(rng)``), so
    that :func:`cudbound.auc.auc_interval` draws its folds and its method from one root."""
    folds = _folds(cv, X, labels, groups, root)
    refits = as_refits(estimator, X, labels, name="the estimator")
    scores = np.empty(folds.shape)
    per_fold = []
    for r in range(folds.shape[0]):
        tests = folds[r][None, :] == np.arange(int(folds[r].max()) + 1)[:, None]
        values, _, _ = refits.fit_score((~tests).astype(float), tests)   # refitted whole without each fold
        if values is None:
            raise ValueError(f"{type(estimator).__name__} gives no scores (neither decision_function nor "
                             f"predict_proba): it has no AUC.")
        for test, row in zip(tests, values):
            scores[r, test] = row[test]
            per_fold.append(_auc(labels[test], scores[r, test]) if np.unique(labels[test]).size == 2 else np.nan)
    fold_auc = np.asarray(per_fold)
    skipped = int(np.isnan(fold_auc).sum())
    if pooling == "pooled":
        value = float(np.mean([_auc(labels, row) for row in scores]))
    else:
        if skipped == fold_auc.size:
            raise ValueError("every fold holds one class only: no averaged AUC; use more data or fewer folds.")
        if skipped:
            warn(f"{skipped} of {fold_auc.size} folds held out one class only and were skipped in the averaged "
                 f"AUC.", OneClassFoldWarning)
        value = float(np.nanmean(fold_auc))
    one = folds.shape[0] == 1
    return CVAUCResult(estimate=value, n_samples=len(labels), pooling=pooling, fold_auc=fold_auc,
                       folds=folds[0] if one else folds, scores=scores[0] if one else scores, n_skipped_folds=skipped)


def _lpo_closed_form(model, X, labels):
    """Held-out scores of every positive-negative pair for kernel RLS: with G = (K + lambda I)^-1
    and a = G y, the model trained without {i, j} scores them y_S - G_SS^-1 a_S (S = (i, j))."""
    model._check_params()
    K = model._kernel(X, X)
    G = scipy.linalg.inv(K + float(model.regparam) * np.eye(X.shape[0]))
    a = G @ labels
    pos, neg = np.flatnonzero(labels > 0), np.flatnonzero(labels < 0)
    i, j = np.repeat(pos, neg.size), np.tile(neg, pos.size)
    gii, gjj, gij = G[i, i], G[j, j], G[i, j]
    det = gii * gjj - gij * gij
    # [f_i, f_j] = y_S - G_SS^-1 a_S, G_SS^-1 = [[gjj, -gij], [-gij, gii]] / det
    fi = labels[i] - (gjj * a[i] - gij * a[j]) / det
    fj = labels[j] - (-gij * a[i] + gii * a[j]) / det
    fj = np.where(np.all(X[i] == X[j], axis=1), fi, fj)   # equal rows score alike; the two forms need not round alike
    return np.column_stack([fi, fj])


@renamed(model="estimator")
def lpo_auc(estimator: BaseEstimator, X: ArrayLike, y: ArrayLike, *, progress: bool = False,
            pos_label: Any = None) -> LPOAUCResult:
    """Leave-pair-out AUC: each positive-negative pair scored by a model trained without both.

    Exact and without refits for :class:`KernelRLS` (closed form); any other scikit-learn
    ``estimator`` with ``decision_function`` is refitted once per pair (n+ n- fits; ``progress``
    shows a bar). The AUC is :func:`~cudbound.auc.scores.pair_auc` of the pairs' scores: a pair whose
    two scores agree to ``cudbound.ties.TIE_RTOL`` of the largest |score| counts as a tie, 1/2
    (rounding, not the data, separates them). ``model`` is the old name of ``estimator``, deprecated.
    """
    X, labels, _ = check_data(X, y, pos_label=pos_label)
    if isinstance(estimator, KernelRLS) and not redefined_methods(estimator, KernelRLS):  # a subclass that changes the fit: refitted
        pair = _lpo_closed_form(estimator, X, labels)
        method = "closed form"
    else:
        pos, neg = np.flatnonzero(labels > 0), np.flatnonzero(labels < 0)
        i, j = np.repeat(pos, neg.size), np.tile(neg, pos.size)
        pair = np.empty((i.size, 2))
        refits = as_refits(estimator, X, labels, name="the estimator")
        bar = None
        if progress:
            from tqdm.auto import tqdm
            bar = tqdm(total=i.size, desc="leave-pair-out refits", unit="pair", leave=False)
        try:
            for start in range(0, i.size, _PAIRS_PER_BATCH):
                rows = np.arange(start, min(i.size, start + _PAIRS_PER_BATCH))
                held = np.zeros((rows.size, X.shape[0]), dtype=bool)
                held[np.arange(rows.size), i[rows]] = held[np.arange(rows.size), j[rows]] = True
                values, _, _ = refits.fit_score((~held).astype(float), held)   # refitted whole without the pair
                if values is None:
                    raise ValueError(f"{type(estimator).__name__} gives no scores (neither decision_function nor "
                                     f"predict_proba): it has no AUC.")
                pair[rows, 0], pair[rows, 1] = values[np.arange(rows.size), i[rows]], values[np.arange(rows.size), j[rows]]
                if bar is not None:
                    bar.update(rows.size)
        finally:
            if bar is not None:
                bar.close()
        method = "refits"
    if pair.shape[0] == 0:
        raise ValueError("the leave-pair-out AUC needs both classes.")
    return LPOAUCResult(estimate=pair_auc(pair), n_samples=len(labels), n_pairs=int(pair.shape[0]), computation=method,
                        pair_scores=pair)
