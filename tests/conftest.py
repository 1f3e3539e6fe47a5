import os
import sys

# One BLAS thread per test process, set before NumPy loads OpenBLAS (the workers of a parallel run
# and the commands the tests run inherit it; a value already set is kept). The suite's matrices are
# tiny and -n auto already runs a worker on every core: OpenBLAS's own threads then only contend for
# the cores and spin while they wait (tests/test_refit.py on 2 workers: 67 s of CPU with two
# threads per process, 37 s with one).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# The slow references and helpers (tests/_support/) are importable by name whatever the import mode.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_support"))

import numpy as np  # noqa: E402
import pytest  # noqa: E402

# The scripts that made the fixtures are not tests, and some import their reference
# implementations (mlxtend), which the test extra does not install: --doctest-modules skips them.
collect_ignore_glob = ["fixtures/*.py"]


def pytest_configure(config):
    """One copy of cudbound for the whole run, its kernels compiled once.

    - ``python -m pytest`` in a checkout imports the checkout's ``cudbound`` (the current directory
      comes first on ``sys.path``, and the doctests are collected from ``cudbound/``), while the
      commands the tests run (``python -m cudbound ...`` in a temporary directory) would import
      the installed copy, which may be another version of the sources (numba's kernels are cached per
      version of the sources, ``cudbound._kernel_cache``). The checkout is put first on ``PYTHONPATH``
      for those commands, so that the suite tests one source. A test that runs another copy sets its own ``PYTHONPATH``.
    - Before the workers of a parallel run (pytest-xdist) start, the kernels are compiled once, in
      two lanes side by side, a process per group of kernels (tests/_support/warm_kernels.py): on a
      cold cache each worker, and each command a test runs, would otherwise wait for or compile them
      in turn. Seconds when the cache is warm; CUDBOUND_TEST_NO_WARMUP=1 skips it. A failure here is
      not the tests' concern: they compile what they need themselves.
    """
    import subprocess
    import time
    from pathlib import Path

    if hasattr(config, "workerinput"):
        return                                   # a worker: the controller did both
    root = Path(__file__).resolve().parent.parent
    import cudbound

    if Path(cudbound.__file__).resolve().parent == root / "cudbound":
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    if os.environ.get("CUDBOUND_TEST_NO_WARMUP") or not config.getoption("numprocesses", None) \
            or config.getoption("collectonly", False):
        return
    from warm_kernels import PROCESSES

    script = os.path.join(os.path.dirname(__file__), "_support", "warm_kernels.py")
    import threading

    start = time.perf_counter()
    notice = threading.Timer(5.0, lambda: sys.stderr.write(
        "cudbound tests: compiling the numba kernels before the workers start (first run only) ...\n"))
    notice.daemon = True
    notice.start()
    # each lane in a session of its own: on a timeout its whole process group (the lane and the
    # group it is compiling) is killed
    procs = [subprocess.Popen([sys.executable, script, *groups], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True) for groups in PROCESSES]
    codes = []
    for p in procs:
        try:
            codes.append(p.wait(timeout=1800))
        except subprocess.TimeoutExpired:           # the tests will compile what they need themselves
            import signal

            os.killpg(p.pid, signal.SIGKILL)
            codes.append(p.wait())
    notice.cancel()
    seconds = time.perf_counter() - start
    if seconds > 10 or any(codes):
        sys.stderr.write(f"cudbound tests: numba kernels compiled or loaded in {seconds:.0f} s "
                         f"(exit codes {codes}) before the workers started\n")


@pytest.fixture(scope="session")
def xy01():
    """30 points in two features, labels in {0, 1} from a noisy linear rule (seed 0).

    Read-only: the arrays are shared by every test that asks for them."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + rng.normal(size=30) > 0, 1, 0)
    X.flags.writeable = False
    y.flags.writeable = False
    return X, y


@pytest.fixture
def shared_data():
    """The directory of the raw UCI files (``CUDBOUND_DATA``; CI sets it to ../shared/data/uci)."""
    path = os.environ.get("CUDBOUND_DATA", "")
    if not path or not os.path.isfile(os.path.join(path, "MANIFEST.tsv")) and not os.path.isfile(
            os.path.join(path, "bupa.data")):
        pytest.skip("real UCI files not available: set CUDBOUND_DATA to the directory with the raw files")
    return path
