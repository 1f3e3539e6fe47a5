"""Names of the package quoted in its docstrings and in docs/ resolve (issue 30: ten references
to the old ``convex.`` module outlived its move to ``optim.smooth``).

A reference is a dotted name in double backticks or a Sphinx role whose first part is
``cudbound`` or one of its modules (``optim.smooth.polish_smooth``, ``search.core``, ...): it
must import and its attributes must exist. A module's former names (renamed or removed, from
the git history) must not be quoted at all.
"""
import importlib
import pkgutil
import re
from pathlib import Path

import cudbound

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(cudbound.__file__).resolve().parent
TOPS = {m.name for m in pkgutil.iter_modules([str(PACKAGE)])}
# modules that were renamed or removed (git log --diff-filter=DR -- cudbound), and the short name
# the old smooth-loss module went by
FORMER = ("search.convex", "convex", "search.qp", "search.kernel_cache", "coverage.lifeline", "baselines.intervals")
REF = re.compile(r"``~?((?:cudbound\.)?[a-z_][a-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)+)(?:\(\))?``"
                 r"|:(?:func|class|mod|meth|attr|data|exc):`~?([\w.]+)`")


def _sources():
    return sorted(PACKAGE.rglob("*.py")) + sorted((ROOT / "docs").glob("*.md"))


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_quoted_names_of_the_package_resolve():
    checked, broken = 0, []
    for path in _sources():
        for m in REF.finditer(path.read_text(encoding="utf-8")):
            name = m.group(1) or m.group(2)
            first = name.split(".")[0]
            if first != "cudbound" and (first not in TOPS or "." not in name):
                continue
            full = name if first == "cudbound" else f"cudbound.{name}"
            checked += 1
            if not _resolves(full):
                broken.append(f"{path.relative_to(ROOT)}: {name}")
    assert checked > 100, checked          # the pattern still finds the references
    assert not broken, broken


def test_former_module_names_are_not_quoted():
    pattern = re.compile(r"(?<![\w.])(?:cudbound\.)?(" + "|".join(re.escape(f) for f in FORMER) + r")\.[a-z_]")
    found = [f"{path.relative_to(ROOT)}: {m.group(0)}" for path in _sources()
             for m in pattern.finditer(path.read_text(encoding="utf-8"))]
    assert not found, found


def test_papers_are_cited_not_paths_outside_the_repository():
    """A paper is cited by its authors, year and title (each page's References), never by a path
    to a copy outside the repository (``../shared/seeds/003``) or by the name of that copy."""
    pattern = re.compile(r"shared/seeds|\bseeds?[ /]0\d\d\b")
    found = [f"{path.relative_to(ROOT)}: {m.group(0)}" for path in [*_sources(), ROOT / "README.md"]
             for m in pattern.finditer(path.read_text(encoding="utf-8"))]
    assert not found, found
