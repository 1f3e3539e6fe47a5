"""Reading a coverage-study store into the per-cell numbers the tables and figures show."""
from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from published import DATASETS, LABELS, PAPER_METHODS, PUBLISHED  # noqa: E402

from cudbound.coverage import ResultStore  # noqa: E402

__all__ = ["cells", "training_error_kurtosis", "DATASETS", "LABELS", "PAPER_METHODS", "PUBLISHED", "order",
           "figure_args", "pyplot", "save"]


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
    out = {}
    for key, v in values.items():
        v = np.asarray(v)
        out[key] = float(stats.kurtosis(v)) if len(v) > 3 and np.ptp(v) > 0 else float("nan")
    return out


def order(names) -> list:
    """Data sets in the paper's row order, then any others alphabetically."""
    known = [d for d in DATASETS if d in names]
    return known + sorted(set(names) - set(known))


def figure_args(doc: str, default_out: str, argv=None):
    """(parser, args) of a figure script: --store, --out, --target."""
    import argparse

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
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
