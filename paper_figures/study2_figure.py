"""Coverage against mean width, one point per method and cell, one panel per n.

    python paper_figures/study2_figure.py --chunks results/study2/chunks --out results/study2/coverage_width.png

Each point is one (data set, method) cell of the chunked study (``study2_tables.cells``):
x = mean width of the intervals, y = coverage, with its exact 95% interval as a vertical
bar; one colour and marker per method; the nominal level drawn as a horizontal line. A
method that keeps its promise sits on or above the line, and the further left the better.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import pyplot, save  # noqa: E402
from study2_tables import _label, _methods, cells  # noqa: E402

MARKERS = "os^vD<>pPX*hd"


def draw(rows, target=0.95, legend_below=False):
    """The figure (matplotlib Figure) for the cells ``rows``; the legend in the last panel's lower right
    corner, or (``legend_below``) in a row under the panels, where it hides no point."""
    plt = pyplot()
    sizes = sorted({r["n"] for r in rows})
    methods = _methods(rows)
    fig, axes = plt.subplots(1, len(sizes), figsize=(5.2 * len(sizes), 4.8), sharey=True, squeeze=False)
    cmap = plt.get_cmap("tab20")
    for ax, n in zip(axes[0], sizes):
        for i, m in enumerate(methods):
            mine = [r for r in rows if r["n"] == n and r["method"] == m]
            if not mine:
                continue
            x = [r["mean_width"] for r in mine]
            y = [r["coverage"] for r in mine]
            err = [[r["coverage"] - r["coverage_low"] for r in mine], [r["coverage_high"] - r["coverage"] for r in mine]]
            ax.errorbar(x, y, yerr=err, fmt=MARKERS[i % len(MARKERS)], color=cmap(i % 20), ms=5, lw=0.8,
                        label=_label(m), alpha=0.85)
        ax.axhline(target, color="black", lw=1, ls="--")
        ax.set_title(f"n = {n}")
        ax.set_xlabel("mean width")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("coverage (exact 95% interval)")
    if legend_below:
        handles, names = axes[0][-1].get_legend_handles_labels()
        fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=8, frameon=False)
        fig.tight_layout(rect=(0, 0.07, 1, 1))
    else:
        axes[0][-1].legend(loc="lower right", fontsize=7, ncol=2)
        fig.tight_layout()
    return fig


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", required=True)
    parser.add_argument("--out", default="results/study2/coverage_width.png")
    parser.add_argument("--target", type=float, default=0.95)
    args = parser.parse_args(argv)
    rows = cells(Path(args.chunks), args.target)
    if not rows:
        parser.error(f"no chunk files under {args.chunks}")
    save(draw(rows, args.target), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
