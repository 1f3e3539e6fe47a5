"""Where the benchmark scripts write their results by default: ``benchmarks/raw/``.

A run's raw results (its JSON, or the Markdown report of a script that keeps no JSON) go into
``benchmarks/raw/`` under ``YYYY-MM-DD_<commit>_<words>.json`` (or ``.md``): the day the run
started, the commit measured ("after" side; this checkout's head unless the script is told
another) and a few words saying what ran. ``benchmarks/RESULTS.md`` is edited by hand, never
written by a script: ``benchmarks/README.md`` says how a new run's table gets there.
"""
from __future__ import annotations

import datetime
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
RAW = os.path.join(HERE, "raw")
RESULTS_MD = os.path.join(HERE, "RESULTS.md")
# the name of a file in raw/ (tests/test_benchmarks_layout.py checks every file against it)
NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})_([0-9a-f]{7,40})_([a-z0-9]+(?:[_-][a-z0-9]+)*)\.(json|md)$")
_HEX = re.compile(r"^[0-9a-fA-F]{7,40}$")


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True, check=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def head_commit() -> str:
    """This checkout's head, abbreviated ('unknown' without git: rename the files before committing them)."""
    return _git("rev-parse", "--short", "HEAD") or "unknown"


def cudbound_dirty() -> bool:
    """Whether ``cudbound/`` of this checkout has uncommitted changes (the code measured is not the commit)."""
    return bool(_git("status", "--porcelain", "--", "cudbound"))


def commit_of(label: str | None) -> str:
    """The commit a version label names: the label itself when it is a hash (7 to 40 hex digits),
    else what git makes of it in this checkout (e.g. 'HEAD'), else this checkout's head (e.g. for
    'this checkout')."""
    if label and _HEX.match(label):
        return label.lower()
    if label:
        resolved = _git("rev-parse", "--short", "--verify", "--quiet", f"{label}^{{commit}}")
        if resolved:
            return resolved
    return head_commit()


def words(text: str) -> str:
    """``text`` as the words part of a name: lower case, runs of anything else than a-z and 0-9 as '_'."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "run"


def stem(what: str, commit: str | None = None, dirty: bool = False, date: str | None = None,
         exts: tuple = ("json", "md"), fresh: bool = True) -> str:
    """``benchmarks/raw/DATE_COMMIT_WHAT`` without its extension. ``commit`` defaults to this
    checkout's head; ``dirty`` adds '_uncommitted' to the words. With ``fresh``, a name already
    taken (with any of ``exts``) gets '_2', '_3', ... so that no earlier run is overwritten."""
    date = date or datetime.date.today().isoformat()
    base = os.path.join(RAW, f"{date}_{commit or head_commit()}_{words(what)}{'_uncommitted' if dirty else ''}")
    path, k = base, 1
    while fresh and any(os.path.exists(f"{path}.{ext}") for ext in exts):
        k += 1
        path = f"{base}_{k}"
    return path


def ensure_dir(path: str) -> None:
    """Create the directory of ``path`` (``raw/`` on a fresh checkout of an older layout)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)


def refuse_results_md(path: str | None, error) -> None:
    """Call ``error`` (e.g. ``ArgumentParser.error``) when ``path`` is ``benchmarks/RESULTS.md``,
    the hand-edited page of results, which no script may overwrite."""
    if path and path != "-" and os.path.realpath(path) == os.path.realpath(RESULTS_MD):
        error("benchmarks/RESULTS.md is edited by hand: write the report to another file (the default is "
              "benchmarks/raw/DATE_COMMIT_WHAT.md) and copy its table onto RESULTS.md (benchmarks/README.md)")


def write_record(what: str, record: dict, out: str | None = None) -> str:
    """Write a measurement's ``record`` as JSON to ``out`` (default ``raw/DATE_COMMIT_WHAT.json``, a fresh
    name), with this checkout's head and whether ``cudbound/`` has uncommitted changes; prints and
    returns the path."""
    import json

    record = {**record, "commit": head_commit(), "uncommitted": cudbound_dirty()}
    path = out or stem(what) + ".json"
    ensure_dir(path)
    with open(path, "w") as fh:
        json.dump(record, fh, indent=1)
    print("wrote", path)
    return path
