"""The design matrix in well-conditioned coordinates: rank check and reparametrisation.

A linear-in-basis classifier sign(phi(x)'beta) depends on beta only through the scores
Phi beta, so everything the toolkit computes for an unpenalised loss (beta-hat's signs,
the training error, every replicate supremum Q^(b)) depends only on the column space of
the design Phi, not on where a feature's zero is or what unit it has. Computing in the
user's coordinates loses that invariance to rounding: with a feature shifted by 1e6 or
scaled by 1e-9 the normal equations are too ill-conditioned to solve accurately.

So every fit and search works in orthonormal coordinates (Golub & Van Loan, *Matrix
Computations*, 4th ed., sec. 5.2 and 5.4): with D = diag of the column scales and the
thin QR factorisation Phi D^-1 = Q R,

    Z = Phi T,   T = sqrt(n) D^-1 R^-1,   beta = T gamma,

so Z'Z = n I (the columns of Z have unit mean square) and Z gamma = Phi beta. Z is
computed as (the distinct rows of Phi) @ T, so identical rows of Phi stay bitwise
identical rows of Z (the search merges them). An entry of Z is a sum of terms Phi_ik T_kj
that may cancel (a feature at its mean gives z = 0 in exact arithmetic and a rounding
otherwise), so the tie rule (``cudbound.ties``) measures a decision value z'gamma against
``Z_terms`` |gamma|, ``Z_terms`` = |Z| + INPUT_RTOL E |T| (``ties.rounded_terms``; E the terms behind
Phi's entries, |Phi| for entries given as data, ``cudbound.basis.Basis.transform_terms``), not against
|z|' |gamma| alone.

Z depends on Phi only through its column space up to an orthogonal rotation, so the
least-norm conventions taken in gamma (the hinge fit's) are invariant too:
|gamma| = |Phi beta| / sqrt(n), the root mean square of the training scores.

The rank is decided on the column-scaled design by QR with column pivoting, with a
relative tolerance (:data:`RANK_RTOL`): a column whose residual after projection on the
others is below it is reported by name.

A penalised loss is not invariant (a ridge penalty depends on the units), but it is
carried over exactly: :meth:`Reparametrisation.loss` returns the same loss written in
gamma, with the penalty lam |J beta|^2 = |sqrt(lam) J T gamma|^2.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

import cvxpy as cp
import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike

from ._validation import LabelEncoding, check_data, check_features, encode_labels, feature_names
from .basis import Basis, LinearBasis, design_terms, make_basis
from .losses import (ExponentialLoss, HingeLoss, Loss, LogisticLoss, RidgeLoss, SquaredLoss, _overrides, same_math)
from .sklearn_bridge import EstimatorMapping, resolve_model
from .ties import rounded_terms

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

__all__ = ["Reparametrisation", "reparametrise", "check_design", "check_labelled_design", "RankDeficientError",
           "RANK_RTOL", "PreparedData", "prepare_data", "as_prepared", "PenalisedLoss"]

RANK_RTOL = 1e-10
"""A column-scaled design is rank-deficient when a pivot of its QR factorisation is below
this fraction of the largest: that column is within rounding of the others' span."""


class RankDeficientError(ValueError):
    """The design's columns are linearly dependent (to :data:`RANK_RTOL`)."""


def _column_scales(Phi: np.ndarray) -> np.ndarray:
    """Euclidean norm of each column, computed without overflow or underflow (1 for a zero column)."""
    amax = np.max(np.abs(Phi), axis=0)
    amax = np.where(amax > 0, amax, 1.0)
    norms = amax * np.sqrt(np.einsum("ij,ij->j", Phi / amax, Phi / amax))
    return np.where(norms > 0, norms, 1.0)


def _describe(columns, names) -> str:
    if names is not None:
        return ", ".join(f"{names[j]!s} (column {j})" for j in columns)
    return ", ".join(f"column {j}" for j in columns)


