"""Failures injected into a search, the same in every run whatever order the search asks in
(tests of what a resumed search carries over: tests/search/test_core.py, test_frontier.py)."""
import numpy as np

import cudbound.engine as engine_mod
from cudbound.search import CvxpyNodeSolver, NodeSolveError
from cudbound.search import realisability as realisability_mod


def fail_some_nodes(monkeypatch, engine):
    """The engine's compiled node solver cut to one iteration (the plain hinge's simplex or the smooth
    losses' SQP: an engine of another loss has neither), so that its nodes go to the fallback, which
    fails on a fixed set of about a third of the sign patterns (sum over the positive signs of row + 1
    divisible by 3)."""
    if engine._lp is not None:
        engine._lp.max_iter = 1
    else:
        engine._smooth.max_iter = 1
    real = CvxpyNodeSolver.solve

    def solve(self, rows, signs, warm=None):
        rows, signs = np.asarray(rows), np.asarray(signs)
        if rows.size and int(np.sum((signs > 0) * (rows + 1))) % 3 == 0:
            raise NodeSolveError("injected")
        return real(self, rows, signs, warm)

    monkeypatch.setattr(CvxpyNodeSolver, "solve", solve)


def undecide_some_questions(monkeypatch, entry):
    """Every realisability question of the searches the engine starts through ``entry`` ("branch_and_bound"
    or "run_frontier"; not the quadratic losses' compiled replicate) goes to the Python side, whose LP
    fails on the questions with a multiple of 3 negative signs."""
    real = realisability_mod.realise

    def realise(rows, signs, candidates=()):   # rows: the fixed points' design rows
        if int(np.sum(np.asarray(signs) < 0)) % 3 == 0:
            raise ValueError("injected linprog failure")
        return real(rows, signs, candidates)

    monkeypatch.setattr(realisability_mod, "realise", realise)
    start = getattr(engine_mod, entry)
    monkeypatch.setattr(engine_mod, entry, lambda *args, **kw: start(*args, **{**kw, "python_realise": True}))
