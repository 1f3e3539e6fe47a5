"""Tables of a chunked coverage study, with the uncertainty of every coverage.

    python paper_figures/study2_tables.py --chunks results/study2/chunks --out results/study2

Reads the committed chunk files only (``cudbound.coverage.chunks``; no SQLite store) and
writes to ``--out``:

* ``cells.csv``: one row per (data set, n, method): repetitions, covered, coverage and its
  exact (Clopper-Pearson) 95% interval, mean and median width, the share of trivial
  intervals ([0, 1]) and of clipped ones (an end at 0 or 1);
* ``tables.md``: per n, coverage per data set and method marked by where its exact 95%
  interval lies against the target (``+`` above, ``-`` below, nothing: straddles), the mean
  width, the share of trivial intervals; and per method, the number of cells above,
  straddling and below the target with the mean width over cells.

With ``--config`` (the study's TOML), the per-method summary counts only the complete cells,
those with the repetitions the configuration asks for at their n, and names the others; a study
still running then summarises what it has finished. Without it, every cell counts.
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import LABELS, chunk_tasks, order, write_csv  # noqa: E402

from cudbound.coverage.store import coverage_interval  # noqa: E402
from cudbound.registry import get_method, method_names  # noqa: E402

COLUMNS = ("dataset", "n", "method", "reps", "covered", "coverage", "coverage_low", "coverage_high", "mean_width",
           "median_width", "trivial", "clipped", "position")


exact_interval = coverage_interval
"""Clopper-Pearson interval of k covered of n repetitions (:func:`cudbound.coverage.store.coverage_interval`)."""


def read_rows(chunks: Path) -> dict:
    """(data set, n, method) -> list of (low, high, width, covered) over the chunks' tasks."""
    out = defaultdict(list)
    for task in chunk_tasks(chunks):
        for r in task["rows"]:
            out[(task["dataset"], task["n"], r["method"])].append((r["low"], r["high"], r["width"], r["covered"]))
    return out


def cells(chunks: Path, target: float = 0.95) -> list[dict]:
    rows = []
    for (d, n, m), values in read_rows(chunks).items():
        a = np.asarray(values, dtype=float)
        low, high, width, covered = a.T
        k, reps = int(covered.sum()), len(a)
        lo, hi = exact_interval(k, reps)
        position = "above" if lo > target else "below" if hi < target else "straddles"
        rows.append({"dataset": d, "n": n, "method": m, "reps": reps, "covered": k, "coverage": k / reps,
                     "coverage_low": lo, "coverage_high": hi, "mean_width": float(width.mean()),
                     "median_width": float(np.median(width)), "trivial": float(np.mean((low <= 0) & (high >= 1))),
                     "clipped": float(np.mean((low <= 0) | (high >= 1))), "position": position})
    return rows


def _methods(rows) -> list:
    present = {r["method"] for r in rows}
    return [m for m in method_names() if m in present] + sorted(present - set(method_names()))


def _label(m: str) -> str:
    return get_method(m).label if m in method_names() else m


def complete(rows, config) -> list:
    """The cells of ``rows`` that hold the repetitions ``config`` (a :class:`StudyConfig`) asks
    for at their n; every cell when ``config`` is None."""
    if config is None:
        return list(rows)
    return [r for r in rows if r["reps"] >= config.repetitions_for(r["n"])]


def markdown(rows, target=0.95, config=None) -> str:
    methods = _methods(rows)
    by = {(r["dataset"], r["n"], r["method"]): r for r in rows}
    mark = {"above": "+", "below": "-", "straddles": ""}
    out = [f"Coverage of {target:.2f} intervals: `+` the exact 95% interval of the coverage lies above "
           f"{target}, `-` below, nothing: it straddles {target}.", ""]
    for n in sorted({r["n"] for r in rows}):
        names = order({r["dataset"] for r in rows if r["n"] == n})
        for title, key, fmt in (("coverage", "coverage", "{:.3f}"), ("mean width", "mean_width", "{:.3f}"),
                                ("share of trivial intervals [0, 1]", "trivial", "{:.2f}")):
            out += [f"### n = {n}: {title}", "",
                    "| data set | reps | " + " | ".join(_label(m) for m in methods) + " |",
                    "|---|---|" + "---|" * len(methods)]
            for d in names:
                reps = max((by[(d, n, m)]["reps"] for m in methods if (d, n, m) in by), default=0)
                cells_ = []
                for m in methods:
                    c = by.get((d, n, m))
                    cells_.append("" if c is None else fmt.format(c[key]) + (mark[c["position"]] if key == "coverage"
                                                                            else ""))
                out.append(f"| {LABELS.get(d, d)} | {reps} | " + " | ".join(cells_) + " |")
            out.append("")
    summary = complete(rows, config)
    out += ["### Per method: cells whose coverage interval lies above, straddles or lies below the target", ""]
    if config is not None:
        done = {(r["dataset"], r["n"]) for r in summary}
        pairs = [(d.label, n) for d in config.datasets for n in config.sizes_of(d)]
        todo = [f"{LABELS.get(d, d)} n = {n}" for d, n in sorted(pairs, key=lambda c: (c[1], pairs.index(c)))
                if (d, n) not in done]
        out += [f"Complete cells only: {len(done)} of the {len(pairs)} (data set, n) pairs of `{config.name}` "
                "have their repetitions" + ("; still to finish: " + ", ".join(todo) if todo else "") + ".", ""]
    out += ["| n | method | above | straddles | below | mean width |", "|---|---|---|---|---|---|"]
    for n in sorted({r["n"] for r in summary}):
        for m in methods:
            mine = [r for r in summary if r["n"] == n and r["method"] == m]
            if not mine:
                continue
            count = {p: sum(r["position"] == p for r in mine) for p in ("above", "straddles", "below")}
            out.append(f"| {n} | {_label(m)} | {count['above']} | {count['straddles']} | {count['below']} | "
                       f"{np.mean([r['mean_width'] for r in mine]):.3f} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", required=True, help="the study's chunk directory")
    parser.add_argument("--out", required=True, help="directory for cells.csv and tables.md")
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument("--config", help="the study's TOML: the per-method summary then counts complete cells only")
    args = parser.parse_args(argv)
    config = None
    if args.config:
        from cudbound.coverage import load_config
        config = load_config(args.config)
    rows = cells(Path(args.chunks), args.target)
    if not rows:
        parser.error(f"no chunk files under {args.chunks}")
    rank = {d: i for i, d in enumerate(order({r["dataset"] for r in rows}))}
    methods = _methods(rows)
    rows.sort(key=lambda r: (r["n"], rank[r["dataset"]], methods.index(r["method"])))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "cells.csv", COLUMNS, rows)
    (out / "tables.md").write_text(markdown(rows, args.target, config), encoding="utf-8")
    print(f"wrote {out / 'cells.csv'} and {out / 'tables.md'} ({len(rows)} cells)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
