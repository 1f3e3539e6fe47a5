"""Issue 28's target cases: the scikit-learn models and the non-quadratic losses, before and after.

    python benchmarks/issue28.py --python-before /work/venv_before/bin/python \
        --python-after /work/venv_after/bin/python --after-label COMMIT \
        [--versions before,after] [--cases a,b] [--core 1] [--json FILE] [--out FILE]

Every case runs ``case.py`` in a fresh process pinned to one core (warm-up untimed: imports and
numba's cache), on the issue's data: ``LinearGaussian(n_features=4, flip_probability=0.2)``
(4 Gaussian features + an intercept, labels flipped with probability 0.2), ``default_rng(seed)``
for the data and ``rng=seed`` for the bootstrap. Results are appended to ``--json`` as they come
(a run can be stopped and resumed: done runs are skipped), and the Markdown report is rewritten
from the JSON after every run: medians over the seeds, ratios before / after per case, nodes and
exact solves per replicate, peak memory, the machine, the command and the date. By default both
go into ``benchmarks/raw/``: ``DATE_COMMIT_issue28.json`` and ``.md`` beside it (DATE the day the
run starts, COMMIT the "after" side's label when it is a commit, else this checkout's head); a
run stopped and started again the same day resumes from that file (another day: pass its
``--json``). ``benchmarks/RESULTS.md`` is edited by hand (``benchmarks/README.md``).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import loadavg, machine, run_case  # noqa: E402  (benchmarks/run.py: one subprocess of case.py)
import rawname  # noqa: E402  (benchmarks/rawname.py: default output names in benchmarks/raw/)

# name: (description, loss spec (warm-up, and the model without an estimator), estimator, n, B, seeds,
#        time_limit, n_jobs, versions)
CASES = {
    "logistic50": ("loss='logistic', n = 50, B = 200", "logistic", None, 50, 200, range(3), None, 1, "both"),
    "logreg50": ("LogisticRegression(), n = 50, B = 200", "logistic_ridge", "LogisticRegression()", 50, 200,
                 range(3), None, 1, "both"),
    "hinge50": ("loss='hinge', n = 50, B = 200", "hinge", None, 50, 200, range(3), None, 1, "both"),
    "svc50": ("SVC(kernel='linear'), n = 50, B = 200", "hinge_ridge", "SVC(kernel='linear')", 50, 200, range(3),
              None, 1, "both"),
    "linsvc50": ("LinearSVC(loss='hinge'), n = 50, B = 200", "hinge_ridge", "LinearSVC(loss='hinge')", 50, 200,
                 range(3), None, 1, "both"),
    "squared100": ("loss='squared', n = 100, B = 500", "squared", None, 100, 500, range(3), None, 1, "both"),
    "logistic100": ("loss='logistic', n = 100, B = 500", "logistic", None, 100, 500, range(3), None, 1, "both"),
    "hinge100": ("loss='hinge', n = 100, B = 500", "hinge", None, 100, 500, range(3), None, 1, "both"),
    "logreg100": ("LogisticRegression(), n = 100, B = 500", "logistic_ridge", "LogisticRegression()", 100, 500,
                  range(3), None, 1, "both"),
    "linsvc100": ("LinearSVC(loss='hinge'), n = 100, B = 500", "hinge_ridge", "LinearSVC(loss='hinge')", 100, 500,
                  range(3), None, 1, "both"),
    "svc100": ("SVC(kernel='linear'), n = 100, B = 500", "hinge_ridge", "SVC(kernel='linear')", 100, 500, range(3),
               None, 1, "both"),
    "logistic200": ("loss='logistic', n = 200, B = 500", "logistic", None, 200, 500, range(3), None, 1, "after"),
    "hinge200": ("loss='hinge', n = 200, B = 500", "hinge", None, 200, 500, range(3), None, 1, "after"),
    "squared200": ("loss='squared', n = 200, B = 500", "squared", None, 200, 500, range(3), None, 1, "both"),
    "hinge300": ("loss='hinge', n = 300, B = 500", "hinge", None, 300, 500, range(3), None, 1, "both"),
    "logistic300": ("loss='logistic', n = 300, B = 500", "logistic", None, 300, 500, range(3), None, 1, "both"),
    "squared300": ("loss='squared', n = 300, B = 500", "squared", None, 300, 500, range(3), None, 1, "both"),
    "squared1000": ("loss='squared', n = 1000, B = 500", "squared", None, 1000, 500, range(1), None, 1, "both"),
    "budget_logistic300": ("loss='logistic', n = 300, B = 500, time_limit=30", "logistic", None, 300, 500, range(1),
                           30.0, 1, "after"),
    "hinge100_jobs2": ("loss='hinge', n = 100, B = 500, n_jobs=2 (against hinge100)", "hinge", None, 100, 500,
                       range(3), None, 2, "after"),
}


def data_path(name, seed, directory):
    from cudbound.datasets import LinearGaussian
    n = CASES[name][3]
    X, y = LinearGaussian(n_features=4, flip_probability=0.2).sample(n, np.random.default_rng(seed))
    path = os.path.join(directory, f"n{n}_seed{seed}.npz")
    if not os.path.exists(path):
        np.savez(path, X=np.asarray(X, dtype=float), y=np.asarray(y, dtype=np.int64))
    return path


def key(name, version, seed):
    return f"{name}|{version}|{seed}"


def fmt(x, digits=1):
    return "-" if x is None else f"{x:.{digits}f}"


def summary(runs):
    """(median seconds or None, text, nodes per replicate (median over seeds of the mean), solves per replicate)."""
    if not runs:
        return None, "-", None, None
    secs, texts, nodes, solves = [], [], [], []
    for r in runs:
        if "timeout" in r:
            secs.append(float("inf"))
            texts.append(f"> {r['cap']:.0f}")
        elif r.get("error") or "crash" in r:
            texts.append("error")
        else:
            secs.append(r["seconds"])
            texts.append(f"{r['seconds']:.2f}")
            B = len(r["nodes"])
            nodes.append(r["nodes_summary"]["total"] / B)
            if r.get("solves_total") is not None:
                solves.append(r["solves_total"] / B)
    med = statistics.median(secs) if secs else None
    return med, " / ".join(texts), (statistics.median(nodes) if nodes else None), \
        (statistics.median(solves) if solves else None)


def render(results, meta):
    lines = [f"# Issue 28: the engine's target cases, before and after ({meta['date']})", "",
             f"- machine: {meta['machine']}", f"- command: `{meta['command']}`",
             f"- before: {meta.get('before_label', '?')} ({meta.get('python_before')}); after: "
             f"{meta.get('after_label', '?')} ({meta.get('python_after')})",
             "- data: `LinearGaussian(n_features=4, flip_probability=0.2)` (4 Gaussian features + an intercept, "
             "labels flipped with probability 0.2), `default_rng(seed)` for the data, `rng=seed` for the bootstrap; "
             "one process per run, pinned to one core, warm-up untimed; the time is the one `cud_interval` call.",
             *([f"- B = {meta['resamples']} for every case (`--resamples`), whatever its description says"]
               if meta.get("resamples") else []),
             "- times: every seed's seconds, then the median; `> cap` = stopped at the cap (counted as infinite in "
             "the median). Nodes and solves: per replicate, mean over the B replicates, median over the seeds.",
             "", "| case | before: s per seed | median | after: s per seed | median | ratio | nodes/rep before -> after "
             "| solves/rep before -> after | same interval | peak MiB after |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, case in CASES.items():
        # the seeds run (``--seeds`` overrides a case's own)
        seeds = sorted({int(k.split("|")[2]) for k in results if k.split("|")[0] == name}) or list(case[5])
        b = [results[key(name, "before", s)] for s in seeds if key(name, "before", s) in results]
        a = [results[key(name, "after", s)] for s in seeds if key(name, "after", s) in results]
        if not a and not b:
            continue
        mb, tb, nb, sb = summary(b)
        ma, ta, na, sa = summary(a)
        # the ratio over the seeds both versions finished; where only "after" finished, a lower
        # bound from the cap
        done = lambda r: r is not None and "seconds" in r and not r.get("error")  # noqa: E731
        both = [s for s in seeds if done(results.get(key(name, "before", s))) and done(results.get(key(name, "after", s)))]
        capped = [s for s in seeds if results.get(key(name, "before", s), {}).get("timeout")
                  and done(results.get(key(name, "after", s)))]
        ratio = "-"
        if both:
            rb = statistics.median(results[key(name, "before", s)]["seconds"] for s in both)
            ra = statistics.median(results[key(name, "after", s)]["seconds"] for s in both)
            ratio = f"{rb / ra:.1f}x (seeds {','.join(map(str, both))})"
        if capped:
            lo = min(results[key(name, "before", s)]["cap"] / results[key(name, "after", s)]["seconds"] for s in capped)
            ratio = (ratio + "; " if both else "") + f"> {lo:.0f}x (seeds {','.join(map(str, capped))}, before capped)"
        same = "-"
        pairs = [(results.get(key(name, "before", s)), results.get(key(name, "after", s))) for s in seeds]
        pairs = [(x, y) for x, y in pairs if x and y and "interval" in x and "interval" in y]
        if pairs:
            same = "yes" if all(max(abs(u - v) for u, v in zip(x["interval"], y["interval"])) <= 1e-9
                                for x, y in pairs) else "NO"
        peak = max((r.get("peak_mib") or 0 for r in a), default=None) if a else None
        extra = ""
        if a and a[0].get("upper_gap") is not None and CASES[name][6] is not None:
            extra = f" (interval {a[0]['interval'][0]:.3f}-{a[0]['interval'][1]:.3f}, conservative " \
                    f"{a[0].get('conservative')}, upper_gap {a[0]['upper_gap']:.3f})"
        lines.append(f"| {name}: {case[0]}{extra} | {tb} | {fmt(mb, 2)} | {ta} | {fmt(ma, 2)} | {ratio} | "
                     f"{fmt(nb, 0)} -> {fmt(na, 0)} | {fmt(sb, 0)} -> {fmt(sa, 0)} | {same} | {fmt(peak, 0)} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python-before", default="/work/venv_before/bin/python")
    ap.add_argument("--python-after", default=sys.executable)
    ap.add_argument("--before-label", default="bfb2d2b")
    ap.add_argument("--after-label", default="this checkout")
    ap.add_argument("--versions", default="before,after")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--cap", type=float, default=300.0, help="seconds per timed call (default 300)")
    ap.add_argument("--seeds", default=None, help="comma-separated seeds, overriding every case's own (e.g. 0)")
    ap.add_argument("--core", type=int, default=None)
    ap.add_argument("--resamples", type=int, default=None, help="B for every case, overriding the case's own")
    ap.add_argument("--json", default=None,
                    help="results, appended as they come and resumed from (default: "
                         "benchmarks/raw/DATE_COMMIT_issue28.json)")
    ap.add_argument("--out", default=None,
                    help="Markdown report, rewritten after every run (default: beside the JSON, same name with "
                         ".md; never benchmarks/RESULTS.md, which is edited by hand)")
    ap.add_argument("--merge", nargs="*", default=None, metavar="JSON",
                    help="write the report from these result files (e.g. a before and an after run made side "
                         "by side, each with its own --json) into --json and --out, running nothing")
    args = ap.parse_args(argv)
    rawname.refuse_results_md(args.out, ap.error)
    rawname.refuse_results_md(args.json, ap.error)
    if args.json is None:
        label = args.after_label if "after" in args.versions.split(",") else args.before_label
        date = None
        if args.merge:  # named after the "after" file's label and date (the run's, not the merge's)
            for path in args.merge:
                with open(path) as f:
                    stored = json.load(f)
                if "after" in path or any("|after|" in k for k in stored["results"]):
                    label, date = stored["meta"].get("after_label", label), stored["meta"].get("date")
        args.json = rawname.stem("issue28", rawname.commit_of(label), date=date, fresh=False) + ".json"
    if args.out is None:
        args.out = (args.json[:-len(".json")] if args.json.endswith(".json") else args.json) + ".md"
    for path in (args.json, args.out):
        rawname.ensure_dir(path)
    if args.merge is not None:
        results, meta = {}, {}
        for path in args.merge:
            with open(path) as f:
                stored = json.load(f)
            results.update(stored["results"])
            # the "after" file (by its name, or, as the default names in raw/ do not say, by its runs)
            after_file = "after" in path or any("|after|" in k for k in stored["results"])
            for k, v in stored["meta"].items():
                if k not in meta or (k == "python_after" and after_file) or (k == "after_label" and after_file):
                    meta[k] = v
        meta["command"] = "; ".join(f"{m.get('command')}" for m in
                                    (json.load(open(p))["meta"] for p in args.merge))
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": results}, f)
        with open(args.out, "w") as f:
            f.write(render(results, meta))
        return 0
    results, meta = {}, {}
    if os.path.exists(args.json):
        with open(args.json) as f:
            stored = json.load(f)
        results, meta = stored["results"], stored["meta"]
    meta.update(date=datetime.date.today().isoformat(), machine=machine(),
                command="python benchmarks/issue28.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    pythons = {"before": args.python_before, "after": args.python_after}
    meta["python_before"], meta["python_after"] = args.python_before, args.python_after
    meta["before_label"], meta["after_label"] = args.before_label, args.after_label
    meta["resamples"] = args.resamples
    work = tempfile.mkdtemp(prefix="cud28_")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for name in args.cases.split(","):
        case = CASES[name]
        for version in args.versions.split(","):
            if case[8] != "both" and version != case[8]:
                continue
            for seed in (case[5] if args.seeds is None else [int(s) for s in args.seeds.split(",")]):
                k = key(name, version, seed)
                if k in results:
                    continue
                spec = {"name": name, "version": version, "data": data_path(name, seed, work), "loss": case[1],
                        "basis": "linear", "resamples": case[4] if args.resamples is None else args.resamples,
                        "rng": seed, "core": args.core,
                        "estimator": case[2], "time_limit": case[6], "n_jobs": case[7]}
                if case[7] > 1:
                    spec["core"] = None
                print(f"{datetime.datetime.now():%H:%M:%S} {k} (load {loadavg()})", flush=True)
                res = run_case(pythons[version], spec, cwd=work, env=env, warm_cap=900.0, cap=args.cap,
                               log=lambda s: print(s, flush=True))
                res["loadavg_after"] = loadavg()
                results[k] = res
                shown = res.get("seconds", res.get("timeout", res.get("crash")))
                print(f"    -> {shown}", flush=True)
                with open(args.json, "w") as f:
                    json.dump({"meta": meta, "results": results}, f)
                with open(args.out, "w") as f:
                    f.write(render(results, meta))
    with open(args.out, "w") as f:
        f.write(render(results, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
