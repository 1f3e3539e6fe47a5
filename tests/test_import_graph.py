"""The import graph of ``cudbound``: no cycle, and every import points down the data flow.

Imports inside functions count too (a cycle hidden in a function is still two modules that
cannot be read one after the other). The layers, lowest first, follow the data flow
data -> basis -> fit -> resample -> search -> interval (``docs/architecture.md``): a module
may import from its own layer (inside a subpackage) or from a lower one, never from a
higher one.

Private names stay in their subpackage: a module imports an underscore name (``from m import _x``,
or ``m._x`` of a module it imported) only from a module of its own subpackage (``cudbound/auc/*``
from ``cudbound/auc/*``; the top-level modules ``cudbound/*.py`` are one subpackage, the package
root). A name another subpackage needs is public API of its module (in its ``__all__``). The
package-wide helper modules whose own name starts with an underscore (``cudbound/_validation.py``,
``_registry.py``, ...) exist to be shared: every module may import them and their public names,
and none may import their underscore names (not even a top-level module)."""
import ast
import functools
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parents[1] / "cudbound"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_module(name: str) -> bool:
    base = PACKAGE.parent / name.replace(".", "/")
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def _imported_from(node: ast.ImportFrom, package: str) -> str:
    """The absolute name of the module ``from ... import`` reads, in a module of ``package``."""
    if node.level:
        base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))
    return node.module or ""


