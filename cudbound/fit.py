"""Fitting beta-hat = argmin_beta L(D, beta) for a loss written as a weighted mean.

Which minimiser (``docs/losses.md``):

- quadratic losses: the normal equations H beta = g, solved by least squares (the
  minimiser of least norm if H were singular; it is not for a full-rank design);
- strictly convex losses (logistic, exponential): the unique minimiser, from a conic
  solver polished by Newton's method to rounding;
- other losses (hinge, and user losses that do not declare ``strictly_convex``): the
  minimiser may not be unique; the fit returns the one of least Euclidean norm in the
  orthonormal coordinates of ``cudbound.design`` (|gamma| = |Phi beta| / sqrt(n), the root
  mean square of the training scores), so it depends neither on the solver, nor on its
  starting point, nor on the units and origins of the features. The hinge loss computes
  it exactly (``HingeLoss.minimiser``: its linear program's optimal set, read off an
  optimal dual, then a least-distance program); a loss may define
  ``minimiser(design, y, weights)`` the same way. The hinge loss plus a ridge penalty
  (``hinge_ridge``) is polished from the interior-point answer (``polish_hinge``) and, where
  that is degenerate, solved and certified in exact rational arithmetic on the user's design
  (``cudbound.optim.exact_hinge``). A loss with a Hessian that is positive
  definite at the minimiser has a unique one. Otherwise a second solve,
  min |beta|^2 subject to L(beta) <= L* + 1e-10 max(1, L*) (beta = 0 exactly when 0 is
  a minimiser), gives it to within about 1e-9 for a piecewise-linear loss with a
  well-conditioned optimal set, but only about the square root of the slack for a
  smooth loss with several minimisers;
- losses that tend to 0 at infinity (logistic, exponential): on data that a direction
  separates (y_i phi_i'beta >= 0 for every point with positive weight, > 0 for some)
  the infimum is not attained; :class:`~cudbound.losses.NoMinimiserError` (a
  ``ValueError``) is raised, naming a penalised loss that has a minimiser.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike

from .design import PenalisedLoss, Reparametrisation, is_margin_loss, reparametrise as _reparametrise
from .losses import LOSSES, DEFAULT_RIDGE, HingeLoss, Loss, NoMinimiserError, RidgeLoss, same_math
from .optim.smooth import SeparationUnknown, polish_smooth, separation
from .optim.cvxpy_bridge import TIGHT_OPTIONS, default_solvers, solve_fresh
from .optim.exact_hinge import exact_hinge_ridge_minimiser
from .optim.qp import polish_hinge, positive_definite
from .ties import decision_signs, rounded_terms, snap_zeros, term_scale, tied_signs

__all__ = ["fit_classifier", "FittedClassifier", "fit_coefficients", "training_error", "predict_signs",
           "labels_balance", "check_minimiser_exists", "separated_points"]


def predict_signs(design: np.ndarray, beta: np.ndarray, terms: np.ndarray | None = None) -> np.ndarray:
    """sign(phi_i' beta) with the convention sign(0) = +1 (method.md); a value within rounding of 0,
    |phi_i' beta| <= TIE_RTOL t_i' |beta|, counts as 0 (:func:`cudbound.ties.decision_signs`).

    t_i is the magnitude of row i for the tie rule: |phi_i| for a design given as it is (the default);
    for the orthonormal coordinates Z = Phi T, where a feature at its mean has z = 0 only up to the
    rounding of Phi T, ``Reparametrisation.Z_terms`` = |Z| + INPUT_RTOL E |T|, E the terms behind Phi's entries
    (:func:`cudbound.ties.rounded_terms`; these are tie terms, so weighted, unlike :func:`fit_classifier`'s
    ``entry_terms``). On a design given as it is, whose feature is shifted far
    from its zero (x + 1e4), a score within 1e-10 of the shifted terms is a tie; in Z, within 1e-13."""
    return decision_signs(design @ beta, term_scale(design if terms is None else terms, beta))


def training_error(design: np.ndarray, y: np.ndarray, beta: np.ndarray, weights: ArrayLike | None = None, *,
                   terms: np.ndarray | None = None) -> float:
    """err_D(beta) = (1/n) sum_i w_i 1{f(x_i; beta) != y_i} (w = 1 for the data itself; ``terms`` as
    in :func:`predict_signs`)."""
    wrong = predict_signs(design, beta, terms) != y
    if weights is None:
        return float(np.mean(wrong))
    return float(np.dot(weights, wrong) / len(y))


@dataclass(frozen=True, eq=False)
class FittedClassifier:
    """beta-hat of a loss on a design, kept with the coordinates it was computed in.

    ``rep`` is the design's orthonormal reparametrisation Z = Phi T (``cudbound.design``),
    ``loss_z`` the loss written in gamma, ``gamma`` the minimiser in those coordinates and
    ``coef`` = T gamma the coefficients on the user's design. Everything downstream (the
    CUD search, the true error of a coverage task) reads this one fit.
    """

    rep: Reparametrisation
    y: np.ndarray
    loss: Loss
    loss_z: Loss
    gamma: np.ndarray

    @property
    def coef(self) -> np.ndarray:
        """beta-hat on the user's design."""
        return self.rep.to_user(self.gamma)

    @property
    def train_error(self) -> float:
        """err_D(beta-hat), computed in the coordinates of the fit (ties on the scale of Z's terms)."""
        return training_error(self.rep.Z, self.y, self.gamma, terms=self.rep.Z_terms)

    def predict(self, design: ArrayLike, entry_terms: ArrayLike | None = None) -> np.ndarray:
        """The predicted labels sign(phi' beta-hat) (sign(0) = +1) at the rows of ``design`` (the basis's
        features of new points), decided as the training error is: in the fit's coordinates z = phi' T,
        a score z' gamma within rounding of 0 counting as 0 on the scale of its terms
        (|z| + INPUT_RTOL e |T|)' |gamma| (:func:`cudbound.ties.rounded_terms`), e the terms behind phi's
        entries (``entry_terms``, :meth:`cudbound.basis.Basis.transform_terms` of the new points; default |phi|)."""
        design = np.asarray(design, dtype=float)
        e = np.abs(design) if entry_terms is None else np.asarray(entry_terms, dtype=float)
        T = self.rep.T
        z = design @ T
        return decision_signs(z @ self.gamma, term_scale(rounded_terms(z, e @ np.abs(T)), self.gamma))


