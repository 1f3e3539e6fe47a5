"""What changed with honest refits: every interval's coverage and width, before and after, per method.

    python paper_figures/refit_change.py --old results/study2/chunks_shared_basis --new results/study2/chunks \
        --out results/study2/refit_change.md

Reads two chunk directories of one study (``cudbound.coverage.chunks``): ``--old``, made when every
refit reused the basis fitted once on the training set, and ``--new``, made when every refit refits
the whole procedure (``cudbound.refit``). They are compared on the tasks (data set, n, repetition)
that both hold, row by row (the same method of the same task), so a new directory still being filled
gives the change on what it has. Writes ``--out`` (Markdown): per method (for the third study, the
AUC intervals and the intervals of the difference apart), per n and over every n, the cells (data
sets) and repetitions compared, the coverage before and after (the share of intervals holding their
target) and the mean width before and after, with the changes; for the third study also the CV AUC
estimates' mean |bias| over the cells, before and after.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import LABELS, order  # noqa: E402

from cudbound.coverage.auc_config import COMPARISON_PREFIX, ESTIMATES  # noqa: E402
from cudbound.coverage.chunks import chunk_files, read_chunk  # noqa: E402


def _cells(directory: Path) -> dict:
    """(data set, n) -> the chunk files of that cell."""
    out = defaultdict(list)
    for path in chunk_files(directory):
        out[(path.parent.parent.name, int(path.parent.name[1:]))].append(path)
    return out


def _tasks(paths) -> dict:
    """rep -> task, over the chunk files of one cell (a task two files hold counts once)."""
    out = {}
    for path in paths:
        for task in read_chunk(path):
            out.setdefault(task["rep"], task)
    return out


def _target(task, row) -> float:
    return task["true_error"] if row.get("target") is None else row["target"]


def compare(old: Path, new: Path) -> dict:
    """The paired rows of the two directories.

    Returns {"intervals": {(method, n, data set): [reps, covered before, covered after, width before,
    width after]}, "estimates": {(estimate, n, data set): [reps, sum of error before, after]},
    "tasks": (paired, old, new)} where an error is estimate - target.
    """
    old_cells, new_cells = _cells(old), _cells(new)
    intervals: dict = defaultdict(lambda: [0, 0, 0, 0.0, 0.0])
    estimates: dict = defaultdict(lambda: [0, 0.0, 0.0])
    counts = [0, 0, 0]
    for key in set(old_cells) | set(new_cells):
        before, after = _tasks(old_cells.get(key, [])), _tasks(new_cells.get(key, []))
        counts[1] += len(before)
        counts[2] += len(after)
        d, n = key
        for rep in sorted(set(before) & set(after)):
            counts[0] += 1
            tb, ta = before[rep], after[rep]
            rows_a = {r["method"]: r for r in ta["rows"]}
            for rb in tb["rows"]:
                ra = rows_a.get(rb["method"])
                if ra is None:
                    continue
                if rb["method"] in ESTIMATES:
                    acc = estimates[(rb["method"], n, d)]
                    acc[0] += 1
                    acc[1] += rb["centre"] - _target(tb, rb)
                    acc[2] += ra["centre"] - _target(ta, ra)
                elif rb["covered"] is not None and ra["covered"] is not None:
                    acc = intervals[(rb["method"], n, d)]
                    acc[0] += 1
                    acc[1] += rb["covered"]
                    acc[2] += ra["covered"]
                    acc[3] += rb["width"]
                    acc[4] += ra["width"]
    return {"intervals": dict(intervals), "estimates": dict(estimates), "tasks": tuple(counts)}


def summary(intervals: dict) -> list[dict]:
    """Per method, per n and over every n ("all"): cells, repetitions, coverage and mean width before
    and after (pooled over the paired rows)."""
    out = []
    methods = list(dict.fromkeys(m for m, _, _ in intervals))
    for m in methods:
        sizes = sorted({n for mm, n, _ in intervals if mm == m})
        for n in sizes + ["all"]:
            mine = [v for (mm, nn, _), v in intervals.items() if mm == m and (n == "all" or nn == n)]
            reps = sum(v[0] for v in mine)
            out.append({"method": m, "n": n, "cells": len(mine), "reps": reps,
                        "coverage_before": sum(v[1] for v in mine) / reps, "coverage_after": sum(v[2] for v in mine) / reps,
                        "width_before": sum(v[3] for v in mine) / reps, "width_after": sum(v[4] for v in mine) / reps})
    return out


def _interval_table(rows, label) -> list[str]:
    out = ["| method | n | cells | reps | coverage before | coverage after | change | mean width before | "
           "mean width after | change |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {label(r['method'])} | {r['n']} | {r['cells']} | {r['reps']} | {r['coverage_before']:.3f} | "
                   f"{r['coverage_after']:.3f} | {r['coverage_after'] - r['coverage_before']:+.3f} | "
                   f"{r['width_before']:.3f} | {r['width_after']:.3f} | {r['width_after'] - r['width_before']:+.3f} |")
    return out + [""]


def _order(intervals, known) -> dict:
    """``intervals`` with its methods in registry order (the others after, alphabetically)."""
    present = {m for m, _, _ in intervals}
    rank = {m: i for i, m in enumerate([m for m in known if m in present] + sorted(present - set(known)))}
    return dict(sorted(intervals.items(), key=lambda kv: (rank[kv[0][0]], kv[0][1])))


def _name(directory: Path) -> str:
    """A directory as its last two parts (``study2/chunks``): the file does not depend on where it was built."""
    return "/".join(Path(directory).parts[-2:])


def _sections(intervals: dict, kind: str) -> list[tuple[str, dict, object]]:
    """(heading, the intervals of one kind in registry order, label function) of each table."""
    if kind != "auc":
        from study2_tables import _label
        from cudbound.registry import method_names
        return [("Intervals of the error rate", _order(intervals, method_names()), _label)]
    from cudbound.auc.registry import method_names as auc_names
    from cudbound.compare import method_names as comparison_names
    aucs = {k: v for k, v in intervals.items() if not k[0].startswith(COMPARISON_PREFIX)}
    diffs = {(k[0][len(COMPARISON_PREFIX):], k[1], k[2]): v for k, v in intervals.items()
             if k[0].startswith(COMPARISON_PREFIX)}
    return [("AUC intervals", _order(aucs, auc_names()), str),
            ("Intervals of the difference A - B", _order(diffs, comparison_names()), str)]


def _estimate_table(est: dict) -> list[str]:
    out = ["## CV AUC estimates: mean |bias| over the cells (bias: mean estimate - target in a cell)", "",
           "| estimate | n | cells | reps | mean abs bias before | after | change |", "|---|---|---|---|---|---|---|"]
    for e in [e for e in ESTIMATES if any(k[0] == e for k in est)]:
        for n in sorted({n for ee, n, _ in est if ee == e}) + ["all"]:
            mine = [v for (ee, nn, _), v in est.items() if ee == e and (n == "all" or nn == n)]
            before = float(np.mean([abs(v[1] / v[0]) for v in mine]))
            after = float(np.mean([abs(v[2] / v[0]) for v in mine]))
            out.append(f"| {e} | {n} | {len(mine)} | {sum(v[0] for v in mine)} | {before:.3f} | {after:.3f} | "
                       f"{after - before:+.3f} |")
    return out + [""]


def markdown(result: dict, old: Path, new: Path, kind: str, learns=()) -> str:
    """The Markdown file; ``learns``: the data sets whose basis learns from the data (the only ones whose
    rows the refit rule changes), each table repeated on them alone."""
    paired, n_old, n_new = result["tasks"]
    cells = {(d, n) for _, n, d in result["intervals"]}
    names = ", ".join(LABELS.get(d, d) for d in order({d for d, _ in cells}))
    learning = ", ".join(LABELS.get(d, d) for d in order(set(learns) & {d for d, _ in cells}))
    out = ["# What changed with honest refits", "",
           f"Before: `{_name(old)}` (every refit reused the basis fitted once on the training set); after: "
           f"`{_name(new)}` (every refit refits the whole procedure, basis included). Compared row by row on the "
           f"tasks (data set, n, repetition) both hold: {paired} of the {n_old} before and {n_new} after, "
           f"{len(cells)} cells ({names or 'none'}). Coverage: the share of intervals holding their target; "
           "coverage and mean width pooled over the cells' paired repetitions."
           + (f" Only the data sets whose basis learns from the data ({learning}) can change; each table is "
              "repeated on them alone." if learning else ""), ""]
    for heading, intervals, label in _sections(result["intervals"], kind):
        out += [f"## {heading}", ""] + _interval_table(summary(intervals), label)
        mine = {k: v for k, v in intervals.items() if k[2] in set(learns)}
        if mine:
            out += [f"### {heading}: the data sets whose basis learns from the data", ""]
            out += _interval_table(summary(mine), label)
    if kind == "auc":
        out += _estimate_table(result["estimates"])
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="the chunk directory of the earlier refit rule")
    parser.add_argument("--new", required=True, help="the chunk directory of today's refit rule")
    parser.add_argument("--out", required=True, help="the Markdown file to write")
    args = parser.parse_args(argv)
    old, new = Path(args.old), Path(args.new)
    for d in (old, new):
        if not (d / "protocol.json").is_file():
            parser.error(f"no chunk directory at {d} (its protocol.json is missing)")
    protocol = json.loads((new / "protocol.json").read_text(encoding="utf-8"))["protocol"]
    result = compare(old, new)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    learns = protocol.get("refits", {}).get("datasets", [])
    out.write_text(markdown(result, old, new, protocol.get("kind", "error"), learns), encoding="utf-8")
    print(f"wrote {out} ({result['tasks'][0]} tasks in both)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
