"""Tables 2-5 of Laber & Murphy (2008) from a coverage-study store, beside the published values.

    python paper_figures/tables.py --store results/paper.sqlite --out results/

Writes ``tables.md`` (Markdown) and ``tables.tex`` (LaTeX, booktabs) to ``--out``: for each
n in the store, coverage and mean width per data set (rows, the paper's order) and method
(columns, the paper's order). A cell reads "ours (paper)"; a coverage below the target
minus two binomial standard errors is marked with an asterisk.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import LABELS, PAPER_METHODS, PUBLISHED, cells, order  # noqa: E402

from cudbound.registry import get_method, method_names  # noqa: E402


def short(label: str) -> str:
    """A column header: the registered method's table label ("K" for kohavi), else the label itself."""
    return get_method(label).label if label in method_names() else label
TITLES = {"coverage": "Coverage", "width": "Mean width"}


def _fmt(x: float) -> str:
    return f"{x:.3f}".replace("0.", ".", 1) if 0 <= x < 1 else f"{x:.2f}"


def build(store_path, target=0.95):
    """(measure, n) -> (methods, rows) with rows = [(label, reps, [(ours, paper, flagged)])]."""
    data = cells(store_path)
    methods = [m for m in PAPER_METHODS if any(k[2] == m for k in data)]
    methods += sorted({k[2] for k in data} - set(methods))
    tables = {}
    for n in sorted({k[1] for k in data}):
        names = order({k[0] for k in data if k[1] == n})
        for measure in ("coverage", "width"):
            rows = []
            for d in names:
                entries = []
                for m in methods:
                    c = data.get((d, n, m))
                    ours = None if c is None else (c["coverage"] if measure == "coverage" else c["mean_width"])
                    paper = PUBLISHED.get((measure, n), {}).get(d, {}).get(m)
                    flagged = (c is not None and measure == "coverage"
                               and c["coverage"] < target - 2 * max(c["coverage_se"], 1e-12))
                    entries.append((ours, paper, flagged))
                reps = max((data[(d, n, m)]["reps"] for m in methods if (d, n, m) in data), default=0)
                rows.append((LABELS.get(d, d), reps, entries))
            tables[(measure, n)] = (methods, rows)
    return tables


def by_method(tables, target=0.95):
    """Per method: cells at or above the target, mean coverage and mean width, ours and the paper's."""
    out = {}
    for (measure, n), (methods, rows) in tables.items():
        for i, m in enumerate(methods):
            acc = out.setdefault(m, {"cells": 0, "ours_ok": 0, "paper_ok": 0, "paper_cells": 0,
                                     "cov": [], "pcov": [], "width": [], "pwidth": []})
            for _, _, entries in rows:
                ours, paper, _ = entries[i]
                if ours is None:
                    continue
                if measure == "coverage":
                    acc["cells"] += 1
                    acc["ours_ok"] += ours >= target
                    acc["cov"].append(ours)
                    if paper is not None:
                        acc["paper_cells"] += 1
                        acc["paper_ok"] += paper >= target
                        acc["pcov"].append(paper)
                else:
                    acc["width"].append(ours)
                    if paper is not None:
                        acc["pwidth"].append(paper)
    return out


def _mean(v):
    return sum(v) / len(v) if v else float("nan")


def summary_markdown(tables, target=0.95) -> str:
    out = ["## Summary by method (all data sets and n)", "",
           f"| method | cells at >= {target} ours | paper | mean coverage ours | paper | min coverage ours | paper "
           "| mean width ours | paper |",
           "|---|---|---|---|---|---|---|---|---|"]
    for m, a in by_method(tables, target).items():
        out.append(f"| {short(m)} | {a['ours_ok']}/{a['cells']} | {a['paper_ok']}/{a['paper_cells']} | "
                   f"{_mean(a['cov']):.3f} | {_mean(a['pcov']):.3f} | {min(a['cov'], default=float('nan')):.3f} | "
                   f"{min(a['pcov'], default=float('nan')):.3f} | {_mean(a['width']):.3f} | {_mean(a['pwidth']):.3f} |")
    return "\n".join(out)


def _cell(ours, paper, flagged):
    text = "-" if ours is None else _fmt(ours) + ("*" if flagged else "")
    return text + (f" ({_fmt(paper)})" if paper is not None else "")


def markdown(tables) -> str:
    out = ["Cells: ours (paper). * = coverage more than two binomial standard errors below the target 0.95.", ""]
    for (measure, n), (methods, rows) in tables.items():
        out.append(f"## {TITLES[measure]}, n = {n}")
        out.append("")
        out.append("| data | reps | " + " | ".join(short(m) for m in methods) + " |")
        out.append("|---|---:|" + "---|" * len(methods))
        for label, reps, entries in rows:
            out.append(f"| {label} | {reps} | " + " | ".join(_cell(*e) for e in entries) + " |")
        out.append("")
    return "\n".join(out)


def latex(tables) -> str:
    out = ["% Cells: ours (paper); * = coverage more than two binomial standard errors below 0.95.",
           "% Needs \\usepackage{booktabs}."]
    for (measure, n), (methods, rows) in tables.items():
        out += ["\\begin{table}[ht]", "\\centering", "\\small",
                f"\\caption{{{TITLES[measure]}, $n = {n}$: this study (paper).}}",
                "\\begin{tabular}{l" + "r" * (len(methods) + 1) + "}", "\\toprule",
                "Data & reps & " + " & ".join(short(m) for m in methods) + " \\\\", "\\midrule"]
        for label, reps, entries in rows:
            label = label.replace("chi^2", "$\\chi^2$")
            out.append(f"{label} & {reps} & " + " & ".join(_cell(*e) for e in entries) + " \\\\")
        out += ["\\bottomrule", "\\end{tabular}", "\\end{table}", ""]
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="the study's SQLite store")
    parser.add_argument("--out", default="results", help="output directory (default results/)")
    args = parser.parse_args(argv)
    tables = build(args.store)
    if not tables:
        parser.error(f"the store {args.store} holds no results")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tables.md").write_text(markdown(tables) + "\n" + summary_markdown(tables) + "\n")
    (out / "tables.tex").write_text(latex(tables) + "\n")
    print(f"wrote {out / 'tables.md'} and {out / 'tables.tex'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
