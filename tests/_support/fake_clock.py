"""A fake clock for the time budgets (``cudbound._budget.clock``): time moves only when the test says,
so a budget runs out at a chosen point of the work and no test depends on real time.

:class:`FakeClock` stands still until :meth:`FakeClock.advance`; :func:`clock_by_the_refit` installs one
that advances ``per_refit`` seconds for every refit a method asks of ``cudbound.refit.Refits.predict``
(the work a resampling loop does, chunk by chunk), so a budget of T seconds lasts about T / per_refit
refits, wherever they are made; :func:`clock_by_the_comparison_refit` does the same for the refits of
the two procedures of a comparison (``cudbound.compare``).
"""
from __future__ import annotations

import cudbound._budget
from cudbound.refit import Refits


class FakeClock:
    """The budgets' clock at ``now``, which only :meth:`advance` moves; ``reads`` counts the readings."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now, self.reads = now, 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def install(monkeypatch, clock: FakeClock | None = None) -> FakeClock:
    """``clock`` (a new one by default) as ``cudbound._budget.clock`` for the test."""
    clock = clock or FakeClock()
    monkeypatch.setattr(cudbound._budget, "clock", clock)
    return clock


def clock_by_the_refit(monkeypatch, per_refit: float = 1.0) -> FakeClock:
    """A fake clock that advances ``per_refit`` seconds for every refit (row of weights) that
    ``Refits.predict`` is asked for, before the refits are made."""
    clock = install(monkeypatch)
    predict = Refits.predict

    def timed(self, weights):
        clock.advance(per_refit * len(weights))
        return predict(self, weights)
    monkeypatch.setattr(Refits, "predict", timed)
    return clock


def clock_by_the_comparison_refit(monkeypatch, per_refit: float = 1.0) -> FakeClock:
    """A fake clock that advances ``per_refit`` seconds for every refit of either procedure of a
    comparison (a training set of ``cudbound.compare.ProcedurePair.errors``), before the refits are made."""
    from cudbound.compare.procedures import _Refits
    clock = install(monkeypatch)
    wrong = _Refits.wrong_unlogged

    def timed(self, labels, trains, tests):
        clock.advance(per_refit * len(trains))
        return wrong(self, labels, trains, tests)
    monkeypatch.setattr(_Refits, "wrong_unlogged", timed)
    return clock
