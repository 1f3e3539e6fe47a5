"""The cvxpy bridge: which conic solver a loss gets first, the tight tolerances of the
non-quadratic path, and one solve from scratch (shared by the fit and the cvxpy node solver)."""
from __future__ import annotations

__all__ = ["default_solvers", "TIGHT_OPTIONS", "solve_fresh"]


def solve_fresh(problem, solver, options):
    """``problem.solve(solver=solver, **options)`` from scratch (``warm_start=False``): cvxpy 1.9
    otherwise updates the last solve's Clarabel solver in place, and the answer then depends on the
    solves before it (a node solved twice could differ in the last digits)."""
    return problem.solve(solver=solver, warm_start=False, **options)


def default_solvers(loss):
    """(primary, fallbacks) of the cvxpy path for a loss.

    ECOS first for quadratic losses (polished exactly) and for losses with derivatives
    (polished by Newton's method); CLARABEL first for the others, whose answers are kept
    as the solver gives them (it is the more accurate of the two on linear programs).
    """
    if loss.is_quadratic or loss.has_derivatives:
        return "ECOS", ("CLARABEL", "SCS")
    return "CLARABEL", ("ECOS", "SCS")


TIGHT_OPTIONS = {
    "ECOS": dict(abstol=1e-10, reltol=1e-10, feastol=1e-10),
    "CLARABEL": dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10),
    "SCS": dict(eps_abs=1e-9, eps_rel=1e-9),
}
"""Solver options for non-quadratic losses (the quadratic path polishes exactly instead)."""