@dataclass(frozen=True)
class Reparametrisation:
    """Z = Phi T with Z'Z = n I; beta = T gamma (see the module docstring)."""

    design: np.ndarray   # Phi, the user's design
    Z: np.ndarray        # the design in orthonormal coordinates (unit mean-square columns)
    T: np.ndarray        # p x p, beta = T gamma
    scales: np.ndarray   # the column scales D
    R: np.ndarray        # Phi D^-1 = Q R
    Z_terms: np.ndarray  # |Z| + INPUT_RTOL E |T| (E >= |Phi|, the terms behind Phi): Z's magnitude for the tie rule

    def to_user(self, gamma: ArrayLike) -> np.ndarray:
        """beta = T gamma, the coefficients on the user's design."""
        return self.T @ np.asarray(gamma, dtype=float)

    def from_user(self, beta: ArrayLike) -> np.ndarray:
        """gamma = T^-1 beta = R D beta / sqrt(n)."""
        n = self.design.shape[0]
        return self.R @ (self.scales * np.asarray(beta, dtype=float)) / np.sqrt(n)

    def loss(self, loss: Loss) -> Loss:
        """The loss written in gamma: L_Z(gamma) = L(T gamma) exactly (see :func:`loss_in_coordinates`)."""
        return loss_in_coordinates(loss, self.design, self.T)


def reparametrise(design: ArrayLike, *, entry_terms: ArrayLike | None = None, names: Sequence[str] | None = None,
                  name: str = "design") -> Reparametrisation:
    """Orthonormal coordinates Z = Phi T of a full-rank design (raises RankDeficientError).

    ``entry_terms`` (optional, the design's shape): E, the magnitude of the terms each entry of Phi was computed
    from (``cudbound.basis.Basis.transform_terms``; default |Phi|, entries given as data), carried into
    ``Z_terms`` = |Z| + INPUT_RTOL E |T|. ``names`` (optional, one per column) name the dependent columns
    in the error.
    """
    Phi = np.asarray(design, dtype=float)
    n, p = Phi.shape
    scales = _column_scales(Phi)
    A = Phi / scales
    if p == 0:
        raise ValueError(f"`{name}` has no columns.")
    _, Rp, piv = scipy.linalg.qr(A, mode="economic", pivoting=True)
    diag = np.abs(np.diag(Rp))
    keep = diag > RANK_RTOL * diag[0] if diag[0] > 0 else np.zeros(p, dtype=bool)
    if not keep.all():
        dependent = sorted(int(j) for j in piv[~keep])
        raise RankDeficientError(
            f"`{name}` is rank-deficient (rank {int(keep.sum())} < {p} columns): "
            f"{_describe(dependent, names)} {'is a linear combination' if len(dependent) == 1 else 'are linear combinations'} "
            f"of the other columns (within a relative tolerance of {RANK_RTOL:g} after scaling each column to unit "
            f"norm): a constant feature next to the intercept, a duplicated column, or too few distinct rows. "
            f"Drop {'it' if len(dependent) == 1 else 'them'} or choose a smaller basis.")
    # unpivoted QR: T keeps the user's column order (the intercept stays the first direction)
    _, R = np.linalg.qr(A, mode="reduced")
    Rinv = scipy.linalg.solve_triangular(R, np.eye(p))
    T = np.sqrt(n) * (Rinv / scales[:, None])
    # equal rows get bitwise equal coordinates (and terms), whatever their order
    uniq, inverse = np.unique(Phi, axis=0, return_inverse=True)
    Z = np.ascontiguousarray((uniq @ T)[inverse.ravel()])
    if entry_terms is not None:       # E; else |Phi|, the distinct rows' already at hand
        E = np.asarray(entry_terms, dtype=float)
        if E.shape != Phi.shape:
            raise ValueError(f"`entry_terms` has shape {E.shape}; `{name}` has {Phi.shape}.")
        uniq, inverse = np.unique(E, axis=0, return_inverse=True)
    Z_terms = np.ascontiguousarray(rounded_terms(Z, (np.abs(uniq) @ np.abs(T))[inverse.ravel()]))
    return Reparametrisation(design=Phi, Z=Z, T=T, scales=scales, R=R, Z_terms=Z_terms)


