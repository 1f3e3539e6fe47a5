"""Worker processes that live no longer than the process that started them, and leave Ctrl-C to it.

Two local process pools compute for cudbound: a coverage run's (:mod:`cudbound.coverage.runner`)
and the replicate pool of one interval (:mod:`cudbound.workers`, ``n_jobs > 1``). What is
promised for both:

* **No orphans.** A worker ends within about :data:`POLL_SECONDS` once its parent is gone,
  however the parent ended, ``kill -9`` included: :func:`init_worker` (the pool's
  initializer) starts a daemon thread that checks, every :data:`POLL_SECONDS`, that the
  worker's parent is still the process that started it (``os.getppid()`` changes when the
  parent dies and the worker is re-parented) and that the starting process exists, and calls
  ``os._exit`` otherwise. This works on Linux and macOS. A thread needs the interpreter lock, which compiled code (numba) may hold
  for a long call; so on Linux the kernel is also asked to kill the worker when its parent
  dies (``prctl(PR_SET_PDEATHSIG, SIGKILL)``), which needs no lock.
* **Ctrl-C is the parent's.** A terminal's Ctrl-C sends SIGINT to the whole process group:
  the workers ignore it (they start with SIGINT blocked, :func:`sigint_blocked`, and
  :func:`init_worker` ignores it before unblocking, so none prints a traceback), and the
  parent stops them (:func:`stop_workers`): a coverage run reports how to resume, an interval
  reports that it was interrupted.
* **The parent never waits holding a future's lock** (:class:`InFlight`): finished futures
  reach it through a queue fed by their done-callbacks, not ``concurrent.futures.wait``, whose
  loop over the futures' locks, if a Ctrl-C lands in it, leaves locks held and the pool's
  manager thread blocked for good (the interpreter then hangs at exit).
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import queue
import signal
import sys
import threading
import time
from concurrent.futures.process import BrokenProcessPool

__all__ = ["init_worker", "sigint_blocked", "stop_workers", "InFlight", "POLL_SECONDS", "ORPHAN_EXIT_STATUS"]

POLL_SECONDS = 0.5
"""How often a worker checks that its parent is alive."""

ORPHAN_EXIT_STATUS = 70
"""The exit status of a worker that ended because its parent was gone."""

_PR_SET_PDEATHSIG = 1


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:      # another user's process: the pid was recycled, the run is gone
        return False
    return True


def _watch(run: int, parent: int) -> None:
    """Exit the worker as soon as it has been re-parented (its parent died) or the run is gone."""
    while True:
        time.sleep(POLL_SECONDS)
        if os.getppid() != parent or not _alive(run):
            os._exit(ORPHAN_EXIT_STATUS)


def _death_signal() -> None:
    """Linux: have the kernel SIGKILL this process when its parent dies (a no-op elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError, TypeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def init_worker(run: int) -> None:
    """The pool initializer of a worker of the pool that the process whose pid is ``run`` made
    (the worker's parent; with the forkserver start method the parent is the fork server, and
    ``run`` is still the pool's maker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _death_signal()
    parent = os.getppid()
    # the run died before the death signal was armed: re-parented to init (unless the run is init
    # itself, as in a container whose first process is the run), or gone
    if (parent == 1 and run != 1) or not _alive(run):
        os._exit(ORPHAN_EXIT_STATUS)
    threading.Thread(target=_watch, args=(run, parent), name="cudbound-parent-watch", daemon=True).start()


@contextlib.contextmanager
def sigint_blocked():
    """Block SIGINT in the calling thread meanwhile, so that workers forked now start with it blocked
    (a SIGINT arriving meanwhile is delivered to this process afterwards)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def stop_workers(pool, timeout: float = 5.0) -> None:
    """Cancel what a ProcessPoolExecutor has not started and end its workers now (SIGTERM, then
    SIGKILL after ``timeout`` seconds), without waiting for the tasks they are computing."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)   # shutdown() forgets it: read it first
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        with contextlib.suppress(Exception):
            p.terminate()
    deadline = time.monotonic() + timeout
    for p in processes:
        with contextlib.suppress(Exception):
            p.join(max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join(1.0)
    # CPython 3.11 races at exit: its atexit hook may wake this pool's manager thread through a
    # pipe that thread has just closed (OSError: bad file descriptor, printed as a traceback).
    # The pool is finished: wait for its manager thread and take it off the hook's list; if it
    # is still finishing (a loaded machine), the hook keeps it (it joins it at exit) but wakes it
    # through a wakeup that ignores a closed pipe.
    if manager is not None:
        with contextlib.suppress(Exception):
            manager.join(max(0.0, deadline - time.monotonic()) + 1.0)
            import concurrent.futures.process as _cfp
            if not manager.is_alive():
                _cfp._threads_wakeups.pop(manager, None)
            elif manager in _cfp._threads_wakeups:
                _cfp._threads_wakeups[manager] = _QuietWakeup(_cfp._threads_wakeups[manager])


class _QuietWakeup:
    """A pool's wakeup pipe whose ``wakeup()`` ignores a pipe already closed (the exit race above)."""

    def __init__(self, inner):
        self._inner = inner

    def wakeup(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._inner.wakeup()

    def __getattr__(self, name):
        return getattr(self._inner, name)


class InFlight:
    """The tasks submitted to a ProcessPoolExecutor and not yet handed back, delivered as they finish.

    ``submit(key, fn, *args)`` submits (with SIGINT blocked, so that a worker forked by the
    submission starts with it blocked); ``next()`` returns the ``(key, future)`` of a finished
    task, in the order they finish. ``len()`` counts the tasks not yet handed back. ``next()``
    waits on a queue with a timeout, so Ctrl-C is seen at once, and raises BrokenProcessPool when
    the pool broke while a submission was being registered (CPython may then never complete
    that future).
    """

    def __init__(self, pool):
        self.pool = pool
        self._finished = queue.SimpleQueue()
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def submit(self, key, fn, *args) -> None:
        with sigint_blocked():
            fut = self.pool.submit(fn, *args)
        fut.add_done_callback(lambda f: self._finished.put((key, f)))
        self._count += 1

    def next(self):
        while True:
            try:
                item = self._finished.get(timeout=POLL_SECONDS)
            except queue.Empty:
                broken = getattr(self.pool, "_broken", False)
                if broken:
                    raise BrokenProcessPool(f"a worker process died ({broken})") from None
                continue
            self._count -= 1
            return item
