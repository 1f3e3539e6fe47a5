"""The first call of a kernel compiles it once across processes: under a file lock in the kernel
cache folder (cudbound/search/compile_notice.py). Tested by construction, with a stand-in kernel
and a second holder of the lock: no timing."""
import threading

import numpy as np
import pytest
from filelock import FileLock, Timeout

from cudbound.search import compile_notice


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


@pytest.fixture
def lock_path(tmp_path, monkeypatch):
    path = tmp_path / compile_notice.LOCK_FILE
    monkeypatch.setattr(compile_notice, "_lock_path", lambda: path)
    monkeypatch.setattr(compile_notice, "_LOADED", set())
    return path


def test_the_first_call_compiles_for_the_arguments_types_under_the_lock(lock_path):
    events = []
    kernel = _Kernel(lock_path, events)
    with compile_notice._compile_once(kernel, (1.0, 2, "x")):
        events.append(("called",))
    assert events == [("compiled", ("float", "int", "str"), "locked"), ("called",)]
    FileLock(str(lock_path)).acquire(timeout=0)      # released afterwards


def test_later_calls_with_arguments_of_the_same_kinds_neither_compile_nor_lock(lock_path):
    events = []
    kernel = _Kernel(lock_path, events)
    with compile_notice._compile_once(kernel, (1.0,)):
        pass
    held = FileLock(str(lock_path))
    held.acquire(timeout=0)                          # another process holds the lock: no matter now
    try:
        with compile_notice._compile_once(kernel, (1.0,)):
            events.append(("called again",))
    finally:
        held.release()
    assert events == [("compiled", ("float",), "locked"), ("called again",)]


def test_a_call_with_arguments_of_new_kinds_compiles_again_under_the_lock(lock_path):
    # a new specialisation of the same kernel (e.g. an argument None for one loss, an array for another)
    events = []
    kernel = _Kernel(lock_path, events)
    for args in [(1.0, None), (2.0, None), (1.0, np.zeros(3)), (1.0, np.zeros(4)), (1.0, np.zeros((2, 2)))]:
        with compile_notice._compile_once(kernel, args):
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

    monkeypatch.setattr(compile_notice, "_say", say)
    monkeypatch.setattr(compile_notice, "_NOTICE_AFTER", 0.05)   # the quiet wait before the notice
    holder = FileLock(str(lock_path))
    holder.acquire(timeout=0)                        # the other process, compiling
    kernel = _Kernel(lock_path, events)
    worker = threading.Thread(target=lambda: compile_notice._compile_once(kernel, (1.0,)).__enter__())
    worker.start()
    assert said.wait(60)                             # it waits (and says so) before compiling
    assert events == [] and "waiting for another process" in messages[0]
    events.append(("released",))
    holder.release()
    worker.join(60)
    assert events[0] == ("released",) and events[1][:2] == ("compiled", ("float",))


def test_no_writable_cache_folder_means_no_lock(monkeypatch):
    monkeypatch.setattr(compile_notice, "_lock_path", lambda: None)
    monkeypatch.setattr(compile_notice, "_LOADED", set())
    calls = []

    class Plain:                                     # e.g. NUMBA_DISABLE_JIT: a plain function
        signatures = []

    with compile_notice._compile_once(Plain(), (1,)):
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
            other = FileLock(str(compile_notice._lock_path()))
            try:
                other.acquire(timeout=0)
                other.release()
                held.append(False)
            except Timeout:
                held.append(True)

    monkeypatch.setattr(compile_notice, "_LOADED", set())
    for name in ("_search", "_replicate"):
        with compile_notice._compile_once(Kernel(name), (1.0,)):
            pass
    assert held == [True, True] and compile_notice._lock_path().parent.name.startswith("search")
