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
data set and n: the excess kurtosis and the four coverages), and a Markdown summary of the same
name (:func:`summary`: the cells by kurtosis, each method's mean coverage on the cells with
|excess kurtosis| above 1 and on the others, and Spearman's rank correlation of coverage with
|kurtosis|), for the text that cites them.
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


LARGE = 1.0
"""Cells whose |excess kurtosis| exceeds this are the "large kurtosis" group of the summary."""


def summary(rows) -> str:
    """The Markdown summary of :func:`table`'s rows: the cells by decreasing |kurtosis|; per method,
    the mean coverage over the cells with |kurtosis| > LARGE and over the others; per method,
    Spearman's rank correlation of its coverage with |kurtosis| over all cells and its two-sided
    p-value (``scipy.stats.spearmanr``, ties at their average rank); empty where a method has fewer
    than 3 cells or a constant coverage. |kurtosis| is printed to 3 decimals, so the grouping can be
    read off the table."""
    from scipy import stats
    labels = {m: label for m, (label, _) in METHODS.items()}
    lines = ["# Figure 1: coverage by the training error's kurtosis", "",
             "| data set | n | abs kurtosis | " + " | ".join(labels.values()) + " |",
             "|---|---|---|" + "---|" * len(labels)]
    for r in sorted(rows, key=lambda r: -r["abs_kurtosis"]):
        lines.append(f"| {r['dataset']} | {r['n']} | {r['abs_kurtosis']:.3f} | "
                     + " | ".join("" if r[m] is None else f"{r[m]:.3f}" for m in labels) + " |")
    large = [r for r in rows if r["abs_kurtosis"] > LARGE]
    rest = [r for r in rows if r["abs_kurtosis"] <= LARGE]
    lines += ["", f"Mean coverage, cells with |excess kurtosis| above {LARGE:g} and the others:", "",
              "| method | cells above | mean coverage above | cells at or below | mean coverage at or below |",
              "|---|---|---|---|---|"]
    for m, label in labels.items():
        a = [r[m] for r in large if r[m] is not None]
        b = [r[m] for r in rest if r[m] is not None]
        fmt = lambda v: f"{sum(v) / len(v):.3f}" if v else ""  # noqa: E731
        lines.append(f"| {label} | {len(a)} | {fmt(a)} | {len(b)} | {fmt(b)} |")
    lines += ["", "Spearman's rank correlation of coverage with |excess kurtosis| over all cells:", "",
              "| method | cells | rho | p (two-sided) |", "|---|---|---|---|"]
    for m, label in labels.items():
        pairs = [(r["abs_kurtosis"], r[m]) for r in rows if r[m] is not None]
        rho = p = math.nan
        if len(pairs) >= 3 and len({c for _, c in pairs}) > 1 and len({k for k, _ in pairs}) > 1:
            res = stats.spearmanr(*zip(*pairs))
            rho, p = float(res.statistic), float(res.pvalue)
        shown = " | ".join("" if not math.isfinite(v) else f"{v:.2f}" for v in (rho, p))
        lines.append(f"| {label} | {len(pairs)} | {shown} |")
    return "\n".join(lines) + "\n"


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
    rows = table(pts)
    write_csv(csv_path, ("dataset", "n", "abs_kurtosis") + tuple(METHODS), rows)
    md_path = Path(args.out).with_suffix(".md")
    md_path.write_text(summary(rows), encoding="utf-8")
    print(f"wrote {csv_path} and {md_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
