"""Node subproblem solvers: min_beta L(D^(b), beta) over a cone {G beta >= 0}.

Modelling is kept apart from solving, as in cvxpy. A solver is built once per
(loss, design) and reused: ``set_weights(counts)`` starts a replicate,
``solve(rows, signs, warm=None)`` solves one node whose constraints are
``signs[k] * phi_{rows[k]}' beta >= 0``. It returns a :class:`NodeSolution`
(finite value and point; ``fallback`` says the node was handed from the first solver
to another) or raises :class:`NodeSolveError`: every numerical failure of the
solvers it calls (cvxpy's SolverError, a ValueError or RuntimeError from a solver
library, scipy's NNLS not converging, LinAlgError, a separation LP that fails,
a non-finite answer) becomes a NodeSolveError or, inside a polish, "not certified".
:data:`SOLVER_ERRORS` lists the exception families the search treats as a solver
failure of a node or replicate (never programming errors such as TypeError).

- :class:`CvxpyNodeSolver`: any convex loss. The problem is built once with cvxpy
  Parameters (the bootstrap weights and one sign per row, 0 for a free row), so it
  is DPP and a node only sets values and re-solves: no re-canonicalisation. A failed
  solve is retried with the ``fallbacks``. For quadratic losses the interior-point
  answer is polished to an exact KKT point (``qp.polish_kkt``); for a loss with a
  gradient and Hessian, by Newton's method on the active set (``optim.smooth.polish_smooth``);
  any other loss keeps the solver's answer, solved with tight tolerances (about 1e-10).
  For a loss that tends to zero (logistic, exponential) on a bootstrap sample that a
  direction can separate, the points the node's cone separates are dropped first
  (``optim.smooth.separation``): the infimum is then attained, and the solution's point is
  pushed along the separating direction until its loss is within rounding of it.
- :class:`ActiveSetNodeSolver`: quadratic losses with a positive definite bootstrap
  Hessian; exact dual active-set pivots (the compiled search's routine) warm-started
  from the parent's solution.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np
from cvxpy.settings import SOLUTION_PRESENT

from .node_qp import _gi
from ..optim.smooth import SeparationUnknown, polish_smooth, push_to_infimum, separation
from ..optim.cvxpy_bridge import TIGHT_OPTIONS, default_solvers, solve_fresh
from ..optim.qp import polish_kkt, positive_definite
from .realisability import RealisabilityUnknown

__all__ = ["NodeSolution", "NodeSolveError", "NodeSolver", "CvxpyNodeSolver", "ActiveSetNodeSolver",
           "default_solvers", "SOLVER_ERRORS", "checked_solution", "QuadraticReplicate"]


class NodeSolveError(RuntimeError):
    """No solver produced a trustworthy minimiser for a node."""


SOLVER_ERRORS = (NodeSolveError, SeparationUnknown, RealisabilityUnknown, np.linalg.LinAlgError,
                 cp.error.SolverError, ArithmeticError)
"""Exceptions that mean "the numerics failed here", caught by the search and the engine, which
then keep a certified bound: a node solve that fails (NodeSolveError), LPs that decide nothing
(SeparationUnknown, RealisabilityUnknown), linear algebra that does not converge (LinAlgError),
cvxpy's SolverError, and floating-point errors (ZeroDivisionError from compiled code,
OverflowError). Library ValueErrors and RuntimeErrors (scipy's NNLS) are converted where the
library is called, so that a programming error elsewhere is never mistaken for one."""


def checked_solution(sol: "NodeSolution") -> "NodeSolution":
    """``sol`` if its value and point are finite, else NodeSolveError (a NaN must never reach a bound).

    The loss at the point may be +inf (a point pushed towards an infimum at infinity whose
    loss overflowed): the point then gives no lower bound, and the value stays exact."""
    if not (np.isfinite(sol.value) and np.all(np.isfinite(sol.beta))
            and (np.isfinite(sol.beta_value) or sol.beta_value == np.inf)):
        raise NodeSolveError("the solver returned a non-finite value or point")
    return sol


@dataclass
class NodeSolution:
    value: float                # min (infimum) of L(D^(b), .) over the node's closed cone
    beta: np.ndarray            # a minimiser (for an infimum not attained: a point whose loss is within rounding)
    warm: object = field(default=None, repr=False)  # solver-specific state for the children
    point_value: float | None = None  # L(D^(b), beta) when it differs from value
    fallback: bool = False      # the first solver failed and another one produced this solution

    @property
    def beta_value(self) -> float:
        """The loss at ``beta`` (equal to ``value`` when the minimum is attained)."""
        return self.value if self.point_value is None else self.point_value


class NodeSolver:
    """Interface of a node solver (see module docstring)."""

    exact = True

    def set_weights(self, counts: np.ndarray) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def solve(self, rows, signs, warm=None) -> NodeSolution:  # pragma: no cover - interface
        raise NotImplementedError


class QuadraticReplicate:
    """The quadratic form of a quadratic loss at one count vector, L(b) = L_u + (b - b_u)'H(b - b_u)
    with (H, g, c) = ``loss.quadratic_form`` and b_u a least-squares solution of H b = g; whether H is
    positive definite is decided once (``positive_definite``). The engine and the node solvers of one
    replicate share it."""

    def __init__(self, loss, design, y, counts):
        self.H, self.g, self.c = loss.quadratic_form(design, y, counts)
        self.beta_u, *_ = np.linalg.lstsq(self.H, self.g, rcond=None)
        self.L_u = loss.value(design, y, counts, self.beta_u)
        self.positive_definite = positive_definite(self.H)  # decided once per replicate

    def value(self, beta):
        d = beta - self.beta_u
        return self.L_u + float(d @ self.H @ d)


class CvxpyNodeSolver(NodeSolver):
    """Generic node solver through cvxpy (DPP: compiled once, re-solved per node).

    ``solver=None`` picks the default for the loss (:func:`default_solvers`); a failed
    solve is retried with ``fallbacks``. For non-quadratic losses the solvers run with
    tight tolerances (:data:`TIGHT_OPTIONS`), which ``solver_options`` (a dict keyed by
    solver name) overrides.
    """

    def __init__(self, loss, design, y, *, solver=None, fallbacks=None, solver_options=None):
        n, p = design.shape
        self.loss, self.design, self.y = loss, design, y
        self.sign = cp.Parameter(n)
        self.beta = cp.Variable(p)
        self.sign.value = np.zeros(n)
        if loss.is_quadratic:
            # compact model of a quadratic loss: L(b) = |R b - r|^2 + const with R'R = H, R'r = g;
            # one cone of size p + 2 instead of one per observation (3x cheaper per solve)
            self.R, self.r = cp.Parameter((p, p)), cp.Parameter(p)
            self.R.value, self.r.value = np.eye(p), np.zeros(p)
            objective = cp.Minimize(cp.sum_squares(self.R @ self.beta - self.r))
        else:
            self.weights = cp.Parameter(n, nonneg=True)
            self.weights.value = np.ones(n)
            objective = cp.Minimize(loss.expression(design, y, self.weights, self.beta))
        self.problem = cp.Problem(objective, [cp.multiply(self.sign, design @ self.beta) >= 0])
        if not self.problem.is_dcp(dpp=True):
            raise ValueError(f"the {loss.name} loss does not give a DPP problem; check Loss.expression")
        installed = set(cp.installed_solvers())
        default, default_fallbacks = default_solvers(loss)
        solver = default if solver is None else solver
        fallbacks = default_fallbacks if fallbacks is None else fallbacks
        chain = [solver] + [s for s in fallbacks if s != solver]
        self.solvers = [s for s in chain if s in installed]
        if solver not in installed:
            raise ValueError(f"cvxpy solver {solver!r} is not installed; installed: {sorted(installed)}.")
        options = {} if loss.is_quadratic else {k: dict(v) for k, v in TIGHT_OPTIONS.items()}
        for name, opts in (solver_options or {}).items():
            options[name] = dict(opts)
        self.solver_options = options
        self._quad = None
        self._polish = (not loss.is_quadratic) and loss.has_derivatives
        self._free = loss.unpenalised_directions(design) if loss.tends_to_zero else None
        self._separable = None  # points some direction separates at the root (None: none)
        self._weights_now = None

    def set_weights(self, counts):
        self.counts = np.asarray(counts, dtype=float)
        if self.loss.is_quadratic:
            self._quad = QuadraticReplicate(self.loss, self.design, self.y, self.counts)
            w, V = np.linalg.eigh(self._quad.H)
            R = np.sqrt(np.clip(w, 0.0, None))[:, None] * V.T  # R'R = H, also when H is singular
            self.R.value = R
            self.r.value = np.linalg.lstsq(R.T, self._quad.g, rcond=None)[0]
        else:
            self._quad = None
            self._set_param(self.counts)
            self._separable = None
            if self._free is not None:
                try:
                    mask, _ = separation(self.design, self.y, self.counts, self._free)
                except SeparationUnknown:
                    mask = self.counts > 0  # undecided: test every node (a failure there is certified)
                self._separable = mask if mask.any() else None

    def _set_param(self, w):
        if w is not self._weights_now:
            self.weights.value = w
            self._weights_now = w

    def solve(self, rows, signs, warm=None):
        rows = np.asarray(rows, dtype=int)
        signs = np.asarray(signs, dtype=float)
        sign = np.zeros(self.design.shape[0])
        sign[rows] = signs
        self.sign.value = sign
        G = self.design[rows] * signs[:, None]
        weights, direction = self.counts, None
        if self._separable is not None:
            # drop the points this cone separates: the infimum of the rest is attained
            try:
                mask, direction = separation(self.design, self.y, self.counts, self._free, G, self._separable)
            except SeparationUnknown as exc:
                raise NodeSolveError(f"separation LP: {exc}") from None
            if mask.any():
                weights = np.where(mask, 0.0, self.counts)
            else:
                direction = None
        if self._quad is None:
            self._set_param(weights)
        errors = []
        for k, name in enumerate(self.solvers):
            try:
                with warnings.catch_warnings():
                    # an inaccurate answer is checked below (KKT polish) or rejected: no need to warn
                    warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                    solve_fresh(self.problem, name, self.solver_options.get(name, {}))
            except NotImplementedError:
                raise
            except (cp.error.SolverError, ValueError, ArithmeticError, RuntimeError) as exc:
                # the solver library failed (LinAlgError is a ValueError): try the next solver
                errors.append(f"{name}: {type(exc).__name__}: {exc}")
                continue
            if self.problem.status not in SOLUTION_PRESENT or self.beta.value is None:
                errors.append(f"{name}: status {self.problem.status}")
                continue
            beta = np.asarray(self.beta.value, dtype=float)
            if not np.all(np.isfinite(beta)):
                errors.append(f"{name}: non-finite solution")
                continue
            if self._quad is None:
                sol = self._finish(G, beta, weights, direction)
                if sol is None:
                    errors.append(f"{name}: status {self.problem.status}, no certified point")
                    continue
            else:
                exact = polish_kkt(self._quad.H, self._quad.g, G, beta)
                if exact is None:
                    errors.append(f"{name}: solution failed the KKT check")
                    continue
                sol = NodeSolution(self._quad.value(exact), exact)
            try:
                sol = checked_solution(sol)
            except NodeSolveError as exc:
                errors.append(f"{name}: {exc}")
                continue
            sol.fallback = k > 0
            return sol
        raise NodeSolveError("; ".join(errors) or "no solver available")

    def _finish(self, G, beta, weights, direction):
        """The node's value and point from a non-quadratic solver answer (None: rejected)."""
        loss, design, y = self.loss, self.design, self.y
        polished = None
        if self._polish:
            polished = polish_smooth(lambda b: loss.value(design, y, weights, b),
                                     lambda b: loss.gradient(design, y, weights, b),
                                     lambda b: loss.hessian(design, y, weights, b), G, beta)
        if polished is not None:
            beta = polished
        elif self.problem.status != cp.OPTIMAL:
            return None
        value = loss.value(design, y, weights, beta)
        if direction is None:
            return NodeSolution(value, beta)
        point, point_value = push_to_infimum(loss, design, y, self.counts, beta, direction, value, rows=design)
        return NodeSolution(value, point, point_value=point_value)


class ActiveSetNodeSolver(NodeSolver):
    """Exact node solver for quadratic losses (positive definite bootstrap Hessian).

    Runs the compiled dual active-set routine of the compiled search
    (``node_qp._gi``), warm-started from the parent's active set.
    """

    def __init__(self, loss, design, y):
        if not loss.is_quadratic:
            raise ValueError("ActiveSetNodeSolver needs a quadratic loss")
        self.loss, self.design, self.y = loss, design, y

    def set_weights(self, counts):
        self.quad = QuadraticReplicate(self.loss, self.design, self.y, np.asarray(counts, dtype=float))
        self.Qinv = 0.5 * np.linalg.inv(self.quad.H)  # f = 1/2 x'Qx + c'x with Q = 2H

    def solve(self, rows, signs, warm=None):
        rows = np.asarray(rows, dtype=np.int64)
        P = np.ascontiguousarray(self.design[rows], dtype=np.float64)
        p = P.shape[1]
        norms = np.sqrt(np.einsum("ij,ij->i", P, P))
        sgn = np.asarray(signs).astype(np.int8)
        act, u = np.zeros(p, dtype=np.int64), np.zeros(p)
        if warm is not None:
            x0, act_rows, u0 = warm
            pos = {int(r): k for k, r in enumerate(rows)}
            nact = len(act_rows)
            act[:nact] = [pos[int(r)] for r in act_rows]
            u[:nact] = u0
            x = np.array(x0, dtype=np.float64)
        else:
            nact, x = 0, np.array(self.quad.beta_u, dtype=np.float64)
        try:
            status, nact = _gi(self.Qinv, P, norms, sgn, 0.0, self.quad.beta_u, x, act, u, nact)
        except ArithmeticError as exc:  # compiled code: division by zero
            raise NodeSolveError(f"active set: {type(exc).__name__}: {exc}") from None
        if status != 0:
            raise NodeSolveError(f"active set: status {status} (numerical failure)")
        return checked_solution(NodeSolution(self.quad.value(x), x,
                                     (x, [int(rows[k]) for k in act[:nact]], u[:nact].copy())))
