"""Installing, reinstalling and uninstalling in any order leaves a working package (issue 29).

Before the kernels were cached outside the package, `pip install .`, a run, then
`pip install -e ".[docs]"` broke the package: numba's cache in `site-packages/cudbound/`
outlived the uninstall that pip does before an editable install, and that folder, imported as an
empty namespace package, hid the editable install (`cudbound --version`: ImportError).

This test builds a fresh virtual environment and runs the sequence
`pip install .` -> a compiled kernel -> `pip install -e .` -> `pip uninstall` -> `pip install .`,
checking after each step that `cudbound --version` works, that `import cudbound` is the right
copy and that nothing but pip's own files is left in site-packages. It installs the dependencies
from the package registry, so it takes minutes: it runs when CUDBOUND_INSTALL_TEST=1 (``.ci/run``
sets it after the suite).
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("CUDBOUND_INSTALL_TEST") != "1",
                                reason="slow (installs into a fresh virtual environment): set CUDBOUND_INSTALL_TEST=1")

REPO = Path(__file__).resolve().parents[1]
KERNEL = ("import cudbound; from cudbound.search import bounds; "
          "assert bounds._flip_d(1.0, 4.0, 0.0) == 0.25; print(cudbound.__file__)")


def _sh(args, **kw):
    out = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=1800, **kw)
    assert out.returncode == 0, f"{args}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


def test_install_editable_uninstall_reinstall(tmp_path):
    venv = tmp_path / "venv"
    _sh([sys.executable, "-m", "venv", venv])
    py, cli = venv / "bin" / "python", venv / "bin" / "cudbound"
    pip = [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input"]
    env = dict(os.environ, CUDBOUND_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("PYTHONPATH", None)               # tests/conftest.py puts the checkout there; here the installed copy runs
    site = Path(_sh([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())
    outside = dict(env=env, cwd=tmp_path)     # not the checkout: `import cudbound` must find the installed copy

    _sh([*pip, REPO], **outside)                                       # 1. pip install .
    assert _sh([py, "-c", KERNEL], **outside).strip() == str(site / "cudbound" / "__init__.py")
    assert not [p for p in (site / "cudbound").rglob("*") if p.suffix in (".nbi", ".nbc", ".sha256")]
    assert list((tmp_path / "cache").rglob("*.nbi"))                    # the kernel was cached, outside
    _sh([cli, "--version"], **outside)

    _sh([*pip, "-e", REPO], **outside)                                 # 2. pip install -e . over it
    assert not (site / "cudbound").exists()                            # nothing left to hide the checkout
    assert _sh([py, "-c", KERNEL], **outside).strip() == str(REPO / "cudbound" / "__init__.py")
    assert _sh([cli, "--version"], **outside).strip()

    _sh([py, "-m", "pip", "uninstall", "--yes", "--quiet", "cudbound"], **outside)   # 3. uninstall
    assert not (site / "cudbound").exists()
    assert subprocess.run([py, "-c", "import cudbound"], capture_output=True, **outside).returncode != 0

    _sh([*pip, REPO], **outside)                                       # 4. pip install . again
    assert _sh([py, "-c", KERNEL], **outside).strip() == str(site / "cudbound" / "__init__.py")
    _sh([cli, "--version"], **outside)
