"""Refitting a learning procedure on part of the data: the package's one fit-and-score.

A *procedure* is what a user fits: a basis and a loss (:class:`Procedure`), a scikit-learn
classifier or pipeline that :mod:`cudbound.sklearn_bridge` maps exactly onto a basis and a loss,
or any other scikit-learn classifier. Every method that refits on part of the data
(cross-validation folds, bootstrap resamples, nested CV, BCCV, 5x2cv, repeated splits,
leave-pair-out) refits the whole procedure on that part, as scikit-learn's ``cross_val_score``
does: the basis (the centre, scales and components of ``pca:K`` / ``zpca:K``, a pipeline's
earlier steps) and the classifier are fitted on the part's rows only, then every one of the n
points is scored. No held-out row shapes the features a part is fitted on.

Parts are given as weights: a (B, n) array of whole numbers >= 0, row b the number of copies of
each point in part b (bootstrap counts, or 0/1 training indicators). Part b is the multiset of
rows repeated by their counts, of size m_b = sum_i w_bi, and its fit minimises the mean form of
the loss on it,

    (1/m_b) sum_i w_bi l(y_i, phi_b(x_i)'beta) + penalty,

phi_b the basis fitted on part b. A loss given by name keeps its penalty as given
(``'ridge:0.1'`` has lam = 0.1 on every part); a scikit-learn classifier is refitted as its own
``fit`` would be on the part's rows, so that its ``C`` (or ``alpha``) keeps its meaning: a mapped
one through :func:`cudbound.sklearn_bridge.from_estimator` with m_b rows (solved exactly by
:func:`cudbound.fit.fit_coefficients`), any other by ``clone(estimator).fit``.

How, with the same result:

* a basis that learns nothing from the data (``linear``, ``poly:D``, a row-wise function;
  :attr:`cudbound.basis.Basis.learns_from_data` is False) gives the same design whatever the
  part, so the design is formed once and all the refits of one loss are solved in batches
  (:class:`DesignRefits`);
* a basis that learns is refitted per part (:class:`ProcedureRefits`), in batches for the squared
  loss (the basis by its batched form, the least squares by the compiled loop of
  :mod:`cudbound.optim.squared_parts`), the smooth ones and the hinge;
* a smooth loss (logistic, exponential, their ridge forms, a user's margin loss with derivatives)
  is solved for all parts at once by damped Newton (:mod:`cudbound.optim.smooth_parts`),
  warm-started from the fit on all n points, to rounding (the one-part path, cvxpy polished by
  Newton, agrees to its own accuracy, about 1e-8 of the scores' scale). A part the batched solve
  does not certify (no convergence in 100 steps, a Hessian singular on the unpenalised directions,
  or, for a loss that tends to 0, a minimiser whose existence the multipliers do not prove and
  the fit's linear program does not confirm, :func:`cudbound.fit.separated_points`) takes the
  one-part path, :func:`cudbound.fit.fit_coefficients`: so the parts declared without a minimiser
  are the fit's, and the rules below hold unchanged;
* the hinge loss and its ridge forms (``hinge``, ``hinge_ridge:LAM[:all]``, scikit-learn's ``LinearSVC`` and
  ``SVC(kernel="linear")`` through their mapping) are solved for all parts at once by
  :func:`cudbound.optim.hinge_parts.hinge_parts` (a smoothed hinge by Newton's method, the face of its
  minimiser solved exactly and certified), warm-started from the fit on all n points: the fit's minimiser
  (:mod:`cudbound.fit`: the unique one, else the one of least norm in orthonormal coordinates), to rounding.
  The one-part path reaches it only to its solvers' accuracy (for the ridge forms about 1e-4 of the scores'
  scale: an interior-point solve and a least-norm second solve within a slack of 1e-10), so on data with
  exact ties (a decision value 0 in exact arithmetic) the batched path follows the tie rule where the
  one-part path's signs are its solver's. A part not certified takes the one-part path;
* a scikit-learn classifier given as a procedure (``compare``, the AUC functions) is cloned and
  fitted per part (:class:`EstimatorRefits`); its scores are ``decision_function`` (else the
  positive class's ``predict_proba``). The interval methods, which need the exact loss of the fit
  (``intervals(X, y, procedure=estimator)``, :func:`as_mapped_procedure`), refit its mapping
  instead (:func:`refits_for`): the same objective, solved exactly.

Degenerate parts (documented behaviour, never an error, never a NaN; counted in a
:class:`RefitLog` and reported by one :class:`DegenerateResampleWarning`):

* **one class** (a part holding only +1 or only -1): the constant classifier of that class;
* **singular normal matrix** (quadratic losses; the part's rows do not span the basis): the
  least-squares solution whose scores on all n points have the least root mean square, i.e.
  the least-norm solution in orthonormal coordinates (:func:`solve_normal_equations`);
* **failed fit** (the convex solver raised, e.g. no minimiser on separable data, or the
  refitted basis gives a rank-deficient design): the weighted majority class (+1 on a tie); a
  scikit-learn classifier whose own ``fit`` raises is an error naming the part.

Predicted labels are the signs of the decision values with sign(0) = +1 (``docs/method.md``), by the
package's one tie rule (:mod:`cudbound.ties`: a value within 1e-10 of the magnitude of its terms is 0).
:func:`fit_and_score` is the one public entry; the classes serve the package's estimators.

References
----------
Pedregosa, F. et al. (2011). Scikit-learn: machine learning in Python. JMLR 12, 2825-2830
(``cross_validate``: the estimator, transformers included, refitted on every training part).
"""
from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_data, encode_labels
from ._warnings import warn
from .basis import design_terms, with_terms
from .design import (PenalisedLoss, PreparedData, RankDeficientError, is_margin_loss, penalty_factor, prepare_data,
                     reparametrise)
from .fit import fit_coefficients, gradient_terms, labels_balance, predict_signs, separated_points
from .losses import HingeLoss, Loss, RidgeLoss, SquaredLoss, _overrides, get_loss, same_math
from .optim.hinge_parts import hinge_parts
from .optim.smooth_parts import CONVERGED, StackedParts, newton_parts, separation_excluded
from .sklearn_bridge import from_estimator
from .ties import INPUT_RTOL, TIE_RTOL, decision_signs, rounded_terms, snap_zeros, term_scale

__all__ = ["Procedure", "fit_and_score", "refits_for", "as_refits", "as_procedure", "as_mapped_procedure",
           "takes_procedure", "estimator_scores", "Refits", "DesignRefits", "ProcedureRefits",
           "EstimatorRefits", "RefitLog", "DegenerateResampleWarning", "solve_normal_equations", "SINGULAR_RTOL"]

_F = TypeVar("_F", bound=Callable[..., Any])

SINGULAR_RTOL = 1e-10
"""A normal matrix with eigenvalue ratio at most this is treated as singular."""

