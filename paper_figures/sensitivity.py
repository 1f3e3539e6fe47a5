"""The basis-sensitivity study (issue 15, part 6): each baseline's coverage per data set, n and
basis, beside the paper's published coverage.

    python paper_figures/sensitivity.py --chunks results/sensitivity/chunks --out results/sensitivity

Reads the committed chunk files of a study whose [[datasets]] entries list one data set
under several bases (``experiments/sensitivity.toml``; the chunk directory's
``protocol.json`` maps each label to its data set and basis) and writes to ``--out``:

* ``summary.csv``: one row per (data set, n, basis, method): repetitions, coverage and its
  exact (Clopper-Pearson) 95% interval, mean width, the mean centre of the interval, the mean
  of (upper end - centre), the share of repetitions whose true error lies above the
  interval, the mean true and training errors, the centre's mean error
  ``mean(centre - true error)`` and its root mean square, and the paper's coverage of that
  method on that data set and n;
* ``summary.md``: per method, coverage by basis (rows) and data set x n (columns), marked
  ``-`` where the exact interval lies below the target and ``+`` above, with the paper's row
  beneath; then the numbers behind it, per basis: mean true error, mean training error, the
  mean and root mean square error of the first method's centre (BS1's: the .632 estimate,
  shared by BS1, K, M, L and Y), that method's mean width, how far it reaches above its centre and how often the
  true error lies above it;
* ``sensitivity.png``: per method, coverage against the mean error of the interval's centre,
  one point per data set, n and basis; the paper's coverage as horizontal ticks at the right.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import LABELS, PUBLISHED, chunk_tasks, order, pyplot, save, write_csv  # noqa: E402
from study2_tables import _label, _methods, exact_interval  # noqa: E402

COLUMNS = ("dataset", "n", "basis", "label", "method", "reps", "coverage", "coverage_low", "coverage_high",
           "position", "mean_width", "mean_centre", "upper_reach", "miss_high", "mean_true_error", "mean_train_error",
           "centre_error", "centre_rmse", "paper_coverage")
FOCUS = ("bs1", "kohavi", "martin", "langford")
"""The intervals whose failures in the paper the study tries to reproduce."""


def labels_of(chunks: Path) -> dict:
    """label -> (data set, basis) from the chunk directory's protocol."""
    protocol = json.loads((Path(chunks) / "protocol.json").read_text())["protocol"]
    sources = protocol.get("sources", {})
    return {label: (sources.get(label, label), basis) for label, basis in protocol["bases"].items()}


def basis_key(spec: str) -> tuple:
    """Reading order of bases: all features, standardised PCs, raw PCs, compositions; by size."""
    numbers = [int(x) for x in re.findall(r"\d+", spec)]
    kind = 0 if spec == "linear" else 1 if spec.startswith("zpca") else 2 if spec.startswith("pca") else 3
    return (kind, spec.count("z") == 0, numbers, spec)


def summarise(chunks: Path, target: float = 0.95) -> list[dict]:
    names = labels_of(chunks)
    acc = defaultdict(list)
    for task in chunk_tasks(chunks):
        for r in task["rows"]:
            acc[(task["dataset"], task["n"], r["method"])].append(
                (r["covered"], r["width"], r["centre"], r["high"], task["true_error"], task["train_error"]))
    rows = []
    for (label, n, method), values in acc.items():
        a = np.asarray(values, dtype=float)
        covered, width, centre, high, true, train = a.T
        k, reps = int(covered.sum()), len(a)
        lo, hi = exact_interval(k, reps)
        dataset, basis = names.get(label, (label, "?"))
        paper = PUBLISHED.get(("coverage", n), {}).get(dataset, {}).get(method)
        rows.append({"dataset": dataset, "n": n, "basis": basis, "label": label, "method": method, "reps": reps,
                     "coverage": k / reps, "coverage_low": lo, "coverage_high": hi,
                     "position": "above" if lo > target else "below" if hi < target else "straddles",
                     "mean_width": float(width.mean()), "mean_centre": float(centre.mean()),
                     "upper_reach": float(np.mean(high - centre)), "miss_high": float(np.mean(true > high)),
                     "mean_true_error": float(true.mean()), "mean_train_error": float(train.mean()),
                     "centre_error": float(np.mean(centre - true)),
                     "centre_rmse": float(np.sqrt(np.mean((centre - true) ** 2))), "paper_coverage": paper})
    datasets = order({r["dataset"] for r in rows})
    methods = _methods(rows)
    rows.sort(key=lambda r: (methods.index(r["method"]), datasets.index(r["dataset"]), r["n"], basis_key(r["basis"])))
    return rows


