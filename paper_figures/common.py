"""Reading a coverage study (its SQLite store, or its committed chunk files) into the per-cell
numbers the tables and figures show."""
from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from published import DATASETS, LABELS, PAPER_METHODS, PUBLISHED  # noqa: E402

from cudbound.coverage import ResultStore  # noqa: E402
from cudbound.coverage.chunks import chunk_files, read_chunk  # noqa: E402

__all__ = ["cells", "training_error_kurtosis", "chunk_tasks", "chunk_cells", "chunk_kurtosis", "excess_kurtosis", "write_csv",
           "DATASETS", "LABELS", "PAPER_METHODS", "PUBLISHED", "order", "figure_args", "pyplot", "save"]


def cells(store_path) -> dict:
    """(data set, n, method) -> {"reps", "coverage", "coverage_se", "mean_width", ...} from the store."""
    with ResultStore(store_path) as store:
        return {(r["dataset"], r["n"], r["method"]): r for r in store.summary()}


def training_error_kurtosis(store_path) -> dict:
    """(data set, n) -> excess kurtosis of the training error over the repetitions.

    Fisher's definition (normal = 0), the plain moment estimator m4 / m2^2 - 3
    (``scipy.stats.kurtosis`` with its defaults); NaN when the training error is constant.
    """
    values = defaultdict(list)
    with ResultStore(store_path) as store:
        for t in store.tasks():
            values[(t["dataset"], t["n"])].append(t["train_error"])
    return {key: excess_kurtosis(v) for key, v in values.items()}


def excess_kurtosis(values) -> float:
    """m4 / m2^2 - 3 (``scipy.stats.kurtosis`` with its defaults); NaN when constant or < 4 values."""
    v = np.asarray(values, dtype=float)
    return float(stats.kurtosis(v)) if len(v) > 3 and np.ptp(v) > 0 else float("nan")


def chunk_tasks(chunks, sizes=None) -> list:
    """Every task of a chunk directory once (a task that two files hold counts once), as
    :func:`cudbound.coverage.chunks.read_chunk` gives it; only training sizes in ``sizes`` if set."""
    out, seen = [], set()
    for path in chunk_files(chunks):
        for task in read_chunk(path):
            key = (task["dataset"], task["n"], task["rep"])
            if key in seen or (sizes and task["n"] not in sizes):
                continue
            seen.add(key)
            out.append(task)
    return out


def chunk_cells(chunks, sizes=None) -> dict:
    """(data set, n, method) -> {"reps", "coverage", "mean_width"} from the chunk files."""
    acc = defaultdict(list)
    for task in chunk_tasks(chunks, sizes):
        for r in task["rows"]:
            acc[(task["dataset"], task["n"], r["method"])].append((r["covered"], r["width"]))
    return {key: {"reps": len(v), "coverage": float(np.mean([c for c, _ in v])),
                  "mean_width": float(np.mean([w for _, w in v]))} for key, v in acc.items()}


def chunk_kurtosis(chunks, sizes=None) -> dict:
    """(data set, n) -> excess kurtosis of the training error over the chunks' repetitions."""
    values = defaultdict(list)
    for task in chunk_tasks(chunks, sizes):
        values[(task["dataset"], task["n"])].append(task["train_error"])
    return {key: excess_kurtosis(v) for key, v in values.items()}


def order(names) -> list:
    """Data sets in the paper's row order, then any others alphabetically."""
    known = [d for d in DATASETS if d in names]
    return known + sorted(set(names) - set(known))


def write_csv(path, columns, rows) -> None:
    """rows (dicts) as CSV: floats to 6 significant digits, None as an empty field."""
    import csv
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if r[c] is None else f"{r[c]:.6g}" if isinstance(r[c], float) else r[c] for c in columns])


def figure_args(doc: str, default_out: str, argv=None, chunks: bool = False):
    """(parser, args) of a figure script: --store (or, with ``chunks``, --store or --chunks and
    --sizes), --out, --target."""
    import argparse

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    if chunks:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--store", help="the study's SQLite store")
        source.add_argument("--chunks", help="the study's directory of committed chunk files")
        parser.add_argument("--sizes", type=int, nargs="+", help="only these training sizes (default: all)")
    else:
        parser.add_argument("--store", required=True, help="the study's SQLite store")
    parser.add_argument("--out", default=default_out, help=f"the PNG file (default {default_out})")
    parser.add_argument("--target", type=float, default=0.95, help="the target coverage line (default 0.95)")
    return parser, parser.parse_args(argv)


def pyplot():
    """matplotlib.pyplot on the non-interactive Agg backend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, out) -> None:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    print(f"wrote {out}")
