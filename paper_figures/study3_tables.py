"""Tables of the third study (AUC intervals, CV AUC bias, comparisons), with the uncertainty of every rate.

    python paper_figures/study3_tables.py --chunks results/study3/chunks --out results/study3 \
        --config experiments/study3.toml

Reads the committed chunk files only (``cudbound.coverage.chunks``) and writes to ``--out``:

* ``auc_cells.csv``: one row per (data set, n, AUC interval): repetitions, covered, coverage and
  its exact (Clopper-Pearson) 95% interval, mean and median width, the shares of misses below
  (target under the interval) and above, where the coverage's interval lies against 0.95, and
  the share of intervals holding the cell's mean target (the average over the repetitions: what
  an interval for the procedure's expected AUC, rather than this fit's, would have to hold);
* ``estimates.csv``: one row per (data set, n, CV AUC estimate): the mean target, the mean
  estimate, the bias (estimate - target) with its standard error over the repetitions, the RMSE;
* ``comparison_cells.csv``: one row per (data set, n, comparison): the coverage of its interval of
  the difference (blank for a test without one), and its rejections at level 1 - confidence
  level among the repetitions whose true difference is within 0.005 of zero (``null_*``, its
  size) and among the others (``alt_*``, its power). A method without a p-value rejects when
  its interval excludes 0. Power counts the rejections whose estimate has the sign of the true
  difference; a rejection of the wrong sign is counted apart (``alt_wrong_sign``);
* ``tables.md``: the cells per n, and the per-method summaries the report quotes.

With ``--config`` the summaries count only the complete cells (the repetitions the configuration
asks for at their n) and name the others, so a study still running summarises what it has.
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import LABELS, chunk_tasks, order, write_csv  # noqa: E402

from cudbound.coverage.auc_config import COMPARISON_PREFIX, ESTIMATES  # noqa: E402
from cudbound.coverage.store import coverage_interval  # noqa: E402

NULL_BAND = 0.005
"""A true difference within this of zero counts as no difference (the size); beyond it, power."""

AUC_COLUMNS = ("dataset", "n", "method", "reps", "covered", "coverage", "coverage_low", "coverage_high", "mean_width",
               "median_width", "miss_below", "miss_above", "position", "coverage_of_mean_target")
ESTIMATE_COLUMNS = ("dataset", "n", "estimate", "reps", "mean_target", "mean_estimate", "bias", "bias_se", "rmse")
COMPARISON_COLUMNS = ("dataset", "n", "method", "reps", "covered", "coverage", "coverage_low", "coverage_high",
                      "mean_width", "position", "coverage_of_mean_target", "null_reps", "null_rejections", "alt_reps", "alt_rejections",
                      "alt_wrong_sign")


def read(chunks: Path) -> dict:
    """(data set, n, label) -> list of result rows over the chunks' tasks."""
    out = defaultdict(list)
    for task in chunk_tasks(chunks):
        for r in task["rows"]:
            out[(task["dataset"], task["n"], r["method"])].append(r)
    return out


def _coverage(rows, target):
    covered = [r["covered"] for r in rows if r["covered"] is not None]
    if not covered:
        return {}
    k, reps = int(sum(covered)), len(covered)
    lo, hi = coverage_interval(k, reps)
    widths = [r["width"] for r in rows if r["width"] is not None]
    mean_target = float(np.mean([r["target"] for r in rows]))
    of_mean = float(np.mean([r["low"] <= mean_target <= r["high"] for r in rows if r["low"] is not None]))
    return {"covered": k, "coverage": k / reps, "coverage_low": lo, "coverage_high": hi,
            "mean_width": float(np.mean(widths)), "median_width": float(np.median(widths)),
            "position": "above" if lo > target else "below" if hi < target else "straddles",
            "coverage_of_mean_target": of_mean}


def rejects(row, alpha: float) -> bool:
    """The test's decision at level ``alpha``: its p-value, else whether its interval excludes 0 (a
    row with neither, which a study does not write, is an error)."""
    if row["pvalue"] is not None:
        return row["pvalue"] < alpha
    if row["low"] is None:
        raise ValueError(f"comparison {row['method']!r} has neither a p-value nor an interval.")
    return not (row["low"] <= 0.0 <= row["high"])