# ---------------------------------------------------------------------------- losses in gamma
_MARGIN_TYPES = (SquaredLoss, HingeLoss, LogisticLoss, ExponentialLoss)


def penalty_factor(loss: Loss, design: np.ndarray) -> np.ndarray:
    """M with the penalty of a ridge loss on ``design`` = |M gamma|^2 (``PenalisedLoss.M``; sqrt(lam) J)."""
    if isinstance(loss, PenalisedLoss):
        return loss.M
    ridge = cast(RidgeLoss, loss)
    return np.sqrt(ridge.lam) * np.eye(design.shape[1])[ridge.penalty_mask(design)]


def is_margin_loss(loss: Loss) -> bool:
    """True when the loss depends on beta only through the scores Phi beta (so L_Z(gamma) = L(Z, gamma)).

    The built-in unpenalised losses, and any user loss written through the pointwise pair
    only (``pointwise`` / ``cvxpy_pointwise`` / ``derivatives``).
    """
    if any(same_math(loss, cls) for cls in _MARGIN_TYPES):
        return True
    if isinstance(loss, RidgeLoss):
        return False
    direct = ("value", "expression", "gradient", "hessian", "quadratic_form", "minimiser", "unpenalised_directions")
    return _overrides(loss, "pointwise") and not any(_overrides(loss, m) for m in direct)


def loss_in_coordinates(loss: Loss, design: np.ndarray, T: np.ndarray) -> Loss:
    """The loss as a function of gamma = T^-1 beta, to be evaluated on Z = design T.

    - a margin loss (depends only on the scores) is returned as it is;
    - a :class:`~cudbound.losses.RidgeLoss` with a margin base becomes the base plus the
      penalty |M gamma|^2, M = sqrt(lam) J T (J picks the penalised coefficients);
    - any other loss is wrapped: every method evaluates the user's loss on the user's
      design at beta = T gamma (value, cvxpy expression, gradient T'grad, Hessian T'HT,
      quadratic form (T'HT, T'g, c)).
    """
    if is_margin_loss(loss):
        return loss
    if isinstance(loss, RidgeLoss) and is_margin_loss(loss.base):
        mask = loss.penalty_mask(design)
        return PenalisedLoss(loss, np.sqrt(loss.lam) * T[mask], design, T)
    return _LossAtTGamma(loss, design, T)


def _null_basis(M: np.ndarray, p: int) -> np.ndarray:
    if M.shape[0] == 0:
        return np.eye(p)
    _, sv, vt = np.linalg.svd(M, full_matrices=True)
    rank = int(np.sum(sv > 1e-12 * sv[0])) if sv.size and sv[0] > 0 else 0
    return vt[rank:].T


