"""Point estimators of the error of a linear-in-basis classifier.

The classifier is the one of the CUD bound (``docs/method.md``): on the design
Phi (n x p, the basis applied to the features), beta minimises the surrogate loss
L(D, beta) = (1/n) sum_i nu_i l(y_i, phi_i'beta) with weights nu (all ones for the
data, bootstrap counts or 0/1 fold indicators for a refit), and
f(x) = sign(phi(x)'beta) with sign(0) = +1; labels are -1 and +1.

Estimators (each returns an :class:`ErrorEstimate`):

* :func:`resubstitution`: err = (1/n) sum_i 1{f_D(x_i) != y_i}, the training error.
* :func:`loo_bootstrap`: Err(1) (Efron 1983), the leave-one-out bootstrap.
* :func:`e632`: 0.368 err + 0.632 Err(1) (Efron 1983).
* :func:`e632plus`: the .632+ rule (Efron & Tibshirani 1997).
* :func:`cross_validation`: k-fold cross-validation, stratified and repeated.
* :func:`leave_one_out`: leave-one-out cross-validation.

:func:`estimate_error` applies a basis to raw features and dispatches by name.

Refits
------
Squared loss (and any quadratic loss) is refitted in batches: for B weight vectors
the normal equations H_b beta_b = g_b, H_b = Phi' W_b Phi, g_b = Phi' W_b y, are
formed with one matrix product and solved with one stacked ``numpy.linalg.solve``.
Other losses fall back to :func:`cudbound.fit.fit_coefficients`, one solve per refit.

Degenerate refits (documented behaviour, never an error, never a NaN):

* **One class missing** (a bootstrap sample or a training fold holding only
  labels +1, or only -1): the refit is the constant classifier that predicts the
  class present. For least squares with an intercept column this is exactly what
  the fit gives when its normal matrix is regular (y = c is then fitted by
  beta = c e_1), so for the default basis the rule only matters when the sample
  is also singular, or the basis has no intercept; and it makes losses whose
  minimiser does not exist on one class (e.g. logistic) well defined.
* **Singular normal matrix** (the sampled rows do not span R^p, e.g. fewer than p
  distinct rows): the least-squares solution whose scores Phi beta on the whole data
  have the least root mean square. The estimators work in the orthonormal coordinates
  of ``cudbound.design`` (Z = Phi T, Z'Z = n I), where that is the solution of least
  Euclidean norm: H is declared singular when its smallest eigenvalue is at most 1e-10
  times its largest, and beta = H^+ g with eigenvalues below that cut-off dropped from
  the pseudo-inverse. The rule, and so every prediction, does not depend on the units
  or origins of the features. (``_solve_normal_equations`` can also equilibrate,
  H_s = S H S with S = diag(H)^(-1/2), for a design in the user's coordinates.)
* **Failed fit** (generic losses only: the convex solver raised or returned a
  non-finite beta): the refit predicts the majority class of its weighted sample
  (+1 on a tie).

Each public function that meets such refits emits one
:class:`DegenerateResampleWarning` giving the counts, which are also stored in
the result's ``details``.

References
----------
.. [1] Efron, B. (1983). Estimating the error rate of a prediction rule: improvement
       on cross-validation. JASA 78(382), 316-331.
.. [2] Efron, B. and Tibshirani, R. (1997). Improvements on cross-validation: the
       .632+ bootstrap method. JASA 92(438), 548-560.
.. [3] Kohavi, R. (1995). A study of cross-validation and bootstrap for accuracy
       estimation and model selection. IJCAI 1995, 1137-1145.
.. [4] Laber, E. B. and Murphy, S. A. (2008). Small sample inference for
       generalization error in classification using the CUD bound. UAI 2008.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._budget import Budget
from .._deprecation import apply_renames, renamed, renames_of
from .._docstrings import fill_doc
from .._validation import check_rng, check_scalar
from ..basis import Basis
from ..design import as_prepared, prepare_data
from ..losses import Loss
from ..refit import DegenerateResampleWarning, RefitLog, Refits, refits_for
from ..resampling import Splitter, draw_counts, fold_assignments
from ..results import PointEstimateResult

__all__ = [
    "ErrorEstimate", "DegenerateResampleWarning", "resubstitution", "loo_bootstrap", "e632",
    "e632plus", "cross_validation", "leave_one_out", "estimate_error",
    "ESTIMATORS",
]

_DOC = {
    "data": """design : (n, p) array
        The design matrix Phi, full column rank.
    y : (n,) labels in {-1, +1} (or {0, 1}, booleans).""",
    "bootstrap": """loss : str or Loss
        Default squared.
    n_resamples : int, default 200
        B (ignored when ``counts`` is given).
    rng : None, int, SeedSequence or Generator
    counts : (B, n) array, optional
        Explicit bootstrap counts.""",
    "warns": """Warns
    -----
    DegenerateResampleWarning
        When some bootstrap sample has one class only or a singular normal matrix.""",
    "refs": """References
    ----------
    Efron, B. (1983). Estimating the error rate of a prediction rule: improvement on
    cross-validation. JASA 78(382), 316-331. Efron, B. and Tibshirani, R. (1997).
    Improvements on cross-validation: the .632+ bootstrap method. JASA 92(438), 548-560.""",
}
"""Parameter descriptions shared by the estimators (:func:`cudbound._docstrings.fill_doc`)."""
_DOC["warns_refs"] = _DOC["warns"] + "\n\n    " + _DOC["refs"]
_DOC["bootstrap_parameters"] = f"""Parameters
    ----------
    {_DOC["data"]}
    {_DOC["bootstrap"]}"""

@dataclass(kw_only=True, repr=False)
class ErrorEstimate(PointEstimateResult):
    """A point estimate of the generalization error: a :class:`~cudbound.results.Result`
    without an interval (:func:`cudbound.intervals` builds intervals around these estimates).

    Attributes
    ----------
    method : str
        ``"resubstitution"``, ``"loo_bootstrap"``, ``"632"``, ``"632+"``, ``"cv"`` or ``"loo"``.
    estimate : float
        The estimate, in [0, 1]. ``float(result)`` gives it too.
    n_samples : int
    details : dict
        The ingredients (training error, Err(1), no-information rate, ...), the
        numbers of resamples and of degenerate refits.
    """

    no_interval_reason = ("it is a point estimate; cudbound.intervals builds intervals around it (the paper's "
                          "baselines around .632, wald_cv around cross-validation)")

    def __float__(self) -> float:
        return float(self.estimate)

    def _repr_fields(self) -> dict:
        return {"method": self.method, "estimate": self.estimate, "n_samples": self.n_samples}


# --------------------------------------------------------------------------- resampling

# --------------------------------------------------------------------------- validation

def _refits_iv(design, y, loss) -> Refits:
    """The refits of the procedure behind ``design`` (:mod:`cudbound.refit`): a
    :class:`~cudbound.design.PreparedData` (what :func:`cudbound.intervals` passes) refits its whole
    procedure, basis included, on every part; a design matrix is fixed features, and only the
    classifier is refitted. Either way the fits run in orthonormal coordinates (``cudbound.design``:
    predictions, and so every estimate, do not depend on the units or origins of the features)."""
    return refits_for(as_prepared(design, y), loss)


def _positive_int(value, name: str, minimum: int = 1) -> int:
    return check_scalar(value, name, min_val=minimum)


def _counts_iv(counts, n: int) -> np.ndarray:
    arr = np.asarray(counts)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != n or arr.shape[0] == 0:
        raise ValueError(f"`counts` must have shape (B, n) with n = {n} (one bootstrap count vector per row); "
                         f"got shape {np.shape(counts)}.")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"`counts` must be numeric; got dtype {arr.dtype}.")
    f = arr.astype(float)
    bad = ~np.isfinite(f) | (f != np.round(f)) | (f < 0)
    if bad.any():
        b, i = map(int, np.argwhere(bad)[0])
        raise ValueError(f"`counts` must hold whole numbers >= 0; row {b}, column {i} is {arr[b, i]!r}.")
    sums = f.sum(axis=1)
    if np.any(sums != n):
        b = int(np.flatnonzero(sums != n)[0])
        raise ValueError(f"each row of `counts` must sum to n = {n} (a bootstrap resample); "
                         f"row {b} sums to {sums[b]:g}.")
    return f.astype(np.int64)


def _bootstrap_iv(design, y, loss, n_resamples, rng, counts):
    refits = _refits_iv(design, y, loss)
    n = refits.n
    if counts is None:
        B = _positive_int(n_resamples, "n_resamples")
        counts = draw_counts(n, B, check_rng(rng))
    else:
        counts = _counts_iv(counts, n)
    return refits, counts


def _resubstitution_iv(design, y, loss):
    return _refits_iv(design, y, loss)


def _loo_bootstrap_iv(design, y, loss, n_resamples, rng, counts):
    return _bootstrap_iv(design, y, loss, n_resamples, rng, counts)


def _e632_iv(design, y, loss, n_resamples, rng, counts):
    return _bootstrap_iv(design, y, loss, n_resamples, rng, counts)


def _e632plus_iv(design, y, loss, n_resamples, rng, counts):
    return _bootstrap_iv(design, y, loss, n_resamples, rng, counts)


def _folds_iv(folds, n: int) -> np.ndarray:
    arr = np.asarray(folds)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != n or arr.shape[0] == 0:
        raise ValueError(f"`folds` must have shape (repeats, n) or (n,) with n = {n}; got shape {np.shape(folds)}.")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"`folds` must hold integer fold labels; got dtype {arr.dtype}.")
    for r, row in enumerate(arr):
        if np.unique(row).size < 2:
            raise ValueError(f"`folds` row {r} has a single fold: every point would be held out at once "
                             f"and the training set would be empty. Use at least two folds.")
    return arr.astype(np.int64)


def _cross_validation_iv(design, y, loss, cv, repeats, stratified, rng, folds) -> tuple[Refits, np.ndarray]:
    refits = _refits_iv(design, y, loss)
    if folds is not None:
        return refits, _folds_iv(folds, refits.n)
    return refits, fold_assignments(refits.labels, cv, repeats, stratified=stratified, rng=rng)


def _leave_one_out_iv(design, y, loss):
    return _refits_iv(design, y, loss)


# --------------------------------------------------------------------------- computations



def _err1(wrong: np.ndarray, counts: np.ndarray):
    """Efron's Err(1) (:func:`loo_bootstrap` states it) from the (B, n) mistakes of the refits and the
    (B, n) counts. Returns (Err(1), or None when no point was left out, and n - n', the number of
    points no refit left out).
    """
    out = counts == 0
    L = out.sum(axis=0)
    keep = L > 0
    if not keep.any():
        return None, int(wrong.shape[1])
    per_point = (out & wrong).sum(axis=0)[keep] / L[keep]
    return float(per_point.mean()), int((~keep).sum())


def _predict_within(refits: Refits, weights, budget: Budget | None, *, offsets=None, minimum: int = 1,
                    cap: int | None = None) -> tuple[np.ndarray, RefitLog, int]:
    """The predictions of the refits on the rows of ``weights``, resample by resample while ``budget``
    lasts (:meth:`cudbound._budget.Budget.chunks`; all at once without a limit): ``(preds, log, used)``,
    the rows of the first ``used`` resamples. ``offsets`` (B + 1,): where each resample's rows start
    (default one row each). Each row is refitted on its own, so the rows done are those of the run
    without a limit."""
    W = np.asarray(weights, dtype=float)
    offsets = np.arange(W.shape[0] + 1) if offsets is None else np.asarray(offsets)
    parts, log, used = [], RefitLog(), 0
    for start, stop in (budget or Budget(None)).chunks(len(offsets) - 1, minimum=minimum, cap=cap):
        preds, lg = refits.predict(W[offsets[start]:offsets[stop]])
        parts.append(preds)
        log.add(lg)
        used = stop
    return (np.concatenate(parts) if parts else np.empty((0, W.shape[1]))), log, used


def _bootstrap_parts(refits: Refits, counts, budget: Budget | None = None, option: str = "n_resamples"):
    """Training error, Err(1) and the bookkeeping shared by the bootstrap estimators; under a
    ``budget``, from the first resamples the budget allowed (``details[option + "_used"]``)."""
    y = refits.labels
    beta, preds = refits.full_fit()
    train = float(np.mean(preds != y))
    refit_preds, log, used = _predict_within(refits, counts, budget)
    err1, dropped = _err1(refit_preds != y, counts[:used])
    details = {"train_error": train, "n_resamples": int(counts.shape[0]), "points_never_left_out": dropped,
               **log.as_details()}
    if budget is not None:
        budget.note(details, option, used, counts.shape[0])
    if err1 is None:   # no point was ever left out (possible only for tiny B): fall back to err
        details["err1_fallback"] = "train_error"
        err1 = train
    details["err1"] = err1
    return beta, preds, train, err1, details, log


def _e632_value(train: float, err1: float) -> float:
    return 0.368 * train + 0.632 * err1


def _e632plus_parts(y, preds, train, err1):
    """The .632+ rule of Efron & Tibshirani (1997, section 3), with its ingredients."""
    p1 = float(np.mean(y > 0))
    q1 = float(np.mean(preds > 0))
    gamma = p1 * (1.0 - q1) + (1.0 - p1) * q1
    err1p = min(err1, gamma)
    R = (err1p - train) / (gamma - train) if (err1 > train and gamma > train) else 0.0
    R = min(max(R, 0.0), 1.0)
    value = _e632_value(train, err1) + (err1p - train) * (0.368 * 0.632 * R) / (1.0 - 0.368 * R)
    weight = 0.632 / (1.0 - 0.368 * R)
    return float(value), {"gamma": gamma, "p1": p1, "q1": q1, "err1_prime": err1p,
                          "relative_overfitting_rate": R, "weight": weight}


def _cv_parts(refits: Refits, folds):
    """Pooled CV error per repeat: (1/n) sum_i 1{f_{-fold(i)}(x_i) != y_i}."""
    n, y = refits.n, refits.labels
    rows, tests = [], []
    for r, row in enumerate(folds):
        for f in np.unique(row):
            test = row == f
            rows.append(~test)
            tests.append((r, test))
    weights = np.asarray(rows, dtype=float)
    preds, log = refits.predict(weights)
    wrong = np.zeros((folds.shape[0], n), dtype=bool)
    for j, (r, test) in enumerate(tests):
        wrong[r, test] = preds[j, test] != y[test]
    per_repeat = wrong.mean(axis=1)
    return per_repeat, log


# --------------------------------------------------------------------------- public estimators

def resubstitution(design: ArrayLike, y: ArrayLike, *, loss: str | Loss = "squared") -> ErrorEstimate:
    """Resubstitution (apparent, training) error of the classifier fitted on all the data.

    err = (1/n) sum_i 1{f_D(x_i) != y_i}, f_D(x) = sign(phi(x)'beta_hat), sign(0) = +1,
    beta_hat = argmin L(D, beta) (:func:`cudbound.fit.fit_coefficients`): the centre
    of the CUD interval and the "err" of Efron (1983).

    Parameters
    ----------
    design : (n, p) array
        The design matrix Phi (basis applied to the features), full column rank.
    y : (n,) labels
        Two classes: {-1, +1}, {0, 1} or booleans (see :func:`estimate_error` for others).
    loss : str or Loss
        Surrogate loss (default squared, i.e. least squares).

    Returns
    -------
    ErrorEstimate
        ``method="resubstitution"``; ``details["coef"]`` is beta_hat.

    References
    ----------
    Efron, B. (1983). JASA 78, 316-331 (the apparent error rate, "err").
    Laber, E. B. and Murphy, S. A. (2008). UAI 2008 (the training error err_D(beta_hat)).

    Examples
    --------
    >>> import numpy as np
    >>> from cudbound.baselines import resubstitution
    >>> Phi = np.column_stack([np.ones(4), [-2.0, -1.0, 1.0, 2.0]])
    >>> resubstitution(Phi, [-1, 1, -1, 1]).estimate
    0.5
    """
    refits = _resubstitution_iv(design, y, loss)
    gamma, preds = refits.full_fit()
    details = {} if gamma is None else {"coef": refits.to_user(gamma)}   # the coefficients on the user's design
    return ErrorEstimate(method="resubstitution", estimate=float(np.mean(preds != refits.labels)),
                         n_samples=refits.n, details=details)


@fill_doc(**_DOC)
def loo_bootstrap(design: ArrayLike, y: ArrayLike, *, loss: str | Loss = "squared", n_resamples: int = 200,
                  rng: np.random.Generator | np.random.SeedSequence | int | None = None,
                  counts: ArrayLike | None = None) -> ErrorEstimate:
    """Leave-one-out bootstrap error Err(1) (Efron 1983; Efron & Tibshirani 1997).

    For B bootstrap samples with counts nu_b (refit beta_b on weights nu_b):

        Err(1) = (1 / n') sum_{i : L_i > 0} (1 / L_i) sum_{b : nu_bi = 0} 1{f_b(x_i) != y_i},

    with L_i = #{b : nu_bi = 0} the number of samples that left point i out.
    A point that no sample left out (L_i = 0) is dropped from the average, as in
    Efron (1983), and n' counts the points kept (``details["points_never_left_out"]``
    gives n - n'); with B = 200 this happens with probability about n 0.632^200,
    i.e. never in practice. If no point at all was left out (only possible for
    tiny B), Err(1) falls back to the training error (``details["err1_fallback"]``).

    Parameters
    ----------
    %(data)s
    loss : str or Loss
        Default squared; squared-loss refits are solved in one batch.
    n_resamples : int, default 200
        B, the number of bootstrap samples (ignored when ``counts`` is given).
    rng : None, int, SeedSequence or Generator
        Source of the bootstrap samples, normalised once with ``np.random.default_rng``.
    counts : (B, n) array, optional
        Explicit bootstrap counts (each row sums to n), instead of drawing them.

    Returns
    -------
    ErrorEstimate
        ``method="loo_bootstrap"``; ``details`` has train_error, err1, counts of
        dropped points and of degenerate refits (see the module notes).

    %(warns_refs)s
    """
    refits, counts = _loo_bootstrap_iv(design, y, loss, n_resamples, rng, counts)
    *_, err1, details, log = _bootstrap_parts(refits, counts)
    log.warn("loo_bootstrap")
    return ErrorEstimate(method="loo_bootstrap", estimate=err1, n_samples=refits.n, details=details)


@fill_doc(**_DOC)
def e632(design: ArrayLike, y: ArrayLike, *, loss: str | Loss = "squared", n_resamples: int = 200,
         rng: np.random.Generator | np.random.SeedSequence | int | None = None,
         counts: ArrayLike | None = None) -> ErrorEstimate:
    """The .632 bootstrap estimate (Efron 1983): 0.368 err + 0.632 Err(1).

    err is the training error (:func:`resubstitution`) and Err(1) the leave-one-out
    bootstrap error (:func:`loo_bootstrap`) on the same B bootstrap samples. This is
    the centre of the baseline intervals of Laber & Murphy (2008).

    %(bootstrap_parameters)s

    Returns
    -------
    ErrorEstimate
        ``method="632"``; ``details`` has train_error and err1.

    %(warns_refs)s

    Examples
    --------
    >>> import numpy as np
    >>> from cudbound.baselines import e632
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2)); y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, -1)
    >>> Phi = np.column_stack([np.ones(30), X])
    >>> est = e632(Phi, y, rng=1)
    >>> abs(est.estimate - (0.368 * est.details["train_error"] + 0.632 * est.details["err1"])) < 1e-15
    True
    """
    refits, counts = _e632_iv(design, y, loss, n_resamples, rng, counts)
    _, _, train, err1, details, log = _bootstrap_parts(refits, counts)
    log.warn("e632")
    return ErrorEstimate(method="632", estimate=_e632_value(train, err1), n_samples=refits.n, details=details)


@fill_doc(**_DOC)
def e632plus(design: ArrayLike, y: ArrayLike, *, loss: str | Loss = "squared", n_resamples: int = 200,
             rng: np.random.Generator | np.random.SeedSequence | int | None = None,
             counts: ArrayLike | None = None) -> ErrorEstimate:
    """The .632+ bootstrap estimate (Efron & Tibshirani 1997, section 3).

    With err the training error, Err(1) the leave-one-out bootstrap error, p1 the
    proportion of labels +1 and q1 the proportion of the fitted classifier's
    predictions (on the training points) that are +1:

    * no-information error rate (for 0-1 loss and two classes):
      gamma = p1 (1 - q1) + (1 - p1) q1;
    * Err(1)' = min(Err(1), gamma);
    * relative overfitting rate, clipped to [0, 1]:
      R' = (Err(1)' - err) / (gamma - err) if Err(1) > err and gamma > err, else 0;
    * Err(.632+) = Err(.632) + (Err(1)' - err) * 0.368 * 0.632 R' / (1 - 0.368 R'),
      with Err(.632) = 0.368 err + 0.632 Err(1) (Efron & Tibshirani's final form of the rule).

    When Err(1) <= gamma this equals (1 - w) err + w Err(1) with the .632+ weight
    w = 0.632 / (1 - 0.368 R'), which runs from 0.632 (R' = 0) to 1 (R' = 1). When
    Err(1) > gamma (so R' = 1) it is 0.632 Err(1) + 0.368 gamma.

    %(bootstrap_parameters)s

    Returns
    -------
    ErrorEstimate
        ``method="632+"``; ``details`` has train_error, err1, gamma, p1, q1,
        err1_prime, relative_overfitting_rate (R') and weight (w).

    %(warns)s

    References
    ----------
    Efron, B. and Tibshirani, R. (1997). Improvements on cross-validation: the .632+
    bootstrap method. JASA 92(438), 548-560, section 3.
    """
    refits, counts = _e632plus_iv(design, y, loss, n_resamples, rng, counts)
    _, preds, train, err1, details, log = _bootstrap_parts(refits, counts)
    log.warn("e632plus")
    value, extra = _e632plus_parts(refits.labels, preds, train, err1)
    details.update(extra)
    return ErrorEstimate(method="632+", estimate=value, n_samples=refits.n, details=details)


@renamed(k="cv")
@fill_doc(**_DOC)
def cross_validation(design: ArrayLike, y: ArrayLike, *, cv: int | Splitter = 10, repeats: int = 1,
                     stratified: bool = True,
                     loss: str | Loss = "squared",
                     rng: np.random.Generator | np.random.SeedSequence | int | None = None,
                     folds: ArrayLike | None = None) -> ErrorEstimate:
    """Repeated (stratified) k-fold cross-validation error.

    For each repeat r, the points are split into k folds (:func:`fold_assignments`:
    sizes floor(n/k) or ceil(n/k), any k in 2..n, stratified by class by default);
    each fold is predicted by the classifier refitted on the other folds, and

        CV_r = (1/n) sum_i 1{f_{-kappa_r(i)}(x_i) != y_i},   CV = (1/R) sum_r CV_r,

    i.e. the mistakes are pooled over all n held-out predictions, so folds of
    unequal size (n not divisible by k) are weighted by their size. A training set
    without both classes is handled as documented in the module notes (the refit
    predicts the class present); a test fold without both classes needs nothing.

    Parameters
    ----------
    %(data)s
    cv : int or scikit-learn splitter, default 10
        The number of folds k, 2 <= k <= n (``k`` is its old name, deprecated), or a splitter
        (``StratifiedKFold(5)``, ``RepeatedKFold(...)``, ...) whose test sets are the folds
        (:func:`cudbound.resampling.splitter_folds`; ``repeats``, ``stratified`` and ``rng`` are
        then the splitter's, and other values of them than the defaults are refused).
    repeats : int, default 1
        Number of independent fold assignments R averaged over.
    stratified : bool, default True
    loss : str or Loss
        Default squared; all R k refits are solved in one batch.
    rng : None, int, SeedSequence or Generator
        Source of the fold assignments.
    folds : (R, n) or (n,) integer array, optional
        Explicit fold labels (overrides k, repeats, stratified and rng). Each row
        needs at least two distinct labels.

    Returns
    -------
    ErrorEstimate
        ``method="cv"``; ``details`` has k, repeats, per_repeat (tuple) and the
        counts of degenerate refits.

    Warns
    -----
    DegenerateResampleWarning
        When some training set has one class only or a singular normal matrix.

    References
    ----------
    Stone, M. (1974). Cross-validatory choice and assessment of statistical predictions.
    JRSS B 36, 111-147. Kohavi, R. (1995). IJCAI 1995 (stratified, repeated k-fold CV).
    """
    refits, folds = _cross_validation_iv(design, y, loss, cv, repeats, stratified, rng, folds)
    per_repeat, log = _cv_parts(refits, folds)
    log.warn("cross_validation")
    k_used = int(np.unique(folds[0]).size)
    details = {"k": k_used, "repeats": int(folds.shape[0]), "per_repeat": tuple(float(v) for v in per_repeat),
               **log.as_details()}
    return ErrorEstimate(method="cv", estimate=float(per_repeat.mean()), n_samples=refits.n, details=details)


@fill_doc(**_DOC)
def leave_one_out(design: ArrayLike, y: ArrayLike, *, loss: str | Loss = "squared") -> ErrorEstimate:
    """Leave-one-out cross-validation error (k = n; deterministic).

    LOO = (1/n) sum_i 1{f_{-i}(x_i) != y_i}, f_{-i} refitted without point i. All n
    refits are solved in one batch. If a class has a single member, the refit
    without it sees one class only and predicts the other class (module notes).

    Parameters
    ----------
    %(data)s
    loss : str or Loss
        Default squared.

    Returns
    -------
    ErrorEstimate
        ``method="loo"``.

    Warns
    -----
    DegenerateResampleWarning
        When some refit has one class only or a singular normal matrix.

    References
    ----------
    Lachenbruch, P. A. and Mickey, M. R. (1968). Estimation of error rates in
    discriminant analysis. Technometrics 10, 1-11. Efron, B. (1983). JASA 78, 316-331.
    """
    refits = _leave_one_out_iv(design, y, loss)
    n = refits.n
    per_repeat, log = _cv_parts(refits, np.arange(n)[None, :])
    log.warn("leave_one_out")
    return ErrorEstimate(method="loo", estimate=float(per_repeat[0]), n_samples=n,
                         details={"k": n, **log.as_details()})


ESTIMATORS = {
    "resubstitution": resubstitution,
    "loo_bootstrap": loo_bootstrap,
    "632": e632,
    "632+": e632plus,
    "cv": cross_validation,
    "loo": leave_one_out,
}
"""Estimators by name; all take ``(design, y, *, loss=..., ...)``."""


def _estimate_error_iv(X, y, method, basis, pos_label):
    if not isinstance(method, str) or method not in ESTIMATORS:
        raise ValueError(f"`method` must be one of {list(ESTIMATORS)}; got {method!r}.")
    return prepare_data(X, y, basis, None, pos_label), ESTIMATORS[method]


def estimate_error(X: ArrayLike, y: ArrayLike, method: str = "632", *,
                   basis: str | Basis | Callable[[np.ndarray], ArrayLike] | None = "linear", pos_label: Any = None,
                   **options: Any) -> ErrorEstimate:
    """Any point estimator by name, on raw features: the basis is applied first.

    Parameters
    ----------
    X : (n, d) array of features.
    y : (n,) labels with two classes ({-1, 1}, {0, 1}, booleans, or any pair with ``pos_label``).
    method : {'resubstitution', 'loo_bootstrap', '632', '632+', 'cv', 'loo'}
    basis : 'linear' (intercept + identity, default), 'poly:D', 'pca:K', a callable or a Basis.
    pos_label : the label value of the positive class (+1), when not {-1, 1}/{0, 1}/booleans.
    **options
        Passed to the estimator (``loss``, ``n_resamples``, ``rng``, ``cv``, ``repeats``, ...).

    Returns
    -------
    ErrorEstimate
        With ``details["basis"]`` and ``details["label_encoding"]`` added.

    Examples
    --------
    >>> import numpy as np
    >>> from cudbound.baselines import estimate_error
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = (X[:, 0] > 0).astype(int)
    >>> 0.0 <= estimate_error(X, y, "cv", cv=5, rng=0).estimate <= 1.0
    True
    """
    data, func = _estimate_error_iv(X, y, method, basis, pos_label)
    result = func(data, None, **apply_renames(f"{func.__name__}()", renames_of(func), options))
    result.details.update(data.details())
    return result