def level_of(chunks: Path) -> float:
    """The study's confidence level, from the chunks' ``protocol.json``."""
    import json
    return float(json.loads((Path(chunks) / "protocol.json").read_text())["protocol"]["confidence_level"])


def cells(chunks: Path, target: float | None = None) -> tuple[list, list, list]:
    """(AUC interval cells, estimate cells, comparison cells) of the chunks; ``target`` (the nominal
    coverage, and 1 - the tests' level) is the study's confidence level unless given."""
    auc, est, cmp_ = [], [], []
    target = level_of(chunks) if target is None else target
    alpha = 1.0 - target
    for (d, n, m), rows in read(chunks).items():
        reps = len(rows)
        if m in ESTIMATES:
            t = np.array([r["target"] for r in rows])
            e = np.array([r["centre"] for r in rows])
            err = e - t
            est.append({"dataset": d, "n": n, "estimate": m, "reps": reps, "mean_target": float(t.mean()),
                        "mean_estimate": float(e.mean()), "bias": float(err.mean()),
                        "bias_se": float(err.std(ddof=1) / np.sqrt(reps)) if reps > 1 else float("nan"),
                        "rmse": float(np.sqrt(np.mean(err ** 2)))})
        elif m.startswith(COMPARISON_PREFIX):
            cov = _coverage(rows, target)
            null = [r for r in rows if abs(r["target"]) <= NULL_BAND]
            alt = [r for r in rows if abs(r["target"]) > NULL_BAND]
            cmp_.append({"dataset": d, "n": n, "method": m[len(COMPARISON_PREFIX):], "reps": reps,
                         **{k: cov.get(k) for k in ("covered", "coverage", "coverage_low", "coverage_high",
                                                    "mean_width", "position", "coverage_of_mean_target")},
                         "null_reps": len(null), "null_rejections": sum(rejects(r, alpha) for r in null),
                         "alt_reps": len(alt),
                         "alt_rejections": sum(rejects(r, alpha) and r["centre"] * r["target"] > 0 for r in alt),
                         "alt_wrong_sign": sum(rejects(r, alpha) and r["centre"] * r["target"] <= 0 for r in alt)})
        else:
            cov = _coverage(rows, target)
            below = np.mean([r["target"] < r["low"] for r in rows])
            above = np.mean([r["target"] > r["high"] for r in rows])
            auc.append({"dataset": d, "n": n, "method": m, "reps": reps, **cov, "miss_below": float(below),
                        "miss_above": float(above)})
    return auc, est, cmp_


def complete(rows, config) -> list:
    """The cells of ``rows`` that hold the repetitions ``config`` asks for at their n (all without it)."""
    if config is None:
        return list(rows)
    return [r for r in rows if r["reps"] >= config.repetitions_for(r["n"])]


def _todo(rows, config) -> list[str]:
    if config is None:
        return []
    done = {(r["dataset"], r["n"]) for r in complete(rows, config)}
    pairs = [(d.label, n) for d in config.datasets for n in config.sizes_of(d)]
    todo = [f"{LABELS.get(d, d)} n = {n}" for d, n in sorted(pairs, key=lambda c: (c[1], pairs.index(c)))
            if (d, n) not in done]
    return [f"Complete cells only: {len(done)} of the {len(pairs)} (data set, n) pairs of `{config.name}` have their "
            "repetitions" + ("; still to finish: " + ", ".join(todo) if todo else "") + ".", ""]


def _methods(rows, key="method", known=()) -> list:
    present = {r[key] for r in rows}
    return [m for m in known if m in present] + sorted(present - set(known))


