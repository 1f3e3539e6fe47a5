"""Recompute a random sample of committed chunk tasks and compare them with the committed rows.

Every task's seed depends only on the study's seed and the task (data set, n, repetition), so a
task recomputed alone, on any machine, must give its committed rows: the draw (training and true
error, test size, redraws) and every row's target to the chunks' 12 digits, and each row's
``low``, ``high``, ``centre`` and ``half_width`` to ``--tol`` (relative; the node solvers' minima
carry the machine's rounding, as ``tests/coverage/test_study3_cud.py`` says). Run it after a change
that must not move a committed number, and before an issue that rests on a study is closed.

    CUDBOUND_DATA=../shared/data/uci python experiments/recompute_chunks.py \
        --config experiments/study3_cud.toml --chunks results/study3/chunks_cud \
        --per-dataset 1 --max-seconds 120 --seed 3

The sample: ``--per-dataset`` tasks of every data set (``--datasets`` to restrict it), drawn with
``numpy.random.default_rng(--seed)`` among the committed tasks whose recorded time is at most
``--max-seconds`` (the chunks record each task's seconds). Prints one line per task and exits 1 if
any task differs; ``--json`` keeps every recomputed number.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from cudbound.coverage import Task, load_config
from cudbound.coverage.chunks import _text, chunk_files, read_chunk   # _text: a number as the chunks write it
from cudbound.coverage.tasks import run_task

DRAW = ("train_error", "true_error")
INTERVAL = ("low", "high", "centre", "half_width")


def _num(x):
    return None if x is None else float(x)


def _close(a, b, tol) -> bool:
    if a is None or b is None:
        return a is None and b is None
    a, b = float(a), float(b)
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    return abs(a - b) <= tol * max(abs(a), abs(b)) + 1e-12


def compare(stored: dict, new: dict, tol: float) -> list[str]:
    """The differences between a committed task and its recomputation (empty: the same)."""
    bad = [k for k in DRAW if _text(float(stored[k])) != _text(float(new[k]))]
    bad += [k for k in ("test_size", "redraws") if stored[k] != new[k]]
    old_rows = {r["method"]: r for r in stored["rows"]}
    new_rows = {r["method"]: r for r in new["rows"]}
    if sorted(old_rows) != sorted(new_rows):
        return bad + [f"methods {sorted(old_rows)} != {sorted(new_rows)}"]
    for method, old in old_rows.items():
        row = new_rows[method]
        if _text(_num(old.get("target"))) != _text(_num(row.get("target"))):
            bad.append(f"{method}.target")
        bad += [f"{method}.{k}" for k in INTERVAL if k in old and not _close(old[k], row.get(k), tol)]
    return bad


def sample_tasks(chunks, per_dataset, max_seconds, seed, datasets=None) -> list[dict]:
    """``per_dataset`` committed tasks of each data set, at most ``max_seconds`` each, drawn at random."""
    by_set: dict[str, list[dict]] = {}
    for path in chunk_files(chunks):
        for task in read_chunk(path):
            if datasets and task["dataset"] not in datasets:
                continue
            if task["seconds"] is not None and float(task["seconds"]) <= max_seconds:
                by_set.setdefault(task["dataset"], []).append(task)
    rng = np.random.default_rng(seed)
    picked = []
    for name in sorted(by_set):
        tasks = sorted(by_set[name], key=lambda t: (t["n"], t["rep"]))
        for i in sorted(rng.choice(len(tasks), size=min(per_dataset, len(tasks)), replace=False)):
            picked.append(tasks[i])
    return picked


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--chunks", required=True)
    ap.add_argument("--per-dataset", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=120.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", default=None, help="comma-separated data set labels (default: all)")
    ap.add_argument("--tol", type=float, default=1e-10)
    ap.add_argument("--data-home", default=os.environ.get("CUDBOUND_DATA"))
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    config = load_config(args.config)
    datasets = set(args.datasets.split(",")) if args.datasets else None
    tasks = sample_tasks(args.chunks, args.per_dataset, args.max_seconds, args.seed, datasets)
    if not tasks:
        print("no committed task matches", file=sys.stderr)
        return 2
    failed = 0
    record = []
    for stored in tasks:
        t0 = time.process_time()
        new = run_task(config, Task(stored["dataset"], stored["n"], stored["rep"]), args.data_home)
        seconds = time.process_time() - t0
        bad = compare(stored, new, args.tol)
        failed += bool(bad)
        verdict = "same" if not bad else "DIFFERS " + ", ".join(bad)
        print(f"{stored['dataset']:>14} n = {stored['n']:>3} rep {stored['rep']:>4}: {verdict} "
              f"({seconds:.1f} s; committed {stored['seconds']:.1f} s)", flush=True)
        record.append({"dataset": stored["dataset"], "n": stored["n"], "rep": stored["rep"], "differs": bad,
                       "rows": [{k: r.get(k) for k in ("method", "target") + INTERVAL} for r in new["rows"]]})
    print(f"{len(tasks) - failed} of {len(tasks)} tasks recomputed as committed (tol {args.tol:g})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(record, fh, indent=1, default=float)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
