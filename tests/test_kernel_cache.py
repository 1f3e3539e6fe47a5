"""numba's cache of cudbound's kernels: outside the installed package (issue 29: a cache written
into site-packages/cudbound outlived `pip uninstall` and then hid an editable install as an empty
namespace package; a read-only installation could not be written), and keyed by the content of the
kernel sources (issue 44): two copies of the same sources share their kernels, and an edit to any
file whose kernels a group inlines, or another numba, gives a new folder (numba checks only the
caller's file); and compiled once: a second process of the same work compiles nothing (no kernel has a
default that numba would key differently in every process)."""
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cudbound import _kernel_cache as kc

KERNEL_FILES = sorted(str(p.relative_to(kc.PACKAGE)) for p in kc.PACKAGE.rglob("*.py")
                      if "\n@njit(cache=True" in p.read_text())


def _copy(root):
    package = root / "cudbound"
    shutil.copytree(kc.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    return package


def _folders(package):
    """{kernel file: its cache folder} for a copy of the package."""
    return {name: kc.kernel_dir(package / name, package) for name in KERNEL_FILES}


def _edit(path):
    with open(path, "a") as fh:
        fh.write("\n# edited\n")


@pytest.fixture
def two_copies(tmp_path, monkeypatch):
    monkeypatch.setenv(kc.ENV, str(tmp_path / "cache"))
    monkeypatch.setattr("numba.core.config.CACHE_DIR", "")
    first, second = _copy(tmp_path / "a"), _copy(tmp_path / "b")
    old = time.time() - 7 * 86400                     # the second copy's files are a week older
    for p in second.rglob("*.py"):
        os.utime(p, (old, old))
    return first, second


def test_two_copies_of_the_package_share_every_kernel_folder(two_copies):
    first, second = two_copies
    one, two = _folders(first), _folders(second)
    assert one == two and len(KERNEL_FILES) >= 19
    assert {p.parent for p in one.values()} == {kc.cache_root() / "numba"}
    assert len(set(one.values())) == 5                # search, svm_dual, linear_solve, pca_parts, squared_parts
    assert one == _folders(kc.PACKAGE)                # and the imported copy's


@pytest.mark.parametrize("edited", [*(f"search/{s}" for s in kc.KERNEL_SOURCES),
                                    *(f"optim/svm_dual/{s}" for s in kc.SVM_DUAL_SOURCES),
                                    *kc.SHARED_SOURCES, *kc.STANDALONE_SOURCES])
def test_an_edit_to_a_kernel_source_moves_every_group_that_reads_it(two_copies, edited):
    """An edit to node_qp.py moves core.py's kernels too (the loop inlines the QP); an edit to the
    shared Gaussian elimination moves both folders' kernels and its own; nothing else moves."""
    first, second = two_copies
    before = _folders(first)
    _edit(second / edited)
    after = _folders(second)
    moved = {name for name in KERNEL_FILES if after[name] != before[name]}
    readers = {name for name in KERNEL_FILES if edited in kc.group_of(first / name, first)[1]}
    # records.py holds the search's numba type; the search's kernels fold codes.py's integers in
    assert edited in readers or edited in ("search/records.py", "search/codes.py")
    assert moved == readers and moved


def test_another_numba_moves_every_folder(two_copies, monkeypatch):
    import numba

    first, _ = two_copies
    before = _folders(first)
    monkeypatch.setattr(numba, "__version__", numba.__version__ + ".post1")
    after = _folders(first)
    assert all(after[name] != before[name] for name in KERNEL_FILES)


def test_numba_cache_dir_is_the_root_when_set(two_copies, monkeypatch, tmp_path):
    first, _ = two_copies
    monkeypatch.setattr("numba.core.config.CACHE_DIR", str(tmp_path / "numba"))
    assert kc.kernel_dir(first / "search" / "core.py", first).parent == tmp_path / "numba"


def test_a_file_outside_the_package_has_no_group(tmp_path):
    (tmp_path / "mine.py").write_text("x = 1\n")
    with pytest.raises(ValueError):
        kc.group_of(tmp_path / "mine.py")


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
    constants = {"codes.py"}        # the kernels fold its integers in (the loop of each kind is cached by its value)
    assert kernels | types | constants == set(kc.KERNEL_SOURCES)


def test_every_other_kernel_file_is_listed_and_imports_no_other_kernel():
    """A kernel file outside the two folders is shared (the one Gaussian elimination, which both
    inline) or standalone; either is keyed by its own content, so it must call no kernel of another
    file: it imports nothing from the package."""
    others = {name for name in KERNEL_FILES if not name.startswith(("search/", "optim/svm_dual/"))}
    assert others == set(kc.SHARED_SOURCES) | set(kc.STANDALONE_SOURCES)
    for name in others:
        text = (kc.PACKAGE / name).read_text()
        assert "from ." not in text and "import cudbound" not in text and "from cudbound" not in text, name
        assert kc.group_of(kc.PACKAGE / name)[1] == (name,)


def test_a_new_groups_folder_removes_old_versions_no_one_used_for_a_day(tmp_path):
    day = 86400.0
    now = time.time()

    def folder(name, age):
        path = tmp_path / name
        path.mkdir()
        os.utime(path, (now - age, now - age))
        return path

    old = [folder(f"search-{i:016x}", 2 * day + i) for i in range(kc.KEEP + 2)]   # old[0] the most recent
    recent = folder("search-" + "f" * 16, 0.5 * day)                             # used today: kept
    others = [folder("svm_dual-" + "0" * 16, 9 * day), folder("search_" + "0" * 40, 9 * day),
              folder("search-notahash", 9 * day)]
    kc._first_use(tmp_path / ("search-" + "e" * 16), "search")
    assert (tmp_path / ("search-" + "e" * 16)).is_dir() and recent.is_dir()
    assert [p.is_dir() for p in old] == [True] * (kc.KEEP - 1) + [False] * 3   # the recent one is among the KEEP
    assert all(p.is_dir() for p in others)              # another group, numba's naming, not a key
    kc._first_use(recent, "search")                     # a folder in use: marked, nothing removed
    assert recent.stat().st_mtime >= now - 1 and old[0].is_dir()


def test_kernels_are_cached_outside_the_package_and_stamped_with_their_key():
    """Every cached kernel of the package is located in its group's folder of the per-user cache,
    not beside its source, and numba's index checks the group's key, not the file's own stamp."""
    from cudbound import pca_parts
    from cudbound.optim import linear_solve, squared_parts, svm_dual
    from cudbound.optim.svm_dual import active_set_solver, decremental, kkt, smo_solver
    from cudbound.search import bounds, core, node_pool, node_qp

    checked = 0
    for module in (bounds, core, node_pool, node_qp, svm_dual, active_set_solver, decremental, kkt, smo_solver,
                   linear_solve, pca_parts, squared_parts):
        for obj in vars(module).values():
            cache = getattr(obj, "_cache", None)
            path = getattr(cache, "_cache_path", None)
            if path is None or type(cache).__name__ == "NullCache":
                continue
            source = Path(obj.py_func.__code__.co_filename)
            assert not Path(path).resolve().is_relative_to(kc.PACKAGE), (obj, path)
            assert Path(path) == kc.kernel_dir(source), (obj, path)
            assert cache._impl.locator.get_source_stamp() == kc.digest(kc.group_of(source)[1])
            checked += 1
    assert checked >= 12


SCRIPT = textwrap.dedent("""
    import cudbound
    from cudbound.search import bounds
    # a small cached kernel: compiled (or loaded) and run
    assert bounds._flip_d(1.0, 4.0, 0.0) == 0.25
    stats = bounds._flip_d.stats
    print(cudbound.__file__)
    print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
""")


def _run(env_extra, cwd):
    env = dict(os.environ, **env_extra)
    return subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=600)


