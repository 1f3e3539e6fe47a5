"""Best-first branch and bound for the replicate supremum Q^(b) (Laber & Murphy 2008, sec. 4).

A node fixes the signs of some free points. Its bound is

    U = Cmax / n * g(alpha_n (L_hat - m)),

m the least bootstrap loss over the node's closed cone and Cmax the largest |C| its
completions can reach. With a positive definite quadratic loss the bound is tightened by
the per-point flip cost and the branching point is chosen from it (``search.compiled``
documents both; this module calls the same compiled helpers). A node is pruned when
g <= 0 (m >= L_hat + 1/alpha_n) or when U <= the best value found. Exactness conventions
(method.md): the child whose new constraint the parent's minimiser already meets inherits
the parent's minimiser; a node counts only if its open region is non-empty (a witness
point, else an LP). The open node with the largest bound is expanded first (ties: first
pushed, first popped), so the largest bound on the queue is a certified upper bound at
any moment.

This is the generic search: any node solver (cvxpy for any convex loss), the search
tree export, and the fallback of the compiled search.

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

import heapq
import itertools
import math
import time
from dataclasses import dataclass, field

import numpy as np

from .compiled import BRANCHING, _bound, _branch_point
from .node_solvers import SOLVER_ERRORS, NodeSolveError, _checked
from .realisability import RealisabilityUnknown, realise

__all__ = ["Tolerances", "SearchOptions", "SearchOutcome", "branch_and_bound"]


@dataclass(frozen=True)
class Tolerances:
    """All tolerances of the search in one place."""

    prune: float = 1e-12      # prune when U <= best + prune
    margin: float = 1e-9      # a sign counts as clear when |phi'beta| > margin |phi| |beta|


@dataclass(frozen=True)
class SearchOptions:
    """Switches of the search; none changes Q^(b), only the work done (or the budget).

    flip_cost : tighten node bounds by the per-point flip cost (positive definite quadratic losses).
    branching : "dearest" (default), "ambiguous" or "static" (see ``compiled._branch_point``).
    screen : fix before branching the points whose sign no classifier in the neighbourhood can flip.
    max_nodes, time_limit : per-replicate budgets; when hit, the replicate keeps a certified upper bound.
    floor : prune every node whose bound is at most ``floor``: values up to it are not resolved,
        and the result is then only an upper bound ``floor + 1e-12`` (status "bounded").
    stop_above : stop as soon as a value above it is attained (status "bounded").
    ``floor`` and ``stop_above`` serve the quantile-targeted refinement (``cudbound.quantile``).
    """

    flip_cost: bool = True
    branching: str = "dearest"
    screen: bool = True
    max_nodes: int | None = None
    time_limit: float | None = None
    floor: float | None = None
    stop_above: float | None = None

    def __post_init__(self):
        if self.branching not in BRANCHING:
            raise ValueError(f"`branching` must be one of {sorted(BRANCHING)}; got {self.branching!r}.")
        for name in ("max_nodes", "time_limit"):
            v = getattr(self, name)
            if v is not None and not (isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0):
                raise ValueError(f"`{name}` must be a positive number or None; got {v!r}.")


@dataclass
class SearchOutcome:
    value: float              # Q^(b) when status == "exact", else a certified upper bound
    lower: float              # best value attained by a realised pattern
    status: str               # "exact", "bounded" (floor / stop_above), "budget" or "solver_failure"
    nodes: int = 0
    solves: int = 0
    pruned: int = 0
    realisability_checks: int = 0
    screened: int = 0
    seconds: float = 0.0
    tree: object = field(default=None, repr=False)
    undecided: bool = False   # some node's realisability could not be decided (kept, conservatively)
    fallbacks: int = 0        # nodes handed to another solver or to a certified bound (see module docstring)


@dataclass
class _Node:
    signs: np.ndarray        # +-1 for fixed free points, 0 for unfixed
    nfixed: int
    C_fixed: float
    m: float
    beta: np.ndarray
    warm: object
    witness: np.ndarray | None
    parent_witness: np.ndarray | None
    id: int = 0
    floor: float = 0.0       # a flip child not yet solved: its minimum is >= m + floor
    solved: bool = True


def branch_and_bound(problem, solver, root, *, quad=None, options=SearchOptions(), tol=Tolerances(),
                     record_tree=False, extra_lower=()):
    """Maximise |C(s)|/n * g(alpha_n (L_hat - inf_{M(s)} L)) over realisable patterns s.

    Parameters
    ----------
    problem : ReplicateProblem
    solver : NodeSolver with weights already set for this replicate
    root : NodeSolution of the unconstrained problem (beta_u, L_u)
    quad : the replicate's quadratic form when it is positive definite (enables the
        flip-cost bound and the flip-cost branching), else None
    extra_lower : (beta, loss) pairs whose realised patterns seed the lower bound
    """
    t0 = time.perf_counter()
    out = SearchOutcome(value=0.0, lower=0.0, status="exact", screened=problem.n_screened)
    tree = None
    if record_tree:
        import networkx as nx
        tree = nx.DiGraph()
    P = np.ascontiguousarray(problem.design[problem.rows], dtype=float).reshape(-1, problem.design.shape[1])
    mf = P.shape[0]
    cplus = np.ascontiguousarray(problem.cost_plus, dtype=float)
    cminus = np.ascontiguousarray(problem.cost_minus, dtype=float)
    if quad is not None:
        hn = np.einsum("ij,ij->i", P, np.linalg.solve(quad.H, P.T).T) if mf else np.zeros(0)
        tu, L_u = P @ quad.beta_u, float(quad.L_u)
        use_flip, mode = options.flip_cost, BRANCHING[options.branching]
    else:
        hn, use_flip, mode = np.ones(mf), False, 0
        tu, L_u = np.zeros(0), 0.0
    tmp_d, tmp_diff = np.empty(mf), np.empty(mf)
    n, alpha, L_hat, L_max = float(problem.n), problem.alpha_n, problem.L_hat, problem.L_max

    def bound(node):
        return _bound(P, hn, cplus, cminus, node.signs, node.C_fixed, node.beta, node.m, n, alpha, L_hat,
                      L_max, use_flip, tmp_d, tmp_diff, node.floor, tu, L_u)

    counter = itertools.count()
    best = 0.0
    for beta, loss_value in extra_lower:
        best = max(best, _value_at(problem, beta, loss_value, tol))
    best = max(best, _value_at(problem, root.beta, root.beta_value, tol))
    root_node = _Node(np.zeros(mf, dtype=np.int8), 0, problem.C_forced, root.value, root.beta, root.warm,
                      np.ones(P.shape[1]), None, next(counter))
    heap = []
    unsolved_bound = -math.inf  # largest bound of a node no solver could handle
    floor = -1.0 if options.floor is None else float(options.floor)
    stop_above = math.inf if options.stop_above is None else float(options.stop_above)

    def push(node, sign=0):
        U = bound(node)
        if tree is not None:
            if sign is None:  # back in the queue after its solve
                tree.nodes[node.id]["bound"] = U
            else:
                tree.add_node(node.id, depth=node.nfixed, m=node.m, bound=U, sign=sign, state="open")
        if U <= 0.0 or U <= max(best, floor) + tol.prune:
            out.pruned += 1
            if tree is not None:
                tree.nodes[node.id]["state"] = "pruned"
            return
        heapq.heappush(heap, (-U, node.id, node))

    out.nodes = 1
    push(root_node)
    while heap:
        negU, _, node = heap[0]
        if -negU <= max(best, floor) + tol.prune:
            break
        if best > stop_above:
            out.status = "bounded"
            break
        if (options.max_nodes is not None and out.nodes >= options.max_nodes) or (
                options.time_limit is not None and time.perf_counter() - t0 > options.time_limit):
            out.status = "budget"
            break
        heapq.heappop(heap)
        if not node.solved:
            # a flip child is solved only now that it leads the queue; it then goes back in
            # with its exact bound (most flip children never get here)
            fixed = np.flatnonzero(node.signs)
            try:
                sol = _checked(solver.solve(problem.rows[fixed], node.signs[fixed].astype(float), node.warm))
            except SOLVER_ERRORS:
                # keep a certified bound: its minimum is at least the parent's plus the flip cost
                unsolved_bound = max(unsolved_bound, -negU)
                out.status = "solver_failure"
                out.fallbacks += 1
                if tree is not None:
                    tree.nodes[node.id]["state"] = "solver_failure"
                continue
            out.solves += 1
            out.fallbacks += int(getattr(sol, "fallback", False))
            node.m, node.beta, node.warm, node.floor, node.solved = sol.value, sol.beta, sol.warm, 0.0, True
            best = max(best, _value_at(problem, node.beta, sol.beta_value, tol))
            if tree is not None:
                tree.nodes[node.id]["m"] = node.m
            push(node, None)
            continue
        if node.nfixed and not _realise(node, P, out):
            if tree is not None:
                tree.nodes[node.id]["state"] = "unrealisable"
            continue
        if node.nfixed == mf:  # a leaf: its bound is its exact value
            best = max(best, problem.objective(node.C_fixed, node.m))
            if tree is not None:
                tree.nodes[node.id]["state"] = "leaf"
            continue
        if tree is not None:
            tree.nodes[node.id]["state"] = "expanded"
        j = int(_branch_point(P, hn, cplus, cminus, node.signs, node.beta, node.m, L_max, mode))
        side = P[j] @ node.beta
        for s in (1, -1):
            C = node.C_fixed + (cplus[j] if s > 0 else cminus[j])
            signs = node.signs.copy()
            signs[j] = s
            child = _Node(signs, node.nfixed + 1, C, node.m, node.beta, node.warm, None, node.witness,
                          next(counter))
            out.nodes += 1
            if tree is not None:
                tree.add_edge(node.id, child.id)
            if s * side < 0:  # the flip child: the parent's minimiser violates its constraint
                child.solved = False
                # first-order optimality of the parent's minimiser: the flip costs at least this
                child.floor = side * side / hn[j] if quad is not None else 0.0
            push(child, s)
    upper = best
    if heap and out.status in ("budget", "bounded"):
        upper = max(upper, -heap[0][0])
    if unsolved_bound > upper:
        upper = unsolved_bound
    elif out.status == "solver_failure" and not out.undecided:
        out.status = "exact"  # every unsolved node was dominated by an attained value
    if floor + tol.prune > upper:
        upper = floor + tol.prune  # nodes with bounds up to floor + prune were pruned unexplored
        if out.status == "exact":
            out.status = "bounded"
    out.value, out.lower = float(upper), float(best)
    out.seconds = time.perf_counter() - t0
    out.tree = tree
    return out


def _realise(node, P, out) -> bool:
    """Find a witness for the node's open region (the parent's witness or the node's
    minimiser, strictly inside), or decide by the compiled feasibility QP, or by LP."""
    fixed = np.flatnonzero(node.signs)
    out.realisability_checks += 1
    try:
        point = realise(P[fixed], node.signs[fixed], (node.parent_witness, node.beta))
    except (RealisabilityUnknown, ValueError, ArithmeticError):  # ValueError: linprog, LinAlgError
        # undecided: keep the node (an unrealisable pattern can only raise the value), so the
        # replicate's value stays a certified upper bound, and say so
        out.status = "solver_failure"
        out.undecided = True
        out.fallbacks += 1
        node.witness = None
        return True
    node.witness = point  # a realising classifier: children try it first
    return point is not None


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
