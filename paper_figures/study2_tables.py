"""Tables of a chunked coverage study, with the uncertainty of every coverage.

    python paper_figures/study2_tables.py --chunks results/study2/chunks --out results/study2

Reads the committed chunk files only (``cudbound.coverage.chunks``; no SQLite store) and
writes to ``--out``:

* ``cells.csv``: one row per (data set, n, method): repetitions, covered, coverage and its
  exact (Clopper-Pearson) 95% interval, the shares of misses below (the true error under the
  interval) and above, mean and median width, the share of trivial intervals ([0, 1]) and of
  clipped ones (an end at 0 or 1); the target's noise: the mean standard error of the true
  error, sqrt(e (1 - e) / T) on the T test points, ``noise_shift`` (the expected coverage were
  every true error to carry one more draw of its noise, normal at its standard error, minus the
  coverage: an estimate of how far the noise has moved the coverage) and ``noisy_target`` (1 when
  it exceeds 0.01 in size: ``common.target_noise``);
* ``tables.md``: per n, coverage per data set and method marked by where its exact 95%
  interval lies against the target (``+`` above, ``-`` below, nothing: straddles; ``~`` a
  noisy target), beside the data set's mean target standard error; the misses below / above,
  the mean width, the share of trivial intervals; and per method, the number of cells above,
  straddling and below the target with the mean width and the mean misses below and above
  over cells, the cells with a noisy target kept out and named.

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
from common import LABELS, MARKS, chunk_tasks, coverage_numbers, flagged, kept_out, order, write_csv  # noqa: E402

from cudbound.coverage.store import coverage_interval  # noqa: E402
from cudbound.registry import get_method, method_names  # noqa: E402

COLUMNS = ("dataset", "n", "method", "reps", "covered", "coverage", "coverage_low", "coverage_high", "miss_below",
           "miss_above", "mean_width", "median_width", "trivial", "clipped", "position", "target_se",
           "noise_shift", "noisy_target")


exact_interval = coverage_interval
"""Clopper-Pearson interval of k covered of n repetitions (:func:`cudbound.coverage.store.coverage_interval`)."""


def read_rows(chunks: Path) -> dict:
    """(data set, n, method) -> list of (low, high, width, covered, true error, its standard error)
    over the chunks' tasks; the standard error sqrt(e (1 - e) / T) of the true error e on T test points."""
    out = defaultdict(list)
    for task in chunk_tasks(chunks):
        e = task["true_error"]
        se = float(np.sqrt(e * (1.0 - e) / task["test_size"]))
        for r in task["rows"]:
            out[(task["dataset"], task["n"], r["method"])].append((r["low"], r["high"], r["width"], r["covered"], e,
                                                                   se))
    return out


def cells(chunks: Path, target: float = 0.95) -> list[dict]:
    rows = []
    for (d, n, m), values in read_rows(chunks).items():
        a = np.asarray(values, dtype=float)
        low, high, width, covered, true_error, se = a.T
        rows.append({"dataset": d, "n": n, "method": m,
                     **coverage_numbers(low, high, true_error, covered, se, target),
                     "mean_width": float(width.mean()), "median_width": float(np.median(width)),
                     "trivial": float(np.mean((low <= 0) & (high >= 1))),
                     "clipped": float(np.mean((low <= 0) | (high >= 1)))})
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


def _target_se(by, d, n, methods) -> str:
    """The data set's mean target standard error at n (the same true errors for every method)."""
    se = next((by[(d, n, m)]["target_se"] for m in methods if (d, n, m) in by), None)
    return "" if se is None else f"{se:.3f}"


def _coverage_text(c) -> str:
    return (f"{c['coverage']:.3f}{MARKS[c['position']]}" + ("~" if c.get("noisy_target") else ""))


def markdown(rows, target=0.95, config=None) -> str:
    methods = _methods(rows)
    by = {(r["dataset"], r["n"], r["method"]): r for r in rows}
    out = [f"Coverage of {target:.2f} intervals: `+` the exact 95% interval of the coverage lies above "
           f"{target}, `-` below, nothing: it straddles {target}; `~` a noisy target (one more draw of "
           "every repetition's true error, normal at its standard error sqrt(e (1 - e) / T), moves the "
           "expected coverage by more than 0.01). Target SE: the mean standard error of the true error over the "
           "repetitions.", ""]
    for n in sorted({r["n"] for r in rows}):
        names = order({r["dataset"] for r in rows if r["n"] == n})
        for title, text in (("coverage", _coverage_text),
                            ("misses below / above the interval",
                             lambda c: f"{c['miss_below']:.3f} / {c['miss_above']:.3f}"),
                            ("mean width", lambda c: f"{c['mean_width']:.3f}"),
                            ("share of trivial intervals [0, 1]", lambda c: f"{c['trivial']:.2f}")):
            se_head, se_rule = ("target SE | ", "---|") if title == "coverage" else ("", "")
            out += [f"### n = {n}: {title}", "",
                    f"| data set | reps | {se_head}" + " | ".join(_label(m) for m in methods) + " |",
                    f"|---|---|{se_rule}" + "---|" * len(methods)]
            for d in names:
                reps = max((by[(d, n, m)]["reps"] for m in methods if (d, n, m) in by), default=0)
                se = f"{_target_se(by, d, n, methods)} | " if se_head else ""
                values = ["" if (d, n, m) not in by else text(by[(d, n, m)]) for m in methods]
                out.append(f"| {LABELS.get(d, d)} | {reps} | {se}" + " | ".join(values) + " |")
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
    out += kept_out(summary, _label)
    out += ["| n | method | above | straddles | below | mean width | mean miss below | mean miss above |",
            "|---|---|---|---|---|---|---|---|"]
    for n in sorted({r["n"] for r in summary}):
        for m in methods:
            mine = [r for r in summary if r["n"] == n and r["method"] == m and not flagged(r)]
            if not mine:
                continue
            count = {p: sum(r["position"] == p for r in mine) for p in ("above", "straddles", "below")}
            out.append(f"| {n} | {_label(m)} | {count['above']} | {count['straddles']} | {count['below']} | "
                       f"{np.mean([r['mean_width'] for r in mine]):.3f} | "
                       f"{np.mean([r['miss_below'] for r in mine]):.3f} | {np.mean([r['miss_above'] for r in mine]):.3f} |")
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
