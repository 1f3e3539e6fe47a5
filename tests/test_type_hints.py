"""Type hints on every public signature, and a type checker over the public modules.

Public: every function in the ``__all__`` of the modules below, and every public method (name not
starting with ``_``, plus ``__init__``) of every class in those lists. Each must annotate every
parameter but ``self``/``cls``, and its return type (``__init__`` excepted). The internal modules
(``search``, ``optim``, ``engine``, ``cli``, ...) are left out, here and in the mypy configuration
(``[tool.mypy]`` in ``pyproject.toml``).
"""
from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PUBLIC_MODULES = (
    "cudbound",
    "cudbound.cud",
    "cudbound.registry",
    "cudbound.statistics",
    "cudbound.refit",
    "cudbound.baselines",
    "cudbound.baselines.estimators",
    "cudbound.baselines.holdout",
    "cudbound.baselines.methods",
    "cudbound.baselines.modern",
    "cudbound.auc",
    "cudbound.auc.scores",
    "cudbound.auc.cv",
    "cudbound.auc.result",
    "cudbound.auc.intervals",
    "cudbound.auc.cvauc",
    "cudbound.auc.registry",
    "cudbound.svm",
    "cudbound.datasets",
    "cudbound.datasets.base",
    "cudbound.datasets.null_simulated",
    "cudbound.datasets.paper_simulated",
    "cudbound.datasets.registry",
    "cudbound.datasets.simulated",
    "cudbound.datasets.uci",
    "cudbound.basis",
    "cudbound.losses",
    "cudbound.results",
    "cudbound.plotting",
    "cudbound.fit",
    "cudbound.coverage",
    "cudbound.coverage.check",
    "cudbound.coverage.chunks",
    "cudbound.coverage.config",
    "cudbound.coverage.runner",
    "cudbound.coverage.store",
    "cudbound.coverage.tasks",
    "cudbound.coverage.auc_config",
    "cudbound.coverage.auc_tasks",
    "cudbound.sklearn_bridge",
    "cudbound.resampling",
    "cudbound.design",
)


def public_callables() -> list[tuple[str, object]]:
    """(qualified name, function) of every public callable of PUBLIC_MODULES, each once."""
    seen: set[int] = set()
    out = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name, None)
            if obj is None or id(obj) in seen:
                continue
            seen.add(id(obj))
            if inspect.isfunction(obj):
                out.append((f"{obj.__module__}.{name}", obj))
            elif inspect.isclass(obj):
                out.extend((f"{obj.__module__}.{name}.{k}", v) for k, v in vars(obj).items()
                           if inspect.isfunction(v) and (not k.startswith("_") or k == "__init__"))
    return out


def missing_annotations(func) -> list[str]:
    """The parameters of ``func`` without an annotation, and "return" when its return type is missing."""
    sig = inspect.signature(func)
    missing = [n for n, p in sig.parameters.items()
               if n not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
    if sig.return_annotation is inspect.Signature.empty and func.__name__ != "__init__":
        missing.append("return")
    return missing


def test_the_walk_sees_the_public_api():
    names = {name for name, _ in public_callables()}
    assert {"cudbound.cud.cud_interval", "cudbound.registry.intervals", "cudbound.losses.Loss.value",
            "cudbound.basis.Basis.fit", "cudbound.coverage.store.ResultStore.__init__",
            "cudbound.datasets.base.Simulator.sample", "cudbound.baselines.methods.bs1"} <= names
    assert not any(".search." in n or ".engine." in n or ".cli." in n for n in names)


def test_the_check_would_see_a_missing_annotation():
    def f(x: int, y, *, z=1) -> int:
        return x

    def g(x: int):
        return x

    assert missing_annotations(f) == ["y", "z"]
    assert missing_annotations(g) == ["return"]


def test_every_public_signature_is_annotated():
    bad = {name: missing for name, func in public_callables() if (missing := missing_annotations(func))}
    assert bad == {}, "\n".join(f"{name}: {missing}" for name, missing in sorted(bad.items()))


# slow (mypy over the public modules): the README's command keeps the annotation of every public signature
# (test_every_public_signature_is_annotated) and mypy's list of the public modules (test_the_mypy_configuration_...)
@pytest.mark.slow
def test_mypy_passes_on_the_public_modules(request, tmp_path):
    """mypy with the configuration of pyproject.toml ([tool.mypy]: its ``files`` are the public modules).
    Its cache is kept in pytest's cache directory (not in the checkout), when there is one."""
    pytest.importorskip("mypy")
    pytest_cache = getattr(request.config, "cache", None)    # None with -p no:cacheprovider
    cache = pytest_cache.mkdir("mypy") if pytest_cache is not None else tmp_path
    run = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                          "--cache-dir", str(cache)],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_mypy_configuration_lists_the_public_modules():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    files = set(config["files"])
    for module_name in PUBLIC_MODULES:
        path = Path(*module_name.split("."))
        expected = (path / "__init__.py") if (ROOT / path).is_dir() else path.with_suffix(".py")
        assert expected.as_posix() in files, f"{module_name} is not in [tool.mypy] files"
    assert not any(f.startswith(("cudbound/search", "cudbound/optim", "cudbound/cli/")) or f == "cudbound/engine.py"
                   for f in files)
