"""Small chunk directories written by hand, for the tests of the scripts that read chunks: every row
chosen by the test, so that each number a table prints can be checked against a direct computation."""
from __future__ import annotations

import csv
import gzip
import io
import json
from collections import defaultdict
from pathlib import Path

from cudbound.coverage.chunks import AUC_ROW_COLUMNS, ROW_COLUMNS


def interval_row(method, low, high, target=None, *, pvalue=None, target_se=None, centre=None) -> dict:
    """One result row with an interval (``target`` None: an error-rate study's row, scored against
    its task's true error by the caller's ``covered``)."""
    return {"method": method, "low": low, "high": high, "centre": (low + high) / 2 if centre is None else centre,
            "width": high - low, "covered": None if target is None else int(low <= target <= high),
            "target": target, "pvalue": pvalue, "target_se": target_se}


def pvalue_row(method, centre, target, pvalue, *, target_se=None) -> dict:
    """One row of a test without an interval."""
    return {"method": method, "low": None, "high": None, "centre": centre, "width": None, "covered": None,
            "target": target, "pvalue": pvalue, "target_se": target_se}


def task(dataset, n, rep, rows, *, true_error=0.2, test_size=1000) -> dict:
    return {"dataset": dataset, "n": n, "rep": rep, "true_error": true_error, "test_size": test_size, "rows": rows}


def write_chunks(directory, tasks, *, kind="error", confidence_level=0.95, protocol=None) -> Path:
    """``tasks`` as chunk files under ``directory`` (one per data set and n) with a ``protocol.json``;
    an error-rate study's rows get ``covered`` from their task's true error when they lack it."""
    directory = Path(directory)
    columns = AUC_ROW_COLUMNS if kind == "auc" else ROW_COLUMNS
    directory.mkdir(parents=True, exist_ok=True)
    body = {"confidence_level": confidence_level, **({"kind": "auc"} if kind == "auc" else {}), **(protocol or {})}
    (directory / "protocol.json").write_text(json.dumps({"chunk_size": 50, "protocol": body}))
    cells = defaultdict(list)
    for t in tasks:
        cells[(t["dataset"], t["n"])].append(t)
    for (dataset, n), mine in cells.items():
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(columns)
        for t in sorted(mine, key=lambda t: t["rep"]):
            for r in t["rows"]:
                r = dict(r)
                if r["covered"] is None and r["low"] is not None and kind != "auc":
                    r["covered"] = int(r["low"] <= t["true_error"] <= r["high"])
                values = {**t, "train_error": 0.1, "redraws": 0, "task_seconds": 0.01, "seconds": 0.01, **r}
                w.writerow(["" if values.get(c) is None else values[c] for c in columns])
        reps = [t["rep"] for t in mine]
        path = directory / dataset / f"n{n}" / f"reps{min(reps):04d}-{max(reps):04d}.csv.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip.compress(buf.getvalue().encode()))
    return directory
