"""What a search is asked (options, tolerances) and what it returns (outcome).

Shared by the compiled loop (:mod:`cudbound.search.core`), its Python face
(:mod:`cudbound.search.bnb`), the engine and the quantile refinement.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numbers

from .._validation import check_scalar
from .codes import BRANCHING

__all__ = ["Tolerances", "SearchOptions", "SearchOutcome"]


@dataclass(frozen=True)
class Tolerances:
    """The tolerances of the search loop (``core._prunes`` and ``bounds._value_at``).

    The node solvers' own tolerances (certificates, pivots) are constants of their modules.
    """

    prune: float = 1e-12      # prune when U <= max(best, floor) + prune
    margin: float = 1e-9      # a sign counts as clear when |phi'beta| > margin |phi| |beta|

    def __post_init__(self):
        for name in ("prune", "margin"):
            check_scalar(getattr(self, name), name, numbers.Real, min_val=0.0, max_val=1.0)


@dataclass(frozen=True)
class SearchOptions:
    """Switches of the search; none changes Q^(b), only the work done (or the budget).

    - flip_cost : tighten node bounds by the per-point flip cost (positive definite quadratic losses).
    - branching : "critical" (default), "dearest", "ambiguous" or "static" (``branching._branch_point``;
      "critical" branches on a point the node's flip-cost bound counts, ``bounds._critical_point``, and
      is "dearest" where no flip-cost bound picks one: the hinge losses, ``flip_cost=False``, a smooth
      loss's child solved at once, and the difference's searches, ``search.frontier``; a user loss
      without derivatives branches "static").
    - screen : fix before branching the points whose sign no classifier in the neighbourhood can flip.
    - dual_bound : stop a plain hinge node's simplex once its dual bound proves the node pruned
      (``lp_node_solver``; the search is the same node for node).
    - max_nodes, time_limit : per-replicate budgets; when hit, the replicate keeps a certified upper bound.
    - deadline : a moment (``time.time()``, seconds since the epoch) after which no search goes on:
      the budget of a whole interval (``cud_interval(..., time_limit=T)``). A search still running
      then stops as at its time limit; one that would start after it returns at once with the
      trivial certified bound max|C| / n (``engine.trivial_bound``).
    - floor : prune every node whose bound is at most ``floor``: values up to it are not resolved,
      and the result is then only an upper bound ``floor + 1e-12`` (status "bounded").
    - stop_above : stop as soon as a value above it is attained (status "bounded").
    - dive_every : a joint search (the difference of two classifiers, ``search.frontier``) dives, from
      the first node and then every ``dive_every`` nodes, down to one leaf by the children of larger
      bound (``frontier._next_node``), to attain a high value early; 0: never.
    - node_memory : the bytes of a joint search's node pool (the difference of two classifiers): once the
      nodes it has used would fill them, it goes on depth first for the rest of the search
      (``frontier._queue``), its pool then growing only by the depth of the tree, so that it holds about
      this much, more only by the path's nodes (and by a copy while it grows); the same Q^(b), the node
      count changed either way. Best first, a hard replicate of the difference held over 10 GB. Default
      128 MiB (``compare.cud.STATE_BYTES`` says what was measured). None: no limit.
    - bound_chain : K, the bounds a node of a quadratic or self-concordant (logistic, exponential) loss's
      search with flip costs (branching "critical") works out for its next K descendants that keep its
      minimiser (``bounds._chain``): each such child then takes its bound and pick from its parent's chain
      instead of computing its flip costs again (``core._chained``). The same numbers, so the same nodes and
      Q^(b) for every K; 0: every child computes its own.
    - resume : a ``core.SearchState`` (``SearchOutcome.state`` of an earlier search of the same
      replicate stopped by ``max_nodes`` or ``stop_above``): the search continues from its open nodes
      instead of starting again (only with a ``floor`` no lower than then; ``stop_above`` may be any,
      as it prunes nothing).

    ``floor``, ``stop_above`` and ``resume`` serve the quantile-targeted refinement (``cudbound.quantile``).
    """

    flip_cost: bool = True
    branching: str = "critical"
    screen: bool = True
    dual_bound: bool = True
    max_nodes: int | None = None
    time_limit: float | None = None
    floor: float | None = None
    stop_above: float | None = None
    deadline: float | None = None
    dive_every: int = 32
    node_memory: int | None = 128 << 20
    bound_chain: int = 4
    resume: object = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.branching not in BRANCHING:
            raise ValueError(f"`branching` must be one of {sorted(BRANCHING)}; got {self.branching!r}.")
        for name in ("max_nodes", "time_limit"):
            v = getattr(self, name)
            if v is not None:
                check_scalar(v, name, numbers.Real, min_val=0.0, include_boundaries="neither", hint=" (None: no limit)")
        check_scalar(self.dive_every, "dive_every", numbers.Integral, min_val=0, hint=" (0: no dives)")
        check_scalar(self.bound_chain, "bound_chain", numbers.Integral, min_val=0, hint=" (0: none)")
        if self.node_memory is not None:
            check_scalar(self.node_memory, "node_memory", numbers.Integral, min_val=1, hint=" (None: no limit)")


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
    state: object = field(default=None, repr=False)  # a core.SearchState when stopped by max_nodes (resumable)
