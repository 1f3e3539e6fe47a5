"""The first call of a branch-and-bound kernel in a process: compiled (or loaded from numba's cache)
once across processes, with a one-line notice while it takes long.

numba compiles an ``@njit(cache=True)`` kernel on its first call in a process unless its cache
holds it. Processes that start at once on a cold cache (a study's workers, ``n_jobs`` workers,
a test suite's workers and the commands they run) would each compile it, minutes of CPU apiece.
Here the first call takes a file lock in the kernels' cache folder and compiles the kernel for
the call's argument types under it (``Dispatcher.compile``, which loads from the cache when it
can): the first process compiles and writes the cache, the others wait and then load it.
"""
from __future__ import annotations

import contextlib
import sys
import threading

__all__: list[str] = []

_LOADED: set = set()  # (kernel, argument kinds) known to be compiled or loaded in this process
_NOTICE_AFTER = 2.0  # seconds: loading the cached kernel takes less
_WAIT_LIMIT = 900.0  # seconds: past this, compile without waiting for the other process
LOCK_FILE = "cudbound_compile.lock"


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _lock_path():
    """The lock file in the search kernels' cache folder, or None when that folder cannot be
    written. One lock for the folder, not one per kernel: compiling ``_replicate`` compiles
    ``_search`` and shared callees too, and numba's cache index of a function is rewritten
    without a lock of its own, so two processes saving different specialisations of one function
    at once could lose one or pair an index entry with the other's code."""
    import os

    from .._kernel_cache import SEARCH, kernel_dir

    try:
        folder = kernel_dir(SEARCH)
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
    a cached kernel takes less), and give up waiting after :data:`_WAIT_LIMIT`."""
    try:
        lock.acquire(timeout=_NOTICE_AFTER)
        return True
    except Timeout:
        _say("cudbound: waiting for another process to finish compiling the branch-and-bound kernel "
             "(first run only) ...")
    try:
        lock.acquire(timeout=_WAIT_LIMIT)
        return True
    except Timeout:                                # the other process is stuck: compile here
        return False


def _argument_kinds(args) -> tuple:
    """A cheap stand-in for the numba types of ``args`` (numba's own typing of these arguments takes
    0.2-0.5 ms a call, this about a microsecond): their Python types. A new one means the call may
    compile a new specialisation (an argument None for one loss, an array for another); a new numba
    type behind the same Python types is compiled by the call itself, without the lock."""
    return tuple(map(type, args))


@contextlib.contextmanager
def _compile_once(kernel, args=()):
    """Before the first call of ``kernel`` in this process with arguments of these kinds, compile it
    for ``args``' types under the cross-process lock (module docstring), saying on stderr what is
    happening when it takes long (numba; the result is cached on disk, so later runs load it in well
    under a second)."""
    key = (kernel, _argument_kinds(args))
    if key in _LOADED:
        yield
        return
    timer = threading.Timer(_NOTICE_AFTER, _say, args=(
        "cudbound: compiling the branch-and-bound kernel with numba (first run only; cached for later runs, "
        "a few minutes) ...",))
    timer.daemon = True
    try:
        with _compile_lock():
            timer.start()
            if hasattr(kernel, "compile") and hasattr(kernel, "typeof_pyval"):
                try:
                    kernel.compile(tuple(kernel.typeof_pyval(a) for a in args))
                except Exception:  # noqa: BLE001 - the call itself compiles and raises as it would
                    pass
    finally:
        timer.cancel()
    _LOADED.add(key)
    yield
