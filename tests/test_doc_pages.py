"""The documentation pages' Python examples run, in order, in one namespace per page, and the
assertions they carry hold (one runner for every page: tests/_support/doc_pages.py)."""
import pytest
from doc_pages import run_page

RUNNER = "<!-- executed by tests/test_doc_pages.py -->"


def _architecture_after(namespace):
    """The extension examples register a method and a data set inside a block each and remove
    them again: nothing is left in the registries."""
    from cudbound.datasets import dataset_names
    from cudbound.registry import method_names
    assert "wald" not in method_names() and "blobs" not in dataset_names()


# (page, only the blocks after this marker, number of blocks, a check on the namespace afterwards)
PAGES = [
    ("auc.md", None, 9, None),
    ("svm.md", None, 4, None),
    ("architecture.md", RUNNER, 4, _architecture_after),
    ("compare.md", RUNNER, 4, None),
]


@pytest.mark.parametrize("page, marker, count, check", PAGES, ids=[p[0] for p in PAGES])
def test_the_examples_of_the_page_run(page, marker, count, check):
    ran, namespace = run_page(page, marker=marker)
    assert ran == count, f"docs/{page} has {ran} examples; this test expects {count}"
    if check is not None:
        check(namespace)
