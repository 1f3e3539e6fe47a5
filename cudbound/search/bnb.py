"""Best-first branch and bound for the replicate supremum Q^(b) (Laber & Murphy 2008, sec. 4).

A node fixes the signs of the first ``depth`` free points (in the problem's branching
order). Its bound is

    U = Cmax / n * g(alpha_n (L_hat - m)),

m the least bootstrap loss over the node's closed cone and Cmax the largest |C| its
completions can reach. A node is pruned when g <= 0 (m >= L_hat + 1/alpha_n) or when
U <= the best value found. Exactness conventions (method.md): the child whose new
constraint the parent's minimiser already meets inherits the parent's minimiser; a
node counts only if its open region is non-empty (a witness point, else an LP). The
open node with the largest bound is expanded first (ties: first pushed, first
popped), so the largest bound on the queue is a certified upper bound at any moment.
"""
from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass, field

import numpy as np

from .node_solvers import NodeSolveError
from .realisability import find_witness, realisable_by_lp

__all__ = ["Tolerances", "SearchOutcome", "branch_and_bound"]


@dataclass(frozen=True)
class Tolerances:
    """All tolerances of the search in one place."""

    prune: float = 1e-12      # prune when U <= best + prune
    margin: float = 1e-9      # a sign counts as clear when |phi'beta| > margin |phi| |beta|


@dataclass
class SearchOutcome:
    value: float              # Q^(b) when status == "exact", else a certified upper bound
    lower: float              # best value attained by a realised pattern
    status: str               # "exact", "budget" or "solver_failure"
    nodes: int = 0
    solves: int = 0
    pruned: int = 0
    lp_checks: int = 0
    screened: int = 0
    seconds: float = 0.0
    tree: object = field(default=None, repr=False)


@dataclass
class _Node:
    depth: int
    signs: np.ndarray        # +-1 for the first `depth` free points
    C_fixed: float
    m: float
    beta: np.ndarray
    warm: object
    witness: np.ndarray | None
    parent_witness: np.ndarray | None
    id: int = 0