def fit_classifier(design: ArrayLike, y: ArrayLike, loss: Loss, *, solver: str | None = None,
                   entry_terms: ArrayLike | None = None) -> FittedClassifier:
    """Fit beta-hat = argmin_beta L(D, beta) once, in the orthonormal coordinates of the design.

    ``design`` is an already validated full-rank (n, p) matrix and ``y`` labels in
    {-1, +1}; ``loss`` a :class:`~cudbound.losses.Loss`; ``entry_terms`` E, the magnitude of the terms behind
    the design's entries (:meth:`cudbound.basis.Basis.transform_terms`, ``PreparedData.design_terms``;
    default |design|), which the tie scale ``Z_terms`` = |Z| + INPUT_RTOL E |T| counts (not the tie terms
    that :func:`fit_coefficients` and :func:`predict_signs` take, which are already so weighted). See
    :func:`fit_coefficients` for which minimiser is returned.

    >>> import numpy as np
    >>> from cudbound.losses import SquaredLoss
    >>> Phi = np.column_stack([np.ones(4), [0.0, 1.0, 2.0, 3.0]]); y = np.array([-1.0, -1.0, 1.0, 1.0])
    >>> f = fit_classifier(Phi, y, SquaredLoss())
    >>> np.round(f.coef, 6).tolist(), f.train_error
    ([-1.2, 0.8], 0.0)
    """
    rep = _reparametrise(np.asarray(design, dtype=float), entry_terms=entry_terms)
    loss_z = rep.loss(loss)
    y = np.asarray(y, dtype=float)
    gamma = fit_coefficients(rep.Z, y, loss_z, solver=solver, reparametrise=False, terms=rep.Z_terms)
    return FittedClassifier(rep=rep, y=y, loss=loss, loss_z=loss_z, gamma=gamma)


