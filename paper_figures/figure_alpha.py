"""Coverage and mean width of the CUD interval against alpha_n (1, sqrt(n), n, n^2).

    python paper_figures/figure_alpha.py --store results/alpha.sqlite --out results/figure_alpha.png

Reads every CUD row of the store (the method label does not matter: the rows are grouped
by their stored ``alpha_n`` relative to n), so a study with CUD variants at several
alpha_n (``experiments/alpha.toml``) gives one line per data set and n. Left: coverage;
right: mean width; x: alpha_n on a log scale, labelled by its rule.
"""
from __future__ import annotations

import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import LABELS, figure_args, order, pyplot, save  # noqa: E402

from cudbound.coverage import ResultStore  # noqa: E402

RULES = {"1": lambda n: 1.0, "sqrt(n)": math.sqrt, "n": float, "n^2": lambda n: float(n) ** 2}


def rule_of(alpha: float, n: int) -> str:
    for name, f in RULES.items():
        if math.isclose(alpha, f(n), rel_tol=1e-9):
            return name
    return f"{alpha:g}"


def series(store_path):
    """(data set, n) -> rule -> (coverage, mean width, reps), for every CUD row with an alpha_n."""
    acc = defaultdict(lambda: defaultdict(list))
    with ResultStore(store_path) as store:
        for r in store.results():
            if r["alpha_n"] is not None:
                acc[(r["dataset"], r["n"])][rule_of(r["alpha_n"], r["n"])].append((r["covered"], r["width"]))
    return {key: {rule: (float(np.mean([c for c, _ in v])), float(np.mean([w for _, w in v])), len(v))
                  for rule, v in rules.items()} for key, rules in acc.items()}


def main(argv=None) -> int:
    parser, args = figure_args(__doc__, "results/figure_alpha.png", argv)
    plt = pyplot()

    data = series(args.store)
    if not data:
        parser.error(f"the store {args.store} holds no CUD results")
    fig, (left, right) = plt.subplots(1, 2, figsize=(10.0, 4.2), dpi=150)
    xs = list(RULES)
    for d in order({k[0] for k in data}):
        for n in sorted(k[1] for k in data if k[0] == d):
            rules = data[(d, n)]
            present = [r for r in xs if r in rules]
            pos = [xs.index(r) for r in present]
            label = f"{LABELS.get(d, d)}, n={n}"
            left.plot(pos, [rules[r][0] for r in present], marker="o", label=label)
            right.plot(pos, [rules[r][1] for r in present], marker="o", label=label)
    for ax, name in ((left, "coverage"), (right, "mean width")):
        ax.set_xticks(range(len(xs)), ["1", "sqrt(n)", "n", "n^2"])
        ax.set_xlabel("alpha_n")
        ax.set_ylabel(name)
    left.axhline(args.target, color="grey", linestyle="--", linewidth=1)
    right.legend(fontsize=7, loc="upper right", ncol=2)
    fig.suptitle("CUD interval against the neighbourhood scale alpha_n")
    fig.tight_layout()
    save(fig, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
