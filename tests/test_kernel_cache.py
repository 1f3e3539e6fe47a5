"""numba's cache of cudbound's kernels: outside the installed package (issue 29: a cache written
into site-packages/cudbound outlived `pip uninstall` and then hid an editable install as an empty
namespace package; a read-only installation could not be written), and cleared when any kernel
source of the search, or of the SVM dual's solvers, changes (numba checks only the caller's file)."""
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cudbound
from cudbound import _kernel_cache as kc


def _copy(tmp_path):
    for name in kc.KERNEL_SOURCES:
        shutil.copy(kc.SEARCH / name, tmp_path / name)
    cache = tmp_path / "cache"
    cache.mkdir()
    return cache


def test_an_edit_to_any_kernel_source_clears_the_cached_kernels(tmp_path):
    cache = _copy(tmp_path)
    (cache / "core._search-1.py311.nbi").write_text("index")
    (cache / "core._search-1.py311.1.nbc").write_text("code")
    (cache / "other.txt").write_text("kept")
    assert kc.check(tmp_path, cache) is True            # no digest yet: cleared, digest written
    assert sorted(p.name for p in cache.iterdir()) == sorted([kc.DIGEST_FILE, kc.LOCK_FILE, "other.txt"])
    (cache / "core._search-1.py311.nbi").write_text("index")
    assert kc.check(tmp_path, cache) is False           # sources unchanged: the cache stays
    assert (cache / "core._search-1.py311.nbi").exists()
    with open(tmp_path / "node_qp.py", "a") as fh:      # an edit to another file than core.py
        fh.write("\n# edited\n")
    assert kc.check(tmp_path, cache) is True
    assert not (cache / "core._search-1.py311.nbi").exists()


def test_an_edit_to_any_kernel_source_of_the_svm_dual_clears_its_cached_kernels(tmp_path):
    """The decremental path calls the eigen-step of active_set_solver.py: an edit there must reach it."""
    for name in kc.SVM_DUAL_SOURCES:
        shutil.copy(kc.SVM_DUAL / name, tmp_path / name)
    cache = tmp_path / "cache"
    cache.mkdir()
    assert kc.check(tmp_path, cache, kc.SVM_DUAL_SOURCES) is False     # nothing to clear: the digest is written
    assert (cache / kc.DIGEST_FILE).read_text().strip() == kc.digest(tmp_path, kc.SVM_DUAL_SOURCES)
    (cache / "decremental.decrement-1.py311.nbi").write_text("index")
    assert kc.check(tmp_path, cache, kc.SVM_DUAL_SOURCES) is False     # sources unchanged: the cache stays
    assert (cache / "decremental.decrement-1.py311.nbi").exists()
    with open(tmp_path / "active_set_solver.py", "a") as fh:
        fh.write("\n# edited\n")
    assert kc.check(tmp_path, cache, kc.SVM_DUAL_SOURCES) is True
    assert not (cache / "decremental.decrement-1.py311.nbi").exists()