def separated_points(design: np.ndarray, y: np.ndarray, loss: Loss, weights: ArrayLike | None = None
                     ) -> np.ndarray | None:
    """(n,) bool: the points of positive weight that a direction the penalty of ``loss`` ignores
    separates (:func:`cudbound.optim.smooth.separation`; none for a loss that does not tend to 0), or
    None when the linear program cannot tell. ``loss`` has a minimiser only if none is separated."""
    n = design.shape[0]
    if not loss.tends_to_zero:
        return np.zeros(n, dtype=bool)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    try:
        mask, _ = separation(design, y, w, loss.unpenalised_directions(design))
    except SeparationUnknown:
        return None
    return mask


def check_minimiser_exists(design: np.ndarray, y: np.ndarray, loss: Loss, weights: ArrayLike | None = None) -> None:
    """Raise NoMinimiserError if ``loss`` (one that tends to 0) has no minimiser on the data
    (:func:`separated_points` finds a point; undecided, nothing is raised: the solver will fail, not
    silently, if there is no minimiser)."""
    mask = separated_points(design, y, loss, weights)
    if mask is None or not mask.any():
        return
    if isinstance(loss, RidgeLoss) or isinstance(getattr(loss, "ridge", None), RidgeLoss):
        hint = ("only the unpenalised intercept can grow, so all points with positive weight have one label; "
                "penalise it too (RidgeLoss(..., penalize_intercept=True), spec suffix ':all')")
    elif loss.name in LOSSES:
        hint = (f"they are linearly separable in the basis. Use a penalised loss, e.g. "
                f"loss='{loss.name}_ridge:{DEFAULT_RIDGE}', or the hinge or squared loss")
    else:
        hint = (f"they are linearly separable in the basis. Use a penalised loss, e.g. "
                f"cudbound.losses.RidgeLoss({DEFAULT_RIDGE}, base=<your loss>)")
    raise NoMinimiserError(
        f"the {loss.name} loss has no minimiser on these data: a direction beta with y_i phi_i'beta >= 0 "
        f"for every point and > 0 for {int(mask.sum())} of them drives the loss towards its infimum without "
        f"reaching it (the coefficients would grow without bound); {hint}.")


def _solve(problem, beta, loss, solver, *, accept_inaccurate=False):
    """Solve a cvxpy problem with the loss's solver chain, each solver with tight tolerances
    first and then its defaults. Returns (status, beta) of the first optimal answer; an
    inaccurate answer is returned only with ``accept_inaccurate`` when nothing better came."""
    primary, fallbacks = default_solvers(loss)
    first = solver or primary
    chain = [first] + [s for s in fallbacks if s != first]
    installed = set(cp.installed_solvers())
    errors, inaccurate = [], None
    for name in chain:
        if name not in installed:
            if name == solver:
                raise ValueError(f"cvxpy solver {name!r} is not installed; installed: {sorted(installed)}.")
            continue
        for options in (TIGHT_OPTIONS.get(name, {}), {}):
            try:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                    solve_fresh(problem, name, options)
            except cp.error.SolverError as exc:
                errors.append(f"{name}: {exc}")
                continue
            ok = beta.value is not None and np.all(np.isfinite(beta.value))
            if problem.status == cp.OPTIMAL and ok:
                return problem.status, np.asarray(beta.value, dtype=float)
            if problem.status == cp.OPTIMAL_INACCURATE and ok and inaccurate is None:
                inaccurate = np.asarray(beta.value, dtype=float)
            errors.append(f"{name}: status {problem.status}")
    if inaccurate is not None and accept_inaccurate:
        return cp.OPTIMAL_INACCURATE, inaccurate
    raise RuntimeError(f"fitting the {loss.name} loss failed ({'; '.join(errors)}).")


def gradient_terms(loss: Loss, design: np.ndarray, weights: ArrayLike) -> np.ndarray:
    """The magnitude of the terms of a quadratic loss's g (``loss.quadratic_form``): g's own formula on
    |design| with every label 1, e.g. (1/n) sum_i w_i |phi_i| for the squared loss, whose g is
    (1/n) sum_i w_i y_i phi_i (labels +-1; a ridge penalty adds nothing to g). The scale of g's ties
    (:func:`cudbound.ties.snap_zeros`)."""
    d = np.abs(np.asarray(design, dtype=float))
    return np.abs(loss.quadratic_form(d, np.ones(d.shape[0]), weights)[1])


