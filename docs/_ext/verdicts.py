"""The "Which interval should I use?" page's table, built from the coverage study's own table.

``results/study2/tables.md`` (made by ``paper_figures/rebuild_all.py`` from the stored results)
has, per n and method, the number of cells (data sets) whose exact 95% interval of the coverage
lies above, straddles or lies below the target. :func:`verdict_table` reads that section and
sorts the methods into three verdicts, so the page never retypes a number:

- keeps its promise at every n: no cell below at any n;
- at some sizes: no cell below at some n but not at all;
- does not keep it: cells below at every n.

Run by ``docs/conf.py`` at every build (it writes ``docs/_generated/verdicts.md``, which the page
includes); ``tests/test_docs_site.py`` checks the page against the table.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLES = ROOT / "results" / "study2" / "tables.md"
RECORD = ROOT / "results" / "study2" / "shared_basis" / "tables.md"
"""The run under the earlier refit rule, read while the rerun under today's rule is incomplete."""
SECTION = "### Per method: cells whose coverage interval lies above, straddles or lies below the target"

NAMES = {  # the study's abbreviations: the registry's names
    "CUD": "cud", "BS1": "bs1", "BS2": "bs2", "K": "kohavi", "Y": "yang", "M": "martin", "L": "langford",
    "WCV": "wald_cv", "CT": "corrected_t", "CZ": "conservative_z", "NCV": "nested_cv", "BCCV": "bccv",
    "D632": "e632_delta",
}
VERDICTS = ("keeps its promise at every n", "keeps it at some n only", "does not keep it")


def read_counts(path: Path | None = None) -> dict:
    """{method: {n: (above, straddles, below, mean width)}} from the per-method section (default: the
    table of :func:`source`)."""
    text = (source()[0] if path is None else path).read_text(encoding="utf-8")
    start = text.index(SECTION)
    counts: dict = {}
    for line in text[start:].splitlines()[1:]:
        if line.startswith("### "):
            break
        m = re.match(r"^\| (\d+) \| (\w+) \| (\d+) \| (\d+) \| (\d+) \| ([\d.]+) \|", line)
        if m:
            n, method = int(m.group(1)), m.group(2)
            counts.setdefault(method, {})[n] = (int(m.group(3)), int(m.group(4)), int(m.group(5)),
                                                float(m.group(6)))
    if not counts:
        raise ValueError(f"no per-method rows under {SECTION!r} in {path}")
    return counts


def source() -> tuple[Path, str]:
    """The table the page is built from: the study's, once every cell of it is complete, else the
    record of the earlier refit rule (``results/study2/shared_basis/tables.md``), and a sentence
    saying which."""
    text = TABLES.read_text(encoding="utf-8") if TABLES.exists() else ""
    m = re.search(r"Complete cells only: (\d+) of the (\d+)", text)
    if m and m.group(1) == m.group(2):
        return TABLES, "Source: `results/study2/tables.md` (every refit refits the whole procedure)."
    return RECORD, ("Source: `results/study2/shared_basis/tables.md`, the run under the earlier refit rule (the "
                    "principal components fitted once per training set and reused by every refit); the rerun "
                    "under today's rule is in progress (`results/study2/README.md`). CUD's rows are the same "
                    "under both rules.")


def verdict(per_n: dict) -> str:
    below = [per_n[n][2] for n in sorted(per_n)]
    if all(b == 0 for b in below):
        return VERDICTS[0]
    if any(b == 0 for b in below):
        return VERDICTS[1]
    return VERDICTS[2]


def verdict_table(path: Path | None = None) -> str:
    """The Markdown table of the page: one row per method, its verdict and, per n, the cells
    below the target and the mean width, in the order of the verdicts."""
    counts = read_counts(source()[0] if path is None else path)
    sizes = sorted({n for per_n in counts.values() for n in per_n})
    head = "| method | verdict | " + " | ".join(f"n = {n}: cells below / mean width" for n in sizes) + " |"
    rows = [head, "|" + "---|" * (2 + len(sizes))]
    order = {v: i for i, v in enumerate(VERDICTS)}
    for method, per_n in sorted(counts.items(), key=lambda kv: (order[verdict(kv[1])], list(counts).index(kv[0]))):
        cells = " | ".join(f"{per_n[n][2]} of {sum(per_n[n][:3])} / {per_n[n][3]:.3f}" if n in per_n else "-"
                           for n in sizes)
        rows.append(f"| {method} (`{NAMES.get(method, method)}`) | {verdict(per_n)} | {cells} |")
    return "\n".join(rows) + "\n"


def write(out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    text = source()[1] + "\n\n" + verdict_table()
    if not out.exists() or out.read_text(encoding="utf-8") != text:
        out.write_text(text, encoding="utf-8")
