"""Choosing and reusing search engines: one per (loss, design, labels).

- ``engine="auto"`` (default): for a quadratic loss whose bootstrap Hessian is
  positive definite (squared, ridge), the compiled search (``search.compiled``,
  numba); otherwise the Python search (another loss, or a bootstrap sample with too
  few distinct points for the basis), with screening by one convex solve per point,
  the paper's bound and static branching (largest |change in C| first: measured better
  than the flip-cost orders without the flip-cost bound). Its node solves: for a
  non-quadratic loss with derivatives (logistic, exponential, their ridge versions,
  user losses with ``derivatives``), SQP with exact active-set QP steps
  (``search.smooth_node_solver``); otherwise cvxpy.
- ``engine="python"``: the Python search, with exact active-set node solves for a
  quadratic loss (positive definite Hessian), the SQP solver for a non-quadratic loss
  with derivatives, and cvxpy otherwise.
- ``engine="cvxpy"``: the Python search with every node solved through cvxpy.

All three return the same Q^(b). A replicate the compiled search cannot finish is
rerun on the Python path; a node the active-set or SQP solver cannot finish is handed
to cvxpy, and a cvxpy failure is retried with the next solver in its chain; a node
nobody solves leaves a certified upper bound and the replicate says so.
"""
from __future__ import annotations

import time

import numpy as np

from .search import ActiveSetNodeSolver, CvxpyNodeSolver, NodeSolution, NodeSolveError, NodeSolver
from .search import ReplicateProblem, SearchOptions, SearchOutcome, Tolerances, branch_and_bound
from .search.bnb import _value_at
from .search.compiled import compiled_search
from .search.convex import SeparationUnknown
from .search.qp import positive_definite
from .search.node_solvers import _QuadraticReplicate
from .search.smooth_node_solver import SmoothNodeSolver

__all__ = ["ReplicateEngine", "ENGINES"]

ENGINES = ("auto", "python", "cvxpy")


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

    def __init__(self, design, y, loss, *, engine="auto", solver=None):
        if engine not in ENGINES:
            raise ValueError(f"`engine` must be one of {ENGINES}; got {engine!r}.")
        self.design, self.y, self.loss, self.engine, self.solver_name = design, y, loss, engine, solver
        self._cvxpy = None
        self._counts = None
        self._cvxpy_counts = None  # the counts the cvxpy solver's weights were last set to
        if engine == "cvxpy" or not loss.is_quadratic:
            self._cvxpy_solver()  # build (and validate the solver name) now
        self._active = ActiveSetNodeSolver(loss, design, y) if loss.is_quadratic else None
        self._smooth = None
        if engine != "cvxpy" and not loss.is_quadratic and loss.has_derivatives:
            self._smooth = SmoothNodeSolver(loss, design, y)

    def _cvxpy_solver(self):
        if self._cvxpy is None:
            self._cvxpy = CvxpyNodeSolver(self.loss, self.design, self.y, solver=self.solver_name)
        if self._cvxpy_counts is not self._counts:
            self._cvxpy.set_weights(self._counts)
            self._cvxpy_counts = self._counts
        return self._cvxpy

    def prepare(self, counts):
        """Set up a replicate: returns (node solver, root solution, quadratic form or None)."""
        self._counts = np.asarray(counts, dtype=float)
        quad = None
        if self.loss.is_quadratic:
            quad = _QuadraticReplicate(self.loss, self.design, self.y, self._counts)
        if self.engine != "cvxpy" and quad is not None and positive_definite(quad.H):
            self._active.set_weights(self._counts)
            solver = _WithFallback(self._active, self._cvxpy_solver)
            root = NodeSolution(quad.L_u, quad.beta_u, (quad.beta_u, [], []))
            return solver, root, quad
        if self._smooth is not None:
            self._smooth.set_weights(self._counts)
            solver = _WithFallback(self._smooth, self._cvxpy_solver)
            return solver, solver.solve(np.zeros(0, dtype=int), np.zeros(0)), None
        solver = self._cvxpy_solver()
        if quad is not None:
            root = NodeSolution(quad.L_u, quad.beta_u)
        else:
            root = solver.solve(np.zeros(0, dtype=int), np.zeros(0))
        return solver, root, quad

    def search(self, counts, beta_hat, alpha_n, options=SearchOptions(), *, record_tree=False):
        """Branch and bound for one count vector; returns a SearchOutcome.

        ``record_tree`` (a networkx.DiGraph of the search) needs the Python search. If the
        root problem or a screening solve cannot be solved by any solver, the replicate
        returns the trivial certified bound max|C| / n (g <= 1), flagged ``solver_failure``.
        """
        t0 = time.perf_counter()
        try:
            return self._search(counts, beta_hat, alpha_n, options, record_tree)
        except (NodeSolveError, SeparationUnknown):
            c = np.asarray(counts, dtype=float)
            bound = max(np.sum(np.maximum(c - 1.0, 0.0)), np.sum(c == 0)) / len(c)
            return SearchOutcome(value=float(bound), lower=0.0, status="solver_failure",
                                 seconds=time.perf_counter() - t0)

    def _search(self, counts, beta_hat, alpha_n, options, record_tree):
        solver, root, quad = self.prepare(counts)
        problem = ReplicateProblem(self.design, self.y, self._counts, beta_hat, self.loss, alpha_n,
                                   quad=quad, beta_u=root.beta, L_u=root.value, screen=options.screen,
                                   screen_solver=lambda row, sign: solver.solve(np.array([row]), np.array([sign])),
                                   known_points=[(root.beta, root.beta_value)])
        seed = [(beta_hat, problem.L_hat)]
        # the flip-cost bound and branching need a positive definite H, whatever the node solver
        pd_quad = quad if quad is not None and positive_definite(quad.H) else None
        if self.engine == "auto" and quad is not None and isinstance(solver, _WithFallback) and not record_tree:
            t0 = time.perf_counter()
            best0 = max(_value_at(problem, b, v, Tolerances()) for b, v in seed)
            value, lower, status, nodes, solves, pruned, real = compiled_search(
                problem, quad, best0=best0, max_nodes=options.max_nodes, time_limit=options.time_limit,
                flip_cost=options.flip_cost, branching=options.branching)
            if status != "solver_failure":
                return SearchOutcome(value=value, lower=lower, status=status, nodes=nodes, solves=solves,
                                     pruned=pruned, realisability_checks=real, screened=problem.n_screened,
                                     seconds=time.perf_counter() - t0)
        out = branch_and_bound(problem, solver, root, quad=pd_quad, options=options, record_tree=record_tree,
                               extra_lower=seed)
        out.solves += problem.screen_solves
        return out