_BATCH = 8192
"""Refits solved per stacked linear-algebra call (bounds the memory to a few MB per n = 100)."""

_BATCH_VALUES = 1 << 21
"""Numbers per part-batch of a learning basis's refits (n (d + 1) per part): about 16 MB an array."""

_FULL_RANK_MARGIN = 1e-6
"""A refitted design whose least singular value (columns at unit norm) exceeds this fraction of its
largest is of full rank under :func:`cudbound.design.reparametrise`'s rule (every pivot of the pivoted
QR is at least the least singular value, the first at most the largest, and this margin is far above
:data:`cudbound.design.RANK_RTOL` and above the rounding of the singular values, which are taken from
the eigenvalues of A'A); the others are decided by that rule, one part at a time."""


class DegenerateResampleWarning(RuntimeWarning):
    """A bootstrap sample or training fold gave a degenerate refit (one class only, a singular
    normal matrix, or a failed fit); the documented fallback was used."""


@dataclass(frozen=True)
class Procedure:
    """The package's classifier as a learning procedure: sign(phi(x)' beta), beta minimising ``loss``
    on the basis ``basis`` (defaults 'linear' and 'squared', as :func:`cudbound.cud_interval`), or the
    basis and loss of a scikit-learn ``estimator`` (:mod:`cudbound.sklearn_bridge`; then leave
    ``basis`` and ``loss`` unset). Refitted whole on every part (module docstring).

    >>> Procedure(basis="poly:2", loss="hinge")
    Procedure(basis='poly:2', loss='hinge', estimator=None)
    """

    basis: Any = None
    loss: Any = None
    estimator: Any = None


@dataclass
class RefitLog:
    """Counts of refits and of degenerate ones, accumulated over batches."""

    refits: int = 0
    one_class: int = 0
    singular: int = 0
    failed: int = 0

    def add(self, other: RefitLog) -> None:
        self.refits += other.refits
        self.one_class += other.one_class
        self.singular += other.singular
        self.failed += other.failed

    @property
    def degenerate(self) -> int:
        return self.one_class + self.singular + self.failed

    def as_details(self) -> dict:
        return {"refits": self.refits, "one_class_refits": self.one_class,
                "singular_refits": self.singular, "failed_refits": self.failed}

    def warn(self, what: str) -> None:
        """One :class:`DegenerateResampleWarning` naming ``what`` and the counts (none without a degenerate refit)."""
        if not self.degenerate:
            return
        parts = []
        if self.one_class:
            parts.append(f"{self.one_class} had only one class (the refit predicts that class)")
        if self.singular:
            parts.append(f"{self.singular} had a singular normal matrix (minimum scaled-norm "
                         f"least-squares solution used)")
        if self.failed:
            parts.append(f"{self.failed} failed to fit, e.g. because the loss has no minimiser on a linearly "
                         f"separable resample (the refit predicts the sample's majority class)")
        warn(f"{what}: of {self.refits} refits, " + "; ".join(parts) + ".", DegenerateResampleWarning)


def regular_bound(p: int) -> float:
    """c_p such that det(H / trace(H)) > c_p proves lambda_min(H) > SINGULAR_RTOL lambda_max(H) for a
    symmetric PSD p x p H of positive trace t: by AM-GM on the other p - 1 eigenvalues,
    det(H) <= lambda_min ((t - lambda_min) / (p - 1))^(p-1) <= lambda_min (t / (p - 1))^(p-1), and
    lambda_max <= t; so c_p = SINGULAR_RTOL (p - 1)^-(p-1) (SINGULAR_RTOL for p = 1). Scaled by the
    trace, the determinant neither overflows nor underflows with the system's size."""
    return SINGULAR_RTOL * float(max(p - 1, 1)) ** -(p - 1)


def solve_normal_equations(H: np.ndarray, g: np.ndarray, *, equilibrate: bool = True
                           ) -> tuple[np.ndarray, np.ndarray]:
    """Solve the stacked systems H_b beta_b = g_b (H_b symmetric PSD), with the singular rule.

    H_b is singular when lambda_min(H_s) <= SINGULAR_RTOL lambda_max(H_s), H_s = S H_b S with
    S = diag(H_b)^(-1/2) (``equilibrate=False``: S = I, for a design in orthonormal coordinates);
    then beta = S H_s^+ S g with the eigenvalues below the cut-off dropped (least S^-1-norm).
    Returns (beta (B, p), singular (B,) bool).
    """
    d = np.einsum("bii->bi", H)
    s = 1.0 / np.sqrt(np.where(d > 0.0, d, 1.0)) if equilibrate else np.ones_like(d)
    Hs = H * s[:, :, None] * s[:, None, :]
    gs = g * s
    # A cheap proof of regularity (one batched LU); only the other systems need their eigenvalues.
    p = H.shape[-1]
    singular = np.zeros(H.shape[0], dtype=bool)
    trace = np.einsum("bii->b", Hs)
    positive = trace > 0.0
    scaled_det = np.linalg.det(Hs / np.where(positive, trace, 1.0)[:, None, None])
    unsure = np.flatnonzero(~(positive & (scaled_det > regular_bound(p))))
    if unsure.size:
        ev = np.linalg.eigvalsh(Hs[unsure])           # ascending
        singular[unsure] = ev[:, 0] <= SINGULAR_RTOL * np.maximum(ev[:, -1], 0.0)
    beta_s = np.empty_like(gs)
    reg = ~singular
    if reg.any():
        beta_s[reg] = np.linalg.solve(Hs[reg], gs[reg][..., None])[..., 0]
    if singular.any():
        lam, V = np.linalg.eigh(Hs[singular])
        cut = SINGULAR_RTOL * np.maximum(lam[:, -1:], 0.0)
        inv = np.where(lam > cut, 1.0 / np.where(lam > cut, lam, 1.0), 0.0)
        coef = np.einsum("bji,bj->bi", V, gs[singular]) * inv       # V' g / lambda
        beta_s[singular] = np.einsum("bij,bj->bi", V, coef)
    return beta_s * s, singular


def _weights_iv(weights, n: int) -> np.ndarray:
    W = np.asarray(weights, dtype=float)
    if W.ndim == 1:
        W = W[None, :]
    if W.ndim != 2 or W.shape[1] != n:
        raise ValueError(f"`weights` must have shape (B, n) with n = {n}; got shape {np.shape(weights)}.")
    if not np.all(np.isfinite(W)) or np.any(W < 0) or np.any(W != np.round(W)):
        raise ValueError("`weights` must hold whole numbers >= 0 (bootstrap counts or 0/1 training indicators).")
    return W


def _one_class(W: np.ndarray, y: np.ndarray):
    """(one, has_pos): parts holding one class only, and whether each holds the class +1."""
    has_pos = W @ (y > 0) > 0
    has_neg = W @ (y < 0) > 0
    return ~(has_pos & has_neg), has_pos