def markdown(rows, target: float = 0.95) -> str:
    methods = _methods(rows)
    methods = [m for m in FOCUS if m in methods] + [m for m in methods if m not in FOCUS]
    columns = sorted({(r["dataset"], r["n"]) for r in rows},
                     key=lambda c: (order({r["dataset"] for r in rows}).index(c[0]), c[1]))
    bases = sorted({r["basis"] for r in rows}, key=basis_key)
    by = {(r["method"], r["dataset"], r["n"], r["basis"]): r for r in rows}
    mark = {"above": "+", "below": "-", "straddles": ""}
    head = "| basis | " + " | ".join(f"{LABELS.get(d, d)} {n}" for d, n in columns) + " |"
    rule = "|---|" + "---|" * len(columns)
    reps = sorted({r["reps"] for r in rows})
    out = [f"Coverage of {target:.2f} intervals over {', '.join(map(str, reps))} repetitions per cell: `-` the "
           f"exact 95% interval of the coverage lies below {target}, `+` above, nothing: it straddles {target}. "
           f"The row `paper` is Laber & Murphy's published coverage (1000 repetitions, basis not stated; its "
           f"n = 50 M and L values repeat the n = 30 ones, a copy error in the paper). An empty cell: no "
           f"results for that basis, data set and n (not in the study, or not computed yet).", ""]
    for m in methods:
        out += [f"### {_label(m)}: coverage", "", head, rule]
        for b in bases:
            cells = []
            for d, n in columns:
                c = by.get((m, d, n, b))
                cells.append("" if c is None else f"{c['coverage']:.3f}{mark[c['position']]}")
            out.append(f"| `{b}` | " + " | ".join(cells) + " |")
        paper = [PUBLISHED.get(("coverage", n), {}).get(d, {}).get(m) for d, n in columns]
        out.append("| paper | " + " | ".join("" if p is None else f"{p:.3f}" for p in paper) + " |")
        out.append("")
    ref = methods[0]
    for title, key in (("mean true error", "mean_true_error"), ("mean training error", "mean_train_error"),
                       (f"mean error of the {_label(ref)} centre, mean(centre - true error)", "centre_error"),
                       (f"root mean square error of the {_label(ref)} centre", "centre_rmse"),
                       (f"mean width of {_label(ref)}", "mean_width"),
                       (f"how far {_label(ref)} reaches above its centre, mean(high - centre)", "upper_reach"),
                       (f"share of repetitions where the true error lies above {_label(ref)}", "miss_high")):
        out += [f"### {title}", "", head, rule]
        for b in bases:
            cells = []
            for d, n in columns:
                c = by.get((ref, d, n, b))
                cells.append("" if c is None else f"{c[key]:+.3f}" if key in ("centre_error", "upper_reach")
                             else f"{c[key]:.3f}")
            out.append(f"| `{b}` | " + " | ".join(cells) + " |")
        out.append("")
    out += implied(rows)
    return "\n".join(out) + "\n"