def _package_files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.suffix in (".nbi", ".nbc"))


def _cache_files(root):
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.suffix in (".nbi", ".nbc")}


def test_a_second_copy_loads_the_kernels_the_first_compiled_and_an_edit_compiles_anew(two_copies, tmp_path):
    """Two copies of the package (the second's files a week older) in one cache: the second loads
    the kernel the first compiled, writing nothing; a third copy with an edit to a file the kernel's
    group inlines (node_qp.py, not the kernel's own bounds.py) compiles it again, in another folder."""
    first, second = two_copies
    env = {"CUDBOUND_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_CACHE_DIR": ""}
    out = _run({**env, "PYTHONPATH": str(first.parent)}, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == str(first / "__init__.py") and out.stdout.split()[1:] == ["0", "1"]
    written = _cache_files(tmp_path / "cache")
    assert written and all(re.fullmatch(r"numba/search-[0-9a-f]{16}/bounds\._flip_d-\d+\.py\d+\.(nbi|1\.nbc)", f)
                           for f in written)
    out = _run({**env, "PYTHONPATH": str(second.parent)}, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == str(second / "__init__.py") and out.stdout.split()[1:] == ["1", "0"]
    assert _cache_files(tmp_path / "cache") == written                    # loaded, nothing written
    _edit(second / "search" / "node_qp.py")
    out = _run({**env, "PYTHONPATH": str(second.parent)}, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[1:] == ["0", "1"]                           # compiled again
    now = _cache_files(tmp_path / "cache")
    assert {f: now[f] for f in written} == written and len(now) == 2 * len(written)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through read-only permissions")
def test_a_read_only_installation_runs(tmp_path):
    """A copy of the package with every folder read-only: kernels compile and run, nothing is
    written inside it, and they land in CUDBOUND_CACHE_DIR."""
    site = tmp_path / "site"
    _copy(site)
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
    inside the package; CUDBOUND_CACHE_DIR holds the kernels."""
    site = tmp_path / "site"
    _copy(site)
    out = _run({"PYTHONPATH": str(site), "CUDBOUND_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_CACHE_DIR": ""},
               tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == str(site / "cudbound" / "__init__.py")
    assert _package_files(site / "cudbound") == []
    assert list((tmp_path / "cache").rglob("*.nbi"))


def test_numba_cache_dir_is_honoured(tmp_path):
    site = tmp_path / "site"
    _copy(site)
    out = _run({"PYTHONPATH": str(site), "CUDBOUND_CACHE_DIR": str(tmp_path / "mine"),
                "NUMBA_CACHE_DIR": str(tmp_path / "numba")}, tmp_path)
    assert out.returncode == 0, out.stderr
    assert _package_files(site / "cudbound") == []
    assert [p.parent.parent for p in (tmp_path / "numba").rglob("*.nbi")] == [tmp_path / "numba"]
    assert not (tmp_path / "mine").exists()


def _kernels():
    """Every numba kernel of the package (each dispatcher once)."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    import cudbound

    seen = {}
    for info in pkgutil.walk_packages(cudbound.__path__, "cudbound."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:   # an optional extra that is not installed
            continue
        for value in vars(module).values():
            for obj in (value.values() if isinstance(value, dict) else (value,)):   # SEARCH_FOR_KIND and the like
                if isinstance(obj, CPUDispatcher) and obj.py_func.__module__.startswith("cudbound"):
                    seen[id(obj)] = obj
    return list(seen.values())


def _stable(value):
    """Whether numba's key of an omitted argument with this default is the same in every process: None,
    a bool, int or str, a float that equals itself (not NaN), or a tuple of these."""
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return value == value
    return isinstance(value, tuple) and all(_stable(v) for v in value)


def test_no_kernel_has_a_default_that_numba_would_key_by_its_object():
    """A kernel called with an argument left out is typed with numba's ``Omitted(default)``, which is
    keyed by the default when it is hashable and else by ``id(default)``: an array default gives a new
    cache key in every process, and so does a NaN (never equal to the NaN read back from the cache's
    index). Such a kernel is compiled again in every process and its index grows by one entry each
    time (found on ``smooth_node_solver._sqp``: 8-23 s a process with the logistic loss, 33
    entries in one cache folder; ``bounds._bound``: 14). No kernel may have such a default."""
    import inspect

    import numpy as np

    kernels = _kernels()
    assert len(kernels) > 100
    unstable = [(kernel.py_func.__qualname__, p.name) for kernel in kernels
                for p in inspect.signature(kernel.py_func).parameters.values()
                if p.default is not inspect.Parameter.empty and not _stable(p.default)]
    assert unstable == []
    assert not _stable(np.zeros(0)) and not _stable(float("nan")) and _stable((1, -np.inf, None))


SMOOTH_SCRIPT = textwrap.dedent("""
    import numpy as np
    from cudbound.losses import get_loss
    from cudbound.search.smooth_node_solver import SmoothNodeSolver, _sqp_compiled
    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(12), rng.normal(size=(12, 2))])
    y = np.where(X[:, 1] + rng.normal(size=12) > 0, 1.0, -1.0)
    solver = SmoothNodeSolver(get_loss("logistic"), X, y)
    solver.set_weights(np.ones(12))
    solver.solve(np.array([0, 1]), np.array([1, -1]), None)
    print(sum(_sqp_compiled.stats.cache_hits.values()), sum(_sqp_compiled.stats.cache_misses.values()))
""")


@pytest.mark.slow
def test_a_second_process_loads_the_smooth_solver_the_first_compiled(tmp_path):
    """The smooth node solver's SQP, run from Python as the search's set-up runs it, in two processes
    on one fresh cache: the first compiles it, the second loads it and writes nothing (it used to
    compile it again in every process: an omitted array default in its signature)."""
    env = dict(os.environ, CUDBOUND_CACHE_DIR=str(tmp_path / "cache"), NUMBA_CACHE_DIR="")
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", SMOOTH_SCRIPT], capture_output=True, text=True, env=env,
                             cwd=tmp_path, timeout=900)
        assert out.returncode == 0, out.stderr
        runs.append((out.stdout.split()[-2:], _cache_files(tmp_path / "cache")))
    (first, written), (second, now) = runs
    assert first == ["0", "1"] and second == ["1", "0"]
    assert now == written


WORKLOAD_SCRIPT = textwrap.dedent("""
    import numpy as np
    from numba.core import event

    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            pass

        def on_end(self, ev):
            name = getattr(ev.data["dispatcher"].py_func, "__module__", "") or ""
            if name.startswith("cudbound"):
                compiled.append(ev.data["dispatcher"].py_func.__qualname__)

    event.register("numba:compile", Listener())
    import cudbound
    from cudbound.compare import cud_difference_interval
    from cudbound.datasets import LinearGaussian
    from cudbound.search.smooth_node_solver import _sqp_compiled

    X, y = LinearGaussian(n_features=2, flip_probability=0.2).sample(100, 0)
    for loss in ("squared", "logistic", "exponential", "hinge", "hinge_ridge:0.01"):
        cudbound.cud_interval(X, y, procedure=cudbound.Procedure(loss=loss), n_resamples=20, rng=0, progress=False)
    cud_difference_interval(cudbound.Procedure(loss="logistic"), cudbound.Procedure(basis="poly:2", loss="squared"),
                            X[:40], y[:40], n_resamples=20, rng=0)
    print("calls", len(_sqp_compiled.stats.cache_hits) + len(_sqp_compiled.stats.cache_misses), len(compiled))
    print("compiled", " ".join(sorted(set(compiled))) or "-")
""")


@pytest.mark.slow
def test_a_second_process_of_the_same_work_compiles_no_kernel(tmp_path):
    """CUD intervals of every built-in loss family and a difference, in two processes on one kernel
    cache (a private copy of this package's folders of the user's cache, so that no other test's
    process writes to it meanwhile): whatever the first compiles, the second compiles nothing (numba's
    compile events of cudbound's kernels), the smooth solver's call from Python included (it compiled
    in every process until its signature's defaults were removed)."""
    cache = tmp_path / "cache"
    for folder in {kc.kernel_dir(kc.PACKAGE / name) for name in KERNEL_FILES}:
        if folder.is_dir():
            shutil.copytree(folder, cache / folder.relative_to(kc.cache_root()))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", CUDBOUND_CACHE_DIR=str(cache), NUMBA_CACHE_DIR="")
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", WORKLOAD_SCRIPT], capture_output=True, text=True, cwd=tmp_path,
                             env=env, timeout=3000)
        assert out.returncode == 0, out.stderr
        lines = {line.split()[0]: line.split()[1:] for line in out.stdout.splitlines() if line.split()}
        runs.append(lines)
    python_calls, compiles = runs[1]["calls"]
    assert int(python_calls) >= 1                  # the smooth solver was called from Python
    assert compiles == "0", runs[1]["compiled"]
