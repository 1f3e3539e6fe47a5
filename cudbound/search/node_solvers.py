"""Node subproblem solvers: min_beta L(D^(b), beta) over a cone {G beta >= 0}.

Modelling is kept apart from solving, as in cvxpy. A solver is built once per
(loss, design) and reused: ``set_weights(counts)`` starts a replicate,
``solve(rows, signs, warm=None)`` solves one node whose constraints are
``signs[k] * phi_{rows[k]}' beta >= 0``. It returns a :class:`NodeSolution`
or raises :class:`NodeSolveError`.

- :class:`CvxpyNodeSolver`: any convex loss. The problem is built once with cvxpy
  Parameters (the bootstrap weights and one sign per row, 0 for a free row), so it
  is DPP and a node only sets values and re-solves: no re-canonicalisation. ECOS by
  default; a failed solve is retried with the ``fallbacks``. For quadratic losses
  the interior-point answer is polished to an exact KKT point (``qp.polish_kkt``).
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

from .compiled import _gi
from .qp import polish_kkt

__all__ = ["NodeSolution", "NodeSolveError", "NodeSolver", "CvxpyNodeSolver", "ActiveSetNodeSolver"]


class NodeSolveError(RuntimeError):
    """No solver produced a trustworthy minimiser for a node."""


@dataclass
class NodeSolution:
    value: float                # min of L(D^(b), .) over the node's closed cone
    beta: np.ndarray            # a minimiser
    warm: object = field(default=None, repr=False)  # solver-specific state for the children


class NodeSolver:
    """Interface of a node solver (see module docstring)."""

    exact = True

    def set_weights(self, counts: np.ndarray) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def solve(self, rows, signs, warm=None) -> NodeSolution:  # pragma: no cover - interface
        raise NotImplementedError


class _QuadraticReplicate:
    """The quadratic form of a loss at one count vector: L = L_u + (b - b_u)'H(b - b_u)."""

    def __init__(self, loss, design, y, counts):
        self.H, self.g, self.c = loss.quadratic_form(design, y, counts)
        self.beta_u, *_ = np.linalg.lstsq(self.H, self.g, rcond=None)
        self.L_u = loss.value(design, y, counts, self.beta_u)

    def value(self, beta):
        d = beta - self.beta_u
        return self.L_u + float(d @ self.H @ d)


class CvxpyNodeSolver(NodeSolver):
    """Generic node solver through cvxpy (DPP: compiled once, re-solved per node)."""

    def __init__(self, loss, design, y, *, solver="ECOS", fallbacks=("CLARABEL", "SCS"), solver_options=None):
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
        chain = [solver] + [s for s in fallbacks if s != solver]
        self.solvers = [s for s in chain if s in installed]
        if solver not in installed:
            raise ValueError(f"cvxpy solver {solver!r} is not installed; installed: {sorted(installed)}.")
        self.solver_options = dict(solver_options or {})
        self._quad = None

    def set_weights(self, counts):
        self.counts = np.asarray(counts, dtype=float)
        if self.loss.is_quadratic:
            self._quad = _QuadraticReplicate(self.loss, self.design, self.y, self.counts)
            w, V = np.linalg.eigh(self._quad.H)
            R = np.sqrt(np.clip(w, 0.0, None))[:, None] * V.T  # R'R = H, also when H is singular
            self.R.value = R
            self.r.value = np.linalg.lstsq(R.T, self._quad.g, rcond=None)[0]
        else:
            self._quad = None
            self.weights.value = self.counts

    def solve(self, rows, signs, warm=None):
        sign = np.zeros(self.design.shape[0])
        sign[np.asarray(rows, dtype=int)] = signs
        self.sign.value = sign
        errors = []
        for name in self.solvers:
            try:
                with warnings.catch_warnings():
                    # an inaccurate answer is checked below (KKT polish) or rejected: no need to warn
                    warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                    self.problem.solve(solver=name, **self.solver_options.get(name, {}))
            except cp.error.SolverError as exc:
                errors.append(f"{name}: {exc}")
                continue
            if self.problem.status not in SOLUTION_PRESENT or self.beta.value is None:
                errors.append(f"{name}: status {self.problem.status}")
                continue
            beta = np.asarray(self.beta.value, dtype=float)
            if self._quad is None:
                if self.problem.status != cp.OPTIMAL:
                    errors.append(f"{name}: status {self.problem.status}")
                    continue
                return NodeSolution(self.loss.value(self.design, self.y, self.counts, beta), beta)
            G = self.design[np.asarray(rows, dtype=int)] * np.asarray(signs, dtype=float)[:, None]
            exact = polish_kkt(self._quad.H, self._quad.g, G, beta)
            if exact is not None:
                return NodeSolution(self._quad.value(exact), exact)
            errors.append(f"{name}: solution failed the KKT check")
        raise NodeSolveError("; ".join(errors) or "no solver available")


class ActiveSetNodeSolver(NodeSolver):
    """Exact node solver for quadratic losses (positive definite bootstrap Hessian).

    Runs the compiled dual active-set routine of the compiled search
    (``compiled._gi``), warm-started from the parent's active set.
    """

    def __init__(self, loss, design, y):
        if not loss.is_quadratic:
            raise ValueError("ActiveSetNodeSolver needs a quadratic loss")
        self.loss, self.design, self.y = loss, design, y

    def set_weights(self, counts):
        self.quad = _QuadraticReplicate(self.loss, self.design, self.y, np.asarray(counts, dtype=float))
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
        status, nact = _gi(self.Qinv, P, norms, sgn, 0.0, self.quad.beta_u, x, act, u, nact)
        if status != 0:
            raise NodeSolveError(f"active set: status {status} (numerical failure)")
        return NodeSolution(self.quad.value(x), x, (x, [int(rows[k]) for k in act[:nact]], u[:nact].copy()))
