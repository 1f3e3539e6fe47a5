"""Choosing and reusing node solvers: one engine per (loss, design, labels).

Every engine runs the one compiled search (``search.core``); they differ in where the
replicate is set up and how its nodes are solved.

- ``engine="auto"`` (default): for a quadratic loss whose bootstrap Hessian is positive
  definite (squared, ridge), the whole replicate (set-up, screening and search) runs in
  compiled code, with the exact dual active-set QP inside the loop. Otherwise the replicate
  is set up in Python (``search.problem.ReplicateProblem``: screening by one convex solve per
  point, its outcome kept for the refinement's later rounds of the same replicate) and searched with the paper's bound and static branching (largest |change in C|
  first: measured better than the flip-cost orders without the flip-cost bound). Its node
  solves: for the plain hinge loss, the certified compiled simplex inside the loop
  (``search.lp_node_solver``); for a non-quadratic loss with derivatives (logistic,
  exponential, their ridge versions, user losses with ``derivatives``), SQP with exact
  active-set QP steps (``search.smooth_node_solver``), called from the loop; otherwise
  cvxpy, called from the loop.
- ``engine="python"``: the set-up in Python and every node solved by a Python
  :class:`~cudbound.search.node_solvers.NodeSolver` called from the loop (the active-set
  solver for a positive definite quadratic loss, the simplex for the hinge loss, the SQP
  solver for a loss with derivatives, cvxpy otherwise), and realisability decided in Python
  (witness points, then the feasibility QP, then an LP): the same answers through the
  external-solver interface that a user's own node solver would use.
- ``engine="cvxpy"``: as ``"python"`` with every node solved through cvxpy.

All three return the same Q^(b). A node a compiled or fast solver cannot finish is handed
to cvxpy, and a cvxpy failure is retried with the next solver in its chain; a node nobody
solves leaves a certified upper bound and the replicate says so.

No solver failure aborts a replicate (the exception families are
``search.node_solvers.SOLVER_ERRORS``). Every hand-off counts as a fallback
(``SearchOutcome.fallbacks``): a node or screening solve handed to another solver, a
node or screening point handed to a certified bound, a realisability decision handed to
an LP, a replicate whose compiled set-up fails (redone in Python), and a replicate whose
root (or set-up) fails, which keeps the trivial certified bound max|C|/n (g <= 1). A
fallback that another solver resolves leaves the replicate exact; ``status`` is
``"solver_failure"`` only when a certified bound stands in for an exact value.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from ._kernel_compile import compile_once
from .losses import HingeLoss, same_math
from .search import ActiveSetNodeSolver, CvxpyNodeSolver, NodeSolution, NodeSolveError, NodeSolver
from .search import ReplicateProblem, Screening, SearchOptions, SearchOutcome, branch_and_bound
from .search.core import SearchContext, compiled_replicate
from .search.frontier import FrontierOutcome, Target, compiled_frontier, run_frontier
from .search.hinge_qp_node_solver import HingeQPNodeSolver, hinge_qp_parts
from .search.lp_node_solver import HingeLPNodeSolver
from .search.node_solvers import SOLVER_ERRORS, QuadraticReplicate, checked_solution
from .search.probes import probe_classifier
from .search.replicate_setup import quadratic_minimum
from .search.smooth_node_solver import SmoothNodeSolver

__all__ = ["ReplicateEngine", "ENGINES"]

ENGINES = ("auto", "python", "cvxpy")

_SCREENED_KEPT = 4096
"""Replicates whose screening outcome an engine keeps for the refinement's later rounds (a few
hundred bytes each)."""

_FORMS_KEPT = 1024
"""Count vectors whose quadratic form (H, g, c) an engine keeps (a quadratic loss): a replicate's
later rounds, and the difference's slack and search of the same count vector, reuse it (p^2 + p + 1
numbers and the key's n each)."""


class _WithFallback(NodeSolver):
    """Try the primary solver; on failure solve the node with the fallback (marked ``fallback``)."""

    def __init__(self, primary, fallback):
        self.primary, self.fallback = primary, fallback

    def solve(self, rows, signs, warm=None):
        try:
            return self.primary.solve(rows, signs, warm)
        except SOLVER_ERRORS:
            sol = self.fallback().solve(rows, signs, None)
            sol.fallback = True
            return sol