@functools.lru_cache
def _modules(package_dir: Path) -> tuple:
    """(path, syntax tree) of every module under ``package_dir``, parsed once for the tests of this
    file (the trees are only read)."""
    return tuple((path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(package_dir.rglob("*.py")))


def import_graph() -> nx.DiGraph:
    """module -> module it imports (absolute or relative, at any depth of the file); a copy the
    caller may change."""
    return _import_graph(PACKAGE).copy()


@functools.lru_cache
def _import_graph(package_dir: Path) -> nx.DiGraph:
    graph = nx.DiGraph()
    for path, tree in _modules(package_dir):
        name = _module_name(path)
        graph.add_node(name)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _imported_from(node, package)
                if not target.startswith("cudbound"):
                    continue
                for alias in node.names:  # "from pkg import submodule" imports the submodule
                    sub = f"{target}.{alias.name}"
                    graph.add_edge(name, sub if _is_module(sub) else target)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("cudbound"):
                        graph.add_edge(name, alias.name)
    return graph


LAYERS = (
    ("_validation", "_docstrings", "_kernel_cache", "_kernel_compile", "_warnings", "_deprecation", "_registry", "_budget", "_replicate_progress", "ties"),  # the tie rule, checks, docstring blocks, numba's cache location and compiles, warnings at the user's line, renamed names, the registry class and named streams, the time budget, the replicates' progress bar
    ("datasets",),                         # data
    ("basis", "pca_parts"),                # phi(x); the compiled kernel of a PCA basis refitted on many parts
    ("losses",),                           # surrogate losses (swappable)
    ("sklearn_bridge",),                   # scikit-learn classifiers as a basis and a loss
    ("design",),                           # rank check, orthonormal coordinates
    ("optim",),                            # convex solvers (swappable)
    ("fit",),                              # beta-hat
    ("refit",),                            # every refit on part of the data: the whole procedure
    ("resampling",),                       # bootstrap counts, folds
    ("search",),                           # branch and bound for one replicate
    ("engine",), ("lifeline", "workers"), ("quantile",),  # replicates: solvers, processes, the order statistic
    ("results", "plotting"),               # result objects and their pictures
    ("statistics",),                       # critical values, p-values, Wilson, bootstrap intervals
    ("cud", "cud_difference"), ("baselines", "auc", "svm", "compare"),  # the intervals, the other estimators, comparisons
    ("registry",),                         # the registry of interval methods
    ("coverage",),                         # the study
    ("output", "cli", "__main__", ""),     # the user's entry points and their JSON layout ("" is the package)
)


def layer_of(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    raise AssertionError(f"module {module} is in no layer: add it to LAYERS (and to docs/architecture.md)")


def backwards_edges(graph) -> list:
    return sorted((u, v) for u, v in graph.edges if layer_of(u) < layer_of(v))


def test_every_module_has_a_layer():
    for module in import_graph():
        layer_of(module)


def test_imports_point_down_the_data_flow():
    assert backwards_edges(import_graph()) == []


def test_the_layer_check_would_see_a_backwards_import():
    graph = import_graph()
    graph.add_edge("cudbound.fit", "cudbound.search.core")
    assert backwards_edges(graph) == [("cudbound.fit", "cudbound.search.core")]


def test_the_graph_is_read_from_every_module():
    graph = import_graph()
    assert {"cudbound.search.core", "cudbound.search.bnb", "cudbound.coverage.config", "cudbound.cud"} <= set(graph)
    assert graph.has_edge("cudbound.search.bnb", "cudbound.search.core")
    assert graph.has_edge("cudbound.coverage.tasks", "cudbound.coverage.config")


def test_no_import_cycle():
    graph = import_graph()
    graph.remove_edges_from([(u, v) for u, v in graph.edges if u == v])
    cycles = [c for c in nx.simple_cycles(graph)]
    assert cycles == [], cycles


def test_the_cycle_check_would_see_a_cycle():
    graph = import_graph()
    graph.add_edge("cudbound.search.core", "cudbound.search.bnb")
    assert any(set(c) == {"cudbound.search.core", "cudbound.search.bnb"} for c in nx.simple_cycles(graph))


def _subpackage(module: str) -> str:
    """``cudbound.auc`` for ``cudbound.auc.scores`` (and for ``cudbound.auc`` itself); ``cudbound``
    for a top-level module (the package root is one subpackage)."""
    parts = module.split(".")
    if len(parts) >= 2 and (PACKAGE / parts[1]).is_dir():
        return ".".join(parts[:2])
    return "cudbound"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _shared_helper(module: str) -> bool:
    """A package-wide private helper module (``cudbound._validation``, ...): shared by all, its
    underscore names by none."""
    return _subpackage(module) == "cudbound" and _private(module.rpartition(".")[2])


def _crosses(importer: str, module: str, name: str) -> bool:
    return _private(name) and importer != module and (
        _subpackage(importer) != _subpackage(module) or _shared_helper(module))


def private_imports() -> list[tuple[str, str, str]]:
    """(importer, module, name) of every underscore name a module takes from another subpackage
    (or from a shared helper module): ``from module import _name`` at any depth of the file, and
    ``alias._name`` of a module imported as ``alias``."""
    found = set()
    for path, tree in _modules(PACKAGE):
        name = _module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        modules = {}     # local name -> the cudbound module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _imported_from(node, package)
                if not target.startswith("cudbound"):
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if _is_module(sub):
                        modules[alias.asname or alias.name] = sub
                    elif _crosses(name, target, alias.name):
                        found.add((name, target, alias.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("cudbound") and alias.asname:
                        modules[alias.asname] = alias.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
                if _crosses(name, modules[node.value.id], node.attr):
                    found.add((name, modules[node.value.id], node.attr))
    return sorted(found)


def test_private_names_stay_in_their_subpackage():
    crossing = [f"{u} imports {m}.{n}" for u, m, n in private_imports()]
    assert not crossing, "underscore names imported across subpackages:\n" + "\n".join(crossing)


def test_the_private_check_sees_each_form(tmp_path, monkeypatch):
    assert _subpackage("cudbound.auc.scores") == _subpackage("cudbound.auc") == "cudbound.auc"
    assert _subpackage("cudbound.design") == _subpackage("cudbound._validation") == "cudbound"
    package = tmp_path / "cudbound"
    (package / "auc").mkdir(parents=True)
    (package / "coverage").mkdir()
    for init in ("__init__.py", "auc/__init__.py", "coverage/__init__.py"):
        (package / init).write_text("")
    (package / "auc" / "scores.py").write_text("def _auc(): pass\n")
    (package / "auc" / "cv.py").write_text("from .scores import _auc\n")                 # same subpackage
    (package / "_validation.py").write_text("def check(): pass\ndef _hidden(): pass\n")
    (package / "fit.py").write_text("def _solve(): pass\n")
    (package / "design.py").write_text("from ._validation import check, _hidden\nfrom .fit import _solve\n")
    (package / "coverage" / "tasks.py").write_text(
        "from ..auc.scores import _auc\nfrom .. import _validation\nfrom ..auc import scores as s\n"
        "def f():\n    from ..fit import _solve\n    return _validation.check(), _validation._hidden(), s._auc()\n")
    monkeypatch.setitem(globals(), "PACKAGE", package)
    assert private_imports() == [("cudbound.coverage.tasks", "cudbound._validation", "_hidden"),
                                 ("cudbound.coverage.tasks", "cudbound.auc.scores", "_auc"),
                                 ("cudbound.coverage.tasks", "cudbound.fit", "_solve"),
                                 ("cudbound.design", "cudbound._validation", "_hidden")]
