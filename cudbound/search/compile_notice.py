"""The one-line notice printed while numba compiles a kernel for the first time."""
from __future__ import annotations

import contextlib
import sys
import threading

__all__: list[str] = []

_LOADED: set = set()  # kernels known to be compiled or loaded in this process
_NOTICE_AFTER = 2.0  # seconds: loading the cached kernel takes less


@contextlib.contextmanager
def _first_compile_notice(kernel):
    """Say on stderr what is happening when the first call compiles the kernel (numba; the
    result is cached on disk, so later runs load it in well under a second)."""
    if kernel in _LOADED:
        yield
        return
    if kernel.signatures:  # costly for long signatures: asked once per kernel
        _LOADED.add(kernel)
        yield
        return
    timer = threading.Timer(_NOTICE_AFTER, lambda: print(
        "cudbound: compiling the branch-and-bound kernel with numba (first run only; cached for later runs, "
        "a few minutes) ...", file=sys.stderr, flush=True))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()

