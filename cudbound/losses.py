"""Surrogate losses, written as weighted means.

For bootstrap counts ``nu`` (all ones for the original data) a loss is

    L(D^(b), beta) = (1/n) * sum_i nu_i * l(y_i, phi_i' beta)  [+ a penalty of beta, added once],

with ``n = len(y)`` (Laber & Murphy 2008, section 3; see ``docs/method.md`` and
``docs/losses.md``). The search only talks to a loss through this small protocol.

Required (either pair):

``pointwise(y, t)`` and ``cvxpy_pointwise(y, t)``
    l(y_i, t_i) elementwise, in NumPy and as a convex cvxpy expression of ``t``; the
    mean, the bootstrap weights and the cvxpy model are then built for you;
``value(design, y, weights, beta)`` and ``expression(design, y, weights, beta)``
    or the whole weighted mean directly, in NumPy and as a cvxpy expression
    (``weights`` may be a non-negative ``cvxpy.Parameter`` and ``beta`` a
    ``cvxpy.Variable``; the expression must be DPP so that a node problem is compiled
    once and re-solved by changing parameter values).

Optional extras, each unlocking a faster or more accurate path:

``derivatives(y, t) -> (dl/dt, d2l/dt2)`` (or ``gradient`` and ``hessian``)
    every node solution is polished by Newton's method on its active set and
    certified by the KKT conditions (exact to rounding instead of to the conic
    solver's tolerance), and so is the fit, whose uniqueness the Hessian then shows;
``is_quadratic = True`` with ``quadratic_form(design, y, weights) -> (H, g, c)``,
    ``value = beta'H beta - 2 g'beta + c``: closed-form screening, the flip-cost bound
    and the compiled search (``engine="auto"``) when H is positive definite;
``minimiser(design, y, weights) -> beta or None``
    the fit's (least-norm) minimiser computed by the loss itself (``HingeLoss`` solves
    its linear program exactly); None falls back to the generic fit.

Attributes describing the loss (class attributes, defaults in :class:`Loss`):

``kind``
    what the loss is, which chooses its solvers: ``"quadratic"`` (a QP per node),
    ``"piecewise_linear"`` (an LP per node; the hinge loss), ``"smooth"`` (Newton's method
    per node; logistic, exponential) or ``"generic"`` (cvxpy). The built-in losses declare
    theirs; for any other loss it follows from the methods given (``is_quadratic``:
    quadratic; ``derivatives``: smooth; else generic). A subclass of a built-in loss keeps
    the built-in's compiled solver only if it declares the same kind and computes the same
    loss (:func:`same_math`); a subclass that redefines the loss (its ``pointwise`` or
    ``value``) must also redefine every method of its parent that computes the parent's loss
    (``cvxpy_pointwise``, ``derivatives``, ``quadratic_form``, ...) and declare its ``kind``,
    or :func:`get_loss` refuses it (it would be solved as the parent's loss).
``strictly_convex``
    the minimiser is unique whenever the design has full column rank; otherwise the
    fit returns the minimiser of least Euclidean norm (a second solve);
``tends_to_zero``
    a margin loss: l(y, t) depends on y t, is positive, decreasing in y t and tends
    to 0 as y t -> infinity (logistic, exponential). Its infimum over a cone may be
    approached only at infinity (separable data); the search then computes it by
    dropping the points a direction of the cone separates, and the fit raises
    :class:`NoMinimiserError` on separable data.
"""
from __future__ import annotations

import abc
import math
import numbers
from collections.abc import Callable

import cvxpy as cp
import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_scalar

__all__ = ["Loss", "KINDS", "same_math", "SquaredLoss", "HingeLoss", "LogisticLoss", "ExponentialLoss", "RidgeLoss", "FunctionLoss",
           "NoMinimiserError", "get_loss", "LOSSES", "DEFAULT_RIDGE"]

DEFAULT_RIDGE = 0.1
"""Penalty weight of ``"ridge"`` and ``"<loss>_ridge"`` when the spec gives none."""


class NoMinimiserError(ValueError):
    """The loss has no minimiser on these data (e.g. logistic loss on separable data)."""