def _grid(rows, methods, n, key, fmt, mark=False, col="method") -> list[str]:
    by = {(r["dataset"], r[col]): r for r in rows if r["n"] == n}
    mk = {"above": "+", "below": "-", "straddles": "", None: ""}
    out = ["| data set | reps | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    for d in order({r["dataset"] for r in rows if r["n"] == n}):
        reps = max((by[(d, m)]["reps"] for m in methods if (d, m) in by), default=0)
        values = []
        for m in methods:
            c = by.get((d, m))
            values.append("" if c is None or c.get(key) is None else fmt.format(c[key])
                          + (mk[c.get("position")] if mark else ""))
        out.append(f"| {LABELS.get(d, d)} | {reps} | " + " | ".join(values) + " |")
    return out + [""]


def _position_summary(rows, methods, title) -> list[str]:
    out = [f"### {title}: cells whose coverage interval lies above, straddles or lies below the level", "",
           "The mean coverage over the cells, of the target and of the cell's mean target (what an interval "
           "for the procedure's expected value would have to hold), beside.", "",
           "| n | method | above | straddles | below | mean width | mean coverage | mean coverage of the mean target |",
           "|---|---|---|---|---|---|---|---|"]
    for n in sorted({r["n"] for r in rows}):
        for m in methods:
            mine = [r for r in rows if r["n"] == n and r["method"] == m and r.get("position")]
            if not mine:
                continue
            count = {p: sum(r["position"] == p for r in mine) for p in ("above", "straddles", "below")}
            out.append(f"| {n} | {m} | {count['above']} | {count['straddles']} | {count['below']} | "
                       f"{np.mean([r['mean_width'] for r in mine]):.3f} | {np.mean([r['coverage'] for r in mine]):.3f} | "
                       f"{np.mean([r['coverage_of_mean_target'] for r in mine]):.3f} |")
    return out + [""]


def _rate(k: int, reps: int) -> str:
    """k / reps with its exact (Clopper-Pearson) 95% interval, or "-" without repetitions."""
    if not reps:
        return "-"
    low, high = coverage_interval(k, reps)
    return f"{k / reps:.3f} [{low:.3f}, {high:.3f}]"


def markdown(auc, est, cmp_, config=None, target=0.95) -> str:
    from cudbound.auc.registry import method_names as auc_names
    from cudbound.compare import method_names as comparison_names
    auc_methods = _methods(auc, known=auc_names())
    cmp_methods = _methods(cmp_, known=comparison_names())
    estimates = _methods(est, key="estimate", known=ESTIMATES)
    out = ["# Study 3: AUC intervals, the bias of the CV AUC, comparisons of two classifiers", "",
           f"Coverage of {target:.2f} intervals: `+` its exact 95% interval lies above {target}, `-` below, "
           f"nothing: it straddles {target}.", ""]
    out += ["## 1. AUC intervals (target: the AUC of A fitted on the n points, on the test set)", ""]
    for n in sorted({r["n"] for r in auc}):
        out += [f"### n = {n}: coverage", ""] + _grid(auc, auc_methods, n, "coverage", "{:.3f}", mark=True)
        out += [f"### n = {n}: mean width", ""] + _grid(auc, auc_methods, n, "mean_width", "{:.3f}")
    done = complete(auc, config)
    out += _todo(auc, config) + _position_summary(done, auc_methods, "AUC intervals per method")
    out += ["## 2. The cross-validated AUC: bias (estimate - target)", ""]
    for n in sorted({r["n"] for r in est}):
        out += [f"### n = {n}: bias", ""] + _grid(est, estimates, n, "bias", "{:+.3f}", col="estimate")
    done = complete(est, config)
    out += _todo(est, config)
    out += ["### CV AUC per estimate: mean bias, mean |bias| and mean RMSE over the data sets", "",
            "| n | estimate | mean bias | mean abs bias | mean RMSE | cells with bias below -2 SE / within / above |",
            "|---|---|---|---|---|---|"]
    for n in sorted({r["n"] for r in done}):
        for e in estimates:
            mine = [r for r in done if r["n"] == n and r["estimate"] == e]
            if not mine:
                continue
            low = sum(r["bias"] < -2 * r["bias_se"] for r in mine)
            high = sum(r["bias"] > 2 * r["bias_se"] for r in mine)
            out.append(f"| {n} | {e} | {np.mean([r['bias'] for r in mine]):+.3f} | "
                       f"{np.mean([abs(r['bias']) for r in mine]):.3f} | {np.mean([r['rmse'] for r in mine]):.3f} | "
                       f"{low} / {len(mine) - low - high} / {high} |")
    out += ["", "## 3. Comparisons of A and B (target: the true difference A - B on the test set)", "",
            "The target is the difference of the two classifiers fitted on the n points, err_A(T) - err_B(T) "
            "(for DeLong's test auc_A(T) - auc_B(T)), the conditional difference a user of these n points has; "
            "the tests on repeated splits (5x2cv, corrected t, nested CV) estimate the expected difference of "
            "the two procedures at smaller training sizes, so part of what they miss here is that gap.", ""]
    with_interval = [r for r in cmp_ if r.get("position")]
    cmp_int = _methods(with_interval, known=comparison_names())
    for n in sorted({r["n"] for r in with_interval}):
        out += [f"### n = {n}: coverage of the interval of the difference", ""]
        out += _grid(with_interval, cmp_int, n, "coverage", "{:.3f}", mark=True)
    done = complete(cmp_, config)
    out += _todo(cmp_, config) + _position_summary([r for r in done if r.get("position")], cmp_int,
                                                   "Intervals of the difference per method")
    out += [f"### Tests: rejections at level {1 - target:.2f}, pooled over the data sets", "",
            f"Size: the repetitions whose true difference is within {NULL_BAND} of 0; power: the others, a "
            "rejection counted when its estimate has the sign of the true difference (wrong-sign rejections "
            "apart). Exact 95% intervals in brackets. A method without a p-value rejects when its interval "
            "excludes 0.", "",
            "| n | method | size: rejections / reps | size | power: rejections / reps | power | wrong sign |",
            "|---|---|---|---|---|---|---|"]
    for n in sorted({r["n"] for r in done}):
        for m in cmp_methods:
            mine = [r for r in done if r["n"] == n and r["method"] == m]
            if not mine:
                continue
            k0, r0 = sum(r["null_rejections"] for r in mine), sum(r["null_reps"] for r in mine)
            k1, r1 = sum(r["alt_rejections"] for r in mine), sum(r["alt_reps"] for r in mine)
            wrong = sum(r["alt_wrong_sign"] for r in mine)
            out.append(f"| {n} | {m} | {k0} / {r0} | {_rate(k0, r0)} | {k1} / {r1} | {_rate(k1, r1)} | {wrong} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", required=True, help="the study's chunk directory")
    parser.add_argument("--out", required=True, help="directory for the CSV files and tables.md")
    parser.add_argument("--target", type=float, default=None,
                        help="the nominal coverage (default: the study's confidence level, from protocol.json)")
    parser.add_argument("--config", help="the study's TOML: the summaries then count complete cells only")
    args = parser.parse_args(argv)
    config = None
    if args.config:
        from cudbound.coverage import load_config
        config = load_config(args.config)
    if not (Path(args.chunks) / "protocol.json").is_file():
        parser.error(f"no chunk directory at {args.chunks} (its protocol.json is missing)")
    target = level_of(Path(args.chunks)) if args.target is None else args.target
    auc, est, cmp_ = cells(Path(args.chunks), target)
    if not (auc or est or cmp_):
        parser.error(f"no chunk files under {args.chunks}")
    rank = {d: i for i, d in enumerate(order({r["dataset"] for r in auc + est + cmp_}))}
    for rows, key in ((auc, "method"), (est, "estimate"), (cmp_, "method")):
        names = _methods(rows, key=key)
        rows.sort(key=lambda r: (r["n"], rank[r["dataset"]], names.index(r[key])))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "auc_cells.csv", AUC_COLUMNS, auc)
    write_csv(out / "estimates.csv", ESTIMATE_COLUMNS, est)
    write_csv(out / "comparison_cells.csv", COMPARISON_COLUMNS, cmp_)
    (out / "tables.md").write_text(markdown(auc, est, cmp_, config, target), encoding="utf-8")
    print(f"wrote {out}/auc_cells.csv, estimates.csv, comparison_cells.csv and tables.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