class PenalisedLoss(Loss):
    """base(Z gamma) + |M gamma|^2: a ridge loss carried to orthonormal coordinates
    (what :meth:`Reparametrisation.loss` makes of one, M = sqrt(lam) J T).

    Its math is a ridge loss's (``base``, ``penalty_matrix``), so the solvers that serve a
    :class:`~cudbound.losses.RidgeLoss` serve it too. ``Phi`` and ``T`` (the user's design and
    beta = T gamma) let a fit be computed where the data are exact, on the user's design
    (``cudbound.fit``, the ``hinge_ridge`` fit).
    """

    def __init__(self, ridge: RidgeLoss, M: np.ndarray, Phi: np.ndarray | None = None, T: np.ndarray | None = None):
        self.ridge, self.base, self.M = ridge, ridge.base, np.ascontiguousarray(M)
        self.Phi, self.T = Phi, T
        self.MtM = self.M.T @ self.M
        self.is_quadratic = self.base.is_quadratic
        self.strictly_convex = ridge.strictly_convex
        self.tends_to_zero = self.base.tends_to_zero
        self.name = ridge.name

    @property
    def kind(self) -> str:
        return self.ridge.kind

    def penalty_matrix(self, design: ArrayLike) -> np.ndarray:
        """Q with |M gamma|^2 = gamma'Q gamma."""
        return self.MtM

    def value(self, design: np.ndarray, y: np.ndarray, weights: ArrayLike, beta: np.ndarray) -> float:
        b = np.asarray(beta, dtype=float)
        r = self.M @ b
        return self.base.value(design, y, weights, b) + float(r @ r)

    def expression(self, design: np.ndarray, y: np.ndarray, weights: np.ndarray | cp.Parameter,
                   beta: cp.Expression) -> cp.Expression:
        pen = cp.sum_squares(self.M @ beta) if self.M.shape[0] else 0.0
        return self.base.expression(design, y, weights, beta) + pen

    @property
    def has_derivatives(self) -> bool:
        return self.base.has_derivatives

    def gradient(self, design: np.ndarray, y: np.ndarray, weights: ArrayLike, beta: np.ndarray) -> np.ndarray:
        return self.base.gradient(design, y, weights, beta) + 2.0 * self.MtM @ np.asarray(beta, dtype=float)

    def hessian(self, design: np.ndarray, y: np.ndarray, weights: ArrayLike, beta: np.ndarray) -> np.ndarray:
        return self.base.hessian(design, y, weights, beta) + 2.0 * self.MtM

    def quadratic_form(self, design: np.ndarray, y: np.ndarray,
                       weights: ArrayLike) -> tuple[np.ndarray, np.ndarray, float]:
        H, g, c = self.base.quadratic_form(design, y, weights)
        return H + self.MtM, g, c

    def unpenalised_directions(self, design: np.ndarray) -> np.ndarray:
        return _null_basis(self.M, design.shape[1])

    def __repr__(self) -> str:
        return f"{self.ridge!r} (in orthonormal coordinates)"


class _LossAtTGamma(Loss):
    """Any loss, evaluated on the user's design at beta = T gamma."""

    def __init__(self, loss: Loss, design: np.ndarray, T: np.ndarray):
        self.inner, self.Phi, self.T = loss, design, T
        self.is_quadratic = loss.is_quadratic
        self.strictly_convex = loss.strictly_convex
        self.tends_to_zero = loss.tends_to_zero
        self.name = loss.name

    @property
    def kind(self) -> str:
        return self.inner.kind

    def value(self, design, y, weights, beta):
        return self.inner.value(self.Phi, y, weights, self.T @ np.asarray(beta, dtype=float))

    def expression(self, design, y, weights, beta):
        return self.inner.expression(self.Phi, y, weights, self.T @ beta)

    @property
    def has_derivatives(self) -> bool:
        return self.inner.has_derivatives

    def gradient(self, design, y, weights, beta):
        return self.T.T @ self.inner.gradient(self.Phi, y, weights, self.T @ np.asarray(beta, dtype=float))

    def hessian(self, design, y, weights, beta):
        H = self.inner.hessian(self.Phi, y, weights, self.T @ np.asarray(beta, dtype=float))
        return self.T.T @ H @ self.T

    def quadratic_form(self, design, y, weights):
        H, g, c = self.inner.quadratic_form(self.Phi, y, weights)
        return self.T.T @ H @ self.T, self.T.T @ g, c

    def unpenalised_directions(self, design):
        U = self.inner.unpenalised_directions(self.Phi)
        if U.shape[1] == 0:
            return U
        # directions d in beta the penalty ignores are gamma = T^-1 d; orthonormalise
        Q, _ = np.linalg.qr(np.linalg.solve(self.T, U))
        return Q

    def __repr__(self) -> str:
        return f"{self.inner!r} (at beta = T gamma)"


