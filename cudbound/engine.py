"""Choosing and reusing node solvers: one engine per (loss, design, labels).

``engine="auto"`` uses the exact active-set solver for a quadratic loss whose
bootstrap Hessian is positive definite, and the cvxpy solver otherwise (another
loss, or a bootstrap sample with too few distinct points for the basis);
``engine="cvxpy"`` forces the generic path. A node the active-set solver cannot
finish is handed to the cvxpy solver, and a cvxpy failure is retried with the next
solver in its chain; a node nobody solves leaves a certified upper bound.
"""
from __future__ import annotations

import numpy as np

from .search import ActiveSetNodeSolver, CvxpyNodeSolver, NodeSolution, NodeSolveError, NodeSolver
from .search import ReplicateProblem, branch_and_bound
from .search.node_solvers import _QuadraticReplicate

__all__ = ["ReplicateEngine", "ENGINES"]

ENGINES = ("auto", "cvxpy")


class _WithFallback(NodeSolver):
    """Try the primary solver; on failure solve the node with the fallback."""

    def __init__(self, primary, fallback):
        self.primary, self.fallback = primary, fallback

    def solve(self, rows, signs, warm=None):
        try:
            return self.primary.solve(rows, signs, warm)
        except NodeSolveError:
            return self.fallback().solve(rows, signs, None)


class ReplicateEngine:
    """Node solvers for one (loss, design, y), built once and reused across replicates."""

    def __init__(self, design, y, loss, *, engine="auto", solver="ECOS"):
        if engine not in ENGINES:
            raise ValueError(f"`engine` must be one of {ENGINES}; got {engine!r}.")
        self.design, self.y, self.loss, self.engine, self.solver_name = design, y, loss, engine, solver
        self._cvxpy = None
        self._counts = None
        if engine == "cvxpy" or not loss.is_quadratic:
            self._cvxpy_solver()  # build (and validate the solver name) now
        self._active = ActiveSetNodeSolver(loss, design, y) if loss.is_quadratic else None

    def _cvxpy_solver(self):
        if self._cvxpy is None:
            self._cvxpy = CvxpyNodeSolver(self.loss, self.design, self.y, solver=self.solver_name)
        if self._cvxpy_counts is not self._counts:
            self._cvxpy.set_weights(self._counts)
            self._cvxpy_counts = self._counts
        return self._cvxpy

    _cvxpy_counts = None

    def prepare(self, counts):
        """Set up a replicate: returns (node solver, root solution, quadratic form or None)."""
        self._counts = np.asarray(counts, dtype=float)
        quad = None
        if self.loss.is_quadratic:
            quad = _QuadraticReplicate(self.loss, self.design, self.y, self._counts)
        if self.engine == "auto" and quad is not None and ActiveSetNodeSolver.positive_definite(quad.H):
            self._active.set_weights(self._counts)
            solver = _WithFallback(self._active, self._cvxpy_solver)
            root = NodeSolution(quad.L_u, quad.beta_u, (quad.beta_u, [], []))
            return solver, root, quad
        solver = self._cvxpy_solver()
        if quad is not None:
            root = NodeSolution(quad.L_u, quad.beta_u)
        else:
            root = solver.solve(np.zeros(0, dtype=int), np.zeros(0))
        return solver, root, quad

    def search(self, counts, beta_hat, alpha_n, *, max_nodes=None, time_limit=None, record_tree=False):
        """Branch and bound for one count vector; returns a SearchOutcome."""
        solver, root, quad = self.prepare(counts)
        problem = ReplicateProblem(self.design, self.y, self._counts, beta_hat, self.loss, alpha_n,
                                   quad=quad, beta_u=root.beta, L_u=root.value)
        return branch_and_bound(problem, solver, root, max_nodes=max_nodes, time_limit=time_limit,
                                record_tree=record_tree, extra_lower=[(beta_hat, problem.L_hat)])