def implied(rows) -> list:
    """Lines of a table: the least root mean square error of its centre that the paper's coverage
    of K, M and L implies, beside the largest such error of the .632 centre over our bases.

    Chebyshev's inequality (Markov's applied to e^2) on e = centre - true error:
    P(|e| >= h) <= E[e^2] / h^2, so a symmetric interval of half-width h that misses with
    probability 1 - c needs RMS(e) >= h sqrt(1 - c). h is taken as the paper's mean half-width
    (the normal-theory widths vary little between repetitions), so the bound is approximate. The
    paper's n = 50 M and L columns repeat its n = 30 ones (a copy error), so M and L are shown at
    n = 30 only.
    """
    ours = defaultdict(float)
    for r in rows:
        ours[(r["dataset"], r["n"])] = max(ours[(r["dataset"], r["n"])], r["centre_rmse"])
    keys = sorted(ours, key=lambda k: (order({d for d, _ in ours}).index(k[0]), k[1]))
    out = ["### What the paper's coverage of K, M and L implies about its centre", "",
           "A symmetric interval of half-width h that misses the true error with probability 1 - c needs a centre "
           "whose root mean square error is at least h sqrt(1 - c) (Chebyshev's inequality; h = the paper's mean "
           "half-width, so approximate). Beside it, the largest root mean square error of the .632 centre over "
           "all our bases for that data set and n.", "",
           "| data set | n | method | paper coverage | paper mean width | implied RMS error at least | ours, largest |",
           "|---|---|---|---|---|---|---|"]
    for d, n in keys:
        for m in ("kohavi", "martin", "langford"):
            if m != "kohavi" and n != 30:
                continue
            c = PUBLISHED.get(("coverage", n), {}).get(d, {}).get(m)
            w = PUBLISHED.get(("width", n), {}).get(d, {}).get(m)
            if c is None or w is None:
                continue
            out.append(f"| {LABELS.get(d, d)} | {n} | {_label(m)} | {c:.3f} | {w:.3f} | "
                       f"{w / 2 * np.sqrt(1 - c):.3f} | {ours[(d, n)]:.3f} |")
    return out + [""]


def figure(rows, out: Path, target: float = 0.95) -> None:
    plt = pyplot()
    methods = [m for m in FOCUS if any(r["method"] == m for r in rows)]
    datasets = order({r["dataset"] for r in rows})
    fig, axes = plt.subplots(1, len(methods), figsize=(3.4 * len(methods), 3.6), dpi=150, sharey=True, squeeze=False)
    colours = {d: f"C{i}" for i, d in enumerate(datasets)}
    for ax, m in zip(axes[0], methods):
        for d in datasets:
            for n, marker in ((30, "o"), (50, "s")):
                pts = [(r["centre_error"], r["coverage"]) for r in rows if r["method"] == m and r["dataset"] == d
                       and r["n"] == n]
                if pts:
                    x, y = zip(*pts)
                    ax.scatter(x, y, s=14, marker=marker, color=colours[d], alpha=0.75,
                               label=f"{LABELS.get(d, d)}, n = {n}")
                paper = PUBLISHED.get(("coverage", n), {}).get(d, {}).get(m)
                if paper is not None:
                    ax.axhline(paper, xmin=0.93, xmax=1.0, color=colours[d], linewidth=2)
        xs = [r["centre_error"] for r in rows]
        span = max(max(xs) - min(xs), 1e-3)
        ax.set_xlim(min(xs) - 0.05 * span, max(xs) + 0.2 * span)   # room at the right for the paper's ticks
        ax.axhline(target, color="grey", linestyle="--", linewidth=1)
        ax.axvline(0.0, color="grey", linewidth=0.5)
        ax.set_title(_label(m))
        ax.set_xlabel("mean(centre - true error)")
    axes[0][0].set_ylabel("coverage")
    axes[0][0].set_ylim(0, 1.02)
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=4, fontsize=7, frameon=False)
    fig.suptitle("Coverage by basis against the centre's error (ticks at the right: the paper's coverage)", fontsize=9)
    fig.tight_layout(rect=(0, 0.14, 1, 0.95))
    save(fig, out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", required=True, help="the sensitivity study's chunk directory")
    parser.add_argument("--out", required=True, help="directory for summary.csv, summary.md, sensitivity.png")
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument("--no-figure", action="store_true", help="skip the figure (no matplotlib needed)")
    args = parser.parse_args(argv)
    chunks = Path(args.chunks)
    if not (chunks / "protocol.json").exists():
        parser.error(f"{chunks} is not a chunk directory (no protocol.json)")
    rows = summarise(chunks, args.target)
    if not rows:
        parser.error(f"no chunk files under {chunks}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "summary.csv", COLUMNS, rows)
    (out / "summary.md").write_text(markdown(rows, args.target), encoding="utf-8")
    print(f"wrote {out / 'summary.csv'} and {out / 'summary.md'} ({len(rows)} cells)")
    if not args.no_figure:
        figure(rows, out / "sensitivity.png", args.target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