def test_an_unwritable_cache_is_left_alone(tmp_path):
    _copy(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert kc.check(tmp_path, blocker / "cache") is False


def test_the_package_is_checked_on_import():
    stamp = kc.kernel_dir() / kc.DIGEST_FILE
    assert not stamp.exists() or stamp.read_text().strip() == kc.digest()


def test_the_svm_dual_is_checked_on_import():
    import cudbound.optim.svm_dual  # noqa: F401

    stamp = kc.kernel_dir(kc.SVM_DUAL) / kc.DIGEST_FILE
    assert not stamp.exists() or stamp.read_text().strip() == kc.digest(kc.SVM_DUAL, kc.SVM_DUAL_SOURCES)


def test_every_kernel_source_of_the_svm_dual_is_listed():
    """Its kernels call each other across files (active_set -> gradient, decrement -> _eigen_step)."""
    kernels = {p.name for p in kc.SVM_DUAL.glob("*.py") if "\n@njit(cache=True" in p.read_text()}
    assert kernels == set(kc.SVM_DUAL_SOURCES)


def test_every_kernel_source_of_the_search_is_listed():
    """A file of cudbound/search with a cached numba kernel that is missing from the list would
    be inlined into the search loop and loaded stale after an edit (hinge_qp_node_solver.py
    was missing until issue 28's second session)."""
    kernels = {p.name for p in kc.SEARCH.glob("*.py") if "\n@njit(cache=True" in p.read_text()}
    types = {p.name for p in kc.SEARCH.glob("*.py") if "\n@structref.register" in p.read_text()}
    assert types == {"records.py"}  # the numba type of the loop's records (a change to it changes the kernels)
    assert kernels | types == set(kc.KERNEL_SOURCES)


def test_a_standalone_kernel_file_imports_no_other_kernel():
    """A kernel file kept out of the digests (numba's time stamp of its own file keeps it fresh)
    must call no kernel of another file: it imports nothing from the package."""
    for name in kc.STANDALONE_SOURCES:
        text = (kc.PACKAGE / name).read_text()
        assert "\n@njit(cache=True" in text
        assert "from ." not in text and "import cudbound" not in text and "from cudbound" not in text, name


def test_every_other_kernel_file_is_a_shared_source_of_both_digests(tmp_path):
    """A kernel file outside the two folders (the one Gaussian elimination) is inlined into
    kernels of both: it is listed, and an edit to it changes both folders' digests; a standalone
    kernel file (one that calls no other file's kernel) is listed too."""
    others = {str(p.relative_to(kc.PACKAGE)) for p in kc.PACKAGE.rglob("*.py")
              if "\n@njit(cache=True" in p.read_text() and p.parent not in (kc.SEARCH, kc.SVM_DUAL)}
    assert others == set(kc.SHARED_SOURCES) | set(kc.STANDALONE_SOURCES)
    package = tmp_path / "cudbound"
    shutil.copytree(kc.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    before = (kc.digest(package / "search"), kc.digest(package / "optim" / "svm_dual", kc.SVM_DUAL_SOURCES))
    real = kc.PACKAGE
    try:
        kc.PACKAGE = package
        unchanged = (kc.digest(package / "search"), kc.digest(package / "optim" / "svm_dual", kc.SVM_DUAL_SOURCES))
        with open(package / kc.SHARED_SOURCES[0], "a") as fh:
            fh.write("\n# edited\n")
        after = (kc.digest(package / "search"), kc.digest(package / "optim" / "svm_dual", kc.SVM_DUAL_SOURCES))
    finally:
        kc.PACKAGE = real
    assert unchanged == before
    assert after[0] != before[0] and after[1] != before[1]


def test_kernels_are_cached_outside_the_package():
    """Every cached kernel of the package (search and optim) is located in the per-user cache,
    not beside its source."""
    from cudbound.optim import svm_dual
    from cudbound.optim.svm_dual import active_set_solver, decremental, kkt, smo_solver
    from cudbound.search import bounds, core, node_pool, node_qp

    checked = 0
    for module in (bounds, core, node_pool, node_qp, svm_dual, active_set_solver, decremental, kkt, smo_solver):
        for obj in vars(module).values():
            cache = getattr(obj, "_cache", None)
            path = getattr(cache, "_cache_path", None)
            if path is None or type(cache).__name__ == "NullCache":
                continue
            assert not Path(path).resolve().is_relative_to(kc.PACKAGE), (obj, path)
            assert Path(path).resolve().is_relative_to(kc.kernel_dir(Path(module.__file__).parent).parent)
            checked += 1
    assert checked >= 10


SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import cudbound
    from cudbound.search import bounds
    # a small cached kernel: compiled (or loaded) and run
    assert bounds._flip_d(1.0, 4.0, 0.0) == 0.25
    print(cudbound.__file__)
""")


def _run(env_extra, cwd):
    env = dict(os.environ, **env_extra)
    return subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=600)


def _package_files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.suffix in (".nbi", ".nbc", ".sha256"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through read-only permissions")
def test_a_read_only_installation_runs(tmp_path):
    """A copy of the package with every folder read-only: kernels compile and run, nothing is
    written inside it, and they land in CUDBOUND_CACHE_DIR."""
    site = tmp_path / "site"
    shutil.copytree(kc.PACKAGE, site / "cudbound", ignore=shutil.ignore_patterns("__pycache__"))
    for d in [site / "cudbound", *(p for p in (site / "cudbound").rglob("*") if p.is_dir())]:
        d.chmod(0o555)
    try:
        out = _run({"PYTHONPATH": str(site), "CUDBOUND_CACHE_DIR": str(tmp_path / "cache"),
                    "NUMBA_CACHE_DIR": ""}, tmp_path)
        assert out.returncode == 0, out.stderr
        assert _package_files(site / "cudbound") == []
        assert list((tmp_path / "cache").rglob("*.nbi"))
    finally:
        for d in [site / "cudbound", *(p for p in (site / "cudbound").rglob("*") if p.is_dir())]:
            d.chmod(0o755)


def test_a_copy_of_the_package_writes_nothing_inside_it(tmp_path):
    """As above with a writable copy (numba would use its __pycache__ if allowed): still nothing
    inside the package; CUDBOUND_CACHE_DIR holds the kernels and the digest."""
    site = tmp_path / "site"
    shutil.copytree(kc.PACKAGE, site / "cudbound", ignore=shutil.ignore_patterns("__pycache__"))
    out = _run({"PYTHONPATH": str(site), "CUDBOUND_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_CACHE_DIR": ""},
               tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(site / "cudbound" / "__init__.py")
    assert _package_files(site / "cudbound") == []
    assert list((tmp_path / "cache").rglob("*.nbi"))
    assert list((tmp_path / "cache").rglob(kc.DIGEST_FILE))


def test_numba_cache_dir_is_honoured(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(kc.PACKAGE, site / "cudbound", ignore=shutil.ignore_patterns("__pycache__"))
    out = _run({"PYTHONPATH": str(site), "CUDBOUND_CACHE_DIR": str(tmp_path / "mine"),
                "NUMBA_CACHE_DIR": str(tmp_path / "numba")}, tmp_path)
    assert out.returncode == 0, out.stderr
    assert _package_files(site / "cudbound") == []
    assert list((tmp_path / "numba").rglob("*.nbi"))
    assert not (tmp_path / "mine").exists()