def branch_and_bound(problem, solver, root, *, tol=Tolerances(), max_nodes=None, time_limit=None,
                     record_tree=False, extra_lower=()):
    """Maximise |C(s)|/n * g(alpha_n (L_hat - inf_{M(s)} L)) over realisable patterns s.

    Parameters
    ----------
    problem : ReplicateProblem
    solver : NodeSolver with weights already set for this replicate
    root : NodeSolution of the unconstrained problem (beta_u, L_u)
    extra_lower : betas (with their losses) whose realised patterns seed the lower bound
    """
    t0 = time.perf_counter()
    out = SearchOutcome(value=0.0, lower=0.0, status="exact", screened=problem.n_screened)
    tree = None
    if record_tree:
        import networkx as nx
        tree = nx.DiGraph()
    counter = itertools.count()
    best = 0.0
    for beta, loss_value in extra_lower:
        best = max(best, _value_at(problem, beta, loss_value, tol))
    Phi = problem.design
    rows, n_free = problem.rows, problem.n_free
    root_node = _Node(0, np.zeros(0, dtype=np.int8), problem.C_forced, root.value, root.beta, root.warm,
                      np.ones(Phi.shape[1]), None, next(counter))
    best = max(best, _value_at(problem, root.beta, root.value, tol))
    heap = []
    unsolved_bound = -math.inf  # largest bound of a node no solver could handle

    def push(node):
        U = problem.C_range(node.depth, node.C_fixed) / problem.n * problem.g(node.m)
        if tree is not None:
            tree.add_node(node.id, depth=node.depth, m=node.m, bound=U,
                          sign=int(node.signs[-1]) if node.depth else 0, state="open")
        if problem.g(node.m) <= 0.0 or U <= best + tol.prune:
            out.pruned += 1
            if tree is not None:
                tree.nodes[node.id]["state"] = "pruned"
            return
        heapq.heappush(heap, (-U, node.id, node))

    out.nodes = 1
    push(root_node)
    while heap:
        negU, _, node = heapq.heappop(heap)
        U = -negU
        if U <= best + tol.prune:
            heapq.heappush(heap, (negU, node.id, node))
            break
        if (max_nodes is not None and out.nodes >= max_nodes) or (
                time_limit is not None and time.perf_counter() - t0 > time_limit):
            heapq.heappush(heap, (negU, node.id, node))
            out.status = "budget"
            break
        # is the node's open region non-empty?
        if node.depth and not _realise(node, problem, out):
            if tree is not None:
                tree.nodes[node.id]["state"] = "unrealisable"
            continue
        if node.depth == n_free:  # a leaf: its bound is its exact value
            best = max(best, problem.objective(node.C_fixed, node.m))
            if tree is not None:
                tree.nodes[node.id]["state"] = "leaf"
            continue
        if tree is not None:
            tree.nodes[node.id]["state"] = "expanded"
        j = node.depth
        phi_j = Phi[rows[j]]
        side = phi_j @ node.beta
        for s in (1, -1):
            C = node.C_fixed + (problem.cost_plus[j] if s > 0 else problem.cost_minus[j])
            signs = np.append(node.signs, np.int8(s))
            child = _Node(j + 1, signs, C, node.m, node.beta, node.warm, None, node.witness, next(counter))
            out.nodes += 1
            if tree is not None:
                tree.add_edge(node.id, child.id)
            if s * side < 0:  # the flip child: the parent's minimiser violates its constraint
                if problem.g(node.m) <= 0:
                    continue
                try:
                    sol = solver.solve(rows[: j + 1], signs, node.warm)
                except NodeSolveError:
                    # keep a certified bound: the child's minimum is at least the parent's
                    U_child = problem.C_range(j + 1, C) / problem.n * problem.g(node.m)
                    unsolved_bound = max(unsolved_bound, U_child)
                    out.status = "solver_failure"
                    if tree is not None:
                        tree.add_node(child.id, depth=j + 1, m=node.m, bound=U_child, sign=s, state="solver_failure")
                    continue
                out.solves += 1
                child.m, child.beta, child.warm = sol.value, sol.beta, sol.warm
                if problem.g(child.m) > 0:
                    best = max(best, _value_at(problem, child.beta, child.m, tol))
            push(child)
    lower = best
    upper = best
    if heap and out.status == "budget":
        upper = max(upper, -heap[0][0])
    if unsolved_bound > upper:
        upper = unsolved_bound
    elif out.status == "solver_failure":
        out.status = "exact"  # every unsolved node was dominated by an attained value
    out.value, out.lower = upper, lower
    out.seconds = time.perf_counter() - t0
    out.tree = tree
    return out


def _realise(node, problem, out) -> bool:
    """Find a witness for the node's open region, or decide by LP."""
    rows = problem.rows[: node.depth]
    G = problem.design[rows] * node.signs.astype(float)[:, None]
    w = find_witness(G, (node.parent_witness, node.beta))
    if w is not None:
        node.witness = w
        return True
    out.lp_checks += 1
    point = realisable_by_lp(G, node.signs)
    node.witness = point  # a realising classifier: children try it first
    return point is not None


def _value_at(problem, beta, loss_value, tol) -> float:
    """The objective at a classifier beta, when its signs on the free points are clear.

    beta realises its own sign pattern, so this is a value attained in the supremum.
    Points within round-off of a hyperplane are not trusted: return 0 (no information).
    """
    if problem.g(loss_value) <= 0.0:
        return 0.0
    Phi = problem.design[problem.rows]
    t = Phi @ beta
    bn = float(np.linalg.norm(beta))
    if np.any(np.abs(t) <= tol.margin * bn * np.linalg.norm(Phi, axis=1)):
        return 0.0
    signs = np.where(t >= 0, 1, -1)
    return problem.objective(problem.C_of_signs(signs), loss_value)