def _constant(W: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The decision value +1 or -1 of the weighted majority class of each part (+1 on a tie)."""
    return np.where(W @ y >= 0.0, 1.0, -1.0)


class Refits:
    """Refits of one procedure on parts of one data set (``n`` points, ``labels`` -1.0 / +1.0).

    :meth:`decision` is the one fit-and-score; :meth:`predict` its signs; :meth:`full_fit` the
    predictions of the fit on all n points (the fit every interval is centred on).
    """

    n: int
    labels: np.ndarray
    X: Any   # the features the procedure reads (what a scikit-learn splitter is given)

    def scored(self, weights: ArrayLike) -> tuple[np.ndarray, np.ndarray, RefitLog]:
        """(B, n) decision values at every point of the procedure refitted on each part, the magnitude
        of the terms of each (broadcastable to them: the scale of the tie rule,
        :func:`cudbound.ties.decision_signs`), and the log."""
        raise NotImplementedError

    def decision(self, weights: ArrayLike) -> tuple[np.ndarray, RefitLog]:
        """(B, n) decision values at every point of the procedure refitted on each part, and the log."""
        values, _, log = self.scored(weights)
        return values, log

    def predict(self, weights: ArrayLike) -> tuple[np.ndarray, RefitLog]:
        """(B, n) predicted labels sign(decision), sign(0) = +1, by the one tie rule, and the log."""
        values, scale, log = self.scored(weights)
        return decision_signs(values, scale), log

    def fit_score(self, weights: ArrayLike, rows: ArrayLike | None = None
                  ) -> tuple[np.ndarray | None, np.ndarray, RefitLog]:
        """(scores, predictions, log) of one set of refits, both from one fit per part (``rows``, the
        points each part is asked to score, lets a refit that scores point by point skip the others;
        here every point is scored)."""
        values, scale, log = self.scored(weights)
        return values, decision_signs(values, scale), log

    def full_fit(self) -> tuple[np.ndarray | None, np.ndarray]:
        """(coef, predictions) of the procedure fitted on all n points: its coefficients in the
        orthonormal coordinates of the design (None for a scikit-learn classifier) and its (n,)
        predicted labels."""
        raise NotImplementedError

    def to_user(self, coef: np.ndarray) -> np.ndarray:
        """The coefficients of :meth:`full_fit` on the user's design."""
        raise NotImplementedError


class DesignRefits(Refits):
    """Refits on a fixed design in orthonormal coordinates (``cudbound.design``), in batches.

    Squared loss: the normal equations H_b beta_b = g_b, H_b = Z' W_b Z, g_b = Z' W_b y, formed
    with one matrix product and solved by one stacked solve; other quadratic losses from their
    quadratic forms; a smooth loss (:func:`_smooth_base`) by damped Newton and the hinge and its ridge
    forms (:func:`_hinge_base`) by :func:`cudbound.optim.hinge_parts.hinge_parts`, on all parts at once
    (:meth:`_iterative`), a part either does not certify falling back to :func:`cudbound.fit.fit_coefficients`;
    any other loss by :func:`cudbound.fit.fit_coefficients`, one solve a part.
    ``loss`` is the loss in those coordinates (``Reparametrisation.loss``). Weights enter the
    loss's (1/n) sum_i w_i l_i as given: the caller makes it the part's mean (:func:`_part_weights`).
    ``terms`` (default |design|) is the magnitude of the terms each entry of the design was computed from,
    ``Reparametrisation.Z_terms`` for Z: the tie rule's scale of a decision value is ``terms`` |gamma|
    (:func:`cudbound.fit.predict_signs`).
    """

    def __init__(self, design: np.ndarray, y: np.ndarray, loss: Loss, terms: np.ndarray | None = None) -> None:
        self.design, self.labels, self.loss, self.X = design, y, loss, design
        self.terms = np.abs(design) if terms is None else np.abs(np.asarray(terms, dtype=float))
        n, p = design.shape
        self.n = n
        if same_math(loss, SquaredLoss):
            self.kind = "squared"
            self._outer = (design[:, :, None] * design[:, None, :]).reshape(n, p * p)
            self._yphi = design * y[:, None]
        elif loss.is_quadratic:
            self.kind = "quadratic"
        elif (base := _smooth_base(loss)) is not None:
            self.kind = "smooth"
            self._base = base
            self._M = None if base is loss else penalty_factor(loss, design)
            self._free = loss.unpenalised_directions(design)
        elif (base := _hinge_base(loss)) is not None:
            self.kind = "hinge"
            self._M = None if base is loss else penalty_factor(loss, design)
            self._unpenalised = None if base is loss else loss.unpenalised_directions(design)
            self._groups = np.unique(np.column_stack([y, design]), axis=0, return_inverse=True)[1].ravel()
        else:
            self.kind = "generic"

    def full_fit(self) -> tuple[np.ndarray | None, np.ndarray]:
        if labels_balance(self.loss, self.design, self.labels, np.ones(self.n), self.terms):
            gamma = np.zeros(self.design.shape[1])           # 0 minimises exactly (cudbound.fit's rule)
        elif self.kind == "hinge" and self._all_points[1]:    # the fit's minimiser, certified (cudbound.fit's)
            gamma = self._all_points[0]
        else:
            gamma = fit_coefficients(self.design, self.labels, self.loss, terms=self.terms)   # as for CUD
        return gamma, predict_signs(self.design, gamma, self.terms)

    def scored(self, weights: ArrayLike) -> tuple[np.ndarray, np.ndarray, RefitLog]:
        weights = np.asarray(weights, dtype=float)
        B, n = weights.shape
        out, scale = np.empty((B, n)), np.ones((B, n))
        log = RefitLog(refits=B)
        for start in range(0, B, _BATCH):
            stop = min(B, start + _BATCH)
            out[start:stop] = self._decision_batch(weights[start:stop], log, scale[start:stop])
        return out, scale, log

    def _decision_batch(self, W: np.ndarray, log: RefitLog, scale: np.ndarray) -> np.ndarray:
        """The decision values of a batch of parts; ``scale`` (a view) receives ``terms`` |beta| of each fit."""
        y = self.labels
        one, has_pos = _one_class(W, y)
        values = np.empty(W.shape)
        if one.any():
            values[one] = np.where(has_pos[one], 1.0, -1.0)[:, None]
            log.one_class += int(one.sum())
        fit = ~one
        if not fit.any():
            return values
        Wf = W[fit] if one.any() else W
        if self.kind in ("generic", "smooth", "hinge"):
            values[fit], scale[fit] = (self._generic if self.kind == "generic" else self._iterative)(Wf, log)
            return values
        p = self.design.shape[1]
        if self.kind == "squared":
            H = (Wf @ self._outer).reshape(-1, p, p)
            g = snap_zeros(Wf @ self._yphi, Wf @ self.terms)   # 0 within rounding is 0 (ties.snap_zeros)
        else:
            forms = [self.loss.quadratic_form(self.design, y, w) for w in Wf]
            H = np.stack([f[0] for f in forms])
            g = snap_zeros(np.stack([f[1] for f in forms]),
                           np.stack([gradient_terms(self.loss, self.terms, w) for w in Wf]))
        beta, singular = solve_normal_equations(H, g, equilibrate=False)  # the design is orthonormal
        log.singular += int(singular.sum())
        values[fit] = beta @ self.design.T
        scale[fit] = np.abs(beta) @ self.terms.T
        return values

    def _iterative(self, Wf: np.ndarray, log: RefitLog) -> tuple[np.ndarray, np.ndarray]:
        """A smooth or hinge loss's parts all at once (:meth:`_minimisers`), warm-started from the fit on all n
        points; the parts it does not certify by :meth:`_generic`."""
        out, scale = np.empty(Wf.shape), np.ones(Wf.shape)
        n, p = self.design.shape
        per = max(1, _BATCH_VALUES // (p * (p + n)))
        for start in range(0, Wf.shape[0], per):
            W = Wf[start:start + per]
            gamma, ok = self._minimisers(W, np.broadcast_to(self._start, (W.shape[0], p)))
            zero = labels_balance(self.loss, self.design, self.labels, W, self.terms)   # 0 minimises exactly
            gamma[zero], ok[zero] = 0.0, True
            rows = np.arange(start, start + W.shape[0])
            out[rows[ok]] = gamma[ok] @ self.design.T
            scale[rows[ok]] = np.abs(gamma[ok]) @ self.terms.T
            if not ok.all():
                out[rows[~ok]], scale[rows[~ok]] = self._generic(W[~ok], log)
        return out, scale

    def _minimisers(self, W: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(gamma, ok): the parts' minimisers. The hinge's by :func:`cudbound.optim.hinge_parts.hinge_parts`, ok
        where certified. A smooth loss's by Newton, ok where converged and, for a loss that tends to 0
        with unpenalised directions, a minimiser exists by the fit's own rule: certified from the
        multipliers (:func:`separation_excluded`: then the rule's linear program finds no separated point),
        else asked of that linear program (:func:`cudbound.fit.separated_points`; a separated point or an
        undecided program leaves the part to the one-part path, which declares it as before)."""
        if self.kind == "hinge":
            return hinge_parts(self.design, self.labels, W, self._M, start, free=self._unpenalised, groups=self._groups)
        p = self.design.shape[1]
        parts = StackedParts(self.design, self.labels, W, self._M, self._base)
        gamma, status = newton_parts(parts, start, free=self._free,
                                     stop_separating=self.loss.tends_to_zero and self._free.shape[1] == p)
        ok = status == CONVERGED
        if self.loss.tends_to_zero and self._free.shape[1] and ok.any():
            c1, _ = parts.take(ok).derivatives(gamma[ok])
            rows = (self.design @ self._free) * self.labels[:, None]
            certified = separation_excluded(rows, W[ok], -c1 * self.labels)
            for j in np.flatnonzero(ok)[~certified]:
                mask = separated_points(self.design, self.labels, self.loss, W[j])
                ok[j] = mask is not None and not mask.any()
        return gamma, ok

    @functools.cached_property
    def _all_points(self) -> tuple[np.ndarray, bool]:
        """(gamma, ok): :meth:`_minimisers` on all n points (weights 1) from 0."""
        n, p = self.design.shape
        gamma, ok = self._minimisers(np.ones((1, n)), np.zeros((1, p)))
        return gamma[0], bool(ok[0])

    @functools.cached_property
    def _start(self) -> np.ndarray:
        """The certified minimiser on all n points (weights 1) from 0, the parts' warm start; 0 if none."""
        gamma, ok = self._all_points
        return gamma if ok else np.zeros_like(gamma)

    def _generic(self, Wf: np.ndarray, log: RefitLog) -> tuple[np.ndarray, np.ndarray]:
        """One :func:`cudbound.fit.fit_coefficients` per part (the one-part path); a solver failure is the
        failed-fit fallback, the weighted majority class."""
        out, scale = np.empty(Wf.shape), np.ones(Wf.shape)
        for j, w in enumerate(Wf):
            try:
                beta = fit_coefficients(self.design, self.labels, self.loss, weights=w, terms=self.terms)
                ok = bool(np.all(np.isfinite(beta)))
            except Exception:  # noqa: BLE001 - any solver failure takes the documented fallback
                ok = False
            if ok:
                out[j] = self.design @ beta
                scale[j] = term_scale(self.terms, beta)
            else:
                log.failed += 1
                out[j] = 1.0 if np.dot(w, self.labels) >= 0.0 else -1.0
        return out, scale


def _smooth_base(loss: Loss) -> Loss | None:
    """The margin loss l when ``loss`` is (1/n) sum_i w_i l(y_i, z_i'gamma), or that plus a ridge penalty
    gamma'Q gamma (:class:`~cudbound.losses.RidgeLoss`, or one in orthonormal coordinates), with l's
    pointwise derivatives and no minimiser of its own; else None (quadratic losses, the hinge, user
    losses given as a whole)."""
    base = cast(Any, loss).base if type(loss) in (RidgeLoss, PenalisedLoss) else loss
    if loss.is_quadratic or base.is_quadratic or hasattr(loss, "minimiser") or hasattr(base, "minimiser"):
        return None
    return base if is_margin_loss(base) and _overrides(base, "derivatives") else None


def _hinge_base(loss: Loss) -> Loss | None:
    """The hinge loss when ``loss`` is it, or it plus a ridge penalty (:class:`~cudbound.losses.RidgeLoss`, or
    one in orthonormal coordinates), the built-in hinge's own math; else None."""
    base = cast(Any, loss).base if type(loss) in (RidgeLoss, PenalisedLoss) else loss
    return base if same_math(base, HingeLoss) else None


def _orthonormal_parts(Phi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(Z, R, D, full) of a stack of (n, p) designs: full, whether each is clearly of full rank (least
    singular value of its unit-column form above :data:`_FULL_RANK_MARGIN` times the largest), and for
    those Z = sqrt(n) Q, R and the column norms D with Phi D^-1 = Q R (the coordinates of
    :func:`cudbound.design.reparametrise`)."""
    n = Phi.shape[1]
    amax = np.max(np.abs(Phi), axis=1, keepdims=True)
    amax = np.where(amax > 0, amax, 1.0)
    D = (amax * np.sqrt(np.einsum("gnp,gnp->gp", Phi / amax, Phi / amax))[:, None, :])[:, 0, :]
    D = np.where(D > 0, D, 1.0)
    full = np.all(np.isfinite(Phi), axis=(1, 2))
    A = Phi[full] / D[full][:, None, :]
    ev = np.linalg.eigvalsh(A.transpose(0, 2, 1) @ A)            # squared singular values, ascending
    full[np.flatnonzero(full)[~(ev[:, 0] > _FULL_RANK_MARGIN ** 2 * ev[:, -1])]] = False
    Q, R = np.linalg.qr(Phi[full] / D[full][:, None, :], mode="reduced")
    return np.sqrt(n) * Q, R, D[full], full


def _penalty_masks(loss: RidgeLoss, Phi: np.ndarray) -> np.ndarray:
    """(G, p) ``loss.penalty_mask`` of each design of a stack, asked once per pattern of columns that are
    constant and non-zero (all the mask depends on)."""
    constant = np.all(Phi == Phi[:, :1, :], axis=1) & (Phi[:, 0, :] != 0)
    _, first, inverse = np.unique(constant, axis=0, return_index=True, return_inverse=True)
    return np.array([loss.penalty_mask(Phi[i]) for i in first])[inverse.ravel()]


def _penalised(loss: Loss) -> bool:
    """Whether the loss's minimiser changes when its weights are scaled (a penalty term)."""
    return isinstance(loss, RidgeLoss) or hasattr(loss, "penalty_matrix")


def _part_weights(W: np.ndarray, loss: Loss) -> np.ndarray:
    """Weights that make the (1/n)-mean of ``loss`` the mean over each part: w n / m_b. Only a
    penalised loss needs it (an unpenalised one has the same minimiser for any positive scale, and
    its weights are left as they are)."""
    if not _penalised(loss):
        return W
    m = W.sum(axis=1, keepdims=True)
    return W * (W.shape[1] / np.where(m > 0, m, 1.0))


def _rows(X, idx: np.ndarray):
    """Rows ``idx`` of X (an array, or a DataFrame by position)."""
    return X.iloc[idx] if hasattr(X, "iloc") else X[idx]


class ProcedureRefits(Refits):
    """A basis and a loss refitted whole on each part: the basis fitted on the part's rows (repeated
    by their counts), the design of all n points formed with it, the classifier fitted on the part.

    ``loss_for(m)`` is the loss of a part of m rows (the same loss for a loss given by name; the
    mapped loss of a scikit-learn classifier fitted on m rows). A basis that learns nothing is
    formed once and its refits are batched per loss (:class:`DesignRefits`).
    """

    def __init__(self, data: PreparedData, loss_for: Callable[[int], Loss]) -> None:
        self.data, self.loss_for = data, loss_for
        self.X, self.labels, self.n = data.X, data.labels, data.labels.shape[0]
        self._full = DesignRefits(data.Z, data.labels, data.rep.loss(loss_for(self.n)), data.rep.Z_terms)
        self._by_loss: dict[str, DesignRefits] = {}
        self.learns = data.basis.learns_from_data

    def full_fit(self) -> tuple[np.ndarray | None, np.ndarray]:
        return self._full.full_fit()

    def to_user(self, coef: np.ndarray) -> np.ndarray:
        return self.data.rep.to_user(coef)

    def scored(self, weights: ArrayLike) -> tuple[np.ndarray, np.ndarray, RefitLog]:
        W = _weights_iv(weights, self.n)
        m = W.sum(axis=1).astype(np.int64)
        if not self.learns:
            return self._fixed_basis(W, m)
        out, scale = np.empty(W.shape), np.empty(W.shape)
        log = RefitLog()
        done = self._batched_squared(W, m, out, scale, log)
        done = self._batched_iterative(W, m, out, scale, log, done)
        for b in np.flatnonzero(~done):
            out[b], scale[b], lg = self._one_part(W[b])
            log.add(lg)
        return out, scale, log

    def _batched_squared(self, W: np.ndarray, m: np.ndarray, out: np.ndarray, scale: np.ndarray,
                         log: RefitLog) -> np.ndarray:
        """Refit at once the parts whose loss is the (unpenalised) squared loss, their basis refitted
        by its batched form (:meth:`cudbound.basis.Basis.refit_designs`); fills ``out``/``scale`` and
        returns which parts it did (one-class parts included). The others are refitted one by one."""
        done, has_pos = _one_class(W, self.labels)
        if done.any():
            out[done], scale[done] = np.where(has_pos[done], 1.0, -1.0)[:, None], 1.0
            log.refits += int(done.sum())
            log.one_class += int(done.sum())
        if not isinstance(self.X, np.ndarray) or self.X.ndim != 2:
            return done
        per = max(1, _BATCH_VALUES // (self.n * (self.X.shape[1] + 1)))
        for size in np.unique(m[~done]):
            if not same_math(self.loss_for(int(size)), SquaredLoss):
                continue
            idx = np.flatnonzero(~done & (m == size))
            for start in range(0, idx.size, per):
                chunk = idx[start:start + per]
                done[chunk] = self._squared_chunk(W[chunk], out, scale, chunk, log)
        return done

    def _squared_chunk(self, W: np.ndarray, out: np.ndarray, scale: np.ndarray, rows: np.ndarray,
                       log: RefitLog) -> np.ndarray:
        """Least squares on parts of one size: Phi_g from the batched basis, then the compiled
        :func:`cudbound.optim.squared_parts.squared_part_fits`: Z_g = sqrt(n) Q_g (Phi_g D_g^-1 = Q_g R_g,
        the orthonormal coordinates of :func:`cudbound.design.reparametrise`) and the normal equations
        Z_g' W_g Z_g gamma = Z_g' W_g y with the singular rule of :func:`solve_normal_equations`. A part whose
        design is not clearly of full rank (singular-value ratio <= :data:`_FULL_RANK_MARGIN`;
        reparametrise's pivoted QR decides it exactly) is left to the one-part path."""
        G = W.shape[0]
        try:
            got = with_terms(self.data.basis.refit_designs(self.X, W))
        except (ValueError, np.linalg.LinAlgError):
            got = None
        if got is None:
            return np.zeros(G, dtype=bool)
        Phi, ok, terms = got
        if not ok.any():
            return ok
        from .optim.squared_parts import NOT_FITTED, SINGULAR, squared_part_fits

        fits, scales, status = squared_part_fits(np.ascontiguousarray(Phi, dtype=np.float64),
                                                 np.ascontiguousarray(terms, dtype=np.float64), W,
                                                 np.ascontiguousarray(self.labels, dtype=np.float64), ok,
                                                 _FULL_RANK_MARGIN, SINGULAR_RTOL, regular_bound(Phi.shape[2]),
                                                 TIE_RTOL, INPUT_RTOL)
        done = status != NOT_FITTED
        out[rows[done]] = fits[done]
        scale[rows[done]] = scales[done]
        log.refits += int(done.sum())
        log.singular += int((status == SINGULAR).sum())
        return done

    def _fixed_basis(self, W: np.ndarray, m: np.ndarray):
        """The design does not change with the part: batched refits, one batch per loss (per m when
        the loss depends on the part's size)."""
        out, scale = np.empty(W.shape), np.empty(W.shape)
        log = RefitLog()
        losses = {size: self.loss_for(int(size)) for size in np.unique(m)}
        groups: dict[str, list[int]] = {}
        for size, loss in losses.items():
            groups.setdefault(loss.name, []).extend(np.flatnonzero(m == size).tolist())
        for rows in groups.values():
            idx = np.asarray(sorted(rows))
            loss = losses[m[idx[0]]]
            out[idx], scale[idx], lg = self._design_refits(loss).scored(_part_weights(W[idx], loss))
            log.add(lg)
        return out, scale, log

    def _design_refits(self, loss: Loss) -> DesignRefits:
        """The refits of ``loss`` on the design of all n points, one per loss name, kept (a smooth loss's
        warm start is computed once)."""
        if loss.name == self._full.loss.name:
            return self._full
        if loss.name not in self._by_loss:
            self._by_loss[loss.name] = DesignRefits(self.data.Z, self.labels, self.data.rep.loss(loss),
                                                    self.data.rep.Z_terms)
        return self._by_loss[loss.name]

    def _batched_iterative(self, W: np.ndarray, m: np.ndarray, out: np.ndarray, scale: np.ndarray, log: RefitLog,
                           done: np.ndarray) -> np.ndarray:
        """Refit at once the parts not yet done whose loss is smooth (:func:`_smooth_base`) or the hinge
        (:func:`_hinge_base`): the basis refitted on each (:meth:`_part_designs`), then a part whose design is
        bitwise the full data's is solved in the full data's coordinates (:class:`DesignRefits`, as the one-part
        path would), the others in their own (:meth:`_stacked_iterative`). Fills ``out``/``scale``; returns
        ``done`` with the parts it did."""
        p = self.data.design.shape[1]
        per = max(1, _BATCH_VALUES // (self.n * (2 * p + 1)))
        for size in np.unique(m[~done]):
            loss = self.loss_for(int(size))
            if _smooth_base(loss) is None and _hinge_base(loss) is None:
                continue
            idx = np.flatnonzero(~done & (m == size))
            for start in range(0, idx.size, per):
                chunk = idx[start:start + per]
                Phi, ok, terms = self._part_designs(W[chunk])
                same = ok & np.all(Phi == self.data.design, axis=(1, 2)) if Phi.shape[1:] == self.data.design.shape \
                    else np.zeros(chunk.size, dtype=bool)
                if same.any():
                    out[chunk[same]], scale[chunk[same]], lg = self._design_refits(loss).scored(
                        _part_weights(W[chunk[same]], loss))
                    log.add(lg)
                    done[chunk[same]] = True
                other = np.flatnonzero(ok & ~same)
                if other.size:
                    values, scales, good = self._stacked_iterative(Phi[other], W[chunk[other]], loss, terms[other])
                    out[chunk[other[good]]], scale[chunk[other[good]]] = values[good], scales[good]
                    log.refits += int(good.sum())
                    done[chunk[other[good]]] = True
        return done

    def _part_designs(self, W: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """((G, n, p) designs of all n points under the basis refitted on each part, (G,) ok, (G, n, p) the terms
        behind the designs' entries): the basis's batched form (:meth:`cudbound.basis.Basis.refit_designs`), else
        one fit per part as :meth:`_one_part` makes it; a part whose fit raises or gives another number of columns
        than the full data's is not ok."""
        if isinstance(self.X, np.ndarray) and self.X.ndim == 2:
            try:
                got = with_terms(self.data.basis.refit_designs(self.X, W))
            except (ValueError, np.linalg.LinAlgError):
                got = None
            if got is not None:
                return got
        G, (n, p) = W.shape[0], self.data.design.shape
        Phi, ok, terms = np.zeros((G, n, p)), np.zeros(G, dtype=bool), np.zeros((G, n, p))
        for g, w in enumerate(W):
            try:
                basis = copy.deepcopy(self.data.basis).fit(_rows(self.X, np.repeat(np.arange(n), w.astype(np.int64))))
                design = np.asarray(basis.transform(self.X), dtype=float)
            except (RankDeficientError, ValueError, np.linalg.LinAlgError):
                continue
            if design.shape == (n, p):
                Phi[g], ok[g], terms[g] = design, True, design_terms(basis, self.X, design)
        return Phi, ok, terms

    def _stacked_iterative(self, Phi: np.ndarray, W: np.ndarray, loss: Loss, design_terms: np.ndarray
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(values, scales, good) of a smooth or hinge loss on parts with their own designs ``Phi`` (G, n, p) (the
        terms behind their entries ``design_terms``, :meth:`cudbound.basis.Basis.transform_terms`): each
        in the orthonormal coordinates of :func:`cudbound.design.reparametrise` (Z = Phi T, T = sqrt(n) D^-1 R^-1
        from Phi D^-1 = Q R; a design not clearly of full rank, :data:`_FULL_RANK_MARGIN`, is not good), a ridge
        penalty |M gamma|^2 with M = sqrt(lam) J T, warm-started from the scores of the fit on all n points
        (gamma_0 = Z'f / n), all solved by one run per pattern of penalised columns (Newton's for a smooth loss,
        :func:`cudbound.optim.hinge_parts.hinge_parts` for the hinge); good where certified as in
        :meth:`DesignRefits._minimisers`."""
        G, n, p = Phi.shape
        values, scales, good = np.zeros((G, n)), np.ones((G, n)), np.zeros(G, dtype=bool)
        Z, R, D, full = _orthonormal_parts(Phi)
        if not full.any():
            return values, scales, good
        at = np.flatnonzero(full)
        Wp = _part_weights(W[at], loss)
        ridge = loss if isinstance(loss, RidgeLoss) else None
        masks = _penalty_masks(ridge, Phi[at]) if ridge is not None else np.zeros((at.size, p), dtype=bool)
        T = np.sqrt(n) * np.linalg.inv(R) / D[:, :, None]
        fitted = self._design_refits(loss)
        start = np.einsum("gnp,n->gp", Z, self.data.Z @ fitted._start) / n
        base = _smooth_base(loss)
        for mask in np.unique(masks, axis=0):
            k = np.flatnonzero(np.all(masks == mask, axis=1))
            M = np.sqrt(ridge.lam) * mask[None, :, None] * T[k] if ridge is not None else None
            F = None if ridge is None else np.linalg.qr(R[k][:, :, ~mask])[0] if (~mask).any() else \
                np.zeros((k.size, p, 0))
            if base is None:      # the hinge
                gamma, ok = hinge_parts(Z[k], self.labels, Wp[k], M, start[k], free=F, groups=self._groups)
            else:
                gamma, ok = self._stacked_newton(Z[k], Wp[k], M, F, start[k], loss, base)
            terms = rounded_terms(Z[k], design_terms[at[k]] @ np.abs(T[k]))     # Z = Phi T (Z_terms)
            zero = np.array([labels_balance(loss, Z[g], self.labels, Wp[g], terms[i]) for i, g in enumerate(k)],
                            dtype=bool)                                        # 0 minimises exactly
            gamma[zero], ok[zero] = 0.0, True
            values[at[k]] = np.einsum("gnp,gp->gn", Z[k], gamma)
            scales[at[k]] = np.einsum("gnp,gp->gn", terms, np.abs(gamma))
            good[at[k]] = ok
        return values, scales, good

    def _stacked_newton(self, Z: np.ndarray, W: np.ndarray, M: np.ndarray | None, F: np.ndarray | None,
                        start: np.ndarray, loss: Loss, base: Loss) -> tuple[np.ndarray, np.ndarray]:
        """(gamma, ok) of a smooth loss on stacked designs by Newton, ok where converged and, for a loss that
        tends to 0 with unpenalised directions, certified to have a minimiser (:func:`separation_excluded`)."""
        parts = StackedParts(Z, self.labels, W, M, base)
        gamma, status = newton_parts(parts, start, free=F, stop_separating=loss.tends_to_zero and M is None)
        ok = status == CONVERGED
        if loss.tends_to_zero and (F is None or F.shape[-1]) and ok.any():
            c1, _ = parts.take(ok).derivatives(gamma[ok])
            rows = Z[ok] if F is None else Z[ok] @ F[ok]
            ok[ok] = separation_excluded(rows * self.labels[None, :, None], W[ok], -c1 * self.labels)
        return gamma, ok

    @functools.cached_property
    def _groups(self) -> np.ndarray | None:
        """(n,) labels of the rows with the same features and label (the hinge refits merge them), None when
        the features are not one numeric array."""
        if not isinstance(self.X, np.ndarray) or self.X.ndim != 2 or self.X.dtype.kind not in "biuf":
            return None
        return np.unique(np.column_stack([self.labels, self.X]), axis=0, return_inverse=True)[1].ravel()

    def _one_part(self, w: np.ndarray):
        y = self.labels
        one, has_pos = _one_class(w[None, :], y)
        if one[0]:
            return np.full(self.n, 1.0 if has_pos[0] else -1.0), np.ones(self.n), RefitLog(refits=1, one_class=1)
        idx = np.repeat(np.arange(self.n), w.astype(np.int64))
        try:
            basis = copy.deepcopy(self.data.basis).fit(_rows(self.X, idx))
            design = basis.transform(self.X)
            rep = reparametrise(design, entry_terms=design_terms(basis, self.X, design))
        except (RankDeficientError, ValueError, np.linalg.LinAlgError):
            return np.full(self.n, _constant(w[None, :], y)[0]), np.ones(self.n), RefitLog(refits=1, failed=1)
        loss = self.loss_for(int(w.sum()))
        values, scale, log = DesignRefits(rep.Z, y, rep.loss(loss), rep.Z_terms).scored(_part_weights(w[None, :], loss))
        return values[0], scale[0], log


class EstimatorRefits(Refits):
    """Any scikit-learn classifier, cloned and fitted on each part's rows (repeated by their counts).
    Its predictions are its own ``predict``; its scores :func:`estimator_scores` (None when it has
    none). A part with one class gets that class's constant classifier; a fit that raises is
    reported as a ValueError naming the part."""

    def __init__(self, estimator: Any, X: Any, labels: np.ndarray, name: str = "the estimator") -> None:
        self.estimator, self.X, self.labels, self.name = estimator, X, labels, name
        self.n = labels.shape[0]

    def full_fit(self) -> tuple[np.ndarray | None, np.ndarray]:
        _, preds, _ = self.fit_score(np.ones((1, self.n)))
        return None, preds[0]

    def scored(self, weights: ArrayLike) -> tuple[np.ndarray, np.ndarray, RefitLog]:
        values, log = self.decision(weights)
        return values, np.max(np.abs(values), axis=1, keepdims=True), log   # nothing else is known of its terms

    def decision(self, weights: ArrayLike) -> tuple[np.ndarray, RefitLog]:
        values, _, log = self.fit_score(weights)
        if values is None:
            raise ValueError(f"{self.name} ({type(self.estimator).__name__}) has neither decision_function nor "
                             f"predict_proba: it gives no scores.")
        return values, log

    def predict(self, weights: ArrayLike) -> tuple[np.ndarray, RefitLog]:
        _, preds, log = self.fit_score(weights)
        return preds, log

    def fit_score(self, weights: ArrayLike, rows: ArrayLike | None = None
                  ) -> tuple[np.ndarray | None, np.ndarray, RefitLog]:
        """(scores or None, predictions, log) of the classifier refitted on each part, at the points
        ``rows[b]`` of part b (a (B, n) mask; default every point; NaN elsewhere)."""
        from sklearn.base import clone
        W = _weights_iv(weights, self.n)
        at = np.ones(W.shape, dtype=bool) if rows is None else np.asarray(rows, dtype=bool)
        values: np.ndarray | None = np.full(W.shape, np.nan)
        preds = np.full(W.shape, np.nan)
        log = RefitLog(refits=W.shape[0])
        one, has_pos = _one_class(W, self.labels)
        for b, w in enumerate(W):
            if one[b]:
                preds[b, at[b]] = 1.0 if has_pos[b] else -1.0
                if values is not None:
                    values[b, at[b]] = preds[b, at[b]]
                log.one_class += 1
                continue
            if not at[b].any():
                continue
            idx = np.repeat(np.arange(self.n), w.astype(np.int64))
            Xb = _rows(self.X, np.flatnonzero(at[b]))
            try:
                fitted = clone(self.estimator).fit(_rows(self.X, idx), self.labels[idx])
                if hasattr(fitted, "predict"):
                    preds[b, at[b]] = np.asarray(fitted.predict(Xb), dtype=float)
            except Exception as exc:  # noqa: BLE001 - one clear message naming the procedure and the part
                raise ValueError(f"{self.name} ({type(self.estimator).__name__}) failed on training part {b} "
                                 f"({idx.size} rows, {np.unique(self.labels[idx]).size} class(es)): "
                                 f"{type(exc).__name__}: {exc}") from exc
            if values is not None:
                try:
                    values[b, at[b]] = estimator_scores(fitted, Xb)
                except ValueError:
                    values = None
            if not hasattr(fitted, "predict"):   # a scorer without predict: the signs of its scores
                if values is None:
                    raise ValueError(f"{self.name} ({type(self.estimator).__name__}) has neither predict nor "
                                     f"scores (decision_function or predict_proba).")
                preds[b, at[b]] = decision_signs(values[b, at[b]])
        return values, preds, log


def estimator_scores(fitted: Any, X: Any) -> np.ndarray:
    """The scores of a fitted scikit-learn classifier, higher for the class +1: ``decision_function``,
    else the +1 column of ``predict_proba``, else ValueError."""
    if hasattr(fitted, "decision_function"):
        values = np.asarray(fitted.decision_function(X), dtype=float)
        return values.ravel() if values.ndim == 2 and values.shape[1] == 1 else values
    if hasattr(fitted, "predict_proba"):
        column = list(np.asarray(fitted.classes_, dtype=float)).index(1.0)
        return np.asarray(fitted.predict_proba(X), dtype=float)[:, column]
    raise ValueError(f"{type(fitted).__name__} has neither decision_function nor predict_proba: it gives no scores.")


def _mapped_loss(estimator) -> Callable[[int], Loss]:
    def loss_for(m: int) -> Loss:
        return from_estimator(estimator, m).loss
    return loss_for


def refits_for(data: PreparedData, loss: str | Loss | None = None) -> Refits:
    """The refits of the procedure behind ``data`` (:func:`cudbound.design.prepare_data`).

    With a scikit-learn ``estimator`` in ``data`` (and ``loss`` unset or its mapped loss), the
    estimator refitted on each part through its exact mapping (its penalty for the part's size);
    otherwise ``data``'s basis with ``loss`` (default ``data.loss``), penalty as given.
    """
    if data.estimator is not None and (loss is None or loss is data.loss):
        return ProcedureRefits(data, _mapped_loss(data.estimator))
    fixed = get_loss(data.loss if loss is None else loss)
    return ProcedureRefits(data, lambda m: fixed)


def as_procedure(procedure: Any, name: str = "the procedure") -> Any:
    """A :class:`Procedure` (given as one or as a dict of its fields) or a scikit-learn classifier
    (anything with ``fit`` and ``predict``, ``decision_function`` or ``predict_proba``), checked;
    TypeError or ValueError otherwise."""
    if isinstance(procedure, Mapping):
        unknown = sorted(set(procedure) - {"basis", "loss", "estimator"})
        if unknown:
            raise ValueError(f"{name} as a dict takes the keys 'basis', 'loss', 'estimator'; got {unknown}.")
        return Procedure(**procedure)
    if isinstance(procedure, Procedure) or (hasattr(procedure, "fit") and any(
            hasattr(procedure, m) for m in ("predict", "decision_function", "predict_proba"))):
        return procedure
    raise TypeError(f"{name} must be a cudbound.refit.Procedure (or a dict of its fields) or a scikit-learn "
                    f"classifier (with fit and predict); got {type(procedure).__name__}.")


def as_mapped_procedure(procedure: Any, name: str = "`procedure`") -> Procedure:
    """``procedure`` as :func:`cudbound.cud_interval` and :func:`cudbound.intervals` take it, which need
    the exact loss of the fit: None is ``Procedure()`` ('linear' basis, 'squared' loss), a
    :class:`Procedure` or a dict of its fields is that procedure, and a scikit-learn classifier or
    Pipeline is ``Procedure(estimator=...)``, its exact basis and loss (:mod:`cudbound.sklearn_bridge`).
    Checked by :func:`as_procedure`.

    >>> as_mapped_procedure({"basis": "zpca:3", "loss": "hinge"})
    Procedure(basis='zpca:3', loss='hinge', estimator=None)
    """
    if procedure is None:
        return Procedure()
    procedure = as_procedure(procedure, name)
    return procedure if isinstance(procedure, Procedure) else Procedure(estimator=procedure)


def takes_procedure(function: _F) -> _F:
    """Decorate a function that names the model by one argument, ``procedure``: ``basis=``, ``loss=`` or
    ``estimator=`` given as keywords raise a TypeError that shows the call with a procedure. The
    signature shown (``inspect.signature``, the documentation) is the function's own.

    >>> @takes_procedure
    ... def fit(X, y, procedure=None):
    ...     return as_mapped_procedure(procedure)
    >>> fit(None, None, basis="poly:2", loss="hinge")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    TypeError: fit() names the model by one argument: pass procedure=Procedure(basis='poly:2', loss='hinge') ...
    """
    where = f"{function.__name__}()"

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = [k for k in ("basis", "loss", "estimator") if k in kwargs]
        if given:
            if "estimator" in given:
                how = "pass the scikit-learn classifier itself as `procedure` (it defines the basis and the loss)"
            else:
                fields = ", ".join(f"{k}={kwargs[k]!r}" for k in given)
                how = f"pass procedure=Procedure({fields}) (cudbound.Procedure, or a dict of its fields)"
            raise TypeError(f"{where} names the model by one argument: {how} instead of "
                            f"{', '.join(k + '=' for k in given)}.")
        return function(*args, **kwargs)
    return cast(_F, wrapper)


def as_refits(procedure: Any, X: ArrayLike, y: ArrayLike, pos_label: Any = None, name: str = "the procedure") -> Refits:
    """Refits of a :class:`Procedure` (or a dict of its fields; through :func:`refits_for`) or of a
    scikit-learn classifier (cloned and fitted per part, :class:`EstimatorRefits`)."""
    procedure = as_procedure(procedure, name)
    if isinstance(procedure, Procedure):
        return refits_for(prepare_data(X, y, procedure.basis, procedure.estimator, pos_label, procedure.loss))
    Xc, labels, _ = check_data(X, y, pos_label=pos_label) if not hasattr(X, "iloc") else (X, *encode_labels(
        y, pos_label=pos_label, n_rows=np.shape(X)[0]))
    return EstimatorRefits(procedure, Xc, labels, name)


def fit_and_score(procedure: Any, X: ArrayLike, y: ArrayLike, weights: ArrayLike, *,
                  pos_label: Any = None) -> np.ndarray:
    """Decision values at all n points of ``procedure`` refitted whole on each part of (X, y).

    ``weights`` (B, n) or (n,): whole numbers >= 0, the copies of each point in each training part
    (bootstrap counts, or 0/1 indicators). Returns (B, n) values (a 1-D ``weights`` gives (n,)); a
    point's prediction is sign(value), sign(0) = +1; held-out points are those of weight 0. See the
    module docstring for what is refitted and for degenerate parts.

    >>> import numpy as np
    >>> X = np.arange(8.0)[:, None]; y = np.where(X[:, 0] > 2.5, 1, -1)
    >>> train = np.array([1, 1, 0, 1, 1, 0, 1, 1])            # rows 2 and 5 held out
    >>> fit_and_score(Procedure(basis="zpca:1"), X, y, train).round(2)
    array([-0.79, -0.47, -0.15,  0.17,  0.49,  0.81,  1.13,  1.45])
    """
    W = np.asarray(weights)
    refits = as_refits(procedure, X, y, pos_label)
    values, log = refits.decision(W[None, :] if W.ndim == 1 else W)
    log.warn("fit_and_score")
    return values[0] if W.ndim == 1 else values
