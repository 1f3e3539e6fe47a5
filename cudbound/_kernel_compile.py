"""Compiling cudbound's numba kernels: announced once, timed apart, and done once across processes.

**Announced and timed.** numba compiles an ``@njit(cache=True)`` kernel on its first call in a
process unless its cache holds it (:mod:`cudbound._kernel_cache`). :func:`install` listens to
numba's ``numba:compile`` events (which fire for a compile, not for a load from the cache): when
the outermost compile of one of cudbound's kernels is still running after
:data:`_NOTICE_AFTER` seconds, one line on stderr says which group of kernels is compiling (once
per group and process), and :func:`compile_seconds` adds up the time of these compiles, so that
a result can report its computation's time apart from the compiler's.

**Once across processes.** Processes that start at once on a cold cache (a study's workers,
``n_jobs`` workers, a test suite's workers and the commands they run) would each compile the
branch-and-bound kernels, minutes of CPU apiece. :func:`compile_once` takes a file lock in their
cache folder before their first call and compiles the kernel for the call's argument types under
it (``Dispatcher.compile``, which loads from the cache when it can): the first process compiles
and writes the cache, the others wait (counted as compiling) and then load it.
"""
from __future__ import annotations

import contextlib
import sys
import threading
import time
from pathlib import Path

__all__ = ["install", "compile_once", "compile_seconds", "LOCK_FILE"]

_LOADED: set = set()  # (kernel, argument kinds) known to be compiled or loaded in this process
_NOTICE_AFTER = 2.0  # seconds: loading the cached kernel takes less
_WAIT_LIMIT = 900.0  # seconds: past this, compile without waiting for the other process
LOCK_FILE = "cudbound_compile.lock"
_WHAT = {"search": ("the branch-and-bound kernel", "; a minute or two"), "svm_dual": ("the SVM dual's kernels", ""),
         "pca_parts": ("the part-wise PCA kernel", ""), "linear_solve": ("the Gaussian elimination kernel", ""),
         "squared_parts": ("the part-wise least-squares kernel", "")}
"""What the notice calls each kernel group of :func:`cudbound._kernel_cache.group_of`, and how long it takes."""


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


_clock = time.perf_counter
_timer = threading.Timer


class _Compiles:
    """Seconds spent compiling cudbound's kernels in this process, and the groups announced."""

    def __init__(self):
        self.lock = threading.Lock()
        self.seconds = 0.0
        self.announced: set = set()
        self.local = threading.local()   # per thread: depth of nested compiles, start, notice timer

    def add(self, seconds: float) -> None:
        with self.lock:
            self.seconds += seconds


_COMPILES = _Compiles()


def compile_seconds() -> float:
    """Seconds this process has spent compiling cudbound's kernels (or waiting for another process
    to compile them), since it started; the difference over a call is that call's compile time."""
    return _COMPILES.seconds


def _group(dispatcher) -> str | None:
    """The kernel group of ``dispatcher``'s function, None when it is not one of cudbound's."""
    import inspect

    from ._kernel_cache import group_of

    try:
        return group_of(Path(inspect.getfile(dispatcher.py_func)))[0]
    except (AttributeError, TypeError, ValueError, OSError):
        return None


def _notice(group: str) -> None:
    with _COMPILES.lock:
        if group in _COMPILES.announced:
            return
        _COMPILES.announced.add(group)
    what, hint = _WHAT.get(group, (f"the {group} kernels", ""))
    _say(f"cudbound: compiling {what} with numba (first run only; cached for later runs{hint}) ...")


def _on_start(event) -> None:
    """A compile starts: at the outermost level, for one of cudbound's kernels, start the clock
    and the notice's timer."""
    state = _COMPILES.local
    depth = getattr(state, "depth", 0)
    state.depth = depth + 1
    if depth:
        return                              # a callee compiled inside another kernel's compile
    group = _group((event.data or {}).get("dispatcher"))
    state.start = None if group is None else _clock()
    state.timer = None
    if group is not None and group not in _COMPILES.announced:
        state.timer = _timer(_NOTICE_AFTER, _notice, args=(group,))
        state.timer.daemon = True
        state.timer.start()


