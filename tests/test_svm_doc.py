"""docs/svm.md: its examples run, in order, in one namespace, and their assertions hold."""
import re
from pathlib import Path


DOC = Path(__file__).resolve().parents[1] / "docs" / "svm.md"


def test_the_examples_of_the_svm_page_run():
    text = DOC.read_text(encoding="utf-8")
    blocks = [re.sub(r"^  ", "", b, flags=re.M) if b.startswith("  ") else b
              for b in re.findall(r"```python\n(.*?)```", re.sub(r"^  ```", "```", text, flags=re.M), flags=re.S)]
    assert len(blocks) == 4
    namespace = {"__name__": "svm_doc"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
