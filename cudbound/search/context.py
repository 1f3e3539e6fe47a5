"""The Python side of the compiled search, and the bridges the loop calls it through.

The loop (:mod:`cudbound.search.core`) runs in numba; what it cannot do there it asks of a
:class:`SearchContext` through ``numba.objmode`` (about 5 us a call): node solves by a
:class:`~cudbound.search.node_solvers.NodeSolver` (with warm starts kept here by handle), the
fallback solver of a node the compiled solver fails on, the LP decision of realisability, and
the recorded search tree. A context is registered under an integer key for one search; the
loop carries only the key.
"""
from __future__ import annotations

import itertools
import math
import threading

import numpy as np
from numba import njit, objmode

from .codes import NOT_REALISABLE, REALISABLE, STATES, UNDECIDED

__all__ = ["SearchContext"]

_CONTEXTS: dict = {}
_KEYS = itertools.count(1)
_LOCK = threading.Lock()


class SearchContext:
    """What the compiled loop asks of Python: node solves by a NodeSolver (with warm starts
    kept here by handle), the fallback solver, the LP decision of realisability, and the
    search tree. Registered under an integer key for the duration of one search."""

    def __init__(self, solver=None, fallback=None, root_warm=None, tree=None):
        self.solver, self.fallback, self.tree = solver, fallback, tree
        self.warms = {0: root_warm}
        self._next = 1
        self.undecided = False

    def __enter__(self):
        with _LOCK:
            self.key = next(_KEYS)
            _CONTEXTS[self.key] = self
        return self

    def __exit__(self, *exc):
        _CONTEXTS.pop(self.key, None)
        return False

    def solve(self, handle, rows, signs, use_fallback):
        """(ok, m, loss at beta, beta, new handle, fallback): ok 0 solved, 1 failed."""
        from .node_solvers import SOLVER_ERRORS, checked_solution
        p = None
        try:
            if use_fallback:
                if self.fallback is None:
                    return 1, math.nan, math.nan, np.zeros(0), -1, 0
                sol = checked_solution(self.fallback().solve(rows, signs, None))
                fb = 1
            else:
                sol = checked_solution(self.solver.solve(rows, signs, self.warms.get(handle)))
                fb = int(getattr(sol, "fallback", False))
        except SOLVER_ERRORS:
            return 1, math.nan, math.nan, np.zeros(0), -1, 0
        h = -1
        if sol.warm is not None:
            h = self._next
            self._next += 1
            self.warms[h] = sol.warm
        p = np.ascontiguousarray(sol.beta, dtype=np.float64)
        return 0, float(sol.value), float(sol.beta_value), p, h, fb

    def realise(self, P, signs):
        """REALISABLE, NOT_REALISABLE, or UNDECIDED (the LP of ``realisability.realise`` failed)."""
        from .realisability import RealisabilityUnknown, realise
        fixed = np.flatnonzero(signs)
        try:
            point = realise(P[fixed], signs[fixed].astype(float), ())
        except (RealisabilityUnknown, ValueError, ArithmeticError):
            self.undecided = True
            return UNDECIDED
        return NOT_REALISABLE if point is None else REALISABLE

    def record(self, uid, parent, depth, m, bound, sign, state):
        t = self.tree
        if t is None:
            return
        if uid not in t:
            t.add_node(uid, depth=int(depth), m=float(m), bound=float(bound), sign=int(sign), state=STATES[state])
            if parent >= 0:
                t.add_edge(int(parent), uid)
            return
        node = t.nodes[uid]
        node["state"] = STATES[state]
        if not math.isnan(m):
            node["m"] = float(m)
        if not math.isnan(bound):
            node["bound"] = float(bound)


def _ext_solve(key, handle, rows, signs, use_fallback):
    ctx = _CONTEXTS.get(key)
    if ctx is None:  # no Python side (a kernel called directly): the node stays unsolved
        return 1, math.nan, math.nan, np.zeros(0), -1, 0
    return ctx.solve(handle, rows, signs, use_fallback)


def _ext_realise(key, P, signs):
    ctx = _CONTEXTS.get(key)
    if ctx is None:
        return UNDECIDED
    return ctx.realise(P, signs)


def _ext_record(key, uid, parent, depth, m, bound, sign, state):
    _CONTEXTS[key].record(uid, parent, depth, m, bound, sign, state)


@njit(cache=True)
def _record_call(key, uid, parent, depth, m, bound, sign, state):
    with objmode():
        _ext_record(key, uid, parent, depth, m, bound, sign, state)


@njit(cache=True)
def _record(key, record, uid, parent, depth, m, bound, sign, state):
    if record:
        _record_call(key, uid, parent, depth, m, bound, sign, state)


@njit(cache=True)
def _solve_call(key, handle, rows, signs, use_fallback):
    """A node solve on the Python side: (ok, m, loss at b, b, new handle, fallback)."""
    with objmode(ok="int64", m="float64", bv="float64", b="float64[::1]", h2="int64", fb="int64"):
        ok, m, bv, b, h2, fb = _ext_solve(key, handle, rows, signs, use_fallback)
    return ok, m, bv, b, h2, fb


@njit(cache=True)
def _realise_call(key, P, signs):
    with objmode(res="int64"):
        res = _ext_realise(key, P, signs)
    return res

