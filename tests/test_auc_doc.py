"""docs/auc.md: its examples run, in order, in one namespace, and their assertions hold."""
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "auc.md"


def test_the_examples_of_the_auc_page_run():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 5
    namespace = {"__name__": "auc_doc"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