def trivial_bound(counts) -> float:
    """max|C| / n >= Q^(b): |C| = |sum_i (nu_i - 1) 1{mistake_i}| is at most the larger of
    sum (nu_i - 1)^+ and #{nu_i = 0}, and g <= 1."""
    c = np.asarray(counts, dtype=float)
    return float(max(np.sum(np.maximum(c - 1.0, 0.0)), np.sum(c == 0)) / len(c))


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
        if loss.is_quadratic:
            # the distinct rows of the design, numbered in lexicographic order, for the compiled set-up
            Zu, group = np.unique(np.asarray(design, dtype=np.float64), axis=0, return_inverse=True)
            self._rows = (np.ascontiguousarray(Zu), np.ascontiguousarray(group.ravel(), dtype=np.int64),
                          np.ascontiguousarray(y, dtype=np.float64))
        # the plain hinge loss (whatever its class, if it computes HingeLoss's loss): certified
        # compiled simplex, cvxpy fallback
        self._lp = HingeLPNodeSolver(loss, design, y) if engine != "cvxpy" and same_math(loss, HingeLoss) else None
        self._smooth = None
        if engine != "cvxpy" and not loss.is_quadratic and loss.has_derivatives:
            self._smooth = SmoothNodeSolver(loss, design, y)
        # the hinge loss plus a quadratic penalty (hinge_ridge, SVC, LinearSVC): the compiled
        # primal active-set method, cvxpy fallback
        self._hinge_qp = None
        if engine != "cvxpy" and hinge_qp_parts(loss) is not None:
            self._hinge_qp = HingeQPNodeSolver(loss, design, y)
        self._screened = {}   # the screening's outcome per (counts, beta_hat, alpha_n): a later round reuses it
        self._forms = {}      # the quadratic form per count vector (:meth:`_quadratic_form`)

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
            quad = QuadraticReplicate(self.loss, self.design, self.y, self._counts)
        if self.engine != "cvxpy" and quad is not None and quad.positive_definite:
            self._active.set_weights(self._counts)
            solver = _WithFallback(self._active, self._cvxpy_solver)
            root = NodeSolution(quad.L_u, quad.beta_u, (quad.beta_u, [], []))
            return solver, root, quad
        fast = next((s for s in (self._lp, self._smooth, self._hinge_qp) if s is not None), None)
        if fast is not None:
            fast.set_weights(self._counts)
            solver = _WithFallback(fast, self._cvxpy_solver)
            return solver, solver.solve(np.zeros(0, dtype=int), np.zeros(0)), None
        solver = self._cvxpy_solver()
        if quad is not None:
            root = NodeSolution(quad.L_u, quad.beta_u)
        else:
            root = solver.solve(np.zeros(0, dtype=int), np.zeros(0))
        return solver, root, quad

    def search(self, counts, beta_hat, alpha_n, options=SearchOptions(), *, record_tree=False):
        """Branch and bound for one count vector; returns a SearchOutcome.

        ``record_tree`` (a networkx.DiGraph of the search) sets the replicate up in Python. If the
        root problem or the replicate's set-up fails in every solver (any of ``SOLVER_ERRORS``),
        the replicate returns the trivial certified bound max|C| / n (g <= 1), flagged
        ``solver_failure``; ``fallbacks`` counts the hand-offs (module docstring).
        """
        t0 = time.perf_counter()
        self._fallbacks = 0
        if options.deadline is not None:
            left = options.deadline - time.time()
            if left <= 0.0:
                # the interval's budget is spent: the trivial certified bound, no search
                return SearchOutcome(value=trivial_bound(counts), lower=0.0, status="budget",
                                     seconds=time.perf_counter() - t0)
            limit = left if options.time_limit is None else min(options.time_limit, left)
            options = dataclasses.replace(options, time_limit=limit, deadline=None)
        try:
            out = self._search(counts, beta_hat, alpha_n, options, record_tree)
        except SOLVER_ERRORS:
            return SearchOutcome(value=trivial_bound(counts), lower=0.0, status="solver_failure",
                                 fallbacks=self._fallbacks + 1, seconds=time.perf_counter() - t0)
        out.fallbacks += self._fallbacks
        return out

    def _screen_solver(self, solver):
        """One screening solve; a failure (any of SOLVER_ERRORS) is a NodeSolveError, after which
        ReplicateProblem screens nothing for that point (always safe), and a fallback."""
        def solve(row, sign):
            try:
                sol = checked_solution(solver.solve(np.array([row]), np.array([sign])))
            except SOLVER_ERRORS as exc:
                self._fallbacks += 1
                raise NodeSolveError(f"screening solve: {type(exc).__name__}: {exc}") from None
            self._fallbacks += int(sol.fallback)
            return sol
        return solve

    def _smooth_in_loop(self, solver, root):
        """The replicate's nodes go to the compiled SQP of a built-in smooth loss (nothing separable)."""
        return (self.engine == "auto" and isinstance(solver, _WithFallback) and solver.primary is self._smooth
                and self._smooth.kind is not None and self._smooth._root_sep is None and not root.fallback)

    def _screen_bound(self, solver, root):
        """The smooth losses' closed-form screening bound at the root minimiser (None: none)."""
        if self._smooth_in_loop(solver, root):
            return lambda Phi: self._smooth.flip_bounds(np.asarray(root.beta, dtype=float), Phi)
        return None

    def _screen_batch(self, solver, root):
        """The compiled screening solves of the hinge losses (plain, and plus a quadratic penalty)
        and the smooth losses (None: one Python solve per point)."""
        if self.engine == "auto" and isinstance(solver, _WithFallback) and solver.primary is self._lp:
            return self._lp.screen_batch
        if self.engine == "auto" and isinstance(solver, _WithFallback) and solver.primary is self._hinge_qp:
            return self._hinge_qp.screen_batch
        if self._smooth_in_loop(solver, root):
            return self._smooth.screen_batch
        return None

    def _search(self, counts, beta_hat, alpha_n, options, record_tree):
        if self.engine == "auto" and self.loss.is_quadratic and not record_tree:
            # the whole replicate (set-up and search) in compiled code; a node its QP solver
            # fails on is solved by cvxpy from inside the loop
            res = self._compiled(compiled_replicate, counts, beta_hat, alpha_n, options)
            if res is not None:
                return res
        problem, solver, root, pd_quad, inner, fallback = self._python_setup(counts, beta_hat, alpha_n, options)
        counts = self._counts

        def probe():
            losses = self._probe_losses(solver, counts)
            floor = None if losses is None else self._smooth.loss_floor(root.beta, counts)
            return probe_classifier(problem, self.loss, self.design, self.y, counts, root.beta, root.beta_value,
                                    losses=losses, floor=floor)
        out = branch_and_bound(problem, solver, root, quad=pd_quad, options=options, record_tree=record_tree,
                               extra_lower=[(beta_hat, problem.L_hat)], probe=probe, inner=inner, fallback=fallback,
                               python_realise=self.engine != "auto")
        out.solves += problem.screen_solves
        return out

    def _probe_losses(self, solver, counts):
        """The probes' losses of a built-in smooth loss, evaluated as its compiled SQP evaluates a node's
        (``SmoothNodeSolver.values_at``); None: the probes' own (``probes._batched_losses``)."""
        smooth = self._smooth
        if isinstance(solver, _WithFallback) and solver.primary is smooth and smooth is not None \
                and smooth.kind is not None:
            return lambda betas: smooth.values_at(betas, counts)
        return None

    def _compiled(self, kernel, counts, beta_hat, alpha, options, *extra):
        """A quadratic replicate set up and searched in compiled code (``core.compiled_replicate`` or
        ``frontier.compiled_frontier``, given ``alpha`` and the ``extra`` arguments): its outcome with
        ``seconds``, or None when the set-up in Python is to take over (H not positive definite,
        or a numerical failure in compiled code, counted as a fallback)."""
        t0 = time.perf_counter()
        self._counts = np.asarray(counts, dtype=float)
        H, g, c = self._quadratic_form(self._counts)
        try:
            with SearchContext(fallback=self._cvxpy_solver) as ctx:
                res = kernel(*self._rows, counts, H, g, c, np.ascontiguousarray(beta_hat, dtype=np.float64), alpha,
                             *extra, options, context=ctx)
        except SOLVER_ERRORS:
            self._fallbacks += 1  # the set-up in Python takes over
            return None
        if res is not None:
            res.seconds = time.perf_counter() - t0
        return res

    def _quadratic_form(self, counts):
        """``loss.quadratic_form`` (H, g, c) of one count vector (float array), kept for the next call
        with the same counts (up to :data:`_FORMS_KEPT` count vectors)."""
        key = counts.tobytes()
        form = self._forms.get(key)
        if form is None:
            form = self.loss.quadratic_form(self.design, self.y, counts)
            if len(self._forms) >= _FORMS_KEPT:
                self._forms.clear()
            self._forms[key] = form
        return form

    def _python_setup(self, counts, beta_hat, alpha, options):
        """A replicate set up in Python: (problem at ``alpha``'s neighbourhood, node solver, root,
        positive definite quadratic form or None, compiled node solver for the loop or None, fallback)."""
        solver, root, quad = self.prepare(counts)
        root = checked_solution(root)
        self._fallbacks += int(root.fallback)
        key = (self._counts.tobytes(), np.asarray(beta_hat, dtype=float).tobytes(), float(alpha))
        screening = Screening(options.screen, self._screen_solver(solver), [(root.beta, root.beta_value)],
                              self._screen_bound(solver, root), self._screen_batch(solver, root),
                              self._screened.get(key))
        problem = ReplicateProblem(self.design, self.y, self._counts, beta_hat, self.loss, alpha,
                                   quad=quad, beta_u=root.beta, L_u=root.value, screening=screening)
        if options.screen and key not in self._screened:
            if len(self._screened) >= _SCREENED_KEPT:
                self._screened.clear()
            self._screened[key] = problem.forced
        # the flip-cost bound and branching need a positive definite H, whatever the node solver
        pd_quad = quad if quad is not None and quad.positive_definite else None
        inner = None
        fallback = self._cvxpy_solver
        if self.engine == "auto" and isinstance(solver, _WithFallback):
            if solver.primary is self._lp or solver.primary is self._hinge_qp:
                inner = solver.primary  # the compiled simplex or active-set method runs inside the loop
            elif (solver.primary is self._smooth and self._smooth.kind is not None
                  and self._smooth._root_sep is None):
                # nothing separable: the compiled SQP runs inside the loop, the full solver backs it up
                inner, fallback = self._smooth, lambda: solver
        return problem, solver, root, pd_quad, inner, fallback

    # ------------------------------------------------------------ the frontier (two classifiers)
    def root_minimum(self, counts) -> float:
        """L_u = inf of the resample's loss L(D^(b), .), or -inf when no solver finds it (the
        frontier of the other classifier then keeps every pattern: always exact)."""
        try:
            if self.loss.is_quadratic:
                form = self._quadratic_form(np.asarray(counts, dtype=float))
                with compile_once(quadratic_minimum, form):
                    ok, _, L_u = quadratic_minimum(*form)
                if ok:  # c - g'H^-1 g, as the compiled set-up computes it
                    return float(L_u)
            return float(checked_solution(self.prepare(counts)[1]).value)
        except SOLVER_ERRORS:
            return -np.inf

    def frontier(self, counts, beta_hat, alpha_n, slack, options=SearchOptions(), *, partner=None, form="joint"):
        """The frontier of one count vector (``search.frontier``) below the level
        L(D^(b), beta_hat) + 1/alpha_n + slack (method.md, "The difference of two classifiers":
        ``slack`` = K_B - L_u,B of the other classifier for the joint factor, 0 for the others, inf
        when unknown); with ``partner`` (the other classifier's frontier) the joint search for
        Q^(b) with the factor ``form``. Returns a :class:`~cudbound.search.frontier.FrontierOutcome`.
        A spent ``options.deadline`` or a root that no solver solves leaves the trivial outcome
        (nothing found, certified lower frontier -inf, Q^(b) at most max |C_A - C_B| / n),
        flagged "budget" or "solver_failure", as :meth:`search` leaves max|C|/n."""
        t0 = time.perf_counter()
        self._fallbacks = 0
        counts = np.asarray(counts, dtype=float)
        L_hat = self.loss.value(self.design, self.y, counts, beta_hat)
        if alpha_n == 0.0 or not np.isfinite(slack):
            level_alpha = 0.0
        else:
            level_alpha = 1.0 / (1.0 / alpha_n + max(slack, 0.0))
        if options.deadline is not None:
            left = options.deadline - time.time()
            if left <= 0.0:
                return FrontierOutcome.trivial(counts, self.y, L_hat, "budget", time.perf_counter() - t0, partner)
            limit = left if options.time_limit is None else min(options.time_limit, left)
            options = dataclasses.replace(options, time_limit=limit, deadline=None)
        try:
            out = self._frontier(counts, beta_hat, level_alpha, Target(alpha_n, partner, form), options)
        except SOLVER_ERRORS:
            return FrontierOutcome.trivial(counts, self.y, L_hat, "solver_failure", time.perf_counter() - t0, partner)
        out.fallbacks += self._fallbacks
        out.seconds = time.perf_counter() - t0
        return out

    def _frontier(self, counts, beta_hat, level_alpha, target, options):
        if self.engine == "auto" and self.loss.is_quadratic:
            res = self._compiled(compiled_frontier, counts, beta_hat, level_alpha, options, target)
            if res is not None:
                return res
        problem, solver, root, pd_quad, inner, fallback = self._python_setup(counts, beta_hat, level_alpha, options)
        q = None if pd_quad is None else (pd_quad.H, np.linalg.inv(pd_quad.H), pd_quad.beta_u, pd_quad.L_u)
        with SearchContext(solver, fallback, root.warm) as ctx:
            out = run_frontier(problem, root, target, seeds=[(beta_hat, problem.L_hat)], quad=q, inner=inner,
                               context=ctx, options=options, python_realise=self.engine != "auto")
        out.solves += problem.screen_solves
        return out
