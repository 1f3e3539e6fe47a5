"""benchmarks/ stays readable: one page of results (RESULTS.md, the current figures on top and
the history below), the raw results in raw/ named by date and commit, every raw file named on
that page and every raw path the page or benchmarks/README.md gives present
(benchmarks/README.md, "Raw results")."""
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
RAW = BENCH / "raw"
RESULTS = BENCH / "RESULTS.md"
README = BENCH / "README.md"

# YYYY-MM-DD_<commit, 7 to 40 hex digits>_<lower-case words joined by _ or ->.json|md
NAME = re.compile(r"^\d{4}-\d{2}-\d{2}_[0-9a-f]{7,40}_[a-z0-9]+(?:[_-][a-z0-9]+)*\.(?:json|md)$")
# a raw/ path in the text; placeholders (DATE, COMMIT, WHAT, ...) are upper case, real names not
RAW_PATH = re.compile(r"raw/([^\s`'\"()\[\]<>]+?\.(?:json|md))\b")

pytestmark = pytest.mark.skipif(not BENCH.is_dir(), reason="no benchmarks/ folder (not a checkout)")


def _raw_paths(path: Path) -> list[str]:
    names = RAW_PATH.findall(path.read_text(encoding="utf-8"))
    return [n for n in names if not re.search(r"[A-Z]{3,}", n)]


def test_top_level_holds_no_json_and_only_the_two_markdown_files():
    assert sorted(p.name for p in BENCH.glob("*.json")) == []
    assert sorted(p.name for p in BENCH.glob("*.md")) == ["README.md", "RESULTS.md"]


def test_every_raw_file_is_named_by_date_and_commit_and_named_in_results():
    text = RESULTS.read_text(encoding="utf-8")
    files = sorted(p.name for p in RAW.iterdir())
    assert files, "benchmarks/raw/ is empty"
    assert [f for f in files if not NAME.match(f)] == []
    assert [f for f in files if f"raw/{f}" not in text] == []


@pytest.mark.parametrize("doc", [RESULTS, README], ids=lambda p: p.name)
def test_every_raw_path_given_exists(doc):
    paths = _raw_paths(doc)
    if doc is RESULTS:
        assert paths, "RESULTS.md names no raw file"
    assert [p for p in paths if not (RAW / p).is_file()] == []


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_results_table_of_contents_and_links_resolve():
    text = RESULTS.read_text(encoding="utf-8")
    anchors = {_slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}
    links = re.findall(r"\]\(#([^)]+)\)", text)
    assert links, "RESULTS.md has no table of contents"
    assert [a for a in links if a not in anchors] == []
    assert re.search(r"^## Current", text, flags=re.M) and re.search(r"^## History", text, flags=re.M)
    assert text.index("\n## Current") < text.index("\n## History")


def test_the_scripts_default_names_follow_the_layout():
    spec = importlib.util.spec_from_file_location("rawname", BENCH / "rawname.py")
    rawname = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rawname)
    for what, dirty in (("run_vs_bfb2d2b", False), ("issue28", True), ("svm_auc", False)):
        path = Path(rawname.stem(what, "0d59591", dirty, date="2026-11-26", fresh=False) + ".json")
        assert path.parent == RAW
        assert NAME.match(path.name) and rawname.NAME.match(path.name), path.name
    assert rawname.words("run_vs_this checkout") == "run_vs_this_checkout"
