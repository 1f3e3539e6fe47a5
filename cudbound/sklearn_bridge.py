"""scikit-learn classifiers and pipelines as a cudbound basis and loss.

The CUD bound needs beta-hat to be the exact minimiser of a convex loss (Laber & Murphy 2008,
section 3). A linear scikit-learn classifier with an l2 (or no) penalty minimises an objective
that is a positive multiple of one of cudbound's mean losses (``docs/losses.md``)

    L(beta) = (1/n) sum_i l(y_i, phi_i'beta) + LAM |beta_pen|^2

so cudbound can take the estimator's place exactly. With n training rows:

==================================================  =====================================  ==============================
estimator                                           its objective over (w, b)              cudbound loss
==================================================  =====================================  ==============================
``LogisticRegression(C)`` (l2; lbfgs, newton-cg,    C sum log(1 + exp(-y t)) + |w|^2 / 2   ``logistic_ridge:1/(2Cn)``
newton-cholesky, sag, saga)
``LogisticRegression`` without penalty              sum log(1 + exp(-y t))                 ``logistic``
(``C=inf`` or ``penalty=None``)
``LogisticRegression(C, solver="liblinear")``       C sum log(...) + (|w|^2 + b^2) / 2     ``logistic_ridge:1/(2Cn):all``
``RidgeClassifier(alpha)``                          sum (y - t)^2 + alpha |w|^2            ``ridge:alpha/n``
``SVC(kernel="linear", C)``                         C sum max(0, 1 - y t) + |w|^2 / 2      ``hinge_ridge:1/(2Cn)``
``LinearSVC(loss="hinge", C)``                      C sum max(0, 1 - y t) + (|w|^2+b^2)/2  ``hinge_ridge:1/(2Cn):all``
``SGDClassifier(loss="hinge"|"log_loss", alpha)``   (1/n) sum l + alpha |w|^2 / 2          ``hinge_ridge:alpha/2``,
(``penalty="l2"``; ``None``: no penalty term)                                              ``logistic_ridge:alpha/2``
==================================================  =====================================  ==============================

(t = x'w + b. liblinear penalises the intercept as the weight of a constant feature of value
``intercept_scaling``, so only ``intercept_scaling=1`` maps exactly. With
``fit_intercept=False`` every coefficient is penalised, a constant column's too: the loss
gets ``:all``.) For ``SGDClassifier``
cudbound uses the exact minimiser of its objective, not the stochastic iterate ``coef_``.

The earlier steps of a :class:`~sklearn.pipeline.Pipeline` (``StandardScaler``,
``PolynomialFeatures``, ``PCA``, a ``ColumnTransformer`` on a DataFrame, ...) become the basis
(:class:`EstimatorBasis`), fitted on the training set X; the intercept column is cudbound's
own when the classifier fits one. Anything else raises ``ValueError`` naming what is supported.

LAM depends on n (except for SGDClassifier). A method that refits on part of the data
(cross-validation, the bootstrap) refits the estimator as its own ``fit`` would on the part's
m rows (``cudbound.refit``): LAM for m rows, and the earlier steps refitted on the part, as
``cross_val_score`` does.

>>> import numpy as np
>>> from sklearn.linear_model import LogisticRegression
>>> from sklearn.pipeline import make_pipeline
>>> from sklearn.preprocessing import StandardScaler
>>> spec = from_estimator(make_pipeline(StandardScaler(), LogisticRegression(C=0.5)), n_samples=40)
>>> spec.loss.name
'logistic_ridge:0.025'
>>> spec.basis
EstimatorBasis(StandardScaler())
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

import numpy as np
from numpy.typing import ArrayLike

from ._validation import redefined_methods
from .basis import Basis
from .losses import Loss, RidgeLoss, get_loss

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

__all__ = ["from_estimator", "EstimatorMapping", "EstimatorBasis", "SUPPORTED_ESTIMATORS", "resolve_model",
           "transformer_terms"]

SUPPORTED_ESTIMATORS = (
    "LogisticRegression (l2 penalty or none; any C; no class_weight; liblinear only with intercept_scaling=1)",
    "RidgeClassifier (any alpha; no class_weight, positive=False)",
    "SVC(kernel='linear') (any C; no class_weight)",
    "LinearSVC(loss='hinge', penalty='l2') (any C; intercept_scaling=1; no class_weight)",
    "SGDClassifier(loss='hinge' or 'log_loss', penalty='l2' or None) (any alpha; no class_weight)",
)
"""What :func:`from_estimator` accepts, as the last step of a Pipeline or alone."""

_WHY = ("The CUD bound needs beta-hat to be the exact minimiser of a convex loss that cudbound can "
        "evaluate on every bootstrap resample, so only linear classifiers whose objective is an l2-penalised "
        "(or unpenalised) hinge, logistic or squared loss are supported: ")


def _unsupported(what: str) -> ValueError:
    return ValueError(f"{what}. {_WHY}" + "; ".join(SUPPORTED_ESTIMATORS) + ".")


class EstimatorBasis(Basis):
    """phi(x) = the transform of a scikit-learn transformer (a Pipeline's earlier steps), refitted
    (a fresh clone) at every ``fit``; plus cudbound's intercept column.

    ``X`` reaches the transformer as given (a DataFrame stays one, so a ``ColumnTransformer``
    may select columns by name); the steps must be unsupervised (fitted on X alone).

    With an unpenalised intercept, columns that the transformer makes constant on the training
    set (e.g. ``PolynomialFeatures``' bias column) are dropped: the intercept carries the
    constant, so the classifier's coefficient on such a column is 0 in scikit-learn's fit too.
    With a penalised intercept (liblinear) such a column shares the constant with the
    intercept, which no cudbound loss expresses: ``fit`` refuses it.
    """

    def __init__(self, transformer: BaseEstimator | None = None, intercept: bool = True,
                 penalised_intercept: bool = False):
        self.transformer, self.intercept = transformer, bool(intercept)
        self.penalised_intercept = bool(penalised_intercept)

    @property
    def learns_from_data(self) -> bool:
        return True   # the transformer's fit, and the columns it makes constant on the training rows

    def fit(self, X: ArrayLike) -> Self:
        from sklearn.base import clone
        self.n_features_in_ = np.shape(X)[1] if np.ndim(X) == 2 else None
        if self.transformer is None:
            self.transformer_ = None
        else:
            try:
                self.transformer_ = clone(self.transformer).fit(X)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"the pipeline's earlier steps {self.transformer!r} could not be fitted on X alone "
                                 f"({exc}); they must be unsupervised transformers (no y).") from None
        cols = self._raw(X)
        self.keep_ = np.ones(cols.shape[1], dtype=bool)
        if self.intercept and cols.shape[0] > 1:
            constant = np.ptp(cols, axis=0) == 0
            if constant.any() and self.penalised_intercept:
                raise ValueError(f"{self.transformer!r} makes column(s) {list(np.flatnonzero(constant))} constant, and "
                                 f"the classifier penalises its intercept (liblinear): the constant would be shared "
                                 f"between them in a way no cudbound loss expresses. Drop the constant column (e.g. "
                                 f"PolynomialFeatures(include_bias=False)).")
            self.keep_ = ~constant
        return self

    def transform(self, X: ArrayLike) -> np.ndarray:
        if not hasattr(self, "keep_"):
            raise RuntimeError(f"{self!r} is not fitted; call fit(X) first.")
        cols = self._raw(X)[:, self.keep_]
        return np.column_stack([np.ones(cols.shape[0]), cols]) if self.intercept else cols

    def transform_terms(self, X: ArrayLike, terms: ArrayLike | None = None) -> np.ndarray:
        """The terms behind each entry of ``transform(X)`` (:meth:`cudbound.basis.Basis.transform_terms`) through
        the steps whose arithmetic is known (:func:`transformer_terms`: ``StandardScaler``, ``PCA`` and pipelines
        of them); |transform(X)| when a step's is not (the entries then count as exact)."""
        design = self.transform(X)
        try:
            t = np.abs(np.asarray(X, dtype=float)) if terms is None else np.asarray(terms, dtype=float)
        except (TypeError, ValueError):      # a DataFrame of text columns, for a ColumnTransformer
            return np.abs(design)
        raw = t if self.transformer_ is None else transformer_terms(self.transformer_, X, t)
        if raw is None or raw.shape[0] != design.shape[0] or raw.shape[1] != self.keep_.size:
            return np.abs(design)
        cols = raw[:, self.keep_]
        return np.column_stack([np.ones(cols.shape[0]), cols]) if self.intercept else cols

    def _raw(self, X):
        out = X if self.transformer_ is None else self.transformer_.transform(X)
        if hasattr(out, "toarray"):
            out = out.toarray()
        out = np.asarray(out, dtype=float)
        if out.ndim != 2:
            raise ValueError(f"the basis must be a 2-d array of features; got shape {out.shape}.")
        return out

    def __repr__(self):
        inner = "" if self.transformer is None else repr(self.transformer)
        return f"EstimatorBasis({inner}{'' if self.intercept else ', intercept=False'})"


def transformer_terms(transformer: Any, X: Any, terms: np.ndarray) -> np.ndarray | None:
    """The magnitude of the terms behind each entry of a fitted ``transformer.transform(X)``, given those
    of X's entries: (t + |mean|) / scale for a ``StandardScaler`` (the mean only if it centres), (t + |mean|)
    |V|' for a ``PCA`` (over the whitening scales if it whitens), step by step through a ``Pipeline``; None
    for any other step (nothing is known of its arithmetic). A centred score is 0 in exact arithmetic at
    the centre, or orthogonal to a component, only up to the rounding of those terms (``cudbound.ties``)."""
    from sklearn.decomposition import PCA
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    if isinstance(transformer, Pipeline):
        for _, step in transformer.steps:
            if step is None or (isinstance(step, str) and step == "passthrough"):
                continue
            step_terms = transformer_terms(step, X, terms)
            if step_terms is None:
                return None
            X, terms = step.transform(X), step_terms
        return terms
    if type(transformer) is StandardScaler:
        mean = np.abs(transformer.mean_) if transformer.with_mean else 0.0
        scale = 1.0 if transformer.scale_ is None else transformer.scale_
        return (terms + mean) / scale
    if type(transformer) is PCA:
        out = (terms + np.abs(transformer.mean_)) @ np.abs(transformer.components_.T)
        return out / np.sqrt(transformer.explained_variance_) if transformer.whiten else out
    return None


@dataclass(frozen=True)
class EstimatorMapping:
    """What a scikit-learn classifier is in cudbound's terms.

    Attributes
    ----------
    basis : EstimatorBasis (the pipeline's earlier steps, or the identity, with the intercept if fitted).
    loss : the cudbound loss whose exact minimiser is the classifier's fit.
    estimator : str, the classifier's repr.
    objective : str, its objective and how it maps onto ``loss``.
    """

    basis: EstimatorBasis
    loss: Loss
    estimator: str
    objective: str


def _split(estimator):
    try:
        from sklearn.pipeline import Pipeline
    except ImportError:  # pragma: no cover - scikit-learn is a dependency
        raise ImportError("scikit-learn is needed for `estimator=`.") from None
    if isinstance(estimator, Pipeline):
        if len(estimator.steps) < 1:
            raise ValueError("the Pipeline has no steps.")
        head = None if len(estimator.steps) == 1 else estimator.steps[0][1] if len(estimator.steps) == 2 \
            else estimator[:-1]
        last = estimator.steps[-1][1]
        if head is not None and all(step in (None, "passthrough") for _, step in estimator.steps[:-1]):
            head = None
        return head, last
    return None, estimator


def _supported_class(est) -> str:
    """The name of the supported scikit-learn class whose fit ``est`` runs.

    Decided by what the estimator computes, not by its exact class: an instance of a supported
    class whose subclasses between it and that class define no method but ``__init__`` (a
    renamed class, other defaults, extra attributes) maps like that class; a subclass that
    redefines a method (its fit, decision function, ...) is refused, as it may fit something else.
    """
    from sklearn.linear_model import LogisticRegression, RidgeClassifier, SGDClassifier
    from sklearn.svm import SVC, LinearSVC

    t = type(est)
    for cls in (LogisticRegression, RidgeClassifier, SVC, LinearSVC, SGDClassifier):
        if isinstance(est, cls):
            changed = redefined_methods(est, cls)
            if changed:
                raise _unsupported(f"{t.__name__} redefines {', '.join(changed)} of {cls.__name__}, so its fit "
                                   f"may not be {cls.__name__}'s")
            return cls.__name__
    raise _unsupported(f"{t.__name__} is not a supported scikit-learn classifier")


def _no_class_weight(est, name):
    if getattr(est, "class_weight", None) is not None:
        raise _unsupported(f"{name} with class_weight={est.class_weight!r} weights the loss by class")


def _penalty(est) -> tuple:
    """(penalised, C) of a LogisticRegression across the old (`penalty`) and new (`l1_ratio`, C=inf) API."""
    C = float(est.C)
    if not C > 0:
        raise ValueError(f"LogisticRegression's C must be positive; got {est.C!r}.")
    penalty = getattr(est, "penalty", "l2")
    if penalty == "deprecated":      # scikit-learn >= 1.8: l1_ratio and C=inf
        if float(getattr(est, "l1_ratio", 0.0) or 0.0) != 0.0:
            raise _unsupported(f"LogisticRegression with l1_ratio={est.l1_ratio!r} has an l1 penalty")
        penalty = "l2"
    if penalty is None or penalty == "none":
        return False, C
    if penalty != "l2":
        raise _unsupported(f"LogisticRegression with penalty={penalty!r} is not an l2 penalty")
    return not math.isinf(C), C


def from_estimator(estimator: BaseEstimator, n_samples: int) -> EstimatorMapping:
    """The basis and loss whose exact fit on ``n_samples`` rows is ``estimator``'s (module docstring).

    ``estimator`` may be fitted or not: only its parameters are read (a fitted one is not
    changed). Raises ValueError for an estimator or setting that has no exact counterpart.
    """
    n = int(n_samples)
    if n < 1:
        raise ValueError(f"`n_samples` must be positive; got {n_samples!r}.")
    head, est = _split(estimator)
    name = _supported_class(est)
    if hasattr(est, "_validate_params"):   # scikit-learn's own parameter checks (its fit would raise)
        from sklearn.base import clone
        clone(est)._validate_params()
    fit_intercept = bool(getattr(est, "fit_intercept", True))
    # without an intercept every coefficient is penalised, a constant column's too (":all")
    every = "" if fit_intercept else ":all"
    penalised_intercept = False
    if name == "LogisticRegression":
        _no_class_weight(est, name)
        penalised, C = _penalty(est)
        if getattr(est, "multi_class", "auto") == "multinomial":
            raise _unsupported("LogisticRegression(multi_class='multinomial') on two classes halves the penalty of "
                               "the binary objective")
        liblinear = est.solver == "liblinear"
        if liblinear and not penalised:
            raise _unsupported("LogisticRegression(solver='liblinear') always penalises the coefficients")
        penalised_intercept = liblinear and fit_intercept
        if liblinear and fit_intercept and float(est.intercept_scaling) != 1.0:
            raise _unsupported("LogisticRegression(solver='liblinear') with intercept_scaling != 1 penalises a "
                               "rescaled intercept")
        if not penalised:
            loss, objective = get_loss("logistic"), "sum log(1 + exp(-y t)): n x logistic"
        else:
            lam = 1.0 / (2.0 * C * n)
            spec = f"logistic_ridge:{lam!r}" + (":all" if liblinear else every)
            loss = get_loss(spec)
            objective = (f"C sum log(1 + exp(-y t)) + {'(|w|^2 + b^2)' if liblinear else '|w|^2'} / 2 with C = {C!r}:"
                         f" C n x {loss.name}")
    elif name == "RidgeClassifier":
        _no_class_weight(est, name)
        if getattr(est, "positive", False):
            raise _unsupported("RidgeClassifier(positive=True) constrains the coefficients")
        alpha = float(est.alpha)
        if alpha == 0:
            loss, objective = get_loss("squared"), "sum (y - t)^2: n x squared"
        else:
            loss = get_loss(f"ridge:{alpha / n!r}{every}")
            objective = f"sum (y - t)^2 + alpha |w|^2 with alpha = {alpha!r}: n x {loss.name}"
    elif name == "SVC":
        _no_class_weight(est, name)
        if est.kernel != "linear":
            raise _unsupported(f"SVC(kernel={est.kernel!r}) is not linear in a fixed basis")
        C = float(est.C)
        loss = get_loss(f"hinge_ridge:{1.0 / (2.0 * C * n)!r}")
        objective = f"C sum max(0, 1 - y t) + |w|^2 / 2 with C = {C!r}: C n x {loss.name}"
    elif name == "LinearSVC":
        _no_class_weight(est, name)
        if est.loss != "hinge" or est.penalty != "l2":
            raise _unsupported(f"LinearSVC(loss={est.loss!r}, penalty={est.penalty!r}) is not the l2-penalised hinge "
                               f"loss (use loss='hinge')")
        if fit_intercept and float(est.intercept_scaling) != 1.0:
            raise _unsupported("LinearSVC with intercept_scaling != 1 penalises a rescaled intercept")
        if est.multi_class != "ovr":
            raise _unsupported(f"LinearSVC(multi_class={est.multi_class!r}) has another penalty scale")
        if est.dual is False:
            raise _unsupported("LinearSVC(loss='hinge', dual=False) is not solved by scikit-learn")
        penalised_intercept = fit_intercept
        C = float(est.C)
        loss = get_loss(f"hinge_ridge:{1.0 / (2.0 * C * n)!r}:all")
        objective = f"C sum max(0, 1 - y t) + (|w|^2 + b^2) / 2 with C = {C!r} (liblinear): C n x {loss.name}"
    elif name == "SGDClassifier":
        _no_class_weight(est, name)
        if est.loss not in ("hinge", "log_loss") or est.penalty not in ("l2", None):
            raise _unsupported(f"SGDClassifier(loss={est.loss!r}, penalty={est.penalty!r}) is not an l2-penalised "
                               f"hinge or logistic loss")
        base = "hinge" if est.loss == "hinge" else "logistic"
        alpha = float(est.alpha)
        if est.penalty is None or alpha == 0:
            loss = get_loss(base)
            objective = f"(1/n) sum {base} loss: {loss.name}"
        else:
            loss = get_loss(f"{base}_ridge:{alpha / 2.0!r}{every}")
            objective = f"(1/n) sum {base} loss + alpha |w|^2 / 2 with alpha = {alpha!r}: {loss.name}"
        objective += " (its exact minimiser, not the stochastic iterate coef_)"
    else:  # pragma: no cover - _supported_class names one of the classes above
        raise AssertionError(name)
    if not fit_intercept and isinstance(loss, RidgeLoss):
        objective += " (no intercept: every coefficient penalised)"
    basis = EstimatorBasis(head, intercept=fit_intercept, penalised_intercept=penalised_intercept)
    return EstimatorMapping(basis=basis, loss=loss, estimator=repr(estimator), objective=objective)


def _positive_class(y):
    """scikit-learn's positive class: the larger of the two sorted labels (``classes_[1]``)."""
    values = np.unique(np.asarray(y).ravel())
    return values[-1] if len(values) == 2 else None


def resolve_model(X: ArrayLike, y: ArrayLike, basis: str | Basis | Callable[[np.ndarray], ArrayLike] | None,
                  loss: str | Loss | None, estimator: BaseEstimator | None, pos_label: Any
                  ) -> tuple[str | Basis | Callable[[np.ndarray], ArrayLike], str | Loss, Any, EstimatorMapping | None]:
    """(basis, loss, pos_label, mapping) for the public entry points: the estimator's basis and loss
    when one is given (then ``basis`` and ``loss`` must be left unset), else the given ones with
    their defaults ('linear', 'squared'); mapping is None without an estimator."""
    if estimator is None:
        return ("linear" if basis is None else basis), ("squared" if loss is None else loss), pos_label, None
    if basis is not None or loss is not None:
        raise TypeError("give either `estimator` or `basis`/`loss`: a scikit-learn estimator defines both.")
    if np.ndim(X) != 2:
        raise ValueError(f"X must be 2-dimensional (n samples x d features); got shape {np.shape(X)}.")
    mapping = from_estimator(estimator, n_samples=np.shape(X)[0])
    if pos_label is None:
        pos_label = _positive_class(y)
    return mapping.basis, mapping.loss, pos_label, mapping