def check_design(design: ArrayLike, name: str = "design", names: Sequence[str] | None = None) -> np.ndarray:
    """Finite n x p matrix with n >= p and full column rank (beta-hat must be unique).

    The rank is decided on the column-scaled design (``cudbound.design.reparametrise``),
    so it does not depend on the units of the features; a rank-deficient design raises
    ``RankDeficientError`` (a ``ValueError``) naming the dependent columns.
    """
    Phi = check_features(design, name)
    n, p = Phi.shape
    if n < p:
        raise ValueError(f"`{name}` has {n} rows but {p} basis columns; the fit needs at least as many rows as columns.")
    reparametrise(Phi, names=names, name=name)
    return Phi


def check_labelled_design(design: ArrayLike, y: ArrayLike, name: str = "design") -> tuple[np.ndarray, np.ndarray]:
    """A design (:func:`check_design`) and its labels, by the labels' one contract
    (``cudbound._validation.encode_labels``: two classes, {-1, +1}, {0, 1}, booleans or the
    text pairs; a design-level function takes no ``pos_label``). Returns ``(Phi, labels)``,
    the labels as float -1.0 / +1.0."""
    Phi = check_design(design, name)
    labels, _ = encode_labels(y, n_rows=Phi.shape[0], rows_of=f"`{name}`", takes_pos_label=False)
    return Phi, labels


@dataclass(frozen=True)
class PreparedData:
    """Features and labels as every function that applies a basis receives them (:func:`prepare_data`).

    The one contract of the data, whatever the entry point (``cud_interval``, ``intervals``,
    ``estimate_error``; the design-level functions apply the same rules to a design and labels,
    :func:`check_labelled_design`):

    * ``X``: a 2-D array or DataFrame of finite numbers, one row per observation (a 1-D array is
      one feature); NaN, infinite, complex or non-numeric entries are refused, naming the first.
    * ``y``: one label per row (1-D, or an (n, 1) column), none missing (NaN, None), with exactly
      two distinct values. {-1, +1}, {0, 1}, {False, True} and the text pairs true/false, yes/no,
      1/0 (any case) are mapped automatically (positive: +1, 1, True, true, yes, "1"); any other
      pair of classes (two strings, two other numbers) needs ``pos_label``, the positive class,
      as in scikit-learn. With a scikit-learn ``estimator`` and no ``pos_label`` the positive
      class is scikit-learn's (the larger label).
    * the design Phi = basis(X) has full column rank and at least as many rows as columns.

    Attributes
    ----------
    design : (n, p) array, the basis applied to the features, checked.
    labels : (n,) array of -1.0 / +1.0.
    label_encoding : cudbound._validation.LabelEncoding, which value became -1 and which +1.
    feature_names : the column names of a DataFrame ``X``, else None.
    basis : the Basis, fitted on all n rows (a refit on part of the data fits a copy of it on the
        part, ``cudbound.refit``).
    loss : the loss to fit: the estimator's, the one given, or "squared".
    mapping : the estimator's basis and loss (``cudbound.sklearn_bridge.EstimatorMapping``), or None.
    X : the features as the basis reads them (checked array, or the DataFrame a pipeline reads);
        for a design given directly (:func:`as_prepared`), the design itself.
    estimator : the scikit-learn estimator behind ``mapping``, or None.
    design_terms : (n, p) array, the magnitude of the terms behind each entry of ``design``
        (``Basis.transform_terms``), or None for |design| (entries given as data).
    rep : the orthonormal coordinates of ``design`` (:class:`Reparametrisation`), computed once;
        ``Z`` its design.
    """

    design: np.ndarray
    labels: np.ndarray
    label_encoding: LabelEncoding
    feature_names: list[str] | None
    basis: Basis
    loss: str | Loss
    mapping: EstimatorMapping | None = field(default=None)
    X: Any = field(default=None, repr=False)
    estimator: Any = field(default=None, repr=False)
    design_terms: np.ndarray | None = field(default=None, repr=False)

    @cached_property
    def rep(self) -> Reparametrisation:
        return reparametrise(self.design, entry_terms=self.design_terms)

    @property
    def Z(self) -> np.ndarray:
        return self.rep.Z

    def __array__(self, dtype=None, copy=None):
        """``np.asarray(data)`` is the design matrix Phi (a method written for a design matrix reads it)."""
        return self.design if dtype is None else self.design.astype(dtype)

    def details(self) -> dict[str, Any]:
        """What a result's ``details`` say about the data: basis, label encoding, feature names
        (a DataFrame's) and the estimator (when one was given)."""
        out: dict[str, Any] = {"basis": repr(self.basis), "label_encoding": self.label_encoding}
        if self.feature_names is not None:
            out["feature_names"] = self.feature_names
        if self.mapping is not None:
            out.update(estimator=self.mapping.estimator, estimator_objective=self.mapping.objective)
        return out