def _overrides(obj, name: str) -> bool:
    return getattr(type(obj), name, None) is not getattr(Loss, name, None)


_DEFINING = ("pointwise", "cvxpy_pointwise", "value", "expression", "derivatives", "gradient", "hessian",
             "quadratic_form", "minimiser", "penalty_mask", "penalty_matrix", "unpenalised_directions")


KINDS = ("quadratic", "piecewise_linear", "smooth", "generic")
"""The kinds of loss the engine tells apart (:attr:`Loss.kind`)."""


def _kind_of(cls: type, loss: object) -> str:
    """The kind ``cls`` declares, for the instance ``loss`` (a property is evaluated on it)."""
    declared = getattr(cls, "kind", None)
    if isinstance(declared, property) and declared.fget is not None:
        return str(declared.fget(loss))
    return str(declared)


def same_math(loss: object, cls: type[Loss]) -> bool:
    """True when ``loss`` is a ``cls`` that declares ``cls``'s kind and whose every
    loss-defining method is ``cls``'s own.

    The engine chooses its solvers by what a loss is, not by its exact class: a subclass
    that only renames a loss or adds attributes keeps the fast paths of its parent, while
    one that redefines the loss itself (its value, derivatives, cvxpy form, penalty, ...)
    or declares another :attr:`~Loss.kind` gets the generic ones.
    """
    if not isinstance(loss, cls):
        return False
    t = type(loss)
    if _kind_of(t, loss) != _kind_of(cls, loss):
        return False
    return all(getattr(t, name, None) is getattr(cls, name, None) for name in _DEFINING)


def _definer(t: type, name: str) -> int:
    """Position in ``t``'s MRO of the class that defines ``name`` (len(mro) if none does)."""
    for i, c in enumerate(t.__mro__):
        if name in vars(c):
            return i
    return len(t.__mro__)


# methods that compute the loss a class's ``pointwise`` / ``value`` define: a subclass that
# redefines the loss and inherits one of these from a built-in would be solved as the built-in
# (``HingeLoss.minimiser`` checks for itself that the loss is still the hinge loss)
_DEPENDENT = ("cvxpy_pointwise", "expression", "derivatives", "gradient", "hessian", "quadratic_form", "kind")


def _stale_methods(loss: Loss) -> list[str]:
    """The methods (and ``kind``) ``loss`` inherits from a built-in loss above the class that
    defines its values."""
    t = type(loss)
    values = min(_definer(t, "pointwise"), _definer(t, "value"))
    base = t.__mro__.index(Loss)
    return [name for name in _DEPENDENT if values < (i := _definer(t, name)) < base
            and t.__mro__[i].__module__.startswith("cudbound.")]


