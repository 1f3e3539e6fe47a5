"""The search's Python face: :func:`branch_and_bound` for any node solver, and the search tree.

The loop itself is compiled (:mod:`cudbound.search.core`, the one search of the toolkit),
and the options and outcome live in :mod:`cudbound.search.options`. This module prepares a
:class:`~cudbound.search.problem.ReplicateProblem` for the loop, lets it call any
:class:`~cudbound.search.node_solvers.NodeSolver` (cvxpy for any convex loss, the SQP
solver of smooth losses, a user's solver), builds the search tree (networkx) when asked,
and returns a :class:`SearchOutcome`.

Solver failures never abort the search. A node that no solver solves
(:data:`node_solvers.SOLVER_ERRORS`, or a non-finite answer) is dropped with its bound,
which was computed from the parent's minimum (plus the flip cost): the node's minimum is at
least that, so the bound covers its whole subtree and the replicate's value becomes
max(best, that bound), a certified upper bound. A node whose realisability no LP decides is
kept as if realisable (an unrealisable pattern can only raise the value). Each such node,
and each node a solver handed to another solver, counts as a fallback
(``SearchOutcome.fallbacks``); the status is ``"solver_failure"`` only when a dropped node's
bound, or an undecided node, may have replaced the exact value.
"""
from __future__ import annotations

import math
import time

import numpy as np

from .core import SearchContext, run_search
from .options import SearchOptions, SearchOutcome, Tolerances

__all__ = ["Tolerances", "SearchOptions", "SearchOutcome", "branch_and_bound"]


def branch_and_bound(problem, solver, root, *, quad=None, options=SearchOptions(), tol=Tolerances(),
                     record_tree=False, extra_lower=(), probe=None, inner=None, fallback=None, python_realise=False):
    """Maximise |C(s)|/n * g(alpha_n (L_hat - inf_{M(s)} L)) over realisable patterns s.

    Parameters
    ----------
    problem : ReplicateProblem
    solver : NodeSolver with weights already set for this replicate (called from the
        compiled loop; ignored when ``inner`` is given)
    root : NodeSolution of the unconstrained problem (beta_u, L_u)
    quad : the replicate's quadratic form when it is positive definite (enables the
        flip-cost bound and the flip-cost branching), else None
    extra_lower : (beta, loss) pairs whose realised patterns seed the lower bound
    probe : a callable returning one more such pair (or None), called only when the search starts
        afresh (a resumed search keeps its best value; ``probes.probe_classifier``); an exception
        from it counts as None, and its time counts against ``options.time_limit``
    inner : a compiled node solver with weights set, run inside the loop: a HingeLPNodeSolver (its
        simplex), a HingeQPNodeSolver (its active-set method) or a SmoothNodeSolver of a built-in
        loss and a resample nothing separates (its SQP); None: ``solver`` solves every node
    fallback : a callable returning the NodeSolver for nodes the compiled solver fails on
    python_realise : decide realisability in Python (witness, QP, LP) rather than by the
        compiled warm-started QP
    """
    t0 = time.perf_counter()
    tree = None
    if record_tree:
        import networkx as nx
        tree = nx.DiGraph()
    best = 0.0
    for beta, loss_value in extra_lower:
        best = max(best, _value_at(problem, beta, loss_value, tol))
    q = None
    if quad is not None:
        q = (quad.H, np.linalg.inv(quad.H), quad.beta_u, quad.L_u)
    fresh = None
    if probe is not None:
        def fresh():
            try:
                pair = probe()
            except Exception:  # noqa: BLE001 - the probe only speeds the search up and calls user code (a
                return 0.0     # loss's value far from where the search goes): any failure means no value
            return 0.0 if pair is None else _value_at(problem, pair[0], pair[1], tol)
    with SearchContext(solver, fallback, root.warm, tree) as ctx:
        out = run_search(problem, root, best0=best, quad=q, inner=inner, context=ctx, options=options, tol=tol,
                         record=record_tree, python_realise=python_realise, fresh_best=fresh)
    out.screened, out.seconds, out.tree = problem.n_screened, time.perf_counter() - t0, tree
    return out


def _value_at(problem, beta, loss_value, tol) -> float:
    """The objective at a classifier beta, when its signs on the free points are clear.

    beta realises its own sign pattern, so this is a value attained in the supremum;
    ``loss_value`` must be the loss at beta itself (not a node's infimum).
    Points within round-off of a hyperplane are not trusted: return 0 (no information), and
    so is a non-finite beta or loss (a failed solve must never claim an attained value).
    """
    beta = np.asarray(beta, dtype=float)
    if not (math.isfinite(loss_value) and np.all(np.isfinite(beta))):
        return 0.0
    if problem.g(loss_value) <= 0.0:
        return 0.0
    Phi = problem.design[problem.rows]
    t = Phi @ beta
    bn = float(np.linalg.norm(beta))
    if np.any(np.abs(t) <= tol.margin * bn * np.linalg.norm(Phi, axis=1)):
        return 0.0
    signs = np.where(t >= 0, 1, -1)
    return problem.objective(problem.C_of_signs(signs), loss_value)
