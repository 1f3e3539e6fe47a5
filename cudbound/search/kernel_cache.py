"""Numba's on-disk cache of the compiled kernels, kept consistent with their sources.

numba caches each ``@njit(cache=True)`` function in ``__pycache__`` and checks only the
time stamp of the function's own file. A kernel that inlines functions of another file
(the search loop in ``core.py`` calls the QP of ``compiled.py``) is therefore loaded stale
after that other file changes: in an editable install, an edit to ``compiled.py`` would not
reach ``core._search``. :func:`check` keeps a SHA-256 digest of every kernel source next
to the cache and clears the cached kernels of this package when the digest changes. It
runs once, when :mod:`cudbound.search` is imported, before any kernel is loaded; it costs
one read of five files.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["check", "KERNEL_SOURCES"]

HERE = Path(__file__).resolve().parent
KERNEL_SOURCES = ("compiled.py", "core.py", "hinge_qp_node_solver.py", "lp_node_solver.py", "realisability.py",
                  "smooth_node_solver.py")
"""The files of this package with ``@njit(cache=True)`` functions."""
DIGEST_FILE = "cudbound_kernels.sha256"


def digest(folder: Path = HERE) -> str:
    h = hashlib.sha256()
    for name in KERNEL_SOURCES:
        h.update(name.encode())
        h.update((folder / name).read_bytes())
    return h.hexdigest()


def check(folder: Path = HERE) -> bool:
    """Clear the cached kernels of ``folder`` if its kernel sources changed since they were cached.

    Returns True when the cache was cleared. Does nothing (returns False) when the cache
    folder cannot be written: numba then keeps its cache elsewhere, in a fresh location per
    installation.
    """
    cache = folder / "__pycache__"
    stamp = cache / DIGEST_FILE
    now = digest(folder)
    try:
        if stamp.read_text(encoding="ascii").strip() == now:
            return False
    except OSError:
        pass
    try:
        cache.mkdir(exist_ok=True)
        cleared = False
        for entry in cache.iterdir():
            if entry.suffix in (".nbi", ".nbc"):
                entry.unlink(missing_ok=True)
                cleared = True
        stamp.write_text(now + "\n", encoding="ascii")
        return cleared
    except OSError:
        return False