def _on_end(event) -> None:
    """A compile ends: at the outermost level, stop the notice's timer and add the time."""
    state = _COMPILES.local
    state.depth = max(getattr(state, "depth", 1) - 1, 0)
    if state.depth:
        return
    timer, start = getattr(state, "timer", None), getattr(state, "start", None)
    state.timer = state.start = None
    if timer is not None:
        timer.cancel()
    if start is not None:
        _COMPILES.add(_clock() - start)


_LISTENER = None


def install() -> None:
    """Listen to numba's compile events (once per process)."""
    global _LISTENER
    from numba.core import event

    if _LISTENER is not None:
        return

    class Listener(event.Listener):
        def on_start(self, ev):
            _on_start(ev)

        def on_end(self, ev):
            _on_end(ev)

    _LISTENER = Listener()
    event.register("numba:compile", _LISTENER)


def _lock_path():
    """The lock file in the search kernels' cache folder, or None when that folder cannot be
    written. One lock for the folder, not one per kernel: compiling ``_replicate`` compiles
    ``_search`` and shared callees too, and numba's cache index of a function is rewritten
    without a lock of its own, so two processes saving different specialisations of one function
    at once could lose one or pair an index entry with the other's code."""
    import os

    from ._kernel_cache import kernel_dir

    try:
        folder = kernel_dir()
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, ImportError):
        return None
    return folder / LOCK_FILE if os.access(folder, os.W_OK) else None


@contextlib.contextmanager
def _compile_lock():
    """Hold the cross-process compile lock (or nothing, when there is no writable cache folder)."""
    path = _lock_path()
    if path is None:
        yield
        return
    from filelock import FileLock, Timeout

    lock = FileLock(str(path))
    try:
        held = _acquire(lock, Timeout)
    except (OSError, NotImplementedError):         # no lock to be had (filelock 3.x raises NotImplementedError
        held = False                               # where the file system has no flock): compile here
    try:
        yield
    finally:
        if held:
            lock.release()


def _acquire(lock, Timeout) -> bool:
    """Take ``lock``; say so on stderr if another process holds it past the notice's delay (loading
    a cached kernel takes less), and give up waiting after :data:`_WAIT_LIMIT`. A wait counts as
    compiling (:func:`compile_seconds`)."""
    try:
        lock.acquire(timeout=0)
        return True
    except Timeout:
        pass
    start = _clock()
    try:
        try:
            lock.acquire(timeout=_NOTICE_AFTER)
            return True
        except Timeout:
            _say("cudbound: waiting for another process to finish compiling the branch-and-bound kernel "
                 "(first run only) ...")
        try:
            lock.acquire(timeout=_WAIT_LIMIT)
            return True
        except Timeout:                            # the other process is stuck: compile here
            return False
    finally:
        _COMPILES.add(_clock() - start)


def _argument_kinds(args) -> tuple:
    """A cheap stand-in for the numba types of ``args`` (numba's own typing of these arguments takes
    0.2-0.5 ms a call, this about a microsecond): their Python types. A new one means the call may
    compile a new specialisation (an argument None for one loss, an array for another); a new numba
    type behind the same Python types is compiled by the call itself, without the lock."""
    return tuple(map(type, args))


@contextlib.contextmanager
def compile_once(kernel, args=()):
    """Before the first call of the branch-and-bound ``kernel`` in this process with arguments of
    these kinds, compile it for ``args``' types under the cross-process lock (module docstring;
    the notice and the clock are the compile events')."""
    key = (kernel, _argument_kinds(args))
    if key in _LOADED:
        yield
        return
    with _compile_lock():
        if hasattr(kernel, "compile") and hasattr(kernel, "typeof_pyval"):
            try:
                kernel.compile(tuple(kernel.typeof_pyval(a) for a in args))
            except Exception:  # noqa: BLE001 - the call itself compiles and raises as it would
                pass
    _LOADED.add(key)
    yield
