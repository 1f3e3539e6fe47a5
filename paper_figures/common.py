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
           "DATASETS", "LABELS", "PAPER_METHODS", "PUBLISHED", "order", "figure_args", "pyplot", "save",
           "NOISE_MOVE", "MARKS", "coverage_numbers", "target_noise", "position", "within", "sources",
           "null_by_construction", "flagged", "kept_out"]


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


NOISE_MOVE = 0.01
"""A cell's target is noisy when its noise moves the cell's expected coverage by more than this
(``noise_shift``, ``noisy_target``)."""

MARKS = {"above": "+", "below": "-", "straddles": "", None: ""}
"""How a coverage is marked by where its exact 95% interval lies against the nominal level."""


def within(value: float, bound: float) -> bool:
    """|value| <= bound, both read to 9 decimals (the stored rows keep 12 significant digits, so
    that no decision turns on the rounding of a difference of two rates)."""
    return round(abs(float(value)), 9) <= round(bound, 9)


def position(low: float, high: float, level: float) -> str:
    """Where the exact interval [low, high] of a coverage lies against ``level``."""
    return "above" if low > level else "below" if high < level else "straddles"


def target_noise(low, high, target, target_se) -> dict:
    """How far the targets' own noise moves a cell's coverage.

    ``noise_shift`` = mean_r [Phi((high_r - t_r) / se_r) - Phi((low_r - t_r) / se_r)] - coverage
    (the indicator low_r <= t_r <= high_r when se_r = 0): the expected coverage were each target
    t_r to carry one more independent normal draw of its noise, at its own standard error, minus
    the coverage of the stored targets. A noise of variance s^2 smooths the coverage by an amount
    proportional to s^2 to first order, and the stored targets carry one draw of it, so
    ``noise_shift`` estimates the coverage of the stored targets minus that of the noise-free ones.
    ``noisy_target`` (1 or 0): |noise_shift| > :data:`NOISE_MOVE` (read to 9 decimals,
    :func:`within`). ``target_se`` the mean standard error. All None when a repetition has no
    standard error (rows stored without one)."""
    se = np.array([np.nan if s is None else s for s in target_se], dtype=float)
    if se.size == 0 or np.isnan(se).any():
        return {"target_se": None, "noise_shift": None, "noisy_target": None}
    low, high, target = (np.asarray(a, dtype=float) for a in (low, high, target))
    holds = ((low <= target) & (target <= high)).astype(float)
    noisy, scale = se > 0, np.where(se > 0, se, 1.0)
    smoothed = stats.norm.cdf((high - target) / scale) - stats.norm.cdf((low - target) / scale)
    shift = float(np.mean(np.where(noisy, smoothed, holds) - holds))
    return {"target_se": float(se.mean()), "noise_shift": shift, "noisy_target": int(not within(shift, NOISE_MOVE))}


def coverage_numbers(low, high, target, covered, target_se, level: float = 0.95) -> dict:
    """A cell's coverage (covered of reps, its exact Clopper-Pearson 95% interval and ``position``
    against ``level``), where its misses fall and the targets' noise (:func:`target_noise`).

    ``miss_below``: the share of repetitions whose target lies below the interval, ``miss_above``
    above it; with the coverage they sum to 1 (a miss is below when its target is under the
    interval's midpoint, so a stored ``covered`` decides, never a rounded end)."""
    from cudbound.coverage.store import coverage_interval
    low, high, target = (np.asarray(a, dtype=float) for a in (low, high, target))
    covered = np.asarray(covered, dtype=bool)
    reps, k = covered.size, int(covered.sum())
    lo, hi = coverage_interval(k, reps)
    below = int(np.sum(~covered & (target < (low + high) / 2)))
    return {"reps": reps, "covered": k, "coverage": k / reps, "coverage_low": lo, "coverage_high": hi,
            "miss_below": below / reps, "miss_above": (reps - k - below) / reps, "position": position(lo, hi, level),
            **target_noise(low, high, target, target_se)}


def sources(chunks) -> dict:
    """A chunk directory's data set labels -> registered data set names, where they differ (its
    ``protocol.json``'s ``sources``)."""
    import json
    marker = Path(chunks) / "protocol.json"
    if not marker.is_file():
        return {}
    return dict(json.loads(marker.read_text(encoding="utf-8"))["protocol"].get("sources", {}))


def null_by_construction(name: str) -> bool:
    """Whether the registered data set ``name`` has two procedures of equal expected error by
    construction (its class's ``null_by_construction``); False for a name not registered."""
    from cudbound.datasets import get_dataset
    try:
        source = get_dataset(name)
    except ValueError:
        return False
    return bool(getattr(source, "null_by_construction", False))


def flagged(cell) -> bool:
    """Whether a cell is kept out of the verdict counts: a noisy target or a degenerate cell."""
    return bool(cell.get("noisy_target")) or bool(cell.get("degenerate"))


def kept_out(cells, label=lambda m: m) -> list[str]:
    """Markdown lines naming the flagged cells (:func:`flagged`) that the summaries leave out,
    per n and data set, with the methods."""
    out = []
    for flag, why in (("noisy_target", f"a noisy target (`~`: one more draw of every target's noise "
                                       f"moves the expected coverage by more than {NOISE_MOVE})"),
                      ("degenerate", "a degenerate cell (`=`)")):
        groups: dict = defaultdict(list)
        for c in cells:
            if c.get(flag):
                groups[(c["n"], c["dataset"])].append(label(c["method"]))
        if groups:
            rank = {d: i for i, d in enumerate(order({d for _, d in groups}))}
            names = [f"{LABELS.get(d, d)} n = {n} ({', '.join(ms)})"
                     for (n, d), ms in sorted(groups.items(), key=lambda g: (g[0][0], rank[g[0][1]]))]
            out.append(f"Kept out of the counts, {why}: " + "; ".join(names) + ".")
    return (out + [""]) if out else []


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
