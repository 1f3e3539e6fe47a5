"""The import graph of ``cudbound``: no cycle, and every import points down the data flow.

Imports inside functions count too (a cycle hidden in a function is still two modules that
cannot be read one after the other). The layers, lowest first, follow the data flow
data -> basis -> fit -> resample -> search -> interval (``docs/architecture.md``): a module
may import from its own layer (inside a subpackage) or from a lower one, never from a
higher one."""
import ast
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


def import_graph() -> nx.DiGraph:
    """module -> module it imports (absolute or relative, at any depth of the file)."""
    graph = nx.DiGraph()
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _module_name(path)
        graph.add_node(name)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
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
    ("_validation", "_docstrings", "_kernel_cache", "_warnings", "_deprecation", "_registry", "ties"),  # the tie rule, checks, docstring blocks, numba's cache location, warnings at the user's line, renamed names, the registry class and named streams
    ("datasets",),                         # data
    ("basis",),                            # phi(x)
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
    ("cud",), ("baselines", "auc", "svm", "compare"),  # the intervals, the other estimators, comparisons
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