def prepare_data(X: ArrayLike, y: ArrayLike, basis: str | Basis | Callable[[np.ndarray], ArrayLike] | None,
             estimator: BaseEstimator | None, pos_label: Any, loss: str | Loss | None = None) -> PreparedData:
    """The one front door from features and labels to a design (:class:`PreparedData` states the
    contract): the estimator's basis and loss, or the ones given (``cudbound.sklearn_bridge``); the
    features checked (a scikit-learn pipeline reads them as given, e.g. a DataFrame); the labels
    encoded; the basis fitted and the design checked."""
    basis, loss, pos_label, mapping = resolve_model(X, y, basis, loss, estimator, pos_label)
    data: Any
    if mapping is None:
        data, labels, encoding = check_data(X, y, pos_label=pos_label)
    else:   # a scikit-learn pipeline reads the features as given (e.g. a DataFrame): the labels only
        data = X
        labels, encoding = encode_labels(y, pos_label=pos_label, n_rows=np.shape(X)[0])
    basis_obj = make_basis(basis)
    design = check_design(basis_obj.fit_transform(data), name="design (basis applied to X)")
    return PreparedData(design=design, labels=labels, label_encoding=encoding, feature_names=feature_names(X),
                        basis=basis_obj, loss=loss, mapping=mapping, X=data, estimator=estimator,
                        design_terms=design_terms(basis_obj, data, design))


def as_prepared(design: ArrayLike | PreparedData, y: ArrayLike | None = None, *, loss: str | Loss | None = None,
                name: str = "design") -> PreparedData:
    """What every design-level function takes: a :class:`PreparedData` as it is (``y`` None or its
    labels), or a design matrix and its labels, checked once (:func:`check_labelled_design`) and
    wrapped with a basis that learns nothing (the design's columns are the features: a refit on a
    part refits the classifier only)."""
    if isinstance(design, PreparedData):
        if y is not None and y is not design.labels:
            labels, _ = encode_labels(y, n_rows=design.labels.shape[0], rows_of=f"`{name}`", takes_pos_label=False)
            if not np.array_equal(labels, design.labels):
                raise ValueError(f"`y` differs from the labels of the prepared data `{name}`; pass y=None.")
        return design
    if y is None:
        raise TypeError(f"`y` is required with a design matrix `{name}`.")
    Phi = check_design(design, name)
    labels, encoding = encode_labels(y, n_rows=Phi.shape[0], rows_of=f"`{name}`", takes_pos_label=False)
    basis = LinearBasis(intercept=False).fit(Phi)
    return PreparedData(design=Phi, labels=labels, label_encoding=encoding, feature_names=None,
                        basis=basis, loss="squared" if loss is None else loss, X=Phi)