def labels_balance(loss: Loss, design: np.ndarray, y: np.ndarray, weights: ArrayLike,
                   terms: np.ndarray | None = None) -> np.ndarray:
    """Whether the zero classifier minimises ``loss``, a margin loss l(y_i phi_i' beta) or its ridge form, because
    the labels balance: sum_i w_i y_i phi_i ties with 0 in every component (on the scale of its terms,
    sum_i w_i t_i, ``terms`` as in :func:`predict_signs`). The loss's subdifferential at 0 then holds
    c sum_i w_i y_i phi_i = 0 for any c in the subdifferential of l at 0, so 0 is a minimiser (convexity), and of
    least norm; an iterative solver would return its tolerance or its rounding instead, and signs decided by it.
    ``weights`` is (n,) or a stack (B, n); returns a bool, or (B,) bools; all False for any other loss."""
    W = np.asarray(weights, dtype=float)
    base = loss.base if isinstance(loss, (RidgeLoss, PenalisedLoss)) else loss
    if not is_margin_loss(base):
        return np.zeros(W.shape[:-1], dtype=bool)
    t = np.abs(design) if terms is None else terms
    return np.all(tied_signs(W @ (y[:, None] * design), W @ t) == 0.0, axis=-1)


def fit_coefficients(design: np.ndarray, y: np.ndarray, loss: Loss, weights: ArrayLike | None = None, *,
                     solver: str | None = None, reparametrise: bool = True,
                     terms: np.ndarray | None = None) -> np.ndarray:
    """beta-hat minimising ``loss.value(design, y, weights, .)``; weights default to ones.

    The fit is computed in orthonormal coordinates Z = design T (``cudbound.design``) and
    mapped back, beta = T gamma, so it does not depend on the units or origins of the
    features (``reparametrise=False``: the design is already in such coordinates).
    Quadratic losses are solved in closed form from their normal equations
    H gamma = g; other losses through cvxpy (``solver``: None for the loss's default
    chain, see :func:`cudbound.search.node_solvers.default_solvers`). See the module
    docstring for which minimiser is returned when it is not unique, and for the
    error raised when none exists. ``terms``: the magnitude of the terms the design's entries were
    computed from (:func:`predict_signs`; default |design|), the scale of the ties of a quadratic
    loss's gradient with 0 (:func:`gradient_terms`).
    """
    if reparametrise:
        rep = _reparametrise(np.asarray(design, dtype=float))
        # Z = design T: Z_terms counts this product's rounding; ``terms`` beyond |design|, the design's own
        # rounding, is carried through |T|
        z_terms = rep.Z_terms if terms is None else rep.Z_terms + (np.abs(terms) - np.abs(design)) @ np.abs(rep.T)
        gamma = fit_coefficients(rep.Z, y, rep.loss(loss), weights, solver=solver, reparametrise=False,
                                 terms=z_terms)
        return rep.to_user(gamma)
    n, p = design.shape
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if loss.is_quadratic:
        H, g, _ = loss.quadratic_form(design, y, w)
        g = snap_zeros(g, gradient_terms(loss, design if terms is None else terms, w))
        try:  # positive definite for a full-rank design with positive weights
            return scipy.linalg.cho_solve(scipy.linalg.cho_factor(H), g)
        except np.linalg.LinAlgError:  # singular (zero weights): the least-norm solution
            beta, *_ = np.linalg.lstsq(H, g, rcond=None)
            return beta
    if labels_balance(loss, design, y, w, terms):   # 0 minimises the loss exactly
        return np.zeros(p)
    check_minimiser_exists(design, y, loss, w)
    if hasattr(loss, "minimiser"):  # the loss computes its own (least-norm) minimiser exactly
        beta = loss.minimiser(design, y, w)
        if beta is not None:
            return np.asarray(beta, dtype=float)
    b = cp.Variable(p)
    status, beta = _solve(cp.Problem(cp.Minimize(loss.expression(design, y, w, b))), b, loss, solver,
                          accept_inaccurate=loss.has_derivatives)
    if loss.has_derivatives:
        polished = polish_smooth(lambda x: loss.value(design, y, w, x), lambda x: loss.gradient(design, y, w, x),
                                 lambda x: loss.hessian(design, y, w, x), np.zeros((0, p)), beta)
        if polished is not None:
            beta, status = polished, cp.OPTIMAL
        elif loss.tends_to_zero:  # never return a fit that may run off to infinity uncertified
            raise RuntimeError(f"fitting the {loss.name} loss failed: no minimiser passed the optimality check "
                               f"(are the data nearly separable? a ridge-penalised loss always has one).")
    if status != cp.OPTIMAL:
        raise RuntimeError(f"fitting the {loss.name} loss failed (solver status {status!r}).")
    if same_math(getattr(loss, "base", None), HingeLoss) and hasattr(loss, "penalty_matrix"):
        # hinge + a positive definite penalty: a QP whose exact minimiser is read off the
        # solver's active set and certified (the interior-point answer is ~1e-5 off)
        # (with a penalty carried to orthonormal coordinates, its factor M: Q = M'M may be far worse conditioned)
        exact = polish_hinge(y[:, None] * design, w / n, loss.penalty_matrix(design), beta,
                             factor=loss.M if isinstance(loss, PenalisedLoss) else None)
        if exact is None:   # a degenerate minimiser (points on the margin, multipliers at bounds)
            exact = _exact_hinge_ridge(design, y, w, loss, beta)
        if exact is not None:
            return exact
    if loss.strictly_convex:
        return beta
    if loss.has_derivatives:
        # a positive definite Hessian at a minimiser of a convex function: the minimiser is unique
        H = loss.hessian(design, y, w, beta)
        if np.all(np.isfinite(H)) and positive_definite(H, rtol=1e-8):
            return beta
    return _least_norm_minimiser(design, y, loss, w, beta, solver)


