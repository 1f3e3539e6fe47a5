"""Where numba keeps cudbound's compiled kernels, and the check that keeps them fresh.

**Outside the installed package.** numba caches an ``@njit(cache=True)`` function next to its
source (``__pycache__``) when that folder is writable. For an installed package that is
``site-packages/cudbound/``: the files outlive ``pip uninstall`` (a folder of cache files left
there is then imported as an empty namespace package that hides a later editable install), and a
read-only or shared installation cannot be written at all. :func:`install` puts a locator in
front of numba's own that sends the kernels of cudbound's files to a per-user cache directory:

- ``$CUDBOUND_CACHE_DIR`` if set, else the platform's user cache directory for "cudbound"
  (``platformdirs.user_cache_dir``: ``~/.cache/cudbound`` on Linux), under ``numba/``, one
  folder per source folder (named as numba names them, with a hash of the folder's path, so two
  installations never share kernels);
- ``$NUMBA_CACHE_DIR`` if set is honoured instead (numba's own locator then places them);
- a folder that cannot be created or written is skipped: numba then tries its own locations.

It runs when :mod:`cudbound` is imported, before any kernel is defined (numba picks a function's
cache location when it is decorated).

**Fresh.** numba checks only the time stamp of a kernel's own file. A kernel that inlines
functions of another file (the search loop in ``search/core.py`` calls the QP of
``search/node_qp.py``) is therefore loaded stale after that other file changes: in an
editable install, an edit to ``node_qp.py`` would not reach ``core._search``. The same holds
for the SVM dual's solvers in ``optim/svm_dual`` (the decremental path calls a step of the
active-set file, which calls the gradient of the SMO file), and for the one Gaussian elimination
of ``optim/linear_solve.py`` that both folders call. :func:`check` keeps a SHA-256
digest of every kernel source of one such folder next to their cached kernels and clears
those kernels when the digest changes. It runs once per folder, when :mod:`cudbound.search`
or :mod:`cudbound.optim.svm_dual` is imported, before any kernel is loaded, under a file lock
(two processes starting at once clear and stamp the folder once).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["install", "check", "cache_root", "kernel_dir", "digest", "KERNEL_SOURCES", "SVM_DUAL_SOURCES", "SHARED_SOURCES",
           "STANDALONE_SOURCES"]

PACKAGE = Path(__file__).resolve().parent
SEARCH = PACKAGE / "search"
SVM_DUAL = PACKAGE / "optim" / "svm_dual"
ENV = "CUDBOUND_CACHE_DIR"
KERNEL_SOURCES = ("bounds.py", "branching.py", "context.py", "core.py", "heap.py", "hinge_qp_node_solver.py",
                  "lp_node_solver.py", "node_pool.py", "node_qp.py", "node_solve.py", "records.py",
                  "realisability.py", "replicate_setup.py", "smooth_node_solver.py")
"""The files of ``cudbound/search`` with ``@njit(cache=True)`` functions, and ``records.py``, whose
numba type (a structref) the kernels hold their records in."""
SVM_DUAL_SOURCES = ("active_set_solver.py", "decremental.py", "kkt.py", "smo_solver.py")
"""The files of ``cudbound/optim/svm_dual`` with ``@njit(cache=True)`` functions."""
SHARED_SOURCES = ("optim/linear_solve.py",)
"""Kernel files (relative to the package) whose functions the kernels of both folders call:
part of every folder's digest, so that an edit to them clears both."""
STANDALONE_SOURCES = ("pca_parts.py",)
"""Kernel files (relative to the package) whose kernels call no kernel of another file: numba's own
check of their file's time stamp keeps them fresh, so they are part of no digest."""
DIGEST_FILE = "cudbound_kernels.sha256"
LOCK_FILE = "cudbound_kernels.lock"


def cache_root() -> Path:
    """``$CUDBOUND_CACHE_DIR``, else the platform's per-user cache directory for cudbound."""
    env = os.environ.get(ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("cudbound", appauthor=False))


def _subpath(source_dir: Path) -> str:
    from numba.core.caching import _CacheLocator

    # numba's own naming (the folder's name and a hash of its path), from any file in it
    return _CacheLocator.get_suitable_cache_subpath(str(Path(source_dir) / "_"))


def kernel_dir(source_dir: Path = SEARCH) -> Path:
    """The folder numba caches the kernels of the files in ``source_dir`` in."""
    from numba.core import config

    if config.CACHE_DIR:        # NUMBA_CACHE_DIR: numba's own locator, same naming
        return Path(config.CACHE_DIR) / _subpath(source_dir)
    return cache_root() / "numba" / _subpath(source_dir)


def _inside_package(py_file: str) -> bool:
    try:
        Path(py_file).resolve().relative_to(PACKAGE)
    except (ValueError, OSError):
        return False
    return True


_LOCATOR = None


def install() -> None:
    """Put the locator in front of numba's (once per process)."""
    global _LOCATOR
    from numba.core import caching, config

    if _LOCATOR is not None:
        return

    class CudboundCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """The kernels of cudbound's own files, in :func:`kernel_dir` of their folder."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(kernel_dir(Path(py_file).resolve().parent))

        def get_cache_path(self):
            return self._cache_path

        @classmethod
        def from_function(cls, py_func, py_file):
            if config.CACHE_DIR or not _inside_package(py_file):
                return None     # numba's own locators (NUMBA_CACHE_DIR honoured; other packages untouched)
            return super().from_function(py_func, py_file)

    caching.CacheImpl._locator_classes.insert(0, CudboundCacheLocator)
    _LOCATOR = CudboundCacheLocator


def digest(folder: Path = SEARCH, sources: tuple[str, ...] = KERNEL_SOURCES) -> str:
    """SHA-256 of the kernel ``sources`` of ``folder`` (names and contents, in the order given),
    and of the package's :data:`SHARED_SOURCES`."""
    h = hashlib.sha256()
    for name in sources:
        h.update(name.encode())
        h.update((Path(folder) / name).read_bytes())
    for name in SHARED_SOURCES:
        h.update(name.encode())
        h.update((PACKAGE / name).read_bytes())
    return h.hexdigest()


def check(folder: Path = SEARCH, cache: Path | None = None, sources: tuple[str, ...] = KERNEL_SOURCES) -> bool:
    """Clear the cached kernels of ``folder`` if its kernel ``sources`` changed since they were cached.

    ``cache``: the folder of those kernels (default :func:`kernel_dir` of ``folder``). Returns
    True when the cache was cleared. Does nothing (returns False) when the cache folder cannot
    be written: numba then keeps its cache elsewhere.
    """
    from filelock import FileLock, Timeout

    cache = kernel_dir(folder) if cache is None else Path(cache)
    stamp = cache / DIGEST_FILE
    now = digest(folder, sources)
    try:
        if stamp.read_text(encoding="ascii").strip() == now:
            return False
    except OSError:
        pass
    try:
        cache.mkdir(parents=True, exist_ok=True)
        with FileLock(str(cache / LOCK_FILE), timeout=120):
            try:        # another process may have cleared and stamped it while we waited
                if stamp.read_text(encoding="ascii").strip() == now:
                    return False
            except OSError:
                pass
            cleared = False
            for entry in cache.iterdir():
                if entry.suffix in (".nbi", ".nbc"):
                    entry.unlink(missing_ok=True)
                    cleared = True
            stamp.write_text(now + "\n", encoding="ascii")
            return cleared
    except (OSError, Timeout):
        return False
