"""Coverage against mean width of the third study: the AUC intervals, and the intervals of the difference A - B.

    python paper_figures/study3_figure.py --chunks results/study3/chunks --out results/study3

Writes ``auc_coverage_width.png`` and ``difference_coverage_width.png`` into ``--out``: one point
per (data set, method) cell (``study3_tables.cells``), x = mean width, y = coverage with its exact
95% interval as a bar, one panel per n, the nominal level as a dashed line, the legend under the
panels (the drawing of ``study2_figure.draw``). A method that keeps its promise sits on or above the line; the further
left the better.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import save  # noqa: E402
from study2_figure import draw  # noqa: E402
from study3_tables import cells, level_of  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", required=True)
    parser.add_argument("--out", default="results/study3")
    parser.add_argument("--target", type=float, default=None,
                        help="the nominal coverage (default: the study's confidence level, from protocol.json)")
    args = parser.parse_args(argv)
    if not (Path(args.chunks) / "protocol.json").is_file():
        parser.error(f"no chunk directory at {args.chunks} (its protocol.json is missing)")
    target = level_of(Path(args.chunks)) if args.target is None else args.target
    auc, _, comparisons = cells(Path(args.chunks), target)
    if not auc:
        parser.error(f"no chunk files under {args.chunks}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    save(draw(auc, target, legend_below=True), out / "auc_coverage_width.png")
    intervals = [r for r in comparisons if r.get("position")]
    if intervals:           # none when the study compares by tests without intervals only
        save(draw(intervals, target, legend_below=True), out / "difference_coverage_width.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
