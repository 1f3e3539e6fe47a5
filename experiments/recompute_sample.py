"""Recompute a random sample of stored coverage tasks and compare them with the stored rows.

A change that must not move any number (a refactoring) is checked by recomputing stored
tasks: each task's seed depends only on the study's seed and the task, so a task recomputed
alone gives the same rows. Prints, per method, how many sampled tasks agree with the stored
``low``, ``high``, ``centre`` (and for CUD ``half_width``) to ``--tol``, and the largest
difference. The stored rows are the CSV exports of ``results/`` (every column but the JSON
details).

    CUDBOUND_DATA=../shared/data/uci python experiments/recompute_sample.py \
        --config experiments/paper.toml --tasks results/paper_tasks.csv.gz \
        --results results/paper_results.csv.gz --sample 24 --seed 13 --methods cud

``--methods`` limits the comparison (and the recomputation) to some methods; ``--json``
writes every recomputed number, so that two versions of the code can be compared with each
other as well as with the store.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import gzip
import json
import sys

import numpy as np

from cudbound.coverage import Task, load_config
from cudbound.coverage.tasks import run_task

COLUMNS = ("low", "high", "centre", "half_width")


def _rows(path):
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--tasks", required=True, help="the tasks CSV export (gzip)")
    ap.add_argument("--results", required=True, help="the results CSV export (gzip)")
    ap.add_argument("--sample", type=int, default=24, help="number of tasks to recompute")
    ap.add_argument("--seed", type=int, default=13, help="seed of the sample of tasks")
    ap.add_argument("--datasets", default=None, help="comma-separated data sets to sample from (default: all)")
    ap.add_argument("--methods", default=None, help="comma-separated method labels (default: all of the study)")
    ap.add_argument("--tol", type=float, default=1e-9)
    ap.add_argument("--json", default=None, help="write the recomputed numbers here")
    args = ap.parse_args(argv)

    config = load_config(args.config)
    labels = tuple(args.methods.split(",")) if args.methods else config.methods
    config = dataclasses.replace(config, methods=labels)
    tasks = sorted({(r["dataset"], int(r["n"]), int(r["rep"])) for r in _rows(args.tasks)
                    if not args.datasets or r["dataset"] in args.datasets.split(",")})
    pick = np.random.default_rng(args.seed).choice(len(tasks), size=min(args.sample, len(tasks)), replace=False)
    stored = {(r["dataset"], int(r["n"]), int(r["rep"]), r["method"]): r for r in _rows(args.results)}
    agree = {m: 0 for m in labels}
    worst = {m: 0.0 for m in labels}
    out = []
    for i in sorted(pick):
        task = Task(*tasks[i])
        rec = run_task(config, task)
        for row in rec["rows"]:
            old = stored[(task.dataset, task.n, task.rep, row["method"])]
            diffs = [abs(float(row[c]) - float(old[c])) for c in COLUMNS if c in row and old.get(c, "") != ""]
            d = max(diffs)
            worst[row["method"]] = max(worst[row["method"]], d)
            agree[row["method"]] += d <= args.tol
            out.append({"task": list(tasks[i]), "method": row["method"], **{c: row[c] for c in COLUMNS if c in row}})
    print(f"{len(pick)} tasks of {len(tasks)} recomputed (sample seed {args.seed}); agreement with the store to "
          f"{args.tol:g} in {', '.join(COLUMNS)}:")
    for m in labels:
        print(f"  {m:<12} {agree[m]:>3} of {len(pick)}   largest difference {worst[m]:.3g}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
