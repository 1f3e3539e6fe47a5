"""A time budget on one clock: how a run stops on time without changing what it computes.

:func:`clock` is the one clock of the time budgets and of the ``seconds`` that
:func:`cudbound.intervals` reports (``time.perf_counter``). Everything here reads it through this
module, so a test can replace it with a fake clock (``monkeypatch.setattr(cudbound._budget,
"clock", fake)``) and nothing depends on real time.

A :class:`Budget` is a deadline on that clock (none without a limit). :meth:`Budget.chunks` hands
out the resamples of a loop in chunks, in order, and stops handing them out once the deadline
has passed and at least ``minimum`` are done. The caller draws its resamples exactly as without a
limit, so a loop cut short has computed a prefix of the resamples of the loop without one; how
far it got goes in the result's details (:meth:`Budget.note`: ``<option>_used`` and
``cut_by_time_limit``).

>>> budget = Budget(None)
>>> list(budget.chunks(5, cap=2)), budget.left() is None
([(0, 2), (2, 4), (4, 5)], True)
"""
from __future__ import annotations

import math
import numbers
import time
from collections.abc import Iterator

from ._validation import check_scalar
from ._warnings import warn

__all__ = ["clock", "check_time_limit", "Budget", "warn_skipped", "charge_shared"]


def clock() -> float:
    """Seconds on the budgets' clock (``time.perf_counter``; only differences mean anything)."""
    return time.perf_counter()


def check_time_limit(time_limit, *, zero: bool = True) -> float | None:
    """``time_limit`` as seconds, or None (no limit); 0 only where ``zero`` (what is left of a run's
    budget may be nothing; a user's own limit must be positive)."""
    if time_limit is None:
        return None
    return check_scalar(time_limit, "time_limit", numbers.Real, min_val=0.0,
                        include_boundaries="left" if zero else "neither",
                        hint=" (seconds; None: no limit)")


class Budget:
    """A deadline ``seconds`` after now on :func:`clock`; ``Budget(None)`` has none.

    ``Budget(seconds, deadline=d)`` ends at the earlier of the two (a method's own limit inside
    a run's budget).
    """

    def __init__(self, seconds: float | None, *, deadline: float | None = None) -> None:
        ends = [] if seconds is None else [clock() + seconds]
        if deadline is not None:
            ends.append(deadline)
        self.deadline: float | None = min(ends) if ends else None

    @property
    def limited(self) -> bool:
        return self.deadline is not None

    def share(self, remaining: int, own: float | None = None) -> Budget | None:
        """A method's budget in a run of several under this one: an equal share of what is left, the
        time left divided by the ``remaining`` methods (itself included), or the method's ``own`` limit
        (seconds) if it ends first; None when neither is limited. What one method leaves unused goes
        to the ones after it."""
        if not self.limited and own is None:
            return None
        left = self.left()
        share = None if left is None else Budget(left / remaining).deadline
        return Budget(check_time_limit(own), deadline=share)

    def left(self) -> float | None:
        """Seconds until the deadline (0 once it has passed), None without one."""
        return None if self.deadline is None else max(0.0, self.deadline - clock())

    def spent(self) -> bool:
        """Whether the deadline has passed (never without one)."""
        return self.deadline is not None and clock() >= self.deadline

    def chunks(self, total: int, *, minimum: int = 1, cap: int | None = None) -> Iterator[tuple[int, int]]:
        """``(start, stop)`` ranges that cover resamples 0..total in order, one chunk of work each: the
        caller does resamples start..stop-1 before asking for the next chunk.

        Without a deadline: chunks of ``cap`` (one chunk of all without one). With a deadline: chunks of
        at most ``cap``, the first ones up to ``minimum`` resamples whatever the time, then each sized to
        half the time left at the slower of the rate so far and the last chunk's, and to at most twice
        the resamples done (at least one), so that a rate that changes (slow refits after fast ones)
        overshoots the deadline by little;
        no further chunk once the deadline has passed. The resamples done are always the first
        ``stop`` of the last chunk handed out.
        """
        cap = max(1, total if cap is None else cap)
        done = 0
        began = last = clock() if self.deadline is not None else 0.0
        size = cap if self.deadline is None else min(cap, max(1, minimum))
        while done < total:
            stop = min(total, done + size)
            yield done, stop
            if self.deadline is None:
                done = stop
                continue
            now = clock()
            rate = max((now - began) / stop, (now - last) / (stop - done))   # the slower: so far, or the last chunk
            done, last = stop, now
            if done < minimum:
                size = min(cap, minimum - done)
                continue
            if now >= self.deadline:
                return
            fits = math.inf if rate <= 0.0 else math.floor((self.deadline - now) / rate / 2)
            size = int(min(cap, 2 * done, max(1, fits)))

    def note(self, details: dict, option: str, used: int, asked: int) -> None:
        """Record in ``details`` how many of ``asked`` resamples a loop under this budget used:
        ``<option>_used``, and ``cut_by_time_limit`` (True once any loop of the result stopped short).
        Nothing without a deadline."""
        if self.deadline is None:
            return
        details[f"{option}_used"] = int(used)
        details["cut_by_time_limit"] = bool(details.get("cut_by_time_limit", False) or used < asked)


def warn_skipped(skipped: tuple[str, ...]) -> None:
    """The warning of a run whose time limit ran out before the methods ``skipped`` started (none if
    there are none): they are in no result, and the run's ``ResultList.skipped`` names them."""
    if skipped:
        warn(f"the time limit ran out before {', '.join(skipped)} started: "
             f"{'it was' if len(skipped) == 1 else 'they were'} skipped (ResultList.skipped).", UserWarning)


def charge_shared(own: list[float], pieces: list[dict]) -> list[float]:
    """Share the pieces of work several results of one run used: ``pieces[i]`` maps the name of each
    piece result i used to its seconds. The first result to use a piece computed it, so its cost
    leaves that result's ``own`` seconds (in place); each user is charged an equal share. Returns
    the shares; ``own[i] + share[i]`` summed over the results is the run's time, unchanged."""
    cost: dict[str, float] = {}
    users: dict[str, list[int]] = {}
    for i, used in enumerate(pieces):
        for piece, seconds in used.items():
            if piece not in cost:
                cost[piece] = float(seconds)
                own[i] -= float(seconds)
            users.setdefault(piece, []).append(i)
    share = [0.0] * len(own)
    for piece, who in users.items():
        for i in who:
            share[i] += cost[piece] / len(who)
    return share
