"""docs/method.md is in the repository and has every section the code and the docs cite by name."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "method.md"


def _headings():
    return {h.strip() for h in re.findall(r"^#+ (.+)$", DOC.read_text(encoding="utf-8"), flags=re.M)}


def _citations():
    """(file, section) for every 'method.md ... section "X"' or 'method.md`` ("X")' in the sources."""
    out = []
    for path in list((ROOT / "cudbound").rglob("*.py")) + list((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]:
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"method\.md`*,? (?:section )?\(?\"([^\"]+)\"", text):
            out.append((path.relative_to(ROOT).as_posix(), m.group(1)))
    return out


def test_every_cited_section_exists():
    cited = _citations()
    assert cited, "the search for citations found none: the pattern is broken"
    headings = _headings()
    missing = [(f, s) for f, s in cited if not any(h == s or h.startswith(s) for h in headings)]
    assert missing == []


def test_the_method_page_covers_the_method():
    headings = _headings()
    for needed in ("The CUD bound and the confidence set", "The search for Q^(b)",
                   "Baselines, as this project defines them", "The coverage study", "References"):
        assert needed in headings
