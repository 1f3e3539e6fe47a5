"""One bootstrap replicate as a search problem over sign patterns (method.md).

n (err_{D^(b)}(beta) - err_D(beta)) = sum_i (nu_i - 1) 1{f(x_i; beta) != y_i}, so only
the points S = {i : nu_i != 1} matter. Points of S with identical basis rows always
share a sign and are merged into one *point* with two costs: the contribution to
C = sum_{i in S} (nu_i - 1) 1{s_i != y_i} when its sign is +1 and when it is -1.
A zero row always has sign(0) = +1 and is fixed at once.

For a quadratic loss the neighbourhood {beta : g(alpha_n (L_hat - L(beta))) > 0} is
the ellipsoid (beta - beta_u)'H(beta - beta_u) < L_hat + 1/alpha_n - L_u; a point whose
hyperplane misses it has the sign of phi'beta_u for every classifier that matters,
and is fixed before branching (screening). For any other loss (or a singular bootstrap
Hessian) the same test costs one convex solve per point: the least loss over the closed
half-space on the side of phi'beta = 0 opposite to the root minimiser beta_u; when it is
at least L_hat + 1/alpha_n, no classifier that matters puts the point on that side. A
solve is skipped when a point already known to have loss below that level (beta_hat,
the root minimiser, the minimisers of earlier screening solves) lies on that side.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..optim.qp import positive_definite

__all__ = ["ReplicateProblem", "Screening"]


class Screening(NamedTuple):
    """How a replicate screens its points (module docstring).

    ``enabled``: screen at all. ``solver(row, sign)`` (optional) returns the NodeSolution of the
    node with the single constraint ``sign * phi_row' beta >= 0``: it enables the screening of
    losses without a positive definite quadratic form; ``known_points`` are (beta, loss at beta)
    pairs that let it skip solves; ``bound(Phi)`` (optional) returns, for rows phi_k, lower bounds
    on L(beta) - L_u over the beta that put phi_k'beta on the side of 0 opposite to beta_u's (or
    None): a point whose bound reaches the level is fixed without a solve;
    ``batch(rows, sides, can_flip, level, L_max)`` (optional) makes the screening solves of many
    points at once (``SmoothNodeSolver.screen_batch``). ``forced`` (optional) is the outcome
    (:attr:`ReplicateProblem.forced`) of an earlier screening of the same replicate (counts,
    beta_hat and alpha_n): it is taken as it is, with no solve.
    """

    enabled: bool = True
    solver: Callable | None = None
    known_points: Sequence[tuple[Any, float]] = ()
    bound: Callable | None = None
    batch: Callable | None = None
    forced: Any = None


def _is_positive_definite(quad) -> bool:
    """The replicate's own decision when it carries one (``QuadraticReplicate``), else computed."""
    known = getattr(quad, "positive_definite", None)
    return bool(known) if isinstance(known, (bool, np.bool_)) else positive_definite(quad.H)