def _exact_hinge_ridge(design, y, w, loss, beta):
    """The least-norm minimiser of a hinge loss plus a ridge penalty, certified in rational
    arithmetic (``cudbound.optim.exact_hinge``), or None.

    In orthonormal coordinates the data are rounded (Z = Phi T), which breaks the exact ties of
    a discrete design; the problem is solved on the user's design instead, where they hold
    (penalty lam |beta_pen|^2 exactly, least |Phi beta|, which is least |gamma|), and mapped back.
    """
    n = len(y)
    Phi, T = getattr(loss, "Phi", None), getattr(loss, "T", None)
    if Phi is not None and T is not None and isinstance(getattr(loss, "ridge", None), RidgeLoss):
        ridge = loss.ridge
        b = exact_hinge_ridge_minimiser(y[:, None] * Phi, w, T @ beta, Q=ridge.penalty_matrix(Phi),
                                        norm_root=Phi, divisor=n)
        return None if b is None else np.linalg.solve(T, b)
    if isinstance(loss, RidgeLoss):
        return exact_hinge_ridge_minimiser(y[:, None] * design, w, beta, Q=loss.penalty_matrix(design),
                                           norm_root=design, divisor=n)
    return None


def _least_norm_minimiser(design, y, loss, w, beta, solver):
    """The minimiser of least norm: min |b|^2 s.t. L(b) <= L* + slack (beta: some minimiser)."""
    p = design.shape[1]
    L_star = loss.value(design, y, w, beta)
    slack = 1e-10 * max(1.0, abs(L_star))
    if loss.value(design, y, w, np.zeros(p)) <= L_star + slack:
        return np.zeros(p)
    b = cp.Variable(p)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(b)), [loss.expression(design, y, w, b) <= L_star + slack])
    try:
        _, least = _solve(problem, b, loss, solver, accept_inaccurate=True)
    except RuntimeError:
        return beta
    # solvers meet the constraint to their own tolerance: an excess of a few slacks is round-off
    if loss.value(design, y, w, least) > L_star + 100.0 * slack:
        return beta
    return least
