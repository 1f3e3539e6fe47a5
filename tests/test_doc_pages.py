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
    ("compare.md", RUNNER, 5, None),
    ("losses.md", None, 2, None),
]


@pytest.mark.parametrize("page, marker, count, check", PAGES, ids=[p[0] for p in PAGES])
def test_the_examples_of_the_page_run(page, marker, count, check):
    ran, namespace = run_page(page, marker=marker)
    assert ran == count, f"docs/{page} has {ran} examples; this test expects {count}"
    if check is not None:
        check(namespace)


def _synopsis():
    """docs/guide.md's command synopsis: {command: the flags its lines name} (a command listed on
    several lines, as coverage is, gets the union)."""
    import re

    from doc_pages import DOCS
    text = (DOCS / "guide.md").read_text(encoding="utf-8")
    block = text.split("## Command line", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    entries: list = []
    for line in block.splitlines():
        if line.startswith("cudbound "):
            entries.append(line)
        else:
            entries[-1] += " " + line
    out: dict = {}
    for entry in entries:
        words = entry.split()[1:]
        command = " ".join(words[:2]) if words[0] == "store" else words[0]
        out.setdefault(command, set()).update(re.findall(r"--[A-Za-z][A-Za-z0-9-]*", entry))
    return out


def _parser_flags():
    """Every command of the `cudbound` parser and its flags, deprecated ones and --help left out."""
    import argparse

    from cudbound.cli import build_parser
    from cudbound.cli.shared import RenamedFlag

    def commands(parser, prefix=""):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    if any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
                        yield from commands(sub, f"{prefix}{name} ")
                    else:
                        yield f"{prefix}{name}", {s for a in sub._actions if not isinstance(a, RenamedFlag)
                                                  for s in a.option_strings if s.startswith("--") and s != "--help"}
    return dict(commands(build_parser()))


def test_the_guides_command_synopsis_is_the_parsers():
    """Every command the parser has is in docs/guide.md's synopsis with exactly its flags."""
    synopsis, parser = _synopsis(), _parser_flags()
    assert sorted(synopsis) == sorted(parser)
    for command, flags in parser.items():
        assert synopsis[command] == flags, (command, "missing", sorted(flags - synopsis[command]),
                                            "unknown", sorted(synopsis[command] - flags))
