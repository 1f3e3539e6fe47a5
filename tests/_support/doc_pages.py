"""The Python examples of the documentation pages, read and run the one way every test does.

A page's examples are its fenced ```python blocks (indented ones too, as inside a list item),
in order; ``marker`` keeps only the blocks that follow an HTML comment naming the test that
runs them. :func:`run_page` executes them in one namespace, as a reader would paste them.
"""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

_BLOCK = re.compile(r"^(?P<indent>[ ]*)```python\n(?P<body>.*?)^(?P=indent)```", flags=re.S | re.M)


def python_blocks(page: str, *, marker: str | None = None) -> list[str]:
    """The ```python blocks of ``docs/<page>`` (dedented); after ``marker`` only, if given."""
    text = (DOCS / page).read_text(encoding="utf-8")
    if marker is not None:
        return [textwrap.dedent(m.group("body")) for m in _BLOCK.finditer(text)
                if text[:m.start()].rstrip().endswith(marker)]
    return [textwrap.dedent(m.group("body")) for m in _BLOCK.finditer(text)]


def run_page(page: str, *, marker: str | None = None) -> tuple[int, dict]:
    """Run the page's blocks in order in one namespace: (number of blocks, the namespace)."""
    blocks = python_blocks(page, marker=marker)
    namespace: dict = {"__name__": f"docs_{Path(page).stem}"}
    for block in blocks:
        exec(compile(block, str(DOCS / page), "exec"), namespace)  # noqa: S102 - our own docs
    return len(blocks), namespace


def example_class(page: str, marker: str, name: str):
    """The class ``name`` defined by the first block after ``marker`` on ``page``."""
    namespace: dict = {}
    exec(compile(python_blocks(page, marker=marker)[0], str(DOCS / page), "exec"), namespace)  # noqa: S102
    return namespace[name]
