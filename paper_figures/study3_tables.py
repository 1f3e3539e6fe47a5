"""Tables of the third study (AUC intervals, CV AUC bias, comparisons), with the uncertainty of every rate.

    python paper_figures/study3_tables.py --chunks results/study3/chunks --out results/study3 \
        --config experiments/study3.toml

Reads the committed chunk files only (``cudbound.coverage.chunks``) and writes to ``--out``:

* ``auc_cells.csv``: one row per (data set, n, AUC interval): repetitions, covered, coverage and
  its exact (Clopper-Pearson) 95% interval, mean and median width, the shares of misses below
  (target under the interval) and above, where the coverage's interval lies against 0.95, the
  share of intervals holding the cell's mean target (the average over the repetitions: what an
  interval for the procedure's expected AUC, rather than this fit's, would have to hold); the
  mean target, its mean standard error (DeLong's, on the test set, stored with each row as
  ``target_se``), ``noise_shift`` (the expected coverage were every target to carry one more
  draw of its noise, normal at its standard error, minus the coverage) and ``noisy_target`` (1
  when it exceeds 0.01 in size: ``common.target_noise``), and
  ``degenerate`` (1 when the mean target AUC is within 0.02 of 0.5: a scorer without signal);
* ``estimates.csv``: one row per (data set, n, CV AUC estimate): the mean target and its mean
  standard error, the mean estimate, the bias (estimate - target) with its standard error over
  the repetitions, the RMSE;
* ``comparison_cells.csv``: one row per (data set, n, comparison): which difference it addresses
  (``target_kind``: ``conditional``, of the two classifiers fitted on the n points, or ``expected``,
  of the two procedures; ``cudbound.compare.TARGETS``), the coverage of its interval of the
  conditional difference with its misses and target noise as above (blank for a test without an
  interval), ``null_design`` (1 on a design whose two procedures have equal expected error by
  construction: its size is measured there; its coverage still counts), and its rejections at level 1 - confidence level: all of them, those whose
  estimate has the sign of the method's own target (``right_sign``: the repetition's difference
  for a conditional test, the cell's mean difference for an expected one) and the others
  (``wrong_sign``). A method without a p-value rejects when its interval excludes 0;
* ``tables.md``: the cells per n (coverage marked ``+`` / ``-`` / nothing by its exact interval
  against the level, ``~`` a noisy target, ``=`` a degenerate cell), the per-method summaries
  (flagged cells kept out and named), the size of every test on the designs with no difference by
  construction, per design and n, and its power per data set and n and by bins of the true
  difference |A - B|, never pooled over designs' sizes and powers; every rate with its exact 95%
  interval.

With ``--supplement DIR`` (repeatable) the comparison rows of a supplementary study on the same tasks
(``experiments/study3_cud.toml``: ``cud``, in ``results/study3/chunks_cud``) join the base chunks'
rows, each first matched to the base task it supplements (:func:`supplement_rows`); the base rows are
read, never written. A supplement absent or partial adds what it has: its incomplete cells appear in
the per-n grids and stay out of the summaries, which name them.

With ``--config`` the summaries count only the complete cells (the repetitions the configuration
asks for at their n) and name the others, so a study still running summarises what it has. Rows
stored without ``target_se`` (chunks of an older run) leave the noise columns blank.
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (LABELS, MARKS, chunk_tasks, coverage_numbers, flagged, kept_out, null_by_construction,  # noqa: E402
                    order, sources, within, write_csv)

from cudbound.coverage.auc_config import COMPARISON_PREFIX, ESTIMATES  # noqa: E402
from cudbound.coverage.store import coverage_interval  # noqa: E402

DEGENERATE_AUC = 0.02
"""An AUC cell whose mean target is within this of 0.5 is degenerate (a scorer without signal)."""

BINS = (0.0, 0.02, 0.05, 0.10, 0.20)
"""Left edges of the bins of the true difference |A - B| for power: [0, 0.02), ..., [0.20, inf)."""

NOISE_COLUMNS = ("mean_target", "target_se", "noise_shift", "noisy_target", "degenerate")
AUC_COLUMNS = ("dataset", "n", "method", "reps", "covered", "coverage", "coverage_low", "coverage_high", "mean_width",
               "median_width", "miss_below", "miss_above", "position", "coverage_of_mean_target") + NOISE_COLUMNS
ESTIMATE_COLUMNS = ("dataset", "n", "estimate", "reps", "mean_target", "target_se", "mean_estimate", "bias", "bias_se",
                    "rmse")
COMPARISON_COLUMNS = ("dataset", "n", "method", "target_kind", "reps", "covered", "coverage", "coverage_low",
                      "coverage_high", "mean_width", "miss_below", "miss_above", "position", "coverage_of_mean_target"
                      ) + NOISE_COLUMNS[:-1] + ("null_design", "rejections", "right_sign", "wrong_sign")


SAME_PROTOCOL = ("kind", "seed", "confidence_level", "test_size", "loss", "cv", "bases", "bases_b", "sources")
"""The protocol entries a supplementary study must share with the base study (the tasks' draws and targets)."""

DRAW_COLUMNS = ("train_error", "true_error", "test_size", "redraws")
"""A task's columns that fingerprint its draw: a supplementary task must repeat the base task's."""


def read(chunks: Path, supplements=()) -> dict:
    """(data set, n, label) -> list of result rows over the chunks' tasks, and the supplements' rows
    (:func:`supplement_rows`)."""
    out = defaultdict(list)
    base = chunk_tasks(chunks)
    for task in base:
        for r in task["rows"]:
            out[(task["dataset"], task["n"], r["method"])].append(r)
    for directory in supplements:
        for key, r in supplement_rows(chunks, directory, base):
            out[key].append(r)
    return out


def _protocol(chunks: Path) -> dict:
    import json
    return json.loads((Path(chunks) / "protocol.json").read_text(encoding="utf-8"))["protocol"]


def supplement_rows(chunks: Path, supplement: Path, base=None) -> list:
    """((data set, n, label), row) of every comparison row of the supplementary chunk directory, each
    checked against the base study's chunks (``base``: their tasks, read if not given). A
    ValueError, naming the task, unless: the two protocols agree on :data:`SAME_PROTOCOL`; the base
    holds the task (data set, n, rep) with the same :data:`DRAW_COLUMNS`; the label is not a base
    label; and its target and target standard error are those of one of the base task's
    comparison rows (the difference err_A - err_B, or auc_A - auc_B), as the chunks write them."""
    mine, theirs = _protocol(supplement), _protocol(chunks)
    differ = [k for k in SAME_PROTOCOL if mine.get(k) != theirs.get(k)]
    if differ:
        raise ValueError(f"the supplement {supplement} is not on the tasks of {chunks}: its protocol differs in {differ}.")
    by_task = {(t["dataset"], t["n"], t["rep"]): t for t in (chunk_tasks(chunks) if base is None else base)}
    out = []
    for task in chunk_tasks(supplement):
        key = (task["dataset"], task["n"], task["rep"])
        old = by_task.get(key)
        if old is None:
            raise ValueError(f"the supplement {supplement} holds task {key}, which {chunks} does not.")
        if any(task[c] != old[c] for c in DRAW_COLUMNS):
            raise ValueError(f"task {key}: the supplement {supplement} has another draw than {chunks} "
                             f"({', '.join(f'{c} {task[c]} vs {old[c]}' for c in DRAW_COLUMNS if task[c] != old[c])}).")
        labels = {r["method"] for r in old["rows"]}
        targets = {(r["target"], _se(r)) for r in old["rows"] if r["method"].startswith(COMPARISON_PREFIX)}
        for r in task["rows"]:
            if not r["method"].startswith(COMPARISON_PREFIX) or r["method"] in labels:
                raise ValueError(f"task {key}: the supplement {supplement} has a row {r['method']!r}, which is not "
                                 f"a comparison the base lacks.")
            if (r["target"], _se(r)) not in targets:
                raise ValueError(f"task {key}: the supplement's {r['method']} row has target {r['target']} "
                                 f"(SE {_se(r)}), none of the base's comparison targets {sorted(targets, key=str)}.")
            out.append(((task["dataset"], task["n"], r["method"]), r))
    return out


def _se(row):
    return row.get("details", {}).get("target_se")


def _coverage(rows, target):
    """The cell's mean target and its mean standard error (None when a row lacks it), and the coverage
    numbers of the rows with an interval (:func:`common.coverage_numbers`; none for a test without one)."""
    se = [_se(r) for r in rows]
    out = {"mean_target": float(np.mean([r["target"] for r in rows])),
           "target_se": None if None in se else float(np.mean(se))}
    ok = [r for r in rows if r["covered"] is not None]
    if not ok:
        return out
    low, high = np.array([r["low"] for r in ok]), np.array([r["high"] for r in ok])
    widths, mean_target = high - low, out["mean_target"]
    return {**coverage_numbers(low, high, [r["target"] for r in ok], [r["covered"] for r in ok],
                               [_se(r) for r in ok], target),
            "reps": len(rows), "mean_width": float(np.mean(widths)), "median_width": float(np.median(widths)),
            "coverage_of_mean_target": float(np.mean((low <= mean_target) & (mean_target <= high))), **out}


def rejects(row, alpha: float) -> bool:
    """The test's decision at level ``alpha``: its p-value, else whether its interval excludes 0 (a
    row with neither, which a study does not write, is an error)."""
    if row["pvalue"] is not None:
        return row["pvalue"] < alpha
    if row["low"] is None:
        raise ValueError(f"comparison {row['method']!r} has neither a p-value nor an interval.")
    return not (row["low"] <= 0.0 <= row["high"])


def target_kind(method: str) -> str | None:
    """The difference a comparison addresses, from its registry entry (``cudbound.compare.TARGETS``);
    None for a method not registered or not stating it."""
    from cudbound.compare import get_method, method_names
    return get_method(method).target if method in method_names() else None


def own_targets(rows, kind) -> np.ndarray:
    """Each repetition's target as the method addresses it: its own difference (a conditional test),
    or the cell's mean difference, the design's expected one at n (an expected test)."""
    t = np.array([r["target"] for r in rows], dtype=float)
    return np.full_like(t, t.mean()) if kind == "expected" else t


def level_of(chunks: Path) -> float:
    """The study's confidence level, from the chunks' ``protocol.json``."""
    import json
    return float(json.loads((Path(chunks) / "protocol.json").read_text())["protocol"]["confidence_level"])


def tables(chunks: Path, target: float | None = None, supplements=()) -> dict:
    """Every table of the chunks: ``auc``, ``estimates``, ``comparisons`` (the cells), and ``decisions``,
    (data set, n, comparison) -> (the method's own targets, its rejections, those of the right sign), for
    :func:`power_bins`. ``target`` (the nominal coverage, and 1 - the tests' level) is the study's
    confidence level unless given; ``supplements``: chunk directories of supplementary comparisons
    (:func:`read`)."""
    auc, est, cmp_, decisions = [], [], [], {}
    target = level_of(chunks) if target is None else target
    alpha = 1.0 - target
    names = sources(chunks)
    for (d, n, m), rows in read(chunks, supplements).items():
        reps = len(rows)
        if m in ESTIMATES:
            t = np.array([r["target"] for r in rows])
            e = np.array([r["centre"] for r in rows])
            err = e - t
            est.append({"dataset": d, "n": n, "estimate": m, "reps": reps, "mean_target": float(t.mean()),
                        "target_se": _coverage(rows, target)["target_se"],
                        "mean_estimate": float(e.mean()), "bias": float(err.mean()),
                        "bias_se": float(err.std(ddof=1) / np.sqrt(reps)) if reps > 1 else float("nan"),
                        "rmse": float(np.sqrt(np.mean(err ** 2)))})
        elif m.startswith(COMPARISON_PREFIX):
            method = m[len(COMPARISON_PREFIX):]
            kind = target_kind(method)
            own = own_targets(rows, kind)
            reject = np.array([rejects(r, alpha) for r in rows])
            right = reject & (np.array([r["centre"] for r in rows]) * own > 0)
            decisions[(d, n, method)] = (own, reject, right)
            cell = {k: None for k in COMPARISON_COLUMNS}
            cell.update(_coverage(rows, target))
            cell.update({"dataset": d, "n": n, "method": method, "target_kind": kind, "reps": reps,
                         "null_design": int(null_by_construction(names.get(d, d))), "rejections": int(reject.sum()),
                         "right_sign": int(right.sum()), "wrong_sign": int(reject.sum() - right.sum())})
            cmp_.append(cell)
        else:
            cov = _coverage(rows, target)
            auc.append({"dataset": d, "n": n, "method": m, **cov,
                        "degenerate": int(within(cov["mean_target"] - 0.5, DEGENERATE_AUC))})
    return {"auc": auc, "estimates": est, "comparisons": cmp_, "decisions": decisions}


def cells(chunks: Path, target: float | None = None, supplements=()) -> tuple[list, list, list]:
    """(AUC interval cells, estimate cells, comparison cells) of the chunks (:func:`tables`)."""
    t = tables(chunks, target, supplements)
    return t["auc"], t["estimates"], t["comparisons"]


def _bin(x: float) -> int:
    """The index of the bin of |x| (:data:`BINS`), |x| read to 9 decimals (:func:`common.within`)."""
    r = round(abs(float(x)), 9)
    return sum(r >= edge for edge in BINS[1:])


def bin_label(i: int) -> str:
    return f"[{BINS[i]:.2f}, {BINS[i + 1]:.2f})" if i + 1 < len(BINS) else f">= {BINS[i]:.2f}"


def power_bins(decisions: dict, cells_: list) -> list[dict]:
    """Power by bins of the true difference |A - B|, per n and method, over the cells of ``cells_`` that
    are not null by construction: each repetition binned by the method's own target (:func:`own_targets`),
    a rejection counted as power when its estimate has that target's sign, else as wrong sign.
    ``decisions``: :func:`tables`'s."""
    acc: dict = defaultdict(lambda: {"reps": 0, "right_sign": 0, "wrong_sign": 0, "datasets": set()})
    for c in cells_:
        if c["null_design"]:
            continue
        own, reject, right = decisions[(c["dataset"], c["n"], c["method"])]
        for t, rej, ok in zip(own, reject, right):
            a = acc[(c["n"], c["method"], _bin(t))]
            a["reps"] += 1
            a["right_sign"] += int(ok)
            a["wrong_sign"] += int(rej and not ok)
            a["datasets"].add(c["dataset"])
    return [{"n": n, "method": m, "bin": bin_label(b), "bin_index": b, "datasets": len(a["datasets"]),
             "reps": a["reps"], "right_sign": a["right_sign"], "wrong_sign": a["wrong_sign"]}
            for (n, m, b), a in sorted(acc.items(), key=lambda kv: (kv[0][0], kv[0][2]))]


def complete(rows, config, own=None) -> list:
    """The cells of ``rows`` that hold the repetitions ``config`` asks for at their n (all without it);
    ``own``: method -> the configuration of the supplementary study holding its rows, whose repetitions
    its cells must hold instead."""
    def needed(r):
        cfg = (own or {}).get(r.get("method")) or config
        return 0 if cfg is None else cfg.repetitions_for(r["n"])
    return [r for r in rows if r["reps"] >= needed(r)]


def _todo(rows, config) -> list[str]:
    if config is None:
        return []
    done = {(r["dataset"], r["n"]) for r in complete(rows, config)}
    pairs = [(d.label, n) for d in config.datasets for n in config.sizes_of(d)]
    todo = [f"{LABELS.get(d, d)} n = {n}" for d, n in sorted(pairs, key=lambda c: (c[1], pairs.index(c)))
            if (d, n) not in done]
    return [f"Complete cells only: {len(done)} of the {len(pairs)} (data set, n) pairs of `{config.name}` have their "
            "repetitions" + ("; still to finish: " + ", ".join(todo) if todo else "") + ".", ""]


def _todo_methods(rows, config, own) -> list[str]:
    """A line per supplementary method (``own``: method -> its study's configuration, or None): its
    complete cells (the cells its summaries count) of the study's (data set, n) pairs, and the
    repetitions a complete cell holds."""
    if config is None:
        return []
    pairs = [(d.label, n) for d in config.datasets for n in config.sizes_of(d)]
    out = []
    for m, cfg in own.items():
        done = {(r["dataset"], r["n"]) for r in complete([r for r in rows if r["method"] == m], config, own)}
        reps = ", ".join(f"{(cfg or config).repetitions_for(n)} at n = {n}" for n in config.sizes)
        out.append(f"`{m}` (supplementary chunks{f' of `{cfg.name}`' if cfg else ''}): complete cells only, {len(done)} "
                   f"of the {len(pairs)}, a complete cell holding {reps}; the per-n grids show its incomplete cells "
                   "too, the summaries leave them out.")
    return out + ([""] if out else [])


def _methods(rows, key="method", known=()) -> list:
    present = {r[key] for r in rows}
    return [m for m in known if m in present] + sorted(present - set(known))


def _mark(c) -> str:
    return (MARKS[c.get("position")] + ("~" if c.get("noisy_target") else "") + ("=" if c.get("degenerate") else "")
            + ("0" if c.get("null_design") else ""))


def _grid(rows, methods, n, key, fmt, mark=False, col="method", extra=()) -> list[str]:
    """A table of ``key`` per data set (rows) and method (columns) at n; ``extra``: (heading, function of
    the data set's cells) columns after ``reps``."""
    by = {(r["dataset"], r[col]): r for r in rows if r["n"] == n}
    out = ["| data set | reps | " + "".join(f"{h} | " for h, _ in extra) + " | ".join(methods) + " |",
           "|---|---|" + "---|" * (len(extra) + len(methods))]
    for d in order({r["dataset"] for r in rows if r["n"] == n}):
        mine = [by[(d, m)] for m in methods if (d, m) in by]
        reps = max((c["reps"] for c in mine), default=0)
        values = []
        for m in methods:
            c = by.get((d, m))
            values.append("" if c is None or c.get(key) is None else
                          (fmt(c) if callable(fmt) else fmt.format(c[key])) + (_mark(c) if mark else ""))
        out.append(f"| {LABELS.get(d, d)} | {reps} | " + "".join(f"{f(mine)} | " for _, f in extra)
                   + " | ".join(values) + " |")
    return out + [""]


def _mean_of(key, fmt="{:.3f}"):
    """An extra column of :func:`_grid`: the first cell's ``key`` (the same for every method)."""
    def f(mine):
        v = next((c.get(key) for c in mine if c.get(key) is not None), None)
        return "" if v is None else fmt.format(v)
    return f


def _position_summary(rows, methods, title) -> list[str]:
    out = [f"### {title}: cells whose coverage interval lies above, straddles or lies below the level", "",
           "The mean coverage over the cells, of the target and of the cell's mean target (what an interval "
           "for the procedure's expected value would have to hold), and the mean shares of misses below and "
           "above the interval, beside.", ""]
    out += kept_out(rows)
    out += ["| n | method | above | straddles | below | mean width | mean coverage | mean coverage of the mean target "
            "| mean miss below | mean miss above |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for n in sorted({r["n"] for r in rows}):
        for m in methods:
            mine = [r for r in rows if r["n"] == n and r["method"] == m and r.get("position") and not flagged(r)]
            if not mine:
                continue
            count = {p: sum(r["position"] == p for r in mine) for p in ("above", "straddles", "below")}
            mean = {k: np.mean([r[k] for r in mine]) for k in ("mean_width", "coverage", "coverage_of_mean_target",
                                                               "miss_below", "miss_above")}
            out.append(f"| {n} | {m} | {count['above']} | {count['straddles']} | {count['below']} | "
                       f"{mean['mean_width']:.3f} | {mean['coverage']:.3f} | {mean['coverage_of_mean_target']:.3f} | "
                       f"{mean['miss_below']:.3f} | {mean['miss_above']:.3f} |")
    return out + [""]


def _rate(k: int, reps: int) -> str:
    """k / reps with its exact (Clopper-Pearson) 95% interval, or "-" without repetitions."""
    if not reps:
        return "-"
    low, high = coverage_interval(k, reps)
    return f"{k / reps:.3f} [{low:.3f}, {high:.3f}]"


_KIND_TEXT = {"conditional": "each repetition's own difference on the test set",
              "expected": "the cell's mean difference (the design's expected difference at n)",
              None: "each repetition's own difference (the method states no target)"}


def _in_order(cells_, methods) -> list:
    """``cells_`` by n, then data set (the paper's order), then method (``methods``' order)."""
    rank = {d: i for i, d in enumerate(order({c["dataset"] for c in cells_}))}
    return sorted(cells_, key=lambda c: (c["n"], rank[c["dataset"]], methods.index(c["method"])))


def _comparison_section(cmp_, decisions, methods, target, config, own=None) -> list[str]:
    alpha = 1 - target
    done = complete(cmp_, config, own)
    bins = power_bins(decisions, done)
    out = ["### Which difference each comparison addresses", "",
           "`conditional`: the difference of the two classifiers fitted on the n points (the tests on one set of "
           "predictions); `expected`: the expected difference of the two procedures at n (the tests on refits "
           "over repeated splits; `cudbound.compare.TARGETS`). Power scores each against its own target.", "",
           "| method | target | power scored against |", "|---|---|---|"]
    kinds = {r["method"]: r["target_kind"] for r in cmp_}
    out += [f"| {m} | {kinds[m] or '-'} | {_KIND_TEXT[kinds[m]]} |" for m in methods] + [""]
    null = [r for r in done if r["null_design"]]
    out += [f"### Size: rejections at level {alpha:.2f} on the designs with no difference by construction", ""]
    if not null:
        out += ["No design of these chunks has two procedures of equal expected error by construction, so no size "
                "is measured here (real data give no null by construction).", ""]
    else:
        out += ["Per design and n (never pooled); exact 95% intervals in brackets. A method without a p-value "
                "rejects when its interval excludes 0.", "",
                "| n | design | method | rejections / reps | size |", "|---|---|---|---|---|"]
        out += [f"| {c['n']} | {LABELS.get(c['dataset'], c['dataset'])} | {c['method']} | {c['rejections']} / "
                f"{c['reps']} | {_rate(c['rejections'], c['reps'])} |" for c in _in_order(null, methods)] + [""]
    alt = [r for r in done if not r["null_design"]]
    out += [f"### Power per data set: rejections at level {alpha:.2f} whose estimate has the sign of the method's "
            "own target", "",
            "Per data set and n (never pooled); wrong-sign rejections apart; exact 95% intervals in brackets. "
            "Mean difference: the mean of err_A(T) - err_B(T) over the repetitions (for DeLong's test, of "
            "auc_A(T) - auc_B(T)).", "",
            "| n | data set | method | mean difference | rejections / reps | power | wrong sign |",
            "|---|---|---|---|---|---|---|"]
    out += [f"| {c['n']} | {LABELS.get(c['dataset'], c['dataset'])} | {c['method']} | {c['mean_target']:+.3f} | "
            f"{c['right_sign']} / {c['reps']} | {_rate(c['right_sign'], c['reps'])} | {c['wrong_sign']} |"
            for c in _in_order(alt, methods)]
    out += ["", f"### Power by the size of the true difference |A - B|, at level {alpha:.2f}", "",
            "Each repetition of a design that is not null by construction, binned by the absolute value of the "
            "method's own target (a conditional test: its repetition's difference; an expected test: its cell's "
            "mean difference, so a whole cell falls in one bin); data sets: how many designs fill the bin. "
            "DeLong's test's difference is of AUCs.", "",
            "| n | bin | method | data sets | rejections / reps | power | wrong sign |", "|---|---|---|---|---|---|---|"]
    for n in sorted({b["n"] for b in bins}):
        for i in range(len(BINS)):
            for m in methods:
                b = next((b for b in bins if (b["n"], b["bin_index"], b["method"]) == (n, i, m)), None)
                if b is not None:
                    out.append(f"| {n} | {b['bin']} | {m} | {b['datasets']} | {b['right_sign']} / {b['reps']} | "
                               f"{_rate(b['right_sign'], b['reps'])} | {b['wrong_sign']} |")
    return out + [""]


def markdown(auc, est, cmp_, config=None, target=0.95, decisions=None, supplementary=None) -> str:
    """tables.md; the size and power tables need ``decisions`` (:func:`tables`); ``supplementary``: the
    comparisons read from supplementary chunks -> their study's configuration (its repetitions make a
    complete cell; None: ``config``'s)."""
    supplementary = supplementary or {}
    from cudbound.auc.registry import method_names as auc_names
    from cudbound.compare import method_names as comparison_names
    auc_methods = _methods(auc, known=auc_names())
    cmp_methods = _methods(cmp_, known=comparison_names())
    estimates = _methods(est, key="estimate", known=ESTIMATES)
    out = ["# Study 3: AUC intervals, the bias of the CV AUC, comparisons of two classifiers", "",
           f"Coverage of {target:.2f} intervals: `+` its exact 95% interval lies above {target}, `-` below, "
           f"nothing: it straddles {target}; `~` a noisy target (one more draw of every "
           "repetition's target, normal at its own standard error, moves the expected coverage by more than "
           "0.01); `=` a degenerate AUC cell (an AUC within 0.02 of 0.5 on average: a scorer without signal). "
           "Flagged cells are kept out of the per-method counts. `0` a comparison on a design with no difference "
           "by construction (its coverage counts: the difference of the two fitted classifiers is spread around "
           "0, not 0; its size is measured there and only there). Target SE: the mean standard "
           "error of the target on the test set (blank for rows stored without it).", ""]
    out += ["## 1. AUC intervals (target: the AUC of A fitted on the n points, on the test set)", ""]
    target_columns = (("mean AUC", _mean_of("mean_target")), ("target SE", _mean_of("target_se")))
    for n in sorted({r["n"] for r in auc}):
        out += [f"### n = {n}: coverage", ""] + _grid(auc, auc_methods, n, "coverage", "{:.3f}", mark=True,
                                                      extra=target_columns)
        out += [f"### n = {n}: misses below / above the interval", ""]
        out += _grid(auc, auc_methods, n, "coverage", lambda c: f"{c['miss_below']:.3f} / {c['miss_above']:.3f}")
        out += [f"### n = {n}: mean width", ""] + _grid(auc, auc_methods, n, "mean_width", "{:.3f}")
    done = complete(auc, config)
    out += _todo(auc, config) + _position_summary(done, auc_methods, "AUC intervals per method")
    out += ["## 2. The cross-validated AUC: bias (estimate - target)", ""]
    for n in sorted({r["n"] for r in est}):
        out += [f"### n = {n}: bias", ""] + _grid(est, estimates, n, "bias", "{:+.3f}", col="estimate",
                                                  extra=(("target SE", _mean_of("target_se")),))
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
            "The coverage is of the conditional difference of the two classifiers fitted on the n points, "
            "err_A(T) - err_B(T) (for DeLong's test auc_A(T) - auc_B(T)), the difference a user of these n points "
            "has; the tests on repeated splits (5x2cv, corrected t, Wald-CV, nested CV) address the expected "
            "difference of the two procedures, so part of what they miss here is that gap (the coverage of the "
            "cell's mean difference beside it).", ""]
    if supplementary:
        out += [f"{', '.join(f'`{m}`' for m in sorted(supplementary))}: from supplementary chunks on the same tasks (the "
                "same draws and targets, checked row by row against the base chunks); the other methods' rows "
                "are the base study's.", ""]
        out += _todo_methods(cmp_, config, supplementary)
    for n in sorted({r["n"] for r in cmp_}):
        out += [f"### n = {n}: the targets", "", "| data set | reps | err_A - err_B: mean | its SE | "
                "auc_A - auc_B: mean | its SE | no difference by construction |", "|---|---|---|---|---|---|---|"]
        for d in order({r["dataset"] for r in cmp_ if r["n"] == n}):
            mine = [r for r in cmp_ if (r["n"], r["dataset"]) == (n, d)]
            err = next((r for r in mine if r["method"] != "delong"), None)
            dl = next((r for r in mine if r["method"] == "delong"), None)

            def text(c, key, fmt):
                return "" if c is None or c.get(key) is None else fmt.format(c[key])
            out.append(f"| {LABELS.get(d, d)} | {max(r['reps'] for r in mine)} | {text(err, 'mean_target', '{:+.3f}')} | "
                       f"{text(err, 'target_se', '{:.3f}')} | {text(dl, 'mean_target', '{:+.3f}')} | "
                       f"{text(dl, 'target_se', '{:.3f}')} | {'yes' if mine[0]['null_design'] else ''} |")
        out.append("")
    with_interval = [r for r in cmp_ if r.get("position")]
    cmp_int = _methods(with_interval, known=comparison_names())
    for n in sorted({r["n"] for r in with_interval}):
        out += [f"### n = {n}: coverage of the interval of the difference", ""]
        out += _grid(with_interval, cmp_int, n, "coverage", "{:.3f}", mark=True)
        out += [f"### n = {n}: misses below / above the interval of the difference", ""]
        out += _grid(with_interval, cmp_int, n, "coverage",
                     lambda c: f"{c['miss_below']:.3f} / {c['miss_above']:.3f}")
    done = complete(cmp_, config, supplementary)
    out += _todo(cmp_, config) + _position_summary([r for r in done if r.get("position")], cmp_int,
                                                   "Intervals of the difference per method")
    if decisions is not None:
        out += _comparison_section(cmp_, decisions, cmp_methods, target, config, supplementary)
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", required=True, help="the study's chunk directory")
    parser.add_argument("--out", required=True, help="directory for the CSV files and tables.md")
    parser.add_argument("--target", type=float, default=None,
                        help="the nominal coverage (default: the study's confidence level, from protocol.json)")
    parser.add_argument("--config", help="the study's TOML: the summaries then count complete cells only")
    parser.add_argument("--supplement", action="append", default=[],
                        help="a supplementary chunk directory of comparisons on the same tasks (repeatable)")
    parser.add_argument("--supplement-config", action="append", default=[],
                        help="the supplementary study's TOML, one per --supplement in the same order: its "
                             "repetitions make its cells complete (default: --config's)")
    args = parser.parse_args(argv)
    from cudbound.coverage import load_config
    config = load_config(args.config) if args.config else None
    if not (Path(args.chunks) / "protocol.json").is_file():
        parser.error(f"no chunk directory at {args.chunks} (its protocol.json is missing)")
    target = level_of(Path(args.chunks)) if args.target is None else args.target
    supplements = [Path(p) for p in args.supplement]
    for p in supplements:
        if not (p / "protocol.json").is_file():
            parser.error(f"no chunk directory at {p} (its protocol.json is missing)")
    built = tables(Path(args.chunks), target, supplements)
    auc, est, cmp_ = built["auc"], built["estimates"], built["comparisons"]
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
    if args.supplement_config and len(args.supplement_config) != len(supplements):
        parser.error("give one --supplement-config per --supplement, in the same order, or none")
    own = [load_config(f) for f in args.supplement_config] if args.supplement_config else [None] * len(supplements)
    added = {m[len(COMPARISON_PREFIX):]: cfg for p, cfg in zip(supplements, own) for m in _protocol(p)["methods"]}
    (out / "tables.md").write_text(markdown(auc, est, cmp_, config, target, built["decisions"], added),
                                   encoding="utf-8")
    print(f"wrote {out}/auc_cells.csv, estimates.csv, comparison_cells.csv and tables.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
