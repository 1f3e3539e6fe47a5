"""Where numba keeps cudbound's compiled kernels, keyed by the content of their sources.

**Outside the installed package.** numba caches an ``@njit(cache=True)`` function next to its
source (``__pycache__``) when that folder is writable. For an installed package that is
``site-packages/cudbound/``: the files outlive ``pip uninstall`` (a folder of cache files left
there is then imported as an empty namespace package that hides a later editable install), and a
read-only or shared installation cannot be written at all. :func:`install` puts a locator in
front of numba's own that sends the kernels of cudbound's files to

- ``$NUMBA_CACHE_DIR`` if set, else ``$CUDBOUND_CACHE_DIR`` if set, else the platform's user
  cache directory for "cudbound" (``platformdirs.user_cache_dir``: ``~/.cache/cudbound`` on
  Linux) under ``numba/``;
- one folder per kernel group and version of its sources, ``GROUP-KEY`` (:func:`kernel_dir`);
- a folder that cannot be created or written is skipped: numba then tries its own locations.

It runs when :mod:`cudbound` is imported, before any kernel is defined (numba picks a function's
cache location when it is decorated).

**Keyed by content, never stale.** A group is the set of files whose kernels call each other:
the search (``search/``: the loop in ``core.py`` inlines the QP of ``node_qp.py``), the SVM
dual's solvers (``optim/svm_dual/``: the decremental path calls a step of the active-set file,
which calls the gradient of the SMO file), both with the Gaussian elimination of
``optim/linear_solve.py`` that they inline (:data:`SHARED_SOURCES`); every other kernel file is
a group of its own (:data:`STANDALONE_SOURCES`, and ``linear_solve.py``'s own kernels). KEY is
the SHA-256 (:func:`digest`) of numba's version and of the names and contents of the group's
files, and it is also the source stamp numba checks in each kernel's cache index (numba's own
stamp is the time stamp, or in recent versions the hash, of the kernel's own file only). So an
edit to any file of a group, or another numba, gives new kernels, while two copies of the same
sources (an editable checkout, an installed copy, a second checkout) share one folder and
compile once. numba keys the rest itself: the Python version (in the file names) and the CPU
(in the index). When a group's folder is first created, the folders of its other versions
beyond the :data:`KEEP` most recently used, and unused for a day, are removed.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import time
from pathlib import Path

__all__ = ["install", "cache_root", "kernel_dir", "digest", "group_of", "KERNEL_SOURCES", "SVM_DUAL_SOURCES",
           "SHARED_SOURCES", "STANDALONE_SOURCES", "KEEP"]

PACKAGE = Path(__file__).resolve().parent
SEARCH = PACKAGE / "search"
SVM_DUAL = PACKAGE / "optim" / "svm_dual"
ENV = "CUDBOUND_CACHE_DIR"
KERNEL_SOURCES = ("bounds.py", "branching.py", "codes.py", "context.py", "core.py", "frontier.py", "heap.py",
                  "hinge_qp_node_solver.py", "lp_node_solver.py", "node_pool.py", "node_qp.py", "node_solve.py",
                  "probes.py", "records.py", "realisability.py", "replicate_setup.py", "smooth_node_solver.py")
"""The files of ``cudbound/search`` with ``@njit(cache=True)`` functions, ``records.py``, whose
numba type (a structref) the kernels hold their records in, and ``codes.py``, whose integers the
kernels fold in as constants (the loop of each solver kind is cached under its kind's value)."""
SVM_DUAL_SOURCES = ("active_set_solver.py", "decremental.py", "kkt.py", "smo_solver.py")
"""The files of ``cudbound/optim/svm_dual`` with ``@njit(cache=True)`` functions."""
SHARED_SOURCES = ("optim/linear_solve.py",)
"""Kernel files (relative to the package) whose functions the kernels of both folders call:
part of both groups' keys."""
STANDALONE_SOURCES = ("pca_parts.py", "optim/squared_parts.py")
"""Kernel files (relative to the package) whose kernels call no kernel of another file: each is
keyed by its own content alone."""
KEEP = 4
"""Folders of a group's other versions kept (the most recently used), whatever their age."""
_UNUSED = 86400.0  # seconds: a folder used within this time is never removed


def cache_root() -> Path:
    """``$CUDBOUND_CACHE_DIR``, else the platform's per-user cache directory for cudbound."""
    env = os.environ.get(ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("cudbound", appauthor=False))


def _root() -> Path:
    from numba.core import config

    if config.CACHE_DIR:        # NUMBA_CACHE_DIR: numba's own cache directory
        return Path(config.CACHE_DIR)
    return cache_root() / "numba"


def group_of(py_file: Path, package: Path = PACKAGE) -> tuple[str, tuple[str, ...]]:
    """(name, files): the group of the kernel file ``py_file`` of ``package`` and the files
    (relative to ``package``) its key is taken over. ValueError for a file outside ``package``."""
    rel = Path(py_file).resolve().relative_to(Path(package).resolve()).as_posix()
    folder, _, _ = rel.rpartition("/")
    if folder == "search":
        name, files = "search", tuple(f"search/{s}" for s in KERNEL_SOURCES) + SHARED_SOURCES
    elif folder == "optim/svm_dual":
        name, files = "svm_dual", tuple(f"optim/svm_dual/{s}" for s in SVM_DUAL_SOURCES) + SHARED_SOURCES
    else:
        name, files = Path(rel).stem, ()
    return name, files if rel in files else files + (rel,)   # an unlisted file: its own content too


def digest(files: tuple[str, ...], package: Path = PACKAGE) -> str:
    """SHA-256 of numba's version and of the ``files`` of ``package`` (names relative to it, and
    contents, in the order given)."""
    import numba

    h = hashlib.sha256(f"numba {numba.__version__}\n".encode())
    for name in files:
        text = (Path(package) / name).read_bytes()
        h.update(f"{name} {len(text)}\n".encode() + text)
    return h.hexdigest()


def _folder(name: str, key: str) -> Path:
    return _root() / f"{name}-{key[:16]}"


def kernel_dir(py_file: Path = SEARCH / "core.py", package: Path = PACKAGE) -> Path:
    """The folder numba caches the kernels of the file ``py_file`` of ``package`` in."""
    name, files = group_of(py_file, package)
    return _folder(name, digest(files, package))


def _first_use(folder: Path, name: str) -> None:
    """Create ``folder`` or mark it used (its time stamp); when it is new, remove the group's
    folders of other versions beyond the :data:`KEEP` most recently used and unused for a day
    (best effort: another process may be removing them too)."""
    if folder.is_dir():
        with contextlib.suppress(OSError):
            os.utime(folder)
        return
    folder.mkdir(parents=True, exist_ok=True)
    pattern = re.compile(re.escape(name) + r"-[0-9a-f]{16}")
    with contextlib.suppress(OSError):
        others = sorted(((p.stat().st_mtime, p) for p in folder.parent.iterdir()
                         if p != folder and pattern.fullmatch(p.name) and p.is_dir()), reverse=True)
        now = time.time()
        for used, path in others[KEEP:]:
            if now - used > _UNUSED:
                shutil.rmtree(path, ignore_errors=True)


_LOCATOR = None


def install() -> None:
    """Put the locator in front of numba's (once per process)."""
    global _LOCATOR
    from numba.core import caching

    if _LOCATOR is not None:
        return
    located: dict[tuple[str, ...], tuple[str, str]] = {}    # a group's files -> (cache folder, key), once per process

    class CudboundCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """The kernels of cudbound's own files, in :func:`kernel_dir` of their group, stamped with its key."""

        def __init__(self, py_func, py_file, files):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path, self._stamp = located[files]

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            return self._stamp

        @classmethod
        def from_function(cls, py_func, py_file):
            try:
                name, files = group_of(py_file)
            except (ValueError, OSError):
                return None     # numba's own locators for other packages' kernels
            try:
                if files not in located:
                    key = digest(files)
                    _first_use(_folder(name, key), name)
                    located[files] = (str(_folder(name, key)), key)
                self = cls(py_func, py_file, files)
                self.ensure_cache_path()
            except OSError:
                return None     # no writable folder: numba's own locations
            return self

    caching.CacheImpl._locator_classes.insert(0, CudboundCacheLocator)
    _LOCATOR = CudboundCacheLocator
