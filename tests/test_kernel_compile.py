"""Compiling the kernels (cudbound/_kernel_compile.py): the first call of a search kernel compiles
it once across processes, under a file lock in its cache folder; every group of kernels that
compiles says so once, and the compile time is counted apart. Tested by construction, with
stand-in kernels and compile events, a second holder of the lock and an injected clock: no timing."""
import threading

import numpy as np
import pytest
from filelock import FileLock, Timeout

from cudbound import _kernel_compile as kcompile


class _Kernel:
    """A stand-in for a numba dispatcher: records compile() calls and what held the lock then."""

    def __init__(self, lock_path, events):
        self.signatures = []
        self.lock_path = lock_path
        self.events = events

    def typeof_pyval(self, value):
        return type(value).__name__

    def compile(self, sig):
        other = FileLock(str(self.lock_path))
        try:                                         # another holder cannot take the lock now
            other.acquire(timeout=0)
            other.release()
            self.events.append(("compiled", sig, "unlocked"))
        except Timeout:
            self.events.append(("compiled", sig, "locked"))
        self.signatures.append(sig)


class _Clock:
    """An injected clock: each reading is one second after the last."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0
        return self.now


@pytest.fixture
def fresh(monkeypatch):
    """A fresh compile clock and notice record, read from an injected clock."""
    monkeypatch.setattr(kcompile, "_COMPILES", kcompile._Compiles())
    monkeypatch.setattr(kcompile, "_clock", _Clock())


@pytest.fixture
def lock_path(tmp_path, monkeypatch, fresh):
    path = tmp_path / kcompile.LOCK_FILE
    monkeypatch.setattr(kcompile, "_lock_path", lambda: path)
    monkeypatch.setattr(kcompile, "_LOADED", set())
    return path


def test_the_first_call_compiles_for_the_arguments_types_under_the_lock(lock_path):
    events = []
    kernel = _Kernel(lock_path, events)
    with kcompile.compile_once(kernel, (1.0, 2, "x")):
        events.append(("called",))
    assert events == [("compiled", ("float", "int", "str"), "locked"), ("called",)]
    FileLock(str(lock_path)).acquire(timeout=0)      # released afterwards
    assert kcompile.compile_seconds() == 0.0         # the lock was free: no wait to count


def test_later_calls_with_arguments_of_the_same_kinds_neither_compile_nor_lock(lock_path):
    events = []
    kernel = _Kernel(lock_path, events)
    with kcompile.compile_once(kernel, (1.0,)):
        pass
    held = FileLock(str(lock_path))
    held.acquire(timeout=0)                          # another process holds the lock: no matter now
    try:
        with kcompile.compile_once(kernel, (1.0,)):
            events.append(("called again",))
    finally:
        held.release()
    assert events == [("compiled", ("float",), "locked"), ("called again",)]


def test_a_call_with_arguments_of_new_kinds_compiles_again_under_the_lock(lock_path):
    # a new specialisation of the same kernel (e.g. an argument None for one loss, an array for another)
    events = []
    kernel = _Kernel(lock_path, events)
    for args in [(1.0, None), (2.0, None), (1.0, np.zeros(3)), (1.0, np.zeros(4)), (1.0, np.zeros((2, 2)))]:
        with kcompile.compile_once(kernel, args):
            pass
    # the kinds are the Python types: arrays of other shapes are the call's own to specialise
    assert events == [("compiled", ("float", "NoneType"), "locked"), ("compiled", ("float", "ndarray"), "locked")]


def test_a_process_that_finds_the_lock_held_waits_for_it_and_says_so(lock_path, monkeypatch):
    events = []
    said = threading.Event()
    messages = []

    def say(message):
        messages.append(message)
        said.set()

    monkeypatch.setattr(kcompile, "_say", say)
    monkeypatch.setattr(kcompile, "_NOTICE_AFTER", 0.05)   # the quiet wait before the notice
    holder = FileLock(str(lock_path))
    holder.acquire(timeout=0)                        # the other process, compiling
    kernel = _Kernel(lock_path, events)
    worker = threading.Thread(target=lambda: kcompile.compile_once(kernel, (1.0,)).__enter__())
    worker.start()
    assert said.wait(60)                             # it waits (and says so) before compiling
    assert events == [] and "waiting for another process" in messages[0]
    events.append(("released",))
    holder.release()
    worker.join(60)
    assert events[0] == ("released",) and events[1][:2] == ("compiled", ("float",))
    assert kcompile.compile_seconds() == 1.0         # the wait counts as compiling (two clock readings)


def test_no_writable_cache_folder_means_no_lock(monkeypatch):
    monkeypatch.setattr(kcompile, "_lock_path", lambda: None)
    monkeypatch.setattr(kcompile, "_LOADED", set())
    calls = []

    class Plain:                                     # e.g. NUMBA_DISABLE_JIT: a plain function
        signatures = []

    with kcompile.compile_once(Plain(), (1,)):
        calls.append("called")
    assert calls == ["called"]


def test_the_two_kernels_share_one_lock(tmp_path, monkeypatch):
    # compiling _replicate compiles _search and shared callees too: two processes compiling the two
    # kernels at once would save those functions' cache indexes at once, which numba does not lock
    monkeypatch.setenv("CUDBOUND_CACHE_DIR", str(tmp_path))
    held = []

    class Kernel:
        signatures = []

        def __init__(self, name):
            self.__name__ = name

        def typeof_pyval(self, value):
            return type(value).__name__

        def compile(self, sig):
            other = FileLock(str(kcompile._lock_path()))
            try:
                other.acquire(timeout=0)
                other.release()
                held.append(False)
            except Timeout:
                held.append(True)

    monkeypatch.setattr(kcompile, "_LOADED", set())
    for name in ("_search", "_replicate"):
        with kcompile.compile_once(Kernel(name), (1.0,)):
            pass
    assert held == [True, True] and kcompile._lock_path().parent.name.startswith("search")


# ------------------------------------------------------------------ the notice and the clock

class _Event:
    def __init__(self, dispatcher):
        self.data = {"dispatcher": dispatcher}


class _Timer:
    """An injected notice timer: fired by the test, not by time."""
    made: list = []

    def __init__(self, delay, function, args=()):
        self.delay, self.function, self.args, self.cancelled = delay, function, args, False
        _Timer.made.append(self)

    def start(self):
        pass

    def cancel(self):
        self.cancelled = True

    def fire(self):
        if not self.cancelled:
            self.function(*self.args)


@pytest.fixture
def said(monkeypatch, fresh):
    messages = []
    monkeypatch.setattr(kcompile, "_say", messages.append)
    monkeypatch.setattr(kcompile, "_timer", _Timer)
    _Timer.made = []
    return messages


def _kernels():
    from cudbound import pca_parts
    from cudbound.optim.svm_dual import smo_solver
    from cudbound.search import bounds, core

    return core._search, bounds._flip_d, smo_solver.smo, pca_parts.pca_part_designs


def test_a_long_compile_of_each_group_says_so_once_and_its_time_is_counted(said):
    search, flip, smo, pca = _kernels()
    kcompile._on_start(_Event(search))               # clock 1
    kcompile._on_start(_Event(smo))                  # a callee compiled inside: no timer, no clock
    kcompile._on_end(_Event(smo))
    assert len(_Timer.made) == 1 and _Timer.made[0].delay == kcompile._NOTICE_AFTER
    _Timer.made[0].fire()                            # still compiling after the delay: the notice
    kcompile._on_end(_Event(search))                 # clock 2
    assert said == ["cudbound: compiling the branch-and-bound kernel with numba (first run only; cached for "
                    "later runs; a minute or two) ..."]
    assert kcompile.compile_seconds() == 1.0
    kcompile._on_start(_Event(flip))                 # the same group again: counted, not announced
    kcompile._on_end(_Event(flip))
    assert len(_Timer.made) == 1 and kcompile.compile_seconds() == 2.0
    kcompile._on_start(_Event(pca))                  # a short compile: its timer is cancelled unfired
    kcompile._on_end(_Event(pca))
    _Timer.made[-1].fire()
    assert _Timer.made[-1].cancelled and len(said) == 1
    for kernel in (smo, pca):                        # then long ones: each group once
        kcompile._on_start(_Event(kernel))
        _Timer.made[-1].fire()
        kcompile._on_end(_Event(kernel))
    assert said[1:] == [f"cudbound: compiling {what} with numba (first run only; cached for later runs) ..."
                        for what in ("the SVM dual's kernels", "the part-wise PCA kernel")]
    assert kcompile.compile_seconds() == 5.0


def test_another_packages_kernel_is_neither_announced_nor_counted(said):
    def mine(x):
        return x

    class Dispatcher:
        py_func = mine

    for dispatcher in (Dispatcher(), None, object()):
        kcompile._on_start(_Event(dispatcher))
        kcompile._on_end(_Event(dispatcher))
    assert _Timer.made == [] and said == [] and kcompile.compile_seconds() == 0.0


def test_numbas_compile_events_reach_the_listener(said, monkeypatch):
    """A real (tiny, uncached) numba compile, its function taken for one of cudbound's groups."""
    from numba import njit

    @njit
    def add_one(x):
        return x + 1

    monkeypatch.setattr(kcompile, "_group", lambda d: "pca_parts" if d is add_one else None)
    kcompile.install()                               # done on import; again is a no-op
    assert add_one(1) == 2
    assert len(_Timer.made) == 1 and kcompile.compile_seconds() == 1.0
    _Timer.made[0].fire()
    assert _Timer.made[0].cancelled and said == []   # the timer of a finished compile says nothing
    assert add_one(2) == 3 and len(_Timer.made) == 1  # compiled: no event
