"""Every namespace exports only its API, and no public signature is a wall of parameters.

- Every module of the package defines ``__all__``; in every public module (the ones the API
  reference documents: ``docs/conf.py``'s ``_public_modules``) each name of ``__all__`` exists and
  is the package's own API: no module, no helper of ``typing``, ``dataclasses``, ``abc`` or
  ``collections``, no object defined outside the package (numpy, scikit-learn).
- No public function or method takes more than 12 parameters: the statistics are keywords, how a
  computation runs is one options object (``cudbound.EngineOptions``). A record's constructor
  (the ``__init__`` a dataclass writes from its fields) is not a parameter list and is not counted.
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import types

import pytest

import cudbound

INTERNAL = ("cudbound.cli", "cudbound.lifeline", "cudbound.workers", "cudbound.output")
"""The modules that serve the package itself (``docs/conf.py``'s INTERNAL)."""

MAX_PARAMETERS = 12

FOREIGN_HELPERS = ("typing", "dataclasses", "abc", "collections", "__future__", "functools", "numbers")


def all_modules() -> list[str]:
    return ["cudbound"] + [info.name for info in pkgutil.walk_packages(cudbound.__path__, "cudbound.")]


def public_modules() -> list[str]:
    """cudbound and every submodule without an underscore part, except the internal ones."""
    return [name for name in all_modules()
            if not any(part.startswith("_") for part in name.split(".")[1:])
            and not any(name == m or name.startswith(m + ".") for m in INTERNAL)]


def test_the_walk_sees_the_package():
    public = public_modules()
    assert {"cudbound", "cudbound.compare", "cudbound.cud", "cudbound.engine", "cudbound.search.core"} <= set(public)
    assert "cudbound.cli.app" in all_modules() and "cudbound.cli.app" not in public


@pytest.mark.parametrize("name", all_modules())
def test_every_module_defines_all(name):
    module = importlib.import_module(name)
    assert isinstance(getattr(module, "__all__", None), list), f"{name} has no __all__ list"


def foreign(obj) -> str | None:
    """Why ``obj`` is not the package's own API (None when it is)."""
    if isinstance(obj, types.ModuleType):
        return "a module"
    obj = getattr(obj, "py_func", obj)      # a compiled kernel: its Python function
    if not (inspect.isclass(obj) or inspect.isroutine(obj) or isinstance(obj, types.GenericAlias)):
        return None                          # a constant (a tuple of names, a number, an instance)
    module = getattr(obj, "__module__", "") or ""
    if module.split(".")[0] in FOREIGN_HELPERS:
        return f"a {module} helper"
    if not module.startswith("cudbound"):
        return f"defined in {module}"
    return None


@pytest.mark.parametrize("name", public_modules())
def test_all_lists_only_the_modules_api(name):
    module = importlib.import_module(name)
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what the module does not have: {missing}"
    bad = {n: why for n in module.__all__ if (why := foreign(getattr(module, n))) is not None}
    assert not bad, f"{name}.__all__ exports what is not its API: {bad}"
    assert len(set(module.__all__)) == len(module.__all__), f"{name}.__all__ lists a name twice"


def test_the_check_would_see_a_helper_or_a_module():
    import numpy as np
    from typing import Any
    assert foreign(np) == "a module" and foreign(Any) is not None and foreign(dataclasses.dataclass) is not None
    assert foreign(np.asarray) == "defined in numpy" and foreign(cudbound.cud_interval) is None
    assert foreign(("auto", "python")) is None


def public_signatures() -> list[tuple[str, object]]:
    """(qualified name, function) of every public function of the public modules and every public
    method (and hand-written ``__init__``) of their public classes, each once."""
    seen: set[int] = set()
    out = []
    for name in public_modules():
        module = importlib.import_module(name)
        for attr in module.__all__:
            obj = getattr(getattr(module, attr), "py_func", getattr(module, attr))
            if id(obj) in seen or foreign(obj) is not None:
                continue
            seen.add(id(obj))
            if inspect.isfunction(obj):
                out.append((f"{obj.__module__}.{attr}", obj))
            elif inspect.isclass(obj):
                record = dataclasses.is_dataclass(obj) or issubclass(obj, tuple)   # a dataclass or NamedTuple
                out.extend((f"{obj.__module__}.{attr}.{k}", v) for k, v in vars(obj).items()
                           if inspect.isfunction(v) and (not k.startswith("_") or (k == "__init__" and not record)))
    return out


def n_parameters(func) -> int:
    return len([p for p in inspect.signature(func).parameters if p not in ("self", "cls")])


def test_the_walk_sees_the_signatures():
    names = dict(public_signatures())
    assert {"cudbound.cud.cud_interval", "cudbound.cud.cud_from_design", "cudbound.search.core.run_search",
            "cudbound.search.bnb.branch_and_bound", "cudbound.search.problem.ReplicateProblem.__init__",
            "cudbound.coverage.runner.run_study"} <= set(names)


def test_no_public_signature_takes_more_than_12_parameters():
    over = {name: n for name, func in public_signatures() if (n := n_parameters(func)) > MAX_PARAMETERS}
    assert not over, f"public functions over {MAX_PARAMETERS} parameters: {over}"
