"""Watching child processes in tests (Linux: read from /proc), and starting a command as a
terminal would, so that Ctrl-C (SIGINT) reaches it."""
from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

LINUX = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the workers through /proc (Linux)")


def _stat(pid):
    """(state, parent pid) of a process from /proc, or None when it does not exist."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1])


def children(pid) -> list:
    """The live child processes of ``pid``."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            st = _stat(entry.name)
            if st is not None and st[1] == pid and st[0] not in "ZX":
                out.append(int(entry.name))
    return out


def running(pid) -> bool:
    """Whether the process exists and is not a zombie (a dead child its new parent has not reaped)."""
    st = _stat(pid)
    return st is not None and st[0] not in "ZX"


def wait_for(condition, timeout, step=0.05):
    """Poll ``condition()`` until it is true or ``timeout`` seconds have passed; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    return condition()


def sigint_as_in_a_terminal():
    """A ``preexec_fn``: a run started from a terminal receives Ctrl-C; one started by a background
    job of a non-interactive shell (as CI may run the suite) inherits SIGINT ignored, and Python
    keeps it so."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