class ReplicateProblem:
    """Points, costs and the neighbourhood of one count vector."""

    def __init__(self, design, y, counts, beta_hat, loss, alpha_n, *, quad=None, beta_u=None, L_u=None,
                 screening=Screening()):
        """``quad``: the replicate's quadratic form (a positive definite one screens in closed form);
        ``beta_u``, ``L_u``: the root minimiser and its loss; ``screening``: a :class:`Screening`."""
        n = len(y)
        self.n, self.alpha_n, self.design = n, float(alpha_n), design
        self.L_hat = loss.value(design, y, counts, beta_hat)
        self.L_max = self.L_hat + 1.0 / self.alpha_n if self.alpha_n > 0 else math.inf
        self.beta_u, self.L_u = beta_u, L_u
        w = counts.astype(float) - 1.0
        S = np.flatnonzero(counts != 1)
        # merge identical rows of S into one point with costs for sign +1 / -1
        _, first, inverse = np.unique(design[S], axis=0, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        reps = S[first]
        cplus = np.bincount(inverse, weights=w[S] * (y[S] != 1.0), minlength=len(first))
        cminus = np.bincount(inverse, weights=w[S] * (y[S] != -1.0), minlength=len(first))
        forced = np.zeros(len(reps), dtype=int)  # +1 / -1 when the sign is fixed, 0 when free
        forced[~np.any(design[reps] != 0.0, axis=1)] = 1  # zero rows: sign(0) = +1
        # a merged point whose two costs agree never changes C: fix it (its sign is irrelevant)
        forced[(forced == 0) & (cplus == cminus)] = 1
        self.screen_solves = 0
        if screening.enabled and screening.forced is not None and len(screening.forced) == len(forced):
            forced = np.array(screening.forced, dtype=int)
        elif screening.enabled and math.isfinite(self.L_max) and beta_u is not None:
            if quad is not None and _is_positive_definite(quad):
                forced = self._screen_quadratic(quad, reps, forced)
            elif screening.solver is not None:
                forced = self._screen_by_solves(screening.solver, reps, forced,
                                                [(beta_hat, self.L_hat), *screening.known_points], screening.bound,
                                                screening.batch)
        self.forced = forced  # +1 / -1 for every merged point whose sign is fixed, 0 for the free ones
        self.n_screened = int(np.sum(forced != 0))
        self.C_forced = float(np.sum(np.where(forced > 0, cplus, 0.0) + np.where(forced < 0, cminus, 0.0)))
        free = np.flatnonzero(forced == 0)
        # branch first on the points that move |C| most
        order = free[np.argsort(-np.abs(cplus[free] - cminus[free]), kind="stable")]
        self.rows = reps[order]              # design row of each free point, in branching order
        self.cost_plus = cplus[order]
        self.cost_minus = cminus[order]

    def _screen_quadratic(self, quad, reps, forced):
        H = quad.H
        if not _is_positive_definite(quad):
            return forced  # (numerically) singular bootstrap Hessian: the neighbourhood is unbounded
        radius = self.L_max - self.L_u
        Phi = self.design[reps]
        t = Phi @ self.beta_u
        hnorm = np.einsum("ij,ij->i", Phi, np.linalg.solve(H, Phi.T).T)
        with np.errstate(divide="ignore", invalid="ignore"):
            dist2 = t * t / hnorm
        miss = (forced == 0) & (hnorm > 0) & (dist2 >= radius * (1.0 + 1e-9)) & (t != 0)
        forced = forced.copy()
        forced[miss] = np.where(t[miss] > 0, 1, -1)
        return forced

    def _screen_by_solves(self, solve, reps, forced, known, bound=None, batch=None):
        from .node_solvers import NodeSolveError

        Phi = self.design[reps]
        t = Phi @ self.beta_u
        pts = [np.asarray(b, dtype=float) for b, v in known if b is not None and v < self.L_max]
        level = self.L_max + 1e-9 * max(1.0, abs(self.L_max))  # solver round-off never screens a point
        forced = forced.copy()
        todo = np.flatnonzero((forced == 0) & (t != 0.0))
        if bound is not None and len(todo):
            # the closed-form bound first: a point it fixes needs no solve
            lb = bound(Phi[todo])
            if lb is not None:
                sure = self.L_u + lb >= level + 1e-9 * max(1.0, abs(self.L_max))
                forced[todo[sure]] = np.where(t[todo[sure]] > 0, 1, -1)
                todo = todo[~sure]
        sides = np.where(t[todo] > 0, 1, -1)
        # a known point with loss below L_max on the closed opposite side: the point can flip
        # (kept up to date as the screening solves find more such points)
        can_flip = np.zeros(len(todo), dtype=bool)
        for b in pts:
            can_flip |= sides * (Phi[todo] @ b) <= 0.0
        left = np.ones(len(todo), dtype=bool)  # points the loop below decides
        res = batch(reps[todo], sides, can_flip, level, self.L_max) if batch is not None and len(todo) else None
        if res is not None:
            out, solves = res
            self.screen_solves += int(solves)
            forced[todo[out == 1]] = sides[out == 1]
            left = out == -1  # not certified by the compiled solver: the full solver decides
        for j, k in enumerate(todo):
            if can_flip[j] or not left[j]:
                continue
            side = int(sides[j])
            try:
                sol = solve(int(reps[k]), -float(side))
            except NodeSolveError:
                continue  # no screening for this point: always safe
            self.screen_solves += 1
            if sol.value >= level:
                forced[k] = side
            elif sol.beta_value < self.L_max:
                b = np.asarray(sol.beta, dtype=float)
                can_flip[j + 1:] |= sides[j + 1:] * (Phi[todo[j + 1:]] @ b) <= 0.0
        return forced

    def g(self, m: float) -> float:
        """g(alpha_n (L_hat - m)) with g(x) = min(1, x + 1)."""
        if self.alpha_n == 0.0:
            return 1.0
        return min(1.0, 1.0 + self.alpha_n * (self.L_hat - m))

    def objective(self, C: float, m: float) -> float:
        """|C| / n * g(alpha_n (L_hat - m))."""
        return abs(C) / self.n * self.g(m)

    def C_of_signs(self, signs) -> float:
        return self.C_forced + float(np.sum(np.where(signs > 0, self.cost_plus, self.cost_minus)))
