"""docs/architecture.md stays true: its module table names every module of the package, and
only modules that exist (a module added, removed or moved must be documented in the same change)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _documented():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    return re.findall(r"^\| `(cudbound/[\w/]+\.py)` \| (.+?) \|$", text, flags=re.M)


def test_every_module_is_in_the_table_and_every_row_is_a_module():
    rows = _documented()
    named = [path for path, _ in rows]
    assert len(named) == len(set(named)), "a module is listed twice"
    actual = {p.relative_to(ROOT).as_posix() for p in (ROOT / "cudbound").rglob("*.py")}
    assert set(named) == actual, {"missing": sorted(actual - set(named)), "not a module": sorted(set(named) - actual)}


def test_every_row_says_what_the_module_does():
    for path, job in _documented():
        assert len(job.split()) >= 3, path