class Loss(abc.ABC):
    """A surrogate loss l(y, t), convex in t, used as a weighted mean (see the module docstring)."""

    name: str = "loss"
    is_quadratic: bool = False
    strictly_convex: bool = False
    tends_to_zero: bool = False

    @property
    def kind(self) -> str:
        """What the loss is (module docstring): one of :data:`KINDS`.

        Derived for a loss that does not declare it: ``"quadratic"`` when ``is_quadratic``,
        ``"smooth"`` when it gives derivatives, else ``"generic"``.
        """
        if self.is_quadratic:
            return "quadratic"
        return "smooth" if self.has_derivatives else "generic"

    # ------------------------------------------------------------------ pointwise form
    def pointwise(self, y: np.ndarray, t: np.ndarray) -> np.ndarray:
        """l(y_i, t_i) elementwise, in NumPy."""
        raise NotImplementedError(f"{type(self).__name__} defines neither pointwise() nor value()")

    def cvxpy_pointwise(self, y: np.ndarray, t: cp.Expression) -> cp.Expression:
        """l(y_i, t_i) elementwise as a convex cvxpy expression in ``t``."""
        raise NotImplementedError(f"{type(self).__name__} defines neither cvxpy_pointwise() nor expression()")

    def derivatives(self, y: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(dl/dt, d2l/dt2) elementwise (optional; smooth losses)."""
        raise NotImplementedError(f"the {self.name} loss gives no derivatives")

    # ------------------------------------------------------------------ the weighted mean
    def value(self, design: np.ndarray, y: np.ndarray, weights: ArrayLike, beta: np.ndarray) -> float:
        """(1/n) sum_i w_i l(y_i, phi_i' beta) (a point of weight 0 counts 0, even where l overflows)."""
        w = np.asarray(weights, dtype=float)
        values = self.pointwise(y, design @ beta)
        if not np.all(np.isfinite(values)):
            values = np.where(w != 0, values, 0.0)
        return float(np.dot(w, values) / len(y))

    def expression(self, design: np.ndarray, y: np.ndarray, weights: np.ndarray | cp.Parameter,
                   beta: cp.Expression) -> cp.Expression:
        """The cvxpy expression of :meth:`value` (DPP in ``weights``)."""
        return (weights @ self.cvxpy_pointwise(y, design @ beta)) / len(y)

    def gradient(self, design: np.ndarray, y: np.ndarray, weights: ArrayLike, beta: np.ndarray) -> np.ndarray:
        """Gradient of :meth:`value` in beta (needs :meth:`derivatives`)."""
        w = np.asarray(weights, dtype=float)
        on = w != 0
        d1, _ = self.derivatives(y[on], design[on] @ beta)
        return design[on].T @ (w[on] * d1) / len(y)

    def hessian(self, design: np.ndarray, y: np.ndarray, weights: ArrayLike, beta: np.ndarray) -> np.ndarray:
        """Hessian of :meth:`value` in beta (needs :meth:`derivatives`)."""
        w = np.asarray(weights, dtype=float)
        on = w != 0
        _, d2 = self.derivatives(y[on], design[on] @ beta)
        return design[on].T @ (design[on] * (w[on] * d2)[:, None]) / len(y)

    @property
    def has_derivatives(self) -> bool:
        """True when :meth:`gradient` and :meth:`hessian` are available."""
        return _overrides(self, "derivatives") or (_overrides(self, "gradient") and _overrides(self, "hessian"))

    def quadratic_form(self, design: np.ndarray, y: np.ndarray,
                       weights: ArrayLike) -> tuple[np.ndarray, np.ndarray, float]:
        """(H, g, c) with value(beta) = beta'H beta - 2 g'beta + c (quadratic losses only)."""
        raise NotImplementedError(f"the {self.name} loss is not quadratic")

    def unpenalised_directions(self, design: np.ndarray) -> np.ndarray:
        """Orthonormal basis (p x r) of the directions the loss's penalty ignores (all: no penalty)."""
        return np.eye(design.shape[1])

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class SquaredLoss(Loss):
    """Squared loss l(y, t) = (y - t)^2, the loss of the paper's experiments.

    As a mean, L(beta) = (1/n) sum_i w_i (y_i - phi_i'beta)^2 = beta'H beta - 2 g'beta + c
    with H = Phi'W Phi / n, g = Phi'W y / n, c = y'W y / n.
    """

    name = "squared"
    kind = "quadratic"
    is_quadratic = True
    strictly_convex = True

    def pointwise(self, y: np.ndarray, t: np.ndarray) -> np.ndarray:
        return (y - t) ** 2

    def cvxpy_pointwise(self, y: np.ndarray, t: cp.Expression) -> cp.Expression:
        return cp.square(y - t)

    def derivatives(self, y: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return 2.0 * (t - y), np.full(np.shape(t), 2.0)

    def quadratic_form(self, design: np.ndarray, y: np.ndarray,
                       weights: ArrayLike) -> tuple[np.ndarray, np.ndarray, float]:
        n = len(y)
        w = np.asarray(weights, dtype=float)
        wd = design * w[:, None]
        return design.T @ wd / n, wd.T @ y / n, float(np.dot(w, y * y) / n)


class HingeLoss(Loss):
    """Hinge loss l(y, t) = max(0, 1 - y t) (support vector machines).

    Piecewise linear: each node problem is a linear program. Its minimiser need not be
    unique; the fit returns the minimiser of least Euclidean norm (``docs/losses.md``),
    computed exactly by :meth:`minimiser`.
    """

    name = "hinge"
    kind = "piecewise_linear"

    def pointwise(self, y: np.ndarray, t: np.ndarray) -> np.ndarray:
        return np.maximum(0.0, 1.0 - y * t)

    def cvxpy_pointwise(self, y: np.ndarray, t: cp.Expression) -> cp.Expression:
        return cp.pos(1.0 - cp.multiply(y, t))

    def minimiser(self, design: np.ndarray, y: np.ndarray, weights: ArrayLike) -> np.ndarray | None:
        """The least-norm minimiser of the weighted hinge loss, exactly (None if not certified).

        The linear program min sum_i w_i xi_i / n, xi_i >= 1 - a_i'beta, xi >= 0 (a_i = y_i phi_i)
        is solved by HiGHS (scipy). With its optimal dual (u, r), complementary slackness
        describes the whole optimal set: a_i'beta <= 1 where u_i > 0, a_i'beta >= 1 where
        r_i > 0 (both: = 1). Its point of least norm is a least-distance program, solved
        exactly through non-negative least squares (Lawson & Hanson 1974, ch. 23).
        """
        from scipy.optimize import linprog, nnls

        if type(self).value is not Loss.value or type(self).pointwise is not HingeLoss.pointwise:
            return None  # a subclass that changed the loss: not this linear program
        w = np.asarray(weights, dtype=float)
        on = w > 0
        A = (y[:, None] * design)[on]
        wn = w[on] / len(y)
        m, p = A.shape
        res = linprog(np.r_[np.zeros(p), wn], A_ub=np.hstack([-A, -np.eye(m)]), b_ub=-np.ones(m),
                      bounds=[(None, None)] * p + [(0.0, None)] * m, method="highs")
        if res.status != 0:
            return None
        u, r = -res.ineqlin.marginals, res.lower.marginals[p:]
        le, ge = u > 1e-9 * wn, r > 1e-9 * wn
        G = np.vstack([-A[le], A[ge]])               # least distance: min |beta| s.t. G beta >= h
        h = np.r_[-np.ones(int(le.sum())), np.ones(int(ge.sum()))]
        if G.shape[0] == 0:
            beta = np.zeros(p)
        else:
            E = np.vstack([G.T, h[None, :]])
            f = np.zeros(p + 1)
            f[p] = 1.0
            sol, _ = nnls(E, f, maxiter=50 * (G.shape[0] + p))
            resid = E @ sol - f
            if abs(resid[p]) < 1e-12:
                return None
            beta = -resid[:p] / resid[p]
        # certificate: a minimiser (its loss equals the LP optimum)
        if self.value(design, y, w, beta) > res.fun + 1e-12 * max(1.0, abs(res.fun)):
            return None
        return beta


class _VanishingMarginLoss(Loss):
    """A margin loss that tends to 0 as y t -> infinity and is strictly convex (``tends_to_zero``,
    ``strictly_convex``; the module docstring): the logistic and exponential losses. It has no
    minimiser on linearly separable data: its ridge form (``"<name>_ridge"``) has one."""

    strictly_convex = True
    tends_to_zero = True


class LogisticLoss(_VanishingMarginLoss):
    """Logistic loss l(y, t) = log(1 + exp(-y t)): no minimiser on separable data, use ``"logistic_ridge"``."""

    name = "logistic"
    kind = "smooth"

    def pointwise(self, y: np.ndarray, t: np.ndarray) -> np.ndarray:
        return np.logaddexp(0.0, -y * t)

    def cvxpy_pointwise(self, y: np.ndarray, t: cp.Expression) -> cp.Expression:
        return cp.logistic(-cp.multiply(y, t))

    def derivatives(self, y: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m = y * t
        s = 0.5 * (1.0 + np.tanh(-0.5 * m))  # sigma(-m), stable
        return -y * s, s * (1.0 - s)


class ExponentialLoss(_VanishingMarginLoss):
    """Exponential loss l(y, t) = exp(-y t) (AdaBoost): no minimiser on separable data, use ``"exponential_ridge"``."""

    name = "exponential"
    kind = "smooth"

    def pointwise(self, y: np.ndarray, t: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return np.exp(-y * t)

    def cvxpy_pointwise(self, y: np.ndarray, t: cp.Expression) -> cp.Expression:
        return cp.exp(-cp.multiply(y, t))

    def derivatives(self, y: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(over="ignore"):
            e = np.exp(-y * t)
        return -y * e, e


class RidgeLoss(Loss):
    """A loss plus a ridge penalty: L(beta) = (1/n) sum_i w_i l(y_i, phi_i'beta) + lam * |beta_pen|^2.

    ``base`` defaults to the squared loss (``"ridge:lam"``); ``"logistic_ridge:lam"``,
    ``"exponential_ridge:lam"`` and ``"hinge_ridge:lam"`` wrap the other built-in losses.
    The penalty is added once, whatever the bootstrap counts (they sum to n, so the data
    term keeps its scale). beta_pen leaves out the intercept: every column of the design
    that is constant (all entries equal, as the intercept column of every basis). With
    ``penalize_intercept=True`` all coefficients are penalised. A quadratic base stays
    quadratic, and its H = H_base + lam J is positive definite (lam > 0, at most one
    constant column of a full-rank design), so the compiled search applies.
    """

    def __init__(self, lam: float = DEFAULT_RIDGE, base: Loss | None = None, *, penalize_intercept: bool = False):
        self.lam = check_scalar(lam, "lam", numbers.Real, min_val=0.0, include_boundaries="neither",
                                hint=" (the ridge penalty weight)")
        self.base = SquaredLoss() if base is None else get_loss(base)
        if isinstance(self.base, RidgeLoss):
            raise ValueError("the base loss of RidgeLoss is already penalised.")
        self.penalize_intercept = bool(penalize_intercept)
        self.is_quadratic = self.base.is_quadratic
        # lam |beta|^2 over every coefficient is strictly convex, so then is the sum: the fit's
        # minimiser is unique and is taken as the solver returns it (no least-norm step)
        self.strictly_convex = self.base.strictly_convex or self.penalize_intercept
        self.tends_to_zero = self.base.tends_to_zero

    @property
    def kind(self) -> str:
        """The base loss's kind (a quadratic penalty does not change how a node is solved)."""
        return self.base.kind

    @property
    def _squared_base(self) -> bool:
        """The base is the built-in squared loss under its own name (``"ridge:LAM"``)."""
        return same_math(self.base, SquaredLoss) and self.base.name == "squared"

    @property
    def name(self) -> str:  # type: ignore[override]  # read-only here: it follows lam and the base loss
        prefix = "ridge" if self._squared_base else f"{self.base.name}_ridge"
        return f"{prefix}:{self.lam!r}" + (":all" if self.penalize_intercept else "")

    def penalty_mask(self, design: ArrayLike) -> np.ndarray:
        """Boolean (p,): the penalised columns (all but the constant ones, unless penalize_intercept)."""
        design = np.asarray(design)
        if self.penalize_intercept:
            return np.ones(design.shape[1], dtype=bool)
        constant = np.all(design == design[:1], axis=0) & (design[0] != 0)
        return ~constant

    def penalty_matrix(self, design: ArrayLike) -> np.ndarray:
        """Q with lam |beta_pen|^2 = beta'Q beta: lam on the diagonal of the penalised columns."""
        return self.lam * np.diag(self.penalty_mask(design).astype(float))

    def value(self, design: np.ndarray, y: np.ndarray, weights: ArrayLike, beta: np.ndarray) -> float:
        b = np.asarray(beta, dtype=float)[self.penalty_mask(design)]
        return self.base.value(design, y, weights, beta) + self.lam * float(b @ b)

    def expression(self, design: np.ndarray, y: np.ndarray, weights: np.ndarray | cp.Parameter,
                   beta: cp.Expression) -> cp.Expression:
        idx = np.flatnonzero(self.penalty_mask(design))
        pen = self.lam * cp.sum_squares(beta[idx]) if len(idx) else 0.0
        return self.base.expression(design, y, weights, beta) + pen

    @property
    def has_derivatives(self) -> bool:
        return self.base.has_derivatives

    def gradient(self, design: np.ndarray, y: np.ndarray, weights: ArrayLike, beta: np.ndarray) -> np.ndarray:
        mask = self.penalty_mask(design)
        return self.base.gradient(design, y, weights, beta) + 2.0 * self.lam * np.where(mask, beta, 0.0)

    def hessian(self, design: np.ndarray, y: np.ndarray, weights: ArrayLike, beta: np.ndarray) -> np.ndarray:
        return self.base.hessian(design, y, weights, beta) + 2.0 * self.lam * np.diag(
            self.penalty_mask(design).astype(float))

    def quadratic_form(self, design: np.ndarray, y: np.ndarray,
                       weights: ArrayLike) -> tuple[np.ndarray, np.ndarray, float]:
        H, g, c = self.base.quadratic_form(design, y, weights)
        return H + self.lam * np.diag(self.penalty_mask(design).astype(float)), g, c

    def unpenalised_directions(self, design: np.ndarray) -> np.ndarray:
        return np.eye(design.shape[1])[:, ~self.penalty_mask(design)]

    def __repr__(self) -> str:
        base = "" if self._squared_base else f", base={self.base!r}"
        extra = ", penalize_intercept=True" if self.penalize_intercept else ""
        return f"RidgeLoss(lam={self.lam!r}{base}{extra})"


class FunctionLoss(Loss):
    """A loss from a function pair: ``value(design, y, weights, beta)`` (NumPy) and
    ``expression(design, y, weights, beta)`` (cvxpy, DPP in ``weights``).

    Optional keywords: ``gradient`` and ``hessian`` (functions of the same arguments),
    ``strictly_convex`` and ``tends_to_zero`` (see :class:`Loss`).
    """

    def __init__(self, name: str, value: Callable[..., float], expression: Callable[..., cp.Expression], *,
                 gradient: Callable[..., ArrayLike] | None = None, hessian: Callable[..., ArrayLike] | None = None,
                 strictly_convex: bool = False, tends_to_zero: bool = False):
        self.name, self._value, self._expression = str(name), value, expression
        self._gradient, self._hessian = gradient, hessian
        self.strictly_convex, self.tends_to_zero = bool(strictly_convex), bool(tends_to_zero)

    def value(self, design: np.ndarray, y: np.ndarray, weights: ArrayLike, beta: np.ndarray) -> float:
        return float(self._value(design, y, weights, beta))

    def expression(self, design: np.ndarray, y: np.ndarray, weights: np.ndarray | cp.Parameter,
                   beta: cp.Expression) -> cp.Expression:
        return self._expression(design, y, weights, beta)

    @property
    def has_derivatives(self) -> bool:
        return self._gradient is not None and self._hessian is not None

    def gradient(self, design: np.ndarray, y: np.ndarray, weights: ArrayLike, beta: np.ndarray) -> np.ndarray:
        if self._gradient is None:
            raise NotImplementedError(f"the {self.name} loss gives no gradient")
        return np.asarray(self._gradient(design, y, weights, beta), dtype=float)

    def hessian(self, design: np.ndarray, y: np.ndarray, weights: ArrayLike, beta: np.ndarray) -> np.ndarray:
        if self._hessian is None:
            raise NotImplementedError(f"the {self.name} loss gives no Hessian")
        return np.asarray(self._hessian(design, y, weights, beta), dtype=float)

    def __repr__(self) -> str:
        return f"FunctionLoss({self.name!r})"


LOSSES = {"squared": SquaredLoss, "hinge": HingeLoss, "logistic": LogisticLoss, "exponential": ExponentialLoss,
          "ridge": RidgeLoss}
"""Built-in losses by name; ``get_loss`` also reads ``"ridge:LAM"`` and ``"<loss>_ridge[:LAM]"``."""

_SPECS = "'squared', 'hinge', 'logistic', 'exponential', 'ridge[:LAM]', '<loss>_ridge[:LAM]'"


def _check_instance(loss: Loss) -> Loss:
    pair = _overrides(loss, "pointwise") and _overrides(loss, "cvxpy_pointwise")
    direct = _overrides(loss, "value") and _overrides(loss, "expression")
    if not (pair or direct):
        raise TypeError(f"{type(loss).__name__} must define pointwise() and cvxpy_pointwise(), "
                        f"or value() and expression(); see docs/losses.md.")
    if loss.is_quadratic and not _overrides(loss, "quadratic_form"):
        raise TypeError(f"{type(loss).__name__} sets is_quadratic but defines no quadratic_form().")
    stale = _stale_methods(loss)
    if stale:
        t = type(loss)
        parents = sorted({t.__mro__[_definer(t, name)].__name__ for name in stale})
        methods = ", ".join(f"{name}()" if name != "kind" else "kind" for name in stale)
        raise TypeError(f"{t.__name__} redefines its loss but inherits {methods} from {' and '.join(parents)}, "
                        f"which compute {parents[0]}'s loss: it would be solved as that loss. Define them for "
                        f"the new loss (kind: one of {', '.join(map(repr, KINDS))}), or derive from "
                        f"cudbound.losses.Loss; see docs/losses.md.")
    if loss.kind not in KINDS:
        raise TypeError(f"{type(loss).__name__}.kind must be one of {', '.join(map(repr, KINDS))}; "
                        f"got {loss.kind!r}.")
    return loss


def _parse_lambda(text: str, spec: str) -> float:
    try:
        lam = float(text)
    except ValueError:
        lam = math.nan
    if not math.isfinite(lam) or lam <= 0.0:
        raise ValueError(f"`loss`: the penalty weight in {spec!r} must be a positive number; got {text!r}.")
    return lam


def get_loss(loss: str | Loss) -> Loss:
    """Return a :class:`Loss` from a spec string or an instance.

    Specs: ``"squared"``, ``"hinge"``, ``"logistic"``, ``"exponential"``, ``"ridge"``
    (squared loss plus ``0.1 * |beta|^2``, intercept unpenalised) or ``"ridge:LAM"``, and
    ``"hinge_ridge"``, ``"logistic_ridge"``, ``"exponential_ridge"`` (optionally ``:LAM``).
    A ``Loss`` instance is checked (it must define the pointwise pair or value and
    expression) and returned as is.
    """
    if isinstance(loss, Loss):
        return _check_instance(loss)
    if isinstance(loss, str):
        spec = loss.strip().lower()
        key, sep, arg = spec.partition(":")
        key = key.strip()
        penalise_all = False
        ridge = key in ("ridge", "squared_ridge") or (
            key.endswith("_ridge") and key[: -len("_ridge")] in ("hinge", "logistic", "exponential"))
        if key in LOSSES and sep and not ridge:
            raise ValueError(f"`loss`: {key!r} takes no parameter; got {loss!r}.")
        if not ridge and key not in LOSSES:
            raise ValueError(f"`loss` must be one of {_SPECS} or a Loss instance; got {loss!r}.")
        if sep and (arg == "all" or arg.endswith(":all")):
            arg, penalise_all = arg[: -len("all")].rstrip(":"), True
        lam = _parse_lambda(arg.strip(), loss) if arg.strip() else DEFAULT_RIDGE
        if sep and not arg.strip() and not penalise_all:
            lam = _parse_lambda("", loss)  # "ridge:" names no weight
        if key == "ridge" or key == "squared_ridge":
            return RidgeLoss(lam, penalize_intercept=penalise_all)
        if key.endswith("_ridge") and key[: -len("_ridge")] in ("hinge", "logistic", "exponential"):
            return RidgeLoss(lam, LOSSES[key[: -len("_ridge")]](), penalize_intercept=penalise_all)
        if key in LOSSES and not sep:
            return LOSSES[key]()
        if key in LOSSES:
            raise ValueError(f"`loss`: {key!r} takes no parameter; got {loss!r}.")
        raise ValueError(f"`loss` must be one of {_SPECS} or a Loss instance; got {loss!r}.")
    raise TypeError(f"`loss` must be a string or a cudbound.losses.Loss instance; got {type(loss).__name__}.")
