"""Several runs of one study on one store split the work: which run computes which task.

A run hands its executor (local processes, this process or Dask) tasks from a
:class:`TaskSource`, which claims them in the store first (:meth:`ResultStore.claim`: a
lease with the run's owner id and an expiry, taken in one ``BEGIN IMMEDIATE`` transaction).
What is promised:

* **Each task computed once** by runs that overlap in time: a task claimed by a live run is
  left to it; the claim is dropped in the transaction that writes the result.
* **Nothing is lost when a run dies**: its leases are renewed every :data:`RENEW_SECONDS` by a
  thread of the run (:class:`LeaseKeeper`) while it lives; once one expires
  (:data:`LEASE_SECONDS`) another run takes the task over, at once if the dead owner ran on
  the same host (its process no longer exists). A run that stops normally or on Ctrl-C
  releases its unfinished claims at once.
* **A run ends when the study (its selection of the study's cells) is done**, not when the tasks
  it could claim are: when the rest is held by other runs, it waits (polling every
  :data:`POLL_SECONDS`) until those tasks are finished or their leases expire, and takes them
  over then.

The results do not depend on which run computed a task (every task has its own seed), so
runs that share a store give exactly the rows of a single run.
"""
from __future__ import annotations

import collections
import os
import secrets
import socket
import threading
import time

from .store import ResultStore

__all__ = ["TaskSource", "LeaseKeeper", "new_owner", "owner_gone", "LEASE_SECONDS", "RENEW_SECONDS",
           "POLL_SECONDS"]

LEASE_SECONDS = 120.0
"""How long a claim holds without renewal."""

RENEW_SECONDS = 30.0
"""How often a run renews its leases."""

POLL_SECONDS = 2.0
"""How often a run whose remaining tasks are all held by other runs looks again."""


def new_owner() -> str:
    """A run's owner id: ``host:pid:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def owner_gone(owner: str) -> bool:
    """True if ``owner`` (an id of :func:`new_owner`) was a process of this host that no longer
    exists; an owner of another host is judged by its lease's expiry only."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:      # alive, under another user
        pass
    return False


class TaskSource:
    """The tasks of one run, claimed from the store a few at a time, in the study's order.

    ``take(k)`` returns up to k tasks now claimed by this run (possibly none while the others
    are held by other runs); ``waiting`` says whether tasks held by other runs remain, so
    that the run should poll again (``pause``) rather than stop. ``max_tasks`` caps the
    tasks this run claims.
    """

    def __init__(self, store: ResultStore, owner: str, todo, *, max_tasks=None, lease=None):
        self.store, self.owner = store, owner
        self.queue = collections.deque(todo)
        self.held = []                 # held by other runs when last looked at
        self.by_others = 0             # finished by other runs meanwhile
        self.claimed = 0
        self.max_tasks = max_tasks
        self.lease = LEASE_SECONDS if lease is None else lease

    def take(self, k: int) -> list:
        if self.max_tasks is not None:
            k = min(k, self.max_tasks - self.claimed)
        if k <= 0:
            return []
        if not self.queue and self.held:
            self.queue.extend(self.held)       # look at the held ones again
            self.held = []
        got = []
        while len(got) < k and self.queue:
            batch = [self.queue.popleft() for _ in range(min(len(self.queue), 4 * (k - len(got)) + 16))]
            out = self.store.claim(batch, self.owner, self.lease, k - len(got), gone=owner_gone)
            got += out["claimed"]
            self.held += out["held"]
            self.by_others += len(out["done"])
            self.queue.extendleft(reversed(out["rest"]))
        self.claimed += len(got)
        return got

    @property
    def waiting(self) -> bool:
        """Tasks remain that other runs hold (and this run may still claim)."""
        capped = self.max_tasks is not None and self.claimed >= self.max_tasks
        return bool(self.held or self.queue) and not capped

    def pause(self) -> None:
        time.sleep(POLL_SECONDS)

    def release(self) -> None:
        self.store.release(self.owner)


class LeaseKeeper:
    """A daemon thread that renews ``owner``'s leases in the store at ``path`` every
    :data:`RENEW_SECONDS` (with its own connection) until :meth:`stop`. A renewal that fails
    (a store locked for a minute) is retried at the next tick; at worst a lease expires and
    another run computes the task again, which changes no result."""

    def __init__(self, path, owner: str, lease=None, every=None):
        self.path, self.owner = path, owner
        self.lease = LEASE_SECONDS if lease is None else lease
        self.every = RENEW_SECONDS if every is None else every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cudbound-lease-keeper", daemon=True)

    def _run(self) -> None:
        try:
            store = ResultStore(self.path, readonly=False)
        except Exception:   # noqa: BLE001 - the run itself reports a store it cannot open
            return
        with store:
            while not self._stop.wait(self.every):
                try:
                    store.renew(self.owner, self.lease)
                except Exception:   # noqa: BLE001 - retried at the next tick
                    pass

    def __enter__(self):
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def __exit__(self, *exc):
        self.stop()
