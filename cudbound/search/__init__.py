"""The exact search for the replicate supremum Q^(b): problem, node solvers, branch and bound."""
from .bnb import SearchOptions, SearchOutcome, Tolerances, branch_and_bound
from .node_solvers import ActiveSetNodeSolver, CvxpyNodeSolver, NodeSolution, NodeSolveError, NodeSolver
from .problem import ReplicateProblem, Screening

__all__ = ["SearchOptions", "SearchOutcome", "Tolerances", "branch_and_bound", "ReplicateProblem", "Screening",
           "NodeSolver", "NodeSolution", "NodeSolveError", "ActiveSetNodeSolver", "CvxpyNodeSolver"]
