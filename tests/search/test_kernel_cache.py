"""The kernel cache is cleared when any kernel source changes (numba checks only the caller's file)."""
import shutil

from cudbound.search import kernel_cache


def _copy(tmp_path):
    for name in kernel_cache.KERNEL_SOURCES:
        shutil.copy(kernel_cache.HERE / name, tmp_path / name)
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    return cache


def test_an_edit_to_any_kernel_source_clears_the_cached_kernels(tmp_path):
    cache = _copy(tmp_path)
    (cache / "core._search-1.py311.nbi").write_text("index")
    (cache / "core._search-1.py311.1.nbc").write_text("code")
    (cache / "compiled.cpython-311.pyc").write_text("bytecode")
    assert kernel_cache.check(tmp_path) is True            # no digest yet: cleared, digest written
    assert sorted(p.name for p in cache.iterdir()) == ["compiled.cpython-311.pyc", kernel_cache.DIGEST_FILE]
    (cache / "core._search-1.py311.nbi").write_text("index")
    assert kernel_cache.check(tmp_path) is False           # sources unchanged: the cache stays
    assert (cache / "core._search-1.py311.nbi").exists()
    with open(tmp_path / "compiled.py", "a") as fh:        # an edit to another file than core.py
        fh.write("\n# edited\n")
    assert kernel_cache.check(tmp_path) is True
    assert not (cache / "core._search-1.py311.nbi").exists()


def test_the_installed_package_is_checked_on_import():
    stamp = kernel_cache.HERE / "__pycache__" / kernel_cache.DIGEST_FILE
    assert not stamp.exists() or stamp.read_text().strip() == kernel_cache.digest()


def test_every_kernel_source_of_the_search_is_listed():
    """A file of cudbound/search with a cached numba kernel that is missing from the list would
    be inlined into the search loop and loaded stale after an edit (hinge_qp_node_solver.py
    was missing until issue 28's second session)."""
    kernels = {p.name for p in kernel_cache.HERE.glob("*.py") if "\n@njit(cache=True" in p.read_text()}
    assert kernels == set(kernel_cache.KERNEL_SOURCES)
