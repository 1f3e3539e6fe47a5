"""Figure 1 of Laber & Murphy (2008): coverage of CUD, Y, M and K against the excess
kurtosis of the training error.

    python paper_figures/figure_kurtosis.py --store results/paper.sqlite --out results/figure1_kurtosis.png
    python paper_figures/figure_kurtosis.py --chunks results/study2/chunks --sizes 30 50 \
        --out results/study2/figure1_kurtosis.png      # from committed chunks (1000 repetitions)

One point per (data set, n) and method: x = |excess kurtosis| of the training error over the
study's repetitions of that data set and n (the normal distribution has 0), y = the
method's coverage there. The normal-theory intervals (K, M, Y) should lose coverage as
the kurtosis grows; CUD should stay at or above the target.

The plotted numbers are also written beside the figure, as a CSV of the same name (one row per
data set and n: the excess kurtosis and the four coverages), for the text that cites them.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (chunk_cells, chunk_kurtosis, cells, figure_args, order, pyplot, save,  # noqa: E402
                    training_error_kurtosis, write_csv)

METHODS = {"cud": ("CUD", "o"), "yang": ("Y", "s"), "martin": ("M", "^"), "kohavi": ("K", "D")}


def points(store_path=None, chunks=None, sizes=None):
    """method -> list of (|kurtosis|, coverage, data set, n), from a store or a chunk directory."""
    if chunks is not None:
        data, kurt = chunk_cells(chunks, sizes), chunk_kurtosis(chunks, sizes)
    else:
        data, kurt = cells(store_path), training_error_kurtosis(store_path)
        if sizes:
            data = {k: v for k, v in data.items() if k[1] in sizes}
    out = {m: [] for m in METHODS}
    for (d, n, m), c in sorted(data.items()):
        k = kurt.get((d, n), math.nan)
        if m in out and math.isfinite(k):
            out[m].append((abs(k), c["coverage"], d, n))
    return out


def table(pts) -> list:
    """One row per (data set, n): its |excess kurtosis| and each method's coverage (None if absent)."""
    rows = {}
    for m, values in pts.items():
        for k, coverage, d, n in values:
            rows.setdefault((d, n), {"dataset": d, "n": n, "abs_kurtosis": k, **{c: None for c in METHODS}})[m] = coverage
    rank = {d: i for i, d in enumerate(order({d for d, _ in rows}))}
    return [rows[key] for key in sorted(rows, key=lambda c: (c[1], rank[c[0]]))]


def main(argv=None) -> int:
    parser, args = figure_args(__doc__, "results/figure1_kurtosis.png", argv, chunks=True)
    plt = pyplot()

    pts = points(args.store, args.chunks, args.sizes)
    if not any(pts.values()):
        parser.error(f"{args.store or args.chunks} holds no CUD/Y/M/K results with a non-constant training error")
    fig, ax = plt.subplots(figsize=(6.0, 4.2), dpi=150)
    for m, (label, marker) in METHODS.items():
        if pts[m]:
            x, y = zip(*[(p[0], p[1]) for p in pts[m]])
            ax.scatter(x, y, marker=marker, label=label, alpha=0.8)
    ax.axhline(args.target, color="grey", linestyle="--", linewidth=1, label=f"target {args.target:g}")
    ax.set_xlabel("|excess kurtosis| of the training error")
    ax.set_ylabel("coverage")
    ax.set_title("Coverage by kurtosis (one point per data set and n)")
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    save(fig, args.out)
    csv_path = Path(args.out).with_suffix(".csv")
    write_csv(csv_path, ("dataset", "n", "abs_kurtosis") + tuple(METHODS), table(pts))
    print(f"wrote {csv_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
