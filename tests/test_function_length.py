"""No function of the package is over 120 lines unless its docstring says why.

A function's length counts its lines from ``def`` to the end of its body, docstring included
(decorators not). One over :data:`MAX_LINES` must say why in its docstring, in a sentence that
starts with :data:`MARKER` (``CONTRIBUTING.md``, "Conventions"): e.g. a compiled kernel, "Long
because it is one compiled loop whose parts share its local state."
"""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "cudbound"

MAX_LINES = 120

MARKER = "Long because"


def long_functions(source: str, where: str = "<source>") -> list[str]:
    """``where:line name (N lines)`` of every function of ``source`` over :data:`MAX_LINES` lines
    whose docstring does not contain :data:`MARKER` (nested functions and methods included)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_LINES and MARKER not in (ast.get_docstring(node) or ""):
                found.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    return found


def _function(lines: int, doc: str) -> str:
    """Source of a function of exactly ``lines`` lines (``def``, the docstring line, the body)."""
    body = "\n".join(f"    x{i} = {i}" for i in range(lines - 2))
    return f"def f():\n    {doc!r}\n{body}\n"


def test_the_rule_counts_from_def_to_the_end_of_the_body():
    assert long_functions(_function(MAX_LINES, "Short.")) == []
    assert long_functions(_function(MAX_LINES + 1, "Short.")) == ["<source>:1 f (121 lines)"]
    assert long_functions(_function(MAX_LINES + 1, f"Kernel. {MARKER} it is one loop.")) == []
    nested = "class C:\n" + textwrap.indent(_function(MAX_LINES + 1, "Short."), "    ")
    assert long_functions(nested) == ["<source>:2 f (121 lines)"]


def test_no_function_is_over_the_limit_without_saying_why():
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 50    # the walk sees the package
    offenders = [hit for path in files
                 for hit in long_functions(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE.parent)))]
    assert not offenders, (f"functions over {MAX_LINES} lines whose docstring does not say why "
                           f"('{MARKER} ...'): split them, or say why: {offenders}")
