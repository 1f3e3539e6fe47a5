"""The named codes shared by the compiled search and its Python side.

Plain integers (numba folds module-level integers into the compiled code as constants):
which node solver runs (``KIND_*``), how a search ended (``STATUS``), what became of a node
(``STATES``, for the recorded search tree) and which branching rule is used (``BRANCHING``).
"""
from __future__ import annotations

__all__ = ["KIND_QP", "KIND_LP", "KIND_EXTERNAL", "KIND_SMOOTH", "KIND_HINGE_QP", "KINDS", "STATUS", "STATES", "BRANCHING"]

# ---- node solvers (see the docstring of cudbound.search.core)
KIND_QP = 0         # a positive definite quadratic loss: the compiled dual active-set QP
KIND_LP = 1         # the plain hinge loss: the compiled certified simplex
KIND_EXTERNAL = 2   # any NodeSolver object, called from the loop on the Python side
KIND_SMOOTH = 3     # the built-in logistic and exponential losses: the compiled SQP
KIND_HINGE_QP = 4   # the hinge loss plus a quadratic penalty: the compiled primal active-set method
KINDS = (KIND_QP, KIND_LP, KIND_EXTERNAL, KIND_SMOOTH, KIND_HINGE_QP)

# ---- how a search ended: an index into STATUS
STATUS = ("exact", "budget", "solver_failure", "bounded", "bounded")
"""Statuses of a replicate search. "bounded": stopped on purpose by ``floor`` (every value
above it excluded) or ``stop_above`` (a value above it attained): the value is then a
certified upper bound and ``lower`` an attained value, as after a budget."""
EXACT = 0           # the supremum, certified
BUDGET = 1          # stopped by max_nodes or time_limit: a certified upper bound
SOLVER_FAILURE = 2  # a node nobody solved, or a realisability question nobody decided
STOPPED_ABOVE = 3   # a value above ``stop_above`` attained ("bounded")
BELOW_FLOOR = 4     # every value above ``floor`` excluded ("bounded")

# ---- what became of a node (the recorded search tree): an index into STATES
STATES = ("open", "pruned", "expanded", "leaf", "unrealisable", "solver_failure")
OPEN, PRUNED, EXPANDED, LEAF, UNREALISABLE, FAILED = range(6)

# ---- branching rules (branching._branch_point)
BRANCHING = {"static": 0, "ambiguous": 1, "dearest": 2, "critical": 3}
STATIC, AMBIGUOUS, DEAREST, CRITICAL = 0, 1, 2, 3

# ---- answers of the dual active-set QP (node_qp._gi_ws) and of a realisability question
QP_OPTIMAL, QP_INFEASIBLE, QP_FAILED = 0, 1, 2
NOT_REALISABLE, REALISABLE, UNDECIDED = 0, 1, 2
